/* SPDX-License-Identifier: BSD-3-Clause
 * The `tc-ingress` stage: the ingress hook of __netif_receive_skb_core,
 * as sch_handle_ingress -> tc_run -> tcf_classify run it on a device
 * with a clsact qdisc (docs/tc.md):
 *  - the port's filters are tcf_protos in pref order; each is one
 *    classifier call (__tcf_classify), skipped when its protocol is
 *    neither the packet's (skb_protocol(skb, false): the VLAN TPID for a
 *    tagged frame) nor ETH_P_ALL; the first call that returns a verdict
 *    (>= 0) ends the walk, TC_ACT_UNSPEC goes on;
 *  - cls_bpf (cls_bpf_classify): an eBPF object run by rte_bpf (the xdp
 *    stage's loader, JIT or interpreter) on a struct __sk_buff context;
 *    with direct-action its return is the verdict (cls_bpf_exec_opcode:
 *    an unknown value is TC_ACT_UNSPEC); without, 0 is no match and any
 *    other value runs the filter's action. Programs of one pref run
 *    newest first (list_add_rcu);
 *  - flower (fl_classify): the packet's key against each filter's key
 *    and mask (masks in the order they were first used), port ranges as
 *    fl_range_port_dst_cmp; the first match runs its action;
 *  - u32 (u32_classify, tc_u32.c) and matchall (mall_classify);
 *  - a filter's actions run as tcf_action_exec runs them
 *    (tc_actions_exec in tc_ingress_int.h): pipe goes on, any other
 *    verdict ends the list; a mirred mirror's copy waits for the end of
 *    the poll (emit);
 *  - TC_ACT_RECLASSIFY restarts the walk, 16 times at most
 *    (__tcf_classify), then drops;
 *  - the verdict (sch_handle_ingress): OK, RECLASSIFY, PIPE, UNSPEC go on;
 *    SHOT drops (TC_INGRESS; TC_RECLASSIFY_LOOP past 16 restarts);
 *    STOLEN, QUEUED, TRAP are consumed (consume_skb: listrx counts them
 *    delivered); REDIRECT leaves by the bpf_redirect / mirred port
 *    (skb_do_redirect).
 * A port without filters costs one test (no clsact: entry is NULL).
 * The kernel runs the hook per packet in the list path too
 * (__netif_receive_skb_list_core calls __netif_receive_skb_core for each
 * skb), so process_burst is the per-packet core in a loop.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bpf.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "meta.h"
#include "prefetch.h"
#include "rule_text.h"
#include "stage_keys.h"
#include "value.h"
#include "static_entries.h"
#include "tc_ingress.h"
#include "tc_ingress_int.h"
#include "ebpf/ebpf.h"
#include "ebpf/ebpf_map_init.h"

/* A filter file is at most this big. */
#define TC_FILE_MAX (1u << 20)

/* skb_protocol(skb, false): the outer tag's TPID when the packet has
 * one (the NIC's tag is 802.1Q), else skb->protocol. Network order. */
static inline uint16_t tc_skb_protocol(const struct rte_mbuf *m,
				       const struct lrx_meta *meta)
{
	if (likely(meta->vlan_count == 0))
		return rte_cpu_to_be_16(meta->protocol);
	if ((meta->hints & LRX_HINT_VLAN) &&
	    (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED))
		return rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN);
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	return rte_cpu_to_be_16((uint16_t)(d[12] << 8 | d[13]));
}

/* ---- flower ---------------------------------------------------------------
 * The packet's key (skb_flow_dissect on the fields flower keys here):
 * MACs, the ethertype after the tags, the outer tag, the IP protocol and
 * addresses, and TCP/UDP/SCTP ports unless the packet is a fragment (the
 * dissector stops at a fragment without FLOW_DISSECTOR_F_PARSE_1ST_FRAG). */
