// SPDX-License-Identifier: BSD-3-Clause
// netfilter's tables (stages/netfilter): the iptables-save parser's
// errors, and ipt_do_table's semantics on packets built by the frame
// builder: matches (addresses, protocol, fragments, devices, udp/tcp
// ports and flags, multiport), targets (ACCEPT, DROP, RETURN, jump, goto,
// no target), policies and underflows, the tables of a hook in priority
// order, hotdrop, and the counters as iptables -L -v -x shows them.
#include <catch2/catch.hpp>

#include <arpa/inet.h>

#include <string>
#include <vector>

#include "frames.h"

extern "C" {
#include "netfilter/netfilter.h"
}

using namespace lrx_test::frames;

namespace {

struct Rules {
	lrx_nf *nf = nullptr;
	std::vector<lrx_nf_counter> ctr;
	char err[512] = "";
	int rc;
	explicit Rules(const std::string &text)
	{
		rc = lrx_nf_parse(text.c_str(), "rules", &nf, err, sizeof(err));
		if (rc == 0)
			ctr.resize(nf->n_entries);
	}
	~Rules() { lrx_nf_free(nf); }

	// the hook's verdict on frame f, received on port (VLAN device vid)
	unsigned hook(unsigned h, const Frame &f, uint16_t port = 0,
		      uint16_t vid = 0)
	{
		lrx_nf_pkt p{};
		p.iph = f.data.data() + f.l2_len;
		p.len = (uint32_t)(p.iph[2] << 8 | p.iph[3]); /* trimmed */
		p.seg_len = (uint32_t)(f.size() - f.l2_len);
		p.thoff = (p.iph[0] & 0xf) * 4u;
		p.fragoff = (uint16_t)(((p.iph[6] << 8) | p.iph[7]) & 0x1fff);
		p.in_port = port;
		p.in_vid = vid;
		return lrx_nf_hook_slow(nf, ctr.data(), h, &p);
	}
	unsigned in(const Frame &f, uint16_t port = 0, uint16_t vid = 0)
	{
		return hook(LRX_NF_LOCAL_IN, f, port, vid);
	}
	// {pkts, bytes} of rule k (1 first; 0 the policy) of "table/chain"
	std::pair<uint64_t, uint64_t> count(const std::string &chain, uint32_t k)
	{
		lrx_stage_map info;
		for (unsigned m = 0; lrx_nf_map_at(nf, m, &info); m++) {
			if (chain != info.name)
				continue;
			uint32_t cursor = k, key;
			uint64_t v[2];
			REQUIRE(lrx_nf_map_next(nf, ctr.data(), m, &cursor, &key, v));
			REQUIRE(key == k);
			return {v[0], v[1]};
		}
		FAIL("no chain " << chain);
		return {};
	}
};

std::string filter(const std::string &rules, const char *policy = "ACCEPT")
{
	return std::string("*filter\n:INPUT ") + policy +
	       " [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n" + rules +
	       "COMMIT\n";
}

Frame udp_src(uint32_t src, uint16_t sport, uint16_t dport)
{
	Spec s;
	s.ip4_src = src;
	s.sport = sport;
	s.dport = dport;
	return build(s);
}

Frame icmp4()
{
	Spec s;
	s.l4 = L4::icmp;
	return build(s);
}

} // namespace

