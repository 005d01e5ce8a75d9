/* SPDX-License-Identifier: BSD-3-Clause
 * What the gro stage (gro.c: the kernel's rules) and its peer rte-gro
 * (rte_gro.c: DPDK rte_gro) share: the context, the parsed packet and its
 * parser, the release list (napi->rx_list), the config and its common
 * keys, the counters. Internal to the gro folder.
 */
#ifndef LISTRX_GRO_INTERNAL_H
#define LISTRX_GRO_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_gro.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h> /* meta.h uses RTE_MBUF_DYNFIELD */
#include <rte_tcp.h>
#include <rte_udp.h>

#include "meta.h"
#include "stage.h"
#include "gro.h"

#define GRO_TCP_FLAG_CWR 0x80
#define GRO_TCP_FLAG_URG 0x20
#define GRO_TCP_FLAG_PSH 0x08
#define GRO_TCP_FLAG_RST 0x04
#define GRO_TCP_FLAG_SYN 0x02
#define GRO_TCP_FLAG_FIN 0x01
/* flags that end a GRO packet (tcp_gro_receive out_check_final). CWR is
 * among them: a CWR segment ends the held packet and passes alone, as Linux
 * 6.18 does (kernel oracle test; older kernels held it as the head of a new
 * packet) */
#define GRO_TCP_FLUSH_FLAGS                                                   \
	(GRO_TCP_FLAG_URG | GRO_TCP_FLAG_PSH | GRO_TCP_FLAG_RST |             \
	 GRO_TCP_FLAG_SYN | GRO_TCP_FLAG_FIN | GRO_TCP_FLAG_CWR)
/* tcp_flag_word bits (doff, flags, window) that may differ between merged
 * segments: CWR, FIN, PSH (tcp_gro_receive) */
#define GRO_TCP_WORD_MAY_DIFFER                                               \
	((uint32_t)(GRO_TCP_FLAG_CWR | GRO_TCP_FLAG_FIN | GRO_TCP_FLAG_PSH)  \
	 << 16)

/* Which GRO runs behind the descriptor: gro is the kernel's, rte-gro the
 * peer (its key mode picks heavy or light). */
enum gro_impl {
	GRO_IMPL_KERNEL = 0,    /* this file: the kernel's rules */
	GRO_IMPL_RTE_HEAVY = 1, /* the peer: rte_gro_reassemble + timeout */
	GRO_IMPL_RTE_LIGHT = 2, /* the peer: rte_gro_reassemble_burst per poll */
};

/* What an IP header's protocol field may lead to (gro_parse's first
 * test): TCP, UDP (with udp_gro), an IPv6 extension header
 * ipv6_gro_pull_exthdrs pulls. */
enum gro_l4 {
	GRO_L4_TCP = 1,
	GRO_L4_UDP = 2,
	GRO_L4_EXT6 = 4,
};

enum gro_kind {
	GRO_KIND_OTHER = 0, /* not something GRO merges: passes through */
	GRO_KIND_TCP4,
	GRO_KIND_TCP6,
	GRO_KIND_UDP4,
	GRO_KIND_UDP6,
};

/* What dev_gro_receive returns (enum gro_result). */
enum gro_result {
	GRO_MERGED,  /* appended to a held packet */
	GRO_HELD,    /* became the head of a new held packet */
	GRO_NORMAL,  /* passed on (to the release list) */
};

/* Why a held packet left (counted per cause). */
enum gro_flush_cause {
	GRO_FLUSH_FLAGS,        /* PSH/FIN/URG/RST/SYN/CWR */
	GRO_FLUSH_SHORT,        /* segment shorter than mss ends the packet */
	GRO_FLUSH_MISMATCH,     /* seq gap, ack, options, TTL/TOS/ID, mss... */
	GRO_FLUSH_SIZE,         /* gro_max_size or UDP_GRO_CNT_MAX reached */
	GRO_FLUSH_NOT_ELIGIBLE, /* same-flow packet that may not be merged */
	GRO_FLUSH_EVICT,        /* bucket full: gro_flush_oldest */
	GRO_FLUSH_POLL_END,     /* napi_gro_flush(napi, false) */
	GRO_FLUSH_AGE,          /* napi_gro_flush(napi, true): older than age */
};

