/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "tcp_rcv.h"

/* before() / after() of include/net/tcp.h: sequence space comparisons */
static inline bool seq_before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}
static inline bool seq_after(uint32_t a, uint32_t b)
{
	return seq_before(b, a);
}

static uint32_t rcv_rcvbuf(const struct lrx_tcp_rcv *t)
{
	return t->conf.rcvbuf ? t->conf.rcvbuf : LRX_TCP_RMEM_DEFAULT;
}

/* sk_rmem_alloc: atomic_add/atomic_sub in the kernel (skb_set_owner_r,
 * sock_rfree), here too since the application may run on another lcore */
static inline uint32_t sk_rmem(const struct lrx_tcp_rcv_sock *sk)
{
	return __atomic_load_n(&sk->rmem, __ATOMIC_RELAXED);
}
static inline void sk_rmem_add(struct lrx_tcp_rcv_sock *sk, uint32_t n)
{
	__atomic_fetch_add(&sk->rmem, n, __ATOMIC_RELAXED);
}
static inline void sk_rmem_sub(struct lrx_tcp_rcv_sock *sk, uint32_t n)
{
	__atomic_fetch_sub(&sk->rmem, n, __ATOMIC_RELAXED);
}

/* Entries in the receive queue, seen from the softirq (the application's
 * head may move on meanwhile: it only frees room) */
static inline uint32_t rq_count(const struct lrx_tcp_rcv_sock *sk)
{
	return sk->rq_tail - __atomic_load_n(&sk->rq_head, __ATOMIC_ACQUIRE);
}

static uint32_t rcv_cap(const struct lrx_tcp_rcv_conf *conf, uint32_t min_truesize)
{
	const uint32_t rcvbuf = conf->rcvbuf ? conf->rcvbuf : LRX_TCP_RMEM_DEFAULT;
	/* tcp_try_rmem_schedule takes one more past a buffer not yet full */
	return rcvbuf / min_truesize + 2;
}

uint32_t lrx_tcp_rcv_capacity(const struct lrx_tcp_rcv_conf *conf, unsigned families,
			      uint32_t size)
{
	if (conf->socks == 0)
		return 0;
	const uint32_t each = rcv_cap(conf, conf->truesize ? conf->truesize
							   : RTE_MAX(size, LRX_TCP_MIN_TRUESIZE));
	const uint32_t zc = conf->mode == LRX_TCP_READ_COPY ? 0 : conf->zc_slots;
	/* a reader lcore's: what it read since the polling lcore last
	 * emptied the out ring, besides what the queues hold again */
	const uint32_t queues = conf->reader_lcore == LRX_TCP_READER_SAME ? 1 : 2;
	return queues * families * conf->socks * each + zc;
}

static int rcv_reader_main(void *arg);

/* The application's lcore: enabled, not the caller's, idle; launched from
 * the main lcore (rte_eal_remote_launch) */
static int rcv_reader_launch(struct lrx_tcp_rcv *t, char *err, size_t err_len)
{
	const unsigned id = t->conf.reader_lcore;
	if (id >= RTE_MAX_LCORE || !rte_lcore_is_enabled(id) || id == rte_lcore_id() ||
	    rte_lcore_id() != rte_get_main_lcore()) {
		snprintf(err, err_len, "reader lcore %u: an lcore EAL runs (-l/--lcores; %u "
			 "enabled, main %u) other than the polling one, set up from the "
			 "main lcore", id, rte_lcore_count(), rte_get_main_lcore());
		return -EINVAL;
	}
	if (rte_eal_get_lcore_state(id) != WAIT ||
	    rte_eal_remote_launch(rcv_reader_main, t, id) != 0) {
		snprintf(err, err_len, "reader lcore %u is busy (another reader, or "
			 "a poll, launched there)", id);
		return -EBUSY;
	}
	t->reader_launched = true;
	return 0;
}

/* The ring of what the application is done with: everything the queues
 * and the application may hold, and what a poll may queue besides */
static int rcv_out_init(struct lrx_tcp_rcv *t, int socket_id)
{
	const uint32_t size = rte_align32pow2(2 * t->n_socks * t->cap + t->conf.zc_slots +
					      1024);
	t->out = rte_zmalloc_socket("tcp_rcv_out", rte_ring_get_memsize(size),
				   RTE_CACHE_LINE_SIZE, socket_id);
	if (t->out == NULL)
		return -ENOMEM;
	return rte_ring_init(t->out, "tcp_rcv_out", size, RING_F_SP_ENQ | RING_F_SC_DEQ);
}

