/* SPDX-License-Identifier: BSD-3-Clause
 * Text and JSON renderers of the report model: one function per section,
 * in the order the summary shows them. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "summary.h"
#include "trace.h"

static double per_second(uint64_t count, double seconds)
{
	return seconds > 0 ? (double)count / seconds : 0;
}

static double ratio(uint64_t num, uint64_t den)
{
	return den ? (double)num / (double)den : 0.0;
}

static const char *const stats_level_names[] = {"off", "counters", "cycles"};

void lrx_stats_line(const struct lrx_totals *t, double now, const struct lrx_totals *prev,
		    double prev_seconds, FILE *out)
{
	double dt = now - prev_seconds;
	fprintf(out,
		"[%7.1fs] rx %7.3f Mpps  tx %7.3f Mpps  drop %7.3f Mpps | total rx %lu tx %lu delivered %lu dropped %lu",
		now, per_second(t->rx - prev->rx, dt) / 1e6,
		per_second(t->tx - prev->tx, dt) / 1e6,
		per_second(t->dropped - prev->dropped, dt) / 1e6, (unsigned long)t->rx,
		(unsigned long)t->tx, (unsigned long)t->delivered, (unsigned long)t->dropped);
	if (t->merged)
		fprintf(out, " merged %lu", (unsigned long)t->merged);
	if (t->made)
		fprintf(out, " made %lu", (unsigned long)t->made);
	fprintf(out, " held %lu\n", (unsigned long)t->held_now);
	fflush(out);
}

/* A rate with an SI prefix, three significant digits: "1.23M/s" */
static const char *rate_str(char *buf, size_t len, uint64_t count, double seconds)
{
	double v = per_second(count, seconds);
	static const char *const prefix[] = {"", "k", "M", "G"};
	unsigned p = 0;
	while (v >= 999.5 && p < 3) {
		v /= 1e3;
		p++;
	}
	snprintf(buf, len, "%.3g%s/s", v, prefix[p]);
	return buf;
}

/* stages: what each stage did over the period, as VPP's "show runtime"
 * (vectors/call; ns/packet at stats level cycles; drops/s by reason) */
static void view_stages(const struct lrx_report *p, FILE *out)
{
	char rate[32];
	if (!p->n_stages || p->stats_level == LRX_STATS_OFF) {
		fprintf(out, "  stages: %s\n",
			p->n_stages ? "not counted at stats level off" : "none (empty pipeline)");
		return;
	}
	fprintf(out, " ");
	for (unsigned i = 0; i < p->n_stages; i++) {
		const struct lrx_report_stage *s = &p->stages[i];
		fprintf(out, "%s %s %s v/call %.1f", i ? " |" : "", s->name,
			rate_str(rate, sizeof(rate), s->stats.packets, p->duration_s),
			ratio(s->stats.packets, s->stats.calls));
		double cpp, npp;
		if (lrx_report_stage_cost(p, s, &cpp, &npp))
			fprintf(out, " %.1f ns/pkt", npp);
		for (unsigned r = 0; r < LRX_DROP_MAX; r++)
			if (s->stats.drops[r])
				fprintf(out, " drop %s %s", lrx_drop_reason_name(r),
					rate_str(rate, sizeof(rate), s->stats.drops[r], p->duration_s));
	}
	fprintf(out, "\n");
}

/* Gb/s of a byte count over seconds (as testpmd's Rx-bps: frame bytes
 * without FCS, x 8) */
static double gbps(uint64_t bytes, double seconds)
{
	return per_second(bytes, seconds) * 8 / 1e9;
}

/* ports: each port's rx/tx Gb/s (the ethdev byte counters, as testpmd's
 * Rx-bps/Tx-bps), then the packets/s each queue received */
static void view_ports(const struct lrx_report *p, FILE *out)
{
	char rate[32];
	fprintf(out, " ");
	for (unsigned i = 0; i < p->n_ports; i++)
		fprintf(out, "%s port%u rx %.3f Gb/s tx %.3f Gb/s", i ? " |" : "", p->ports[i].index,
			gbps(p->ports[i].stats.ibytes, p->duration_s),
			gbps(p->ports[i].stats.obytes, p->duration_s));
	fprintf(out, "\n ");
	for (unsigned q = 0; q < p->n_queues; q++) {
		const struct lrx_report_queue *rq = &p->queues[q];
		const struct lrx_report_port *port = &p->ports[rq->port];
		fprintf(out, "%s port%u_q%u %s%s", q ? " |" : "", port->index, rq->queue,
			rate_str(rate, sizeof(rate), rq->rx_packets, p->duration_s),
			port->link_up ? "" : " (link down)");
	}
	fprintf(out, "\n");
}

/* lcores: packets/s, polls/s, the share of empty polls and, when polls
 * are timed (stats level counters or cycles), of busy time */
static void view_lcores(const struct lrx_report *p, FILE *out)
{
	char rate[32], polls[32];
	fprintf(out, " ");
	for (unsigned w = 0; w < p->n_lcores; w++) {
		const struct lrx_report_lcore *l = &p->lcores[w];
		fprintf(out, "%s lcore%u %s polls %s empty %.0f%%", w ? " |" : "", l->lcore,
			rate_str(rate, sizeof(rate), l->packets, p->duration_s),
			rate_str(polls, sizeof(polls), l->polls, p->duration_s),
			100.0 * ratio(l->empty_polls, l->polls));
		if (p->stats_level != LRX_STATS_OFF && p->tsc_hz && p->duration_s > 0)
			fprintf(out, " busy %.0f%%",
				100.0 * (double)l->busy_cycles / (p->duration_s * (double)p->tsc_hz));
	}
	fprintf(out, "\n");
}

