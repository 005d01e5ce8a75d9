// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for IPv6 extension headers and for multicast/broadcast:
// frames designed for each rule are replayed into a veth whose peer lives
// in a fresh network namespace (netns_oracle.h: 10.0.0.2/24,
// 2001:db8::2/64, no UDP sockets, RX checksum offload off) that also
// joined 239.1.1.1 and ff05::1 (IP_ADD_MEMBERSHIP, IPV6_JOIN_GROUP), and
// through build-meta,l3-demux configured alike under every engine; the
// kernel's `nstat` counters and listrx's must agree. (Groups are joined by
// a socket: `ip addr add G dev IF autojoin` would also make G a local
// address, which IPv6 then routes as local, not multicast.) Needs root and
// network namespaces; skips with a printed reason otherwise.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>

#include <chrono>
#include <cstdio>
#include <map>
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

struct Named {
	const char *name;
	Frame frame;
};

// udp6() to port 3000 (no socket) with extension headers after the fixed
// header.
Frame ext6(uint8_t first, const std::vector<uint8_t> &ext)
{
	return ip6_insert_ext(udp6(1000, 3000), first, ext);
}

std::vector<uint8_t> cat(std::vector<std::vector<uint8_t>> parts)
{
	std::vector<uint8_t> out;
	for (auto &p : parts)
		out.insert(out.end(), p.begin(), p.end());
	return out;
}

// A type 2 routing header (RFC 6275 6.4): hdrlen 2, one address.
std::vector<uint8_t> rh2(uint8_t segments_left, const Ip6 &home)
{
	std::vector<uint8_t> body(6 + home.size(), 0);
	body[0] = 2;
	body[1] = segments_left;
	for (size_t i = 0; i < home.size(); i++)
		body[6 + i] = home[i];
	return ip6_ext(17, body);
}

std::vector<Named> ext_frames()
{
	const Ip6 ff02_1 = ip6({0xff02, 0, 0, 0, 0, 0, 0, 1});
	const std::vector<uint8_t> padn = {1, 4, 0, 0, 0, 0};
	std::vector<uint8_t> six;
	for (int i = 0; i < 6; i++)
		six = cat({six, ip6_ext(i == 5 ? 17 : 60, padn)});
	Frame trunc = ext6(60, {17, 1, 1, 4, 0, 0, 0, 0});
	trunc.ip6_payload_length(8).truncate(trunc.l2_len + 48u);
	Frame hbh = with([](Spec &s) { s.l3 = L3::ipv6; s.ip6_hop_by_hop = true; s.dport = 3000; });
	Frame hbh_bad = hbh;
	hbh_bad.set_u8(hbh.l2_len + 40 + 2, 0x47);
	return {
		{"dstopts PadN", ext6(60, ip6_ext(17, padn))},
		{"dstopts 6 x Pad1", ext6(60, ip6_ext(17, {0, 0, 0, 0, 0, 0}))},
		{"dstopts 8 bytes of padding",
		 ext6(60, ip6_ext(17, {1, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}))},
		{"dstopts PadN data not zero", ext6(60, ip6_ext(17, {1, 4, 0, 1, 0, 0}))},
		{"dstopts unknown 00", ext6(60, ip6_ext(17, {0x1e, 2, 0, 0, 1, 0}))},
		{"dstopts unknown 01", ext6(60, ip6_ext(17, {0x5e, 2, 0, 0, 1, 0}))},
		{"dstopts unknown 10", ext6(60, ip6_ext(17, {0x9e, 2, 0, 0, 1, 0}))},
		{"dstopts unknown 11", ext6(60, ip6_ext(17, {0xde, 2, 0, 0, 1, 0}))},
		{"dstopts unknown 11 to a group",
		 ext6(60, ip6_ext(17, {0xde, 2, 0, 0, 1, 0})).ip6_dst(ff02_1)},
		{"dstopts option past the header", ext6(60, ip6_ext(17, {0x1e, 9, 0, 0, 0, 0}))},
		{"dstopts truncated", trunc},
		{"dstopts then no next header", ext6(60, ip6_ext(59, padn))},
		{"no next header", udp6(1000, 3000).ip6_next_header(59)},
		{"hop-by-hop after dstopts", ext6(60, cat({ip6_ext(0, padn), ip6_ext(17, padn)}))},
		{"chain of 6 dstopts", ext6(60, six)},
		{"hop-by-hop PadN", hbh},
		{"hop-by-hop unknown 01", hbh_bad},
		{"routing type 0, segments left 0", ext6(43, ip6_ext(17, {0, 0, 0, 0, 0, 0}))},
		{"routing type 0, segments left 1", ext6(43, ip6_ext(17, {0, 1, 0, 0, 0, 0}))},
		{"routing type 2, segments left 0", ext6(43, rh2(0, ip6_doc(2)))},
		{"routing type 2, segments left 1 (valid form)", ext6(43, rh2(1, ip6_doc(2)))},
		{"routing type 2, segments left 1, hdrlen 0",
		 ext6(43, ip6_ext(17, {2, 1, 0, 0, 0, 0}))},
		{"routing type 3, segments left 0", ext6(43, ip6_ext(17, {3, 0, 0, 0, 0, 0}))},
		{"routing type 4, segments left 0", ext6(43, ip6_ext(17, {4, 0, 0, 0, 0, 0}))},
		{"routing type 4, segments left 1", ext6(43, ip6_ext(17, {4, 1, 0, 0, 0, 0}))},
		{"routing header to a group",
		 ext6(43, ip6_ext(17, {0, 0, 0, 0, 0, 0})).ip6_dst(ff02_1)},
		{"routing header truncated",
		 ext6(43, ip6_ext(17, {0, 0, 0, 0, 0, 0})).ip6_payload_length(4)},
	};
}

