// SPDX-License-Identifier: BSD-3-Clause
// conntrack (lib/netfilter/conntrack.c): TCP's state table against the
// kernel's tcp_conntracks, then nf_conntrack_in / nf_confirm / LOCAL_OUT
// on built frames: the TCP handshake, a SYN answered by RST, unsolicited
// SYN-ACK and RST, loose pickup of an ACK, UDP and ICMP queries and their
// replies, ICMP errors RELATED to a flow, unconfirmed entries of dropped
// packets, timeouts, early drop and a full table; the state matches and
// CT --notrack in the rule file.
#include <catch2/catch.hpp>

#include <arpa/inet.h>

#include <cstring>
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

constexpr uint32_t peer = ip4(10, 0, 0, 1), host = ip4(10, 0, 0, 2);

// an IPv4 tuple's addresses (host order in, network order in the tuple)
lrx_ct_tuple tuple4(uint32_t src, uint32_t dst)
{
	lrx_ct_tuple t{};
	const uint32_t s = htonl(src), d = htonl(dst);
	std::memcpy(t.src, &s, 4);
	std::memcpy(t.dst, &d, 4);
	t.l3 = 4;
	return t;
}

struct Table {
	lrx_ct ct{};
	uint64_t now = 1000;
	explicit Table(uint32_t max = 64)
	{
		lrx_test::eal_init();
		REQUIRE(lrx_ct_init(&ct, max, SOCKET_ID_ANY) == 0);
	}
	~Table() { lrx_ct_fini(&ct); }

	static lrx_nf_pkt pkt(const Frame &f)
	{
		lrx_nf_pkt p{};
		p.iph = f.data.data() + f.l2_len;
		p.len = (uint32_t)(p.iph[2] << 8 | p.iph[3]);
		p.seg_len = (uint32_t)(f.size() - f.l2_len);
		p.thoff = (p.iph[0] & 0xf) * 4u;
		return p;
	}
	// PREROUTING's nf_conntrack_in, then (confirm) LOCAL_IN's nf_confirm
	uint8_t in(const Frame &f, bool confirm = true, unsigned *verdict = nullptr)
	{
		lrx_nf_pkt p = pkt(f);
		unsigned v = lrx_ct_in(&ct, &p, now);
		if (verdict)
			*verdict = v;
		if (confirm && v == LRX_NF_ACCEPT)
			lrx_ct_confirm(&ct, now);
		return p.ctstate;
	}
	void out(const Frame &f)
	{
		lrx_nf_pkt p = pkt(f);
		lrx_ct_local_out(&ct, &p, now);
	}
	// the TCP state of the flow peer:sport -> host:dport, NONE if none
	lrx_tcp_ct tcp_state(uint16_t sport, uint16_t dport)
	{
		lrx_ct_tuple t = tuple4(peer, host);
		t.sport = sport;
		t.dport = dport;
		t.proto = IPPROTO_TCP;
		unsigned dir;
		uint32_t i = lrx_ct_find(&ct, &t, now, &dir);
		return i == LRX_CT_NIL ? LRX_TCP_CT_NONE
				       : (lrx_tcp_ct)ct.entries[i].tcp.state;
	}
};

Frame tcp_in(uint8_t flags, uint32_t seq = 100, uint32_t ack = 0, uint16_t sport = 40000,
	     uint16_t dport = 22)
{
	return with([&](Spec &s) {
		s.l4 = L4::tcp;
		s.tcp_flags = flags;
		s.seq = seq;
		s.ack = ack;
		s.sport = sport;
		s.dport = dport;
		s.default_payload = false;
	});
}

// the host's segment back to the peer
Frame tcp_out(uint8_t flags, uint32_t seq, uint32_t ack, uint16_t sport = 22,
	      uint16_t dport = 40000)
{
	return with([&](Spec &s) {
		s.l4 = L4::tcp;
		s.ip4_src = host;
		s.ip4_dst = peer;
		s.tcp_flags = flags;
		s.seq = seq;
		s.ack = ack;
		s.sport = sport;
		s.dport = dport;
		s.default_payload = false;
	});
}

