/* SPDX-License-Identifier: BSD-3-Clause
 * Fills the report model (stats.h) from the app: the one place reporting
 * reads the workers, ports and pipelines (read without locks while the run
 * goes on, like every counter here: a figure may miss the poll in
 * progress). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_version.h>

#include "app.h"
#include "listrx_build.h"
#include "listrx_vcs.h"

/* One map's entries; the buffer grows as the map is walked (a hash map
 * may gain entries while it is read). */
static int map_copy(struct lrx_report_map *out, const struct lrx_pipeline *p, unsigned stage,
		    unsigned map)
{
	size_t entry = (size_t)out->key_size + out->value_size;
	size_t cap = 0;
	uint32_t cursor = 0;
	for (;;) {
		if (out->n_entries == cap) {
			size_t grow = cap ? cap * 2 : 64;
			uint8_t *d = realloc(out->data, grow * entry);
			if (!d)
				return -ENOMEM;
			out->data = d;
			cap = grow;
		}
		uint8_t *at = out->data + out->n_entries * entry;
		if (!lrx_pipeline_stage_map_next(p, stage, map, &cursor, at, at + out->key_size))
			return 0;
		out->n_entries++;
	}
}

int lrx_report_fill_maps(struct lrx_report *r, const struct lrx_app *app)
{
	lrx_report_maps_free(r);
	unsigned cap = 0;
	for (unsigned w = 0; w < app->n_workers; w++) {
		const struct lrx_pipeline *p = app->workers[w]->pipeline;
		for (unsigned s = 0; p && s < lrx_pipeline_stage_count(p); s++) {
			struct lrx_stage_map info;
			for (unsigned m = 0; lrx_pipeline_stage_map_at(p, s, m, &info); m++) {
				if (r->n_maps == cap) {
					unsigned grow = cap ? cap * 2 : 8;
					struct lrx_report_map *a = realloc(r->maps, grow * sizeof(*a));
					if (!a)
						return -ENOMEM;
					r->maps = a;
					cap = grow;
				}
				struct lrx_report_map *out = &r->maps[r->n_maps++];
				memset(out, 0, sizeof(*out));
				snprintf(out->stage, sizeof(out->stage), "%s",
					 lrx_pipeline_stage_name(p, s));
				out->lcore = app->workers[w]->lcore_id;
				snprintf(out->name, sizeof(out->name), "%s", info.name);
				snprintf(out->type, sizeof(out->type), "%s", info.type);
				out->key_size = info.key_size;
				out->value_size = info.value_size;
				out->max_entries = info.max_entries;
				if (info.layout && lrx_map_layout_fits(info.layout, info.key_size,
								       info.value_size))
					out->layout = *info.layout;
				if (map_copy(out, p, s, m) < 0)
					return -ENOMEM;
			}
		}
	}
	return 0;
}

static double run_seconds(const struct lrx_app *app)
{
	if (!app->start_tsc)
		return 0;
	uint64_t end = app->end_tsc ? app->end_tsc : rte_rdtsc();
	return (double)(end - app->start_tsc) / (double)rte_get_tsc_hz();
}

static const struct lrx_pipeline *first_pipeline(const struct lrx_app *app)
{
	return app->n_workers ? app->workers[0]->pipeline : NULL;
}

/* ---- totals and stages ---------------------------------------------------- */

struct counter_sum {
	struct lrx_report_stage *stage;
	unsigned next;
};

static void counter_add(void *arg, const struct lrx_stage_counter *sc, uint64_t value)
{
	struct counter_sum *c = arg;
	struct lrx_report_stage *s = c->stage;
	if (c->next == s->n_counters && s->n_counters < LRX_REPORT_MAX_COUNTERS) {
		snprintf(s->counters[s->n_counters].name, LRX_REPORT_COUNTER_NAME, "%s",
			 sc->name);
		s->counters[s->n_counters].role = sc->role;
		s->n_counters++;
	}
	if (c->next < s->n_counters)
		s->counters[c->next].value += value;
	c->next++;
}