static inline void tc_flow_dissect(const struct rte_mbuf *m,
				   const struct lrx_meta *meta,
				   struct lrx_tc_flow_key *k)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint32_t len = rte_pktmbuf_data_len(m);
	const uint32_t noff = meta->network_offset;
	uint32_t toff = 0;
	uint8_t proto = 0;

	memset(k, 0, sizeof(*k));
	if (len >= 12)
		memcpy(k->dst_mac, d, 12);
	k->n_proto = rte_cpu_to_be_16(meta->protocol);
	if (meta->vlan_count) {
		k->vlan_id = meta->vlan_tci[0] & 0xfff;
		k->vlan_prio = (uint8_t)(meta->vlan_tci[0] >> 13);
	}
	if (meta->protocol == RTE_ETHER_TYPE_IPV4 && len >= noff + 20) {
		const uint8_t *ip = d + noff;
		const uint32_t ihl = (ip[0] & 0xf) * 4u;
		if (ihl < 20)
			return;
		proto = ip[9];
		memcpy(k->src_ip, ip + 12, 4);
		memcpy(k->dst_ip, ip + 16, 4);
		if (ip[6] & 0x3f || ip[7]) /* MF or an offset */
			proto = 0;
		toff = noff + ihl;
		k->ip_proto = ip[9];
	} else if (meta->protocol == RTE_ETHER_TYPE_IPV6 && len >= noff + 40) {
		const uint8_t *ip = d + noff;
		proto = ip[6];
		k->ip_proto = proto;
		memcpy(k->src_ip, ip + 8, 16);
		memcpy(k->dst_ip, ip + 24, 16);
		toff = noff + 40;
	}
	if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP ||
	     proto == IPPROTO_SCTP) && len >= toff + 4) {
		k->src_port = (uint16_t)(d[toff] << 8 | d[toff + 1]);
		k->dst_port = (uint16_t)(d[toff + 2] << 8 | d[toff + 3]);
	}
}

static inline bool tc_flower_match(const struct lrx_tc_filter *f,
				   const struct lrx_tc_flow_key *pk)
{
	const uint64_t *p = (const uint64_t *)pk;
	const uint64_t *k = (const uint64_t *)&f->key;
	const uint64_t *mk = (const uint64_t *)&f->mask;
	uint64_t diff = 0;

	for (unsigned w = 0; w < LRX_TC_KEY_WORDS; w++)
		diff |= (p[w] & mk[w]) ^ k[w];
	if (diff)
		return false;
	if (f->dport_range &&
	    (pk->dst_port < f->dport_min || pk->dst_port > f->dport_max))
		return false;
	if (f->sport_range &&
	    (pk->src_port < f->sport_min || pk->src_port > f->sport_max))
		return false;
	return true;
}

/* fl_classify: the first filter whose key matches runs its action; no
 * match is -1 (TC_ACT_UNSPEC). */
static inline int tc_flower_classify(struct tc_ctx *c, const struct tc_tp *tp,
				     const struct rte_mbuf *m,
				     const struct lrx_meta *meta,
				     uint32_t skb_len, uint32_t *redirect)
{
	struct lrx_tc_flow_key key;

	c->n_flower_calls++;
	tc_flow_dissect(m, meta, &key);
	for (uint16_t k = 0; k < tp->n; k++) {
		const uint16_t i = c->order[tp->first + k];
		const struct lrx_tc_filter *f = &c->filters[i];
		struct tc_filter_run *r = &c->run[i];

		r->runs++;
		if (!tc_flower_match(f, &key))
			continue;
		r->packets++;
		r->bytes += skb_len;
		return tc_actions_exec(c, i, m, skb_len, redirect);
	}
	return LRX_TC_ACT_UNSPEC;
}

/* ---- cls_bpf ------------------------------------------------------------ */

/* cls_bpf_exec_opcode (the program's int return value) */
static inline int tc_bpf_opcode(int code)
{
	switch (code) {
	case LRX_TC_ACT_OK:
	case LRX_TC_ACT_SHOT:
	case LRX_TC_ACT_STOLEN:
	case LRX_TC_ACT_TRAP:
	case LRX_TC_ACT_REDIRECT:
	case LRX_TC_ACT_UNSPEC:
		return (int)code;
	default:
		return LRX_TC_ACT_UNSPEC;
	}
}

/* The __sk_buff the programs of this packet see (written once per
 * packet, before its first program: skb->mark and cb[] carry over from
 * one program to the next, as on one skb). NULL: no window. */
static inline struct lrx_skb_md *tc_skb_md(struct tc_ctx *c,
					   struct rte_mbuf *m,
					   const struct lrx_meta *meta)
{
	struct lrx_skb_md *md = lrx_bpf_ctx_at(m, LRX_SKB_MD_SIZE, c->window);

	if (unlikely(md == NULL))
		return NULL;
	memset(md, 0, sizeof(*md));
	md->data_end = (uint64_t)(uintptr_t)(rte_pktmbuf_mtod(m, uint8_t *) +
					     rte_pktmbuf_data_len(m));
	md->len = m->pkt_len;
	md->pkt_type = unlikely(meta->vlan_otherhost) ? meta->eth_pkt_type : meta->pkt_type;
	md->mark = meta->mark;
	md->queue_mapping = meta->ingress_queue + 1u;
	md->protocol = rte_cpu_to_be_16(meta->protocol);
	if (meta->vlan_count) {
		md->vlan_present = 1;
		md->vlan_tci = meta->vlan_tci[0];
		md->vlan_proto = tc_skb_protocol(m, meta);
	}
	md->ingress_ifindex = meta->ingress_port;
	md->ifindex = meta->ingress_port;
	md->hash = meta->hash;
	md->gso_segs = meta->gso_segs;
	md->gso_size = meta->gso_size;
	return md;
}

