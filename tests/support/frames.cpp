// SPDX-License-Identifier: BSD-3-Clause
#include "frames.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace lrx_test {
namespace frames {

namespace {

void put16(std::vector<uint8_t> &v, uint16_t x)
{
	v.push_back((uint8_t)(x >> 8));
	v.push_back((uint8_t)x);
}
void put32(std::vector<uint8_t> &v, uint32_t x)
{
	put16(v, (uint16_t)(x >> 16));
	put16(v, (uint16_t)x);
}

uint32_t sum_bytes(const uint8_t *p, size_t len, uint32_t sum)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

constexpr uint8_t IPPROTO_ICMP_ = 1, IPPROTO_TCP_ = 6, IPPROTO_UDP_ = 17,
		  IPPROTO_ICMPV6_ = 58, IPPROTO_HOPOPTS_ = 0;

} // namespace

uint16_t inet_checksum(const uint8_t *p, size_t len, uint32_t sum)
{
	return (uint16_t)~fold(sum_bytes(p, len, sum));
}

Ip6 ip6_doc(uint8_t last)
{
	Ip6 a{};
	a[0] = 0x20; a[1] = 0x01; a[2] = 0x0d; a[3] = 0xb8;
	a[15] = last;
	return a;
}

Ip6 ip6(const std::array<uint16_t, 8> &groups)
{
	Ip6 a{};
	for (size_t i = 0; i < 8; i++) {
		a[2 * i] = (uint8_t)(groups[i] >> 8);
		a[2 * i + 1] = (uint8_t)groups[i];
	}
	return a;
}

Frame build(const Spec &s)
{
	Frame f;
	auto &d = f.data;
	d.insert(d.end(), s.dst.begin(), s.dst.end());
	d.insert(d.end(), s.src.begin(), s.src.end());
	if (s.vlans.size() > 2)
		throw std::invalid_argument("frames: at most two VLAN tags");
	for (size_t i = 0; i < s.vlans.size(); i++) {
		bool outer_of_two = s.vlans.size() == 2 && i == 0;
		put16(d, outer_of_two ? s.outer_tpid : 0x8100);
		put16(d, s.vlans[i]);
	}
	uint16_t ethertype = s.ethertype;
	switch (s.l3) {
	case L3::ipv4: ethertype = 0x0800; break;
	case L3::ipv6: ethertype = 0x86dd; break;
	case L3::arp: ethertype = 0x0806; break;
	case L3::none: break;
	}
	put16(d, ethertype);
	f.l2_len = (uint16_t)d.size();
	f.l3 = s.l3;

	if (s.l3 == L3::arp) {
		put16(d, 1);      // hardware type Ethernet
		put16(d, 0x0800); // protocol IPv4
		d.push_back(6);
		d.push_back(4);
		put16(d, s.arp_op);
		d.insert(d.end(), s.arp_sender_mac.begin(), s.arp_sender_mac.end());
		put32(d, s.arp_sender_ip);
		d.insert(d.end(), s.arp_target_mac.begin(), s.arp_target_mac.end());
		put32(d, s.arp_target_ip);
		f.l3_len = 28;
	}

	if (s.l3 != L3::ipv4 && s.l3 != L3::ipv6) {
		if (s.l3 == L3::none)
			d.insert(d.end(), s.payload.begin(), s.payload.end());
		if (d.size() < s.pad_to)
			d.resize(s.pad_to, 0);
		return f;
	}

	// L4 header + payload first, then the L3 header in front of it.
	std::vector<uint8_t> payload = s.payload;
	if (payload.empty() && s.default_payload)
		for (uint8_t i = 0; i < 18; i++)
			payload.push_back(i);
	std::vector<uint8_t> l4;
	uint8_t proto = 0;
	switch (s.l4) {
	case L4::udp:
		proto = IPPROTO_UDP_;
		put16(l4, s.sport);
		put16(l4, s.dport);
		put16(l4, (uint16_t)(8 + payload.size()));
		put16(l4, 0);
		break;
	case L4::tcp: {
		proto = IPPROTO_TCP_;
		std::vector<uint8_t> opts = s.tcp_options;
		while (opts.size() % 4)
			opts.push_back(1); // NOP
		put16(l4, s.sport);
		put16(l4, s.dport);
		put32(l4, s.seq);
		put32(l4, s.ack);
		l4.push_back((uint8_t)(((20 + opts.size()) / 4) << 4));
		l4.push_back(s.tcp_flags);
		put16(l4, s.window);
		put16(l4, 0); // checksum
		put16(l4, 0); // urgent pointer
		l4.insert(l4.end(), opts.begin(), opts.end());
		break;
	}
	case L4::icmp:
		proto = s.l3 == L3::ipv6 ? IPPROTO_ICMPV6_ : IPPROTO_ICMP_;
		l4.push_back(s.l3 == L3::ipv6 && s.icmp_type == 8 ? 128
								  : s.icmp_type);
		l4.push_back(s.icmp_code);
		put16(l4, 0);
		put16(l4, 0x1234); // identifier
		put16(l4, 1);      // sequence
		break;
	case L4::raw:
		proto = s.ip_proto;
		break;
	case L4::none:
		proto = s.ip_proto;
		payload.clear();
		break;
	}
	l4.insert(l4.end(), payload.begin(), payload.end());
	f.l4 = s.l4;
	f.ip_proto = proto;

	if (s.l3 == L3::ipv4) {
		std::vector<uint8_t> opts = s.ip4_options;
		while (opts.size() % 4)
			opts.push_back(0); // EOL
		size_t ihl = 20 + opts.size();
		f.l3_len = (uint16_t)(ihl + l4.size());
		d.push_back((uint8_t)(0x40 | (ihl / 4)));
		d.push_back(s.tos);
		put16(d, f.l3_len);
		put16(d, s.ip_id);
		put16(d, s.frag);
		d.push_back(s.ttl);
		d.push_back(proto);
		put16(d, 0);
		put32(d, s.ip4_src);
		put32(d, s.ip4_dst);
		d.insert(d.end(), opts.begin(), opts.end());
	} else {
		size_t ext = s.ip6_hop_by_hop ? 8 : 0;
		f.l3_len = (uint16_t)(40 + ext + l4.size());
		put32(d, 0x60000000u | (s.flow_label & 0xfffff));
		put16(d, (uint16_t)(ext + l4.size()));
		d.push_back(s.ip6_hop_by_hop ? IPPROTO_HOPOPTS_ : proto);
		d.push_back(s.hop_limit);
		d.insert(d.end(), s.ip6_src.begin(), s.ip6_src.end());
		d.insert(d.end(), s.ip6_dst.begin(), s.ip6_dst.end());
		if (s.ip6_hop_by_hop) {
			// next header, length 0 (8 bytes), PadN of 4 bytes
			const uint8_t hbh[8] = {proto, 0, 1, 4, 0, 0, 0, 0};
			d.insert(d.end(), hbh, hbh + 8);
		}
	}
	f.l4_off = (uint16_t)d.size();
	d.insert(d.end(), l4.begin(), l4.end());
	if (s.l4 == L4::none || s.l4 == L4::raw)
		f.l4_off = s.l4 == L4::raw ? f.l4_off : 0;
	if (d.size() < s.pad_to)
		d.resize(s.pad_to, 0);
	if (s.l3 == L3::ipv4)
		f.ip4_fix_csum();
	f.l4_fix_csum();
	return f;
}

uint16_t Frame::be16(size_t off) const
{
	return (uint16_t)(data.at(off) << 8 | data.at(off + 1));
}
uint32_t Frame::be32(size_t off) const
{
	return (uint32_t)be16(off) << 16 | be16(off + 2);
}
Frame &Frame::set_u8(size_t off, uint8_t v)
{
	data.at(off) = v;
	return *this;
}
Frame &Frame::set_be16(size_t off, uint16_t v)
{
	data.at(off) = (uint8_t)(v >> 8);
	data.at(off + 1) = (uint8_t)v;
	return *this;
}
Frame &Frame::set_be32(size_t off, uint32_t v)
{
	set_be16(off, (uint16_t)(v >> 16));
	return set_be16(off + 2, (uint16_t)v);
}

namespace {
size_t ip4_header_len(const Frame &f)
{
	return (size_t)(f.data.at(f.l2_len) & 0x0f) * 4;
}
} // namespace

Frame &Frame::ip4_fix_csum()
{
	size_t ihl = ip4_header_len(*this);
	if (ihl < 20)
		ihl = 20; // keep the checksum of the 20 bytes for IHL < 5
	if (l2_len + ihl > data.size())
		return *this;
	set_be16(l2_len + 10, 0);
	return set_be16(l2_len + 10, inet_checksum(&data[l2_len], ihl));
}

bool Frame::ip4_csum_ok() const
{
	size_t ihl = ip4_header_len(*this);
	return inet_checksum(&data[l2_len], ihl) == 0;
}

namespace {
// Sum of the pseudo header and the L4 bytes [l4_off, l3 end).
uint32_t l4_sum(const Frame &f, size_t l4_len)
{
	uint32_t sum = 0;
	const uint8_t *l3 = &f.data[f.l2_len];
	if (f.l3 == L3::ipv4) {
		sum = sum_bytes(l3 + 12, 8, 0);
	} else {
		sum = sum_bytes(l3 + 8, 32, 0);
		sum += (uint32_t)(l4_len >> 16);
	}
	sum += f.ip_proto;
	sum += (uint32_t)(l4_len & 0xffff);
	return sum_bytes(&f.data[f.l4_off], l4_len, sum);
}

size_t l4_csum_field(const Frame &f)
{
	switch (f.l4) {
	case L4::udp: return 6;
	case L4::tcp: return 16;
	case L4::icmp: return 2;
	default: return 0;
	}
}
} // namespace

Frame &Frame::l4_fix_csum()
{
	size_t field = l4_csum_field(*this);
	if (!field || !l4_off)
		return *this;
	size_t l4_len = l2_len + l3_len - l4_off;
	if (l4_off + l4_len > data.size())
		return *this;
	set_be16(l4_off + field, 0);
	uint16_t csum;
	if (l4 == L4::icmp && l3 == L3::ipv4) {
		csum = inet_checksum(&data[l4_off], l4_len);
	} else {
		csum = (uint16_t)~fold(l4_sum(*this, l4_len));
		if (csum == 0 && l4 == L4::udp)
			csum = 0xffff; // RFC 768: 0 means "no checksum"
	}
	return set_be16(l4_off + field, csum);
}

bool Frame::l4_csum_ok() const
{
	size_t l4_len = l2_len + l3_len - l4_off;
	if (l4 == L4::icmp && l3 == L3::ipv4)
		return inet_checksum(&data[l4_off], l4_len) == 0;
	return fold(l4_sum(*this, l4_len)) == 0xffff;
}

Frame &Frame::ip4_version(uint8_t v)
{
	data.at(l2_len) = (uint8_t)((v << 4) | (data[l2_len] & 0x0f));
	return ip4_fix_csum();
}
Frame &Frame::ip4_ihl(uint8_t words)
{
	data.at(l2_len) = (uint8_t)((data[l2_len] & 0xf0) | (words & 0x0f));
	return ip4_fix_csum();
}
Frame &Frame::ip4_total_length(uint16_t len)
{
	set_be16(l2_len + 2, len);
	return ip4_fix_csum();
}
Frame &Frame::ip4_frag(uint16_t flags_offset)
{
	set_be16(l2_len + 6, flags_offset);
	return ip4_fix_csum();
}
Frame &Frame::ip4_src(uint32_t addr)
{
	set_be32(l2_len + 12, addr);
	ip4_fix_csum();
	return l4_fix_csum();
}
Frame &Frame::ip4_dst(uint32_t addr)
{
	set_be32(l2_len + 16, addr);
	ip4_fix_csum();
	return l4_fix_csum();
}
Frame &Frame::ip4_proto(uint8_t proto)
{
	data.at(l2_len + 9) = proto;
	ip_proto = proto;
	return ip4_fix_csum();
}
Frame &Frame::ip4_corrupt_csum()
{
	data.at(l2_len + 10) ^= 0x5a;
	return *this;
}

Frame &Frame::ip6_version(uint8_t v)
{
	data.at(l2_len) = (uint8_t)((v << 4) | (data[l2_len] & 0x0f));
	return *this;
}
Frame &Frame::ip6_payload_length(uint16_t len)
{
	return set_be16(l2_len + 4, len);
}
Frame &Frame::ip6_next_header(uint8_t nh)
{
	// the HBH header (if any) is the one that names the L4 protocol
	size_t field = data.at(l2_len + 6) == IPPROTO_HOPOPTS_ ? l2_len + 40
								  : l2_len + 6;
	data.at(field) = nh;
	ip_proto = nh;
	return *this;
}
Frame &Frame::ip6_src(const Ip6 &a)
{
	std::memcpy(&data.at(l2_len + 8), a.data(), 16);
	return l4_fix_csum();
}
Frame &Frame::ip6_dst(const Ip6 &a)
{
	std::memcpy(&data.at(l2_len + 24), a.data(), 16);
	return l4_fix_csum();
}

Frame &Frame::udp_length(uint16_t len)
{
	return set_be16(l4_off + 4, len);
}
Frame &Frame::udp_zero_csum()
{
	return set_be16(l4_off + 6, 0);
}
Frame &Frame::tcp_doff(uint8_t words)
{
	data.at(l4_off + 12) = (uint8_t)((words << 4) | (data[l4_off + 12] & 0x0f));
	return *this;
}
Frame &Frame::l4_corrupt_csum()
{
	size_t field = l4_csum_field(*this);
	if (!field)
		throw std::logic_error("frames: no L4 checksum to corrupt");
	data.at(l4_off + field) ^= 0x5a;
	return *this;
}

Frame &Frame::truncate(size_t new_size)
{
	if (new_size < data.size())
		data.resize(new_size);
	return *this;
}
Frame &Frame::append(size_t n, uint8_t fill)
{
	data.insert(data.end(), n, fill);
	return *this;
}

rte_mbuf *Frame::to_mbuf(rte_mempool *mp) const
{
	rte_mbuf *m = rte_pktmbuf_alloc(mp);
	if (!m)
		return nullptr;
	char *p = rte_pktmbuf_append(m, (uint16_t)data.size());
	if (!p) {
		rte_pktmbuf_free(m);
		return nullptr;
	}
	std::memcpy(p, data.data(), data.size());
	m->port = 0;
	return m;
}

rte_mbuf *Frame::to_mbuf_chain(rte_mempool *mp, size_t seg_size) const
{
	rte_mbuf *head = nullptr;
	for (size_t off = 0; off < data.size(); off += seg_size) {
		size_t n = std::min(seg_size, data.size() - off);
		rte_mbuf *m = rte_pktmbuf_alloc(mp);
		char *p = m ? rte_pktmbuf_append(m, (uint16_t)n) : nullptr;
		if (!p) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return nullptr;
		}
		std::memcpy(p, &data[off], n);
		if (!head) {
			head = m;
			m->port = 0;
		}
		else if (rte_pktmbuf_chain(head, m) != 0) {
			rte_pktmbuf_free(m);
			rte_pktmbuf_free(head);
			return nullptr;
		}
	}
	return head;
}

