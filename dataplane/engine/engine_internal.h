/* SPDX-License-Identifier: BSD-3-Clause
 * Internals shared by pipeline.c and the engines (engine_*.c). Not part of
 * the pipeline API: the poll loop uses pipeline.h only; tests may include
 * this header to read the ballast checksum.
 *
 * Ordering model (docs/engines.md): the packet engines put each packet into
 * the sink when it leaves. The vector engines (burst, hybrid, graph) give
 * each packet of a run a "slot" (its input position; packets a holding
 * stage releases during the run get the next free slots), record its fate
 * per slot and emit the sink in slot order at the end of the run, so all
 * engines fill the sink in the same order.
 */
#ifndef LISTRX_ENGINE_INTERNAL_H
#define LISTRX_ENGINE_INTERNAL_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>

#include "pipeline.h"
#include "pmu.h"
#include "sink.h"

#include "ballast.h"
#include "prefetch.h"

/* One stage instance. Hot fields first: what the loops read per call. */
struct engine_stage {
	lrx_next_t (*process_one)(void *ctx, struct rte_mbuf *pkt);
	void (*process_burst)(void *ctx, struct rte_mbuf **pkts, uint16_t n,
			      lrx_next_t *nexts);
	uint16_t (*release)(void *ctx, struct rte_mbuf **pkts, uint16_t max);
	void *ctx;
	uint32_t ballast_lines;   /* 64-byte lines run per packet, 0 = none */
	uint32_t ballast_slot;    /* = stage index: distinct code per stage */
	/* what lrx_pipeline_poll_end asks of it: flush or emit; drop or
	 * consume; emit */
	bool at_poll_end, gives_up, emits;
	struct lrx_stage_stats stats;
	/* cold */
	const struct lrx_stage *desc;
	unsigned footprint_kb;
} __rte_cache_aligned;

struct engine_graph; /* engine_graph.c */

struct lrx_pipeline {
	enum lrx_engine_kind engine;
	enum lrx_stats_level stats_level;
	uint16_t prefetch;       /* packets ahead, 0 = off (prefetch.h) */
	bool plain;              /* stats off, no stage with ballast: the
				  * per-packet walk tests for neither */
	unsigned n_stages;
	unsigned hybrid_k;       /* stages run as bursts (hybrid) */
	uint16_t burst;
	int socket_id;
	unsigned lcore_id;
	uint64_t ballast_sum;    /* checksum of all ballast run (tests) */
	uint32_t release_room;   /* packets stages may still release this run */

	/* slot-ordered runs (burst, hybrid, graph) */
	uint32_t n_base;                 /* slots backed by base_pkts */
	uint32_t n_slots;                /* slots in use this run */
	struct rte_mbuf *const *base_pkts;

	struct engine_graph *graph;
	const struct lrx_pmu *pmu;       /* [pmu] stages, vector engines; NULL: off */
	struct lrx_trace *trace;         /* --trace; NULL: off (engine_trace.c) */
	bool trace_done;                 /* the stages' own entries are back */
	bool mark_drop_stage;            /* --capture-drops: stage of each drop */

	struct engine_stage stages[LRX_PIPELINE_MAX_STAGES];

	/* scratch arrays, carved from the allocation's tail by
	 * engine_scratch_layout (pipeline.c): each starts where the previous one's hot
	 * part (what a run of `burst` packets touches) ends, modulo 4 KiB, so
	 * at burst 64 they cover the L1d's 64 sets once instead of piling
	 * their first lines into the same few sets (as arrays of 4 KiB
	 * multiples laid end to end do) */
	lrx_next_t *nexts;                /* [LRX_BURST_MAX] */
	lrx_next_t *fate;                 /* [LRX_SINK_MAX] */
	struct rte_mbuf **slot_extra;     /* [LRX_SINK_MAX] */
	struct rte_mbuf **vec[2];         /* [LRX_BURST_MAX] each */
	uint16_t *vec_slot[2];            /* [LRX_BURST_MAX] each */
	struct rte_mbuf **released;       /* [LRX_BURST_MAX] */
	struct rte_mbuf **released_spare; /* [LRX_BURST_MAX], swapped with
					   * released by engine_vector_rebase */
	struct rte_mbuf **rx_pkts;        /* [LRX_BURST_MAX] */
	struct rte_mbuf **flushed;        /* [LRX_BURST_MAX] */
};

/* 0, 1, 2, ... : the slots of an input vector before any compaction
 * (filled by a constructor, read only afterwards). */
extern uint16_t engine_identity_slots[LRX_BURST_MAX];

/* ---- per-call helpers (stats taken here, never in stages) ------------- */

/* The counter a packet leaving with next adds to, as an index into the
 * stage's stats taken as uint64_t words (every field is one): a drop's is
 * its reason's, TX, REDIRECT and CONSUMED their own, CONTINUE a scratch
 * word (it did not leave), anything else delivered. Computed without a
 * branch: in a row-major loop the verdicts of consecutive packets are
 * unrelated, and a switch on them would mispredict at every change. */
