// SPDX-License-Identifier: BSD-3-Clause
// build-meta,tc-ingress,l3-demux under every engine (packet, burst,
// hybrid:K, static, graph) on the same random polls of good, filtered and
// malformed frames: identical sink contents (fate and bytes, in order),
// per-stage stats, the stages' counters and the per-filter counters and
// program maps, with flower and cls_bpf filters (JIT and interpreter).
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "engine_run.h"
#include "frames.h"
#include "tc_harness.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
}

using namespace lrx_test::frames;
using lrx_tc_test::TempFile;
using lrx_tc_test::test_prog;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("tceng_pool", 16383);
}

} // namespace

TEST_CASE("build-meta,tc-ingress,l3-demux give identical results under every "
	  "engine", "[tc_ingress][equivalence]")
{
	pool();
	TempFile filters(
		"qdisc add dev all clsact\n"
		"filter add dev all ingress protocol ip pref 1 flower ip_proto udp dst_port 1000-1001 action continue\n"
		"filter add dev all ingress pref 2 bpf da obj " + test_prog("tc_fields") + " sec tc\n"
		"filter add dev all ingress protocol ipv6 pref 3 flower ip_proto udp dst_port 53 action drop\n"
		"filter add dev all ingress protocol ip pref 4 flower src_ip 10.0.0.9 action mirred egress redirect dev port1\n"
		"filter add dev all ingress pref 5 bpf da obj " + test_prog("tc_count") + " sec tc\n");
	const std::vector<Frame> frames = {
		udp4(1, 1000), udp4(1, 1001), udp4(1, 1002), udp4(1, 1003),
		udp4(1, 1005), udp4(1, 1006), udp4(1, 12000), udp4(1, 2000),
		tcp4(), udp6(1, 53), udp6(1, 54), udp4().ip4_corrupt_csum(),
		udp4(1, 15000).ip4_frag(0x2000), udp4().truncate(20),
		with([](Spec &s) { s.ip4_src = lrx_test::frames::ip4(10, 0, 0, 9); }),
		with([](Spec &s) { s.vlans = {5}; s.dport = 1000; }),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
	};
	std::mt19937 rng(3636);
	for (const char *exec : {"jit", "interp"}) {
		const uint16_t burst = 32;
		std::vector<uint16_t> polls;
		size_t total = 0;
		while (total < 2000) {
			uint16_t n = (uint16_t)(1 + rng() % burst);
			polls.push_back(n);
			total += n;
		}
		std::vector<uint16_t> ids(total);
		for (auto &id : ids)
			id = (uint16_t)(rng() % frames.size());
		const std::vector<lrx_test::PipelineStage> stages = {
			{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
			{"tc-ingress", {{"filters", filters.path}, {"exec", exec}}},
			{"l3-demux", {{"local_ipv4", "10.0.0.2"}}},
		};
		auto make = [&](size_t at) { return frames[ids[at]].to_mbuf(pool()); };
		auto clean = [](lrx_test::EngineRun &r) {
			for (auto &c : r.counters)
				for (const char *how : {"l3_sublists", "l4_sublists",
							"route_hint_hits", "route_lookups"})
					c.erase(how);
		};
		lrx_test::engine_prefetch = 0;
		auto ref = lrx_test::run_engine(LRX_ENGINE_PACKET, 0, burst, stages,
						make, polls);
		clean(ref);
		// every packet ends in one fate: in the sink (a fragment
		// discarded with its queue as a drop), or chained into a
		// reassembled datagram (l3-demux's merged)
		REQUIRE(ref.out.size() + ref.counters[2].at("merged") == total);
		REQUIRE(ref.counters[1].at("act_redirect") > 0);
		REQUIRE(ref.counters[1].at("act_shot") > 0);
		REQUIRE(ref.counters[1].at("act_stolen") > 0);
		INFO(exec);
		lrx_test::for_each_engine(2, [&](lrx_engine_kind kind, unsigned k) {
			auto r = lrx_test::run_engine(kind, k, burst, stages, make, polls);
			clean(r);
			lrx_test::require_same_run(r, ref);
		});
		CHECK(ref.maps.at(1).count("filters") == 1);
		CHECK(ref.maps.at(1).count("tc_stats") == 1);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("u32 (hash table, link, offsets, ip6 priority and flowlabel, ip "
	  "firstfrag), matchall, gact reclassify and action lists with mirred "
	  "mirror give identical results under every engine",
	  "[tc_ingress][equivalence]")
{
	pool();
	TempFile filters(
		"qdisc add dev port0 clsact\n"
		"filter add dev port0 ingress protocol ip pref 1 u32 match ip protocol 17 0xff "
		"match ip dport 1000 0xfffe action continue\n"
		"filter add dev port0 ingress pref 2 handle 1: protocol ip u32 divisor 4\n"
		"filter add dev port0 ingress protocol ip pref 2 u32 match ip protocol 17 0xff "
		"offset at 0 mask 0f00 shift 6 eat link 1: hashkey mask 0x3 at 20\n"
		"filter add dev port0 ingress protocol ip pref 2 u32 ht 1:2: match u16 1002 ffff "
		"at 2 action drop\n"
		"filter add dev port0 ingress protocol ip pref 2 u32 ht 1:3: match u16 1003 ffff "
		"at 2 action mirred egress redirect dev port1\n"
		"filter add dev port0 ingress protocol ipv6 pref 3 u32 match ip6 dport 53 0xffff "
		"action mirred egress mirror dev port1 action drop\n"
		"filter add dev port0 ingress protocol ipv6 pref 3 u32 match ip6 priority 0xb8 "
		"0xfc match ip6 flowlabel 0x12345 0xfffff action pipe action mirred egress "
		"mirror dev port2 action continue\n"
		"filter add dev port0 ingress protocol ip pref 4 u32 match ip firstfrag "
		"match u32 0 0 action mirred egress mirror dev port2 action mirred egress "
		"redirect dev port1\n"
		"filter add dev port0 ingress protocol ip pref 4 u32 match ip src 10.0.0.9/32 "
		"action reclassify\n"
		"filter add dev port0 ingress protocol all pref 5 matchall action mirred "
		"egress mirror dev port1 action pipe\n");
	std::vector<Frame> frames = {
		udp4(1, 1000), udp4(1, 1001), udp4(1, 1002), udp4(1, 1003),
		udp4(1, 1006), udp4(1, 1007), udp4(1, 2000), tcp4(), udp6(1, 53),
		udp6(1, 54), udp4(1, 1003).ip4_frag(0x2000), udp4().truncate(20),
		with([](Spec &s) { s.ip4_options = {1, 1, 1, 1}; s.dport = 1003; }),
		with([](Spec &s) { s.ip4_src = lrx_test::frames::ip4(10, 0, 0, 9); }),
		with([](Spec &s) { s.vlans = {5}; s.dport = 1002; }),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
		with([](Spec &s) { s.l3 = L3::ipv6; s.flow_label = 0x12345; }),
		udp4(1, 2000).ip4_frag(0x2000),
	};
	// the traffic class: DSCP 46 (EF) and the flow label
	frames[frames.size() - 2].set_be32(frames[frames.size() - 2].l2_len, 0x6b812345u);
	std::mt19937 rng(4343);
	const uint16_t burst = 32;
	std::vector<uint16_t> polls;
	size_t total = 0;
	while (total < 2000) {
		uint16_t n = (uint16_t)(1 + rng() % burst);
		polls.push_back(n);
		total += n;
	}
	std::vector<uint16_t> ids(total);
	for (auto &id : ids)
		id = (uint16_t)(rng() % frames.size());
	const std::vector<lrx_test::PipelineStage> stages = {
		{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
		{"tc-ingress", {{"filters", filters.path}}},
		{"l3-demux", {{"local_ipv4", "10.0.0.2"}}},
	};
	auto make = [&](size_t at) { return frames[ids[at]].to_mbuf(pool()); };
	lrx_test::engine_prefetch = 0;
	auto ref = lrx_test::run_engine(LRX_ENGINE_PACKET, 0, burst, stages, make, polls);
	for (const char *c : {"u32_calls", "matchall_calls", "reclassify_loop",
			      "act_redirect", "act_shot", "act_ok", "mirrored"})
		REQUIRE(ref.counters[1].at(c) > 0);
	lrx_test::for_each_engine(2, [&](lrx_engine_kind kind, unsigned k) {
		auto r = lrx_test::run_engine(kind, k, burst, stages, make, polls);
		lrx_test::require_same_run(r, ref);
	});
	CHECK(ref.maps.at(1).count("filters") == 1);
	// every filter's first action ran (entries: filter, order, pkts...)
	unsigned firsts = 0;
	for (const auto &e : ref.maps.at(1).at("actions")) {
		uint32_t key[2];
		uint64_t pkts;
		REQUIRE(e.size() == 8 + 32);
		memcpy(key, e.data(), 8);
		memcpy(&pkts, e.data() + 8, 8);
		INFO("filter " << key[0] << " action " << key[1]);
		if (key[1] == 1) {
			CHECK(pkts > 0);
			firsts++;
		}
	}
	CHECK(firsts == 8);
	// every packet and every copy in the sink once
	CHECK(ref.out.size() + ref.counters[2].at("merged") ==
	      total + ref.counters[1].at("mirrored"));
	LRX_REQUIRE_POOL_FULL(pool());
}
