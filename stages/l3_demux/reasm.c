/* SPDX-License-Identifier: BSD-3-Clause
 * IPv4 / IPv6 reassembly with the kernel's semantics:
 *  - queues keyed as ip_find (saddr, daddr, id, protocol) and fq_find
 *    (saddr, daddr, id, ECN; the ingress port for link-local and
 *    multicast destinations), created by inet_frag_find unless the
 *    memory held is above ipfrag_high_thresh (then the fragment fails);
 *  - ip_frag_queue / ip6_frag_queue's length rules, and
 *    inet_frag_queue_insert's overlap rule (RFC 5722: an overlap discards
 *    the whole queue, IpExtReasmOverlaps + IpReasmFails; a fragment inside
 *    an existing run is a duplicate, dropped alone as DUP_FRAG);
 *  - the timer: a queue expires ipfrag_time after its creation
 *    (ip_expire: IpReasmFails + IpReasmTimeout), checked at every end of
 *    poll; the run's end expires every queue left;
 *  - nf_defrag_ipv6's queues (reasm_ipv6.c, l3_reasm_ipv6_ct) beside
 *    them: their own user in the key, memory limit and timeout
 *    (nf_conntrack_frag6_high_thresh, nf_conntrack_frag6_timeout), and
 *    on expiry the IPv6 counters (ip6frag_expire_frag_queue);
 *  - ip_frag_reasm / ip6_frag_reasm: the fragment that completes the
 *    datagram becomes its head (skb_morph: the mbuf the engine holds
 *    takes the first fragment's bytes), the others are chained after it
 *    (rte_pktmbuf_chain, as frag_list), and the header is rewritten (total
 *    length, DF, ECN, checksum; IPv6: payload length, the fragment header
 *    removed and its next header moved to the previous header).
 * Fragment records and queues come from tables allocated at init, sized
 * by ipfrag_high_thresh; memory is counted as the kernel's truesize: the
 * mbuf and its buffer per segment, plus the queue.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ip.h>
#include <rte_jhash.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "icmp.h"
#include "l3_modules.h"

static inline uint64_t reasm_now(const struct l3_reasm *r)
{
	return r->clock_polls ? r->polls : rte_rdtsc();
}

/* ---- init / fini ---------------------------------------------------------- */

static void l3_reasm_fini(struct l3_demux *d);

static int l3_reasm_init(struct l3_demux *d, const struct l3_demux_conf *dconf,
			 const struct lrx_stage_init *init)
{
	struct l3_reasm *r = &d->reasm;
	const struct l3_reasm_conf *conf = &dconf->reasm;
	const uint64_t thresh = conf->high_thresh;
	r->max_dist = conf->max_dist;
	r->clock_polls = conf->clock == 1;
	/* ipfrag_clock=polls: one poll counts as one second */
	const uint64_t unit = r->clock_polls ? 1 : rte_get_tsc_hz();
	r->timeout[REASM_LRU_FRAG] = conf->time_s * unit;
	r->timeout[REASM_LRU_NF6] = conf->nf6_time_s * unit;
	r->high_thresh[REASM_DIR_IPV4] = r->high_thresh[REASM_DIR_IPV6] = thresh;
	r->high_thresh[REASM_DIR_NF6] = conf->nf6_high_thresh;

	/* records for each fqdir's high_thresh; nf_defrag_ipv6's only where
	 * IPv6 conntrack may run (netfilter6 rules, or conntrack=on) */
	const bool nf6 = dconf->nf_hook.conntrack == 1 || dconf->nf_hook.file6[0] != '\0';
	uint64_t cap = 2 * (thresh / REASM_MIN_TRUESIZE + 2);
	if (nf6)
		cap += conf->nf6_high_thresh / REASM_MIN_TRUESIZE + 2;
	cap = RTE_MAX(cap, (uint64_t)16);
	cap = RTE_MIN(cap, (uint64_t)1 << 21);
	r->cap = (uint32_t)cap;
	const uint32_t buckets = rte_align32pow2(r->cap);
	r->hash_mask = buckets - 1;
	r->hash = rte_zmalloc_socket("l3_reasm_hash", buckets * sizeof(*r->hash),
				     RTE_CACHE_LINE_SIZE, init->socket_id);
	r->queues = rte_zmalloc_socket("l3_reasm_queues",
				       r->cap * sizeof(*r->queues),
				       RTE_CACHE_LINE_SIZE, init->socket_id);
	r->frags = rte_zmalloc_socket("l3_reasm_frags",
				      r->cap * sizeof(*r->frags),
				      RTE_CACHE_LINE_SIZE, init->socket_id);
	r->peer_hash = rte_zmalloc_socket("l3_reasm_peer_hash",
					  buckets * sizeof(*r->peer_hash),
					  RTE_CACHE_LINE_SIZE, init->socket_id);
	r->peers = rte_zmalloc_socket("l3_reasm_peers",
				      r->cap * sizeof(*r->peers),
				      RTE_CACHE_LINE_SIZE, init->socket_id);
	if (!r->hash || !r->queues || !r->frags || !r->peer_hash || !r->peers) {
		l3_reasm_fini(d);
		snprintf(init->err, init->err_len,
			 "%s: no memory for %u reassembly queues "
			 "(ipfrag_high_thresh=%lu, nf_conntrack_frag6_high_thresh=%u)",
			 init->instance, r->cap,
			 thresh, conf->nf6_high_thresh);
		return -ENOMEM;
	}
	for (uint32_t i = 1; i <= r->cap; i++) {
		rq(r, i)->hash_next = i < r->cap ? i + 1 : 0;
		rf(r, i)->next = i < r->cap ? i + 1 : 0;
		rp(r, i)->next = i < r->cap ? i + 1 : 0;
	}
	r->free_queue = r->free_frag = r->free_peer = 1;
	return 0;
}


