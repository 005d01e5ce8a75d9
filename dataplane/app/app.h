/* SPDX-License-Identifier: BSD-3-Clause */
#ifndef LISTRX_APP_H
#define LISTRX_APP_H

#include <stdint.h>

#include <rte_ethdev.h>

#include "config.h"
#include "lcore_loop.h"
#include "ports.h"
#include "stats.h"
#include "topology.h"

struct lrx_app {
	struct lrx_config conf;
	struct lrx_topology topo;
	struct lrx_ports ports;
	unsigned n_workers;
	struct lrx_worker *workers[RTE_MAX_LCORE];
	struct lrx_run run;
	uint64_t start_tsc, end_tsc;    /* 0 until the run starts / ends */
	unsigned mbufs_in_use_at_exit;
	unsigned mbufs_freed_twice_at_exit; /* more back in the pools than they hold */
	unsigned driver_held_mbufs_at_exit;
	/* ethdev stats taken before the ports closed, for the summary */
	struct rte_eth_stats port_stats[LRX_MAX_PORTS];
	bool stopped_by_signal;
	int signal;
	/* the monitor's pool watch: rx_nombuf as last read, and the most
	 * packets the stages held when it grew (lrx_report.nombuf_held) */
	uint64_t nombuf_seen, nombuf_held;
};

/* The whole program: EAL, config, ports, lcores, summary. Returns the exit
 * status (0 ok, 1 run-time failure, 2 bad usage or config). */
int lrx_app_main(int argc, char **argv);

/* report_fill.c: the run into the report model (stats.h), while it runs
 * (telemetry, the periodic line) or after it. r is large: allocate it
 * (lrx_report_alloc). The maps too (freed by lrx_report_free): 0 or
 * -ENOMEM (r then has the maps it could copy). */
void lrx_report_fill(struct lrx_report *r, const struct lrx_app *app);
int lrx_report_fill_maps(struct lrx_report *r, const struct lrx_app *app);

/* map_write.c: telemetry's map_update/map_delete (lrx_telemetry_map_write_fn):
 * w into stage's instances on every lcore; returns how many instances it
 * asked. Telemetry calls it until lrx_telemetry_close, which finish()
 * calls before the pipelines go. */
unsigned lrx_app_map_write(const char *stage, struct lrx_stage_map_write *w, const void *arg);
/* The worker's quiescent-state variable (one reader, itself), online;
 * 0 or -ENOMEM with err. */
int lrx_worker_qsbr_create(struct lrx_worker *w, int socket, char *err, size_t err_len);
/* After the worker's last pipeline run (its drain): every grace period ends. */
void lrx_worker_qsbr_offline(struct lrx_worker *w);

#endif
