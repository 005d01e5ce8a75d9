/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "lcore_loop.h"
#include "measure.h"

/* Packets this poll may receive under --packets: reserve up to a burst
 * from the shared quota; what the poll does not use is given back after,
 * so the run receives exactly the limit, on any number of lcores. */
static inline uint16_t quota_reserve(struct lrx_run *run)
{
	int_fast64_t old = atomic_fetch_sub_explicit(&run->quota, run->burst,
						     memory_order_relaxed);
	if (old <= 0)
		return 0;
	return old < run->burst ? (uint16_t)old : run->burst;
}

static inline void quota_return(struct lrx_run *run, uint16_t received)
{
	atomic_fetch_add_explicit(&run->quota, run->burst - received,
				  memory_order_relaxed);
	atomic_fetch_add_explicit(&run->received, received, memory_order_relaxed);
}

/* Delivered packets of a forwarding port go out of its peer instead, like
 * testpmd's io forwarding. */
static void forward_delivered(struct lrx_worker *w)
{
	struct lrx_sink *sink = w->sink;
	for (uint32_t i = 0; i < sink->n; i++) {
		if (sink->nexts[i] != LRX_NEXT_DELIVER_V &&
		    sink->nexts[i] != LRX_NEXT_CONTINUE_V)
			continue;
		int to = w->forward_of_port[sink->pkts[i]->port];
		if (to >= 0)
			sink->nexts[i] = lrx_next_tx((uint16_t)to);
	}
}

/* Before the RX poll, tx_clean rx-poll: the TX queue paired with this RX
 * queue freed of what it sent, under a trylock, as virtnet_poll_cleantx
 * before virtnet_receive (a queue whose lock another lcore holds is left
 * to it). */
static inline void worker_clean_before_rx(struct lrx_worker *w,
					  const struct lrx_worker_poll *poll)
{
	if (w->tx_clean == LRX_TX_CLEAN_RX_POLL)
		lrx_sink_tx_clean(poll->port->port_id, poll->queue, true, &w->counters);
}

/* After the poll, tx_clean tx-poll: every tx_poll_every polls, the
 * lcore's TX queues freed of what they sent, as TX NAPI's own poll
 * (virtnet_poll_tx) after a TX interrupt. */
static inline void worker_tx_poll(struct lrx_worker *w)
{
	if (w->tx_clean != LRX_TX_CLEAN_TX_POLL || --w->tx_poll_countdown != 0)
		return;
	w->tx_poll_countdown = w->tx_poll_every;
	lrx_sink_tx_poll(w->tx_queue, &w->counters);
}

static inline uint16_t worker_poll_one(struct lrx_worker *w,
				       struct lrx_worker_poll *poll,
				       uint16_t budget)
{
	uint16_t n;

	worker_clean_before_rx(w, poll);
	if (w->rx_only) {
		/* the empty pipeline, as testpmd rxonly: receive, count as
		 * delivered, free in one bulk (lrx_mbuf_free_burst: one
		 * rte_mempool_put_bulk for plain mbufs); no sink needed */
		struct rte_mbuf *pkts[LRX_BURST_MAX];

		n = rte_eth_rx_burst(poll->port->port_id, poll->queue, pkts,
				     RTE_MIN(budget, (uint16_t)LRX_BURST_MAX));
		if (n != 0) {
			lrx_mbuf_free_burst(pkts, n);
			w->counters.delivered += n;
		}
	} else {
		n = lrx_pipeline_poll(w->pipeline, poll->port->port_id,
				      poll->queue, budget, w->sink);
		if (unlikely(w->forwarding))
			forward_delivered(w);
		if (w->sink->n) {
			if (w->latency)
				lrx_latency_record(w->latency, w->sink->pkts, w->sink->n);
			lrx_sink_complete(w->sink, w->tx_queue, &w->counters);
		}
	}
	worker_tx_poll(w);
	/* no program run holds a map entry between two polls */
	if (w->qsbr)
		rte_rcu_qsbr_quiescent(w->qsbr, 0);
	if (w->latency)
		lrx_latency_turnaround(w->latency, &poll->turnaround_last, n);
	poll->stats.polls++;
	poll->stats.rx_packets += n;
	return n;
}

