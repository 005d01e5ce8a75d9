// SPDX-License-Identifier: BSD-3-Clause
// Config parser: good inputs give the documented values, bad inputs are
// rejected with a message naming file, line, section, key, value and what
// would be valid.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "stage_conf.h"

extern "C" {
#include "config.h"
#include "stats.h"
}

namespace {

struct Loaded {
	lrx_config conf;
	char err[2048] = "";
	int rc;
	explicit Loaded(const char *text, const lrx_override *ov = nullptr, unsigned n = 0)
	{
		rc = lrx_config_load_string(&conf, text, ov, n, err, sizeof(err));
	}
	~Loaded() { lrx_config_free(&conf); }
};

lrx_override override_of(const char *section, const char *key, const char *value,
			 const char *origin)
{
	lrx_override o{};
	std::snprintf(o.section, sizeof(o.section), "%s", section);
	std::snprintf(o.key, sizeof(o.key), "%s", key);
	std::snprintf(o.value, sizeof(o.value), "%s", value);
	std::snprintf(o.origin, sizeof(o.origin), "%s", origin);
	return o;
}

// A config refused as a whole: each text fails with -EINVAL and the
// message after the file name is exactly `message`.
struct Refusal {
	const char *text;
	const char *message; // after the file name
};

template <size_t N> void check_refusals(const Refusal (&cases)[N])
{
	for (const Refusal &c : cases) {
		Loaded l(c.text);
		INFO("config:\n" << c.text);
		CHECK(l.rc == -EINVAL);
		// the file is a temporary; the message starts with its name
		std::string err = l.err;
		auto colon = err.find(':');
		REQUIRE(colon != std::string::npos);
		CHECK(err.substr(colon) == c.message);
	}
}

} // namespace

TEST_CASE("empty config gives the defaults", "[config]")
{
	Loaded l("");
	REQUIRE(l.rc == 0);
	CHECK(l.conf.pipeline.engine == LRX_ENGINE_BURST);
	CHECK(l.conf.pipeline.burst == 64);
	CHECK(l.conf.pipeline.n_stages == 0);
	CHECK(l.conf.pipeline.stats_level == LRX_STATS_COUNTERS);
	CHECK(l.conf.n_ports == 0);
	CHECK(l.conf.n_lcores == 0);
	CHECK(std::string(l.conf.eal_args).find("--no-huge") != std::string::npos);
	CHECK(l.conf.duration_s == 0);
	CHECK(l.conf.packets == 0);
	CHECK(l.conf.stats_period_s == 1);
	CHECK_FALSE(l.conf.latency);
}

TEST_CASE("a config given as text is named (string) and leaves no file", "[config]")
{
	Loaded bad("[pipeline]\nburst = many\n");
	REQUIRE(bad.rc == -EINVAL);
	INFO(bad.err);
	CHECK(std::string(bad.err).rfind("(string)", 0) == 0);
	CHECK(std::string(bad.err).find("/tmp/") == std::string::npos);
	CHECK(std::string(bad.conf.path) == "(string)");
	Loaded good("[pipeline]\nburst = 32\n");
	REQUIRE(good.rc == 0);
	CHECK(good.conf.pipeline.burst == 32);
	CHECK(std::string(good.conf.path) == "(string)");
}

TEST_CASE("shipped default.ini loads", "[config]")
{
	lrx_config conf;
	char err[2048] = "";
	const char *root = std::getenv("LISTRX_SOURCE_ROOT");
	std::string path = root ? std::string(root) + "/conf/default.ini" : lrx_config_default_path();
	REQUIRE(lrx_config_load(&conf, path.c_str(), nullptr, 0, err, sizeof(err)) == 0);
	CHECK(std::string(conf.eal_args).find("net_synth0") != std::string::npos);
	CHECK(conf.pipeline.burst == 64);
	// a config that leaves a key out gets what default.ini says
	Loaded empty("");
	CHECK(conf.stats_period_s == empty.conf.stats_period_s);
	lrx_config_free(&conf);
}