Frame icmp4(uint32_t src, uint32_t dst, uint8_t type, uint8_t code,
	    const std::vector<uint8_t> &payload = {})
{
	return with([&](Spec &s) {
		s.l4 = L4::icmp;
		s.ip4_src = src;
		s.ip4_dst = dst;
		s.icmp_type = type;
		s.icmp_code = code;
		if (!payload.empty()) {
			s.payload = payload;
			s.default_payload = false;
		}
	});
}

// an ICMP error's data: the quoted IP header and 8 bytes of f
std::vector<uint8_t> quote(const Frame &f)
{
	return {f.data.begin() + f.l2_len, f.data.begin() + f.l4_off + 8};
}

} // namespace

TEST_CASE("conntrack: TCP's state table is the kernel's tcp_conntracks", "[conntrack]")
{
	// the transitions the kernel's comments name, both directions
	struct Row { unsigned dir; lrx_tcp_bit idx; lrx_tcp_ct from, to; };
	const Row rows[] = {
		{0, LRX_TCP_SYN_SET, LRX_TCP_CT_NONE, LRX_TCP_CT_SYN_SENT},
		{0, LRX_TCP_SYN_SET, LRX_TCP_CT_SYN_SENT, LRX_TCP_CT_SYN_SENT},
		{0, LRX_TCP_SYN_SET, LRX_TCP_CT_ESTABLISHED, LRX_TCP_CT_IGNORE},
		{0, LRX_TCP_SYN_SET, LRX_TCP_CT_TIME_WAIT, LRX_TCP_CT_SYN_SENT},
		{0, LRX_TCP_SYN_SET, LRX_TCP_CT_SYN_SENT2, LRX_TCP_CT_SYN_SENT2},
		{0, LRX_TCP_SYNACK_SET, LRX_TCP_CT_NONE, LRX_TCP_CT_MAX},
		{0, LRX_TCP_SYNACK_SET, LRX_TCP_CT_SYN_SENT, LRX_TCP_CT_MAX},
		{0, LRX_TCP_SYNACK_SET, LRX_TCP_CT_SYN_RECV, LRX_TCP_CT_SYN_RECV},
		{0, LRX_TCP_FIN_SET, LRX_TCP_CT_NONE, LRX_TCP_CT_MAX},
		{0, LRX_TCP_FIN_SET, LRX_TCP_CT_ESTABLISHED, LRX_TCP_CT_FIN_WAIT},
		{0, LRX_TCP_FIN_SET, LRX_TCP_CT_FIN_WAIT, LRX_TCP_CT_LAST_ACK},
		{0, LRX_TCP_ACK_SET, LRX_TCP_CT_NONE, LRX_TCP_CT_ESTABLISHED},
		{0, LRX_TCP_ACK_SET, LRX_TCP_CT_SYN_SENT, LRX_TCP_CT_MAX},
		{0, LRX_TCP_ACK_SET, LRX_TCP_CT_SYN_RECV, LRX_TCP_CT_ESTABLISHED},
		{0, LRX_TCP_ACK_SET, LRX_TCP_CT_LAST_ACK, LRX_TCP_CT_TIME_WAIT},
		{0, LRX_TCP_RST_SET, LRX_TCP_CT_NONE, LRX_TCP_CT_MAX},
		{0, LRX_TCP_RST_SET, LRX_TCP_CT_ESTABLISHED, LRX_TCP_CT_CLOSE},
		{0, LRX_TCP_NONE_SET, LRX_TCP_CT_ESTABLISHED, LRX_TCP_CT_MAX},
		{1, LRX_TCP_SYN_SET, LRX_TCP_CT_NONE, LRX_TCP_CT_MAX},
		{1, LRX_TCP_SYN_SET, LRX_TCP_CT_SYN_SENT, LRX_TCP_CT_SYN_SENT2},
		{1, LRX_TCP_SYN_SET, LRX_TCP_CT_TIME_WAIT, LRX_TCP_CT_SYN_SENT},
		{1, LRX_TCP_SYNACK_SET, LRX_TCP_CT_SYN_SENT, LRX_TCP_CT_SYN_RECV},
		{1, LRX_TCP_SYNACK_SET, LRX_TCP_CT_SYN_RECV, LRX_TCP_CT_IGNORE},
		{1, LRX_TCP_ACK_SET, LRX_TCP_CT_SYN_SENT, LRX_TCP_CT_IGNORE},
		{1, LRX_TCP_ACK_SET, LRX_TCP_CT_SYN_RECV, LRX_TCP_CT_SYN_RECV},
		{1, LRX_TCP_ACK_SET, LRX_TCP_CT_FIN_WAIT, LRX_TCP_CT_CLOSE_WAIT},
		{1, LRX_TCP_FIN_SET, LRX_TCP_CT_SYN_SENT, LRX_TCP_CT_MAX},
		{1, LRX_TCP_RST_SET, LRX_TCP_CT_SYN_SENT, LRX_TCP_CT_CLOSE},
	};
	for (const Row &r : rows) {
		INFO("dir " << r.dir << " index " << r.idx << " from "
			    << lrx_tcp_ct_name(r.from));
		CHECK(lrx_tcp_ct_next(r.dir, r.idx, r.from) == r.to);
	}
	// a RST whatever else is set; SYN before FIN; nothing is NONE_SET
	CHECK(lrx_tcp_ct_index(TCP_RST | TCP_ACK | TCP_SYN) == LRX_TCP_RST_SET);
	CHECK(lrx_tcp_ct_index(TCP_SYN | TCP_ACK) == LRX_TCP_SYNACK_SET);
	CHECK(lrx_tcp_ct_index(TCP_FIN | TCP_ACK) == LRX_TCP_FIN_SET);
	CHECK(lrx_tcp_ct_index(TCP_PSH) == LRX_TCP_NONE_SET);
}

