/* SPDX-License-Identifier: BSD-3-Clause
 * The rule file's options (nf_parse.h): one handler per option of an
 * -A line, as iptables' own parsers read them (iptables' -p/-s/-d/-i/-o/
 * -f/-j/-g/-c, the libxt_ matches udp, tcp, multiport, comment,
 * conntrack and state, the CT target) and the table that dispatches to
 * them. nf_rules.c reads the lines and builds the tables.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_common.h>

#include "nf_parse.h"

static int nf_ports(struct nf_parse *ps, const char *v, uint16_t pts[2])
{
	if (v == NULL || lrx_rule_port_range(v, ':', &pts[0], &pts[1]) != 0)
		return nf_error(ps, v ? v : "port", "a port is P, or a range P:Q "
				"(P <= Q, 0..65535; :Q and P: leave an end open)");
	return 0;
}

/* --tcp-flags' names (tcp_flag_names) */
static int nf_tcp_flags(struct nf_parse *ps, const char *v, uint8_t *out)
{
	static const struct { const char *name; uint8_t bit; } names[] = {
		{ "FIN", 0x01 }, { "SYN", 0x02 }, { "RST", 0x04 }, { "PSH", 0x08 },
		{ "ACK", 0x10 }, { "URG", 0x20 }, { "ALL", 0x3f }, { "NONE", 0 },
	};
	char buf[128];

	if (v == NULL || strlen(v) >= sizeof(buf))
		return nf_error(ps, "--tcp-flags", "needs MASK COMP: comma lists "
				"of SYN, ACK, FIN, RST, URG, PSH, ALL, NONE");
	snprintf(buf, sizeof(buf), "%s", v);
	*out = 0;
	char *save = NULL;
	for (char *f = strtok_r(buf, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
		size_t i = 0;
		while (i < RTE_DIM(names) && strcmp(f, names[i].name) != 0)
			i++;
		if (i == RTE_DIM(names))
			return nf_error(ps, f, "TCP flags are SYN, ACK, FIN, RST, "
					"URG, PSH, ALL, NONE");
		*out |= names[i].bit;
	}
	return 0;
}

/* --dports 53,80:90,... (xt_multiport v1: ranges take two slots) */
static int nf_multiport(struct nf_parse *ps, const char *v, struct lrx_nf_rule *r)
{
	char buf[256];

	if (v == NULL || strlen(v) >= sizeof(buf))
		return nf_error(ps, "multiport", "needs a list of ports and ranges "
				"(53,80:90)");
	snprintf(buf, sizeof(buf), "%s", v);
	r->mp_count = 0;
	const char *p = buf;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char item[32];
		uint16_t lo, hi;
		if (len == 0 || len >= sizeof(item))
			return nf_error(ps, v, "an empty or long entry in the list");
		memcpy(item, p, len);
		item[len] = '\0';
		if ((strchr(item, ':') && (item[0] == ':' || item[len - 1] == ':')) ||
		    lrx_rule_port_range(item, ':', &lo, &hi) != 0)
			return nf_error(ps, item, "a multiport entry is a port P or "
					"a range P:Q (P <= Q, 0..65535)");
		unsigned slots = strchr(item, ':') ? 2 : 1;
		if (r->mp_count + slots > LRX_NF_MULTI_PORTS)
			return nf_error(ps, v, "too many ports specified: at most %d "
					"(a range counts two)", LRX_NF_MULTI_PORTS);
		r->mp_ports[r->mp_count] = lo;
		r->mp_pflags[r->mp_count++] = slots == 2;
		if (slots == 2)
			r->mp_ports[r->mp_count++] = hi;
		p += len + (comma ? 1 : 0);
		if (comma && *p == '\0')
			return nf_error(ps, v, "a list does not end with a comma");
	}
	return 0;
}

/* -i NAME: listrx's devices are portN and its VLAN devices portN.VID; a
 * trailing '+' matches every name that starts with the rest. */
