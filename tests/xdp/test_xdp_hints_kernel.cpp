// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for the XDP metadata kfuncs: the same object
// (hints_record.bpf.o) runs in listrx on frames from net_synth with its
// descriptor hints on, and in the kernel, device-bound
// (BPF_F_XDP_DEV_BOUND_ONLY) and attached as native XDP to a veth in a
// fresh network namespace, on the same frames sent from the veth's peer.
// A tc egress program on the peer (hints_inject.bpf.o) gives each frame
// the hash and the stripped VLAN tag net_synth gave it, as a NIC's
// descriptor would (a software L4 hash, an out-of-band tag): veth's
// kfuncs (veth_xdp_rx_hash, veth_xdp_rx_vlan_tag) read them from the skb.
// Where the veth exposes a value the kernel's answer equals listrx's; the
// timestamp it does not expose (veth_xdp_rx_timestamp returns the skb's
// hardware stamp, 0 for a frame sent by software): its return code only.
// Needs root, veth and a kernel with device-bound XDP (6.3+); skips with
// the reason otherwise.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <linux/pkt_cls.h>
#include <net/if.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>

#include "netns_oracle.h"
#include "test_eal.h"
#include "xdp_harness.h"

using lrx_xdp_test::Stage;
using lrx_xdp_test::test_prog_path;
using Keys = std::map<std::string, std::string>;

#ifndef BPF_F_XDP_DEV_BOUND_ONLY
#define BPF_F_XDP_DEV_BOUND_ONLY (1U << 6)
#endif

namespace {

constexpr unsigned N_FRAMES = 64;
constexpr int64_t RSS_L4 = 8; // XDP_RSS_L4

// hints_record.bpf.c's record and hints_inject.bpf.c's plan entry
struct Record {
	int64_t hash_rc;
	uint32_t hash, hash_type;
	int64_t timestamp_rc;
	uint64_t timestamp;
	int64_t vlan_rc;
	uint32_t vlan_proto, vlan_tci;
};
struct Inject {
	uint32_t hash, has_hash;
	uint16_t vlan_proto, vlan_tci;
	uint32_t has_vlan;
};

// A frame as net_synth handed it over: its bytes (the tag stripped) and
// what listrx's program read from its descriptor.
struct Synth {
	std::vector<uint8_t> bytes;
	Record listrx;
	Inject plan;
};

// N frames of net_synth's mixed profile (tagged, IPv6 and IPv4 UDP) with
// hash, VLAN strip, timestamp and ptype hints, run through hints_record in
// listrx (JIT).
std::vector<Synth> listrx_side()
{
	lrx_test::eal_init();
	rte_mempool *mp = lrx_test::mbuf_pool("xdphk_pool", 1023);
	const char *name = "net_synth_hk0";
	REQUIRE(rte_vdev_init(name, "profile=mixed,vlan_share=0.3,ipv6_share=0.3,"
			      "hints=hash+vlan+timestamp+ptype,seed=7") == 0);
	uint16_t port;
	REQUIRE(rte_eth_dev_get_port_by_name(name, &port) == 0);
	rte_eth_conf conf{};
	REQUIRE(rte_eth_dev_configure(port, 1, 1, &conf) == 0);
	REQUIRE(rte_eth_rx_queue_setup(port, 0, 512, 0, nullptr, mp) == 0);
	REQUIRE(rte_eth_tx_queue_setup(port, 0, 512, 0, nullptr) == 0);
	REQUIRE(rte_eth_dev_start(port) == 0);
	std::vector<rte_mbuf *> ms;
	for (int spins = 0; ms.size() < N_FRAMES && spins < 100000; spins++) {
		rte_mbuf *b[32];
		uint16_t want = (uint16_t)std::min<size_t>(32, N_FRAMES - ms.size());
		uint16_t got = rte_eth_rx_burst(port, 0, b, want);
		ms.insert(ms.end(), b, b + got);
	}
	REQUIRE(ms.size() == N_FRAMES);

	Stage st(Keys{{"prog", test_prog_path("hints_record")}, {"exec", "jit"}});
	INFO(st.err);
	REQUIRE(st.rc == 0);
	std::vector<Synth> out(N_FRAMES);
	for (unsigned i = 0; i < N_FRAMES; i++) {
		rte_mbuf *m = ms[i];
		Synth &s = out[i];
		s.bytes.assign(rte_pktmbuf_mtod(m, uint8_t *),
			       rte_pktmbuf_mtod(m, uint8_t *) + m->data_len);
		s.plan.has_hash = (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) != 0;
		s.plan.hash = m->hash.rss;
		s.plan.has_vlan = (m->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED) != 0;
		s.plan.vlan_tci = m->vlan_tci;
		s.plan.vlan_proto = htons(0x8100);
		CHECK(st.one(m) == lrx_next_drop(LRX_DROP_XDP));
		rte_pktmbuf_free(m);
	}
	lrx_xdp_map *rec = st.map("hint_record");
	REQUIRE(rec != nullptr);
	for (uint32_t i = 0; i < N_FRAMES; i++)
		memcpy(&out[i].listrx, lrx_xdp_map_lookup(rec, &i), sizeof(Record));
	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	rte_vdev_uninit(name);
	LRX_REQUIRE_POOL_FULL(mp);
	return out;
}

// This thread inside a fresh network namespace holding a veth pair (both
// ends up); back and removed on destruction.
struct VethNs {
	std::string ns, tx, rx;
	int home = -1;
	std::string why;

