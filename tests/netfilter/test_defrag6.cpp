// SPDX-License-Identifier: BSD-3-Clause
// nf_defrag_ipv6 in l3-demux (nf_ct_frag6_gather before IPv6 PREROUTING
// when conntrack tracks IPv6), under every engine: fragments in order and
// reversed give one datagram that raw, conntrack and filter see once (one
// entry, one rule hit) and ip6_input delivers without ipv6_frag_rcv (no
// Ip6Reasm*); an overlap drops the fragment (NF_DROP) and the queue
// (RFC 5722), a duplicate is freed alone, a queue expires after
// nf_conntrack_frag6_timeout (Ip6ReasmFails + Ip6ReasmTimeout and the
// time exceeded about its first fragment, as ip6frag_expire_frag_queue), a fragment past 65535 bytes is dropped, one
// not a multiple of 8 bytes goes on for ipv6_frag_rcv to answer (a
// parameter problem through LOCAL_OUT's conntrack), and
// without conntrack nothing changes. Each case checks the fates, the
// bytes, the SNMP counters and that the mbuf pool is full afterwards.
#include <catch2/catch.hpp>

#include <cctype>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "../l3_demux/reasm_frames.h"
#include "engine_run.h"
#include "frames.h"
#include "temp_file.h"
#include "test_eal.h"

extern "C" {
#include "pipeline.h"
#include "sink.h"
}

using namespace lrx_test::frames;
using namespace lrx_test::reasm;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("defrag6_pool", 4095);
}

using Keys = lrx_test::StageKeys;
using Run = lrx_test::EngineRun;
using Snmp = std::map<std::string, uint64_t>;
using Fates = std::vector<std::string>;

const char *rules6 =
	"*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
	"-A PREROUTING -p udp\n"
	"COMMIT\n"
	"*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
	"-A INPUT -p udp -m conntrack --ctstate NEW -j ACCEPT\n"
	"-A INPUT -p ipv6-icmp -j ACCEPT\n"
	"COMMIT\n";

Run run_one(lrx_engine_kind engine, const std::vector<Frame> &in,
	    const std::vector<uint16_t> &polls, const Keys &keys)
{
	Run r = lrx_test::run_engine(
		engine, 1, 8,
		{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}}, {"l3-demux", keys}},
		[&](size_t at) { return in.at(at).to_mbuf(pool()); }, polls);
	lrx_test::erase_l3_split_counters(r);
	return r;
}

// every engine on the same input: identical to the packet engine's run,
// which is returned; conntrack with rules6 unless ct is false
Run run_all(const std::vector<Frame> &in, std::vector<uint16_t> polls = {},
	    bool ct = true, const Keys &extra = {})
{
	pool();
	static const lrx_test::TempFile file(rules6, "lrx_defrag6_rules");
	Keys keys = {{"local_ipv4", "10.0.0.2"}, {"local_ipv6", "2001:db8::2"},
		     {"udp_ports", "2000"}, {"ipfrag_clock", "polls"}};
	if (ct)
		keys.push_back({"netfilter6", file.path});
	for (auto &kv : extra)
		keys.push_back(kv);
	if (polls.empty())
		polls = {(uint16_t)in.size()};
	Run ref = run_one(LRX_ENGINE_PACKET, in, polls, keys);
	for (auto kind : {LRX_ENGINE_BURST, LRX_ENGINE_HYBRID, LRX_ENGINE_STATIC,
			  LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		Run r = run_one(kind, in, polls, keys);
		lrx_test::require_same_run(r, ref);
	}
	LRX_REQUIRE_POOL_FULL(pool());
	return ref;
}

std::string fate(lrx_next_t n)
{
	switch (lrx_next_kind(n)) {
	case LRX_NEXT_DELIVER: return "DELIVER";
	case LRX_NEXT_DROP:
		return std::string("DROP(") +
		       lrx_drop_reason_name((lrx_drop_reason)lrx_next_arg(n)) + ")";
	case LRX_NEXT_TX: return "TX";
	default: return "kind " + std::to_string(lrx_next_kind(n));
	}
}
std::string drop(lrx_drop_reason r) { return fate(lrx_next_drop(r)); }

Fates fates(const Run &r)
{
	Fates v;
	for (auto &o : r.out)
		v.push_back(fate(o.first));
	return v;
}

// the packet count of rule `rule` (1-based) of chain (ip6/TABLE/CHAIN)
uint64_t rule_pkts(const Run &r, const std::string &chain, uint32_t rule)
{
	for (const auto &entry : r.maps[1].at(chain)) {
		uint32_t key;
		uint64_t pkts;
		std::memcpy(&key, entry.data(), 4);
		std::memcpy(&pkts, entry.data() + 4, 8);
		if (key == rule)
			return pkts;
	}
	return 0;
}

const Frame w = whole6();
const Frame a = frag6(w, 0, 80, true), b = frag6(w, 80, 80, true),
	    c = frag6(w, 160, 48, false);

} // namespace

