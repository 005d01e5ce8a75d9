// SPDX-License-Identifier: BSD-3-Clause
// GRO stage: Linux dev_gro_receive semantics (net/core/gro.c).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <map>
#include <random>
#include <unistd.h>

#include <rte_mbuf_dyn.h>

#include "gro_harness.h"

extern "C" {
#include "gro/gro.h"
}

using namespace gro_test;
namespace fr = lrx_test::frames;

namespace {

rte_mempool *pool()
{
	return lrx_test::mbuf_pool("gro_pool", 8191);
}

// Per-flow (source port) concatenation of TCP/UDP payloads.
// Each flow's byte stream: TCP in sequence order (a segment that leaves
// GRO early overtakes its flow's held packet, as in the kernel), UDP in
// output order.
std::map<uint16_t, std::vector<uint8_t>> payload_by_flow(const std::vector<Out> &outs)
{
	std::vector<const Out *> order;
	for (const Out &o : outs)
		order.push_back(&o);
	std::stable_sort(order.begin(), order.end(), [](const Out *a, const Out *b) {
		return a->sport == b->sport && a->proto == 6 && b->proto == 6 &&
		       (int32_t)(a->seq - b->seq) < 0;
	});
	std::map<uint16_t, std::vector<uint8_t>> r;
	for (const Out *o : order)
		r[o->sport].insert(r[o->sport].end(), o->payload.begin(),
				   o->payload.end());
	return r;
}
std::map<uint16_t, std::vector<uint8_t>> payload_by_flow(const std::vector<Frame> &in)
{
	std::vector<Out> outs;
	for (const Frame &f : in) {
		rte_mbuf *m = f.to_mbuf(pool());
		outs.push_back(decode(m));
		rte_pktmbuf_free(m);
	}
	return payload_by_flow(outs);
}

// Checks every merged output is a well-formed packet.
void check_headers(const std::vector<Out> &outs)
{
	for (const Out &o : outs) {
		INFO("output seq " << o.seq << " segs " << o.segs);
		if ((o.proto != 6 && o.proto != 17) || o.segs < 2)
			continue; // only merged packets are rewritten
		if (!o.v6)
			REQUIRE(o.ip_csum_ok);
		if (o.ip_len_field != 0 && o.ip_len_field != 40)
			REQUIRE(o.ip_len_field + o.l2_len == o.bytes.size());
	}
}

// Runs specs through a fresh GRO (process_one), flushes with budget
// unused; returns decoded outputs.
std::vector<Out> run_specs(const std::vector<Spec> &specs, const Keys &keys = {},
			   std::map<std::string, uint64_t> *counters = nullptr)
{
	std::vector<Out> outs;
	{
		Gro g(keys);
		REQUIRE(g.st != nullptr);
		REQUIRE(g.init_rc == 0);
		std::vector<Frame> frames = build_all(specs);
		REQUIRE(g.one(to_mbufs(frames, pool())));
		g.flush(false);
		REQUIRE(g.held() == 0);
		outs = decode_all(g.out);
		check_headers(outs);
		// payload conservation per flow
		REQUIRE(payload_by_flow(outs) == payload_by_flow(frames));
		if (counters)
			for (const char *n : {"merged", "bad_csum", "not_eligible", "held", "segments_in",
					      "flush_evict", "flush_flags",
					      "flush_size", "flush_mismatch",
					      "flush_short", "flush_poll_end",
					      "flush_not_eligible", "udp_merged"})
				(*counters)[n] = g.counter(n);
	}
	LRX_REQUIRE_POOL_FULL(pool());
	return outs;
}

} // namespace

TEST_CASE("gro: registered with its keys and counters", "[gro]")
{
	lrx_test::eal_init();
	const lrx_stage *st = lrx_stage_find("gro");
	REQUIRE(st != nullptr);
	REQUIRE(st->release != nullptr);
	REQUIRE(st->flush != nullptr);
	REQUIRE(st->held != nullptr);
	Gro bad(Keys{{"max_size", "0"}});
	REQUIRE(bad.init_rc == -EINVAL);
	REQUIRE(std::string(bad.err).find("max_size") != std::string::npos);
	Gro bad2(Keys{{"udp_gro", "maybe"}});
	REQUIRE(bad2.init_rc == -EINVAL);
	REQUIRE(std::string(bad2.err).find("'udp_gro' = 'maybe'") != std::string::npos);
}

TEST_CASE("gro: in-order stream merges into 64 KB super-packets (44 x 1460)",
	  "[gro]")
{
	std::map<std::string, uint64_t> c;
	auto outs = run_specs(tcp_stream(100, 1460), {}, &c);
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{44, 44, 12});
	// kernel rule: p->len + len >= 65536 ends the packet at 44 segments
	REQUIRE(outs[0].ip_len_field == 20 + 20 + 44 * 1460);
	REQUIRE(outs[0].seq == 1000);
	REQUIRE(outs[1].seq == 1000 + 44 * 1460);
	REQUIRE(outs[2].seq == 1000 + 88 * 1460);
	REQUIRE(outs[2].ip_len_field == 40 + 12 * 1460);
	REQUIRE(c["merged"] == 97);
	REQUIRE(c["flush_size"] == 2);
	REQUIRE(c["flush_poll_end"] == 1);
}

