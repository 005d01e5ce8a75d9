/* SPDX-License-Identifier: BSD-3-Clause
 * TCP's established-socket lookup (__inet_lookup_established), the cost
 * part of tcp_v4_rcv's socket lookup that l3-demux's TCP handler models:
 * the 4-tuple hashed as inet_ehashfn does (jhash_3words of the addresses
 * and ports with a secret) into a power-of-two table of buckets, the
 * bucket's chain walked comparing the tuple (INET_MATCH). A segment to a
 * listening port whose tuple is not there is taken as a connection that
 * completed its handshake: the listener's child is inserted
 * (inet_ehash_insert), so the flow's later segments find it. No state
 * machine, no timers, no teardown: only the lookup's work and the table's
 * occupancy (docs/sockets.md).
 */
#ifndef LISTRX_TCP_EHASH_H
#define LISTRX_TCP_EHASH_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_jhash.h>

struct lrx_tcp_est {
	int32_t next;           /* the bucket's next entry, -1 */
	uint16_t lport, rport;  /* network order, as the skb's */
	uint8_t v6;
	uint8_t laddr[16], raddr[16];
};

struct lrx_tcp_ehash {
	uint32_t mask;          /* buckets - 1 */
	uint32_t n, max;        /* entries in use, at most (the table's size) */
	uint32_t secret;        /* inet_ehash_secret */
	int32_t *bucket;
	struct lrx_tcp_est *ent;
	uint64_t hits, inserted, full;
};

/* buckets: a power of two; max entries = buckets (as tcp_hashinfo's
 * ehash, one socket per bucket on average). Returns 0 or -ENOMEM. */
int lrx_tcp_ehash_init(struct lrx_tcp_ehash *t, uint32_t buckets,
		       int socket_id);
void lrx_tcp_ehash_fini(struct lrx_tcp_ehash *t);

/* inet_ehashfn / inet6_ehashfn */
static inline uint32_t lrx_tcp_ehashfn(const struct lrx_tcp_ehash *t, bool v6,
				       const uint8_t *laddr, const uint8_t *raddr,
				       uint16_t lport, uint16_t rport)
{
	uint32_t l, r;

	if (v6) { /* inet6_ehashfn hashes the last words of each address */
		l = rte_jhash(laddr, 16, t->secret);
		r = rte_jhash(raddr, 16, t->secret);
	} else {
		memcpy(&l, laddr, 4);
		memcpy(&r, raddr, 4);
	}
	return rte_jhash_3words(l, r, (uint32_t)lport << 16 | rport, t->secret);
}

/* The established socket of a segment (laddr/lport: its destination),
 * inserting one when there is none (the listener's child). */
static inline void lrx_tcp_established(struct lrx_tcp_ehash *t, bool v6,
				       const uint8_t *laddr, const uint8_t *raddr,
				       uint16_t lport, uint16_t rport)
{
	const uint32_t b = lrx_tcp_ehashfn(t, v6, laddr, raddr, lport, rport) &
			   t->mask;
	const size_t alen = v6 ? 16 : 4;

	for (int32_t i = t->bucket[b]; i >= 0; i = t->ent[i].next) {
		const struct lrx_tcp_est *e = &t->ent[i];
		if (e->lport == lport && e->rport == rport && e->v6 == v6 &&
		    memcmp(e->laddr, laddr, alen) == 0 &&
		    memcmp(e->raddr, raddr, alen) == 0) {
			t->hits++;
			return;
		}
	}
	if (t->n == t->max) {
		t->full++;
		return;
	}
	struct lrx_tcp_est *e = &t->ent[t->n];
	e->lport = lport;
	e->rport = rport;
	e->v6 = v6;
	memcpy(e->laddr, laddr, alen);
	memcpy(e->raddr, raddr, alen);
	e->next = t->bucket[b];
	t->bucket[b] = (int32_t)t->n++;
	t->inserted++;
}

#endif
