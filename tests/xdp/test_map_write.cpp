// SPDX-License-Identifier: BSD-3-Clause
// Writes into eBPF maps while a program runs (telemetry's map_update and
// map_delete, as bpftool map update/delete): the parameter's syntax,
// bpf_map_update_elem's flags and errors, and a hash map's safety against
// lookups on another thread (entries published whole, a deleted element
// reused only after the reader's quiescent state: rte_rcu_qsbr), and
// churn that neither fills the map nor lengthens a lookup.
#include <catch2/catch.hpp>
#include <linux/bpf.h>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "test_eal.h"

extern "C" {
#include "ebpf/ebpf.h"
#include "ebpf/ebpf_map_init.h"
}

namespace {

struct Map {
	lrx_xdp_map m{};
	Map(uint32_t type, uint32_t key_size, uint32_t value_size, uint32_t max_entries)
	{
		char err[256];
		lrx_test::eal_init();
		REQUIRE(lrx_xdp_map_create(&m, "m", type, key_size, value_size, max_entries, 0, err,
					   sizeof(err)) == 0);
	}
	~Map() { lrx_xdp_map_destroy(&m); }
};

// One parameter into the map: the errno and the message
std::pair<int, std::string> write(lrx_xdp_map *map, const std::string &params, bool del = false)
{
	struct lrx_bpf_map_write w;
	char err[256] = "";
	if (lrx_bpf_map_write_parse(params.c_str(), del, &w) != 0)
		return {-EINVAL, "parse"};
	int rc = lrx_bpf_map_write(map, &w, err, sizeof(err));
	return {rc, err};
}

uint64_t value_of(lrx_xdp_map *map, uint64_t key)
{
	uint8_t k[8] = {};
	memcpy(k, &key, map->key_size);
	const void *v = lrx_xdp_map_lookup(map, k);
	uint64_t out = 0;
	if (v)
		memcpy(&out, v, map->value_size);
	return v ? out : UINT64_MAX;
}

struct Qsbr {
	rte_rcu_qsbr *v;
	Qsbr()
	{
		size_t size = rte_rcu_qsbr_get_memsize(1);
		v = (rte_rcu_qsbr *)rte_zmalloc("test_qsbr", size, RTE_CACHE_LINE_SIZE);
		REQUIRE(v != nullptr);
		REQUIRE(rte_rcu_qsbr_init(v, 1) == 0);
		REQUIRE(rte_rcu_qsbr_thread_register(v, 0) == 0);
		rte_rcu_qsbr_thread_online(v, 0);
	}
	~Qsbr() { rte_free(v); }
};

} // namespace

TEST_CASE("map write parameters: map_init's syntax, bpftool's flags", "[xdp][maps][map_write]")
{
	struct lrx_bpf_map_write w;
	REQUIRE(lrx_bpf_map_write_parse("blocked_ports:53=7", false, &w) == 0);
	CHECK(std::string(w.map) == "blocked_ports");
	CHECK(w.key == 53);
	CHECK(w.value == 7);
	CHECK(w.flags == BPF_ANY);
	CHECK(!w.del);
	REQUIRE(lrx_bpf_map_write_parse("m:1=2,noexist", false, &w) == 0);
	CHECK(w.flags == BPF_NOEXIST);
	REQUIRE(lrx_bpf_map_write_parse("m:1=2,exist", false, &w) == 0);
	CHECK(w.flags == BPF_EXIST);
	REQUIRE(lrx_bpf_map_write_parse("m:1=2,any", false, &w) == 0);
	CHECK(w.flags == BPF_ANY);
	REQUIRE(lrx_bpf_map_write_parse("m:18446744073709551615", true, &w) == 0);
	CHECK(w.del);
	CHECK(w.key == UINT64_MAX);
	CHECK(lrx_bpf_map_write_flag_name(BPF_NOEXIST) == std::string("noexist"));
	for (const char *bad : {"", "m", ":1=2", "m:", "m:1", "m:=2", "m:1=", "m:1=2,", "m:1=2,maybe",
				"m:1=2,any,any", "m:1=2,3=4", "m:-1=2", "m:1=0x10", "m:1=2;n:3=4",
				"a_name_longer_than_thirty_two_chars:1=2", "m:18446744073709551616=1"}) {
		INFO("update '" << bad << "'");
		CHECK(lrx_bpf_map_write_parse(bad, false, &w) == -EINVAL);
	}
	for (const char *bad : {"m:1=2", "m:1,any", "m:", "m", "m:x"}) {
		INFO("delete '" << bad << "'");
		CHECK(lrx_bpf_map_write_parse(bad, true, &w) == -EINVAL);
	}
	CHECK(lrx_bpf_map_write_parse(nullptr, false, &w) == -EINVAL);
}