#define ENGINE_STATS_WORD(field) \
	(offsetof(struct lrx_stage_stats, field) / sizeof(uint64_t))
static_assert(sizeof(struct lrx_stage_stats) % sizeof(uint64_t) == 0,
	      "lrx_stage_stats is made of uint64_t words");

static inline unsigned engine_exit_word(lrx_next_t next)
{
#define D_ ENGINE_STATS_WORD(delivered)
	static_assert(LRX_NEXT_CONTINUE == 0 && LRX_NEXT_DROP == 1 &&
			      LRX_NEXT_TX == 2 && LRX_NEXT_REDIRECT == 3 &&
			      LRX_NEXT_CONSUMED == 4 &&
			      LRX_NEXT_KIND_MASK == 15,
		      "the table below follows enum lrx_next_kind");
	static const uint16_t word[LRX_NEXT_KIND_MASK + 1] = {
		ENGINE_STATS_WORD(went_on_scratch),
		ENGINE_STATS_WORD(drops), /* + the reason */
		ENGINE_STATS_WORD(tx),
		ENGINE_STATS_WORD(redirected),
		ENGINE_STATS_WORD(consumed),
		D_, D_, D_, D_, D_, D_, D_, D_, D_, D_, D_};
#undef D_
	const uint32_t arg = lrx_next_arg(next);
	const uint32_t reason = arg < LRX_DROP_MAX
					? arg
					: (uint32_t)LRX_DROP_NOT_SPECIFIED;
	/* arithmetic, not a conditional: a compiler makes a branch of that */
	const uint32_t drop = -(uint32_t)(lrx_next_kind(next) == LRX_NEXT_DROP);
	return word[lrx_next_kind(next)] + (reason & drop);
}

/* For the row-major loops. */
static inline void engine_account_exit(struct engine_stage *st,
				       lrx_next_t next)
{
	((uint64_t *)&st->stats)[engine_exit_word(next)]++;
}

/* The same count for the per-packet walk, which has just branched on the
 * verdict: there the branches are predicted (the history holds the
 * stage's own decision) and cost fewer instructions than the table. The
 * engine equivalence tests compare the two through every counter. */
static inline void engine_account_exit_one(struct engine_stage *st,
					   lrx_next_t next)
{
	switch (lrx_next_kind(next)) {
	case LRX_NEXT_DROP: {
		uint32_t reason = lrx_next_arg(next);
		st->stats.drops[reason < LRX_DROP_MAX
					? reason
					: (uint32_t)LRX_DROP_NOT_SPECIFIED]++;
		break;
	}
	case LRX_NEXT_TX:
		st->stats.tx++;
		break;
	case LRX_NEXT_REDIRECT:
		st->stats.redirected++;
		break;
	case LRX_NEXT_CONSUMED:
		st->stats.consumed++;
		break;
	default:
		st->stats.delivered++;
		break;
	}
}

static inline void engine_ballast(struct lrx_pipeline *p,
				  const struct engine_stage *st, uint64_t count)
{
	if (st->ballast_lines != 0)
		p->ballast_sum = lrx_ballast_run(st->ballast_slot,
						 st->ballast_lines, count,
						 p->ballast_sum);
}

/* [pmu] stages: what the counters advanced by since `before` is the
 * stage's (VPP perfmon: one read pair around each node dispatch). */
static inline void engine_pmu_charge(const struct lrx_pmu *g,
				     struct engine_stage *st,
				     const uint64_t *before)
{
	uint64_t after[LRX_PMU_MAX_EVENTS];

	lrx_pmu_read(g, after);
	for (unsigned i = 0; i < g->n_open; i++) {
		unsigned e = g->open_event[i];
		st->stats.pmu[e] += after[e] - before[e];
	}
}

/* One process_burst call plus the stage's ballast for each packet; with
 * [pmu] stages, the counters read around it (the TSC read is inside the
 * pair, so cycles per stage agree with the PMU's). */
static inline void engine_call_burst(struct lrx_pipeline *p,
				     struct engine_stage *st,
				     struct rte_mbuf **pkts, uint16_t n,
				     lrx_next_t *nexts)
{
	if (p->stats_level == LRX_STATS_OFF) {
		st->process_burst(st->ctx, pkts, n, nexts);
		engine_ballast(p, st, n);
		return;
	}
	uint64_t before[LRX_PMU_MAX_EVENTS];
	if (unlikely(p->pmu != NULL))
		lrx_pmu_read(p->pmu, before);
	uint64_t start = p->stats_level == LRX_STATS_CYCLES ? rte_rdtsc() : 0;
	st->process_burst(st->ctx, pkts, n, nexts);
	engine_ballast(p, st, n);
	if (p->stats_level == LRX_STATS_CYCLES)
		st->stats.cycles += rte_rdtsc() - start;
	if (unlikely(p->pmu != NULL))
		engine_pmu_charge(p->pmu, st, before);
	st->stats.calls++;
	st->stats.packets += n;
}