static bool rcv_socks_init(struct lrx_tcp_rcv *t, int socket_id)
{
	const uint32_t ring = rte_align32pow2(t->cap);
	for (uint32_t i = 0; i < t->n_socks; i++) {
		struct lrx_tcp_rcv_sock *sk = &t->socks[i];
		sk->rq_mask = ring - 1;
		sk->rq = rte_malloc_socket("tcp_rcv_rq", ring * sizeof(*sk->rq), 0, socket_id);
		sk->ofo = rte_malloc_socket("tcp_rcv_ofo", t->cap * sizeof(*sk->ofo), 0,
					    socket_id);
		if (!sk->rq || !sk->ofo)
			return false;
	}
	return true;
}

int lrx_tcp_rcv_init(struct lrx_tcp_rcv *t, const struct lrx_tcp_rcv_conf *conf,
		     unsigned families, int socket_id, char *err, size_t err_len)
{
	memset(t, 0, sizeof(*t));
	t->conf = *conf;
	if (conf->socks == 0)
		return 0;
	if (conf->socks > LRX_TCP_SOCKS_MAX || conf->read_size == 0 ||
	    (conf->mode == LRX_TCP_READ_DEVMEM &&
	     (conf->dontneed_batch == 0 || conf->dontneed_batch > conf->zc_slots))) {
		snprintf(err, err_len, "sockets 1..%u, a read size above 0, and for "
			 "devmem a DONTNEED batch of 1..zc_slots", LRX_TCP_SOCKS_MAX);
		return -EINVAL;
	}
	t->cap = rcv_cap(conf, conf->truesize ? conf->truesize : LRX_TCP_MIN_TRUESIZE);
	t->n_socks = families * conf->socks;
	/* a poll drops at most what the queues held at its start and what
	 * arrived in it (a burst, GRO's releases: 1024 at most) */
	t->drop_cap = 2 * t->n_socks * t->cap + 1024;
	t->socks = rte_zmalloc_socket("tcp_rcv_socks", t->n_socks * sizeof(*t->socks),
				      RTE_CACHE_LINE_SIZE, socket_id);
	t->drops = rte_malloc_socket("tcp_rcv_drops", t->drop_cap * sizeof(*t->drops), 0,
				     socket_id);
	t->drop_reasons = rte_malloc_socket("tcp_rcv_reasons",
					    t->drop_cap * sizeof(*t->drop_reasons), 0, socket_id);
	t->app_buf = rte_malloc_socket("tcp_rcv_app", conf->read_size, 64, socket_id);
	if (conf->zc_slots) {
		t->tokens = rte_malloc_socket("tcp_rcv_tokens",
					      conf->zc_slots * sizeof(*t->tokens), 0, socket_id);
		t->refill = rte_malloc_socket("tcp_rcv_refill",
					      conf->zc_slots * sizeof(*t->refill), 0, socket_id);
	}
	bool ok = t->socks && t->drops && t->drop_reasons && t->app_buf &&
		  (conf->zc_slots == 0 || (t->tokens && t->refill));
	ok = ok && rcv_socks_init(t, socket_id) && rcv_out_init(t, socket_id) == 0;
	if (!ok) {
		snprintf(err, err_len, "out of memory for %u TCP receive queues", t->n_socks);
		lrx_tcp_rcv_fini(t);
		return -ENOMEM;
	}
	int rc = conf->reader_lcore == LRX_TCP_READER_SAME ? 0
							   : rcv_reader_launch(t, err, err_len);
	if (rc < 0)
		lrx_tcp_rcv_fini(t);
	return rc;
}

/* The reader lcore told to stop, and waited for: from then on the
 * calling lcore is the only one that touches the sockets */
static void rcv_reader_stop(struct lrx_tcp_rcv *t)
{
	if (!t->reader_launched)
		return;
	__atomic_store_n(&t->reader_stop, true, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&t->reader_done, __ATOMIC_ACQUIRE))
		rte_pause();
	t->reader_launched = false;
}

