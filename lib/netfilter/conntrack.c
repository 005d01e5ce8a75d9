/* SPDX-License-Identifier: BSD-3-Clause
 * IPv4 and IPv6 connection tracking (conntrack.h): the table
 * (nf_conntrack_core.c: ____nf_conntrack_find, init_conntrack, early_drop,
 * nf_confirm), and the trackers of UDP (nf_conntrack_udp_packet), ICMP
 * (icmp_packet, icmp_error, nf_conntrack_inet_error), ICMPv6
 * (nf_conntrack_proto_icmpv6.c) and the generic one; TCP's is
 * conntrack_tcp.c. Default sysctl values.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <string.h>

#include <rte_hash_crc.h>
#include <rte_ip.h>
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

/* the L4 part of nf_ct_get_tuple at l4 with avail bytes (tcp/udp:
 * nf_ct_get_tuple_ports, icmp: icmp_pkt_to_tuple, icmpv6:
 * icmpv6_pkt_to_tuple, others: generic, no ports) */
static bool lrx_ct_l4_tuple(const uint8_t *l4, uint32_t avail, struct lrx_ct_tuple *t)
{
	switch (t->proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
		if (avail < 4)
			return false;
		t->sport = lrx_ct_rd16(l4);
		t->dport = lrx_ct_rd16(l4 + 2);
		return true;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		if (avail < 8)
			return false;
		t->sport = lrx_ct_rd16(l4 + 4);                      /* id */
		t->dport = (uint16_t)(l4[0] << 8 | l4[1]);    /* type, code */
		return true;
	default:
		return true;
	}
}

/* nf_ct_get_tuple of the IPv4 header at iph with avail bytes after its
 * transport header at thoff */
static bool lrx_ct_pkt_tuple(const uint8_t *iph, uint32_t thoff, uint32_t avail,
			     struct lrx_ct_tuple *t)
{
	memset(t, 0, sizeof(*t));
	memcpy(t->src, iph + 12, 4);
	memcpy(t->dst, iph + 16, 4);
	t->proto = iph[9];
	t->l3 = 4;
	return lrx_ct_l4_tuple(iph + thoff, avail, t);
}

/* ipv6_get_l4proto (ipv6_skip_exthdr) on the IPv6 header at iph with
 * avail bytes readable: the transport header's offset and *proto, or -1
 * (truncated, NEXTHDR_NONE, a fragment other than the first) */
static int lrx_ct6_l4proto(const uint8_t *iph, uint32_t avail, uint8_t *proto)
{
	if (avail < 40)
		return -1;
	uint8_t nh = iph[6];
	uint32_t off = 40;
	uint16_t frag_off = 0;
	for (;;) {
		if (nh != 0 && nh != 43 && nh != 44 && nh != 51 && nh != 59 && nh != 60)
			break; /* !ipv6_ext_hdr */
		if (nh == 59 || off + 2 > avail) /* NEXTHDR_NONE, truncated */
			return -1;
		uint32_t len;
		if (nh == 44) { /* NEXTHDR_FRAGMENT */
			if (off + 4 > avail)
				return -1;
			frag_off = lrx_ct_rd16(iph + off + 2);
			if (frag_off & ~7u)
				break;
			len = 8;
		} else if (nh == 51) { /* NEXTHDR_AUTH: ipv6_authlen */
			len = ((uint32_t)iph[off + 1] + 2) << 2;
		} else { /* ipv6_optlen */
			len = ((uint32_t)iph[off + 1] + 1) << 3;
		}
		nh = iph[off];
		off += len;
	}
	if (frag_off & ~7u)
		return -1;
	*proto = nh;
	return (int)off;
}

/* nf_ct_get_tuple of an IPv6 packet: its header at iph, avail bytes of
 * it readable; *thoff the transport header's offset */
