// SPDX-License-Identifier: BSD-3-Clause
// Fault injection against the listrx binary (docs/reliability.md): a pool
// too small for the traffic, a TX port that stalls, ports that cannot be
// set up, and SIGINT/SIGTERM at random moments from EAL initialisation to
// shutdown. Each run must end the way the guarantees say: exit status,
// counters, and every mbuf back in its pool.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <unistd.h>

#include "run_binary.h"

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

std::vector<std::string> eal(const std::string &name, std::vector<std::string> vdevs)
{
	std::vector<std::string> v = lrx_test::lcores_args(1);
	for (const char *a : {"--no-huge", "--no-pci", "--no-shconf", "-m", "512", "--file-prefix"})
		v.push_back(a);
	v.push_back(lrx_test::file_prefix(name));
	for (auto &d : vdevs) {
		v.push_back("--vdev");
		v.push_back(d);
	}
	return v;
}

std::vector<std::string> cmd(std::vector<std::string> eal_args, std::vector<std::string> own)
{
	std::vector<std::string> v{listrx_bin()};
	v.insert(v.end(), eal_args.begin(), eal_args.end());
	v.push_back("--");
	v.insert(v.end(), own.begin(), own.end());
	return v;
}

std::string write_conf(const std::string &name, const std::string &text)
{
	std::string path = lrx_test::scratch_path(name);
	FILE *f = std::fopen(path.c_str(), "w");
	REQUIRE(f);
	std::fputs(text.c_str(), f);
	std::fclose(f);
	return path;
}

lrx_test::RunOptions within(double seconds)
{
	lrx_test::RunOptions o;
	o.timeout_s = seconds;
	return o;
}

json load_json(const std::string &path)
{
	std::string text = lrx_test::read_file(path);
	INFO("summary file " << path);
	REQUIRE_FALSE(text.empty());
	return json::parse(text);
}

uint64_t u64(const json &j, const char *key)
{
	INFO("key " << key);
	REQUIRE(j.contains(key));
	REQUIRE(j[key].is_number());
	return j[key].get<uint64_t>();
}

// rx + made = delivered + dropped + tx + merged + held (tx_failed is
// counted in dropped)
void require_consistent(const json &s)
{
	INFO(s.dump(1));
	CHECK(u64(s, "rx_packets") + u64(s, "made") ==
	      u64(s, "delivered") + u64(s, "dropped") + u64(s, "tx_packets") +
		      u64(s, "merged_segments") + u64(s, "held"));
	CHECK(u64(s, "mbufs_in_use_at_exit") == 0);
}

// A run that must end well: in time, exit 0, its summary consistent with
// every mbuf back; returns the summary.
json require_clean_run(const lrx_test::RunResult &r, const std::string &summary_path)
{
	INFO(r.out << r.err);
	REQUIRE_FALSE(r.timed_out);
	REQUIRE(r.status == 0);
	json s = load_json(summary_path);
	require_consistent(s);
	return s;
}

// Bad input: exit 2, stderr names it (expect), nothing ran (no summary).
void require_refused(const std::vector<std::string> &argv, const std::string &expect)
{
	auto r = run_program(argv, within(60));
	INFO(r.out << r.err);
	REQUIRE_FALSE(r.timed_out);
	CHECK(r.status == 2);
	CHECK(r.err.find(expect) != std::string::npos);
	CHECK(r.out.find("==== listrx summary") == std::string::npos);
}

} // namespace

TEST_CASE("mempool exhaustion: rx_nombuf counted, the loop keeps running, nothing leaks",
	  "[faults]")
{
	// 64 TCP flows into GRO from a pool of 100 mbufs with bursts of 64
	// (net_synth copy=1 takes the application's pool): a full poll leaves
	// GRO holding 64 segments (budget used: only old packets flushed), so
	// the next RX finds 36 mbufs for 64 and fails (rx_nombuf); that empty
	// poll flushes GRO, the buffers return and RX recovers.
	std::string js = lrx_test::scratch_path("nombuf.json");
	std::string conf = write_conf("nombuf.ini",
		"[mempool]\nmbufs = 100\ncache = 0\n"
		"[pipeline]\nburst = 64\nstages = build-meta, gro, l3-demux\n"
		"[telemetry]\nenabled = no\n");
	auto r = run_program(cmd(eal("nombuf", {"net_synth0,profile=tcp-stream,flows=64,copy=1"}),
				 {"--config", conf, "--duration", "2", "--stats-period", "0",
				  "--json", js}),
			     within(60));
	json s = require_clean_run(r, js);
	INFO(r.out << r.err);
	REQUIRE(s["ports"].size() == 1);
	CHECK(s["ports"][0]["rx_nombuf"].get<uint64_t>() > 0);
	// it kept receiving after running dry: far more packets than mbufs
	CHECK(u64(s, "rx_packets") > 100 * 100);
	REQUIRE(s["lcores"].size() == 1);
	CHECK(s["lcores"][0]["empty_polls"].get<uint64_t>() > 0);
	CHECK(s["lcores"][0]["packets"].get<uint64_t>() == u64(s, "rx_packets"));
}

