// SPDX-License-Identifier: BSD-3-Clause
// GRO in the real binary: a pcap of a TCP stream (plus UDP) through
// build-meta,gro,l3-demux with impl=kernel and impl=rte; the JSON summary's
// gro counters give the merge and l3-demux delivers everything.
#include <catch2/catch.hpp>

#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

#include "pcap_file.h"
#include "run_binary.h"
#include "frames.h"

namespace fr = lrx_test::frames;

namespace {

uint64_t json_counter(const std::string &json, const std::string &name)
{
	// the gro entry's "counters" object holds unique names
	std::smatch m;
	std::regex re("\"" + name + "\": *([0-9]+)");
	if (!std::regex_search(json, m, re))
		return UINT64_MAX;
	return std::stoull(m[1]);
}

} // namespace

TEST_CASE("gro: listrx binary merges a pcap TCP stream with both impls",
	  "[gro][binary]")
{
	const std::string bin = lrx_test::listrx_bin();
	if (access(bin.c_str(), X_OK) != 0) {
		WARN("SKIPPED: " << bin << " not built");
		return;
	}
	std::vector<lrx_test::Frame> frames;
	for (uint32_t i = 0; i < 440; i++) {
		fr::Spec s;
		s.l4 = fr::L4::tcp;
		s.sport = 40000;
		s.dport = 5201;
		s.seq = 1 + i * 1460;
		s.ack = 1;
		s.ip_id = (uint16_t)i;
		s.payload.assign(1460, (uint8_t)i);
		s.default_payload = false;
		s.pad_to = 0;
		frames.push_back(fr::build(s).data);
		if (i % 100 == 50) // 4 UDP datagrams: pass through
			frames.push_back(fr::udp4(7000, 7001).data);
	}
	const std::string pcap = lrx_test::scratch_path("gro_stream.pcap");
	REQUIRE(lrx_test::pcap_write(pcap, frames));
	for (const char *impl : {"kernel", "rte"}) {
		INFO("impl " << impl);
		const std::string json = lrx_test::scratch_path(
			std::string("gro_summary_") + impl + ".json");
		lrx_test::RunResult r = lrx_test::run_program(
			{bin, "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			 "--lcores", "0@" + std::to_string(lrx_test::lcore_cpu(0)), "--file-prefix",
			 lrx_test::file_prefix(std::string("gro_bin_") + impl),
			 "--vdev", "net_pcap0,rx_pcap=" + pcap + ",tx_iface=lo",
			 "--", "--pipeline",
			 std::string("build-meta,") + (std::string(impl) == "rte" ? "rte-gro" : "gro") +
				 ",l3-demux",
			 "--packets", std::to_string(frames.size()), "--burst", "32",
			 "--stats-period", "0", "--json", json});
		INFO(r.out << r.err);
		REQUIRE(r.status == 0);
		std::string summary = lrx_test::read_file(json);
		REQUIRE(!summary.empty());
		REQUIRE(frames.size() == 444);
		REQUIRE(json_counter(summary, "segments_in") == 444);
		// 10 super-packets of 44 x 1460 (64 KB rule) + 4 UDP; a poll
		// preempted for longer than the 1 ms age may split one more
		uint64_t out = json_counter(summary, "packets_out");
		REQUIRE(out >= 14);
		REQUIRE(out <= 15);
		REQUIRE(json_counter(summary, "merged") == 444 - out);
		REQUIRE(summary.find("\"drops\": {}") != std::string::npos);
		REQUIRE(r.out.find("mbufs in use at exit: 0") != std::string::npos);
	}
}
