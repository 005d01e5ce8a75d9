// SPDX-License-Identifier: BSD-3-Clause
// XDP_REDIRECT across ports, end to end (docs/xdp.md): the listrx
// binary with two (or four) ports and a redirect program; the frames must
// leave on the target port and on no other: its opackets equal the frames
// received, the ingress port transmits nothing, the TX pcap of the target
// holds the received frames byte for byte, and every mbuf is back in its
// pool at exit.
#include <catch2/catch.hpp>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pcap_file.h"
#include "run_binary.h"

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

json load_json(const std::string &path)
{
	std::string text = lrx_test::read_file(path);
	INFO("summary file " << path);
	REQUIRE_FALSE(text.empty());
	return json::parse(text);
}

std::vector<std::string> listrx_with(const std::string &prefix,
				     const std::vector<std::string> &vdevs)
{
	std::vector<std::string> v = {listrx_bin(), "--lcores",
				      "0@" + std::to_string(lrx_test::lcore_cpu(0)), "--no-huge", "--no-pci",
				      "--no-shconf", "-m", "512", "--file-prefix",
				      lrx_test::file_prefix(prefix)};
	for (const auto &d : vdevs) {
		v.push_back("--vdev");
		v.push_back(d);
	}
	v.push_back("--");
	return v;
}

const json &port_by_id(const json &s, unsigned port_id)
{
	for (const json &p : s["ports"])
		if (p["port_id"] == port_id)
			return p;
	FAIL("no port " << port_id << " in the summary");
	return s; // not reached
}

const json &xdp_stage(const json &s)
{
	for (const json &st : s["stages"])
		if (st["name"] == "xdp")
			return st;
	FAIL("no xdp stage in the summary");
	return s; // not reached
}

// The XDP redirect contract checked on a summary: `n` frames received on
// `from`, all of them transmitted on `to`, none on any other port.
void require_redirected(const json &s, unsigned n, unsigned from, unsigned to)
{
	INFO(s.dump(1));
	CHECK(s["rx_packets"] == n);
	CHECK(s["tx_packets"] == n);
	CHECK(s["delivered"] == 0);
	CHECK(s["dropped"] == 0);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	CHECK(port_by_id(s, from)["ipackets"] == n);
	for (const json &p : s["ports"]) {
		INFO("port " << p["port_id"]);
		CHECK(p["opackets"] == (p["port_id"] == to ? n : 0u));
		CHECK(p["oerrors"] == 0);
	}
	const json &x = xdp_stage(s);
	CHECK(x["redirected"] == n);
	CHECK(x["counters"]["redirect"] == n);
	CHECK(x["counters"]["aborted"] == 0);
}

} // namespace

TEST_CASE("XDP redirect:1: frames from port 0 leave on port 1, byte-identical",
	  "[xdp][redirect]")
{
	const unsigned n = 1000;
	const auto frames = lrx_test::sample_frames(n, 11);
	const std::string in = lrx_test::scratch_path("xdp-redir-in.pcap");
	REQUIRE(lrx_test::pcap_write(in, frames));

	// native: first stage on the raw frame; generic: after build-meta
	// (ingress port from the metadata); both engines
	struct Variant {
		const char *mode, *pipeline, *engine;
	};
	for (const Variant &v : {Variant{"native", "none", "burst"},
				 Variant{"native", "none", "packet"},
				 Variant{"generic", "build-meta", "burst"},
				 Variant{"generic", "build-meta", "packet"}}) {
		const std::string tag = std::string(v.mode) + "-" + v.engine;
		INFO("mode " << v.mode << ", engine " << v.engine);
		const std::string out = lrx_test::scratch_path("xdp-redir-out-" + tag + ".pcap");
		const std::string js = lrx_test::scratch_path("xdp-redir-" + tag + ".json");
		std::remove(out.c_str());
		auto argv = listrx_with("xdpredir" + tag,
					{"net_pcap0,rx_pcap=" + in,
					 "net_pcap1,tx_pcap=" + out});
		argv.insert(argv.end(), {"--packets", std::to_string(n), "--stats-period", "0",
					 "--engine", v.engine, "--pipeline", v.pipeline,
					 "--xdp-prog", "redirect:1", "--xdp-mode", v.mode,
					 "--json", js});
		auto r = run_program(argv);
		INFO(r.out << r.err);
		REQUIRE(r.status == 0);
		json s = load_json(js);
		require_redirected(s, n, 0, 1);
		std::vector<lrx_test::Frame> got;
		REQUIRE(lrx_test::pcap_read(out, got));
		REQUIRE(got.size() == frames.size());
		for (size_t i = 0; i < n; i++) {
			INFO("frame " << i);
			REQUIRE(got[i] == frames[i]);
		}
	}
}