TEST_CASE("a full config is read", "[config]")
{
	Loaded l("[eal]\nargs = --no-huge -l 0-1\n"
		 "[run]\nduration = 2.5\npackets = 1000\nstats_period = 0.5\njson = out.json\n"
		 "[pipeline]\nengine = hybrid:1\nburst = 32\nstages = null,touch\nstats_level = cycles\n"
		 "[stage.touch]\nbytes = 64\nfootprint_kb = 8\n"
		 "[port.0]\ndevice = net_null0\nrx_queues = 2\ntx_queues = 2\nrx_desc = 512\n"
		 "offloads = rss,rx-cksum\nforward = 1\npromiscuous = no\n"
		 "[port.1]\ndevice = net_null1\n"
		 "[lcore.1]\npoll = 0:0,1:0\n[lcore.2]\npoll = 0:1\n");
	REQUIRE(l.rc == 0);
	CHECK(std::string(l.conf.eal_args) == "--no-huge -l 0-1");
	CHECK(l.conf.duration_s == 2.5);
	CHECK(l.conf.packets == 1000);
	CHECK(l.conf.stats_period_s == 0.5);
	CHECK(std::string(l.conf.json_path) == "out.json");
	CHECK(l.conf.pipeline.engine == LRX_ENGINE_HYBRID);
	CHECK(l.conf.pipeline.hybrid_k == 1);
	CHECK(l.conf.pipeline.burst == 32);
	CHECK(l.conf.pipeline.stats_level == LRX_STATS_CYCLES);
	REQUIRE(l.conf.pipeline.n_stages == 2);
	CHECK(std::string(l.conf.pipeline.stages[0].stage->name) == "null");
	const lrx_stage_conf &touch = l.conf.pipeline.stages[1];
	CHECK(touch.footprint_kb == 8);
	CHECK(lrx_test::conf_holds(touch.stage, touch.conf, "bytes", "64"));
	REQUIRE(l.conf.n_ports == 2);
	CHECK(l.conf.ports[0].rx_queues == 2);
	CHECK(l.conf.ports[0].rx_desc == 512);
	CHECK(l.conf.ports[0].offloads == (LRX_OFFLOAD_RSS | LRX_OFFLOAD_RX_CKSUM));
	CHECK(l.conf.ports[0].forward_to == 1);
	CHECK_FALSE(l.conf.ports[0].promiscuous);
	CHECK(l.conf.ports[1].forward_to == -1);
	REQUIRE(l.conf.n_lcores == 2);
	CHECK(l.conf.lcores[0].n_polls == 2);
	CHECK(l.conf.lcores[1].polls[0].queue == 1);
}

TEST_CASE("command-line overrides win over the file", "[config]")
{
	lrx_override ov[] = {override_of("pipeline", "burst", "8", "--burst"),
			     override_of("run", "packets", "77", "--packets")};
	Loaded l("[pipeline]\nburst = 32\n", ov, 2);
	REQUIRE(l.rc == 0);
	CHECK(l.conf.pipeline.burst == 8);
	CHECK(l.conf.packets == 77);
}

TEST_CASE("[pipeline] latency and --latency switch latency recording on", "[config]")
{
	Loaded on("[pipeline]\nlatency = yes\n");
	REQUIRE(on.rc == 0);
	CHECK(on.conf.latency);
	lrx_override ov[] = {override_of("pipeline", "latency", "1", "--latency")};
	Loaded opt("[pipeline]\nlatency = off\n", ov, 1);
	REQUIRE(opt.rc == 0);
	CHECK(opt.conf.latency);
	Loaded off("[pipeline]\nlatency = 0\n");
	REQUIRE(off.rc == 0);
	CHECK_FALSE(off.conf.latency);
}

TEST_CASE("--footprint splits over the stages", "[config]")
{
	lrx_override ov[] = {override_of("pipeline", "footprint_kb", "10", "--footprint")};
	Loaded l("[pipeline]\nstages = null,null,null\n", ov, 1);
	REQUIRE(l.rc == 0);
	CHECK(l.conf.pipeline.stages[0].footprint_kb == 4);
	CHECK(l.conf.pipeline.stages[1].footprint_kb == 3);
	CHECK(l.conf.pipeline.stages[2].footprint_kb == 3);
}