void lrx_tcp_rcv_fini(struct lrx_tcp_rcv *t)
{
	struct rte_mbuf *m;

	rcv_reader_stop(t);
	for (uint32_t i = 0; t->socks && i < t->n_socks; i++) {
		struct lrx_tcp_rcv_sock *sk = &t->socks[i];
		for (uint32_t k = sk->rq_head; sk->rq && k != sk->rq_tail; k++)
			rte_pktmbuf_free(sk->rq[k & sk->rq_mask].m);
		for (uint32_t k = 0; sk->ofo && k < sk->ofo_count; k++)
			rte_pktmbuf_free(sk->ofo[k].m);
		rte_free(sk->rq);
		rte_free(sk->ofo);
	}
	while (t->out && rte_ring_sc_dequeue(t->out, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	for (uint32_t k = 0; k < t->n_drop; k++)
		rte_pktmbuf_free(t->drops[k]);
	for (uint32_t k = 0; k < t->tokens_n; k++)
		rte_pktmbuf_free(t->tokens[k]);
	for (uint32_t k = 0; k < t->refill_n; k++)
		rte_pktmbuf_free(t->refill[(t->refill_head + k) % t->conf.zc_slots]);
	rte_free(t->socks);
	rte_free(t->out);
	rte_free(t->drops);
	rte_free(t->drop_reasons);
	rte_free(t->app_buf);
	rte_free(t->tokens);
	rte_free(t->refill);
	const struct lrx_tcp_rcv_conf conf = t->conf;
	memset(t, 0, sizeof(*t));
	t->conf = conf;
}

void lrx_tcp_rcv_open(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk, uint32_t rcv_nxt)
{
	sk->open = true;
	/* before the first segment is queued: the application reads it
	 * only after that (rq_tail's release) */
	sk->digest = 0xcbf29ce484222325ull; /* FNV-1a's offset basis */
	t->mib.digest_open += t->conf.digest ? sk->digest : 0;
	sk->rcv_nxt = rcv_nxt;
	sk->scaling_ratio = LRX_TCP_DEFAULT_SCALING_RATIO;
}

uint32_t lrx_tcp_rcv_window(const struct lrx_tcp_rcv *t, const struct lrx_tcp_rcv_sock *sk)
{
	const uint32_t rcvbuf = rcv_rcvbuf(t);
	const uint32_t rmem = sk_rmem(sk);
	const uint64_t space = rmem < rcvbuf ? rcvbuf - rmem : 0;
	/* tcp_win_from_space */
	return (uint32_t)((space * sk->scaling_ratio) >> 8);
}

static uint32_t seg_truesize(const struct lrx_tcp_rcv *t, const struct rte_mbuf *m)
{
	return (t->conf.truesize ? t->conf.truesize
				 : (uint32_t)(sizeof(struct rte_mbuf) +
					      rte_pktmbuf_priv_size(m->pool) + m->buf_len)) *
	       m->nb_segs;
}

static void rcv_drop_later(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk,
			   const struct lrx_tcp_seg *s, enum lrx_tcp_drop reason)
{
	sk_rmem_sub(sk, s->truesize);
	t->mib.bytes_taken -= s->len;
	t->mib.bytes_dup += s->len;
	t->drops[t->n_drop] = s->m;
	t->drop_reasons[t->n_drop++] = reason;
}

/* tcp_queue_rcv: to the receive queue's tail */
static void rcv_queue_tail(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk,
			   const struct lrx_tcp_seg *s)
{
	(void)t;
	sk->rq[sk->rq_tail & sk->rq_mask] = *s;
	__atomic_store_n(&sk->rq_tail, sk->rq_tail + 1, __ATOMIC_RELEASE);
	sk->rcv_nxt = s->seq + s->len;
}

/* tcp_ofo_queue: what the out-of-order queue now continues moves to the
 * receive queue; what rcv_nxt passed whole is dropped (TCP_OFO_DROP) */
static void rcv_ofo_release(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk)
{
	uint32_t k = 0;

	for (; k < sk->ofo_count && !seq_after(sk->ofo[k].seq, sk->rcv_nxt); k++) {
		struct lrx_tcp_seg s = sk->ofo[k];
		if (!seq_after(s.seq + s.len, sk->rcv_nxt)) {
			rcv_drop_later(t, sk, &s, LRX_TCP_DROP_OFO_DROP);
			continue;
		}
		const uint32_t eaten = sk->rcv_nxt - s.seq;
		s.seq += eaten;
		s.off += eaten;
		s.len -= eaten;
		t->mib.bytes_taken -= eaten;
		t->mib.bytes_dup += eaten;
		rcv_queue_tail(t, sk, &s);
	}
	memmove(sk->ofo, sk->ofo + k, (sk->ofo_count - k) * sizeof(*sk->ofo));
	sk->ofo_count -= k;
}

/* tcp_data_queue_ofo: the sorted insert; TCPOFOMerge for a segment all of
 * whose bytes are there, and for each one the new segment covers whole */
static enum lrx_tcp_rcv_fate rcv_ofo_insert(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk,
					    const struct lrx_tcp_seg *s,
					    enum lrx_tcp_drop *reason)
{
	const uint32_t end = s->seq + s->len;
	uint32_t at = 0;

	while (at < sk->ofo_count && seq_before(sk->ofo[at].seq, s->seq))
		at++;
	/* the one before it (or at the same seq) may hold every byte */
	for (uint32_t p = at ? at - 1 : 0; p < sk->ofo_count && p <= at; p++) {
		const struct lrx_tcp_seg *o = &sk->ofo[p];
		if (!seq_after(o->seq, s->seq) && !seq_after(end, o->seq + o->len)) {
			t->mib.ofo_merge++;
			*reason = LRX_TCP_DROP_OFOMERGE;
			return LRX_TCP_RCV_DROP;
		}
	}
	/* those it covers whole go (skb1 dropped, TCP_OFOMERGE) */
	uint32_t gone = 0;
	while (at + gone < sk->ofo_count &&
	       !seq_after(sk->ofo[at + gone].seq + sk->ofo[at + gone].len, end)) {
		t->mib.ofo_merge++;
		rcv_drop_later(t, sk, &sk->ofo[at + gone], LRX_TCP_DROP_OFOMERGE);
		gone++;
	}
	if (gone != 1)
		memmove(sk->ofo + at + 1, sk->ofo + at + gone,
			(sk->ofo_count - at - gone) * sizeof(*sk->ofo));
	sk->ofo[at] = *s;
	sk->ofo_count = sk->ofo_count - gone + 1;
	return LRX_TCP_RCV_QUEUED;
}

static enum lrx_tcp_rcv_fate rcv_drop(struct lrx_tcp_rcv *t, uint32_t len, bool dup,
				      enum lrx_tcp_drop why, enum lrx_tcp_drop *reason)
{
	*(dup ? &t->mib.bytes_dup : &t->mib.bytes_dropped) += len;
	*reason = why;
	return LRX_TCP_RCV_DROP;
}

enum lrx_tcp_rcv_fate lrx_tcp_rcv_data(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk,
				       struct rte_mbuf *m, uint32_t seq, uint32_t off,
				       uint32_t len, enum lrx_tcp_drop *reason)
{
	if (len == 0)
		return LRX_TCP_RCV_NO_DATA;
	t->mib.bytes_in += len;
	const uint32_t end = seq + len;
	const uint32_t win = lrx_tcp_rcv_window(t, sk);
	/* all of it received already: tcp_data_queue's "A retransmit" */
	if (!seq_after(end, sk->rcv_nxt)) {
		t->mib.delayed_ack_lost++;
		return rcv_drop(t, len, true, LRX_TCP_DROP_OLD_DATA, reason);
	}
	/* tcp_sequence: beyond the window's right edge */
	if (seq_after(seq, sk->rcv_nxt + win))
		return rcv_drop(t, len, false, LRX_TCP_DROP_INVALID_SEQUENCE, reason);
	struct lrx_tcp_seg s = {.m = m, .seq = seq, .len = len, .off = off,
				.truesize = seg_truesize(t, m)};
	const bool in_order = !seq_after(seq, sk->rcv_nxt);
	if (in_order && win == 0) {
		t->mib.zero_window_drop++;
		return rcv_drop(t, len, false, LRX_TCP_DROP_ZEROWINDOW, reason);
	}
	if (!in_order && !seq_before(seq, sk->rcv_nxt + win))
		return rcv_drop(t, len, false, LRX_TCP_DROP_OVERWINDOW, reason);
	/* tcp_try_rmem_schedule, without the pruning */
	if (sk_rmem(sk) > rcv_rcvbuf(t) || rq_count(sk) + sk->ofo_count >= t->cap) {
		*(in_order ? &t->mib.rcvq_drop : &t->mib.ofo_drop) += 1;
		return rcv_drop(t, len, false, LRX_TCP_DROP_PROTO_MEM, reason);
	}
	if (!in_order) {
		t->mib.ofo_queue++; /* every segment tcp_data_queue_ofo takes */
		enum lrx_tcp_rcv_fate f = rcv_ofo_insert(t, sk, &s, reason);
		if (f != LRX_TCP_RCV_QUEUED)
			return rcv_drop(t, len, true, *reason, reason);
		sk_rmem_add(sk, s.truesize);
		t->mib.bytes_taken += len;
		return f;
	}
	/* in order; a head already received is trimmed (the partial
	 * packet of tcp_data_queue: tcp_recvmsg skips it by copied_seq) */
	const uint32_t eaten = sk->rcv_nxt - seq;
	s.seq += eaten;
	s.off += eaten;
	s.len -= eaten;
	t->mib.bytes_dup += eaten;
	t->mib.bytes_taken += s.len;
	t->mib.fast += eaten == 0 && sk->ofo_count == 0;
	/* tcp_measure_rcv_mss's scaling_ratio */
	sk->scaling_ratio = RTE_MIN(255u, (uint32_t)(((uint64_t)len << 8) / s.truesize));
	sk->scaling_ratio = RTE_MAX(sk->scaling_ratio, 1u);
	sk_rmem_add(sk, s.truesize);
	rcv_queue_tail(t, sk, &s);
	if (sk->ofo_count)
		rcv_ofo_release(t, sk);
	return LRX_TCP_RCV_QUEUED;
}

/* ---- the application ------------------------------------------------------ */

/* To the polling lcore; a read takes no more than the ring has room for
 * (rcv_read_round), so this never fails */
static void rcv_out(struct lrx_tcp_rcv *t, struct rte_mbuf *m)
{
	rte_ring_sp_enqueue(t->out, m);
}

/* FNV-1a over the payload, and the copy to the application's buffer
 * (dst NULL: read in place, as the zero-copy application does) */
static void rcv_touch(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk,
		      const struct lrx_tcp_seg *s, uint8_t *dst)
{
	const struct rte_mbuf *m = s->m;
	uint32_t skip = s->off, left = s->len;
	uint64_t h = sk->digest;

	while (m && left) {
		if (skip >= m->data_len) {
			skip -= m->data_len;
			m = m->next;
			continue;
		}
		const uint8_t *p = rte_pktmbuf_mtod_offset(m, const uint8_t *, skip);
		const uint32_t n = RTE_MIN(left, (uint32_t)m->data_len - skip);
		if (dst) {
			memcpy(dst, p, n);
			p = dst;
			dst += n;
		}
		if (t->conf.digest)
			for (uint32_t i = 0; i < n; i++)
				h = (h ^ p[i]) * 0x100000001b3ull;
		left -= n;
		skip = 0;
		m = m->next;
	}
	t->mib.digest_read += h - sk->digest;
	sk->digest = h;
}

/* tcp_recvmsg's copy of one segment into the application's buffer (a
 * recvmsg each read_size bytes; a segment larger than the buffer is
 * copied in pieces, one call each) */
static void rcv_copy(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk,
		     const struct lrx_tcp_seg *s, uint32_t *fill)
{
	struct lrx_tcp_seg part = *s;
	while (part.len) {
		if (*fill == t->conf.read_size) {
			*fill = 0;
			t->mib.recvmsg++;
		}
		struct lrx_tcp_seg piece = part;
		piece.len = RTE_MIN(part.len, t->conf.read_size - *fill);
		rcv_touch(t, sk, &piece, t->app_buf + *fill);
		*fill += piece.len;
		part.off += piece.len;
		part.len -= piece.len;
	}
	t->mib.bytes_copied += s->len;
	rcv_out(t, s->m);
}

/* devmem's SO_DEVMEM_DONTNEED: the batch of tokens given back */
static void rcv_dontneed(struct lrx_tcp_rcv *t)
{
	for (uint32_t k = 0; k < t->tokens_n; k++)
		rcv_out(t, t->tokens[k]);
	t->zc_held -= t->tokens_n;
	t->tokens_n = 0;
	t->mib.dontneed++;
}

/* zcrx's refill ring, drained by the poll (io_zcrx_ring_refill) */
static void rcv_refill(struct lrx_tcp_rcv *t)
{
	for (uint32_t k = 0; k < t->refill_n; k++)
		rcv_out(t, t->refill[(t->refill_head + k) % t->conf.zc_slots]);
	t->refill_head = (t->refill_head + t->refill_n) % t->conf.zc_slots;
	t->zc_held -= t->refill_n;
	t->refill_n = 0;
}

/* One segment to the application as a reference; false: no slot free */
static bool rcv_zc(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk,
		   const struct lrx_tcp_seg *s)
{
	if (t->zc_held == t->conf.zc_slots)
		return false;
	rcv_touch(t, sk, s, NULL);
	t->zc_held++;
	t->mib.zc_refs++;
	if (t->conf.mode == LRX_TCP_READ_DEVMEM) {
		t->tokens[t->tokens_n++] = s->m;
	} else {
		/* the completion read, the buffer refilled at once */
		t->refill[(t->refill_head + t->refill_n++) % t->conf.zc_slots] = s->m;
	}
	return true;
}

/* One socket's receive queue, up to room segments (each may go back
 * through the out ring) */
static uint64_t rcv_read_sock(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk,
			      uint32_t *room)
{
	const uint32_t tail = __atomic_load_n(&sk->rq_tail, __ATOMIC_ACQUIRE);
	uint32_t head = sk->rq_head;
	uint64_t bytes = 0;
	uint32_t fill = 0;

	if (head == tail || *room == 0)
		return 0;
	if (t->conf.mode != LRX_TCP_READ_ZCRX)
		t->mib.recvmsg++;
	for (; head != tail && *room; head++, (*room)--) {
		const struct lrx_tcp_seg *s = &sk->rq[head & sk->rq_mask];
		if (t->conf.mode == LRX_TCP_READ_COPY || !rcv_zc(t, sk, s)) {
			t->mib.zc_copy_fallback += t->conf.mode != LRX_TCP_READ_COPY;
			rcv_copy(t, sk, s, &fill);
		}
		bytes += s->len;
		sk_rmem_sub(sk, s->truesize); /* sock_rfree */
	}
	/* the slots go back to the softirq */
	__atomic_store_n(&sk->rq_head, head, __ATOMIC_RELEASE);
	/* the application gathers tokens over its recvmsg calls and gives
	 * them back once it has a batch (the seed's batching: 512) */
	if (t->conf.mode == LRX_TCP_READ_DEVMEM && t->tokens_n >= t->conf.dontneed_batch)
		rcv_dontneed(t);
	return bytes;
}

/* One read of every socket. What it may put in the out ring: the refills,
 * a segment each, the tokens (at most zc_slots): no more than the ring's
 * room; what does not fit is read next time. */
static uint64_t rcv_read_round(struct lrx_tcp_rcv *t, bool all)
{
	const uint64_t start = rte_rdtsc();
	const uint32_t free = rte_ring_free_count(t->out);
	const uint32_t reserve = t->conf.zc_slots + t->refill_n;
	uint32_t room = free > reserve ? free - reserve : 0;
	uint64_t bytes = 0;
	bool posted = false;

	if (t->conf.mode == LRX_TCP_READ_ZCRX)
		rcv_refill(t);
	for (uint32_t i = 0; i < t->n_socks; i++) {
		const uint64_t n = rcv_read_sock(t, &t->socks[i], &room);
		posted |= n != 0;
		bytes += n;
	}
	t->mib.uring_enter += posted && t->conf.mode == LRX_TCP_READ_ZCRX;
	if (all) {
		/* the application gives every reference back */
		if (t->tokens_n)
			rcv_dontneed(t);
		if (t->refill_n)
			rcv_refill(t);
	}
	t->mib.bytes_read += bytes;
	if (bytes) {
		t->mib.reads++;
		t->mib.busy_cycles += rte_rdtsc() - start;
	}
	return bytes;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The reader lcore: reads as long as there is something, until told to
 * stop (the application's loop of recvmsg, or of io_uring completions).
 * Its CPU time is read around each read (a system call: on the reader
 * lcore only, where a shared CPU would otherwise count in its cycles) */
static int rcv_reader_main(void *arg)
{
	struct lrx_tcp_rcv *t = arg;

	while (!__atomic_load_n(&t->reader_stop, __ATOMIC_ACQUIRE)) {
		if (t->conf.reader == LRX_TCP_READER_NONE) {
			rte_pause();
			continue;
		}
		const uint64_t start = thread_cpu_ns();
		if (rcv_read_round(t, false) == 0)
			rte_pause();
		else
			t->mib.oncpu_ns += thread_cpu_ns() - start;
	}
	__atomic_store_n(&t->reader_done, true, __ATOMIC_RELEASE);
	return 0;
}

/* The counters both sides make: set where only one lcore runs */
static void rcv_mib_settle(struct lrx_tcp_rcv *t)
{
	t->mib.bytes_queued = t->mib.bytes_taken - t->mib.bytes_read;
	t->mib.digest = t->mib.digest_open + t->mib.digest_read;
}

uint64_t lrx_tcp_rcv_read(struct lrx_tcp_rcv *t, bool all)
{
	if (t->n_socks == 0)
		return 0;
	if (all)
		rcv_reader_stop(t);
	else if (t->reader_launched || t->conf.reader == LRX_TCP_READER_NONE)
		return 0;
	const uint64_t bytes = rcv_read_round(t, all);
	rcv_mib_settle(t);
	return bytes;
}

static bool rcv_half_free(const struct lrx_tcp_rcv *t)
{
	const uint32_t rcvbuf = rcv_rcvbuf(t);
	for (uint32_t i = 0; i < t->n_socks; i++)
		if (sk_rmem(&t->socks[i]) > rcvbuf / 2)
			return false;
	return true;
}

void lrx_tcp_rcv_window_wait(struct lrx_tcp_rcv *t)
{
	if (!t->conf.window_wait || !t->reader_launched ||
	    t->conf.reader == LRX_TCP_READER_NONE || rcv_half_free(t))
		return;
	const uint64_t start = rte_rdtsc(), limit = start + rte_get_tsc_hz();
	uint64_t now = start;
	while (!rcv_half_free(t) && now < limit) {
		rte_pause();
		now = rte_rdtsc();
	}
	t->mib.window_waits++;
	t->mib.window_wait_cycles += now - start;
}

uint16_t lrx_tcp_rcv_release(struct lrx_tcp_rcv *t, struct rte_mbuf **pkts, uint16_t max)
{
	if (t->out == NULL)
		return 0;
	return (uint16_t)rte_ring_sc_dequeue_burst(t->out, (void **)pkts, max, NULL);
}

uint16_t lrx_tcp_rcv_drop(struct lrx_tcp_rcv *t, struct rte_mbuf **pkts,
			  enum lrx_tcp_drop *reasons, uint16_t max)
{
	const uint16_t n = (uint16_t)RTE_MIN((uint32_t)max, t->n_drop);

	if (n == 0) /* also without a receive side: t->drops is NULL then */
		return 0;
	memcpy(pkts, t->drops, n * sizeof(*pkts));
	memcpy(reasons, t->drop_reasons, n * sizeof(*reasons));
	memmove(t->drops, t->drops + n, (t->n_drop - n) * sizeof(*t->drops));
	memmove(t->drop_reasons, t->drop_reasons + n, (t->n_drop - n) * sizeof(*reasons));
	t->n_drop -= n;
	return n;
}

uint32_t lrx_tcp_rcv_held(const struct lrx_tcp_rcv *t)
{
	if (t->n_socks == 0)
		return 0;
	uint32_t n = rte_ring_count(t->out) + t->n_drop +
		     __atomic_load_n(&t->zc_held, __ATOMIC_RELAXED);

	for (uint32_t i = 0; i < t->n_socks; i++)
		n += rq_count(&t->socks[i]) + t->socks[i].ofo_count;
	return n;
}

int64_t lrx_tcp_rcv_bytes_balance(const struct lrx_tcp_rcv *t)
{
	const struct lrx_tcp_rcv_mib *m = &t->mib;
	return (int64_t)m->bytes_in -
	       (int64_t)(m->bytes_read + m->bytes_queued + m->bytes_dropped + m->bytes_dup);
}
