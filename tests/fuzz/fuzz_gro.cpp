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
#include <vector>

#include <rte_ip.h>
#include <rte_malloc.h>

#include "fuzz_common.h"
#include "frames.h"
#include "stage_conf.h"

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


// Per flow: payload bytes and their sum. Parsed the same way on the way
// in and out, so merging (which rewrites lengths, not payload) keeps it.
// A flow key is at most 32 address bytes + protocol + ports; "other" is
// the empty key. The table is open addressing over a fixed array, reset
// through the list of slots in use: no allocation per segment or input
// (with std::map<std::string> the allocator was most of an iteration).
struct Tally {
	uint64_t bytes = 0, sum = 0;
};
struct Key {
	uint8_t len = 0;
	uint8_t b[37] = {};
	bool operator==(const Key &o) const
	{
		return len == o.len && std::memcmp(b, o.b, len) == 0;
	}
};
struct Slot {
	Key key;
	Tally in, out;
	bool used = false, seen_in = false;
};
// more slots than records fit in one input (max_len / 6 + "other")
constexpr size_t kSlots = 4096;
Slot slots[kSlots];
std::vector<uint32_t> used_slots; // reserved once

LRX_FUZZ_BOOKKEEPING
Slot &slot_of(const Key &k)
{
	uint32_t h = 2166136261u;
	for (unsigned i = 0; i < k.len; i++)
		h = (h ^ k.b[i]) * 16777619u;
	for (uint32_t i = h % kSlots;; i = (i + 1) % kSlots) {
		Slot &s = slots[i];
		if (!s.used) {
			if (used_slots.size() >= kSlots - 1)
				lrx_fuzz::fail("gro: flow table full");
			s.used = true;
			s.key = k;
			used_slots.push_back(i);
			return s;
		}
		if (s.key == k)
			return s;
	}
}

// the sum of n bytes, 8 at a time (a byte loop was a tenth of the time)
LRX_FUZZ_BOOKKEEPING
uint64_t byte_sum(const uint8_t *p, size_t n)
{
	uint64_t sum = 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		std::memcpy(&w, p + i, 8);
		w = (w & 0x00ff00ff00ff00ffull) + (w >> 8 & 0x00ff00ff00ff00ffull);
		sum += (w * 0x0001000100010001ull) >> 48;
	}
	for (; i < n; i++)
		sum += p[i];
	return sum;
}

LRX_FUZZ_BOOKKEEPING
void account(const uint8_t *f, size_t size, bool out)
{
	size_t off = 12;
	uint16_t type = size >= 14 ? (uint16_t)(f[12] << 8 | f[13]) : 0;
	while ((type == 0x8100 || type == 0x88a8) && size >= off + 6) {
		off += 4;
		type = (uint16_t)(f[off] << 8 | f[off + 1]);
	}
	off += 2;
	Key key;
	size_t start = 0, end = size;
	size_t l4 = 0, l3_end = 0;
	uint8_t proto = 0;
	if (type == 0x0800 && size >= off + 20 && (f[off] >> 4) == 4) {
		size_t ihl = (f[off] & 15) * 4u;
		l3_end = off + (f[off + 2] << 8 | f[off + 3]);
		proto = f[off + 9];
		l4 = off + ihl;
		if (ihl >= 20) {
			key.len = 8;
			std::memcpy(key.b, &f[off + 12], 8);
		} else {
			l4 = 0;
		}
	} else if (type == 0x86dd && size >= off + 40 && (f[off] >> 4) == 6) {
		l3_end = off + 40 + (f[off + 4] << 8 | f[off + 5]);
		proto = f[off + 6];
		l4 = off + 40;
		key.len = 32;
		std::memcpy(key.b, &f[off + 8], 32);
	}
	if (l4 && (proto == 6 || proto == 17) && l3_end <= size &&
	    l4 + (proto == 6 ? 20u : 8u) <= l3_end) {
		size_t l4_hdr = proto == 6 ? (f[l4 + 12] >> 4) * 4u : 8u;
		if (l4_hdr >= 8 && l4 + l4_hdr <= l3_end) {
			key.b[key.len++] = proto;
			std::memcpy(&key.b[key.len], &f[l4], 4);
			key.len += 4;
			start = l4 + l4_hdr;
			end = l3_end;
		} else {
			key.len = 0;
		}
	} else {
		key.len = 0;
	}
	if (key.len == 0) { // "other": the whole frame
		start = 0;
		end = size;
	}
	Slot &sl = slot_of(key);
	Tally &x = out ? sl.out : sl.in;
	sl.seen_in |= !out;
	x.bytes += end - start;
	x.sum += byte_sum(f + start, end - start);
}

