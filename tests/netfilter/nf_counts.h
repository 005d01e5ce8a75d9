// SPDX-License-Identifier: BSD-3-Clause
// The rule counters the netfilter oracles compare: the kernel's from
// (ip6)iptables-save -c, listrx's from l3-demux's maps, both as
// "TABLE/CHAIN" (prefix + table for the IPv6 maps, "ip6/") -> the
// chain's counters in file order: [0] the policy ([0:0] for a user
// chain), then the rules.
#pragma once
#include <cstdint>
#include <cstring>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine_run.h"

namespace lrx_test {

using NfCounts = std::map<std::string, std::vector<std::pair<uint64_t, uint64_t>>>;

// iptables-save -c / ip6tables-save -c text; prefix goes before the table
inline NfCounts nf_parse_save(const std::string &text, const std::string &prefix = "")
{
	NfCounts out;
	std::istringstream in(text);
	std::string line, table;
	std::regex chain_re(R"(^:(\S+) (\S+) \[(\d+):(\d+)\])");
	std::regex rule_re(R"(^\[(\d+):(\d+)\] -A (\S+))");
	std::smatch m;
	while (std::getline(in, line)) {
		if (line.size() > 1 && line[0] == '*')
			table = prefix + line.substr(1);
		else if (std::regex_search(line, m, chain_re))
			out[table + "/" + m[1].str()].push_back(
				{std::stoull(m[3]), std::stoull(m[4])});
		else if (std::regex_search(line, m, rule_re))
			out[table + "/" + m[3].str()].push_back(
				{std::stoull(m[1]), std::stoull(m[2])});
	}
	return out;
}

// the stage's chain maps (key u32, value {pkts, bytes})
inline NfCounts nf_listrx_counts(const EngineRun &r, size_t stage)
{
	NfCounts out;
	for (auto &map : r.maps.at(stage)) {
		auto &v = out[map.first];
		for (auto &e : map.second) {
			uint64_t c[2];
			std::memcpy(c, e.data() + 4, 16);
			v.push_back({c[0], c[1]});
		}
	}
	return out;
}

} // namespace lrx_test
