/* SPDX-License-Identifier: BSD-3-Clause
 * Config: rte_cfgfile INI + command-line overrides. Every section and key
 * is checked against a table before anything starts; a bad one is reported
 * with file, line, section, key, value and what would be valid.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <rte_cfgfile.h>
#include <rte_memory.h>

#include "capture.h"
#include "config.h"
#include "prefetch.h"
#include "stage_keys.h"
#include "trace.h"
#include "measure.h"
#include "listrx_build.h"

/* ---- error reporting with file and line -------------------------------- */

struct config_ctx {
	struct lrx_config *conf;
	const char *file;         /* shown in messages */
	const char *text;         /* file contents, to find line numbers */
	const struct lrx_override *overrides;
	unsigned n_overrides;
	char *err;
	size_t err_len;
};

/* Line of "key" inside "[section]" of the text, 0 if not found. */
static unsigned config_find_line(const char *text, const char *section,
				 const char *key)
{
	if (!text)
		return 0;
	unsigned line = 1;
	bool in_section = false;
	size_t klen = key ? strlen(key) : 0;
	for (const char *p = text; *p; line++) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *s = p;
		while (s < p + len && (*s == ' ' || *s == '\t'))
			s++;
		if (*s == '[') {
			const char *close = memchr(s, ']', len - (size_t)(s - p));
			in_section = close && (size_t)(close - s - 1) == strlen(section) &&
				     strncmp(s + 1, section, strlen(section)) == 0;
			if (in_section && !key)
				return line;
		} else if (in_section && key && strncmp(s, key, klen) == 0) {
			const char *after = s + klen;
			while (*after == ' ' || *after == '\t')
				after++;
			if (*after == '=')
				return line;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

static const struct lrx_override *config_override_of(const struct config_ctx *c,
						      const char *section,
						      const char *key)
{
	for (unsigned i = c->n_overrides; i-- > 0;)
		if (strcmp(c->overrides[i].section, section) == 0 &&
		    strcmp(c->overrides[i].key, key) == 0)
			return &c->overrides[i];
	return NULL;
}

/* "file:line: [section] key = value: what" or, for a command-line value,
 * "option --burst 0: [pipeline] burst: what". Always returns -EINVAL. */
static int __attribute__((format(printf, 5, 6)))
config_error(struct config_ctx *c, const char *section, const char *key,
	     const char *value, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);

	const struct lrx_override *ov = key ? config_override_of(c, section, key) : NULL;
	/* a section only the command line made is the command line's fault,
	 * not the config file's */
	for (unsigned i = c->n_overrides; !ov && i-- > 0;)
		if (strcmp(c->overrides[i].section, section) == 0 &&
		    !config_find_line(c->text, section, NULL))
			ov = &c->overrides[i];
	if (ov && strcmp(ov->origin, "--set") == 0) {
		snprintf(c->err, c->err_len, "--set %s.%s=%s: [%s]%s%s: %s", ov->section,
			 ov->key, ov->value, section, key ? " " : "", key ? key : "", what);
	} else if (ov) {
		snprintf(c->err, c->err_len, "%s %s: [%s] %s: %s", ov->origin,
			 ov->value, section, key ? key : ov->key, what);
	} else {
		unsigned line = config_find_line(c->text, section, key);
		char where[PATH_MAX + 32];
		if (line)
			snprintf(where, sizeof(where), "%s:%u", c->file, line);
		else
			snprintf(where, sizeof(where), "%s", c->file);
		if (key)
			snprintf(c->err, c->err_len, "%s: [%s] %s = %s: %s",
				 where, section, key, value ? value : "", what);
		else
			snprintf(c->err, c->err_len, "%s: [%s]: %s", where,
				 section, what);
	}
	return -EINVAL;
}

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
static const struct lrx_value_key eal_keys[] = {
	CK(STRING, eal_args, "args", "--no-huge --no-pci --no-shconf -m 1024",
	   "EAL arguments used when the command line gives none"),
	{.name = NULL},
};
static const struct lrx_value_key run_keys[] = {
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
static const struct lrx_value_key pipeline_keys[] = {
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
static const struct lrx_value_key mempool_keys[] = {
	CK(UINT, mbufs, "mbufs", "0", 0, 1u << 24, "mbufs per pool; 0 = computed"),
	CK(UINT, mempool_cache, "cache", "256", 0, 512, "per-lcore cache of the pool"),
	CK(UINT, data_room, "data_room", "2176", 256, 65535, "bytes of data per mbuf"),
	CK(CUSTOM, priv_size, "priv_size", "auto", parse_priv_size,
	   "auto, or bytes in 0..4096, a multiple of 8",
	   "mbuf private area; auto = what the stages' metadata wants"),
	{.name = NULL},
};
static const struct lrx_value_key telemetry_keys[] = {
	CK(BOOL, telemetry, "enabled", "yes", "register the /listrx/ telemetry commands"),
	{.name = NULL},
};
/* events is read by load_pmu */
static const struct lrx_value_key pmu_keys[] = {
	CK(BOOL, pmu.stages, "stages", "no", "per stage too, rdpmc around each stage call"),
	CK(BOOL, pmu.kernel, "kernel", "no", "count kernel mode too"),
	CK(CHOICE, pmu.source, "source", "perf_event", pmu_sources,
	   "perf_event (the kernel's counters) or fake (a software source for tests)"),
	{.name = NULL},
};
#undef CK
#define PK(kind, field, ...) LRX_KEY_##kind(struct lrx_port_conf, field, __VA_ARGS__)
static const struct lrx_value_key port_keys[] = {
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
		{"eal", eal_keys}, {"run", run_keys}, {"pipeline", pipeline_keys},
		{"mempool", mempool_keys}, {"telemetry", telemetry_keys}, {"pmu", pmu_keys},
	};
	for (unsigned i = 0; i < RTE_DIM(sections); i++)
		if (strcmp(sections[i].name, section) == 0)
			return lrx_value_key_find(sections[i].keys, key);
	const struct lrx_stage *stage =
		strncmp(section, "stage.", 6) == 0 ? lrx_stage_find(section + 6) : NULL;
	return stage ? lrx_value_key_find(stage->keys, key) : NULL;
}

/* The keys of a section: a table, a second one, and names read by code. */
struct section_keys {
	const struct lrx_value_key *keys, *more;
	const char *const *by_code;
};

static bool section_has_key(const struct section_keys *sk, const char *key)
{
	if (lrx_value_key_find(sk->keys, key) || lrx_value_key_find(sk->more, key))
		return true;
	for (unsigned i = 0; sk->by_code && sk->by_code[i]; i++)
		if (strcmp(sk->by_code[i], key) == 0)
			return true;
	return false;
}

static void section_key_names(const struct section_keys *sk, char *buf, size_t len)
{
	char more[512];
	lrx_value_key_names(sk->keys, buf, len);
	lrx_value_key_names(sk->more, more, sizeof(more));
	size_t used = strlen(buf);
	if (more[0] && used < len)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", more);
	for (unsigned i = 0; sk->by_code && sk->by_code[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "",
					 sk->by_code[i]);
}

/* Every key of section into base (the keys table) or more_base (the more
 * table); keys by code are left to the caller. Unknown keys and bad values
 * are reported with file and line. */
static int load_section(struct config_ctx *c, struct rte_cfgfile *cfg, const char *section,
			const struct section_keys *sk, void *base, void *more_base)
{
	int n = rte_cfgfile_section_num_entries(cfg, section);
	if (n <= 0)
		return 0;
	struct rte_cfgfile_entry *entries = calloc((size_t)n, sizeof(*entries));
	if (!entries)
		return -ENOMEM;
	rte_cfgfile_section_entries(cfg, section, entries, n);
	int rc = 0;
	for (int i = 0; i < n && rc == 0; i++) {
		const char *key = entries[i].name, *value = entries[i].value;
		const struct lrx_value_key *k = lrx_value_key_find(sk->keys, key);
		const struct lrx_value_key *m = k ? NULL : lrx_value_key_find(sk->more, key);
		char valid[1024];
		if (!section_has_key(sk, key)) {
			section_key_names(sk, valid, sizeof(valid));
			rc = config_error(c, section, key, value, "unknown key; valid keys in [%s]: %s",
					  section, valid[0] ? valid : "none");
		} else if ((k || m) &&
			   lrx_value_key_set(k ? k : m, k ? base : more_base, value, valid,
					     sizeof(valid)) < 0) {
			rc = config_error(c, section, key, value, "must be %s", valid);
		}
	}
	free(entries);
	return rc;
}

static const char *get(struct rte_cfgfile *cfg, const char *section, const char *key)
{
	return rte_cfgfile_get_entry(cfg, section, key);
}

static int load_run(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	struct lrx_config *conf = c->conf;
	int rc = load_section(c, cfg, "run", &(struct section_keys){.keys = run_keys}, conf, NULL);
	if (!rc && conf->measure_from && !lrx_measure_available())
		rc = config_error(c, "run", "measure_from", get(cfg, "run", "measure_from"),
				  "needs valgrind/callgrind.h at build time (Debian: valgrind)");
	if (!rc && conf->measure_from && conf->packets <= conf->measure_from)
		rc = config_error(c, "run", "measure_from", get(cfg, "run", "measure_from"),
				  "must be below [run] packets (--packets), the end of the window");
	return rc;
}

/* A stage instance's config: its defaults, then its [stage.NAME] keys
 * (the stage's table, and the engine's footprint_kb) parsed into it. */
static int load_stage_section(struct config_ctx *c, struct rte_cfgfile *cfg,
			      const char *section, struct lrx_stage_conf *sc)
{
	if (!sc->conf && !(sc->conf = lrx_stage_conf_new(sc->stage)))
		return -ENOMEM;
	struct section_keys sk = {sc->stage->keys, lrx_stage_conf_keys, NULL};
	return load_section(c, cfg, section, &sk, sc->conf, sc);
}

static void stage_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
				 lrx_stage_at(i)->name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

/* The first registered stage that provides `bits` (for messages). */
static const char *provider_name(unsigned bits)
{
	for (unsigned i = 0; lrx_stage_at(i); i++)
		if ((lrx_stage_at(i)->provides & bits) == bits)
			return lrx_stage_at(i)->name;
	return "(none built)";
}

/* The shortcut's place key (mode = native|generic): *place, the first
 * place when it is not set. */
static int shortcut_place(struct config_ctx *c, const struct lrx_stage_shortcut *sh,
			  const char *mode, const struct lrx_stage_place **place)
{
	char valid[256];
	size_t used = 0;
	valid[0] = '\0';
	for (*place = sh->places; mode && (*place)->value; (*place)++) {
		if (strcmp((*place)->value, mode) == 0)
			return 0;
		used += (size_t)snprintf(valid + used, used < sizeof(valid) ? sizeof(valid) - used : 0,
					 "%s%s", used ? ", " : "", (*place)->value);
	}
	*place = &sh->places[0];
	return mode ? config_error(c, sh->section, sh->place_key, mode, "must be one of %s", valid)
		    : 0;
}

/* Where the stage is in the pipeline (*at, -1: not in it), checked
 * against where its place wants it: first, or after the last stage that
 * works on the skb; with add, put there when it is not in the pipeline. */
static int shortcut_position(struct config_ctx *c, struct rte_cfgfile *cfg,
			     const struct lrx_stage *stage, const struct lrx_stage_place *place,
			     const char *mode, const char *add, int *at)
{
	const struct lrx_stage_shortcut *sh = stage->shortcut;
	struct lrx_pipeline_conf *pc = &c->conf->pipeline;
	const bool after_skb = place->position == LRX_POSITION_AFTER_SKB;
	const bool first = place->position == LRX_POSITION_FIRST;
	int after_meta = -1;
	bool has_meta = false;
	*at = -1;
	for (unsigned i = 0; i < pc->n_stages; i++) {
		const struct lrx_stage *s = pc->stages[i].stage;
		if (s == stage && *at < 0)
			*at = (int)i;
		if (s->provides & (LRX_PROVIDES_META | LRX_PROVIDES_SKB)) {
			has_meta |= (s->provides & LRX_PROVIDES_META) != 0;
			if (*at < 0)
				after_meta = (int)i;
		}
	}
	const char *meta = provider_name(LRX_PROVIDES_META);
	const char *stages = get(cfg, "pipeline", "stages");
	if (after_skb && !has_meta)
		return config_error(c, sh->section, sh->place_key, mode,
				    "%s, and the pipeline (%s) has no %s; add it, or use %s %s",
				    place->why, stages && *stages ? stages : "none", meta,
				    sh->place_key, sh->places[0].value);
	if (*at >= 0 && ((first && *at != 0) || (after_skb && after_meta < 0)))
		return config_error(c, sh->section, sh->place_key, mode ? mode : place->value,
				    "the pipeline (%s) has %s at position %d: %s %s needs it %s%s",
				    stages, stage->name, *at + 1, sh->place_key, place->value,
				    first ? "first" : "after ", first ? "" : meta);
	if (*at >= 0 || !add)
		return 0;
	if (pc->n_stages == LRX_PIPELINE_MAX_STAGES)
		return config_error(c, sh->section, sh->add_key, add,
				    "no room for the %s stage: at most %u stages", stage->name,
				    LRX_PIPELINE_MAX_STAGES);
	*at = after_skb ? after_meta + 1 : 0;
	memmove(&pc->stages[*at + 1], &pc->stages[*at],
		(pc->n_stages - (unsigned)*at) * sizeof(pc->stages[0]));
	memset(&pc->stages[*at], 0, sizeof(pc->stages[0]));
	pc->stages[*at].stage = stage;
	pc->n_stages++;
	char section[LRX_NAME_LEN + 8];
	snprintf(section, sizeof(section), "stage.%s", stage->name);
	return load_stage_section(c, cfg, section, &pc->stages[*at]);
}

/* A stage's shortcut section (stage.h: struct lrx_stage_shortcut, e.g.
 * [xdp] with --xdp-prog/--xdp-mode/...): with a value for add_key it also
 * places the stage where the place_key's value says (position FIRST or
 * AFTER_SKB). A pipeline that names the stage already must have it there.
 * Its keys come after [stage.NAME]'s, so they win. */
static int load_shortcut(struct config_ctx *c, struct rte_cfgfile *cfg,
			 const struct lrx_stage *stage)
{
	const struct lrx_stage_shortcut *sh = stage->shortcut;
	const char *sec = sh->section;
	const char *names[16];
	unsigned n_keys = 0;
	for (; sh->keys[n_keys].key && n_keys < RTE_DIM(names) - 1; n_keys++)
		names[n_keys] = sh->keys[n_keys].key;
	names[n_keys] = NULL;
	int rc = load_section(c, cfg, sec, &(struct section_keys){.by_code = names}, NULL, NULL);
	if (rc || !rte_cfgfile_has_section(cfg, sec))
		return rc;
	/* yes/no keys first: their errors come before the placement's */
	bool yes[16] = {false};
	for (unsigned k = 0; k < n_keys; k++) {
		const char *v = sh->keys[k].if_yes ? get(cfg, sec, sh->keys[k].key) : NULL;
		if (v && lrx_value_bool(v, &yes[k]) < 0)
			return config_error(c, sec, sh->keys[k].key, v, "must be %s",
					    LRX_VALUE_BOOL_VALID);
	}
	const char *add = get(cfg, sec, sh->add_key);
	const char *mode = get(cfg, sec, sh->place_key);
	const struct lrx_stage_place *place;
	int at;
	if ((rc = shortcut_place(c, sh, mode, &place)))
		return rc;
	if (add && !*add)
		return config_error(c, sec, sh->add_key, add, "%s", sh->add_empty);
	if ((rc = shortcut_position(c, cfg, stage, place, mode, add, &at)) || at < 0)
		return rc; /* at < 0: settings kept for a stage switched off */
	for (unsigned k = 0; k < n_keys; k++) {
		const struct lrx_stage_alias *a = &sh->keys[k];
		const char *value = get(cfg, sec, a->key);
		char valid[512];
		if (value && lrx_stage_conf_set(stage, c->conf->pipeline.stages[at].conf,
						a->stage_key,
						a->if_yes ? (yes[k] ? a->if_yes : a->if_no) : value,
						valid, sizeof(valid)) < 0)
			return config_error(c, sec, a->key, value, "must be %s", valid);
	}
	return 0;
}

static int load_shortcuts(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	int rc = 0;
	for (unsigned i = 0; rc == 0 && lrx_stage_at(i); i++)
		if (lrx_stage_at(i)->shortcut)
			rc = load_shortcut(c, cfg, lrx_stage_at(i));
	return rc;
}

/* A shortcut section of some stage ([xdp]). */
static bool is_shortcut_section(const char *section)
{
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		const struct lrx_stage_shortcut *sh = lrx_stage_at(i)->shortcut;
		if (sh && strcmp(sh->section, section) == 0)
			return true;
	}
	return false;
}

/* Each stage's `needs` bits must be provided by a stage before it. */
static int check_needs(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	const struct lrx_pipeline_conf *pc = &c->conf->pipeline;
	unsigned provided = 0;
	for (unsigned i = 0; i < pc->n_stages; i++) {
		const struct lrx_stage *s = pc->stages[i].stage;
		unsigned missing = s->needs & ~provided;
		if (missing)
			return config_error(c, "pipeline", "stages", get(cfg, "pipeline", "stages"),
					    "%s (position %u) reads what %s provides: put %s before it",
					    s->name, i + 1, provider_name(missing),
					    provider_name(missing));
		provided |= s->provides;
	}
	return 0;
}

/* [pmu]: hardware counters per worker (pmu.h). events switches counting
 * on; stages = on without events counts the default events. */
static int load_pmu(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	struct lrx_pmu_conf *pmu = &c->conf->pmu;
	static const char *const by_code[] = {"events", NULL};
	int rc = load_section(c, cfg, "pmu", &(struct section_keys){.keys = pmu_keys, .by_code = by_code},
			      c->conf, NULL);
	if (rc)
		return rc;
	const char *events = get(cfg, "pmu", "events");
	const char *stages = get(cfg, "pmu", "stages");
	if (!events && pmu->stages)
		events = "default";
	if (!events)
		return 0;
	if (strcmp(events, "off") == 0 || strcmp(events, "0") == 0 || strcmp(events, "none") == 0) {
		if (pmu->stages)
			return config_error(c, "pmu", "stages", stages,
					    "needs counters: [pmu] events is off");
		return 0;
	}
	char why[512];
	if (lrx_pmu_parse_events(events, pmu, why, sizeof(why)) < 0)
		return config_error(c, "pmu", "events", events, "%s", why);
	pmu->enabled = true;
	if (pmu->stages && c->conf->pipeline.stats_level == LRX_STATS_OFF)
		return config_error(c, "pmu", "stages", stages,
				    "needs [pipeline] stats_level counters or cycles (stage calls are not measured at off)");
	if (pmu->stages && !lrx_engine_calls_vectors(c->conf->pipeline.engine))
		return config_error(c, "pmu", "stages", stages,
				    "per-stage attribution is read around each stage call of the vector engines: use engine burst, hybrid:K or graph (engine %s calls stages per packet)",
				    lrx_engine_name(c->conf->pipeline.engine));
	return 0;
}

/* [run] interleave: each engine's K fits the pipeline; what counts the
 * whole thread (the PMU group, callgrind's window) cannot tell the
 * engines' windows apart. */
static int check_interleave(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	const struct lrx_config *conf = c->conf;
	const struct lrx_engine_list *l = &conf->interleave;
	const char *v = get(cfg, "run", "interleave");
	for (unsigned i = 0; i < l->n; i++)
		if (l->kind[i] == LRX_ENGINE_HYBRID && l->hybrid_k[i] > conf->pipeline.n_stages)
			return config_error(c, "run", "interleave", v,
					    "hybrid:%u needs at least %u stages; the pipeline has %u",
					    l->hybrid_k[i], l->hybrid_k[i], conf->pipeline.n_stages);
	if (l->n && conf->pmu.enabled)
		return config_error(c, "run", "interleave", v,
				    "[pmu] counts the polling thread, not an engine's windows: not with an interleaved run");
	if (l->n && conf->measure_from)
		return config_error(c, "run", "interleave", v,
				    "[run] measure_from (callgrind's window) counts every engine's packets: not with an interleaved run");
	return 0;
}

/* [pipeline] stages: names separated by single commas, or none. */
static int load_stage_list(struct config_ctx *c, const char *stages)
{
	struct lrx_pipeline_conf *pc = &c->conf->pipeline;
	pc->n_stages = 0;
	if (!stages)
		return 0;
	char item[LRX_NAME_LEN];
	const char *t = stages + strspn(stages, " ");
	int rc;
	if (*t == '\0' || strcmp(t, "none") == 0)
		return 0;
	for (const char *p = stages; (rc = lrx_value_list_next(&p, item, sizeof(item))) > 0;) {
		const struct lrx_stage *stage = lrx_stage_find(item);
		if (strcmp(item, "none") == 0)
			return config_error(c, "pipeline", "stages", stages,
					    "'none' means an empty pipeline and cannot be combined with stages");
		if (!stage) {
			char valid[512];
			stage_names(valid, sizeof(valid));
			return config_error(c, "pipeline", "stages", stages,
					    "unknown stage '%s'; valid stages: %s", item,
					    valid[0] ? valid : "(none built)");
		}
		if (pc->n_stages == LRX_PIPELINE_MAX_STAGES)
			return config_error(c, "pipeline", "stages", stages, "at most %u stages",
					    LRX_PIPELINE_MAX_STAGES);
		pc->stages[pc->n_stages++] = (struct lrx_stage_conf){.stage = stage};
	}
	return rc == 0 ? 0
		       : config_error(c, "pipeline", "stages", stages,
				      "empty entry in the stage list: name stages separated by single commas, or 'none' alone");
}

static int load_pipeline(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	struct lrx_pipeline_conf *pc = &c->conf->pipeline;
	static const char *const by_code[] = {"engine", "stages", NULL};
	int rc = load_section(c, cfg, "pipeline",
			      &(struct section_keys){.keys = pipeline_keys, .by_code = by_code}, c->conf, NULL);
	if (rc)
		return rc;
	const char *engine = get(cfg, "pipeline", "engine");
	if (engine && lrx_engine_parse(engine, &pc->engine, &pc->hybrid_k) < 0)
		return config_error(c, "pipeline", "engine", engine,
				    "must be one of packet, burst, hybrid:K (K = stages run as bursts, 1..%u), static, graph",
				    LRX_PIPELINE_MAX_STAGES);

	rc = load_stage_list(c, get(cfg, "pipeline", "stages"));
	if (rc)
		return rc;
	/* [stage.NAME] sections apply to every instance of NAME */
	for (unsigned i = 0; i < pc->n_stages; i++) {
		char section[LRX_NAME_LEN + 8];
		snprintf(section, sizeof(section), "stage.%s", pc->stages[i].stage->name);
		rc = load_stage_section(c, cfg, section, &pc->stages[i]);
		if (rc)
			return rc;
	}
	rc = load_shortcuts(c, cfg); /* may add a stage ([xdp]) */
	rc = rc ?: check_needs(c, cfg);
	if (rc)
		return rc;
	if (pc->engine == LRX_ENGINE_HYBRID && pc->hybrid_k > pc->n_stages)
		return config_error(c, "pipeline", "engine", engine,
				    "hybrid:%u needs at least %u stages; the pipeline has %u",
				    pc->hybrid_k, pc->hybrid_k, pc->n_stages);
	if (c->conf->footprint_total_kb && pc->n_stages) {
		unsigned per = c->conf->footprint_total_kb / pc->n_stages;
		unsigned rest = c->conf->footprint_total_kb % pc->n_stages;
		for (unsigned i = 0; i < pc->n_stages; i++)
			pc->stages[i].footprint_kb = per + (i < rest ? 1 : 0);
	}
	for (unsigned i = 0; i < pc->n_stages; i++) {
		char why[256], section[LRX_NAME_LEN + 8];
		snprintf(section, sizeof(section), "stage.%s", pc->stages[i].stage->name);
		const bool total = c->conf->footprint_total_kb != 0;
		rc = lrx_footprint_check(i, pc->stages[i].footprint_kb, why, sizeof(why));
		if (rc < 0)
			return config_error(c, total ? "pipeline" : section, "footprint_kb",
					    get(cfg, total ? "pipeline" : section, "footprint_kb"),
					    "%u KB for %s (position %u): %s",
					    pc->stages[i].footprint_kb, pc->stages[i].stage->name, i + 1,
					    why);
	}
	return 0;
}

static int load_port(struct config_ctx *c, struct rte_cfgfile *cfg,
		     const char *section, unsigned index)
{
	struct lrx_config *conf = c->conf;
	if (conf->n_ports == LRX_MAX_PORTS)
		return config_error(c, section, NULL, NULL, "at most %u ports", LRX_MAX_PORTS);
	for (unsigned i = 0; i < conf->n_ports; i++)
		if (conf->ports[i].index == index)
			return config_error(c, section, NULL, NULL, "port %u defined twice", index);
	struct lrx_port_conf *pc = &conf->ports[conf->n_ports];
	const char *bad = NULL;
	memset(pc, 0, sizeof(*pc));
	pc->index = index;
	RTE_VERIFY(lrx_value_keys_default(port_keys, pc, &bad) == 0);
	int rc = load_section(c, cfg, section, &(struct section_keys){.keys = port_keys}, pc, NULL);
	if (rc)
		return rc;
	if (!pc->device[0])
		return config_error(c, section, get(cfg, section, "device") ? "device" : NULL,
				    get(cfg, section, "device"),
				    "key 'device' missing or empty: name the ethdev (e.g. net_synth0, net_null0) or a PCI address (0000:3b:00.0)");
	pc->offloads |= pc->offloads_required;
	conf->n_ports++;
	return 0;
}

static int load_lcore(struct config_ctx *c, struct rte_cfgfile *cfg,
		      const char *section, unsigned lcore_id)
{
	struct lrx_config *conf = c->conf;
	if (conf->n_lcores == LRX_MAX_LCORE_CONFS)
		return config_error(c, section, NULL, NULL, "at most %u lcore sections",
				    LRX_MAX_LCORE_CONFS);
	struct lrx_lcore_conf *lc = &conf->lcores[conf->n_lcores];
	memset(lc, 0, sizeof(*lc));
	lc->lcore_id = lcore_id;
	static const char *const by_code[] = {"poll", NULL};
	int rc = load_section(c, cfg, section, &(struct section_keys){.by_code = by_code}, NULL,
			      NULL);
	if (rc)
		return rc;
	const char *poll = get(cfg, section, "poll");
	if (!poll || !*poll)
		return config_error(c, section, poll ? "poll" : NULL, poll,
				    "key 'poll' missing or empty: list PORT:QUEUE pairs, e.g. poll = 0:0,1:0");
	char item[32];
	for (const char *p = poll; (rc = lrx_value_list_next(&p, item, sizeof(item))) != 0;) {
		char *colon = rc > 0 ? strchr(item, ':') : NULL;
		uint64_t port, queue;
		if (colon)
			*colon = '\0';
		if (!colon || lrx_value_uint(item, 0, LRX_MAX_PORTS - 1, &port) < 0 ||
		    lrx_value_uint(colon + 1, 0, LRX_MAX_QUEUES - 1, &queue) < 0)
			return config_error(c, section, "poll", poll,
					    "must be a list of PORT:QUEUE with PORT < %u, QUEUE < %u (0:0,1:0)",
					    LRX_MAX_PORTS, LRX_MAX_QUEUES);
		if (lc->n_polls == LRX_MAX_LCORE_POLLS)
			return config_error(c, section, "poll", poll, "at most %u entries",
					    LRX_MAX_LCORE_POLLS);
		lc->polls[lc->n_polls++] = (struct lrx_poll_conf){(uint16_t)port, (uint16_t)queue};
	}
	conf->n_lcores++;
	return 0;
}

/* Cross-section checks: lcore polls name configured ports and queues, each
 * queue polled once, forward targets exist. */
static int check_topology(struct config_ctx *c)
{
	struct lrx_config *conf = c->conf;
	for (unsigned i = 0; i < conf->n_ports; i++) {
		int to = conf->ports[i].forward_to;
		bool found = to < 0;
		for (unsigned j = 0; j < conf->n_ports && !found; j++)
			found = (int)conf->ports[j].index == to;
		if (!found) {
			char section[32];
			snprintf(section, sizeof(section), "port.%u", conf->ports[i].index);
			return config_error(c, section, "forward", get(conf->cfg, section, "forward"),
					    "no [port.%d] section", to);
		}
	}
	if (conf->n_lcores && !conf->n_ports) {
		char section[32];
		snprintf(section, sizeof(section), "lcore.%u", conf->lcores[0].lcore_id);
		return config_error(c, section, NULL, NULL,
				    "[lcore.N] sections need [port.N] sections naming the ports they poll");
	}
	for (unsigned l = 0; l < conf->n_lcores; l++) {
		const struct lrx_lcore_conf *lc = &conf->lcores[l];
		char section[32];
		snprintf(section, sizeof(section), "lcore.%u", lc->lcore_id);
		for (unsigned p = 0; p < lc->n_polls; p++) {
			const struct lrx_poll_conf *poll = &lc->polls[p];
			const struct lrx_port_conf *port = NULL;
			for (unsigned i = 0; i < conf->n_ports; i++)
				if (conf->ports[i].index == poll->port_index)
					port = &conf->ports[i];
			if (!port)
				return config_error(c, section, "poll", get(conf->cfg, section, "poll"),
						    "port %u has no [port.%u] section",
						    poll->port_index, poll->port_index);
			if (poll->queue >= port->rx_queues)
				return config_error(c, section, "poll", get(conf->cfg, section, "poll"),
						    "port %u has %u RX queues (0..%u)", port->index,
						    port->rx_queues, port->rx_queues - 1);
			for (unsigned l2 = 0; l2 <= l; l2++)
				for (unsigned p2 = 0; p2 < (l2 == l ? p : conf->lcores[l2].n_polls); p2++)
					if (conf->lcores[l2].polls[p2].port_index == poll->port_index &&
					    conf->lcores[l2].polls[p2].queue == poll->queue)
						return config_error(c, section, "poll",
								    get(conf->cfg, section, "poll"),
								    "queue %u:%u is already polled by lcore %u",
								    poll->port_index, poll->queue,
								    conf->lcores[l2].lcore_id);
		}
	}
	return 0;
}

/* An explicit [mempool] mbufs must work before anything starts:
 * rte_mempool_create refuses a cache above n / 1.5
 * (CACHE_FLUSHTHRESH_MULTIPLIER), and a pool smaller than one burst per
 * RX queue leaves the polls empty forever (rx_nombuf only). */
static int check_mempool(struct config_ctx *c)
{
	const struct lrx_config *conf = c->conf;
	if (!conf->mbufs)
		return 0; /* computed from ports, queues and lcores */
	const char *mbufs = get(conf->cfg, "mempool", "mbufs");
	unsigned cache_min = (conf->mempool_cache * 3 + 1) / 2;
	if (conf->mbufs < cache_min)
		return config_error(c, "mempool", "mbufs", mbufs,
				    "a pool with a per-lcore cache of %u needs at least %u mbufs (1.5 x cache): raise mbufs to %u or more, or lower [mempool] cache to %u or less",
				    conf->mempool_cache, cache_min, cache_min, conf->mbufs * 2 / 3);
	unsigned queues = 0;
	for (unsigned i = 0; i < conf->n_ports; i++)
		queues += conf->ports[i].rx_queues;
	queues = queues ? queues : 1; /* the auto port set: one queue per ethdev */
	unsigned need = queues * conf->pipeline.burst;
	if (conf->mbufs < need)
		return config_error(c, "mempool", "mbufs", mbufs,
				    "the pool cannot fill one burst per RX queue (%u queue(s) x burst %u = %u mbufs): raise mbufs to %u or more, or lower [pipeline] burst",
				    queues, conf->pipeline.burst, need, need);
	return 0;
}

static void config_defaults(struct lrx_config *conf)
{
	static const struct lrx_value_key *const tables[] = {
		eal_keys, run_keys, pipeline_keys, mempool_keys, telemetry_keys, pmu_keys,
	};
	const char *bad = NULL;
	memset(conf, 0, sizeof(*conf));
	conf->pipeline.engine = LRX_ENGINE_BURST;
	for (unsigned i = 0; i < RTE_DIM(tables); i++)
		RTE_VERIFY(lrx_value_keys_default(tables[i], conf, &bad) == 0);
}

/* The command line's overrides into the INI tables. */
static int config_apply_overrides(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	for (unsigned i = 0; i < c->n_overrides; i++) {
		const struct lrx_override *o = &c->overrides[i];
		if (!rte_cfgfile_has_section(cfg, o->section) &&
		    rte_cfgfile_add_section(cfg, o->section) < 0)
			return -ENOMEM;
		int rc = rte_cfgfile_has_entry(cfg, o->section, o->key)
				 ? rte_cfgfile_set_entry(cfg, o->section, o->key, o->value)
				 : rte_cfgfile_add_entry(cfg, o->section, o->key, o->value);
		if (rc < 0) {
			snprintf(c->err, c->err_len, "%s %s: value too long (at most %d characters)",
				 o->origin, o->value, CFG_VALUE_LEN - 1);
			return -EINVAL;
		}
	}
	return 0;
}

/* The pipeline's stages as --pipeline takes them ("none": empty). */
static const char *pipeline_text(const struct lrx_pipeline_conf *pc, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned i = 0; i < pc->n_stages && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
					 pc->stages[i].stage->name);
	if (!pc->n_stages)
		snprintf(buf, len, "none");
	return buf;
}

/* [stage.NAME] of a stage that is not in the pipeline. In a config file:
 * kept (configs keep settings for stages switched off; the app warns),
 * but the stage must exist, and its values are read all the same
 * (lrx_config_check_absent_stages). From --set: refused, the key would do
 * nothing. */
static int load_absent_stage(struct config_ctx *c, struct rte_cfgfile *cfg, const char *s)
{
	struct lrx_config *conf = c->conf;
	const struct lrx_stage *stage = lrx_stage_find(s + 6);
	if (!stage) {
		char valid[512];
		stage_names(valid, sizeof(valid));
		return config_error(c, s, NULL, NULL, "no stage named '%s'; valid stages: %s", s + 6,
				    valid);
	}
	for (unsigned k = 0; k < conf->pipeline.n_stages; k++)
		if (conf->pipeline.stages[k].stage == stage)
			return 0; /* read by load_pipeline */
	for (unsigned o = 0; o < c->n_overrides; o++)
		if (strcmp(c->overrides[o].section, s) == 0) {
			char stages[512];
			return config_error(c, s, c->overrides[o].key, c->overrides[o].value,
					    "%s is not in the pipeline (%s), so the key would do nothing: add %s to the pipeline (--pipeline) or leave the key out",
					    stage->name,
					    pipeline_text(&conf->pipeline, stages, sizeof(stages)),
					    stage->name);
		}
	if (conf->n_absent == RTE_DIM(conf->absent))
		return 0;
	struct lrx_stage_conf *sc = &conf->absent[conf->n_absent];
	*sc = (struct lrx_stage_conf){.stage = stage};
	int rc = load_stage_section(c, cfg, s, sc);
	snprintf(conf->absent_where[conf->n_absent], sizeof(conf->absent_where[0]), "%s:%u",
		 c->file, config_find_line(c->text, s, NULL));
	conf->n_absent++;
	return rc;
}

void lrx_config_warn_absent_stages(const struct lrx_config *conf, FILE *out)
{
	char stages[512];
	for (unsigned i = 0; i < conf->n_absent; i++)
		fprintf(out, "listrx: warning: %s: [stage.%s]: %s is not in the pipeline (%s): its keys are checked, not used\n",
			conf->absent_where[i], conf->absent[i].stage->name,
			conf->absent[i].stage->name,
			pipeline_text(&conf->pipeline, stages, sizeof(stages)));
}

/* A section besides the fixed ones: [port.N], [lcore.N], [stage.NAME]. */
static int load_numbered_section(struct config_ctx *c, struct rte_cfgfile *cfg, const char *s)
{
	uint64_t index;
	if (strncmp(s, "port.", 5) == 0)
		return lrx_value_uint(s + 5, 0, LRX_MAX_PORTS - 1, &index) == 0
			       ? load_port(c, cfg, s, (unsigned)index)
			       : config_error(c, s, NULL, NULL,
					      "the port index must be an integer in 0..%u",
					      LRX_MAX_PORTS - 1);
	if (strncmp(s, "lcore.", 6) == 0)
		return lrx_value_uint(s + 6, 0, RTE_MAX_LCORE - 1, &index) == 0
			       ? load_lcore(c, cfg, s, (unsigned)index)
			       : config_error(c, s, NULL, NULL,
					      "the lcore id must be an integer in 0..%u",
					      RTE_MAX_LCORE - 1);
	if (strncmp(s, "stage.", 6) == 0)
		return load_absent_stage(c, cfg, s);
	char shortcuts[256] = "";
	for (unsigned k = 0; lrx_stage_at(k); k++)
		if (lrx_stage_at(k)->shortcut)
			snprintf(shortcuts + strlen(shortcuts), sizeof(shortcuts) - strlen(shortcuts),
				 "[%s], ", lrx_stage_at(k)->shortcut->section);
	return config_error(c, s, NULL, NULL,
			    "unknown section; valid sections: [eal], [run], [pipeline], [mempool], [telemetry], [pmu], %s[port.N], [lcore.N], [stage.NAME]",
			    shortcuts);
}

static int config_apply(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	struct lrx_config *conf = c->conf;
	int rc = config_apply_overrides(c, cfg);
	if (rc)
		return rc;
	conf->cfg = cfg;

	int n = rte_cfgfile_num_sections(cfg, "", 0);
	char (*names)[CFG_NAME_LEN] = calloc((size_t)(n > 0 ? n : 1), CFG_NAME_LEN);
	if (!names)
		return -ENOMEM;
	char *ptrs[256];
	if (n > 256)
		n = 256;
	for (int i = 0; i < n; i++)
		ptrs[i] = names[i];
	rte_cfgfile_sections(cfg, ptrs, n);

	rc = load_section(c, cfg, "eal", &(struct section_keys){.keys = eal_keys}, conf, NULL);
	rc = rc ?: load_run(c, cfg);
	rc = rc ?: load_section(c, cfg, "mempool", &(struct section_keys){.keys = mempool_keys}, conf,
				NULL);
	rc = rc ?: load_pipeline(c, cfg);
	rc = rc ?: load_pmu(c, cfg);
	rc = rc ?: check_interleave(c, cfg);
	rc = rc ?: load_section(c, cfg, "telemetry", &(struct section_keys){.keys = telemetry_keys}, conf,
				NULL);
	for (int i = 0; i < n && rc == 0; i++) {
		const char *s = names[i];
		if (strcmp(s, "eal") != 0 && strcmp(s, "run") != 0 && strcmp(s, "pipeline") != 0 &&
		    strcmp(s, "mempool") != 0 && strcmp(s, "telemetry") != 0 &&
		    strcmp(s, "pmu") != 0 && !is_shortcut_section(s))
			rc = load_numbered_section(c, cfg, s);
	}
	free(names);
	return rc ?: check_topology(c) ?: check_mempool(c);
}

static int config_load_common(struct lrx_config *conf, struct rte_cfgfile *cfg,
			      const char *file, const char *text,
			      const struct lrx_override *overrides, unsigned n_overrides,
			      char *err, size_t err_len)
{
	struct config_ctx c = {.conf = conf, .file = file, .text = text,
			       .overrides = overrides, .n_overrides = n_overrides,
			       .err = err, .err_len = err_len};
	int rc = config_apply(&c, cfg);
	if (rc < 0 && rc != -EINVAL)
		snprintf(err, err_len, "%s: %s", file, strerror(-rc));
	return rc;
}

/* A config is at most this big: a larger one is a mistake (/dev/zero,
 * a log), not a configuration. */
#define CONFIG_MAX_BYTES (1u << 20)

/* Reads a config file into *out (NUL-terminated). Only a regular file:
 * opened with O_NONBLOCK so that a FIFO cannot block the open (signals
 * keep working), then checked with fstat, as a directory reads as empty
 * and a device never ends. Returns 0 or -errno with a message in err. */
static int read_text(const char *path, const char *name, char **out, char *err,
		     size_t err_len)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, err_len, "%s: cannot read config file: %s", name, strerror(e));
		return -e;
	}
	struct stat st;
	const char *why = NULL;
	if (fstat(fd, &st) < 0)
		why = strerror(errno);
	else if (S_ISDIR(st.st_mode))
		why = "is a directory";
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file (a FIFO, socket or device cannot be a config)";
	else if (st.st_size > (off_t)CONFIG_MAX_BYTES)
		why = "larger than 1 MiB";
	char *buf = why ? NULL : malloc(CONFIG_MAX_BYTES + 2);
	if (!why && !buf)
		why = strerror(ENOMEM);
	size_t len = 0;
	while (!why) {
		ssize_t n = read(fd, buf + len, CONFIG_MAX_BYTES + 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			why = strerror(errno);
		else if (n == 0)
			break;
		else if ((len += (size_t)n) > CONFIG_MAX_BYTES)
			why = "larger than 1 MiB";
	}
	close(fd);
	if (why) {
		free(buf);
		snprintf(err, err_len, "%s: cannot read config file: %s", name, why);
		return -EINVAL;
	}
	/* a NUL would end the line for rte_cfgfile (fgets) and hide the rest */
	const char *nul = memchr(buf, '\0', len);
	if (nul) {
		unsigned line = 1;
		for (const char *p = buf; p < nul; p++)
			line += *p == '\n';
		snprintf(err, err_len, "%s:%u: contains a NUL byte: a config is text", name, line);
		free(buf);
		return -EINVAL;
	}
	/* rte_cfgfile would read "\xef\xbb\xbf[run]" as a line without '='
	 * (and the syntax check quote a garbled first line): name it */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
		snprintf(err, err_len,
			 "%s:1: starts with a UTF-8 byte order mark (EF BB BF), which an INI config cannot have: save it without (e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)",
			 name);
		free(buf);
		return -EINVAL;
	}
	buf[len] = '\0';
	*out = buf;
	return 0;
}

