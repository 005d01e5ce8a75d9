/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux: ip_rcv / ipv6_rcv and the protocol dispatch after them, in
 * the kernel's order, with its drop reasons and SNMP counters; the
 * protocols and the parts of IP input with keys of their own are modules
 * in their own files (l3_modules.h). Two levels of handler tables, each
 * entry a pair of function pointers (one packet / one sublist) around one
 * inline core, set by the module that receives it:
 *   by ethertype (the kernel's packet_type list: deliver_skb's pt->func):
 *     IPv4, IPv6 (here), ARP; anything else drops UNHANDLED_PROTO;
 *   by IP protocol (inet_protos / inet6_protos): UDP, TCP, ICMP, ICMPv6;
 *     anything else drops IP_NOPROTO (ip_protocol_deliver_rcu).
 * dispatch=direct (the default) turns the calls to the two common entries
 * into direct calls, as INDIRECT_CALL_2 / INDIRECT_CALL_INET do in every
 * kernel built with CONFIG_RETPOLINE (distributions' kernels, whether or
 * not the mitigation is on at run time).
 *
 * The burst path is the kernel's list path: the burst is split into runs
 * of the same ethertype handler (__netif_receive_skb_list_core) and each
 * run goes to its handler in one call (ip_list_rcv); that handler checks
 * every packet (ip_rcv_core), reuses the previous packet's route lookup
 * when the destination is unchanged (ip_can_use_hint) and splits the
 * survivors into runs of the same L4 handler, one call each
 * (ip_sublist_rcv). Same verdicts and counters as the per-packet path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_ip.h>

#include "listrx_build.h"
#include "l3_modules.h"
#include "ipv6_rcv.h"
#include "prefetch.h"
#include "static_entries.h"

/* 0, 1, 2, ...: the index list of a whole burst (filled once, read only) */
uint16_t l3_identity[LRX_BURST_MAX];

RTE_INIT(l3_identity_init)
{
	for (uint16_t i = 0; i < LRX_BURST_MAX; i++)
		l3_identity[i] = i;
}

/* ---- dispatch -------------------------------------------------------------
 * INDIRECT_CALL_2: with dispatch=direct the two common targets are
 * compared and called directly; otherwise an indirect call, as a kernel
 * built without CONFIG_RETPOLINE. */
#define L3_CALL2(c, fn, f1, f2, ...)                                          \
	((c)->direct && (fn) == (f1)   ? f1(__VA_ARGS__)                      \
	 : (c)->direct && (fn) == (f2) ? f2(__VA_ARGS__)                      \
				       : (fn)(__VA_ARGS__))

/* No handler for the protocol (ip_protocol_deliver_rcu: ICMP protocol
 * unreachable unless the route is broadcast or multicast;
 * ip6_protocol_deliver_rcu: a parameter problem pointing at the next
 * header field that named it). */
static lrx_next_t l3_unknown_proto(struct l3_ctx *c, struct rte_mbuf *m,
				   const struct lrx_meta *meta, int fam)
{
	c->ip[fam].in_unknown_protos++;
	const lrx_next_t fate = lrx_next_drop(LRX_DROP_IP_NOPROTO);
	if (fam == L3_FAMILY_V4)
		return l3_route_is_multi(c, m, meta, fam)
			       ? fate : l3_ask(c, m, fate, L3_REPLY_PROTO_UNREACH4, 0);
	const uint32_t nhoff = l3_ipv6_nhoff(l3_frame(m), meta->network_offset,
					     meta->transport_offset);
	return l3_ask(c, m, fate, L3_REPLY_PARAMPROB6,
		      l3_reply_paramprob6(L3_PARAMPROB6_NEXTHDR, nhoff));
}

/* ip_protocol_deliver_rcu / ip6_protocol_deliver_rcu for one packet whose
 * L3 checks passed. */
static inline lrx_next_t l3_local_deliver_one(struct l3_ctx *c,
					      struct rte_mbuf *m,
					      struct lrx_meta *meta, int fam)
{
	const struct l3_handler *h = c->l4_table[fam][meta->l4_proto];
	if (unlikely(h == NULL))
		return l3_unknown_proto(c, m, meta, fam);
	c->ip[fam].in_delivers++;
	return L3_CALL2(c, h->rcv, l3_tcp_rcv, l3_udp_rcv, c, m, meta);
}

/* One L4 sublist: pkts[idx[0..n-1]], all of protocol proto. */
static inline void l3_l4_sublist(struct l3_ctx *c, struct rte_mbuf **pkts,
				 struct lrx_meta *const *metas,
				 const uint16_t *idx, uint16_t n,
				 lrx_next_t *nexts, int fam, uint8_t proto)
{
	const struct l3_handler *h = c->l4_table[fam][proto];
	if (unlikely(h == NULL)) {
		for (uint16_t k = 0; k < n; k++)
			nexts[idx[k]] = l3_unknown_proto(c, pkts[idx[k]],
							 metas[idx[k]], fam);
		return;
	}
	c->ip[fam].in_delivers += n;
	c->l4_sublists++;
	L3_CALL2(c, h->list_rcv, l3_tcp_list_rcv, l3_udp_list_rcv, c, pkts,
		 metas, idx, n, nexts);
}

