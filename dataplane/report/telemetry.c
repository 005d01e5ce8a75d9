/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "summary.h"
#include "telemetry.h"
#include "trace.h"

static lrx_telemetry_fill_fn telemetry_fill;
static const void *telemetry_arg;

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

static void tel_u64(struct rte_tel_data *d, const char *prefix, const char *name,
		    uint64_t value)
{
	char key[96], clean[96];
	snprintf(key, sizeof(key), "%s%s", prefix, name);
	tel_name(clean, sizeof(clean), key);
	rte_tel_data_add_dict_u64(d, clean, value);
}

/* ---- every command behind one gate --------------------------------------------
 * rte_telemetry (22.11) cannot unregister a command, and its threads serve
 * clients until the process exits (rte_eal_cleanup leaves them running):
 * a command running while the app frees its ports, pipelines and maps
 * would read freed memory. Every /listrx command is registered through
 * tel_register and runs inside the gate's read lock; lrx_telemetry_close
 * takes the write lock (writer-preferring: clients asking in a loop cannot
 * hold it off), so it returns once the commands in flight are done, and
 * later ones are refused without touching the run. */
#define TEL_MAX_COMMANDS 64

static struct {
	char name[RTE_TEL_MAX_STRING_LEN];
	telemetry_cb fn;
} tel_commands[TEL_MAX_COMMANDS];
static unsigned tel_n_commands;
static pthread_rwlock_t tel_gate = PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP;
static bool tel_closed;

static void tel_shutting_down(struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "result", "error");
	rte_tel_data_add_dict_string(d, "error", "ESHUTDOWN");
	rte_tel_data_add_dict_int(d, "errno", ESHUTDOWN);
	rte_tel_data_add_dict_string(d, "message", "listrx is shutting down: the run has "
				     "ended, its ports, pipelines and maps are being freed");
}

static int tel_gated(const char *cmd, const char *params, struct rte_tel_data *d)
{
	telemetry_cb fn = NULL;
	int rc = 0;
	pthread_rwlock_rdlock(&tel_gate);
	for (unsigned i = 0; i < tel_n_commands && !fn; i++)
		if (!strcmp(tel_commands[i].name, cmd))
			fn = tel_commands[i].fn;
	if (tel_closed)
		tel_shutting_down(d);
	else
		rc = fn ? fn(cmd, params, d) : -ENOENT; /* registered: always found */
	pthread_rwlock_unlock(&tel_gate);
	return rc;
}

static int tel_register(const char *cmd, telemetry_cb fn, const char *help)
{
	pthread_rwlock_wrlock(&tel_gate);
	bool room = tel_n_commands < TEL_MAX_COMMANDS;
	if (room) {
		snprintf(tel_commands[tel_n_commands].name, sizeof(tel_commands[0].name), "%s", cmd);
		tel_commands[tel_n_commands++].fn = fn;
	}
	pthread_rwlock_unlock(&tel_gate);
	return room ? rte_telemetry_register_cmd(cmd, tel_gated, help) : -ENOSPC;
}

void lrx_telemetry_close(void)
{
	pthread_rwlock_wrlock(&tel_gate);
	tel_closed = true;
	pthread_rwlock_unlock(&tel_gate);
}

/* ---- renderers ---------------------------------------------------------------- */

static void tel_drops(const struct lrx_report *r, struct rte_tel_data *d)
{
	struct rte_tel_data *drops = rte_tel_data_alloc();
	if (!drops)
		return;
	rte_tel_data_start_dict(drops);
	for (unsigned i = 0; i < LRX_DROP_MAX; i++)
		if (r->totals.drops[i])
			rte_tel_data_add_dict_u64(drops, lrx_drop_reason_name(i), r->totals.drops[i]);
	rte_tel_data_add_dict_container(d, "drops", drops, 0);
}

