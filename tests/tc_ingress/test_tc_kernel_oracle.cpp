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

#include <arpa/inet.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine_run.h"
#include "frames.h"
#include "netns_oracle.h"
#include "stage_harness.h"
#include "tc_harness.h"
#include "test_eal.h"

extern "C" {
#include "meta.h"
#include "tc_ingress/tc_ingress.h"
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

namespace {

// A second veth pair: one end in the oracle's namespace (the mirred
// target), the other in a namespace of its own, so that what is
// redirected leaves the host under test.
struct Sink {
	std::string ns, dev, peer;
	bool ok = false;
	explicit Sink(const Netns &net)
	{
		std::string id = std::to_string(getpid() % 100000);
		ns = "lrxsink_" + id;
		dev = "lrxc" + id;
		peer = "lrxd" + id;
		ok = sh("ip netns add " + ns) == 0 &&
		     sh("ip -n " + net.ns + " link add " + dev + " type veth peer name " +
			peer + " netns " + ns) == 0 &&
		     // no IPv6 on either end: the peer's DAD, MLD and router
		     // solicitations would count in the oracle's Ip6InReceives
		     // (ip6_rcv_core counts them before disable_ipv6 drops them)
		     sh("ip netns exec " + net.ns + " sysctl -qw net.ipv6.conf." + dev +
			".disable_ipv6=1") == 0 &&
		     sh("ip netns exec " + ns + " sysctl -qw net.ipv6.conf." + peer +
			".disable_ipv6=1") == 0 &&
		     sh("ip -n " + net.ns + " link set " + dev + " up") == 0 &&
		     sh("ip -n " + ns + " link set " + peer + " up") == 0;
	}
	~Sink() { sh("ip netns del " + ns); }
};

// The mirred actions' stats (tc -s filter show: "Sent B bytes P pkt"),
// by action index (1 = the first mirred made).
std::map<int, std::pair<uint64_t, uint64_t>> kernel_mirred(const std::string &ns,
							   const std::string &dev)
{
	std::map<int, std::pair<uint64_t, uint64_t>> out;
	// iproute2 6.x prints a u32 node's "offset" and "eat" as bare
	// strings in the JSON object (" eat ", no value): made keys here
	std::string text = std::regex_replace(
		sh_out("ip netns exec " + ns + " tc -s -j filter show dev " + dev +
		       " ingress"),
		std::regex("\"\\s*(eat|offset)\\s*\"(?=[,}])"), "\"$1\":true");
	auto filters = nlohmann::json::parse(text, nullptr, false);
	for (auto &f : filters) {
		if (!f.contains("options") || !f["options"].contains("actions"))
			continue;
		for (auto &a : f["options"]["actions"])
			out[a["index"].get<int>()] = {a["stats"]["packets"].get<uint64_t>(),
						      a["stats"]["bytes"].get<uint64_t>()};
	}
	return out;
}

} // namespace

TEST_CASE("kernel oracle: u32 filters (keys, offsets, hash tables, links) "
	  "on a veth in a netns and tc-ingress redirect and pass the same "
	  "frames", "[tc_ingress][kernel]")
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	if (sh("command -v tc") != 0) {
		WARN("SKIPPED: needs tc (apt-get install iproute2)");
		return;
	}
	Netns net;
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	Sink sink(net);
	if (!sink.ok) {
		WARN("SKIPPED: cannot make the mirred target (a veth pair into a "
		     "second netns)");
		return;
	}
	if (!settle(net)) {
		WARN("SKIPPED: IPv6 DAD did not finish in the namespace");
		return;
	}
	// This kernel has cls_u32 and act_mirred, not act_gact: the verdicts
	// it can show are mirred's redirect and a terminal node without
	// action (classid: TC_ACT_OK, the walk ends).
	const std::string mirred = " action mirred egress redirect dev %OUT%\n";
	const std::string batch =
		"qdisc add dev %DEV% clsact\n"
		"filter add dev %DEV% ingress protocol ip pref 1 u32 match ip protocol 17 0xff "
		"match ip dport 53 0xffff" + mirred +
		"filter add dev %DEV% ingress protocol ip pref 1 u32 match ip src 10.0.0.64/26" + mirred +
		"filter add dev %DEV% ingress protocol ip pref 1 u32 match ip tos 0x10 ff classid 1:1\n"
		"filter add dev %DEV% ingress pref 2 handle 1: protocol ip u32 divisor 4\n"
		"filter add dev %DEV% ingress protocol ip pref 2 u32 match ip protocol 6 0xff "
		"offset at 0 mask 0f00 shift 6 eat link 1: hashkey mask 0x00000003 at 20\n"
		"filter add dev %DEV% ingress protocol ip pref 2 u32 ht 1:0: match u16 8080 ffff at 2" + mirred +
		"filter add dev %DEV% ingress protocol ip pref 2 u32 ht 1:1: match u16 0x1000 0xf000 at 0" + mirred +
		"filter add dev %DEV% ingress protocol ip pref 3 u32 match u8 0x40 0xf0 at 0 "
		"match u16 0x2000 0x3fff at 6" + mirred +
		"filter add dev %DEV% ingress protocol ipv6 pref 4 u32 match ip6 dst 2001:db8::2/128 "
		"match ip6 protocol 17 0xff match ip6 dport 7 0xffff" + mirred +
		"filter add dev %DEV% ingress protocol all pref 5 u32 match u16 0x0806 0xffff at -2" + mirred +
		// a node of pref 6 put in pref 1's root (800: is the device's
		// first u32 table), linking down without eat: off2 for nexthdr+
		"filter add dev %DEV% ingress pref 6 handle 2: protocol ip u32 divisor 1\n"
		"filter add dev %DEV% ingress protocol ip pref 6 u32 ht 2: match u16 9 ffff "
		"at nexthdr+2" + mirred +
		"filter add dev %DEV% ingress protocol ip pref 6 u32 ht 800:: match ip dst "
		"10.0.0.0/8 offset at 0 mask 0f00 shift 6 link 2:\n";
	auto with = [&](const std::string &dev, const std::string &out) {
		return std::regex_replace(std::regex_replace(batch, std::regex("%DEV%"), dev),
					  std::regex("%OUT%"), out);
	};
	TempFile kernel_file(with(net.inside, sink.dev)), listrx_file(with("port0", "port1"));
	if (sh("ip netns exec " + net.ns + " tc -batch " + kernel_file.path) != 0) {
		WARN("SKIPPED: the kernel refused the u32 set-up (tc -batch; "
		     "CONFIG_NET_CLS_U32, CONFIG_NET_ACT_MIRRED)");
		return;
	}

	Spec src70, tos, opt, tcp_sport;
	src70.ip4_src = ip4(10, 0, 0, 70);
	src70.dport = 9;
	tos.tos = 0x10;
	tos.l4 = L4::tcp;
	tos.dport = 8080;
	opt.ip4_options = {1, 1, 1, 1};
	opt.l4 = L4::tcp;
	opt.dport = 8080;
	tcp_sport.l4 = L4::tcp;
	tcp_sport.sport = 5000;
	tcp_sport.dport = 8081;
	const std::vector<Frame> frames = {
		udp4(1, 53), udp4(1, 54), build(src70), build(tos),
		tcp4(TCP_ACK, 1000, 8080), build(tcp_sport), tcp4(TCP_ACK, 1000, 8081),
		build(opt), udp4(1, 12000).ip4_frag(0x2000), udp6(1, 7), udp6(1, 8),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)), udp4(1, 9),
		tcp4(), udp4(1, 9).append(30),
	};
	const unsigned repeat = 3;

	eal_init();
	rte_mempool *mp = mbuf_pool("tc_u32_oracle_pool", 1023);
	auto before = nstat(net.ns);
	REQUIRE(replay(net.outside, frames, repeat));
	auto after = nstat(net.ns);
	auto kmirred = kernel_mirred(net.ns, net.inside);
	REQUIRE(kmirred.size() == 8);

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
	uint64_t redirected = 0;
	for (unsigned r = 0; r < repeat; r++)
		for (auto &f : frames) {
			rte_mbuf *m = f.to_mbuf(mp);
			lrx_next_t next;
			run_packet({&bm, &tc, &l3}, &m, 1, &next);
			redirected += next == lrx_next_redirect(1);
			rte_pktmbuf_free(m);
		}

	// the k-th filter with mirred in the file made action index k
	lrx_stage_map info;
	REQUIRE(tc.desc()->map_at(tc.ctx(), 0, &info));
	uint32_t cursor = 0, key;
	uint64_t v[3];
	int index = 0;
	uint64_t ksum = 0;
	unsigned line = 0;
	std::vector<std::string> lines;
	for (size_t at = 0, nl; (nl = batch.find('\n', at)) != std::string::npos; at = nl + 1)
		lines.push_back(batch.substr(at, nl - at));
	while (tc.desc()->map_next(tc.ctx(), 0, &cursor, &key, v)) {
		while (++line < lines.size() && lines[line].rfind("filter", 0) != 0)
			;
		if (lines[line].find("mirred") == std::string::npos)
			continue;
		auto k = kmirred[++index];
		INFO("filter " << key << " (" << lines[line] << "): kernel " << k.first
			       << " pkt " << k.second << " bytes, listrx " << v[1]
			       << " pkt " << v[2] << " bytes");
		CHECK(k.first == v[1]);
		CHECK(k.second == v[2]);
		ksum += k.first;
	}
	CHECK(index == 8);
	CHECK(ksum == redirected);
	CHECK(redirected > 0);
	const char *compared[] = {
		"IpInReceives", "IpInHdrErrors", "IpInDelivers", "UdpNoPorts",
		"TcpInSegs", "IpReasmReqds", "Ip6InReceives", "Udp6NoPorts",
	};
	for (const char *name : compared) {
		uint64_t kernel = after[name] - before[name];
		INFO(name << ": kernel " << kernel << ", listrx " << l3.counter(name));
		CHECK(kernel == l3.counter(name));
	}
	LRX_REQUIRE_POOL_FULL(mp);
}


