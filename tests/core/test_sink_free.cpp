// SPDX-License-Identifier: BSD-3-Clause
// lrx_mbuf_free_burst: plain received mbufs go back to their pool in one
// put; clones, chains, shared references and mixed pools
// still free exactly what rte_pktmbuf_free_bulk would, nothing leaked or
// freed twice.
#include <catch2/catch.hpp>

#include <vector>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "test_eal.h"

extern "C" {
#include "sink.h"
}

namespace {

std::vector<rte_mbuf *> alloc_burst(rte_mempool *mp, unsigned n)
{
	std::vector<rte_mbuf *> v(n);
	REQUIRE(rte_pktmbuf_alloc_bulk(mp, v.data(), n) == 0);
	return v;
}

}

TEST_CASE("a burst of plain mbufs goes back to its pool whole", "[sink]")
{
	rte_mempool *mp = lrx_test::mbuf_pool();
	for (unsigned n : {1u, 32u, 64u, 512u}) {
		auto v = alloc_burst(mp, n);
		CHECK(lrx_test::in_use(mp) == n);
		lrx_mbuf_free_burst(v.data(), n);
		LRX_REQUIRE_POOL_FULL(mp);
	}
	lrx_mbuf_free_burst(nullptr, 0); // nothing to free, nothing read
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("a shared reference is dropped, not freed", "[sink]")
{
	rte_mempool *mp = lrx_test::mbuf_pool();
	auto v = alloc_burst(mp, 8);
	rte_mbuf *kept = v[5];
	rte_mbuf_refcnt_update(kept, 1); // a second owner
	lrx_mbuf_free_burst(v.data(), 8);
	CHECK(lrx_test::in_use(mp) == 1);
	CHECK(rte_mbuf_refcnt_read(kept) == 1);
	rte_pktmbuf_free(kept);
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("a chain frees every segment; a clone releases its direct buffer", "[sink]")
{
	rte_mempool *mp = lrx_test::mbuf_pool();
	auto v = alloc_burst(mp, 6);
	// v[1] becomes a chain of three (v[1], tail, tail2)
	rte_mbuf *tail = rte_pktmbuf_alloc(mp);
	rte_mbuf *tail2 = rte_pktmbuf_alloc(mp);
	REQUIRE(tail);
	REQUIRE(tail2);
	REQUIRE(rte_pktmbuf_chain(tail, tail2) == 0);
	REQUIRE(rte_pktmbuf_chain(v[1], tail) == 0);
	CHECK(v[1]->nb_segs == 3);
	// v[3] is replaced by a clone (indirect) of a direct mbuf kept here
	rte_mbuf *direct = rte_pktmbuf_alloc(mp);
	REQUIRE(direct);
	rte_mbuf *clone = rte_pktmbuf_alloc(mp);
	REQUIRE(clone);
	rte_pktmbuf_attach(clone, direct);
	CHECK(rte_mbuf_refcnt_read(direct) == 2);
	rte_pktmbuf_free(v[3]);
	v[3] = clone;
	lrx_mbuf_free_burst(v.data(), 6);
	CHECK(lrx_test::in_use(mp) == 1); // the direct buffer, still ours
	CHECK(rte_mbuf_refcnt_read(direct) == 1);
	rte_pktmbuf_free(direct);
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("mbufs of two pools each go back to their own", "[sink]")
{
	rte_mempool *a = lrx_test::mbuf_pool();
	rte_mempool *b = lrx_test::mbuf_pool("test_pool_sink_b", 1023);
	auto v = alloc_burst(a, 16);
	auto w = alloc_burst(b, 16);
	std::vector<rte_mbuf *> mixed;
	for (unsigned i = 0; i < 16; i++) {
		mixed.push_back(v[i]);
		mixed.push_back(w[i]);
	}
	lrx_mbuf_free_burst(mixed.data(), (unsigned)mixed.size());
	LRX_REQUIRE_POOL_FULL(a);
	LRX_REQUIRE_POOL_FULL(b);
}