void lrx_stats_view_line(const struct lrx_report *period, enum lrx_stats_view view, FILE *out)
{
	switch (view) {
	case LRX_STATS_VIEW_STAGES: view_stages(period, out); break;
	case LRX_STATS_VIEW_PORTS: view_ports(period, out); break;
	case LRX_STATS_VIEW_LCORES: view_lcores(period, out); break;
	}
	fflush(out);
}

/* Sources that idle (pcap, af_packet, af_xdp, vhost, memif, a rate-capped
 * net_synth): wall ns/packet is then the source's pace, and busy
 * ns/packet (TSC inside non-empty polls, all lcores) the cost of
 * processing. Busy is the headline when at least this share of the polls
 * found nothing. */
#define IDLE_POLL_SHARE 0.5

/* busy ns/packet, or -1 when not measured (stats level off, no packet) */
static double busy_ns_per_packet(const struct lrx_report *r)
{
	const struct lrx_totals *t = &r->totals;
	if (r->stats_level == LRX_STATS_OFF || !t->rx || !r->tsc_hz)
		return -1;
	return (double)t->busy_cycles * 1e9 / (double)r->tsc_hz / (double)t->rx;
}

static bool busy_is_headline(const struct lrx_report *r)
{
	return ratio(r->totals.empty_polls, r->totals.polls) >= IDLE_POLL_SHARE;
}

/* A merging stage (GRO) counts segments in, packets out and merges. */
struct stage_merge {
	uint64_t in, out, merged, held;
};

static bool stage_merge_read(const struct lrx_report_stage *s, struct stage_merge *m)
{
	if (!lrx_report_stage_role(s, LRX_COUNTER_IN, &m->in) ||
	    !lrx_report_stage_role(s, LRX_COUNTER_OUT, &m->out) ||
	    !lrx_report_stage_role(s, LRX_COUNTER_MERGED, &m->merged))
		return false;
	/* a held packet is one segment not yet out plus those merged into it */
	uint64_t gone = m->out + m->merged;
	m->held = m->in > gone ? m->in - gone : 0;
	return true;
}

static bool stage_merge_counter(const struct lrx_report_counter *c)
{
	return c->role == LRX_COUNTER_IN || c->role == LRX_COUNTER_OUT ||
	       c->role == LRX_COUNTER_MERGED;
}

/* ---- text ------------------------------------------------------------------ */

static void text_header(const struct lrx_report *r, FILE *out)
{
	const struct lrx_totals *t = &r->totals;
	double secs = r->duration_s;
	fprintf(out, "\n==== listrx summary (%s build, engine %s, burst %u) ====\n", r->build,
		r->engine, r->burst);
	fprintf(out, "duration %.3f s, rx %lu packets, %.3f Mpps, %.1f ns/packet (wall, all lcores)",
		secs, (unsigned long)t->rx, per_second(t->rx, secs) / 1e6,
		t->rx ? secs * 1e9 / (double)t->rx : 0.0);
	double busy = busy_ns_per_packet(r);
	if (busy >= 0)
		fprintf(out, ", %.1f ns/packet busy (TSC in non-empty polls)", busy);
	fputc('\n', out);
	if (r->nombuf_held)
		fprintf(out, "the mbuf pool ran dry while the stages held up to %lu packets "
			     "(rx_nombuf grew): what they hold between polls (socket queues no "
			     "reader drains, reassembly queues, backlogs) starved RX: the empty "
			     "polls are that, not an idle source; raise [mempool] mbufs or let "
			     "them release it\n",
			(unsigned long)r->nombuf_held);
	else if (busy >= 0 && busy_is_headline(r))
		fprintf(out, "the source idled: %.1f %% of polls were empty, so wall ns/packet is its pace; "
			     "busy ns/packet is the cost of processing, the headline here\n",
			100 * ratio(t->empty_polls, t->polls));
	fprintf(out, "delivered %lu, tx %lu, dropped %lu (tx failed %lu)",
		(unsigned long)t->delivered, (unsigned long)t->tx, (unsigned long)t->dropped,
		(unsigned long)t->tx_failed);
	if (t->merged)
		fprintf(out, ", merged %lu (inside other packets: GRO, reassembly)",
			(unsigned long)t->merged);
	if (t->made)
		fprintf(out, ", made %lu (by the stages: mirred mirror copies, out among tx/dropped)",
			(unsigned long)t->made);
	fprintf(out, ", held %lu\n", (unsigned long)t->held_now);
	if (r->tx_clean == LRX_TX_CLEAN_RX_POLL || r->tx_clean == LRX_TX_CLEAN_TX_POLL)
		fprintf(out, "tx clean %s: %lu queue cleanings freed %lu mbufs, %lu left to a busy queue\n",
			lrx_tx_clean_names[r->tx_clean], (unsigned long)t->tx_clean_calls,
			(unsigned long)t->tx_cleaned, (unsigned long)t->tx_clean_busy);
}

