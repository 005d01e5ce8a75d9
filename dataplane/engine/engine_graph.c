/* SPDX-License-Identifier: BSD-3-Clause
 * The `graph` engine: the same stages as DPDK rte_graph nodes, walked with
 * rte_graph_walk (the peer that DESIGN.md measures against). Per pipeline:
 *
 *   lrx_src-g<N>  (source)  --edge s-->  lrx_stage-g<N>_s<s>  (one per stage)
 *   lrx_stage-g<N>_s<s>  --exit--> lrx_sink-g<N>   (left at this stage)
 *                        --next--> next stage, or the sink after the last
 *
 * The node types are registered once with RTE_NODE_REGISTER and cloned per
 * pipeline instance (one pipeline per lcore); clones cannot be deleted in
 * DPDK 22.11, so instance numbers and their clones are reused. The source
 * either polls the port (lrx_pipeline_poll) or takes the vector handed to
 * lrx_pipeline_process; for a flush it injects released packets at the
 * stage after the holding one. Each packet carries its slot and its next in
 * an mbuf dynamic field (as lib/node keeps per-packet data in the mbuf);
 * the sink node records the fate per slot and the engine fills the sink in
 * slot order after the walk, like the burst engine.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <rte_config.h>
/* The walker's own per-node TSC stats would add two rdtsc per node call
 * on top of ours; listrx takes per-stage stats itself (stats level). */
#undef RTE_LIBRTE_GRAPH_STATS
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_graph.h>
#include <rte_graph_worker.h>
#include <rte_malloc.h>
#include <rte_mbuf_dyn.h>

#include "engine_internal.h"

#define GRAPH_INSTANCES 64

/* The stage node's edges, named as lib/node/ip4_lookup.c names its next
 * nodes; each clone points them at its own sink and next stage
 * (graph_build). */
enum graph_stage_edge {
	GRAPH_STAGE_EDGE_EXIT, /* left the pipeline at this stage: the sink */
	GRAPH_STAGE_EDGE_NEXT, /* the next stage, or the sink after the last */
	GRAPH_STAGE_EDGE_MAX,
};

struct graph_tag {
	uint32_t slot;
	lrx_next_t next;
};

struct graph_node_ctx {
	struct lrx_pipeline *p;
	uint32_t stage;
};
_Static_assert(sizeof(struct graph_node_ctx) <= RTE_NODE_CTX_SZ,
	       "node context fits rte_node ctx");

struct engine_graph {
	struct rte_graph *graph;
	rte_graph_t id;
	unsigned instance;
	/* source input for the next walk */
	bool rx;
	uint16_t rx_port, rx_queue, rx_budget, rx_got;
	struct rte_mbuf **in;
	uint16_t in_n;
	rte_edge_t in_edge;
	char name[RTE_GRAPH_NAMESIZE];
};

static int graph_tag_offset = -1;
static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t graph_instances_used;

static inline struct graph_tag *graph_tag(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, graph_tag_offset, struct graph_tag *);
}

static inline struct graph_node_ctx *graph_ctx(struct rte_node *node)
{
	return (struct graph_node_ctx *)node->ctx;
}

static uint16_t graph_source_process(struct rte_graph *graph,
				     struct rte_node *node, void **objs,
				     uint16_t nb)
{
	struct lrx_pipeline *p = graph_ctx(node)->p;
	struct engine_graph *g = p->graph;
	rte_edge_t edge;
	uint16_t n;
	void **to;

	(void)objs;
	(void)nb;
	if (g->rx) {
		edge = 0;
		to = rte_node_next_stream_get(graph, node, edge, g->rx_budget);
		n = rte_eth_rx_burst(g->rx_port, g->rx_queue,
				     (struct rte_mbuf **)to, g->rx_budget);
		g->rx_got = n;
		for (uint16_t i = 0; i < n; i++) {
			struct rte_mbuf *m = to[i];
			*graph_tag(m) = (struct graph_tag){
				.slot = engine_new_slot(p, m),
				.next = LRX_NEXT_DELIVER_V };
		}
	} else {
		edge = g->in_edge;
		n = g->in_n;
		to = rte_node_next_stream_get(graph, node, edge, n);
		for (uint16_t i = 0; i < n; i++) {
			struct rte_mbuf *m = g->in[i];
			to[i] = m;
			*graph_tag(m) = (struct graph_tag){
				.slot = i, .next = LRX_NEXT_DELIVER_V };
		}
		g->in_n = 0;
		/* released by the last stage: delivered, counted there as
		 * the other engines do */
		if (edge == p->n_stages && n != 0 && p->n_stages != 0 &&
		    p->stats_level != LRX_STATS_OFF)
			p->stages[p->n_stages - 1].stats.delivered += n;
	}
	rte_node_next_stream_put(graph, node, edge, n);
	return n;
}