/* per port and queue: "port0_q0" -> packets received by listrx */
static void tel_queues(const struct lrx_report *r, struct rte_tel_data *d)
{
	struct rte_tel_data *queues = rte_tel_data_alloc();
	if (!queues)
		return;
	rte_tel_data_start_dict(queues);
	for (unsigned q = 0; q < r->n_queues; q++) {
		const struct lrx_report_queue *rq = &r->queues[q];
		char name[64];
		snprintf(name, sizeof(name), "port%u_q%u", r->ports[rq->port].index, rq->queue);
		rte_tel_data_add_dict_u64(queues, name, rq->rx_packets);
	}
	rte_tel_data_add_dict_container(d, "queues", queues, 0);
}

void lrx_telemetry_stats(const struct lrx_report *r, struct rte_tel_data *d)
{
	const struct lrx_totals *t = &r->totals;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "rx_packets", t->rx);
	rte_tel_data_add_dict_u64(d, "tx_packets", t->tx);
	rte_tel_data_add_dict_u64(d, "delivered", t->delivered);
	rte_tel_data_add_dict_u64(d, "dropped", t->dropped);
	rte_tel_data_add_dict_u64(d, "tx_failed", t->tx_failed);
	rte_tel_data_add_dict_u64(d, "merged_segments", t->merged);
	rte_tel_data_add_dict_u64(d, "made", t->made);
	rte_tel_data_add_dict_u64(d, "held", t->held_now);
	rte_tel_data_add_dict_u64(d, "polls", t->polls);
	rte_tel_data_add_dict_u64(d, "empty_polls", t->empty_polls);
	rte_tel_data_add_dict_u64(d, "uptime_ms", (uint64_t)(r->duration_s * 1e3));
	tel_drops(r, d);
	tel_queues(r, d);
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

void lrx_telemetry_config(const struct lrx_report *r, struct rte_tel_data *d)
{
	struct tel_config_arg a = {.d = d};
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "config_file", r->config_path);
	lrx_cfgfile_foreach(r->config, tel_config_entry, &a);
	tel_config_flush(&a);
}

/* One stage as a flat dict (rte_telemetry nests one level): the engine's
 * counts, drops as "drop_REASON", the stage's own counters as
 * "counter_NAME" (prefixed: a stage counter may be called "tx"). */
static void tel_stage(const struct lrx_report *r, const struct lrx_report_stage *s,
		      struct rte_tel_data *sd)
{
	rte_tel_data_start_dict(sd);
	rte_tel_data_add_dict_u64(sd, "calls", s->stats.calls);
	rte_tel_data_add_dict_u64(sd, "packets", s->stats.packets);
	if (r->stats_level == LRX_STATS_CYCLES)
		rte_tel_data_add_dict_u64(sd, "cycles", s->stats.cycles);
	rte_tel_data_add_dict_u64(sd, "dropped", s->dropped);
	rte_tel_data_add_dict_u64(sd, "tx", s->stats.tx);
	rte_tel_data_add_dict_u64(sd, "consumed", s->stats.consumed);
	rte_tel_data_add_dict_u64(sd, "redirected", s->stats.redirected);
	rte_tel_data_add_dict_u64(sd, "delivered", s->stats.delivered);
	/* [pmu] stages: what the stage was charged so far */
	if (r->pmu.stages_live && s->attributable)
		for (unsigned e = 0; e < r->pmu.conf.n_events; e++)
			tel_u64(sd, "pmu_", r->pmu.conf.events[e].name, s->stats.pmu[e]);
	for (unsigned i = 0; i < LRX_DROP_MAX; i++)
		if (s->stats.drops[i])
			tel_u64(sd, "drop_", lrx_drop_reason_name(i), s->stats.drops[i]);
	for (unsigned c = 0; c < s->n_counters; c++)
		tel_u64(sd, "counter_", s->counters[c].name, s->counters[c].value);
}

/* a dict per stage into d, named "N_name", each filled by fill */
static int tel_stage_dicts(const struct lrx_report *r, struct rte_tel_data *d,
		      void (*fill)(const struct lrx_report *,
				   const struct lrx_report_stage *,
				   struct rte_tel_data *))
{
	for (unsigned i = 0; i < r->n_stages; i++) {
		struct rte_tel_data *sd = rte_tel_data_alloc();
		if (!sd)
			return -ENOMEM;
		fill(r, &r->stages[i], sd);
		char label[96], name[96];
		snprintf(label, sizeof(label), "%u_%s", i, r->stages[i].name);
		tel_name(name, sizeof(name), label);
		rte_tel_data_add_dict_container(d, name, sd, 0);
	}
	return 0;
}

