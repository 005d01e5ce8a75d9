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

LRX_STAGE_ENTRIES_DECLARE(null)
LRX_STAGE_ENTRIES_DECLARE(touch)
LRX_STAGE_ENTRIES_DECLARE(drop_every)
LRX_STAGE_ENTRIES_DECLARE(tx_every)
LRX_STAGE_ENTRIES_DECLARE(hold)
uint16_t lrx_hold_release(void *ctx, struct rte_mbuf **pkts, uint16_t max);

#endif
