// SPDX-License-Identifier: BSD-3-Clause
// build-meta: L2 parse, offsets, packet type, each NIC hint on/off,
// placement (priv/pool), clearing, per-packet vs burst equivalence and
// configuration errors.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include <rte_mbuf_dyn.h>

#include "frames.h"
#include "stage_harness.h"
#include "test_eal.h"

extern "C" {
#include "build_meta/build_meta.h"
#include "meta.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;

namespace {

rte_mempool *pool()
{
	// priv area large enough for the kernel-sized metadata
	return mbuf_pool("bm_pool", 4095, RTE_MBUF_DEFAULT_BUF_SIZE, 576);
}

rte_mempool *small_priv_pool()
{
	return mbuf_pool("bm_pool_small", 511, RTE_MBUF_DEFAULT_BUF_SIZE, 0);
}

struct Built {
	lrx_next_t next;
	struct lrx_meta meta;
};

// One frame through a fresh build-meta instance (per-packet entry).
Built build_one(const Frame &f, const StageInstance::Keys &keys = {},
		uint64_t ol_flags = 0, void (*tweak)(rte_mbuf *) = nullptr)
{
	StageInstance bm(BUILD_META_STAGE_NAME, keys);
	REQUIRE(bm.ok());
	rte_mbuf *m = f.to_mbuf(pool());
	REQUIRE(m);
	m->ol_flags = ol_flags;
	if (tweak)
		tweak(m);
	Built b{bm.one(m), {}};
	if (b.next == LRX_NEXT_CONTINUE_V)
		b.meta = *lrx_meta(m);
	rte_pktmbuf_free(m);
	return b;
}

} // namespace

TEST_CASE("build-meta parses Ethernet and VLAN tags", "[build_meta]")
{
	eal_init();
	SECTION("untagged IPv4")
	{
		Built b = build_one(udp4());
		REQUIRE(b.next == LRX_NEXT_CONTINUE_V);
		CHECK(b.meta.protocol == 0x0800);
		CHECK(b.meta.mac_len == 14);
		CHECK(b.meta.network_offset == 14);
		CHECK(b.meta.transport_offset == 0);
		CHECK(b.meta.vlan_count == 0);
		CHECK(b.meta.pkt_type == LRX_PACKET_HOST);
		CHECK(b.meta.len == 60 - 14);
	}
	SECTION("one 802.1Q tag")
	{
		Spec s;
		s.vlans = {0x2064};
		s.l3 = L3::ipv6;
		Built b = build_one(build(s));
		REQUIRE(b.next == LRX_NEXT_CONTINUE_V);
		CHECK(b.meta.protocol == 0x86dd);
		CHECK(b.meta.mac_len == 18);
		CHECK(b.meta.network_offset == 18);
		CHECK(b.meta.vlan_count == 1);
		CHECK(b.meta.vlan_tci[0] == 0x2064);
	}
	SECTION("802.1ad outer + 802.1Q inner, VLAN device for neither")
	{
		// the outer tag is taken, no device: PACKET_OTHERHOST, and
		// the inner tag is the protocol (l3-demux: rx_dropped)
		Spec s;
		s.vlans = {100, 200};
		Built b = build_one(build(s));
		REQUIRE(b.next == LRX_NEXT_CONTINUE_V);
		CHECK(b.meta.protocol == 0x8100);
		CHECK(b.meta.network_offset == 18);
		CHECK(b.meta.pkt_type == LRX_PACKET_OTHERHOST);
		CHECK(b.meta.vlan_count == 1);
		CHECK(b.meta.vlan_tci[0] == 100);
		CHECK(b.meta.vlan_vid == 0);
	}
	SECTION("802.1ad priority tag + 802.1Q inner on a VLAN device")
	{
		Spec s;
		s.vlans = {0, 200};
		Built b = build_one(build(s), {{"vlans", "200"}});
		REQUIRE(b.next == LRX_NEXT_CONTINUE_V);
		CHECK(b.meta.protocol == 0x0800);
		CHECK(b.meta.network_offset == 22);
		CHECK(b.meta.pkt_type == LRX_PACKET_HOST);
		CHECK(b.meta.vlan_count == 2);
		CHECK(b.meta.vlan_tci[1] == 200);
		CHECK(b.meta.vlan_vid == 200);
	}
	SECTION("ARP")
	{
		Built b = build_one(arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)));
		REQUIRE(b.next == LRX_NEXT_CONTINUE_V);
		CHECK(b.meta.protocol == 0x0806);
		CHECK(b.meta.pkt_type == LRX_PACKET_BROADCAST);
	}
}

