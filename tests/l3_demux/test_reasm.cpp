// SPDX-License-Identifier: BSD-3-Clause
// l3-demux reassembly (ip_defrag / ipv6_frag_rcv), under every engine:
// in-order and out-of-order streams give one datagram (an mbuf chain whose
// bytes are the unfragmented frame, as ip_frag_reasm / ip6_frag_reasm
// rewrite it) checked and delivered like any other; overlaps discard the
// queue, duplicates are dropped alone, queues time out (per poll with
// ipfrag_clock=polls, and at the run's end), ipfrag_high_thresh fails new
// fragments, IPv6 atomic fragments pass (RFC 6946), a first fragment
// without the upper-layer header is dropped (RFC 8200). Each case checks
// the verdicts, the bytes, every SNMP counter, and that the mbuf pool is
// full afterwards.
#include <catch2/catch.hpp>

#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "engine_run.h"
#include "frames.h"
#include "reasm_frames.h"
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
	return lrx_test::mbuf_pool("reasm_pool", 4095);
}

using Keys = lrx_test::StageKeys;
using Run = lrx_test::EngineRun;
using Snmp = std::map<std::string, uint64_t>;

const Keys bm_keys = {{"host_mac", "02:00:00:00:00:02"}};
const Keys l3_keys = {{"local_ipv4", "10.0.0.2"}, {"local_ipv6", "2001:db8::2"},
		      {"udp_ports", "2000"}};

Run run_one(lrx_engine_kind engine, unsigned k, const std::vector<Frame> &in,
	    const std::vector<uint16_t> &polls, const Keys &extra, size_t seg)
{
	Keys keys = l3_keys;
	for (auto &kv : extra)
		keys.push_back(kv);
	Run r = lrx_test::run_engine(
		engine, k, 8, {{"build-meta", bm_keys}, {"l3-demux", keys}},
		[&](size_t at) {
			return seg ? in.at(at).to_mbuf_chain(pool(), seg)
				   : in.at(at).to_mbuf(pool());
		},
		polls);
	lrx_test::erase_l3_split_counters(r);
	return r;
}

