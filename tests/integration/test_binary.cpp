// SPDX-License-Identifier: BSD-3-Clause
// The listrx binary as a user runs it: exit statuses, messages, the JSON
// summary, signals, telemetry, and every mbuf back in its pool at exit.
#include <catch2/catch.hpp>

#include <csignal>
#include <fcntl.h>
#include <sys/wait.h>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <vector>
#include <string>
#include <thread>
#include <unistd.h>

#include "pcap_file.h"
#include "reasm_frames.h"
#include "run_binary.h"
#include "telemetry_client.h"

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

std::vector<std::string> eal(const std::string &prefix, const std::string &vdev)
{
	return {"--no-huge", "--no-pci", "--no-shconf", "-m", "512", "--file-prefix",
		lrx_test::file_prefix(prefix), "--vdev", vdev};
}

std::vector<std::string> cmd(std::vector<std::string> eal_args, std::vector<std::string> own)
{
	std::vector<std::string> v{listrx_bin()};
	v.insert(v.end(), eal_args.begin(), eal_args.end());
	v.push_back("--");
	v.insert(v.end(), own.begin(), own.end());
	return v;
}

json load_json(const std::string &path)
{
	std::string text = lrx_test::read_file(path);
	INFO("summary file " << path);
	REQUIRE_FALSE(text.empty());
	return json::parse(text);
}

void require_summary_keys(const json &s)
{
	for (const char *key : {"version", "engine", "burst", "duration_s", "rx_packets",
				"tx_packets", "dropped", "drops", "mpps", "ns_per_packet",
				"ports", "stages", "topology", "mbufs_in_use_at_exit", "config"}) {
		INFO("key " << key);
		CHECK(s.contains(key));
	}
	CHECK(s["topology"].contains("l1i_bytes"));
}

} // namespace

TEST_CASE("the default (config [eal], emulated NIC) runs N packets and exits 0", "[binary]")
{
	// [eal] args from the config (none on the command line), one port and
	// an empty pipeline (the default ones are the kernel's: see below)
	std::string js = lrx_test::scratch_path("default.json");
	auto r = run_program({listrx_bin(), "--", "--packets", "200000", "--json", js,
			      "--set", "run.stats_period=0", "--set",
			      "eal.args=--no-huge --no-pci --no-shconf -m 1024 "
			      "--vdev net_synth0,profile=udp64",
			      "--pipeline", "none"});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	require_summary_keys(s);
	CHECK(s["rx_packets"] == 200000);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	CHECK(s["ports"].size() == 1);
	CHECK(s["ports"][0]["driver"].get<std::string>().find("synth") != std::string::npos);
	// an empty pipeline delivers what it receives
	CHECK(s["delivered"] == 200000);
	CHECK(s["dropped"] == 0);
	CHECK(r.out.find("mbufs in use at exit: 0") != std::string::npos);
}

TEST_CASE("every packet ends in one counted fate with reassembly in play", "[binary][reasm]")
{
	using namespace lrx_test::reasm;
	// a datagram that completes, a lonely fragment that times out, an
	// overlapping pair (the held one goes with its queue), a duplicate;
	// the pcap loops, so queues of every kind are made and killed again
	const Frame w = whole4(1), lone = whole4(2), ovl = whole4(3);
	const std::vector<Frame> frames = {frag4(w, 0, 80, true), frag4(w, 80, 128, false),
					   frag4(lone, 0, 80, true), frag4(ovl, 0, 80, true),
					   frag4(ovl, 40, 80, true), frag4(w, 0, 80, true)};
	std::vector<lrx_test::Frame> bytes;
	for (auto &f : frames)
		bytes.push_back(f.data);
	const std::string pcap = lrx_test::scratch_path("reasm.pcap");
	REQUIRE(lrx_test::pcap_write(pcap, bytes));
	std::string js = lrx_test::scratch_path("reasm.json");
	auto r = run_program(cmd(eal("reasm", "net_synth0,profile=pcap,pcap=" + pcap),
				 {"--pipeline", "build-meta,l3-demux", "--packets", "6000",
				  "--burst", "4", "--json", js, "--stats-period", "0",
				  "--set", "stage.build-meta.host_mac=any",
				  "--set", "stage.l3-demux.ipfrag_clock=polls",
				  "--set", "stage.l3-demux.ipfrag_time=3"}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	const uint64_t rx = s["rx_packets"], merged = s["merged_segments"];
	// rx = delivered + dropped + tx + merged + held: nothing held at exit
	CHECK(s["held"] == 0);
	CHECK(rx == s["delivered"].get<uint64_t>() + s["dropped"].get<uint64_t>() +
			    s["tx_packets"].get<uint64_t>() + merged);
	CHECK(merged > 0);
	CHECK(s["drops"]["FRAG_REASM_TIMEOUT"].get<uint64_t>() > 0);
	CHECK(s["drops"]["FRAG_OVERLAP"].get<uint64_t>() > 0);
	CHECK(s["drops"]["DUP_FRAG"].get<uint64_t>() > 0);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
}

TEST_CASE("the default config runs the kernel RX path and delivers what a host would",
	  "[binary]")
{
	std::string js = lrx_test::scratch_path("kernel-default.json");
	auto r = run_program({listrx_bin(), "--", "--packets", "200000", "--json", js,
			      "--set", "run.stats_period=0"});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 200000);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	std::vector<std::string> stages;
	for (auto &st : s["stages"])
		stages.push_back(st["name"].get<std::string>());
	CHECK(stages == std::vector<std::string>{"xdp", "build-meta", "gro", "l3-demux"});
	uint64_t merged = 0;
	for (auto &st : s["stages"])
		if (st["name"] == "gro")
			merged = st["counters"]["merged"].get<uint64_t>();
	CHECK(merged > 0); // the TCP streams
	uint64_t delivered = s["delivered"].get<uint64_t>();
	// segments delivered (a merged one inside its super-packet) > 90 %,
	// and the malformed and IPv6 frames were seen
	CHECK((delivered + merged) * 10 > 200000ull * 9);
	CHECK(s["dropped"].get<uint64_t>() > 0);
	CHECK(s["stages"][3]["counters"]["Ip6InDelivers"].get<uint64_t>() > 0);
	// the metadata lives in the mbuf by default ([mempool] priv_size =
	// auto gave the room): no packet used build-meta's ring, none lacked room
	CHECK(s["stages"][1]["counters"]["pool_wraps"].get<uint64_t>() == 0);
	CHECK(s["stages"][1]["counters"]["no_priv_room"].get<uint64_t>() == 0);
	CHECK(s["stages"][1]["counters"]["built"].get<uint64_t>() > 0);
}

TEST_CASE("stats level off reads no TSC per poll: busy cycles null, counts exact", "[binary]")
{
	std::string js = lrx_test::scratch_path("statsoff.json");
	auto r = run_program({listrx_bin(), "--", "--packets", "100000", "--json", js,
			      "--stats-level", "off", "--stats-period", "0", "--pipeline", "none"});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 100000);
	CHECK(s["delivered"] == 100000);
	CHECK(s["busy_cycles_per_packet"].is_null()); // not measured, not 0
	CHECK(s["mbufs_in_use_at_exit"] == 0);
}