/* The list form (ip_sublist_rcv): survivors pkts[idx[0..n-1]], one
 * handler call per sublist of one L4 protocol: runs of consecutive
 * packets, or with list_split=gather one sublist per protocol in arrival
 * order. uniform: the caller saw one protocol only, so the list is one
 * sublist without a scan. */
static void l3_local_deliver_list(struct l3_ctx *c, struct rte_mbuf **pkts,
				  struct lrx_meta *const *metas,
				  const uint16_t *idx, uint16_t n,
				  lrx_next_t *nexts, int fam, bool uniform)
{
	if (n == 0)
		return;
	if (uniform) {
		l3_l4_sublist(c, pkts, metas, idx, n, nexts, fam,
			      metas[idx[0]]->l4_proto);
		return;
	}
	if (c->split == L3_SPLIT_GATHER) {
		/* a protocol's packets, then the next protocol's (first
		 * seen first); rest keeps the others in order */
		uint16_t rest[LRX_BURST_MAX], same[LRX_BURST_MAX];
		const uint16_t *todo = idx;
		while (n) {
			const uint8_t proto = metas[todo[0]]->l4_proto;
			uint16_t n_same = 0, n_rest = 0;
			for (uint16_t k = 0; k < n; k++) {
				const uint16_t i = todo[k];
				const bool hit = metas[i]->l4_proto == proto;
				same[n_same] = i;
				rest[n_rest] = i;
				n_same += hit;
				n_rest += !hit;
			}
			l3_l4_sublist(c, pkts, metas, same, n_same, nexts, fam,
				      proto);
			todo = rest;
			n = n_rest;
		}
		return;
	}
	uint16_t start = 0;
	while (start < n) {
		const uint8_t proto = metas[idx[start]]->l4_proto;
		uint16_t end = start + 1;
		while (end < n && metas[idx[end]]->l4_proto == proto)
			end++;
		l3_l4_sublist(c, pkts, metas, idx + start, end - start, nexts,
			      fam, proto);
		start = end;
	}
}

/* ip_rcv_core for one IPv4 packet: the header's checks, the trim to its
 * total length. Returns CONTINUE when the packet goes on to the
 * PREROUTING hook and ip_rcv_finish. */
static __rte_always_inline lrx_next_t l3_ipv4_rcv_early(struct l3_ctx *c,
							struct rte_mbuf *m,
							struct lrx_meta *meta)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V4];
	const uint8_t *hdr;
	uint32_t skb_len;
	lrx_next_t next = l3_ip_rcv_prologue(c, m, meta, mib,
					     sizeof(struct rte_ipv4_hdr),
					     &hdr, &skb_len);
	if (unlikely(next != LRX_NEXT_CONTINUE_V))
		return next;

	const uint32_t noff = meta->network_offset;
	const struct rte_ipv4_hdr *iph = (const struct rte_ipv4_hdr *)hdr;
	const uint32_t ihl = (iph->version_ihl & RTE_IPV4_HDR_IHL_MASK) * 4u;
	if (unlikely(ihl < 20 || (iph->version_ihl >> 4) != 4 ||
		     m->data_len < noff + ihl))
		return l3_ip_inhdr_error(mib, LRX_DROP_NOT_SPECIFIED);
	/* RFC 1122 3.2.1.2: silently discard on a bad checksum. listrx
	 * trusts the NIC's IP checksum hint if told to (the kernel always
	 * runs ip_fast_csum). */
	if (c->trust_ip_csum_hint &&
	    meta->l3_csum_state == LRX_CHECKSUM_UNNECESSARY) {
		c->ip_csum_hint_skipped++;
	} else {
		c->ip_csum_verified++;
		if (unlikely(rte_raw_cksum(iph, ihl) != 0xffff))
			return l3_ip_csum_error(mib);
	}
	uint32_t len = rte_be_to_cpu_16(iph->total_length);
	/* iph_totlen: a BIG TCP GRO packet over 64 KB has tot_len 0
	 * (iph_set_totlen); its length is the skb's */
	if (unlikely(len == 0) && meta->gso_size && iph->next_proto_id == IPPROTO_TCP)
		len = skb_len;
	if (unlikely(skb_len < len)) {
		mib->in_truncated_pkts++;
		return l3_ip_drop(LRX_DROP_PKT_TOO_SMALL);
	}
	if (unlikely(len < ihl))
		return l3_ip_inhdr_error(mib, LRX_DROP_NOT_SPECIFIED);
	/* Our transport medium may have padded the buffer out: trim to the
	 * true length (pskb_trim_rcsum). */
	if (skb_len > len) {
		l3_trim_to(m, noff + len);
		c->l3_trimmed++;
	}
	meta->len = len;
	meta->transport_offset = (uint16_t)(noff + ihl);
	meta->l4_proto = iph->next_proto_id;
	return LRX_NEXT_CONTINUE_V;
}