static int nf_iface(struct nf_parse *ps, const char *v, struct lrx_nf_rule *r)
{
	static const char valid[] = "an input device is portN, portN.VID (a "
				    "VLAN device) or a prefix ending in + "
				    "(port+, port1+)";
	char name[32];
	uint64_t n;

	if (v == NULL || strlen(v) >= 16)
		return nf_error(ps, v ? v : "-i", "%s; at most 15 characters", valid);
	size_t len = strlen(v);
	/* xtables_parse_interface: "" is any device, as "+" */
	if (len == 0 || strcmp(v, "+") == 0) {
		r->in_any = true;
		return 0;
	}
	if (v[len - 1] == '+') {
		const size_t plen = len - 1;
		for (unsigned port = 0; port < RTE_MAX_ETHPORTS; port++) {
			int nl = snprintf(name, sizeof(name), "port%u", port);
			if (plen <= (size_t)nl) {
				if (strncmp(name, v, plen) == 0) {
					r->in_ports |= UINT64_C(1) << port;
					r->in_vlan_ports |= UINT64_C(1) << port;
				}
			} else if (strncmp(v, name, (size_t)nl) == 0 && v[nl] == '.') {
				if (plen != (size_t)nl + 1)
					return nf_error(ps, v, "a wildcard inside a "
							"VLAN id is not modelled; %s",
							valid);
				r->in_vlan_ports |= UINT64_C(1) << port;
			}
		}
		if (r->in_ports == 0 && r->in_vlan_ports == 0)
			return nf_error(ps, v, "no device matches; %s", valid);
		return 0;
	}
	const char *dot = strchr(v, '.');
	if (strncmp(v, "port", 4) != 0)
		return nf_error(ps, v, "%s", valid);
	snprintf(name, sizeof(name), "%.*s", dot ? (int)(dot - v - 4) : (int)(len - 4),
		 v + 4);
	if (lrx_rule_uint(name, RTE_MAX_ETHPORTS - 1, false, &n) != 0 ||
	    (name[0] == '0' && name[1] != '\0'))
		return nf_error(ps, v, "%s (N a DPDK port id below %d)", valid,
				RTE_MAX_ETHPORTS);
	if (dot == NULL) {
		r->in_ports = UINT64_C(1) << n;
		return 0;
	}
	uint64_t vid;
	if (lrx_rule_uint(dot + 1, 4094, false, &vid) != 0 || vid == 0 ||
	    dot[1] == '0')
		return nf_error(ps, v, "a VLAN device is portN.VID, VID 1..4094");
	r->in_vlan_port = (uint16_t)n;
	r->in_vlan_vid = (uint16_t)vid;
	return 0;
}

/* -s/-d: an address of the rule set's family and its mask, into the
 * rule's IPv4 (struct ipt_ip) or IPv6 (struct ip6t_ip6) fields */
static int nf_addr(struct nf_parse *ps, const char *v, struct lrx_nf_rule *r,
		   bool src)
{
	uint8_t a[16], m[16];
	int af = ps->family;

	if (v == NULL || lrx_rule_addr(v, &af, a, m) != 0)
		return nf_error(ps, v ? v : "address", ps->family == AF_INET6
				? "an IPv6 address, optionally /N (IPv4 rules "
				  "are iptables', in the netfilter file)"
				: "an IPv4 address, optionally /N or /a.b.c.d "
				  "(IPv6 rules are ip6tables', in the netfilter6 "
				  "file)");
	if (ps->family == AF_INET6) {
		memcpy(src ? r->src6 : r->dst6, a, 16);
		memcpy(src ? r->smsk6 : r->dmsk6, m, 16);
	} else {
		memcpy(src ? &r->src : &r->dst, a, 4);
		memcpy(src ? &r->smsk : &r->dmsk, m, 4);
	}
	return 0;
}

/* -p/--protocol: a name from /etc/protocols or 0..255 */
static int nf_opt_proto(struct nf_rule_ctx *c, const char *k, const char *v)
{
	static const struct { const char *name; uint8_t p; } protos[] = {
		{ "tcp", 6 }, { "udp", 17 }, { "icmp", 1 }, { "all", 0 },
		{ "udplite", 136 }, { "sctp", 132 }, { "dccp", 33 },
		{ "gre", 47 }, { "esp", 50 }, { "ah", 51 },
		{ "icmpv6", 58 }, { "ipv6-icmp", 58 }, { "mh", 135 },
	};
	struct lrx_nf_rule *r = c->r;
	uint64_t u;
	size_t i = 0;

	while (v && i < RTE_DIM(protos) && strcmp(v, protos[i].name) != 0)
		i++;
	if (v && i < RTE_DIM(protos))
		r->proto = protos[i].p;
	else if (v && lrx_rule_uint(v, 255, false, &u) == 0)
		r->proto = (uint8_t)u;
	else
		return nf_error(c->ps, v ? v : k, "a protocol is tcp, udp, "
				"icmp, icmpv6 (ipv6-icmp), udplite, sctp, dccp, "
				"gre, esp, ah, mh, all or 0..255");
	if (r->proto == 0 && c->neg)
		return nf_error(c->ps, v, "! -p all matches nothing "
				"(iptables refuses it)");
	r->inv |= c->neg ? LRX_NF_INV_PROTO : 0;
	r->proto_set = true;
	c->at++;
	return 0;
}

