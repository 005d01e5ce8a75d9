/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_synth: an emulated NIC as a DPDK ethdev vdev.
 *
 * RX hands out frames from per-queue schedules of pre-built frames
 * (synth_gen.c). Two ways to fill an mbuf:
 *  - copy=1: an mbuf from the application's pool, the whole frame copied in.
 *  - copy=0: an mbuf from the queue's own "pre-built" pool, whose buffers
 *    were filled once with the payload pattern when the pool was created;
 *    only the frame's first 64 (or 128) bytes are rewritten per hand-out,
 *    and the mbuf header is initialised with three stores the way vector
 *    PMDs do (rearm_data, ol_flags, rx_descriptor_fields1) instead of
 *    rte_pktmbuf_reset(). Header edits made by the application (MAC swap,
 *    TTL, checksums) are therefore undone at the next hand-out; payload
 *    edits beyond the head are not (docs/net_synth.md says so).
 *
 * TX holds transmitted mbufs on a completion ring (the TX ring); they are
 * freed in bulk at the next RX poll of the queue with the same index, as a
 * NIC driver cleans its TX ring from the RX NAPI poll (ixgbe_poll ->
 * ixgbe_clean_tx_irq), unless the application turned that off
 * (rte_pmd_synth_set_rx_clean): then, as in a DPDK PMD, they stay until
 * rte_eth_tx_done_cleanup, a transmit below tx_free_thresh, or stop.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mbuf_dyn.h>
#include <rte_memcpy.h>

#if defined(RTE_ARCH_X86)
#include <immintrin.h>
#endif

#include "mbuf_pool.h"
#include "rte_pmd_synth.h"
#include "synth.h"
#include "synth_abi.h"

static_assert(offsetof(struct synth_frame, rss) == 12,
	      "synth_frame starts with the mbuf rx_descriptor_fields1 layout");
static_assert(offsetof(struct rte_mbuf, pkt_len) -
			      offsetof(struct rte_mbuf, rx_descriptor_fields1) == 4 &&
		      offsetof(struct rte_mbuf, hash) -
			      offsetof(struct rte_mbuf, rx_descriptor_fields1) == 12,
	      "mbuf rx_descriptor_fields1 layout");

