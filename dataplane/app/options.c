/* SPDX-License-Identifier: BSD-3-Clause
 * The command line (options.h): the option table, getopt over it, --help
 * from it, and the info options (--version, --topology, --list-stages).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_version.h>

#include "json.h"
#include "listrx_build.h"
#include "listrx_vcs.h"
#include "options.h"
#include "reps.h"
#include "topology.h"

enum option_do {
	DO_KEY,          /* sets [section] key: to the value, or to set_to */
	DO_CONFIG,       /* --config FILE */
	DO_SET,          /* --set SECTION.KEY=VALUE */
	DO_REPS,         /* --reps N */
	DO_TOPOLOGY, DO_LIST_STAGES, DO_VERSION, DO_HELP,
};

struct app_option {
	const char *name;     /* without "--" */
	const char *arg;      /* "N"; NULL: no value; "[=EVENTS]": an optional one */
	enum option_do action;
	const char *section, *key;  /* DO_KEY: the config key */
	const char *set_to;   /* DO_KEY without a value given: what it sets */
	const char *help;
};

#define KEY(name, arg, section, key, help) {name, arg, DO_KEY, section, key, NULL, help}
#define FLAG(name, section, key, set_to, help) {name, NULL, DO_KEY, section, key, set_to, help}
static const struct app_option app_options[] = {
	{"config", "FILE", DO_CONFIG, .help = "INI config (default: conf/default.ini; see docs/config.md)"},
	KEY("duration", "SECONDS", "run", "duration", "stop after this time; 0 = no limit"),
	KEY("packets", "N", "run", "packets", "stop after N packets received over all lcores"),
	KEY("measure-from", "N", "run", "measure_from",
	    "under callgrind, collect costs only after N packets, to the end of --packets"),
	KEY("burst", "N", "pipeline", "burst", "packets per poll (the NAPI budget)"),
	KEY("engine", "E", "pipeline", "engine", "packet | burst | hybrid:K | static | graph"),
	KEY("interleave", "E,E,...", "run", "interleave",
	    "poll with these engines in turn, each with its own pipeline, timed per window of "
	    "--window-polls polls (order A B B A B A A B); e.g. packet,packet,burst: an A/A and an A/B "
	    "in one run"),
	KEY("window-polls", "N", "run", "window_polls", "polls per window of --interleave"),
	KEY("window-us", "US", "run", "window_us",
	    "windows of about US microseconds instead: after two blocks of --window-polls, the "
	    "polls the slowest engine ran in that time"),
	KEY("coalesce-us", "US", "run", "coalesce_us",
	    "after a poll short of the budget, wait US microseconds before the next (a NIC's "
	    "interrupt moderation: larger vectors from a slow port)"),
	KEY("tx-clean", "MODE", "run", "tx_clean",
	    "who frees what TX queues hold once sent: driver (as it does by itself), xmit (on "
	    "transmit only), rx-poll (each RX poll first cleans its paired TX queue, under a "
	    "trylock, as virtio-net's TX NAPI in the RX poll), tx-poll (a TX poll every "
	    "--tx-clean-polls polls)"),
	KEY("tx-clean-polls", "N", "run", "tx_clean_polls", "polls between two TX polls (tx-poll)"),
	KEY("pipeline", "S,S,...", "pipeline", "stages",
	    "stage list, e.g. build-meta,gro,l3-demux ('none' = empty pipeline: packets are delivered)"),
	KEY("footprint", "KB", "pipeline", "footprint_kb",
	    "ballast code executed per packet, split over the stages"),
	KEY("stats-level", "L", "pipeline", "stats_level", "what the engines count per stage"),
	FLAG("latency", "pipeline", "latency", "1",
	     "record RX timestamp to verdict latency (needs TSC stamps: net_synth hints=...+timestamp)"),
	{"pmu", "[=EVENTS]", DO_KEY, "pmu", "events", "default",
	 "hardware counters per worker via perf_event_open; EVENTS as perf -e names them, or rHEX "
	 "raw (default: cycles,instructions,L1-icache-load-misses,branch-misses,iTLB-load-misses)"},
	FLAG("pmu-stages", "pmu", "stages", "1",
	     "also per stage, rdpmc around each stage call (engines burst, hybrid:K, graph)"),
	KEY("stats-period", "S", "run", "stats_period", "print a stats line every S seconds"),
	KEY("stats-view", "V", "run", "stats_view",
	    "what the stats line adds to the totals, as rates over the period"),
	KEY("json", "FILE", "run", "json",
	    "write the summary as JSON; '-' = stdout (the text summary then goes to stderr)"),
	KEY("capture-drops", "FILE[,N]", "run", "capture_drops",
	    "write the dropped packets (the first N) as pcapng, each with its drop reason in the "
	    "packet comment, an interface per port; '-' = stdout (shown by tshark -r FILE -T "
	    "fields -e frame.comment, or Wireshark; tcpdump shows the packets, not the comments)"),
	KEY("capture-delivered", "FILE[,N]", "run", "capture_delivered",
	    "the same for delivered packets"),
	KEY("trace", "N", "run", "trace",
	    "record the path of the first N packets, as VPP trace add: per stage the verdict and "
	    "the metadata it set; printed at exit and in the JSON"),
	{"reps", "N", DO_REPS, .help = "run N times (1.." RTE_STR(LRX_REPS_MAX) "), each a fresh "
	 "process, as perf stat -r: a line per rep, then median [min-max] of Mpps, ns/packet and "
	 "the counts; --json gets them and every rep's summary (needs --duration or --packets)"},
	{"set", "SEC.KEY=VALUE", DO_SET,
	 .help = "set any config key, e.g. --set stage.touch.bytes=64"},
	{"topology", NULL, DO_TOPOLOGY, .help = "print cores, NUMA nodes and the L1i geometry, exit"},
	{"list-stages", NULL, DO_LIST_STAGES,
	 .help = "print the stages and their config keys, exit; with --json FILE|-: as JSON "
		 "(keys, counters and their roles, placement)"},
	{"version", NULL, DO_VERSION, .help = "print version, DPDK version, build options, exit"},
	{"help", NULL, DO_HELP, .help = "this text"},
};
#undef KEY
#undef FLAG