static uint16_t l3_reasm_drop(void *ctx, struct rte_mbuf **pkts,
			      enum lrx_drop_reason *reasons, uint16_t max);
static uint16_t l3_reasm_send(void *ctx, struct rte_mbuf **pkts, uint16_t max);

/* Frees every queue and what drop has not taken (uncounted: the run's end
 * and the engine's drain counted them). */
static void l3_reasm_fini(struct l3_demux *d)
{
	struct l3_reasm *r = &d->reasm;
	struct rte_mbuf *m;
	enum lrx_drop_reason reason;
	for (unsigned l = 0; l < REASM_LRUS; l++)
		while (r->queues && r->lru_head[l])
			reasm_queue_free(r, r->lru_head[l], LRX_DROP_FRAG_REASM_TIMEOUT);
	while (r->frags && l3_reasm_drop(d, &m, &reason, 1))
		rte_pktmbuf_free(m);
	while (r->frags && l3_reasm_send(d, &m, 1))
		rte_pktmbuf_free(m);
	rte_free(r->hash);
	rte_free(r->queues);
	rte_free(r->frags);
	rte_free(r->peer_hash);
	rte_free(r->peers);
	r->peer_hash = NULL;
	r->peers = NULL;
	r->hash = NULL;
	r->queues = NULL;
	r->frags = NULL;
}

/* ---- queues: inet_frag_find / inet_frag_kill ------------------------------ */

static inline uint32_t reasm_bucket(const struct l3_reasm *r,
				    const struct l3_reasm_key *key)
{
	return rte_jhash(key, sizeof(*key), 0) & r->hash_mask;
}

/* inet_getpeer_v4: the peer of an IPv4 source, with one more reference;
 * 0 when none is left (the queue then has no peer, as when inet_getpeer
 * fails) */
static uint32_t reasm_peer_get(struct l3_reasm *r, uint32_t saddr)
{
	const uint32_t b = rte_jhash_1word(saddr, 0) & r->hash_mask;
	for (uint32_t i = r->peer_hash[b]; i; i = rp(r, i)->next)
		if (rp(r, i)->saddr == saddr) {
			rp(r, i)->refs++;
			return i;
		}
	const uint32_t pi = r->free_peer;
	if (pi == 0)
		return 0;
	r->free_peer = rp(r, pi)->next;
	*rp(r, pi) = (struct l3_reasm_peer){
		.saddr = saddr, .refs = 1, .next = r->peer_hash[b]};
	r->peer_hash[b] = pi;
	return pi;
}

static void reasm_peer_put(struct l3_reasm *r, uint32_t pi)
{
	if (--rp(r, pi)->refs != 0)
		return;
	uint32_t *link =
		&r->peer_hash[rte_jhash_1word(rp(r, pi)->saddr, 0) & r->hash_mask];
	while (*link != pi)
		link = &rp(r, *link)->next;
	*link = rp(r, pi)->next;
	rp(r, pi)->next = r->free_peer;
	r->free_peer = pi;
}

/* frag_mem_limit: each fqdir counts its own memory (IPv4 and IPv6 have
 * their own ipfrag_high_thresh, nf_defrag_ipv6 its own), so the order of
 * IPv4 and IPv6 fragments in a burst does not change what either
 * accepts. */
static inline void reasm_mem_add(struct l3_reasm *r,
				 const struct l3_reasm_queue *q, int64_t bytes)
{
	r->fam_mem[reasm_dir(&q->key)] += (uint64_t)bytes;
	r->mem += (uint64_t)bytes;
}

/* the expiry list of a queue: nf_defrag_ipv6's has its own timeout */
static inline unsigned reasm_lru_of(const struct l3_reasm_queue *q)
{
	return reasm_dir(&q->key) == REASM_DIR_NF6 ? REASM_LRU_NF6 : REASM_LRU_FRAG;
}

static void reasm_lru_append(struct l3_reasm *r, uint32_t qi);

/* the queue of key, 0 if none (rhashtable_lookup) */
uint32_t reasm_lookup(struct l3_reasm *r, const struct l3_reasm_key *key)
{
	for (uint32_t i = r->hash[reasm_bucket(r, key)]; i; i = rq(r, i)->hash_next)
		if (memcmp(&rq(r, i)->key, key, sizeof(*key)) == 0)
			return i;
	return 0;
}

/* inet_frag_find: the queue of key, created if absent; 0 when the memory
 * held is above its fqdir's high_thresh (or no queue is left). */