TEST_CASE("XDP redirect:1 from net_synth: port 1 transmits what port 0 received",
	  "[xdp][redirect]")
{
	const unsigned n = 100000;
	const std::string out = lrx_test::scratch_path("xdp-redir-synth.pcap");
	const std::string js = lrx_test::scratch_path("xdp-redir-synth.json");
	std::remove(out.c_str());
	auto argv = listrx_with("xdpredirsynth",
				{"net_synth0,profile=udp64", "net_pcap0,tx_pcap=" + out});
	argv.insert(argv.end(), {"--packets", std::to_string(n), "--stats-period", "0",
				 "--xdp-prog", "redirect:1", "--json", js});
	auto r = run_program(argv);
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	REQUIRE(port_by_id(s, 0)["device"] == "net_synth0");
	REQUIRE(port_by_id(s, 1)["device"] == "net_pcap0");
	require_redirected(s, n, 0, 1);
	std::vector<lrx_test::Frame> got;
	REQUIRE(lrx_test::pcap_read(out, got));
	CHECK(got.size() == n);
	for (const auto &f : got)
		CHECK(f.size() == 60); // udp64: 60-byte frames (64 with the FCS)
}

#ifdef LRX_XDP_TEST_PROGS_DIR
// tests/xdp/progs/redirect_ctx.bpf.c: frames whose ingress_ifindex (the
// DPDK port id) is 3 are sent to port 2 with bpf_redirect(2, 0). Four
// ports so that both ids exist: two idle rings, the pcap TX port 2 and
// the source port 3.
TEST_CASE("XDP eBPF bpf_redirect: redirect_ctx.bpf.o sends port 3's frames out of port 2",
	  "[xdp][redirect][ebpf]")
{
	const unsigned n = 1000;
	const auto frames = lrx_test::sample_frames(n, 12);
	const std::string in = lrx_test::scratch_path("xdp-bpfredir-in.pcap");
	REQUIRE(lrx_test::pcap_write(in, frames));
	const std::string obj = std::string(LRX_XDP_TEST_PROGS_DIR) + "/redirect_ctx.bpf.o";
	for (const char *jit : {"1", "0"}) {
		for (const char *mode : {"native", "generic"}) {
			const std::string tag = std::string(mode) + "-jit" + jit;
			INFO("mode " << mode << ", jit " << jit);
			const std::string out =
				lrx_test::scratch_path("xdp-bpfredir-out-" + tag + ".pcap");
			const std::string js = lrx_test::scratch_path("xdp-bpfredir-" + tag + ".json");
			std::remove(out.c_str());
			auto argv = listrx_with("xdpbpfredir" + tag,
						{"net_ring0", "net_ring1",
						 "net_pcap0,tx_pcap=" + out,
						 "net_pcap1,rx_pcap=" + in});
			argv.insert(argv.end(),
				    {"--packets", std::to_string(n), "--stats-period", "0",
				     "--pipeline",
				     std::string(mode) == "generic" ? "build-meta" : "none",
				     "--xdp-prog", obj, "--xdp-mode", mode, "--xdp-jit", jit,
				     "--json", js});
			auto r = run_program(argv);
			INFO(r.out << r.err);
			REQUIRE(r.status == 0);
			json s = load_json(js);
			REQUIRE(port_by_id(s, 2)["device"] == "net_pcap0");
			REQUIRE(port_by_id(s, 3)["device"] == "net_pcap1");
			require_redirected(s, n, 3, 2);
			std::vector<lrx_test::Frame> got;
			REQUIRE(lrx_test::pcap_read(out, got));
			REQUIRE(got.size() == frames.size());
			for (size_t i = 0; i < n; i++) {
				INFO("frame " << i);
				REQUIRE(got[i] == frames[i]);
			}
		}
	}
}
#endif
