/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_version.h>

#include "listrx_build.h"
#include "summary.h"

static double per_second(uint64_t count, double seconds)
{
	return seconds > 0 ? (double)count / seconds : 0;
}

void lrx_stats_line(const struct lrx_app *app, struct lrx_totals *prev,
		    double *prev_seconds, FILE *out)
{
	struct lrx_totals t;
	lrx_totals_read(app, &t);
	double now = lrx_run_seconds(app);
	double dt = now - *prev_seconds;
	fprintf(out,
		"[%7.1fs] rx %7.3f Mpps  tx %7.3f Mpps  drop %7.3f Mpps | total rx %lu tx %lu delivered %lu dropped %lu held %lu\n",
		now, per_second(t.rx - prev->rx, dt) / 1e6,
		per_second(t.tx - prev->tx, dt) / 1e6,
		per_second(t.dropped - prev->dropped, dt) / 1e6, (unsigned long)t.rx,
		(unsigned long)t.tx, (unsigned long)t.delivered, (unsigned long)t.dropped,
		(unsigned long)t.held);
	fflush(out);
	*prev = t;
	*prev_seconds = now;
}

/* ---- latency (--latency) ------------------------------------------------ */

struct summary_latency {
	uint64_t samples, clamped, at_exit;
	double p50_ns, p99_ns, p999_ns, max_ns; /* -1 without samples */
	double clamp_ns;                        /* the histogram's range */
	char reason[1024];                      /* why (some) latency is missing */
};

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

/* false when --latency is off */
static bool summary_latency_read(const struct lrx_app *app, struct summary_latency *s)
{
	struct lrx_latency t;
	memset(s, 0, sizeof(*s));
	if (!lrx_latency_totals(app, &t))
		return false;
	uint64_t hz = rte_get_tsc_hz();
	s->samples = lrx_latency_hist_count(&t.hist);
	s->clamped = t.hist.clamped;
	s->at_exit = t.at_exit;
	s->p50_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_quantile(&t.hist, 0.50), hz);
	s->p99_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_quantile(&t.hist, 0.99), hz);
	s->p999_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_quantile(&t.hist, 0.999), hz);
	s->max_ns = lrx_latency_ticks_to_ns(lrx_latency_hist_max(&t.hist), hz);
	s->clamp_ns = lrx_latency_ticks_to_ns((double)LRX_LATENCY_MAX_TICKS, hz);
	/* stamps of a clock that is not the TSC are not comparable with
	 * rte_rdtsc(): name the ports rather than report their numbers */
	for (unsigned i = 0; i < app->ports.n; i++) {
		const struct lrx_port *port = &app->ports.ports[i];
		if (t.not_tsc[port->port_id])
			reason_append(s->reason, sizeof(s->reason),
				      "port %u (%s, driver %s) timestamps are not TSC: %lu stamped packets not recorded",
				      port->index, port->name, port->driver,
				      (unsigned long)t.not_tsc[port->port_id]);
	}
	uint64_t elsewhere = 0;
	for (unsigned p = 0; p < RTE_DIM(t.not_tsc); p++)
		elsewhere += t.not_tsc[p];
	for (unsigned i = 0; i < app->ports.n; i++)
		elsewhere -= t.not_tsc[app->ports.ports[i].port_id];
	if (elsewhere)
		reason_append(s->reason, sizeof(s->reason),
			      "%lu packets stamped by a port listrx does not poll not recorded",
			      (unsigned long)elsewhere);
	if (s->samples == 0 && !s->reason[0])
		reason_append(s->reason, sizeof(s->reason),
			      "no RX timestamps (use net_synth hints=...+timestamp)");
	return true;
}

