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

/* The fqdirs whose memory is counted apart, each with its own
 * high_thresh: IPv4's and IPv6's (net->ipv4.fqdir, net->ipv6.fqdir) and
 * nf_defrag_ipv6's (nf_frag_pernet's fqdir, nf_conntrack_frag6_*) */
enum l3_reasm_dir { REASM_DIR_IPV4, REASM_DIR_IPV6, REASM_DIR_NF6, REASM_DIRS };
/* the queues by expiry, one list per timeout: ipfrag_time (both
 * families' ipv6_frag_rcv and ip_defrag), nf_conntrack_frag6_timeout */
enum { REASM_LRU_FRAG, REASM_LRU_NF6, REASM_LRUS };

/* the key's user (ip_defrag_users / ip6_defrag_users): nf_ct_frag6_gather
 * keys with IP6_DEFRAG_CONNTRACK_IN, so its queues are not
 * ipv6_frag_rcv's (IP6_DEFRAG_LOCAL_DELIVER) */
enum { REASM_USER_LOCAL_DELIVER, REASM_USER_CONNTRACK_IN };

struct l3_reasm {
	struct l3_reasm_mib mib[2];   /* [0] IPv4, [1] IPv6 */
	/* nf_ct_frag6_gather's own (no SNMP counter: the kernel counts
	 * only its timeouts, as Ip6ReasmFails + Ip6ReasmTimeout) */
	struct l3_reasm_mib nf6_mib;
	uint64_t frags_joined;        /* fragments appended to a datagram */
	uint64_t frags_dropped;       /* fragments discarded with their queue */
	uint64_t mem;                 /* bytes held, all fqdirs */
	uint64_t fam_mem[REASM_DIRS]; /* frag_mem_limit of each fqdir */
	uint64_t queues_now;          /* queues alive */
	uint64_t frags_now;           /* fragments held */

	/* configuration */
	uint64_t high_thresh[REASM_DIRS]; /* ipfrag_high_thresh, ..., bytes */
	uint64_t timeout[REASM_LRUS]; /* ipfrag_time, nf_conntrack_frag6_timeout,
				       * in clock units */
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
	/* first fragments of expired queues that became their ICMP time
	 * exceeded (ip_expire), in expiry order, until the send hook; per
	 * family, IPv4 first, as the discard lists */
	uint32_t send_head[2], send_tail[2];
	uint32_t lru_head[REASM_LRUS], lru_tail[REASM_LRUS]; /* index + 1 */
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
	uint32_t nf6_time_s;       /* nf_conntrack_frag6_timeout */
	uint32_t nf6_high_thresh;  /* nf_conntrack_frag6_high_thresh */
};
/* ---- shared by reasm.c and reasm_ipv6.c (net/ipv4/inet_fragment.c) ---- */

enum { REASM_FIRST_IN = 1, REASM_LAST_IN = 2 };
/* reasm_queue_free of a reassembled queue: its mbufs live on in the
 * datagram, only the records go (not a drop reason) */
enum { REASM_JOINED = LRX_DROP_MAX };
enum { REASM_INSERT_OK, REASM_INSERT_DUP, REASM_INSERT_OVERLAP };

/* IPFRAG_ECN_*: 1 << the ECN bits of a fragment (ip4_frag_ecn) */
enum { REASM_ECN_NOT_ECT = 1, REASM_ECN_CE = 8 };

#define REASM_MAXLEN 65535u /* IP_MAX_MTU / IPV6_MAXPLEN */
#define REASM_MIN_TRUESIZE 256u
/* bytes past the transport offset pulled into the first segment: the
 * largest TCP header */
#define REASM_PULL_L4 60u

/* No padding: hashed and compared as bytes. */
struct l3_reasm_key {
	uint8_t saddr[16];
	uint8_t daddr[16];
	uint32_t id;          /* IPv4: the 16-bit id; IPv6: identification */
	uint16_t iif;         /* IPv6 scoped destinations (nf: all): the port */
	uint8_t family;       /* 4 or 6 */
	uint8_t proto_ecn;    /* IPv4: protocol; IPv6: ip6_frag_ecn (nf: 0) */
	uint8_t user;         /* REASM_USER_* */
	uint8_t pad[3];
};

/* the fqdir of a queue's key */
static inline enum l3_reasm_dir reasm_dir(const struct l3_reasm_key *key)
{
	if (key->family == 4)
		return REASM_DIR_IPV4;
	return key->user == REASM_USER_CONNTRACK_IN ? REASM_DIR_NF6 : REASM_DIR_IPV6;
}

struct l3_reasm_queue {
	struct l3_reasm_key key;
	uint64_t expires;
	uint32_t hash_next;       /* indexes are + 1: 0 is none */
	uint32_t lru_prev, lru_next;
	uint32_t first, tail;     /* fragments by offset; tail: highest end */
	uint32_t len, meat;       /* q.len, q.meat */
	uint32_t truesize;        /* what the queue adds to r->mem */
	uint32_t n_frags;
	uint16_t max_size, max_df_size;
	uint16_t nhoff;           /* IPv6: the byte that names the fragment
				   * header, in the first fragment */
	uint8_t flags, ecn;
	uint32_t peer;            /* IPv4 with ipfrag_max_dist: qp->peer */
	uint32_t rid;             /* qp->rid */
};

