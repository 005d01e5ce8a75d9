// SPDX-License-Identifier: BSD-3-Clause
// GRO harness: arbitrary interleavings of TCP (and UDP) segments of a few
// flows, IPv4 and IPv6, with the variations that decide merging in
// dev_gro_receive/tcp_gro_receive (flags, sequence gaps and overlaps,
// retransmits, TOS/TTL/ID changes, options), mixed with arbitrary raw
// frames, cut into polls by arbitrary flush points, through the GRO stage
// driven as an engine drives it (process_one or process_burst, release()
// drained after every call and after flush()).
//
// Input: byte 0 picks a GRO configuration (kernel rules, UDP GRO, rte_gro
// peer, no age flush); then 6-byte records r0..r5:
//   r0 & 3 == 3: control: r0 bit 2 flush (budget_used = bit 3), pending
//                segments processed first with process_one if bit 4 else
//                process_burst
//   r0 & 3 == 2: raw frame of r2 * 8 bytes from the input
//   else:        segment of flow r0 >> 2 & 3, IPv6 if bit 4, UDP if bit 5;
//                r1 TCP flags, r2 payload length, r3 sequence jump,
//                r4 IP header variations, r5 TCP options
//
// Invariants (abort otherwise): per flow (addresses, protocol, ports) the
// L4 payload bytes and their byte sum that leave the stage equal those
// that entered (GRO merges, never loses or invents payload); the segments
// out equal the segments in; nothing is held after the final flush; the
// pool is full after every input.
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <rte_malloc.h>

#include "fuzz_common.h"
#include "frames.h"

extern "C" {
#include "meta.h"
#include "stage.h"
}

using namespace lrx_test::frames;

