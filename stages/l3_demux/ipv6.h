/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv6 input after ip6_rcv_core's checks: the route of a host that does
 * not forward (inline: every packet), the extension headers on input (the
 * hop-by-hop header of ip6_rcv_core, ipv6_parse_hopopts, and the headers
 * ip6_protocol_deliver_rcu walks through inet6_protos, net/ipv6/exthdrs.c,
 * with one TLV parser for both option headers, as ip6_parse_tlv) and the
 * resubmission after a fragment: l3-demux's module ipv6 (ipv6.c). */
#ifndef LRX_L3_EXTHDRS_H
#define LRX_L3_EXTHDRS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ip.h>

#include "l3_module.h"

/* Which IPSTATS_MIB_* counter a verdict moves. */
enum l3_ext_mib {
	L3_EXT_MIB_NONE,
	L3_EXT_MIB_HDR_ERRORS,  /* Ip6InHdrErrors */
	L3_EXT_MIB_ADDR_ERRORS, /* Ip6InAddrErrors */
	L3_EXT_MIB_DELIVERS,    /* Ip6InDelivers (NEXTHDR_NONE) */
};

enum l3_ext_verdict {
	L3_EXT_UPPER, /* *nexthdr / *off name the upper-layer header */
	L3_EXT_DROP,  /* drop as struct l3_ext_fail says */
};

/* ICMPv6 parameter problem codes (icmpv6_param_prob) */
enum l3_paramprob6 {
	L3_PARAMPROB6_HDR_FIELD = 0,  /* ICMPV6_HDR_FIELD */
	L3_PARAMPROB6_NEXTHDR = 1,    /* ICMPV6_UNK_NEXTHDR */
	L3_PARAMPROB6_OPTION = 2,     /* ICMPV6_UNK_OPTION */
	L3_PARAMPROB6_HDR_INCOMP = 3, /* ICMPV6_HDR_INCOMP (RFC 8200 4.5) */
};

/* What a failed header costs: the drop reason, the counter, and the
 * ICMPv6 parameter problem the kernel sends for it (icmp set), whose
 * pointer counts from the network header. */
struct l3_ext_fail {
	enum lrx_drop_reason reason;
	enum l3_ext_mib mib;
	bool icmp;
	uint8_t icmp_code;      /* enum l3_paramprob6 */
	uint32_t icmp_pointer;
};

struct l3_ipv6 {
	bool mip6;               /* ipv6_mip6: CONFIG_IPV6_MIP6's rules */
	bool drop_l2mc_some;     /* drop_unicast_in_l2_multicast on a port */
	bool drop_l2mc[RTE_MAX_ETHPORTS];
	uint8_t n_local6;
	uint8_t local6[L3_LOCAL_ADDR_MAX][16];
	uint8_t plen6[L3_LOCAL_ADDR_MAX];
};

struct l3_ipv6_conf {
	struct l3_addrs local_ipv6;
	bool mip6;
	struct lrx_port_set drop_l2mc;
};

static inline bool l3_ipv6_is_loopback(const uint8_t *a)
{
	static const uint8_t lo[16] = {[15] = 1};
	return memcmp(a, lo, 16) == 0;
}

/* ip6_rcv_core's address checks, in its order: true when the packet is
 * refused (Ip6InHdrErrors), the reason in *why (NOT_SPECIFIED: IP_INHDR,
 * as its SKB_DR_OR). RFC 4291 2.5.3: ::1 must not appear on the wire;
 * errata 3480: an interface-local group (scope 1) from another node; the
 * "hole-196" check of a unicast destination in an L2 broadcast or
 * multicast frame on a port with drop_unicast_in_l2_multicast
 * (idev->cnf: the device's own value); 2.7: a group of reserved scope 0,
 * a multicast source. */
