// SPDX-License-Identifier: BSD-3-Clause
// The rps stage in one pipeline (every packet steered to this lcore's own
// backlog, as the kernel does for its own CPU): under every engine, the
// same sink, stats and counters on random polls; what has no hash goes on
// at once; netdev_max_backlog and dev_weight drop and pace as
// enqueue_to_backlog and process_backlog do; the pool is full at the end.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "engine_run.h"
#include "frames.h"
#include "stage_harness.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
}

using namespace lrx_test::frames;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("rps_pool", 16383);
}

const std::vector<Frame> &frames()
{
	static const std::vector<Frame> f = {
		udp4(1, 9), udp4(2, 9), udp4(3, 10), tcp4(), udp6(),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
		udp4(1, 9).ip4_frag(0x2000), udp4().ip4_corrupt_csum(),
	};
	return f;
}

lrx_test::EngineRun run(lrx_engine_kind kind, const std::vector<uint16_t> &polls,
			const std::vector<uint16_t> &ids, const char *max_backlog,
			const char *weight)
{
	return lrx_test::run_engine(
		kind, 1, 32,
		{{"build-meta", {}},
		 {"rps", {{"max_backlog", max_backlog}, {"weight", weight},
			  {"hash", "flow"}}},
		 {"l3-demux", {{"local_ipv4", "10.0.0.2"}, {"ipfrag_clock", "polls"}}}},
		[&](size_t at) { return frames()[ids[at]].to_mbuf(pool()); }, polls);
}

void clean(lrx_test::EngineRun &r)
{
	for (auto &c : r.counters)
		for (const char *how : {"l3_sublists", "l4_sublists", "route_hint_hits",
					"route_lookups", "pool_wraps"})
			c.erase(how);
}

} // namespace

TEST_CASE("rps: every engine gives the same result, the backlog drained at "
	  "the end of each poll", "[rps][equivalence]")
{
	pool();
	std::mt19937 rng(3600);
	for (auto cfg : {std::pair<const char *, const char *>{"1000", "64"},
			 {"20", "8"}}) {
		INFO("max_backlog " << cfg.first << " weight " << cfg.second);
		std::vector<uint16_t> polls;
		size_t total = 0;
		while (total < 3000) {
			polls.push_back((uint16_t)(1 + rng() % 32));
			total += polls.back();
		}
		std::vector<uint16_t> ids(total);
		for (auto &id : ids)
			id = (uint16_t)(rng() % frames().size());
		lrx_test::engine_prefetch = 0;
		auto ref = run(LRX_ENGINE_PACKET, polls, ids, cfg.first, cfg.second);
		clean(ref);
		const auto &c = ref.counters[1];
		// IPv4/IPv6 have a hash and are steered; ARP has none
		CHECK(c.at("steered") > 0);
		CHECK(c.at("not_steered") > 0);
		CHECK(c.at("processed") == c.at("steered"));
		CHECK(c.at("steered") + c.at("not_steered") + c.at("dropped") +
			      c.at("local_at_end") == ref.stats[1].packets);
		if (std::string(cfg.first) == "20")
			CHECK(c.at("dropped") > 0); // 8 a poll out, up to 32 in
		else
			CHECK(c.at("dropped") == 0);
		CHECK(ref.stats[1].drops[LRX_DROP_CPU_BACKLOG] == c.at("dropped"));
		for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
				  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
			INFO("engine " << lrx_engine_name(kind));
			auto r = run(kind, polls, ids, cfg.first, cfg.second);
			clean(r);
			lrx_test::require_same_run(r, ref);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("rps: bad keys name the key and what is valid", "[rps]")
{
	pool();
	for (auto bad : std::vector<std::pair<std::string, std::string>>{
		     {"cpus", "1,,2"}, {"cpus", "999"}, {"max_backlog", "0"},
		     {"weight", "1000"}, {"hash", "toeplitz"}}) {
		INFO(bad.first << "=" << bad.second);
		lrx_test::StageInstance s("rps", {{bad.first, bad.second}});
		CHECK_FALSE(s.ok());
		CHECK(std::string(s.error()).find("key '" + bad.first + "'") !=
		      std::string::npos);
	}
}
