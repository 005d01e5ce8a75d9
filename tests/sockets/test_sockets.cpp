// SPDX-License-Identifier: BSD-3-Clause
// UDP sockets (stages/sockets): the socket list's errors,
// __udp4_lib_lookup's choice (a bound address beats the wildcard, the
// family and the port must match), setsockopt(SO_RCVBUF)'s doubling and
// bounds, __udp_enqueue_schedule_skb's accounting (truesize against
// sk_rcvbuf, the first packet of an empty queue always taken), the reader
// modes, release order and the queues given back at fini.
#include <catch2/catch.hpp>

#include <arpa/inet.h>

#include <string>
#include <tuple>
#include <vector>

#include "frames.h"
#include "test_eal.h"

extern "C" {
#include "sockets/udp_socket.h"
}

namespace {

rte_mempool *pool()
{
	lrx_test::eal_init();
	return lrx_test::mbuf_pool("udpsock_pool", 1023);
}

struct Socks {
	lrx_udp_socks t{};
	char err[256] = "";
	int rc;
	Socks(const char *list, uint32_t rcvbuf = 0, uint32_t truesize = 0,
	      lrx_udp_reader reader = LRX_UDP_READER_POLL, uint32_t batch = 0)
	{
		t.truesize = truesize;
		t.reader = reader;
		t.batch = batch;
		// parsed when the config is read (the value layer's parser),
		// then the sockets made
		static lrx_udp_sock_list parsed;
		rc = lrx_udp_socks_parse(list, &parsed);
		if (rc != 0)
			snprintf(err, sizeof(err), "%s", lrx_udp_socks_valid);
		else
			rc = lrx_udp_socks_init(&t, &parsed, rcvbuf, (int)rte_socket_id(),
						err, sizeof(err));
	}
	~Socks() { lrx_udp_socks_fini(&t); }
	lrx_udp_sock *v4(const char *addr, uint16_t port)
	{
		uint8_t a[16] = {};
		inet_pton(AF_INET, addr, a);
		return lrx_udp_lookup(&t, false, a, port);
	}
	lrx_udp_sock *v6(const char *addr, uint16_t port)
	{
		uint8_t a[16] = {};
		inet_pton(AF_INET6, addr, a);
		return lrx_udp_lookup(&t, true, a, port);
	}
};

} // namespace

TEST_CASE("udp sockets: the list's errors say what is valid", "[udp_socket]")
{
	pool();
	for (const char *bad : {"10.0.0.1", "10.0.0.1:0", "10.0.0.1:70000", "x:9",
				"[2001:db8::1:9", "10.0.0.1:9,", ",10.0.0.1:9",
				"*:9,*:9", "[::1]:abc", "10.0.0.1:9:0", "10.0.0.1:9:",
				"10.0.0.1:9:x", "[::1]:9:2147483648", "*:9:1:2"}) {
		INFO(bad);
		Socks s(bad);
		CHECK(s.rc == -EINVAL);
		const std::string err = s.err;
		const bool says = err.find("ADDR:PORT") != std::string::npos ||
				  err.find("EADDRINUSE") != std::string::npos;
		CHECK(says);
	}
	Socks ok("10.0.0.2:9,*:9,[2001:db8::2]:53,[::]:53");
	CHECK(ok.rc == 0);
	CHECK(ok.t.n == 4);
	// an item's own :RCVBUF beats the list's default (setsockopt's value,
	// doubled)
	Socks own("10.0.0.2:9:2048,*:9,[2001:db8::2]:53:1000000", 4096);
	REQUIRE(own.rc == 0);
	CHECK(own.t.socks[0].rcvbuf == 4096);
	CHECK(own.t.socks[0].port == 9);
	CHECK(own.t.socks[1].rcvbuf == 8192);
	CHECK(own.t.socks[2].rcvbuf == 2 * 212992);
	CHECK(own.t.socks[2].port == 53);
}

TEST_CASE("udp sockets: __udp4_lib_lookup prefers the bound address to the "
	  "wildcard, by family and port", "[udp_socket]")
{
	pool();
	Socks s("*:9,10.0.0.2:9,10.0.0.3:53,[::]:9,[2001:db8::2]:9,*:73");
	REQUIRE(s.rc == 0);
	CHECK(s.v4("10.0.0.2", 9) == &s.t.socks[1]);
	CHECK(s.v4("10.0.0.7", 9) == &s.t.socks[0]);
	CHECK(s.v4("10.0.0.3", 53) == &s.t.socks[2]);
	CHECK(s.v4("10.0.0.2", 53) == nullptr);
	CHECK(s.v4("10.0.0.2", 10) == nullptr);
	CHECK(s.v6("2001:db8::2", 9) == &s.t.socks[4]);
	CHECK(s.v6("2001:db8::5", 9) == &s.t.socks[3]);
	CHECK(s.v6("2001:db8::5", 53) == nullptr);
	// 73 and 9 share a bucket (64 buckets): both found
	CHECK(s.v4("10.0.0.9", 73) == &s.t.socks[5]);
}

