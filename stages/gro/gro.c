/* SPDX-License-Identifier: BSD-3-Clause
 * GRO stage: Linux generic receive offload over mbufs.
 *
 * Follows the kernel's per-NAPI GRO state (net/core/gro.c):
 *  - dev_gro_receive: 8 hash buckets chosen by the flow hash, at most
 *    MAX_GRO_SKBS held packets per bucket (oldest flushed when full:
 *    gro_flush_oldest), a bitmask of non-empty buckets, result enum
 *    HELD / MERGED / NORMAL;
 *  - gro_list_prepare: branch-free same-flow test (diffs |= a ^ b) over the
 *    hash, ingress device, L2 header (incl. VLAN tags);
 *  - inet_gro_receive (net/ipv4/af_inet.c), ipv6_gro_receive
 *    (net/ipv6/ip6_offload.c): addresses and protocol make the flow; TTL,
 *    TOS, DF, traffic class, hop limit must match; IP ID incrementing or
 *    fixed (inet_gro_flush, ip_fixedid); no IP options; total length must
 *    be the frame's;
 *  - tcp_gro_receive (net/ipv4/tcp_offload.c): ports make the flow;
 *    contiguous seq, same ack, same flag word except CWR/FIN/PSH (doff and
 *    window included), identical options, len <= mss of the first segment;
 *    PSH/FIN or a short segment: merged, then the packet ends;
 *    URG/RST/SYN/CWR: the held packet ends, the segment passes;
 *  - skb_gro_receive: merged L3 length must stay below gro_max_size
 *    (64 KB, or BIG TCP);
 *  - udp_gro_receive_segment (net/ipv4/udp_offload.c): UDP GRO as with the
 *    UDP_GRO socket option (config udp_gro=on);
 *  - napi_gro_flush / __napi_gro_flush_chain: end-of-poll flush of all
 *    held packets, or only of those older than one jiffy when the poll used
 *    its whole budget (napi_poll), gro_flush_timeout deferral
 *    (napi_complete_done);
 *  - napi_gro_complete / inet_gro_complete / tcp4_gro_complete: merged
 *    packets get their L3 length and IPv4 header checksum fixed, the L4
 *    checksum field set to the pseudo-header sum, gso_size/gso_segs and a
 *    checksum state that says "verified".
 *
 * Output order: as the kernel's napi->rx_list (gro_normal_list), every
 * packet GRO outputs, merged or not, is appended to one ordered release
 * list; process_one/process_burst return CONSUMED for all packets and the
 * engine drains release(). So the engines cannot reorder GRO's output and a
 * flow's held packet always leaves before the packet that flushed it.
 *
 * A segment that leaves before tcp_gro_receive (inet_gro_receive "goto
 * out": an IPv4 header that is not 0x45, a bad IPv4 header checksum;
 * tcp4_gro_receive "goto flush": a bad TCP checksum; the same for UDP)
 * goes up at once and its flow's held packet stays held, as in the kernel
 * (early_order=kernel); early_order=flow flushes the held packet first,
 * keeping each flow's order. A segment the IP layer marks "flush" without
 * leaving (a length that is not the frame's) flushes its held packet
 * first, as tcp_gro_receive does.
 *
 * The bucket is the NIC's hash (skb_get_hash_raw; no hash: bucket 0, as
 * on a veth); hash=compute hashes the flow when the NIC gave none.
 *
 * Where kernels differ, the rule of the kernel the oracle test ran on
 * (Linux 6.18) is followed: fixed IP IDs without DF, CWR passes alone.
 * The peer, DPDK rte_gro (heavy mode, or light mode with mode=light), is a
 * second descriptor, rte-gro, over the same context, parser, counters and
 * release list: the kernel GRO path carries no branch for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_gro.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h> /* meta.h uses RTE_MBUF_DYNFIELD */
#include <rte_prefetch.h>

#include "prefetch.h"
#include <rte_tcp.h>
#include <rte_udp.h>

#include "meta.h"
#include "stage.h"
#include "stage_keys.h"
#include "static_entries.h"
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

/* tcp4_gro_receive / udp4_gro_receive: skb_gro_checksum_validate, skipped
 * when the NIC verified it. Returns true when bad. */
static inline bool gro_l4_csum_bad(const struct gro_ctx *ctx,
				   const struct gro_pkt *s)
{
	unsigned state = gro_l4_csum_state(s);
	if (state == LRX_CHECKSUM_UNNECESSARY)
		return false;
	if (state == LRX_CHECKSUM_BAD)
		return true;
	if (!ctx->csum_verify)
		return false;
	if ((s->kind == GRO_KIND_UDP4 || s->kind == GRO_KIND_UDP6) &&
	    ((const struct rte_udp_hdr *)s->l4)->dgram_cksum == 0)
		return false; /* no checksum: udp_gro_receive_segment decides */
	if (s->kind == GRO_KIND_TCP4 || s->kind == GRO_KIND_UDP4)
		return rte_ipv4_udptcp_cksum_verify((const void *)s->l3,
						    s->l4) != 0;
	if (likely(s->l3_len == sizeof(struct rte_ipv6_hdr)))
		return rte_ipv6_udptcp_cksum_verify((const void *)s->l3, s->l4) != 0;
	/* after extension headers: the upper-layer length is not the
	 * payload length rte_ipv6_udptcp_cksum_verify would take */
	const uint32_t l4_len = s->ip_len - s->l3_len;
	uint32_t sum = __rte_raw_cksum(s->l3 + 8, 32, 0);
	sum += rte_cpu_to_be_16((uint16_t)(s->kind == GRO_KIND_TCP6 ? IPPROTO_TCP
								   : IPPROTO_UDP));
	sum += rte_cpu_to_be_16((uint16_t)l4_len);
	sum = __rte_raw_cksum(s->l4, l4_len, sum);
	return __rte_raw_cksum_reduce(sum) != 0xffff;
}

/* ---- same flow: gro_list_prepare + inet/ipv6/tcp/udp flow fields ------ */

static inline uint64_t gro_l2_diff(const uint8_t *a, const uint8_t *b,
				   uint16_t len)
{
	/* compare_ether_header, widened to VLAN tags: overlapping 8-byte
	 * loads cover 14, 18 and 22 byte headers */
	uint64_t diffs = gro_load64(a) ^ gro_load64(b);
	diffs |= gro_load64(a + len - 8) ^ gro_load64(b + len - 8);
	if (len > 16)
		diffs |= gro_load64(a + 8) ^ gro_load64(b + 8);
	return diffs;
}

