// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for IPv6 netfilter: one ip6tables-save text (raw, mangle
// and filter rules; filter's INPUT policy DROP; ICMPv6, UDP ports and
// multiport, source prefixes and their inversion, the input device, a
// user chain with RETURN) is loaded by ip6tables-legacy-restore into a
// veth's netns and by l3-demux's netfilter6 key; the same IPv6 frames
// (ICMPv6 echoes, UDP to each rule, a TCP SYN the policy drops, a UDP
// datagram behind a hop-by-hop header, a truncated extension header that
// a rule with -p hotdrops, a destination that is not local, another
// host's MAC) go to both. Every rule's and policy's packet and byte
// counters (ip6tables-save -c), the nstat Ip6/Icmp6/Udp6 counters and the
// replies (the kernel's seen on the wire, listrx's TX verdicts) must be
// equal, under every engine; a frame listrx's hooks drop gets no reply.
// Needs root and ip6tables-legacy; skips with a printed reason otherwise.
#include <catch2/catch.hpp>

#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "engine_run.h"
#include "frames.h"
#include "netns_oracle.h"
#include "nf_counts.h"
#include "temp_file.h"
#include "test_eal.h"

extern "C" {
#include "netfilter/netfilter.h"
#include "pipeline.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;

namespace {

const char *rules6_text =
	"*raw\n"
	":PREROUTING ACCEPT [0:0]\n"
	":OUTPUT ACCEPT [0:0]\n"
	"-A PREROUTING -i %IF% -p udp -m udp --dport 7:8 -j DROP\n"
	"-A PREROUTING -s 2001:db8::1:0:0:0/80 -j DROP\n"
	"COMMIT\n"
	"*mangle\n"
	":PREROUTING ACCEPT [0:0]\n"
	":INPUT ACCEPT [0:0]\n"
	":FORWARD ACCEPT [0:0]\n"
	":OUTPUT ACCEPT [0:0]\n"
	":POSTROUTING ACCEPT [0:0]\n"
	"-A PREROUTING -p ipv6-icmp\n"
	"-A INPUT ! -i %IF%+ -j DROP\n"
	"COMMIT\n"
	"*filter\n"
	":INPUT DROP [0:0]\n"
	":FORWARD ACCEPT [0:0]\n"
	":OUTPUT ACCEPT [0:0]\n"
	":udp_in - [0:0]\n"
	"-A INPUT -s 2001:db8::/64 -p icmpv6 -j ACCEPT\n"
	"-A INPUT -p udp -j udp_in\n"
	"-A INPUT ! -s 2001:db8::/32 -j DROP\n"
	"-A INPUT -d 2001:db8::2/128 -p udp -m udp --sport 5000 -j ACCEPT\n"
	"-A udp_in -p udp -m udp --dport 53 -j ACCEPT\n"
	"-A udp_in -p udp -m multiport --dports 100,200:300 -j ACCEPT\n"
	"-A udp_in -s 2001:db8::1/128 -p udp -m udp --sport 5000 -j RETURN\n"
	"-A udp_in -p udp -m udp --dport 9 -j DROP\n"
	"COMMIT\n";

std::string with_if(const std::string &text, const std::string &dev)
{
	return std::regex_replace(text, std::regex("%IF%"), dev);
}

Frame v6(const std::function<void(Spec &)> &f)
{
	return with([&](Spec &s) {
		s.l3 = L3::ipv6;
		f(s);
	});
}

std::vector<Frame> frames6()
{
	const Ip6 far = ip6({0x2001, 0xdb9, 0, 0, 0, 0, 0, 1});
	const Ip6 in80 = ip6({0x2001, 0xdb8, 0, 0, 1, 0, 0, 5});
	Frame cut = ip6_insert_ext(udp6(1, 53), 60, lrx_test::frames::ip6_ext(17, {0, 0, 0, 0, 0, 0}));
	cut.ip6_payload_length(1); // the options header's 2 bytes are past it
	return {
		udp6(1, 7), udp6(1, 53), udp6(1, 150), udp6(1, 250), udp6(1, 9),
		udp6(1, 1234), udp6(5000, 9), udp6(5000, 1234),
		// from off the link: dropped (the namespace has no route back
		// to answer, which is routing's business, not netfilter's)
		v6([&](Spec &s) { s.ip6_src = far; s.dport = 9; }),
		v6([&](Spec &s) { s.ip6_src = far; s.sport = 5000; }),
		v6([&](Spec &s) { s.ip6_src = in80; s.l4 = L4::icmp; s.icmp_type = 128; }),
		v6([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 128; }),
		v6([&](Spec &s) { s.ip6_src = far; s.l4 = L4::icmp; s.icmp_type = 128; }),
		v6([](Spec &s) { s.l4 = L4::tcp; s.tcp_flags = TCP_SYN; s.dport = 80; }),
		v6([](Spec &s) { s.ip6_hop_by_hop = true; s.dport = 53; }),
		cut,
		udp6(1, 53).ip6_dst(ip6_doc(0x99)).l4_fix_csum(),       // not local
		v6([](Spec &s) { s.dst = {2, 0, 0, 0, 0, 0x77}; }),    // OTHERHOST
	};
}

const char *const compared[] = {
	"Ip6InReceives", "Ip6InHdrErrors", "Ip6InAddrErrors", "Ip6InDelivers",
	"Ip6InTruncatedPkts", "Icmp6InMsgs", "Icmp6InEchos", "Icmp6OutEchoReplies",
	"Icmp6OutDestUnreachs", "Udp6InDatagrams", "Udp6NoPorts", "Udp6InErrors",
};

} // namespace

TEST_CASE("kernel oracle: ip6tables-legacy in a netns and l3-demux's netfilter6 "
	  "count every rule alike and reply alike, under every engine",
	  "[netfilter][kernel]")
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	if (sh("command -v ip6tables-legacy-restore && command -v ip6tables-legacy-save") != 0) {
		WARN("SKIPPED: needs ip6tables-legacy-restore (apt-get install iptables)");
		return;
	}
	Netns net;
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	REQUIRE(net.in("sysctl -w net.ipv6.icmp.ratelimit=0") == "");
	REQUIRE(net.static_peer() == "");
	REQUIRE(settle(net));
	const TempFile kfile(with_if(rules6_text, net.inside), "lrx_nf6_kernel");
	const TempFile lfile(with_if(rules6_text, "port0"), "lrx_nf6_listrx");
	if (sh("ip netns exec " + net.ns + " ip6tables-legacy-restore " + kfile.path) != 0) {
		WARN("SKIPPED: ip6tables-legacy-restore refused the rules in the netns "
		     "(no ip6_tables in this kernel?)");
		return;
	}
	const std::vector<Frame> frames = frames6();
	const unsigned repeat = 2;

	ReplyTap tap(net.outside);
	REQUIRE(tap.ok());
	auto before = nstat(net.ns);
	REQUIRE(replay(net.outside, frames, repeat));
	const size_t kernel_replies = tap.take(300).size();
	auto after = nstat(net.ns);
	const std::string saved =
		sh_out("ip netns exec " + net.ns + " ip6tables-legacy-save -c");
	NfCounts kernel = nf_parse_save(saved, "ip6/");
	REQUIRE(kernel.count("ip6/filter/INPUT") == 1);
	CHECK(kernel_replies > 0);

	eal_init();
	rte_mempool *mp = mbuf_pool("nf6_oracle_pool", 2047);
	std::vector<uint16_t> polls;
	for (unsigned r = 0; r < repeat; r++)
		polls.push_back((uint16_t)frames.size());
	const std::vector<PipelineStage> stages = {
		{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
		{"l3-demux", {{"local_ipv4", "10.0.0.2/24"},
			      {"local_ipv6", "2001:db8::2/64"},
			      {"udp_ports", "none"},
			      {"tcp_ports", "none"},
			      {"mcast_groups", "none"},
			      {"trust_ip_csum_hint", "no"},
			      {"icmpv6_ratelimit", "0"},
			      {"ipv6_mip6", "no"},
			      {"netfilter6", lfile.path}}},
	};
	auto make = [&](size_t at) { return frames[at % frames.size()].to_mbuf(mp); };
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(kind, 1, 64, stages, make, polls);
		NfCounts ours = nf_listrx_counts(r, 1);
		unsigned compared_chains = 0;
		for (auto &chain : kernel) {
			// FORWARD, OUTPUT, POSTROUTING are not on the receive path
			if (ours.count(chain.first) == 0)
				continue;
			compared_chains++;
			auto &mine = ours[chain.first];
			REQUIRE(mine.size() == chain.second.size());
			const bool user = chain.first.find("/udp_in") != std::string::npos;
			for (size_t k = user ? 1 : 0; k < mine.size(); k++) {
				INFO(chain.first << " " << (k ? "rule " : "policy ") << k
					<< ": kernel " << chain.second[k].first << " pkts "
					<< chain.second[k].second << " bytes, listrx "
					<< mine[k].first << " pkts " << mine[k].second
					<< " bytes");
				CHECK(mine[k] == chain.second[k]);
			}
		}
		CHECK(compared_chains == 5); // raw/PREROUTING .. filter/udp_in
		for (const char *name : compared) {
			uint64_t k = after[name] - before[name];
			INFO(name << ": kernel " << k << ", listrx " << r.counters[1][name]);
			CHECK(r.counters[1].count(name) == 1);
			CHECK(k == r.counters[1][name]);
		}
		size_t tx = 0;
		REQUIRE(r.out.size() == frames.size() * repeat);
		for (size_t i = 0; i < r.out.size(); i++) {
			const bool sent = lrx_next_kind(r.out[i].first) == LRX_NEXT_TX;
			tx += sent;
			if (r.out[i].first == lrx_next_drop(LRX_DROP_NETFILTER_DROP)) {
				INFO("frame " << i % frames.size() << " dropped by a hook");
				CHECK(!sent);
			}
		}
		CHECK(tx == kernel_replies);
		CHECK(r.counters[1]["nf6_prerouting_drops"] > 0);
		CHECK(r.counters[1]["nf6_local_in_drops"] > 0);
		CHECK(r.counters[1]["nf_prerouting_drops"] == 0);
		CHECK(r.stats[1].drops[LRX_DROP_NETFILTER_DROP] ==
		      r.counters[1]["nf6_prerouting_drops"] +
			      r.counters[1]["nf6_local_in_drops"]);
	}
	// the kernel's own ip6tables-save -c text loads here (with our names)
	lrx_nf *nf = nullptr;
	char err[512] = "";
	CHECK(lrx_nf_parse_family(std::regex_replace(saved, std::regex(net.inside), "port0").c_str(),
				  "ip6tables-save", AF_INET6, &nf, err, sizeof(err)) == 0);
	INFO(err);
	lrx_nf_free(nf);
	LRX_REQUIRE_POOL_FULL(mp);
}
