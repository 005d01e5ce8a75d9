// SPDX-License-Identifier: BSD-3-Clause
// The port layer on DPDK's vdevs and on kernel netdevs: pcap in -> pcap out
// byte-identical, forwarding between ports, and frames sent into a veth in a
// network namespace counted exactly through net_af_packet and net_af_xdp.
#include <catch2/catch.hpp>

#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

#include "pcap_file.h"
#include "run_binary.h"

using lrx_test::listrx_bin;
using lrx_test::run_program;
using nlohmann::json;

namespace {

json load_json(const std::string &path)
{
	std::string text = lrx_test::read_file(path);
	INFO("summary file " << path);
	REQUIRE_FALSE(text.empty());
	return json::parse(text);
}

std::vector<std::string> eal_base(const std::string &prefix)
{
	std::vector<std::string> v = {listrx_bin()};
	for (const std::string &a : lrx_test::lcores_args(2))
		v.push_back(a);
	for (const char *a : {"--no-huge", "--no-pci", "--no-shconf", "-m", "512", "--file-prefix"})
		v.push_back(a);
	v.push_back(lrx_test::file_prefix(prefix));
	return v;
}

int sh(const std::string &command)
{
	auto r = run_program({"/bin/sh", "-c", command});
	if (r.status != 0)
		WARN("command failed (" << r.status << "): " << command << "\n" << r.err);
	return r.status;
}

} // namespace

TEST_CASE("net_pcap: pcap in -> empty pipeline forwarding to itself -> pcap out, byte-identical",
	  "[ports]")
{
	const unsigned n = 1000;
	auto frames = lrx_test::sample_frames(n, 7);
	std::string in = lrx_test::scratch_path("in.pcap"), out = lrx_test::scratch_path("out.pcap");
	std::remove(out.c_str());
	REQUIRE(lrx_test::pcap_write(in, frames));
	std::string conf = lrx_test::scratch_path("pcap.ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fprintf(f, "[port.0]\ndevice = net_pcap0\nforward = 0\n");
	std::fclose(f);
	std::string js = lrx_test::scratch_path("pcap.json");
	auto argv = eal_base("pcap");
	argv.insert(argv.end(), {"--vdev", "net_pcap0,rx_pcap=" + in + ",tx_pcap=" + out, "--",
				 "--config", conf, "--packets", std::to_string(n), "--json", js});
	auto r = run_program(argv);
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == n);
	CHECK(s["tx_packets"] == n);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	std::vector<lrx_test::Frame> got;
	REQUIRE(lrx_test::pcap_read(out, got));
	REQUIRE(got.size() == frames.size());
	for (size_t i = 0; i < n; i++) {
		INFO("frame " << i);
		REQUIRE(got[i] == frames[i]);
	}
}

