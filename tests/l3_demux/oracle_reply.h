// SPDX-License-Identifier: BSD-3-Clause
// What the kernel-oracle tests of replies and martian sources share: the
// frames (named), the nstat counters compared, a reply with what the
// kernel draws from a secret cleared, a TCP listener in the namespace,
// one run of frames through the kernel with its replies and counters,
// the l3-demux keys configured like the namespace (netns_oracle.h) and
// the host's in_martian_src.
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "engine_run.h"
#include "frames.h"
#include "netns_oracle.h"
#include "test_eal.h"

namespace lrx_test::oracle {

using namespace lrx_test::frames;

using Bytes = std::vector<uint8_t>;

struct Named {
	std::string name;
	Frame frame;
};


inline Frame icmp4(uint8_t type, size_t payload, uint8_t tos = 0, uint8_t code = 0)
{
	return with([&](Spec &s) {
		s.l4 = L4::icmp;
		s.icmp_type = type;
		s.icmp_code = code;
		s.tos = tos;
		s.payload.assign(payload, 0x70);
	});
}

inline Frame tcp(bool v6, uint8_t flags, uint16_t dport, const std::vector<uint8_t> &opts = {},
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

// The counters compared (the kernel's nstat deltas, listrx's l3-demux).
inline const char *const compared[] = {
	"IpInReceives", "IpInHdrErrors", "IpInAddrErrors", "IpInDelivers",
	"IpInUnknownProtos", "IpExtInBcastPkts", "IpOutRequests",
	"UdpInDatagrams", "UdpNoPorts", "UdpInErrors", "UdpIgnoredMulti",
	"TcpInSegs", "TcpInErrs", "TcpOutSegs", "TcpOutRsts", "TcpExtListenDrops",
	"IpOutNoRoutes",
	"IcmpInMsgs", "IcmpInErrors", "IcmpInEchos", "IcmpOutMsgs",
	"IcmpOutEchoReps", "IcmpOutDestUnreachs", "IcmpOutParmProbs",
	"IcmpOutRateLimitHost", "IcmpMsgOutType0", "IcmpMsgOutType3",
	"IcmpMsgOutType12",
	"Ip6InReceives", "Ip6InHdrErrors", "Ip6InTruncatedPkts", "Ip6InAddrErrors",
	"Ip6InDelivers", "Ip6InUnknownProtos", "Ip6InMcastPkts", "Ip6OutRequests",
	"Udp6InDatagrams", "Udp6NoPorts", "Udp6IgnoredMulti",
	"Ip6OutNoRoutes",
	"Icmp6InMsgs", "Icmp6InErrors", "Icmp6InEchos", "Icmp6OutMsgs", "Icmp6OutEchoReplies",
	"Icmp6OutDestUnreachs", "Icmp6OutParmProblems", "Icmp6OutRateLimitHost",
	"Icmp6OutType1", "Icmp6OutType4", "Icmp6OutType129",
	"TcpExtIPReversePathFilter",
};

// A kernel reply with IP options (echoed from the request,
// __ip_options_echo: listrx does not echo them) without them.
inline Bytes strip_ip_options(Bytes b)
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
inline Bytes normalize(Bytes b)
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

inline std::string hex(const Bytes &b)
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
inline KernelRun kernel_run(const Netns &net, const std::vector<Named> &frames, int wait_ms,
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

inline bool can_run(Netns &net)
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

inline const StageKeys l3_keys = {
	{"local_ipv4", "10.0.0.2/24"}, {"local_ipv6", "2001:db8::2/64"},
	{"udp_ports", "none"},         {"tcp_ports", "5201"},
	{"mcast_groups", "none"},      {"trust_ip_csum_hint", "no"},
	{"arp_mac", "02:00:00:00:00:02"}, {"icmp_clock", "polls"},
	{"ipv6_mip6", "no"},
};


// rt_cache's in_martian_src summed over the CPUs (/proc/net/stat/rt_cache,
// hex, one line per CPU). The statistic is the kernel's, not the
// namespace's (RT_CACHE_STAT_INC on a per-CPU global): a martian source
// elsewhere on the host while the frames go in counts too.
inline uint64_t in_martian_src()
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


} // namespace lrx_test::oracle
