// SPDX-License-Identifier: BSD-3-Clause
// --trace N: the path of the first N packets, identical for every engine
// on the same input, in the text summary and the JSON.
#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "run_binary.h"
#include "telemetry_client.h"

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

struct Traced {
	std::string text;
	json trace;
	json summary;
};

Traced traced_run(const std::string &vdev, const std::string &engine, const std::string &n,
		  const std::string &packets)
{
	std::string js = lrx_test::scratch_path("trace.json");
	auto r = run_program({listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			      "--file-prefix", lrx_test::file_prefix("trace"), "--vdev", vdev, "--",
			      "--packets", packets, "--engine", engine, "--pipeline",
			      "build-meta,gro,l3-demux", "--trace", n, "--stats-period", "0",
			      "--json", js});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	Traced t;
	size_t at = r.out.find("\ntrace (");
	REQUIRE(at != std::string::npos);
	size_t end = r.out.find("\n\n", at + 1);
	t.text = r.out.substr(at, end == std::string::npos ? std::string::npos : end - at);
	t.summary = json::parse(lrx_test::read_file(js));
	REQUIRE(t.summary.contains("trace"));
	t.trace = t.summary["trace"];
	return t;
}

} // namespace

TEST_CASE("--trace: every engine gives the same trace on the same input", "[binary][trace]")
{
	struct Input {
		const char *vdev, *n, *packets;
	};
	// mixed: drops by reason, IPv6; tcp-stream: GRO holds, merges, flushes
	for (const Input &in : {Input{"net_synth0,profile=mixed,ipv6_share=0.2,malformed_share=0.1", "200", "20000"},
				Input{"net_synth0,profile=tcp-stream", "40", "5000"}}) {
		INFO("input " << in.vdev);
		Traced ref = traced_run(in.vdev, "packet", in.n, in.packets);
		REQUIRE(ref.trace.size() == std::stoul(in.n));
		for (const char *engine : {"burst", "hybrid:2", "static", "graph"}) {
			INFO("engine " << engine);
			Traced t = traced_run(in.vdev, engine, in.n, in.packets);
			CHECK(t.text == ref.text);
			CHECK(t.trace == ref.trace);
		}
		// each packet: build-meta first, then a fate at the sink unless a
		// stage merged it into another
		uint64_t drops = 0, merged = 0, held = 0;
		for (const auto &p : ref.trace) {
			INFO("packet " << p["packet"]);
			const auto &ev = p["events"];
			REQUIRE(ev.size() >= 2);
			CHECK(ev[0]["at"] == "build-meta");
			CHECK(ev[0]["set"].contains("protocol"));
			const std::string last = ev.back()["verdict"];
			if (ev.back()["at"] == "sink") {
				drops += last.rfind("drop ", 0) == 0;
			} else {
				CHECK(last == "consumed (merged)");
				merged++;
			}
			for (const auto &e : ev)
				held += e["verdict"] == "consumed (held)";
		}
		if (std::string(in.vdev).find("mixed") != std::string::npos) {
			CHECK(drops > 0);
			CHECK(ref.text.find("drop IP_CSUM") != std::string::npos);
		} else {
			CHECK(merged > 0);
			CHECK(held > 0);
			CHECK(ref.text.find("released (flushed) gso_size=") != std::string::npos);
		}
	}
}

TEST_CASE("--trace: bad values exit 2 naming what is valid; no trace without it", "[binary][trace]")
{
	for (const char *bad : {"abc", "-1", "4097"}) {
		auto r = run_program({listrx_bin(), "--", "--packets", "10", "--trace", bad});
		INFO(bad << ": " << r.err);
		CHECK(r.status == 2);
		CHECK(r.err.find(std::string("--trace ") + bad + ": [run] trace: must be an integer in 0..4096") !=
		      std::string::npos);
	}
	std::string js = lrx_test::scratch_path("notrace.json");
	auto r = run_program({listrx_bin(), "--", "--packets", "1000", "--json", js});
	REQUIRE(r.status == 0);
	CHECK_FALSE(json::parse(lrx_test::read_file(js)).contains("trace"));
	CHECK(r.out.find("\ntrace (") == std::string::npos);
}

TEST_CASE("--trace: telemetry /listrx/trace while running", "[binary][trace]")
{
	if (!lrx_test::telemetry_unavailable().empty()) {
		WARN("SKIPPED: " << lrx_test::telemetry_unavailable());
		return;
	}
	std::string prefix = lrx_test::file_prefix("trace-tel");
	int pid = lrx_test::spawn_program({listrx_bin(), "--no-huge", "--no-pci", "-m", "256",
					   "--file-prefix", prefix, "--vdev",
					   "net_synth0,profile=udp64", "--", "--duration", "6",
					   "--stats-period", "0", "--pipeline", "build-meta,l3-demux",
					   "--trace", "3"},
					  "/dev/null");
	REQUIRE(pid > 0);
	std::string out;
	for (int attempt = 0; attempt < 40 && out.find("packet_2") == std::string::npos; attempt++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(150));
		out = lrx_test::telemetry_query(prefix, {"/listrx/trace"});
	}
	kill(pid, SIGINT);
	CHECK(lrx_test::wait_program(pid, 30) == 0);
	INFO(out);
	CHECK(out.find("\"/listrx/trace\"") != std::string::npos);
	CHECK(out.find("\"packet_0\": [\"build-meta   continue protocol=0x0800") != std::string::npos);
	CHECK(out.find("\"sink         delivered\"") != std::string::npos);
	CHECK(out.find("packet_3") == std::string::npos);
}