	VethNs()
	{
		std::string id = std::to_string(getpid() % 100000);
		ns = "lrxhk" + id;
		tx = "lrxhka" + id;
		rx = "lrxhkb" + id;
		if (lrx_test::sh("ip netns add " + ns) != 0) {
			why = "cannot create a network namespace (ip netns add)";
			return;
		}
		std::string in = "ip netns exec " + ns + " ";
		// no frame but the test's: no IPv6 (router and neighbour
		// solicitations at link up), no address (no ARP, no IGMP)
		if (lrx_test::sh(in + "sysctl -w net.ipv6.conf.all.disable_ipv6=1 "
				 "net.ipv6.conf.default.disable_ipv6=1") ||
		    lrx_test::sh(in + "ip link add " + tx + " type veth peer name " + rx) ||
		    lrx_test::sh(in + "ip link set " + tx + " up") ||
		    lrx_test::sh(in + "ip link set " + rx + " up")) {
			why = "cannot create a veth pair in the namespace";
			return;
		}
		home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		int fd = open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
		if (home < 0 || fd < 0 || setns(fd, CLONE_NEWNET) != 0)
			why = "cannot enter the namespace (setns)";
		if (fd >= 0)
			close(fd);
	}
	~VethNs()
	{
		if (home >= 0) {
			setns(home, CLONE_NEWNET);
			close(home);
		}
		lrx_test::sh("ip netns del " + ns);
	}
	bool ok() const { return why.empty(); }
};

struct Obj {
	bpf_object *obj = nullptr;
	int fd = -1;
	std::string why;

	// type: the program's type, ifindex: bind it to that device (0: no)
	Obj(const std::string &path, bpf_prog_type type, int ifindex)
	{
		obj = bpf_object__open_file(path.c_str(), nullptr);
		if (obj == nullptr || libbpf_get_error(obj)) {
			obj = nullptr;
			why = "libbpf cannot open " + path;
			return;
		}
		bpf_program *p = bpf_object__next_program(obj, nullptr);
		bpf_program__set_type(p, type);
		if (ifindex > 0) {
			bpf_program__set_ifindex(p, ifindex);
			bpf_program__set_flags(p, BPF_F_XDP_DEV_BOUND_ONLY);
		}
		int rc = bpf_object__load(obj);
		if (rc != 0) {
			why = "the kernel refused " + path + (ifindex ? " device-bound" : "") +
			      ": " + strerror(-rc);
			return;
		}
		fd = bpf_program__fd(p);
	}
	~Obj()
	{
		if (obj)
			bpf_object__close(obj);
	}
	int map(const char *name)
	{
		return bpf_map__fd(bpf_object__find_map_by_name(obj, name));
	}
};

// The running kernel's version is at least major.minor.
bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;
	return uname(&u) == 0 && std::sscanf(u.release, "%d.%d", &ma, &mi) == 2 &&
	       (ma > major || (ma == major && mi >= minor));
}

} // namespace