static void text_ports(const struct lrx_report *r, FILE *out)
{
	fprintf(out, "\n%-5s %-22s %-5s %14s %14s %12s %12s %12s %16s %16s %9s %9s\n", "port",
		"device", "queue", "rx (lcore)", "ipackets", "opackets", "imissed", "rx_nombuf",
		"ibytes", "obytes", "rx Gb/s", "tx Gb/s");
	for (unsigned i = 0; i < r->n_ports; i++) {
		const struct lrx_report_port *p = &r->ports[i];
		fprintf(out, "%-5u %-22s %-5s %14s %14lu %12lu %12lu %12lu %16lu %16lu %9.3f %9.3f\n",
			p->index, p->name, "all", "", (unsigned long)p->stats.ipackets,
			(unsigned long)p->stats.opackets, (unsigned long)p->stats.imissed,
			(unsigned long)p->stats.rx_nombuf, (unsigned long)p->stats.ibytes,
			(unsigned long)p->stats.obytes, gbps(p->stats.ibytes, r->duration_s),
			gbps(p->stats.obytes, r->duration_s));
		/* the stages' device counters, as ip -s -s link shows them */
		for (unsigned c = 0; c < p->n_dev_counters; c++)
			fprintf(out, "%-5s %-22s %-5s %14s %s %lu\n", "", "", "", "",
				p->dev_counters[c].name,
				(unsigned long)p->dev_counters[c].value);
		for (unsigned q = 0; q < r->n_queues; q++) {
			const struct lrx_report_queue *rq = &r->queues[q];
			if (rq->port == i)
				fprintf(out, "%-5s %-22s %-5u %14lu   (lcore %u, %lu polls)\n", "", "",
					rq->queue, (unsigned long)rq->rx_packets, rq->lcore,
					(unsigned long)rq->polls);
		}
	}
	for (unsigned i = 0; i < r->n_ports; i++) {
		const struct lrx_report_port *p = &r->ports[i];
		if (p->link_down_events || !p->link_up)
			fprintf(out, "port %u link: down %u time(s) during the run, %.3f s in all; %s at the end\n",
				p->index, p->link_down_events, p->link_down_s,
				p->link_up ? "up" : "down");
	}
}

static void text_lcores(const struct lrx_report *r, FILE *out)
{
	fprintf(out, "\n%-6s %14s %14s %14s %10s %s\n", "lcore", "polls", "empty polls",
		"packets", "pkts/poll", "engine");
	for (unsigned w = 0; w < r->n_lcores; w++) {
		const struct lrx_report_lcore *l = &r->lcores[w];
		fprintf(out, "%-6u %14lu %14lu %14lu %10.2f %s\n", l->lcore, (unsigned long)l->polls,
			(unsigned long)l->empty_polls, (unsigned long)l->packets,
			ratio(l->packets, l->polls - l->empty_polls), l->engine);
	}
}

static void text_stages(const struct lrx_report *r, FILE *out)
{
	if (!r->n_stages)
		return;
	fprintf(out, "\n%-14s %12s %14s %10s %14s %10s %12s %10s\n", "stage", "calls", "packets",
		"vec/call", "cycles", "cyc/pkt", "dropped", "ns/pkt");
	for (unsigned i = 0; i < r->n_stages; i++) {
		const struct lrx_report_stage *s = &r->stages[i];
		char cyc[32] = "-", cpp[32] = "-", npp[32] = "-";
		double cycles_pp = 0, ns_pp = 0;
		if (r->stats_level == LRX_STATS_CYCLES) {
			snprintf(cyc, sizeof(cyc), "%lu", (unsigned long)s->stats.cycles);
			snprintf(cpp, sizeof(cpp), "%.1f", 0.0);
		}
		if (lrx_report_stage_cost(r, s, &cycles_pp, &ns_pp)) {
			snprintf(cpp, sizeof(cpp), "%.1f", cycles_pp);
			snprintf(npp, sizeof(npp), "%.1f", ns_pp);
		}
		fprintf(out, "%-14s %12lu %14lu %10.2f %14s %10s %12lu %10s\n", s->name,
			(unsigned long)s->stats.calls, (unsigned long)s->stats.packets,
			ratio(s->stats.packets, s->stats.calls), cyc, cpp,
			(unsigned long)s->dropped, npp);
	}
	if (r->stats_level != LRX_STATS_CYCLES)
		fprintf(out, "(cycles not measured: --stats-level cycles measures them)\n");
}

/* What each stage did, by its own counters: the non-zero ones, one per
 * line as nstat prints them (l3-demux's are the kernel's SNMP names, the
 * XDP stage's are its verdicts); a merging stage (GRO) first says how
 * many segments became how many packets. */
static void text_stage_work(const struct lrx_report_stage *s, FILE *out)
{
	struct stage_merge m;
	bool merging = stage_merge_read(s, &m);
	bool any = merging;
	for (unsigned c = 0; c < s->n_counters; c++)
		any |= s->counters[c].value != 0;
	if (!any)
		return;
	fprintf(out, "%s:", s->name);
	if (merging) {
		fprintf(out, " segments in %lu -> packets out %lu (merge ratio %.2f)",
			(unsigned long)m.in, (unsigned long)m.out, ratio(m.in, m.out));
		if (m.held)
			fprintf(out, ", held %lu", (unsigned long)m.held);
	}
	fprintf(out, "\n");
	for (unsigned c = 0; c < s->n_counters; c++) {
		const struct lrx_report_counter *k = &s->counters[c];
		if (k->value && !(merging && stage_merge_counter(k)))
			fprintf(out, "  %-30s %14lu\n", k->name, (unsigned long)k->value);
	}
}