// Every engine on the same input: identical to the packet engine's run,
// which is returned. seg: frames arrive as chains of seg-byte segments.
Run run_all(const std::vector<Frame> &in, std::vector<uint16_t> polls = {},
	    const Keys &extra = {}, size_t seg = 0)
{
	pool(); // EAL first
	if (polls.empty())
		polls = {(uint16_t)in.size()};
	Run ref = run_one(LRX_ENGINE_PACKET, 0, in, polls, extra, seg);
	for (auto kind : {LRX_ENGINE_BURST, LRX_ENGINE_HYBRID, LRX_ENGINE_STATIC,
			  LRX_ENGINE_GRAPH}) {
		INFO("engine " << lrx_engine_name(kind));
		Run r = run_one(kind, 1, in, polls, extra, seg);
		REQUIRE(r.out.size() == ref.out.size());
		for (size_t i = 0; i < r.out.size(); i++) {
			INFO("packet " << i);
			CHECK(r.out[i].first == ref.out[i].first);
			CHECK(r.out[i].second == ref.out[i].second);
		}
		for (size_t s = 0; s < 2; s++) {
			CHECK(r.stats[s].delivered == ref.stats[s].delivered);
			CHECK(r.stats[s].consumed == ref.stats[s].consumed);
			for (unsigned d = 0; d < LRX_DROP_MAX; d++)
				CHECK(r.stats[s].drops[d] == ref.stats[s].drops[d]);
			CHECK(r.counters[s] == ref.counters[s]);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
	return ref;
}

std::string verdict(lrx_next_t n)
{
	switch (lrx_next_kind(n)) {
	case LRX_NEXT_DELIVER: return "DELIVER";
	case LRX_NEXT_TX: return "TX(" + std::to_string(lrx_next_arg(n)) + ")";
	case LRX_NEXT_DROP:
		return std::string("DROP(") +
		       lrx_drop_reason_name((lrx_drop_reason)lrx_next_arg(n)) + ")";
	default: return "kind " + std::to_string(lrx_next_kind(n));
	}
}
std::string drop(lrx_drop_reason r) { return verdict(lrx_next_drop(r)); }

// The fates in sink order: a fragment discarded with its queue comes back
// as a drop at the end of the poll (or the run), after that poll's others.
std::vector<std::string> verdicts(const Run &r)
{
	std::vector<std::string> v;
	for (auto &o : r.out)
		v.push_back(verdict(o.first));
	return v;
}
using Fates = std::vector<std::string>;

uint32_t be32_at(const std::vector<uint8_t> &b, size_t off)
{
	return (uint32_t)b.at(off) << 24 | (uint32_t)b.at(off + 1) << 16 |
	       (uint32_t)b.at(off + 2) << 8 | b.at(off + 3);
}

// The ICMPv6 parameter problem (icmpv6_param_prob) that answers frag: back
// out of the ingress port, from the address it was sent to, code and
// pointer as given, quoting the whole fragment's IPv6 packet.
void check_paramprob6(const Run &r, const Frame &frag, uint8_t code,
		      uint32_t pointer)
{
	REQUIRE(r.out.size() == 1);
	CHECK(verdict(r.out[0].first) == "TX(0)");
	const std::vector<uint8_t> &c = r.out[0].second;
	const size_t l3 = frag.l2_len, ip_len = 40u + frag.be16(l3 + 4);
	REQUIRE(c.size() == l3 + 48 + ip_len);
	CHECK(c[l3 + 6] == 58); // ICMPv6
	CHECK(std::vector<uint8_t>(c.begin() + l3 + 8, c.begin() + l3 + 24) ==
	      std::vector<uint8_t>(frag.data.begin() + l3 + 24,
				   frag.data.begin() + l3 + 40));
	CHECK(std::vector<uint8_t>(c.begin() + l3 + 24, c.begin() + l3 + 40) ==
	      std::vector<uint8_t>(frag.data.begin() + l3 + 8,
				   frag.data.begin() + l3 + 24));
	CHECK(c[l3 + 40] == 4); // ICMPV6_PARAMPROB
	CHECK(c[l3 + 41] == code);
	CHECK(be32_at(c, l3 + 44) == pointer);
	CHECK(std::vector<uint8_t>(c.begin() + l3 + 48, c.end()) ==
	      std::vector<uint8_t>(frag.data.begin() + l3,
				   frag.data.begin() + l3 + ip_len));
}

// The ICMP time exceeded, code 1 (ip_expire: ICMP_EXC_FRAGTIME;
// ip6frag_expire_frag_queue: ICMPV6_EXC_FRAGTIME) that the expiry of
// first's queue sent: back out of the ingress port, from the address first
// was sent to, quoting first's whole IP packet.
void check_time_exceeded(const std::pair<lrx_next_t, std::vector<uint8_t>> &out,
			 const Frame &first, bool v6)
{
	CHECK(verdict(out.first) == "TX(0)");
	const std::vector<uint8_t> &c = out.second;
	const size_t l3 = first.l2_len;
	const size_t ip_len = v6 ? 40u + first.be16(l3 + 4) : first.be16(l3 + 2);
	const size_t hdr = v6 ? 48 : 28, src = v6 ? 8 : 12, alen = v6 ? 16 : 4;
	REQUIRE(c.size() == l3 + hdr + ip_len);
	CHECK(c[l3 + (v6 ? 6 : 9)] == (v6 ? 58 : 1));
	auto bytes = [](const std::vector<uint8_t> &b, size_t off, size_t n) {
		return std::vector<uint8_t>(b.begin() + off, b.begin() + off + n);
	};
	CHECK(bytes(c, l3 + src, alen) == bytes(first.data, l3 + src + alen, alen));
	CHECK(bytes(c, l3 + src + alen, alen) == bytes(first.data, l3 + src, alen));
	const size_t icmp = l3 + hdr - 8;
	CHECK(c[icmp] == (v6 ? 3 : 11));
	CHECK(c[icmp + 1] == 1);
	CHECK(be32_at(c, icmp + 4) == 0);
	CHECK(bytes(c, l3 + hdr, ip_len) == bytes(first.data, l3, ip_len));
}

// What a time exceeded adds to the counters of family fam ("Ip", "Ip6").
Snmp with_time_exceeded(Snmp s, const std::string &fam)
{
	const bool v6 = fam == "Ip6";
	s[v6 ? "Icmp6OutMsgs" : "IcmpOutMsgs"]++;
	s[v6 ? "Icmp6OutTimeExcds" : "IcmpOutTimeExcds"]++;
	s[v6 ? "Icmp6OutType3" : "IcmpMsgOutType11"]++;
	s[v6 ? "Ip6OutRequests" : "IpOutRequests"]++;
	return s;
}

// What the parameter problem adds to the counters (icmp6_send).
Snmp with_paramprob6(Snmp s)
{
	s["Icmp6OutMsgs"] = 1;
	s["Icmp6OutParmProblems"] = 1;
	s["Icmp6OutType4"] = 1;
	s["Ip6OutRequests"] = 1;
	return s;
}

} // namespace

TEST_CASE("reassembly: IPv4 in order and out of order, one datagram delivered",
	  "[l3_demux][reasm]")
{
	const Frame w = whole4();
	const std::vector<Frame> in_order = {frag4(w, 0, 80, true),
					     frag4(w, 80, 80, true),
					     frag4(w, 160, 48, false)};
	const std::vector<std::vector<Frame>> streams = {
		in_order,
		{in_order[2], in_order[0], in_order[1]},
		{in_order[1], in_order[2], in_order[0]},
	};
	for (size_t i = 0; i < streams.size(); i++) {
		for (auto polls : {std::vector<uint16_t>{3},
				   std::vector<uint16_t>{1, 1, 1}}) {
			INFO("stream " << i << " polls " << polls.size());
			Run r = run_all(streams[i], polls);
			REQUIRE(r.out.size() == 1);
			CHECK(verdict(r.out[0].first) == "DELIVER");
			CHECK(r.out[0].second == reassembled4(w).data);
			CHECK(r.stats[1].consumed == 2);
			check_snmp(r, {{"IpInReceives", 3}, {"IpReasmReqds", 3},
				       {"IpReasmOKs", 1}, {"IpInDelivers", 1},
				       {"UdpInDatagrams", 1}});
			CHECK(r.counters[1]["merged"] == 2);
			CHECK(r.counters[1]["merged"] == 2);
			CHECK(r.counters[1]["reasm_queues"] == 0);
			CHECK(r.counters[1]["reasm_mem"] == 0);
		}
	}
}

TEST_CASE("reassembly: fragments that arrive as mbuf chains",
	  "[l3_demux][reasm]")
{
	const Frame w4 = whole4(), w6 = whole6();
	for (size_t seg : {64, 100}) {
		INFO("segments of " << seg);
		Run r = run_all({frag4(w4, 160, 48, false), frag4(w4, 80, 80, true),
				 frag4(w4, 0, 80, true)}, {}, {}, seg);
		REQUIRE(r.out.size() == 1);
		CHECK(verdict(r.out[0].first) == "DELIVER");
		CHECK(r.out[0].second == reassembled4(w4).data);
		Run r6 = run_all({frag6(w6, 96, 112, false), frag6(w6, 0, 96, true)},
				 {}, {}, seg);
		REQUIRE(r6.out.size() == 1);
		CHECK(verdict(r6.out[0].first) == "DELIVER");
		CHECK(r6.out[0].second == w6.data);
	}
}

TEST_CASE("reassembly: IPv6 destination options before the fragment header",
	  "[l3_demux][reasm]")
{
	// the datagram: IPv6 | dstopts (PadN) | UDP; its fragments carry
	// IPv6 | dstopts (next 44) | fragment (next 17) | data, and
	// ip6_frag_reasm writes 17 back into the options header
	const Frame w = whole6();
	const std::vector<uint8_t> opts = {17, 0, 1, 4, 0, 0, 0, 0};
	auto with_opts = [&](const Frame &f, bool fragment) {
		Frame o;
		const size_t fixed = f.l2_len + 40u;
		o.data.assign(f.data.begin(), f.data.begin() + fixed);
		o.data.insert(o.data.end(), opts.begin(), opts.end());
		o.data.insert(o.data.end(), f.data.begin() + fixed, f.data.end());
		o.l2_len = f.l2_len;
		o.l3 = L3::ipv6;
		o.set_u8(o.l2_len + 6, 60);
		o.set_u8(fixed, fragment ? 44 : 17);
		o.set_be16(o.l2_len + 4, (uint16_t)(f.be16(f.l2_len + 4) + 8));
		return o;
	};
	const Frame expect = with_opts(w, false);
	// the fragments of 60 bytes and less carry Ethernet padding: cut it
	Frame a = frag6(w, 0, 96, true), b = frag6(w, 96, 112, false);
	Run r = run_all({with_opts(b, true), with_opts(a, true)});
	REQUIRE(r.out.size() == 1);
	CHECK(verdict(r.out[0].first) == "DELIVER");
	CHECK(r.out[0].second == expect.data);
	check_snmp(r, {{"Ip6InReceives", 2}, {"Ip6ReasmReqds", 2},
		       {"Ip6ReasmOKs", 1}, {"Ip6InDelivers", 1},
		       {"Udp6InDatagrams", 1}});
}

TEST_CASE("reassembly: the UDP checksum is verified over the chain",
	  "[l3_demux][reasm]")
{
	const Frame w = whole4();
	Frame mid = frag4(w, 80, 80, true);
	mid.set_u8(mid.l2_len + 20 + 5, (uint8_t)(mid.u8(mid.l2_len + 20 + 5) ^ 0x40));
	Run r = run_all({frag4(w, 0, 80, true), mid, frag4(w, 160, 48, false)});
	REQUIRE(r.out.size() == 1);
	CHECK(verdict(r.out[0].first) == drop(LRX_DROP_UDP_CSUM));
	check_snmp(r, {{"IpInReceives", 3}, {"IpReasmReqds", 3}, {"IpReasmOKs", 1},
		       {"IpInDelivers", 1}, {"UdpInErrors", 1},
		       {"UdpInCsumErrors", 1}});
}

TEST_CASE("reassembly: an overlap discards the whole queue (RFC 5722)",
	  "[l3_demux][reasm]")
{
	const Frame w = whole4();
	// [0,80) held, [40,120) overlaps: both go, the queue is discarded;
	// the last fragment then starts a new queue that the run's end expires
	Run r = run_all({frag4(w, 0, 80, true), frag4(w, 40, 80, true),
			 frag4(w, 160, 48, false)});
	// the overlapping one at once; the held one with its queue; the last
	// when the run's end expires its queue
	CHECK(verdicts(r) == Fates{drop(LRX_DROP_FRAG_OVERLAP), drop(LRX_DROP_FRAG_OVERLAP),
				   drop(LRX_DROP_FRAG_REASM_TIMEOUT)});
	check_snmp(r, {{"IpInReceives", 3}, {"IpReasmReqds", 3},
		       {"IpExtReasmOverlaps", 1}, {"IpReasmFails", 2},
		       {"IpReasmTimeout", 1}});
	CHECK(r.counters[1]["reasm_frags_dropped"] == 2);
}

TEST_CASE("reassembly: a duplicate is dropped alone, the queue completes",
	  "[l3_demux][reasm]")
{
	const Frame w = whole4();
	const Frame a = frag4(w, 0, 80, true), b = frag4(w, 80, 80, true);
	// b inside the run [0,160) that a and b form: a duplicate too
	const Frame inside = frag4(w, 40, 80, true);
	Run r = run_all({a, b, a, inside, frag4(w, 160, 48, false)});
	REQUIRE(r.out.size() == 3);
	CHECK(verdict(r.out[0].first) == drop(LRX_DROP_DUP_FRAG));
	CHECK(verdict(r.out[1].first) == drop(LRX_DROP_DUP_FRAG));
	CHECK(verdict(r.out[2].first) == "DELIVER");
	CHECK(r.out[2].second == reassembled4(w).data);
	check_snmp(r, {{"IpInReceives", 5}, {"IpReasmReqds", 5}, {"IpReasmOKs", 1},
		       {"IpInDelivers", 1}, {"UdpInDatagrams", 1}});
}

TEST_CASE("reassembly: length rules of ip_frag_queue", "[l3_demux][reasm]")
{
	const Frame w = whole4();
	SECTION("a second last fragment with another end discards the queue")
	{
		Run r = run_all({frag4(w, 160, 48, false), frag4(w, 160, 40, false)});
		CHECK(verdicts(r) == Fates{drop(LRX_DROP_FRAG_INVALID), drop(LRX_DROP_FRAG_INVALID)});
		check_snmp(r, {{"IpInReceives", 2}, {"IpReasmReqds", 2},
			       {"IpReasmFails", 1}});
	}
	SECTION("a non-last fragment is trimmed to a multiple of 8")
	{
		// [0,85) holds [0,80); the next starts at 80
		Run r = run_all({frag4(w, 0, 85, true), frag4(w, 80, 128, false)});
		REQUIRE(r.out.size() == 1);
		CHECK(r.out[0].second == reassembled4(w).data);
		check_snmp(r, {{"IpInReceives", 2}, {"IpReasmReqds", 2},
			       {"IpReasmOKs", 1}, {"IpInDelivers", 1},
			       {"UdpInDatagrams", 1}});
	}
}

TEST_CASE("reassembly: queues time out (ipfrag_time) and at the run's end",
	  "[l3_demux][reasm]")
{
	const Frame w = whole4();
	const std::vector<Frame> in = {frag4(w, 0, 80, true), frag4(w, 80, 128, false)};
	// ipfrag_time=2 polls: a queue made in poll 0 expires at the end of
	// poll 1, so a fragment of poll 2 finds none and starts a queue the
	// run's end expires
	Run r = run_all(in, {1, 0, 1},
			{{"ipfrag_clock", "polls"}, {"ipfrag_time", "2"}});
	// the first queue held the first fragment: it becomes the ICMP time
	// exceeded; the second (the last fragment only) sends none
	REQUIRE(r.out.size() == 2);
	check_time_exceeded(r.out[0], in[0], false);
	CHECK(verdict(r.out[1].first) == drop(LRX_DROP_FRAG_REASM_TIMEOUT));
	check_snmp(r, with_time_exceeded({{"IpInReceives", 2}, {"IpReasmReqds", 2},
					  {"IpReasmFails", 2}, {"IpReasmTimeout", 2}},
					 "Ip"));
	// IPv6 the same (ip6frag_expire_frag_queue), at the end of poll 1
	Run ipv6_first = run_all({frag6(whole6(), 0, 96, true)}, {1, 0},
				 {{"ipfrag_clock", "polls"}, {"ipfrag_time", "1"}});
	REQUIRE(ipv6_first.out.size() == 1);
	check_time_exceeded(ipv6_first.out[0], frag6(whole6(), 0, 96, true), true);
	check_snmp(ipv6_first,
		   with_time_exceeded({{"Ip6InReceives", 1}, {"Ip6ReasmReqds", 1},
				       {"Ip6ReasmFails", 1}, {"Ip6ReasmTimeout", 1}},
				      "Ip6"));
	// within the time (poll 1) the same stream completes
	Run ok = run_all(in, {1, 1}, {{"ipfrag_clock", "polls"}, {"ipfrag_time", "2"}});
	REQUIRE(ok.out.size() == 1);
	CHECK(verdict(ok.out[0].first) == "DELIVER");
	CHECK(ok.counters[1]["IpReasmTimeout"] == 0);
	CHECK(ok.counters[1]["IpReasmOKs"] == 1);
}

TEST_CASE("reassembly: the time exceeded of an expiry is rate limited as "
	  "every ICMP error", "[l3_demux][reasm]")
{
	// no global credit (icmp_msgs_per_sec, icmp_msgs_burst 0): not sent,
	// the first fragment dropped with the queue (icmp_global_allow)
	const Frame first = frag4(whole4(), 0, 80, true);
	Run r = run_all({first}, {}, {{"icmp_msgs_per_sec", "0"}, {"icmp_msgs_burst", "0"},
				      {"icmp_clock", "polls"}});
	CHECK(verdicts(r) == Fates{drop(LRX_DROP_FRAG_REASM_TIMEOUT)});
	check_snmp(r, {{"IpInReceives", 1}, {"IpReasmReqds", 1}, {"IpReasmFails", 1},
		       {"IpReasmTimeout", 1}, {"IcmpOutRateLimitGlobal", 1}});
	// seven first fragments of one peer: the peer's bucket
	// (XRLIM_BURST_FACTOR 6) lets six through (icmpv4_xrlim_allow); the
	// engine takes a stage's drops before its sends
	std::vector<Frame> seven;
	for (uint16_t id = 1; id <= 7; id++)
		seven.push_back(frag4(whole4(id), 0, 80, true));
	Run burst = run_all(seven, {}, {{"icmp_clock", "polls"}});
	CHECK(verdicts(burst) == Fates{drop(LRX_DROP_FRAG_REASM_TIMEOUT), "TX(0)",
				       "TX(0)", "TX(0)", "TX(0)", "TX(0)", "TX(0)"});
	CHECK(burst.counters[1]["IcmpOutTimeExcds"] == 6);
	CHECK(burst.counters[1]["IcmpOutRateLimitHost"] == 1);
}

TEST_CASE("reassembly: no time exceeded about a broadcast datagram",
	  "[l3_demux][reasm]")
{
	// a first fragment to 255.255.255.255 (unicast MAC: PACKET_HOST):
	// the route is broadcast, __icmp_send sends nothing
	Frame first = frag4(whole4(), 0, 80, true);
	for (size_t i = 0; i < 4; i++)
		first.set_u8(first.l2_len + 16 + i, 0xff);
	first.ip4_fix_csum();
	Run r = run_all({first});
	CHECK(verdicts(r) == Fates{drop(LRX_DROP_FRAG_REASM_TIMEOUT)});
	CHECK(r.counters[1]["IcmpOutMsgs"] == 0);
	CHECK(r.counters[1]["IpReasmTimeout"] == 1);
}

TEST_CASE("reassembly: above ipfrag_high_thresh new fragments fail",
	  "[l3_demux][reasm]")
{
	// one byte: the first fragment is taken (the kernel compares before
	// adding), every later one fails
	Run r = run_all({frag4(whole4(1), 0, 80, true), frag4(whole4(2), 0, 80, true),
			 frag4(whole4(1), 80, 128, false)},
			{}, {{"ipfrag_high_thresh", "1"}});
	// the held one is a first fragment: its expiry sends the time exceeded
	CHECK(verdicts(r) == Fates{drop(LRX_DROP_NOMEM), drop(LRX_DROP_NOMEM), "TX(0)"});
	check_snmp(r, with_time_exceeded({{"IpInReceives", 3}, {"IpReasmReqds", 3},
					  {"IpReasmFails", 3}, {"IpReasmTimeout", 1}},
					 "Ip"));
}

TEST_CASE("reassembly: IPv4 and IPv6 each have their own ipfrag_high_thresh, "
	  "so their order in a burst does not matter", "[l3_demux][reasm]")
{
	// one burst, the families interleaved: each family's first fragment
	// is taken and its second fails, whatever order an engine's
	// sublists visit them in (list_split=gather: IPv4 first)
	const Frame w6 = whole6();
	for (const char *split : {"gather", "runs", "none"}) {
		INFO("list_split=" << split);
		Run r = run_all({frag6(w6, 0, 80, true, 1), frag4(whole4(1), 0, 80, true),
				 frag6(w6, 0, 80, true, 2), frag4(whole4(2), 0, 80, true)},
				{}, {{"ipfrag_high_thresh", "1"}, {"list_split", split}});
		// the two held ones (first fragments) expire at the run's end
		// and become their time exceeded, IPv4's first
		REQUIRE(r.out.size() == 4);
		CHECK(verdict(r.out[0].first) == drop(LRX_DROP_NOMEM));
		CHECK(verdict(r.out[1].first) == drop(LRX_DROP_NOMEM));
		check_time_exceeded(r.out[2], frag4(whole4(1), 0, 80, true), false);
		check_time_exceeded(r.out[3], frag6(w6, 0, 80, true, 1), true);
		for (const char *fam : {"Ip", "Ip6"}) {
			INFO(fam);
			const std::string f = fam;
			CHECK(r.counters[1][f + "ReasmReqds"] == 2);
			CHECK(r.counters[1][f + "ReasmFails"] == 2);
			CHECK(r.counters[1][f + "ReasmTimeout"] == 1);
		}
	}
}

TEST_CASE("reassembly: ipfrag_max_dist restarts a queue that fell too far "
	  "behind (ip_frag_too_far)", "[l3_demux][reasm]")
{
	// 63 fragments of other datagrams between: 64 apart, still in
	Run near = run_all(far_stream(300, 400, 63), {8, 8, 8, 8, 8, 8, 8, 8, 1});
	CHECK(near.counters[1]["IpReasmOKs"] == 1);
	CHECK(near.counters[1]["IpReasmFails"] == 63);
	// 65 between: 66 apart; the queue restarts (IpReasmFails, its first
	// fragment freed) and the last fragment waits in it until the end
	Run far = run_all(far_stream(301, 500, 65), {8, 8, 8, 8, 8, 8, 8, 8, 3});
	CHECK(far.out.size() == 67);
	CHECK(far.stats[1].drops[LRX_DROP_FRAG_TOO_FAR] == 1);
	CHECK(far.stats[1].drops[LRX_DROP_FRAG_REASM_TIMEOUT] == 66);
	check_snmp(far, {{"IpInReceives", 67}, {"IpReasmReqds", 67},
			 {"IpReasmFails", 67}, {"IpReasmTimeout", 66}});
	CHECK(far.counters[1]["reasm_frags_dropped"] == 67);
	// ipfrag_max_dist=0: off, the datagram completes
	Run off = run_all(far_stream(302, 600, 65), {8, 8, 8, 8, 8, 8, 8, 8, 3},
			  {{"ipfrag_max_dist", "0"}});
	CHECK(off.counters[1]["IpReasmOKs"] == 1);
	CHECK(off.counters[1]["IpReasmFails"] == 65);
}

TEST_CASE("reassembly: IPv6 in and out of order, the fragment header removed",
	  "[l3_demux][reasm]")
{
	const Frame w = whole6();
	const std::vector<Frame> f = {frag6(w, 0, 96, true), frag6(w, 96, 96, true),
				      frag6(w, 192, 16, false)};
	for (auto in : {f, std::vector<Frame>{f[2], f[1], f[0]}}) {
		Run r = run_all(in, {2, 1});
		REQUIRE(r.out.size() == 1);
		CHECK(verdict(r.out[0].first) == "DELIVER");
		CHECK(r.out[0].second == w.data);
		check_snmp(r, {{"Ip6InReceives", 3}, {"Ip6ReasmReqds", 3},
			       {"Ip6ReasmOKs", 1}, {"Ip6InDelivers", 1},
			       {"Udp6InDatagrams", 1}});
	}
}

TEST_CASE("reassembly: IPv6 overlap, timeout, atomic and truncated fragments",
	  "[l3_demux][reasm]")
{
	const Frame w = whole6();
	SECTION("overlap")
	{
		Run r = run_all({frag6(w, 0, 96, true), frag6(w, 88, 96, true)});
		CHECK(verdicts(r) == Fates{drop(LRX_DROP_FRAG_OVERLAP), drop(LRX_DROP_FRAG_OVERLAP)});
		check_snmp(r, {{"Ip6InReceives", 2}, {"Ip6ReasmReqds", 2},
			       {"Ip6ReasmOverlaps", 1}, {"Ip6ReasmFails", 1}});
	}
	SECTION("timeout at the run's end")
	{
		Run r = run_all({frag6(w, 96, 112, false)});
		CHECK(verdicts(r) == Fates{drop(LRX_DROP_FRAG_REASM_TIMEOUT)});
		check_snmp(r, {{"Ip6InReceives", 1}, {"Ip6ReasmReqds", 1},
			       {"Ip6ReasmFails", 1}, {"Ip6ReasmTimeout", 1}});
	}
	SECTION("atomic fragment (RFC 6946): processed, not queued")
	{
		const Frame atomic = frag6(w, 0, 208, false);
		Run r = run_all({atomic});
		REQUIRE(r.out.size() == 1);
		CHECK(verdict(r.out[0].first) == "DELIVER");
		CHECK(r.out[0].second == atomic.data);
		check_snmp(r, {{"Ip6InReceives", 1}, {"Ip6ReasmReqds", 1},
			       {"Ip6ReasmOKs", 1}, {"Ip6InDelivers", 1},
			       {"Udp6InDatagrams", 1}});
	}
	SECTION("first fragment without the whole UDP header (RFC 8200 4.5)")
	{
		// parameter problem code 3 (ICMPV6_HDR_INCOMP), pointer 0
		const Frame f = frag6(w, 0, 4, true);
		Run r = run_all({f});
		check_paramprob6(r, f, 3, 0);
		// Ip6InHdrErrors, as Linux 6.18 counts it (oracle test)
		check_snmp(r, with_paramprob6({{"Ip6InReceives", 1},
					       {"Ip6ReasmReqds", 1},
					       {"Ip6InHdrErrors", 1}}));
	}
	SECTION("a non-last fragment not a multiple of 8: parameter problem")
	{
		// pointer 4: the payload length (RFC 8200 4.5)
		const Frame f = frag6(w, 0, 20, true);
		Run r = run_all({f});
		check_paramprob6(r, f, 0, 4);
		// the queue fq_find created stays until its timer
		check_snmp(r, with_paramprob6({{"Ip6InReceives", 1},
					       {"Ip6ReasmReqds", 1},
					       {"Ip6InHdrErrors", 1},
					       {"Ip6ReasmFails", 1},
					       {"Ip6ReasmTimeout", 1}}));
	}
	SECTION("a fragment that ends past 65535: parameter problem at frag_off")
	{
		// offset 65528 + 16 bytes: pointer 42, the fragment header's
		// offset field
		Frame f = frag6(w, 0, 16, true);
		f.set_be16(f.l2_len + 42, (uint16_t)(65528 | 1));
		Run r = run_all({f});
		check_paramprob6(r, f, 0, 42);
		check_snmp(r, with_paramprob6({{"Ip6InReceives", 1},
					       {"Ip6ReasmReqds", 1},
					       {"Ip6InHdrErrors", 1},
					       {"Ip6ReasmFails", 1},
					       {"Ip6ReasmTimeout", 1}}));
	}
}

TEST_CASE("reassembly: bad ipfrag keys are rejected with the key named",
	  "[l3_demux][reasm]")
{
	pool();
	for (auto kv : std::vector<std::pair<std::string, std::string>>{
		     {"ipfrag_time", "-1"}, {"ipfrag_clock", "jiffies"},
		     {"ipfrag_high_thresh", "lots"}}) {
		lrx_test::StageConf c(lrx_stage_find("l3-demux"), {kv});
		INFO(kv.first << "=" << kv.second << ": " << c.error);
		CHECK(c.rc == -EINVAL);
		CHECK(c.error.find(kv.first) != std::string::npos);
	}
}