TEST_CASE("bad values are rejected with file, line, key, value and what is valid",
	  "[config]")
{
	const Refusal cases[] = {
		{"[pipeline]\nburst = 0\n",
		 ":2: [pipeline] burst = 0: must be an integer in 1..512"},
		{"[pipeline]\n\nburst = 513\n",
		 ":3: [pipeline] burst = 513: must be an integer in 1..512"},
		{"[pipeline]\nburst = 12x\n",
		 ":2: [pipeline] burst = 12x: must be an integer in 1..512"},
		{"[pipeline]\nengine = fast\n",
		 ":2: [pipeline] engine = fast: must be one of packet, burst, hybrid:K (K = stages run as bursts, 1..16), static, graph"},
		{"[pipeline]\nstats_level = all\n",
		 ":2: [pipeline] stats_level = all: must be one of off, counters, cycles"},
		{"[run]\nduration = -1\n",
		 ":2: [run] duration = -1: must be a number in 0..1e+09"},
		{"[run]\nfoo = 1\n",
		 ":2: [run] foo = 1: unknown key; valid keys in [run]: duration, packets, measure_from, stats_period, stats_view, json, capture_drops, capture_delivered, trace, interleave, window_polls, window_us, windows_max, coalesce_us, tx_clean, tx_clean_polls"},
		{"[run]\nstats_view = threads\n",
		 ":2: [run] stats_view = threads: must be one of stages, ports, lcores"},
		{"[run]\ntx_clean = napi\n",
		 ":2: [run] tx_clean = napi: must be one of driver, xmit, rx-poll, tx-poll"},
		{"[run]\ntx_clean_polls = 0\n",
		 ":2: [run] tx_clean_polls = 0: must be an integer in 1..1048576"},
		{"[ports]\ndevice = x\n",
		 ":1: [ports]: unknown section; valid sections: [eal], [run], [pipeline], [mempool], [telemetry], [pmu], [xdp], [port.N], [lcore.N], [stage.NAME]"},
		{"[port.0]\nrx_queues = 2\n",
		 ":1: [port.0]: key 'device' missing or empty: name the ethdev (e.g. net_synth0, net_null0) or a PCI address (0000:3b:00.0)"},
		{"[port.0]\ndevice = net_null0\noffloads = rss,tso\n",
		 ":3: [port.0] offloads = rss,tso: must be a list of rss, rx-cksum, vlan-strip, timestamp, lro, scatter, none"},
		{"[port.0]\ndevice = net_null0\nforward = 3\n",
		 ":3: [port.0] forward = 3: no [port.3] section"},
		{"[port.0]\ndevice = net_null0\n[lcore.1]\npoll = 0:1\n",
		 ":4: [lcore.1] poll = 0:1: port 0 has 1 RX queues (0..0)"},
		{"[port.0]\ndevice = net_null0\n[lcore.1]\npoll = 0:0\n[lcore.2]\npoll = 0:0\n",
		 ":6: [lcore.2] poll = 0:0: queue 0:0 is already polled by lcore 1"},
		{"[port.0]\ndevice = net_null0\n[lcore.1]\npoll = zero\n",
		 ":4: [lcore.1] poll = zero: must be a list of PORT:QUEUE with PORT < 16, QUEUE < 16 (0:0,1:0)"},
		{"[mempool]\npriv_size = 7\n",
		 ":2: [mempool] priv_size = 7: must be auto, or bytes in 0..4096, a multiple of 8"},
		{"[pipeline]\nprefetch = 17\n",
		 ":2: [pipeline] prefetch = 17: must be an integer in 0..16"},
		{"[telemetry]\nenabled = maybe\n",
		 ":2: [telemetry] enabled = maybe: must be yes/no, true/false, on/off or 1/0"},
		{"[pipeline]\nlatency = 2\n",
		 ":2: [pipeline] latency = 2: must be yes/no, true/false, on/off or 1/0"},
		{"[pipeline]\nstages = null\n[stage.null]\ncolour = red\n",
		 ":4: [stage.null] colour = red: unknown key; valid keys in [stage.null]: footprint_kb"},
	};
	check_refusals(cases);
}

