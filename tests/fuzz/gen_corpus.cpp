// SPDX-License-Identifier: BSD-3-Clause
// Writes the seed corpora of the frame harnesses (tests/fuzz/corpus/
// pipeline and gro) from the test frame builder: the emulated NIC's
// traffic kinds (UDP, TCP stream, IPv6, ARP, VLAN) and its malformed-frame
// table (bad checksum, truncated, bad IHL, bad version, bad total length),
// in each harness's record format. Run by gen_corpus.sh; no EAL needed.
// Also the pcap reader's seeds: classic pcap files of those frames (both
// byte orders, usec and nsec), truncated, with a wrong magic.
// usage: gen_corpus OUT_DIR (writes OUT_DIR/{pipeline,gro,pcap}/*)
#include <cstdio>
#include <string>
#include <vector>

#include "frames.h"

using namespace lrx_test::frames;
using Bytes = std::vector<uint8_t>;

static void write(const std::string &path, const Bytes &b)
{
	FILE *f = std::fopen(path.c_str(), "wb");
	if (!f || std::fwrite(b.data(), 1, b.size(), f) != b.size()) {
		std::perror(path.c_str());
		std::exit(1);
	}
	std::fclose(f);
}

// fuzz_pipeline record: ctl, len (LE), hint, bytes
static void record(Bytes &out, const Frame &f, uint8_t ctl, uint8_t hint)
{
	out.push_back(ctl);
	out.push_back((uint8_t)f.size());
	out.push_back((uint8_t)(f.size() >> 8));
	out.push_back(hint);
	out.insert(out.end(), f.data.begin(), f.data.end());
}

