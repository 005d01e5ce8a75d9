// SPDX-License-Identifier: BSD-3-Clause
// Pipeline harness: arbitrary frames and poll boundaries through the real
// engines and stages (build-meta, GRO, l3-demux, XDP with every built-in
// and every shipped eBPF object, native and generic), the way the poll
// loop drives them (dataplane/engine/pipeline.h: process, poll_end, drain).
//
// Input: byte 0 picks one of the pipelines built at start-up; then records
//   [ctl u8][len u16][hint u8][len frame bytes]
// ctl bit 0: end the poll after this frame (napi_complete_done), bit 1:
// with budget_used, bit 2: frame arrives as an mbuf chain with segments of
// 16 << (ctl >> 4 & 3) bytes, bit 3: ingress port 1 instead of 0.
// hint: the NIC's RX hints (checksum good/bad, RSS hash, stripped VLAN,
// packet type), as a driver would set them.
//
// Invariants, checked after every poll and every input (abort otherwise):
//  - every packet that enters leaves exactly once: each input packet's
//    first mbuf reaches the sink exactly once, as a packet or as a segment
//    of a packet GRO merged it into (or reassembly chained it into: a
//    fragment discarded with its queue comes as a drop), or is one of the
//    fragments chained into a datagram whose trim cut it off again (UDP's
//    pskb_trim_rcsum to a UDP length shorter than the datagram: l3-demux's
//    merged bounds those), and no
//    mbuf is twice in one sink
//    (trailing segments of a chain may be freed by a trim, as pskb_trim
//    does: the pool check covers them);
//  - the sink holds only final fates (deliver, drop with a known reason,
//    TX, redirect), never CONSUMED;
//  - after drain and freeing the sink, every mempool is full (no leak, no
//    double free).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <cstdlib>
#include <unordered_set>
#include <vector>

#include <rte_malloc.h>

#include "fuzz_common.h"
#include "stage_conf.h"

extern "C" {
#include "meta.h"
#include "pipeline.h"
#include "sink.h"
}

#ifndef FUZZ_XDP_PROG_DIR
#define FUZZ_XDP_PROG_DIR ""
#endif