/* The parsed view of one incoming packet (its NAPI_GRO_CB). */
struct gro_pkt {
	uint8_t early;        /* leaves before tcp_gro_receive (goto out) */
	struct rte_mbuf *m;
	uint8_t *l2;
	uint8_t *l3;
	uint8_t *l4;
	uint32_t hash;
	uint32_t ip_len;      /* L3 length from the IP header */
	uint32_t payload_len; /* skb_gro_len after pulling L4 */
	uint32_t seq;         /* TCP */
	uint32_t flag_word;   /* TCP: doff/flags/window word, host order */
	uint16_t l2_len, l3_len, l4_len;
	uint16_t ip_id;
	uint8_t kind;         /* enum gro_kind */
	uint8_t flush;        /* NAPI_GRO_CB(skb)->flush: may not be merged,
			       * its held packet is flushed */
	uint8_t df;           /* IP_DF set (IPv6: 1) */
	uint8_t tcp_flags;
	struct lrx_meta *meta;
};

/* One held packet (an entry of napi->gro_hash[bucket].list). */
struct gro_held {
	struct rte_mbuf *head;
	struct rte_mbuf *last;
	uint64_t age_tsc;     /* NAPI_GRO_CB(p)->age */
	uint32_t hash;
	uint32_t ip_len;      /* p->len: L3 length of all merged */
	uint32_t next_seq;    /* th2->seq + NAPI_GRO_CB(p)->len */
	uint16_t mss;         /* gso_size: payload of the first segment */
	uint16_t count;       /* NAPI_GRO_CB(p)->count */
	uint16_t l2_len, l3_len, l4_len;
	uint8_t kind;
	uint8_t ip_fixedid;   /* NAPI_GRO_CB(p)->ip_fixedid */
	uint32_t fast_len;    /* frame length of a segment the in-order fast
			       * path may append (GRO_FAST_NONE: none) */
	struct lrx_meta *meta;
};

struct gro_bucket {
	uint8_t count;
	uint8_t used;                  /* bitmask of used slots */
	uint8_t order[MAX_GRO_SKBS];   /* slot indices, oldest first */
	struct gro_held slot[MAX_GRO_SKBS];
};

struct gro_counters {
	uint64_t segments_in;
	uint64_t packets_out;
	uint64_t merged;
	uint64_t held;
	uint64_t flush[GRO_FLUSH_AGE + 1];
	uint64_t bad_csum;
	uint64_t not_eligible;
	uint64_t udp_merged;
	uint64_t release_overflow;
};

struct gro_ctx {
	/* hot */
	uint32_t bitmask;       /* napi->gro_bitmask */
	uint16_t prefetch;      /* packets ahead in the burst loop */
	uint32_t held_count;
	uint32_t max_size;      /* gro_max_size */
	uint32_t ring_head;     /* next to release */
	uint32_t ring_tail;     /* next free */
	uint8_t udp_gro;
	uint8_t csum_verify;
	uint8_t use_meta;
	uint8_t hash_compute;    /* hash=compute: a flow hash without the NIC's */
	uint8_t l4_candidates[2]; /* enum gro_l4 bits worth parsing: [0] IPv6,
				   * [1] IPv4 */
	uint8_t early_in_order;  /* early_order=flow */
	uint8_t impl;            /* enum gro_impl */
	uint16_t light_n;        /* impl=rte-light: segments in light[] */
	void *rte_ctx;           /* impl=rte: the rte_gro context */
	uint64_t age_cycles;     /* one jiffy by default (polls at clock=polls) */
	uint64_t polls;          /* clock=polls: ends of poll so far */
	uint8_t clock_polls;     /* ages count polls, not TSC cycles */
	uint64_t timeout_cycles; /* gro_flush_timeout, 0 = off */
	struct gro_counters c;
	struct gro_bucket buckets[GRO_HASH_BUCKETS];
	struct rte_mbuf *ring[GRO_RELEASE_RING];
	/* impl=rte-light: this poll's TCP/IPv4 segments, given to
	 * rte_gro_reassemble_burst at the poll's end */
	struct rte_gro_param light_param;
	struct rte_mbuf *light[RTE_GRO_MAX_BURST_ITEM_NUM];
};