/* ip_rcv_finish and ip_local_deliver for one IPv4 packet that passed
 * PREROUTING: the route (or the previous packet's: hint may be NULL, as
 * ip_rcv), the options, ip_defrag, then the LOCAL_IN hook. Returns
 * CONTINUE when the packet is to be delivered locally. */
static __rte_always_inline lrx_next_t l3_ipv4_rcv_finish(struct l3_ctx *c,
							 struct rte_mbuf *m,
							 struct lrx_meta *meta,
							 struct l3_route_hint *hint)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V4];
	const struct rte_ipv4_hdr *iph =
		(const struct rte_ipv4_hdr *)(l3_frame(m) + meta->network_offset);
	const uint32_t ihl = (iph->version_ihl & RTE_IPV4_HDR_IHL_MASK) * 4u;

	/* ip_rcv_finish_core: route (or the previous packet's), options,
	 * then the route's counters; ip_error's after all of them */
	enum l3_rt rt;
	lrx_next_t verdict = l3_ipv4_route(c, l3_route_of(c), iph, hint, m->port, &rt);
	if (verdict != LRX_NEXT_CONTINUE_V)
		return verdict;
	if (unlikely(ihl > 20)) {
		verdict = l3_ipv4_rcv_options(c, m, meta, (const uint8_t *)iph,
					      ihl, rt);
		if (verdict != LRX_NEXT_CONTINUE_V)
			return verdict;
	}
	if (unlikely(rt != L3_RT_LOCAL)) {
		if (rt == L3_RT_UNREACH) {
			mib->in_addr_errors++;
			return lrx_next_drop(LRX_DROP_IP_INADDRERRORS);
		}
		if (rt == L3_RT_MCAST) {
			mib->in_mcast_pkts++;
			mib->in_mcast_octets += meta->len;
		} else {
			mib->in_bcast_pkts++;
			mib->in_bcast_octets += meta->len;
		}
	}
	/* ip_local_deliver: fragments go to ip_defrag, which holds them
	 * (CONSUMED) until the one that completes the datagram comes back
	 * as the whole datagram (reasm.c) */
	if (unlikely(iph->fragment_offset &
		     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
				      RTE_IPV4_HDR_OFFSET_MASK))) {
		verdict = l3_reasm_ipv4(l3_reasm_of(c), m, meta);
		if (verdict != LRX_NEXT_CONTINUE_V)
			return verdict;
	}
	/* NF_HOOK(NF_INET_LOCAL_IN, ..., ip_local_deliver_finish) */
	if (l3_nf_hook_of(c)->rules != NULL)
		return l3_ipv4_nf_hook(c, m, meta, LRX_NF_LOCAL_IN);
	return LRX_NEXT_CONTINUE_V;
}

/* NF_HOOK(NF_INET_PRE_ROUTING): with conntrack, nf_defrag_ipv4 (-400)
 * first: a fragment waits there, the whole datagram goes on (ip_defrag
 * with IP_DEFRAG_CONNTRACK_IN, the same counters), so every hook and
 * ip_local_deliver see it whole. */
static __rte_noinline lrx_next_t l3_ipv4_nf_prerouting(struct l3_ctx *c, struct rte_mbuf *m,
						       struct lrx_meta *meta)
{
	const struct rte_ipv4_hdr *iph =
		(const struct rte_ipv4_hdr *)(l3_frame(m) + meta->network_offset);
	if (l3_nf_hook_of(c)->ct4 != NULL &&
	    (iph->fragment_offset &
	     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))) {
		const lrx_next_t next = l3_reasm_ipv4(l3_reasm_of(c), m, meta);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	return l3_ipv4_nf_hook(c, m, meta, LRX_NF_PRE_ROUTING);
}

/* Everything ip_rcv does to one packet before the L4 handler: ip_rcv_core,
 * NF_HOOK(NF_INET_PRE_ROUTING), ip_rcv_finish, ip_local_deliver. Returns
 * CONTINUE when the packet is to be delivered locally. hint may be NULL
 * (per-packet path: no hint, as ip_rcv). */