TEST_CASE("nf_defrag_ipv6: in order and reversed, the datagram goes through the "
	  "hooks once, without Ip6Reasm*", "[netfilter][conntrack][defrag6]")
{
	for (const auto &in : {std::vector<Frame>{a, b, c}, std::vector<Frame>{c, b, a}}) {
		for (auto polls : {std::vector<uint16_t>{3}, std::vector<uint16_t>{1, 1, 1}}) {
			INFO("first offset " << (in[0].data == a.data ? 0 : 160) << ", polls "
					     << polls.size());
			Run r = run_all(in, polls);
			REQUIRE(r.out.size() == 1);
			CHECK(fate(r.out[0].first) == "DELIVER");
			CHECK(r.out[0].second == w.data);
			CHECK(r.stats[1].consumed == 2);
			check_snmp(r, {{"Ip6InReceives", 3},
				       {"Ip6InDelivers", 1}, {"Udp6InDatagrams", 1}});
			CHECK(r.counters[1]["nf_conntrack_insert"] == 1);
			CHECK(r.counters[1]["nf6_defrag_oks"] == 1);
			CHECK(rule_pkts(r, "ip6/raw/PREROUTING", 1) == 1);
			CHECK(rule_pkts(r, "ip6/filter/INPUT", 1) == 1);
			CHECK(r.counters[1]["reasm_queues"] == 0);
			CHECK(r.counters[1]["reasm_mem"] == 0);
		}
	}
}

TEST_CASE("nf_defrag_ipv6: a datagram to a closed port is answered once, quoting "
	  "it whole", "[netfilter][conntrack][defrag6]")
{
	const Frame closed = with([](Spec &s) {
		s.l3 = L3::ipv6;
		s.dport = 9;
		s.payload = seq_payload(200);
	});
	Run r = run_all({frag6(closed, 80, 128, false), frag6(closed, 0, 80, true)});
	CHECK(fates(r) == Fates{"TX"});
	check_snmp(r, {{"Ip6InReceives", 2},
		       {"Ip6InDelivers", 1}, {"Udp6NoPorts", 1}, {"Ip6OutRequests", 1},
		       {"Icmp6OutMsgs", 1}, {"Icmp6OutDestUnreachs", 1},
		       {"Icmp6OutType1", 1}});
	CHECK(r.counters[1]["nf_conntrack_insert"] == 1);
}