/* -s/-d: an IPv4 address and mask */
static int nf_opt_addr(struct nf_rule_ctx *c, const char *k, const char *v)
{
	struct lrx_nf_rule *r = c->r;
	bool src = k[1] == 's' || k[2] == 's';
	int rc = nf_addr(c->ps, v, r, src);

	r->inv |= c->neg ? (src ? LRX_NF_INV_SRC : LRX_NF_INV_DST) : 0;
	c->at++;
	return rc;
}

/* -i/--in-interface: the input device */
static int nf_opt_iface(struct nf_rule_ctx *c, const char *k, const char *v)
{
	(void)k;
	c->r->in_any = false;
	int rc = nf_iface(c->ps, v, c->r);
	c->r->inv |= c->neg ? LRX_NF_INV_IN : 0;
	c->at++;
	return rc;
}

/* -o/--out-interface: refused on the receive path */
static int nf_opt_oface(struct nf_rule_ctx *c, const char *k, const char *v)
{
	(void)v;
	return nf_error(c->ps, k, "no output device on the receive path "
			"(iptables refuses -o in PREROUTING and INPUT)");
}

/* -f/--fragment: non-first fragments */
static int nf_opt_frag(struct nf_rule_ctx *c, const char *k, const char *v)
{
	(void)v;
	if (c->ps->family == AF_INET6)
		return nf_error(c->ps, k, "ip6tables has no -f (its fragment "
				"match, -m frag, is not modelled)");
	c->r->frag = true;
	c->r->inv |= c->neg ? LRX_NF_INV_FRAG : 0;
	return 0;
}

/* -m/--match: load a match extension (udp, tcp, multiport, comment) */
static int nf_opt_match(struct nf_rule_ctx *c, const char *k, const char *v)
{
	if (v == NULL)
		return nf_error(c->ps, k, "needs a match name");
	c->at++;
	if (c->neg)
		return nf_error(c->ps, "!", "a match cannot be inverted");
	if (strcmp(v, "udp") == 0)
		c->has_udp = true;
	else if (strcmp(v, "tcp") == 0)
		c->has_tcp = true;
	else if (strcmp(v, "multiport") == 0)
		c->has_mp = true;
	else if (strcmp(v, "comment") == 0)
		;
	else if (strcmp(v, "conntrack") == 0)
		c->has_ctmatch = true;
	else if (strcmp(v, "state") == 0)
		c->has_state = true;
	else
		return nf_error(c->ps, v, "matches: udp, tcp, multiport, "
				"comment, conntrack, state (others are not "
				"modelled)");
	return 0;
}

/* --sport/--dport: xt_tcpudp's port range */
static int nf_opt_port(struct nf_rule_ctx *c, const char *k, const char *v)
{
	struct lrx_nf_rule *r = c->r;
	bool src = strcmp(k, "--sport") == 0 || strcmp(k, "--source-port") == 0;

	/* iptables loads the protocol's match for a port option after -p
	 * (libxt's implicit match) */
	if (!c->has_udp && !c->has_tcp) {
		c->has_udp = r->proto == 17;
		c->has_tcp = r->proto == 6;
	}
	if (!c->has_udp && !c->has_tcp)
		return nf_error(c->ps, k, "needs -p udp or -p tcp (and "
				"-m udp / -m tcp) before it");
	int rc = nf_ports(c->ps, v, src ? r->spts : r->dpts);
	r->tu_inv |= c->neg ? (src ? LRX_NF_TU_INV_SRC : LRX_NF_TU_INV_DST) : 0;
	c->at++;
	return rc;
}

/* --tcp-flags MASK CMP / --syn: xt_tcpudp's flag test */
static int nf_opt_tcp_flags(struct nf_rule_ctx *c, const char *k, const char *v)
{
	struct lrx_nf_rule *r = c->r;
	int rc = 0;

	if (!c->has_tcp && r->proto == 6)
		c->has_tcp = true;
	if (!c->has_tcp)
		return nf_error(c->ps, k, "needs -p tcp -m tcp before it");
	if (k[2] == 's') { /* --syn: SYN,RST,ACK,FIN SYN */
		r->flg_mask = 0x17;
		r->flg_cmp = 0x02;
	} else {
		rc = nf_tcp_flags(c->ps, v, &r->flg_mask);
		if (rc == 0)
			rc = nf_tcp_flags(c->ps, c->at + 1 < c->n ? c->w[c->at + 1]
					  : NULL, &r->flg_cmp);
		c->at += 2;
	}
	r->tu_inv |= c->neg ? LRX_NF_TU_INV_FLAGS : 0;
	return rc;
}