TEST_CASE("conntrack: a TCP handshake, the SYN-ACK out, then ESTABLISHED", "[conntrack]")
{
	Table t;
	CHECK(t.in(tcp_in(TCP_SYN)) == LRX_NF_CT_NEW);
	CHECK(t.ct.st.insert == 1);
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_SYN_SENT);
	CHECK(t.in(tcp_in(TCP_SYN)) == LRX_NF_CT_NEW); // retransmitted
	t.out(tcp_out(TCP_SYN | TCP_ACK, 5000, 101));
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_SYN_RECV);
	CHECK(t.in(tcp_in(TCP_ACK, 101, 5001)) == LRX_NF_CT_ESTABLISHED);
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_ESTABLISHED);
	CHECK(t.ct.st.entries == 1);
	CHECK(t.ct.st.invalid == 0);
	// the close: FIN from the peer, the host's FIN-ACK, the last ACK
	CHECK(t.in(tcp_in(TCP_FIN | TCP_ACK, 101, 5001)) == LRX_NF_CT_ESTABLISHED);
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_FIN_WAIT);
	t.out(tcp_out(TCP_FIN | TCP_ACK, 5001, 102));
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_LAST_ACK);
	t.in(tcp_in(TCP_ACK, 102, 5002));
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_TIME_WAIT);
	// a new SYN on the same ports reopens it (CLOSE_INIT): NEW again
	CHECK(t.in(tcp_in(TCP_SYN, 9000)) == LRX_NF_CT_NEW);
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_SYN_SENT);
}