static const uint8_t synth_default_rss_key[SYNTH_RSS_KEY_LEN] = {
	/* the Microsoft RSS verification key most NICs ship as default */
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

static const struct rte_ether_addr synth_mac = {
	.addr_bytes = {0x02, 0x53, 0x59, 0x4e, 0x54, 0x48}};

static const char *const kind_names[] = {
#define SYNTH_KIND_NAME(name) #name,
	SYNTH_KINDS(SYNTH_KIND_NAME)
#undef SYNTH_KIND_NAME
};
static const char *const rxc_names[] = {
#define SYNTH_RXC_NAME(name) #name,
	SYNTH_RXQ_COUNTERS(SYNTH_RXC_NAME)
#undef SYNTH_RXC_NAME
};
static const char *const txc_names[] = {
#define SYNTH_TXC_NAME(name) #name,
	SYNTH_TXQ_COUNTERS(SYNTH_TXC_NAME)
#undef SYNTH_TXC_NAME
};

static inline struct synth_device *synth_dev(struct rte_eth_dev *eth_dev)
{
	return eth_dev->data->dev_private;
}

/* ---- TX completion ---- */

static unsigned synth_recycle(struct rte_mbuf **m, unsigned n, bool bulk)
{
	if (bulk) {
		/* one pool put per run of same-pool mbufs (page_pool bulk) */
		rte_pktmbuf_free_bulk(m, n);
		return 1;
	}
	for (unsigned i = 0; i < n; i++)
		rte_pktmbuf_free(m[i]);
	return n;
}

/* Frees up to max completed TX mbufs; returns how many, and the number of
 * pool returns in *calls. */
static unsigned synth_tx_reap(struct synth_tx_queue *t, unsigned max,
			      uint64_t *calls)
{
	struct rte_mbuf *done[SYNTH_REAP_MAX];
	unsigned total = 0;
	while (total < max) {
		unsigned want = RTE_MIN(max - total, (unsigned)SYNTH_REAP_MAX);
		unsigned n = rte_ring_mc_dequeue_burst(t->completions,
						       (void **)done, want, NULL);
		if (n == 0)
			break;
		*calls += synth_recycle(done, n, t->recycle_bulk);
		total += n;
	}
	return total;
}

/* ---- RX ---- */

static inline uint16_t synth_rate_admit(struct synth_rx_queue *q, uint16_t nb)
{
	uint64_t hz = rte_get_tsc_hz();
	uint64_t now = rte_rdtsc();
	uint64_t dt = now - q->rate_last;
	uint64_t max_credit = q->rate_depth * hz;
	q->rate_last = now;
	if (dt >= max_credit / q->rate_pps)
		q->rate_credit = max_credit;
	else
		q->rate_credit = RTE_MIN(q->rate_credit + dt * q->rate_pps, max_credit);
	uint64_t allowed = q->rate_credit / hz;
	if (allowed < nb) {
		nb = (uint16_t)allowed;
		q->counters[SYNTH_KIND_MAX + SYNTH_RXC_rate_limited_polls]++;
	}
	q->rate_credit -= (uint64_t)nb * hz;
	return nb;
}

static inline void synth_stream_copy(uint8_t *dst, const uint8_t *src,
				     uint32_t len)
{
#if defined(RTE_ARCH_X86)
	/* non-temporal: the line leaves the cache, as after a device DMA */
	for (uint32_t o = 0; o < len; o += 8) {
		long long v;
		memcpy(&v, src + o, 8);
		_mm_stream_si64((long long *)(void *)(dst + o), v);
	}
#else
	memcpy(dst, src, len);
#endif
}

static __rte_always_inline void
synth_rx_fill(struct synth_rx_queue *q, struct rte_mbuf *m,
	      const struct synth_frame *f, bool copy, bool cold)
{
	uint8_t *dst = (uint8_t *)m->buf_addr + (uint16_t)q->mbuf_initializer;
	const uint8_t *head = q->heads + f->head_off;
	memcpy((char *)m + offsetof(struct rte_mbuf, rx_descriptor_fields1), f, 16);
	m->ol_flags = f->ol_flags;
	if (cold) {
		synth_stream_copy(dst, head, f->head_len);
	} else if (copy) {
		rte_memcpy(dst, head, f->head_len);
		if (f->pkt_len > f->head_len)
			rte_memcpy(dst + f->head_len, q->pattern + f->head_len,
				   f->pkt_len - f->head_len);
	} else if (f->head_len == 64) {
		memcpy(dst, head, 64);
	} else {
		rte_memcpy(dst, head, f->head_len);
	}
}

/* The injected faults of a poll: a stall (stall_ms: the first poll spins,
 * as a driver stuck in rx_burst would), then link down (link_down_ms:
 * nothing arrives). True when the poll returns nothing. */
static __rte_noinline bool synth_rx_fault(struct synth_rx_queue *q)
{
	if (q->stall_cycles) {
		const uint64_t until = rte_rdtsc() + q->stall_cycles;
		q->stall_cycles = 0;
		while (rte_rdtsc() < until)
			rte_pause();
		q->faults = q->link_down_from != 0;
	}
	/* link down (link_down_ms): nothing arrives */
	const uint64_t now = rte_rdtsc();
	return q->link_down_from != 0 && now >= q->link_down_from &&
	       now < q->link_down_until;
}

static __rte_always_inline uint16_t
synth_rx_common(void *queue, struct rte_mbuf **bufs, uint16_t nb, bool copy,
		bool cold, bool tcp, bool count_kinds)
{
	struct synth_rx_queue *q = queue;
	uint64_t *cnt = q->counters + SYNTH_KIND_MAX;

	if (q->paired_tx && rte_ring_count(q->paired_tx->completions)) {
		unsigned n = synth_tx_reap(q->paired_tx, SYNTH_REAP_MAX,
					   &cnt[SYNTH_RXC_tx_recycle_calls]);
		cnt[SYNTH_RXC_tx_completions_reaped] += n;
	}
	if (unlikely(q->faults) && synth_rx_fault(q))
		return 0;
	if (unlikely(q->rate_pps))
		nb = synth_rate_admit(q, nb);
	if (unlikely(nb == 0 || (tcp ? q->nb_tcp_flows : q->nb_frames) == 0))
		return 0;
	if (unlikely(rte_mempool_get_bulk(q->pool, (void **)bufs, nb) != 0)) {
		cnt[SYNTH_RXC_nombuf] += nb;
		return 0;
	}
	uint64_t bytes = 0;
	uint64_t ts = q->timestamp ? rte_rdtsc() : 0;
	uint32_t next = q->next;
	for (uint16_t i = 0; i < nb; i++) {
		struct rte_mbuf *m = bufs[i];
		/* pool invariant: next == NULL, nb_segs == 1, refcnt == 1 */
		*(uint64_t *)(void *)((char *)m + offsetof(struct rte_mbuf,
						    rearm_data)) = q->mbuf_initializer;
		if (tcp) {
			bytes += synth_tcp_fill(q, m);
		} else {
			const struct synth_frame *f = &q->frames[next];
			next = next + 1 == q->nb_frames ? 0 : next + 1;
			synth_rx_fill(q, m, f, copy, cold);
			bytes += f->pkt_len;
			if (count_kinds)
				q->counters[f->kind]++;
		}
		if (q->timestamp) {
			*RTE_MBUF_DYNFIELD(m, q->ts_offset, rte_mbuf_timestamp_t *) = ts;
			m->ol_flags |= q->ts_flag;
		}
	}
	q->next = next;
#if defined(RTE_ARCH_X86)
	if (cold)
		_mm_sfence();
#endif
	if (!count_kinds)
		q->counters[SYNTH_KIND_normal] += nb;
	cnt[SYNTH_RXC_packets] += nb;
	cnt[SYNTH_RXC_bytes] += bytes;
	return nb;
}

static uint16_t synth_rx_prebuilt(void *q, struct rte_mbuf **b, uint16_t n)
{
	return synth_rx_common(q, b, n, false, false, false, false);
}
static uint16_t synth_rx_prebuilt_cold(void *q, struct rte_mbuf **b, uint16_t n)
{
	return synth_rx_common(q, b, n, false, true, false, false);
}
static uint16_t synth_rx_copy(void *q, struct rte_mbuf **b, uint16_t n)
{
	return synth_rx_common(q, b, n, true, false, false, false);
}
static uint16_t synth_rx_mixed(void *q, struct rte_mbuf **b, uint16_t n)
{
	struct synth_rx_queue *rq = q;
	return rq->copy ? synth_rx_common(q, b, n, true, false, false, true) :
	       rq->cold ? synth_rx_common(q, b, n, false, true, false, true) :
			  synth_rx_common(q, b, n, false, false, false, true);
}
static uint16_t synth_rx_tcp(void *q, struct rte_mbuf **b, uint16_t n)
{
	return synth_rx_common(q, b, n, false, false, true, false);
}

/* ---- TX ---- */

static uint16_t synth_tx_burst(void *queue, struct rte_mbuf **bufs, uint16_t nb)
{
	struct synth_tx_queue *t = queue;
	unsigned space = rte_ring_free_count(t->completions);
	if (unlikely(space < nb || space < t->free_thresh)) {
		/* clean on the xmit path: below tx_free_thresh everything
		 * completed (virtio-net's free_old_xmit_skbs in start_xmit;
		 * ixgbe_xmit_pkts below its tx_free_thresh), else what the
		 * burst needs to fit */
		unsigned want = space < t->free_thresh ? UINT32_MAX : nb - space;
		t->counters[SYNTH_TXC_completion_freed] +=
			synth_tx_reap(t, want, &t->counters[SYNTH_TXC_recycle_calls]);
		t->counters[SYNTH_TXC_clean_on_xmit]++;
	}
	uint16_t n = (uint16_t)rte_ring_sp_enqueue_burst(t->completions,
							 (void **)bufs, nb, NULL);
	uint64_t bytes = 0;
	FILE *pcap = t->dev->tx_pcap;
	for (uint16_t i = 0; i < n; i++) {
		bytes += bufs[i]->pkt_len;
		if (unlikely(pcap != NULL))
			synth_pcap_write_frame(pcap, bufs[i]);
	}
	if (unlikely(pcap != NULL))
		t->counters[SYNTH_TXC_pcap_frames] += n;
	t->counters[SYNTH_TXC_packets] += n;
	t->counters[SYNTH_TXC_bytes] += bytes;
	t->counters[SYNTH_TXC_completion_queued] += n;
	return n;
}

static int synth_tx_done_cleanup(void *queue, uint32_t free_cnt)
{
	struct synth_tx_queue *t = queue;
	unsigned n = synth_tx_reap(t, free_cnt ? free_cnt : UINT32_MAX,
				   &t->counters[SYNTH_TXC_recycle_calls]);
	t->counters[SYNTH_TXC_done_cleanup_freed] += n;
	t->counters[SYNTH_TXC_completion_freed] += n;
	return (int)n;
}

/* ---- queues ---- */

struct prefill_arg {
	const uint8_t *pattern;
	uint32_t len;
};

static void synth_prefill(struct rte_mempool *mp, void *opaque, void *obj,
			  unsigned idx)
{
	(void)mp;
	(void)idx;
	const struct prefill_arg *a = opaque;
	struct rte_mbuf *m = obj;
	uint32_t room = m->buf_len - RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, m->buf_len);
	memcpy((uint8_t *)m->buf_addr + RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, m->buf_len),
	       a->pattern, RTE_MIN(a->len, room));
}

