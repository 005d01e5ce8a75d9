// SPDX-License-Identifier: BSD-3-Clause
// Test harness for the GRO stage: drives the descriptor the way an engine
// does (process_one / process_burst, then release() drained after every
// call and after flush()), builds TCP/UDP streams with tests/support/frames
// and decodes what comes out (segments per output packet, seq, payload).
#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "frames.h"
#include "stage_harness.h"
#include "test_eal.h"
// the stage headers are C without extern "C" guards
extern "C" {
#include "meta.h"
#include "stage.h"
}

namespace gro_test {

using lrx_test::frames::Frame;
using lrx_test::frames::Spec;
using Keys = std::map<std::string, std::string>;

// The GRO stage as lrx_test::StageInstance with the engine's burst of 32
// and keys handed through; adds the release() drain and the output list.
struct Gro : lrx_test::StageInstance {
	const lrx_stage *st = nullptr;
	void *ctx = nullptr;
	std::vector<rte_mbuf *> out;
	const char *err = nullptr;
	int init_rc = 0;

	static lrx_test::StageOptions options()
	{
		lrx_test::StageOptions o;
		o.burst = 32;
		o.on_missing_counter = lrx_test::StageOptions::MissingCounter::max;
		return o;
	}

	// stage: gro (the kernel's rules) or rte-gro (DPDK rte_gro, the peer)
	explicit Gro(const Keys &k = {}, const char *stage = "gro")
		: StageInstance((lrx_test::eal_init(), stage), k, options()),
		  st(desc()), ctx(StageInstance::ctx()), err(error()),
		  init_rc(rc())
	{
	}
	~Gro()
	{
		for (rte_mbuf *m : out)
			rte_pktmbuf_free(m);
	}

