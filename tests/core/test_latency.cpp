// SPDX-License-Identifier: BSD-3-Clause
// The latency histogram: buckets cover every value with 1/32 relative
// width, quantiles of known distributions within that resolution, clamping,
// merging; and the sink recorder on real mbufs (TSC ports recorded, other
// clocks counted apart).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "test_eal.h"

extern "C" {
#include "latency.h"
#include "sink.h"
}

namespace {

// a histogram is 5.6 KB: on the heap, zeroed
std::unique_ptr<lrx_latency_hist> make_hist()
{
	return std::unique_ptr<lrx_latency_hist>(new lrx_latency_hist{});
}

// the quantile of sorted values by nearest rank, as the histogram defines it
double exact_quantile(const std::vector<uint64_t> &sorted, double q)
{
	size_t rank = (size_t)std::ceil(q * (double)sorted.size());
	rank = std::max<size_t>(rank, 1);
	return (double)sorted[rank - 1];
}

// the reported midpoint is within half a bucket: 1/64 of the value above
// 64, 0.5 below (exact buckets report the value itself)
void check_close(double got, double want)
{
	INFO("got " << got << ", want " << want);
	CHECK(std::fabs(got - want) <= std::max(want / 64.0, 0.5));
}

void check_quantiles(const std::vector<uint64_t> &values)
{
	auto h = make_hist();
	for (uint64_t v : values)
		lrx_latency_hist_add(h.get(), v);
	std::vector<uint64_t> sorted = values;
	std::sort(sorted.begin(), sorted.end());
	CHECK(lrx_latency_hist_count(h.get()) == values.size());
	for (double q : {0.5, 0.9, 0.99, 0.999, 1.0}) {
		INFO("quantile " << q);
		check_close(lrx_latency_hist_quantile(h.get(), q), exact_quantile(sorted, q));
	}
	// max: the top of the highest bucket, less than 1/32 above the value
	double top = (double)sorted.back();
	CHECK(lrx_latency_hist_max(h.get()) >= top);
	CHECK(lrx_latency_hist_max(h.get()) <= top + top / 32.0);
}

} // namespace

TEST_CASE("latency buckets: exact below 64, then 1/32 of the value, covering all",
	  "[latency]")
{
	for (uint64_t v = 0; v < 64; v++)
		CHECK(lrx_latency_bucket(v) == v);
	uint64_t next = 0;
	for (unsigned i = 0; i < LRX_LATENCY_BUCKETS; i++) {
		uint64_t lo, hi;
		lrx_latency_bucket_range(i, &lo, &hi);
		INFO("bucket " << i << " [" << lo << ", " << hi << "]");
		REQUIRE(lo == next); // contiguous, no gap, no overlap
		REQUIRE(hi >= lo);
		CHECK((double)(hi - lo + 1) <= std::max(1.0, (double)lo / 32.0));
		CHECK(lrx_latency_bucket(lo) == i);
		CHECK(lrx_latency_bucket(hi) == i);
		next = hi + 1;
	}
	CHECK(next == LRX_LATENCY_MAX_TICKS + 1);
}

TEST_CASE("latency quantiles of known distributions within the bucket resolution",
	  "[latency]")
{
	SECTION("one value")
	{
		check_quantiles(std::vector<uint64_t>(1000, 1234));
	}
	SECTION("uniform 1..1000000")
	{
		std::vector<uint64_t> v;
		for (uint64_t i = 1; i <= 1000000; i++)
			v.push_back(i);
		check_quantiles(v);
		auto h = make_hist();
		for (uint64_t x : v)
			lrx_latency_hist_add(h.get(), x);
		check_close(lrx_latency_hist_quantile(h.get(), 0.5), 500000);
		check_close(lrx_latency_hist_quantile(h.get(), 0.99), 990000);
		check_close(lrx_latency_hist_quantile(h.get(), 0.999), 999000);
	}
	SECTION("a tail: 99% at 300, 1% at 20000")
	{
		std::vector<uint64_t> v(99000, 300);
		v.insert(v.end(), 1000, 20000);
		check_quantiles(v);
		auto h = make_hist();
		for (uint64_t x : v)
			lrx_latency_hist_add(h.get(), x);
		check_close(lrx_latency_hist_quantile(h.get(), 0.5), 300);
		check_close(lrx_latency_hist_quantile(h.get(), 0.99), 300); // rank 99000 is a 300
		check_close(lrx_latency_hist_quantile(h.get(), 0.999), 20000);
	}
	SECTION("exponential, mean 2000, small values exact")
	{
		std::mt19937_64 rng(7);
		std::exponential_distribution<double> dist(1.0 / 2000);
		std::vector<uint64_t> v;
		for (int i = 0; i < 200000; i++)
			v.push_back((uint64_t)dist(rng));
		check_quantiles(v);
	}
}