namespace {

struct Instance {
	const char *label;
	const char *stage; // gro (the kernel's rules) or rte-gro (the peer)
	std::map<std::string, std::string> keys;
	void *ctx = nullptr;
	const lrx_stage *st = nullptr;
};

const lrx_stage *gro;
std::vector<Instance> instances = {
	{"kernel", "gro", {}},
	{"udp_gro", "gro", {{"udp_gro", "on"}}},
	{"rte", "rte-gro", {{"mode", "heavy"}}},
	{"rte-light", "rte-gro", {{"mode", "light"}}},
	{"no-age", "gro", {{"flush_age_us", "0"}, {"csum_verify", "off"}}},
};
rte_mempool *mp;

const char *get_key(const lrx_stage_init *init, const char *key)
{
	auto *inst = static_cast<const Instance *>(init->values);
	auto it = inst->keys.find(key);
	if (it != inst->keys.end())
		return it->second.c_str();
	for (const lrx_stage_key *k = gro->keys; k && k->name; k++)
		if (std::strcmp(k->name, key) == 0)
			return k->def;
	return nullptr;
}

// Per flow: payload bytes and their sum. Parsed the same way on the way
// in and out, so merging (which rewrites lengths, not payload) keeps it.
struct Tally {
	uint64_t bytes = 0, sum = 0;
};
using Key = std::string;
std::map<Key, Tally> in_tally, out_tally;

LRX_FUZZ_BOOKKEEPING
void account(const std::vector<uint8_t> &f, std::map<Key, Tally> &t)
{
	size_t off = 12;
	uint16_t type = f.size() >= 14 ? (uint16_t)(f[12] << 8 | f[13]) : 0;
	while ((type == 0x8100 || type == 0x88a8) && f.size() >= off + 6) {
		off += 4;
		type = (uint16_t)(f[off] << 8 | f[off + 1]);
	}
	off += 2;
	Key key = "other";
	size_t start = f.size(), end = f.size();
	size_t l4 = 0, l3_end = 0;
	uint8_t proto = 0;
	if (type == 0x0800 && f.size() >= off + 20 && (f[off] >> 4) == 4) {
		size_t ihl = (f[off] & 15) * 4u;
		l3_end = off + (f[off + 2] << 8 | f[off + 3]);
		proto = f[off + 9];
		l4 = off + ihl;
		if (ihl >= 20)
			key = std::string((const char *)&f[off + 12], 8);
		else
			l4 = 0;
	} else if (type == 0x86dd && f.size() >= off + 40 && (f[off] >> 4) == 6) {
		l3_end = off + 40 + (f[off + 4] << 8 | f[off + 5]);
		proto = f[off + 6];
		l4 = off + 40;
		key = std::string((const char *)&f[off + 8], 32);
	}
	if (l4 && (proto == 6 || proto == 17) && l3_end <= f.size() &&
	    l4 + (proto == 6 ? 20u : 8u) <= l3_end) {
		size_t l4_hdr = proto == 6 ? (f[l4 + 12] >> 4) * 4u : 8u;
		if (l4_hdr >= 8 && l4 + l4_hdr <= l3_end) {
			key += std::string(1, (char)proto) +
			       std::string((const char *)&f[l4], 4);
			start = l4 + l4_hdr;
			end = l3_end;
		} else {
			key = "other";
		}
	} else {
		key = "other";
	}
	if (key == "other") {
		start = 0;
		end = f.size();
	}
	Tally &x = t[key];
	x.bytes += end - start;
	for (size_t i = start; i < end; i++)
		x.sum += f[i];
}

uint64_t segs_in, segs_out;
std::vector<rte_mbuf *> pending;

void emit(rte_mbuf *m)
{
	segs_out += m->nb_segs;
	account(mbuf_bytes(m), out_tally);
	rte_pktmbuf_free(m);
}

void drain(void *ctx)
{
	rte_mbuf *b[32];
	uint16_t n;
	while ((n = gro->release(ctx, b, 32)) != 0)
		for (uint16_t i = 0; i < n; i++)
			emit(b[i]);
}

void fate(rte_mbuf *m, lrx_next_t next)
{
	switch (lrx_next_kind(next)) {
	case LRX_NEXT_CONSUMED:
		return; // comes back through release()
	case LRX_NEXT_CONTINUE:
		emit(m);
		return;
	case LRX_NEXT_DROP:
		if (lrx_next_arg(next) >= LRX_DROP_MAX)
			lrx_fuzz::fail("gro: drop with unknown reason");
		emit(m); // dropped with a reason: it left, its bytes with it
		return;
	default:
		lrx_fuzz::fail("gro returned next %#x", next);
	}
}

void run_pending(void *ctx, bool one)
{
	if (pending.empty())
		return;
	if (one) {
		for (rte_mbuf *m : pending) {
			fate(m, gro->process_one(ctx, m));
			drain(ctx);
		}
	} else {
		std::vector<lrx_next_t> nexts(pending.size());
		std::vector<rte_mbuf *> pkts = pending;
		gro->process_burst(ctx, pkts.data(), (uint16_t)pkts.size(),
				   nexts.data());
		for (size_t i = 0; i < pkts.size(); i++)
			fate(pkts[i], nexts[i]);
		drain(ctx);
	}
	pending.clear();
}

void push(const Frame &f)
{
	account(f.data, in_tally);
	rte_mbuf *m = f.to_mbuf(mp);
	if (!m)
		lrx_fuzz::fail("pool ran dry");
	lrx_meta_set(m, nullptr); // no build-meta: GRO parses the headers
	segs_in++;
	pending.push_back(m);
}

// a segment's payload: bytes that follow its sequence number
LRX_FUZZ_BOOKKEEPING
void fill_payload(std::vector<uint8_t> &payload, size_t len, uint32_t seq)
{
	payload.resize(len);
	for (size_t i = 0; i < len; i++)
		payload[i] = (uint8_t)(seq + i);
}

struct FlowState {
	uint32_t seq = 1000;
	uint16_t id = 1;
};

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	lrx_fuzz::eal_init("fuzz_gro");
	mp = lrx_fuzz::pool("fuzz_gro", 4095, 2048 + RTE_PKTMBUF_HEADROOM);
	if (lrx_meta_register() < 0)
		lrx_fuzz::fail("meta dynfield missing");
	for (Instance &inst : instances) {
		gro = inst.st = lrx_stage_find(inst.stage);
		if (!gro)
			lrx_fuzz::fail("stage %s missing", inst.stage);
		inst.ctx = rte_zmalloc("fuzz_gro", gro->ctx_size, RTE_CACHE_LINE_SIZE);
		char err[256] = "";
		lrx_stage_init init = {};
		init.instance = inst.stage;
		init.socket_id = (int)rte_socket_id();
		init.burst = 32;
		init.get = get_key;
		init.values = &inst;
		init.err = err;
		init.err_len = sizeof(err);
		if (gro->init(inst.ctx, &init) != 0)
			lrx_fuzz::fail("gro init %s: %s", inst.label, err);
	}
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lrx_fuzz::Reader in(data, size);
	Instance &inst = instances[in.u8() % instances.size()];
	void *ctx = inst.ctx;
	gro = inst.st;
	FlowState flows[16];
	segs_in = segs_out = 0;

