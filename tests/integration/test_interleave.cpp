// SPDX-License-Identifier: BSD-3-Clause
// --interleave: engines polled in turn on one lcore, each with a pipeline of
// its own. Every packet is received by exactly one engine, in one of its
// windows, and accounted for by that engine's pipeline; on a stateless
// pipeline the engines together give a plain run's verdicts and packets.
// No timing is asserted: the figures are the benchmark's.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pcap_file.h"
#include "run_binary.h"

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

std::vector<std::string> run_args(const std::string &prefix, const std::string &vdev,
				  const std::vector<std::string> &own)
{
	std::vector<std::string> v{listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m",
				   "512", "--file-prefix", lrx_test::file_prefix(prefix), "--vdev",
				   vdev, "--", "--stats-period", "0"};
	v.insert(v.end(), own.begin(), own.end());
	return v;
}

json run_json(const std::string &prefix, const std::string &vdev, std::vector<std::string> own)
{
	std::string js = lrx_test::scratch_path(prefix + ".json");
	own.insert(own.end(), {"--json", js});
	auto r = run_program(run_args(prefix, vdev, own));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	return json::parse(lrx_test::read_file(js));
}

uint64_t fates(const json &o)
{
	return o["delivered"].get<uint64_t>() + o["dropped"].get<uint64_t>() +
	       o["tx_packets"].get<uint64_t>() + o["merged_segments"].get<uint64_t>() +
	       o["held"].get<uint64_t>() - o["made"].get<uint64_t>();
}

// what the order A B B A B A A B gives window k of n engines (windows.h)
unsigned engine_of_window(uint64_t k, unsigned n)
{
	uint64_t block = k / n;
	unsigned pos = (unsigned)(k % n);
	if (block % 2)
		pos = n - 1 - pos;
	return (unsigned)((pos + block / 2) % n);
}

} // namespace

TEST_CASE("--interleave: every packet in one engine's window, accounted for by that engine",
	  "[binary][interleave]")
{
	// tcp-stream: GRO merges and holds across polls and windows
	const uint64_t packets = 30000;
	const unsigned window_polls = 3;
	json s = run_json("interleave", "net_synth0,profile=tcp-stream",
			  {"--packets", std::to_string(packets), "--pipeline",
			   "xdp,build-meta,gro,l3-demux", "--interleave", "packet,burst,graph",
			   "--window-polls", std::to_string(window_polls), "--burst", "32"});
	CHECK(s["engine"] == "interleave:packet,burst,graph");
	CHECK(s["rx_packets"] == packets);
	CHECK(s["rx_packets"].get<uint64_t>() == fates(s));
	CHECK(s["merged_segments"].get<uint64_t>() > 0);
	REQUIRE(s["interleave"]["lcores"].size() == 1);
	const json &l = s["interleave"]["lcores"][0];
	CHECK(l["window_polls"] == window_polls);
	CHECK(l["windows_unrecorded"] == 0);
	const json &eng = l["engines"];
	REQUIRE(eng.size() == 3);
	CHECK(eng[0]["engine"] == "packet");
	CHECK(eng[1]["engine"] == "burst");
	CHECK(eng[2]["engine"] == "graph");
	const json &w = l["windows"];
	const size_t n = w["engine"].size();
	REQUIRE(n == l["windows_recorded"].get<size_t>());
	REQUIRE(n > 30);
	std::map<unsigned, uint64_t> win_packets, win_polls, win_count, win_empty;
	for (size_t k = 0; k < n; k++) {
		INFO("window " << k);
		unsigned e = w["engine"][k];
		CHECK(e == engine_of_window(k, 3));
		// every window but the last is whole; a window ends on a poll boundary
		if (k + 1 < n)
			CHECK(w["polls"][k] == window_polls);
		CHECK(w["packets"][k].get<uint64_t>() <= w["polls"][k].get<uint64_t>() * 32);
		CHECK(w["span_cycles"][k].get<uint64_t>() >= w["cycles"][k].get<uint64_t>());
		// the busy polls are timed inside the window
		CHECK(w["busy_cycles"][k].get<uint64_t>() <= w["cycles"][k].get<uint64_t>());
		CHECK(w["empty_polls"][k].get<uint64_t>() <= w["polls"][k].get<uint64_t>());
		win_empty[e] += w["empty_polls"][k].get<uint64_t>();
		win_packets[e] += w["packets"][k].get<uint64_t>();
		win_polls[e] += w["polls"][k].get<uint64_t>();
		win_count[e]++;
	}
	uint64_t rx = 0;
	for (unsigned e = 0; e < 3; e++) {
		INFO("engine " << eng[e]["engine"]);
		// the engine's pipeline took in exactly its windows' packets and
		// accounted for each of them (its own sink and stages)
		CHECK(eng[e]["rx_packets"].get<uint64_t>() == win_packets[e]);
		CHECK(eng[e]["window_packets"].get<uint64_t>() == win_packets[e]);
		CHECK(eng[e]["polls"].get<uint64_t>() == win_polls[e]);
		CHECK(eng[e]["windows"].get<uint64_t>() == win_count[e]);
		CHECK(eng[e]["window_empty_polls"].get<uint64_t>() == win_empty[e]);
		CHECK(eng[e]["rx_packets"].get<uint64_t>() == fates(eng[e]));
		CHECK(eng[e]["rx_packets"].get<uint64_t>() > 0);
		CHECK(eng[e]["merged_segments"].get<uint64_t>() > 0);
		rx += eng[e]["rx_packets"].get<uint64_t>();
	}
	CHECK(rx == packets);
	// the lcores section shows the same engines with the same counts
	REQUIRE(s["lcores"].size() == 3);
	for (unsigned e = 0; e < 3; e++) {
		CHECK(s["lcores"][e]["engine"] == eng[e]["engine"]);
		CHECK(s["lcores"][e]["packets"] == eng[e]["rx_packets"]);
		CHECK(s["lcores"][e]["empty_polls"] == win_empty[e]);
	}
	// the queue was polled once per poll of any engine
	CHECK(s["ports"][0]["queues"].size() == 1);
	CHECK(s["ports"][0]["queues"][0]["rx_packets"] == packets);
	// the signals: numbers for every window, or a reason, never a made-up 0
	for (const char *f : {"cpu_ns", "run_delay_ns", "nivcsw", "nvcsw"}) {
		INFO(f);
		if (w[f].is_string())
			CHECK(w[f].get<std::string>().rfind("unavailable: ", 0) == 0);
		else
			CHECK(w[f].size() == n);
	}
}

