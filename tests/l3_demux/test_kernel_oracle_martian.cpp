// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for martian sources (netns_oracle.h's namespace, frames
// replayed one at a time into its veth, each one's reply read on the
// outer end; then build-meta,l3-demux configured alike under every
// engine): frames from the host's own address (LAND), the reverse path
// filter (rp_filter strict and loose, all and per device, against a route
// through a second device), and IPv6 multicast and loopback sources and
// destinations (ip6_rcv_core). No reply where the kernel sends none, the
// nstat counters and in_martian_src equal. Needs root; skips with a
// printed reason otherwise.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine_run.h"
#include "frames.h"
#include "netns_oracle.h"
#include "oracle_reply.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;
using namespace lrx_test::oracle;


// LAND: the namespace's own address as the source. fib_validate_source
// (rp_filter 0, accept_local 0: its fast path) finds it among the local
// addresses (inet_lookup_ifaddr_rcu) and ip_route_input_slow drops it as
// a martian source, SKB_DROP_REASON_IP_LOCAL_SOURCE, in_martian_src, for
// a local destination and a broadcast; ip_mc_validate_source drops it for
// a group without in_martian_src. A reply would go to the host itself
// (through lo, not out of the veth): the nstat counters show there is
// none (IpOutRequests, IcmpOutMsgs, TcpOutSegs).
TEST_CASE("kernel oracle: frames from the host's own address (LAND) get no "
	  "reply and count in_martian_src as the kernel's under every engine",
	  "[l3_demux][kernel][land]")
{
	Netns net;
	if (!can_run(net))
		return;
	REQUIRE(net.static_peer() == "");
	Listener listener(net);
	INFO(listener.error);
	REQUIRE(listener.error.empty());
	REQUIRE(settle(net));
	auto land = [](Frame f) { return f.ip4_src(ip4(10, 0, 0, 2)); };
	auto bcast = [](uint32_t dst, Mac mac) {
		return with([&](Spec &s) { s.dst = mac; s.ip4_dst = dst; s.dport = 3000; });
	};
	const std::vector<Named> frames = {
		{"echo", land(icmp4(8, 20))},
		{"SYN to a listener", land(tcp(false, TCP_SYN, 5201, {}, 0, 0, 2010))},
		{"udp to a closed port", land(udp4(1000, 3000))},
		{"udp to 255.255.255.255", land(bcast(0xffffffff, mac_broadcast))},
		{"udp to the directed broadcast", land(bcast(ip4(10, 0, 0, 255), mac_broadcast))},
		{"udp to 224.0.0.1 (no in_martian_src)",
		 land(bcast(ip4(224, 0, 0, 1), {0x01, 0x00, 0x5e, 0, 0, 1}))},
	};
	// the statistic is host-wide: one more try if something else
	// counted a martian source meanwhile
	KernelRun k;
	uint64_t martians = 0;
	for (int attempt = 0; attempt < 2; attempt++) {
		const uint64_t before = in_martian_src();
		k = kernel_run(net, frames, 15);
		martians = in_martian_src() - before;
		if (martians == 5)
			break;
	}
	CHECK(martians == 5);
	CHECK(k.counters["IpInReceives"] == frames.size());
	CHECK(k.counters["IpOutRequests"] == 0);
	CHECK(k.counters["IcmpOutMsgs"] == 0);
	CHECK(k.counters["TcpOutSegs"] == 0);

	rte_mempool *mp = mbuf_pool("oracle_land_pool", 255);
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(
			kind, 1, 8,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", l3_keys}},
			[&](size_t at) { return frames[at].frame.to_mbuf(mp); },
			{(uint16_t)frames.size()});
		REQUIRE(r.out.size() == frames.size());
		for (size_t i = 0; i < frames.size(); i++) {
			INFO("frame " << frames[i].name);
			CHECK(k.replies[i].empty());
			CHECK(r.out[i].first == lrx_next_drop(LRX_DROP_IP_LOCAL_SOURCE));
		}
		CHECK(r.counters[1]["in_martian_src"] == martians);
		for (const char *name : compared) {
			INFO(name << ": kernel " << k.counters[name] << ", listrx "
				  << r.counters[1][name]);
			CHECK(k.counters[name] == r.counters[1][name]);
		}
	}

	// IPv6 has no such check (ip6_rcv_core refuses a multicast or
	// loopback source only): the kernel answers its own address, through
	// lo, where its reply comes back in; the replies sent are compared
	REQUIRE(net.in("sysctl -w net.ipv6.icmp.ratelimit=0") == "");
	const Ip6 self6 = ip6_doc(2);
	const std::vector<Named> frames6 = {
		{"echo6", with([&](Spec &s) { s.l3 = L3::ipv6; s.l4 = L4::icmp;
					      s.icmp_type = 128; s.ip6_src = self6; })},
		{"udp6 to a closed port", udp6(1000, 3000).ip6_src(self6)},
	};
	KernelRun k6 = kernel_run(net, frames6, 15);
	const char *const sent6[] = {"Icmp6OutEchoReplies", "Icmp6OutDestUnreachs"};
	for (const char *name : sent6)
		CHECK(k6.counters[name] == 1);
	StageKeys keys6 = l3_keys;
	keys6.emplace_back("icmpv6_ratelimit", "0");
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(
			kind, 1, 8,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", keys6}},
			[&](size_t at) { return frames6[at].frame.to_mbuf(mp); },
			{(uint16_t)frames6.size()});
		REQUIRE(r.out.size() == frames6.size());
		for (auto &o : r.out)
			CHECK(lrx_next_kind(o.first) == LRX_NEXT_TX);
		for (const char *name : sent6)
			CHECK(k6.counters[name] == r.counters[1][name]);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}


