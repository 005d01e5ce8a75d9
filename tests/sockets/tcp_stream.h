// SPDX-License-Identifier: BSD-3-Clause
// A TCP stream 10.0.0.1:40000 -> 10.0.0.2:5201 for the receive-side tests:
// segments whose bytes are a function of their sequence numbers, the
// FNV-1a digest the application computes over what it reads, and one
// schedule of in-order, reordered, duplicate and overlapping segments.
#pragma once

#include <cstdint>
#include <vector>

#include "frames.h"

namespace lrx_test {
namespace tcp_stream {

using namespace lrx_test::frames;

constexpr uint32_t isn = 1000; // the SYN's seq: data starts at isn + 1

// the stream's byte at sequence number seq: any two segments that
// overlap carry the same bytes there
inline uint8_t stream_byte(uint32_t seq)
{
	return (uint8_t)((seq * 7u) ^ 0x5au);
}

inline Frame segment(uint32_t seq, uint16_t len, uint8_t flags = TCP_ACK,
		     uint32_t ack = 1)
{
	return with([&](Spec &s) {
		s.l4 = L4::tcp;
		s.sport = 40000;
		s.dport = 5201;
		s.seq = seq;
		s.ack = ack;
		s.tcp_flags = flags;
		s.default_payload = false;
		for (uint32_t i = 0; i < len; i++)
			s.payload.push_back(stream_byte(seq + i));
	});
}

// FNV-1a of the stream's first n bytes, as the application hashes them
inline uint64_t stream_digest(uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < n; i++)
		h = (h ^ stream_byte(isn + 1 + i)) * 0x100000001b3ull;
	return h;
}

// The SYN, then 100-byte segments k (seq isn + 1 + 100 k) in this order:
// 3, 5 and 6 out of order (4 releases 5 and 6); 4 and 1 again (all old);
// 150 bytes from 8 (out of order), 8 again (all held already: OFOMerge),
// 7 (releases 8 and half of 9), 9 (its head received already: trimmed)
inline std::vector<Frame> reordered_stream(uint32_t ack = 1)
{
	std::vector<Frame> f = {segment(isn, 0, TCP_SYN, 0)};
	for (int k : {0, 1, 3, 2, 5, 6, 4, 4, 1})
		f.push_back(segment(isn + 1 + 100u * (uint32_t)k, 100, TCP_ACK, ack));
	f.push_back(segment(isn + 1 + 800, 150, TCP_ACK, ack)); // 8 and half of 9
	f.push_back(segment(isn + 1 + 800, 100, TCP_ACK, ack)); // 8 again: all held already
	f.push_back(segment(isn + 1 + 700, 100, TCP_ACK, ack)); // 7: releases 8..8.5
	f.push_back(segment(isn + 1 + 900, 100, TCP_ACK, ack)); // 9: its head was received
	return f;
}
constexpr uint32_t reordered_bytes = 1000;

} // namespace tcp_stream
} // namespace lrx_test