static inline bool gro_same_flow(const struct gro_held *p,
				 const struct gro_pkt *s)
{
	/* the IPv4 header length is not part of the flow: a same-flow
	 * packet with options must find (and flush) its held packet */
	uint64_t diffs = (uint64_t)(p->hash ^ s->hash) |
			 (uint64_t)(p->kind ^ s->kind) |
			 (uint64_t)(p->l2_len ^ s->l2_len);
	if (diffs)
		return false;
	const uint8_t *l2 = rte_pktmbuf_mtod(p->head, const uint8_t *);
	const uint8_t *l3 = l2 + p->l2_len;
	const uint8_t *l4 = l3 + p->l3_len;
	diffs |= (uint64_t)(p->head->port ^ s->m->port);
	diffs |= gro_l2_diff(l2, s->l2, p->l2_len);
	if (p->kind == GRO_KIND_TCP4 || p->kind == GRO_KIND_UDP4) {
		/* inet_gro_receive: protocol, saddr, daddr */
		diffs |= (uint64_t)(l3[9] ^ s->l3[9]);
		diffs |= gro_load64(l3 + 12) ^ gro_load64(s->l3 + 12);
	} else {
		/* ipv6_gro_receive: version + flow label, addresses,
		 * nexthdr (traffic class is a flush, not a flow, field), and
		 * the extension headers pulled, byte for byte */
		diffs |= (gro_load32(l3) ^ gro_load32(s->l3)) &
			 rte_cpu_to_be_32(0xF00FFFFF);
		diffs |= (uint64_t)(l3[6] ^ s->l3[6]);
		for (int i = 8; i < 40; i += 8)
			diffs |= gro_load64(l3 + i) ^ gro_load64(s->l3 + i);
		diffs |= (uint64_t)(p->l3_len ^ s->l3_len);
		if (unlikely(!diffs && p->l3_len > 40))
			diffs |= (uint64_t)memcmp(l3 + 40, s->l3 + 40,
						  p->l3_len - 40u);
	}
	/* tcp_gro_receive / udp_gro_receive_segment: ports */
	diffs |= gro_load32(l4) ^ gro_load32(s->l4);
	return diffs == 0;
}

/* The IP fields that must match, and the IP ID rule, as the kernel's
 * inet_gro_flush / ipv6_gro_flush (include/net/gro.h, called from
 * tcp_gro_receive and udp_gro_receive_segment since Linux 6.10; older
 * kernels did this in inet_gro_receive with flush_id / is_atomic). TTL, TOS
 * and DF must match; the ID decides at the second segment: the same ID
 * makes a fixed-ID flow (ip_fixedid; Linux 6.18, verified by the kernel
 * oracle test, no longer requires DF for it), else the ID must grow by one
 * per merged segment. IPv6: traffic class and hop limit must match.
 * Non-zero = do not merge. */
static inline uint32_t gro_network_flush(struct gro_held *p,
					 const struct gro_pkt *s)
{
	const uint8_t *l3 = rte_pktmbuf_mtod(p->head, const uint8_t *) +
			    p->l2_len;
	uint32_t flush = 0;
	if (p->kind == GRO_KIND_TCP4 || p->kind == GRO_KIND_UDP4) {
		const struct rte_ipv4_hdr *iph2 = (const void *)l3;
		const struct rte_ipv4_hdr *iph = (const void *)s->l3;
		flush |= (uint32_t)(iph->time_to_live ^ iph2->time_to_live) |
			 (uint32_t)(iph->type_of_service ^
				    iph2->type_of_service) |
			 (uint32_t)((iph->fragment_offset ^
				     iph2->fragment_offset) &
				    rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG));
		uint16_t ipid_offset = (uint16_t)(s->ip_id -
				rte_be_to_cpu_16(iph2->packet_id));
		/* decided once, at the second segment (p->count is 1 only
		 * there: a held packet that does not merge it is flushed) */
		if (p->count == 1)
			p->ip_fixedid = ipid_offset == 0;
		flush |= (uint16_t)(ipid_offset ^
				    (uint16_t)(p->count * !p->ip_fixedid));
	} else {
		flush |= (gro_load32(l3) ^ gro_load32(s->l3)) &
			 rte_cpu_to_be_32(0x0FF00000);
		flush |= (uint32_t)(l3[7] ^ s->l3[7]);
	}
	return flush;
}

/* ---- buckets ------------------------------------------------------------ */

static inline int gro_bucket_find(struct gro_bucket *b,
				  const struct gro_pkt *s)
{
	for (int i = 0; i < b->count; i++)
		if (gro_same_flow(&b->slot[b->order[i]], s))
			return i;
	return -1;
}

/* The pseudo-header sum, as ~tcp_v4_check(len, saddr, daddr, 0): what
 * tcp4_gro_complete / udp4_gro_complete leave in the L4 checksum field
 * (length as 32 bits, so BIG TCP lengths are summed right). */
static inline uint16_t gro_pseudo_sum(const uint8_t *l3, bool v6,
				      uint8_t proto, uint32_t l4_len)
{
	uint32_t sum = v6 ? __rte_raw_cksum(l3 + 8, 32, 0)
			  : __rte_raw_cksum(l3 + 12, 8, 0);
	sum += rte_cpu_to_be_16((uint16_t)proto);
	sum += rte_cpu_to_be_16((uint16_t)(l4_len >> 16));
	sum += rte_cpu_to_be_16((uint16_t)l4_len);
	return __rte_raw_cksum_reduce(sum);
}

/* napi_gro_complete: a held packet leaves. One segment leaves untouched
 * (count == 1: gro_complete is skipped); a merged one gets its headers
 * fixed as inet_gro_complete / ipv6_gro_complete and tcp4_gro_complete /
 * udp_gro_complete do. */
static void gro_complete(struct gro_ctx *ctx, struct gro_held *p,
			 enum gro_flush_cause cause)
{
	struct rte_mbuf *m = p->head;
	ctx->c.flush[cause]++;
	if (p->count > 1) {
		uint8_t *l3 = rte_pktmbuf_mtod(m, uint8_t *) + p->l2_len;
		uint8_t *l4 = l3 + p->l3_len;
		bool v6 = p->kind == GRO_KIND_TCP6 || p->kind == GRO_KIND_UDP6;
		bool tcp = p->kind == GRO_KIND_TCP4 || p->kind == GRO_KIND_TCP6;
		uint32_t l4_total = p->ip_len - p->l3_len;
		if (!v6) {
			struct rte_ipv4_hdr *iph = (void *)l3;
			/* BIG TCP: tot_len 0 above 64 KB (iph_set_totlen) */
			iph->total_length = rte_cpu_to_be_16(
				p->ip_len > 0xffff ? 0 : (uint16_t)p->ip_len);
			iph->hdr_checksum = 0;
			iph->hdr_checksum = rte_ipv4_cksum(iph);
		} else {
			struct rte_ipv6_hdr *ip6h = (void *)l3;
			/* ipv6_gro_complete: the extension headers count;
			 * BIG TCP: payload_len 0 above 64 KB (the kernel also
			 * inserts a jumbo hop-by-hop header: not done here) */
			const uint32_t plen = p->ip_len - (uint32_t)sizeof(*ip6h);
			ip6h->payload_len = rte_cpu_to_be_16(
				plen > 0xffff ? 0 : (uint16_t)plen);
		}
		uint16_t pseudo = gro_pseudo_sum(l3, v6,
						 tcp ? IPPROTO_TCP : IPPROTO_UDP,
						 l4_total);
		if (tcp) {
			((struct rte_tcp_hdr *)l4)->cksum = pseudo;
		} else {
			struct rte_udp_hdr *uh = (void *)l4;
			uh->dgram_len = rte_cpu_to_be_16(
				l4_total > 0xffff ? 0 : (uint16_t)l4_total);
			if (uh->dgram_cksum)
				uh->dgram_cksum = pseudo;
		}
		/* CHECKSUM_PARTIAL on receive = verified: listrx's meta has
		 * CHECKSUM_UNNECESSARY for it, the mbuf RX_L4_CKSUM_GOOD */
		m->ol_flags = (m->ol_flags & ~RTE_MBUF_F_RX_L4_CKSUM_MASK) |
			      RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		m->tso_segsz = p->mss;
		if (p->meta) {
			p->meta->gso_size = p->mss;
			p->meta->gso_segs = p->count;
			p->meta->ip_summed = LRX_CHECKSUM_UNNECESSARY;
			p->meta->len = p->ip_len;
		}
	}
	gro_release_push(ctx, m);
	p->head = NULL;
	ctx->held_count--;
}

