/* SPDX-License-Identifier: BSD-3-Clause
 * The report model's own operations: allocation, the difference of two
 * reports (a period), queries. It is filled by the app (report_fill.c). */
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "stats.h"

struct lrx_report *lrx_report_alloc(void)
{
	return calloc(1, sizeof(struct lrx_report));
}

void lrx_report_maps_free(struct lrx_report *r)
{
	for (unsigned i = 0; i < r->n_maps; i++)
		free(r->maps[i].data);
	free(r->maps);
	r->maps = NULL;
	r->n_maps = 0;
}

void lrx_report_free(struct lrx_report *r)
{
	if (r)
		lrx_report_maps_free(r);
	free(r);
}

/* ---- periods --------------------------------------------------------------------- */

static void totals_sub(struct lrx_totals *t, const struct lrx_totals *then)
{
	t->rx -= then->rx;
	t->tx -= then->tx;
	t->tx_failed -= then->tx_failed;
	t->delivered -= then->delivered;
	t->dropped -= then->dropped;
	t->merged -= then->merged;
	t->made -= then->made;
	for (unsigned i = 0; i < LRX_DROP_MAX; i++)
		t->drops[i] -= then->drops[i];
	t->polls -= then->polls;
	t->empty_polls -= then->empty_polls;
	t->busy_cycles -= then->busy_cycles;
	t->tx_clean_calls -= then->tx_clean_calls;
	t->tx_cleaned -= then->tx_cleaned;
	t->tx_clean_busy -= then->tx_clean_busy;
	/* held and held_now are what stages hold now: r's */
}

static void stage_sub(struct lrx_report_stage *s, const struct lrx_report_stage *then)
{
	struct lrx_stage_stats *a = &s->stats;
	const struct lrx_stage_stats *b = &then->stats;
	a->calls -= b->calls;
	a->packets -= b->packets;
	a->cycles -= b->cycles;
	a->tx -= b->tx;
	a->redirected -= b->redirected;
	a->consumed -= b->consumed;
	a->delivered -= b->delivered;
	for (unsigned e = 0; e < LRX_PMU_MAX_EVENTS; e++)
		a->pmu[e] -= b->pmu[e];
	for (unsigned i = 0; i < LRX_DROP_MAX; i++)
		a->drops[i] -= b->drops[i];
	s->dropped -= then->dropped;
	/* the counters come in one order from a stage; match by name all the
	 * same, a counter then did not have yet counted from 0; a gauge is
	 * a level, not a count: the period keeps r's */
	for (unsigned c = 0; c < s->n_counters; c++) {
		uint64_t old;
		if (s->counters[c].role != LRX_COUNTER_GAUGE &&
		    lrx_report_stage_counter(then, s->counters[c].name, &old) &&
		    old <= s->counters[c].value)
			s->counters[c].value -= old;
	}
}

void lrx_report_sub(struct lrx_report *r, const struct lrx_report *then)
{
	totals_sub(&r->totals, &then->totals);
	r->duration_s -= then->duration_s;
	r->measured_packets -= RTE_MIN(r->measured_packets, then->measured_packets);
	/* queues, lcores and stages are in the same order in every report of
	 * a run (lcore then poll order; pipeline order) */
	for (unsigned q = 0; q < r->n_queues && q < then->n_queues; q++) {
		r->queues[q].rx_packets -= then->queues[q].rx_packets;
		r->queues[q].polls -= then->queues[q].polls;
	}
	for (unsigned w = 0; w < r->n_lcores && w < then->n_lcores; w++) {
		struct lrx_report_lcore *l = &r->lcores[w];
		const struct lrx_report_lcore *o = &then->lcores[w];
		l->polls -= o->polls;
		l->empty_polls -= o->empty_polls;
		l->packets -= o->packets;
		l->busy_cycles -= o->busy_cycles;
		l->delivered -= o->delivered;
		l->dropped -= o->dropped;
		l->tx -= o->tx;
		l->merged -= o->merged; /* held_now is a gauge */
		l->made -= o->made;
		l->measured_packets -= RTE_MIN(l->measured_packets, o->measured_packets);
	}
	for (unsigned s = 0; s < r->n_stages && s < then->n_stages; s++)
		stage_sub(&r->stages[s], &then->stages[s]);
	for (unsigned i = 0; i < r->n_ports && i < then->n_ports; i++) {
		struct rte_eth_stats *st = &r->ports[i].stats;
		const struct rte_eth_stats *o = &then->ports[i].stats;
		st->ipackets -= RTE_MIN(st->ipackets, o->ipackets);
		st->opackets -= RTE_MIN(st->opackets, o->opackets);
		st->ibytes -= RTE_MIN(st->ibytes, o->ibytes);
		st->obytes -= RTE_MIN(st->obytes, o->obytes);
		st->imissed -= RTE_MIN(st->imissed, o->imissed);
		st->ierrors -= RTE_MIN(st->ierrors, o->ierrors);
		st->oerrors -= RTE_MIN(st->oerrors, o->oerrors);
		st->rx_nombuf -= RTE_MIN(st->rx_nombuf, o->rx_nombuf);
		for (unsigned c = 0; c < r->ports[i].n_dev_counters &&
				     c < then->ports[i].n_dev_counters; c++)
			r->ports[i].dev_counters[c].value -=
				RTE_MIN(r->ports[i].dev_counters[c].value,
					then->ports[i].dev_counters[c].value);
	}
}

void lrx_cfgfile_foreach(const struct lrx_ini *cfg,
			 void (*fn)(void *arg, const char *section,
				    const char *key, const char *value),
			 void *arg)
{
	for (unsigned s = 0; cfg && s < cfg->n; s++)
		for (unsigned e = 0; e < cfg->sections[s].n; e++)
			fn(arg, cfg->sections[s].name, cfg->sections[s].entries[e].key,
			   cfg->sections[s].entries[e].value);
}

/* ---- queries ------------------------------------------------------------------- */

bool lrx_report_stage_counter(const struct lrx_report_stage *s, const char *name,
			      uint64_t *value)
{
	for (unsigned c = 0; c < s->n_counters; c++)
		if (strcmp(s->counters[c].name, name) == 0) {
			*value = s->counters[c].value;
			return true;
		}
	return false;
}

bool lrx_report_stage_role(const struct lrx_report_stage *s, enum lrx_counter_role role,
			   uint64_t *sum)
{
	bool found = false;
	*sum = 0;
	for (unsigned c = 0; c < s->n_counters; c++)
		if (s->counters[c].role == role) {
			*sum += s->counters[c].value;
			found = true;
		}
	return found;
}

bool lrx_report_stage_cost(const struct lrx_report *r, const struct lrx_report_stage *s,
			   double *cycles_per_packet, double *ns_per_packet)
{
	if (r->stats_level != LRX_STATS_CYCLES || !s->stats.packets || !r->tsc_hz)
		return false;
	*cycles_per_packet = (double)s->stats.cycles / (double)s->stats.packets;
	*ns_per_packet = *cycles_per_packet * 1e9 / (double)r->tsc_hz;
	return true;
}
