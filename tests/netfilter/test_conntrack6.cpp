// SPDX-License-Identifier: BSD-3-Clause
// conntrack (lib/netfilter/conntrack.c) on IPv6: ICMPv6 echo and node
// information queries and their replies, neighbour discovery and MLD left
// UNTRACKED (noct_valid_new), ICMPv6 errors RELATED to their flow through
// the quoted packet (nf_conntrack_inet_error) or counted error (the wrong
// end, no flow, a bad checksum, a short header), TCP through the state
// machine behind an extension header, the families apart in one table,
// what ipv6_get_l4proto refuses (a later fragment, no next header), and
// the state matches of an ip6tables file.
#include <catch2/catch.hpp>

#include <netinet/in.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "frames.h"
#include "test_eal.h"

extern "C" {
#include "netfilter/conntrack.h"
#include "netfilter/netfilter.h"
}

using namespace lrx_test::frames;

namespace {

const Ip6 peer = ip6_doc(1), host = ip6_doc(2);

struct Table6 {
	lrx_ct ct{};
	uint64_t now = 1000;
	Table6()
	{
		lrx_test::eal_init();
		REQUIRE(lrx_ct_init(&ct, 64, SOCKET_ID_ANY) == 0);
	}
	~Table6() { lrx_ct_fini(&ct); }

	// as l3-demux's hooks give it (thoff is ipv6_find_hdr's; conntrack
	// finds its own)
	static lrx_nf_pkt pkt(const Frame &f)
	{
		lrx_nf_pkt p{};
		p.iph = f.data.data() + f.l2_len;
		p.len = 40u + (uint32_t)(p.iph[4] << 8 | p.iph[5]);
		p.seg_len = std::min<uint32_t>((uint32_t)(f.size() - f.l2_len), p.len);
		p.thoff = (uint32_t)(f.l4_off - f.l2_len);
		return p;
	}
	uint8_t in(const Frame &f)
	{
		lrx_nf_pkt p = pkt(f);
		if (lrx_ct_in(&ct, &p, now) == LRX_NF_ACCEPT)
			lrx_ct_confirm(&ct, now);
		return p.ctstate;
	}
	void out(const Frame &f)
	{
		lrx_nf_pkt p = pkt(f);
		lrx_ct_local_out(&ct, &p, now);
	}
};

Frame v6(L4 l4, const Ip6 &src, const Ip6 &dst, const std::function<void(Spec &)> &more = {})
{
	return with([&](Spec &s) {
		s.l3 = L3::ipv6;
		s.l4 = l4;
		s.ip6_src = src;
		s.ip6_dst = dst;
		if (more)
			more(s);
	});
}

Frame icmp6(const Ip6 &src, const Ip6 &dst, uint8_t type, uint8_t code = 0,
	    const std::vector<uint8_t> &payload = {})
{
	return v6(L4::icmp, src, dst, [&](Spec &s) {
		s.icmp_type = type;
		s.icmp_code = code;
		if (!payload.empty()) {
			s.payload = payload;
			s.default_payload = false;
		}
	});
}

Frame udp_in(uint16_t sport = 5353, uint16_t dport = 53)
{
	return v6(L4::udp, peer, host, [&](Spec &s) {
		s.sport = sport;
		s.dport = dport;
	});
}

Frame udp_out(uint16_t sport = 53, uint16_t dport = 5353)
{
	return v6(L4::udp, host, peer, [&](Spec &s) {
		s.sport = sport;
		s.dport = dport;
	});
}

Frame tcp6(bool out, uint8_t flags, uint32_t seq, uint32_t ack)
{
	return v6(L4::tcp, out ? host : peer, out ? peer : host, [&](Spec &s) {
		s.sport = out ? 22 : 40000;
		s.dport = out ? 40000 : 22;
		s.tcp_flags = flags;
		s.seq = seq;
		s.ack = ack;
		s.default_payload = false;
	});
}

// an ICMPv6 error's data: the quoted IPv6 header and 8 bytes of f
std::vector<uint8_t> quote(const Frame &f)
{
	return {f.data.begin() + f.l2_len, f.data.begin() + f.l4_off + 8};
}

} // namespace

