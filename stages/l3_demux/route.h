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

/* How a route's source is validated (fib_validate_source), decided at
 * init: none (martians=accept, or accept_local with rp_filter off on
 * every port), its fast path (a local address is refused), or the full
 * lookup of __fib_validate_source (rp_filter on some port). */
enum l3_source_check {
	L3_SOURCE_NONE,
	L3_SOURCE_LOCAL,
	L3_SOURCE_FIB,
};

#define L3_ROUTES_MAX 32
#define L3_ROUTES_SLOTS (L3_ROUTES_MAX + L3_LOCAL_ADDR_MAX)
#define L3_ROUTE_ANY_PORT UINT16_MAX

/* The main table's unicast routes the reverse path filter looks the
 * source up in: ipv4_routes as listed, then the subnet of each local_ipv4
 * address (fib_add_ifaddr's prefix route) through any port. complete:
 * the table is the host's whole main table (ipv4_routes=subnets or a
 * list), so a reply to an address no route covers finds none
 * (ip_route_output_key: -ENETUNREACH); else (none) replies go out as
 * from a host with a default route. */
struct l3_routes4 {
	uint8_t n;
	bool complete;
	uint8_t plen[L3_ROUTES_SLOTS];
	uint16_t port[L3_ROUTES_SLOTS];   /* L3_ROUTE_ANY_PORT: every port */
	uint32_t prefix[L3_ROUTES_SLOTS]; /* network order */
};
/* ipv6_routes: the same for IPv6 replies, beside each local_ipv6 prefix
 * and fe80::/64 (addrconf_add_linklocal's and addrconf_prefix_route's
 * routes), which the table does not hold. */
struct l3_routes6 {
	uint8_t n;
	bool complete;
	uint8_t plen[L3_ROUTES_MAX];
	uint16_t port[L3_ROUTES_MAX];
	uint8_t prefix[L3_ROUTES_MAX][16];
};
/* ipv4_routes / ipv6_routes: "none", "subnets" or a list of
 * PREFIX[%PORT] (value layer's CUSTOM, one parser for both families). */
int l3_parse_routes4(const char *text, void *out);
int l3_parse_routes6(const char *text, void *out);
extern const char l3_routes4_valid[];
extern const char l3_routes6_valid[];

/* rp_filter_ports as parsed: net.ipv4.conf.IF.rp_filter per port. */
struct l3_rp_filters {
	uint8_t n;
	uint16_t port[RTE_MAX_ETHPORTS];
	uint8_t mode[RTE_MAX_ETHPORTS];
};
/* rp_filter_ports: "none" or a list of PORT:MODE. */
int l3_parse_rp_filters(const char *text, void *out);
extern const char l3_rp_filters_valid[];

struct l3_route {
	bool martians_drop;
	bool route_hint;
	bool accept_source_route;
	bool accept_local;
	uint8_t source_check;          /* enum l3_source_check */
	uint8_t n_local4;
	uint32_t local4[L3_LOCAL_ADDR_MAX];         /* network order */
	uint8_t plen4[L3_LOCAL_ADDR_MAX];
	uint64_t route_hint_hits;      /* ip_can_use_hint: lookup reused */
	uint64_t in_martian_src;       /* rt_cache stat in_martian_src */
	uint64_t in_martian_dst;
	uint64_t rp_filter_drops;      /* LINUX_MIB_IPRPFILTER */
	/* read only when source_check is L3_SOURCE_FIB */
	uint8_t rp_filter_all;
	uint8_t rp_filter[RTE_MAX_ETHPORTS]; /* max(all, the port's) */
	struct l3_routes4 routes4;
	struct l3_routes6 routes6;
};