TEST_CASE("stats level counters times a saturated lcore's full polls as stretches: busy "
	  "cycles within the run, counts exact",
	  "[binary]")
{
	// net_null fills every poll: the busy clock reads the TSC at the start
	// and end of the stretch and every 1024 polls, never per poll; what it
	// adds up must still be positive and no more than the lcore's wall time
	std::string js = lrx_test::scratch_path("statscounters.json");
	auto r = run_program({listrx_bin(), "--", "--packets", "2000000", "--json", js,
			      "--stats-level", "counters", "--stats-period", "0", "--pipeline", "none",
			      "--burst", "32"});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 2000000);
	CHECK(s["delivered"] == 2000000);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	REQUIRE(s["busy_cycles_per_packet"].is_number());
	double busy_per_packet = s["busy_cycles_per_packet"].get<double>();
	CHECK(busy_per_packet > 0.0);
	uint64_t busy = 0;
	for (auto &l : s["lcores"])
		busy += l["busy_cycles"].get<uint64_t>();
	double wall_cycles = s["duration_s"].get<double>() * s["tsc_hz"].get<double>();
	CHECK(busy > 0);
	CHECK(static_cast<double>(busy) <= wall_cycles * 1.01);
}

TEST_CASE("EAL options on the command line replace [eal]; every probed ethdev is a port",
	  "[binary]")
{
	std::string js = lrx_test::scratch_path("null.json");
	std::vector<std::string> e = eal("null", "net_null0,copy=0");
	std::vector<std::string> lcores = lrx_test::lcores_args(2);
	e.insert(e.begin(), lcores.begin(), lcores.end());
	e.push_back("--vdev");
	e.push_back("net_null1,copy=0");
	auto r = run_program(cmd(e, {"--packets", "1000000", "--json", js}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 1000000);
	REQUIRE(s["ports"].size() == 2);
	CHECK(s["ports"][0]["driver"] == "net_null");
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	// one worker (lcore 1) polls both ports
	REQUIRE(s["lcores"].size() == 1);
	CHECK(s["lcores"][0]["lcore"] == 1);
	uint64_t per_queue = 0;
	for (auto &p : s["ports"])
		for (auto &q : p["queues"])
			per_queue += q["rx_packets"].get<uint64_t>();
	CHECK(per_queue == 1000000);
}

TEST_CASE("--packets is exact with two polling lcores", "[binary]")
{
	std::string conf = lrx_test::scratch_path("two.ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fputs("[port.0]\ndevice = net_null0\n[port.1]\ndevice = net_null1\n"
		   "[lcore.0]\npoll = 0:0\n[lcore.1]\npoll = 1:0\n",
		   f);
	std::fclose(f);
	std::string js = lrx_test::scratch_path("two.json");
	std::vector<std::string> e = eal("two", "net_null0,copy=0");
	std::vector<std::string> lcores = lrx_test::lcores_args(2);
	e.insert(e.begin(), lcores.begin(), lcores.end());
	e.push_back("--vdev");
	e.push_back("net_null1,copy=0");
	// enough packets that both workers get scheduled on a loaded host:
	// 777 777 took 12 ms, and one worker could take them all first
	auto r = run_program(cmd(e, {"--config", conf, "--packets", "7777777", "--burst", "32",
				     "--json", js}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 7777777);
	REQUIRE(s["lcores"].size() == 2);
	CHECK(s["lcores"][0]["packets"].get<uint64_t>() > 0);
	CHECK(s["lcores"][1]["packets"].get<uint64_t>() > 0);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
}

TEST_CASE("--measure-from: the window's packets in the summary, outside valgrind too",
	  "[binary]")
{
	std::string js = lrx_test::scratch_path("window.json");
	std::vector<std::string> e = eal("window", "net_null0,copy=0");
	std::vector<std::string> lcore = lrx_test::lcores_args(1);
	e.insert(e.begin(), lcore.begin(), lcore.end());
	auto r = run_program(cmd(e, {"--packets", "6000", "--measure-from", "2000", "--burst", "256",
				     "--json", js}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 6000);
	CHECK(s["measure_from"] == 2000);
	/* the window opens after the poll that reaches 2000: 8 bursts of 256 */
	CHECK(s["measured_packets"] == 6000 - 2048);
	CHECK(s["lcores"][0]["measured_packets"] == 6000 - 2048);
	r = run_program(cmd(eal("window2", "net_null0,copy=0"),
			    {"--packets", "100", "--measure-from", "100"}));
	CHECK(r.status == 2);
	CHECK(r.err.find("--measure-from 100: [run] measure_from: must be below [run] packets") !=
	      std::string::npos);
}

TEST_CASE("bad config: exit 2 and a message naming file, line, key, value", "[binary]")
{
	std::string conf = lrx_test::scratch_path("bad.ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fputs("[pipeline]\nengine = burst\nburst = 9999\n", f);
	std::fclose(f);
	auto r = run_program({listrx_bin(), "--", "--config", conf});
	CHECK(r.status == 2);
	CHECK(r.err == "listrx: " + conf + ":3: [pipeline] burst = 9999: must be an integer in 1..512\n");
	CHECK(r.out.empty());
}

TEST_CASE("bad option values: exit 2 naming the option", "[binary]")
{
	auto r = run_program({listrx_bin(), "--", "--burst", "0"});
	CHECK(r.status == 2);
	CHECK(r.err == "listrx: --burst 0: [pipeline] burst: must be an integer in 1..512\n");
	r = run_program({listrx_bin(), "--", "--frobnicate"});
	CHECK(r.status == 2);
	CHECK(r.err.find("unknown option '--frobnicate'") != std::string::npos);
	r = run_program({listrx_bin(), "--", "--engine", "warp"});
	CHECK(r.status == 2);
	CHECK(r.err.find("--engine warp: [pipeline] engine: must be one of packet, burst") !=
	      std::string::npos);
	r = run_program({listrx_bin(), "--", "--config", "/nonexistent.ini"});
	CHECK(r.status == 2);
	CHECK(r.err == "listrx: /nonexistent.ini: cannot read config file: No such file or directory\n");
}

TEST_CASE("a missing device: exit 2 and what exists", "[binary]")
{
	std::string conf = lrx_test::scratch_path("missing.ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fputs("[port.0]\ndevice = net_nosuch0\n", f);
	std::fclose(f);
	auto r = run_program(cmd(eal("missing", "net_null0"), {"--config", conf, "--packets", "10"}));
	CHECK(r.status == 2);
	CHECK(r.err.find("[port.0] device = net_nosuch0: no such ethdev") != std::string::npos);
	CHECK(r.err.find("ethdevs present: net_null0") != std::string::npos);
}

TEST_CASE("no ports at all: exit 2 with a hint", "[binary]")
{
	auto r = run_program({listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m", "256",
			      "--file-prefix", lrx_test::file_prefix("noports"), "--", "--packets", "1"});
	CHECK(r.status == 2);
	CHECK(r.err.find("no ports: EAL probed no ethdev") != std::string::npos);
}

TEST_CASE("SIGINT and SIGTERM stop the run: summary, pool full, exit 0", "[binary]")
{
	for (int sig : {SIGINT, SIGTERM}) {
		std::string js = lrx_test::scratch_path("sig" + std::to_string(sig) + ".json");
		lrx_test::RunOptions opt;
		opt.signal = sig;
		// once the run polls (its first periodic line), not after a fixed
		// time: a sanitizer build under load can take longer to start
		opt.signal_when_output = "] rx ";
		opt.timeout_s = 60;
		auto r = run_program(cmd(eal("sig" + std::to_string(sig), "net_null0,copy=0"),
					 {"--json", js, "--stats-period", "0.2"}),
				     opt);
		INFO(r.out << r.err);
		REQUIRE_FALSE(r.timed_out);
		CHECK(r.status == 0);
		CHECK(r.out.find("==== listrx summary") != std::string::npos);
		CHECK(r.out.find("] rx ") != std::string::npos); // periodic lines
		json s = load_json(js);
		CHECK(s["stopped_by_signal"] == true);
		CHECK(s["rx_packets"].get<uint64_t>() > 0);
		CHECK(s["mbufs_in_use_at_exit"] == 0);
	}
}

TEST_CASE("--duration stops the run", "[binary]")
{
	std::string js = lrx_test::scratch_path("dur.json");
	auto r = run_program(cmd(eal("dur", "net_null0,copy=0"), {"--duration", "0.5", "--json", js}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["duration_s"].get<double>() >= 0.5);
	CHECK(s["duration_s"].get<double>() < 5);
	CHECK(s["stopped_by_signal"] == false);
}

TEST_CASE("--help and --version", "[binary]")
{
	auto r = run_program({listrx_bin(), "--", "--help"});
	CHECK(r.status == 0);
	CHECK(r.out.find("Usage: listrx [EAL options] -- [listrx options]") != std::string::npos);
	r = run_program({listrx_bin(), "--help"});
	CHECK(r.status == 0);
	r = run_program({listrx_bin(), "--", "--version"});
	CHECK(r.status == 0);
	CHECK(r.out.find("listrx 0.") == 0);
	CHECK(r.out.find("DPDK 22.11") != std::string::npos);
	CHECK(r.out.find("host L1i:") != std::string::npos);
	// the commit and clone it is built from (meson vcs_tag: git describe)
	std::smatch m;
	REQUIRE(std::regex_search(r.out, m, std::regex("\ncommit: (.+)\nsource: (.+)\n")));
	const char *src = std::getenv("LISTRX_SOURCE_ROOT");
	REQUIRE(src != nullptr);
	CHECK(m[2].str() == src);
	auto git = run_program(
		{"/bin/sh", "-c", "git -C \"$0\" describe --always --abbrev=12", src});
	if (git.status == 0) {
		std::string head = git.out.substr(0, git.out.find('\n'));
		CHECK((m[1].str() == head || m[1].str() == head + "-dirty"));
	} else if (git.status == 127) {
		WARN("SKIPPED (the commit's value): git not installed");
	} else { // not a clone: meson's fallback
		CHECK(m[1].str().rfind("unknown", 0) == 0);
	}
	std::string commit = m[1].str();
	std::string js = lrx_test::scratch_path("version.json");
	r = run_program(cmd(eal("version", "net_null0"), {"--packets", "10", "--json", js}));
	REQUIRE(r.status == 0);
	CHECK(load_json(js)["commit"] == commit);
	r = run_program({listrx_bin(), "--", "--topology"});
	CHECK(r.status == 0);
	CHECK(r.out.find("L1i:") != std::string::npos);
}

TEST_CASE("--list-stages --json: every stage's keys, counters and placement", "[binary]")
{
	auto text = run_program({listrx_bin(), "--", "--list-stages"});
	REQUIRE(text.status == 0);
	auto r = run_program({listrx_bin(), "--", "--list-stages", "--json", "-"});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json doc = json::parse(r.out);
	REQUIRE(doc["stages"].size() > 0);
	for (const json &st : doc["stages"]) {
		std::string name = st["name"];
		INFO("stage " << name);
		// the text listing names the same stages and keys
		CHECK(text.out.find(name + " ") != std::string::npos);
		for (const json &k : st["keys"]) {
			CHECK(text.out.find("    " + k["name"].get<std::string>() + " ") !=
			      std::string::npos);
			CHECK(!k["valid"].get<std::string>().empty());
		}
		CHECK(st["counters"].is_array());
		CHECK(st["provides"].is_array());
		CHECK(st["needs"].is_array());
	}
	auto stage = [&](const std::string &name) {
		for (const json &st : doc["stages"])
			if (st["name"] == name)
				return st;
		return json();
	};
	// the kernel path's placement rules, as config.c applies them
	CHECK(stage("build-meta")["provides"] == json::array({"meta", "skb"}));
	CHECK(stage("gro")["provides"] == json::array({"skb"}));
	CHECK(stage("l3-demux")["needs"] == json::array({"meta"}));
	CHECK(stage("gro")["counters"][2] == json({{"name", "merged"}, {"role", "merged"}}));
	CHECK(stage("touch")["keys"][0]["valid"] == "an integer in 0..65535");
	// the engine's key of every [stage.NAME]
	CHECK(doc["engine_keys"][0]["name"] == "footprint_kb");
	const json &xdp = stage("xdp");
	if (!xdp.is_null()) {
		CHECK(xdp["shortcut"]["place_key"] == "mode");
		CHECK(xdp["shortcut"]["places"][0] ==
		      json({{"value", "native"}, {"position", "first"}}));
		CHECK(xdp["shortcut"]["places"][1] ==
		      json({{"value", "generic"}, {"position", "after_skb"}}));
	}
	CHECK(doc["positions"].contains("after_skb"));
	// to a file, and a clear error where it cannot be written
	std::string path = lrx_test::scratch_path("stages.json");
	r = run_program({listrx_bin(), "--", "--list-stages", "--json", path});
	CHECK(r.status == 0);
	CHECK(json::parse(lrx_test::read_file(path)) == doc);
	r = run_program({listrx_bin(), "--", "--list-stages", "--json", "/nonexistent/dir/x.json"});
	CHECK(r.status == 2);
	CHECK(r.err.find("--json /nonexistent/dir/x.json: cannot write the stage list there") !=
	      std::string::npos);
}

TEST_CASE("telemetry: /listrx/stats, /listrx/config and /listrx/stages while running", "[binary]")
{
	if (!lrx_test::telemetry_unavailable().empty()) {
		WARN("SKIPPED: " << lrx_test::telemetry_unavailable());
		return;
	}
	std::string prefix = lrx_test::file_prefix("tel");
	std::vector<std::string> e = {"--no-huge", "--no-pci", "-m", "256", "--file-prefix",
				      prefix, "--vdev", "net_null0,copy=0"};
	// with per-stage counters from the fake source: /listrx/stages shows
	// what each stage was charged so far
	int pid = lrx_test::spawn_program(cmd(e, {"--duration", "6", "--stats-period", "0",
						  "--pipeline", "build-meta", "--engine", "burst",
						  "--pmu=cycles,instructions", "--pmu-stages",
						  "--set", "pmu.source=fake"}),
					  "/dev/null");
	REQUIRE(pid > 0);
	std::string stats_out;
	for (int attempt = 0; attempt < 40 && stats_out.find("rx_packets") == std::string::npos;
	     attempt++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(150));
		stats_out = lrx_test::telemetry_query(prefix, {"/listrx/stats", "/listrx/config",
								"/listrx/stages"});
	}
	kill(pid, SIGINT);
	CHECK(lrx_test::wait_program(pid, 30) == 0);
	INFO(stats_out);
	CHECK(stats_out.find("\"/listrx/stats\"") != std::string::npos);
	CHECK(stats_out.find("\"rx_packets\"") != std::string::npos);
	CHECK(stats_out.find("\"/listrx/config\"") != std::string::npos);
	CHECK(stats_out.find("\"run\": {") != std::string::npos);
	CHECK(stats_out.find("\"duration\": \"6\"") != std::string::npos);
	CHECK(stats_out.find("\"queues\": {\"port0_q0\": ") != std::string::npos);
	CHECK(stats_out.find("\"pmu\": {") != std::string::npos);
	CHECK(stats_out.find("\"0_build_meta\": {") != std::string::npos);
	CHECK(stats_out.find("\"pmu_cycles\": ") != std::string::npos);
	CHECK(stats_out.find("\"pmu_instructions\": ") != std::string::npos);
}

// The exit summary as text: totals, the stage table, the stage counters
// and the drop reasons, as numbers by name.
struct TextSummary {
	uint64_t rx = 0, delivered = 0, dropped = 0;
	std::map<std::string, std::vector<uint64_t>> stage_row; // calls, packets, dropped
	std::map<std::string, std::map<std::string, uint64_t>> counters;
	std::map<std::string, std::pair<uint64_t, uint64_t>> merge; // segments in, packets out
	std::map<std::string, uint64_t> drops;
};

TextSummary parse_text_summary(const std::string &out)
{
	TextSummary t;
	std::istringstream in(out.substr(out.find("==== listrx summary")));
	std::string line, section, stage;
	std::smatch m;
	while (std::getline(in, line)) {
		if (line.empty()) {
			section.clear();
			continue;
		}
		if (std::regex_search(line, m, std::regex("^duration .* rx ([0-9]+) packets")))
			t.rx = std::stoull(m[1]);
		else if (std::regex_search(line, m, std::regex("^delivered ([0-9]+), tx [0-9]+, dropped ([0-9]+)"))) {
			t.delivered = std::stoull(m[1]);
			t.dropped = std::stoull(m[2]);
		} else if (line.rfind("stage ", 0) == 0 && line.find("vec/call") != std::string::npos)
			section = "table";
		else if (line == "stage counters (non-zero):")
			section = "counters";
		else if (line.rfind("drop reason", 0) == 0)
			section = "drops";
		else if (section == "table" &&
			 std::regex_search(line, m, std::regex("^(\\S+) +([0-9]+) +([0-9]+) +\\S+ +\\S+ +\\S+ +([0-9]+)")))
			t.stage_row[m[1]] = {std::stoull(m[2]), std::stoull(m[3]), std::stoull(m[4])};
		else if (section == "counters" && line[0] != ' ') {
			stage = line.substr(0, line.find(':'));
			t.counters[stage];
			if (std::regex_search(line, m, std::regex("segments in ([0-9]+) -> packets out ([0-9]+)")))
				t.merge[stage] = {std::stoull(m[1]), std::stoull(m[2])};
		} else if (section == "counters" && std::regex_search(line, m, std::regex("^  (\\S+) +([0-9]+)$")))
			t.counters[stage][m[1]] = std::stoull(m[2]);
		else if (section == "drops" && std::regex_search(line, m, std::regex("^(\\S+) +([0-9]+)$")))
			t.drops[m[1]] = std::stoull(m[2]);
	}
	return t;
}


TEST_CASE("the text summary, the JSON summary and telemetry give the same numbers",
	  "[binary][report]")
{
	if (!lrx_test::telemetry_unavailable().empty()) {
		WARN("SKIPPED: " << lrx_test::telemetry_unavailable());
		return;
	}
	// the link goes down 0.4 s after start: RX delivers nothing from then
	// on, so telemetry read later sees the counters the exit summary shows
	std::string prefix = lrx_test::file_prefix("report3");
	std::string js = lrx_test::scratch_path("report3.json");
	std::string txt = lrx_test::scratch_path("report3.txt");
	std::vector<std::string> v = cmd({"--no-huge", "--no-pci", "-m", "512", "--file-prefix", prefix,
					  "--vdev",
					  "net_synth0,profile=mixed,ipv6_share=0.1,malformed_share=0.1,link_down_ms=400"},
					 {"--duration", "4", "--stats-period", "0", "--pipeline",
					  "xdp,build-meta,gro,l3-demux", "--json", js});
	int pid = lrx_test::spawn_program(v, txt, "/dev/null");
	REQUIRE(pid > 0);
	json stats, stages;
	std::string tel_out;
	for (int attempt = 0; attempt < 60; attempt++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
		tel_out = lrx_test::telemetry_query(prefix, {"/listrx/stats", "/listrx/stages"});
		stats = lrx_test::telemetry_reply(tel_out, "/listrx/stats");
		stages = lrx_test::telemetry_reply(tel_out, "/listrx/stages");
		// past the link-down time, with the counters read
		if (stats.is_object() && stats.value("uptime_ms", 0) > 1500 && stages.is_object())
			break;
	}
	int status = lrx_test::wait_program(pid, 60);
	REQUIRE(status == 0);
	INFO(tel_out);
	REQUIRE(stats.is_object());
	REQUIRE(stages.is_object());
	json s = load_json(js);
	std::string text = lrx_test::read_file(txt);
	INFO(text);
	TextSummary t = parse_text_summary(text);

	REQUIRE(s["rx_packets"].get<uint64_t>() > 0);
	REQUIRE(s["dropped"].get<uint64_t>() > 0); // the malformed share
	for (const char *key : {"rx_packets", "delivered", "dropped", "held", "merged_segments"})
		CHECK(stats[key] == s[key]);
	CHECK(t.rx == s["rx_packets"].get<uint64_t>());
	CHECK(t.delivered == s["delivered"].get<uint64_t>());
	CHECK(t.dropped == s["dropped"].get<uint64_t>());
	CHECK(stats["drops"] == s["drops"]);
	CHECK(json(t.drops) == s["drops"]);

	REQUIRE(s["stages"].size() == 4);
	REQUIRE(stages.size() == 4);
	unsigned i = 0;
	for (const json &st : s["stages"]) {
		std::string name = st["name"];
		INFO("stage " << name);
		std::string tel_key = std::to_string(i++) + "_" + name;
		std::replace(tel_key.begin(), tel_key.end(), '-', '_');
		REQUIRE(stages.contains(tel_key));
		const json &ts = stages[tel_key];
		uint64_t dropped = 0;
		for (auto &d : st["drops"].items())
			dropped += d.value().get<uint64_t>();
		CHECK(ts["calls"] == st["calls"]);
		CHECK(ts["packets"] == st["packets"]);
		CHECK(ts["dropped"].get<uint64_t>() == dropped);
		REQUIRE(t.stage_row.count(name) == 1);
		CHECK(t.stage_row[name] ==
		      std::vector<uint64_t>{st["calls"], st["packets"], dropped});
		for (auto &c : st["counters"].items()) {
			uint64_t value = c.value();
			CHECK(ts["counter_" + c.key()].get<uint64_t>() == value);
			// the text lists the non-zero ones (a merging stage's four
			// merge counters are in its segments in -> packets out line)
			if (t.merge.count(name) && (c.key() == "segments_in" || c.key() == "packets_out" ||
						    c.key() == "merged" || c.key() == "held"))
				continue;
			if (value)
				CHECK(t.counters[name][c.key()] == value);
			else
				CHECK(t.counters[name].count(c.key()) == 0);
		}
	}
	// gro: segments in -> packets out, as its counters; l3-demux in SNMP names
	REQUIRE(t.merge.count("gro") == 1);
	CHECK(t.merge["gro"].first == s["stages"][2]["counters"]["segments_in"].get<uint64_t>());
	CHECK(t.merge["gro"].second == s["stages"][2]["counters"]["packets_out"].get<uint64_t>());
	CHECK(t.counters["l3-demux"]["IpInReceives"] > 0);
	CHECK(t.counters["xdp"]["pass"] == s["rx_packets"].get<uint64_t>());
}

TEST_CASE("--latency on net_synth with timestamps: RX stamp to verdict percentiles",
	  "[binary][latency]")
{
	std::string js = lrx_test::scratch_path("latency.json");
	auto r = run_program(cmd(eal("latency", "net_synth0,profile=udp64,hints=all"),
				 {"--latency", "--packets", "300000", "--pipeline",
				  "build-meta,l3-demux", "--json", js, "--stats-period", "0"}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	REQUIRE(s.contains("latency_ns"));
	const json &lat = s["latency_ns"];
	INFO(lat.dump());
	CHECK(lat["source"] == "synth-tsc");
	uint64_t samples = lat["samples"].get<uint64_t>();
	CHECK(samples > 0);
	// every completed packet carried a stamp (none held at exit: no GRO)
	CHECK(samples == s["rx_packets"].get<uint64_t>());
	double p50 = lat["p50"].get<double>(), p99 = lat["p99"].get<double>(),
	       p999 = lat["p999"].get<double>();
	CHECK(p50 > 0);
	CHECK(p50 <= p99);
	CHECK(p99 <= p999);
	CHECK(p999 <= lat["max"].get<double>());
	CHECK_FALSE(s.contains("latency_unavailable"));
	CHECK(s["config"]["pipeline.latency"] == "1");
	CHECK(r.out.find("latency, RX stamp to verdict (synth-tsc, ") != std::string::npos);
}

TEST_CASE("without --latency there is no latency_ns", "[binary][latency]")
{
	std::string js = lrx_test::scratch_path("nolatency.json");
	auto r = run_program(cmd(eal("nolatency", "net_synth0,profile=udp64,hints=all"),
				 {"--packets", "100000", "--json", js, "--stats-period", "0"}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 100000);
	CHECK_FALSE(s.contains("latency_ns"));
	CHECK_FALSE(s.contains("latency_unavailable"));
	// (the EAL file prefix on the telemetry line is named after the test)
	CHECK(r.out.find("latency, RX stamp") == std::string::npos);
	CHECK(r.out.find("latency:") == std::string::npos);
}

TEST_CASE("--latency without TSC stamps: samples 0 and the reason", "[binary][latency]")
{
	SECTION("net_synth without the timestamp hint")
	{
		std::string js = lrx_test::scratch_path("latency-nohint.json");
		auto r = run_program(cmd(eal("latnohint", "net_synth0,profile=udp64"),
					 {"--latency", "--packets", "50000", "--json", js,
					  "--stats-period", "0"}));
		INFO(r.out << r.err);
		REQUIRE(r.status == 0);
		json s = load_json(js);
		REQUIRE(s.contains("latency_ns"));
		CHECK(s["latency_ns"]["samples"] == 0);
		CHECK(s["latency_ns"]["p50"].is_null()); // not measured, not 0
		CHECK(s["latency_ns"]["source"].is_null());
		CHECK(s["latency_unavailable"] ==
		      "no RX timestamps (use net_synth hints=...+timestamp)");
		CHECK(r.out.find("latency: no RX timestamps (use net_synth hints=...+timestamp)") !=
		      std::string::npos);
	}
	SECTION("net_null: no stamps at all")
	{
		std::string js = lrx_test::scratch_path("latency-null.json");
		auto r = run_program(cmd(eal("latnull", "net_null0,copy=0"),
					 {"--latency", "--packets", "50000", "--json", js,
					  "--stats-period", "0"}));
		INFO(r.out << r.err);
		REQUIRE(r.status == 0);
		json s = load_json(js);
		CHECK(s["latency_ns"]["samples"] == 0);
		CHECK(s.contains("latency_unavailable"));
	}
}

namespace {
bool has_cpu_pmu()
{
	return access("/sys/bus/event_source/devices/cpu", F_OK) == 0 ||
	       access("/sys/bus/event_source/devices/cpu_core", F_OK) == 0;
}
} // namespace

TEST_CASE("--pmu: per-worker counters, or each event unavailable with its reason", "[binary][pmu]")
{
	std::string js = lrx_test::scratch_path("pmu.json");
	auto r = run_program(cmd(eal("pmu", "net_synth0,profile=udp64"),
				 {"--pmu", "--pmu-stages", "--engine", "burst", "--pipeline",
				  "build-meta,l3-demux", "--packets", "200000", "--json", js,
				  "--stats-period", "0"}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0); // counters missing never fail the run
	json s = load_json(js);
	REQUIRE(s.contains("pmu"));
	const json &pmu = s["pmu"];
	INFO(pmu.dump(1));
	CHECK(pmu["source"] == "perf_event");
	CHECK(pmu["fake"] == false);
	CHECK(pmu["mode"] == "user");
	REQUIRE(pmu["events"].size() == 5);
	CHECK(pmu["events"][0]["name"] == "cycles");
	CHECK(pmu["events"][2]["name"] == "L1-icache-load-misses");
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	if (!has_cpu_pmu()) {
		// this machine: the reason everywhere, and null, never 0
		CHECK(pmu["status"].get<std::string>().rfind("unavailable: no hardware PMU", 0) == 0);
		CHECK(pmu["lcores_counted"] == 0);
		for (const json &ev : pmu["events"]) {
			CHECK(ev["status"].get<std::string>().rfind("unavailable: ", 0) == 0);
			CHECK(ev["count"].is_null());
			CHECK(ev["per_packet"].is_null());
		}
		for (const json &lc : pmu["lcores"])
			for (auto &kv : lc["counts"].items())
				CHECK(kv.value().is_null());
		CHECK(pmu["stages_status"].get<std::string>().rfind("unavailable: ", 0) == 0);
		CHECK(pmu["stages"].empty());
		CHECK(r.out.find("cycles                   unavailable: no hardware PMU") !=
		      std::string::npos);
	} else {
		// a machine with a PMU: what counted has a count per packet
		CHECK(pmu["lcores_counted"].get<unsigned>() >= 1);
		for (const json &ev : pmu["events"])
			if (ev["status"] == "counted")
				CHECK(ev["per_packet"].get<double>() > 0);
	}
}

TEST_CASE("--pmu with the fake source: per-stage figures add up and keep the source's ratios",
	  "[binary][pmu]")
{
	std::string js = lrx_test::scratch_path("pmu-fake.json");
	auto r = run_program(cmd(eal("pmufake", "net_synth0,profile=udp64"),
				 {"--pmu=cycles,instructions,iTLB-load-misses", "--pmu-stages",
				  "--set", "pmu.source=fake", "--engine", "hybrid:2", "--pipeline",
				  "build-meta,gro,l3-demux", "--packets", "300000", "--json", js,
				  "--stats-period", "0"}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	const json &pmu = s["pmu"];
	INFO(pmu.dump(1));
	CHECK(pmu["source"] == "fake");
	CHECK(pmu["fake"] == true);
	CHECK(pmu["status"] == "counted");
	CHECK(pmu["stages_status"] == "counted (fake reads around each stage call)");
	// the fake counts event k as (k + 1) x TSC: exact ratios
	uint64_t c0 = pmu["events"][0]["count"].get<uint64_t>();
	REQUIRE(c0 > 0);
	CHECK(pmu["events"][1]["count"].get<uint64_t>() == 2 * c0);
	CHECK(pmu["events"][2]["count"].get<uint64_t>() == 3 * c0);
	CHECK(pmu["lcores"][0]["counts"]["cycles"].get<uint64_t>() == c0);
	CHECK(pmu["events"][0]["per_packet"].get<double>() ==
	      Approx((double)c0 / s["rx_packets"].get<double>()));
	REQUIRE(pmu["stages"].size() == 3);
	uint64_t sum = 0;
	for (unsigned i = 0; i < 3; i++) {
		const json &st = pmu["stages"][i];
		INFO("stage " << st["name"]);
		if (i < 2) { // hybrid:2 reads around its first two stages
			CHECK(st["attributed"] == true);
			uint64_t cyc = st["counts"]["cycles"].get<uint64_t>();
			CHECK(cyc > 0);
			CHECK(st["counts"]["instructions"].get<uint64_t>() == 2 * cyc);
			CHECK(st["counts"]["iTLB-load-misses"].get<uint64_t>() == 3 * cyc);
			sum += cyc;
		} else {
			CHECK(st["attributed"] == false);
			CHECK(st["counts"]["cycles"].is_null());
			CHECK(st["per_packet"]["cycles"].is_null());
		}
	}
	CHECK((double)sum < c0); // the stages are inside the loop's total
	CHECK(r.out.find("fake: software test source, not hardware counts") != std::string::npos);
}

TEST_CASE("--pmu bad values: exit 2 naming what is valid", "[binary][pmu]")
{
	struct Row {
		std::vector<std::string> args;
		const char *expect;
	} rows[] = {
		{{"--pmu=cycles,bogus"}, "unknown event 'bogus'; valid: default, cycles"},
		{{"--pmu-stages", "--engine", "packet"}, "use engine burst, hybrid:K or graph"},
		{{"--pmu-stages", "--engine", "burst", "--stats-level", "off"},
		 "needs [pipeline] stats_level counters or cycles"},
		{{"--pmu", "--set", "pmu.source=nosuch"}, "must be one of perf_event, fake"},
		{{"--set", "pmu.nosuch=1"}, "valid keys in [pmu]: stages, kernel, source, events"},
	};
	for (const Row &row : rows) {
		std::vector<std::string> own = row.args;
		own.insert(own.end(), {"--packets", "1000"});
		auto r = run_program(cmd(eal("pmubad", "net_synth0"), own));
		INFO(r.out << r.err);
		CHECK(r.status == 2);
		CHECK(r.err.find(row.expect) != std::string::npos);
	}
}


TEST_CASE("telemetry /listrx/runtime: per-stage rates; ,clear restarts them from zero, totals stay",
	  "[binary][runtime]")
{
	if (!lrx_test::telemetry_unavailable().empty()) {
		WARN("SKIPPED: " << lrx_test::telemetry_unavailable());
		return;
	}
	std::string prefix = lrx_test::file_prefix("runtime");
	std::string out_path = lrx_test::scratch_path("runtime.out");
	int pid = lrx_test::spawn_program(
		cmd({"--no-huge", "--no-pci", "-m", "256", "--file-prefix", prefix, "--vdev",
		     "net_null0,copy=0"},
		    {"--duration", "10", "--stats-level", "cycles", "--stats-period", "0",
		     "--pipeline", "build-meta,gro,l3-demux"}),
		out_path);
	REQUIRE(pid > 0);
	json first;
	for (int attempt = 0; attempt < 60; attempt++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(150));
		auto v = lrx_test::telemetry_replies(lrx_test::telemetry_query(prefix, {"/listrx/runtime"}),
						     "/listrx/runtime");
		if (!v.empty() && v[0].is_object() && v[0].contains("0_build_meta") &&
		    v[0]["0_build_meta"]["packets"].get<uint64_t>() > 0 && v[0]["period_ms"] > 300) {
			first = v[0];
			break;
		}
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	std::string tel_out = lrx_test::telemetry_query(
		prefix, {"/listrx/runtime,clear", "/listrx/runtime", "/listrx/stages"});
	auto after = lrx_test::telemetry_replies(tel_out, "/listrx/runtime");
	json stages = lrx_test::telemetry_reply(tel_out, "/listrx/stages");
	kill(pid, SIGINT);
	CHECK(lrx_test::wait_program(pid, 30) == 0);
	INFO(first.dump() << "\n" << tel_out);
	REQUIRE(first.is_object());
	for (const char *s : {"0_build_meta", "1_gro", "2_l3_demux"}) {
		INFO("stage " << s);
		const json &st = first[s];
		CHECK(st["packets_per_s"].get<uint64_t>() > 0);
		CHECK(std::stod(st["vectors_per_call"].get<std::string>()) > 0);
		CHECK(std::stod(st["ns_per_packet"].get<std::string>()) > 0);
		CHECK(st["cycles"].get<uint64_t>() > 0);
	}
	// net_null frames have no IP header: l3-demux drops each one
	CHECK(first["2_l3_demux"]["drop_UNHANDLED_PROTO_per_s"].get<uint64_t>() > 0);
	REQUIRE(after.size() == 2);
	// the clear's own reply is the empty period: every count is zero
	CHECK(after[0]["period_ms"] == 0);
	for (const char *s : {"0_build_meta", "1_gro", "2_l3_demux"}) {
		INFO("stage " << s);
		CHECK(after[0][s]["packets"] == 0);
		CHECK(after[0][s]["calls"] == 0);
		CHECK(after[0][s]["cycles"] == 0);
		CHECK(after[0][s]["dropped"] == 0);
		// the next period counts from the clear, below the run's totals
		CHECK(after[1][s]["packets"].get<uint64_t>() < first[s]["packets"].get<uint64_t>());
		CHECK(after[1][s]["packets"].get<uint64_t>() <= stages[s]["packets"].get<uint64_t>());
	}
	CHECK(after[1]["period_ms"].get<uint64_t>() < first["period_ms"].get<uint64_t>());
	// the totals are not reset
	CHECK(after[0]["rx_packets"].get<uint64_t>() >= first["rx_packets"].get<uint64_t>());
	CHECK(after[1]["rx_packets"].get<uint64_t>() >= after[0]["rx_packets"].get<uint64_t>());
}

TEST_CASE("--stats-view: the periodic line's view, and bad values exit 2", "[binary][runtime]")
{
	auto e = eal("view", "net_null0,copy=0");
	auto r = run_program(cmd(e, {"--duration", "1.3", "--stats-period", "0.5", "--pipeline",
				     "build-meta,l3-demux"}));
	CHECK(r.status == 0);
	INFO(r.out);
	// default (stages): every stage with its rate and vectors per call
	CHECK(std::regex_search(r.out, std::regex("\n  build-meta [0-9.]+[kMG]?/s v/call [0-9.]+ \\| l3-demux [0-9.]+[kMG]?/s v/call [0-9.]+ drop UNHANDLED_PROTO")));
	r = run_program(cmd(eal("view_l", "net_null0,copy=0"),
			    {"--duration", "1.3", "--stats-period", "0.5", "--stats-view", "lcores"}));
	CHECK(r.status == 0);
	CHECK(std::regex_search(r.out, std::regex("\n  lcore[0-9]+ [0-9.]+[kMG]?/s polls [0-9.]+[kMG]?/s empty [0-9]+% busy [0-9]+%")));
	r = run_program(cmd(eal("view_p", "net_null0,copy=0"),
			    {"--duration", "1.3", "--stats-period", "0.5", "--set", "run.stats_view=ports"}));
	CHECK(r.status == 0);
	CHECK(std::regex_search(r.out, std::regex("\n  port0_q0 [0-9.]+[kMG]?/s")));
	// and each port's Gb/s, as testpmd's Rx-bps/Tx-bps
	CHECK(std::regex_search(r.out, std::regex("\n  port0 rx [0-9]+\\.[0-9]{3} Gb/s tx [0-9]+\\.[0-9]{3} Gb/s\n")));
	r = run_program({listrx_bin(), "--", "--stats-view", "fast"});
	CHECK(r.status == 2);
	CHECK(r.err == "listrx: --stats-view fast: [run] stats_view: must be one of stages, ports, lcores\n");
}

namespace {

// EAL's runtime directory for a file prefix (eal_get_runtime_dir(): root's
// /var/run/dpdk, else $XDG_RUNTIME_DIR/dpdk or /tmp/dpdk)
std::string eal_runtime_dir(const std::string &prefix)
{
	const char *xdg = std::getenv("XDG_RUNTIME_DIR");
	std::string base = getuid() == 0 ? "/var/run" : xdg ? xdg : "/tmp";
	return base + "/dpdk/" + prefix;
}

// The file prefix a run announced on its "telemetry: ..." line ("" if none).
std::string announced_prefix(const std::string &out)
{
	std::smatch m;
	static const std::regex line("telemetry: dpdk-telemetry\\.py -f (\\S+)\n");
	return std::regex_search(out, m, line) ? m[1].str() : "";
}

} // namespace

TEST_CASE("without --file-prefix each run gets its own EAL prefix, announced and removed at exit",
	  "[binary][eal]")
{
	const std::vector<std::string> e = {"--no-huge", "--no-pci", "--no-shconf", "-m", "256",
					    "--vdev", "net_null0,copy=0"};
	std::string out_a = lrx_test::scratch_path("prefix-a.out");
	std::string out_b = lrx_test::scratch_path("prefix-b.out");
	int a = lrx_test::spawn_program(cmd(e, {"--duration", "6", "--stats-period", "0"}), out_a);
	int b = lrx_test::spawn_program(cmd(e, {"--duration", "6", "--stats-period", "0"}), out_b);
	REQUIRE(a > 0);
	REQUIRE(b > 0);
	CHECK(lrx_test::wait_for_text(out_a, "telemetry: ", 30));
	CHECK(lrx_test::wait_for_text(out_b, "telemetry: ", 30));
	std::string pa = announced_prefix(lrx_test::read_file(out_a));
	std::string pb = announced_prefix(lrx_test::read_file(out_b));
	CHECK(pa == "listrx-" + std::to_string(a));
	CHECK(pb == "listrx-" + std::to_string(b));
	// each answers on its own socket: the config it reports is its own
	if (lrx_test::telemetry_unavailable().empty()) {
		for (const auto &p : {pa, pb}) {
			json config = lrx_test::telemetry_reply(
				lrx_test::telemetry_query(p, {"/listrx/config"}), "/listrx/config");
			INFO(p << ": " << config.dump());
			REQUIRE(config.is_object());
			CHECK(config["eal"]["args"].get<std::string>().find("--file-prefix " + p) !=
			      std::string::npos);
		}
	}
	kill(a, SIGINT);
	kill(b, SIGINT);
	CHECK(lrx_test::wait_program(a, 30) == 0);
	CHECK(lrx_test::wait_program(b, 30) == 0);
	CHECK(access(eal_runtime_dir(pa).c_str(), F_OK) != 0);
	CHECK(access(eal_runtime_dir(pb).c_str(), F_OK) != 0);

	// a prefix the user gives is used as given, and its empty directory removed
	std::string mine = lrx_test::file_prefix("given");
	auto e2 = e;
	e2.insert(e2.end(), {"--file-prefix", mine});
	auto r = run_program(cmd(e2, {"--packets", "1000", "--stats-period", "0"}));
	CHECK(r.status == 0);
	CHECK(announced_prefix(r.out) == mine);
	CHECK(access(eal_runtime_dir(mine).c_str(), F_OK) != 0);
	// a failed EAL start (hugepages needed, none here) leaves nothing either
	r = run_program({listrx_bin(), "-m", "64", "--no-pci", "--", "--packets", "1"});
	if (r.status == 2 && r.err.find("EAL initialisation failed") != std::string::npos) {
		std::smatch m;
		REQUIRE(std::regex_search(r.err, m, std::regex("--file-prefix (listrx-[0-9]+)")));
		CHECK(access(eal_runtime_dir(m[1].str()).c_str(), F_OK) != 0);
	}
}

TEST_CASE("a polling lcore on a CPU another process keeps busy is warned about", "[binary][eal]")
{
	if (lrx_test::allowed_cpus().size() < 2) {
		WARN("SKIPPED: needs 2 CPUs this process may use (lcore 1 on the second)");
		return;
	}
	const std::string cpu = std::to_string(lrx_test::lcore_cpu(1));
	const std::vector<std::string> e = {"--lcores", "1@" + cpu, "--no-huge", "--no-pci",
					    "--no-shconf", "-m", "256", "--vdev", "net_null0,copy=0"};
	std::string out = lrx_test::scratch_path("busy-first.out");
	// the first run polls CPU 1 flat out, as a poll-mode process does
	int first = lrx_test::spawn_program(cmd(e, {"--duration", "8", "--stats-period", "0"}), out);
	REQUIRE(first > 0);
	REQUIRE(lrx_test::wait_for_text(out, "telemetry: ", 30));
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	auto r = run_program(cmd(e, {"--packets", "1000", "--stats-period", "0"}));
	kill(first, SIGINT);
	CHECK(lrx_test::wait_program(first, 30) == 0);
	INFO(r.err);
	CHECK(r.status == 0);
	CHECK(r.err.find("listrx: warning: polling lcore 1 runs on CPU " + cpu + ", which was ") !=
	      std::string::npos);
	CHECK(r.err.find("choose a free CPU with EAL -l") != std::string::npos);
}

TEST_CASE("--reps N: N fresh runs, a line each, median [min-max] and every run in the JSON",
	  "[binary][reps]")
{
	std::string js = lrx_test::scratch_path("reps.json");
	auto r = run_program(cmd(eal("reps", "net_synth0,profile=udp64"),
				 {"--reps", "3", "--packets", "20000", "--pipeline", "build-meta,l3-demux",
				  "--json", js}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	for (const char *line : {"rep 1/3: ", "rep 2/3: ", "rep 3/3: ",
				 "==== listrx --reps 3: 3 run(s) measured", "\nMpps ",
				 "\nns/packet (wall) "})
		CHECK(r.out.find(line) != std::string::npos);
	json s = load_json(js);
	CHECK(s["reps"] == 3);
	CHECK(s["measured"] == 3);
	REQUIRE(s["runs"].size() == 3);
	std::vector<double> mpps;
	for (const auto &run : s["runs"]) {
		CHECK(run["rx_packets"] == 20000);
		CHECK(run["delivered"] == 20000);
		CHECK(run["mbufs_in_use_at_exit"] == 0);
		mpps.push_back(run["mpps"].get<double>());
	}
	std::sort(mpps.begin(), mpps.end());
	CHECK(s["mpps"]["median"].get<double>() == Approx(mpps[1]));
	CHECK(s["mpps"]["min"].get<double>() == Approx(mpps[0]));
	CHECK(s["mpps"]["max"].get<double>() == Approx(mpps[2]));
	CHECK(s["delivered"]["median"] == 20000);
}

TEST_CASE("--reps: bad counts and a run without an end exit 2; Ctrl-C ends after the current rep",
	  "[binary][reps]")
{
	for (const char *bad : {"0", "abc", "1001", "-2"}) {
		auto r = run_program({listrx_bin(), "--", "--reps", bad, "--packets", "10"});
		INFO(bad << ": " << r.err);
		CHECK(r.status == 2);
		CHECK(r.err.find(std::string("--reps ") + bad + ": must be an integer in 1..1000") !=
		      std::string::npos);
	}
	auto r = run_program({listrx_bin(), "--", "--reps", "2"});
	CHECK(r.status == 2);
	CHECK(r.err.find("each rep must stop by itself: give --duration or --packets") !=
	      std::string::npos);

	std::string out = lrx_test::scratch_path("reps-int.out");
	int pid = lrx_test::spawn_program(cmd(eal("repsint", "net_null0,copy=0"),
					      {"--reps", "5", "--duration", "1.5"}),
					  out);
	REQUIRE(pid > 0);
	REQUIRE(lrx_test::wait_for_text(out, "rep 1/5: ", 60));
	std::this_thread::sleep_for(std::chrono::milliseconds(500));
	kill(pid, SIGINT); // to this process only: it passes the signal on
	CHECK(lrx_test::wait_program(pid, 30) == 0);
	std::string text = lrx_test::read_file(out);
	INFO(text);
	CHECK(text.find("rep 2/5: stopped by a signal: not measured") != std::string::npos);
	CHECK(text.find("==== listrx --reps 5: 1 run(s) measured") != std::string::npos);
	CHECK(text.find("rep 3/5") == std::string::npos);
}

TEST_CASE("a source that idles: busy ns/packet beside wall, and busy is the headline",
	  "[binary][report]")
{
	// 50 kpps from net_synth: almost every poll is empty
	std::string js = lrx_test::scratch_path("idle.json");
	auto r = run_program(cmd(eal("idle", "net_synth0,profile=udp64,rate=50000"),
				 {"--duration", "1", "--json", js, "--stats-period", "0"}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	REQUIRE(s["rx_packets"].get<uint64_t>() > 0);
	CHECK(s["empty_poll_share"].get<double>() >= 0.5);
	CHECK(s["ns_per_packet_headline"] == "busy");
	double busy = s["busy_ns_per_packet"].get<double>();
	CHECK(busy > 0);
	CHECK(busy < s["ns_per_packet"].get<double>());
	CHECK(busy == Approx(s["busy_cycles_per_packet"].get<double>() * 1e9 /
			     s["tsc_hz"].get<double>()).epsilon(1e-4));
	CHECK(r.out.find(" ns/packet busy (TSC in non-empty polls)") != std::string::npos);
	CHECK(r.out.find("the source idled: ") != std::string::npos);

	// a source that never idles: wall is the headline, no such line
	r = run_program(cmd(eal("busy", "net_null0,copy=0"),
			    {"--packets", "200000", "--json", js, "--stats-period", "0"}));
	REQUIRE(r.status == 0);
	s = load_json(js);
	CHECK(s["ns_per_packet_headline"] == "wall");
	CHECK(r.out.find("the source idled") == std::string::npos);
	// stats level off does not time polls: no busy figure
	r = run_program(cmd(eal("off", "net_null0,copy=0"), {"--packets", "200000", "--json", js,
							      "--stats-period", "0", "--stats-level",
							      "off"}));
	REQUIRE(r.status == 0);
	s = load_json(js);
	CHECK(s["busy_ns_per_packet"].is_null());
	CHECK(s["ns_per_packet_headline"] == "wall");
	CHECK(r.out.find("ns/packet busy") == std::string::npos);
}

TEST_CASE("ports report bytes and Gb/s, as testpmd does", "[binary][ports]")
{
	// udp64: 64-byte frames on the wire, 60 in the mbuf (no FCS)
	std::string js = lrx_test::scratch_path("port_bytes.json");
	auto r = run_program(cmd(eal("port_bytes", "net_synth0,profile=udp64"),
				 {"--packets", "100000", "--json", js, "--stats-period", "0"}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = json::parse(lrx_test::read_file(js));
	const json &p = s["ports"][0];
	uint64_t ipackets = p["ipackets"].get<uint64_t>();
	REQUIRE(ipackets >= 100000);
	CHECK(p["ibytes"].get<uint64_t>() == 60 * ipackets);
	CHECK(p["obytes"].get<uint64_t>() == 0);
	double seconds = s["duration_s"].get<double>();
	CHECK(p["rx_gbps"].get<double>() ==
	      Approx(60.0 * 8 * (double)ipackets / seconds / 1e9).epsilon(0.01));
	// the text table has the same byte count
	CHECK(r.out.find(" " + std::to_string(60 * ipackets) + " ") != std::string::npos);
	CHECK(r.out.find("rx Gb/s") != std::string::npos);
}
