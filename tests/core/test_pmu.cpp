// SPDX-License-Identifier: BSD-3-Clause
// The counter layer (dataplane/measure/pmu.c): event names and raw encodings as
// perf spells them, multiplex scaling, the perf_event source on whatever
// this machine has (a PMU: counts; none: every event unavailable with the
// reason, never a zero), and the fake source's group life cycle, refused
// events and fast reads.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <string>
#include <sys/stat.h>

#include <linux/perf_event.h>

extern "C" {
#include "pmu.h"
}

namespace {

lrx_pmu_conf parse(const char *text)
{
	lrx_pmu_conf c{};
	char why[512] = "";
	INFO("events: " << text << " why: " << why);
	REQUIRE(lrx_pmu_parse_events(text, &c, why, sizeof(why)) == 0);
	c.enabled = true;
	return c;
}

std::string parse_error(const char *text)
{
	lrx_pmu_conf c{};
	char why[512] = "";
	REQUIRE(lrx_pmu_parse_events(text, &c, why, sizeof(why)) == -EINVAL);
	return why;
}

bool has_cpu_pmu()
{
	struct stat st;
	return stat("/sys/bus/event_source/devices/cpu", &st) == 0 ||
	       stat("/sys/bus/event_source/devices/cpu_core", &st) == 0;
}

struct FakeReset {
	FakeReset()
	{
		lrx_pmu_fake_use_tsc = false;
		lrx_pmu_fake_refuse = 0;
		memset(lrx_pmu_fake_added, 0, sizeof(lrx_pmu_fake_added));
	}
	~FakeReset()
	{
		lrx_pmu_fake_use_tsc = true;
		lrx_pmu_fake_refuse = 0;
	}
};

} // namespace

