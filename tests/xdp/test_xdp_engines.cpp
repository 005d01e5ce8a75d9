// SPDX-License-Identifier: BSD-3-Clause
// The xdp stage under every engine (packet, burst, hybrid:K, static,
// graph), native and generic (after build-meta), built-in and eBPF (JIT and
// interpreter): identical sink contents (fate and bytes, in order),
// per-stage stats and xdp counters.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "frames.h"
#include "engine_run.h"
#include "test_eal.h"
#include "xdp_harness.h"

extern "C" {
#include "pipeline.h"
#include "sink.h"
}

using namespace lrx_test::frames;
using lrx_xdp_test::prog_path;
using lrx_xdp_test::test_prog_path;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("xdpeng_pool", 8191);
}

using Keys = std::vector<std::pair<std::string, std::string>>;
struct StageConf {
	const char *name;
	Keys keys;
};

using Run = lrx_test::EngineRun;

Run run(lrx_engine_kind engine, unsigned k, uint16_t burst,
	const std::vector<StageConf> &stages, const std::vector<uint16_t> &ids,
	const std::vector<Frame> &frames, const std::vector<uint16_t> &polls)
{
	std::vector<lrx_test::PipelineStage> named;
	for (const StageConf &sc : stages)
		named.push_back({sc.name, sc.keys});
	return lrx_test::run_engine(
		engine, k, burst, named,
		[&](size_t at) {
			rte_mbuf *m = frames[ids[at]].to_mbuf(pool());
			if (m)
				m->port = (uint16_t)((at + 1) % 4);
			return m;
		},
		polls);
}

} // namespace

TEST_CASE("xdp gives identical results under every engine", "[xdp][engines]")
{
	rte_mempool *mp = pool();
	const std::vector<Frame> frames = {
		udp4(), udp4(1000, 53), tcp4(), udp6(1000, 53),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
		udp4().truncate(10), udp4(1000, 53).truncate(30),
		udp4(1000, 53).ip4_ihl(2),
	};
	const std::string filter = prog_path("xdp_port_filter");
	const std::string tx = prog_path("xdp_tx_swap");
	const std::string ctxp = test_prog_path("redirect_ctx");
	const std::vector<std::vector<StageConf>> configs = {
		{{"xdp", {{"prog", "udp-port-drop:53"}}}},
		{{"xdp", {{"prog", filter}, {"map_init", "blocked_ports:53=0"}}}},
		{{"xdp", {{"prog", filter}, {"exec", "interp"},
			  {"map_init", "blocked_ports:53=0"}}}},
		{{"xdp", {{"prog", ctxp}, {"exec", "interp"}}}},
		{{"build-meta", {}},
		 {"xdp", {{"prog", tx}, {"mode", "generic"}, {"exec", "jit"}}}},
		{{"build-meta", {}},
		 {"xdp", {{"prog", filter}, {"mode", "generic"}, {"exec", "interp"},
			  {"map_init", "blocked_ports:53=0"}}}},
	};
	std::mt19937 rng(7);
	for (size_t ci = 0; ci < configs.size(); ci++) {
		const uint16_t burst = ci % 2 ? 7 : 32;
		std::vector<uint16_t> polls;
		size_t total = 0;
		while (total < 1500) {
			uint16_t n = (uint16_t)(1 + rng() % burst);
			polls.push_back(n);
			total += n;
		}
		std::vector<uint16_t> ids(total);
		for (auto &id : ids)
			id = (uint16_t)(rng() % frames.size());
		lrx_test::engine_prefetch = 0; // the reference: prefetch off
		Run ref = run(LRX_ENGINE_PACKET, 0, burst, configs[ci], ids, frames,
			      polls);
		REQUIRE(ref.out.size() == total);
		// the config does something: not everything continues
		size_t not_delivered = 0;
		for (auto &o : ref.out)
			not_delivered += lrx_next_kind(o.first) != LRX_NEXT_DELIVER;
		CHECK(not_delivered > 0);
		INFO("config " << ci);
		lrx_test::for_each_engine(1, [&](lrx_engine_kind kind, unsigned k) {
			Run r = run(kind, k, burst, configs[ci], ids, frames, polls);
			REQUIRE(r.out.size() == ref.out.size());
			for (size_t i = 0; i < r.out.size(); i++) {
				INFO("packet " << i);
				REQUIRE(r.out[i].first == ref.out[i].first);
				REQUIRE(r.out[i].second == ref.out[i].second);
			}
			for (size_t s = 0; s < r.stats.size(); s++) {
				INFO("stage " << s);
				CHECK(r.stats[s].packets == ref.stats[s].packets);
				CHECK(r.stats[s].tx == ref.stats[s].tx);
				CHECK(r.stats[s].redirected == ref.stats[s].redirected);
				for (unsigned d = 0; d < LRX_DROP_MAX; d++)
					CHECK(r.stats[s].drops[d] == ref.stats[s].drops[d]);
				CHECK(r.counters[s] == ref.counters[s]);
			}
		});
	}
	LRX_REQUIRE_POOL_FULL(mp);
}
