// SPDX-License-Identifier: BSD-3-Clause
// Engine tests (docs/engines.md): every engine gives the same verdicts, drop
// reasons, counts, sink contents and sink order on the same input; held
// packets come back at the flush; nothing leaks; bad engine names and
// config keys are refused with a message naming them; the ballast runs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "stage_conf.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
#include "sink.h"
#include "engine_internal.h"
#include "stage_keys.h"
}

namespace {

const char *const kVdevPort = "net_null0";

void eal()
{
	lrx_test::eal_init({"--vdev=net_null0,size=64", "--no-telemetry"});
}

rte_mempool *pool()
{
	eal();
	return lrx_test::mbuf_pool("engine_pool", 16383);
}

using Keys = std::vector<std::pair<std::string, std::string>>;

struct StageSpec {
	std::string name;
	Keys keys;
	unsigned footprint_kb = 0;
	StageSpec() = default;
	StageSpec(const char *n, Keys k = {}, unsigned fp = 0)
		: name(n), keys(std::move(k)), footprint_kb(fp)
	{
	}
};

struct EngineSpec {
	lrx_engine_kind kind;
	unsigned k;
	std::string label;
	uint16_t prefetch = 0; // [pipeline] prefetch: must not change a result
};

std::vector<EngineSpec> all_engines(unsigned n_stages, std::mt19937 &rng)
{
	unsigned k = n_stages ? std::uniform_int_distribution<unsigned>(0, n_stages)(rng) : 0;
	return {{LRX_ENGINE_PACKET, 0, "packet"},
		{LRX_ENGINE_BURST, 0, "burst"},
		{LRX_ENGINE_HYBRID, k, "hybrid:" + std::to_string(k)},
		{LRX_ENGINE_STATIC, 0, "static"},
		{LRX_ENGINE_GRAPH, 0, "graph"},
		{LRX_ENGINE_PACKET, 0, "packet prefetch", LRX_PREFETCH_TESTED},
		{LRX_ENGINE_BURST, 0, "burst prefetch", LRX_PREFETCH_TESTED},
		{LRX_ENGINE_GRAPH, 0, "graph prefetch", LRX_PREFETCH_TESTED}};
}

// Owns the stage configs a lrx_pipeline_conf points to.
struct Conf {
	lrx_pipeline_conf c{};
	std::vector<StageSpec> specs;

	Conf(const EngineSpec &e, uint16_t burst, const std::vector<StageSpec> &s,
	     lrx_stats_level level = LRX_STATS_COUNTERS)
		: specs(s)
	{
		c.engine = e.kind;
		c.hybrid_k = e.k;
		c.burst = burst;
		c.stats_level = level;
		c.prefetch = e.prefetch;
		c.n_stages = (unsigned)specs.size();
		c.socket_id = (int)rte_socket_id();
		c.lcore_id = rte_lcore_id();
		for (size_t i = 0; i < specs.size(); i++) {
			confs.set(c.stages[i], lrx_stage_find(specs[i].name.c_str()), specs[i].keys);
			c.stages[i].footprint_kb = specs[i].footprint_kb;
		}
	}
	lrx_test::StageConfs confs;
};

lrx_pipeline *create(const Conf &conf)
{
	lrx_pipeline *p = nullptr;
	char err[512] = "";
	int rc = lrx_pipeline_create(&conf.c, &p, err, sizeof(err));
	INFO("create: " << err);
	REQUIRE(rc == 0);
	REQUIRE(p != nullptr);
	return p;
}

struct Out {
	std::vector<uint8_t> bytes;
	lrx_next_t next;
	bool operator==(const Out &o) const { return bytes == o.bytes && next == o.next; }
};

std::vector<uint8_t> packet_bytes(rte_mbuf *m)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	return std::vector<uint8_t>(d, d + rte_pktmbuf_data_len(m));
}

// Moves the sink's contents into out (bytes, next) and frees them.
void take_sink(lrx_sink &sink, std::vector<Out> &out)
{
	for (uint32_t i = 0; i < sink.n; i++)
		out.push_back({packet_bytes(sink.pkts[i]), sink.nexts[i]});
	lrx_sink_discard(&sink);
}

using Frames = std::vector<std::vector<uint8_t>>;

Frames random_frames(std::mt19937 &rng, size_t n)
{
	Frames f(n);
	std::uniform_int_distribution<int> len(60, 256), byte(0, 255);
	for (size_t i = 0; i < n; i++) {
		f[i].resize((size_t)len(rng));
		for (auto &b : f[i])
			b = (uint8_t)byte(rng);
		// a unique sequence number, so order differences are seen
		std::memcpy(f[i].data(), &i, sizeof(uint32_t));
	}
	return f;
}

std::vector<rte_mbuf *> to_mbufs(const Frames &frames, size_t from, size_t n)
{
	std::vector<rte_mbuf *> v;
	for (size_t i = from; i < from + n; i++) {
		rte_mbuf *m = rte_pktmbuf_alloc(pool());
		REQUIRE(m != nullptr);
		char *d = rte_pktmbuf_append(m, (uint16_t)frames[i].size());
		REQUIRE(d != nullptr);
		std::memcpy(d, frames[i].data(), frames[i].size());
		v.push_back(m);
	}
	return v;
}

struct Result {
	std::vector<std::vector<Out>> per_poll; // sink after each poll, then drain
	std::vector<lrx_stage_stats> stats;
	uint64_t ballast = 0;
	unsigned footprint = 0;
};

