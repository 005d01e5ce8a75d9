// SPDX-License-Identifier: BSD-3-Clause
// lrx-kinject: injects UDP or TCP frames into one end of a veth pair and
// measures what the receiving end's NAPI thread spent on them.
//
// Method (docs/kernel.md): the receiving veth runs threaded NAPI
// (/sys/class/net/DEV/threaded), its kthread pinned to the sender's CPU.
// The sender runs SCHED_FIFO on that CPU, so the kthread cannot run while
// a round of frames is queued: every round of --round frames (at most the
// veth ptr_ring, VETH_RING_SIZE 256) lands in the ring, then the sender
// sleeps until the kthread is idle again, and the kthread drains the ring
// in full polls of the NAPI budget (64). That fixes the list length the
// stack sees (napi->rx_list up to gro_normal_batch within each poll), which
// a softirq poll cannot: after each frame __dev_direct_xmit's
// local_bh_enable runs net_rx_action, i.e. one poll per frame.
// The kthread's CPU time is read from its scheduler clock
// (clock_getcpuclockid: sum_exec_runtime, ns), which excludes the time
// other tasks of a loaded machine ran on that CPU.
//
// Injectors: AF_PACKET + PACKET_QDISC_BYPASS + sendmmsg ("mmsg"),
// PACKET_TX_RING ("txring"), or an AF_XDP socket in copy mode ("xdp":
// xsk_generic_xmit builds an skb per descriptor). Output: one JSON object
// on stdout.
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#define KINJ_MAX_ROUND 1024
#define KINJ_MAX_FRAME 1514
#define KINJ_MAX_NAPI 8
#define KINJ_MAX_QUEUES 8
#define KINJ_MAX_FLOWS 64

enum kinj_method { KINJ_MMSG, KINJ_TXRING, KINJ_XSK };

static const char *const kinj_method_names[] = {"mmsg", "txring", "xdp"};
enum kinj_kind { KINJ_UDP, KINJ_TCP };

struct kinj_opts {
	const char *dev;
	enum kinj_method method;
	enum kinj_kind kind;
	uint8_t dst_mac[6], src_mac[6];
	uint32_t src_ip, dst_ip; /* network order */
	uint16_t sports[KINJ_MAX_FLOWS], dport; /* frame i: sports[i % nsports] */
	unsigned nsports;
	unsigned frame_len; /* bytes handed to the device (no FCS) */
	unsigned mss;
	bool psh;      /* TCP: PSH on every segment (GRO hands each up alone) */
	uint64_t packets;
	unsigned round;
	int cpu;
	int fifo_prio;
	int napi_pid; /* the first of napi_pids */
	int napi_pids[KINJ_MAX_NAPI];
	unsigned n_napi;
	unsigned idle_poll_us;
	bool fixed_wait; /* no first sleep: poll every idle_poll_us from the start */
	unsigned queues;  /* AF_XDP: one socket per TX queue 0..queues-1 */
};

static volatile sig_atomic_t kinj_stop;

static void kinj_on_signal(int sig)
{
	(void)sig;
	kinj_stop = 1;
}