/* cls_bpf_classify over a tp's programs, newest first. */
static inline int tc_bpf_classify(struct tc_ctx *c, const struct tc_tp *tp,
				  struct rte_mbuf *m, const struct lrx_meta *meta,
				  struct lrx_skb_md **mdp, uint32_t skb_len,
				  uint32_t *redirect)
{
	int ret = LRX_TC_ACT_UNSPEC;

	if (*mdp == NULL) {
		*mdp = tc_skb_md(c, m, meta);
		if (unlikely(*mdp == NULL)) {
			c->n_window_error++;
			return LRX_TC_ACT_SHOT;
		}
	}
	for (uint16_t k = 0; k < tp->n; k++) {
		const uint16_t i = c->order[tp->first + k];
		const struct lrx_tc_filter *f = &c->filters[i];
		struct tc_filter_run *r = &c->run[i];
		/* bpf_prog_run's u32, read as cls_bpf's int filter_res */
		const int res = (int32_t)(uint32_t)(c->jit ? r->jit(*mdp)
						   : rte_bpf_exec(r->bpf, *mdp));

		r->runs++;
		c->n_bpf_runs++;
		if (f->direct_action) {
			ret = tc_bpf_opcode(res);
			if (ret == LRX_TC_ACT_UNSPEC)
				continue;
		} else {
			if (res == 0)
				continue;
			ret = tc_actions_exec(c, i, m, skb_len, redirect);
			if (ret < 0)
				continue;
		}
		r->packets++;
		r->bytes += skb_len;
		if (ret == LRX_TC_ACT_REDIRECT && f->direct_action)
			*redirect = lrx_xdp_redirect_take();
		break;
	}
	return ret;
}

/* ---- the hook ------------------------------------------------------------ */

/* mall_classify: every packet runs the one filter's action */
static inline int tc_matchall_classify(struct tc_ctx *c, const struct tc_tp *tp,
				       const struct rte_mbuf *m, uint32_t skb_len,
				       uint32_t *redirect)
{
	const uint16_t i = c->order[tp->first];
	struct tc_filter_run *r = &c->run[i];

	c->n_matchall_calls++;
	r->runs++;
	r->packets++;
	r->bytes += skb_len;
	return tc_actions_exec(c, i, m, skb_len, redirect);
}

/* __tcf_classify's limit on TC_ACT_RECLASSIFY restarts */
#define TC_MAX_RECLASSIFY_LOOP 16

/* One tcf_proto's classifier. */
static inline int tc_tp_classify(struct tc_ctx *c, const struct tc_tp *tp,
				 struct rte_mbuf *m, struct lrx_meta *meta,
				 struct lrx_skb_md **md, uint32_t skb_len,
				 uint32_t *redirect)
{
	switch (tp->kind) {
	case LRX_TC_KIND_BPF:
		return tc_bpf_classify(c, tp, m, meta, md, skb_len, redirect);
	case LRX_TC_KIND_FLOWER:
		return tc_flower_classify(c, tp, m, meta, skb_len, redirect);
	case LRX_TC_KIND_U32:
		return tc_u32_classify(c, tp, m, meta, skb_len, redirect);
	default:
		return tc_matchall_classify(c, tp, m, skb_len, redirect);
	}
}

/* __tcf_classify over the port's chain; TC_ACT_RECLASSIFY starts it
 * again from the first tcf_proto, at most 16 times, then drops
 * (SKB_DROP_REASON_TC_RECLASSIFY_LOOP). */
static inline int tc_classify(struct tc_ctx *c, const struct tc_chain *chain,
			      struct rte_mbuf *m, struct lrx_meta *meta,
			      uint32_t *redirect,
			      enum lrx_drop_reason *reason)
{
	/* qdisc_pkt_len: skb->len with the MAC header pulled */
	const uint32_t skb_len = m->pkt_len - meta->mac_len;
	const uint16_t protocol = tc_skb_protocol(m, meta);
	struct lrx_skb_md *md = NULL;
	int ret = LRX_TC_ACT_UNSPEC, limit = 0;