static void summary_latency_print(const struct lrx_app *app, FILE *out)
{
	struct summary_latency s;
	if (!summary_latency_read(app, &s))
		return;
	fprintf(out, "\n");
	if (s.samples)
		fprintf(out,
			"latency, RX stamp to verdict (synth-tsc, %lu samples, \u00b11.6%%): p50 %.1f ns, p99 %.1f ns, p99.9 %.1f ns, max %.1f ns\n",
			(unsigned long)s.samples, s.p50_ns, s.p99_ns, s.p999_ns, s.max_ns);
	if (s.clamped)
		fprintf(out, "latency: %lu samples above the histogram's %.3f ms counted at it\n",
			(unsigned long)s.clamped, s.clamp_ns / 1e6);
	if (s.at_exit)
		fprintf(out, "latency: %lu packets held until the run stopped, not recorded\n",
			(unsigned long)s.at_exit);
	if (s.reason[0])
		fprintf(out, "latency: %s\n", s.reason);
}

static void summary_latency_json(const struct lrx_app *app, struct lrx_json *j)
{
	struct summary_latency s;
	if (!summary_latency_read(app, &s))
		return;
	lrx_json_object_begin(j, "latency_ns");
	/* null, not 0, without samples: not measured */
	lrx_json_double(j, "p50", s.samples ? s.p50_ns : NAN);
	lrx_json_double(j, "p99", s.samples ? s.p99_ns : NAN);
	lrx_json_double(j, "p999", s.samples ? s.p999_ns : NAN);
	lrx_json_double(j, "max", s.samples ? s.max_ns : NAN);
	lrx_json_u64(j, "samples", s.samples);
	lrx_json_u64(j, "clamped", s.clamped);
	lrx_json_u64(j, "held_at_exit", s.at_exit);
	lrx_json_double(j, "clamp_ns", s.clamp_ns);
	if (s.samples)
		lrx_json_string(j, "source", "synth-tsc");
	else
		lrx_json_null(j, "source");
	lrx_json_object_end(j);
	if (s.reason[0])
		lrx_json_string(j, "latency_unavailable", s.reason);
}

/* ---- hardware counters ([pmu]) -------------------------------------------- */

struct summary_pmu {
	const struct lrx_pmu_conf *conf;
	unsigned workers_counted;            /* lcores whose group counted */
	bool multiplexed;                    /* some group ran part of the time */
	double count[LRX_PMU_MAX_EVENTS];    /* scaled, summed; -1 unavailable */
	uint64_t packets[LRX_PMU_MAX_EVENTS];/* rx of the lcores that counted it */
	const char *why[LRX_PMU_MAX_EVENTS]; /* first reason it is unavailable */
	const char *group_why;               /* no lcore counted: why */
	const char *stages_why;              /* why not every lcore attributed */
	bool stages;                         /* per-stage figures exist */
	const char *encoding[LRX_PMU_MAX_EVENTS];
};

/* false when [pmu] is off */
static bool summary_pmu_read(const struct lrx_app *app, struct summary_pmu *s)
{
	memset(s, 0, sizeof(*s));
	s->conf = &app->conf.pmu;
	if (!s->conf->enabled)
		return false;
	s->group_why = "no worker ran";
	s->stages_why = "";
	for (unsigned e = 0; e < s->conf->n_events; e++)
		s->encoding[e] = "";
	for (unsigned w = 0; w < app->n_workers; w++) {
		const struct lrx_pmu *g = app->workers[w]->pmu;
		if (!g)
			continue;
		if (!g->stages_on && !s->stages_why[0])
			s->stages_why = g->stages_why[0] ? g->stages_why : g->why;
		if (!g->counted) {
			s->group_why = g->why;
			continue;
		}
		s->workers_counted++;
		s->multiplexed |= g->time_running_ns < g->time_enabled_ns;
		for (unsigned e = 0; e < s->conf->n_events; e++) {
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
			s->packets[e] += app->workers[w]->rx_packets;
		}
	}
	for (unsigned e = 0; e < s->conf->n_events; e++) {
		if (!s->workers_counted && !s->why[e])
			s->why[e] = app->n_workers && app->workers[0]->pmu
					    ? app->workers[0]->pmu->counters[e].why
					    : s->group_why;
		if (s->why[e] && !s->why[e][0])
			s->why[e] = s->group_why;
	}
	s->stages = s->conf->stages && s->workers_counted && !s->stages_why[0];
	if (s->conf->stages && !s->stages && !s->stages_why[0])
		s->stages_why = s->group_why;
	return true;
}