static inline bool l3_ipv6_addr_refused(const struct l3_ipv6 *v6,
					const struct rte_ipv6_hdr *hdr,
					uint8_t pkt_type, uint16_t port,
					enum lrx_drop_reason *why)
{
	const uint8_t *s = hdr->src_addr, *d = hdr->dst_addr;
	*why = LRX_DROP_NOT_SPECIFIED;
	if (l3_ipv6_is_loopback(s) || l3_ipv6_is_loopback(d) ||
	    (d[0] == 0xff && (d[1] & 0x0f) <= 1))
		return true;
	if (unlikely(v6->drop_l2mc_some) && d[0] != 0xff &&
	    (pkt_type == LRX_PACKET_BROADCAST || pkt_type == LRX_PACKET_MULTICAST) &&
	    port < RTE_MAX_ETHPORTS && v6->drop_l2mc[port]) {
		*why = LRX_DROP_UNICAST_IN_L2_MULTICAST;
		return true;
	}
	return s[0] == 0xff;
}

static inline bool l3_ipv6_is_local(const struct l3_ipv6 *v6, const uint8_t *d)
{
	if (d[0] == 0xff || v6->n_local6 == 0)
		return true;
	for (unsigned i = 0; i < v6->n_local6; i++)
		if (memcmp(v6->local6[i], d, 16) == 0)
			return true;
	return false;
}

static inline bool l3_ipv6_is_exthdr(uint8_t nexthdr)
{
	/* NEXTHDR_ROUTING, NEXTHDR_NONE, NEXTHDR_DEST */
	return nexthdr == 43 || nexthdr == 59 || nexthdr == 60;
}

/* ipv6_parse_hopopts for the hop-by-hop header right after the fixed
 * header at frame[noff], data up to frame[end). payload_len is the fixed
 * header's, skb_len the bytes from the network header. On L3_EXT_UPPER
 * *hdr_len is the header's length and *jumbo_len the jumbogram's payload
 * length (ipv6_hop_jumbo), or 0 without a jumbo option. */
enum l3_ext_verdict l3_ipv6_hopopts(const uint8_t *frame, uint32_t noff,
				    uint32_t end, uint32_t payload_len,
				    uint32_t skb_len, bool mcast_dst,
				    uint32_t *hdr_len, uint32_t *jumbo_len,
				    struct l3_ext_fail *fail);

/* Walk destination options, routing headers and "no next header" from
 * frame[*off] (header type *nexthdr; the network header at frame[noff])
 * up to frame[end). On L3_EXT_UPPER *nexthdr and *off name the first
 * header that is not one of these (a hop-by-hop header here goes to the
 * caller's unknown-protocol path, as inet6_protos[NEXTHDR_HOP] is empty).
 * mip6: type 2 routing headers as a kernel built with CONFIG_IPV6_MIP6
 * treats them. */
enum l3_ext_verdict l3_ipv6_exthdrs(const uint8_t *frame, uint32_t noff,
				    uint32_t end, uint32_t *off,
				    uint8_t *nexthdr, bool mcast_dst, bool host,
				    bool mip6, struct l3_ext_fail *fail);

/* IP6CB(skb)->nhoff for an upper-layer header at frame[toff]: the offset
 * from the network header of the byte that named it (6, or the start of
 * the last extension header before it), for the pointer of an
 * ICMPV6_UNK_NEXTHDR parameter problem. */
uint32_t l3_ipv6_nhoff(const uint8_t *frame, uint32_t noff, uint32_t toff);

/* The route and the source address of a reply to a peer (ipv6.c). */
unsigned l3_ipv6_route_plen(const struct l3_ipv6 *v6, const uint8_t *addr);
bool l3_ipv6_source(const struct l3_ipv6 *v6, const uint8_t *peer, uint8_t *out);

/* A header that failed: its counter, its drop, and the parameter problem
 * it asks for. */
lrx_next_t l3_ipv6_ext_failed(struct l3_ctx *c, struct rte_mbuf *m,
			      const struct l3_ext_fail *fail);
/* The extension headers ip6_protocol_deliver_rcu resubmits through, from
 * *toff (type *nexthdr): CONTINUE with the upper-layer header in meta, or
 * the drop. */
lrx_next_t l3_ipv6_ext(struct l3_ctx *c, struct rte_mbuf *m, struct lrx_meta *meta,
		       const struct rte_ipv6_hdr *hdr, uint32_t *toff, uint8_t *nexthdr);
/* ipv6_frag_rcv for the fragment header at toff, and the resubmission
 * after it. */
lrx_next_t l3_ipv6_frag(struct l3_ctx *c, struct rte_mbuf *m,
			struct lrx_meta *meta, uint32_t toff);

#endif