TEST_CASE("netfilter rules: errors name the line, the word and what is valid",
	  "[netfilter]")
{
	const std::vector<std::pair<std::string, std::string>> cases = {
		{"*nat\nCOMMIT\n", ":1: '*nat': the nat table needs connection tracking"},
		{"*security\nCOMMIT\n", "tables on the receive path: raw, mangle, filter"},
		{"*filter\n:INPUT ACCEPT [0:0]\n", ":2: table filter is not committed"},
		{"-A INPUT -j DROP\n", "'-A': a rule comes inside a table"},
		{filter("-A INPT -j DROP\n"), ":5: 'INPT': no such chain in table filter"},
		{filter("-A INPUT -j REJECT\n"), "'REJECT': no such chain in table filter: "
		 "targets are ACCEPT, DROP, RETURN or a user chain (others, such as "
		 "REJECT"},
		{filter("-A INPUT -p udp --dport 99999 -j DROP\n"), "'99999': a port is P"},
		{filter("-A INPUT -p udp --dport 20:10 -j DROP\n"), "'20:10': a port is P"},
		{filter("-A INPUT --dport 53 -j DROP\n"), "'--dport': needs -p udp or -p tcp"},
		{filter("-A INPUT -p tcp -m udp --dport 53 -j DROP\n"),
		 "'udp': the udp match needs -p udp"},
		{filter("-A INPUT -m multiport --dports 1,2 -j DROP\n"),
		 "'multiport': needs -p tcp, udp"},
		{filter("-A INPUT -p udp -m multiport --dports 1,2,3,4,5,6,7,8:9,10,11,"
			"12,13,14,15,16 -j DROP\n"), "too many ports specified: at most 15"},
		{filter("-A INPUT -p udp -m multiport -j DROP\n"),
		 "needs --sports, --dports or --ports"},
		{filter("-A INPUT -s 10.0.0.0/33 -j DROP\n"), "'10.0.0.0/33': an IPv4 address"},
		{filter("-A INPUT -s 2001:db8::1 -j DROP\n"), "IPv6 rules are ip6tables', in the netfilter6 file"},
		{filter("-A INPUT -i eth0 -j DROP\n"), "'eth0': an input device is portN"},
		{filter("-A INPUT -i port0.0 -j DROP\n"), "VID 1..4094"},
		{filter("-A INPUT -i port0.1+ -j DROP\n"), "a wildcard inside a VLAN id"},
		{filter("-A INPUT -o port0 -j DROP\n"), "no output device on the receive path"},
		{filter("-A INPUT -m conntrack --ctstatus SEEN_REPLY -j DROP\n"),
		 "'--ctstatus': options:"},
		{filter("-A INPUT -m limit --limit 5/s -j DROP\n"), "'limit': matches: udp, tcp"},
		{filter("-A INPUT -j DROP -j ACCEPT\n"), "one target per rule"},
		{filter("-I INPUT -j DROP\n"), "'-I': a rule line is '-A CHAIN"},
		{filter(":INPUT - [0:0]\n"), "INPUT is a built-in chain of filter"},
		{filter(":mine ACCEPT [0:0]\n"), "only built-in chains have a policy"},
		{filter(":a - [0:0]\n:a - [0:0]\n"), "chain a declared twice (line 5)"},
		{filter(":a - [0:0]\n:b - [0:0]\n-A a -j b\n-A b -p udp -g a\n"),
		 "a loop of jumps through chain a: iptables-restore refuses it"},
		{filter("-A INPUT ! -p all -j DROP\n"), "! -p all matches nothing"},
		// what iptables-restore refuses: bad counters, an option twice,
		// an inverted target, a built-in chain declared twice
		{filter("[abc] -A INPUT -j DROP\n"), ":5: '[abc]': counters are [PACKETS:BYTES]"},
		{filter("[-1:-1] -A INPUT -j DROP\n"), "'[-1:-1]': counters are"},
		{filter("[1:2:3] -A INPUT -j DROP\n"), "'[1:2:3]': counters are"},
		{filter(":mine - [1:x]\n"), "'[1:x]': counters are"},
		{filter("-A INPUT -c 1 -j DROP\n"), "'-c': -c PACKETS BYTES"},
		{filter("-A INPUT -f -f -j DROP\n"), "'-f': given twice in one rule"},
		{filter("-A INPUT -p udp -p tcp -j DROP\n"), "'-p': given twice in one rule"},
		{filter("-A INPUT -s 10.0.0.1 --source 10.0.0.2 -j DROP\n"),
		 "'--source': given twice"},
		{filter("-A INPUT -p tcp -m tcp --syn --syn -j DROP\n"), "'--syn': given twice"},
		{filter("-A INPUT -p tcp -m tcp --syn --tcp-flags SYN SYN -j DROP\n"),
		 "'--tcp-flags': given twice"},
		{filter("-A INPUT -p udp --dport 1 --dport 2 -j DROP\n"), "'--dport': given twice"},
		{filter("-A INPUT -p udp -m multiport --dports 1 --sports 2 -j DROP\n"),
		 "'--sports': given twice"},
		{filter("-A INPUT ! -j DROP\n"), "'!': a target cannot be inverted"},
		{filter("-A INPUT ! -m comment --comment x -j DROP\n"), "a match cannot be inverted"},
		{filter(":INPUT DROP [0:0]\n"), ":5: ':INPUT': chain INPUT declared twice (line 2)"},
		{filter("-A INPUT -p tcp -m tcp --tcp-flags SYN,BOGUS SYN -j DROP\n"),
		 "'BOGUS': TCP flags are"},
		{"*filter\nCOMMIT\n*filter\nCOMMIT\n", ":3: '*filter': table filter given twice"},
		{"*filter\n-A INPUT -m comment --comment \"open\n", "a quote is not closed"},
	};
	for (auto &c : cases) {
		INFO(c.first);
		Rules r(c.first);
		CHECK(r.rc == -EINVAL);
		INFO(r.err);
		CHECK(std::string(r.err).find(c.second) != std::string::npos);
		CHECK(std::string(r.err).rfind("rules:", 0) == 0);
	}
	// -p/-s/-d twice: once each is fine, as are two comments
	Rules ok(filter("-A INPUT -s 10.0.0.1 -d 10.0.0.2 -p udp --sport 1 --dport 2 "
			"-m comment --comment a -m comment --comment b -c 1 2 -j DROP\n"));
	CHECK(ok.rc == 0);
	char err[256];
	lrx_nf *nf;
	CHECK(lrx_nf_load("/nonexistent/rules", &nf, err, sizeof(err)) == -ENOENT);
	CHECK(std::string(err).find("/nonexistent/rules: cannot open") != std::string::npos);
}