uint32_t reasm_find(struct l3_reasm *r, const struct l3_reasm_key *key)
{
	const enum l3_reasm_dir dir = reasm_dir(key);
	if (r->high_thresh[dir] == 0 || r->fam_mem[dir] > r->high_thresh[dir])
		return 0;
	const uint32_t found = reasm_lookup(r, key);
	if (found)
		return found;
	const uint32_t b = reasm_bucket(r, key);
	const uint32_t qi = r->free_queue;
	if (qi == 0)
		return 0;
	struct l3_reasm_queue *q = rq(r, qi);
	r->free_queue = q->hash_next;
	*q = (struct l3_reasm_queue){
		.key = *key,
		.hash_next = r->hash[b],
		.truesize = sizeof(*q),
	};
	q->expires = reasm_now(r) + r->timeout[reasm_lru_of(q)];
	if (key->family == 4 && r->max_dist != 0) {
		uint32_t saddr;
		memcpy(&saddr, key->saddr, 4);
		q->peer = reasm_peer_get(r, saddr);
	}
	r->hash[b] = qi;
	reasm_lru_append(r, qi);
	reasm_mem_add(r, q, sizeof(*q));
	r->queues_now++;
	return qi;
}

/* A fragment record back on the free list. */
static inline void reasm_frag_put(struct l3_reasm *r, uint32_t fi)
{
	rf(r, fi)->m = NULL;
	rf(r, fi)->next = r->free_frag;
	r->free_frag = fi;
}

/* ... of a fragment the queue held (reasm_frag_added) */
static void reasm_frag_unhold(struct l3_reasm *r, uint32_t fi)
{
	reasm_frag_put(r, fi);
	r->frags_now--;
}

/* inet_frag_kill + inet_frag_destroy: the queue loses its fragments.
 * drop (inet_frag_rbtree_purge's reason): they go to the discard list,
 * in order; REASM_JOINED: only their records go (the mbufs went
 * into a reassembled datagram). */
static void reasm_frags_free(struct l3_reasm *r, struct l3_reasm_queue *q,
			     unsigned drop)
{
	if (drop != REASM_JOINED && q->first) {
		const unsigned fam = q->key.family == 6;
		uint32_t last = q->first;
		for (uint32_t i = q->first; i; last = i, i = rf(r, i)->next)
			rf(r, i)->drop = (uint8_t)drop;
		r->frags_dropped += q->n_frags;
		if (r->discard_tail[fam])
			rf(r, r->discard_tail[fam])->next = q->first;
		else
			r->discard_head[fam] = q->first;
		r->discard_tail[fam] = last;
	} else {
		for (uint32_t i = q->first, next; i; i = next) {
			next = rf(r, i)->next;
			reasm_frag_unhold(r, i);
		}
	}
	q->first = q->tail = 0;
	q->n_frags = 0;
}

/* The fragments of killed queues, each with its drop: FRAG_REASM_TIMEOUT
 * (ip_expire: inet_frag_destroy of a queue marked INET_FRAG_DROP),
 * FRAG_TOO_FAR (ip_frag_reinit), or the reason of the fragment that broke
 * the queue. */
static uint16_t l3_reasm_drop(void *ctx, struct rte_mbuf **pkts,
			      enum lrx_drop_reason *reasons, uint16_t max)
{
	struct l3_reasm *r = &((struct l3_demux *)ctx)->reasm;
	uint16_t n = 0;
	for (unsigned fam = 0; fam < 2; fam++) {
		while (n < max && r->discard_head[fam]) {
			const uint32_t i = r->discard_head[fam];
			pkts[n] = rf(r, i)->m;
			reasons[n++] = (enum lrx_drop_reason)rf(r, i)->drop;
			r->discard_head[fam] = rf(r, i)->next;
			reasm_frag_unhold(r, i);
		}
		if (!r->discard_head[fam])
			r->discard_tail[fam] = 0;
	}
	return n;
}

static void reasm_lru_unlink(struct l3_reasm *r, uint32_t qi)
{
	struct l3_reasm_queue *q = rq(r, qi);
	const unsigned l = reasm_lru_of(q);
	if (q->lru_prev)
		rq(r, q->lru_prev)->lru_next = q->lru_next;
	else
		r->lru_head[l] = q->lru_next;
	if (q->lru_next)
		rq(r, q->lru_next)->lru_prev = q->lru_prev;
	else
		r->lru_tail[l] = q->lru_prev;
}

static void reasm_lru_append(struct l3_reasm *r, uint32_t qi)
{
	struct l3_reasm_queue *q = rq(r, qi);
	const unsigned l = reasm_lru_of(q);
	q->lru_next = 0;
	q->lru_prev = r->lru_tail[l];
	if (r->lru_tail[l])
		rq(r, r->lru_tail[l])->lru_next = qi;
	else
		r->lru_head[l] = qi;
	r->lru_tail[l] = qi;
}