static void text_stages_work(const struct lrx_report *r, FILE *out)
{
	if (!r->n_stages)
		return;
	fprintf(out, "\nstage counters (non-zero):\n");
	for (unsigned i = 0; i < r->n_stages; i++)
		text_stage_work(&r->stages[i], out);
}

static void text_drops(const struct lrx_report *r, FILE *out)
{
	bool any_drop = false;
	for (unsigned i = 0; i < LRX_DROP_MAX; i++)
		any_drop |= r->totals.drops[i] != 0;
	if (!any_drop)
		return;
	fprintf(out, "\n%-24s %14s\n", "drop reason", "packets");
	for (unsigned i = 0; i < LRX_DROP_MAX; i++)
		if (r->totals.drops[i])
			fprintf(out, "%-24s %14lu\n", lrx_drop_reason_name(i),
				(unsigned long)r->totals.drops[i]);
}

static void text_latency(const struct lrx_report_latency *s, FILE *out)
{
	if (!s->on)
		return;
	fprintf(out, "\n");
	if (s->samples)
		fprintf(out,
			"latency, RX stamp to verdict (synth-tsc, %lu samples, \u00b11.6%%): p50 %.1f ns, p99 %.1f ns, p99.9 %.1f ns, max %.1f ns\n",
			(unsigned long)s->samples, s->p50_ns, s->p99_ns, s->p999_ns, s->max_ns);
	if (s->turnaround_samples)
		fprintf(out,
			"turnaround, the queue's previous poll's end to this poll's end (%lu samples, \u00b11.6%%): p50 %.1f ns, p99 %.1f ns, p99.9 %.1f ns, max %.1f ns\n",
			(unsigned long)s->turnaround_samples, s->turnaround_p50_ns,
			s->turnaround_p99_ns, s->turnaround_p999_ns, s->turnaround_max_ns);
	if (s->clamped || s->turnaround_clamped)
		fprintf(out, "latency: %lu (turnaround: %lu) samples above the histogram's %.3f ms counted at it\n",
			(unsigned long)s->clamped, (unsigned long)s->turnaround_clamped,
			s->clamp_ns / 1e6);
	if (s->at_exit)
		fprintf(out, "latency: %lu packets held until the run stopped, not recorded\n",
			(unsigned long)s->at_exit);
	if (s->reason[0])
		fprintf(out, "latency: %s\n", s->reason);
}

static void text_pmu_events(const struct lrx_report *r, FILE *out)
{
	const struct lrx_report_pmu *s = &r->pmu;
	bool fake = s->conf.source == LRX_PMU_SOURCE_FAKE;
	fprintf(out, "\ncounters (%s%s, %s mode, %u of %u lcores counted%s):\n",
		lrx_pmu_source_name(s->conf.source),
		fake ? ": software test source, not hardware counts" : "",
		s->conf.kernel ? "user+kernel" : "user", s->workers_counted, r->n_lcores,
		s->multiplexed ? ", multiplexed: scaled by enabled/running" : "");
	fprintf(out, "%-24s %14s %18s\n", "event", "per packet", "total");
	for (unsigned e = 0; e < s->conf.n_events; e++) {
		const char *name = s->conf.events[e].name;
		if (s->why[e])
			fprintf(out, "%-24s unavailable: %s\n", name, s->why[e]);
		else
			fprintf(out, "%-24s %14.2f %18.0f\n", name,
				s->packets[e] ? s->count[e] / (double)s->packets[e] : 0.0,
				s->count[e]);
	}
}

static void text_pmu_stages(const struct lrx_report *r, FILE *out)
{
	const struct lrx_report_pmu *s = &r->pmu;
	if (!s->conf.stages)
		return;
	if (!s->stages) {
		fprintf(out, "per stage: unavailable: %s\n", s->stages_why);
		return;
	}
	fprintf(out, "per stage, per packet (%s around each stage call):\n%-14s",
		s->conf.source == LRX_PMU_SOURCE_FAKE ? "fake reads" : "rdpmc", "stage");
	for (unsigned e = 0; e < s->conf.n_events; e++)
		fprintf(out, " %14.14s", s->conf.events[e].name);
	fprintf(out, "\n");
	for (unsigned i = 0; i < r->n_stages; i++) {
		const struct lrx_report_stage *st = &r->stages[i];
		fprintf(out, "%-14s", st->name);
		for (unsigned e = 0; e < s->conf.n_events; e++)
			if (s->why[e] || !st->stats.packets || !st->attributable)
				fprintf(out, " %14s", "-");
			else
				fprintf(out, " %14.2f", ratio(st->stats.pmu[e], st->stats.packets));
		fprintf(out, "\n");
	}
}

static void text_mbufs(const struct lrx_report *r, FILE *out)
{
	fprintf(out, "\nmbufs in use at exit: %u\n", r->mbufs_in_use_at_exit);
	if (r->mbufs_freed_twice_at_exit)
		fprintf(out, "mbufs freed twice (more in the pool than it holds): %u\n",
			r->mbufs_freed_twice_at_exit);
	if (r->driver_held_mbufs_at_exit)
		fprintf(out,
			"mbufs kept by drivers after close: %u (net_af_xdp keeps its fill ring; in a pool of its own)\n",
			r->driver_held_mbufs_at_exit);
}

