/* SPDX-License-Identifier: BSD-3-Clause
 * IPv4 connection tracking (conntrack.h): the table (nf_conntrack_core.c:
 * ____nf_conntrack_find, init_conntrack, early_drop, nf_confirm), and the
 * trackers of UDP (nf_conntrack_udp_packet), ICMP (icmp_packet,
 * icmp_error, nf_conntrack_inet_error) and the generic one; TCP's is
 * conntrack_tcp.c. Default sysctl values.
 */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "conntrack_proto.h"

#define S LRX_CT_S
/* the trackers' default timeouts (udp_timeouts, nf_ct_icmp_timeout,
 * nf_ct_generic_timeout) */
#define LRX_UDP_UNREPLIED (30 * S)
#define LRX_UDP_REPLIED (120 * S)
#define LRX_UDP_STREAM_AFTER (2 * S)
#define LRX_ICMP_TIMEOUT (30 * S)
#define LRX_GENERIC_TIMEOUT (600 * S)
#define LRX_CT_EVICTION_RANGE 8 /* NF_CT_EVICTION_RANGE */

/* ---- tuples ----------------------------------------------------------------- */

/* nf_ct_get_tuple of the IPv4 header at iph with avail bytes after its
 * transport header at thoff (tcp/udp: nf_ct_get_tuple_ports, icmp:
 * icmp_pkt_to_tuple, others: generic, no ports) */
static bool lrx_ct_pkt_tuple(const uint8_t *iph, uint32_t thoff, uint32_t avail,
			     struct lrx_ct_tuple *t)
{
	memset(t, 0, sizeof(*t));
	memcpy(&t->src, iph + 12, 4);
	memcpy(&t->dst, iph + 16, 4);
	t->proto = iph[9];
	const uint8_t *l4 = iph + thoff;
	switch (t->proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
		if (avail < 4)
			return false;
		t->sport = lrx_ct_rd16(l4);
		t->dport = lrx_ct_rd16(l4 + 2);
		return true;
	case IPPROTO_ICMP:
		if (avail < 8)
			return false;
		t->sport = lrx_ct_rd16(l4 + 4);                      /* id */
		t->dport = (uint16_t)(l4[0] << 8 | l4[1]);    /* type, code */
		return true;
	default:
		return true;
	}
}

/* nf_ct_invert_tuple (icmp_invert_tuple's invmap for ICMP) */
static bool lrx_ct_invert(const struct lrx_ct_tuple *o, struct lrx_ct_tuple *r)
{
	*r = *o;
	r->src = o->dst;
	r->dst = o->src;
	if (o->proto != IPPROTO_ICMP) {
		r->sport = o->dport;
		r->dport = o->sport;
		return true;
	}
	static const uint8_t invmap[19] = {
		[0] = 8 + 1, [8] = 0 + 1, [13] = 14 + 1, [14] = 13 + 1,
		[15] = 16 + 1, [16] = 15 + 1, [17] = 18 + 1, [18] = 17 + 1,
	};
	const unsigned type = o->dport >> 8;
	if (type >= RTE_DIM(invmap) || invmap[type] == 0)
		return false;
	r->dport = (uint16_t)((invmap[type] - 1u) << 8 | (o->dport & 0xff));
	return true;
}

