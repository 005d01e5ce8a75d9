/* SPDX-License-Identifier: BSD-3-Clause
 * Pipeline creation (config keys validated against each stage descriptor,
 * per-stage contexts), the engine switch, the end-of-poll flush and the
 * per-stage figures. The loops themselves are in engine_*.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_debug.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

#include "engine_internal.h"

static const char *const engine_names[] = {
	[LRX_ENGINE_PACKET] = "packet",
	[LRX_ENGINE_BURST] = "burst",
	[LRX_ENGINE_HYBRID] = "hybrid",
	[LRX_ENGINE_STATIC] = "static",
	[LRX_ENGINE_GRAPH] = "graph",
};

int lrx_engine_parse(const char *text, enum lrx_engine_kind *kind,
		     unsigned *hybrid_k)
{
	if (text == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < RTE_DIM(engine_names); i++) {
		if (i != LRX_ENGINE_HYBRID && strcmp(text, engine_names[i]) == 0) {
			*kind = (enum lrx_engine_kind)i;
			*hybrid_k = 0;
			return 0;
		}
	}
	uint64_t k;
	if (strncmp(text, "hybrid:", 7) != 0 ||
	    lrx_value_uint(text + 7, 1, LRX_PIPELINE_MAX_STAGES, &k) < 0)
		return -EINVAL;
	*kind = LRX_ENGINE_HYBRID;
	*hybrid_k = (unsigned)k;
	return 0;
}

const char *lrx_engine_name(enum lrx_engine_kind kind)
{
	return (unsigned)kind < RTE_DIM(engine_names) ? engine_names[kind]
						      : "unknown";
}

/* "ENGINE" or "ENGINE/prefetch=K" */
static int engine_item_parse(char *item, enum lrx_engine_kind *kind, unsigned *hybrid_k,
			     int *prefetch)
{
	static const char key[] = "prefetch=";
	char *slash = strchr(item, '/');
	*prefetch = LRX_ENGINE_PREFETCH_PIPELINE;
	if (slash) {
		uint64_t k;
		*slash = '\0';
		if (strncmp(slash + 1, key, sizeof(key) - 1) != 0 ||
		    lrx_value_uint(slash + sizeof(key), 0, LRX_PREFETCH_MAX, &k) < 0)
			return -EINVAL;
		*prefetch = (int)k;
	}
	return lrx_engine_parse(item, kind, hybrid_k);
}

int lrx_engine_list_parse(const char *text, void *out)
{
	struct lrx_engine_list *l = out, got = {0};
	if (strcmp(text, "none") != 0) {
		char item[32];
		int rc;
		while ((rc = lrx_value_list_next(&text, item, sizeof(item))) == 1) {
			if (got.n == LRX_ENGINE_LIST_MAX ||
			    engine_item_parse(item, &got.kind[got.n], &got.hybrid_k[got.n],
					      &got.prefetch[got.n]) < 0)
				return -EINVAL;
			got.n++;
		}
		if (rc < 0 || got.n < 2)
			return -EINVAL;
	}
	*l = got;
	return 0;
}

void lrx_engine_list_item_name(const struct lrx_engine_list *l, unsigned i, char *buf,
			       size_t len)
{
	int w = l->kind[i] == LRX_ENGINE_HYBRID
			? snprintf(buf, len, "hybrid:%u", l->hybrid_k[i])
			: snprintf(buf, len, "%s", lrx_engine_name(l->kind[i]));
	size_t used = w > 0 ? (size_t)w : 0;
	if (l->prefetch[i] != LRX_ENGINE_PREFETCH_PIPELINE && used < len)
		snprintf(buf + used, len - used, "/prefetch=%d", l->prefetch[i]);
}

void lrx_engine_list_name(const struct lrx_engine_list *l, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < l->n && used < len; i++) {
		char item[32];
		lrx_engine_list_item_name(l, i, item, sizeof(item));
		int w = snprintf(buf + used, len - used, "%s%s", i ? "," : "", item);
		used += w > 0 ? (size_t)w : 0;
	}
}