TEST_CASE("duplicates, non-decimal integers, empty list entries and mempool sizes are refused",
	  "[config]")
{
	const Refusal cases[] = {
		{"[pipeline]\nburst = 32\nengine = burst\nburst = 64\n",
		 ":4: burst = 64: key set twice in this section (first at (string):2)"},
		{"[run]\nduration = 1\n[pipeline]\n[run]\n",
		 ":4: [run]: section defined twice (first at (string):1)"},
		{"[pipeline]\nburst = 010\n",
		 ":2: [pipeline] burst = 010: must be an integer in 1..512"},
		{"[pipeline]\nburst = 0x20\n",
		 ":2: [pipeline] burst = 0x20: must be an integer in 1..512"},
		{"[pipeline]\nburst = +5\n",
		 ":2: [pipeline] burst = +5: must be an integer in 1..512"},
		{"[pipeline]\nstages = build-meta,,gro\n",
		 ":2: [pipeline] stages = build-meta,,gro: empty entry in the stage list: name stages separated by single commas, or 'none' alone"},
		{"[pipeline]\nstages = ,\n",
		 ":2: [pipeline] stages = ,: empty entry in the stage list: name stages separated by single commas, or 'none' alone"},
		{"[pipeline]\nstages = none,gro\n",
		 ":2: [pipeline] stages = none,gro: 'none' means an empty pipeline and cannot be combined with stages"},
		{"[pipeline]\nengine = hybrid:0\n",
		 ":2: [pipeline] engine = hybrid:0: must be one of packet, burst, hybrid:K (K = stages run as bursts, 1..16), static, graph"},
		{"[mempool]\nmbufs = 300\n",
		 ":2: [mempool] mbufs = 300: a pool with a per-lcore cache of 256 needs at least 384 mbufs (1.5 x cache): raise mbufs to 384 or more, or lower [mempool] cache to 200 or less"},
		{"[mempool]\nmbufs = 8\ncache = 0\n",
		 ":2: [mempool] mbufs = 8: the pool cannot fill one burst per RX queue (1 queue(s) x burst 64 = 64 mbufs): raise mbufs to 64 or more, or lower [pipeline] burst"},
	};
	check_refusals(cases);
	// empty and 'none' alone are the empty pipeline; a value from the
	// command line replaces the file's, it does not duplicate it
	for (const char *text : {"[pipeline]\nstages =\n", "[pipeline]\nstages = none\n"}) {
		Loaded l(text);
		INFO(text << l.err);
		CHECK(l.rc == 0);
		CHECK(l.conf.pipeline.n_stages == 0);
	}
	lrx_override ov = override_of("pipeline", "burst", "16", "--burst");
	Loaded l("[pipeline]\nburst = 32\n", &ov, 1);
	INFO(l.err);
	REQUIRE(l.rc == 0);
	CHECK(l.conf.pipeline.burst == 16);
	lrx_override set = override_of("foo", "bar", "1", "--set");
	Loaded bad("", &set, 1);
	CHECK(std::string(bad.err).rfind("--set foo.bar=1: [foo]: unknown section", 0) == 0);
}

TEST_CASE("keys of a stage not in the pipeline: --set refused, a file's section kept",
	  "[config]")
{
	lrx_override set = override_of("stage.touch", "bytes", "64", "--set");
	Loaded refused("[pipeline]\nstages = null\n", &set, 1);
	CHECK(refused.rc == -EINVAL);
	CHECK(std::string(refused.err) ==
	      "--set stage.touch.bytes=64: [stage.touch] bytes: touch is not in the pipeline "
	      "(null), so the key would do nothing: add touch to the pipeline (--pipeline) or "
	      "leave the key out");
	// in the pipeline: taken
	Loaded taken("[pipeline]\nstages = touch\n", &set, 1);
	INFO(taken.err);
	CHECK(taken.rc == 0);
	// a file's section: kept for the warning, with where it is
	Loaded kept("[pipeline]\nstages = null\n[stage.touch]\nbytes = 64\n");
	INFO(kept.err);
	REQUIRE(kept.rc == 0);
	REQUIRE(kept.conf.n_absent == 1);
	CHECK(std::string(kept.conf.absent[0].stage->name) == "touch");
	CHECK(std::string(kept.conf.absent_where[0]).find(":3") != std::string::npos);
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	REQUIRE(f);
	lrx_config_warn_absent_stages(&kept.conf, f);
	std::fclose(f);
	std::string text(buf, len);
	std::free(buf);
	CHECK(text.find("listrx: warning: ") == 0);
	CHECK(text.find(":3: [stage.touch]: touch is not in the pipeline (null): its keys are "
			"checked, not used\n") != std::string::npos);
	CHECK(std::count(text.begin(), text.end(), '\n') == 1);
}

