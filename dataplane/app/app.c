/* SPDX-License-Identifier: BSD-3-Clause
 * listrx [EAL options] -- [listrx options]
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_version.h>

#include "app.h"
#include "options.h"
#include "outputs.h"
#include "json.h"
#include "trace.h"
#include "listrx_build.h"
#include "reps.h"
#include "runtime_dir.h"
#include "summary.h"
#include "telemetry.h"

#define EXIT_USAGE 2
#define MAX_EAL_ARGS 128

static struct lrx_app the_app;
/* the human-readable output: stdout, or stderr when --json - takes stdout */
static FILE *human_out;

/* Splits the [eal] args string on whitespace (no quoting: EAL arguments
 * do not contain spaces). */
static int split_eal_args(char *text, char **argv, int max)
{
	int n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(text, " \t", &save); tok && n < max;
	     tok = strtok_r(NULL, " \t", &save))
		argv[n++] = tok;
	return n;
}

/* A stage that cannot be set up because of what the user named (a bad
 * value, a file that is missing or unreadable, a feature this machine
 * lacks for that setting) is a usage error (exit 2); anything else (out
 * of memory, a device failing) is a run-time failure (exit 1). */
static int setup_error_status(int rc)
{
	return rc == -EINVAL || rc == -ENOENT || rc == -EACCES || rc == -ENOTSUP
		       ? EXIT_USAGE
		       : EXIT_RUNTIME;
}

/* --trace: shared by the workers' pipelines (ids handed out atomically) */
static struct lrx_trace *trace;

/* ---- signals and the monitor -------------------------------------------- */

/* A poll that never returns (a stage stuck on one packet, a driver stuck
 * in rx_burst) never sees the stop flag, and the run would ignore every
 * signal but SIGKILL (which leaves EAL's runtime directory behind). So a
 * second SIGINT/SIGTERM/SIGHUP while the polls still run, 1 s or more
 * after the first, ends the process from the handler: no summary, the
 * runtime directory removed, exit 128 + the signal (a shell's status for
 * a program the signal ended). Sooner than 1 s, the check waits for
 * that second (alarm): a slow but working shutdown is not cut short. */
#define STUCK_GRACE_NS 1000000000LL
static volatile sig_atomic_t polls_running;
static volatile sig_atomic_t stop_signals;
static struct timespec first_stop;

static void stuck_exit(int sig)
{
	static const char msg[] =
		"listrx: signalled again and the polls did not stop within 1 s of the first "
		"signal (a stage or driver stuck in a poll): exiting without a summary\n";
	ssize_t w = write(STDERR_FILENO, msg, sizeof(msg) - 1);
	(void)w;
	lrx_runtime_dir_remove();
	_exit(128 + sig);
}

static void on_alarm(int sig)
{
	(void)sig;
	if (polls_running)
		stuck_exit(the_app.signal);
}

static void on_signal(int sig)
{
	the_app.stopped_by_signal = true;
	the_app.signal = sig;
	atomic_store(&the_app.run.stop, true);
	if (stop_signals++ == 0) {
		clock_gettime(CLOCK_MONOTONIC, &first_stop);
		return;
	}
	if (!polls_running)
		return;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	long long ns = (now.tv_sec - first_stop.tv_sec) * 1000000000LL +
		       (now.tv_nsec - first_stop.tv_nsec);
	if (ns >= STUCK_GRACE_NS)
		stuck_exit(sig);
	alarm(1);
}

/* stdout closed under the run (listrx ... | head): SIGPIPE is ignored, so
 * the write fails with EPIPE; the run stops as on SIGINT and what was for
 * stdout goes to stderr from then on (human_out is switched by the main
 * thread, after the run). Returns true when stdout is gone. */
static atomic_bool stdout_gone;
static bool human_out_check(void)
{
	if (human_out != stdout || atomic_load(&stdout_gone))
		return atomic_load(&stdout_gone);
	if (!ferror(stdout) && fflush(stdout) == 0)
		return false;
	int e = errno;
	clearerr(stdout);
	if (e != EPIPE)
		return false; /* a full disk behind stdout: the output is short, the run goes on */
	atomic_store(&stdout_gone, true);
	fprintf(stderr, "listrx: stdout: %s: stopping as on SIGINT; the rest goes to stderr\n",
		strerror(e));
	the_app.stopped_by_signal = true;
	atomic_store(&the_app.run.stop, true);
	return true;
}

static double app_run_seconds(const struct lrx_app *app)
{
	if (!app->start_tsc)
		return 0;
	uint64_t end = app->end_tsc ? app->end_tsc : rte_rdtsc();
	return (double)(end - app->start_tsc) / (double)rte_get_tsc_hz();
}

static bool all_workers_done(const struct lrx_app *app)
{
	for (unsigned i = 0; i < app->n_workers; i++)
		if (!app->workers[i]->done)
			return false;
	return true;
}

/* The periodic line: the report model's totals, as the summary counts
 * them (merged segments apart from held packets), then the chosen view
 * over the period: this report minus the last (rep[0] now, rep[1] the
 * last, rep[2] the period). */