	for (uint16_t t = 0; t < chain->n_tps; t++) {
		const struct tc_tp *tp = &c->tps[chain->first_tp + t];

		if (tp->protocol != protocol &&
		    tp->protocol != rte_cpu_to_be_16(LRX_TC_ETH_P_ALL))
			continue;
		ret = tc_tp_classify(c, tp, m, meta, &md, skb_len, redirect);
		if (unlikely(ret == LRX_TC_ACT_RECLASSIFY)) {
			if (limit++ >= TC_MAX_RECLASSIFY_LOOP) {
				c->n_reclassify_loop++;
				/* tcf_set_drop_reason */
				*reason = LRX_DROP_TC_RECLASSIFY_LOOP;
				ret = LRX_TC_ACT_SHOT;
				break;
			}
			t = UINT16_MAX; /* ++ makes it 0: the first tp again */
			continue;
		}
		if (ret >= 0)
			break;
	}
	if (md != NULL)
		meta->mark = md->mark; /* a program's skb->mark stays */
	return ret;
}

static __rte_always_inline lrx_next_t tc_ingress_core(struct tc_ctx *c,
						      struct rte_mbuf *m)
{
	struct lrx_meta *meta = lrx_meta(m);
	const uint16_t port = meta->ingress_port;

	if (unlikely(port >= RTE_MAX_ETHPORTS) || c->chains[port].n_tps == 0)
		return LRX_NEXT_CONTINUE_V; /* no clsact on the device */
	c->n_classified++;
	uint32_t redirect = LRX_XDP_REDIRECT_NONE;
	/* tcf_get_drop_reason: TC_INGRESS unless the classifier set one */
	enum lrx_drop_reason reason = LRX_DROP_TC_INGRESS;
	switch (tc_classify(c, &c->chains[port], m, meta, &redirect, &reason)) {
	case LRX_TC_ACT_SHOT:
		c->n_shot++;
		return lrx_next_drop(reason);
	case LRX_TC_ACT_STOLEN:
	case LRX_TC_ACT_QUEUED:
	case LRX_TC_ACT_TRAP:
		c->n_stolen++; /* consume_skb */
		return LRX_NEXT_DELIVER_V;
	case LRX_TC_ACT_REDIRECT:
		c->n_redirect++;
		/* TC_ACT_REDIRECT without bpf_redirect: skb_do_redirect finds
		 * no device and frees the packet */
		if (unlikely(redirect == LRX_XDP_REDIRECT_NONE))
			return lrx_next_drop(LRX_DROP_TC_EGRESS);
		return lrx_next_redirect((uint16_t)redirect);
	case LRX_TC_ACT_UNSPEC:
		c->n_unspec++;
		return LRX_NEXT_CONTINUE_V;
	default: /* OK, PIPE (RECLASSIFY restarts the chain) */
		c->n_ok++;
		return LRX_NEXT_CONTINUE_V;
	}
}

lrx_next_t lrx_tc_ingress_process_one(void *ctx, struct rte_mbuf *pkt)
{
	return tc_ingress_core(ctx, pkt);
}

static void tc_ingress_process_burst(void *ctx, struct rte_mbuf **pkts,
				     uint16_t n, lrx_next_t *nexts)
{
	struct tc_ctx *c = ctx;

	lrx_prefetch_start(pkts, n, c->prefetch);
	for (uint16_t i = 0; i < n; i++) {
		lrx_prefetch_ahead(pkts, i, n, c->prefetch);
		nexts[i] = tc_ingress_core(c, pkts[i]);
	}
}

/* The mirrors' copies, in the order they were made: each leaves by its
 * port (stage.h emit), at the end of the poll. */
static uint16_t tc_ingress_emit(void *ctx, struct rte_mbuf **pkts,
				lrx_next_t *nexts, uint16_t max)
{
	struct tc_ctx *c = ctx;
	uint16_t n = (uint16_t)RTE_MIN((uint32_t)max, c->n_copies - c->copies_out);

	for (uint16_t k = 0; k < n; k++) {
		pkts[k] = c->copies[c->copies_out + k];
		nexts[k] = lrx_next_redirect(c->copy_port[c->copies_out + k]);
	}
	c->copies_out += n;
	if (c->copies_out == c->n_copies)
		c->n_copies = c->copies_out = 0;
	return n;
}

static bool tc_ingress_makes_packets(const void *ctx)
{
	const struct tc_ctx *c = ctx;

	return c->copies_max != 0; /* a filter has a mirror */
}

static uint32_t tc_ingress_held(const void *ctx)
{
	const struct tc_ctx *c = ctx;

	return c->n_copies - c->copies_out;
}

/* ---- building the chains ------------------------------------------------ */

