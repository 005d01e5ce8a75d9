/* SPDX-License-Identifier: BSD-3-Clause
 * TCP's receive side of an established socket, up to the application
 * (docs/sockets.md, "TCP delivery"): what tcp_rcv_established and
 * tcp_data_queue do with a segment's payload, and the application's read.
 *  - in order (seq == rcv_nxt, the fast path; or a head already received
 *    and trimmed): appended to the receive queue (tcp_queue_rcv), rcv_nxt
 *    moves on and what the out-of-order queue now continues follows it
 *    (tcp_ofo_queue);
 *  - after rcv_nxt and inside the window: held in the out-of-order queue,
 *    sorted by sequence (tcp_data_queue_ofo: TCPOFOQueue for each segment
 *    it takes; one whose bytes are all there already is dropped,
 *    TCPOFOMerge; segments it covers whole are dropped, TCPOFOMerge each);
 *  - all before rcv_nxt: a duplicate, dropped TCP_OLD_DATA
 *    (DelayedACKLost); past the window's end: TCP_INVALID_SEQUENCE
 *    (tcp_sequence); a closed window drops the in-order segment
 *    (TCPZeroWindowDrop), a full buffer any (tcp_try_rmem_schedule:
 *    TCPRcvQDrop in order, TCPOFODrop out of order; the kernel's pruning
 *    is not modelled).
 * Every queued segment charges its truesize to sk_rmem_alloc against
 * sk_rcvbuf; the window advertised is the free buffer scaled as
 * tcp_win_from_space (scaling_ratio: payload/truesize of the last in-order
 * segment, tcp_measure_rcv_mss; 50 % before one).
 *
 * The reader (the application) takes the receive queue in one of three
 * ways:
 *  - copy: tcp_recvmsg, the payload copied into the application's buffer,
 *    the segment freed (a recvmsg per read_size bytes);
 *  - devmem: tcp_recvmsg_dmabuf, a reference to the payload buffer (a
 *    token) handed to the application, which gathers them over its
 *    recvmsg calls and returns them once it has dontneed_batch
 *    (setsockopt SO_DEVMEM_DONTNEED);
 *  - zcrx: io_uring zero-copy receive, references posted to a completion
 *    ring the application reads without a call, the buffers given back
 *    through a refill ring the poll drains (io_zcrx_ring_refill).
 * The application runs on the polling lcore (after each poll, as a
 * process woken by the softirq on its own CPU) or on an lcore of its own
 * (reader_lcore, the seed's second CPU): the receive queue is then a
 * single-producer single-consumer ring between the two, as the socket's
 * queue is between softirq and process, sk_rmem_alloc an atomic both
 * sides update, and what the application is done with goes back to the
 * polling lcore through an rte_ring (skb_attempt_defer_free: an skb is
 * freed on the CPU that allocated it, where its page pool recycles it).
 * The same ring carries the copy's freed mbufs in both placements.
 * In the zero-copy ways the application holds at most zc_slots buffers
 * (the binding's page pool, the zcrx area); with none free the segment is
 * copied instead (tcp_zc_copy_fallback), as both fall back to a copy when
 * the payload is not in the application's memory.
 *
 * Mbufs leave only through the out list (read: consumed) and the drop
 * list (what the out-of-order queue lets go, with the reason); every
 * payload byte that arrives is read, queued, held by the application, or
 * dropped with a reason (lrx_tcp_rcv_bytes_balance).
 */
#ifndef LISTRX_TCP_RCV_H
#define LISTRX_TCP_RCV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_mbuf.h>
struct rte_ring;


/* tcp_rmem[1]: a new socket's sk_rcvbuf */
#define LRX_TCP_RMEM_DEFAULT 131072u
/* the smallest truesize a segment charges (SKB_TRUESIZE(0)) */
#define LRX_TCP_MIN_TRUESIZE 576u
#define LRX_TCP_SOCKS_MAX 4096u
#define LRX_TCP_ZC_SLOTS_MAX 65536u
/* TCP_DEFAULT_SCALING_RATIO: 50 % in 1/256 */
#define LRX_TCP_DEFAULT_SCALING_RATIO 128u
/* reader_lcore: the application reads on the polling lcore */
#define LRX_TCP_READER_SAME UINT32_MAX

/* Why a segment is dropped: the kernel's SKB_DROP_REASON_* suffix (the
 * stage maps them to its drop reasons of the same names). */
enum lrx_tcp_drop {
	LRX_TCP_DROP_OLD_DATA,
	LRX_TCP_DROP_INVALID_SEQUENCE,
	LRX_TCP_DROP_ZEROWINDOW,
	LRX_TCP_DROP_OVERWINDOW,
	LRX_TCP_DROP_OFOMERGE,
	LRX_TCP_DROP_OFO_DROP,
	LRX_TCP_DROP_PROTO_MEM,
	LRX_TCP_DROP_MAX
};

enum lrx_tcp_read_mode {
	LRX_TCP_READ_COPY,
	LRX_TCP_READ_DEVMEM,
	LRX_TCP_READ_ZCRX,
};