Mac mc_mac4(uint32_t g)
{
	return {0x01, 0x00, 0x5e, (uint8_t)(g >> 16 & 0x7f), (uint8_t)(g >> 8),
		(uint8_t)g};
}

Frame v4(Mac mac, uint32_t src, uint32_t dst, uint16_t dport, size_t payload)
{
	return with([&](Spec &s) {
		s.dst = mac;
		s.ip4_src = src;
		s.ip4_dst = dst;
		s.dport = dport;
		s.payload.assign(payload, 0x5a);
	});
}

Frame v6(const Ip6 &dst, uint16_t dport, size_t payload)
{
	return with([&](Spec &s) {
		s.l3 = L3::ipv6;
		s.dst = {0x33, 0x33, dst[12], dst[13], dst[14], dst[15]};
		s.ip6_dst = dst;
		s.dport = dport;
		s.payload.assign(payload, 0x5a);
	});
}

// ICMP of a type (the checksum follows) to dst with dst MAC mac.
Frame icmp4(Mac mac, uint32_t dst, uint8_t type)
{
	return with([&](Spec &s) {
		s.dst = mac;
		s.ip4_dst = dst;
		s.l4 = L4::icmp;
		s.icmp_type = type;
	});
}

std::vector<Named> mcast_frames()
{
	const uint32_t peer = ip4(10, 0, 0, 1), g = ip4(239, 1, 1, 1);
	const Ip6 ff05_1 = ip6({0xff05, 0, 0, 0, 0, 0, 0, 1});
	return {
		{"v4 joined, no socket", v4(mc_mac4(g), peer, g, 3000, 18)},
		{"v4 joined, short, bad checksum",
		 v4(mc_mac4(g), peer, g, 3000, 18).l4_corrupt_csum()},
		{"v4 joined, long, bad checksum",
		 v4(mc_mac4(g), peer, g, 3000, 200).l4_corrupt_csum()},
		{"v4 joined, zero checksum", v4(mc_mac4(g), peer, g, 3000, 18).udp_zero_csum()},
		{"v4 joined, unicast MAC", v4(mac_host, peer, g, 3000, 18)},
		{"v4 not joined", v4(mc_mac4(ip4(239, 9, 9, 9)), peer, ip4(239, 9, 9, 9), 3000, 18)},
		{"v4 all-hosts", v4(mc_mac4(ip4(224, 0, 0, 1)), peer, ip4(224, 0, 0, 1), 3000, 18)},
		{"v4 all-routers (not joined)",
		 v4(mc_mac4(ip4(224, 0, 0, 2)), peer, ip4(224, 0, 0, 2), 3000, 18)},
		{"v4 from 0.0.0.0 to all-hosts",
		 v4(mc_mac4(ip4(224, 0, 0, 1)), 0, ip4(224, 0, 0, 1), 3000, 18)},
		{"v4 from 0.0.0.0 to a global group", v4(mc_mac4(g), 0, g, 3000, 18)},
		{"v4 from loopback to a group", v4(mc_mac4(g), ip4(127, 0, 0, 1), g, 3000, 18)},
		{"v4 directed broadcast", v4(mac_broadcast, peer, ip4(10, 0, 0, 255), 3000, 18)},
		{"v4 directed broadcast, unicast MAC",
		 v4(mac_host, peer, ip4(10, 0, 0, 255), 3000, 18)},
		{"v4 directed broadcast, long, bad checksum",
		 v4(mac_broadcast, peer, ip4(10, 0, 0, 255), 3000, 120).l4_corrupt_csum()},
		{"v4 limited broadcast", v4(mac_broadcast, peer, 0xffffffff, 3000, 18)},
		{"v4 limited broadcast, short, bad checksum",
		 v4(mac_broadcast, peer, 0xffffffff, 3000, 18).l4_corrupt_csum()},
		{"v4 0.0.0.0 to 0.0.0.0", v4(mac_broadcast, 0, 0, 3000, 18)},
		{"v4 network address", v4(mac_broadcast, peer, ip4(10, 0, 0, 0), 3000, 18)},
		{"v4 broadcast of another subnet",
		 v4(mac_broadcast, peer, ip4(10, 0, 1, 255), 3000, 18)},
		{"icmp echo to a joined group", icmp4(mc_mac4(g), g, 8)},
		{"icmp echo to the directed broadcast",
		 icmp4(mac_broadcast, ip4(10, 0, 0, 255), 8)},
		{"icmp echo reply to the limited broadcast",
		 icmp4(mac_broadcast, 0xffffffff, 0)},
		{"icmp timestamp to the limited broadcast",
		 icmp4(mac_broadcast, 0xffffffff, 13)},
		{"icmp address mask reply to the limited broadcast",
		 icmp4(mac_broadcast, 0xffffffff, 18)},
		{"icmp type 30 to the host", icmp4(mac_host, ip4(10, 0, 0, 2), 30)},
		{"icmp echo reply to the host", icmp4(mac_host, ip4(10, 0, 0, 2), 0)},
		{"v6 joined, no socket", v6(ff05_1, 3000, 18)},
		{"v6 joined, zero checksum", v6(ff05_1, 3000, 18).udp_zero_csum()},
		{"v6 joined, short, bad checksum", v6(ff05_1, 3000, 18).l4_corrupt_csum()},
		{"v6 joined, long, bad checksum", v6(ff05_1, 3000, 200).l4_corrupt_csum()},
		{"v6 not joined", v6(ip6({0xff05, 0, 0, 0, 0, 0, 0, 2}), 3000, 18)},
		{"v6 all-nodes", v6(ip6({0xff02, 0, 0, 0, 0, 0, 0, 1}), 3000, 18)},
		{"v6 all-routers (not joined)", v6(ip6({0xff02, 0, 0, 0, 0, 0, 0, 2}), 3000, 18)},
		{"v6 solicited-node of 2001:db8::2",
		 v6(ip6({0xff02, 0, 0, 0, 0, 1, 0xff00, 2}), 3000, 18)},
	};
}