/* tcf_auto_prio: a filter added without a pref goes before the device's
 * first (lowest pref) tcf_proto, or at 0xc000 on an empty chain; devices
 * count apart ("all" is a device of its own here). */
static void tc_auto_prefs(struct lrx_tc_filter *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (f[i].pref != 0)
			continue;
		uint32_t first = 0;
		for (unsigned j = 0; j < i; j++)
			if (f[j].dev == f[i].dev && (first == 0 || f[j].pref < first))
				first = f[j].pref;
		f[i].pref = first ? first - 1 : 0xc000;
	}
}

static bool tc_on_port(const struct lrx_tc_filter *f, uint16_t port)
{
	return f->dev == port || f->dev == LRX_TC_DEV_ALL;
}

/* the classifier of a tcf_proto: a u32 table line is a u32 filter */
static enum lrx_tc_kind tc_tp_kind(const struct lrx_tc_filter *f)
{
	return f->kind == LRX_TC_KIND_U32_HT ? LRX_TC_KIND_U32 : f->kind;
}

static const char *const tc_kind_names[] = {
	[LRX_TC_KIND_BPF] = "bpf", [LRX_TC_KIND_FLOWER] = "flower",
	[LRX_TC_KIND_U32] = "u32", [LRX_TC_KIND_U32_HT] = "u32",
	[LRX_TC_KIND_MATCHALL] = "matchall",
};

static bool tc_same_mask(const struct lrx_tc_filter *a,
			 const struct lrx_tc_filter *b)
{
	return memcmp(&a->mask, &b->mask, sizeof(a->mask)) == 0 &&
	       a->sport_range == b->sport_range &&
	       a->dport_range == b->dport_range;
}

/* One port's tcf_protos: its filters grouped by pref (one kind and one
 * protocol per pref, else the kernel refuses the filter), prefs in
 * order; in a tp, cls_bpf programs newest first (list_add_rcu), flower
 * filters by mask (fl_classify walks the masks in creation order), each
 * mask's filters in the order they came. Appends to c->tps and c->order. */
static int tc_build_port(struct tc_ctx *c, uint16_t port, const char *file,
			 char *err, size_t err_len)
{
	struct tc_chain *chain = &c->chains[port];
	uint16_t in[LRX_TC_FILTERS_MAX];
	bool taken[LRX_TC_FILTERS_MAX];
	uint32_t last = 0;

	chain->first_tp = (uint16_t)c->n_tps;
	for (;;) {
		/* the next pref above last */
		uint32_t pref = UINT32_MAX;
		for (unsigned i = 0; i < c->n_filters; i++)
			if (tc_on_port(&c->filters[i], port) &&
			    c->filters[i].pref > last && c->filters[i].pref < pref)
				pref = c->filters[i].pref;
		if (pref == UINT32_MAX)
			break;
		last = pref;
		struct tc_tp *tp = &c->tps[c->n_tps++];
		const struct lrx_tc_filter *head = NULL;
		uint16_t n = 0;
		for (unsigned i = 0; i < c->n_filters; i++) {
			const struct lrx_tc_filter *f = &c->filters[i];
			if (!tc_on_port(f, port) || f->pref != pref)
				continue;
			if (head == NULL) {
				head = f;
			} else if (tc_tp_kind(f) != tc_tp_kind(head) ||
				   f->protocol != head->protocol) {
				snprintf(err, err_len,
					 "%.256s:%u: pref %u on port%u is already a "
					 "%s filter of protocol 0x%04x (line %u): "
					 "one pref is one classifier of one "
					 "protocol; use another pref", file,
					 f->line, pref, port,
					 tc_kind_names[tc_tp_kind(head)],
					 ntohs(head->protocol), head->line);
				return -EINVAL;
			} else if (f->kind == LRX_TC_KIND_MATCHALL) {
				snprintf(err, err_len, "%.256s:%u: pref %u on "
					 "port%u has a matchall filter already "
					 "(line %u): one per pref (mall_change: "
					 "File exists)", file, f->line, pref,
					 port, head->line);
				return -EINVAL;
			}
			in[n] = (uint16_t)i;
			taken[n++] = false;
		}
		tp->pref = pref;
		tp->kind = (uint8_t)tc_tp_kind(head);
		tp->root = tp->kind == LRX_TC_KIND_U32 ? tc_u32_root(c, port, pref) : 0;
		tp->protocol = head->protocol;
		tp->first = (uint16_t)c->n_order;
		tp->n = n;
		uint16_t *o = &c->order[c->n_order];
		c->n_order += n;
		if (tp->kind == LRX_TC_KIND_BPF) {
			for (uint16_t k = 0; k < n; k++)
				o[k] = in[n - 1 - k];
			continue;
		}
		uint16_t at = 0;
		for (uint16_t a = 0; a < n; a++) {
			if (taken[a])
				continue;
			for (uint16_t b = a; b < n; b++)
				if (!taken[b] && tc_same_mask(&c->filters[in[a]],
							      &c->filters[in[b]])) {
					o[at++] = in[b];
					taken[b] = true;
				}
		}
	}
	chain->n_tps = (uint16_t)(c->n_tps - chain->first_tp);
	return 0;
}