static uint64_t kinj_now(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint16_t kinj_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t kinj_csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/* Ethernet + IPv4 + UDP or TCP (ACK, timestamp option as Linux sends it),
 * valid checksums. Returns the frame length. */
static unsigned kinj_build(const struct kinj_opts *o, uint8_t *f, uint32_t seq,
			   uint16_t ip_id, uint16_t sport)
{
	const unsigned l4_hdr = o->kind == KINJ_TCP ? 32 : 8;
	unsigned payload = o->kind == KINJ_TCP ? o->mss
			   : o->frame_len - 14 - 20 - 8;
	unsigned ip_len = 20 + l4_hdr + payload;
	uint8_t *ip = f + 14, *l4 = ip + 20;

	memset(f, 0, 14 + ip_len);
	memcpy(f, o->dst_mac, 6);
	memcpy(f + 6, o->src_mac, 6);
	f[12] = 0x08;
	ip[0] = 0x45;
	ip[2] = (uint8_t)(ip_len >> 8);
	ip[3] = (uint8_t)ip_len;
	ip[4] = (uint8_t)(ip_id >> 8);
	ip[5] = (uint8_t)ip_id;
	ip[6] = 0x40; /* DF */
	ip[8] = 64;
	ip[9] = o->kind == KINJ_TCP ? IPPROTO_TCP : IPPROTO_UDP;
	memcpy(ip + 12, &o->src_ip, 4);
	memcpy(ip + 16, &o->dst_ip, 4);
	uint16_t c = kinj_csum_fold(kinj_csum_add(0, ip, 20));
	ip[10] = (uint8_t)(c >> 8);
	ip[11] = (uint8_t)c;
	l4[0] = (uint8_t)(sport >> 8);
	l4[1] = (uint8_t)sport;
	l4[2] = (uint8_t)(o->dport >> 8);
	l4[3] = (uint8_t)o->dport;
	for (unsigned i = 0; i < payload; i++)
		l4[l4_hdr + i] = (uint8_t)((i * 7) ^ 0x5a);
	if (o->kind == KINJ_TCP) {
		l4[4] = (uint8_t)(seq >> 24);
		l4[5] = (uint8_t)(seq >> 16);
		l4[6] = (uint8_t)(seq >> 8);
		l4[7] = (uint8_t)seq;
		l4[11] = 1; /* ack 1 */
		l4[12] = 8 << 4; /* doff 8: NOP, NOP, timestamp */
		l4[13] = o->psh ? 0x18 : 0x10; /* ACK, PSH */
		l4[14] = 0xff;
		l4[15] = 0xff;
		l4[20] = 1;
		l4[21] = 1;
		l4[22] = 8;
		l4[23] = 10;
		l4[27] = 1; /* tsval 1 */
	} else {
		l4[4] = (uint8_t)((8 + payload) >> 8);
		l4[5] = (uint8_t)(8 + payload);
	}
	uint32_t sum = kinj_csum_add(0, ip + 12, 8);
	sum += ip[9];
	sum += l4_hdr + payload;
	c = kinj_csum_fold(kinj_csum_add(sum, l4, l4_hdr + payload));
	if (o->kind == KINJ_UDP && c == 0)
		c = 0xffff;
	unsigned at = o->kind == KINJ_TCP ? 16 : 6;
	l4[at] = (uint8_t)(c >> 8);
	l4[at + 1] = (uint8_t)c;
	return 14 + ip_len;
}

/* The NAPI kthread is idle when it sleeps in napi_thread_wait ('S'). */
static int kinj_napi_state(int pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *close_paren = strrchr(buf, ')');
	if (!close_paren || close_paren[1] == 0)
		return -EINVAL;
	return close_paren[2];
}

/* Sleeps until the kthread is idle. The first sleep is `first_ns` (3/4 of
 * the last round's wait), the rest idle_poll_us each: every wake-up of this
 * SCHED_FIFO task while the kthread polls preempts it at its next
 * cond_resched(), and wakeup_preempt()'s rq_clock_skip_update() leaves
 * the time from the wake-up to that switch out of the kthread's scheduler
 * clock (it is charged to this task): few wake-ups, a kthread clock that
 * holds its whole poll (docs/kernel.md, "Why the first methods disagreed"). */
static int kinj_wait_idle(const struct kinj_opts *o, uint64_t first_ns, uint64_t *waits)
{
	struct timespec ts = {(time_t)(first_ns / 1000000000u), (long)(first_ns % 1000000000u)};
	for (;;) {
		if (ts.tv_sec || ts.tv_nsec)
			nanosleep(&ts, NULL);
		(*waits)++;
		bool busy = false;
		for (unsigned i = 0; i < o->n_napi; i++) {
			int st = kinj_napi_state(o->napi_pids[i]);
			if (st < 0)
				return st;
			busy |= st == 'R';
		}
		if (!busy)
			return 0;
		if (kinj_stop)
			return -EINTR;
		ts = (struct timespec){0, (long)o->idle_poll_us * 1000};
	}
}

struct kinj_tx {
	int fd;
	/* mmsg */
	uint8_t (*frames)[KINJ_MAX_FRAME];
	struct mmsghdr *msgs;
	struct iovec *iov;
	/* txring */
	uint8_t *ring;
	unsigned frame_size, frame_nr, head;
	uint64_t retries; /* txring: send() calls repeated after ENOBUFS */
	unsigned lens[KINJ_MAX_ROUND];
	/* AF_XDP: per TX queue a socket with a umem of frame_nr chunks of
	 * frame_size, its TX and completion rings; frame i of a round goes
	 * to queue i mod nxsk */
	struct kinj_xsk {
		int fd;
		uint8_t *umem;
		struct kinj_xsk_ring {
			uint32_t *producer, *consumer;
			void *desc;
			uint32_t size;
		} tx, cq;
		unsigned head;
	} xsk[KINJ_MAX_QUEUES];
	unsigned nxsk;
};

#define KINJ_XSK_RING 2048

static int kinj_xsk_map(int fd, off_t pgoff, const struct xdp_ring_offset *off,
			size_t elem, struct kinj_xsk_ring *r)
{
	size_t len = off->desc + KINJ_XSK_RING * elem;
	uint8_t *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
			    fd, pgoff);
	if (map == MAP_FAILED)
		return -errno;
	r->producer = (uint32_t *)(map + off->producer);
	r->consumer = (uint32_t *)(map + off->consumer);
	r->desc = map + off->desc;
	r->size = KINJ_XSK_RING;
	return 0;
}