Frame udp4(uint16_t sport, uint16_t dport)
{
	Spec s;
	s.sport = sport;
	s.dport = dport;
	return build(s);
}

Frame tcp4(uint8_t flags, uint16_t sport, uint16_t dport)
{
	Spec s;
	s.l4 = L4::tcp;
	s.tcp_flags = flags;
	s.sport = sport;
	s.dport = dport;
	return build(s);
}

Frame udp6(uint16_t sport, uint16_t dport)
{
	Spec s;
	s.l3 = L3::ipv6;
	s.sport = sport;
	s.dport = dport;
	return build(s);
}

Frame icmp_error(bool v6, uint8_t type, uint8_t code, L4 proto, uint16_t sport,
		 uint8_t local_last, size_t keep)
{
	Spec q;
	q.l3 = v6 ? L3::ipv6 : L3::ipv4;
	q.l4 = proto;
	q.ip4_src = ip4(10, 0, 0, local_last);
	q.ip4_dst = ip4(10, 0, 0, 1);
	q.ip6_src = ip6_doc(local_last);
	q.ip6_dst = ip6_doc(1);
	q.sport = sport;
	q.dport = 53;
	q.pad_to = 0;
	const Frame quoted = build(q);
	Spec s;
	s.l3 = q.l3;
	s.l4 = L4::icmp;
	s.icmp_type = type;
	s.icmp_code = code;
	const size_t len = keep ? keep : quoted.l3_len;
	s.payload.assign(quoted.data.begin() + quoted.l2_len,
			 quoted.data.begin() + quoted.l2_len + (long)len);
	return build(s);
}

