/* SPDX-License-Identifier: BSD-3-Clause
 * The trace wrappers (trace.h): while a pipeline traces, each stage's
 * process_one / process_burst / release is a wrapper that calls the stage
 * and records, for the traced packets among those it saw, the verdict and
 * the metadata fields that changed. The engines call them through the
 * same pointers as the stages' own entries, so every engine records the
 * same events. Wrappers find their stage by its ctx; everything here runs
 * only while tracing and is not tuned.
 */
#include <stdlib.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_mbuf_dyn.h>

#include "engine_internal.h"
#include "trace.h"

struct lrx_trace *lrx_trace_alloc(uint32_t limit)
{
	struct lrx_trace *t = calloc(1, sizeof(*t) + (size_t)limit * sizeof(t->pkt[0]));
	if (t)
		t->limit = limit;
	return t;
}

void lrx_trace_free(struct lrx_trace *t)
{
	free(t);
}

uint32_t lrx_trace_count(const struct lrx_trace *t)
{
	uint32_t n = (uint32_t)atomic_load(&((struct lrx_trace *)t)->next_id);
	return n < t->limit ? n : t->limit;
}

struct trace_binding {
	const void *ctx;
	struct lrx_pipeline *p;
	unsigned stage;
	lrx_next_t (*one)(void *ctx, struct rte_mbuf *pkt);
	void (*burst)(void *ctx, struct rte_mbuf **pkts, uint16_t n, lrx_next_t *nexts);
	uint16_t (*release)(void *ctx, struct rte_mbuf **pkts, uint16_t max);
};

/* every traced stage instance of the run (set before the workers start) */
static struct trace_binding bindings[RTE_MAX_LCORE * LRX_PIPELINE_MAX_STAGES];
static unsigned n_bindings;

static const struct trace_binding *binding_of(const void *ctx)
{
	for (unsigned i = 0; i < n_bindings; i++)
		if (bindings[i].ctx == ctx)
			return &bindings[i];
	return NULL;
}

/* The metadata is valid from the stage that fills it on (stage.h:
 * LRX_PROVIDES_META); before it, the mbuf field holds a stale pointer. */
static int meta_stage(const struct lrx_pipeline *p)
{
	for (unsigned s = 0; s < p->n_stages; s++)
		if (p->stages[s].desc->provides & LRX_PROVIDES_META)
			return (int)s;
	return -1;
}

static int trace_find(const struct lrx_trace *t, const struct rte_mbuf *m)
{
	uint32_t n = RTE_MIN((uint32_t)atomic_load(&t->next_id), t->limit);
	for (uint32_t i = 0; i < n; i++)
		if (t->pkt[i].mbuf == m && !t->pkt[i].done)
			return (int)i;
	return -1;
}

/* A packet entering the first stage is a new one from RX: a traced mbuf
 * seen here again was freed inside a stage (merged) and reused. */
static int trace_enter(struct lrx_trace *t, const struct lrx_pipeline *p, struct rte_mbuf *m)
{
	int old = trace_find(t, m);
	if (old >= 0) {
		t->pkt[old].done = true;
		t->pkt[old].mbuf = NULL;
	}
	if (atomic_load(&t->next_id) >= t->limit)
		return -1;
	unsigned id = atomic_fetch_add(&t->next_id, 1);
	if (id >= t->limit)
		return -1;
	struct lrx_trace_packet *tp = &t->pkt[id];
	tp->mbuf = m;
	tp->owner = p;
	tp->port = m->port;
	tp->queue = 0;
	tp->len = rte_pktmbuf_pkt_len(m);
	return (int)id;
}

static void trace_event(struct lrx_trace_packet *tp, const struct lrx_trace_event *ev)
{
	if (tp->n_events == LRX_TRACE_EVENTS) {
		tp->lost_events++;
		return;
	}
	tp->ev[tp->n_events++] = *ev;
}

#define META_FIELD_MASK(field, bit)                                                   \
	(memcmp(&before->field, &after->field, sizeof(after->field)) != 0 ? 1u << (bit) : 0u)

static uint32_t meta_changed(const struct lrx_meta *before, const struct lrx_meta *after)
{
	return META_FIELD_MASK(protocol, 0) | META_FIELD_MASK(mac_len, 1) |
	       META_FIELD_MASK(network_offset, 2) | META_FIELD_MASK(transport_offset, 3) |
	       META_FIELD_MASK(pkt_type, 4) | META_FIELD_MASK(ip_summed, 5) |
	       META_FIELD_MASK(l4_proto, 6) | META_FIELD_MASK(hints, 7) |
	       META_FIELD_MASK(vlan_tci, 8) | META_FIELD_MASK(vlan_count, 9) |
	       META_FIELD_MASK(l3_csum_state, 10) | META_FIELD_MASK(ingress_port, 11) |
	       META_FIELD_MASK(ingress_queue, 12) | META_FIELD_MASK(gso_size, 13) |
	       META_FIELD_MASK(gso_segs, 14) | META_FIELD_MASK(hash, 15) |
	       META_FIELD_MASK(len, 16) | META_FIELD_MASK(rx_timestamp, 17) |
	       META_FIELD_MASK(ptype, 18) | META_FIELD_MASK(mark, 19);
}

