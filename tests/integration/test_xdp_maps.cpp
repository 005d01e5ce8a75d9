// SPDX-License-Identifier: BSD-3-Clause
// The XDP program's maps in the summary (JSON maps[], the text summary's
// short form) and telemetry /listrx/xdp/maps, as bpftool map dump. The
// kernel comparison of the same dump is in tests/xdp/test_xdp_kernel.cpp.
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

std::string prog(const char *name)
{
	return std::string(LRX_XDP_PROGS_DIR) + "/" + name + ".bpf.o";
}

// "blocked_ports:1=0,2=0,...,n=0"
std::string many_ports(unsigned n)
{
	std::string s = "blocked_ports:";
	for (unsigned p = 1; p <= n; p++)
		s += (p > 1 ? "," : "") + std::to_string(p) + "=0";
	return s;
}

} // namespace

TEST_CASE("XDP maps in the summary: every entry in the JSON, counts of the frames sent",
	  "[binary][xdp][maps]")
{
	std::string js = lrx_test::scratch_path("maps.json");
	// two ports: UDP (mixed, IPv4 and IPv6) and TCP frames
	auto r = run_program({listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			      "--file-prefix", lrx_test::file_prefix("maps"), "--vdev",
			      "net_synth0,profile=mixed,ipv6_share=0.2", "--vdev",
			      "net_synth1,profile=tcp-stream", "--", "--packets", "20000",
			      "--stats-period", "0", "--xdp-prog", prog("xdp_proto_count"), "--json", js});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = json::parse(lrx_test::read_file(js));
	REQUIRE(s["maps"].size() == 1);
	const json &m = s["maps"][0];
	CHECK(m["name"] == "proto_count");
	CHECK(m["type"] == "array");
	CHECK(m["key_size"] == 4);
	CHECK(m["value_size"] == 8);
	REQUIRE(m["entries"].size() == 256); // an array: every index, as bpftool
	uint64_t sum = 0, udp = 0, tcp = 0;
	for (size_t i = 0; i < m["entries"].size(); i++) {
		const json &e = m["entries"][i];
		CHECK(e["key_int"] == i);
		sum += e["value_int"].get<uint64_t>();
		if (i == 17)
			udp = e["value_int"];
		if (i == 6)
			tcp = e["value_int"];
	}
	CHECK(m["entries"][17]["key"] == "11 00 00 00");
	// decoded by the object's BTF (__u32 key, __u64 value), as bpftool -j
	CHECK(m["entries"][17]["formatted"] == json{{"key", 17}, {"value", udp}});
	// every frame counted once, by its protocol: port 0 sends UDP, port 1 TCP
	CHECK(sum == s["rx_packets"].get<uint64_t>());
	CHECK(udp == s["ports"][0]["queues"][0]["rx_packets"].get<uint64_t>());
	CHECK(tcp == s["ports"][1]["queues"][0]["rx_packets"].get<uint64_t>());
	// the text: non-zero entries only
	CHECK(r.out.find("xdp proto_count (lcore ") != std::string::npos);
	CHECK(r.out.find("(254 zero, not shown)") != std::string::npos);
	// in columns: the key and the value as numbers (BTF), exact
	CHECK(r.out.find("(254 zero, not shown)\n        key     value\n") != std::string::npos);
	CHECK(r.out.find("\n         17 " + std::string(9 - std::to_string(udp).size(), ' ') +
			 std::to_string(udp) + "\n") != std::string::npos);
}

TEST_CASE("XDP maps: the text summary shows at most 16 entries of a map, the JSON all",
	  "[binary][xdp][maps]")
{
	std::string js = lrx_test::scratch_path("maps-many.json");
	auto r = run_program({listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			      "--file-prefix", lrx_test::file_prefix("maps-many"), "--vdev",
			      "net_synth0,profile=udp64", "--", "--packets", "1000", "--stats-period",
			      "0", "--xdp-prog", prog("xdp_port_filter"), "--set",
			      "stage.xdp.map_init=" + many_ports(20), "--json", js});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = json::parse(lrx_test::read_file(js));
	REQUIRE(s["maps"].size() == 2);
	const json *blocked = nullptr;
	for (const auto &m : s["maps"])
		if (m["name"] == "blocked_ports")
			blocked = &m;
	REQUIRE(blocked != nullptr);
	CHECK((*blocked)["type"] == "hash");
	CHECK((*blocked)["entries"].size() == 20);
	CHECK(r.out.find("xdp blocked_ports (lcore ") != std::string::npos);
	CHECK(r.out.find("  ... 4 more\n") != std::string::npos);
}

TEST_CASE("XDP maps: telemetry /listrx/xdp/maps while running", "[binary][xdp][maps]")
{
	if (!lrx_test::telemetry_unavailable().empty()) {
		WARN("SKIPPED: " << lrx_test::telemetry_unavailable());
		return;
	}
	std::string prefix = lrx_test::file_prefix("maps-tel");
	int pid = lrx_test::spawn_program({listrx_bin(), "--no-huge", "--no-pci", "-m", "256",
					   "--file-prefix", prefix, "--vdev",
					   "net_synth0,profile=udp64", "--", "--duration", "6",
					   "--stats-period", "0", "--xdp-prog", prog("xdp_proto_count")},
					  "/dev/null");
	REQUIRE(pid > 0);
	std::string out;
	for (int attempt = 0; attempt < 40 && out.find("proto_count") == std::string::npos;
	     attempt++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(150));
		out = lrx_test::telemetry_query(prefix, {"/listrx/xdp/maps"});
	}
	kill(pid, SIGINT);
	CHECK(lrx_test::wait_program(pid, 30) == 0);
	INFO(out);
	CHECK(out.find("\"/listrx/xdp/maps\"") != std::string::npos);
	CHECK(out.find("_xdp_proto_count\": [\"array key 4 value 8 max_entries 256 entries 256\"") !=
	      std::string::npos);
	// KEY: VALUE, decoded by the object's BTF
	CHECK(out.find("\"17: ") != std::string::npos);
}
