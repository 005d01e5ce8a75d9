// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for netfilter: one iptables-save text (raw, mangle and
// filter rules: ports, multiport, addresses, -f, the input device, TCP
// flags, user chains with RETURN, a jump and fall-through) is loaded by
// iptables-legacy-restore into a veth's netns (the device put for portN)
// and by l3-demux's netfilter key; the same frames (UDP to each rule,
// TCP, ICMP, a reassembled pair of fragments, a short UDP that the port
// match hotdrops, frames the hooks never see: a bad checksum, another
// host's MAC, a destination not local) go to both. Every rule's and
// policy's packet and byte counters (iptables-save -c, as iptables -L -v
// -x shows them) and the nstat counters must be equal, under every engine
// (the list path runs PREROUTING as nf_hook_slow_list). The kernel's own
// iptables-save -c text must load here too. Needs root and
// iptables-legacy; skips with a printed reason otherwise.
#include <catch2/catch.hpp>

#include <cstdio>
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

const char *rules_text =
	"*raw\n"
	":PREROUTING ACCEPT [0:0]\n"
	":OUTPUT ACCEPT [0:0]\n"
	"-A PREROUTING -i %IF% -p udp -m udp --dport 7:8 -j DROP\n"
	"-A PREROUTING -f\n"
	"COMMIT\n"
	"*mangle\n"
	":PREROUTING ACCEPT [0:0]\n"
	":INPUT ACCEPT [0:0]\n"
	":FORWARD ACCEPT [0:0]\n"
	":OUTPUT ACCEPT [0:0]\n"
	":POSTROUTING ACCEPT [0:0]\n"
	"-A INPUT -p tcp -m tcp --tcp-flags SYN,RST,ACK SYN\n"
	"-A INPUT ! -i %IF%+ -j DROP\n"
	"COMMIT\n"
	"*filter\n"
	":INPUT ACCEPT [0:0]\n"
	":FORWARD ACCEPT [0:0]\n"
	":OUTPUT ACCEPT [0:0]\n"
	":udp_in - [0:0]\n"
	":deep - [0:0]\n"
	"-A INPUT -p udp -j udp_in\n"
	"-A INPUT -p udp -m multiport --dports 100,200:300 -j DROP\n"
	"-A INPUT -s 10.0.0.0/24 -p icmp -j ACCEPT\n"
	"-A INPUT -p udp -m udp --dport 10000:19999 -j DROP\n"
	"-A INPUT ! -s 10.0.0.1/32 -j DROP\n"
	"-A INPUT -p tcp\n"
	"-A udp_in -p udp -m udp --dport 53 -j RETURN\n"
	"-A udp_in -p udp -m udp --sport 5000 -j deep\n"
	"-A udp_in -p udp -m udp --dport 54 -j ACCEPT\n"
	"-A deep -p udp -m udp --dport 55 -j DROP\n"
	"COMMIT\n";

std::string with_if(const std::string &text, const std::string &dev)
{
	return std::regex_replace(text, std::regex("%IF%"), dev);
}

// A UDP datagram of 64 payload bytes in two fragments (offset 0 with MF,
// offset 32): reassembled before INPUT.
std::vector<Frame> fragment_pair(uint16_t id)
{
	Spec s;
	s.dport = 53;
	s.ip_id = id;
	s.payload.assign(56, 0x5a);
	s.default_payload = false;
	Frame whole = build(s);
	const size_t l3 = whole.l2_len, ihl = 20, cut = 32;
	std::vector<uint8_t> hdr(whole.data.begin(), whole.data.begin() + l3 + ihl);
	std::vector<uint8_t> body(whole.data.begin() + l3 + ihl,
				  whole.data.begin() + l3 + whole.l3_len);
	Frame a = whole, b = whole;
	a.data = hdr;
	a.data.insert(a.data.end(), body.begin(), body.begin() + cut);
	b.data = hdr;
	b.data.insert(b.data.end(), body.begin() + cut, body.end());
	a.set_be16(l3 + 2, (uint16_t)(ihl + cut)).set_be16(l3 + 6, 0x2000).ip4_fix_csum();
	b.set_be16(l3 + 2, (uint16_t)(ihl + body.size() - cut))
		.set_be16(l3 + 6, cut / 8).ip4_fix_csum();
	a.append(60 > a.size() ? 60 - a.size() : 0);
	b.append(60 > b.size() ? 60 - b.size() : 0);
	return {a, b};
}

} // namespace