	while (!in.empty()) {
		uint8_t r[6];
		for (uint8_t &x : r)
			x = in.u8();
		if ((r[0] & 3) == 3) {
			run_pending(ctx, r[0] & 0x10);
			if (r[0] & 4) {
				gro->flush(ctx, r[0] & 8);
				drain(ctx);
			}
			continue;
		}
		if ((r[0] & 3) == 2) {
			const uint8_t *raw;
			size_t len = in.take((size_t)r[2] * 8, &raw);
			Frame f;
			f.data.assign(raw, raw + len);
			push(f);
		} else {
			unsigned fi = r[0] >> 2 & 15;
			FlowState &fs = flows[fi];
			Spec s;
			s.l3 = (r[0] & 0x10) ? L3::ipv6 : L3::ipv4;
			s.l4 = (r[0] & 0x20) ? L4::udp : L4::tcp;
			s.sport = (uint16_t)(1000 + (fi & 3));
			s.dport = 5201;
			s.pad_to = (r[4] & 0x80) ? 60 : 0;
			if (r[4] & 0x40)
				s.vlans = {100};
			size_t len = (size_t)r[2] * 6 % 1461;
			// jumps: 0 in order, else back (retransmit/overlap) or ahead (gap)
			int32_t jump = r[3] < 200 ? 0 : ((int32_t)r[3] - 228) * 100;
			s.seq = fs.seq + (uint32_t)jump;
			s.ack = 777;
			s.tcp_flags = (uint8_t)(TCP_ACK | (r[1] & (TCP_FIN | TCP_SYN |
				      TCP_RST | TCP_PSH | TCP_URG)));
			if (r[1] & 0x80)
				s.tcp_flags = r[1] & 0x3f; // anything, ACK or not
			s.tos = (r[4] & 1) ? 0x10 : 0;
			s.ttl = (r[4] & 2) ? 63 : 64;
			s.ip_id = (r[4] & 4) ? fs.id : (uint16_t)(fs.id + 1);
			fs.id = s.ip_id;
			s.frag = (r[4] & 8) ? 0 : 0x4000;
			if (r[5] & 1) // timestamps, value changing or not
				s.tcp_options = {1, 1, 8, 10, 0, 0, 0,
						 (uint8_t)((r[5] & 2) ? fs.seq : 1),
						 0, 0, 0, 0};
			else if (r[5] & 4)
				s.tcp_options = {2, 4, 0x05, 0xb4}; // MSS
			fill_payload(s.payload, len, s.seq);
			s.default_payload = false;
			fs.seq = s.seq + (uint32_t)len;
			push(build(s));
		}
		if (pending.size() == 32)
			run_pending(ctx, false);
	}
	run_pending(ctx, false);
	for (int i = 0; i < 64 && gro->held(ctx) != 0; i++) {
		gro->flush(ctx, false);
		drain(ctx);
	}
	if (gro->held(ctx) != 0)
		lrx_fuzz::fail("gro %s: %u still held after flushes", inst.label,
			       gro->held(ctx));
	if (segs_in != segs_out)
		lrx_fuzz::fail("gro %s: %llu segments in, %llu out", inst.label,
			       (unsigned long long)segs_in,
			       (unsigned long long)segs_out);
	for (auto &kv : in_tally) {
		const Tally &o = out_tally[kv.first];
		if (o.bytes != kv.second.bytes || o.sum != kv.second.sum)
			lrx_fuzz::fail("gro %s: flow payload in %llu bytes (sum %llu), "
				       "out %llu (sum %llu)", inst.label,
				       (unsigned long long)kv.second.bytes,
				       (unsigned long long)kv.second.sum,
				       (unsigned long long)o.bytes,
				       (unsigned long long)o.sum);
	}
	if (out_tally.size() != in_tally.size())
		lrx_fuzz::fail("gro %s: output has flows the input had not", inst.label);
	// emptied here, not at the next input's start: an input that frees
	// what an earlier one allocated makes libFuzzer suspect a leak and
	// run it again under LeakSanitizer
	in_tally.clear();
	out_tally.clear();
	lrx_fuzz::require_pools_full(inst.label);
	return 0;
}