static uint64_t synth_llc_bytes(void)
{
	long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
	return llc > 0 ? (uint64_t)llc : 32ull << 20;
}

/* Buffers in a shuffled order, so that consecutive packets' data are at
 * addresses no prefetcher predicts (cold=1). The pool has no cache and its
 * ring is FIFO, so the order survives every get/put cycle. */
static int synth_shuffle_pool(struct rte_mempool *mp, uint64_t seed)
{
	unsigned n = rte_mempool_avail_count(mp);
	void **objs = malloc(n * sizeof(void *));
	if (!objs)
		return -ENOMEM;
	if (rte_mempool_get_bulk(mp, objs, n) != 0) {
		free(objs);
		return -ENOMEM;
	}
	for (unsigned k = n - 1; k > 0; k--) {
		unsigned j = (unsigned)(synth_splitmix64(&seed) % (k + 1));
		void *tmp = objs[k];
		objs[k] = objs[j];
		objs[j] = tmp;
	}
	for (unsigned i = 0; i < n; i++)
		rte_mempool_put(mp, objs[i]);
	free(objs);
	return 0;
}

static void synth_rx_queue_free(struct synth_rx_queue *q)
{
	if (!q)
		return;
	if (q->prebuilt) {
		unsigned out = rte_mempool_in_use_count(q->prebuilt);
		if (out == 0)
			rte_mempool_free(q->prebuilt);
		else
			RTE_LOG(WARNING, PMD,
				"%s: rx queue %u: %u pre-built mbufs still held "
				"by the application; their pool is kept\n",
				SYNTH_DRIVER_NAME, q->queue_id, out);
	}
	rte_free(q->frames_mem);
	rte_free(q->heads_mem);
	rte_free(q->tcp_flows);
	rte_free(q);
}

static void synth_rx_queue_release(struct rte_eth_dev *eth_dev, uint16_t qid)
{
	struct synth_device *dev = synth_dev(eth_dev);
	synth_rx_queue_free(dev->rxq[qid]);
	dev->rxq[qid] = NULL;
	eth_dev->data->rx_queues[qid] = NULL;
}

