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

static inline lrx_next_t drop_every_core(struct drop_every_ctx *dc)
{
	bool drop = ++dc->seen == dc->k;

	dc->seen = drop ? 0 : dc->seen;
	dc->dropped += drop;
	return drop ? lrx_next_drop(LRX_DROP_TEST_DROP) : LRX_NEXT_CONTINUE_V;
}

lrx_next_t lrx_drop_every_process_one(void *ctx, struct rte_mbuf *pkt)
{
	(void)pkt;
	return drop_every_core(ctx);
}

void lrx_drop_every_process_burst(void *ctx, struct rte_mbuf **pkts,
				  uint16_t n, lrx_next_t *nexts)
{
	(void)pkts;
	for (uint16_t i = 0; i < n; i++)
		nexts[i] = drop_every_core(ctx);
}

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
	{ .name = "dropped", .offset = offsetof(struct drop_every_ctx, dropped) },
	{ .name = NULL },
};

const struct lrx_stage lrx_stage_drop_every = {
	.name = "drop-every",
	.summary = "test: drops every k-th packet (key k) as TEST_DROP",
	.ctx_size = sizeof(struct drop_every_ctx),
	.keys = drop_every_keys,
	.conf_size = sizeof(struct drop_every_conf),
	.counters = drop_every_counters,
	.init = drop_every_init,
	.process_one = lrx_drop_every_process_one,
	.process_burst = lrx_drop_every_process_burst,
};
LRX_STAGE_REGISTER(lrx_stage_drop_every)
