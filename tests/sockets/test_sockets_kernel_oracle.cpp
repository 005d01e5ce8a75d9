// SPDX-License-Identifier: BSD-3-Clause
// Kernel oracle for UDP socket delivery: an IPv4 and an IPv6 UDP socket
// with small SO_RCVBUFs in a fresh network namespace (a host at 10.0.0.2
// on one end of a veth, tests/support/netns_oracle.h) are not read while
// a burst of datagrams arrives; build-meta,l3-demux with the same sockets
// (udp_sockets, udp_reader=none) sees the same frames. The kernel's
// Udp{,6}RcvbufErrors, Udp{,6}InErrors, UdpNoPorts and, once both are
// read, Udp{,6}InDatagrams must equal listrx's, and the sockets must hold
// the same number of datagrams. The datagrams' truesize is the kernel's,
// measured first on one datagram (SO_MEMINFO's rmem_alloc): listrx models
// the accounting, not the kernel's skb sizes. Needs root; skips with a
// printed reason otherwise.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "frames.h"
#include "netns_oracle.h"
#include "stage_harness.h"
#include "test_eal.h"

extern "C" {
#include "build_meta/build_meta.h"
#include "l3_demux/l3_demux.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;

namespace {

// sk_rmem_alloc of a socket (SO_MEMINFO), or -1
long rmem_alloc(int fd)
{
	uint32_t mem[SK_MEMINFO_VARS] = {};
	socklen_t len = sizeof(mem);
	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) != 0)
		return -1;
	return mem[SK_MEMINFO_RMEM_ALLOC];
}

// datagrams read until the queue is empty (the socket is non-blocking)
unsigned drain(int fd)
{
	char buf[2048];
	unsigned n = 0;
	while (recv(fd, buf, sizeof(buf), 0) >= 0)
		n++;
	return n;
}

} // namespace