static int synth_create_prebuilt(struct synth_device *dev,
				 struct synth_rx_queue *q, unsigned socket)
{
	static unsigned generation;
	char name[RTE_MEMPOOL_NAMESIZE];
	uint16_t room = rte_pktmbuf_data_room_size(q->app_pool);
	uint16_t priv = rte_pktmbuf_priv_size(q->app_pool);
	/* at least the queue's share of the application's pool: what it
	 * sized for the packets its stages hold between polls (socket
	 * queues) must not run dry here first */
	const unsigned nrxq = RTE_MAX(dev->nb_rxq, (uint16_t)1);
	unsigned n = RTE_MAX(RTE_MAX(4096u, 4u * q->nb_desc),
			     (q->app_pool->size + nrxq - 1) / nrxq);
	unsigned cache = 256;
	if (dev->opt.cold) {
		uint64_t bytes = dev->opt.cold_mb ? (uint64_t)dev->opt.cold_mb << 20 :
						    4 * synth_llc_bytes();
		uint64_t elt = sizeof(struct rte_mbuf) + priv + room;
		n = (unsigned)RTE_MAX((uint64_t)n, bytes / elt);
		cache = 0;
	}
	snprintf(name, sizeof(name), "synth%u_q%u_%u", dev->port_id, q->queue_id,
		 __atomic_fetch_add(&generation, 1, __ATOMIC_RELAXED));
	q->prebuilt = lrx_mbuf_pool_create(name, n, cache, priv, room, (int)socket);
	if (!q->prebuilt) {
		RTE_LOG(ERR, PMD,
			"%s: rx queue %u: cannot create the pre-built pool of "
			"%u mbufs (copy=0): %s\n", SYNTH_DRIVER_NAME,
			q->queue_id, n, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	struct prefill_arg a = {dev->pattern, RTE_MIN((uint32_t)SYNTH_MAX_FRAME,
						      synth_max_frame_len(dev) + 64)};
	rte_mempool_obj_iter(q->prebuilt, synth_prefill, &a);
	if (dev->opt.cold)
		return synth_shuffle_pool(q->prebuilt, dev->opt.seed + q->queue_id);
	return 0;
}

static int synth_rx_queue_setup(struct rte_eth_dev *eth_dev, uint16_t qid,
				uint16_t nb_desc, unsigned int socket,
				const struct rte_eth_rxconf *conf,
				struct rte_mempool *mb_pool)
{
	(void)conf;
	struct synth_device *dev = synth_dev(eth_dev);
	if (dev->rxq[qid])
		synth_rx_queue_release(eth_dev, qid);
	struct synth_rx_queue *q = rte_zmalloc_socket("synth_rxq", sizeof(*q),
						      RTE_CACHE_LINE_SIZE, (int)socket);
	if (!q)
		return -ENOMEM;
	q->dev = dev;
	q->queue_id = qid;
	q->nb_desc = nb_desc;
	q->app_pool = mb_pool;
	q->copy = dev->opt.copy;
	q->cold = dev->opt.cold;
	q->pattern = dev->pattern;
	uint16_t room = rte_pktmbuf_data_room_size(mb_pool);
	uint16_t headroom = RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, room);
	uint16_t usable = room - headroom;
	int rc = -EINVAL;
	if (usable < SYNTH_HEAD_MAX) {
		RTE_LOG(ERR, PMD,
			"%s: rx queue %u: mempool %s has %u data bytes after "
			"headroom; net_synth needs at least %u\n",
			SYNTH_DRIVER_NAME, qid, mb_pool->name, usable,
			SYNTH_HEAD_MAX);
		goto fail;
	}
	rc = dev->opt.profile == SYNTH_PROFILE_TCP_STREAM ?
		     synth_build_tcp_flows(dev, q, usable) :
		     synth_build_schedule(dev, q, usable);
	if (rc)
		goto fail;
	if (!q->copy) {
		rc = synth_create_prebuilt(dev, q, socket);
		if (rc)
			goto fail;
	}
	q->pool = q->copy ? mb_pool : q->prebuilt;

	struct rte_mbuf init;
	memset(&init, 0, sizeof(init));
	init.data_off = headroom;
	init.nb_segs = 1;
	init.port = dev->port_id;
	rte_mbuf_refcnt_set(&init, 1);
	memcpy(&q->mbuf_initializer,
	       (const char *)&init + offsetof(struct rte_mbuf, rearm_data),
	       sizeof(uint64_t));

	if (dev->opt.hints & SYNTH_HINT_TIMESTAMP) {
		rc = rte_mbuf_dyn_rx_timestamp_register(&q->ts_offset, &q->ts_flag);
		if (rc) {
			RTE_LOG(ERR, PMD, "%s: cannot register the RX timestamp "
				"dynfield: %s\n", SYNTH_DRIVER_NAME,
				rte_strerror(rte_errno));
			rc = -rte_errno;
			goto fail;
		}
		q->timestamp = true;
	}
	dev->rxq[qid] = q;
	eth_dev->data->rx_queues[qid] = q;
	return 0;
fail:
	synth_rx_queue_free(q);
	return rc;
}

static void synth_tx_queue_free(struct synth_tx_queue *t)
{
	if (!t)
		return;
	uint64_t calls = 0;
	synth_tx_reap(t, UINT32_MAX, &calls);
	rte_ring_free(t->completions);
	rte_free(t);
}

static void synth_tx_queue_release(struct rte_eth_dev *eth_dev, uint16_t qid)
{
	struct synth_device *dev = synth_dev(eth_dev);
	synth_tx_queue_free(dev->txq[qid]);
	dev->txq[qid] = NULL;
	eth_dev->data->tx_queues[qid] = NULL;
}

static int synth_tx_queue_setup(struct rte_eth_dev *eth_dev, uint16_t qid,
				uint16_t nb_desc, unsigned int socket,
				const struct rte_eth_txconf *conf)
{
	static unsigned generation;
	struct synth_device *dev = synth_dev(eth_dev);
	const unsigned ring_size = RTE_MAX(nb_desc, (uint16_t)32);
	if (conf && conf->tx_free_thresh > ring_size) {
		RTE_LOG(ERR, PMD, "%s: TX queue %u: tx_free_thresh %u above the ring's %u descriptors\n",
			dev->name, qid, conf->tx_free_thresh, ring_size);
		return -EINVAL;
	}
	if (dev->txq[qid])
		synth_tx_queue_release(eth_dev, qid);
	struct synth_tx_queue *t = rte_zmalloc_socket("synth_txq", sizeof(*t),
						      RTE_CACHE_LINE_SIZE, (int)socket);
	if (!t)
		return -ENOMEM;
	char name[RTE_RING_NAMESIZE];
	snprintf(name, sizeof(name), "synth%u_tx%u_%u", dev->port_id, qid,
		 __atomic_fetch_add(&generation, 1, __ATOMIC_RELAXED));
	/* one producer (the TX lcore); consumers: the RX poll of the paired
	 * queue, tx_done_cleanup and the xmit path when full */
	t->completions = rte_ring_create(name, ring_size, (int)socket,
					 RING_F_SP_ENQ | RING_F_EXACT_SZ);
	if (!t->completions) {
		rte_free(t);
		return -ENOMEM;
	}
	t->dev = dev;
	t->queue_id = qid;
	t->free_thresh = conf ? conf->tx_free_thresh : 0;
	t->recycle_bulk = dev->opt.recycle_bulk;
	dev->txq[qid] = t;
	eth_dev->data->tx_queues[qid] = t;
	return 0;
}

/* ---- device ops ---- */

static int synth_dev_configure(struct rte_eth_dev *eth_dev)
{
	struct synth_device *dev = synth_dev(eth_dev);
	struct rte_eth_dev_data *data = eth_dev->data;
	dev->nb_rxq = data->nb_rx_queues;
	dev->nb_txq = data->nb_tx_queues;
	for (unsigned i = 0; i < SYNTH_RETA_SIZE; i++)
		dev->reta[i] = (uint16_t)(dev->nb_rxq ? i % dev->nb_rxq : 0);
	const struct rte_eth_rss_conf *rss = &data->dev_conf.rx_adv_conf.rss_conf;
	if (rss->rss_key && rss->rss_key_len == SYNTH_RSS_KEY_LEN)
		memcpy(dev->rss_key, rss->rss_key, SYNTH_RSS_KEY_LEN);
	else
		memcpy(dev->rss_key, synth_default_rss_key, SYNTH_RSS_KEY_LEN);
	return 0;
}

static void synth_link_set(struct rte_eth_dev *eth_dev, bool up)
{
	struct rte_eth_link link = {
		.link_speed = RTE_ETH_SPEED_NUM_100G,
		.link_duplex = RTE_ETH_LINK_FULL_DUPLEX,
		.link_autoneg = RTE_ETH_LINK_FIXED,
		.link_status = up ? RTE_ETH_LINK_UP : RTE_ETH_LINK_DOWN,
	};
	eth_dev->data->dev_link = link;
}

static bool synth_link_down_now(const struct synth_device *dev)
{
	uint64_t now = rte_rdtsc();
	return dev->link_down_from != 0 && now >= dev->link_down_from &&
	       now < dev->link_down_until;
}

static int synth_dev_start(struct rte_eth_dev *eth_dev)
{
	struct synth_device *dev = synth_dev(eth_dev);
	uint16_t nrx = eth_dev->data->nb_rx_queues;
	dev->link_down_from = dev->link_down_until = 0;
	if (dev->opt.link_down_ms) {
		uint64_t hz = rte_get_tsc_hz(), now = rte_rdtsc();
		dev->link_down_from = now + dev->opt.link_down_ms * hz / 1000;
		dev->link_down_until = dev->opt.link_down_for_ms
					       ? dev->link_down_from +
							 dev->opt.link_down_for_ms * hz / 1000
					       : UINT64_MAX;
	}
	for (uint16_t i = 0; i < nrx; i++) {
		struct synth_rx_queue *q = dev->rxq[i];
		if (!q)
			continue;
		q->link_down_from = dev->link_down_from;
		q->link_down_until = dev->link_down_until;
		q->stall_cycles = dev->opt.stall_ms * rte_get_tsc_hz() / 1000;
		q->faults = q->link_down_from != 0 || q->stall_cycles != 0;
		q->paired_tx = dev->rx_clean && i < eth_dev->data->nb_tx_queues ? dev->txq[i]
										: NULL;
		if (dev->opt.rate) {
			/* the device rate, split over the queues */
			q->rate_pps = dev->opt.rate / nrx + (i < dev->opt.rate % nrx);
			q->rate_pps = RTE_MAX(q->rate_pps, (uint64_t)1);
			q->rate_depth = RTE_MAX((uint64_t)32, q->rate_pps / 1000);
			q->rate_credit = 0;
			q->rate_last = rte_rdtsc();
		}
		eth_dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	}
	for (uint16_t i = 0; i < eth_dev->data->nb_tx_queues; i++)
		eth_dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STARTED;
	dev->started = true;
	synth_link_set(eth_dev, true);
	return 0;
}

static int synth_dev_stop(struct rte_eth_dev *eth_dev)
{
	struct synth_device *dev = synth_dev(eth_dev);
	for (uint16_t i = 0; i < eth_dev->data->nb_tx_queues; i++) {
		struct synth_tx_queue *t = dev->txq[i];
		if (t)
			t->counters[SYNTH_TXC_completion_freed] +=
				synth_tx_reap(t, UINT32_MAX,
					      &t->counters[SYNTH_TXC_recycle_calls]);
		eth_dev->data->tx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	}
	for (uint16_t i = 0; i < eth_dev->data->nb_rx_queues; i++)
		eth_dev->data->rx_queue_state[i] = RTE_ETH_QUEUE_STATE_STOPPED;
	dev->started = false;
	synth_link_set(eth_dev, false);
	return 0;
}

static int synth_dev_close(struct rte_eth_dev *eth_dev)
{
	struct synth_device *dev = synth_dev(eth_dev);
	if (!dev)
		return 0;
	for (uint16_t i = 0; i < RTE_MAX_QUEUES_PER_PORT; i++) {
		synth_rx_queue_free(dev->rxq[i]);
		dev->rxq[i] = NULL;
		synth_tx_queue_free(dev->txq[i]);
		dev->txq[i] = NULL;
	}
	for (uint16_t i = 0; i < eth_dev->data->nb_rx_queues; i++)
		eth_dev->data->rx_queues[i] = NULL;
	for (uint16_t i = 0; i < eth_dev->data->nb_tx_queues; i++)
		eth_dev->data->tx_queues[i] = NULL;
	if (dev->tx_pcap) {
		fclose(dev->tx_pcap);
		dev->tx_pcap = NULL;
	}
	free(dev->pcap_frames);
	free(dev->pcap_data);
	dev->pcap_frames = NULL;
	dev->pcap_data = NULL;
	/* mac_addrs is part of dev_private: not to be freed alone */
	eth_dev->data->mac_addrs = NULL;
	return 0;
}

static int synth_link_update(struct rte_eth_dev *eth_dev, int wait)
{
	(void)wait;
	const struct synth_device *dev = synth_dev(eth_dev);
	synth_link_set(eth_dev, dev->started && !synth_link_down_now(dev));
	return 0;
}

static int synth_mode_ok(struct rte_eth_dev *eth_dev)
{
	/* an emulated NIC delivers every frame of its schedule regardless */
	(void)eth_dev;
	return 0;
}

static int synth_mtu_set(struct rte_eth_dev *eth_dev, uint16_t mtu)
{
	if ((uint32_t)mtu + RTE_ETHER_HDR_LEN + 4 > SYNTH_MAX_FRAME) {
		RTE_LOG(ERR, PMD, "%s: mtu %u too large; valid up to %u\n",
			SYNTH_DRIVER_NAME, mtu,
			SYNTH_MAX_FRAME - RTE_ETHER_HDR_LEN - 4);
		return -EINVAL;
	}
	synth_dev(eth_dev)->mtu = mtu;
	return 0;
}

static int synth_infos_get(struct rte_eth_dev *eth_dev,
			   struct rte_eth_dev_info *info)
{
	struct synth_device *dev = synth_dev(eth_dev);
	uint32_t hints = dev->opt.hints;
	info->max_mac_addrs = 1;
	info->max_rx_pktlen = SYNTH_MAX_FRAME;
	info->min_mtu = RTE_ETHER_MIN_MTU;
	info->max_mtu = SYNTH_MAX_FRAME - RTE_ETHER_HDR_LEN - 4;
	info->max_rx_queues = dev->opt.max_rxq;
	info->max_tx_queues = dev->opt.max_txq;
	info->min_rx_bufsize = RTE_PKTMBUF_HEADROOM + SYNTH_HEAD_MAX;
	info->rx_offload_capa =
		((hints & SYNTH_HINT_HASH) ? RTE_ETH_RX_OFFLOAD_RSS_HASH : 0) |
		((hints & SYNTH_HINT_CSUM) ? RTE_ETH_RX_OFFLOAD_IPV4_CKSUM |
						     RTE_ETH_RX_OFFLOAD_UDP_CKSUM |
						     RTE_ETH_RX_OFFLOAD_TCP_CKSUM : 0) |
		((hints & SYNTH_HINT_VLAN) ? RTE_ETH_RX_OFFLOAD_VLAN_STRIP : 0) |
		((hints & SYNTH_HINT_TIMESTAMP) ? RTE_ETH_RX_OFFLOAD_TIMESTAMP : 0);
	info->tx_offload_capa = RTE_ETH_TX_OFFLOAD_MULTI_SEGS |
				RTE_ETH_TX_OFFLOAD_MBUF_FAST_FREE;
	info->flow_type_rss_offloads = (hints & SYNTH_HINT_HASH) ?
		RTE_ETH_RSS_IPV4 | RTE_ETH_RSS_NONFRAG_IPV4_UDP |
		RTE_ETH_RSS_NONFRAG_IPV4_TCP | RTE_ETH_RSS_IPV6 |
		RTE_ETH_RSS_NONFRAG_IPV6_UDP | RTE_ETH_RSS_NONFRAG_IPV6_TCP : 0;
	info->reta_size = SYNTH_RETA_SIZE;
	info->hash_key_size = SYNTH_RSS_KEY_LEN;
	info->rx_desc_lim.nb_max = 4096;
	info->rx_desc_lim.nb_min = 32;
	info->rx_desc_lim.nb_align = 1;
	info->tx_desc_lim = info->rx_desc_lim;
	info->default_rxportconf.burst_size = 32;
	info->default_rxportconf.ring_size = 1024;
	info->default_txportconf.burst_size = 32;
	info->default_txportconf.ring_size = 1024;
	info->speed_capa = RTE_ETH_LINK_SPEED_100G;
	return 0;
}

static const uint32_t *synth_ptypes(struct rte_eth_dev *eth_dev)
{
	(void)eth_dev;
	static const uint32_t ptypes[] = {
		RTE_PTYPE_L2_ETHER, RTE_PTYPE_L2_ETHER_VLAN,
		RTE_PTYPE_L2_ETHER_ARP, RTE_PTYPE_L3_IPV4,
		RTE_PTYPE_L3_IPV4_EXT, RTE_PTYPE_L3_IPV6,
		RTE_PTYPE_L4_UDP, RTE_PTYPE_L4_TCP, RTE_PTYPE_UNKNOWN,
	};
	return ptypes;
}

static int synth_stats_get(struct rte_eth_dev *eth_dev, struct rte_eth_stats *st)
{
	struct synth_device *dev = synth_dev(eth_dev);
	memset(st, 0, sizeof(*st));
	for (uint16_t i = 0; i < eth_dev->data->nb_rx_queues; i++) {
		const struct synth_rx_queue *q = dev->rxq[i];
		if (!q)
			continue;
		const uint64_t *c = q->counters + SYNTH_KIND_MAX;
		st->ipackets += c[SYNTH_RXC_packets];
		st->ibytes += c[SYNTH_RXC_bytes];
		st->rx_nombuf += c[SYNTH_RXC_nombuf];
		if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			st->q_ipackets[i] = c[SYNTH_RXC_packets];
			st->q_ibytes[i] = c[SYNTH_RXC_bytes];
		}
	}
	for (uint16_t i = 0; i < eth_dev->data->nb_tx_queues; i++) {
		const struct synth_tx_queue *t = dev->txq[i];
		if (!t)
			continue;
		st->opackets += t->counters[SYNTH_TXC_packets];
		st->obytes += t->counters[SYNTH_TXC_bytes];
		if (i < RTE_ETHDEV_QUEUE_STAT_CNTRS) {
			st->q_opackets[i] = t->counters[SYNTH_TXC_packets];
			st->q_obytes[i] = t->counters[SYNTH_TXC_bytes];
		}
	}
	return 0;
}

