/* SPDX-License-Identifier: BSD-3-Clause
 * The poll loop: one worker per lcore polling its (port, queue) list with a
 * NAPI-like budget, completing the sink (TX, frees, counters) per poll. */
#ifndef LISTRX_LCORE_LOOP_H
#define LISTRX_LCORE_LOOP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "latency.h"
#include "pipeline.h"
#include "pmu.h"
#include "ports.h"
#include "sink.h"
#include "windows.h"

struct lrx_queue_stats {
	uint64_t rx_packets;
	uint64_t polls;
};

struct lrx_worker_poll {
	struct lrx_port *port;
	uint16_t queue;
	struct lrx_queue_stats stats;
	uint64_t turnaround_last;         /* --latency: TSC at the poll's end */
};

struct lrx_interleave;

struct lrx_worker {
	unsigned lcore_id;
	uint16_t tx_queue;                /* this lcore's TX queue on every port */
	unsigned n_polls;
	struct lrx_worker_poll polls[LRX_MAX_LCORE_POLLS];
	struct lrx_pipeline *pipeline;
	struct lrx_sink *sink;
	bool forwarding;                  /* some port forwards delivered packets */
	int forward_of_port[RTE_MAX_ETHPORTS]; /* ingress port id -> port id or -1 */
	struct lrx_latency *latency;      /* NULL unless --latency */
	struct lrx_pmu *pmu;              /* NULL unless [pmu] */
	bool rx_only;                     /* empty pipeline, no forwarding, no latency */
	/* [run] tx_clean: who frees what the TX queues hold once sent */
	enum lrx_tx_clean tx_clean;
	unsigned tx_poll_every;           /* tx-poll: polls between TX polls */
	unsigned tx_poll_countdown;       /* polls until the next TX poll */
	/* [run] interleave: every engine of an lcore has a worker of its
	 * own (pipeline, sink, counters: what a process of its own had); the
	 * lcore's first one polls them all, window by window */
	struct lrx_interleave *interleave; /* the first one's; NULL otherwise */
	bool follower;                    /* polled by its lcore's first worker */
	char engine[24];                  /* its engine's name */
	/* its quiescent states (DPDK rte_rcu_qsbr, one thread): reported
	 * after every poll, so that another thread writing its stages'
	 * maps knows when no lookup of this lcore holds a deleted entry;
	 * NULL when no stage has maps others write */
	struct rte_rcu_qsbr *qsbr;

	/* written by the worker, read by the monitor and telemetry */
	uint64_t polls_total, empty_polls, rx_packets;
	uint64_t busy_cycles;             /* TSC in non-empty polls */
	uint64_t measured_from;           /* rx_packets when callgrind began collecting */
	bool measuring;
	struct lrx_sink_counters counters;
	bool done;
} __rte_cache_aligned;

/* The engines of one lcore of an interleaved run and its window log. */
struct lrx_interleave {
	unsigned n;
	struct lrx_worker *engines[LRX_ENGINE_LIST_MAX]; /* [0] polls */
	struct lrx_window_log log;
};

/* Shared by the workers of one run. What every poll reads sits apart from
 * what polls write, so that no write invalidates the line all lcores read
 * (a false-sharing miss per poll per lcore): `stop` and the settings on
 * one line, the --packets quota (written by every poll) on its own, the
 * start gate (written once per lcore) on its own. */
struct lrx_run {
	atomic_bool stop;
	uint64_t packet_limit;            /* 0 = none */
	uint64_t measure_from;            /* [run] measure_from; 0 = no window */
	uint16_t burst;
	bool busy_cycles;                 /* TSC per poll (stats level != off) */
	uint64_t coalesce_cycles;         /* [run] coalesce_us in TSC cycles; 0 = none */
	/* start gate: every polling lcore waits until `lcores` have arrived,
	 * so that a quota or a duration is shared from the same start (0 =
	 * no gate) */
	unsigned lcores;
	atomic_int_fast64_t quota __rte_cache_aligned; /* packets left to receive */
	atomic_uint_fast64_t received;    /* received under the limit */
	atomic_uint arrived __rte_cache_aligned;
} __rte_cache_aligned;

/* The worker body (rte_eal_remote_launch argument: struct lrx_worker_arg). */
struct lrx_worker_arg {
	struct lrx_worker *worker;
	struct lrx_run *run;
};
int lrx_worker_main(void *arg);

/* [run] interleave: workers holds n_lcores x per workers, an lcore's
 * engines together (e = 0 first); the first of each lcore gets the
 * others' polls (they poll the same queues) and the window log (windows
 * of window_polls polls; with window_us, of about that many
 * microseconds after two blocks of window_polls).
 * Returns 0 or -ENOMEM with err. */
int lrx_interleave_setup(struct lrx_worker **workers, unsigned n_lcores, unsigned per,
			 unsigned window_polls, unsigned window_us, unsigned windows_max, char *err,
			 size_t err_len);
void lrx_interleave_free(struct lrx_worker *w);

/* After the loop: releases what stages hold and completes the sink (not
 * recorded as latency: held until the run stopped, not until a verdict). */
void lrx_worker_drain(struct lrx_worker *w);

#endif
