// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for TCP delivery to the application: a listening socket
// in a fresh network namespace (10.0.0.2:5201 on one end of a veth,
// tests/support/netns_oracle.h) accepts a connection from raw frames (the
// SYN, the ACK of its SYN-ACK), then receives tcp_stream.h's reordered
// schedule (out-of-order segments, duplicates, an overlap); the
// application reads the socket. build-meta,l3-demux with tcp_ehash and a
// receive socket sees the same frames under every engine and every way of
// reading: the bytes the application reads and the TcpExt counters
// (TCPOFOQueue, TCPOFOMerge, TCPOFODrop, TCPRcvQDrop, TCPZeroWindowDrop,
// DelayedACKLost) must be the kernel's. Needs root; skips with a printed
// reason otherwise.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "engine_run.h"
#include "netns_oracle.h"
#include "tcp_stream.h"
#include "test_eal.h"

using namespace lrx_test;
using namespace lrx_test::frames;
using namespace lrx_test::tcp_stream;

namespace {

const char *const oracle_counters[] = {
	"TcpExtTCPOFOQueue", "TcpExtTCPOFOMerge", "TcpExtTCPOFODrop",
	"TcpExtTCPRcvQDrop", "TcpExtTCPZeroWindowDrop", "TcpExtDelayedACKLost"};

} // namespace

TEST_CASE("kernel oracle: TCP in-order and out-of-order delivery to the application "
	  "(bytes read, TcpExt counters) under every engine and reader",
	  "[sockets][kernel][tcp_rcv]")
{
	if (std::string why = oracle_unavailable(); !why.empty()) {
		WARN("SKIPPED: " << why);
		return;
	}
	Netns net;
	if (!net.ok) {
		WARN("SKIPPED: " << net.why);
		return;
	}
	settle(net);
	REQUIRE(net.static_peer().empty());
	eal_init();
	rte_mempool *mp = mbuf_pool("tcp_oracle_pool", 1023);

	int lfd = -1;
	std::string why = in_netns(net, [&] {
		lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		sockaddr_in a{};
		a.sin_family = AF_INET;
		a.sin_port = htons(5201);
		inet_pton(AF_INET, "10.0.0.2", &a.sin_addr);
		if (lfd >= 0 && (bind(lfd, (sockaddr *)&a, sizeof(a)) != 0 || listen(lfd, 4) != 0)) {
			close(lfd);
			lfd = -1;
		}
	});
	REQUIRE(why.empty());
	REQUIRE(lfd >= 0);
	ReplyTap tap(net.outside);
	RawSender tx(net.outside);
	REQUIRE(tap.ok());
	REQUIRE(tx.ok());

	// the handshake: the SYN, its SYN-ACK's number, the ACK
	const std::vector<Frame> syn_stream = reordered_stream();
	REQUIRE(tx.send(syn_stream[0].data));
	const uint32_t server_isn = synack_seq(tap.take(300));
	REQUIRE(server_isn != 0);
	std::vector<Frame> frames = reordered_stream(server_isn + 1);
	frames.insert(frames.begin() + 1, segment(isn + 1, 0, TCP_ACK, server_isn + 1));
	REQUIRE(tx.send(frames[1].data));
	int fd = -1;
	for (int i = 0; i < 100 && fd < 0; i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
		fd = accept4(lfd, nullptr, nullptr, SOCK_NONBLOCK);
	}
	REQUIRE(fd >= 0);

	// the data, one frame at a time (a frame sent from another CPU could
	// pass the one before it through the other CPU's backlog)
	auto before = nstat(net.ns);
	for (size_t i = 2; i < frames.size(); i++) {
		REQUIRE(tx.send(frames[i].data));
		std::this_thread::sleep_for(std::chrono::milliseconds(5));
	}
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	std::vector<uint8_t> got(4096);
	ssize_t n = recv(fd, got.data(), got.size(), 0);
	got.resize(n > 0 ? (size_t)n : 0);
	auto after = nstat(net.ns);
	close(fd);
	close(lfd);
	REQUIRE(got.size() == reordered_bytes);
	for (size_t i = 0; i < got.size(); i++)
		REQUIRE(got[i] == stream_byte(isn + 1 + (uint32_t)i));

	for (const char *mode : {"copy", "devmem", "zcrx"}) {
		for_each_engine(1, [&](lrx_engine_kind kind, unsigned k) {
			INFO("tcp_read " << mode);
			EngineRun r = run_engine(
				kind, k, 8,
				{{"build-meta", {{"host_mac", "02:00:00:00:00:02"}}},
				 {"l3-demux",
				  {{"local_ipv4", "10.0.0.2/24"}, {"tcp_ports", "5201"},
				   {"tcp_ehash", "16"}, {"tcp_rcv_socks", "1"},
				   {"tcp_read", mode}, {"tcp_zc_slots", "2"},
				   {"tcp_dontneed_batch", "2"}, {"tcp_rcv_digest", "yes"},
				   {"trust_ip_csum_hint", "no"}}}},
				[&](size_t at) { return frames[at].to_mbuf(mp); },
				std::vector<uint16_t>(frames.size(), 1));
			const auto &c = r.counters[1];
			CHECK(c.at("tcp_app_read_bytes") == got.size());
			CHECK(c.at("tcp_app_digest") == stream_digest(reordered_bytes));
			for (const char *name : oracle_counters) {
				INFO(name << ": kernel " << after[name] - before[name] << ", listrx "
					  << c.at(name));
				CHECK(after[name] - before[name] == c.at(name));
			}
		});
	}
	LRX_REQUIRE_POOL_FULL(mp);
}