static int synth_stats_reset(struct rte_eth_dev *eth_dev)
{
	struct synth_device *dev = synth_dev(eth_dev);
	for (uint16_t i = 0; i < RTE_MAX_QUEUES_PER_PORT; i++) {
		if (dev->rxq[i])
			memset(dev->rxq[i]->counters, 0, sizeof(dev->rxq[i]->counters));
		if (dev->txq[i])
			memset(dev->txq[i]->counters, 0, sizeof(dev->txq[i]->counters));
	}
	return 0;
}

/* xstats: rx_q<N>_<kind|counter>, tx_q<N>_<counter>, then the per-profile
 * totals rx_<kind> over all queues */
static unsigned synth_xstats_count(struct rte_eth_dev *eth_dev)
{
	return eth_dev->data->nb_rx_queues * (SYNTH_KIND_MAX + SYNTH_RXC_MAX) +
	       eth_dev->data->nb_tx_queues * SYNTH_TXC_MAX + SYNTH_KIND_MAX;
}

static int synth_xstats_get_names(struct rte_eth_dev *eth_dev,
				  struct rte_eth_xstat_name *names, unsigned size)
{
	unsigned total = synth_xstats_count(eth_dev);
	if (!names || size < total)
		return (int)total;
	unsigned k = 0;
	for (uint16_t q = 0; q < eth_dev->data->nb_rx_queues; q++) {
		for (unsigned c = 0; c < SYNTH_KIND_MAX; c++)
			snprintf(names[k++].name, RTE_ETH_XSTATS_NAME_SIZE,
				 "rx_q%u_%s", q, kind_names[c]);
		for (unsigned c = 0; c < SYNTH_RXC_MAX; c++)
			snprintf(names[k++].name, RTE_ETH_XSTATS_NAME_SIZE,
				 "rx_q%u_%s", q, rxc_names[c]);
	}
	for (uint16_t q = 0; q < eth_dev->data->nb_tx_queues; q++)
		for (unsigned c = 0; c < SYNTH_TXC_MAX; c++)
			snprintf(names[k++].name, RTE_ETH_XSTATS_NAME_SIZE,
				 "tx_q%u_%s", q, txc_names[c]);
	for (unsigned c = 0; c < SYNTH_KIND_MAX; c++)
		snprintf(names[k++].name, RTE_ETH_XSTATS_NAME_SIZE, "rx_%s",
			 kind_names[c]);
	return (int)total;
}