/* AF_XDP on the sending veth, TX queue `queue`, copy mode (veth has no
 * zero-copy TX; xsk_generic_xmit sets the skb's queue mapping to the
 * socket's queue, and veth_xmit hands it to the peer's RX queue of that
 * index): umem registration, the fill/completion/TX rings (the kernel
 * wants all three: xsk_validate_queues), bind. */
static int kinj_xsk_open(const struct kinj_opts *o, struct kinj_tx *t, struct kinj_xsk *x,
			 unsigned queue)
{
	x->fd = socket(AF_XDP, SOCK_RAW, 0);
	if (x->fd < 0)
		return -errno;
	size_t len = (size_t)t->frame_size * t->frame_nr;
	x->umem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->umem == MAP_FAILED)
		return -errno;
	struct xdp_umem_reg reg = {.addr = (uint64_t)(uintptr_t)x->umem, .len = len,
				   .chunk_size = t->frame_size};
	int n = KINJ_XSK_RING;
	if (setsockopt(x->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) != 0 ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_FILL_RING, &n, sizeof(n)) != 0 ||
	    setsockopt(x->fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &n, sizeof(n)) != 0 ||
	    setsockopt(x->fd, SOL_XDP, XDP_TX_RING, &n, sizeof(n)) != 0)
		return -errno;
	struct xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);
	if (getsockopt(x->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen) != 0)
		return -errno;
	int rc = kinj_xsk_map(x->fd, XDP_PGOFF_TX_RING, &off.tx, sizeof(struct xdp_desc), &x->tx);
	if (rc == 0)
		rc = kinj_xsk_map(x->fd, XDP_UMEM_PGOFF_COMPLETION_RING, &off.cr,
				  sizeof(uint64_t), &x->cq);
	if (rc != 0)
		return rc;
	struct sockaddr_xdp at = {.sxdp_family = AF_XDP,
				  .sxdp_ifindex = if_nametoindex(o->dev),
				  .sxdp_queue_id = queue, .sxdp_flags = XDP_COPY};
	if (at.sxdp_ifindex == 0)
		return -ENODEV;
	/* EBUSY: the queue's buffer pool of the previous socket on it (the
	 * last run's) is still being released (xp_release_deferred) */
	for (int tries = 0; bind(x->fd, (struct sockaddr *)&at, sizeof(at)) != 0; tries++) {
		if (errno != EBUSY || tries == 200)
			return -errno;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	return 0;
}

/* Frames of a round on socket q: i = q, q + nxsk, ... */
static unsigned kinj_xsk_share(const struct kinj_tx *t, unsigned n, unsigned q)
{
	return n > q ? (n - q + t->nxsk - 1) / t->nxsk : 0;
}

/* Posts each socket's descriptors, kicks until the kernel consumed them
 * all, reaps the completions (frames are reused next round). */
static int kinj_xsk_send(struct kinj_tx *t, unsigned n, uint64_t *failed)
{
	for (unsigned q = 0; q < t->nxsk; q++) {
		struct kinj_xsk *x = &t->xsk[q];
		unsigned share = kinj_xsk_share(t, n, q);
		uint32_t prod = *x->tx.producer;
		struct xdp_desc *d = x->tx.desc;
		for (unsigned j = 0; j < share; j++) {
			uint32_t idx = (prod + j) & (x->tx.size - 1);
			d[idx].addr = (uint64_t)((x->head + j) % t->frame_nr) * t->frame_size;
			d[idx].len = t->lens[q + j * t->nxsk];
			d[idx].options = 0;
		}
		__atomic_store_n(x->tx.producer, prod + share, __ATOMIC_RELEASE);
		unsigned idle_kicks = 0;
		uint32_t seen = __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);
		while (seen != prod + share) {
			if (sendto(x->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && errno != EAGAIN &&
			    errno != EBUSY) {
				if (errno != ENOBUFS)
					return -errno;
				(*failed)++;
			}
			uint32_t now = __atomic_load_n(x->tx.consumer, __ATOMIC_ACQUIRE);
			idle_kicks = now == seen ? idle_kicks + 1 : 0;
			seen = now;
			if (idle_kicks >= 1000) {
				/* the kernel takes no descriptor: let the NAPI kthread
				 * free skbs (send buffer), then give up after ~1 s */
				struct timespec ts = {0, 1000000};
				nanosleep(&ts, NULL);
			}
			if (idle_kicks > 2000)
				return -ETIMEDOUT;
		}
		__atomic_store_n(x->cq.consumer,
				 __atomic_load_n(x->cq.producer, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
		x->head = (x->head + share) % t->frame_nr;
	}
	return 0;
}

/* A whole round of skbs must fit in the socket's send buffer: else the
 * sender blocks in sock_alloc_send_skb (AF_XDP: spins on -EAGAIN) until
 * the NAPI kthread frees some, and the kthread polls part of a round.
 * 256 TCP frames take ~600 KB of truesize, over the default wmem_default. */
static void kinj_big_sndbuf(int fd)
{
	int bytes = 16 << 20;
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &bytes, sizeof(bytes)) != 0)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof(bytes));
}