void reasm_queue_free(struct l3_reasm *r, uint32_t qi, unsigned drop)
{
	struct l3_reasm_queue *q = rq(r, qi);
	reasm_frags_free(r, q, drop);
	if (q->peer)
		reasm_peer_put(r, q->peer);
	reasm_mem_add(r, q, -(int64_t)q->truesize);
	uint32_t *link = &r->hash[reasm_bucket(r, &q->key)];
	while (*link != qi)
		link = &rq(r, *link)->hash_next;
	*link = q->hash_next;
	reasm_lru_unlink(r, qi);
	q->hash_next = r->free_queue;
	r->free_queue = qi;
	r->queues_now--;
}

/* The first fragments that became their time exceeded, out of their
 * ingress port. */
static uint16_t l3_reasm_send(void *ctx, struct rte_mbuf **pkts, uint16_t max)
{
	struct l3_reasm *r = &((struct l3_demux *)ctx)->reasm;
	uint16_t n = 0;
	for (unsigned fam = 0; fam < 2; fam++) {
		while (n < max && r->send_head[fam]) {
			const uint32_t i = r->send_head[fam];
			pkts[n++] = rf(r, i)->m;
			r->send_head[fam] = rf(r, i)->next;
			reasm_frag_unhold(r, i);
		}
		if (!r->send_head[fam])
			r->send_tail[fam] = 0;
	}
	return n;
}

/* ip_expire / ip6frag_expire_frag_queue with the first fragment in
 * (INET_FRAG_FIRST_IN): the time exceeded about it (icmp_send /
 * icmpv6_send, with their rate limits and checks), built in its buffer
 * while the queue holds it; sent, it leaves the queue for the send list.
 * IPv4's only user here is IP_DEFRAG_LOCAL_DELIVER (frag_expire_skip_icmp
 * is false); IPv6 sends for nf_defrag_ipv6's queues too; the port is
 * always there (the kernel's dev_get_by_index_rcu). */
static void reasm_expire_icmp(struct l3_demux *d, struct l3_reasm_queue *q)
{
	struct l3_reasm *r = &d->reasm;
	const uint32_t fi = q->first;
	if (!(q->flags & REASM_FIRST_IN) || fi == 0 || rf(r, fi)->offset != 0)
		return;
	struct l3_reasm_frag *f = rf(r, fi);
	const bool ipv6 = q->key.family == 6;
	const uint8_t *ip = rte_pktmbuf_mtod_offset(f->m, const uint8_t *, f->noff);
	struct lrx_meta meta = {
		.protocol = ipv6 ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4,
		.mac_len = f->mac_len,
		.network_offset = f->noff,
		.pkt_type = f->pkt_type,
		.vlan_vid = f->vlan_vid,
		.len = ipv6 ? 40u + (uint32_t)(ip[4] << 8 | ip[5])
			    : (uint32_t)(ip[2] << 8 | ip[3]),
	};
	/* __icmp_send: not about a broadcast or multicast route (icmp6_send
	 * checks a group destination itself) */
	if (!ipv6 && l3_route_is_multi(&d->core, f->m, &meta, L3_FAMILY_V4))
		return;
	const lrx_next_t timeout = lrx_next_drop(LRX_DROP_FRAG_REASM_TIMEOUT);
	if (l3_icmp_frag_time_exceeded(&d->core, f->m, &meta, timeout, ipv6) ==
	    timeout)
		return;
	/* inet_frag_pull_head */
	q->first = f->next;
	if (q->tail == fi)
		q->tail = 0;
	q->n_frags--;
	f->next = 0;
	if (r->send_tail[ipv6])
		rf(r, r->send_tail[ipv6])->next = fi;
	else
		r->send_head[ipv6] = fi;
	r->send_tail[ipv6] = fi;
}

/* ip_expire / ip6_frag_expire, and nf_ct_frag6_expire (both
 * ip6frag_expire_frag_queue: the IPv6 counters) */
static void reasm_expire(struct l3_demux *d, uint32_t qi)
{
	struct l3_reasm *r = &d->reasm;
	struct l3_reasm_mib *mib = &r->mib[rq(r, qi)->key.family == 6];
	mib->fails++;
	mib->timeout++;
	reasm_expire_icmp(d, rq(r, qi));
	reasm_queue_free(r, qi, LRX_DROP_FRAG_REASM_TIMEOUT);
}

/* The end of a poll: the clock moves and expired queues are discarded
 * (ip_expire / ip6_frag_expire: ReasmFails + ReasmTimeout each). */
static void l3_reasm_tick(void *ctx, bool budget_used)
{
	struct l3_reasm *r = &((struct l3_demux *)ctx)->reasm;
	(void)budget_used;
	r->polls++;
	if ((r->lru_head[REASM_LRU_FRAG] | r->lru_head[REASM_LRU_NF6]) == 0)
		return;
	/* one timeout a list: creation order is expiry order */
	const uint64_t now = reasm_now(r);
	for (unsigned l = 0; l < REASM_LRUS; l++)
		while (r->lru_head[l] && rq(r, r->lru_head[l])->expires <= now)
			reasm_expire(ctx, r->lru_head[l]);
}

/* The end of the run: every queue left ends as its timer would. */
static void l3_reasm_expire_all(void *ctx)
{
	struct l3_reasm *r = &((struct l3_demux *)ctx)->reasm;
	for (unsigned l = 0; l < REASM_LRUS; l++)
		while (r->queues && r->lru_head[l])
			reasm_expire(ctx, r->lru_head[l]);
}