const struct lrx_value_key lrx_stage_conf_keys[] = {
	LRX_KEY_UINT(struct lrx_stage_conf, footprint_kb, "footprint_kb", "0", 0, UINT32_MAX,
		     "KB of ballast code the engine runs per packet with this stage"),
	{.name = NULL},
};

uint32_t lrx_pipeline_conf_mbuf_priv(const struct lrx_pipeline_conf *conf)
{
	uint32_t most = 0;
	for (unsigned i = 0; i < conf->n_stages; i++) {
		const struct lrx_stage_conf *sc = &conf->stages[i];
		if (sc->stage != NULL && sc->stage->mbuf_priv != NULL)
			most = RTE_MAX(most, sc->stage->mbuf_priv(sc->conf));
	}
	return RTE_ALIGN_CEIL(most, RTE_MBUF_PRIV_ALIGN);
}

uint64_t lrx_pipeline_conf_mbuf_hold(const struct lrx_pipeline_conf *conf,
				     uint32_t mbuf_size)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < conf->n_stages; i++) {
		const struct lrx_stage_conf *sc = &conf->stages[i];
		if (sc->stage != NULL && sc->stage->mbuf_hold != NULL)
			n += sc->stage->mbuf_hold(sc->conf, mbuf_size);
	}
	return n;
}

static int stage_create(struct lrx_pipeline *p, unsigned index,
			const struct lrx_pipeline_conf *conf, char *err,
			size_t err_len)
{
	const struct lrx_stage_conf *sc = &conf->stages[index];
	const struct lrx_stage *desc = sc->stage;
	struct engine_stage *st = &p->stages[index];
	/* what a stage's init reports: paths (an eBPF object's, twice in a
	 * libbpf message) can make it long; as long as the caller's err */
	char msg[2048] = "";
	int rc;

	/* checked by the config loader (and the tests' builders) */
	RTE_VERIFY(desc != NULL && desc->process_one != NULL && desc->process_burst != NULL);
	RTE_VERIFY(sc->conf != NULL || desc->conf_size == 0);
	RTE_VERIFY(lrx_footprint_check(index, sc->footprint_kb, msg, sizeof(msg)) == 0);
	engine_ballast_setup(st, index, sc->footprint_kb);
	if (desc->ctx_size != 0) {
		st->ctx = rte_zmalloc_socket(desc->name, desc->ctx_size,
					     RTE_CACHE_LINE_SIZE,
					     conf->socket_id);
		if (st->ctx == NULL) {
			snprintf(err, err_len,
				 "stage '%s': no memory for its %zu-byte context on socket %d",
				 desc->name, desc->ctx_size, conf->socket_id);
			return -ENOMEM;
		}
	}
	st->desc = desc;
	st->process_one = desc->process_one;
	st->process_burst = desc->process_burst;
	st->release = desc->release;
	st->footprint_kb = sc->footprint_kb;
	if (desc->init != NULL) {
		struct lrx_stage_init init = {
			.instance = desc->name,
			.socket_id = conf->socket_id,
			.burst = conf->burst,
			.prefetch = conf->prefetch,
			.lcore_id = conf->lcore_id,
			.qsbr = conf->qsbr,
			.conf = sc->conf,
			.err = msg,
			.err_len = sizeof(msg),
		};
		rc = desc->init(st->ctx, &init);
		if (rc < 0) {
			snprintf(err, err_len, "stage '%s' (position %u): %s",
				 desc->name, index + 1,
				 msg[0] ? msg : strerror(-rc));
			rte_free(st->ctx);
			st->ctx = NULL;
			st->desc = NULL;
			return rc;
		}
	}
	st->emits = desc->emit != NULL &&
		    (desc->makes_packets == NULL || desc->makes_packets(st->ctx));
	st->gives_up = desc->drop != NULL || desc->send != NULL || desc->consume != NULL;
	st->at_poll_end = desc->flush != NULL || st->emits;
	return 0;
}