struct trace_before {
	int id;
	struct lrx_meta meta;
};

static void trace_pre(const struct trace_binding *b, struct rte_mbuf *m, struct trace_before *tb)
{
	struct lrx_trace *t = b->p->trace;
	tb->id = b->stage == 0 ? trace_enter(t, b->p, m) : trace_find(t, m);
	if (tb->id < 0)
		return;
	memset(&tb->meta, 0, sizeof(tb->meta));
	int ms = meta_stage(b->p);
	if (ms >= 0 && (int)b->stage > ms && lrx_meta(m))
		tb->meta = *lrx_meta(m);
}

static void trace_post(const struct trace_binding *b, struct rte_mbuf *m,
		       const struct trace_before *tb, lrx_next_t next)
{
	if (tb->id < 0)
		return;
	struct lrx_trace_packet *tp = &b->p->trace->pkt[tb->id];
	struct lrx_trace_event ev = {.kind = LRX_TRACE_STAGE, .stage = (uint8_t)b->stage,
				     .next = next};
	int ms = meta_stage(b->p);
	if (ms >= 0 && (int)b->stage >= ms && lrx_meta(m)) {
		ev.has_meta = true;
		ev.meta = *lrx_meta(m);
		/* the stage that fills the metadata sets every field */
		ev.set = (int)b->stage == ms ? UINT32_MAX : meta_changed(&tb->meta, &ev.meta);
	}
	trace_event(tp, &ev);
}

/* --capture-drops: the stage that dropped a packet, 1 + its index (0:
 * not dropped by a stage), in an mbuf dynamic field the sink reads. */
static int drop_stage_offset = -1;

static inline bool tracing(const struct trace_binding *b)
{
	return b->p->trace != NULL && !b->p->trace_done;
}

static void drop_stage_mark(const struct trace_binding *b, struct rte_mbuf *m, lrx_next_t next)
{
	uint8_t *field = RTE_MBUF_DYNFIELD(m, drop_stage_offset, uint8_t *);
	if (lrx_next_kind(next) == LRX_NEXT_DROP)
		*field = (uint8_t)(b->stage + 1);
	else if (b->stage == 0)
		*field = 0; /* a new packet: no stale mark from the mbuf's last use */
}

static lrx_next_t trace_one(void *ctx, struct rte_mbuf *pkt)
{
	const struct trace_binding *b = binding_of(ctx);
	struct trace_before tb = {.id = -1};
	if (tracing(b))
		trace_pre(b, pkt, &tb);
	lrx_next_t next = b->one(ctx, pkt);
	trace_post(b, pkt, &tb, next);
	if (b->p->mark_drop_stage)
		drop_stage_mark(b, pkt, next);
	return next;
}

static void trace_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n, lrx_next_t *nexts)
{
	const struct trace_binding *b = binding_of(ctx);
	static __thread struct trace_before tb[LRX_BURST_MAX];
	const bool on = tracing(b);
	for (uint16_t i = 0; i < n; i++) {
		tb[i].id = -1;
		if (on)
			trace_pre(b, pkts[i], &tb[i]);
	}
	b->burst(ctx, pkts, n, nexts);
	for (uint16_t i = 0; i < n; i++) {
		trace_post(b, pkts[i], &tb[i], nexts[i]);
		if (b->p->mark_drop_stage)
			drop_stage_mark(b, pkts[i], nexts[i]);
	}
}

static uint16_t trace_release(void *ctx, struct rte_mbuf **pkts, uint16_t max)
{
	const struct trace_binding *b = binding_of(ctx);
	uint16_t n = b->release(ctx, pkts, max);
	for (uint16_t i = 0; tracing(b) && i < n; i++) {
		int id = trace_find(b->p->trace, pkts[i]);
		if (id < 0)
			continue;
		struct lrx_trace_event ev = {.kind = LRX_TRACE_RELEASED,
					     .stage = (uint8_t)b->stage};
		struct lrx_trace_packet *tp = &b->p->trace->pkt[id];
		if (meta_stage(b->p) >= 0 && (int)b->stage >= meta_stage(b->p) && lrx_meta(pkts[i])) {
			ev.has_meta = true;
			ev.meta = *lrx_meta(pkts[i]);
			/* what the stage changed while it held the packet (GRO:
			 * gso_size, gso_segs, len of a merged packet) */
			for (unsigned e = tp->n_events; e-- > 0;)
				if (tp->ev[e].has_meta) {
					ev.set = meta_changed(&tp->ev[e].meta, &ev.meta);
					break;
				}
		}
		trace_event(tp, &ev);
	}
	return n;
}

