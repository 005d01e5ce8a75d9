/* SPDX-License-Identifier: BSD-3-Clause
 * rte_telemetry commands under /listrx/, readable with dpdk-telemetry.py
 * while the binary runs: a renderer of the report model (stats.h),
 * refreshed from the live counters at each request. */
#ifndef LISTRX_TELEMETRY_H
#define LISTRX_TELEMETRY_H

#include <rte_telemetry.h>

#include "stats.h"

/* Fills a report from the run (called from the telemetry thread). */
typedef void (*lrx_telemetry_fill_fn)(struct lrx_report *r, const void *arg);

/* Registers /listrx/stats, /listrx/config, /listrx/stages, /listrx/lcores,
 * /listrx/latency, /listrx/runtime[,clear]. arg (and what fill reads) must
 * live until lrx_telemetry_close. */
int lrx_telemetry_register(lrx_telemetry_fill_fn fill, const void *arg);
/* Registers /listrx/STAGE/maps for every stage whose descriptor has maps
 * (stage.h: map_at): fill must fill the report's maps too
 * (lrx_report_fill_maps); arg as above. */
int lrx_telemetry_register_maps(lrx_telemetry_fill_fn fill, const void *arg);

/* Writes w into the maps of the stage named stage on every lcore (stage.h:
 * map_write); returns how many stage instances it asked (0: the stage
 * does not run, or the run has ended). */
typedef unsigned (*lrx_telemetry_map_write_fn)(const char *stage, struct lrx_stage_map_write *w,
					       const void *arg);
/* Registers /listrx/STAGE/map_update,NAME:KEY=VALUE[,any|noexist|exist]
 * and /listrx/STAGE/map_delete,NAME:KEY for every stage whose descriptor
 * has map_write; arg as above. */
int lrx_telemetry_register_map_write(lrx_telemetry_map_write_fn fn, const void *arg);
/* The reply to a write into stage's maps that instances instances saw:
 * "result" ok, or error with "error" (the errno's name: E2BIG, EEXIST,
 * ENOENT, EINVAL), "errno" and "message"; "maps" and "written" counted. */
void lrx_telemetry_map_write(const struct lrx_stage_map_write *w, unsigned instances,
			     const char *stage, struct rte_tel_data *d);

/* Registers /listrx/trace: the --trace packets so far (t must live until
 * lrx_telemetry_close). */
struct lrx_trace;
int lrx_telemetry_register_trace(const struct lrx_trace *t);

/* Shuts every /listrx command before the app frees what they read
 * (rte_telemetry's threads serve clients until the process exits): waits
 * for the commands running, then each later one replies {"result":
 * "error", "error": "ESHUTDOWN", "errno", "message": "listrx is shutting
 * down: ..."} without reading the run. */
void lrx_telemetry_close(void);

/* The renderers behind the commands, from a report (tests call them). */
void lrx_telemetry_stats(const struct lrx_report *r, struct rte_tel_data *d);
void lrx_telemetry_config(const struct lrx_report *r, struct rte_tel_data *d);
int lrx_telemetry_stages(const struct lrx_report *r, struct rte_tel_data *d);
int lrx_telemetry_lcores(const struct lrx_report *r, struct rte_tel_data *d);
void lrx_telemetry_latency(const struct lrx_report *r, struct rte_tel_data *d);
/* /listrx/STAGE/maps: per map of stage (NULL: of every stage; key
 * lcore_stage_name) its type, sizes and up to LRX_TELEMETRY_MAP_ENTRIES
 * entries "KEY: VALUE" in hex (arrays: the non-zero ones), then "... N
 * more"; the JSON summary has them all. */
#define LRX_TELEMETRY_MAP_ENTRIES 32
int lrx_telemetry_maps(const struct lrx_report *r, const char *stage, struct rte_tel_data *d);
/* /listrx/runtime: period is a report minus the one at the last clear
 * (lrx_report_sub); totals are the run's, which a clear keeps. */
int lrx_telemetry_runtime(const struct lrx_report *period, const struct lrx_totals *totals,
			  struct rte_tel_data *d);

#endif
