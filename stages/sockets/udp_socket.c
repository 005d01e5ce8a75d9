/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>

#include "rule_text.h"
#include "udp_socket.h"

/* the smallest truesize a queued datagram can have (SKB_TRUESIZE(0)): the
 * ring of a socket never needs more slots than rcvbuf / this + 1 */
#define UDP_MIN_TRUESIZE 576u

uint32_t lrx_udp_rcvbuf(uint32_t val)
{
	if (val == 0)
		return LRX_UDP_RMEM_DEFAULT;
	val = RTE_MIN(val, LRX_UDP_RMEM_MAX);
	return RTE_MAX(val * 2, LRX_UDP_MIN_RCVBUF);
}

/* One ADDR:PORT[:RCVBUF] item; *rcvbuf is left alone without one. */
static int udp_sock_parse(const char *item, struct lrx_udp_sock *sk,
			  uint32_t *rcvbuf)
{
	char addr[64], port_text[32];
	const char *colon, *end;
	uint64_t port, val;

	memset(sk, 0, sizeof(*sk));
	if (item[0] == '[') {
		const char *close = strchr(item, ']');
		if (close == NULL || close[1] != ':' ||
		    (size_t)(close - item - 1) >= sizeof(addr))
			return -EINVAL;
		snprintf(addr, sizeof(addr), "%.*s", (int)(close - item - 1), item + 1);
		if (inet_pton(AF_INET6, addr, sk->addr) != 1)
			return -EINVAL;
		sk->v6 = 1;
		colon = close + 1;
	} else {
		colon = strchr(item, ':');
		if (colon == NULL || (size_t)(colon - item) >= sizeof(addr))
			return -EINVAL;
		snprintf(addr, sizeof(addr), "%.*s", (int)(colon - item), item);
		if (strcmp(addr, "*") == 0)
			strcpy(addr, "0.0.0.0");
		if (inet_pton(AF_INET, addr, sk->addr) != 1)
			return -EINVAL;
	}
	/* PORT, then an optional :RCVBUF (the setsockopt value, 1..INT_MAX) */
	end = strchr(colon + 1, ':');
	if (end == NULL)
		end = colon + 1 + strlen(colon + 1);
	if ((size_t)(end - colon - 1) >= sizeof(port_text))
		return -EINVAL;
	snprintf(port_text, sizeof(port_text), "%.*s", (int)(end - colon - 1),
		 colon + 1);
	if (lrx_rule_uint(port_text, 65535, false, &port) != 0 || port == 0)
		return -EINVAL;
	if (*end == ':') {
		if (lrx_rule_uint(end + 1, INT32_MAX, false, &val) != 0 || val == 0)
			return -EINVAL;
		*rcvbuf = (uint32_t)val;
	}
	static const uint8_t zero[16];
	sk->any = memcmp(sk->addr, zero, sk->v6 ? 16 : 4) == 0;
	sk->port = (uint16_t)port;
	return 0;
}

int lrx_udp_socks_init(struct lrx_udp_socks *t, const char *list,
		       uint32_t rcvbuf, int socket_id, char *err,
		       size_t err_len)
{
	static const char valid[] =
		"a comma list of ADDR:PORT, [ADDR6]:PORT, *:PORT or [::]:PORT, "
		"each optionally :RCVBUF (SO_RCVBUF, 1..2147483647; ports "
		"1..65535, each address and port once)";
	const char *p = list;

	memset(t->bucket, 0xff, sizeof(t->bucket));
	t->n = 0;
	while (*p) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char item[96];

		if (len == 0 || len >= sizeof(item) || t->n == LRX_UDP_SOCKS_MAX) {
			snprintf(err, err_len, "%s (at most %d sockets)", valid,
				 LRX_UDP_SOCKS_MAX);
			return -EINVAL;
		}
		snprintf(item, sizeof(item), "%.*s", (int)len, p);
		p += len + (comma ? 1 : 0);
		if (comma && *p == '\0') {
			snprintf(err, err_len, "%s: a list does not end with a comma",
				 valid);
			return -EINVAL;
		}
		struct lrx_udp_sock *sk = &t->socks[t->n];
		uint32_t item_rcvbuf = rcvbuf;
		if (udp_sock_parse(item, sk, &item_rcvbuf) != 0) {
			snprintf(err, err_len, "'%s': %s", item, valid);
			return -EINVAL;
		}
		for (unsigned i = 0; i < t->n; i++)
			if (t->socks[i].port == sk->port && t->socks[i].v6 == sk->v6 &&
			    memcmp(t->socks[i].addr, sk->addr, 16) == 0) {
				snprintf(err, err_len, "'%s' given twice (bind: "
					 "EADDRINUSE)", item);
				return -EINVAL;
			}
		const uint32_t eff = lrx_udp_rcvbuf(item_rcvbuf);
		sk->rcvbuf = eff;
		const uint32_t min = t->truesize ? t->truesize : UDP_MIN_TRUESIZE;
		sk->cap = eff / min + 2;
		sk->queue = rte_zmalloc_socket("udp_sock_queue",
					       sk->cap * sizeof(*sk->queue), 0,
					       socket_id);
		sk->sizes = rte_zmalloc_socket("udp_sock_sizes",
					       sk->cap * sizeof(*sk->sizes), 0,
					       socket_id);
		t->n++; /* freed by fini from here on */
		if (sk->queue == NULL || sk->sizes == NULL) {
			snprintf(err, err_len, "out of memory for the socket queues");
			return -ENOMEM;
		}
		const unsigned b = sk->port & (LRX_UDP_HASH - 1);
		sk->next = t->bucket[b];
		t->bucket[b] = (int16_t)(t->n - 1);
		t->out_cap += sk->cap;
	}
	if (t->n) {
		t->out = rte_zmalloc_socket("udp_sock_out",
					    t->out_cap * sizeof(*t->out), 0,
					    socket_id);
		if (t->out == NULL) {
			snprintf(err, err_len, "out of memory for the socket queues");
			return -ENOMEM;
		}
	}
	return 0;
}