static int synth_xstats_get(struct rte_eth_dev *eth_dev,
			    struct rte_eth_xstat *xs, unsigned n)
{
	struct synth_device *dev = synth_dev(eth_dev);
	unsigned total = synth_xstats_count(eth_dev);
	if (!xs || n < total)
		return (int)total;
	unsigned k = 0;
	uint64_t kinds[SYNTH_KIND_MAX] = {0};
	for (uint16_t q = 0; q < eth_dev->data->nb_rx_queues; q++) {
		const struct synth_rx_queue *rq = dev->rxq[q];
		for (unsigned c = 0; c < SYNTH_KIND_MAX + SYNTH_RXC_MAX; c++) {
			xs[k].id = k;
			xs[k].value = rq ? rq->counters[c] : 0;
			if (c < SYNTH_KIND_MAX)
				kinds[c] += xs[k].value;
			k++;
		}
	}
	for (uint16_t q = 0; q < eth_dev->data->nb_tx_queues; q++) {
		const struct synth_tx_queue *t = dev->txq[q];
		for (unsigned c = 0; c < SYNTH_TXC_MAX; c++, k++) {
			xs[k].id = k;
			xs[k].value = t ? t->counters[c] : 0;
		}
	}
	for (unsigned c = 0; c < SYNTH_KIND_MAX; c++, k++) {
		xs[k].id = k;
		xs[k].value = kinds[c];
	}
	return (int)total;
}

