// SPDX-License-Identifier: BSD-3-Clause
// build-meta,l3-demux under every engine (packet, burst, hybrid:K, static,
// graph) on the same mixed input of good and malformed frames: identical
// sink contents (fate and bytes, in order), per-stage stats and the
// stages' own counters (except the ones that describe how the work was
// split: sublists and route-hint reuse), multicast, broadcast and IPv6
// extension headers included.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "frames.h"
#include "engine_run.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
#include "sink.h"
}

using namespace lrx_test::frames;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("l3eng_pool", 16383);
}

Frame mc4(uint32_t group, uint16_t dport)
{
	Spec s;
	s.dst = {0x01, 0x00, 0x5e, (uint8_t)(group >> 16 & 0x7f),
		 (uint8_t)(group >> 8), (uint8_t)group};
	s.ip4_dst = group;
	s.dport = dport;
	return build(s);
}

Frame bc4(uint32_t dst, uint16_t dport)
{
	Spec s;
	s.dst = mac_broadcast;
	s.ip4_dst = dst;
	s.dport = dport;
	return build(s);
}

Frame mc6(const Ip6 &group, uint16_t dport)
{
	Spec s;
	s.l3 = L3::ipv6;
	s.dst = {0x33, 0x33, group[12], group[13], group[14], group[15]};
	s.ip6_dst = group;
	s.dport = dport;
	return build(s);
}

std::vector<Frame> mixed_frames()
{
	return {
		udp4(), udp4(), tcp4(), udp4(1, 5005), udp4(1, 3000),
		with([](Spec &s) { s.l4 = L4::icmp; }),
		with([](Spec &s) { s.vlans = {5}; }),
		with([](Spec &s) { s.vlans = {5, 6}; s.l3 = L3::ipv6; }),
		with([](Spec &s) { s.dst = {2, 0, 0, 0, 0, 9}; }),
		udp4().ip4_version(5), udp4().ip4_corrupt_csum(),
		udp4().ip4_total_length(300), udp4().ip4_src(ip4(127, 0, 0, 1)),
		udp4().ip4_dst(ip4(10, 0, 0, 99)), udp4().ip4_frag(0x2000),
		udp4().ip4_proto(47), udp4().l4_corrupt_csum(), tcp4().tcp_doff(3),
		udp4().append(44), udp4().truncate(20),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 7)),
		udp6(), udp6().append(9), udp6().ip6_version(4),
		udp6().ip6_payload_length(999), udp6().udp_zero_csum(),
		udp6().ip6_dst(ip6_doc(77)),
		with([](Spec &s) { s.l3 = L3::ipv6; s.ip6_hop_by_hop = true; }),
		with([](Spec &s) { s.l3 = L3::none; s.ethertype = 0x88cc; }),
		// multicast and broadcast: joined, not joined, per port,
		// directed and limited broadcast, with and without a socket
		mc4(ip4(239, 1, 1, 1), 2000), mc4(ip4(239, 1, 1, 1), 3000),
		mc4(ip4(239, 9, 9, 9), 2000), mc4(ip4(224, 0, 0, 1), 3000),
		mc4(ip4(239, 2, 2, 2), 2000), mc4(ip4(239, 1, 1, 1), 3000).l4_corrupt_csum(),
		bc4(ip4(10, 0, 0, 255), 3000), bc4(0xffffffff, 2000),
		bc4(0xffffffff, 3000).l4_corrupt_csum(),
		mc6(ip6({0xff05, 0, 0, 0, 0, 0, 0, 1}), 3000),
		mc6(ip6({0xff05, 0, 0, 0, 0, 0, 0, 2}), 2000),
		mc6(ip6({0xff02, 0, 0, 0, 0, 1, 0xff00, 2}), 2000),
		// extension headers
		ip6_insert_ext(udp6(), 60, ip6_ext(17, {1, 4, 0, 0, 0, 0})),
		ip6_insert_ext(udp6(), 60, ip6_ext(17, {0x9e, 2, 0, 0, 1, 0})),
		ip6_insert_ext(udp6(), 43, ip6_ext(17, {0, 0, 0, 0, 0, 0})),
		ip6_insert_ext(udp6(), 43, ip6_ext(17, {2, 0, 0, 0, 0, 0})),
		udp6().ip6_next_header(59),
		// replies (reply.c): echo and timestamp, unreachables, parameter
		// problems, resets and SYN-ACKs, rate limited by the poll clock
		with([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 13; s.payload.assign(12, 1); }),
		with([](Spec &s) { s.l3 = L3::ipv6; s.l4 = L4::icmp; s.icmp_type = 128; }),
		with([](Spec &s) { s.l4 = L4::tcp; s.tcp_flags = TCP_SYN; s.dport = 2000;
				   s.tcp_options = {2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0,
						    1, 3, 3, 7}; }),
		tcp4(TCP_SYN, 1, 81), tcp4(TCP_ACK, 1, 81), udp6(1, 3000),
		udp6().ip6_next_header(253),
		with([](Spec &s) { s.ip4_options = {7, 2, 0, 1}; }),
		with([](Spec &s) { s.ip4_options = {131, 7, 4, 10, 0, 0, 2}; }),
		ip6_insert_ext(udp6(), 0, ip6_ext(17, {0x9e, 2, 0, 0, 1, 0})),
		ip6_insert_ext(udp6(), 0, ip6_ext(17, {1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})),
		// VLAN: priority tags, a device, none
		with([](Spec &s) { s.vlans = {0}; }),
		with([](Spec &s) { s.vlans = {0, 5}; }),
		with([](Spec &s) { s.vlans = {9}; s.dport = 3000; }),
	};
}