/* Names seen so far by the syntax check, with their lines. */
struct seen_name {
	char name[CFG_NAME_LEN];
	unsigned line;
};

/* Line of name in seen[0..n), 0 if absent; else appends it (up to cap). */
static unsigned seen_check(struct seen_name *seen, unsigned *n, unsigned cap,
			   const char *name, size_t len, unsigned line)
{
	for (unsigned i = 0; i < *n; i++)
		if (strlen(seen[i].name) == len && memcmp(seen[i].name, name, len) == 0)
			return seen[i].line;
	if (*n < cap) {
		snprintf(seen[*n].name, sizeof(seen[*n].name), "%.*s", (int)len, name);
		seen[(*n)++].line = line;
	}
	return 0;
}

/* One comment rule: ';' or '#' starts a comment, at the start of a line
 * or after a value, to the end of the line (rte_cfgfile knew ';' only,
 * anywhere, and failed on a long comment line without a line number).
 * The comments, and the blanks that end a line, go before anything else
 * reads the text. */
static void config_strip_comments(char *text)
{
	char *out = text;
	for (const char *p = text; *p;) {
		if (*p == ';' || *p == '#')
			while (*p && *p != '\n')
				p++;
		if (*p == '\n' || *p == '\0')
			while (out > text && (out[-1] == ' ' || out[-1] == '\t' || out[-1] == '\r'))
				out--;
		if (*p)
			*out++ = *p++;
	}
	*out = '\0';
}

