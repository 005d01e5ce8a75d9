// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle: the same TCP segments go through the running kernel's GRO
// (a veth pair in a private network namespace, GRO on the receiving veth,
// threaded NAPI pinned to the sender's CPU so that all segments wait for
// one NAPI poll) and through listrx's gro; the segment boundaries of the
// packets after GRO (an AF_PACKET capture on the receiving veth sees them
// after napi_gro_receive) must be the same. Needs root, ip and ethtool;
// skipped with a printed reason otherwise.
#include <catch2/catch.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <dirent.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gro_harness.h"

using namespace gro_test;
namespace fr = lrx_test::frames;

namespace {

constexpr size_t kMss = 1448;

struct OracleCase {
	const char *name;
	size_t n;
	std::function<void(std::vector<Spec> &)> mutate;
	bool udp = false; // a UDP datagram stream (UDP GRO forwarding)
	// the frames themselves, when a case is more than one stream's
	// segments (several flows, IPv6 extension headers, bad checksums)
	std::function<std::vector<Frame>()> frames = nullptr;
};

// (L4 payload bytes, first TCP sequence number or 0 for UDP) of each
// TCP/UDP packet after GRO: the segment boundaries
using Boundaries = std::vector<std::pair<unsigned, uint32_t>>;

std::vector<Spec> oracle_stream(const OracleCase &c)
{
	if (c.udp) {
		// 5 x 1000, a shorter one (merged, ends the packet), 1000, then
		// two longer ones (end the packet, start a new one)
		std::vector<Spec> v;
		const size_t lens[] = {1000, 1000, 1000, 1000, 1000, 400, 1000,
				       1200, 1200};
		for (size_t i = 0; i < RTE_DIM(lens); i++) {
			Spec s;
			s.l4 = fr::L4::udp;
			s.sport = 7000;
			s.dport = 7001;
			s.ip_id = (uint16_t)(10 + i);
			s.payload = seq_payload((uint32_t)i * 7, lens[i]);
			s.default_payload = false;
			s.pad_to = 0;
			v.push_back(s);
		}
		return v;
	}
	std::vector<Spec> v = tcp_stream(c.n, kMss, 1);
	for (auto &s : v) {
		s.sport = 10000;
		s.dport = 5201;
		s.ack = 1;
	}
	c.mutate(v);
	return v;
}

// Payload bytes and sequence number of a TCP/UDP frame (IPv4, or IPv6
// after its hop-by-hop, routing and destination options headers); false
// for anything else.
bool boundary_of(const uint8_t *b, size_t n, std::pair<unsigned, uint32_t> &out)
{
	if (n < 14)
		return false;
	const uint16_t type = (uint16_t)(b[12] << 8 | b[13]);
	size_t l4;
	uint8_t proto;
	if (type == 0x0800 && n >= 34) {
		proto = b[23];
		l4 = 14 + (b[14] & 0xfu) * 4;
	} else if (type == 0x86dd && n >= 54) {
		proto = b[20];
		l4 = 54;
		while ((proto == 0 || proto == 43 || proto == 60) && l4 + 8 <= n) {
			proto = b[l4];
			l4 += (b[l4 + 1] + 1u) * 8;
		}
	} else {
		return false;
	}
	if (proto == 17 && l4 + 8 <= n) {
		out = {(unsigned)(n - l4 - 8), 0};
		return true;
	}
	if (proto != 6 || l4 + 20 > n)
		return false;
	const size_t doff = (b[l4 + 12] >> 4) * 4u;
	out = {(unsigned)(n - l4 - doff),
	       (uint32_t)b[l4 + 4] << 24 | (uint32_t)b[l4 + 5] << 16 |
		       (uint32_t)b[l4 + 6] << 8 | b[l4 + 7]};
	return true;
}

Boundaries listrx_boundaries(const std::vector<Frame> &frames, bool udp)
{
	Boundaries b;
	Gro g(udp ? Keys{{"udp_gro", "on"}} : Keys{});
	// one NAPI poll: fewer than 64 segments, budget not used
	REQUIRE(g.burst(to_mbufs(frames, lrx_test::mbuf_pool("gro_oracle_pool")),
			frames.size()));
	g.flush(false);
	for (rte_mbuf *m : g.out) {
		const std::vector<uint8_t> bytes = fr::mbuf_bytes(m);
		std::pair<unsigned, uint32_t> x;
		if (boundary_of(bytes.data(), bytes.size(), x))
			b.push_back(x);
	}
	return b;
}

bool run(const std::string &cmd)
{
	return std::system(cmd.c_str()) == 0;
}

// In the child: a private netns with va <-> vb, GRO on vb. Returns "" or
// why it could not be set up.
std::string oracle_setup()
{
	if (unshare(CLONE_NEWNS | CLONE_NEWNET) != 0)
		return std::string("unshare: ") + strerror(errno);
	if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
	    mount("sysfs", "/sys", "sysfs", 0, nullptr) != 0)
		return std::string("mount sysfs: ") + strerror(errno);
	if (!run("ip link add va type veth peer name vb && ip link set va up && "
		 "ip link set vb up && ethtool -K vb gro on >/dev/null 2>&1 && "
		 "ethtool -K va tso off >/dev/null 2>&1 && "
		 "ethtool -K vb rx-udp-gro-forwarding on >/dev/null 2>&1"))
		return "ip link / ethtool failed";
	// veth_skb_is_eligible_for_gro: the sender must not do TSO (done);
	// UDP GRO without a socket: NETIF_F_GRO_UDP_FWD (udp_gro_receive);
	// threaded NAPI: the poll runs in a kthread, not in the sender's
	// softirq, so all segments queue for one poll
	std::ofstream("/sys/class/net/vb/threaded") << "1";
	usleep(100000);
	cpu_set_t cpu0;
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	int pinned = 0;
	if (DIR *d = opendir("/proc")) {
		while (struct dirent *e = readdir(d)) {
			std::ifstream comm(std::string("/proc/") + e->d_name + "/comm");
			std::string name;
			if (comm && std::getline(comm, name) &&
			    name.rfind("napi/vb-", 0) == 0) {
				sched_setaffinity(atoi(e->d_name), sizeof(cpu0), &cpu0);
				pinned++;
			}
		}
		closedir(d);
	}
	if (pinned == 0)
		return "no napi/vb-* thread (threaded NAPI unavailable)";
	if (sched_setaffinity(0, sizeof(cpu0), &cpu0) != 0)
		return std::string("sched_setaffinity: ") + strerror(errno);
	return "";
}