/* Busy time (TSC cycles in non-empty polls) without a TSC read per poll
 * while the queues keep the lcore saturated: rte_rdtsc costs tens of
 * cycles, two per poll were ~4 % of the empty pipeline at 50 Mpps, and
 * testpmd reads none unless asked (record_core_cycles). The poll after a
 * full poll starts when that one ended, so a run of full polls is timed
 * as one stretch: its start is read before its first poll, its end after
 * the first poll that is not full, and the stretch is added every
 * BUSY_CLOCK_FLUSH_POLLS polls so that the monitor sees it grow. A poll
 * that is not full (the queue drained) is timed alone, start and end, as
 * before. The one inexactness: an empty poll right after a full one is
 * charged to the stretch (the queue held exactly a burst). */
#define BUSY_CLOCK_FLUSH_POLLS 1024u

struct busy_clock {
	uint64_t mark;    /* TSC at the start of the open stretch or poll */
	bool open;        /* the previous poll was full: the stretch goes on */
};

static inline void busy_clock_before(struct busy_clock *c)
{
	if (!c->open)
		c->mark = rte_rdtsc();
}

static inline void busy_clock_after(struct busy_clock *c, uint64_t *busy, uint64_t polls,
				    uint16_t n, uint16_t budget)
{
	if (likely(n == budget)) {
		c->open = true;
		if (unlikely((polls & (BUSY_CLOCK_FLUSH_POLLS - 1)) == 0)) {
			uint64_t now = rte_rdtsc();
			*busy += now - c->mark;
			c->mark = now;
		}
		return;
	}
	if (n != 0 || c->open)
		*busy += rte_rdtsc() - c->mark;
	c->open = false;
}

static inline void busy_clock_close(struct busy_clock *c, uint64_t *busy)
{
	if (c->open)
		*busy += rte_rdtsc() - c->mark;
	c->open = false;
}

/* [run] coalesce_us: after a poll short of the budget (the queue drained),
 * the next poll waits, as NAPI's does for the next interrupt once
 * napi_complete_done re-armed it and the NIC's moderation (rx-usecs)
 * holds it back; a slow port then hands over vectors instead of one or
 * two packets a poll. A spin on the TSC: the lcore stays the queue's. */
static inline void coalesce_wait(const struct lrx_run *run, uint16_t n, uint16_t budget)
{
	if (likely(run->coalesce_cycles == 0 || n == budget))
		return;
	const uint64_t until = rte_rdtsc() + run->coalesce_cycles;
	while (rte_rdtsc() < until && !atomic_load_explicit(&run->stop, memory_order_relaxed))
		rte_pause();
}

/* The group counts the thread that opens it: opened here, in the worker,
 * and enabled just before the first poll. */
static void worker_pmu_start(struct lrx_worker *w)
{
	struct lrx_pmu *g = w->pmu;
	if (lrx_pmu_open(g) != 0 && lrx_pmu_stages_ready(g) && w->pipeline && !w->rx_only &&
	    lrx_pipeline_set_pmu(w->pipeline, g, g->stages_why, sizeof(g->stages_why)) == 0) {
		g->stages_why[0] = '\0';
		g->stages_on = true;
	}
	if (w->rx_only && g->conf->stages)
		snprintf(g->stages_why, sizeof(g->stages_why), "the pipeline has no stages");
	lrx_pmu_start(g);
}

/* rte_eal_remote_launch starts the other lcores while the main lcore
 * still sets up its own poll: without a common start, a loaded host lets
 * one lcore take a whole quota before another polls once */
static void start_gate(struct lrx_run *run)
{
	atomic_fetch_add(&run->arrived, 1);
	while (atomic_load(&run->arrived) < run->lcores &&
	       !atomic_load_explicit(&run->stop, memory_order_relaxed))
		rte_pause();
}

/* ---- interleaved engines ([run] interleave, windows.h) -------------------- */

enum window_end { WINDOW_FULL, WINDOW_STOPPED, WINDOW_QUOTA_DONE };

/* One window: window_polls rounds of the lcore's polls by engine worker
 * w, each poll whole (its end-of-poll flushes included, as
 * napi_complete_done's), so that the next window starts on a poll
 * boundary. A stop or the end of --packets ends it early. Its busy
 * cycles (the polls that received something, busy_clock: no TSC read
 * per poll while the polls are full) are what the packets cost where the
 * port is slower than the lcore (a kernel-fed port), whose empty polls
 * are waiting. */
