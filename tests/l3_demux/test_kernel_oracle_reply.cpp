// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for what the receive path sends back and for the checks
// that decide it: frames replayed into a veth whose peer lives in a fresh
// network namespace (netns_oracle.h: 10.0.0.2/24, 2001:db8::2/64, MAC
// 02:00:00:00:00:02, the sender 10.0.0.1 / 2001:db8::1 a static
// neighbour, a TCP listener on 5201, no UDP socket) one at a time, each
// frame's reply read on the outer end; then through build-meta,l3-demux
// configured alike under every engine. The replies must be the kernel's
// byte for byte but for what the kernel draws from a secret (IP ID, IPv6
// flow label, a SYN-ACK's sequence number and timestamp, a timestamp
// reply's clock), and the nstat counters equal: ICMP and TCP replies,
// IPv4 options, IPv6 hop-by-hop and destination options, the per-peer
// ICMP rate limit, VLAN tags with no VLAN device (this kernel has no
// 802.1Q devices: CONFIG_VLAN_8021Q is off here, and a tagged packet for
// a device cannot be compared). Needs root; skips with a printed reason
// otherwise.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "engine_run.h"
#include "oracle_reply.h"
#include "frames.h"
#include "netns_oracle.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;
using namespace lrx_test::oracle;

namespace {

Frame v4opt(const std::vector<uint8_t> &opts, uint32_t dst = ip4(10, 0, 0, 2),
	    L4 l4 = L4::udp, uint8_t icmp_type = 0)
{
	return with([&](Spec &s) {
		s.ip4_options = opts;
		s.ip4_dst = dst;
		s.dport = 3000;
		s.l4 = l4;
		s.icmp_type = icmp_type;
		if (dst == ip4(10, 0, 0, 255))
			s.dst = mac_broadcast;
	});
}

Frame hbh(const std::vector<uint8_t> &body)
{
	return ip6_insert_ext(udp6(1000, 3000), 0, ip6_ext(17, body));
}

Frame dst6(const std::vector<uint8_t> &body)
{
	return ip6_insert_ext(udp6(1000, 3000), 60, ip6_ext(17, body));
}

std::vector<Named> reply_frames()
{
	const Ip6 ff02_1 = ip6({0xff02, 0, 0, 0, 0, 0, 0, 1});
	const std::vector<uint8_t> all_opts = {2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1,
					       0, 0, 0, 0, 1, 3, 3, 7};
	Frame udp_tos = udp4(1000, 3000);
	udp_tos.set_u8(udp_tos.l2_len + 1, 0xff).ip4_fix_csum();
	Frame big4 = with([](Spec &s) { s.dport = 3000; s.payload.assign(1000, 0x7a); });
	Frame big6 = with([](Spec &s) {
		s.l3 = L3::ipv6; s.dport = 3000; s.payload.assign(1400, 0x7a); });
	Frame ts = icmp4(13, 12);
	ts.set_be32(ts.l4_off + 8, 0x01020304).l4_fix_csum();
	Frame echo6 = with([](Spec &s) { s.l3 = L3::ipv6; s.l4 = L4::icmp; s.icmp_type = 128; });
	echo6.set_u8(echo6.l2_len, 0x61).set_u8(echo6.l2_len + 1, 0x00); // class 0x10
	Frame echo6_mc = with([&](Spec &s) {
		s.l3 = L3::ipv6; s.l4 = L4::icmp; s.icmp_type = 128;
		s.ip6_dst = ff02_1; s.dst = {0x33, 0x33, 0, 0, 0, 1}; });
	Frame syn6_tc = tcp(true, TCP_SYN, 81);
	syn6_tc.set_u8(syn6_tc.l2_len, 0x62).set_u8(syn6_tc.l2_len + 1, 0x80);
	Frame dst10_mc = dst6({0x9e, 2, 0, 0, 1, 0});
	dst10_mc.ip6_dst(ff02_1).set_u8(0, 0x33).set_u8(1, 0x33).set_u8(2, 0).set_u8(3, 0)
		.set_u8(4, 0).set_u8(5, 1);
	return {
		// ---- ICMP errors (icmp_send, icmp6_send)
		{"udp to a closed port, TOS 0xff", udp_tos},
		{"udp to a closed port, 1000 bytes", big4},
		{"protocol 253", udp4().ip4_proto(253)},
		{"udp6 to a closed port", udp6(1000, 3000)},
		{"udp6 to a closed port, 1400 bytes", big6},
		{"next header 253", udp6().ip6_next_header(253)},
		{"next header 253 after destination options",
		 ip6_insert_ext(udp6(), 60, ip6_ext(253, {1, 4, 0, 0, 0, 0}))},
		{"udp to the directed broadcast (none)",
		 with([](Spec &s) { s.dst = mac_broadcast; s.ip4_dst = ip4(10, 0, 0, 255);
				    s.dport = 3000; })},
		{"ICMP destination unreachable (none)", icmp4(3, 28)},
		// ---- echo and timestamp (icmp_echo, icmp_timestamp,
		// icmpv6_echo_reply)
		{"echo, TOS 0x10", icmp4(8, 20, 0x10)},
		{"echo with code 5", icmp4(8, 20, 0, 5)},
		{"echo to the directed broadcast (none)",
		 with([](Spec &s) { s.dst = mac_broadcast; s.ip4_dst = ip4(10, 0, 0, 255);
				    s.l4 = L4::icmp; s.icmp_type = 8; })},
		{"timestamp", ts},
		{"timestamp of 3 bytes", icmp4(13, 3)},
		{"timestamp of 30 bytes", icmp4(13, 30)},
		{"echo6, class 0x10", echo6},
		{"echo6 to ff02::1", echo6_mc},
		// ---- IPv4 options (ip_options_compile, ip_rcv_options)
		{"record route length 2", v4opt({7, 2, 0, 1})},
		{"record route pointer 3 after a NOP", v4opt({1, 7, 7, 3, 0, 0, 0, 0})},
		{"record route pointer 5", v4opt({7, 7, 5, 0, 0, 0, 0, 1})},
		{"two record routes", v4opt({7, 3, 4, 7, 3, 4, 1, 1})},
		{"timestamp option length 3", v4opt({68, 3, 5, 0})},
		{"timestamp option pointer 4", v4opt({68, 8, 4, 0, 0, 0, 0, 0})},
		{"timestamp with addresses, short", v4opt({68, 8, 5, 1, 0, 0, 0, 0})},
		{"timestamp full, overflow 15", v4opt({68, 8, 9, 0xf0, 0, 0, 0, 0})},
		{"router alert length 2", v4opt({148, 2, 1, 1})},
		{"an option of length 1", v4opt({0x99, 1, 0, 0})},
		{"an option longer than the rest", v4opt({0x99, 6, 0, 0})},
		{"a last byte with no length", v4opt({1, 1, 1, 0x99})},
		{"loose source route (accept_source_route off)",
		 v4opt({131, 7, 4, 10, 0, 0, 9, 1})},
		{"strict source route (accept_source_route off)",
		 v4opt({137, 7, 4, 10, 0, 0, 9, 1})},
		{"loose source route pointer 3", v4opt({131, 7, 3, 10, 0, 0, 9, 1})},
		{"two loose source routes", v4opt({131, 3, 4, 131, 3, 4, 1, 1})},
		{"CIPSO", v4opt({134, 6, 0, 0, 0, 1, 1, 1})},
		{"bad option to another host", v4opt({7, 2, 0, 1}, ip4(10, 0, 0, 7))},
		{"bad option to another subnet", v4opt({7, 2, 0, 1}, ip4(10, 9, 0, 1))},
		{"bad option to the broadcast", v4opt({7, 2, 0, 1}, ip4(10, 0, 0, 255))},
		{"bad option, TOS 0xff", [] {
			 Frame f = v4opt({7, 2, 0, 1});
			 return f.set_u8(f.l2_len + 1, 0xff).ip4_fix_csum(); }()},
		{"bad option on an ICMP error (none)", v4opt({7, 2, 0, 1}, ip4(10, 0, 0, 2),
							    L4::icmp, 3)},
		// valid options on a packet with no reply (an echo reply)
		{"valid options: NOPs, record route, timestamps, router alert",
		 v4opt({1, 1, 7, 7, 4, 0, 0, 0, 0, 68, 8, 9, 0x30, 0, 0, 0, 0, 148, 4, 0, 0, 0x99, 4, 0, 0},
		       ip4(10, 0, 0, 2), L4::icmp, 0)},
		{"timestamp flag 5 (unknown)", v4opt({68, 8, 5, 5, 0, 0, 0, 0}, ip4(10, 0, 0, 2),
						     L4::icmp, 0)},
		// ---- IPv6 hop-by-hop (ipv6_parse_hopopts) and destination
		// options (ip6_parse_tlv), routing headers
		{"hbh PadN", hbh({1, 4, 0, 0, 0, 0})},
		{"hbh 8 bytes of padding", hbh({1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})},
		{"hbh PadN data not zero", hbh({1, 4, 0, 1, 0, 0})},
		{"hbh unknown 00", hbh({0x1e, 2, 0, 0, 1, 0})},
		{"hbh unknown 01", hbh({0x5e, 2, 0, 0, 1, 0})},
		{"hbh unknown 10", hbh({0x9e, 2, 0, 0, 1, 0})},
		{"hbh unknown 11", hbh({0xde, 2, 0, 0, 1, 0})},
		{"hbh 9 options", hbh({0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e, 0, 0x1e, 0,
				       0x1e, 0, 0x1e, 0, 0x1e, 0, 1, 2, 0, 0})},
		{"hbh router alert", hbh({5, 2, 0, 0, 1, 0})},
		{"hbh router alert length 3", hbh({5, 3, 0, 0, 0, 0})},
		{"hbh IOAM at 42", hbh({0x31, 4, 0, 0, 0, 0})},
		{"hbh IOAM at 44", hbh({0, 0, 0x31, 2, 0, 0})},
		{"hbh jumbo at 44", hbh({1, 0, 0xc2, 4, 0, 1, 0, 0, 1, 2, 0, 0, 0, 0})},
		{"hbh jumbo of 40 bytes, payload length 0",
		 hbh({0xc2, 4, 0, 0, 0, 40}).ip6_payload_length(0)},
		{"hbh jumbo of 65536 bytes, payload length 0",
		 hbh({0xc2, 4, 0, 1, 0, 0}).ip6_payload_length(0)},
		{"hbh jumbo of 65536 bytes, payload length set", hbh({0xc2, 4, 0, 1, 0, 0})},
		{"hbh PadN, payload length 0", hbh({1, 4, 0, 0, 0, 0}).ip6_payload_length(0)},
		{"hbh CALIPSO short", hbh({7, 4, 0, 0, 0, 0})},
		{"hbh CALIPSO", hbh({7, 8, 0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 0, 0})},
		{"dstopts unknown 10", dst6({0x9e, 2, 0, 0, 1, 0})},
		{"dstopts unknown 11", dst6({0xde, 2, 0, 0, 1, 0})},
		{"dstopts unknown 10 to ff02::1", dst10_mc},
		{"routing type 0, segments left 1",
		 ip6_insert_ext(udp6(1000, 3000), 43, ip6_ext(17, {0, 1, 0, 0, 0, 0}))},
		// ---- TCP resets (tcp_v4_send_reset, tcp_v6_send_reset)
		{"SYN to a closed port, TOS 0x28", tcp(false, TCP_SYN, 81, {}, 0, 0x28)},
		{"ACK with data to a closed port", tcp(false, TCP_ACK | TCP_PSH, 81, {}, 10)},
		{"FIN with data to a closed port", tcp(false, TCP_FIN, 81, {}, 10)},
		{"RST to a closed port (none)", tcp(false, TCP_RST, 81)},
		{"SYN with data to a closed port", tcp(false, TCP_SYN, 81, {}, 7)},
		{"SYN6 to a closed port, class 0x28", syn6_tc},
		{"ACK6 with data to a closed port", tcp(true, TCP_ACK, 81, {}, 2)},
		// ---- SYN-ACKs (tcp_conn_request): last, before the kernel
		// retransmits them
		{"SYN to a listener", tcp(false, TCP_SYN, 5201, {}, 0, 0, 2001)},
		{"SYN with MSS, SACK, timestamps, window scale to a listener",
		 tcp(false, TCP_SYN, 5201, all_opts, 0, 0, 2002)},
		{"SYN with MSS and timestamps to a listener",
		 tcp(false, TCP_SYN, 5201, {2, 4, 5, 0xb4, 1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0}, 0,
		     0, 2003)},
		{"SYN with MSS and SACK to a listener",
		 tcp(false, TCP_SYN, 5201, {2, 4, 5, 0xb4, 1, 1, 4, 2}, 0, 0, 2004)},
		{"SYN with MSS and window scale to a listener",
		 tcp(false, TCP_SYN, 5201, {2, 4, 5, 0xb4, 1, 3, 3, 7}, 0, 0, 2005)},
		{"SYN6 with every option to a listener", tcp(true, TCP_SYN, 5201, all_opts, 0, 0, 2006)},
	};
}

} // namespace