enum lrx_tcp_reader {
	LRX_TCP_READER_POLL,    /* everything at the end of each poll */
	LRX_TCP_READER_NONE,    /* nothing until the run ends (stopped) */
};

/* One queued segment: its payload is off..off+len of the mbuf (chain). */
struct lrx_tcp_seg {
	struct rte_mbuf *m;
	uint32_t seq, len;      /* the payload's first sequence number, bytes */
	uint32_t off;           /* payload offset from the frame start */
	uint32_t truesize;
};

struct lrx_tcp_rcv_sock {
	/* the softirq's (the polling lcore) */
	bool open;
	uint32_t rcv_nxt;
	uint32_t rmem;          /* sk_rmem_alloc: both sides, atomically */
	uint32_t scaling_ratio; /* tp->scaling_ratio, 1/256 */
	/* sk_receive_queue: a ring of rq_mask + 1 entries, rq_tail queued
	 * (ever) by the softirq, rq_head read by the application */
	uint32_t rq_tail, rq_mask;
	struct lrx_tcp_seg *rq;
	/* out_of_order_queue: sorted by seq */
	uint32_t ofo_count;
	struct lrx_tcp_seg *ofo;
	/* the application's: a line of their own */
	uint32_t rq_head __rte_cache_aligned;
	uint64_t digest;        /* FNV-1a of the bytes read, in order */
};

/* Counters, as nstat names them (TcpExt*) and listrx's tcp_*: the
 * softirq's, then the application's on a line of their own (with a
 * reader lcore each side writes only its own) */
struct lrx_tcp_rcv_mib {
	uint64_t ofo_queue;         /* LINUX_MIB_TCPOFOQUEUE */
	uint64_t ofo_drop;          /* LINUX_MIB_TCPOFODROP */
	uint64_t ofo_merge;         /* LINUX_MIB_TCPOFOMERGE */
	uint64_t rcvq_drop;         /* LINUX_MIB_TCPRCVQDROP */
	uint64_t zero_window_drop;  /* LINUX_MIB_TCPZEROWINDOWDROP */
	uint64_t delayed_ack_lost;  /* LINUX_MIB_DELAYEDACKLOST */
	uint64_t fast;              /* seq == rcv_nxt, nothing out of order */
	uint64_t untracked;         /* segments of a socket without a queue */
	uint64_t window_waits;      /* conf.window_wait: polls that waited */
	uint64_t window_wait_cycles; /* TSC they waited */
	/* payload bytes */
	uint64_t bytes_in;          /* every payload byte that arrived */
	uint64_t bytes_dup;         /* already received (trimmed, old) */
	uint64_t bytes_dropped;     /* dropped with a reason, not dup */
	uint64_t bytes_taken;       /* ever put in the queues and still there or read */
	/* bytes_taken - bytes_read, and the digests, set when the
	 * application has read (on the polling lcore) or stopped */
	uint64_t bytes_queued;      /* in the receive and out-of-order queues */
	uint64_t digest;            /* the sockets' digests summed (conf.digest) */
	uint64_t digest_open;       /* the sockets' starting digests */
	/* the application's */
	uint64_t bytes_read __rte_cache_aligned; /* the application has them */
	uint64_t bytes_copied;      /* of which copied (copy, fallback) */
	/* the application's calls and references */
	uint64_t recvmsg;           /* copy, devmem: recvmsg calls */
	uint64_t dontneed;          /* devmem: setsockopt(SO_DEVMEM_DONTNEED) */
	uint64_t uring_enter;       /* zcrx: reads that posted completions */
	uint64_t zc_refs;           /* references handed out */
	uint64_t zc_copy_fallback;  /* segments copied: no slot free */
	uint64_t reads;             /* reads that took something */
	uint64_t busy_cycles;       /* TSC in those reads */
	uint64_t oncpu_ns;          /* on a reader lcore: its thread's CPU time in
				     * them (CLOCK_THREAD_CPUTIME_ID: without the
				     * time another task had its CPU) */
	uint64_t digest_read;       /* what reading moved the digests by */
};

struct lrx_tcp_rcv_conf {
	uint32_t socks;         /* receive sockets per family (0: none) */
	uint32_t rcvbuf;        /* sk_rcvbuf (0: tcp_rmem[1]) */
	uint32_t truesize;      /* 0: the mbuf's own size */
	enum lrx_tcp_read_mode mode;
	enum lrx_tcp_reader reader;
	uint32_t read_size;     /* bytes per recvmsg (the application buffer) */
	uint32_t dontneed_batch; /* devmem: tokens per SO_DEVMEM_DONTNEED */
	uint32_t zc_slots;      /* zero-copy buffers the application may hold */
	uint32_t reader_lcore;  /* LRX_TCP_READER_SAME or the application's lcore */
	/* with reader_lcore: a sender that respects the window (a TCP sender
	 * sends nothing into a closed window; net_synth's stream would send
	 * on and lose the flow at the first drop): the poll's end waits
	 * while a socket has less than half its buffer free */
	bool window_wait;
	bool digest;            /* hash what is read (tests) */
};