struct l3_route_conf {
	unsigned martians;
	bool route_hint, accept_source_route, accept_local;
	uint8_t rp_filter;
	struct l3_rp_filters rp_filter_ports;
	struct l3_routes4 routes4;
	struct l3_routes6 routes6;
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

/* Does address a (network order, any length) match prefix/plen? */
static inline bool l3_in_prefix(const uint8_t *a, const uint8_t *prefix, unsigned plen)
{
	for (unsigned b = 0; plen; b++) {
		const unsigned take = plen < 8 ? plen : 8;
		if ((a[b] ^ prefix[b]) & (uint8_t)(0xff00 >> take))
			return false;
		plen -= take;
	}
	return true;
}

static inline bool l3_ipv4_is_local(const struct l3_route *r, uint32_t daddr)
{
	if (r->n_local4 == 0)
		return true;
	for (unsigned i = 0; i < r->n_local4; i++)
		if (r->local4[i] == daddr)
			return true;
	return false;
}

/* __fib_validate_source, for a port with rp_filter on or a host with
 * some port so (route.c): true when the source is refused, the reason in
 * *why. */
bool l3_ipv4_source_refused_fib(const struct l3_ctx *c,
				const struct l3_route *r, uint32_t saddr_be,
				uint16_t port, enum lrx_drop_reason *why);

/* fib_validate_source for a local route, a broadcast or a joined group:
 * true when the source is refused, the reason in *why. Its fast path
 * (rp_filter off everywhere, accept_local off, no custom local routes or
 * rules) refuses a source that is one of the host's addresses
 * (inet_lookup_ifaddr_rcu), IP_LOCAL_SOURCE; with local_ipv4=any no
 * address is known to be the host's. Its callers skip a source in
 * 0.0.0.0/8 (brd_input, ip_mc_validate_source). */
static inline bool l3_ipv4_source_refused(const struct l3_ctx *c,
					  const struct l3_route *r,
					  uint32_t saddr_be, uint16_t port,
					  enum lrx_drop_reason *why)
{
	if (r->source_check != L3_SOURCE_LOCAL)
		return r->source_check == L3_SOURCE_FIB &&
		       l3_ipv4_source_refused_fib(c, r, saddr_be, port, why);
	if (r->n_local4 == 0 || (saddr_be & rte_cpu_to_be_32(0xff000000)) == 0)
		return false;
	*why = LRX_DROP_IP_LOCAL_SOURCE;
	return l3_ipv4_is_local(r, saddr_be);
}

/* ip_route_input_slow's martian tests, in its order (s, d host order). */
static inline lrx_next_t l3_ipv4_martians(struct l3_route *r, uint32_t s,
					  uint32_t d)
{
	enum lrx_drop_reason why;
	if ((s & 0xf0000000) == 0xe0000000 || s == 0xffffffff) {
		why = LRX_DROP_IP_INVALID_SOURCE;
	} else if (d == 0xffffffff || (s == 0 && d == 0)) {
		return LRX_NEXT_CONTINUE_V; /* brd_input */
	} else if ((s >> 24) == 0) {
		why = LRX_DROP_IP_INVALID_SOURCE;
	} else if ((d >> 24) == 0 || (d >> 24) == 127) {
		/* since Linux 6.13 a loopback one is IP_LOCALNET */
		r->in_martian_dst++;
		return lrx_next_drop((d >> 24) == 127 ? LRX_DROP_IP_LOCALNET
						      : LRX_DROP_IP_INVALID_DEST);
	} else if ((s >> 24) == 127) {
		why = LRX_DROP_IP_LOCALNET;
	} else {
		return LRX_NEXT_CONTINUE_V;
	}
	r->in_martian_src++;
	return lrx_next_drop(why);
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
	enum lrx_drop_reason why;
	if (unlikely(hint->local &&
		     l3_ipv4_source_refused(c, r, iph->src_addr, port, &why))) {
		r->in_martian_src++;
		r->rp_filter_drops += why == LRX_DROP_IP_RPFILTER;
		return lrx_next_drop(why);
	}
	*rt = !hint->local ? L3_RT_UNREACH : hint->bcast ? L3_RT_BCAST
							: L3_RT_LOCAL;
	return LRX_NEXT_CONTINUE_V;
}

/* The output route of a reply to daddr (ip_route_output_key's fib_lookup
 * in the main table, route.c): true when there is one. */
bool l3_ipv4_out_route(const struct l3_route *r, uint32_t daddr_be);

/* The output route of an IPv6 reply to daddr (ip6_route_output, route.c):
 * its prefix length, or -1 when there is none (ip6_null_entry:
 * -ENETUNREACH). */
int l3_ipv6_out_route(struct l3_ctx *c, const uint8_t *daddr);

/* The source of an error about a packet not for a local address
 * (route.c). */
uint32_t l3_ipv4_source(const struct l3_route *r, uint32_t peer);

/* ip_rcv_options for a header of ihl > 20 bytes (route.c): CONTINUE, or
 * the drop (and the parameter problem it asks for). */
lrx_next_t l3_ipv4_rcv_options(struct l3_ctx *c, struct rte_mbuf *m,
			       const struct lrx_meta *meta, const uint8_t *iph,
			       uint32_t ihl, enum l3_rt rt);

#endif
