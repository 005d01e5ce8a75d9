/* SPDX-License-Identifier: BSD-3-Clause
 * A loaded rule set against what it may cost and what the run has.
 *
 * How long a packet may walk a rule set: ipt_do_table takes every jump a
 * matching rule makes, so a chain jumped to from k rules is walked k
 * times, and chains that jump to shared chains multiply. A 16 KB file of
 * 40 chains, each jumping to every later one, has no loop (iptables-
 * restore takes it) and walks 2^39 rules for one packet: the poll never
 * returns. As the eBPF loader counts rte_bpf's paths before it loads a
 * program, the rules a packet may walk from each hooked chain are counted
 * at load (a packet that matches every rule, the worst case) and a rule
 * set above LRX_NF_WALK_MAX is refused, naming the chain its jumps reach
 * most often. The counts saturate.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "netfilter.h"
#include "rule_text.h"

struct nf_walk {
	uint16_t jumps[LRX_NF_CHAINS_MAX][LRX_NF_CHAINS_MAX]; /* rules c -> t */
	uint64_t rules[LRX_NF_CHAINS_MAX];   /* walked from c, 0: not yet */
	uint64_t entered[LRX_NF_CHAINS_MAX]; /* paths from the hooked chain */
	uint8_t order[LRX_NF_CHAINS_MAX];    /* post-order: reversed, topological */
	unsigned n_order;
};

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* the chain whose first entry is e (a jump's target), or -1 */
static int chain_at(const struct lrx_nf *nf, uint32_t e)
{
	for (unsigned c = 0; c < nf->n_chains; c++)
		if (!nf->chains[c].builtin && nf->chains[c].first == e)
			return (int)c;
	return -1;
}

/* the rules a packet may walk from chain c: its own, its policy or
 * return, and each jump's chain (loops were refused: this ends) */
static uint64_t walk_rules(const struct lrx_nf *nf, struct nf_walk *w, unsigned c)
{
	if (w->rules[c] != 0)
		return w->rules[c];
	uint64_t n = nf->chains[c].n_rules + 1;
	for (unsigned t = 0; t < nf->n_chains; t++)
		if (w->jumps[c][t] != 0)
			n = sat_add(n, sat_mul(w->jumps[c][t], walk_rules(nf, w, t)));
	w->rules[c] = n;
	w->order[w->n_order++] = (uint8_t)c;
	return n;
}

/* the jump paths from chain from to every chain it reaches */
static void walk_entered(const struct lrx_nf *nf, struct nf_walk *w, unsigned from)
{
	memset(w->entered, 0, sizeof(w->entered));
	w->entered[from] = 1;
	for (unsigned i = w->n_order; i-- > 0;) {
		const unsigned c = w->order[i];
		for (unsigned t = 0; t < nf->n_chains; t++)
			w->entered[t] = sat_add(w->entered[t],
						sat_mul(w->entered[c], w->jumps[c][t]));
	}
}

static void count_text(char *buf, size_t len, uint64_t v)
{
	if (v == UINT64_MAX)
		snprintf(buf, len, "over 2^64");
	else
		snprintf(buf, len, "%" PRIu64, v);
}

static int walk_refuse(const struct lrx_nf *nf, const struct nf_walk *w, unsigned c,
		       const char *name, char *err, size_t err_len)
{
	const struct lrx_nf_chain *ch = &nf->chains[c];
	unsigned most = c;
	char rules[24], paths[24];

	for (unsigned t = 0; t < nf->n_chains; t++)
		if (t != c && w->entered[t] >= w->entered[most])
			most = t;
	count_text(rules, sizeof(rules), w->rules[c]);
	count_text(paths, sizeof(paths), w->entered[most]);
	return lrx_rule_error(err, err_len, name, nf->chains[most].line,
			      nf->chains[most].name, "a packet through %s/%s may walk %s "
			      "rules: the jumps reach chain %s by %s paths (ipt_do_table "
			      "takes every jump, and chains jumped to from chains that "
			      "are themselves jumped to multiply); at most %llu rules per "
			      "packet and hook [jump to shared chains from fewer rules, "
			      "or merge them]", lrx_nf_table_name(ch->table), ch->name,
			      rules, nf->chains[most].name, paths, LRX_NF_WALK_MAX);
}

/* The device a rule names exactly (-i portN or portN.VID, not a
 * wildcard), or -1. */
static int rule_port(const struct lrx_nf_rule *r)
{
	if (r->in_any)
		return -1;
	if (r->in_vlan_vid != 0)
		return r->in_vlan_port;
	if (r->in_vlan_ports == 0 && r->in_ports != 0 && (r->in_ports & (r->in_ports - 1)) == 0)
		return __builtin_ctzll(r->in_ports);
	return -1;
}

int lrx_nf_ports_check(const struct lrx_nf *nf, const char *name, const uint16_t *ports,
		       unsigned n_ports, char *warn, size_t warn_len)
{
	warn[0] = '\0';
	for (unsigned c = 0; c < nf->n_chains; c++) {
		const struct lrx_nf_chain *ch = &nf->chains[c];
		for (uint32_t e = ch->first; e < ch->first + ch->n_rules; e++) {
			const int port = rule_port(&nf->rules[e]);
			bool found = port < 0;
			for (unsigned i = 0; i < n_ports && !found; i++)
				found = ports[i] == port;
			if (found)
				continue;
			snprintf(warn, warn_len, "%s: line %u: -i port%d: no such port in this run: the "
				 "rule never matches (iptables takes a device that is not there; "
				 "listrx's ports do not change while it runs)", name,
				 nf->rules[e].line, port);
			return 1;
		}
	}
	return 0;
}

int lrx_nf_walk_check(const struct lrx_nf *nf, const char *name, char *err,
		      size_t err_len)
{
	struct nf_walk *w = calloc(1, sizeof(*w));
	int rc = 0;

	if (w == NULL) {
		snprintf(err, err_len, "%s: out of memory", name);
		return -ENOMEM;
	}
	/* a rule's verdict >= 0 is an entry: the next one (no target) or
	 * the first of the chain it jumps or goes to */
	for (unsigned c = 0; c < nf->n_chains; c++) {
		const struct lrx_nf_chain *ch = &nf->chains[c];
		for (uint32_t e = ch->first; e < ch->first + ch->n_rules; e++) {
			const int32_t v = nf->rules[e].verdict;
			const int t = v >= 0 && (uint32_t)v != e + 1 ? chain_at(nf, (uint32_t)v) : -1;
			if (t >= 0)
				w->jumps[c][t]++;
		}
	}
	for (unsigned c = 0; c < nf->n_chains && rc == 0; c++) {
		if (!nf->chains[c].builtin || nf->chains[c].hook < 0)
			continue;
		memset(w->rules, 0, sizeof(w->rules));
		w->n_order = 0;
		if (walk_rules(nf, w, c) > LRX_NF_WALK_MAX) {
			walk_entered(nf, w, c);
			rc = walk_refuse(nf, w, c, name, err, err_len);
		}
	}
	free(w);
	return rc;
}