/* The options of the stages' shortcut sections (stage.h), after the
 * table's DO_KEY options: each sets [section] key of its shortcut. */
#define MAX_STAGE_OPTIONS 32
struct stage_option {
	const struct lrx_stage *stage;
	const struct lrx_stage_alias *alias;
};

static unsigned stage_options(struct stage_option *out)
{
	unsigned n = 0;
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		const struct lrx_stage_shortcut *sh = lrx_stage_at(i)->shortcut;
		for (const struct lrx_stage_alias *a = sh ? sh->keys : NULL; a && a->key; a++)
			if (a->option && n < MAX_STAGE_OPTIONS)
				out[n++] = (struct stage_option){lrx_stage_at(i), a};
	}
	return n;
}

const char *lrx_option_name(unsigned i)
{
	struct stage_option so[MAX_STAGE_OPTIONS];
	unsigned n = stage_options(so);
	if (i < RTE_DIM(app_options))
		return app_options[i].name;
	return i - RTE_DIM(app_options) < n ? so[i - RTE_DIM(app_options)].alias->option + 2
					    : NULL;
}

/* ---- --help ---------------------------------------------------------------- */

/* "  --name ARG" then text wrapped at 79 columns, indented to 23 */
static void usage_option(FILE *out, const char *name, const char *arg, const char *text)
{
	int col = fprintf(out, "  --%s%s%s", name, arg && arg[0] != '[' ? " " : "", arg ? arg : "");
	if (col > 22) {
		fputc('\n', out);
		col = 0;
	}
	while (*text) {
		size_t len = strlen(text);
		size_t take = len;
		if (len > 56)
			for (take = 56; take > 0 && text[take] != ' '; take--)
				;
		if (take == 0)
			take = len;
		fprintf(out, "%*s%.*s\n", 23 - col, "", (int)take, text);
		col = 0;
		text += take + (text[take] == ' ');
	}
}

/* help, then what its config key takes and the key */
static void usage_key_option(FILE *out, const char *name, const char *arg, const char *help,
			     const struct lrx_value_key *k, const char *section, const char *key)
{
	char text[1024], valid[512] = "";
	if (k && arg)
		lrx_value_valid(&k->type, valid, sizeof(valid));
	snprintf(text, sizeof(text), "%s%s%s [%s] %s", help, valid[0] ? ": " : "", valid, section,
		 key);
	usage_option(out, name, arg, text);
}

