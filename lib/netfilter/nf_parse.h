/* SPDX-License-Identifier: BSD-3-Clause
 * The rule file's parser state, shared by nf_rules.c (tables, chains,
 * the -A line, the build) and nf_rule_opts.c (each rule option's
 * handler: protocols, addresses, devices, the matches and their
 * options, targets). Internal to lib/netfilter.
 */
#ifndef LISTRX_NF_PARSE_H
#define LISTRX_NF_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "netfilter.h"
#include "rule_text.h"

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

/* a rule option (iptables-save's spellings), its handler and how often
 * it may be given (nf_rule_opts.c's table says how) */
struct nf_rule_opt {
	const char *names[5];
	int (*fn)(struct nf_rule_ctx *c, const char *k, const char *v);
	uint8_t once;
};

/* the handler of option k, NULL when it is not modelled */
const struct nf_rule_opt *nf_rule_opt_find(const char *k);
/* option k of o given a second time in the rule: -EINVAL (iptables
 * refuses it), else 0 */
int nf_rule_opt_once(struct nf_rule_ctx *c, const struct nf_rule_opt *o, const char *k);

#endif