static __rte_always_inline lrx_next_t l3_ipv4_rcv_core(struct l3_ctx *c, struct rte_mbuf *m,
					  struct lrx_meta *meta,
					  struct l3_route_hint *hint)
{
	lrx_next_t next = l3_ipv4_rcv_early(c, m, meta);
	if (unlikely(next != LRX_NEXT_CONTINUE_V))
		return next;
	if (l3_nf_hook_of(c)->rules != NULL) {
		next = l3_ipv4_nf_prerouting(c, m, meta);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	return l3_ipv4_rcv_finish(c, m, meta, hint);
}

/* ip_list_rcv / ipv6_list_rcv over pkts[idx[0..n-1]], or over pkts[0..n-1]
 * when idx is NULL (a contiguous run: no indirection). A contiguous run
 * whose packets all survive goes on to L4 as it is (l3_identity: the L4
 * loop reads packet k at k); otherwise the survivors' indexes. */
static __rte_always_inline void
l3_ip_list_rcv(struct l3_ctx *c, struct rte_mbuf **pkts,
	       struct lrx_meta *const *metas, const uint16_t *idx, uint16_t n,
	       lrx_next_t *nexts, int fam,
	       lrx_next_t (*core)(struct l3_ctx *, struct rte_mbuf *,
				  struct lrx_meta *, struct l3_route_hint *))
{
	uint16_t live[LRX_BURST_MAX];
	uint16_t n_live = 0;
	unsigned protos_or = 0, protos_and = 0xff;
	struct l3_route_hint hint = {.valid = false};
	struct l3_route_hint *hp = l3_route_of(c)->route_hint ? &hint : NULL;
	for (uint16_t k = 0; k < n; k++) {
		const uint16_t i = idx ? idx[k] : k;
		struct lrx_meta *meta = metas[i];
		lrx_next_t next = core(c, pkts[i], meta, hp);
		nexts[i] = next;
		live[n_live] = i;
		const bool ok = next == LRX_NEXT_CONTINUE_V;
		/* equal OR and AND of the survivors' protocols: one L4 run,
		 * no scan (branch-free selects) */
		protos_or |= ok ? meta->l4_proto : 0u;
		protos_and &= ok ? meta->l4_proto : 0xffu;
		n_live += ok;
	}
	l3_local_deliver_list(c, pkts, metas,
			      idx == NULL && n_live == n ? l3_identity : live,
			      n_live, nexts, fam, protos_or == protos_and);
}

/* ip_list_rcv with netfilter's PREROUTING hook on the list, as the
 * kernel runs it: ip_rcv_core over the sublist, NF_HOOK_LIST
 * (nf_hook_slow_list: the hook on each packet, the survivors stay a list),
 * then ip_list_rcv_finish over the survivors, whose ip_local_deliver runs
 * the LOCAL_IN hook packet by packet. Same verdicts and counters as
 * l3_ip_list_rcv; only the order of the work differs. */
static void l3_ipv4_list_rcv_nf(struct l3_ctx *c, struct rte_mbuf **pkts,
				struct lrx_meta *const *metas,
				const uint16_t *idx, uint16_t n,
				lrx_next_t *nexts)
{
	uint16_t live[LRX_BURST_MAX], passed[LRX_BURST_MAX];
	uint16_t n_live = 0, n_passed = 0;
	unsigned protos_or = 0, protos_and = 0xff;
	struct l3_route_hint hint = {.valid = false};
	struct l3_route_hint *hp = l3_route_of(c)->route_hint ? &hint : NULL;

	for (uint16_t k = 0; k < n; k++) {
		const uint16_t i = idx ? idx[k] : k;
		nexts[i] = l3_ipv4_rcv_early(c, pkts[i], metas[i]);
		live[n_live] = i;
		n_live += nexts[i] == LRX_NEXT_CONTINUE_V;
	}
	for (uint16_t k = 0; k < n_live; k++) {
		const uint16_t i = live[k];
		nexts[i] = l3_ipv4_nf_hook(c, pkts[i], metas[i],
					   LRX_NF_PRE_ROUTING);
		passed[n_passed] = i;
		n_passed += nexts[i] == LRX_NEXT_CONTINUE_V;
	}
	n_live = 0;
	for (uint16_t k = 0; k < n_passed; k++) {
		const uint16_t i = passed[k];
		struct lrx_meta *meta = metas[i];
		const lrx_next_t next = l3_ipv4_rcv_finish(c, pkts[i], meta, hp);
		nexts[i] = next;
		live[n_live] = i;
		const bool ok = next == LRX_NEXT_CONTINUE_V;
		protos_or |= ok ? meta->l4_proto : 0u;
		protos_and &= ok ? meta->l4_proto : 0xffu;
		n_live += ok;
	}
	l3_local_deliver_list(c, pkts, metas, live, n_live, nexts,
			      L3_FAMILY_V4, protos_or == protos_and);
}

/* ip_rcv / ipv6_rcv (one packet) and ip_list_rcv / ipv6_list_rcv (a
 * sublist: l3_identity for a contiguous run, else the packets' indexes) */
#define L3_DEFINE_IP_HANDLER(family, core, fam)                                 \
	static lrx_next_t l3_##family##_rcv(struct l3_ctx *c,                   \
					  struct rte_mbuf *m,                 \
					  struct lrx_meta *meta)              \
	{                                                                     \
		lrx_next_t next = core(c, m, meta, NULL);                     \
		if (next != LRX_NEXT_CONTINUE_V)                              \
			return next;                                          \
		return l3_local_deliver_one(c, m, meta, fam);                 \
	}                                                                     \
	static void l3_##family##_list_rcv(struct l3_ctx *c,                    \
					 struct rte_mbuf **pkts,              \
					 struct lrx_meta *const *metas,       \
					 const uint16_t *idx, uint16_t n,     \
					 lrx_next_t *nexts)                   \
	{                                                                     \
		if (fam == L3_FAMILY_V4 && l3_nf_hook_of(c)->rules != NULL) { \
			l3_ipv4_list_rcv_nf(c, pkts, metas,                   \
					    idx == l3_identity ? NULL : idx,  \
					    n, nexts);                        \
			return;                                               \
		}                                                             \
		if (idx == l3_identity)                                       \
			l3_ip_list_rcv(c, pkts, metas, NULL, n, nexts, fam,   \
				       core);                                 \
		else                                                          \
			l3_ip_list_rcv(c, pkts, metas, idx, n, nexts, fam,    \
				       core);                                 \
	}                                                                     \
	static const struct l3_handler l3_##family##_handler = {                \
		.name = #family,                                                \
		.rcv = l3_##family##_rcv,                                       \
		.list_rcv = l3_##family##_list_rcv,                             \
	};
