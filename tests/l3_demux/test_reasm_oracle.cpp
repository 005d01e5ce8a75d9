// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for reassembly: fragment streams (in order, reversed, with
// a duplicate, with an overlap, incomplete ones that time out, two last
// fragments with different ends, datagrams whose fragments are 64 and 66
// fragments of the same source apart (ipfrag_max_dist); IPv6 atomic,
// truncated first and unaligned fragments, each answered with a parameter
// problem; first fragments alone, whose expiry sends a time exceeded) are
// sent into a veth whose peer lives in a
// fresh network namespace (ipfrag_time 1 s there, so the incomplete queues
// expire while the test waits), and through build-meta,l3-demux under
// every engine; the kernel's nstat counters and listrx's must agree (the
// run's end expires listrx's queues as the kernel's timer does). Needs
// root and network namespaces; skips with a printed reason otherwise.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "engine_run.h"
#include "frames.h"
#include "netns_oracle.h"
#include "reasm_frames.h"
#include "test_eal.h"

using namespace lrx_test;
using namespace lrx_test::frames;
using namespace lrx_test::reasm;

namespace {

// Each stream its own datagram id, so that no two share a queue.
std::vector<Frame> streams()
{
	std::vector<Frame> v;
	auto add = [&](std::initializer_list<Frame> l) { v.insert(v.end(), l); };
	const Frame a = whole4(101), b = whole4(102), c = whole4(103),
		    d = whole4(104), e = whole4(105), g = whole4(106),
		    h = whole4(107);
	add({frag4(a, 0, 80, true), frag4(a, 80, 80, true), frag4(a, 160, 48, false)});
	add({frag4(b, 160, 48, false), frag4(b, 80, 80, true), frag4(b, 0, 80, true)});
	add({frag4(c, 0, 80, true), frag4(c, 0, 80, true), frag4(c, 80, 128, false)});
	add({frag4(d, 0, 80, true), frag4(d, 40, 80, true), frag4(d, 160, 48, false)});
	add({frag4(e, 80, 128, false)});                         // times out
	add({frag4(g, 0, 85, true), frag4(g, 80, 128, false)});  // trimmed to 80
	add({frag4(h, 160, 48, false), frag4(h, 160, 40, false)}); // two ends
	const Frame w = whole6();
	add({frag6(w, 0, 96, true, 1), frag6(w, 96, 96, true, 1),
	     frag6(w, 192, 16, false, 1)});
	add({frag6(w, 192, 16, false, 2), frag6(w, 96, 96, true, 2),
	     frag6(w, 0, 96, true, 2)});
	add({frag6(w, 0, 96, true, 3), frag6(w, 88, 96, true, 3)});
	add({frag6(w, 96, 112, false, 4)});                      // times out
	add({frag6(w, 0, 208, false, 5)});                       // atomic
	add({frag6(w, 0, 4, true, 6)});                          // truncated first
	add({frag6(w, 0, 20, true, 8)});                         // not 8-aligned
	add({frag6(w, 0, 96, true, 7), frag6(w, 0, 96, true, 7),
	     frag6(w, 96, 112, false, 7)});                      // duplicate
	// ip_frag_too_far (ipfrag_max_dist 64): 64 apart completes, 66 apart
	// restarts the queue
	for (const Frame &f : far_stream(300, 400, 63))
		v.push_back(f);
	for (const Frame &f : far_stream(301, 500, 65))
		v.push_back(f);
	// first fragments alone: their expiry sends the ICMP time exceeded
	// (ip_expire, ip6_frag_expire)
	add({frag4(whole4(108), 0, 80, true)});
	add({frag6(w, 0, 96, true, 9)});
	return v;
}

} // namespace

TEST_CASE("kernel oracle: reassembly counters of a veth in a netns match "
	  "l3-demux under every engine", "[l3_demux][reasm][kernel]")
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
	const std::string in = "ip netns exec " + net.ns + " ";
	if (sh(in + "sysctl -w net.ipv4.ipfrag_time=1") != 0 ||
	    sh(in + "sysctl -w net.ipv6.ip6frag_time=1") != 0) {
		WARN("SKIPPED: cannot set ipfrag_time in the namespace");
		return;
	}
	eal_init();
	rte_mempool *mp = mbuf_pool("reasm_oracle_pool", 1023);
	const std::vector<Frame> frames = streams();

	auto before = nstat(net.ns);
	{
		RawSender tx(net.outside);
		REQUIRE(tx.ok());
		for (auto &f : frames)
			REQUIRE(tx.send(f.data));
	}
	// ipfrag_time 1 s: the timers of the incomplete queues fire
	std::this_thread::sleep_for(std::chrono::milliseconds(2500));
	auto after = nstat(net.ns);

	const char *compared[] = {
		"IpInReceives", "IpInDelivers", "IpInHdrErrors", "IpReasmReqds",
		"IpReasmOKs", "IpReasmFails", "IpReasmTimeout", "IpExtReasmOverlaps",
		"UdpNoPorts", "UdpInErrors", "UdpInCsumErrors",
		"Ip6InReceives", "Ip6InDelivers", "Ip6InHdrErrors",
		"Ip6InUnknownProtos", "Ip6ReasmReqds", "Ip6ReasmOKs",
		"Ip6ReasmFails", "Ip6ReasmTimeout", "Udp6NoPorts", "Udp6InErrors",
		"Udp6InCsumErrors",
		// the parameter problems of ipv6_frag_rcv (truncated first,
		// not 8-aligned); Icmp6OutMsgs would count the kernel's
		// neighbour solicitations too
		"Icmp6OutParmProblems", "Icmp6OutType4",
		"IcmpOutTimeExcds", "Icmp6OutTimeExcds", "Icmp6OutType3",
	};
	const StageKeys l3_keys = {{"local_ipv4", "10.0.0.2"},
				   {"local_ipv6", "2001:db8::2"},
				   {"udp_ports", "none"}, {"tcp_ports", "none"},
				   {"trust_ip_csum_hint", "no"},
				   // the kernel's timers fire 1 s on: the time
				   // exceeded's rate limit sees that second
				   // (1 poll = 1 ms on both clocks)
				   {"ipfrag_clock", "polls"}, {"ipfrag_time", "1000"},
				   {"icmp_clock", "polls"}};
	std::vector<uint16_t> polls;
	for (size_t left = frames.size(); left; left -= polls.back())
		polls.push_back((uint16_t)std::min<size_t>(left, 8));
	polls.insert(polls.end(), 1100, 0);
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(
			kind, 1, 8,
			{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
			 {"l3-demux", l3_keys}},
			[&](size_t at) { return frames.at(at).to_mbuf(mp); },
			polls);
		for (const char *name : compared) {
			const uint64_t kernel = after[name] - before[name];
			const uint64_t ours = r.counters[1][name];
			INFO(name << ": kernel " << kernel << ", listrx " << ours);
			CHECK(kernel == ours);
		}
		CHECK(r.counters[1]["IpReasmOKs"] > 0);
		CHECK(r.counters[1]["Icmp6OutParmProblems"] > 0);
		CHECK(r.counters[1]["IcmpOutTimeExcds"] > 0);
		CHECK(r.counters[1]["Icmp6OutTimeExcds"] > 0);
		LRX_REQUIRE_POOL_FULL(mp);
	}
}
