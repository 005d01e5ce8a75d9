// SPDX-License-Identifier: BSD-3-Clause
// GRO under every engine: the same input gives the same output bytes, in
// the same order, and the same GRO counters (shared/DESIGN.md: engines
// differ only in iteration order and dispatch), for each impl: the kernel
// rules, rte_gro heavy mode and rte_gro light mode.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "engine_run.h"
#include "gro_harness.h"

extern "C" {
#include "pipeline.h"
}

using namespace gro_test;
namespace fr = lrx_test::frames;

namespace {

struct EngineRun {
	std::vector<std::vector<uint8_t>> bytes; // sink order
	std::vector<lrx_next_t> nexts;
	std::vector<std::pair<std::string, uint64_t>> counters;
};

// budget_used: what every full poll reports. With it, held packets stay
// across polls until the age (set to 10 s so that timing cannot make the
// engines differ); without it, every poll end flushes everything.
EngineRun run_engine(const char *engine, const char *impl,
		     const std::vector<Frame> &frames, uint16_t burst,
		     bool budget_used, rte_mempool *mp)
{
	lrx_engine_kind kind;
	unsigned k = 0;
	REQUIRE(lrx_engine_parse(engine, &kind, &k) == 0);
	// impl kernel = the gro stage; rte, rte-light = rte-gro's two modes
	const bool kernel = std::string(impl) == "kernel";
	lrx_test::StageKeys keys{{"flush_age_us", "10000000"}};
	if (!kernel)
		keys.emplace_back("mode", std::string(impl) == "rte" ? "heavy" : "light");
	std::vector<uint16_t> polls;
	for (size_t i = 0; i < frames.size(); i += burst)
		polls.push_back((uint16_t)std::min<size_t>(burst, frames.size() - i));
	INFO("engine " << engine << " impl " << impl);
	lrx_test::EngineRun run = lrx_test::run_engine(
		kind, k, burst, {{kernel ? "gro" : "rte-gro", keys}},
		[&](size_t at) {
			rte_mbuf *m = frames[at].to_mbuf(mp);
			// dynfields survive free/alloc: "build-meta did not run"
			if (m && lrx_meta_dynfield_offset >= 0)
				lrx_meta_set(m, nullptr);
			// the NIC hashes flows 1000..1004, not the others (bucket
			// 0, as a veth)
			const uint16_t sport = frames[at].l4_off
				? frames[at].be16(frames[at].l4_off) : 0;
			if (m && sport >= 1000 && sport < 1005) {
				m->ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
				m->hash.rss = 0x1001u * sport;
			}
			return m;
		},
		polls,
		// a full burst is a poll that used its budget: GRO keeps
		// young packets across polls, as napi_poll
		[&](uint16_t n) { return budget_used && n == burst; });
	EngineRun r;
	for (auto &o : run.out) {
		r.nexts.push_back(o.first);
		r.bytes.push_back(std::move(o.second));
	}
	for (auto &kv : run.counters[0])
		r.counters.emplace_back(kv.first, kv.second);
	return r;
}

std::vector<Spec> mixed_stream(unsigned seed, size_t n)
{
	std::mt19937 rng(seed);
	std::vector<uint32_t> seq(10, 1000);
	std::vector<uint16_t> ip_id(10, 0); // per flow: incrementing IDs
	std::vector<Spec> r;
	for (size_t i = 0; i < n; i++) {
		if (rng() % 16 == 0) {
			Spec s; // UDP passthrough
			s.sport = 9000;
			r.push_back(s);
			continue;
		}
		uint16_t f = (uint16_t)(rng() % 10);
		size_t len = rng() % 10 == 0 ? 300 : 1400;
		Spec s = tcp_spec(seq[f], len, (uint16_t)(1000 + f), f % 4 == 0);
		s.ip_id = ip_id[f]++;
		s.frag = 0x4000;
		if (rng() % 20 == 0)
			s.tcp_flags |= fr::TCP_PSH;
		// IPv4 options: the segment leaves GRO early
		if (f % 4 != 0 && rng() % 40 == 0)
			s.ip4_options = {1, 1, 1, 0};
		seq[f] += (uint32_t)len;
		r.push_back(s);
	}
	return r;
}

// The stream's frames; flow 1004 (IPv6) carries a destination options
// header, and some segments a bad TCP checksum (they leave early).
std::vector<Frame> mixed_frames(unsigned seed, size_t n)
{
	std::vector<Frame> v = build_all(mixed_stream(seed, n));
	std::mt19937 rng(seed + 1);
	for (Frame &f : v) {
		if (f.l4 != fr::L4::tcp)
			continue;
		if (f.be16(f.l4_off) == 1004)
			f = fr::ip6_insert_ext(f, 60, fr::ip6_ext(6, {1, 4, 0, 0, 0, 0}));
		if (rng() % 50 == 0)
			f.l4_corrupt_csum();
	}
	return v;
}

} // namespace