static inline void gro_bucket_remove(struct gro_ctx *ctx, unsigned bucket,
				     int pos)
{
	struct gro_bucket *b = &ctx->buckets[bucket];
	b->used &= (uint8_t)~(1u << b->order[pos]);
	/* at most 7 bytes: a loop, not a call of memmove */
	for (int i = pos + 1; i < b->count; i++)
		b->order[i - 1] = b->order[i];
	b->count--;
	if (!b->count)
		ctx->bitmask &= ~(1u << bucket);
}

static inline void gro_flush_at(struct gro_ctx *ctx, unsigned bucket, int pos,
				enum gro_flush_cause cause)
{
	struct gro_bucket *b = &ctx->buckets[bucket];
	gro_complete(ctx, &b->slot[b->order[pos]], cause);
	gro_bucket_remove(ctx, bucket, pos);
}

/* The time GRO ages held packets by: the TSC, as the kernel uses jiffies
 * (so a merge depends on how fast the polls ran), or, at clock=polls, the
 * number of polls so far, which every engine sees the same on the same
 * input. */
static inline uint64_t gro_now(const struct gro_ctx *ctx)
{
	return ctx->clock_polls ? ctx->polls : rte_rdtsc();
}

/* The in-order fast path (below) takes the segments of a TCP/IPv4 flow
 * without VLAN tag or IP options, with the timestamp block or no TCP
 * options, as long as the held packet's first one: that frame length,
 * decided once when the packet is held. */
#define GRO_FAST_HDR_LEN (RTE_ETHER_HDR_LEN + 20 + 32)
#define GRO_FAST_HDR_LEN_NO_OPTIONS (RTE_ETHER_HDR_LEN + 20 + 20)
#define GRO_FAST_NONE UINT32_MAX
static inline uint32_t gro_fast_len(const struct gro_pkt *s)
{
	const uint32_t hdr_len = (uint32_t)s->l2_len + s->l3_len + s->l4_len;
	if (s->kind != GRO_KIND_TCP4 || s->l3_len != sizeof(struct rte_ipv4_hdr) ||
	    s->l2_len != RTE_ETHER_HDR_LEN || s->payload_len == 0 ||
	    (hdr_len != GRO_FAST_HDR_LEN && hdr_len != GRO_FAST_HDR_LEN_NO_OPTIONS))
		return GRO_FAST_NONE;
	return hdr_len + s->payload_len;
}

/* dev_gro_receive after "normal" was ruled out: s becomes a held packet;
 * a full bucket first flushes its oldest (gro_flush_oldest). */
static inline void gro_hold(struct gro_ctx *ctx, unsigned bucket,
			    const struct gro_pkt *s)
{
	struct gro_bucket *b = &ctx->buckets[bucket];
	if (unlikely(b->count >= MAX_GRO_SKBS))
		gro_flush_at(ctx, bucket, 0, GRO_FLUSH_EVICT);
	unsigned idx = (unsigned)__builtin_ctz(~(unsigned)b->used);
	struct gro_held *p = &b->slot[idx];
	p->head = s->m;
	p->last = s->m;
	p->age_tsc = gro_now(ctx);
	p->hash = s->hash;
	p->ip_len = s->ip_len;
	p->next_seq = s->seq + s->payload_len;
	p->mss = (uint16_t)s->payload_len;
	p->count = 1;
	p->l2_len = s->l2_len;
	p->l3_len = s->l3_len;
	p->l4_len = s->l4_len;
	p->kind = s->kind;
	p->ip_fixedid = 0;
	p->fast_len = gro_fast_len(s);
	p->meta = s->meta;
	b->used |= (uint8_t)(1u << idx);
	b->order[b->count++] = (uint8_t)idx;
	ctx->bitmask |= 1u << bucket;
	ctx->held_count++;
	ctx->c.held++;
}

/* skb_gro_receive: append s's payload to p. False (-E2BIG) when the merged
 * L3 length would reach gro_max_size. */
static inline bool gro_append(struct gro_ctx *ctx, struct gro_held *p,
			      const struct gro_pkt *s)
{
	if (p->ip_len + s->payload_len >= ctx->max_size ||
	    p->count == UINT16_MAX)
		return false;
	struct rte_mbuf *m = s->m;
	/* strip the appended segment's headers: data_off moves past them */
	rte_pktmbuf_adj(m, (uint16_t)(s->l2_len + s->l3_len + s->l4_len));
	p->last->next = m;
	p->last = m;
	p->head->nb_segs++;
	p->head->pkt_len += m->pkt_len;
	p->ip_len += s->payload_len;
	p->next_seq += s->payload_len;
	p->count++;
	ctx->c.merged++;
	return true;
}

/* tcp_gro_receive: the options must be identical. The kernel compares
 * them 4 bytes at a time over the segment's header length (doff is in the
 * flag word, so a held packet with another length is flushed anyway). The
 * block a Linux sender puts in every data segment, NOP,NOP,timestamp (12
 * bytes), takes one 8-byte and one 4-byte compare; other lengths the
 * kernel's loop. Non-zero: they differ. */
static inline uint32_t gro_tcp_options_diff(const uint8_t *th,
					    const uint8_t *th2, uint32_t thlen)
{
	if (thlen == sizeof(struct rte_tcp_hdr) + 12) {
		const uint64_t d = gro_load64(th + 20) ^ gro_load64(th2 + 20);
		return (uint32_t)(d | d >> 32) |
		       (gro_load32(th + 28) ^ gro_load32(th2 + 28));
	}
	uint32_t diff = 0;
	for (uint32_t i = sizeof(struct rte_tcp_hdr); i < thlen; i += 4)
		diff |= gro_load32(th + i) ^ gro_load32(th2 + i);
	return diff;
}

/* tcp_gro_receive for a segment whose flow has a held packet p (at pos).
 * Returns the result; on failure p has been flushed and the caller decides
 * for s as for a packet without a held flow. */