TEST_CASE("latency histogram: empty, clamped above the range, negative as 0", "[latency]")
{
	auto h = make_hist();
	CHECK(lrx_latency_hist_count(h.get()) == 0);
	CHECK(lrx_latency_hist_quantile(h.get(), 0.5) == -1);
	CHECK(lrx_latency_hist_max(h.get()) == -1);

	lrx_latency_hist_add(h.get(), UINT64_C(1) << 40);
	lrx_latency_hist_add(h.get(), LRX_LATENCY_MAX_TICKS + 1);
	lrx_latency_hist_add(h.get(), LRX_LATENCY_MAX_TICKS); // in range: not clamped
	CHECK(h->clamped == 2);
	CHECK(lrx_latency_hist_count(h.get()) == 3);
	CHECK(lrx_latency_hist_max(h.get()) == (double)LRX_LATENCY_MAX_TICKS);
	check_close(lrx_latency_hist_quantile(h.get(), 0.5), (double)LRX_LATENCY_MAX_TICKS);

	// a stamp a little ahead of now: the difference wraps to a huge
	// unsigned value, which is a skew, not a 584-year latency
	auto g = make_hist();
	lrx_latency_hist_add(g.get(), (uint64_t)-5);
	CHECK(g->clamped == 0);
	CHECK(g->counts[0] == 1);
	CHECK(lrx_latency_hist_quantile(g.get(), 1.0) == 0);
}

TEST_CASE("latency histograms merge as if every value went into one", "[latency]")
{
	auto a = make_hist(), b = make_hist(), all = make_hist();
	std::mt19937_64 rng(3);
	std::uniform_int_distribution<uint64_t> small(0, 5000), large(10000, 1u << 24);
	for (int i = 0; i < 50000; i++) {
		uint64_t x = small(rng), y = large(rng);
		lrx_latency_hist_add(a.get(), x);
		lrx_latency_hist_add(b.get(), y);
		lrx_latency_hist_add(all.get(), x);
		lrx_latency_hist_add(all.get(), y);
	}
	lrx_latency_hist_add(b.get(), UINT64_C(1) << 30);
	lrx_latency_hist_add(all.get(), UINT64_C(1) << 30);
	lrx_latency_hist_merge(a.get(), b.get());
	CHECK(lrx_latency_hist_count(a.get()) == 100001);
	CHECK(a->clamped == 1);
	CHECK(std::equal(std::begin(a->counts), std::end(a->counts), std::begin(all->counts)));
	// 50000 values up to 5000, then 50001 from 10000 on
	CHECK(lrx_latency_hist_quantile(a.get(), 0.49) <= 5000 * 65.0 / 64.0);
	CHECK(lrx_latency_hist_quantile(a.get(), 0.51) >= 10000 * 63.0 / 64.0);
	// b unchanged
	CHECK(lrx_latency_hist_count(b.get()) == 50001);
}

TEST_CASE("latency cycles to ns", "[latency]")
{
	CHECK(lrx_latency_ticks_to_ns(3000, 3000000000ull) == Approx(1000));
	CHECK(lrx_latency_ticks_to_ns(-1, 3000000000ull) == -1);
}

TEST_CASE("the sink recorder: TSC-stamped ports recorded, other stamps counted apart",
	  "[latency]")
{
	rte_mempool *mp = lrx_test::mbuf_pool();
	auto lat = std::unique_ptr<lrx_latency>(new lrx_latency{});
	REQUIRE(lrx_latency_init(lat.get()) == 0);
	REQUIRE(lat->ts_offset >= 0);
	REQUIRE(lat->ts_flag != 0);
	lat->port_tsc[0] = true; // port 0 stamps with the TSC, port 1 does not

	static lrx_sink sink;
	sink.n = 0;
	const uint64_t hz = rte_get_tsc_hz();
	const uint64_t ago = hz / 1000; // stamped 1 ms before the poll ends
	uint64_t stamp = rte_rdtsc() - ago;
	std::vector<rte_mbuf *> pkts;
	for (int i = 0; i < 8; i++) {
		rte_mbuf *m = rte_pktmbuf_alloc(mp);
		REQUIRE(m);
		m->port = i < 4 ? 0 : 1;
		if (i % 4 != 3) { // one per port without a timestamp
			*RTE_MBUF_DYNFIELD(m, lat->ts_offset, rte_mbuf_timestamp_t *) = stamp;
			m->ol_flags |= lat->ts_flag;
		}
		lrx_sink_put(&sink, m, LRX_NEXT_DELIVER_V);
	}
	uint64_t before = rte_rdtsc();
	lrx_latency_record(lat.get(), sink.pkts, sink.n);
	uint64_t after = rte_rdtsc();
	CHECK(sink.n == 8); // recording does not complete the sink
	CHECK(lrx_latency_hist_count(&lat->hist) == 3);
	CHECK(lat->not_tsc[0] == 0);
	CHECK(lat->not_tsc[1] == 3);
	double p50 = lrx_latency_hist_quantile(&lat->hist, 0.5);
	CHECK(p50 >= (double)(before - stamp) * 63.0 / 64.0);
	CHECK(p50 <= (double)(after - stamp) * 65.0 / 64.0);
	lrx_sink_discard(&sink);
	LRX_REQUIRE_POOL_FULL(mp);
}