static inline bool lrx_ct_tuple_eq(const struct lrx_ct_tuple *a,
				   const struct lrx_ct_tuple *b)
{
	uint64_t a0, a1, b0, b1;
	memcpy(&a0, a, 8);
	memcpy(&a1, (const uint8_t *)a + 8, 8);
	memcpy(&b0, b, 8);
	memcpy(&b1, (const uint8_t *)b + 8, 8);
	return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

static inline uint32_t lrx_ct_hash(const struct lrx_ct *ct, const struct lrx_ct_tuple *t)
{
	return rte_hash_crc(t, sizeof(*t), 0x9e3779b9) & ct->bucket_mask;
}

/* ---- the table ---------------------------------------------------------------- */

int lrx_ct_init(struct lrx_ct *ct, uint32_t max, int socket)
{
	uint32_t buckets = 1;
	memset(ct, 0, sizeof(*ct));
	if (max == 0 || max > (1u << 26))
		return -EINVAL;
	while (buckets < max)
		buckets <<= 1;
	ct->buckets = rte_malloc_socket("lrx_ct_buckets", buckets * sizeof(uint32_t),
					RTE_CACHE_LINE_SIZE, socket);
	ct->entries = rte_malloc_socket("lrx_ct_entries",
					(size_t)max * sizeof(*ct->entries),
					RTE_CACHE_LINE_SIZE, socket);
	if (ct->buckets == NULL || ct->entries == NULL) {
		lrx_ct_fini(ct);
		return -ENOMEM;
	}
	ct->max = max;
	ct->bucket_mask = buckets - 1;
	memset(ct->buckets, 0xff, buckets * sizeof(uint32_t));
	for (uint32_t i = 0; i < max; i++)
		ct->entries[i].next[0] = i + 1 < max ? i + 1 : LRX_CT_NIL;
	ct->free_head = 0;
	ct->pending = LRX_CT_NIL;
	ct->tcp_loose = true;
	return 0;
}

void lrx_ct_fini(struct lrx_ct *ct)
{
	rte_free(ct->buckets);
	rte_free(ct->entries);
	ct->buckets = NULL;
	ct->entries = NULL;
}

static void lrx_ct_free_entry(struct lrx_ct *ct, uint32_t i)
{
	ct->entries[i].status = 0;
	ct->entries[i].next[0] = ct->free_head;
	ct->free_head = i;
}

static void lrx_ct_unlink_node(struct lrx_ct *ct, uint32_t node)
{
	struct lrx_ct_entry *e = &ct->entries[node >> 1];
	uint32_t *at = &ct->buckets[lrx_ct_hash(ct, &e->tuple[node & 1])];
	while (*at != node && *at != LRX_CT_NIL)
		at = &ct->entries[*at >> 1].next[*at & 1];
	if (*at == node)
		*at = e->next[node & 1];
}

/* nf_ct_delete: out of the table (both directions) and freed */
static void lrx_ct_kill(struct lrx_ct *ct, uint32_t i)
{
	lrx_ct_unlink_node(ct, i << 1);
	lrx_ct_unlink_node(ct, i << 1 | 1);
	lrx_ct_free_entry(ct, i);
	ct->st.entries--;
}

static inline bool lrx_ct_expired(const struct lrx_ct_entry *e, uint64_t now)
{
	return e->expires <= now;
}

/* ____nf_conntrack_find: an expired entry met on the way is collected
 * (nf_ct_gc_expired) */
uint32_t lrx_ct_find(struct lrx_ct *ct, const struct lrx_ct_tuple *t,
		     uint64_t now, unsigned *dir)
{
	const uint32_t b = lrx_ct_hash(ct, t);
	uint32_t node = ct->buckets[b];
	while (node != LRX_CT_NIL) {
		const struct lrx_ct_entry *e = &ct->entries[node >> 1];
		if (lrx_ct_expired(e, now)) {
			/* its other node may be the next one: start again */
			lrx_ct_kill(ct, node >> 1);
			node = ct->buckets[b];
			continue;
		}
		if (lrx_ct_tuple_eq(&e->tuple[node & 1], t)) {
			*dir = node & 1;
			return node >> 1;
		}
		node = e->next[node & 1];
	}
	return LRX_CT_NIL;
}

/* early_drop_list: every unassured entry of the bucket's chain */
static unsigned lrx_ct_early_drop_list(struct lrx_ct *ct, uint32_t bucket, uint64_t now)
{
	unsigned drops = 0;
	uint32_t node = ct->buckets[bucket];
	while (node != LRX_CT_NIL) {
		const struct lrx_ct_entry *e = &ct->entries[node >> 1];
		const uint32_t next = e->next[node & 1];
		const bool expired = lrx_ct_expired(e, now);
		/* nf_ct_is_confirmed: only table entries are in a chain */
		if (expired || !(e->status & LRX_CT_ASSURED)) {
			/* the other direction's node may be next: restart */
			lrx_ct_kill(ct, node >> 1);
			drops += !expired;
			node = ct->buckets[bucket];
			continue;
		}
		node = next;
	}
	return drops;
}

/* early_drop: the first of NF_CT_EVICTION_RANGE buckets from the new
 * tuple's that has unassured entries loses them all */
static bool lrx_ct_early_drop(struct lrx_ct *ct, uint32_t hash, uint64_t now)
{
	for (unsigned i = 0; i < LRX_CT_EVICTION_RANGE; i++) {
		const unsigned drops =
			lrx_ct_early_drop_list(ct, (hash + i) & ct->bucket_mask, now);
		if (drops) {
			ct->st.early_drop += drops;
			return true;
		}
	}
	return false;
}

/* init_conntrack: a new, unconfirmed entry. LRX_CT_NIL when the reply
 * tuple cannot be made (*full false) or the table is full and nothing
 * could be evicted (*full true: __nf_conntrack_alloc's -ENOMEM) */
static uint32_t lrx_ct_alloc(struct lrx_ct *ct, const struct lrx_ct_tuple *t,
			     uint64_t now, bool *full)
{
	struct lrx_ct_tuple reply;
	*full = false;
	if (!lrx_ct_invert(t, &reply))
		return LRX_CT_NIL;
	if (ct->free_head == LRX_CT_NIL &&
	    (!lrx_ct_early_drop(ct, lrx_ct_hash(ct, t), now) ||
	     ct->free_head == LRX_CT_NIL)) {
		*full = true;
		return LRX_CT_NIL;
	}
	const uint32_t i = ct->free_head;
	struct lrx_ct_entry *e = &ct->entries[i];
	ct->free_head = e->next[0];
	memset(e, 0, sizeof(*e));
	e->tuple[0] = *t;
	e->tuple[1] = reply;
	e->stream_ts = now + LRX_UDP_STREAM_AFTER;
	e->tcp.last_index = LRX_TCP_NONE_SET;
	return i;
}

void lrx_ct_confirm(struct lrx_ct *ct, uint64_t now)
{
	(void)now;
	const uint32_t i = ct->pending;
	if (i == LRX_CT_NIL)
		return;
	struct lrx_ct_entry *e = &ct->entries[i];
	ct->pending = LRX_CT_NIL;
	for (unsigned d = 0; d < 2; d++) {
		uint32_t *head = &ct->buckets[lrx_ct_hash(ct, &e->tuple[d])];
		e->next[d] = *head;
		*head = i << 1 | d;
	}
	e->status |= LRX_CT_CONFIRMED;
	ct->st.insert++;
	ct->st.entries++;
}

void lrx_ct_release(struct lrx_ct *ct)
{
	if (ct->pending != LRX_CT_NIL) {
		lrx_ct_free_entry(ct, ct->pending);
		ct->pending = LRX_CT_NIL;
	}
}

void lrx_ct_gc(struct lrx_ct *ct, uint64_t now, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		const uint32_t b = ct->gc_bucket;
		ct->gc_bucket = (b + 1) & ct->bucket_mask;
		uint32_t node = ct->buckets[b];
		while (node != LRX_CT_NIL) {
			const struct lrx_ct_entry *e = &ct->entries[node >> 1];
			if (lrx_ct_expired(e, now)) {
				lrx_ct_kill(ct, node >> 1);
				node = ct->buckets[b];
			} else {
				node = e->next[node & 1];
			}
		}
	}
}