/* --sports/--dports/--ports: xt_multiport's port list */
static int nf_opt_multiport(struct nf_rule_ctx *c, const char *k, const char *v)
{
	struct lrx_nf_rule *r = c->r;

	if (!c->has_mp)
		return nf_error(c->ps, k, "needs -m multiport before it");
	r->mp_flags = k[2] == 's' ? LRX_NF_MP_SOURCE
		      : k[2] == 'd' ? LRX_NF_MP_DESTINATION
		      : LRX_NF_MP_EITHER;
	r->mp_invert = c->neg;
	c->at++;
	return nf_multiport(c->ps, v, r);
}

/* --comment TEXT: xt_comment, no effect */
static int nf_opt_comment(struct nf_rule_ctx *c, const char *k, const char *v)
{
	if (v == NULL)
		return nf_error(c->ps, k, "needs a text");
	if (c->neg)
		return nf_error(c->ps, "!", "a comment cannot be inverted");
	c->at++;
	return 0;
}

/* --ctstate / --state: the states, comma-separated (xt_conntrack's
 * conntrack_ps_states, xt_state's state_parse_states) */
static int nf_opt_ctstate(struct nf_rule_ctx *c, const char *k, const char *v)
{
	static const struct { const char *name; uint8_t bit; } states[] = {
		{ "INVALID", LRX_NF_CT_INVALID }, { "ESTABLISHED", LRX_NF_CT_ESTABLISHED },
		{ "RELATED", LRX_NF_CT_RELATED }, { "NEW", LRX_NF_CT_NEW },
		{ "UNTRACKED", LRX_NF_CT_UNTRACKED },
	};
	const bool state = strcmp(k, "--state") == 0;
	if (state ? !c->has_state : !c->has_ctmatch)
		return nf_error(c->ps, k, "needs -m %s before it",
				state ? "state" : "conntrack");
	if (v == NULL)
		return nf_error(c->ps, k, "needs a list of states");
	c->at++;
	struct lrx_nf_rule *r = c->r;
	for (const char *s = v; *s;) {
		size_t len = strcspn(s, ","), i = 0;
		while (i < RTE_DIM(states) && (strlen(states[i].name) != len ||
					       strncmp(s, states[i].name, len) != 0))
			i++;
		if (i == RTE_DIM(states))
			return nf_error(c->ps, v, "states: INVALID, ESTABLISHED, "
					"RELATED, NEW, UNTRACKED (SNAT and DNAT "
					"need NAT, not modelled)");
		r->ct_states |= states[i].bit;
		s += len + (s[len] == ',');
	}
	r->ct_invert = c->neg;
	return 0;
}

/* --notrack: CT's option (the only one modelled) */
static int nf_opt_notrack(struct nf_rule_ctx *c, const char *k, const char *v)
{
	(void)v;
	if (!c->has_ct_target || c->neg)
		return nf_error(c->ps, k, "an option of -j CT (not inverted)");
	c->r->notrack = true;
	return 0;
}

/* -j/-g: the target, a verdict or a user chain resolved later */
static int nf_opt_target(struct nf_rule_ctx *c, const char *k, const char *v)
{
	struct lrx_nf_rule *r = c->r;

	if (c->neg)
		return nf_error(c->ps, "!", "a target cannot be inverted "
				"(iptables: cannot have ! before %s)", k);
	if (v == NULL || c->has_target)
		return nf_error(c->ps, k, v ? "one target per rule"
				: "needs a target");
	c->has_target = true;
	r->is_goto = k[1] == 'g' || k[2] == 'g';
	c->at++;
	if (strcmp(v, "CT") == 0 || strcmp(v, "NOTRACK") == 0) {
		/* xt_ct_tg_check: the raw table only; CT without --notrack
		 * (zones, helpers, timeouts) is not modelled */
		if (r->is_goto || c->ps->table != LRX_NF_RAW)
			return nf_error(c->ps, v, "the CT target is valid in the raw "
					"table only (-j CT --notrack)");
		c->has_ct_target = v[0] == 'C';
		r->notrack = v[0] == 'N';
	} else if (strcmp(v, "ACCEPT") == 0 || strcmp(v, "DROP") == 0 ||
	    strcmp(v, "RETURN") == 0) {
		if (r->is_goto)
			return nf_error(c->ps, v, "-g goes to a user chain");
		r->verdict = v[0] == 'A' ? LRX_NF_V_ACCEPT
			     : v[0] == 'D' ? LRX_NF_V_DROP
			     : LRX_NF_V_RETURN;
	} else if (strlen(v) < sizeof(c->pd->target)) {
		/* a chain: resolved when the table is read */
		snprintf(c->pd->target, sizeof(c->pd->target), "%s", v);
	} else {
		return nf_error(c->ps, v, "a chain name has at most %d "
				"characters", LRX_NF_CHAIN_NAME_MAX - 1);
	}
	return 0;
}

