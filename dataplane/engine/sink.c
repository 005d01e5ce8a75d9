/* SPDX-License-Identifier: BSD-3-Clause
 * Completing the sink once per poll: TX bursts per port (order within a
 * port kept), one bulk free for everything delivered, dropped or refused,
 * counters by reason.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_spinlock.h>

#include "capture.h"
#include "pipeline.h"
#include "sink.h"

/* Ports listrx opened and started, with their TX queues. A port that
 * DPDK knows but listrx did not open (or has stopped) has none of ours,
 * and rte_eth_tx_burst on it is undefined. A port with fewer TX queues
 * than polling lcores has a lock per queue, taken around each transmit:
 * lcore i sends on queue i % tx_queues, as VPP shares a device's queues
 * among more threads (the kernel's HARD_TX_LOCK); so does every queue
 * when the poll cleans TX queues ([run] tx_clean), which another lcore's
 * RX poll may do. */
struct sink_tx_lock {
	rte_spinlock_t lock;
} __rte_cache_aligned;

struct sink_port {
	uint16_t tx_queues;            /* 0: not ready */
	struct sink_tx_lock *locks;    /* NULL: one queue per lcore, no lock */
};

static struct sink_port sink_ports[RTE_MAX_ETHPORTS];
/* the ready ports' ids, for the TX poll */
static uint16_t ready_ports[RTE_MAX_ETHPORTS];
static unsigned n_ready_ports;

const char *const lrx_tx_clean_names[] = {
	[LRX_TX_CLEAN_DRIVER] = "driver", [LRX_TX_CLEAN_XMIT] = "xmit",
	[LRX_TX_CLEAN_RX_POLL] = "rx-poll", [LRX_TX_CLEAN_TX_POLL] = "tx-poll", NULL};

static void ready_ports_update(uint16_t port, bool ready)
{
	unsigned keep = 0;
	for (unsigned i = 0; i < n_ready_ports; i++)
		if (ready_ports[i] != port)
			ready_ports[keep++] = ready_ports[i];
	n_ready_ports = keep;
	if (ready)
		ready_ports[n_ready_ports++] = port;
}

int lrx_sink_port_ready(uint16_t port, uint16_t tx_queues, unsigned lcores, bool locked)
{
	if (port >= RTE_MAX_ETHPORTS)
		return -EINVAL;
	struct sink_port *sp = &sink_ports[port];
	rte_free(sp->locks);
	*sp = (struct sink_port){0};
	ready_ports_update(port, false);
	if (tx_queues != 0 && (lcores > tx_queues || locked)) {
		sp->locks = rte_zmalloc("listrx_tx_locks", sizeof(*sp->locks) * tx_queues,
					RTE_CACHE_LINE_SIZE);
		if (!sp->locks)
			return -ENOMEM;
		for (uint16_t q = 0; q < tx_queues; q++)
			rte_spinlock_init(&sp->locks[q].lock);
	}
	sp->tx_queues = tx_queues;
	if (tx_queues != 0)
		ready_ports_update(port, true);
	return 0;
}

int lrx_sink_tx_clean(uint16_t port, uint16_t queue, bool try_only, struct lrx_sink_counters *counters)
{
	if (port >= RTE_MAX_ETHPORTS || queue >= sink_ports[port].tx_queues)
		return 0;
	const struct sink_port *sp = &sink_ports[port];
	if (sp->locks) {
		if (!try_only) {
			rte_spinlock_lock(&sp->locks[queue].lock);
		} else if (!rte_spinlock_trylock(&sp->locks[queue].lock)) {
			counters->tx_clean_busy++;
			return 0;
		}
	}
	int freed = rte_eth_tx_done_cleanup(port, queue, 0);
	if (sp->locks)
		rte_spinlock_unlock(&sp->locks[queue].lock);
	counters->tx_clean_calls++;
	counters->tx_cleaned += freed > 0 ? (unsigned)freed : 0;
	return freed;
}

void lrx_sink_tx_poll(uint16_t tx_queue, struct lrx_sink_counters *counters)
{
	for (unsigned i = 0; i < n_ready_ports; i++) {
		const uint16_t port = ready_ports[i];
		const uint16_t queues = sink_ports[port].tx_queues;
		lrx_sink_tx_clean(port, tx_queue < queues ? tx_queue : tx_queue % queues, false,
				  counters);
	}
}

static inline bool sink_port_ready(uint32_t port)
{
	return port < RTE_MAX_ETHPORTS && sink_ports[port].tx_queues != 0;
}