/* ---- the trackers ------------------------------------------------------------- */

/* nf_conntrack_udp_packet (udp_error without the checksum) */
static enum lrx_ct_verdict lrx_ct_udp(struct lrx_ct_entry *e, const struct lrx_nf_pkt *p,
				      uint64_t now)
{
	const uint32_t udplen = p->len - p->thoff;
	if (udplen < 8 || p->thoff + 8 > p->seg_len)
		return LRX_CT_INVALID;
	const uint32_t ulen = lrx_ct_rd16(p->iph + p->thoff + 4);
	if (ulen > udplen || ulen < 8)
		return LRX_CT_INVALID;
	if (e->status & LRX_CT_SEEN_REPLY) {
		uint64_t extra = LRX_UDP_UNREPLIED;
		bool stream = false;
		/* still active after two seconds: a stream */
		if (now > e->stream_ts) {
			extra = LRX_UDP_REPLIED;
			stream = !(e->status & LRX_CT_ASSURED);
		}
		lrx_ct_refresh(e, now, extra);
		if (stream)
			e->status |= LRX_CT_ASSURED;
	} else {
		lrx_ct_refresh(e, now, LRX_UDP_UNREPLIED);
	}
	return LRX_CT_ACCEPT;
}

/* icmp_packet: only a query opens an entry */
static enum lrx_ct_verdict lrx_ct_icmp(struct lrx_ct_entry *e, uint64_t now)
{
	const unsigned type = e->tuple[0].dport >> 8;
	if (!(e->status & LRX_CT_CONFIRMED) && type != 8 && type != 13 &&
	    type != 15 && type != 17)
		return LRX_CT_INVALID;
	lrx_ct_refresh(e, now, LRX_ICMP_TIMEOUT);
	return LRX_CT_ACCEPT;
}

static enum lrx_ct_verdict lrx_ct_packet(struct lrx_ct *ct, uint32_t i,
					 const struct lrx_nf_pkt *p, unsigned dir,
					 bool is_new, uint64_t now)
{
	struct lrx_ct_entry *e = &ct->entries[i];
	switch (e->tuple[0].proto) {
	case IPPROTO_TCP:
		return lrx_ct_tcp_packet(ct, e, p, dir, is_new, now);
	case IPPROTO_UDP:
		return lrx_ct_udp(e, p, now);
	case IPPROTO_ICMP:
		return lrx_ct_icmp(e, now);
	default:
		lrx_ct_refresh(e, now, LRX_GENERIC_TIMEOUT);
		return LRX_CT_ACCEPT;
	}
}

/* icmp_error → nf_conntrack_inet_error: 1 not an error (track it as a
 * query), 0 judged (RELATED, or INVALID counted as error) */
