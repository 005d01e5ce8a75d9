/* SPDX-License-Identifier: BSD-3-Clause
 * IPv6 reassembly, ipv6_frag_rcv (net/ipv6/reassembly.c), over the queues
 * of reasm.c (inet_fragment.c's part): fq_find's key, ip6_frag_queue's
 * rules, ip6_frag_reasm.
 */
#include <string.h>

#include <rte_ip.h>

#include "l3_modules.h"

static inline bool reasm_ipv6_is_ext(uint8_t nh)
{
	/* ipv6_ext_hdr: hop-by-hop, routing, fragment, AH, none, dest */
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 59 ||
	       nh == 60;
}

/* ipv6frag_thdr_truncated (include/net/ipv6_frag.h): a first fragment
 * whose headers, through the upper-layer header, do not fit in it. */
static bool reasm_ipv6_thdr_truncated(const struct rte_mbuf *m,
				      uint32_t start, uint32_t pkt_end,
				      uint8_t nh)
{
	/* ipv6_skip_exthdr */
	while (reasm_ipv6_is_ext(nh)) {
		uint8_t hp[4];
		if (nh == 59)
			return false;
		const uint8_t *p = rte_pktmbuf_read(m, start, sizeof(hp), hp);
		if (p == NULL || start + 8 > pkt_end)
			return false;
		uint32_t hdrlen;
		if (nh == 44) {
			if (((p[2] << 8) | p[3]) & ~7u)
				return false; /* not the first fragment */
			hdrlen = 8;
		} else if (nh == 51) {
			hdrlen = (p[1] + 2u) << 2;
		} else {
			hdrlen = (p[1] + 1u) << 3;
		}
		nh = p[0];
		start += hdrlen;
	}
	switch (nh) {
	case IPPROTO_TCP: start += 20; break;
	case IPPROTO_UDP: start += 8; break;
	case IPPROTO_ICMPV6: start += 8; break; /* struct icmp6hdr */
	default: start += 1; break;
	}
	return start > pkt_end;
}

/* IP6CB(skb)->nhoff: the next-header byte that names the header at fh. */
static uint16_t reasm_ipv6_nhoff(const uint8_t *frame, uint32_t noff,
				 uint32_t fh)
{
	uint32_t nhpos = noff + 6, pos = noff + sizeof(struct rte_ipv6_hdr);
	uint8_t nh = frame[nhpos];
	while (pos < fh) {
		nhpos = pos;
		const uint32_t len = nh == 51 ? (frame[pos + 1] + 2u) << 2
					      : (frame[pos + 1] + 1u) << 3;
		nh = frame[pos];
		pos += len;
	}
	return (uint16_t)nhpos;
}

/* ip6_frag_reasm (nf_ct_frag6_reasm, counting in mib): fi (m) completed
 * queue qi; m becomes the datagram, its fragment header removed; *toff and
 * *nexthdr name the header after it. CONSUMED when gluing fails (the
 * queue goes, m with it). */
static lrx_next_t reasm_finish_ipv6(struct l3_reasm *r, struct l3_reasm_mib *mib,
				    uint32_t qi, uint32_t fi, struct rte_mbuf *m,
				    struct lrx_meta *meta, uint32_t *toff, uint8_t *nexthdr)
{
	struct l3_reasm_queue *q = rq(r, qi);
	const struct l3_reasm_frag *head = rf(r, q->first);
	const uint32_t head_fh = head->hdr_len - 8u;
	const uint16_t head_noff = head->noff, head_mac_len = head->mac_len;
	const uint32_t payload_len =
		head_fh - head_noff - (uint32_t)sizeof(struct rte_ipv6_hdr) + q->len;
	const uint16_t nhoff = q->nhoff;
	const int ecn = reasm_ecn(q->ecn);
	if (payload_len > REASM_MAXLEN || ecn < 0 ||
	    reasm_glue(r, qi, fi, m) != 0) {
		reasm_queue_free(r, qi, LRX_DROP_FRAG_INVALID);
		mib->fails++;
		return LRX_NEXT_CONSUMED_V;
	}
	/* the fragment header goes: its next header moves to the header
	 * before it, the headers before it move up 8 bytes */
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	const uint8_t next = frame[head_fh];
	frame[nhoff] = next;
	memmove(frame + 8, frame, head_fh);
	rte_pktmbuf_adj(m, 8);
	frame = rte_pktmbuf_mtod(m, uint8_t *);
	meta->network_offset = head_noff;
	meta->mac_len = head_mac_len;
	struct rte_ipv6_hdr *hdr = (struct rte_ipv6_hdr *)(frame + head_noff);
	hdr->payload_len = rte_cpu_to_be_16((uint16_t)payload_len);
	hdr->vtc_flow |= rte_cpu_to_be_32((uint32_t)ecn << 20);
	meta->len = (uint32_t)sizeof(*hdr) + payload_len;
	meta->ip_summed = LRX_CHECKSUM_NONE;
	*toff = head_fh;
	*nexthdr = next;
	/* the extension headers after the fragment header too */
	reasm_pull(m, head_fh + REASM_PULL_L4);
	mib->oks++;
	return LRX_NEXT_CONTINUE_V;
}