static void monitor_stats_line(const struct lrx_app *app, struct lrx_report *rep[3])
{
	lrx_report_fill(rep[0], app);
	lrx_stats_line(&rep[0]->totals, rep[0]->duration_s, &rep[1]->totals,
		       rep[1]->duration_s, human_out);
	*rep[2] = *rep[0];
	lrx_report_sub(rep[2], rep[1]);
	lrx_stats_view_line(rep[2], app->conf.stats_view, human_out);
	struct lrx_report *last = rep[1];
	rep[1] = rep[0];
	rep[0] = last;
}

/* RX found the pool empty (rx_nombuf grew) while the stages held
 * packets between polls: the summary names what emptied it. Read from
 * the monitor, as telemetry reads the held counts. */
static void pool_watch(struct lrx_app *app)
{
	uint64_t nombuf = 0, held = 0;
	struct rte_eth_stats st;
	for (unsigned i = 0; i < app->ports.n; i++)
		if (app->ports.ports[i].started &&
		    rte_eth_stats_get(app->ports.ports[i].port_id, &st) == 0)
			nombuf += st.rx_nombuf;
	if (nombuf > app->nombuf_seen) {
		for (unsigned i = 0; i < app->n_workers; i++)
			if (app->workers[i]->pipeline)
				held += lrx_pipeline_held(app->workers[i]->pipeline);
		app->nombuf_held = RTE_MAX(app->nombuf_held, held);
	}
	app->nombuf_seen = nombuf;
}

/* Periodic stats, the duration limit, and noticing that every worker
 * stopped on its own (packet limit). */
static void *monitor_main(void *arg)
{
	struct lrx_app *app = arg;
	const double period = app->conf.stats_period_s;
	const double duration = app->conf.duration_s;
	struct lrx_report *rep[3] = {NULL, NULL, NULL};
	bool lines = period > 0;
	for (unsigned i = 0; lines && i < 3; i++)
		lines = (rep[i] = lrx_report_alloc()) != NULL;
	double next_line = period, next_link = 0;
	while (!atomic_load(&app->run.stop)) {
		struct timespec ts = {0, 2 * 1000 * 1000};
		nanosleep(&ts, NULL);
		double now = app_run_seconds(app);
		if (now >= next_link) {
			/* 10 link reads a second: a transition is seen within 0.1 s */
			lrx_ports_link_check(&app->ports, now, false);
			pool_watch(app);
			next_link = now + 0.1;
		}
		if (lines && now >= next_line) {
			monitor_stats_line(app, rep);
			next_line += period;
			lines = !human_out_check();
		}
		if ((duration > 0 && now >= duration) || all_workers_done(app))
			atomic_store(&app->run.stop, true);
	}
	for (unsigned i = 0; i < 3; i++)
		lrx_report_free(rep[i]);
	lrx_ports_link_check(&app->ports, app_run_seconds(app), true);
	return NULL;
}

/* ---- lcores --------------------------------------------------------- */

/* --latency: the lcore's histogram; the ports whose stamps are TSC are
 * the ones it records (the others' stamps are counted, not recorded). */
static int worker_latency_create(const struct lrx_app *app, struct lrx_worker *w,
				 int socket, char *err, size_t err_len)
{
	w->latency = rte_zmalloc_socket("listrx_latency", sizeof(*w->latency),
					RTE_CACHE_LINE_SIZE, socket);
	if (!w->latency) {
		snprintf(err, err_len, "lcore %u: no memory for its latency histogram",
			 w->lcore_id);
		return -ENOMEM;
	}
	int rc = lrx_latency_init(w->latency);
	if (rc < 0) {
		snprintf(err, err_len,
			 "lcore %u: --latency: cannot register the RX timestamp mbuf field: %s",
			 w->lcore_id, rte_strerror(-rc));
		return rc;
	}
	for (unsigned i = 0; i < app->ports.n; i++) {
		const struct lrx_port *port = &app->ports.ports[i];
		w->latency->port_tsc[port->port_id] = lrx_port_rx_timestamp_is_tsc(port);
	}
	return 0;
}

/* lcore i's worker of engine e ([run] interleave's e-th; without
 * interleave, e = 0: [pipeline] engine) */