/* ---- fragments: inet_frag_queue_insert ------------------------------------ */

/* The kernel keeps runs of fragments that arrived in order (each run one
 * rbtree node); a fragment at the end of the last fragment extends its
 * run, any other starts its own. Overlap is checked against the last
 * fragment (tail) and against runs: a fragment wholly inside a run is a
 * duplicate, any other overlap is an overlap. */
static int reasm_insert(struct l3_reasm *r, struct l3_reasm_queue *q,
			uint32_t fi)
{
	struct l3_reasm_frag *f = rf(r, fi);
	const uint32_t offset = f->offset, end = f->end;

	f->run = fi;
	f->run_end = end;
	f->next = 0;
	if (q->tail == 0) {
		q->first = q->tail = fi;
		return REASM_INSERT_OK;
	}
	struct l3_reasm_frag *last = rf(r, q->tail);
	if (last->end < end) {
		/* the common case: to the end */
		if (offset < last->end)
			return REASM_INSERT_OVERLAP;
		if (offset == last->end) { /* fragrun_append_to_last */
			f->run = last->run;
			rf(r, f->run)->run_end = end;
		}
		last->next = fi;
		q->tail = fi;
		return REASM_INSERT_OK;
	}
	/* the rbtree search, over the runs in offset order */
	uint32_t prev = 0, i;
	for (i = q->first; i; prev = i, i = rf(r, i)->next) {
		const struct l3_reasm_frag *c = rf(r, i);
		if (c->run != i)
			continue; /* not a run head */
		if (end <= c->offset)
			break;
		if (offset >= c->run_end)
			continue;
		if (offset >= c->offset && end <= c->run_end)
			return REASM_INSERT_DUP;
		return REASM_INSERT_OVERLAP;
	}
	f->next = i;
	if (prev)
		rf(r, prev)->next = fi;
	else
		q->first = fi;
	return REASM_INSERT_OK;
}


static uint32_t reasm_truesize(const struct rte_mbuf *m)
{
	uint32_t size = 0;
	for (; m; m = m->next)
		size += (uint32_t)sizeof(struct rte_mbuf) + m->buf_len;
	return size;
}

/* skb_morph: a and b exchange their packets (first-segment bytes, the
 * rest of the chain, the offload fields); each mbuf keeps its dynamic
 * fields (the engine's bookkeeping, the metadata pointer) and its port
 * (head->dev = dev: the datagram arrived where its last fragment did).
 * The caller rewrites the metadata. -ENOSPC when a buffer cannot hold
 * the other's first segment at its data offset. */
static int reasm_morph(struct rte_mbuf *a, struct rte_mbuf *b)
{
	const uint16_t la = a->data_len, lb = b->data_len;
	if (a->data_off + lb > a->buf_len || b->data_off + la > b->buf_len)
		return -ENOSPC;
	uint8_t *pa = rte_pktmbuf_mtod(a, uint8_t *);
	uint8_t *pb = rte_pktmbuf_mtod(b, uint8_t *);
	const uint16_t n = RTE_MAX(la, lb);
	uint8_t tmp[256];
	for (uint16_t i = 0; i < n; i += sizeof(tmp)) {
		const size_t k = RTE_MIN((size_t)(n - i), sizeof(tmp));
		memcpy(tmp, pa + i, k);
		memcpy(pa + i, pb + i, k);
		memcpy(pb + i, tmp, k);
	}
#define REASM_SWAP(x)                                                         \
	do {                                                                  \
		__typeof__(a->x) t_ = a->x;                                   \
		a->x = b->x;                                                  \
		b->x = t_;                                                    \
	} while (0)
	REASM_SWAP(data_len);
	REASM_SWAP(pkt_len);
	REASM_SWAP(nb_segs);
	REASM_SWAP(next);
	REASM_SWAP(ol_flags);
	REASM_SWAP(packet_type);
	REASM_SWAP(hash.rss);
	REASM_SWAP(vlan_tci);
	REASM_SWAP(vlan_tci_outer);
#undef REASM_SWAP
	return 0;
}

/* pskb_may_pull for the L4 handlers, which read their header from the
 * first segment: bytes of the following segments move into its tailroom
 * until it holds len bytes (or the packet, or the room, ends). Emptied
 * segments stay in the chain (each is a fragment's mbuf). */
void reasm_pull(struct rte_mbuf *m, uint32_t len)
{
	struct rte_mbuf *seg = m->next;
	while (m->data_len < len && seg != NULL) {
		const uint16_t k = (uint16_t)RTE_MIN(
			RTE_MIN(len - m->data_len, (uint32_t)seg->data_len),
			(uint32_t)rte_pktmbuf_tailroom(m));
		if (k == 0 && seg->data_len != 0)
			return; /* no room left */
		memcpy(rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len),
		       rte_pktmbuf_mtod(seg, uint8_t *), k);
		m->data_len += k;
		seg->data_off += k;
		seg->data_len -= k;
		if (seg->data_len == 0)
			seg = seg->next;
	}
}

