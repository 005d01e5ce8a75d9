// SPDX-License-Identifier: BSD-3-Clause
// Kernel parity oracle: each shipped XDP object is loaded into the running
// kernel with libbpf and run on each test frame with BPF_PROG_TEST_RUN
// (bpf_prog_test_run_opts, repeat 1, the kernel's JIT); the kernel's return
// code, output frame and final map contents must equal listrx's, with the
// rte_bpf interpreter and JIT. Needs root and a kernel with BPF; skips with
// a printed reason otherwise.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <string>
#include <vector>

#include "frames.h"
#include "test_eal.h"
#include "xdp_harness.h"

using namespace lrx_test::frames;
using lrx_xdp_test::Stage;
using lrx_xdp_test::prog_path;
using lrx_xdp_test::test_prog_path;
using Keys = std::map<std::string, std::string>;

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("xdpk_pool", 2047);
}

Frame with(void (*f)(Spec &))
{
	Spec s;
	f(s);
	return build(s);
}

// BPF_PROG_TEST_RUN refuses frames shorter than an Ethernet header, so the
// oracle frames start at 14 bytes.
std::vector<Frame> oracle_frames()
{
	return {
		udp4(), udp4(1000, 53), udp4(7, 123), tcp4(), udp6(1000, 53),
		with([](Spec &s) { s.l4 = L4::icmp; }),
		arp_request(ip4(10, 0, 0, 1), ip4(10, 0, 0, 2)),
		with([](Spec &s) { s.vlans = {7}; }),
		udp4(1000, 53).truncate(14), udp4(1000, 53).truncate(30),
		udp4(1000, 53).truncate(40),
		with([](Spec &s) { s.ip4_options = {1, 1, 1, 1}; s.dport = 53; }),
		udp4(1000, 53).ip4_ihl(2), udp4().append(900, 0xab),
	};
}

lrx_next_t next_of(uint32_t retval, uint16_t port)
{
	switch (retval) {
	case XDP_DROP: return lrx_next_drop(LRX_DROP_XDP);
	case XDP_PASS: return LRX_NEXT_CONTINUE_V;
	case XDP_TX: return lrx_next_tx(port);
	default: return lrx_next_drop(LRX_DROP_XDP_ABORTED);
	}
}

struct KernelProg {
	bpf_object *obj = nullptr;
	int fd = -1;
	std::string why;

	explicit KernelProg(const std::string &path)
	{
		obj = bpf_object__open_file(path.c_str(), nullptr);
		if (obj == nullptr || libbpf_get_error(obj)) {
			obj = nullptr;
			why = "libbpf cannot open " + path;
			return;
		}
		int rc = bpf_object__load(obj);
		if (rc != 0) {
			why = "the kernel refused to load " + path + ": " +
			      strerror(-rc);
			return;
		}
		fd = bpf_program__fd(bpf_object__next_program(obj, nullptr));
	}
	~KernelProg()
	{
		if (obj)
			bpf_object__close(obj);
	}
	bpf_map *map(const char *name)
	{
		return bpf_object__find_map_by_name(obj, name);
	}
};

} // namespace

