// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for tc-ingress: one `tc -batch` file (a clsact qdisc and a
// direct-action cls_bpf filter running tc_count.bpf.o, which counts what
// it sees of skb->protocol, pkt_type, len and vlan_present in its map and
// drops UDP to 10000..19999) configures a veth in a fresh netns (its name
// put for portN) and listrx's build-meta,tc-ingress,l3-demux. The same
// frames go to both: the program's map (bpftool map dump: the kernel
// keeps no per-filter counters for cls_bpf) and the `nstat` counters of
// what passed the hook must be equal. Needs root, tc and bpftool; skips
// with a printed reason otherwise.
#include <catch2/catch.hpp>

#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frames.h"
#include "netns_oracle.h"
#include "stage_harness.h"
#include "tc_harness.h"
#include "test_eal.h"

extern "C" {
#include "meta.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;
using lrx_tc_test::TempFile;
using lrx_tc_test::test_prog;

namespace {

// bpftool's dump of an array map of u64: formatted with BTF
// ({"key": 0, "value": 5}) or raw hex bytes, little endian.
uint64_t json_u64(const nlohmann::json &j)
{
	if (j.is_number())
		return j.get<uint64_t>();
	uint64_t v = 0;
	for (size_t i = j.size(); i-- > 0;)
		v = v << 8 | std::stoul(j[i].get<std::string>(), nullptr, 16);
	return v;
}

std::map<uint32_t, uint64_t> kernel_map(const std::string &ns,
					const std::string &dev)
{
	std::map<uint32_t, uint64_t> out;
	auto filters = nlohmann::json::parse(
		sh_out("ip netns exec " + ns + " tc -j filter show dev " + dev +
			" ingress"),
		nullptr, false);
	for (auto &f : filters) {
		if (!f.contains("options") || !f["options"].contains("prog"))
			continue;
		int id = f["options"]["prog"]["id"].get<int>();
		auto prog = nlohmann::json::parse(
			sh_out("bpftool -j prog show id " + std::to_string(id)),
			nullptr, false);
		for (auto &mid : prog["map_ids"]) {
			auto dump = nlohmann::json::parse(
				sh_out("bpftool -j map dump id " +
					std::to_string(mid.get<int>())),
				nullptr, false);
			for (auto &e : dump) {
				const auto &k = e.contains("formatted") ? e["formatted"] : e;
				out[(uint32_t)json_u64(k["key"])] = json_u64(k["value"]);
			}
		}
	}
	return out;
}

} // namespace

TEST_CASE("kernel oracle: cls_bpf on a veth in a netns and tc-ingress count "
	  "and drop the same frames", "[tc_ingress][kernel]")
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	if (sh("command -v tc && command -v bpftool") != 0) {
		WARN("SKIPPED: needs tc and bpftool (apt-get install iproute2 bpftool)");
		return;
	}
	Netns net;
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	const std::string batch =
		"qdisc add dev %DEV% clsact\n"
		"filter add dev %DEV% ingress bpf da obj " + test_prog("tc_count") +
		" sec tc\n";
	auto with_dev = [&](const std::string &dev) {
		return std::regex_replace(batch, std::regex("%DEV%"), dev);
	};
	TempFile kernel_file(with_dev(net.inside)), listrx_file(with_dev("port0"));
	if (sh("ip netns exec " + net.ns + " tc -batch " + kernel_file.path) != 0) {
		WARN("SKIPPED: the kernel refused the clsact / cls_bpf set-up "
		     "(tc -batch)");
		return;
	}

	Spec other, bcast, mcast, opt;
	other.dst = {0x02, 0, 0, 0, 0, 0x99};
	bcast.dst = mac_broadcast;
	bcast.ip4_dst = ip4(10, 0, 0, 255);
	bcast.dport = 9;
	mcast.dst = {0x01, 0x00, 0x5e, 0x01, 0x01, 0x01};
	mcast.ip4_dst = ip4(239, 1, 1, 1);
	opt.ip4_options = {1, 1, 1, 1};
	opt.dport = 12000;
	const std::vector<Frame> frames = {
		udp4(1, 9), udp4(1, 12000), udp4(1, 10000), udp4(1, 19999),
		udp4(1, 20000), udp4(1, 12000).ip4_corrupt_csum(), build(other),
		build(bcast), build(mcast), build(opt), udp6(1, 12000), tcp4(),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
		udp4(1, 12000).ip4_frag(0x2000), udp4(1, 9).append(30),
	};
	const unsigned repeat = 3;

	eal_init();
	rte_mempool *mp = mbuf_pool("tc_oracle_pool", 1023);
	auto before = nstat(net.ns);
	REQUIRE(replay(net.outside, frames, repeat));
	auto after = nstat(net.ns);
	auto kmap = kernel_map(net.ns, net.inside);
	REQUIRE(kmap.size() == 16);

	StageInstance bm("build-meta", {{"host_mac", "02:00:00:00:00:02"}});
	StageInstance tc("tc-ingress", {{"filters", listrx_file.path}});
	StageInstance l3("l3-demux", {{"local_ipv4", "10.0.0.2/24"},
				      {"local_ipv6", "2001:db8::2"},
				      {"udp_ports", "none"},
				      {"tcp_ports", "none"},
				      {"mcast_groups", "none"},
				      {"trust_ip_csum_hint", "no"}});
	REQUIRE(tc.ok());
	REQUIRE(l3.ok());
	for (unsigned r = 0; r < repeat; r++)
		for (auto &f : frames) {
			rte_mbuf *m = f.to_mbuf(mp);
			lrx_next_t next;
			run_packet({&bm, &tc, &l3}, &m, 1, &next);
			rte_pktmbuf_free(m);
		}

	std::map<uint32_t, uint64_t> lmap;
	lrx_stage_map info;
	for (unsigned i = 1; tc.desc()->map_at(tc.ctx(), i, &info); i++) {
		if (std::string(info.name) != "tc_stats")
			continue;
		uint32_t cursor = 0, key;
		uint64_t value;
		while (tc.desc()->map_next(tc.ctx(), i, &cursor, &key, &value))
			lmap[key] = value;
	}
	const char *slot_names[] = {
		"packets", "sum of len", "IPv4", "IPv6", "ARP", "other",
		"PACKET_HOST", "PACKET_BROADCAST", "PACKET_MULTICAST",
		"PACKET_OTHERHOST", "vlan_present", "dropped", "passed",
	};
	for (uint32_t k = 0; k < 13; k++) {
		INFO("map slot " << k << " (" << slot_names[k] << "): kernel "
				 << kmap[k] << ", listrx " << lmap[k]);
		CHECK(kmap[k] == lmap[k]);
	}
	// 12000, 10000, 19999, a bad IP checksum, a first fragment (the
	// program reads neither the checksum nor the fragment bits)
	CHECK(lmap[11] == repeat * 5);
	CHECK(tc.counter("act_shot") == lmap[11]);
	const char *compared[] = {
		"IpInReceives", "IpInHdrErrors", "IpExtInCsumErrors",
		"IpInAddrErrors", "IpInDelivers", "UdpNoPorts", "TcpInSegs",
		"IpReasmReqds", "Ip6InReceives", "Udp6NoPorts",
	};
	for (const char *name : compared) {
		uint64_t kernel = after[name] - before[name];
		INFO(name << ": kernel " << kernel << ", listrx " << l3.counter(name));
		CHECK(kernel == l3.counter(name));
	}
	LRX_REQUIRE_POOL_FULL(mp);
}