static void summary_pmu_print(const struct lrx_app *app, FILE *out)
{
	struct summary_pmu s;
	if (!summary_pmu_read(app, &s))
		return;
	bool fake = s.conf->source == LRX_PMU_SOURCE_FAKE;
	fprintf(out, "\ncounters (%s%s, %s mode, %u of %u lcores counted%s):\n",
		lrx_pmu_source_name(s.conf->source), fake ? ": software test source, not hardware counts" : "",
		s.conf->kernel ? "user+kernel" : "user", s.workers_counted, app->n_workers,
		s.multiplexed ? ", multiplexed: scaled by enabled/running" : "");
	fprintf(out, "%-24s %14s %18s\n", "event", "per packet", "total");
	for (unsigned e = 0; e < s.conf->n_events; e++) {
		const char *name = s.conf->events[e].name;
		if (s.why[e])
			fprintf(out, "%-24s unavailable: %s\n", name, s.why[e]);
		else
			fprintf(out, "%-24s %14.2f %18.0f\n", name,
				s.packets[e] ? s.count[e] / (double)s.packets[e] : 0.0, s.count[e]);
	}
	unsigned n_stages = app->n_workers && app->workers[0]->pipeline
				    ? lrx_pipeline_stage_count(app->workers[0]->pipeline)
				    : 0;
	if (!s.conf->stages)
		return;
	if (!s.stages) {
		fprintf(out, "per stage: unavailable: %s\n", s.stages_why);
		return;
	}
	fprintf(out, "per stage, per packet (%s around each stage call):\n%-14s",
		s.conf->source == LRX_PMU_SOURCE_FAKE ? "fake reads" : "rdpmc", "stage");
	for (unsigned e = 0; e < s.conf->n_events; e++)
		fprintf(out, " %14.14s", s.conf->events[e].name);
	fprintf(out, "\n");
	for (unsigned st = 0; st < n_stages; st++) {
		struct lrx_stage_stats t;
		lrx_stage_totals(app, st, &t);
		fprintf(out, "%-14s", lrx_pipeline_stage_name(app->workers[0]->pipeline, st));
		for (unsigned e = 0; e < s.conf->n_events; e++)
			if (s.why[e] || !t.packets ||
			    !lrx_pipeline_stage_attributable(app->workers[0]->pipeline, st))
				fprintf(out, " %14s", "-");
			else
				fprintf(out, " %14.2f", (double)t.pmu[e] / (double)t.packets);
		fprintf(out, "\n");
	}
}

