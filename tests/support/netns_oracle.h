// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle helpers: a fresh network namespace holding one end of a
// veth pair (a host at 10.0.0.2/24 and 2001:db8::2/64, MAC
// 02:00:00:00:00:02, no forwarding, RX checksum offload off so the kernel
// verifies checksums), its `nstat` counters, and shell steps. Needs root;
// callers skip with the printed reason in `why` when `ok` is false.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>
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

	// Runs a command inside the namespace ("" or why it failed).
	std::string in(const std::string &cmd) const
	{
		const std::string full = "ip netns exec " + ns + " " + cmd;
		return sh(full) == 0 ? "" : "failed: " + full;
	}

	// Lets the host answer 10.0.0.1 and 2001:db8::1 (the frames'
	// sources) at 02:00:00:00:00:01 without asking first (a reply would
	// otherwise wait for a neighbour solicitation nobody answers), sends
	// no router solicitation of its own and computes its checksums.
	std::string static_peer() const
	{
		std::string why = in("ip neigh add 10.0.0.1 lladdr 02:00:00:00:00:01 dev " + inside);
		if (why.empty())
			why = in("ip -6 neigh add 2001:db8::1 lladdr 02:00:00:00:00:01 dev " +
				 inside);
		if (why.empty())
			why = in("sysctl -w net.ipv6.conf." + inside + ".router_solicitations=0");
		// its replies' checksums complete on the wire (the veth would
		// pass a CHECKSUM_PARTIAL one on unfinished)
		if (why.empty())
			why = in("ethtool -K " + inside + " tx off");
		return why;
	}
};

// IPv6 DAD of the link-local address loops its neighbour solicitation back
// into the input counters: waits until no address of the namespace is
// tentative.
inline bool settle(const Netns &net)
{
	for (int i = 0; i < 50; i++) {
		std::string cmd = "ip netns exec " + net.ns +
				  " ip -6 addr show tentative | grep -q inet6";
		if (sh(cmd) != 0) {
			std::this_thread::sleep_for(std::chrono::milliseconds(200));
			return true;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	return false;
}

// Runs fn in a thread that entered the namespace (sockets made there
// belong to it); "" or why it could not enter.
inline std::string in_netns(const Netns &net, const std::function<void()> &fn)
{
	std::string why;
	std::thread t([&] {
		int fd = open(("/var/run/netns/" + net.ns).c_str(), O_RDONLY);
		if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
			why = "cannot enter " + net.ns;
			if (fd >= 0)
				close(fd);
			return;
		}
		close(fd);
		fn();
	});
	t.join();
	return why;
}

// What the namespace's host sends out of its veth end: frames read on the
// outer end from 02:00:00:00:00:02 to 02:00:00:00:00:01 (its replies),
// IPv6 neighbour discovery and MLD left out.
struct ReplyTap {
	int fd = -1;

	explicit ReplyTap(const std::string &ifname)
	{
		fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(0x0003 /* ETH_P_ALL */));
		sockaddr_ll a{};
		a.sll_family = AF_PACKET;
		a.sll_protocol = htons(0x0003);
		a.sll_ifindex = (int)if_nametoindex(ifname.c_str());
		if (fd >= 0 && bind(fd, (sockaddr *)&a, sizeof(a)) != 0) {
			close(fd);
			fd = -1;
		}
	}
	ReplyTap(const ReplyTap &) = delete;
	ReplyTap &operator=(const ReplyTap &) = delete;
	~ReplyTap()
	{
		if (fd >= 0)
			close(fd);
	}
	bool ok() const { return fd >= 0; }

	static bool is_reply(const uint8_t *b, size_t n)
	{
		static const uint8_t host[6] = {2, 0, 0, 0, 0, 2}, peer[6] = {2, 0, 0, 0, 0, 1};
		if (n < 14 || std::memcmp(b, peer, 6) != 0 || std::memcmp(b + 6, host, 6) != 0)
			return false;
		// ICMPv6 133..143: router/neighbour discovery, MLD
		const bool icmp6 = n >= 55 && b[12] == 0x86 && b[13] == 0xdd && b[20] == 58;
		return !(icmp6 && b[54] >= 133 && b[54] <= 143);
	}

	// The replies that arrive within wait_ms.
	std::vector<std::vector<uint8_t>> take(int wait_ms)
	{
		std::vector<std::vector<uint8_t>> out;
		const auto until = std::chrono::steady_clock::now() +
				   std::chrono::milliseconds(wait_ms);
		std::vector<uint8_t> buf(1 << 16);
		while (std::chrono::steady_clock::now() < until) {
			ssize_t n = recv(fd, buf.data(), buf.size(), 0);
			if (n < 0) {
				std::this_thread::sleep_for(std::chrono::milliseconds(1));
				continue;
			}
			if (is_reply(buf.data(), (size_t)n))
				out.emplace_back(buf.begin(), buf.begin() + n);
		}
		return out;
	}
};

// The sequence number of the first IPv4 SYN-ACK among frames (a host's
// replies), or 0.
inline uint32_t synack_seq(const std::vector<std::vector<uint8_t>> &frames)
{
	for (const auto &r : frames)
		if (r.size() >= 54 && r[12] == 0x08 && r[13] == 0x00 && r[23] == 6) {
			const size_t l4 = 14 + (size_t)(r[14] & 0x0f) * 4;
			if (r.size() >= l4 + 20 && (r[l4 + 13] & 0x12) == 0x12)
				return (uint32_t)r[l4 + 4] << 24 | (uint32_t)r[l4 + 5] << 16 |
				       (uint32_t)r[l4 + 6] << 8 | r[l4 + 7];
		}
	return 0;
}

} // namespace lrx_test