static inline void sink_count_drop(struct lrx_sink_counters *c,
				   uint32_t reason)
{
	c->dropped++;
	c->drops[reason < LRX_DROP_MAX ? reason : LRX_DROP_NOT_SPECIFIED]++;
}

static void sink_capture_drop(struct lrx_sink *sink, const struct rte_mbuf *m,
			      uint32_t reason, const char *where)
{
	char comment[128];
	snprintf(comment, sizeof(comment), "listrx: drop %s at %s, port %u",
		 lrx_drop_reason_name(reason < LRX_DROP_MAX ? reason : LRX_DROP_NOT_SPECIFIED),
		 where, m->port);
	lrx_capture_packet(sink->capture_drops, m, comment);
}

/* The packets of the sink as they will be counted by lrx_sink_complete
 * (TX to a port that is not ready is a TC_EGRESS drop; a full TX ring is
 * captured where it happens). */
static void sink_capture(struct lrx_sink *sink)
{
	for (uint32_t i = 0; i < sink->n; i++) {
		const struct rte_mbuf *m = sink->pkts[i];
		lrx_next_t next = sink->nexts[i];
		uint32_t arg = lrx_next_arg(next);
		char comment[128];

		switch (lrx_next_kind(next)) {
		case LRX_NEXT_TX:
		case LRX_NEXT_REDIRECT:
			if (sink->capture_drops && !sink_port_ready(arg))
				sink_capture_drop(sink, m, LRX_DROP_TC_EGRESS, "tx");
			break;
		case LRX_NEXT_DROP:
			if (sink->capture_drops) {
				const char *stage = sink->pipeline
					? lrx_pipeline_drop_stage(sink->pipeline, m) : NULL;
				sink_capture_drop(sink, m, arg, stage ? stage : "pipeline");
			}
			break;
		case LRX_NEXT_DELIVER:
		case LRX_NEXT_CONTINUE:
			if (sink->capture_delivered) {
				snprintf(comment, sizeof(comment), "listrx: delivered, port %u",
					 m->port);
				lrx_capture_packet(sink->capture_delivered, m, comment);
			}
			break;
		default:
			if (sink->capture_drops)
				sink_capture_drop(sink, m, LRX_DROP_NOT_SPECIFIED, "sink");
			break;
		}
	}
}

/* Nothing to send: everything is freed, so only the counts depend on the
 * verdicts. Without a branch per packet (the drops among the delivered are
 * where a switch mispredicts): the drops' verdicts are gathered, then
 * counted by reason. */
static __rte_always_inline void sink_complete_local(struct lrx_sink *sink, uint32_t n,
						     struct lrx_sink_counters *counters)
{
	lrx_next_t drops[LRX_SINK_MAX];
	uint32_t n_drop = 0;
	for (uint32_t i = 0; i < n; i++) {
		const lrx_next_t next = sink->nexts[i];
		const enum lrx_next_kind k = lrx_next_kind(next);
		drops[n_drop] = next;
		n_drop += k != LRX_NEXT_DELIVER && k != LRX_NEXT_CONTINUE;
	}
	/* a DROP's reason; anything else (CONSUMED never reaches the sink)
	 * NOT_SPECIFIED, as sink_sort */
	for (uint32_t j = 0; j < n_drop; j++)
		sink_count_drop(counters, lrx_next_kind(drops[j]) == LRX_NEXT_DROP
						  ? lrx_next_arg(drops[j])
						  : (uint32_t)LRX_DROP_NOT_SPECIFIED);
	counters->delivered += n - n_drop;
	lrx_mbuf_free_burst(sink->pkts, n);
}

/* Each packet to send (to_send, send_port) or to free: what is freed is
 * compacted in place at the front of sink->pkts (n_free <= i), no copy
 * into a second array of the burst's size, whose lines would be one more
 * thing a poll writes. Returns n_free; *n_send the packets to send. */
static uint32_t sink_sort(struct lrx_sink *sink, struct rte_mbuf **to_send, uint16_t *send_port,
			  uint32_t *n_send, struct lrx_sink_counters *counters)
{
	struct rte_mbuf **to_free = sink->pkts;
	uint32_t n_free = 0;
	for (uint32_t i = 0; i < sink->n; i++) {
		struct rte_mbuf *m = sink->pkts[i];
		lrx_next_t next = sink->nexts[i];
		uint32_t arg = lrx_next_arg(next);

		switch (lrx_next_kind(next)) {
		case LRX_NEXT_TX:
		case LRX_NEXT_REDIRECT:
			if (sink_port_ready(arg)) {
				send_port[*n_send] = (uint16_t)arg;
				to_send[(*n_send)++] = m;
				continue;
			}
			/* as a redirect to a device that is gone or down
			 * (not one listrx started) */
			sink_count_drop(counters, LRX_DROP_TC_EGRESS);
			break;
		case LRX_NEXT_DROP:
			sink_count_drop(counters, arg);
			break;
		case LRX_NEXT_DELIVER:
		case LRX_NEXT_CONTINUE: /* past the last stage */
			counters->delivered++;
			break;
		default: /* CONSUMED never reaches the sink; be safe */
			sink_count_drop(counters, LRX_DROP_NOT_SPECIFIED);
			break;
		}
		to_free[n_free++] = m;
	}
	return n_free;
}

