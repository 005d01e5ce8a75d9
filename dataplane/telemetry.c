/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_telemetry.h>

#include "stats.h"
#include "telemetry.h"

static const struct lrx_app *telemetry_app;

/* rte_telemetry (22.11) accepts names of [A-Za-z0-9_/] only: "port.0" ->
 * "port_0", a stage "a-b" -> "a_b" (with a "-" the whole entry was
 * refused: /listrx/stages came back empty) */
static void tel_name(char *dst, size_t len, const char *src)
{
	size_t i;
	for (i = 0; src[i] && i + 1 < len; i++) {
		char c = src[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '/';
		dst[i] = ok ? c : '_';
	}
	dst[i] = '\0';
}

static int tel_stats(const char *cmd __rte_unused, const char *params __rte_unused,
		     struct rte_tel_data *d)
{
	const struct lrx_app *app = telemetry_app;
	struct lrx_totals t;
	lrx_totals_read(app, &t);
	double secs = lrx_run_seconds(app);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx_packets", t.rx);
	rte_tel_data_add_dict_u64(d, "tx_packets", t.tx);
	rte_tel_data_add_dict_u64(d, "delivered", t.delivered);
	rte_tel_data_add_dict_u64(d, "dropped", t.dropped);
	rte_tel_data_add_dict_u64(d, "tx_failed", t.tx_failed);
	rte_tel_data_add_dict_u64(d, "held", t.held);
	rte_tel_data_add_dict_u64(d, "polls", t.polls);
	rte_tel_data_add_dict_u64(d, "empty_polls", t.empty_polls);
	rte_tel_data_add_dict_u64(d, "uptime_ms", (uint64_t)(secs * 1e3));
	struct rte_tel_data *drops = rte_tel_data_alloc();
	if (drops) {
		rte_tel_data_start_dict(drops);
		for (unsigned r = 0; r < LRX_DROP_MAX; r++)
			if (t.drops[r])
				rte_tel_data_add_dict_u64(drops, lrx_drop_reason_name(r), t.drops[r]);
		rte_tel_data_add_dict_container(d, "drops", drops, 0);
	}
	/* per port and queue: "port0_q0" -> packets received by listrx */
	struct rte_tel_data *queues = rte_tel_data_alloc();
	if (queues) {
		rte_tel_data_start_dict(queues);
		for (unsigned w = 0; w < app->n_workers; w++)
			for (unsigned p = 0; p < app->workers[w]->n_polls; p++) {
				const struct lrx_worker_poll *poll = &app->workers[w]->polls[p];
				char name[64];
				snprintf(name, sizeof(name), "port%u_q%u", poll->port->index,
					 poll->queue);
				rte_tel_data_add_dict_u64(queues, name, poll->stats.rx_packets);
			}
		rte_tel_data_add_dict_container(d, "queues", queues, 0);
	}
	return 0;
}

/* /listrx/config: one dict per section ("port.0" as "port_0"), key -> value */
struct tel_config_arg {
	struct rte_tel_data *d;
	struct rte_tel_data *section;
	char section_name[64];
};

static void tel_config_flush(struct tel_config_arg *a)
{
	if (a->section)
		rte_tel_data_add_dict_container(a->d, a->section_name, a->section, 0);
	a->section = NULL;
}

static void tel_config_entry(void *arg, const char *section, const char *key,
			     const char *value)
{
	struct tel_config_arg *a = arg;
	char name[64];
	tel_name(name, sizeof(name), section);
	if (!a->section || strcmp(name, a->section_name) != 0) {
		tel_config_flush(a);
		a->section = rte_tel_data_alloc();
		if (!a->section)
			return;
		rte_tel_data_start_dict(a->section);
		snprintf(a->section_name, sizeof(a->section_name), "%s", name);
	}
	tel_name(name, sizeof(name), key);
	rte_tel_data_add_dict_string(a->section, name, value);
}

static int tel_config(const char *cmd __rte_unused, const char *params __rte_unused,
		      struct rte_tel_data *d)
{
	struct tel_config_arg a = {.d = d};
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "config_file", telemetry_app->conf.path);
	lrx_config_foreach(&telemetry_app->conf, tel_config_entry, &a);
	tel_config_flush(&a);
	return 0;
}

/* Every worker reads its counters around stage calls (set once, before
 * its first poll). */
static bool tel_stage_counters_on(const struct lrx_app *app)
{
	if (!app->conf.pmu.stages || app->n_workers == 0)
		return false;
	for (unsigned w = 0; w < app->n_workers; w++)
		if (!app->workers[w]->pmu || !app->workers[w]->pmu->stages_on)
			return false;
	return true;
}