const char *const compared[] = {
	"IpInReceives", "IpInHdrErrors", "IpExtInCsumErrors", "IpExtInTruncatedPkts",
	"IpInAddrErrors", "IpInDelivers", "IpInUnknownProtos", "IpExtInMcastPkts",
	"IpExtInBcastPkts", "IpExtInMcastOctets", "IpExtInBcastOctets",
	"UdpInDatagrams", "UdpNoPorts", "UdpInErrors", "UdpInCsumErrors",
	"UdpIgnoredMulti",
	"Ip6InReceives", "Ip6InHdrErrors", "Ip6InTruncatedPkts", "Ip6InAddrErrors",
	"Ip6InDelivers", "Ip6InUnknownProtos", "Ip6InMcastPkts", "Ip6InMcastOctets",
	"Udp6InDatagrams", "Udp6NoPorts", "Udp6InErrors", "Udp6InCsumErrors",
	"Udp6IgnoredMulti", "IcmpInMsgs", "IcmpInErrors", "IcmpInCsumErrors",
	"IcmpInEchos",
};

// The kernel's counter deltas for frames sent one by one (with a settle
// time) out of the outer end.
std::map<std::string, uint64_t> kernel_deltas(const Netns &net,
					      const std::vector<Named> &frames,
					      unsigned repeat)
{
	auto before = nstat(net.ns);
	{
		RawSender tx(net.outside);
		REQUIRE(tx.ok());
		for (unsigned r = 0; r < repeat; r++)
			for (auto &f : frames)
				REQUIRE(tx.send(f.frame.data));
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	auto after = nstat(net.ns);
	std::map<std::string, uint64_t> d;
	for (const char *name : compared)
		d[name] = after[name] - before[name];
	return d;
}

// One frame at a time into the kernel: which counters it moves (for the
// message when the totals differ).
std::string kernel_per_frame(const Netns &net, const std::vector<Named> &frames)
{
	std::string out;
	for (auto &f : frames) {
		auto d = kernel_deltas(net, {f}, 1);
		out += std::string("  ") + f.name + ":";
		for (auto &kv : d)
			if (kv.second)
				out += " " + kv.first + "=" + std::to_string(kv.second);
		out += "\n";
	}
	return out;
}

// Sockets inside the namespace that joined groups on its interface (as
// an application does: IP_ADD_MEMBERSHIP / IPV6_JOIN_GROUP), made from a
// thread that enters the namespace; closed on destruction.
struct Joined {
	std::vector<int> fds;
	std::string error;
	Joined(const Netns &net, const std::vector<std::string> &groups)
	{
		std::string failed;
		error = in_netns(net, [&] {
			const unsigned ifindex = if_nametoindex(net.inside.c_str());
			for (auto &g : groups) {
				ip_mreqn m4{};
				ipv6_mreq m6{};
				int fd = -1, rc = -1;
				if (inet_pton(AF_INET, g.c_str(), &m4.imr_multiaddr) == 1) {
					m4.imr_ifindex = (int)ifindex;
					fd = socket(AF_INET, SOCK_DGRAM, 0);
					rc = setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP,
							&m4, sizeof(m4));
				} else if (inet_pton(AF_INET6, g.c_str(),
						     &m6.ipv6mr_multiaddr) == 1) {
					m6.ipv6mr_interface = ifindex;
					fd = socket(AF_INET6, SOCK_DGRAM, 0);
					rc = setsockopt(fd, IPPROTO_IPV6, IPV6_JOIN_GROUP,
							&m6, sizeof(m6));
				}
				if (fd >= 0)
					fds.push_back(fd);
				if (rc != 0)
					failed = "cannot join " + g;
			}
		});
		if (error.empty())
			error = failed;
	}
	~Joined()
	{
		for (int fd : fds)
			close(fd);
	}
};

