// SPDX-License-Identifier: BSD-3-Clause
// build-meta,l3-demux under every engine (packet, burst, hybrid:K, static,
// graph) on the same mixed input of good and malformed frames: identical
// sink contents (fate and bytes, in order), per-stage stats and the
// stages' own counters (except the ones that describe how the work was
// split: sublists and route-hint reuse).
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "frames.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
#include "sink.h"
}

using namespace lrx_test::frames;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("l3eng_pool", 16383);
}

Frame with(void (*f)(Spec &))
{
	Spec s;
	f(s);
	return build(s);
}

std::vector<Frame> mixed_frames()
{
	return {
		udp4(), udp4(), tcp4(), udp4(1, 5005), udp4(1, 3000),
		with([](Spec &s) { s.l4 = L4::icmp; }),
		with([](Spec &s) { s.vlans = {5}; }),
		with([](Spec &s) { s.vlans = {5, 6}; s.l3 = L3::ipv6; }),
		with([](Spec &s) { s.dst = {2, 0, 0, 0, 0, 9}; }),
		udp4().ip4_version(5), udp4().ip4_corrupt_csum(),
		udp4().ip4_total_length(300), udp4().ip4_src(ip4(127, 0, 0, 1)),
		udp4().ip4_dst(ip4(10, 0, 0, 99)), udp4().ip4_frag(0x2000),
		udp4().ip4_proto(47), udp4().l4_corrupt_csum(), tcp4().tcp_doff(3),
		udp4().append(44), udp4().truncate(20),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 7)),
		udp6(), udp6().append(9), udp6().ip6_version(4),
		udp6().ip6_payload_length(999), udp6().udp_zero_csum(),
		udp6().ip6_dst(ip6_doc(77)),
		with([](Spec &s) { s.l3 = L3::ipv6; s.ip6_hop_by_hop = true; }),
		with([](Spec &s) { s.l3 = L3::none; s.ethertype = 0x88cc; }),
	};
}

using Keys = std::vector<std::pair<std::string, std::string>>;

struct Run {
	std::vector<std::pair<lrx_next_t, std::vector<uint8_t>>> out;
	std::vector<lrx_stage_stats> stats;
	std::vector<std::map<std::string, uint64_t>> counters;
};

Run run(lrx_engine_kind engine, unsigned k, uint16_t burst,
	const std::vector<Keys> &stage_keys,
	const std::vector<uint16_t> &frame_ids, const std::vector<Frame> &frames,
	const std::vector<uint16_t> &polls)
{
	static const char *const names[] = {"build-meta", "l3-demux"};
	lrx_pipeline_conf conf{};
	conf.engine = engine;
	conf.hybrid_k = k;
	conf.burst = burst;
	conf.stats_level = LRX_STATS_COUNTERS;
	conf.n_stages = 2;
	conf.socket_id = (int)rte_socket_id();
	conf.lcore_id = rte_lcore_id();
	for (unsigned s = 0; s < 2; s++) {
		conf.stages[s].stage = lrx_stage_find(names[s]);
		REQUIRE(conf.stages[s].stage != nullptr);
		conf.stages[s].n_values = (unsigned)stage_keys[s].size();
		for (size_t j = 0; j < stage_keys[s].size(); j++) {
			conf.stages[s].keys[j] = stage_keys[s][j].first.c_str();
			conf.stages[s].values[j] = stage_keys[s][j].second.c_str();
		}
	}
	lrx_pipeline *p = nullptr;
	char err[512] = "";
	int rc = lrx_pipeline_create(&conf, &p, err, sizeof(err));
	INFO("create: " << err);
	REQUIRE(rc == 0);

	static lrx_sink sink;
	sink.n = 0;
	Run r;
	size_t at = 0;
	auto take = [&]() {
		for (uint32_t i = 0; i < sink.n; i++)
			r.out.emplace_back(sink.nexts[i], mbuf_bytes(sink.pkts[i]));
		lrx_sink_discard(&sink);
	};
	for (uint16_t n : polls) {
		std::vector<rte_mbuf *> pkts;
		for (uint16_t i = 0; i < n; i++) {
			rte_mbuf *m = frames[frame_ids[at++]].to_mbuf(pool());
			REQUIRE(m);
			pkts.push_back(m);
		}
		lrx_pipeline_process(p, pkts.data(), n, &sink);
		lrx_pipeline_poll_end(p, n == burst, &sink);
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
			[](void *arg, const char *name, uint64_t value) {
				(*(std::map<std::string, uint64_t> *)arg)[name] = value;
			},
			&c);
		for (const char *how : {"l3_sublists", "l4_sublists",
					"route_hint_hits", "route_lookups",
					"pool_wraps"})
			c.erase(how);
		r.counters.push_back(c);
	}
	lrx_pipeline_destroy(p);
	return r;
}

} // namespace

