/* SPDX-License-Identifier: BSD-3-Clause
 * An interleaved run's windows (windows.h) in the summary: per lcore, each
 * engine's fates and window totals, the bookkeeping's cost, and the
 * windows themselves in the JSON (one array per field), which
 * listrx-bench pairs and filters (docs/measuring.md). */
#include <stdlib.h>
#include <string.h>

#include "summary.h"

/* The lcore entries of r from index first: the lcore's engines (the
 * first one holds the windows, the followers come right after it). */
static unsigned lcore_engines(const struct lrx_report *r, unsigned first)
{
	unsigned n = 1;
	while (first + n < r->n_lcores && r->lcores[first + n].follower)
		n++;
	return n;
}

struct engine_windows {
	uint64_t windows, packets, cycles, busy_cycles, empty_polls;
};

static void windows_per_engine(const struct lrx_window_log *log, struct engine_windows *out)
{
	memset(out, 0, sizeof(*out) * log->n_engines);
	for (uint64_t k = 0; k < log->n; k++) {
		const struct lrx_window *w = &log->windows[k];
		out[w->engine].windows++;
		out[w->engine].packets += w->packets;
		out[w->engine].cycles += w->cycles;
		out[w->engine].busy_cycles += w->busy_cycles;
		out[w->engine].empty_polls += w->empty_polls;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* median of a field over the windows (0 when none or out of memory) */
static uint64_t window_median(const struct lrx_window_log *log, bool gap)
{
	uint64_t *v = log->n ? malloc(log->n * sizeof(*v)) : NULL;
	if (!v)
		return 0;
	for (uint64_t k = 0; k < log->n; k++)
		v[k] = gap ? log->windows[k].gap_cycles : log->windows[k].cycles;
	qsort(v, log->n, sizeof(*v), cmp_u64);
	uint64_t m = v[log->n / 2];
	free(v);
	return m;
}

static void text_signals(const struct lrx_window_log *log, FILE *out)
{
	uint64_t niv = 0, delayed = 0;
	for (uint64_t k = 0; k < log->n; k++) {
		niv += log->windows[k].nivcsw != 0;
		delayed += log->windows[k].run_delay_ns != 0;
	}
	const struct lrx_thread_probe *p = &log->probe;
	fprintf(out, "signals: ");
	if (p->rusage_ok)
		fprintf(out, "%lu window(s) with an involuntary context switch, ", (unsigned long)niv);
	if (p->schedstat_ok)
		fprintf(out, "%lu with run-queue wait, ", (unsigned long)delayed);
	fprintf(out, "%s%s\n", p->why[0] ? "unavailable: " : "listrx-bench leaves such windows out",
		p->why);
	uint64_t gap = window_median(log, true), window = window_median(log, false);
	if (window)
		fprintf(out, "bookkeeping between windows: median %lu cycles, %.2f %% of the median window (%lu cycles)\n",
			(unsigned long)gap, 100.0 * (double)gap / (double)window,
			(unsigned long)window);
}

static void text_lcore(const struct lrx_report *r, unsigned first, FILE *out)
{
	const struct lrx_window_log *log = r->lcores[first].windows;
	const unsigned n = lcore_engines(r, first);
	struct engine_windows ew[LRX_ENGINE_LIST_MAX];
	windows_per_engine(log, ew);
	fprintf(out, "\ninterleaved on lcore %u: %lu windows of %u polls recorded", r->lcores[first].lcore,
		(unsigned long)log->n, log->window_polls);
	if (log->calibration_windows)
		fprintf(out, " (from window %lu on the polls of about %.0f us)",
			(unsigned long)log->calibration_windows,
			r->tsc_hz ? (double)log->target_cycles * 1e6 / (double)r->tsc_hz : 0.0);
	fprintf(out, "%s", log->unrecorded ? "" : "\n");
	if (log->unrecorded)
		fprintf(out, ", %lu more run unrecorded (windows_max)\n",
			(unsigned long)log->unrecorded);
	fprintf(out, "%-3s %-10s %9s %12s %9s %12s %12s %10s %10s %8s\n", "#", "engine", "windows",
		"packets", "ns/pkt", "delivered", "dropped", "tx", "merged", "held");
	for (unsigned e = 0; e < n && e < log->n_engines; e++) {
		const struct lrx_report_lcore *l = &r->lcores[first + e];
		double ns = ew[e].packets && r->tsc_hz
				    ? (double)ew[e].cycles * 1e9 / (double)r->tsc_hz / (double)ew[e].packets
				    : 0;
		fprintf(out, "%-3u %-10s %9lu %12lu %9.2f %12lu %12lu %10lu %10lu %8lu\n", e, l->engine,
			(unsigned long)ew[e].windows, (unsigned long)l->packets, ns,
			(unsigned long)l->delivered, (unsigned long)l->dropped, (unsigned long)l->tx,
			(unsigned long)l->merged, (unsigned long)l->held_now);
	}
	text_signals(log, out);
}

void lrx_interleave_print(const struct lrx_report *r, FILE *out)
{
	for (unsigned w = 0; w < r->n_lcores; w++)
		if (r->lcores[w].windows)
			text_lcore(r, w, out);
}

/* ---- JSON -------------------------------------------------------------------- */

enum window_field {
	F_ENGINE, F_POLLS, F_EMPTY, F_PACKETS, F_CYCLES, F_BUSY, F_GAP, F_SPAN, F_CPU, F_DELAY,
	F_NIVCSW, F_NVCSW, N_FIELDS,
};
static const char *const field_names[N_FIELDS] = {
	[F_ENGINE] = "engine", [F_POLLS] = "polls", [F_EMPTY] = "empty_polls",
	[F_PACKETS] = "packets", [F_CYCLES] = "cycles", [F_BUSY] = "busy_cycles",
	[F_GAP] = "gap_cycles", [F_SPAN] = "span_cycles",
	[F_CPU] = "cpu_ns", [F_DELAY] = "run_delay_ns", [F_NIVCSW] = "nivcsw",
	[F_NVCSW] = "nvcsw",
};

static uint64_t field_of(const struct lrx_window *w, enum window_field f)
{
	switch (f) {
	case F_ENGINE: return w->engine;
	case F_POLLS: return w->polls;
	case F_EMPTY: return w->empty_polls;
	case F_PACKETS: return w->packets;
	case F_CYCLES: return w->cycles;
	case F_BUSY: return w->busy_cycles;
	case F_GAP: return w->gap_cycles;
	case F_SPAN: return w->span_cycles;
	case F_CPU: return w->cpu_ns;
	case F_DELAY: return w->run_delay_ns;
	case F_NIVCSW: return w->nivcsw;
	default: return w->nvcsw;
	}
}

/* NULL when the field's source was read, else why not */
static const char *field_unavailable(const struct lrx_thread_probe *p, enum window_field f)
{
	if ((f == F_NIVCSW || f == F_NVCSW) && !p->rusage_ok)
		return "getrusage(RUSAGE_THREAD) failed";
	if (f == F_DELAY && !p->schedstat_ok)
		return "/proc/thread-self/schedstat cannot be read (a kernel without CONFIG_SCHED_INFO?)";
	if (f == F_CPU && !p->cpu_clock_ok)
		return "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed";
	return NULL;
}

/* one array per field, its numbers on one line */
static void json_window_fields(const struct lrx_window_log *log, struct lrx_json *j)
{
	lrx_json_object_begin(j, "windows");
	for (unsigned f = 0; f < N_FIELDS; f++) {
		const char *why = field_unavailable(&log->probe, f);
		if (why) {
			char text[160];
			snprintf(text, sizeof(text), "unavailable: %s", why);
			lrx_json_string(j, field_names[f], text);
			continue;
		}
		lrx_json_array_begin(j, field_names[f]);
		const bool pretty = j->pretty;
		j->pretty = false;
		for (uint64_t k = 0; k < log->n; k++)
			lrx_json_u64(j, NULL, field_of(&log->windows[k], f));
		j->pretty = pretty;
		lrx_json_array_end(j);
	}
	lrx_json_object_end(j);
}

static void json_lcore(const struct lrx_report *r, unsigned first, struct lrx_json *j)
{
	const struct lrx_window_log *log = r->lcores[first].windows;
	const unsigned n = lcore_engines(r, first);
	struct engine_windows ew[LRX_ENGINE_LIST_MAX];
	windows_per_engine(log, ew);
	lrx_json_object_begin(j, NULL);
	lrx_json_u64(j, "lcore", r->lcores[first].lcore);
	lrx_json_u64(j, "window_polls", log->window_polls);
	lrx_json_u64(j, "calibration_windows", log->calibration_windows);
	if (log->target_cycles && r->tsc_hz)
		lrx_json_double(j, "window_us", (double)log->target_cycles * 1e6 / (double)r->tsc_hz);
	lrx_json_u64(j, "windows_recorded", log->n);
	lrx_json_u64(j, "windows_unrecorded", log->unrecorded);
	lrx_json_array_begin(j, "engines");
	for (unsigned e = 0; e < n && e < log->n_engines; e++) {
		const struct lrx_report_lcore *l = &r->lcores[first + e];
		lrx_json_object_begin(j, NULL);
		lrx_json_string(j, "engine", l->engine);
		lrx_json_u64(j, "rx_packets", l->packets);
		lrx_json_u64(j, "delivered", l->delivered);
		lrx_json_u64(j, "dropped", l->dropped);
		lrx_json_u64(j, "tx_packets", l->tx);
		lrx_json_u64(j, "merged_segments", l->merged);
		lrx_json_u64(j, "made", l->made);
		lrx_json_u64(j, "held", l->held_now);
		lrx_json_u64(j, "polls", l->polls);
		lrx_json_u64(j, "windows", ew[e].windows);
		lrx_json_u64(j, "window_packets", ew[e].packets);
		lrx_json_u64(j, "window_cycles", ew[e].cycles);
		lrx_json_u64(j, "window_busy_cycles", ew[e].busy_cycles);
		lrx_json_u64(j, "window_empty_polls", ew[e].empty_polls);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
	json_window_fields(log, j);
	lrx_json_object_end(j);
}

void lrx_interleave_json(const struct lrx_report *r, struct lrx_json *j)
{
	lrx_json_object_begin(j, "interleave");
	lrx_json_string(j, "order",
			"blocks of one window per engine, every other block reversed, the start "
			"rotated every two blocks (A B B A B A A B)");
	lrx_json_array_begin(j, "lcores");
	for (unsigned w = 0; w < r->n_lcores; w++)
		if (r->lcores[w].windows)
			json_lcore(r, w, j);
	lrx_json_array_end(j);
	lrx_json_object_end(j);
}

bool lrx_interleaved(const struct lrx_report *r)
{
	for (unsigned w = 0; w < r->n_lcores; w++)
		if (r->lcores[w].windows)
			return true;
	return false;
}
