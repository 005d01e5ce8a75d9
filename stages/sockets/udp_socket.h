/* SPDX-License-Identifier: BSD-3-Clause
 * UDP sockets on the receive path, as l3-demux's UDP handler calls them
 * (docs/sockets.md): after the checksum, __udp4_lib_lookup /
 * __udp6_lib_lookup finds the socket of the datagram's destination (a
 * socket bound to that address beats one bound to the wildcard,
 * compute_score), udp_queue_rcv_skb queues it with the kernel's memory
 * accounting (__udp_enqueue_schedule_skb: the skb's truesize against
 * sk_rcvbuf, the first packet of an empty queue always taken; a full
 * queue drops, UdpRcvbufErrors and UdpInErrors), and a reader drains the
 * queues as an application's recvmmsg would (udp_recvmsg: UdpInDatagrams
 * counted when a datagram is read). The kernel has no list boundary
 * between udp_rcv and the socket (udp_unicast_rcv_skb calls
 * udp_queue_rcv_skb), so this is a part of l3-demux's handler, not a
 * stage of its own; its queues are what l3-demux holds between polls.
 */
#ifndef LISTRX_UDP_SOCKET_H
#define LISTRX_UDP_SOCKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <errno.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#define LRX_UDP_SOCKS_MAX 64
#define LRX_UDP_HASH 64          /* port buckets (udp_table's hslot) */

/* sysctl defaults: net.core.rmem_default, net.core.rmem_max; setsockopt
 * SO_RCVBUF's floor (SOCK_MIN_RCVBUF: 2048 + sizeof(struct sk_buff)) */
#define LRX_UDP_RMEM_DEFAULT 212992u
#define LRX_UDP_RMEM_MAX 212992u
#define LRX_UDP_MIN_RCVBUF (2048u + 232u)

struct lrx_udp_sock {
	uint8_t v6;             /* an AF_INET6 socket (IPV6_V6ONLY: IPv6 only) */
	uint8_t any;            /* bound to the wildcard address */
	uint16_t port;          /* host order */
	int16_t next;           /* the next socket of the port's bucket, -1 */
	uint8_t addr[16];       /* the bound address (IPv4: the first 4) */
	uint32_t rcvbuf;        /* sk_rcvbuf */
	uint32_t rmem;          /* sk_rmem_alloc */
	/* sk_receive_queue: a ring of the queued datagrams and each one's
	 * truesize */
	uint32_t head, count, cap;
	struct rte_mbuf **queue;
	uint32_t *sizes;
	/* counters */
	uint64_t queued, drops, read;
};

enum lrx_udp_reader {
	LRX_UDP_READER_POLL,    /* every datagram at the end of each poll */
	LRX_UDP_READER_BATCH,   /* up to `batch` per socket per poll */
	LRX_UDP_READER_NONE,    /* none while the run lasts (a stalled
				 * application; the run's end reads them) */
};

struct lrx_udp_socks {
	unsigned n;
	struct lrx_udp_sock socks[LRX_UDP_SOCKS_MAX];
	int16_t bucket[LRX_UDP_HASH];
	enum lrx_udp_reader reader;
	uint32_t batch;
	uint32_t truesize;      /* 0: the mbuf's own size */
	/* read and not yet handed to the engine (release) */
	uint32_t n_out, out_head, out_cap;
	struct rte_mbuf **out;
};

/* Parses the socket list: comma-separated ADDR:PORT, [ADDR6]:PORT,
 * *:PORT (IPv4 wildcard), [::]:PORT (IPv6 wildcard), each optionally
 * followed by :RCVBUF. rcvbuf (an item's own, else this default) is the
 * value an application passes to setsockopt(SO_RCVBUF) (0: none, the
 * socket keeps net.core.rmem_default); the kernel doubles it and bounds
 * it. The
 * queues are allocated on socket_id. Returns 0 or -EINVAL / -ENOMEM with
 * what is valid in err. */
int lrx_udp_socks_init(struct lrx_udp_socks *t, const char *list,
		       uint32_t rcvbuf, int socket_id, char *err,
		       size_t err_len);
void lrx_udp_socks_fini(struct lrx_udp_socks *t);
/* The most datagrams the sockets of list can hold at once when each
 * charges size bytes (the pool's mbufs: what to size it for). */
uint32_t lrx_udp_socks_capacity(const char *list, uint32_t rcvbuf,
				uint32_t size);
/* sock_setsockopt SO_RCVBUF: min(val, rmem_max) * 2, at least
 * SOCK_MIN_RCVBUF; 0 is "not set": rmem_default. */
uint32_t lrx_udp_rcvbuf(uint32_t val);

/* __udp4_lib_lookup / __udp6_lib_lookup: the best socket for a
 * destination (an exact address beats the wildcard), or NULL. */
static inline struct lrx_udp_sock *lrx_udp_lookup(struct lrx_udp_socks *t,
						  bool v6, const uint8_t *daddr,
						  uint16_t dport)
{
	struct lrx_udp_sock *best = NULL;

	for (int16_t i = t->bucket[dport & (LRX_UDP_HASH - 1)]; i >= 0;
	     i = t->socks[i].next) {
		struct lrx_udp_sock *sk = &t->socks[i];
		if (sk->port != dport || sk->v6 != v6)
			continue;
		if (!sk->any) {
			if (memcmp(sk->addr, daddr, v6 ? 16 : 4) == 0)
				return sk; /* compute_score: the bound address */
			continue;
		}
		if (best == NULL)
			best = sk;
	}
	return best;
}

/* __udp_enqueue_schedule_skb: 0, or -ENOMEM when the receive buffer is
 * full (the caller counts UdpRcvbufErrors and UdpInErrors and drops). */
static inline int lrx_udp_enqueue(struct lrx_udp_socks *t,
				  struct lrx_udp_sock *sk, struct rte_mbuf *m)
{
	/* a reassembled datagram (a chain) charges each fragment, as
	 * ip_frag_reasm adds the fragments' truesize to the head's */
	const uint32_t size = (t->truesize ? t->truesize
					   : (uint32_t)(sizeof(struct rte_mbuf) +
							rte_pktmbuf_priv_size(m->pool) +
							m->buf_len)) *
			      m->nb_segs;

	/* the first packet of an empty queue is always taken; a buffer
	 * above INT_MAX / 2 takes nothing past it */
	if ((sk->rmem + size > sk->rcvbuf &&
	     (sk->rcvbuf > (uint32_t)INT32_MAX >> 1 || sk->rmem != 0)) ||
	    unlikely(sk->count == sk->cap)) {
		sk->drops++;
		return -ENOMEM;
	}
	const uint32_t at = (sk->head + sk->count) % sk->cap;
	sk->queue[at] = m;
	sk->sizes[at] = size;
	sk->count++;
	sk->rmem += size;
	sk->queued++;
	return 0;
}

/* The reader at the end of a poll (or of the run, all): moves datagrams
 * from the queues to the out list in socket order, each socket's in
 * order, releasing their memory (udp_rmem_release). Returns how many it
 * read (the caller counts UdpInDatagrams / Udp6InDatagrams by family
 * through v6_read). */
uint32_t lrx_udp_read(struct lrx_udp_socks *t, bool all, uint64_t *v4_read,
		      uint64_t *v6_read);
/* Hands up to max read datagrams to the engine. */
uint16_t lrx_udp_release(struct lrx_udp_socks *t, struct rte_mbuf **pkts,
			 uint16_t max);
/* Datagrams in the queues and read but not released. */
uint32_t lrx_udp_held(const struct lrx_udp_socks *t);

#endif
