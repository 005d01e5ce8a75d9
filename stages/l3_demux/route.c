/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux's module route: IPv4 route input of a host that does not
 * forward (the lookup inline in route.h) and the IP options on receive
 * (net/ipv4/route.c, net/ipv4/ip_options.c). Keys martians, route_hint,
 * local_ipv4, accept_source_route, accept_local; counters in_martian_src,
 * in_martian_dst, route_hint_hits.
 */
#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "l3_modules.h"

/* ip_route_input_rcu's multicast branch: a group this port has not joined
 * (ip_check_mc_rcu) is dropped with only InReceives counted (the route
 * error, NOT_SPECIFIED); a joined one goes to ip_route_input_mc, whose
 * ip_mc_validate_source judges the source (a local one by
 * fib_validate_source: IP_LOCAL_SOURCE, no in_martian_src). No route
 * hint: the verdict also depends on the port. */
lrx_next_t l3_ipv4_route_mc(struct l3_ctx *c, const struct rte_ipv4_hdr *iph,
			    uint16_t port, enum l3_rt *rt)
{
	c->route_lookups++;
	if (!l3_mcast_joined4(&c->mc, iph->dst_addr, port))
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	if (l3_route_of(c)->martians_drop) {
		enum lrx_drop_reason why = l3_mcast_source_check4(
			rte_be_to_cpu_32(iph->src_addr), rte_be_to_cpu_32(iph->dst_addr),
			iph->next_proto_id);
		if (why != LRX_DROP_NOT_SPECIFIED)
			return lrx_next_drop(why);
	}
	if (l3_ipv4_local_source(l3_route_of(c), iph->src_addr))
		return lrx_next_drop(LRX_DROP_IP_LOCAL_SOURCE);
	*rt = L3_RT_MCAST;
	return LRX_NEXT_CONTINUE_V;
}

/* IP option types (include/uapi/linux/ip.h) */
enum {
	L3_IPOPT_END = 0,
	L3_IPOPT_NOOP = 1,
	L3_IPOPT_RR = 7,
	L3_IPOPT_TIMESTAMP = 68,
	L3_IPOPT_LSRR = 131,
	L3_IPOPT_CIPSO = 134,
	L3_IPOPT_SSRR = 137,
	L3_IPOPT_RA = 148,
};

/* __ip_options_compile on receive: 0 when the options are valid, else
 * the offset from the IP header of the byte in error (the parameter
 * problem's pointer). *srr: a source route is present. Record route and
 * timestamp are checked, not filled in (the kernel writes its address
 * and the time into the header it delivers). CIPSO fails as
 * cipso_v4_validate fails without a CIPSO DOI (a kernel with
 * CONFIG_NETLABEL and no netlabel set-up); security, stream ID and
 * unknown options pass, as on receive. */
static uint32_t l3_ipv4_options(const uint8_t *iph, uint32_t ihl, bool *srr)
{
	const uint8_t *opt = iph + 20;
	int l = (int)ihl - 20;
	bool rr = false, ts = false, cipso = false;
	*srr = false;
	while (l > 0) {
		if (*opt == L3_IPOPT_END)
			return 0;
		if (*opt == L3_IPOPT_NOOP) {
			l--;
			opt++;
			continue;
		}
		if (l < 2)
			return (uint32_t)(opt - iph);
		const int optlen = opt[1];
		if (optlen < 2 || optlen > l)
			return (uint32_t)(opt - iph);
		switch (*opt) {
		case L3_IPOPT_SSRR:
		case L3_IPOPT_LSRR:
			if (optlen < 3)
				return (uint32_t)(opt + 1 - iph);
			if (opt[2] < 4)
				return (uint32_t)(opt + 2 - iph);
			/* NB: cf RFC-1812 5.2.4.1 */
			if (*srr)
				return (uint32_t)(opt - iph);
			*srr = true;
			break;
		case L3_IPOPT_RR:
			if (rr)
				return (uint32_t)(opt - iph);
			if (optlen < 3)
				return (uint32_t)(opt + 1 - iph);
			if (opt[2] < 4)
				return (uint32_t)(opt + 2 - iph);
			if (opt[2] <= optlen && opt[2] + 3 > optlen)
				return (uint32_t)(opt + 2 - iph);
			rr = true;
			break;
		case L3_IPOPT_TIMESTAMP:
			if (ts)
				return (uint32_t)(opt - iph);
			if (optlen < 4)
				return (uint32_t)(opt + 1 - iph);
			if (opt[2] < 5)
				return (uint32_t)(opt + 2 - iph);
			if (opt[2] <= optlen) {
				if (opt[2] + 3 > optlen)
					return (uint32_t)(opt + 2 - iph);
				/* IPOPT_TS_TSANDADDR, IPOPT_TS_PRESPEC: an
				 * address and a time */
				const unsigned flag = opt[3] & 0xf;
				if ((flag == 1 || flag == 3) && opt[2] + 7 > optlen)
					return (uint32_t)(opt + 2 - iph);
			} else if ((opt[3] & 0xf) != 3 && (opt[3] >> 4) == 15) {
				/* full, and its overflow counter too */
				return (uint32_t)(opt + 3 - iph);
			}
			ts = true;
			break;
		case L3_IPOPT_RA:
			if (optlen < 4)
				return (uint32_t)(opt + 1 - iph);
			break;
		case L3_IPOPT_CIPSO:
			if (cipso)
				return (uint32_t)(opt - iph);
			cipso = true;
			return (uint32_t)(opt + (optlen < 8 ? 1 : 2) - iph);
		default:
			break;
		}
		l -= optlen;
		opt += optlen;
	}
	return 0;
}

