// SPDX-License-Identifier: BSD-3-Clause
// l3-demux's replies (reply.c): each kind built byte by byte as Linux
// 6.18 builds it (the fields the kernel oracle compares, test_kernel_oracle
// _reply.cpp), its Out counters, when the kernel sends none, the rate
// limits under icmp_clock=polls, the switches, VLAN devices, and the same
// replies from every engine.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "engine_run.h"
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
	return mbuf_pool("reply_pool", 2047, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
}

const StageInstance::Keys bm_keys = {{"host_mac", "02:00:00:00:00:02"},
				     {"vlans", "7"}};
// a host at 10.0.0.2/24 and 2001:db8::2/64, no ICMP rate limit unless a
// test sets one, time by polls
const StageInstance::Keys l3_keys = {
	{"local_ipv4", "10.0.0.2/24"}, {"local_ipv6", "2001:db8::2/64"},
	{"udp_ports", "2000"},         {"tcp_ports", "5201"},
	{"arp_mac", "02:00:00:00:00:02"},
	{"icmp_ratelimit", "0"},       {"icmpv6_ratelimit", "0"},
	{"icmp_clock", "polls"},
};

using Bytes = std::vector<uint8_t>;

uint16_t be16(const Bytes &b, size_t off) { return (uint16_t)(b.at(off) << 8 | b.at(off + 1)); }
uint32_t be32(const Bytes &b, size_t off) { return (uint32_t)be16(b, off) << 16 | be16(b, off + 2); }