static int lrx_ct_icmp_error(struct lrx_ct *ct, struct lrx_nf_pkt *p, uint64_t now)
{
	const uint32_t avail = p->seg_len - p->thoff;
	const uint8_t *icmph = p->iph + p->thoff;
	if (p->len - p->thoff < 8 || avail < 8 || icmph[0] > 18 /* NR_ICMP_TYPES */)
		goto error;
	if (icmph[0] != 3 && icmph[0] != 4 && icmph[0] != 5 && icmph[0] != 11 &&
	    icmph[0] != 12)
		return 1;
	/* the quoted packet: ipv4_get_l4proto (no later fragment), its tuple */
	const uint8_t *in = icmph + 8;
	const uint32_t in_avail = avail - 8;
	struct lrx_ct_tuple orig, inner;
	if (in_avail < 20 || (lrx_ct_rd16(in + 6) & 0x1fff) != 0)
		goto error;
	const uint32_t in_thoff = (uint32_t)(in[0] & 0xf) * 4;
	if (in_thoff > in_avail ||
	    !lrx_ct_pkt_tuple(in, in_thoff, in_avail - in_thoff, &orig) ||
	    !lrx_ct_invert(&orig, &inner))
		goto error;
	unsigned dir;
	const uint32_t i = lrx_ct_find(ct, &inner, now, &dir);
	uint32_t outer_daddr;
	memcpy(&outer_daddr, p->iph + 16, 4);
	/* the error must come to the flow's end of that direction */
	if (i == LRX_CT_NIL || ct->entries[i].tuple[dir].dst != outer_daddr)
		goto error;
	p->ctstate = LRX_NF_CT_RELATED;
	return 0;
error:
	ct->st.error++;
	return 0;
}

/* nf_conntrack_in */
static unsigned lrx_ct_in_core(struct lrx_ct *ct, struct lrx_nf_pkt *p, uint64_t now)
{
	lrx_ct_release(ct);
	if (p->ctstate == LRX_NF_CT_UNTRACKED)
		return LRX_NF_ACCEPT;
	p->ctstate = LRX_NF_CT_INVALID;
	if (unlikely(now != ct->gc_ms)) {
		ct->gc_ms = now;
		lrx_ct_gc(ct, now, 16);
	}
	if (p->iph[9] == IPPROTO_ICMP && lrx_ct_icmp_error(ct, p, now) == 0)
		return LRX_NF_ACCEPT;
	struct lrx_ct_tuple t;
	if (!lrx_ct_pkt_tuple(p->iph, p->thoff,
			      p->seg_len > p->thoff ? p->seg_len - p->thoff : 0, &t)) {
		ct->st.invalid++;
		return LRX_NF_ACCEPT;
	}
	for (;;) {
		unsigned dir = 0;
		bool is_new = false, full;
		uint32_t i = lrx_ct_find(ct, &t, now, &dir);
		if (i == LRX_CT_NIL) {
			i = lrx_ct_alloc(ct, &t, now, &full);
			if (i == LRX_CT_NIL) {
				if (full) {
					ct->st.drop++;
					return LRX_NF_DROP;
				}
				ct->st.invalid++;
				return LRX_NF_ACCEPT;
			}
			is_new = true;
		} else {
			ct->st.found++;
		}
		const uint8_t status = ct->entries[i].status;
		const uint8_t state = dir || (status & LRX_CT_SEEN_REPLY)
					      ? LRX_NF_CT_ESTABLISHED : LRX_NF_CT_NEW;
		switch (lrx_ct_packet(ct, i, p, dir, is_new, now)) {
		case LRX_CT_REPEAT:
			lrx_ct_kill(ct, i);
			continue;
		case LRX_CT_INVALID:
			if (is_new)
				lrx_ct_free_entry(ct, i);
			ct->st.invalid++;
			return LRX_NF_ACCEPT;
		case LRX_CT_KILL:
			if (is_new)
				lrx_ct_free_entry(ct, i);
			else
				lrx_ct_kill(ct, i);
			break;
		case LRX_CT_ACCEPT:
			if (dir == 1)
				ct->entries[i].status |= LRX_CT_SEEN_REPLY;
			if (is_new)
				ct->pending = i;
			break;
		}
		p->ctstate = state;
		return LRX_NF_ACCEPT;
	}
}

unsigned lrx_ct_in(struct lrx_ct *ct, struct lrx_nf_pkt *p, uint64_t now)
{
	return lrx_ct_in_core(ct, p, now);
}

void lrx_ct_local_out(struct lrx_ct *ct, struct lrx_nf_pkt *p, uint64_t now)
{
	p->ctstate = 0;
	if (lrx_ct_in_core(ct, p, now) == LRX_NF_ACCEPT)
		lrx_ct_confirm(ct, now);
}