static inline bool graph_all_consumed(const lrx_next_t *nexts, uint16_t from, uint16_t nb)
{
	lrx_next_t all = LRX_NEXT_CONSUMED_V;

	if (from != 0)
		return false;
	for (uint16_t k = 0; k < nb; k++)
		all &= nexts[k] == LRX_NEXT_CONSUMED_V ? LRX_NEXT_CONSUMED_V : 0;
	return all == LRX_NEXT_CONSUMED_V;
}

/* The stage consumed every slot of the run and releases: the run goes on
 * from the released packets alone (engine_slots_rebase), tagged with
 * their new slots; no consumed fate is written. */
static uint16_t graph_stage_rebase(struct rte_graph *graph, struct rte_node *node,
				   struct lrx_pipeline *p, struct engine_stage *st,
				   uint16_t nb, bool stats, bool last)
{
	if (stats)
		st->stats.consumed += nb;
	uint16_t max = engine_release_max(p, LRX_BURST_MAX);
	uint16_t released = max ? st->release(st->ctx, p->released, max) : 0;
	p->release_room -= released;
	struct rte_mbuf **base = engine_slots_rebase(p, released);
	for (uint16_t r = 0; r < released; r++)
		*graph_tag(base[r]) = (struct graph_tag){.slot = r, .next = LRX_NEXT_DELIVER_V};
	if (stats && last)
		st->stats.delivered += released;
	if (released != 0)
		rte_node_enqueue(graph, node, GRAPH_STAGE_EDGE_NEXT, (void **)base, released);
	return nb;
}

static uint16_t graph_stage_process(struct rte_graph *graph,
				    struct rte_node *node, void **objs,
				    uint16_t nb)
{
	struct graph_node_ctx *nc = graph_ctx(node);
	struct lrx_pipeline *p = nc->p;
	struct engine_stage *st = &p->stages[nc->stage];
	struct rte_mbuf **pkts = (struct rte_mbuf **)objs;
	lrx_next_t *nexts = p->nexts;
	struct rte_mbuf **exits = p->vec[0];
	const bool stats = p->stats_level != LRX_STATS_OFF;
	const bool last = nc->stage + 1 == p->n_stages;
	uint16_t released = 0, i = 0, w, e = 0;

	engine_call_burst(p, st, pkts, nb, nexts);
	while (i < nb && nexts[i] == LRX_NEXT_CONTINUE_V)
		i++;
	if (likely(i == nb && st->release == NULL)) {
		if (stats && last)
			st->stats.delivered += nb;
		/* home run */
		rte_node_next_stream_move(graph, node, GRAPH_STAGE_EDGE_NEXT);
		return nb;
	}
	if (st->release != NULL && nb == p->n_slots && graph_all_consumed(nexts, i, nb))
		return graph_stage_rebase(graph, node, p, st, nb, stats, last);
	/* the leaving packets first: a packet the stage consumed may come
	 * straight back through release() below, with a new slot and tag */
	for (w = i; i < nb; i++) {
		lrx_next_t next = nexts[i];
		struct rte_mbuf *m = pkts[i];
		if (next == LRX_NEXT_CONTINUE_V) {
			pkts[w++] = m;
			continue;
		}
		if (stats)
			engine_account_exit(st, next);
		if (next == LRX_NEXT_CONSUMED_V) {
			p->fate[graph_tag(m)->slot] = next; /* held: no sink */
			continue;
		}
		graph_tag(m)->next = next;
		exits[e++] = m;
	}
	if (e != 0)
		rte_node_enqueue(graph, node, GRAPH_STAGE_EDGE_EXIT,
				 (void **)exits, e);
	if (st->release != NULL) {
		uint16_t max = engine_release_max(p, LRX_BURST_MAX - w);
		released = max ? st->release(st->ctx, p->released, max) : 0;
		p->release_room -= released;
		for (uint16_t r = 0; r < released; r++) {
			struct rte_mbuf *m = p->released[r];
			*graph_tag(m) = (struct graph_tag){
				.slot = engine_new_slot(p, m),
				.next = LRX_NEXT_DELIVER_V };
		}
	}
	if (stats && last)
		st->stats.delivered += w + released;
	/* released packets continue first (stage.h) */
	if (released != 0)
		rte_node_enqueue(graph, node, GRAPH_STAGE_EDGE_NEXT,
				 (void **)p->released, released);
	if (w != 0)
		rte_node_enqueue(graph, node, GRAPH_STAGE_EDGE_NEXT, objs, w);
	return nb;
}