int reasm_glue(struct l3_reasm *r, uint32_t qi, uint32_t fi,
	       struct rte_mbuf *m)
{
	struct l3_reasm_queue *q = rq(r, qi);
	struct l3_reasm_frag *head = rf(r, q->first);
	uint32_t segs = 0;
	for (uint32_t i = q->first; i; i = rf(r, i)->next)
		segs += rf(r, i)->m->nb_segs;
	if (segs > RTE_MBUF_MAX_NB_SEGS)
		return -E2BIG;
	if (head->m != m) {
		int rc = reasm_morph(m, head->m);
		if (rc)
			return rc;
		/* the records follow the bytes */
		rf(r, fi)->m = head->m;
		head->m = m;
	}
	for (uint32_t i = head->next; i; i = rf(r, i)->next) {
		struct l3_reasm_frag *f = rf(r, i);
		rte_pktmbuf_adj(f->m, f->hdr_len);
		rte_pktmbuf_chain(m, f->m);
	}
	r->frags_joined += q->n_frags - 1;
	reasm_queue_free(r, qi, REASM_JOINED);
	return 0;
}

/* The record of a new fragment, or 0 when none is left. */
static uint32_t reasm_frag_new(struct l3_reasm *r, struct rte_mbuf *m,
			       const struct lrx_meta *meta, uint32_t offset,
			       uint32_t end, uint32_t hdr_len)
{
	const uint32_t fi = r->free_frag;
	if (fi == 0)
		return 0;
	struct l3_reasm_frag *f = rf(r, fi);
	r->free_frag = f->next;
	*f = (struct l3_reasm_frag){
		.m = m,
		.offset = offset,
		.end = end,
		.hdr_len = (uint16_t)hdr_len,
		.pkt_type = meta->pkt_type,
		.noff = meta->network_offset,
		.mac_len = meta->mac_len,
		.vlan_vid = meta->vlan_vid,
		.truesize = reasm_truesize(m),
	};
	return fi;
}

/* The fragment is in the queue: account it (the part of ip_frag_queue
 * after inet_frag_queue_insert). */
static inline void reasm_frag_added(struct l3_reasm *r,
				    struct l3_reasm_queue *q, uint32_t fi)
{
	const struct l3_reasm_frag *f = rf(r, fi);
	q->meat += f->end - f->offset;
	q->truesize += f->truesize;
	q->n_frags++;
	reasm_mem_add(r, q, f->truesize);
	r->frags_now++;
	if (f->offset == 0)
		q->flags |= REASM_FIRST_IN;
}

/* inet_frag_queue_insert with its accounting: m's fragment [offset, end)
 * into q. CONTINUE with *fi its record when it is queued; a drop when it
 * is not (no record left: IpReasmFails, NOMEM; inside a run of what is
 * held: DUP_FRAG; overlapping what is held: FRAG_OVERLAP, for the caller
 * to discard the whole queue, RFC 5722). */
lrx_next_t reasm_queue_frag(struct l3_reasm *r, struct l3_reasm_queue *q,
			    struct l3_reasm_mib *mib, struct rte_mbuf *m,
			    const struct lrx_meta *meta, uint32_t offset,
			    uint32_t end, uint32_t hdr_len, uint32_t *fi)
{
	*fi = reasm_frag_new(r, m, meta, offset, end, hdr_len);
	if (*fi == 0) {
		mib->fails++;
		return lrx_next_drop(LRX_DROP_NOMEM);
	}
	switch (reasm_insert(r, q, *fi)) {
	case REASM_INSERT_DUP:
		reasm_frag_put(r, *fi);
		return lrx_next_drop(LRX_DROP_DUP_FRAG);
	case REASM_INSERT_OVERLAP:
		reasm_frag_put(r, *fi);
		mib->overlaps++;
		return lrx_next_drop(LRX_DROP_FRAG_OVERLAP);
	default:
		break;
	}
	reasm_frag_added(r, q, *fi);
	return LRX_NEXT_CONTINUE_V;
}

/* ---- IPv4: ip_defrag ------------------------------------------------------ */

/* ip_frag_too_far: more than ipfrag_max_dist fragments from the source
 * since this queue's last one (a sign its datagram was lost) */
static inline bool reasm_too_far(struct l3_reasm *r, struct l3_reasm_queue *q)
{
	const uint32_t start = q->rid;
	const uint32_t end = ++rp(r, q->peer)->rid;
	q->rid = end;
	return q->tail != 0 && end - start > r->max_dist;
}

/* ip_frag_reinit: the queue starts again, its fragments freed and its
 * timer restarted */
static void reasm_reinit(struct l3_reasm *r, uint32_t qi)
{
	struct l3_reasm_queue *q = rq(r, qi);
	reasm_frags_free(r, q, LRX_DROP_FRAG_TOO_FAR);
	reasm_mem_add(r, q, -(int64_t)(q->truesize - sizeof(*q)));
	q->truesize = sizeof(*q);
	q->flags = 0;
	q->len = q->meat = 0;
	q->ecn = 0;
	q->expires = reasm_now(r) + r->timeout[REASM_LRU_FRAG];
	/* the timer moved: keep the list in expiry order */
	reasm_lru_unlink(r, qi);
	reasm_lru_append(r, qi);
}