static int worker_create(struct lrx_app *app, unsigned lcore_id, uint16_t tx_queue, unsigned e,
			 struct lrx_worker **out, char *err, size_t err_len)
{
	int socket = (int)rte_lcore_to_socket_id(lcore_id);
	struct lrx_worker *w = rte_zmalloc_socket("listrx_worker", sizeof(*w),
						  RTE_CACHE_LINE_SIZE, socket);
	if (!w) {
		snprintf(err, err_len, "lcore %u: no memory for its state", lcore_id);
		return -ENOMEM;
	}
	w->lcore_id = lcore_id;
	w->tx_queue = tx_queue;
	w->tx_clean = app->conf.tx_clean;
	w->tx_poll_every = w->tx_poll_countdown = app->conf.tx_clean_polls;
	w->sink = rte_zmalloc_socket("listrx_sink", sizeof(*w->sink), RTE_CACHE_LINE_SIZE,
				     socket);
	if (w->sink) {
		w->sink->capture_drops = capture_drops;
		w->sink->capture_delivered = capture_delivered;
	}
	for (unsigned i = 0; i < RTE_MAX_ETHPORTS; i++)
		w->forward_of_port[i] = -1;
	for (unsigned i = 0; i < app->ports.n; i++) {
		const struct lrx_port *port = &app->ports.ports[i];
		if (port->forward_port_id >= 0) {
			w->forward_of_port[port->port_id] = port->forward_port_id;
			w->forwarding = true;
		}
	}
	*out = w;
	if (!w->sink) {
		snprintf(err, err_len, "lcore %u: no memory for its sink", lcore_id);
		return -ENOMEM;
	}
	if (app->conf.latency) {
		int rc = worker_latency_create(app, w, socket, err, err_len);
		if (rc < 0)
			return rc;
	}
	if (app->conf.pmu.enabled) {
		w->pmu = rte_zmalloc_socket("listrx_pmu", sizeof(*w->pmu), RTE_CACHE_LINE_SIZE,
					    socket);
		if (!w->pmu) {
			snprintf(err, err_len, "lcore %u: no memory for its counters", lcore_id);
			return -ENOMEM;
		}
		lrx_pmu_init(w->pmu, &app->conf.pmu);
	}
	struct lrx_pipeline_conf pc = app->conf.pipeline;
	pc.socket_id = socket;
	pc.lcore_id = lcore_id;
	const struct lrx_engine_list *il = &app->conf.interleave;
	if (il->n) {
		pc.engine = il->kind[e];
		pc.hybrid_k = il->hybrid_k[e];
		if (il->prefetch[e] != LRX_ENGINE_PREFETCH_PIPELINE)
			pc.prefetch = (uint16_t)il->prefetch[e];
		lrx_engine_list_item_name(il, e, w->engine, sizeof(w->engine));
	} else if (pc.engine == LRX_ENGINE_HYBRID) {
		snprintf(w->engine, sizeof(w->engine), "hybrid:%u", pc.hybrid_k);
	} else {
		snprintf(w->engine, sizeof(w->engine), "%s", lrx_engine_name(pc.engine));
	}
	/* the I/O baseline: nothing between RX and the free (lcore_loop.c) */
	w->rx_only = pc.n_stages == 0 && pc.engine != LRX_ENGINE_GRAPH &&
		     !w->forwarding && !w->latency;
	int rc = pc.n_stages ? lrx_worker_qsbr_create(w, socket, err, err_len) : 0;
	pc.qsbr = w->qsbr;
	rc = rc ?: lrx_pipeline_create(&pc, &w->pipeline, err, err_len);
	if (rc == 0 && !lrx_pipeline_writable_maps(w->pipeline)) {
		rte_free(w->qsbr); /* no stage kept it: no report per poll */
		w->qsbr = NULL;
	}
	if (rc == 0 && capture_drops && !w->rx_only) {
		rc = lrx_pipeline_mark_drop_stage(w->pipeline);
		if (rc < 0)
			snprintf(err, err_len, "--capture-drops: cannot mark the stage of drops: %s",
				 rte_strerror(-rc));
		w->sink->pipeline = w->pipeline;
	}
	return rc;
}

static void worker_destroy(struct lrx_worker *w)
{
	if (!w)
		return;
	lrx_interleave_free(w);
	if (w->pipeline)
		lrx_pipeline_destroy(w->pipeline);
	rte_free(w->qsbr);
	if (w->pmu)
		lrx_pmu_close(w->pmu);
	rte_free(w->pmu);
	rte_free(w->latency);
	rte_free(w->sink);
	rte_free(w);
}

static int add_poll(struct lrx_worker *w, struct lrx_port *port, uint16_t queue)
{
	if (w->n_polls == LRX_MAX_LCORE_POLLS)
		return -ENOSPC;
	w->polls[w->n_polls++] = (struct lrx_worker_poll){.port = port, .queue = queue};
	return 0;
}

/* Which lcores poll: [lcore.N] sections, else every worker lcore (queues
 * spread round-robin; with the auto port set, the first worker polls
 * all), else the main lcore. */
static int lcores_plan(struct lrx_app *app, unsigned *ids, unsigned *n, char *err,
		       size_t err_len)
{
	*n = 0;
	if (app->conf.n_lcores) {
		for (unsigned i = 0; i < app->conf.n_lcores; i++) {
			unsigned id = app->conf.lcores[i].lcore_id;
			if (!rte_lcore_is_enabled(id)) {
				snprintf(err, err_len,
					 "[lcore.%u]: lcore %u is not enabled in EAL (EAL options -l/--lcores; enabled: %u lcores, main %u)",
					 id, id, rte_lcore_count(), rte_get_main_lcore());
				return -EINVAL;
			}
			ids[(*n)++] = id;
		}
		return 0;
	}
	unsigned id;
	RTE_LCORE_FOREACH_WORKER(id) {
		ids[(*n)++] = id;
		if (app->conf.n_ports == 0)
			break; /* auto ports: the first worker polls everything */
	}
	if (*n == 0)
		ids[(*n)++] = rte_get_main_lcore();
	return 0;
}

