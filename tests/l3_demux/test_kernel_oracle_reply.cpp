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
// ICMP rate limit, frames from the host's own address (LAND: no reply,
// in_martian_src), VLAN tags with no VLAN device (this kernel has no
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
#include "frames.h"
#include "netns_oracle.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;

namespace {

using Bytes = std::vector<uint8_t>;

struct Named {
	std::string name;
	Frame frame;
};

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

Frame icmp4(uint8_t type, size_t payload, uint8_t tos = 0, uint8_t code = 0)
{
	return with([&](Spec &s) {
		s.l4 = L4::icmp;
		s.icmp_type = type;
		s.icmp_code = code;
		s.tos = tos;
		s.payload.assign(payload, 0x70);
	});
}

Frame tcp(bool v6, uint8_t flags, uint16_t dport, const std::vector<uint8_t> &opts = {},
	  size_t payload = 0, uint8_t tos = 0, uint16_t sport = 2000)
{
	return with([&](Spec &s) {
		s.l3 = v6 ? L3::ipv6 : L3::ipv4;
		s.l4 = L4::tcp;
		s.tcp_flags = flags;
		s.seq = 1000;
		s.ack = flags & TCP_ACK ? 5555 : 0;
		s.sport = sport;
		s.dport = dport;
		s.tos = tos;
		s.tcp_options = opts;
		s.payload.assign(payload, 0x64);
		s.default_payload = false;
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

// The counters compared (the kernel's nstat deltas, listrx's l3-demux).
const char *const compared[] = {
	"IpInReceives", "IpInHdrErrors", "IpInAddrErrors", "IpInDelivers",
	"IpInUnknownProtos", "IpExtInBcastPkts", "IpOutRequests",
	"UdpInDatagrams", "UdpNoPorts", "UdpInErrors", "UdpIgnoredMulti",
	"TcpInSegs", "TcpInErrs", "TcpOutSegs", "TcpOutRsts",
	"IcmpInMsgs", "IcmpInErrors", "IcmpInEchos", "IcmpOutMsgs",
	"IcmpOutEchoReps", "IcmpOutDestUnreachs", "IcmpOutParmProbs",
	"IcmpOutRateLimitHost", "IcmpMsgOutType0", "IcmpMsgOutType3",
	"IcmpMsgOutType12",
	"Ip6InReceives", "Ip6InHdrErrors", "Ip6InTruncatedPkts", "Ip6InAddrErrors",
	"Ip6InDelivers", "Ip6InUnknownProtos", "Ip6InMcastPkts", "Ip6OutRequests",
	"Udp6InDatagrams", "Udp6NoPorts", "Udp6IgnoredMulti",
	"Icmp6InMsgs", "Icmp6InEchos", "Icmp6OutMsgs", "Icmp6OutEchoReplies",
	"Icmp6OutDestUnreachs", "Icmp6OutParmProblems", "Icmp6OutRateLimitHost",
	"Icmp6OutType1", "Icmp6OutType4", "Icmp6OutType129",
};

// A kernel reply with IP options (echoed from the request,
// __ip_options_echo: listrx does not echo them) without them.
Bytes strip_ip_options(Bytes b)
{
	if (b.size() < 34 || b[12] != 0x08 || b[13] != 0x00 || (b[14] & 0xf) == 5)
		return b;
	const size_t opt = (b[14] & 0xf) * 4u - 20;
	b.erase(b.begin() + 34, b.begin() + 34 + (long)opt);
	b[14] = 0x45;
	const uint16_t total = (uint16_t)((b[16] << 8 | b[17]) - opt);
	b[16] = (uint8_t)(total >> 8);
	b[17] = (uint8_t)total;
	return b;
}

// What the kernel draws from a secret or the clock, cleared on both sides:
// the IPv4 ID and header checksum, the IPv6 flow label, a timestamp
// reply's times and checksum, a SYN-ACK's sequence number, timestamp
// value and checksum.
Bytes normalize(Bytes b)
{
	if (b.size() < 14)
		return b;
	size_t l3 = 12;
	uint16_t type = (uint16_t)(b[l3] << 8 | b[l3 + 1]);
	while (type == 0x8100 && b.size() >= l3 + 6) {
		l3 += 4;
		type = (uint16_t)(b[l3] << 8 | b[l3 + 1]);
	}
	l3 += 2;
	size_t l4 = 0;
	uint8_t proto = 0;
	if (type == 0x0800 && b.size() >= l3 + 20) {
		b[l3 + 4] = b[l3 + 5] = b[l3 + 10] = b[l3 + 11] = 0;
		l4 = l3 + (b[l3] & 0xf) * 4u;
		proto = b[l3 + 9];
	} else if (type == 0x86dd && b.size() >= l3 + 40) {
		b[l3 + 1] &= 0xf0;
		b[l3 + 2] = b[l3 + 3] = 0;
		l4 = l3 + 40;
		proto = b[l3 + 6];
	}
	if (proto == 1 && b.size() >= l4 + 20 && b[l4] == 14) {
		for (size_t i = 12; i < 20; i++)
			b[l4 + i] = 0;
		b[l4 + 2] = b[l4 + 3] = 0;
	}
	if (proto == 6 && b.size() >= l4 + 20 && (b[l4 + 13] & 0x12) == 0x12) {
		for (size_t i = 4; i < 8; i++)
			b[l4 + i] = 0;
		b[l4 + 16] = b[l4 + 17] = 0;
		const size_t end = l4 + (b[l4 + 12] >> 4) * 4u;
		for (size_t o = l4 + 20; o + 1 < end && o + 1 < b.size();) {
			if (b[o] <= 1) {
				o++;
				continue;
			}
			if (b[o] == 8 && o + 6 <= b.size())
				b[o + 2] = b[o + 3] = b[o + 4] = b[o + 5] = 0;
			o += b[o + 1] ? b[o + 1] : 1;
		}
	}
	return b;
}

std::string hex(const Bytes &b)
{
	std::string s;
	char x[4];
	for (uint8_t c : b) {
		snprintf(x, sizeof(x), "%02x", c);
		s += x;
	}
	return s;
}

// A TCP listener on 5201 (IPv4 and IPv6) inside the namespace, made from a
// thread that enters it.
struct Listener {
	std::vector<int> fds;
	std::string error;
	explicit Listener(const Netns &net)
	{
		std::string failed;
		error = in_netns(net, [&] {
			int one = 1;
			int v4 = socket(AF_INET, SOCK_STREAM, 0);
			sockaddr_in a4{};
			a4.sin_family = AF_INET;
			a4.sin_port = htons(5201);
			int v6 = socket(AF_INET6, SOCK_STREAM, 0);
			setsockopt(v6, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
			sockaddr_in6 a6{};
			a6.sin6_family = AF_INET6;
			a6.sin6_port = htons(5201);
			if (bind(v4, (sockaddr *)&a4, sizeof(a4)) || listen(v4, 64) ||
			    bind(v6, (sockaddr *)&a6, sizeof(a6)) || listen(v6, 64))
				failed = "cannot listen on 5201";
			fds = {v4, v6};
		});
		if (error.empty())
			error = failed;
	}
	~Listener()
	{
		for (int fd : fds)
			close(fd);
	}
};

struct KernelRun {
	std::vector<std::vector<Bytes>> replies; // per frame
	std::map<std::string, uint64_t> counters;
};

// Frames sent one at a time, each frame's replies read for wait_ms
// (or all at once, then every reply read together: burst).
KernelRun kernel_run(const Netns &net, const std::vector<Named> &frames, int wait_ms,
		     bool burst = false)
{
	KernelRun k;
	ReplyTap tap(net.outside);
	REQUIRE(tap.ok());
	tap.take(50);
	auto before = nstat(net.ns);
	RawSender tx(net.outside);
	REQUIRE(tx.ok());
	if (burst) {
		for (auto &f : frames)
			REQUIRE(tx.send(f.frame.data));
		k.replies.push_back(tap.take(wait_ms));
	} else {
		for (auto &f : frames) {
			REQUIRE(tx.send(f.frame.data));
			k.replies.push_back(tap.take(wait_ms));
		}
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(100));
	auto after = nstat(net.ns);
	for (const char *name : compared)
		k.counters[name] = after[name] - before[name];
	// what the host sends on its own (neighbour discovery, MLD reports:
	// ICMPv6 133..143) is no reply
	uint64_t own = 0;
	for (int t = 133; t <= 143; t++) {
		const std::string name = "Icmp6OutType" + std::to_string(t);
		own += after[name] - before[name];
	}
	k.counters["Icmp6OutMsgs"] -= own;
	k.counters["Ip6OutRequests"] -= own;
	return k;
}

bool can_run(Netns &net)
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return false;
	}
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return false;
	}
	eal_init();
	return true;
}

const StageKeys l3_keys = {
	{"local_ipv4", "10.0.0.2/24"}, {"local_ipv6", "2001:db8::2/64"},
	{"udp_ports", "none"},         {"tcp_ports", "5201"},
	{"mcast_groups", "none"},      {"trust_ip_csum_hint", "no"},
	{"arp_mac", "02:00:00:00:00:02"}, {"icmp_clock", "polls"},
	{"ipv6_mip6", "no"},
};

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

// rt_cache's in_martian_src summed over the CPUs (/proc/net/stat/rt_cache,
// hex, one line per CPU). The statistic is the kernel's, not the
// namespace's (RT_CACHE_STAT_INC on a per-CPU global): a martian source
// elsewhere on the host while the frames go in counts too.
uint64_t in_martian_src()
{
	FILE *f = std::fopen("/proc/net/stat/rt_cache", "r");
	if (!f)
		return 0;
	char line[1024];
	uint64_t sum = 0;
	int col = -1;
	while (std::fgets(line, sizeof(line), f)) {
		std::istringstream is(line);
		std::vector<std::string> words;
		for (std::string w; is >> w;)
			words.push_back(w);
		if (col < 0) {
			for (size_t i = 0; i < words.size(); i++)
				if (words[i] == "in_martian_src")
					col = (int)i;
			continue;
		}
		if ((size_t)col < words.size())
			sum += std::stoull(words[(size_t)col], nullptr, 16);
	}
	std::fclose(f);
	return sum;
}

} // namespace

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