static inline enum gro_result gro_tcp_receive(struct gro_ctx *ctx,
					      unsigned bucket, int pos,
					      const struct gro_pkt *s)
{
	struct gro_bucket *b = &ctx->buckets[bucket];
	struct gro_held *p = &b->slot[b->order[pos]];
	const uint8_t *th2 = rte_pktmbuf_mtod(p->head, const uint8_t *) +
			     p->l2_len + p->l3_len;
	const uint8_t *th = s->l4;
	uint32_t flush = gro_network_flush(p, s);
	uint32_t flags2 = rte_be_to_cpu_32(gro_load32(th2 + 12));
	flush |= s->tcp_flags & GRO_TCP_FLAG_CWR;
	/* doff, flags and window must match except CWR/FIN/PSH */
	flush |= (s->flag_word ^ flags2) & ~GRO_TCP_WORD_MAY_DIFFER;
	flush |= gro_load32(th + 8) ^ gro_load32(th2 + 8); /* ack_seq */
	flush |= gro_tcp_options_diff(th, th2, s->l4_len);
	/* a single frame larger than mss is not merged; len 0 (pure ACK)
	 * wraps and is never merged */
	flush |= (s->payload_len - 1) >= p->mss;
	flush |= p->next_seq ^ s->seq;

	if (!flush && gro_append(ctx, p, s)) {
		/* out_check_final: a short segment or PSH/FIN/... ends it */
		if (s->tcp_flags & GRO_TCP_FLUSH_FLAGS) {
			/* tcp_flag_word(th2) |= flags & (FIN | PSH): only a
			 * segment with one of those has bits to add */
			((uint8_t *)th2)[13] |= s->tcp_flags &
						 (GRO_TCP_FLAG_FIN | GRO_TCP_FLAG_PSH);
			gro_flush_at(ctx, bucket, pos, GRO_FLUSH_FLAGS);
		} else if (s->payload_len < p->mss)
			gro_flush_at(ctx, bucket, pos, GRO_FLUSH_SHORT);
		return GRO_MERGED;
	}
	enum gro_flush_cause cause =
		flush ? ((s->tcp_flags & GRO_TCP_FLUSH_FLAGS) ? GRO_FLUSH_FLAGS
							      : GRO_FLUSH_MISMATCH)
		      : GRO_FLUSH_SIZE;
	gro_flush_at(ctx, bucket, pos, cause);
	return GRO_NORMAL;
}

/* udp_gro_receive_segment for a datagram whose flow has a held packet. */
static inline enum gro_result gro_udp_receive(struct gro_ctx *ctx,
					      unsigned bucket, int pos,
					      const struct gro_pkt *s)
{
	struct gro_bucket *b = &ctx->buckets[bucket];
	struct gro_held *p = &b->slot[b->order[pos]];
	const struct rte_udp_hdr *uh2 = (const void *)(
		rte_pktmbuf_mtod(p->head, const uint8_t *) + p->l2_len +
		p->l3_len);
	uint32_t ulen = s->payload_len + sizeof(struct rte_udp_hdr);
	uint32_t ulen2 = rte_be_to_cpu_16(uh2->dgram_len);
	uint32_t flush = gro_network_flush(p, s);
	/* a longer datagram ends the packet and starts a new one */
	if (!flush && ulen <= ulen2 && gro_append(ctx, p, s)) {
		ctx->c.udp_merged++;
		/* the first shorter datagram is merged, then the packet
		 * ends; so does one that reached UDP_GRO_CNT_MAX */
		if (ulen != ulen2)
			gro_flush_at(ctx, bucket, pos, GRO_FLUSH_SHORT);
		else if (p->count >= UDP_GRO_CNT_MAX)
			gro_flush_at(ctx, bucket, pos, GRO_FLUSH_SIZE);
		return GRO_MERGED;
	}
	gro_flush_at(ctx, bucket, pos,
		     (flush || ulen > ulen2) ? GRO_FLUSH_MISMATCH
					     : GRO_FLUSH_SIZE);
	return GRO_NORMAL;
}

/* ---- the in-order fast path -------------------------------------------
 * A TCP/IPv4 segment whose checksums the NIC verified and whose NIC hash
 * leads to a held packet whose headers (Ethernet, IPv4 without options,
 * TCP with the 12-byte timestamp block Linux senders use, or without
 * options: 66 or 54 bytes) it repeats, except where
 * consecutive segments of a stream differ (IP ID and checksum, TCP seq and
 * checksum): every test of gro_list_prepare, inet_gro_receive and
 * tcp_gro_receive then passes but the IP ID step, the seq and the size
 * limit, and its length is the first segment's (the frame's, so no
 * padding). Those are checked here and the segment is appended; any other
 * segment (another header or flag, a short or long one, a checksum the
 * NIC did not verify) goes the whole way below, which decides as the
 * kernel does. The held packet is the first of the bucket with the
 * segment's hash, the one gro_bucket_find would take: a flow has at most
 * one held packet (a segment that does not merge flushes it), and the
 * same flow needs the same hash. */
/* the header bytes consecutive segments repeat (0xff) and those they
 * change (0: IP ID, IP header checksum, TCP seq, TCP checksum) */
static const uint8_t gro_fast_same[GRO_FAST_HDR_LEN] = {
	[0 ... 17] = 0xff,  /* Ethernet; IPv4 version..total length */
	[20 ... 23] = 0xff, /* fragment offset, TTL, protocol */
	[26 ... 37] = 0xff, /* addresses, ports */
	[42 ... 49] = 0xff, /* ack, offset, flags, window */
	[52 ... 65] = 0xff, /* urgent pointer, options */
};

/* Non-zero when the masked bytes of two len-byte headers differ: 8-byte
 * words, then a 2-byte tail (66 bytes: the timestamp block) or a last
 * word overlapping the one before (54 bytes: no options). len is a
 * constant at each call. */
static __rte_always_inline uint64_t gro_fast_hdr_diff(const uint8_t *f, const uint8_t *h,
						      const unsigned len)
{
	uint64_t diff = 0;
	unsigned i;
	for (i = 0; i + 8 <= len; i += 8)
		diff |= (gro_load64(f + i) ^ gro_load64(h + i)) & gro_load64(gro_fast_same + i);
	if (len - i == 2)
		diff |= (gro_load16(f + i) ^ gro_load16(h + i)) & gro_load16(gro_fast_same + i);
	else if (len != i)
		diff |= (gro_load64(f + len - 8) ^ gro_load64(h + len - 8)) &
			gro_load64(gro_fast_same + len - 8);
	return diff;
}

/* What the fast path found: the segment merged; no held packet with its
 * hash (so the whole path need not look for its flow either: the same
 * hash, gro_flow_hash's, is the first field gro_same_flow compares); or
 * anything else. */
enum gro_fast {
	GRO_FAST_MERGED,
	GRO_FAST_NO_FLOW,
	GRO_FAST_OTHER,
};

/* The rest of the fast path for a held packet p whose first segment had
 * hdr_len bytes of headers (a constant at each call) and a segment m as
 * long as that one: the same headers but what consecutive segments
 * change, inet_gro_flush's ID rule, the seq; then append. */
static __rte_always_inline enum gro_fast gro_fast_append(struct gro_ctx *ctx,
							  struct gro_held *p,
							  struct rte_mbuf *m,
							  const unsigned hdr_len)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *h = rte_pktmbuf_mtod(p->head, const uint8_t *);
	uint64_t diff = gro_fast_hdr_diff(f, h, hdr_len);
	/* inet_gro_flush's ID rule (gro_network_flush) and the seq */
	const uint16_t ipid_offset = (uint16_t)(rte_be_to_cpu_16(gro_load16(f + 18)) -
						rte_be_to_cpu_16(gro_load16(h + 18)));
	const uint8_t fixedid = p->count == 1 ? ipid_offset == 0 : p->ip_fixedid;
	diff |= (uint16_t)(ipid_offset ^ (uint16_t)(p->count * !fixedid));
	diff |= rte_be_to_cpu_32(gro_load32(f + 38)) ^ p->next_seq;
	if (diff)
		return GRO_FAST_OTHER;
	const struct gro_pkt s = {.m = m, .payload_len = p->mss, .l2_len = RTE_ETHER_HDR_LEN,
				  .l3_len = 20, .l4_len = (uint16_t)(hdr_len - RTE_ETHER_HDR_LEN - 20)};
	if (!gro_append(ctx, p, &s))
		return GRO_FAST_OTHER; /* the size limit: the full path flushes */
	p->ip_fixedid = fixedid;
	return GRO_FAST_MERGED;
}