/* The polls of each lcore, given to its first worker (an interleaved
 * run's other engines poll the same queues: lrx_interleave_setup). */
static int workers_assign(struct lrx_app *app, unsigned n_lcores, char *err, size_t err_len)
{
	const unsigned per = app->n_workers / n_lcores;
	if (app->conf.n_lcores) {
		for (unsigned i = 0; i < app->conf.n_lcores; i++) {
			const struct lrx_lcore_conf *lc = &app->conf.lcores[i];
			for (unsigned p = 0; p < lc->n_polls; p++) {
				struct lrx_port *port = lrx_ports_by_index(&app->ports, lc->polls[p].port_index);
				add_poll(app->workers[i * per], port, lc->polls[p].queue);
			}
		}
		return 0;
	}
	unsigned next = 0;
	for (unsigned i = 0; i < app->ports.n; i++)
		for (uint16_t q = 0; q < app->ports.ports[i].rx_queues; q++) {
			if (add_poll(app->workers[next % n_lcores * per], &app->ports.ports[i], q) < 0) {
				snprintf(err, err_len, "too many queues for %u lcores (at most %u each)",
					 n_lcores, LRX_MAX_LCORE_POLLS);
				return -EINVAL;
			}
			next++;
		}
	return 0;
}

/* ---- main ---------------------------------------------------------------- */

static void run_prepare(struct lrx_app *app)
{
	/* a signal during set-up already asked to stop */
	atomic_store(&app->run.stop, app->stopped_by_signal);
	app->run.packet_limit = app->conf.packets;
	app->run.measure_from = app->conf.measure_from;
	app->run.burst = app->conf.pipeline.burst;
	app->run.busy_cycles = app->conf.pipeline.stats_level != LRX_STATS_OFF;
	app->run.coalesce_cycles = (uint64_t)app->conf.coalesce_us * rte_get_tsc_hz() / 1000000;
	/* the quota is signed because lcores reserve a burst past zero
	 * (lcore_loop.c); a limit beyond what it holds is still a limit:
	 * packet_limit (unsigned) ends the run, the quota never runs dry
	 * before it in practice (2^63 packets) */
	const uint64_t quota_max = INT_FAST64_MAX - (uint64_t)RTE_MAX_LCORE * LRX_BURST_MAX;
	atomic_store(&app->run.quota,
		     (int_fast64_t)RTE_MIN(app->conf.packets, quota_max));
	atomic_store(&app->run.received, 0);
	app->run.lcores = 0; /* the start gate waits for every polling lcore */
	for (unsigned i = 0; i < app->n_workers; i++)
		app->run.lcores += !app->workers[i]->follower;
	atomic_store(&app->run.arrived, 0);
}

/* Every worker but the main lcore's on its lcore; *on_main is the one
 * that polls on the main lcore (NULL when none does). Returns 0 or errno. */
static int workers_launch(struct lrx_app *app, struct lrx_worker_arg *args,
			  struct lrx_worker_arg **on_main)
{
	unsigned main_lcore = rte_get_main_lcore();
	*on_main = NULL;
	memset(args, 0, app->n_workers * sizeof(*args));
	/* none launched unless all can be: a lcore a stage runs something on
	 * (tcp_reader_lcore) cannot poll */
	for (unsigned i = 0; i < app->n_workers; i++) {
		const unsigned id = app->workers[i]->lcore_id;
		if (!app->workers[i]->follower && id != main_lcore &&
		    rte_eal_get_lcore_state(id) != WAIT) {
			fprintf(stderr, "listrx: lcore %u polls, but a stage already runs on it "
				"(tcp_reader_lcore?): give that another lcore\n", id);
			return EBUSY;
		}
	}
	for (unsigned i = 0; i < app->n_workers; i++) {
		args[i] = (struct lrx_worker_arg){.worker = app->workers[i], .run = &app->run};
		if (app->workers[i]->follower)
			continue; /* its lcore's first worker polls it */
		if (app->workers[i]->lcore_id == main_lcore) {
			*on_main = &args[i];
			continue;
		}
		int rc = rte_eal_remote_launch(lrx_worker_main, &args[i],
					       app->workers[i]->lcore_id);
		if (rc < 0) {
			fprintf(stderr, "listrx: cannot launch lcore %u: %s\n",
				app->workers[i]->lcore_id, strerror(-rc));
			return -rc;
		}
	}
	return 0;
}

/* The main lcore polls: the monitor runs beside it. Returns 0 or errno. */
static int main_lcore_poll(struct lrx_app *app, struct lrx_worker_arg *arg)
{
	pthread_t monitor;
	if (pthread_create(&monitor, NULL, monitor_main, app) != 0)
		return EAGAIN;
	lrx_worker_main(arg);
	atomic_store(&app->run.stop, true);
	pthread_join(monitor, NULL);
	return 0;
}