// Runs the frames through the pipeline, polls of the given sizes.
Result run(const Conf &conf, const Frames &frames,
	   const std::vector<size_t> &polls)
{
	Result r;
	lrx_pipeline *p = create(conf);
	static lrx_sink sink; // large: not on the stack
	sink.n = 0;
	size_t at = 0;
	for (size_t n : polls) {
		auto pkts = to_mbufs(frames, at, n);
		at += n;
		lrx_pipeline_process(p, pkts.data(), (uint16_t)n, &sink);
		lrx_pipeline_poll_end(p, n == conf.c.burst, &sink);
		r.per_poll.emplace_back();
		take_sink(sink, r.per_poll.back());
	}
	lrx_pipeline_drain(p, &sink);
	r.per_poll.emplace_back();
	take_sink(sink, r.per_poll.back());
	for (unsigned i = 0; i < lrx_pipeline_stage_count(p); i++) {
		lrx_stage_stats st;
		lrx_pipeline_stage_stats(p, i, &st);
		r.stats.push_back(st);
	}
	r.ballast = lrx_pipeline_ballast_checksum(p);
	r.footprint = lrx_pipeline_footprint_bytes(p);
	lrx_pipeline_destroy(p);
	return r;
}

std::string describe(const std::vector<StageSpec> &specs)
{
	std::string s;
	for (auto &sp : specs) {
		s += sp.name;
		for (auto &kv : sp.keys)
			s += ":" + kv.first + "=" + kv.second;
		if (sp.footprint_kb)
			s += ":fp=" + std::to_string(sp.footprint_kb);
		s += ",";
	}
	return s;
}

bool operator<(const Out &x, const Out &y)
{
	return x.bytes != y.bytes ? x.bytes < y.bytes : x.next < y.next;
}

// exact_order: the sink's order must match too. Without it (a stage that
// releases packets during a call, docs/engines.md), the same entries in
// each poll's sink, in any order.
void require_same(const Result &a, const Result &b, bool exact_order = true)
{
	REQUIRE(a.per_poll.size() == b.per_poll.size());
	for (size_t i = 0; i < a.per_poll.size(); i++) {
		INFO("poll " << i);
		REQUIRE(a.per_poll[i].size() == b.per_poll[i].size());
		if (!exact_order) {
			auto x = a.per_poll[i], y = b.per_poll[i];
			std::sort(x.begin(), x.end());
			std::sort(y.begin(), y.end());
			REQUIRE(x == y);
			continue;
		}
		for (size_t j = 0; j < a.per_poll[i].size(); j++) {
			INFO("sink entry " << j);
			REQUIRE(a.per_poll[i][j].next == b.per_poll[i][j].next);
			REQUIRE(a.per_poll[i][j].bytes == b.per_poll[i][j].bytes);
		}
	}
	REQUIRE(a.stats.size() == b.stats.size());
	for (size_t s = 0; s < a.stats.size(); s++) {
		INFO("stage " << s);
		REQUIRE(a.stats[s].packets == b.stats[s].packets);
		REQUIRE(a.stats[s].tx == b.stats[s].tx);
		REQUIRE(a.stats[s].redirected == b.stats[s].redirected);
		REQUIRE(a.stats[s].consumed == b.stats[s].consumed);
		REQUIRE(a.stats[s].delivered == b.stats[s].delivered);
		for (unsigned d = 0; d < LRX_DROP_MAX; d++)
			REQUIRE(a.stats[s].drops[d] == b.stats[s].drops[d]);
	}
	REQUIRE(a.ballast == b.ballast);
	REQUIRE(a.footprint == b.footprint);
}

StageSpec random_stage(std::mt19937 &rng)
{
	std::uniform_int_distribution<int> kind(0, 4), k(1, 7), fp(0, 3);
	StageSpec s;
	switch (kind(rng)) {
	case 0: s.name = "null"; break;
	case 1: s.name = "touch"; s.keys = {{"bytes", std::to_string(k(rng) * 9)}}; break;
	case 2: s.name = "drop-every"; s.keys = {{"k", std::to_string(k(rng))}}; break;
	case 3:
		s.name = "tx-every";
		s.keys = {{"k", std::to_string(k(rng))}, {"port", k(rng) > 4 ? "7" : "0"}};
		break;
	default:
		s.name = "hold";
		if (k(rng) > 5)
			s.keys = {{"release", "immediate"}};
		break;
	}
	s.footprint_kb = fp(rng) == 3 ? 1 : 0;
	return s;
}

} // namespace

TEST_CASE("static engine: a direct entry for every registered stage", "[engine][static]")
{
	// the static engine is the no-indirect-call bound only if it knows
	// every stage a pipeline can name (stages/static_entries.h)
	unsigned n = 0;
	for (const lrx_stage *st; (st = lrx_stage_at(n)) != nullptr; n++) {
		INFO("stage " << st->name);
		CHECK(engine_static_direct(st));
	}
	for (const char *name : {"build-meta", "gro", "l3-demux", "xdp", "null", "touch"}) {
		INFO("stage " << name);
		REQUIRE(lrx_stage_find(name) != nullptr);
	}
	CHECK(n >= 6);
}

