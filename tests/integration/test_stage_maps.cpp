// SPDX-License-Identifier: BSD-3-Clause
// The stages' maps decoded in the summary: netfilter's chain counters as
// `iptables -L -v -x` counts them and tc-ingress's filter counters as
// `tc -s filter show` does, with named fields ("pkts", "bytes") beside the
// raw bytes in the JSON, columns in the text; an eBPF map with BTF decoded
// by its types, as `bpftool map dump` does.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "run_binary.h"
#ifdef LRX_XDP_TEST_PROGS_DIR
#include "../xdp/progs/map_typed.h"
#endif

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

std::string write_file(const std::string &name, const std::string &text)
{
	std::string path = lrx_test::scratch_path(name);
	FILE *f = std::fopen(path.c_str(), "w");
	REQUIRE(f);
	std::fputs(text.c_str(), f);
	std::fclose(f);
	return path;
}

json run_json(const std::string &name, std::vector<std::string> own, std::string *text)
{
	std::string js = lrx_test::scratch_path(name + ".json");
	std::vector<std::string> argv{listrx_bin(), "--no-huge", "--no-pci", "--no-shconf", "-m",
				      "512", "--file-prefix", lrx_test::file_prefix(name), "--vdev",
				      "net_synth0,profile=udp64", "--", "--packets", "2000",
				      "--stats-period", "0", "--json", js};
	argv.insert(argv.end(), own.begin(), own.end());
	auto r = run_program(argv);
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	*text = r.out;
	return json::parse(lrx_test::read_file(js));
}

const json &map_named(const json &s, const std::string &name)
{
	for (const auto &m : s["maps"])
		if (m["name"] == name)
			return m;
	FAIL("no map " << name);
	return s;
}

// the u64 at byte 8 * i of an entry's value bytes ("0a 00 ...")
uint64_t value_u64(const json &entry, unsigned i)
{
	std::string hex = entry["value"];
	uint64_t v = 0;
	for (unsigned b = 0; b < 8; b++)
		v |= std::stoull(hex.substr((8 * i + b) * 3, 2), nullptr, 16) << (8 * b);
	return v;
}

} // namespace

TEST_CASE("netfilter chain counters: pkts and bytes by name, as iptables -L -v -x",
	  "[binary][netfilter][maps]")
{
	// udp64 sends UDP to port 9 (docs/net_synth.md): the rule matches all
	std::string rules = write_file("maps.rules", "*filter\n:INPUT ACCEPT [0:0]\n"
						     "-A INPUT -p udp --dport 9 -j ACCEPT\n"
						     "-A INPUT -p tcp -j DROP\nCOMMIT\n");
	std::string text;
	json s = run_json("nf-maps", {"--set", "stage.l3-demux.netfilter=" + rules}, &text);
	const json &m = map_named(s, "filter/INPUT");
	REQUIRE(m["entries"].size() == 3);
	uint64_t delivered = 0;
	for (const auto &e : m["entries"]) {
		INFO(e.dump());
		REQUIRE(e.contains("pkts"));
		REQUIRE(e.contains("bytes"));
		CHECK(e["pkts"] == value_u64(e, 0));
		CHECK(e["bytes"] == value_u64(e, 1));
		CHECK(e["formatted"]["key"]["rule"] == e["key_int"]);
		CHECK(e["formatted"]["value"]["pkts"] == e["pkts"]);
		delivered += e["pkts"].get<uint64_t>();
	}
	const json &rule1 = m["entries"][1];
	CHECK(rule1["key_int"] == 1);
	CHECK(rule1["pkts"].get<uint64_t>() > 0);
	CHECK(rule1["bytes"].get<uint64_t>() >= 28 * rule1["pkts"].get<uint64_t>());
	CHECK(delivered == rule1["pkts"]); // nothing reached rule 2 or the policy
	// the text: columns of exact numbers, the zero rows left out
	std::string head = "l3-demux filter/INPUT (lcore ";
	size_t at = text.find(head);
	REQUIRE(at != std::string::npos);
	std::string block = text.substr(at, 400);
	INFO(block);
	CHECK(block.find("(2 zero, not shown)\n       rule      pkts     bytes\n") !=
	      std::string::npos);
	char row[128];
	std::snprintf(row, sizeof(row), "\n  %9u %9llu %9llu\n", 1u,
		      (unsigned long long)rule1["pkts"].get<uint64_t>(),
		      (unsigned long long)rule1["bytes"].get<uint64_t>());
	CHECK(block.find(row) != std::string::npos);
}

TEST_CASE("tc filter counters: runs, pkts and bytes by name", "[binary][tc][maps]")
{
	std::string filters = write_file(
		"maps.tc", "filter add dev all ingress protocol ip pref 1 flower ip_proto udp "
			   "dst_port 9 action pass\n"
			   "filter add dev all ingress protocol ip pref 2 flower ip_proto tcp "
			   "action drop\n");
	std::string text;
	json s = run_json("tc-maps", {"--pipeline", "build-meta,tc-ingress,l3-demux", "--set",
				      "stage.tc-ingress.filters=" + filters},
			  &text);
	const json &m = map_named(s, "filters");
	REQUIRE(m["entries"].size() == 2);
	for (const auto &e : m["entries"]) {
		INFO(e.dump());
		CHECK(e["runs"] == value_u64(e, 0));
		CHECK(e["pkts"] == value_u64(e, 1));
		CHECK(e["bytes"] == value_u64(e, 2));
		CHECK(e["formatted"]["key"]["filter"] == e["key_int"]);
	}
	CHECK(m["entries"][0]["pkts"] == s["rx_packets"]);
	CHECK(m["entries"][1]["pkts"] == 0);
	CHECK(text.find("tc-ingress filters (lcore ") != std::string::npos);
	CHECK(text.find("     filter      runs      pkts     bytes\n") != std::string::npos);
}