int lrx_telemetry_stages(const struct lrx_report *r, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	return tel_stage_dicts(r, d, tel_stage);
}

int lrx_telemetry_lcores(const struct lrx_report *r, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	for (unsigned w = 0; w < r->n_lcores; w++) {
		const struct lrx_report_lcore *l = &r->lcores[w];
		struct rte_tel_data *ld = rte_tel_data_alloc();
		if (!ld)
			return -ENOMEM;
		rte_tel_data_start_dict(ld);
		rte_tel_data_add_dict_u64(ld, "polls", l->polls);
		rte_tel_data_add_dict_u64(ld, "empty_polls", l->empty_polls);
		rte_tel_data_add_dict_u64(ld, "packets", l->packets);
		char name[32];
		snprintf(name, sizeof(name), "lcore%u", l->lcore);
		rte_tel_data_add_dict_container(d, name, ld, 0);
	}
	return 0;
}

/* the lcores' histograms merged while they run (a percentile may miss
 * the samples of the poll in progress) */
void lrx_telemetry_latency(const struct lrx_report *r, struct rte_tel_data *d)
{
	const struct lrx_report_latency *s = &r->latency;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "recording", s->on ? "on" : "off (--latency)");
	if (!s->on)
		return;
	rte_tel_data_add_dict_u64(d, "samples", s->samples);
	if (!s->samples)
		return;
	rte_tel_data_add_dict_u64(d, "p50_ns", (uint64_t)s->p50_ns);
	rte_tel_data_add_dict_u64(d, "p99_ns", (uint64_t)s->p99_ns);
	rte_tel_data_add_dict_u64(d, "p999_ns", (uint64_t)s->p999_ns);
}

/* /listrx/runtime: a period (a report minus the one at the last clear) as
 * VPP's "show runtime": per stage the period's counts and rates. rates
 * with a fraction are strings ("%.2f": rte_telemetry dicts hold no
 * doubles); the counts are exact. */
static void tel_rate(struct rte_tel_data *d, const char *prefix, const char *name,
		     uint64_t count, double seconds)
{
	tel_u64(d, prefix, name, seconds > 0 ? (uint64_t)((double)count / seconds + 0.5) : 0);
}

static void tel_runtime_stage(const struct lrx_report *p, const struct lrx_report_stage *s,
			      struct rte_tel_data *sd)
{
	char text[32];
	rte_tel_data_start_dict(sd);
	rte_tel_data_add_dict_u64(sd, "calls", s->stats.calls);
	rte_tel_data_add_dict_u64(sd, "packets", s->stats.packets);
	rte_tel_data_add_dict_u64(sd, "dropped", s->dropped);
	tel_rate(sd, "", "packets_per_s", s->stats.packets, p->duration_s);
	snprintf(text, sizeof(text), "%.2f",
		 s->stats.calls ? (double)s->stats.packets / (double)s->stats.calls : 0.0);
	rte_tel_data_add_dict_string(sd, "vectors_per_call", text);
	double cpp, npp;
	if (p->stats_level == LRX_STATS_CYCLES) {
		rte_tel_data_add_dict_u64(sd, "cycles", s->stats.cycles);
		snprintf(text, sizeof(text), "%.2f",
			 lrx_report_stage_cost(p, s, &cpp, &npp) ? npp : 0.0);
		rte_tel_data_add_dict_string(sd, "ns_per_packet", text);
	}
	tel_rate(sd, "", "dropped_per_s", s->dropped, p->duration_s);
	for (unsigned i = 0; i < LRX_DROP_MAX; i++)
		if (s->stats.drops[i]) {
			char name[64];
			snprintf(name, sizeof(name), "%s_per_s", lrx_drop_reason_name(i));
			tel_rate(sd, "drop_", name, s->stats.drops[i], p->duration_s);
		}
}

