// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle: the same frames are replayed into a veth whose peer lives
// in a fresh network namespace (a host at 10.0.0.2 / 2001:db8::2, MAC
// 02:00:00:00:00:02, no forwarding, no UDP sockets, RX checksum offload
// off so the kernel verifies checksums) and through build-meta,l3-demux
// configured alike; the kernel's `nstat` counters and listrx's must agree.
// Needs root and network namespaces; skips with a printed reason
// otherwise.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <thread>

#include "frames.h"
#include "netns_oracle.h"
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

Frame tcp6_bad_csum()
{
	Spec s;
	s.l3 = L3::ipv6;
	s.l4 = L4::tcp;
	s.dport = 9;
	return build(s).l4_corrupt_csum();
}

} // namespace

TEST_CASE("kernel oracle: nstat counters of a veth in a netns match "
	  "l3-demux", "[l3_demux][kernel]")
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	Netns net;
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	eal_init();
	rte_mempool *mp = mbuf_pool("oracle_pool", 1023);

	// Frames where the kernel and listrx are configured alike. Protocol
	// 253 (RFC 3692 experimental) has no kernel handler.
	std::vector<Frame> frames = {
		udp4(), udp4(1, 9), tcp4(TCP_ACK, 1, 9).l4_corrupt_csum(),
		udp4().ip4_version(5), udp4().ip4_ihl(4),
		udp4().ip4_corrupt_csum(), udp4().ip4_total_length(200),
		udp4().ip4_total_length(16), udp4().ip4_dst(ip4(10, 0, 0, 99)),
		udp4().ip4_proto(253), udp4().append(40), udp4().l4_corrupt_csum(),
		udp4().udp_length(200),
		udp6(), udp6().append(20), udp6().ip6_payload_length(500),
		udp6().ip6_version(4), udp6().ip6_dst(ip6_doc(99)),
		udp6().ip6_src(ip6({0xff02, 0, 0, 0, 0, 0, 0, 1})),
		udp6().udp_zero_csum(), udp6().l4_corrupt_csum(),
		udp6().ip6_next_header(253), tcp6_bad_csum(),
	};
	const unsigned repeat = 3;

	auto before = nstat(net.ns);
	{
		RawSender tx(net.outside);
		REQUIRE(tx.ok());
		for (unsigned r = 0; r < repeat; r++)
			for (auto &f : frames)
				REQUIRE(tx.send(f.data));
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	auto after = nstat(net.ns);

	StageInstance bm(BUILD_META_STAGE_NAME, {{"host_mac", "02:00:00:00:00:02"}});
	StageInstance l3(L3_DEMUX_STAGE_NAME,
			 {{"local_ipv4", "10.0.0.2"},
			  {"local_ipv6", "2001:db8::2"},
			  {"udp_ports", "none"},
			  {"tcp_ports", "none"},
			  {"trust_ip_csum_hint", "no"}});
	REQUIRE(l3.ok());
	for (unsigned r = 0; r < repeat; r++)
		for (auto &f : frames) {
			rte_mbuf *m = f.to_mbuf(mp);
			lrx_next_t next;
			run_packet({&bm, &l3}, &m, 1, &next);
			rte_pktmbuf_free(m);
		}

	const char *compared[] = {
		"IpInReceives", "IpInHdrErrors", "IpExtInCsumErrors",
		"IpExtInTruncatedPkts", "IpInAddrErrors", "IpInDelivers",
		"IpInUnknownProtos", "UdpNoPorts", "UdpInErrors", "UdpInCsumErrors",
		"TcpInCsumErrors", "TcpInErrs", "TcpInSegs", "Ip6InReceives", "Ip6InHdrErrors",
		"Ip6InTruncatedPkts", "Ip6InAddrErrors", "Ip6InDelivers",
		"Ip6InUnknownProtos", "Udp6NoPorts", "Udp6InErrors",
		"Udp6InCsumErrors",
	};
	for (const char *name : compared) {
		uint64_t kernel = after[name] - before[name];
		uint64_t ours = l3.counter(name);
		INFO(name << ": kernel " << kernel << ", listrx " << ours);
		CHECK(kernel == ours);
	}
	CHECK(l3.counter("IpInReceives") > 0);
	LRX_REQUIRE_POOL_FULL(mp);
}