TEST_CASE("TX ring full: failures counted as tx_failed and dropped, RX continues",
	  "[faults]")
{
	// port 1 is a net_ring whose ring nobody reads: after its 1023 slots
	// fill, every forwarded packet fails TX and must be freed and counted
	// (DEV_READY, as the kernel's dev_queue_xmit on a stopped queue).
	// net_ring never gives back what it accepted (its ring is the "wire"),
	// so exactly those mbufs are still out at exit and listrx reports them
	// (exit 1): every other mbuf, the 198977 failed ones included, is back.
	std::string js = lrx_test::scratch_path("txfull.json");
	std::string conf = write_conf("txfull.ini",
		"[port.0]\ndevice = net_null0\nforward = 1\n"
		"[port.1]\ndevice = net_ring0\n"
		"[lcore.0]\npoll = 0:0\n[telemetry]\nenabled = no\n");
	auto r = run_program(cmd(eal("txfull", {"net_null0,copy=0", "net_ring0"}),
				 {"--config", conf, "--packets", "200000", "--stats-period", "0",
				  "--json", js}),
			     within(60));
	INFO(r.out << r.err);
	REQUIRE_FALSE(r.timed_out);
	json s = load_json(js);
	INFO(s.dump(1));
	CHECK(u64(s, "rx_packets") == 200000);
	CHECK(u64(s, "rx_packets") ==
	      u64(s, "delivered") + u64(s, "dropped") + u64(s, "tx_packets") +
		      u64(s, "merged_segments") + u64(s, "held"));
	CHECK(u64(s, "tx_packets") == 1023);
	CHECK(u64(s, "tx_failed") == 200000 - 1023);
	CHECK(u64(s, "dropped") == u64(s, "tx_failed"));
	REQUIRE(s["drops"].is_object());
	CHECK(u64(s["drops"], "DEV_READY") == u64(s, "tx_failed"));
	CHECK(u64(s, "mbufs_in_use_at_exit") == u64(s, "tx_packets"));
	CHECK(r.status == 1);
	CHECK(r.err.find("1023 mbufs not returned") != std::string::npos);
}

namespace {
// listrx on net_synth with a link_down window (devargs), for `seconds`;
// the run must end well. Returns the run (out, err) and its summary.
std::pair<lrx_test::RunResult, json> run_with_link_window(const std::string &name,
							  const std::string &devargs,
							  const char *seconds)
{
	std::string js = lrx_test::scratch_path(name + ".json");
	auto r = run_program(cmd(eal(name, {"net_synth0," + devargs}),
				 {"--duration", seconds, "--stats-period", "0", "--json", js}),
			     within(60));
	json s = require_clean_run(r, js);
	return {r, s};
}
} // namespace

TEST_CASE("link down during the run: seen, counted, RX resumes when it is up, clean exit",
	  "[faults]")
{
	// net_synth takes its link down 300 ms after start for 400 ms (RX
	// delivers nothing then, as a NIC without carrier); listrx's monitor
	// reads the link 10 times a second
	auto [r, s] = run_with_link_window("linkflap", "link_down_ms=300,link_down_for_ms=400",
					   "1.5");
	INFO(r.out << r.err);
	const json &port = s["ports"][0];
	CHECK(port["link_down_events"] == 1);
	CHECK(port["link_up"] == true);
	double down = port["link_down_s"].get<double>();
	// 0.4 s, seen within 0.1 s at each end (less if a slow start-up, as
	// under ASan, began the run after the link went down)
	CHECK(down > 0.05);
	CHECK(down < 0.65);
	CHECK(s["lcores"][0]["empty_polls"].get<uint64_t>() > 0); // polled on while down
	CHECK(u64(s, "rx_packets") > 0);
	CHECK(r.err.find("port 0 (net_synth0): link down") != std::string::npos);
	CHECK(r.err.find("port 0 (net_synth0): link up after") != std::string::npos);
	CHECK(r.out.find("port 0 link: down 1 time(s) during the run") != std::string::npos);
}

