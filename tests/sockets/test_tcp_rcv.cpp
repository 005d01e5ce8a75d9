// SPDX-License-Identifier: BSD-3-Clause
// TCP's receive side up to the application (lib/sockets/tcp_rcv.h through
// l3-demux's tcp_rcv_socks): in-order segments queued, out-of-order ones
// held and released when the hole fills, duplicates dropped TCP_OLD_DATA;
// the three ways of reading (copy, devmem, zcrx) give the application the
// same bytes; every engine the same results; an application that stops
// reading fills the window, not the mbuf pool. Every payload byte is read,
// queued or dropped with a reason. A reader on another lcore (EAL runs
// lcores 0 and 1 here) reads the same bytes with the same counters as one
// on the polling lcore.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "engine_run.h"
#include "frames.h"
#include "tcp_stream.h"
#include "test_eal.h"

using namespace lrx_test;
using namespace lrx_test::frames;
using namespace lrx_test::tcp_stream;

namespace {

rte_mempool *pool()
{
	eal_init({}, 2); // lcore 1: tcp_reader_lcore
	return mbuf_pool("tcp_rcv_pool", 4095);
}

using Keys = std::vector<std::pair<std::string, std::string>>;

Keys l3_keys(const Keys &more)
{
	Keys k = {{"local_ipv4", "10.0.0.2/24"}, {"tcp_ports", "5201"},
		  {"tcp_ehash", "64"}, {"tcp_rcv_socks", "4"},
		  {"tcp_rcv_digest", "yes"}, {"icmp_clock", "polls"}};
	k.insert(k.end(), more.begin(), more.end());
	return k;
}

EngineRun run(lrx_engine_kind engine, unsigned k, const std::vector<Frame> &frames,
	      const Keys &more, const std::vector<uint16_t> &polls, uint16_t burst = 32)
{
	EngineRun r = run_engine(
		engine, k, burst,
		{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
		 {"l3-demux", l3_keys(more)}},
		[&](size_t at) { return frames[at].to_mbuf(pool()); }, polls);
	erase_l3_split_counters(r);
	r.counters[0].erase("pool_wraps");
	// the application's reads and their cycles: its pace, not its result
	r.counters[1].erase("tcp_app_reads");
	r.counters[1].erase("tcp_app_busy_cycles");
	r.counters[1].erase("tcp_app_oncpu_ns");
	return r;
}

// polls of at most n packets covering frames
std::vector<uint16_t> polls_of(size_t frames, uint16_t n)
{
	std::vector<uint16_t> polls;
	for (size_t left = frames; left; left -= RTE_MIN(left, (size_t)n))
		polls.push_back((uint16_t)RTE_MIN(left, (size_t)n));
	return polls;
}

// every payload byte read, queued or dropped (dup: received already)
void check_bytes_balance(const std::map<std::string, uint64_t> &c)
{
	INFO("in " << c.at("tcp_rcv_bytes") << " read " << c.at("tcp_app_read_bytes")
		   << " queued " << c.at("tcp_rcv_queued_bytes") << " dropped "
		   << c.at("tcp_rcv_drop_bytes") << " dup " << c.at("tcp_rcv_dup_bytes"));
	CHECK(c.at("tcp_rcv_bytes") ==
	      c.at("tcp_app_read_bytes") + c.at("tcp_rcv_queued_bytes") +
		      c.at("tcp_rcv_drop_bytes") + c.at("tcp_rcv_dup_bytes"));
}

} // namespace