/* rte_cfgfile on text (it reads files only: an anonymous memory file) */
static struct rte_cfgfile *cfgfile_from_text(const char *text)
{
	int fd = memfd_create("listrx-config", MFD_CLOEXEC);
	size_t len = strlen(text);
	struct rte_cfgfile *cfg = NULL;
	if (fd >= 0 && write(fd, text, len) == (ssize_t)len) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		cfg = rte_cfgfile_load(path, CFG_FLAG_EMPTY_VALUES);
	}
	if (fd >= 0)
		close(fd);
	return cfg;
}

/* rte_cfgfile accepts lines it then ignores; every line must be blank, a
 * [section] or key = value (comments are gone), a key needs a section,
 * and a line must fit rte_cfgfile's line buffer (a name, a value, " = "). */
static int config_check_syntax(const char *path, const char *text, char *err,
			       size_t err_len)
{
	enum { MAX_SEEN = 1024 };
	struct seen_name *sections = calloc(2 * MAX_SEEN, sizeof(*sections));
	struct seen_name *keys = sections + MAX_SEEN;
	unsigned n_sections = 0, n_keys = 0;
	if (!sections) {
		snprintf(err, err_len, "%s: %s", path, strerror(ENOMEM));
		return -ENOMEM;
	}
	unsigned line = 1;
	bool in_section = false;
	for (const char *p = text; *p; line++) {
		const char *end = strchr(p, '\n');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *s = p, *e = p + len;
		while (s < e && (*s == ' ' || *s == '\t'))
			s++;
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			e--;
		const char *why = NULL;
		char dup[PATH_MAX + 32];
		unsigned first = 0;
		if (s == e) {
			/* blank, or a comment */
		} else if (*s == '[') {
			if (e[-1] != ']' || e - s < 3)
				why = "a section header must be [name]";
			else if ((size_t)(e - s - 2) >= CFG_NAME_LEN)
				why = "section name too long";
			else if ((first = seen_check(sections, &n_sections, MAX_SEEN, s + 1,
						     (size_t)(e - s - 2), line)))
				why = "section defined twice";
			in_section = true;
			n_keys = 0;
		} else {
			const char *eq = memchr(s, '=', (size_t)(e - s));
			if (!eq)
				why = "expected [section] or key = value (; or # starts a comment)";
			else if (eq == s)
				why = "a key name is missing before '='";
			else if (!in_section)
				why = "key = value before any [section]";
			else if ((size_t)(e - eq - 1) >= CFG_VALUE_LEN)
				why = "value too long";
			const char *k = eq;
			while (k > s && (k[-1] == ' ' || k[-1] == '\t'))
				k--;
			if (!why && (size_t)(k - s) >= CFG_NAME_LEN)
				why = "key name too long (at most 63 characters)";
			if (!why && len > CFG_NAME_LEN + CFG_VALUE_LEN + 2)
				why = "line too long (rte_cfgfile reads at most 322 characters: "
				      "fewer blanks around '=')";
			/* rte_cfgfile keeps both and get_entry returns the
			 * first: a silent choice, so it is an error */
			if (!why && (first = seen_check(keys, &n_keys, MAX_SEEN, s,
							(size_t)(k - s), line)))
				why = "key set twice in this section";
		}
		if (why) {
			dup[0] = '\0';
			if (first)
				snprintf(dup, sizeof(dup), " (first at %s:%u)", path, first);
			snprintf(err, err_len, "%s:%u: %.*s: %s%s", path, line,
				 (int)(e - s > 80 ? 80 : e - s), s, why, dup);
			free(sections);
			return -EINVAL;
		}
		if (!end)
			break;
		p = end + 1;
	}
	free(sections);
	return 0;
}