int lrx_telemetry_runtime(const struct lrx_report *period, const struct lrx_totals *totals,
			  struct rte_tel_data *d)
{
	const struct lrx_totals *t = &period->totals;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "period_ms", (uint64_t)(period->duration_s * 1e3 + 0.5));
	tel_rate(d, "", "rx_per_s", t->rx, period->duration_s);
	tel_rate(d, "", "tx_per_s", t->tx, period->duration_s);
	tel_rate(d, "", "delivered_per_s", t->delivered, period->duration_s);
	tel_rate(d, "", "dropped_per_s", t->dropped, period->duration_s);
	rte_tel_data_add_dict_u64(d, "rx_packets", totals->rx); /* a clear keeps these */
	rte_tel_data_add_dict_u64(d, "dropped", totals->dropped);
	return tel_stage_dicts(period, d, tel_runtime_stage);
}

int lrx_telemetry_maps(const struct lrx_report *r, const char *stage, struct rte_tel_data *d)
{
	rte_tel_data_start_dict(d);
	for (unsigned i = 0; i < r->n_maps; i++) {
		const struct lrx_report_map *m = &r->maps[i];
		if (stage && strcmp(m->stage, stage) != 0)
			continue;
		size_t entry = (size_t)m->key_size + m->value_size;
		bool array = strstr(m->type, "array") != NULL;
		struct rte_tel_data *md = rte_tel_data_alloc();
		if (!md)
			return -ENOMEM;
		rte_tel_data_start_array(md, RTE_TEL_STRING_VAL);
		char head[RTE_TEL_MAX_STRING_LEN];
		snprintf(head, sizeof(head), "%s key %u value %u max_entries %u entries %u",
			 m->type, m->key_size, m->value_size, m->max_entries, m->n_entries);
		rte_tel_data_add_array_string(md, head);
		uint32_t shown = 0, more = 0;
		for (uint32_t e = 0; e < m->n_entries; e++) {
			const uint8_t *k = m->data + e * entry, *v = k + m->key_size;
			uint8_t any = 0;
			for (uint32_t b = 0; array && b < m->value_size; b++)
				any |= v[b];
			if (array && !any)
				continue;
			if (shown == LRX_TELEMETRY_MAP_ENTRIES) {
				more++;
				continue;
			}
			char line[RTE_TEL_MAX_STRING_LEN];
			lrx_map_entry_line(m, k, line, sizeof(line));
			rte_tel_data_add_array_string(md, line);
			shown++;
		}
		if (more) {
			snprintf(head, sizeof(head), "... %u more", more);
			rte_tel_data_add_array_string(md, head);
		}
		char label[128], name[128];
		snprintf(label, sizeof(label), "%u_%s_%s", m->lcore, m->stage, m->name);
		tel_name(name, sizeof(name), label);
		if (rte_tel_data_add_dict_container(d, name, md, 0) < 0)
			rte_tel_data_free(md);
	}
	return 0;
}

/* /listrx/trace: per packet (packet_N) its events so far, as the text
 * summary prints them (a packet still in the pipeline shows the events it
 * has). rte_telemetry (DPDK 22.11) cuts strings at RTE_TEL_MAX_STRING_LEN
 * and silently leaves out what does not fit its 16 KB reply: a longer
 * line is split at a space into continuation strings ("  " first), and
 * the packets that would not fit are counted in "more", not lost. */
static const struct lrx_trace *telemetry_trace;
#define TEL_REPLY_BUDGET (16 * 1024 - 1024) /* MAX_OUTPUT_LEN, less a margin */

/* Splits text into strings of at most RTE_TEL_MAX_STRING_LEN - 1
 * characters; adds them to array a when a is not NULL. Returns the JSON
 * bytes they take ("...", each). */
static size_t tel_wrapped(struct rte_tel_data *a, const char *text)
{
	size_t bytes = 0, len = strlen(text);
	bool first = true;
	while (len > 0) {
		char chunk[RTE_TEL_MAX_STRING_LEN];
		size_t prefix = first ? 0 : 2, room = sizeof(chunk) - 1 - prefix, n = len;
		if (n > room) {
			n = room;
			while (n > room / 2 && text[n] != ' ')
				n--; /* at a space, unless a word is that long */
		}
		snprintf(chunk, sizeof(chunk), "%s%.*s", first ? "" : "  ", (int)n, text);
		if (a)
			rte_tel_data_add_array_string(a, chunk);
		bytes += strlen(chunk) + 3;
		text += n;
		len -= n;
		while (*text == ' ' && len > 0) {
			text++;
			len--;
		}
		first = false;
	}
	return bytes;
}