/* A flow without TCP options: out of the timestamp shape's way (a
 * branch there cost Linux-like streams 6-7 % of GRO's time). */
static __rte_noinline enum gro_fast gro_fast_no_options(struct gro_ctx *ctx, struct gro_held *p,
							 struct rte_mbuf *m)
{
	return gro_fast_append(ctx, p, m, GRO_FAST_HDR_LEN_NO_OPTIONS);
}

static inline enum gro_fast gro_fast_merge(struct gro_ctx *ctx, struct rte_mbuf *m)
{
	if (!ctx->bitmask || unlikely(m->nb_segs != 1))
		return GRO_FAST_OTHER;
	const struct lrx_meta *meta = gro_meta_of(ctx, m);
	uint32_t hash;
	if (meta) {
		if (meta->network_offset != RTE_ETHER_HDR_LEN ||
		    meta->protocol != RTE_ETHER_TYPE_IPV4 ||
		    meta->ip_summed != LRX_CHECKSUM_UNNECESSARY ||
		    meta->l3_csum_state != LRX_CHECKSUM_UNNECESSARY)
			return GRO_FAST_OTHER;
		hash = meta->hash;
	} else {
		if ((m->ol_flags & (RTE_MBUF_F_RX_RSS_HASH | RTE_MBUF_F_RX_IP_CKSUM_MASK |
				    RTE_MBUF_F_RX_L4_CKSUM_MASK)) !=
		    (RTE_MBUF_F_RX_RSS_HASH | RTE_MBUF_F_RX_IP_CKSUM_GOOD |
		     RTE_MBUF_F_RX_L4_CKSUM_GOOD))
			return GRO_FAST_OTHER;
		hash = m->hash.rss;
	}
	const unsigned bucket = hash & (GRO_HASH_BUCKETS - 1);
	if (!hash && ctx->hash_compute)
		return GRO_FAST_OTHER;
	if (!(ctx->bitmask & (1u << bucket)))
		return GRO_FAST_NO_FLOW;
	struct gro_bucket *b = &ctx->buckets[bucket];
	int pos = 0;
	while (b->slot[b->order[pos]].hash != hash)
		if (++pos == b->count)
			return GRO_FAST_NO_FLOW;
	struct gro_held *p = &b->slot[b->order[pos]];
	if (m->data_len != p->fast_len || m->port != p->head->port)
		return GRO_FAST_OTHER;
	if (unlikely(p->l4_len != GRO_FAST_HDR_LEN - RTE_ETHER_HDR_LEN - 20))
		return gro_fast_no_options(ctx, p, m);
	return gro_fast_append(ctx, p, m, GRO_FAST_HDR_LEN);
}

/* The core: dev_gro_receive for one packet. */
static inline enum gro_result gro_receive(struct gro_ctx *ctx,
					  struct rte_mbuf *m)
{
	struct gro_pkt s;
	ctx->c.segments_in++;
	const enum gro_fast fast = gro_fast_merge(ctx, m);
	if (fast == GRO_FAST_MERGED)
		return GRO_MERGED;
	if (!gro_parse(ctx, &s, m)) {
		ctx->c.not_eligible++;
		gro_release_push(ctx, m);
		return GRO_NORMAL;
	}
	unsigned bucket = s.hash & (GRO_HASH_BUCKETS - 1);
	int pos = -1;
	if (fast == GRO_FAST_OTHER && (ctx->bitmask & (1u << bucket)))
		pos = gro_bucket_find(&ctx->buckets[bucket], &s);

	/* tcp4_gro_receive, udp4_gro_receive: "Don't bother verifying
	 * checksum if we're going to flush anyway"; a bad one leaves early */
	bool bad_csum = false;
	if (!s.early && !s.flush && gro_l4_csum_bad(ctx, &s)) {
		ctx->c.bad_csum++;
		s.early = 1;
		bad_csum = true;
	}
	bool udp = s.kind == GRO_KIND_UDP4 || s.kind == GRO_KIND_UDP6;
	if (udp && !s.early) {
		/* udp_gro_receive_segment: non-zero checksum (symmetry with
		 * GSO), udp len must be the datagram's, else it leaves */
		const struct rte_udp_hdr *uh = (const void *)s.l4;
		s.early = uh->dgram_cksum == 0 ||
			  rte_be_to_cpu_16(uh->dgram_len) !=
				  s.payload_len + sizeof(*uh) ||
			  s.payload_len == 0;
	}
	if (unlikely(s.early | s.flush)) {
		ctx->c.not_eligible += !bad_csum;
		/* a flush (tcp_gro_receive finds the held packet and ends
		 * it), or early_order=flow: the held packet first; the
		 * kernel's early segment overtakes it */
		if (pos >= 0 && (s.flush || ctx->early_in_order))
			gro_flush_at(ctx, bucket, pos, GRO_FLUSH_NOT_ELIGIBLE);
		gro_release_push(ctx, m);
		return GRO_NORMAL;
	}
	if (pos >= 0) {
		enum gro_result r = udp ? gro_udp_receive(ctx, bucket, pos, &s)
					: gro_tcp_receive(ctx, bucket, pos, &s);
		if (r == GRO_MERGED)
			return r;
	}
	/* no held packet of this flow (or it was just flushed): out_check_final
	 * with mss = 1 — pure ACKs and PSH/FIN/URG/RST/SYN go on, the rest is
	 * held */
	if (!udp && (s.payload_len == 0 || (s.tcp_flags & GRO_TCP_FLUSH_FLAGS))) {
		gro_release_push(ctx, m);
		return GRO_NORMAL;
	}
	gro_hold(ctx, bucket, &s);
	return GRO_HELD;
}

/* ---- the peer: DPDK rte_gro (stage rte-gro) ---------------------------
 * rte_gro_reassemble (heavy mode: state across calls, mode=heavy) or
 * rte_gro_reassemble_burst (light mode: one burst, nothing kept,
 * mode=light) behind a descriptor of its own over the same context, so
 * that a pipeline can run either on the same stream. Only TCP/IPv4 is given to rte_gro (22.11
 * merges nothing else); rte_gro needs packet_type and l2/l3/l4_len, which
 * the shared parse helper fills. The packets rte_gro does not take, and
 * what rte_gro_timeout_flush or rte_gro_reassemble_burst returns, go to the
 * same release list. rte_gro leaves the IPv4 header checksum of
 * merged packets stale and the TCP checksum of the first segment; listrx
 * recomputes the former and marks the packet verified on output so that
 * l3-demux accepts it (docs/gro.md: differences). */

static inline void gro_rte_output(struct gro_ctx *ctx, struct rte_mbuf *m)
{
	if (m->nb_segs > 1) {
		struct rte_ipv4_hdr *iph = rte_pktmbuf_mtod_offset(
			m, struct rte_ipv4_hdr *, m->l2_len);
		iph->hdr_checksum = 0;
		iph->hdr_checksum = rte_ipv4_cksum(iph);
		/* rte_gro assumes the NIC verified the segments and leaves
		 * the first one's TCP checksum: listrx marks the merged
		 * packet verified, as the kernel rule does, so that the
		 * stages after GRO treat both impls alike */
		uint16_t mss = (uint16_t)(m->data_len - m->l2_len - m->l3_len -
					  m->l4_len);
		m->ol_flags = (m->ol_flags & ~RTE_MBUF_F_RX_L4_CKSUM_MASK) |
			      RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		m->tso_segsz = mss;
		struct lrx_meta *meta = gro_meta_of(ctx, m);
		if (meta) {
			meta->gso_size = mss;
			meta->gso_segs = m->nb_segs;
			meta->ip_summed = LRX_CHECKSUM_UNNECESSARY;
			meta->len = m->pkt_len - m->l2_len;
		}
	}
	gro_release_push(ctx, m);
}