static int run(struct lrx_app *app)
{
	struct lrx_worker_arg args[RTE_MAX_LCORE], *on_main;
	run_prepare(app);
	app->start_tsc = rte_rdtsc();
	polls_running = 1;
	int rc = workers_launch(app, args, &on_main);
	if (rc == 0 && on_main)
		rc = main_lcore_poll(app, on_main);
	else if (rc == 0)
		monitor_main(app);
	if (rc != 0)
		atomic_store(&app->run.stop, true);
	/* the polling lcores only: a stage's own lcore (tcp_reader_lcore)
	 * runs until the drain below stops it */
	for (unsigned i = 0; i < app->n_workers; i++)
		if (args[i].worker != NULL && args[i].worker->lcore_id != rte_get_main_lcore())
			rte_eal_wait_lcore(args[i].worker->lcore_id);
	polls_running = 0;
	if (rc != 0)
		return rc;
	app->end_tsc = rte_rdtsc();
	/* what stages still hold goes on now, as at napi_disable */
	for (unsigned i = 0; i < app->n_workers; i++) {
		lrx_worker_drain(app->workers[i]);
		lrx_worker_qsbr_offline(app->workers[i]);
	}
	return 0;
}

static void ports_snapshot_and_close(struct lrx_app *app)
{
	for (unsigned i = 0; i < app->ports.n; i++)
		if (app->ports.ports[i].started &&
		    rte_eth_stats_get(app->ports.ports[i].port_id, &app->port_stats[i]) < 0)
			memset(&app->port_stats[i], 0, sizeof(app->port_stats[i]));
	lrx_ports_close(&app->ports);
}

static void workers_destroy(struct lrx_app *app)
{
	for (unsigned i = 0; i < app->n_workers; i++) {
		worker_destroy(app->workers[i]);
		app->workers[i] = NULL;
	}
	app->n_workers = 0;
}

/* listrx [EAL options] -- [listrx options]; without "--", every argument
 * is a listrx option. Returns the position of "--" or -1. */
static int split_argv(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return i;
	return -1;
}

static bool has_file_prefix(char *const *argv, int n)
{
	for (int i = 1; i < n; i++)
		if (!strcmp(argv[i], "--file-prefix") || !strncmp(argv[i], "--file-prefix=", 14))
			return true;
	return false;
}

/* EAL: the command line's options, else the config's [eal] args */
static int eal_start(struct lrx_app *app, int eal_argc, char **argv)
{
	char eal_text[sizeof(app->conf.eal_args)];
	char *eal_argv[MAX_EAL_ARGS + 1];
	int n_eal;
	if (eal_argc > 1) {
		n_eal = eal_argc < MAX_EAL_ARGS ? eal_argc : MAX_EAL_ARGS;
		for (int i = 0; i < n_eal; i++)
			eal_argv[i] = argv[i];
		/* what runs is what the JSON and /listrx/config show */
		size_t used = 0;
		app->conf.eal_args[0] = '\0';
		for (int i = 1; i < n_eal && used < sizeof(app->conf.eal_args); i++) {
			int w = snprintf(app->conf.eal_args + used, sizeof(app->conf.eal_args) - used,
					 "%s%s", i > 1 ? " " : "", argv[i]);
			used += w > 0 ? (size_t)w : 0;
		}
		if (app->conf.cfg)
			lrx_ini_set(app->conf.cfg, "eal", "args", app->conf.eal_args);
	} else {
		memcpy(eal_text, app->conf.eal_args, sizeof(eal_text));
		eal_text[sizeof(eal_text) - 1] = '\0';
		eal_argv[0] = argv[0];
		n_eal = 1 + split_eal_args(eal_text, eal_argv + 1, MAX_EAL_ARGS - 1);
	}
	/* two runs with one prefix share EAL's runtime directory, so the
	 * second's telemetry socket replaces the first's (rte_telemetry_init):
	 * without --file-prefix each run gets its own */
	static char own_prefix[32];
	if (!has_file_prefix(eal_argv, n_eal) && n_eal + 2 <= MAX_EAL_ARGS) {
		snprintf(own_prefix, sizeof(own_prefix), "listrx-%d", (int)getpid());
		eal_argv[n_eal++] = (char *)"--file-prefix";
		eal_argv[n_eal++] = own_prefix;
		size_t used = strlen(app->conf.eal_args);
		snprintf(app->conf.eal_args + used, sizeof(app->conf.eal_args) - used,
			 "%s--file-prefix %s", used ? " " : "", own_prefix);
		if (app->conf.cfg && lrx_ini_get(app->conf.cfg, "eal", "args"))
			lrx_ini_set(app->conf.cfg, "eal", "args", app->conf.eal_args);
	}
	eal_argv[n_eal] = NULL;
	char *shown[MAX_EAL_ARGS + 1]; /* rte_eal_init's getopt permutes eal_argv */
	memcpy(shown, eal_argv, sizeof(shown));
	lrx_runtime_dir_prepare(eal_argv[n_eal - 1] == own_prefix);
	int rc = rte_eal_init(n_eal, eal_argv);
	/* set from the prefix early in rte_eal_init, also when it fails later */
	lrx_runtime_dir_set(rte_eal_get_runtime_dir(),
			    rc >= 0 && rte_eal_process_type() == RTE_PROC_PRIMARY);
	if (rc >= 0)
		return 0;
	fprintf(stderr, "listrx: EAL initialisation failed: %s (EAL options: ",
		rte_strerror(rte_errno));
	for (int i = 1; i < n_eal; i++)
		fprintf(stderr, "%s%s", i > 1 ? " " : "", shown[i]);
	fprintf(stderr, ")\n");
	return -EINVAL;
}

