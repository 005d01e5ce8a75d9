/* SPDX-License-Identifier: BSD-3-Clause
 * IPv4 route input of a host that does not forward (ip_route_input_noref:
 * local addresses, broadcasts, multicast, martians, the route hint) and
 * the IP options on receive (ip_options_compile, ip_options_rcv_srr):
 * l3-demux's module route (route.c). The lookup is inline: ip_rcv_finish
 * runs it for every packet.
 */
#ifndef LRX_L3_ROUTE_H
#define LRX_L3_ROUTE_H

#include <rte_ip.h>

#include "l3_module.h"

struct l3_route {
	bool martians_drop;
	bool route_hint;
	bool accept_source_route;
	bool local_source_drop;        /* martians=drop, accept_local=no */
	uint8_t n_local4;
	uint32_t local4[L3_LOCAL_ADDR_MAX];         /* network order */
	uint8_t plen4[L3_LOCAL_ADDR_MAX];
	uint64_t route_hint_hits;      /* ip_can_use_hint: lookup reused */
	uint64_t in_martian_src;       /* rt_cache stat in_martian_src */
	uint64_t in_martian_dst;
};

struct l3_route_conf {
	unsigned martians;
	bool route_hint, accept_source_route, accept_local;
	struct l3_addrs local_ipv4;
};

/* The local-address lookup of one destination, reusable by the next
 * packet to the same destination (ip_can_use_hint; the source is still
 * validated for every packet, as ip_route_use_hint does). */
struct l3_route_hint {
	bool valid;
	bool local, bcast;
	uint32_t daddr;
};

/* The route's type (rt_type) for what ip_rcv_finish_core does after the
 * options: count a multicast or broadcast, or ip_error's EHOSTUNREACH. */
enum l3_rt {
	L3_RT_LOCAL,     /* RTN_LOCAL */
	L3_RT_BCAST,     /* RTN_BROADCAST */
	L3_RT_MCAST,     /* RTN_MULTICAST */
	L3_RT_UNREACH,   /* RTN_UNREACHABLE: dst.input = ip_error */
};

static inline bool l3_ipv4_is_local(const struct l3_route *r, uint32_t daddr)
{
	if (r->n_local4 == 0)
		return true;
	for (unsigned i = 0; i < r->n_local4; i++)
		if (r->local4[i] == daddr)
			return true;
	return false;
}

/* fib_validate_source's fast path (rp_filter off, accept_local off, no
 * custom local routes or rules): a source that is one of the host's
 * addresses (inet_lookup_ifaddr_rcu) is refused, IP_LOCAL_SOURCE. Its
 * callers skip a source in 0.0.0.0/8 (brd_input, ip_mc_validate_source).
 * With local_ipv4=any no address is known to be the host's. */
static inline bool l3_ipv4_local_source(const struct l3_route *r,
					uint32_t saddr_be)
{
	if (!r->local_source_drop || r->n_local4 == 0 ||
	    (saddr_be & rte_cpu_to_be_32(0xff000000)) == 0)
		return false;
	return l3_ipv4_is_local(r, saddr_be);
}

/* ip_route_input_slow's martian tests, in its order (s, d host order). */
static inline lrx_next_t l3_ipv4_martians(struct l3_route *r, uint32_t s,
					  uint32_t d)
{
	if ((s & 0xf0000000) == 0xe0000000 || s == 0xffffffff)
		goto martian_source;
	if (d == 0xffffffff || (s == 0 && d == 0))
		return LRX_NEXT_CONTINUE_V; /* brd_input */
	if ((s >> 24) == 0)
		goto martian_source;
	if ((d >> 24) == 0 || (d >> 24) == 127) {
		/* since Linux 6.13 a loopback one is IP_LOCALNET */
		r->in_martian_dst++;
		return lrx_next_drop((d >> 24) == 127 ? LRX_DROP_IP_LOCALNET
						      : LRX_DROP_IP_INVALID_DEST);
	}
	if ((s >> 24) == 127) {
		r->in_martian_src++;
		return lrx_next_drop(LRX_DROP_IP_LOCALNET);
	}
	return LRX_NEXT_CONTINUE_V;
martian_source:
	r->in_martian_src++;
	return lrx_next_drop(LRX_DROP_IP_INVALID_SOURCE);
}

/* ip_route_input_rcu's multicast branch (route.c). */
lrx_next_t l3_ipv4_route_mc(struct l3_ctx *c, const struct rte_ipv4_hdr *iph,
			    uint16_t port, enum l3_rt *rt);

/* ip_route_input_noref for a host that does not forward: martians (a
 * drop), else the route's type in *rt. */
static inline lrx_next_t l3_ipv4_route(struct l3_ctx *c, struct l3_route *r,
				       const struct rte_ipv4_hdr *iph,
				       struct l3_route_hint *hint,
				       uint16_t port, enum l3_rt *rt)
{
	const uint32_t d = rte_be_to_cpu_32(iph->dst_addr);

	if (unlikely(l3_mcast_is_group4(iph->dst_addr)))
		return l3_ipv4_route_mc(c, iph, port, rt);
	if (r->martians_drop) {
		lrx_next_t next = l3_ipv4_martians(
			r, rte_be_to_cpu_32(iph->src_addr), d);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	struct l3_route_hint here;
	if (hint && hint->valid && hint->daddr == iph->dst_addr && d != 0) {
		r->route_hint_hits++;
	} else {
		c->route_lookups++;
		here.valid = true;
		here.daddr = iph->dst_addr;
		here.bcast = l3_ipv4_is_bcast(c, iph->dst_addr, iph->src_addr);
		here.local = here.bcast || l3_ipv4_is_local(r, iph->dst_addr);
		if (hint)
			*hint = here;
		else
			hint = &here;
	}
	/* RTN_LOCAL and brd_input validate the source (so does
	 * ip_route_use_hint for an RTCF_LOCAL route): a LAND frame, from
	 * one of the host's own addresses, is a martian source */
	if (unlikely(hint->local && l3_ipv4_local_source(r, iph->src_addr))) {
		r->in_martian_src++;
		return lrx_next_drop(LRX_DROP_IP_LOCAL_SOURCE);
	}
	*rt = !hint->local ? L3_RT_UNREACH : hint->bcast ? L3_RT_BCAST
							: L3_RT_LOCAL;
	return LRX_NEXT_CONTINUE_V;
}

/* The source of an error about a packet not for a local address
 * (route.c). */
uint32_t l3_ipv4_source(const struct l3_route *r, uint32_t peer);

/* ip_rcv_options for a header of ihl > 20 bytes (route.c): CONTINUE, or
 * the drop (and the parameter problem it asks for). */
lrx_next_t l3_ipv4_rcv_options(struct l3_ctx *c, struct rte_mbuf *m,
			       const struct lrx_meta *meta, const uint8_t *iph,
			       uint32_t ihl, enum l3_rt rt);

#endif
