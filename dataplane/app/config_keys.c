/* SPDX-License-Identifier: BSD-3-Clause
 * The config's sections as tables of the value layer over struct
 * lrx_config (config_keys.h): each key, its default, what it takes and
 * the field it fills; config.c reads the file through them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>

#include "config.h"
#include "config_keys.h"
#include "prefetch.h"
#include "stage_keys.h"
#include "measure.h"
#include "trace.h"
#include "capture.h"

/* ---- sections: tables of the value layer over struct lrx_config ---------- */

static const struct lrx_value_flag offload_flags[] = {
	{"rss", LRX_OFFLOAD_RSS},
	{"rx-cksum", LRX_OFFLOAD_RX_CKSUM},
	{"vlan-strip", LRX_OFFLOAD_VLAN_STRIP},
	{"timestamp", LRX_OFFLOAD_TIMESTAMP},
	{"lro", LRX_OFFLOAD_LRO},
	{"scatter", LRX_OFFLOAD_SCATTER},
	{"none", 0},
	{NULL, 0},
};

const char *lrx_offload_names(uint32_t offloads, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (const struct lrx_value_flag *f = offload_flags; f->bits; f++) {
		if (!(offloads & f->bits))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", f->name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, len, "none");
	return buf;
}

/* [port.N] forward: none (-1) or a port index */
static int parse_forward(const char *text, void *out)
{
	uint64_t to;
	if (strcmp(text, "none") == 0) {
		*(int *)out = -1;
		return 0;
	}
	if (lrx_value_uint(text, 0, LRX_MAX_PORTS - 1, &to) < 0)
		return -EINVAL;
	*(int *)out = (int)to;
	return 0;
}

/* [mempool] priv_size: auto or bytes, a multiple of RTE_MBUF_PRIV_ALIGN */
static int parse_priv_size(const char *text, void *out)
{
	uint64_t bytes = LRX_PRIV_SIZE_AUTO;
	if (strcmp(text, "auto") != 0 &&
	    (lrx_value_uint(text, 0, 4096, &bytes) < 0 || bytes % RTE_MBUF_PRIV_ALIGN))
		return -EINVAL;
	*(unsigned *)out = (unsigned)bytes;
	return 0;
}

static const char *const stats_views[] = {"stages", "ports", "lcores", NULL};
static const char *const stats_levels[] = {
	[LRX_STATS_OFF] = "off", [LRX_STATS_COUNTERS] = "counters",
	[LRX_STATS_CYCLES] = "cycles", NULL};
static const char *const pmu_sources[] = {
	[LRX_PMU_SOURCE_PERF_EVENT] = "perf_event", [LRX_PMU_SOURCE_FAKE] = "fake", NULL};

#define CK(kind, field, ...) LRX_KEY_##kind(struct lrx_config, field, __VA_ARGS__)
const struct lrx_value_key config_eal_keys[] = {
	CK(STRING, eal_args, "args", "--no-huge --no-pci --no-shconf -m 1024",
	   "EAL arguments used when the command line gives none"),
	{.name = NULL},
};
const struct lrx_value_key config_run_keys[] = {
	CK(DOUBLE, duration_s, "duration", "0", 0, 1e9,
	   "seconds to run; 0 = until --packets or a signal"),
	CK(UINT, packets, "packets", "0", 0, UINT64_MAX,
	   "packets to receive over all lcores; 0 = no limit"),
	CK(UINT, measure_from, "measure_from", "0", 0, UINT64_MAX,
	   "under callgrind, collect costs only after this many packets, to the end of packets"),
	CK(DOUBLE, stats_period_s, "stats_period", "1", 0, 1e6,
	   "seconds between two stats lines; 0 = none"),
	CK(CHOICE, stats_view, "stats_view", "stages", stats_views,
	   "what the stats line adds to the totals, as rates over the period"),
	CK(STRING, json_path, "json", "", "write the summary as JSON to this file; - = stdout"),
	CK(CUSTOM, capture_drops, "capture_drops", NULL, lrx_capture_parse, LRX_CAPTURE_VALID,
	   "write the dropped packets (the first N) as pcapng, each with its drop reason"),
	CK(CUSTOM, capture_delivered, "capture_delivered", NULL, lrx_capture_parse,
	   LRX_CAPTURE_VALID, "the same for delivered packets"),
	CK(UINT, trace, "trace", "0", 0, LRX_TRACE_MAX,
	   "record the path of the first N packets through the stages; 0 = off"),
	CK(CUSTOM, interleave, "interleave", "none", lrx_engine_list_parse,
	   LRX_ENGINE_LIST_VALID,
	   "poll with these engines in turn on each lcore, each with its own pipeline, "
	   "a window of window_polls polls each, timed per window ([pipeline] engine unused)"),
	CK(UINT, window_polls, "window_polls", "64", 1, 1u << 20,
	   "polls per window of an interleaved run"),
	CK(UINT, window_us, "window_us", "0", 0, 1000000,
	   "0, or windows of about this many microseconds: after two blocks of window_polls, "
	   "the polls the slowest engine ran in this time"),
	CK(UINT, windows_max, "windows_max", "65536", 16, 1u << 24,
	   "windows recorded per lcore of an interleaved run (64 bytes each); later ones "
	   "run unrecorded"),
	CK(UINT, coalesce_us, "coalesce_us", "0", 0, 1000000,
	   "after a poll that received fewer packets than the budget, wait this many "
	   "microseconds before the next, as a NIC's interrupt moderation (ethtool -C "
	   "rx-usecs) delays NAPI's next poll; 0 = poll again at once (poll mode)"),
	CK(CHOICE, tx_clean, "tx_clean", "driver", lrx_tx_clean_names,
	   "who frees the mbufs a TX queue holds once sent: the driver as it does by itself, "
	   "the driver on transmit only (xmit), the RX poll before it receives, from the TX "
	   "queue paired with its RX queue under a trylock (rx-poll), or a TX poll of the "
	   "lcore's TX queues every tx_clean_polls polls (tx-poll)"),
	CK(UINT, tx_clean_polls, "tx_clean_polls", "8", 1, 1u << 20,
	   "tx_clean = tx-poll: polls between two TX polls"),
	{.name = NULL},
};
/* engine and stages are read by load_pipeline */
const struct lrx_value_key config_pipeline_keys[] = {
	CK(UINT, pipeline.burst, "burst", "64", 1, LRX_BURST_MAX,
	   "packets per poll (the NAPI budget)"),
	CK(CHOICE, pipeline.stats_level, "stats_level", "counters", stats_levels,
	   "what the engines count per stage: off, counters, or cycles too"),
	CK(UINT, footprint_total_kb, "footprint_kb", "0", 0, 1u << 20,
	   "ballast code (KB) executed per packet, split evenly over the stages; "
	   "overrides the stages' own footprint_kb"),
	CK(BOOL, latency, "latency", "no",
	   "record RX timestamp to verdict latency (needs TSC stamps)"),
	CK(UINT, pipeline.prefetch, "prefetch", RTE_STR(LRX_PREFETCH_DEFAULT), 0, LRX_PREFETCH_MAX,
	   "packets ahead each stage's burst loop prefetches; 0 = off"),
	{.name = NULL},
};
static_assert(RTE_MBUF_DEFAULT_BUF_SIZE == 2176, "[mempool] data_room's default");
const struct lrx_value_key config_mempool_keys[] = {
	CK(UINT, mbufs, "mbufs", "0", 0, 1u << 24, "mbufs per pool; 0 = computed"),
	CK(UINT, mempool_cache, "cache", "256", 0, 512, "per-lcore cache of the pool"),
	CK(UINT, data_room, "data_room", "2176", 256, 65535, "bytes of data per mbuf"),
	CK(CUSTOM, priv_size, "priv_size", "auto", parse_priv_size,
	   "auto, or bytes in 0..4096, a multiple of 8",
	   "mbuf private area; auto = what the stages' metadata wants"),
	{.name = NULL},
};
const struct lrx_value_key config_telemetry_keys[] = {
	CK(BOOL, telemetry, "enabled", "yes", "register the /listrx/ telemetry commands"),
	{.name = NULL},
};
/* events is read by load_pmu */
const struct lrx_value_key config_pmu_keys[] = {
	CK(BOOL, pmu.stages, "stages", "no", "per stage too, rdpmc around each stage call"),
	CK(BOOL, pmu.kernel, "kernel", "no", "count kernel mode too"),
	CK(CHOICE, pmu.source, "source", "perf_event", pmu_sources,
	   "perf_event (the kernel's counters) or fake (a software source for tests)"),
	{.name = NULL},
};
#undef CK
#define PK(kind, field, ...) LRX_KEY_##kind(struct lrx_port_conf, field, __VA_ARGS__)
const struct lrx_value_key config_port_keys[] = {
	PK(STRING, device, "device", "", "ethdev name or PCI address"),
	PK(STRING, devargs, "devargs", "", "hot-plugged with these if not probed"),
	PK(UINT, rx_queues, "rx_queues", "1", 1, LRX_MAX_QUEUES, "RX queues"),
	PK(UINT, tx_queues, "tx_queues", "1", 1, LRX_MAX_QUEUES, "TX queues"),
	PK(UINT, rx_desc, "rx_desc", "1024", 32, 16384, "RX descriptors per queue"),
	PK(UINT, tx_desc, "tx_desc", "1024", 32, 16384, "TX descriptors per queue"),
	PK(FLAGS, offloads, "offloads", "none", offload_flags, "offloads wanted"),
	PK(FLAGS, offloads_required, "offloads_required", "none", offload_flags,
	   "offloads whose absence is an error"),
	PK(UINT, mtu, "mtu", "0", 0, 9600, "MTU; 0 = the device's"),
	PK(BOOL, promiscuous, "promiscuous", "yes", "promiscuous mode"),
	PK(CUSTOM, forward_to, "forward", "none", parse_forward,
	   "none or a port index 0..15 (a [port.N] section)",
	   "deliver locally (none) or send delivered packets out of port N"),
	{.name = NULL},
};
#undef PK

const struct lrx_value_key *lrx_config_key(const char *section, const char *key)
{
	static const struct {
		const char *name;
		const struct lrx_value_key *keys;
	} sections[] = {
		{"eal", config_eal_keys}, {"run", config_run_keys}, {"pipeline", config_pipeline_keys},
		{"mempool", config_mempool_keys}, {"telemetry", config_telemetry_keys}, {"pmu", config_pmu_keys},
	};
	for (unsigned i = 0; i < RTE_DIM(sections); i++)
		if (strcmp(sections[i].name, section) == 0)
			return lrx_value_key_find(sections[i].keys, key);
	const struct lrx_stage *stage =
		strncmp(section, "stage.", 6) == 0 ? lrx_stage_find(section + 6) : NULL;
	return stage ? lrx_value_key_find(stage->keys, key) : NULL;
}
