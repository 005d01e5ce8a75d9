// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdint>
#include <string>
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

TEST_CASE("the L1i associativity reads as ways, fully associative or unknown", "[topology]")
{
	lrx_topology t{};
	char buf[24];
	t.l1i_assoc = 8;
	CHECK(std::string(lrx_topology_l1i_ways(&t, buf, sizeof(buf))) == "8-way");
	t.l1i_assoc = -1;
	CHECK(std::string(lrx_topology_l1i_ways(&t, buf, sizeof(buf))) == "fully associative");
	t.l1i_assoc = 0; // CPUID leaf without it (some VMs): not "0-way"
	CHECK(std::string(lrx_topology_l1i_ways(&t, buf, sizeof(buf))) == "associativity unknown");
}

TEST_CASE("/proc/stat: a CPU's busy and total ticks", "[topology]")
{
	const char *text = "cpu  10 0 10 100 0 0 0 0 0 0\n"
			   "cpu0 5 1 4 50 2 1 1 1 0 0\n"
			   "cpu1 7 0 3 40 0 0 0 0 0 0\n"
			   "intr 12345\n";
	uint64_t busy = 0, total = 0;
	REQUIRE(lrx_proc_stat_cpu(text, 0, &busy, &total) == 0);
	CHECK(total == 65);
	CHECK(busy == 65 - 50 - 2); // idle and iowait are not busy
	REQUIRE(lrx_proc_stat_cpu(text, 1, &busy, &total) == 0);
	CHECK(total == 50);
	CHECK(busy == 10);
	CHECK(lrx_proc_stat_cpu(text, 2, &busy, &total) == -ENOENT);
	// "cpu1" is not "cpu10"
	CHECK(lrx_proc_stat_cpu("cpu10 1 1 1 1 0 0 0 0\n", 1, &busy, &total) == -ENOENT);
}

TEST_CASE("busy share of this machine's CPUs is read, and a missing CPU is < 0", "[topology]")
{
	unsigned cpus[2] = {0, 100000};
	double share[2];
	REQUIRE(lrx_cpus_busy_share(cpus, 2, 50, share) == 0);
	CHECK(share[0] >= 0);
	CHECK(share[0] <= 1);
	CHECK(share[1] < 0);
}