TEST_CASE("link down until the end: still counted, still a clean exit", "[faults]")
{
	auto [r, s] = run_with_link_window("linkdown", "link_down_ms=200", "1");
	INFO(r.out << r.err);
	CHECK(s["ports"][0]["link_up"] == false);
	CHECK(s["ports"][0]["link_down_events"] == 1);
	CHECK(s["ports"][0]["link_down_s"].get<double>() > 0.5);
	CHECK(r.out.find("down at the end") != std::string::npos);
}

TEST_CASE("ports that cannot be set up: exit 2 naming the port, nothing started",
	  "[faults]")
{
	struct Case {
		const char *name;
		std::vector<std::string> vdevs;
		std::string conf;
		std::string expect; // in stderr
	};
	std::vector<Case> cases = {
		{"offload", {"net_ring0"}, "[port.0]\ndevice = net_ring0\noffloads_required = lro\n",
		 "lro"},
		{"mtu", {"net_ring0"}, "[port.0]\ndevice = net_ring0\nmtu = 9000\n", "9000"},
		{"missing", {"net_null0"}, "[port.0]\ndevice = net_nosuch0\n", "net_nosuch0"},
		{"baddevargs", {}, "[port.0]\ndevice = net_null9\ndevargs = nosuchkey=1\n",
		 "net_null9"},
		{"forward", {"net_null0"}, "[port.0]\ndevice = net_null0\nforward = 7\n", "forward"},
		{"lcore", {"net_null0"}, "[port.0]\ndevice = net_null0\n[lcore.63]\npoll = 0:0\n",
		 "lcore"},
	};
	for (const Case &c : cases) {
		SECTION(c.name) {
			std::string conf = write_conf(std::string("port_") + c.name + ".ini", c.conf);
			require_refused(cmd(eal(std::string("port") + c.name, c.vdevs),
					    {"--config", conf, "--duration", "5"}),
					c.expect);
		}
	}
}

TEST_CASE("bad devargs on the EAL command line: exit 2 with EAL's reason", "[faults]")
{
	require_refused(cmd(eal("evdevargs", {"net_null0,nosuchkey=1"}), {"--packets", "10"}),
			"EAL");
}

TEST_CASE("SIGINT/SIGTERM at random moments: exit 0, summary and full pool once running",
	  "[faults]")
{
	// delays, counted from the moment listrx catches the signal, cover
	// EAL initialisation (< ~0.3 s), the run, and the
	// shutdown after --duration 1 (a second signal 20 ms after the first
	// lands in the shutdown path in every run)
	std::mt19937 rng(std::random_device{}());
	std::uniform_real_distribution<double> early(0.0, 0.3), during(0.3, 1.0),
		shutdown(0.95, 1.3);
	int runs_with_summary = 0;
	for (int i = 0; i < 20; i++) {
		double delay = i % 3 == 0 ? early(rng) : i % 3 == 1 ? during(rng) : shutdown(rng);
		int sig = i % 2 ? SIGTERM : SIGINT;
		std::string js = lrx_test::scratch_path("rsig" + std::to_string(i) + ".json");
		std::string out = lrx_test::scratch_path("rsig" + std::to_string(i) + ".out");
		std::remove(js.c_str());
		int pid = lrx_test::spawn_program(
			cmd(eal("rsig" + std::to_string(i), {"net_null0,copy=0"}),
			    {"--duration", "1", "--json", js, "--stats-period", "0",
			     "--pipeline", "touch"}),
			out);
		REQUIRE(pid > 0);
		// the clock starts once listrx handles the signal: before that
		// (fork, exec, the dynamic loader) no code of ours runs at all
		REQUIRE(lrx_test::wait_signal_caught(pid, sig, 30));
		std::this_thread::sleep_for(std::chrono::duration<double>(delay));
		kill(pid, sig);
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		kill(pid, sig);
		int status = lrx_test::wait_program(pid, 60);
		std::string text = lrx_test::read_file(out);
		INFO("run " << i << " signal " << sig << " after " << delay << " s\n" << text);
		CHECK(status == 0);
		if (text.find("==== listrx summary") != std::string::npos) {
			runs_with_summary++;
			json s = load_json(js);
			require_consistent(s);
		}
	}
	// the runs signalled after start-up did print their summary
	CHECK(runs_with_summary >= 10);
}