/* Reads the INI text at read_path; messages name the config `name`. */
static int config_load_at(struct lrx_config *conf, const char *read_path,
			  const char *name,
			  const struct lrx_override *overrides,
			  unsigned n_overrides, char *err, size_t err_len)
{
	config_defaults(conf);
	snprintf(conf->path, sizeof(conf->path), "%s", name);
	char *text;
	int rc = read_text(read_path, name, &text, err, err_len);
	if (rc < 0)
		return rc == -EINVAL ? rc : -ENOENT;
	config_strip_comments(text);
	rc = config_check_syntax(name, text, err, err_len);
	if (rc < 0) {
		free(text);
		return rc;
	}
	/* the syntax check said where rte_cfgfile would fail; this is for
	 * what it did not foresee */
	struct rte_cfgfile *cfg = cfgfile_from_text(text);
	if (!cfg) {
		snprintf(err, err_len,
			 "%s: not a valid INI file (rte_cfgfile_load failed: check for a key outside any [section], a line without '=', a name longer than %d or a value longer than %d characters)",
			 name, CFG_NAME_LEN - 1, CFG_VALUE_LEN - 1);
		free(text);
		return -EINVAL;
	}
	rc = config_load_common(conf, cfg, name, text, overrides, n_overrides, err, err_len);
	free(text);
	if (rc < 0) {
		conf->cfg = cfg;
		lrx_config_free(conf);
	}
	return rc;
}

