// SPDX-License-Identifier: BSD-3-Clause
// netfilter's IPv6 tables (ip6tables-save text, family AF_INET6): the
// parser's IPv6 errors, ip6_packet_match on frames built by the frame
// builder (IPv6 prefixes and their inversion, -p ipv6-icmp / icmpv6, UDP
// ports, the protocol ipv6_find_hdr finds past extension headers, a
// non-first fragment, a truncated chain hotdropped by a rule with -p),
// and the counters as maps named ip6/TABLE/CHAIN.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "frames.h"

extern "C" {
#include "netfilter/netfilter.h"
}

using namespace lrx_test::frames;

namespace {

struct Rules6 {
	lrx_nf *nf = nullptr;
	std::vector<lrx_nf_counter> ctr;
	char err[512] = "";
	int rc;
	explicit Rules6(const std::string &text)
	{
		rc = lrx_nf_parse_family(text.c_str(), "rules6", AF_INET6, &nf, err,
					 sizeof(err));
		if (rc == 0)
			ctr.resize(nf->n_entries);
	}
	~Rules6() { lrx_nf_free(nf); }

	// LOCAL_IN's verdict on the IPv6 frame f, as l3_ipv6_nf_hook sets
	// the packet up
	unsigned in(const Frame &f, uint16_t port = 0)
	{
		lrx_nf_pkt p{};
		p.iph = f.data.data() + f.l2_len;
		p.len = 40u + (uint32_t)(p.iph[4] << 8 | p.iph[5]);
		p.seg_len = (uint32_t)(f.size() - f.l2_len);
		if (p.seg_len > p.len)
			p.seg_len = p.len;
		p.in_port = port;
		p.nexthdr = (int16_t)lrx_nf6_find_hdr(p.iph, p.len, p.seg_len,
						      &p.thoff, &p.fragoff);
		return lrx_nf_hook_slow(nf, ctr.data(), LRX_NF_LOCAL_IN, &p);
	}
	// {pkts, bytes} of rule k (0: the policy) of map chain
	std::pair<uint64_t, uint64_t> count(const std::string &chain, uint32_t k)
	{
		lrx_stage_map info;
		for (unsigned m = 0; lrx_nf_map_at(nf, m, &info); m++) {
			if (chain != info.name)
				continue;
			uint32_t cursor = k, key;
			uint64_t v[2];
			REQUIRE(lrx_nf_map_next(nf, ctr.data(), m, &cursor, &key, v));
			return {v[0], v[1]};
		}
		FAIL("no chain " << chain);
		return {};
	}
};

std::string filter6(const std::string &rules, const char *policy = "ACCEPT")
{
	return std::string("*filter\n:INPUT ") + policy +
	       " [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n" + rules +
	       "COMMIT\n";
}

Frame udp6_from(const Ip6 &src, uint16_t dport)
{
	Spec s;
	s.l3 = L3::ipv6;
	s.ip6_src = src;
	s.dport = dport;
	return build(s);
}

Frame icmp6_echo()
{
	Spec s;
	s.l3 = L3::ipv6;
	s.l4 = L4::icmp;
	s.icmp_type = 128;
	return build(s);
}

// a fragment header {next, 0, offset|M, id} before the UDP header
Frame udp6_frag(uint16_t off_flags)
{
	std::vector<uint8_t> body = {(uint8_t)(off_flags >> 8), (uint8_t)off_flags,
				     0, 0, 0, 7};
	return ip6_insert_ext(udp6(1, 53), 44, lrx_test::frames::ip6_ext(17, body));
}

} // namespace

TEST_CASE("ip6tables rules: IPv6 errors name the line, the word and what is valid",
	  "[netfilter]")
{
	const std::vector<std::pair<std::string, std::string>> cases = {
		{filter6("-A INPUT -s 10.0.0.0/8 -j DROP\n"),
		 "rules6:5: '10.0.0.0/8': an IPv6 address, optionally /N"},
		{filter6("-A INPUT -d 2001:db8::/129 -j DROP\n"), "'2001:db8::/129'"},
		{filter6("-A INPUT -f -j DROP\n"), ":5: '-f': ip6tables has no -f"},
		{filter6("-A INPUT ! -p all -j DROP\n"), "! -p all matches nothing"},
		{filter6("-A INPUT -p icmpv6 --dport 5 -j DROP\n"), "'--dport': needs -p udp"},
		{"*nat\nCOMMIT\n", "the nat table needs connection tracking"},
	};
	for (auto &c : cases) {
		Rules6 r(c.first);
		INFO(c.first << " -> " << r.err);
		CHECK(r.rc == -EINVAL);
		CHECK(std::string(r.err).find(c.second) != std::string::npos);
	}
	// and an IPv6 address in an iptables file points to the other one
	lrx_nf *nf = nullptr;
	char err[512];
	CHECK(lrx_nf_parse(filter6("-A INPUT -s 2001:db8::/32\n").c_str(), "v4", &nf,
			   err, sizeof(err)) == -EINVAL);
	CHECK(std::string(err).find("netfilter6") != std::string::npos);
}