TEST_CASE("kernel oracle: iptables-legacy in a netns and l3-demux's netfilter "
	  "count every rule alike, under every engine", "[netfilter][kernel]")
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	if (sh("command -v iptables-legacy-restore && command -v iptables-legacy-save") != 0) {
		WARN("SKIPPED: needs iptables-legacy-restore (apt-get install iptables)");
		return;
	}
	Netns net;
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	const TempFile kfile(with_if(rules_text, net.inside), "lrx_nf_kernel");
	const TempFile lfile(with_if(rules_text, "port0"), "lrx_nf_listrx");
	if (sh("ip netns exec " + net.ns + " iptables-legacy-restore " + kfile.path) != 0) {
		WARN("SKIPPED: iptables-legacy-restore refused the rules in the netns "
		     "(no ip_tables in this kernel?)");
		return;
	}

	std::vector<Frame> frames = {
		udp4(1, 7), udp4(1, 9), udp4(1, 53), udp4(1, 54), udp4(5000, 55),
		udp4(5000, 56), udp4(1, 150), udp4(1, 250), udp4(1, 12000),
		with([](Spec &s) { s.ip4_src = ip4(10, 0, 0, 5); s.dport = 9; }),
		tcp4(TCP_SYN, 1, 80), tcp4(TCP_ACK, 1, 80),
		with([](Spec &s) { s.l4 = L4::icmp; }),
		with([](Spec &s) { s.l4 = L4::icmp; s.ip4_src = ip4(10, 1, 0, 1); }),
		// a UDP header cut to 4 bytes: the raw table's port match hotdrops
		udp4(1, 7).ip4_total_length(24).ip4_fix_csum(),
		udp4(1, 9).ip4_corrupt_csum(),                     // no hook
		with([](Spec &s) { s.dst = {2, 0, 0, 0, 0, 0x77}; }), // OTHERHOST
		udp4(1, 9).ip4_dst(ip4(10, 0, 0, 99)),            // not local
	};
	for (auto &f : fragment_pair(77))
		frames.push_back(f);
	const unsigned repeat = 2;

	auto before = nstat(net.ns);
	REQUIRE(replay(net.outside, frames, repeat));
	auto after = nstat(net.ns);
	const std::string saved =
		sh_out("ip netns exec " + net.ns + " iptables-legacy-save -c");
	NfCounts kernel = nf_parse_save(saved);
	REQUIRE(kernel.count("filter/INPUT") == 1);

	eal_init();
	rte_mempool *mp = mbuf_pool("nf_oracle_pool", 2047);
	std::vector<uint16_t> polls;
	for (unsigned r = 0; r < repeat; r++)
		polls.push_back((uint16_t)frames.size());
	const std::vector<PipelineStage> stages = {
		{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
		{"l3-demux", {{"local_ipv4", "10.0.0.2/24"},
			      {"local_ipv6", "2001:db8::2"},
			      {"udp_ports", "none"},
			      {"tcp_ports", "none"},
			      {"mcast_groups", "none"},
			      {"trust_ip_csum_hint", "no"},
			      {"netfilter", lfile.path}}},
	};
	auto make = [&](size_t at) { return frames[at % frames.size()].to_mbuf(mp); };
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		EngineRun r = run_engine(kind, 1, 64, stages, make, polls);
		NfCounts ours = nf_listrx_counts(r, 1);
		for (auto &chain : kernel) {
			// FORWARD, OUTPUT, POSTROUTING are not on the receive
			// path (OUTPUT counts the kernel's ICMP errors and RSTs)
			if (ours.count(chain.first) == 0)
				continue;
			auto &mine = ours[chain.first];
			REQUIRE(mine.size() == chain.second.size());
			const bool user = chain.first.find("/udp_in") != std::string::npos ||
					  chain.first.find("/deep") != std::string::npos;
			for (size_t k = user ? 1 : 0; k < mine.size(); k++) {
				INFO(chain.first << " " << (k ? "rule " : "policy ") << k
					<< ": kernel " << chain.second[k].first << " pkts "
					<< chain.second[k].second << " bytes, listrx "
					<< mine[k].first << " pkts " << mine[k].second
					<< " bytes");
				CHECK(mine[k] == chain.second[k]);
			}
		}
		const char *compared[] = {
			"IpInReceives", "IpInHdrErrors", "IpExtInCsumErrors",
			"IpInAddrErrors", "IpInDelivers", "UdpNoPorts", "UdpInErrors",
			"TcpInSegs", "IcmpInMsgs", "IpReasmReqds", "IpReasmOKs",
		};
		for (const char *name : compared) {
			uint64_t k = after[name] - before[name];
			INFO(name << ": kernel " << k << ", listrx " << r.counters[1][name]);
			CHECK(k == r.counters[1][name]);
		}
		CHECK(r.counters[1]["nf_prerouting_drops"] > 0);
		CHECK(r.counters[1]["nf_local_in_drops"] > 0);
		CHECK(r.stats[1].drops[LRX_DROP_NETFILTER_DROP] ==
		      r.counters[1]["nf_prerouting_drops"] +
			      r.counters[1]["nf_local_in_drops"]);
	}
	// the kernel's own iptables-save -c text loads here (with our names)
	lrx_nf *nf = nullptr;
	char err[512] = "";
	CHECK(lrx_nf_parse(std::regex_replace(saved, std::regex(net.inside), "port0").c_str(),
			   "iptables-save", &nf, err, sizeof(err)) == 0);
	INFO(err);
	lrx_nf_free(nf);
	LRX_REQUIRE_POOL_FULL(mp);
}