TEST_CASE("netfilter rules: an empty file is an empty rule set, as "
	  "iptables-restore of an empty file", "[netfilter]")
{
	for (const char *text : {"", "# nothing\n\n"}) {
		Rules r(text);
		REQUIRE(r.rc == 0);
		CHECK(r.nf->n_entries == 0);
		CHECK(r.in(udp_src(0x0a000001, 1, 2)) == LRX_NF_ACCEPT);
	}
}

// chains c0..c(n-1), INPUT jumping to c0 and each chain to every later one
static std::string jump_dag(unsigned n)
{
	std::string t = "*filter\n:INPUT ACCEPT [0:0]\n";
	for (unsigned i = 0; i < n; i++)
		t += ":c" + std::to_string(i) + " - [0:0]\n";
	t += "-A INPUT -j c0\n";
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++)
			t += "-A c" + std::to_string(i) + " -j c" + std::to_string(j) + "\n";
	return t + "COMMIT\n";
}

TEST_CASE("netfilter rules: a jump graph a packet would walk for too long is "
	  "refused at load, naming the chains", "[netfilter]")
{
	// n chains: 2^n rules walked (each chain's rules and return, every
	// jump taken); 40 chains were a hang (2^39 paths for one packet)
	Rules small(jump_dag(14));
	REQUIRE(small.rc == 0);
	CHECK(small.in(udp_src(0x0a000001, 1, 2)) == LRX_NF_ACCEPT);
	// every rule of c13 walked once per path to it: 2^12
	CHECK(small.count("filter/c13", 0).first == 4096);
	Rules big(jump_dag(17));
	REQUIRE(big.rc == -EINVAL);
	INFO(big.err);
	CHECK(std::string(big.err).find("rules:19: 'c16': a packet through filter/INPUT "
					"may walk 131073 rules: the jumps reach chain c16 "
					"by 32768 paths") != std::string::npos);
	CHECK(std::string(big.err).find("at most 65536 rules per packet") != std::string::npos);
	Rules huge(jump_dag(40));
	REQUIRE(huge.rc == -EINVAL);
	INFO(huge.err);
	CHECK(std::string(huge.err).find("may walk 1099511627777 rules") != std::string::npos);
}