_Static_assert((GRO_RELEASE_RING & (GRO_RELEASE_RING - 1)) == 0,
	       "release ring size must be a power of two");
_Static_assert(GRO_RELEASE_RING >=
		       LRX_BURST_MAX + GRO_HASH_BUCKETS * MAX_GRO_SKBS,
	       "release ring must hold one burst plus everything held");
_Static_assert(GRO_RELEASE_RING >=
		       LRX_BURST_MAX + RTE_GRO_MAX_BURST_ITEM_NUM,
	       "release ring must hold one burst plus a light-mode batch");
_Static_assert(GRO_HASH_BUCKETS <= 32, "bitmask is 32 bits");

/* ---- release list (napi->rx_list) ------------------------------------- */

static inline void gro_release_push(struct gro_ctx *ctx, struct rte_mbuf *m)
{
	if (unlikely(ctx->ring_tail - ctx->ring_head >= GRO_RELEASE_RING)) {
		/* the engine broke the drain-after-every-call contract; the
		 * mbuf is freed (never leaked) and the breach counted */
		ctx->c.release_overflow++;
		rte_pktmbuf_free(m);
		return;
	}
	ctx->ring[ctx->ring_tail++ & (GRO_RELEASE_RING - 1)] = m;
	ctx->c.packets_out++;
}

/* ---- parsing: one helper for both "build-meta ran" and "it did not" ---- */

static inline uint16_t gro_load16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}
static inline uint32_t gro_load32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}
static inline uint64_t gro_load64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline struct lrx_meta *gro_meta_of(const struct gro_ctx *ctx,
					   const struct rte_mbuf *m)
{
	if (!ctx->use_meta || lrx_meta_dynfield_offset < 0)
		return NULL;
	struct lrx_meta *meta = lrx_meta(m);
	/* build-meta sets network_offset (>= ETH_HLEN) when it ran */
	return meta && meta->network_offset >= RTE_ETHER_HDR_LEN ? meta : NULL;
}

/* L4 checksum state: the NIC's (through build-meta, or the mbuf flags when
 * build-meta did not run), as skb->ip_summed. */
static inline unsigned gro_l4_csum_state(const struct gro_pkt *s)
{
	if (s->meta)
		return s->meta->ip_summed;
	switch (s->m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) {
	case RTE_MBUF_F_RX_L4_CKSUM_GOOD:
		return LRX_CHECKSUM_UNNECESSARY;
	case RTE_MBUF_F_RX_L4_CKSUM_BAD:
		return LRX_CHECKSUM_BAD;
	default:
		return LRX_CHECKSUM_NONE;
	}
}

