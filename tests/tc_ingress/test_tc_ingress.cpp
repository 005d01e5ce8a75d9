// SPDX-License-Identifier: BSD-3-Clause
// The tc-ingress stage: the filter file's errors, each flower key, the
// chain's order (prefs, tcf_auto_prio, one pref's filters, protocols,
// continue), cls_bpf's __sk_buff fields and verdicts under the JIT and the
// interpreter, per-port chains, the per-filter counters, a frame without
// headroom for the context, and process_one == process_burst.
#include <catch2/catch.hpp>

#include <arpa/inet.h>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "frames.h"
#include "tc_harness.h"
#include "test_eal.h"

extern "C" {
#include "meta.h"
#include "tc_ingress/tc_ingress.h"
#include "ebpf/ebpf.h"
}

using namespace lrx_test::frames;
using lrx_tc_test::TempFile;
using lrx_tc_test::test_prog;
using lrx_test::StageInstance;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("tc_pool", 4095);
}

Frame udp_from(uint32_t src, uint16_t dport)
{
	Spec s;
	s.ip4_src = src;
	s.dport = dport;
	return build(s);
}

// build-meta (host MAC 02:00:00:00:00:02) and tc-ingress with a filter
// file; runs frames and returns their nexts (and frees the mbufs).
struct Tc {
	TempFile file;
	StageInstance bm{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}};
	StageInstance tc;
	explicit Tc(const std::string &filters,
		    const StageInstance::Keys &more = {})
		: file(filters), tc("tc-ingress", keys(more))
	{
	}
	StageInstance::Keys keys(const StageInstance::Keys &more) const
	{
		StageInstance::Keys k = more;
		k["filters"] = file.path;
		return k;
	}

	std::vector<lrx_next_t> run(const std::vector<Frame> &frames,
				    bool burst = false, uint16_t port = 0,
				    std::vector<uint32_t> *marks = nullptr)
	{
		std::vector<rte_mbuf *> m;
		for (auto &f : frames) {
			m.push_back(f.to_mbuf(pool()));
			REQUIRE(m.back());
			m.back()->port = port;
		}
		std::vector<lrx_next_t> nexts(m.size());
		if (burst)
			lrx_test::run_burst({&bm, &tc}, m.data(), (uint16_t)m.size(),
					    nexts.data());
		else
			lrx_test::run_packet({&bm, &tc}, m.data(), (uint16_t)m.size(),
					     nexts.data());
		for (auto *x : m) {
			if (marks)
				marks->push_back(lrx_meta(x)->mark);
			rte_pktmbuf_free(x);
		}
		return nexts;
	}
	lrx_next_t one(const Frame &f) { return run({f})[0]; }

	// the "filters" map: {runs, packets, bytes} of filter i (file order)
	std::vector<uint64_t> filter(unsigned i)
	{
		lrx_stage_map info;
		REQUIRE(tc.desc()->map_at(tc.ctx(), 0, &info));
		REQUIRE(std::string(info.name) == "filters");
		uint32_t cursor = i, key;
		uint64_t v[3];
		REQUIRE(tc.desc()->map_next(tc.ctx(), 0, &cursor, &key, v));
		REQUIRE(key == i);
		return {v[0], v[1], v[2]};
	}
	// the "actions" map: {pkts, bytes, dropped, overlimits} of filter
	// i's action `order` (1-based)
	std::vector<uint64_t> action(uint32_t i, uint32_t order)
	{
		lrx_stage_map info;
		REQUIRE(tc.desc()->map_at(tc.ctx(), 1, &info));
		REQUIRE(std::string(info.name) == "actions");
		uint32_t cursor = 0, key[2];
		uint64_t v[4];
		while (tc.desc()->map_next(tc.ctx(), 1, &cursor, key, v))
			if (key[0] == i && key[1] == order)
				return {v[0], v[1], v[2], v[3]};
		FAIL("no action " << i << "/" << order);
		return {};
	}
	// the mirrors' copies the stage emits (their bytes and nexts), freed
	std::vector<std::pair<std::vector<uint8_t>, lrx_next_t>> emitted()
	{
		std::vector<std::pair<std::vector<uint8_t>, lrx_next_t>> out;
		rte_mbuf *m[8];
		lrx_next_t nx[8];
		uint16_t n;
		while ((n = tc.desc()->emit(tc.ctx(), m, nx, 8)) != 0)
			for (uint16_t k = 0; k < n; k++) {
				const uint8_t *d = rte_pktmbuf_mtod(m[k], const uint8_t *);
				out.push_back({std::vector<uint8_t>(d, d + rte_pktmbuf_pkt_len(m[k])),
					       nx[k]});
				rte_pktmbuf_free(m[k]);
			}
		CHECK(tc.desc()->held(tc.ctx()) == 0);
		return out;
	}
	// slot k of a program's array map of u64 by name
	uint64_t prog_map(const char *name, uint32_t slot)
	{
		lrx_stage_map info;
		for (unsigned i = 1; tc.desc()->map_at(tc.ctx(), i, &info); i++) {
			if (std::string(info.name) != name)
				continue;
			uint32_t cursor = 0, key;
			uint64_t value;
			while (tc.desc()->map_next(tc.ctx(), i, &cursor, &key, &value))
				if (key == slot)
					return value;
		}
		FAIL("no map " << name);
		return 0;
	}
};

const lrx_next_t CONT = LRX_NEXT_CONTINUE_V;
const lrx_next_t SHOT = lrx_next_drop(LRX_DROP_TC_INGRESS);

} // namespace