L3_DEFINE_IP_HANDLER(ipv4, l3_ipv4_rcv_core, L3_FAMILY_V4)
L3_DEFINE_IP_HANDLER(ipv6, l3_ipv6_rcv_core, L3_FAMILY_V6)

/* ---- the stage: first-level dispatch by ethertype ------------------------- */

/* The ethertype's class, computed without a branch: in a mixed burst the
 * class changes at random and a compare chain would mispredict there (and
 * the compiler turns compares of one value into a chain). A two-bit hash
 * of the ethertype picks the one candidate it can be; a compare with it
 * keeps or clears the class. */
static inline enum l3_class l3_classify(const struct lrx_meta *meta)
{
	static const uint16_t etype[4] = {
		RTE_ETHER_TYPE_IPV4, 0xffff, RTE_ETHER_TYPE_ARP,
		RTE_ETHER_TYPE_IPV6};
	static const uint8_t class[4] = {
		L3_CLASS_IPV4, L3_CLASS_OTHER, L3_CLASS_ARP, L3_CLASS_IPV6};
	RTE_BUILD_BUG_ON(L3_CLASS_OTHER != 0);
	RTE_BUILD_BUG_ON((((RTE_ETHER_TYPE_IPV4 >> 8) ^ RTE_ETHER_TYPE_IPV4) & 3) != 0 ||
			 (((RTE_ETHER_TYPE_ARP >> 8) ^ RTE_ETHER_TYPE_ARP) & 3) != 2 ||
			 (((RTE_ETHER_TYPE_IPV6 >> 8) ^ RTE_ETHER_TYPE_IPV6) & 3) != 3);
	const uint16_t p = meta->protocol;
	const unsigned h = (unsigned)((p >> 8) ^ p) & 3;
	return (enum l3_class)(class[h] & -(unsigned)(p == etype[h]));
}

/* The same class for one packet: the per-packet path branches on the
 * class right after (the handler call, INDIRECT_CALL_INET), so a compare
 * chain costs no extra misprediction and fewer instructions than the
 * table. The agreement tests compare the two paths on every class. */
static inline enum l3_class l3_classify_one(const struct lrx_meta *meta)
{
	/* IPv4 first: GCC orders the switch's compares by value */
	if (likely(meta->protocol == RTE_ETHER_TYPE_IPV4))
		return L3_CLASS_IPV4;
	switch (meta->protocol) {
	case RTE_ETHER_TYPE_IPV4: return L3_CLASS_IPV4;
	case RTE_ETHER_TYPE_IPV6: return L3_CLASS_IPV6;
	case RTE_ETHER_TYPE_ARP: return L3_CLASS_ARP;
	default: return L3_CLASS_OTHER;
	}
}

/* __netif_receive_skb_core found no packet_type for the protocol (an
 * unknown ethertype, or a VLAN tag left after one for no VLAN device):
 * the device's rx_dropped (not rx_nohandler: that one is for
 * RX_HANDLER_EXACT's deliver_exact), then kfree_skb UNHANDLED_PROTO. */
static void l3_no_ptype(struct l3_ctx *c, const struct rte_mbuf *m)
{
	c->rx_dropped++;
	if (m->port < RTE_MAX_ETHPORTS)
		c->dev[m->port].rx_dropped++;
}

static inline lrx_next_t l3_demux_core(struct l3_ctx *c, struct rte_mbuf *m)
{
	struct lrx_meta *meta = lrx_meta(m);
	const struct l3_handler *h = c->l3_table[l3_classify_one(meta)];
	if (unlikely(h == NULL)) {
		l3_no_ptype(c, m);
		return lrx_next_drop(LRX_DROP_UNHANDLED_PROTO);
	}
	/* INDIRECT_CALL_INET(pt_prev->func, ipv6_rcv, ip_rcv, ...) */
	return L3_CALL2(c, h->rcv, l3_ipv4_rcv, l3_ipv6_rcv, c, m, meta);
}