TEST_CASE("replies leave by the ingress port: ICMP port unreachables in "
	  "net_pcap's tx_pcap; a tag of no VLAN device in the port table",
	  "[ports][reply]")
{
	// UDP to a port with no socket: each gets an ICMP port unreachable
	// (rate limit off); two copies of the first with an 802.1Q tag of no
	// VLAN device are PACKET_OTHERHOST: the port's rx_otherhost_dropped
	const unsigned n = 20;
	auto frames = lrx_test::sample_frames(n, 3);
	for (int i = 0; i < 2; i++) {
		lrx_test::Frame t = frames[0];
		const uint8_t tag[4] = {0x81, 0x00, 0x00, 0x05};
		t.insert(t.begin() + 12, tag, tag + 4);
		frames.push_back(t);
	}
	std::string in = lrx_test::scratch_path("reply-in.pcap"),
		    out = lrx_test::scratch_path("reply-out.pcap");
	std::remove(out.c_str());
	REQUIRE(lrx_test::pcap_write(in, frames));
	std::string conf = lrx_test::scratch_path("reply.ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fprintf(f, "[port.0]\ndevice = net_pcap0\n");
	std::fclose(f);
	std::string js = lrx_test::scratch_path("reply.json");
	auto argv = eal_base("reply");
	argv.insert(argv.end(), {"--vdev", "net_pcap0,rx_pcap=" + in + ",tx_pcap=" + out, "--",
				 "--config", conf, "--pipeline", "build-meta,l3-demux",
				 "--set", "stage.l3-demux.udp_ports=none",
				 "--set", "stage.l3-demux.icmp_ratelimit=0",
				 "--packets", std::to_string(frames.size()), "--json", js});
	auto r = run_program(argv);
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	CHECK(r.out.find("rx_otherhost_dropped 2") != std::string::npos);
	json s = load_json(js);
	CHECK(s["tx_packets"] == n);
	CHECK(s["ports"][0]["rx_otherhost_dropped"] == 2);
	CHECK(s["ports"][0]["rx_dropped"] == 0);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	std::vector<lrx_test::Frame> got;
	REQUIRE(lrx_test::pcap_read(out, got));
	REQUIRE(got.size() == n);
	for (size_t i = 0; i < n; i++) {
		INFO("reply " << i);
		const lrx_test::Frame &q = frames[i], &a = got[i];
		REQUIRE(a.size() >= 42);
		CHECK(std::equal(a.begin(), a.begin() + 6, q.begin() + 6)); // to the sender
		CHECK(a[23] == 1);                                         // ICMP
		CHECK(a[34] == 3);                                         // unreachable
		CHECK(a[35] == 3);                                         // port
		// the datagram quoted, up to 576 bytes in all
		const size_t quoted = std::min<size_t>(q.size() - 14, 548);
		REQUIRE(a.size() >= 42 + quoted);
		CHECK(std::equal(a.begin() + 42, a.begin() + 42 + (long)quoted, q.begin() + 14));
	}
}

TEST_CASE("forwarding: port 0 forwards to port 1 (net_null pair)", "[ports]")
{
	// net_null as the source, forwarded to a second null port: tx counted
	std::string conf = lrx_test::scratch_path("fwd.ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fprintf(f, "[port.0]\ndevice = net_null0\nforward = 1\n[port.1]\ndevice = net_null1\n"
			"[lcore.1]\npoll = 0:0\n");
	std::fclose(f);
	std::string js = lrx_test::scratch_path("fwd.json");
	auto argv = eal_base("fwd");
	argv.insert(argv.end(), {"--vdev", "net_null0,copy=0", "--vdev", "net_null1,copy=0", "--",
				 "--config", conf, "--packets", "100000", "--json", js});
	auto r = run_program(argv);
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 100000);
	CHECK(s["tx_packets"] == 100000);
	CHECK(s["delivered"] == 0);
	CHECK(s["ports"][1]["opackets"] == 100000);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
}

TEST_CASE("net_memif between two listrx processes, --no-huge --no-shconf", "[ports][memif]")
{
	// the server forwards net_synth's frames into memif; the client
	// receives them. rte_pmd_memif_probe cannot register its
	// multi-process action without shared config ("Operation not
	// supported"), which only a secondary process would need.
	std::string sock = lrx_test::scratch_path("memif.sock");
	std::string conf = lrx_test::scratch_path("memif-server.ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fprintf(f, "[port.0]\ndevice = net_synth0\nforward = 1\n[port.1]\ndevice = net_memif0\n"
			"[lcore.1]\npoll = 0:0\n");
	std::fclose(f);
	auto server = eal_base("memifs");
	server.insert(server.end(),
		      {"--vdev", "net_synth0,profile=udp64,rate=500000", "--vdev",
		       "net_memif0,role=server,socket-abstract=no,socket=" + sock, "--", "--config",
		       conf, "--duration", "60", "--stats-period", "0"});
	std::string server_out = lrx_test::scratch_path("memif-server.out");
	int pid = lrx_test::spawn_program(server, server_out);
	REQUIRE(pid > 0);
	REQUIRE(lrx_test::wait_for_text(server_out, "telemetry: ", 60));
	std::string js = lrx_test::scratch_path("memif-client.json");
	auto client = eal_base("memifc");
	client.insert(client.end(), {"--vdev", "net_memif0,role=client,socket-abstract=no,socket=" + sock,
				     "--", "--packets", "20000", "--pipeline", "build-meta,l3-demux",
				     "--json", js, "--stats-period", "0"});
	lrx_test::RunOptions opt;
	opt.timeout_s = 60;
	auto r = run_program(client, opt);
	kill(pid, SIGINT);
	CHECK(lrx_test::wait_program(pid, 30) == 0);
	INFO(r.out << r.err << lrx_test::read_file(server_out));
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 20000);
	CHECK(s["delivered"] == 20000); // udp64 to a local address: every frame delivered
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	unlink(sock.c_str());
}