int lrx_pipeline_start(struct lrx_pipeline *p, const uint16_t *ports, unsigned n_ports,
		       char *err, size_t err_len, char *warn, size_t warn_len)
{
	size_t warned = 0;

	warn[0] = '\0';
	for (unsigned i = 0; i < p->n_stages; i++) {
		const struct lrx_stage *desc = p->stages[i].desc;
		char msg[1024] = "", w[1024] = "";
		if (desc == NULL || desc->start == NULL)
			continue;
		struct lrx_stage_start start = {
			.instance = desc->name, .ports = ports, .n_ports = n_ports,
			.err = msg, .err_len = sizeof(msg), .warn = w,
			.warn_len = sizeof(w),
		};
		int rc = desc->start(p->stages[i].ctx, &start);
		if (w[0] && warned < warn_len) {
			int n = snprintf(warn + warned, warn_len - warned, "stage '%s' (position %u): %s\n",
					 desc->name, i + 1, w);
			warned += n > 0 ? (size_t)n : 0;
		}
		if (rc < 0) {
			snprintf(err, err_len, "stage '%s' (position %u): %s", desc->name, i + 1,
				 msg[0] ? msg : strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* Addresses a multiple of this apart share an L1d set on the cores DPDK
 * runs on (32 KiB 8-way and 48 KiB 12-way L1d: 64 sets of 64 bytes). */
#define ENGINE_SET_SPAN 4096u

static void *scratch_take(uintptr_t *cur, uintptr_t *color, size_t bytes,
			  size_t hot)
{
	/* the first address at or after *cur that is *color modulo the
	 * span: this array's hot part starts where the previous one's ended */
	const uintptr_t start = *cur + ((*color - *cur) & (ENGINE_SET_SPAN - 1));

	*cur = start + bytes;
	*color = (*color + RTE_ALIGN_CEIL(RTE_MIN(hot, bytes),
					  RTE_CACHE_LINE_SIZE)) &
		 (ENGINE_SET_SPAN - 1);
	return (void *)start;
}

/* Carves the scratch arrays from base (ENGINE_SET_SPAN aligned), returns
 * the bytes they take; with base 0, only that size is wanted. Per run of
 * `burst` packets the engines touch the first burst entries of each
 * array, and of fate the slots of the packets a holding stage releases too
 * (GRO gives back as many as it takes). Laid end to end, the arrays (4 KiB
 * multiples) would start in the same L1d set, and at burst 64 five of them
 * would share each of eight sets with the packets' own lines: callgrind's
 * write misses in engine_vector_run came from there. The order is the
 * order of use in a poll. */
static size_t engine_scratch_layout(struct lrx_pipeline *p, uintptr_t base,
				    uint16_t burst)
{
	uintptr_t cur = base, color = 0;
	const size_t b = RTE_MAX(burst, 1);

	p->rx_pkts = scratch_take(&cur, &color, LRX_BURST_MAX * sizeof(void *),
				  b * sizeof(void *));
	p->nexts = scratch_take(&cur, &color, LRX_BURST_MAX * sizeof(lrx_next_t),
				b * sizeof(lrx_next_t));
	p->fate = scratch_take(&cur, &color, LRX_SINK_MAX * sizeof(lrx_next_t),
			       2 * b * sizeof(lrx_next_t));
	p->slot_extra = scratch_take(&cur, &color,
				     LRX_SINK_MAX * sizeof(void *),
				     b * sizeof(void *));
	for (unsigned k = 0; k < 2; k++) {
		p->vec[k] = scratch_take(&cur, &color,
					 LRX_BURST_MAX * sizeof(void *),
					 b * sizeof(void *));
		p->vec_slot[k] = scratch_take(&cur, &color,
					      LRX_BURST_MAX * sizeof(uint16_t),
					      b * sizeof(uint16_t));
	}
	p->released = scratch_take(&cur, &color, LRX_BURST_MAX * sizeof(void *),
				   b * sizeof(void *));
	p->released_spare = scratch_take(&cur, &color, LRX_BURST_MAX * sizeof(void *),
					 b * sizeof(void *));
	p->flushed = scratch_take(&cur, &color, LRX_BURST_MAX * sizeof(void *),
				  b * sizeof(void *));
	return cur - base;
}

int lrx_pipeline_create(const struct lrx_pipeline_conf *conf,
			struct lrx_pipeline **out, char *err, size_t err_len)
{
	struct lrx_pipeline *p;
	int rc;

	*out = NULL;
	/* checked by the config loader */
	RTE_VERIFY((unsigned)conf->engine < RTE_DIM(engine_names));
	RTE_VERIFY(conf->burst >= 1 && conf->burst <= LRX_BURST_MAX);
	RTE_VERIFY(conf->n_stages <= LRX_PIPELINE_MAX_STAGES);
	RTE_VERIFY(conf->engine != LRX_ENGINE_HYBRID || conf->hybrid_k <= conf->n_stages);
	/* the struct, then its scratch arrays from the next set-span
	 * boundary (the layout of a dry run at address 0 is the same) */
	struct lrx_pipeline dry;
	const size_t head = RTE_ALIGN_CEIL(sizeof(*p), ENGINE_SET_SPAN);
	const size_t bytes = head + engine_scratch_layout(&dry, 0, conf->burst);
	p = rte_zmalloc_socket("lrx_pipeline", bytes, ENGINE_SET_SPAN,
			       conf->socket_id);
	if (p == NULL) {
		snprintf(err, err_len, "no memory for the pipeline (%zu bytes) on socket %d",
			 bytes, conf->socket_id);
		return -ENOMEM;
	}
	engine_scratch_layout(p, (uintptr_t)p + head, conf->burst);
	p->engine = conf->engine;
	p->hybrid_k = conf->hybrid_k;
	p->burst = conf->burst;
	p->stats_level = conf->stats_level;
	p->prefetch = conf->prefetch;
	p->socket_id = conf->socket_id;
	p->lcore_id = conf->lcore_id;
	for (unsigned i = 0; i < conf->n_stages; i++) {
		rc = stage_create(p, i, conf, err, err_len);
		if (rc < 0) {
			lrx_pipeline_destroy(p);
			return rc;
		}
		p->n_stages = i + 1;
	}
	p->plain = p->stats_level == LRX_STATS_OFF;
	for (unsigned i = 0; i < p->n_stages; i++)
		p->plain &= p->stages[i].ballast_lines == 0;
	if (p->engine == LRX_ENGINE_GRAPH) {
		rc = engine_graph_create(p, err, err_len);
		if (rc < 0) {
			lrx_pipeline_destroy(p);
			return rc;
		}
	}
	*out = p;
	return 0;
}

void lrx_pipeline_destroy(struct lrx_pipeline *p)
{
	if (p == NULL)
		return;
	if (p->graph != NULL)
		engine_graph_destroy(p);
	for (unsigned i = 0; i < p->n_stages; i++) {
		struct engine_stage *st = &p->stages[i];
		if (st->desc != NULL && st->desc->fini != NULL)
			st->desc->fini(st->ctx);
		rte_free(st->ctx);
	}
	rte_free(p);
}

/* Packets enter at stage `first`. Compare-and-branch rather than a switch:
 * a switch becomes a jump table, an indirect jump per burst that would blur
 * the indirect-branch counts of docs/engines.md. */
static void engine_run(struct lrx_pipeline *p, unsigned first,
		       struct rte_mbuf **pkts, uint16_t n,
		       struct lrx_sink *sink)
{
	const enum lrx_engine_kind e = p->engine;

	if (e == LRX_ENGINE_BURST)
		engine_burst_run(p, first, pkts, n, sink);
	else if (e == LRX_ENGINE_PACKET)
		engine_packet_run(p, first, pkts, n, sink);
	else if (e == LRX_ENGINE_STATIC)
		engine_static_run(p, first, pkts, n, sink);
	else if (e == LRX_ENGINE_HYBRID)
		engine_hybrid_run(p, first, pkts, n, sink);
	else
		engine_graph_run(p, first, pkts, n, sink);
}

void lrx_pipeline_process(struct lrx_pipeline *p, struct rte_mbuf **pkts,
			  uint16_t n, struct lrx_sink *sink)
{
	/* the vector engines' scratch is sized for one burst */
	RTE_ASSERT(n <= LRX_BURST_MAX);
	if (n != 0)
		engine_run(p, 0, pkts, n, sink);
}

static inline void engine_give_up(struct lrx_pipeline *p, struct engine_stage *st,
				  struct lrx_sink *sink, struct rte_mbuf *m, lrx_next_t next)
{
	if (p->stats_level != LRX_STATS_OFF)
		engine_account_exit_one(st, next);
	lrx_sink_put(sink, m, next);
}

/* What stage st gives up (stage.h: drop, send, then consume), into the sink
 * with its fate, counted as the stage's drops or deliveries. */
static void engine_take_given_up(struct lrx_pipeline *p, struct engine_stage *st,
				 struct lrx_sink *sink)
{
	struct rte_mbuf *pkts[64];
	enum lrx_drop_reason reasons[RTE_DIM(pkts)];
	uint16_t n, max;

	while (st->desc->drop != NULL &&
	       (max = (uint16_t)RTE_MIN(RTE_DIM(pkts), LRX_SINK_MAX - sink->n)) != 0 &&
	       (n = st->desc->drop(st->ctx, pkts, reasons, max)) != 0)
		for (uint16_t i = 0; i < n; i++)
			engine_give_up(p, st, sink, pkts[i], lrx_next_drop(reasons[i]));
	while (st->desc->send != NULL &&
	       (max = (uint16_t)RTE_MIN(RTE_DIM(pkts), LRX_SINK_MAX - sink->n)) != 0 &&
	       (n = st->desc->send(st->ctx, pkts, max)) != 0)
		for (uint16_t i = 0; i < n; i++)
			engine_give_up(p, st, sink, pkts[i], lrx_next_tx(pkts[i]->port));
	while (st->desc->consume != NULL &&
	       (max = (uint16_t)RTE_MIN(RTE_DIM(pkts), LRX_SINK_MAX - sink->n)) != 0 &&
	       (n = st->desc->consume(st->ctx, pkts, max)) != 0)
		for (uint16_t i = 0; i < n; i++)
			engine_give_up(p, st, sink, pkts[i], LRX_NEXT_DELIVER_V);
}

/* What stage st made (stage.h: emit), into the sink with its next. */
static void engine_take_emitted(struct lrx_pipeline *p, struct engine_stage *st,
				struct lrx_sink *sink)
{
	struct rte_mbuf *pkts[64];
	lrx_next_t nexts[RTE_DIM(pkts)];
	uint16_t n, max;

	while ((max = (uint16_t)RTE_MIN(RTE_DIM(pkts), LRX_SINK_MAX - sink->n)) != 0 &&
	       (n = st->desc->emit(st->ctx, pkts, nexts, max)) != 0)
		for (uint16_t i = 0; i < n; i++)
			engine_give_up(p, st, sink, pkts[i], nexts[i]);
}

void lrx_pipeline_poll_end(struct lrx_pipeline *p, bool budget_used,
			   struct lrx_sink *sink)
{
	for (unsigned s = 0; s < p->n_stages; s++) {
		struct engine_stage *st = &p->stages[s];
		uint16_t n, max;

		if (!st->at_poll_end)
			continue;
		if (st->desc->flush != NULL)
			st->desc->flush(st->ctx, budget_used);
		if (st->gives_up)
			engine_take_given_up(p, st, sink);
		if (unlikely(st->emits))
			engine_take_emitted(p, st, sink);
		if (st->release == NULL)
			continue; /* a timer only (stage.h end_run) */
		/* in pipeline order, so what this stage releases is flushed
		 * by a later holding stage in the same poll */
		while ((max = (uint16_t)RTE_MIN((uint32_t)LRX_BURST_MAX,
						LRX_SINK_MAX - sink->n)) != 0 &&
		       (n = st->release(st->ctx, p->flushed, max)) != 0)
			engine_run(p, s + 1, p->flushed, n, sink);
	}
}

uint16_t lrx_pipeline_poll(struct lrx_pipeline *p, uint16_t port,
			   uint16_t queue, uint16_t budget,
			   struct lrx_sink *sink)
{
	uint16_t n;

	budget = RTE_MIN(budget, (uint16_t)LRX_BURST_MAX);
	if (p->n_stages == 0 && p->engine != LRX_ENGINE_GRAPH) {
		/* empty pipeline: receive straight into the sink, everything
		 * is delivered (the I/O baseline, as testpmd rxonly) */
		uint32_t used = sink->n; /* a local: the stores below may not
					  * alias it, so the loop vectorises */
		lrx_next_t *nexts = sink->nexts + used;

		budget = (uint16_t)RTE_MIN((uint32_t)budget, LRX_SINK_MAX - used);
		n = rte_eth_rx_burst(port, queue, sink->pkts + used, budget);
		for (uint16_t i = 0; i < n; i++)
			nexts[i] = LRX_NEXT_DELIVER_V;
		sink->n = used + n;
		return n;
	}
	const uint32_t sink_from = sink->n;
	if (p->engine == LRX_ENGINE_GRAPH) {
		n = engine_graph_poll(p, port, queue, budget, sink);
	} else {
		n = rte_eth_rx_burst(port, queue, p->rx_pkts, budget);
		if (n != 0)
			engine_run(p, 0, p->rx_pkts, n, sink);
	}
	lrx_pipeline_poll_end(p, n == budget, sink);
	if (unlikely(p->trace != NULL) && !p->trace_done)
		lrx_pipeline_trace_sink(p, sink, sink_from);
	return n;
}

uint64_t lrx_pipeline_held(const struct lrx_pipeline *p)
{
	uint64_t held = 0;

	for (unsigned s = 0; s < p->n_stages; s++) {
		const struct engine_stage *st = &p->stages[s];
		if (st->desc->held != NULL)
			held += st->desc->held(st->ctx);
	}
	return held;
}

void lrx_pipeline_drain(struct lrx_pipeline *p, struct lrx_sink *sink)
{
	const uint32_t sink_from = sink->n;
	for (unsigned s = 0; s < p->n_stages; s++)
		if (p->stages[s].desc->end_run != NULL)
			p->stages[s].desc->end_run(p->stages[s].ctx);
	/* one pass normally empties everything (flushes run in pipeline
	 * order); more only if the sink filled up */
	for (unsigned pass = 0; pass <= p->n_stages; pass++) {
		lrx_pipeline_poll_end(p, false, sink);
		if (lrx_pipeline_held(p) == 0 || sink->n == LRX_SINK_MAX)
			break;
	}
	if (p->trace != NULL && !p->trace_done)
		lrx_pipeline_trace_sink(p, sink, sink_from);
}

bool lrx_engine_calls_vectors(enum lrx_engine_kind kind)
{
	return kind == LRX_ENGINE_BURST || kind == LRX_ENGINE_HYBRID ||
	       kind == LRX_ENGINE_GRAPH;
}

int lrx_pipeline_set_pmu(struct lrx_pipeline *p, const struct lrx_pmu *g, char *why,
			 size_t why_len)
{
	if (g && !lrx_engine_calls_vectors(p->engine)) {
		snprintf(why, why_len,
			 "per-stage attribution reads the counters around each stage call of the vector engines (burst, hybrid, graph); engine %s calls stages per packet",
			 lrx_engine_name(p->engine));
		return -ENOTSUP;
	}
	if (g && p->stats_level == LRX_STATS_OFF) {
		snprintf(why, why_len, "stats level off: no stage call is measured");
		return -ENOTSUP;
	}
	p->pmu = g;
	return 0;
}

bool lrx_pipeline_stage_attributable(const struct lrx_pipeline *p, unsigned i)
{
	if (i >= p->n_stages)
		return false;
	switch (p->engine) {
	case LRX_ENGINE_BURST:
	case LRX_ENGINE_GRAPH:
		return true;
	case LRX_ENGINE_HYBRID: /* only the stages run as bursts */
		return i < p->hybrid_k;
	default:
		return false;
	}
}

unsigned lrx_pipeline_stage_count(const struct lrx_pipeline *p)
{
	return p->n_stages;
}

const char *lrx_pipeline_stage_name(const struct lrx_pipeline *p, unsigned i)
{
	return i < p->n_stages ? p->stages[i].desc->name : NULL;
}

void lrx_pipeline_stage_stats(const struct lrx_pipeline *p, unsigned i,
			      struct lrx_stage_stats *out)
{
	if (i < p->n_stages)
		*out = p->stages[i].stats;
	else
		memset(out, 0, sizeof(*out));
}

void lrx_pipeline_stage_counters(const struct lrx_pipeline *p, unsigned i,
				 void (*fn)(void *arg, const struct lrx_stage_counter *c,
					    uint64_t value),
				 void *arg)
{
	if (i >= p->n_stages)
		return;
	const struct engine_stage *st = &p->stages[i];
	for (const struct lrx_stage_counter *c = st->desc->counters;
	     c && c->name; c++) {
		uint64_t v;
		memcpy(&v, (const char *)st->ctx + c->offset, sizeof(v));
		fn(arg, c, v);
	}
}

void lrx_pipeline_port_counters(const struct lrx_pipeline *p, uint16_t port_id,
				void (*fn)(void *arg, const char *name,
					   uint64_t value),
				void *arg)
{
	if (port_id >= RTE_MAX_ETHPORTS)
		return;
	for (unsigned i = 0; i < p->n_stages; i++) {
		const struct engine_stage *st = &p->stages[i];
		for (const struct lrx_stage_port_counter *c = st->desc->port_counters;
		     c && c->name; c++) {
			uint64_t v;
			memcpy(&v, (const char *)st->ctx + c->offset + port_id * c->stride,
			       sizeof(v));
			fn(arg, c->name, v);
		}
	}
}

bool lrx_pipeline_stage_map_at(const struct lrx_pipeline *p, unsigned i, unsigned map,
			       struct lrx_stage_map *out)
{
	if (i >= p->n_stages || !p->stages[i].desc->map_at)
		return false;
	return p->stages[i].desc->map_at(p->stages[i].ctx, map, out);
}

bool lrx_pipeline_stage_map_next(const struct lrx_pipeline *p, unsigned i, unsigned map,
				 uint32_t *cursor, void *key, void *value)
{
	if (i >= p->n_stages || !p->stages[i].desc->map_next)
		return false;
	return p->stages[i].desc->map_next(p->stages[i].ctx, map, cursor, key, value);
}

bool lrx_pipeline_writable_maps(const struct lrx_pipeline *p)
{
	struct lrx_stage_map info;

	for (unsigned i = 0; i < p->n_stages; i++)
		if (p->stages[i].desc->map_write &&
		    lrx_pipeline_stage_map_at(p, i, 0, &info))
			return true;
	return false;
}

bool lrx_pipeline_stage_map_write(struct lrx_pipeline *p, unsigned i, const char *stage,
				  struct lrx_stage_map_write *w)
{
	if (i >= p->n_stages || !p->stages[i].desc->map_write ||
	    strcmp(p->stages[i].desc->name, stage) != 0)
		return false;
	p->stages[i].desc->map_write(p->stages[i].ctx, w);
	return true;
}

unsigned lrx_pipeline_footprint_bytes(const struct lrx_pipeline *p)
{
	unsigned bytes = 0;

	for (unsigned i = 0; i < p->n_stages; i++)
		bytes += p->stages[i].ballast_lines * LRX_BALLAST_LINE_BYTES;
	return bytes;
}

uint64_t lrx_pipeline_ballast_checksum(const struct lrx_pipeline *p)
{
	return p->ballast_sum;
}
