/* SPDX-License-Identifier: BSD-3-Clause
 * The report model: everything the exit summary, the JSON file, the
 * periodic line and telemetry show, read once from the run into plain
 * values. The app fills it (app/report_fill.c, the only code that reads
 * the run); the renderers (summary.c: text and JSON, telemetry.c) read the
 * model only, so the three give the same numbers. This layer knows the
 * engine and the measurements, never the app or its config.
 *
 * Every field is a value (or a pointer into the config or the workers'
 * counter groups, which outlive any report), so two reports taken at two
 * times can be subtracted field by field: a per-period view (rates of the
 * last second, as VPP's "show runtime") is the difference of two models. */
#ifndef LISTRX_STATS_H
#define LISTRX_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "ini.h"
#include <rte_ethdev.h>

#include "pipeline.h"
#include "pmu.h"
#include "sink.h" /* enum lrx_tx_clean */
#include "topology.h"
#include "windows.h"

#define LRX_REPORT_MAX_PORTS 16
#define LRX_REPORT_MAX_QUEUES (LRX_REPORT_MAX_PORTS * 64)
#define LRX_REPORT_MAX_COUNTERS 192 /* a stage's own counters (tests/core: every stage fits) */
#define LRX_REPORT_COUNTER_NAME 48
#define LRX_REPORT_REASON_LEN 1024
#define LRX_REPORT_MAX_DEV_COUNTERS 8

struct lrx_totals {
	uint64_t rx, tx, tx_failed, delivered, dropped;
	/* rx not accounted as tx, delivered or dropped: the packets stages
	 * merged into others (GRO, reassembly) plus those they hold */
	uint64_t held;
	uint64_t merged;      /* the stages' LRX_COUNTER_MERGED counters */
	uint64_t made;        /* the stages' LRX_COUNTER_MADE counters */
	uint64_t held_now;    /* packets the stages hold now (their held hooks):
			       * rx + made = tx + delivered + dropped + merged +
			       * held_now */
	uint64_t drops[LRX_DROP_MAX];
	uint64_t polls, empty_polls, busy_cycles;
	/* [run] tx_clean rx-poll / tx-poll: the poll's cleaning (sink.h) */
	uint64_t tx_clean_calls, tx_cleaned, tx_clean_busy;
};

struct lrx_report_counter {
	char name[LRX_REPORT_COUNTER_NAME];
	enum lrx_counter_role role;     /* stage.h: what the accounting reads */
	uint64_t value;
};

struct lrx_report_stage {
	char name[LRX_NAME_LEN];
	struct lrx_stage_stats stats;   /* summed over lcores */
	uint64_t dropped;               /* sum of stats.drops */
	bool attributable;              /* [pmu] stages reads around it */
	unsigned n_counters;            /* the stage's own counters, in order */
	struct lrx_report_counter counters[LRX_REPORT_MAX_COUNTERS];
};

struct lrx_report_port {
	unsigned index, port_id;
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[64];
	struct rte_eth_stats stats;     /* taken before close; 0 while running */
	bool link_up;
	unsigned link_down_events;
	double link_down_s;
	char offloads[128], offloads_missing[128];
	/* the stages' device counters of this port (rx_dropped,
	 * rx_otherhost_dropped: stage.h port_counters), summed over lcores */
	unsigned n_dev_counters;
	struct lrx_report_counter dev_counters[LRX_REPORT_MAX_DEV_COUNTERS];
};

struct lrx_report_queue {
	unsigned port;                  /* position in ports[] */
	unsigned queue, lcore;
	uint64_t rx_packets, polls;
};

struct lrx_report_lcore {
	unsigned lcore;
	char engine[24];                /* its pipeline's engine */
	uint64_t polls, empty_polls, packets, busy_cycles;
	/* what its pipeline did with its packets: packets + made =
	 * delivered + dropped + tx + merged + held_now (an interleaved run's
	 * engines each have a worker of their own on the lcore) */
	uint64_t delivered, dropped, tx, merged, made, held_now;
	bool follower;                  /* an interleaved lcore's engine after the first */
	const struct lrx_window_log *windows; /* the first one's: the windows */
	bool measuring;
	uint64_t measured_packets;
	/* [pmu]: the lcore's group */
	bool has_pmu, pmu_counted, pmu_stages_on;
	uint64_t time_enabled_ns, time_running_ns;
	bool pmu_count_ok[LRX_PMU_MAX_EVENTS];
	uint64_t pmu_count[LRX_PMU_MAX_EVENTS];
};

struct lrx_report_latency {
	bool on;                                /* --latency */
	uint64_t samples, clamped, at_exit;
	double p50_ns, p99_ns, p999_ns, max_ns; /* meaningful with samples */
	/* turnaround (lrx_latency_turnaround): the same figures */
	uint64_t turnaround_samples, turnaround_clamped;
	double turnaround_p50_ns, turnaround_p99_ns, turnaround_p999_ns, turnaround_max_ns;
	double clamp_ns;                        /* the histogram's range */
	char reason[LRX_REPORT_REASON_LEN];     /* why (some) latency is missing */
};