void compare(const char *what, const std::vector<Named> &frames,
	     const StageKeys &l3_keys, const std::vector<std::string> &groups)
{
	Netns net;
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	Joined joined(net, groups);
	INFO(joined.error);
	REQUIRE(joined.error.empty());
	REQUIRE(settle(net));
	const unsigned repeat = 2;
	auto kernel = kernel_deltas(net, frames, repeat);

	rte_mempool *mp = mbuf_pool("oracle_ext_pool", 2047);
	std::vector<uint16_t> polls;
	const size_t total = frames.size() * repeat;
	for (size_t done = 0; done < total; done += 7)
		polls.push_back((uint16_t)std::min<size_t>(7, total - done));
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		EngineRun r = run_engine(
			kind, 1, 8,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
			 {"l3-demux", l3_keys}},
			[&](size_t at) { return frames[at % frames.size()].frame.to_mbuf(mp); },
			polls);
		bool same = true;
		for (const char *name : compared) {
			INFO(what << ", engine " << lrx_engine_name(kind) << ", " << name
				  << ": kernel " << kernel[name] << ", listrx "
				  << r.counters[1][name]);
			CHECK(r.counters[1].count(name) == 1);
			CHECK(kernel[name] == r.counters[1][name]);
			same &= kernel[name] == r.counters[1][name];
		}
		if (!same) {
			std::fprintf(stderr, "%s: kernel counters per frame:\n%s",
				     what, kernel_per_frame(net, frames).c_str());
			break;
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

bool can_run()
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return false;
	}
	eal_init();
	return true;
}

} // namespace