static uint16_t graph_sink_process(struct rte_graph *graph,
				   struct rte_node *node, void **objs,
				   uint16_t nb)
{
	struct lrx_pipeline *p = graph_ctx(node)->p;

	(void)graph;
	for (uint16_t i = 0; i < nb; i++) {
		const struct graph_tag *tag = graph_tag(objs[i]);
		p->fate[tag->slot] = tag->next;
	}
	return nb;
}

static struct rte_node_register lrx_graph_source_node = {
	.name = "lrx_src",
	.flags = RTE_NODE_SOURCE_F,
	.process = graph_source_process,
};
RTE_NODE_REGISTER(lrx_graph_source_node);

static struct rte_node_register lrx_graph_stage_node = {
	.name = "lrx_stage",
	.process = graph_stage_process,
	.nb_edges = GRAPH_STAGE_EDGE_MAX,
	.next_nodes = {
		[GRAPH_STAGE_EDGE_EXIT] = "lrx_sink",
		[GRAPH_STAGE_EDGE_NEXT] = "lrx_sink",
	},
};
RTE_NODE_REGISTER(lrx_graph_stage_node);

static struct rte_node_register lrx_graph_sink_node = {
	.name = "lrx_sink",
	.process = graph_sink_process,
};
RTE_NODE_REGISTER(lrx_graph_sink_node);

/* The clone "<parent>-<suffix>", created once and reused, with exactly
 * these edges. */
static rte_node_t graph_clone(const struct rte_node_register *parent,
			      const char *suffix, const char **edges,
			      uint16_t n_edges, char *full, size_t full_len)
{
	rte_node_t id;
	rte_edge_t have;

	if (snprintf(full, full_len, "%s-%s", parent->name, suffix) >=
	    (int)full_len)
		return RTE_NODE_ID_INVALID;
	id = rte_node_from_name(full);
	if (id == RTE_NODE_ID_INVALID)
		id = rte_node_clone(parent->id, suffix);
	if (id == RTE_NODE_ID_INVALID)
		return id;
	have = rte_node_edge_count(id);
	if (have > n_edges &&
	    rte_node_edge_shrink(id, n_edges) != n_edges)
		return RTE_NODE_ID_INVALID;
	if (n_edges != 0 &&
	    rte_node_edge_update(id, 0, edges, n_edges) != n_edges)
		return RTE_NODE_ID_INVALID;
	return id;
}

static int graph_register_tag(void)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = "listrx_engine_graph_tag",
		.size = sizeof(struct graph_tag),
		.align = __alignof__(struct graph_tag),
	};
	int offset;

	if (graph_tag_offset >= 0)
		return 0;
	offset = rte_mbuf_dynfield_register(&desc);
	if (offset < 0)
		return -rte_errno;
	graph_tag_offset = offset;
	return 0;
}