uint64_t segs_in, segs_out;
rte_mbuf *pending[32];
unsigned n_pending;
uint8_t linear[1 << 17]; // an output packet's bytes (GRO: up to 64 KB)

LRX_FUZZ_BOOKKEEPING
void account_mbuf(const rte_mbuf *m)
{
	size_t len = 0;
	for (const rte_mbuf *s = m; s; s = s->next) {
		if (len + s->data_len > sizeof(linear))
			lrx_fuzz::fail("gro: output packet of more than %zu bytes",
				       sizeof(linear));
		std::memcpy(linear + len, rte_pktmbuf_mtod(s, const uint8_t *),
			    s->data_len);
		len += s->data_len;
	}
	account(linear, len, true);
}

void emit(rte_mbuf *m)
{
	segs_out += m->nb_segs;
	account_mbuf(m);
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
	if (n_pending == 0)
		return;
	if (one) {
		for (unsigned i = 0; i < n_pending; i++) {
			fate(pending[i], gro->process_one(ctx, pending[i]));
			drain(ctx);
		}
	} else {
		lrx_next_t nexts[32];
		gro->process_burst(ctx, pending, (uint16_t)n_pending, nexts);
		for (unsigned i = 0; i < n_pending; i++)
			fate(pending[i], nexts[i]);
		drain(ctx);
	}
	n_pending = 0;
}

// a frame's bytes in an mbuf of the pool (one segment, as a NIC gives it)
void push(const uint8_t *data, size_t len)
{
	account(data, len, false);
	rte_mbuf *m = rte_pktmbuf_alloc(mp);
	if (!m || len > rte_pktmbuf_tailroom(m))
		lrx_fuzz::fail("pool ran dry or frame of %zu bytes too long", len);
	std::memcpy(rte_pktmbuf_append(m, (uint16_t)len), data, len);
	lrx_meta_set(m, nullptr); // no build-meta: GRO parses the headers
	segs_in++;
	pending[n_pending++] = m;
}

// a segment's payload: bytes that follow its sequence number
LRX_FUZZ_BOOKKEEPING
void fill_payload(std::vector<uint8_t> &payload, size_t len, uint32_t seq)
{
	// byte i is (seq + i) mod 256: copies from a ramp, 256 bytes a time
	static uint8_t ramp[512];
	if (ramp[1] == 0)
		for (size_t i = 0; i < sizeof(ramp); i++)
			ramp[i] = (uint8_t)i;
	payload.resize(len);
	for (size_t i = 0; i < len; i += 256)
		std::memcpy(&payload[i], &ramp[(seq + i) & 255],
			    len - i < 256 ? len - i : 256);
}

