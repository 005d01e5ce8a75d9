// SPDX-License-Identifier: BSD-3-Clause
// DPDK's telemetry client (dpdk-telemetry.py) as the integration tests use
// it: commands into a running listrx's socket, its replies parsed.
#pragma once

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "run_binary.h"

namespace lrx_test {

inline const std::string telemetry_client = "/usr/bin/dpdk-telemetry.py";

// Why telemetry tests cannot run here, or "" when they can.
inline std::string telemetry_unavailable()
{
	return access(telemetry_client.c_str(), X_OK) == 0
		       ? ""
		       : "dpdk-telemetry.py not installed (Debian package dpdk-dev)";
}

// Sends the commands, one per line, to the listrx run with EAL file prefix
// prefix; returns the client's output.
inline std::string telemetry_query(const std::string &prefix,
				   const std::vector<std::string> &commands)
{
	std::string lines;
	for (const auto &c : commands)
		lines += c + "\\n";
	return run_program({"/bin/sh", "-c",
			    "printf '" + lines + "' | " + telemetry_client + " -f " + prefix})
		.out;
}

// Every reply to command in the client's output (one JSON object per
// command), in order.
inline std::vector<nlohmann::json> telemetry_replies(const std::string &out,
						     const std::string &command)
{
	std::vector<nlohmann::json> v;
	std::istringstream in(out);
	std::string line;
	while (std::getline(in, line)) {
		size_t brace = line.find('{');
		if (brace == std::string::npos)
			continue;
		nlohmann::json j = nlohmann::json::parse(line.substr(brace), nullptr, false);
		if (!j.is_discarded() && j.contains(command))
			v.push_back(j[command]);
	}
	return v;
}

// The first reply to command (null when there is none).
inline nlohmann::json telemetry_reply(const std::string &out, const std::string &command)
{
	auto v = telemetry_replies(out, command);
	return v.empty() ? nlohmann::json() : v[0];
}

} // namespace lrx_test