static enum window_end window_polls_run(struct lrx_worker *w, struct lrx_run *run,
					unsigned window_polls, struct lrx_window *win,
					struct busy_clock *clock)
{
	const bool limited = run->packet_limit != 0;
	for (unsigned i = 0; i < w->n_polls; i++) /* its last poll: a window ago */
		w->polls[i].turnaround_last = 0;
	for (unsigned p = 0; p < window_polls; p++) {
		if (atomic_load_explicit(&run->stop, memory_order_relaxed))
			return WINDOW_STOPPED;
		for (unsigned i = 0; i < w->n_polls; i++) {
			uint16_t budget = run->burst;
			if (limited && (budget = quota_reserve(run)) == 0) {
				quota_return(run, 0);
				/* another lcore may still give back what it reserved */
				return atomic_load_explicit(&run->received, memory_order_relaxed) >=
						       run->packet_limit
					       ? WINDOW_QUOTA_DONE
					       : WINDOW_FULL;
			}
			busy_clock_before(clock);
			uint16_t n = worker_poll_one(w, &w->polls[i], budget);
			busy_clock_after(clock, &win->busy_cycles, w->polls_total, n, budget);
			coalesce_wait(run, n, budget);
			if (limited)
				quota_return(run, n);
			w->polls_total++;
			w->rx_packets += n;
			w->empty_polls += n == 0;
			win->empty_polls += n == 0;
			win->packets += n;
		}
		win->polls++;
	}
	return WINDOW_FULL;
}

static enum window_end interleave_window(struct lrx_worker *w, struct lrx_run *run,
					 unsigned window_polls, struct lrx_window *win)
{
	struct busy_clock clock = {0};
	enum window_end end = window_polls_run(w, run, window_polls, win, &clock);
	busy_clock_close(&clock, &win->busy_cycles);
	return end;
}

/* The lcore's engines in turn, A B B A, a window each; every window
 * logged with what the OS did to this thread meanwhile. The bookkeeping
 * (the thread's counters, the log) runs between two windows' TSC reads:
 * its cost is each window's gap_cycles, outside the windows' cycles. */
static int interleave_main(struct lrx_worker *lead, struct lrx_run *run)
{
	struct lrx_interleave *il = lead->interleave;
	struct lrx_window_log *log = &il->log;
	struct lrx_thread_sample before = {0}, after = {0};

	lrx_thread_probe_open(&log->probe);
	start_gate(run);
	lrx_thread_probe_read(&log->probe, &before);
	uint64_t last_end = before.tsc;
	enum window_end end = WINDOW_FULL;
	for (uint64_t k = 0; end == WINDOW_FULL; k++) {
		const unsigned e = lrx_window_engine(k, il->n);
		if (log->target_cycles && k == 2ull * il->n)
			lrx_window_log_calibrate(log, 0, k);
		if (log->target_cycles && (k == 16ull * il->n || k == 128ull * il->n))
			lrx_window_log_calibrate(log, k / 2, k);
		struct lrx_worker *w = il->engines[e];
		struct lrx_window win = {.engine = (uint8_t)e};
		const uint64_t start = rte_rdtsc();
		end = interleave_window(w, run, log->window_polls, &win);
		const uint64_t stop = rte_rdtsc();
		win.cycles = stop - start;
		win.gap_cycles = (uint32_t)RTE_MIN(start - last_end, (uint64_t)UINT32_MAX);
		w->busy_cycles += win.busy_cycles;
		lrx_thread_probe_read(&log->probe, &after);
		if (win.polls || win.packets)
			lrx_window_log_add(log, &win, &before, &after);
		before = after;
		last_end = stop;
	}
	for (unsigned e = 0; e < il->n; e++)
		il->engines[e]->done = true;
	return 0;
}