namespace {

// The namespace's routes for the reverse path filter: 10.9.0.0/24 through
// a second device (a veth pair inside the namespace), nothing for
// 10.7.0.0/16 (no default route); listrx: the same route through port 1,
// the frames coming in on port 0.
std::string second_device(const Netns &net)
{
	const std::string a = "lrxr" + net.ns.substr(6), b = "lrxs" + net.ns.substr(6);
	for (const std::string &cmd :
	     {"ip link add " + a + " type veth peer name " + b,
	      // no MLD or neighbour discovery into the IPv6 counters
	      "sysctl -w net.ipv6.conf." + a + ".disable_ipv6=1",
	      "sysctl -w net.ipv6.conf." + b + ".disable_ipv6=1",
	      "ip addr add 10.9.0.1/24 dev " + a, "ip link set " + a + " up",
	      "ip link set " + b + " up"})
		if (std::string why = net.in(cmd); !why.empty())
			return why;
	return "";
}

std::vector<Named> rp_filter_frames()
{
	auto from = [](uint32_t src, Frame f) { return f.ip4_src(src); };
	auto udp_to = [](uint32_t dst, Mac mac) {
		return with([&](Spec &s) { s.dst = mac; s.ip4_dst = dst; s.dport = 3000; });
	};
	const uint32_t nine = ip4(10, 9, 0, 5), seven = ip4(10, 7, 0, 5);
	const Mac all_hosts = {0x01, 0x00, 0x5e, 0, 0, 1};
	return {
		{"echo from the subnet", icmp4(8, 20)},
		{"echo reply from 10.9.0.5 (route by another device)", from(nine, icmp4(0, 20))},
		{"TCP RST from 10.9.0.5", from(nine, tcp(false, TCP_RST, 5201))},
		{"echo reply from 10.7.0.5 (no route back)", from(seven, icmp4(0, 20))},
		{"udp from 10.9.0.5 to 255.255.255.255", from(nine, udp_to(0xffffffff, mac_broadcast))},
		{"udp from 10.9.0.5 to 224.0.0.1", from(nine, udp_to(ip4(224, 0, 0, 1), all_hosts))},
		{"udp from 10.7.0.5 to 224.0.0.1", from(seven, udp_to(ip4(224, 0, 0, 1), all_hosts))},
		{"echo reply from the subnet broadcast (RTN_BROADCAST)",
		 from(ip4(10, 0, 0, 255), icmp4(0, 20))},
	};
}

} // namespace