/* A polling lcore pinned to a CPU that something else keeps busy (another
 * poll-mode process, say) shares that CPU: its figures measure both. */
static void warn_busy_lcores(const unsigned *ids, unsigned n)
{
	unsigned cpus[RTE_MAX_LCORE], lcores[RTE_MAX_LCORE], n_cpus = 0;
	for (unsigned i = 0; i < n; i++) {
		rte_cpuset_t set = rte_lcore_cpuset(ids[i]);
		if (CPU_COUNT(&set) != 1)
			continue; /* not pinned to one CPU: the scheduler moves it */
		for (unsigned c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set)) {
				lcores[n_cpus] = ids[i];
				cpus[n_cpus++] = c;
				break;
			}
	}
	double share[RTE_MAX_LCORE];
	if (n_cpus == 0 || lrx_cpus_busy_share(cpus, n_cpus, 80, share) < 0)
		return;
	for (unsigned i = 0; i < n_cpus; i++)
		if (share[i] >= 0.5)
			fprintf(stderr,
				"listrx: warning: polling lcore %u runs on CPU %u, which was %.0f %% busy before the start (another poll-mode process?): the run shares it and its timings measure both; choose a free CPU with EAL -l\n",
				lcores[i], cpus[i], 100 * share[i]);
}

/* Every pipeline built: each stage checks what it names elsewhere in the
 * run (stage.h: start). Warnings are printed; 0 or -errno with err. */
static int workers_start(struct lrx_app *app, char *err, size_t err_len)
{
	uint16_t ports[LRX_MAX_PORTS];
	char warn[2048];
	for (unsigned i = 0; i < app->ports.n; i++)
		ports[i] = app->ports.ports[i].port_id;
	for (unsigned i = 0; i < app->n_workers; i++) {
		if (!app->workers[i]->pipeline)
			continue;
		int rc = lrx_pipeline_start(app->workers[i]->pipeline, ports, app->ports.n, err,
					    err_len, warn, sizeof(warn));
		for (char *line = warn, *nl; i == 0 && *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl)
				break;
			fprintf(stderr, "listrx: warning: %.*s\n", (int)(nl - line), line);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Ports, lcores and their pipelines. Returns 0 or the exit status. */
static int setup(struct lrx_app *app)
{
	char err[2048];
	unsigned lcore_ids[RTE_MAX_LCORE], n_lcores;
	int rc = lrx_config_check_absent_stages(&app->conf, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "listrx: %s\n", err);
		return setup_error_status(rc);
	}
	rc = lcores_plan(app, lcore_ids, &n_lcores, err, sizeof(err));
	if (app->conf.priv_size == LRX_PRIV_SIZE_AUTO)
		app->conf.priv_size =
			lrx_pipeline_conf_mbuf_priv(&app->conf.pipeline);
	if (rc == 0)
		warn_busy_lcores(lcore_ids, n_lcores);
	/* an interleaved run: a worker per engine on every lcore */
	const unsigned per = app->conf.interleave.n ? app->conf.interleave.n : 1;
	if (rc == 0 && n_lcores * per > RTE_MAX_LCORE) {
		snprintf(err, sizeof(err), "[run] interleave: %u lcores x %u engines: at most %u pipelines",
			 n_lcores, per, RTE_MAX_LCORE);
		rc = -EINVAL;
	}
	/* what the stages can hold between polls, each mbuf charging what
	 * the kernel's truesize would: the struct, private area, data room;
	 * every pipeline of an interleaved run holds its own */
	const uint32_t mbuf_size = (uint32_t)(sizeof(struct rte_mbuf) + app->conf.priv_size +
					      app->conf.data_room);
	const uint64_t held = (uint64_t)n_lcores * per *
			      lrx_pipeline_conf_mbuf_hold(&app->conf.pipeline, mbuf_size);
	if (rc == 0)
		rc = lrx_ports_open(&app->conf, n_lcores, n_lcores * per * LRX_SINK_MAX, held,
				    &app->ports, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "listrx: %s\n", err);
		return (rc == -EINVAL || rc == -ENODEV) ? EXIT_USAGE : EXIT_RUNTIME;
	}
	for (unsigned i = 0; i < n_lcores * per; i++) {
		rc = worker_create(app, lcore_ids[i / per], (uint16_t)(i / per), i % per,
				   &app->workers[i], err, sizeof(err));
		app->n_workers = i + 1;
		if (rc < 0) {
			fprintf(stderr, "listrx: %s\n", err);
			return setup_error_status(rc);
		}
	}
	rc = workers_assign(app, n_lcores, err, sizeof(err));
	if (rc == 0 && app->conf.interleave.n)
		rc = lrx_interleave_setup(app->workers, n_lcores, per, app->conf.window_polls,
					  app->conf.window_us, app->conf.windows_max, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "listrx: %s\n", err);
		return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_USAGE;
	}
	rc = workers_start(app, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "listrx: %s\n", err);
		return setup_error_status(rc);
	}
	if (app->conf.trace) {
		trace = lrx_trace_alloc(app->conf.trace);
		if (!trace) {
			fprintf(stderr, "listrx: --trace %u: no memory for the trace\n", app->conf.trace);
			return EXIT_RUNTIME;
		}
		for (unsigned i = 0; i < app->n_workers; i++)
			if (app->workers[i]->pipeline &&
			    lrx_pipeline_set_trace(app->workers[i]->pipeline, trace) < 0) {
				fprintf(stderr, "listrx: --trace: too many stage instances to trace\n");
				return EXIT_RUNTIME;
			}
	}
	return 0;
}