void lrx_summary_print(const struct lrx_report *r, FILE *out)
{
	text_header(r, out);
	text_ports(r, out);
	text_lcores(r, out);
	lrx_interleave_print(r, out);
	text_stages(r, out);
	text_stages_work(r, out);
	text_drops(r, out);
	lrx_summary_text_maps(r, out);
	if (r->trace)
		lrx_trace_print(r->trace, out);
	text_latency(&r->latency, out);
	if (r->pmu.on) {
		text_pmu_events(r, out);
		text_pmu_stages(r, out);
	}
	text_mbufs(r, out);
}

/* ---- JSON ------------------------------------------------------------------ */

static void json_drops(struct lrx_json *j, const uint64_t drops[LRX_DROP_MAX])
{
	lrx_json_object_begin(j, "drops");
	for (unsigned i = 0; i < LRX_DROP_MAX; i++)
		if (drops[i])
			lrx_json_u64(j, lrx_drop_reason_name(i), drops[i]);
	lrx_json_object_end(j);
}

static void json_latency(const struct lrx_report_latency *s, struct lrx_json *j)
{
	if (!s->on)
		return;
	lrx_json_object_begin(j, "latency_ns");
	/* null, not 0, without samples: not measured */
	lrx_json_double(j, "p50", s->samples ? s->p50_ns : NAN);
	lrx_json_double(j, "p99", s->samples ? s->p99_ns : NAN);
	lrx_json_double(j, "p999", s->samples ? s->p999_ns : NAN);
	lrx_json_double(j, "max", s->samples ? s->max_ns : NAN);
	lrx_json_u64(j, "samples", s->samples);
	lrx_json_u64(j, "clamped", s->clamped);
	lrx_json_u64(j, "held_at_exit", s->at_exit);
	lrx_json_double(j, "clamp_ns", s->clamp_ns);
	if (s->samples)
		lrx_json_string(j, "source", "synth-tsc");
	else
		lrx_json_null(j, "source");
	/* the TSC alone: no RX stamp needed */
	lrx_json_object_begin(j, "turnaround");
	const bool any = s->turnaround_samples != 0;
	lrx_json_double(j, "p50", any ? s->turnaround_p50_ns : NAN);
	lrx_json_double(j, "p99", any ? s->turnaround_p99_ns : NAN);
	lrx_json_double(j, "p999", any ? s->turnaround_p999_ns : NAN);
	lrx_json_double(j, "max", any ? s->turnaround_max_ns : NAN);
	lrx_json_u64(j, "samples", s->turnaround_samples);
	lrx_json_u64(j, "clamped", s->turnaround_clamped);
	lrx_json_object_end(j);
	lrx_json_object_end(j);
	if (s->reason[0])
		lrx_json_string(j, "latency_unavailable", s->reason);
}