// Whether the running kernel was built with CONFIG_IPV6_MIP6 (type 2
// routing headers): "yes", "no", or "" when its config cannot be read.
std::string kernel_mip6()
{
	const std::string grep = "grep -q '^CONFIG_IPV6_MIP6=[ym]'";
	const std::string srcs[] = {"zcat /proc/config.gz",
				    "cat /boot/config-$(uname -r)"};
	for (auto &src : srcs) {
		if (sh(src) != 0)
			continue;
		return sh(src + " | " + grep) == 0 ? "yes" : "no";
	}
	return "";
}

TEST_CASE("kernel oracle: IPv6 extension headers give the kernel's nstat "
	  "counters under every engine", "[l3_demux][kernel]")
{
	if (!can_run())
		return;
	std::vector<Named> frames = ext_frames();
	std::string mip6 = kernel_mip6();
	if (mip6.empty()) {
		WARN("the kernel's config is unreadable (CONFIG_IPV6_MIP6 "
		     "unknown): type 2 routing headers left out");
		std::vector<Named> kept;
		for (auto &f : frames)
			if (std::string(f.name).find("type 2") == std::string::npos)
				kept.push_back(f);
		frames = kept;
		mip6 = "yes";
	}
	compare("extension headers", frames,
		{{"ipv6_mip6", mip6},
		 {"local_ipv4", "10.0.0.2/24"},
		 {"local_ipv6", "2001:db8::2"},
		 {"mcast_groups", "none"},
		 {"udp_ports", "none"},
		 {"tcp_ports", "none"},
		 {"trust_ip_csum_hint", "no"}},
		{});
}

TEST_CASE("kernel oracle: multicast and broadcast give the kernel's nstat "
	  "counters under every engine", "[l3_demux][kernel]")
{
	if (!can_run())
		return;
	compare("multicast/broadcast", mcast_frames(),
		{{"local_ipv4", "10.0.0.2/24"},
		 {"local_ipv6", "2001:db8::2"},
		 {"mcast_groups", "239.1.1.1,ff05::1"},
		 {"udp_ports", "none"},
		 {"tcp_ports", "none"},
		 {"trust_ip_csum_hint", "no"}},
		{"239.1.1.1", "ff05::1"});
}