TEST_CASE("udp sockets: SO_RCVBUF is doubled and bounded as sock_setsockopt",
	  "[udp_socket]")
{
	CHECK(lrx_udp_rcvbuf(0) == 212992);
	CHECK(lrx_udp_rcvbuf(2048) == 4096);
	CHECK(lrx_udp_rcvbuf(1) == 2048 + 232);
	CHECK(lrx_udp_rcvbuf(1u << 30) == 2 * 212992);
}

TEST_CASE("udp sockets: __udp_enqueue_schedule_skb's accounting, and the "
	  "reader", "[udp_socket]")
{
	rte_mempool *mp = pool();
	auto mbufs = [&](size_t n) {
		std::vector<rte_mbuf *> v;
		for (size_t i = 0; i < n; i++)
			v.push_back(lrx_test::frames::udp4(1, (uint16_t)i).to_mbuf(mp));
		return v;
	};
	SECTION("rcvbuf 2048 (4096) and truesize 832: 4 of 10 queued, as the "
		"kernel on a veth") {
		Socks s("*:9", 2048, 832, LRX_UDP_READER_NONE);
		REQUIRE(s.rc == 0);
		lrx_udp_sock *sk = s.v4("10.0.0.2", 9);
		unsigned queued = 0;
		for (rte_mbuf *m : mbufs(10)) {
			if (lrx_udp_enqueue(&s.t, sk, m) == 0)
				queued++;
			else
				rte_pktmbuf_free(m);
		}
		CHECK(queued == 4);
		CHECK(sk->rmem == 4 * 832);
		CHECK(sk->drops == 6);
		uint64_t r4 = 0, r6 = 0;
		CHECK(lrx_udp_read(&s.t, false, &r4, &r6) == 0); // reader none
		CHECK(lrx_udp_held(&s.t) == 4);
		CHECK(lrx_udp_read(&s.t, true, &r4, &r6) == 4);  // the run's end
		CHECK(r4 == 4);
		CHECK(sk->rmem == 0);
		rte_mbuf *out[8];
		CHECK(lrx_udp_release(&s.t, out, 8) == 4);
		for (int i = 0; i < 4; i++) {
			const uint8_t *d = rte_pktmbuf_mtod(out[i], const uint8_t *);
			const int dport = d[36] << 8 | d[37]; // the UDP destination
			CHECK(dport == i);
			rte_pktmbuf_free(out[i]);
		}
		CHECK(lrx_udp_held(&s.t) == 0);
	}
	SECTION("a buffer smaller than one packet still takes the first of an "
		"empty queue") {
		Socks s("*:9", 1, 4000, LRX_UDP_READER_POLL);
		lrx_udp_sock *sk = s.v4("10.0.0.2", 9);
		auto v = mbufs(3);
		CHECK(lrx_udp_enqueue(&s.t, sk, v[0]) == 0);
		CHECK(lrx_udp_enqueue(&s.t, sk, v[1]) == -ENOMEM);
		rte_pktmbuf_free(v[1]);
		uint64_t r4 = 0, r6 = 0;
		CHECK(lrx_udp_read(&s.t, false, &r4, &r6) == 1);
		CHECK(lrx_udp_enqueue(&s.t, sk, v[2]) == 0); // empty again
		rte_mbuf *out[4];
		CHECK(lrx_udp_release(&s.t, out, 4) == 1);
		rte_pktmbuf_free(out[0]);
	}
	SECTION("a batch reader reads N per socket per poll, in order") {
		Socks s("*:9,*:10", 0, 0, LRX_UDP_READER_BATCH, 2);
		auto v = mbufs(5);
		for (int i = 0; i < 3; i++)
			REQUIRE(lrx_udp_enqueue(&s.t, s.v4("10.0.0.2", 9), v[i]) == 0);
		for (int i = 3; i < 5; i++)
			REQUIRE(lrx_udp_enqueue(&s.t, s.v4("10.0.0.2", 10), v[i]) == 0);
		uint64_t r4 = 0, r6 = 0;
		CHECK(lrx_udp_read(&s.t, false, &r4, &r6) == 4);
		rte_mbuf *out[8];
		REQUIRE(lrx_udp_release(&s.t, out, 8) == 4);
		CHECK(out[0] == v[0]);
		CHECK(out[1] == v[1]);
		CHECK(out[2] == v[3]);
		CHECK(out[3] == v[4]);
		for (int i = 0; i < 4; i++)
			rte_pktmbuf_free(out[i]);
		CHECK(lrx_udp_held(&s.t) == 1);
		// fini gives back what is still queued
	}
	SECTION("what was read and not yet released (a full sink) bounds the "
		"next read; nothing is overwritten, order is kept") {
		Socks s("*:9", 2048, 832, LRX_UDP_READER_POLL); // 6 slots
		REQUIRE(s.t.out_cap == 6);
		lrx_udp_sock *sk = s.v4("10.0.0.2", 9);
		auto v = mbufs(8);
		uint64_t r4 = 0, r6 = 0;
		for (int i = 0; i < 4; i++)
			REQUIRE(lrx_udp_enqueue(&s.t, sk, v[i]) == 0);
		CHECK(lrx_udp_read(&s.t, false, &r4, &r6) == 4);
		for (int i = 4; i < 8; i++)
			REQUIRE(lrx_udp_enqueue(&s.t, sk, v[i]) == 0);
		CHECK(lrx_udp_read(&s.t, false, &r4, &r6) == 2); // 6 - 4 free
		CHECK(lrx_udp_held(&s.t) == 8);
		CHECK(r4 == 6);
		rte_mbuf *out[8];
		REQUIRE(lrx_udp_release(&s.t, out, 8) == 6);
		CHECK(lrx_udp_read(&s.t, true, &r4, &r6) == 2);
		REQUIRE(lrx_udp_release(&s.t, out + 6, 2) == 2);
		for (int i = 0; i < 8; i++) {
			CHECK(out[i] == v[i]);
			rte_pktmbuf_free(out[i]);
		}
		CHECK(lrx_udp_held(&s.t) == 0);
	}
	SECTION("without truesize, a datagram costs its mbuf") {
		Socks s("*:9");
		auto v = mbufs(1);
		lrx_udp_sock *sk = s.v4("10.0.0.2", 9);
		REQUIRE(lrx_udp_enqueue(&s.t, sk, v[0]) == 0);
		const uint32_t one = (uint32_t)(sizeof(rte_mbuf) +
						rte_pktmbuf_priv_size(mp) +
						v[0]->buf_len);
		CHECK(sk->rmem == one);
		// a reassembled datagram, a chain of 2, charges both
		auto w = mbufs(2);
		REQUIRE(rte_pktmbuf_chain(w[0], w[1]) == 0);
		REQUIRE(lrx_udp_enqueue(&s.t, sk, w[0]) == 0);
		CHECK(sk->rmem == 3 * one);
	}
	LRX_REQUIRE_POOL_FULL(mp);
}

