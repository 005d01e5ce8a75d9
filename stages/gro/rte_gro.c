/* SPDX-License-Identifier: BSD-3-Clause
 * rte-gro: DPDK rte_gro as the peer of the gro stage on the same stream,
 * rte_gro_reassemble (heavy mode: state across calls, mode=heavy) or
 * rte_gro_reassemble_burst (light mode: one burst, nothing kept,
 * mode=light), behind a descriptor of its own over gro's context,
 * counters and release list (gro_internal.h): the kernel GRO path carries
 * no branch for it. Only TCP/IPv4 is given to rte_gro (22.11 merges
 * nothing else); rte_gro needs packet_type and l2/l3/l4_len, which the
 * peer reads from the headers itself (gro_rte_lengths). The packets
 * rte_gro does not take, and what rte_gro_timeout_flush or
 * rte_gro_reassemble_burst returns, go to the same release list. rte_gro leaves the IPv4 header checksum of merged
 * packets stale and the TCP checksum of the first segment; listrx
 * recomputes the former and marks the packet verified on output so that
 * l3-demux accepts it (docs/gro.md: differences).
 */
#include <errno.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_gro.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "stage_keys.h"
#include "static_entries.h"
#include "gro_internal.h"

static inline void gro_rte_output(struct gro_ctx *ctx, struct rte_mbuf *m)
{
	if (m->nb_segs > 1) {
		struct rte_ipv4_hdr *iph = rte_pktmbuf_mtod_offset(
			m, struct rte_ipv4_hdr *, m->l2_len);
		iph->hdr_checksum = 0;
		iph->hdr_checksum = rte_ipv4_cksum(iph);
		/* rte_gro assumes the NIC verified the segments and leaves
		 * the first one's TCP checksum: listrx marks the merged
		 * packet verified, as the kernel rule does, so that the
		 * stages after GRO treat both impls alike */
		uint16_t mss = (uint16_t)(m->data_len - m->l2_len - m->l3_len -
					  m->l4_len);
		m->ol_flags = (m->ol_flags & ~RTE_MBUF_F_RX_L4_CKSUM_MASK) |
			      RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		m->tso_segsz = mss;
		struct lrx_meta *meta = gro_meta_of(ctx, m);
		if (meta) {
			meta->gso_size = mss;
			meta->gso_segs = m->nb_segs;
			meta->ip_summed = LRX_CHECKSUM_UNNECESSARY;
			meta->len = m->pkt_len - m->l2_len;
		}
	}
	gro_release_push(ctx, m);
}

/* What an application does before rte_gro, which needs packet_type and
 * l2/l3/l4_len: the header lengths of a TCP/IPv4 frame, read from the
 * headers. Admits the frames gro_parse gives to rte_gro (TCP/IPv4, not a
 * fragment, no reserved fragment bit, headers within a total length that
 * is the frame's), without what only the kernel's rules read (hash,
 * checksum states, flow fields), so that the peer does not pay for them.
 * Only untagged frames: rte_gro's flow key has no VLAN, and
 * merge_two_tcp4_packets strips the head's header length from the tail,
 * so a tagged and an untagged segment of one flow would lose 4 payload
 * bytes (found by tests/fuzz/fuzz_gro). Returns the L3 length (0: not for
 * rte_gro), *l4_len. */
static inline uint32_t gro_rte_lengths(const struct gro_ctx *ctx, const struct rte_mbuf *m,
				       uint32_t *l4_len)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint32_t len = m->data_len;
	const struct lrx_meta *meta = gro_meta_of(ctx, m);
	if (unlikely(m->nb_segs != 1) || len < RTE_ETHER_HDR_LEN + 20 ||
	    (meta ? meta->network_offset != RTE_ETHER_HDR_LEN ||
			    meta->protocol != RTE_ETHER_TYPE_IPV4
		  : gro_load16(f + 12) != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)))
		return 0;
	const struct rte_ipv4_hdr *iph = (const void *)(f + RTE_ETHER_HDR_LEN);
	const uint32_t l3_len = (uint32_t)(iph->version_ihl & 0xf) * 4;
	const uint32_t ip_len = rte_be_to_cpu_16(iph->total_length);
	if ((iph->version_ihl >> 4) != 4 || l3_len < 20 || iph->next_proto_id != IPPROTO_TCP ||
	    (iph->fragment_offset & rte_cpu_to_be_16(0x8000 | RTE_IPV4_HDR_MF_FLAG |
						      RTE_IPV4_HDR_OFFSET_MASK)) ||
	    ip_len != len - RTE_ETHER_HDR_LEN || ip_len < l3_len + 20)
		return 0;
	*l4_len = (uint32_t)(((const struct rte_tcp_hdr *)((const uint8_t *)iph + l3_len))->data_off >> 4) * 4;
	return *l4_len >= 20 && ip_len >= l3_len + *l4_len ? l3_len : 0;
}

