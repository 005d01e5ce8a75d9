/* SPDX-License-Identifier: BSD-3-Clause
 * TCP's established-socket table (tcp_hashinfo's ehash) and its lookup,
 * __inet_lookup_established: the 4-tuple hashed as inet_ehashfn /
 * inet6_ehashfn do (jhash of the addresses and the remote port with a
 * secret, plus the local port) into a power-of-two table of buckets, the
 * bucket's chain walked comparing the stored hash (sk_hash) and then the
 * tuple (inet_match / inet6_match). l3-demux's TCP handler looks every
 * segment up here first and inserts the sockets a listener opens
 * (inet_ehash_insert); when and why is its business (docs/sockets.md).
 * No state machine, no timers, no teardown: only the lookup's work and
 * the table's occupancy.
 */
#ifndef LISTRX_TCP_EHASH_H
#define LISTRX_TCP_EHASH_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_jhash.h>

/* Most buckets of a table (and entries: one per bucket) */
#define LRX_TCP_EHASH_MAX (1u << 20)

struct lrx_tcp_est {
	int32_t next;           /* the bucket's next entry, -1 */
	uint32_t hash;          /* sk_hash: compared before the tuple */
	uint16_t lport, rport;  /* network order, as the segment's */
	uint8_t laddr[16], raddr[16];
};

/* One family's table: IPv4 compares 4 bytes of each address, IPv6 16. */
struct lrx_tcp_ehash {
	uint32_t mask;          /* buckets - 1 */
	uint32_t n, max;        /* entries in use, at most (the table's size) */
	uint32_t secret;        /* inet_ehash_secret */
	int32_t *bucket;
	struct lrx_tcp_est *ent;
};

/* buckets: a power of two up to LRX_TCP_EHASH_MAX; max entries = buckets
 * (as tcp_hashinfo's ehash is sized: one socket per bucket on average).
 * Returns 0 or -ENOMEM. */
int lrx_tcp_ehash_init(struct lrx_tcp_ehash *t, uint32_t buckets,
		       int socket_id);
/* Frees the buckets; a table never initialised (zeroed) is fine. */
void lrx_tcp_ehash_fini(struct lrx_tcp_ehash *t);

/* inet_ehashfn (v4: the addresses as they are) / inet6_ehashfn (v6: the
 * local address's last word, the remote one jhash2'd): laddr/lport are
 * the segment's destination. */
static inline uint32_t lrx_tcp_ehashfn(const struct lrx_tcp_ehash *t, const bool v6,
				       const uint8_t *laddr, const uint8_t *raddr,
				       uint16_t lport, uint16_t rport)
{
	uint32_t l, r;

	if (v6) {
		uint32_t w[4];
		memcpy(&l, laddr + 12, 4);
		memcpy(w, raddr, 16); /* the packet's address may be unaligned */
		r = rte_jhash_32b(w, 4, t->secret);
	} else {
		memcpy(&l, laddr, 4);
		memcpy(&r, raddr, 4);
	}
	return rte_be_to_cpu_16(lport) + rte_jhash_3words(l, r, rport, t->secret);
}

/* One address of the family, compared in whole words (inet_match's
 * addrpair, ipv6_addr_equal): a memcmp whose length is not a constant is
 * a call. */
static inline bool lrx_tcp_addr_eq(const bool v6, const uint8_t *a, const uint8_t *b)
{
	if (!v6) {
		uint32_t x, y;
		memcpy(&x, a, 4);
		memcpy(&y, b, 4);
		return x == y;
	}
	uint64_t x[2], y[2];
	memcpy(x, a, 16);
	memcpy(y, b, 16);
	return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

/* __inet_lookup_established: the entry of (laddr, lport, raddr, rport),
 * whose hash is hash, or -1 when the table does not have it. The entry's
 * index is the connection's for as long as the run lasts (no teardown). */
static inline int32_t lrx_tcp_ehash_find(const struct lrx_tcp_ehash *t, const bool v6,
					 uint32_t hash, const uint8_t *laddr,
					 const uint8_t *raddr, uint16_t lport,
					 uint16_t rport)
{
	for (int32_t i = t->bucket[hash & t->mask]; i >= 0; i = t->ent[i].next) {
		const struct lrx_tcp_est *e = &t->ent[i];
		if (e->hash == hash && e->lport == lport && e->rport == rport &&
		    lrx_tcp_addr_eq(v6, e->laddr, laddr) &&
		    lrx_tcp_addr_eq(v6, e->raddr, raddr))
			return i;
	}
	return -1;
}

/* Is the tuple in the table? */
static inline bool lrx_tcp_ehash_lookup(const struct lrx_tcp_ehash *t, const bool v6,
					uint32_t hash, const uint8_t *laddr,
					const uint8_t *raddr, uint16_t lport,
					uint16_t rport)
{
	return lrx_tcp_ehash_find(t, v6, hash, laddr, raddr, lport, rport) >= 0;
}

/* inet_ehash_insert of a tuple the lookup did not find, at the head of
 * its bucket. Returns 0, or -ENOSPC when the table holds max entries. */
static inline int lrx_tcp_ehash_insert(struct lrx_tcp_ehash *t, const bool v6,
				       uint32_t hash, const uint8_t *laddr,
				       const uint8_t *raddr, uint16_t lport,
				       uint16_t rport)
{
	const size_t alen = v6 ? 16 : 4;

	if (t->n == t->max)
		return -ENOSPC;
	struct lrx_tcp_est *e = &t->ent[t->n];
	e->hash = hash;
	e->lport = lport;
	e->rport = rport;
	memcpy(e->laddr, laddr, alen);
	memcpy(e->raddr, raddr, alen);
	e->next = t->bucket[hash & t->mask];
	t->bucket[hash & t->mask] = (int32_t)t->n++;
	return 0;
}

#endif