static inline bool gro_l3_csum_known_good(const struct gro_pkt *s)
{
	if (s->meta)
		return s->meta->l3_csum_state == LRX_CHECKSUM_UNNECESSARY;
	return (s->m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
	       RTE_MBUF_F_RX_IP_CKSUM_GOOD;
}

/* skb_get_hash_raw: the NIC's hash (through build-meta's hint, or the
 * mbuf when build-meta did not run); none is 0, the first bucket, as on a
 * veth. hash=compute hashes the flow instead of 0. */
static inline uint32_t gro_flow_hash(const struct gro_ctx *ctx,
				     const struct gro_pkt *s)
{
	uint32_t nic = 0;
	if (s->meta)
		nic = s->meta->hash;
	else if (s->m->ol_flags & RTE_MBUF_F_RX_RSS_HASH)
		nic = s->m->hash.rss;
	if (nic || !ctx->hash_compute)
		return nic;
	uint32_t h = rte_hash_crc_4byte(gro_load32(s->l4), 0x9e3779b9u);
	if (s->kind == GRO_KIND_TCP4 || s->kind == GRO_KIND_UDP4)
		return rte_hash_crc_8byte(gro_load64(s->l3 + 12), h);
	/* IPv6 addresses: 8-byte loads (headers need not be aligned, which
	 * rte_hash_crc assumes) */
	for (int i = 8; i < 40; i += 8)
		h = rte_hash_crc_8byte(gro_load64(s->l3 + i), h);
	return h;
}

/* Fills s for one frame. Returns false when the frame is nothing GRO
 * handles (kind OTHER: non-IP, other L4, fragments, malformed); true when it
 * belongs to a TCP/UDP flow, with s->flush set when it may not be merged
 * (inet_gro_receive / ipv6_gro_receive / tcp4_gro_receive checks). */
/* eth_type_trans + vlan_gro_receive: up to two tags. Returns the L2
 * length (0: too short) and the protocol after the tags. */
static __rte_always_inline uint32_t gro_parse_l2(const uint8_t *frame, uint32_t frame_len,
						 uint16_t *proto)
{
	if (frame_len < RTE_ETHER_HDR_LEN)
		return 0;
	uint32_t l2_len = RTE_ETHER_HDR_LEN;
	*proto = rte_be_to_cpu_16(gro_load16(frame + 12));
	for (int tags = 0; tags < 2 &&
			   (*proto == RTE_ETHER_TYPE_VLAN || *proto == RTE_ETHER_TYPE_QINQ);
	     tags++) {
		if (frame_len < l2_len + 4)
			return 0;
		*proto = rte_be_to_cpu_16(gro_load16(frame + l2_len + 2));
		l2_len += 4;
	}
	return l2_len;
}

/* inet_gro_receive's header checks. Returns the IPv4 header length (0: not
 * a packet to merge); *flush when it may not merge with the flow. */
static __rte_always_inline uint32_t gro_parse_ip4(const struct gro_ctx *ctx, struct gro_pkt *s,
						  uint32_t l3_avail, uint8_t *flush)
{
	const struct rte_ipv4_hdr *iph = (const void *)s->l3;
	if (l3_avail < sizeof(*iph) || (iph->version_ihl >> 4) != 4)
		return 0;
	const uint32_t l3_len = (uint32_t)(iph->version_ihl & 0xf) * 4;
	/* ip_is_fragment: no ports to find a flow with */
	if (l3_len < sizeof(*iph) ||
	    (iph->fragment_offset &
	     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return 0;
	s->ip_len = rte_be_to_cpu_16(iph->total_length);
	s->ip_id = rte_be_to_cpu_16(iph->packet_id);
	s->df = !!(iph->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG));
	/* inet_gro_receive: no options (0x45), checksum good, else
	 * "goto out" (early); a reserved frag_off bit is a flush */
	s->early = iph->version_ihl != 0x45;
	if (!s->early && !gro_l3_csum_known_good(s))
		s->early = rte_raw_cksum(iph, sizeof(*iph)) != 0xffff;
	*flush |= !!(iph->fragment_offset & rte_cpu_to_be_16(0x8000));
	if (iph->next_proto_id == IPPROTO_TCP)
		s->kind = GRO_KIND_TCP4;
	else if (iph->next_proto_id == IPPROTO_UDP && ctx->udp_gro)
		s->kind = GRO_KIND_UDP4;
	else
		return 0;
	return l3_len;
}

/* ipv6_gro_receive's. Returns the header length with the extension
 * headers ipv6_gro_pull_exthdrs pulls (0: not a packet to merge). */
static __rte_always_inline uint32_t gro_parse_ip6(const struct gro_ctx *ctx, struct gro_pkt *s,
						  uint32_t l3_avail)
{
	const struct rte_ipv6_hdr *ip6h = (const void *)s->l3;
	if (l3_avail < sizeof(*ip6h) || (s->l3[0] >> 4) != 6)
		return 0;
	s->ip_len = sizeof(*ip6h) + rte_be_to_cpu_16(ip6h->payload_len);
	s->ip_id = 0;
	s->df = 1; /* no ID to check */
	uint32_t l3_len = sizeof(*ip6h);
	uint8_t l4_proto = ip6h->proto;
	/* ipv6_gro_pull_exthdrs: hop-by-hop, routing and destination
	 * options headers (INET6_PROTO_GSO_EXTHDR) are pulled; one that is
	 * not all there stops the pull, and the packet passes ("goto out") */
	while (unlikely(l4_proto == 0 || l4_proto == 43 || l4_proto == 60)) {
		if (l3_avail < l3_len + 8)
			return 0;
		const uint32_t len = (s->l3[l3_len + 1] + 1u) * 8;
		if (l3_avail < l3_len + len)
			return 0;
		l4_proto = s->l3[l3_len];
		l3_len += len;
	}
	if (l4_proto == IPPROTO_TCP)
		s->kind = GRO_KIND_TCP6;
	else if (l4_proto == IPPROTO_UDP && ctx->udp_gro)
		s->kind = GRO_KIND_UDP6;
	else
		return 0;
	return l3_len;
}

/* The L4 header after l3_len bytes of ip_len: false (kind OTHER) when it
 * is not all there. */
static __rte_always_inline bool gro_parse_l4(struct gro_pkt *s, uint32_t l3_len,
					     uint32_t ip_len)
{
	const bool tcp = s->kind == GRO_KIND_TCP4 || s->kind == GRO_KIND_TCP6;
	const uint32_t l4_min = tcp ? sizeof(struct rte_tcp_hdr) : sizeof(struct rte_udp_hdr);
	if (ip_len < l3_len + l4_min) {
		s->kind = GRO_KIND_OTHER;
		return false;
	}
	s->l3_len = (uint16_t)l3_len;
	s->l4 = s->l3 + l3_len;
	if (!tcp) {
		s->l4_len = sizeof(struct rte_udp_hdr);
		return true;
	}
	const struct rte_tcp_hdr *th = (const void *)s->l4;
	uint32_t thlen = (uint32_t)(th->data_off >> 4) * 4;
	if (thlen < sizeof(*th) || ip_len < l3_len + thlen) {
		s->kind = GRO_KIND_OTHER;
		return false;
	}
	s->l4_len = (uint16_t)thlen;
	s->seq = rte_be_to_cpu_32(th->sent_seq);
	s->flag_word = rte_be_to_cpu_32(gro_load32(s->l4 + 12));
	s->tcp_flags = th->tcp_flags;
	return true;
}

static inline bool gro_parse(const struct gro_ctx *ctx, struct gro_pkt *s,
			     struct rte_mbuf *m)
{
	s->m = m;
	s->kind = GRO_KIND_OTHER;
	s->early = 0;
	s->flush = 0;
	s->seq = 0;
	s->flag_word = 0;
	s->tcp_flags = 0;
	if (unlikely(m->nb_segs != 1))
		return false; /* chains come only from GRO itself */
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t frame_len = m->data_len;
	struct lrx_meta *meta = gro_meta_of(ctx, m);
	s->meta = meta;
	s->l2 = frame;

	uint16_t proto = meta ? meta->protocol : 0;
	const uint32_t l2_len = meta ? meta->network_offset
				     : gro_parse_l2(frame, frame_len, &proto);
	if (l2_len == 0)
		return false;
	s->l2_len = (uint16_t)l2_len;
	s->l3 = frame + l2_len;
	uint32_t l3_avail = frame_len > l2_len ? frame_len - l2_len : 0;
	/* Not TCP (nor UDP with udp_gro): no flow to merge into, whatever
	 * the rest of the header says (every path below returns false for
	 * it). Read the L4 protocol of either family first, without a
	 * branch on the family: in a mixed burst the family changes at
	 * random, and the branch would mispredict at each change. */
	const bool ip4 = proto == RTE_ETHER_TYPE_IPV4;
	if ((ip4 | (proto == RTE_ETHER_TYPE_IPV6)) &&
	    l3_avail >= sizeof(struct rte_ipv4_hdr)) {
		/* protocol, nexthdr: TCP, UDP (udp_gro), or for IPv6 an
		 * extension header ipv6_gro_pull_exthdrs pulls */
		static const uint8_t candidate[256] = {
			[IPPROTO_TCP] = GRO_L4_TCP, [IPPROTO_UDP] = GRO_L4_UDP,
			[0] = GRO_L4_EXT6, [43] = GRO_L4_EXT6, [60] = GRO_L4_EXT6};
		const uint8_t l4p = s->l3[ip4 ? 9 : 6];
		if (!(candidate[l4p] & ctx->l4_candidates[ip4]))
			return false;
	}
	uint8_t flush = 0;
	const uint32_t l3_len = ip4 ? gro_parse_ip4(ctx, s, l3_avail, &flush)
			      : proto == RTE_ETHER_TYPE_IPV6 ? gro_parse_ip6(ctx, s, l3_avail)
							     : 0;
	if (l3_len == 0)
		return false;
	/* the L3 length must be the frame's: padded or truncated frames are
	 * not merged (inet_gro_receive: tot_len ^ skb_gro_len) */
	flush |= s->ip_len != l3_avail;
	if (!gro_parse_l4(s, l3_len, RTE_MIN(s->ip_len, l3_avail)))
		return false;
	s->payload_len = RTE_MIN(s->ip_len, l3_avail) - l3_len - s->l4_len;
	s->flush = flush;
	s->hash = gro_flow_hash(ctx, s);
	return true;
}

/* ---- configuration (gro.c) ----------------------------------------------- */
/* The config of both descriptors (gro, rte-gro: no clock key). */
struct gro_conf {
	uint32_t flush_age_us, flush_timeout_us, max_size;
	bool udp_gro, csum_verify;
	unsigned use_meta;  /* gro_use_metas[] */
	unsigned clock;     /* gro_clocks[] */
	unsigned mode;      /* rte_gro_modes[] */
	unsigned hash, early_order; /* gro_hashes[], gro_early_orders[] */
};
static const char *const gro_use_metas[] = {"off", "auto", NULL};

#define GRO_COMMON_KEYS \
	LRX_KEY_UINT(struct gro_conf, flush_age_us, "flush_age_us", "1000", 0, 10000000, \
		     "end of a poll that used its whole budget: flush held packets older " \
		     "than this (napi_gro_flush(napi, HZ >= 1000): one jiffy at HZ=1000); " \
		     "0 = flush all"), \
	LRX_KEY_UINT(struct gro_conf, flush_timeout_us, "flush_timeout_us", "0", 0, 10000000, \
		     "gro_flush_timeout: a poll that did not use its budget flushes only " \
		     "packets older than this; 0 = flush all (default)"), \
	LRX_KEY_UINT(struct gro_conf, max_size, "max_size", "65536", 1, GRO_MAX_SIZE, \
		     "gro_max_size: merged L3 length stays below this; 65536 = " \
		     "GRO_LEGACY_MAX_SIZE, more for BIG TCP"), \
	LRX_KEY_BOOL(struct gro_conf, udp_gro, "udp_gro", "off", \
		     "merge UDP datagrams as with UDP_GRO"), \
	LRX_KEY_BOOL(struct gro_conf, csum_verify, "csum_verify", "on", \
		     "verify TCP/UDP checksums the NIC did not (the kernel always " \
		     "does; off only to measure the cost)"), \
	LRX_KEY_CHOICE(struct gro_conf, use_meta, "use_meta", "auto", gro_use_metas, \
		       "auto: read build-meta's metadata when present, else parse the " \
		       "headers; off: always parse"),

extern const struct lrx_stage_counter gro_counters[];
void gro_init_common(struct gro_ctx *ctx, const struct lrx_stage_init *init);

/* What the release list still holds, freed (fini: the engine drained at
 * exit; nothing is leaked). */
static inline void gro_release_free(struct gro_ctx *ctx)
{
	while (ctx->ring_head != ctx->ring_tail)
		rte_pktmbuf_free(ctx->ring[ctx->ring_head++ &
					   (GRO_RELEASE_RING - 1)]);
}

#endif