TEST_CASE("kernel oracle: on a veth the metadata kfuncs read what net_synth gave "
	  "listrx for the same frames", "[xdp][hints][kernel]")
{
	std::string why = lrx_test::oracle_unavailable();
	if (!why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	const std::vector<Synth> frames = listrx_side();
	unsigned tagged = 0;
	for (const Synth &s : frames) {
		// net_synth hashed, stamped and (for the tagged) stripped each
		REQUIRE(s.listrx.hash_rc == 0);
		REQUIRE(s.listrx.timestamp_rc == 0);
		REQUIRE(s.listrx.vlan_rc == (s.plan.has_vlan ? 0 : -ENODATA));
		tagged += s.plan.has_vlan;
	}
	REQUIRE(tagged > 0);
	REQUIRE(tagged < N_FRAMES);

	VethNs net;
	if (!net.ok()) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	const int rx_if = (int)if_nametoindex(net.rx.c_str());
	const int tx_if = (int)if_nametoindex(net.tx.c_str());
	REQUIRE(rx_if > 0);
	REQUIRE(tx_if > 0);
	Obj xdp(test_prog_path("hints_record"), BPF_PROG_TYPE_XDP, rx_if);
	if (xdp.fd < 0 && !kernel_at_least(6, 3)) {
		WARN("SKIPPED: " << xdp.why << " (device-bound XDP needs Linux 6.3+)");
		return;
	}
	INFO(xdp.why);
	REQUIRE(xdp.fd >= 0);
	Obj tc(test_prog_path("hints_inject"), BPF_PROG_TYPE_SCHED_CLS, 0);
	REQUIRE(tc.fd >= 0);
	for (uint32_t i = 0; i < N_FRAMES; i++)
		REQUIRE(bpf_map_update_elem(tc.map("inject_plan"), &i, &frames[i].plan, 0) == 0);

	REQUIRE(bpf_xdp_attach(rx_if, xdp.fd, XDP_FLAGS_DRV_MODE, nullptr) == 0);
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = tx_if, .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, topts, .prog_fd = tc.fd);
	REQUIRE(bpf_tc_hook_create(&hook) == 0);
	REQUIRE(bpf_tc_attach(&hook, &topts) == 0);

	lrx_test::RawSender sender(net.tx);
	REQUIRE(sender.ok());
	for (const Synth &s : frames)
		REQUIRE(sender.send(s.bytes));
	uint32_t zero = 0;
	uint64_t seen = 0;
	for (int i = 0; i < 200 && seen < N_FRAMES; i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
		REQUIRE(bpf_map_lookup_elem(xdp.map("hint_seq"), &zero, &seen) == 0);
	}
	REQUIRE(seen == N_FRAMES);

	unsigned compared_hash = 0, compared_vlan = 0;
	for (uint32_t i = 0; i < N_FRAMES; i++) {
		Record k;
		REQUIRE(bpf_map_lookup_elem(xdp.map("hint_record"), &i, &k) == 0);
		const Record &l = frames[i].listrx;
		INFO("frame " << i);
		// the hash: the value, and the L4 bit of its type (veth knows
		// only l4_hash: XDP_RSS_TYPE_L4_ANY; listrx the ptype's type)
		CHECK(k.hash_rc == l.hash_rc);
		CHECK(k.hash == l.hash);
		CHECK((k.hash_type & RSS_L4) == (l.hash_type & RSS_L4));
		compared_hash++;
		// the VLAN tag: absent on both, or the same proto and TCI
		CHECK(k.vlan_rc == l.vlan_rc);
		CHECK(k.vlan_proto == l.vlan_proto);
		CHECK(k.vlan_tci == l.vlan_tci);
		compared_vlan += l.vlan_rc == 0;
		// the timestamp: both answer; veth's value is no NIC clock
		CHECK(k.timestamp_rc == 0);
		CHECK(k.timestamp == 0);
	}
	bpf_xdp_detach(rx_if, XDP_FLAGS_DRV_MODE, nullptr);
	std::printf("xdp-hints kernel oracle: %u frames, hash equal on %u, VLAN tag on %u "
		    "tagged and absent on the rest; timestamps not compared (veth reports "
		    "the skb's hardware stamp, 0 for a frame sent by software)\n",
		    N_FRAMES, compared_hash, compared_vlan);
}