int lrx_config_load(struct lrx_config *conf, const char *path,
		    const struct lrx_override *overrides, unsigned n_overrides,
		    char *err, size_t err_len)
{
	if (!path)
		path = lrx_config_default_path();
	return config_load_at(conf, path, path, overrides, n_overrides, err,
			      err_len);
}

/* rte_cfgfile parses only files: the text goes into an anonymous memory
 * file (memfd), read through /proc/self/fd. Unlike a file in /tmp it
 * needs no writable directory, leaves nothing behind if the process dies,
 * and costs no disk I/O (the config fuzzer calls this for every input).
 * Messages name the config "(string)". */
int lrx_config_load_string(struct lrx_config *conf, const char *text,
			   const struct lrx_override *overrides,
			   unsigned n_overrides, char *err, size_t err_len)
{
	int fd = memfd_create("listrx-config", MFD_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, err_len, "cannot create a memory file for the config text: %s",
			 strerror(e));
		return -e;
	}
	size_t len = strlen(text);
	ssize_t written = write(fd, text, len);
	if (written != (ssize_t)len) {
		close(fd);
		snprintf(err, err_len, "cannot write the config text to a memory file");
		return -EIO;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	int rc = config_load_at(conf, path, "(string)", overrides, n_overrides,
				err, err_len);
	close(fd);
	return rc;
}