TEST_CASE("unknown stages name the valid ones", "[config]")
{
	Loaded l("[pipeline]\nstages = null,frobnicate\n");
	CHECK(l.rc == -EINVAL);
	std::string err = l.err;
	CHECK(err.find(":2: [pipeline] stages = null,frobnicate: unknown stage 'frobnicate'; valid stages: ") !=
	      std::string::npos);
	CHECK(err.find("null") != std::string::npos);
	CHECK(err.find("touch") != std::string::npos);
}

TEST_CASE("a bad command-line value names the option", "[config]")
{
	lrx_override ov[] = {override_of("pipeline", "burst", "0", "--burst")};
	Loaded l("", ov, 1);
	CHECK(l.rc == -EINVAL);
	CHECK(std::string(l.err) == "--burst 0: [pipeline] burst: must be an integer in 1..512");
}

TEST_CASE("hybrid needs enough stages", "[config]")
{
	Loaded l("[pipeline]\nengine = hybrid:3\nstages = null,null\n");
	CHECK(l.rc == -EINVAL);
	std::string err = l.err;
	CHECK(err.substr(err.find(':')) ==
	      ":2: [pipeline] engine = hybrid:3: hybrid:3 needs at least 3 stages; the pipeline has 2");
}

TEST_CASE("a file that is not INI is rejected with the line", "[config]")
{
	struct Case {
		std::string text, message;
	} cases[] = {
		{"; comment\nthis is not ini\n",
		 ":2: this is not ini: expected [section] or key = value (; or # starts a comment)"},
		{"burst = 1\n", ":1: burst = 1: key = value before any [section]"},
		{"[pipeline\n", ":1: [pipeline: a section header must be [name]"},
		{"[run]\n= 5\n", ":2: = 5: a key name is missing before '='"},
	};
	for (const Case &c : cases) {
		Loaded l(c.text.c_str());
		INFO(c.text);
		CHECK(l.rc == -EINVAL);
		std::string err = l.err;
		CHECK(err.substr(err.find(':')) == c.message);
	}
}

TEST_CASE("a long key or line is read whole: no name or line limit", "[config]")
{
	// a key of 70 characters is named as unknown, at its line
	Loaded key(("[run]\n" + std::string(70, 'k') + " = 1\n").c_str());
	CHECK(key.rc == -EINVAL);
	CHECK(std::string(key.err).find(":2: [run] " + std::string(70, 'k') +
					" = 1: unknown key") != std::string::npos);
	// blanks in front of a key are blanks, however many
	Loaded line(("[run]\n" + std::string(320, ' ') + "packets = 10\n").c_str());
	INFO(line.err);
	REQUIRE(line.rc == 0);
	CHECK(line.conf.packets == 10);
}

TEST_CASE("one comment rule: ; or # to the end of the line, also after a value",
	  "[config]")
{
	// a comment longer than rte_cfgfile's line buffer, on a line of its
	// own or after a value, and blanks at the end of a line
	const std::string long_comment(400, 'c');
	const std::string text = "# " + long_comment + "\n[run] ; the run\npackets = 10 # ten\n"
				 "duration = 2 ; " + long_comment + "\n; " + long_comment + "\n"
				 "stats_period = 0   \t\n";
	Loaded l(text.c_str());
	INFO(l.err);
	REQUIRE(l.rc == 0);
	CHECK(l.conf.packets == 10);
	CHECK(l.conf.duration_s == 2);
	CHECK(l.conf.stats_period_s == 0);
	// a key inside a comment is not read, nor named by an error
	Loaded bad("[pipeline]\n# burst = 9999\nburst = 0\n");
	CHECK(bad.rc == -EINVAL);
	CHECK(std::string(bad.err).find(":3: [pipeline] burst = 0:") != std::string::npos);
}

