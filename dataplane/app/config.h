/* SPDX-License-Identifier: BSD-3-Clause
 * listrx configuration: INI file read with lib/ini, overridden by
 * command-line options, validated completely before anything starts.
 */
#ifndef LISTRX_CONFIG_H
#define LISTRX_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "capture.h"
#include "ini.h"
#include "pipeline.h"
#include "pmu.h"
#include "sink.h" /* enum lrx_tx_clean */
#include "summary.h" /* enum lrx_stats_view */

#define LRX_MAX_PORTS 16
#define LRX_MAX_LCORE_POLLS 32
#define LRX_MAX_LCORE_CONFS 64
#define LRX_MAX_QUEUES 16
#define LRX_VALUE_LEN 256
#define LRX_PRIV_SIZE_AUTO UINT_MAX

/* Port offloads listrx can ask for (negotiated with rte_eth_dev_info). */
enum lrx_offload {
	LRX_OFFLOAD_RSS = 1u << 0,
	LRX_OFFLOAD_RX_CKSUM = 1u << 1,
	LRX_OFFLOAD_VLAN_STRIP = 1u << 2,
	LRX_OFFLOAD_TIMESTAMP = 1u << 3,
	LRX_OFFLOAD_LRO = 1u << 4,
	LRX_OFFLOAD_SCATTER = 1u << 5,
};

struct lrx_port_conf {
	unsigned index;                 /* N of [port.N] */
	char device[LRX_VALUE_LEN];     /* ethdev name or PCI address */
	char devargs[LRX_VALUE_LEN];    /* hot-plugged with these if not probed */
	uint16_t rx_queues, tx_queues;
	uint16_t rx_desc, tx_desc;
	uint32_t offloads;              /* enum lrx_offload bits wanted */
	uint32_t offloads_required;     /* of those, missing = error */
	uint16_t mtu;                   /* 0 = leave the device's */
	bool promiscuous;
	int forward_to;                 /* port index or -1: deliver locally */
};

struct lrx_poll_conf {
	uint16_t port_index;
	uint16_t queue;
};

struct lrx_lcore_conf {
	unsigned lcore_id;
	unsigned n_polls;
	struct lrx_poll_conf polls[LRX_MAX_LCORE_POLLS];
};

struct lrx_config {
	char path[PATH_MAX];            /* config file read */
	char eal_args[1024];            /* [eal] args */

	/* [run] */
	double duration_s;              /* 0 = until --packets or a signal */
	uint64_t packets;               /* 0 = no limit */
	uint64_t measure_from;          /* callgrind collects after this many packets; 0 = off */
	double stats_period_s;          /* 0 = no periodic line */
	enum lrx_stats_view stats_view; /* what the periodic line shows */
	char json_path[PATH_MAX];       /* "" = no JSON summary */
	struct lrx_capture_spec capture_drops;     /* path "" = off; pcapng */
	struct lrx_capture_spec capture_delivered;
	unsigned trace;                        /* --trace N: packets traced; 0 = off */
	/* interleaved engines (windows.h): n = 0 off */
	struct lrx_engine_list interleave;
	unsigned window_polls;          /* polls per window */
	unsigned window_us;             /* 0, or windows of about this long */
	unsigned windows_max;           /* windows recorded per lcore */
	unsigned coalesce_us;           /* wait after a poll short of the budget; 0 = none */
	enum lrx_tx_clean tx_clean;     /* who frees what TX queues hold once sent */
	unsigned tx_clean_polls;        /* tx-poll: a TX poll per this many polls */

	/* [pipeline] + [stage.NAME] */
	struct lrx_pipeline_conf pipeline;
	unsigned footprint_total_kb;    /* --footprint: split over stages */
	bool latency;                   /* --latency: RX stamp to verdict */

	/* [pmu] */
	struct lrx_pmu_conf pmu;

	/* [mempool] */
	unsigned mbufs;                 /* 0 = computed from ports/lcores */
	unsigned mempool_cache;
	unsigned data_room;
	unsigned priv_size;             /* LRX_PRIV_SIZE_AUTO: the stages' want */

	/* [port.N]; n_ports == 0: every probed ethdev, one queue each */
	unsigned n_ports;
	struct lrx_port_conf ports[LRX_MAX_PORTS];

	/* [lcore.N]; n_lcores == 0: first worker polls everything */
	unsigned n_lcores;
	struct lrx_lcore_conf lcores[LRX_MAX_LCORE_CONFS];

	/* [telemetry] */
	bool telemetry;

	/* a config file's [stage.NAME] sections of stages not in the
	 * pipeline (--set for one is refused): their values are checked by
	 * the stage's init once EAL is up (lrx_config_check_absent_stages);
	 * where = "file:line" */
	unsigned n_absent;
	struct lrx_stage_conf absent[LRX_PIPELINE_MAX_STAGES];
	char absent_where[LRX_PIPELINE_MAX_STAGES][128];

	/* the effective configuration, for --json and /listrx/config */
	struct lrx_ini *cfg;
};

/* A command-line override: section, key, value, and the option it came
 * from (named in error messages). */
struct lrx_override {
	char section[LRX_NAME_LEN];
	char key[LRX_NAME_LEN];
	char value[LRX_VALUE_LEN];
	char origin[LRX_NAME_LEN];
};

/* Loads path (NULL: the default config), applies overrides, validates.
 * Returns 0, or -EINVAL with a message in err naming file, line, section,
 * key, value and what is valid. */
int lrx_config_load(struct lrx_config *conf, const char *path,
		    const struct lrx_override *overrides, unsigned n_overrides,
		    char *err, size_t err_len);
/* Same, from INI text (tests). */
int lrx_config_load_string(struct lrx_config *conf, const char *text,
			   const struct lrx_override *overrides,
			   unsigned n_overrides, char *err, size_t err_len);
void lrx_config_free(struct lrx_config *conf);

/* Runs the init of every stage configured but not in the pipeline on its
 * values, as the docs promise that such keys are checked (needs EAL).
 * Returns 0 or the init's -errno with a message in err. */
int lrx_config_check_absent_stages(const struct lrx_config *conf, char *err,
				   size_t err_len);
/* One warning line per [stage.NAME] section of a stage not in the
 * pipeline: its keys do nothing in this run. */
void lrx_config_warn_absent_stages(const struct lrx_config *conf, FILE *out);

/* Path of the default config: conf/default.ini of the source tree when it
 * exists (running from a build directory), else the installed one. */
const char *lrx_config_default_path(void);

/* The key of a top-level section ([run], [pipeline], ...) or of a
 * [stage.NAME], or NULL for one read by code (engine, stages, events,
 * poll) or none. */
const struct lrx_value_key *lrx_config_key(const char *section, const char *key);

/* "rss,rx-cksum" from bits, into buf. */
const char *lrx_offload_names(uint32_t offloads, char *buf, size_t len);

#endif
