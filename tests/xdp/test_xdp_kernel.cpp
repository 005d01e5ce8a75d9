// SPDX-License-Identifier: BSD-3-Clause
// Kernel parity oracle: each shipped XDP object is loaded into the running
// kernel with libbpf and run on each test frame with BPF_PROG_TEST_RUN
// (bpf_prog_test_run_opts, repeat 1, the kernel's JIT); the kernel's return
// code, output frame and final map contents must equal listrx's, with the
// rte_bpf interpreter and JIT. Needs root and a kernel with BPF; skips with
// a printed reason otherwise. End to end, the objects run as generic XDP on
// a veth in a network namespace and the kernel's counts are compared with
// listrx's pipeline (native and generic placement) on the same frames.
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

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frames.h"
#include "test_eal.h"
#include "xdp_harness.h"

extern "C" {
#include "ebpf/ebpf_map_init.h"
#include "pipeline.h"
#include "sink.h"
}

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

// The first line of a command's output ("" when it fails).
std::string sh_out(const std::string &cmd)
{
	std::string out;
	if (FILE *p = popen((cmd + " 2>/dev/null").c_str(), "r")) {
		char line[256];
		if (fgets(line, sizeof(line), p))
			out = line;
		pclose(p);
	}
	return out;
}

std::vector<uint64_t> array_values(bpf_map *m, uint32_t n)
{
	std::vector<uint64_t> v(n);
	for (uint32_t k = 0; k < n; k++)
		bpf_map__lookup_elem(m, &k, sizeof(k), &v[k], sizeof(v[k]), 0);
	return v;
}

// A veth pair: `a` in this namespace, its peer `b` in a fresh network
// namespace. Generic XDP is attached to `b`; frames written to `a` with
// AF_PACKET arrive on `b` (veth_xmit -> netif_rx -> do_xdp_generic).
struct VethNs {
	std::string ns, a, b, why;
	bool ok = false;

	VethNs()
	{
		const std::string id = std::to_string(getpid() % 100000);
		ns = "lrxxdp" + id;
		a = "lrxa" + id;
		b = "lrxb" + id;
		if (sh("ip netns add " + ns) != 0) {
			why = "cannot create a network namespace (ip netns add)";
			return;
		}
		if (sh("ip link add " + a + " type veth peer name " + b) != 0 ||
		    sh("ip link set " + b + " netns " + ns) != 0) {
			why = "cannot create a veth pair into the namespace";
			return;
		}
		// no IPv6 autoconfiguration chatter (DAD, MLD) during the count
		sh("sysctl -w net.ipv6.conf." + a + ".disable_ipv6=1");
		sh("ip netns exec " + ns + " sysctl -w net.ipv6.conf." + b +
		   ".disable_ipv6=1");
		if (sh("ip link set " + a + " up") != 0 ||
		    sh("ip netns exec " + ns + " ip link set " + b + " up") != 0) {
			why = "cannot bring the veth pair up";
			return;
		}
		ok = true;
	}
	~VethNs()
	{
		sh("ip link del " + a);
		sh("ip netns del " + ns);
	}

	// Runs f() inside the namespace (f's sockets stay in it).
	template <class F> bool in_ns(F f)
	{
		int self = open("/proc/self/ns/net", O_RDONLY);
		int target = open(("/var/run/netns/" + ns).c_str(), O_RDONLY);
		bool done = self >= 0 && target >= 0 &&
			    setns(target, CLONE_NEWNET) == 0;
		if (done) {
			f();
			done = setns(self, CLONE_NEWNET) == 0;
		}
		if (self >= 0)
			close(self);
		if (target >= 0)
			close(target);
		return done;
	}

	// bpf_xdp_attach's result, or -1 when the namespace was not entered
	int attach_generic(int prog_fd)
	{
		int rc = -1;
		in_ns([&] {
			int ifindex = (int)if_nametoindex(b.c_str());
			rc = ifindex > 0 ? bpf_xdp_attach(ifindex, prog_fd,
							  XDP_FLAGS_SKB_MODE,
							  nullptr)
					 : -1;
		});
		return rc;
	}

