/* SPDX-License-Identifier: BSD-3-Clause
 * The tc-ingress stage's run-time state, shared by its files
 * (tc_ingress.c: the hook, flower, cls_bpf; tc_u32.c: cls_u32).
 */
#ifndef LISTRX_TC_INGRESS_INT_H
#define LISTRX_TC_INGRESS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "meta.h"
#include "tc_ingress.h"

/* A tcf_proto: one classifier call over its filters, in order. */
struct tc_tp {
	uint32_t pref;
	uint16_t protocol; /* network order */
	uint8_t kind;
	uint16_t first, n; /* its filters: order[first .. first + n) */
	uint16_t root;     /* u32: its root table (tp->root), in u32_hts[] */
};

/* Per filter, what runs and what it counts (per stage instance). */
struct tc_filter_run {
	const struct rte_bpf *bpf;
	uint64_t (*jit)(void *);
	struct lrx_xdp_prog *prog;
	/* counters: the "filters" map (value: runs, packets, bytes) */
	uint64_t runs, packets, bytes;
	/* u32: the table a match walks down to (ht_down), -1: none */
	int16_t u32_down;
	uint8_t u32_fshift; /* ffs(ntohl(hmask)) - 1 (u32_change) */
};

struct tc_chain {
	uint16_t first_tp, n_tps;
};

/* A u32 hash table (tc_u_hnode): its buckets' key nodes are
 * u32_nodes[u32_bucket[first + b] .. u32_bucket[first + b + 1]) */
struct tc_u32_ht {
	uint32_t handle;
	uint16_t dev;
	uint16_t divisor; /* buckets - 1, as ht->divisor */
	uint32_t first;   /* its first bucket in u32_bucket[] */
	uint32_t pref;    /* a root: its tcf_proto's pref; 0: a table */
	uint16_t by;      /* the filter (line) that made it */
};

struct tc_ctx {
	/* counters */
	uint64_t n_classified; /* packets of a port with filters */
	uint64_t n_ok, n_shot, n_stolen, n_redirect, n_unspec;
	uint64_t n_bpf_runs, n_flower_calls, n_window_error;
	uint64_t n_u32_calls, n_matchall_calls, n_reclassify_loop;

	bool jit;
	uint32_t window;
	uint16_t prefetch;
	char path[LRX_TC_PATH_MAX]; /* the filters file, for start's messages */
	unsigned n_filters, n_tps, n_order;
	struct lrx_tc_filter *filters;
	struct tc_filter_run *run;
	uint16_t *order;
	struct tc_tp *tps;
	/* cls_u32's tables, all devices */
	unsigned n_u32_hts;
	struct tc_u32_ht *u32_hts;
	uint32_t *u32_bucket;
	uint16_t *u32_nodes;
	struct tc_chain chains[RTE_MAX_ETHPORTS];
};

/* u32_classify over the tp's root table: the verdict of the first
 * terminal node that matches (its action), or LRX_TC_ACT_UNSPEC. */
int tc_u32_classify(struct tc_ctx *c, const struct tc_tp *tp,
		    const struct rte_mbuf *m, const struct lrx_meta *meta,
		    uint32_t skb_len, uint32_t *redirect);

/* Builds the u32 tables from c->filters (roots 800:, 801:... per device
 * in the order the prefs first appear, the divisor lines' tables), places
 * each node in its table and bucket, resolves links. 0 or -EINVAL with a
 * message naming file:line; -ENOMEM. */
int tc_u32_build(struct tc_ctx *c, const char *file, int socket_id,
		 char *err, size_t err_len);
/* The root table of dev's u32 pref (for tc_tp.root). */
uint16_t tc_u32_root(const struct tc_ctx *c, uint16_t dev, uint32_t pref);
void tc_u32_free(struct tc_ctx *c);

#endif