TEST_CASE("tc-ingress: no filter file, or a port without filters: every "
	  "packet goes on, unclassified", "[tc_ingress]")
{
	pool();
	StageInstance bm("build-meta");
	StageInstance tc("tc-ingress");
	REQUIRE(tc.ok());
	rte_mbuf *m = udp4().to_mbuf(pool());
	lrx_next_t next;
	lrx_test::run_packet({&bm, &tc}, &m, 1, &next);
	rte_pktmbuf_free(m);
	CHECK(next == CONT);
	CHECK(tc.counter("classified") == 0);

	Tc t("filter add dev port1 ingress protocol ip flower action drop\n");
	REQUIRE(t.tc.ok());
	CHECK(t.one(udp4()) == CONT); // port 0
	CHECK(t.tc.counter("classified") == 0);
	CHECK(t.run({udp4()}, false, 1)[0] == SHOT);
	CHECK(t.tc.counter("classified") == 1);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: the filter file's errors name the line, the word and "
	  "what is valid", "[tc_ingress]")
{
	pool();
	const std::string bad = test_prog("bad_len_write");
	const std::vector<std::pair<std::string, std::string>> cases = {
		{"filter add dev eth0 ingress bpf da obj x.o",
		 ":1: 'eth0': a device is portN"},
		{"filter add dev port0 egress bpf obj x.o", "ingress hook only"},
		{"filter add dev port0 ingress flower ip_proto udp",
		 "'ip_proto': needs the ethertype ip or ipv6"},
		{"filter add dev port0 ingress protocol ip flower dst_port 5",
		 "'dst_port': needs ip_proto tcp, udp or sctp"},
		{"filter add dev port0 ingress protocol ip flower ip_proto udp "
		 "dst_port 9-5", "'9-5': a port 0..65535 or a range MIN-MAX"},
		{"filter add dev port0 ingress protocol ip flower vlan_id 5",
		 "'vlan_id': needs protocol 802.1q"},
		// fl_set_key_vlan: "Illegal vlan_prio" (a digit above the
		// maximum once wrapped and was taken)
		{"filter add dev port0 ingress protocol 802.1q flower vlan_prio 8",
		 "'8': vlan_prio is 0..7"},
		{"filter add dev port0 ingress protocol 802.1q flower vlan_prio 9",
		 "'9': vlan_prio is 0..7"},
		{"filter add dev port0 ingress protocol ip flower src_ip 10.0.0.300",
		 "'10.0.0.300': an IPv4 address"},
		{"filter add dev port0 ingress protocol ip flower action nat",
		 "'nat': valid actions"},
		{"filter add dev port0 ingress bpf da obj x.o action drop",
		 "a direct-action program returns its own verdict"},
		{"filter add dev port0 u32 match ip dport 9 0xffff",
		 "'u32': a filter needs dev DEV and ingress"},
		{"filter add dev port0 ingress protocol ip u32 match ip dport 9",
		 "'dport': needs VALUE MASK"},
		{"filter add dev port0 ingress protocol ip u32 match ip dport 70000 ffff",
		 "'70000': a value 0..0xffff"},
		{"filter add dev port0 ingress protocol ip u32 match ip dport 9 zz",
		 "'zz': a mask is hexadecimal"},
		{"filter add dev port0 ingress protocol ip u32 match u32 1 ffffffff at 2",
		 "a u32 match is at a multiple of 4"},
		{"filter add dev port0 ingress protocol ip u32 match ip protocol 6 ff "
		 "match ip protocol 17 ff", "'protocol': clashes with an earlier match"},
		{"filter add dev port0 ingress protocol ip u32 match tcp dst 80 ffff",
		 "'tcp': listrx models match u32, u16, u8, ip and ip6"},
		{"filter add dev port0 ingress protocol ip u32 match ip6 src 10.0.0.1",
		 "'10.0.0.1': an IPv6 address"},
		// parse_ip/parse_ip6: two words at least after the selector;
		// a flag last on the line is refused as tc refuses it
		{"filter add dev port0 ingress protocol ip u32 match ip nofrag",
		 "'nofrag': match ip needs a field and a word after it"},
		{"filter add dev port0 ingress protocol ip u32 match ip6 priority 0x100 0xff",
		 "'priority': priority is a traffic class VALUE 0..0xff"},
		{"filter add dev port0 ingress protocol ip u32 match ip6 prio 1 0xff",
		 "'prio': match ip6 takes src, dst, priority, protocol, flowlabel"},
		{"filter add dev port0 ingress protocol ip u32 match ip6 priority 1 0xff "
		 "at 4", "'at': u32 takes match"},
		{"filter add dev port0 ingress protocol ip u32 match ip dsfieldx 1 ff",
		 "'dsfieldx': match ip takes src, dst, tos, dsfield, precedence"},
		{"filter add dev port0 ingress protocol ip u32 match ip nofrag match ip mf",
		 ":1: 'mf': match ip needs a field and a word after it"},
		{"filter add dev port0 ingress protocol ip u32 match ip mf match ip nofrag "
		 "classid 1:1", "'nofrag': clashes with an earlier match"},
		{"filter add dev port0 ingress protocol ip u32 classid 1:1",
		 "'u32': needs a selector"},
		{"filter add dev port0 ingress handle 1: protocol ip u32 divisor 3",
		 "'divisor': a divisor is a power of 2, 1..256"},
		{"filter add dev port0 ingress protocol ip u32 divisor 4",
		 "'divisor': needs handle X:"},
		{"filter add dev port0 ingress protocol ip u32 ht 5: match u32 0 0",
		 ":1: ht: no such table on this device"},
		{"filter add dev port0 ingress handle 1: protocol ip u32 divisor 2\n"
		 "filter add dev port0 ingress protocol ip u32 ht 1:2: match u32 0 0",
		 ":2: ht X:Y:: the bucket is beyond the table's divisor"},
		{"filter add dev port0 ingress protocol ip u32 match u32 0 0 link 800:",
		 ":1: link: a root table"},
		{"filter add dev port0 ingress protocol ip u32 match u32 0 0 link 7:",
		 ":1: link: no such table"},
		{"filter add dev all ingress protocol ip u32 match u32 0 0",
		 ":1: 'all': u32 tables belong to one device"},
		{"filter add dev port0 ingress protocol ip u32 offset at 1 match u32 0 0",
		 "'1': offset at takes -32767..32767, even"},
		{"filter add dev port0 ingress protocol ip u32 match u32 0 0 sample ip "
		 "src 1.2.3.4", "'sample': u32 takes match"},
		{"filter add dev port0 ingress protocol ip u32 match u32 0 0 handle 1",
		 "'handle': u32 takes match"},
		{"filter add dev port0 ingress handle 800::1 protocol ip u32 match u32 0 0",
		 "'800::1': a u32 node's handle is not modelled"},
		{"filter add dev port0 ingress protocol ip u32 ht 1:2:3 match u32 0 0",
		 "'1:2:3': a u32 table is X: or X:Y:"},
		{"filter add dev port0 ingress pref 3 matchall action drop\n"
		 "filter add dev port0 ingress pref 3 matchall action pass",
		 ":2: pref 3 on port0 has a matchall filter already (line 1)"},
		{"filter add dev port0 ingress matchall skip_sw",
		 "'skip_sw': matchall takes"},
		{"filter add dev port0 ingress pref 4 protocol ip u32 match u32 0 0\n"
		 "filter add dev port0 ingress pref 4 protocol ip matchall",
		 ":2: pref 4 on port0 is already a u32 filter"},
		{"filter add dev port0 ingress protocol ip u32 match u32 0 0 action nat",
		 "'nat': valid actions: drop (shot), pass (ok), continue, pipe, reclassify"},
		{"filter add dev port0 ingress matchall action mirred ingress redirect "
		 "dev port1", "'ingress': mirred ingress (into a device's receive path) "
		 "is not modelled"},
		{"filter add dev port0 ingress matchall action mirred egress mirror dev all",
		 "'all': mirred sends to one port"},
		{"filter add dev port0 ingress protocol ip u32 match u32 0 0 action drop "
		 "classid 1:1", "'classid': after an action, only another 'action ...'"},
		{"filter add dev port0 ingress matchall action pipe action pipe action pipe "
		 "action pipe action pipe action pipe action pipe action pipe action drop",
		 "'action': more than 8 actions on one filter"},
		{"filter add dev port0 ingress matchall action pipe action",
		 "'action': needs a verdict"},
		{"filter del dev port0 ingress", "'del': only add"},
		{"filter add dev port0 ingress bpf da", "'bpf': needs obj FILE"},
		{"filter add dev port0 ingress prio 0 bpf da obj x.o",
		 "'0': a priority is 1..65535"},
		{"qdisc add dev port0 clsact\nfilter add dev port0 ingress flower "
		 "nonsense 1", ":2: 'nonsense': flower takes"},
		{"filter add dev port0 ingress \"protocol ip", "a quote is not closed"},
		{"filter add dev port0 ingress pref 5 protocol ip flower action drop\n"
		 "filter add dev port0 ingress pref 5 protocol ip bpf da obj " + bad,
		 ":2: pref 5 on port0 is already a flower filter of protocol 0x0800 "
		 "(line 1)"},
		{"filter add dev port0 ingress bpf da obj /nonexistent/x.o sec tc",
		 "line 1: /nonexistent/x.o: cannot open"},
		{"filter add dev port0 ingress bpf da obj " + bad + " sec tc",
		 "store to the __sk_buff context at offset 0, size 4: only whole "
		 "32-bit stores to mark@8"},
		// the __sk_buff header in front of the frame cannot be written
		// through a packet pointer, nor a field read at an odd offset
		{"filter add dev port0 ingress bpf da obj " + test_prog("bad_header_forge") +
		 " sec tc", "instruction 6: a packet access below data: the pointer may "
		 "be before ctx->data, in listrx's 112-byte __sk_buff header"},
		{"filter add dev port0 ingress bpf da obj " + test_prog("bad_ctx_misaligned") +
		 " sec tc", "instruction 0: context access at offset 1, size 2 is "
		 "misaligned"},
	};
	for (auto &c : cases) {
		INFO(c.first);
		TempFile f(c.first + "\n");
		StageInstance tc("tc-ingress", {{"filters", f.path}});
		CHECK_FALSE(tc.ok());
		INFO(tc.error());
		CHECK(std::string(tc.error()).find(c.second) != std::string::npos);
		CHECK(std::string(tc.error()).rfind("tc-ingress: ", 0) == 0);
	}
	StageInstance missing("tc-ingress", {{"filters", "/nonexistent/f"}});
	CHECK_FALSE(missing.ok());
	CHECK(std::string(missing.error()).find(
		      "key 'filters': /nonexistent/f: cannot open") != std::string::npos);
	StageInstance dir("tc-ingress", {{"filters", "/tmp"}});
	CHECK(std::string(dir.error()).find("is a directory") != std::string::npos);
}

