// SPDX-License-Identifier: BSD-3-Clause
// The XDP metadata kfuncs in listrx's loader: bpf_xdp_metadata_rx_hash,
// _rx_timestamp and _rx_vlan_tag answer from the frame's descriptor hints
// (the mbuf's RSS hash, timestamp dynfield and stripped VLAN tag, as
// net_synth writes them), under the rte_bpf JIT and the interpreter, per
// packet and per burst; -ENODATA where the descriptor lacks a hint,
// -EOPNOTSUPP in generic mode (the kernel's answer for a program that is
// not device-bound); the load-time errors of a wrong call.
#include <catch2/catch.hpp>

#include <arpa/inet.h>

#include <cerrno>
#include <cmath>
#include <string>
#include <vector>

#include <rte_cycles.h>
#include <rte_mbuf_dyn.h>

#include "frames.h"
#include "test_eal.h"
#include "xdp_harness.h"

extern "C" {
#include "meta.h"
}

using namespace lrx_test::frames;
using lrx_xdp_test::Stage;
using lrx_xdp_test::prog_path;
using lrx_xdp_test::test_prog_path;
using Keys = std::map<std::string, std::string>;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("xdph_pool", 1023);
}

// hints_record.bpf.c's record, as the program writes it
struct Record {
	int64_t hash_rc;
	uint32_t hash, hash_type;
	int64_t timestamp_rc;
	uint64_t timestamp;
	int64_t vlan_rc;
	uint32_t vlan_proto, vlan_tci;
};
static_assert(sizeof(Record) == 48, "hints_record's value");

// What a frame's descriptor carries (what net_synth writes per hint).
struct Desc {
	bool hash = false;
	uint32_t rss = 0;
	uint32_t ptype = 0;
	bool ts = false;
	uint64_t tsc = 0;
	bool vlan = false, qinq = false;
	uint16_t tci = 0, outer = 0;
};

std::vector<Desc> descs()
{
	std::vector<Desc> d(8);
	d[0].hash = true; d[0].rss = 0x12345678;
	d[0].ptype = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP;
	d[1].ts = true; d[1].tsc = 123456789012345ull;
	d[2].vlan = true; d[2].tci = 0x2064; // PCP 1, VID 100
	d[3].hash = true; d[3].rss = 0xdeadbeef;
	d[3].ptype = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6_EXT | RTE_PTYPE_L4_TCP;
	d[3].ts = true; d[3].tsc = 1;
	d[3].vlan = true; d[3].tci = 7;
	// d[4]: no hint at all
	d[5].hash = true; d[5].rss = 1; // a hash without a packet type
	d[6].vlan = true; d[6].qinq = true; d[6].tci = 10; d[6].outer = 20;
	d[7].hash = true; d[7].rss = 0xffffffff;
	d[7].ptype = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4_EXT | RTE_PTYPE_L4_ICMP;
	return d;
}

rte_mbuf *frame_with(const Desc &d, int ts_off, uint64_t ts_flag)
{
	rte_mbuf *m = udp4().to_mbuf(pool());
	REQUIRE(m != nullptr);
	m->port = 0;
	if (d.hash) {
		m->ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
		m->hash.rss = d.rss;
	}
	m->packet_type = d.ptype;
	if (d.ts) {
		m->ol_flags |= ts_flag;
		*RTE_MBUF_DYNFIELD(m, ts_off, rte_mbuf_timestamp_t *) = d.tsc;
	}
	if (d.vlan) {
		m->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
		m->vlan_tci = d.tci;
		if (d.qinq) {
			m->ol_flags |= RTE_MBUF_F_RX_QINQ | RTE_MBUF_F_RX_QINQ_STRIPPED;
			m->vlan_tci_outer = d.outer;
		}
	}
	return m;
}

std::vector<Record> records(Stage &st, size_t n)
{
	lrx_xdp_map *map = st.map("hint_record");
	REQUIRE(map != nullptr);
	std::vector<Record> out;
	for (uint32_t k = 0; k < n; k++) {
		const void *v = lrx_xdp_map_lookup(map, &k);
		REQUIRE(v != nullptr);
		Record r;
		memcpy(&r, v, sizeof(r));
		out.push_back(r);
	}
	return out;
}

