/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux's module route: IPv4 route input of a host that does not
 * forward (the lookup inline in route.h) and the IP options on receive
 * (net/ipv4/route.c, net/ipv4/ip_options.c), and the source validation
 * of a local route with its reverse path filter (fib_validate_source,
 * net/ipv4/fib_frontend.c). Keys martians, route_hint, local_ipv4,
 * accept_source_route, accept_local, rp_filter, rp_filter_ports,
 * ipv4_routes; counters in_martian_src, in_martian_dst, route_hint_hits,
 * TcpExtIPReversePathFilter.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_ip.h>

#include "l3_modules.h"

/* ip_route_input_rcu's multicast branch: a group this port has not joined
 * (ip_check_mc_rcu) is dropped with only InReceives counted (the route
 * error, NOT_SPECIFIED); a joined one goes to ip_route_input_mc, whose
 * ip_mc_validate_source judges the source (a local one by
 * fib_validate_source: IP_LOCAL_SOURCE or the reverse path filter's
 * IP_RPFILTER, no in_martian_src). No route hint: the verdict also
 * depends on the port. */
lrx_next_t l3_ipv4_route_mc(struct l3_ctx *c, const struct rte_ipv4_hdr *iph,
			    uint16_t port, enum l3_rt *rt)
{
	struct l3_route *r = l3_route_of(c);
	enum lrx_drop_reason why;
	c->route_lookups++;
	if (!l3_mcast_joined4(&c->mc, iph->dst_addr, port))
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	if (r->martians_drop &&
	    l3_mcast_source_refused4(rte_be_to_cpu_32(iph->src_addr),
				     rte_be_to_cpu_32(iph->dst_addr),
				     iph->next_proto_id, &why))
		return lrx_next_drop(why);
	if (l3_ipv4_source_refused(c, r, iph->src_addr, port, &why)) {
		/* ip_rcv_finish_core counts the filter's drops, whatever
		 * the route */
		r->rp_filter_drops += why == LRX_DROP_IP_RPFILTER;
		return lrx_next_drop(why);
	}
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

/* __fib_validate_source with the port's rp_filter (the max of all and
 * the port's, IN_DEV_RPFILTER), or fib_validate_source's fast path where
 * that is 0. The lookup of the source (fib_lookup, flowi4 daddr = the
 * source): the local table first, where the host's addresses are
 * RTN_LOCAL (refused IP_LOCAL_SOURCE unless accept_local; listrx's
 * addresses belong to no one port, so their route matches any) and the
 * subnet broadcasts RTN_BROADCAST (neither unicast nor local:
 * IP_INVALID_SOURCE); then the longest prefix of the main table. No route
 * back is IP_RPFILTER (last_resort); strict (1) wants the route to leave
 * by the port the packet came in on (fib_info_nh_uses_dev), loose (2)
 * takes any route. */
bool l3_ipv4_source_refused_fib(const struct l3_ctx *c,
				const struct l3_route *r, uint32_t saddr_be,
				uint16_t port, enum lrx_drop_reason *why)
{
	const uint8_t rpf = port < RTE_MAX_ETHPORTS ? r->rp_filter[port]
						    : r->rp_filter_all;
	if ((saddr_be & rte_cpu_to_be_32(0xff000000)) == 0)
		return false;
	*why = LRX_DROP_IP_LOCAL_SOURCE;
	if (r->n_local4 && l3_ipv4_is_local(r, saddr_be))
		return !r->accept_local;
	if (rpf == 0)
		return false;
	*why = LRX_DROP_IP_INVALID_SOURCE;
	if (l3_mcast_is_bcast4(&c->mc, saddr_be))
		return true;
	const struct l3_routes4 *t = &r->routes4;
	const uint32_t s = rte_be_to_cpu_32(saddr_be);
	int best = -1;
	for (unsigned i = 0; i < t->n; i++) {
		const uint32_t mask = t->plen[i] ? UINT32_MAX << (32 - t->plen[i]) : 0;
		if (((s ^ rte_be_to_cpu_32(t->prefix[i])) & mask) == 0 &&
		    (best < 0 || t->plen[i] > t->plen[best]))
			best = (int)i;
	}
	*why = LRX_DROP_IP_RPFILTER;
	if (best < 0)
		return true;
	return rpf == 1 && t->port[best] != L3_ROUTE_ANY_PORT &&
	       t->port[best] != port;
}

const char l3_routes4_valid[] =
	"none, subnets, or a list of up to 32 IPv4 prefixes with no host bits "
	"set, each optionally %port (the port its route leaves by; absent: "
	"any), e.g. 10.9.0.0/24%1+0.0.0.0/0%0";
const char l3_routes6_valid[] =
	"none, subnets, or a list of up to 32 IPv6 prefixes with no host bits "
	"set, each optionally %port, e.g. 2001:db8:9::/48+::/0%0";
const char l3_rp_filters_valid[] =
	"none, or a list of port:mode (mode 0 off, 1 strict, 2 loose), e.g. 0:1+1:2";

/* A port after '%' or ':' (lrx_value_uint's range, one parser). */
static int l3_parse_port(const char *text, uint16_t *port)
{
	uint64_t v;
	int rc = lrx_value_uint(text, 0, RTE_MAX_ETHPORTS - 1, &v);
	*port = (uint16_t)v;
	return rc;
}

/* One route of a list: PREFIX[%PORT] of family af, no host bits set (as
 * `ip route add` wants). */
static int l3_parse_route(char *item, int af, uint8_t *prefix, uint8_t *plen,
			  uint16_t *port)
{
	unsigned len;
	char *pct = strchr(item, '%');
	*port = L3_ROUTE_ANY_PORT;
	if (pct) {
		*pct = '\0';
		if (l3_parse_port(pct + 1, port) < 0)
			return -EINVAL;
	}
	if (lrx_value_addr(item, af, prefix, &len) < 0)
		return -EINVAL;
	const unsigned bytes = af == AF_INET6 ? 16 : 4;
	for (unsigned b = 0; b < bytes; b++) {
		const unsigned keep = len >= 8 * (b + 1) ? 8 : len > 8 * b ? len - 8 * b : 0;
		if (prefix[b] & (uint8_t)~(0xff00 >> keep))
			return -EINVAL;
	}
	*plen = (uint8_t)len;
	return 0;
}

/* ipv4_routes / ipv6_routes: "none" (not described: complete stays
 * false), "subnets" (only the local subnets' routes) or a list; each
 * route goes to put(out, index, prefix, plen, port). */
static int l3_parse_routes(const char *text, int af, void *out, uint8_t *n,
			   bool *complete,
			   void (*put)(void *, unsigned, const uint8_t *, uint8_t, uint16_t))
{
	char item[80];
	int rc;
	*n = 0;
	*complete = strcmp(text, "none") != 0;
	if (strcmp(text, "none") == 0 || strcmp(text, "subnets") == 0)
		return 0;
	for (const char *p = text; (rc = lrx_value_list_next(&p, item, sizeof(item))) > 0;) {
		uint8_t prefix[16], plen;
		uint16_t port;
		if (*n == L3_ROUTES_MAX || l3_parse_route(item, af, prefix, &plen, &port) < 0)
			return -EINVAL;
		put(out, (*n)++, prefix, plen, port);
	}
	return rc < 0 || *n == 0 ? -EINVAL : 0;
}

static void l3_put_route4(void *out, unsigned i, const uint8_t *prefix,
			  uint8_t plen, uint16_t port)
{
	struct l3_routes4 *t = out;
	memcpy(&t->prefix[i], prefix, 4);
	t->plen[i] = plen;
	t->port[i] = port;
}

static void l3_put_route6(void *out, unsigned i, const uint8_t *prefix,
			  uint8_t plen, uint16_t port)
{
	struct l3_routes6 *t = out;
	memcpy(t->prefix[i], prefix, 16);
	t->plen[i] = plen;
	t->port[i] = port;
}

int l3_parse_routes4(const char *text, void *out)
{
	struct l3_routes4 *t = out;
	memset(t, 0, sizeof(*t));
	return l3_parse_routes(text, AF_INET, t, &t->n, &t->complete, l3_put_route4);
}

int l3_parse_routes6(const char *text, void *out)
{
	struct l3_routes6 *t = out;
	memset(t, 0, sizeof(*t));
	return l3_parse_routes(text, AF_INET6, t, &t->n, &t->complete, l3_put_route6);
}

bool l3_ipv4_out_route(const struct l3_route *r, uint32_t daddr_be)
{
	const struct l3_routes4 *t = &r->routes4;
	if (!t->complete)
		return true;
	for (unsigned i = 0; i < t->n; i++)
		if (l3_in_prefix4(daddr_be, t->prefix[i], t->plen[i]))
			return true;
	return false;
}

/* fib6_lookup's longest prefix among ipv6_routes, each local_ipv6
 * prefix route and fe80::/64; without a complete table, the local
 * prefix the address is on, else a default route's 0. */
int l3_ipv6_out_route(struct l3_ctx *c, const uint8_t *daddr)
{
	static const uint8_t link_local[16] = {0xfe, 0x80};
	const struct l3_routes6 *t = &l3_route_of(c)->routes6;
	const struct l3_ipv6 *v6 = l3_ipv6_of(c);
	if (!t->complete)
		return (int)l3_ipv6_route_plen(v6, daddr);
	int best = l3_in_prefix(daddr, link_local, 64) ? 64 : -1;
	for (unsigned i = 0; i < v6->n_local6; i++)
		if (v6->plen6[i] < 128 && v6->plen6[i] > best &&
		    l3_in_prefix(daddr, v6->local6[i], v6->plen6[i]))
			best = v6->plen6[i];
	for (unsigned i = 0; i < t->n; i++)
		if (t->plen[i] > best && l3_in_prefix(daddr, t->prefix[i], t->plen[i]))
			best = t->plen[i];
	return best;
}

int l3_parse_rp_filters(const char *text, void *out)
{
	struct l3_rp_filters *f = out;
	char item[64];
	int rc;
	memset(f, 0, sizeof(*f));
	if (strcmp(text, "none") == 0)
		return 0;
	for (const char *p = text; (rc = lrx_value_list_next(&p, item, sizeof(item))) > 0;) {
		char *colon = strchr(item, ':');
		uint64_t mode;
		if (!colon || f->n == RTE_MAX_ETHPORTS)
			return -EINVAL;
		*colon = '\0';
		if (l3_parse_port(item, &f->port[f->n]) < 0 ||
		    lrx_value_uint(colon + 1, 0, 2, &mode) < 0)
			return -EINVAL;
		f->mode[f->n++] = (uint8_t)mode;
	}
	return rc < 0 || f->n == 0 ? -EINVAL : 0;
}

/* Each port's rp_filter (IN_DEV_MAXCONF: the max of all and the port's)
 * and which source check the route does. */
static void l3_route_init_rp_filter(struct l3_route *r,
				    const struct l3_route_conf *conf)
{
	bool on = conf->rp_filter != 0;
	r->rp_filter_all = conf->rp_filter;
	memset(r->rp_filter, conf->rp_filter, sizeof(r->rp_filter));
	for (unsigned i = 0; i < conf->rp_filter_ports.n; i++) {
		const uint16_t port = conf->rp_filter_ports.port[i];
		r->rp_filter[port] = RTE_MAX(conf->rp_filter, conf->rp_filter_ports.mode[i]);
		on |= r->rp_filter[port] != 0;
	}
	r->source_check = !r->martians_drop ? L3_SOURCE_NONE
			  : on		    ? L3_SOURCE_FIB
			  : r->accept_local ? L3_SOURCE_NONE
					    : L3_SOURCE_LOCAL;
	/* ipv4_routes, then each address's prefix route (fib_add_ifaddr) */
	r->routes4 = conf->routes4;
	r->routes6 = conf->routes6;
	for (unsigned i = 0; i < r->n_local4; i++) {
		const uint8_t plen = r->plen4[i];
		if (plen >= 32)
			continue;
		const uint32_t mask = plen ? UINT32_MAX << (32 - plen) : 0;
		struct l3_routes4 *t = &r->routes4;
		t->prefix[t->n] = rte_cpu_to_be_32(rte_be_to_cpu_32(r->local4[i]) & mask);
		t->plen[t->n] = plen;
		t->port[t->n++] = L3_ROUTE_ANY_PORT;
	}
}

static int l3_route_init(struct l3_demux *d, const struct l3_demux_conf *conf,
			 const struct lrx_stage_init *init)
{
	struct l3_route *r = &d->route;
	(void)init;
	r->martians_drop = conf->route.martians == 0;
	r->route_hint = conf->route.route_hint;
	r->accept_source_route = conf->route.accept_source_route;
	r->accept_local = conf->route.accept_local;
	r->n_local4 = conf->route.local_ipv4.n;
	for (unsigned i = 0; i < r->n_local4; i++)
		memcpy(&r->local4[i], conf->route.local_ipv4.addr[i], 4);
	memcpy(r->plen4, conf->route.local_ipv4.plen, sizeof(r->plen4));
	l3_route_init_rp_filter(r, &conf->route);
	return 0;
}

static const char *const l3_martians[] = {"drop", "accept", NULL};

static const struct lrx_value_key l3_route_keys[] = {
	L3_KEY(CHOICE, route.martians, "martians", "drop", l3_martians,
	       "drop | accept martian sources/destinations (0/8, 127/8, multicast "
	       "or broadcast source, a local_ipv4 address as source); accept "
	       "also turns rp_filter off"),
	L3_KEY(BOOL, route.accept_local, "accept_local", "no",
	       "packets whose source is a local_ipv4 address "
	       "(net.ipv4.conf.all.accept_local); no drops them IP_LOCAL_SOURCE, "
	       "counted in_martian_src"),
	L3_KEY(UINT, route.rp_filter, "rp_filter", "0", 0, 2,
	       "reverse path filter of every port (net.ipv4.conf.all.rp_filter): "
	       "0 off, 1 strict (the route back to the source must leave by the "
	       "port the packet came in on), 2 loose (any route back will do); "
	       "looked up in ipv4_routes and the local_ipv4 subnets; a refused "
	       "source drops IP_RPFILTER, counted in_martian_src and "
	       "TcpExtIPReversePathFilter"),
	L3_KEY(CUSTOM, route.rp_filter_ports, "rp_filter_ports", "none",
	       l3_parse_rp_filters, l3_rp_filters_valid,
	       "each port's own rp_filter (net.ipv4.conf.IF.rp_filter): the "
	       "higher of it and rp_filter applies, as the kernel takes the max"),
	L3_KEY(CUSTOM, route.routes4, "ipv4_routes", "none", l3_parse_routes4,
	       l3_routes4_valid,
	       "the main table's unicast routes (ip route add PREFIX dev PORT) "
	       "beside each local_ipv4 subnet, which any port reaches: the "
	       "reverse path filter looks a source up in them; with subnets or a "
	       "list, a reply (ICMP, RST) to an address none covers is not sent "
	       "(no default route); none: replies go out to every address"),
	L3_KEY(CUSTOM, route.routes6, "ipv6_routes", "none", l3_parse_routes6,
	       l3_routes6_valid,
	       "IPv6 unicast routes beside each local_ipv6 prefix and fe80::/64: "
	       "with subnets or a list, a reply to an address none covers is not "
	       "sent (Ip6OutNoRoutes); none: replies go out to every address"),
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
	L3_COUNTER("TcpExtIPReversePathFilter", route.rp_filter_drops),
	{.name = NULL},
};

L3_MODULE(route);