static int kinj_open(const struct kinj_opts *o, struct kinj_tx *t)
{
	int one = 1;
	if (o->method == KINJ_XSK) {
		t->frame_size = 2048;
		t->frame_nr = KINJ_XSK_RING;
		for (unsigned q = 0; q < o->queues; q++) {
			int rc = kinj_xsk_open(o, t, &t->xsk[q], q);
			t->nxsk = q + 1;
			if (rc != 0)
				return rc;
			kinj_big_sndbuf(t->xsk[q].fd);
		}
		return 0;
	}
	t->fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (t->fd < 0)
		return -errno;
	kinj_big_sndbuf(t->fd);
	if (setsockopt(t->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one)) != 0)
		return -errno;
	struct sockaddr_ll at = {.sll_family = AF_PACKET,
				 .sll_ifindex = (int)if_nametoindex(o->dev)};
	if (at.sll_ifindex == 0)
		return -ENODEV;
	if (o->method == KINJ_TXRING) {
		int v = TPACKET_V2;
		if (setsockopt(t->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)) != 0)
			return -errno;
		t->frame_size = 2048;
		t->frame_nr = KINJ_MAX_ROUND;
		struct tpacket_req req = {.tp_block_size = 4096 * 16,
					  .tp_frame_size = t->frame_size,
					  .tp_block_nr = 0,
					  .tp_frame_nr = t->frame_nr};
		req.tp_block_nr = t->frame_nr * t->frame_size / req.tp_block_size;
		if (setsockopt(t->fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) != 0)
			return -errno;
		t->ring = mmap(NULL, (size_t)req.tp_block_size * req.tp_block_nr,
			       PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
		if (t->ring == MAP_FAILED)
			return -errno;
	} else {
		t->frames = calloc(KINJ_MAX_ROUND, sizeof(*t->frames));
		t->msgs = calloc(KINJ_MAX_ROUND, sizeof(*t->msgs));
		t->iov = calloc(KINJ_MAX_ROUND, sizeof(*t->iov));
		if (!t->frames || !t->msgs || !t->iov)
			return -ENOMEM;
	}
	if (bind(t->fd, (struct sockaddr *)&at, sizeof(at)) != 0)
		return -errno;
	return 0;
}

/* Writes frame i of the round (TCP: a fresh sequence number, so GRO
 * merges the stream; UDP frames are all the same flow). */
static uint8_t *kinj_slot(struct kinj_tx *t, const struct kinj_opts *o, unsigned i)
{
	if (o->method == KINJ_TXRING) {
		unsigned idx = (t->head + i) % t->frame_nr;
		struct tpacket2_hdr *h = (void *)(t->ring + (size_t)idx * t->frame_size);
		return (uint8_t *)h + TPACKET2_HDRLEN - sizeof(struct sockaddr_ll);
	}
	if (o->method == KINJ_XSK) {
		const struct kinj_xsk *x = &t->xsk[i % t->nxsk];
		return x->umem + (size_t)((x->head + i / t->nxsk) % t->frame_nr) * t->frame_size;
	}
	return t->frames[i];
}