using Keys = std::vector<std::pair<std::string, std::string>>;

using Run = lrx_test::EngineRun;

Run run(lrx_engine_kind engine, unsigned k, uint16_t burst,
	const std::vector<Keys> &stage_keys,
	const std::vector<uint16_t> &frame_ids, const std::vector<Frame> &frames,
	const std::vector<uint16_t> &polls)
{
	Run r = lrx_test::run_engine(
		engine, k, burst,
		{{"build-meta", stage_keys[0]}, {"l3-demux", stage_keys[1]}},
		[&](size_t at) { return frames[frame_ids[at]].to_mbuf(pool()); },
		polls);
	// how a run went, not what it gave: these differ by engine
	lrx_test::erase_l3_split_counters(r);
	r.counters[0].erase("pool_wraps");
	return r;
}

// Random polls of up to burst packets (total of them, frames picked at
// random, frame 0 one time in four) through every engine: the same
// output, stats and counters as the packet engine's, which it returns.
Run same_in_every_engine(const std::vector<Keys> &config,
			 const std::vector<Frame> &frames, uint16_t burst,
			 size_t want, std::mt19937 &rng)
{
	std::vector<uint16_t> polls;
	size_t total = 0;
	while (total < want) {
		uint16_t n = (uint16_t)(1 + rng() % burst);
		polls.push_back(n);
		total += n;
	}
	std::vector<uint16_t> ids(total);
	for (auto &id : ids)
		id = (uint16_t)(rng() % 4 == 0 ? 0 : rng() % frames.size());

	lrx_test::engine_prefetch = 0; // the reference: prefetch off
	Run ref = run(LRX_ENGINE_PACKET, 0, burst, config, ids, frames, polls);
	// every packet ends in one fate: in the sink (a fragment
	// discarded with its queue as a drop), or chained into a
	// reassembled datagram (l3-demux's merged); none held at the end
	REQUIRE(ref.out.size() + ref.counters[1]["merged"] == total);
	lrx_test::for_each_engine(2, [&](lrx_engine_kind kind, unsigned k) {
		lrx_test::require_same_run(
			run(kind, k, burst, config, ids, frames, polls), ref);
	});
	return ref;
}

} // namespace