/* Returns true when m is for rte_gro (fields set), false when it passes. */
static inline bool gro_rte_prepare(struct gro_ctx *ctx, struct rte_mbuf *m)
{
	uint32_t l4_len;
	ctx->c.segments_in++;
	const uint32_t l3_len = gro_rte_lengths(ctx, m, &l4_len);
	if (!l3_len) {
		ctx->c.not_eligible++;
		return false;
	}
	m->l2_len = RTE_ETHER_HDR_LEN;
	m->l3_len = l3_len;
	m->l4_len = l4_len;
	m->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 |
			 RTE_PTYPE_L4_TCP;
	return true;
}

/* Light mode: rte_gro_reassemble_burst over the segments collected since
 * the last call; everything it returns (merged and unprocessed) leaves at
 * once, in its order. */
static void gro_rte_light_flush(struct gro_ctx *ctx,
				enum gro_flush_cause cause)
{
	uint16_t n = ctx->light_n;
	if (n == 0)
		return;
	ctx->light_n = 0;
	uint16_t left = rte_gro_reassemble_burst(ctx->light, n,
						 &ctx->light_param);
	ctx->c.merged += (uint64_t)(n - left);
	ctx->c.flush[cause] += left;
	for (uint16_t i = 0; i < left; i++)
		gro_rte_output(ctx, ctx->light[i]);
}

/* Light mode per burst: the burst is the poll (rx burst to poll end), not
 * one engine call, so that the packet engine, which hands the stage one
 * packet per call, merges what the burst engine does. The segments wait
 * in light[] for flush(); more than rte_gro's RTE_GRO_MAX_BURST_ITEM_NUM
 * in one poll (--burst > 128) are reassembled in batches of that size. */
static inline void gro_rte_light_add(struct gro_ctx *ctx, struct rte_mbuf *m)
{
	ctx->light[ctx->light_n++] = m;
	if (unlikely(ctx->light_n == RTE_GRO_MAX_BURST_ITEM_NUM))
		gro_rte_light_flush(ctx, GRO_FLUSH_SIZE);
}

/* Heavy mode: one rte_gro_reassemble call over a run of segments; what it
 * returns unprocessed (flags, full table) leaves at once, in input order. */
static void gro_rte_heavy_run(struct gro_ctx *ctx, struct rte_mbuf **take,
			      uint16_t k)
{
	uint64_t before = rte_gro_get_pkt_count(ctx->rte_ctx);
	uint16_t left = rte_gro_reassemble(take, k, ctx->rte_ctx);
	/* segments taken minus packets it holds more now = merged */
	ctx->c.merged += (uint64_t)(k - left) -
			 (rte_gro_get_pkt_count(ctx->rte_ctx) - before);
	for (uint16_t i = 0; i < left; i++)
		gro_rte_output(ctx, take[i]);
}

/* A packet rte_gro does not take ends the run before it, so that it leaves
 * after the segments rte_gro returned unprocessed before it: the order one
 * call per packet gives, the same in every engine. */
static void gro_rte_burst(struct gro_ctx *ctx, struct rte_mbuf **pkts,
			  uint16_t n)
{
	struct rte_mbuf *take[LRX_BURST_MAX];
	uint16_t k = 0;
	const bool light = ctx->impl == GRO_IMPL_RTE_LIGHT;
	for (uint16_t i = 0; i < n; i++) {
		if (gro_rte_prepare(ctx, pkts[i])) {
			if (light)
				gro_rte_light_add(ctx, pkts[i]);
			else
				take[k++] = pkts[i];
			continue;
		}
		if (k != 0) {
			gro_rte_heavy_run(ctx, take, k);
			k = 0;
		}
		gro_release_push(ctx, pkts[i]);
	}
	if (k != 0)
		gro_rte_heavy_run(ctx, take, k);
}

static void gro_rte_flush(struct gro_ctx *ctx, uint64_t older_than,
			  enum gro_flush_cause cause)
{
	struct rte_mbuf *out[64];
	uint16_t n;
	do {
		n = rte_gro_timeout_flush(ctx->rte_ctx, older_than,
					  RTE_GRO_TCP_IPV4, out, RTE_DIM(out));
		ctx->c.flush[cause] += n;
		for (uint16_t i = 0; i < n; i++)
			gro_rte_output(ctx, out[i]);
	} while (n == RTE_DIM(out));
}