/* ip_frag_queue / ip6_frag_queue: the datagram's length from a fragment
 * that ends at end (last: no more fragments). False: corrupted, the queue
 * goes. */
bool reasm_end_ok(struct l3_reasm_queue *q, uint32_t end, bool last)
{
	if (last) {
		/* bits beyond the end, or a different end */
		if (end < q->len || ((q->flags & REASM_LAST_IN) && end != q->len))
			return false;
		q->flags |= REASM_LAST_IN;
		q->len = end;
	} else if (end > q->len) {
		if (q->flags & REASM_LAST_IN)
			return false;
		q->len = end;
	}
	return true;
}

/* ip_frag_reasm: fi (m) completed queue qi; m becomes the datagram.
 * CONSUMED when gluing fails (the queue goes, m with it). */
static lrx_next_t reasm_finish_ipv4(struct l3_reasm *r, uint32_t qi, uint32_t fi,
				    struct rte_mbuf *m, struct lrx_meta *meta)
{
	struct l3_reasm_queue *q = rq(r, qi);
	struct l3_reasm_mib *mib = &r->mib[0];
	const struct l3_reasm_frag *head = rf(r, q->first);
	const uint16_t hnoff = head->noff, hmac_len = head->mac_len;
	const uint32_t hihl = head->hdr_len - hnoff;
	const uint32_t len = hihl + q->len;
	const int ecn = reasm_ecn(q->ecn);
	const uint16_t df = q->max_df_size == q->max_size
				    ? RTE_IPV4_HDR_DF_FLAG : 0;
	if (len > REASM_MAXLEN || ecn < 0 || reasm_glue(r, qi, fi, m) != 0) {
		reasm_queue_free(r, qi, LRX_DROP_FRAG_INVALID);
		mib->fails++;
		return LRX_NEXT_CONSUMED_V;
	}
	/* m holds the first fragment's bytes now */
	meta->network_offset = hnoff;
	meta->mac_len = hmac_len;
	struct rte_ipv4_hdr *iph = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, hnoff);
	iph->total_length = rte_cpu_to_be_16((uint16_t)len);
	iph->type_of_service |= (uint8_t)ecn;
	iph->fragment_offset = rte_cpu_to_be_16(df);
	iph->hdr_checksum = 0;
	iph->hdr_checksum = rte_ipv4_cksum(iph);
	meta->len = len;
	meta->transport_offset = (uint16_t)(hnoff + hihl);
	meta->l4_proto = iph->next_proto_id;
	/* a NIC checksum hint for a fragment says nothing of the datagram */
	meta->ip_summed = LRX_CHECKSUM_NONE;
	reasm_pull(m, meta->transport_offset + REASM_PULL_L4);
	mib->oks++;
	return LRX_NEXT_CONTINUE_V;
}

lrx_next_t l3_reasm_ipv4(struct l3_reasm *r, struct rte_mbuf *m,
			 struct lrx_meta *meta)
{
	struct l3_reasm_mib *mib = &r->mib[0];
	const uint32_t noff = meta->network_offset;
	struct rte_ipv4_hdr *iph =
		rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, noff);
	const uint32_t ihl = (iph->version_ihl & RTE_IPV4_HDR_IHL_MASK) * 4u;

	mib->reqds++;
	struct l3_reasm_key key;
	memset(&key, 0, sizeof(key));
	memcpy(key.saddr, &iph->src_addr, 4);
	memcpy(key.daddr, &iph->dst_addr, 4);
	key.id = iph->packet_id;
	key.family = 4;
	key.proto_ecn = iph->next_proto_id;
	const uint32_t qi = reasm_find(r, &key);
	if (qi == 0) {
		mib->fails++;
		return lrx_next_drop(LRX_DROP_NOMEM);
	}
	struct l3_reasm_queue *q = rq(r, qi);

	/* ip_frag_queue */
	if (q->peer && reasm_too_far(r, q)) {
		mib->fails++;
		reasm_reinit(r, qi);
	}
	const uint16_t frag_off = rte_be_to_cpu_16(iph->fragment_offset);
	const uint32_t offset = (uint32_t)(frag_off & RTE_IPV4_HDR_OFFSET_MASK)
				<< 3;
	uint32_t end = offset + meta->len - ihl;
	enum lrx_drop_reason reason = LRX_DROP_FRAG_INVALID;
	const bool last = !(frag_off & RTE_IPV4_HDR_MF_FLAG);
	if (!last)
		end &= ~7u; /* the kernel trims, not drops */
	if (!reasm_end_ok(q, end, last) || end == offset)
		goto discard_qp;
	if (m->pkt_len > noff + ihl + (end - offset))
		l3_trim_to(m, noff + ihl + (end - offset));

	uint32_t fi;
	const lrx_next_t queued = reasm_queue_frag(r, q, mib, m, meta, offset, end,
						   noff + ihl, &fi);
	if (queued == lrx_next_drop(LRX_DROP_FRAG_OVERLAP)) {
		reason = LRX_DROP_FRAG_OVERLAP;
		goto discard_qp;
	}
	if (queued != LRX_NEXT_CONTINUE_V)
		return queued;
	q->ecn |= (uint8_t)(1u << (iph->type_of_service & 3));
	const uint32_t fragsize = end - offset + ihl;
	q->max_size = (uint16_t)RTE_MAX((uint32_t)q->max_size, fragsize);
	if ((frag_off & RTE_IPV4_HDR_DF_FLAG) && fragsize > q->max_df_size)
		q->max_df_size = (uint16_t)fragsize;
	if (!reasm_complete(q))
		return LRX_NEXT_CONSUMED_V;

	/* ip_frag_reasm; any failure kills the queue, m with it */
	return reasm_finish_ipv4(r, qi, fi, m, meta);