static void report_fill(struct lrx_report *r, const void *app)
{
	lrx_report_fill(r, app);
}

static void report_fill_maps(struct lrx_report *r, const void *app)
{
	lrx_report_fill(r, app);
	lrx_report_fill_maps(r, app);
}

static void announce(const struct lrx_app *app)
{
	if (app->conf.telemetry && (lrx_telemetry_register(report_fill, app) < 0 ||
				    lrx_telemetry_register_maps(report_fill_maps, app) < 0 ||
				    lrx_telemetry_register_map_write(lrx_app_map_write, app) < 0 ||
				    (trace && lrx_telemetry_register_trace(trace) < 0)))
		fprintf(stderr, "listrx: telemetry commands not registered (telemetry disabled in EAL?)\n");
	char engine[336];
	unsigned lcores = 0;
	for (unsigned i = 0; i < app->n_workers; i++)
		lcores += !app->workers[i]->follower;
	if (app->conf.interleave.n) {
		char list[208];
		lrx_engine_list_name(&app->conf.interleave, list, sizeof(list));
		char window[64];
		if (app->conf.window_us)
			snprintf(window, sizeof(window), "about %u us", app->conf.window_us);
		else
			snprintf(window, sizeof(window), "%u polls", app->conf.window_polls);
		snprintf(engine, sizeof(engine), "engines %s interleaved (windows of %s, A B B A B A A B)",
			 list, window);
	} else {
		snprintf(engine, sizeof(engine), "engine %s", app->workers[0]->engine);
	}
	char coalesce[48] = "";
	if (app->conf.coalesce_us)
		snprintf(coalesce, sizeof(coalesce), " (then %u us after a short poll)",
			 app->conf.coalesce_us);
	fprintf(human_out, "listrx %s: %u port(s), %u polling lcore(s), %s, burst %u%s, %u stage(s)%s\n",
	       LISTRX_VERSION, app->ports.n, lcores, engine, app->conf.pipeline.burst, coalesce,
	       app->conf.pipeline.n_stages,
	       app->conf.duration_s == 0 && app->conf.packets == 0 ? "; Ctrl-C stops" : "");
	const char *prefix = strrchr(lrx_runtime_dir(), '/');
	if (app->conf.telemetry && prefix)
		fprintf(human_out, "telemetry: dpdk-telemetry.py -f %s\n", prefix + 1);
	fflush(human_out);
}

/* The summary (text, --json) of a run that started; returns the exit
 * status given the run's. */
static int report_run(const struct lrx_app *app, int status)
{
	struct lrx_report *r = lrx_report_alloc();
	if (!r) {
		fprintf(stderr, "listrx: no memory for the summary\n");
		return status ? status : EXIT_RUNTIME;
	}
	lrx_report_fill(r, app);
	r->trace = trace;
	if (lrx_report_fill_maps(r, app) < 0)
		fprintf(stderr, "listrx: no memory for the maps' entries: the summary shows part of them\n");
	lrx_summary_print(r, human_out);
	if (human_out == stdout && human_out_check()) { /* closed while it was written */
		human_out = stderr;
		lrx_summary_print(r, human_out);
	}
	if (app->conf.json_path[0]) {
		int rc = lrx_summary_write_json(r, json_to_stdout(&app->conf)
							   ? "/dev/stdout"
							   : app->conf.json_path);
		if (rc < 0) {
			fprintf(stderr, "listrx: --json %s: %s\n", app->conf.json_path,
				strerror(-rc));
			status = status ? status : EXIT_RUNTIME;
		}
	}
	lrx_report_free(r);
	if (app->mbufs_in_use_at_exit) {
		fprintf(stderr, "listrx: %u mbufs not returned to the pool at exit\n",
			app->mbufs_in_use_at_exit);
		status = status ? status : EXIT_RUNTIME;
	}
	if (app->mbufs_freed_twice_at_exit) {
		fprintf(stderr, "listrx: %u more mbufs in the pool at exit than it was made with: freed twice\n",
			app->mbufs_freed_twice_at_exit);
		status = status ? status : EXIT_RUNTIME;
	}
	return status;
}

/* After the run (or a failed set-up): the port counters, the pools'
 * state, the summary, then everything freed. */
