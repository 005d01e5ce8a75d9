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
 * The peer, DPDK rte_gro, is a second descriptor, rte-gro (rte_gro.c),
 * over the same context, parser, counters and release list
 * (gro_internal.h): the kernel GRO path carries no branch for it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "prefetch.h"
#include "stage_keys.h"
#include "static_entries.h"
#include "gro_internal.h"

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

static void gro_process_burst(void *vctx, struct rte_mbuf **pkts, uint16_t n,
			      lrx_next_t *nexts)
{
	const struct gro_ctx *ctx = vctx;
	lrx_list_loop(vctx, pkts, n, nexts, ctx->prefetch, gro_one);
}

/* ---- configuration ----------------------------------------------------- */

static const char *const gro_clocks[] = {"tsc", "polls", NULL};
static const char *const gro_hashes[] = {"nic", "compute", NULL};
static const char *const gro_early_orders[] = {"kernel", "flow", NULL};

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

#define GRO_COUNTER(n, field, ...) \
	{.name = n, .offset = offsetof(struct gro_ctx, c.field), __VA_ARGS__}
const struct lrx_stage_counter gro_counters[] = {
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
void gro_init_common(struct gro_ctx *ctx, const struct lrx_stage_init *init)
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
	gro_release_free(ctx);
}

static LRX_STAGE_DEFINE(gro, struct gro_ctx, struct gro_conf,
		 gro_keys, gro_counters,
	.name = "gro",
	.summary = "generic receive offload: merge TCP (and UDP with udp_gro=on) "
		   "segments as Linux dev_gro_receive",
	.provides = LRX_PROVIDES_SKB,
	.init = gro_init,
	.fini = gro_fini,
	.process_one = lrx_gro_process_one,
	.process_burst = gro_process_burst,
	.flush = gro_flush,
	.release = lrx_gro_release,
	.held = gro_held_count,
)