static void summary_pmu_json(const struct lrx_app *app, struct lrx_json *j)
{
	struct summary_pmu s;
	if (!summary_pmu_read(app, &s))
		return;
	char status[LRX_PMU_WHY_LEN + 16];
	lrx_json_object_begin(j, "pmu");
	lrx_json_string(j, "source", lrx_pmu_source_name(s.conf->source));
	lrx_json_bool(j, "fake", s.conf->source == LRX_PMU_SOURCE_FAKE);
	lrx_json_string(j, "mode", s.conf->kernel ? "user+kernel" : "user");
	snprintf(status, sizeof(status), "unavailable: %s", s.group_why);
	lrx_json_string(j, "status", s.workers_counted ? "counted" : status);
	lrx_json_u64(j, "lcores_counted", s.workers_counted);
	lrx_json_bool(j, "multiplexed", s.multiplexed);
	lrx_json_array_begin(j, "events");
	for (unsigned e = 0; e < s.conf->n_events; e++) {
		lrx_json_object_begin(j, NULL);
		lrx_json_string(j, "name", s.conf->events[e].name);
		if (s.why[e]) {
			snprintf(status, sizeof(status), "unavailable: %s", s.why[e]);
			lrx_json_string(j, "status", status);
			lrx_json_null(j, "encoding");
			lrx_json_null(j, "count"); /* not counted, not zero */
			lrx_json_null(j, "per_packet");
		} else {
			lrx_json_string(j, "status", "counted");
			lrx_json_string(j, "encoding", s.encoding[e]);
			/* a count (scaled when multiplexed, then rounded) */
			lrx_json_u64(j, "count", (uint64_t)llround(s.count[e]));
			lrx_json_double(j, "per_packet",
					s.packets[e] ? s.count[e] / (double)s.packets[e] : NAN);
		}
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
	lrx_json_array_begin(j, "lcores");
	for (unsigned w = 0; w < app->n_workers; w++) {
		const struct lrx_pmu *g = app->workers[w]->pmu;
		if (!g)
			continue;
		lrx_json_object_begin(j, NULL);
		lrx_json_u64(j, "lcore", app->workers[w]->lcore_id);
		lrx_json_u64(j, "packets", app->workers[w]->rx_packets);
		lrx_json_bool(j, "counted", g->counted);
		if (g->counted) {
			lrx_json_u64(j, "time_enabled_ns", g->time_enabled_ns);
			lrx_json_u64(j, "time_running_ns", g->time_running_ns);
		} else {
			lrx_json_null(j, "time_enabled_ns");
			lrx_json_null(j, "time_running_ns");
		}
		lrx_json_object_begin(j, "counts");
		for (unsigned e = 0; e < s.conf->n_events; e++)
			if (g->counted && !g->counters[e].why[0])
				lrx_json_u64(j, s.conf->events[e].name, g->counters[e].count);
			else
				lrx_json_null(j, s.conf->events[e].name);
		lrx_json_object_end(j);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
	/* per stage: only when every counting lcore attributed */
	bool stages = s.stages;
	if (!s.conf->stages)
		snprintf(status, sizeof(status), "off");
	else
		snprintf(status, sizeof(status), "unavailable: %s", s.stages_why);
	lrx_json_string(j, "stages_status",
			stages ? (s.conf->source == LRX_PMU_SOURCE_FAKE
					  ? "counted (fake reads around each stage call)"
					  : "counted (rdpmc around each stage call)")
			       : status);
	lrx_json_array_begin(j, "stages");
	unsigned n_stages = stages && app->workers[0]->pipeline
				    ? lrx_pipeline_stage_count(app->workers[0]->pipeline)
				    : 0;
	for (unsigned st = 0; st < n_stages; st++) {
		struct lrx_stage_stats t;
		lrx_stage_totals(app, st, &t);
		lrx_json_object_begin(j, NULL);
		lrx_json_string(j, "name", lrx_pipeline_stage_name(app->workers[0]->pipeline, st));
		lrx_json_u64(j, "packets", t.packets);
		lrx_json_u64(j, "calls", t.calls);
		/* hybrid:K reads only around its first K stages */
		bool attributed = lrx_pipeline_stage_attributable(app->workers[0]->pipeline, st);
		lrx_json_bool(j, "attributed", attributed);
		lrx_json_object_begin(j, "counts");
		for (unsigned e = 0; e < s.conf->n_events; e++)
			if (s.why[e] || !attributed)
				lrx_json_null(j, s.conf->events[e].name);
			else
				lrx_json_u64(j, s.conf->events[e].name, t.pmu[e]);
		lrx_json_object_end(j);
		lrx_json_object_begin(j, "per_packet");
		for (unsigned e = 0; e < s.conf->n_events; e++)
			if (s.why[e] || !t.packets || !attributed)
				lrx_json_null(j, s.conf->events[e].name);
			else
				lrx_json_double(j, s.conf->events[e].name,
						(double)t.pmu[e] / (double)t.packets);
		lrx_json_object_end(j);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
	lrx_json_object_end(j);
}

void lrx_summary_print(const struct lrx_app *app, FILE *out)
{
	struct lrx_totals t;
	lrx_totals_read(app, &t);
	double secs = lrx_run_seconds(app);
	const struct lrx_pipeline_conf *pc = &app->conf.pipeline;
	char engine[32];
	snprintf(engine, sizeof(engine), "%s", lrx_engine_name(pc->engine));
	if (pc->engine == LRX_ENGINE_HYBRID)
		snprintf(engine, sizeof(engine), "hybrid:%u", pc->hybrid_k);

	fprintf(out, "\n==== listrx summary (%s build, engine %s, burst %u) ====\n",
		LISTRX_BUILD_FLAVOUR, engine, pc->burst);
	fprintf(out, "duration %.3f s, rx %lu packets, %.3f Mpps, %.1f ns/packet (wall, all lcores)\n",
		secs, (unsigned long)t.rx, per_second(t.rx, secs) / 1e6,
		t.rx ? secs * 1e9 / (double)t.rx : 0.0);
	fprintf(out, "delivered %lu, tx %lu, dropped %lu (tx failed %lu), held %lu\n",
		(unsigned long)t.delivered, (unsigned long)t.tx, (unsigned long)t.dropped,
		(unsigned long)t.tx_failed, (unsigned long)t.held);

	fprintf(out, "\n%-5s %-22s %-5s %14s %14s %12s %12s %12s\n", "port", "device", "queue",
		"rx (lcore)", "ipackets", "opackets", "imissed", "rx_nombuf");
	for (unsigned i = 0; i < app->ports.n; i++) {
		const struct lrx_port *port = &app->ports.ports[i];
		const struct rte_eth_stats st = app->port_stats[i];
		fprintf(out, "%-5u %-22s %-5s %14s %14lu %12lu %12lu %12lu\n", port->index,
			port->name, "all", "", (unsigned long)st.ipackets,
			(unsigned long)st.opackets, (unsigned long)st.imissed,
			(unsigned long)st.rx_nombuf);
		for (unsigned w = 0; w < app->n_workers; w++)
			for (unsigned p = 0; p < app->workers[w]->n_polls; p++) {
				const struct lrx_worker_poll *poll = &app->workers[w]->polls[p];
				if (poll->port != port)
					continue;
				fprintf(out, "%-5s %-22s %-5u %14lu   (lcore %u, %lu polls)\n", "", "",
					poll->queue, (unsigned long)poll->stats.rx_packets,
					app->workers[w]->lcore_id,
					(unsigned long)poll->stats.polls);
			}
	}

	for (unsigned i = 0; i < app->ports.n; i++) {
		const struct lrx_port *port = &app->ports.ports[i];
		if (port->link_down_events || !port->link_up)
			fprintf(out, "port %u link: down %u time(s) during the run, %.3f s in all; %s at the end\n",
				port->index, port->link_down_events, port->link_down_s,
				port->link_up ? "up" : "down");
	}

	fprintf(out, "\n%-6s %14s %14s %14s %10s\n", "lcore", "polls", "empty polls",
		"packets", "pkts/poll");
	for (unsigned w = 0; w < app->n_workers; w++) {
		const struct lrx_worker *wk = app->workers[w];
		uint64_t busy = wk->polls_total - wk->empty_polls;
		fprintf(out, "%-6u %14lu %14lu %14lu %10.2f\n", wk->lcore_id,
			(unsigned long)wk->polls_total, (unsigned long)wk->empty_polls,
			(unsigned long)wk->rx_packets,
			busy ? (double)wk->rx_packets / (double)busy : 0.0);
	}

	unsigned n_stages = app->n_workers && app->workers[0]->pipeline
				    ? lrx_pipeline_stage_count(app->workers[0]->pipeline)
				    : 0;
	if (n_stages) {
		bool cycles = pc->stats_level == LRX_STATS_CYCLES;
		fprintf(out, "\n%-14s %12s %14s %10s %14s %10s %12s\n", "stage", "calls",
			"packets", "vec/call", "cycles", "cyc/pkt", "dropped");
		for (unsigned s = 0; s < n_stages; s++) {
			struct lrx_stage_stats st;
			lrx_stage_totals(app, s, &st);
			uint64_t drops = 0;
			for (unsigned r = 0; r < LRX_DROP_MAX; r++)
				drops += st.drops[r];
			char cyc[32] = "-", cpp[32] = "-";
			if (cycles) {
				snprintf(cyc, sizeof(cyc), "%lu", (unsigned long)st.cycles);
				snprintf(cpp, sizeof(cpp), "%.1f",
					 st.packets ? (double)st.cycles / (double)st.packets : 0.0);
			}
			fprintf(out, "%-14s %12lu %14lu %10.2f %14s %10s %12lu\n",
				lrx_pipeline_stage_name(app->workers[0]->pipeline, s),
				(unsigned long)st.calls, (unsigned long)st.packets,
				st.calls ? (double)st.packets / (double)st.calls : 0.0, cyc, cpp,
				(unsigned long)drops);
		}
		if (!cycles)
			fprintf(out, "(cycles not measured: --stats-level cycles measures them)\n");
	}
	bool any_drop = false;
	for (unsigned r = 0; r < LRX_DROP_MAX; r++)
		any_drop |= t.drops[r] != 0;
	if (any_drop) {
		fprintf(out, "\n%-24s %14s\n", "drop reason", "packets");
		for (unsigned r = 0; r < LRX_DROP_MAX; r++)
			if (t.drops[r])
				fprintf(out, "%-24s %14lu\n", lrx_drop_reason_name(r),
					(unsigned long)t.drops[r]);
	}
	summary_latency_print(app, out);
	summary_pmu_print(app, out);
	fprintf(out, "\nmbufs in use at exit: %u\n", app->mbufs_in_use_at_exit);
	if (app->driver_held_mbufs_at_exit)
		fprintf(out,
			"mbufs kept by drivers after close: %u (net_af_xdp keeps its fill ring; in a pool of its own)\n",
			app->driver_held_mbufs_at_exit);
}

static void json_config_entry(void *arg, const char *section, const char *key,
			      const char *value)
{
	struct lrx_json *j = arg;
	char name[160];
	snprintf(name, sizeof(name), "%s.%s", section, key);
	lrx_json_string(j, name, value);
}

static void json_stage_counter(void *arg, const char *name, uint64_t value)
{
	lrx_json_u64(arg, name, value);
}

static void summary_json_stages(const struct lrx_app *app, struct lrx_json *j)
{
	lrx_json_array_begin(j, "stages");
	const struct lrx_pipeline *p0 = app->n_workers ? app->workers[0]->pipeline : NULL;
	unsigned n_stages = p0 ? lrx_pipeline_stage_count(p0) : 0;
	for (unsigned s = 0; s < n_stages; s++) {
		struct lrx_stage_stats st;
		lrx_stage_totals(app, s, &st);
		lrx_json_object_begin(j, NULL);
		lrx_json_string(j, "name", lrx_pipeline_stage_name(p0, s));
		lrx_json_u64(j, "calls", st.calls);
		lrx_json_u64(j, "packets", st.packets);
		lrx_json_double(j, "vectors_per_call",
				st.calls ? (double)st.packets / (double)st.calls : 0.0);
		if (app->conf.pipeline.stats_level == LRX_STATS_CYCLES) {
			lrx_json_u64(j, "cycles", st.cycles);
			lrx_json_double(j, "cycles_per_packet",
					st.packets ? (double)st.cycles / (double)st.packets : 0.0);
		} else {
			lrx_json_null(j, "cycles"); /* not measured, not zero */
			lrx_json_null(j, "cycles_per_packet");
		}
		lrx_json_u64(j, "tx", st.tx);
		lrx_json_u64(j, "redirected", st.redirected);
		lrx_json_u64(j, "consumed", st.consumed);
		lrx_json_u64(j, "delivered", st.delivered);
		lrx_json_object_begin(j, "drops");
		for (unsigned r = 0; r < LRX_DROP_MAX; r++)
			if (st.drops[r])
				lrx_json_u64(j, lrx_drop_reason_name(r), st.drops[r]);
		lrx_json_object_end(j);
		/* stage-specific counters summed over lcores are those of the
		 * first pipeline plus the others */
		lrx_json_object_begin(j, "counters");
		for (unsigned w = 0; w < app->n_workers && w < 1; w++)
			lrx_pipeline_stage_counters(app->workers[w]->pipeline, s,
						    json_stage_counter, j);
		lrx_json_object_end(j);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
}

void lrx_summary_json(const struct lrx_app *app, struct lrx_json *j)
{
	struct lrx_totals t;
	lrx_totals_read(app, &t);
	double secs = lrx_run_seconds(app);
	const struct lrx_pipeline_conf *pc = &app->conf.pipeline;
	char engine[32];
	snprintf(engine, sizeof(engine), "%s", lrx_engine_name(pc->engine));
	if (pc->engine == LRX_ENGINE_HYBRID)
		snprintf(engine, sizeof(engine), "hybrid:%u", pc->hybrid_k);

	lrx_json_object_begin(j, NULL);
	lrx_json_string(j, "version", LISTRX_VERSION);
	lrx_json_string(j, "build", LISTRX_BUILD_FLAVOUR);
	lrx_json_bool(j, "retpoline", LISTRX_RETPOLINE);
	lrx_json_string(j, "dpdk_version", rte_version());
	lrx_json_string(j, "engine", engine);
	lrx_json_u64(j, "burst", pc->burst);
	const char *levels[] = {"off", "counters", "cycles"};
	lrx_json_string(j, "stats_level", levels[pc->stats_level]);
	lrx_json_double(j, "duration_s", secs);
	lrx_json_u64(j, "rx_packets", t.rx);
	if (app->conf.measure_from) {
		/* the packets callgrind collected costs for ([run] measure_from) */
		uint64_t measured = 0;
		for (unsigned w = 0; w < app->n_workers; w++)
			if (app->workers[w]->measuring)
				measured += app->workers[w]->rx_packets - app->workers[w]->measured_from;
		lrx_json_u64(j, "measure_from", app->conf.measure_from);
		lrx_json_u64(j, "measured_packets", measured);
	}
	lrx_json_u64(j, "tx_packets", t.tx);
	lrx_json_u64(j, "delivered", t.delivered);
	lrx_json_u64(j, "dropped", t.dropped);
	lrx_json_u64(j, "tx_failed", t.tx_failed);
	lrx_json_u64(j, "held", t.held);
	lrx_json_object_begin(j, "drops");
	for (unsigned r = 0; r < LRX_DROP_MAX; r++)
		if (t.drops[r])
			lrx_json_u64(j, lrx_drop_reason_name(r), t.drops[r]);
	lrx_json_object_end(j);
	lrx_json_double(j, "mpps", per_second(t.rx, secs) / 1e6);
	if (t.rx)
		lrx_json_double(j, "ns_per_packet", secs * 1e9 / (double)t.rx);
	else
		lrx_json_null(j, "ns_per_packet");
	/* busy cycles per packet: TSC inside non-empty polls, all lcores;
	 * not measured at stats level off */
	if (t.rx && app->conf.pipeline.stats_level != LRX_STATS_OFF)
		lrx_json_double(j, "busy_cycles_per_packet",
				(double)t.busy_cycles / (double)t.rx);
	else
		lrx_json_null(j, "busy_cycles_per_packet");
	lrx_json_u64(j, "tsc_hz", rte_get_tsc_hz());
	summary_latency_json(app, j);
	summary_pmu_json(app, j);
	lrx_json_bool(j, "stopped_by_signal", app->stopped_by_signal);

	lrx_json_array_begin(j, "ports");
	for (unsigned i = 0; i < app->ports.n; i++) {
		const struct lrx_port *port = &app->ports.ports[i];
		const struct rte_eth_stats st = app->port_stats[i];
		char names[128];
		lrx_json_object_begin(j, NULL);
		lrx_json_u64(j, "index", port->index);
		lrx_json_u64(j, "port_id", port->port_id);
		lrx_json_string(j, "device", port->name);
		lrx_json_string(j, "driver", port->driver);
		lrx_json_u64(j, "ipackets", st.ipackets);
		lrx_json_u64(j, "opackets", st.opackets);
		lrx_json_u64(j, "ierrors", st.ierrors);
		lrx_json_u64(j, "oerrors", st.oerrors);
		lrx_json_u64(j, "imissed", st.imissed);
		lrx_json_u64(j, "rx_nombuf", st.rx_nombuf);
		lrx_json_bool(j, "link_up", port->link_up);
		lrx_json_u64(j, "link_down_events", port->link_down_events);
		lrx_json_double(j, "link_down_s", port->link_down_s);
		lrx_json_string(j, "offloads", lrx_offload_names(port->offloads_active, names, sizeof(names)));
		lrx_json_string(j, "offloads_missing", lrx_offload_names(port->offloads_missing, names, sizeof(names)));
		lrx_json_array_begin(j, "queues");
		for (unsigned w = 0; w < app->n_workers; w++)
			for (unsigned p = 0; p < app->workers[w]->n_polls; p++) {
				const struct lrx_worker_poll *poll = &app->workers[w]->polls[p];
				if (poll->port != port)
					continue;
				lrx_json_object_begin(j, NULL);
				lrx_json_u64(j, "queue", poll->queue);
				lrx_json_u64(j, "lcore", app->workers[w]->lcore_id);
				lrx_json_u64(j, "rx_packets", poll->stats.rx_packets);
				lrx_json_u64(j, "polls", poll->stats.polls);
				if (poll->queue < RTE_ETHDEV_QUEUE_STAT_CNTRS)
					lrx_json_u64(j, "q_ipackets", st.q_ipackets[poll->queue]);
				lrx_json_object_end(j);
			}
		lrx_json_array_end(j);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);

	lrx_json_array_begin(j, "lcores");
	for (unsigned w = 0; w < app->n_workers; w++) {
		const struct lrx_worker *wk = app->workers[w];
		lrx_json_object_begin(j, NULL);
		lrx_json_u64(j, "lcore", wk->lcore_id);
		lrx_json_u64(j, "polls", wk->polls_total);
		lrx_json_u64(j, "empty_polls", wk->empty_polls);
		lrx_json_u64(j, "packets", wk->rx_packets);
		lrx_json_u64(j, "busy_cycles", wk->busy_cycles);
		if (wk->measuring)
			lrx_json_u64(j, "measured_packets", wk->rx_packets - wk->measured_from);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);

	summary_json_stages(app, j);

	unsigned footprint = app->n_workers && app->workers[0]->pipeline
				     ? lrx_pipeline_footprint_bytes(app->workers[0]->pipeline)
				     : 0;
	lrx_json_u64(j, "footprint_bytes", footprint);
	lrx_json_object_begin(j, "topology");
	lrx_json_string(j, "cpu", app->topo.cpu_model);
	lrx_json_u64(j, "cores", app->topo.cores);
	lrx_json_u64(j, "hardware_threads", app->topo.pus);
	lrx_json_u64(j, "numa_nodes", app->topo.numa_nodes);
	if (app->topo.l1i_bytes)
		lrx_json_u64(j, "l1i_bytes", app->topo.l1i_bytes);
	else
		lrx_json_null(j, "l1i_bytes");
	lrx_json_u64(j, "l1i_line", app->topo.l1i_line);
	lrx_json_i64(j, "l1i_assoc", app->topo.l1i_assoc);
	lrx_json_string(j, "l1i_source", app->topo.l1i_source);
	lrx_json_u64(j, "l1d_bytes", app->topo.l1d_bytes);
	lrx_json_u64(j, "llc_bytes", app->topo.llc_bytes);
	lrx_json_object_end(j);
	lrx_json_u64(j, "mbufs_in_use_at_exit", app->mbufs_in_use_at_exit);
	lrx_json_u64(j, "driver_held_mbufs_at_exit", app->driver_held_mbufs_at_exit);
	lrx_json_u64(j, "mbufs_per_pool", app->ports.mbufs_per_pool);
	lrx_json_string(j, "config_file", app->conf.path);
	lrx_json_object_begin(j, "config");
	lrx_config_foreach(&app->conf, json_config_entry, j);
	lrx_json_object_end(j);
	lrx_json_object_end(j);
}

int lrx_summary_write_json(const struct lrx_app *app, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	struct lrx_json j;
	lrx_json_init(&j, f, true);
	lrx_summary_json(app, &j);
	if (fclose(f) != 0)
		return -errno;
	return 0;
}