TEST_CASE("nf_defrag_ipv6: an overlap drops the fragment and its queue; a "
	  "duplicate is freed alone", "[netfilter][conntrack][defrag6]")
{
	// [0,80) held, [40,120) overlaps: NF_DROP, the queue goes (RFC 5722);
	// the last one starts a queue that the run's end expires
	Run r = run_all({a, frag6(w, 40, 80, true), c});
	CHECK(fates(r) == Fates{drop(LRX_DROP_NETFILTER_DROP), drop(LRX_DROP_FRAG_OVERLAP),
				drop(LRX_DROP_FRAG_REASM_TIMEOUT)});
	check_snmp(r, {{"Ip6InReceives", 3},
		       {"Ip6ReasmFails", 1}, {"Ip6ReasmTimeout", 1}});
	CHECK(r.counters[1]["nf6_prerouting_drops"] == 1);
	CHECK(r.counters[1]["nf6_defrag_overlaps"] == 1);
	CHECK(r.counters[1]["nf_conntrack_insert"] == 0);

	Run d = run_all({a, a, b, c});
	CHECK(fates(d) == Fates{drop(LRX_DROP_NOT_SPECIFIED), "DELIVER"});
	CHECK(d.out[1].second == w.data);
	check_snmp(d, {{"Ip6InReceives", 4},
		       {"Ip6InDelivers", 1}, {"Udp6InDatagrams", 1}});
}

TEST_CASE("nf_defrag_ipv6: a queue expires after nf_conntrack_frag6_timeout, "
	  "not ipfrag_time", "[netfilter][conntrack][defrag6]")
{
	const Frame other = udp6(1, 2000);
	const std::vector<Frame> in = {a, other, other, other, b, c};
	const std::vector<uint16_t> polls = {1, 1, 1, 1, 2};
	// the default 60 (polls) keeps a's queue: the datagram completes
	Run kept = run_all(in, polls, true, {{"ipfrag_time", "2"}});
	CHECK(fates(kept) == Fates{"DELIVER", "DELIVER", "DELIVER", "DELIVER"});
	CHECK(kept.out[3].second == w.data);
	// 2 polls: a expires; b and c wait for the first fragment until the
	// run's end
	// run's end; a's expiry sends the ICMPv6 time exceeded about it
	// (ip6frag_expire_frag_queue: nf_defrag_ipv6's queues too), through
	// LOCAL_OUT's conntrack, which finds no entry for the quoted flow
	// (nf_conntrack_inet_error: icmp_error, as Linux 6.18 counts it)
	Run gone = run_all(in, polls, true, {{"nf_conntrack_frag6_timeout", "2"}});
	CHECK(fates(gone) == Fates{"DELIVER", "TX", "DELIVER", "DELIVER",
				   drop(LRX_DROP_FRAG_REASM_TIMEOUT),
				   drop(LRX_DROP_FRAG_REASM_TIMEOUT)});
	REQUIRE(gone.out.size() == 6);
	const std::vector<uint8_t> &reply = gone.out[1].second;
	REQUIRE(reply.size() == w.l2_len + 48u + (a.data.size() - w.l2_len));
	CHECK(reply[w.l2_len + 40] == 3); // ICMPV6_TIME_EXCEED
	CHECK(reply[w.l2_len + 41] == 1); // ICMPV6_EXC_FRAGTIME
	CHECK(std::vector<uint8_t>(reply.begin() + w.l2_len + 48, reply.end()) ==
	      std::vector<uint8_t>(a.data.begin() + w.l2_len, a.data.end()));
	CHECK(gone.counters[1]["nf_conntrack_icmp_error"] == 1);
	check_snmp(gone, {{"Ip6InReceives", 6},
			  {"Ip6InDelivers", 3}, {"Udp6InDatagrams", 3},
			  {"Ip6ReasmFails", 2}, {"Ip6ReasmTimeout", 2},
			  {"Ip6OutRequests", 1}, {"Icmp6OutMsgs", 1},
			  {"Icmp6OutTimeExcds", 1}, {"Icmp6OutType3", 1}});
}

