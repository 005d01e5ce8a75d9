/* SPDX-License-Identifier: BSD-3-Clause
 * The base stages: `null` and `touch` (tests and baselines) and the test
 * stages `drop-every`, `tx-every` and `hold` that the engine equivalence
 * tests compose. Their entry points are exported so that the static engine
 * can call them directly (no indirect call): stages/static_entries.h.
 */
#ifndef LISTRX_BASE_STAGES_H
#define LISTRX_BASE_STAGES_H

#include "stage.h"

extern const struct lrx_stage lrx_stage_null;
extern const struct lrx_stage lrx_stage_touch;
extern const struct lrx_stage lrx_stage_drop_every;
extern const struct lrx_stage lrx_stage_tx_every;
extern const struct lrx_stage lrx_stage_hold;

lrx_next_t lrx_null_process_one(void *ctx, struct rte_mbuf *pkt);
void lrx_null_process_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n,
			    lrx_next_t *nexts);
lrx_next_t lrx_touch_process_one(void *ctx, struct rte_mbuf *pkt);
void lrx_touch_process_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n,
			     lrx_next_t *nexts);
lrx_next_t lrx_drop_every_process_one(void *ctx, struct rte_mbuf *pkt);
void lrx_drop_every_process_burst(void *ctx, struct rte_mbuf **pkts,
				  uint16_t n, lrx_next_t *nexts);
lrx_next_t lrx_tx_every_process_one(void *ctx, struct rte_mbuf *pkt);
void lrx_tx_every_process_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n,
				lrx_next_t *nexts);
lrx_next_t lrx_hold_process_one(void *ctx, struct rte_mbuf *pkt);
void lrx_hold_process_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n,
			    lrx_next_t *nexts);
uint16_t lrx_hold_release(void *ctx, struct rte_mbuf **pkts, uint16_t max);

#endif
