/* SPDX-License-Identifier: BSD-3-Clause
 * `hold`: keeps every packet it sees (CONSUMED) and gives them all back, in
 * arrival order, at the end-of-poll flush, as GRO keeps segments until
 * napi_gro_flush. Exercises the engines' flush/release protocol
 * (stages/stage.h). When full, a packet continues instead of being held.
 * With release=immediate every packet is released right after the call
 * that consumed it, as GRO hands non-mergeable packets to gro_normal_list:
 * the engines' mid-call release path.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>

#include "base_stages.h"

/* A poll holds at most its burst plus what earlier holding stages gave
 * back at the same flush; four bursts is the sink's bound too. */
#define HOLD_CAPACITY (4 * LRX_BURST_MAX)

struct hold_ctx {
	uint32_t head;        /* next to release */
	uint32_t tail;        /* next free */
	uint32_t releasable;  /* release() returns up to here (set by flush) */
	uint64_t held_total;  /* counter "held" */
	uint64_t passed_full; /* counter "passed_full": not held, ring full */
	bool immediate;       /* release=immediate */
	struct rte_mbuf *pkts[HOLD_CAPACITY];
};

static inline lrx_next_t hold_core(struct hold_ctx *hc, struct rte_mbuf *pkt)
{
	if (unlikely(hc->tail == HOLD_CAPACITY)) {
		hc->passed_full++;
		return LRX_NEXT_CONTINUE_V;
	}
	hc->pkts[hc->tail++] = pkt;
	hc->held_total++;
	hc->releasable = hc->immediate ? hc->tail : hc->releasable;
	return LRX_NEXT_CONSUMED_V;
}

LRX_STAGE_ENTRIES(hold, hold_core)

static void hold_flush(void *ctx, bool budget_used)
{
	struct hold_ctx *hc = ctx;

	/* unlike napi_gro_flush(napi, flush_old) everything goes: the test
	 * stage has no notion of age */
	(void)budget_used;
	hc->releasable = hc->tail;
}

uint16_t lrx_hold_release(void *ctx, struct rte_mbuf **pkts, uint16_t max)
{
	struct hold_ctx *hc = ctx;
	uint16_t n = 0;

	while (hc->head < hc->releasable && n < max)
		pkts[n++] = hc->pkts[hc->head++];
	if (hc->head == hc->tail) {
		hc->head = 0;
		hc->tail = 0;
		hc->releasable = 0;
	}
	return n;
}

static uint32_t hold_held(const void *ctx)
{
	const struct hold_ctx *hc = ctx;

	return hc->tail - hc->head;
}

static void hold_fini(void *ctx)
{
	struct hold_ctx *hc = ctx;

	/* the engines drain before destroying; this only guards leaks */
	for (uint32_t i = hc->head; i < hc->tail; i++)
		rte_pktmbuf_free(hc->pkts[i]);
	hc->head = hc->tail = hc->releasable = 0;
}

struct hold_conf {
	unsigned release; /* hold_releases[] */
};

static int hold_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct hold_conf *conf = init->conf;
	((struct hold_ctx *)ctx)->immediate = conf->release == 1;
	return 0;
}

static const char *const hold_releases[] = {"flush", "immediate", NULL};
static const struct lrx_value_key hold_keys[] = {
	LRX_KEY_CHOICE(struct hold_conf, release, "release", "flush", hold_releases,
		       "flush: give packets back at the end-of-poll flush; immediate: right after the call that took them"),
	{ .name = NULL },
};

static const struct lrx_stage_counter hold_counters[] = {
	LRX_STAGE_COUNTER(struct hold_ctx, "held", held_total),
	LRX_STAGE_COUNTER(struct hold_ctx, "passed_full", passed_full),
	{ .name = NULL },
};

LRX_STAGE_DEFINE(lrx_stage_hold, struct hold_ctx, struct hold_conf, hold_keys, hold_counters,
	.name = "hold",
	.summary = "test: holds every packet until the end-of-poll flush (key release)",
	.init = hold_init,
	.fini = hold_fini,
	.process_one = lrx_hold_process_one,
	.process_burst = lrx_hold_process_burst,
	.flush = hold_flush,
	.release = lrx_hold_release,
	.held = hold_held,
)