Frame arp_request(uint32_t sender_ip, uint32_t target_ip)
{
	Spec s;
	s.dst = mac_broadcast;
	s.l3 = L3::arp;
	s.arp_sender_ip = sender_ip;
	s.arp_target_ip = target_ip;
	return build(s);
}

std::vector<uint8_t> mbuf_bytes(const rte_mbuf *m)
{
	std::vector<uint8_t> out;
	for (; m; m = m->next) {
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
		out.insert(out.end(), p, p + m->data_len);
	}
	return out;
}

} // namespace frames
} // namespace lrx_test

// ---- IPv6 extension header builders
namespace lrx_test {
namespace frames {

std::vector<uint8_t> ip6_ext(uint8_t next, const std::vector<uint8_t> &body)
{
	const size_t len = (body.size() + 2 + 7) / 8 * 8;
	std::vector<uint8_t> h(len, 0);
	h[0] = next;
	h[1] = (uint8_t)(len / 8 - 1);
	std::copy(body.begin(), body.end(), h.begin() + 2);
	return h;
}

Frame ip6_insert_ext(const Frame &f, uint8_t first_type, const std::vector<uint8_t> &ext)
{
	Frame g = f;
	const size_t at = g.l2_len + 40u;
	g.data.insert(g.data.begin() + (long)at, ext.begin(), ext.end());
	g.set_u8(g.l2_len + 6u, first_type);
	g.set_be16(g.l2_len + 4u, (uint16_t)(g.be16(g.l2_len + 4u) + ext.size()));
	g.l3_len = (uint16_t)(g.l3_len + ext.size());
	if (g.l4_off)
		g.l4_off = (uint16_t)(g.l4_off + ext.size());
	return g;
}

} // namespace frames
} // namespace lrx_test