TEST_CASE("nf_defrag_ipv6: too long is dropped; not a multiple of 8 goes on to "
	  "ipv6_frag_rcv", "[netfilter][conntrack][defrag6]")
{
	// offset 65528 + 16 bytes: past IPV6_MAXPLEN (-EINVAL: NF_DROP)
	Run big = run_all({frag6(w, 0, 16, false).set_be16(w.l2_len + 42, 65528)});
	CHECK(fates(big) == Fates{drop(LRX_DROP_NETFILTER_DROP)});
	CHECK(big.counters[1]["nf6_prerouting_drops"] == 1);
	check_snmp(big, {{"Ip6InReceives", 1}});
	// 76 bytes with more to come (-EPROTO): a's queue is killed, the
	// hooks see the fragment (conntrack=on, no rules: accepted) and
	// ipv6_frag_rcv refuses it (Ip6InHdrErrors) with a parameter problem
	// at the payload length (the fragment becomes the reply), its
	// fq_find's queue expiring at the run's end (fq->iif set: counted)
	Run odd = run_all({a, frag6(w, 80, 76, true)}, {}, false, {{"conntrack", "on"}});
	CHECK(fates(odd) == Fates{"TX", drop(LRX_DROP_FRAG_INVALID)});
	REQUIRE(odd.out.size() == 2);
	const std::vector<uint8_t> &reply = odd.out[0].second;
	REQUIRE(reply.size() > w.l2_len + 48u);
	CHECK(reply[w.l2_len + 40] == 4); // ICMPV6_PARAMPROB, ICMPV6_HDR_FIELD
	CHECK(reply[w.l2_len + 41] == 0);
	CHECK(reply[w.l2_len + 47] == 4);
	CHECK(odd.counters[1]["nf6_defrag_fails"] == 1);
	// LOCAL_OUT: the quoted fragment has no tuple (get_l4proto: a
	// non-first fragment), nf_conntrack_icmpv6_error fails
	CHECK(odd.counters[1]["nf_conntrack_icmp_error"] == 1);
	check_snmp(odd, {{"Ip6InReceives", 2},
			 {"Ip6ReasmReqds", 1}, {"Ip6InHdrErrors", 1},
			 {"Ip6ReasmFails", 1}, {"Ip6ReasmTimeout", 1},
			 {"Ip6OutRequests", 1}, {"Icmp6OutMsgs", 1},
			 {"Icmp6OutParmProblems", 1}, {"Icmp6OutType4", 1}});
}

TEST_CASE("nf_defrag_ipv6: without IPv6 conntrack fragments reassemble after "
	  "LOCAL_IN as before", "[netfilter][defrag6]")
{
	Run r = run_all({c, b, a}, {}, false);
	REQUIRE(r.out.size() == 1);
	CHECK(r.out[0].second == w.data);
	check_snmp(r, {{"Ip6InReceives", 3},
		       {"Ip6ReasmReqds", 3}, {"Ip6ReasmOKs", 1}, {"Ip6InDelivers", 1},
		       {"Udp6InDatagrams", 1}});
	CHECK(r.counters[1]["nf6_defrag_reqds"] == 0);
}

TEST_CASE("nf_defrag_ipv6: a hop-by-hop header before the fragment header stays "
	  "in the datagram", "[netfilter][conntrack][defrag6]")
{
	const std::vector<uint8_t> padn = {1, 4, 0, 0, 0, 0};
	auto hbh = [&](const Frame &f) { return ip6_insert_ext(f, 0, ip6_ext(44, padn)); };
	Run r = run_all({hbh(c), hbh(a), hbh(b)});
	REQUIRE(r.out.size() == 1);
	CHECK(fate(r.out[0].first) == "DELIVER");
	CHECK(r.out[0].second == ip6_insert_ext(w, 0, ip6_ext(17, padn)).data);
	check_snmp(r, {{"Ip6InReceives", 3}, {"Ip6InDelivers", 1}, {"Udp6InDatagrams", 1}});
	CHECK(rule_pkts(r, "ip6/filter/INPUT", 1) == 1);
}