/* The part of an IPv6 fragment queue's key both users share (struct
 * frag_v6_compare_key: addresses and the fragment header's id) */
static void reasm_key_ipv6_common(struct l3_reasm_key *key, const struct rte_ipv6_hdr *hdr,
				  const uint8_t *fhdr)
{
	memset(key, 0, sizeof(*key));
	memcpy(key->saddr, hdr->src_addr, 16);
	memcpy(key->daddr, hdr->dst_addr, 16);
	memcpy(&key->id, fhdr + 4, 4);
	key->family = 6;
}

/* fq_find's key of an IPv6 fragment (header fhdr) that came in on port */
static void reasm_key_ipv6(struct l3_reasm_key *key, const struct rte_ipv6_hdr *hdr,
			   const uint8_t *fhdr, uint16_t port)
{
	reasm_key_ipv6_common(key, hdr, fhdr);
	const uint8_t tclass = (uint8_t)(rte_be_to_cpu_32(hdr->vtc_flow) >> 20);
	key->proto_ecn = (uint8_t)(1u << (tclass & 3));
	/* link-local (fe80::/10) and multicast destinations: per device */
	if (hdr->dst_addr[0] == 0xff ||
	    (hdr->dst_addr[0] == 0xfe && (hdr->dst_addr[1] & 0xc0) == 0x80))
		key->iif = port;
}

/* Ip6InHdrErrors and icmpv6_param_prob(skb, code, pointer): the
 * fragment is dropped (or becomes the reply, reply.c) */
static lrx_next_t reasm_hdr_error(struct l3_reasm_hdr_error *err,
				  uint8_t code, uint32_t pointer)
{
	err->counted = true;
	err->icmp_code = code;
	err->icmp_pointer = (uint16_t)pointer;
	return lrx_next_drop(LRX_DROP_IP_INHDR);
}

lrx_next_t l3_reasm_ipv6(struct l3_reasm *r, struct rte_mbuf *m,
			 struct lrx_meta *meta, uint32_t *toff,
			 uint8_t *nexthdr, struct l3_reasm_hdr_error *err)
{
	struct l3_reasm_mib *mib = &r->mib[1];
	const uint32_t noff = meta->network_offset, fh = *toff;
	const uint32_t pkt_end = noff + meta->len;
	uint8_t *frame = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ipv6_hdr *hdr = (struct rte_ipv6_hdr *)(frame + noff);
	err->counted = false;
	mib->reqds++;
	/* fail_hdr: a jumbogram, or no room for the fragment header (in
	 * the first segment, where listrx reads headers); the pointer is
	 * skb_network_header_len, the fragment header's offset */
	if (hdr->payload_len == 0 || fh + 8 > pkt_end || fh + 8 > m->data_len)
		return reasm_hdr_error(err, 0, fh - noff);
	const uint8_t *fhdr = frame + fh;
	const uint16_t frag_off = (uint16_t)((fhdr[2] << 8) | fhdr[3]);
	if ((frag_off & 0xfff9) == 0) {
		/* RFC 6946: an atomic fragment is not queued */
		mib->oks++;
		*toff = fh + 8;
		*nexthdr = fhdr[0];
		return LRX_NEXT_CONTINUE_V;
	}
	/* RFC 8200 4.5: the first fragment holds every header through the
	 * upper-layer one, or it is discarded (Ip6InHdrErrors + ICMP
	 * parameter problem, code 3 (ICMPV6_HDR_INCOMP), pointer 0; checked
	 * against Linux 6.18) */
	if (reasm_ipv6_thdr_truncated(m, noff + sizeof(*hdr), pkt_end,
				      hdr->proto))
		return reasm_hdr_error(err, 3, 0);
	struct l3_reasm_key key;
	reasm_key_ipv6(&key, hdr, fhdr, m->port);
	const uint32_t qi = reasm_find(r, &key);
	if (qi == 0) {
		mib->fails++;
		return lrx_next_drop(LRX_DROP_NOMEM);
	}
	struct l3_reasm_queue *q = rq(r, qi);

	/* ip6_frag_queue */
	const uint32_t offset = frag_off & 0xfff8u;
	const uint32_t end = offset + (pkt_end - (fh + 8));
	enum lrx_drop_reason reason = LRX_DROP_FRAG_INVALID;
	const bool last = !(frag_off & 1);
	/* ip6_frag_queue's prob_offset: a parameter problem at frag_off,
	 * or (RFC 2460) at the payload length; the queue stays */
	if (end > REASM_MAXLEN)
		return reasm_hdr_error(err, 0, fh + 2 - noff);
	if (!last && (end & 7))
		return reasm_hdr_error(err, 0, 4);
	if (!reasm_end_ok(q, end, last) || end == offset)
		goto discard_fq;
	uint32_t fi;
	const lrx_next_t queued = reasm_queue_frag(r, q, mib, m, meta, offset, end,
						   fh + 8, &fi);
	if (queued == lrx_next_drop(LRX_DROP_FRAG_OVERLAP)) {
		reason = LRX_DROP_FRAG_OVERLAP;
		goto discard_fq;
	}
	if (queued != LRX_NEXT_CONTINUE_V)
		return queued;
	q->ecn |= key.proto_ecn;
	q->max_size = (uint16_t)RTE_MAX((uint32_t)q->max_size, meta->len);
	if (offset == 0)
		q->nhoff = reasm_ipv6_nhoff(frame, noff, fh);
	if (!reasm_complete(q))
		return LRX_NEXT_CONSUMED_V;

	/* ip6_frag_reasm; any failure kills the queue, m with it */
	return reasm_finish_ipv6(r, mib, qi, fi, m, meta, toff, nexthdr);

discard_fq:
	reasm_queue_free(r, qi, reason);
	mib->fails++;
	return lrx_next_drop(reason);
}