namespace {

// A device's received packets and bytes (the mirred target's peer).
std::pair<uint64_t, uint64_t> rx_of(const std::string &ns, const std::string &dev)
{
	const std::string at = "ip netns exec " + ns + " cat /sys/class/net/" + dev +
			       "/statistics/";
	return {std::stoull("0" + sh_out(at + "rx_packets")),
		std::stoull("0" + sh_out(at + "rx_bytes"))};
}

// The mirred actions' stats by index: packets, bytes, drops, overlimits.
std::map<int, std::vector<uint64_t>> kernel_actions(const std::string &ns,
						    const std::string &dev)
{
	std::map<int, std::vector<uint64_t>> out;
	auto filters = nlohmann::json::parse(
		sh_out("ip netns exec " + ns + " tc -s -j filter show dev " + dev +
		       " ingress"), nullptr, false);
	for (auto &f : filters) {
		if (!f.contains("options") || !f["options"].contains("actions"))
			continue;
		for (auto &a : f["options"]["actions"]) {
			const auto &st = a["stats"];
			out[a["index"].get<int>()] = {
				st["packets"].get<uint64_t>(), st["bytes"].get<uint64_t>(),
				st.value("drops", (uint64_t)0), st.value("overlimits", (uint64_t)0)};
		}
	}
	return out;
}

} // namespace