static int tc_load_programs(struct tc_ctx *c, const struct lrx_stage_init *init)
{
	for (unsigned i = 0; i < c->n_filters; i++) {
		const struct lrx_tc_filter *f = &c->filters[i];
		struct tc_filter_run *r = &c->run[i];
		char why[768];

		if (f->kind != LRX_TC_KIND_BPF)
			continue;
		int rc = lrx_bpf_prog_load(f->obj, f->sec, &lrx_bpf_ctx_skb,
					   c->window, init->socket_id, NULL, 0,
					   &r->prog, why, sizeof(why));
		if (rc < 0) {
			snprintf(init->err, init->err_len, "%s: line %u: %s",
				 init->instance, f->line, why);
			return rc;
		}
		lrx_xdp_prog_set_qsbr(r->prog, init->qsbr);
		r->bpf = lrx_xdp_prog_bpf(r->prog);
		r->jit = lrx_xdp_prog_jit(r->prog);
		if (c->jit && r->jit == NULL) {
			snprintf(init->err, init->err_len,
				 "%s: line %u: rte_bpf produced no JIT code for "
				 "%s on this machine; use exec=interp",
				 init->instance, f->line, f->obj);
			return -ENOTSUP;
		}
	}
	return 0;
}

static void tc_ingress_fini(void *ctx)
{
	struct tc_ctx *c = ctx;

	for (unsigned i = 0; c->run && i < c->n_filters; i++)
		lrx_xdp_prog_free(c->run[i].prog);
	for (uint32_t k = c->copies_out; k < c->n_copies; k++)
		rte_pktmbuf_free(c->copies[k]);
	rte_free(c->copies);
	rte_free(c->copy_port);
	c->copies = NULL;
	c->copy_port = NULL;
	c->n_copies = c->copies_out = c->copies_max = 0;
	tc_u32_free(c);
	rte_free(c->run);
	rte_free(c->filters);
	rte_free(c->order);
	rte_free(c->tps);
	c->run = NULL;
	c->filters = NULL;
	c->order = NULL;
	c->tps = NULL;
}

struct tc_conf {
	char filters[PATH_MAX];
	unsigned exec;
	uint32_t window;
	struct lrx_bpf_map_init map_init;
};

/* map_init into the maps of that name of every bpf filter's object (tc
 * loads each filter's object apart: each has its own maps, as many as
 * `bpftool map update` calls on the kernel's side) */
static int tc_apply_map_init(struct tc_ctx *c, const struct lrx_stage_init *init,
			     const struct lrx_bpf_map_init *mi)
{
	for (unsigned e = 0; e < mi->n; e++) {
		unsigned found = 0;
		for (unsigned i = 0; i < c->n_filters; i++) {
			struct lrx_xdp_map *map = c->run[i].prog == NULL ? NULL
				: lrx_xdp_prog_map(c->run[i].prog, mi->e[e].map);
			if (map == NULL)
				continue;
			found++;
			if (lrx_bpf_map_init_store(map, mi, e) != 0)
				return lrx_key_error(init, "map_init", mi->e[e].map,
						     lrx_bpf_map_init_valid);
		}
		if (found == 0)
			return lrx_key_error(init, "map_init", mi->e[e].map,
					     "no bpf filter's object has a map "
					     "of that name");
	}
	return 0;
}

/* Room for the mirrors' copies of one poll (the engine takes them at
 * its end: emit), when a filter has a mirror. */
#define TC_COPIES_MAX (4u * LRX_BURST_MAX)
static int tc_copies_alloc(struct tc_ctx *c, int socket_id)
{
	bool mirror = false;

	for (unsigned i = 0; i < c->n_filters; i++)
		for (unsigned a = 0; a < c->filters[i].n_actions; a++)
			mirror |= c->filters[i].actions[a].kind == LRX_TC_MIRRED_MIRROR;
	if (!mirror)
		return 0;
	c->copies = rte_zmalloc_socket("tc_copies", TC_COPIES_MAX * sizeof(*c->copies),
				       RTE_CACHE_LINE_SIZE, socket_id);
	c->copy_port = rte_zmalloc_socket("tc_copy_port",
					  TC_COPIES_MAX * sizeof(*c->copy_port),
					  RTE_CACHE_LINE_SIZE, socket_id);
	if (c->copies == NULL || c->copy_port == NULL)
		return -ENOMEM;
	c->copies_max = TC_COPIES_MAX;
	return 0;
}