TEST_CASE("map write: a hash map's flags and errors as bpf_map_update_elem's",
	  "[xdp][maps][map_write]")
{
	Map h(BPF_MAP_TYPE_HASH, 2, 8, 4); // blocked_ports' sizes, 4 entries
	CHECK(write(&h.m, "m:53=1").first == 0);
	CHECK(value_of(&h.m, 53) == 1);
	CHECK(write(&h.m, "m:53=2,any").first == 0);
	CHECK(value_of(&h.m, 53) == 2);
	auto r = write(&h.m, "m:53=3,noexist");
	CHECK(r.first == -EEXIST);
	CHECK(r.second.find("key 53 exists") != std::string::npos);
	CHECK(value_of(&h.m, 53) == 2);
	CHECK(write(&h.m, "m:53=4,exist").first == 0);
	CHECK(value_of(&h.m, 53) == 4);
	r = write(&h.m, "m:54=1,exist");
	CHECK(r.first == -ENOENT);
	CHECK(value_of(&h.m, 54) == UINT64_MAX);
	CHECK(write(&h.m, "m:54=1,noexist").first == 0);
	CHECK(write(&h.m, "m:55=1").first == 0);
	CHECK(write(&h.m, "m:56=1").first == 0);
	r = write(&h.m, "m:57=1"); // a fifth key: full, as htab's max_entries
	CHECK(r.first == -E2BIG);
	CHECK(r.second.find("full (4 entries, max_entries 4)") != std::string::npos);
	CHECK(write(&h.m, "m:56=9").first == 0); // an existing key: not full
	CHECK(h.m.count == 4);
	// sizes: a key or value the map's size cannot hold
	r = write(&h.m, "m:65536=1");
	CHECK(r.first == -EINVAL);
	CHECK(r.second.find("2-byte key") != std::string::npos);
	// delete
	CHECK(write(&h.m, "m:53", true).first == 0);
	CHECK(value_of(&h.m, 53) == UINT64_MAX);
	r = write(&h.m, "m:53", true);
	CHECK(r.first == -ENOENT);
	CHECK(r.second.find("no key 53") != std::string::npos);
	CHECK(write(&h.m, "m:57=1").first == 0); // room again
	CHECK(h.m.count == 4);

	Map v4(BPF_MAP_TYPE_HASH, 4, 4, 4);
	r = write(&v4.m, "m:1=4294967296");
	CHECK(r.first == -EINVAL);
	CHECK(r.second.find("4-byte value") != std::string::npos);
	CHECK(write(&v4.m, "m:1=4294967295").first == 0);
	Map wide(BPF_MAP_TYPE_HASH, 16, 8, 4); // a struct key: not an integer
	CHECK(write(&wide.m, "m:1=1").first == -EINVAL);
	CHECK(wide.m.count == 0);
	Map percpu(BPF_MAP_TYPE_PERCPU_HASH, 4, 8, 1);
	CHECK(write(&percpu.m, "m:1=1").first == 0);
	CHECK(write(&percpu.m, "m:2=1").first == -E2BIG);
}

TEST_CASE("map write: an array's flags and errors as array_map_update_elem's",
	  "[xdp][maps][map_write]")
{
	for (uint32_t type : {BPF_MAP_TYPE_ARRAY, BPF_MAP_TYPE_PERCPU_ARRAY}) {
		INFO("type " << type);
		Map a(type, 4, 8, 2);
		CHECK(write(&a.m, "m:1=7").first == 0);
		CHECK(value_of(&a.m, 1) == 7);
		CHECK(write(&a.m, "m:1=8,exist").first == 0);
		CHECK(value_of(&a.m, 1) == 8);
		auto r = write(&a.m, "m:0=1,noexist"); // elements always exist
		CHECK(r.first == -EEXIST);
		r = write(&a.m, "m:2=1"); // index beyond max_entries
		CHECK(r.first == -E2BIG);
		CHECK(r.second.find("index 2 is beyond max_entries 2") != std::string::npos);
		r = write(&a.m, "m:1", true); // array_map_delete_elem
		CHECK(r.first == -EINVAL);
		CHECK(value_of(&a.m, 1) == 8);
	}
}