TEST_CASE("kernel oracle: u32 on the ip fragment flags, precedence, the ip6 "
	  "traffic class and flow label, with mirred action lists (mirror, "
	  "mirror then redirect): per-action counters, the target's received "
	  "frames and nstat under every engine", "[tc_ingress][kernel]")
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	if (sh("command -v tc") != 0) {
		WARN("SKIPPED: needs tc (apt-get install iproute2)");
		return;
	}
	Netns net;
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	Sink sink(net);
	if (!sink.ok) {
		WARN("SKIPPED: cannot make the mirred target (a veth pair into a "
		     "second netns)");
		return;
	}
	if (!settle(net)) {
		WARN("SKIPPED: IPv6 DAD did not finish in the namespace");
		return;
	}
	// act_gact and cls_matchall are not in this kernel: the lists are of
	// mirred actions (a mirror's control action is pipe, a redirect's
	// stolen), the verdicts pass (a list that ends in pipe) and redirect.
	const std::string mirror = " action mirred egress mirror dev %OUT%";
	const std::string redirect = " action mirred egress redirect dev %OUT%";
	const std::string batch =
		"qdisc add dev %DEV% clsact\n"
		"filter add dev %DEV% ingress protocol ip pref 1 u32 match ip dport 53 0xffff" +
		mirror + redirect + "\n"
		"filter add dev %DEV% ingress protocol ip pref 1 u32 match ip firstfrag "
		"match ip protocol 17 ff" + mirror + "\n"
		"filter add dev %DEV% ingress protocol ip pref 1 u32 match ip prec 0x20 0xe0 "
		"match ip df" + mirror + mirror + "\n"
		"filter add dev %DEV% ingress protocol ip pref 1 u32 match ip nofrag match "
		"ip icmp_type 8 ff" + mirror + "\n"
		"filter add dev %DEV% ingress protocol ipv6 pref 2 u32 match ip6 priority "
		"0xb8 0xfc" + mirror + "\n"
		"filter add dev %DEV% ingress protocol ipv6 pref 2 u32 match ip6 flowlabel "
		"0x12345 0xfffff" + redirect + "\n"
		"filter add dev %DEV% ingress protocol ipv6 pref 2 u32 match ip6 icmp_type "
		"128 ff match ip6 icmp_code 0 ff" + mirror + "\n";
	auto with = [&](const std::string &dev, const std::string &out) {
		return std::regex_replace(std::regex_replace(batch, std::regex("%DEV%"), dev),
					  std::regex("%OUT%"), out);
	};
	TempFile kernel_file(with(net.inside, sink.dev)), listrx_file(with("port0", "port1"));
	if (sh("ip netns exec " + net.ns + " tc -batch " + kernel_file.path) != 0) {
		WARN("SKIPPED: the kernel refused the u32 set-up (tc -batch; "
		     "CONFIG_NET_CLS_U32, CONFIG_NET_ACT_MIRRED)");
		return;
	}

	Spec prec, ping, ef, flow, ping6;
	prec.tos = 0x28;
	ping.l4 = L4::icmp;
	ping.frag = 0;
	ef.l3 = L3::ipv6;
	flow.l3 = L3::ipv6;
	flow.flow_label = 0x12345;
	ping6.l3 = L3::ipv6;
	ping6.l4 = L4::icmp;
	ping6.icmp_type = 128;
	Frame ef_frame = build(ef);
	ef_frame.set_be32(ef_frame.l2_len, 0x6b800000u); // DSCP 46 (EF)
	const std::vector<Frame> frames = {
		udp4(1, 53), udp4(1, 12000).ip4_frag(0x2000), build(prec), udp4(1, 54),
		build(ping), ef_frame, build(flow), build(ping6), udp6(1, 9), tcp4(),
		udp4(1, 9).ip4_frag(0x2001),
	};
	const unsigned repeat = 3;

	eal_init();
	rte_mempool *mp = mbuf_pool("tc_mirror_oracle_pool", 1023);
	auto before = nstat(net.ns);
	auto rx_before = rx_of(sink.ns, sink.peer);
	REQUIRE(replay(net.outside, frames, repeat));
	auto after = nstat(net.ns);
	auto rx_after = rx_of(sink.ns, sink.peer);
	auto kact = kernel_actions(net.ns, net.inside);
	REQUIRE(kact.size() == 9);
	const uint64_t krx = rx_after.first - rx_before.first;
	const uint64_t krx_bytes = rx_after.second - rx_before.second;

	const std::vector<PipelineStage> stages = {
		{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
		{"tc-ingress", {{"filters", listrx_file.path}}},
		{"l3-demux", {{"local_ipv4", "10.0.0.2/24"}, {"local_ipv6", "2001:db8::2"},
			      {"udp_ports", "none"}, {"tcp_ports", "none"},
			      {"mcast_groups", "none"}, {"trust_ip_csum_hint", "no"}}},
	};
	auto make = [&](size_t at) { return frames[at % frames.size()].to_mbuf(mp); };
	const std::vector<uint16_t> polls(frames.size() * repeat, 1);
	const char *compared[] = {
		"IpInReceives", "IpInDelivers", "UdpNoPorts", "TcpInSegs", "IpReasmReqds",
		"Ip6InReceives", "Udp6NoPorts", "Icmp6InEchos", "IcmpInEchos",
	};
	for_each_engine(2, [&](lrx_engine_kind kind, unsigned k) {
		EngineRun r = run_engine(kind, k, 32, stages, make, polls);
		uint64_t to_target = 0, to_target_bytes = 0;
		for (auto &o : r.out)
			if (o.first == lrx_next_redirect(1)) {
				to_target++;
				to_target_bytes += o.second.size();
			}
		INFO("target: kernel " << krx << " pkt " << krx_bytes << " bytes, listrx "
				       << to_target << " pkt " << to_target_bytes << " bytes");
		CHECK(krx == to_target);
		CHECK(krx_bytes == to_target_bytes);
		CHECK(r.counters[1].at("mirrored") > 0);
		// the k-th mirred action in file order is index k
		const auto &rows = r.maps.at(1).at("actions");
		REQUIRE(rows.size() == kact.size());
		int index = 0;
		for (const auto &e : rows) {
			uint64_t v[4];
			memcpy(v, e.data() + 8, sizeof(v));
			const auto &kv = kact[++index];
			INFO("action index " << index << ": kernel " << kv[0] << " pkt "
					     << kv[1] << " bytes, listrx " << v[0] << " pkt "
					     << v[1] << " bytes");
			CHECK(kv == std::vector<uint64_t>(v, v + 4));
		}
		for (const char *name : compared) {
			uint64_t kernel = after[name] - before[name];
			INFO(name << ": kernel " << kernel << ", listrx "
				  << r.counters[2].at(name));
			CHECK(kernel == r.counters[2].at(name));
		}
	});
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {

// The keys tc packs for a u32 line, as `tc filter show` prints them
// ("match VAL/MASK at [nexthdr+]OFF", in the node's order), or "refused".
std::string kernel_u32_keys(const Netns &net, const std::string &opts)
{
	const std::string at = "ip netns exec " + net.ns + " tc filter ";
	const std::string dev = " dev " + net.inside + " ingress pref 10 ";
	if (sh(at + "add" + dev + "protocol all u32 " + opts + " 2>/dev/null") != 0)
		return "refused";
	std::string out = sh_out(at + "show" + dev);
	sh(at + "del" + dev);
	std::string keys;
	std::smatch m;
	const std::regex re("match ([0-9a-f]{8})/([0-9a-f]{8}) at (nexthdr\\+)?(-?[0-9]+)");
	for (auto it = out.cbegin(); std::regex_search(it, out.cend(), m, re);
	     it = m.suffix().first)
		keys += m[1].str() + "/" + m[2].str() + "@" + m[3].str() + m[4].str() + " ";
	return keys;
}

// The same from listrx's parser (a key with any offmask prints nexthdr+,
// as u32_print_opt does).
std::string listrx_u32_keys(const std::string &opts)
{
	const std::string line = "filter add dev port0 ingress protocol all u32 " + opts + "\n";
	std::vector<lrx_tc_filter> f(2);
	char err[512];
	if (lrx_tc_parse(line.c_str(), "t", nullptr, f.data(), 2, err, sizeof(err)) != 1)
		return "refused";
	std::string keys;
	char b[64];
	for (unsigned i = 0; i < f[0].u32.nkeys; i++) {
		const lrx_tc_u32_key &k = f[0].u32.keys[i];
		snprintf(b, sizeof(b), "%08x/%08x@%s%d ", ntohl(k.val), ntohl(k.mask),
			 k.offmask ? "nexthdr+" : "", k.off);
		keys += b;
	}
	return keys;
}

} // namespace

TEST_CASE("kernel oracle: tc and listrx pack the same u32 keys for every "
	  "field of match ip and match ip6, and refuse the same lines",
	  "[tc_ingress][kernel]")
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	if (sh("command -v tc") != 0) {
		WARN("SKIPPED: needs tc (apt-get install iproute2)");
		return;
	}
	Netns net;
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	if (sh("ip netns exec " + net.ns + " tc qdisc add dev " + net.inside +
	       " clsact") != 0 ||
	    kernel_u32_keys(net, "match u32 0 0") == "refused") {
		WARN("SKIPPED: the kernel refused a u32 filter (CONFIG_NET_CLS_U32)");
		return;
	}
	const std::vector<std::string> lines = {
		"match ip src 10.1.2.3/24", "match ip dst 10.1.2.3", "match ip src 0.0.0.0/0",
		"match ip src 1.2.3.4/31 at 16", "match ip tos 0x10 0xfc",
		"match ip dsfield 0x10 0xfc", "match ip d 0x10 0xff", "match ip p 0x20 0xe0",
		"match ip prec 0x20 0xe0", "match ip precedence 0xe0 0xe0",
		"match ip ihl 0x45 0xff", "match ip protocol 17 0xff",
		"match ip nofrag match u32 0 0", "match ip firstfrag match u32 0 0",
		"match ip df match u32 0 0", "match ip mf match u32 0 0",
		"match ip mf match ip nofrag match u32 0 0", "match ip nofrag",
		"match ip df", "match ip mf classid 1:1",
		"match ip firstfrag match ip protocol 6 ff", "match ip dport 53 0xffff",
		"match ip sport 0x1000 0xf000", "match ip icmp_type 8 0xff",
		"match ip icmp_code 3 0xff", "match ip icmp_code 3 0xff at 24",
		"match ip dport 53 0xffff at nexthdr+2", "match ip dsfieldx 1 ff",
		"match ip6 src 2001:db8::1/64", "match ip6 dst 2001:db8::1/65",
		"match ip6 src ::/0", "match ip6 dst ::1/127",
		"match ip6 priority 0x10 0xff", "match ip6 priority 0xb8 0xfc",
		"match ip6 priority 0x100 0xff", "match ip6 priority 1 0x1ff",
		"match ip6 priority 1 0xff at 4",
		"match ip6 flowlabel 0x12345 0xfffff",
		"match ip6 flowlabel 0x12345 0xfffff match ip6 priority 0xab 0xff",
		"match ip6 flowlabel 0x12345 0xfffff at nexthdr+4",
		"match ip6 protocol 58 0xff", "match ip6 nexthdr 17 0xff",
		"match ip6 dport 7 0xffff", "match ip6 sport 7 0xffff at 40",
		"match ip6 icmp_type 128 0xff", "match ip6 icmp_code 0 0xff",
		"match ip6 icmp_code 3 0xff at 44", "match ip6 icmp_type 1 ff "
		"match ip6 icmp_code 4 ff", "match ip6 prio 1 0xff",
		"match ip6 flowlabel 0x12345", "match ip6 protocol 6 ff match ip6 protocol 17 ff",
	};
	unsigned refused = 0;
	for (const auto &l : lines) {
		std::string k = kernel_u32_keys(net, l), x = listrx_u32_keys(l);
		INFO(l << "\n  tc:     " << k << "\n  listrx: " << x);
		CHECK(k == x);
		refused += k == "refused";
	}
	CHECK(refused > 5);
	CHECK(refused < lines.size() / 2);
}

