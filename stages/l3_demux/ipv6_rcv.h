/* SPDX-License-Identifier: BSD-3-Clause
 * ipv6_rcv's core for l3-demux's IPv6 handler (l3_demux.c), as
 * net/ipv6/ip6_input.c beside ip_input.c: ip6_rcv_core with the
 * hop-by-hop header, NF_HOOK(PRE_ROUTING) (nf_defrag_ipv6 first with
 * conntrack), ip6_route_input, ip6_mc_input,
 * ip6_input's NF_HOOK(LOCAL_IN), then the extension headers and
 * ipv6_frag_rcv (the module ipv6, ipv6.c). Inline, as udp.h holds udp's
 * core: the handler's per-packet and list entries are one body.
 */
#ifndef LRX_L3_IPV6_RCV_H
#define LRX_L3_IPV6_RCV_H

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_ip.h>

#include "l3_modules.h"

/* ip6_rcv_core's NEXTHDR_HOP: ipv6_parse_hopopts, and a jumbo option's
 * length (ipv6_hop_jumbo's pskb_trim_rcsum). Moves *toff past the header
 * and sets *nexthdr to the header after it. */
static __rte_always_inline lrx_next_t
l3_ipv6_rcv_hopopts(struct l3_ctx *c, struct rte_mbuf *m, struct lrx_meta *meta,
		    const struct rte_ipv6_hdr *hdr, uint32_t plen, uint32_t skb_len,
		    uint32_t *toff, uint8_t *nexthdr)
{
	const uint32_t noff = meta->network_offset;
	uint32_t hbh_len = 0, jumbo_len;
	struct l3_ext_fail fail;

	if (l3_ipv6_hopopts(l3_frame(m), noff,
			    RTE_MIN(m->data_len, noff + meta->len), plen,
			    meta->len, hdr->dst_addr[0] == 0xff, &hbh_len,
			    &jumbo_len, &fail) != L3_EXT_UPPER) {
		fail.mib = L3_EXT_MIB_HDR_ERRORS; /* ip6_rcv_core's */
		return l3_ipv6_ext_failed(c, m, &fail);
	}
	if (jumbo_len) {
		meta->len = jumbo_len + sizeof(struct rte_ipv6_hdr);
		if (skb_len > meta->len) {
			l3_trim_to(m, noff + meta->len);
			c->l3_trimmed++;
		}
	}
	*nexthdr = l3_frame(m)[*toff];
	*toff += hbh_len;
	return LRX_NEXT_CONTINUE_V;
}

/* ip6_rcv_core for one IPv6 packet: the header's checks, the trim to its
 * payload length, the hop-by-hop header. Returns CONTINUE with *hdr, the
 * upper-layer header's offset and protocol set (in meta too). */
static __rte_always_inline lrx_next_t
l3_ipv6_rcv_early(struct l3_ctx *c, struct rte_mbuf *m, struct lrx_meta *meta,
		  const struct rte_ipv6_hdr **hdrp, uint32_t *toffp, uint8_t *nexthdrp)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V6];
	const uint8_t *raw;
	uint32_t skb_len;
	lrx_next_t next = l3_ip_rcv_prologue(c, m, meta, mib,
					     sizeof(struct rte_ipv6_hdr),
					     &raw, &skb_len);
	if (unlikely(next != LRX_NEXT_CONTINUE_V))
		return next;

	const uint32_t noff = meta->network_offset;
	const struct rte_ipv6_hdr *hdr = (const struct rte_ipv6_hdr *)raw;
	if (unlikely((hdr->vtc_flow & rte_cpu_to_be_32(0xf0000000)) !=
		     rte_cpu_to_be_32(0x60000000)))
		return l3_ip_inhdr_error(mib, LRX_DROP_UNHANDLED_PROTO);
	uint32_t plen = rte_be_to_cpu_16(hdr->payload_len);
	/* a BIG TCP GRO packet over 64 KB: payload_len 0, the length in the
	 * jumbo option ipv6_gro_complete inserts; listrx's GRO inserts none,
	 * the skb's length says it (as ip6_rcv_core with that option) */
	if (unlikely(plen == 0) && meta->gso_size && hdr->proto == IPPROTO_TCP &&
	    skb_len > sizeof(struct rte_ipv6_hdr))
		plen = skb_len - (uint32_t)sizeof(struct rte_ipv6_hdr);
	enum lrx_drop_reason why;
	if (l3_ipv6_addr_refused(l3_ipv6_of(c), hdr, meta->pkt_type, m->port, &why))
		return l3_ip_inhdr_error(mib, why);
	uint32_t toff = noff + sizeof(struct rte_ipv6_hdr);
	uint8_t nexthdr = hdr->proto;
	/* "pkt_len may be zero if Jumbo payload option is present": then
	 * the packet is as long as the buffer, unless a jumbo option
	 * says */
	meta->len = skb_len;
	if (likely(plen || nexthdr != 0)) {
		if (plen + sizeof(struct rte_ipv6_hdr) > skb_len) {
			mib->in_truncated_pkts++;
			return l3_ip_drop(LRX_DROP_PKT_TOO_SMALL);
		}
		if (skb_len > plen + sizeof(struct rte_ipv6_hdr)) {
			l3_trim_to(m, noff + plen + sizeof(struct rte_ipv6_hdr));
			c->l3_trimmed++;
		}
		meta->len = plen + sizeof(struct rte_ipv6_hdr);
	}
	if (nexthdr == 0) { /* NEXTHDR_HOP */
		next = l3_ipv6_rcv_hopopts(c, m, meta, hdr, plen, skb_len, &toff,
					   &nexthdr);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	meta->transport_offset = (uint16_t)toff;
	meta->l4_proto = nexthdr;
	*hdrp = hdr;
	*toffp = toff;
	*nexthdrp = nexthdr;
	return LRX_NEXT_CONTINUE_V;
}