/* The replies the list path's handlers asked for, in arrival order. */
static void l3_demux_replies(struct l3_ctx *c, struct rte_mbuf **pkts,
			     uint16_t n, lrx_next_t *nexts)
{
	c->reply_later = false;
	for (uint16_t i = 0; i < n && c->reply.replies_asked; i++)
		if (l3_reply_asked(nexts[i]))
			nexts[i] = l3_reply_send(c, pkts[i], nexts[i]);
	c->reply.replies_asked = 0;
}

lrx_next_t lrx_l3_demux_process_one(void *ctx, struct rte_mbuf *pkt)
{
	return l3_demux_core(ctx, pkt);
}

/* ip_rcv / ipv6_rcv of one packet with the handler calls that
 * dispatch=direct makes direct (ip_rcv itself, udp_rcv) as their inline
 * cores: the per-packet path without its two call frames, for the burst
 * entry's loop (VPP's node loop over its frame). Same cores, counters
 * and verdicts as l3_ipv4_rcv / l3_ipv6_rcv. */
static __rte_always_inline lrx_next_t
l3_ip_rcv_inline(struct l3_ctx *c, struct rte_mbuf *m, struct lrx_meta *meta, const int fam,
		 lrx_next_t (*core)(struct l3_ctx *, struct rte_mbuf *, struct lrx_meta *,
				    struct l3_route_hint *))
{
	lrx_next_t next = core(c, m, meta, NULL);
	if (next != LRX_NEXT_CONTINUE_V)
		return next;
	const struct l3_handler *h = c->l4_table[fam][meta->l4_proto];
	if (likely(h == &l3_udp_handler)) {
		c->ip[fam].in_delivers++;
		return l3_udp_core_(c, l3_udp_of(c), m, meta, fam, false);
	}
	return l3_local_deliver_one(c, m, meta, fam);
}

/* The burst entry's packet (list_split=none). */
static __rte_always_inline lrx_next_t l3_demux_core_inline(struct l3_ctx *c, struct rte_mbuf *m)
{
	struct lrx_meta *meta = lrx_meta(m);
	const struct l3_handler *h = c->l3_table[l3_classify_one(meta)];
	if (likely(c->direct && h == &l3_ipv4_handler))
		return l3_ip_rcv_inline(c, m, meta, L3_FAMILY_V4, l3_ipv4_rcv_core);
	if (c->direct && h == &l3_ipv6_handler)
		return l3_ip_rcv_inline(c, m, meta, L3_FAMILY_V6, l3_ipv6_rcv_core);
	return l3_demux_core(c, m);
}

static __rte_always_inline lrx_next_t l3_demux_one(void *ctx, struct rte_mbuf *m)
{
	return l3_demux_core_inline(ctx, m);
}

/* With conntrack on, the burst packet by packet: a flow's packets change
 * its entry one after the other, and the host's reply to one is what
 * makes the next ESTABLISHED; the kernel's list path (PREROUTING over the
 * whole sublist before any LOCAL_IN) would give verdicts that depend on
 * where a burst is cut. Out of line: the sublist path stays as it was. */
static __rte_noinline void l3_demux_burst_in_order(struct l3_ctx *c, struct rte_mbuf **pkts,
						   uint16_t n, lrx_next_t *nexts)
{
	lrx_list_loop(c, pkts, n, nexts, c->prefetch, l3_demux_one);
}

/* One first-level sublist: the handler of class cls over pkts[idx[..n]]
 * (idx l3_identity with the arrays at the run's start, or the class's
 * indexes with the arrays at the burst's start). */
static inline void l3_demux_sublist(struct l3_ctx *c, enum l3_class cls,
				    struct rte_mbuf **pkts,
				    struct lrx_meta *const *metas,
				    const uint16_t *idx, uint16_t n,
				    lrx_next_t *nexts)
{
	const struct l3_handler *h = c->l3_table[cls];
	if (unlikely(h == NULL)) {
		for (uint16_t k = 0; k < n; k++) {
			nexts[idx[k]] = lrx_next_drop(LRX_DROP_UNHANDLED_PROTO);
			l3_no_ptype(c, pkts[idx[k]]);
		}
		return;
	}
	c->l3_sublists++;
	L3_CALL2(c, h->list_rcv, l3_ipv4_list_rcv, l3_ipv6_list_rcv, c, pkts,
		 metas, idx, n, nexts);
}

/* __netif_receive_skb_list_core: one handler call per sublist. The
 * kernel's sublists are runs of consecutive packets of the same handler
 * (list_split=runs); list_split=gather makes one sublist per class, in
 * arrival order within it, as VPP's next-node frames (a mixed burst then
 * costs one call per class, not one per run). Verdicts and SNMP counters
 * are the same either way: the classes' handlers share no state that
 * depends on their order (reassembly accounts each family apart). */