TEST_CASE("a missing file is reported with its name", "[config]")
{
	lrx_config conf;
	char err[512];
	CHECK(lrx_config_load(&conf, "/nonexistent/listrx.ini", nullptr, 0, err, sizeof(err)) ==
	      -ENOENT);
	CHECK(std::string(err) ==
	      "/nonexistent/listrx.ini: cannot read config file: No such file or directory");
}

TEST_CASE("the effective config lists overrides", "[config]")
{
	lrx_override ov[] = {override_of("pipeline", "burst", "16", "--burst")};
	Loaded l("[run]\npackets = 5\n", ov, 1);
	REQUIRE(l.rc == 0);
	std::string all;
	lrx_cfgfile_foreach(
		l.conf.cfg,
		[](void *arg, const char *s, const char *k, const char *v) {
			*static_cast<std::string *>(arg) += std::string(s) + "." + k + "=" + v + ";";
		},
		&all);
	CHECK(all.find("run.packets=5;") != std::string::npos);
	CHECK(all.find("pipeline.burst=16;") != std::string::npos);
}

namespace {

std::string stage_list(const lrx_pipeline_conf &pc)
{
	std::string s;
	for (unsigned i = 0; i < pc.n_stages; i++)
		s += (i ? "," : "") + std::string(pc.stages[i].stage->name);
	return s;
}

// whether stage i's config holds value for key
bool stage_holds(const lrx_pipeline_conf &pc, unsigned i, const char *key, const char *value)
{
	return lrx_test::conf_holds(pc.stages[i].stage, pc.stages[i].conf, key, value);
}

} // namespace

TEST_CASE("[xdp] places the xdp stage where its mode says", "[config][xdp]")
{
	SECTION("native (the default): first, before build-meta")
	{
		Loaded l("[pipeline]\nstages = build-meta,l3-demux\n[xdp]\nprog = drop\n");
		REQUIRE(l.rc == 0);
		CHECK(stage_list(l.conf.pipeline) == "xdp,build-meta,l3-demux");
		CHECK(stage_holds(l.conf.pipeline, 0, "prog", "drop"));
	}
	SECTION("generic: after build-meta and gro, keys mapped to the stage's")
	{
		Loaded l("[pipeline]\nstages = build-meta,gro,l3-demux\n"
			 "[stage.xdp]\nprog = pass\nwindow = 256\n"
			 "[xdp]\nprog = x.o\nmode = generic\nsection = xdp/f\njit = no\n");
		REQUIRE(l.rc == 0);
		CHECK(stage_list(l.conf.pipeline) == "build-meta,gro,xdp,l3-demux");
		CHECK(stage_holds(l.conf.pipeline, 2, "prog", "x.o")); // [xdp] wins
		CHECK(stage_holds(l.conf.pipeline, 2, "window", "256"));
		CHECK(stage_holds(l.conf.pipeline, 2, "section", "xdp/f"));
		CHECK(stage_holds(l.conf.pipeline, 2, "mode", "generic"));
		CHECK(stage_holds(l.conf.pipeline, 2, "exec", "interp"));
	}
	SECTION("the command-line options, on an empty pipeline")
	{
		lrx_override ov[] = {override_of("xdp", "prog", "tx", "--xdp-prog"),
				     override_of("xdp", "jit", "1", "--xdp-jit")};
		Loaded l("", ov, 2);
		REQUIRE(l.rc == 0);
		CHECK(stage_list(l.conf.pipeline) == "xdp");
		CHECK(stage_holds(l.conf.pipeline, 0, "exec", "jit"));
	}
	SECTION("a pipeline that names xdp keeps it where it is, if the mode agrees")
	{
		Loaded l("[pipeline]\nstages = build-meta,xdp\n[xdp]\nprog = drop\nmode = generic\n");
		REQUIRE(l.rc == 0);
		CHECK(stage_list(l.conf.pipeline) == "build-meta,xdp");
	}
	SECTION("no prog, no xdp in the pipeline: nothing added")
	{
		Loaded l("[pipeline]\nstages = build-meta\n[xdp]\nmode = generic\n");
		REQUIRE(l.rc == 0);
		CHECK(stage_list(l.conf.pipeline) == "build-meta");
	}
}