namespace {

constexpr uint16_t kBurst = 32;
constexpr size_t kMaxFrame = 2048;

struct StageSpec {
	const char *name;
	std::vector<std::pair<std::string, std::string>> keys;
};
struct PipelineSpec {
	std::string engine;
	std::vector<StageSpec> stages;
};

struct Built {
	std::string label;
	lrx_pipeline *p;
};

std::vector<Built> pipelines;
rte_mempool *mp;
lrx_sink *sink;
lrx_test::StageConfs stage_confs; // the stage configs the pipelines were built from

std::vector<PipelineSpec> pipeline_specs()
{
	const StageSpec meta{"build-meta", {{"pool_slots", "2048"}}};
	const StageSpec gro{"gro", {}};
	const StageSpec l3{"l3-demux", {}};
	std::vector<PipelineSpec> v = {
		{"burst", {meta, gro, l3}},
		{"packet", {meta, gro, l3}},
		{"hybrid:2", {{"build-meta", {{"pool_slots", "2048"}, {"clear", "bulk"}}},
			      {"gro", {{"udp_gro", "on"}, {"flush_age_us", "0"}}},
			      {"l3-demux", {{"martians", "accept"}, {"icmp_echo", "reply"},
					    {"udp_ports", "53,2000"},
					    {"ipfrag_clock", "polls"},
					    {"ipfrag_time", "2"},
					    {"local_ipv4", "10.0.0.2/24"},
					    {"mcast_groups", "239.1.1.1,ff05::1%1"}}}}},
		{"static", {{"build-meta", {{"pool_slots", "2048"}, {"alloc", "packet"},
					    {"hints", "none"}}},
			    {"rte-gro", {{"mode", "heavy"}}},
			    {"l3-demux", {{"dispatch", "direct"},
					  {"trust_ip_csum_hint", "no"},
					  {"ipfrag_high_thresh", "20000"},
					  {"ipv6_mip6", "no"},
					  {"rp_filter", "1"},
					  {"rp_filter_ports", "1:2"},
					  {"ipv4_routes", "10.9.0.0/16%1+0.0.0.0/0%0"},
					  {"drop_unicast_in_l2_multicast", "any"}}}}},
		{"burst", {meta, l3, {"xdp", {{"mode", "generic"}, {"prog", "tx"}}}}},
		{"graph", {meta, gro, l3}},
		// conntrack on both families: nf_defrag_ipv4/6 before PREROUTING
		{"packet", {meta, {"l3-demux", {{"conntrack", "on"}, {"icmp_echo", "reply"},
						{"ipfrag_clock", "polls"},
						{"nf_conntrack_frag6_timeout", "2"},
						{"nf_conntrack_frag6_high_thresh", "20000"},
						{"local_ipv4", "10.0.0.2/24"}}}}},
		// no default route, sockets and the established table: the
		// ICMP errors' handlers and replies without a route
		{"packet", {meta, {"l3-demux", {{"local_ipv4", "10.0.0.2/24"},
						{"local_ipv6", "2001:db8::2/64"},
						{"udp_sockets", "10.0.0.2:53,[::]:2000"},
						{"tcp_ehash", "64"},
						{"ipv4_routes", "subnets"},
						{"ipv6_routes", "subnets"}}}}},
	};
	for (const char *b : {"drop", "pass", "tx", "read", "touch", "abort",
			      "redirect:1", "udp-port-drop:53,2000"})
		v.push_back({"burst", {{"xdp", {{"prog", b}}}, meta, gro, l3}});
	const std::string dir = FUZZ_XDP_PROG_DIR;
	if (!dir.empty())
		for (const char *o : {"xdp_drop", "xdp_pass", "xdp_tx_swap",
				      "xdp_port_filter", "xdp_proto_count"})
			for (const char *exec : {"jit", "interp"}) {
				std::string path = "bpf:" + dir + "/" + o + ".bpf.o";
				v.push_back({"burst", {{"xdp", {{"prog", path}, {"exec", exec}}},
						       meta, l3}});
				v.push_back({"packet", {meta, {"xdp", {{"prog", path},
						{"exec", exec}, {"mode", "generic"}}}, l3}});
			}
	return v;
}

void build_pipelines()
{
	for (const PipelineSpec &ps : pipeline_specs()) {
		lrx_pipeline_conf c;
		std::memset(&c, 0, sizeof(c));
		if (lrx_engine_parse(ps.engine.c_str(), &c.engine, &c.hybrid_k) != 0)
			lrx_fuzz::fail("engine %s", ps.engine.c_str());
		c.burst = kBurst;
		c.stats_level = LRX_STATS_COUNTERS;
		c.socket_id = (int)rte_socket_id();
		c.lcore_id = rte_lcore_id();
		std::string label = ps.engine + ":";
		for (const StageSpec &ss : ps.stages) {
			lrx_stage_conf &sc = c.stages[c.n_stages++];
			if (!lrx_stage_find(ss.name))
				lrx_fuzz::fail("stage %s not registered", ss.name);
			label += std::string(" ") + ss.name;
			lrx_test::KeyValues keys;
			for (auto &kv : ss.keys) {
				keys.emplace_back(kv.first, kv.second);
				label += " " + kv.first + "=" + kv.second;
			}
			stage_confs.set(sc, lrx_stage_find(ss.name), keys);
		}
		lrx_pipeline *p = nullptr;
		char err[512] = "";
		int rc = lrx_pipeline_create(&c, &p, err, sizeof(err));
		if (rc != 0) {
			// the graph engine may be unavailable; everything else must build
			std::fprintf(stderr, "fuzz_pipeline: %s: %s\n", label.c_str(), err);
			if (c.engine != LRX_ENGINE_GRAPH)
				std::abort();
			continue;
		}
		pipelines.push_back({label, p});
	}
	std::fprintf(stderr, "fuzz_pipeline: %zu pipelines\n", pipelines.size());
}

// NIC hints (what a PMD sets in the RX descriptor fields of the mbuf)
void apply_hints(rte_mbuf *m, uint8_t hint, uint32_t word)
{
	static const uint64_t ip_csum[4] = {0, RTE_MBUF_F_RX_IP_CKSUM_GOOD,
		RTE_MBUF_F_RX_IP_CKSUM_BAD, RTE_MBUF_F_RX_IP_CKSUM_NONE};
	static const uint64_t l4_csum[4] = {0, RTE_MBUF_F_RX_L4_CKSUM_GOOD,
		RTE_MBUF_F_RX_L4_CKSUM_BAD, RTE_MBUF_F_RX_L4_CKSUM_NONE};
	static const uint32_t ptypes[4] = {0,
		RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP,
		RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP,
		RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV6 | RTE_PTYPE_L4_TCP};
	m->ol_flags = ip_csum[hint & 3] | l4_csum[hint >> 2 & 3];
	if (hint & 0x10) {
		m->ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
		m->hash.rss = word;
	}
	if (hint & 0x20) {
		m->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
		m->vlan_tci = (uint16_t)(word >> 16);
	}
	m->packet_type = ptypes[hint >> 6];
}

rte_mbuf *frame_to_mbuf(const uint8_t *data, size_t len, bool chain,
			size_t seg_size)
{
	if (!chain)
		seg_size = kMaxFrame;
	rte_mbuf *head = nullptr;
	size_t off = 0;
	do {
		rte_mbuf *m = rte_pktmbuf_alloc(mp);
		if (!m)
			lrx_fuzz::fail("mbuf pool ran dry (input too large?)");
		if (lrx_meta_dynfield_offset >= 0)
			lrx_meta_set(m, nullptr); // dynfields survive free/alloc
		size_t k = std::min(seg_size, len - off);
		if (k)
			std::memcpy(rte_pktmbuf_append(m, (uint16_t)k), data + off, k);
		off += k;
		if (!head)
			head = m;
		else if (rte_pktmbuf_chain(head, m) != 0)
			lrx_fuzz::fail("chain too long");
	} while (off < len);
	return head;
}

std::unordered_set<const rte_mbuf *> outstanding; // input heads not yet out
std::vector<const rte_mbuf *> seen;

// Within one sink, no mbuf twice (across sinks a freed mbuf may be
// allocated again; a double free there shows in the pool check).
void check_seen()
{
	std::sort(seen.begin(), seen.end());
	if (std::adjacent_find(seen.begin(), seen.end()) != seen.end())
		lrx_fuzz::fail("an mbuf left the pipeline twice in one poll");
	seen.clear();
}

// Accounts for and frees what the sink holds.
void take_sink()
{
	for (uint32_t i = 0; i < sink->n; i++) {
		lrx_next_t next = sink->nexts[i];
		switch (lrx_next_kind(next)) {
		case LRX_NEXT_CONTINUE:
		case LRX_NEXT_DELIVER:
		case LRX_NEXT_TX:
		case LRX_NEXT_REDIRECT:
			break;
		case LRX_NEXT_DROP:
			if (lrx_next_arg(next) >= LRX_DROP_MAX)
				lrx_fuzz::fail("drop with unknown reason %u",
					       lrx_next_arg(next));
			break;
		default:
			lrx_fuzz::fail("sink got next %#x", next);
		}
		for (const rte_mbuf *s = sink->pkts[i]; s; s = s->next) {
			seen.push_back(s);
			outstanding.erase(s);
		}
	}
	check_seen();
	lrx_sink_discard(sink);
}

// Fragments the pipeline's reassembly chained into a datagram so far (its
// "merged"): the input packets that may not reach the sink as themselves
// (above).
uint64_t frags_absorbed(lrx_pipeline *p)
{
	uint64_t sum = 0;
	for (unsigned s = 0; s < lrx_pipeline_stage_count(p); s++)
		if (std::strcmp(lrx_pipeline_stage_name(p, s), "l3-demux") == 0)
			lrx_pipeline_stage_counters(
				p, s,
				[](void *arg, const lrx_stage_counter *c, uint64_t value) {
					if (c->role == LRX_COUNTER_MERGED)
						*(uint64_t *)arg += value;
				},
				&sum);
	return sum;
}

} // namespace