static int wrappers_install(struct lrx_pipeline *p)
{
	if (p->stages[0].process_one == trace_one || p->n_stages == 0)
		return 0; /* already in place */
	if (n_bindings + p->n_stages > RTE_DIM(bindings))
		return -ENOSPC;
	for (unsigned s = 0; s < p->n_stages; s++) {
		struct engine_stage *st = &p->stages[s];
		bindings[n_bindings++] = (struct trace_binding){
			.ctx = st->ctx, .p = p, .stage = s, .one = st->process_one,
			.burst = st->process_burst, .release = st->release};
		st->process_one = trace_one;
		st->process_burst = trace_burst;
		if (st->release)
			st->release = trace_release;
	}
	return 0;
}

int lrx_pipeline_set_trace(struct lrx_pipeline *p, struct lrx_trace *t)
{
	int rc = wrappers_install(p);
	if (rc < 0)
		return rc;
	p->trace = t;
	t->n_stages = p->n_stages;
	for (unsigned s = 0; s < p->n_stages; s++)
		snprintf(t->stage_names[s], sizeof(t->stage_names[s]), "%s", p->stages[s].desc->name);
	return 0;
}

int lrx_pipeline_mark_drop_stage(struct lrx_pipeline *p)
{
	static const struct rte_mbuf_dynfield field = {
		.name = "listrx_drop_stage", .size = sizeof(uint8_t), .align = 1};
	if (drop_stage_offset < 0)
		drop_stage_offset = rte_mbuf_dynfield_register(&field);
	if (drop_stage_offset < 0)
		return -rte_errno;
	int rc = wrappers_install(p);
	if (rc == 0)
		p->mark_drop_stage = true;
	return rc;
}

const char *lrx_pipeline_drop_stage(const struct lrx_pipeline *p, const struct rte_mbuf *m)
{
	if (drop_stage_offset < 0)
		return NULL;
	uint8_t s = *RTE_MBUF_DYNFIELD(m, drop_stage_offset, const uint8_t *);
	return s != 0 && s <= p->n_stages ? p->stages[s - 1].desc->name : NULL;
}

/* The fates of the traced packets among sink[from..n) (before the sink
 * completes them); then, once every traced packet of this pipeline is
 * out, the stages' own entries come back. */
void lrx_pipeline_trace_sink(struct lrx_pipeline *p, const struct lrx_sink *sink, uint32_t from)
{
	struct lrx_trace *t = p->trace;
	for (uint32_t i = from; i < sink->n; i++) {
		int id = trace_find(t, sink->pkts[i]);
		if (id < 0)
			continue;
		lrx_next_t next = sink->nexts[i] == LRX_NEXT_CONTINUE_V ? LRX_NEXT_DELIVER_V
									: sink->nexts[i];
		struct lrx_trace_event ev = {.kind = LRX_TRACE_FATE, .next = next};
		trace_event(&t->pkt[id], &ev);
		t->pkt[id].done = true;
		t->pkt[id].mbuf = NULL;
	}
	if (atomic_load(&t->next_id) < t->limit)
		return;
	uint32_t n = RTE_MIN((uint32_t)atomic_load(&t->next_id), t->limit);
	bool consumed = false;
	for (uint32_t i = 0; i < n; i++) {
		const struct lrx_trace_packet *tp = &t->pkt[i];
		if (tp->done || tp->mbuf == NULL || tp->owner != p)
			continue;
		/* in this pipeline and not consumed: not yet at the sink */
		if (tp->n_events && tp->ev[tp->n_events - 1].next != LRX_NEXT_CONSUMED_V)
			return;
		consumed = true;
	}
	for (unsigned s = 0; consumed && s < p->n_stages; s++)
		if (p->stages[s].desc->held && p->stages[s].desc->held(p->stages[s].ctx))
			return; /* a held traced packet may still come back */
	/* consumed and never released: merged into another packet */
	for (uint32_t i = 0; i < n; i++)
		if (t->pkt[i].owner == p && !t->pkt[i].done) {
			t->pkt[i].done = true;
			t->pkt[i].mbuf = NULL;
		}
	for (unsigned s = 0; !p->mark_drop_stage && s < p->n_stages; s++) {
		const struct trace_binding *b = binding_of(p->stages[s].ctx);
		if (!b)
			continue;
		p->stages[s].process_one = b->one;
		p->stages[s].process_burst = b->burst;
		p->stages[s].release = b->release;
	}
	p->trace_done = true;
}
