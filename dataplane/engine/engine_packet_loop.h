/* SPDX-License-Identifier: BSD-3-Clause
 * The per-packet walk shared by the packet, static and hybrid engines: one
 * always-inline body, specialised by two constant parameters (how a stage
 * is called, where a finished packet goes), so that the three engines run
 * the same code and differ only where they are meant to.
 */
#ifndef LISTRX_ENGINE_PACKET_LOOP_H
#define LISTRX_ENGINE_PACKET_LOOP_H

#include "engine_internal.h"

#include "static_entries.h"

enum engine_dispatch {
	ENGINE_INDIRECT, /* through the descriptor's function pointers */
	ENGINE_DIRECT,   /* direct calls chosen by comparison (static) */
};

enum engine_emit {
	ENGINE_TO_SINK, /* packet engines: into the sink when it leaves */
	ENGINE_TO_SLOT, /* vector engines: fate recorded per slot */
};

/* What the walk does per packet besides the stage calls: nothing (stats
 * off, no stage with ballast: p->plain), or the stats level's counting
 * and each stage's ballast. The kernel's per-packet path has neither, so
 * the packet engine does not test for them per packet per stage when
 * they are off. */
enum engine_extras {
	ENGINE_PLAIN,
	ENGINE_MEASURED,
};

/* The static engine's dispatch: compare the descriptor's entry with the
 * stages known at build time and call that one directly (the compiler sees
 * a direct call; a comparison of function addresses cannot become a jump
 * table). The lists are the stages' own (stages/static_entries.h). */
static __rte_always_inline lrx_next_t
engine_static_one(const struct engine_stage *st, struct rte_mbuf *pkt)
{
	lrx_next_t (*fn)(void *, struct rte_mbuf *) = st->process_one;

#define ENGINE_STATIC_CALL(entry) \
	if (fn == entry) \
		return entry(st->ctx, pkt);
	LRX_STATIC_ENTRIES(ENGINE_STATIC_CALL)
#undef ENGINE_STATIC_CALL
	return fn(st->ctx, pkt);
}

static __rte_always_inline uint16_t
engine_release(const struct engine_stage *st, struct rte_mbuf **pkts,
	       uint16_t max, enum engine_dispatch dispatch)
{
	if (dispatch == ENGINE_DIRECT) {
#define ENGINE_STATIC_RELEASE(entry) \
		if (st->release == entry) \
			return entry(st->ctx, pkts, max);
		LRX_STATIC_RELEASES(ENGINE_STATIC_RELEASE)
#undef ENGINE_STATIC_RELEASE
	}
	return st->release(st->ctx, pkts, max);
}

static __rte_always_inline lrx_next_t
engine_dispatch_one(const struct engine_stage *st, struct rte_mbuf *pkt,
		    enum engine_dispatch dispatch)
{
	if (dispatch == ENGINE_DIRECT)
		return engine_static_one(st, pkt);
	return st->process_one(st->ctx, pkt);
}

/* One stage call for one packet plus its ballast; stats per call. */
static __rte_always_inline lrx_next_t
engine_call_one(struct lrx_pipeline *p, struct engine_stage *st,
		struct rte_mbuf *pkt, enum engine_dispatch dispatch,
		enum engine_extras extras)
{
	lrx_next_t next;

	if (extras == ENGINE_PLAIN)
		return engine_dispatch_one(st, pkt, dispatch);
	if (p->stats_level == LRX_STATS_OFF) {
		next = engine_dispatch_one(st, pkt, dispatch);
		engine_ballast(p, st, 1);
		return next;
	}
	uint64_t start = p->stats_level == LRX_STATS_CYCLES ? rte_rdtsc() : 0;
	next = engine_dispatch_one(st, pkt, dispatch);
	engine_ballast(p, st, 1);
	if (p->stats_level == LRX_STATS_CYCLES)
		st->stats.cycles += rte_rdtsc() - start;
	st->stats.calls++;
	st->stats.packets++;
	return next;
}

static __rte_always_inline void
engine_emit_one(struct lrx_pipeline *p, struct rte_mbuf *pkt, uint16_t slot,
		lrx_next_t next, struct lrx_sink *sink, enum engine_emit emit)
{
	if (emit == ENGINE_TO_SLOT)
		p->fate[slot] = next;
	else if (next != LRX_NEXT_CONSUMED_V)
		lrx_sink_put(sink, pkt, next);
}

/* Runs what stage s released, each packet from stage s + 1 (below, after
 * the walk it recurses into; depth <= stages). */
static void engine_packet_released(struct lrx_pipeline *p, unsigned s,
				   struct lrx_sink *sink,
				   enum engine_dispatch dispatch,
				   enum engine_emit emit, enum engine_extras extras);