TEST_CASE("--interleave --window-us: calibrated after 2, 16 and 128 blocks, a block's windows "
	  "alike",
	  "[binary][interleave]")
{
	json s = run_json("interleave-us", "net_synth0,profile=udp64",
			  {"--packets", "4000000", "--pipeline", "build-meta,l3-demux", "--interleave",
			   "packet,burst", "--window-polls", "1", "--window-us", "100"});
	const json &l = s["interleave"]["lcores"][0];
	CHECK(l["calibration_windows"] == 256);
	CHECK(l["window_us"].get<double>() == Approx(100).epsilon(0.01));
	const unsigned w = l["window_polls"];
	CHECK(w > 1); // a poll of 64 packets takes well under 100 us
	const json &polls = l["windows"]["polls"];
	REQUIRE(polls.size() > 260);
	for (size_t k = 0; k < 4; k++)
		CHECK(polls[k] == 1);
	for (size_t k = 4; k + 1 < polls.size(); k++) {
		INFO("window " << k);
		if (k % 2)
			CHECK(polls[k] == polls[k - 1]); // the two windows of a block
		if (k >= 256)
			CHECK(polls[k] == w);
	}
	CHECK(s["rx_packets"] == 4000000);
	CHECK(s["rx_packets"].get<uint64_t>() == fates(s));
}

TEST_CASE("--interleave on a stateless pipeline: the engines' verdicts and packets together "
	  "are a plain run's",
	  "[binary][interleave]")
{
	// drops of every kind of malformed frame, IPv6, ARP, VLAN: no stage
	// holds a packet past its poll
	const std::string vdev = "net_synth0,profile=mixed,ipv6_share=0.05,arp_share=0.02,"
				 "vlan_share=0.03,malformed_share=0.05";
	struct Capture {
		json summary;
		std::vector<lrx_test::PcapngPacket> delivered, dropped;
	};
	auto run = [&](const std::string &name, std::vector<std::string> engine) {
		Capture c;
		std::string del = lrx_test::scratch_path(name + "-delivered.pcapng");
		std::string drop = lrx_test::scratch_path(name + "-drops.pcapng");
		engine.insert(engine.end(), {"--packets", "12000", "--pipeline",
					     "xdp,build-meta,l3-demux", "--capture-delivered", del,
					     "--capture-drops", drop});
		c.summary = run_json(name, vdev, engine);
		std::vector<std::string> ifs;
		std::string why;
		c.delivered = lrx_test::pcapng_read(del, ifs, why);
		INFO(why);
		REQUIRE(why == "");
		c.dropped = lrx_test::pcapng_read(drop, ifs, why);
		REQUIRE(why == "");
		return c;
	};
	Capture plain = run("plain", {"--engine", "packet"});
	// an engine with a prefetch distance of its own is the same engine
	Capture inter = run("inter", {"--interleave", "burst,packet,hybrid:1,burst/prefetch=4",
				      "--window-polls", "2"});
	const json &p = plain.summary, &i = inter.summary;
	REQUIRE(p["rx_packets"] == 12000);
	REQUIRE(i["rx_packets"] == 12000);
	CHECK(p["dropped"].get<uint64_t>() > 0);
	CHECK(p["delivered"].get<uint64_t>() > 0);
	for (const char *k : {"delivered", "dropped", "tx_packets", "merged_segments", "held"})
		CHECK(i[k] == p[k]);
	CHECK(i["drops"] == p["drops"]);
	// the same packets with the same verdicts, in the same order: each
	// window is a run of the stream, and the windows follow each other
	REQUIRE(inter.delivered.size() == plain.delivered.size());
	REQUIRE(inter.dropped.size() == plain.dropped.size());
	for (size_t k = 0; k < plain.delivered.size(); k++) {
		INFO("delivered packet " << k);
		REQUIRE(inter.delivered[k].data == plain.delivered[k].data);
	}
	for (size_t k = 0; k < plain.dropped.size(); k++) {
		INFO("dropped packet " << k);
		REQUIRE(inter.dropped[k].data == plain.dropped[k].data);
		REQUIRE(inter.dropped[k].comment == plain.dropped[k].comment);
	}
	// and every engine had a share of them
	const json &engines = i["interleave"]["lcores"][0]["engines"];
	REQUIRE(engines.size() == 4);
	CHECK(engines[3]["engine"] == "burst/prefetch=4");
	for (const json &e : engines)
		CHECK(e["rx_packets"].get<uint64_t>() > 0);
}

