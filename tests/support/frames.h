// SPDX-License-Identifier: BSD-3-Clause
// A small test frame builder, independent of the emulated NIC's generator:
// Ethernet with 0..2 VLAN tags, IPv4 (with options) or IPv6 (with an
// optional hop-by-hop header), UDP, TCP (with options), ICMP/ICMPv6 echo,
// raw L4 payloads and ARP, all with correct lengths and checksums. Mutators
// then break exactly one field each (they keep the IPv4 header checksum
// valid unless the mutator is about that checksum, so that a test exercises
// the one check it means to).
//
//   using namespace lrx_test::frames;
//   Spec s;                        // IPv4/UDP 10.0.0.1:1000 -> 10.0.0.2:2000
//   s.vlans = {100};               // one 802.1Q tag
//   Frame f = build(s);
//   f.ip4_version(5);              // header checksum recomputed
//   rte_mbuf *m = f.to_mbuf(pool); // one segment
//
// Offsets in a Frame are from the first byte of the Ethernet header.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include <rte_mbuf.h>
#include <rte_mempool.h>

namespace lrx_test {
namespace frames {

using Mac = std::array<uint8_t, 6>;
using Ip6 = std::array<uint8_t, 16>;

enum class L3 { none, ipv4, ipv6, arp };
enum class L4 { none, udp, tcp, icmp, raw };

// IPv4 addresses are host order: ip4(10, 0, 0, 1).
constexpr uint32_t ip4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	return (uint32_t)a << 24 | (uint32_t)b << 16 | (uint32_t)c << 8 | d;
}
// 2001:db8::<last> style addresses: prefix 2001:db8::/64, last byte given.
Ip6 ip6_doc(uint8_t last);
// An IPv6 address from 8 groups: ip6({0xff02, 0, 0, 0, 0, 0, 0, 1}).
Ip6 ip6(const std::array<uint16_t, 8> &groups);

constexpr Mac mac_host = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
constexpr Mac mac_peer = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
constexpr Mac mac_broadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

// TCP flags
enum : uint8_t {
	TCP_FIN = 0x01, TCP_SYN = 0x02, TCP_RST = 0x04, TCP_PSH = 0x08,
	TCP_ACK = 0x10, TCP_URG = 0x20,
};

struct Spec {
	Mac dst = mac_host, src = mac_peer;
	// VLAN TCIs, outer first (0..2). The outer tag uses outer_tpid when
	// there are two (0x88a8 = 802.1ad), 0x8100 otherwise.
	std::vector<uint16_t> vlans;
	uint16_t outer_tpid = 0x88a8;

	L3 l3 = L3::ipv4;
	uint16_t ethertype = 0; // for L3::none: the ethertype to write

	// IPv4
	uint32_t ip4_src = ip4(10, 0, 0, 1), ip4_dst = ip4(10, 0, 0, 2);
	uint8_t tos = 0, ttl = 64;
	uint16_t ip_id = 1;
	uint16_t frag = 0x4000;            // flags + offset field (DF)
	std::vector<uint8_t> ip4_options;  // padded with EOL to 4 bytes
	// IPv6
	Ip6 ip6_src = ip6_doc(1), ip6_dst = ip6_doc(2);
	uint8_t hop_limit = 64;
	uint32_t flow_label = 0;
	bool ip6_hop_by_hop = false;       // 8-byte HBH header with PadN

	L4 l4 = L4::udp;
	uint8_t ip_proto = 0;              // for L4::raw (e.g. 47 GRE)
	uint16_t sport = 1000, dport = 2000;
	uint32_t seq = 1, ack = 0;
	uint8_t tcp_flags = TCP_ACK;
	uint16_t window = 65535;
	std::vector<uint8_t> tcp_options;  // padded with NOP to 4 bytes
	uint8_t icmp_type = 8, icmp_code = 0; // echo request (v6: 128)
	std::vector<uint8_t> payload;      // L4 payload (default: 18 bytes)
	bool default_payload = true;       // use 18 bytes 0..17 if payload empty

	// ARP (L3::arp): operation 1 request, 2 reply
	uint16_t arp_op = 1;
	uint32_t arp_sender_ip = ip4(10, 0, 0, 1), arp_target_ip = ip4(10, 0, 0, 2);
	Mac arp_sender_mac = mac_peer, arp_target_mac = {};

	// Ethernet padding after the L3 packet: frames are padded with zeros
	// to at least pad_to bytes (60 = minimum Ethernet frame without FCS).
	size_t pad_to = 60;
};

struct Frame {
	std::vector<uint8_t> data;
	uint16_t l2_len = 0;  // Ethernet + VLAN tags (= l3 offset)
	uint16_t l4_off = 0;  // 0 when there is no L4 header
	uint16_t l3_len = 0;  // IPv4 total length / IPv6 40 + payload length
	L3 l3 = L3::none;
	L4 l4 = L4::none;
	uint8_t ip_proto = 0;