TEST_CASE("bad XDP programs and options: exit 2 naming the input, nothing started",
	  "[faults][xdp]")
{
	const char *src = std::getenv("LISTRX_SOURCE_ROOT");
	const char *build = std::getenv("LISTRX_BUILD_ROOT");
	REQUIRE(src);
	REQUIRE(build);
	std::string corpus = std::string(src) + "/tests/fuzz/corpus/bpf_elf/";
	std::string bad_helper = std::string(build) + "/tests/xdp/bad_helper.bpf.o";
	std::string drop = std::string(build) + "/stages/xdp/xdp_drop.bpf.o";
	// a fuzz input (byte 0 picks the section, the rest is the object) on
	// which Debian's libbpf 1.1 crashes in bpf_object__open_file
	std::string segv_input = lrx_test::read_file(corpus + "libbpf_open_segv");
	REQUIRE(segv_input.size() > 1);
	std::string segv = lrx_test::scratch_path("libbpf_segv.o");
	{
		std::ofstream f(segv, std::ios::binary);
		f.write(segv_input.data() + 1, (std::streamsize)segv_input.size() - 1);
		REQUIRE(f.good());
	}
	// the same bytes under a long name: libbpf's refusal names the path
	// (twice, with ours) and must still reach stderr whole. The option's
	// value ("bpf:" + path) is 250 characters, under the config's limit
	// of 255, whatever the build directory's path (so not under it)
	std::string long_not_elf = "/tmp/lrx" + std::to_string(getpid()) + "-not_elf_";
	long_not_elf += std::string(246 - long_not_elf.size(), 'x');
	{
		std::string bytes = lrx_test::read_file(corpus + "not_elf");
		REQUIRE(!bytes.empty());
		std::ofstream f(long_not_elf, std::ios::binary);
		f.write(bytes.data(), (std::streamsize)bytes.size());
		REQUIRE(f.good());
	}
	struct Case {
		const char *name;
		std::vector<std::string> args;
		std::string expect; // in stderr
	};
	std::vector<Case> cases = {
		{"not_elf", {"--xdp-prog", "bpf:" + corpus + "not_elf"}, "not a proper ELF object"},
		{"not_elf_long_path", {"--xdp-prog", "bpf:" + long_not_elf},
		 "libbpf: elf: '" + long_not_elf + "' is not a proper ELF object"},
		{"truncated", {"--xdp-prog", "bpf:" + corpus + "truncated_elf"}, "truncated_elf"},
		{"missing", {"--xdp-prog", "/nonexistent/x.o"}, "/nonexistent/x.o: cannot open"},
		{"helper", {"--xdp-prog", bad_helper}, "calls helper 44 (bpf_xdp_adjust_head)"},
		// the child dies by the SEGV itself, in the ASan build too (its
		// handlers are reset to the default there)
		{"libbpf_crash", {"--xdp-prog", segv}, "libbpf crashed parsing it (signal 11)"},
		{"section", {"--xdp-prog", drop, "--xdp-section", "nosuch"},
		 "section 'nosuch': no such code section (the object has: xdp)"},
		{"builtin", {"--xdp-prog", "nosuchprog"}, "--xdp-prog nosuchprog: [xdp] prog: must be a built-in (drop, pass"},
		{"mode", {"--xdp-prog", "drop", "--xdp-mode", "driver"},
		 "--xdp-mode driver: [xdp] mode: must be one of native, generic"},
		{"jit", {"--xdp-prog", "drop", "--xdp-jit", "sometimes"}, "--xdp-jit sometimes"},
	};
	for (const Case &c : cases) {
		SECTION(c.name) {
			std::vector<std::string> own = c.args;
			own.insert(own.end(), {"--packets", "1000", "--stats-period", "0"});
			require_refused(cmd(eal(std::string("xdpbad") + c.name,
						{"net_null0,copy=0"}), own),
					c.expect);
		}
	}
	std::remove(segv.c_str());
	std::remove(long_not_elf.c_str());
}