	// A packet socket on b: the kernel's ptype_all taps run after
	// generic XDP (__netif_receive_skb_core: do_xdp_generic first), so
	// it receives exactly the frames XDP passed.
	int tap_after_xdp()
	{
		int fd = -1;
		in_ns([&] {
			fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK,
				    htons(ETH_P_ALL));
			sockaddr_ll at{};
			at.sll_family = AF_PACKET;
			at.sll_protocol = htons(ETH_P_ALL);
			at.sll_ifindex = (int)if_nametoindex(b.c_str());
			if (fd >= 0 && bind(fd, (sockaddr *)&at, sizeof(at)) != 0) {
				close(fd);
				fd = -1;
			}
		});
		return fd;
	}

	// b's rx_packets (veth counts the frame before XDP sees it)
	uint64_t b_rx_packets()
	{
		return strtoull(sh_out("ip netns exec " + ns +
				       " cat /sys/class/net/" + b +
				       "/statistics/rx_packets").c_str(),
				nullptr, 10);
	}

	void send(const std::vector<Frame> &frames, int rounds)
	{
		int fd = socket(AF_PACKET, SOCK_RAW, 0);
		REQUIRE(fd >= 0);
		sockaddr_ll to{};
		to.sll_family = AF_PACKET;
		to.sll_ifindex = (int)if_nametoindex(a.c_str());
		to.sll_halen = 6;
		for (int r = 0; r < rounds; r++)
			for (const Frame &f : frames)
				REQUIRE(sendto(fd, f.data.data(), f.size(), 0,
					       (sockaddr *)&to, sizeof(to)) ==
					(ssize_t)f.size());
		close(fd);
	}
};

// Frames the tap received (incoming only: not what b itself sent).
uint64_t drain_tap(int fd)
{
	uint64_t n = 0;
	uint8_t buf[2048];
	sockaddr_ll from{};
	socklen_t len = sizeof(from);
	while (recvfrom(fd, buf, sizeof(buf), 0, (sockaddr *)&from, &len) >= 0) {
		n += from.sll_pkttype != PACKET_OUTGOING;
		len = sizeof(from);
	}
	return n;
}

// listrx's side of the end-to-end comparison: the same object on the same
// frames through listrx's pipeline, native ([xdp]) or generic
// ([build-meta, xdp mode=generic]), under one engine; the xdp stage's
// counters and the sink's fates.
struct ListrxVerdicts {
	std::map<std::string, uint64_t> counters;
	uint64_t sink_dropped = 0, sink_passed = 0;
};