static void l3_demux_process_burst(void *ctx, struct rte_mbuf **pkts,
				   uint16_t n, lrx_next_t *nexts)
{
	struct l3_ctx *c = ctx;
	struct lrx_meta *metas[LRX_BURST_MAX];
	uint8_t cls[LRX_BURST_MAX];
	uint16_t lists[L3_CLASS_MAX][LRX_BURST_MAX];

	if (n == 0)
		return;
	if (c->split == L3_SPLIT_NONE) {
		/* no sublists: the per-packet path over the burst, in one
		 * call (the engine's saving), with its prefetch */
		lrx_list_loop(c, pkts, n, nexts, c->prefetch, l3_demux_one);
		return;
	}
	if (unlikely(l3_nf_hook_of(c)->ct != NULL)) {
		l3_demux_burst_in_order(c, pkts, n, nexts);
		return;
	}
	c->reply_later = true;
	/* one pass: the metadata pointer and class of each packet, and each
	 * class's index list (counts in registers: a count in memory would
	 * chain every packet to the previous one through store forwarding);
	 * it prefetches the packets ahead for the handlers that follow */
	lrx_prefetch_start(pkts, n, c->prefetch);
	/* the four counts, 16 bits each, in one register */
	RTE_BUILD_BUG_ON(L3_CLASS_MAX > 4 || LRX_BURST_MAX > 0xffff);
	uint64_t packed = 0;
	for (uint16_t i = 0; i < n; i++) {
		lrx_prefetch_ahead(pkts, i, n, c->prefetch);
		metas[i] = lrx_meta(pkts[i]);
		const unsigned k = l3_classify(metas[i]);
		cls[i] = (uint8_t)k;
		lists[k][(packed >> (16 * k)) & 0xffff] = i;
		packed += 1ull << (16 * k);
	}
	uint16_t counts[L3_CLASS_MAX];
	for (unsigned k = 0; k < L3_CLASS_MAX; k++)
		counts[k] = (uint16_t)(packed >> (16 * k));
	const enum l3_class first = (enum l3_class)cls[0];
	if (counts[first] == n) { /* one class: one sublist, no indexes */
		l3_demux_sublist(c, first, pkts, metas, l3_identity, n, nexts);
	} else if (c->split == L3_SPLIT_GATHER) {
		for (unsigned k = 0; k < L3_CLASS_MAX; k++)
			if (counts[k])
				l3_demux_sublist(c, (enum l3_class)k, pkts,
						 metas, lists[k], counts[k],
						 nexts);
	} else {
		uint16_t start = 0;
		while (start < n) {
			uint16_t end = start + 1;
			while (end < n && cls[end] == cls[start])
				end++;
			l3_demux_sublist(c, (enum l3_class)cls[start],
					 pkts + start, metas + start,
					 l3_identity, end - start,
					 nexts + start);
			start = end;
		}
	}
	if (unlikely(c->reply.replies_asked))
		l3_demux_replies(c, pkts, n, nexts);
	c->reply_later = false;
}

/* ---- the stage: its keys and counters; its modules' (l3_modules.c) ------- */

static int l3_demux_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct l3_demux_conf *dconf = init->conf;
	const struct l3_conf *conf = &dconf->core;
	struct l3_demux *d = ctx;
	struct l3_ctx *c = &d->core;

	if (lrx_meta_dynfield_offset < 0) {
		snprintf(init->err, init->err_len,
			 "%s: reads the packet metadata: put build-meta before "
			 "it in the pipeline", init->instance);
		return -EINVAL;
	}
	c->prefetch = init->prefetch;
	c->direct = conf->dispatch == 1;
	/* auto: sublists where the handler calls they save are indirect
	 * calls through retpoline thunks; elsewhere the sublists' own
	 * bookkeeping costs more than the calls (docs/engines.md) */
	c->split = conf->list_split != 0 ? (enum l3_split)conf->list_split
		   : LISTRX_RETPOLINE && !c->direct ? L3_SPLIT_GATHER
						    : L3_SPLIT_NONE;
	c->trust_ip_csum_hint = conf->trust_ip_csum_hint;
	l3_mcast_setup(&c->mc, &dconf->route.local_ipv4, &dconf->ipv6.local_ipv6,
		       &conf->mcast_groups);
	l3_reply_init(&c->reply);
	c->l3_table[L3_CLASS_IPV4] = &l3_ipv4_handler;
	c->l3_table[L3_CLASS_IPV6] = &l3_ipv6_handler;
	return l3_modules_init(d, dconf, init);
}

/* The end of a poll: the replies' clock, then the modules' timers. */
static void l3_demux_flush(void *ctx, bool budget_used)
{
	(void)budget_used;
	l3_reply_tick(&((struct l3_ctx *)ctx)->reply);
}

static const char *const l3_dispatches[] = {"indirect", "direct", NULL};
static const char *const l3_splits[] = {"auto", "gather", "runs", "none", NULL};