/* One rte_eth_tx_burst per port, in order of first appearance; the
 * packets of one port keep their sink order. What a full TX ring refuses
 * is a drop (DEV_READY), appended to to_free. Returns the new n_free. */
static uint32_t sink_transmit(struct lrx_sink *sink, struct rte_mbuf **to_send,
			      uint16_t *send_port, uint32_t n_send, uint16_t tx_queue,
			      struct lrx_sink_counters *counters, uint32_t n_free)
{
	struct rte_mbuf **to_free = sink->pkts;
	while (n_send != 0) {
		uint16_t port = send_port[0];
		struct rte_mbuf *burst[LRX_SINK_MAX];
		uint32_t n = 0, keep = 0;

		/* take this port's packets, keep the others (in order) */
		for (uint32_t i = 0; i < n_send; i++) {
			if (send_port[i] == port) {
				burst[n++] = to_send[i];
			} else {
				send_port[keep] = send_port[i];
				to_send[keep++] = to_send[i];
			}
		}
		const struct sink_port *sp = &sink_ports[port];
		const uint16_t queue = tx_queue < sp->tx_queues ? tx_queue
								: tx_queue % sp->tx_queues;
		if (sp->locks)
			rte_spinlock_lock(&sp->locks[queue].lock);
		uint32_t sent = 0;
		while (sent < n) {
			uint16_t chunk = (uint16_t)RTE_MIN(n - sent, (uint32_t)UINT16_MAX);
			uint16_t ok = rte_eth_tx_burst(port, queue, burst + sent, chunk);
			sent += ok;
			if (ok < chunk)
				break;
		}
		if (sp->locks)
			rte_spinlock_unlock(&sp->locks[queue].lock);
		counters->tx += sent;
		for (uint32_t i = sent; i < n; i++) {
			counters->tx_failed++;
			sink_count_drop(counters, LRX_DROP_DEV_READY);
			if (unlikely(sink->capture_drops != NULL))
				sink_capture_drop(sink, burst[i], LRX_DROP_DEV_READY, "tx");
			to_free[n_free++] = burst[i];
		}
		n_send = keep;
	}
	return n_free;
}

void lrx_sink_complete(struct lrx_sink *sink, uint16_t tx_queue,
		       struct lrx_sink_counters *counters)
{
	if (unlikely(sink->capture_drops != NULL || sink->capture_delivered != NULL))
		sink_capture(sink);

	/* the common case, everything delivered: one bulk free, no copy */
	const uint32_t n = sink->n;
	lrx_next_t differ = 0; /* branch-free, so the scan vectorises */
	uint32_t sends = 0;
	static_assert(LRX_NEXT_REDIRECT == (LRX_NEXT_TX | 1),
		      "TX and REDIRECT differ in the lowest bit only");
	for (uint32_t i = 0; i < n; i++) {
		differ |= sink->nexts[i] ^ LRX_NEXT_DELIVER_V;
		sends |= (lrx_next_kind(sink->nexts[i]) & ~1u) == LRX_NEXT_TX;
	}
	if (differ == 0) {
		if (n != 0)
			lrx_mbuf_free_burst(sink->pkts, n);
		counters->delivered += n;
	} else if (sends == 0) {
		sink_complete_local(sink, n, counters);
	} else {
		struct rte_mbuf *to_send[LRX_SINK_MAX];
		uint16_t send_port[LRX_SINK_MAX];
		uint32_t n_send = 0;
		uint32_t n_free = sink_sort(sink, to_send, send_port, &n_send, counters);
		n_free = sink_transmit(sink, to_send, send_port, n_send, tx_queue, counters,
				       n_free);
		if (n_free != 0)
			lrx_mbuf_free_burst(sink->pkts, n_free);
	}
	sink->n = 0;
}

void lrx_sink_discard(struct lrx_sink *sink)
{
	if (sink->n != 0)
		lrx_mbuf_free_burst(sink->pkts, sink->n);
	sink->n = 0;
}