static int tc_ingress_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct tc_conf *conf = init->conf;
	struct tc_ctx *c = ctx;
	const char *path = conf->filters;
	char *text = NULL;
	int rc;

	rc = lrx_meta_register();
	if (rc < 0)
		return rc;
	c->jit = conf->exec == 0;
	c->window = conf->window;
	snprintf(c->path, sizeof(c->path), "%.*s", (int)sizeof(c->path) - 1, path);
	c->prefetch = init->prefetch;
	if (path[0] == '\0') {
		if (conf->map_init.n != 0)
			return lrx_key_error(init, "map_init", conf->map_init.e[0].map,
					     "maps exist only for bpf filters");
		return 0; /* a clsact with no filter: every packet goes on */
	}

	char why[512];
	rc = lrx_rule_file_read(path, TC_FILE_MAX, &text, why, sizeof(why));
	if (rc < 0) {
		snprintf(init->err, init->err_len, "%s: key 'filters': %s",
			 init->instance, why);
		return rc;
	}
	c->filters = rte_zmalloc_socket("tc_filters",
					LRX_TC_FILTERS_MAX * sizeof(*c->filters),
					RTE_CACHE_LINE_SIZE, init->socket_id);
	if (c->filters == NULL) {
		free(text);
		return -ENOMEM;
	}
	char *copy = strdup(path);
	int n = copy ? lrx_tc_parse(text, path, dirname(copy), c->filters,
				    LRX_TC_FILTERS_MAX, why, sizeof(why))
		     : -ENOMEM;
	free(copy);
	free(text);
	if (n < 0) {
		snprintf(init->err, init->err_len, "%s: %s", init->instance, why);
		tc_ingress_fini(c);
		return n;
	}
	c->n_filters = (unsigned)n;
	tc_auto_prefs(c->filters, c->n_filters);

	/* every filter on every port at most: the sizes of tps and order */
	const size_t slots = (size_t)RTE_MAX_ETHPORTS * (c->n_filters + 1);
	c->run = rte_zmalloc_socket("tc_run", (c->n_filters + 1) * sizeof(*c->run),
				    RTE_CACHE_LINE_SIZE, init->socket_id);
	c->order = rte_zmalloc_socket("tc_order", slots * sizeof(*c->order),
				     RTE_CACHE_LINE_SIZE, init->socket_id);
	c->tps = rte_zmalloc_socket("tc_tps", slots * sizeof(*c->tps),
				    RTE_CACHE_LINE_SIZE, init->socket_id);
	if (c->run == NULL || c->order == NULL || c->tps == NULL) {
		tc_ingress_fini(c);
		return -ENOMEM;
	}
	rc = tc_copies_alloc(c, init->socket_id);
	if (rc == 0)
		rc = tc_u32_build(c, path, init->socket_id, why, sizeof(why));
	if (rc == -EINVAL)
		snprintf(init->err, init->err_len, "%s: %s", init->instance, why);
	for (uint16_t port = 0; rc == 0 && port < RTE_MAX_ETHPORTS; port++) {
		rc = tc_build_port(c, port, path, why, sizeof(why));
		if (rc < 0) {
			snprintf(init->err, init->err_len, "%s: %s",
				 init->instance, why);
			break;
		}
	}
	if (rc == 0)
		rc = tc_load_programs(c, init);
	if (rc == 0)
		rc = tc_apply_map_init(c, init, &conf->map_init);
	if (rc < 0)
		tc_ingress_fini(c);
	return rc;
}

/* tc's "Cannot find device": a filter on, or a mirred redirect to, a port
 * the run does not have is refused once the ports are known. */
static bool tc_port_in_run(const struct lrx_stage_start *start, uint16_t port)
{
	for (unsigned i = 0; i < start->n_ports; i++)
		if (start->ports[i] == port)
			return true;
	return false;
}

/* the first mirred action of f whose port the run lacks, or NULL */
static const struct lrx_tc_action *tc_mirred_missing(const struct lrx_tc_filter *f,
						     const struct lrx_stage_start *start)
{
	for (unsigned a = 0; a < f->n_actions; a++)
		if (f->actions[a].kind != LRX_TC_GACT &&
		    !tc_port_in_run(start, f->actions[a].port))
			return &f->actions[a];
	return NULL;
}

