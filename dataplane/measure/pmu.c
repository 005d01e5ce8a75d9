/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#ifdef LRX_HAVE_LIBPFM
#include <perfmon/pfmlib_perf_event.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <rte_common.h>
#include <rte_cycles.h>

#include "pmu.h"
#include "value.h"

__thread uint64_t lrx_pmu_fake_added[LRX_PMU_MAX_EVENTS];
bool lrx_pmu_fake_use_tsc = true;
uint32_t lrx_pmu_fake_refuse;

/* ---- event names --------------------------------------------------------- */

#define HW_CACHE(cache, op, result)                                   \
	((uint64_t)PERF_COUNT_HW_CACHE_##cache |                      \
	 (uint64_t)PERF_COUNT_HW_CACHE_OP_##op << 8 |                 \
	 (uint64_t)PERF_COUNT_HW_CACHE_RESULT_##result << 16)

/* perf's names for the generic events (tools/perf/util/evsel.c) */
static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} pmu_named[] = {
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
	{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
	{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
	{"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
	{"L1-icache-load-misses", PERF_TYPE_HW_CACHE, HW_CACHE(L1I, READ, MISS)},
	{"L1-icache-loads", PERF_TYPE_HW_CACHE, HW_CACHE(L1I, READ, ACCESS)},
	{"iTLB-load-misses", PERF_TYPE_HW_CACHE, HW_CACHE(ITLB, READ, MISS)},
	{"L1-dcache-load-misses", PERF_TYPE_HW_CACHE, HW_CACHE(L1D, READ, MISS)},
	{"LLC-load-misses", PERF_TYPE_HW_CACHE, HW_CACHE(LL, READ, MISS)},
};

/* The vendor's own instruction-cache miss event, tried where the kernel
 * has no generic L1-icache-load-misses for the CPU:
 *   AMD family 17h (Zen 1/2): IC_FW32_MISS, PMCx081;
 *   AMD family 19h/1Ah (Zen 3-5): IC_TAG_HIT_MISS.instruction_cache_miss,
 *     PMCx18E umask 0x18 (event bits 11:8 go to config bits 35:32);
 *   Intel Skylake and later: ICACHE_64B.IFTAG_MISS, event 0x83 umask 0x02;
 *   earlier Intel cores: ICACHE.MISSES, event 0x80 umask 0x02. */
static bool pmu_vendor_icache_miss(uint64_t *raw, char *name, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	char vendor[13];
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return false;
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return false;
	unsigned family = (a >> 8) & 0xf, model = (a >> 4) & 0xf;
	if (family == 0xf)
		family += (a >> 20) & 0xff;
	if (family == 0x6 || family == 0xf)
		model |= ((a >> 16) & 0xf) << 4;
	if (strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0) {
		if (family == 0x17 || family == 0x18) {
			*raw = 0x81;
			snprintf(name, len, "ic_fw32_miss");
			return true;
		}
		if (family >= 0x19) {
			*raw = UINT64_C(0x10000188e);
			snprintf(name, len, "ic_tag_hit_miss.instruction_cache_miss");
			return true;
		}
	} else if (strcmp(vendor, "GenuineIntel") == 0 && family == 6) {
		bool skylake_or_later = model >= 0x4e;
		*raw = skylake_or_later ? 0x0283 : 0x0280;
		snprintf(name, len, "%s",
			 skylake_or_later ? "ICACHE_64B.IFTAG_MISS" : "ICACHE.MISSES");
		return true;
	}
#else
	RTE_SET_USED(raw);
	RTE_SET_USED(name);
	RTE_SET_USED(len);
#endif
	return false;
}

/* Whether libpfm4 resolves event names here: pfm_initialize() detects the
 * PMU model from cpuid, so it works without a PMU the kernel exposes (a VM);
 * its generic "perf" PMU (perf's PERF_COUNT_HW_* names) is always there. */
bool lrx_pmu_names_libpfm(char *why, size_t len)
{
#ifdef LRX_HAVE_LIBPFM
	static int rc = 1;
	if (rc == 1)
		rc = pfm_initialize();
	if (rc != PFM_SUCCESS)
		snprintf(why, len, "libpfm4: pfm_initialize: %s", pfm_strerror(rc));
	return rc == PFM_SUCCESS;
#else
	snprintf(why, len, "built without libpfm4 (libpfm4-dev)");
	return false;
#endif
}

/* A name perf's table does not know: the CPU vendor's event names (and
 * perf::NAME, pmu::EVENT:UMASK) as libpfm4 spells them, encoded for
 * perf_event_open by pfm_get_os_event_encoding(PFM_OS_PERF_EVENT_EXT).
 * The privilege level is set at open time ([pmu] kernel), so only type
 * and config are taken; an event that needs config1/config2 (offcore
 * response, ...) is refused, struct lrx_pmu_event has no room for it. */
static int pmu_parse_libpfm(const char *tok, struct lrx_pmu_event *ev)
{
#ifdef LRX_HAVE_LIBPFM
	char why[64];
	if (!lrx_pmu_names_libpfm(why, sizeof(why)) || strlen(tok) >= sizeof(ev->name))
		return -EINVAL;
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	if (pfm_get_os_event_encoding(tok, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg) != PFM_SUCCESS ||
	    attr.config1 != 0 || attr.config2 != 0)
		return -EINVAL;
	snprintf(ev->name, sizeof(ev->name), "%s", tok);
	ev->type = attr.type;
	ev->config = attr.config;
	return 0;
#else
	RTE_SET_USED(tok);
	RTE_SET_USED(ev);
	return -EINVAL;
#endif
}

static int pmu_parse_one(const char *tok, struct lrx_pmu_event *ev)
{
	memset(ev, 0, sizeof(*ev));
	const char *eq = strchr(tok, '=');
	const char *raw = eq ? eq + 1 : tok;
	if (raw[0] == 'r' && raw[1] != '\0') {
		char *end;
		errno = 0;
		unsigned long long v = strtoull(raw + 1, &end, 16);
		if (errno == 0 && *end == '\0' && strspn(raw + 1, "0123456789abcdefABCDEF") ==
							  strlen(raw + 1)) {
			size_t name_len = eq ? (size_t)(eq - tok) : strlen(tok);
			if (name_len == 0 || name_len >= sizeof(ev->name))
				return -EINVAL;
			snprintf(ev->name, sizeof(ev->name), "%.*s", (int)name_len, tok);
			ev->type = PERF_TYPE_RAW;
			ev->config = v;
			return 0;
		}
	}
	if (eq)
		return -EINVAL;
	for (size_t i = 0; i < RTE_DIM(pmu_named); i++) {
		if (strcmp(tok, pmu_named[i].name) != 0)
			continue;
		snprintf(ev->name, sizeof(ev->name), "%s", tok);
		ev->type = pmu_named[i].type;
		ev->config = pmu_named[i].config;
		if (ev->type == PERF_TYPE_HW_CACHE && ev->config == HW_CACHE(L1I, READ, MISS))
			ev->has_fallback = pmu_vendor_icache_miss(&ev->fallback_raw,
								  ev->fallback_name,
								  sizeof(ev->fallback_name));
		return 0;
	}
	return pmu_parse_libpfm(tok, ev);
}

int lrx_pmu_parse_events(const char *text, struct lrx_pmu_conf *conf, char *why,
			 size_t why_len)
{
	char tok[LRX_PMU_NAME_LEN * 2];
	int more;
	if (strcmp(text, "default") == 0 || strcmp(text, "1") == 0)
		text = LRX_PMU_DEFAULT_EVENTS;
	conf->n_events = 0;
	for (const char *p = text; (more = lrx_value_list_next(&p, tok, sizeof(tok))) != 0;) {
		if (more < 0) {
			snprintf(why, why_len, "an empty or too long event in the list: name events "
				 "separated by single commas");
			return -EINVAL;
		}
		if (conf->n_events == LRX_PMU_MAX_EVENTS) {
			snprintf(why, why_len, "at most %d events in a group", LRX_PMU_MAX_EVENTS);
			return -EINVAL;
		}
		struct lrx_pmu_event *ev = &conf->events[conf->n_events];
		if (pmu_parse_one(tok, ev) < 0) {
			char valid[256] = "";
			for (size_t i = 0; i < RTE_DIM(pmu_named); i++) {
				strcat(valid, pmu_named[i].name);
				strcat(valid, ", ");
			}
			snprintf(why, why_len,
				 "unknown event '%s'; valid: default, %sa raw event rHEX / NAME=rHEX (as perf -e), or an event of this CPU as libpfm4 names it (showevtinfo)",
				 tok, valid);
			return -EINVAL;
		}
		for (unsigned k = 0; k < conf->n_events; k++)
			if (strcmp(conf->events[k].name, ev->name) == 0) {
				snprintf(why, why_len, "event '%s' named twice", ev->name);
				return -EINVAL;
			}
		conf->n_events++;
	}
	if (conf->n_events == 0) {
		snprintf(why, why_len, "no event named");
		return -EINVAL;
	}
	return 0;
}

const char *lrx_pmu_source_name(enum lrx_pmu_source_kind kind)
{
	return kind == LRX_PMU_SOURCE_FAKE ? "fake" : "perf_event";
}

double lrx_pmu_scaled(uint64_t count, uint64_t enabled_ns, uint64_t running_ns)
{
	if (running_ns == 0)
		return -1;
	if (running_ns >= enabled_ns)
		return (double)count;
	return (double)count * (double)enabled_ns / (double)running_ns;
}

/* ---- sources ------------------------------------------------------------- */

struct lrx_pmu_source {
	const char *name;
	/* opens event e of the group as (type, config); 0 or -errno with why */
	int (*open)(struct lrx_pmu *g, unsigned e, uint32_t type, uint64_t config,
		    char *why, size_t why_len);
	/* every open counter's current value into values[event index] */
	void (*read)(const struct lrx_pmu *g, uint64_t *values);
	void (*start)(struct lrx_pmu *g);
	void (*stop)(struct lrx_pmu *g);
	void (*close)(struct lrx_pmu *g);
};

static uint64_t monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* perf_event_open(2) */

static bool pmu_sysfs_has_cpu_pmu(void)
{
	static const char *const names[] = {"cpu", "cpu_core", "cpu_atom"};
	char path[128];
	struct stat st;
	for (size_t i = 0; i < RTE_DIM(names); i++) {
		snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s", names[i]);
		if (stat(path, &st) == 0)
			return true;
	}
	return false;
}

static int read_int_file(const char *path, int *out)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int rc = fscanf(f, "%d", out) == 1 ? 0 : -EINVAL;
	fclose(f);
	return rc;
}

static void perf_open_error(int err, bool kernel, char *why, size_t len)
{
	int paranoid = 99;
	switch (err) {
	case ENOENT:
	case ENODEV:
		if (!pmu_sysfs_has_cpu_pmu())
			snprintf(why, len,
				 "no hardware PMU: the kernel has no /sys/bus/event_source/devices/cpu (a VM without a virtual PMU?); perf_event_open: %s",
				 strerror(err));
		else
			snprintf(why, len, "this CPU's PMU has no such event (perf_event_open: %s)",
				 strerror(err));
		break;
	case EOPNOTSUPP:
		snprintf(why, len, "not supported by this CPU's PMU (perf_event_open: %s)",
			 strerror(err));
		break;
	case EACCES:
	case EPERM:
		read_int_file("/proc/sys/kernel/perf_event_paranoid", &paranoid);
		snprintf(why, len,
			 "not permitted: kernel.perf_event_paranoid is %d; run as root or set it to %d (%s)",
			 paranoid, kernel ? 1 : 2, strerror(err));
		break;
	case EINVAL:
		snprintf(why, len,
			 "the PMU rejects this encoding (a raw event of another CPU model, or the group is larger than the PMU's counters): %s",
			 strerror(err));
		break;
	default:
		snprintf(why, len, "perf_event_open: %s", strerror(err));
	}
}

static int perf_source_open(struct lrx_pmu *g, unsigned e, uint32_t type, uint64_t config,
			    char *why, size_t why_len)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = g->leader_fd < 0;
	a.exclude_kernel = !g->conf->kernel;
	a.exclude_hv = 1;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
	int fd = (int)syscall(SYS_perf_event_open, &a, 0 /* this thread */, -1 /* any cpu */,
			      g->leader_fd, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		perf_open_error(err, g->conf->kernel, why, why_len);
		return -err;
	}
	struct lrx_pmu_counter *c = &g->counters[e];
	c->fd = fd;
	long page_size = sysconf(_SC_PAGESIZE);
	void *page = mmap(NULL, (size_t)page_size, PROT_READ, MAP_SHARED, fd, 0);
	c->page = page == MAP_FAILED ? NULL : page;
	if (g->leader_fd < 0)
		g->leader_fd = fd;
	return 0;
}

static void perf_source_read(const struct lrx_pmu *g, uint64_t *values)
{
	uint64_t buf[3 + LRX_PMU_MAX_EVENTS];
	ssize_t n = read(g->leader_fd, buf, sizeof(buf));
	if (n < (ssize_t)(3 * sizeof(uint64_t)))
		return;
	for (unsigned i = 0; i < g->n_open && i < buf[0]; i++)
		values[g->open_event[i]] = buf[3 + i];
}

static void perf_source_start(struct lrx_pmu *g)
{
	ioctl(g->leader_fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	ioctl(g->leader_fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
}

static void perf_source_stop(struct lrx_pmu *g)
{
	uint64_t buf[3 + LRX_PMU_MAX_EVENTS];
	ioctl(g->leader_fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	ssize_t n = read(g->leader_fd, buf, sizeof(buf));
	if (n < (ssize_t)(3 * sizeof(uint64_t)) || buf[0] != g->n_open) {
		snprintf(g->why, sizeof(g->why), "reading the group failed: %s",
			 n < 0 ? strerror(errno) : "short read");
		return;
	}
	g->time_enabled_ns = buf[1];
	g->time_running_ns = buf[2];
	for (unsigned i = 0; i < g->n_open; i++)
		g->counters[g->open_event[i]].count = buf[3 + i];
	g->counted = true;
}

static void perf_source_close(struct lrx_pmu *g)
{
	long page_size = sysconf(_SC_PAGESIZE);
	for (unsigned e = 0; e < LRX_PMU_MAX_EVENTS; e++) {
		struct lrx_pmu_counter *c = &g->counters[e];
		if (c->page)
			munmap(c->page, (size_t)page_size);
		c->page = NULL;
		/* members first: the leader last */
		if (c->fd >= 0 && c->fd != g->leader_fd)
			close(c->fd);
		c->fd = -1;
	}
	if (g->leader_fd >= 0)
		close(g->leader_fd);
	g->leader_fd = -1;
}

static const struct lrx_pmu_source perf_event_source = {
	.name = "perf_event",
	.open = perf_source_open,
	.read = perf_source_read,
	.start = perf_source_start,
	.stop = perf_source_stop,
	.close = perf_source_close,
};

/* fake (see pmu.h) */

static int fake_source_open(struct lrx_pmu *g, unsigned e, uint32_t type, uint64_t config,
			    char *why, size_t why_len)
{
	RTE_SET_USED(type);
	RTE_SET_USED(config);
	if (lrx_pmu_fake_refuse & (1u << e)) {
		snprintf(why, why_len, "the fake source refuses this event (test)");
		return -EOPNOTSUPP;
	}
	g->counters[e].fd = -1;
	if (g->n_open == 0)
		g->fake_base_tsc = rte_rdtsc();
	return 0;
}

static void fake_source_read(const struct lrx_pmu *g, uint64_t *values)
{
	uint64_t elapsed = lrx_pmu_fake_use_tsc ? rte_rdtsc() - g->fake_base_tsc : 0;
	for (unsigned i = 0; i < g->n_open; i++) {
		unsigned e = g->open_event[i];
		values[e] = (e + 1) * elapsed + lrx_pmu_fake_added[e];
	}
}

static void fake_source_start(struct lrx_pmu *g)
{
	uint64_t now[LRX_PMU_MAX_EVENTS];
	fake_source_read(g, now);
	for (unsigned i = 0; i < g->n_open; i++)
		g->counters[g->open_event[i]].count = now[g->open_event[i]];
	g->time_enabled_ns = monotonic_ns();
}

static void fake_source_stop(struct lrx_pmu *g)
{
	uint64_t now[LRX_PMU_MAX_EVENTS];
	fake_source_read(g, now);
	for (unsigned i = 0; i < g->n_open; i++) {
		struct lrx_pmu_counter *c = &g->counters[g->open_event[i]];
		c->count = now[g->open_event[i]] - c->count;
	}
	g->time_enabled_ns = monotonic_ns() - g->time_enabled_ns;
	g->time_running_ns = g->time_enabled_ns;
	g->counted = true;
}

static void fake_source_close(struct lrx_pmu *g)
{
	RTE_SET_USED(g);
}

static const struct lrx_pmu_source fake_source = {
	.name = "fake",
	.open = fake_source_open,
	.read = fake_source_read,
	.start = fake_source_start,
	.stop = fake_source_stop,
	.close = fake_source_close,
};

/* ---- the group ----------------------------------------------------------- */

void lrx_pmu_init(struct lrx_pmu *g, const struct lrx_pmu_conf *conf)
{
	memset(g, 0, sizeof(*g));
	g->conf = conf;
	g->source = conf->source == LRX_PMU_SOURCE_FAKE ? &fake_source : &perf_event_source;
	g->leader_fd = -1;
	for (unsigned e = 0; e < LRX_PMU_MAX_EVENTS; e++)
		g->counters[e].fd = -1;
	snprintf(g->why, sizeof(g->why), "not opened (the worker did not start)");
}

static bool page_has_rdpmc(const void *page)
{
	const struct perf_event_mmap_page *pc = page;
	return pc && pc->cap_user_rdpmc;
}

unsigned lrx_pmu_open(struct lrx_pmu *g)
{
	const struct lrx_pmu_conf *conf = g->conf;
	g->why[0] = '\0';
	for (unsigned e = 0; e < conf->n_events; e++) {
		const struct lrx_pmu_event *ev = &conf->events[e];
		struct lrx_pmu_counter *c = &g->counters[e];
		snprintf(c->encoding, sizeof(c->encoding), "%s:0x%" PRIx64,
			 ev->type == PERF_TYPE_HARDWARE   ? "hardware"
			 : ev->type == PERF_TYPE_HW_CACHE ? "hw_cache"
							  : "raw",
			 ev->config);
		int rc = g->source->open(g, e, ev->type, ev->config, c->why, sizeof(c->why));
		if (rc < 0 && ev->has_fallback) {
			char first[LRX_PMU_WHY_LEN];
			snprintf(first, sizeof(first), "%s", c->why);
			rc = g->source->open(g, e, PERF_TYPE_RAW, ev->fallback_raw, c->why,
					     sizeof(c->why));
			if (rc == 0)
				snprintf(c->encoding, sizeof(c->encoding), "raw:0x%" PRIx64 " (%s)",
					 ev->fallback_raw, ev->fallback_name);
			else {
				char second[LRX_PMU_WHY_LEN];
				snprintf(second, sizeof(second), "%s", c->why);
				if (strcmp(first, second) == 0)
					snprintf(c->why, sizeof(c->why),
						 "%.300s (the vendor event %.40s too)", first,
						 ev->fallback_name);
				else
					snprintf(c->why, sizeof(c->why),
						 "%.150s; the vendor event %.40s: %.150s", first,
						 ev->fallback_name, second);
			}
		}
		if (rc == 0) {
			c->why[0] = '\0';
			g->open_event[g->n_open++] = (uint8_t)e;
		}
	}
	if (g->n_open == 0) {
		/* every event has its reason; the group's is the first one */
		snprintf(g->why, sizeof(g->why), "%s",
			 conf->n_events ? g->counters[0].why : "no events");
		snprintf(g->stages_why, sizeof(g->stages_why), "no counter could be opened (see the events)");
		return 0;
	}
	g->rdpmc = g->source == &perf_event_source;
	for (unsigned i = 0; i < g->n_open && g->rdpmc; i++)
		g->rdpmc = page_has_rdpmc(g->counters[g->open_event[i]].page);
#if !defined(__x86_64__) && !defined(__i386__)
	g->rdpmc = false;
#endif
	if (!conf->stages)
		snprintf(g->stages_why, sizeof(g->stages_why),
			 "off ([pmu] stages / --pmu-stages turns it on)");
	else if (!g->rdpmc && g->source == &perf_event_source)
		snprintf(g->stages_why, sizeof(g->stages_why),
			 "the counters cannot be read with rdpmc in user mode (cap_user_rdpmc 0: see /sys/bus/event_source/devices/cpu/rdpmc); the per-worker totals are still counted");
	return g->n_open;
}

bool lrx_pmu_stages_ready(const struct lrx_pmu *g)
{
	return g->conf->stages && g->n_open != 0 &&
	       (g->rdpmc || g->source == &fake_source);
}

void lrx_pmu_start(struct lrx_pmu *g)
{
	if (g->n_open)
		g->source->start(g);
}

void lrx_pmu_stop(struct lrx_pmu *g)
{
	if (g->n_open)
		g->source->stop(g);
}

void lrx_pmu_close(struct lrx_pmu *g)
{
	g->source->close(g);
	g->n_open = 0;
	g->rdpmc = false;
}

void lrx_pmu_read_slow(const struct lrx_pmu *g, uint64_t *values)
{
	g->source->read(g, values);
}

uint64_t lrx_pmu_rdpmc_page(void *page)
{
#if defined(__x86_64__) || defined(__i386__)
	volatile struct perf_event_mmap_page *pc = page;
	uint32_t seq, idx;
	uint64_t count;
	do {
		seq = pc->lock;
		rte_compiler_barrier();
		idx = pc->index;
		count = (uint64_t)pc->offset;
		if (pc->cap_user_rdpmc && idx) {
			uint32_t lo, hi;
			unsigned width = pc->pmc_width;
			__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx - 1));
			int64_t pmc = (int64_t)((uint64_t)hi << 32 | lo);
			/* sign-extend the counter's width */
			pmc = (int64_t)((uint64_t)pmc << (64 - width)) >> (64 - width);
			count += (uint64_t)pmc;
		}
		rte_compiler_barrier();
	} while (pc->lock != seq);
	return count;
#else
	RTE_SET_USED(page);
	return 0;
#endif
}
