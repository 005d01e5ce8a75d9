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

static inline lrx_next_t tx_every_core(struct tx_every_ctx *tc, struct rte_mbuf *pkt)
{
	(void)pkt;
	bool tx = ++tc->seen == tc->k;

	tc->seen = tx ? 0 : tc->seen;
	tc->sent += tx;
	return tx ? lrx_next_tx(tc->port) : LRX_NEXT_CONTINUE_V;
}

LRX_STAGE_ENTRIES(tx_every, tx_every_core)

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
	LRX_STAGE_COUNTER(struct tx_every_ctx, "sent", sent),
	{ .name = NULL },
};

LRX_STAGE_DEFINE(lrx_stage_tx_every, struct tx_every_ctx, struct tx_every_conf,
		 tx_every_keys, tx_every_counters,
	.name = "tx-every",
	.summary = "test: sends every k-th packet (key k) to port (key port)",
	.init = tx_every_init,
	.process_one = lrx_tx_every_process_one,
	.process_burst = lrx_tx_every_process_burst,
)