static int kinj_send_round(struct kinj_tx *t, const struct kinj_opts *o,
			   unsigned n, uint32_t *seq, uint16_t *ip_id,
			   uint64_t *failed)
{
	for (unsigned i = 0; i < n; i++) {
		uint8_t *f = kinj_slot(t, o, i);
		/* UDP frames are written once; TCP needs new sequence numbers */
		if (o->kind == KINJ_TCP || t->lens[i] == 0 || o->method != KINJ_MMSG)
			t->lens[i] = kinj_build(o, f, *seq, *ip_id,
						o->sports[i % o->nsports]);
		*seq += o->mss;
		(*ip_id)++;
		if (o->method == KINJ_TXRING) {
			unsigned idx = (t->head + i) % t->frame_nr;
			struct tpacket2_hdr *h =
				(void *)(t->ring + (size_t)idx * t->frame_size);
			/* tpacket_destruct_skb gave the slot back (we waited for
			 * the kthread, which frees the skbs), or the kernel
			 * refused the frame */
			unsigned st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
			if (st & TP_STATUS_WRONG_FORMAT)
				(*failed)++;
			else if (st != TP_STATUS_AVAILABLE)
				return -EBUSY;
			h->tp_len = t->lens[i];
			__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST,
					 __ATOMIC_RELEASE);
		} else if (o->method == KINJ_MMSG) {
			t->iov[i].iov_base = f;
			t->iov[i].iov_len = t->lens[i];
			memset(&t->msgs[i], 0, sizeof(t->msgs[i]));
			t->msgs[i].msg_hdr.msg_iov = &t->iov[i];
			t->msgs[i].msg_hdr.msg_iovlen = 1;
		}
	}
	if (o->method == KINJ_XSK)
		return kinj_xsk_send(t, n, failed);
	if (o->method == KINJ_TXRING) {
		/* MSG_DONTWAIT: a blocking tpacket_snd waits until every frame's
		 * skb is freed (tpacket_destruct_skb), i.e. lets the NAPI kthread
		 * run in the middle of the round */
		int tries = 0;
		while (send(t->fd, NULL, 0, MSG_DONTWAIT) < 0 && errno != EAGAIN) {
			/* ENOBUFS: the veth queue is stopped (peer ring full);
			 * without PACKET_LOSS the frame stays requested and a
			 * later send() transmits it, once the kthread (which
			 * our SCHED_FIFO would starve) has drained the ring */
			if (errno != ENOBUFS || ++tries > 1000)
				return -errno;
			t->retries++;
			struct timespec ts = {0, 50000};
			nanosleep(&ts, NULL);
		}
		t->head = (t->head + n) % t->frame_nr;
		return 0;
	}
	unsigned done = 0;
	while (done < n) {
		int r = sendmmsg(t->fd, t->msgs + done, n - done, 0);
		if (r < 0) {
			if (errno == ENOBUFS || errno == EAGAIN) {
				(*failed)++;
				done++;
				continue;
			}
			return -errno;
		}
		done += (unsigned)r;
	}
	return 0;
}

static int kinj_mac(const char *s, uint8_t mac[6])
{
	unsigned m[6];
	if (sscanf(s, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]) != 6)
		return -EINVAL;
	for (int i = 0; i < 6; i++) {
		if (m[i] > 255)
			return -EINVAL;
		mac[i] = (uint8_t)m[i];
	}
	return 0;
}

static void kinj_usage(FILE *to)
{
	fprintf(to,
		"usage: lrx-kinject --dev IF --dst-mac MAC --napi-pid PID [options]\n"
		"  --method mmsg|txring|xdp  AF_PACKET+PACKET_QDISC_BYPASS sendmmsg, PACKET_TX_RING,\n"
		"                         or AF_XDP in copy mode (mmsg)\n"
		"  --kind udp|tcp         64-byte UDP frames, or a TCP stream of --mss segments (udp)\n"
		"  --src-ip A --dst-ip B  IPv4 addresses (198.18.0.1, 198.18.0.42)\n"
		"  --sport P[,P...]       source ports, up to %d flows (UDP): frame i of a round\n"
		"                         has the (i mod n)th (9)\n"
		"  --dport P              destination port (9)\n"
		"  --mss N                TCP payload bytes per segment, 64..1448 (1448)\n"
		"  --psh                  TCP: PSH on every segment, so GRO merges none\n"
		"  --packets N            frames to send (1000000)\n"
		"  --round N              frames per round, 1..%d (256 = VETH_RING_SIZE)\n"
		"  --cpu N                CPU to pin the sender to (and where the NAPI kthread must be) (0)\n"
		"  --fifo PRIO            SCHED_FIFO priority of the sender, 0 = stay SCHED_OTHER (10)\n"
		"  --napi-pid PID[,PID]   the receiving veth's NAPI kthreads (napi/DEV-ID), up to %d;\n"
		"                         0 = do not wait\n"
		"  --idle-poll-us N       sleep between idle checks of the kthread, after a first\n"
		"                         sleep of 3/4 of the last round's wait (20)\n"
		"  --wait adaptive|fixed  fixed: no first sleep (every idle_poll_us from the start)\n"
		"  --queues N             with --method xdp: one socket per TX queue 0..N-1, frame i\n"
		"                         of a round on queue i mod N (veth: the peer's RX queue i)\n"
		"                         (1)\n"
		"Prints one JSON object: frames sent, send failures, rounds, the sender's\n"
		"CPU time, the NAPI kthread's CPU time, wall time (all ns).\n",
		KINJ_MAX_FLOWS, KINJ_MAX_ROUND, KINJ_MAX_NAPI);
}

/* v in [lo, hi], or an error naming the option and the range */
static bool kinj_in_range(const char *opt, unsigned long long v, unsigned long long lo,
			  unsigned long long hi)
{
	if (v >= lo && v <= hi)
		return true;
	fprintf(stderr, "lrx-kinject: --%s %llu: want %llu..%llu\n", opt, v, lo, hi);
	return false;
}

