// SPDX-License-Identifier: BSD-3-Clause
// DPDK's telemetry client (dpdk-telemetry.py) as the integration tests use
// it: commands into a running listrx's socket, its replies parsed.
#pragma once

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
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

// The socket dpdk-telemetry.py talks to: EAL's runtime directory
// (eal_create_runtime_dir: /var/run for root, else XDG_RUNTIME_DIR or
// /tmp), then dpdk/PREFIX.
inline std::string telemetry_socket_path(const std::string &prefix)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	std::string base = getuid() == 0 ? "/var/run" : xdg ? xdg : "/tmp";
	return base + "/dpdk/" + prefix + "/dpdk_telemetry.v2";
}

// One client on that socket, as dpdk-telemetry.py is one, without a
// Python start per command: for tests that ask many times a second.
class TelemetrySocket
{
      public:
	explicit TelemetrySocket(const std::string &prefix)
	{
		const std::string path = telemetry_socket_path(prefix);
		sockaddr_un addr{};
		addr.sun_family = AF_UNIX;
		if (path.size() >= sizeof(addr.sun_path))
			return;
		path.copy(addr.sun_path, path.size());
		fd_ = socket(AF_UNIX, SOCK_SEQPACKET, 0);
		char greeting[4096];
		if (fd_ >= 0 && (connect(fd_, (sockaddr *)&addr, sizeof(addr)) != 0 ||
				 recv(fd_, greeting, sizeof(greeting), 0) <= 0))
			close_fd();
	}
	~TelemetrySocket() { close_fd(); }
	TelemetrySocket(const TelemetrySocket &) = delete;
	TelemetrySocket &operator=(const TelemetrySocket &) = delete;

	bool connected() const { return fd_ >= 0; }
	// The reply to command, "" once the server closed the connection
	// (or the process is gone).
	std::string ask(const std::string &command)
	{
		std::vector<char> buf(1 << 16);
		if (fd_ < 0 || send(fd_, command.data(), command.size(), MSG_NOSIGNAL) < 0)
			return "";
		ssize_t n = recv(fd_, buf.data(), buf.size(), 0);
		if (n <= 0) {
			close_fd();
			return "";
		}
		return std::string(buf.data(), (size_t)n);
	}

      private:
	void close_fd()
	{
		if (fd_ >= 0)
			close(fd_);
		fd_ = -1;
	}
	int fd_ = -1;
};

} // namespace lrx_test
