// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle helpers: a fresh network namespace holding one end of a
// veth pair (a host at 10.0.0.2/24 and 2001:db8::2/64, MAC
// 02:00:00:00:00:02, no forwarding, RX checksum offload off so the kernel
// verifies checksums), its `nstat` counters, and shell steps. Needs root;
// callers skip with the printed reason in `why` when `ok` is false.
#pragma once

#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

namespace lrx_test {

inline int sh(const std::string &cmd)
{
	return std::system((cmd + " >/dev/null 2>&1").c_str());
}

// What a shell command prints on stdout.
inline std::string sh_out(const std::string &cmd)
{
	std::string out;
	FILE *f = popen(cmd.c_str(), "r");
	if (!f)
		return out;
	char buf[4096];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		out.append(buf, n);
	pclose(f);
	return out;
}

inline std::map<std::string, uint64_t> nstat(const std::string &ns)
{
	std::map<std::string, uint64_t> out;
	std::string cmd = "ip netns exec " + ns + " nstat -asz 2>/dev/null";
	FILE *f = popen(cmd.c_str(), "r");
	if (!f)
		return out;
	char line[512];
	while (std::fgets(line, sizeof(line), f)) {
		std::istringstream is(line);
		std::string name;
		uint64_t value;
		if (is >> name >> value)
			out[name] = value;
	}
	pclose(f);
	return out;
}

// Why a kernel oracle cannot run here (not root, a tool missing), or ""
// when it can.
inline std::string oracle_unavailable()
{
	if (geteuid() != 0)
		return "the kernel oracle needs root (netns, veth)";
	if (sh("command -v ip && command -v nstat && command -v ethtool") != 0)
		return "needs ip, nstat and ethtool";
	return "";
}

// Raw frames sent out of an interface (AF_PACKET), e.g. the outer end of
// a Netns veth so that the namespace's end receives them.
struct RawSender {
	int fd;
	sockaddr_ll to{};

	explicit RawSender(const std::string &ifname)
	    : fd(socket(AF_PACKET, SOCK_RAW, 0))
	{
		to.sll_family = AF_PACKET;
		to.sll_ifindex = (int)if_nametoindex(ifname.c_str());
		to.sll_halen = 6;
	}
	RawSender(const RawSender &) = delete;
	RawSender &operator=(const RawSender &) = delete;
	~RawSender()
	{
		if (fd >= 0)
			close(fd);
	}
	bool ok() const { return fd >= 0 && to.sll_ifindex > 0; }
	// the whole frame went out
	template <class Bytes> bool send(const Bytes &data)
	{
		return sendto(fd, data.data(), data.size(), 0, (sockaddr *)&to,
			      sizeof(to)) == (ssize_t)data.size();
	}
};

// Frames (anything with .data bytes) sent `repeat` times out of dev, in
// order; false when one did not go out whole. Waits for the receiving
// namespace to take them.
template <class Frames>
bool replay(const std::string &dev, const Frames &frames, unsigned repeat)
{
	RawSender tx(dev);
	if (!tx.ok())
		return false;
	for (unsigned r = 0; r < repeat; r++)
		for (auto &f : frames)
			if (!tx.send(f.data))
				return false;
	usleep(300 * 1000);
	return true;
}

// A namespace with one end of a veth pair; removed on destruction.
struct Netns {
	std::string ns, outside, inside;
	bool ok = false;
	std::string why;

	Netns()
	{
		std::string id = std::to_string(getpid() % 100000);
		ns = "lrxl3_" + id;
		outside = "lrxa" + id;
		inside = "lrxb" + id;
		if (sh("ip netns add " + ns) != 0) {
			why = "cannot create a network namespace (ip netns add)";
			return;
		}
		const std::string in = "ip netns exec " + ns + " ";
		const char *steps[] = {
			"ip link add %o type veth peer name %i",
			"sysctl -w net.ipv6.conf.%o.disable_ipv6=1",
			"ethtool -K %o tx off",
			"ip link set %i netns %n",
			"%xsysctl -w net.ipv4.ip_forward=0",
			"%xsysctl -w net.ipv6.conf.all.forwarding=0",
			"%xsysctl -w net.ipv4.conf.all.rp_filter=0",
			"%xsysctl -w net.ipv4.conf.default.rp_filter=0",
			"%xsysctl -w net.ipv4.conf.%i.rp_filter=0",
			"%xsysctl -w net.ipv4.icmp_ratelimit=0",
			"%xethtool -K %i rx off",
			"%xip link set %i address 02:00:00:00:00:02",
			"%xip addr add 10.0.0.2/24 dev %i",
			"%xip addr add 2001:db8::2/64 dev %i nodad",
			"%xip link set lo up",
			"%xip link set %i up",
			"ip link set %o up",
		};
		for (const char *step : steps) {
			std::string cmd;
			for (const char *p = step; *p; p++) {
				if (*p == '%' && p[1]) {
					switch (*++p) {
					case 'o': cmd += outside; break;
					case 'i': cmd += inside; break;
					case 'n': cmd += ns; break;
					case 'x': cmd += in; break;
					}
				} else {
					cmd += *p;
				}
			}
			if (sh(cmd) != 0) {
				why = "setup step failed: " + cmd;
				return;
			}
		}
		ok = true;
	}
	~Netns()
	{
		sh("ip link del " + outside);
		sh("ip netns del " + ns);
	}
};

} // namespace lrx_test