TEST_CASE("tc-ingress: each flower key, the protocol of a pref, pass and drop",
	  "[tc_ingress]")
{
	pool();
	Tc t("# a comment, and a qdisc line as tc -batch has it\n"
	     "qdisc add dev port0 clsact\n"
	     "filter add dev port0 ingress protocol ip pref 1 flower ip_proto udp dst_port 53 action drop\n"
	     "filter add dev port0 ingress protocol ip pref 2 flower ip_proto udp dst_port 10000-10010 action drop\n"
	     "filter add dev port0 ingress protocol ip pref 3 flower src_ip 10.9.0.0/16 action drop\n"
	     "filter add dev port0 ingress protocol ipv6 pref 4 flower dst_ip 2001:db8::99 action drop\n"
	     "filter add dev port0 ingress protocol 802.1q pref 5 flower vlan_id 7 vlan_ethtype ip ip_proto tcp action drop\n"
	     "filter add dev port0 ingress protocol all pref 6 flower src_mac 02:00:00:00:00:09 action drop\n"
	     "tc filter add dev port0 ingress protocol ip pref 7 flower ip_proto tcp src_port 4444 action pass\n"
	     "filter add dev port0 ingress protocol ip pref 8 flower skip_hw ip_proto tcp action gact drop\n");
	REQUIRE(t.tc.ok());
	auto vlan = [](uint16_t vid, L4 l4, uint16_t dport) {
		Spec s;
		s.vlans = {vid};
		s.l4 = l4;
		s.dport = dport;
		return build(s);
	};
	Spec mac9;
	mac9.l3 = L3::arp;
	mac9.src = {2, 0, 0, 0, 0, 9};
	const std::vector<std::pair<Frame, lrx_next_t>> cases = {
		{udp4(1000, 53), SHOT},
		{udp4(1000, 54), CONT},
		{udp4(1000, 10005), SHOT},
		{udp4(1000, 10011), CONT},
		{udp_from(ip4(10, 9, 1, 1), 2000), SHOT},
		{udp_from(ip4(10, 8, 1, 1), 2000), CONT},
		// a fragment: the dissector takes no ports (pref 1 misses)
		{udp4(1000, 53).ip4_frag(0x2000), CONT},
		{udp6(1000, 2000).ip6_dst(ip6_doc(0x99)), SHOT},
		{udp6(1000, 2000), CONT},
		{vlan(7, L4::tcp, 80), SHOT},
		{vlan(7, L4::udp, 80), CONT},
		{vlan(8, L4::tcp, 80), CONT},
		// tagged: skb_protocol is 802.1Q, so no "protocol ip" pref runs
		{vlan(8, L4::udp, 53), CONT},
		{build(mac9), SHOT},
		{tcp4(TCP_ACK, 4444, 80), CONT},  // pref 7 passes: pref 8 not run
		{tcp4(TCP_ACK, 1000, 80), SHOT},
	};
	for (bool burst : {false, true}) {
		std::vector<Frame> frames;
		for (auto &c : cases)
			frames.push_back(c.first);
		auto nexts = t.run(frames, burst);
		for (size_t i = 0; i < cases.size(); i++) {
			INFO("burst " << burst << " case " << i);
			CHECK(lrx_test::next_name(nexts[i]) ==
			      lrx_test::next_name(cases[i].second));
		}
	}
	CHECK(t.tc.counter("classified") == 2 * cases.size());
	CHECK(t.tc.counter("act_shot") == 2 * 7);
	CHECK(t.tc.counter("act_ok") == 2 * 1);
	CHECK(t.tc.counter("act_unspec") == 2 * 8);
	CHECK(t.tc.counter("flower_calls") > 0);
	CHECK(t.tc.counter("bpf_runs") == 0);
	// pref 1 (file order 0): matched once per run, bytes = skb->len at
	// the hook (the frame less its MAC header)
	auto f0 = t.filter(0);
	CHECK(f0[1] == 2);
	CHECK(f0[2] == 2 * (udp4(1000, 53).size() - 14));
	// pref 8: ran for the IPv4 TCP frame past pref 7 and the UDP ones
	CHECK(t.filter(7)[1] == 2);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: the chain's order: tcf_auto_prio puts a new filter "
	  "first, a pref's flower filters by mask, its bpf programs newest "
	  "first, continue goes on", "[tc_ingress]")
{
	pool();
	SECTION("auto prefs: the second line runs first") {
		Tc t("filter add dev port0 ingress protocol ip flower ip_proto udp dst_port 53 action drop\n"
		     "filter add dev port0 ingress protocol ip flower ip_proto udp dst_port 53 action continue\n");
		REQUIRE(t.tc.ok());
		CHECK(t.one(udp4(1, 53)) == SHOT);
		CHECK(t.filter(1)[1] == 1); // continue: matched, went on
		CHECK(t.filter(0)[1] == 1);
		CHECK(t.one(udp4(1, 54)) == CONT);
		CHECK(t.filter(0)[0] == 2);
	}
	SECTION("one pref's flower filters: masks in the order they were first "
		"used, then the filters of each mask in order") {
		Tc t("filter add dev port0 ingress protocol ip pref 10 flower ip_proto udp dst_port 53 action pass\n"
		     "filter add dev port0 ingress protocol ip pref 10 flower ip_proto udp src_ip 10.0.0.1 action drop\n"
		     "filter add dev port0 ingress protocol ip pref 10 flower ip_proto udp dst_port 54 action drop\n"
		     "filter add dev port0 ingress protocol ip pref 20 flower action drop\n");
		REQUIRE(t.tc.ok());
		// from 10.0.0.1 (the default source) to 54: the port mask first
		CHECK(t.one(udp4(1, 54)) == SHOT);
		CHECK(t.filter(2)[1] == 1);
		CHECK(t.filter(1)[1] == 0);
		// to 53: passed by the first filter; pref 20 is not reached
		CHECK(t.one(udp4(1, 53)) == CONT);
		CHECK(t.filter(3)[0] == 0);
		CHECK(t.one(udp4(1, 55)) == SHOT);
		CHECK(t.filter(1)[1] == 1);
		CHECK(t.one(udp_from(ip4(10, 0, 0, 7), 55)) == SHOT);
		CHECK(t.filter(3)[1] == 1);
		CHECK(t.tc.counter("flower_calls") == 5);
	}
	SECTION("one pref's bpf programs: the newest first") {
		Tc t("filter add dev port0 ingress pref 3 bpf da obj " +
		     test_prog("tc_fields") + " sec tc\n"
		     "filter add dev port0 ingress pref 3 bpf da obj " +
		     test_prog("tc_count") + " sec tc\n");
		REQUIRE(t.tc.ok());
		// tc_count returns TC_ACT_OK for this frame: tc_fields never runs
		CHECK(t.one(udp4(1, 1000)) == CONT);
		CHECK(t.filter(1)[0] == 1);
		CHECK(t.filter(0)[0] == 0);
		CHECK(t.prog_map("tc_stats", 0) == 1);
		CHECK(t.tc.counter("act_ok") == 1);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: cls_bpf sees the __sk_buff fields and its verdicts "
	  "map as sch_handle_ingress does (JIT and interpreter)",
	  "[tc_ingress][ebpf]")
{
	pool();
	for (const char *exec : {"jit", "interp"}) {
		INFO("exec " << exec);
		Tc t("filter add dev all ingress bpf da obj " +
			     test_prog("tc_fields") + " sec tc\n",
		     {{"exec", exec}});
		REQUIRE(t.tc.ok());
		std::vector<uint32_t> marks;
		Frame plain = udp4(1, 2000);
		auto n = t.run({plain}, false, 0, &marks);
		CHECK(n[0] == CONT);
		CHECK(marks[0] == 0x77); // the program's skb->mark stays
		CHECK(t.prog_map("seen", 0) == plain.size());
		CHECK(t.prog_map("seen", 1) == LRX_PACKET_HOST);
		CHECK(t.prog_map("seen", 2) == htons(0x0800));
		CHECK(t.prog_map("seen", 3) == 0);
		CHECK(t.prog_map("seen", 6) == 0);
		CHECK(t.prog_map("seen", 7) == 0);
		CHECK(t.prog_map("seen", 9) == 1); // queue 0 + 1
		CHECK(t.prog_map("seen", 10) == 0);
		CHECK(t.prog_map("seen", 11) == 0x08); // narrow load
		CHECK(t.prog_map("seen", 12) == plain.size());
		CHECK(t.prog_map("seen", 13) == 5);

		Spec tagged;
		tagged.vlans = {0x2007};
		tagged.dst = mac_broadcast;
		t.run({build(tagged)}, false, 3);
		CHECK(t.prog_map("seen", 1) == LRX_PACKET_BROADCAST);
		CHECK(t.prog_map("seen", 3) == 1);
		CHECK(t.prog_map("seen", 4) == 0x2007);
		CHECK(t.prog_map("seen", 5) == htons(0x8100));
		CHECK(t.prog_map("seen", 6) == 3);
		CHECK(t.prog_map("seen", 7) == 3);

		const std::vector<std::pair<uint16_t, lrx_next_t>> verdicts = {
			{1000, SHOT},
			{1001, lrx_next_redirect(1)},
			{1002, LRX_NEXT_DELIVER_V},
			{1003, CONT},
			{1004, CONT},
			{1005, lrx_next_drop(LRX_DROP_TC_EGRESS)},
			{1006, LRX_NEXT_DELIVER_V},
			{2000, CONT},
		};
		std::vector<Frame> frames;
		for (auto &v : verdicts)
			frames.push_back(udp4(1, v.first));
		auto nexts = t.run(frames, true);
		for (size_t i = 0; i < verdicts.size(); i++) {
			INFO("port " << verdicts[i].first);
			CHECK(nexts[i] == verdicts[i].second);
		}
		CHECK(t.tc.counter("act_shot") == 1);
		CHECK(t.tc.counter("act_redirect") == 2);
		CHECK(t.tc.counter("act_stolen") == 2);
		CHECK(t.tc.counter("act_unspec") == 2);
		CHECK(t.tc.counter("act_ok") == 3);
		CHECK(t.tc.counter("bpf_runs") == 10);
		// runs 10; verdicts 8 (two returned TC_ACT_UNSPEC)
		CHECK(t.filter(0)[0] == 10);
		CHECK(t.filter(0)[1] == 8);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: without direct-action, 0 is no match and any other "
	  "value runs the filter's action", "[tc_ingress][ebpf]")
{
	pool();
	// tc_count returns TC_ACT_OK (0) or TC_ACT_SHOT (2): 2 is a classid,
	// the action runs; 0 is no match, the next pref runs
	Tc t("filter add dev port0 ingress pref 1 bpf obj " + test_prog("tc_count") +
	     " sec tc action pass\n"
	     "filter add dev port0 ingress pref 2 protocol ip flower action drop\n");
	REQUIRE(t.tc.ok());
	CHECK(t.one(udp4(1, 12000)) == CONT); // program 2 -> action pass
	CHECK(t.one(udp4(1, 2000)) == SHOT);  // program 0 -> pref 2 drops
	CHECK(t.filter(0)[1] == 1);
	CHECK(t.filter(1)[1] == 1);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: a frame without headroom for the __sk_buff is "
	  "dropped and counted, not run", "[tc_ingress][ebpf]")
{
	Tc t("filter add dev port0 ingress bpf da obj " + test_prog("tc_fields") +
	     " sec tc\n");
	REQUIRE(t.tc.ok());
	Frame f = udp4();
	rte_mbuf *m = rte_pktmbuf_alloc(pool());
	REQUIRE(m);
	m->data_off = 16; /* below the 112-byte __sk_buff header */
	m->port = 0;
	std::memcpy(rte_pktmbuf_append(m, (uint16_t)f.size()), f.data.data(),
		    f.size());
	lrx_next_t next;
	lrx_test::run_packet({&t.bm, &t.tc}, &m, 1, &next);
	rte_pktmbuf_free(m);
	CHECK(next == SHOT);
	CHECK(t.tc.counter("window_error") == 1);
	CHECK(t.tc.counter("bpf_runs") == 0);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: process_one and process_burst agree on random bursts",
	  "[tc_ingress][equivalence]")
{
	pool();
	const std::string filters =
		"filter add dev all ingress protocol ip pref 1 flower ip_proto udp dst_port 1000-1002 action continue\n"
		"filter add dev all ingress pref 2 bpf da obj " + test_prog("tc_fields") + " sec tc\n"
		"filter add dev port1 ingress protocol ip pref 3 flower ip_proto tcp action drop\n"
		"filter add dev all ingress protocol ipv6 pref 4 flower ip_proto udp action mirred egress redirect dev port2\n"
		"filter add dev all ingress protocol all pref 5 bpf da obj " + test_prog("tc_count") + " sec tc\n";
	Tc a(filters), b(filters);
	REQUIRE(a.tc.ok());
	REQUIRE(b.tc.ok());
	const std::vector<Frame> pick = {
		udp4(1, 1000), udp4(1, 1001), udp4(1, 1002), udp4(1, 1003),
		udp4(1, 1006), udp4(1, 12000), udp4(1, 2000), tcp4(), udp6(),
		udp4().truncate(20), udp4(1, 1000).ip4_frag(0x2001),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
		with([](Spec &s) { s.vlans = {5}; s.dport = 1000; }),
		with([](Spec &s) { s.l3 = L3::none; s.ethertype = 0x88cc; }),
	};
	std::mt19937 rng(36);
	for (int round = 0; round < 40; round++) {
		std::vector<Frame> frames;
		size_t n = 1 + rng() % 64;
		for (size_t i = 0; i < n; i++)
			frames.push_back(pick[rng() % pick.size()]);
		uint16_t port = (uint16_t)(rng() % 3);
		std::vector<uint32_t> ma, mb;
		auto na = a.run(frames, false, port, &ma);
		auto nb = b.run(frames, true, port, &mb);
		REQUIRE(na == nb);
		REQUIRE(ma == mb);
	}
	CHECK(a.tc.counters() == b.tc.counters());
	for (unsigned i = 0; i < 5; i++)
		CHECK(a.filter(i) == b.filter(i));
	CHECK(a.tc.counter("act_redirect") > 0);
	CHECK(a.tc.counter("act_shot") > 0);
	CHECK(a.tc.counter("act_stolen") > 0);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: u32 keys, a link into a hash table, terminal nodes, "
	  "matchall and gact reclassify", "[tc_ingress]")
{
	pool();
	Tc t("filter add dev port0 ingress protocol ip pref 1 u32 match ip dport 7 ffff "
	     "action continue\n"                                              // 0
	     "filter add dev port0 ingress protocol ip pref 1 u32 match ip dport 7 ffff "
	     "match ip src 10.0.0.0/24 action drop\n"                         // 1
	     "filter add dev port0 ingress pref 2 handle 1: protocol ip u32 divisor 2\n" // 2
	     "filter add dev port0 ingress protocol ip pref 2 u32 match ip protocol 17 ff "
	     "offset at 0 mask 0f00 shift 6 eat link 1: hashkey mask 1 at 20 "
	     "action drop\n"                                                  // 3
	     "filter add dev port0 ingress protocol ip pref 2 u32 ht 1:1: match u16 0x1 "
	     "0x1 at 2 classid 1:1\n"                                        // 4
	     "filter add dev port0 ingress protocol ip pref 3 u32 match ip tos 0x20 ff "
	     "action reclassify\n"                                            // 5
	     "filter add dev port0 ingress pref 4 matchall action drop\n");   // 6
	REQUIRE(t.tc.ok());
	Spec tos;
	tos.tos = 0x20;
	tos.dport = 2000;
	// dport 7: node 0 continues, node 1 drops
	CHECK(t.one(udp4(1, 7)) == SHOT);
	CHECK(t.filter(0) == std::vector<uint64_t>{1, 1, 46});
	CHECK(t.filter(1) == std::vector<uint64_t>{1, 1, 46});
	// odd dport: bucket 1 (dport & 1 after the hash key at 20), its
	// node matches and passes (TC_ACT_OK ends the walk)
	CHECK(t.one(udp4(1, 9)) == CONT);
	CHECK(t.filter(4) == std::vector<uint64_t>{1, 1, 46});
	CHECK(t.filter(3)[1] == 0);
	// even dport: bucket 0 is empty: POP to node 3, terminal: drop
	CHECK(t.one(udp4(1, 10)) == SHOT);
	CHECK(t.filter(3) == std::vector<uint64_t>{2, 1, 46});
	// TCP: nothing in prefs 1-3 matches, matchall drops
	CHECK(t.one(tcp4()) == SHOT);
	CHECK(t.filter(6)[1] == 1);
	CHECK(t.tc.counter("matchall_calls") == 1);
	// tos 0x20 reclassifies: 16 restarts, the 17th gives up and drops;
	// for UDP to an even port pref 2's drop comes first
	CHECK(t.one(build(tos)) == SHOT);
	CHECK(t.tc.counter("reclassify_loop") == 0);
	tos.l4 = L4::tcp; // pref 2 is UDP only: pref 3 reclassifies
	// __tcf_classify's reason: TC_RECLASSIFY_LOOP, not TC_INGRESS
	CHECK(t.one(build(tos)) ==
	      lrx_next_drop(LRX_DROP_TC_RECLASSIFY_LOOP));
	CHECK(t.filter(5)[1] == 17);
	CHECK(t.tc.counter("reclassify_loop") == 1);
	CHECK(t.tc.counter("u32_calls") > 0);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: map_init fills the bpf filters' maps, and names a "
	  "map no object has", "[tc_ingress]")
{
	pool();
	const std::string line = "filter add dev port0 ingress protocol ip bpf da obj " +
				 test_prog("tc_port_block") + " sec tc\n";
	Tc t(line, {{"map_init", "blocked:53=1,9=0"}});
	REQUIRE(t.tc.ok());
	CHECK(t.one(udp4(1, 53)) == SHOT);
	CHECK(t.one(udp4(1, 9)) == CONT);
	CHECK(t.one(udp4(1, 10)) == CONT);
	CHECK(t.prog_map("block_stats", 0) == 2);
	CHECK(t.prog_map("block_stats", 1) == 1);

	Tc none(line, {{"map_init", "nosuch:1=1"}});
	CHECK_FALSE(none.tc.ok());
	CHECK(std::string(none.tc.error()).find("'nosuch': no bpf filter's object "
						"has a map of that name") != std::string::npos);
	Tc big(line, {{"map_init", "blocked:70000=1"}});
	CHECK_FALSE(big.tc.ok());
	CHECK(std::string(big.tc.error()).find("key/value size") != std::string::npos);
	StageInstance bare("tc-ingress", {{"map_init", "blocked:1=1"}});
	CHECK_FALSE(bare.ok());
	CHECK(std::string(bare.error()).find("maps exist only for bpf filters") !=
	      std::string::npos);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: map_write (telemetry's map_update/map_delete) writes the map of that "
	  "name of every bpf filter's object", "[tc_ingress][map_write]")
{
	pool();
	const std::string obj = test_prog("tc_port_block");
	// two filters, two objects loaded apart: two maps named blocked
	Tc t("filter add dev port0 ingress protocol ip pref 1 bpf da obj " + obj + " sec tc\n"
	     "filter add dev port0 ingress protocol ip pref 2 bpf da obj " + obj + " sec tc\n");
	REQUIRE(t.tc.ok());
	REQUIRE(t.tc.desc()->map_write != nullptr);
	CHECK(t.one(udp4(1, 53)) == CONT);
	auto write = [&](const char *params, bool del) {
		lrx_stage_map_write w = {};
		w.params = params;
		w.del = del;
		t.tc.desc()->map_write(t.tc.ctx(), &w);
		return w;
	};
	lrx_stage_map_write w = write("blocked:53=1", false);
	CHECK(w.rc == 0);
	CHECK(w.found == 2);
	CHECK(w.written == 2);
	CHECK(t.one(udp4(1, 53)) == SHOT);
	w = write("blocked:53=1,noexist", false);
	CHECK(w.rc == -EEXIST);
	CHECK(w.written == 0);
	CHECK(std::string(w.err).find("'blocked': key 53 exists") != std::string::npos);
	w = write("filters:0=1", false); // the stage's own table: not an eBPF map
	CHECK(w.rc == 0);
	CHECK(w.found == 0);
	w = write("blocked:53", true);
	CHECK(w.rc == 0);
	CHECK(w.written == 2);
	CHECK(t.one(udp4(1, 53)) == CONT);
	w = write("blocked", true);
	CHECK(w.rc == -EINVAL);
	// without bpf filters the parameter is still checked
	Tc u32("filter add dev port0 ingress protocol ip pref 1 u32 match ip dport 53 0xffff "
	       "action drop\n");
	REQUIRE(u32.tc.ok());
	lrx_stage_map_write none = {};
	none.params = "blocked:53=1,sometimes";
	u32.tc.desc()->map_write(u32.tc.ctx(), &none);
	CHECK(none.rc == -EINVAL);
	CHECK(none.found == 0);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: u32's ip and ip6 fields as tc packs them: the fragment "
	  "flags, precedence, the traffic class and the flow label",
	  "[tc_ingress]")
{
	pool();
	Tc t("filter add dev port0 ingress protocol ip pref 1 u32 match ip firstfrag "
	     "match ip protocol 17 ff action drop\n"                           // 0
	     "filter add dev port0 ingress protocol ip pref 1 u32 match ip mf match "
	     "ip prec 0x20 0xe0 action drop\n"                                 // 1
	     "filter add dev port0 ingress protocol ip pref 1 u32 match ip nofrag "
	     "match ip icmp_code 3 ff action drop\n"                           // 2
	     "filter add dev port0 ingress protocol ip pref 1 u32 match ip df match "
	     "ip src 0.0.0.0/0 match ip dport 9 ffff action drop\n"            // 3
	     "filter add dev port0 ingress protocol ipv6 pref 2 u32 match ip6 priority "
	     "0xb8 0xfc action drop\n"                                         // 4
	     "filter add dev port0 ingress protocol ipv6 pref 2 u32 match ip6 flowlabel "
	     "0x12345 0xfffff match ip6 icmp_code 0 ff action drop\n");         // 5
	REQUIRE(t.tc.ok());
	// firstfrag: MF set, offset 0 (0x2000 under 0x3fff)
	CHECK(t.one(udp4(1, 5).ip4_frag(0x2000)) == SHOT);
	CHECK(t.filter(0)[1] == 1);
	CHECK(t.one(udp4(1, 5).ip4_frag(0x2001)) == CONT); // mf, not firstfrag
	Spec prec;
	prec.tos = 0x28;
	prec.frag = 0x2010;
	CHECK(t.one(build(prec)) == SHOT);
	CHECK(t.filter(1)[1] == 1);
	Spec unreach;
	unreach.l4 = L4::icmp;
	unreach.icmp_type = 3;
	unreach.icmp_code = 3;
	unreach.frag = 0;
	CHECK(t.one(build(unreach)) == SHOT); // nofrag (DF clear) and code 3
	CHECK(t.filter(2)[1] == 1);
	CHECK(t.one(udp4(1, 9)) == SHOT); // DF, any source (a zero-mask key)
	CHECK(t.filter(3)[1] == 1);
	CHECK(t.one(udp4(1, 10)) == CONT);
	// the traffic class is bits 20..27 of the first word: DSCP 46 (EF)
	Frame ef = udp6(1, 7);
	ef.set_be32(ef.l2_len, 0x6b800000u | 0x1);
	CHECK(t.one(ef) == SHOT);
	CHECK(t.filter(4)[1] == 1);
	ef.set_be32(ef.l2_len, 0x6b400000u);
	CHECK(t.one(ef) == CONT);
	Spec flow;
	flow.l3 = L3::ipv6;
	flow.l4 = L4::icmp;
	flow.flow_label = 0x12345;
	flow.icmp_type = 128;
	CHECK(t.one(build(flow)) == SHOT);
	CHECK(t.filter(5)[1] == 1);
	flow.flow_label = 0x12344;
	CHECK(t.one(build(flow)) == CONT);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("tc-ingress: action lists as tcf_action_exec runs them: pipe goes "
	  "on, any other verdict ends the list; mirred mirror's copy leaves by "
	  "its port at the poll's end, the original goes on", "[tc_ingress]")
{
	pool();
	Tc t("filter add dev port0 ingress protocol ip pref 1 u32 match ip dport 7 ffff "
	     "action mirred egress mirror dev port1 action drop\n"              // 0
	     "filter add dev port0 ingress protocol ip pref 1 u32 match ip dport 8 ffff "
	     "action gact pipe action pass action drop\n"                       // 1
	     "filter add dev port0 ingress protocol ip pref 1 u32 match ip dport 9 ffff "
	     "action mirred egress mirror dev port1 action mirred egress mirror dev "
	     "port2 action mirred egress redirect dev port3\n"                  // 2
	     "filter add dev port0 ingress protocol ip pref 2 flower ip_proto udp "
	     "dst_port 10 action pipe action continue action drop\n"            // 3
	     "filter add dev port0 ingress pref 3 matchall action mirred egress "
	     "mirror dev port2\n");                                             // 4
	REQUIRE(t.tc.ok());
	const Frame f7 = udp4(1, 7);
	const uint64_t len = f7.size() - 14; // skb->len at the hook
	// mirror then drop: the copy is the whole frame, the original drops
	CHECK(t.one(f7) == SHOT);
	auto out = t.emitted();
	REQUIRE(out.size() == 1);
	CHECK(out[0].first == f7.data);
	CHECK(out[0].second == lrx_next_redirect(1));
	CHECK(t.action(0, 1) == std::vector<uint64_t>{1, len, 0, 0});
	CHECK(t.action(0, 2) == std::vector<uint64_t>{1, len, 1, 0});
	// pipe, then pass ends the list: drop never runs
	CHECK(t.one(udp4(1, 8)) == CONT);
	CHECK(t.action(1, 1)[0] == 1);
	CHECK(t.action(1, 2)[0] == 1);
	CHECK(t.action(1, 3)[0] == 0);
	CHECK(t.emitted().empty());
	// two mirrors and a redirect: copies to 1 and 2 (in that order), the
	// packet itself to 3
	CHECK(t.one(udp4(1, 9)) == lrx_next_redirect(3));
	out = t.emitted();
	REQUIRE(out.size() == 2);
	CHECK(out[0].second == lrx_next_redirect(1));
	CHECK(out[1].second == lrx_next_redirect(2));
	// continue ends the list with TC_ACT_UNSPEC: the next tp runs (the
	// matchall mirrors, its list of one pipe ends: TC_ACT_PIPE, passed)
	CHECK(t.one(udp4(1, 10)) == CONT);
	CHECK(t.action(3, 2)[0] == 1);
	CHECK(t.action(3, 3)[0] == 0);
	CHECK(t.action(4, 1)[0] == 1);
	CHECK(t.tc.counter("mirrored") == 4);
	CHECK(t.emitted().size() == 1);
	// three polls' copies wait in order until taken
	std::vector<lrx_next_t> nexts = t.run({udp4(1, 7), udp4(1, 11), udp4(1, 7)}, true);
	CHECK(nexts == std::vector<lrx_next_t>{SHOT, CONT, SHOT});
	out = t.emitted();
	REQUIRE(out.size() == 3);
	CHECK(out[1].second == lrx_next_redirect(2));
	CHECK(t.tc.counter("mirror_failed") == 0);
	LRX_REQUIRE_POOL_FULL(pool());
}
