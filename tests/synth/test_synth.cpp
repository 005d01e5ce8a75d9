// SPDX-License-Identifier: BSD-3-Clause
// net_synth, the emulated NIC: every profile parsed back from the frames it
// generates, RSS against rte_softrss + RETA, determinism, stats/xstats,
// devarg errors, pcap replay and tx_pcap, the TX completion model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <rte_bus_vdev.h>
#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_tcp.h>
#include <rte_thash.h>
#include <rte_udp.h>

#include "rte_pmd_synth.h"
#include "test_eal.h"

namespace {

alignas(16) const uint8_t default_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

struct Rx {
	std::vector<uint8_t> bytes;
	uint64_t ol_flags;
	uint32_t packet_type;
	uint32_t rss;
	uint16_t vlan_tci;
	uint16_t queue;
};

int vdev_counter = 0;

struct Port {
	std::string name;
	uint16_t id = 0;
	uint16_t nrxq = 1, ntxq = 1;

	// tx_free_thresh: the TX queues' (0: the default); rx_clean false:
	// rte_pmd_synth_set_rx_clean(id, false) before the start
	Port(const std::string &args, uint16_t rxq = 1, uint16_t txq = 1,
	     rte_mempool *pool = lrx_test::mbuf_pool(), uint16_t tx_free_thresh = 0,
	     bool rx_clean = true)
		: nrxq(rxq), ntxq(txq)
	{
		name = "net_synth" + std::to_string(100 + vdev_counter++);
		int rc = rte_vdev_init(name.c_str(), args.c_str());
		INFO("rte_vdev_init " << name << "," << args << ": " << rc);
		REQUIRE(rc == 0);
		REQUIRE(rte_eth_dev_get_port_by_name(name.c_str(), &id) == 0);
		rte_eth_conf conf;
		memset(&conf, 0, sizeof(conf));
		if (rxq > 1)
			conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		REQUIRE(rte_eth_dev_configure(id, rxq, txq, &conf) == 0);
		for (uint16_t q = 0; q < rxq; q++)
			REQUIRE(rte_eth_rx_queue_setup(id, q, 512, 0, nullptr, pool) == 0);
		rte_eth_txconf txconf;
		memset(&txconf, 0, sizeof(txconf));
		txconf.tx_free_thresh = tx_free_thresh;
		for (uint16_t q = 0; q < txq; q++)
			REQUIRE(rte_eth_tx_queue_setup(id, q, 512, 0, &txconf) == 0);
		if (!rx_clean)
			REQUIRE(rte_pmd_synth_set_rx_clean(id, false) == 0);
		REQUIRE(rte_eth_dev_start(id) == 0);
	}
	~Port()
	{
		rte_eth_dev_stop(id);
		rte_eth_dev_close(id);
		rte_vdev_uninit(name.c_str());
	}

	// n frames from queue q, copied out; mbufs freed (or kept in *keep)
	std::vector<Rx> rx(uint16_t q, unsigned n, std::vector<rte_mbuf *> *keep = nullptr)
	{
		std::vector<Rx> out;
		rte_mbuf *b[32];
		for (int spins = 0; out.size() < n && spins < 1000000; spins++) {
			uint16_t want = (uint16_t)std::min<unsigned>(32, n - (unsigned)out.size());
			uint16_t got = rte_eth_rx_burst(id, q, b, want);
			for (uint16_t i = 0; i < got; i++) {
				Rx r;
				r.bytes.assign(rte_pktmbuf_mtod(b[i], uint8_t *),
					       rte_pktmbuf_mtod(b[i], uint8_t *) + b[i]->data_len);
				REQUIRE(b[i]->pkt_len == b[i]->data_len);
				REQUIRE(b[i]->nb_segs == 1);
				REQUIRE(b[i]->port == id);
				r.ol_flags = b[i]->ol_flags;
				r.packet_type = b[i]->packet_type;
				r.rss = b[i]->hash.rss;
				r.vlan_tci = b[i]->vlan_tci;
				r.queue = q;
				out.push_back(r);
				if (keep)
					keep->push_back(b[i]);
				else
					rte_pktmbuf_free(b[i]);
			}
		}
		return out;
	}

