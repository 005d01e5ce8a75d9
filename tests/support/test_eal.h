// SPDX-License-Identifier: BSD-3-Clause
// One EAL per test process (EAL cannot be initialised twice), set up the
// way listrx runs on a machine without hugepages, plus a helper that
// asserts a mempool is full again and names what is missing.
#pragma once

#include <string>
#include <vector>

#include <rte_mbuf.h>
#include <rte_mempool.h>

namespace lrx_test {

// Initialises EAL once (--no-huge --no-pci --no-shconf -m 512, main lcore
// only, log level warning). Extra vdevs may be passed on the first call
// only. Aborts the test run with a message if EAL fails.
// n_lcores: lcores 0..n-1 on the allowed CPUs (lcores_args); the first
// call decides
void eal_init(const std::vector<std::string> &extra_args = {}, unsigned n_lcores = 1);

// A pktmbuf pool on the current socket (created once per name).
rte_mempool *mbuf_pool(const char *name = "test_pool", unsigned n = 8191,
		       uint16_t data_room = RTE_MBUF_DEFAULT_BUF_SIZE,
		       uint16_t priv_size = 0);

// Count of buffers not back in the pool.
unsigned in_use(const rte_mempool *mp);

} // namespace lrx_test

// In a Catch2 test: the pool has every buffer back.
#define LRX_REQUIRE_POOL_FULL(mp)                                              \
	do {                                                                   \
		INFO("mempool " << (mp)->name << " in use: "                   \
				<< lrx_test::in_use(mp));                      \
		REQUIRE(lrx_test::in_use(mp) == 0);                            \
	} while (0)