TEST_CASE("netfilter: each match of ip_packet_match, xt_tcpudp and "
	  "xt_multiport", "[netfilter]")
{
	Rules r(filter(
		"-A INPUT -s 10.9.0.0/16 -j DROP\n"                                  // 1
		"-A INPUT ! -d 10.0.0.2/32 -j DROP\n"                                // 2
		"-A INPUT -p udp -m udp --dport 10000:19999 -j DROP\n"               // 3
		"-A INPUT -p udp -m udp ! --sport 0:1023 --dport 53 -j DROP\n"       // 4
		"-A INPUT -p tcp -m tcp --syn -j DROP\n"                             // 5
		"-A INPUT -p udp -m multiport --dports 7000,7100:7200 -j DROP\n"     // 6
		"-A INPUT -p udp -m multiport --ports 8000 -j DROP\n"                // 7
		"-A INPUT -p udp -m multiport ! --sports 1:65000 -j DROP\n"          // 8
		"-A INPUT -i port1 -p udp --dport 54 -j DROP\n"                      // 9
		"-A INPUT -i port2.5 -p udp --dport 55 -j DROP\n"                    // 10
		"-A INPUT -i port3+ -p udp --dport 56 -j DROP\n"                     // 11
		"-A INPUT ! -i port0 -p udp --dport 57 -j DROP\n"                    // 12
		"-A INPUT -f -j DROP\n"                                              // 13
		"-A INPUT ! -p udp -j DROP\n"));                                     // 14
	REQUIRE(r.rc == 0);
	const unsigned D = LRX_NF_DROP, A = LRX_NF_ACCEPT;
	struct Case { Frame f; uint16_t port, vid; unsigned v; int rule; };
	const std::vector<Case> cases = {
		{udp_src(ip4(10, 9, 1, 1), 1000, 2000), 0, 0, D, 1},
		{udp_src(ip4(10, 8, 1, 1), 1000, 2000), 0, 0, A, 0},
		{udp4(1000, 2000).ip4_dst(ip4(10, 0, 0, 3)), 0, 0, D, 2},
		{udp4(1000, 15000), 0, 0, D, 3},
		{udp4(1000, 20000), 0, 0, A, 0},
		{udp4(1024, 53), 0, 0, D, 4},
		{udp4(1023, 53), 0, 0, A, 0},
		{tcp4(TCP_SYN, 1, 80), 0, 0, D, 5},
		{tcp4(TCP_SYN | TCP_ACK, 1, 80), 0, 0, D, 14},
		{udp4(1, 7000), 0, 0, D, 6},
		{udp4(1, 7150), 0, 0, D, 6},
		{udp4(1, 7201), 0, 0, A, 0},
		{udp4(8000, 1), 0, 0, D, 7},
		{udp4(65001, 1), 0, 0, D, 8},
		{udp4(1, 54), 1, 0, D, 9},
		{udp4(1, 54), 0, 0, A, 0},
		{udp4(1, 54), 1, 5, A, 0},      // port1.5 is not port1
		{udp4(1, 55), 2, 5, D, 10},
		{udp4(1, 55), 2, 6, A, 0},       // port2.6 is not port2.5
		{udp4(1, 56), 3, 0, D, 11},
		{udp4(1, 56), 3, 9, D, 11},      // port3.9 starts with port3
		{udp4(1, 56), 30, 0, D, 11},     // port30 too
		{udp4(1, 56), 4, 0, A, 0},
		{udp4(1, 57), 1, 0, D, 12},
		{udp4(1, 57), 0, 0, A, 0},
		// a non-first fragment: no ports (rule 3 misses), -f matches
		{udp4(1, 15000).ip4_frag(0x0010), 0, 0, D, 13},
		// a first fragment has its ports
		{udp4(1, 15000).ip4_frag(0x2000), 0, 0, D, 3},
		{icmp4(), 0, 0, D, 14},
	};
	for (size_t i = 0; i < cases.size(); i++) {
		const Case &c = cases[i];
		INFO("case " << i);
		std::vector<lrx_nf_counter> before = r.ctr;
		CHECK(r.in(c.f, c.port, c.vid) == c.v);
		// exactly the rule that decided counts it (or the policy)
		for (uint32_t k = 0; k <= 14; k++) {
			uint32_t e = k == 0 ? 14 : k - 1;
			uint64_t grew = r.ctr[e].pkts - before[e].pkts;
			INFO("rule " << k);
			CHECK(grew == (k == (uint32_t)c.rule ? 1u : 0u));
		}
	}
}