// In the child: send the frames from va, capture on vb.
Boundaries oracle_run(std::vector<Frame> frames, std::string &why)
{
	Boundaries b;
	int rx = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	int tx = socket(AF_PACKET, SOCK_RAW, 0);
	if (rx < 0 || tx < 0) {
		why = std::string("AF_PACKET socket: ") + strerror(errno);
		return b;
	}
	sockaddr_ll rxa = {}, txa = {};
	rxa.sll_family = AF_PACKET;
	rxa.sll_protocol = htons(ETH_P_ALL);
	rxa.sll_ifindex = (int)if_nametoindex("vb");
	txa.sll_family = AF_PACKET;
	txa.sll_ifindex = (int)if_nametoindex("va");
	int rcvbuf = 1 << 24;
	setsockopt(rx, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (bind(rx, (sockaddr *)&rxa, sizeof(rxa)) != 0 ||
	    bind(tx, (sockaddr *)&txa, sizeof(txa)) != 0) {
		why = std::string("bind: ") + strerror(errno);
		return b;
	}
	// frames go to vb's MAC
	std::string mac;
	std::ifstream("/sys/class/net/vb/address") >> mac;
	unsigned m[6];
	if (sscanf(mac.c_str(), "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2],
		   &m[3], &m[4], &m[5]) == 6)
		for (auto &f : frames)
			for (int i = 0; i < 6; i++)
				f.data[i] = (uint8_t)m[i];
	// the sender outranks the NAPI kthread on the same CPU: every
	// segment is queued before the poll runs
	sched_param fifo = {};
	fifo.sched_priority = 10;
	if (sched_setscheduler(0, SCHED_FIFO, &fifo) != 0) {
		why = std::string("SCHED_FIFO: ") + strerror(errno);
		return b;
	}
	for (const Frame &f : frames)
		if (send(tx, f.data.data(), f.size(), 0) != (ssize_t)f.size()) {
			why = std::string("send: ") + strerror(errno);
			return b;
		}
	sched_param other = {};
	sched_setscheduler(0, SCHED_OTHER, &other);
	usleep(200000);
	std::vector<uint8_t> buf(1 << 20);
	for (;;) {
		ssize_t n = recv(rx, buf.data(), buf.size(), MSG_DONTWAIT);
		if (n < 0)
			break;
		std::pair<unsigned, uint32_t> x;
		if (boundary_of(buf.data(), (size_t)n, x))
			b.push_back(x);
	}
	close(rx);
	close(tx);
	return b;
}

std::string encode(const Boundaries &b)
{
	std::ostringstream o;
	for (auto &x : b)
		o << x.first << ":" << x.second << " ";
	return o.str();
}

} // namespace