/* What an application does before rte_gro, which needs packet_type and
 * l2/l3/l4_len: the header lengths of a TCP/IPv4 frame, read from the
 * headers. Admits the frames gro_parse gives to rte_gro (TCP/IPv4, not a
 * fragment, no reserved fragment bit, headers within a total length that
 * is the frame's), without what only the kernel's rules read (hash,
 * checksum states, flow fields), so that the peer does not pay for them.
 * Only untagged frames: rte_gro's flow key has no VLAN, and
 * merge_two_tcp4_packets strips the head's header length from the tail,
 * so a tagged and an untagged segment of one flow would lose 4 payload
 * bytes (found by tests/fuzz/fuzz_gro). Returns the L3 length (0: not for
 * rte_gro), *l4_len. */
static inline uint32_t gro_rte_lengths(const struct gro_ctx *ctx, const struct rte_mbuf *m,
				       uint32_t *l4_len)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint32_t len = m->data_len;
	const struct lrx_meta *meta = gro_meta_of(ctx, m);
	if (unlikely(m->nb_segs != 1) || len < RTE_ETHER_HDR_LEN + 20 ||
	    (meta ? meta->network_offset != RTE_ETHER_HDR_LEN ||
			    meta->protocol != RTE_ETHER_TYPE_IPV4
		  : gro_load16(f + 12) != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)))
		return 0;
	const struct rte_ipv4_hdr *iph = (const void *)(f + RTE_ETHER_HDR_LEN);
	const uint32_t l3_len = (uint32_t)(iph->version_ihl & 0xf) * 4;
	const uint32_t ip_len = rte_be_to_cpu_16(iph->total_length);
	if ((iph->version_ihl >> 4) != 4 || l3_len < 20 || iph->next_proto_id != IPPROTO_TCP ||
	    (iph->fragment_offset & rte_cpu_to_be_16(0x8000 | RTE_IPV4_HDR_MF_FLAG |
						      RTE_IPV4_HDR_OFFSET_MASK)) ||
	    ip_len != len - RTE_ETHER_HDR_LEN || ip_len < l3_len + 20)
		return 0;
	*l4_len = (uint32_t)(((const struct rte_tcp_hdr *)((const uint8_t *)iph + l3_len))->data_off >> 4) * 4;
	return *l4_len >= 20 && ip_len >= l3_len + *l4_len ? l3_len : 0;
}

/* Returns true when m is for rte_gro (fields set), false when it passes. */
static inline bool gro_rte_prepare(struct gro_ctx *ctx, struct rte_mbuf *m)
{
	uint32_t l4_len;
	ctx->c.segments_in++;
	const uint32_t l3_len = gro_rte_lengths(ctx, m, &l4_len);
	if (!l3_len) {
		ctx->c.not_eligible++;
		return false;
	}
	m->l2_len = RTE_ETHER_HDR_LEN;
	m->l3_len = l3_len;
	m->l4_len = l4_len;
	m->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 |
			 RTE_PTYPE_L4_TCP;
	return true;
}

/* Light mode: rte_gro_reassemble_burst over the segments collected since
 * the last call; everything it returns (merged and unprocessed) leaves at
 * once, in its order. */
static void gro_rte_light_flush(struct gro_ctx *ctx,
				enum gro_flush_cause cause)
{
	uint16_t n = ctx->light_n;
	if (n == 0)
		return;
	ctx->light_n = 0;
	uint16_t left = rte_gro_reassemble_burst(ctx->light, n,
						 &ctx->light_param);
	ctx->c.merged += (uint64_t)(n - left);
	ctx->c.flush[cause] += left;
	for (uint16_t i = 0; i < left; i++)
		gro_rte_output(ctx, ctx->light[i]);
}

/* Light mode per burst: the burst is the poll (rx burst to poll end), not
 * one engine call, so that the packet engine, which hands the stage one
 * packet per call, merges what the burst engine does. The segments wait
 * in light[] for flush(); more than rte_gro's RTE_GRO_MAX_BURST_ITEM_NUM
 * in one poll (--burst > 128) are reassembled in batches of that size. */
static inline void gro_rte_light_add(struct gro_ctx *ctx, struct rte_mbuf *m)
{
	ctx->light[ctx->light_n++] = m;
	if (unlikely(ctx->light_n == RTE_GRO_MAX_BURST_ITEM_NUM))
		gro_rte_light_flush(ctx, GRO_FLUSH_SIZE);
}

/* Heavy mode: one rte_gro_reassemble call over a run of segments; what it
 * returns unprocessed (flags, full table) leaves at once, in input order. */
static void gro_rte_heavy_run(struct gro_ctx *ctx, struct rte_mbuf **take,
			      uint16_t k)
{
	uint64_t before = rte_gro_get_pkt_count(ctx->rte_ctx);
	uint16_t left = rte_gro_reassemble(take, k, ctx->rte_ctx);
	/* segments taken minus packets it holds more now = merged */
	ctx->c.merged += (uint64_t)(k - left) -
			 (rte_gro_get_pkt_count(ctx->rte_ctx) - before);
	for (uint16_t i = 0; i < left; i++)
		gro_rte_output(ctx, take[i]);
}

/* A packet rte_gro does not take ends the run before it, so that it leaves
 * after the segments rte_gro returned unprocessed before it: the order one
 * call per packet gives, the same in every engine. */
static void gro_rte_burst(struct gro_ctx *ctx, struct rte_mbuf **pkts,
			  uint16_t n)
{
	struct rte_mbuf *take[LRX_BURST_MAX];
	uint16_t k = 0;
	const bool light = ctx->impl == GRO_IMPL_RTE_LIGHT;
	for (uint16_t i = 0; i < n; i++) {
		if (gro_rte_prepare(ctx, pkts[i])) {
			if (light)
				gro_rte_light_add(ctx, pkts[i]);
			else
				take[k++] = pkts[i];
			continue;
		}
		if (k != 0) {
			gro_rte_heavy_run(ctx, take, k);
			k = 0;
		}
		gro_release_push(ctx, pkts[i]);
	}
	if (k != 0)
		gro_rte_heavy_run(ctx, take, k);
}

static void gro_rte_flush(struct gro_ctx *ctx, uint64_t older_than,
			  enum gro_flush_cause cause)
{
	struct rte_mbuf *out[64];
	uint16_t n;
	do {
		n = rte_gro_timeout_flush(ctx->rte_ctx, older_than,
					  RTE_GRO_TCP_IPV4, out, RTE_DIM(out));
		ctx->c.flush[cause] += n;
		for (uint16_t i = 0; i < n; i++)
			gro_rte_output(ctx, out[i]);
	} while (n == RTE_DIM(out));
}