struct lrx_tcp_rcv {
	struct lrx_tcp_rcv_conf conf;
	uint32_t cap;           /* entries of each queue */
	uint32_t n_socks;       /* families * conf.socks */
	struct lrx_tcp_rcv_sock *socks;
	struct lrx_tcp_rcv_mib mib;
	/* read (or returned by the application), handed to the engine: an
	 * SP/SC ring, the application enqueues, the polling lcore dequeues */
	struct rte_ring *out;
	/* dropped from a queue, with the reason */
	uint32_t n_drop, drop_cap;
	struct rte_mbuf **drops;
	enum lrx_tcp_drop *drop_reasons;
	/* the reader lcore (conf.reader_lcore): running until told to stop */
	bool reader_launched;
	bool reader_stop;       /* atomic: the polling lcore sets it */
	bool reader_done;       /* atomic: the reader sets it as it returns */
	/* the application's: zero-copy buffers it holds (devmem's tokens not
	 * yet returned, zcrx's completions and refills; zc_held counts both) */
	uint8_t *app_buf __rte_cache_aligned; /* the copy's destination, read_size bytes */
	uint32_t zc_held;
	uint32_t tokens_n;      /* devmem: tokens read, not returned */
	struct rte_mbuf **tokens;
	uint32_t refill_head, refill_n; /* zcrx: the refill ring */
	struct rte_mbuf **refill;
};

/* What lrx_tcp_rcv_data decided for a segment. */
enum lrx_tcp_rcv_fate {
	LRX_TCP_RCV_QUEUED,     /* the socket holds it */
	LRX_TCP_RCV_DROP,       /* drop it with *reason */
	LRX_TCP_RCV_NO_DATA,    /* no payload: the caller's */
};

/* 0, -EINVAL (a value out of range, named in err), -EBUSY (the reader
 * lcore runs something), or -ENOMEM. With conf.reader_lcore, call it on
 * the main lcore: it launches the reader there. */
int lrx_tcp_rcv_init(struct lrx_tcp_rcv *t, const struct lrx_tcp_rcv_conf *conf,
		     unsigned families, int socket_id, char *err, size_t err_len);
/* Stops the reader lcore and frees what every queue still holds (a
 * closed socket's purge). */
void lrx_tcp_rcv_fini(struct lrx_tcp_rcv *t);
/* The most mbufs the sockets and the application can hold at once when
 * each charges size bytes. */
uint32_t lrx_tcp_rcv_capacity(const struct lrx_tcp_rcv_conf *conf, unsigned families,
			      uint32_t size);

/* The socket at index i (family * socks + the connection), or NULL when
 * it has no receive queue. */
static inline struct lrx_tcp_rcv_sock *lrx_tcp_rcv_sock(struct lrx_tcp_rcv *t,
							unsigned fam, uint32_t conn)
{
	if (conn >= t->conf.socks)
		return NULL;
	return &t->socks[fam * t->conf.socks + conn];
}

/* The connection's first sequence number: rcv_nxt of a socket a SYN
 * opens (seq + 1) or one older than the run (the segment's seq). */
void lrx_tcp_rcv_open(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk, uint32_t rcv_nxt);

/* tcp_data_queue on the segment whose payload is off..off+len of m;
 * *reason says why when it returns DROP. */
enum lrx_tcp_rcv_fate lrx_tcp_rcv_data(struct lrx_tcp_rcv *t, struct lrx_tcp_rcv_sock *sk,
				       struct rte_mbuf *m, uint32_t seq, uint32_t off,
				       uint32_t len, enum lrx_tcp_drop *reason);

/* tcp_receive_window: bytes the sender may send past rcv_nxt. */
uint32_t lrx_tcp_rcv_window(const struct lrx_tcp_rcv *t, const struct lrx_tcp_rcv_sock *sk);

/* The application: at the end of a poll (all = false: as its reader
 * says; nothing when it has an lcore of its own) or of the run (all:
 * the reader lcore stopped first, then everything queued read and every
 * reference given back, on the calling lcore). Returns the bytes read. */
uint64_t lrx_tcp_rcv_read(struct lrx_tcp_rcv *t, bool all);
/* conf.window_wait with a reader lcore, at the end of a poll: waits
 * (a second at most) until every socket has half its buffer free. */
void lrx_tcp_rcv_window_wait(struct lrx_tcp_rcv *t);
/* Hands up to max mbufs the application is done with to the engine. */
uint16_t lrx_tcp_rcv_release(struct lrx_tcp_rcv *t, struct rte_mbuf **pkts, uint16_t max);
/* Hands up to max dropped mbufs and their reasons to the engine. */
uint16_t lrx_tcp_rcv_drop(struct lrx_tcp_rcv *t, struct rte_mbuf **pkts,
			  enum lrx_tcp_drop *reasons, uint16_t max);
/* Mbufs held: queued, held by the application, read or dropped and not
 * yet handed over. */
uint32_t lrx_tcp_rcv_held(const struct lrx_tcp_rcv *t);
/* bytes_in - (read + queued + dropped + dup): 0 when every byte is
 * accounted for (the invariant the tests check). */
int64_t lrx_tcp_rcv_bytes_balance(const struct lrx_tcp_rcv *t);

#endif