static void json_pmu_events(const struct lrx_report_pmu *s, struct lrx_json *j)
{
	char status[LRX_PMU_WHY_LEN + 16];
	lrx_json_array_begin(j, "events");
	for (unsigned e = 0; e < s->conf.n_events; e++) {
		lrx_json_object_begin(j, NULL);
		lrx_json_string(j, "name", s->conf.events[e].name);
		if (s->why[e]) {
			snprintf(status, sizeof(status), "unavailable: %s", s->why[e]);
			lrx_json_string(j, "status", status);
			lrx_json_null(j, "encoding");
			lrx_json_null(j, "count"); /* not counted, not zero */
			lrx_json_null(j, "per_packet");
		} else {
			lrx_json_string(j, "status", "counted");
			lrx_json_string(j, "encoding", s->encoding[e]);
			/* a count (scaled when multiplexed, then rounded) */
			lrx_json_u64(j, "count", (uint64_t)llround(s->count[e]));
			lrx_json_double(j, "per_packet",
					s->packets[e] ? s->count[e] / (double)s->packets[e] : NAN);
		}
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
}

static void json_pmu_lcores(const struct lrx_report *r, struct lrx_json *j)
{
	const struct lrx_pmu_conf *conf = &r->pmu.conf;
	lrx_json_array_begin(j, "lcores");
	for (unsigned w = 0; w < r->n_lcores; w++) {
		const struct lrx_report_lcore *l = &r->lcores[w];
		if (!l->has_pmu)
			continue;
		lrx_json_object_begin(j, NULL);
		lrx_json_u64(j, "lcore", l->lcore);
		lrx_json_u64(j, "packets", l->packets);
		lrx_json_bool(j, "counted", l->pmu_counted);
		if (l->pmu_counted) {
			lrx_json_u64(j, "time_enabled_ns", l->time_enabled_ns);
			lrx_json_u64(j, "time_running_ns", l->time_running_ns);
		} else {
			lrx_json_null(j, "time_enabled_ns");
			lrx_json_null(j, "time_running_ns");
		}
		lrx_json_object_begin(j, "counts");
		for (unsigned e = 0; e < conf->n_events; e++)
			if (l->pmu_count_ok[e])
				lrx_json_u64(j, conf->events[e].name, l->pmu_count[e]);
			else
				lrx_json_null(j, conf->events[e].name);
		lrx_json_object_end(j);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
}

static void json_pmu_stage(const struct lrx_report_pmu *s, const struct lrx_report_stage *st,
			   struct lrx_json *j)
{
	lrx_json_object_begin(j, NULL);
	lrx_json_string(j, "name", st->name);
	lrx_json_u64(j, "packets", st->stats.packets);
	lrx_json_u64(j, "calls", st->stats.calls);
	/* hybrid:K reads only around its first K stages */
	lrx_json_bool(j, "attributed", st->attributable);
	lrx_json_object_begin(j, "counts");
	for (unsigned e = 0; e < s->conf.n_events; e++)
		if (s->why[e] || !st->attributable)
			lrx_json_null(j, s->conf.events[e].name);
		else
			lrx_json_u64(j, s->conf.events[e].name, st->stats.pmu[e]);
	lrx_json_object_end(j);
	lrx_json_object_begin(j, "per_packet");
	for (unsigned e = 0; e < s->conf.n_events; e++)
		if (s->why[e] || !st->stats.packets || !st->attributable)
			lrx_json_null(j, s->conf.events[e].name);
		else
			lrx_json_double(j, s->conf.events[e].name,
					ratio(st->stats.pmu[e], st->stats.packets));
	lrx_json_object_end(j);
	lrx_json_object_end(j);
}

/* per stage: only when every counting lcore attributed */
static void json_pmu_stages(const struct lrx_report *r, struct lrx_json *j)
{
	const struct lrx_report_pmu *s = &r->pmu;
	char status[LRX_PMU_WHY_LEN + 16];
	if (!s->conf.stages)
		snprintf(status, sizeof(status), "off");
	else
		snprintf(status, sizeof(status), "unavailable: %s", s->stages_why);
	lrx_json_string(j, "stages_status",
			s->stages ? (s->conf.source == LRX_PMU_SOURCE_FAKE
					     ? "counted (fake reads around each stage call)"
					     : "counted (rdpmc around each stage call)")
				  : status);
	lrx_json_array_begin(j, "stages");
	for (unsigned i = 0; s->stages && i < r->n_stages; i++)
		json_pmu_stage(s, &r->stages[i], j);
	lrx_json_array_end(j);
}

static void json_pmu(const struct lrx_report *r, struct lrx_json *j)
{
	const struct lrx_report_pmu *s = &r->pmu;
	if (!s->on)
		return;
	char status[LRX_PMU_WHY_LEN + 16];
	lrx_json_object_begin(j, "pmu");
	lrx_json_string(j, "source", lrx_pmu_source_name(s->conf.source));
	lrx_json_bool(j, "fake", s->conf.source == LRX_PMU_SOURCE_FAKE);
	lrx_json_string(j, "mode", s->conf.kernel ? "user+kernel" : "user");
	snprintf(status, sizeof(status), "unavailable: %s", s->group_why);
	lrx_json_string(j, "status", s->workers_counted ? "counted" : status);
	lrx_json_u64(j, "lcores_counted", s->workers_counted);
	lrx_json_bool(j, "multiplexed", s->multiplexed);
	json_pmu_events(s, j);
	json_pmu_lcores(r, j);
	json_pmu_stages(r, j);
	lrx_json_object_end(j);
}

static void json_setup(const struct lrx_report *r, struct lrx_json *j)
{
	lrx_json_string(j, "version", r->version);
	lrx_json_string(j, "commit", r->commit);
	lrx_json_string(j, "build", r->build);
	lrx_json_bool(j, "retpoline", r->retpoline);
	lrx_json_string(j, "dpdk_version", r->dpdk_version);
	lrx_json_string(j, "engine", r->engine);
	lrx_json_u64(j, "burst", r->burst);
	lrx_json_u64(j, "coalesce_us", r->coalesce_us);
	lrx_json_string(j, "stats_level", stats_level_names[r->stats_level]);
}

static void json_totals(const struct lrx_report *r, struct lrx_json *j)
{
	const struct lrx_totals *t = &r->totals;
	double secs = r->duration_s;
	lrx_json_double(j, "duration_s", secs);
	lrx_json_u64(j, "rx_packets", t->rx);
	if (r->measure_from) {
		/* the packets callgrind collected costs for ([run] measure_from) */
		lrx_json_u64(j, "measure_from", r->measure_from);
		lrx_json_u64(j, "measured_packets", r->measured_packets);
	}
	lrx_json_u64(j, "tx_packets", t->tx);
	lrx_json_u64(j, "delivered", t->delivered);
	lrx_json_u64(j, "dropped", t->dropped);
	lrx_json_u64(j, "tx_failed", t->tx_failed);
	/* rx + made = tx + delivered + dropped + merged_segments + held;
	 * "held" is what the text summary's "held" is: packets a stage still
	 * holds; "made" the packets stages made (mirred mirror copies) */
	lrx_json_u64(j, "merged_segments", t->merged);
	lrx_json_u64(j, "made", t->made);
	lrx_json_u64(j, "held", t->held_now);
	json_drops(j, t->drops);
	lrx_json_double(j, "mpps", per_second(t->rx, secs) / 1e6);
	if (t->rx)
		lrx_json_double(j, "ns_per_packet", secs * 1e9 / (double)t->rx);
	else
		lrx_json_null(j, "ns_per_packet");
	/* busy cycles per packet: TSC inside non-empty polls, all lcores;
	 * not measured at stats level off */
	if (t->rx && r->stats_level != LRX_STATS_OFF)
		lrx_json_double(j, "busy_cycles_per_packet", ratio(t->busy_cycles, t->rx));
	else
		lrx_json_null(j, "busy_cycles_per_packet");
	double busy = busy_ns_per_packet(r);
	if (busy >= 0)
		lrx_json_double(j, "busy_ns_per_packet", busy);
	else
		lrx_json_null(j, "busy_ns_per_packet");
	lrx_json_double(j, "empty_poll_share", ratio(t->empty_polls, t->polls));
	lrx_json_string(j, "ns_per_packet_headline",
			busy >= 0 && busy_is_headline(r) ? "busy" : "wall");
	lrx_json_u64(j, "tsc_hz", r->tsc_hz);
	lrx_json_object_begin(j, "tx_clean");
	lrx_json_string(j, "mode", lrx_tx_clean_names[r->tx_clean]);
	if (r->tx_clean == LRX_TX_CLEAN_TX_POLL)
		lrx_json_u64(j, "polls_between", r->tx_clean_polls);
	lrx_json_u64(j, "calls", t->tx_clean_calls);
	lrx_json_u64(j, "freed", t->tx_cleaned);
	lrx_json_u64(j, "busy", t->tx_clean_busy);
	lrx_json_object_end(j);
}

static void json_port_queues(const struct lrx_report *r, unsigned port, struct lrx_json *j)
{
	const struct rte_eth_stats *st = &r->ports[port].stats;
	lrx_json_array_begin(j, "queues");
	for (unsigned q = 0; q < r->n_queues; q++) {
		const struct lrx_report_queue *rq = &r->queues[q];
		if (rq->port != port)
			continue;
		lrx_json_object_begin(j, NULL);
		lrx_json_u64(j, "queue", rq->queue);
		lrx_json_u64(j, "lcore", rq->lcore);
		lrx_json_u64(j, "rx_packets", rq->rx_packets);
		lrx_json_u64(j, "polls", rq->polls);
		if (rq->queue < RTE_ETHDEV_QUEUE_STAT_CNTRS)
			lrx_json_u64(j, "q_ipackets", st->q_ipackets[rq->queue]);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
}

static void json_ports(const struct lrx_report *r, struct lrx_json *j)
{
	lrx_json_array_begin(j, "ports");
	for (unsigned i = 0; i < r->n_ports; i++) {
		const struct lrx_report_port *p = &r->ports[i];
		lrx_json_object_begin(j, NULL);
		lrx_json_u64(j, "index", p->index);
		lrx_json_u64(j, "port_id", p->port_id);
		lrx_json_string(j, "device", p->name);
		lrx_json_string(j, "driver", p->driver);
		lrx_json_u64(j, "ipackets", p->stats.ipackets);
		lrx_json_u64(j, "opackets", p->stats.opackets);
		lrx_json_u64(j, "ibytes", p->stats.ibytes);
		lrx_json_u64(j, "obytes", p->stats.obytes);
		lrx_json_double(j, "rx_gbps", gbps(p->stats.ibytes, r->duration_s));
		lrx_json_double(j, "tx_gbps", gbps(p->stats.obytes, r->duration_s));
		lrx_json_u64(j, "ierrors", p->stats.ierrors);
		lrx_json_u64(j, "oerrors", p->stats.oerrors);
		lrx_json_u64(j, "imissed", p->stats.imissed);
		lrx_json_u64(j, "rx_nombuf", p->stats.rx_nombuf);
		lrx_json_bool(j, "link_up", p->link_up);
		lrx_json_u64(j, "link_down_events", p->link_down_events);
		lrx_json_double(j, "link_down_s", p->link_down_s);
		lrx_json_string(j, "offloads", p->offloads);
		lrx_json_string(j, "offloads_missing", p->offloads_missing);
		for (unsigned c = 0; c < p->n_dev_counters; c++)
			lrx_json_u64(j, p->dev_counters[c].name, p->dev_counters[c].value);
		json_port_queues(r, i, j);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
}

static void json_lcores(const struct lrx_report *r, struct lrx_json *j)
{
	lrx_json_array_begin(j, "lcores");
	for (unsigned w = 0; w < r->n_lcores; w++) {
		const struct lrx_report_lcore *l = &r->lcores[w];
		lrx_json_object_begin(j, NULL);
		lrx_json_u64(j, "lcore", l->lcore);
		lrx_json_string(j, "engine", l->engine);
		lrx_json_u64(j, "polls", l->polls);
		lrx_json_u64(j, "empty_polls", l->empty_polls);
		lrx_json_u64(j, "packets", l->packets);
		lrx_json_u64(j, "busy_cycles", l->busy_cycles);
		lrx_json_u64(j, "delivered", l->delivered);
		lrx_json_u64(j, "dropped", l->dropped);
		lrx_json_u64(j, "tx_packets", l->tx);
		lrx_json_u64(j, "merged_segments", l->merged);
		lrx_json_u64(j, "made", l->made);
		lrx_json_u64(j, "held", l->held_now);
		if (l->measuring)
			lrx_json_u64(j, "measured_packets", l->measured_packets);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
}

static void json_stage(const struct lrx_report *r, const struct lrx_report_stage *s,
		       struct lrx_json *j)
{
	lrx_json_object_begin(j, NULL);
	lrx_json_string(j, "name", s->name);
	lrx_json_u64(j, "calls", s->stats.calls);
	lrx_json_u64(j, "packets", s->stats.packets);
	lrx_json_double(j, "vectors_per_call", ratio(s->stats.packets, s->stats.calls));
	double cycles_pp = 0, ns_pp = 0;
	bool cost = lrx_report_stage_cost(r, s, &cycles_pp, &ns_pp);
	if (r->stats_level == LRX_STATS_CYCLES) {
		lrx_json_u64(j, "cycles", s->stats.cycles);
		lrx_json_double(j, "cycles_per_packet", cycles_pp);
	} else {
		lrx_json_null(j, "cycles"); /* not measured, not zero */
		lrx_json_null(j, "cycles_per_packet");
	}
	if (cost)
		lrx_json_double(j, "ns_per_packet", ns_pp);
	else
		lrx_json_null(j, "ns_per_packet");
	lrx_json_u64(j, "tx", s->stats.tx);
	lrx_json_u64(j, "redirected", s->stats.redirected);
	lrx_json_u64(j, "consumed", s->stats.consumed);
	lrx_json_u64(j, "delivered", s->stats.delivered);
	json_drops(j, s->stats.drops);
	/* the stage's own counters, summed over lcores */
	lrx_json_object_begin(j, "counters");
	for (unsigned c = 0; c < s->n_counters; c++)
		lrx_json_u64(j, s->counters[c].name, s->counters[c].value);
	lrx_json_object_end(j);
	lrx_json_object_end(j);
}

static void json_stages(const struct lrx_report *r, struct lrx_json *j)
{
	lrx_json_array_begin(j, "stages");
	for (unsigned s = 0; s < r->n_stages; s++)
		json_stage(r, &r->stages[s], j);
	lrx_json_array_end(j);
}

static void json_topology(const struct lrx_topology *topo, struct lrx_json *j)
{
	lrx_json_object_begin(j, "topology");
	lrx_json_string(j, "cpu", topo->cpu_model);
	lrx_json_u64(j, "cores", topo->cores);
	lrx_json_u64(j, "hardware_threads", topo->pus);
	lrx_json_u64(j, "numa_nodes", topo->numa_nodes);
	if (topo->l1i_bytes)
		lrx_json_u64(j, "l1i_bytes", topo->l1i_bytes);
	else
		lrx_json_null(j, "l1i_bytes");
	lrx_json_u64(j, "l1i_line", topo->l1i_line);
	if (topo->l1i_assoc) /* -1: fully associative */
		lrx_json_i64(j, "l1i_assoc", topo->l1i_assoc);
	else
		lrx_json_null(j, "l1i_assoc");
	lrx_json_string(j, "l1i_source", topo->l1i_source);
	lrx_json_u64(j, "l1d_bytes", topo->l1d_bytes);
	lrx_json_u64(j, "llc_bytes", topo->llc_bytes);
	lrx_json_object_end(j);
}

static void json_config_entry(void *arg, const char *section, const char *key,
			      const char *value)
{
	struct lrx_json *j = arg;
	char name[160];
	snprintf(name, sizeof(name), "%s.%s", section, key);
	lrx_json_string(j, name, value);
}

static void json_exit(const struct lrx_report *r, struct lrx_json *j)
{
	lrx_json_u64(j, "mbufs_in_use_at_exit", r->mbufs_in_use_at_exit);
	lrx_json_u64(j, "mbufs_freed_twice_at_exit", r->mbufs_freed_twice_at_exit);
	lrx_json_u64(j, "driver_held_mbufs_at_exit", r->driver_held_mbufs_at_exit);
	lrx_json_u64(j, "mbufs_per_pool", r->mbufs_per_pool);
	lrx_json_u64(j, "nombuf_held", r->nombuf_held);
	lrx_json_object_begin(j, "mempool");
	lrx_json_u64(j, "cache", r->pool_cache);
	lrx_json_u64(j, "data_room", r->pool_data_room);
	lrx_json_u64(j, "priv_size", r->pool_priv_size);
	lrx_json_string(j, "layout", r->pool_packed ? "packed" : "iova-contig");
	lrx_json_object_end(j);
	lrx_json_string(j, "config_file", r->config_path);
	lrx_json_object_begin(j, "config");
	lrx_cfgfile_foreach(r->config, json_config_entry, j);
	lrx_json_object_end(j);
}

void lrx_summary_json(const struct lrx_report *r, struct lrx_json *j)
{
	lrx_json_object_begin(j, NULL);
	json_setup(r, j);
	json_totals(r, j);
	json_latency(&r->latency, j);
	json_pmu(r, j);
	lrx_json_bool(j, "stopped_by_signal", r->stopped_by_signal);
	json_ports(r, j);
	json_lcores(r, j);
	json_stages(r, j);
	if (r->n_maps)
		lrx_summary_json_maps(r, j);
	if (r->trace)
		lrx_trace_json(r->trace, j);
	if (lrx_interleaved(r))
		lrx_interleave_json(r, j);
	lrx_json_u64(j, "footprint_bytes", r->footprint_bytes);
	json_topology(&r->topo, j);
	json_exit(r, j);
	lrx_json_object_end(j);
}

int lrx_summary_write_json(const struct lrx_report *r, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -errno;
	struct lrx_json j;
	lrx_json_init(&j, f, true);
	lrx_summary_json(r, &j);
	if (fclose(f) != 0)
		return -errno;
	return 0;
}