static const struct eth_dev_ops synth_ops = {
	.dev_configure = synth_dev_configure,
	.dev_start = synth_dev_start,
	.dev_stop = synth_dev_stop,
	.dev_close = synth_dev_close,
	.link_update = synth_link_update,
	.promiscuous_enable = synth_mode_ok,
	.promiscuous_disable = synth_mode_ok,
	.allmulticast_enable = synth_mode_ok,
	.allmulticast_disable = synth_mode_ok,
	.mtu_set = synth_mtu_set,
	.stats_get = synth_stats_get,
	.stats_reset = synth_stats_reset,
	.xstats_get = synth_xstats_get,
	.xstats_reset = synth_stats_reset,
	.xstats_get_names = synth_xstats_get_names,
	.dev_infos_get = synth_infos_get,
	.dev_supported_ptypes_get = synth_ptypes,
	.rx_queue_setup = synth_rx_queue_setup,
	.rx_queue_release = synth_rx_queue_release,
	.tx_queue_setup = synth_tx_queue_setup,
	.tx_queue_release = synth_tx_queue_release,
	.tx_done_cleanup = synth_tx_done_cleanup,
};

/* ---- probe / remove ---- */

static eth_rx_burst_t synth_pick_rx(const struct synth_options *o)
{
	if (o->profile == SYNTH_PROFILE_TCP_STREAM)
		return synth_rx_tcp;
	if (o->profile == SYNTH_PROFILE_MIXED)
		return synth_rx_mixed;
	if (o->copy)
		return synth_rx_copy;
	return o->cold ? synth_rx_prebuilt_cold : synth_rx_prebuilt;
}