static int tel_trace(const char *cmd __rte_unused, const char *params __rte_unused,
		     struct rte_tel_data *d)
{
	const struct lrx_trace *t = telemetry_trace;
	rte_tel_data_start_dict(d);
	uint32_t n = lrx_trace_count(t);
	size_t used = 64;
	for (uint32_t p = 0; p < n; p++) {
		const struct lrx_trace_packet *tp = &t->pkt[p];
		unsigned n_events = RTE_MIN(tp->n_events, (unsigned)LRX_TRACE_EVENTS);
		char line[512], name[32];
		snprintf(name, sizeof(name), "packet_%u", p);
		size_t cost = strlen(name) + 6;
		for (unsigned i = 0; i < n_events; i++) {
			lrx_trace_event_line(t, tp, i, line, sizeof(line));
			cost += tel_wrapped(NULL, line);
		}
		if (used + cost > TEL_REPLY_BUDGET || p + 1 == RTE_TEL_MAX_DICT_ENTRIES) {
			char more[RTE_TEL_MAX_STRING_LEN];
			snprintf(more, sizeof(more),
				 "%u more packet(s) (packet_%u on): a telemetry reply holds 16 KB; the summary at exit has them all",
				 n - p, p);
			rte_tel_data_add_dict_string(d, "more", more);
			break;
		}
		struct rte_tel_data *pd = rte_tel_data_alloc();
		if (!pd)
			return -ENOMEM;
		rte_tel_data_start_array(pd, RTE_TEL_STRING_VAL);
		for (unsigned i = 0; i < n_events; i++) {
			lrx_trace_event_line(t, tp, i, line, sizeof(line));
			tel_wrapped(pd, line);
		}
		if (rte_tel_data_add_dict_container(d, name, pd, 0) < 0)
			rte_tel_data_free(pd);
		used += cost;
	}
	return 0;
}

int lrx_telemetry_register_trace(const struct lrx_trace *t)
{
	telemetry_trace = t;
	return tel_register("/listrx/trace", tel_trace,
					  "listrx --trace: the traced packets' events so far. No parameters");
}

static lrx_telemetry_fill_fn telemetry_fill_maps;

/* A stage's name in a command: DPDK takes letters, digits, '_' and '/'
 * only (rte_telemetry_register_cmd), so '-' is written '_' */
static void tel_cmd_name(char *out, size_t len, const char *stage)
{
	snprintf(out, len, "%s", stage);
	for (char *c = out; *c; c++)
		if (*c == '-')
			*c = '_';
}

/* /listrx/STAGE/maps: the stage is the command's middle part */
static int tel_maps(const char *cmd, const char *params __rte_unused, struct rte_tel_data *d)
{
	char stage[LRX_NAME_LEN], name[LRX_NAME_LEN];
	const char *at = cmd + strlen("/listrx/");
	snprintf(stage, sizeof(stage), "%.*s", (int)strcspn(at, "/"), at);
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		tel_cmd_name(name, sizeof(name), lrx_stage_at(i)->name);
		if (!strcmp(name, stage))
			snprintf(stage, sizeof(stage), "%s", lrx_stage_at(i)->name);
	}
	struct lrx_report *r = lrx_report_alloc();
	if (!r)
		return -ENOMEM;
	telemetry_fill_maps(r, telemetry_arg);
	int rc = lrx_telemetry_maps(r, stage, d);
	lrx_report_free(r);
	return rc;
}

