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

/* ---- value parsers ------------------------------------------------------ */

/* Decimal only, no leading zero: strtoull's base 0 read 010 as 8 and
 * took 0x10, and a leading zero is ambiguous to a reader. */
static int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	if (!text || *text < '0' || *text > '9' || (text[0] == '0' && text[1]))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Decimal notation only (1.5, 2e3): strtod would also take hex floats
 * (0x10), leading blanks and signs. */
static int parse_double(const char *text, double min, double max, double *out)
{
	char *end;
	if (!text || !((*text >= '0' && *text <= '9') || *text == '.') ||
	    strpbrk(text, "xX"))
		return -EINVAL;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || *end || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_bool(const char *text, bool *out)
{
	static const char *const yes[] = {"1", "yes", "true", "on"};
	static const char *const no[] = {"0", "no", "false", "off"};
	for (unsigned i = 0; i < 4; i++) {
		if (strcasecmp(text, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(text, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -EINVAL;
}

static const struct {
	const char *name;
	uint32_t bit;
} offload_table[] = {
	{"rss", LRX_OFFLOAD_RSS},
	{"rx-cksum", LRX_OFFLOAD_RX_CKSUM},
	{"vlan-strip", LRX_OFFLOAD_VLAN_STRIP},
	{"timestamp", LRX_OFFLOAD_TIMESTAMP},
	{"lro", LRX_OFFLOAD_LRO},
	{"scatter", LRX_OFFLOAD_SCATTER},
};
#define OFFLOAD_VALID "rss, rx-cksum, vlan-strip, timestamp, lro, scatter, none"

const char *lrx_offload_names(uint32_t offloads, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < RTE_DIM(offload_table); i++) {
		if (!(offloads & offload_table[i].bit))
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "",
				 offload_table[i].name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, len, "none");
	return buf;
}

/* Comma-separated list of offload names into bits; bad name copied out. */
static int parse_offloads(const char *text, uint32_t *out, char *bad, size_t bad_len)
{
	char copy[LRX_VALUE_LEN];
	snprintf(copy, sizeof(copy), "%s", text);
	*out = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		if (strcmp(tok, "none") == 0)
			continue;
		size_t i;
		for (i = 0; i < RTE_DIM(offload_table); i++)
			if (strcmp(tok, offload_table[i].name) == 0)
				break;
		if (i == RTE_DIM(offload_table)) {
			snprintf(bad, bad_len, "%s", tok);
			return -EINVAL;
		}
		*out |= offload_table[i].bit;
	}
	return 0;
}

/* ---- sections ----------------------------------------------------------- */

static const char *const run_keys[] = {"duration", "packets", "stats_period", "json",
				       "measure_from", "stats_view", "capture_drops",
				       "capture_delivered", "trace", NULL};
static const char *const eal_keys[] = {"args", NULL};
static const char *const pipeline_keys[] = {"engine", "burst", "stages", "stats_level",
					    "footprint_kb", "latency", "prefetch", NULL};
static const char *const mempool_keys[] = {"mbufs", "cache", "data_room", "priv_size", NULL};
static const char *const port_keys[] = {"device", "devargs", "rx_queues", "tx_queues",
					"rx_desc", "tx_desc", "offloads",
					"offloads_required", "mtu", "promiscuous",
					"forward", NULL};
static const char *const lcore_keys[] = {"poll", NULL};
static const char *const telemetry_keys[] = {"enabled", NULL};
static const char *const pmu_keys[] = {"events", "stages", "kernel", "source", NULL};

static void join_keys(const char *const *keys, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (unsigned i = 0; keys[i]; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", keys[i]);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

static int check_keys(struct config_ctx *c, struct rte_cfgfile *cfg,
		      const char *section, const char *const *keys)
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
		bool known = false;
		for (unsigned k = 0; keys[k]; k++)
			known |= strcmp(entries[i].name, keys[k]) == 0;
		if (!known) {
			char valid[512];
			join_keys(keys, valid, sizeof(valid));
			rc = config_error(c, section, entries[i].name, entries[i].value,
					  "unknown key; valid keys in [%s]: %s",
					  section, valid);
		}
	}
	free(entries);
	return rc;
}

static const char *get(struct rte_cfgfile *cfg, const char *section, const char *key)
{
	return rte_cfgfile_get_entry(cfg, section, key);
}

/* Integer key in [min, max]; absent keeps *out. */
static int get_uint(struct config_ctx *c, struct rte_cfgfile *cfg,
		    const char *section, const char *key, uint64_t min,
		    uint64_t max, uint64_t *out)
{
	const char *v = get(cfg, section, key);
	if (!v)
		return 0;
	if (parse_u64(v, min, max, out) < 0)
		return config_error(c, section, key, v,
				    "must be an integer in %llu..%llu",
				    (unsigned long long)min, (unsigned long long)max);
	return 0;
}

static int get_u16(struct config_ctx *c, struct rte_cfgfile *cfg, const char *section,
		   const char *key, uint64_t min, uint64_t max, uint16_t *out)
{
	uint64_t v = *out;
	int rc = get_uint(c, cfg, section, key, min, max, &v);
	*out = (uint16_t)v;
	return rc;
}

static int get_unsigned(struct config_ctx *c, struct rte_cfgfile *cfg, const char *section,
			const char *key, uint64_t min, uint64_t max, unsigned *out)
{
	uint64_t v = *out;
	int rc = get_uint(c, cfg, section, key, min, max, &v);
	*out = (unsigned)v;
	return rc;
}

static int get_double(struct config_ctx *c, struct rte_cfgfile *cfg,
		      const char *section, const char *key, double min,
		      double max, double *out)
{
	const char *v = get(cfg, section, key);
	if (!v)
		return 0;
	if (parse_double(v, min, max, out) < 0)
		return config_error(c, section, key, v, "must be a number in %g..%g", min, max);
	return 0;
}

static int get_bool(struct config_ctx *c, struct rte_cfgfile *cfg,
		    const char *section, const char *key, bool *out)
{
	const char *v = get(cfg, section, key);
	if (!v)
		return 0;
	if (parse_bool(v, out) < 0)
		return config_error(c, section, key, v, "must be yes/no, true/false, on/off or 1/0");
	return 0;
}

static const char *config_strdup(struct lrx_config *conf, const char *s)
{
	size_t len = strlen(s) + 1;
	if (conf->strings_used + len > sizeof(conf->strings))
		return NULL;
	char *dst = conf->strings + conf->strings_used;
	memcpy(dst, s, len);
	conf->strings_used += len;
	return dst;
}

static int load_run(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	struct lrx_config *conf = c->conf;
	int rc = check_keys(c, cfg, "run", run_keys);
	rc = rc ?: get_double(c, cfg, "run", "duration", 0, 1e9, &conf->duration_s);
	rc = rc ?: get_uint(c, cfg, "run", "packets", 0, UINT64_MAX, &conf->packets);
	rc = rc ?: get_double(c, cfg, "run", "stats_period", 0, 1e6, &conf->stats_period_s);
	rc = rc ?: get_uint(c, cfg, "run", "measure_from", 0, UINT64_MAX, &conf->measure_from);
	if (!rc && conf->measure_from && !lrx_measure_available())
		rc = config_error(c, "run", "measure_from", get(cfg, "run", "measure_from"),
				  "needs valgrind/callgrind.h at build time (Debian: valgrind)");
	if (!rc && conf->measure_from && conf->packets <= conf->measure_from)
		rc = config_error(c, "run", "measure_from", get(cfg, "run", "measure_from"),
				  "must be below [run] packets (--packets), the end of the window");
	const char *view = get(cfg, "run", "stats_view");
	if (!rc && view) {
		if (strcmp(view, "stages") == 0)
			conf->stats_view = LRX_STATS_VIEW_STAGES;
		else if (strcmp(view, "ports") == 0)
			conf->stats_view = LRX_STATS_VIEW_PORTS;
		else if (strcmp(view, "lcores") == 0)
			conf->stats_view = LRX_STATS_VIEW_LCORES;
		else
			rc = config_error(c, "run", "stats_view", view,
					  "valid views: stages, ports, lcores");
	}
	const char *json = get(cfg, "run", "json");
	if (json)
		snprintf(conf->json_path, sizeof(conf->json_path), "%s", json);
	rc = rc ?: get_unsigned(c, cfg, "run", "trace", 0, LRX_TRACE_MAX, &conf->trace);
	const char *capture = get(cfg, "run", "capture_drops");
	if (!rc && capture &&
	    lrx_capture_parse(capture, conf->capture_drops_path, sizeof(conf->capture_drops_path),
			      &conf->capture_drops_limit) < 0)
		rc = config_error(c, "run", "capture_drops", capture,
				  "expected FILE or FILE,N (a pcapng file, N >= 1 packets)");
	capture = get(cfg, "run", "capture_delivered");
	if (!rc && capture &&
	    lrx_capture_parse(capture, conf->capture_delivered_path,
			      sizeof(conf->capture_delivered_path), &conf->capture_delivered_limit) < 0)
		rc = config_error(c, "run", "capture_delivered", capture,
				  "expected FILE or FILE,N (a pcapng file, N >= 1 packets)");
	return rc;
}

static int load_eal(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	int rc = check_keys(c, cfg, "eal", eal_keys);
	const char *args = get(cfg, "eal", "args");
	if (args)
		snprintf(c->conf->eal_args, sizeof(c->conf->eal_args), "%s", args);
	return rc;
}

static int load_mempool(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	struct lrx_config *conf = c->conf;
	int rc = check_keys(c, cfg, "mempool", mempool_keys);
	rc = rc ?: get_unsigned(c, cfg, "mempool", "mbufs", 0, 1u << 24, &conf->mbufs);
	rc = rc ?: get_unsigned(c, cfg, "mempool", "cache", 0, 512, &conf->mempool_cache);
	rc = rc ?: get_unsigned(c, cfg, "mempool", "data_room", 256, 65535, &conf->data_room);
	const char *priv = get(cfg, "mempool", "priv_size");
	if (priv != NULL)
		conf->priv_size_auto = strcmp(priv, "auto") == 0;
	if (priv != NULL && !conf->priv_size_auto)
		rc = rc ?: get_unsigned(c, cfg, "mempool", "priv_size", 0, 4096, &conf->priv_size);
	if (rc == 0 && conf->priv_size % RTE_MBUF_PRIV_ALIGN)
		rc = config_error(c, "mempool", "priv_size", get(cfg, "mempool", "priv_size"),
				  "must be a multiple of %u", RTE_MBUF_PRIV_ALIGN);
	return rc;
}

/* Appends key = value to a stage's settings (named by section in errors). */
static int stage_conf_add(struct config_ctx *c, const char *section,
			  struct lrx_stage_conf *sc, const char *key, const char *value)
{
	if (sc->n_values == RTE_DIM(sc->keys))
		return config_error(c, section, key, value, "too many keys");
	sc->keys[sc->n_values] = config_strdup(c->conf, key);
	sc->values[sc->n_values] = config_strdup(c->conf, value);
	if (!sc->keys[sc->n_values] || !sc->values[sc->n_values])
		return config_error(c, section, key, value, "config too large");
	sc->n_values++;
	return 0;
}

/* Stage keys are checked against the stage descriptor; values are checked
 * by the stage's init when the pipeline is built. */
static int load_stage_section(struct config_ctx *c, struct rte_cfgfile *cfg,
			      const char *section, struct lrx_stage_conf *sc)
{
	const struct lrx_stage *stage = sc->stage;
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
		if (strcmp(key, "footprint_kb") == 0) {
			uint64_t kb = 0;
			if (parse_u64(value, 0, 65536, &kb) < 0)
				rc = config_error(c, section, key, value,
						  "must be an integer in 0..65536 (KB of executed ballast code)");
			sc->footprint_kb = (unsigned)kb;
			continue;
		}
		bool known = false;
		for (const struct lrx_stage_key *k = stage->keys; k && k->name; k++)
			known |= strcmp(k->name, key) == 0;
		if (!known) {
			char valid[512] = "footprint_kb";
			size_t used = strlen(valid);
			for (const struct lrx_stage_key *k = stage->keys; k && k->name; k++)
				used += (size_t)snprintf(valid + used, sizeof(valid) - used > 0 ? sizeof(valid) - used : 0,
							 ", %s", k->name);
			rc = config_error(c, section, key, value,
					  "unknown key for stage %s; valid keys: %s",
					  stage->name, valid);
			break;
		}
		rc = stage_conf_add(c, section, sc, key, value);
	}
	free(entries);
	return rc;
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
	struct lrx_pipeline_conf *pc = &c->conf->pipeline;
	const char *names[16];
	unsigned n_keys = 0;
	for (; sh->keys[n_keys].key && n_keys < RTE_DIM(names) - 1; n_keys++)
		names[n_keys] = sh->keys[n_keys].key;
	names[n_keys] = NULL;
	int rc = check_keys(c, cfg, sec, names);
	if (rc || !rte_cfgfile_has_section(cfg, sec))
		return rc;
	/* yes/no keys first: their errors come before the placement's */
	bool yes[16] = {false};
	for (unsigned k = 0; k < n_keys; k++)
		if (sh->keys[k].if_yes) {
			yes[k] = true;
			rc = get_bool(c, cfg, sec, sh->keys[k].key, &yes[k]);
			if (rc)
				return rc;
		}
	const char *add = get(cfg, sec, sh->add_key);
	const char *mode = get(cfg, sec, sh->place_key);
	const struct lrx_stage_place *place = &sh->places[0];
	if (mode) {
		char valid[256];
		size_t used = 0;
		valid[0] = '\0';
		for (place = sh->places; place->value; place++) {
			if (strcmp(place->value, mode) == 0)
				break;
			used += (size_t)snprintf(valid + used, used < sizeof(valid) ? sizeof(valid) - used : 0,
						 "%s%s", used ? ", " : "", place->value);
		}
		if (!place->value)
			return config_error(c, sec, sh->place_key, mode, "valid %ss: %s",
					    sh->place_key, valid);
	}
	if (add && !*add)
		return config_error(c, sec, sh->add_key, add, "%s", sh->add_empty);

	/* where the stage is, and where its place wants it: after the last
	 * stage that works on the skb, or first */
	bool after_skb = place->position == LRX_POSITION_AFTER_SKB;
	int at = -1, after_meta = -1;
	bool has_meta = false;
	for (unsigned i = 0; i < pc->n_stages; i++) {
		const struct lrx_stage *s = pc->stages[i].stage;
		if (s == stage && at < 0)
			at = (int)i;
		if (s->provides & (LRX_PROVIDES_META | LRX_PROVIDES_SKB)) {
			has_meta |= (s->provides & LRX_PROVIDES_META) != 0;
			if (at < 0)
				after_meta = (int)i;
		}
	}
	const char *meta = provider_name(LRX_PROVIDES_META);
	const char *stages = get(cfg, "pipeline", "stages");
	if (after_skb && !has_meta)
		return config_error(c, sec, sh->place_key, mode,
				    "%s, and the pipeline (%s) has no %s; add it, or use %s %s",
				    place->why, stages && *stages ? stages : "none", meta,
				    sh->place_key, sh->places[0].value);
	bool first = place->position == LRX_POSITION_FIRST;
	if (at >= 0 && ((first && at != 0) || (after_skb && after_meta < 0))) {
		char where[64];
		snprintf(where, sizeof(where), first ? "first" : "after %s", meta);
		return config_error(c, sec, sh->place_key, mode ? mode : place->value,
				    "the pipeline (%s) has %s at position %d: %s %s needs it %s",
				    stages, stage->name, at + 1, sh->place_key, place->value,
				    where);
	}
	if (at < 0 && add) {
		if (pc->n_stages == LRX_PIPELINE_MAX_STAGES)
			return config_error(c, sec, sh->add_key, add,
					    "no room for the %s stage: at most %u stages",
					    stage->name, LRX_PIPELINE_MAX_STAGES);
		at = after_skb ? after_meta + 1 : 0;
		memmove(&pc->stages[at + 1], &pc->stages[at],
			(pc->n_stages - (unsigned)at) * sizeof(pc->stages[0]));
		memset(&pc->stages[at], 0, sizeof(pc->stages[0]));
		pc->stages[at].stage = stage;
		pc->n_stages++;
		char section[LRX_NAME_LEN + 8];
		snprintf(section, sizeof(section), "stage.%s", stage->name);
		rc = load_stage_section(c, cfg, section, &pc->stages[at]);
		if (rc)
			return rc;
	}
	if (at < 0)
		return 0; /* settings kept for a stage switched off */

	struct lrx_stage_conf *sc = &pc->stages[at];
	for (unsigned k = 0; k < n_keys; k++) {
		const struct lrx_stage_alias *a = &sh->keys[k];
		const char *value = get(cfg, sec, a->key);
		if (!value)
			continue;
		if (a->if_yes)
			value = yes[k] ? a->if_yes : a->if_no;
		rc = stage_conf_add(c, sec, sc, a->stage_key, value);
		if (rc)
			return rc;
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
	int rc = check_keys(c, cfg, "pmu", pmu_keys);
	rc = rc ?: get_bool(c, cfg, "pmu", "stages", &pmu->stages);
	rc = rc ?: get_bool(c, cfg, "pmu", "kernel", &pmu->kernel);
	if (rc)
		return rc;
	const char *source = get(cfg, "pmu", "source");
	if (source && lrx_pmu_source_parse(source, &pmu->source) < 0)
		return config_error(c, "pmu", "source", source,
				    "must be perf_event (the kernel's counters) or fake (a software source for tests)");
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

static int load_pipeline(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	struct lrx_pipeline_conf *pc = &c->conf->pipeline;
	int rc = check_keys(c, cfg, "pipeline", pipeline_keys);
	if (rc)
		return rc;
	const char *engine = get(cfg, "pipeline", "engine");
	if (engine && (lrx_engine_parse(engine, &pc->engine, &pc->hybrid_k) < 0 ||
		       (pc->engine == LRX_ENGINE_HYBRID &&
			(pc->hybrid_k == 0 || engine[7] == '0'))))
		return config_error(c, "pipeline", "engine", engine,
				    "valid engines: packet, burst, hybrid:K (K = stages run as bursts, 1..%u), static, graph",
				    LRX_PIPELINE_MAX_STAGES);
	uint64_t burst = pc->burst;
	rc = get_uint(c, cfg, "pipeline", "burst", 1, LRX_BURST_MAX, &burst);
	pc->burst = (uint16_t)burst;
	uint64_t prefetch = pc->prefetch;
	rc = rc ?: get_uint(c, cfg, "pipeline", "prefetch", 0, LRX_PREFETCH_MAX,
			    &prefetch);
	pc->prefetch = (uint16_t)prefetch;
	rc = rc ?: get_unsigned(c, cfg, "pipeline", "footprint_kb", 0, 1u << 20,
				&c->conf->footprint_total_kb);
	rc = rc ?: get_bool(c, cfg, "pipeline", "latency", &c->conf->latency);
	if (rc)
		return rc;
	const char *level = get(cfg, "pipeline", "stats_level");
	if (level) {
		if (strcmp(level, "off") == 0)
			pc->stats_level = LRX_STATS_OFF;
		else if (strcmp(level, "counters") == 0)
			pc->stats_level = LRX_STATS_COUNTERS;
		else if (strcmp(level, "cycles") == 0)
			pc->stats_level = LRX_STATS_CYCLES;
		else
			return config_error(c, "pipeline", "stats_level", level,
					    "valid levels: off, counters, cycles");
	}

	const char *stages = get(cfg, "pipeline", "stages");
	pc->n_stages = 0;
	if (stages) {
		char copy[LRX_VALUE_LEN];
		snprintf(copy, sizeof(copy), "%s", stages);
		/* strtok_r would skip empty entries: ",,", "a,,b" and a
		 * trailing comma are typing mistakes, and "none" is the
		 * whole list or nothing */
		const char *t = stages + strspn(stages, " ");
		bool blank = *t == '\0', only_none = strcmp(t, "none") == 0;
		for (const char *q = stages; !blank && !only_none && *q; q++)
			if (*q == ',' && (q == t || q[1 + strspn(q + 1, " ")] == ',' ||
					  q[1 + strspn(q + 1, " ")] == '\0'))
				return config_error(c, "pipeline", "stages", stages,
						    "empty entry in the stage list: name stages separated by single commas, or 'none' alone");
		char *save = NULL;
		for (char *tok = strtok_r(copy, ", ", &save); tok;
		     tok = strtok_r(NULL, ", ", &save)) {
			if (strcmp(tok, "none") == 0 && only_none)
				continue;
			if (strcmp(tok, "none") == 0)
				return config_error(c, "pipeline", "stages", stages,
						    "'none' means an empty pipeline and cannot be combined with stages");
			const struct lrx_stage *stage = lrx_stage_find(tok);
			if (!stage) {
				char valid[512];
				stage_names(valid, sizeof(valid));
				return config_error(c, "pipeline", "stages", stages,
						    "unknown stage '%s'; valid stages: %s",
						    tok, valid[0] ? valid : "(none built)");
			}
			if (pc->n_stages == LRX_PIPELINE_MAX_STAGES)
				return config_error(c, "pipeline", "stages", stages,
						    "at most %u stages", LRX_PIPELINE_MAX_STAGES);
			struct lrx_stage_conf *sc = &pc->stages[pc->n_stages++];
			memset(sc, 0, sizeof(*sc));
			sc->stage = stage;
		}
	}
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
	*pc = (struct lrx_port_conf){.index = index, .rx_queues = 1, .tx_queues = 1,
				     .rx_desc = 1024, .tx_desc = 1024,
				     .promiscuous = true, .forward_to = -1};
	int rc = check_keys(c, cfg, section, port_keys);
	if (rc)
		return rc;
	const char *device = get(cfg, section, "device");
	if (!device || !*device)
		return config_error(c, section, device ? "device" : NULL, device,
				    "key 'device' missing or empty: name the ethdev (e.g. net_synth0, net_null0) or a PCI address (0000:3b:00.0)");
	snprintf(pc->device, sizeof(pc->device), "%s", device);
	const char *devargs = get(cfg, section, "devargs");
	if (devargs)
		snprintf(pc->devargs, sizeof(pc->devargs), "%s", devargs);
	rc = rc ?: get_u16(c, cfg, section, "rx_queues", 1, LRX_MAX_QUEUES, &pc->rx_queues);
	rc = rc ?: get_u16(c, cfg, section, "tx_queues", 1, LRX_MAX_QUEUES, &pc->tx_queues);
	rc = rc ?: get_u16(c, cfg, section, "rx_desc", 32, 16384, &pc->rx_desc);
	rc = rc ?: get_u16(c, cfg, section, "tx_desc", 32, 16384, &pc->tx_desc);
	rc = rc ?: get_u16(c, cfg, section, "mtu", 0, 9600, &pc->mtu);
	rc = rc ?: get_bool(c, cfg, section, "promiscuous", &pc->promiscuous);
	if (rc)
		return rc;
	char bad[LRX_VALUE_LEN];
	const char *offloads = get(cfg, section, "offloads");
	if (offloads && parse_offloads(offloads, &pc->offloads, bad, sizeof(bad)) < 0)
		return config_error(c, section, "offloads", offloads,
				    "unknown offload '%s'; valid: " OFFLOAD_VALID, bad);
	const char *required = get(cfg, section, "offloads_required");
	if (required) {
		if (parse_offloads(required, &pc->offloads_required, bad, sizeof(bad)) < 0)
			return config_error(c, section, "offloads_required", required,
					    "unknown offload '%s'; valid: " OFFLOAD_VALID, bad);
		pc->offloads |= pc->offloads_required;
	}
	const char *forward = get(cfg, section, "forward");
	if (forward && strcmp(forward, "none") != 0) {
		uint64_t to;
		if (parse_u64(forward, 0, LRX_MAX_PORTS - 1, &to) < 0)
			return config_error(c, section, "forward", forward,
					    "must be 'none' or a port index 0..%u (a [port.N] section)",
					    LRX_MAX_PORTS - 1);
		pc->forward_to = (int)to;
	}
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
	int rc = check_keys(c, cfg, section, lcore_keys);
	if (rc)
		return rc;
	const char *poll = get(cfg, section, "poll");
	if (!poll || !*poll)
		return config_error(c, section, poll ? "poll" : NULL, poll,
				    "key 'poll' missing or empty: list PORT:QUEUE pairs, e.g. poll = 0:0,1:0");
	char copy[LRX_VALUE_LEN];
	snprintf(copy, sizeof(copy), "%s", poll);
	char *save = NULL;
	for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
		unsigned port, queue;
		char tail;
		if (sscanf(tok, "%u:%u%c", &port, &queue, &tail) != 2 ||
		    port >= LRX_MAX_PORTS || queue >= LRX_MAX_QUEUES)
			return config_error(c, section, "poll", poll,
					    "bad entry '%s': expected PORT:QUEUE with PORT < %u, QUEUE < %u",
					    tok, LRX_MAX_PORTS, LRX_MAX_QUEUES);
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
	memset(conf, 0, sizeof(*conf));
	snprintf(conf->eal_args, sizeof(conf->eal_args),
		 "--no-huge --no-pci --no-shconf -m 1024");
	conf->pipeline.engine = LRX_ENGINE_BURST;
	conf->pipeline.burst = 64;
	conf->pipeline.stats_level = LRX_STATS_COUNTERS;
	/* as conf/default.ini: a custom config keeps its progress lines */
	conf->stats_period_s = 1;
	conf->pipeline.prefetch = LRX_PREFETCH_DEFAULT;
	conf->priv_size_auto = true;
	conf->mempool_cache = 256;
	conf->data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
	conf->telemetry = true;
}

static int config_apply(struct config_ctx *c, struct rte_cfgfile *cfg)
{
	struct lrx_config *conf = c->conf;
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

	int rc = load_eal(c, cfg);
	rc = rc ?: load_run(c, cfg);
	rc = rc ?: load_mempool(c, cfg);
	rc = rc ?: load_pipeline(c, cfg);
	rc = rc ?: load_pmu(c, cfg);
	if (rc == 0)
		rc = check_keys(c, cfg, "telemetry", telemetry_keys) ?:
		     get_bool(c, cfg, "telemetry", "enabled", &conf->telemetry);
	for (int i = 0; i < n && rc == 0; i++) {
		const char *s = names[i];
		unsigned index;
		char tail;
		if (strcmp(s, "eal") == 0 || strcmp(s, "run") == 0 ||
		    strcmp(s, "pipeline") == 0 || strcmp(s, "mempool") == 0 ||
		    strcmp(s, "telemetry") == 0 || is_shortcut_section(s) ||
		    strcmp(s, "pmu") == 0)
			continue;
		if (sscanf(s, "port.%u%c", &index, &tail) == 1) {
			rc = index < LRX_MAX_PORTS ? load_port(c, cfg, s, index)
						   : config_error(c, s, NULL, NULL,
								  "port index must be 0..%u", LRX_MAX_PORTS - 1);
		} else if (sscanf(s, "lcore.%u%c", &index, &tail) == 1) {
			rc = index < RTE_MAX_LCORE ? load_lcore(c, cfg, s, index)
						   : config_error(c, s, NULL, NULL,
								  "lcore id must be 0..%u", RTE_MAX_LCORE - 1);
		} else if (strncmp(s, "stage.", 6) == 0) {
			/* a section for a stage that is not in the pipeline is
			 * fine (configs keep settings for stages switched off),
			 * but the stage must exist */
			if (!lrx_stage_find(s + 6)) {
				char valid[512];
				stage_names(valid, sizeof(valid));
				rc = config_error(c, s, NULL, NULL, "no stage named '%s'; valid stages: %s",
						  s + 6, valid);
			} else {
				bool in_pipeline = false;
				for (unsigned k = 0; k < conf->pipeline.n_stages; k++)
					in_pipeline |= strcmp(conf->pipeline.stages[k].stage->name, s + 6) == 0;
				if (!in_pipeline && conf->n_absent < RTE_DIM(conf->absent)) {
					struct lrx_stage_conf *sc = &conf->absent[conf->n_absent];
					*sc = (struct lrx_stage_conf){.stage = lrx_stage_find(s + 6)};
					rc = load_stage_section(c, cfg, s, sc);
					unsigned line = config_find_line(c->text, s, NULL);
					const char *origin = NULL;
					for (unsigned o = 0; o < c->n_overrides; o++)
						if (strcmp(c->overrides[o].section, s) == 0)
							origin = c->overrides[o].origin;
					if (origin)
						snprintf(conf->absent_where[conf->n_absent], 128, "%s", origin);
					else
						snprintf(conf->absent_where[conf->n_absent], 128, "%s:%u",
							 c->file, line);
					conf->n_absent++;
				}
			}
		} else {
			rc = config_error(c, s, NULL, NULL,
					  "unknown section; valid sections: [eal], [run], [pipeline], [mempool], [telemetry], [xdp], [pmu], [port.N], [lcore.N], [stage.NAME]");
		}
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

/* rte_cfgfile accepts lines it then ignores; every line must be blank, a
 * comment (; or #), a [section] or key = value, and a key needs a section. */
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
		if (s == e || *s == ';' || *s == '#') {
			/* blank or comment */
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
				why = "expected [section], key = value, or a comment (; or #)";
			else if (eq == s)
				why = "a key name is missing before '='";
			else if (!in_section)
				why = "key = value before any [section]";
			else if ((size_t)(e - eq - 1) >= CFG_VALUE_LEN)
				why = "value too long";
			const char *k = eq;
			while (k > s && (k[-1] == ' ' || k[-1] == '\t'))
				k--;
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
	rc = config_check_syntax(name, text, err, err_len);
	if (rc < 0) {
		free(text);
		return rc;
	}
	/* rte_cfgfile reports a syntax error only by failing; say where */
	struct rte_cfgfile *cfg = rte_cfgfile_load(read_path, CFG_FLAG_EMPTY_VALUES);
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
		rte_cfgfile_close(cfg);
		conf->cfg = NULL;
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