TEST_CASE("build-meta,l3-demux give identical results under every engine",
	  "[l3_demux][equivalence]")
{
	pool(); // EAL first
	const std::vector<Frame> frames = mixed_frames();
	std::mt19937 rng(2026);
	const std::vector<std::vector<Keys>> configs = {
		// the ICMP rate limits count polls: the same in every engine
		{{{"placement", "pool"}, {"alloc", "bulk"}, {"clear", "bulk"},
		  {"host_mac", "02:00:00:00:00:02"}, {"vlans", "9"}},
		 {{"local_ipv4", "10.0.0.2/24"}, {"local_ipv6", "2001:db8::2/64"},
		  {"mcast_groups", "239.1.1.1,ff05::1,239.2.2.2%1"},
		  {"udp_ports", "2000,5000-5010"}, {"tcp_ports", "2000"},
		  {"arp_ip", "10.0.0.2"}, {"arp_mac", "02:00:00:00:00:02"},
		  {"icmp_clock", "polls"}, {"icmp_ratelimit", "3"},
		  {"icmp_msgs_burst", "20"}, {"accept_source_route", "yes"}}},
		{{{"placement", "pool"}, {"alloc", "packet"}, {"clear", "none"},
		  {"hints", "hash,vlan"}},
		 {{"dispatch", "direct"}, {"route_hint", "no"},
		  {"trust_ip_csum_hint", "no"}, {"list_split", "runs"},
		  {"icmp_clock", "polls"}}},
		{{}, {{"list_split", "gather"}, {"local_ipv4", "10.0.0.2/24"},
		      {"icmp_clock", "polls"}, {"tcp_ports", "2000"}}},
		// UDP sockets (docs/sockets.md): small receive buffers, so
		// that some datagrams drop SOCKET_RCVBUFF; a reader of 3 per
		// socket per poll, then one that reads only at the run's end
		{{{"host_mac", "02:00:00:00:00:02"}, {"vlans", "9"}},
		 {{"local_ipv4", "10.0.0.2/24"}, {"local_ipv6", "2001:db8::2/64"},
		  {"mcast_groups", "239.1.1.1,ff05::1,239.2.2.2%1"},
		  {"udp_sockets", "10.0.0.2:2000:1,*:3000,[::]:2000:2000,"
				  "[2001:db8::2]:3000"},
		  {"udp_truesize", "1000"}, {"udp_read_batch", "3"},
		  {"icmp_clock", "polls"}}},
		{{}, {{"list_split", "gather"}, {"udp_sockets", "*:2000,[::]:3000"},
		      {"udp_rcvbuf", "20000"}, {"udp_reader", "none"},
		      {"icmp_clock", "polls"}}},
	};
	for (size_t ci = 0; ci < configs.size(); ci++) {
		const uint16_t burst = ci == 0 || ci == 3 ? 32 : 7;
		INFO("config " << ci);
		Run ref = same_in_every_engine(configs[ci], frames, burst, 3000, rng);
		CHECK(ref.counters[1]["IpInReceives"] > 0);
		CHECK(ref.counters[1]["Ip6InHdrErrors"] > 0);
		CHECK(ref.counters[1]["IpExtInMcastPkts"] > 0);
		CHECK(ref.counters[1]["IpExtInBcastPkts"] > 0);
		CHECK(ref.counters[1]["Ip6InMcastPkts"] > 0);
		if (ci == 0) { // some ports without a socket
			CHECK(ref.counters[1]["UdpIgnoredMulti"] > 0);
			CHECK(ref.counters[1]["Udp6IgnoredMulti"] > 0);
		}
		if (ci >= 3) { // sockets: read, full, and none on the port
			CHECK(ref.counters[1]["UdpInDatagrams"] > 0);
			CHECK(ref.counters[1]["Udp6InDatagrams"] > 0);
			CHECK(ref.counters[1]["UdpRcvbufErrors"] > 0);
			CHECK(ref.counters[1]["UdpNoPorts"] > 0);
			CHECK(ref.stats[1].drops[LRX_DROP_SOCKET_RCVBUFF] ==
			      ref.counters[1]["UdpRcvbufErrors"] +
				      ref.counters[1]["Udp6RcvbufErrors"]);
			// what the sockets queued left delivered, when read
			CHECK(ref.stats[1].consumed - ref.counters[1]["merged"] >=
			      ref.counters[1]["UdpInDatagrams"] +
				      ref.counters[1]["Udp6InDatagrams"]);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

// The list entries' loop (stages/prefetch.h, lrx_list_loop) at lists of
// every length modulo 4, what an unrolled loop (VPP's quad loop: four
// packets per round, then the rest one by one) gets wrong first: lists of
// each length, through the whole kernel pipeline (xdp, build-meta,
// gro, l3-demux), give what the per-packet engine gives, in the same sink
// order. The input mixes the malformed and special frames above with
// segments of three TCP flows that GRO merges and holds across polls.
// XDP passes everything (its drops before GRO are the one case where the
// vector engines' sink order may differ: docs/engines.md; xdp's own test
// covers its verdicts at every list length).
TEST_CASE("the kernel pipeline gives identical results for lists of any "
	  "length modulo 4", "[l3_demux][equivalence]")
{
	pool(); // EAL first
	const std::vector<Frame> singles = mixed_frames();
	std::mt19937 rng(4);
	const uint16_t burst = 128;
	const uint16_t sizes[] = {1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 13, 31,
				  33, 63, 65, 66, 67, 127, 128};
	std::vector<uint16_t> polls;
	size_t total = 0;
	for (unsigned round = 0; round < 3; round++)
		for (uint16_t n : sizes) {
			polls.push_back(n);
			total += n;
		}
	std::shuffle(polls.begin(), polls.end(), rng);
	// one frame per packet: a TCP segment of one of three flows (next
	// sequence number, ID + 1: mergeable) or one of the single frames
	std::vector<Frame> frames;
	uint32_t seq[3] = {1, 1, 1};
	uint16_t ip_id[3] = {1, 1, 1};
	for (size_t i = 0; i < total; i++) {
		if (rng() % 2) {
			frames.push_back(singles[rng() % singles.size()]);
			continue;
		}
		const unsigned f = rng() % 3;
		Spec s;
		s.l4 = L4::tcp;
		s.sport = (uint16_t)(4000 + f);
		s.seq = seq[f];
		s.ip_id = ip_id[f]++;
		s.payload.assign(100, (uint8_t)f);
		seq[f] += 100;
		frames.push_back(build(s));
	}
	std::vector<uint16_t> ids(total);
	for (size_t i = 0; i < total; i++)
		ids[i] = (uint16_t)i;
	const Keys l3_keys = {{"local_ipv4", "10.0.0.2/24"},
			      {"local_ipv6", "2001:db8::2/64"},
			      {"tcp_ports", "2000"}, {"icmp_clock", "polls"}};
	auto run_kernel = [&](lrx_engine_kind kind, unsigned k) {
		Run r = lrx_test::run_engine(
			kind, k, burst,
			{{"xdp", {}},
			 {"build-meta", {}},
			 {"gro", {{"clock", "polls"}}},
			 {"l3-demux", l3_keys}},
			[&](size_t at) { return frames[ids[at]].to_mbuf(pool()); },
			polls);
		lrx_test::erase_l3_split_counters(r);
		return r;
	};
	lrx_test::engine_prefetch = 0; // the reference: prefetch off
	const Run ref = run_kernel(LRX_ENGINE_PACKET, 0);
	// the input does what it is for: GRO merges, l3-demux delivers and
	// drops
	CHECK(ref.stats[2].consumed > 0);
	CHECK(ref.out.size() < total);
	CHECK(ref.stats[3].delivered > 0);
	CHECK(ref.counters[3].at("IpInHdrErrors") > 0);
	lrx_test::for_each_engine(3, [&](lrx_engine_kind kind, unsigned k) {
		lrx_test::require_same_run(run_kernel(kind, k), ref);
	});
	LRX_REQUIRE_POOL_FULL(pool());
}

// TCP flows through the established table (key tcp_ehash): SYNs, their
// retransmissions and ACKs, data of flows that opened earlier, ports
// without a listener, IPv4 and IPv6, and tables small enough to fill.
TEST_CASE("build-meta,l3-demux with tcp_ehash: identical results under every "
	  "engine", "[l3_demux][equivalence][sockets]")
{
	pool(); // EAL first
	std::vector<Frame> frames = {udp4(), udp6()};
	for (uint16_t sport = 1000; sport < 1012; sport++)
		for (bool v6 : {false, true})
			for (uint8_t flags : {(uint8_t)TCP_SYN, (uint8_t)TCP_ACK,
					      (uint8_t)(TCP_ACK | TCP_PSH)})
				frames.push_back(with([&](Spec &s) {
					s.l3 = v6 ? L3::ipv6 : L3::ipv4;
					s.l4 = L4::tcp;
					s.tcp_flags = flags;
					s.sport = sport;
					s.dport = sport % 5 == 0 ? 22 : 2000; // no listener on 22
				}));
	frames.push_back(tcp4().l4_corrupt_csum());
	frames.push_back(with([](Spec &s) { s.l4 = L4::tcp; s.ip4_dst = ip4(10, 0, 0, 255); }));
	std::mt19937 rng(36);
	for (const char *buckets : {"2", "4", "1024"}) {
		INFO("tcp_ehash " << buckets);
		const unsigned n = (unsigned)std::stoul(buckets);
		const bool tiny = n < 9;
		const std::vector<Keys> config = {
			{{"host_mac", "02:00:00:00:00:02"}},
			{{"local_ipv4", "10.0.0.2/24"}, {"local_ipv6", "2001:db8::2/64"},
			 {"tcp_ports", "2000"}, {"tcp_ehash", buckets},
			 {"list_split", n == 4 ? "runs" : "gather"},
			 // the tiny tables' resets dropped, to count the drops
			 {"tcp_rst", tiny ? "none" : "send"}, {"icmp_clock", "polls"}}};
		const Run ref = same_in_every_engine(config, frames, 32, 1500, rng);
		const auto &c = ref.counters[1];
		CHECK(c.at("tcp_ehash_hits") > 0);
		CHECK(c.at("tcp_ehash_inserted") > 0);
		CHECK(c.at("tcp_no_socket") > 0);
		// 9 tuples to the listener per family: 2 and 4 buckets fill
		// (with 2 and the list path's families apart, one table for
		// both would fill in another order: the engines would differ)
		if (tiny) {
			CHECK(c.at("tcp_ehash_inserted") == 2 * n);
			CHECK(c.at("TcpExtTCPReqQFullDoCookies") > 0);
			CHECK(c.at("TcpExtListenOverflows") > 0);
			CHECK(c.at("tcp_ehash_full") == c.at("TcpExtTCPReqQFullDoCookies") +
								 c.at("TcpExtListenOverflows"));
			CHECK(ref.stats[1].drops[LRX_DROP_NO_SOCKET] ==
			      c.at("tcp_no_socket") + c.at("TcpExtListenOverflows"));
		} else {
			CHECK(c.at("tcp_ehash_inserted") == 18);
			CHECK(c.at("tcp_ehash_full") == 0);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

// LAND: frames whose source is one of the host's own addresses
// (fib_validate_source's inet_lookup_ifaddr_rcu) are martian sources for
// a local destination (RTN_LOCAL) and a broadcast (brd_input), in_martian_src
// and IP_LOCAL_SOURCE, and for a joined group (ip_mc_validate_source)
// IP_LOCAL_SOURCE alone: no echo reply, SYN-ACK or port unreachable goes
// back to the host itself, under every engine. Each LAND frame follows a
// good one to the same destination, so that the route hint (reused in a
// burst) would carry it past the check if it skipped it. accept_local=yes
// lets them through, as net.ipv4.conf.all.accept_local=1.
TEST_CASE("LAND frames (source a local address) are dropped IP_LOCAL_SOURCE "
	  "with no reply under every engine", "[l3_demux][equivalence][land]")
{
	pool(); // EAL first
	const uint32_t self = ip4(10, 0, 0, 2);
	auto land = [&](Frame f) { return f.ip4_src(self); };
	Frame echo = with([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 8; });
	Frame syn = tcp4(TCP_SYN, 1000, 2000);       // a listening port
	Frame closed = udp4(1000, 3000);              // no socket
	Frame lbcast = bc4(0xffffffff, 3000), dbcast = bc4(ip4(10, 0, 0, 255), 3000);
	Frame group = mc4(ip4(239, 1, 1, 1), 2000);
	// pairs: a good frame, then the same from the host's own address
	const std::vector<Frame> frames = {
		echo, land(echo), syn, land(syn), closed, land(closed),
		lbcast, land(lbcast), dbcast, land(dbcast), group, land(group),
		udp4().ip4_src(ip4(10, 0, 0, 3)), // a neighbour: not LAND
	};
	const size_t n_land = 6, n_martian = 5; // the group: no in_martian_src
	std::vector<uint16_t> ids(frames.size());
	for (size_t i = 0; i < ids.size(); i++)
		ids[i] = (uint16_t)i;
	const Keys bm = {{"host_mac", "02:00:00:00:00:02"}};
	Keys l3 = {{"local_ipv4", "10.0.0.2/24"}, {"mcast_groups", "239.1.1.1"},
		   {"udp_ports", "2000"}, {"tcp_ports", "2000"},
		   {"icmp_clock", "polls"}};
	for (uint16_t burst : {1, 4, 32}) {
		INFO("burst " << burst);
		std::vector<uint16_t> polls;
		for (size_t done = 0; done < frames.size(); done += burst)
			polls.push_back((uint16_t)std::min<size_t>(burst, frames.size() - done));
		lrx_test::engine_prefetch = 0;
		Run ref = run(LRX_ENGINE_PACKET, 0, burst, {bm, l3}, ids, frames, polls);
		REQUIRE(ref.out.size() == frames.size());
		size_t replies = 0;
		for (size_t i = 0; i < frames.size(); i++) {
			INFO("frame " << i);
			const bool is_land = i % 2 == 1 && i < 2 * n_land;
			const bool tx = lrx_next_kind(ref.out[i].first) == LRX_NEXT_TX;
			replies += tx;
			if (is_land)
				CHECK(ref.out[i].first == lrx_next_drop(LRX_DROP_IP_LOCAL_SOURCE));
			else
				CHECK(ref.out[i].first != lrx_next_drop(LRX_DROP_IP_LOCAL_SOURCE));
		}
		// the good echo, SYN and closed port each got their reply
		CHECK(replies == 3);
		CHECK(ref.stats[1].drops[LRX_DROP_IP_LOCAL_SOURCE] == n_land);
		CHECK(ref.counters[1]["in_martian_src"] == n_martian);
		lrx_test::for_each_engine(2, [&](lrx_engine_kind kind, unsigned k) {
			lrx_test::require_same_run(
				run(kind, k, burst, {bm, l3}, ids, frames, polls), ref);
		});
	}
	// accept_local=yes: the LAND echo, SYN and closed port are answered
	l3.emplace_back("accept_local", "yes");
	Run acc = run(LRX_ENGINE_BURST, 1, 32, {bm, l3}, ids, frames,
		      {(uint16_t)frames.size()});
	size_t replies = 0;
	for (auto &o : acc.out)
		replies += lrx_next_kind(o.first) == LRX_NEXT_TX;
	CHECK(replies == 6);
	CHECK(acc.stats[1].drops[LRX_DROP_IP_LOCAL_SOURCE] == 0);
	CHECK(acc.counters[1]["in_martian_src"] == 0);
	LRX_REQUIRE_POOL_FULL(pool());
}

// rp_filter: the route back to each source (ipv4_routes: 10.9.0.0/24 by
// port 1, 10.8.0.0/16 by port 0; the frames come in on port 0) decides,
// for a local destination, a broadcast and a joined group alike; each
// filtered frame follows a good one to the same destination, so that the
// route hint would carry it past the check if it skipped it. Strict
// refuses 10.9.0.5 and 10.7.0.5 (no route), loose only 10.7.0.5.
TEST_CASE("rp_filter strict and loose give the same verdicts and counters "
	  "under every engine", "[l3_demux][equivalence][rp_filter]")
{
	pool(); // EAL first
	const uint32_t nine = ip4(10, 9, 0, 5), eight = ip4(10, 8, 0, 5),
		       seven = ip4(10, 7, 0, 5);
	Frame echo = with([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 8; });
	Frame closed = udp4(1000, 3000);
	Frame lbcast = bc4(0xffffffff, 3000), group = mc4(ip4(239, 1, 1, 1), 2000);
	auto from = [](uint32_t src, Frame f) { return f.ip4_src(src); };
	const std::vector<Frame> frames = {
		echo, from(nine, echo), from(eight, echo), from(seven, echo),
		closed, from(nine, closed), from(seven, closed),
		lbcast, from(nine, lbcast), group, from(nine, group),
		from(seven, group), from(ip4(10, 0, 0, 2), echo),
	};
	std::vector<uint16_t> ids(frames.size());
	for (size_t i = 0; i < ids.size(); i++)
		ids[i] = (uint16_t)i;
	const Keys bm = {{"host_mac", "02:00:00:00:00:02"}};
	struct Mode {
		const char *rp_filter;
		uint64_t refused, martian_src;
	};
	// strict: the four from 10.9.0.5 and the three from 10.7.0.5, loose
	// those three; in_martian_src all but the groups', and LAND
	for (Mode mode : {Mode{"1", 7, 6}, Mode{"2", 3, 3}}) {
		INFO("rp_filter " << mode.rp_filter);
		const Keys l3 = {{"local_ipv4", "10.0.0.2/24"}, {"mcast_groups", "239.1.1.1"},
				 {"udp_ports", "2000"}, {"icmp_clock", "polls"},
				 {"ipv4_routes", "10.9.0.0/24%1+10.8.0.0/16%0"},
				 {"rp_filter", mode.rp_filter}};
		for (uint16_t burst : {1, 4, 32}) {
			INFO("burst " << burst);
			std::vector<uint16_t> polls;
			for (size_t done = 0; done < frames.size(); done += burst)
				polls.push_back((uint16_t)std::min<size_t>(burst, frames.size() - done));
			lrx_test::engine_prefetch = 0;
			Run ref = run(LRX_ENGINE_PACKET, 0, burst, {bm, l3}, ids, frames, polls);
			REQUIRE(ref.out.size() == frames.size());
			CHECK(ref.stats[1].drops[LRX_DROP_IP_RPFILTER] == mode.refused);
			CHECK(ref.counters[1]["TcpExtIPReversePathFilter"] == mode.refused);
			CHECK(ref.counters[1]["in_martian_src"] == mode.martian_src);
			CHECK(ref.stats[1].drops[LRX_DROP_IP_LOCAL_SOURCE] == 1);
			lrx_test::for_each_engine(2, [&](lrx_engine_kind kind, unsigned k) {
				lrx_test::require_same_run(
					run(kind, k, burst, {bm, l3}, ids, frames, polls), ref);
			});
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

// ICMP errors quoting datagrams with and without a socket (InErrors from
// the protocols' error handlers) and replies to sources without a route
// back (ipv4_routes / ipv6_routes = subnets) beside ones with a route:
// the same verdicts, replies and counters under every engine, with and
// without tcp_ehash.
TEST_CASE("ICMP errors without a socket and replies without a route give "
	  "the same results under every engine", "[l3_demux][equivalence][route]")
{
	pool(); // EAL first
	const uint32_t off4 = ip4(10, 7, 0, 5);
	const Ip6 off6 = ip6({0x2001, 0xdb9, 0, 0, 0, 0, 0, 5});
	Frame echo4 = with([](Spec &s) { s.l4 = L4::icmp; });
	Frame echo6 = with([](Spec &s) {
		s.l3 = L3::ipv6;
		s.l4 = L4::icmp;
	});
	const std::vector<Frame> frames = {
		icmp_error(false, 3, 3, L4::udp, 4444), icmp_error(false, 3, 3, L4::udp, 2000),
		icmp_error(false, 11, 0, L4::tcp, 4444), icmp_error(false, 3, 1, L4::tcp, 5201),
		icmp_error(true, 1, 4, L4::udp, 4444), icmp_error(true, 1, 4, L4::udp, 2000),
		icmp_error(true, 3, 0, L4::tcp, 4444),
		udp4(1000, 3000).ip4_src(off4).l4_fix_csum(), udp4(1000, 3000),
		Frame(echo4).ip4_src(off4).l4_fix_csum(), echo4,
		tcp4(TCP_SYN, 1000, 2001).ip4_src(off4).l4_fix_csum(),
		udp6(1000, 3000).ip6_src(off6).l4_fix_csum(), udp6(1000, 3000),
		Frame(echo6).ip6_src(off6).l4_fix_csum(), echo6,
		with([&](Spec &s) {
			s.l3 = L3::ipv6;
			s.l4 = L4::tcp;
			s.tcp_flags = TCP_SYN;
			s.dport = 2001;
			s.ip6_src = off6;
		}),
	};
	std::vector<uint16_t> ids(frames.size());
	for (size_t i = 0; i < ids.size(); i++)
		ids[i] = (uint16_t)i;
	const Keys bm = {{"host_mac", "02:00:00:00:00:02"}};
	for (const char *ehash : {"0", "1024"}) {
		INFO("tcp_ehash " << ehash);
		const Keys l3 = {{"local_ipv4", "10.0.0.2/24"}, {"local_ipv6", "2001:db8::2/64"},
				 {"udp_ports", "2000"}, {"tcp_ports", "5201"},
				 {"tcp_ehash", ehash}, {"icmp_clock", "polls"},
				 {"icmp_ratelimit", "0"}, {"icmpv6_ratelimit", "0"},
				 {"ipv4_routes", "subnets"}, {"ipv6_routes", "subnets"}};
		for (uint16_t burst : {1, 4, 32}) {
			INFO("burst " << burst);
			std::vector<uint16_t> polls;
			for (size_t done = 0; done < frames.size(); done += burst)
				polls.push_back((uint16_t)std::min<size_t>(burst, frames.size() - done));
			lrx_test::engine_prefetch = 0;
			Run ref = run(LRX_ENGINE_PACKET, 0, burst, {bm, l3}, ids, frames, polls);
			REQUIRE(ref.out.size() == frames.size());
			size_t replies = 0;
			for (auto &o : ref.out)
				replies += lrx_next_kind(o.first) == LRX_NEXT_TX;
			CHECK(replies == 4); // the on-link UDP and echo of each family
			// tcp_ehash: the listener's port holds no connection
			CHECK(ref.counters[1]["IcmpInErrors"] == (ehash[0] == '0' ? 2u : 3u));
			CHECK(ref.counters[1]["Icmp6InErrors"] == 2);
			CHECK(ref.counters[1]["Ip6OutNoRoutes"] == 3);
			CHECK(ref.counters[1]["TcpOutRsts"] == 1);
			lrx_test::for_each_engine(2, [&](lrx_engine_kind kind, unsigned k) {
				lrx_test::require_same_run(
					run(kind, k, burst, {bm, l3}, ids, frames, polls), ref);
			});
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}
