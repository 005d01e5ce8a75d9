// SPDX-License-Identifier: BSD-3-Clause
// Keys of a stage that is not in the pipeline would do nothing: --set for
// one is refused (exit 2, naming the pipeline), a config file's section for
// one gets one warning line; stages placed by an option or a shortcut
// section ([xdp]) take their [stage.NAME] keys as before.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "run_binary.h"

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

std::string write_file(const std::string &name, const std::string &text)
{
	std::string path = lrx_test::scratch_path(name);
	FILE *f = std::fopen(path.c_str(), "w");
	REQUIRE(f);
	std::fputs(text.c_str(), f);
	std::fclose(f);
	return path;
}

std::vector<std::string> run_cmd(const std::string &prefix, std::vector<std::string> own)
{
	std::vector<std::string> v{listrx_bin(), "--no-huge", "--no-pci", "--no-shconf",
				   "-m", "512", "--file-prefix", lrx_test::file_prefix(prefix),
				   "--vdev", "net_synth0,profile=udp64", "--"};
	v.insert(v.end(), own.begin(), own.end());
	return v;
}

unsigned count_lines(const std::string &text, const std::string &part)
{
	std::istringstream in(text);
	unsigned n = 0;
	for (std::string line; std::getline(in, line);)
		n += line.find(part) != std::string::npos;
	return n;
}

std::vector<std::string> stage_names(const std::string &json_path)
{
	json s = json::parse(lrx_test::read_file(json_path));
	std::vector<std::string> names;
	for (const auto &st : s["stages"])
		names.push_back(st["name"]);
	return names;
}

const char *const filters = "filter add dev all ingress protocol ip pref 1 flower ip_proto udp "
			    "dst_port 1-2 action drop\n";

} // namespace

TEST_CASE("--set for a stage not in the pipeline: exit 2 naming the pipeline", "[binary][config]")
{
	std::string tc = write_file("absent.tc", filters);
	auto r = run_program({listrx_bin(), "--", "--packets", "10",
			      "--set", "stage.tc-ingress.filters=" + tc});
	CHECK(r.status == 2);
	CHECK(r.err == "listrx: --set stage.tc-ingress.filters=" + tc +
			       ": [stage.tc-ingress] filters: tc-ingress is not in the pipeline "
			       "(xdp,build-meta,gro,l3-demux), so the key would do nothing: add "
			       "tc-ingress to the pipeline (--pipeline) or leave the key out\n");
	CHECK(r.out.empty());
	// the pipeline named is the one this command has
	r = run_program({listrx_bin(), "--", "--packets", "10", "--pipeline", "build-meta,l3-demux",
			 "--set", "stage.gro.clock=polls"});
	CHECK(r.status == 2);
	CHECK(r.err.find("[stage.gro] clock: gro is not in the pipeline (build-meta,l3-demux)") !=
	      std::string::npos);
	r = run_program({listrx_bin(), "--", "--packets", "10", "--pipeline", "none",
			 "--set", "stage.gro.clock=polls"});
	CHECK(r.status == 2);
	CHECK(r.err.find("gro is not in the pipeline (none)") != std::string::npos);
}

TEST_CASE("--set for a stage in the pipeline, or placed by an option, is taken", "[binary][config]")
{
	std::string tc = write_file("present.tc", filters);
	std::string js = lrx_test::scratch_path("present.json");
	auto r = run_program(run_cmd("keys-present",
				     {"--packets", "1000", "--pipeline", "build-meta,tc-ingress,l3-demux",
				      "--set", "stage.tc-ingress.filters=" + tc, "--json", js}));
	INFO(r.err);
	REQUIRE(r.status == 0);
	CHECK(r.err.find("not in the pipeline") == std::string::npos);
	CHECK(stage_names(js) == std::vector<std::string>{"build-meta", "tc-ingress", "l3-demux"});
	// xdp placed by --xdp-prog (its shortcut section): --set stage.xdp.* applies
	r = run_program(run_cmd("keys-placed",
				{"--packets", "1000", "--pipeline", "build-meta,l3-demux",
				 "--xdp-prog", "pass", "--set", "stage.xdp.footprint_kb=4", "--json", js}));
	INFO(r.err);
	REQUIRE(r.status == 0);
	CHECK(r.err.find("not in the pipeline") == std::string::npos);
	json s = json::parse(lrx_test::read_file(js));
	CHECK(s["stages"][0]["name"] == "xdp");
	CHECK(s["config"]["stage.xdp.footprint_kb"] == "4");
}

TEST_CASE("a config file's section for a stage not in the pipeline: one warning line, the run "
	  "goes on", "[binary][config]")
{
	std::string tc = write_file("warn.tc", filters);
	std::string conf = write_file("warn.ini", "[pipeline]\nstages = build-meta,l3-demux\n"
						  "[stage.tc-ingress]\nfilters = " + tc + "\n"
						  "[stage.l3-demux]\nudp_ports = none\n");
	std::string js = lrx_test::scratch_path("warn.json");
	auto r = run_program(run_cmd("keys-warn", {"--config", conf, "--packets", "1000",
						   "--json", js}));
	INFO(r.err);
	REQUIRE(r.status == 0);
	CHECK(count_lines(r.err, "not in the pipeline") == 1);
	CHECK(r.err.find("listrx: warning: " + conf + ":3: [stage.tc-ingress]: tc-ingress is not in "
			 "the pipeline (build-meta,l3-demux): its keys are checked, not used\n") !=
	      std::string::npos);
	CHECK(stage_names(js) == std::vector<std::string>{"build-meta", "l3-demux"});
	// its keys are still checked: a bad file is refused
	std::string bad = write_file("warn-bad.ini", "[pipeline]\nstages = build-meta,l3-demux\n"
						     "[stage.tc-ingress]\nfilters = /nonexistent.tc\n");
	r = run_program(run_cmd("keys-warn-bad", {"--config", bad, "--packets", "10"}));
	CHECK(r.status == 2);
	CHECK(r.err.find("stage not in the pipeline; its keys are checked all the same") !=
	      std::string::npos);
}

TEST_CASE("a shortcut section ([xdp]) places its stage; its [stage.xdp] keys apply, no warning",
	  "[binary][config]")
{
	std::string conf = write_file("shortcut.ini", "[pipeline]\nstages = build-meta,l3-demux\n"
						      "[xdp]\nprog = pass\n"
						      "[stage.xdp]\nfootprint_kb = 4\n");
	std::string js = lrx_test::scratch_path("shortcut.json");
	auto r = run_program(run_cmd("keys-shortcut", {"--config", conf, "--packets", "1000",
						       "--json", js}));
	INFO(r.err);
	REQUIRE(r.status == 0);
	CHECK(r.err.find("not in the pipeline") == std::string::npos);
	json s = json::parse(lrx_test::read_file(js));
	CHECK(s["stages"][0]["name"] == "xdp");
	CHECK(s["config"]["stage.xdp.footprint_kb"] == "4");
	CHECK(s["config"]["xdp.prog"] == "pass");
}