int lrx_telemetry_register_maps(lrx_telemetry_fill_fn fill, const void *arg)
{
	telemetry_fill_maps = fill;
	telemetry_arg = arg;
	/* every stage that has maps (stage.h: map_at), whether or not it runs */
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		const struct lrx_stage *s = lrx_stage_at(i);
		char cmd[RTE_TEL_MAX_STRING_LEN], help[RTE_TEL_MAX_STRING_LEN];
		if (!s->map_at)
			continue;
		char name[LRX_NAME_LEN];
		tel_cmd_name(name, sizeof(name), s->name);
		snprintf(cmd, sizeof(cmd), "/listrx/%s/maps", name);
		snprintf(help, sizeof(help), "listrx: the %s stage's maps, as bpftool map dump. No parameters",
			 s->name);
		int rc = tel_register(cmd, tel_maps, help);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static lrx_telemetry_map_write_fn telemetry_map_write_fn;
static const void *telemetry_map_write_arg;

void lrx_telemetry_map_write(const struct lrx_stage_map_write *w, unsigned instances,
			     const char *stage, struct rte_tel_data *d)
{
	int rc = w->rc;
	char message[RTE_TEL_MAX_STRING_LEN];

	/* a dict's string holds 127 characters: the messages fit */
	snprintf(message, sizeof(message), "%.*s", (int)sizeof(message) - 1, w->err);
	if (rc == 0 && instances == 0) {
		rc = -ENOENT;
		snprintf(message, sizeof(message), "no %s stage runs (the run has not "
			 "started, has ended, or its pipeline has none)", stage);
	} else if (rc == 0 && w->found == 0) {
		rc = -ENOENT;
		snprintf(message, sizeof(message), "no eBPF map of that name in the %s "
			 "stage (/listrx/%s/maps lists them)", stage, stage);
	}
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_string(d, "op", w->del ? "delete" : "update");
	rte_tel_data_add_dict_string(d, "params", w->params ? w->params : "");
	rte_tel_data_add_dict_string(d, "result", rc == 0 ? "ok" : "error");
	rte_tel_data_add_dict_u64(d, "instances", instances);
	rte_tel_data_add_dict_u64(d, "maps", w->found);
	rte_tel_data_add_dict_u64(d, "written", w->written);
	if (rc == 0)
		return;
	const char *name = strerrorname_np(-rc);
	rte_tel_data_add_dict_string(d, "error", name ? name : "unknown");
	rte_tel_data_add_dict_int(d, "errno", -rc);
	rte_tel_data_add_dict_string(d, "message", message);
}

/* /listrx/STAGE/map_update and map_delete: the stage is the middle part;
 * an error is a reply too (a handler's negative return is a bare null) */
static int tel_map_write(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char stage[LRX_NAME_LEN], name[LRX_NAME_LEN];
	const char *at = cmd + strlen("/listrx/");
	const char *op = strrchr(cmd, '/');
	struct lrx_stage_map_write w = {.params = params ? params : "",
					.del = op && strcmp(op, "/map_delete") == 0};
	snprintf(stage, sizeof(stage), "%.*s", (int)strcspn(at, "/"), at);
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		tel_cmd_name(name, sizeof(name), lrx_stage_at(i)->name);
		if (!strcmp(name, stage))
			snprintf(stage, sizeof(stage), "%s", lrx_stage_at(i)->name);
	}
	unsigned instances = telemetry_map_write_fn(stage, &w, telemetry_map_write_arg);
	lrx_telemetry_map_write(&w, instances, stage, d);
	return 0;
}

