// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <unistd.h>

extern "C" {
#include "topology.h"
}

TEST_CASE("topology finds cores and an L1i consistent with the OS", "[topology]")
{
	lrx_topology t;
	REQUIRE(lrx_topology_read(&t) == 0);
	CHECK(t.pus >= 1);
	CHECK(t.pus == (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	CHECK(t.cores >= 1);
	CHECK(t.cores <= t.pus);
	CHECK(t.numa_nodes >= 1);
	long os_l1i = sysconf(_SC_LEVEL1_ICACHE_SIZE);
	if (os_l1i > 0) {
		// hwloc and glibc read the same CPUID leaves
		CHECK(t.l1i_bytes == (unsigned)os_l1i);
		CHECK(t.l1i_line > 0);
	} else if (t.l1i_bytes == 0) {
		CHECK(std::string(t.l1i_source) == "unknown");
	}
}