discard_qp:
	reasm_queue_free(r, qi, reason);
	mib->fails++;
	return lrx_next_drop(reason);
}

/* ---- the module: keys ipfrag_*, the counters IpReasm* / Ip6Reasm* ------- */

static uint32_t l3_reasm_held(const void *ctx)
{
	return (uint32_t)((const struct l3_demux *)ctx)->reasm.frags_now;
}

static const char *const l3_reasm_clocks[] = {"tsc", "polls", NULL};

static const struct lrx_value_key l3_reasm_keys[] = {
	L3_KEY(UINT, reasm.time_s, "ipfrag_time", "30", 0, 86400,
	       "seconds a reassembly queue lives after its first fragment "
	       "(net.ipv4.ipfrag_time); polls at ipfrag_clock=polls"),
	L3_KEY(UINT, reasm.high_thresh, "ipfrag_high_thresh", "4194304", 0, 1ul << 31,
	       "bytes of fragments held above which new fragments fail, for "
	       "IPv4 and IPv6 apart (net.ipv4.ipfrag_high_thresh, "
	       "net.ipv6.ip6frag_high_thresh; 0: every fragment fails)"),
	L3_KEY(UINT, reasm.max_dist, "ipfrag_max_dist", "64", 0, UINT32_MAX,
	       "IPv4: fragments from one source between two of a datagram above "
	       "which its queue starts again (net.ipv4.ipfrag_max_dist; 0: off)"),
	L3_KEY(CHOICE, reasm.clock, "ipfrag_clock", "tsc", l3_reasm_clocks,
	       "what ipfrag_time and nf_conntrack_frag6_timeout count (polls: "
	       "ends of poll, the same for every engine)"),
	L3_KEY(UINT, reasm.nf6_time_s, "nf_conntrack_frag6_timeout", "60", 0, 86400,
	       "seconds a queue of nf_defrag_ipv6 (IPv6 conntrack on) lives after "
	       "its first fragment (net.netfilter.nf_conntrack_frag6_timeout); "
	       "polls at ipfrag_clock=polls"),
	L3_KEY(UINT, reasm.nf6_high_thresh, "nf_conntrack_frag6_high_thresh", "4194304",
	       0, 1ul << 31,
	       "bytes of fragments nf_defrag_ipv6 holds above which new fragments "
	       "are dropped (net.netfilter.nf_conntrack_frag6_high_thresh; 0: every "
	       "fragment is dropped)"),
	{.name = NULL},
};

/* one family's reassembly MIB, as nstat names it with prefix P (IPv4's
 * overlaps are an IpExt counter) */
#define L3_REASM_COUNTERS(P, ovl_name, fam)                                   \
	L3_COUNTER(P "ReasmReqds", reasm.mib[fam].reqds),                     \
	L3_COUNTER(P "ReasmOKs", reasm.mib[fam].oks),                         \
	L3_COUNTER(P "ReasmFails", reasm.mib[fam].fails),                     \
	L3_COUNTER(P "ReasmTimeout", reasm.mib[fam].timeout),                 \
	L3_COUNTER(ovl_name, reasm.mib[fam].overlaps)

static const struct lrx_stage_counter l3_reasm_counters[] = {
	L3_REASM_COUNTERS("Ip", "IpExtReasmOverlaps", 0),
	L3_REASM_COUNTERS("Ip6", "Ip6ReasmOverlaps", 1),
	/* nf_ct_frag6_gather's (listrx's own: no SNMP counter) */
	L3_COUNTER("nf6_defrag_reqds", reasm.nf6_mib.reqds),
	L3_COUNTER("nf6_defrag_oks", reasm.nf6_mib.oks),
	L3_COUNTER("nf6_defrag_fails", reasm.nf6_mib.fails),
	L3_COUNTER("nf6_defrag_overlaps", reasm.nf6_mib.overlaps),
	L3_COUNTER("reasm_frags_dropped", reasm.frags_dropped),
	L3_COUNTER("reasm_queues", reasm.queues_now, .role = LRX_COUNTER_GAUGE),
	L3_COUNTER("reasm_mem", reasm.mem, .role = LRX_COUNTER_GAUGE),
	/* fragments chained into a datagram: they leave inside it */
	L3_COUNTER("merged", reasm.frags_joined, .role = LRX_COUNTER_MERGED),
	{.name = NULL},
};

L3_MODULE(reasm, .fini = l3_reasm_fini, .flush = l3_reasm_tick,
	  .end_run = l3_reasm_expire_all, .drop = l3_reasm_drop, .send = l3_reasm_send,
	  .held = l3_reasm_held);
