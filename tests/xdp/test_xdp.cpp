// SPDX-License-Identifier: BSD-3-Clause
// The xdp stage: verdict tables of every built-in and every shipped eBPF
// object (interpreter and JIT agree with a model of the program), TX MAC
// swap bytes, REDIRECT, context fields, short and malformed frames, maps
// filled from config and read back, process_one == process_burst, and
// load-time errors that name the file, section and instruction.
#include <catch2/catch.hpp>

#include <bpf/btf.h>
#include <linux/bpf.h>

#include <cstring>
#include <string>
#include <vector>

#include "frames.h"
#include "test_eal.h"
#include "xdp_harness.h"
#include "progs/map_typed.h"

extern "C" {
#include "meta.h"
}

using namespace lrx_test::frames;
using lrx_xdp_test::Stage;
using Keys = std::map<std::string, std::string>;
using lrx_xdp_test::prog_path;
using lrx_xdp_test::test_prog_path;
using lrx_xdp_test::map_dump;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("xdp_pool", 4095);
}

// Good and malformed frames; index comments are used by the models.
std::vector<Frame> test_frames()
{
	return {
		udp4(),                                   // UDP to 2000
		udp4(1000, 53),                           // UDP to 53 (blocked)
		udp4(7, 123),                             // UDP to 123
		tcp4(),                                   // TCP
		udp6(1000, 53),                           // IPv6 UDP
		with([](Spec &s) { s.l4 = L4::icmp; }),   // ICMP
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
		with([](Spec &s) { s.vlans = {7}; }),     // VLAN-tagged UDP
		udp4(1000, 53).truncate(10),              // runt
		udp4(1000, 53).truncate(14),              // Ethernet only
		udp4(1000, 53).truncate(30),              // IPv4 cut short
		udp4(1000, 53).truncate(40),              // UDP header cut
		with([](Spec &s) { s.ip4_options = {1, 1, 1, 1}; s.dport = 53; }),
		udp4(1000, 53).ip4_ihl(2),                // IHL < 5
	};
}

struct Out {
	lrx_next_t next;
	std::vector<uint8_t> bytes;
};

rte_mbuf *make(const Frame &f, uint16_t port = 1)
{
	rte_mbuf *m = f.to_mbuf(pool());
	REQUIRE(m != nullptr);
	m->port = port;
	return m;
}

std::vector<Out> run_one(Stage &st, const std::vector<Frame> &frames,
			 uint16_t port = 1)
{
	std::vector<Out> out;
	for (const Frame &f : frames) {
		rte_mbuf *m = make(f, port);
		lrx_next_t n = st.one(m);
		out.push_back({n, mbuf_bytes(m)});
		rte_pktmbuf_free(m);
	}
	return out;
}

std::vector<Out> run_burst(Stage &st, const std::vector<Frame> &frames,
			   uint16_t port = 1)
{
	std::vector<rte_mbuf *> pkts;
	for (const Frame &f : frames)
		pkts.push_back(make(f, port));
	std::vector<lrx_next_t> nexts(pkts.size());
	st.burst(pkts.data(), (uint16_t)pkts.size(), nexts.data());
	std::vector<Out> out;
	for (size_t i = 0; i < pkts.size(); i++) {
		out.push_back({nexts[i], mbuf_bytes(pkts[i])});
		rte_pktmbuf_free(pkts[i]);
	}
	return out;
}

const lrx_next_t DROP = lrx_next_drop(LRX_DROP_XDP);
const lrx_next_t ABORT = lrx_next_drop(LRX_DROP_XDP_ABORTED);
const lrx_next_t PASS = LRX_NEXT_CONTINUE_V;

bool has_eth(const Frame &f) { return f.size() >= 14; }

// IPv4/UDP destination port, or -1, reading the frame as the programs do.
int udp4_dport(const Frame &f)
{
	if (f.size() < 34 || f.be16(12) != 0x0800 || f.u8(23) != 17)
		return -1;
	unsigned ihl = f.u8(14) & 0xf;
	if (ihl < 5 || f.size() < 14 + ihl * 4 + 8)
		return -1;
	return f.be16(14 + ihl * 4 + 2);
}

std::vector<uint8_t> swapped(const Frame &f)
{
	std::vector<uint8_t> b = f.data;
	for (int i = 0; i < 6; i++)
		std::swap(b[i], b[6 + i]);
	return b;
}

} // namespace