TEST_CASE("conntrack6: ICMPv6 echo and node information queries and their replies",
	  "[conntrack]")
{
	Table6 t;
	CHECK(t.in(icmp6(peer, host, 128)) == LRX_NF_CT_NEW);
	CHECK(t.ct.st.insert == 1);
	t.out(icmp6(host, peer, 129)); // the echo reply maps back to it
	CHECK(t.ct.st.entries == 1);
	CHECK(t.in(icmp6(peer, host, 128)) == LRX_NF_CT_ESTABLISHED);
	// a node information query opens one too (139 <-> 140)
	CHECK(t.in(icmp6(peer, host, 139, 0, {0x12, 0x35, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}))
	      == LRX_NF_CT_NEW);
	CHECK(t.ct.st.entries == 2);
	// an echo reply nobody asked for: invertible, but not a query
	const uint64_t invalid = t.ct.st.invalid;
	CHECK(t.in(icmp6(peer, host, 129, 0, {0x99, 0x99, 0, 1})) == LRX_NF_CT_INVALID);
	// an informational type with no inverse (icmpv6_invert_tuple fails)
	CHECK(t.in(icmp6(peer, host, 200)) == LRX_NF_CT_INVALID);
	CHECK(t.ct.st.invalid == invalid + 2);
	CHECK(t.ct.st.entries == 2);
	CHECK(t.ct.st.error == 0);
}

TEST_CASE("conntrack6: neighbour discovery and MLD are UNTRACKED, nothing counted",
	  "[conntrack]")
{
	Table6 t;
	for (uint8_t type : {130, 131, 132, 133, 134, 135, 136, 143}) {
		INFO(int(type));
		CHECK(t.in(icmp6(peer, host, type, 0, std::vector<uint8_t>(24, 0))) ==
		      LRX_NF_CT_UNTRACKED);
	}
	// redirect (137) is not in noct_valid_new: no inverse, INVALID
	CHECK(t.in(icmp6(peer, host, 137, 0, std::vector<uint8_t>(32, 0))) ==
	      LRX_NF_CT_INVALID);
	CHECK(t.ct.st.insert == 0);
	CHECK(t.ct.st.error == 0);
	CHECK(t.ct.st.invalid == 1);
}

TEST_CASE("conntrack6: ICMPv6 errors RELATED to their flow, the others counted",
	  "[conntrack]")
{
	Table6 t;
	const Frame req = udp_in(), rsp = udp_out();
	CHECK(t.in(req) == LRX_NF_CT_NEW);
	// the peer's port unreachable about the host's reply
	CHECK(t.in(icmp6(peer, host, 1, 4, quote(rsp))) == LRX_NF_CT_RELATED);
	// a packet too big (2) and a time exceeded (3) the same
	CHECK(t.in(icmp6(peer, host, 2, 0, quote(rsp))) == LRX_NF_CT_RELATED);
	CHECK(t.in(icmp6(peer, host, 3, 0, quote(rsp))) == LRX_NF_CT_RELATED);
	CHECK(t.ct.st.error == 0);
	// quoting the peer's own packet: to the wrong end (outer daddr)
	CHECK(t.in(icmp6(peer, host, 1, 4, quote(req))) == LRX_NF_CT_INVALID);
	// about a flow there is no entry for
	CHECK(t.in(icmp6(peer, host, 1, 4, quote(udp_out(1, 2)))) == LRX_NF_CT_INVALID);
	// a related one with a bad checksum (tested at PREROUTING)
	Frame bad = icmp6(peer, host, 1, 4, quote(rsp));
	bad.l4_corrupt_csum();
	CHECK(t.in(bad) == LRX_NF_CT_INVALID);
	// a bad checksum on an echo request: error too, no entry
	Frame echo = icmp6(peer, host, 128);
	echo.l4_corrupt_csum();
	CHECK(t.in(echo) == LRX_NF_CT_INVALID);
	// a quote too short for an IPv6 header
	CHECK(t.in(icmp6(peer, host, 1, 4, {0x60, 0, 0, 0})) == LRX_NF_CT_INVALID);
	CHECK(t.ct.st.error == 5);
	CHECK(t.ct.st.entries == 1);
	// the host's own port unreachable goes out RELATED (LOCAL_OUT: no
	// checksum test): no entry made, nothing counted
	Frame own = icmp6(host, peer, 1, 4, quote(req));
	own.l4_corrupt_csum();
	t.out(own);
	CHECK(t.ct.st.entries == 1);
	CHECK(t.ct.st.error == 5);
	CHECK(t.ct.st.invalid == 0);
}

TEST_CASE("conntrack6: a TCP handshake behind a hop-by-hop header, a SYN to a "
	  "closed port", "[conntrack]")
{
	Table6 t;
	Frame syn = tcp6(false, TCP_SYN, 100, 0);
	Frame syn_hbh =
		ip6_insert_ext(syn, 0, lrx_test::frames::ip6_ext(IPPROTO_TCP, {1, 4, 0, 0, 0, 0}));
	CHECK(t.in(syn_hbh) == LRX_NF_CT_NEW);
	t.out(tcp6(true, TCP_SYN | TCP_ACK, 5000, 101));
	CHECK(t.in(tcp6(false, TCP_ACK, 101, 5001)) == LRX_NF_CT_ESTABLISHED);
	CHECK(t.ct.st.entries == 1);
	// a SYN to a closed port answered by RST: nothing left
	Table6 c;
	CHECK(c.in(tcp6(false, TCP_SYN, 100, 0)) == LRX_NF_CT_NEW);
	c.out(tcp6(true, TCP_RST | TCP_ACK, 0, 101));
	CHECK(c.ct.st.entries == 0);
	// an unsolicited SYN-ACK is INVALID
	CHECK(c.in(tcp6(false, TCP_SYN | TCP_ACK, 1, 1)) == LRX_NF_CT_INVALID);
}