void lrx_options_usage(FILE *out)
{
	struct stage_option so[MAX_STAGE_OPTIONS];
	unsigned n_stage = stage_options(so);
	fputs("Usage: listrx [EAL options] -- [listrx options]\n"
	      "\n"
	      "A DPDK poll-mode dataplane that emulates the Linux kernel RX path and\n"
	      "measures per-packet vs listified (burst) processing.\n"
	      "Without EAL options, the [eal] section of the config is used (default:\n"
	      "--no-huge --no-pci --no-shconf -m 1024 with the emulated NIC net_synth0).\n"
	      "EAL options given here replace it; every ethdev EAL probes is then a port\n"
	      "unless the config names ports ([port.N]).\n"
	      "\n"
	      "listrx options (each sets the config key in brackets):\n",
	      out);
	for (unsigned i = 0; i < RTE_DIM(app_options); i++) {
		const struct app_option *o = &app_options[i];
		if (o->action == DO_KEY)
			usage_key_option(out, o->name, o->arg, o->help,
					 lrx_config_key(o->section, o->key), o->section, o->key);
		else
			usage_option(out, o->name, o->arg, o->help);
		/* the stages' options after the last config key of the run */
		if (i + 1 < RTE_DIM(app_options) && o->action == DO_KEY &&
		    app_options[i + 1].action != DO_KEY)
			for (unsigned s = 0; s < n_stage; s++) {
				const struct lrx_stage_alias *a = so[s].alias;
				usage_key_option(out, a->option + 2, a->arg, a->help,
						 a->if_yes ? NULL
							   : lrx_value_key_find(so[s].stage->keys,
									       a->stage_key),
						 so[s].stage->shortcut->section, a->key);
			}
	}
	fputs("\n"
	      "Exit status: 0 ok (also after SIGINT/SIGTERM), 1 run-time failure,\n"
	      "2 bad usage, bad config or missing device.\n"
	      "Docs: docs/usage.md, docs/config.md.\n",
	      out);
}

/* ---- the info options ------------------------------------------------------- */

static void print_version(FILE *out)
{
	struct lrx_topology topo;
	lrx_topology_read(&topo);
	fprintf(out, "listrx %s (%s build)\n", LISTRX_VERSION, LISTRX_BUILD_FLAVOUR);
	fprintf(out, "commit: %s\n", LISTRX_COMMIT);
	fprintf(out, "source: %s\n", LISTRX_SOURCE_DIR);
	fprintf(out, "%s\n", rte_version());
	fprintf(out, "retpoline: %s\n", LISTRX_RETPOLINE ? "yes" : "no");
	fprintf(out, "default config: %s\n", lrx_config_default_path());
	char ways[24];
	if (topo.l1i_bytes)
		fprintf(out, "host L1i: %u KiB, %u-byte lines, %s (%s)\n", topo.l1i_bytes / 1024,
			topo.l1i_line, lrx_topology_l1i_ways(&topo, ways, sizeof(ways)),
			topo.l1i_source);
	else
		fprintf(out, "host L1i: unknown\n");
}

/* One key: the text listing's line, or a JSON object. */
static void list_key(FILE *out, struct lrx_json *j, const struct lrx_value_key *k)
{
	char valid[512];
	lrx_value_valid(&k->type, valid, sizeof(valid));
	if (!j) {
		fprintf(out, "    %-18s default %-10s %s (%s)\n", k->name,
			k->def && *k->def ? k->def : "\"\"", k->help, valid);
		return;
	}
	lrx_json_object_begin(j, NULL);
	lrx_json_string(j, "name", k->name);
	lrx_json_string(j, "default", k->def ? k->def : "");
	lrx_json_string(j, "help", k->help);
	lrx_json_string(j, "valid", valid);
	lrx_json_object_end(j);
}

static void list_stages(FILE *out)
{
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		const struct lrx_stage *s = lrx_stage_at(i);
		fprintf(out, "%-12s %s\n", s->name, s->summary ? s->summary : "");
		for (const struct lrx_value_key *k = s->keys; k && k->name; k++)
			list_key(out, NULL, k);
	}
	fprintf(out, "  every [stage.NAME] also takes the engine's keys:\n");
	for (const struct lrx_value_key *k = lrx_stage_conf_keys; k->name; k++)
		list_key(out, NULL, k);
}

/* --list-stages --json: what the bench (and any tool) needs to know of the
 * stages without re-implementing a rule: keys and defaults, counters and
 * their roles, and placement (stage.h) */