TEST_CASE("TCP receive: in-order data queued, out-of-order held until the hole "
	  "fills, duplicates dropped TCP_OLD_DATA", "[sockets][tcp_rcv]")
{
	pool(); // EAL first
	const std::vector<Frame> frames = reordered_stream();
	for (uint16_t per_poll : {(uint16_t)1, (uint16_t)4, (uint16_t)32}) {
		INFO("packets per poll " << per_poll);
		EngineRun r = run(LRX_ENGINE_PACKET, 1, frames, {},
				  polls_of(frames.size(), per_poll));
		const auto &c = r.counters[1];
		CHECK(c.at("tcp_app_read_bytes") == reordered_bytes);
		CHECK(c.at("tcp_app_digest") == stream_digest(reordered_bytes));
		// 3, 5, 6, 8 (150 bytes) and 8 again: tcp_data_queue_ofo
		// counts before it finds the bytes there
		CHECK(c.at("TcpExtTCPOFOQueue") == 5);
		CHECK(c.at("TcpExtTCPOFOMerge") == 1);  // 8 again
		CHECK(c.at("TcpExtDelayedACKLost") == 2); // 4 and 1 again
		CHECK(c.at("tcp_rcv_queued_bytes") == 0);
		CHECK(c.at("tcp_rcv_drop_bytes") == 0);
		CHECK(c.at("tcp_rcv_dup_bytes") == 200 + 100 + 50);
		check_bytes_balance(c);
		CHECK(r.stats[1].drops[LRX_DROP_TCP_OLD_DATA] == 2);
		CHECK(r.stats[1].drops[LRX_DROP_TCP_OFOMERGE] == 1);
		// every data segment queued was read and consumed: none left
		CHECK(r.out.size() == frames.size());
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("TCP receive: copy, devmem and zcrx give the application the same "
	  "bytes; an exhausted zero-copy pool falls back to copies",
	  "[sockets][tcp_rcv]")
{
	pool(); // EAL first
	const std::vector<Frame> frames = reordered_stream();
	const std::vector<Keys> modes = {
		{{"tcp_read", "copy"}, {"tcp_read_size", "64"}},
		{{"tcp_read", "devmem"}, {"tcp_dontneed_batch", "2"}, {"tcp_zc_slots", "64"}},
		{{"tcp_read", "devmem"}, {"tcp_dontneed_batch", "1"}, {"tcp_zc_slots", "1"}},
		{{"tcp_read", "devmem"}, {"tcp_dontneed_batch", "3"}, {"tcp_zc_slots", "3"}},
		{{"tcp_read", "zcrx"}, {"tcp_zc_slots", "64"}},
		{{"tcp_read", "zcrx"}, {"tcp_zc_slots", "2"}},
	};
	for (size_t i = 0; i < modes.size(); i++) {
		INFO("mode " << modes[i][0].second << " config " << i);
		EngineRun r = run(LRX_ENGINE_BURST, 1, frames, modes[i], {(uint16_t)frames.size()});
		const auto &c = r.counters[1];
		CHECK(c.at("tcp_app_read_bytes") == reordered_bytes);
		CHECK(c.at("tcp_app_digest") == stream_digest(reordered_bytes));
		check_bytes_balance(c);
		const bool copy = modes[i][0].second == "copy";
		// what was not a reference was copied
		CHECK(c.at("tcp_app_copied_bytes") + 100 * c.at("tcp_zc_refs") >= reordered_bytes);
		if (copy) {
			CHECK(c.at("tcp_zc_refs") == 0);
			CHECK(c.at("tcp_app_copied_bytes") == reordered_bytes);
			CHECK(c.at("tcp_app_recvmsg") >= reordered_bytes / 64);
		} else {
			CHECK(c.at("tcp_zc_refs") > 0);
		}
		if (modes[i][0].second == "devmem")
			CHECK(c.at("tcp_app_dontneed") > 0);
		if (modes[i][0].second == "zcrx") {
			CHECK(c.at("tcp_app_recvmsg") == 0);
			CHECK(c.at("tcp_app_uring_enter") > 0);
		}
		// one recvmsg of every queued segment: a pool of 1, 2 or 3
		// buffers runs out and the rest are copied
		const bool small = i == 2 || i == 3 || i == 5;
		CHECK((c.at("tcp_zc_copy_fallback") > 0) == small);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("TCP receive: identical results under every engine", "[sockets][tcp_rcv][equivalence]")
{
	pool(); // EAL first
	std::vector<Frame> frames;
	// two streams: the reordered one and an in-order one (another source
	// port), interleaved, and a segment of a connection beyond the
	// receive sockets (tcp_rcv_socks 1: the second is untracked)
	const std::vector<Frame> a = reordered_stream();
	for (size_t i = 0; i < a.size(); i++) {
		frames.push_back(a[i]);
		Frame b = segment(isn + 1 + 100u * (uint32_t)i, 100);
		b.set_be16(b.l4_off, 40001).l4_fix_csum();
		frames.push_back(b);
	}
	for (const char *mode : {"copy", "devmem", "zcrx"}) {
		INFO("tcp_read " << mode);
		const Keys keys = {{"tcp_read", mode}, {"tcp_zc_slots", "4"},
				   {"tcp_dontneed_batch", "2"}, {"tcp_rcv_socks", "1"},
				   {"tcp_rst", "none"}};
		const auto polls = polls_of(frames.size(), 5);
		engine_prefetch = 0;
		const EngineRun ref = run(LRX_ENGINE_PACKET, 1, frames, keys, polls, 8);
		CHECK(ref.counters[1].at("tcp_app_digest") == stream_digest(reordered_bytes));
		CHECK(ref.counters[1].at("tcp_rcv_untracked") > 0);
		for_each_engine(2, [&](lrx_engine_kind kind, unsigned k) {
			require_same_run(run(kind, k, frames, keys, polls, 8), ref);
		});
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("TCP receive: an application that stops reading fills the window, "
	  "not the pool", "[sockets][tcp_rcv]")
{
	pool(); // EAL first
	// 300 in-order segments of 1000 bytes to a socket of a 16 KiB
	// buffer whose application reads nothing until the run ends
	std::vector<Frame> frames = {segment(isn, 0, TCP_SYN)};
	for (uint32_t k = 0; k < 300; k++)
		frames.push_back(segment(isn + 1 + 1000 * k, 1000));
	unsigned most_in_use = 0;
	const auto polls = polls_of(frames.size(), 16);
	EngineRun r = run_engine(
		LRX_ENGINE_BURST, 1, 32,
		{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
		 {"l3-demux", l3_keys({{"tcp_reader", "none"}, {"tcp_rcvbuf", "16384"}})}},
		[&](size_t at) {
			most_in_use = RTE_MAX(most_in_use, in_use(pool()));
			return frames[at].to_mbuf(pool());
		},
		polls);
	const auto &c = r.counters[1];
	// the buffer holds a few segments (each charges its mbuf: ~2.4 KB);
	// the window closes: the next in-order segment drops TCP_ZEROWINDOW,
	// and this sender, which does not wait for the window, sends the
	// rest past it (tcp_sequence: TCP_INVALID_SEQUENCE)
	INFO("most mbufs in use " << most_in_use);
	CHECK(most_in_use < 16384 / 576 + 2 + 16);
	CHECK(c.at("TcpExtTCPZeroWindowDrop") >= 1);
	CHECK(r.stats[1].drops[LRX_DROP_TCP_ZEROWINDOW] == c.at("TcpExtTCPZeroWindowDrop"));
	CHECK(r.stats[1].drops[LRX_DROP_TCP_INVALID_SEQUENCE] + c.at("TcpExtTCPZeroWindowDrop") +
		      c.at("tcp_rcv_fast") == 300);
	// what it held it reads at the run's end
	CHECK(c.at("tcp_app_read_bytes") > 0);
	CHECK(c.at("tcp_app_read_bytes") < 16384);
	CHECK(c.at("tcp_rcv_drop_bytes") == 300000 - c.at("tcp_app_read_bytes"));
	check_bytes_balance(c);
	LRX_REQUIRE_POOL_FULL(pool());
}

namespace {

// n segments of 1000 bytes after the SYN, every 7th pair swapped (the
// later one held out of order until the earlier one fills the hole)
std::vector<Frame> long_stream(uint32_t n)
{
	std::vector<uint32_t> order(n);
	for (uint32_t k = 0; k < n; k++)
		order[k] = k;
	for (uint32_t k = 0; k + 1 < n; k += 7)
		std::swap(order[k], order[k + 1]);
	std::vector<Frame> f = {segment(isn, 0, TCP_SYN, 0)};
	for (uint32_t k : order)
		f.push_back(segment(isn + 1 + 1000 * k, 1000));
	return f;
}

// The application's calls depend on its pace: how much each read finds
void erase_pace_counters(EngineRun &r)
{
	for (const char *pace : {"tcp_app_recvmsg", "tcp_app_dontneed", "tcp_app_uring_enter"})
		r.counters[1].erase(pace);
	// what leaves in which poll depends on it too: compare the packets
	// out as a set (their bytes and fates)
	std::sort(r.out.begin(), r.out.end());
}

} // namespace

TEST_CASE("TCP receive: a reader on another lcore reads the same bytes, with "
	  "the same counters, as one on the polling lcore, under every engine", "[sockets][tcp_rcv][reader_lcore]")
{
	pool(); // EAL first
	REQUIRE(rte_lcore_count() >= 2);
	const uint32_t n = 1500;
	const std::vector<Frame> frames = long_stream(n);
	// a buffer that holds the whole stream: no drop whatever the
	// reader's pace (the window is tested below)
	const Keys common = {{"tcp_rcvbuf", "8388608"}, {"tcp_rcv_socks", "1"},
			     {"tcp_zc_slots", "2048"}, {"tcp_dontneed_batch", "64"}};
	for (const char *mode : {"copy", "devmem", "zcrx"}) {
		INFO("tcp_read " << mode);
		Keys same = common, other = common;
		same.push_back({"tcp_read", mode});
		other.push_back({"tcp_read", mode});
		other.push_back({"tcp_reader_lcore", "1"});
		const auto polls = polls_of(frames.size(), 32);
		engine_prefetch = 0;
		EngineRun ref = run(LRX_ENGINE_PACKET, 1, frames, same, polls);
		erase_pace_counters(ref);
		// under every engine
		for_each_engine(1, [&](lrx_engine_kind kind, unsigned k) {
			EngineRun r = run(kind, k, frames, other, polls);
			const auto &c = r.counters[1];
			CHECK(c.at("tcp_app_read_bytes") == 1000ull * n);
			CHECK(c.at("tcp_app_digest") == stream_digest(1000 * n));
			CHECK(c.at("TcpExtTCPOFOQueue") > 0);
			CHECK(c.at("tcp_rcv_drop_bytes") == 0);
			CHECK(c.at("tcp_zc_copy_fallback") == 0);
			check_bytes_balance(c);
			erase_pace_counters(r);
			require_same_run(r, ref);
		});
		LRX_REQUIRE_POOL_FULL(pool());
	}
}

TEST_CASE("TCP receive: a stalled reader on another lcore fills the window, "
	  "not the pool", "[sockets][tcp_rcv][reader_lcore]")
{
	pool(); // EAL first
	std::vector<Frame> frames = {segment(isn, 0, TCP_SYN)};
	for (uint32_t k = 0; k < 300; k++)
		frames.push_back(segment(isn + 1 + 1000 * k, 1000));
	for (const char *mode : {"copy", "zcrx"}) {
		INFO("tcp_read " << mode);
		unsigned most_in_use = 0;
		EngineRun r = run_engine(
			LRX_ENGINE_BURST, 1, 32,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
			 {"l3-demux", l3_keys({{"tcp_reader", "none"}, {"tcp_rcvbuf", "16384"},
					       {"tcp_reader_lcore", "1"}, {"tcp_read", mode}})}},
			[&](size_t at) {
				most_in_use = RTE_MAX(most_in_use, in_use(pool()));
				return frames[at].to_mbuf(pool());
			},
			polls_of(frames.size(), 16));
		const auto &c = r.counters[1];
		INFO("most mbufs in use " << most_in_use);
		CHECK(most_in_use < 16384 / 576 + 2 + 16);
		CHECK(c.at("TcpExtTCPZeroWindowDrop") >= 1);
		CHECK(r.stats[1].drops[LRX_DROP_TCP_INVALID_SEQUENCE] +
			      c.at("TcpExtTCPZeroWindowDrop") + c.at("tcp_rcv_fast") == 300);
		// stopped, the reader leaves the rest to the polling lcore
		CHECK(c.at("tcp_app_read_bytes") > 0);
		CHECK(c.at("tcp_app_read_bytes") < 16384);
		CHECK(c.at("tcp_rcv_drop_bytes") == 300000 - c.at("tcp_app_read_bytes"));
		check_bytes_balance(c);
		LRX_REQUIRE_POOL_FULL(pool());
	}
}

TEST_CASE("TCP receive: a reader lcore that EAL does not run, or the polling "
	  "one, is refused naming the key", "[sockets][tcp_rcv][reader_lcore]")
{
	pool(); // EAL first
	for (const char *bad : {"7", "0"}) {
		INFO("tcp_reader_lcore " << bad);
		lrx_pipeline_conf conf{};
		StageConfs confs;
		conf.engine = LRX_ENGINE_BURST;
		conf.hybrid_k = 1;
		conf.burst = 32;
		conf.n_stages = 1;
		conf.socket_id = (int)rte_socket_id();
		conf.lcore_id = rte_lcore_id();
		confs.set(conf.stages[0], lrx_stage_find("l3-demux"),
			  l3_keys({{"tcp_reader_lcore", bad}}));
		lrx_pipeline *p = nullptr;
		char err[512] = "";
		CHECK(lrx_pipeline_create(&conf, &p, err, sizeof(err)) < 0);
		CHECK(std::string(err).find("tcp_reader_lcore") != std::string::npos);
		CHECK(std::string(err).find(std::string("reader lcore ") + bad) != std::string::npos);
	}
}