static int gro_rte_init(struct gro_ctx *ctx, const struct lrx_stage_init *init)
{
	if (ctx->impl == GRO_IMPL_RTE_LIGHT) {
		/* rte_gro_reassemble_burst sizes its on-stack table by
		 * min(n, flows x items, RTE_GRO_MAX_BURST_ITEM_NUM): these
		 * let a whole batch of 128 in */
		ctx->light_param = (struct rte_gro_param){
			.gro_types = RTE_GRO_TCP_IPV4,
			.max_flow_num = GRO_HASH_BUCKETS * MAX_GRO_SKBS,
			.max_item_per_flow = RTE_GRO_MAX_BURST_ITEM_NUM,
		};
		return 0;
	}
	/* 64 flows as the kernel's 8 x MAX_GRO_SKBS; 32 items per flow: with
	 * fewer, rte_gro heavy mode merged almost nothing (docs/gro.md) */
	struct rte_gro_param param = {
		.gro_types = RTE_GRO_TCP_IPV4,
		.max_flow_num = GRO_HASH_BUCKETS * MAX_GRO_SKBS,
		.max_item_per_flow = 32,
		.socket_id = (uint16_t)(init->socket_id < 0 ? 0 : init->socket_id),
	};
	ctx->rte_ctx = rte_gro_ctx_create(&param);
	if (!ctx->rte_ctx) {
		snprintf(init->err, init->err_len,
			 "%s: mode=heavy: rte_gro_ctx_create failed on socket %d",
			 init->instance, init->socket_id);
		return -ENOMEM;
	}
	return 0;
}

static void rte_gro_flush(void *vctx, bool budget_used)
{
	struct gro_ctx *ctx = vctx;
	if (ctx->impl == GRO_IMPL_RTE_LIGHT) {
		/* light mode keeps nothing across polls, budget or not */
		gro_rte_light_flush(ctx, GRO_FLUSH_POLL_END);
		return;
	}
	uint64_t age = budget_used ? ctx->age_cycles : ctx->timeout_cycles;
	gro_rte_flush(ctx, age, age ? GRO_FLUSH_AGE : GRO_FLUSH_POLL_END);
}

static uint32_t rte_gro_held_count(const void *vctx)
{
	const struct gro_ctx *ctx = vctx;
	uint32_t held = ctx->light_n;
	if (ctx->impl == GRO_IMPL_RTE_HEAVY)
		held = (uint32_t)rte_gro_get_pkt_count(ctx->rte_ctx);
	return held + (ctx->ring_tail - ctx->ring_head);
}

lrx_next_t lrx_rte_gro_process_one(void *vctx, struct rte_mbuf *pkt)
{
	gro_rte_burst(vctx, &pkt, 1);
	return LRX_NEXT_CONSUMED_V;
}

static void rte_gro_process_burst(void *vctx, struct rte_mbuf **pkts,
				  uint16_t n, lrx_next_t *nexts)
{
	gro_rte_burst(vctx, pkts, n);
	for (uint16_t i = 0; i < n; i++)
		nexts[i] = LRX_NEXT_CONSUMED_V;
}

static const char *const rte_gro_modes[] = {"heavy", "light", NULL};

static const struct lrx_value_key rte_gro_keys[] = {
	GRO_COMMON_KEYS
	LRX_KEY_CHOICE(struct gro_conf, mode, "mode", "heavy", rte_gro_modes,
		       "DPDK rte_gro as the peer of gro on the same stream "
		       "(TCP/IPv4 only): heavy = rte_gro_reassemble + rte_gro_timeout_flush, "
		       "light = rte_gro_reassemble_burst over each poll's burst, nothing "
		       "held across polls"),
	{.name = NULL},
};

static int rte_gro_init(void *vctx, const struct lrx_stage_init *init)
{
	struct gro_ctx *ctx = vctx;
	gro_init_common(ctx, init);
	ctx->impl = ((const struct gro_conf *)init->conf)->mode == 1 ? GRO_IMPL_RTE_LIGHT
								       : GRO_IMPL_RTE_HEAVY;
	return gro_rte_init(ctx, init);
}

static void rte_gro_fini(void *vctx)
{
	struct gro_ctx *ctx = vctx;
	/* the engine drains at exit; anything left is freed, not leaked */
	for (uint16_t i = 0; i < ctx->light_n; i++)
		rte_pktmbuf_free(ctx->light[i]);
	ctx->light_n = 0;
	if (ctx->rte_ctx) {
		/* rte_gro_ctx_destroy frees its tables, not the packets */
		gro_rte_flush(ctx, 0, GRO_FLUSH_POLL_END);
		rte_gro_ctx_destroy(ctx->rte_ctx);
		ctx->rte_ctx = NULL;
	}
	gro_release_free(ctx);
}

static LRX_STAGE_DEFINE(rte_gro, struct gro_ctx, struct gro_conf,
		 rte_gro_keys, gro_counters,
	.name = "rte-gro",
	.summary = "DPDK rte_gro (heavy, or light with mode=light) over the same "
		   "stream, as the peer of gro (TCP/IPv4 only)",
	.provides = LRX_PROVIDES_SKB,
	.init = rte_gro_init,
	.fini = rte_gro_fini,
	.process_one = lrx_rte_gro_process_one,
	.process_burst = rte_gro_process_burst,
	.flush = rte_gro_flush,
	.release = lrx_gro_release,
	.held = rte_gro_held_count,
)