static int synth_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_dev_name(&vdev->device);
	const struct rte_devargs *da = rte_dev_devargs(&vdev->device);
	struct synth_options opt;
	int rc = synth_parse_devargs(name, da ? da->args : NULL, &opt);
	if (rc)
		return rc;
	if (rte_eal_process_type() != RTE_PROC_PRIMARY) {
		RTE_LOG(ERR, PMD, "%s: secondary processes are not supported\n",
			name);
		return -ENOTSUP;
	}
	struct rte_eth_dev *eth_dev = rte_eth_dev_allocate(name);
	if (!eth_dev)
		return -ENOMEM;
	uint16_t port_id = eth_dev->data->port_id;
	if (port_id >= RTE_MAX_ETHPORTS ||
	    strcmp(eth_dev->data->name, name) != 0) {
		RTE_LOG(ERR, PMD,
			"%s: ethdev layout does not match DPDK 22.11 "
			"(synth_abi.h); refusing to run\n", name);
		rte_eth_dev_release_port(eth_dev);
		return -ENOTSUP;
	}
	struct synth_device *dev = rte_zmalloc_socket(name, sizeof(*dev),
						      RTE_CACHE_LINE_SIZE,
						      rte_dev_numa_node(&vdev->device));
	if (!dev) {
		rte_eth_dev_release_port(eth_dev);
		return -ENOMEM;
	}
	eth_dev->data->dev_private = dev;
	dev->opt = opt;
	snprintf(dev->name, sizeof(dev->name), "%s", name);
	dev->port_id = port_id;
	dev->mac = synth_mac;
	dev->mtu = RTE_ETHER_MTU;
	dev->rx_clean = true;
	synth_init_pattern(dev);
	memcpy(dev->rss_key, synth_default_rss_key, SYNTH_RSS_KEY_LEN);
	if (opt.profile == SYNTH_PROFILE_PCAP) {
		rc = synth_pcap_load(dev);
		if (rc)
			goto fail;
	}
	if (opt.tx_pcap[0]) {
		rc = synth_tx_pcap_open(dev, name, opt.tx_pcap);
		if (rc)
			goto fail;
	}
	eth_dev->device = &vdev->device;
	eth_dev->intr_handle = NULL;
	eth_dev->data->numa_node = rte_dev_numa_node(&vdev->device);
	eth_dev->data->mac_addrs = &dev->mac;
	eth_dev->data->mtu = RTE_ETHER_MTU;
	synth_link_set(eth_dev, false);
	eth_dev->dev_ops = &synth_ops;
	eth_dev->rx_pkt_burst = synth_pick_rx(&opt);
	eth_dev->tx_pkt_burst = synth_tx_burst;
	rte_eth_dev_probing_finish(eth_dev);

	struct rte_ether_addr check;
	uint16_t by_name = RTE_MAX_ETHPORTS;
	if (rte_eth_dev_get_port_by_name(name, &by_name) != 0 ||
	    by_name != port_id || rte_eth_macaddr_get(port_id, &check) != 0 ||
	    !rte_is_same_ether_addr(&check, &synth_mac)) {
		RTE_LOG(ERR, PMD,
			"%s: ethdev layout does not match DPDK 22.11 "
			"(port id, mac_addrs); refusing to run\n", name);
		synth_dev_close(eth_dev);
		rte_eth_dev_release_port(eth_dev);
		return -ENOTSUP;
	}
	return 0;
fail:
	synth_dev_close(eth_dev);
	rte_eth_dev_release_port(eth_dev);
	return rc;
}

static int synth_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *eth_dev = rte_eth_dev_allocated(rte_dev_name(&vdev->device));
	if (!eth_dev)
		return 0; /* closed already: rte_eth_dev_close released it */
	synth_dev_close(eth_dev);
	rte_eth_dev_release_port(eth_dev);
	return 0;
}

int rte_pmd_synth_set_rx_clean(uint16_t port_id, bool on)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	if (rte_eth_dev_get_name_by_port(port_id, name) != 0)
		return -ENODEV;
	struct rte_eth_dev *eth_dev = rte_eth_dev_allocated(name);
	if (!eth_dev)
		return -ENODEV;
	if (eth_dev->dev_ops != &synth_ops)
		return -ENOTSUP;
	struct synth_device *dev = synth_dev(eth_dev);
	if (dev->started)
		return -EBUSY;
	dev->rx_clean = on;
	return 0;
}

static struct rte_vdev_driver synth_driver = {
	.probe = synth_probe,
	.remove = synth_remove,
};

SYNTH_REGISTER_VDEV(net_synth, synth_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_synth, SYNTH_PARAM_STRING);
