// SPDX-License-Identifier: BSD-3-Clause
// [run] tx_clean: who frees what a TX queue holds once sent (the driver by
// itself, on transmit only, the RX poll before it receives, a TX poll
// every N polls). Under every engine each mode sends the same frames and
// delivers the same packets, and every mbuf goes back to the pool exactly
// once: none left out at exit, none in it twice. No timing is asserted.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pcap_file.h"
#include "run_binary.h"

using lrx_test::run_program;
using nlohmann::json;

namespace {

const std::vector<std::string> modes = {"driver", "xmit", "rx-poll", "tx-poll"};
const std::vector<std::string> engines = {"packet", "burst", "hybrid:1", "static", "graph"};

struct Run {
	json s;
	std::vector<lrx_test::Frame> sent;
	std::vector<lrx_test::PcapngPacket> delivered;
};

std::vector<std::string> base_args(const std::string &prefix, const std::string &vdev)
{
	return {lrx_test::listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
		"--file-prefix", lrx_test::file_prefix(prefix), "--vdev", vdev};
}

Run run_mode(const std::string &name, const std::string &mode, const std::string &engine,
	     const std::vector<std::string> &extra = {})
{
	Run r;
	const std::string tx = lrx_test::scratch_path(name + "-tx.pcap");
	const std::string del = lrx_test::scratch_path(name + "-delivered.pcapng");
	const std::string js = lrx_test::scratch_path(name + ".json");
	std::remove(tx.c_str());
	// copy=1: every mbuf from listrx's pool, which it checks at exit; a
	// ring of 128 descriptors, so that bursts of 32 fill it between
	// cleanings in some modes
	const std::string conf = lrx_test::scratch_path(name + ".ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fputs("[port.0]\ndevice = net_synth0\ntx_desc = 128\n[telemetry]\nenabled = no\n", f);
	std::fclose(f);
	auto argv = base_args(name, "net_synth0,profile=udp-flows,flows=100,copy=1,tx_pcap=" + tx);
	std::vector<std::string> lcore = lrx_test::lcores_args(1);
	argv.insert(argv.begin() + 1, lcore.begin(), lcore.end());
	argv.insert(argv.end(),
		    {"--", "--config", conf, "--stats-period", "0", "--json", js, "--packets",
		     "20000", "--burst", "32", "--engine", engine, "--pipeline",
		     "build-meta,tx-every", "--set", "stage.tx-every.k=2", "--tx-clean", mode,
		     "--tx-clean-polls", "3", "--capture-delivered", del});
	argv.insert(argv.end(), extra.begin(), extra.end());
	auto res = run_program(argv);
	INFO(res.out << res.err);
	REQUIRE(res.status == 0);
	r.s = json::parse(lrx_test::read_file(js));
	REQUIRE(lrx_test::pcap_read(tx, r.sent));
	std::vector<std::string> ifs;
	std::string why;
	r.delivered = lrx_test::pcapng_read(del, ifs, why);
	REQUIRE(why == "");
	return r;
}

uint64_t u64(const json &o, const char *k)
{
	return o[k].get<uint64_t>();
}

} // namespace

TEST_CASE("tx_clean: every mode under every engine sends and delivers the same packets, each "
	  "mbuf freed once",
	  "[binary][tx_clean]")
{
	Run first;
	bool have_first = false;
	for (const std::string &engine : engines)
		for (const std::string &mode : modes) {
			INFO("engine " << engine << ", tx_clean " << mode);
			Run r = run_mode("txclean-" + mode + "-" + engine.substr(0, 6), mode, engine);
			const json &s = r.s;
			CHECK(u64(s, "rx_packets") == 20000);
			CHECK(u64(s, "tx_packets") == 10000);
			CHECK(u64(s, "delivered") == 10000);
			CHECK(u64(s, "tx_failed") == 0);
			CHECK(u64(s, "mbufs_in_use_at_exit") == 0);
			CHECK(u64(s, "mbufs_freed_twice_at_exit") == 0);
			const json &c = s["tx_clean"];
			CHECK(c["mode"] == mode);
			if (mode == "rx-poll") {
				// one cleaning per RX poll (one lcore: never busy)
				CHECK(u64(c, "calls") == u64(s["lcores"][0], "polls"));
				CHECK(u64(c, "busy") == 0);
				CHECK(u64(c, "freed") > 0);
			} else if (mode == "tx-poll") {
				CHECK(u64(c, "calls") == u64(s["lcores"][0], "polls") / 3);
				CHECK(u64(c, "freed") > 0);
			} else {
				CHECK(u64(c, "calls") == 0);
				CHECK(u64(c, "freed") == 0);
			}
			CHECK(u64(c, "freed") <= u64(s, "tx_packets"));
			CHECK(r.sent.size() == 10000);
			CHECK(r.delivered.size() == 10000);
			if (!have_first) {
				first = r;
				have_first = true;
				continue;
			}
			// the same frames out, in order, and the same packets delivered
			CHECK(r.sent == first.sent);
			REQUIRE(r.delivered.size() == first.delivered.size());
			for (size_t i = 0; i < r.delivered.size(); i++)
				if (r.delivered[i].data != first.delivered[i].data)
					FAIL("delivered packet " << i << " differs");
		}
}

TEST_CASE("tx_clean rx-poll across lcores: each RX poll cleans the TX queue another lcore sends "
	  "on, under its lock",
	  "[binary][tx_clean]")
{
	// lcore 0 polls RX queue 1 and sends on TX queue 0; lcore 1 the
	// reverse: the RX poll's paired TX queue is the other lcore's
	std::string conf = lrx_test::scratch_path("txclean-cross.ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fputs("[port.0]\ndevice = net_synth0\nrx_queues = 2\ntx_queues = 2\n"
		   "[lcore.0]\npoll = 0:1\n[lcore.1]\npoll = 0:0\n[telemetry]\nenabled = no\n",
		   f);
	std::fclose(f);
	std::string js = lrx_test::scratch_path("txclean-cross.json");
	auto argv = base_args("txclean-cross", "net_synth0,profile=udp-flows,flows=64,rxq=2,txq=2,copy=1");
	std::vector<std::string> lcores = lrx_test::lcores_args(2);
	argv.insert(argv.begin() + 1, lcores.begin(), lcores.end());
	argv.insert(argv.end(), {"--", "--config", conf, "--stats-period", "0", "--json", js,
				 "--packets", "400000", "--burst", "32", "--pipeline",
				 "build-meta,tx-every", "--set", "stage.tx-every.k=1", "--tx-clean",
				 "rx-poll"});
	auto res = run_program(argv);
	INFO(res.out << res.err);
	REQUIRE(res.status == 0);
	json s = json::parse(lrx_test::read_file(js));
	CHECK(u64(s, "rx_packets") == 400000);
	CHECK(u64(s, "tx_packets") == 400000);
	CHECK(u64(s, "mbufs_in_use_at_exit") == 0);
	CHECK(u64(s, "mbufs_freed_twice_at_exit") == 0);
	const json &c = s["tx_clean"];
	// every poll of either lcore tried its paired queue once: cleaned it
	// or found the other lcore holding its lock
	REQUIRE(s["lcores"].size() == 2);
	CHECK(u64(c, "calls") + u64(c, "busy") ==
	      u64(s["lcores"][0], "polls") + u64(s["lcores"][1], "polls"));
	CHECK(u64(c, "freed") > 0);
	CHECK(u64(c, "freed") <= u64(s, "tx_packets"));
}

TEST_CASE("tx_clean rx-poll / tx-poll refuse a driver without tx_done_cleanup", "[binary][tx_clean]")
{
	for (const char *mode : {"rx-poll", "tx-poll"}) {
		INFO(mode);
		auto argv = base_args(std::string("txclean-null-") + mode, "net_null0,copy=0");
		argv.insert(argv.end(), {"--", "--stats-period", "0", "--packets", "1000",
					 "--tx-clean", mode});
		auto res = run_program(argv);
		CHECK(res.status == 2);
		CHECK(res.err.find(std::string("[run] tx_clean = ") + mode) != std::string::npos);
		CHECK(res.err.find("tx_done_cleanup") != std::string::npos);
	}
}