/* "a,b,c": up to cap non-negative integers <= max; the count, or -EINVAL */
static int kinj_parse_list(const char *arg, unsigned long max, unsigned long *out, int cap)
{
	int n = 0;
	const char *p = arg;

	for (;;) {
		char *end = NULL;
		errno = 0;
		if (*p < '0' || *p > '9' || n == cap)
			return -EINVAL;
		unsigned long v = strtoul(p, &end, 10);
		if (errno || end == p || v > max)
			return -EINVAL;
		out[n++] = v;
		if (*end == 0)
			return n;
		if (*end != ',')
			return -EINVAL;
		p = end + 1;
	}
}

/* kinj_parse's option table (getopt_long) */
static const struct option kinj_longs[] = {
	{"dev", 1, 0, 'd'}, {"method", 1, 0, 'm'}, {"kind", 1, 0, 'k'},
	{"dst-mac", 1, 0, 'M'}, {"src-mac", 1, 0, 'S'},
	{"src-ip", 1, 0, 's'}, {"dst-ip", 1, 0, 't'},
	{"sport", 1, 0, 'p'}, {"dport", 1, 0, 'q'}, {"mss", 1, 0, 'z'},
	{"psh", 0, 0, 'H'},
	{"packets", 1, 0, 'n'}, {"round", 1, 0, 'r'}, {"cpu", 1, 0, 'c'},
	{"fifo", 1, 0, 'f'}, {"napi-pid", 1, 0, 'P'},
	{"idle-poll-us", 1, 0, 'i'}, {"wait", 1, 0, 'W'}, {"queues", 1, 0, 'Q'},
	{"help", 0, 0, 'h'},
	{0, 0, 0, 0}};

/* the defaults: one UDP flow 198.18.0.1:9 -> 198.18.0.42:9 by sendmmsg */
static void kinj_defaults(struct kinj_opts *o)
{
	*o = (struct kinj_opts){.method = KINJ_MMSG, .kind = KINJ_UDP,
				.src_mac = {0x02, 0, 0, 0, 0, 1},
				.sports = {9}, .nsports = 1, .dport = 9, .frame_len = 60,
				.mss = 1448, .packets = 1000000, .round = 256, .queues = 1,
				.fifo_prio = 10, .idle_poll_us = 20};
	inet_pton(AF_INET, "198.18.0.1", &o->src_ip);
	inet_pton(AF_INET, "198.18.0.42", &o->dst_ip);
}

/* --dev, --method, --kind, --psh, --wait: 0, -EINVAL, or 1 if not one */
static int kinj_opt_mode(int c, const char *arg, struct kinj_opts *o)
{
	switch (c) {
	case 'd': o->dev = arg; return 0;
	case 'm':
		if (!strcmp(arg, "mmsg"))
			o->method = KINJ_MMSG;
		else if (!strcmp(arg, "txring"))
			o->method = KINJ_TXRING;
		else if (!strcmp(arg, "xdp"))
			o->method = KINJ_XSK;
		else {
			fprintf(stderr, "lrx-kinject: --method %s: want mmsg, txring or xdp\n", arg);
			return -EINVAL;
		}
		return 0;
	case 'k':
		if (!strcmp(arg, "udp"))
			o->kind = KINJ_UDP;
		else if (!strcmp(arg, "tcp"))
			o->kind = KINJ_TCP;
		else {
			fprintf(stderr, "lrx-kinject: --kind %s: want udp or tcp\n", arg);
			return -EINVAL;
		}
		return 0;
	case 'H': o->psh = true; return 0;
	case 'W':
		if (strcmp(arg, "adaptive") && strcmp(arg, "fixed")) {
			fprintf(stderr, "lrx-kinject: --wait %s: want adaptive or fixed\n", arg);
			return -EINVAL;
		}
		o->fixed_wait = arg[0] == 'f';
		return 0;
	}
	return 1;
}

/* --dst-mac, --src-mac, --src-ip, --dst-ip: 0, -EINVAL, or 1 if not one */
static int kinj_opt_addr(int c, const char *arg, struct kinj_opts *o, bool *have_mac)
{
	switch (c) {
	case 'M': case 'S':
		if (kinj_mac(arg, c == 'M' ? o->dst_mac : o->src_mac) != 0) {
			fprintf(stderr, "lrx-kinject: %s: want a MAC aa:bb:cc:dd:ee:ff\n", arg);
			return -EINVAL;
		}
		*have_mac |= c == 'M';
		return 0;
	case 's': case 't':
		if (inet_pton(AF_INET, arg, c == 's' ? &o->src_ip : &o->dst_ip) != 1) {
			fprintf(stderr, "lrx-kinject: %s: want an IPv4 address\n", arg);
			return -EINVAL;
		}
		return 0;
	}
	return 1;
}

