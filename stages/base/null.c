/* SPDX-License-Identifier: BSD-3-Clause
 * `null`: every packet continues. The baseline that measures the engine
 * alone (dispatch, iteration, sink).
 */
#include "base_stages.h"

static inline lrx_next_t null_core(void *ctx, struct rte_mbuf *pkt)
{
	(void)ctx;
	(void)pkt;
	return LRX_NEXT_CONTINUE_V;
}

LRX_STAGE_ENTRIES(null, null_core)

const struct lrx_stage lrx_stage_null = {
	.name = "null",
	.summary = "every packet continues (engine baseline)",
	.ctx_size = 0,
	.process_one = lrx_null_process_one,
	.process_burst = lrx_null_process_burst,
};
LRX_STAGE_REGISTER(lrx_stage_null)
