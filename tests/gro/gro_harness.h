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

struct Gro {
	const lrx_stage *st = nullptr;
	void *ctx = nullptr;
	Keys keys;
	std::vector<rte_mbuf *> out;
	char err[256] = {};
	int init_rc = 0;

	static const char *get(const lrx_stage_init *init, const char *key)
	{
		auto *self = static_cast<const Gro *>(init->values);
		auto it = self->keys.find(key);
		if (it != self->keys.end())
			return it->second.c_str();
		for (const lrx_stage_key *k = self->st->keys; k && k->name; k++)
			if (std::strcmp(k->name, key) == 0)
				return k->def;
		return nullptr;
	}

	// stage: gro (the kernel's rules) or rte-gro (DPDK rte_gro, the peer)
	explicit Gro(const Keys &k = {}, const char *stage = "gro") : keys(k)
	{
		lrx_test::eal_init();
		st = lrx_stage_find(stage);
		if (!st)
			return;
		ctx = rte_zmalloc("gro_test", st->ctx_size, RTE_CACHE_LINE_SIZE);
		lrx_stage_init init = {};
		init.instance = stage;
		init.socket_id = 0;
		init.burst = 32;
		init.get = get;
		init.values = this;
		init.err = err;
		init.err_len = sizeof(err);
		init_rc = st->init(ctx, &init);
	}
	~Gro()
	{
		if (ctx) {
			st->fini(ctx);
			rte_free(ctx);
		}
		for (rte_mbuf *m : out)
			rte_pktmbuf_free(m);
	}
	Gro(const Gro &) = delete;
	Gro &operator=(const Gro &) = delete;

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
	uint64_t counter(const char *name) const
	{
		for (const lrx_stage_counter *c = st->counters; c && c->name; c++)
			if (std::strcmp(c->name, name) == 0) {
				uint64_t v;
				std::memcpy(&v, (const char *)ctx + c->offset,
					    sizeof(v));
				return v;
			}
		return UINT64_MAX;
	}
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