TEST_CASE("--interleave on a port slower than the lcore: the windows' empty polls are counted "
	  "and left out of their busy cycles",
	  "[binary][interleave]")
{
	// 200 000 packets/s: most polls find nothing, as on a kernel-fed port
	json s = run_json("interleave-slow", "net_synth0,profile=udp64,rate=200000",
			  {"--duration", "0.3", "--pipeline", "build-meta,l3-demux", "--interleave",
			   "packet,burst", "--window-polls", "64"});
	const json &w = s["interleave"]["lcores"][0]["windows"];
	uint64_t empty = 0, packets = 0, busy = 0, cycles = 0;
	for (size_t k = 0; k < w["engine"].size(); k++) {
		empty += w["empty_polls"][k].get<uint64_t>();
		packets += w["packets"][k].get<uint64_t>();
		busy += w["busy_cycles"][k].get<uint64_t>();
		cycles += w["cycles"][k].get<uint64_t>();
	}
	CHECK(packets > 0);
	CHECK(empty > 0);
	CHECK(busy > 0);
	CHECK(busy < cycles);
	CHECK(s["rx_packets"].get<uint64_t>() == fates(s));
}

TEST_CASE("--interleave: what cannot be interleaved is refused before the run (exit 2)",
	  "[binary][interleave]")
{
	struct Bad {
		std::vector<std::string> args;
		const char *says;
	};
	for (const Bad &b : std::vector<Bad>{
		     {{"--interleave", "packet"}, "2 to 8 engines"},
		     {{"--interleave", "packet,burst,"}, "2 to 8 engines"},
		     {{"--interleave", "packet,burst/prefetch=17"}, "ENGINE/prefetch=K"},
		     {{"--interleave", "packet,hybrid:3", "--pipeline", "build-meta"},
		      "hybrid:3 needs at least 3 stages"},
		     {{"--interleave", "packet,burst", "--pmu"}, "not with an interleaved run"},
		     {{"--interleave", "packet,burst", "--window-polls", "0"}, "window_polls"},
	     }) {
		std::vector<std::string> own = b.args;
		own.insert(own.end(), {"--packets", "100"});
		auto r = run_program(run_args("interleave-bad", "net_synth0", own));
		INFO(r.out << r.err);
		CHECK(r.status == 2);
		CHECK(r.err.find(b.says) != std::string::npos);
	}
}

TEST_CASE("--coalesce-us: after a poll short of the budget the next one waits", "[binary]")
{
	// 200 000 packets/s, a wait of 2 ms after every short poll: each short
	// poll is followed by at least 2 ms, so the polls are at most the full
	// ones (rx / burst) and one per 2 ms of the run (no timing asserted:
	// a wait can only be longer)
	json s = run_json("coalesce", "net_synth0,profile=udp64,rate=200000",
			  {"--duration", "0.3", "--pipeline", "build-meta,l3-demux", "--engine",
			   "burst", "--coalesce-us", "2000"});
	CHECK(s["coalesce_us"] == 2000);
	const uint64_t rx = s["rx_packets"], polls = s["lcores"][0]["polls"];
	const double secs = s["duration_s"];
	CHECK(rx > 0);
	CHECK(polls <= rx / 64 + (uint64_t)(secs / 0.002) + 2);
	CHECK(rx == fates(s));
}