// The frames through the stage (per packet or as one burst); the records.
std::vector<Record> run(Stage &st, const std::vector<Desc> &ds, bool burst)
{
	int ts_off;
	uint64_t ts_flag;
	REQUIRE(rte_mbuf_dyn_rx_timestamp_register(&ts_off, &ts_flag) == 0);
	std::vector<rte_mbuf *> ms;
	for (const Desc &d : ds)
		ms.push_back(frame_with(d, ts_off, ts_flag));
	std::vector<lrx_next_t> nexts(ms.size());
	if (burst) {
		st.burst(ms.data(), (uint16_t)ms.size(), nexts.data());
	} else {
		for (size_t i = 0; i < ms.size(); i++)
			nexts[i] = st.one(ms[i]);
	}
	for (size_t i = 0; i < ms.size(); i++) {
		CHECK(nexts[i] == lrx_next_drop(LRX_DROP_XDP));
		rte_pktmbuf_free(ms[i]);
	}
	return records(st, ds.size());
}

uint64_t tsc_ns(uint64_t tsc)
{
	return (uint64_t)std::llround((long double)tsc * 1e9L /
				      (long double)rte_get_tsc_hz());
}

} // namespace

TEST_CASE("the XDP metadata kfuncs answer from the descriptor hints, JIT and "
	  "interpreter, per packet and per burst", "[xdp][hints]")
{
	rte_mempool *mp = pool();
	const auto ds = descs();
	for (const char *exec : {"jit", "interp"}) {
		for (bool burst : {false, true}) {
			INFO("exec=" << exec << " burst=" << burst);
			Stage st(Keys{{"prog", test_prog_path("hints_record")},
				      {"exec", exec}});
			INFO(st.err);
			REQUIRE(st.rc == 0);
			const auto rs = run(st, ds, burst);
			for (size_t i = 0; i < ds.size(); i++) {
				const Desc &d = ds[i];
				const Record &r = rs[i];
				INFO("frame " << i);
				CHECK(r.hash_rc == (d.hash ? 0 : -ENODATA));
				CHECK(r.hash == (d.hash ? d.rss : 0));
				CHECK(r.hash_type ==
				      (d.hash ? lrx_xdp_rss_type(d.ptype) : 0));
				CHECK(r.timestamp_rc == (d.ts ? 0 : -ENODATA));
				if (d.ts)
					CHECK(std::llabs((long long)(r.timestamp -
								     tsc_ns(d.tsc))) <= 1);
				else
					CHECK(r.timestamp == 0);
				CHECK(r.vlan_rc == (d.vlan ? 0 : -ENODATA));
				CHECK(r.vlan_tci ==
				      (!d.vlan ? 0 : d.qinq ? d.outer : d.tci));
				CHECK(r.vlan_proto ==
				      (!d.vlan ? 0u : d.qinq ? (uint32_t)htons(0x88a8)
							     : (uint32_t)htons(0x8100)));
			}
			CHECK(st.counter("drop") == ds.size());
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("the RSS hash type follows the packet type as ice maps its ptype",
	  "[xdp][hints]")
{
	CHECK(lrx_xdp_rss_type(RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 |
			       RTE_PTYPE_L4_UDP) == 41); // XDP_RSS_TYPE_L4_IPV4_UDP
	CHECK(lrx_xdp_rss_type(RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP) == 25);
	CHECK(lrx_xdp_rss_type(RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_UDP) == 42);
	CHECK(lrx_xdp_rss_type(RTE_PTYPE_L3_IPV6_EXT | RTE_PTYPE_L4_TCP) ==
	      30); // XDP_RSS_TYPE_L4_IPV6_TCP_EX
	CHECK(lrx_xdp_rss_type(RTE_PTYPE_L3_IPV4_EXT) == 5); // L3_IPV4_OPT
	CHECK(lrx_xdp_rss_type(RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_ICMP) == 265);
	CHECK(lrx_xdp_rss_type(RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_SCTP) == 74);
	CHECK(lrx_xdp_rss_type(RTE_PTYPE_L2_ETHER_ARP) == 0);
}

TEST_CASE("each kfunc alone: only its hint is written, every variant loads",
	  "[xdp][hints]")
{
	rte_mempool *mp = pool();
	int ts_off;
	uint64_t ts_flag;
	REQUIRE(rte_mbuf_dyn_rx_timestamp_register(&ts_off, &ts_flag) == 0);
	Desc all;
	all.hash = all.ts = all.vlan = true;
	all.rss = 77;
	all.tsc = 1000;
	all.tci = 5;
	struct Variant {
		const char *name;
		uint64_t hash, timestamp, vlan;
	} variants[] = {{"none", 0, 0, 0}, {"hash", 1, 0, 0},
			{"timestamp", 0, 1, 0}, {"vlan", 0, 0, 1},
			{"all", 1, 1, 1}};
	for (const auto &v : variants) {
		for (const char *exec : {"jit", "interp"}) {
			INFO("xdp_hints_" << v.name << " exec=" << exec);
			Stage st(Keys{{"prog", prog_path(std::string("xdp_hints_") + v.name)},
				      {"exec", exec}});
			INFO(st.err);
			REQUIRE(st.rc == 0);
			Desc none;
			for (const Desc *d : {&all, &none, &all}) {
				rte_mbuf *m = frame_with(*d, ts_off, ts_flag);
				CHECK(st.one(m) == lrx_next_drop(LRX_DROP_XDP));
				rte_pktmbuf_free(m);
			}
			lrx_xdp_map *map = st.map("hint_stats");
			REQUIRE(map != nullptr);
			uint32_t zero = 0;
			const uint64_t *s =
				(const uint64_t *)lrx_xdp_map_lookup(map, &zero);
			REQUIRE(s != nullptr);
			CHECK(s[0] == 3);
			CHECK(s[1] == 2 * v.hash);
			CHECK(s[2] == 2 * v.timestamp);
			CHECK(s[3] == 2 * v.vlan);
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("generic XDP: the kfuncs say -EOPNOTSUPP, as the kernel's for a "
	  "program not bound to a device", "[xdp][hints][generic]")
{
	rte_mempool *mp = pool();
	int ts_off;
	uint64_t ts_flag;
	REQUIRE(rte_mbuf_dyn_rx_timestamp_register(&ts_off, &ts_flag) == 0);
	for (const char *exec : {"jit", "interp"}) {
		INFO("exec=" << exec);
		Stage st(Keys{{"prog", test_prog_path("hints_record")},
			      {"exec", exec}, {"mode", "generic"}});
		INFO(st.err);
		REQUIRE(st.rc == 0);
		Desc d;
		d.hash = d.ts = d.vlan = true;
		rte_mbuf *m = frame_with(d, ts_off, ts_flag);
		struct lrx_meta meta{};
		lrx_meta_set(m, &meta);
		CHECK(st.one(m) == lrx_next_drop(LRX_DROP_XDP));
		rte_pktmbuf_free(m);
		const auto rs = records(st, 1);
		CHECK(rs[0].hash_rc == -EOPNOTSUPP);
		CHECK(rs[0].timestamp_rc == -EOPNOTSUPP);
		CHECK(rs[0].vlan_rc == -EOPNOTSUPP);
		CHECK(rs[0].hash == 0);
		CHECK(rs[0].vlan_tci == 0);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

TEST_CASE("a wrong kfunc call is refused at load, naming it", "[xdp][hints]")
{
	pool();
	struct Case {
		std::string path;
		const struct lrx_bpf_ctx_type *type;
		const char *want;
	} cases[] = {
		{test_prog_path("bad_kfunc_unknown"), &lrx_bpf_ctx_xdp,
		 "calls kfunc 'bpf_listrx_no_such_kfunc', which listrx does not provide"},
		{test_prog_path("bad_kfunc_ctx"), &lrx_bpf_ctx_xdp,
		 "bpf_xdp_metadata_rx_hash: argument 1 (r1) is not the xdp_md context"},
		{test_prog_path("hints_record"), &lrx_bpf_ctx_skb,
		 "calls kfunc bpf_xdp_metadata_rx_hash, which the kernel gives XDP "
		 "programs only"},
	};
	for (const Case &c : cases) {
		INFO(c.path);
		char err[512] = "";
		lrx_xdp_prog *p = nullptr;
		int rc = lrx_bpf_prog_load(c.path.c_str(), "xdp", c.type, 1600, 0,
					   nullptr, 0, &p, err, sizeof(err));
		INFO(err);
		CHECK(rc == -EINVAL);
		CHECK(p == nullptr);
		CHECK(std::string(err).find(c.want) != std::string::npos);
		CHECK(std::string(err).find("instruction") != std::string::npos);
	}
}