TEST_CASE("an offload the device lacks is reported once and not used; required is an error",
	  "[ports]")
{
	std::string conf = lrx_test::scratch_path("offl.ini");
	FILE *f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fprintf(f, "[port.0]\ndevice = net_null0\noffloads = vlan-strip\n");
	std::fclose(f);
	auto argv = eal_base("offl");
	argv.insert(argv.end(), {"--vdev", "net_null0", "--", "--config", conf, "--packets", "1000"});
	auto r = run_program(argv);
	INFO(r.out << r.err);
	CHECK(r.status == 0);
	CHECK(r.err.find("offload vlan-strip not supported by the device; continuing without it") !=
	      std::string::npos);

	f = std::fopen(conf.c_str(), "w");
	REQUIRE(f);
	std::fprintf(f, "[port.0]\ndevice = net_null0\noffloads_required = timestamp\n");
	std::fclose(f);
	argv = eal_base("offl2");
	argv.insert(argv.end(), {"--vdev", "net_null0", "--", "--config", conf, "--packets", "1000"});
	r = run_program(argv);
	CHECK(r.status == 2);
	CHECK(r.err.find("[port.0] offloads_required: timestamp not supported by net_null0 (driver net_null)") !=
	      std::string::npos);
}

// Frames sent into one end of a veth pair in a fresh network namespace
// arrive through a kernel-netdev PMD on the other end; listrx counts
// exactly those frames.
static void veth_counts_exactly(const std::string &pmd)
{
	if (geteuid() != 0) {
		WARN("SKIPPED: " << pmd << " veth test needs root (network namespaces)");
		return;
	}
	std::string id = std::to_string(getpid() % 100000);
	std::string ns = "lrxns" + id, outer = "lrxo" + id, inner = "lrxi" + id;
	if (sh("ip netns add " + ns) != 0) {
		WARN("SKIPPED: " << pmd << " veth test: cannot create a network namespace");
		return;
	}
	struct Cleanup {
		std::string ns, outer;
		~Cleanup()
		{
			run_program({"/bin/sh", "-c",
				     "ip link del " + outer + " 2>/dev/null; ip netns del " + ns});
		}
	} cleanup{ns, outer};
	REQUIRE(sh("ip link add " + outer + " type veth peer name " + inner + " netns " + ns) == 0);
	// no IPv6: router and neighbour solicitations would add frames
	sh("sysctl -qw net.ipv6.conf." + outer + ".disable_ipv6=1");
	sh("ip netns exec " + ns + " sysctl -qw net.ipv6.conf." + inner + ".disable_ipv6=1");
	REQUIRE(sh("ip link set " + outer + " up") == 0);
	REQUIRE(sh("ip netns exec " + ns + " ip link set " + inner + " up") == 0);

	const unsigned n = 500;
	std::string script = lrx_test::scratch_path(pmd + "-send.py");
	FILE *f = std::fopen(script.c_str(), "w");
	REQUIRE(f);
	// raw frames (local experimental ethertype 0x88b5) from inside the namespace
	std::fprintf(f,
		     "import socket, struct\n"
		     "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
		     "s.bind(('%s', 0))\n"
		     "for i in range(%u):\n"
		     "    s.send(bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5]) + struct.pack('!I', i) + bytes(60))\n",
		     inner.c_str(), n);
	std::fclose(f);

	std::string vdev = pmd == "af_packet"
				   ? "net_af_packet0,iface=" + outer
				   : "net_af_xdp0,iface=" + outer + ",start_queue=0,queue_count=1";
	std::string js = lrx_test::scratch_path(pmd + ".json");
	auto argv = eal_base(pmd);
	argv.insert(argv.end(), {"--vdev", vdev, "--", "--json", js, "--stats-period", "0",
				 "--duration", "60"});
	std::string log = lrx_test::scratch_path(pmd + ".log");
	int pid = lrx_test::spawn_program(argv, log);
	// the start line is printed once the ports are started
	bool started = lrx_test::wait_for_text(log, "polling lcore(s)", 30);
	int sent = started ? sh("ip netns exec " + ns + " python3 " + script) : -1;
	usleep(500000); // let the last frames arrive
	kill(pid, SIGINT);
	int status = lrx_test::wait_program(pid, 30);
	std::string output = lrx_test::read_file(log);
	INFO(output);
	if (!started && pmd == "af_xdp") {
		WARN("SKIPPED: net_af_xdp could not start on a veth here: " << output);
		return;
	}
	REQUIRE(started);
	REQUIRE(sent == 0);
	REQUIRE(status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == n);
	CHECK(s["mbufs_in_use_at_exit"] == 0);
	// net_af_xdp keeps its fill ring (one per queue) after close, in a
	// pool of its own; other drivers keep nothing
	if (pmd == "af_xdp")
		CHECK(s["driver_held_mbufs_at_exit"].get<unsigned>() <= 4096);
	else
		CHECK(s["driver_held_mbufs_at_exit"] == 0);
}