TEST_CASE("a pipeline of every registered stage runs in every engine", "[engine][registry]")
{
	// "a stage is one folder" (docs/architecture.md): whatever the
	// registry holds composes into one pipeline with its default keys, in
	// an order its placement rules allow (the stages that provide
	// something to later ones first), and every engine gives the same
	// result on it
	rte_mempool *mp = pool();
	std::vector<StageSpec> specs;
	for (int providers = 1; providers >= 0; providers--)
		for (unsigned i = 0; lrx_stage_at(i) != nullptr; i++)
			if ((lrx_stage_at(i)->provides != 0) == (providers == 1))
				specs.emplace_back(lrx_stage_at(i)->name);
	unsigned provided = 0;
	for (const StageSpec &sp : specs) {
		const lrx_stage *st = lrx_stage_find(sp.name.c_str());
		INFO("stage " << sp.name);
		CHECK((st->needs & ~provided) == 0);
		provided |= st->provides;
	}
	REQUIRE(specs.size() >= 10);
	REQUIRE(specs.size() <= LRX_PIPELINE_MAX_STAGES);
	std::mt19937 rng(18);
	std::vector<size_t> polls{64, 64, 64, 9};
	Frames frames = random_frames(rng, 64 * 3 + 9);
	auto engines = all_engines((unsigned)specs.size(), rng);
	INFO("stages " << describe(specs));
	Result ref = run(Conf(engines[0], 64, specs), frames, polls);
	size_t out = 0;
	for (auto &pp : ref.per_poll)
		out += pp.size();
	REQUIRE(out == frames.size()); // every packet ends in the sink once
	for (size_t e = 1; e < engines.size(); e++) {
		INFO("engine " << engines[e].label << " vs packet");
		Result r = run(Conf(engines[e], 64, specs), frames, polls);
		require_same(ref, r);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("engine names parse and print", "[engine]")
{
	lrx_engine_kind kind;
	unsigned k = 99;
	REQUIRE(lrx_engine_parse("packet", &kind, &k) == 0);
	REQUIRE(kind == LRX_ENGINE_PACKET);
	REQUIRE(lrx_engine_parse("burst", &kind, &k) == 0);
	REQUIRE(kind == LRX_ENGINE_BURST);
	REQUIRE(lrx_engine_parse("static", &kind, &k) == 0);
	REQUIRE(kind == LRX_ENGINE_STATIC);
	REQUIRE(lrx_engine_parse("graph", &kind, &k) == 0);
	REQUIRE(kind == LRX_ENGINE_GRAPH);
	REQUIRE(lrx_engine_parse("hybrid:3", &kind, &k) == 0);
	REQUIRE(kind == LRX_ENGINE_HYBRID);
	REQUIRE(k == 3);
	for (const char *bad : {"", "hybrid", "hybrid:", "hybrid:x", "hybrid:-1",
				"hybrid:17", "bursts", "Packet", "graph "})
		CHECK(lrx_engine_parse(bad, &kind, &k) == -EINVAL);
	REQUIRE(std::string(lrx_engine_name(LRX_ENGINE_BURST)) == "burst");
	REQUIRE(std::string(lrx_engine_name(LRX_ENGINE_HYBRID)) == "hybrid");
	REQUIRE(std::string(lrx_engine_name(LRX_ENGINE_GRAPH)) == "graph");
}

TEST_CASE("stage keys are read into the stage's config, refused in the loader's words", "[engine][keys]")
{
	const lrx_stage *touch = lrx_stage_find("touch");
	REQUIRE(touch);
	lrx_test::StageConf unknown(touch, {{"byts", "12"}});
	CHECK(unknown.rc == -ENOENT);
	CHECK(unknown.error == "touch: key 'byts' = '12': unknown key; valid keys: bytes");
	for (const char *bad : {"0", "010", "+5", " 5", "5 ", "\t5", "0x10", "-1", ""}) {
		lrx_test::StageConf c(lrx_stage_find("drop-every"), {{"k", bad}});
		INFO("k=" << bad);
		CHECK(c.rc == -EINVAL);
		CHECK(c.error == std::string("drop-every: key 'k' = '") + bad +
					 "': must be an integer in 1..4294967295");
	}
	lrx_test::StageConf ok(lrx_stage_find("drop-every"), {{"k", "16"}});
	CHECK(ok.rc == 0);

	// footprint_kb is the engine's: one bound, checked by the loader
	char why[256] = "";
	CHECK(lrx_footprint_check(0, 100000, why, sizeof(why)) == -EINVAL);
	CHECK(std::string(why).find("at most") != std::string::npos);
	CHECK(lrx_footprint_check(0, 3, why, sizeof(why)) == 0);
	pool();
	Conf conf({LRX_ENGINE_BURST, 0, "burst"}, 32, {{"touch", {}, 3}});
	lrx_pipeline *p = create(conf);
	CHECK(lrx_pipeline_footprint_bytes(p) == 3 * 1024);
	lrx_pipeline_destroy(p);
}

TEST_CASE("every stage's defaults are valid values of its keys", "[engine][keys]")
{
	for (unsigned i = 0; lrx_stage_at(i); i++) {
		const lrx_stage *s = lrx_stage_at(i);
		INFO(s->name);
		CHECK((s->keys == nullptr) == (s->conf_size == 0));
		// lrx_stage_conf_new aborts on a bad default
		void *conf = lrx_stage_conf_new(s);
		CHECK(conf != nullptr);
		free(conf);
		for (const lrx_value_key *k = s->keys; k && k->name; k++) {
			INFO(k->name);
			CHECK(k->help != nullptr);
			CHECK(k->offset + k->type.size <= s->conf_size);
		}
	}
}

TEST_CASE("all engines give identical results on random pipelines", "[engine][equivalence]")
{
	rte_mempool *mp = pool();
	const int seed = GENERATE(range(1, 201));
	std::mt19937 rng((unsigned)seed);
	std::uniform_int_distribution<int> n_stages_d(0, 6);
	std::vector<StageSpec> specs;
	int n_stages = n_stages_d(rng);
	for (int i = 0; i < n_stages; i++)
		specs.push_back(random_stage(rng));
	// bursts 1..256, with the extremes often
	std::uniform_int_distribution<int> burst_kind(0, 3), burst_d(1, 256);
	int bk = burst_kind(rng);
	uint16_t burst = (uint16_t)(bk == 0 ? 1 : bk == 1 ? 256 : burst_d(rng));
	std::uniform_int_distribution<int> n_polls_d(1, 4);
	std::vector<size_t> polls;
	size_t total = 0;
	int n_polls = n_polls_d(rng);
	for (int i = 0; i < n_polls; i++) {
		// full polls (budget used) and short ones
		size_t n = std::uniform_int_distribution<int>(0, 1)(rng)
				   ? burst
				   : (size_t)std::uniform_int_distribution<int>(0, burst)(rng);
		polls.push_back(n);
		total += n;
	}
	Frames frames = random_frames(rng, total);
	auto engines = all_engines((unsigned)n_stages, rng);
	INFO("seed " << seed << " burst " << burst << " stages " << describe(specs));

	Result ref = run(Conf(engines[0], burst, specs), frames, polls);
	size_t out = 0;
	for (auto &pp : ref.per_poll)
		out += pp.size();
	REQUIRE(out == total); // every packet ends in the sink exactly once
	bool mid_call_release = false;
	for (auto &sp : specs)
		for (auto &kv : sp.keys)
			mid_call_release |= kv.second == "immediate";
	for (size_t e = 1; e < engines.size(); e++) {
		INFO("engine " << engines[e].label << " vs packet");
		Result r = run(Conf(engines[e], burst, specs), frames, polls);
		require_same(ref, r, !mid_call_release);
	}
	// stats off: the packet and static engines' plain walk (no count, no
	// ballast test per packet) when no stage has ballast; the same sink
	// after every poll as with the counts, in every engine
	Result off = run(Conf(engines[0], burst, specs, LRX_STATS_OFF), frames, polls);
	REQUIRE(off.per_poll == ref.per_poll);
	REQUIRE(off.ballast == ref.ballast);
	for (size_t e = 1; e < engines.size(); e++) {
		INFO("engine " << engines[e].label << " vs packet, stats off");
		Result r = run(Conf(engines[e], burst, specs, LRX_STATS_OFF), frames, polls);
		require_same(off, r, !mid_call_release);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("the flush at the end of each poll releases held packets, in every engine", "[engine][flush]")
{
	rte_mempool *mp = pool();
	std::mt19937 rng(7);
	Frames frames = random_frames(rng, 64);
	std::vector<StageSpec> specs = {{"touch"}, {"hold"}, {"drop-every", {{"k", "2"}}}, {"hold"}, {"null"}};
	for (auto &e : all_engines((unsigned)specs.size(), rng)) {
		INFO("engine " << e.label);
		Conf conf(e, 64, specs);
		lrx_pipeline *p = create(conf);
		static lrx_sink sink;
		sink.n = 0;
		auto pkts = to_mbufs(frames, 0, 64);
		lrx_pipeline_process(p, pkts.data(), 64, &sink);
		REQUIRE(sink.n == 0); // all held by the first hold
		lrx_pipeline_poll_end(p, true, &sink);
		// released by hold 1, every 2nd dropped, the rest held by hold 2
		// and released by its flush in the same poll_end
		REQUIRE(sink.n == 64);
		unsigned drops = 0, delivered = 0;
		for (uint32_t i = 0; i < sink.n; i++) {
			if (lrx_next_kind(sink.nexts[i]) == LRX_NEXT_DROP) {
				drops++;
				CHECK(lrx_next_arg(sink.nexts[i]) == LRX_DROP_TEST_DROP);
			} else {
				delivered++;
				CHECK(sink.nexts[i] == LRX_NEXT_DELIVER_V);
			}
		}
		CHECK(drops == 32);
		CHECK(delivered == 32);
		// drops first (their slots come first), then hold 2's release
		CHECK(lrx_next_kind(sink.nexts[0]) == LRX_NEXT_DROP);
		lrx_stage_stats st;
		lrx_pipeline_stage_stats(p, 1, &st);
		CHECK(st.consumed == 64);
		lrx_pipeline_stage_stats(p, 3, &st);
		CHECK(st.consumed == 32);
		lrx_pipeline_stage_stats(p, 4, &st);
		CHECK(st.delivered == 32);
		lrx_sink_discard(&sink);

		// drain at exit without a poll_end
		pkts = to_mbufs(frames, 0, 10);
		lrx_pipeline_process(p, pkts.data(), 10, &sink);
		REQUIRE(sink.n == 0);
		lrx_pipeline_drain(p, &sink);
		REQUIRE(sink.n == 10);
		lrx_sink_discard(&sink);
		lrx_pipeline_destroy(p);
		LRX_REQUIRE_POOL_FULL(mp);
	}
}

TEST_CASE("destroying a pipeline that still holds packets frees them", "[engine][flush]")
{
	rte_mempool *mp = pool();
	std::mt19937 rng(3);
	Frames frames = random_frames(rng, 20);
	for (auto &e : all_engines(1, rng)) {
		Conf conf(e, 32, {{"hold"}});
		lrx_pipeline *p = create(conf);
		static lrx_sink sink;
		sink.n = 0;
		auto pkts = to_mbufs(frames, 0, 20);
		lrx_pipeline_process(p, pkts.data(), 20, &sink);
		REQUIRE(sink.n == 0);
		REQUIRE(lrx_test::in_use(mp) == 20);
		lrx_pipeline_destroy(p);
		LRX_REQUIRE_POOL_FULL(mp);
	}
}

TEST_CASE("the ballast really executes and its size is reported", "[engine][ballast]")
{
	pool();
	std::mt19937 rng(11);
	Frames frames = random_frames(rng, 100);
	std::map<unsigned, uint64_t> sums;
	for (unsigned kb : {0u, 1u, 2u, 8u}) {
		std::vector<StageSpec> specs = {{"touch", {}, kb}, {"null", {}, kb}};
		std::vector<uint64_t> per_engine;
		for (auto &e : all_engines(2, rng)) {
			Result r = run(Conf(e, 32, specs), frames, {32, 32, 32, 4});
			CHECK(r.footprint == 2 * kb * 1024);
			per_engine.push_back(r.ballast);
		}
		for (auto s : per_engine)
			REQUIRE(s == per_engine[0]); // same code run as often
		sums[kb] = per_engine[0];
	}
	CHECK(sums[0] == 0);
	CHECK(sums[1] != 0);
	CHECK(sums[2] != sums[1]);
	CHECK(sums[8] != sums[2]);
}

TEST_CASE("per-stage stats: counts, calls per engine, cycles only when asked", "[engine][stats]")
{
	rte_mempool *mp = pool();
	std::mt19937 rng(5);
	Frames frames = random_frames(rng, 64);
	std::vector<StageSpec> specs = {{"touch"}, {"drop-every", {{"k", "4"}}},
					{"tx-every", {{"k", "3"}, {"port", "0"}}}};
	for (auto level : {LRX_STATS_OFF, LRX_STATS_COUNTERS, LRX_STATS_CYCLES}) {
		for (auto &e : all_engines(3, rng)) {
			INFO("engine " << e.label << " level " << level);
			Result r = run(Conf(e, 64, specs, level), frames, {64});
			REQUIRE(r.stats.size() == 3);
			if (level == LRX_STATS_OFF) {
				CHECK(r.stats[0].packets == 0);
				CHECK(r.stats[1].drops[LRX_DROP_TEST_DROP] == 0);
				continue;
			}
			CHECK(r.stats[0].packets == 64);
			CHECK(r.stats[1].packets == 64);
			CHECK(r.stats[1].drops[LRX_DROP_TEST_DROP] == 16);
			CHECK(r.stats[2].packets == 48);
			CHECK(r.stats[2].tx == 16);
			CHECK(r.stats[2].delivered == 32);
			if (level == LRX_STATS_CYCLES)
				CHECK(r.stats[0].cycles > 0);
			else
				CHECK(r.stats[0].cycles == 0);
			if (e.kind == LRX_ENGINE_BURST || e.kind == LRX_ENGINE_GRAPH)
				CHECK(r.stats[0].calls == 1);
			if (e.kind == LRX_ENGINE_PACKET || e.kind == LRX_ENGINE_STATIC)
				CHECK(r.stats[0].calls == 64);
		}
	}
	// stage-specific counters
	Conf conf({LRX_ENGINE_BURST, 0, "burst"}, 64, specs);
	lrx_pipeline *p = create(conf);
	static lrx_sink sink;
	sink.n = 0;
	auto pkts = to_mbufs(frames, 0, 64);
	lrx_pipeline_process(p, pkts.data(), 64, &sink);
	lrx_sink_discard(&sink);
	std::map<std::string, uint64_t> counters;
	lrx_pipeline_stage_counters(p, 1, [](void *arg, const lrx_stage_counter *c, uint64_t v) {
		(*static_cast<std::map<std::string, uint64_t> *>(arg))[c->name] = v;
	}, &counters);
	CHECK(counters["dropped"] == 16);
	CHECK(std::string(lrx_pipeline_stage_name(p, 2)) == "tx-every");
	lrx_pipeline_destroy(p);
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {
uint16_t null_port()
{
	static int port = -1;
	if (port >= 0)
		return (uint16_t)port;
	eal();
	uint16_t id;
	REQUIRE(rte_eth_dev_get_port_by_name(kVdevPort, &id) == 0);
	rte_eth_conf conf{};
	REQUIRE(rte_eth_dev_configure(id, 1, 1, &conf) == 0);
	REQUIRE(rte_eth_rx_queue_setup(id, 0, 256, (unsigned)rte_socket_id(), nullptr, pool()) == 0);
	REQUIRE(rte_eth_tx_queue_setup(id, 0, 256, (unsigned)rte_socket_id(), nullptr) == 0);
	REQUIRE(rte_eth_dev_start(id) == 0);
	REQUIRE(lrx_sink_port_ready(id, 1, 1, false) == 0);
	port = id;
	return id;
}
} // namespace

TEST_CASE("sink completion: TX per port, drops by reason, bad port is TC_EGRESS", "[engine][sink]")
{
	rte_mempool *mp = pool();
	uint16_t port = null_port();
	static lrx_sink sink;
	sink.n = 0;
	std::mt19937 rng(1);
	Frames frames = random_frames(rng, 10);
	auto pkts = to_mbufs(frames, 0, 10);
	lrx_sink_put(&sink, pkts[0], LRX_NEXT_DELIVER_V);
	lrx_sink_put(&sink, pkts[1], lrx_next_tx(port));
	lrx_sink_put(&sink, pkts[2], lrx_next_drop(LRX_DROP_IP_CSUM));
	lrx_sink_put(&sink, pkts[3], lrx_next_redirect(port));
	lrx_sink_put(&sink, pkts[4], lrx_next_tx(4000));
	lrx_sink_put(&sink, pkts[5], lrx_next_redirect(RTE_MAX_ETHPORTS + 1));
	lrx_sink_put(&sink, pkts[6], LRX_NEXT_DELIVER_V);
	lrx_sink_put(&sink, pkts[7], lrx_next_drop(LRX_DROP_TEST_DROP));
	lrx_sink_put(&sink, pkts[8], lrx_next_tx(port));
	lrx_sink_put(&sink, pkts[9], lrx_next_drop(LRX_DROP_TEST_DROP));
	lrx_sink_counters c{};
	lrx_sink_complete(&sink, 0, &c);
	CHECK(sink.n == 0);
	CHECK(c.delivered == 2);
	CHECK(c.tx == 3);
	CHECK(c.tx_failed == 0);
	CHECK(c.dropped == 5);
	CHECK(c.drops[LRX_DROP_IP_CSUM] == 1);
	CHECK(c.drops[LRX_DROP_TEST_DROP] == 2);
	CHECK(c.drops[LRX_DROP_TC_EGRESS] == 2);

	// a port DPDK knows but listrx has not started (no TX queue of ours)
	lrx_sink_port_ready(port, 0, 0, false);
	auto more = to_mbufs(frames, 0, 2);
	lrx_sink_put(&sink, more[0], lrx_next_tx(port));
	lrx_sink_put(&sink, more[1], lrx_next_redirect(port));
	lrx_sink_counters d{};
	lrx_sink_complete(&sink, 0, &d);
	REQUIRE(lrx_sink_port_ready(port, 1, 1, false) == 0);
	CHECK(d.tx == 0);
	CHECK(d.drops[LRX_DROP_TC_EGRESS] == 2);
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("sink completion: lcores beyond the port's TX queues share them", "[engine][sink]")
{
	rte_mempool *mp = pool();
	uint16_t port = null_port(); // one TX queue
	// three polling lcores on a port with one TX queue: lcore 2 sends on
	// queue 2 % 1 = 0 under its lock (queue 2 does not exist: sending on it
	// would be undefined)
	REQUIRE(lrx_sink_port_ready(port, 1, 3, false) == 0);
	rte_eth_stats before{}, after{};
	REQUIRE(rte_eth_stats_get(port, &before) == 0);
	static lrx_sink sink;
	sink.n = 0;
	std::mt19937 rng(2);
	Frames frames = random_frames(rng, 5);
	auto pkts = to_mbufs(frames, 0, 5);
	for (unsigned i = 0; i < 5; i++)
		lrx_sink_put(&sink, pkts[i], i % 2 ? LRX_NEXT_DELIVER_V : lrx_next_tx(port));
	lrx_sink_counters c{};
	lrx_sink_complete(&sink, 2, &c);
	REQUIRE(rte_eth_stats_get(port, &after) == 0);
	REQUIRE(lrx_sink_port_ready(port, 1, 1, false) == 0);
	CHECK(c.tx == 3);
	CHECK(c.delivered == 2);
	CHECK(c.dropped == 0);
	CHECK(after.q_opackets[0] - before.q_opackets[0] == 3);
	CHECK(after.opackets - before.opackets == 3);
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("sink completion without sends counts every verdict as the general path does", "[engine][sink]")
{
	rte_mempool *mp = pool();
	static lrx_sink sink;
	std::mt19937 rng(3);
	const lrx_next_t kinds[] = {
		LRX_NEXT_DELIVER_V, LRX_NEXT_CONTINUE_V,
		lrx_next_drop(LRX_DROP_IP_CSUM), lrx_next_drop(LRX_DROP_IP_INHDR),
		lrx_next_drop(LRX_DROP_TEST_DROP),
		lrx_next_make(LRX_NEXT_DROP, LRX_DROP_MAX + 7), // out of range
		LRX_NEXT_CONSUMED_V, lrx_next_make(static_cast<enum lrx_next_kind>(9), 1)};
	for (int round = 0; round < 20; round++) {
		const unsigned n = 1 + rng() % 200;
		Frames frames = random_frames(rng, n);
		auto pkts = to_mbufs(frames, 0, n);
		lrx_sink_counters want{};
		sink.n = 0;
		for (unsigned i = 0; i < n; i++) {
			// mostly delivered, as a real poll (one kind only is the
			// all-delivered path, tested apart)
			lrx_next_t next = rng() % 4 ? LRX_NEXT_DELIVER_V
						    : kinds[rng() % 8];
			lrx_sink_put(&sink, pkts[i], next);
			switch (lrx_next_kind(next)) {
			case LRX_NEXT_DELIVER:
			case LRX_NEXT_CONTINUE:
				want.delivered++;
				break;
			case LRX_NEXT_DROP:
				want.dropped++;
				want.drops[lrx_next_arg(next) < LRX_DROP_MAX
						   ? lrx_next_arg(next)
						   : (uint32_t)LRX_DROP_NOT_SPECIFIED]++;
				break;
			default:
				want.dropped++;
				want.drops[LRX_DROP_NOT_SPECIFIED]++;
				break;
			}
		}
		lrx_sink_counters c{};
		lrx_sink_complete(&sink, 0, &c);
		CHECK(sink.n == 0);
		CHECK(c.delivered == want.delivered);
		CHECK(c.dropped == want.dropped);
		CHECK(c.tx == 0);
		for (unsigned r = 0; r < LRX_DROP_MAX; r++) {
			INFO("reason " << r);
			CHECK(c.drops[r] == want.drops[r]);
		}
		LRX_REQUIRE_POOL_FULL(mp);
	}
}

TEST_CASE("polling a port runs the pipeline in every engine", "[engine][poll]")
{
	rte_mempool *mp = pool();
	uint16_t port = null_port();
	std::mt19937 rng(2);
	std::vector<StageSpec> specs = {{"touch"}, {"hold"}, {"drop-every", {{"k", "5"}}}};
	for (auto &e : all_engines(3, rng)) {
		INFO("engine " << e.label);
		Conf conf(e, 32, specs);
		lrx_pipeline *p = create(conf);
		static lrx_sink sink;
		sink.n = 0;
		lrx_sink_counters c{};
		uint64_t rx = 0;
		for (int i = 0; i < 10; i++) {
			uint16_t n = lrx_pipeline_poll(p, port, 0, 32, &sink);
			CHECK(n == 32); // net_null always fills the burst
			rx += n;
			CHECK(sink.n == n); // hold released them at the poll's end
			lrx_sink_complete(&sink, 0, &c);
		}
		lrx_pipeline_drain(p, &sink);
		lrx_sink_complete(&sink, 0, &c);
		CHECK(rx == 320);
		CHECK(c.dropped == 64);
		CHECK(c.delivered == 256);
		lrx_pipeline_destroy(p);
		LRX_REQUIRE_POOL_FULL(mp);
	}
}

TEST_CASE("bursts of LRX_BURST_MAX with two holding stages stay equivalent", "[engine][equivalence]")
{
	rte_mempool *mp = pool();
	std::mt19937 rng(99);
	Frames frames = random_frames(rng, 3 * LRX_BURST_MAX);
	std::vector<StageSpec> specs = {{"drop-every", {{"k", "3"}}}, {"hold"},
					{"tx-every", {{"k", "2"}, {"port", "1"}}},
					{"hold"}, {"touch", {}, 1}};
	std::vector<size_t> polls = {LRX_BURST_MAX, LRX_BURST_MAX, 17, LRX_BURST_MAX - 17};
	auto engines = all_engines((unsigned)specs.size(), rng);
	Result ref = run(Conf(engines[0], LRX_BURST_MAX, specs), frames, polls);
	size_t out = 0;
	for (auto &pp : ref.per_poll)
		out += pp.size();
	REQUIRE(out == 3 * LRX_BURST_MAX);
	for (size_t e = 1; e < engines.size(); e++) {
		INFO("engine " << engines[e].label << " vs packet");
		require_same(ref, run(Conf(engines[e], LRX_BURST_MAX, specs), frames, polls));
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("a stage that releases during the call (as GRO does) gives the same verdicts in every engine", "[engine][equivalence]")
{
	rte_mempool *mp = pool();
	std::mt19937 rng(1234);
	Frames frames = random_frames(rng, 300);
	std::vector<StageSpec> specs = {{"drop-every", {{"k", "3"}}},
					{"hold", {{"release", "immediate"}}},
					{"tx-every", {{"k", "2"}, {"port", "1"}}},
					{"hold"}, {"drop-every", {{"k", "5"}}}};
	std::vector<size_t> polls = {64, 64, 30, 64, 64, 14};
	auto engines = all_engines((unsigned)specs.size(), rng);
	Result ref = run(Conf(engines[0], 64, specs), frames, polls);
	size_t out = 0;
	for (auto &pp : ref.per_poll)
		out += pp.size();
	REQUIRE(out == 300);
	REQUIRE(ref.stats[1].consumed == 300 - 100);
	for (size_t e = 1; e < engines.size(); e++) {
		INFO("engine " << engines[e].label << " vs packet");
		require_same(ref, run(Conf(engines[e], 64, specs), frames, polls), false);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("two stages that consume a whole vector and release it keep every packet's fate",
	  "[engine][equivalence]")
{
	// the first hold takes every packet of the run and gives them back in
	// the same call: the vector engines start the run afresh from the
	// released packets (engine_vector_rebase); the second hold releases a
	// subset later in the same run, and must not overwrite the packets
	// the run's slots now stand for
	rte_mempool *mp = pool();
	std::mt19937 rng(4321);
	Frames frames = random_frames(rng, 128 + 64 + 17);
	std::vector<StageSpec> specs = {{"hold", {{"release", "immediate"}}},
					{"drop-every", {{"k", "3"}}},
					{"hold", {{"release", "immediate"}}},
					{"tx-every", {{"k", "4"}, {"port", "1"}}},
					{"hold", {{"release", "immediate"}}}};
	std::vector<size_t> polls = {128, 64, 17};
	auto engines = all_engines((unsigned)specs.size(), rng);
	Result ref = run(Conf(engines[0], 128, specs), frames, polls);
	size_t out = 0;
	for (auto &pp : ref.per_poll)
		out += pp.size();
	REQUIRE(out == frames.size());
	REQUIRE(ref.stats[0].consumed == frames.size());
	REQUIRE(ref.stats[1].drops[LRX_DROP_TEST_DROP] == frames.size() / 3);
	for (size_t e = 1; e < engines.size(); e++) {
		INFO("engine " << engines[e].label << " vs packet");
		require_same(ref, run(Conf(engines[e], 128, specs), frames, polls), false);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {
// A stage "costs" what its wrapper adds to the fake counters: event 0 gets
// cost * packets per call, event 1 one per call.
struct CostWrap {
	void (*orig)(void *ctx, rte_mbuf **pkts, uint16_t n, lrx_next_t *nexts);
	void *ctx;
	uint64_t cost;
};
CostWrap cost_wraps[4];

void costed_burst(void *ctx, rte_mbuf **pkts, uint16_t n, lrx_next_t *nexts)
{
	for (auto &w : cost_wraps)
		if (w.ctx == ctx) {
			w.orig(ctx, pkts, n, nexts);
			lrx_pmu_fake_added[0] += w.cost * n;
			lrx_pmu_fake_added[1] += 1;
			return;
		}
	FAIL("no wrapped stage for this context");
}
} // namespace

TEST_CASE("pmu stages: each stage is charged exactly what it cost, in the vector engines",
	  "[engine][pmu]")
{
	rte_mempool *mp = pool();
	std::mt19937 rng(11);
	Frames frames = random_frames(rng, 200);
	std::vector<StageSpec> specs = {{"touch"}, {"drop-every", {{"k", "4"}}},
					{"tx-every", {{"k", "3"}, {"port", "0"}}}};
	lrx_pmu_conf pc{};
	char why[512] = "";
	REQUIRE(lrx_pmu_parse_events("cycles,instructions", &pc, why, sizeof(why)) == 0);
	pc.enabled = pc.stages = true;
	pc.source = LRX_PMU_SOURCE_FAKE;
	lrx_pmu_fake_use_tsc = false; // only what the wrappers add
	// what every engine must still produce with the counters read
	Result ref = run(Conf({LRX_ENGINE_PACKET, 0, "packet"}, 64, specs), frames,
			 {50, 50, 50, 50});

	for (auto &e : all_engines(3, rng)) {
		INFO("engine " << e.label);
		Conf conf(e, 64, specs);
		lrx_pipeline *p = create(conf);
		lrx_pmu g;
		lrx_pmu_init(&g, &pc);
		REQUIRE(lrx_pmu_open(&g) == 2);
		int rc = lrx_pipeline_set_pmu(p, &g, why, sizeof(why));
		if (e.kind == LRX_ENGINE_PACKET || e.kind == LRX_ENGINE_STATIC) {
			// a read pair per packet per stage: refused, with the reason
			CHECK(rc == -ENOTSUP);
			CHECK(std::string(why).find("per packet") != std::string::npos);
			CHECK_FALSE(lrx_pipeline_stage_attributable(p, 0));
			lrx_pmu_close(&g);
			lrx_pipeline_destroy(p);
			continue;
		}
		REQUIRE(rc == 0);
		for (unsigned i = 0; i < 3; i++) {
			engine_stage *st = &p->stages[i];
			cost_wraps[i] = {st->process_burst, st->ctx, 100u * (i + 1) + 7};
			st->process_burst = costed_burst;
		}
		static lrx_sink sink;
		sink.n = 0;
		lrx_pmu_start(&g);
		for (size_t at = 0, poll = 0; at < frames.size(); at += 50, poll++) {
			auto pkts = to_mbufs(frames, at, 50);
			lrx_pipeline_process(p, pkts.data(), 50, &sink);
			lrx_pipeline_poll_end(p, false, &sink);
			std::vector<Out> got;
			take_sink(sink, got);
			CHECK(got == ref.per_poll[poll]); // same verdicts and bytes
		}
		lrx_pmu_stop(&g);
		uint64_t charged = 0;
		for (unsigned i = 0; i < 3; i++) {
			INFO("stage " << i);
			lrx_stage_stats st;
			lrx_pipeline_stage_stats(p, i, &st);
			if (!lrx_pipeline_stage_attributable(p, i)) {
				// hybrid's per-packet tail: not read around
				CHECK(e.kind == LRX_ENGINE_HYBRID);
				CHECK(i >= e.k);
				CHECK(st.pmu[0] == 0);
				continue;
			}
			CHECK(st.packets > 0);
			CHECK(st.pmu[0] == cost_wraps[i].cost * st.packets);
			CHECK(st.pmu[1] == st.calls);
			charged += st.pmu[0];
		}
		// the group's total holds every stage's charge
		CHECK(g.counters[0].count >= charged);
		lrx_pipeline_set_pmu(p, nullptr, nullptr, 0);
		lrx_pmu_close(&g);
		lrx_pipeline_destroy(p);
		for (auto &w : cost_wraps)
			w = {};
	}
	lrx_pmu_fake_use_tsc = true;
	LRX_REQUIRE_POOL_FULL(mp);
}

