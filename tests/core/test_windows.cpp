// SPDX-License-Identifier: BSD-3-Clause
// Interleaved windows (windows.h): the A B B A order, the log's deltas and
// its capacity, the thread probe on this machine, and the engine list of
// [run] interleave.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <sched.h>

extern "C" {
#include "pipeline.h"
#include "windows.h"
}

TEST_CASE("windows alternate in blocks of one per engine, every other block reversed, the "
	  "start rotated",
	  "[windows]")
{
	std::vector<unsigned> two, three;
	for (uint64_t k = 0; k < 8; k++)
		two.push_back(lrx_window_engine(k, 2));
	for (uint64_t k = 0; k < 12; k++)
		three.push_back(lrx_window_engine(k, 3));
	CHECK(two == std::vector<unsigned>{0, 1, 1, 0, 1, 0, 0, 1});
	CHECK(three == std::vector<unsigned>{0, 1, 2, 2, 1, 0, 1, 2, 0, 0, 2, 1});
	for (unsigned n = 2; n <= LRX_ENGINE_LIST_MAX; n++) {
		INFO("n " << n);
		// every block holds every engine once
		for (uint64_t block = 0; block < 4 * n; block++) {
			std::map<unsigned, unsigned> seen;
			for (unsigned pos = 0; pos < n; pos++)
				seen[lrx_window_engine(block * n + pos, n)]++;
			CHECK(seen.size() == n);
		}
		// over 2n blocks: every engine twice at every position, and
		// after every engine (itself included) equally often
		std::map<std::pair<unsigned, unsigned>, unsigned> at, after;
		const uint64_t cycle = 2ull * n * n;
		for (uint64_t k = 0; k < cycle; k++) {
			at[{lrx_window_engine(k, n), (unsigned)(k % n)}]++;
			after[{lrx_window_engine(k, n), lrx_window_engine((k + cycle - 1) % cycle, n)}]++;
		}
		CHECK(at.size() == n * n);
		for (const auto &a : at)
			CHECK(a.second == 2);
		for (unsigned e = 0; e < n; e++) {
			unsigned self = after[{e, e}];
			for (unsigned f = 0; f < n; f++)
				CHECK(after[{e, f}] == after[{(e + 1) % n, (f + 1) % n}]);
			CHECK(self == after[{(e + 1) % n, (e + 1) % n}]);
		}
	}
}

TEST_CASE("the window log records the span's deltas and counts what it cannot hold",
	  "[windows]")
{
	std::vector<lrx_window> slots(2);
	lrx_window_log log{};
	log.n_engines = 2;
	log.window_polls = 4;
	log.capacity = slots.size();
	log.windows = slots.data();
	lrx_thread_sample before{1000, 5000, 70, 3, 1}, after{31000, 17000, 470, 5, 1};
	lrx_window w{};
	w.cycles = 25000;
	w.packets = 256;
	w.polls = 4;
	w.engine = 1;
	REQUIRE(lrx_window_log_add(&log, &w, &before, &after));
	CHECK(log.n == 1);
	CHECK(slots[0].span_cycles == 30000);
	CHECK(slots[0].cpu_ns == 12000);
	CHECK(slots[0].run_delay_ns == 400);
	CHECK(slots[0].nivcsw == 2);
	CHECK(slots[0].nvcsw == 0);
	CHECK(slots[0].cycles == 25000);
	CHECK(slots[0].packets == 256);
	CHECK(slots[0].engine == 1);
	// a storm of switches saturates instead of wrapping to a small count
	lrx_thread_sample storm = after;
	storm.nivcsw += 100000;
	REQUIRE(lrx_window_log_add(&log, &w, &after, &storm));
	CHECK(slots[1].nivcsw == UINT16_MAX);
	// full: counted, not written
	CHECK_FALSE(lrx_window_log_add(&log, &w, &before, &after));
	CHECK(log.n == 2);
	CHECK(log.unrecorded == 1);
}

TEST_CASE("a window of a length in time: the polls the slowest engine ran in it", "[windows]")
{
	std::vector<lrx_window> slots(8);
	lrx_window_log log{};
	log.n_engines = 2;
	log.window_polls = 4;
	log.capacity = slots.size();
	log.windows = slots.data();
	log.target_cycles = 40000;
	log.calibration_windows = 4;
	lrx_thread_sample t{};
	// engine 1 cold in one window (50000 a poll), 4500 in the other;
	// engine 0 1000 a poll
	const uint64_t cycles[4] = {4000, 200000, 18000, 4000};
	for (unsigned k = 0; k < 4; k++) {
		lrx_window w{};
		w.engine = (uint8_t)lrx_window_engine(k, 2);
		w.polls = 4;
		w.cycles = cycles[k];
		REQUIRE(w.engine == (k == 1 || k == 2 ? 1 : 0));
		lrx_window_log_add(&log, &w, &t, &t);
	}
	lrx_window_log_calibrate(&log, 0, 4);
	// the slowest engine's fastest window: 4500 a poll: 40000 / 4500 = 8.9
	CHECK(log.window_polls == 9);
	// from the second block on only: engine 1 at 4500, engine 0 at 1000
	lrx_window_log_calibrate(&log, 2, 4);
	CHECK(log.window_polls == 9);
	// the cold window alone: 50000 a poll, 40000 / 50000 rounds to 1
	lrx_window_log_calibrate(&log, 1, 2);
	CHECK(log.window_polls == 1);
	// a target below one poll still polls once
	log.target_cycles = 100;
	lrx_window_log_calibrate(&log, 0, 4);
	CHECK(log.window_polls == 1);
}