TEST_CASE("kernel-fed: veth frames counted exactly through net_af_packet", "[ports][root]")
{
	veth_counts_exactly("af_packet");
}

TEST_CASE("kernel-fed: veth frames counted exactly through net_af_xdp", "[ports][root]")
{
	veth_counts_exactly("af_xdp");
}

TEST_CASE("queues: polling lcores beyond the device's TX queues share them; too many RX queues "
	  "is one message", "[ports]")
{
	std::string js = lrx_test::scratch_path("txshare.json");
	auto command = [&](const std::string &txq, const std::string &rx_queues,
			   const std::string &pipeline) {
		std::vector<std::string> argv = {listrx_bin()};
		for (const std::string &a : lrx_test::lcores_args(5))
			argv.push_back(a);
		argv.insert(argv.end(),
			    {"--no-huge", "--no-pci", "--no-shconf", "-m", "512", "--file-prefix",
			     lrx_test::file_prefix("txshare"), "--vdev",
			     "net_synth0,profile=udp-flows,flows=256,rxq=4,txq=" + txq, "--", "--set",
			     "port.0.device=net_synth0", "--set", "port.0.rx_queues=" + rx_queues,
			     "--pipeline", pipeline, "--packets", "60000", "--stats-period", "0",
			     "--json", js});
		return argv;
	};
	// four polling lcores, four RX queues, a device with two TX queues,
	// a pipeline that transmits every third packet: the run starts, lcores
	// 2 and 3 send on queues 0 and 1 under their locks, every packet is
	// accounted for and the pool is full at exit
	auto r = run_program(command("2", "4", "tx-every"));
	INFO(r.out << r.err);
	REQUIRE(r.status == 0);
	json s = load_json(js);
	CHECK(s["rx_packets"] == 60000);
	REQUIRE(s["lcores"].size() == 4);
	CHECK(s["tx_packets"].get<uint64_t>() >= 60000 / 3 - 4);
	CHECK(s["tx_failed"] == 0);
	CHECK(s["delivered"].get<uint64_t>() + s["tx_packets"].get<uint64_t>() == 60000);
	CHECK(s["ports"][0]["opackets"] == s["tx_packets"]);
	CHECK(s["mbufs_in_use_at_exit"] == 0);

	// a receive-only run on a device with one TX queue needs no more
	r = run_program(command("1", "4", "none"));
	INFO(r.out << r.err);
	CHECK(r.status == 0);

	// more RX queues than the device has: one message naming the key, the
	// limit and how net_synth raises it
	r = run_program(command("1", "12", "none"));
	CHECK(r.status == 2);
	CHECK(r.err.find("listrx: [port.0] rx_queues = 12: net_synth0 (driver net_synth) has at most "
			 "4 RX queues; net_synth advertises more with its devarg rxq=N (up to 64)\n") !=
	      std::string::npos);
}