static bool lrx_ct6_pkt_tuple(const uint8_t *iph, uint32_t avail, uint32_t *thoff,
			      struct lrx_ct_tuple *t)
{
	memset(t, 0, sizeof(*t));
	const int off = lrx_ct6_l4proto(iph, avail, &t->proto);
	if (off < 0)
		return false;
	memcpy(t->src, iph + 8, 16);
	memcpy(t->dst, iph + 24, 16);
	t->l3 = 6;
	*thoff = (uint32_t)off;
	/* a transport header past the readable bytes: no ports to read */
	return lrx_ct_l4_tuple(iph + off, avail > (uint32_t)off ? avail - (uint32_t)off : 0,
			       t);
}

/* icmp_invert_tuple's and icmpv6_invert_tuple's invmap: type + 1 of the
 * inverse, 0 none */
static uint8_t lrx_ct_icmp_inverse(uint8_t proto, unsigned type)
{
	static const uint8_t invmap[19] = {
		[0] = 8 + 1, [8] = 0 + 1, [13] = 14 + 1, [14] = 13 + 1,
		[15] = 16 + 1, [16] = 15 + 1, [17] = 18 + 1, [18] = 17 + 1,
	};
	static const uint8_t invmap6[13] = {
		[128 - 128] = 129 + 1, [129 - 128] = 128 + 1,
		[139 - 128] = 140 + 1, [140 - 128] = 139 + 1,
	};
	if (proto == IPPROTO_ICMP)
		return type < RTE_DIM(invmap) ? invmap[type] : 0;
	return type >= 128 && type - 128 < RTE_DIM(invmap6) ? invmap6[type - 128] : 0;
}

/* nf_ct_invert_tuple */
static bool lrx_ct_invert(const struct lrx_ct_tuple *o, struct lrx_ct_tuple *r)
{
	*r = *o;
	memcpy(r->src, o->dst, sizeof(r->src));
	memcpy(r->dst, o->src, sizeof(r->dst));
	if (o->proto != IPPROTO_ICMP && o->proto != IPPROTO_ICMPV6) {
		r->sport = o->dport;
		r->dport = o->sport;
		return true;
	}
	const unsigned inv = lrx_ct_icmp_inverse(o->proto, o->dport >> 8);
	if (inv == 0)
		return false;
	r->dport = (uint16_t)((inv - 1u) << 8 | (o->dport & 0xff));
	return true;
}

static inline bool lrx_ct_tuple_eq(const struct lrx_ct_tuple *a,
				   const struct lrx_ct_tuple *b)
{
	uint64_t x = 0;
	RTE_BUILD_BUG_ON(sizeof(*a) != 40);
	for (unsigned k = 0; k < sizeof(*a); k += 8) {
		uint64_t u, v;
		memcpy(&u, (const uint8_t *)a + k, 8);
		memcpy(&v, (const uint8_t *)b + k, 8);
		x |= u ^ v;
	}
	return x == 0;
}

/* an IPv4 tuple hashes its 4-byte addresses and the rest (the other 24
 * bytes are 0): 3 CRC steps, not the 5 of the whole 40 bytes */
static inline uint32_t lrx_ct_hash(const struct lrx_ct *ct, const struct lrx_ct_tuple *t)
{
	uint32_t h;
	if (likely(t->l3 == 4)) {
		uint32_t s, d;
		uint64_t rest;
		memcpy(&s, t->src, 4);
		memcpy(&d, t->dst, 4);
		memcpy(&rest, (const uint8_t *)t + offsetof(struct lrx_ct_tuple, sport), 8);
		h = rte_hash_crc_4byte(s, 0x9e3779b9);
		h = rte_hash_crc_4byte(d, h);
		h = rte_hash_crc_8byte(rest, h);
	} else {
		h = rte_hash_crc(t, sizeof(*t), 0x9e3779b9);
	}
	return h & ct->bucket_mask;
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

/* icmp_packet / nf_conntrack_icmpv6_packet: only a query opens an entry
 * (echo, timestamp, info, address mask; ICMPv6's echo and node
 * information query); a tracker of the other family's packet refuses it */
static enum lrx_ct_verdict lrx_ct_icmp(struct lrx_ct_entry *e, uint64_t now)
{
	const struct lrx_ct_tuple *t = &e->tuple[0];
	const unsigned type = t->dport >> 8;
	const bool v6 = t->proto == IPPROTO_ICMPV6;
	if (v6 != (t->l3 == 6))
		return LRX_CT_INVALID;
	if (!(e->status & LRX_CT_CONFIRMED) &&
	    (v6 ? type != 128 && type != 139
		: type != 8 && type != 13 && type != 15 && type != 17))
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
	case IPPROTO_ICMPV6:
		return lrx_ct_icmp(e, now);
	default:
		lrx_ct_refresh(e, now, LRX_GENERIC_TIMEOUT);
		return LRX_CT_ACCEPT;
	}
}