TEST_CASE("ip6tables rules: prefixes, icmpv6, UDP ports and the policy, each "
	  "counted by the deciding rule", "[netfilter]")
{
	Rules6 r(filter6("-A INPUT -s 2001:db8:0:1::/64 -j DROP\n"
			 "-A INPUT -p ipv6-icmp -j ACCEPT\n"
			 "-A INPUT -p udp -m udp --dport 53 -j ACCEPT\n"
			 "-A INPUT ! -s 2001:db8::/32 -j ACCEPT\n"
			 "-A INPUT -p icmpv6\n",
			 "DROP"));
	REQUIRE(r.rc == 0);
	CHECK(r.nf->family == AF_INET6);
	const Frame drop = udp6_from(ip6({0x2001, 0xdb8, 0, 1, 0, 0, 0, 9}), 53);
	const Frame other = udp6_from(ip6({0x2001, 0xdb9, 0, 0, 0, 0, 0, 1}), 9);
	CHECK(r.in(drop) == LRX_NF_DROP);
	CHECK(r.in(icmp6_echo()) == LRX_NF_ACCEPT);
	CHECK(r.in(udp6(1, 53)) == LRX_NF_ACCEPT);
	CHECK(r.in(other) == LRX_NF_ACCEPT);
	CHECK(r.in(udp6(1, 54)) == LRX_NF_DROP); // the policy
	CHECK(r.count("ip6/filter/INPUT", 1) == std::make_pair(1ul, (uint64_t)drop.l3_len));
	CHECK(r.count("ip6/filter/INPUT", 2).first == 1);
	CHECK(r.count("ip6/filter/INPUT", 3).first == 1);
	CHECK(r.count("ip6/filter/INPUT", 4).first == 1);
	CHECK(r.count("ip6/filter/INPUT", 5).first == 0);
	CHECK(r.count("ip6/filter/INPUT", 0) ==
	      std::make_pair(1ul, (uint64_t)udp6(1, 54).l3_len));
}

TEST_CASE("ip6tables rules: the protocol past extension headers, fragments and "
	  "hotdrop, as ipv6_find_hdr and ip6_packet_match", "[netfilter]")
{
	Rules6 r(filter6("-A INPUT -p udp -m udp --dport 53 -j DROP\n"
			 "-A INPUT -p udp -j ACCEPT\n"));
	REQUIRE(r.rc == 0);
	// behind a hop-by-hop header: still UDP port 53
	CHECK(r.in(with([](Spec &s) {
		      s.l3 = L3::ipv6;
		      s.ip6_hop_by_hop = true;
		      s.dport = 53;
	      })) == LRX_NF_DROP);
	// a first fragment has ports; a non-first one is UDP without them
	CHECK(r.in(udp6_frag(0x0001)) == LRX_NF_DROP);
	CHECK(r.in(udp6_frag(0x0008)) == LRX_NF_ACCEPT);
	CHECK(r.count("ip6/filter/INPUT", 1).first == 2);
	CHECK(r.count("ip6/filter/INPUT", 2).first == 1);
	// a destination options header cut short: a rule with -p hotdrops
	Frame cut = ip6_insert_ext(udp6(1, 53), 60, lrx_test::frames::ip6_ext(17, {0, 0, 0, 0, 0, 0}));
	cut.set_be16(cut.l2_len + 4, 1); // payload length 1: the header's 2 bytes are past it
	Rules6 any(filter6("-A INPUT -s ::/0\n-A INPUT -p all -j ACCEPT\n", "ACCEPT"));
	REQUIRE(any.rc == 0);
	CHECK(any.in(cut) == LRX_NF_DROP);
	CHECK(any.count("ip6/filter/INPUT", 1).first == 1); // no -p: counted
	CHECK(any.count("ip6/filter/INPUT", 2).first == 0); // hotdropped
	CHECK(any.count("ip6/filter/INPUT", 0).first == 0);
	// -p all matches any protocol found, ! -p udp the others
	Rules6 inv(filter6("-A INPUT ! -p udp -j DROP\n-A INPUT -p all -j ACCEPT\n"));
	REQUIRE(inv.rc == 0);
	CHECK(inv.in(icmp6_echo()) == LRX_NF_DROP);
	CHECK(inv.in(udp6()) == LRX_NF_ACCEPT);
}

TEST_CASE("ip6tables rules: lrx_nf6_find_hdr as ipv6_find_hdr", "[netfilter]")
{
	uint32_t thoff = 0;
	uint16_t fragoff = 0;
	const Frame plain = udp6();
	const uint8_t *h = plain.data.data() + plain.l2_len;
	CHECK(lrx_nf6_find_hdr(h, plain.l3_len, plain.l3_len, &thoff, &fragoff) == 17);
	CHECK(thoff == 40);
	const Frame fr = udp6_frag(0x0010);
	h = fr.data.data() + fr.l2_len;
	CHECK(lrx_nf6_find_hdr(h, fr.l3_len, fr.l3_len, &thoff, &fragoff) == 17);
	CHECK(fragoff == 16);
	CHECK(thoff == 0); // ipv6_find_hdr leaves *offset as it was
	// a non-first fragment followed by another extension header: -ENOENT
	const Frame fr2 = ip6_insert_ext(udp6(), 44,
					 lrx_test::frames::ip6_ext(60, {0x00, 0x10, 0, 0, 0, 7}));
	h = fr2.data.data() + fr2.l2_len;
	CHECK(lrx_nf6_find_hdr(h, fr2.l3_len, fr2.l3_len, &thoff, &fragoff) == -1);
	CHECK(fragoff == 0);
	// past the first segment: not linear, no hotdrop
	const Frame hbh = with([](Spec &s) { s.l3 = L3::ipv6; s.ip6_hop_by_hop = true; });
	h = hbh.data.data() + hbh.l2_len;
	CHECK(lrx_nf6_find_hdr(h, hbh.l3_len, 41, &thoff, &fragoff) == LRX_NF6_NOT_LINEAR);
	CHECK(lrx_nf6_find_hdr(h, hbh.l3_len, hbh.l3_len, &thoff, &fragoff) == 17);
	CHECK(thoff == 48);
}