struct l3_reasm_peer {
	uint32_t saddr;           /* network order */
	uint32_t rid;             /* peer->rid: fragments seen */
	uint32_t refs;            /* queues of this source */
	uint32_t next;
};

struct l3_reasm_frag {
	struct rte_mbuf *m;
	uint32_t offset, end;
	uint32_t run;             /* the run head (FRAG_CB's run) */
	uint32_t run_end;         /* run heads: end of the run */
	uint32_t truesize;
	uint32_t next;
	uint16_t hdr_len;         /* bytes before the fragment's data */
	uint8_t drop;             /* discarded: its enum lrx_drop_reason */
	uint8_t pkt_type;         /* these four: its meta's, kept here: a */
	uint16_t noff, mac_len;   /* metadata ring (build-meta placement=pool)
				   * may reuse a held packet's slot */
	uint16_t vlan_vid;
};

static inline struct l3_reasm_queue *rq(struct l3_reasm *r, uint32_t i)
{
	return &r->queues[i - 1];
}
static inline struct l3_reasm_frag *rf(struct l3_reasm *r, uint32_t i)
{
	return &r->frags[i - 1];
}
static inline struct l3_reasm_peer *rp(struct l3_reasm *r, uint32_t i)
{
	return &r->peers[i - 1];
}

/* ip_frag_ecn_table: 0xff = an invalid mix (not-ECT with ECT or CE) */
static inline int reasm_ecn(uint8_t ecn)
{
	if ((ecn & REASM_ECN_NOT_ECT) && (ecn & ~REASM_ECN_NOT_ECT))
		return -1;
	return (ecn & REASM_ECN_CE) ? 3 : 0;
}

/* The completing fragment fi (mbuf m) becomes the head and the others are
 * chained after it in offset order. Returns 0, or -errno with the queue
 * untouched. On success the queue's records are freed (not the mbufs). */

static inline bool reasm_complete(const struct l3_reasm_queue *q)
{
	return q->flags == (REASM_FIRST_IN | REASM_LAST_IN) &&
	       q->meat == q->len;
}

/* reasm.c's queues and fragments, as each family's receive uses them */
uint32_t reasm_find(struct l3_reasm *r, const struct l3_reasm_key *key);
uint32_t reasm_lookup(struct l3_reasm *r, const struct l3_reasm_key *key);
void reasm_queue_free(struct l3_reasm *r, uint32_t qi, unsigned drop);
bool reasm_end_ok(struct l3_reasm_queue *q, uint32_t end, bool last);
lrx_next_t reasm_queue_frag(struct l3_reasm *r, struct l3_reasm_queue *q,
			    struct l3_reasm_mib *mib, struct rte_mbuf *m,
			    const struct lrx_meta *meta, uint32_t offset,
			    uint32_t end, uint32_t hdr_len, uint32_t *fi);
int reasm_glue(struct l3_reasm *r, uint32_t qi, uint32_t fi, struct rte_mbuf *m);
void reasm_pull(struct rte_mbuf *m, uint32_t len);

/* ip_local_deliver -> ip_defrag for an IPv4 fragment whose header checks
 * passed (meta->len trimmed, transport_offset set). Returns CONSUMED (the
 * fragment is held, or freed with its queue), a drop, or CONTINUE: m is
 * now the whole datagram (an mbuf chain, header rewritten as
 * ip_frag_reasm does) and meta describes it. */
lrx_next_t l3_reasm_ipv4(struct l3_reasm *r, struct rte_mbuf *m,
			 struct lrx_meta *meta);

/* A header error of ipv6_frag_rcv: Ip6InHdrErrors and the ICMPv6
 * parameter problem it sends (icmpv6_param_prob: code, and the pointer
 * from the network header). */
struct l3_reasm_hdr_error {
	bool counted;
	uint8_t icmp_code;      /* ICMPV6_HDR_FIELD 0, ICMPV6_HDR_INCOMP 3 */
	uint16_t icmp_pointer;
};

/* ipv6_frag_rcv for the fragment header at *toff. CONTINUE: *toff and
 * *nexthdr name the header after it (an atomic fragment, RFC 6946, or the
 * reassembled datagram, whose fragment header is removed as
 * ip6_frag_reasm does); otherwise CONSUMED or a drop, with *err counted
 * where it says so (each of those sends a parameter problem). */
lrx_next_t l3_reasm_ipv6(struct l3_reasm *r, struct rte_mbuf *m,
			 struct lrx_meta *meta, uint32_t *toff,
			 uint8_t *nexthdr, struct l3_reasm_hdr_error *err);

/* nf_ct_frag6_gather (nf_defrag_ipv6's ipv6_defrag at PREROUTING -400)
 * for an IPv6 packet that passed ip6_rcv_core: CONTINUE with m unchanged
 * (no fragment header, a jumbogram, a first fragment without its
 * upper-layer header, a fragment that is not a multiple of 8: what the
 * kernel hands on for ipv6_frag_rcv to judge), CONTINUE with m the whole
 * datagram (its fragment header removed; meta->transport_offset and
 * l4_proto name the header after the hop-by-hop one, as ip6_rcv_core
 * left them), CONSUMED (queued: NF_STOLEN), or a drop (-EINVAL and
 * -ENOMEM: NF_DROP, NETFILTER_DROP). Counts no SNMP counter. */
lrx_next_t l3_reasm_ipv6_ct(struct l3_reasm *r, struct rte_mbuf *m,
			    struct lrx_meta *meta);

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
