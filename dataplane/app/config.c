/* SPDX-License-Identifier: BSD-3-Clause
 * Config: INI text (ini.h) + command-line overrides. Every section and key
 * is checked against a table before anything starts; a bad one is reported
 * with file, line, section, key, value and what would be valid.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_memory.h>

#include "config.h"
#include "config_keys.h"
#include "ini.h"
#include "text_file.h"
#include "stage_keys.h"
#include "measure.h"
#include "listrx_build.h"

/* ---- error reporting with file and line -------------------------------- */

struct config_ctx {
	struct lrx_config *conf;
	const char *file;         /* shown in messages */
	const struct lrx_override *overrides;
	unsigned n_overrides;
	char *err;
	size_t err_len;
};

/* Line of "key" inside "[section]" of the file (of the section when key
 * is NULL), 0 if not there. */
static unsigned config_find_line(const struct config_ctx *c, const char *section,
				 const char *key)
{
	const struct lrx_ini_section *s = lrx_ini_section(c->conf->cfg, section);
	const struct lrx_ini_entry *e = key ? lrx_ini_entry(c->conf->cfg, section, key) : NULL;
	return key ? (e ? e->line : 0) : (s ? s->line : 0);
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
		    !config_find_line(c, section, NULL))
			ov = &c->overrides[i];
	if (ov && strcmp(ov->origin, "--set") == 0) {
		snprintf(c->err, c->err_len, "--set %s.%s=%s: [%s]%s%s: %s", ov->section,
			 ov->key, ov->value, section, key ? " " : "", key ? key : "", what);
	} else if (ov) {
		snprintf(c->err, c->err_len, "%s %s: [%s] %s: %s", ov->origin,
			 ov->value, section, key ? key : ov->key, what);
	} else {
		unsigned line = config_find_line(c, section, key);
		char where[PATH_MAX + 32];
		if (line)
			snprintf(where, sizeof(where), "%s:%u", c->file, line);
		else
			snprintf(where, sizeof(where), "%s", c->file);
		/* a long list is named by its start: what is valid follows */
		const int shown = value && strlen(value) > 160 ? 160 : INT_MAX;
		if (key)
			snprintf(c->err, c->err_len, "%s: [%s] %s = %.*s%s: %s",
				 where, section, key, shown, value ? value : "",
				 shown == INT_MAX ? "" : "...", what);
		else
			snprintf(c->err, c->err_len, "%s: [%s]: %s", where,
				 section, what);
	}
	return -EINVAL;
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
static int load_section(struct config_ctx *c, struct lrx_ini *cfg, const char *section,
			const struct section_keys *sk, void *base, void *more_base)
{
	const struct lrx_ini_section *sec = lrx_ini_section(cfg, section);
	int rc = 0;
	for (unsigned i = 0; sec && i < sec->n && rc == 0; i++) {
		const char *key = sec->entries[i].key, *value = sec->entries[i].value;
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
	return rc;
}

static const char *get(struct lrx_ini *cfg, const char *section, const char *key)
{
	return lrx_ini_get(cfg, section, key);
}

static int load_run(struct config_ctx *c, struct lrx_ini *cfg)
{
	struct lrx_config *conf = c->conf;
	int rc = load_section(c, cfg, "run", &(struct section_keys){.keys = config_run_keys}, conf, NULL);
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
static int load_stage_section(struct config_ctx *c, struct lrx_ini *cfg,
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
static int shortcut_position(struct config_ctx *c, struct lrx_ini *cfg,
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
static int load_shortcut(struct config_ctx *c, struct lrx_ini *cfg,
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
	if (rc || !lrx_ini_section(cfg, sec))
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

static int load_shortcuts(struct config_ctx *c, struct lrx_ini *cfg)
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
static int check_needs(struct config_ctx *c, struct lrx_ini *cfg)
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
static int load_pmu(struct config_ctx *c, struct lrx_ini *cfg)
{
	struct lrx_pmu_conf *pmu = &c->conf->pmu;
	static const char *const by_code[] = {"events", NULL};
	int rc = load_section(c, cfg, "pmu", &(struct section_keys){.keys = config_pmu_keys, .by_code = by_code},
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
static int check_interleave(struct config_ctx *c, struct lrx_ini *cfg)
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

static int load_pipeline(struct config_ctx *c, struct lrx_ini *cfg)
{
	struct lrx_pipeline_conf *pc = &c->conf->pipeline;
	static const char *const by_code[] = {"engine", "stages", NULL};
	int rc = load_section(c, cfg, "pipeline",
			      &(struct section_keys){.keys = config_pipeline_keys, .by_code = by_code}, c->conf, NULL);
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

static int load_port(struct config_ctx *c, struct lrx_ini *cfg,
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
	RTE_VERIFY(lrx_value_keys_default(config_port_keys, pc, &bad) == 0);
	int rc = load_section(c, cfg, section, &(struct section_keys){.keys = config_port_keys}, pc, NULL);
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

static int load_lcore(struct config_ctx *c, struct lrx_ini *cfg,
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
		config_eal_keys, config_run_keys, config_pipeline_keys, config_mempool_keys, config_telemetry_keys, config_pmu_keys,
	};
	const char *bad = NULL;
	memset(conf, 0, sizeof(*conf));
	conf->pipeline.engine = LRX_ENGINE_BURST;
	for (unsigned i = 0; i < RTE_DIM(tables); i++)
		RTE_VERIFY(lrx_value_keys_default(tables[i], conf, &bad) == 0);
}

/* The command line's overrides into the INI tables. */
static int config_apply_overrides(struct config_ctx *c, struct lrx_ini *cfg)
{
	for (unsigned i = 0; i < c->n_overrides; i++) {
		const struct lrx_override *o = &c->overrides[i];
		if (lrx_ini_set(cfg, o->section, o->key, o->value) < 0)
			return -ENOMEM;
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
static int load_absent_stage(struct config_ctx *c, struct lrx_ini *cfg, const char *s)
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
		 c->file, config_find_line(c, s, NULL));
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
static int load_numbered_section(struct config_ctx *c, struct lrx_ini *cfg, const char *s)
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

static int config_apply(struct config_ctx *c, struct lrx_ini *cfg)
{
	struct lrx_config *conf = c->conf;
	int rc = config_apply_overrides(c, cfg);
	if (rc)
		return rc;

	rc = load_section(c, cfg, "eal", &(struct section_keys){.keys = config_eal_keys}, conf, NULL);
	rc = rc ?: load_run(c, cfg);
	rc = rc ?: load_section(c, cfg, "mempool", &(struct section_keys){.keys = config_mempool_keys}, conf,
				NULL);
	rc = rc ?: load_pipeline(c, cfg);
	rc = rc ?: load_pmu(c, cfg);
	rc = rc ?: check_interleave(c, cfg);
	rc = rc ?: load_section(c, cfg, "telemetry", &(struct section_keys){.keys = config_telemetry_keys}, conf,
				NULL);
	for (unsigned i = 0; i < cfg->n && rc == 0; i++) {
		const char *s = cfg->sections[i].name;
		if (strcmp(s, "eal") != 0 && strcmp(s, "run") != 0 && strcmp(s, "pipeline") != 0 &&
		    strcmp(s, "mempool") != 0 && strcmp(s, "telemetry") != 0 &&
		    strcmp(s, "pmu") != 0 && !is_shortcut_section(s))
			rc = load_numbered_section(c, cfg, s);
	}
	return rc ?: check_topology(c) ?: check_mempool(c);
}

static int config_load_common(struct lrx_config *conf, struct lrx_ini *cfg,
			      const char *file, const struct lrx_override *overrides,
			      unsigned n_overrides, char *err, size_t err_len)
{
	conf->cfg = cfg;
	struct config_ctx c = {.conf = conf, .file = file,
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

/* Reads a config file into *out (NUL-terminated; lrx_text_file_read: a
 * regular file only). Returns 0 or -errno with a message in err. */
static int read_text(const char *path, const char *name, char **out, char *err,
		     size_t err_len)
{
	char why[128];
	size_t len;
	int rc = lrx_text_file_read(path, CONFIG_MAX_BYTES, out, &len, why, sizeof(why));
	if (rc < 0) {
		snprintf(err, err_len, "%s: cannot read config file: %s", name,
			 rc == -EFBIG ? "larger than 1 MiB" : why);
		return rc == -EFBIG ? -EINVAL : rc;
	}
	char *buf = *out;
	/* a NUL would end the text and hide the rest */
	const char *nul = memchr(buf, '\0', len);
	if (nul) {
		unsigned line = 1;
		for (const char *p = buf; p < nul; p++)
			line += *p == '\n';
		snprintf(err, err_len, "%s:%u: contains a NUL byte: a config is text", name, line);
		free(buf);
		*out = NULL;
		return -EINVAL;
	}
	/* "\xef\xbb\xbf[run]" would read as a line without '=' (and the
	 * message quote a garbled first line): name it */
	if (len >= 3 && !memcmp(buf, "\xef\xbb\xbf", 3)) {
		snprintf(err, err_len,
			 "%s:1: starts with a UTF-8 byte order mark (EF BB BF), which an INI config cannot have: save it without (e.g. sed -i '1s/^\\xEF\\xBB\\xBF//' FILE)",
			 name);
		free(buf);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

/* The INI text (messages name the config `name`), the overrides, the
 * checks. */
static int config_load_text(struct lrx_config *conf, const char *name, const char *text,
			    const struct lrx_override *overrides, unsigned n_overrides,
			    char *err, size_t err_len)
{
	config_defaults(conf);
	snprintf(conf->path, sizeof(conf->path), "%s", name);
	struct lrx_ini *cfg = calloc(1, sizeof(*cfg));
	int rc = cfg ? lrx_ini_parse(cfg, name, text, err, err_len) : -ENOMEM;
	if (rc == -ENOMEM)
		snprintf(err, err_len, "%s: %s", name, strerror(ENOMEM));
	rc = rc ?: config_load_common(conf, cfg, name, overrides, n_overrides, err, err_len);
	conf->cfg = cfg;
	if (rc < 0)
		lrx_config_free(conf);
	return rc;
}

int lrx_config_load(struct lrx_config *conf, const char *path,
		    const struct lrx_override *overrides, unsigned n_overrides,
		    char *err, size_t err_len)
{
	if (!path)
		path = lrx_config_default_path();
	char *text;
	config_defaults(conf);
	int rc = read_text(path, path, &text, err, err_len);
	if (rc < 0)
		return rc == -EINVAL ? rc : -ENOENT;
	rc = config_load_text(conf, path, text, overrides, n_overrides, err, err_len);
	free(text);
	return rc;
}

/* Messages name the config "(string)". */
int lrx_config_load_string(struct lrx_config *conf, const char *text,
			   const struct lrx_override *overrides,
			   unsigned n_overrides, char *err, size_t err_len)
{
	return config_load_text(conf, "(string)", text, overrides, n_overrides, err, err_len);
}

void lrx_config_free(struct lrx_config *conf)
{
	if (conf->cfg)
		lrx_ini_free(conf->cfg);
	free(conf->cfg);
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