TEST_CASE("conntrack: a SYN answered by RST leaves no entry", "[conntrack]")
{
	Table t;
	CHECK(t.in(tcp_in(TCP_SYN)) == LRX_NF_CT_NEW);
	t.out(tcp_out(TCP_RST | TCP_ACK, 0, 101));
	CHECK(t.ct.st.entries == 0); // nf_ct_kill_acct: only a RST came back
	CHECK(t.ct.st.insert == 1);
	CHECK(t.in(tcp_in(TCP_SYN)) == LRX_NF_CT_NEW);
}

TEST_CASE("conntrack: INVALID TCP: unsolicited SYN-ACK, RST, bad flags; an ACK is picked up",
	  "[conntrack]")
{
	Table t;
	CHECK(t.in(tcp_in(TCP_SYN | TCP_ACK)) == LRX_NF_CT_INVALID);
	CHECK(t.in(tcp_in(TCP_RST)) == LRX_NF_CT_INVALID);
	CHECK(t.in(tcp_in(TCP_FIN | TCP_ACK)) == LRX_NF_CT_INVALID);
	CHECK(t.in(tcp_in(TCP_SYN | TCP_FIN)) == LRX_NF_CT_INVALID); // tcp_valid_flags
	CHECK(t.ct.st.invalid == 4);
	CHECK(t.ct.st.entries == 0);
	// nf_conntrack_tcp_loose=1: a lone ACK opens ESTABLISHED, state NEW
	CHECK(t.in(tcp_in(TCP_ACK)) == LRX_NF_CT_NEW);
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_ESTABLISHED);
	// the host's RST to it (no socket) ends it
	t.out(tcp_out(TCP_RST, 0, 0));
	CHECK(t.ct.st.entries == 0);
	// an ACK after a SYN, before any SYN-ACK
	CHECK(t.in(tcp_in(TCP_SYN, 100, 0, 40001)) == LRX_NF_CT_NEW);
	CHECK(t.in(tcp_in(TCP_ACK, 101, 1, 40001)) == LRX_NF_CT_INVALID);
}

TEST_CASE("conntrack: a packet dropped before nf_confirm leaves nothing", "[conntrack]")
{
	Table t;
	CHECK(t.in(tcp_in(TCP_SYN), false) == LRX_NF_CT_NEW);
	CHECK(t.in(tcp_in(TCP_SYN), false) == LRX_NF_CT_NEW);
	CHECK(t.ct.st.insert == 0);
	CHECK(t.ct.st.entries == 0);
	CHECK(t.ct.st.found == 0);
}

TEST_CASE("conntrack: UDP request, reply, ESTABLISHED; timeouts", "[conntrack]")
{
	Table t;
	const Frame req = udp4(5353, 53);
	const Frame rsp = with([](Spec &s) {
		s.ip4_src = host;
		s.ip4_dst = peer;
		s.sport = 53;
		s.dport = 5353;
	});
	CHECK(t.in(req) == LRX_NF_CT_NEW);
	CHECK(t.in(req) == LRX_NF_CT_NEW);
	t.out(rsp);
	CHECK(t.in(req) == LRX_NF_CT_ESTABLISHED);
	CHECK(t.ct.st.entries == 1);
	// unreplied-timeout refreshes (30 s) until 2 s have passed
	t.now += 29999;
	CHECK(t.in(req) == LRX_NF_CT_ESTABLISHED); // now a stream: 120 s
	t.now += 119999;
	CHECK(t.in(req) == LRX_NF_CT_ESTABLISHED);
	t.now += 120000;
	CHECK(t.in(req) == LRX_NF_CT_NEW); // expired: a new entry
	// a short UDP header is INVALID
	Frame bad = udp4(5353, 53);
	bad.udp_length(4);
	CHECK(t.in(bad) == LRX_NF_CT_INVALID);
}

