// SPDX-License-Identifier: BSD-3-Clause
// One engine-equivalence runner for the stage tests: builds a pipeline of
// named stages with keys under one engine, feeds it polls of packets as
// the poll loop does (lrx_pipeline_process, then lrx_pipeline_poll_end
// with "budget used" for a full poll), drains it, and returns what left in
// sink order (next and bytes), the per-stage stats and counters. Each test
// compares every engine's result with the packet engine's.
#pragma once

#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "frames.h"
#include "stage_conf.h"

extern "C" {
#include "pipeline.h"
#include "prefetch.h"
#include "sink.h"
}

namespace lrx_test {

using StageKeys = KeyValues;

struct PipelineStage {
	std::string name;
	StageKeys keys;
};

struct EngineRun {
	std::vector<std::pair<lrx_next_t, std::vector<uint8_t>>> out; // sink order
	std::vector<lrx_stage_stats> stats;
	std::vector<std::map<std::string, uint64_t>> counters;
	// per stage: each map's entries (key bytes then value bytes, in
	// order), by map name (stage.h: map_at / map_next)
	std::vector<std::map<std::string, std::vector<std::vector<uint8_t>>>> maps;
};

// Software prefetch must not change a result: the equivalence tests run
// every engine with prefetch off and on (4 packets ahead) against a
// packet-engine reference run with it off. run_engine uses
// engine_prefetch ([pipeline] prefetch).
inline const uint16_t prefetch_settings[] = {0, LRX_PREFETCH_TESTED};
inline uint16_t engine_prefetch = LRX_PREFETCH_DEFAULT;

// Every engine setting an equivalence test compares with its reference:
// each prefetch setting, each engine, the hybrid engine at k = 1 ..
// hybrid_max_k and the others at k = 1; f(kind, k) runs under an INFO
// that names the setting. Leaves engine_prefetch at its default.
template <typename F>
inline void for_each_engine(unsigned hybrid_max_k, F &&f)
{
	for (uint16_t pf : prefetch_settings) {
		engine_prefetch = pf;
		for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST,
				  LRX_ENGINE_HYBRID, LRX_ENGINE_STATIC,
				  LRX_ENGINE_GRAPH}) {
			const unsigned ks = kind == LRX_ENGINE_HYBRID ? hybrid_max_k : 1;
			for (unsigned k = 1; k <= ks; k++) {
				INFO("prefetch " << pf << " engine "
						 << lrx_engine_name(kind) << " k " << k);
				f(kind, k);
			}
		}
	}
	engine_prefetch = LRX_PREFETCH_DEFAULT;
}