int lrx_telemetry_register_map_write(lrx_telemetry_map_write_fn fn, const void *arg)
{
	telemetry_map_write_fn = fn;
	telemetry_map_write_arg = arg;
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		const struct lrx_stage *s = lrx_stage_at(i);
		char name[LRX_NAME_LEN], cmd[RTE_TEL_MAX_STRING_LEN], help[RTE_TEL_MAX_STRING_LEN];
		if (!s->map_write)
			continue;
		tel_cmd_name(name, sizeof(name), s->name);
		snprintf(cmd, sizeof(cmd), "/listrx/%s/map_update", name);
		snprintf(help, sizeof(help), "listrx: bpftool map update into the %s stage's maps. "
			 "Parameters: NAME:KEY=VALUE[,any|noexist|exist]", s->name);
		int rc = tel_register(cmd, tel_map_write, help);
		snprintf(cmd, sizeof(cmd), "/listrx/%s/map_delete", name);
		snprintf(help, sizeof(help), "listrx: bpftool map delete from the %s stage's maps. "
			 "Parameters: NAME:KEY", s->name);
		rc = rc ?: tel_register(cmd, tel_map_write, help);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- commands: a fresh report per request ------------------------------------ */

enum tel_view { TEL_STATS, TEL_CONFIG, TEL_STAGES, TEL_LCORES, TEL_LATENCY };

static int tel_render(enum tel_view view, struct rte_tel_data *d)
{
	struct lrx_report *r = lrx_report_alloc();
	if (!r)
		return -ENOMEM;
	telemetry_fill(r, telemetry_arg);
	int rc = 0;
	switch (view) {
	case TEL_STATS: lrx_telemetry_stats(r, d); break;
	case TEL_CONFIG: lrx_telemetry_config(r, d); break;
	case TEL_STAGES: rc = lrx_telemetry_stages(r, d); break;
	case TEL_LCORES: rc = lrx_telemetry_lcores(r, d); break;
	case TEL_LATENCY: lrx_telemetry_latency(r, d); break;
	}
	lrx_report_free(r);
	return rc;
}

/* The report at the last /listrx/runtime,clear (NULL: the run's start).
 * Telemetry serves each client from its own thread: one lock. */
static pthread_mutex_t runtime_lock = PTHREAD_MUTEX_INITIALIZER;
static struct lrx_report *runtime_base;

static int tel_runtime(const char *cmd __rte_unused, const char *params,
		       struct rte_tel_data *d)
{
	bool clear = params && strcmp(params, "clear") == 0;
	if (params && *params && !clear)
		return -EINVAL; /* the only parameter is "clear" */
	struct lrx_report *r = lrx_report_alloc();
	struct lrx_totals totals;
	if (!r)
		return -ENOMEM;
	/* taken and subtracted under the lock: a report taken before another
	 * client's clear would be older than its base (wrapped counts) */
	pthread_mutex_lock(&runtime_lock);
	telemetry_fill(r, telemetry_arg);
	totals = r->totals;
	if (clear) {
		if (!runtime_base)
			runtime_base = lrx_report_alloc();
		if (runtime_base)
			*runtime_base = *r;
	}
	if (runtime_base)
		lrx_report_sub(r, runtime_base);
	pthread_mutex_unlock(&runtime_lock);
	int rc = clear && !runtime_base ? -ENOMEM : lrx_telemetry_runtime(r, &totals, d);
	lrx_report_free(r);
	return rc;
}

#define TEL_COMMAND(fn, view)                                                       \
	static int fn(const char *cmd __rte_unused, const char *params __rte_unused, \
		      struct rte_tel_data *d)                                       \
	{                                                                            \
		return tel_render(view, d);                                          \
	}
TEL_COMMAND(tel_stats, TEL_STATS)
TEL_COMMAND(tel_config, TEL_CONFIG)
TEL_COMMAND(tel_stages, TEL_STAGES)
TEL_COMMAND(tel_lcores, TEL_LCORES)
TEL_COMMAND(tel_latency, TEL_LATENCY)

int lrx_telemetry_register(lrx_telemetry_fill_fn fill, const void *arg)
{
	telemetry_fill = fill;
	telemetry_arg = arg;
	int rc = tel_register("/listrx/stats", tel_stats,
					    "listrx totals, drops by reason, per-queue rx. No parameters");
	rc = rc ?: tel_register("/listrx/config", tel_config,
					      "listrx effective configuration. No parameters");
	rc = rc ?: tel_register("/listrx/stages", tel_stages,
					      "listrx per-stage calls, packets, cycles, drops, stage counters. No parameters");
	rc = rc ?: tel_register("/listrx/lcores", tel_lcores,
					      "listrx per-lcore polls and packets. No parameters");
	rc = rc ?: tel_register("/listrx/latency", tel_latency,
					      "listrx RX timestamp to verdict latency (--latency). No parameters");
	rc = rc ?: tel_register("/listrx/runtime", tel_runtime,
					      "listrx per-stage rates since start or last clear. Parameter: clear");
	return rc;
}