/* --sport and --napi-pid lists: 0, -EINVAL, or 1 if not one */
static int kinj_opt_list(int c, const char *arg, struct kinj_opts *o)
{
	if (c == 'p') {
		unsigned long ports[KINJ_MAX_FLOWS];
		int n = kinj_parse_list(arg, 65535, ports, KINJ_MAX_FLOWS);
		if (n < 1) {
			fprintf(stderr, "lrx-kinject: --sport %s: want 1..%d ports 0..65535, "
				"comma-separated\n", arg, KINJ_MAX_FLOWS);
			return -EINVAL;
		}
		for (int i = 0; i < n; i++)
			o->sports[i] = (uint16_t)ports[i];
		o->nsports = (unsigned)n;
		return 0;
	}
	if (c == 'P') {
		unsigned long pids[KINJ_MAX_NAPI];
		int n = kinj_parse_list(arg, INT_MAX, pids, KINJ_MAX_NAPI);
		if (n < 1) {
			fprintf(stderr, "lrx-kinject: --napi-pid %s: want up to %d "
				"process ids, comma-separated\n", arg, KINJ_MAX_NAPI);
			return -EINVAL;
		}
		o->n_napi = 0;
		for (int i = 0; i < n; i++)
			if (pids[i] > 0)
				o->napi_pids[o->n_napi++] = (int)pids[i];
		o->napi_pid = o->n_napi ? o->napi_pids[0] : 0;
		return 0;
	}
	return 1;
}

/* the integer options, v already read: 0, -EINVAL, or 1 if not one */
static int kinj_opt_num(int c, unsigned long long v, struct kinj_opts *o)
{
	switch (c) {
	case 'q':
		if (!kinj_in_range("dport", v, 0, 65535))
			return -EINVAL;
		o->dport = (uint16_t)v;
		return 0;
	case 'z':
		if (!kinj_in_range("mss", v, 64, 1448))
			return -EINVAL;
		o->mss = (unsigned)v;
		return 0;
	case 'n': o->packets = v; return 0;
	case 'r':
		if (!kinj_in_range("round", v, 1, KINJ_MAX_ROUND))
			return -EINVAL;
		o->round = (unsigned)v;
		return 0;
	case 'c': o->cpu = (int)v; return 0;
	case 'f':
		if (!kinj_in_range("fifo", v, 0, 99))
			return -EINVAL;
		o->fifo_prio = (int)v;
		return 0;
	case 'i': o->idle_poll_us = (unsigned)v; return 0;
	case 'Q':
		if (!kinj_in_range("queues", v, 1, KINJ_MAX_QUEUES))
			return -EINVAL;
		o->queues = (unsigned)v;
		return 0;
	}
	return 1;
}

/* the checks across options, once all are read */
static int kinj_check(int argc, const struct kinj_opts *o, bool have_mac)
{
	if (o->queues > 1 && o->method != KINJ_XSK) {
		fprintf(stderr, "lrx-kinject: --queues is for --method xdp (AF_PACKET picks the "
			"queue from the sending CPU)\n");
		return -EINVAL;
	}
	if (o->nsports > 1 && o->kind == KINJ_TCP) {
		fprintf(stderr, "lrx-kinject: several --sport are for UDP (one TCP stream's "
			"sequence)\n");
		return -EINVAL;
	}
	if (optind != argc || !o->dev || !have_mac) {
		fprintf(stderr, "lrx-kinject: --dev and --dst-mac are required\n");
		kinj_usage(stderr);
		return -EINVAL;
	}
	return 0;
}

/* the command line into o; -EINVAL after a message on a bad one */
static int kinj_parse(int argc, char **argv, struct kinj_opts *o)
{
	bool have_mac = false;
	int c;

	kinj_defaults(o);
	while ((c = getopt_long(argc, argv, "h", kinj_longs, NULL)) != -1) {
		char *end = NULL;
		unsigned long long v = 0;
		if (strchr("qznrcfiQ", c)) {
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg) {
				fprintf(stderr, "lrx-kinject: %s: want a non-negative integer\n",
					optarg);
				return -EINVAL;
			}
		}
		if (c == 'h') {
			kinj_usage(stdout);
			exit(0);
		}
		int rc = kinj_opt_mode(c, optarg, o);
		if (rc == 1)
			rc = kinj_opt_addr(c, optarg, o, &have_mac);
		if (rc == 1)
			rc = kinj_opt_list(c, optarg, o);
		if (rc == 1)
			rc = kinj_opt_num(c, v, o);
		if (rc == 1) {
			kinj_usage(stderr);
			return -EINVAL;
		}
		if (rc < 0)
			return rc;
	}
	return kinj_check(argc, o, have_mac);
}