static const struct lrx_value_key l3_demux_keys[] = {
	L3_KEY(CHOICE, core.dispatch, "dispatch", "direct", l3_dispatches,
	       "protocol handler calls: direct (INDIRECT_CALL_INET / "
	       "INDIRECT_CALL_2, compiled into every kernel built with "
	       "retpoline support: IPv4/IPv6 and TCP/UDP called directly) | "
	       "indirect (function pointers only)"),
	L3_KEY(BOOL, core.trust_ip_csum_hint, "trust_ip_csum_hint", "yes",
	       "yes: skip the IPv4 header checksum when the NIC says good | no: "
	       "always verify it (the kernel's ip_fast_csum)"),
	L3_KEY(CHOICE, core.list_split, "list_split", "auto", l3_splits,
	       "sublists of a burst: gather (one per protocol handler, arrival "
	       "order kept within it, as VPP's next-node frames) | runs (runs of "
	       "consecutive packets of one handler, as "
	       "__netif_receive_skb_list_core and ip_sublist_rcv) | none (one loop "
	       "over the burst, each packet to its handlers, as a VPP node's loop) "
	       "| auto (gather in a retpoline build with dispatch=indirect, "
	       "else none: the fastest measured)"),
	L3_KEY(CUSTOM, core.mcast_groups, "mcast_groups", "any", l3_parse_groups, l3_groups_valid,
	       "multicast groups joined: any | none | list of IPv4/IPv6 "
	       "groups, each optionally %port (224.0.0.1, ff02::1 and the "
	       "solicited-node groups of local_ipv6 are implied; others drop)"),
	{.name = NULL},
};

static const struct lrx_stage_counter l3_demux_counters[] = {
	L3_IP_COUNTERS("Ip", 0),
	L3_COUNTER("IpExtInTruncatedPkts", core.ip[0].in_truncated_pkts),
	L3_COUNTER("IpExtInCsumErrors", core.ip[0].in_csum_errors),
	L3_COUNTER("IpExtInMcastPkts", core.ip[0].in_mcast_pkts),
	L3_COUNTER("IpExtInBcastPkts", core.ip[0].in_bcast_pkts),
	L3_COUNTER("IpExtInMcastOctets", core.ip[0].in_mcast_octets),
	L3_COUNTER("IpExtInBcastOctets", core.ip[0].in_bcast_octets),
	L3_COUNTER("IpOutRequests", core.reply.ip_out_requests[0]),
	L3_COUNTER("Ip6OutRequests", core.reply.ip_out_requests[1]),
	L3_COUNTER("IpOutNoRoutes", core.reply.ip_out_no_routes[0]),
	L3_COUNTER("Ip6OutNoRoutes", core.reply.ip_out_no_routes[1]),
	L3_COUNTER("reply_no_room", core.reply.reply_no_room),
	L3_COUNTER("rx_otherhost_dropped", core.rx_otherhost_dropped),
	L3_COUNTER("rx_dropped", core.rx_dropped),
	L3_COUNTER("ip_csum_verified", core.ip_csum_verified),
	L3_COUNTER("ip_csum_hint_skipped", core.ip_csum_hint_skipped),
	L3_COUNTER("l4_csum_verified", core.l4_csum_verified),
	L3_COUNTER("l4_csum_hint_skipped", core.l4_csum_hint_skipped),
	L3_COUNTER("l3_trimmed", core.l3_trimmed),
	L3_COUNTER("route_lookups", core.route_lookups),
	L3_COUNTER("l3_sublists", core.l3_sublists),
	L3_COUNTER("l4_sublists", core.l4_sublists),
	{.name = NULL},
};

static const struct lrx_stage_port_counter l3_demux_port_counters[] = {
	{"rx_dropped", offsetof(struct l3_demux, core.dev[0].rx_dropped),
	 sizeof(struct l3_dev_stats)},
	{"rx_otherhost_dropped", offsetof(struct l3_demux, core.dev[0].rx_otherhost_dropped),
	 sizeof(struct l3_dev_stats)},
	{NULL, 0, 0},
};

/* keys, counters, hooks: with its modules' (l3_modules_register) */
static struct lrx_stage l3_demux_stage = {
	.name = L3_DEMUX_STAGE_NAME,
	.summary = "ip_rcv/ipv6_rcv/arp_rcv checks and protocol dispatch "
		   "(kernel drop reasons, SNMP counters, sublists)",
	.ctx_size = sizeof(struct l3_demux),
	.conf_size = sizeof(struct l3_demux_conf),
	.port_counters = l3_demux_port_counters,
	.needs = LRX_PROVIDES_META,
	.init = l3_demux_init,
	.fini = l3_modules_fini,
	.process_one = lrx_l3_demux_process_one,
	.process_burst = l3_demux_process_burst,
	.map_at = l3_nf_hook_map_at,
	.map_next = l3_nf_hook_map_next,
};

static void __attribute__((constructor, used)) l3_demux_register(void)
{
	l3_modules_register(&l3_demux_stage, l3_demux_keys, l3_demux_counters,
			    l3_demux_flush);
}