// The reference is the packet engine; each other engine must match it,
// for every impl.
static void check_engines_match(const std::vector<const char *> &engines)
{
	rte_mempool *mp = lrx_test::mbuf_pool("gro_engine_pool", 8191);
	std::vector<Frame> frames = mixed_frames(7, 3000);
	for (auto [burst, budget_used, impl] :
	     {std::tuple<uint16_t, bool, const char *>{32, true, "kernel"},
	      {64, true, "kernel"}, {32, false, "kernel"},
	      {32, true, "rte"}, {64, true, "rte"}, {32, false, "rte"},
	      {32, true, "rte-light"}, {64, true, "rte-light"},
	      {32, false, "rte-light"}}) {
		INFO("impl " << impl << " burst " << burst << " budget_used "
			     << budget_used);
		lrx_test::engine_prefetch = 0; // the reference: prefetch off
		EngineRun ref = run_engine("packet", impl, frames, burst,
					   budget_used, mp);
		REQUIRE(ref.bytes.size() > 0);
		// it merged: rte_gro does not merge flagged (PSH) segments,
		// and light mode (or a flush at every poll's end) merges only
		// within a poll of 32/64 packets over 10 flows
		size_t most = std::string(impl) == "kernel"
				      ? frames.size() / 2
				      : frames.size() * 2 / 3;
		INFO("packets out " << ref.bytes.size() << " of " << frames.size());
		REQUIRE(ref.bytes.size() < most);
		for (lrx_next_t x : ref.nexts)
			REQUIRE(x == LRX_NEXT_DELIVER_V);
		for (uint16_t pf : lrx_test::prefetch_settings) {
			lrx_test::engine_prefetch = pf;
			INFO("prefetch " << pf);
			for (const char *engine : engines) {
				INFO("engine " << engine);
				EngineRun r = run_engine(engine, impl, frames, burst,
							 budget_used, mp);
				size_t tot_r = 0, tot_ref = 0;
				for (auto &b : r.bytes)
					tot_r += b.size();
				for (auto &b : ref.bytes)
					tot_ref += b.size();
				std::string cs;
				for (auto &kv : r.counters)
					cs += kv.first + "=" + std::to_string(kv.second) + " ";
				INFO("bytes out " << tot_r << " vs packet engine " << tot_ref);
				INFO("gro counters " << cs);
				// the first packet that differs (not the whole streams:
				// Catch2 would print every byte of them)
				size_t first_diff = 0;
				while (first_diff < r.bytes.size() &&
				       first_diff < ref.bytes.size() &&
				       r.bytes[first_diff] == ref.bytes[first_diff])
					first_diff++;
				INFO("first packet that differs: " << first_diff << " of "
								   << ref.bytes.size());
				REQUIRE(r.bytes.size() == ref.bytes.size());
				REQUIRE(first_diff == ref.bytes.size());
				REQUIRE(r.nexts == ref.nexts);
				REQUIRE(r.counters == ref.counters);
			}
		}
		LRX_REQUIRE_POOL_FULL(mp);
	}
}

TEST_CASE("gro: packet, burst, hybrid and static engines give the same "
	  "output bytes and order",
	  "[gro][engine]")
{
	check_engines_match({"burst", "hybrid:1", "static"});
}

// Kept separate so that a graph engine defect is reported on its own.
TEST_CASE("gro: the graph engine gives the same output bytes and order",
	  "[gro][engine][graph]")
{
	check_engines_match({"graph"});
}

// BIG TCP (gro_max_size above 64 KB): GRO writes tot_len 0 / payload_len 0
// on a merged packet over 64 KB, and l3-demux takes its length from the
// packet, as iph_totlen (and ip6_rcv_core with the jumbo option
// ipv6_gro_complete would insert) do: every merged packet is delivered,
// in every engine, IPv4 and IPv6.
TEST_CASE("gro then l3-demux: BIG TCP packets over 64 KB are delivered",
	  "[gro][engine][l3]")
{
	rte_mempool *mp = lrx_test::mbuf_pool("gro_engine_pool", 8191);
	for (bool v6 : {false, true}) {
		std::vector<Frame> frames = build_all(tcp_stream(100, 1460, 1000, 1000, v6));
		for (const char *engine : {"packet", "burst", "hybrid:2", "static", "graph"}) {
			INFO("engine " << engine << (v6 ? " IPv6" : " IPv4"));
			lrx_engine_kind kind;
			unsigned k = 0;
			REQUIRE(lrx_engine_parse(engine, &kind, &k) == 0);
			// two polls of 64 and 36: each flushes its merged packet
			lrx_test::EngineRun run = lrx_test::run_engine(
				kind, k, 64,
				{{"build-meta", {}},
				 {"gro", {{"max_size", "131072"}, {"flush_age_us", "0"}}},
				 {"l3-demux", {}}},
				[&](size_t at) { return frames[at].to_mbuf(mp); }, {64, 36},
				[](uint16_t) { return false; });
			REQUIRE(run.out.size() == 2);
			// 40 (+ 20 for IPv6) + 64 x 1460 bytes: over 64 KB
			CHECK(run.out[0].second.size() > 65536);
			for (auto &o : run.out)
				CHECK(o.first == LRX_NEXT_DELIVER_V);
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}