TEST_CASE("kernel oracle: a cls_bpf program whose map is filled from outside "
	  "(bpftool map update; listrx: map_init) drops the same frames",
	  "[tc_ingress][kernel]")
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
		"filter add dev %DEV% ingress protocol ip pref 1 bpf da obj " +
		test_prog("tc_port_block") + " sec tc\n";
	auto with_dev = [&](const std::string &dev) {
		return std::regex_replace(batch, std::regex("%DEV%"), dev);
	};
	TempFile kernel_file(with_dev(net.inside)), listrx_file(with_dev("port0"));
	if (sh("ip netns exec " + net.ns + " tc -batch " + kernel_file.path) != 0) {
		WARN("SKIPPED: the kernel refused the clsact / cls_bpf set-up "
		     "(tc -batch)");
		return;
	}
	// the control plane: ports 53 and 123 blocked, 9 present but 0
	const std::vector<std::pair<uint16_t, uint32_t>> entries = {
		{53, 1}, {123, 1}, {9, 0}};
	auto prog = nlohmann::json::parse(
		sh_out("ip netns exec " + net.ns + " tc -j filter show dev " +
		       net.inside + " ingress"), nullptr, false);
	int blocked_id = -1;
	for (auto &f : prog) {
		if (!f.contains("options") || !f["options"].contains("prog"))
			continue;
		auto p = nlohmann::json::parse(
			sh_out("bpftool -j prog show id " +
			       std::to_string(f["options"]["prog"]["id"].get<int>())),
			nullptr, false);
		for (auto &mid : p["map_ids"]) {
			auto m = nlohmann::json::parse(
				sh_out("bpftool -j map show id " +
				       std::to_string(mid.get<int>())), nullptr, false);
			if (m["name"] == "blocked")
				blocked_id = mid.get<int>();
		}
	}
	REQUIRE(blocked_id > 0);
	std::string map_init = "blocked:";
	for (auto &e : entries) {
		char cmd[160];
		// key and value host order (x86: little endian), as map_init
		snprintf(cmd, sizeof(cmd), "bpftool map update id %d key %u %u value "
			 "%u 0 0 0", blocked_id, e.first & 0xff, e.first >> 8, e.second);
		REQUIRE(sh(cmd) == 0);
		map_init += std::to_string(e.first) + "=" + std::to_string(e.second) + ",";
	}
	map_init.pop_back();

	const std::vector<Frame> frames = {
		udp4(1, 53), udp4(1, 123), udp4(1, 9), udp4(1, 54), tcp4(TCP_ACK, 1, 53),
		udp6(1, 53), udp4(1, 53).ip4_frag(0x2000),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)), udp4(1, 123).append(30),
	};
	const unsigned repeat = 3;

	eal_init();
	rte_mempool *mp = mbuf_pool("tc_block_oracle_pool", 1023);
	auto before = nstat(net.ns);
	REQUIRE(replay(net.outside, frames, repeat));
	auto after = nstat(net.ns);
	auto kmap = kernel_map(net.ns, net.inside); // both maps: slots 0..3

	StageInstance bm("build-meta", {{"host_mac", "02:00:00:00:00:02"}});
	StageInstance tc("tc-ingress", {{"filters", listrx_file.path},
					{"map_init", map_init}});
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
		if (std::string(info.name) != "block_stats")
			continue;
		uint32_t cursor = 0, key;
		uint64_t value;
		while (tc.desc()->map_next(tc.ctx(), i, &cursor, &key, &value))
			lmap[key] = value;
	}
	// kernel_map reads every map of the program: block_stats' slots,
	// and the blocked entries (keys 53, 123, 9) beside them
	for (uint32_t k = 0; k < 3; k++) {
		INFO("block_stats[" << k << "]: kernel " << kmap[k] << ", listrx " << lmap[k]);
		CHECK(kmap[k] == lmap[k]);
	}
	// 53, 123, 123 with a longer payload, a first fragment to 53 (the
	// program reads no fragment bits)
	CHECK(lmap[1] == repeat * 4);
	CHECK(tc.counter("act_shot") == lmap[1]);
	const char *compared[] = {
		"IpInReceives", "IpInDelivers", "UdpNoPorts", "TcpInSegs",
		"IpReasmReqds", "Ip6InReceives", "Udp6NoPorts",
	};
	for (const char *name : compared) {
		uint64_t kernel = after[name] - before[name];
		INFO(name << ": kernel " << kernel << ", listrx " << l3.counter(name));
		CHECK(kernel == l3.counter(name));
	}
	LRX_REQUIRE_POOL_FULL(mp);
}