/* -c PKTS BYTES: iptables -c's counters, checked and skipped */
static int nf_opt_counters(struct nf_rule_ctx *c, const char *k, const char *v)
{
	const char *b = c->at + 1 < c->n ? c->w[c->at + 1] : NULL;
	uint64_t n;

	if (c->neg)
		return nf_error(c->ps, "!", "-c cannot be inverted");
	if (v == NULL || b == NULL || lrx_rule_uint(v, UINT64_MAX, false, &n) != 0 ||
	    lrx_rule_uint(b, UINT64_MAX, false, &n) != 0)
		return nf_error(c->ps, k, "-c PACKETS BYTES: two decimal integers");
	c->at += 2;
	return 0;
}

/* the rule options read, as iptables-save writes them. once: names[i]
 * and names[j] are one option, given at most once per rule, when i / once
 * == j / once (iptables: "multiple -p flags not allowed", xt_tcpudp's
 * "Only one of --syn or --tcp-flags", xt_multiport's "can only have one
 * option"); 0: any number (-m, one match each time) */
static const struct nf_rule_opt nf_rule_opts[] = {
	{ { "-p", "--protocol" }, nf_opt_proto, 2 },
	{ { "-s", "--source", "-d", "--destination" }, nf_opt_addr, 2 },
	{ { "-i", "--in-interface" }, nf_opt_iface, 2 },
	{ { "-o", "--out-interface" }, nf_opt_oface, 2 },
	{ { "-f", "--fragment" }, nf_opt_frag, 2 },
	{ { "-m", "--match" }, nf_opt_match, 0 },
	{ { "--sport", "--source-port", "--dport", "--destination-port" },
	  nf_opt_port, 2 },
	{ { "--tcp-flags", "--syn" }, nf_opt_tcp_flags, 2 },
	{ { "--sports", "--dports", "--ports", "--source-ports",
	    "--destination-ports" }, nf_opt_multiport, 5 },
	{ { "--comment" }, nf_opt_comment, 0 },
	{ { "--ctstate", "--state" }, nf_opt_ctstate, 1 },
	{ { "--notrack" }, nf_opt_notrack, 1 },
	{ { "-j", "--jump", "-g", "--goto" }, nf_opt_target, 0 }, /* its own */
	{ { "-c" }, nf_opt_counters, 1 },
};
static_assert(RTE_DIM(nf_rule_opts) <= 16, "nf_rule_ctx.seen has 16 entries");

/* an option of the rule given a second time: refused, as iptables does */
int nf_rule_opt_once(struct nf_rule_ctx *c, const struct nf_rule_opt *o,
			    const char *k)
{
	size_t i = 0;

	if (o->once == 0)
		return 0;
	while (i < RTE_DIM(o->names) && o->names[i] && strcmp(o->names[i], k) != 0)
		i++;
	const uint8_t bit = (uint8_t)(1u << (i / o->once));
	uint8_t *seen = &c->seen[o - nf_rule_opts];
	if (*seen & bit)
		return nf_error(c->ps, k, "given twice in one rule (iptables-restore "
				"refuses an option given twice)");
	*seen |= bit;
	return 0;
}

/* the handler of option k, NULL when it is not modelled */
const struct nf_rule_opt *nf_rule_opt_find(const char *k)
{
	for (size_t i = 0; i < RTE_DIM(nf_rule_opts); i++)
		if (lrx_rule_word_in(k, nf_rule_opts[i].names,
				     RTE_DIM(nf_rule_opts[i].names)))
			return &nf_rule_opts[i];
	return NULL;
}