TEST_CASE("gro: kernel oracle: same segment boundaries as Linux GRO on a veth",
	  "[gro][oracle]")
{
	if (geteuid() != 0) {
		WARN("SKIPPED: the kernel oracle needs root (netns, veth)");
		return;
	}
	if (!run("command -v ip >/dev/null && command -v ethtool >/dev/null")) {
		WARN("SKIPPED: the kernel oracle needs the ip and ethtool tools");
		return;
	}
	std::vector<OracleCase> cases = {
		{"in order, 64 KB rule", 60, [](auto &) {}},
		{"PSH", 6, [](auto &v) { v[2].tcp_flags |= fr::TCP_PSH; }},
		{"FIN", 6, [](auto &v) { v[2].tcp_flags |= fr::TCP_FIN; }},
		{"RST", 6, [](auto &v) { v[2].tcp_flags |= fr::TCP_RST; }},
		{"CWR", 6, [](auto &v) { v[2].tcp_flags |= 0x80; }},
		{"seq gap", 6, [](auto &v) {
			 for (size_t i = 2; i < v.size(); i++) {
				 v[i].seq += 1000;
				 v[i].payload = seq_payload(v[i].seq, kMss);
			 }
		 }},
		{"TTL", 6, [](auto &v) { v[2].ttl = 5; }},
		{"TOS", 6, [](auto &v) { v[2].tos = 4; }},
		{"ack", 6, [](auto &v) { for (size_t i = 2; i < v.size(); i++) v[i].ack = 99; }},
		{"window", 6, [](auto &v) { v[2].window = 1000; }},
		{"IP ID jump", 6, [](auto &v) { v[2].ip_id = 9000; }},
		{"fixed IP ID, DF", 6, [](auto &v) { for (auto &s : v) s.ip_id = 7; }},
		{"fixed IP ID, no DF", 6, [](auto &v) {
			 for (auto &s : v) { s.ip_id = 7; s.frag = 0; }
		 }},
		{"incrementing IP ID, no DF", 6, [](auto &v) { for (auto &s : v) s.frag = 0; }},
		{"fixed IP ID then a step", 6, [](auto &v) {
			 for (auto &s : v) s.ip_id = 7;
			 v[3].ip_id = 8;
		 }},
		{"UDP GRO", 0, [](auto &) {}, true},
	};
	// IPv6: a stream of 6 with the same extension headers in each (1400
	// bytes a segment: the headers fit a 1500-byte MTU)
	auto v6_ext = [](uint8_t first, std::vector<uint8_t> ext, size_t differ_from,
			 std::vector<uint8_t> other) {
		return [=]() {
			std::vector<Frame> v;
			auto specs = tcp_stream(6, 1400, 1, 10000, true);
			for (size_t i = 0; i < specs.size(); i++) {
				specs[i].dport = 5201;
				specs[i].ack = 1;
				v.push_back(fr::ip6_insert_ext(fr::build(specs[i]), first,
							       i >= differ_from ? other : ext));
			}
			return v;
		};
	};
	const auto dst = fr::ip6_ext(6, {1, 4, 0, 0, 0, 0});
	const auto dst2 = fr::ip6_ext(6, {0x1e, 2, 0, 0, 1, 0});
	const auto hbh = fr::ip6_ext(6, {1, 4, 0, 0, 0, 0});
	// s2 of a stream of 6 with a bad TCP checksum
	auto bad_l4 = []() {
		auto specs = tcp_stream(6, kMss, 1);
		for (auto &s : specs) { s.sport = 10000; s.dport = 5201; s.ack = 1; }
		auto v = build_all(specs);
		v[2].l4_corrupt_csum();
		return v;
	};
	// 10 flows, 3 segments each, round robin: with no hash from the veth
	// every flow is in bucket 0, 8 held at most (gro_flush_oldest)
	auto ten_flows = []() {
		std::vector<Frame> v;
		for (uint32_t r = 0; r < 3; r++)
			for (uint16_t f = 0; f < 10; f++) {
				Spec s = tcp_spec(1 + r * kMss, kMss, (uint16_t)(11000 + f));
				s.dport = 5201;
				s.ack = 1;
				v.push_back(fr::build(s));
			}
		return v;
	};
	cases.push_back({"IPv6 hop-by-hop header", 0, [](auto &) {}, false, v6_ext(0, hbh, 6, {})});
	cases.push_back({"IPv6 destination options", 0, [](auto &) {}, false,
			 v6_ext(60, dst, 6, {})});
	cases.push_back({"IPv6 destination options that change", 0, [](auto &) {}, false,
			 v6_ext(60, dst, 3, dst2)});
	cases.push_back({"IP options on s2 (leaves early)", 6,
			 [](auto &v) { v[2].ip4_options = {1, 1, 1, 0}; }});
	cases.push_back({"bad TCP checksum on s2 (leaves early)", 0, [](auto &) {}, false,
			 bad_l4});
	cases.push_back({"10 flows without a hash", 0, [](auto &) {}, false, ten_flows});
	std::vector<std::vector<Frame>> inputs;
	for (auto &c : cases)
		inputs.push_back(c.frames ? c.frames() : build_all(oracle_stream(c)));

	// the kernel side runs in a child (namespaces, scheduling class)
	int pipefd[2];
	REQUIRE(pipe(pipefd) == 0);
	pid_t pid = fork();
	REQUIRE(pid >= 0);
	if (pid == 0) {
		close(pipefd[0]);
		std::string out, why = oracle_setup();
		if (why.empty()) {
			for (auto &frames : inputs) {
				Boundaries b = oracle_run(frames, why);
				if (!why.empty())
					break;
				out += encode(b) + "\n";
			}
		}
		if (!why.empty())
			out = "SKIP " + why + "\n";
		(void)!write(pipefd[1], out.data(), out.size());
		_exit(0);
	}
	close(pipefd[1]);
	std::string text;
	char buf[4096];
	ssize_t n;
	while ((n = read(pipefd[0], buf, sizeof(buf))) > 0)
		text.append(buf, (size_t)n);
	close(pipefd[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	if (text.rfind("SKIP ", 0) == 0) {
		WARN("SKIPPED: kernel oracle unavailable: " << text.substr(5));
		return;
	}
	std::istringstream lines(text);
	for (size_t i = 0; i < cases.size(); i++) {
		std::string kernel;
		REQUIRE(std::getline(lines, kernel));
		INFO("case " << cases[i].name);
		INFO("kernel (payload bytes:seq) " << kernel);
		REQUIRE(encode(listrx_boundaries(inputs[i], cases[i].udp)) == kernel);
	}
	LRX_REQUIRE_POOL_FULL(lrx_test::mbuf_pool("gro_oracle_pool"));
}
