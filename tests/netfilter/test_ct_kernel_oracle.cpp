// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for connection tracking: a host firewall's rule set
// (ESTABLISHED,RELATED accepted, INVALID dropped, NEW to a few ports,
// policy DROP, a raw CT --notrack) is loaded by iptables-legacy-restore
// into a veth's netns (a TCP listener on 5201) and by l3-demux; the same
// frames go to both in order: a TCP handshake to the listener (SYN, its
// retransmission, the ACK), a SYN and a stray ACK to closed ports (one
// NEW-accepted, answered by RST; one dropped by the policy), an
// unsolicited SYN-ACK and RST, a UDP query to a closed port twice (the
// host's port unreachable is RELATED), an ICMP error RELATED to that flow
// and one about no flow, an UNTRACKED datagram, an echo request twice.
// Every rule's and policy's counters, the nstat counters and conntrack's
// (/proc/net/stat/nf_conntrack's invalid, icmp_error, drop, early_drop;
// the entries of /proc/net/nf_conntrack)
// must be equal under every engine, with nf_conntrack_tcp_be_liberal=1
// on both sides. A second case, with nf_conntrack_tcp_be_liberal=0 (the
// kernel's default), runs tcp_in_window: after a handshake (the SYN with
// SACK and window scale; the ACK acknowledges each side's own SYN-ACK,
// whose number is read from its reply), data in the window, data far
// beyond it and an ACK of data never sent (INVALID), an old
// retransmission (let through as ESTABLISHED: NFCT_TCP_IGNORE), an RST
// before the other side's highest ACK (INVALID), a little more than the
// window allows (IGNORE). Needs root and iptables-legacy;
// skips with a printed reason otherwise.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "ct_oracle.h"
#include "engine_run.h"
#include "frames.h"
#include "netns_oracle.h"
#include "nf_counts.h"
#include "temp_file.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;