static int tel_stages(const char *cmd __rte_unused, const char *params __rte_unused,
		      struct rte_tel_data *d)
{
	const struct lrx_app *app = telemetry_app;
	rte_tel_data_start_dict(d);
	const struct lrx_pipeline *p0 = app->n_workers ? app->workers[0]->pipeline : NULL;
	unsigned n = p0 ? lrx_pipeline_stage_count(p0) : 0;
	for (unsigned s = 0; s < n; s++) {
		struct lrx_stage_stats st;
		lrx_stage_totals(app, s, &st);
		struct rte_tel_data *sd = rte_tel_data_alloc();
		if (!sd)
			return -ENOMEM;
		rte_tel_data_start_dict(sd);
		rte_tel_data_add_dict_u64(sd, "calls", st.calls);
		rte_tel_data_add_dict_u64(sd, "packets", st.packets);
		if (app->conf.pipeline.stats_level == LRX_STATS_CYCLES)
			rte_tel_data_add_dict_u64(sd, "cycles", st.cycles);
		uint64_t drops = 0;
		for (unsigned r = 0; r < LRX_DROP_MAX; r++)
			drops += st.drops[r];
		rte_tel_data_add_dict_u64(sd, "dropped", drops);
		rte_tel_data_add_dict_u64(sd, "tx", st.tx);
		rte_tel_data_add_dict_u64(sd, "consumed", st.consumed);
		if (tel_stage_counters_on(app) && lrx_pipeline_stage_attributable(p0, s))
			for (unsigned e = 0; e < app->conf.pmu.n_events; e++) {
				/* [pmu] stages: what the stage was charged so far */
				char key[64];
				snprintf(key, sizeof(key), "pmu_%s", app->conf.pmu.events[e].name);
				tel_name(key, sizeof(key), key);
				rte_tel_data_add_dict_u64(sd, key, st.pmu[e]);
			}
		char label[64], name[64];
		snprintf(label, sizeof(label), "%u_%s", s, lrx_pipeline_stage_name(p0, s));
		tel_name(name, sizeof(name), label);
		rte_tel_data_add_dict_container(d, name, sd, 0);
	}
	return 0;
}

static int tel_lcores(const char *cmd __rte_unused, const char *params __rte_unused,
		      struct rte_tel_data *d)
{
	const struct lrx_app *app = telemetry_app;
	rte_tel_data_start_dict(d);
	for (unsigned w = 0; w < app->n_workers; w++) {
		const struct lrx_worker *wk = app->workers[w];
		struct rte_tel_data *ld = rte_tel_data_alloc();
		if (!ld)
			return -ENOMEM;
		rte_tel_data_start_dict(ld);
		rte_tel_data_add_dict_u64(ld, "polls", wk->polls_total);
		rte_tel_data_add_dict_u64(ld, "empty_polls", wk->empty_polls);
		rte_tel_data_add_dict_u64(ld, "packets", wk->rx_packets);
		char name[32];
		snprintf(name, sizeof(name), "lcore%u", wk->lcore_id);
		rte_tel_data_add_dict_container(d, name, ld, 0);
	}
	return 0;
}

/* /listrx/latency: the lcores' histograms merged while they run (read
 * without locks, like the other counters: a percentile may miss the
 * samples of the poll in progress) */
static int tel_latency(const char *cmd __rte_unused, const char *params __rte_unused,
		       struct rte_tel_data *d)
{
	struct lrx_latency total;
	rte_tel_data_start_dict(d);
	bool on = lrx_latency_totals(telemetry_app, &total);
	rte_tel_data_add_dict_string(d, "recording", on ? "on" : "off (--latency)");
	if (!on)
		return 0;
	uint64_t hz = rte_get_tsc_hz();
	uint64_t samples = lrx_latency_hist_count(&total.hist);
	rte_tel_data_add_dict_u64(d, "samples", samples);
	if (!samples)
		return 0;
	static const struct {
		const char *name;
		double q;
	} quantiles[] = {{"p50_ns", 0.5}, {"p99_ns", 0.99}, {"p999_ns", 0.999}};
	for (unsigned i = 0; i < RTE_DIM(quantiles); i++)
		rte_tel_data_add_dict_u64(d, quantiles[i].name,
					  (uint64_t)lrx_latency_ticks_to_ns(
						  lrx_latency_hist_quantile(&total.hist, quantiles[i].q), hz));
	return 0;
}

int lrx_telemetry_register(const struct lrx_app *app)
{
	telemetry_app = app;
	int rc = rte_telemetry_register_cmd("/listrx/stats", tel_stats,
					    "listrx totals, drops by reason, per-queue rx. No parameters");
	rc = rc ?: rte_telemetry_register_cmd("/listrx/config", tel_config,
					      "listrx effective configuration. No parameters");
	rc = rc ?: rte_telemetry_register_cmd("/listrx/stages", tel_stages,
					      "listrx per-stage calls, packets, cycles, drops. No parameters");
	rc = rc ?: rte_telemetry_register_cmd("/listrx/lcores", tel_lcores,
					      "listrx per-lcore polls and packets. No parameters");
	rc = rc ?: rte_telemetry_register_cmd("/listrx/latency", tel_latency,
					      "listrx RX timestamp to verdict latency (--latency). No parameters");
	return rc;
}