TEST_CASE("conntrack: ICMP echo and errors RELATED to their flow", "[conntrack]")
{
	Table t;
	CHECK(t.in(icmp4(peer, host, 8, 0)) == LRX_NF_CT_NEW);
	t.out(icmp4(host, peer, 0, 0));
	CHECK(t.in(icmp4(peer, host, 8, 0)) == LRX_NF_CT_ESTABLISHED);
	// an echo reply nobody asked for; a type no query is
	CHECK(t.in(icmp4(peer, host, 0, 0, {0, 0, 0, 9, 0, 1})) == LRX_NF_CT_INVALID);
	CHECK(t.in(icmp4(peer, host, 9, 0)) == LRX_NF_CT_INVALID);

	// a UDP flow, then the peer's port unreachable about the host's reply
	const Frame req = udp4(5353, 53);
	const Frame rsp = with([](Spec &s) {
		s.ip4_src = host;
		s.ip4_dst = peer;
		s.sport = 53;
		s.dport = 5353;
	});
	CHECK(t.in(req) == LRX_NF_CT_NEW);
	const uint64_t errors = t.ct.st.error;
	CHECK(t.in(icmp4(peer, host, 3, 3, quote(rsp))) == LRX_NF_CT_RELATED);
	// quoting the peer's own packet: to the wrong end (outer daddr)
	CHECK(t.in(icmp4(peer, host, 3, 3, quote(req))) == LRX_NF_CT_INVALID);
	// about a flow there is no entry for
	CHECK(t.in(icmp4(peer, host, 3, 3, quote(udp4(1, 2)))) == LRX_NF_CT_INVALID);
	CHECK(t.ct.st.error == errors + 2);
	// the host's own port unreachable goes out RELATED: no entry made
	const uint64_t entries = t.ct.st.entries;
	t.out(icmp4(host, peer, 3, 3, quote(req)));
	CHECK(t.ct.st.entries == entries);
	CHECK(t.ct.st.error == errors + 2);
}

TEST_CASE("conntrack: nf_conntrack_max: early drop of unassured entries, then drop",
	  "[conntrack]")
{
	Table t(2);
	CHECK(t.in(udp4(1, 53)) == LRX_NF_CT_NEW);
	CHECK(t.in(udp4(2, 53)) == LRX_NF_CT_NEW);
	CHECK(t.ct.st.entries == 2);
	// a third: an unassured one in the buckets looked at goes
	unsigned v;
	CHECK(t.in(udp4(3, 53), true, &v) == LRX_NF_CT_NEW);
	CHECK(v == LRX_NF_ACCEPT);
	CHECK(t.ct.st.early_drop >= 1);
	CHECK(t.ct.st.entries <= 2);

	// assured TCP connections cannot be evicted: the packet is dropped
	Table a(1);
	a.in(tcp_in(TCP_SYN));
	a.out(tcp_out(TCP_SYN | TCP_ACK, 5000, 101));
	a.in(tcp_in(TCP_ACK, 101, 5001));
	CHECK(a.tcp_state(40000, 22) == LRX_TCP_CT_ESTABLISHED);
	a.in(tcp_in(TCP_SYN, 7, 0, 40001), true, &v);
	CHECK(v == LRX_NF_DROP);
	CHECK(a.ct.st.drop == 1);
	CHECK(a.ct.st.early_drop == 0);
}

TEST_CASE("conntrack: an UNTRACKED packet is left alone", "[conntrack]")
{
	Table t;
	const Frame f = tcp_in(TCP_SYN);
	lrx_nf_pkt p = Table::pkt(f);
	p.ctstate = LRX_NF_CT_UNTRACKED;
	CHECK(lrx_ct_in(&t.ct, &p, t.now) == LRX_NF_ACCEPT);
	CHECK(p.ctstate == LRX_NF_CT_UNTRACKED);
	lrx_ct_confirm(&t.ct, t.now);
	CHECK(t.ct.st.insert == 0);
}

