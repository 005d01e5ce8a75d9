/* SPDX-License-Identifier: BSD-3-Clause
 * The netfilter rule file's parse state, shared by the file's reader
 * (nf_rules.c: tables, chains, rule lines, the build) and its rule
 * options (nf_match.c: the matches and targets of one -A line). Private
 * to lib/netfilter.
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

/* Reads the option at c->at (with a leading !) and its values, as
 * iptables-save writes them; c->at moves past them. Returns 0 or
 * -EINVAL (reported). */
int nf_rule_option(struct nf_rule_ctx *c);

/* The matches' protocol checks (xt_check_match) once every option of
 * the line is read; sets the rule's match flags. Returns 0 or -EINVAL
 * (reported). */
int nf_rule_matches(struct nf_rule_ctx *c);

#endif