TEST_CASE("the thread probe reads this thread's clocks, or says why not", "[windows]")
{
	lrx_thread_probe p;
	lrx_thread_probe_open(&p);
	lrx_thread_sample a{}, b{};
	lrx_thread_probe_read(&p, &a);
	volatile uint64_t spin = 0;
	for (unsigned i = 0; i < 2000000; i++)
		spin += i;
	sched_yield();
	lrx_thread_probe_read(&p, &b);
	CHECK(b.tsc > a.tsc);
	if (!p.why[0]) {
		CHECK(b.cpu_ns > a.cpu_ns);
		CHECK(b.run_delay_ns >= a.run_delay_ns);
		CHECK(b.nivcsw >= a.nivcsw);
		CHECK(b.nvcsw >= a.nvcsw);
	} else {
		WARN("thread probe: " << p.why);
		// what cannot be read stays 0, it is never invented
		if (!p.schedstat_ok)
			CHECK(b.run_delay_ns == 0);
		if (!p.cpu_clock_ok)
			CHECK(b.cpu_ns == 0);
	}
	lrx_thread_probe_close(&p);
	CHECK(p.schedstat_fd == -1);
}

TEST_CASE("[run] interleave takes 2 to 8 engines, a repeated one too", "[windows][config]")
{
	lrx_engine_list l{};
	REQUIRE(lrx_engine_list_parse("packet,packet,burst,hybrid:2,graph", &l) == 0);
	REQUIRE(l.n == 5);
	CHECK(l.kind[0] == LRX_ENGINE_PACKET);
	CHECK(l.kind[1] == LRX_ENGINE_PACKET);
	CHECK(l.kind[2] == LRX_ENGINE_BURST);
	CHECK(l.kind[3] == LRX_ENGINE_HYBRID);
	CHECK(l.hybrid_k[3] == 2);
	CHECK(l.kind[4] == LRX_ENGINE_GRAPH);
	char name[128];
	lrx_engine_list_name(&l, name, sizeof(name));
	CHECK(std::string(name) == "packet,packet,burst,hybrid:2,graph");
	for (unsigned i = 0; i < l.n; i++)
		CHECK(l.prefetch[i] == LRX_ENGINE_PREFETCH_PIPELINE);
	REQUIRE(lrx_engine_list_parse("none", &l) == 0);
	CHECK(l.n == 0);
	l.n = 7;
	for (const char *bad : {"packet", "", "packet,,burst", "packet,burst,", "packet,bust",
				"hybrid:0,packet", "packet,packet,packet,packet,packet,packet,packet,packet,packet",
				"burst,burst/prefetch=17", "burst,burst/prefetch=", "burst,burst/prefetch=-1",
				"burst,burst/fetch=4", "burst,burst/", "burst,/prefetch=4",
				"burst,burst/prefetch=4/prefetch=2"}) {
		INFO("'" << bad << "'");
		CHECK(lrx_engine_list_parse(bad, &l) == -EINVAL);
		CHECK(l.n == 7); // a refused value leaves the field as it was
	}
}

TEST_CASE("[run] interleave: ENGINE/prefetch=K gives that engine its own prefetch distance",
	  "[windows][config]")
{
	lrx_engine_list l{};
	REQUIRE(lrx_engine_list_parse("burst,burst/prefetch=4,hybrid:2/prefetch=16,packet/prefetch=0",
				      &l) == 0);
	REQUIRE(l.n == 4);
	CHECK(l.kind[1] == LRX_ENGINE_BURST);
	CHECK(l.prefetch[0] == LRX_ENGINE_PREFETCH_PIPELINE);
	CHECK(l.prefetch[1] == 4);
	CHECK(l.kind[2] == LRX_ENGINE_HYBRID);
	CHECK(l.hybrid_k[2] == 2);
	CHECK(l.prefetch[2] == 16);
	CHECK(l.kind[3] == LRX_ENGINE_PACKET);
	CHECK(l.prefetch[3] == 0);
	char name[160];
	lrx_engine_list_name(&l, name, sizeof(name));
	CHECK(std::string(name) == "burst,burst/prefetch=4,hybrid:2/prefetch=16,packet/prefetch=0");
	char item[32];
	lrx_engine_list_item_name(&l, 2, item, sizeof(item));
	CHECK(std::string(item) == "hybrid:2/prefetch=16");
}
