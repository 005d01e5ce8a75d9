/* SPDX-License-Identifier: BSD-3-Clause
 * The `burst` engine: for each stage, one process_burst call over the whole
 * vector (row-major, as netif_receive_skb_list / ip_list_rcv run one layer
 * over a list). Packets that leave at a stage have their fate recorded by
 * slot; the survivors are compacted into the next vector, and a vector that
 * all continues is passed on as it is (the rte_graph "home run"). The sink
 * is filled in slot order at the end, so it matches the packet engine.
 */
#include <string.h>

#include "engine_internal.h"

_Static_assert(LRX_NEXT_CONTINUE_V == 0, "engine_vector_run ORs verdicts");

uint16_t engine_identity_slots[LRX_BURST_MAX];

RTE_INIT(engine_identity_slots_init)
{
	for (uint16_t i = 0; i < LRX_BURST_MAX; i++)
		engine_identity_slots[i] = i;
}

/* One range of slots into the sink. A CONSUMED slot is written and not
 * counted (branch-free); a range without one (the common case: nothing
 * held, or the held packets' slots dropped by engine_vector_rebase) is
 * two copies, found by one OR the compiler vectorises. */
static __rte_always_inline uint32_t
engine_slots_emit_range(struct lrx_sink *sink, uint32_t n, struct rte_mbuf *const *pkts,
			const lrx_next_t *fate, uint32_t count)
{
	uint32_t consumed = 0;

	for (uint32_t i = 0; i < count; i++)
		consumed |= fate[i] == LRX_NEXT_CONSUMED_V;
	if (likely(consumed == 0)) {
		if (count != 0) { /* an empty range may have no array (memcpy's NULL) */
			memcpy(&sink->pkts[n], pkts, count * sizeof(*pkts));
			memcpy(&sink->nexts[n], fate, count * sizeof(*fate));
		}
		return n + count;
	}
	for (uint32_t i = 0; i < count; i++) {
		lrx_next_t next = fate[i];
		sink->pkts[n] = pkts[i];
		sink->nexts[n] = next;
		n += next != LRX_NEXT_CONSUMED_V;
	}
	return n;
}

void engine_slots_emit(struct lrx_pipeline *p, struct lrx_sink *sink)
{
	uint32_t n = engine_slots_emit_range(sink, sink->n, p->base_pkts, p->fate, p->n_base);

	sink->n = engine_slots_emit_range(sink, n, p->slot_extra, p->fate + p->n_base,
					  p->n_slots - p->n_base);
}

/* The last stage: nothing to compact, each packet's fate is its verdict
 * (CONTINUE = delivered). */
static __rte_always_inline void
engine_vector_last(struct lrx_pipeline *p, struct engine_stage *st, const lrx_next_t *nexts,
		   const uint16_t *slots, uint16_t count, bool stats)
{
	/* CONTINUE (0) becomes DELIVER, without a branch */
#define ENGINE_FATE(next) \
	((next) | (LRX_NEXT_DELIVER_V & -(lrx_next_t)((next) == LRX_NEXT_CONTINUE_V)))
	if (slots == engine_identity_slots && !stats) {
		/* slot k is k (the run's input, or what a rebase left):
		 * contiguous, so the compiler vectorises it */
		for (uint16_t k = 0; k < count; k++)
			p->fate[k] = ENGINE_FATE(nexts[k]);
		return;
	}
	for (uint16_t k = 0; k < count; k++) {
		lrx_next_t fate = ENGINE_FATE(nexts[k]);

		p->fate[slots[k]] = fate;
		if (stats)
			engine_account_exit(st, fate);
	}
#undef ENGINE_FATE
}

/* The stage consumed the whole vector, and the vector holds every slot
 * of the run: the run goes on from the released packets alone
 * (engine_slots_rebase), with identity slots; the compaction is saved. */
static __rte_always_inline uint16_t
engine_vector_rebase(struct lrx_pipeline *p, struct engine_stage *st, struct rte_mbuf ***vec,
		     const uint16_t **slots, int *own, uint16_t count, uint16_t released,
		     bool stats)
{
	if (stats)
		st->stats.consumed += count;
	*vec = engine_slots_rebase(p, released);
	*slots = engine_identity_slots;
	*own = -1; /* the base: never compacted in place */
	return released;
}

/* The vector after stage st: the released packets first (stage.h), then
 * the survivors; each leaver's fate written. Compacts in place when the
 * vector is ours (*own >= 0) and nothing is prepended, else into the
 * other buffer. Returns the new count; *vec, *slots, *own follow. */