ListrxVerdicts listrx_verdicts(const std::string &obj, const std::string &map_init,
			       bool generic, lrx_engine_kind engine,
			       const std::vector<Frame> &frames, int rounds)
{
	lrx_pipeline_conf conf{};
	conf.engine = engine;
	conf.burst = 32;
	conf.stats_level = LRX_STATS_COUNTERS;
	conf.socket_id = (int)rte_socket_id();
	conf.lcore_id = rte_lcore_id();
	unsigned s = 0;
	lrx_test::StageConfs stage_confs;
	if (generic)
		stage_confs.set(conf.stages[s++], lrx_stage_find("build-meta"), {});
	stage_confs.set(conf.stages[s++], lrx_stage_find("xdp"),
			{{"prog", obj}, {"mode", generic ? "generic" : "native"},
			 {"map_init", map_init}});
	conf.n_stages = s;
	lrx_pipeline *p = nullptr;
	char err[512] = "";
	int rc = lrx_pipeline_create(&conf, &p, err, sizeof(err));
	INFO("create: " << err);
	REQUIRE(rc == 0);
	static lrx_sink sink;
	ListrxVerdicts v;
	std::vector<rte_mbuf *> pkts;
	auto flush = [&] {
		sink.n = 0;
		lrx_pipeline_process(p, pkts.data(), (uint16_t)pkts.size(), &sink);
		lrx_pipeline_poll_end(p, pkts.size() == conf.burst, &sink);
		for (uint32_t i = 0; i < sink.n; i++) {
			const auto kind = lrx_next_kind(sink.nexts[i]);
			v.sink_dropped += kind == LRX_NEXT_DROP;
			v.sink_passed += kind == LRX_NEXT_DELIVER ||
					 kind == LRX_NEXT_CONTINUE;
		}
		lrx_sink_discard(&sink);
		pkts.clear();
	};
	for (int r = 0; r < rounds; r++)
		for (const Frame &f : frames) {
			rte_mbuf *m = f.to_mbuf(pool());
			REQUIRE(m);
			pkts.push_back(m);
			if (pkts.size() == conf.burst)
				flush();
		}
	if (!pkts.empty())
		flush();
	lrx_pipeline_stage_counters(
		p, s - 1,
		[](void *arg, const lrx_stage_counter *c, uint64_t value) {
			(*(std::map<std::string, uint64_t> *)arg)[c->name] = value;
		},
		&v.counters);
	lrx_pipeline_destroy(p);
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
	VethNs veth;
	if (!veth.ok) {
		WARN("SKIPPED: " << veth.why);
		return;
	}
	KernelProg k(prog_path("xdp_proto_count"));
	if (k.fd < 0) {
		WARN("SKIPPED: " << k.why);
		return;
	}
	int arc = veth.attach_generic(k.fd);
	if (arc != 0) {
		WARN("SKIPPED: cannot attach generic XDP to the veth: " << arc);
		return;
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	bpf_map *counts = k.map("proto_count");
	REQUIRE(counts != nullptr);
	const auto before = array_values(counts, 256);
	const auto frames = oracle_frames();
	const int rounds = 5;
	veth.send(frames, rounds);
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	const auto after = array_values(counts, 256);

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

// End to end with verdicts that differ: xdp_port_filter (UDP port 53
// blocked) attached as generic XDP to the veth. The kernel's side is
// counted three ways: frames b received (its rx_packets: veth counts
// before XDP), frames a packet tap on b saw (taps run after generic XDP:
// the passed ones) and the program's own filter_stats map. listrx runs the
// same object on the same frames native (first stage) and generic (after
// build-meta), packet and burst engines: its dropped/passed counts must
// equal the kernel's.
TEST_CASE("kernel parity end to end: xdp_port_filter drops and passes the same frames",
	  "[xdp][kernel][netns]")
{
	if (geteuid() != 0) {
		WARN("SKIPPED: the veth/netns variant needs root");
		return;
	}
	rte_mempool *mp = pool();
	VethNs veth;
	if (!veth.ok) {
		WARN("SKIPPED: " << veth.why);
		return;
	}
	const std::string obj = prog_path("xdp_port_filter");
	KernelProg k(obj);
	if (k.fd < 0) {
		WARN("SKIPPED: " << k.why);
		return;
	}
	uint16_t port = 53;
	uint64_t zero = 0;
	REQUIRE(bpf_map__update_elem(k.map("blocked_ports"), &port, sizeof(port),
				     &zero, sizeof(zero), BPF_ANY) == 0);
	int arc = veth.attach_generic(k.fd);
	if (arc != 0) {
		WARN("SKIPPED: cannot attach generic XDP to the veth: " << arc);
		return;
	}
	int tap = veth.tap_after_xdp();
	REQUIRE(tap >= 0);
	std::this_thread::sleep_for(std::chrono::milliseconds(200));
	drain_tap(tap); // anything from before the count
	bpf_map *stats = k.map("filter_stats");
	REQUIRE(stats != nullptr);
	const auto before = array_values(stats, 2);
	const uint64_t rx_before = veth.b_rx_packets();

	const auto frames = oracle_frames();
	const int rounds = 5;
	const uint64_t sent = rounds * frames.size();
	veth.send(frames, rounds);
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	const auto after = array_values(stats, 2);
	const uint64_t k_rx = veth.b_rx_packets() - rx_before;
	const uint64_t k_tapped = drain_tap(tap);
	close(tap);
	const uint64_t k_passed = after[0] - before[0];
	const uint64_t k_dropped = after[1] - before[1];
	uint16_t hits_key = 53;
	uint64_t k_hits = 0;
	REQUIRE(bpf_map__lookup_elem(k.map("blocked_ports"), &hits_key,
				     sizeof(hits_key), &k_hits, sizeof(k_hits),
				     0) == 0);

	INFO("kernel: rx " << k_rx << ", tap (after XDP) " << k_tapped
			   << ", filter_stats passed " << k_passed << " dropped "
			   << k_dropped << ", port 53 hits " << k_hits);
	// the kernel's own counts agree with each other
	REQUIRE(k_rx == sent);
	REQUIRE(k_passed + k_dropped == sent);
	CHECK(k_tapped == k_passed);
	CHECK(k_hits == k_dropped);
	// the program does both: some frames dropped, some passed
	CHECK(k_dropped > 0);
	CHECK(k_passed > 0);

	for (bool generic : {false, true})
		for (auto engine : {LRX_ENGINE_PACKET, LRX_ENGINE_BURST}) {
			INFO("listrx " << (generic ? "generic (after build-meta)" : "native")
				       << ", engine " << lrx_engine_name(engine));
			auto v = listrx_verdicts(obj, "blocked_ports:53=0", generic,
						 engine, frames, rounds);
			CHECK(v.counters["drop"] == k_dropped);
			CHECK(v.counters["pass"] == k_passed);
			CHECK(v.counters["aborted"] == 0);
			CHECK(v.sink_dropped == k_dropped);
			CHECK(v.sink_passed == k_passed);
		}
	LRX_REQUIRE_POOL_FULL(mp);
}

namespace {

// A classic pcap (microseconds, Ethernet) of frames, for net_pcap.
bool write_pcap(const std::string &path, const std::vector<Frame> &frames)
{
	FILE *f = std::fopen(path.c_str(), "wb");
	if (!f)
		return false;
	const uint32_t head[6] = {0xa1b2c3d4u, 0x00040002u, 0, 0, 65535, 1};
	bool ok = std::fwrite(head, sizeof(head), 1, f) == 1;
	uint32_t t = 1;
	for (const Frame &fr : frames) {
		const uint32_t rec[4] = {t++, 0, (uint32_t)fr.size(), (uint32_t)fr.size()};
		ok = ok && std::fwrite(rec, sizeof(rec), 1, f) == 1 &&
		     std::fwrite(fr.data.data(), fr.size(), 1, f) == 1;
	}
	return std::fclose(f) == 0 && ok;
}

std::string hex_of(const uint8_t *b, size_t n)
{
	std::string s;
	char x[4];
	for (size_t i = 0; i < n; i++) {
		std::snprintf(x, sizeof(x), i ? " %02x" : "%02x", b[i]);
		s += x;
	}
	return s;
}

} // namespace

namespace {

// The object at path run by the kernel (BPF_PROG_TEST_RUN on each frame,
// into k's maps) and by the binary (a pcap of the same frames; its JSON
// summary into *summary). Returns "" or why it could not run (a skip).
std::string run_kernel_and_listrx(KernelProg &k, const std::string &path, bool filter,
				  const std::vector<Frame> &frames, nlohmann::json *summary)
{
	if (k.fd < 0)
		return k.why;
	if (filter) {
		uint16_t key = 53;
		uint64_t zero = 0;
		REQUIRE(bpf_map__update_elem(k.map("blocked_ports"), &key, sizeof(key), &zero,
					     sizeof(zero), BPF_ANY) == 0);
	}
	for (const Frame &f : frames) {
		std::vector<uint8_t> out(f.size() + 512);
		LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = f.data.data(),
			    .data_out = out.data(), .data_size_in = (uint32_t)f.size(),
			    .data_size_out = (uint32_t)out.size(), .repeat = 1);
		int rc = bpf_prog_test_run_opts(k.fd, &opts);
		if (rc != 0)
			return std::string("BPF_PROG_TEST_RUN for XDP failed: ") + strerror(-rc);
	}
	const char *bin = std::getenv("LISTRX_BIN");
	REQUIRE(bin != nullptr);
	const std::string dir = std::string(LRX_XDP_TEST_PROGS_DIR);
	const std::string pcap = dir + "/maps-oracle.pcap", js = dir + "/maps-oracle.json";
	REQUIRE(write_pcap(pcap, frames));
	std::remove(js.c_str());
	std::string cmd = std::string(bin) + " --no-huge --no-pci --no-shconf -m 512 --file-prefix lrxmaps" +
			  std::to_string(getpid()) + " --vdev net_pcap0,rx_pcap=" + pcap +
			  " -- --packets " + std::to_string(frames.size()) +
			  " --duration 30 --stats-period 0 --xdp-prog " + path +
			  (filter ? " --set stage.xdp.map_init=blocked_ports:53=0" : "") + " --json " +
			  js + " >/dev/null 2>&1";
	INFO(cmd);
	REQUIRE(std::system(cmd.c_str()) == 0);
	FILE *jf = std::fopen(js.c_str(), "r");
	REQUIRE(jf != nullptr);
	*summary = nlohmann::json::parse(jf);
	std::fclose(jf);
	std::remove(pcap.c_str());
	std::remove(js.c_str());
	REQUIRE((*summary)["rx_packets"] == frames.size());
	REQUIRE(summary->contains("maps"));
	return "";
}

// bpftool -j's nested members as dotted paths, as the report names them;
// a bitfield, which bpftool writes as a hex string ("0x5"), as its number
void flatten(const nlohmann::json &v, const std::string &prefix, nlohmann::json &out)
{
	if (v.is_string() && v.get<std::string>().rfind("0x", 0) == 0) {
		out[prefix] = std::stoull(v.get<std::string>().substr(2), nullptr, 16);
		return;
	}
	if (!v.is_object()) {
		out[prefix] = v;
		return;
	}
	for (const auto &item : v.items())
		flatten(item.value(), prefix.empty() ? item.key() : prefix + "." + item.key(), out);
}

// `bpftool -j map dump id N` of the kernel's map: {key hex: formatted}
std::map<std::string, nlohmann::json> bpftool_formatted(bpf_map *m, std::string *why)
{
	bpf_map_info info{};
	__u32 len = sizeof(info);
	std::map<std::string, nlohmann::json> out;
	if (bpf_obj_get_info_by_fd(bpf_map__fd(m), &info, &len) != 0) {
		*why = "no map id";
		return out;
	}
	std::string cmd = "bpftool -j map dump id " + std::to_string(info.id) + " 2>/dev/null";
	FILE *p = popen(cmd.c_str(), "r");
	std::string text;
	char buf[4096];
	size_t n;
	while (p && (n = std::fread(buf, 1, sizeof(buf), p)) > 0)
		text.append(buf, n);
	if (!p || pclose(p) != 0 || text.empty()) {
		*why = "bpftool -j map dump failed (bpftool not installed?)";
		return out;
	}
	for (const auto &e : nlohmann::json::parse(text)) {
		std::string key;
		for (const auto &b : e["key"])
			key += (key.empty() ? "" : " ") + b.get<std::string>().substr(2);
		out[key] = e["formatted"];
	}
	return out;
}

} // namespace

// The binary's map dump (JSON "maps", as bpftool map dump) after a run
// over the oracle frames equals the kernel's map after BPF_PROG_TEST_RUN
// of the same object on the same frames: every key, every value.
TEST_CASE("kernel parity of the map dump: the JSON summary's maps equal the kernel's",
	  "[xdp][kernel][maps]")
{
	if (geteuid() != 0) {
		WARN("SKIPPED: kernel parity needs root (BPF_PROG_TEST_RUN)");
		return;
	}
	const auto frames = oracle_frames();
	for (const char *prog : {"xdp_proto_count", "xdp_port_filter"}) {
		INFO("program " << prog);
		const bool filter = std::string(prog) == "xdp_port_filter";
		KernelProg k(prog_path(prog));
		nlohmann::json s;
		std::string why = run_kernel_and_listrx(k, prog_path(prog), filter, frames, &s);
		if (!why.empty()) {
			WARN("SKIPPED: " << why);
			return;
		}
		for (const auto &jm : s["maps"]) {
			std::string name = jm["name"];
			INFO("map " << name);
			bpf_map *km = k.map(name.c_str());
			REQUIRE(km != nullptr);
			const uint32_t ks = jm["key_size"], vs = jm["value_size"];
			std::map<std::string, std::string> ours, kernel;
			for (const auto &e : jm["entries"])
				ours[e["key"]] = e["value"];
			std::vector<uint8_t> key(ks), next(ks), val(vs);
			void *prev = nullptr;
			while (bpf_map__get_next_key(km, prev, next.data(), ks) == 0) {
				key = next;
				prev = key.data();
				REQUIRE(bpf_map__lookup_elem(km, key.data(), ks, val.data(), vs, 0) == 0);
				kernel[hex_of(key.data(), ks)] = hex_of(val.data(), vs);
			}
			CHECK(ours == kernel);
			CHECK_FALSE(kernel.empty());
		}
		CHECK(s["maps"].size() == (filter ? 2u : 1u));
	}
}

// The decoded entries (JSON "formatted": the key and value by their BTF
// types) equal `bpftool -j map dump`'s of the kernel's map after the same
// frames: integers, text, arrays, nested members, bitfields.
TEST_CASE("map entries decoded by BTF equal bpftool map dump's of the kernel's map",
	  "[xdp][kernel][maps]")
{
	if (geteuid() != 0) {
		WARN("SKIPPED: the bpftool comparison needs root (BPF_PROG_TEST_RUN)");
		return;
	}
	const auto frames = oracle_frames();
	for (const std::string &path : {prog_path("xdp_proto_count"), prog_path("xdp_port_filter"),
					test_prog_path("map_typed")}) {
		INFO("object " << path);
		KernelProg k(path);
		nlohmann::json s;
		std::string why = run_kernel_and_listrx(
			k, path, path.find("xdp_port_filter") != std::string::npos, frames, &s);
		if (!why.empty()) {
			WARN("SKIPPED: " << why);
			return;
		}
		for (const auto &jm : s["maps"]) {
			std::string name = jm["name"];
			INFO("map " << name);
			std::map<std::string, nlohmann::json> kernel = bpftool_formatted(
				k.map(name.c_str()), &why);
			if (!why.empty()) {
				WARN("SKIPPED: " << why);
				return;
			}
			REQUIRE(kernel.size() == jm["entries"].size());
			for (const auto &e : jm["entries"]) {
				INFO("entry " << e.dump());
				REQUIRE(e.contains("formatted"));
				REQUIRE(kernel.count(e["key"]) == 1);
				nlohmann::json want, got;
				flatten(kernel[e["key"]], "", want);
				flatten(e["formatted"], "", got);
				CHECK(got == want);
			}
		}
	}
}

namespace {

// A map_update/map_delete parameter into the kernel's map (bpftool map
// update/delete: bpf_map_update_elem/bpf_map_delete_elem on its fd):
// 0 or -errno.
int kernel_map_write(int fd, uint32_t key_size, uint32_t value_size,
		     const struct lrx_bpf_map_write &w)
{
	uint8_t key[8] = {}, value[8] = {};
	memcpy(key, &w.key, key_size); // host order, as map_init (x86)
	memcpy(value, &w.value, value_size);
	int rc = w.del ? bpf_map_delete_elem(fd, key) : bpf_map_update_elem(fd, key, value, w.flags);
	return rc < 0 ? -errno : 0;
}

} // namespace

TEST_CASE("map writes: bpf_map_update_elem/delete on the kernel's map give the same results "
	  "for the same sequence", "[xdp][kernel][maps][map_write]")
{
	if (geteuid() != 0) {
		WARN("SKIPPED: loading the object into the kernel needs root");
		return;
	}
	pool();
	const std::string path = prog_path("xdp_port_filter");
	KernelProg k(path);
	if (k.fd < 0) {
		WARN("SKIPPED: " << k.why);
		return;
	}
	lrx_xdp_prog *prog = nullptr;
	char err[1024];
	REQUIRE(lrx_xdp_prog_load(path.c_str(), "xdp", 1600, 0, &prog, err, sizeof(err)) == 0);
	// blocked_ports: hash, u16 -> u64, 64 entries; filter_stats: array[2]
	std::vector<std::pair<std::string, bool>> seq = {
		{"blocked_ports:53=1", false}, {"blocked_ports:53=2,noexist", false},
		{"blocked_ports:53=3,exist", false}, {"blocked_ports:54=1,exist", false},
		{"blocked_ports:54", true}, {"blocked_ports:53", true}, {"blocked_ports:53", true},
		{"blocked_ports:53=4,exist", false}, {"filter_stats:0=7", false},
		{"filter_stats:1=1,noexist", false}, {"filter_stats:2=1", false},
		{"filter_stats:1=9,exist", false}, {"filter_stats:0", true}};
	for (unsigned p = 100; p < 164; p++) // fill it
		seq.push_back({"blocked_ports:" + std::to_string(p) + "=" + std::to_string(p) + ",noexist",
			       false});
	seq.push_back({"blocked_ports:164=1", false});         // full
	seq.push_back({"blocked_ports:100=5", false});         // an existing key: not full
	seq.push_back({"blocked_ports:101=6,exist", false});
	seq.push_back({"blocked_ports:102", true});
	seq.push_back({"blocked_ports:164=1,noexist", false}); // room again
	seq.push_back({"blocked_ports:165=1", false});
	unsigned errors = 0;
	for (const auto &step : seq) {
		INFO((step.second ? "delete " : "update ") << step.first);
		struct lrx_bpf_map_write w;
		REQUIRE(lrx_bpf_map_write_parse(step.first.c_str(), step.second, &w) == 0);
		lrx_xdp_map *ours = lrx_xdp_prog_map(prog, w.map);
		REQUIRE(ours != nullptr);
		int theirs = kernel_map_write(bpf_map__fd(k.map(w.map)), ours->key_size,
					      ours->value_size, w);
		CHECK(lrx_bpf_map_write(ours, &w, err, sizeof(err)) == theirs);
		errors += theirs != 0;
	}
	CHECK(errors == 10); // EEXIST, 4 ENOENT, EEXIST, E2BIG, EINVAL, 2 E2BIG
	// and the maps hold the same afterwards
	for (const char *name : {"blocked_ports", "filter_stats"}) {
		lrx_xdp_map *ours = lrx_xdp_prog_map(prog, name);
		int fd = bpf_map__fd(k.map(name));
		for (uint32_t key = 0; key < 200; key++) {
			INFO(name << " key " << key);
			uint64_t kv = 0;
			uint8_t kb[8] = {};
			memcpy(kb, &key, ours->key_size);
			int rc = bpf_map_lookup_elem(fd, kb, &kv);
			const void *v = lrx_xdp_map_lookup(ours, kb);
			REQUIRE((rc == 0) == (v != nullptr));
			if (v)
				CHECK(memcmp(v, &kv, ours->value_size) == 0);
		}
	}
	lrx_xdp_prog_free(prog);
}
