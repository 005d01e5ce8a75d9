// SPDX-License-Identifier: BSD-3-Clause
// Fragment streams for the reassembly tests: a UDP datagram (IPv4 or
// IPv6) and byte ranges of its IP payload as fragments, built the way a
// sender's ip_fragment / ip6_fragment would.
#pragma once

#include <cstdint>
#include <vector>

#include "frames.h"

namespace lrx_test {
namespace reasm {

using namespace lrx_test::frames;
using lrx_test::frames::Frame; // not the pcap writer's lrx_test::Frame

inline std::vector<uint8_t> seq_payload(size_t n)
{
	std::vector<uint8_t> p(n);
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + 3);
	return p;
}

// A UDP datagram of 200 payload bytes (208 bytes of IP payload).
inline Frame whole4(uint16_t id = 77)
{
	Spec s;
	s.payload = seq_payload(200);
	s.ip_id = id;
	return build(s);
}
inline Frame whole6()
{
	Spec s;
	s.l3 = L3::ipv6;
	s.payload = seq_payload(200);
	return build(s);
}

// Bytes [off, off + len) of w's IP payload as an IPv4 fragment.
inline Frame frag4(const Frame &w, uint32_t off, uint32_t len, bool mf)
{
	Frame f;
	const size_t hdr = w.l2_len + 20u;
	f.data.assign(w.data.begin(), w.data.begin() + hdr);
	f.data.insert(f.data.end(), w.data.begin() + hdr + off,
		      w.data.begin() + hdr + off + len);
	f.l2_len = w.l2_len;
	f.l3 = L3::ipv4;
	f.set_be16(w.l2_len + 2, (uint16_t)(20 + len));
	f.set_be16(w.l2_len + 6, (uint16_t)((mf ? 0x2000 : 0) | (off >> 3)));
	f.ip4_fix_csum();
	if (f.data.size() < 60)
		f.data.resize(60, 0); // Ethernet padding, trimmed by ip_rcv
	return f;
}

// The same for IPv6: a fragment header (identification id, next header
// UDP) after the fixed header.
inline Frame frag6(const Frame &w, uint32_t off, uint32_t len, bool mf,
		   uint32_t id = 0x1234)
{
	Frame f;
	const size_t hdr = w.l2_len + 40u;
	f.data.assign(w.data.begin(), w.data.begin() + hdr);
	const uint16_t fo = (uint16_t)(off | (mf ? 1 : 0));
	const uint8_t fh[8] = {w.u8(w.l2_len + 6), 0, (uint8_t)(fo >> 8),
			       (uint8_t)fo, (uint8_t)(id >> 24), (uint8_t)(id >> 16),
			       (uint8_t)(id >> 8), (uint8_t)id};
	f.data.insert(f.data.end(), fh, fh + 8);
	f.data.insert(f.data.end(), w.data.begin() + hdr + off,
		      w.data.begin() + hdr + off + len);
	f.l2_len = w.l2_len;
	f.l3 = L3::ipv6;
	f.set_u8(w.l2_len + 6, 44);
	f.set_be16(w.l2_len + 4, (uint16_t)(8 + len));
	if (f.data.size() < 60)
		f.data.resize(60, 0);
	return f;
}

// The datagram as ip_frag_reasm leaves it: no MF, offset 0, no DF (the
// fragments had none), checksum recomputed.
inline Frame reassembled4(const Frame &w)
{
	Frame e = w;
	e.set_be16(w.l2_len + 6, 0);
	e.ip4_fix_csum();
	return e;
}

// ip_frag_too_far: the first fragment of datagram id, then `between` last
// fragments of other datagrams from the same source, then its own last.
inline std::vector<Frame> far_stream(uint16_t id, uint16_t others_from,
				     unsigned between)
{
	const Frame w = whole4(id);
	std::vector<Frame> v = {frag4(w, 0, 80, true)};
	for (unsigned i = 0; i < between; i++)
		v.push_back(frag4(whole4((uint16_t)(others_from + i)), 80, 128, false));
	v.push_back(frag4(w, 80, 128, false));
	return v;
}

} // namespace reasm
} // namespace lrx_test