static void stage_fill(struct lrx_report_stage *out, const struct lrx_app *app, unsigned stage)
{
	const struct lrx_pipeline *p0 = first_pipeline(app);
	snprintf(out->name, sizeof(out->name), "%s", lrx_pipeline_stage_name(p0, stage));
	out->attributable = lrx_pipeline_stage_attributable(p0, stage);
	struct lrx_stage_stats *sum = &out->stats;
	for (unsigned i = 0; i < app->n_workers; i++) {
		const struct lrx_pipeline *p = app->workers[i]->pipeline;
		if (!p || stage >= lrx_pipeline_stage_count(p))
			continue;
		struct lrx_stage_stats s;
		lrx_pipeline_stage_stats(p, stage, &s);
		sum->calls += s.calls;
		sum->packets += s.packets;
		sum->cycles += s.cycles;
		sum->tx += s.tx;
		sum->redirected += s.redirected;
		sum->consumed += s.consumed;
		sum->delivered += s.delivered;
		for (unsigned e = 0; e < LRX_PMU_MAX_EVENTS; e++)
			sum->pmu[e] += s.pmu[e];
		for (unsigned r = 0; r < LRX_DROP_MAX; r++)
			sum->drops[r] += s.drops[r];
		/* the stage's own counters: every lcore's pipeline has its
		 * own context, the counters come in the same order from each */
		struct counter_sum c = {.stage = out};
		lrx_pipeline_stage_counters(p, stage, counter_add, &c);
	}
	for (unsigned r = 0; r < LRX_DROP_MAX; r++)
		out->dropped += sum->drops[r];
}

static void stages_fill(struct lrx_report *r, const struct lrx_app *app)
{
	const struct lrx_pipeline *p0 = first_pipeline(app);
	r->n_stages = p0 ? lrx_pipeline_stage_count(p0) : 0;
	for (unsigned s = 0; s < r->n_stages; s++)
		stage_fill(&r->stages[s], app, s);
	r->footprint_bytes = p0 ? lrx_pipeline_footprint_bytes(p0) : 0;
}

static void totals_read(struct lrx_totals *t, const struct lrx_app *app)
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
		t->tx_clean_calls += w->counters.tx_clean_calls;
		t->tx_cleaned += w->counters.tx_cleaned;
		t->tx_clean_busy += w->counters.tx_clean_busy;
	}
}

/* rx + made - out is what the stages merged into other packets (their
 * LRX_COUNTER_MERGED counters: dev_gro_receive's GRO_MERGED, ip_frag_reasm)
 * plus what they hold now (their held hooks); made are the packets they
 * made themselves (LRX_COUNTER_MADE: act_mirred's mirror copies). */
static void totals_split_held(struct lrx_totals *t, const struct lrx_report *r,
			      const struct lrx_app *app)
{
	for (unsigned s = 0; s < r->n_stages; s++) {
		uint64_t v;
		if (lrx_report_stage_role(&r->stages[s], LRX_COUNTER_MERGED, &v))
			t->merged += v;
		if (lrx_report_stage_role(&r->stages[s], LRX_COUNTER_MADE, &v))
			t->made += v;
	}
	/* what the pipelines took in or made and did not put out */
	uint64_t out = t->tx + t->delivered + t->dropped;
	t->held = t->rx + t->made > out ? t->rx + t->made - out : 0;
	for (unsigned i = 0; i < app->n_workers; i++)
		if (app->workers[i]->pipeline)
			t->held_now += lrx_pipeline_held(app->workers[i]->pipeline);
}

/* ---- ports, lcores ---------------------------------------------------------- */

/* Adds a device counter to the port's, by name (first seen first). */
static void dev_counter_add(void *arg, const char *name, uint64_t value)
{
	struct lrx_report_port *p = arg;
	for (unsigned c = 0; c < p->n_dev_counters; c++)
		if (strcmp(p->dev_counters[c].name, name) == 0) {
			p->dev_counters[c].value += value;
			return;
		}
	if (p->n_dev_counters == LRX_REPORT_MAX_DEV_COUNTERS)
		return;
	struct lrx_report_counter *c = &p->dev_counters[p->n_dev_counters++];
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->value = value;
}