extern "C" {
#include "sockets/tcp_ehash.h"
}

TEST_CASE("tcp established lookup: a tuple inserted once is found, a full "
	  "table refuses, the tuple's every field counts", "[sockets]")
{
	pool();
	lrx_tcp_ehash t;
	CHECK(lrx_tcp_ehash_init(&t, 3, (int)rte_socket_id()) == -EINVAL);
	CHECK(lrx_tcp_ehash_init(&t, 0, (int)rte_socket_id()) == -EINVAL);
	REQUIRE(lrx_tcp_ehash_init(&t, 4, (int)rte_socket_id()) == 0);
	uint8_t l[16] = {10, 0, 0, 2}, r[16] = {10, 0, 0, 1};
	// find, else insert: what l3-demux does for a segment that opens one
	auto seen = [&](bool v6, const uint8_t *la, const uint8_t *ra, uint16_t lp,
			uint16_t rp) {
		const uint32_t h = lrx_tcp_ehashfn(&t, v6, la, ra, lp, rp);
		if (lrx_tcp_ehash_lookup(&t, v6, h, la, ra, lp, rp))
			return 1;
		return lrx_tcp_ehash_insert(&t, v6, h, la, ra, lp, rp) == 0 ? 0 : -1;
	};
	int hits = 0, inserted = 0, full = 0;
	for (int round = 0; round < 3; round++)
		for (uint16_t p = 1; p <= 6; p++) {
			const int k = seen(false, l, r, htons(80), htons(p));
			hits += k == 1;
			inserted += k == 0;
			full += k == -1;
		}
	CHECK(inserted == 4);
	CHECK(t.n == 4);
	CHECK(full == 2 * 3);     // ports 5 and 6 never fit
	CHECK(hits == 4 * 2);     // ports 1-4 in rounds 2 and 3
	// each field of the tuple tells two connections apart
	uint8_t l2[16] = {10, 0, 0, 3}, r2[16] = {10, 0, 0, 4};
	const uint32_t h = lrx_tcp_ehashfn(&t, false, l, r, htons(80), htons(1));
	CHECK(lrx_tcp_ehash_lookup(&t, false, h, l, r, htons(80), htons(1)));
	for (auto [la, ra, lp, rp] :
	     {std::tuple{l2, r, 80, 1}, std::tuple{l, r2, 80, 1},
	      std::tuple{l, r, 81, 1}, std::tuple{l, r, 80, 2 + 256}}) {
		const uint32_t h2 = lrx_tcp_ehashfn(&t, false, la, ra, htons(lp), htons(rp));
		CHECK_FALSE(lrx_tcp_ehash_lookup(&t, false, h2, la, ra, htons(lp), htons(rp)));
	}
	lrx_tcp_ehash_fini(&t);
	// IPv6: the whole addresses count, not only the words hashed
	REQUIRE(lrx_tcp_ehash_init(&t, 1, (int)rte_socket_id()) == 0);
	uint8_t l6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
	uint8_t o6[16] = {0x20, 0x01, 0x0d, 0xb9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
	CHECK(seen(true, l6, l6, htons(80), htons(1)) == 0);
	CHECK(seen(true, l6, l6, htons(80), htons(1)) == 1);
	CHECK(seen(true, o6, l6, htons(80), htons(1)) == -1); // one bucket, full
	lrx_tcp_ehash_fini(&t);
	lrx_tcp_ehash_fini(&t); // twice is fine
}