// build(s) for what this harness varies (one VLAN tag or none, IPv4
// without options or IPv6 without extension headers, TCP with options or
// UDP, padding), written straight into an mbuf: frames::build assembles
// several vectors per frame, which made the allocator a large share of
// each input. Checked against build() at start-up (builder_selftest).
LRX_FUZZ_BOOKKEEPING
size_t build_into(const Spec &s, uint8_t *d)
{
	size_t o = 0;
	auto be16 = [&](uint16_t v) {
		d[o++] = (uint8_t)(v >> 8);
		d[o++] = (uint8_t)v;
	};
	auto be32 = [&](uint32_t v) {
		be16((uint16_t)(v >> 16));
		be16((uint16_t)v);
	};
	std::memcpy(d, s.dst.data(), 6);
	std::memcpy(d + 6, s.src.data(), 6);
	o = 12;
	for (uint16_t tci : s.vlans) {
		be16(0x8100);
		be16(tci);
	}
	bool v4 = s.l3 == L3::ipv4, tcp = s.l4 == L4::tcp;
	be16(v4 ? 0x0800 : 0x86dd);
	size_t l3 = o;
	size_t opts = tcp ? (s.tcp_options.size() + 3) / 4 * 4 : 0;
	size_t l4_len = (tcp ? 20 + opts : 8) + s.payload.size();
	uint8_t proto = tcp ? 6 : 17;
	if (v4) {
		d[o++] = 0x45;
		d[o++] = s.tos;
		be16((uint16_t)(20 + l4_len));
		be16(s.ip_id);
		be16(s.frag);
		d[o++] = s.ttl;
		d[o++] = proto;
		be16(0);
		be32(s.ip4_src);
		be32(s.ip4_dst);
	} else {
		be32(0x60000000u | (s.flow_label & 0xfffff));
		be16((uint16_t)l4_len);
		d[o++] = proto;
		d[o++] = s.hop_limit;
		std::memcpy(d + o, s.ip6_src.data(), 16);
		std::memcpy(d + o + 16, s.ip6_dst.data(), 16);
		o += 32;
	}
	size_t l4 = o;
	be16(s.sport);
	be16(s.dport);
	if (tcp) {
		be32(s.seq);
		be32(s.ack);
		d[o++] = (uint8_t)(((20 + opts) / 4) << 4);
		d[o++] = s.tcp_flags;
		be16(s.window);
		be16(0);
		be16(0);
		if (!s.tcp_options.empty())
			std::memcpy(d + o, s.tcp_options.data(), s.tcp_options.size());
		std::memset(d + o + s.tcp_options.size(), 1, // NOP
			    opts - s.tcp_options.size());
		o += opts;
	} else {
		be16((uint16_t)l4_len);
		be16(0);
	}
	if (!s.payload.empty())
		std::memcpy(d + o, s.payload.data(), s.payload.size());
	o += s.payload.size();
	uint16_t csum;
	if (v4) {
		auto *ip = reinterpret_cast<rte_ipv4_hdr *>(d + l3);
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		csum = rte_ipv4_udptcp_cksum(ip, d + l4);
	} else {
		csum = rte_ipv6_udptcp_cksum(
			reinterpret_cast<const rte_ipv6_hdr *>(d + l3), d + l4);
	}
	std::memcpy(d + l4 + (tcp ? 16 : 6), &csum, 2);
	if (o < s.pad_to) {
		std::memset(d + o, 0, s.pad_to - o);
		o = s.pad_to;
	}
	return o;
}

// a segment as an mbuf (build_into), accounted as push() does
void push_spec(const Spec &s)
{
	rte_mbuf *m = rte_pktmbuf_alloc(mp);
	if (!m)
		lrx_fuzz::fail("pool ran dry");
	uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
	size_t len = build_into(s, d);
	if (len > rte_pktmbuf_tailroom(m))
		lrx_fuzz::fail("frame of %zu bytes too long", len);
	rte_pktmbuf_append(m, (uint16_t)len);
	account(d, len, false);
	lrx_meta_set(m, nullptr); // no build-meta: GRO parses the headers
	segs_in++;
	pending[n_pending++] = m;
}