TEST_CASE("tc action lists: mirred mirror's copies leave by the port, the "
	  "originals go on; the actions map counts each action",
	  "[binary][tc][maps]")
{
	std::string filters = write_file(
		"mirror.tc", "filter add dev all ingress protocol ip pref 1 flower ip_proto udp "
			     "dst_port 9 action mirred egress mirror dev port0 action pass\n");
	std::string text;
	json s = run_json("tc-mirror", {"--pipeline", "build-meta,tc-ingress,l3-demux", "--set",
					"stage.tc-ingress.filters=" + filters},
			  &text);
	const json &m = map_named(s, "actions");
	REQUIRE(m["entries"].size() == 2);
	const uint64_t rx = s["rx_packets"].get<uint64_t>();
	REQUIRE(rx > 0);
	for (const auto &e : m["entries"]) {
		INFO(e.dump());
		CHECK(e["formatted"]["key"]["filter"] == 0);
		CHECK(e["pkts"] == rx);
		CHECK(e["dropped"] == 0);
	}
	// every copy left by port0 as the stage's redirect; every original
	// went on to l3-demux
	const json *tc = nullptr;
	for (const auto &st : s["stages"])
		if (st["name"] == "tc-ingress")
			tc = &st;
	REQUIRE(tc != nullptr);
	CHECK((*tc)["counters"]["mirrored"] == rx);
	CHECK((*tc)["counters"]["mirror_failed"] == 0);
	CHECK((*tc)["redirected"] == rx);
	CHECK((*tc)["counters"]["act_ok"] == rx);
	CHECK(s["tx_packets"].get<uint64_t>() >= rx);
	// the copies are the stages' made packets, each with a fate:
	// rx + made = tx + delivered + dropped + merged + held
	CHECK(s["made"] == rx);
	CHECK(rx + s["made"].get<uint64_t>() ==
	      s["tx_packets"].get<uint64_t>() + s["delivered"].get<uint64_t>() +
		      s["dropped"].get<uint64_t>() + s["merged_segments"].get<uint64_t>() +
		      s["held"].get<uint64_t>());
	CHECK(text.find(" made ") != std::string::npos);
}

#ifdef LRX_XDP_TEST_PROGS_DIR
TEST_CASE("an eBPF map with BTF: key and value decoded by their types, as bpftool map dump",
	  "[binary][xdp][maps]")
{
	std::string prog = std::string(LRX_XDP_TEST_PROGS_DIR) + "/map_typed.bpf.o";
	std::string text;
	json s = run_json("btf-maps", {"--xdp-prog", prog}, &text);
	const json &m = map_named(s, "typed");
	REQUIRE(m["entries"].size() == 1); // udp64: one protocol and port
	const json &e = m["entries"][0];
	INFO(e.dump());
	// the raw bytes, read through the C types the program was built with
	std::vector<uint8_t> kb, vb;
	for (size_t i = 0; i < e["key"].get<std::string>().size(); i += 3)
		kb.push_back((uint8_t)std::stoul(e["key"].get<std::string>().substr(i, 2), nullptr, 16));
	for (size_t i = 0; i < e["value"].get<std::string>().size(); i += 3)
		vb.push_back(
			(uint8_t)std::stoul(e["value"].get<std::string>().substr(i, 2), nullptr, 16));
	REQUIRE(kb.size() == sizeof(typed_key));
	REQUIRE(vb.size() == sizeof(typed_value));
	typed_key k;
	typed_value v;
	std::memcpy(&k, kb.data(), sizeof(k));
	std::memcpy(&v, vb.data(), sizeof(v));
	const json &fk = e["formatted"]["key"], &fv = e["formatted"]["value"];
	CHECK(fk["proto"] == 17);
	CHECK(fk["dport"] == 9);
	CHECK(fk["tag"] == "udp");
	CHECK(fv["pkts"] == s["rx_packets"]);
	CHECK(fv["pkts"] == v.pkts);
	CHECK(fv["bytes"] == v.bytes);
	CHECK(fv["delta"] == v.delta);
	CHECK(fv["sizes"] == json::array({v.sizes[0], v.sizes[1]}));
	CHECK(fv["ip.ttl"] == v.ip.ttl);
	CHECK(fv["ip.flags"] == 5);
	CHECK(fv["ip.version"] == 4);
	CHECK(fv["ip.last"] == 1);
	CHECK(fv["pad"] == json::array({0, 0}));
	// the value's fields beside the bytes too
	CHECK(e["pkts"] == v.pkts);
	CHECK(e["ip.version"] == 4);
	CHECK(text.find("      proto     spare     dport       tag      pkts") != std::string::npos);
}
#endif