TEST_CASE("kernel oracle: a full UDP receive buffer drops as the kernel's "
	  "(UdpRcvbufErrors)", "[sockets][kernel]")
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
	eal_init();
	rte_mempool *mp = mbuf_pool("sock_oracle_pool", 1023);

	// setsockopt's values: sk_rcvbuf 8192 (IPv4), 2 * 3000 (IPv6)
	const int rcvbuf4 = 4096, rcvbuf6 = 3000;
	int fd4 = -1, fd6 = -1;
	std::string why = in_netns(net, [&] {
		fd4 = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		sockaddr_in a{};
		a.sin_family = AF_INET;
		a.sin_port = htons(9000);
		inet_pton(AF_INET, "10.0.0.2", &a.sin_addr);
		if (fd4 >= 0 &&
		    (setsockopt(fd4, SOL_SOCKET, SO_RCVBUF, &rcvbuf4, sizeof(rcvbuf4)) != 0 ||
		     bind(fd4, (sockaddr *)&a, sizeof(a)) != 0)) {
			close(fd4);
			fd4 = -1;
		}
		fd6 = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK, 0);
		sockaddr_in6 a6{};
		a6.sin6_family = AF_INET6;
		a6.sin6_port = htons(9000);
		const int on = 1;
		if (fd6 >= 0 &&
		    (setsockopt(fd6, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on)) != 0 ||
		     setsockopt(fd6, SOL_SOCKET, SO_RCVBUF, &rcvbuf6, sizeof(rcvbuf6)) != 0 ||
		     bind(fd6, (sockaddr *)&a6, sizeof(a6)) != 0)) {
			close(fd6);
			fd6 = -1;
		}
	});
	REQUIRE(why.empty());
	REQUIRE(fd4 >= 0);
	REQUIRE(fd6 >= 0);

	const Frame to_sock = udp4(1000, 9000), no_sock = udp4(1000, 9001),
		    to_sock6 = udp6(1000, 9000);
	RawSender tx(net.outside);
	REQUIRE(tx.ok());
	// one datagram each: the truesize the kernel charges for it (one
	// udp_truesize for both: the same allocation for both frames)
	long truesize = -1, truesize6 = -1;
	REQUIRE(tx.send(to_sock.data));
	REQUIRE(tx.send(to_sock6.data));
	for (int i = 0; i < 50 && (truesize <= 0 || truesize6 <= 0); i++) {
		std::this_thread::sleep_for(std::chrono::milliseconds(20));
		truesize = rmem_alloc(fd4);
		truesize6 = rmem_alloc(fd6);
	}
	REQUIRE(truesize > 0);
	REQUIRE(truesize6 == truesize);
	REQUIRE(drain(fd4) == 1);
	REQUIRE(drain(fd6) == 1);

	// the burst, the sockets not read
	std::vector<const Frame *> frames;
	for (int i = 0; i < 40; i++)
		frames.push_back(i % 8 == 7 ? &no_sock : i % 3 == 2 ? &to_sock6 : &to_sock);
	auto before = nstat(net.ns);
	for (const Frame *f : frames)
		REQUIRE(tx.send(f->data));
	std::this_thread::sleep_for(std::chrono::milliseconds(300));
	auto after = nstat(net.ns);
	const unsigned kernel_queued = drain(fd4) + drain(fd6);
	std::this_thread::sleep_for(std::chrono::milliseconds(100));
	auto read = nstat(net.ns);
	close(fd4);
	close(fd6);

	StageInstance bm(BUILD_META_STAGE_NAME, {{"host_mac", "02:00:00:00:00:02"}});
	StageInstance l3(L3_DEMUX_STAGE_NAME,
			 {{"local_ipv4", "10.0.0.2/24"},
			  {"local_ipv6", "2001:db8::2/64"},
			  {"udp_sockets", "10.0.0.2:9000:" + std::to_string(rcvbuf4) +
						  ",[::]:9000:" + std::to_string(rcvbuf6)},
			  {"udp_truesize", std::to_string(truesize)},
			  {"udp_reader", "none"},
			  {"trust_ip_csum_hint", "no"}});
	REQUIRE(bm.ok());
	INFO(l3.error());
	REQUIRE(l3.ok());
	unsigned queued = 0;
	for (const Frame *f : frames) {
		rte_mbuf *m = f->to_mbuf(mp);
		lrx_next_t next;
		run_packet({&bm, &l3}, &m, 1, &next);
		if (next == LRX_NEXT_CONSUMED_V)
			queued++; // the socket holds it
		else
			rte_pktmbuf_free(m);
	}
	INFO("truesize " << truesize << ", kernel queued " << kernel_queued
			 << ", listrx " << queued);
	CHECK(queued == kernel_queued);
	CHECK(l3.desc()->held(l3.ctx()) == queued);
	for (const char *name : {"UdpRcvbufErrors", "UdpInErrors", "UdpNoPorts",
				 "Udp6RcvbufErrors", "Udp6InErrors"}) {
		uint64_t kernel = after[name] - before[name];
		INFO(name << ": kernel " << kernel << ", listrx " << l3.counter(name));
		CHECK(kernel == l3.counter(name));
	}
	CHECK(l3.counter("UdpRcvbufErrors") > 0);
	CHECK(l3.counter("Udp6RcvbufErrors") > 0);
	// the application reads at last: UdpInDatagrams counts what it read
	l3.desc()->end_run(l3.ctx());
	rte_mbuf *out[64];
	uint16_t n = l3.desc()->consume(l3.ctx(), out, 64);
	CHECK(n == queued);
	for (uint16_t i = 0; i < n; i++)
		rte_pktmbuf_free(out[i]);
	for (const char *name : {"UdpInDatagrams", "Udp6InDatagrams"}) {
		INFO(name << ": kernel " << read[name] - after[name] << ", listrx "
			  << l3.counter(name));
		CHECK(read[name] - after[name] == l3.counter(name));
	}
	CHECK(l3.desc()->held(l3.ctx()) == 0);
	LRX_REQUIRE_POOL_FULL(mp);
}