/* One packet from stage s to wherever it ends. */
static __rte_always_inline void
engine_packet_walk(struct lrx_pipeline *p, struct rte_mbuf *pkt,
		   uint16_t slot, unsigned s, struct lrx_sink *sink,
		   enum engine_dispatch dispatch, enum engine_emit emit,
		   enum engine_extras extras)
{
	for (; s < p->n_stages; s++) {
		struct engine_stage *st = &p->stages[s];
		lrx_next_t next = engine_call_one(p, st, pkt, dispatch, extras);

		/* released packets go on before this one (stage.h) */
		if (unlikely(st->release != NULL))
			engine_packet_released(p, s, sink, dispatch, emit, extras);
		if (next != LRX_NEXT_CONTINUE_V) {
			if (extras != ENGINE_PLAIN && p->stats_level != LRX_STATS_OFF)
				engine_account_exit_one(st, next);
			engine_emit_one(p, pkt, slot, next, sink, emit);
			return;
		}
	}
	if (extras != ENGINE_PLAIN && p->n_stages != 0 && p->stats_level != LRX_STATS_OFF)
		p->stages[p->n_stages - 1].stats.delivered++;
	engine_emit_one(p, pkt, slot, LRX_NEXT_DELIVER_V, sink, emit);
}

/* Release chunk: released packets run one by one, so a small stack buffer
 * per recursion level is enough. */
#define ENGINE_RELEASE_CHUNK 32

static __rte_always_inline void
engine_packet_released_body(struct lrx_pipeline *p, unsigned s, struct lrx_sink *sink,
		enum engine_dispatch dispatch, enum engine_emit emit,
		enum engine_extras extras)
{
	struct engine_stage *st = &p->stages[s];
	struct rte_mbuf *pkts[ENGINE_RELEASE_CHUNK];
	uint16_t max, n;

	/* a release that gave fewer than asked has nothing more (stage.h):
	 * one call per packet for GRO's one released packet, not a second
	 * one that returns 0 */
	do {
		max = engine_release_max(p, ENGINE_RELEASE_CHUNK);
		n = max ? engine_release(st, pkts, max, dispatch) : 0;
		p->release_room -= n;
		for (uint16_t i = 0; i < n; i++) {
			uint16_t slot = emit == ENGINE_TO_SLOT
						? engine_new_slot(p, pkts[i])
						: 0;
			engine_packet_walk(p, pkts[i], slot, s + 1, sink,
					   dispatch, emit, extras);
		}
	} while (n != 0 && n == max);
}

/* Out of line: releases are rare (a holding stage's flush), and one
 * copy per including engine keeps the walk's body small. */
static __rte_noinline void
engine_packet_released(struct lrx_pipeline *p, unsigned s, struct lrx_sink *sink,
		       enum engine_dispatch dispatch, enum engine_emit emit,
		       enum engine_extras extras)
{
	if (extras == ENGINE_PLAIN) {
		if (dispatch == ENGINE_DIRECT)
			engine_packet_released_body(p, s, sink, ENGINE_DIRECT, ENGINE_TO_SINK,
						    ENGINE_PLAIN);
		else
			engine_packet_released_body(p, s, sink, ENGINE_INDIRECT, ENGINE_TO_SINK,
						    ENGINE_PLAIN);
	} else if (dispatch == ENGINE_DIRECT)
		engine_packet_released_body(p, s, sink, ENGINE_DIRECT, ENGINE_TO_SINK,
					    ENGINE_MEASURED);
	else if (emit == ENGINE_TO_SLOT)
		engine_packet_released_body(p, s, sink, ENGINE_INDIRECT, ENGINE_TO_SLOT,
					    ENGINE_MEASURED);
	else
		engine_packet_released_body(p, s, sink, ENGINE_INDIRECT, ENGINE_TO_SINK,
					    ENGINE_MEASURED);
}

/* The per-packet engines' loop over a poll's packets, prefetching k ahead
 * (stages/prefetch.h); called with a constant k = 0 when it is off. */
static __rte_always_inline void
engine_packet_loop(struct lrx_pipeline *p, unsigned first,
		   struct rte_mbuf **pkts, uint16_t n, struct lrx_sink *sink,
		   uint16_t k, enum engine_dispatch dispatch, enum engine_extras extras)
{
	lrx_prefetch_start(pkts, n, k);
	for (uint16_t i = 0; i < n; i++) {
		lrx_prefetch_ahead(pkts, i, n, k);
		engine_packet_walk(p, pkts[i], 0, first, sink, dispatch,
				   ENGINE_TO_SINK, extras);
	}
}

/* The packet and static engines' entry: the loop specialised by the
 * constants it runs under (prefetch off or on, plain or measured). */
static __rte_always_inline void
engine_packet_run_as(struct lrx_pipeline *p, unsigned first,
		     struct rte_mbuf **pkts, uint16_t n, struct lrx_sink *sink,
		     enum engine_dispatch dispatch)
{
	p->release_room = engine_release_room(sink, n);
	/* specialised by a constant 0: no prefetch test per packet when off */
	if (p->plain && !p->prefetch)
		engine_packet_loop(p, first, pkts, n, sink, 0, dispatch, ENGINE_PLAIN);
	else if (p->plain)
		engine_packet_loop(p, first, pkts, n, sink, p->prefetch, dispatch,
				   ENGINE_PLAIN);
	else if (!p->prefetch)
		engine_packet_loop(p, first, pkts, n, sink, 0, dispatch, ENGINE_MEASURED);
	else
		engine_packet_loop(p, first, pkts, n, sink, p->prefetch, dispatch,
				   ENGINE_MEASURED);
}

#endif
