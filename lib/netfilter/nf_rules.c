/* SPDX-License-Identifier: BSD-3-Clause
 * The netfilter rule file: the subset of iptables-save's text that the
 * receive path's hooks run, so that `iptables-save > f` on a host (with
 * its device names as listrx's) loads here and `iptables-restore < f`
 * loads a kernel; an ip6tables-save text is the same grammar with IPv6
 * addresses (family AF_INET6), without -f:
 *
 *   *raw | *mangle | *filter          a table, up to COMMIT
 *   :CHAIN POLICY [p:b]               built-in chain (ACCEPT|DROP) or
 *   :CHAIN - [p:b]                    user chain
 *   [p:b] -A CHAIN [MATCHES] [-j TARGET | -g CHAIN]
 *   COMMIT
 *
 * MATCHES: [!] -p udp|tcp|icmp|icmpv6|all|N, [!] -s A[/M], [!] -d A[/M],
 * [!] -i DEV (portN, portN.VID, a prefix with '+'), [!] -f,
 * -m udp|tcp [[!] --sport P[:Q]] [[!] --dport P[:Q]]
 *            [[!] --tcp-flags MASK COMP | [!] --syn],
 * -m multiport [!] --sports|--dports|--ports P[,P:Q...] (15 at most),
 * -m comment --comment TEXT, -m conntrack [!] --ctstate S[,S...],
 * -m state [!] --state S[,S...] (INVALID, ESTABLISHED, NEW, RELATED,
 * UNTRACKED). TARGET: ACCEPT, DROP, RETURN, a user chain, or in raw
 * CT --notrack (NOTRACK).
 * Counters in the file ([p:b]) are not loaded: every counter starts at 0.
 * What iptables-restore refuses is refused (a loop of jumps, an unknown
 * chain, -o on an input chain, a port match without its protocol); what
 * listrx does not model is refused naming it (the nat table; other
 * targets and matches).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_ethdev.h>

#include "netfilter.h"
#include "rule_text.h"

#define NF_FILE_MAX (4u << 20)

/* the built-in chains of each table and the hook each is on (-1: not a
 * receive hook) */
static const struct nf_builtin {
	uint8_t table;
	const char *name;
	int8_t hook;
} nf_builtins[] = {
	{ LRX_NF_RAW, "PREROUTING", LRX_NF_PRE_ROUTING },
	{ LRX_NF_RAW, "OUTPUT", -1 },
	{ LRX_NF_MANGLE, "PREROUTING", LRX_NF_PRE_ROUTING },
	{ LRX_NF_MANGLE, "INPUT", LRX_NF_LOCAL_IN },
	{ LRX_NF_MANGLE, "FORWARD", -1 },
	{ LRX_NF_MANGLE, "OUTPUT", -1 },
	{ LRX_NF_MANGLE, "POSTROUTING", -1 },
	{ LRX_NF_FILTER, "INPUT", LRX_NF_LOCAL_IN },
	{ LRX_NF_FILTER, "FORWARD", -1 },
	{ LRX_NF_FILTER, "OUTPUT", -1 },
};

static const char *const nf_table_names[LRX_NF_TABLES] = { "raw", "mangle",
							   "filter" };

const char *lrx_nf_table_name(unsigned table)
{
	return table < LRX_NF_TABLES ? nf_table_names[table] : "?";
}

/* A rule as read: its chain and the name of its target (resolved once
 * every chain of the table is known). */
struct nf_pending {
	struct lrx_nf_rule r;
	uint16_t chain;
	char target[LRX_NF_CHAIN_NAME_MAX];
};

struct nf_parse {
	struct lrx_rule_reader rd;
	int family;           /* AF_INET or AF_INET6 */
	int table;            /* the open table, -1 none */
	bool committed[LRX_NF_TABLES];
	unsigned n_chains;
	struct lrx_nf_chain chains[LRX_NF_CHAINS_MAX];
	int8_t policy[LRX_NF_CHAINS_MAX]; /* LRX_NF_V_ACCEPT / _DROP, 0 user */
	bool declared[LRX_NF_CHAINS_MAX]; /* a ':CHAIN' line named it */
	unsigned n_pending, max_pending;
	struct nf_pending *pending;
};