/* ---- nf_defrag_ipv6: nf_ct_frag6_gather ----------------------------------- */

/* find_prev_fhdr: the fragment header's offset, walking the extension
 * headers from the fixed header (hop-by-hop included); *nhoff the byte
 * that names it. False when there is none or the chain ends first. */
static bool reasm_ct_find_fhdr(const struct rte_mbuf *m, uint32_t noff, uint32_t pkt_end,
			       uint32_t *fh, uint32_t *nhoff)
{
	uint32_t start = noff + sizeof(struct rte_ipv6_hdr), prev = noff + 6;
	uint8_t nh = rte_pktmbuf_mtod(m, const uint8_t *)[prev];
	int32_t len = (int32_t)(pkt_end - start);
	while (nh != 44) {
		uint8_t buf[2];
		if (!reasm_ipv6_is_ext(nh) || nh == 59 || len < 2)
			return false;
		const uint8_t *p = rte_pktmbuf_read(m, start, 2, buf);
		if (p == NULL)
			return false;
		const uint32_t hdrlen = nh == 51 ? (p[1] + 2u) << 2 : (p[1] + 1u) << 3;
		prev = start;
		nh = p[0];
		len -= (int32_t)hdrlen;
		start += hdrlen;
	}
	if (len < 0)
		return false;
	*fh = start;
	*nhoff = prev;
	return true;
}

/* nf_ct_frag6_gather's fq_find key: its own user, and the device always */
static void reasm_key_ct6(struct l3_reasm_key *key, const struct rte_ipv6_hdr *hdr,
			  const uint8_t *fhdr, uint16_t port)
{
	reasm_key_ipv6_common(key, hdr, fhdr);
	key->iif = port;
	key->user = REASM_USER_CONNTRACK_IN;
}

/* nf_ct_frag6_queue's -EINVAL with the queue left as it is: the packet
 * is dropped (NF_DROP). A queue this fragment created holds nothing: it
 * goes at once (the kernel's would expire uncounted, with no fragment to
 * name its device). */
static lrx_next_t reasm_ct_invalid(struct l3_reasm *r, uint32_t qi)
{
	if (rq(r, qi)->n_frags == 0)
		reasm_queue_free(r, qi, LRX_DROP_FRAG_INVALID);
	return lrx_next_drop(LRX_DROP_NETFILTER_DROP);
}

/* nf_ct_frag6_queue from the length checks on, and nf_ct_frag6_reasm when
 * the datagram is complete */