static __rte_always_inline uint16_t
engine_vector_compact(struct lrx_pipeline *p, struct engine_stage *st, const lrx_next_t *nexts,
		      struct rte_mbuf ***vec, const uint16_t **slots, int *own, uint16_t count,
		      uint16_t released, bool stats)
{
	struct rte_mbuf **const src = *vec;
	const uint16_t *const src_slots = *slots;
	uint16_t i = 0, w = 0;
	while (i < count && nexts[i] == LRX_NEXT_CONTINUE_V)
		i++;
	int dst_buf = *own < 0 ? 0 : (released != 0 ? *own ^ 1 : *own);
	struct rte_mbuf **dst = p->vec[dst_buf];
	uint16_t *dslots = p->vec_slot[dst_buf];

	for (uint16_t r = 0; r < released; r++) {
		dst[w] = p->released[r];
		dslots[w++] = engine_new_slot(p, p->released[r]);
	}
	if (dst != src || w != 0) {
		memmove(dst + w, src, i * sizeof(*src));
		memmove(dslots + w, src_slots, i * sizeof(*src_slots));
	}
	w += i;
	/* branch-free (consecutive verdicts are unrelated): every packet is
	 * written at w and w moves past the survivors; every fate is
	 * written (a survivor's again when it leaves) and every packet
	 * counted (a survivor in a scratch word) */
	for (; i < count; i++) {
		const lrx_next_t next = nexts[i];
		const uint16_t slot = src_slots[i];
		dst[w] = src[i];
		dslots[w] = slot;
		w += next == LRX_NEXT_CONTINUE_V;
		p->fate[slot] = next;
		if (stats)
			engine_account_exit(st, next);
	}
	*vec = dst;
	*slots = dslots;
	*own = dst_buf;
	return w;
}

void engine_vector_run(struct lrx_pipeline *p, unsigned first,
		       unsigned burst_until, struct rte_mbuf **pkts,
		       uint16_t n, struct lrx_sink *sink)
{
	struct rte_mbuf **vec = pkts;
	const uint16_t *slots = engine_identity_slots;
	int own = -1;          /* which p->vec holds vec, -1: not ours */
	uint16_t count = n;
	lrx_next_t *nexts = p->nexts;
	const bool stats = p->stats_level != LRX_STATS_OFF;
	unsigned s;

	engine_slots_begin(p, pkts, n, sink);
	for (s = first; s < burst_until && count != 0; s++) {
		struct engine_stage *st = &p->stages[s];
		uint16_t released = 0;

		engine_call_burst(p, st, vec, count, nexts);
		if (unlikely(st->release != NULL)) {
			uint16_t max = engine_release_max(
				p, (uint16_t)(LRX_BURST_MAX - count));
			released = max ? st->release(st->ctx, p->released, max)
				       : 0;
			p->release_room -= released;
		}
		if (s + 1 == p->n_stages && released == 0) {
			engine_vector_last(p, st, nexts, slots, count, stats);
			count = 0;
			s++;
			break;
		}
		/* all continue: pass the vector on (CONTINUE is 0, so one OR
		 * over the verdicts, which the compiler vectorises) */
		lrx_next_t any = 0;
		for (uint16_t k = 0; k < count; k++)
			any |= nexts[k];
		if (likely(any == LRX_NEXT_CONTINUE_V && released == 0))
			continue;
		if (any == LRX_NEXT_CONSUMED_V && count == p->n_slots) {
			lrx_next_t all = LRX_NEXT_CONSUMED_V;
			for (uint16_t k = 0; k < count; k++)
				all &= nexts[k];
			if (all == LRX_NEXT_CONSUMED_V) {
				count = engine_vector_rebase(p, st, &vec, &slots, &own, count,
							     released, stats);
				continue;
			}
		}
		count = engine_vector_compact(p, st, nexts, &vec, &slots, &own, count, released,
					      stats);
	}
	if (count != 0) {
		if (s < p->n_stages) {
			/* hybrid: the rest per packet, in vector order */
			engine_packet_tail(p, vec, slots, count, s);
		} else {
			for (uint16_t i = 0; i < count; i++)
				p->fate[slots[i]] = LRX_NEXT_DELIVER_V;
			if (stats && p->n_stages != 0)
				p->stages[p->n_stages - 1].stats.delivered += count;
		}
	}
	engine_slots_emit(p, sink);
}

void engine_burst_run(struct lrx_pipeline *p, unsigned first,
		      struct rte_mbuf **pkts, uint16_t n,
		      struct lrx_sink *sink)
{
	engine_vector_run(p, first, p->n_stages, pkts, n, sink);
}