static int tc_ingress_start(void *ctx, const struct lrx_stage_start *start)
{
	const struct tc_ctx *c = ctx;

	for (unsigned i = 0; i < c->n_filters; i++) {
		const struct lrx_tc_filter *f = &c->filters[i];
		const bool dev_bad = f->dev != LRX_TC_DEV_ALL && !tc_port_in_run(start, f->dev);
		const struct lrx_tc_action *a = dev_bad ? NULL : tc_mirred_missing(f, start);
		if (!dev_bad && a == NULL)
			continue;
		char ports[160] = "";
		size_t used = 0;
		for (unsigned p = 0; p < start->n_ports && used < sizeof(ports); p++) {
			int n = snprintf(ports + used, sizeof(ports) - used, "%sport%u",
					 p ? ", " : "", start->ports[p]);
			used += n > 0 ? (size_t)n : 0;
		}
		snprintf(start->err, start->err_len,
			 "%s: %s:%u: %s port%u: no such port in this run (tc: Cannot "
			 "find device); its ports: %s", start->instance, c->path, f->line,
			 dev_bad ? "dev" : a->kind == LRX_TC_MIRRED_MIRROR ? "mirred mirror to"
			 : "mirred redirect to", dev_bad ? f->dev : a->port,
			 ports);
		return -EINVAL;
	}
	return 0;
}

static const char *const tc_execs[] = {"jit", "interp", NULL};
static const struct lrx_value_key tc_ingress_keys[] = {
	LRX_KEY_STRING(struct tc_conf, filters, "filters", "",
		       "file of tc -batch lines: 'filter add dev portN ingress "
		       "[protocol P] [pref N] bpf da obj FILE.o [sec S]', "
		       "'... flower|u32|matchall ... action A' (docs/tc.md); "
		       "empty: no filter"),
	LRX_KEY_CHOICE(struct tc_conf, exec, "exec", "jit", tc_execs,
		       "rte_bpf x86 JIT or interpreter for bpf filters"),
	LRX_KEY_UINT(struct tc_conf, window, "window", "1600", 64, 65535 - LRX_SKB_MD_SIZE,
		     "bytes past data a bpf filter may address (checked by "
		     "rte_bpf; frames in mbufs with less room are dropped, "
		     "counted in window_error)"),
	LRX_KEY_CUSTOM(struct tc_conf, map_init, "map_init", "",
		       lrx_bpf_map_init_parse, lrx_bpf_map_init_valid,
		       "NAME:KEY=VALUE,...;NAME2:... initial entries of the bpf "
		       "filters' maps (as xdp's map_init)"),
	{.name = NULL},
};

#define TC_COUNTER(n, f, ...) { .name = n, .offset = offsetof(struct tc_ctx, f), __VA_ARGS__ }
static const struct lrx_stage_counter tc_ingress_counters[] = {
	TC_COUNTER("classified", n_classified),
	TC_COUNTER("act_ok", n_ok),
	TC_COUNTER("act_shot", n_shot),
	TC_COUNTER("act_stolen", n_stolen),
	TC_COUNTER("act_redirect", n_redirect),
	TC_COUNTER("act_unspec", n_unspec),
	TC_COUNTER("bpf_runs", n_bpf_runs),
	TC_COUNTER("flower_calls", n_flower_calls),
	TC_COUNTER("window_error", n_window_error),
	TC_COUNTER("u32_calls", n_u32_calls),
	TC_COUNTER("matchall_calls", n_matchall_calls),
	TC_COUNTER("reclassify_loop", n_reclassify_loop),
	TC_COUNTER("mirrored", n_mirrored, .role = LRX_COUNTER_MADE),
	TC_COUNTER("mirror_failed", n_mirror_failed),
	{ .name = NULL },
};

LRX_STAGE_DEFINE(lrx_stage_tc_ingress, struct tc_ctx, struct tc_conf,
		 tc_ingress_keys, tc_ingress_counters,
	.name = TC_INGRESS_STAGE_NAME,
	.summary = "tc ingress hook (sch_handle_ingress/tcf_classify): cls_bpf "
		   "eBPF objects (__sk_buff), flower, u32 and matchall filters "
		   "per port",
	.needs = LRX_PROVIDES_META,
	.init = tc_ingress_init,
	.start = tc_ingress_start,
	.fini = tc_ingress_fini,
	.process_one = lrx_tc_ingress_process_one,
	.process_burst = tc_ingress_process_burst,
	.emit = tc_ingress_emit,
	.makes_packets = tc_ingress_makes_packets,
	.held = tc_ingress_held,
	.map_at = tc_map_at,
	.map_next = tc_map_next,
	.map_write = tc_map_write,
)