// The L4 checksum of a reply verifies (IPv4: ICMP alone or TCP with the
// pseudo header; IPv6: with it).
bool l4_ok(const Bytes &b, size_t l3, bool v6, uint8_t proto, size_t l4, size_t len)
{
	uint32_t sum = 0;
	if (v6 || proto == 6) {
		const size_t a = v6 ? l3 + 8 : l3 + 12, n = v6 ? 32 : 8;
		for (size_t i = 0; i < n; i += 2)
			sum += be16(b, a + i);
		sum += proto;
		sum += (uint32_t)len;
	}
	if (l4 + len > b.size())
		return false;
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += be16(b, l4 + i);
	if (len & 1)
		sum += (uint32_t)b[l4 + len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

Bytes doc6(uint8_t last)
{
	const Ip6 a = ip6_doc(last);
	return Bytes(a.begin(), a.end());
}

struct Out {
	lrx_next_t next;
	Bytes bytes;
	std::map<std::string, uint64_t> counters;
};

// One frame through build-meta + l3-demux, per packet or as a burst.
Out run1(const Frame &f, bool burst, const StageInstance::Keys &extra = {})
{
	StageInstance::Keys keys = l3_keys;
	for (auto &kv : extra)
		keys[kv.first] = kv.second;
	StageInstance bm(BUILD_META_STAGE_NAME, bm_keys);
	StageInstance l3(L3_DEMUX_STAGE_NAME, keys);
	INFO(l3.error());
	REQUIRE(l3.ok());
	rte_mbuf *m = f.to_mbuf(pool());
	REQUIRE(m);
	lrx_next_t next;
	if (burst)
		run_burst({&bm, &l3}, &m, 1, &next);
	else
		run_packet({&bm, &l3}, &m, 1, &next);
	Out o{next, mbuf_bytes(m), l3.counters()};
	rte_pktmbuf_free(m);
	return o;
}

// The Ethernet header of a reply: to the peer, from this host.
void check_l2(const Bytes &b, uint16_t ethertype)
{
	CHECK(Bytes(b.begin(), b.begin() + 6) == Bytes(mac_peer.begin(), mac_peer.end()));
	CHECK(Bytes(b.begin() + 6, b.begin() + 12) == Bytes(mac_host.begin(), mac_host.end()));
	CHECK(be16(b, 12) == ethertype);
}

Frame icmp4(uint8_t type, size_t payload = 20, uint8_t tos = 0)
{
	Spec s;
	s.l4 = L4::icmp;
	s.icmp_type = type;
	s.tos = tos;
	s.payload.assign(payload, 0x70);
	return build(s);
}

Frame tcp_syn(bool v6, const std::vector<uint8_t> &opts, uint16_t dport = 5201)
{
	Spec s;
	s.l3 = v6 ? L3::ipv6 : L3::ipv4;
	s.l4 = L4::tcp;
	s.tcp_flags = TCP_SYN;
	s.seq = 1000;
	s.dport = dport;
	s.tcp_options = opts;
	s.payload.clear();
	s.default_payload = false;
	return build(s);
}

} // namespace

TEST_CASE("l3-demux replies: ICMP port and protocol unreachable, IPv4 and "
	  "IPv6", "[l3_demux][reply]")
{
	eal_init();
	for (bool burst : {false, true}) {
		INFO((burst ? "burst" : "per packet"));
		// IPv4 UDP to a port without a socket, TOS 0xff
		Frame req = udp4(1000, 3000);
		req.set_u8(req.l2_len + 1, 0xff).ip4_fix_csum();
		Out o = run1(req, burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		const Bytes &b = o.bytes;
		check_l2(b, 0x0800);
		CHECK(b[14] == 0x45);
		CHECK(b[15] == 0xde);                // (tos & 0x1e) | 0xc0
		CHECK(be16(b, 16) == 20 + 8 + 46);   // the datagram quoted whole
		CHECK(be16(b, 20) == 0);             // no DF
		CHECK(b[22] == 64);
		CHECK(b[23] == 1);
		CHECK(be32(b, 26) == ip4(10, 0, 0, 2));
		CHECK(be32(b, 30) == ip4(10, 0, 0, 1));
		CHECK(inet_checksum(&b[14], 20) == 0);
		CHECK(b[34] == 3);
		CHECK(b[35] == 3);
		CHECK(be32(b, 38) == 0);
		CHECK(Bytes(b.begin() + 42, b.end()) ==
		      Bytes(req.data.begin() + 14, req.data.begin() + 14 + 46));
		CHECK(l4_ok(b, 14, false, 1, 34, b.size() - 34));
		CHECK(o.counters["UdpNoPorts"] == 1);
		CHECK(o.counters["IcmpOutMsgs"] == 1);
		CHECK(o.counters["IcmpOutDestUnreachs"] == 1);
		CHECK(o.counters["IcmpMsgOutType3"] == 1);
		CHECK(o.counters["IpOutRequests"] == 1);

		// a long datagram is quoted up to 576 bytes in all
		Spec big;
		big.dport = 3000;
		big.payload.assign(1000, 0x7a);
		o = run1(build(big), burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(be16(o.bytes, 16) == 576);
		CHECK(o.bytes.size() == 14 + 576);
		CHECK(l4_ok(o.bytes, 14, false, 1, 34, 556));

		// an unknown protocol: protocol unreachable
		o = run1(udp4().ip4_proto(253), burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(o.bytes[34] == 3);
		CHECK(o.bytes[35] == 2);
		CHECK(o.counters["IpInUnknownProtos"] == 1);

		// IPv6: port unreachable, quoted to 1280 bytes in all
		o = run1(udp6(1000, 3000), burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		const Bytes &c = o.bytes;
		check_l2(c, 0x86dd);
		CHECK(be32(c, 14) == 0x60000000); // traffic class 0, flow label 0
		CHECK(be16(c, 18) == 8 + 66);
		CHECK(c[20] == 58);
		CHECK(c[21] == 64);
		CHECK(Bytes(c.begin() + 22, c.begin() + 38) ==
		      doc6(2));
		CHECK(Bytes(c.begin() + 38, c.begin() + 54) ==
		      doc6(1));
		CHECK(c[54] == 1);
		CHECK(c[55] == 4);
		CHECK(l4_ok(c, 14, true, 58, 54, c.size() - 54));
		CHECK(o.counters["Udp6NoPorts"] == 1);
		CHECK(o.counters["Icmp6OutMsgs"] == 1);
		CHECK(o.counters["Icmp6OutDestUnreachs"] == 1);
		CHECK(o.counters["Icmp6OutType1"] == 1);
		CHECK(o.counters["Ip6OutRequests"] == 1);

		// unknown next header: parameter problem code 1 at the byte that
		// named it (6; 40 after a destination options header)
		o = run1(udp6().ip6_next_header(253), burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(o.bytes[54] == 4);
		CHECK(o.bytes[55] == 1);
		CHECK(be32(o.bytes, 58) == 6);
		o = run1(ip6_insert_ext(udp6(), 60, ip6_ext(253, {1, 4, 0, 0, 0, 0})),
			 burst);
		CHECK(be32(o.bytes, 58) == 40);
		CHECK(o.counters["Icmp6OutParmProblems"] == 1);
		CHECK(o.counters["Icmp6OutType4"] == 1);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux replies: parameter problems for IPv4 options and IPv6 "
	  "options and headers", "[l3_demux][reply]")
{
	eal_init();
	struct Case {
		const char *name;
		Frame f;
		uint8_t type, code;
		uint32_t pointer; // IPv4: in the top byte
	};
	auto v4opt = [](std::vector<uint8_t> opts, uint32_t dst = ip4(10, 0, 0, 2)) {
		Spec s;
		s.ip4_options = opts;
		s.ip4_dst = dst;
		return build(s);
	};
	const Case cases[] = {
		{"record route length 2", v4opt({7, 2, 0, 1}), 12, 0, 21u << 24},
		{"record route pointer 3 after a NOP", v4opt({1, 7, 7, 3, 0, 0, 0, 0}), 12, 0,
		 23u << 24},
		{"timestamp overflow 15", v4opt({68, 8, 9, 0xf0, 0, 0, 0, 0}), 12, 0, 23u << 24},
		{"an option longer than the rest", v4opt({0x99, 6, 0, 0}), 12, 0, 20u << 24},
		{"two source routes", v4opt({131, 3, 4, 131, 3, 4, 1, 1}), 12, 0, 23u << 24},
		{"bad option to another host on the subnet",
		 v4opt({7, 2, 0, 1}, ip4(10, 0, 0, 7)), 12, 0, 21u << 24},
		{"hop-by-hop unknown option 10",
		 ip6_insert_ext(udp6(), 0, ip6_ext(17, {0x9e, 2, 0, 0, 1, 0})), 4, 2, 42},
		{"destination options unknown option 11",
		 ip6_insert_ext(udp6(), 60, ip6_ext(17, {0xde, 2, 0, 0, 1, 0})), 4, 2, 42},
		{"routing type 0 with segments left",
		 ip6_insert_ext(udp6(), 43, ip6_ext(17, {0, 1, 0, 0, 0, 0})), 4, 0, 42},
		{"jumbo of a small packet",
		 ip6_insert_ext(udp6(), 0, ip6_ext(17, {0xc2, 4, 0, 0, 0, 40}))
			 .ip6_payload_length(0), 4, 0, 44},
	};
	for (const Case &c : cases) {
		for (bool burst : {false, true}) {
			INFO(c.name << (burst ? " (burst)" : " (per packet)"));
			Out o = run1(c.f, burst);
			REQUIRE(next_name(o.next) == "TX(0)");
			const bool v6 = c.f.l3 == L3::ipv6;
			const size_t l4 = v6 ? 54 : 34;
			CHECK(o.bytes[l4] == c.type);
			CHECK(o.bytes[l4 + 1] == c.code);
			CHECK(be32(o.bytes, l4 + 4) == c.pointer);
			CHECK(l4_ok(o.bytes, 14, v6, v6 ? 58 : 1, l4, o.bytes.size() - l4));
			if (!v6) {
				// from this host's address on the peer's subnet
				CHECK(be32(o.bytes, 26) == ip4(10, 0, 0, 2));
				CHECK(o.counters["IcmpOutParmProbs"] == 1);
				CHECK(o.counters["IcmpMsgOutType12"] == 1);
				CHECK(o.counters["IpInHdrErrors"] == 1);
			} else {
				CHECK(o.counters["Icmp6OutParmProblems"] == 1);
				CHECK(o.counters["Ip6InHdrErrors"] == 1);
			}
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux replies: echo and timestamp", "[l3_demux][reply]")
{
	eal_init();
	for (bool burst : {false, true}) {
		INFO((burst ? "burst" : "per packet"));
		Frame req = icmp4(8, 20, 0x10);
		Out o = run1(req, burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		const Bytes &b = o.bytes;
		check_l2(b, 0x0800);
		CHECK(b[15] == 0x10);                 // TOS kept
		CHECK(be16(b, 16) == 20 + 8 + 20);
		CHECK(be16(b, 20) == 0);
		CHECK(b[22] == 64);
		CHECK(be32(b, 26) == ip4(10, 0, 0, 2));
		CHECK(be32(b, 30) == ip4(10, 0, 0, 1));
		CHECK(inet_checksum(&b[14], 20) == 0);
		CHECK(b[34] == 0);
		CHECK(be32(b, 38) == be32(req.data, req.l4_off + 4)); // id, sequence
		CHECK(Bytes(b.begin() + 42, b.end()) ==
		      Bytes(req.data.begin() + req.l4_off + 8, req.data.begin() + req.l4_off + 28));
		CHECK(l4_ok(b, 14, false, 1, 34, 28));
		CHECK(o.counters["IcmpInEchos"] == 1);
		CHECK(o.counters["IcmpOutEchoReps"] == 1);
		CHECK(o.counters["IcmpMsgOutType0"] == 1);
		CHECK(o.counters["IcmpOutMsgs"] == 1);

		// timestamp: 20 bytes whatever came, originate copied, counted
		// as an echo reply (as Linux 6.18 counts it)
		Frame ts = icmp4(13, 12);
		ts.set_be32(ts.l4_off + 8, 0x01020304).l4_fix_csum();
		o = run1(ts, burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(be16(o.bytes, 16) == 40);
		CHECK(o.bytes[34] == 14);
		CHECK(be32(o.bytes, 42) == 0x01020304);
		CHECK(be32(o.bytes, 46) == be32(o.bytes, 50)); // receive = transmit
		CHECK(l4_ok(o.bytes, 14, false, 1, 34, 20));
		CHECK(o.counters["IcmpOutEchoReps"] == 1);
		CHECK(o.counters["IcmpMsgOutType0"] == 1);
		// shorter than an originate timestamp: IcmpInErrors
		o = run1(icmp4(13, 3), burst);
		CHECK(o.next == lrx_next_drop(LRX_DROP_PKT_TOO_SMALL));
		CHECK(o.counters["IcmpInErrors"] == 1);

		// IPv6 echo: traffic class kept; to a group, from this host
		Spec s6;
		s6.l3 = L3::ipv6;
		s6.l4 = L4::icmp;
		s6.icmp_type = 128;
		o = run1(build(s6), burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(o.bytes[54] == 129);
		CHECK(l4_ok(o.bytes, 14, true, 58, 54, o.bytes.size() - 54));
		CHECK(o.counters["Icmp6OutEchoReplies"] == 1);
		CHECK(o.counters["Icmp6OutType129"] == 1);
		s6.ip6_dst = ip6({0xff02, 0, 0, 0, 0, 0, 0, 1});
		s6.dst = {0x33, 0x33, 0, 0, 0, 1};
		o = run1(build(s6), burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(Bytes(o.bytes.begin() + 22, o.bytes.begin() + 38) ==
		      doc6(2));
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux replies: TCP reset and SYN-ACK", "[l3_demux][reply]")
{
	eal_init();
	for (bool burst : {false, true}) {
		INFO((burst ? "burst" : "per packet"));
		// a SYN to a closed port: RST|ACK acknowledging it
		Frame syn = tcp_syn(false, {}, 81);
		syn.set_u8(syn.l2_len + 1, 0x28).ip4_fix_csum();
		Out o = run1(syn, burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		const Bytes &b = o.bytes;
		CHECK(b.size() == 14 + 40);
		CHECK(b[15] == 0x28);            // TOS reflected
		CHECK(be16(b, 20) == 0x4000);    // DF, ID 0
		CHECK(be16(b, 18) == 0);
		CHECK(be16(b, 34) == 81);
		CHECK(be16(b, 36) == 1000);
		CHECK(be32(b, 38) == 0);
		CHECK(be32(b, 42) == 1001);
		CHECK(b[46] == 0x50);
		CHECK(b[47] == (TCP_RST | TCP_ACK));
		CHECK(be16(b, 48) == 0);
		CHECK(l4_ok(b, 14, false, 6, 34, 20));
		CHECK(o.counters["TcpOutRsts"] == 1);
		CHECK(o.counters["TcpOutSegs"] == 1);
		// an ACK with data: the reset takes its acknowledgment number
		Frame ack = tcp4(TCP_ACK | TCP_PSH, 1000, 81);
		ack.set_be32(ack.l4_off + 8, 5555).l4_fix_csum();
		o = run1(ack, burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(be32(o.bytes, 38) == 5555);
		CHECK(o.bytes[47] == TCP_RST);
		// never a reset to a reset
		o = run1(tcp4(TCP_RST, 1000, 81), burst);
		CHECK(o.next == lrx_next_drop(LRX_DROP_NO_SOCKET));
		CHECK(o.counters["TcpOutRsts"] == 0);

		// a SYN with MSS, SACK, timestamps, window scale to a listener
		const std::vector<uint8_t> opts = {2, 4, 5, 0xb4, 4, 2, 8, 10, 0, 0, 0, 1,
						   0, 0, 0, 0, 1, 3, 3, 7};
		o = run1(tcp_syn(false, opts), burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		const Bytes &s = o.bytes;
		CHECK(s[15] == 0);
		CHECK(be16(s, 20) == 0x4000);
		CHECK(be32(s, 42) == 1001);
		CHECK(s[46] == 0xa0); // 40 bytes of header
		CHECK(s[47] == (TCP_SYN | TCP_ACK));
		CHECK(be16(s, 48) == 65160); // 45 segments of 1448
		CHECK(Bytes(s.begin() + 54, s.begin() + 60) == Bytes({2, 4, 5, 0xb4, 4, 2}));
		CHECK(Bytes(s.begin() + 60, s.begin() + 62) == Bytes({8, 10}));
		CHECK(be32(s, 66) == 1); // tsecr: the SYN's tsval
		CHECK(Bytes(s.begin() + 70, s.end()) == Bytes({1, 3, 3, 10}));
		CHECK(l4_ok(s, 14, false, 6, 34, 40));
		CHECK(o.counters["TcpOutSegs"] == 1);
		CHECK(o.counters["TcpOutRsts"] == 0);
		// without options: MSS alone, 44 segments of 1460
		o = run1(tcp_syn(false, {}), burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(be16(o.bytes, 48) == 64240);
		CHECK(Bytes(o.bytes.begin() + 54, o.bytes.end()) == Bytes({2, 4, 5, 0xb4}));
		// IPv6: MSS 1440, the reset reflects the traffic class
		o = run1(tcp_syn(true, {}), burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(be16(o.bytes, 68) == 64800);
		CHECK(Bytes(o.bytes.begin() + 74, o.bytes.end()) == Bytes({2, 4, 5, 0xa0}));
		CHECK(l4_ok(o.bytes, 14, true, 6, 54, 24));
		Frame syn6 = tcp_syn(true, {}, 81);
		syn6.set_u8(syn6.l2_len, 0x62).set_u8(syn6.l2_len + 1, 0x80);
		o = run1(syn6, burst);
		REQUIRE(next_name(o.next) == "TX(0)");
		CHECK(be32(o.bytes, 14) == 0x62800000);
		CHECK(o.bytes[67] == (TCP_RST | TCP_ACK));
		CHECK(l4_ok(o.bytes, 14, true, 6, 54, 20));
		// data to a listener is delivered (an established connection)
		o = run1(tcp4(TCP_ACK, 1000, 5201), burst);
		CHECK(o.next == LRX_NEXT_DELIVER_V);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux replies: none where the kernel sends none",
	  "[l3_demux][reply]")
{
	eal_init();
	Spec bc;
	bc.dst = mac_broadcast;
	bc.ip4_dst = 0xffffffff;
	bc.dport = 3000;
	Spec mac_bc = bc;
	mac_bc.ip4_dst = ip4(10, 0, 0, 2); // a unicast address in a broadcast frame
	Spec frag;
	frag.dport = 3000;
	Spec icmp_err;
	icmp_err.l4 = L4::icmp;
	icmp_err.icmp_type = 3;
	icmp_err.ip4_options = {7, 2, 0, 1};
	Spec any6;
	any6.l3 = L3::ipv6;
	any6.ip6_src = Ip6{};
	any6.dport = 3000;
	Spec mc6;
	mc6.l3 = L3::ipv6;
	mc6.dst = {0x33, 0x33, 0, 0, 0, 1};
	mc6.ip6_dst = ip6({0xff02, 0, 0, 0, 0, 0, 0, 1});
	mc6.dport = 3000;
	struct Case {
		const char *name;
		Frame f;
		lrx_next_t fate;
	};
	const Case cases[] = {
		{"UDP to the limited broadcast", build(bc),
		 lrx_next_drop(LRX_DROP_NOT_SPECIFIED)},
		{"UDP to this host in a broadcast frame", build(mac_bc),
		 lrx_next_drop(LRX_DROP_NO_SOCKET)},
		{"an error about an ICMP error", build(icmp_err),
		 lrx_next_drop(LRX_DROP_NOT_SPECIFIED)},
		{"IPv6 from the unspecified address", build(any6),
		 lrx_next_drop(LRX_DROP_NO_SOCKET)},
		{"IPv6 UDP to a group", build(mc6), lrx_next_drop(LRX_DROP_NOT_SPECIFIED)},
		{"IPv6 unknown option 11 to a group",
		 ip6_insert_ext(build(mc6), 60, ip6_ext(17, {0xde, 2, 0, 0, 1, 0})),
		 lrx_next_drop(LRX_DROP_UNHANDLED_PROTO)},
		{"a protocol unreachable about a broadcast",
		 build(bc).ip4_proto(253), lrx_next_drop(LRX_DROP_IP_NOPROTO)},
	};
	for (const Case &c : cases)
		for (bool burst : {false, true}) {
			INFO(c.name << (burst ? " (burst)" : " (per packet)"));
			Out o = run1(c.f, burst, {{"mcast_groups", "any"}});
			CHECK(next_name(o.next) == next_name(c.fate));
			CHECK(o.counters["IcmpOutMsgs"] == 0);
			CHECK(o.counters["Icmp6OutMsgs"] == 0);
		}
	// but a group gets a parameter problem about an option of type 10
	Out o = run1(ip6_insert_ext(build(mc6), 60, ip6_ext(17, {0x9e, 2, 0, 0, 1, 0})),
		     false);
	REQUIRE(next_name(o.next) == "TX(0)");
	CHECK(Bytes(o.bytes.begin() + 22, o.bytes.begin() + 38) ==
	      doc6(2));
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux replies: each switch keeps the packet's fate",
	  "[l3_demux][reply]")
{
	eal_init();
	struct Case {
		const char *key, *off;
		Frame f;
		lrx_next_t fate;
	};
	const Case cases[] = {
		{"icmp_echo", "deliver", icmp4(8), LRX_NEXT_DELIVER_V},
		{"icmp_timestamp", "deliver", icmp4(13, 12), LRX_NEXT_DELIVER_V},
		{"icmp_unreach", "none", udp4(1000, 3000), lrx_next_drop(LRX_DROP_NO_SOCKET)},
		{"icmp_unreach", "none", udp4().ip4_proto(253), lrx_next_drop(LRX_DROP_IP_NOPROTO)},
		{"icmp_param_prob", "none", udp6().ip6_next_header(253),
		 lrx_next_drop(LRX_DROP_IP_NOPROTO)},
		{"tcp_rst", "none", tcp_syn(false, {}, 81), lrx_next_drop(LRX_DROP_NO_SOCKET)},
		{"tcp_synack", "none", tcp_syn(false, {}), LRX_NEXT_DELIVER_V},
	};
	for (const Case &c : cases)
		for (bool burst : {false, true}) {
			INFO(c.key << "=" << c.off << (burst ? " (burst)" : ""));
			Out o = run1(c.f, burst, {{c.key, c.off}});
			CHECK(next_name(o.next) == next_name(c.fate));
			// the packet as it came, less its Ethernet padding
			CHECK(o.bytes == Bytes(c.f.data.begin(),
					       c.f.data.begin() + c.f.l2_len + c.f.l3_len));
			CHECK(o.counters["IpOutRequests"] + o.counters["Ip6OutRequests"] == 0);
		}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux replies: on a VLAN device tagged, to a priority tag "
	  "untagged", "[l3_demux][reply]")
{
	eal_init();
	Spec s;
	s.vlans = {7};
	s.dport = 3000;
	Out o = run1(build(s), false);
	REQUIRE(next_name(o.next) == "TX(0)");
	CHECK(be16(o.bytes, 12) == 0x8100);
	CHECK(be16(o.bytes, 14) == 7);
	CHECK(be16(o.bytes, 16) == 0x0800);
	CHECK(o.bytes[18 + 20] == 3);
	s.vlans = {0x2000};
	o = run1(build(s), true);
	REQUIRE(next_name(o.next) == "TX(0)");
	CHECK(be16(o.bytes, 12) == 0x0800);
	CHECK(o.bytes[34] == 3);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux replies: no headroom, no reply", "[l3_demux][reply]")
{
	eal_init();
	StageInstance bm(BUILD_META_STAGE_NAME, bm_keys);
	StageInstance l3(L3_DEMUX_STAGE_NAME, l3_keys);
	REQUIRE(l3.ok());
	rte_mbuf *m = udp4(1000, 3000).to_mbuf(pool());
	REQUIRE(m);
	// the frame at the buffer's start: the error's 28 header bytes
	// before the quoted datagram do not fit
	const uint16_t len = m->data_len;
	std::vector<uint8_t> keep(rte_pktmbuf_mtod(m, uint8_t *),
				  rte_pktmbuf_mtod(m, uint8_t *) + len);
	m->data_off = 0;
	memcpy(rte_pktmbuf_mtod(m, uint8_t *), keep.data(), len);
	lrx_next_t next;
	run_packet({&bm, &l3}, &m, 1, &next);
	CHECK(next == lrx_next_drop(LRX_DROP_NO_SOCKET));
	CHECK(l3.counter("reply_no_room") == 1);
	CHECK(mbuf_bytes(m) == keep);
	rte_pktmbuf_free(m);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux replies: the per-peer and global ICMP rate limits count "
	  "polls at icmp_clock=polls, the same in every engine",
	  "[l3_demux][reply]")
{
	eal_init();
	// port unreachables to one peer; each end of poll is 1 ms
	struct Case {
		const char *name;
		StageInstance::Keys keys;
		std::vector<uint16_t> polls;
		bool echo;
		uint64_t sent, host, global;
	};
	const std::vector<uint16_t> three_of_ten = {10, 10, 10};
	const std::vector<uint16_t> one_each(11, 1);
	const Case cases[] = {
		// inet_peer_xrlim_allow: 6 timeouts of tokens for a new peer,
		// one per message
		{"per peer: a burst of 6", {{"icmp_ratelimit", "5"}}, three_of_ten, false,
		 6, 24, 0},
		// 30 tokens, each message -5, each poll +1: 7 messages at
		// t=0..6, then none until the tokens are 5 again at t=10
		{"per peer: refilled by the polls", {{"icmp_ratelimit", "5"}}, one_each,
		 false, 8, 3, 0},
		// icmp_global_allow: the burst, then no refill within 20 ms
		{"global: a burst of 2", {{"icmp_msgs_burst", "2"}}, three_of_ten, false,
		 2, 0, 28},
		{"global: icmp_ratemask 0 limits nothing",
		 {{"icmp_msgs_burst", "2"}, {"icmp_ratemask", "0"}}, three_of_ten, false,
		 30, 0, 0},
		{"echo replies are outside icmp_ratemask", {{"icmp_ratelimit", "5"}},
		 three_of_ten, true, 30, 0, 0},
	};
	for (const Case &c : cases) {
		INFO(c.name);
		const Frame f = c.echo ? icmp4(8) : udp4(1000, 3000);
		StageInstance::Keys keys = {
			{"local_ipv4", "10.0.0.2/24"}, {"udp_ports", "2000"},
			{"icmp_clock", "polls"}, {"icmp_ratelimit", "0"}};
		for (auto &kv : c.keys)
			keys[kv.first] = kv.second;
		StageKeys l3;
		for (auto &kv : keys)
			l3.emplace_back(kv.first, kv.second);
		EngineRun ref;
		for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
				  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
			INFO("engine " << lrx_engine_name(kind));
			EngineRun r = run_engine(
				kind, 1, 16,
				{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", l3}},
				[&](size_t) { return f.to_mbuf(pool()); }, c.polls);
			uint64_t sent = 0;
			for (auto &o : r.out)
				sent += lrx_next_kind(o.first) == LRX_NEXT_TX;
			if (kind == LRX_ENGINE_PACKET) {
				ref = r;
				CHECK(sent == c.sent);
				CHECK(r.counters[1]["IcmpOutRateLimitHost"] == c.host);
				CHECK(r.counters[1]["IcmpOutRateLimitGlobal"] == c.global);
				CHECK(r.counters[1]["IcmpOutMsgs"] == c.sent);
			}
			REQUIRE(r.out.size() == ref.out.size());
			for (size_t i = 0; i < r.out.size(); i++) {
				INFO("packet " << i);
				CHECK(r.out[i] == ref.out[i]);
			}
			CHECK(r.counters[1] == ref.counters[1]);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

// __udp4_lib_err, __udp6_lib_err, tcp_v4_err, tcp_v6_err: no socket for
// the quoted datagram counts InErrors; the error is still consumed
// (delivered), no reply.
TEST_CASE("l3-demux: an ICMP error quoting a datagram no socket sent counts "
	  "InErrors", "[l3_demux][icmp_err]")
{
	eal_init();
	struct Case {
		const char *name;
		Frame f;
		uint64_t in_errors;
		StageInstance::Keys keys;
	};
	const L4 U = L4::udp, T = L4::tcp;
	const Case cases[] = {
		{"port unreachable, UDP, no socket", icmp_error(false, 3, 3, U, 4444), 1, {}},
		{"port unreachable, UDP, the socket of 2000", icmp_error(false, 3, 3, U, 2000), 0, {}},
		{"host unreachable, TCP, no socket", icmp_error(false, 3, 1, T, 4444), 1, {}},
		{"host unreachable, TCP, the listener's port", icmp_error(false, 3, 1, T, 5201), 0, {}},
		{"source quench", icmp_error(false, 4, 0, U, 4444), 1, {}},
		{"redirect", icmp_error(false, 5, 1, U, 4444), 1, {}},
		{"time exceeded in transit", icmp_error(false, 11, 0, U, 4444), 1, {}},
		{"time exceeded in reassembly: not passed on", icmp_error(false, 11, 1, U, 4444), 0, {}},
		{"parameter problem", icmp_error(false, 12, 0, T, 4444), 1, {}},
		{"unreachable code 16: not passed on", icmp_error(false, 3, 16, U, 4444), 0, {}},
		{"quoting an echo request (ping_err counts nothing)",
		 icmp_error(false, 3, 3, L4::icmp, 0), 0, {}},
		// icmp_socket_deliver: the header and 8 bytes more, else InErrors
		{"the quoted header and 4 bytes", icmp_error(false, 3, 3, U, 2000, 2, 24), 1, {}},
		{"udp_ports any", icmp_error(false, 3, 3, U, 4444), 0, {{"udp_ports", "any"}}},
		{"udp_sockets: bound to the quoted source",
		 icmp_error(false, 3, 3, U, 4444), 0,
		 {{"udp_ports", "any"}, {"udp_sockets", "10.0.0.2:4444"}}},
		{"udp_sockets: bound to another address",
		 icmp_error(false, 3, 3, U, 4444, 3), 1,
		 {{"udp_ports", "any"}, {"udp_sockets", "10.0.0.2:4444"}}},
		{"tcp_ehash: no connection", icmp_error(false, 3, 1, T, 5201), 1,
		 {{"tcp_ehash", "1024"}}},
		{"IPv6 port unreachable, UDP, no socket", icmp_error(true, 1, 4, U, 4444), 1, {}},
		{"IPv6 port unreachable, UDP, the socket of 2000", icmp_error(true, 1, 4, U, 2000), 0, {}},
		{"IPv6 time exceeded, TCP, no socket", icmp_error(true, 3, 0, T, 4444), 1, {}},
		{"IPv6 packet too big, TCP, the listener's port", icmp_error(true, 2, 0, T, 5201), 0, {}},
		{"IPv6 parameter problem, UDP, no socket", icmp_error(true, 4, 0, U, 4444), 1, {}},
		{"IPv6 udp_sockets: bound to the quoted source",
		 icmp_error(true, 1, 4, U, 4444), 0,
		 {{"udp_ports", "any"}, {"udp_sockets", "[2001:db8::2]:4444"}}},
	};
	for (const Case &c : cases)
		for (bool burst : {false, true}) {
			INFO(c.name << (burst ? " (burst)" : " (per packet)"));
			Out o = run1(c.f, burst, c.keys);
			CHECK(next_name(o.next) == "DELIVER");
			CHECK(o.counters["IcmpInErrors"] + o.counters["Icmp6InErrors"] ==
			      c.in_errors);
			CHECK(o.counters["IcmpInMsgs"] + o.counters["Icmp6InMsgs"] == 1);
			CHECK(o.counters["IcmpOutMsgs"] + o.counters["Icmp6OutMsgs"] == 0);
		}
	LRX_REQUIRE_POOL_FULL(pool());
}

// ip_route_output_key / ip6_dst_lookup with no route back to an off-link
// source: ipv4_routes / ipv6_routes = subnets (a namespace without a
// default route) sends nothing, with the kernel's counters (measured on
// Linux 6.18 by test_kernel_oracle_reply.cpp); none (the default) and a
// default route answer.
TEST_CASE("l3-demux replies: none to a source without a route back",
	  "[l3_demux][reply][route]")
{
	eal_init();
	const uint32_t off4 = ip4(10, 7, 0, 5);
	const Ip6 off6 = ip6({0x2001, 0xdb9, 0, 0, 0, 0, 0, 5});
	const Frame udp_v4 = udp4(1000, 3000).ip4_src(off4).l4_fix_csum();
	const Frame echo_v4 = with([](Spec &s) { s.l4 = L4::icmp; }).ip4_src(off4).l4_fix_csum();
	const Frame rst_v4 = tcp_syn(false, {}, 2001).ip4_src(off4).l4_fix_csum();
	const Frame udp_v6 = udp6(1000, 3000).ip6_src(off6).l4_fix_csum();
	const Frame echo_v6 = with([](Spec &s) {
		s.l3 = L3::ipv6;
		s.l4 = L4::icmp;
	}).ip6_src(off6).l4_fix_csum();
	const Frame rst_v6 = tcp_syn(true, {}, 2001).ip6_src(off6).l4_fix_csum();
	const StageInstance::Keys nodefault = {{"ipv4_routes", "subnets"},
					       {"ipv6_routes", "subnets"}};
	for (bool burst : {false, true}) {
		INFO((burst ? "burst" : "per packet"));
		Out o = run1(udp_v4, burst, nodefault);
		CHECK(next_name(o.next) == next_name(lrx_next_drop(LRX_DROP_NO_SOCKET)));
		CHECK(o.counters["UdpNoPorts"] == 1);
		CHECK(o.counters["IcmpOutMsgs"] == 0);
		CHECK(o.counters["IpOutRequests"] == 0);
		o = run1(echo_v4, burst, nodefault);
		CHECK(next_name(o.next) == "DELIVER");
		CHECK(o.counters["IcmpOutMsgs"] == 0);
		// tcp_v4_send_reset counts the reset ip_send_unicast_reply
		// could not route
		o = run1(rst_v4, burst, nodefault);
		CHECK(next_name(o.next) == next_name(lrx_next_drop(LRX_DROP_NO_SOCKET)));
		CHECK(o.counters["TcpOutSegs"] == 1);
		CHECK(o.counters["TcpOutRsts"] == 1);
		CHECK(o.counters["IpOutRequests"] == 0);
		// icmpv6_xrlim_allow's lookup fails: no route, and rate limited
		o = run1(udp_v6, burst, nodefault);
		CHECK(next_name(o.next) == next_name(lrx_next_drop(LRX_DROP_NO_SOCKET)));
		CHECK(o.counters["Ip6OutNoRoutes"] == 1);
		CHECK(o.counters["Icmp6OutRateLimitHost"] == 1);
		CHECK(o.counters["Icmp6OutMsgs"] == 0);
		o = run1(echo_v6, burst, nodefault);
		CHECK(next_name(o.next) == "DELIVER");
		CHECK(o.counters["Ip6OutNoRoutes"] == 1);
		CHECK(o.counters["Icmp6OutRateLimitHost"] == 0);
		CHECK(o.counters["Icmp6OutMsgs"] == 0);
		o = run1(rst_v6, burst, nodefault);
		CHECK(next_name(o.next) == next_name(lrx_next_drop(LRX_DROP_NO_SOCKET)));
		CHECK(o.counters["Ip6OutNoRoutes"] == 1);
		CHECK(o.counters["TcpOutSegs"] == 0);
		CHECK(o.counters["Ip6OutRequests"] == 0);
		// a SYN to the listener: inet_csk_route_req finds no route,
		// tcp_conn_request drops the request (no request socket in
		// the established table), the SYN stays consumed
		for (bool v6 : {false, true}) {
			INFO((v6 ? "SYN6" : "SYN") << " to the listener");
			StageInstance::Keys k = nodefault;
			k["tcp_ehash"] = "64";
			o = run1(v6 ? Frame(tcp_syn(true, {})).ip6_src(off6).l4_fix_csum()
				    : Frame(tcp_syn(false, {})).ip4_src(off4).l4_fix_csum(),
				 burst, k);
			CHECK(next_name(o.next) == "DELIVER");
			CHECK(o.counters[v6 ? "Ip6OutNoRoutes" : "IpOutNoRoutes"] == 1);
			CHECK(o.counters["TcpExtListenDrops"] == 1);
			CHECK(o.counters["TcpOutSegs"] == 0);
			CHECK(o.counters["tcp_ehash_inserted"] == 0);
			k.erase("ipv4_routes");
			k.erase("ipv6_routes");
			o = run1(v6 ? Frame(tcp_syn(true, {})).ip6_src(off6).l4_fix_csum()
				    : Frame(tcp_syn(false, {})).ip4_src(off4).l4_fix_csum(),
				 burst, k);
			CHECK(next_name(o.next) == "TX(0)");
			CHECK(o.counters["TcpExtListenDrops"] == 0);
			CHECK(o.counters["tcp_ehash_inserted"] == 1);
		}
		// on-link and link-local sources have their prefix routes
		o = run1(udp4(1000, 3000), burst, nodefault);
		CHECK(next_name(o.next) == "TX(0)");
		o = run1(udp6(1000, 3000).ip6_src(ip6({0xfe80, 0, 0, 0, 0, 0, 0, 1})).l4_fix_csum(),
			 burst, nodefault);
		CHECK(next_name(o.next) == "TX(0)");
		// the default (none), a default route, a route to the source
		for (const StageInstance::Keys &k :
		     {StageInstance::Keys{},
		      StageInstance::Keys{{"ipv4_routes", "0.0.0.0/0%0"}, {"ipv6_routes", "::/0"}},
		      StageInstance::Keys{{"ipv4_routes", "10.7.0.0/16"},
					  {"ipv6_routes", "2001:db9::/32%0"}}}) {
			for (const Frame *f : {&udp_v4, &echo_v4, &rst_v4, &udp_v6, &echo_v6, &rst_v6}) {
				o = run1(*f, burst, k);
				CHECK(next_name(o.next) == "TX(0)");
				CHECK(o.counters["Ip6OutNoRoutes"] == 0);
			}
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("l3-demux: bad ipv4_routes and ipv6_routes name the key",
	  "[l3_demux][route]")
{
	eal_init();
	for (auto kv : std::vector<std::pair<std::string, std::string>>{
		     {"ipv6_routes", "2001:db8::1/64"},
		     {"ipv6_routes", "10.0.0.0/8"},
		     {"ipv6_routes", "2001:db8::/129"},
		     {"ipv6_routes", "::/0%x"},
		     {"ipv4_routes", "subnets+10.0.0.0/8"},
		     {"ipv4_routes", "2001:db8::/64"}}) {
		INFO(kv.first << "=" << kv.second);
		StageInstance::Keys keys = l3_keys;
		keys[kv.first] = kv.second;
		StageInstance l3(L3_DEMUX_STAGE_NAME, keys);
		CHECK_FALSE(l3.ok());
		CHECK(std::string(l3.error()).find(kv.first) != std::string::npos);
	}
}
