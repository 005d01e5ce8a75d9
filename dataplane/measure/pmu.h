/* SPDX-License-Identifier: BSD-3-Clause
 * Hardware counters inside listrx: one perf_event_open group per worker
 * lcore (the worker thread, user mode unless [pmu] kernel), enabled around
 * the poll loop and read once at its end, so start-up, port set-up and exit
 * are not in the figures. With [pmu] stages, the burst engine (and the
 * burst part of hybrid) also reads every counter with rdpmc before and
 * after each stage call and charges the difference to the stage: VPP
 * perfmon's per-node attribution, one read pair per stage per vector.
 *
 * A counter source is an ops table: "perf_event" is the kernel's, "fake"
 * is a software source for testing the plumbing where there is no PMU (its
 * counts are labelled fake in every output). A counter that cannot be
 * opened is "unavailable: <reason>", never a zero.
 */
#ifndef LISTRX_PMU_H
#define LISTRX_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LRX_PMU_MAX_EVENTS 8
#define LRX_PMU_NAME_LEN 48
#define LRX_PMU_WHY_LEN 400

/* The events [pmu] events = default names: cycles, instructions, L1i
 * misses, branch misses, iTLB misses (DESIGN.md's counter list). */
#define LRX_PMU_DEFAULT_EVENTS \
	"cycles,instructions,L1-icache-load-misses,branch-misses,iTLB-load-misses"

enum lrx_pmu_source_kind {
	LRX_PMU_SOURCE_PERF_EVENT, /* perf_event_open + rdpmc */
	LRX_PMU_SOURCE_FAKE,       /* software, for tests: not hardware counts */
};

/* One event as named by the user, with its perf_event_attr encoding and
 * the vendor raw event tried when the generic one is refused. */
struct lrx_pmu_event {
	char name[LRX_PMU_NAME_LEN];
	uint32_t type;          /* PERF_TYPE_* */
	uint64_t config;
	bool has_fallback;
	uint64_t fallback_raw;  /* PERF_TYPE_RAW config for this CPU */
	char fallback_name[LRX_PMU_NAME_LEN];
};

struct lrx_pmu_conf {
	bool enabled;                /* [pmu] events set (or --pmu) */
	bool stages;                 /* per-stage attribution (rdpmc) */
	bool kernel;                 /* count kernel mode too */
	enum lrx_pmu_source_kind source;
	unsigned n_events;
	struct lrx_pmu_event events[LRX_PMU_MAX_EVENTS];
};

/* Parses "default" or a comma list of event names: cycles, instructions,
 * branches, branch-misses, L1-icache-load-misses, L1-icache-loads,
 * iTLB-load-misses, cache-misses, ref-cycles, or raw events as perf spells
 * them (rHEX, NAME=rHEX), or, built with libpfm4, any name it resolves for
 * this CPU (perf::NAME, vendor event[:umask]). On an unknown name returns -EINVAL with the
 * offending token and the valid names in `why`. */
int lrx_pmu_parse_events(const char *text, struct lrx_pmu_conf *conf, char *why,
			 size_t why_len);
/* Whether event names outside perf's table resolve through libpfm4 here;
 * if not, why (built without it, or pfm_initialize failed). */
bool lrx_pmu_names_libpfm(char *why, size_t len);
const char *lrx_pmu_source_name(enum lrx_pmu_source_kind kind);

/* One counter of a worker's group. */
struct lrx_pmu_counter {
	char encoding[LRX_PMU_NAME_LEN]; /* what was opened, e.g. "raw:0x10000188e" */
	char why[LRX_PMU_WHY_LEN];       /* "" when counting, else why not */
	int fd;                          /* perf_event fd, -1 when not open */
	void *page;                      /* its perf_event_mmap_page (rdpmc) */
	uint64_t count;                  /* loop total (raw, not scaled) */
};

struct lrx_pmu_source;

/* A worker's group: created by the main thread from the config, opened,
 * started and stopped by the worker thread it counts. */
struct lrx_pmu {
	const struct lrx_pmu_conf *conf;
	const struct lrx_pmu_source *source;
	struct lrx_pmu_counter counters[LRX_PMU_MAX_EVENTS];
	unsigned n_open;                    /* counters open */
	uint8_t open_event[LRX_PMU_MAX_EVENTS]; /* group order -> event index */
	int leader_fd;
	bool rdpmc;          /* every open counter readable in user mode */
	bool counted;        /* the loop ran with the group enabled */
	bool stages_on;      /* the pipeline read it around stage calls */
	char why[LRX_PMU_WHY_LEN];        /* the group's reason when none counts */
	char stages_why[LRX_PMU_WHY_LEN]; /* why stage attribution is off */
	uint64_t time_enabled_ns, time_running_ns;
	/* fake source state */
	uint64_t fake_base_tsc;
};

/* Sets the group up for conf and source (no syscalls yet). */
void lrx_pmu_init(struct lrx_pmu *g, const struct lrx_pmu_conf *conf);
/* In the worker thread: opens the group on the calling thread. Events
 * that cannot be opened get their reason; returns the number open. */
unsigned lrx_pmu_open(struct lrx_pmu *g);
/* In the worker thread: reset + enable, then disable + read totals. */
void lrx_pmu_start(struct lrx_pmu *g);
void lrx_pmu_stop(struct lrx_pmu *g);
void lrx_pmu_close(struct lrx_pmu *g);
/* Whether stage attribution can run on this group (and if not, why is in
 * g->stages_why). */
bool lrx_pmu_stages_ready(const struct lrx_pmu *g);

/* A count scaled for multiplexing, as perf stat does: count * enabled /
 * running. 0 running (never scheduled) gives -1: not counted. */
double lrx_pmu_scaled(uint64_t count, uint64_t enabled_ns, uint64_t running_ns);

/* ---- the fast read (stage boundaries) ------------------------------------ */

/* perf_event_mmap_page self-monitoring read (include/uapi/linux/
 * perf_event.h): offset + the hardware counter, under the page's seqlock. */
uint64_t lrx_pmu_rdpmc_page(void *page);

/* Reads every open counter into values[event index]. */
void lrx_pmu_read_slow(const struct lrx_pmu *g, uint64_t *values);

static inline void lrx_pmu_read(const struct lrx_pmu *g, uint64_t *values)
{
	if (__builtin_expect(g->rdpmc, 1)) {
		for (unsigned i = 0; i < g->n_open; i++)
			values[g->open_event[i]] =
				lrx_pmu_rdpmc_page(g->counters[g->open_event[i]].page);
		return;
	}
	lrx_pmu_read_slow(g, values);
}

/* ---- the fake source (tests) ----------------------------------------------
 * Counter k reads (k + 1) * (TSC - TSC at open) + lrx_pmu_fake_added[k]:
 * time-shaped numbers with a known ratio between events. Tests that need
 * exact attribution switch the TSC part off and add counts themselves (a
 * test stage "costs" what it adds). Events whose bit is set in
 * lrx_pmu_fake_refuse are refused as a PMU without them would. */
extern __thread uint64_t lrx_pmu_fake_added[LRX_PMU_MAX_EVENTS];
extern bool lrx_pmu_fake_use_tsc;
extern uint32_t lrx_pmu_fake_refuse;

#endif