TEST_CASE("built-in programs: verdict table", "[xdp][builtin]")
{
	rte_mempool *mp = pool();
	auto frames = test_frames();
	struct Row {
		const char *prog;
		lrx_next_t (*expect)(const Frame &);
	};
	const Row rows[] = {
		{"drop", [](const Frame &) { return DROP; }},
		{"pass", [](const Frame &) { return PASS; }},
		{"abort", [](const Frame &) { return ABORT; }},
		{"redirect:3", [](const Frame &) { return lrx_next_redirect(3); }},
		{"read", [](const Frame &) { return DROP; }},
		{"touch", [](const Frame &) { return DROP; }},
		{"tx", [](const Frame &f) {
			 return has_eth(f) ? lrx_next_tx(1) : DROP; }},
		{"udp-port-drop:53,123", [](const Frame &f) {
			 int p = udp4_dport(f);
			 return p == 53 || p == 123 ? DROP : PASS; }},
	};
	for (const Row &row : rows) {
		INFO("prog=" << row.prog);
		Stage st(Keys{{"prog", row.prog}});
		INFO(st.err);
		REQUIRE(st.rc == 0);
		auto one = run_one(st, frames);
		auto burst = run_burst(st, frames);
		for (size_t i = 0; i < frames.size(); i++) {
			INFO("frame " << i);
			CHECK(one[i].next == row.expect(frames[i]));
			CHECK(burst[i].next == one[i].next);
			CHECK(burst[i].bytes == one[i].bytes);
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("built-in tx swaps MACs, touch writes one byte", "[xdp][builtin]")
{
	rte_mempool *mp = pool();
	Frame f = udp4();
	{
		Stage st(Keys{{"prog", "tx"}});
		REQUIRE(st.rc == 0);
		auto out = run_one(st, {f}, 4);
		CHECK(out[0].next == lrx_next_tx(4));
		CHECK(out[0].bytes == swapped(f));
		CHECK(st.counter("tx") == 1);
	}
	{
		Stage st(Keys{{"prog", "touch"}});
		REQUIRE(st.rc == 0);
		auto out = run_one(st, {f});
		std::vector<uint8_t> want = f.data;
		want[0]++;
		CHECK(out[0].bytes == want);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("built-in program keys are validated", "[xdp][errors]")
{
	pool();
	for (const char *bad : {"nosuch", "redirect", "redirect:x",
				"udp-port-drop:", "udp-port-drop:70000",
				"drop:1"}) {
		INFO("prog=" << bad);
		Stage st(Keys{{"prog", bad}});
		CHECK(st.rc == -EINVAL);
		CHECK(std::string(st.err).find("prog") != std::string::npos);
		CHECK(std::string(st.err).find(bad) != std::string::npos);
	}
	Stage e(Keys{{"prog", "drop"}, {"exec", "fast"}});
	CHECK(e.rc == -EINVAL);
	CHECK(std::string(e.err).find("one of jit, interp") != std::string::npos);
	Stage m(Keys{{"prog", "drop"}, {"map_init", "x:1=1"}});
	CHECK(m.rc == -EINVAL);
}

// Model of each shipped object (stages/xdp/progs) on one frame.
static lrx_next_t model(const std::string &prog, const Frame &f)
{
	if (prog == "xdp_drop")
		return DROP;
	if (prog == "xdp_pass")
		return has_eth(f) ? PASS : DROP;
	if (prog == "xdp_tx_swap")
		return has_eth(f) ? lrx_next_tx(1) : DROP;
	if (prog == "xdp_port_filter")
		return udp4_dport(f) == 53 ? DROP : PASS;
	return PASS; // xdp_proto_count
}

TEST_CASE("shipped eBPF programs: verdict table, interpreter and JIT agree",
	  "[xdp][ebpf]")
{
	rte_mempool *mp = pool();
	auto frames = test_frames();
	for (const char *prog : {"xdp_drop", "xdp_pass", "xdp_tx_swap",
				 "xdp_port_filter", "xdp_proto_count"}) {
		std::vector<std::vector<Out>> results;
		for (const char *exec : {"jit", "interp"}) {
			INFO(prog << " exec=" << exec);
			Stage st(Keys{{"prog", "bpf:" + prog_path(prog)},
				  {"exec", exec},
				  {"map_init", std::string(prog) == "xdp_port_filter" ?
					       "blocked_ports:53=0" : ""}});
			INFO(st.err);
			REQUIRE(st.rc == 0);
			auto one = run_one(st, frames);
			auto burst = run_burst(st, frames);
			for (size_t i = 0; i < frames.size(); i++) {
				INFO("frame " << i);
				CHECK(one[i].next == model(prog, frames[i]));
				CHECK(burst[i].next == one[i].next);
				CHECK(burst[i].bytes == one[i].bytes);
				if (lrx_next_kind(one[i].next) == LRX_NEXT_TX)
					CHECK(one[i].bytes == swapped(frames[i]));
				else
					CHECK(one[i].bytes == frames[i].data);
			}
			results.push_back(one);
		}
		for (size_t i = 0; i < frames.size(); i++) {
			CHECK(results[0][i].next == results[1][i].next);
			CHECK(results[0][i].bytes == results[1][i].bytes);
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("maps: port filter from map_init, counters readable",
	  "[xdp][ebpf][maps]")
{
	rte_mempool *mp = pool();
	auto frames = test_frames();
	for (const char *exec : {"jit", "interp"}) {
		INFO("exec=" << exec);
		Stage st(Keys{{"prog", prog_path("xdp_port_filter")},
			  {"exec", exec},
			  {"map_init", "blocked_ports:53=0,123=100"}});
		INFO(st.err);
		REQUIRE(st.rc == 0);
		run_one(st, frames);
		run_burst(st, frames);
		uint64_t to53 = 0, to123 = 0;
		for (const Frame &f : frames) {
			to53 += udp4_dport(f) == 53;
			to123 += udp4_dport(f) == 123;
		}
		REQUIRE(to53 >= 2);
		lrx_xdp_map *blocked = st.map("blocked_ports");
		lrx_xdp_map *stats = st.map("filter_stats");
		REQUIRE(blocked != nullptr);
		REQUIRE(stats != nullptr);
		CHECK(blocked->type == BPF_MAP_TYPE_HASH);
		CHECK(blocked->count == 2);
		uint16_t k53 = 53, k123 = 123, k9 = 9;
		auto *v53 = (uint64_t *)lrx_xdp_map_lookup(blocked, &k53);
		auto *v123 = (uint64_t *)lrx_xdp_map_lookup(blocked, &k123);
		REQUIRE(v53 != nullptr);
		REQUIRE(v123 != nullptr);
		CHECK(*v53 == 2 * to53);
		CHECK(*v123 == 100 + 2 * to123);
		CHECK(lrx_xdp_map_lookup(blocked, &k9) == nullptr);
		uint32_t k0 = 0, k1 = 1;
		CHECK(*(uint64_t *)lrx_xdp_map_lookup(stats, &k1) ==
		      2 * (to53 + to123));
		CHECK(*(uint64_t *)lrx_xdp_map_lookup(stats, &k0) ==
		      2 * (frames.size() - to53 - to123));
		CHECK(st.counter("drop") == 2 * (to53 + to123));
		CHECK(st.counter("pass") == 2 * (frames.size() - to53 - to123));
	}
	// bad map_init values name the key
	for (const char *bad : {"nosuch:1=1", "blocked_ports:70000=1",
				"blocked_ports:1", "blocked_ports"}) {
		INFO(bad);
		Stage st(Keys{{"prog", prog_path("xdp_port_filter")},
			  {"map_init", bad}});
		CHECK(st.rc == -EINVAL);
		CHECK(std::string(st.err).find("map_init") != std::string::npos);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("maps: per-protocol counter array", "[xdp][ebpf][maps]")
{
	rte_mempool *mp = pool();
	auto frames = test_frames();
	Stage st(Keys{{"prog", prog_path("xdp_proto_count")}, {"exec", "jit"}});
	REQUIRE(st.rc == 0);
	run_one(st, frames);
	std::map<uint32_t, uint64_t> want;
	for (const Frame &f : frames) {
		if (!has_eth(f))
			continue;
		uint32_t proto = 255;
		if (f.be16(12) == 0x0800 && f.size() >= 34)
			proto = f.u8(23);
		else if (f.be16(12) == 0x86dd && f.size() >= 54)
			proto = f.u8(20);
		want[proto]++;
	}
	lrx_xdp_map *m = st.map("proto_count");
	REQUIRE(m != nullptr);
	CHECK(m->max_entries == 256);
	for (uint32_t k = 0; k < 256; k++) {
		INFO("proto " << k);
		CHECK(*(uint64_t *)lrx_xdp_map_lookup(m, &k) == want[k]);
	}
	CHECK(want[17] >= 5);
	uint32_t out_of_range = 256;
	CHECK(lrx_xdp_map_lookup(m, &out_of_range) == nullptr);
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("hash map semantics", "[xdp][maps]")
{
	pool();
	lrx_xdp_map m;
	char err[256];
	REQUIRE(lrx_xdp_map_create(&m, "h", BPF_MAP_TYPE_HASH, 4, 8, 8, 0, err,
				   sizeof(err)) == 0);
	uint64_t v = 1;
	for (uint32_t k = 0; k < 8; k++)
		REQUIRE(lrx_xdp_map_update(&m, &k, &v, BPF_ANY) == 0);
	uint32_t k8 = 8, k3 = 3;
	CHECK(lrx_xdp_map_update(&m, &k8, &v, BPF_ANY) == -E2BIG);
	CHECK(lrx_xdp_map_update(&m, &k3, &v, BPF_NOEXIST) == -EEXIST);
	CHECK(lrx_xdp_map_update(&m, &k8, &v, BPF_EXIST) == -ENOENT);
	CHECK(lrx_xdp_map_delete(&m, &k3) == 0);
	CHECK(lrx_xdp_map_delete(&m, &k3) == -ENOENT);
	CHECK(lrx_xdp_map_lookup(&m, &k3) == nullptr);
	CHECK(lrx_xdp_map_update(&m, &k8, &v, BPF_NOEXIST) == 0);
	// delete/insert churn never loses entries (deleted elements reused)
	for (uint32_t round = 0; round < 1000; round++) {
		uint32_t k = 100 + round;
		REQUIRE(lrx_xdp_map_delete(&m, &k8) == 0);
		REQUIRE(lrx_xdp_map_update(&m, &k, &v, BPF_ANY) == 0);
		k8 = k;
	}
	CHECK(m.count == 8);
	for (uint32_t k = 0; k < 8; k++)
		CHECK((lrx_xdp_map_lookup(&m, &k) != nullptr) == (k != 3));
	lrx_xdp_map_destroy(&m);
	CHECK(lrx_xdp_map_create(&m, "a", BPF_MAP_TYPE_ARRAY, 8, 8, 8, 0, err,
				 sizeof(err)) == -EINVAL);
	CHECK(lrx_xdp_map_create(&m, "q", BPF_MAP_TYPE_QUEUE, 0, 8, 8, 0, err,
				 sizeof(err)) == -EINVAL);
	CHECK(std::string(err).find("'q'") != std::string::npos);
}

TEST_CASE("context fields, bpf_redirect and XDP_TX out of the ingress port",
	  "[xdp][ebpf]")
{
	rte_mempool *mp = pool();
	Frame f = udp4();
	Frame marker = udp4();
	marker.set_u8(0, 0x10); // rx_queue_index 0 + 0x10: dropped
	for (const char *exec : {"jit", "interp"}) {
		INFO("exec=" << exec);
		Stage st(Keys{{"prog", test_prog_path("redirect_ctx")},
			  {"exec", exec}});
		INFO(st.err);
		REQUIRE(st.rc == 0);
		auto a = run_one(st, {f, marker}, 3);
		CHECK(a[0].next == lrx_next_redirect(2));
		CHECK(a[1].next == lrx_next_redirect(2));
		auto b = run_burst(st, {f, marker, f}, 1);
		CHECK(b[0].next == PASS);
		CHECK(b[1].next == DROP);
		CHECK(b[2].next == PASS);
		auto c = run_burst(st, {f, f}, 3);
		CHECK(c[0].next == lrx_next_redirect(2));
		CHECK(c[1].next == lrx_next_redirect(2));
		CHECK(st.counter("redirect") == 4);
		CHECK(st.counter("aborted") == 0);

		Stage tx(Keys{{"prog", test_prog_path("redirect_ctx")},
			  {"section", "xdp/tx"}, {"exec", exec}});
		INFO(tx.err);
		REQUIRE(tx.rc == 0);
		CHECK(run_one(tx, {f}, 6)[0].next == lrx_next_tx(6));
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("generic mode reads the ingress port from the metadata",
	  "[xdp][generic]")
{
	rte_mempool *mp = pool();
	Stage st(Keys{{"prog", "tx"}, {"mode", "generic"}});
	REQUIRE(st.rc == 0);
	struct lrx_meta meta{};
	meta.ingress_port = 7;
	rte_mbuf *m = make(udp4(), 1);
	lrx_meta_set(m, &meta);
	CHECK(st.one(m) == lrx_next_tx(7));
	rte_pktmbuf_free(m);

	Stage eb(Keys{{"prog", test_prog_path("redirect_ctx")}, {"mode", "generic"}});
	REQUIRE(eb.rc == 0);
	meta.ingress_port = 3; // the program redirects port 3's frames
	m = make(udp4(), 1);
	lrx_meta_set(m, &meta);
	CHECK(eb.one(m) == lrx_next_redirect(2));
	rte_pktmbuf_free(m);
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("invalid return values and missing window are aborted",
	  "[xdp][ebpf]")
{
	rte_mempool *mp = pool();
	for (const char *exec : {"jit", "interp"}) {
		INFO("exec=" << exec);
		Stage st(Keys{{"prog", test_prog_path("ret_invalid")}, {"exec", exec}});
		REQUIRE(st.rc == 0);
		auto out = run_burst(st, {udp4(), udp4()});
		CHECK(out[0].next == ABORT);
		CHECK(st.counter("invalid_action") == 2);
		CHECK(st.counter("aborted") == 2);

		// headroom below the 64-byte context: aborted, counted
		Stage pass(Keys{{"prog", prog_path("xdp_pass")}, {"exec", exec}});
		REQUIRE(pass.rc == 0);
		rte_mbuf *m = make(udp4());
		REQUIRE(rte_pktmbuf_prepend(m, rte_pktmbuf_headroom(m) - 8));
		CHECK(pass.one(m) == ABORT);
		lrx_next_t n;
		pass.burst(&m, 1, &n);
		CHECK(n == ABORT);
		CHECK(pass.counter("window_error") == 2);
		rte_pktmbuf_free(m);
		// window larger than the buffer: aborted
		Stage big(Keys{{"prog", prog_path("xdp_pass")}, {"exec", exec},
			   {"window", "4000"}});
		REQUIRE(big.rc == 0);
		m = make(udp4());
		CHECK(big.one(m) == ABORT);
		rte_pktmbuf_free(m);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("short and empty frames are safe", "[xdp][ebpf]")
{
	rte_mempool *mp = pool();
	for (const char *prog : {"xdp_pass", "xdp_tx_swap", "xdp_port_filter",
				 "xdp_proto_count"}) {
		for (const char *exec : {"jit", "interp"}) {
			INFO(prog << " " << exec);
			Stage st(Keys{{"prog", prog_path(prog)}, {"exec", exec}});
			REQUIRE(st.rc == 0);
			for (uint16_t len : {0, 1, 13, 14, 33, 41}) {
				rte_mbuf *m = rte_pktmbuf_alloc(mp);
				REQUIRE(m);
				// bytes past data_end that a careless program
				// would read are poisoned
				memset(rte_pktmbuf_mtod(m, uint8_t *), 0x08,
				       rte_pktmbuf_tailroom(m));
				REQUIRE(rte_pktmbuf_append(m, len));
				memset(rte_pktmbuf_mtod(m, uint8_t *), 0, len);
				lrx_next_t n = st.one(m);
				CHECK(lrx_next_kind(n) != LRX_NEXT_REDIRECT);
				if (std::string(prog) == "xdp_port_filter")
					CHECK(n == PASS);
				if (len < 14 && std::string(prog) != "xdp_port_filter" &&
				    std::string(prog) != "xdp_proto_count")
					CHECK(n == DROP);
				rte_pktmbuf_free(m);
			}
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("process_one and process_burst are identical", "[xdp][equivalence]")
{
	rte_mempool *mp = pool();
	auto base = test_frames();
	std::vector<Frame> frames;
	for (int r = 0; r < 10; r++)
		for (size_t i = 0; i < base.size(); i++)
			frames.push_back(base[(i * 7 + r) % base.size()]);
	struct Conf {
		std::string prog, exec, map_init;
	};
	const Conf confs[] = {
		{"udp-port-drop:53", "jit", ""},
		{"tx", "jit", ""},
		{prog_path("xdp_port_filter"), "jit", "blocked_ports:53=0"},
		{prog_path("xdp_port_filter"), "interp", "blocked_ports:53=0"},
		{prog_path("xdp_tx_swap"), "interp", ""},
		{prog_path("xdp_proto_count"), "interp", ""},
		{test_prog_path("redirect_ctx"), "interp", ""},
	};
	for (const Conf &c : confs) {
		INFO(c.prog << " " << c.exec);
		std::map<std::string, std::string> keys = {
			{"prog", c.prog}, {"exec", c.exec}, {"map_init", c.map_init}};
		Stage a(keys), b(keys);
		REQUIRE(a.rc == 0);
		REQUIRE(b.rc == 0);
		auto one = run_one(a, frames);
		std::vector<Out> burst;
		for (size_t at = 0; at < frames.size(); at += 64) {
			std::vector<Frame> part(
				frames.begin() + at,
				frames.begin() + std::min(frames.size(), at + 64));
			auto r = run_burst(b, part);
			burst.insert(burst.end(), r.begin(), r.end());
		}
		REQUIRE(one.size() == burst.size());
		for (size_t i = 0; i < one.size(); i++) {
			INFO("frame " << i);
			CHECK(one[i].next == burst[i].next);
			CHECK(one[i].bytes == burst[i].bytes);
		}
		CHECK(a.counters() == b.counters());
		if (lrx_xdp_prog *p = lrx_xdp_stage_prog(a.ctx)) {
			lrx_xdp_prog *q = lrx_xdp_stage_prog(b.ctx);
			for (unsigned k = 0; k < lrx_xdp_prog_map_count(p); k++) {
				lrx_xdp_map *ma = lrx_xdp_prog_map_at(p, k);
				lrx_xdp_map *mb = lrx_xdp_prog_map_at(q, k);
				CHECK(map_dump(ma) == map_dump(mb));
			}
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("load errors name the file, section and instruction",
	  "[xdp][errors]")
{
	pool();
	struct Case {
		std::string prog, section, expect1, expect2;
	};
	const std::string notelf = std::string(LRX_XDP_SOURCE_DIR) + "/test_xdp.cpp";
	const Case cases[] = {
		{prog_path("xdp_drop"), "nosuch", "no such code section",
		 "the object has: xdp"},
		{notelf, "xdp", "test_xdp.cpp", "cannot open the object"},
		{"/nonexistent/x.o", "xdp", "/nonexistent/x.o", "cannot open"},
		{test_prog_path("bad_ctx_wide"), "xdp", "instruction 0",
		 "context access at offset 0, size 8"},
		{test_prog_path("bad_ctx_write"), "xdp", "instruction",
		 "writes to the xdp_md context"},
		{test_prog_path("bad_helper"), "xdp", "helper 44",
		 "bpf_xdp_adjust_head"},
		{test_prog_path("bad_global"), "xdp", "instruction",
		 "global variables"},
		{test_prog_path("bad_null"), "xdp", "instruction",
		 "may be NULL"},
		{test_prog_path("bad_extern"), "xdp", "listrx_missing_symbol", ""},
		// below data is listrx's xdp_md header, not packet memory: a
		// pointer below it refused, also one spilled to the stack
		{test_prog_path("bad_before_data"), "xdp", "instruction 6: a packet "
		 "access below data", "-byte xdp_md header in front of the frame"},
		{test_prog_path("bad_spill_before_data"), "xdp", "instruction 9: a "
		 "packet access below data", "check_packet_access"},
		{test_prog_path("bad_data_end_read"), "xdp", "instruction 5: load "
		 "through r2, which holds data_end", "invalid mem access 'pkt_end'"},
	};
	for (const Case &c : cases) {
		INFO(c.prog << " section " << c.section);
		Stage st(Keys{{"prog", "bpf:" + c.prog}, {"section", c.section}});
		INFO("error: " << st.err);
		CHECK(st.rc < 0);
		std::string err = st.err;
		CHECK(err.find(c.expect1) != std::string::npos);
		CHECK(err.find(c.expect2) != std::string::npos);
		if (c.prog.find("nonexistent") == std::string::npos) {
			CHECK(st.rc == -EINVAL);
			CHECK(err.find(c.prog) != std::string::npos);
		}
	}
}

TEST_CASE("the context rewrite keeps the program's shape", "[xdp][ebpf]")
{
	pool();
	lrx_xdp_prog *p = nullptr;
	char err[512];
	REQUIRE(lrx_xdp_prog_load(prog_path("xdp_port_filter").c_str(), "xdp",
				  1600, 0, &p, err, sizeof(err)) == 0);
	// data -> mov+add (one extra instruction per data load), others 1:1
	CHECK(lrx_xdp_prog_insn_count(p, true) >= lrx_xdp_prog_insn_count(p, false));
	CHECK(lrx_xdp_prog_insn_count(p, true) <= lrx_xdp_prog_insn_count(p, false) + 2);
	CHECK(lrx_xdp_prog_jit(p) != nullptr);
	CHECK(lrx_xdp_prog_map_count(p) == 2);
	lrx_xdp_prog_free(p);
}

TEST_CASE("rte_bpf bounds frame accesses by the window", "[xdp][ebpf]")
{
	rte_mempool *mp = pool();
	Stage small(Keys{{"prog", test_prog_path("far_read")}, {"window", "1600"}});
	INFO(small.err);
	CHECK(small.rc == -EINVAL);
	CHECK(std::string(small.err).find("rte_bpf rejected") != std::string::npos);
	CHECK(std::string(small.err).find("window=1600") != std::string::npos);
	for (const char *exec : {"jit", "interp"}) {
		Stage big(Keys{{"prog", test_prog_path("far_read")},
			       {"window", "1800"}, {"exec", exec}});
		INFO(big.err);
		REQUIRE(big.rc == 0);
		Frame f = udp4();
		f.append(1700, 1);
		CHECK(run_one(big, {f, udp4()})[0].next == DROP);
		CHECK(run_one(big, {udp4()})[0].next == PASS);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {

const lrx_map_field *layout_field(const lrx_map_layout *l, uint8_t part, const std::string &name)
{
	for (uint32_t i = 0; l && i < l->n_fields; i++)
		if (l->fields[i].part == part && name == l->fields[i].name)
			return &l->fields[i];
	return nullptr;
}

void check_field(const lrx_map_layout *l, uint8_t part, const std::string &name, size_t offset,
		 uint32_t size, uint32_t count, uint8_t kind)
{
	INFO("field " << name);
	const lrx_map_field *f = layout_field(l, part, name);
	REQUIRE(f != nullptr);
	CHECK(f->offset == offset);
	CHECK(f->size == size);
	CHECK(f->count == count);
	CHECK(f->kind == kind);
	CHECK(f->bit_size == 0);
}

} // namespace

TEST_CASE("maps: key and value layouts from the object's BTF, as bpftool decodes them",
	  "[xdp][ebpf][maps]")
{
	rte_mempool *mp = pool();
	Stage st(Keys{{"prog", test_prog_path("map_typed")}});
	INFO(st.err);
	REQUIRE(st.rc == 0);
	lrx_xdp_map *m = st.map("typed");
	REQUIRE(m != nullptr);
	REQUIRE(m->layout != nullptr);
	const lrx_map_layout *l = m->layout;
	// the fields in the order of the types, the key's first
	std::vector<std::string> names;
	for (uint32_t i = 0; i < l->n_fields; i++)
		names.push_back(std::string(l->fields[i].part == LRX_MAP_KEY ? "k:" : "v:") +
				l->fields[i].name);
	CHECK(names == std::vector<std::string>{"k:proto", "k:spare", "k:dport", "k:tag", "v:pkts",
						"v:bytes", "v:delta", "v:sizes", "v:ip.ttl",
						"v:ip.flags", "v:ip.version", "v:ip.last", "v:pad"});
	check_field(l, LRX_MAP_KEY, "proto", offsetof(typed_key, proto), 1, 1, LRX_MAP_UINT);
	check_field(l, LRX_MAP_KEY, "dport", offsetof(typed_key, dport), 2, 1, LRX_MAP_UINT);
	check_field(l, LRX_MAP_KEY, "tag", offsetof(typed_key, tag), 1, 4, LRX_MAP_CHARS);
	check_field(l, LRX_MAP_VALUE, "bytes", offsetof(typed_value, bytes), 8, 1, LRX_MAP_UINT);
	check_field(l, LRX_MAP_VALUE, "delta", offsetof(typed_value, delta), 4, 1, LRX_MAP_INT);
	check_field(l, LRX_MAP_VALUE, "sizes", offsetof(typed_value, sizes), 2, 2, LRX_MAP_UINT);
	check_field(l, LRX_MAP_VALUE, "ip.ttl", offsetof(typed_value, ip), 1, 1, LRX_MAP_UINT);
	check_field(l, LRX_MAP_VALUE, "pad", offsetof(typed_value, pad), 1, 2, LRX_MAP_UINT);
	// bitfields: their bits within the byte after ttl (the C compiler's
	// own placement, read back from a value it wrote)
	typed_value v{};
	v.ip.flags = 5;
	v.ip.version = 4;
	v.ip.last = 1;
	uint8_t byte;
	std::memcpy(&byte, reinterpret_cast<const uint8_t *>(&v) + offsetof(typed_value, ip) + 1, 1);
	for (auto [name, want] : std::vector<std::pair<std::string, unsigned>>{
		     {"ip.flags", 5}, {"ip.version", 4}, {"ip.last", 1}}) {
		INFO(name);
		const lrx_map_field *f = layout_field(l, LRX_MAP_VALUE, name);
		REQUIRE(f != nullptr);
		REQUIRE(f->bit_size > 0);
		uint64_t word = 0;
		std::memcpy(&word, reinterpret_cast<const uint8_t *>(&v) + f->offset, f->size);
		CHECK(((word >> f->bit_offset) & ((1u << f->bit_size) - 1)) == want);
	}
	CHECK(byte != 0);
	// plain integer keys and values: one unnamed field each
	Stage counts(Keys{{"prog", prog_path("xdp_proto_count")}});
	REQUIRE(counts.rc == 0);
	const lrx_map_layout *pl = counts.map("proto_count")->layout;
	REQUIRE(pl != nullptr);
	REQUIRE(pl->n_fields == 2);
	check_field(pl, LRX_MAP_KEY, "", 0, 4, 1, LRX_MAP_UINT);
	check_field(pl, LRX_MAP_VALUE, "", 0, 8, 1, LRX_MAP_UINT);
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("maps: a type the layout cannot hold gives no layout (the bytes only)",
	  "[xdp][maps]")
{
	btf *b = btf__new_empty();
	REQUIRE(b != nullptr);
	int u32 = btf__add_int(b, "unsigned int", 4, 0);
	REQUIRE(u32 > 0);
	// more members than LRX_MAP_FIELDS_MAX
	int wide = btf__add_struct(b, "wide", 4 * (LRX_MAP_FIELDS_MAX + 1));
	REQUIRE(wide > 0);
	for (unsigned i = 0; i <= LRX_MAP_FIELDS_MAX; i++)
		REQUIRE(btf__add_field(b, ("f" + std::to_string(i)).c_str(), u32, 32 * i, 0) == 0);
	// a struct that contains itself (malformed BTF)
	int loop = btf__add_struct(b, "loop", 8);
	REQUIRE(loop > 0);
	REQUIRE(btf__add_field(b, "self", loop, 0, 0) == 0);
	// arrays of arrays of padding-only structs: no field, but too much to walk
	int empty = btf__add_struct(b, "empty", 4); // padding only
	REQUIRE(empty > 0);
	int nested = empty;
	for (int level = 0; level < 5; level++) { // 24^5 elements, 30 MiB
		nested = btf__add_array(b, u32, nested, LRX_MAP_FIELDS_MAX);
		REQUIRE(nested > 0);
	}
	// a float: bytes
	int flt = btf__add_float(b, "double", 8);
	REQUIRE(flt > 0);
	lrx_map_layout l;
	CHECK(lrx_btf_map_layout(b, u32, wide, 4, 4 * (LRX_MAP_FIELDS_MAX + 1), &l) == -E2BIG);
	CHECK(l.n_fields == 0);
	CHECK(lrx_btf_map_layout(b, u32, loop, 4, 8, &l) == -EINVAL);
	CHECK(l.n_fields == 0);
	CHECK(lrx_btf_map_layout(b, u32, nested, 4, 8, &l) == -E2BIG);
	CHECK(lrx_btf_map_layout(b, u32, btf__add_array(b, u32, empty, 1000), 4, 8, &l) == -E2BIG);
	// a type larger than the map says its value is
	CHECK(lrx_btf_map_layout(b, u32, wide, 4, 8, &l) == -EINVAL);
	REQUIRE(lrx_btf_map_layout(b, u32, flt, 4, 8, &l) == 0);
	REQUIRE(l.n_fields == 2);
	CHECK(l.fields[1].kind == LRX_MAP_BYTES);
	CHECK(l.fields[1].size == 8);
	// no BTF type for the key (__uint(key_size, 4)): the value's only
	REQUIRE(lrx_btf_map_layout(b, 0, u32, 4, 4, &l) == 0);
	REQUIRE(l.n_fields == 1);
	CHECK(l.fields[0].part == LRX_MAP_VALUE);
	btf__free(b);
}
