/* SPDX-License-Identifier: BSD-3-Clause
 * The sink: where packets end up after the pipeline. Engines append each
 * packet that leaves the pipeline (delivered, dropped with a reason, sent
 * to a port) with its final next, in the order it left; the poll loop then
 * completes the sink once per poll (TX bursts per port, frees, counters).
 * Tests read the sink before completing it to compare engines.
 */
#ifndef LISTRX_SINK_H
#define LISTRX_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "stage.h"

/* A poll emits at most its burst plus what stages held and released. */
#define LRX_SINK_MAX (4 * LRX_BURST_MAX)

struct lrx_capture;  /* capture.h */
struct lrx_pipeline; /* pipeline.h */

struct lrx_sink {
	uint32_t n;
	/* --capture-drops / --capture-delivered; NULL = off (one test per
	 * completion, none per packet) */
	struct lrx_capture *capture_drops;
	struct lrx_capture *capture_delivered;
	const struct lrx_pipeline *pipeline; /* names the stage of a drop */
	struct rte_mbuf *pkts[LRX_SINK_MAX];
	/* so that nexts[0] does not share an L1d set with pkts[0] (the
	 * arrays are multiples of 4 KiB): a poll at burst 64 fills both
	 * arrays' first lines (engine_scratch_layout does the same for the
	 * engines' arrays) */
	uint8_t set_stagger[2 * 64 * sizeof(struct rte_mbuf *)];
	lrx_next_t nexts[LRX_SINK_MAX];
};

/* Counters the sink completion adds to (per lcore). */
struct lrx_sink_counters {
	uint64_t delivered;
	uint64_t tx;             /* accepted by rte_eth_tx_burst */
	uint64_t tx_failed;      /* TX ring full: freed, also counted as drop */
	uint64_t dropped;        /* all drops, any reason */
	uint64_t drops[LRX_DROP_MAX];
	/* [run] tx_clean rx-poll / tx-poll: the poll's cleaning of TX
	 * completions (rte_eth_tx_done_cleanup) */
	uint64_t tx_clean_calls; /* queues cleaned */
	uint64_t tx_cleaned;     /* mbufs they freed */
	uint64_t tx_clean_busy;  /* rx-poll: the queue's lock was held, left */
};

/* Who frees the mbufs a TX queue holds once sent ([run] tx_clean;
 * docs/config.md): the driver as it does by itself, the driver on transmit
 * only (free_old_xmit_skbs in virtio-net's start_xmit before TX NAPI), the
 * RX poll before it receives (virtnet_poll_cleantx: the TX queue paired
 * with the RX queue, under a trylock), or a TX poll every N polls
 * (virtnet_poll_tx, TX NAPI's own interrupt). */
enum lrx_tx_clean {
	LRX_TX_CLEAN_DRIVER,
	LRX_TX_CLEAN_XMIT,
	LRX_TX_CLEAN_RX_POLL,
	LRX_TX_CLEAN_TX_POLL,
};
extern const char *const lrx_tx_clean_names[]; /* NULL-terminated, by enum */

static inline void lrx_sink_put(struct lrx_sink *sink, struct rte_mbuf *pkt,
				lrx_next_t next)
{
	/* Capacity is a bound of the engines (burst + released); checked in
	 * debug builds, proven by the engine tests. */
	RTE_ASSERT(sink->n < LRX_SINK_MAX);
	sink->pkts[sink->n] = pkt;
	sink->nexts[sink->n] = next;
	sink->n++;
}

/* Frees n mbufs (none NULL). When every one is what a receive queue hands
 * out (direct, one segment, reference count 1, one pool) they go back to
 * the pool in one rte_mempool_put_bulk, as a PMD's MBUF_FAST_FREE transmit
 * path returns them: that is what rte_pktmbuf_free_bulk ends in, without
 * its per-mbuf prefree and pending-array copy (half the empty pipeline's
 * instructions on net_null). Anything else (a clone, an external buffer,
 * a chain, a shared reference, a second pool) takes rte_pktmbuf_free_bulk,
 * which detaches, follows chains and drops references. */
static inline void lrx_mbuf_free_burst(struct rte_mbuf **pkts, unsigned n)
{
	if (unlikely(n == 0))
		return;
	struct rte_mempool *pool = pkts[0]->pool;
	uint64_t odd = 0; /* branch-free, one test at the end */
	for (unsigned i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		odd |= (m->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL)) |
		       (uint64_t)(m->pool != pool) |
		       (uint64_t)(rte_mbuf_refcnt_read(m) != 1) |
		       (uint64_t)(m->nb_segs != 1) | (uint64_t)(m->next != NULL);
	}
	if (likely(odd == 0))
		rte_mempool_put_bulk(pool, (void **)pkts, n);
	else
		rte_pktmbuf_free_bulk(pkts, n);
}

/* Sends, frees and counts everything in the sink, then empties it.
 * TX to a port that is not started/does not exist is a drop (TC_EGRESS).
 * tx_queue: this lcore's TX queue (its index among the polling lcores). */
void lrx_sink_complete(struct lrx_sink *sink, uint16_t tx_queue,
		       struct lrx_sink_counters *counters);

/* Marks a port as started by listrx with tx_queues TX queues for `lcores`
 * polling lcores (the port layer calls it after rte_eth_dev_start, and
 * with 0 queues before stopping); TX and REDIRECT to any other port are
 * TC_EGRESS drops. Lcore i sends on queue i % tx_queues; with fewer queues
 * than lcores, or `locked` (the poll cleans TX queues: another lcore may
 * clean this one), each queue gets a lock, taken around each transmit as
 * the kernel's HARD_TX_LOCK. 0, or -ENOMEM (the locks). */
int lrx_sink_port_ready(uint16_t port, uint16_t tx_queues, unsigned lcores, bool locked);

/* Frees what TX queue `queue` of `port` holds once sent
 * (rte_eth_tx_done_cleanup, all of it) under the queue's lock: taken
 * (try_only false: virtnet_poll_tx's __netif_tx_lock), or tried (try_only true:
 * virtnet_poll_cleantx's __netif_tx_trylock: a queue another lcore is
 * sending on or cleaning is left to it, counted in tx_clean_busy). A port
 * that is not ready, or has no such queue, is left alone. Returns the
 * mbufs freed, or a driver's -errno. */
int lrx_sink_tx_clean(uint16_t port, uint16_t queue, bool try_only, struct lrx_sink_counters *counters);

/* The TX poll: lrx_sink_tx_clean of this lcore's queue (tx_queue, as
 * lrx_sink_complete sends on) of every ready port, the lock taken. */
void lrx_sink_tx_poll(uint16_t tx_queue, struct lrx_sink_counters *counters);

/* Frees everything in the sink without sending (tests, teardown). */
void lrx_sink_discard(struct lrx_sink *sink);

#endif
