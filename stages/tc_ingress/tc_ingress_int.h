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

/* Per action of a filter's list, what `tc -s` shows of it: Sent bytes
 * and pkt (tcf_action_update_bstats), dropped (gact's TC_ACT_SHOT),
 * overlimits (a mirror whose copy could not be made). */
struct tc_action_run {
	uint64_t packets, bytes, drops, overlimits;
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
	struct tc_action_run acts[LRX_TC_ACTIONS_MAX];
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
	uint64_t n_mirrored, n_mirror_failed;

	/* mirrors' copies, in the order they were made, until the engine
	 * takes them at the poll's end (emit): copies[out .. n) */
	struct rte_mbuf **copies;
	uint16_t *copy_port;
	uint32_t n_copies, copies_out, copies_max;

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

/* act_mirred's mirror (tcf_mirred_act: skb_clone, then dev_queue_xmit
 * of the clone): a copy of the frame, MAC header included, queued for
 * port; the original goes on. listrx copies the bytes (a later stage may
 * rewrite the original in place, where the kernel would unshare it). No
 * copy (pool empty, queue full): the action's overlimits, as a failed
 * clone; the verdict stays TC_ACT_PIPE. */
static __rte_noinline void tc_mirror(struct tc_ctx *c, const struct rte_mbuf *m,
				     uint16_t port, struct tc_action_run *ar)
{
	struct rte_mbuf *copy = NULL;

	if (likely(c->n_copies < c->copies_max))
		copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
	if (unlikely(copy == NULL)) {
		ar->overlimits++;
		c->n_mirror_failed++;
		return;
	}
	c->copies[c->n_copies] = copy;
	c->copy_port[c->n_copies++] = port;
	c->n_mirrored++;
}

/* tcf_action_exec over filter i's list: each action counts the packet
 * and gives its verdict; TC_ACT_PIPE goes on to the next action, any
 * other verdict ends the list and is the filter's. No action: TC_ACT_OK
 * (tcf_exts_exec). A redirect's port goes to *redirect. */
static inline int tc_actions_exec(struct tc_ctx *c, uint16_t i,
				  const struct rte_mbuf *m, uint32_t skb_len,
				  uint32_t *redirect)
{
	const struct lrx_tc_filter *f = &c->filters[i];
	struct tc_filter_run *r = &c->run[i];
	int ret = LRX_TC_ACT_OK;

	for (unsigned a = 0; a < f->n_actions; a++) {
		const struct lrx_tc_action *act = &f->actions[a];
		struct tc_action_run *ar = &r->acts[a];

		ar->packets++;
		ar->bytes += skb_len;
		ret = act->verdict;
		if (unlikely(act->kind == LRX_TC_MIRRED_MIRROR))
			tc_mirror(c, m, act->port, ar);
		else if (act->kind == LRX_TC_MIRRED_REDIRECT)
			*redirect = act->port;
		else
			ar->drops += ret == LRX_TC_ACT_SHOT;
		if (ret != LRX_TC_ACT_PIPE)
			break;
	}
	return ret;
}

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

/* The stage's maps (tc_maps.c): 0 "filters", 1 "actions" when a filter
 * has an action, then each bpf program's maps (stage.h map_at,
 * map_next, map_write). */
bool tc_map_at(const void *ctx, unsigned i, struct lrx_stage_map *out);
bool tc_map_next(const void *ctx, unsigned i, uint32_t *cursor, void *key,
		 void *value);
void tc_map_write(void *ctx, struct lrx_stage_map_write *w);

#endif