static int graph_build(struct lrx_pipeline *p, struct engine_graph *g,
		       char *err, size_t err_len)
{
	enum { NAME = RTE_NODE_NAMESIZE };
	char names[LRX_PIPELINE_MAX_STAGES + 2][NAME];
	const char *patterns[LRX_PIPELINE_MAX_STAGES + 2];
	const char *edges[LRX_PIPELINE_MAX_STAGES + 1];
	char *sink_name = names[p->n_stages + 1];
	char suffix[32];
	unsigned n = p->n_stages;

	/* the sink first: every other node has an edge to it */
	snprintf(suffix, sizeof(suffix), "g%u", g->instance);
	if (graph_clone(&lrx_graph_sink_node, suffix, NULL, 0, sink_name,
			NAME) == RTE_NODE_ID_INVALID)
		goto fail;
	for (unsigned s = n; s-- > 0;) {
		const char *stage_edges[GRAPH_STAGE_EDGE_MAX] = {
			[GRAPH_STAGE_EDGE_EXIT] = sink_name,
			[GRAPH_STAGE_EDGE_NEXT] = s + 1 < n ? names[s + 2]
							    : sink_name };
		snprintf(suffix, sizeof(suffix), "g%u_s%u", g->instance, s);
		if (graph_clone(&lrx_graph_stage_node, suffix, stage_edges,
				GRAPH_STAGE_EDGE_MAX,
				names[s + 1], NAME) == RTE_NODE_ID_INVALID)
			goto fail;
	}
	for (unsigned s = 0; s <= n; s++)
		edges[s] = names[s + 1]; /* edge s: stage s, edge n: sink */
	snprintf(suffix, sizeof(suffix), "g%u", g->instance);
	if (graph_clone(&lrx_graph_source_node, suffix, edges,
			(uint16_t)(n + 1), names[0], NAME) == RTE_NODE_ID_INVALID)
		goto fail;

	for (unsigned i = 0; i < n + 2; i++)
		patterns[i] = names[i];
	snprintf(g->name, sizeof(g->name), "lrx_graph_g%u", g->instance);
	struct rte_graph_param prm = {
		.socket_id = p->socket_id,
		.nb_node_patterns = (uint16_t)(n + 2),
		.node_patterns = patterns,
	};
	g->id = rte_graph_create(g->name, &prm);
	if (g->id == RTE_GRAPH_ID_INVALID) {
		snprintf(err, err_len, "engine graph: rte_graph_create(%s): %s",
			 g->name, rte_strerror(rte_errno));
		return -rte_errno ? -rte_errno : -EINVAL;
	}
	g->graph = rte_graph_lookup(g->name);
	for (unsigned i = 0; i < n + 2; i++) {
		struct rte_node *node = rte_graph_node_get_by_name(g->name,
								   names[i]);
		if (node == NULL || g->graph == NULL) {
			snprintf(err, err_len, "engine graph: node %s not in graph %s",
				 names[i], g->name);
			rte_graph_destroy(g->id);
			return -ENOENT;
		}
		*graph_ctx(node) = (struct graph_node_ctx){
			.p = p, .stage = i >= 1 ? i - 1 : 0 };
	}
	return 0;
fail:
	snprintf(err, err_len, "engine graph: cannot clone/link nodes for instance %u: %s",
		 g->instance, rte_strerror(rte_errno));
	return -EINVAL;
}

int engine_graph_create(struct lrx_pipeline *p, char *err, size_t err_len)
{
	struct engine_graph *g;
	unsigned instance;
	int rc;

	g = rte_zmalloc_socket("lrx_graph", sizeof(*g), RTE_CACHE_LINE_SIZE,
			       p->socket_id);
	if (g == NULL) {
		snprintf(err, err_len, "engine graph: no memory");
		return -ENOMEM;
	}
	pthread_mutex_lock(&graph_lock);
	rc = graph_register_tag();
	if (rc < 0) {
		snprintf(err, err_len, "engine graph: mbuf dynfield: %s",
			 rte_strerror(-rc));
		goto out;
	}
	for (instance = 0; instance < GRAPH_INSTANCES; instance++)
		if (!(graph_instances_used & (1ull << instance)))
			break;
	if (instance == GRAPH_INSTANCES) {
		snprintf(err, err_len, "engine graph: more than %u graph pipelines",
			 GRAPH_INSTANCES);
		rc = -ENOSPC;
		goto out;
	}
	g->instance = instance;
	p->graph = g;
	rc = graph_build(p, g, err, err_len);
	if (rc == 0)
		graph_instances_used |= 1ull << instance;
out:
	pthread_mutex_unlock(&graph_lock);
	if (rc < 0) {
		p->graph = NULL;
		rte_free(g);
	}
	return rc;
}

void engine_graph_destroy(struct lrx_pipeline *p)
{
	struct engine_graph *g = p->graph;

	pthread_mutex_lock(&graph_lock);
	rte_graph_destroy(g->id);
	graph_instances_used &= ~(1ull << g->instance);
	pthread_mutex_unlock(&graph_lock);
	rte_free(g);
	p->graph = NULL;
}

void engine_graph_run(struct lrx_pipeline *p, unsigned first,
		      struct rte_mbuf **pkts, uint16_t n,
		      struct lrx_sink *sink)
{
	struct engine_graph *g = p->graph;

	engine_slots_begin(p, pkts, n, sink);
	g->rx = false;
	g->in = pkts;
	g->in_n = n;
	g->in_edge = (rte_edge_t)first;
	rte_graph_walk(g->graph);
	engine_slots_emit(p, sink);
}

uint16_t engine_graph_poll(struct lrx_pipeline *p, uint16_t port,
			   uint16_t queue, uint16_t budget,
			   struct lrx_sink *sink)
{
	struct engine_graph *g = p->graph;

	engine_slots_begin(p, NULL, 0, sink);
	p->release_room = engine_release_room(sink, budget);
	g->rx = true;
	g->rx_port = port;
	g->rx_queue = queue;
	g->rx_budget = budget;
	g->rx_got = 0;
	rte_graph_walk(g->graph);
	g->rx = false;
	engine_slots_emit(p, sink);
	return g->rx_got;
}