// build_into must write what frames::build writes (but the TCP checksum
// 0x0000, which DPDK's rte_ipv4/6_udptcp_cksum writes as 0xffff: the same
// value in ones' complement)
void builder_selftest()
{
	static uint8_t buf[2048];
	unsigned n = 0;
	for (unsigned v = 0; v < 2 * 2 * 2 * 2 * 3; v++)
		for (size_t len : {0, 1, 7, 18, 600, 1460}) {
			Spec s;
			s.l3 = (v & 1) ? L3::ipv6 : L3::ipv4;
			s.l4 = (v & 2) ? L4::udp : L4::tcp;
			if (v & 4)
				s.vlans = {100};
			s.pad_to = (v & 8) ? 60 : 0;
			if (v / 16 == 1)
				s.tcp_options = {1, 1, 8, 10, 0, 0, 0, 9, 0, 0, 0, 0};
			else if (v / 16 == 2)
				s.tcp_options = {2, 4, 0x05, 0xb4};
			s.sport = 1003;
			s.dport = 5201;
			s.seq = 0x12345678u + (uint32_t)len;
			s.ack = 777;
			s.tcp_flags = 0x18;
			s.tos = 0x10;
			s.ttl = 63;
			s.ip_id = (uint16_t)(v * 77);
			s.frag = (v & 1) ? 0 : 0x4000;
			fill_payload(s.payload, len, s.seq);
			s.default_payload = false;
			Frame f = build(s);
			size_t k = build_into(s, buf);
			bool same = k == f.size();
			for (size_t i = 0; same && i < k; i++)
				same = buf[i] == f.data[i] ||
				       (s.l4 == L4::tcp && i >= f.l4_off + 16u &&
					i < f.l4_off + 18u &&
					(buf[i] ^ f.data[i]) == 0xff);
			if (!same)
				lrx_fuzz::fail("fuzz_gro: build_into differs from "
					       "frames::build (case %u, payload %zu)",
					       v, len);
			n++;
		}
	std::fprintf(stderr, "fuzz_gro: builder checked on %u frames\n", n);
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
	used_slots.reserve(kSlots);
	builder_selftest();
	if (lrx_meta_register() < 0)
		lrx_fuzz::fail("meta dynfield missing");
	for (Instance &inst : instances) {
		gro = inst.st = lrx_stage_find(inst.stage);
		if (!gro)
			lrx_fuzz::fail("stage %s missing", inst.stage);
		inst.ctx = rte_zmalloc("fuzz_gro", gro->ctx_size, RTE_CACHE_LINE_SIZE);
		char err[256] = "";
		lrx_test::StageConf conf(gro, lrx_test::KeyValues(inst.keys.begin(), inst.keys.end()));
		if (conf.rc)
			lrx_fuzz::fail("gro keys %s: %s", inst.label, conf.error.c_str());
		lrx_stage_init init = {};
		init.instance = inst.stage;
		init.socket_id = (int)rte_socket_id();
		init.burst = 32;
		init.conf = conf.conf;
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
			push(raw, len);
		} else {
			unsigned fi = r[0] >> 2 & 15;
			FlowState &fs = flows[fi];
			// one Spec for all segments: its vectors keep their
			// capacity (every field used is set below)
			static Spec s;
			s.vlans.clear();
			s.tcp_options.clear();
			s.l3 = (r[0] & 0x10) ? L3::ipv6 : L3::ipv4;
			s.l4 = (r[0] & 0x20) ? L4::udp : L4::tcp;
			s.sport = (uint16_t)(1000 + (fi & 3));
			s.dport = 5201;
			s.pad_to = (r[4] & 0x80) ? 60 : 0;
			if (r[4] & 0x40)
				s.vlans.push_back(100);
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
			push_spec(s);
		}
		if (n_pending == 32)
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
	// every flow: out = in (a flow only in the output has in = 0)
	for (uint32_t i : used_slots) {
		Slot &sl = slots[i];
		if (sl.out.bytes != sl.in.bytes || sl.out.sum != sl.in.sum)
			lrx_fuzz::fail("gro %s: flow payload in %llu bytes (sum %llu), "
				       "out %llu (sum %llu)", inst.label,
				       (unsigned long long)sl.in.bytes,
				       (unsigned long long)sl.in.sum,
				       (unsigned long long)sl.out.bytes,
				       (unsigned long long)sl.out.sum);
		if (!sl.seen_in)
			lrx_fuzz::fail("gro %s: output has flows the input had not",
				       inst.label);
		sl = Slot();
	}
	used_slots.clear();
	lrx_fuzz::require_pools_full(inst.label);
	return 0;
}