/* "name:line: 'word': ..." */
#define nf_error(ps, word, ...) lrx_rule_fail(&(ps)->rd, word, __VA_ARGS__)

static int nf_chain_find(const struct nf_parse *ps, int table, const char *name)
{
	for (unsigned i = 0; i < ps->n_chains; i++)
		if (ps->chains[i].table == table &&
		    strcmp(ps->chains[i].name, name) == 0)
			return (int)i;
	return -1;
}

static const struct nf_builtin *nf_builtin(int table, const char *name)
{
	for (size_t i = 0; i < RTE_DIM(nf_builtins); i++)
		if (nf_builtins[i].table == table &&
		    strcmp(nf_builtins[i].name, name) == 0)
			return &nf_builtins[i];
	return NULL;
}

static int nf_chain_add(struct nf_parse *ps, int table, const char *name,
			const struct nf_builtin *b, int8_t policy)
{
	if (ps->n_chains == LRX_NF_CHAINS_MAX)
		return nf_error(ps, name, "more than %d chains", LRX_NF_CHAINS_MAX);
	struct lrx_nf_chain *c = &ps->chains[ps->n_chains];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->table = (uint8_t)table;
	c->builtin = b != NULL;
	c->hook = b ? b->hook : -1;
	c->line = (uint16_t)ps->rd.line;
	ps->policy[ps->n_chains] = policy;
	return (int)ps->n_chains++;
}

/* *TABLE */
static int nf_table_line(struct nf_parse *ps, const char *word)
{
	const char *t = word + 1;

	if (ps->table >= 0)
		return nf_error(ps, word, "table %s is not committed (a COMMIT "
				"line ends a table)", nf_table_names[ps->table]);
	if (strcmp(t, "nat") == 0)
		return nf_error(ps, word, "the nat table needs connection tracking "
				"(nf_conntrack_in, nf_nat_ipv4_pre_routing), which "
				"listrx does not model; tables: raw, mangle, filter");
	for (int i = 0; i < LRX_NF_TABLES; i++)
		if (strcmp(t, nf_table_names[i]) == 0) {
			if (ps->committed[i])
				return nf_error(ps, word, "table %s given twice", t);
			ps->table = i;
			/* iptables-restore makes every built-in chain of the
			 * table, policy ACCEPT unless a line says otherwise */
			for (size_t b = 0; b < RTE_DIM(nf_builtins); b++)
				if (nf_builtins[b].table == i &&
				    nf_chain_add(ps, i, nf_builtins[b].name,
						 &nf_builtins[b], LRX_NF_V_ACCEPT) < 0)
					return -EINVAL;
			return 0;
		}
	return nf_error(ps, word, "tables on the receive path: raw, mangle, "
			"filter (security is not modelled, nat needs conntrack)");
}

/* "[packets:bytes]" as iptables-save -c writes them */
static int nf_counters(struct nf_parse *ps, const char *word)
{
	uint64_t pkts, bytes;

	if (lrx_rule_counters(word, &pkts, &bytes) == 0)
		return 0;
	return nf_error(ps, word, "counters are [PACKETS:BYTES], two decimal "
			"integers (iptables-restore: bad packet/byte counters)");
}