static lrx_next_t reasm_ct_queue(struct l3_reasm *r, uint32_t qi, struct rte_mbuf *m,
				 struct lrx_meta *meta, uint32_t fh, uint32_t nhoff,
				 uint32_t offset, uint32_t end, bool last)
{
	struct l3_reasm_mib *mib = &r->nf6_mib;
	struct l3_reasm_queue *q = rq(r, qi);
	if (!reasm_end_ok(q, end, last) || end == offset)
		return reasm_ct_invalid(r, qi);
	uint32_t fi;
	const lrx_next_t queued = reasm_queue_frag(r, q, mib, m, meta, offset, end,
						   fh + 8, &fi);
	if (queued == lrx_next_drop(LRX_DROP_DUP_FRAG)) /* kfree_skb: stolen */
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	if (queued == lrx_next_drop(LRX_DROP_FRAG_OVERLAP)) {
		/* RFC 5722: the whole queue goes (insert_error:
		 * inet_frag_kill), the fragment with NF_DROP */
		reasm_queue_free(r, qi, LRX_DROP_FRAG_OVERLAP);
		mib->fails++;
		return lrx_next_drop(LRX_DROP_NETFILTER_DROP);
	}
	if (queued != LRX_NEXT_CONTINUE_V)
		return queued;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t tclass = (uint8_t)(((frame[meta->network_offset] & 0xf) << 4) |
					 (frame[meta->network_offset + 1] >> 4));
	q->ecn |= (uint8_t)(1u << (tclass & 3)); /* ip6_frag_ecn */
	q->max_size = (uint16_t)RTE_MAX((uint32_t)q->max_size, meta->len);
	if (offset == 0)
		q->nhoff = (uint16_t)nhoff;
	if (!reasm_complete(q))
		return LRX_NEXT_CONSUMED_V;
	uint32_t toff;
	uint8_t nexthdr;
	return reasm_finish_ipv6(r, mib, qi, fi, m, meta, &toff, &nexthdr);
}

lrx_next_t l3_reasm_ipv6_ct(struct l3_reasm *r, struct rte_mbuf *m,
			    struct lrx_meta *meta)
{
	const uint32_t noff = meta->network_offset;
	const uint32_t pkt_end = noff + meta->len;
	const struct rte_ipv6_hdr *hdr =
		rte_pktmbuf_mtod_offset(m, const struct rte_ipv6_hdr *, noff);
	uint32_t fh, nhoff;
	/* a jumbogram, no fragment header, or a first fragment without all
	 * its headers (RFC 8200 4.5): on, unchanged */
	if (hdr->payload_len == 0 || !reasm_ct_find_fhdr(m, noff, pkt_end, &fh, &nhoff) ||
	    reasm_ipv6_thdr_truncated(m, fh, pkt_end, 44))
		return LRX_NEXT_CONTINUE_V;
	/* pskb_may_pull of the fragment header (-ENOMEM) */
	if (fh + 8 > pkt_end || fh + 8 > m->data_len)
		return lrx_next_drop(LRX_DROP_NETFILTER_DROP);
	r->nf6_mib.reqds++;
	const uint8_t *fhdr = rte_pktmbuf_mtod(m, const uint8_t *) + fh;
	const uint16_t frag_off = (uint16_t)((fhdr[2] << 8) | fhdr[3]);
	const uint32_t offset = frag_off & 0xfff8u;
	const uint32_t end = offset + (pkt_end - (fh + 8));
	const bool last = !(frag_off & 1);
	struct l3_reasm_key key;
	reasm_key_ct6(&key, hdr, fhdr, m->port);
	/* nf_ct_frag6_queue's checks that do not read the queue: too long
	 * (-EINVAL), or not a multiple of 8 bytes (-EPROTO: inet_frag_kill,
	 * the fragment goes on for ipv6_frag_rcv to answer) */
	if (end > REASM_MAXLEN)
		return lrx_next_drop(LRX_DROP_NETFILTER_DROP);
	if (!last && (end & 7)) {
		const uint32_t qi = reasm_lookup(r, &key);
		if (qi) {
			reasm_queue_free(r, qi, LRX_DROP_FRAG_INVALID);
			r->nf6_mib.fails++;
		}
		return LRX_NEXT_CONTINUE_V;
	}
	const uint32_t qi = reasm_find(r, &key);
	if (qi == 0) { /* fq_find: -ENOMEM */
		r->nf6_mib.fails++;
		return lrx_next_drop(LRX_DROP_NETFILTER_DROP);
	}
	const lrx_next_t next = reasm_ct_queue(r, qi, m, meta, fh, nhoff, offset, end, last);
	if (next != LRX_NEXT_CONTINUE_V)
		return next;
	/* the datagram has the first fragment's headers: the one after the
	 * hop-by-hop header (or the fixed one), as ip6_rcv_core names it */
	const uint8_t *ip = rte_pktmbuf_mtod(m, const uint8_t *) + meta->network_offset;
	uint32_t toff = (uint32_t)sizeof(struct rte_ipv6_hdr);
	uint8_t nexthdr = ip[6];
	if (nexthdr == 0) { /* NEXTHDR_HOP */
		nexthdr = ip[toff];
		toff += (ip[toff + 1] + 1u) << 3;
	}
	meta->transport_offset = (uint16_t)(meta->network_offset + toff);
	meta->l4_proto = nexthdr;
	return LRX_NEXT_CONTINUE_V;
}