void lrx_config_free(struct lrx_config *conf)
{
	if (conf->cfg)
		rte_cfgfile_close(conf->cfg);
	conf->cfg = NULL;
	for (unsigned i = 0; i < RTE_DIM(conf->pipeline.stages); i++) {
		free(conf->pipeline.stages[i].conf);
		free(conf->absent[i].conf);
		conf->pipeline.stages[i].conf = conf->absent[i].conf = NULL;
	}
}

int lrx_config_check_absent_stages(const struct lrx_config *conf, char *err,
				   size_t err_len)
{
	for (unsigned i = 0; i < conf->n_absent; i++) {
		struct lrx_pipeline_conf pc = conf->pipeline;
		pc.engine = LRX_ENGINE_PACKET;
		pc.hybrid_k = 0;
		pc.n_stages = 1;
		pc.socket_id = SOCKET_ID_ANY;
		pc.stages[0] = conf->absent[i];
		pc.stages[0].footprint_kb = 0;
		struct lrx_pipeline *p = NULL;
		char msg[1024];
		int rc = lrx_pipeline_create(&pc, &p, msg, sizeof(msg));
		if (p)
			lrx_pipeline_destroy(p);
		if (rc < 0) {
			snprintf(err, err_len, "%s: [stage.%s] (stage not in the pipeline; its keys are checked all the same): %s",
				 conf->absent_where[i], conf->absent[i].stage->name, msg);
			return rc;
		}
	}
	return 0;
}

const char *lrx_config_default_path(void)
{
	if (access(LISTRX_DEFAULT_CONFIG, R_OK) == 0)
		return LISTRX_DEFAULT_CONFIG;
	return LISTRX_CONFIG_INSTALLED;
}