/* :CHAIN POLICY [p:b] */
static int nf_chain_line(struct nf_parse *ps, char **w, int n)
{
	const char *name = w[0] + 1;

	if (ps->table < 0)
		return nf_error(ps, w[0], "a chain line comes inside a table "
				"(after *filter, ...)");
	if (n < 2 || n > 3)
		return nf_error(ps, w[0], "a chain line is ':CHAIN POLICY [p:b]'");
	if (n == 3 && nf_counters(ps, w[2]) < 0)
		return -EINVAL;
	size_t len = strlen(name);
	if (len == 0 || len >= LRX_NF_CHAIN_NAME_MAX || name[0] == '-' ||
	    name[0] == '!')
		return nf_error(ps, w[0], "a chain name is 1..%d characters, not "
				"starting with - or !", LRX_NF_CHAIN_NAME_MAX - 1);
	const struct nf_builtin *b = nf_builtin(ps->table, name);
	int8_t policy = 0;
	if (strcmp(w[1], "ACCEPT") == 0)
		policy = LRX_NF_V_ACCEPT;
	else if (strcmp(w[1], "DROP") == 0)
		policy = LRX_NF_V_DROP;
	else if (strcmp(w[1], "-") != 0)
		return nf_error(ps, w[1], "a policy is ACCEPT or DROP (built-in "
				"chains) or - (user chains)");
	if (b != NULL && policy == 0)
		return nf_error(ps, w[1], "%s is a built-in chain of %s: its "
				"policy is ACCEPT or DROP", name,
				nf_table_names[ps->table]);
	if (b == NULL && policy != 0)
		return nf_error(ps, w[1], "only built-in chains have a policy; "
				"a user chain is ':%s - [0:0]'", name);
	int c = nf_chain_find(ps, ps->table, name);
	if (c >= 0 && ps->declared[c])
		return nf_error(ps, w[0], "chain %s declared twice (line %u)", name,
				ps->chains[c].line);
	if (b != NULL) {
		ps->declared[c] = true;
		ps->policy[c] = policy;
		ps->chains[c].line = (uint16_t)ps->rd.line;
		return 0;
	}
	if (strcmp(name, "ACCEPT") == 0 || strcmp(name, "DROP") == 0 ||
	    strcmp(name, "RETURN") == 0)
		return nf_error(ps, w[0], "a chain cannot be called like a target");
	c = nf_chain_add(ps, ps->table, name, NULL, 0);
	if (c < 0)
		return -EINVAL;
	ps->declared[c] = true;
	return 0;
}

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
	if (strcmp(v, "+") == 0) {
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

/* one -A line's parse state: the rule, the words, the matches loaded */
struct nf_rule_ctx {
	struct nf_parse *ps;
	struct nf_pending *pd;
	struct lrx_nf_rule *r;
	char **w;
	int n;
	int at; /* the option's value word */
	bool neg, has_udp, has_tcp, has_mp, has_target;
	bool has_ctmatch, has_state, has_ct_target;
	uint8_t seen[16]; /* per nf_rule_opts entry, the spellings given */
};

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
static const struct nf_rule_opt {
	const char *names[5];
	int (*fn)(struct nf_rule_ctx *c, const char *k, const char *v);
	uint8_t once;
} nf_rule_opts[] = {
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
static int nf_rule_opt_once(struct nf_rule_ctx *c, const struct nf_rule_opt *o,
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
static const struct nf_rule_opt *nf_rule_opt_find(const char *k)
{
	for (size_t i = 0; i < RTE_DIM(nf_rule_opts); i++)
		if (lrx_rule_word_in(k, nf_rule_opts[i].names,
				     RTE_DIM(nf_rule_opts[i].names)))
			return &nf_rule_opts[i];
	return NULL;
}

/* "-A CHAIN": checks the head and opens a pending rule in ps */
static int nf_rule_open(struct nf_rule_ctx *c)
{
	struct nf_parse *ps = c->ps;
	char **w = c->w;
	int n = c->n, at = 0;

	if (w[0][0] == '[') {
		if (nf_counters(ps, w[0]) < 0)
			return -EINVAL;
		at = 1; /* iptables-save -c: [packets:bytes] */
	}
	if (at + 1 >= n || strcmp(w[at], "-A") != 0)
		return nf_error(ps, w[at < n ? at : 0], "a rule line is '-A CHAIN "
				"...' (iptables-save's form; -I, -D, -N are not "
				"read)");
	if (ps->table < 0)
		return nf_error(ps, w[at], "a rule comes inside a table (after "
				"*filter, ...)");
	const char *cname = w[at + 1];
	int chain = nf_chain_find(ps, ps->table, cname);
	if (chain < 0)
		return nf_error(ps, cname, "no such chain in table %s (declare it: "
				"':%s - [0:0]')", nf_table_names[ps->table], cname);
	if (ps->n_pending == ps->max_pending)
		return nf_error(ps, NULL, "more than %d rules",
				LRX_NF_ENTRIES_MAX - 2 * LRX_NF_CHAINS_MAX);
	c->pd = &ps->pending[ps->n_pending];
	c->r = &c->pd->r;
	memset(c->pd, 0, sizeof(*c->pd));
	c->pd->chain = (uint16_t)chain;
	c->r->in_any = true;
	c->r->line = (uint16_t)ps->rd.line;
	c->r->verdict = INT32_MAX; /* no target: counts and goes on */
	c->r->spts[1] = c->r->dpts[1] = 65535;
	c->at = at + 2;
	return 0;
}

/* the matches' protocol checks (xt_check_match), then keeps the rule */
static int nf_rule_close(struct nf_rule_ctx *c)
{
	struct nf_parse *ps = c->ps;
	struct lrx_nf_rule *r = c->r;
	bool has_udp = c->has_udp, has_tcp = c->has_tcp, has_mp = c->has_mp;
	const bool has_ct = c->has_ctmatch || c->has_state;

	if ((has_udp && (r->proto != 17 || (r->inv & LRX_NF_INV_PROTO))) ||
	    (has_tcp && (r->proto != 6 || (r->inv & LRX_NF_INV_PROTO))))
		return nf_error(ps, has_udp ? "udp" : "tcp", "the %s match needs "
				"-p %s (not inverted)", has_udp ? "udp" : "tcp",
				has_udp ? "udp" : "tcp");
	if (has_mp && (!r->mp_count ||
		       (r->proto != 6 && r->proto != 17 && r->proto != 132 &&
			r->proto != 33 && r->proto != 136) ||
		       (r->inv & LRX_NF_INV_PROTO)))
		return nf_error(ps, "multiport", r->mp_count
				? "needs -p tcp, udp, udplite, sctp or dccp (not "
				  "inverted)"
				: "needs --sports, --dports or --ports");
	if (has_ct && r->ct_states == 0)
		return nf_error(ps, c->has_state ? "state" : "conntrack", "needs "
				"%s (the other --ct* options are not modelled)",
				c->has_state ? "--state" : "--ctstate");
	if (c->has_ct_target && !r->notrack)
		return nf_error(ps, "CT", "-j CT is modelled with --notrack only");
	if ((has_ct || c->has_ct_target) && ps->family == AF_INET6)
		return nf_error(ps, has_ct ? (c->has_state ? "state" : "conntrack")
				: "CT", "connection tracking is modelled for IPv4 "
				"only (nf_conntrack_ipv6 is not)");
	r->matches = (uint8_t)((has_udp ? LRX_NF_M_UDP : 0) |
			       (has_tcp ? LRX_NF_M_TCP : 0) |
			       (has_mp ? LRX_NF_M_MULTIPORT : 0) |
			       (has_ct ? LRX_NF_M_CTSTATE : 0));
	ps->chains[c->pd->chain].n_rules++;
	ps->n_pending++;
	return 0;
}

/* -A CHAIN ...: one rule, its options dispatched through nf_rule_opts */
static int nf_rule_line(struct nf_parse *ps, char **w, int n)
{
	struct nf_rule_ctx c = { .ps = ps, .w = w, .n = n };
	int rc = nf_rule_open(&c);

	if (rc < 0)
		return rc;
	while (c.at < n) {
		c.neg = false;
		if (strcmp(w[c.at], "!") == 0) {
			c.neg = true;
			c.at++;
		}
		if (c.at >= n)
			return nf_error(ps, "!", "a ! comes before an option");
		const char *k = w[c.at++];
		const struct nf_rule_opt *o = nf_rule_opt_find(k);
		if (o == NULL)
			return nf_error(ps, k, "options: -p, -s, -d, -i, -f, -m "
					"udp|tcp (--sport, --dport, --tcp-flags, "
					"--syn), -m multiport (--sports, --dports, "
					"--ports), -m comment, -m conntrack "
					"(--ctstate), -m state (--state), -j, "
					"-g");
		rc = nf_rule_opt_once(&c, o, k);
		if (rc == 0)
			rc = o->fn(&c, k, c.at < n ? w[c.at] : NULL);
		if (rc < 0)
			return rc;
	}
	return nf_rule_close(&c);
}

/* A jump into a chain that (through others) jumps back is a loop:
 * mark_source_chains refuses it (ELOOP). */
static int nf_loop_check(struct nf_parse *ps, unsigned chain, uint8_t *state,
			 unsigned depth)
{
	if (state[chain] == 1)
		return -ELOOP;
	if (state[chain] == 2 || depth > LRX_NF_CHAINS_MAX)
		return 0;
	state[chain] = 1;
	for (unsigned i = 0; i < ps->n_pending; i++) {
		const struct nf_pending *pd = &ps->pending[i];
		if (pd->chain != chain || pd->target[0] == '\0')
			continue;
		int to = nf_chain_find(ps, ps->chains[chain].table, pd->target);
		if (to >= 0 && nf_loop_check(ps, (unsigned)to, state, depth + 1) < 0) {
			ps->rd.line = pd->r.line;
			return -ELOOP;
		}
	}
	state[chain] = 2;
	return 0;
}

/* Lays the entries out: per table, its chains in order (built-ins
 * first), each chain's rules then its policy or implicit RETURN; resolves
 * the jumps and the hooks. */
static int nf_build(struct nf_parse *ps, struct lrx_nf *nf)
{
	uint32_t e = 0;
	uint8_t state[LRX_NF_CHAINS_MAX] = { 0 };

	for (unsigned i = 0; i < ps->n_pending; i++) {
		const struct nf_pending *pd = &ps->pending[i];
		if (pd->target[0] && nf_chain_find(ps, ps->chains[pd->chain].table,
						   pd->target) < 0) {
			ps->rd.line = pd->r.line;
			return nf_error(ps, pd->target, "no such chain in table %s: "
					"targets are ACCEPT, DROP, RETURN or a user "
					"chain (others, such as REJECT, LOG, MARK, "
					"are not modelled)",
					nf_table_names[ps->chains[pd->chain].table]);
		}
	}
	for (unsigned c = 0; c < ps->n_chains; c++)
		if (nf_loop_check(ps, c, state, 0) < 0)
			return nf_error(ps, NULL, "a loop of jumps through chain %s: "
					"iptables-restore refuses it (ELOOP)",
					ps->chains[c].name);

	nf->n_chains = ps->n_chains;
	for (unsigned c = 0; c < ps->n_chains; c++) {
		struct lrx_nf_chain *ch = &ps->chains[c];
		ch->first = e;
		for (unsigned i = 0; i < ps->n_pending; i++)
			if (ps->pending[i].chain == c) {
				const struct lrx_nf_rule *r = &ps->pending[i].r;
				nf->uses_conntrack |= r->notrack ||
						      (r->matches & LRX_NF_M_CTSTATE);
				nf->rules[e++] = *r;
			}
		/* the policy (built-in) or the implicit RETURN: unconditional */
		struct lrx_nf_rule *t = &nf->rules[e];
		memset(t, 0, sizeof(*t));
		t->in_any = true;
		t->spts[1] = t->dpts[1] = 65535;
		t->verdict = ch->builtin ? ps->policy[c] : LRX_NF_V_RETURN;
		if (ch->builtin && ch->hook >= 0) {
			nf->hook_entry[ch->table][ch->hook] = ch->first;
			nf->underflow[ch->table][ch->hook] = e;
		}
		e++;
		nf->chains[c] = *ch;
		char map_name[sizeof(ch->map_name)];
		snprintf(map_name, sizeof(map_name), "%s%s/%s",
			 ps->family == AF_INET6 ? "ip6/" : "",
			 nf_table_names[ch->table], ch->name);
		memcpy(nf->chains[c].map_name, map_name, sizeof(map_name));
	}
	nf->n_entries = e;
	/* targets: a chain's first entry; no target: the next entry */
	uint32_t at = 0;
	for (unsigned c = 0; c < ps->n_chains; c++) {
		for (unsigned i = 0; i < ps->n_pending; i++) {
			const struct nf_pending *pd = &ps->pending[i];
			if (pd->chain != c)
				continue;
			struct lrx_nf_rule *r = &nf->rules[at];
			if (pd->target[0])
				r->verdict = (int32_t)nf->chains[nf_chain_find(
					ps, ps->chains[c].table, pd->target)].first;
			else if (r->verdict == INT32_MAX)
				r->verdict = (int32_t)(at + 1);
			at++;
		}
		at++;
	}
	unsigned user = 0;
	for (unsigned c = 0; c < ps->n_chains; c++)
		user += !ps->chains[c].builtin;
	nf->stacksize = user + 1;
	/* nf_hook_slow's order: raw (-300), mangle (-150), filter (0) */
	static const uint8_t order[] = { LRX_NF_RAW, LRX_NF_MANGLE, LRX_NF_FILTER };
	for (unsigned h = 0; h < LRX_NF_HOOKS; h++)
		for (unsigned k = 0; k < RTE_DIM(order); k++)
			for (unsigned c = 0; c < ps->n_chains; c++)
				if (ps->chains[c].table == order[k] &&
				    ps->chains[c].builtin && ps->chains[c].hook == (int)h)
					nf->hook_tables[h][nf->n_hook_tables[h]++] =
						order[k];
	return 0;
}

int lrx_nf_parse_family(const char *text, const char *name, int family,
			struct lrx_nf **out, char *err, size_t err_len)
{
	struct nf_parse *ps = calloc(1, sizeof(*ps));
	struct lrx_nf *nf = calloc(1, sizeof(*nf));
	int rc = 0;

	/* at most a rule per line, and a policy or return per chain */
	size_t lines = 1;
	for (const char *q = text; *q; q++)
		lines += *q == '\n';
	const unsigned max_pending =
		lines < LRX_NF_ENTRIES_MAX - 2 * LRX_NF_CHAINS_MAX
			? (unsigned)lines : LRX_NF_ENTRIES_MAX - 2 * LRX_NF_CHAINS_MAX;
	*out = NULL;
	if (ps == NULL || nf == NULL ||
	    (ps->pending = calloc(max_pending, sizeof(*ps->pending))) == NULL ||
	    (nf->rules = calloc(max_pending + LRX_NF_CHAINS_MAX,
				sizeof(*nf->rules))) == NULL) {
		snprintf(err, err_len, "%s: out of memory", name);
		rc = -ENOMEM;
		goto out;
	}
	ps->max_pending = max_pending;
	ps->family = nf->family = family == AF_INET6 ? AF_INET6 : AF_INET;
	ps->rd = (struct lrx_rule_reader){ .p = text, .name = name, .err = err,
					   .err_len = err_len };
	ps->table = -1;
	char *w[LRX_RULE_WORDS_MAX];
	int n;
	while (rc == 0 && (n = lrx_rule_next(&ps->rd, w)) != 0) {
		if (n < 0)
			rc = n;
		else if (w[0][0] == '*' && n == 1)
			rc = nf_table_line(ps, w[0]);
		else if (w[0][0] == ':')
			rc = nf_chain_line(ps, w, n);
		else if (strcmp(w[0], "COMMIT") == 0 && n == 1) {
			if (ps->table < 0)
				rc = nf_error(ps, w[0], "COMMIT outside a table");
			else
				ps->committed[ps->table] = true;
			ps->table = -1;
		} else
			rc = nf_rule_line(ps, w, n);
	}
	if (rc == 0 && ps->table >= 0)
		rc = nf_error(ps, NULL, "table %s is not committed (COMMIT "
			      "expected at the end)", nf_table_names[ps->table]);
	if (rc == 0)
		rc = nf_build(ps, nf);
	if (rc == 0)
		rc = lrx_nf_walk_check(nf, name, err, err_len);
out:
	if (ps)
		free(ps->pending);
	free(ps);
	if (rc < 0) {
		lrx_nf_free(nf);
		return rc;
	}
	*out = nf;
	return 0;
}

int lrx_nf_parse(const char *text, const char *name, struct lrx_nf **out,
		 char *err, size_t err_len)
{
	return lrx_nf_parse_family(text, name, AF_INET, out, err, err_len);
}

int lrx_nf_load_family(const char *path, int family, struct lrx_nf **out,
		       char *err, size_t err_len)
{
	char *text = NULL;
	int rc = lrx_rule_file_read(path, NF_FILE_MAX, &text, err, err_len);

	*out = NULL;
	if (rc < 0)
		return rc;
	rc = lrx_nf_parse_family(text, path, family, out, err, err_len);
	free(text);
	return rc;
}

int lrx_nf_load(const char *path, struct lrx_nf **out, char *err,
		size_t err_len)
{
	return lrx_nf_load_family(path, AF_INET, out, err, err_len);
}

void lrx_nf_free(struct lrx_nf *nf)
{
	if (nf == NULL)
		return;
	free(nf->rules);
	free(nf);
}