	size_t size() const { return data.size(); }

	// raw access (offsets from the frame start)
	uint8_t u8(size_t off) const { return data.at(off); }
	uint16_t be16(size_t off) const;
	uint32_t be32(size_t off) const;
	Frame &set_u8(size_t off, uint8_t v);
	Frame &set_be16(size_t off, uint16_t v);
	Frame &set_be32(size_t off, uint32_t v);

	// checksums
	Frame &ip4_fix_csum();           // recompute the IPv4 header checksum
	Frame &l4_fix_csum();            // recompute UDP/TCP/ICMP checksum
	bool ip4_csum_ok() const;
	bool l4_csum_ok() const;

	// IPv4 mutators (header checksum recomputed afterwards)
	Frame &ip4_version(uint8_t v);
	Frame &ip4_ihl(uint8_t words);
	Frame &ip4_total_length(uint16_t len);
	Frame &ip4_frag(uint16_t flags_offset);
	Frame &ip4_src(uint32_t addr);
	Frame &ip4_dst(uint32_t addr);
	Frame &ip4_proto(uint8_t proto);
	Frame &ip4_corrupt_csum();       // header checksum made wrong
	// IPv6 mutators
	Frame &ip6_version(uint8_t v);
	Frame &ip6_payload_length(uint16_t len);
	Frame &ip6_next_header(uint8_t nh); // of the last header in the chain
	Frame &ip6_src(const Ip6 &a);
	Frame &ip6_dst(const Ip6 &a);
	// L4 mutators (checksum left as is unless *_fix_csum() is called)
	Frame &udp_length(uint16_t len);
	Frame &udp_zero_csum();
	Frame &tcp_doff(uint8_t words);
	Frame &l4_corrupt_csum();
	// Frame length
	Frame &truncate(size_t new_size);  // cut the frame (keeps headers' fields)
	Frame &append(size_t n, uint8_t fill = 0); // trailing bytes (padding)

	// One-segment mbuf holding the frame (nullptr if the pool is empty or
	// the frame does not fit). ol_flags 0, port 0, packet_type 0.
	rte_mbuf *to_mbuf(rte_mempool *mp) const;
	// The frame split into segments of at most seg_size bytes (chained).
	rte_mbuf *to_mbuf_chain(rte_mempool *mp, size_t seg_size) const;
};

Frame build(const Spec &spec);
// A frame from a Spec that f changes from the defaults:
// with([](Spec &s) { s.dport = 53; })
inline Frame with(const std::function<void(Spec &)> &f)
{
	Spec s;
	f(s);
	return build(s);
}

// Shorthands for the common cases (all other fields default).
Frame udp4(uint16_t sport = 1000, uint16_t dport = 2000);
Frame tcp4(uint8_t flags = TCP_ACK, uint16_t sport = 1000, uint16_t dport = 2000);
Frame udp6(uint16_t sport = 1000, uint16_t dport = 2000);
Frame arp_request(uint32_t sender_ip, uint32_t target_ip);
// An ICMP (IPv6: ICMPv6) error of type/code from the peer (10.0.0.1,
// 2001:db8::1) quoting a datagram this host sent: proto (L4::udp, tcp or
// icmp) from 10.0.0.<local_last>:sport (2001:db8::<local_last>) to the
// peer's port 53; the whole datagram quoted, or its first keep bytes.
Frame icmp_error(bool v6, uint8_t type, uint8_t code, L4 proto, uint16_t sport,
		 uint8_t local_last = 2, size_t keep = 0);

// RFC 1071 Internet checksum of a byte range (folded, complemented).
uint16_t inet_checksum(const uint8_t *p, size_t len, uint32_t sum = 0);

// Bytes of an mbuf chain (for comparing output).
std::vector<uint8_t> mbuf_bytes(const rte_mbuf *m);

} // namespace frames
} // namespace lrx_test

// ---- IPv6 extension header builders
namespace lrx_test {
namespace frames {
// The IPv6 frame f with ext (a chain of extension headers, built with
// ip6_ext) inserted right after the fixed header: the fixed header's Next
// Header becomes first_type, the payload length grows, offsets follow. The
// last header of ext must name the upper layer f carried.
Frame ip6_insert_ext(const Frame &f, uint8_t first_type, const std::vector<uint8_t> &ext);
// One extension header {next, hdr_ext_len, body...}, zero-padded to 8n bytes.
std::vector<uint8_t> ip6_ext(uint8_t next, const std::vector<uint8_t> &body);
} // namespace frames
} // namespace lrx_test