TEST_CASE("pmu: the default events are the issue's five, with perf's encodings", "[pmu]")
{
	lrx_pmu_conf c = parse("default");
	REQUIRE(c.n_events == 5);
	CHECK(std::string(c.events[0].name) == "cycles");
	CHECK(c.events[0].type == PERF_TYPE_HARDWARE);
	CHECK(c.events[0].config == PERF_COUNT_HW_CPU_CYCLES);
	CHECK(std::string(c.events[1].name) == "instructions");
	CHECK(c.events[1].config == PERF_COUNT_HW_INSTRUCTIONS);
	CHECK(std::string(c.events[2].name) == "L1-icache-load-misses");
	CHECK(c.events[2].type == PERF_TYPE_HW_CACHE);
	CHECK(c.events[2].config ==
	      (PERF_COUNT_HW_CACHE_L1I | PERF_COUNT_HW_CACHE_OP_READ << 8 |
	       PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
	CHECK(std::string(c.events[3].name) == "branch-misses");
	CHECK(std::string(c.events[4].name) == "iTLB-load-misses");
	CHECK(c.events[4].config ==
	      (PERF_COUNT_HW_CACHE_ITLB | PERF_COUNT_HW_CACHE_OP_READ << 8 |
	       PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
#if defined(__x86_64__)
	// the vendor fallback for I-cache misses on the CPUs listrx knows
	if (c.events[2].has_fallback)
		CHECK((c.events[2].fallback_raw == 0x81 || c.events[2].fallback_raw == 0x10000188eull ||
		       c.events[2].fallback_raw == 0x283 || c.events[2].fallback_raw == 0x280));
#endif
}

TEST_CASE("pmu: raw events as perf -e spells them", "[pmu]")
{
	lrx_pmu_conf c = parse("r10000188e,icmiss=r0283,cycles");
	REQUIRE(c.n_events == 3);
	CHECK(std::string(c.events[0].name) == "r10000188e");
	CHECK(c.events[0].type == PERF_TYPE_RAW);
	CHECK(c.events[0].config == 0x10000188eull);
	CHECK(std::string(c.events[1].name) == "icmiss");
	CHECK(c.events[1].config == 0x283);
	CHECK(c.events[2].type == PERF_TYPE_HARDWARE);
}

TEST_CASE("pmu: bad event lists name the token and what is valid", "[pmu]")
{
	std::string why = parse_error("cycles,bogus");
	CHECK(why.find("'bogus'") != std::string::npos);
	CHECK(why.find("L1-icache-load-misses") != std::string::npos);
	CHECK(why.find("rHEX") != std::string::npos);
	CHECK(parse_error("rzz").find("'rzz'") != std::string::npos);
	CHECK(parse_error("=r12").find("'=r12'") != std::string::npos);
	CHECK(parse_error("cycles,cycles").find("twice") != std::string::npos);
	CHECK(parse_error("").find("no event") != std::string::npos);
	CHECK(parse_error("r1,r2,r3,r4,r5,r6,r7,r8,r9").find("at most 8") != std::string::npos);
}

TEST_CASE("pmu: names outside perf's table resolve through libpfm4", "[pmu]")
{
	char why[256] = "";
	if (!lrx_pmu_names_libpfm(why, sizeof(why))) {
		WARN("SKIPPED: " << why);
		return;
	}
	// libpfm4's generic perf PMU: perf's PERF_COUNT_HW_* spelled out
	lrx_pmu_conf c = parse("PERF_COUNT_HW_INSTRUCTIONS,perf::PERF_COUNT_HW_CPU_CYCLES");
	REQUIRE(c.n_events == 2);
	CHECK(std::string(c.events[0].name) == "PERF_COUNT_HW_INSTRUCTIONS");
	CHECK(c.events[0].type == PERF_TYPE_HARDWARE);
	CHECK(c.events[0].config == PERF_COUNT_HW_INSTRUCTIONS);
	CHECK(c.events[1].type == PERF_TYPE_HARDWARE);
	CHECK(c.events[1].config == PERF_COUNT_HW_CPU_CYCLES);
	// perf's own names still come from the built-in table
	CHECK(parse("L1-icache-load-misses").events[0].type == PERF_TYPE_HW_CACHE);
	// a vendor name of this CPU's PMU model becomes a raw event
	lrx_pmu_conf v{};
	char vwhy[512] = "";
	if (lrx_pmu_parse_events("RETIRED_INSTRUCTIONS", &v, vwhy, sizeof(vwhy)) == 0) {
		CHECK(v.events[0].type == PERF_TYPE_RAW);
		CHECK(v.events[0].config == 0xc0); // AMD PMCx0C0 (PPR "Retired Instructions")
	} else {
		WARN("not an AMD PMU model: " << vwhy);
	}
	CHECK(parse_error("cycles,bogus").find("libpfm4") != std::string::npos);
}

TEST_CASE("pmu: multiplexed counts are scaled as perf stat scales them", "[pmu]")
{
	CHECK(lrx_pmu_scaled(1000, 10, 10) == 1000.0);
	CHECK(lrx_pmu_scaled(1000, 10, 5) == 2000.0);
	CHECK(lrx_pmu_scaled(1000, 30, 10) == 3000.0);
	CHECK(lrx_pmu_scaled(1000, 10, 0) == -1.0); // never scheduled: not counted
}

TEST_CASE("pmu: the perf_event source counts, or says why not for every event", "[pmu]")
{
	lrx_pmu_conf c = parse("default");
	lrx_pmu g;
	lrx_pmu_init(&g, &c);
	unsigned n = lrx_pmu_open(&g);
	if (!has_cpu_pmu()) {
		// this machine: no hardware PMU. Nothing opens, each event
		// carries the reason, the group is not counted.
		CHECK(n == 0);
		CHECK(std::string(g.why).find("no hardware PMU") != std::string::npos);
		for (unsigned e = 0; e < c.n_events; e++) {
			INFO("event " << c.events[e].name);
			CHECK(std::string(g.counters[e].why).find("no hardware PMU") !=
			      std::string::npos);
		}
		lrx_pmu_start(&g);
		lrx_pmu_stop(&g);
		CHECK_FALSE(g.counted);
		CHECK_FALSE(lrx_pmu_stages_ready(&g));
	} else {
		// a machine with a PMU: cycles and instructions advance over
		// a known amount of work (the count is not checked beyond that)
		REQUIRE(n > 0);
		lrx_pmu_start(&g);
		volatile uint64_t x = 0;
		for (int i = 0; i < 1000000; i++)
			x = x + (uint64_t)i;
		lrx_pmu_stop(&g);
		CHECK(g.counted);
		if (!g.counters[1].why[0])
			CHECK(g.counters[1].count > 1000000);
	}
	lrx_pmu_close(&g);
	for (auto &counter : g.counters)
		CHECK(counter.fd == -1);
}

TEST_CASE("pmu: the fake source counts what was added, refuses what it is told to", "[pmu]")
{
	FakeReset reset;
	lrx_pmu_conf c = parse("cycles,instructions,branch-misses");
	c.source = LRX_PMU_SOURCE_FAKE;
	c.stages = true;
	lrx_pmu_fake_refuse = 1u << 2; // branch-misses: a PMU without it
	lrx_pmu g;
	lrx_pmu_init(&g, &c);
	REQUIRE(lrx_pmu_open(&g) == 2);
	CHECK(g.counters[0].why[0] == '\0');
	CHECK(std::string(g.counters[2].why).find("refuses") != std::string::npos);
	CHECK(lrx_pmu_stages_ready(&g));

	lrx_pmu_fake_added[0] = 50; // before the start: not in the totals
	lrx_pmu_start(&g);
	uint64_t before[LRX_PMU_MAX_EVENTS] = {}, after[LRX_PMU_MAX_EVENTS] = {};
	lrx_pmu_read(&g, before);
	lrx_pmu_fake_added[0] += 1000;
	lrx_pmu_fake_added[1] += 3000;
	lrx_pmu_read(&g, after);
	CHECK(after[0] - before[0] == 1000);
	CHECK(after[1] - before[1] == 3000);
	lrx_pmu_stop(&g);
	CHECK(g.counted);
	CHECK(g.counters[0].count == 1000);
	CHECK(g.counters[1].count == 3000);
	CHECK(g.time_running_ns == g.time_enabled_ns);
	lrx_pmu_close(&g);
}

TEST_CASE("pmu: the fake source's time-shaped counts keep a fixed ratio", "[pmu]")
{
	lrx_pmu_conf c = parse("cycles,instructions,iTLB-load-misses");
	c.source = LRX_PMU_SOURCE_FAKE;
	lrx_pmu g;
	lrx_pmu_init(&g, &c);
	REQUIRE(lrx_pmu_open(&g) == 3);
	lrx_pmu_start(&g);
	volatile uint64_t x = 0;
	for (int i = 0; i < 100000; i++)
		x = x + (uint64_t)i;
	lrx_pmu_stop(&g);
	REQUIRE(g.counters[0].count > 0);
	CHECK(g.counters[1].count == 2 * g.counters[0].count);
	CHECK(g.counters[2].count == 3 * g.counters[0].count);
	CHECK(std::string(lrx_pmu_source_name(LRX_PMU_SOURCE_FAKE)) == "fake");
	lrx_pmu_close(&g);
}

TEST_CASE("pmu: the self-monitoring page read and the fast path's event mapping", "[pmu]")
{
	// a perf_event_mmap_page whose counter is not on the PMU right now
	// (index 0): the value is the kernel's saved offset, no rdpmc runs
	// (an rdpmc without the kernel's permission would fault)
	alignas(64) static perf_event_mmap_page pages[2];
	memset(pages, 0, sizeof(pages));
	pages[0].offset = 123456;
	pages[0].lock = 2;
	pages[1].offset = 42;
	pages[1].cap_user_rdpmc = 1; // allowed, but not scheduled: still offset
	CHECK(lrx_pmu_rdpmc_page(&pages[0]) == 123456);
	CHECK(lrx_pmu_rdpmc_page(&pages[1]) == 42);

	// the fast read fills values[] by event index, in group order
	lrx_pmu_conf c = parse("cycles,instructions,branch-misses");
	lrx_pmu g;
	lrx_pmu_init(&g, &c);
	g.n_open = 2;
	g.open_event[0] = 2; // branch-misses opened first ...
	g.open_event[1] = 0; // ... then cycles; instructions refused
	g.counters[2].page = &pages[0];
	g.counters[0].page = &pages[1];
	g.rdpmc = true;
	uint64_t values[LRX_PMU_MAX_EVENTS] = {7, 7, 7, 7, 7, 7, 7, 7};
	lrx_pmu_read(&g, values);
	CHECK(values[2] == 123456);
	CHECK(values[0] == 42);
	CHECK(values[1] == 7); // not open: untouched
}