static void ports_fill(struct lrx_report *r, const struct lrx_app *app)
{
	r->n_ports = app->ports.n;
	for (unsigned i = 0; i < app->ports.n; i++) {
		const struct lrx_port *port = &app->ports.ports[i];
		struct lrx_report_port *p = &r->ports[i];
		p->index = port->index;
		p->port_id = port->port_id;
		snprintf(p->name, sizeof(p->name), "%s", port->name);
		snprintf(p->driver, sizeof(p->driver), "%s", port->driver);
		/* while the port runs its counters now (as testpmd's show
		 * port stats); after the run the snapshot taken before close */
		p->stats = app->port_stats[i];
		if (port->started && rte_eth_stats_get(port->port_id, &p->stats) != 0)
			p->stats = app->port_stats[i];
		p->link_up = port->link_up;
		p->link_down_events = port->link_down_events;
		p->link_down_s = port->link_down_s;
		lrx_offload_names(port->offloads_active, p->offloads, sizeof(p->offloads));
		lrx_offload_names(port->offloads_missing, p->offloads_missing,
				  sizeof(p->offloads_missing));
		p->n_dev_counters = 0;
		for (unsigned w = 0; w < app->n_workers; w++)
			if (app->workers[w]->pipeline)
				lrx_pipeline_port_counters(app->workers[w]->pipeline,
							   port->port_id, dev_counter_add, p);
	}
	/* queues in lcore then poll order, each tagged with its port; an
	 * interleaved lcore's engines poll the same queues (its first
	 * worker's entries, in the same order): their counts add up */
	unsigned lcore_first = 0;
	for (unsigned w = 0; w < app->n_workers; w++) {
		if (!app->workers[w]->follower)
			lcore_first = r->n_queues;
		for (unsigned q = 0; q < app->workers[w]->n_polls; q++) {
			const struct lrx_worker_poll *poll = &app->workers[w]->polls[q];
			if (app->workers[w]->follower) {
				if (lcore_first + q >= r->n_queues)
					continue;
				r->queues[lcore_first + q].rx_packets += poll->stats.rx_packets;
				r->queues[lcore_first + q].polls += poll->stats.polls;
				continue;
			}
			if (r->n_queues == LRX_REPORT_MAX_QUEUES)
				return;
			struct lrx_report_queue *rq = &r->queues[r->n_queues++];
			rq->port = (unsigned)(poll->port - app->ports.ports);
			rq->queue = poll->queue;
			rq->lcore = app->workers[w]->lcore_id;
			rq->rx_packets = poll->stats.rx_packets;
			rq->polls = poll->stats.polls;
		}
	}
}

static void lcore_pmu_fill(struct lrx_report_lcore *l, const struct lrx_pmu *g)
{
	l->has_pmu = g != NULL;
	if (!g)
		return;
	l->pmu_counted = g->counted;
	l->pmu_stages_on = g->stages_on;
	l->time_enabled_ns = g->time_enabled_ns;
	l->time_running_ns = g->time_running_ns;
	for (unsigned e = 0; e < LRX_PMU_MAX_EVENTS; e++) {
		l->pmu_count_ok[e] = g->counted && !g->counters[e].why[0];
		l->pmu_count[e] = g->counters[e].count;
	}
}

static void merged_made_add(void *arg, const struct lrx_stage_counter *c, uint64_t value)
{
	struct lrx_report_lcore *l = arg;
	if (c->role == LRX_COUNTER_MERGED)
		l->merged += value;
	else if (c->role == LRX_COUNTER_MADE)
		l->made += value;
}

/* the fates of one worker's packets (its own sink counters and pipeline) */
static void lcore_fates_fill(struct lrx_report_lcore *l, const struct lrx_worker *wk)
{
	l->delivered = wk->counters.delivered;
	l->dropped = wk->counters.dropped;
	l->tx = wk->counters.tx;
	for (unsigned s = 0; wk->pipeline && s < lrx_pipeline_stage_count(wk->pipeline); s++)
		lrx_pipeline_stage_counters(wk->pipeline, s, merged_made_add, l);
	l->held_now = wk->pipeline ? lrx_pipeline_held(wk->pipeline) : 0;
}

static void lcores_fill(struct lrx_report *r, const struct lrx_app *app)
{
	r->n_lcores = app->n_workers;
	for (unsigned w = 0; w < app->n_workers; w++) {
		const struct lrx_worker *wk = app->workers[w];
		struct lrx_report_lcore *l = &r->lcores[w];
		l->lcore = wk->lcore_id;
		snprintf(l->engine, sizeof(l->engine), "%s", wk->engine);
		l->follower = wk->follower;
		l->windows = wk->interleave ? &wk->interleave->log : NULL;
		lcore_fates_fill(l, wk);
		l->polls = wk->polls_total;
		l->empty_polls = wk->empty_polls;
		l->packets = wk->rx_packets;
		l->busy_cycles = wk->busy_cycles;
		l->measuring = wk->measuring;
		l->measured_packets = wk->measuring ? wk->rx_packets - wk->measured_from : 0;
		r->measured_packets += l->measured_packets;
		lcore_pmu_fill(l, wk->pmu);
	}
}