TEST_CASE("conntrack6: the families apart in one table; what ipv6_get_l4proto refuses",
	  "[conntrack]")
{
	Table6 t;
	CHECK(t.in(udp_in(1000, 2000)) == LRX_NF_CT_NEW);
	// the same ports over IPv4: another entry
	lrx_nf_pkt p{};
	const Frame f4 = udp4(1000, 2000);
	p.iph = f4.data.data() + f4.l2_len;
	p.len = (uint32_t)(p.iph[2] << 8 | p.iph[3]);
	p.seg_len = (uint32_t)(f4.size() - f4.l2_len);
	p.thoff = 20;
	CHECK(lrx_ct_in(&t.ct, &p, t.now) == LRX_NF_ACCEPT);
	lrx_ct_confirm(&t.ct, t.now);
	CHECK(p.ctstate == LRX_NF_CT_NEW);
	CHECK(t.ct.st.entries == 2);
	CHECK(t.in(udp_in(1000, 2000)) == LRX_NF_CT_NEW); // found, not made
	CHECK(t.ct.st.found == 1);

	// a fragment other than the first: no tuple, invalid
	const uint64_t invalid = t.ct.st.invalid;
	Frame frag = ip6_insert_ext(udp_in(7, 8), 44,
				    {IPPROTO_UDP, 0, 0x00, 0x08 | 1, 0, 0, 0, 1});
	CHECK(t.in(frag) == LRX_NF_CT_INVALID);
	// a first fragment is tracked by its header (one nf_defrag_ipv6
	// hands on, as a fragment not a multiple of 8 bytes: -EPROTO)
	Frame first = ip6_insert_ext(udp_in(7, 8), 44, {IPPROTO_UDP, 0, 0, 1, 0, 0, 0, 1});
	CHECK(t.in(first) == LRX_NF_CT_NEW);
	// no next header (59)
	Frame none = udp_in(9, 9);
	none.ip6_next_header(59);
	CHECK(t.in(none) == LRX_NF_CT_INVALID);
	CHECK(t.ct.st.invalid == invalid + 2);
}

TEST_CASE("conntrack6: the state matches and CT --notrack in an ip6tables file",
	  "[conntrack]")
{
	const std::string text =
		"*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A PREROUTING -p udp -m udp --dport 53 -j CT --notrack\n"
		"COMMIT\n"
		"*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
		"-A INPUT -p ipv6-icmp -m state --state NEW -j ACCEPT\n"
		"-A INPUT -m state --state UNTRACKED -j ACCEPT\n"
		"COMMIT\n";
	lrx_nf *nf = nullptr;
	char err[512] = "";
	REQUIRE(lrx_nf_parse_family(text.c_str(), "rules6", AF_INET6, &nf, err,
				    sizeof(err)) == 0);
	CHECK(nf->uses_conntrack);
	std::vector<lrx_nf_counter> ctr(nf->n_entries);
	auto run = [&](const Frame &f, unsigned hook, uint8_t state) {
		lrx_nf_pkt p = Table6::pkt(f);
		p.nexthdr = (int16_t)lrx_nf6_find_hdr(p.iph, p.len, p.seg_len, &p.thoff,
						      &p.fragoff);
		p.ctstate = state;
		unsigned v = lrx_nf_hook_slow(nf, ctr.data(), hook, &p);
		return std::make_pair(v, p.ctstate);
	};
	CHECK(run(udp_in(1, 53), LRX_NF_PRE_ROUTING, 0).second == LRX_NF_CT_UNTRACKED);
	CHECK(run(udp_in(1, 54), LRX_NF_PRE_ROUTING, 0).second == 0);
	CHECK(run(udp_in(1, 54), LRX_NF_LOCAL_IN, LRX_NF_CT_ESTABLISHED).first == LRX_NF_ACCEPT);
	CHECK(run(udp_in(1, 54), LRX_NF_LOCAL_IN, LRX_NF_CT_NEW).first == LRX_NF_DROP);
	CHECK(run(icmp6(peer, host, 128), LRX_NF_LOCAL_IN, LRX_NF_CT_NEW).first ==
	      LRX_NF_ACCEPT);
	CHECK(run(udp_in(1, 53), LRX_NF_LOCAL_IN, LRX_NF_CT_UNTRACKED).first == LRX_NF_ACCEPT);
	lrx_nf_free(nf);
}