TEST_CASE("kernel parity: same object, same frames, same verdicts and bytes",
	  "[xdp][kernel]")
{
	if (geteuid() != 0) {
		WARN("SKIPPED: kernel parity needs root (BPF_PROG_TEST_RUN)");
		return;
	}
	rte_mempool *mp = pool();
	const auto frames = oracle_frames();
	for (const char *prog : {"xdp_drop", "xdp_pass", "xdp_tx_swap",
				 "xdp_port_filter", "xdp_proto_count"}) {
		INFO("program " << prog);
		KernelProg k(prog_path(prog));
		if (k.fd < 0) {
			WARN("SKIPPED: " << k.why);
			return;
		}
		const bool filter = std::string(prog) == "xdp_port_filter";
		if (filter) {
			uint16_t key = 53;
			uint64_t zero = 0;
			REQUIRE(bpf_map__update_elem(k.map("blocked_ports"), &key,
						     sizeof(key), &zero,
						     sizeof(zero), BPF_ANY) == 0);
		}
		std::vector<uint32_t> k_ret;
		std::vector<std::vector<uint8_t>> k_out;
		for (const Frame &f : frames) {
			std::vector<uint8_t> out(f.size() + 512);
			LIBBPF_OPTS(bpf_test_run_opts, opts,
				    .data_in = f.data.data(),
				    .data_out = out.data(),
				    .data_size_in = (uint32_t)f.size(),
				    .data_size_out = (uint32_t)out.size(),
				    .repeat = 1);
			int rc = bpf_prog_test_run_opts(k.fd, &opts);
			if (rc != 0) {
				WARN("SKIPPED: BPF_PROG_TEST_RUN for XDP failed: "
				     << strerror(-rc));
				return;
			}
			out.resize(opts.data_size_out);
			k_ret.push_back(opts.retval);
			k_out.push_back(out);
		}
		for (const char *exec : {"interp", "jit"}) {
			INFO("exec=" << exec);
			Stage st(Keys{{"prog", prog_path(prog)}, {"exec", exec},
				      {"map_init", filter ? "blocked_ports:53=0" : ""}});
			INFO(st.err);
			REQUIRE(st.rc == 0);
			for (size_t i = 0; i < frames.size(); i++) {
				INFO("frame " << i << " kernel retval " << k_ret[i]);
				rte_mbuf *m = frames[i].to_mbuf(mp);
				REQUIRE(m);
				m->port = 1;
				CHECK(st.one(m) == next_of(k_ret[i], 1));
				CHECK(mbuf_bytes(m) == k_out[i]);
				rte_pktmbuf_free(m);
			}
			// maps: every value the kernel holds, listrx holds
			if (lrx_xdp_prog *p = lrx_xdp_stage_prog(st.ctx)) {
				for (unsigned mi = 0; mi < lrx_xdp_prog_map_count(p);
				     mi++) {
					lrx_xdp_map *m = lrx_xdp_prog_map_at(p, mi);
					bpf_map *km = k.map(m->name);
					REQUIRE(km != nullptr);
					INFO("map " << m->name);
					std::vector<uint8_t> key(m->key_size),
						next(m->key_size), kval(m->value_size);
					void *prev = nullptr;
					unsigned n = 0;
					while (bpf_map__get_next_key(km, prev, next.data(),
								     m->key_size) == 0) {
						key = next;
						prev = key.data();
						REQUIRE(bpf_map__lookup_elem(km, key.data(),
							m->key_size, kval.data(),
							m->value_size, 0) == 0);
						void *ours = lrx_xdp_map_lookup(m, key.data());
						REQUIRE(ours != nullptr);
						CHECK(memcmp(ours, kval.data(),
							     m->value_size) == 0);
						n++;
					}
					CHECK(n > 0);
				}
			}
		}
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {

int sh(const std::string &cmd)
{
	return system((cmd + " >/dev/null 2>&1").c_str());
}

std::vector<uint64_t> proto_counts(bpf_map *m)
{
	std::vector<uint64_t> v(256);
	for (uint32_t k = 0; k < 256; k++)
		bpf_map__lookup_elem(m, &k, sizeof(k), &v[k], sizeof(v[k]), 0);
	return v;
}

} // namespace

// End to end: the object attached in generic mode (xdpgeneric, SKB mode)
// to one end of a veth pair whose peer sits in a fresh network namespace;
// frames sent with AF_PACKET into the other end; the kernel's per-protocol
// counts (read from its map) must equal listrx's on the same frames.
TEST_CASE("kernel parity end to end: generic XDP on a veth in a netns",
	  "[xdp][kernel][netns]")
{
	if (geteuid() != 0) {
		WARN("SKIPPED: the veth/netns variant needs root");
		return;
	}
	rte_mempool *mp = pool();
	const std::string ns = "lrxxdp" + std::to_string(getpid());
	const std::string a = "lrxa" + std::to_string(getpid() % 100000);
	const std::string b = "lrxb" + std::to_string(getpid() % 100000);
	if (sh("ip netns add " + ns) != 0) {
		WARN("SKIPPED: cannot create a network namespace (ip netns add)");
		return;
	}
	struct Cleanup {
		std::string ns, a;
		~Cleanup() { sh("ip link del " + a); sh("ip netns del " + ns); }
	} cleanup{ns, a};
	if (sh("ip link add " + a + " type veth peer name " + b) != 0 ||
	    sh("ip link set " + b + " netns " + ns) != 0) {
		WARN("SKIPPED: cannot create a veth pair into the namespace");
		return;
	}
	// no IPv6 autoconfiguration chatter (DAD, MLD) during the count
	sh("sysctl -w net.ipv6.conf." + a + ".disable_ipv6=1");
	sh("ip netns exec " + ns + " sysctl -w net.ipv6.conf." + b +
	   ".disable_ipv6=1");
	REQUIRE(sh("ip link set " + a + " up") == 0);
	REQUIRE(sh("ip netns exec " + ns + " ip link set " + b + " up") == 0);

	KernelProg k(prog_path("xdp_proto_count"));
	if (k.fd < 0) {
		WARN("SKIPPED: " << k.why);
		return;
	}
	// attach inside the namespace, then come back
	int self = open("/proc/self/ns/net", O_RDONLY);
	int target = open(("/var/run/netns/" + ns).c_str(), O_RDONLY);
	REQUIRE(self >= 0);
	REQUIRE(target >= 0);
	REQUIRE(setns(target, CLONE_NEWNET) == 0);
	int ifindex = (int)if_nametoindex(b.c_str());
	int arc = ifindex > 0 ? bpf_xdp_attach(ifindex, k.fd,
					       XDP_FLAGS_SKB_MODE, nullptr) : -1;
	REQUIRE(setns(self, CLONE_NEWNET) == 0);
	close(self);
	close(target);
	if (arc != 0) {
		WARN("SKIPPED: cannot attach generic XDP to the veth: " << arc);
		return;
	}

	int fd = socket(AF_PACKET, SOCK_RAW, 0);
	REQUIRE(fd >= 0);
	sockaddr_ll to{};
	to.sll_family = AF_PACKET;
	to.sll_ifindex = (int)if_nametoindex(a.c_str());
	to.sll_halen = 6;
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	bpf_map *counts = k.map("proto_count");
	REQUIRE(counts != nullptr);
	const auto before = proto_counts(counts);
	const auto frames = oracle_frames();
	const int rounds = 5;
	for (int r = 0; r < rounds; r++)
		for (const Frame &f : frames)
			REQUIRE(sendto(fd, f.data.data(), f.size(), 0,
				       (sockaddr *)&to, sizeof(to)) ==
				(ssize_t)f.size());
	close(fd);
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	const auto after = proto_counts(counts);

	Stage st(Keys{{"prog", prog_path("xdp_proto_count")}, {"mode", "native"}});
	REQUIRE(st.rc == 0);
	for (int r = 0; r < rounds; r++)
		for (const Frame &f : frames) {
			rte_mbuf *m = f.to_mbuf(mp);
			REQUIRE(m);
			CHECK(st.one(m) == LRX_NEXT_CONTINUE_V);
			rte_pktmbuf_free(m);
		}
	lrx_xdp_map *ours = st.map("proto_count");
	REQUIRE(ours != nullptr);
	uint64_t total = 0;
	for (uint32_t p = 0; p < 256; p++) {
		INFO("protocol " << p);
		uint64_t mine = *(uint64_t *)lrx_xdp_map_lookup(ours, &p);
		CHECK(after[p] - before[p] == mine);
		total += mine;
	}
	CHECK(total == rounds * frames.size());
	LRX_REQUIRE_POOL_FULL(mp);
}
