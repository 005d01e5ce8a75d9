// SPDX-License-Identifier: BSD-3-Clause
// --capture-drops / --capture-delivered: the pcapng files hold exactly the
// packets the summary counts, each with its verdict in the packet comment,
// and tcpdump reads them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "pcap_file.h"
#include "run_binary.h"

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

using lrx_test::PcapngPacket;

// the interface blocks' if_name options, in file order
std::vector<std::string> pcapng_interfaces;

std::vector<PcapngPacket> read_pcapng(const std::string &path)
{
	std::string why;
	std::vector<PcapngPacket> out = lrx_test::pcapng_read(path, pcapng_interfaces, why);
	INFO("pcapng " << path);
	REQUIRE(why == "");
	return out;
}

std::vector<std::string> mixed_run(const std::string &prefix, std::vector<std::string> own)
{
	std::vector<std::string> v{listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m",
				   "512", "--file-prefix", lrx_test::file_prefix(prefix), "--vdev",
				   "net_synth0,profile=mixed,ipv6_share=0.05,malformed_share=0.02",
				   "--", "--packets", "20000", "--pipeline",
				   "build-meta,gro,l3-demux"};
	v.insert(v.end(), own.begin(), own.end());
	return v;
}

// "listrx: drop IP_CSUM at l3-demux, port 0" -> IP_CSUM
std::string drop_reason_of(const std::string &comment)
{
	const std::string head = "listrx: drop ";
	if (comment.compare(0, head.size(), head) != 0)
		return "";
	size_t end = comment.find(' ', head.size());
	return comment.substr(head.size(), end - head.size());
}

// "listrx: drop IP_CSUM at l3-demux, port 0" -> l3-demux
std::string drop_stage_of(const std::string &comment)
{
	size_t at = comment.find(" at ");
	size_t end = comment.find(',', at);
	if (at == std::string::npos || end == std::string::npos)
		return "";
	return comment.substr(at + 4, end - at - 4);
}

} // namespace

TEST_CASE("--capture-drops writes every dropped packet with its reason, for every engine",
	  "[binary][capture]")
{
	for (const char *engine : {"packet", "burst", "hybrid:2", "static", "graph"}) {
		INFO("engine " << engine);
		std::string js = lrx_test::scratch_path("capture.json");
		std::string drops = lrx_test::scratch_path("drops.pcapng");
		std::string delivered = lrx_test::scratch_path("delivered.pcapng");
		auto r = run_program(mixed_run("capture", {"--engine", engine, "--json", js,
							   "--capture-drops", drops,
							   "--capture-delivered", delivered}));
		INFO(r.out << r.err);
		REQUIRE(r.status == 0);
		json s = json::parse(lrx_test::read_file(js));
		uint64_t dropped = s["dropped"].get<uint64_t>();
		REQUIRE(dropped > 0); // the mixed profile has malformed frames
		auto pkts = read_pcapng(drops);
		CHECK(pkts.size() == dropped);
		std::map<std::string, uint64_t> by_reason, by_stage_reason;
		for (const auto &p : pkts) {
			INFO("comment '" << p.comment << "'");
			std::string reason = drop_reason_of(p.comment);
			REQUIRE_FALSE(reason.empty());
			CHECK(p.captured == p.original);
			CHECK(p.captured > 0);
			by_reason[reason]++;
			by_stage_reason[drop_stage_of(p.comment) + "/" + reason]++;
		}
		for (auto &[reason, n] : s["drops"].items())
			CHECK(by_reason[reason] == n.get<uint64_t>());
		CHECK(by_reason.size() == s["drops"].size());
		// the stage named in each comment is the one whose drop counters
		// hold it
		size_t stage_reasons = 0;
		for (const auto &st : s["stages"])
			for (auto &[reason, n] : st["drops"].items()) {
				INFO("stage " << st["name"] << " reason " << reason);
				CHECK(by_stage_reason[st["name"].get<std::string>() + "/" + reason] ==
				      n.get<uint64_t>());
				stage_reasons++;
			}
		CHECK(stage_reasons == by_stage_reason.size());

		// delivered: the packets the stack delivered (GRO merged: fewer than received)
		auto good = read_pcapng(delivered);
		CHECK(good.size() > 0);
		CHECK(good.size() == s["delivered"].get<uint64_t>());
		for (const auto &p : good)
			CHECK(p.comment.rfind("listrx: delivered", 0) == 0);
		CHECK(r.out.find("capture: " + std::to_string(dropped) + " dropped packet(s) written to " +
				 drops) != std::string::npos);
	}
}

