// SPDX-License-Identifier: BSD-3-Clause
// What the conntrack kernel oracles read of the kernel over a run: the
// rule counters ((ip6)iptables-legacy-save -c), nstat and
// /proc/net/stat/nf_conntrack as deltas, the table's entries
// (/proc/net/nf_conntrack). Needs the netns of netns_oracle.h.
#pragma once
#include <catch2/catch.hpp>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "netns_oracle.h"
#include "nf_counts.h"

namespace lrx_test {

// /proc/net/stat/nf_conntrack: one row of hex per CPU under a header;
// every column summed, but entries (the table's, on every row)
inline std::map<std::string, uint64_t> ct_stat(const std::string &ns)
{
	std::istringstream in(sh_out("ip netns exec " + ns + " cat /proc/net/stat/nf_conntrack"));
	std::string header, row;
	std::vector<std::string> names;
	std::map<std::string, uint64_t> out;
	if (!std::getline(in, header))
		return out;
	std::istringstream h(header);
	for (std::string n; h >> n;)
		names.push_back(n);
	bool first = true;
	while (std::getline(in, row)) {
		std::istringstream r(row);
		for (size_t i = 0; i < names.size(); i++) {
			std::string v;
			if (!(r >> v))
				break;
			const uint64_t x = std::stoull(v, nullptr, 16);
			if (names[i] != "entries" || first)
				out[names[i]] += x;
		}
		first = false;
	}
	return out;
}

// A TCP socket listening on port 5201 in the netns (the oracles' open port),
// for AF_INET or AF_INET6; error says why it could not
struct CtListener {
	int fd = -1;
	std::string error;
	CtListener(const Netns &net, int family)
	{
		std::string failed;
		error = in_netns(net, [&] {
			fd = socket(family, SOCK_STREAM, 0);
			sockaddr_in a4{};
			sockaddr_in6 a6{};
			a4.sin_family = AF_INET;
			a4.sin_port = htons(5201);
			a6.sin6_family = AF_INET6;
			a6.sin6_port = htons(5201);
			const bool v6 = family == AF_INET6;
			if (bind(fd, v6 ? (sockaddr *)&a6 : (sockaddr *)&a4,
				 v6 ? sizeof(a6) : sizeof(a4)) ||
			    listen(fd, 64))
				failed = v6 ? "cannot listen on [::]:5201" : "cannot listen on 5201";
		});
		if (error.empty())
			error = failed;
	}
	~CtListener()
	{
		if (fd >= 0)
			close(fd);
	}
};

// What the kernel counted over a run: the rule counters, nstat and
// conntrack's statistics (deltas), the table's entries
struct KernelCounts {
	NfCounts rules;
	std::map<std::string, uint64_t> nstat, ct;
	uint64_t entries = 0;
	std::string table;
};

// save: the command that prints the rules with counters
// (iptables-legacy-save -c), prefix: the chains' ("ip6/" for IPv6)
struct KernelWatch {
	const Netns &net;
	std::string save, prefix;
	std::map<std::string, uint64_t> nstat_before, ct_before;
	KernelWatch(const Netns &n, std::string save_cmd = "iptables-legacy-save -c",
		    std::string chain_prefix = "")
		: net(n), save(std::move(save_cmd)), prefix(std::move(chain_prefix)),
		  nstat_before(nstat(n.ns)), ct_before(ct_stat(n.ns))
	{
	}
	KernelCounts take() const
	{
		KernelCounts k;
		auto after = nstat(net.ns);
		// (nstat lists a counter once it is not 0)
		for (auto &c : after)
			k.nstat[c.first] = c.second - (nstat_before.count(c.first)
							       ? nstat_before.at(c.first) : 0);
		auto ct_after = ct_stat(net.ns);
		for (auto &c : ct_after)
			k.ct[c.first] = c.second - (ct_before.count(c.first)
							    ? ct_before.at(c.first) : 0);
		// the table's entries (conntrack -L): the stat's entries column
		// also counts deleted entries that packets in flight still hold
		// (an RST queued for ARP keeps its flow's entry)
		k.table = sh_out("ip netns exec " + net.ns + " cat /proc/net/nf_conntrack");
		for (char ch : k.table)
			k.entries += ch == '\n';
		k.rules = nf_parse_save(sh_out("ip netns exec " + net.ns + " " + save), prefix);
		return k;
	}
};

// listrx's rule counters against the kernel's, chain by chain (the
// chains listrx has: FORWARD, OUTPUT, POSTROUTING are not on the receive
// path)
inline void check_rule_counts(const KernelCounts &kernel, const EngineRun &r)
{
	NfCounts ours = nf_listrx_counts(r, 1);
	for (auto &chain : kernel.rules) {
		if (ours.count(chain.first) == 0)
			continue;
		auto &mine = ours[chain.first];
		REQUIRE(mine.size() == chain.second.size());
		for (size_t k = 0; k < mine.size(); k++) {
			INFO(chain.first << " " << (k ? "rule " : "policy ") << k
				<< ": kernel " << chain.second[k].first << " pkts "
				<< chain.second[k].second << " bytes, listrx "
				<< mine[k].first << " pkts " << mine[k].second << " bytes");
			CHECK(mine[k] == chain.second[k]);
		}
	}
}

// conntrack's counters: /proc/net/stat/nf_conntrack's invalid,
// icmp_error, drop, early_drop and the table's entries against listrx's
// (6.18 counts neither insert nor found: listrx's insert is checked
// against inserts instead)
inline void check_ct_counts(const KernelCounts &kernel, const EngineRun &r, uint64_t inserts)
{
	const std::pair<const char *, const char *> ct_compared[] = {
		{"invalid", "nf_conntrack_invalid"},
		{"icmp_error", "nf_conntrack_icmp_error"},
		{"drop", "nf_conntrack_drop"},
		{"early_drop", "nf_conntrack_early_drop"},
	};
	for (auto &c : ct_compared) {
		const uint64_t k = kernel.ct.at(c.first);
		INFO(c.first << ": kernel " << k << ", listrx " << r.counters[1].at(c.second));
		CHECK(k == r.counters[1].at(c.second));
	}
	INFO("entries: kernel " << kernel.entries << " (" << kernel.table << "), listrx "
				<< r.counters[1].at("nf_conntrack_count"));
	CHECK(kernel.entries == r.counters[1].at("nf_conntrack_count"));
	CHECK(r.counters[1].at("nf_conntrack_insert") == inserts);
}

} // namespace lrx_test