TEST_CASE("build-meta,l3-demux give identical results under every engine",
	  "[l3_demux][equivalence]")
{
	pool(); // EAL first
	const std::vector<Frame> frames = mixed_frames();
	std::mt19937 rng(2026);
	const std::vector<std::vector<Keys>> configs = {
		{{{"placement", "pool"}, {"alloc", "bulk"}, {"clear", "bulk"},
		  {"host_mac", "02:00:00:00:00:02"}},
		 {{"local_ipv4", "10.0.0.2"}, {"local_ipv6", "2001:db8::2"},
		  {"udp_ports", "2000,5000-5010"}, {"arp_ip", "10.0.0.2"},
		  {"arp_mac", "02:00:00:00:00:02"}, {"icmp_echo", "reply"}}},
		{{{"placement", "pool"}, {"alloc", "packet"}, {"clear", "none"},
		  {"hints", "hash,vlan"}},
		 {{"dispatch", "direct"}, {"route_hint", "no"},
		  {"trust_ip_csum_hint", "no"}}},
	};
	for (size_t ci = 0; ci < configs.size(); ci++) {
		const uint16_t burst = ci ? 7 : 32;
		std::vector<uint16_t> polls;
		size_t total = 0;
		while (total < 3000) {
			uint16_t n = (uint16_t)(1 + rng() % burst);
			polls.push_back(n);
			total += n;
		}
		std::vector<uint16_t> ids(total);
		for (auto &id : ids)
			id = (uint16_t)(rng() % 4 == 0 ? 0 : rng() % frames.size());

		Run ref = run(LRX_ENGINE_PACKET, 0, burst, configs[ci], ids, frames,
			      polls);
		REQUIRE(ref.out.size() == total);
		for (auto kind : {LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
				  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
			for (unsigned k : {1u, 2u}) {
				if (kind != LRX_ENGINE_HYBRID && k == 2)
					continue;
				INFO("config " << ci << " engine "
					       << lrx_engine_name(kind) << " k " << k);
				Run r = run(kind, k, burst, configs[ci], ids, frames,
					    polls);
				REQUIRE(r.out.size() == ref.out.size());
				for (size_t i = 0; i < r.out.size(); i++) {
					INFO("packet " << i);
					REQUIRE(r.out[i].first == ref.out[i].first);
					REQUIRE(r.out[i].second == ref.out[i].second);
				}
				for (size_t s = 0; s < 2; s++) {
					INFO("stage " << s);
					CHECK(r.stats[s].packets == ref.stats[s].packets);
					CHECK(r.stats[s].delivered == ref.stats[s].delivered);
					CHECK(r.stats[s].tx == ref.stats[s].tx);
					for (unsigned d = 0; d < LRX_DROP_MAX; d++)
						CHECK(r.stats[s].drops[d] ==
						      ref.stats[s].drops[d]);
					CHECK(r.counters[s] == ref.counters[s]);
				}
			}
		}
		CHECK(ref.counters[1]["IpInReceives"] > 0);
		CHECK(ref.counters[1]["Ip6InHdrErrors"] > 0);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}