TEST_CASE("--capture-drops FILE,N writes the first N; tcpdump reads the file", "[binary][capture]")
{
	std::string drops = lrx_test::scratch_path("drops-n.pcapng");
	auto r = run_program(mixed_run("capture-n", {"--capture-drops", drops + ",7"}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	CHECK(read_pcapng(drops).size() == 7);

	auto probe = run_program({"/bin/sh", "-c", "command -v tcpdump"});
	if (probe.status != 0) {
		WARN("tcpdump not installed: the file is checked by the test's own reader only");
		return;
	}
	auto td = run_program({"/bin/sh", "-c", "tcpdump -n -r '" + drops + "' 2>/dev/null | wc -l"});
	REQUIRE(td.status == 0);
	CHECK(std::stoul(td.out) == 7);
}

TEST_CASE("--capture-drops: a path that cannot be written, or a bad N, exits 2 before the run",
	  "[binary][capture]")
{
	auto r = run_program({listrx_bin(), "--", "--packets", "10", "--capture-drops",
			      "/nonexistent/x.pcapng"});
	CHECK(r.status == 2);
	CHECK(r.err.find("--capture-drops /nonexistent/x.pcapng: cannot write the capture there: No such file or directory") !=
	      std::string::npos);
	CHECK(r.out.find("listrx ") == std::string::npos); // no run announced
	r = run_program({listrx_bin(), "--", "--packets", "10", "--capture-delivered", "x.pcapng,0"});
	CHECK(r.status == 2);
	CHECK(r.err.find("--capture-delivered x.pcapng,0: [run] capture_delivered: must be FILE or FILE,N") !=
	      std::string::npos);
	r = run_program({listrx_bin(), "--", "--packets", "10", "--capture-drops", "x.pcapng,abc"});
	CHECK(r.status == 2);
}

TEST_CASE("a capture has an interface block per port; each packet is on its RX port's",
	  "[binary][capture]")
{
	// the default config: two net_synth ports, UDP on port 0, TCP on 1
	std::string delivered = lrx_test::scratch_path("ports.pcapng");
	auto r = run_program({listrx_bin(), "--", "--packets", "20000", "--stats-period", "0",
			      "--capture-delivered", delivered});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	auto pkts = read_pcapng(delivered);
	CHECK(pcapng_interfaces == std::vector<std::string>{"net_synth0", "net_synth1"});
	std::map<uint32_t, uint64_t> per_interface;
	for (const auto &p : pkts) {
		per_interface[p.interface]++;
		// "listrx: delivered, port N": the block's interface is port N's
		CHECK(p.comment == "listrx: delivered, port " + std::to_string(p.interface));
	}
	CHECK(per_interface.size() == 2);
}

TEST_CASE("a drop capture replayed by net_synth (pcap=, pcapng through libpcap) drops the "
	  "same packets for the same reasons", "[binary][capture]")
{
	std::string drops = lrx_test::scratch_path("replay.pcapng");
	std::string js = lrx_test::scratch_path("replay-first.json");
	auto r = run_program(mixed_run("capture-replay1", {"--capture-drops", drops, "--json", js,
							   "--stats-period", "0"}));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json first = json::parse(lrx_test::read_file(js));
	uint64_t dropped = first["dropped"].get<uint64_t>();
	REQUIRE(dropped > 0);
	REQUIRE(read_pcapng(drops).size() == dropped);

	std::string js2 = lrx_test::scratch_path("replay-second.json");
	r = run_program({listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			 "--file-prefix", lrx_test::file_prefix("capture-replay2"), "--vdev",
			 "net_synth0,profile=pcap,pcap=" + drops, "--", "--packets",
			 std::to_string(dropped), "--pipeline", "build-meta,gro,l3-demux", "--json",
			 js2, "--stats-period", "0"});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json again = json::parse(lrx_test::read_file(js2));
	CHECK(again["rx_packets"].get<uint64_t>() == dropped);
	CHECK(again["dropped"].get<uint64_t>() == dropped);
	CHECK(again["drops"] == first["drops"]);
}

TEST_CASE("capture outputs: the same file twice, a link, a FIFO, the config file: exit 2, "
	  "nothing written", "[binary][capture]")
{
	std::string keep = lrx_test::scratch_path("keep.pcapng");
	std::string link = lrx_test::scratch_path("link.pcapng");
	std::string fifo = lrx_test::scratch_path("capture.fifo");
	{
		FILE *f = std::fopen(keep.c_str(), "w");
		REQUIRE(f);
		std::fputs("keep", f);
		std::fclose(f);
	}
	std::remove(link.c_str());
	REQUIRE(symlink(keep.c_str(), link.c_str()) == 0);
	std::remove(fifo.c_str());
	REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
	struct Case {
		std::vector<std::string> args;
		std::string message;
	} cases[] = {
		{{"--capture-drops", keep, "--capture-delivered", keep}, "the same file: each output needs its own"},
		{{"--json", keep, "--capture-drops", keep}, "the same file"},
		{{"--capture-drops", link}, "is a symbolic link: captures are not written through links"},
		{{"--capture-drops", "/dev/stdout"}, "is a symbolic link"},
		{{"--capture-delivered", fifo}, "not a regular file"},
		{{"--capture-drops", "-", "--json", "-"}, "both to stdout"},
		// refused after EAL (bad stage key): the capture file is untouched
		{{"--capture-drops", keep, "--set", "stage.gro.max_size=abc"}, "max_size"},
	};
	for (const auto &c : cases) {
		std::vector<std::string> v{listrx_bin(), "--", "--packets", "10"};
		v.insert(v.end(), c.args.begin(), c.args.end());
		auto r = run_program(v);
		INFO(r.out << r.err);
		CHECK(r.status == 2);
		CHECK(r.err.find(c.message) != std::string::npos);
		CHECK(r.out.find("capture:") == std::string::npos);
		CHECK(lrx_test::read_file(keep) == "keep");
	}
	std::remove(link.c_str());
	std::remove(fifo.c_str());
}

TEST_CASE("--capture-delivered - writes the pcapng to stdout, the text to stderr",
	  "[binary][capture]")
{
	std::string out = lrx_test::scratch_path("stdout.pcapng");
	auto r = run_program({"/bin/sh", "-c",
			      "'" + listrx_bin() + "' -- --packets 3000 --stats-period 0 "
			      "--capture-delivered - > '" + out + "'"});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	auto pkts = read_pcapng(out);
	CHECK(pkts.size() > 0);
	CHECK(r.err.find("capture: " + std::to_string(pkts.size()) +
			 " delivered packet(s) written to stdout") != std::string::npos);
}