TEST_CASE("[xdp] mistakes are named", "[config][xdp]")
{
	struct Case {
		const char *text, *expect;
	} cases[] = {
		{"[xdp]\nprog = drop\nmode = driver\n",
		 "[xdp] mode = driver: must be one of native, generic"},
		{"[xdp]\nprog = drop\nmode = generic\n",
		 "the pipeline (none) has no build-meta; add it, or use mode native"},
		{"[pipeline]\nstages = build-meta,xdp\n[xdp]\nprog = drop\n",
		 "has xdp at position 2: mode native needs it first"},
		{"[pipeline]\nstages = xdp,build-meta\n[xdp]\nmode = generic\n",
		 "has xdp at position 1: mode generic needs it after build-meta"},
		{"[xdp]\nprog = drop\njit = maybe\n",
		 "[xdp] jit = maybe: must be yes/no"},
		{"[xdp]\nprogram = drop\n", "program"},
	};
	for (const Case &c : cases) {
		Loaded l(c.text);
		INFO(c.text << "-> " << l.err);
		CHECK(l.rc == -EINVAL);
		CHECK(std::string(l.err).find(c.expect) != std::string::npos);
	}
}

TEST_CASE("a stage that reads the metadata needs its provider before it", "[config]")
{
	// l3-demux needs LRX_PROVIDES_META (stage.h), build-meta provides it
	Loaded bad("[pipeline]\nstages = l3-demux,build-meta\n");
	INFO(bad.err);
	CHECK(bad.rc == -EINVAL);
	CHECK(std::string(bad.err).find("l3-demux (position 1) reads what build-meta provides: put build-meta before it") !=
	      std::string::npos);
	Loaded good("[pipeline]\nstages = build-meta,gro,l3-demux\n");
	CHECK(good.rc == 0);
}

TEST_CASE("every stage's counters fit the report", "[config][report]")
{
	// the report keeps LRX_REPORT_MAX_COUNTERS of a stage's counters and
	// reads the accounting's (merged) among them
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		const lrx_stage *s = lrx_stage_at(i);
		unsigned n = 0;
		for (const lrx_stage_counter *c = s->counters; c && c->name; c++)
			n++;
		INFO(s->name << ": " << n << " counters");
		CHECK(n <= LRX_REPORT_MAX_COUNTERS);
	}
}

TEST_CASE("a list value is as long as its documented maximum: 64 udp_sockets, "
	  "256 map_init entries, 64 vlans", "[config]")
{
	// the longest spellings: each socket an IPv6 address with a port and
	// its own SO_RCVBUF (about 2.8 kB in all)
	std::string socks, entries, vlans;
	for (unsigned i = 0; i < 64; i++) {
		socks += (i ? "," : "") + std::string("[2001:db8:ffff:ffff:ffff:ffff:ffff:") +
			 std::to_string(1000 + i) + "]:" + std::to_string(60000 + i) + ":2147483647";
		vlans += (i ? "," : "") + std::to_string(4000 + i) + "%31";
	}
	for (unsigned i = 0; i < 256; i++)
		entries += (i ? "," : "") + std::to_string(1000000 + i) + "=18446744073709551615";
	const std::string text = "[pipeline]\nstages = build-meta,l3-demux\n"
				 "[stage.l3-demux]\nudp_sockets = " + socks + "\n"
				 "[stage.build-meta]\nvlans = " + vlans + "\n"
				 "[stage.xdp]\nmap_init = blocked_ports:" + entries + "\n";
	Loaded l(text.c_str());
	INFO(l.err);
	CHECK(l.rc == 0);
	// one more than the maximum is refused, with the line and what is valid
	Loaded more((text.substr(0, text.find("\n[stage.build-meta]")) + ",*:9\n").c_str());
	CHECK(more.rc == -EINVAL);
	CHECK(std::string(more.err).find(":4: [stage.l3-demux] udp_sockets = [2001:db8") !=
	      std::string::npos);
	CHECK(std::string(more.err).find("at most 64 sockets") != std::string::npos);
}