uint32_t lrx_udp_socks_capacity(const char *list, uint32_t rcvbuf,
				uint32_t size)
{
	const char *p = list;
	uint32_t n = 0;

	while (*p && size) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char item[96];
		struct lrx_udp_sock sk;
		uint32_t item_rcvbuf = rcvbuf;

		snprintf(item, sizeof(item), "%.*s", (int)RTE_MIN(len, sizeof(item) - 1), p);
		p += len + (comma ? 1 : 0);
		if (udp_sock_parse(item, &sk, &item_rcvbuf) != 0)
			continue; /* lrx_udp_socks_init refuses it */
		/* lrx_udp_enqueue: what fits, and the first one always */
		const uint32_t eff = lrx_udp_rcvbuf(item_rcvbuf);
		n += RTE_MIN(eff / size + 1, eff / RTE_MIN(size, UDP_MIN_TRUESIZE) + 2);
	}
	return n;
}

void lrx_udp_socks_fini(struct lrx_udp_socks *t)
{
	/* what a run without a drain left queued goes back to its pool (the
	 * kernel purges a closed socket's queue) */
	for (unsigned i = 0; i < t->n; i++) {
		struct lrx_udp_sock *sk = &t->socks[i];
		for (uint32_t k = 0; sk->queue && k < sk->count; k++)
			rte_pktmbuf_free(sk->queue[(sk->head + k) % sk->cap]);
		rte_free(sk->queue);
		rte_free(sk->sizes);
		sk->queue = NULL;
		sk->sizes = NULL;
		sk->count = 0;
	}
	for (uint32_t k = 0; t->out && k < t->n_out; k++)
		rte_pktmbuf_free(t->out[(t->out_head + k) % t->out_cap]);
	rte_free(t->out);
	t->out = NULL;
	t->n_out = 0;
	t->n = 0;
}

uint32_t lrx_udp_read(struct lrx_udp_socks *t, bool all, uint64_t *v4_read,
		      uint64_t *v6_read)
{
	uint32_t total = 0;

	if (!all && t->reader == LRX_UDP_READER_NONE)
		return 0;
	for (unsigned i = 0; i < t->n; i++) {
		struct lrx_udp_sock *sk = &t->socks[i];
		uint32_t n = sk->count;
		if (!all && t->reader == LRX_UDP_READER_BATCH)
			n = RTE_MIN(n, t->batch);
		/* what was read and not yet released (a full sink) stays
		 * there: the rest waits in its queue */
		n = RTE_MIN(n, t->out_cap - t->n_out);
		for (uint32_t k = 0; k < n; k++) {
			const uint32_t at = sk->head;
			t->out[(t->out_head + t->n_out) % t->out_cap] = sk->queue[at];
			t->n_out++;
			sk->rmem -= sk->sizes[at];
			sk->head = (sk->head + 1) % sk->cap;
			sk->count--;
		}
		sk->read += n;
		*(sk->v6 ? v6_read : v4_read) += n;
		total += n;
	}
	return total;
}

uint16_t lrx_udp_release(struct lrx_udp_socks *t, struct rte_mbuf **pkts,
			 uint16_t max)
{
	uint16_t n = (uint16_t)RTE_MIN((uint32_t)max, t->n_out);

	for (uint16_t k = 0; k < n; k++) {
		pkts[k] = t->out[t->out_head];
		t->out_head = (t->out_head + 1) % t->out_cap;
	}
	t->n_out -= n;
	return n;
}

uint32_t lrx_udp_held(const struct lrx_udp_socks *t)
{
	uint32_t n = t->n_out;

	for (unsigned i = 0; i < t->n; i++)
		n += t->socks[i].count;
	return n;
}