/* ---- latency (--latency) ----------------------------------------------------- */

static void __attribute__((format(printf, 3, 4)))
reason_append(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	if (used + 3 >= len)
		return;
	if (used) {
		memcpy(buf + used, "; ", 3);
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

static void latency_merge(struct lrx_latency *total, const struct lrx_app *app)
{
	memset(total, 0, sizeof(*total));
	for (unsigned i = 0; i < app->n_workers; i++) {
		const struct lrx_latency *lat = app->workers[i]->latency;
		if (!lat)
			continue;
		lrx_latency_hist_merge(&total->hist, &lat->hist);
		lrx_latency_hist_merge(&total->turnaround, &lat->turnaround);
		total->at_exit += lat->at_exit;
		for (unsigned p = 0; p < RTE_DIM(total->not_tsc); p++) {
			total->not_tsc[p] += lat->not_tsc[p];
			total->port_tsc[p] |= lat->port_tsc[p];
		}
	}
}

/* stamps of a clock that is not the TSC are not comparable with
 * rte_rdtsc(): name the ports rather than report their numbers */
static void latency_reasons(struct lrx_report_latency *s, const struct lrx_latency *t,
			    const struct lrx_app *app)
{
	uint64_t elsewhere = 0;
	for (unsigned p = 0; p < RTE_DIM(t->not_tsc); p++)
		elsewhere += t->not_tsc[p];
	for (unsigned i = 0; i < app->ports.n; i++) {
		const struct lrx_port *port = &app->ports.ports[i];
		elsewhere -= t->not_tsc[port->port_id];
		if (t->not_tsc[port->port_id])
			reason_append(s->reason, sizeof(s->reason),
				      "port %u (%s, driver %s) timestamps are not TSC: %lu stamped packets not recorded",
				      port->index, port->name, port->driver,
				      (unsigned long)t->not_tsc[port->port_id]);
	}
	if (elsewhere)
		reason_append(s->reason, sizeof(s->reason),
			      "%lu packets stamped by a port listrx does not poll not recorded",
			      (unsigned long)elsewhere);
	if (s->samples == 0 && !s->reason[0])
		reason_append(s->reason, sizeof(s->reason),
			      "no RX timestamps (use net_synth hints=...+timestamp)");
}

static void latency_fill(struct lrx_report_latency *s, const struct lrx_app *app)
{
	s->on = app->conf.latency;
	if (!s->on)
		return;
	struct lrx_latency *t = malloc(sizeof(*t));
	if (!t) {
		reason_append(s->reason, sizeof(s->reason), "no memory to merge the histograms");
		return;
	}
	latency_merge(t, app);
	uint64_t hz = rte_get_tsc_hz();
	s->samples = lrx_latency_hist_count(&t->hist);
	s->clamped = t->hist.clamped;
	s->at_exit = t->at_exit;
	s->p50_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_quantile(&t->hist, 0.50), hz);
	s->p99_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_quantile(&t->hist, 0.99), hz);
	s->p999_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_quantile(&t->hist, 0.999), hz);
	s->max_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_max(&t->hist), hz);
	s->clamp_ns = lrx_latency_ticks_to_ns((double)LRX_LATENCY_MAX_TICKS, hz);
	const struct lrx_latency_hist *ta = &t->turnaround;
	s->turnaround_samples = lrx_latency_hist_count(ta);
	s->turnaround_clamped = ta->clamped;
	s->turnaround_p50_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_quantile(ta, 0.50), hz);
	s->turnaround_p99_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_quantile(ta, 0.99), hz);
	s->turnaround_p999_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_quantile(ta, 0.999), hz);
	s->turnaround_max_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_max(ta), hz);
	latency_reasons(s, t, app);
	free(t);
}

/* ---- hardware counters ([pmu]) ----------------------------------------------- */

static void pmu_add_group(struct lrx_report_pmu *s, const struct lrx_pmu *g, uint64_t rx)
{
	if (!g->stages_on && !s->stages_why[0])
		s->stages_why = g->stages_why[0] ? g->stages_why : g->why;
	if (!g->counted) {
		s->group_why = g->why;
		return;
	}
	s->workers_counted++;
	s->multiplexed |= g->time_running_ns < g->time_enabled_ns;
	for (unsigned e = 0; e < s->conf.n_events; e++) {
		const struct lrx_pmu_counter *c = &g->counters[e];
		if (c->why[0]) {
			s->why[e] = s->why[e] ? s->why[e] : c->why;
			continue;
		}
		s->encoding[e] = c->encoding;
		double v = lrx_pmu_scaled(c->count, g->time_enabled_ns, g->time_running_ns);
		if (v < 0) {
			s->why[e] = "the group was never scheduled on the PMU (more events than counters?)";
			continue;
		}
		s->count[e] += v;
		s->packets[e] += rx;
	}
}