// at exit, before LeakSanitizer's check: what the stages allocate with
// malloc is referenced only from their rte_malloc'd contexts, which it does
// not scan, so a pipeline left alive would read as a leak
static void destroy_pipelines()
{
	for (Built &b : pipelines)
		lrx_pipeline_destroy(b.p);
	pipelines.clear();
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	lrx_fuzz::eal_init("fuzz_pipeline");
	mp = lrx_fuzz::pool("fuzz_pipeline", 4095, kMaxFrame + RTE_PKTMBUF_HEADROOM);
	sink = static_cast<lrx_sink *>(rte_zmalloc("fuzz_sink", sizeof(*sink), 64));
	build_pipelines();
	std::atexit(destroy_pipelines);
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lrx_fuzz::Reader in(data, size);
	const Built &b = pipelines[in.u8() % pipelines.size()];
	rte_mbuf *burst[kBurst];
	uint16_t n = 0;
	outstanding.clear();
	const uint64_t absorbed_before = frags_absorbed(b.p);

	while (!in.empty()) {
		uint8_t ctl = in.u8();
		size_t want = in.u16() % (kMaxFrame + 1);
		uint8_t hint = in.u8();
		const uint8_t *frame;
		size_t len = in.take(want, &frame);
		rte_mbuf *m = frame_to_mbuf(frame, len, ctl & 4,
					    (size_t)16 << (ctl >> 4 & 3));
		apply_hints(m, hint, (uint32_t)len * 2654435761u);
		m->port = (ctl & 8) ? 1 : 0;
		outstanding.insert(m);
		burst[n++] = m;
		if (n == kBurst || (ctl & 1)) {
			lrx_pipeline_process(b.p, burst, n, sink);
			n = 0;
			take_sink();
		}
		if (ctl & 1) {
			lrx_pipeline_poll_end(b.p, ctl & 2, sink);
			take_sink();
		}
	}
	if (n) {
		lrx_pipeline_process(b.p, burst, n, sink);
		take_sink();
	}
	lrx_pipeline_poll_end(b.p, false, sink);
	take_sink();
	// drain stops when the sink is full: repeat until nothing comes out
	do {
		lrx_pipeline_drain(b.p, sink);
		n = (uint16_t)std::min<uint32_t>(sink->n, UINT16_MAX);
		take_sink();
	} while (n != 0);
	lrx_fuzz::require_pools_full(b.label.c_str());
	// a freed fragment's mbuf may also come back from the pool as a
	// later input: at most as many as were absorbed are missing
	const uint64_t absorbed = frags_absorbed(b.p) - absorbed_before;
	if (outstanding.size() > absorbed)
		lrx_fuzz::fail("%s: %zu packets entered and never reached the sink "
			       "(%lu fragments freed or chained by reassembly)",
			       b.label.c_str(), outstanding.size(),
			       (unsigned long)absorbed);
	return 0;
}