static int gro_rte_init(struct gro_ctx *ctx, const struct lrx_stage_init *init)
{
	if (ctx->impl == GRO_IMPL_RTE_LIGHT) {
		/* rte_gro_reassemble_burst sizes its on-stack table by
		 * min(n, flows x items, RTE_GRO_MAX_BURST_ITEM_NUM): these
		 * let a whole batch of 128 in */
		ctx->light_param = (struct rte_gro_param){
			.gro_types = RTE_GRO_TCP_IPV4,
			.max_flow_num = GRO_HASH_BUCKETS * MAX_GRO_SKBS,
			.max_item_per_flow = RTE_GRO_MAX_BURST_ITEM_NUM,
		};
		return 0;
	}
	/* 64 flows as the kernel's 8 x MAX_GRO_SKBS; 32 items per flow: with
	 * fewer, rte_gro heavy mode merged almost nothing (docs/gro.md) */
	struct rte_gro_param param = {
		.gro_types = RTE_GRO_TCP_IPV4,
		.max_flow_num = GRO_HASH_BUCKETS * MAX_GRO_SKBS,
		.max_item_per_flow = 32,
		.socket_id = (uint16_t)(init->socket_id < 0 ? 0 : init->socket_id),
	};
	ctx->rte_ctx = rte_gro_ctx_create(&param);
	if (!ctx->rte_ctx) {
		snprintf(init->err, init->err_len,
			 "%s: mode=heavy: rte_gro_ctx_create failed on socket %d",
			 init->instance, init->socket_id);
		return -ENOMEM;
	}
	return 0;
}

/* ---- flush at the end of a poll: napi_gro_flush ----------------------- */

static void gro_flush_old(struct gro_ctx *ctx, uint64_t older_than,
			  enum gro_flush_cause cause)
{
	uint64_t now = older_than ? gro_now(ctx) : 0;
	uint32_t bitmask = ctx->bitmask;
	while (bitmask) {
		unsigned bucket = (unsigned)__builtin_ctz(bitmask);
		bitmask &= bitmask - 1;
		struct gro_bucket *b = &ctx->buckets[bucket];
		/* __napi_gro_flush_chain: oldest first, stop at the first
		 * that is young enough */
		while (b->count) {
			struct gro_held *p = &b->slot[b->order[0]];
			if (older_than && now - p->age_tsc < older_than)
				break;
			gro_flush_at(ctx, bucket, 0, cause);
		}
	}
}

static void rte_gro_flush(void *vctx, bool budget_used)
{
	struct gro_ctx *ctx = vctx;
	if (ctx->impl == GRO_IMPL_RTE_LIGHT) {
		/* light mode keeps nothing across polls, budget or not */
		gro_rte_light_flush(ctx, GRO_FLUSH_POLL_END);
		return;
	}
	uint64_t age = budget_used ? ctx->age_cycles : ctx->timeout_cycles;
	gro_rte_flush(ctx, age, age ? GRO_FLUSH_AGE : GRO_FLUSH_POLL_END);
}

static void gro_flush(void *vctx, bool budget_used)
{
	struct gro_ctx *ctx = vctx;
	ctx->polls++;
	if (!ctx->held_count)
		return;
	if (budget_used) {
		/* napi_poll: work == weight → napi_gro_flush(n, HZ >= 1000) */
		gro_flush_old(ctx, ctx->age_cycles,
			      ctx->age_cycles ? GRO_FLUSH_AGE
					      : GRO_FLUSH_POLL_END);
	} else {
		/* napi_complete_done: napi_gro_flush(n, !!timeout); with a
		 * gro_flush_timeout the hrtimer's poll flushes what waited
		 * that long: modelled as "older than the timeout" */
		gro_flush_old(ctx, ctx->timeout_cycles,
			      ctx->timeout_cycles ? GRO_FLUSH_AGE
						  : GRO_FLUSH_POLL_END);
	}
}

uint16_t lrx_gro_release(void *vctx, struct rte_mbuf **pkts, uint16_t max)
{
	struct gro_ctx *ctx = vctx;
	uint32_t avail = ctx->ring_tail - ctx->ring_head;
	uint16_t n = (uint16_t)RTE_MIN(avail, (uint32_t)max);
	for (uint16_t i = 0; i < n; i++)
		pkts[i] = ctx->ring[(ctx->ring_head + i) &
				    (GRO_RELEASE_RING - 1)];
	ctx->ring_head += n;
	return n;
}

static uint32_t gro_held_count(const void *vctx)
{
	const struct gro_ctx *ctx = vctx;
	return ctx->held_count + (ctx->ring_tail - ctx->ring_head);
}

static uint32_t rte_gro_held_count(const void *vctx)
{
	const struct gro_ctx *ctx = vctx;
	uint32_t held = ctx->light_n;
	if (ctx->impl == GRO_IMPL_RTE_HEAVY)
		held = (uint32_t)rte_gro_get_pkt_count(ctx->rte_ctx);
	return held + (ctx->ring_tail - ctx->ring_head);
}


/* ---- the two thin loops ------------------------------------------------- */

/* napi_gro_receive: every packet is consumed (held, merged, or on the
 * release list, gro_normal_list's) */
static __rte_always_inline lrx_next_t gro_one(void *vctx, struct rte_mbuf *pkt)
{
	gro_receive(vctx, pkt);
	return LRX_NEXT_CONSUMED_V;
}

lrx_next_t lrx_gro_process_one(void *vctx, struct rte_mbuf *pkt)
{
	return gro_one(vctx, pkt);
}

lrx_next_t lrx_rte_gro_process_one(void *vctx, struct rte_mbuf *pkt)
{
	gro_rte_burst(vctx, &pkt, 1);
	return LRX_NEXT_CONSUMED_V;
}

static void rte_gro_process_burst(void *vctx, struct rte_mbuf **pkts,
				  uint16_t n, lrx_next_t *nexts)
{
	gro_rte_burst(vctx, pkts, n);
	for (uint16_t i = 0; i < n; i++)
		nexts[i] = LRX_NEXT_CONSUMED_V;
}

static void gro_process_burst(void *vctx, struct rte_mbuf **pkts, uint16_t n,
			      lrx_next_t *nexts)
{
	const struct gro_ctx *ctx = vctx;
	lrx_list_loop(vctx, pkts, n, nexts, ctx->prefetch, gro_one);
}

/* ---- configuration ----------------------------------------------------- */

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
static const char *const gro_clocks[] = {"tsc", "polls", NULL};
static const char *const rte_gro_modes[] = {"heavy", "light", NULL};
static const char *const gro_hashes[] = {"nic", "compute", NULL};
static const char *const gro_early_orders[] = {"kernel", "flow", NULL};

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

static const struct lrx_value_key gro_keys[] = {
	GRO_COMMON_KEYS
	LRX_KEY_CHOICE(struct gro_conf, hash, "hash", "nic", gro_hashes,
		       "the bucket of a flow (skb_get_hash_raw): nic = the NIC's RSS hash, "
		       "none = bucket 0 as on a veth (the kernel) | compute = a hash of the "
		       "flow when the NIC gave none"),
	LRX_KEY_CHOICE(struct gro_conf, early_order, "early_order", "kernel", gro_early_orders,
		       "a segment that leaves GRO before tcp_gro_receive (IP options, a bad "
		       "IP or TCP checksum) goes up before the held packet of its flow "
		       "(kernel) | after it, keeping each flow's order (flow)"),
	LRX_KEY_CHOICE(struct gro_conf, clock, "clock", "tsc", gro_clocks,
		       "what ages held packets: tsc (as the kernel's "
		       "jiffies: merges then depend on timing), or polls: one microsecond per "
		       "poll (flush_age_us and flush_timeout_us count polls), the same in "
		       "every engine on the same input: for tests and engine comparisons"),
	{.name = NULL},
};