static const char *const provides_names[] = {"meta", "skb"}; /* LRX_PROVIDES_* bits */
static const char *const position_names[] = {
	[LRX_POSITION_ANY] = "any",
	[LRX_POSITION_FIRST] = "first",
	[LRX_POSITION_AFTER_SKB] = "after_skb",
};
static const char *const role_names[] = {
	[LRX_COUNTER_COUNT] = "count", [LRX_COUNTER_IN] = "in", [LRX_COUNTER_OUT] = "out",
	[LRX_COUNTER_MERGED] = "merged", [LRX_COUNTER_GAUGE] = "gauge",
	[LRX_COUNTER_MADE] = "made",
};

static void json_provides(struct lrx_json *j, const char *key, unsigned bits)
{
	lrx_json_array_begin(j, key);
	for (unsigned i = 0; i < RTE_DIM(provides_names); i++)
		if (bits & (1u << i))
			lrx_json_string(j, NULL, provides_names[i]);
	lrx_json_array_end(j);
}

static void json_shortcut(struct lrx_json *j, const struct lrx_stage_shortcut *sh)
{
	if (!sh) {
		lrx_json_null(j, "shortcut");
		return;
	}
	lrx_json_object_begin(j, "shortcut");
	lrx_json_string(j, "section", sh->section);
	lrx_json_string(j, "add_key", sh->add_key);
	lrx_json_string(j, "place_key", sh->place_key);
	lrx_json_array_begin(j, "places");
	for (const struct lrx_stage_place *p = sh->places; p && p->value; p++) {
		lrx_json_object_begin(j, NULL);
		lrx_json_string(j, "value", p->value);
		lrx_json_string(j, "position", position_names[p->position]);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
	lrx_json_array_begin(j, "keys");
	for (const struct lrx_stage_alias *a = sh->keys; a && a->key; a++) {
		lrx_json_object_begin(j, NULL);
		lrx_json_string(j, "key", a->key);
		lrx_json_string(j, "stage_key", a->stage_key);
		if (a->option)
			lrx_json_string(j, "option", a->option);
		else
			lrx_json_null(j, "option");
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
	lrx_json_object_end(j);
}

static void json_stage(struct lrx_json *j, const struct lrx_stage *s)
{
	lrx_json_object_begin(j, NULL);
	lrx_json_string(j, "name", s->name);
	lrx_json_string(j, "summary", s->summary ? s->summary : "");
	lrx_json_array_begin(j, "keys");
	for (const struct lrx_value_key *k = s->keys; k && k->name; k++)
		list_key(NULL, j, k);
	lrx_json_array_end(j);
	lrx_json_array_begin(j, "counters");
	for (const struct lrx_stage_counter *c = s->counters; c && c->name; c++) {
		lrx_json_object_begin(j, NULL);
		lrx_json_string(j, "name", c->name);
		lrx_json_string(j, "role", role_names[c->role]);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
	json_provides(j, "provides", s->provides);
	json_provides(j, "needs", s->needs);
	json_shortcut(j, s->shortcut);
	lrx_json_object_end(j);
}

static void list_stages_json(FILE *out)
{
	struct lrx_json j;
	lrx_json_init(&j, out, true);
	lrx_json_object_begin(&j, NULL);
	lrx_json_object_begin(&j, "positions");
	lrx_json_string(&j, "any", "anywhere in the pipeline");
	lrx_json_string(&j, "first", "before every other stage, on the raw frame");
	lrx_json_string(&j, "after_skb",
			"right after the last stage that provides meta or skb; the pipeline "
			"needs a stage that provides meta");
	lrx_json_object_end(&j);
	lrx_json_array_begin(&j, "engine_keys");
	for (const struct lrx_value_key *k = lrx_stage_conf_keys; k->name; k++)
		list_key(NULL, &j, k);
	lrx_json_array_end(&j);
	lrx_json_array_begin(&j, "stages");
	for (unsigned i = 0; lrx_stage_at(i); i++)
		json_stage(&j, lrx_stage_at(i));
	lrx_json_array_end(&j);
	lrx_json_object_end(&j);
	fputc('\n', out);
}

/* --list-stages with --json FILE (- = stdout): the stages as JSON there */
static int list_stages_to(const struct lrx_options *o)
{
	const char *path = NULL;
	for (unsigned i = 0; i < o->n_overrides; i++)
		if (strcmp(o->overrides[i].section, "run") == 0 &&
		    strcmp(o->overrides[i].key, "json") == 0)
			path = o->overrides[i].value;
	if (!path) {
		list_stages(stdout);
		return 0;
	}
	FILE *out = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
	if (!out) {
		fprintf(stderr, "listrx: --json %s: cannot write the stage list there: %s\n", path,
			strerror(errno));
		return 2;
	}
	list_stages_json(out);
	if (out != stdout && fclose(out) != 0) {
		fprintf(stderr, "listrx: --json %s: %s\n", path, strerror(errno));
		return 1;
	}
	return 0;
}

int lrx_options_info(const struct lrx_options *o)
{
	struct lrx_topology topo;
	if (o->list_stages && !o->help && !o->version && !o->topology)
		return list_stages_to(o);
	if (o->help)
		lrx_options_usage(stdout);
	else if (o->version)
		print_version(stdout);
	else if (o->topology) {
		lrx_topology_read(&topo);
		lrx_topology_print(&topo, stdout);
	}
	return o->help || o->version || o->topology ? 0 : -1;
}

/* ---- parsing ------------------------------------------------------------------ */

static int add_override(struct lrx_options *o, const char *section, const char *key,
			const char *value, const char *origin)
{
	if (o->n_overrides == LRX_MAX_OVERRIDES) {
		fprintf(stderr, "listrx: too many options (at most %u overrides)\n",
			LRX_MAX_OVERRIDES);
		return -EINVAL;
	}
	if (strlen(value) >= sizeof(o->overrides[0].value) ||
	    strlen(section) >= sizeof(o->overrides[0].section) ||
	    strlen(key) >= sizeof(o->overrides[0].key)) {
		fprintf(stderr, "listrx: %s %s.%s=%.40s...: value too long (at most %zu characters; names at most %zu)\n",
			origin, section, key, value, sizeof(o->overrides[0].value) - 1,
			sizeof(o->overrides[0].key) - 1);
		return -EINVAL;
	}
	struct lrx_override *ov = &o->overrides[o->n_overrides++];
	snprintf(ov->section, sizeof(ov->section), "%s", section);
	snprintf(ov->key, sizeof(ov->key), "%s", key);
	snprintf(ov->value, sizeof(ov->value), "%s", value);
	snprintf(ov->origin, sizeof(ov->origin), "%s", origin);
	return 0;
}

const char *lrx_options_origin(const struct lrx_options *o, const char *section,
			       const char *key)
{
	const char *origin = NULL;
	for (unsigned i = 0; i < o->n_overrides; i++)
		if (strcmp(o->overrides[i].section, section) == 0 &&
		    strcmp(o->overrides[i].key, key) == 0)
			origin = o->overrides[i].origin;
	return origin;
}

/* --set SECTION.KEY=VALUE; the key is after the last dot before '=' so
 * that sections with dots work: --set port.0.device=net_null0 */
static int parse_set(struct lrx_options *o, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *dot = NULL;
	for (const char *p = arg; eq && p < eq; p++)
		if (*p == '.')
			dot = p;
	if (!eq || !dot || dot == arg || dot + 1 == eq) {
		fprintf(stderr, "listrx: --set %s: expected SECTION.KEY=VALUE, e.g. --set pipeline.burst=32\n",
			arg);
		return -EINVAL;
	}
	char section[LRX_NAME_LEN], key[LRX_NAME_LEN];
	snprintf(section, sizeof(section), "%.*s", (int)(dot - arg), arg);
	snprintf(key, sizeof(key), "%.*s", (int)(eq - dot - 1), dot + 1);
	return add_override(o, section, key, eq + 1, "--set");
}

/* --reps N (getopt's optarg, optind): the count, and which argv tokens
 * hold it, so that each rep runs the same command without them */
static int parse_reps(struct lrx_options *o, char **argv)
{
	uint64_t n;
	if (lrx_value_uint(optarg, 1, LRX_REPS_MAX, &n) < 0) {
		fprintf(stderr, "listrx: --reps %s: must be an integer in 1..%u\n", optarg,
			LRX_REPS_MAX);
		return -EINVAL;
	}
	if (o->reps) {
		fprintf(stderr, "listrx: --reps %s: --reps given twice (first --reps %u): once is enough\n",
			optarg, o->reps);
		return -EINVAL;
	}
	o->reps = (unsigned)n;
	/* "--reps N" is two tokens, "--reps=N" one */
	o->reps_tokens[o->n_reps_tokens++] = optind - 1;
	if (argv[optind - 1] == optarg)
		o->reps_tokens[o->n_reps_tokens++] = optind - 2;
	return 0;
}

/* One option found by getopt: index i of the table, or a stage's option */
static int take_option(struct lrx_options *o, char **argv, unsigned i,
		       const struct stage_option *so)
{
	if (i >= RTE_DIM(app_options)) {
		const struct lrx_stage_alias *a = so[i - RTE_DIM(app_options)].alias;
		return add_override(o, so[i - RTE_DIM(app_options)].stage->shortcut->section,
				    a->key, optarg, a->option);
	}
	const struct app_option *opt = &app_options[i];
	char origin[LRX_NAME_LEN];
	snprintf(origin, sizeof(origin), "--%s", opt->name);
	switch (opt->action) {
	case DO_KEY:
		return add_override(o, opt->section, opt->key, optarg ? optarg : opt->set_to, origin);
	case DO_CONFIG: o->config = optarg; return 0;
	case DO_SET: return parse_set(o, optarg);
	case DO_REPS: return parse_reps(o, argv);
	case DO_TOPOLOGY: o->topology = true; return 0;
	case DO_LIST_STAGES: o->list_stages = true; return 0;
	case DO_VERSION: o->version = true; return 0;
	case DO_HELP: o->help = true; return 0;
	}
	return -EINVAL;
}

bool lrx_options_before_split(char **argv, int split)
{
	for (int i = 1; i < split; i++) {
		if (strncmp(argv[i], "--", 2) != 0)
			continue;
		const size_t len = strcspn(argv[i] + 2, "=");
		const char *name = NULL;
		for (unsigned k = 0; !name && lrx_option_name(k); k++)
			if (strlen(lrx_option_name(k)) == len &&
			    !strncmp(lrx_option_name(k), argv[i] + 2, len))
				name = lrx_option_name(k);
		if (name && strcmp(name, "help") && strcmp(name, "trace")) {
			fprintf(stderr,
				"listrx: --%s is a listrx option, given before '--' (among the EAL options): listrx options go after it: listrx [EAL options] -- [listrx options]\n",
				name);
			return true;
		}
	}
	return false;
}

int lrx_options_parse(int argc, char **argv, struct lrx_options *o)
{
	struct stage_option so[MAX_STAGE_OPTIONS];
	unsigned n_stage = stage_options(so);
	struct option longopts[RTE_DIM(app_options) + MAX_STAGE_OPTIONS + 1];
	unsigned n = 0;
	for (; n < RTE_DIM(app_options); n++) {
		const char *arg = app_options[n].arg;
		longopts[n] = (struct option){app_options[n].name,
					      !arg ? no_argument
					      : arg[0] == '[' ? optional_argument : required_argument,
					      NULL, 256 + (int)n};
	}
	for (unsigned s = 0; s < n_stage; s++, n++)
		longopts[n] = (struct option){so[s].alias->option + 2, required_argument, NULL,
					      256 + (int)n};
	longopts[n] = (struct option){NULL, 0, NULL, 0};
	optind = 1;
	opterr = 0;
	int opt;
	while ((opt = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		const unsigned i = (unsigned)(opt - 256);
		const bool is_set = opt >= 256 && i < RTE_DIM(app_options) &&
				    app_options[i].action == DO_SET;
		/* "--burst --packets 1000": getopt took "--packets" as the
		 * value; say so instead of "unexpected argument '1000'" */
		if (optarg && strncmp(optarg, "--", 2) == 0 && !is_set) {
			fprintf(stderr, "listrx: option %s needs a value, got the option '%s' (see --help)\n",
				argv[optind - 2], optarg);
			return -EINVAL;
		}
		if (opt == ':') {
			fprintf(stderr, "listrx: option %s needs a value (see --help)\n", argv[optind - 1]);
			return -EINVAL;
		}
		if (opt == '?') {
			fprintf(stderr,
				"listrx: unknown option '%s' (see --help; EAL options go before '--': listrx [EAL options] -- [listrx options])\n",
				argv[optind - 1]);
			return -EINVAL;
		}
		int rc = take_option(o, argv, i, so);
		if (rc < 0)
			return rc;
	}
	if (optind < argc) {
		fprintf(stderr, "listrx: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}