/* A new slot for a packet released during a vector run. */
static inline uint16_t engine_new_slot(struct lrx_pipeline *p,
				       struct rte_mbuf *pkt)
{
	uint32_t slot = p->n_slots++;

	p->slot_extra[slot - p->n_base] = pkt;
	return (uint16_t)slot;
}

/* What stages may release during a run of n packets: the sink's room
 * beyond one entry per packet of the run (each packet leaves once). */
static inline uint32_t engine_release_room(const struct lrx_sink *sink,
					   uint32_t n)
{
	uint32_t used = sink->n + n;

	return used < LRX_SINK_MAX ? LRX_SINK_MAX - used : 0;
}

/* Starts a slot-ordered run over n packets (slot i = pkts[i]). */
static inline void engine_slots_begin(struct lrx_pipeline *p,
				      struct rte_mbuf *const *pkts, uint16_t n,
				      const struct lrx_sink *sink)
{
	p->base_pkts = pkts;
	p->n_base = n;
	p->n_slots = n;
	p->release_room = engine_release_room(sink, n);
}

/* Every slot of the run was consumed by one stage call (the vector held
 * them all: nothing left before), which puts nothing into the sink, and
 * the stage released `released` packets into p->released: the run starts
 * afresh from those, as slots 0..released-1 backed by the release buffer
 * (swapped with its spare, so that a later release does not overwrite
 * them). The sink gets what it would have got; the consumed slots' fates
 * and their pass in engine_slots_emit are saved. As napi_gro_complete
 * hands gro_normal_list a fresh list. Returns the new base. */
static inline struct rte_mbuf **engine_slots_rebase(struct lrx_pipeline *p,
						    uint16_t released)
{
	struct rte_mbuf **base = p->released;

	p->released = p->released_spare;
	p->released_spare = base;
	p->base_pkts = base;
	p->n_base = released;
	p->n_slots = released;
	return base;
}

/* How many packets a stage may release now (sink capacity bound). */
static inline uint16_t engine_release_max(const struct lrx_pipeline *p,
					  uint16_t want)
{
	return (uint16_t)RTE_MIN((uint32_t)want, p->release_room);
}

/* Puts the packets of a slot-ordered run into the sink, in slot order. */
void engine_slots_emit(struct lrx_pipeline *p, struct lrx_sink *sink);

/* ---- engines ----------------------------------------------------------
 * run(): packets enter at stage `first` (0 for received packets, s + 1 for
 * packets stage s released at a flush). */
void engine_packet_run(struct lrx_pipeline *p, unsigned first,
		       struct rte_mbuf **pkts, uint16_t n,
		       struct lrx_sink *sink);
/* Whether the static engine calls this stage's per-packet entry (and its
 * release, if it has one) directly. */
bool engine_static_direct(const struct lrx_stage *stage);
void engine_static_run(struct lrx_pipeline *p, unsigned first,
		       struct rte_mbuf **pkts, uint16_t n,
		       struct lrx_sink *sink);
/* burst through stages [first, burst_until), then per packet (hybrid) */
void engine_vector_run(struct lrx_pipeline *p, unsigned first,
		       unsigned burst_until, struct rte_mbuf **pkts,
		       uint16_t n, struct lrx_sink *sink);
void engine_burst_run(struct lrx_pipeline *p, unsigned first,
		      struct rte_mbuf **pkts, uint16_t n,
		      struct lrx_sink *sink);
void engine_hybrid_run(struct lrx_pipeline *p, unsigned first,
		       struct rte_mbuf **pkts, uint16_t n,
		       struct lrx_sink *sink);
/* Per packet from stage `first`, fate recorded in `slot` (hybrid tail). */
void engine_packet_tail(struct lrx_pipeline *p, struct rte_mbuf **pkts,
			const uint16_t *slots, uint16_t n, unsigned first);

int engine_graph_create(struct lrx_pipeline *p, char *err, size_t err_len);
void engine_graph_destroy(struct lrx_pipeline *p);
void engine_graph_run(struct lrx_pipeline *p, unsigned first,
		      struct rte_mbuf **pkts, uint16_t n,
		      struct lrx_sink *sink);
uint16_t engine_graph_poll(struct lrx_pipeline *p, uint16_t port,
			   uint16_t queue, uint16_t budget,
			   struct lrx_sink *sink);

/* ballast_runtime.c */
void engine_ballast_setup(struct engine_stage *st, unsigned index, unsigned footprint_kb);

/* Checksum of the ballast this pipeline ran (tests: proves it executes). */
uint64_t lrx_pipeline_ballast_checksum(const struct lrx_pipeline *p);

#endif