static Frame tcp_seg(uint32_t seq, size_t len, uint8_t flags = TCP_ACK)
{
	Spec s;
	s.l4 = L4::tcp;
	s.seq = seq;
	s.tcp_flags = flags;
	s.payload.assign(len, 0x5a);
	s.default_payload = false;
	s.pad_to = 0;
	return build(s);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
		return 2;
	}
	const std::string dir = argv[1];

	// the NIC's traffic kinds and malformed table, one frame each
	std::vector<std::pair<std::string, Frame>> kinds;
	kinds.push_back({"udp4", udp4()});
	kinds.push_back({"udp6", udp6()});
	kinds.push_back({"tcp4", tcp4()});
	kinds.push_back({"arp", arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2))});
	{
		Spec s;
		s.vlans = {100};
		kinds.push_back({"vlan", build(s)});
		s.vlans = {100, 200};
		kinds.push_back({"qinq", build(s)});
		Spec i;
		i.l4 = L4::icmp;
		kinds.push_back({"icmp", build(i)});
		Spec h;
		h.l3 = L3::ipv6;
		h.ip6_hop_by_hop = true;
		kinds.push_back({"ip6hbh", build(h)});
		Spec o;
		o.ip4_options = {0x94, 4, 0, 0}; // router alert
		kinds.push_back({"ip4opt", build(o)});
	}
	// IPv6 extension headers (exthdrs.c) and multicast/broadcast
	// destinations (mcast.c)
	kinds.push_back({"ip6dstopts", ip6_insert_ext(udp6(), 60, ip6_ext(17, {1, 4, 0, 0, 0, 0}))});
	kinds.push_back({"ip6dstopts_unknown", ip6_insert_ext(udp6(), 60, ip6_ext(17, {0x9e, 2, 0, 0, 1, 0}))});
	kinds.push_back({"ip6rthdr", ip6_insert_ext(udp6(), 43, ip6_ext(17, {0, 1, 0, 0, 0, 0}))});
	kinds.push_back({"ip6chain", ip6_insert_ext(udp6(), 60,
		[] { auto a = ip6_ext(43, {1, 4, 0, 0, 0, 0}), b = ip6_ext(59, {2, 0, 0, 0, 0, 0});
		     a.insert(a.end(), b.begin(), b.end()); return a; }())});
	{
		Spec m;
		m.dst = {0x01, 0x00, 0x5e, 0x01, 0x01, 0x01};
		m.ip4_dst = ip4(239, 1, 1, 1);
		m.dport = 3000;
		kinds.push_back({"mcast4", build(m)});
		Spec b;
		b.dst = mac_broadcast;
		b.ip4_dst = ip4(10, 0, 0, 255);
		kinds.push_back({"bcast4", build(b)});
		Spec m6;
		m6.l3 = L3::ipv6;
		m6.dst = {0x33, 0x33, 0, 0, 0, 1};
		m6.ip6_dst = ip6({0xff05, 0, 0, 0, 0, 0, 0, 1});
		kinds.push_back({"mcast6", build(m6)});
	}
	kinds.push_back({"bad_csum", udp4().ip4_corrupt_csum()});
	kinds.push_back({"truncated", udp4().truncate(30)});
	kinds.push_back({"bad_ihl", udp4().ip4_ihl(4)});
	kinds.push_back({"bad_version", udp4().ip4_version(5)});
	kinds.push_back({"bad_total_len", udp4().ip4_total_length(2000)});
	kinds.push_back({"bad_l4_csum", tcp4().l4_corrupt_csum()});
	kinds.push_back({"fragment", udp4().ip4_frag(0x2000)});

	// fuzz_pipeline: byte 0 picks the pipeline; one seed per kind (with a
	// few pipeline choices), one mixed burst, one TCP stream with polls
	unsigned n = 0;
	for (auto &k : kinds) {
		for (uint8_t pick : {0, 1, 2, 6, 13}) {
			Bytes b = {pick};
			record(b, k.second, 1, 0x15);
			write(dir + "/pipeline/" + k.first + "_" + std::to_string(pick), b);
			n++;
		}
	}
	{
		Bytes b = {0};
		for (auto &k : kinds)
			record(b, k.second, 0, 0);
		write(dir + "/pipeline/mixed_burst", b);
		Bytes s = {2};
		for (uint32_t i = 0; i < 12; i++)
			record(s, tcp_seg(1000 + i * 100, 100, i == 11 ? TCP_ACK | TCP_PSH : TCP_ACK),
			       i % 4 == 3 ? 1 : 0, 0x05);
		write(dir + "/pipeline/tcp_stream_polls", s);
		Bytes c = {0};
		record(c, tcp_seg(1, 400), 0x04 | 0x20, 0); // as a chain of 64-byte segments
		write(dir + "/pipeline/chained", c);
		n += 3;
	}
	// reassembly: fragment streams of one UDP datagram (IPv4 and IPv6),
	// in and out of order, with a duplicate, an overlap, across polls
	{
		Spec s4;
		s4.payload.assign(200, 0x3c);
		s4.default_payload = false;
		const Frame w4 = build(s4);
		Spec s6 = s4;
		s6.l3 = L3::ipv6;
		const Frame w6 = build(s6);
		auto frag4 = [&](uint32_t off, uint32_t len, bool mf) {
			Frame f;
			const size_t hdr = w4.l2_len + 20u;
			f.data.assign(w4.data.begin(), w4.data.begin() + hdr);
			f.data.insert(f.data.end(), w4.data.begin() + hdr + off,
				      w4.data.begin() + hdr + off + len);
			f.l2_len = w4.l2_len;
			f.set_be16(w4.l2_len + 2, (uint16_t)(20 + len));
			f.set_be16(w4.l2_len + 6, (uint16_t)((mf ? 0x2000 : 0) | (off >> 3)));
			f.l3 = L3::ipv4;
			f.ip4_fix_csum();
			return f;
		};
		auto frag6 = [&](uint32_t off, uint32_t len, bool mf) {
			Frame f;
			const size_t hdr = w6.l2_len + 40u;
			f.data.assign(w6.data.begin(), w6.data.begin() + hdr);
			const uint16_t fo = (uint16_t)(off | (mf ? 1 : 0));
			const uint8_t fh[8] = {17, 0, (uint8_t)(fo >> 8), (uint8_t)fo, 0, 0, 0x12, 0x34};
			f.data.insert(f.data.end(), fh, fh + 8);
			f.data.insert(f.data.end(), w6.data.begin() + hdr + off,
				      w6.data.begin() + hdr + off + len);
			f.set_u8(w6.l2_len + 6, 44);
			f.set_be16(w6.l2_len + 4, (uint16_t)(8 + len));
			return f;
		};
		const std::vector<std::pair<std::string, std::vector<Frame>>> streams = {
			{"frag4_in_order", {frag4(0, 80, true), frag4(80, 80, true), frag4(160, 48, false)}},
			{"frag4_reverse", {frag4(160, 48, false), frag4(80, 80, true), frag4(0, 80, true)}},
			{"frag4_dup", {frag4(0, 80, true), frag4(0, 80, true), frag4(80, 128, false)}},
			{"frag4_overlap", {frag4(0, 80, true), frag4(40, 80, true), frag4(160, 48, false)}},
			{"frag6_in_order", {frag6(0, 96, true), frag6(96, 96, true), frag6(192, 16, false)}},
			{"frag6_reverse", {frag6(192, 16, false), frag6(96, 96, true), frag6(0, 96, true)}},
			{"frag6_atomic", {frag6(0, 208, false)}},
			{"frag6_truncated_first", {frag6(0, 4, true)}},
		};
		for (auto &st : streams)
			for (uint8_t pick : {0, 1, 2, 5}) {
				Bytes b = {pick};
				for (size_t i = 0; i < st.second.size(); i++)
					record(b, st.second[i], i % 2 ? 1 : 0, 0);
				write(dir + "/pipeline/" + st.first + "_" + std::to_string(pick), b);
				n++;
			}
	}

	// fuzz_gro: 6-byte records (see fuzz_gro.cpp)
	auto seg = [](Bytes &b, uint8_t flow, uint8_t flags, uint8_t len6,
		      uint8_t jump, uint8_t ip, uint8_t opt) {
		b.insert(b.end(), {(uint8_t)(flow << 2), flags, len6, jump, ip, opt});
	};
	const uint8_t flush = 3 | 4, flush_one = 3 | 4 | 0x10;
	{
		Bytes b = {0};
		for (int i = 0; i < 8; i++)
			seg(b, 0, 0, 100, 0, 0, 1);
		b.insert(b.end(), {flush, 0, 0, 0, 0, 0});
		write(dir + "/gro/stream", b);
		Bytes x = {0};
		for (int i = 0; i < 12; i++)
			seg(x, (uint8_t)(i % 3), i == 5 ? TCP_PSH : 0, 200, i == 7 ? 210 : 0,
			    0, 0);
		x.insert(x.end(), {flush_one, 0, 0, 0, 0, 0});
		write(dir + "/gro/interleaved", x);
		Bytes v = {1};
		for (int i = 0; i < 6; i++) {
			uint8_t f = (uint8_t)(0x10 | (i & 1) << 5); // IPv6, TCP and UDP
			v.insert(v.end(), {f, 0, 120, 0, (uint8_t)(i == 3 ? 1 : 0), 0});
		}
		v.insert(v.end(), {3 | 4 | 8, 0, 0, 0, 0, 0});
		write(dir + "/gro/v6_udp_tos", v);
		Bytes r = {2};
		seg(r, 1, 0, 100, 0, 0x40, 0);
		seg(r, 1, 0, 100, 0, 0x80, 0);
		Frame bad = tcp4().ip4_total_length(1000);
		r.insert(r.end(), {2, 0, (uint8_t)((bad.size() + 7) / 8), 0, 0, 0});
		r.insert(r.end(), bad.data.begin(), bad.data.end());
		r.resize(r.size() + (8 - bad.size() % 8) % 8, 0);
		seg(r, 1, TCP_FIN, 100, 0, 0, 0);
		write(dir + "/gro/vlan_pad_raw_fin", r);
		n += 4;
	}
	// pcap: header (magic, 2.4, zone, sigfigs, snaplen, linktype 1) and
	// records (ts_sec, ts_frac, caplen, len), in either byte order
	auto pcap = [&](uint32_t magic, bool swap, size_t n_frames) {
		Bytes b;
		auto u32 = [&](uint32_t v) {
			for (int i = 0; i < 4; i++)
				b.push_back((uint8_t)(swap ? v >> (24 - 8 * i) : v >> (8 * i)));
		};
		auto u16 = [&](uint16_t v) {
			b.push_back((uint8_t)(swap ? v >> 8 : v));
			b.push_back((uint8_t)(swap ? v : v >> 8));
		};
		u32(magic);
		u16(2);
		u16(4);
		u32(0);
		u32(0);
		u32(65535);
		u32(1);
		for (size_t i = 0; i < n_frames && i < kinds.size(); i++) {
			const Frame &f = kinds[i].second;
			u32((uint32_t)i);
			u32(0);
			u32((uint32_t)f.size());
			u32((uint32_t)f.size());
			b.insert(b.end(), f.data.begin(), f.data.end());
		}
		return b;
	};
	write(dir + "/pcap/usec", pcap(0xa1b2c3d4, false, kinds.size()));
	write(dir + "/pcap/nsec_swapped", pcap(0xa1b23c4d, true, 4));
	Bytes cut = pcap(0xa1b2c3d4, false, 3);
	cut.resize(cut.size() - 10);
	write(dir + "/pcap/truncated", cut);
	write(dir + "/pcap/bad_magic", pcap(0x0a0d0d0a, false, 1));
	n += 4;
	std::printf("gen_corpus: %u frame seeds written under %s\n", n, dir.c_str());
	return 0;
}