struct lrx_report_pmu {
	bool on;                             /* [pmu] set */
	struct lrx_pmu_conf conf;
	unsigned workers_counted;            /* lcores whose group counted */
	bool multiplexed;                    /* some group ran part of the time */
	double count[LRX_PMU_MAX_EVENTS];    /* scaled, summed */
	uint64_t packets[LRX_PMU_MAX_EVENTS];/* rx of the lcores that counted it */
	const char *why[LRX_PMU_MAX_EVENTS]; /* NULL when counted, else why not */
	const char *encoding[LRX_PMU_MAX_EVENTS];
	const char *group_why;               /* no lcore counted: why */
	const char *stages_why;              /* why not every lcore attributed */
	bool stages;                         /* per-stage figures exist */
	bool stages_live;                    /* every lcore reads around stages */
};

/* A stage's map (an eBPF program's), as `bpftool map dump`: one per
 * lcore, as each lcore's stage instance has its own maps (docs/xdp.md). */
struct lrx_report_map {
	char stage[LRX_NAME_LEN];
	unsigned lcore;
	char name[32], type[16];
	uint32_t key_size, value_size, max_entries;
	uint32_t n_entries;
	uint8_t *data;          /* n_entries x (key, value) */
	struct lrx_map_layout layout; /* the fields; n_fields 0: bytes only */
};

struct lrx_report {
	/* build and run set-up */
	const char *version, *build, *dpdk_version;
	const char *commit; /* git describe of the source at build time */
	bool retpoline;
	char engine[208];               /* "interleave:packet,burst" when interleaved */
	unsigned burst;
	unsigned coalesce_us;           /* [run] coalesce_us */
	enum lrx_tx_clean tx_clean;     /* [run] tx_clean */
	unsigned tx_clean_polls;        /* tx-poll's polls between TX polls */
	enum lrx_stats_level stats_level;
	uint64_t tsc_hz;
	double duration_s;
	bool stopped_by_signal;
	uint64_t measure_from, measured_packets;
	struct lrx_totals totals;

	unsigned n_ports;
	struct lrx_report_port ports[LRX_REPORT_MAX_PORTS];
	unsigned n_queues;
	struct lrx_report_queue queues[LRX_REPORT_MAX_QUEUES];
	unsigned n_lcores;
	struct lrx_report_lcore lcores[RTE_MAX_LCORE];
	unsigned n_stages;
	struct lrx_report_stage stages[LRX_PIPELINE_MAX_STAGES];

	struct lrx_report_latency latency;
	struct lrx_report_pmu pmu;

	unsigned footprint_bytes;
	struct lrx_topology topo;
	unsigned mbufs_in_use_at_exit, driver_held_mbufs_at_exit, mbufs_per_pool;
	unsigned mbufs_freed_twice_at_exit; /* lrx_ports_pools_over */
	unsigned pool_cache, pool_data_room, pool_priv_size;
	bool pool_packed;
	/* the most packets the stages held when the monitor saw rx_nombuf
	 * grow (0: never): the pool ran dry because of what they hold */
	uint64_t nombuf_held;
	/* the config echo: the effective configuration and its file */
	const char *config_path;
	struct lrx_ini *config;

	/* the stages' maps: only lrx_report_fill_maps fills them (the summary
	 * at exit, telemetry /listrx/xdp/maps), so that the reports the
	 * periodic line copies by value own no memory */
	unsigned n_maps;
	struct lrx_report_map *maps;
	const struct lrx_trace *trace;  /* --trace, at exit; not owned */
};

struct lrx_report *lrx_report_alloc(void);
/* Frees the maps r holds (lrx_report_fill_maps fills them). */
void lrx_report_maps_free(struct lrx_report *r);
/* The period between two reports of one run: r (the later) minus then,
 * field by field where the field counts up (totals, queues, lcores'
 * polls, packets and busy cycles, stages' stats and counters); duration_s becomes the period's length.
 * The rest (names, settings, gauges such as held_now and the stages'
 * LRX_COUNTER_GAUGE counters) stays r's. */
void lrx_report_sub(struct lrx_report *r, const struct lrx_report *then);
void lrx_report_free(struct lrx_report *r);

/* Calls fn for every (section, key, value) of cfg (NULL: none): the
 * config echo of the report (config_path, config). */
void lrx_cfgfile_foreach(const struct lrx_ini *cfg,
			 void (*fn)(void *arg, const char *section,
				    const char *key, const char *value),
			 void *arg);
/* Value of the stage's own counter name, or false when it has none. */
bool lrx_report_stage_counter(const struct lrx_report_stage *s, const char *name,
			      uint64_t *value);
/* Sum of the stage's counters of a role (stage.h: enum lrx_counter_role);
 * false when it has none of that role. */
bool lrx_report_stage_role(const struct lrx_report_stage *s, enum lrx_counter_role role,
			   uint64_t *sum);
/* Stage cycles per packet and ns per packet; false when not measured
 * (stats level below cycles) or no packet went in. */
bool lrx_report_stage_cost(const struct lrx_report *r, const struct lrx_report_stage *s,
			   double *cycles_per_packet, double *ns_per_packet);

#endif
