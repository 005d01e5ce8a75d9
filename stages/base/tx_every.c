/* SPDX-License-Identifier: BSD-3-Clause
 * `tx-every`: sends every k-th packet the stage sees out of `port` (as an
 * XDP_TX / XDP_REDIRECT verdict would), counted in arrival order.
 */
#include "base_stages.h"

struct tx_every_ctx {
	uint32_t k;
	uint32_t seen;
	uint16_t port;
	uint64_t sent; /* counter "sent" */
};

static inline lrx_next_t tx_every_core(struct tx_every_ctx *tc)
{
	bool tx = ++tc->seen == tc->k;

	tc->seen = tx ? 0 : tc->seen;
	tc->sent += tx;
	return tx ? lrx_next_tx(tc->port) : LRX_NEXT_CONTINUE_V;
}

lrx_next_t lrx_tx_every_process_one(void *ctx, struct rte_mbuf *pkt)
{
	(void)pkt;
	return tx_every_core(ctx);
}

void lrx_tx_every_process_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n,
				lrx_next_t *nexts)
{
	(void)pkts;
	for (uint16_t i = 0; i < n; i++)
		nexts[i] = tx_every_core(ctx);
}

struct tx_every_conf {
	uint32_t k;
	uint16_t port;
};

static int tx_every_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct tx_every_conf *conf = init->conf;
	struct tx_every_ctx *tc = ctx;

	tc->k = conf->k;
	tc->port = conf->port;
	return 0;
}

static const struct lrx_value_key tx_every_keys[] = {
	LRX_KEY_UINT(struct tx_every_conf, k, "k", "3", 1, UINT32_MAX,
		     "send every k-th packet"),
	LRX_KEY_UINT(struct tx_every_conf, port, "port", "0", 0, UINT16_MAX - 1,
		     "port id to send to (a port that does not exist is a TC_EGRESS drop at the sink)"),
	{ .name = NULL },
};

static const struct lrx_stage_counter tx_every_counters[] = {
	{ .name = "sent", .offset = offsetof(struct tx_every_ctx, sent) },
	{ .name = NULL },
};

const struct lrx_stage lrx_stage_tx_every = {
	.name = "tx-every",
	.summary = "test: sends every k-th packet (key k) to port (key port)",
	.ctx_size = sizeof(struct tx_every_ctx),
	.keys = tx_every_keys,
	.conf_size = sizeof(struct tx_every_conf),
	.counters = tx_every_counters,
	.init = tx_every_init,
	.process_one = lrx_tx_every_process_one,
	.process_burst = lrx_tx_every_process_burst,
};
LRX_STAGE_REGISTER(lrx_stage_tx_every)