namespace {

const char *rules_text =
	"*raw\n"
	":PREROUTING ACCEPT [0:0]\n"
	":OUTPUT ACCEPT [0:0]\n"
	"-A PREROUTING -p udp -m udp --dport 7 -j CT --notrack\n"
	"COMMIT\n"
	"*filter\n"
	":INPUT DROP [0:0]\n"
	":FORWARD ACCEPT [0:0]\n"
	":OUTPUT ACCEPT [0:0]\n"
	"-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
	"-A INPUT -m conntrack --ctstate INVALID -j DROP\n"
	"-A INPUT -m conntrack --ctstate UNTRACKED -j ACCEPT\n"
	"-A INPUT -p tcp -m tcp --dport 5201 -m conntrack --ctstate NEW -j ACCEPT\n"
	"-A INPUT -p tcp -m tcp --dport 24 -m state --state NEW -j ACCEPT\n"
	"-A INPUT -p udp -m udp --dport 53 -m conntrack --ctstate NEW -j ACCEPT\n"
	"-A INPUT -p icmp -m state --state NEW -j ACCEPT\n"
	"COMMIT\n";

constexpr uint32_t peer = ip4(10, 0, 0, 1), host = ip4(10, 0, 0, 2);

Frame tcp(uint8_t flags, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack)
{
	return with([&](Spec &s) {
		s.l4 = L4::tcp;
		s.tcp_flags = flags;
		s.sport = sport;
		s.dport = dport;
		s.seq = seq;
		s.ack = ack;
		s.default_payload = false;
	});
}

Frame udp_from_host(uint16_t sport, uint16_t dport)
{
	return with([&](Spec &s) {
		s.ip4_src = host;
		s.ip4_dst = peer;
		s.sport = sport;
		s.dport = dport;
	});
}

// a port unreachable from the peer quoting what the host sent it
Frame unreachable_about(const Frame &sent)
{
	std::vector<uint8_t> q(sent.data.begin() + sent.l2_len,
			       sent.data.begin() + sent.l4_off + 8);
	return with([&](Spec &s) {
		s.l4 = L4::icmp;
		s.icmp_type = 3;
		s.icmp_code = 3;
		s.payload = q;
		s.default_payload = false;
	});
}

// listrx's rule, nstat and conntrack counters against the kernel's
void check_counts(const KernelCounts &kernel, const EngineRun &r, uint64_t inserts)
{
	check_rule_counts(kernel, r);
	const char *compared[] = {
		"IpInReceives", "IpInDelivers", "TcpInSegs", "UdpNoPorts",
		"IcmpInMsgs", "IcmpInEchos",
	};
	for (const char *name : compared) {
		const uint64_t k = kernel.nstat.count(name) ? kernel.nstat.at(name) : 0;
		INFO(name << ": kernel " << k << ", listrx " << r.counters[1].at(name));
		CHECK(k == r.counters[1].at(name));
	}
	check_ct_counts(kernel, r, inserts);
}

// the netns with the rules, the sysctl and a listener; "" or why not
std::string kernel_setup(const Netns &net, const TempFile &file, const char *be_liberal)
{
	if (!net.ok)
		return net.why;
	if (sh("ip netns exec " + net.ns + " iptables-legacy-restore " + file.path) != 0)
		return "iptables-legacy-restore refused the rules in the netns "
		       "(no xt_conntrack, xt_state or xt_CT in this kernel?)";
	if (sh("ip netns exec " + net.ns +
	       " sysctl -w net.netfilter.nf_conntrack_tcp_be_liberal=" + be_liberal) != 0)
		return "no net.netfilter.nf_conntrack_tcp_be_liberal in the netns";
	return "";
}

std::string oracle_skip()
{
	if (std::string why = oracle_unavailable(); !why.empty())
		return why;
	if (sh("command -v iptables-legacy-restore && command -v iptables-legacy-save") != 0)
		return "needs iptables-legacy-restore (apt-get install iptables)";
	return "";
}

std::vector<PipelineStage> listrx_stages(const TempFile &file, const char *be_liberal)
{
	return {
		{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
		{"l3-demux", {{"local_ipv4", "10.0.0.2/24"},
			      {"local_ipv6", "2001:db8::2"},
			      {"udp_ports", "none"},
			      {"tcp_ports", "5201"},
			      {"mcast_groups", "none"},
			      {"trust_ip_csum_hint", "no"},
			      {"arp_mac", "02:00:00:00:00:02"},
			      {"icmp_clock", "polls"},
			      {"netfilter", file.path},
			      {"nf_conntrack_tcp_be_liberal", be_liberal}}},
	};
}

} // namespace

TEST_CASE("kernel oracle: a stateful firewall (conntrack) counts every rule, "
	  "nstat and conntrack counter alike, under every engine",
	  "[netfilter][conntrack][kernel]")
{
	if (std::string why = oracle_skip(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	Netns net;
	const TempFile file(rules_text, "lrx_ct_rules");
	if (std::string why = kernel_setup(net, file, "1"); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	CtListener listener(net, AF_INET);
	if (!listener.error.empty()) {
		WARN("SKIPPED: " << listener.error);
		return;
	}

	const std::vector<Frame> frames = {
		tcp(TCP_SYN, 40000, 5201, 100, 0),           // NEW, SYN-ACK out
		tcp(TCP_SYN, 40000, 5201, 100, 0),           // ESTABLISHED (ignored)
		tcp(TCP_ACK, 40000, 5201, 101, 1),           // ESTABLISHED
		tcp(TCP_SYN, 40001, 23, 7, 0),               // NEW: policy
		tcp(TCP_ACK, 40001, 23, 8, 9),               // NEW (loose): policy
		tcp(TCP_SYN, 40002, 24, 7, 0),               // NEW, RST out: gone
		tcp(TCP_ACK, 40003, 24, 8, 9),               // NEW, RST out: gone
		tcp(TCP_SYN | TCP_ACK, 40004, 5201, 7, 9),   // INVALID
		tcp(TCP_RST, 40005, 5201, 7, 0),             // INVALID
		udp4(5353, 53),                              // NEW, unreachable out
		udp4(5353, 53),                              // NEW again
		unreachable_about(udp_from_host(53, 5353)),  // RELATED
		unreachable_about(udp_from_host(1, 2)),      // INVALID (error)
		udp4(1, 7),                                  // UNTRACKED
		with([](Spec &s) { s.l4 = L4::icmp; }),      // echo: NEW
		with([](Spec &s) { s.l4 = L4::icmp; }),      // ESTABLISHED
		udp4(1, 9),                                  // NEW: policy
	};

	KernelWatch watch(net);
	REQUIRE(replay(net.outside, frames, 1));
	const KernelCounts kernel = watch.take();
	REQUIRE(kernel.rules.count("filter/INPUT") == 1);

	eal_init();
	rte_mempool *mp = mbuf_pool("ct_oracle_pool", 2047);
	const std::vector<PipelineStage> stages = listrx_stages(file, "1");
	auto make = [&](size_t at) { return frames[at % frames.size()].to_mbuf(mp); };
	// a poll of 5, then the rest: bursts cut flows apart
	const std::vector<uint16_t> polls = {5, (uint16_t)(frames.size() - 5)};
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		check_counts(kernel, run_engine(kind, 1, 64, stages, make, polls), 5);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {

constexpr uint32_t peer_isn = 1000;

// the peer's segment of flow 40010 -> 5201 with len bytes of data
Frame segment(uint8_t flags, uint32_t seq, uint32_t ack, size_t len = 0,
	      std::vector<uint8_t> options = {})
{
	return with([&](Spec &s) {
		s.l4 = L4::tcp;
		s.tcp_flags = flags;
		s.sport = 40010;
		s.dport = 5201;
		s.seq = seq;
		s.ack = ack;
		s.window = flags & TCP_SYN ? 64240 : 502; // 502 << 7 = 64256
		s.tcp_options = std::move(options);
		s.payload.assign(len, 0x5a);
		s.default_payload = false;
	});
}

// the SYN: MSS 1460, SACK permitted, window scale 7
Frame window_syn()
{
	return segment(TCP_SYN, peer_isn, 0, 0, {2, 4, 0x05, 0xb4, 4, 2, 1, 3, 3, 7});
}

// what follows the SYN, given the host's SYN-ACK number
std::vector<Frame> window_rest(uint32_t host_isn)
{
	const uint32_t ack = host_isn + 1, data = peer_isn + 1;
	const uint8_t psh = TCP_PSH | TCP_ACK;
	return {
		segment(TCP_ACK, data, ack),                  // ESTABLISHED
		segment(psh, data, ack, 100),                 // in the window
		segment(psh, data + 100, ack, 50),            // in the window
		segment(psh, data + 1000000, ack, 100),       // I: far beyond: INVALID
		segment(TCP_ACK, data + 150, ack + 100000),   // III: unseen data: INVALID
		segment(psh, data - 500000, ack, 100),        // II: old data: IGNORE
		segment(TCP_RST, data - 100000, 0),           // before the max ACK: INVALID
		segment(psh, data + 67000, ack, 100),         // I, a little: IGNORE
	};
}

// listrx's SYN-ACK number for the SYN (its reply, as the kernel's read
// from the wire)
uint32_t listrx_isn(const std::vector<PipelineStage> &stages, rte_mempool *mp)
{
	const Frame syn = window_syn();
	EngineRun r = run_engine(LRX_ENGINE_PACKET, 1, 64, stages,
				 [&](size_t) { return syn.to_mbuf(mp); }, {1});
	std::vector<std::vector<uint8_t>> out;
	for (auto &o : r.out)
		out.push_back(o.second);
	return synack_seq(out);
}

} // namespace

TEST_CASE("kernel oracle: TCP window tracking (nf_conntrack_tcp_be_liberal=0): "
	  "out-of-window segments INVALID, ignored ones ESTABLISHED, the same "
	  "counters under every engine",
	  "[netfilter][conntrack][kernel]")
{
	if (std::string why = oracle_skip(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	Netns net;
	const TempFile file(rules_text, "lrx_ct_window_rules");
	std::string why = kernel_setup(net, file, "0");
	if (why.empty())
		why = net.static_peer(); // the SYN-ACK goes out without ARP
	if (!why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	CtListener listener(net, AF_INET);
	if (!listener.error.empty()) {
		WARN("SKIPPED: " << listener.error);
		return;
	}
	ReplyTap tap(net.outside);
	RawSender tx(net.outside);
	REQUIRE(tap.ok());
	REQUIRE(tx.ok());

	KernelWatch watch(net);
	const Frame syn = window_syn();
	REQUIRE(tx.send(syn.data));
	const uint32_t kernel_isn = synack_seq(tap.take(300));
	REQUIRE(kernel_isn != 0);
	REQUIRE(replay(net.outside, window_rest(kernel_isn), 1));
	const KernelCounts kernel = watch.take();
	// the kernel's verdicts: three INVALID (dropped by the INVALID rule),
	// the rest ESTABLISHED but the SYN
	REQUIRE(kernel.rules.count("filter/INPUT") == 1);
	CHECK(kernel.ct.at("invalid") == 3);
	CHECK(kernel.rules.at("filter/INPUT").at(2).first == 3);
	CHECK(kernel.rules.at("filter/INPUT").at(1).first == 5);

	eal_init();
	rte_mempool *mp = mbuf_pool("ct_window_pool", 2047);
	const std::vector<PipelineStage> stages = listrx_stages(file, "0");
	const uint32_t isn = listrx_isn(stages, mp);
	REQUIRE(isn != 0);
	std::vector<Frame> frames = window_rest(isn);
	frames.insert(frames.begin(), syn);
	auto make = [&](size_t at) { return frames[at % frames.size()].to_mbuf(mp); };
	const std::vector<uint16_t> polls = {3, (uint16_t)(frames.size() - 3)};
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		check_counts(kernel, run_engine(kind, 1, 64, stages, make, polls), 1);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}