TEST_CASE("map write: a deleted hash element is reused only after the reader's quiescent state",
	  "[xdp][maps][map_write]")
{
	Map h(BPF_MAP_TYPE_HASH, 4, 8, 1); // a pool of 2 elements
	Qsbr q;
	lrx_xdp_map_set_qsbr(&h.m, q.v);
	uint32_t key = 5;
	uint64_t one = 1, two = 2, three = 3;
	REQUIRE(lrx_xdp_map_update(&h.m, &key, &one, BPF_ANY) == 0);
	// the reader (thread 0) holds the value through its run
	const uint64_t *held = (const uint64_t *)lrx_xdp_map_lookup(&h.m, &key);
	REQUIRE(held != nullptr);
	REQUIRE(lrx_xdp_map_delete(&h.m, &key) == 0);
	CHECK(lrx_xdp_map_lookup(&h.m, &key) == nullptr);
	REQUIRE(lrx_xdp_map_update(&h.m, &key, &two, BPF_ANY) == 0);
	CHECK(*held == 1); // the new entry took the other element
	CHECK(value_of(&h.m, key) == 2);
	REQUIRE(lrx_xdp_map_delete(&h.m, &key) == 0);
	// both elements deleted, neither past a grace period: another
	// thread's insert waits (EAGAIN), it is not full (E2BIG)
	CHECK(lrx_xdp_map_update(&h.m, &key, &three, BPF_ANY) == -EAGAIN);
	CHECK(*held == 1);
	// the program on the reader's own lcore cannot wait for itself: it
	// takes the oldest at once, as the kernel's preallocated htab does
	// for every reader (its own run sees the value it held change)
	REQUIRE(lrx_xdp_map_update_from_prog(&h.m, &key, &three, BPF_ANY) == 0);
	CHECK(value_of(&h.m, key) == 3);
	CHECK(*held == 3);
	REQUIRE(lrx_xdp_map_delete(&h.m, &key) == 0);
	rte_rcu_qsbr_quiescent(q.v, 0); // the reader's poll ended
	REQUIRE(lrx_xdp_map_update(&h.m, &key, &three, BPF_ANY) == 0);
	CHECK(value_of(&h.m, key) == 3);
	CHECK(h.m.count == 1);
	rte_rcu_qsbr_thread_offline(q.v, 0); // an offline reader holds nothing
	REQUIRE(lrx_xdp_map_delete(&h.m, &key) == 0);
	REQUIRE(lrx_xdp_map_update(&h.m, &key, &one, BPF_ANY) == 0);
	REQUIRE(lrx_xdp_map_delete(&h.m, &key) == 0);
	CHECK(lrx_xdp_map_update(&h.m, &key, &two, BPF_ANY) == 0);
}

// A control plane that keeps adding fresh keys and deleting old ones (a
// blocklist that rotates): the kernel's htab never refuses an insert
// below max_entries, and a lookup of a missing key walks only its
// bucket's live entries, however many keys came and went (a deleted
// entry is unlinked, never a tombstone to probe past).
TEST_CASE("map write: a million inserts and deletes of fresh keys, no insert refused below "
	  "max_entries, a missing key's lookup bounded",
	  "[xdp][maps][map_write]")
{
	constexpr uint32_t max = 8, cycles = 1000000;
	for (bool from_prog : {true, false}) {
		INFO((from_prog ? "the program's writes (the reader's own lcore)"
				: "another thread's writes"));
		Map h(BPF_MAP_TYPE_HASH, 4, 8, max);
		Qsbr q;
		lrx_xdp_map_set_qsbr(&h.m, q.v);
		uint64_t refused = 0, waits = 0, over_bucket = 0, visits_max = 0, visits_sum = 0;
		for (uint32_t k = 0; k < cycles; k++) {
			uint32_t old = k - max, missing = k | 0x80000000u;
			uint64_t v = k;
			if (k >= max && lrx_xdp_map_delete(&h.m, &old) != 0)
				refused++;
			// max - 1 entries in: the insert must find room
			int rc = from_prog ? lrx_xdp_map_update_from_prog(&h.m, &k, &v, BPF_NOEXIST)
					   : lrx_xdp_map_update(&h.m, &k, &v, BPF_NOEXIST);
			if (rc == -EAGAIN && !from_prog) {
				// every free element deleted in this poll: the
				// writer waits for the reader's next poll
				waits++;
				rte_rcu_qsbr_quiescent(q.v, 0);
				rc = lrx_xdp_map_update(&h.m, &k, &v, BPF_NOEXIST);
			}
			refused += rc != 0;
			if (from_prog && k % 64 == 63)
				rte_rcu_qsbr_quiescent(q.v, 0); // a poll of 64 runs
			uint64_t visits = lrx_xdp_map_lookup_visits(&h.m, &missing);
			over_bucket += visits > h.m.count;
			visits_max = std::max(visits_max, visits);
			visits_sum += visits;
		}
		INFO("waits " << waits << ", missing-key visits max " << visits_max << " mean "
			      << (double)visits_sum / cycles);
		CHECK(refused == 0);
		CHECK(over_bucket == 0);
		CHECK(visits_max <= max);
		CHECK(visits_sum <= 2ull * cycles); // about one entry per bucket
		CHECK(h.m.count == max);
		// a pool of twice max_entries: another thread waits at most
		// once per max_entries + 1 deletes, the program never
		CHECK(waits <= (from_prog ? 0 : cycles / (max + 1)));
		CHECK((from_prog || waits > 0));
		uint32_t ninth = cycles;
		uint64_t v = 0;
		CHECK(lrx_xdp_map_update(&h.m, &ninth, &v, BPF_NOEXIST) == -E2BIG); // full
		for (uint32_t k = cycles - max; k < cycles; k++) {
			CHECK(value_of(&h.m, k) == k);
			REQUIRE(lrx_xdp_map_delete(&h.m, &k) == 0);
		}
		uint64_t visits = 0;
		for (uint32_t k = 0; k < 1000; k++)
			visits += lrx_xdp_map_lookup_visits(&h.m, &k);
		CHECK(visits == 0); // an empty map: every bucket empty
		CHECK(h.m.count == 0);
	}
}