TEST_CASE("kernel oracle: replies (ICMP, ICMPv6, TCP), IPv4 options and "
	  "IPv6 options give the kernel's frames and counters under every "
	  "engine", "[l3_demux][kernel][reply]")
{
	Netns net;
	if (!can_run(net))
		return;
	REQUIRE(net.in("sysctl -w net.ipv6.icmp.ratelimit=0") == "");
	REQUIRE(net.static_peer() == "");
	Listener listener(net);
	INFO(listener.error);
	REQUIRE(listener.error.empty());
	REQUIRE(settle(net));
	const std::vector<Named> frames = reply_frames();
	KernelRun k = kernel_run(net, frames, 15);

	rte_mempool *mp = mbuf_pool("oracle_reply_pool", 2047);
	StageKeys keys = l3_keys;
	keys.emplace_back("icmp_ratelimit", "0");
	keys.emplace_back("icmpv6_ratelimit", "0");
	std::vector<uint16_t> polls;
	for (size_t done = 0; done < frames.size(); done += 7)
		polls.push_back((uint16_t)std::min<size_t>(7, frames.size() - done));
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(
			kind, 1, 8,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", keys}},
			[&](size_t at) { return frames[at].frame.to_mbuf(mp); }, polls);
		REQUIRE(r.out.size() == frames.size());
		for (size_t i = 0; i < frames.size(); i++) {
			INFO("frame " << frames[i].name);
			const bool tx = lrx_next_kind(r.out[i].first) == LRX_NEXT_TX;
			const std::vector<Bytes> &kr = k.replies[i];
			CHECK(kr.size() == (tx ? 1u : 0u));
			if (tx && kr.size() == 1) {
				INFO("kernel " << hex(kr[0]));
				INFO("listrx " << hex(r.out[i].second));
				CHECK(normalize(r.out[i].second) == normalize(strip_ip_options(kr[0])));
			}
		}
		for (const char *name : compared) {
			INFO(name << ": kernel " << k.counters[name] << ", listrx "
				  << r.counters[1][name]);
			CHECK(r.counters[1].count(name) == 1);
			CHECK(k.counters[name] == r.counters[1][name]);
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("kernel oracle: the per-peer ICMP rate limit (inet_peer_xrlim_allow) "
	  "lets the kernel's burst through", "[l3_demux][kernel][reply]")
{
	Netns net;
	if (!can_run(net))
		return;
	// icmp_ratelimit 1000 ms (the default), icmpv6 1000 ms: a 250 ms
	// token on the /64 route, longer than the frames take to send
	REQUIRE(net.in("sysctl -w net.ipv4.icmp_ratelimit=1000") == "");
	REQUIRE(net.in("sysctl -w net.ipv6.icmp.ratelimit=1000") == "");
	REQUIRE(net.static_peer() == "");
	REQUIRE(settle(net));
	std::vector<Named> frames;
	for (int i = 0; i < 10; i++) {
		frames.push_back({"udp4 " + std::to_string(i), udp4(1000, 3000)});
		frames.push_back({"udp6 " + std::to_string(i), udp6(1000, 3000)});
	}
	KernelRun k = kernel_run(net, frames, 200, true);
	INFO("kernel replies " << k.replies[0].size());
	CHECK(k.counters["IcmpOutDestUnreachs"] == 6);
	CHECK(k.counters["Icmp6OutDestUnreachs"] == 6);

	rte_mempool *mp = mbuf_pool("oracle_rate_pool", 1023);
	StageKeys keys = l3_keys;
	keys.emplace_back("icmpv6_ratelimit", "1000");
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(
			kind, 1, 32,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", keys}},
			[&](size_t at) { return frames[at].frame.to_mbuf(mp); },
			{(uint16_t)frames.size()});
		size_t sent = 0;
		for (auto &o : r.out)
			sent += lrx_next_kind(o.first) == LRX_NEXT_TX;
		CHECK(sent == k.replies[0].size());
		for (const char *name : {"IcmpOutDestUnreachs", "IcmpOutRateLimitHost",
					 "Icmp6OutDestUnreachs", "Icmp6OutRateLimitHost",
					 "UdpNoPorts", "Udp6NoPorts"}) {
			INFO(name << ": kernel " << k.counters[name] << ", listrx "
				  << r.counters[1][name]);
			CHECK(k.counters[name] == r.counters[1][name]);
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("kernel oracle: source routes with accept_source_route on "
	  "(ip_options_rcv_srr) for a host that does not forward",
	  "[l3_demux][kernel][reply]")
{
	Netns net;
	if (!can_run(net))
		return;
	REQUIRE(net.in("sysctl -w net.ipv4.conf.all.accept_source_route=1") == "");
	REQUIRE(net.in("sysctl -w net.ipv4.conf." + net.inside + ".accept_source_route=1") == "");
	REQUIRE(net.static_peer() == "");
	REQUIRE(settle(net));
	// echo replies (no reply to them, so no reversed source route to
	// answer along: __ip_options_echo is not modelled): delivered,
	// IcmpInMsgs, or dropped uncounted
	auto srr = [](std::vector<uint8_t> opts, uint32_t dst = ip4(10, 0, 0, 2)) {
		return v4opt(opts, dst, L4::icmp, 0);
	};
	const std::vector<Named> frames = {
		{"loose, the route done", srr({131, 7, 8, 10, 0, 0, 9, 1})},
		{"loose, next hop this host", srr({131, 7, 4, 10, 0, 0, 2, 1})},
		{"loose, next hop another host", srr({131, 7, 4, 10, 0, 0, 9, 1})},
		{"strict, next hop this host", srr({137, 7, 4, 10, 0, 0, 2, 1})},
		{"loose, a hop half past the option", srr({131, 8, 5, 10, 0, 0, 2, 0, 1, 1, 1, 1})},
		{"loose, to the broadcast", srr({131, 7, 4, 10, 0, 0, 2, 1}, ip4(10, 0, 0, 255))},
	};
	KernelRun k = kernel_run(net, frames, 15);
	rte_mempool *mp = mbuf_pool("oracle_srr_pool", 255);
	StageKeys keys = l3_keys;
	keys.emplace_back("accept_source_route", "yes");
	keys.emplace_back("icmp_ratelimit", "0");
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(
			kind, 1, 8,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", keys}},
			[&](size_t at) { return frames[at].frame.to_mbuf(mp); },
			{(uint16_t)frames.size()});
		REQUIRE(r.out.size() == frames.size());
		for (size_t i = 0; i < frames.size(); i++) {
			INFO("frame " << frames[i].name);
			const bool tx = lrx_next_kind(r.out[i].first) == LRX_NEXT_TX;
			CHECK(k.replies[i].size() == (tx ? 1u : 0u));
		}
		for (const char *name : compared) {
			INFO(name << ": kernel " << k.counters[name] << ", listrx "
				  << r.counters[1][name]);
			CHECK(k.counters[name] == r.counters[1][name]);
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {

// The veth's rx_dropped and rx_otherhost_dropped (ip -s -s link).
std::map<std::string, uint64_t> link_drops(const Netns &net)
{
	std::map<std::string, uint64_t> out;
	FILE *f = popen(("ip netns exec " + net.ns + " ip -s -s -j link show dev " +
			 net.inside).c_str(), "r");
	if (!f)
		return out;
	std::string text;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		text.append(buf, n);
	pclose(f);
	std::smatch m;
	const size_t rx = text.find("\"rx\":{");
	if (rx == std::string::npos)
		return out;
	const std::string rxs = text.substr(rx, text.find('}', rx) - rx);
	if (std::regex_search(rxs, m, std::regex("\"dropped\":([0-9]+)")))
		out["rx_dropped"] = std::stoull(m[1]);
	if (std::regex_search(rxs, m, std::regex("\"otherhost\":([0-9]+)")))
		out["rx_otherhost_dropped"] = std::stoull(m[1]);
	return out;
}

Frame tagged(std::vector<uint16_t> tags, uint16_t outer_tpid, L3 l3 = L3::ipv4,
	     uint16_t ethertype = 0)
{
	return with([&](Spec &s) {
		s.vlans = tags;
		s.outer_tpid = outer_tpid;
		s.l3 = l3;
		s.ethertype = ethertype;
		s.dport = 3000;
		if (l3 == L3::arp) {
			s.dst = mac_broadcast;
			s.arp_target_ip = ip4(10, 0, 0, 2);
		}
		if (l3 == L3::none)
			s.payload.assign(46, 0x7a);
	});
}

} // namespace

TEST_CASE("kernel oracle: VLAN tags with no VLAN device "
	  "(__netif_receive_skb_core) give the kernel's counters, device drops "
	  "and replies under every engine", "[l3_demux][kernel][vlan]")
{
	Netns net;
	if (!can_run(net))
		return;
	REQUIRE(net.static_peer() == "");
	REQUIRE(settle(net));
	const std::vector<Named> frames = {
		{"untagged", tagged({}, 0x8100)},
		{"priority tag", tagged({0}, 0x8100)},
		{"priority tag, PCP 5", tagged({0xa000}, 0x8100)},
		{"VID 5", tagged({5}, 0x8100)},
		{"VID 4095", tagged({0xfff}, 0x8100)},
		{"802.1ad VID 5 + 802.1Q VID 7", tagged({5, 7}, 0x88a8)},
		{"802.1ad VID 0 + 802.1Q VID 0", tagged({0, 0}, 0x88a8)},
		{"802.1Q VID 0 + 802.1Q VID 7", tagged({0, 7}, 0x8100)},
		{"802.1Q VID 0 + 802.1Q VID 0", tagged({0, 0}, 0x8100)},
		{"802.1Q VID 5 + 802.1Q VID 7", tagged({5, 7}, 0x8100)},
		{"IPv6, VID 5", tagged({5}, 0x8100, L3::ipv6)},
		{"IPv6, priority tag", tagged({0}, 0x8100, L3::ipv6)},
		{"ARP, priority tag", tagged({0}, 0x8100, L3::arp)},
		{"ARP, VID 5", tagged({5}, 0x8100, L3::arp)},
		{"unknown ethertype", tagged({}, 0x8100, L3::none, 0x88b5)},
		{"unknown ethertype, VID 5", tagged({5}, 0x8100, L3::none, 0x88b5)},
		{"TCP SYN, priority tag", with([](Spec &s) {
			 s.vlans = {0}; s.l4 = L4::tcp; s.tcp_flags = TCP_SYN; s.dport = 81;
			 s.default_payload = false; })},
	};
	auto d0 = link_drops(net);
	KernelRun k = kernel_run(net, frames, 15);
	auto d1 = link_drops(net);
	REQUIRE(d1.count("rx_dropped") == 1);
	REQUIRE(d1.count("rx_otherhost_dropped") == 1);

	rte_mempool *mp = mbuf_pool("oracle_vlan_pool", 1023);
	StageKeys keys = l3_keys;
	keys.emplace_back("arp_ip", "10.0.0.2");
	keys.emplace_back("icmp_ratelimit", "0");
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		for (bool stripped : {false, true}) {
			INFO("engine " << lrx_engine_name(kind)
				       << (stripped ? ", the NIC strips the outer tag" : ""));
			EngineRun r = run_engine(
				kind, 1, 8,
				{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
				 {"l3-demux", keys}},
				[&](size_t at) {
					const Frame &f = frames[at].frame;
					if (!stripped || f.l2_len == 14)
						return f.to_mbuf(mp);
					// the first tag out of the frame, into the mbuf
					Frame g = f;
					const uint16_t tci = (uint16_t)(f.data[14] << 8 | f.data[15]);
					g.data.erase(g.data.begin() + 12, g.data.begin() + 16);
					rte_mbuf *m = g.to_mbuf(mp);
					m->ol_flags = RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
					m->vlan_tci = tci;
					return m;
				},
				{(uint16_t)frames.size()});
			REQUIRE(r.out.size() == frames.size());
			for (size_t i = 0; i < frames.size(); i++) {
				INFO("frame " << frames[i].name);
				const bool tx = lrx_next_kind(r.out[i].first) == LRX_NEXT_TX;
				CHECK(k.replies[i].size() == (tx ? 1u : 0u));
				if (tx && k.replies[i].size() == 1)
					CHECK(normalize(r.out[i].second) ==
					      normalize(strip_ip_options(k.replies[i][0])));
			}
			for (const char *name : compared) {
				INFO(name << ": kernel " << k.counters[name] << ", listrx "
					  << r.counters[1][name]);
				CHECK(k.counters[name] == r.counters[1][name]);
			}
			for (const char *name : {"rx_dropped", "rx_otherhost_dropped"}) {
				INFO(name << ": kernel " << d1[name] - d0[name] << ", listrx "
					  << r.counters[1][name]);
				CHECK(d1[name] - d0[name] == r.counters[1][name]);
			}
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {

// listrx (build-meta, l3-demux with keys) under every engine against the
// kernel's run k of frames: each frame's reply (or none) and every
// compared counter.
void check_engines(const std::vector<Named> &frames, const KernelRun &k,
		   const StageKeys &keys, rte_mempool *mp)
{
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(
			kind, 1, 8,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", keys}},
			[&](size_t at) { return frames[at].frame.to_mbuf(mp); },
			{(uint16_t)frames.size()});
		REQUIRE(r.out.size() == frames.size());
		for (size_t i = 0; i < frames.size(); i++) {
			INFO("frame " << frames[i].name);
			const bool tx = lrx_next_kind(r.out[i].first) == LRX_NEXT_TX;
			CHECK(k.replies[i].size() == (tx ? 1u : 0u));
			if (tx && k.replies[i].size() == 1) {
				INFO("kernel " << hex(k.replies[i][0]));
				INFO("listrx " << hex(r.out[i].second));
				CHECK(normalize(r.out[i].second) == normalize(k.replies[i][0]));
			}
		}
		for (const char *name : compared) {
			INFO(name << ": kernel " << k.counters.at(name) << ", listrx "
				  << r.counters[1][name]);
			CHECK(r.counters[1].count(name) == 1);
			CHECK(k.counters.at(name) == r.counters[1][name]);
		}
	}
}

// A UDP socket bound to port inside the namespace (closed on destruction).
struct UdpSocket {
	int fd = -1;
	std::string error;
	UdpSocket(const Netns &net, uint16_t port)
	{
		error = in_netns(net, [&] {
			fd = socket(AF_INET, SOCK_DGRAM, 0);
			sockaddr_in a{};
			a.sin_family = AF_INET;
			a.sin_port = htons(port);
			if (fd < 0 || bind(fd, (sockaddr *)&a, sizeof(a)) != 0)
				error = "cannot bind UDP port " + std::to_string(port);
		});
	}
	~UdpSocket()
	{
		if (fd >= 0)
			close(fd);
	}
};

} // namespace

TEST_CASE("kernel oracle: ICMP and ICMPv6 errors quoting UDP and TCP without "
	  "a socket count InErrors as the kernel does under every engine",
	  "[l3_demux][kernel][icmp_err]")
{
	Netns net;
	if (!can_run(net))
		return;
	REQUIRE(net.static_peer() == "");
	Listener listener(net);
	INFO(listener.error);
	REQUIRE(listener.error.empty());
	UdpSocket udp(net, 4445);
	INFO(udp.error);
	REQUIRE(udp.error.empty());
	REQUIRE(settle(net));
	const L4 U = L4::udp, T = L4::tcp;
	const std::vector<Named> frames = {
		{"port unreachable, UDP, closed port", icmp_error(false, 3, 3, U, 4444)},
		{"port unreachable, UDP, the socket's port", icmp_error(false, 3, 3, U, 4445)},
		{"host unreachable, TCP, closed port", icmp_error(false, 3, 1, T, 4444)},
		{"host unreachable, TCP, the listener's port (no connection)",
		 icmp_error(false, 3, 1, T, 5201)},
		{"fragmentation needed, UDP, closed port", icmp_error(false, 3, 4, U, 4444)},
		{"source quench, UDP", icmp_error(false, 4, 0, U, 4444)},
		{"time exceeded in transit, TCP", icmp_error(false, 11, 0, T, 4444)},
		{"time exceeded in reassembly, UDP", icmp_error(false, 11, 1, U, 4444)},
		{"parameter problem, UDP", icmp_error(false, 12, 0, U, 4444)},
		{"unreachable code 16, UDP", icmp_error(false, 3, 16, U, 4444)},
		{"port unreachable quoting an echo request", icmp_error(false, 3, 3, L4::icmp, 0)},
		{"port unreachable quoting 24 bytes", icmp_error(false, 3, 3, U, 4445, 2, 24)},
		{"ICMPv6 port unreachable, UDP, closed port", icmp_error(true, 1, 4, U, 4444)},
		{"ICMPv6 no route, TCP, closed port", icmp_error(true, 1, 0, T, 4444)},
		{"ICMPv6 packet too big, TCP, the listener's port", icmp_error(true, 2, 0, T, 5201)},
		{"ICMPv6 time exceeded, UDP", icmp_error(true, 3, 0, U, 4444)},
		{"ICMPv6 parameter problem, TCP", icmp_error(true, 4, 0, T, 4444)},
		{"ICMPv6 error of unknown type 100, UDP", icmp_error(true, 100, 0, U, 4444)},
		{"ICMPv6 port unreachable quoting an echo request",
		 icmp_error(true, 1, 4, L4::icmp, 0)},
	};
	KernelRun k = kernel_run(net, frames, 15);
	CHECK(k.counters["IcmpInErrors"] > 0);
	CHECK(k.counters["Icmp6InErrors"] > 0);
	rte_mempool *mp = mbuf_pool("oracle_icmperr_pool", 1023);
	StageKeys keys = l3_keys;
	for (auto &kv : keys)
		if (kv.first == "udp_ports")
			kv.second = "4445";
	// the listener's port holds no connection: the established table
	keys.emplace_back("tcp_ehash", "1024");
	check_engines(frames, k, keys, mp);
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("kernel oracle: replies to a source off the link, without and "
	  "with a default route (ipv4_routes, ipv6_routes) under every engine",
	  "[l3_demux][kernel][route]")
{
	Netns net;
	if (!can_run(net))
		return;
	REQUIRE(net.in("sysctl -w net.ipv6.icmp.ratelimit=0") == "");
	REQUIRE(net.static_peer() == "");
	Listener listener(net);
	INFO(listener.error);
	REQUIRE(listener.error.empty());
	REQUIRE(settle(net));
	const uint32_t off4 = ip4(10, 7, 0, 5);
	const Ip6 off6 = ip6({0x2001, 0xdb9, 0, 0, 0, 0, 0, 5});
	auto v4 = [&](Frame f) { return f.ip4_src(off4).l4_fix_csum(); };
	auto v6 = [&](Frame f) { return f.ip6_src(off6).l4_fix_csum(); };
	const Frame echo6 = with([](Spec &s) { s.l3 = L3::ipv6; s.l4 = L4::icmp; });
	const std::vector<Named> frames = {
		{"UDP to a closed port from 10.7.0.5", v4(udp4(1000, 3000))},
		{"echo from 10.7.0.5", v4(icmp4(8, 20))},
		{"SYN to a closed port from 10.7.0.5", v4(tcp(false, TCP_SYN, 81))},
		{"ACK with data to a closed port from 10.7.0.5",
		 v4(tcp(false, TCP_ACK, 81, {}, 10))},
		{"UDP to a closed port from 10.0.0.1", udp4(1000, 3000)},
		{"UDP6 to a closed port from 2001:db9::5", v6(udp6(1000, 3000))},
		{"echo6 from 2001:db9::5", v6(echo6)},
		{"SYN6 to a closed port from 2001:db9::5", v6(tcp(true, TCP_SYN, 81))},
		{"UDP6 to a closed port from 2001:db8::1", udp6(1000, 3000)},
		{"echo6 from 2001:db8::1", echo6},
		// last: with a route the kernel retransmits its SYN-ACKs
		{"SYN to the listener from 10.7.0.5", v4(tcp(false, TCP_SYN, 5201))},
		{"SYN6 to the listener from 2001:db9::5", v6(tcp(true, TCP_SYN, 5201))},
	};
	rte_mempool *mp = mbuf_pool("oracle_route_pool", 1023);
	StageKeys keys = l3_keys;
	keys.emplace_back("icmp_ratelimit", "0");
	keys.emplace_back("icmpv6_ratelimit", "0");
	{
		INFO("no default route (only the veth's prefix routes)");
		KernelRun k = kernel_run(net, frames, 15);
		CHECK(k.counters["Ip6OutNoRoutes"] == 4);
		CHECK(k.counters["TcpExtListenDrops"] == 2);
		StageKeys nodefault = keys;
		nodefault.emplace_back("ipv4_routes", "subnets");
		nodefault.emplace_back("ipv6_routes", "subnets");
		check_engines(frames, k, nodefault, mp);
	}
	REQUIRE(net.in("ip route add default via 10.0.0.1 dev " + net.inside) == "");
	REQUIRE(net.in("ip -6 route add default via 2001:db8::1 dev " + net.inside) == "");
	{
		INFO("a default route by the veth");
		KernelRun k = kernel_run(net, frames, 15);
		CHECK(k.counters["IcmpOutMsgs"] == 3);
		StageKeys with_default = keys;
		with_default.emplace_back("ipv4_routes", "0.0.0.0/0%0");
		with_default.emplace_back("ipv6_routes", "::/0%0");
		check_engines(frames, k, with_default, mp);
		// none: every address answered, as a host with a default route
		check_engines(frames, k, keys, mp);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}
