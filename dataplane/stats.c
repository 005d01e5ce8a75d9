/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include <rte_cycles.h>

#include "stats.h"

void lrx_totals_read(const struct lrx_app *app, struct lrx_totals *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned i = 0; i < app->n_workers; i++) {
		const struct lrx_worker *w = app->workers[i];
		t->rx += w->rx_packets;
		t->tx += w->counters.tx;
		t->tx_failed += w->counters.tx_failed;
		t->delivered += w->counters.delivered;
		t->dropped += w->counters.dropped;
		for (unsigned r = 0; r < LRX_DROP_MAX; r++)
			t->drops[r] += w->counters.drops[r];
		t->polls += w->polls_total;
		t->empty_polls += w->empty_polls;
		t->busy_cycles += w->busy_cycles;
	}
	/* what the pipelines hold is rx not yet accounted elsewhere */
	uint64_t out = t->tx + t->delivered + t->dropped;
	t->held = t->rx > out ? t->rx - out : 0;
}

void lrx_stage_totals(const struct lrx_app *app, unsigned stage,
		      struct lrx_stage_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < app->n_workers; i++) {
		const struct lrx_worker *w = app->workers[i];
		if (!w->pipeline || stage >= lrx_pipeline_stage_count(w->pipeline))
			continue;
		struct lrx_stage_stats s;
		lrx_pipeline_stage_stats(w->pipeline, stage, &s);
		out->calls += s.calls;
		out->packets += s.packets;
		out->cycles += s.cycles;
		out->tx += s.tx;
		out->redirected += s.redirected;
		out->consumed += s.consumed;
		out->delivered += s.delivered;
		for (unsigned e = 0; e < LRX_PMU_MAX_EVENTS; e++)
			out->pmu[e] += s.pmu[e];
		for (unsigned r = 0; r < LRX_DROP_MAX; r++)
			out->drops[r] += s.drops[r];
	}
}

bool lrx_latency_totals(const struct lrx_app *app, struct lrx_latency *total)
{
	memset(total, 0, sizeof(*total));
	if (!app->conf.latency)
		return false;
	for (unsigned i = 0; i < app->n_workers; i++) {
		const struct lrx_latency *lat = app->workers[i]->latency;
		if (!lat)
			continue;
		lrx_latency_hist_merge(&total->hist, &lat->hist);
		total->at_exit += lat->at_exit;
		for (unsigned p = 0; p < RTE_DIM(total->not_tsc); p++) {
			total->not_tsc[p] += lat->not_tsc[p];
			total->port_tsc[p] |= lat->port_tsc[p];
		}
	}
	return true;
}

double lrx_run_seconds(const struct lrx_app *app)
{
	if (!app->start_tsc)
		return 0;
	uint64_t end = app->end_tsc ? app->end_tsc : rte_rdtsc();
	return (double)(end - app->start_tsc) / (double)rte_get_tsc_hz();
}