TEST_CASE("netfilter: targets, user chains, policies and the tables of a hook "
	  "in priority order, counted as iptables -L -v -x", "[netfilter]")
{
	Rules r("*raw\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		"-A PREROUTING -p udp -m udp --dport 1 -j DROP\n"
		"-A PREROUTING -p udp -m udp --dport 2 -j ACCEPT\n"
		"COMMIT\n"
		"*mangle\n:PREROUTING DROP [5:5]\n:INPUT ACCEPT [0:0]\n"
		"-A PREROUTING -p udp -j ACCEPT\n"
		"-A INPUT -p udp -m udp --dport 3 -j DROP\n"
		"COMMIT\n"
		"*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
		":in_udp - [0:0]\n:deep - [0:0]\n:final - [0:0]\n"
		"-A INPUT -p udp -j in_udp\n"                       // 1
		"-A INPUT -p udp -m udp --dport 10 -j ACCEPT\n"     // 2
		"-A INPUT -p udp\n"                                 // 3: no target
		"-A in_udp -p udp -m udp --dport 4 -j ACCEPT\n"     // in_udp 1
		"-A in_udp -p udp -m udp --dport 5 -j RETURN\n"     // in_udp 2
		"-A in_udp -p udp -m udp --dport 6 -j deep\n"       // in_udp 3
		"-A in_udp -p udp -m udp --dport 7 -g final\n"      // in_udp 4
		"-A deep -j RETURN\n"
		"-A final -p udp -m udp --dport 8 -j ACCEPT\n"
		"COMMIT\n");
	REQUIRE(r.rc == 0);
	INFO(r.err);
	const unsigned D = LRX_NF_DROP, A = LRX_NF_ACCEPT;
	// PREROUTING: raw (-300) then mangle (-150); ACCEPT goes on
	CHECK(r.hook(LRX_NF_PRE_ROUTING, udp4(9, 1)) == D);
	CHECK(r.count("mangle/PREROUTING", 1).first == 0); // raw dropped it
	CHECK(r.hook(LRX_NF_PRE_ROUTING, udp4(9, 2)) == A);
	CHECK(r.count("mangle/PREROUTING", 1).first == 1);
	CHECK(r.hook(LRX_NF_PRE_ROUTING, tcp4()) == D);    // mangle's policy
	CHECK(r.count("mangle/PREROUTING", 0).first == 1);
	CHECK(r.count("raw/PREROUTING", 0).first == 1);    // raw's policy
	// INPUT: mangle then filter
	CHECK(r.in(udp4(9, 3)) == D);
	CHECK(r.count("filter/INPUT", 1).first == 0);
	CHECK(r.in(udp4(9, 4)) == A);                      // in the jump
	CHECK(r.count("filter/in_udp", 1).first == 1);
	CHECK(r.count("filter/INPUT", 2).first == 0);
	CHECK(r.in(udp4(9, 5)) == D);                      // RETURN -> rule 2, 3, policy
	CHECK(r.count("filter/in_udp", 2).first == 1);
	CHECK(r.count("filter/INPUT", 2).first == 0);
	CHECK(r.count("filter/INPUT", 3).first == 1);      // no target: counts, goes on
	CHECK(r.count("filter/INPUT", 0).first == 1);
	CHECK(r.in(udp4(9, 10)) == A);                     // in_udp falls off its end
	CHECK(r.count("filter/in_udp", 0).first == 1);     // the implicit return
	CHECK(r.count("filter/INPUT", 2).first == 1);
	CHECK(r.in(udp4(9, 6)) == D);                      // deep returns into in_udp
	CHECK(r.count("filter/deep", 1).first == 1);
	CHECK(r.count("filter/in_udp", 4).first == 0);
	CHECK(r.count("filter/in_udp", 0).first == 2);
	// goto: final falls off its end and returns past in_udp, into INPUT
	CHECK(r.in(udp4(9, 7)) == D);
	CHECK(r.count("filter/in_udp", 4).first == 1);
	CHECK(r.count("filter/final", 0).first == 1);
	CHECK(r.count("filter/in_udp", 0).first == 2);
	CHECK(r.count("filter/INPUT", 3).first == 3);
	CHECK(r.in(udp4(9, 8)) == D);                      // final's rule needs the goto
	CHECK(r.count("filter/final", 1).first == 0);
	CHECK(r.in(tcp4()) == D);
	CHECK(r.count("filter/INPUT", 0).first == 5);
	// the bytes are skb->len: the IP packet
	CHECK(r.count("filter/INPUT", 1).second == 6 * (uint64_t)udp4().l3_len);
	CHECK(r.count("filter/INPUT", 3).second == 4 * (uint64_t)udp4().l3_len);
	// the chains shown: receive-hook built-ins and user chains
	std::vector<std::string> names;
	lrx_stage_map info;
	for (unsigned m = 0; lrx_nf_map_at(r.nf, m, &info); m++)
		names.push_back(info.name);
	CHECK(names == std::vector<std::string>{"raw/PREROUTING", "mangle/PREROUTING",
						 "mangle/INPUT", "filter/INPUT",
						 "filter/in_udp", "filter/deep",
						 "filter/final"});
	char list[2048];
	size_t n = lrx_nf_list(r.nf, r.ctr.data(), list, sizeof(list));
	CHECK(n < sizeof(list));
	CHECK(std::string(list).find("filter Chain INPUT (policy DROP 5 packets") !=
	      std::string::npos);
}