/* nf_conntrack_inet_error from the quoted packet's tuple orig on: its
 * inverse must find an entry whose end in that direction is the error's
 * destination (outer_daddr, 16 bytes as a tuple's): RELATED; else INVALID
 * counted error. Returns 0 (judged). */
static int lrx_ct_inet_error(struct lrx_ct *ct, struct lrx_nf_pkt *p,
			     const struct lrx_ct_tuple *orig, const uint8_t *outer_daddr,
			     uint64_t now)
{
	struct lrx_ct_tuple inner;
	unsigned dir;
	uint32_t i = LRX_CT_NIL;
	if (lrx_ct_invert(orig, &inner))
		i = lrx_ct_find(ct, &inner, now, &dir);
	if (i == LRX_CT_NIL ||
	    memcmp(ct->entries[i].tuple[dir].dst, outer_daddr, 16) != 0) {
		ct->st.error++;
		return 0;
	}
	p->ctstate = LRX_NF_CT_RELATED;
	return 0;
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
	struct lrx_ct_tuple orig;
	if (in_avail < 20 || (lrx_ct_rd16(in + 6) & 0x1fff) != 0)
		goto error;
	const uint32_t in_thoff = (uint32_t)(in[0] & 0xf) * 4;
	if (in_thoff > in_avail ||
	    !lrx_ct_pkt_tuple(in, in_thoff, in_avail - in_thoff, &orig))
		goto error;
	uint8_t outer_daddr[16] = {0};
	memcpy(outer_daddr, p->iph + 16, 4);
	return lrx_ct_inet_error(ct, p, &orig, outer_daddr, now);
error:
	ct->st.error++;
	return 0;
}

/* nf_ip6_checksum of the ICMPv6 message at thoff (the pseudo-header's
 * length is the message's). A packet longer than its first segment is not
 * tested (docs/netfilter.md). */
