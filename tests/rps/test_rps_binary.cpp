// SPDX-License-Identifier: BSD-3-Clause
// RPS across lcores through the binary: two workers each poll one RX
// queue of net_synth and steer by hash to both backlogs; each lcore's rps
// instance processes packets the other steered, every packet ends in one
// fate (delivered + dropped = received) and the pool is full at exit.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "run_binary.h"

TEST_CASE("rps: two workers steer to each other's backlogs and account for "
	  "every packet", "[rps][integration]")
{
	const std::string json = lrx_test::scratch_path("rps.json");
	// lcore 2 shares CPU 1 with lcore 1: two workers on a 2-CPU machine.
	// A run of a fixed duration, not a packet count: 100 000 packets
	// took less than one scheduler time slice, and the worker that ran
	// first could take them all before the other was ever scheduled
	auto r = lrx_test::run_program(
		{lrx_test::listrx_bin(), "--lcores", "0@0,1@1,2@1", "--no-huge",
		 "--no-pci", "--no-shconf", "-m", "512", "--file-prefix",
		 lrx_test::file_prefix("rps"), "--vdev",
		 "net_synth0,profile=udp-flows,flows=64", "--", "--set",
		 "port.0.device=net_synth0", "--set", "port.0.rx_queues=2", "--set",
		 "lcore.1.poll=0:0", "--set", "lcore.2.poll=0:1", "--pipeline",
		 "build-meta,gro,rps,l3-demux", "--duration", "0.3",
		 "--stats-period", "0", "--json", json});
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	auto doc = nlohmann::json::parse(lrx_test::read_file(json));
	nlohmann::json rps, l3;
	for (auto &st : doc["stages"]) {
		if (st["name"] == "rps")
			rps = st;
		if (st["name"] == "l3-demux")
			l3 = st;
	}
	REQUIRE(rps.is_object());
	const auto &c = rps["counters"];
	const uint64_t rx = doc["rx_packets"].get<uint64_t>();
	CHECK(c["steered"].get<uint64_t>() > 0);
	// what was steered was processed (every backlog drained at the end),
	// and went on to l3-demux; what the backlogs refused was dropped
	CHECK(c["processed"] == c["steered"]);
	CHECK(l3["packets"].get<uint64_t>() == c["steered"].get<uint64_t>() +
						       c["not_steered"].get<uint64_t>() +
						       c["local_at_end"].get<uint64_t>());
	CHECK(c["steered"].get<uint64_t>() + c["dropped"].get<uint64_t>() +
		      c["not_steered"].get<uint64_t>() + c["local_at_end"].get<uint64_t>() ==
	      rx);
	CHECK(doc["delivered"].get<uint64_t>() + doc["dropped"].get<uint64_t>() == rx);
	CHECK(doc["drops"]["CPU_BACKLOG"].get<uint64_t>() == c["dropped"].get<uint64_t>());
	CHECK(doc["mbufs_in_use_at_exit"].get<uint64_t>() == 0);
	REQUIRE(doc["lcores"].size() == 2);
	for (auto &lc : doc["lcores"])
		CHECK(lc["packets"].get<uint64_t>() > 0);
}