/* ip6_rcv_finish (the route of a host that does not forward), ip6_mc_input
 * and ip6_input for one IPv6 packet that passed ip6_rcv_core, the hooks
 * around them, then the extension headers and reassembly
 * (ip6_protocol_deliver_rcu). Returns CONTINUE when the packet is to be
 * delivered to the protocol meta->l4_proto names. */
static __rte_always_inline lrx_next_t
l3_ipv6_rcv_finish(struct l3_ctx *c, struct rte_mbuf *m, struct lrx_meta *meta,
		   const struct rte_ipv6_hdr *hdr, uint32_t toff, uint8_t nexthdr)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V6];
	lrx_next_t next;

	/* NF_HOOK(NFPROTO_IPV6, NF_INET_PRE_ROUTING, ..., ip6_rcv_finish):
	 * the list path runs it here too, packet by packet (what
	 * nf_hook_slow_list does; nothing here depends on the order). With
	 * conntrack nf_defrag_ipv6 runs first and may make m the whole
	 * datagram: its headers are read again. */
	if (l3_nf_hook_of(c)->rules6 != NULL) {
		next = l3_ipv6_nf_prerouting(c, m, meta);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
		hdr = (const struct rte_ipv6_hdr *)(l3_frame(m) + meta->network_offset);
		toff = meta->transport_offset;
		nexthdr = meta->l4_proto;
	}
	/* ip6_route_input: a non-forwarding host's ip6_forward error */
	c->route_lookups++;
	if (!l3_ipv6_is_local(l3_ipv6_of(c), hdr->dst_addr)) {
		mib->in_addr_errors++;
		return lrx_next_drop(LRX_DROP_IP_INADDRERRORS);
	}
	if (hdr->dst_addr[0] == 0xff) {
		/* ip6_mc_input: InMcastPkts/Octets, then a group this port
		 * has not joined (ipv6_chk_mcast_addr) is freed uncounted */
		mib->in_mcast_pkts++;
		mib->in_mcast_octets += meta->len;
		if (!l3_mcast_joined6(&c->mc, hdr->dst_addr, m->port))
			return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	}
	/* ip6_input: NF_HOOK(NF_INET_LOCAL_IN, ..., ip6_input_finish), before
	 * the extension headers and reassembly (ip6_protocol_deliver_rcu) */
	if (l3_nf_hook_of(c)->rules6 != NULL) {
		next = l3_ipv6_nf_hook(c, m, meta, LRX_NF_LOCAL_IN);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	if (unlikely(l3_ipv6_is_exthdr(nexthdr))) {
		next = l3_ipv6_ext(c, m, meta, hdr, &toff, &nexthdr);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	if (unlikely(nexthdr == 44)) /* NEXTHDR_FRAGMENT: ipv6_frag_rcv */
		return l3_ipv6_frag(c, m, meta, toff);
	return LRX_NEXT_CONTINUE_V;
}

/* Everything ipv6_rcv does to one packet before the L4 handler. Returns
 * CONTINUE when the packet is to be delivered locally. hint: unused
 * (ipv6_list_rcv has no route hint in the kernel either). */
static __rte_always_inline lrx_next_t l3_ipv6_rcv_core(struct l3_ctx *c, struct rte_mbuf *m,
						       struct lrx_meta *meta,
						       struct l3_route_hint *hint)
{
	const struct rte_ipv6_hdr *hdr;
	uint32_t toff;
	uint8_t nexthdr;
	(void)hint;
	lrx_next_t next = l3_ipv6_rcv_early(c, m, meta, &hdr, &toff, &nexthdr);
	if (unlikely(next != LRX_NEXT_CONTINUE_V))
		return next;
	return l3_ipv6_rcv_finish(c, m, meta, hdr, toff, nexthdr);
}

#endif