static const struct lrx_value_key rte_gro_keys[] = {
	GRO_COMMON_KEYS
	LRX_KEY_CHOICE(struct gro_conf, mode, "mode", "heavy", rte_gro_modes,
		       "DPDK rte_gro as the peer of gro on the same stream "
		       "(TCP/IPv4 only): heavy = rte_gro_reassemble + rte_gro_timeout_flush, "
		       "light = rte_gro_reassemble_burst over each poll's burst, nothing "
		       "held across polls"),
	{.name = NULL},
};

#define GRO_COUNTER(n, field, ...) \
	{.name = n, .offset = offsetof(struct gro_ctx, c.field), __VA_ARGS__}
static const struct lrx_stage_counter gro_counters[] = {
	GRO_COUNTER("segments_in", segments_in, .role = LRX_COUNTER_IN),
	GRO_COUNTER("packets_out", packets_out, .role = LRX_COUNTER_OUT),
	GRO_COUNTER("merged", merged, .role = LRX_COUNTER_MERGED),
	GRO_COUNTER("held", held),
	GRO_COUNTER("flush_flags", flush[GRO_FLUSH_FLAGS]),
	GRO_COUNTER("flush_short", flush[GRO_FLUSH_SHORT]),
	GRO_COUNTER("flush_mismatch", flush[GRO_FLUSH_MISMATCH]),
	GRO_COUNTER("flush_size", flush[GRO_FLUSH_SIZE]),
	GRO_COUNTER("flush_not_eligible", flush[GRO_FLUSH_NOT_ELIGIBLE]),
	GRO_COUNTER("flush_evict", flush[GRO_FLUSH_EVICT]),
	GRO_COUNTER("flush_poll_end", flush[GRO_FLUSH_POLL_END]),
	GRO_COUNTER("flush_age", flush[GRO_FLUSH_AGE]),
	GRO_COUNTER("bad_csum", bad_csum),
	GRO_COUNTER("not_eligible", not_eligible),
	GRO_COUNTER("udp_merged", udp_merged),
	GRO_COUNTER("release_overflow", release_overflow),
	{.name = NULL},
};

/* The keys both descriptors share; clock_polls: ages count polls. */
static void gro_init_common(struct gro_ctx *ctx, const struct lrx_stage_init *init)
{
	const struct gro_conf *conf = init->conf;
	ctx->prefetch = init->prefetch;
	ctx->udp_gro = conf->udp_gro;
	ctx->csum_verify = conf->csum_verify;
	ctx->use_meta = (uint8_t)conf->use_meta;
	/* clock=polls: one poll counts as one microsecond */
	uint64_t hz = ctx->clock_polls ? 1000000 : rte_get_tsc_hz();
	ctx->age_cycles = conf->flush_age_us * hz / 1000000;
	ctx->timeout_cycles = conf->flush_timeout_us * hz / 1000000;
	/* a configured age must not round to "flush all" */
	if (conf->flush_age_us && !ctx->age_cycles)
		ctx->age_cycles = 1;
	if (conf->flush_timeout_us && !ctx->timeout_cycles)
		ctx->timeout_cycles = 1;
	ctx->max_size = conf->max_size;
	ctx->l4_candidates[1] = (uint8_t)(GRO_L4_TCP | (ctx->udp_gro ? GRO_L4_UDP : 0));
	ctx->l4_candidates[0] = (uint8_t)(ctx->l4_candidates[1] | GRO_L4_EXT6);
}

static int gro_init(void *vctx, const struct lrx_stage_init *init)
{
	struct gro_ctx *ctx = vctx;
	/* rte-gro has no clock key: rte_gro_timeout_flush reads the TSC
	 * itself, so only the kernel rules can age by polls */
	const struct gro_conf *conf = init->conf;
	ctx->clock_polls = conf->clock == 1;
	ctx->hash_compute = conf->hash == 1;
	ctx->early_in_order = conf->early_order == 1;
	gro_init_common(ctx, init);
	ctx->impl = GRO_IMPL_KERNEL;
	return 0;
}

static int rte_gro_init(void *vctx, const struct lrx_stage_init *init)
{
	struct gro_ctx *ctx = vctx;
	gro_init_common(ctx, init);
	ctx->impl = ((const struct gro_conf *)init->conf)->mode == 1 ? GRO_IMPL_RTE_LIGHT
								       : GRO_IMPL_RTE_HEAVY;
	return gro_rte_init(ctx, init);
}

static void gro_fini(void *vctx)
{
	struct gro_ctx *ctx = vctx;
	/* the engine drains at exit; anything left is freed, not leaked */
	for (unsigned bucket = 0; bucket < GRO_HASH_BUCKETS; bucket++) {
		struct gro_bucket *b = &ctx->buckets[bucket];
		for (int i = 0; i < b->count; i++)
			rte_pktmbuf_free(b->slot[b->order[i]].head);
		b->count = 0;
		b->used = 0;
	}
	ctx->bitmask = 0;
	ctx->held_count = 0;
	for (uint16_t i = 0; i < ctx->light_n; i++)
		rte_pktmbuf_free(ctx->light[i]);
	ctx->light_n = 0;
	if (ctx->rte_ctx) {
		/* rte_gro_ctx_destroy frees its tables, not the packets */
		gro_rte_flush(ctx, 0, GRO_FLUSH_POLL_END);
		rte_gro_ctx_destroy(ctx->rte_ctx);
		ctx->rte_ctx = NULL;
	}
	while (ctx->ring_head != ctx->ring_tail)
		rte_pktmbuf_free(ctx->ring[ctx->ring_head++ &
					   (GRO_RELEASE_RING - 1)]);
}

static const struct lrx_stage gro = {
	.name = "gro",
	.summary = "generic receive offload: merge TCP (and UDP with udp_gro=on) "
		   "segments as Linux dev_gro_receive",
	.ctx_size = sizeof(struct gro_ctx),
	.keys = gro_keys,
	.conf_size = sizeof(struct gro_conf),
	.counters = gro_counters,
	.provides = LRX_PROVIDES_SKB,
	.init = gro_init,
	.fini = gro_fini,
	.process_one = lrx_gro_process_one,
	.process_burst = gro_process_burst,
	.flush = gro_flush,
	.release = lrx_gro_release,
	.held = gro_held_count,
};
LRX_STAGE_REGISTER(gro)

static const struct lrx_stage rte_gro = {
	.name = "rte-gro",
	.summary = "DPDK rte_gro (heavy, or light with mode=light) over the same "
		   "stream, as the peer of gro (TCP/IPv4 only)",
	.ctx_size = sizeof(struct gro_ctx),
	.keys = rte_gro_keys,
	.conf_size = sizeof(struct gro_conf),
	.counters = gro_counters,
	.provides = LRX_PROVIDES_SKB,
	.init = rte_gro_init,
	.fini = gro_fini,
	.process_one = lrx_rte_gro_process_one,
	.process_burst = rte_gro_process_burst,
	.flush = rte_gro_flush,
	.release = lrx_gro_release,
	.held = rte_gro_held_count,
};
LRX_STAGE_REGISTER(rte_gro)