TEST_CASE("gro: merged packet is an mbuf chain with checksum state and gso",
	  "[gro]")
{
	{
		Gro g;
		auto frames = build_all(tcp_stream(5, 1000));
		REQUIRE(g.one(to_mbufs(frames, pool())));
		REQUIRE(g.out.empty());
		REQUIRE(g.held() == 1);
		g.flush(false);
		REQUIRE(g.out.size() == 1);
		rte_mbuf *m = g.out[0];
		REQUIRE(m->nb_segs == 5);
		REQUIRE(m->pkt_len == 14 + 40 + 5000);
		REQUIRE(rte_pktmbuf_data_len(m) == 14 + 40 + 1000);
		// appended segments carry payload only
		REQUIRE(rte_pktmbuf_data_len(m->next) == 1000);
		REQUIRE((m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) ==
			RTE_MBUF_F_RX_L4_CKSUM_GOOD);
		REQUIRE(m->tso_segsz == 1000);
		Out o = decode(m);
		REQUIRE(o.ip_csum_ok);
		REQUIRE(o.ip_len_field == 40 + 5000);
		// tcp4_gro_complete: check = ~tcp_v4_check(len, s, d, 0), the
		// pseudo-header sum: the full checksum over the packet with it
		// is the complement of the sum over TCP header + payload
		const uint8_t *l3 = &o.bytes[14];
		uint8_t ph[12];
		memcpy(ph, l3 + 12, 8);
		ph[8] = 0;
		ph[9] = 6;
		ph[10] = (uint8_t)(5020 >> 8);
		ph[11] = (uint8_t)(5020 & 0xff);
		uint16_t pseudo = (uint16_t)~fr::inet_checksum(ph, 12);
		uint16_t field = (uint16_t)(o.bytes[34 + 16] << 8 | o.bytes[34 + 17]);
		REQUIRE(field == pseudo);
		REQUIRE(g.counter("packets_out") == 1);
		REQUIRE(g.counter("segments_in") == 5);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

// build-meta's metadata of an untagged IPv4 frame whose checksums the NIC
// verified, with the NIC's hash
static struct lrx_meta verified_ipv4_meta(uint32_t hash)
{
	struct lrx_meta m = {};
	m.protocol = 0x0800;
	m.mac_len = 14;
	m.network_offset = 14;
	m.ip_summed = LRX_CHECKSUM_UNNECESSARY;
	m.l3_csum_state = LRX_CHECKSUM_UNNECESSARY;
	m.hash = hash;
	return m;
}

TEST_CASE("gro: metadata from build-meta is read and gso fields written",
	  "[gro]")
{
	REQUIRE(lrx_meta_register() == 0);
	std::vector<struct lrx_meta> metas(4);
	{
		Gro g;
		auto frames = build_all(tcp_stream(4, 1200));
		auto mbufs = to_mbufs(frames, pool());
		for (size_t i = 0; i < mbufs.size(); i++) {
			metas[i] = verified_ipv4_meta(0x1234);
			lrx_meta_set(mbufs[i], &metas[i]);
		}
		// the NIC said good: a corrupt checksum is then not looked at
		// (skb_gro_checksum_validate skips CHECKSUM_UNNECESSARY)
		rte_pktmbuf_mtod(mbufs[2], uint8_t *)[34 + 16] ^= 0x55;
		REQUIRE(g.one(mbufs));
		g.flush(false);
		REQUIRE(g.out.size() == 1);
		REQUIRE(g.out[0]->nb_segs == 4);
		REQUIRE(metas[0].gso_size == 1200);
		REQUIRE(metas[0].gso_segs == 4);
		REQUIRE(metas[0].ip_summed == LRX_CHECKSUM_UNNECESSARY);
		REQUIRE(metas[0].len == 40 + 4800);
		REQUIRE(g.counter("bad_csum") == 0);
		for (rte_mbuf *m : g.out)
			for (rte_mbuf *seg = m; seg; seg = seg->next)
				lrx_meta_set(seg, nullptr);
	}
	// a NULL meta pointer means "build-meta did not run": GRO parses
	{
		Gro g;
		auto mbufs = to_mbufs(build_all(tcp_stream(3, 1000)), pool());
		for (rte_mbuf *m : mbufs)
			lrx_meta_set(m, nullptr);
		REQUIRE(g.one(mbufs));
		g.flush(false);
		REQUIRE(seg_counts(decode_all(g.out)) == std::vector<uint16_t>{3});
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

// Flush rules: six contiguous 1000-byte segments s0..s5; `mutate` changes
// s2 (and maybe later ones); the expected output is, for each output
// packet in order, its segment count, IPv4 total length (and so frame
// length) and TCP seq (kernel's tcp_gro_receive / inet_gro_receive
// outcome), with per-flow payload conserved.
struct RuleCase {
	const char *name;
	std::function<void(std::vector<Spec> &)> mutate;
	std::vector<uint16_t> expect;
	std::vector<uint32_t> ip_lens; // IPv4 total length of each output
	std::vector<uint32_t> seqs;    // TCP seq of each output
	const char *counter;   // a counter that must be non-zero (or nullptr)
	bool corrupt_l4 = false;  // s2's TCP checksum made wrong
	bool corrupt_ip = false;  // s2's IPv4 header checksum made wrong
	Keys keys = {};           // of the gro stage
	size_t corrupt_out = 0;   // where the corrupted s2 leaves
};

TEST_CASE("gro: flush rules (table)", "[gro]")
{
	const std::vector<uint8_t> ts1 = {1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2};
	const std::vector<uint8_t> ts2 = {1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 2};
	const std::vector<uint8_t> ts1_16 = {1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2, 1, 1, 1, 1};
	auto shift_from = [](std::vector<Spec> &v, size_t from, int delta) {
		for (size_t i = from; i < v.size(); i++) {
			v[i].seq = (uint32_t)((int64_t)v[i].seq + delta);
			v[i].payload = seq_payload(v[i].seq, v[i].payload.size());
		}
	};
	// ip_lens: IPv4 total length of each output packet (20 + 20 TCP [+ 12
	// timestamp option] + payload; the frame is 14 bytes more); seqs: its
	// TCP sequence number. Input s_i: seq 1000 + 1000 i, 1000 bytes.
	const std::vector<uint32_t> split_2_1_3_lens = {2040, 1040, 3040};
	const std::vector<uint32_t> split_2_1_3_seqs = {1000, 3000, 4000};
	std::vector<RuleCase> cases = {
		{"in order", [](auto &) {}, {6}, {6040}, {1000}, nullptr},
		{"PSH merges then flushes", [](auto &v) { v[2].tcp_flags |= fr::TCP_PSH; },
		 {3, 3}, {3040, 3040}, {1000, 4000}, "flush_flags"},
		{"FIN merges then flushes", [](auto &v) { v[2].tcp_flags |= fr::TCP_FIN; },
		 {3, 3}, {3040, 3040}, {1000, 4000}, "flush_flags"},
		{"RST flushes held, passes", [](auto &v) { v[2].tcp_flags |= fr::TCP_RST; },
		 {2, 1, 3}, split_2_1_3_lens, split_2_1_3_seqs, "flush_flags"},
		{"SYN flushes held, passes", [](auto &v) { v[2].tcp_flags |= fr::TCP_SYN; },
		 {2, 1, 3}, split_2_1_3_lens, split_2_1_3_seqs, "flush_flags"},
		{"URG flushes held, passes", [](auto &v) { v[2].tcp_flags |= fr::TCP_URG; },
		 {2, 1, 3}, split_2_1_3_lens, split_2_1_3_seqs, "flush_flags"},
		{"CWR flushes held, passes (Linux 6.18)",
		 [](auto &v) { v[2].tcp_flags |= 0x80; }, {2, 1, 3},
		 split_2_1_3_lens, split_2_1_3_seqs, "flush_flags"},
		// s2..s5 at 4000..7000
		{"seq gap", [&](auto &v) { shift_from(v, 2, 1000); }, {2, 4},
		 {2040, 4040}, {1000, 4000}, "flush_mismatch"},
		// arrival 1000 2000 4000 3000 5000 6000
		{"out of order segment", [&](auto &v) { std::swap(v[2], v[3]); },
		 {2, 1, 1, 2}, {2040, 1040, 1040, 2040}, {1000, 4000, 3000, 5000},
		 "flush_mismatch"},
		// arrival 1000 2000 2000 4000 5000 6000
		{"retransmit", [](auto &v) { v[2] = v[1]; v[2].ip_id = 102; },
		 {2, 1, 3}, split_2_1_3_lens, {1000, 2000, 4000}, "flush_mismatch"},
		{"ack change", [](auto &v) { for (size_t i = 2; i < 6; i++) v[i].ack = 999; },
		 {2, 4}, {2040, 4040}, {1000, 3000}, "flush_mismatch"},
		{"window change", [](auto &v) { v[2].window = 1000; }, {2, 1, 3},
		 split_2_1_3_lens, split_2_1_3_seqs, "flush_mismatch"},
		{"option change (timestamp)",
		 [&](auto &v) {
			 for (auto &s : v) s.tcp_options = ts1;
			 v[2].tcp_options = ts2;
		 },
		 {2, 1, 3}, {2052, 1052, 3052}, split_2_1_3_seqs, "flush_mismatch"},
		{"same timestamps merge", [&](auto &v) { for (auto &s : v) s.tcp_options = ts1; },
		 {6}, {6052}, {1000}, nullptr},
		// each 4-byte word of the 12-byte block counts (the first: kind
		// and length, the last: the echo reply)
		{"option change (first word)",
		 [&](auto &v) {
			 for (auto &s : v) s.tcp_options = ts1;
			 v[2].tcp_options = {1, 1, 9, 10, 0, 0, 0, 1, 0, 0, 0, 2};
		 },
		 {2, 1, 3}, {2052, 1052, 3052}, split_2_1_3_seqs, "flush_mismatch"},
		{"option change (timestamp echo reply)",
		 [&](auto &v) {
			 for (auto &s : v) s.tcp_options = ts1;
			 v[2].tcp_options = {1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 3};
		 },
		 {2, 1, 3}, {2052, 1052, 3052}, split_2_1_3_seqs, "flush_mismatch"},
		// a block of another length: 16 bytes (timestamp + 4 NOPs), the
		// last word differs in s2; the same block merges
		{"16-byte options, change in the last word",
		 [&](auto &v) {
			 for (auto &s : v) s.tcp_options = ts1_16;
			 v[2].tcp_options.back() = 0;
		 },
		 {2, 1, 3}, {2056, 1056, 3056}, split_2_1_3_seqs, "flush_mismatch"},
		{"16-byte options merge", [&](auto &v) { for (auto &s : v) s.tcp_options = ts1_16; },
		 {6}, {6056}, {1000}, nullptr},
		{"TTL change", [](auto &v) { v[2].ttl = 5; }, {2, 1, 3},
		 split_2_1_3_lens, split_2_1_3_seqs, "flush_mismatch"},
		{"TOS change", [](auto &v) { v[2].tos = 4; }, {2, 1, 3},
		 split_2_1_3_lens, split_2_1_3_seqs, "flush_mismatch"},
		{"DF change", [](auto &v) { v[2].frag = 0; }, {2, 1, 3},
		 split_2_1_3_lens, split_2_1_3_seqs, "flush_mismatch"},
		{"IP ID jump", [](auto &v) { v[2].ip_id = 9000; }, {2, 1, 3},
		 split_2_1_3_lens, split_2_1_3_seqs, "flush_mismatch"},
		{"fixed IP ID with DF merges",
		 [](auto &v) { for (auto &s : v) s.ip_id = 7; }, {6}, {6040}, {1000},
		 nullptr},
		{"fixed IP ID without DF merges too (Linux 6.18)",
		 [](auto &v) { for (auto &s : v) { s.ip_id = 7; s.frag = 0; } },
		 {6}, {6040}, {1000}, nullptr},
		{"fixed IP ID then a step",
		 [](auto &v) { for (auto &s : v) s.ip_id = 7; v[3].ip_id = 8; },
		 {3, 1, 2}, {3040, 1040, 2040}, {1000, 4000, 5000}, "flush_mismatch"},
		{"incrementing IP ID then fixed",
		 [](auto &v) { v[3].ip_id = v[2].ip_id; }, {3, 1, 2},
		 {3040, 1040, 2040}, {1000, 4000, 5000}, "flush_mismatch"},
		{"incrementing IP ID without DF merges",
		 [](auto &v) { for (auto &s : v) s.frag = 0; }, {6}, {6040}, {1000},
		 nullptr},
		// s2 carries 4 bytes of IP options: passed on unchanged and at
		// once (inet_gro_receive "goto out"), ahead of the held s0+s1,
		// which s3 then flushes (a seq gap for it)
		{"IP options: leaves early, ahead of its held packet",
		 [](auto &v) { v[2].ip4_options = {1, 1, 1, 0}; }, {1, 2, 3},
		 {1044, 2040, 3040}, {3000, 1000, 4000}, "not_eligible"},
		{"IP options, early_order=flow: held flushed first",
		 [](auto &v) { v[2].ip4_options = {1, 1, 1, 0}; }, {2, 1, 3},
		 {2040, 1044, 3040}, split_2_1_3_seqs, "flush_not_eligible", false, false,
		 {{"early_order", "flow"}}},
		// s2 with the reserved fragment bit: inet_gro_receive's flush
		// (frag_off & ~IP_DF); tcp_gro_receive ends the held packet,
		// s2 passes
		{"reserved fragment bit: flushes its held packet, passes",
		 [](auto &v) { v[2].frag = 0xc000; }, {2, 1, 3},
		 split_2_1_3_lens, split_2_1_3_seqs, "flush_not_eligible"},
		// s2: 1200 bytes at 3000, then 4200 5200 6200: s2 heads a packet
		// with mss 1200 that s3 (shorter) ends
		{"segment larger than mss",
		 [&](auto &v) {
			 v[2].payload = seq_payload(v[2].seq, 1200);
			 shift_from(v, 3, 200);
		 },
		 {2, 2, 2}, {2040, 2240, 2040}, {1000, 3000, 5200}, "flush_short"},
		// s2: 500 bytes at 3000, then 3500 4500 5500
		{"short segment merges then flushes",
		 [&](auto &v) {
			 v[2].payload = seq_payload(v[2].seq, 500);
			 shift_from(v, 3, -500);
		 },
		 {3, 3}, {2540, 3040}, {1000, 3500}, "flush_short"},
		// s2: no payload at 3000, then 3000 4000 5000
		{"pure ACK flushes and passes",
		 [&](auto &v) {
			 v[2].payload.clear();
			 shift_from(v, 3, -1000);
		 },
		 {2, 1, 3}, {2040, 40, 3040}, {1000, 3000, 3000}, "flush_mismatch"},
		{"bad TCP checksum: leaves early, counted", [](auto &) {},
		 {1, 2, 3}, {1040, 2040, 3040}, {3000, 1000, 4000}, "bad_csum", true},
		{"bad TCP checksum, early_order=flow", [](auto &) {},
		 {2, 1, 3}, split_2_1_3_lens, split_2_1_3_seqs, "bad_csum", true, false,
		 {{"early_order", "flow"}}, 1},
		{"bad IP header checksum: leaves early", [](auto &) {},
		 {1, 2, 3}, {1040, 2040, 3040}, {3000, 1000, 4000}, "not_eligible", false,
		 true},
	};
	for (const RuleCase &rc : cases) {
		SECTION(rc.name)
		{
			auto specs = tcp_stream(6, 1000);
			rc.mutate(specs);
			std::vector<Out> outs;
			std::map<std::string, uint64_t> c;
			if (rc.corrupt_l4 || rc.corrupt_ip) {
				Gro g(rc.keys);
				auto frames = build_all(specs);
				if (rc.corrupt_l4)
					frames[2].l4_corrupt_csum();
				else
					frames[2].ip4_corrupt_csum();
				REQUIRE(g.one(to_mbufs(frames, pool())));
				g.flush(false);
				outs = decode_all(g.out);
				REQUIRE(payload_by_flow(outs) == payload_by_flow(frames));
				// the bad one is passed on unchanged
				REQUIRE(outs[rc.corrupt_out].bytes == frames[2].data);
				c["bad_csum"] = g.counter("bad_csum");
				c["not_eligible"] = g.counter("not_eligible");
			} else {
				outs = run_specs(specs, rc.keys, &c);
			}
			INFO(rc.name);
			REQUIRE(seg_counts(outs) == rc.expect);
			std::vector<uint32_t> ip_lens, frame_lens, seqs, want_frames;
			for (const Out &o : outs) {
				ip_lens.push_back(o.ip_len_field);
				frame_lens.push_back((uint32_t)o.bytes.size());
				seqs.push_back(o.seq);
			}
			for (uint32_t l : rc.ip_lens)
				want_frames.push_back(14 + l);
			REQUIRE(ip_lens == rc.ip_lens);
			REQUIRE(frame_lens == want_frames);
			REQUIRE(seqs == rc.seqs);
			if (rc.counter)
				REQUIRE(c[rc.counter] >= 1);
			LRX_REQUIRE_POOL_FULL(pool());
		}
	}
}

TEST_CASE("gro: IPv6 TCP merges; traffic class and hop limit flush", "[gro]")
{
	auto specs = tcp_stream(6, 1000, 1000, 1000, true);
	auto outs = run_specs(specs);
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{6});
	REQUIRE(outs[0].v6);
	REQUIRE(outs[0].ip_len_field == 40 + 20 + 6000);

	specs[2].hop_limit = 3;
	REQUIRE(seg_counts(run_specs(specs)) == std::vector<uint16_t>{2, 1, 3});
	specs = tcp_stream(6, 1000, 1000, 1000, true);
	specs[3].flow_label = 5; // flow label is part of the flow
	REQUIRE(seg_counts(run_specs(specs)) == std::vector<uint16_t>{3, 1, 2});
	// a hop-by-hop header: pulled (ipv6_gro_pull_exthdrs), merged when
	// it is the same in every segment
	specs = tcp_stream(3, 1000, 1000, 1000, true);
	for (auto &s : specs)
		s.ip6_hop_by_hop = true;
	std::map<std::string, uint64_t> c;
	outs = run_specs(specs, {}, &c);
	INFO("not_eligible " << c["not_eligible"] << " merged " << c["merged"] << " held " << c["held"] << " in " << c["segments_in"] << " mismatch " << c["flush_mismatch"] << " poll_end " << c["flush_poll_end"]);
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{3});
}

TEST_CASE("gro: VLAN tags are part of the flow", "[gro]")
{
	auto a = tcp_stream(3, 1000, 1000, 1000);
	auto b = tcp_stream(3, 1000, 1000, 1000);
	for (auto &s : a)
		s.vlans = {10};
	for (auto &s : b)
		s.vlans = {20};
	// same 5-tuple on two VLANs: two flows, each merged
	std::vector<Spec> mixed = {a[0], b[0], a[1], b[1], a[2], b[2]};
	std::vector<Out> outs;
	{
		Gro g;
		REQUIRE(g.one(to_mbufs(build_all(mixed), pool())));
		g.flush(false);
		outs = decode_all(g.out);
	}
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{3, 3});
	REQUIRE(outs[0].l2_len == 18);
	REQUIRE(outs[0].bytes[15] == 10); // VID of the first flow
	REQUIRE(outs[1].bytes[15] == 20);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: at most MAX_GRO_SKBS per bucket, oldest evicted", "[gro]")
{
	{
		Gro g;
		std::vector<rte_mbuf *> mbufs;
		// 9 flows with the same RSS hash: one bucket
		for (uint16_t f = 0; f < 9; f++) {
			rte_mbuf *m = fr::build(tcp_spec(1, 100, (uint16_t)(2000 + f)))
					      .to_mbuf(pool());
			m->ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
			m->hash.rss = 0x5;
			mbufs.push_back(m);
		}
		REQUIRE(g.one(std::vector<rte_mbuf *>(mbufs.begin(), mbufs.begin() + 8)));
		REQUIRE(g.out.empty());
		REQUIRE(g.held() == MAX_GRO_SKBS);
		REQUIRE(g.one({mbufs[8]}));
		REQUIRE(g.out.size() == 1);
		REQUIRE(decode(g.out[0]).sport == 2000); // the oldest
		REQUIRE(g.counter("flush_evict") == 1);
		g.flush(false);
		REQUIRE(g.out.size() == 9);
		// the rest leave oldest first
		for (uint16_t f = 1; f < 9; f++)
			REQUIRE(decode(g.out[f]).sport == 2000 + f);
	}
	{
		// different hashes: 8 buckets x 8 = 64 flows without eviction
		Gro g;
		std::vector<rte_mbuf *> mbufs;
		for (uint16_t f = 0; f < 64; f++) {
			rte_mbuf *m = fr::build(tcp_spec(1, 100, (uint16_t)(3000 + f)))
					      .to_mbuf(pool());
			m->ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
			m->hash.rss = f;
			mbufs.push_back(m);
		}
		REQUIRE(g.burst(mbufs));
		REQUIRE(g.held() == 64);
		REQUIRE(g.counter("flush_evict") == 0);
		g.flush(false);
		REQUIRE(g.out.size() == 64);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: the bucket is the NIC's hash; none is bucket 0 "
	  "(hash=nic), or a hash of the flow (hash=compute)", "[gro]")
{
	// 10 flows, no hash from the NIC, two rounds of one segment each
	auto round = [](std::vector<fr::Frame> &v, uint32_t seq) {
		for (uint16_t f = 0; f < 10; f++) {
			Spec s = tcp_spec(seq, 1000, (uint16_t)(4000 + f));
			v.push_back(fr::build(s));
		}
	};
	std::vector<fr::Frame> frames;
	round(frames, 1000);
	round(frames, 2000);
	for (const char *hash : {"nic", "compute"}) {
		INFO("hash=" << hash);
		Gro g(Keys{{"hash", hash}});
		REQUIRE(g.init_rc == 0);
		REQUIRE(g.one(to_mbufs(frames, pool())));
		g.flush(false);
		auto outs = decode_all(g.out);
		const std::string h = hash;
		if (h == "nic") {
			// one bucket of 8: each new flow evicts the oldest, so no
			// segment finds its flow held (gro_flush_oldest)
			CHECK(g.counter("merged") == 0);
			CHECK(g.counter("flush_evict") == 12);
			CHECK(outs.size() == 20);
		} else {
			CHECK(g.counter("merged") == 10);
			CHECK(outs.size() == 10);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: IPv6 extension headers are pulled and must be the same "
	  "(ipv6_gro_pull_exthdrs)", "[gro]")
{
	auto stream = [](const std::vector<std::vector<uint8_t>> &ext, uint8_t first) {
		std::vector<fr::Frame> v;
		auto specs = tcp_stream(ext.size(), 1000, 1000, 1000, true);
		for (size_t i = 0; i < specs.size(); i++) {
			fr::Frame f = fr::build(specs[i]);
			v.push_back(ext[i].empty() ? f : fr::ip6_insert_ext(f, first, ext[i]));
		}
		return v;
	};
	const auto dst = fr::ip6_ext(6, {1, 4, 0, 0, 0, 0});
	const auto dst2 = fr::ip6_ext(6, {0x1e, 2, 0, 0, 1, 0});
	const auto rt = fr::ip6_ext(6, {0, 0, 0, 0, 0, 0});
	const auto hbh_dst = [] {
		auto h = fr::ip6_ext(60, {1, 4, 0, 0, 0, 0});
		auto d = fr::ip6_ext(6, {1, 4, 0, 0, 0, 0});
		h.insert(h.end(), d.begin(), d.end());
		return h;
	}();
	struct Case {
		const char *name;
		std::vector<fr::Frame> frames;
		std::vector<uint16_t> segs;
	};
	const Case cases[] = {
		{"destination options", stream({dst, dst, dst, dst}, 60), {4}},
		{"routing header, segments left 0", stream({rt, rt, rt}, 43), {3}},
		{"hop-by-hop then destination options", stream({hbh_dst, hbh_dst, hbh_dst}, 0), {3}},
		{"other option bytes: another flow", stream({dst, dst, dst2, dst2}, 60), {2, 2}},
		{"no header, then one: other flows", stream({{}, {}, dst, dst}, 60), {2, 2}},
	};
	for (const Case &c : cases) {
		INFO(c.name);
		Gro g;
		REQUIRE(g.one(to_mbufs(c.frames, pool())));
		g.flush(false);
		auto outs = decode_all(g.out);
		check_headers(outs);
		CHECK(seg_counts(outs) == c.segs);
		CHECK(payload_by_flow(outs) == payload_by_flow(c.frames));
		// ipv6_gro_complete: the payload length covers the headers
		const fr::Frame &first = c.frames.back();
		const Out &last = outs.back();
		CHECK(last.ip_len_field ==
		      (uint32_t)(first.l3_len + (last.segs - 1) * 1000));
		if (last.segs > 1) {
			// tcp6_gro_complete: ~tcp_v6_check(len, saddr, daddr, 0),
			// the pseudo-header sum over the TCP length
			const size_t l4 = last.bytes.size() - last.payload.size() - 20;
			const uint32_t tcp_len = (uint32_t)(last.bytes.size() - l4);
			uint32_t sum = 0;
			for (size_t i = 0; i < 32; i += 2)
				sum += (uint32_t)(last.bytes[14 + 8 + i] << 8 | last.bytes[14 + 9 + i]);
			sum += 6 + tcp_len;
			while (sum >> 16)
				sum = (sum & 0xffff) + (sum >> 16);
			CHECK((uint32_t)(last.bytes[l4 + 16] << 8 | last.bytes[l4 + 17]) == sum);
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: clock=polls ages held packets by polls, not by time",
	  "[gro]")
{
	{
		// 3 us = 3 polls: held through two budget-used poll ends (ages
		// 1, 2), flushed by age at the third, however long they took
		Gro g(Keys{{"flush_age_us", "3"}, {"clock", "polls"}});
		REQUIRE(g.burst(to_mbufs(build_all(tcp_stream(4, 1000)), pool())));
		g.flush(true);
		usleep(5000); // wall-clock time does not age them
		g.flush(true);
		REQUIRE(g.out.empty());
		REQUIRE(g.held() == 1);
		g.flush(true);
		REQUIRE(seg_counts(decode_all(g.out)) == std::vector<uint16_t>{4});
		REQUIRE(g.counter("flush_age") == 1);
		REQUIRE(g.held() == 0);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: end of poll with budget used flushes only old packets",
	  "[gro]")
{
	{
		Gro g; // flush_age_us = 1000 (one jiffy at HZ=1000)
		REQUIRE(g.burst(to_mbufs(build_all(tcp_stream(4, 1000)), pool())));
		g.flush(true);
		REQUIRE(g.out.empty()); // younger than a jiffy: kept
		REQUIRE(g.held() == 1);
		usleep(3000);
		auto more = tcp_stream(8, 1000);
		more.erase(more.begin(), more.begin() + 4);
		// a second flow arrives now: young
		auto other = tcp_stream(2, 1000, 1000, 4000);
		more.insert(more.end(), other.begin(), other.end());
		REQUIRE(g.burst(to_mbufs(build_all(more), pool())));
		g.flush(true);
		// the old flow (8 segments held across polls) left, the young
		// one stays
		REQUIRE(seg_counts(decode_all(g.out)) == std::vector<uint16_t>{8});
		REQUIRE(g.counter("flush_age") == 1);
		REQUIRE(g.held() == 1);
		g.flush(false); // budget not used: everything
		REQUIRE(g.out.size() == 2);
		REQUIRE(g.counter("flush_poll_end") == 1);
	}
	{
		Gro g(Keys{{"flush_age_us", "0"}}); // HZ < 1000: flush all
		REQUIRE(g.burst(to_mbufs(build_all(tcp_stream(4, 1000)), pool())));
		g.flush(true);
		REQUIRE(g.out.size() == 1);
	}
	{
		// gro_flush_timeout: a poll that did not use its budget keeps
		// young packets too
		Gro g(Keys{{"flush_timeout_us", "2000"}});
		REQUIRE(g.burst(to_mbufs(build_all(tcp_stream(4, 1000)), pool())));
		g.flush(false);
		REQUIRE(g.out.empty());
		usleep(4000);
		g.flush(false);
		REQUIRE(g.out.size() == 1);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: BIG TCP max_size lets packets grow past 64 KB", "[gro]")
{
	auto outs = run_specs(tcp_stream(100, 1460), {{"max_size", "131072"}});
	// 40 + 1460 * n < 131072 → 89 segments; tot_len 0 above 64 KB
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{89, 11});
	REQUIRE(outs[0].ip_len_field == 0);
	REQUIRE(outs[1].ip_len_field == 40 + 11 * 1460);
	// a smaller gro_max_size
	outs = run_specs(tcp_stream(10, 1000), {{"max_size", "4000"}});
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{3, 3, 3, 1});
}

TEST_CASE("gro: UDP passes through unless udp_gro=on", "[gro]")
{
	auto udp = [](uint32_t i, size_t len) {
		Spec s;
		s.l4 = fr::L4::udp;
		s.sport = 7000;
		s.dport = 7001;
		s.ip_id = (uint16_t)(10 + i);
		s.payload = seq_payload(i * 1000, len);
		s.default_payload = false;
		s.pad_to = 0;
		return s;
	};
	std::vector<Spec> specs;
	for (uint32_t i = 0; i < 5; i++)
		specs.push_back(udp(i, 1000));
	specs.push_back(udp(5, 400));  // shorter: merged, then the end
	specs.push_back(udp(6, 1000));
	specs.push_back(udp(7, 1200)); // longer: ends the packet, starts one
	specs.push_back(udp(8, 1200));

	std::vector<Frame> frames = build_all(specs);
	{
		Gro g;
		REQUIRE(g.one(to_mbufs(frames, pool())));
		g.flush(false);
		REQUIRE(g.out.size() == frames.size());
		auto got = g.bytes();
		for (size_t i = 0; i < frames.size(); i++)
			REQUIRE(got[i] == frames[i].data); // unchanged, in order
	}
	std::map<std::string, uint64_t> c;
	auto outs = run_specs(specs, {{"udp_gro", "on"}}, &c);
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{6, 1, 2});
	REQUIRE(outs[0].ip_len_field == 20 + 8 + 5400);
	// udp_gro_complete: uh->len is the merged length
	REQUIRE((outs[0].bytes[34 + 4] << 8 | outs[0].bytes[34 + 5]) == 8 + 5400);
	REQUIRE(c["udp_merged"] == 6);

	// UDP_GRO_CNT_MAX
	specs.clear();
	for (uint32_t i = 0; i < 70; i++)
		specs.push_back(udp(i, 100));
	outs = run_specs(specs, {{"udp_gro", "on"}});
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{64, 6});
}

TEST_CASE("gro: non-TCP traffic passes through unchanged and in order",
	  "[gro]")
{
	auto tcp = tcp_stream(4, 1000);
	Spec icmp;
	icmp.l4 = fr::L4::icmp;
	Spec udp;
	udp.l4 = fr::L4::udp;
	std::vector<Frame> in = {fr::build(tcp[0]), fr::arp_request(1, 2),
				 fr::build(tcp[1]), fr::build(icmp),
				 fr::build(udp), fr::build(tcp[2]),
				 fr::udp6(), fr::build(tcp[3])};
	Spec frag = tcp[0];
	frag.frag = 0x2000; // MF: a fragment
	frag.sport = 999;
	in.push_back(fr::build(frag));
	{
		Gro g;
		REQUIRE(g.one(to_mbufs(in, pool())));
		// everything but the TCP flow left already, in arrival order
		auto got = g.bytes();
		REQUIRE(got.size() == 5);
		REQUIRE(got[0] == in[1].data);
		REQUIRE(got[1] == in[3].data);
		REQUIRE(got[2] == in[4].data);
		REQUIRE(got[3] == in[6].data);
		REQUIRE(got[4] == in[8].data);
		REQUIRE(g.counter("not_eligible") == 5);
		g.flush(false);
		REQUIRE(g.out.size() == 6);
		REQUIRE(g.out[5]->nb_segs == 4);
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: padded frames are not merged (tot_len != frame length)",
	  "[gro]")
{
	auto specs = tcp_stream(4, 2);
	for (auto &s : specs)
		s.pad_to = 60; // 54 + 2 bytes, padded to 60
	auto outs = run_specs(specs);
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{1, 1, 1, 1});
}

namespace {

// A mixed stream: several flows, random PSH, gaps, pure ACKs, UDP, ICMP.
std::vector<Spec> random_stream(unsigned seed, size_t n)
{
	std::mt19937 rng(seed);
	std::map<uint16_t, uint32_t> next_seq;
	std::map<uint16_t, uint16_t> next_id;
	std::vector<Spec> r;
	for (size_t i = 0; i < n; i++) {
		unsigned kind = rng() % 20;
		if (kind == 0) {
			Spec s;
			s.l4 = fr::L4::icmp;
			r.push_back(s);
			continue;
		}
		if (kind == 1) {
			Spec s;
			s.l4 = fr::L4::udp;
			s.sport = 9000;
			r.push_back(s);
			continue;
		}
		uint16_t sport = (uint16_t)(1000 + rng() % 12);
		uint32_t &seq = next_seq[sport];
		if (seq == 0)
			seq = 1000;
		size_t len = (rng() % 8 == 0) ? rng() % 1400 : 1400;
		Spec s = tcp_spec(seq, len, sport, sport % 3 == 0);
		s.ip_id = next_id[sport]++;
		if (rng() % 15 == 0)
			s.tcp_flags |= fr::TCP_PSH;
		if (rng() % 40 == 0) {
			seq += 3000; // a gap: the segment after a loss
			s.seq = seq;
			s.payload = seq_payload(seq, len);
		}
		seq += (uint32_t)len;
		r.push_back(s);
	}
	return r;
}

} // namespace

TEST_CASE("gro: property: payload per flow conserved, nothing lost or "
	  "duplicated; process_one == process_burst",
	  "[gro]")
{
	for (unsigned seed = 1; seed <= 6; seed++) {
		INFO("seed " << seed);
		auto specs = random_stream(seed, 1500);
		auto frames = build_all(specs);
		std::vector<std::vector<uint8_t>> by_one, by_burst;
		uint64_t merged_one = 0, merged_burst = 0;
		{
			Gro g;
			REQUIRE(g.one(to_mbufs(frames, pool())));
			g.flush(false);
			REQUIRE(g.held() == 0);
			by_one = g.bytes();
			auto outs = decode_all(g.out);
			check_headers(outs);
			REQUIRE(payload_by_flow(outs) == payload_by_flow(frames));
			merged_one = g.counter("merged");
			REQUIRE(g.counter("segments_in") == frames.size());
			REQUIRE(g.counter("packets_out") == g.out.size());
			REQUIRE(g.counter("segments_in") ==
				g.counter("packets_out") + merged_one);
		}
		for (size_t burst : {1, 7, 32, 256}) {
			Gro g;
			REQUIRE(g.burst(to_mbufs(frames, pool()), burst));
			g.flush(false);
			by_burst = g.bytes();
			merged_burst = g.counter("merged");
			REQUIRE(by_burst == by_one);
			REQUIRE(merged_burst == merged_one);
		}
		REQUIRE(merged_one > frames.size() / 3);
		LRX_REQUIRE_POOL_FULL(pool());
	}
}

namespace {

// Streams of the shapes the in-order fast path takes (TCP options of any
// length: the timestamp block Linux senders use, none, an 8-byte block)
// and the events that must send a segment the whole way: PSH, a gap, a
// retransmit, a reordered pair, TTL/TOS/window/option changes, options
// of another length, an IP ID jump, short segments, pure ACKs; one flow
// with fixed IP IDs, two flows with one hash, several sharing a bucket.
std::vector<Spec> random_ts_stream(unsigned seed, size_t n)
{
	static const std::vector<uint8_t> shapes[3] = {
		{1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2}, // NOP,NOP,timestamp
		{},                                    // none
		{1, 1, 1, 1, 2, 4, 5, 0xb4},           // NOPs, MSS
	};
	std::mt19937 rng(seed);
	std::map<uint16_t, uint32_t> next_seq;
	std::map<uint16_t, uint16_t> next_id;
	std::vector<Spec> r;
	for (size_t i = 0; i < n; i++) {
		uint16_t sport = (uint16_t)(2000 + rng() % 6);
		uint32_t &seq = next_seq[sport];
		if (seq == 0)
			seq = 1000;
		unsigned ev = rng() % 40;
		size_t len = ev == 0 ? rng() % 1000 : 1200;
		Spec sp = tcp_spec(seq, len, sport);
		sp.tcp_options = shapes[sport % 3];
		sp.ip_id = sport == 2005 ? 7 : next_id[sport]++;
		switch (ev) {
		case 1: sp.tcp_flags |= fr::TCP_PSH; break;
		case 2: sp.ttl = 63; break;
		case 3: sp.tos = 0x10; break;
		case 4: sp.window = 1000; break;
		case 5: // other option bytes (none to change: a block of 4)
			if (sp.tcp_options.empty())
				sp.tcp_options = {1, 1, 1, 1};
			else
				sp.tcp_options[7] = 9;
			break;
		case 11: sp.tcp_options = shapes[(sport + 1) % 3]; break;
		case 6: sp.ip_id = (uint16_t)(sp.ip_id + 50); break;
		case 7: sp.payload.clear(); break;
		case 8: // a gap: the segment after a loss
			seq += 2400;
			sp.seq = seq;
			sp.payload = seq_payload(seq, len);
			break;
		default: break;
		}
		seq += (uint32_t)sp.payload.size();
		r.push_back(sp);
		if (ev == 9 && r.size() >= 2) // the previous segment again
			r.push_back(r[r.size() - 2]);
		if (ev == 10 && r.size() >= 2) // two swapped
			std::swap(r[r.size() - 1], r[r.size() - 2]);
	}
	return r;
}

// One pass over frames in bursts of 32 with a poll end (budget used)
// after each, the last poll not using it; how the NIC described each
// mbuf is set by `hint`.
template <typename Hint>
Gro &run_hinted(Gro &g, const std::vector<Frame> &frames, Hint hint)
{
	auto mbufs = to_mbufs(frames, pool());
	for (size_t i = 0; i < mbufs.size(); i++) {
		REQUIRE(mbufs[i] != nullptr);
		hint(mbufs[i], frames[i], i);
	}
	for (size_t i = 0; i < mbufs.size(); i += 32) {
		std::vector<rte_mbuf *> b(mbufs.begin() + (long)i,
					  mbufs.begin() + (long)std::min(i + 32, mbufs.size()));
		REQUIRE(g.burst(b, 32));
		g.flush(true);
	}
	g.flush(false);
	return g;
}

} // namespace

TEST_CASE("gro: a verified in-order segment merges (fast path) exactly as "
	  "through the whole path",
	  "[gro]")
{
	static const char *const counters[] = {
		"segments_in", "packets_out", "merged", "held", "flush_flags",
		"flush_short", "flush_mismatch", "flush_size", "flush_not_eligible",
		"flush_evict", "flush_poll_end", "flush_age", "bad_csum", "not_eligible"};
	lrx_test::eal_init();
	REQUIRE(lrx_meta_register() == 0);
	const Keys keys = {{"clock", "polls"}};
	for (unsigned seed = 1; seed <= 4; seed++) {
		INFO("seed " << seed);
		auto frames = build_all(random_ts_stream(seed, 2000));
		auto hash_of = [](const Frame &f) {
			uint16_t sport = (uint16_t)(f.data[34] << 8 | f.data[35]);
			// 2000 and 2001 share a hash; the rest share buckets
			return 0x1001u * (sport == 2001 ? 2000u : sport);
		};
		// the whole path: the NIC gave the hash only, GRO verifies the
		// checksums (all good)
		Gro slow(keys);
		run_hinted(slow, frames, [&](rte_mbuf *m, const Frame &f, size_t) {
			m->ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
			m->hash.rss = hash_of(f);
		});
		REQUIRE(slow.counter("merged") > frames.size() / 2);
		// the NIC verified both checksums: the fast path's case
		Gro fast(keys);
		run_hinted(fast, frames, [&](rte_mbuf *m, const Frame &f, size_t) {
			m->ol_flags |= RTE_MBUF_F_RX_RSS_HASH | RTE_MBUF_F_RX_IP_CKSUM_GOOD |
				       RTE_MBUF_F_RX_L4_CKSUM_GOOD;
			m->hash.rss = hash_of(f);
		});
		// the same through build-meta's metadata
		std::vector<struct lrx_meta> metas(frames.size());
		Gro meta(keys);
		run_hinted(meta, frames, [&](rte_mbuf *m, const Frame &f, size_t i) {
			metas[i] = verified_ipv4_meta(hash_of(f));
			lrx_meta_set(m, &metas[i]);
		});
		for (rte_mbuf *m : meta.out)
			for (rte_mbuf *seg = m; seg; seg = seg->next)
				lrx_meta_set(seg, nullptr);
		// as booleans: a failure prints no megabytes of frames
		const bool fast_same = fast.bytes() == slow.bytes();
		const bool meta_same = meta.bytes() == slow.bytes();
		const bool counts_same =
			seg_counts(decode_all(fast.out)) == seg_counts(decode_all(slow.out));
		REQUIRE(fast_same);
		REQUIRE(meta_same);
		REQUIRE(counts_same);
		for (const char *c : counters) {
			INFO(c);
			REQUIRE(fast.counter(c) == slow.counter(c));
			REQUIRE(meta.counter(c) == slow.counter(c));
		}
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: pool exhausted at the end: chains freed exactly once",
	  "[gro]")
{
	// a small pool used up entirely by held segments
	rte_mempool *mp = lrx_test::mbuf_pool("gro_small", 127, 2048);
	{
		Gro g;
		std::vector<rte_mbuf *> mbufs;
		for (const Frame &f : build_all(tcp_stream(200, 1000))) {
			rte_mbuf *m = f.to_mbuf(mp);
			if (!m)
				break;
			mbufs.push_back(m);
		}
		REQUIRE(mbufs.size() == 127);
		REQUIRE(rte_mempool_avail_count(mp) == 0);
		REQUIRE(g.burst(mbufs));
		REQUIRE(g.held() >= 1);
		// held packets not drained: fini frees them (exit path)
	}
	LRX_REQUIRE_POOL_FULL(mp);
	{
		Gro g;
		std::vector<rte_mbuf *> mbufs;
		for (const Frame &f : build_all(tcp_stream(127, 1000)))
			mbufs.push_back(f.to_mbuf(mp));
		REQUIRE(g.burst(mbufs));
		g.flush(false);
		// 40 + 1000 * n < 65536: 65 segments of 1000 bytes
		REQUIRE(seg_counts(decode_all(g.out)) ==
			std::vector<uint16_t>{65, 62});
		// harness frees the chains with rte_pktmbuf_free
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

// The peer: DPDK 22.11 rte_gro on the same segments, to back the
// differences table in docs/gro.md with observed behaviour.
#include <rte_gro.h>

namespace {

std::vector<Out> rte_gro_light(std::vector<Spec> specs)
{
	std::vector<rte_mbuf *> mbufs = to_mbufs(build_all(specs), pool());
	for (rte_mbuf *m : mbufs) {
		Out o = decode(m);
		m->l2_len = 14;
		m->l3_len = o.v6 ? 40 : 20;
		m->l4_len = 20;
		m->packet_type = RTE_PTYPE_L2_ETHER |
				 (o.v6 ? RTE_PTYPE_L3_IPV6 : RTE_PTYPE_L3_IPV4) |
				 RTE_PTYPE_L4_TCP;
	}
	rte_gro_param param = {};
	param.gro_types = RTE_GRO_TCP_IPV4;
	param.max_flow_num = 4;
	param.max_item_per_flow = 32;
	uint16_t n = rte_gro_reassemble_burst(mbufs.data(), (uint16_t)mbufs.size(),
					      &param);
	std::vector<rte_mbuf *> out(mbufs.begin(), mbufs.begin() + n);
	std::vector<Out> outs = decode_all(out);
	for (rte_mbuf *m : out)
		rte_pktmbuf_free(m);
	return outs;
}

} // namespace

TEST_CASE("gro: rte_gro peer differs from the kernel rules (docs/gro.md)",
	  "[gro][rte_gro]")
{
	lrx_test::eal_init();
	// PSH: the kernel merges the PSH segment and flushes; rte_gro
	// 22.11 does not process segments with flags other than ACK
	auto specs = tcp_stream(6, 1000);
	specs[2].tcp_flags |= fr::TCP_PSH;
	auto outs = rte_gro_light(specs);
	std::vector<uint32_t> seqs;
	for (auto &o : outs)
		seqs.push_back(o.seq);
	INFO("rte_gro PSH: segs " << ::Catch::Detail::stringify(seg_counts(outs))
				  << " seqs " << ::Catch::Detail::stringify(seqs));
	REQUIRE(seg_counts(run_specs(specs)) == std::vector<uint16_t>{3, 3});
	// rte_gro: PSH segment returned unmerged, after the later data
	// (per-flow reordering)
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{2, 3, 1});
	REQUIRE(seqs == std::vector<uint32_t>{1000, 4000, 3000});
	// TTL: the kernel flushes on a TTL change; rte_gro merges
	specs = tcp_stream(6, 1000);
	specs[2].ttl = 5;
	outs = rte_gro_light(specs);
	INFO("rte_gro TTL: segs " << ::Catch::Detail::stringify(seg_counts(outs)));
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{6});
	// headers: rte_gro fixes tot_len but leaves the IPv4 header
	// checksum stale (inet_gro_complete fixes it)
	specs = tcp_stream(4, 1000);
	outs = rte_gro_light(specs);
	REQUIRE(outs.size() == 1);
	REQUIRE(outs[0].ip_len_field == 40 + 4000);
	REQUIRE_FALSE(outs[0].ip_csum_ok);
	REQUIRE(run_specs(specs)[0].ip_csum_ok);
	// IPv6 TCP: not supported by rte_gro 22.11 (passes through)
	specs = tcp_stream(4, 1000, 1000, 1000, true);
	outs = rte_gro_light(specs);
	REQUIRE(seg_counts(outs) == std::vector<uint16_t>{1, 1, 1, 1});
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: rte-gro runs DPDK rte_gro behind a descriptor of its own",
	  "[gro][rte_gro]")
{
	{
		Gro g(Keys{}, "rte-gro"); // mode=heavy by default
		REQUIRE(g.init_rc == 0);
		auto frames = build_all(tcp_stream(100, 1460));
		Spec udp;
		udp.sport = 4444;
		frames.insert(frames.begin() + 50, fr::build(udp));
		REQUIRE(g.burst(to_mbufs(frames, pool())));
		// UDP passes at once; the TCP segments are held by rte_gro
		REQUIRE(g.out.size() == 1);
		REQUIRE(g.held() == 3);
		g.flush(true); // younger than the age: kept
		REQUIRE(g.out.size() == 1);
		g.flush(false);
		REQUIRE(g.held() == 0);
		auto outs = decode_all(g.out);
		REQUIRE(seg_counts(outs) == std::vector<uint16_t>{1, 44, 44, 12});
		check_headers(outs); // IPv4 header checksum fixed on output
		// merged packets marked verified, as the kernel impl does
		REQUIRE((g.out[1]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) ==
			RTE_MBUF_F_RX_L4_CKSUM_GOOD);
		REQUIRE(g.out[1]->tso_segsz == 1460);
		REQUIRE((g.out[0]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == 0);
		REQUIRE(payload_by_flow(outs) == payload_by_flow(frames));
		REQUIRE(g.counter("segments_in") == 101);
		REQUIRE(g.counter("merged") == 97);
		REQUIRE(g.counter("packets_out") == 4);
	}
	{
		Gro g(Keys{{"mode", "heavy"}}, "rte-gro");
		auto frames = build_all(tcp_stream(10, 1000));
		REQUIRE(g.one(to_mbufs(frames, pool())));
		// destroyed while holding: fini flushes and frees
	}
	Gro bad(Keys{{"mode", "bsd"}}, "rte-gro");
	REQUIRE(bad.init_rc == -EINVAL);
	REQUIRE(std::string(bad.err).find("'mode' = 'bsd'") != std::string::npos);
	REQUIRE(std::string(bad.err).find("one of heavy, light") != std::string::npos);
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: rte-gro mode=light merges within a poll's burst, holds nothing "
	  "across polls",
	  "[gro][rte_gro]")
{
	auto frames = build_all(tcp_stream(100, 1460));
	Spec udp;
	udp.sport = 4444;
	frames.insert(frames.begin() + 50, fr::build(udp));
	// polls of 32 frames: 0..31 | 32..63 (TCP 32..49, UDP, TCP 50..62) |
	// 64..95 | 96..100; the same through process_burst and process_one
	for (bool per_packet : {false, true}) {
		INFO((per_packet ? "process_one" : "process_burst"));
		Gro g(Keys{{"mode", "light"}}, "rte-gro");
		REQUIRE(g.init_rc == 0);
		auto mbufs = to_mbufs(frames, pool());
		std::vector<size_t> out_after_poll;
		for (size_t i = 0; i < mbufs.size(); i += 32) {
			size_t n = std::min<size_t>(32, mbufs.size() - i);
			std::vector<rte_mbuf *> poll(mbufs.begin() + (long)i,
						     mbufs.begin() + (long)(i + n));
			size_t udp_in = i <= 50 && 50 < i + n ? 1 : 0;
			size_t before = g.out.size();
			REQUIRE((per_packet ? g.one(poll) : g.burst(poll, 32)));
			// until the poll ends the TCP segments wait (the
			// UDP datagram passes at once)
			REQUIRE(g.out.size() == before + udp_in);
			REQUIRE(g.held() == n - udp_in);
			// a poll that used its budget still flushes all:
			// light mode keeps nothing for the next poll
			g.flush(n == 32);
			REQUIRE(g.held() == 0);
			out_after_poll.push_back(g.out.size());
		}
		REQUIRE(out_after_poll == std::vector<size_t>{1, 3, 4, 5});
		auto outs = decode_all(g.out);
		REQUIRE(seg_counts(outs) ==
			std::vector<uint16_t>{32, 1, 31, 32, 5});
		std::vector<uint32_t> seqs;
		for (const Out &o : outs)
			seqs.push_back(o.seq);
		REQUIRE(seqs[0] == 1000);
		REQUIRE(seqs[2] == 1000 + 32 * 1460);
		REQUIRE(seqs[3] == 1000 + 63 * 1460);
		REQUIRE(seqs[4] == 1000 + 95 * 1460);
		REQUIRE(outs[1].sport == 4444);
		REQUIRE(outs[2].ip_len_field == 40 + 31 * 1460);
		check_headers(outs); // IPv4 header checksum fixed on output
		REQUIRE((g.out[0]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) ==
			RTE_MBUF_F_RX_L4_CKSUM_GOOD);
		REQUIRE(g.out[0]->tso_segsz == 1460);
		REQUIRE(payload_by_flow(outs) == payload_by_flow(frames));
		REQUIRE(g.counter("segments_in") == 101);
		REQUIRE(g.counter("merged") == 96);
		REQUIRE(g.counter("packets_out") == 5);
		REQUIRE(g.counter("flush_poll_end") == 4);
	}
	LRX_REQUIRE_POOL_FULL(pool());
	{
		// one poll of 200 segments (more than rte_gro light mode's
		// RTE_GRO_MAX_BURST_ITEM_NUM = 128): reassembled in a batch of
		// 128 at once, the other 72 at the poll's end; rte_gro's size
		// limit (L3 length <= 65535) gives 65 segments of 1000 bytes
		Gro g(Keys{{"mode", "light"}}, "rte-gro");
		auto mbufs = to_mbufs(build_all(tcp_stream(200, 1000)), pool());
		REQUIRE(g.burst(mbufs, 200));
		REQUIRE(g.held() == 72);
		REQUIRE(g.out.size() == 2);
		REQUIRE(g.counter("flush_size") == 2);
		g.flush(true);
		REQUIRE(g.held() == 0);
		REQUIRE(seg_counts(decode_all(g.out)) ==
			std::vector<uint16_t>{65, 63, 65, 7});
	}
	{
		Gro g(Keys{{"mode", "light"}}, "rte-gro");
		auto frames10 = build_all(tcp_stream(10, 1000));
		REQUIRE(g.one(to_mbufs(frames10, pool())));
		REQUIRE(g.held() == 10);
		// destroyed before the poll ended: fini frees the batch
	}
	LRX_REQUIRE_POOL_FULL(pool());
}

TEST_CASE("gro: polls of 64 with HZ < 1000 split as the kernel oracle did",
	  "[gro]")
{
	// 100 x 1448 through NAPI polls of 64: the first poll merges 45 (64 KB
	// rule) and holds 19; it used its budget and, with HZ < 1000
	// (flush_age_us = 0), flushes them; the second poll holds 36 and
	// flushes them (budget not used). The veth oracle gave 45/19/36.
	{
		Gro g(Keys{{"flush_age_us", "0"}});
		auto mbufs = to_mbufs(build_all(tcp_stream(100, 1448)), pool());
		REQUIRE(g.burst(std::vector<rte_mbuf *>(mbufs.begin(), mbufs.begin() + 64),
				64));
		g.flush(true);
		REQUIRE(g.burst(std::vector<rte_mbuf *>(mbufs.begin() + 64, mbufs.end()),
				64));
		g.flush(false);
		REQUIRE(seg_counts(decode_all(g.out)) ==
			std::vector<uint16_t>{45, 19, 36});
	}
	LRX_REQUIRE_POOL_FULL(pool());
}