TEST_CASE("conntrack: the state matches and CT --notrack in the rule file", "[conntrack]")
{
	const std::string text =
		"*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A PREROUTING -p udp -m udp --dport 53 -j CT --notrack\n"
		"COMMIT\n"
		"*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A INPUT -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n"
		"-A INPUT -m conntrack --ctstate INVALID -j DROP\n"
		"-A INPUT -p tcp -m tcp --dport 22 -m state --state NEW -j ACCEPT\n"
		"-A INPUT -m conntrack ! --ctstate NEW,INVALID,UNTRACKED -j DROP\n"
		"-A INPUT -m state --state UNTRACKED -j ACCEPT\n"
		"COMMIT\n";
	lrx_nf *nf = nullptr;
	char err[512] = "";
	REQUIRE(lrx_nf_parse(text.c_str(), "rules", &nf, err, sizeof(err)) == 0);
	CHECK(nf->uses_conntrack);
	std::vector<lrx_nf_counter> ctr(nf->n_entries);
	auto run = [&](const Frame &f, unsigned hook, uint8_t state) {
		lrx_nf_pkt p = Table::pkt(f);
		p.ctstate = state;
		unsigned v = lrx_nf_hook_slow(nf, ctr.data(), hook, &p);
		return std::make_pair(v, p.ctstate);
	};
	// raw: the DNS query UNTRACKED, others left as they are
	CHECK(run(udp4(1, 53), LRX_NF_PRE_ROUTING, 0).second == LRX_NF_CT_UNTRACKED);
	CHECK(run(udp4(1, 54), LRX_NF_PRE_ROUTING, 0).second == 0);
	CHECK(run(tcp_in(TCP_ACK), LRX_NF_LOCAL_IN, LRX_NF_CT_ESTABLISHED).first == LRX_NF_ACCEPT);
	CHECK(run(udp4(1, 54), LRX_NF_LOCAL_IN, LRX_NF_CT_RELATED).first == LRX_NF_ACCEPT);
	CHECK(run(tcp_in(TCP_ACK), LRX_NF_LOCAL_IN, LRX_NF_CT_INVALID).first == LRX_NF_DROP);
	CHECK(run(tcp_in(TCP_SYN), LRX_NF_LOCAL_IN, LRX_NF_CT_NEW).first == LRX_NF_ACCEPT);
	CHECK(run(tcp_in(TCP_SYN, 1, 0, 1, 23), LRX_NF_LOCAL_IN, LRX_NF_CT_NEW).first ==
	      LRX_NF_DROP); // the policy
	CHECK(run(udp4(1, 53), LRX_NF_LOCAL_IN, LRX_NF_CT_UNTRACKED).first == LRX_NF_ACCEPT);
	lrx_nf_free(nf);

	// refused: a state match without its states, an unknown state, CT
	// outside raw, CT without --notrack, --ctstate without -m conntrack
	const char *bad[] = {
		"-A INPUT -m conntrack -j ACCEPT\n",
		"-A INPUT -m conntrack --ctstate SNAT -j ACCEPT\n",
		"-A INPUT -m conntrack --ctstate NEW,BOGUS -j ACCEPT\n",
		"-A INPUT -j CT --notrack\n",
		"-A INPUT --ctstate NEW -j ACCEPT\n",
		"-A INPUT -m conntrack --state NEW -j ACCEPT\n",
	};
	for (const char *rule : bad) {
		INFO(rule);
		std::string f = std::string("*filter\n:INPUT ACCEPT [0:0]\n") + rule + "COMMIT\n";
		CHECK(lrx_nf_parse(f.c_str(), "rules", &nf, err, sizeof(err)) == -EINVAL);
		CHECK(std::string(err).find("rules:3") != std::string::npos);
	}
	std::string raw_ct = "*raw\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j CT\nCOMMIT\n";
	CHECK(lrx_nf_parse(raw_ct.c_str(), "rules", &nf, err, sizeof(err)) == -EINVAL);
	CHECK(std::string(err).find("--notrack") != std::string::npos);
	// no state match: conntrack is not needed
	std::string plain = "*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -p udp -j DROP\nCOMMIT\n";
	REQUIRE(lrx_nf_parse(plain.c_str(), "rules", &nf, err, sizeof(err)) == 0);
	CHECK(!nf->uses_conntrack);
	lrx_nf_free(nf);
}