/* What kinj_open allocated (the mmaps go with the process). */
static void kinj_close(struct kinj_tx *t)
{
	free(t->frames);
	free(t->msgs);
	free(t->iov);
	if (t->fd >= 0)
		close(t->fd);
	for (unsigned q = 0; q < t->nxsk; q++)
		if (t->xsk[q].fd >= 0)
			close(t->xsk[q].fd);
}

static int kinj_run(const struct kinj_opts *o, struct kinj_tx *t);

int main(int argc, char **argv)
{
	struct kinj_opts o;
	if (kinj_parse(argc, argv, &o) != 0)
		return 2;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(o.cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0) {
		fprintf(stderr, "lrx-kinject: --cpu %d: sched_setaffinity: %s\n", o.cpu,
			strerror(errno));
		return 2;
	}
	struct kinj_tx t = {.fd = -1};
	int rc = kinj_open(&o, &t);
	int status = 1;
	if (rc != 0)
		fprintf(stderr, "lrx-kinject: %s socket on %s: %s\n",
			kinj_method_names[o.method], o.dev,
			strerror(-rc));
	else
		status = kinj_run(&o, &t);
	kinj_close(&t);
	return status;
}

/* The rounds, then one JSON line; returns the exit status. */
static int kinj_run(const struct kinj_opts *o, struct kinj_tx *t)
{
	int rc = 0;
	clockid_t napi_clock = CLOCK_MONOTONIC;
	if (o->napi_pid > 0 && clock_getcpuclockid(o->napi_pid, &napi_clock) != 0) {
		fprintf(stderr, "lrx-kinject: --napi-pid %d: no CPU clock (no such task?)\n",
			o->napi_pid);
		return 2;
	}
	prctl(PR_SET_TIMERSLACK, 1UL);
	signal(SIGINT, kinj_on_signal);
	signal(SIGTERM, kinj_on_signal);
	if (o->fifo_prio > 0) {
		struct sched_param sp = {.sched_priority = o->fifo_prio};
		if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
			fprintf(stderr, "lrx-kinject: SCHED_FIFO %d: %s\n", o->fifo_prio,
				strerror(errno));
			return 1;
		}
	}
	uint32_t seq = 1;
	uint16_t ip_id = 1;
	uint64_t sent = 0, failed = 0, rounds = 0, waits = 0, send_cpu = 0, first_sleep = 0;
	uint64_t napi0 = o->napi_pid > 0 ? kinj_now(napi_clock) : 0;
	uint64_t wall0 = kinj_now(CLOCK_MONOTONIC);
	while (sent < o->packets && !kinj_stop) {
		unsigned n = o->packets - sent < o->round ? (unsigned)(o->packets - sent) : o->round;
		uint64_t c0 = kinj_now(CLOCK_THREAD_CPUTIME_ID);
		rc = kinj_send_round(t, o, n, &seq, &ip_id, &failed);
		send_cpu += kinj_now(CLOCK_THREAD_CPUTIME_ID) - c0;
		if (rc != 0) {
			fprintf(stderr, "lrx-kinject: send on %s: %s\n", o->dev, strerror(-rc));
			break;
		}
		sent += n;
		rounds++;
		if (o->napi_pid > 0) {
			uint64_t w0 = kinj_now(CLOCK_MONOTONIC);
			rc = kinj_wait_idle(o, first_sleep, &waits);
			first_sleep = o->fixed_wait ? 0 : (kinj_now(CLOCK_MONOTONIC) - w0) * 3 / 4;
			if (rc != 0 && rc != -EINTR) {
				fprintf(stderr, "lrx-kinject: NAPI kthread %d: %s\n", o->napi_pid,
					strerror(-rc));
				break;
			}
		}
	}
	uint64_t wall = kinj_now(CLOCK_MONOTONIC) - wall0;
	uint64_t napi = o->napi_pid > 0 ? kinj_now(napi_clock) - napi0 : 0;
	struct sched_param other = {0};
	sched_setscheduler(0, SCHED_OTHER, &other);
	printf("{\"method\": \"%s\", \"kind\": \"%s\", \"sent\": %" PRIu64
	       ", \"failed\": %" PRIu64 ", \"rounds\": %" PRIu64 ", \"round\": %u"
	       ", \"idle_waits\": %" PRIu64 ", \"send_cpu_ns\": %" PRIu64
	       ", \"napi_cpu_ns\": %" PRIu64 ", \"wall_ns\": %" PRIu64
	       ", \"retries\": %" PRIu64 ", \"interrupted\": %s}\n",
	       kinj_method_names[o->method],
	       o->kind == KINJ_TCP ? "tcp" : "udp", sent, failed, rounds, o->round,
	       waits, send_cpu, napi, wall, t->retries, kinj_stop ? "true" : "false");
	return rc == 0 || rc == -EINTR ? 0 : 1;
}
