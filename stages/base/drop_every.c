/* SPDX-License-Identifier: BSD-3-Clause
 * `drop-every`: drops every k-th packet the stage sees (TEST_DROP), counted
 * in arrival order, so its verdicts depend on the order packets reach it:
 * the engine equivalence test relies on that to catch reordering.
 */
#include "base_stages.h"

struct drop_every_ctx {
	uint32_t k;
	uint32_t seen; /* packets since the last drop */
	uint64_t dropped; /* counter "dropped" */
};

static inline lrx_next_t drop_every_core(struct drop_every_ctx *dc,
					  struct rte_mbuf *pkt)
{
	(void)pkt;
	bool drop = ++dc->seen == dc->k;

	dc->seen = drop ? 0 : dc->seen;
	dc->dropped += drop;
	return drop ? lrx_next_drop(LRX_DROP_TEST_DROP) : LRX_NEXT_CONTINUE_V;
}

LRX_STAGE_ENTRIES(drop_every, drop_every_core)

struct drop_every_conf {
	uint32_t k;
};

static int drop_every_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct drop_every_conf *conf = init->conf;
	((struct drop_every_ctx *)ctx)->k = conf->k;
	return 0;
}

static const struct lrx_value_key drop_every_keys[] = {
	LRX_KEY_UINT(struct drop_every_conf, k, "k", "2", 1, UINT32_MAX,
		     "drop every k-th packet"),
	{ .name = NULL },
};

static const struct lrx_stage_counter drop_every_counters[] = {
	LRX_STAGE_COUNTER(struct drop_every_ctx, "dropped", dropped),
	{ .name = NULL },
};

LRX_STAGE_DEFINE(lrx_stage_drop_every, struct drop_every_ctx, struct drop_every_conf,
		 drop_every_keys, drop_every_counters,
	.name = "drop-every",
	.summary = "test: drops every k-th packet (key k) as TEST_DROP",
	.init = drop_every_init,
	.process_one = lrx_drop_every_process_one,
	.process_burst = lrx_drop_every_process_burst,
)
