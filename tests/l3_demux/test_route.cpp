// SPDX-License-Identifier: BSD-3-Clause
// l3-demux route: the source validation of a local route, a broadcast and
// a joined group (fib_validate_source) with the reverse path filter
// (rp_filter strict and loose, all and per port, ipv4_routes and the
// local_ipv4 subnets), per packet and in a burst of one; IPv6's
// drop_unicast_in_l2_multicast; the key errors.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frames.h"
#include "stage_harness.h"
#include "test_eal.h"

extern "C" {
#include "build_meta/build_meta.h"
#include "l3_demux/l3_demux.h"
#include "meta.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;

namespace {

rte_mempool *pool()
{
	return mbuf_pool("route_pool", 1023, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
}

const StageInstance::Keys bm_keys = {{"host_mac", "02:00:00:00:00:02"}};
// 10.9.0.0/24 leaves by port 1, 10.8.0.0/16 by port 0 but 10.8.1.0/24
// by port 1; 10.0.0.0/24 is the local subnet; 10.7.0.0/16 has no route
const StageInstance::Keys l3_keys = {
	{"local_ipv4", "10.0.0.2/24"}, {"udp_ports", "2000"},
	{"mcast_groups", "none"},      {"icmp_unreach", "none"},
	{"ipv4_routes", "10.9.0.0/24%1, 10.8.0.0/16%0, 10.8.1.0/24%1"},
};

struct Row {
	const char *name;
	Frame frame;
	uint16_t port;
	StageInstance::Keys keys; // on top of l3_keys
	lrx_next_t expect;
	uint64_t martian_src, rp_filter;
};

Frame from(uint32_t src, uint32_t dst = ip4(10, 0, 0, 2))
{
	return with([&](Spec &s) {
		s.ip4_src = src;
		s.ip4_dst = dst;
		if (dst == 0xffffffff || dst == ip4(10, 0, 0, 255))
			s.dst = mac_broadcast;
		else if ((dst >> 28) == 0xe)
			s.dst = {0x01, 0x00, 0x5e, 0, 0, (uint8_t)dst};
	});
}

std::vector<Row> rows()
{
	const auto D = LRX_NEXT_DELIVER_V;
	const auto RPF = lrx_next_drop(LRX_DROP_IP_RPFILTER);
	const StageInstance::Keys strict = {{"rp_filter", "1"}};
	const StageInstance::Keys loose = {{"rp_filter", "2"}};
	const uint32_t nine = ip4(10, 9, 0, 5), eight = ip4(10, 8, 0, 5),
		       eight1 = ip4(10, 8, 1, 5), seven = ip4(10, 7, 0, 5);
	return {
		{"off: no route back is fine", from(seven), 0, {}, D, 0, 0},
		{"strict: the local subnet, any port", from(ip4(10, 0, 0, 1)), 3, strict, D, 0, 0},
		{"strict: route by the port it came in on", from(nine), 1, strict, D, 0, 0},
		{"strict: route by another port", from(nine), 0, strict, RPF, 1, 1},
		{"strict: the longest prefix decides (port 1)", from(eight1), 0, strict, RPF, 1, 1},
		{"strict: the longest prefix decides (port 0)", from(eight), 0, strict, D, 0, 0},
		{"strict: no route back", from(seven), 0, strict, RPF, 1, 1},
		{"loose: route by another port", from(nine), 0, loose, D, 0, 0},
		{"loose: no route back", from(seven), 0, loose, RPF, 1, 1},
		{"loose all, strict port: the max, loose", from(nine), 0,
		 {{"rp_filter", "2"}, {"rp_filter_ports", "0:1"}}, D, 0, 0},
		{"strict all, off port: the max, strict", from(nine), 0,
		 {{"rp_filter", "1"}, {"rp_filter_ports", "0:0"}}, RPF, 1, 1},
		{"off all, loose on port 0: port 0 filters", from(seven), 0,
		 {{"rp_filter_ports", "0:2"}}, RPF, 1, 1},
		{"off all, loose on port 0: port 1 does not", from(seven), 1,
		 {{"rp_filter_ports", "0:2"}}, D, 0, 0},
		{"strict, a default route by port 0", from(seven), 0,
		 {{"rp_filter", "1"}, {"ipv4_routes", "0.0.0.0/0%0"}}, D, 0, 0},
		{"strict, a default route by port 0, from port 1", from(seven), 1,
		 {{"rp_filter", "1"}, {"ipv4_routes", "0.0.0.0/0%0"}}, RPF, 1, 1},
		{"strict: the subnet broadcast as source (RTN_BROADCAST)",
		 from(ip4(10, 0, 0, 255)), 0, strict,
		 lrx_next_drop(LRX_DROP_IP_INVALID_SOURCE), 1, 0},
		{"strict: LAND", from(ip4(10, 0, 0, 2)), 0, strict,
		 lrx_next_drop(LRX_DROP_IP_LOCAL_SOURCE), 1, 0},
		{"strict, accept_local: LAND", from(ip4(10, 0, 0, 2)), 0,
		 {{"rp_filter", "1"}, {"accept_local", "yes"}}, D, 0, 0},
		{"strict, martians=accept", from(seven), 0,
		 {{"rp_filter", "1"}, {"martians", "accept"}}, D, 0, 0},
		{"strict: to 255.255.255.255 (brd_input)", from(seven, 0xffffffff), 0,
		 strict, RPF, 1, 1},
		{"strict: to the subnet broadcast", from(seven, ip4(10, 0, 0, 255)), 0,
		 strict, RPF, 1, 1},
		{"strict: to a joined group (no in_martian_src)",
		 from(seven, ip4(224, 0, 0, 1)), 0, strict, RPF, 0, 1},
		{"loose: to a joined group", from(nine, ip4(224, 0, 0, 1)), 0, loose,
		 D, 0, 0},
		{"strict: to an address not ours (no route input, no check)",
		 from(seven, ip4(10, 0, 0, 99)), 0, strict,
		 lrx_next_drop(LRX_DROP_IP_INADDRERRORS), 0, 0},
	};
}

} // namespace

TEST_CASE("l3-demux route: rp_filter strict and loose against ipv4_routes, "
	  "per port as the max of all and the port's", "[l3_demux][route]")
{
	eal_init();
	for (const Row &row : rows()) {
		for (bool burst : {false, true}) {
			INFO(row.name << (burst ? " (burst)" : " (per packet)"));
			StageInstance::Keys keys = l3_keys;
			for (auto &kv : row.keys)
				keys[kv.first] = kv.second;
			StageInstance bm(BUILD_META_STAGE_NAME, bm_keys);
			StageInstance l3(L3_DEMUX_STAGE_NAME, keys);
			REQUIRE(bm.ok());
			INFO(l3.error());
			REQUIRE(l3.ok());
			rte_mbuf *m = row.frame.to_mbuf(pool());
			REQUIRE(m);
			m->port = row.port;
			lrx_next_t next;
			if (burst)
				run_burst({&bm, &l3}, &m, 1, &next);
			else
				run_packet({&bm, &l3}, &m, 1, &next);
			rte_pktmbuf_free(m);
			CHECK(next_name(next) == next_name(row.expect));
			CHECK(l3.counter("in_martian_src") == row.martian_src);
			CHECK(l3.counter("TcpExtIPReversePathFilter") == row.rp_filter);
			CHECK(l3.counter("IpInReceives") == 1);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

// ip6_rcv_core's "hole-196" check, between the loopback checks and the
// multicast-source one, on the ports drop_unicast_in_l2_multicast names.
TEST_CASE("l3-demux ip6_rcv_core: drop_unicast_in_l2_multicast per port, in "
	  "the kernel's order", "[l3_demux][route]")
{
	eal_init();
	auto l2 = [](Frame f, Mac mac) {
		for (size_t b = 0; b < 6; b++)
			f.set_u8(b, mac[b]);
		return f;
	};
	const Mac all_nodes = {0x33, 0x33, 0, 0, 0, 1};
	const Ip6 lo = ip6({0, 0, 0, 0, 0, 0, 0, 1}), ff02_1 = ip6({0xff02, 0, 0, 0, 0, 0, 0, 1});
	const auto L2MC = lrx_next_drop(LRX_DROP_UNICAST_IN_L2_MULTICAST);
	const auto INHDR = lrx_next_drop(LRX_DROP_IP_INHDR);
	struct Case {
		const char *name;
		Frame frame;
		uint16_t port;
		const char *ports;
		lrx_next_t expect;
	};
	const Case cases[] = {
		{"off: delivered", l2(udp6(), mac_broadcast), 0, "none", LRX_NEXT_DELIVER_V},
		{"L2 broadcast", l2(udp6(), mac_broadcast), 0, "0", L2MC},
		{"L2 multicast", l2(udp6(), all_nodes), 0, "any", L2MC},
		{"another port", l2(udp6(), mac_broadcast), 1, "0", LRX_NEXT_DELIVER_V},
		{"L2 unicast", udp6(), 0, "0", LRX_NEXT_DELIVER_V},
		{"a group in an L2 multicast", l2(udp6().ip6_dst(ff02_1), all_nodes), 0, "0",
		 LRX_NEXT_DELIVER_V},
		{"from ::1 (checked first)", l2(udp6().ip6_src(lo), mac_broadcast), 0, "0", INHDR},
		{"from ff02::1 (checked after)", l2(udp6().ip6_src(ff02_1), mac_broadcast), 0, "0",
		 L2MC},
	};
	for (const Case &cs : cases) {
		INFO(cs.name);
		StageInstance bm(BUILD_META_STAGE_NAME, bm_keys);
		StageInstance l3(L3_DEMUX_STAGE_NAME,
				 {{"local_ipv6", "2001:db8::2/64"}, {"udp_ports", "2000"},
				  {"mcast_groups", "none"},
				  {"drop_unicast_in_l2_multicast", cs.ports}});
		REQUIRE(l3.ok());
		rte_mbuf *m = cs.frame.to_mbuf(pool());
		REQUIRE(m);
		m->port = cs.port;
		lrx_next_t next;
		run_packet({&bm, &l3}, &m, 1, &next);
		rte_pktmbuf_free(m);
		CHECK(next_name(next) == next_name(cs.expect));
		const bool refused = cs.expect == L2MC || cs.expect == INHDR;
		CHECK(l3.counter("Ip6InHdrErrors") == (refused ? 1u : 0u));
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux route: bad rp_filter, rp_filter_ports and ipv4_routes "
	  "are refused with a message", "[l3_demux][route]")
{
	eal_init();
	struct Bad {
		const char *key, *value, *expect;
	};
	const Bad bad = GENERATE(
		Bad{"rp_filter", "3", "0..2"},
		Bad{"rp_filter", "strict", "an integer"},
		Bad{"rp_filter_ports", "0=1", "port:mode"},
		Bad{"rp_filter_ports", "0:3", "port:mode"},
		Bad{"rp_filter_ports", "99999:1", "port:mode"},
		Bad{"ipv4_routes", "10.9.0.5/24", "no host bits"},
		Bad{"ipv4_routes", "10.9.0.0/24%x", "%port"},
		Bad{"ipv4_routes", "10.9.0.0/33", "IPv4 prefixes"},
		Bad{"ipv4_routes", "2001:db8::/64", "IPv4 prefixes"},
		Bad{"drop_unicast_in_l2_multicast", "yes", "ports"});
	StageInstance bm(BUILD_META_STAGE_NAME);
	StageInstance l3(L3_DEMUX_STAGE_NAME, {{bad.key, bad.value}});
	CHECK(l3.rc() == -EINVAL);
	std::string msg = l3.error();
	INFO(msg);
	CHECK(msg.find(bad.key) != std::string::npos);
	CHECK(msg.find(bad.value) != std::string::npos);
	CHECK(msg.find(bad.expect) != std::string::npos);
}