namespace {

// a segment with a window and options; out: from the host
Frame seg(bool out, uint8_t flags, uint32_t seq, uint32_t ack, uint16_t window,
	  std::vector<uint8_t> options = {}, size_t len = 0)
{
	return with([&](Spec &s) {
		s.l4 = L4::tcp;
		s.ip4_src = out ? host : peer;
		s.ip4_dst = out ? peer : host;
		s.sport = out ? 22 : 40000;
		s.dport = out ? 40000 : 22;
		s.tcp_flags = flags;
		s.seq = seq;
		s.ack = ack;
		s.window = window;
		s.tcp_options = std::move(options);
		s.payload.assign(len, 1);
		s.default_payload = false;
	});
}

const std::vector<uint8_t> ws7 = {1, 3, 3, 7}, sack_perm = {4, 2, 1, 1};

// SYN (peer 100), SYN-ACK (host 5000, window 1000), ACK, then the host's
// ACK with window 1000: the peer may send up to 101 + (1000 << scale)
void handshake(Table &t, bool scale, bool sack = false)
{
	std::vector<uint8_t> opts = scale ? ws7 : std::vector<uint8_t>{};
	if (sack)
		opts.insert(opts.end(), sack_perm.begin(), sack_perm.end());
	REQUIRE(t.in(seg(false, TCP_SYN, 100, 0, 1000, opts)) == LRX_NF_CT_NEW);
	t.out(seg(true, TCP_SYN | TCP_ACK, 5000, 101, 1000, opts));
	REQUIRE(t.in(seg(false, TCP_ACK, 101, 5001, 1000)) == LRX_NF_CT_ESTABLISHED);
	t.out(seg(true, TCP_ACK, 5001, 101, 1000));
}

} // namespace

TEST_CASE("conntrack: tcp_in_window: window scale from the SYNs bounds the data",
	  "[conntrack]")
{
	// 1000 << 7 = 128000: seq 50101 is in the window
	Table scaled;
	handshake(scaled, true);
	CHECK(scaled.in(seg(false, TCP_ACK, 50101, 5001, 1000, {}, 100)) ==
	      LRX_NF_CT_ESTABLISHED);
	CHECK(scaled.ct.st.invalid == 0);
	// without the option both ways, 1000 bytes: far beyond (I), INVALID
	Table plain;
	handshake(plain, false);
	CHECK(plain.in(seg(false, TCP_ACK, 50101, 5001, 1000, {}, 100)) ==
	      LRX_NF_CT_INVALID);
	CHECK(plain.ct.st.invalid == 1);
	CHECK(plain.tcp_state(40000, 22) == LRX_TCP_CT_ESTABLISHED);
	// the window's last byte starts a segment: in it
	CHECK(plain.in(seg(false, TCP_ACK, 1101, 5001, 1000, {}, 100)) ==
	      LRX_NF_CT_ESTABLISHED);
	// one past, 102 bytes over (less than the window): let through
	// ("bytes more than expected", NFCT_TCP_IGNORE)
	CHECK(plain.in(seg(false, TCP_ACK, 1102, 5001, 1000, {}, 100)) ==
	      LRX_NF_CT_ESTABLISHED);
	CHECK(plain.ct.st.invalid == 1);
	// nf_conntrack_tcp_be_liberal=1 takes the one far beyond
	Table liberal;
	liberal.ct.tcp_be_liberal = true;
	handshake(liberal, false);
	CHECK(liberal.in(seg(false, TCP_ACK, 50101, 5001, 1000, {}, 100)) ==
	      LRX_NF_CT_ESTABLISHED);
	CHECK(liberal.ct.st.invalid == 0);
}

