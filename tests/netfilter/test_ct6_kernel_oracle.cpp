// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for IPv6 connection tracking: a host firewall's
// ip6tables rule set (ESTABLISHED,RELATED accepted, INVALID dropped,
// UNTRACKED accepted, NEW to a few ports and ICMPv6, policy DROP, a raw
// CT --notrack) is loaded by ip6tables-legacy-restore into a veth's netns
// (a TCP listener on [::]:5201) and by l3-demux's netfilter6 key; the
// same IPv6 frames go to both in order: a TCP handshake to the listener
// (SYN, its retransmission, the ACK), a SYN and a stray ACK to a closed
// port accepted NEW (answered by RST: gone), a SYN the policy drops, an
// unsolicited SYN-ACK and RST, a UDP query to a closed port twice (the
// host's port unreachable goes out RELATED), an ICMPv6 error RELATED to
// that flow and one about no flow, an UNTRACKED datagram, an echo
// request twice (the echo reply makes the second ESTABLISHED), a
// neighbour solicitation (UNTRACKED: noct_valid_new; listrx has no
// neighbour discovery and the kernel answers it, so replies are not
// compared). Every rule's and policy's counters, the nstat counters and
// conntrack's (/proc/net/stat/nf_conntrack's invalid, icmp_error, drop,
// early_drop; the entries of /proc/net/nf_conntrack) must be equal under
// every engine, with nf_conntrack_tcp_be_liberal=1 on both sides. Needs
// root and ip6tables-legacy; skips with a printed reason otherwise.
#include <catch2/catch.hpp>

#include <netinet/in.h>

#include <unistd.h>

#include <functional>
#include <string>
#include <vector>

#include "ct_oracle.h"
#include "engine_run.h"
#include "../l3_demux/reasm_frames.h"
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

const char *rules6_text =
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
	"-A INPUT -p ipv6-icmp -m state --state NEW -j ACCEPT\n"
	"COMMIT\n";

const Ip6 peer = ip6_doc(1), host = ip6_doc(2);

Frame v6(const std::function<void(Spec &)> &f)
{
	return with([&](Spec &s) {
		s.l3 = L3::ipv6;
		f(s);
	});
}