int lrx_worker_main(void *arg)
{
	struct lrx_worker_arg *a = arg;
	struct lrx_worker *w = a->worker;
	struct lrx_run *run = a->run;
	const bool limited = run->packet_limit != 0;
	/* stats level off promises not to measure the hot path; the other
	 * levels time the busy polls without a TSC read per poll (busy_clock) */
	const bool timed = run->busy_cycles;
	struct busy_clock clock = {0};

	if (w->interleave)
		return interleave_main(w, run);
	if (run->measure_from)
		lrx_measure_instrument();
	if (w->pmu)
		worker_pmu_start(w);
	start_gate(run);

	while (!atomic_load_explicit(&run->stop, memory_order_relaxed)) {
		for (unsigned i = 0; i < w->n_polls; i++) {
			uint16_t budget = run->burst;
			if (limited) {
				budget = quota_reserve(run);
				if (budget == 0) {
					quota_return(run, 0);
					if (timed) /* waiting is not busy */
						busy_clock_close(&clock, &w->busy_cycles);
					if (atomic_load_explicit(&run->received, memory_order_relaxed) >=
					    run->packet_limit)
						goto out;
					rte_pause();
					continue;
				}
			}
			if (timed)
				busy_clock_before(&clock);
			uint16_t n = worker_poll_one(w, &w->polls[i], budget);
			if (timed)
				busy_clock_after(&clock, &w->busy_cycles, w->polls_total, n, budget);
			coalesce_wait(run, n, budget);
			if (limited)
				quota_return(run, n);
			if (unlikely(run->measure_from) && !w->measuring &&
			    w->rx_packets + n >= run->measure_from) {
				/* the window opens after this poll: packets from here on */
				w->measured_from = w->rx_packets + n;
				w->measuring = true;
				lrx_measure_toggle_collect();
			}
			w->polls_total++;
			if (n)
				w->rx_packets += n;
			else
				w->empty_polls++;
		}
	}
out:
	if (timed)
		busy_clock_close(&clock, &w->busy_cycles);
	if (w->pmu) {
		lrx_pmu_stop(w->pmu);
		/* the drain after the loop is not charged to stages */
		if (w->pipeline)
			lrx_pipeline_set_pmu(w->pipeline, NULL, NULL, 0);
	}
	if (w->measuring)
		lrx_measure_toggle_collect();
	w->done = true;
	return 0;
}

void lrx_worker_drain(struct lrx_worker *w)
{
	if (!w->pipeline)
		return;
	/* a sink at a time, until the stages hold nothing (or give nothing) */
	do {
		lrx_pipeline_drain(w->pipeline, w->sink);
		if (w->latency)
			w->latency->at_exit += w->sink->n;
		if (w->forwarding)
			forward_delivered(w);
		if (w->sink->n == 0)
			break;
		lrx_sink_complete(w->sink, w->tx_queue, &w->counters);
	} while (lrx_pipeline_held(w->pipeline));
}

int lrx_interleave_setup(struct lrx_worker **workers, unsigned n_lcores, unsigned per,
			 unsigned window_polls, unsigned window_us, unsigned windows_max, char *err,
			 size_t err_len)
{
	for (unsigned i = 0; i < n_lcores; i++) {
		struct lrx_worker *lead = workers[i * per];
		int socket = (int)rte_lcore_to_socket_id(lead->lcore_id);
		struct lrx_interleave *il = rte_zmalloc_socket("listrx_interleave", sizeof(*il),
							       RTE_CACHE_LINE_SIZE, socket);
		if (!il || lrx_window_log_init(&il->log, per, window_polls, windows_max, socket) < 0) {
			rte_free(il);
			snprintf(err, err_len, "lcore %u: no memory for %u windows (--set run.windows_max=N for fewer)",
				 lead->lcore_id, windows_max);
			return -ENOMEM;
		}
		lead->interleave = il;
		il->n = per;
		if (window_us) {
			il->log.target_cycles = (uint64_t)window_us * rte_get_tsc_hz() / 1000000;
			il->log.calibration_windows = 128ull * per;
		}
		for (unsigned e = 0; e < per; e++) {
			struct lrx_worker *w = workers[i * per + e];
			il->engines[e] = w;
			if (e == 0)
				continue;
			w->follower = true;
			w->n_polls = lead->n_polls;
			memcpy(w->polls, lead->polls, sizeof(w->polls));
		}
	}
	return 0;
}

void lrx_interleave_free(struct lrx_worker *w)
{
	if (!w->interleave)
		return;
	lrx_window_log_free(&w->interleave->log);
	rte_free(w->interleave);
	w->interleave = NULL;
}
