// SPDX-License-Identifier: BSD-3-Clause
// build-meta,l3-demux with netfilter rules under every engine (packet,
// burst, hybrid:K, static, graph), list_split none/gather/runs, on random
// polls of good, malformed, fragmented and filtered frames: identical sink
// contents (fate and bytes, in order), stage stats, counters and every
// rule's counters (the list path runs PREROUTING over the list, as
// nf_hook_slow_list).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <array>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "engine_run.h"
#include "stage_harness.h"
#include "temp_file.h"
#include "frames.h"
#include "test_eal.h"
#include "../l3_demux/reasm_frames.h"

extern "C" {
#include "pipeline.h"
}

using namespace lrx_test::frames;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("nfeng_pool", 16383);
}

} // namespace

TEST_CASE("build-meta,l3-demux with netfilter give identical results under "
	  "every engine", "[netfilter][equivalence]")
{
	pool();
	const lrx_test::TempFile file(
		"*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A PREROUTING -p udp -m udp --dport 7 -j DROP\n"
		"-A PREROUTING -f\n"
		"COMMIT\n"
		"*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":u - [0:0]\n"
		"-A INPUT -p udp -j u\n"
		"-A INPUT -p tcp -m tcp --syn -j DROP\n"
		"-A INPUT -p udp -m multiport --dports 100:200,300 -j DROP\n"
		"-A u -p udp -m udp --dport 53 -j RETURN\n"
		"-A u -s 10.0.0.9 -j DROP\n"
		"COMMIT\n");
	const char *path = file.path.c_str();
	const std::vector<Frame> frames = {
		udp4(1, 7), udp4(1, 9), udp4(1, 53), udp4(1, 150), udp4(1, 300),
		tcp4(TCP_SYN), tcp4(), udp6(),
		with([](Spec &s) { s.ip4_src = lrx_test::frames::ip4(10, 0, 0, 9); }),
		udp4(1, 7).ip4_total_length(24).ip4_fix_csum(),
		udp4().ip4_corrupt_csum(), udp4().ip4_dst(ip4(10, 0, 0, 99)),
		udp4(1, 53).ip4_frag(0x2000), udp4(1, 53).ip4_frag(0x0004),
		with([](Spec &s) { s.vlans = {5}; s.dport = 7; }),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
	};
	std::mt19937 rng(360);
	for (const char *split : {"none", "gather", "runs"}) {
		const uint16_t burst = 32;
		std::vector<uint16_t> polls;
		size_t total = 0;
		while (total < 2000) {
			uint16_t n = (uint16_t)(1 + rng() % burst);
			polls.push_back(n);
			total += n;
		}
		std::vector<uint16_t> ids(total);
		for (auto &id : ids)
			id = (uint16_t)(rng() % frames.size());
		const std::vector<lrx_test::PipelineStage> stages = {
			{"build-meta", {}},
			{"l3-demux", {{"local_ipv4", "10.0.0.2/24"}, {"netfilter", path},
				      {"list_split", split}, {"ipfrag_clock", "polls"},
				      // the replies' rate limits on the poll count,
				      // not the TSC (first fragments' expiries send)
				      {"icmp_clock", "polls"}}},
		};
		auto make = [&](size_t at) { return frames[ids[at]].to_mbuf(pool()); };
		auto clean = [](lrx_test::EngineRun &r) {
			for (auto &c : r.counters)
				for (const char *how : {"l3_sublists", "l4_sublists",
							"route_hint_hits", "route_lookups",
							"pool_wraps"})
					c.erase(how);
		};
		lrx_test::engine_prefetch = 0;
		auto ref = lrx_test::run_engine(LRX_ENGINE_PACKET, 0, burst, stages, make,
						polls);
		clean(ref);
		REQUIRE(ref.counters[1].at("nf_prerouting_drops") > 0);
		REQUIRE(ref.counters[1].at("nf_local_in_drops") > 0);
		REQUIRE(ref.maps[1].count("filter/u") == 1);
		INFO(split);
		lrx_test::for_each_engine(1, [&](lrx_engine_kind kind, unsigned k) {
			auto r = lrx_test::run_engine(kind, k, burst, stages, make, polls);
			clean(r);
			lrx_test::require_same_run(r, ref);
		});
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("build-meta,l3-demux with conntrack give identical results under "
	  "every engine", "[netfilter][conntrack][equivalence]")
{
	pool();
	const lrx_test::TempFile file(
		"*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A PREROUTING -p udp -m udp --dport 7 -j CT --notrack\n"
		"COMMIT\n"
		"*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
		"-A INPUT -m conntrack --ctstate INVALID -j DROP\n"
		"-A INPUT -m state --state UNTRACKED -j ACCEPT\n"
		"-A INPUT -p tcp -m multiport --dports 22,24 -m conntrack --ctstate NEW -j ACCEPT\n"
		"-A INPUT -p udp -m udp --dport 53 -m state --state NEW -j ACCEPT\n"
		"-A INPUT -p icmp -m state --state NEW -j ACCEPT\n"
		"COMMIT\n");
	const char *path = file.path.c_str();
	auto tcp = [](int flags, uint16_t sport, uint16_t dport) {
		return with([&](Spec &s) {
			s.l4 = L4::tcp;
			s.tcp_flags = (uint8_t)flags;
			s.sport = sport;
			s.dport = dport;
		});
	};
	const Frame from_host = with([](Spec &s) {
		s.ip4_src = ip4(10, 0, 0, 2);
		s.ip4_dst = ip4(10, 0, 0, 1);
		s.sport = 53;
		s.dport = 2;
	});
	std::vector<uint8_t> quoted(from_host.data.begin() + from_host.l2_len,
				    from_host.data.begin() + from_host.l4_off + 8);
	std::vector<Frame> frames = {
		udp4(2, 53), udp4(3, 53), udp4(1, 7), udp4(1, 9),
		with([&](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 3; s.icmp_code = 3;
				    s.payload = quoted; s.default_payload = false; }),
		with([](Spec &s) { s.l4 = L4::icmp; }),
		with([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 0; }),
		udp4(2, 53).ip4_frag(0x2000), udp4(2, 53).ip4_frag(0x0004),
		udp6(), arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
	};
	for (uint16_t sport : {40000, 40001, 40002})
		for (uint16_t dport : {22, 23, 24})
			for (int flags : {(int)TCP_SYN, (int)TCP_ACK, TCP_SYN | TCP_ACK, (int)TCP_RST,
					  TCP_FIN | TCP_ACK})
				frames.push_back(tcp(flags, sport, dport));
	// tcp_in_window's paths: a SYN with window scale and SACK, segments
	// at sequence numbers in, a little beyond, far beyond and before the
	// window, acks of seen and unseen data, SACK blocks, a zero window
	const std::vector<uint8_t> syn_opts = {2, 4, 0x05, 0xb4, 4, 2, 1, 3, 3, 7};
	const std::vector<uint8_t> sack_opts = {1, 1, 5, 10, 0, 0, 0, 50, 0, 0, 0, 90};
	for (uint32_t seq : {1u, 2u, 1002u, 66000u, 70002u, 0x80000000u})
		for (uint32_t ack : {0u, 1u, 12345u})
			frames.push_back(with([&](Spec &s) {
				s.l4 = L4::tcp;
				s.tcp_flags = seq == 1 ? TCP_SYN : TCP_PSH | TCP_ACK;
				s.sport = 40003;
				s.dport = 22;
				s.seq = seq;
				s.ack = ack;
				s.window = (uint16_t)(ack == 1 ? 0 : 502);
				s.tcp_options = seq == 1 ? syn_opts
					      : ack == 12345 ? sack_opts : std::vector<uint8_t>{};
			}));
	std::mt19937 rng(43);
	// list split, nf_conntrack_tcp_be_liberal, nf_conntrack_tcp_loose
	const std::array<std::array<const char *, 3>, 3> settings = {{
		{"none", "0", "1"}, {"gather", "0", "1"}, {"gather", "1", "0"}}};
	for (const auto &setting : settings) {
		const char *split = setting[0];
		const uint16_t burst = 32;
		std::vector<uint16_t> polls;
		size_t total = 0;
		while (total < 3000) {
			uint16_t n = (uint16_t)(1 + rng() % burst);
			polls.push_back(n);
			total += n;
		}
		std::vector<uint16_t> ids(total);
		for (auto &id : ids)
			id = (uint16_t)(rng() % frames.size());
		// a small table: early drops and drops happen
		const std::vector<lrx_test::PipelineStage> stages = {
			{"build-meta", {}},
			{"l3-demux", {{"local_ipv4", "10.0.0.2/24"}, {"netfilter", path},
				      {"tcp_ports", "22"}, {"udp_ports", "none"},
				      {"list_split", split}, {"ipfrag_clock", "polls"},
				      {"icmp_clock", "polls"}, {"icmp_ratelimit", "0"},
				      {"arp_mac", "02:00:00:00:00:02"},
				      {"nf_conntrack_max", "6"},
				      {"nf_conntrack_tcp_be_liberal", setting[1]},
				      {"nf_conntrack_tcp_loose", setting[2]}}},
		};
		auto make = [&](size_t at) { return frames[ids[at]].to_mbuf(pool()); };
		auto clean = [](lrx_test::EngineRun &r) {
			for (auto &c : r.counters)
				for (const char *how : {"l3_sublists", "l4_sublists",
							"route_hint_hits", "route_lookups",
							"pool_wraps"})
					c.erase(how);
		};
		lrx_test::engine_prefetch = 0;
		auto ref = lrx_test::run_engine(LRX_ENGINE_PACKET, 0, burst, stages, make,
						polls);
		clean(ref);
		for (const char *c : {"nf_conntrack_insert", "nf_conntrack_invalid",
				      "nf_conntrack_found", "nf_conntrack_early_drop",
				      "nf_conntrack_icmp_error"}) {
			INFO(c);
			REQUIRE(ref.counters[1].at(c) > 0);
		}
		INFO(split << " be_liberal " << setting[1] << " loose " << setting[2]);
		lrx_test::for_each_engine(1, [&](lrx_engine_kind kind, unsigned k) {
			auto r = lrx_test::run_engine(kind, k, burst, stages, make, polls);
			clean(r);
			lrx_test::require_same_run(r, ref);
		});
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux: a netfilter file that does not load fails init, naming "
	  "the key, the file and line and what is valid", "[netfilter]")
{
	pool();
	const lrx_test::TempFile file("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -j REJECT\nCOMMIT\n");
	const std::string path = file.path;
	lrx_test::StageInstance bm("build-meta");
	lrx_test::StageInstance l3("l3-demux", {{"netfilter", path}});
	CHECK_FALSE(l3.ok());
	const std::string err = l3.error();
	INFO(err);
	CHECK(err.find(std::string("l3-demux: key 'netfilter': ") + path +
		       ":3: 'REJECT': no such chain") != std::string::npos);
	lrx_test::StageInstance missing("l3-demux", {{"netfilter", "/nonexistent"}});
	CHECK(std::string(missing.error()).find("/nonexistent: cannot open") !=
	      std::string::npos);
}

TEST_CASE("build-meta,l3-demux with ip6tables rules (netfilter6) give identical "
	  "results under every engine", "[netfilter][equivalence]")
{
	pool();
	const lrx_test::TempFile file4(
		"*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -p udp -m udp --dport 7 -j DROP\n"
		"COMMIT\n");
	const lrx_test::TempFile file6(
		"*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A PREROUTING -p udp -m udp --dport 7 -j DROP\n"
		"-A PREROUTING -s 2001:db8::9/128 -j DROP\n"
		"COMMIT\n"
		"*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":u - [0:0]\n"
		"-A INPUT -p ipv6-icmp -j ACCEPT\n"
		"-A INPUT -p udp -j u\n"
		"-A INPUT -p tcp -m tcp --syn -j ACCEPT\n"
		"-A u -p udp -m udp --dport 53 -j ACCEPT\n"
		"-A u -p udp -m multiport --dports 100:200,300 -j ACCEPT\n"
		"-A u ! -s 2001:db8::/64 -j ACCEPT\n"
		"COMMIT\n");
	const Ip6 far = ip6({0x2001, 0xdb9, 0, 0, 0, 0, 0, 1});
	auto v6 = [](const std::function<void(Spec &)> &f) {
		return with([&](Spec &s) {
			s.l3 = L3::ipv6;
			f(s);
		});
	};
	auto frag6 = [](uint16_t off_flags) {
		return ip6_insert_ext(udp6(1, 53), 44,
				      lrx_test::frames::ip6_ext(
					      17, {(uint8_t)(off_flags >> 8),
						   (uint8_t)off_flags, 0, 0, 0, 9}));
	};
	Frame cut = ip6_insert_ext(udp6(1, 53), 60,
				   lrx_test::frames::ip6_ext(17, {0, 0, 0, 0, 0, 0}));
	cut.ip6_payload_length(1);
	const std::vector<Frame> frames = {
		udp6(1, 7), udp6(1, 9), udp6(1, 53), udp6(1, 150), udp6(1, 300),
		v6([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 128; }),
		v6([](Spec &s) { s.l4 = L4::tcp; s.tcp_flags = TCP_SYN; }),
		v6([](Spec &s) { s.l4 = L4::tcp; s.tcp_flags = TCP_ACK; }),
		v6([&](Spec &s) { s.ip6_src = far; }),
		v6([](Spec &s) { s.ip6_src = ip6_doc(9); s.l4 = L4::icmp; }),
		v6([](Spec &s) { s.ip6_hop_by_hop = true; s.dport = 53; }),
		v6([](Spec &s) { s.vlans = {5}; s.dport = 7; }),
		frag6(0x0001), frag6(0x0008), cut,
		udp6(1, 53).ip6_dst(ip6_doc(0x99)).l4_fix_csum(),
		udp4(1, 7), udp4(1, 9), tcp4(TCP_SYN),
	};
	std::mt19937 rng(366);
	for (const char *split : {"none", "gather", "runs"}) {
		const uint16_t burst = 32;
		std::vector<uint16_t> polls;
		size_t total = 0;
		while (total < 2000) {
			uint16_t n = (uint16_t)(1 + rng() % burst);
			polls.push_back(n);
			total += n;
		}
		std::vector<uint16_t> ids(total);
		for (auto &id : ids)
			id = (uint16_t)(rng() % frames.size());
		const std::vector<lrx_test::PipelineStage> stages = {
			{"build-meta", {}},
			{"l3-demux", {{"local_ipv4", "10.0.0.2/24"},
				      {"local_ipv6", "2001:db8::2/64"},
				      {"netfilter", file4.path}, {"netfilter6", file6.path},
				      {"list_split", split}, {"ipfrag_clock", "polls"},
				      // the replies' rate limits on the poll count,
				      // not the TSC (first fragments' expiries send)
				      {"icmp_clock", "polls"}}},
		};
		auto make = [&](size_t at) { return frames[ids[at]].to_mbuf(pool()); };
		auto clean = [](lrx_test::EngineRun &r) {
			for (auto &c : r.counters)
				for (const char *how : {"l3_sublists", "l4_sublists",
							"route_hint_hits", "route_lookups",
							"pool_wraps"})
					c.erase(how);
		};
		lrx_test::engine_prefetch = 0;
		auto ref = lrx_test::run_engine(LRX_ENGINE_PACKET, 0, burst, stages, make,
						polls);
		clean(ref);
		REQUIRE(ref.counters[1].at("nf6_prerouting_drops") > 0);
		REQUIRE(ref.counters[1].at("nf6_local_in_drops") > 0);
		REQUIRE(ref.counters[1].at("nf_local_in_drops") > 0);
		REQUIRE(ref.maps[1].count("ip6/filter/u") == 1);
		REQUIRE(ref.maps[1].count("filter/INPUT") == 1);
		INFO(split);
		lrx_test::for_each_engine(1, [&](lrx_engine_kind kind, unsigned k) {
			auto r = lrx_test::run_engine(kind, k, burst, stages, make, polls);
			clean(r);
			lrx_test::require_same_run(r, ref);
		});
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("build-meta,l3-demux with IPv6 conntrack (netfilter6) give identical "
	  "results under every engine", "[netfilter][conntrack][equivalence]")
{
	pool();
	const lrx_test::TempFile file6(
		"*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A PREROUTING -p udp -m udp --dport 7 -j CT --notrack\n"
		"COMMIT\n"
		"*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
		"-A INPUT -m conntrack --ctstate INVALID -j DROP\n"
		"-A INPUT -m state --state UNTRACKED -j ACCEPT\n"
		"-A INPUT -p tcp -m multiport --dports 22,24 -m conntrack --ctstate NEW -j ACCEPT\n"
		"-A INPUT -p udp -m udp --dport 53 -m state --state NEW -j ACCEPT\n"
		"-A INPUT -p ipv6-icmp -m state --state NEW -j ACCEPT\n"
		"COMMIT\n");
	auto v6 = [](const std::function<void(Spec &)> &f) {
		return with([&](Spec &s) {
			s.l3 = L3::ipv6;
			f(s);
		});
	};
	const Frame from_host = v6([](Spec &s) {
		s.ip6_src = ip6_doc(2);
		s.ip6_dst = ip6_doc(1);
		s.sport = 53;
		s.dport = 2;
	});
	const std::vector<uint8_t> quoted(from_host.data.begin() + from_host.l2_len,
					  from_host.data.begin() + from_host.l4_off + 8);
	const Ip6 host = ip6_doc(2);
	auto frag6 = [](uint16_t off_flags) {
		return ip6_insert_ext(udp6(2, 53), 44,
				      lrx_test::frames::ip6_ext(
					      17, {(uint8_t)(off_flags >> 8),
						   (uint8_t)off_flags, 0, 0, 0, 9}));
	};
	std::vector<Frame> frames = {
		udp6(2, 53), udp6(3, 53), udp6(1, 7), udp6(1, 9),
		v6([&](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 1; s.icmp_code = 4;
				  s.payload = quoted; s.default_payload = false; }),
		v6([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 128; }),
		v6([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 129; }),
		v6([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 128; }).l4_corrupt_csum(),
		v6([&](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 135; s.hop_limit = 255;
				  s.payload.assign(host.begin(), host.end());
				  s.default_payload = false; }),
		frag6(0x0001), frag6(0x0008),
		udp4(2, 53), tcp4(TCP_SYN, 40000, 22),
	};
	// nf_defrag_ipv6: the fragments of two datagrams (UDP to 53, an echo
	// request) and an overlapping one, drawn in any order and number
	for (const Frame &whole : {v6([](Spec &s) { s.dport = 53; s.payload.assign(200, 7);
						    s.default_payload = false; }),
				   v6([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 128;
						    s.payload.assign(200, 9);
						    s.default_payload = false; })}) {
		frames.push_back(lrx_test::reasm::frag6(whole, 0, 80, true, 0x77));
		frames.push_back(lrx_test::reasm::frag6(whole, 80, 80, true, 0x77));
		frames.push_back(lrx_test::reasm::frag6(whole, 160, whole.l3_len - 200, false, 0x77));
		frames.push_back(lrx_test::reasm::frag6(whole, 40, 80, true, 0x77));
	}
	for (uint16_t sport : {40000, 40001, 40002})
		for (uint16_t dport : {22, 23, 24})
			for (int flags : {(int)TCP_SYN, (int)TCP_ACK, TCP_SYN | TCP_ACK,
					  (int)TCP_RST, TCP_FIN | TCP_ACK})
				frames.push_back(v6([&](Spec &s) {
					s.l4 = L4::tcp;
					s.tcp_flags = (uint8_t)flags;
					s.sport = sport;
					s.dport = dport;
				}));
	std::mt19937 rng(46);
	// list split; conntrack auto (IPv6 only: the IPv4 frames untracked)
	// or on (both families)
	const std::array<std::array<const char *, 2>, 3> settings = {{
		{"none", "auto"}, {"gather", "auto"}, {"runs", "on"}}};
	for (const auto &setting : settings) {
		const uint16_t burst = 32;
		std::vector<uint16_t> polls;
		size_t total = 0;
		while (total < 3000) {
			uint16_t n = (uint16_t)(1 + rng() % burst);
			polls.push_back(n);
			total += n;
		}
		std::vector<uint16_t> ids(total);
		for (auto &id : ids)
			id = (uint16_t)(rng() % frames.size());
		const std::vector<lrx_test::PipelineStage> stages = {
			{"build-meta", {}},
			{"l3-demux", {{"local_ipv4", "10.0.0.2/24"},
				      {"local_ipv6", "2001:db8::2/64"},
				      {"netfilter6", file6.path}, {"conntrack", setting[1]},
				      {"tcp_ports", "22"}, {"udp_ports", "none"},
				      {"list_split", setting[0]}, {"ipfrag_clock", "polls"},
				      {"icmp_clock", "polls"}, {"icmp_ratelimit", "0"},
				      {"arp_mac", "02:00:00:00:00:02"},
				      {"nf_conntrack_max", "6"}}},
		};
		auto make = [&](size_t at) { return frames[ids[at]].to_mbuf(pool()); };
		auto clean = [](lrx_test::EngineRun &r) {
			for (auto &c : r.counters)
				for (const char *how : {"l3_sublists", "l4_sublists",
							"route_hint_hits", "route_lookups",
							"pool_wraps"})
					c.erase(how);
		};
		lrx_test::engine_prefetch = 0;
		auto ref = lrx_test::run_engine(LRX_ENGINE_PACKET, 0, burst, stages, make,
						polls);
		clean(ref);
		for (const char *c : {"nf_conntrack_insert", "nf_conntrack_invalid",
				      "nf_conntrack_found", "nf_conntrack_early_drop",
				      "nf_conntrack_icmp_error", "nf6_local_in_drops",
				      "nf6_defrag_oks", "nf6_defrag_overlaps", "nf6_prerouting_drops"}) {
			INFO(c);
			REQUIRE(ref.counters[1].at(c) > 0);
		}
		INFO(setting[0] << " conntrack " << setting[1]);
		lrx_test::for_each_engine(1, [&](lrx_engine_kind kind, unsigned k) {
			auto r = lrx_test::run_engine(kind, k, burst, stages, make, polls);
			clean(r);
			lrx_test::require_same_run(r, ref);
		});
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux: a netfilter6 file that does not load fails init, naming "
	  "the key, the file and line and what is valid", "[netfilter]")
{
	pool();
	const lrx_test::TempFile file("*filter\n:INPUT ACCEPT [0:0]\n"
				      "-A INPUT -s 10.0.0.1 -j DROP\nCOMMIT\n");
	const std::string path = file.path;
	lrx_test::StageInstance l3("l3-demux", {{"netfilter6", path}});
	CHECK_FALSE(l3.ok());
	const std::string err = l3.error();
	INFO(err);
	CHECK(err.find(std::string("l3-demux: key 'netfilter6': ") + path +
		       ":3: '10.0.0.1': an IPv6 address") != std::string::npos);
}