TEST_CASE("build-meta drops frames too short for their L2 header",
	  "[build_meta]")
{
	eal_init();
	StageInstance bm(BUILD_META_STAGE_NAME);
	REQUIRE(bm.ok());
	Frame tiny = udp4();
	tiny.truncate(13);
	Spec s;
	s.vlans = {1, 2};
	Frame cut_tag = build(s);
	cut_tag.truncate(14 + 2); // inside the first tag
	for (Frame *f : {&tiny, &cut_tag}) {
		rte_mbuf *m = f->to_mbuf(pool());
		REQUIRE(bm.one(m) == lrx_next_drop(LRX_DROP_PKT_TOO_SMALL));
		rte_pktmbuf_free(m);
	}
	CHECK(bm.counter("too_short") == 2);
	CHECK(bm.counter("built") == 0);
	LRX_REQUIRE_POOL_FULL(pool());
}

// A tag in the frame or stripped by the NIC (the vlan hint): one result.
struct VlanCase {
	const char *name;
	std::vector<uint16_t> tags; // outer first; two: 802.1ad outer
	const char *vlans;          // the key
	uint16_t protocol;
	uint8_t pkt_type;
	uint16_t vlan_vid;
	std::map<std::string, uint64_t> counters; // vlan_* of build-meta
};