	std::map<std::string, uint64_t> xstats()
	{
		int n = rte_eth_xstats_get_names(id, nullptr, 0);
		REQUIRE(n > 0);
		std::vector<rte_eth_xstat_name> names(n);
		std::vector<rte_eth_xstat> vals(n);
		REQUIRE(rte_eth_xstats_get_names(id, names.data(), n) == n);
		REQUIRE(rte_eth_xstats_get(id, vals.data(), n) == n);
		std::map<std::string, uint64_t> m;
		for (int i = 0; i < n; i++)
			m[names[vals[i].id].name] = vals[i].value;
		return m;
	}
};

// pools named synth* are net_synth's pre-built (copy=0) pools
unsigned prebuilt_in_use()
{
	unsigned total = 0;
	rte_mempool_walk(
		[](rte_mempool *mp, void *arg) {
			if (strncmp(mp->name, "synth", 5) == 0)
				*(unsigned *)arg += rte_mempool_in_use_count(mp);
		},
		&total);
	return total;
}

struct Parsed {
	bool vlan = false;
	uint16_t ether_type = 0;
	const rte_ipv4_hdr *ip = nullptr;
	const rte_ipv6_hdr *ip6 = nullptr;
	const uint8_t *l4 = nullptr;
	size_t l3_off = 0;
};

Parsed parse(const std::vector<uint8_t> &f)
{
	Parsed p;
	REQUIRE(f.size() >= 14);
	size_t off = 14;
	p.ether_type = (uint16_t)(f[12] << 8 | f[13]);
	if (p.ether_type == RTE_ETHER_TYPE_VLAN) {
		p.vlan = true;
		p.ether_type = (uint16_t)(f[16] << 8 | f[17]);
		off = 18;
	}
	p.l3_off = off;
	if (p.ether_type == RTE_ETHER_TYPE_IPV4 && f.size() >= off + 20) {
		p.ip = (const rte_ipv4_hdr *)(f.data() + off);
		p.l4 = f.data() + off + (p.ip->version_ihl & 0xf) * 4;
	} else if (p.ether_type == RTE_ETHER_TYPE_IPV6) {
		p.ip6 = (const rte_ipv6_hdr *)(f.data() + off);
		p.l4 = f.data() + off + 40;
	}
	return p;
}

bool ip4_header_ok(const rte_ipv4_hdr *ip)
{
	return rte_raw_cksum(ip, 20) == 0xffff;
}

// the frame is a valid UDP/IPv4 or UDP/IPv6 datagram, all checksums good
void require_valid_udp(const std::vector<uint8_t> &f)
{
	Parsed p = parse(f);
	if (p.ip) {
		REQUIRE(p.ip->version_ihl == 0x45);
		REQUIRE(ip4_header_ok(p.ip));
		REQUIRE(p.l3_off + rte_be_to_cpu_16(p.ip->total_length) == f.size());
		REQUIRE(p.ip->next_proto_id == IPPROTO_UDP);
		REQUIRE(rte_ipv4_udptcp_cksum_verify(p.ip, p.l4) == 0);
	} else {
		REQUIRE(p.ip6 != nullptr);
		REQUIRE(p.l3_off + 40 + rte_be_to_cpu_16(p.ip6->payload_len) == f.size());
		REQUIRE(rte_ipv6_udptcp_cksum_verify(p.ip6, p.l4) == 0);
	}
}

std::string capture_log(const std::function<void()> &fn)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	FILE *old = rte_log_get_stream();
	rte_openlog_stream(mem);
	fn();
	rte_openlog_stream(old == stderr ? nullptr : old);
	fclose(mem);
	std::string s(buf, len);
	free(buf);
	return s;
}

void write_pcap(const std::string &path, const std::vector<std::vector<uint8_t>> &frames,
		bool swap, bool nsec)
{
	FILE *f = fopen(path.c_str(), "wb");
	REQUIRE(f);
	auto w32 = [&](uint32_t v) {
		v = swap ? rte_bswap32(v) : v;
		fwrite(&v, 4, 1, f);
	};
	auto w16 = [&](uint16_t v) {
		v = swap ? rte_bswap16(v) : v;
		fwrite(&v, 2, 1, f);
	};
	w32(nsec ? 0xa1b23c4d : 0xa1b2c3d4);
	w16(2);
	w16(4);
	w32(0);
	w32(0);
	w32(65535);
	w32(1);
	for (size_t i = 0; i < frames.size(); i++) {
		w32((uint32_t)i);
		w32(0);
		w32((uint32_t)frames[i].size());
		w32((uint32_t)frames[i].size());
		fwrite(frames[i].data(), 1, frames[i].size(), f);
	}
	fclose(f);
}

std::vector<std::vector<uint8_t>> read_pcap(const std::string &path)
{
	std::vector<std::vector<uint8_t>> out;
	FILE *f = fopen(path.c_str(), "rb");
	REQUIRE(f);
	uint8_t hdr[24];
	REQUIRE(fread(hdr, 1, 24, f) == 24);
	uint32_t magic;
	memcpy(&magic, hdr, 4);
	REQUIRE((magic == 0xa1b23c4d || magic == 0xa1b2c3d4));
	uint32_t rec[4];
	while (fread(rec, 4, 4, f) == 4) {
		std::vector<uint8_t> d(rec[2]);
		REQUIRE(fread(d.data(), 1, d.size(), f) == d.size());
		out.push_back(d);
	}
	fclose(f);
	return out;
}

