/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv4 and IPv6 reassembly for l3-demux, with the kernel's rules
 * (net/ipv4/ip_fragment.c, net/ipv6/reassembly.c, net/ipv4/inet_fragment.c):
 * l3-demux's module reasm (reasm.c). The tables are allocated at init. */
#ifndef LRX_L3_REASM_H
#define LRX_L3_REASM_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "meta.h"
#include "stage.h"

/* IPSTATS_MIB_REASM* of one family, as nstat names them. */
struct l3_reasm_mib {
	uint64_t reqds;    /* IpReasmReqds: every fragment handed to ip_defrag */
	uint64_t oks;      /* IpReasmOKs: datagrams reassembled */
	uint64_t fails;    /* IpReasmFails: per queue, not per fragment */
	uint64_t timeout;  /* IpReasmTimeout: queues expired (ip_expire) */
	uint64_t overlaps; /* IpExtReasmOverlaps (Ip6ReasmOverlaps) */
};

struct l3_reasm_queue;
struct l3_reasm_frag;
struct l3_reasm_peer;

struct l3_reasm {
	struct l3_reasm_mib mib[2];   /* [0] IPv4, [1] IPv6 */
	uint64_t frags_joined;        /* fragments appended to a datagram */
	uint64_t frags_dropped;       /* fragments discarded with their queue */
	uint64_t mem;                 /* bytes held, both families */
	uint64_t fam_mem[2];          /* frag_mem_limit of each: [0] IPv4, [1] IPv6 */
	uint64_t queues_now;          /* queues alive */
	uint64_t frags_now;           /* fragments held */

	/* configuration */
	uint64_t high_thresh;         /* ipfrag_high_thresh, bytes */
	uint64_t timeout;             /* ipfrag_time in clock units */
	bool clock_polls;             /* ipfrag_clock=polls */
	uint32_t max_dist;            /* ipfrag_max_dist, 0 = off */
	uint64_t polls;               /* poll ends so far */

	/* tables (rte_zmalloc'd at init) */
	uint32_t cap;                 /* queues and fragment records */
	uint32_t hash_mask;
	uint32_t *hash;               /* bucket -> first queue index + 1 */
	struct l3_reasm_queue *queues;
	struct l3_reasm_frag *frags;
	uint32_t free_queue, free_frag; /* free lists, index + 1 */
	/* fragments of killed queues until the drop hook hands them to
	 * the sink (their records stay in use until then); per family, IPv4
	 * first, so that the order does not depend on how an engine's
	 * sublists interleave the families */
	uint32_t discard_head[2], discard_tail[2];
	uint32_t lru_head, lru_tail;  /* queues by expiry, index + 1 */
	/* inet_peer: per IPv4 source, the fragments seen (ip_frag_too_far);
	 * kept while a queue of the source lives */
	uint32_t *peer_hash;
	struct l3_reasm_peer *peers;
	uint32_t free_peer;
};

/* The ipfrag_* keys of l3-demux. */
struct l3_reasm_conf {
	uint32_t time_s;       /* ipfrag_time */
	uint32_t high_thresh;  /* ipfrag_high_thresh */
	uint32_t max_dist;     /* ipfrag_max_dist */
	unsigned clock;        /* ipfrag_clock: 0 tsc, 1 polls */
};
/* ip_local_deliver -> ip_defrag for an IPv4 fragment whose header checks
 * passed (meta->len trimmed, transport_offset set). Returns CONSUMED (the
 * fragment is held, or freed with its queue), a drop, or CONTINUE: m is
 * now the whole datagram (an mbuf chain, header rewritten as
 * ip_frag_reasm does) and meta describes it. */
lrx_next_t l3_reasm_ipv4(struct l3_reasm *r, struct rte_mbuf *m,
			 struct lrx_meta *meta);

/* Which IPv6 MIB counter (outside the reassembly MIB) a verdict moves. */
enum l3_reasm_ip_mib {
	L3_REASM_IP_MIB_NONE,
	L3_REASM_IP_MIB_HDR_ERRORS,     /* Ip6InHdrErrors (parameter problem) */
};

/* ipv6_frag_rcv for the fragment header at *toff. CONTINUE: *toff and
 * *nexthdr name the header after it (an atomic fragment, RFC 6946, or the
 * reassembled datagram, whose fragment header is removed as
 * ip6_frag_reasm does); otherwise CONSUMED or a drop, counting *ip_mib. */
lrx_next_t l3_reasm_ipv6(struct l3_reasm *r, struct rte_mbuf *m,
			 struct lrx_meta *meta, uint32_t *toff,
			 uint8_t *nexthdr, enum l3_reasm_ip_mib *ip_mib);

/* pskb_trim_rcsum: cut the packet to len bytes. Padding in the last
 * segment is the common case; otherwise the chain is cut and the segments
 * past len are freed, as pskb_trim drops the frags past the new end. */
static inline void l3_trim_to(struct rte_mbuf *m, uint32_t len)
{
	const uint32_t excess = m->pkt_len - len;
	if (excess <= UINT16_MAX && rte_pktmbuf_trim(m, (uint16_t)excess) == 0)
		return;
	struct rte_mbuf *seg = m;
	uint32_t left = len;
	uint16_t nb_segs = 1;
	while (left > seg->data_len) {
		left -= seg->data_len;
		seg = seg->next;
		nb_segs++;
	}
	struct rte_mbuf *rest = seg->next;
	seg->data_len = (uint16_t)left;
	seg->next = NULL;
	m->nb_segs = nb_segs;
	m->pkt_len = len;
	while (rest) {
		struct rte_mbuf *next = rest->next;
		rte_pktmbuf_free_seg(rest);
		rest = next;
	}
}

#endif