// make(i): the i-th packet of the run (0, 1, ... over all polls).
// budget_used(n): what the end of a poll of n packets reports (default:
// n == burst, as napi_poll's work == weight).
inline EngineRun run_engine(lrx_engine_kind engine, unsigned k, uint16_t burst,
			    const std::vector<PipelineStage> &stages,
			    const std::function<rte_mbuf *(size_t)> &make,
			    const std::vector<uint16_t> &polls,
			    const std::function<bool(uint16_t)> &budget_used = nullptr)
{
	lrx_pipeline_conf conf{};
	StageConfs confs;
	conf.engine = engine;
	conf.hybrid_k = k;
	conf.burst = burst;
	conf.stats_level = LRX_STATS_COUNTERS;
	conf.prefetch = engine_prefetch;
	conf.n_stages = (unsigned)stages.size();
	conf.socket_id = (int)rte_socket_id();
	conf.lcore_id = rte_lcore_id();
	for (size_t s = 0; s < stages.size(); s++) {
		INFO("stage " << stages[s].name);
		REQUIRE(lrx_stage_find(stages[s].name.c_str()) != nullptr);
		confs.set(conf.stages[s], lrx_stage_find(stages[s].name.c_str()), stages[s].keys);
	}
	lrx_pipeline *p = nullptr;
	char err[512] = "";
	int rc = lrx_pipeline_create(&conf, &p, err, sizeof(err));
	INFO("engine " << lrx_engine_name(engine) << " create: " << err);
	REQUIRE(rc == 0);

	static lrx_sink sink;
	sink.n = 0;
	EngineRun r;
	size_t at = 0;
	auto take = [&]() {
		for (uint32_t i = 0; i < sink.n; i++)
			r.out.emplace_back(sink.nexts[i], frames::mbuf_bytes(sink.pkts[i]));
		lrx_sink_discard(&sink);
	};
	for (uint16_t n : polls) {
		std::vector<rte_mbuf *> pkts;
		for (uint16_t i = 0; i < n; i++) {
			rte_mbuf *m = make(at++);
			REQUIRE(m);
			pkts.push_back(m);
		}
		lrx_pipeline_process(p, pkts.data(), n, &sink);
		lrx_pipeline_poll_end(p, budget_used ? budget_used(n) : n == burst, &sink);
		take();
	}
	lrx_pipeline_drain(p, &sink);
	take();
	for (unsigned s = 0; s < lrx_pipeline_stage_count(p); s++) {
		lrx_stage_stats st;
		lrx_pipeline_stage_stats(p, s, &st);
		r.stats.push_back(st);
		std::map<std::string, uint64_t> c;
		lrx_pipeline_stage_counters(
			p, s,
			[](void *arg, const lrx_stage_counter *c, uint64_t value) {
				(*(std::map<std::string, uint64_t> *)arg)[c->name] = value;
			},
			&c);
		r.counters.push_back(c);
		std::map<std::string, std::vector<std::vector<uint8_t>>> maps;
		lrx_stage_map info;
		for (unsigned m = 0; lrx_pipeline_stage_map_at(p, s, m, &info); m++) {
			std::vector<uint8_t> kv(info.key_size + info.value_size);
			auto &entries = maps[info.name];
			uint32_t cursor = 0;
			while (lrx_pipeline_stage_map_next(p, s, m, &cursor, kv.data(),
							   kv.data() + info.key_size))
				entries.push_back(kv);
		}
		r.maps.push_back(maps);
	}
	lrx_pipeline_destroy(p);
	return r;
}

// l3-demux's counters of how it split its work (sublists, route-hint
// reuse): they differ by engine by design, so the equivalence tests
// compare the rest.
inline void erase_l3_split_counters(EngineRun &r)
{
	for (auto &c : r.counters)
		for (const char *how : {"l3_sublists", "l4_sublists",
					"route_hint_hits", "route_lookups"})
			c.erase(how);
}

// An engine's run against the reference run: the same packets out in the
// same order with the same bytes, and per stage the same stats, counters
// and maps (callers erase the counters that describe how the work was
// split, which legitimately differ).
inline void require_same_run(const EngineRun &r, const EngineRun &ref)
{
	REQUIRE(r.out.size() == ref.out.size());
	for (size_t i = 0; i < r.out.size(); i++) {
		INFO("packet " << i);
		REQUIRE(r.out[i] == ref.out[i]);
	}
	REQUIRE(r.stats.size() == ref.stats.size());
	for (size_t s = 0; s < r.stats.size(); s++) {
		INFO("stage " << s);
		CHECK(r.stats[s].packets == ref.stats[s].packets);
		CHECK(r.stats[s].delivered == ref.stats[s].delivered);
		CHECK(r.stats[s].tx == ref.stats[s].tx);
		CHECK(r.stats[s].redirected == ref.stats[s].redirected);
		CHECK(r.stats[s].consumed == ref.stats[s].consumed);
		for (unsigned d = 0; d < LRX_DROP_MAX; d++)
			CHECK(r.stats[s].drops[d] == ref.stats[s].drops[d]);
		CHECK(r.counters[s] == ref.counters[s]);
		CHECK(r.maps[s] == ref.maps[s]);
	}
}

// Every SNMP counter (a capitalised name) of the stage at index stage
// (l3-demux after build-meta: 1) is as listed, or 0.
inline void check_snmp(const EngineRun &r, const std::map<std::string, uint64_t> &want,
		       size_t stage = 1)
{
	for (auto &kv : r.counters.at(stage)) {
		if (!std::isupper((unsigned char)kv.first[0]))
			continue;
		auto it = want.find(kv.first);
		INFO("counter " << kv.first);
		CHECK(kv.second == (it == want.end() ? 0 : it->second));
	}
	for (auto &kv : want) {
		INFO("counter " << kv.first);
		CHECK(r.counters.at(stage).count(kv.first) == 1);
	}
}

} // namespace lrx_test
