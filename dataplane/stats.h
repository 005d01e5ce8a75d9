/* SPDX-License-Identifier: BSD-3-Clause
 * Totals over workers and ports, for the periodic line, the summary and
 * telemetry (all read the same numbers). */
#ifndef LISTRX_STATS_H
#define LISTRX_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "app.h"

struct lrx_totals {
	uint64_t rx, tx, tx_failed, delivered, dropped, held;
	uint64_t drops[LRX_DROP_MAX];
	uint64_t polls, empty_polls, busy_cycles;
};

void lrx_totals_read(const struct lrx_app *app, struct lrx_totals *t);

/* Per stage summed over workers (stage i of every worker's pipeline). */
void lrx_stage_totals(const struct lrx_app *app, unsigned stage,
		      struct lrx_stage_stats *out);

/* The lcores' latency recorders merged into total (histogram, not_tsc,
 * port_tsc, at_exit). Returns false when --latency is off. */
bool lrx_latency_totals(const struct lrx_app *app, struct lrx_latency *total);

/* Seconds since the run started (to its end once ended). */
double lrx_run_seconds(const struct lrx_app *app);

#endif