// rp_filter (IN_DEV_RPFILTER: the max of conf/all and the device's):
// fib_validate_source takes __fib_validate_source's full lookup of the
// source; strict refuses a route back by another device, loose only no
// route at all; a source that is a broadcast address is IP_INVALID_SOURCE
// either way. ip_route_input_slow counts each in_martian_src (not for a
// group: ip_mc_validate_source), ip_rcv_finish_core IPReversePathFilter.
TEST_CASE("kernel oracle: rp_filter strict and loose, all and per device, "
	  "drop and count as the kernel's under every engine",
	  "[l3_demux][kernel][rp_filter]")
{
	Netns net;
	if (!can_run(net))
		return;
	REQUIRE(net.static_peer() == "");
	REQUIRE(second_device(net) == "");
	REQUIRE(settle(net));
	const std::vector<Named> frames = rp_filter_frames();
	struct Setting {
		const char *name, *all, *dev;
		StageKeys keys;
	};
	const Setting settings[] = {
		{"all strict, device off: strict", "1", "0", {{"rp_filter", "1"}}},
		{"all off, device loose: loose", "0", "2", {{"rp_filter_ports", "0:2"}}},
		{"all loose, device strict: loose", "2", "1",
		 {{"rp_filter", "2"}, {"rp_filter_ports", "0:1"}}},
	};
	rte_mempool *mp = mbuf_pool("oracle_rpf_pool", 255);
	for (const Setting &set : settings) {
		INFO(set.name);
		REQUIRE(net.in("sysctl -w net.ipv4.conf.all.rp_filter=" +
			       std::string(set.all)) == "");
		REQUIRE(net.in("sysctl -w net.ipv4.conf." + net.inside +
			       ".rp_filter=" + set.dev) == "");
		StageKeys keys = l3_keys;
		keys.emplace_back("ipv4_routes", "10.9.0.0/24%1");
		for (auto &kv : set.keys)
			keys.push_back(kv);
		auto listrx = [&](lrx_engine_kind kind) {
			return run_engine(
				kind, 1, 8,
				{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
				 {"l3-demux", keys}},
				[&](size_t at) { return frames[at].frame.to_mbuf(mp); },
				{(uint16_t)frames.size()});
		};
		const uint64_t want = listrx(LRX_ENGINE_PACKET).counters[1]["in_martian_src"];
		// the statistic is host-wide: once more if something else
		// counted a martian source meanwhile
		KernelRun k;
		uint64_t martians = 0;
		for (int attempt = 0; attempt < 2; attempt++) {
			const uint64_t before = in_martian_src();
			k = kernel_run(net, frames, 15);
			martians = in_martian_src() - before;
			if (martians == want)
				break;
		}
		CHECK(martians == want);
		CHECK(k.counters["TcpExtIPReversePathFilter"] > 0);
		for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
				  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
			INFO("engine " << lrx_engine_name(kind));
			EngineRun r = listrx(kind);
			REQUIRE(r.out.size() == frames.size());
			for (size_t i = 0; i < frames.size(); i++) {
				INFO("frame " << frames[i].name);
				const bool tx = lrx_next_kind(r.out[i].first) == LRX_NEXT_TX;
				CHECK(k.replies[i].size() == (tx ? 1u : 0u));
				if (tx && k.replies[i].size() == 1)
					CHECK(normalize(r.out[i].second) ==
					      normalize(k.replies[i][0]));
			}
			CHECK(r.counters[1]["in_martian_src"] == martians);
			for (const char *name : compared) {
				INFO(name << ": kernel " << k.counters[name] << ", listrx "
					  << r.counters[1][name]);
				CHECK(k.counters[name] == r.counters[1][name]);
			}
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

// ip6_rcv_core (RFC 4291 2.5.3, 2.7 and errata 3480): a loopback source
// or destination on a device that is not the loopback, a multicast
// source, a multicast destination of scope 0 or 1 are header errors
// (Ip6InHdrErrors, SKB_DROP_REASON_IP_INHDR), before any reply; so is a
// unicast destination in an L2 broadcast or multicast on a device with
// drop_unicast_in_l2_multicast (UNICAST_IN_L2_MULTICAST).
TEST_CASE("kernel oracle: IPv6 multicast and loopback sources get no reply "
	  "and count as the kernel's under every engine",
	  "[l3_demux][kernel][martian6]")
{
	Netns net;
	if (!can_run(net))
		return;
	REQUIRE(net.static_peer() == "");
	REQUIRE(settle(net));
	auto echo6 = [](const Ip6 &src, const Ip6 &dst) {
		return with([&](Spec &s) {
			s.l3 = L3::ipv6; s.l4 = L4::icmp; s.icmp_type = 128;
			s.ip6_src = src; s.ip6_dst = dst;
			if (dst[0] == 0xff)
				s.dst = {0x33, 0x33, dst[12], dst[13], dst[14], dst[15]};
		});
	};
	const Ip6 peer = ip6_doc(1), self = ip6_doc(2);
	const Ip6 lo = ip6({0, 0, 0, 0, 0, 0, 0, 1});
	const std::vector<Named> frames = {
		{"echo6 from the peer", echo6(peer, self)},
		{"echo6 from ff02::1", echo6(ip6({0xff02, 0, 0, 0, 0, 0, 0, 1}), self)},
		{"echo6 from ff0e::5", echo6(ip6({0xff0e, 0, 0, 0, 0, 0, 0, 5}), self)},
		{"udp6 from ff05::2 to a closed port",
		 udp6(1000, 3000).ip6_src(ip6({0xff05, 0, 0, 0, 0, 0, 0, 2}))},
		{"echo6 from ::1", echo6(lo, self)},
		{"udp6 from ::1 to a closed port", udp6(1000, 3000).ip6_src(lo)},
		{"echo6 to ::1", echo6(peer, lo)},
		{"echo6 to ff01::1 (interface-local)",
		 echo6(peer, ip6({0xff01, 0, 0, 0, 0, 0, 0, 1}))},
		{"echo6 to ff00::1 (scope 0)", echo6(peer, ip6({0xff00, 0, 0, 0, 0, 0, 0, 1}))},
	};
	KernelRun k = kernel_run(net, frames, 15);
	CHECK(k.counters["Ip6InHdrErrors"] == frames.size() - 1);
	rte_mempool *mp = mbuf_pool("oracle_martian6_pool", 255);
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(
			kind, 1, 8,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", l3_keys}},
			[&](size_t at) { return frames[at].frame.to_mbuf(mp); },
			{(uint16_t)frames.size()});
		REQUIRE(r.out.size() == frames.size());
		for (size_t i = 0; i < frames.size(); i++) {
			INFO("frame " << frames[i].name);
			const bool tx = lrx_next_kind(r.out[i].first) == LRX_NEXT_TX;
			CHECK(k.replies[i].size() == (tx ? 1u : 0u));
			if (i > 0)
				CHECK(r.out[i].first == lrx_next_drop(LRX_DROP_IP_INHDR));
		}
		for (const char *name : compared) {
			INFO(name << ": kernel " << k.counters[name] << ", listrx "
				  << r.counters[1][name]);
			CHECK(k.counters[name] == r.counters[1][name]);
		}
	}

	// drop_unicast_in_l2_multicast on the device: a unicast destination
	// in an L2 broadcast or multicast frame is refused after the
	// loopback checks and before the multicast-source one
	REQUIRE(net.in("sysctl -w net.ipv6.conf." + net.inside +
		       ".drop_unicast_in_l2_multicast=1") == "");
	auto l2 = [](Frame f, Mac mac) {
		for (size_t b = 0; b < 6; b++)
			f.set_u8(b, mac[b]);
		return f;
	};
	const Mac all_nodes = {0x33, 0x33, 0, 0, 0, 1};
	const std::vector<Named> frames2 = {
		{"echo6 from the peer", echo6(peer, self)},
		{"echo6 in an L2 broadcast", l2(echo6(peer, self), mac_broadcast)},
		{"echo6 in an L2 multicast", l2(echo6(peer, self), all_nodes)},
		{"echo6 from ff02::1 in an L2 broadcast",
		 l2(echo6(ip6({0xff02, 0, 0, 0, 0, 0, 0, 1}), self), mac_broadcast)},
		{"echo6 from ::1 in an L2 broadcast", l2(echo6(lo, self), mac_broadcast)},
		{"echo6 to ff02::1", echo6(peer, ip6({0xff02, 0, 0, 0, 0, 0, 0, 1}))},
	};
	// a reply, or the drop and its reason
	const lrx_drop_reason L2MC = LRX_DROP_UNICAST_IN_L2_MULTICAST;
	const std::vector<std::pair<bool, lrx_drop_reason>> want2 = {
		{true, LRX_DROP_MAX}, {false, L2MC}, {false, L2MC}, {false, L2MC},
		{false, LRX_DROP_IP_INHDR}, {true, LRX_DROP_MAX}};
	KernelRun k2 = kernel_run(net, frames2, 15);
	CHECK(k2.counters["Ip6InHdrErrors"] == 4);
	StageKeys keys2 = l3_keys;
	keys2.emplace_back("drop_unicast_in_l2_multicast", "0");
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(
			kind, 1, 8,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", keys2}},
			[&](size_t at) { return frames2[at].frame.to_mbuf(mp); },
			{(uint16_t)frames2.size()});
		REQUIRE(r.out.size() == frames2.size());
		for (size_t i = 0; i < frames2.size(); i++) {
			INFO("frame " << frames2[i].name);
			const bool tx = lrx_next_kind(r.out[i].first) == LRX_NEXT_TX;
			CHECK(k2.replies[i].size() == (tx ? 1u : 0u));
			if (want2[i].first)
				CHECK(tx);
			else
				CHECK(r.out[i].first == lrx_next_drop(want2[i].second));
		}
		for (const char *name : compared) {
			INFO(name << ": kernel " << k2.counters[name] << ", listrx "
				  << r.counters[1][name]);
			CHECK(k2.counters[name] == r.counters[1][name]);
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}