static void pmu_fill(struct lrx_report_pmu *s, const struct lrx_app *app)
{
	s->conf = app->conf.pmu;
	s->on = s->conf.enabled;
	if (!s->on)
		return;
	s->group_why = "no worker ran";
	s->stages_why = "";
	s->stages_live = app->conf.pmu.stages && app->n_workers;
	for (unsigned e = 0; e < s->conf.n_events; e++)
		s->encoding[e] = "";
	for (unsigned w = 0; w < app->n_workers; w++) {
		const struct lrx_pmu *g = app->workers[w]->pmu;
		s->stages_live &= g && g->stages_on;
		if (g)
			pmu_add_group(s, g, app->workers[w]->rx_packets);
	}
	for (unsigned e = 0; e < s->conf.n_events; e++) {
		if (!s->workers_counted && !s->why[e])
			s->why[e] = app->n_workers && app->workers[0]->pmu
					    ? app->workers[0]->pmu->counters[e].why
					    : s->group_why;
		if (s->why[e] && !s->why[e][0])
			s->why[e] = s->group_why;
	}
	s->stages = s->conf.stages && s->workers_counted && !s->stages_why[0];
	if (s->conf.stages && !s->stages && !s->stages_why[0])
		s->stages_why = s->group_why;
}

/* ---- the whole report -------------------------------------------------------- */

static void setup_fill(struct lrx_report *r, const struct lrx_app *app)
{
	const struct lrx_pipeline_conf *pc = &app->conf.pipeline;
	r->version = LISTRX_VERSION;
	r->commit = LISTRX_COMMIT;
	r->build = LISTRX_BUILD_FLAVOUR;
	r->retpoline = LISTRX_RETPOLINE;
	r->dpdk_version = rte_version();
	snprintf(r->engine, sizeof(r->engine), "%s", lrx_engine_name(pc->engine));
	if (pc->engine == LRX_ENGINE_HYBRID)
		snprintf(r->engine, sizeof(r->engine), "hybrid:%u", pc->hybrid_k);
	if (app->conf.interleave.n) {
		memcpy(r->engine, "interleave:", 11);
		lrx_engine_list_name(&app->conf.interleave, r->engine + 11, sizeof(r->engine) - 11);
	}
	r->burst = pc->burst;
	r->coalesce_us = app->conf.coalesce_us;
	r->tx_clean = app->conf.tx_clean;
	r->tx_clean_polls = app->conf.tx_clean_polls;
	r->stats_level = pc->stats_level;
	r->tsc_hz = rte_get_tsc_hz();
	r->measure_from = app->conf.measure_from;
	r->stopped_by_signal = app->stopped_by_signal;
	r->topo = app->topo;
	r->mbufs_in_use_at_exit = app->mbufs_in_use_at_exit;
	r->mbufs_freed_twice_at_exit = app->mbufs_freed_twice_at_exit;
	r->driver_held_mbufs_at_exit = app->driver_held_mbufs_at_exit;
	r->mbufs_per_pool = app->ports.mbufs_per_pool;
	r->pool_cache = app->ports.pool_cache;
	r->pool_data_room = app->ports.pool_data_room;
	r->pool_priv_size = app->ports.pool_priv_size;
	r->pool_packed = app->ports.pool_packed;
	r->nombuf_held = app->nombuf_held;
	r->config_path = app->conf.path;
	r->config = app->conf.cfg;
	_Static_assert(LRX_MAX_PORTS <= LRX_REPORT_MAX_PORTS, "the report holds every port");
}

void lrx_report_fill(struct lrx_report *r, const struct lrx_app *app)
{
	memset(r, 0, sizeof(*r));
	memset(r, 0, sizeof(*r)); /* the sums below add into it */
	setup_fill(r, app);
	totals_read(&r->totals, app);
	r->duration_s = run_seconds(app);
	ports_fill(r, app);
	lcores_fill(r, app);
	stages_fill(r, app);
	totals_split_held(&r->totals, r, app);
	latency_fill(&r->latency, app);
	pmu_fill(&r->pmu, app);
}