	void drain()
	{
		rte_mbuf *b[16];
		uint16_t n;
		while ((n = st->release(ctx, b, 16)) != 0)
			out.insert(out.end(), b, b + n);
	}
	// process_one on each; returns false if a packet was not CONSUMED
	bool one(const std::vector<rte_mbuf *> &pkts)
	{
		bool ok = true;
		for (rte_mbuf *m : pkts) {
			ok &= st->process_one(ctx, m) == LRX_NEXT_CONSUMED_V;
			drain();
		}
		return ok;
	}
	bool burst(const std::vector<rte_mbuf *> &pkts, size_t burst_size = 32)
	{
		bool ok = true;
		for (size_t i = 0; i < pkts.size(); i += burst_size) {
			uint16_t n = (uint16_t)std::min(burst_size, pkts.size() - i);
			std::vector<rte_mbuf *> b(pkts.begin() + (long)i,
						  pkts.begin() + (long)(i + n));
			std::vector<lrx_next_t> nexts(n, 0);
			st->process_burst(ctx, b.data(), n, nexts.data());
			for (lrx_next_t x : nexts)
				ok &= x == LRX_NEXT_CONSUMED_V;
			drain();
		}
		return ok;
	}
	void flush(bool budget_used)
	{
		st->flush(ctx, budget_used);
		drain();
	}
	uint32_t held() const { return st->held(ctx); }
	// output bytes of every released packet, in order
	std::vector<std::vector<uint8_t>> bytes() const
	{
		std::vector<std::vector<uint8_t>> r;
		for (rte_mbuf *m : out)
			r.push_back(lrx_test::frames::mbuf_bytes(m));
		return r;
	}
};

// Payload byte i of a segment at sequence number seq: (seq + i) & 0xff, so
// that concatenated payloads check order as well as content.
inline std::vector<uint8_t> seq_payload(uint32_t seq, size_t len)
{
	std::vector<uint8_t> p(len);
	for (size_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seq + i);
	return p;
}

// A TCP segment of a flow: base spec (ports, addresses...), seq, length.
inline Spec tcp_spec(uint32_t seq, size_t len, uint16_t sport = 1000,
		     bool v6 = false)
{
	Spec s;
	s.l3 = v6 ? lrx_test::frames::L3::ipv6 : lrx_test::frames::L3::ipv4;
	s.l4 = lrx_test::frames::L4::tcp;
	s.sport = sport;
	s.dport = 5201;
	s.seq = seq;
	s.ack = 777;
	s.tcp_flags = lrx_test::frames::TCP_ACK;
	s.payload = seq_payload(seq, len);
	s.default_payload = false;
	s.pad_to = 0;
	return s;
}

// n contiguous segments of mss bytes starting at seq0, IP IDs incrementing.
inline std::vector<Spec> tcp_stream(size_t n, size_t mss, uint32_t seq0 = 1000,
				    uint16_t sport = 1000, bool v6 = false)
{
	std::vector<Spec> r;
	for (size_t i = 0; i < n; i++) {
		Spec s = tcp_spec(seq0 + (uint32_t)(i * mss), mss, sport, v6);
		s.ip_id = (uint16_t)(100 + i);
		r.push_back(s);
	}
	return r;
}

inline std::vector<rte_mbuf *> to_mbufs(const std::vector<Frame> &frames,
					rte_mempool *mp)
{
	std::vector<rte_mbuf *> r;
	for (const Frame &f : frames) {
		rte_mbuf *m = f.to_mbuf(mp);
		// dynfields survive free/alloc: "build-meta did not run"
		if (m && lrx_meta_dynfield_offset >= 0)
			lrx_meta_set(m, nullptr);
		r.push_back(m);
	}
	return r;
}
inline std::vector<Frame> build_all(const std::vector<Spec> &specs)
{
	std::vector<Frame> r;
	for (const Spec &s : specs)
		r.push_back(lrx_test::frames::build(s));
	return r;
}

// One output packet decoded.
struct Out {
	uint16_t segs = 0;       // mbuf segments = input segments merged
	uint32_t l2_len = 0;
	bool v6 = false;
	uint8_t proto = 0;
	uint16_t sport = 0;
	uint32_t seq = 0;
	uint8_t tcp_flags = 0;
	uint32_t ip_len_field = 0;  // IPv4 total length / IPv6 40 + payload len
	bool ip_csum_ok = true;
	std::vector<uint8_t> payload;
	std::vector<uint8_t> bytes; // whole packet, linearised
};

inline Out decode(const rte_mbuf *m)
{
	Out o;
	o.segs = m->nb_segs;
	o.bytes = lrx_test::frames::mbuf_bytes(m);
	const std::vector<uint8_t> &d = o.bytes;
	size_t off = 12;
	uint16_t type = (uint16_t)(d[off] << 8 | d[off + 1]);
	off = 14;
	while (type == 0x8100 || type == 0x88a8) {
		type = (uint16_t)(d[off + 2] << 8 | d[off + 3]);
		off += 4;
	}
	o.l2_len = (uint32_t)off;
	size_t l4;
	if (type == 0x0800) {
		o.proto = d[off + 9];
		o.ip_len_field = (uint32_t)(d[off + 2] << 8 | d[off + 3]);
		o.ip_csum_ok = lrx_test::frames::inet_checksum(
				       &d[off], (size_t)(d[off] & 0xf) * 4) == 0;
		l4 = off + (size_t)(d[off] & 0xf) * 4;
	} else if (type == 0x86dd) {
		o.v6 = true;
		o.proto = d[off + 6];
		o.ip_len_field = 40u + (uint32_t)(d[off + 4] << 8 | d[off + 5]);
		l4 = off + 40;
		// hop-by-hop, routing, destination options
		while ((o.proto == 0 || o.proto == 43 || o.proto == 60) &&
		       l4 + 8 <= d.size()) {
			o.proto = d[l4];
			l4 += (d[l4 + 1] + 1u) * 8;
		}
	} else {
		return o;
	}
	o.sport = (uint16_t)(d[l4] << 8 | d[l4 + 1]);
	size_t hl = 8;
	if (o.proto == 6) {
		o.seq = (uint32_t)d[l4 + 4] << 24 | (uint32_t)d[l4 + 5] << 16 |
			(uint32_t)d[l4 + 6] << 8 | d[l4 + 7];
		o.tcp_flags = d[l4 + 13];
		hl = (size_t)(d[l4 + 12] >> 4) * 4;
	}
	o.payload.assign(d.begin() + (long)(l4 + hl), d.end());
	return o;
}

inline std::vector<Out> decode_all(const std::vector<rte_mbuf *> &out)
{
	std::vector<Out> r;
	for (rte_mbuf *m : out)
		r.push_back(decode(m));
	return r;
}

inline std::vector<uint16_t> seg_counts(const std::vector<Out> &outs)
{
	std::vector<uint16_t> r;
	for (const Out &o : outs)
		r.push_back(o.segs);
	return r;
}

} // namespace gro_test