TEST_CASE("build-meta takes VLAN tags as __netif_receive_skb_core, in-band "
	  "or stripped by the NIC", "[build_meta]")
{
	eal_init();
	const VlanCase cases[] = {
		{"priority tag", {0x2000}, "none", 0x0800, LRX_PACKET_HOST, 0,
		 {{"vlan_priority", 1}}},
		{"tag of no device", {7}, "none", 0x0800, LRX_PACKET_OTHERHOST, 0,
		 {{"vlan_unknown", 1}}},
		{"tag of a device", {7}, "5,7", 0x0800, LRX_PACKET_HOST, 7,
		 {{"vlan_dev_rx", 1}}},
		{"tag of a device on another port", {7}, "7%1", 0x0800,
		 LRX_PACKET_OTHERHOST, 0, {{"vlan_unknown", 1}}},
		{"tag of a device on this port", {7}, "7%0", 0x0800, LRX_PACKET_HOST,
		 7, {{"vlan_dev_rx", 1}}},
		{"VID 4095 of no device", {0xfff}, "none", 0x0800,
		 LRX_PACKET_OTHERHOST, 0, {{"vlan_unknown", 1}}},
		{"802.1ad outer of no device", {9, 7}, "7", 0x8100,
		 LRX_PACKET_OTHERHOST, 0, {{"vlan_unknown", 1}}},
		{"802.1ad priority, inner of a device", {0, 7}, "7", 0x0800,
		 LRX_PACKET_HOST, 7, {{"vlan_priority", 1}, {"vlan_dev_rx", 1}}},
		{"802.1ad priority, inner of no device", {0, 7}, "none", 0x0800,
		 LRX_PACKET_OTHERHOST, 0, {{"vlan_priority", 1}, {"vlan_unknown", 1}}},
		{"two priority tags", {0, 0}, "none", 0x0800, LRX_PACKET_HOST, 0,
		 {{"vlan_priority", 2}}},
	};
	for (const VlanCase &c : cases) {
		for (bool stripped : {false, true}) {
			INFO(c.name << (stripped ? " (stripped by the NIC)" : " (in the frame)"));
			Spec s;
			s.l4 = L4::udp;
			if (!stripped)
				s.vlans = c.tags;
			Frame f = build(s);
			StageInstance bm(BUILD_META_STAGE_NAME, {{"vlans", c.vlans}});
			REQUIRE(bm.ok());
			rte_mbuf *m = f.to_mbuf(pool());
			REQUIRE(m);
			if (stripped) {
				m->ol_flags = RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
				if (c.tags.size() == 2) {
					m->ol_flags |= RTE_MBUF_F_RX_QINQ |
						       RTE_MBUF_F_RX_QINQ_STRIPPED;
					m->vlan_tci_outer = c.tags[0];
					m->vlan_tci = c.tags[1];
				} else {
					m->vlan_tci = c.tags[0];
				}
			}
			REQUIRE(bm.one(m) == LRX_NEXT_CONTINUE_V);
			const struct lrx_meta &meta = *lrx_meta(m);
			// a tag left in the frame (the inner one after a tag of
			// no device) is the protocol; one the NIC stripped is
			// gone
			const uint16_t protocol = stripped && c.protocol == 0x8100
							  ? 0x0800 : c.protocol;
			CHECK(meta.protocol == protocol);
			CHECK(meta.pkt_type == c.pkt_type);
			CHECK(meta.vlan_vid == c.vlan_vid);
			for (const char *k : {"vlan_priority", "vlan_unknown", "vlan_dev_rx"}) {
				INFO("counter " << k);
				auto it = c.counters.find(k);
				CHECK(bm.counter(k) == (it == c.counters.end() ? 0 : it->second));
			}
			rte_pktmbuf_free(m);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("build-meta refuses bad VLAN devices", "[build_meta]")
{
	eal_init();
	for (const char *bad : {"0", "4095", "7%99", "7%", "x", "1,,2", ""}) {
		INFO("vlans=" << bad);
		StageInstance bm(BUILD_META_STAGE_NAME, {{"vlans", bad}});
		CHECK(bm.rc() == -EINVAL);
		CHECK(std::string(bm.error()).find("VLAN IDs 1..4094") != std::string::npos);
	}
}

TEST_CASE("build-meta sets the packet type as eth_type_trans", "[build_meta]")
{
	eal_init();
	Spec s;
	s.dst = mac_broadcast;
	CHECK(build_one(build(s)).meta.pkt_type == LRX_PACKET_BROADCAST);
	s.dst = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
	CHECK(build_one(build(s)).meta.pkt_type == LRX_PACKET_MULTICAST);
	s.dst = {0x02, 0x00, 0x00, 0x00, 0x00, 0x77};
	CHECK(build_one(build(s)).meta.pkt_type == LRX_PACKET_HOST); // any
	CHECK(build_one(build(s), {{"host_mac", "02:00:00:00:00:02"}})
		      .meta.pkt_type == LRX_PACKET_OTHERHOST);
	s.dst = mac_host;
	CHECK(build_one(build(s), {{"host_mac", "02:00:00:00:00:02"}})
		      .meta.pkt_type == LRX_PACKET_HOST);
}

TEST_CASE("build-meta takes each NIC hint only when enabled", "[build_meta]")
{
	eal_init();
	int ts_off = -1;
	uint64_t ts_flag = 0;
	REQUIRE(rte_mbuf_dyn_rx_timestamp_register(&ts_off, &ts_flag) == 0);
	static int s_ts_off;
	s_ts_off = ts_off;
	const uint64_t all_flags = RTE_MBUF_F_RX_RSS_HASH |
				   RTE_MBUF_F_RX_L4_CKSUM_GOOD |
				   RTE_MBUF_F_RX_IP_CKSUM_GOOD |
				   RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED |
				   ts_flag;
	auto tweak = [](rte_mbuf *m) {
		m->hash.rss = 0xabcdef01;
		m->vlan_tci = 42;
		m->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 |
				 RTE_PTYPE_L4_UDP;
		*RTE_MBUF_DYNFIELD(m, s_ts_off, rte_mbuf_timestamp_t *) =
			123456789;
	};

	const char *hints = GENERATE("all", "none", "hash", "csum", "vlan",
				     "timestamp", "ptype");
	INFO("hints=" << hints);
	std::string h = hints;
	auto on = [&](const char *name) { return h == "all" || h == name; };

	StageInstance bm(BUILD_META_STAGE_NAME, {{"hints", hints}});
	REQUIRE(bm.ok());
	rte_mbuf *m = udp4().to_mbuf(pool());
	m->ol_flags = all_flags;
	tweak(m);
	REQUIRE(bm.one(m) == LRX_NEXT_CONTINUE_V);
	const struct lrx_meta &meta = *lrx_meta(m);

	CHECK(meta.hash == (on("hash") ? 0xabcdef01u : 0u));
	CHECK(meta.ip_summed == (on("csum") ? LRX_CHECKSUM_UNNECESSARY
					    : LRX_CHECKSUM_NONE));
	CHECK(meta.l3_csum_state == (on("csum") ? LRX_CHECKSUM_UNNECESSARY
						: LRX_CHECKSUM_NONE));
	CHECK(meta.vlan_count == (on("vlan") ? 1 : 0));
	CHECK(meta.vlan_tci[0] == (on("vlan") ? 42 : 0));
	CHECK(meta.rx_timestamp == (on("timestamp") ? 123456789u : 0u));
	CHECK(meta.ptype == (on("ptype") ? m->packet_type : 0u));
	CHECK(bm.counter("hint_hash") == on("hash"));
	CHECK(bm.counter("hint_csum") == on("csum"));
	CHECK(bm.counter("hint_vlan") == on("vlan"));
	CHECK(bm.counter("hint_timestamp") == on("timestamp"));
	CHECK(bm.counter("hint_ptype") == on("ptype"));
	CHECK(((meta.hints & LRX_HINT_HASH) != 0) == on("hash"));
	rte_pktmbuf_free(m);

	// an absent hint is not taken even when enabled
	StageInstance all(BUILD_META_STAGE_NAME, {{"hints", "all"}});
	rte_mbuf *bare = udp4().to_mbuf(pool());
	REQUIRE(all.one(bare) == LRX_NEXT_CONTINUE_V);
	CHECK(lrx_meta(bare)->hints == 0);
	CHECK(lrx_meta(bare)->ip_summed == LRX_CHECKSUM_NONE);
	rte_pktmbuf_free(bare);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("build-meta NIC checksum-bad flags give CHECKSUM_BAD",
	  "[build_meta]")
{
	eal_init();
	Built b = build_one(udp4(), {},
			    RTE_MBUF_F_RX_L4_CKSUM_BAD | RTE_MBUF_F_RX_IP_CKSUM_BAD);
	CHECK(b.meta.ip_summed == LRX_CHECKSUM_BAD);
	CHECK(b.meta.l3_csum_state == LRX_CHECKSUM_BAD);
}

TEST_CASE("build-meta maps every NIC checksum flag pair as "
	  "ip_summed and l3_csum_state", "[build_meta]")
{
	eal_init();
	// the four states of each ol_flags field (rte_mbuf_core.h) and what
	// each becomes: GOOD = verified, BAD = the stack drops it, UNKNOWN and
	// NONE (the NIC did not check) = the stack checks
	struct Flag { uint64_t l4, ip; uint8_t want; };
	const Flag flags[] = {
		{RTE_MBUF_F_RX_L4_CKSUM_UNKNOWN, RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN,
		 LRX_CHECKSUM_NONE},
		{RTE_MBUF_F_RX_L4_CKSUM_BAD, RTE_MBUF_F_RX_IP_CKSUM_BAD,
		 LRX_CHECKSUM_BAD},
		{RTE_MBUF_F_RX_L4_CKSUM_GOOD, RTE_MBUF_F_RX_IP_CKSUM_GOOD,
		 LRX_CHECKSUM_UNNECESSARY},
		{RTE_MBUF_F_RX_L4_CKSUM_NONE, RTE_MBUF_F_RX_IP_CKSUM_NONE,
		 LRX_CHECKSUM_NONE},
	};
	StageInstance bm(BUILD_META_STAGE_NAME, {{"hints", "csum"}});
	REQUIRE(bm.ok());
	uint64_t taken = 0;
	for (const Flag &l4 : flags) {
		for (const Flag &ip : flags) {
			INFO("l4 flag " << l4.l4 << " ip flag " << ip.ip);
			rte_mbuf *m = udp4().to_mbuf(pool());
			m->ol_flags = l4.l4 | ip.ip;
			REQUIRE(bm.one(m) == LRX_NEXT_CONTINUE_V);
			const struct lrx_meta &meta = *lrx_meta(m);
			CHECK(meta.ip_summed == l4.want);
			CHECK(meta.l3_csum_state == ip.want);
			// the hint is taken when the NIC said anything at all
			const bool known = (l4.l4 | ip.ip) != 0;
			CHECK(((meta.hints & LRX_HINT_CSUM) != 0) == known);
			taken += known;
			CHECK(bm.counter("hint_csum") == taken);
			rte_pktmbuf_free(m);
		}
	}
	CHECK(taken == 15);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("build-meta placement: priv area or separate pool", "[build_meta]")
{
	eal_init();
	SECTION("priv: the metadata is the mbuf private area")
	{
		StageInstance bm(BUILD_META_STAGE_NAME,
				 {{"placement", "priv"}, {"meta_size", "552"}});
		REQUIRE(bm.ok());
		rte_mbuf *m = udp4().to_mbuf(pool());
		REQUIRE(bm.one(m) == LRX_NEXT_CONTINUE_V);
		CHECK((void *)lrx_meta(m) == rte_mbuf_to_priv(m));
		rte_pktmbuf_free(m);
	}
	SECTION("priv area too small: NOMEM drop, counted")
	{
		StageInstance bm(BUILD_META_STAGE_NAME,
				 {{"placement", "priv"}, {"meta_size", "64"}});
		REQUIRE(bm.ok());
		rte_mbuf *m = udp4().to_mbuf(small_priv_pool());
		CHECK(bm.one(m) == lrx_next_drop(LRX_DROP_NOMEM));
		lrx_next_t nexts[1];
		bm.burst(&m, 1, nexts);
		CHECK(nexts[0] == lrx_next_drop(LRX_DROP_NOMEM));
		CHECK(bm.counter("no_priv_room") == 2);
		rte_pktmbuf_free(m);
		LRX_REQUIRE_POOL_FULL(small_priv_pool());
	}
	SECTION("pool, bulk: one contiguous run per burst, outside the mbufs")
	{
		StageInstance bm(BUILD_META_STAGE_NAME,
				 {{"placement", "pool"}, {"alloc", "bulk"},
				  {"meta_size", "256"}});
		REQUIRE(bm.ok());
		rte_mbuf *pkts[8];
		lrx_next_t nexts[8];
		for (auto &m : pkts)
			m = udp4().to_mbuf(pool());
		bm.burst(pkts, 8, nexts);
		for (int i = 0; i < 8; i++) {
			REQUIRE(nexts[i] == LRX_NEXT_CONTINUE_V);
			uintptr_t meta = (uintptr_t)lrx_meta(pkts[i]);
			uintptr_t mb = (uintptr_t)pkts[i];
			CHECK((meta < mb || meta >= mb + pkts[i]->buf_len +
						     sizeof(rte_mbuf) + 576));
			if (i)
				CHECK(meta - (uintptr_t)lrx_meta(pkts[i - 1]) == 256);
		}
		for (auto m : pkts)
			rte_pktmbuf_free(m);
	}
	SECTION("pool wraps after pool_slots packets")
	{
		StageInstance bm(BUILD_META_STAGE_NAME,
				 {{"placement", "pool"}, {"alloc", "packet"},
				  {"pool_slots", "2048"}});
		REQUIRE(bm.ok());
		rte_mbuf *m = udp4().to_mbuf(pool());
		REQUIRE(bm.one(m) == LRX_NEXT_CONTINUE_V);
		struct lrx_meta *first = lrx_meta(m);
		for (int i = 1; i < 2048; i++)
			REQUIRE(bm.one(m) == LRX_NEXT_CONTINUE_V);
		CHECK(bm.counter("pool_wraps") == 0);
		REQUIRE(bm.one(m) == LRX_NEXT_CONTINUE_V);
		CHECK(bm.counter("pool_wraps") == 1);
		CHECK(lrx_meta(m) == first);
		rte_pktmbuf_free(m);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("build-meta clear methods", "[build_meta]")
{
	eal_init();
	struct Case {
		const char *placement, *alloc, *clear;
		bool tail_zero;
	};
	const Case c = GENERATE(Case{"priv", "packet", "memset", true},
				Case{"priv", "packet", "none", false},
				Case{"pool", "bulk", "memset", true},
				Case{"pool", "bulk", "bulk", true},
				Case{"pool", "bulk", "none", false},
				Case{"pool", "packet", "memset", true});
	INFO("placement=" << c.placement << " alloc=" << c.alloc
			  << " clear=" << c.clear);
	StageInstance bm(BUILD_META_STAGE_NAME,
			 {{"placement", c.placement}, {"alloc", c.alloc},
			  {"clear", c.clear}, {"meta_size", "552"},
			  {"pool_slots", "2048"}});
	REQUIRE(bm.ok());
	// First pass dirties every byte of the metadata, second pass checks
	// what the clear method left: ring slots come round again after
	// pool_slots packets, the priv area is the same mbuf's.
	rte_mbuf *pkts[16];
	lrx_next_t nexts[16];
	for (auto &m : pkts)
		m = udp4().to_mbuf(pool());
	for (int round = 0; round < 2048 / 16; round++) {
		bm.burst(pkts, 16, nexts);
		for (auto m : pkts)
			std::memset(lrx_meta(m), 0xee, 552);
	}
	bm.burst(pkts, 16, nexts);
	for (auto m : pkts) {
		const uint8_t *tail = (const uint8_t *)lrx_meta(m) + sizeof(struct lrx_meta);
		bool zero = true;
		for (size_t i = 0; i < 552 - sizeof(struct lrx_meta); i++)
			zero = zero && tail[i] == 0;
		CHECK(zero == c.tail_zero);
		CHECK(lrx_meta(m)->protocol == 0x0800); // written fields are right
		CHECK(lrx_meta(m)->mark == 0);
		rte_pktmbuf_free(m);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("build-meta process_one and process_burst agree", "[build_meta]")
{
	eal_init();
	const char *placement = GENERATE("priv", "pool");
	std::mt19937 rng(7);
	std::vector<Frame> kinds;
	{
		Spec s;
		kinds.push_back(build(s));
		s.vlans = {5};
		kinds.push_back(build(s));
		s.vlans = {5, 6};
		s.l3 = L3::ipv6;
		kinds.push_back(build(s));
		kinds.push_back(arp_request(1, 2));
		Frame t = udp4();
		t.truncate(12);
		kinds.push_back(t);
		Spec o;
		o.dst = {0x02, 0, 0, 0, 0, 0x55};
		kinds.push_back(build(o));
	}
	StageInstance::Keys keys = {{"placement", placement},
				    {"host_mac", "02:00:00:00:00:02"}};
	StageInstance one(BUILD_META_STAGE_NAME, keys);
	StageInstance bur(BUILD_META_STAGE_NAME, keys);
	REQUIRE(one.ok());
	REQUIRE(bur.ok());
	for (int iter = 0; iter < 50; iter++) {
		uint16_t n = (uint16_t)(1 + rng() % 64);
		std::vector<rte_mbuf *> a(n), b(n);
		std::vector<lrx_next_t> na(n), nb(n);
		for (uint16_t i = 0; i < n; i++) {
			const Frame &f = kinds[rng() % kinds.size()];
			a[i] = f.to_mbuf(pool());
			b[i] = f.to_mbuf(pool());
			uint64_t flags = rng() & 1 ? RTE_MBUF_F_RX_RSS_HASH : 0;
			a[i]->ol_flags = b[i]->ol_flags = flags;
			a[i]->hash.rss = b[i]->hash.rss = (uint32_t)rng();
		}
		for (uint16_t i = 0; i < n; i++)
			na[i] = one.one(a[i]);
		bur.burst(b.data(), n, nb.data());
		for (uint16_t i = 0; i < n; i++) {
			REQUIRE(na[i] == nb[i]);
			if (na[i] == LRX_NEXT_CONTINUE_V)
				REQUIRE(std::memcmp(lrx_meta(a[i]), lrx_meta(b[i]),
						    sizeof(struct lrx_meta)) == 0);
			rte_pktmbuf_free(a[i]);
			rte_pktmbuf_free(b[i]);
		}
	}
	CHECK(one.counters() == bur.counters());
	CHECK(one.counter("built") > 0);
	CHECK(one.counter("too_short") > 0);
	CHECK(one.counter("otherhost") > 0);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("build-meta rejects bad keys with a message", "[build_meta]")
{
	eal_init();
	struct Bad {
		const char *key, *value, *expect;
	};
	const Bad bad = GENERATE(
		Bad{"placement", "heap", "one of priv, pool, auto"},
		Bad{"alloc", "lots", "one of packet, bulk"},
		Bad{"clear", "zero", "one of memset, bulk, none"},
		Bad{"meta_size", "8", "4096"},
		Bad{"meta_size", "abc", "an integer in 56..4096"},
		Bad{"hints", "hash,bogus", "a list of hash, csum, vlan, timestamp, ptype, all, none"},
		Bad{"host_mac", "02:00", "aa:bb:cc:dd:ee:ff"},
		Bad{"pool_slots", "10", "2048"});
	StageInstance bm(BUILD_META_STAGE_NAME, {{bad.key, bad.value}});
	CHECK(bm.rc() == -EINVAL);
	std::string msg = bm.error();
	INFO(msg);
	CHECK(msg.find(bad.key) != std::string::npos);
	CHECK(msg.find(bad.value) != std::string::npos);
	CHECK(msg.find(bad.expect) != std::string::npos);

	StageInstance combo(BUILD_META_STAGE_NAME,
			    {{"placement", "priv"}, {"clear", "bulk"}});
	CHECK(combo.rc() == -EINVAL);
	CHECK(std::string(combo.error()).find("placement=pool") !=
	      std::string::npos);
}