struct Setup {
	Setup() { lrx_test::eal_init(); }
} setup_once;

} // namespace

TEST_CASE("udp64: one flow of 60-byte UDP/IPv4 frames with good checksums and hints",
	  "[synth]")
{
	rte_mempool *pool = lrx_test::mbuf_pool();
	for (const char *copy : {"0", "1"}) {
		SECTION(std::string("copy=") + copy) {
			{
				Port p(std::string("profile=udp64,copy=") + copy);
				auto frames = p.rx(0, 300);
				REQUIRE(frames.size() == 300);
				for (auto &r : frames) {
					REQUIRE(r.bytes.size() == 60);
					REQUIRE(r.bytes == frames[0].bytes);
					require_valid_udp(r.bytes);
					REQUIRE((r.ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
						RTE_MBUF_F_RX_IP_CKSUM_GOOD);
					REQUIRE((r.ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) ==
						RTE_MBUF_F_RX_L4_CKSUM_GOOD);
					REQUIRE((r.ol_flags & RTE_MBUF_F_RX_RSS_HASH));
					REQUIRE(r.packet_type == (RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 |
								  RTE_PTYPE_L4_UDP));
				}
				auto x = p.xstats();
				REQUIRE(x["rx_q0_packets"] == 300);
				REQUIRE(x["rx_q0_bytes"] == 300 * 60);
				REQUIRE(x["rx_normal"] == 300);
			}
			LRX_REQUIRE_POOL_FULL(pool);
			REQUIRE(prebuilt_in_use() == 0);
		}
	}
}

TEST_CASE("copy=0 undoes header edits the application made (XDP_TX MAC swap)", "[synth]")
{
	Port p("profile=udp-flows,flows=4,size=256,copy=0");
	auto ref = p.rx(0, 4);
	for (int round = 0; round < 50; round++) {
		std::vector<rte_mbuf *> held;
		auto got = p.rx(0, 4, &held);
		for (size_t i = 0; i < held.size(); i++) {
			REQUIRE(got[i].bytes == ref[i].bytes);
			uint8_t *d = rte_pktmbuf_mtod(held[i], uint8_t *);
			uint8_t tmp[6];
			memcpy(tmp, d, 6);            // swap MACs
			memcpy(d, d + 6, 6);
			memcpy(d + 6, tmp, 6);
			d[14 + 8]--;                  // TTL
			rte_pktmbuf_adj(held[i], 14); // and move data_off
		}
		rte_pktmbuf_free_bulk(held.data(), (unsigned)held.size());
	}
}

TEST_CASE("udp-flows: N distinct flows of the asked size, all valid", "[synth]")
{
	Port p("profile=udp-flows,flows=100,size=128,seed=3,copy=1");
	auto frames = p.rx(0, 200);
	std::set<std::vector<uint8_t>> tuples;
	for (auto &r : frames) {
		REQUIRE(r.bytes.size() == 124);
		require_valid_udp(r.bytes);
		Parsed q = parse(r.bytes);
		std::vector<uint8_t> t((const uint8_t *)&q.ip->src_addr,
				       (const uint8_t *)&q.ip->src_addr + 8);
		t.insert(t.end(), q.l4, q.l4 + 4);
		tuples.insert(t);
	}
	REQUIRE(tuples.size() == 100);
}

TEST_CASE("imix: 64/570/1518 on-wire sizes in the ratio 7:4:1", "[synth]")
{
	for (const char *copy : {"0", "1"}) {
		Port p(std::string("profile=imix,flows=3,copy=") + copy);
		auto frames = p.rx(0, 1200);
		std::map<size_t, unsigned> sizes;
		for (auto &r : frames) {
			require_valid_udp(r.bytes);
			sizes[r.bytes.size() + 4]++;
		}
		REQUIRE(sizes.size() == 3);
		REQUIRE(sizes[64] == 700);
		REQUIRE(sizes[570] == 400);
		REQUIRE(sizes[1518] == 100);
	}
}

TEST_CASE("mixed: exact shares of IPv6, ARP, VLAN and each malformed kind", "[synth]")
{
	Port p("profile=mixed,flows=50,size=100,ipv6_share=0.1,arp_share=0.05,"
	       "vlan_share=0.15,malformed_share=0.1,seed=9");
	auto frames = p.rx(0, 10000);
	std::map<std::string, unsigned> kinds;
	for (auto &r : frames) {
		Parsed q = parse(r.bytes);
		if (q.ether_type == RTE_ETHER_TYPE_ARP) {
			kinds["arp"]++;
			REQUIRE(r.packet_type == RTE_PTYPE_L2_ETHER_ARP);
			continue;
		}
		if (q.ip6) {
			kinds["ipv6"]++;
			require_valid_udp(r.bytes);
			continue;
		}
		REQUIRE(q.ip);
		uint8_t version = q.ip->version_ihl >> 4, ihl = q.ip->version_ihl & 0xf;
		uint16_t tot = rte_be_to_cpu_16(q.ip->total_length);
		if (version != 4) {
			kinds["bad_version"]++;
			REQUIRE(ip4_header_ok(q.ip));
		} else if (ihl < 5) {
			kinds["bad_ihl"]++;
			REQUIRE(ip4_header_ok(q.ip));
		} else if (!ip4_header_ok(q.ip)) {
			kinds["bad_csum"]++;
			REQUIRE((r.ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
				RTE_MBUF_F_RX_IP_CKSUM_BAD);
		} else if (tot < 20) {
			kinds["bad_total_len"]++;
		} else if (q.l3_off + tot > r.bytes.size()) {
			kinds["truncated"]++;
		} else {
			require_valid_udp(r.bytes);
			kinds[q.vlan ? "vlan" : "normal"]++;
		}
	}
	REQUIRE(kinds["ipv6"] == 1000);
	REQUIRE(kinds["arp"] == 500);
	REQUIRE(kinds["vlan"] == 1500);
	for (const char *k : {"bad_version", "bad_ihl", "bad_csum", "bad_total_len", "truncated"})
		REQUIRE(kinds[k] == 200);
	REQUIRE(kinds["normal"] == 10000 - 1000 - 500 - 1500 - 1000);
	auto x = p.xstats();
	REQUIRE(x["rx_malformed_bad_csum"] == 200);
	REQUIRE(x["rx_malformed_truncated"] == 200);
	REQUIRE(x["rx_malformed_bad_ihl"] == 200);
	REQUIRE(x["rx_malformed_bad_version"] == 200);
	REQUIRE(x["rx_malformed_bad_total_len"] == 200);
	REQUIRE(x["rx_ipv6"] == 1000);
	REQUIRE(x["rx_arp"] == 500);
	REQUIRE(x["rx_vlan"] == 1500);
}

TEST_CASE("hints: VLAN strip, timestamp dynfield, none", "[synth]")
{
	{
		Port p("profile=mixed,vlan_share=1,hints=all");
		int off = -1;
		uint64_t flag = 0;
		REQUIRE(rte_mbuf_dyn_rx_timestamp_register(&off, &flag) == 0);
		rte_mbuf *b[8];
		uint64_t before = rte_rdtsc();
		uint16_t n = 0;
		while (n == 0)
			n = rte_eth_rx_burst(p.id, 0, b, 8);
		for (uint16_t i = 0; i < n; i++) {
			REQUIRE((b[i]->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED));
			REQUIRE(b[i]->vlan_tci >= 100);
			REQUIRE((b[i]->ol_flags & flag));
			uint64_t ts = *RTE_MBUF_DYNFIELD(b[i], off, rte_mbuf_timestamp_t *);
			REQUIRE(ts >= before);
			REQUIRE(ts <= rte_rdtsc());
			std::vector<uint8_t> f(rte_pktmbuf_mtod(b[i], uint8_t *),
					       rte_pktmbuf_mtod(b[i], uint8_t *) + b[i]->data_len);
			REQUIRE(parse(f).vlan == false);
			require_valid_udp(f);
		}
		rte_pktmbuf_free_bulk(b, n);
		rte_eth_dev_info info;
		REQUIRE(rte_eth_dev_info_get(p.id, &info) == 0);
		REQUIRE((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_VLAN_STRIP));
		REQUIRE((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP));
	}
	{
		Port p("profile=udp64,hints=none");
		auto f = p.rx(0, 4);
		for (auto &r : f) {
			REQUIRE(r.ol_flags == 0);
			REQUIRE(r.packet_type == 0);
		}
	}
}

TEST_CASE("tcp-stream: valid segments, per-flow sequence continuity", "[synth]")
{
	Port p("profile=tcp-stream,flows=4,mss=1000,seed=5");
	auto frames = p.rx(0, 400);
	std::map<uint16_t, uint32_t> next_seq;
	for (auto &r : frames) {
		REQUIRE(r.bytes.size() == 14 + 20 + 32 + 1000);
		Parsed q = parse(r.bytes);
		REQUIRE(q.ip);
		REQUIRE(ip4_header_ok(q.ip));
		REQUIRE(q.ip->next_proto_id == IPPROTO_TCP);
		REQUIRE(rte_ipv4_udptcp_cksum_verify(q.ip, q.l4) == 0);
		auto *tcp = (const rte_tcp_hdr *)q.l4;
		REQUIRE(tcp->tcp_flags == RTE_TCP_ACK_FLAG);
		uint16_t sport = rte_be_to_cpu_16(tcp->src_port);
		uint32_t seq = rte_be_to_cpu_32(tcp->sent_seq);
		if (next_seq.count(sport))
			REQUIRE(seq == next_seq[sport]);
		next_seq[sport] = seq + 1000;
	}
	REQUIRE(next_seq.size() == 4);
}

TEST_CASE("tcp-stream: PSH and retransmits at the asked rate, counted", "[synth]")
{
	Port p("profile=tcp-stream,flows=2,psh_rate=0.2,retrans_rate=0.1,reorder_rate=0.05,"
	       "tos_change_rate=0.1,ttl_change_rate=0.1,opt_change_rate=0.1");
	auto frames = p.rx(0, 4000);
	unsigned psh = 0, tos = 0, ttl = 0;
	for (auto &r : frames) {
		Parsed q = parse(r.bytes);
		REQUIRE(ip4_header_ok(q.ip));
		REQUIRE(rte_ipv4_udptcp_cksum_verify(q.ip, q.l4) == 0);
		auto *tcp = (const rte_tcp_hdr *)q.l4;
		psh += (tcp->tcp_flags & RTE_TCP_PSH_FLAG) != 0;
		tos += q.ip->type_of_service != 0;
		ttl += q.ip->time_to_live != 64;
	}
	auto x = p.xstats();
	REQUIRE(x["rx_q0_tcp_psh"] == psh);
	REQUIRE(x["rx_q0_tcp_tos_change"] == tos);
	REQUIRE(x["rx_q0_tcp_ttl_change"] == ttl);
	CHECK(psh > 600);
	CHECK(psh < 1000);
	REQUIRE(x["rx_q0_tcp_retrans"] > 200);
	REQUIRE(x["rx_q0_tcp_reorder"] > 50);
	REQUIRE(x["rx_q0_tcp_opt_change"] > 200);
}

TEST_CASE("deterministic given the seed", "[synth]")
{
	for (const char *prof : {"profile=udp-flows,flows=37", "profile=mixed,malformed_share=0.3,ipv6_share=0.2",
				 "profile=tcp-stream,flows=3,reorder_rate=0.1,retrans_rate=0.1"}) {
		std::string a = std::string(prof) + ",seed=7";
		std::string b = std::string(prof) + ",seed=8";
		std::vector<Rx> f1, f2, f3;
		{ Port p(a); f1 = p.rx(0, 300); }
		{ Port p(a); f2 = p.rx(0, 300); }
		{ Port p(b); f3 = p.rx(0, 300); }
		bool same12 = true, same13 = true;
		for (size_t i = 0; i < 300; i++) {
			same12 &= f1[i].bytes == f2[i].bytes;
			same13 &= f1[i].bytes == f3[i].bytes;
		}
		INFO(prof);
		REQUIRE(same12);
		REQUIRE_FALSE(same13);
	}
}

TEST_CASE("RSS: queue and hash from rte_softrss with the default key and RETA", "[synth]")
{
	rte_mempool *pool = lrx_test::mbuf_pool();
	{
		Port p("profile=udp-flows,flows=64,seed=11", 4, 4);
		std::set<uint32_t> flows_seen;
		uint64_t total = 0;
		for (uint16_t q = 0; q < 4; q++) {
			auto frames = p.rx(q, 64);
			std::set<uint32_t> flows;
			for (auto &r : frames) {
				Parsed pp = parse(r.bytes);
				rte_ipv4_tuple t;
				t.src_addr = rte_be_to_cpu_32(pp.ip->src_addr);
				t.dst_addr = rte_be_to_cpu_32(pp.ip->dst_addr);
				t.sport = rte_be_to_cpu_16(((const rte_udp_hdr *)pp.l4)->src_port);
				t.dport = rte_be_to_cpu_16(((const rte_udp_hdr *)pp.l4)->dst_port);
				uint32_t h = rte_softrss((uint32_t *)&t, RTE_THASH_V4_L4_LEN,
							 default_key);
				REQUIRE((r.ol_flags & RTE_MBUF_F_RX_RSS_HASH));
				REQUIRE(r.rss == h);
				REQUIRE((h % 128) % 4 == q);
				flows.insert(t.src_addr);
			}
			total += flows.size();
			for (auto f : flows)
				REQUIRE(flows_seen.insert(f).second);
		}
		REQUIRE(total == 64);
		rte_eth_stats st;
		REQUIRE(rte_eth_stats_get(p.id, &st) == 0);
		REQUIRE(st.ipackets == 4 * 64);
		REQUIRE(st.q_ipackets[0] + st.q_ipackets[1] + st.q_ipackets[2] +
				st.q_ipackets[3] == st.ipackets);
		for (int q = 0; q < 4; q++)
			REQUIRE(st.q_ipackets[q] == 64);
		REQUIRE(rte_eth_stats_reset(p.id) == 0);
		REQUIRE(rte_eth_stats_get(p.id, &st) == 0);
		REQUIRE(st.ipackets == 0);
		REQUIRE(p.xstats()["rx_q2_packets"] == 0);
	}
	LRX_REQUIRE_POOL_FULL(pool);
	REQUIRE(prebuilt_in_use() == 0);
}

TEST_CASE("bad devargs fail the probe with a message naming key and value", "[synth]")
{
	struct Bad {
		const char *args, *expect;
	} bad[] = {
		{"profile=bogus", "profile=bogus"},
		{"flows=0,profile=udp-flows", "flows=0"},
		{"hints=hash+warp", "hints=hash+warp"},
		{"copy=2", "copy=2"},
		{"recycle=sometimes", "recycle=sometimes"},
		{"psh_rate=1.5", "psh_rate=1.5"},
		{"colour=red", "\"colour\""},
		{"profile=pcap", "pcap=<file>"},
		{"profile=pcap,pcap=/nonexistent/x.pcap", "/nonexistent/x.pcap"},
		{"profile=mixed,ipv6_share=0.6,arp_share=0.6", "at most 1"},
	};
	for (auto &b : bad) {
		int rc = 0;
		std::string log = capture_log([&] { rc = rte_vdev_init("net_synth99", b.args); });
		INFO(b.args << " -> " << log);
		REQUIRE(rc < 0);
		REQUIRE(log.find(b.expect) != std::string::npos);
		REQUIRE(log.find("net_synth99") != std::string::npos);
		rte_vdev_uninit("net_synth99");
	}
	int rc = 0;
	std::string log = capture_log([&] { rc = rte_vdev_init("net_synth98", "profile=warp"); });
	REQUIRE(log.find("one of udp64, udp-flows, tcp-stream, imix, pcap, mixed") != std::string::npos);
}

TEST_CASE("pcap replay: bytes identical to the file, in order, looped", "[synth]")
{
	std::vector<std::vector<uint8_t>> frames;
	for (unsigned i = 0; i < 5; i++) {
		std::vector<uint8_t> f(60 + i * 37);
		for (size_t o = 0; o < f.size(); o++)
			f[o] = (uint8_t)(i * 13 + o * 3);
		f[12] = 0x88; // an ether type nobody parses: every frame on queue 0
		f[13] = 0xb5;
		frames.push_back(f);
	}
	int variant = 0;
	for (bool swap : {false, true})
		for (bool nsec : {false, true})
			for (const char *copy : {"0", "1"}) {
				std::string path = "/tmp/synth_test_" + std::to_string(getpid()) +
						   "_" + std::to_string(variant++) + ".pcap";
				write_pcap(path, frames, swap, nsec);
				{
					Port p("profile=pcap,pcap=" + path + ",copy=" + copy);
					auto got = p.rx(0, 12);
					for (size_t i = 0; i < got.size(); i++)
						REQUIRE(got[i].bytes == frames[i % 5]);
				}
				remove(path.c_str());
			}
}

TEST_CASE("TX: completion ring reaped at the next RX poll, tx_pcap, done_cleanup", "[synth]")
{
	rte_mempool *pool = lrx_test::mbuf_pool();
	std::string path = "/tmp/synth_tx_" + std::to_string(getpid()) + ".pcap";
	std::vector<std::vector<uint8_t>> sent;
	for (const char *recycle : {"bulk", "single"}) {
		sent.clear();
		{
			Port p(std::string("profile=udp64,copy=1,recycle=") + recycle +
			       ",tx_pcap=" + path);
			rte_mbuf *b[10];
			REQUIRE(rte_pktmbuf_alloc_bulk(pool, b, 10) == 0);
			for (int i = 0; i < 10; i++) {
				uint8_t *d = (uint8_t *)rte_pktmbuf_append(b[i], 60 + i);
				for (int o = 0; o < 60 + i; o++)
					d[o] = (uint8_t)(i + o);
				sent.emplace_back(d, d + 60 + i);
			}
			REQUIRE(rte_eth_tx_burst(p.id, 0, b, 10) == 10);
			auto x = p.xstats();
			REQUIRE(x["tx_q0_completion_queued"] == 10);
			REQUIRE(lrx_test::in_use(pool) == 10); // held until the RX poll
			p.rx(0, 1);
			x = p.xstats();
			REQUIRE(x["rx_q0_tx_completions_reaped"] == 10);
			REQUIRE(x["rx_q0_tx_recycle_calls"] ==
				(std::string(recycle) == "bulk" ? 1u : 10u));
			LRX_REQUIRE_POOL_FULL(pool);

			REQUIRE(rte_pktmbuf_alloc_bulk(pool, b, 5) == 0);
			for (int i = 0; i < 5; i++) {
				uint8_t *d = (uint8_t *)rte_pktmbuf_append(b[i], 70);
				memset(d, 0xee, 70);
				sent.emplace_back(d, d + 70);
			}
			REQUIRE(rte_eth_tx_burst(p.id, 0, b, 5) == 5);
			REQUIRE(rte_eth_tx_done_cleanup(p.id, 0, 0) == 5);
			REQUIRE(p.xstats()["tx_q0_done_cleanup_freed"] == 5);
			rte_eth_stats st;
			REQUIRE(rte_eth_stats_get(p.id, &st) == 0);
			REQUIRE(st.opackets == 15);
		}
		auto got = read_pcap(path);
		REQUIRE(got == sent);
		remove(path.c_str());
	}
	LRX_REQUIRE_POOL_FULL(pool);
}

namespace {
// n mbufs of 64 bytes from pool, sent on queue 0 of p
void tx_n(uint16_t port, rte_mempool *pool, unsigned n)
{
	std::vector<rte_mbuf *> b(n);
	REQUIRE(rte_pktmbuf_alloc_bulk(pool, b.data(), n) == 0);
	for (rte_mbuf *m : b)
		memset(rte_pktmbuf_append(m, 64), 0x5a, 64);
	REQUIRE(rte_eth_tx_burst(port, 0, b.data(), (uint16_t)n) == n);
}
} // namespace

TEST_CASE("TX: without the RX poll's cleaning the ring holds what it sent until cleaned",
	  "[synth]")
{
	rte_mempool *pool = lrx_test::mbuf_pool();
	{
		Port p("profile=udp64,copy=1", 1, 1, pool, 0, false);
		REQUIRE(rte_pmd_synth_set_rx_clean(p.id, true) == -EBUSY); // started
		tx_n(p.id, pool, 10);
		p.rx(0, 4);
		auto x = p.xstats();
		CHECK(x["rx_q0_tx_completions_reaped"] == 0);
		CHECK(lrx_test::in_use(pool) == 10); // the RX poll left them
		CHECK(rte_eth_tx_done_cleanup(p.id, 0, 0) == 10);
		LRX_REQUIRE_POOL_FULL(pool);
		// a burst that does not fit frees what it needs, the oldest first
		tx_n(p.id, pool, 500);
		tx_n(p.id, pool, 30);
		x = p.xstats();
		CHECK(x["tx_q0_clean_on_xmit"] == 1);
		CHECK(x["tx_q0_completion_freed"] == 10 + 18);
		CHECK(lrx_test::in_use(pool) == 512);
		CHECK(rte_eth_tx_done_cleanup(p.id, 0, 0) == 512);
		// every mbuf sent freed once: by the RX poll, transmit or cleanup
		x = p.xstats();
		CHECK(x["tx_q0_completion_queued"] ==
		      x["tx_q0_completion_freed"] + x["rx_q0_tx_completions_reaped"]);
		LRX_REQUIRE_POOL_FULL(pool);
	}
	uint16_t none = RTE_MAX_ETHPORTS - 1;
	CHECK(rte_pmd_synth_set_rx_clean(none, false) == -ENODEV);
}

TEST_CASE("TX: tx_free_thresh frees everything completed on transmit", "[synth]")
{
	rte_mempool *pool = lrx_test::mbuf_pool();
	{
		// the ring's size: every transmit first frees what the ring holds
		// (virtio-net's free_old_xmit_skbs in start_xmit)
		Port p("profile=udp64,copy=1", 1, 1, pool, 512, false);
		tx_n(p.id, pool, 10);
		CHECK(lrx_test::in_use(pool) == 10);
		CHECK(p.xstats()["tx_q0_clean_on_xmit"] == 0); // the ring was empty
		tx_n(p.id, pool, 5);
		auto x = p.xstats();
		CHECK(x["tx_q0_clean_on_xmit"] == 1);
		CHECK(x["tx_q0_completion_freed"] == 10);
		CHECK(lrx_test::in_use(pool) == 5);
		p.rx(0, 4);
		CHECK(lrx_test::in_use(pool) == 5); // not the RX poll's to free
	}
	LRX_REQUIRE_POOL_FULL(pool);
	{
		// 64: transmit cleans once fewer than 64 descriptors are free
		Port p("profile=udp64,copy=1", 1, 1, pool, 64, false);
		tx_n(p.id, pool, 400);
		tx_n(p.id, pool, 60);
		CHECK(p.xstats()["tx_q0_clean_on_xmit"] == 0);
		CHECK(lrx_test::in_use(pool) == 460);
		tx_n(p.id, pool, 1); // 52 free < 64
		CHECK(p.xstats()["tx_q0_clean_on_xmit"] == 1);
		CHECK(lrx_test::in_use(pool) == 1);
	}
	LRX_REQUIRE_POOL_FULL(pool);
	// above the ring's size: refused at setup
	std::string name = "net_synth" + std::to_string(100 + vdev_counter++);
	REQUIRE(rte_vdev_init(name.c_str(), "profile=udp64") == 0);
	uint16_t id;
	REQUIRE(rte_eth_dev_get_port_by_name(name.c_str(), &id) == 0);
	rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	REQUIRE(rte_eth_dev_configure(id, 1, 1, &conf) == 0);
	rte_eth_txconf txconf;
	memset(&txconf, 0, sizeof(txconf));
	txconf.tx_free_thresh = 513;
	CHECK(rte_eth_tx_queue_setup(id, 0, 512, 0, &txconf) == -EINVAL);
	rte_eth_dev_close(id);
	rte_vdev_uninit(name.c_str());
}

TEST_CASE("rate= caps packets per second", "[synth]")
{
	Port p("profile=udp64,rate=20000");
	rte_mbuf *b[32];
	uint64_t n = 0, start = rte_rdtsc(), hz = rte_get_tsc_hz();
	while (rte_rdtsc() - start < hz / 5) {
		uint16_t got = rte_eth_rx_burst(p.id, 0, b, 32);
		rte_pktmbuf_free_bulk(b, got);
		n += got;
	}
	// 0.2 s at 20 kpps = 4000, plus at most one bucket (32). Credit does
	// not accumulate beyond the bucket while this thread is descheduled
	// on a shared machine, so the lower bound is loose.
	INFO("received " << n);
	REQUIRE(n >= 1000);
	REQUIRE(n <= 4000 + 32 + 200);
	REQUIRE(p.xstats()["rx_q0_rate_limited_polls"] > 0);
}

TEST_CASE("device ops: link, MTU, promiscuous, info", "[synth]")
{
	Port p("profile=udp64,rxq=4,txq=2");
	rte_eth_link link;
	REQUIRE(rte_eth_link_get_nowait(p.id, &link) == 0);
	REQUIRE(link.link_status == RTE_ETH_LINK_UP);
	REQUIRE(link.link_speed == RTE_ETH_SPEED_NUM_100G);
	REQUIRE(rte_eth_dev_set_mtu(p.id, 9000) == 0);
	REQUIRE(rte_eth_dev_set_mtu(p.id, 9500) != 0);
	REQUIRE(rte_eth_promiscuous_enable(p.id) == 0);
	REQUIRE(rte_eth_promiscuous_get(p.id) == 1);
	REQUIRE(rte_eth_promiscuous_disable(p.id) == 0);
	REQUIRE(rte_eth_promiscuous_get(p.id) == 0);
	rte_eth_dev_info info;
	REQUIRE(rte_eth_dev_info_get(p.id, &info) == 0);
	REQUIRE(info.max_rx_queues == 4);
	REQUIRE(info.max_tx_queues == 2);
	REQUIRE(info.reta_size == 128);
	REQUIRE((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH));
	REQUIRE((info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_IPV4_CKSUM));
	REQUIRE(std::string(info.driver_name) == "net_synth");
	rte_eth_dev_stop(p.id);
	REQUIRE(rte_eth_link_get_nowait(p.id, &link) == 0);
	REQUIRE(link.link_status == RTE_ETH_LINK_DOWN);
}

TEST_CASE("cold=1: buffers spread over a region larger than the LLC", "[synth]")
{
	Port p("profile=udp-flows,flows=8,cold=1,cold_mb=64");
	auto frames = p.rx(0, 5000);
	for (auto &r : frames)
		require_valid_udp(r.bytes);
	REQUIRE(prebuilt_in_use() == 0);
}