Frame tcp(uint8_t flags, uint16_t sport, uint16_t dport, uint32_t seq, uint32_t ack)
{
	return v6([&](Spec &s) {
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
	return v6([&](Spec &s) {
		s.ip6_src = host;
		s.ip6_dst = peer;
		s.sport = sport;
		s.dport = dport;
	});
}

// a port unreachable from the peer quoting what the host sent it
Frame unreachable_about(const Frame &sent)
{
	std::vector<uint8_t> q(sent.data.begin() + sent.l2_len,
			       sent.data.begin() + sent.l4_off + 8);
	return v6([&](Spec &s) {
		s.l4 = L4::icmp;
		s.icmp_type = 1;
		s.icmp_code = 4;
		s.payload = q;
		s.default_payload = false;
	});
}

Frame echo()
{
	return v6([](Spec &s) {
		s.l4 = L4::icmp;
		s.icmp_type = 128;
	});
}

// a neighbour solicitation for the host's address (hop limit 255)
Frame solicitation()
{
	return v6([](Spec &s) {
		s.l4 = L4::icmp;
		s.icmp_type = 135;
		s.hop_limit = 255;
		s.payload.assign(host.begin(), host.end());
		s.default_payload = false;
	});
}

std::string oracle6_skip()
{
	if (std::string why = oracle_unavailable(); !why.empty())
		return why;
	if (sh("command -v ip6tables-legacy-restore && command -v ip6tables-legacy-save") != 0)
		return "needs ip6tables-legacy-restore (apt-get install iptables)";
	return "";
}

// the netns with the rules and the sysctls; "" or why not
std::string kernel_setup6(const Netns &net, const TempFile &file)
{
	if (!net.ok)
		return net.why;
	if (net.in("sysctl -w net.ipv6.icmp.ratelimit=0") != "")
		return "cannot set net.ipv6.icmp.ratelimit in the netns";
	if (std::string why = net.static_peer(); !why.empty())
		return why;
	if (!settle(net))
		return "the netns's IPv6 address did not settle";
	if (sh("ip netns exec " + net.ns + " ip6tables-legacy-restore " + file.path) != 0)
		return "ip6tables-legacy-restore refused the rules in the netns "
		       "(no xt_conntrack, xt_state or xt_CT for IPv6 in this kernel?)";
	if (sh("ip netns exec " + net.ns +
	       " sysctl -w net.netfilter.nf_conntrack_tcp_be_liberal=1") != 0)
		return "no net.netfilter.nf_conntrack_tcp_be_liberal in the netns";
	return "";
}

const char *const compared6[] = {
	"Ip6InReceives", "Ip6InDelivers", "TcpInSegs", "Udp6NoPorts", "Icmp6InMsgs",
	"Icmp6InEchos", "Icmp6OutEchoReplies", "Icmp6OutDestUnreachs",
};

} // namespace

TEST_CASE("kernel oracle: an ip6tables stateful firewall (IPv6 conntrack) counts "
	  "every rule, nstat and conntrack counter alike, under every engine",
	  "[netfilter][conntrack][kernel]")
{
	if (std::string why = oracle6_skip(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	Netns net;
	const TempFile file(rules6_text, "lrx_ct6_rules");
	if (std::string why = kernel_setup6(net, file); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	CtListener listener(net, AF_INET6);
	if (!listener.error.empty()) {
		WARN("SKIPPED: " << listener.error);
		return;
	}

	const std::vector<Frame> frames = {
		tcp(TCP_SYN, 40000, 5201, 100, 0),           // NEW, SYN-ACK out
		tcp(TCP_SYN, 40000, 5201, 100, 0),           // ESTABLISHED (ignored)
		tcp(TCP_ACK, 40000, 5201, 101, 1),           // ESTABLISHED
		tcp(TCP_SYN, 40001, 23, 7, 0),               // NEW: policy
		tcp(TCP_SYN, 40002, 24, 7, 0),               // NEW, RST out: gone
		tcp(TCP_ACK, 40003, 24, 8, 9),               // NEW (loose), RST out: gone
		tcp(TCP_SYN | TCP_ACK, 40004, 5201, 7, 9),   // INVALID
		tcp(TCP_RST, 40005, 5201, 7, 0),             // INVALID
		udp6(5353, 53),                              // NEW, unreachable out
		udp6(5353, 53),                              // NEW again
		unreachable_about(udp_from_host(53, 5353)),  // RELATED
		unreachable_about(udp_from_host(1, 2)),      // INVALID (error)
		udp6(1, 7),                                  // UNTRACKED
		echo(),                                      // NEW, echo reply out
		echo(),                                      // ESTABLISHED
		solicitation(),                              // UNTRACKED, NA out
		udp6(1, 9),                                  // NEW: policy
	};

	KernelWatch watch(net, "ip6tables-legacy-save -c", "ip6/");
	REQUIRE(replay(net.outside, frames, 1));
	const KernelCounts kernel = watch.take();
	REQUIRE(kernel.rules.count("ip6/filter/INPUT") == 1);

	eal_init();
	rte_mempool *mp = mbuf_pool("ct6_oracle_pool", 2047);
	const std::vector<PipelineStage> stages = {
		{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
		{"l3-demux", {{"local_ipv4", "10.0.0.2/24"},
			      {"local_ipv6", "2001:db8::2/64"},
			      {"udp_ports", "none"},
			      {"tcp_ports", "5201"},
			      {"mcast_groups", "none"},
			      {"trust_ip_csum_hint", "no"},
			      {"icmpv6_ratelimit", "0"},
			      {"ipv6_mip6", "no"},
			      {"icmp_clock", "polls"},
			      {"netfilter6", file.path},
			      {"nf_conntrack_tcp_be_liberal", "1"}}},
	};
	auto make = [&](size_t at) { return frames[at % frames.size()].to_mbuf(mp); };
	// a poll of 5, then the rest: bursts cut flows apart
	const std::vector<uint16_t> polls = {5, (uint16_t)(frames.size() - 5)};
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		const EngineRun r = run_engine(kind, 1, 64, stages, make, polls);
		check_rule_counts(kernel, r);
		for (const char *name : compared6) {
			const uint64_t k = kernel.nstat.count(name) ? kernel.nstat.at(name) : 0;
			INFO(name << ": kernel " << k << ", listrx " << r.counters[1].at(name));
			CHECK(k == r.counters[1].at(name));
		}
		// the flows: 5201's handshake, the UDP query, the echo
		check_ct_counts(kernel, r, 3 + 2 /* the SYN and ACK to 24 */);
		CHECK(r.counters[1].at("nf_prerouting_drops") == 0);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {

// a datagram of 200 payload bytes from the peer (UDP, ICMPv6 or TCP as f
// sets), to cut into fragments
Frame whole(const std::function<void(Spec &)> &f)
{
	return v6([&](Spec &s) {
		s.payload = reasm::seq_payload(200);
		s.default_payload = false;
		f(s);
	});
}

// its IP payload's bytes [off, off + len) (to the end when len is 0)
Frame piece(const Frame &w, uint32_t off, uint32_t len, uint32_t id)
{
	const uint32_t payload = w.l3_len - 40u;
	const bool last = len == 0 || off + len >= payload;
	return reasm::frag6(w, off, last ? payload - off : len, !last, id);
}

} // namespace

TEST_CASE("kernel oracle: nf_defrag_ipv6 gathers IPv6 fragments before the "
	  "stateful firewall, every counter alike under every engine",
	  "[netfilter][conntrack][kernel][defrag6]")
{
	if (std::string why = oracle6_skip(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	Netns net;
	const TempFile file(rules6_text, "lrx_defrag6_rules");
	if (std::string why = kernel_setup6(net, file); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	if (net.in("sysctl -w net.netfilter.nf_conntrack_frag6_timeout=1") != "") {
		WARN("SKIPPED: no net.netfilter.nf_conntrack_frag6_timeout in the netns");
		return;
	}
	CtListener listener(net, AF_INET6);
	if (!listener.error.empty()) {
		WARN("SKIPPED: " << listener.error);
		return;
	}
	const Frame query = whole([](Spec &s) { s.sport = 5353; s.dport = 53; });
	const Frame ping = whole([](Spec &s) { s.l4 = L4::icmp; s.icmp_type = 128; });
	const Frame syn = whole([](Spec &s) {
		s.l4 = L4::tcp;
		s.tcp_flags = TCP_SYN;
		s.sport = 40000;
		s.dport = 5201;
		s.seq = 100;
	});
	const Frame overlapped = whole([](Spec &s) { s.sport = 5354; s.dport = 53; });
	const Frame cut = whole([](Spec &s) { s.sport = 5355; s.dport = 53; });
	const Frame lone = whole([](Spec &s) { s.sport = 5356; s.dport = 53; });
	const std::vector<Frame> frames = {
		// one datagram each: NEW, one rule hit; the port unreachable,
		// the echo reply, the SYN-ACK out
		piece(query, 0, 80, 1), piece(query, 80, 80, 1), piece(query, 160, 0, 1),
		piece(ping, 160, 0, 2), piece(ping, 80, 80, 2), piece(ping, 0, 80, 2),
		piece(syn, 96, 0, 3), piece(syn, 0, 96, 3),
		// an overlap: NF_DROP, its queue killed; the last starts a queue
		// that expires (Ip6ReasmFails + Ip6ReasmTimeout, no ICMPv6: no
		// first fragment)
		piece(overlapped, 0, 80, 4), piece(overlapped, 40, 80, 4),
		piece(overlapped, 160, 0, 4),
		// incomplete: expires
		piece(cut, 80, 80, 5),
		// a first fragment alone: its expiry sends the ICMPv6 time
		// exceeded (ip6frag_expire_frag_queue), through LOCAL_OUT's
		// conntrack (icmp_error: no entry for the quoted flow)
		piece(lone, 0, 80, 6),
		// the query again, whole: ESTABLISHED by the port unreachable
		query,
	};

	KernelWatch watch(net, "ip6tables-legacy-save -c", "ip6/");
	REQUIRE(replay(net.outside, frames, 1));
	sleep(3); // nf_conntrack_frag6_timeout=1: the queues left expire
	const KernelCounts kernel = watch.take();
	REQUIRE(kernel.rules.count("ip6/filter/INPUT") == 1);

	eal_init();
	rte_mempool *mp = mbuf_pool("defrag6_oracle_pool", 2047);
	const std::vector<PipelineStage> stages = {
		{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
		{"l3-demux", {{"local_ipv4", "10.0.0.2/24"},
			      {"local_ipv6", "2001:db8::2/64"},
			      {"udp_ports", "none"},
			      {"tcp_ports", "5201"},
			      {"mcast_groups", "none"},
			      {"icmpv6_ratelimit", "0"},
			      {"ipv6_mip6", "no"},
			      {"icmp_clock", "polls"},
			      {"netfilter6", file.path},
			      {"nf_conntrack_tcp_be_liberal", "1"}}},
	};
	auto make = [&](size_t at) { return frames[at].to_mbuf(mp); };
	const std::vector<uint16_t> polls = {4, (uint16_t)(frames.size() - 4)};
	const char *const compared[] = {
		"Ip6InReceives", "Ip6InDelivers", "Ip6ReasmReqds",
		"Ip6ReasmOKs", "Ip6ReasmFails", "Ip6ReasmTimeout", "Ip6InHdrErrors",
		"Udp6InDatagrams", "Udp6NoPorts", "TcpInSegs", "Icmp6InMsgs",
		"Icmp6InEchos", "Icmp6OutEchoReplies", "Icmp6OutDestUnreachs",
		"Icmp6OutTimeExcds",
	};
	for (auto kind : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST, LRX_ENGINE_HYBRID,
			  LRX_ENGINE_STATIC, LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		const EngineRun r = run_engine(kind, 1, 64, stages, make, polls);
		check_rule_counts(kernel, r);
		for (const char *name : compared) {
			const uint64_t k = kernel.nstat.count(name) ? kernel.nstat.at(name) : 0;
			const uint64_t l = r.counters[1].count(name) ? r.counters[1].at(name) : 0;
			INFO(name << ": kernel " << k << ", listrx " << l);
			CHECK(k == l);
		}
		// the query, the echo, the SYN: one entry each
		check_ct_counts(kernel, r, 3);
		CHECK(r.counters[1].at("nf6_defrag_oks") == 3);
		CHECK(r.counters[1].at("nf6_prerouting_drops") == 1);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}