static bool lrx_ct6_csum_ok(const struct lrx_nf_pkt *p, uint32_t thoff)
{
	if (p->seg_len < p->len)
		return true;
	const uint32_t len = p->len - thoff;
	uint32_t sum = rte_raw_cksum(p->iph + 8, 32);
	sum += rte_raw_cksum(p->iph + thoff, len);
	sum += rte_cpu_to_be_16((uint16_t)(len >> 16)) +
	       rte_cpu_to_be_16((uint16_t)len) + rte_cpu_to_be_16(IPPROTO_ICMPV6);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* nf_conntrack_icmpv6_error with the ICMPv6 header at thoff (in: at
 * PREROUTING, where the checksum is tested): 1 not an error (track it as
 * a query), 0 judged (UNTRACKED for neighbour discovery and MLD,
 * noct_valid_new; RELATED; or INVALID counted error) */
static int lrx_ct6_icmp_error(struct lrx_ct *ct, struct lrx_nf_pkt *p, uint32_t thoff,
			      bool in, uint64_t now)
{
	const uint32_t avail = p->seg_len > thoff ? p->seg_len - thoff : 0;
	const uint8_t *icmph = p->iph + thoff;
	if (p->len < thoff + 8 || avail < 8) /* "short packet" */
		goto error;
	if (in && !lrx_ct6_csum_ok(p, thoff))
		goto error;
	const unsigned type = icmph[0];
	/* MLD query, report, done; router and neighbour solicitation and
	 * advertisement; MLDv2 report */
	if ((type >= 130 && type <= 136) || type == 143) {
		p->ctstate = LRX_NF_CT_UNTRACKED;
		return 0;
	}
	if (type >= 128)
		return 1;
	struct lrx_ct_tuple orig;
	uint32_t in_thoff;
	if (!lrx_ct6_pkt_tuple(icmph + 8, avail - 8, &in_thoff, &orig))
		goto error;
	return lrx_ct_inet_error(ct, p, &orig, p->iph + 24, now);
error:
	ct->st.error++;
	return 0;
}

/* resolve_normal_ct and the tracker (nf_conntrack_handle_packet) for the
 * packet's tuple t */
static __rte_always_inline unsigned lrx_ct_resolve(struct lrx_ct *ct, struct lrx_nf_pkt *p,
						   const struct lrx_ct_tuple *t, uint64_t now)
{
	for (;;) {
		unsigned dir = 0;
		bool is_new = false, full;
		uint32_t i = lrx_ct_find(ct, t, now, &dir);
		if (i == LRX_CT_NIL) {
			i = lrx_ct_alloc(ct, t, now, &full);
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

/* nf_conntrack_in on an IPv6 packet: the transport header where
 * ipv6_get_l4proto finds it (the trackers read a copy of p with that
 * thoff; the rules keep ipv6_find_hdr's) */
static unsigned lrx_ct6_in(struct lrx_ct *ct, struct lrx_nf_pkt *p, bool in,
			   uint64_t now)
{
	struct lrx_nf_pkt q = *p;
	struct lrx_ct_tuple t;
	uint8_t proto;
	const uint32_t avail = RTE_MIN(p->seg_len, p->len);
	/* get_l4proto, the ICMPv6 error handler, then the tuple */
	const int off = lrx_ct6_l4proto(p->iph, avail, &proto);
	if (off >= 0 && proto == IPPROTO_ICMPV6 &&
	    lrx_ct6_icmp_error(ct, p, (uint32_t)off, in, now) == 0)
		return LRX_NF_ACCEPT;
	if (off < 0 || !lrx_ct6_pkt_tuple(p->iph, avail, &q.thoff, &t)) {
		ct->st.invalid++;
		return LRX_NF_ACCEPT;
	}
	const unsigned verdict = lrx_ct_resolve(ct, &q, &t, now);
	p->ctstate = q.ctstate;
	return verdict;
}

/* nf_conntrack_in (in: at PREROUTING; else LOCAL_OUT) */
static unsigned lrx_ct_in_core(struct lrx_ct *ct, struct lrx_nf_pkt *p, bool in,
			       uint64_t now)
{
	lrx_ct_release(ct);
	if (p->ctstate == LRX_NF_CT_UNTRACKED)
		return LRX_NF_ACCEPT;
	p->ctstate = LRX_NF_CT_INVALID;
	if (unlikely(now != ct->gc_ms)) {
		ct->gc_ms = now;
		lrx_ct_gc(ct, now, 16);
	}
	if (unlikely((p->iph[0] >> 4) == 6))
		return lrx_ct6_in(ct, p, in, now);
	if (p->iph[9] == IPPROTO_ICMP && lrx_ct_icmp_error(ct, p, now) == 0)
		return LRX_NF_ACCEPT;
	struct lrx_ct_tuple t;
	if (!lrx_ct_pkt_tuple(p->iph, p->thoff,
			      p->seg_len > p->thoff ? p->seg_len - p->thoff : 0, &t)) {
		ct->st.invalid++;
		return LRX_NF_ACCEPT;
	}
	return lrx_ct_resolve(ct, p, &t, now);
}

unsigned lrx_ct_in(struct lrx_ct *ct, struct lrx_nf_pkt *p, uint64_t now)
{
	return lrx_ct_in_core(ct, p, true, now);
}

void lrx_ct_local_out(struct lrx_ct *ct, struct lrx_nf_pkt *p, uint64_t now)
{
	p->ctstate = 0;
	if (lrx_ct_in_core(ct, p, false, now) == LRX_NF_ACCEPT)
		lrx_ct_confirm(ct, now);
}