/* ip_rcv_options: a bad option is InHdrErrors and an ICMP parameter
 * problem (ip_options_compile's icmp_send, not for a broadcast or
 * multicast route); a source route is dropped uncounted unless
 * accept_source_route, and then ip_options_rcv_srr delivers it only when
 * the hops left are this host's addresses (a host that does not forward
 * finds no route for another: -EINVAL); a hop that does not fit is a
 * parameter problem at the option's pointer. The header is not changed
 * (the kernel writes the next hop as the destination). */
lrx_next_t l3_ipv4_rcv_options(struct l3_ctx *c, struct rte_mbuf *m,
			       const struct lrx_meta *meta, const uint8_t *iph,
			       uint32_t ihl, enum l3_rt rt)
{
	const struct l3_route *r = l3_route_of(c);
	bool srr;
	const uint32_t bad = l3_ipv4_options(iph, ihl, &srr);
	const lrx_next_t fate = lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	const bool icmp = rt == L3_RT_LOCAL || rt == L3_RT_UNREACH;
	if (unlikely(bad)) {
		c->ip[L3_FAMILY_V4].in_hdr_errors++;
		return icmp ? l3_ask(c, m, fate, L3_REPLY_PARAMPROB4, bad) : fate;
	}
	if (!srr)
		return LRX_NEXT_CONTINUE_V;
	if (!r->accept_source_route ||
	    meta->pkt_type != LRX_PACKET_HOST || rt != L3_RT_LOCAL)
		return fate;
	/* the source route option */
	uint32_t off = 20;
	while (iph[off] != L3_IPOPT_LSRR && iph[off] != L3_IPOPT_SSRR)
		off += iph[off] <= L3_IPOPT_NOOP ? 1u : iph[off + 1];
	const uint8_t *opt = iph + off;
	for (uint32_t ptr = opt[2]; ptr <= opt[1]; ptr += 4) {
		if (ptr + 3 > opt[1])
			return l3_ask(c, m, fate, L3_REPLY_PARAMPROB4, off + 2);
		uint32_t hop;
		memcpy(&hop, opt + ptr - 1, 4);
		if (!l3_ipv4_is_local(r, hop))
			return fate;
	}
	return LRX_NEXT_CONTINUE_V;
}

static bool l3_in_prefix4(uint32_t a_be, uint32_t b_be, unsigned plen)
{
	const uint32_t mask = plen ? UINT32_MAX << (32 - plen) : 0;
	return ((rte_be_to_cpu_32(a_be) ^ rte_be_to_cpu_32(b_be)) & mask) == 0;
}

/* The source of an error about a packet not for a local address: the
 * address of the subnet the peer is on (icmp_route_lookup's choice),
 * else the first. */
uint32_t l3_ipv4_source(const struct l3_route *r, uint32_t peer)
{
	for (unsigned i = 0; i < r->n_local4; i++)
		if (r->plen4[i] < 32 &&
		    l3_in_prefix4(r->local4[i], peer, r->plen4[i]))
			return r->local4[i];
	return r->local4[0];
}

static int l3_route_init(struct l3_demux *d, const struct l3_demux_conf *conf,
			 const struct lrx_stage_init *init)
{
	struct l3_route *r = &d->route;
	(void)init;
	r->martians_drop = conf->route.martians == 0;
	r->route_hint = conf->route.route_hint;
	r->accept_source_route = conf->route.accept_source_route;
	r->local_source_drop = r->martians_drop && !conf->route.accept_local;
	r->n_local4 = conf->route.local_ipv4.n;
	for (unsigned i = 0; i < r->n_local4; i++)
		memcpy(&r->local4[i], conf->route.local_ipv4.addr[i], 4);
	memcpy(r->plen4, conf->route.local_ipv4.plen, sizeof(r->plen4));
	return 0;
}

static const char *const l3_martians[] = {"drop", "accept", NULL};

static const struct lrx_value_key l3_route_keys[] = {
	L3_KEY(CHOICE, route.martians, "martians", "drop", l3_martians,
	       "drop | accept martian sources/destinations (0/8, 127/8, multicast "
	       "or broadcast source, a local_ipv4 address as source)"),
	L3_KEY(BOOL, route.accept_local, "accept_local", "no",
	       "packets whose source is a local_ipv4 address "
	       "(net.ipv4.conf.all.accept_local); no drops them IP_LOCAL_SOURCE, "
	       "counted in_martian_src"),
	L3_KEY(BOOL, route.route_hint, "route_hint", "yes",
	       "in bursts, reuse the previous packet's route lookup when "
	       "the destination is the same (ip_can_use_hint)"),
	L3_KEY(CUSTOM, route.local_ipv4, "local_ipv4", "any", l3_parse_local4, l3_local4_valid,
	       "addresses delivered locally: any | list of IPv4 addresses, "
	       "each optionally /prefix-length for its subnet broadcast "
	       "(others drop IP_INADDRERRORS: this host does not forward)"),
	L3_KEY(BOOL, route.accept_source_route, "accept_source_route", "no",
	       "packets with a source route option (LSRR, SSRR) "
	       "(net.ipv4.conf.all.accept_source_route); no drops them uncounted"),
	{.name = NULL},
};

static const struct lrx_stage_counter l3_route_counters[] = {
	L3_COUNTER("in_martian_src", route.in_martian_src),
	L3_COUNTER("in_martian_dst", route.in_martian_dst),
	L3_COUNTER("route_hint_hits", route.route_hint_hits),
	{.name = NULL},
};

L3_MODULE(route);