TEST_CASE("conntrack: tcp_in_window: acks of unseen data, old data, SACK blocks",
	  "[conntrack]")
{
	Table t;
	handshake(t, true, true);
	// III: acking what the host never sent
	CHECK(t.in(seg(false, TCP_ACK, 101, 9000, 1000)) == LRX_NF_CT_INVALID);
	// II: data long acknowledged (IGNORE: let through, nothing learnt)
	CHECK(t.in(seg(false, TCP_ACK, 101 - 200000, 5001, 1000, {}, 100)) ==
	      LRX_NF_CT_ESTABLISHED);
	CHECK(t.ct.st.invalid == 1);
	// a SACK block's right edge counts as the ack when the host
	// permitted SACK: beyond its data, INVALID
	const std::vector<uint8_t> block = {1, 1, 5, 10, 0, 0, 0x13, 0x89, 0, 0, 0x23, 0x28};
	CHECK(t.in(seg(false, TCP_ACK, 101, 5001, 1000, block)) == LRX_NF_CT_INVALID);
	Table no_sack;
	handshake(no_sack, true, false);
	CHECK(no_sack.in(seg(false, TCP_ACK, 101, 5001, 1000, block)) ==
	      LRX_NF_CT_ESTABLISHED);
}

TEST_CASE("conntrack: an RST before the other side's highest ACK is INVALID, "
	  "one at it closes", "[conntrack]")
{
	Table t;
	t.ct.tcp_be_liberal = true; // the RST checks hold even so
	handshake(t, false);
	CHECK(t.in(seg(false, TCP_RST, 50, 0, 0)) == LRX_NF_CT_INVALID);
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_ESTABLISHED);
	CHECK(t.in(seg(false, TCP_RST, 101, 0, 0)) == LRX_NF_CT_ESTABLISHED);
	CHECK(t.tcp_state(40000, 22) == LRX_TCP_CT_CLOSE);
}

TEST_CASE("conntrack: nf_conntrack_tcp_loose: a picked-up connection is liberal; "
	  "loose=0 refuses it", "[conntrack]")
{
	Table t;
	CHECK(t.in(seg(false, TCP_ACK, 100, 7, 1000)) == LRX_NF_CT_NEW);
	// its window is unknown: anything is taken
	CHECK(t.in(seg(false, TCP_ACK, 900000, 7, 1000, {}, 10)) == LRX_NF_CT_NEW);
	CHECK(t.ct.st.invalid == 0);
	Table strict;
	strict.ct.tcp_loose = false;
	CHECK(strict.in(seg(false, TCP_ACK, 100, 7, 1000)) == LRX_NF_CT_INVALID);
	CHECK(strict.in(seg(false, TCP_SYN, 100, 0, 1000)) == LRX_NF_CT_NEW);
}

TEST_CASE("conntrack: TCP timeouts: unacknowledged data, repeated ACKs, ESTABLISHED",
	  "[conntrack]")
{
	Table t;
	handshake(t, false);
	auto expires_in = [&] {
		lrx_ct_tuple tu = tuple4(peer, host);
		tu.sport = 40000;
		tu.dport = 22;
		tu.proto = IPPROTO_TCP;
		unsigned dir;
		const uint32_t i = lrx_ct_find(&t.ct, &tu, t.now, &dir);
		REQUIRE(i != LRX_CT_NIL);
		return t.ct.entries[i].expires - t.now;
	};
	CHECK(expires_in() == 5ull * 24 * 3600 * 1000); // acked both ways
	// data the host has not acknowledged: the unacknowledged timeout
	t.in(seg(false, TCP_ACK, 101, 5001, 1000, {}, 10));
	CHECK(expires_in() == 300000);
	t.out(seg(true, TCP_ACK, 5001, 111, 1000));
	CHECK(expires_in() == 5ull * 24 * 3600 * 1000);
	// the same ACK four times (nf_conntrack_tcp_max_retrans 3)
	for (int i = 0; i < 4; i++)
		t.in(seg(false, TCP_ACK, 111, 5001, 1000));
	CHECK(expires_in() == 300000);
}
