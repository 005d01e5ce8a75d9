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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_ethdev.h>

#include "nf_parse.h"

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