static int finish(struct lrx_app *app, int status)
{
	/* telemetry's threads outlive everything below: its commands first */
	lrx_telemetry_close();
	ports_snapshot_and_close(app);
	app->mbufs_in_use_at_exit = lrx_ports_pools_in_use(&app->ports);
	app->mbufs_freed_twice_at_exit = lrx_ports_pools_over(&app->ports);
	app->driver_held_mbufs_at_exit = lrx_ports_driver_held(&app->ports);
	if (app->start_tsc)
		status = report_run(app, status);
	workers_destroy(app);
	status = captures_close(status, human_out);
	lrx_trace_free(trace);
	trace = NULL;
	lrx_ports_free_pools(&app->ports);
	lrx_config_free(&app->conf);
	rte_eal_cleanup();
	return status;
}

/* --reps: this command line again, rep by rep, in child processes. argv
 * is main's, whose "--" split_argv replaced by argv[0]; own_argv the
 * listrx options parse_options read (their skip flags index it). */
static int run_reps(const struct lrx_app *app, int argc, char **argv, int split,
		    char **own_argv, const struct lrx_options *opts)
{
	if (app->conf.duration_s == 0 && app->conf.packets == 0) {
		fprintf(stderr, "listrx: --reps %u: each rep must stop by itself: give --duration "
				"or --packets (or [run] duration/packets)\n",
			opts->reps);
		return EXIT_USAGE;
	}
	int own_argc = split < 0 ? argc : argc - split;
	char **cmd = calloc((size_t)argc + 2, sizeof(*cmd));
	bool *skip = calloc((size_t)argc + 2, sizeof(*skip));
	if (!cmd || !skip) {
		free(cmd);
		free(skip);
		return EXIT_RUNTIME;
	}
	int n = 0;
	cmd[n++] = argv[0];
	for (int i = 1; split >= 0 && i < split; i++)
		cmd[n++] = argv[i]; /* EAL options */
	if (split >= 0)
		cmd[n++] = (char *)"--";
	for (int i = 1; i < own_argc; i++) {
		for (unsigned t = 0; t < opts->n_reps_tokens; t++)
			skip[n] |= opts->reps_tokens[t] == i;
		cmd[n++] = own_argv[i];
	}
	struct lrx_reps_args a = {.argc = n, .argv = cmd, .skip = skip, .reps = opts->reps,
				  .json_path = app->conf.json_path,
				  .human = stdout_taken(&app->conf) ? stderr : stdout};
	int status = lrx_reps_run(&a);
	free(cmd);
	free(skip);
	return status;
}

int lrx_app_main(int argc, char **argv)
{
	struct lrx_app *app = &the_app;
	int split = split_argv(argc, argv);
	char **own_argv = split < 0 ? argv : argv + split;
	if (split >= 0)
		own_argv[0] = argv[0];

	struct lrx_options opts = {0};
	if (split >= 0 && lrx_options_before_split(argv, split))
		return EXIT_USAGE;
	if (lrx_options_parse(split < 0 ? argc : argc - split, own_argv, &opts) < 0)
		return EXIT_USAGE;
	int info = lrx_options_info(&opts);
	if (info >= 0)
		return info;

	/* from here to the exit a signal only asks the run to stop: one that
	 * arrives during EAL init or set-up skips the run (the summary shows
	 * 0 packets), one during shutdown changes nothing (tests/faults) */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal); /* a closed terminal: as SIGTERM */
	signal(SIGALRM, on_alarm); /* a second signal's wait (stuck_exit) */
	signal(SIGPIPE, SIG_IGN);  /* a closed stdout: EPIPE (human_out_check) */
	signal(SIGXFSZ, SIG_IGN);  /* a file over ulimit -f: EFBIG, a write error */
	char err[2048];
	if (lrx_config_load(&app->conf, opts.config, opts.overrides, opts.n_overrides, err,
			    sizeof(err)) < 0) {
		fprintf(stderr, "listrx: %s\n", err);
		return EXIT_USAGE;
	}
	human_out = stdout_taken(&app->conf) ? stderr : stdout;
	/* every output checked before anything is created or truncated */
	if (outputs_check(&app->conf, &opts, err, sizeof(err)) < 0 ||
	    json_check_writable(&app->conf, &opts, err, sizeof(err)) < 0 ||
	    captures_prepare(&app->conf, &opts, err, sizeof(err)) < 0) {
		fprintf(stderr, "listrx: %s\n", err);
		captures_close(0, human_out);
		lrx_config_free(&app->conf);
		return EXIT_USAGE;
	}
	if (opts.reps) {
		captures_close(0, human_out); /* each rep writes its own */
		int status = run_reps(app, argc, argv, split, own_argv, &opts);
		lrx_config_free(&app->conf);
		return status;
	}
	lrx_config_warn_absent_stages(&app->conf, stderr);
	if (eal_start(app, split < 0 ? 1 : split, argv) < 0) {
		captures_close(0, human_out);
		lrx_config_free(&app->conf);
		return EXIT_USAGE;
	}
	lrx_topology_read(&app->topo);
	int status = setup(app);
	if (status == 0)
		status = captures_start(app);
	if (status == 0) {
		announce(app);
		human_out_check();
		if (run(app) != 0)
			status = EXIT_RUNTIME;
	}
	if (human_out_check())
		human_out = stderr;
	return finish(app, status);
}