// A writer thread inserts and deletes while a reader thread looks up,
// holds what it found across a few more lookups (a program's run), then
// reports a quiescent state (a poll's end). Every value is {key, ~key}
// and never rewritten in place, so a reader that saw a half-published
// entry or an element reused under it sees another key's words.
TEST_CASE("map write: concurrent inserts and deletes against lock-free lookups",
	  "[xdp][maps][map_write]")
{
	constexpr uint32_t keys = 48;
	Map h(BPF_MAP_TYPE_HASH, 4, 16, 32); // fewer entries than keys: E2BIG happens
	Qsbr q;
	lrx_xdp_map_set_qsbr(&h.m, q.v);
	std::atomic<bool> stop{false};
	std::atomic<uint64_t> bad{0}, found{0}, polls{0};
	std::thread reader([&] {
		uint32_t k = 0;
		while (!stop.load(std::memory_order_relaxed)) {
			const uint64_t *held[4] = {};
			uint32_t held_key[4] = {};
			for (int i = 0; i < 4; i++, k = (k + 7) % keys) {
				held_key[i] = k;
				held[i] = (const uint64_t *)lrx_xdp_map_lookup(&h.m, &k);
			}
			for (int i = 0; i < 4; i++) {
				if (!held[i])
					continue;
				found.fetch_add(1, std::memory_order_relaxed);
				uint64_t a = __atomic_load_n(&held[i][0], __ATOMIC_RELAXED);
				uint64_t b = __atomic_load_n(&held[i][1], __ATOMIC_RELAXED);
				if (a != held_key[i] || b != ~(uint64_t)held_key[i])
					bad.fetch_add(1, std::memory_order_relaxed);
			}
			rte_rcu_qsbr_quiescent(q.v, 0);
			polls.fetch_add(1, std::memory_order_relaxed);
		}
		rte_rcu_qsbr_thread_offline(q.v, 0);
	});
	uint64_t inserted = 0, deleted = 0, full = 0, waits = 0, x = 88172645463325252ull;
	for (int op = 0; op < 150000 || polls.load() < 1000; op++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; // xorshift64
		uint32_t k = (uint32_t)(x % keys);
		uint64_t v[2] = {k, ~(uint64_t)k};
		if (x & (1ull << 40)) {
			int rc = lrx_xdp_map_update(&h.m, &k, v, BPF_NOEXIST);
			inserted += rc == 0;
			full += rc == -E2BIG;
			waits += rc == -EAGAIN;
			REQUIRE((rc == 0 || rc == -EEXIST || rc == -E2BIG || rc == -EAGAIN));
			// full only at max_entries, as the kernel's htab
			if (rc == -E2BIG)
				REQUIRE(h.m.count == h.m.max_entries);
			// room only in elements deleted since the reader's
			// last poll: let it run (2 CPUs, shared)
			if (rc == -EAGAIN)
				std::this_thread::yield();
		} else {
			int rc = lrx_xdp_map_delete(&h.m, &k);
			deleted += rc == 0;
			REQUIRE((rc == 0 || rc == -ENOENT));
		}
	}
	stop = true;
	reader.join();
	INFO("inserted " << inserted << " deleted " << deleted << " full " << full << " waits "
			 << waits << " found "
			 << found.load() << " polls " << polls.load());
	CHECK(bad.load() == 0);
	CHECK(inserted > 1000);
	CHECK(deleted > 1000);
	CHECK(found.load() > 0);
	// the count is what the table holds
	uint32_t cursor = 0, n = 0, key;
	uint64_t value[2];
	while (lrx_xdp_map_next(&h.m, &cursor, &key, value)) {
		CHECK(value[0] == key);
		n++;
	}
	CHECK(n == h.m.count);
	CHECK(n == inserted - deleted);
}