TEST_CASE("netfilter: a port match on a packet too short for its header "
	  "drops it (hotdrop) without counting the rule; a TCP fragment at "
	  "offset 1 too", "[netfilter]")
{
	Rules r(filter("-A INPUT -p udp -m udp --dport 9 -j ACCEPT\n"
		       "-A INPUT -p tcp -m tcp --dport 9 -j ACCEPT\n"
		       "-A INPUT -p icmp -j ACCEPT\n"));
	REQUIRE(r.rc == 0);
	Frame short_udp = udp4(1, 9).ip4_total_length(24).ip4_fix_csum();
	CHECK(r.in(short_udp) == LRX_NF_DROP);
	CHECK(r.count("filter/INPUT", 1).first == 0);
	CHECK(r.count("filter/INPUT", 0).first == 0);
	CHECK(r.in(tcp4(TCP_ACK, 1, 9).ip4_frag(0x0001)) == LRX_NF_DROP);
	CHECK(r.count("filter/INPUT", 0).first == 0);
	// offset 2: no match, on to the policy
	CHECK(r.in(tcp4(TCP_ACK, 1, 9).ip4_frag(0x0002)) == LRX_NF_ACCEPT);
	CHECK(r.count("filter/INPUT", 0).first == 1);
	// a short ICMP is nobody's business here
	CHECK(r.in(udp4(1, 9).ip4_proto(1).ip4_total_length(24)) == LRX_NF_ACCEPT);
	CHECK(r.count("filter/INPUT", 3).first == 1);
}

TEST_CASE("netfilter rules: -i \"\" is any device, as xtables_parse_interface "
	  "reads an empty name", "[netfilter]")
{
	Rules r("*filter\n:INPUT ACCEPT [0:0]\n-A INPUT -i \"\" -j DROP\nCOMMIT\n");
	INFO(r.err);
	REQUIRE(r.rc == 0);
	CHECK(r.in(udp_src(0x0a000001, 1, 2), 0) == LRX_NF_DROP);
	CHECK(r.in(udp_src(0x0a000001, 1, 2), 3, 7) == LRX_NF_DROP);
}
