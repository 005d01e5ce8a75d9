/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux: ip_rcv / ipv6_rcv / arp_rcv and the L4 protocol dispatch, in
 * the kernel's order, with its drop reasons and SNMP counters.
 *
 * Two levels of handler tables, each entry a pair of function pointers
 * (one packet / one sublist) around one inline core:
 *   by ethertype (the kernel's packet_type list: deliver_skb's pt->func):
 *     IPv4, IPv6, ARP; anything else drops UNHANDLED_PROTO;
 *   by IP protocol (inet_protos / inet6_protos): UDP, TCP, ICMP, ICMPv6;
 *     anything else drops IP_NOPROTO (ip_protocol_deliver_rcu).
 * dispatch=direct (the default) turns the calls to the two common entries
 * into direct calls, as INDIRECT_CALL_2 / INDIRECT_CALL_INET do in every
 * kernel built with CONFIG_RETPOLINE (distributions' kernels, whether or
 * not the mitigation is on at run time).
 *
 * The burst path is the kernel's list path: the burst is split into runs
 * of the same ethertype handler (__netif_receive_skb_list_core) and each
 * run goes to its handler in one call (ip_list_rcv); that handler checks
 * every packet (ip_rcv_core), reuses the previous packet's route lookup
 * when the destination is unchanged (ip_can_use_hint) and splits the
 * survivors into runs of the same L4 handler, one call each
 * (ip_sublist_rcv). Same verdicts and counters as the per-packet path.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "listrx_build.h"
#include "exthdrs.h"
#include "l3_demux.h"
#include "reasm.h"
#include "mcast.h"
#include "meta.h"
#include "netfilter/netfilter.h"
#include "reply.h"
#include "sockets/tcp_ehash.h"
#include "sockets/udp_socket.h"
#include "prefetch.h"
#include "static_entries.h"
#include "stage.h"

enum { L3_FAMILY_V4 = 0, L3_FAMILY_V6 = 1, L3_FAMILIES = 2 };

/* IPSTATS_MIB_* of one family */
struct l3_ip_mib {
	uint64_t in_receives;
	uint64_t in_hdr_errors;
	uint64_t in_csum_errors;
	uint64_t in_truncated_pkts;
	uint64_t in_addr_errors;
	uint64_t in_unknown_protos;
	uint64_t in_discards;
	uint64_t in_delivers;
	uint64_t in_mcast_pkts;
	uint64_t in_bcast_pkts;
	uint64_t in_mcast_octets;
	uint64_t in_bcast_octets;
};
struct l3_udp_mib {
	uint64_t in_datagrams, no_ports, in_errors, in_csum_errors;
	uint64_t ignored_multi;
};
struct l3_tcp_mib {
	uint64_t in_segs, in_errs, in_csum_errors;
};
struct l3_icmp_mib {
	uint64_t in_msgs, in_errors, in_csum_errors, in_echos;
};

struct l3_ctx;

/* [stage.l3-demux] list_split, in the order of its choices after auto */
enum l3_split {
	L3_SPLIT_GATHER = 1, /* a sublist per class */
	L3_SPLIT_RUNS,       /* runs of consecutive packets of one class */
	L3_SPLIT_NONE,       /* no sublists: the per-packet path in a loop */
};

/* One protocol handler: one packet, or a sublist of pkts[idx[0..n-1]].
 * The first level (l3_table) is called with a contiguous run, idx[k] == k
 * and the arrays based at the run's start: the IP list handlers index by
 * k without the indirection. */
typedef lrx_next_t (*l3_rcv_fn)(struct l3_ctx *c, struct rte_mbuf *m,
				struct lrx_meta *meta);
typedef void (*l3_list_rcv_fn)(struct l3_ctx *c, struct rte_mbuf **pkts,
			       struct lrx_meta *const *metas,
			       const uint16_t *idx, uint16_t n,
			       lrx_next_t *nexts);
struct l3_handler {
	const char *name;
	l3_rcv_fn rcv;
	l3_list_rcv_fn list_rcv;
};

/* ethertype classes: index of the first-level table */
enum l3_class { L3_CLASS_OTHER, L3_CLASS_IPV4, L3_CLASS_IPV6, L3_CLASS_ARP,
		L3_CLASS_MAX };

struct l3_ctx {
	/* configuration, read for every packet */
	bool direct;             /* dispatch=direct (INDIRECT_CALL_2) */
	uint16_t prefetch;       /* packets ahead in the list loops */
	bool trust_ip_csum_hint;
	bool martians_drop;
	bool route_hint;
	enum l3_split split;     /* list_split, auto resolved */
	bool reply_later;        /* in the list path: replies after it */
	bool udp_any, tcp_any;
	bool mip6;               /* ipv6_mip6: CONFIG_IPV6_MIP6's rules */
	uint8_t n_local4, n_local6;
	uint32_t local4[L3_LOCAL_ADDR_MAX];         /* network order */
	uint8_t local6[L3_LOCAL_ADDR_MAX][16];
	uint8_t plen4[L3_LOCAL_ADDR_MAX], plen6[L3_LOCAL_ADDR_MAX];
	uint32_t arp_ip;         /* network order, 0 = no ARP replies */
	bool arp_mac_from_port;
	struct rte_ether_addr arp_mac;
	const struct l3_handler *l3_table[L3_CLASS_MAX];
	const struct l3_handler *l4_table[L3_FAMILIES][256];

	/* SNMP counters, as nstat names them (descriptor `counters`) */
	struct l3_ip_mib ip[L3_FAMILIES];
	struct l3_udp_mib udp[L3_FAMILIES];
	struct l3_tcp_mib tcp;   /* one TCP MIB for both families, as the kernel */
	struct l3_icmp_mib icmp[L3_FAMILIES];
	uint64_t tcp_no_socket;
	/* listrx counters */
	uint64_t rx_otherhost_dropped; /* dev_core_stats_rx_otherhost_dropped */
	uint64_t rx_dropped;           /* no packet_type for the ethertype:
					* dev_core_stats_rx_dropped */
	uint64_t in_martian_src;       /* rt_cache stat in_martian_src */
	uint64_t in_martian_dst;
	uint64_t ip_csum_verified;
	uint64_t ip_csum_hint_skipped;
	uint64_t l4_csum_verified;
	uint64_t l4_csum_hint_skipped;
	uint64_t l3_trimmed;           /* pskb_trim_rcsum removed padding */
	uint64_t udp_trimmed;
	uint64_t route_lookups;
	uint64_t route_hint_hits;      /* ip_can_use_hint: lookup reused */
	uint64_t arp_in;
	uint64_t arp_replies;
	uint64_t l3_sublists;          /* handler calls of the list path */
	uint64_t l4_sublists;

	uint64_t udp_ports[1024];      /* bitmap of bound ports */
	uint64_t tcp_ports[1024];

	/* the same two per ingress port, as each net_device counts them */
	struct l3_dev_stats {
		uint64_t rx_dropped, rx_otherhost_dropped;
	} dev[RTE_MAX_ETHPORTS];

	struct l3_reasm reasm;         /* ip_defrag / ipv6_frag_rcv (reasm.c) */
	struct l3_mcast mc;            /* joined groups, broadcasts */
	struct l3_reply reply;         /* ICMP and TCP replies (reply.c) */

	/* netfilter's IPv4 hooks (key netfilter): NULL, no rules, is the
	 * kernel's nf_hooks_needed off (NF_HOOK calls okfn directly) */
	struct lrx_nf *nf;
	struct lrx_nf_counter *nf_ctr; /* this instance's rule counters */
	uint64_t nf_drops[LRX_NF_HOOKS];

	/* UDP sockets (key udp_sockets, stages/sockets): NULL, none, is
	 * udp_ports deciding and every datagram with a port delivered */
	struct lrx_udp_socks *socks;
	uint64_t udp_rcvbuf_errors[L3_FAMILIES]; /* UDP_MIB_RCVBUFERRORS */

	/* TCP's established sockets (key tcp_ehash, stages/sockets): one
	 * table per family; without the key none (no buckets) and the TCP
	 * handler without the lookup */
	struct lrx_tcp_ehash ehash[L3_FAMILIES];
	uint64_t tcp_ehash_hits, tcp_ehash_inserted, tcp_ehash_full;
	uint64_t tcp_reqq_full_do_cookies; /* LINUX_MIB_TCPREQQFULLDOCOOKIES */
	uint64_t tcp_listen_overflows;     /* LINUX_MIB_LISTENOVERFLOWS */
};

/* 0, 1, 2, ...: the index list of a whole burst (filled once, read only) */
static uint16_t l3_identity[LRX_BURST_MAX];

RTE_INIT(l3_identity_init)
{
	for (uint16_t i = 0; i < LRX_BURST_MAX; i++)
		l3_identity[i] = i;
}

/* ---- dispatch -------------------------------------------------------------
 * INDIRECT_CALL_2: with dispatch=direct the two common targets are
 * compared and called directly; otherwise an indirect call, as a kernel
 * built without CONFIG_RETPOLINE. */
#define L3_CALL2(c, fn, f1, f2, ...)                                          \
	((c)->direct && (fn) == (f1)   ? f1(__VA_ARGS__)                      \
	 : (c)->direct && (fn) == (f2) ? f2(__VA_ARGS__)                      \
				       : (fn)(__VA_ARGS__))

/* ---- small helpers -------------------------------------------------------- */

static inline const uint8_t *l3_frame(const struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, const uint8_t *);
}

/* Bytes of L4 (transport header onwards) within the trimmed L3 packet. */
static inline uint32_t l3_l4_len(const struct lrx_meta *meta)
{
	return meta->len - (uint32_t)(meta->transport_offset -
				      meta->network_offset);
}

/* The L4 checksum of [transport_offset, +len) with the pseudo header of
 * the family when pseudo is set; true when it verifies (folds to 0xffff).
 * Terms are summed in memory order, as rte_raw_cksum does. */
static inline bool l3_l4_csum_ok(const struct rte_mbuf *m,
				 const struct lrx_meta *meta, uint32_t len,
				 int family, bool pseudo)
{
	uint16_t raw;
	if (rte_raw_cksum_mbuf(m, meta->transport_offset, len, &raw))
		return false;
	uint32_t sum = raw;
	if (pseudo) {
		const uint8_t *l3 = l3_frame(m) + meta->network_offset;
		sum += family == L3_FAMILY_V4 ? rte_raw_cksum(l3 + 12, 8)
					      : rte_raw_cksum(l3 + 8, 32);
		sum += rte_cpu_to_be_16((uint16_t)meta->l4_proto);
		sum += rte_cpu_to_be_16((uint16_t)len);
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* Is the L4 checksum to be verified? Skipped when the NIC said good, as
 * skb_csum_unnecessary() makes the kernel skip it. */
static inline bool l3_l4_csum_needed(struct l3_ctx *c,
				     const struct lrx_meta *meta)
{
	if (meta->ip_summed == LRX_CHECKSUM_UNNECESSARY) {
		c->l4_csum_hint_skipped++;
		return false;
	}
	c->l4_csum_verified++;
	return true;
}

static inline bool l3_port_bound(const uint64_t *bitmap, bool any,
				 uint16_t port)
{
	return any || (bitmap[port >> 6] >> (port & 63)) & 1;
}

/* A handler asks for a reply to its packet m (reply.h); fate is what
 * happens to m when no reply goes out. The per-packet path answers at
 * once; the list path (reply_later) after all its handlers, in arrival
 * order (l3_demux_replies), so the rate limits see the same sequence. */
static lrx_next_t l3_ask(struct l3_ctx *c, struct rte_mbuf *m,
			 lrx_next_t fate, enum l3_reply_kind kind,
			 uint32_t info)
{
	const lrx_next_t asked = l3_reply_ask(fate, kind, info);
	if (!c->reply_later)
		return l3_reply_send(&c->reply, m, asked);
	c->reply.replies_asked++;
	return asked;
}

/* ---- UDP: __udp4_lib_rcv / __udp6_lib_rcv -------------------------------- */

/* RTN_BROADCAST for an IPv4 destination (d, s network order):
 * ip_route_input_slow's brd_input (255.255.255.255, or 0.0.0.0 from
 * 0.0.0.0) and the subnet-directed broadcast routes. */
static inline bool l3_ipv4_is_bcast(const struct l3_ctx *c, uint32_t d,
				    uint32_t s)
{
	return (s == 0 && d == 0) || l3_mcast_is_bcast4(&c->mc, d);
}

/* rt_flags & (RTCF_BROADCAST | RTCF_MULTICAST) of a packet that passed
 * the route (an unjoined group did not), as __udp4_lib_rcv tests it; an
 * IPv6 multicast destination, as __udp6_lib_rcv tests it. */
static inline bool l3_route_is_multi(const struct l3_ctx *c,
				     const struct rte_mbuf *m,
				     const struct lrx_meta *meta, int fam)
{
	const uint8_t *l3 = l3_frame(m) + meta->network_offset;
	if (fam == L3_FAMILY_V6)
		return l3[24] == 0xff;
	uint32_t s, d;
	memcpy(&s, l3 + 12, 4);
	memcpy(&d, l3 + 16, 4);
	return l3_mcast_is_group4(d) || l3_ipv4_is_bcast(c, d, s);
}

/* __udp4_lib_lookup_skb / __udp6_lib_lookup_skb on the configured
 * sockets: the best one for the datagram's destination, or NULL. */
static struct lrx_udp_sock *l3_udp_sock_find(struct l3_ctx *c,
					     const struct rte_mbuf *m,
					     const struct lrx_meta *meta,
					     uint16_t dport, int fam)
{
	const uint8_t *l3 = l3_frame(m) + meta->network_offset;
	return lrx_udp_lookup(c->socks, fam == L3_FAMILY_V6,
			      l3 + (fam == L3_FAMILY_V6 ? 24 : 16), dport);
}

/* udp_unicast_rcv_skb → udp_queue_rcv_skb: the datagram joins its
 * socket's receive queue (CONSUMED: the reader hands it on at the end of
 * the poll, l3_demux_flush), or a full buffer drops it as
 * __udp_queue_rcv_skb does (UdpRcvbufErrors and UdpInErrors, the ENOMEM
 * charged twice). CONTINUE: no socket. Out of line: only with sockets. */
static __rte_noinline lrx_next_t l3_udp_sock_enqueue(struct l3_ctx *c,
						 struct rte_mbuf *m,
						 const struct lrx_meta *meta,
						 uint16_t dport, int fam)
{
	struct lrx_udp_sock *sk = l3_udp_sock_find(c, m, meta, dport, fam);
	if (sk == NULL)
		return LRX_NEXT_CONTINUE_V;
	if (unlikely(lrx_udp_enqueue(c->socks, sk, m) != 0)) {
		c->udp_rcvbuf_errors[fam]++;
		c->udp[fam].in_errors++;
		return lrx_next_drop(LRX_DROP_SOCKET_RCVBUFF);
	}
	return LRX_NEXT_CONSUMED_V;
}

/* The broadcast/multicast branch of __udp4_lib_rcv / __udp6_lib_rcv.
 * A socket on the port takes the datagram (its checks follow as for
 * unicast), except that __udp6_lib_mcast_deliver skips sockets for a zero
 * checksum (no_check6_rx off). With no socket, __udp4_lib_mcast_deliver
 * counts UdpIgnoredMulti and frees it (kfree_skb, no UdpNoPorts, no ICMP);
 * the checksum has only been verified if udp4_csum_init did it, which
 * __skb_checksum_validate_complete does at once for skb->len <=
 * CHECKSUM_BREAK (76) and defers otherwise. CONTINUE: to the socket. */
static lrx_next_t l3_udp_multi(struct l3_ctx *c, struct rte_mbuf *m,
			       struct lrx_meta *meta,
			       const struct rte_udp_hdr *uh, uint32_t l4_len,
			       int fam)
{
	struct l3_udp_mib *mib = &c->udp[fam];
	const bool zero = uh->dgram_cksum == 0;
	if (l3_port_bound(c->udp_ports, c->udp_any,
			  rte_be_to_cpu_16(uh->dst_port)) &&
	    !(zero && fam == L3_FAMILY_V6))
		return LRX_NEXT_CONTINUE_V;
	if (!zero && l4_len <= 76 && l3_l4_csum_needed(c, meta) &&
	    !l3_l4_csum_ok(m, meta, l4_len, fam, true)) {
		mib->in_csum_errors++;
		mib->in_errors++;
		return lrx_next_drop(LRX_DROP_UDP_CSUM);
	}
	mib->ignored_multi++;
	return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
}

/* l3_udp_multi with udp_sockets: a socket on the port (a wildcard one,
 * or one bound to the group's address) takes the datagram; the port map
 * is empty, so l3_udp_multi takes the rest as without a socket. */
static __rte_noinline lrx_next_t l3_udp_multi_sock(struct l3_ctx *c, struct rte_mbuf *m,
						   struct lrx_meta *meta,
						   const struct rte_udp_hdr *uh,
						   uint32_t l4_len, int fam)
{
	if (l3_udp_sock_find(c, m, meta, rte_be_to_cpu_16(uh->dst_port), fam) &&
	    !(uh->dgram_cksum == 0 && fam == L3_FAMILY_V6))
		return LRX_NEXT_CONTINUE_V;
	return l3_udp_multi(c, m, meta, uh, l4_len, fam);
}

/* socks: the handler of udp_sockets (l3_udp_sock_handler); a constant,
 * so that the handler without sockets compiles as if they did not
 * exist. */
static __rte_always_inline lrx_next_t l3_udp_core_(struct l3_ctx *c, struct rte_mbuf *m,
				      struct lrx_meta *meta, const int fam,
				      const bool socks)
{
	struct l3_udp_mib *mib = &c->udp[fam];
	uint32_t l4_len = l3_l4_len(meta);

	if (unlikely(l4_len < sizeof(struct rte_udp_hdr) ||
		     m->data_len < meta->transport_offset +
				   sizeof(struct rte_udp_hdr))) {
		mib->in_errors++; /* short_packet */
		return lrx_next_drop(LRX_DROP_PKT_TOO_SMALL);
	}
	const struct rte_udp_hdr *uh = (const struct rte_udp_hdr *)(
		l3_frame(m) + meta->transport_offset);
	uint32_t ulen = rte_be_to_cpu_16(uh->dgram_len);
	if (unlikely(ulen > l4_len || ulen < sizeof(struct rte_udp_hdr))) {
		mib->in_errors++;
		return lrx_next_drop(LRX_DROP_PKT_TOO_SMALL);
	}
	if (ulen < l4_len) {
		/* udp4_lib_rcv's pskb_trim_rcsum to the UDP length */
		l3_trim_to(m, m->pkt_len - (l4_len - ulen));
		meta->len -= l4_len - ulen;
		l4_len = ulen;
		c->udp_trimmed++;
	}
	if (unlikely(l3_route_is_multi(c, m, meta, fam))) {
		lrx_next_t next = socks ? l3_udp_multi_sock(c, m, meta, uh, l4_len, fam)
					: l3_udp_multi(c, m, meta, uh, l4_len, fam);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	/* udp4_csum_init: 0 = no checksum over IPv4; over IPv6 a zero
	 * checksum is an error (RFC 2460 8.1, udp6_csum_init). */
	if (uh->dgram_cksum == 0 ? fam == L3_FAMILY_V6
				 : (l3_l4_csum_needed(c, meta) &&
				    !l3_l4_csum_ok(m, meta, l4_len, fam, true))) {
		mib->in_csum_errors++;
		mib->in_errors++;
		return lrx_next_drop(LRX_DROP_UDP_CSUM);
	}
	if (socks || !l3_port_bound(c->udp_ports, c->udp_any,
				    rte_be_to_cpu_16(uh->dst_port))) {
		if (socks) {
			const lrx_next_t next = l3_udp_sock_enqueue(
				c, m, meta, rte_be_to_cpu_16(uh->dst_port), fam);
			if (next != LRX_NEXT_CONTINUE_V)
				return next;
		}
		/* a unicast route here: l3_udp_multi took the others */
		mib->no_ports++;
		return l3_ask(c, m, lrx_next_drop(LRX_DROP_NO_SOCKET),
			      fam == L3_FAMILY_V6 ? L3_REPLY_PORT_UNREACH6
						  : L3_REPLY_PORT_UNREACH4, 0);
	}
	mib->in_datagrams++;
	return LRX_NEXT_DELIVER_V;
}
static __rte_always_inline lrx_next_t l3_udp_core(struct l3_ctx *c, struct rte_mbuf *m,
				     struct lrx_meta *meta, const int fam)
{
	return l3_udp_core_(c, m, meta, fam, false);
}
static __rte_always_inline lrx_next_t l3_udp_sock_core(struct l3_ctx *c, struct rte_mbuf *m,
					  struct lrx_meta *meta, const int fam)
{
	return l3_udp_core_(c, m, meta, fam, true);
}

/* ---- TCP: tcp_v4_rcv / tcp_v6_rcv (up to the socket lookup) -------------- */

/* The segment's tuple as __inet_lookup_skb passes it: its destination is
 * the local end. */
struct l3_tcp_tuple {
	const uint8_t *laddr, *raddr;
	uint16_t lport, rport;  /* network order */
	uint32_t hash;
};

static __rte_always_inline void l3_tcp_tuple(const struct l3_ctx *c,
					     const struct rte_mbuf *m,
					     const struct lrx_meta *meta,
					     const struct rte_tcp_hdr *th,
					     const int fam, struct l3_tcp_tuple *tu)
{
	const uint8_t *l3 = l3_frame(m) + meta->network_offset;
	tu->raddr = l3 + (fam == L3_FAMILY_V6 ? 8 : 12);
	tu->laddr = l3 + (fam == L3_FAMILY_V6 ? 24 : 16);
	tu->lport = th->dst_port;
	tu->rport = th->src_port;
	tu->hash = lrx_tcp_ehashfn(&c->ehash[fam], fam == L3_FAMILY_V6, tu->laddr,
				   tu->raddr, tu->lport, tu->rport);
}

/* A SYN alone: what a listener answers with a SYN-ACK
 * (tcp_rcv_state_process, LISTEN: conn_request) */
static inline bool l3_tcp_syn_alone(const struct rte_tcp_hdr *th)
{
	return (th->tcp_flags & (RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG |
				 RTE_TCP_RST_FLAG | RTE_TCP_FIN_FLAG)) ==
	       RTE_TCP_SYN_FLAG;
}

/* A listener opens a socket for a segment the established table did not
 * have (key tcp_ehash): inet_ehash_insert of
 *  - syn: the request socket of tcp_conn_request
 *    (inet_csk_reqsk_queue_hash_add); a full table is its full SYN queue,
 *    answered with a syncookie and nothing inserted
 *    (tcp_syn_flood_action: TCPReqQFullDoCookies), the SYN-ACK still
 *    going out;
 *  - any other segment: the child that cookie_v4_check makes of an ACK
 *    (tcp_get_cookie_sock → inet_csk_complete_hashdance), every such
 *    segment taken as a valid cookie or a connection older than the run;
 *    a full table is its full accept queue: tcp_v4_syn_recv_sock counts
 *    ListenOverflows and cookie_v4_check drops it NO_SOCKET.
 * Nothing is opened for a broadcast or multicast route (tcp_v4_conn_request
 * never answers those). CONTINUE, or the drop. Out of line: once per
 * connection. */
static __rte_noinline lrx_next_t l3_tcp_open(struct l3_ctx *c,
					     const struct rte_mbuf *m,
					     const struct lrx_meta *meta,
					     const struct l3_tcp_tuple *tu,
					     int fam, bool syn)
{
	if (l3_route_is_multi(c, m, meta, fam))
		return LRX_NEXT_CONTINUE_V;
	if (lrx_tcp_ehash_insert(&c->ehash[fam], fam == L3_FAMILY_V6, tu->hash,
				 tu->laddr, tu->raddr, tu->lport,
				 tu->rport) == 0) {
		c->tcp_ehash_inserted++;
		return LRX_NEXT_CONTINUE_V;
	}
	c->tcp_ehash_full++;
	if (syn) {
		c->tcp_reqq_full_do_cookies++;
		return LRX_NEXT_CONTINUE_V;
	}
	c->tcp_listen_overflows++;
	return lrx_next_drop(LRX_DROP_NO_SOCKET);
}

/* est: the handler of tcp_ehash (l3_tcp_est_handler); a constant, so that
 * the handler without the table compiles as if it did not exist. */
static __rte_always_inline lrx_next_t l3_tcp_core_(struct l3_ctx *c, struct rte_mbuf *m,
				      struct lrx_meta *meta, const int fam,
				      const bool est)
{
	struct l3_tcp_mib *mib = &c->tcp;
	const uint32_t l4_len = l3_l4_len(meta);

	if (meta->pkt_type != LRX_PACKET_HOST)
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	mib->in_segs++; /* "Count it even if it's bad" */
	if (unlikely(l4_len < sizeof(struct rte_tcp_hdr) ||
		     m->data_len < meta->transport_offset +
				   sizeof(struct rte_tcp_hdr)))
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	const struct rte_tcp_hdr *th = (const struct rte_tcp_hdr *)(
		l3_frame(m) + meta->transport_offset);
	const uint32_t doff = (uint32_t)(th->data_off >> 4) * 4;
	if (unlikely(doff < sizeof(struct rte_tcp_hdr))) {
		mib->in_errs++; /* bad_packet */
		return lrx_next_drop(LRX_DROP_PKT_TOO_SMALL);
	}
	if (unlikely(doff > l4_len))
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	if (l3_l4_csum_needed(c, meta) &&
	    !l3_l4_csum_ok(m, meta, l4_len, fam, true)) {
		mib->in_csum_errors++;
		mib->in_errs++;
		return lrx_next_drop(LRX_DROP_TCP_CSUM);
	}
	struct l3_tcp_tuple tu;
	if (est) {
		/* __inet_lookup_skb: the established sockets first
		 * (__inet_lookup_established), the listener after. A request
		 * socket's own SYN again is a retransmission, answered with
		 * the SYN-ACK again (tcp_check_req → inet_rtx_syn_ack); any
		 * other segment is the socket's. */
		l3_tcp_tuple(c, m, meta, th, fam, &tu);
		if (lrx_tcp_ehash_lookup(&c->ehash[fam], fam == L3_FAMILY_V6,
					 tu.hash, tu.laddr, tu.raddr, tu.lport,
					 tu.rport)) {
			c->tcp_ehash_hits++;
			return unlikely(l3_tcp_syn_alone(th))
				       ? l3_ask(c, m, LRX_NEXT_DELIVER_V,
						L3_REPLY_SYNACK, 0)
				       : LRX_NEXT_DELIVER_V;
		}
	}
	if (!l3_port_bound(c->tcp_ports, c->tcp_any,
			   rte_be_to_cpu_16(th->dst_port))) {
		/* no_tcp_socket: tcp_v4_send_reset, whose route must be
		 * RTN_LOCAL (tcp_v6_send_reset: a unicast destination) */
		c->tcp_no_socket++;
		const lrx_next_t fate = lrx_next_drop(LRX_DROP_NO_SOCKET);
		return l3_route_is_multi(c, m, meta, fam)
			       ? fate : l3_ask(c, m, fate, L3_REPLY_RST, 0);
	}
	/* A socket on the port is a listener. Without tcp_ehash it also
	 * holds an established connection for every peer; with it, it opens
	 * one (l3_tcp_open). A SYN alone gets a SYN-ACK (never for a
	 * broadcast or multicast route, tcp_v4_conn_request), every other
	 * segment is delivered */
	if (est) {
		const lrx_next_t next = l3_tcp_open(c, m, meta, &tu, fam,
						    l3_tcp_syn_alone(th));
		if (unlikely(next != LRX_NEXT_CONTINUE_V))
			return next;
	}
	if (unlikely(l3_tcp_syn_alone(th)))
		return l3_route_is_multi(c, m, meta, fam)
			       ? lrx_next_drop(LRX_DROP_NOT_SPECIFIED)
			       : l3_ask(c, m, LRX_NEXT_DELIVER_V, L3_REPLY_SYNACK, 0);
	return LRX_NEXT_DELIVER_V;
}
static __rte_always_inline lrx_next_t l3_tcp_core(struct l3_ctx *c, struct rte_mbuf *m,
				     struct lrx_meta *meta, const int fam)
{
	return l3_tcp_core_(c, m, meta, fam, false);
}
/* The core with the table, one out-of-line copy that the handler's
 * entries call: an inline copy in each of L3_DEFINE_HANDLER's five loops
 * would take GCC's inlining budget for this file, and the handlers
 * without the table would stop inlining their helpers. */
static __rte_noinline lrx_next_t l3_tcp_est_one(struct l3_ctx *c, struct rte_mbuf *m,
						struct lrx_meta *meta, int fam)
{
	return l3_tcp_core_(c, m, meta, fam, true);
}
static __rte_always_inline lrx_next_t l3_tcp_est_core(struct l3_ctx *c, struct rte_mbuf *m,
					 struct lrx_meta *meta, const int fam)
{
	return l3_tcp_est_one(c, m, meta, fam);
}

/* ---- ICMP: icmp_rcv / icmpv6_rcv ----------------------------------------- */

/* An ICMP error too short for what its handler reads of the datagram it
 * quotes: icmp_unreach (destination unreachable, source quench, time
 * exceeded, parameter problem) wants an IPv4 header of IHL >= 5,
 * icmp_redirect an IPv4 header's length; icmpv6_notify (every ICMPv6
 * error) the IPv6 header and 8 bytes past its extension headers. Each
 * counts InErrors. */
static bool l3_icmp_error_short(const struct rte_mbuf *m,
				const struct lrx_meta *meta, int fam,
				uint8_t type, uint32_t l4_len)
{
	const uint32_t quoted = l4_len - sizeof(struct rte_icmp_hdr);
	const uint32_t q = meta->transport_offset + sizeof(struct rte_icmp_hdr);
	const uint8_t *frame = l3_frame(m);
	if (fam == L3_FAMILY_V4) {
		if (type == 5)
			return quoted < 20;
		if (type != 3 && type != 4 && type != 11 && type != 12)
			return false;
		return quoted < 20 || q >= m->data_len || (frame[q] & 0xf) < 5;
	}
	if (type >= 128)
		return false;
	if (quoted < 40 || q + 40 > m->data_len)
		return true;
	/* ipv6_skip_exthdr over the quoted datagram's headers */
	uint8_t nh = frame[q + 6];
	uint32_t o = 40;
	while (nh == 0 || nh == 43 || nh == 60 || nh == 44 || nh == 51) {
		if (o + 8 > quoted || q + o + 8 > m->data_len)
			return true;
		const uint8_t *h = frame + q + o;
		if (nh == 44 && ((h[2] << 8 | h[3]) & ~7) != 0)
			break; /* a later fragment: no header past it */
		o += nh == 44 ? 8u : nh == 51 ? (h[1] + 2u) * 4 : (h[1] + 1u) * 8;
		nh = h[0];
	}
	return o + 8 > quoted;
}

static inline lrx_next_t l3_icmp_core(struct l3_ctx *c, struct rte_mbuf *m,
				      struct lrx_meta *meta, const int fam)
{
	struct l3_icmp_mib *mib = &c->icmp[fam];
	const uint32_t l4_len = l3_l4_len(meta);

	mib->in_msgs++;
	/* skb_checksum_simple_validate: ICMPv4 has no pseudo header */
	if (l3_l4_csum_needed(c, meta) &&
	    !l3_l4_csum_ok(m, meta, l4_len, fam, fam == L3_FAMILY_V6)) {
		mib->in_csum_errors++;
		mib->in_errors++;
		return lrx_next_drop(LRX_DROP_ICMP_CSUM);
	}
	if (unlikely(l4_len < sizeof(struct rte_icmp_hdr) ||
		     m->data_len < meta->transport_offset +
				   sizeof(struct rte_icmp_hdr))) {
		mib->in_errors++;
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	}
	const uint8_t type = l3_frame(m)[meta->transport_offset];
	if (fam == L3_FAMILY_V4) {
		mib->in_echos += type == RTE_IP_ICMP_ECHO_REQUEST;
		/* icmp_rcv: a type past NR_ICMP_TYPES (18) is an error, but
		 * for ICMP_EXT_ECHO (42); to a broadcast or multicast route
		 * only address mask requests/replies (17, 18) are taken,
		 * echo and timestamp being ignored as the default
		 * icmp_echo_ignore_broadcasts=1 says (RFC 1122 3.2.2.6/8) */
		if (unlikely((type > 18 && type != 42) ||
			     (type != 17 && type != 18 &&
			      l3_route_is_multi(c, m, meta, fam)))) {
			mib->in_errors++;
			return lrx_next_drop(type > 18 ? LRX_DROP_UNHANDLED_PROTO
						       : LRX_DROP_INVALID_PROTO);
		}
	}
	if (unlikely(l3_icmp_error_short(m, meta, fam, type, l4_len))) {
		mib->in_errors++;
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	}
	if (fam == L3_FAMILY_V4) {
		if (type == RTE_IP_ICMP_ECHO_REQUEST) /* icmp_echo */
			return l3_ask(c, m, LRX_NEXT_DELIVER_V, L3_REPLY_ECHO4, 0);
		if (type == 13) { /* ICMP_TIMESTAMP */
			/* icmp_timestamp: the originate timestamp's 4 bytes
			 * must be there */
			if (l4_len < sizeof(struct rte_icmp_hdr) + 4) {
				mib->in_errors++;
				return lrx_next_drop(LRX_DROP_PKT_TOO_SMALL);
			}
			return l3_ask(c, m, LRX_NEXT_DELIVER_V,
				      L3_REPLY_TIMESTAMP4, 0);
		}
	} else if (type == 128) { /* icmpv6_echo_reply */
		mib->in_echos++;
		return l3_ask(c, m, LRX_NEXT_DELIVER_V, L3_REPLY_ECHO6, 0);
	}
	return LRX_NEXT_DELIVER_V;
}

/* An L4 list: pkts[idx[0..n-1]], or pkts[0..n-1] when idx is NULL (a
 * contiguous list: packet k at k); the family a constant in each copy. */
static __rte_always_inline void
l3_l4_list_loop(struct l3_ctx *c, struct rte_mbuf **pkts,
		struct lrx_meta *const *metas, const uint16_t *idx, uint16_t n,
		lrx_next_t *nexts, const int fam,
		lrx_next_t (*core)(struct l3_ctx *, struct rte_mbuf *,
				   struct lrx_meta *, int))
{
	for (uint16_t k = 0; k < n; k++) {
		const uint16_t i = idx ? idx[k] : k;
		nexts[i] = core(c, pkts[i], metas[i], fam);
	}
}

/* The L4 handlers: two thin entries around each core. */
#define L3_DEFINE_HANDLER(proto, core)                                        \
	static lrx_next_t l3_##proto##_rcv(struct l3_ctx *c,                  \
					   struct rte_mbuf *m,                \
					   struct lrx_meta *meta)             \
	{                                                                     \
		return core(c, m, meta,                                       \
			    meta->protocol == RTE_ETHER_TYPE_IPV6);           \
	}                                                                     \
	static void l3_##proto##_list_rcv(struct l3_ctx *c,                   \
					  struct rte_mbuf **pkts,             \
					  struct lrx_meta *const *metas,      \
					  const uint16_t *idx, uint16_t n,    \
					  lrx_next_t *nexts)                  \
	{                                                                     \
		/* a sublist is of one family (ip_sublist_rcv's caller): \
		 * one loop per family, the family a constant in each */  \
		if (n == 0)                                                   \
			return;                                               \
		const bool v6 = metas[idx[0]]->protocol == RTE_ETHER_TYPE_IPV6; \
		const bool whole = idx == l3_identity; /* packet k at k */   \
		if (whole && v6)                                              \
			l3_l4_list_loop(c, pkts, metas, NULL, n, nexts,       \
					L3_FAMILY_V6, core);                  \
		else if (whole)                                               \
			l3_l4_list_loop(c, pkts, metas, NULL, n, nexts,       \
					L3_FAMILY_V4, core);                  \
		else if (v6)                                                  \
			l3_l4_list_loop(c, pkts, metas, idx, n, nexts,        \
					L3_FAMILY_V6, core);                  \
		else                                                          \
			l3_l4_list_loop(c, pkts, metas, idx, n, nexts,        \
					L3_FAMILY_V4, core);                  \
	}                                                                     \
	static const struct l3_handler l3_##proto##_handler = {               \
		.name = #proto,                                               \
		.rcv = l3_##proto##_rcv,                                      \
		.list_rcv = l3_##proto##_list_rcv,                            \
	};
L3_DEFINE_HANDLER(udp, l3_udp_core)
L3_DEFINE_HANDLER(udp_sock, l3_udp_sock_core)
L3_DEFINE_HANDLER(tcp, l3_tcp_core)
L3_DEFINE_HANDLER(tcp_est, l3_tcp_est_core)
L3_DEFINE_HANDLER(icmp, l3_icmp_core)

/* No handler for the protocol (ip_protocol_deliver_rcu: ICMP protocol
 * unreachable unless the route is broadcast or multicast;
 * ip6_protocol_deliver_rcu: a parameter problem pointing at the next
 * header field that named it). */
static lrx_next_t l3_unknown_proto(struct l3_ctx *c, struct rte_mbuf *m,
				   const struct lrx_meta *meta, int fam)
{
	c->ip[fam].in_unknown_protos++;
	const lrx_next_t fate = lrx_next_drop(LRX_DROP_IP_NOPROTO);
	if (fam == L3_FAMILY_V4)
		return l3_route_is_multi(c, m, meta, fam)
			       ? fate : l3_ask(c, m, fate, L3_REPLY_PROTO_UNREACH4, 0);
	const uint32_t nhoff = l3_ipv6_nhoff(l3_frame(m), meta->network_offset,
					     meta->transport_offset);
	return l3_ask(c, m, fate, L3_REPLY_PARAMPROB6,
		      l3_reply_paramprob6(L3_PARAMPROB6_NEXTHDR, nhoff));
}

/* ip_protocol_deliver_rcu / ip6_protocol_deliver_rcu for one packet whose
 * L3 checks passed. */
static inline lrx_next_t l3_local_deliver_one(struct l3_ctx *c,
					      struct rte_mbuf *m,
					      struct lrx_meta *meta, int fam)
{
	const struct l3_handler *h = c->l4_table[fam][meta->l4_proto];
	if (unlikely(h == NULL))
		return l3_unknown_proto(c, m, meta, fam);
	c->ip[fam].in_delivers++;
	return L3_CALL2(c, h->rcv, l3_tcp_rcv, l3_udp_rcv, c, m, meta);
}

/* One L4 sublist: pkts[idx[0..n-1]], all of protocol proto. */
static inline void l3_l4_sublist(struct l3_ctx *c, struct rte_mbuf **pkts,
				 struct lrx_meta *const *metas,
				 const uint16_t *idx, uint16_t n,
				 lrx_next_t *nexts, int fam, uint8_t proto)
{
	const struct l3_handler *h = c->l4_table[fam][proto];
	if (unlikely(h == NULL)) {
		for (uint16_t k = 0; k < n; k++)
			nexts[idx[k]] = l3_unknown_proto(c, pkts[idx[k]],
							 metas[idx[k]], fam);
		return;
	}
	c->ip[fam].in_delivers += n;
	c->l4_sublists++;
	L3_CALL2(c, h->list_rcv, l3_tcp_list_rcv, l3_udp_list_rcv, c, pkts,
		 metas, idx, n, nexts);
}

/* The list form (ip_sublist_rcv): survivors pkts[idx[0..n-1]], one
 * handler call per sublist of one L4 protocol: runs of consecutive
 * packets, or with list_split=gather one sublist per protocol in arrival
 * order. uniform: the caller saw one protocol only, so the list is one
 * sublist without a scan. */
static void l3_local_deliver_list(struct l3_ctx *c, struct rte_mbuf **pkts,
				  struct lrx_meta *const *metas,
				  const uint16_t *idx, uint16_t n,
				  lrx_next_t *nexts, int fam, bool uniform)
{
	if (n == 0)
		return;
	if (uniform) {
		l3_l4_sublist(c, pkts, metas, idx, n, nexts, fam,
			      metas[idx[0]]->l4_proto);
		return;
	}
	if (c->split == L3_SPLIT_GATHER) {
		/* a protocol's packets, then the next protocol's (first
		 * seen first); rest keeps the others in order */
		uint16_t rest[LRX_BURST_MAX], same[LRX_BURST_MAX];
		const uint16_t *todo = idx;
		while (n) {
			const uint8_t proto = metas[todo[0]]->l4_proto;
			uint16_t n_same = 0, n_rest = 0;
			for (uint16_t k = 0; k < n; k++) {
				const uint16_t i = todo[k];
				const bool hit = metas[i]->l4_proto == proto;
				same[n_same] = i;
				rest[n_rest] = i;
				n_same += hit;
				n_rest += !hit;
			}
			l3_l4_sublist(c, pkts, metas, same, n_same, nexts, fam,
				      proto);
			todo = rest;
			n = n_rest;
		}
		return;
	}
	uint16_t start = 0;
	while (start < n) {
		const uint8_t proto = metas[idx[start]]->l4_proto;
		uint16_t end = start + 1;
		while (end < n && metas[idx[end]]->l4_proto == proto)
			end++;
		l3_l4_sublist(c, pkts, metas, idx + start, end - start, nexts,
			      fam, proto);
		start = end;
	}
}

/* ---- IPv4: ip_rcv_core + ip_rcv_finish_core + ip_local_deliver ----------- */

/* The local-address lookup of one destination, reusable by the next
 * packet to the same destination (ip_can_use_hint; the source is still
 * validated for every packet, as ip_route_use_hint does). */
struct l3_route_hint {
	bool valid;
	bool local, bcast;
	uint32_t daddr;
};

static inline bool l3_ipv4_is_local(const struct l3_ctx *c, uint32_t daddr)
{
	if (c->n_local4 == 0)
		return true;
	for (unsigned i = 0; i < c->n_local4; i++)
		if (c->local4[i] == daddr)
			return true;
	return false;
}

/* ip_route_input_slow's martian tests, in its order (s, d host order). */
static inline lrx_next_t l3_ipv4_martians(struct l3_ctx *c, uint32_t s,
					  uint32_t d)
{
	if ((s & 0xf0000000) == 0xe0000000 || s == 0xffffffff)
		goto martian_source;
	if (d == 0xffffffff || (s == 0 && d == 0))
		return LRX_NEXT_CONTINUE_V; /* brd_input */
	if ((s >> 24) == 0)
		goto martian_source;
	if ((d >> 24) == 0 || (d >> 24) == 127) {
		c->in_martian_dst++;
		return lrx_next_drop(LRX_DROP_IP_INVALID_DEST);
	}
	if ((s >> 24) == 127)
		goto martian_source;
	return LRX_NEXT_CONTINUE_V;
martian_source:
	c->in_martian_src++;
	return lrx_next_drop(LRX_DROP_IP_INVALID_SOURCE);
}

/* The route's type (rt_type) for what ip_rcv_finish_core does after the
 * options: count a multicast or broadcast, or ip_error's EHOSTUNREACH. */
enum l3_rt {
	L3_RT_LOCAL,     /* RTN_LOCAL */
	L3_RT_BCAST,     /* RTN_BROADCAST */
	L3_RT_MCAST,     /* RTN_MULTICAST */
	L3_RT_UNREACH,   /* RTN_UNREACHABLE: dst.input = ip_error */
};

/* ip_route_input_rcu's multicast branch: a group this port has not joined
 * (ip_check_mc_rcu) is dropped with only InReceives counted (the route
 * error, NOT_SPECIFIED); a joined one goes to ip_route_input_mc, whose
 * ip_mc_validate_source judges the source. No route hint: the verdict
 * also depends on the port. */
static lrx_next_t l3_ipv4_route_mc(struct l3_ctx *c,
				   const struct rte_ipv4_hdr *iph,
				   uint16_t port, enum l3_rt *rt)
{
	c->route_lookups++;
	if (!l3_mcast_joined4(&c->mc, iph->dst_addr, port))
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	if (c->martians_drop &&
	    !l3_mcast_source_ok4(rte_be_to_cpu_32(iph->src_addr),
				 rte_be_to_cpu_32(iph->dst_addr),
				 iph->next_proto_id))
		return lrx_next_drop(LRX_DROP_IP_INVALID_SOURCE);
	*rt = L3_RT_MCAST;
	return LRX_NEXT_CONTINUE_V;
}

/* ip_route_input_noref for a host that does not forward: martians (a
 * drop), else the route's type in *rt. */
static inline lrx_next_t l3_ipv4_route(struct l3_ctx *c,
				       const struct rte_ipv4_hdr *iph,
				       struct l3_route_hint *hint,
				       uint16_t port, enum l3_rt *rt)
{
	const uint32_t d = rte_be_to_cpu_32(iph->dst_addr);

	if (unlikely(l3_mcast_is_group4(iph->dst_addr)))
		return l3_ipv4_route_mc(c, iph, port, rt);
	if (c->martians_drop) {
		lrx_next_t next = l3_ipv4_martians(
			c, rte_be_to_cpu_32(iph->src_addr), d);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	struct l3_route_hint here;
	if (hint && hint->valid && hint->daddr == iph->dst_addr && d != 0) {
		c->route_hint_hits++;
	} else {
		c->route_lookups++;
		here.valid = true;
		here.daddr = iph->dst_addr;
		here.bcast = l3_ipv4_is_bcast(c, iph->dst_addr, iph->src_addr);
		here.local = here.bcast || l3_ipv4_is_local(c, iph->dst_addr);
		if (hint)
			*hint = here;
		else
			hint = &here;
	}
	*rt = !hint->local ? L3_RT_UNREACH : hint->bcast ? L3_RT_BCAST
							: L3_RT_LOCAL;
	return LRX_NEXT_CONTINUE_V;
}

/* IP option types (include/uapi/linux/ip.h) */
enum {
	L3_IPOPT_END = 0,
	L3_IPOPT_NOOP = 1,
	L3_IPOPT_RR = 7,
	L3_IPOPT_TIMESTAMP = 68,
	L3_IPOPT_LSRR = 131,
	L3_IPOPT_CIPSO = 134,
	L3_IPOPT_SSRR = 137,
	L3_IPOPT_RA = 148,
};

/* __ip_options_compile on receive: 0 when the options are valid, else
 * the offset from the IP header of the byte in error (the parameter
 * problem's pointer). *srr: a source route is present. Record route and
 * timestamp are checked, not filled in (the kernel writes its address
 * and the time into the header it delivers). CIPSO fails as
 * cipso_v4_validate fails without a CIPSO DOI (a kernel with
 * CONFIG_NETLABEL and no netlabel set-up); security, stream ID and
 * unknown options pass, as on receive. */
static uint32_t l3_ipv4_options(const uint8_t *iph, uint32_t ihl, bool *srr)
{
	const uint8_t *opt = iph + 20;
	int l = (int)ihl - 20;
	bool rr = false, ts = false, cipso = false;
	*srr = false;
	while (l > 0) {
		if (*opt == L3_IPOPT_END)
			return 0;
		if (*opt == L3_IPOPT_NOOP) {
			l--;
			opt++;
			continue;
		}
		if (l < 2)
			return (uint32_t)(opt - iph);
		const int optlen = opt[1];
		if (optlen < 2 || optlen > l)
			return (uint32_t)(opt - iph);
		switch (*opt) {
		case L3_IPOPT_SSRR:
		case L3_IPOPT_LSRR:
			if (optlen < 3)
				return (uint32_t)(opt + 1 - iph);
			if (opt[2] < 4)
				return (uint32_t)(opt + 2 - iph);
			/* NB: cf RFC-1812 5.2.4.1 */
			if (*srr)
				return (uint32_t)(opt - iph);
			*srr = true;
			break;
		case L3_IPOPT_RR:
			if (rr)
				return (uint32_t)(opt - iph);
			if (optlen < 3)
				return (uint32_t)(opt + 1 - iph);
			if (opt[2] < 4)
				return (uint32_t)(opt + 2 - iph);
			if (opt[2] <= optlen && opt[2] + 3 > optlen)
				return (uint32_t)(opt + 2 - iph);
			rr = true;
			break;
		case L3_IPOPT_TIMESTAMP:
			if (ts)
				return (uint32_t)(opt - iph);
			if (optlen < 4)
				return (uint32_t)(opt + 1 - iph);
			if (opt[2] < 5)
				return (uint32_t)(opt + 2 - iph);
			if (opt[2] <= optlen) {
				if (opt[2] + 3 > optlen)
					return (uint32_t)(opt + 2 - iph);
				/* IPOPT_TS_TSANDADDR, IPOPT_TS_PRESPEC: an
				 * address and a time */
				const unsigned flag = opt[3] & 0xf;
				if ((flag == 1 || flag == 3) && opt[2] + 7 > optlen)
					return (uint32_t)(opt + 2 - iph);
			} else if ((opt[3] & 0xf) != 3 && (opt[3] >> 4) == 15) {
				/* full, and its overflow counter too */
				return (uint32_t)(opt + 3 - iph);
			}
			ts = true;
			break;
		case L3_IPOPT_RA:
			if (optlen < 4)
				return (uint32_t)(opt + 1 - iph);
			break;
		case L3_IPOPT_CIPSO:
			if (cipso)
				return (uint32_t)(opt - iph);
			cipso = true;
			return (uint32_t)(opt + (optlen < 8 ? 1 : 2) - iph);
		default:
			break;
		}
		l -= optlen;
		opt += optlen;
	}
	return 0;
}

/* ip_rcv_options: a bad option is InHdrErrors and an ICMP parameter
 * problem (ip_options_compile's icmp_send, not for a broadcast or
 * multicast route); a source route is dropped uncounted unless
 * accept_source_route, and then ip_options_rcv_srr delivers it only when
 * the hops left are this host's addresses (a host that does not forward
 * finds no route for another: -EINVAL); a hop that does not fit is a
 * parameter problem at the option's pointer. The header is not changed
 * (the kernel writes the next hop as the destination). */
static lrx_next_t l3_ipv4_rcv_options(struct l3_ctx *c,
				      struct rte_mbuf *m,
				      const struct lrx_meta *meta,
				      const uint8_t *iph, uint32_t ihl,
				      enum l3_rt rt)
{
	bool srr;
	const uint32_t bad = l3_ipv4_options(iph, ihl, &srr);
	const lrx_next_t fate = lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	const bool icmp = rt == L3_RT_LOCAL || rt == L3_RT_UNREACH;
	if (unlikely(bad)) {
		c->ip[L3_FAMILY_V4].in_hdr_errors++;
		return icmp ? l3_ask(c, m, fate, L3_REPLY_PARAMPROB4, bad) : fate;
	}
	if (!srr)
		return LRX_NEXT_CONTINUE_V;
	if (!c->reply.accept_source_route ||
	    meta->pkt_type != LRX_PACKET_HOST || rt != L3_RT_LOCAL)
		return fate;
	/* the source route option */
	uint32_t off = 20;
	while (iph[off] != L3_IPOPT_LSRR && iph[off] != L3_IPOPT_SSRR)
		off += iph[off] <= L3_IPOPT_NOOP ? 1u : iph[off + 1];
	const uint8_t *opt = iph + off;
	for (uint32_t ptr = opt[2]; ptr <= opt[1]; ptr += 4) {
		if (ptr + 3 > opt[1])
			return l3_ask(c, m, fate, L3_REPLY_PARAMPROB4, off + 2);
		uint32_t hop;
		memcpy(&hop, opt + ptr - 1, 4);
		if (!l3_ipv4_is_local(c, hop))
			return fate;
	}
	return LRX_NEXT_CONTINUE_V;
}

/* ---- ip_rcv_core / ip6_rcv_core: the shared prologue and exit labels -----
 * The kernel ends both cores in one label chain, each label adding one
 * statistic and falling through to the next:
 *   csum_error:  IPSTATS_MIB_CSUMERRORS, reason IP_CSUM
 *   inhdr_error: IPSTATS_MIB_INHDRERRORS, reason IP_INHDR unless set
 *   drop:        kfree_skb_reason
 * Here each label is a small inline that counts and calls the next. */
static inline lrx_next_t l3_ip_drop(enum lrx_drop_reason reason)
{
	return lrx_next_drop(reason);
}

static inline lrx_next_t l3_ip_inhdr_error(struct l3_ip_mib *mib,
					   enum lrx_drop_reason reason)
{
	mib->in_hdr_errors++;
	return l3_ip_drop(reason == LRX_DROP_NOT_SPECIFIED ? LRX_DROP_IP_INHDR
							   : reason);
}

static inline lrx_next_t l3_ip_csum_error(struct l3_ip_mib *mib)
{
	mib->in_csum_errors++;
	return l3_ip_inhdr_error(mib, LRX_DROP_IP_CSUM);
}

/* What ip_rcv_core and ip6_rcv_core do first, in the same order: drop
 * PACKET_OTHERHOST uncounted ("When the interface is in promisc. mode,
 * drop all the crap"), count InReceives, then the fixed header must be in
 * the packet and in the first segment. Returns CONTINUE with *hdr and
 * *skb_len set, or the drop. */
static inline lrx_next_t l3_ip_rcv_prologue(struct l3_ctx *c,
					    const struct rte_mbuf *m,
					    const struct lrx_meta *meta,
					    struct l3_ip_mib *mib,
					    uint32_t hdr_size,
					    const uint8_t **hdr,
					    uint32_t *skb_len)
{
	if (unlikely(meta->pkt_type == LRX_PACKET_OTHERHOST)) {
		c->rx_otherhost_dropped++;
		if (m->port < RTE_MAX_ETHPORTS)
			c->dev[m->port].rx_otherhost_dropped++;
		return l3_ip_drop(LRX_DROP_OTHERHOST);
	}
	mib->in_receives++;

	const uint32_t noff = meta->network_offset;
	*skb_len = m->pkt_len - noff;
	if (unlikely(*skb_len < hdr_size || m->data_len < noff + hdr_size))
		return l3_ip_inhdr_error(mib, LRX_DROP_NOT_SPECIFIED);
	*hdr = l3_frame(m) + noff;
	return LRX_NEXT_CONTINUE_V;
}

/* ip_rcv_core for one IPv4 packet: the header's checks, the trim to its
 * total length. Returns CONTINUE when the packet goes on to the
 * PREROUTING hook and ip_rcv_finish. */
static __rte_always_inline lrx_next_t l3_ipv4_rcv_early(struct l3_ctx *c,
							struct rte_mbuf *m,
							struct lrx_meta *meta)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V4];
	const uint8_t *hdr;
	uint32_t skb_len;
	lrx_next_t next = l3_ip_rcv_prologue(c, m, meta, mib,
					     sizeof(struct rte_ipv4_hdr),
					     &hdr, &skb_len);
	if (unlikely(next != LRX_NEXT_CONTINUE_V))
		return next;

	const uint32_t noff = meta->network_offset;
	const struct rte_ipv4_hdr *iph = (const struct rte_ipv4_hdr *)hdr;
	const uint32_t ihl = (iph->version_ihl & RTE_IPV4_HDR_IHL_MASK) * 4u;
	if (unlikely(ihl < 20 || (iph->version_ihl >> 4) != 4 ||
		     m->data_len < noff + ihl))
		return l3_ip_inhdr_error(mib, LRX_DROP_NOT_SPECIFIED);
	/* RFC 1122 3.2.1.2: silently discard on a bad checksum. listrx
	 * trusts the NIC's IP checksum hint if told to (the kernel always
	 * runs ip_fast_csum). */
	if (c->trust_ip_csum_hint &&
	    meta->l3_csum_state == LRX_CHECKSUM_UNNECESSARY) {
		c->ip_csum_hint_skipped++;
	} else {
		c->ip_csum_verified++;
		if (unlikely(rte_raw_cksum(iph, ihl) != 0xffff))
			return l3_ip_csum_error(mib);
	}
	uint32_t len = rte_be_to_cpu_16(iph->total_length);
	/* iph_totlen: a BIG TCP GRO packet over 64 KB has tot_len 0
	 * (iph_set_totlen); its length is the skb's */
	if (unlikely(len == 0) && meta->gso_size && iph->next_proto_id == IPPROTO_TCP)
		len = skb_len;
	if (unlikely(skb_len < len)) {
		mib->in_truncated_pkts++;
		return l3_ip_drop(LRX_DROP_PKT_TOO_SMALL);
	}
	if (unlikely(len < ihl))
		return l3_ip_inhdr_error(mib, LRX_DROP_NOT_SPECIFIED);
	/* Our transport medium may have padded the buffer out: trim to the
	 * true length (pskb_trim_rcsum). */
	if (skb_len > len) {
		l3_trim_to(m, noff + len);
		c->l3_trimmed++;
	}
	meta->len = len;
	meta->transport_offset = (uint16_t)(noff + ihl);
	meta->l4_proto = iph->next_proto_id;
	return LRX_NEXT_CONTINUE_V;
}

/* One netfilter hook on one IPv4 packet (nf_hook_slow): CONTINUE, or the
 * drop (SKB_DROP_REASON_NETFILTER_DROP). skb->len is the IP packet, after
 * the trim (PREROUTING) or the reassembly (LOCAL_IN). Out of line, as the
 * kernel's nf_hook_slow: only with rules (c->nf), and inlined into the
 * receive cores it cost their loops registers (stack spills per packet
 * with no rules at all). */
static __rte_noinline lrx_next_t l3_ipv4_nf_hook(struct l3_ctx *c,
						      const struct rte_mbuf *m,
						      const struct lrx_meta *meta,
						      unsigned hook)
{
	const uint32_t noff = meta->network_offset;
	const uint8_t *iph = l3_frame(m) + noff;
	const struct lrx_nf_pkt p = {
		.iph = iph,
		.len = m->pkt_len - noff,
		.thoff = meta->transport_offset - noff,
		.seg_len = m->data_len - noff,
		.fragoff = (uint16_t)(((iph[6] << 8) | iph[7]) & 0x1fff),
		/* the input device: the port, or the VLAN device the packet
		 * came in on (vlan_do_receive) */
		.in_port = meta->ingress_port,
		.in_vid = meta->vlan_vid,
	};
	if (lrx_nf_hook_slow(c->nf, c->nf_ctr, hook, &p) == LRX_NF_ACCEPT)
		return LRX_NEXT_CONTINUE_V;
	c->nf_drops[hook]++;
	return lrx_next_drop(LRX_DROP_NETFILTER_DROP);
}

/* ip_rcv_finish and ip_local_deliver for one IPv4 packet that passed
 * PREROUTING: the route (or the previous packet's: hint may be NULL, as
 * ip_rcv), the options, ip_defrag, then the LOCAL_IN hook. Returns
 * CONTINUE when the packet is to be delivered locally. */
static __rte_always_inline lrx_next_t l3_ipv4_rcv_finish(struct l3_ctx *c,
							 struct rte_mbuf *m,
							 struct lrx_meta *meta,
							 struct l3_route_hint *hint)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V4];
	const struct rte_ipv4_hdr *iph =
		(const struct rte_ipv4_hdr *)(l3_frame(m) + meta->network_offset);
	const uint32_t ihl = (iph->version_ihl & RTE_IPV4_HDR_IHL_MASK) * 4u;

	/* ip_rcv_finish_core: route (or the previous packet's), options,
	 * then the route's counters; ip_error's after all of them */
	enum l3_rt rt;
	lrx_next_t verdict = l3_ipv4_route(c, iph, hint, m->port, &rt);
	if (verdict != LRX_NEXT_CONTINUE_V)
		return verdict;
	if (unlikely(ihl > 20)) {
		verdict = l3_ipv4_rcv_options(c, m, meta, (const uint8_t *)iph,
					      ihl, rt);
		if (verdict != LRX_NEXT_CONTINUE_V)
			return verdict;
	}
	if (unlikely(rt != L3_RT_LOCAL)) {
		if (rt == L3_RT_UNREACH) {
			mib->in_addr_errors++;
			return lrx_next_drop(LRX_DROP_IP_INADDRERRORS);
		}
		if (rt == L3_RT_MCAST) {
			mib->in_mcast_pkts++;
			mib->in_mcast_octets += meta->len;
		} else {
			mib->in_bcast_pkts++;
			mib->in_bcast_octets += meta->len;
		}
	}
	/* ip_local_deliver: fragments go to ip_defrag, which holds them
	 * (CONSUMED) until the one that completes the datagram comes back
	 * as the whole datagram (reasm.c) */
	if (unlikely(iph->fragment_offset &
		     rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG |
				      RTE_IPV4_HDR_OFFSET_MASK))) {
		verdict = l3_reasm_ipv4(&c->reasm, m, meta);
		if (verdict != LRX_NEXT_CONTINUE_V)
			return verdict;
	}
	/* NF_HOOK(NF_INET_LOCAL_IN, ..., ip_local_deliver_finish) */
	if (c->nf != NULL)
		return l3_ipv4_nf_hook(c, m, meta, LRX_NF_LOCAL_IN);
	return LRX_NEXT_CONTINUE_V;
}

/* Everything ip_rcv does to one packet before the L4 handler: ip_rcv_core,
 * NF_HOOK(NF_INET_PRE_ROUTING), ip_rcv_finish, ip_local_deliver. Returns
 * CONTINUE when the packet is to be delivered locally. hint may be NULL
 * (per-packet path: no hint, as ip_rcv). */
static __rte_always_inline lrx_next_t l3_ipv4_rcv_core(struct l3_ctx *c, struct rte_mbuf *m,
					  struct lrx_meta *meta,
					  struct l3_route_hint *hint)
{
	lrx_next_t next = l3_ipv4_rcv_early(c, m, meta);
	if (unlikely(next != LRX_NEXT_CONTINUE_V))
		return next;
	if (c->nf != NULL) {
		next = l3_ipv4_nf_hook(c, m, meta, LRX_NF_PRE_ROUTING);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	return l3_ipv4_rcv_finish(c, m, meta, hint);
}

/* ---- IPv6: ip6_rcv_core (+ hop-by-hop) and the route ---------------------- */

static inline bool l3_ipv6_is_local(const struct l3_ctx *c, const uint8_t *d)
{
	if (d[0] == 0xff || c->n_local6 == 0)
		return true;
	for (unsigned i = 0; i < c->n_local6; i++)
		if (memcmp(c->local6[i], d, 16) == 0)
			return true;
	return false;
}

static inline bool l3_ipv6_is_loopback(const uint8_t *a)
{
	static const uint8_t loopback[16] = {[15] = 1};
	return memcmp(a, loopback, 16) == 0;
}

/* A header that failed (exthdrs.c): its counter, its drop, and the
 * parameter problem it asks for. */
static lrx_next_t l3_ipv6_ext_failed(struct l3_ctx *c, struct rte_mbuf *m,
				     const struct l3_ext_fail *fail)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V6];
	mib->in_hdr_errors += fail->mib == L3_EXT_MIB_HDR_ERRORS;
	mib->in_addr_errors += fail->mib == L3_EXT_MIB_ADDR_ERRORS;
	mib->in_delivers += fail->mib == L3_EXT_MIB_DELIVERS;
	const lrx_next_t fate = lrx_next_drop(fail->reason);
	return fail->icmp ? l3_ask(c, m, fate, L3_REPLY_PARAMPROB6,
				   l3_reply_paramprob6(fail->icmp_code,
						       fail->icmp_pointer))
			  : fate;
}

/* The extension headers ip6_protocol_deliver_rcu resubmits through
 * (exthdrs.c), and the counter each verdict moves. */
static lrx_next_t l3_ipv6_ext(struct l3_ctx *c, struct rte_mbuf *m,
			      struct lrx_meta *meta,
			      const struct rte_ipv6_hdr *hdr, uint32_t *toff,
			      uint8_t *nexthdr)
{
	struct l3_ext_fail fail;
	uint32_t end = meta->network_offset + meta->len;
	if (end > m->data_len) /* only the first segment is walked */
		end = m->data_len;
	if (l3_ipv6_exthdrs(l3_frame(m), meta->network_offset, end, toff,
			    nexthdr, hdr->dst_addr[0] == 0xff,
			    meta->pkt_type == LRX_PACKET_HOST, c->mip6,
			    &fail) == L3_EXT_UPPER) {
		meta->transport_offset = (uint16_t)*toff;
		meta->l4_proto = *nexthdr;
		return LRX_NEXT_CONTINUE_V;
	}
	return l3_ipv6_ext_failed(c, m, &fail);
}

/* ipv6_frag_rcv and the resubmit after it (ip6_protocol_deliver_rcu):
 * the headers after the fragment header are walked again; a second
 * fragment header is a header error (IP6SKB_FRAGMENTED). */
static lrx_next_t l3_ipv6_frag(struct l3_ctx *c, struct rte_mbuf *m,
			       struct lrx_meta *meta, uint32_t toff)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V6];
	enum l3_reasm_ip_mib which;
	uint8_t nexthdr;
	lrx_next_t next = l3_reasm_ipv6(&c->reasm, m, meta, &toff, &nexthdr,
					&which);
	mib->in_hdr_errors += which == L3_REASM_IP_MIB_HDR_ERRORS;
	if (next != LRX_NEXT_CONTINUE_V)
		return next;
	meta->transport_offset = (uint16_t)toff;
	meta->l4_proto = nexthdr;
	if (l3_ipv6_is_exthdr(nexthdr)) {
		const struct rte_ipv6_hdr *hdr = rte_pktmbuf_mtod_offset(
			m, const struct rte_ipv6_hdr *, meta->network_offset);
		next = l3_ipv6_ext(c, m, meta, hdr, &toff, &nexthdr);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	if (nexthdr == 44) {
		mib->in_hdr_errors++;
		return lrx_next_drop(LRX_DROP_IP_INHDR);
	}
	return LRX_NEXT_CONTINUE_V;
}

static __rte_always_inline lrx_next_t l3_ipv6_rcv_core(struct l3_ctx *c, struct rte_mbuf *m,
					  struct lrx_meta *meta,
					  struct l3_route_hint *hint)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V6];
	(void)hint; /* ipv6_list_rcv has no route hint in the kernel either */
	const uint8_t *raw;
	uint32_t skb_len;
	lrx_next_t next = l3_ip_rcv_prologue(c, m, meta, mib,
					     sizeof(struct rte_ipv6_hdr),
					     &raw, &skb_len);
	if (unlikely(next != LRX_NEXT_CONTINUE_V))
		return next;

	const uint32_t noff = meta->network_offset;
	const struct rte_ipv6_hdr *hdr = (const struct rte_ipv6_hdr *)raw;
	if (unlikely((hdr->vtc_flow & rte_cpu_to_be_32(0xf0000000)) !=
		     rte_cpu_to_be_32(0x60000000)))
		return l3_ip_inhdr_error(mib, LRX_DROP_UNHANDLED_PROTO);
	/* RFC 4291 2.5.3: loopback must not appear on the wire; 2.7:
	 * interface-local (1) and reserved (0) multicast scopes from another
	 * node; multicast sources */
	uint32_t plen = rte_be_to_cpu_16(hdr->payload_len);
	/* a BIG TCP GRO packet over 64 KB: payload_len 0, the length in the
	 * jumbo option ipv6_gro_complete inserts; listrx's GRO inserts none,
	 * the skb's length says it (as ip6_rcv_core with that option) */
	if (unlikely(plen == 0) && meta->gso_size && hdr->proto == IPPROTO_TCP &&
	    skb_len > sizeof(struct rte_ipv6_hdr))
		plen = skb_len - (uint32_t)sizeof(struct rte_ipv6_hdr);
	if (l3_ipv6_is_loopback(hdr->src_addr) ||
	    l3_ipv6_is_loopback(hdr->dst_addr) ||
	    (hdr->dst_addr[0] == 0xff && (hdr->dst_addr[1] & 0x0f) <= 1) ||
	    hdr->src_addr[0] == 0xff)
		return l3_ip_inhdr_error(mib, LRX_DROP_NOT_SPECIFIED);
	uint32_t toff = noff + sizeof(struct rte_ipv6_hdr);
	uint8_t nexthdr = hdr->proto;
	/* "pkt_len may be zero if Jumbo payload option is present": then
	 * the packet is as long as the buffer, unless a jumbo option
	 * says */
	meta->len = skb_len;
	if (likely(plen || nexthdr != 0)) {
		if (plen + sizeof(struct rte_ipv6_hdr) > skb_len) {
			mib->in_truncated_pkts++;
			return l3_ip_drop(LRX_DROP_PKT_TOO_SMALL);
		}
		if (skb_len > plen + sizeof(struct rte_ipv6_hdr)) {
			l3_trim_to(m, noff + plen + sizeof(struct rte_ipv6_hdr));
			c->l3_trimmed++;
		}
		meta->len = plen + sizeof(struct rte_ipv6_hdr);
	}
	if (nexthdr == 0) { /* NEXTHDR_HOP: ipv6_parse_hopopts */
		uint32_t hbh_len = 0, jumbo_len;
		struct l3_ext_fail fail;
		if (l3_ipv6_hopopts(l3_frame(m), noff,
				    RTE_MIN(m->data_len, noff + meta->len), plen,
				    meta->len, hdr->dst_addr[0] == 0xff, &hbh_len,
				    &jumbo_len, &fail) != L3_EXT_UPPER) {
			fail.mib = L3_EXT_MIB_HDR_ERRORS; /* ip6_rcv_core's */
			return l3_ipv6_ext_failed(c, m, &fail);
		}
		if (jumbo_len) { /* ipv6_hop_jumbo's pskb_trim_rcsum */
			meta->len = jumbo_len + sizeof(struct rte_ipv6_hdr);
			if (skb_len > meta->len) {
				l3_trim_to(m, noff + meta->len);
				c->l3_trimmed++;
			}
		}
		nexthdr = l3_frame(m)[toff];
		toff += hbh_len;
	}
	meta->transport_offset = (uint16_t)toff;
	meta->l4_proto = nexthdr;

	/* ip6_route_input: a non-forwarding host's ip6_forward error */
	c->route_lookups++;
	if (!l3_ipv6_is_local(c, hdr->dst_addr)) {
		mib->in_addr_errors++;
		return lrx_next_drop(LRX_DROP_IP_INADDRERRORS);
	}
	if (hdr->dst_addr[0] == 0xff) {
		/* ip6_mc_input: InMcastPkts/Octets, then a group this port
		 * has not joined (ipv6_chk_mcast_addr) is freed uncounted */
		mib->in_mcast_pkts++;
		mib->in_mcast_octets += meta->len;
		if (!l3_mcast_joined6(&c->mc, hdr->dst_addr, m->port))
			return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	}
	if (unlikely(l3_ipv6_is_exthdr(nexthdr))) {
		next = l3_ipv6_ext(c, m, meta, hdr, &toff, &nexthdr);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	if (unlikely(nexthdr == 44)) /* NEXTHDR_FRAGMENT: ipv6_frag_rcv */
		return l3_ipv6_frag(c, m, meta, toff);
	return LRX_NEXT_CONTINUE_V;
}

/* ip_list_rcv / ipv6_list_rcv over pkts[idx[0..n-1]], or over pkts[0..n-1]
 * when idx is NULL (a contiguous run: no indirection). A contiguous run
 * whose packets all survive goes on to L4 as it is (l3_identity: the L4
 * loop reads packet k at k); otherwise the survivors' indexes. */
static __rte_always_inline void
l3_ip_list_rcv(struct l3_ctx *c, struct rte_mbuf **pkts,
	       struct lrx_meta *const *metas, const uint16_t *idx, uint16_t n,
	       lrx_next_t *nexts, int fam,
	       lrx_next_t (*core)(struct l3_ctx *, struct rte_mbuf *,
				  struct lrx_meta *, struct l3_route_hint *))
{
	uint16_t live[LRX_BURST_MAX];
	uint16_t n_live = 0;
	unsigned protos_or = 0, protos_and = 0xff;
	struct l3_route_hint hint = {.valid = false};
	struct l3_route_hint *hp = c->route_hint ? &hint : NULL;
	for (uint16_t k = 0; k < n; k++) {
		const uint16_t i = idx ? idx[k] : k;
		struct lrx_meta *meta = metas[i];
		lrx_next_t next = core(c, pkts[i], meta, hp);
		nexts[i] = next;
		live[n_live] = i;
		const bool ok = next == LRX_NEXT_CONTINUE_V;
		/* equal OR and AND of the survivors' protocols: one L4 run,
		 * no scan (branch-free selects) */
		protos_or |= ok ? meta->l4_proto : 0u;
		protos_and &= ok ? meta->l4_proto : 0xffu;
		n_live += ok;
	}
	l3_local_deliver_list(c, pkts, metas,
			      idx == NULL && n_live == n ? l3_identity : live,
			      n_live, nexts, fam, protos_or == protos_and);
}

/* ip_list_rcv with netfilter's PREROUTING hook on the list, as the
 * kernel runs it: ip_rcv_core over the sublist, NF_HOOK_LIST
 * (nf_hook_slow_list: the hook on each packet, the survivors stay a list),
 * then ip_list_rcv_finish over the survivors, whose ip_local_deliver runs
 * the LOCAL_IN hook packet by packet. Same verdicts and counters as
 * l3_ip_list_rcv; only the order of the work differs. */
static void l3_ipv4_list_rcv_nf(struct l3_ctx *c, struct rte_mbuf **pkts,
				struct lrx_meta *const *metas,
				const uint16_t *idx, uint16_t n,
				lrx_next_t *nexts)
{
	uint16_t live[LRX_BURST_MAX], passed[LRX_BURST_MAX];
	uint16_t n_live = 0, n_passed = 0;
	unsigned protos_or = 0, protos_and = 0xff;
	struct l3_route_hint hint = {.valid = false};
	struct l3_route_hint *hp = c->route_hint ? &hint : NULL;

	for (uint16_t k = 0; k < n; k++) {
		const uint16_t i = idx ? idx[k] : k;
		nexts[i] = l3_ipv4_rcv_early(c, pkts[i], metas[i]);
		live[n_live] = i;
		n_live += nexts[i] == LRX_NEXT_CONTINUE_V;
	}
	for (uint16_t k = 0; k < n_live; k++) {
		const uint16_t i = live[k];
		nexts[i] = l3_ipv4_nf_hook(c, pkts[i], metas[i],
					   LRX_NF_PRE_ROUTING);
		passed[n_passed] = i;
		n_passed += nexts[i] == LRX_NEXT_CONTINUE_V;
	}
	n_live = 0;
	for (uint16_t k = 0; k < n_passed; k++) {
		const uint16_t i = passed[k];
		struct lrx_meta *meta = metas[i];
		const lrx_next_t next = l3_ipv4_rcv_finish(c, pkts[i], meta, hp);
		nexts[i] = next;
		live[n_live] = i;
		const bool ok = next == LRX_NEXT_CONTINUE_V;
		protos_or |= ok ? meta->l4_proto : 0u;
		protos_and &= ok ? meta->l4_proto : 0xffu;
		n_live += ok;
	}
	l3_local_deliver_list(c, pkts, metas, live, n_live, nexts,
			      L3_FAMILY_V4, protos_or == protos_and);
}

/* ip_rcv / ipv6_rcv (one packet) and ip_list_rcv / ipv6_list_rcv (a
 * sublist: l3_identity for a contiguous run, else the packets' indexes) */
#define L3_DEFINE_IP_HANDLER(family, core, fam)                                 \
	static lrx_next_t l3_##family##_rcv(struct l3_ctx *c,                   \
					  struct rte_mbuf *m,                 \
					  struct lrx_meta *meta)              \
	{                                                                     \
		lrx_next_t next = core(c, m, meta, NULL);                     \
		if (next != LRX_NEXT_CONTINUE_V)                              \
			return next;                                          \
		return l3_local_deliver_one(c, m, meta, fam);                 \
	}                                                                     \
	static void l3_##family##_list_rcv(struct l3_ctx *c,                    \
					 struct rte_mbuf **pkts,              \
					 struct lrx_meta *const *metas,       \
					 const uint16_t *idx, uint16_t n,     \
					 lrx_next_t *nexts)                   \
	{                                                                     \
		if (fam == L3_FAMILY_V4 && c->nf != NULL) {                   \
			l3_ipv4_list_rcv_nf(c, pkts, metas,                   \
					    idx == l3_identity ? NULL : idx,  \
					    n, nexts);                        \
			return;                                               \
		}                                                             \
		if (idx == l3_identity)                                       \
			l3_ip_list_rcv(c, pkts, metas, NULL, n, nexts, fam,   \
				       core);                                 \
		else                                                          \
			l3_ip_list_rcv(c, pkts, metas, idx, n, nexts, fam,    \
				       core);                                 \
	}                                                                     \
	static const struct l3_handler l3_##family##_handler = {                \
		.name = #family,                                                \
		.rcv = l3_##family##_rcv,                                       \
		.list_rcv = l3_##family##_list_rcv,                             \
	};
L3_DEFINE_IP_HANDLER(ipv4, l3_ipv4_rcv_core, L3_FAMILY_V4)
L3_DEFINE_IP_HANDLER(ipv6, l3_ipv6_rcv_core, L3_FAMILY_V6)

/* ---- ARP: arp_rcv + arp_process (reply for the configured address) ------- */

static inline lrx_next_t l3_arp_core(struct l3_ctx *c, struct rte_mbuf *m,
				     struct lrx_meta *meta, const int fam)
{
	(void)fam; /* the handler macro's signature; ARP has no family */
	c->arp_in++;
	const uint32_t noff = meta->network_offset;
	if (m->pkt_len < noff + sizeof(struct rte_arp_hdr) ||
	    m->data_len < noff + sizeof(struct rte_arp_hdr))
		return lrx_next_drop(LRX_DROP_PKT_TOO_SMALL);
	struct rte_arp_hdr *arp =
		rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, noff);
	/* arp_rcv consumes (does not drop) what is not for it */
	if (arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4 ||
	    meta->pkt_type == LRX_PACKET_OTHERHOST || c->arp_ip == 0 ||
	    arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) ||
	    arp->arp_data.arp_tip != c->arp_ip)
		return LRX_NEXT_DELIVER_V;

	const lrx_next_t next = l3_reply_arp(&c->reply, m, LRX_NEXT_DELIVER_V,
					     c->arp_ip);
	c->arp_replies += next != LRX_NEXT_DELIVER_V;
	return next;
}
L3_DEFINE_HANDLER(arp, l3_arp_core)

/* ---- the stage: first-level dispatch by ethertype ------------------------- */

/* The ethertype's class, computed without a branch: in a mixed burst the
 * class changes at random and a compare chain would mispredict there (and
 * the compiler turns compares of one value into a chain). A two-bit hash
 * of the ethertype picks the one candidate it can be; a compare with it
 * keeps or clears the class. */
static inline enum l3_class l3_classify(const struct lrx_meta *meta)
{
	static const uint16_t etype[4] = {
		RTE_ETHER_TYPE_IPV4, 0xffff, RTE_ETHER_TYPE_ARP,
		RTE_ETHER_TYPE_IPV6};
	static const uint8_t class[4] = {
		L3_CLASS_IPV4, L3_CLASS_OTHER, L3_CLASS_ARP, L3_CLASS_IPV6};
	RTE_BUILD_BUG_ON(L3_CLASS_OTHER != 0);
	RTE_BUILD_BUG_ON((((RTE_ETHER_TYPE_IPV4 >> 8) ^ RTE_ETHER_TYPE_IPV4) & 3) != 0 ||
			 (((RTE_ETHER_TYPE_ARP >> 8) ^ RTE_ETHER_TYPE_ARP) & 3) != 2 ||
			 (((RTE_ETHER_TYPE_IPV6 >> 8) ^ RTE_ETHER_TYPE_IPV6) & 3) != 3);
	const uint16_t p = meta->protocol;
	const unsigned h = (unsigned)((p >> 8) ^ p) & 3;
	return (enum l3_class)(class[h] & -(unsigned)(p == etype[h]));
}

/* The same class for one packet: the per-packet path branches on the
 * class right after (the handler call, INDIRECT_CALL_INET), so a compare
 * chain costs no extra misprediction and fewer instructions than the
 * table. The agreement tests compare the two paths on every class. */
static inline enum l3_class l3_classify_one(const struct lrx_meta *meta)
{
	/* IPv4 first: GCC orders the switch's compares by value */
	if (likely(meta->protocol == RTE_ETHER_TYPE_IPV4))
		return L3_CLASS_IPV4;
	switch (meta->protocol) {
	case RTE_ETHER_TYPE_IPV4: return L3_CLASS_IPV4;
	case RTE_ETHER_TYPE_IPV6: return L3_CLASS_IPV6;
	case RTE_ETHER_TYPE_ARP: return L3_CLASS_ARP;
	default: return L3_CLASS_OTHER;
	}
}

/* __netif_receive_skb_core found no packet_type for the protocol (an
 * unknown ethertype, or a VLAN tag left after one for no VLAN device):
 * the device's rx_dropped (not rx_nohandler: that one is for
 * RX_HANDLER_EXACT's deliver_exact), then kfree_skb UNHANDLED_PROTO. */
static void l3_no_ptype(struct l3_ctx *c, const struct rte_mbuf *m)
{
	c->rx_dropped++;
	if (m->port < RTE_MAX_ETHPORTS)
		c->dev[m->port].rx_dropped++;
}

static inline lrx_next_t l3_demux_core(struct l3_ctx *c, struct rte_mbuf *m)
{
	struct lrx_meta *meta = lrx_meta(m);
	const struct l3_handler *h = c->l3_table[l3_classify_one(meta)];
	if (unlikely(h == NULL)) {
		l3_no_ptype(c, m);
		return lrx_next_drop(LRX_DROP_UNHANDLED_PROTO);
	}
	/* INDIRECT_CALL_INET(pt_prev->func, ipv6_rcv, ip_rcv, ...) */
	return L3_CALL2(c, h->rcv, l3_ipv4_rcv, l3_ipv6_rcv, c, m, meta);
}

/* The replies the list path's handlers asked for, in arrival order. */
static void l3_demux_replies(struct l3_ctx *c, struct rte_mbuf **pkts,
			     uint16_t n, lrx_next_t *nexts)
{
	c->reply_later = false;
	for (uint16_t i = 0; i < n && c->reply.replies_asked; i++)
		if (l3_reply_asked(nexts[i]))
			nexts[i] = l3_reply_send(&c->reply, pkts[i], nexts[i]);
	c->reply.replies_asked = 0;
}

lrx_next_t lrx_l3_demux_process_one(void *ctx, struct rte_mbuf *pkt)
{
	return l3_demux_core(ctx, pkt);
}

/* ip_rcv / ipv6_rcv of one packet with the handler calls that
 * dispatch=direct makes direct (ip_rcv itself, udp_rcv) as their inline
 * cores: the per-packet path without its two call frames, for the burst
 * entry's loop (VPP's node loop over its frame). Same cores, counters
 * and verdicts as l3_ipv4_rcv / l3_ipv6_rcv. */
static __rte_always_inline lrx_next_t
l3_ip_rcv_inline(struct l3_ctx *c, struct rte_mbuf *m, struct lrx_meta *meta, const int fam,
		 lrx_next_t (*core)(struct l3_ctx *, struct rte_mbuf *, struct lrx_meta *,
				    struct l3_route_hint *))
{
	lrx_next_t next = core(c, m, meta, NULL);
	if (next != LRX_NEXT_CONTINUE_V)
		return next;
	const struct l3_handler *h = c->l4_table[fam][meta->l4_proto];
	if (likely(h == &l3_udp_handler)) {
		c->ip[fam].in_delivers++;
		return l3_udp_core(c, m, meta, fam);
	}
	return l3_local_deliver_one(c, m, meta, fam);
}

/* The burst entry's packet (list_split=none). */
static __rte_always_inline lrx_next_t l3_demux_core_inline(struct l3_ctx *c, struct rte_mbuf *m)
{
	struct lrx_meta *meta = lrx_meta(m);
	const struct l3_handler *h = c->l3_table[l3_classify_one(meta)];
	if (likely(c->direct && h == &l3_ipv4_handler))
		return l3_ip_rcv_inline(c, m, meta, L3_FAMILY_V4, l3_ipv4_rcv_core);
	if (c->direct && h == &l3_ipv6_handler)
		return l3_ip_rcv_inline(c, m, meta, L3_FAMILY_V6, l3_ipv6_rcv_core);
	return l3_demux_core(c, m);
}

static __rte_always_inline lrx_next_t l3_demux_one(void *ctx, struct rte_mbuf *m)
{
	return l3_demux_core_inline(ctx, m);
}

/* One first-level sublist: the handler of class cls over pkts[idx[..n]]
 * (idx l3_identity with the arrays at the run's start, or the class's
 * indexes with the arrays at the burst's start). */
static inline void l3_demux_sublist(struct l3_ctx *c, enum l3_class cls,
				    struct rte_mbuf **pkts,
				    struct lrx_meta *const *metas,
				    const uint16_t *idx, uint16_t n,
				    lrx_next_t *nexts)
{
	const struct l3_handler *h = c->l3_table[cls];
	if (unlikely(h == NULL)) {
		for (uint16_t k = 0; k < n; k++) {
			nexts[idx[k]] = lrx_next_drop(LRX_DROP_UNHANDLED_PROTO);
			l3_no_ptype(c, pkts[idx[k]]);
		}
		return;
	}
	c->l3_sublists++;
	L3_CALL2(c, h->list_rcv, l3_ipv4_list_rcv, l3_ipv6_list_rcv, c, pkts,
		 metas, idx, n, nexts);
}

/* __netif_receive_skb_list_core: one handler call per sublist. The
 * kernel's sublists are runs of consecutive packets of the same handler
 * (list_split=runs); list_split=gather makes one sublist per class, in
 * arrival order within it, as VPP's next-node frames (a mixed burst then
 * costs one call per class, not one per run). Verdicts and SNMP counters
 * are the same either way: the classes' handlers share no state that
 * depends on their order (reassembly accounts each family apart). */
static void l3_demux_process_burst(void *ctx, struct rte_mbuf **pkts,
				   uint16_t n, lrx_next_t *nexts)
{
	struct l3_ctx *c = ctx;
	struct lrx_meta *metas[LRX_BURST_MAX];
	uint8_t cls[LRX_BURST_MAX];
	uint16_t lists[L3_CLASS_MAX][LRX_BURST_MAX];

	if (n == 0)
		return;
	if (c->split == L3_SPLIT_NONE) {
		/* no sublists: the per-packet path over the burst, in one
		 * call (the engine's saving), with its prefetch */
		lrx_list_loop(c, pkts, n, nexts, c->prefetch, l3_demux_one);
		return;
	}
	c->reply_later = true;
	/* one pass: the metadata pointer and class of each packet, and each
	 * class's index list (counts in registers: a count in memory would
	 * chain every packet to the previous one through store forwarding);
	 * it prefetches the packets ahead for the handlers that follow */
	lrx_prefetch_start(pkts, n, c->prefetch);
	/* the four counts, 16 bits each, in one register */
	RTE_BUILD_BUG_ON(L3_CLASS_MAX > 4 || LRX_BURST_MAX > 0xffff);
	uint64_t packed = 0;
	for (uint16_t i = 0; i < n; i++) {
		lrx_prefetch_ahead(pkts, i, n, c->prefetch);
		metas[i] = lrx_meta(pkts[i]);
		const unsigned k = l3_classify(metas[i]);
		cls[i] = (uint8_t)k;
		lists[k][(packed >> (16 * k)) & 0xffff] = i;
		packed += 1ull << (16 * k);
	}
	uint16_t counts[L3_CLASS_MAX];
	for (unsigned k = 0; k < L3_CLASS_MAX; k++)
		counts[k] = (uint16_t)(packed >> (16 * k));
	const enum l3_class first = (enum l3_class)cls[0];
	if (counts[first] == n) { /* one class: one sublist, no indexes */
		l3_demux_sublist(c, first, pkts, metas, l3_identity, n, nexts);
	} else if (c->split == L3_SPLIT_GATHER) {
		for (unsigned k = 0; k < L3_CLASS_MAX; k++)
			if (counts[k])
				l3_demux_sublist(c, (enum l3_class)k, pkts,
						 metas, lists[k], counts[k],
						 nexts);
	} else {
		uint16_t start = 0;
		while (start < n) {
			uint16_t end = start + 1;
			while (end < n && cls[end] == cls[start])
				end++;
			l3_demux_sublist(c, (enum l3_class)cls[start],
					 pkts + start, metas + start,
					 l3_identity, end - start,
					 nexts + start);
			start = end;
		}
	}
	if (unlikely(c->reply.replies_asked))
		l3_demux_replies(c, pkts, n, nexts);
	c->reply_later = false;
}

/* ---- configuration ------------------------------------------------------- */

/* A MAC, or "port": the ingress port's (arp_mac). */
struct l3_mac_conf {
	bool from_port;
	uint8_t mac[6];
};

static int l3_parse_arp_mac(const char *text, void *out)
{
	struct l3_mac_conf *m = out;
	m->from_port = strcmp(text, "port") == 0;
	/* used when the port has no MAC (no ethdev) */
	return lrx_value_mac(m->from_port ? "02:00:00:00:00:02" : text, m->mac);
}

/* none (0: no ARP replies) or an IPv4 address other than 0.0.0.0 */
static int l3_parse_arp_ip(const char *text, void *out)
{
	*(uint32_t *)out = 0;
	if (strcmp(text, "none") == 0)
		return 0;
	return lrx_value_addr(text, AF_INET, out, NULL) < 0 || *(uint32_t *)out == 0 ? -EINVAL
										 : 0;
}

struct l3_conf {
	unsigned dispatch, martians, list_split;
	bool trust_ip_csum_hint, route_hint, ipv6_mip6;
	struct l3_addrs local_ipv4, local_ipv6;
	struct l3_groups mcast_groups;
	struct lrx_port_set udp_ports, tcp_ports;
	uint32_t arp_ip;
	struct l3_mac_conf arp_mac;
	struct l3_reasm_conf reasm;
	struct l3_reply_conf reply;
	char netfilter[PATH_MAX]; /* rule file; empty: no hooks */
	char udp_sockets[1024];   /* empty: udp_ports decides */
	uint32_t udp_rcvbuf, udp_truesize, udp_read_batch;
	unsigned udp_reader;
	uint32_t tcp_ehash;       /* buckets of each family's table; 0: none */
};

/* tcp_ehash: 0 (off) or a power of two, as the kernel sizes its ehash
 * (alloc_large_system_hash rounds to one) */
static int l3_parse_ehash(const char *text, void *out)
{
	uint64_t v;
	if (lrx_value_uint(text, 0, LRX_TCP_EHASH_MAX, &v) < 0 || (v & (v - 1)) != 0)
		return -EINVAL;
	*(uint32_t *)out = (uint32_t)v;
	return 0;
}
#define L3_EHASH_VALID "0 or a power of two in 1..1048576"
_Static_assert(LRX_TCP_EHASH_MAX == 1048576, "L3_EHASH_VALID says the maximum");

static void l3_ports_copy(uint64_t *bitmap, bool *any, const struct lrx_port_set *set)
{
	*any = set->any;
	memcpy(bitmap, set->bits, sizeof(set->bits));
}

/* The sockets of key udp_sockets: they replace udp_ports (an empty port
 * map sends every datagram to the lookup). */
static int l3_socks_init(struct l3_ctx *c, const struct l3_conf *conf,
			 const struct lrx_stage_init *init)
{
	static const enum lrx_udp_reader readers[] = {LRX_UDP_READER_POLL,
						      LRX_UDP_READER_NONE};
	char why[512];
	int rc;

	if (!conf->udp_ports.any) {
		snprintf(init->err, init->err_len,
			 "%s: keys 'udp_sockets' and 'udp_ports' both say which "
			 "ports have a socket: set one of them", init->instance);
		return -EINVAL;
	}
	c->socks = rte_zmalloc_socket("l3_udp_socks", sizeof(*c->socks),
				      RTE_CACHE_LINE_SIZE, init->socket_id);
	if (c->socks == NULL) {
		snprintf(init->err, init->err_len, "%s: out of memory",
			 init->instance);
		return -ENOMEM;
	}
	c->socks->truesize = conf->udp_truesize;
	c->socks->reader = readers[conf->udp_reader];
	if (c->socks->reader == LRX_UDP_READER_POLL && conf->udp_read_batch) {
		c->socks->reader = LRX_UDP_READER_BATCH;
		c->socks->batch = conf->udp_read_batch;
	}
	rc = lrx_udp_socks_init(c->socks, conf->udp_sockets, conf->udp_rcvbuf,
				init->socket_id, why, sizeof(why));
	if (rc < 0) {
		snprintf(init->err, init->err_len, "%s: key 'udp_sockets': %s",
			 init->instance, why);
		lrx_udp_socks_fini(c->socks);
		rte_free(c->socks);
		c->socks = NULL;
		return rc;
	}
	/* an empty port map: l3_udp_multi asks the sockets */
	c->udp_any = false;
	memset(c->udp_ports, 0, sizeof(c->udp_ports));
	return 0;
}

static void l3_demux_fini(void *ctx);

static int l3_demux_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct l3_conf *conf = init->conf;
	struct l3_ctx *c = ctx;

	c->prefetch = init->prefetch;
	c->direct = conf->dispatch == 1;
	c->martians_drop = conf->martians == 0;
	/* auto: sublists where the handler calls they save are indirect
	 * calls through retpoline thunks; elsewhere the sublists' own
	 * bookkeeping costs more than the calls (docs/engines.md) */
	c->split = conf->list_split != 0 ? (enum l3_split)conf->list_split
		   : LISTRX_RETPOLINE && !c->direct ? L3_SPLIT_GATHER
						    : L3_SPLIT_NONE;
	c->trust_ip_csum_hint = conf->trust_ip_csum_hint;
	c->route_hint = conf->route_hint;
	c->mip6 = conf->ipv6_mip6;
	c->n_local4 = conf->local_ipv4.n;
	for (unsigned i = 0; i < c->n_local4; i++)
		memcpy(&c->local4[i], conf->local_ipv4.addr[i], 4);
	memcpy(c->plen4, conf->local_ipv4.plen, sizeof(c->plen4));
	c->n_local6 = conf->local_ipv6.n;
	memcpy(c->local6, conf->local_ipv6.addr, sizeof(c->local6));
	memcpy(c->plen6, conf->local_ipv6.plen, sizeof(c->plen6));
	l3_mcast_setup(&c->mc, &conf->local_ipv4, &conf->local_ipv6, &conf->mcast_groups);
	l3_ports_copy(c->udp_ports, &c->udp_any, &conf->udp_ports);
	l3_ports_copy(c->tcp_ports, &c->tcp_any, &conf->tcp_ports);
	c->arp_ip = conf->arp_ip;
	c->arp_mac_from_port = conf->arp_mac.from_port;
	memcpy(c->arp_mac.addr_bytes, conf->arp_mac.mac, sizeof(conf->arp_mac.mac));

	if (lrx_meta_dynfield_offset < 0) {
		snprintf(init->err, init->err_len,
			 "%s: reads the packet metadata: put build-meta before "
			 "it in the pipeline", init->instance);
		return -EINVAL;
	}
	int rc = l3_reasm_init(&c->reasm, &conf->reasm, init);
	if (rc)
		return rc;
	const struct l3_reply_addrs addrs = {
		.n4 = c->n_local4, .n6 = c->n_local6,
		.local4 = c->local4, .plen4 = c->plen4,
		.local6 = (const uint8_t (*)[16])c->local6, .plen6 = c->plen6,
	};
	c->reply.mac_from_port = c->arp_mac_from_port;
	c->reply.mac = c->arp_mac;
	l3_reply_init(&c->reply, &conf->reply, &addrs);
	if (conf->netfilter[0] != '\0') {
		char why[512];
		rc = lrx_nf_load(conf->netfilter, &c->nf, why, sizeof(why));
		if (rc == 0) {
			c->nf_ctr = rte_zmalloc_socket("l3_nf_counters",
						       RTE_MAX(c->nf->n_entries, 1u) *
							       sizeof(*c->nf_ctr),
						       RTE_CACHE_LINE_SIZE,
						       init->socket_id);
			if (c->nf_ctr == NULL) {
				snprintf(why, sizeof(why), "out of memory");
				rc = -ENOMEM;
			}
		}
		if (rc < 0) {
			snprintf(init->err, init->err_len,
				 "%s: key 'netfilter': %s", init->instance, why);
			lrx_nf_free(c->nf);
			c->nf = NULL;
			l3_reasm_fini(&c->reasm);
			return rc;
		}
	}

	if (conf->udp_sockets[0] != '\0') {
		rc = l3_socks_init(c, conf, init);
		if (rc < 0) {
			lrx_nf_free(c->nf);
			rte_free(c->nf_ctr);
			c->nf = NULL;
			c->nf_ctr = NULL;
			l3_reasm_fini(&c->reasm);
			return rc;
		}
	}

	for (int fam = 0; fam < L3_FAMILIES && conf->tcp_ehash; fam++) {
		rc = lrx_tcp_ehash_init(&c->ehash[fam], conf->tcp_ehash,
					init->socket_id);
		if (rc < 0) {
			snprintf(init->err, init->err_len,
				 "%s: key 'tcp_ehash': out of memory for %u "
				 "buckets", init->instance, conf->tcp_ehash);
			l3_demux_fini(c);
			return rc;
		}
	}

	c->l3_table[L3_CLASS_IPV4] = &l3_ipv4_handler;
	c->l3_table[L3_CLASS_IPV6] = &l3_ipv6_handler;
	c->l3_table[L3_CLASS_ARP] = &l3_arp_handler;
	for (int fam = 0; fam < L3_FAMILIES; fam++) {
		c->l4_table[fam][IPPROTO_UDP] =
			c->socks != NULL ? &l3_udp_sock_handler : &l3_udp_handler;
		c->l4_table[fam][IPPROTO_TCP] =
			conf->tcp_ehash ? &l3_tcp_est_handler : &l3_tcp_handler;
	}
	c->l4_table[L3_FAMILY_V4][IPPROTO_ICMP] = &l3_icmp_handler;
	c->l4_table[L3_FAMILY_V6][IPPROTO_ICMPV6] = &l3_icmp_handler;
	return 0;
}

static const char *const l3_dispatches[] = {"indirect", "direct", NULL};
static const char *const l3_martians[] = {"drop", "accept", NULL};
static const char *const l3_echoes[] = {"reply", "deliver", NULL};
static const char *const l3_sends[] = {"send", "none", NULL};
static const char *const l3_splits[] = {"auto", "gather", "runs", "none", NULL};
static const char *const l3_clocks[] = {"tsc", "polls", NULL};
static const char *const l3_readers[] = {"poll", "none", NULL};

/* What the socket queues hold between polls: nothing past the poll when
 * the reader drains them all at its end; up to every queue's buffer when
 * it reads a batch per poll or nothing (udp_reader=none). */
static uint32_t l3_demux_mbuf_hold(const void *vconf, uint32_t mbuf_size)
{
	const struct l3_conf *conf = vconf;

	if (conf->udp_sockets[0] == '\0' ||
	    (conf->udp_reader == 0 && conf->udp_read_batch == 0))
		return 0;
	return lrx_udp_socks_capacity(conf->udp_sockets, conf->udp_rcvbuf,
				      conf->udp_truesize ? conf->udp_truesize
							 : mbuf_size);
}

#define L3K(kind, field, ...) LRX_KEY_##kind(struct l3_conf, field, __VA_ARGS__)
static const struct lrx_value_key l3_demux_keys[] = {
	L3K(CHOICE, dispatch, "dispatch", "direct", l3_dispatches,
	    "protocol handler calls: direct (INDIRECT_CALL_INET / "
	    "INDIRECT_CALL_2, compiled into every kernel built with "
	    "retpoline support: IPv4/IPv6 and TCP/UDP called directly) | "
	    "indirect (function pointers only)"),
	L3K(BOOL, trust_ip_csum_hint, "trust_ip_csum_hint", "yes",
	    "yes: skip the IPv4 header checksum when the NIC says good | no: "
	    "always verify it (the kernel's ip_fast_csum)"),
	L3K(CHOICE, martians, "martians", "drop", l3_martians,
	    "drop | accept martian sources/destinations (0/8, 127/8, multicast "
	    "or broadcast source)"),
	L3K(BOOL, route_hint, "route_hint", "yes",
	    "in bursts, reuse the previous packet's route lookup when "
	    "the destination is the same (ip_can_use_hint)"),
	L3K(CHOICE, list_split, "list_split", "auto", l3_splits,
	    "sublists of a burst: gather (one per protocol handler, arrival "
	    "order kept within it, as VPP's next-node frames) | runs (runs of "
	    "consecutive packets of one handler, as "
	    "__netif_receive_skb_list_core and ip_sublist_rcv) | none (one loop "
	    "over the burst, each packet to its handlers, as a VPP node's loop) "
	    "| auto (gather in a retpoline build with dispatch=indirect, "
	    "else none: the fastest measured)"),
	L3K(CUSTOM, local_ipv4, "local_ipv4", "any", l3_parse_local4, l3_local4_valid,
	    "addresses delivered locally: any | list of IPv4 addresses, "
	    "each optionally /prefix-length for its subnet broadcast "
	    "(others drop IP_INADDRERRORS: this host does not forward)"),
	L3K(CUSTOM, local_ipv6, "local_ipv6", "any", l3_parse_local6, l3_local6_valid,
	    "same for IPv6: any | list"),
	L3K(CUSTOM, mcast_groups, "mcast_groups", "any", l3_parse_groups, l3_groups_valid,
	    "multicast groups joined: any | none | list of IPv4/IPv6 "
	    "groups, each optionally %port (224.0.0.1, ff02::1 and the "
	    "solicited-node groups of local_ipv6 are implied; others drop)"),
	L3K(PORTS, udp_ports, "udp_ports", "any",
	    "UDP ports with a socket: any | none | list like 53,8000-8100 "
	    "(others drop NO_SOCKET, UdpNoPorts)"),
	L3K(PORTS, tcp_ports, "tcp_ports", "any", "TCP ports with a socket, as udp_ports"),
	L3K(BOOL, ipv6_mip6, "ipv6_mip6", "yes",
	    "type 2 routing headers as a kernel with (yes, as "
	    "distribution kernels) or without CONFIG_IPV6_MIP6 (no: unknown, "
	    "like type 0)"),
	L3K(CUSTOM, arp_ip, "arp_ip", "none", l3_parse_arp_ip,
	    "none or an IPv4 address",
	    "none | IPv4 address this host answers ARP requests for"),
	L3K(CUSTOM, arp_mac, "arp_mac", "port", l3_parse_arp_mac,
	    "port or a MAC address aa:bb:cc:dd:ee:ff",
	    "this host's MAC, the source of every reply (ARP, ICMP, TCP): port "
	    "(the ingress port's) | aa:bb:cc:dd:ee:ff"),
	/* replies (reply.c), each kind with its switch; they leave by the
	 * ingress port */
	L3K(CHOICE, reply.sw[L3_REPLY_SW_ECHO], "icmp_echo", "reply", l3_echoes,
	    "ICMP and ICMPv6 echo requests answered (icmp_echo, "
	    "icmpv6_echo_reply) or only delivered"),
	L3K(CHOICE, reply.sw[L3_REPLY_SW_TIMESTAMP], "icmp_timestamp", "reply", l3_echoes,
	    "ICMP timestamp requests (icmp_timestamp)"),
	L3K(CHOICE, reply.sw[L3_REPLY_SW_UNREACH], "icmp_unreach", "send", l3_sends,
	    "ICMP port unreachable for UDP without a socket (IPv4 and IPv6), "
	    "protocol unreachable for an unknown IPv4 protocol"),
	L3K(CHOICE, reply.sw[L3_REPLY_SW_PARAMPROB], "icmp_param_prob", "send", l3_sends,
	    "ICMP parameter problems for bad IPv4 options and IPv6 headers, "
	    "options or next headers"),
	L3K(CHOICE, reply.sw[L3_REPLY_SW_RST], "tcp_rst", "send", l3_sends,
	    "a RST for a segment to a port without a socket (tcp_v4_send_reset)"),
	L3K(CHOICE, reply.sw[L3_REPLY_SW_SYNACK], "tcp_synack", "send", l3_sends,
	    "a SYN-ACK for a SYN to a port with a socket"),
	L3K(UINT, reply.ratelimit4_ms, "icmp_ratelimit", "1000", 0, 3600000,
	    "ms between ICMP messages of icmp_ratemask's types to one peer "
	    "(net.ipv4.icmp_ratelimit; bursts of 6)"),
	L3K(UINT, reply.ratemask4, "icmp_ratemask", "6168", 0, UINT32_MAX,
	    "ICMP types rate limited, a bit each (net.ipv4.icmp_ratemask: "
	    "destination unreachable, source quench, time exceeded, parameter "
	    "problem)"),
	L3K(UINT, reply.msgs_per_sec, "icmp_msgs_per_sec", "1000", 0, INT32_MAX,
	    "limited ICMP(v6) messages per second, all peers together "
	    "(net.ipv4.icmp_msgs_per_sec)"),
	L3K(UINT, reply.msgs_burst, "icmp_msgs_burst", "50", 0, INT32_MAX,
	    "their burst (net.ipv4.icmp_msgs_burst)"),
	L3K(UINT, reply.ratelimit6_ms, "icmpv6_ratelimit", "100", 0, 3600000,
	    "ms between limited ICMPv6 messages to one peer, shifted right by "
	    "(128 - prefix length of its route) / 32 (net.ipv6.icmp.ratelimit)"),
	L3K(CUSTOM, reply.ratemask6, "icmpv6_ratemask", "0-1,3-127", l3_reply_parse_ratemask6,
	    l3_reply_ratemask6_valid, "ICMPv6 types rate limited (net.ipv6.icmp.ratemask)"),
	L3K(CHOICE, reply.clock, "icmp_clock", "tsc", l3_clocks,
	    "what the ICMP rate limits count (polls: one ms per end of poll, the "
	    "same for every engine)"),
	L3K(BOOL, reply.accept_source_route, "accept_source_route", "no",
	    "packets with a source route option (LSRR, SSRR) "
	    "(net.ipv4.conf.all.accept_source_route); no drops them uncounted"),
	L3K(UINT, reasm.time_s, "ipfrag_time", "30", 0, 86400,
	    "seconds a reassembly queue lives after its first fragment "
	    "(net.ipv4.ipfrag_time); polls at ipfrag_clock=polls"),
	L3K(UINT, reasm.high_thresh, "ipfrag_high_thresh", "4194304", 0, 1ul << 31,
	    "bytes of fragments held above which new fragments fail, for "
	    "IPv4 and IPv6 apart (net.ipv4.ipfrag_high_thresh, "
	    "net.ipv6.ip6frag_high_thresh; 0: every fragment fails)"),
	L3K(UINT, reasm.max_dist, "ipfrag_max_dist", "64", 0, UINT32_MAX,
	    "IPv4: fragments from one source between two of a datagram above "
	    "which its queue starts again (net.ipv4.ipfrag_max_dist; 0: off)"),
	L3K(CHOICE, reasm.clock, "ipfrag_clock", "tsc", l3_clocks,
	    "what ipfrag_time counts (polls: ends of poll, the "
	    "same for every engine)"),
	L3K(STRING, netfilter, "netfilter", "",
	    "iptables-save file of IPv4 rules (raw, mangle, filter; "
	    "docs/netfilter.md) run at PREROUTING (after ip_rcv_core) and INPUT "
	    "(after ip_defrag); empty: no hooks"),
	L3K(STRING, udp_sockets, "udp_sockets", "",
	    "UDP sockets with receive queues (docs/sockets.md): a comma list of "
	    "ADDR:PORT, [ADDR6]:PORT, *:PORT, [::]:PORT, each optionally :RCVBUF "
	    "(SO_RCVBUF); empty: udp_ports decides, datagrams are delivered"),
	L3K(UINT, udp_rcvbuf, "udp_rcvbuf", "0", 0, INT32_MAX,
	    "SO_RCVBUF of the sockets without their own :RCVBUF (doubled, as "
	    "setsockopt; 0: net.core.rmem_default, 212992)"),
	L3K(UINT, udp_truesize, "udp_truesize", "0", 0, 1u << 20,
	    "bytes a queued datagram charges to its socket (skb->truesize); 0: "
	    "its mbuf (struct, private area and buffer)"),
	L3K(CHOICE, udp_reader, "udp_reader", "poll", l3_readers,
	    "poll: the application reads its sockets at the end of each poll "
	    "(recvmmsg) | none: it reads nothing until the run ends"),
	L3K(UINT, udp_read_batch, "udp_read_batch", "0", 0, 65535,
	    "datagrams the reader takes per socket per poll (recvmmsg's vlen); "
	    "0: all queued"),
	L3K(CUSTOM, tcp_ehash, "tcp_ehash", "0", l3_parse_ehash, L3_EHASH_VALID,
	    "buckets of TCP's established-socket table per family "
	    "(docs/sockets.md): every segment is looked up first "
	    "(__inet_lookup_established), a listener's new connections are "
	    "inserted, one per bucket at most; 0: no table, tcp_ports decides"),
	{.name = NULL},
};
#undef L3K

/* The reassembly timer runs at the end of each poll; the run's end
 * expires what is left; what they discard goes to the sink (discard);
 * fini frees (uncounted) what a run without a drain left. */
/* The sockets' reader also runs at the end of each poll (udp_recvmsg:
 * UdpInDatagrams when read) and at the run's end reads everything; what
 * it read leaves with the discards, delivered (the application has it). */
static void l3_demux_flush(void *ctx, bool budget_used)
{
	struct l3_ctx *c = ctx;

	(void)budget_used;
	l3_reasm_tick(&c->reasm);
	l3_reply_tick(&c->reply);
	if (c->socks != NULL)
		lrx_udp_read(c->socks, false, &c->udp[L3_FAMILY_V4].in_datagrams,
			     &c->udp[L3_FAMILY_V6].in_datagrams);
}
static void l3_demux_end_run(void *ctx)
{
	struct l3_ctx *c = ctx;

	l3_reasm_expire_all(&c->reasm);
	if (c->socks != NULL) {
		/* what a full sink leaves unread the next drain reads (each
		 * calls end_run) */
		lrx_udp_read(c->socks, true, &c->udp[L3_FAMILY_V4].in_datagrams,
			     &c->udp[L3_FAMILY_V6].in_datagrams);
	}
}
static __rte_noinline uint16_t l3_demux_discard_socks(struct l3_ctx *c,
						      struct rte_mbuf **pkts,
						      lrx_next_t *nexts, uint16_t max)
{
	uint16_t n = l3_reasm_discard(&c->reasm, pkts, nexts, max);
	const uint16_t r = lrx_udp_release(c->socks, pkts + n, max - n);

	for (uint16_t i = 0; i < r; i++)
		nexts[n + i] = LRX_NEXT_DELIVER_V;
	return n + r;
}
static uint16_t l3_demux_discard(void *ctx, struct rte_mbuf **pkts, lrx_next_t *nexts,
				 uint16_t max)
{
	struct l3_ctx *c = ctx;

	if (c->socks != NULL)
		return l3_demux_discard_socks(c, pkts, nexts, max);
	return l3_reasm_discard(&c->reasm, pkts, nexts, max);
}
/* netfilter's rules on a device the run does not have never match: said
 * once the ports are known (iptables takes such a rule too) */
static int l3_demux_start(void *ctx, const struct lrx_stage_start *start)
{
	const struct l3_ctx *c = ctx;

	if (c->nf != NULL)
		lrx_nf_ports_check(c->nf, "key 'netfilter'", start->ports, start->n_ports,
				   start->warn, start->warn_len);
	return 0;
}

static uint32_t l3_demux_held(const void *ctx)
{
	const struct l3_ctx *c = ctx;

	return l3_reasm_held(&c->reasm) +
	       (c->socks != NULL ? lrx_udp_held(c->socks) : 0);
}
static void l3_demux_fini(void *ctx)
{
	struct l3_ctx *c = ctx;

	l3_reasm_fini(&c->reasm);
	lrx_nf_free(c->nf);
	rte_free(c->nf_ctr);
	c->nf = NULL;
	c->nf_ctr = NULL;
	if (c->socks != NULL) {
		lrx_udp_socks_fini(c->socks);
		rte_free(c->socks);
		c->socks = NULL;
	}
	for (int fam = 0; fam < L3_FAMILIES; fam++)
		lrx_tcp_ehash_fini(&c->ehash[fam]);
}

/* The rule counters of netfilter's chains, one map per chain
 * (netfilter.h: as iptables -L -v -x). */
static bool l3_demux_map_at(const void *ctx, unsigned i, struct lrx_stage_map *out)
{
	return lrx_nf_map_at(((const struct l3_ctx *)ctx)->nf, i, out);
}

static bool l3_demux_map_next(const void *ctx, unsigned i, uint32_t *cursor,
			      void *key, void *value)
{
	const struct l3_ctx *c = ctx;

	return lrx_nf_map_next(c->nf, c->nf_ctr, i, cursor, key, value);
}

#define L3C(n, field, ...) {.name = n, .offset = offsetof(struct l3_ctx, field), __VA_ARGS__}
static const struct lrx_stage_counter l3_demux_counters[] = {
	L3C("IpInReceives", ip[0].in_receives),
	L3C("IpInHdrErrors", ip[0].in_hdr_errors),
	L3C("IpInAddrErrors", ip[0].in_addr_errors),
	L3C("IpInUnknownProtos", ip[0].in_unknown_protos),
	L3C("IpInDiscards", ip[0].in_discards),
	L3C("IpInDelivers", ip[0].in_delivers),
	L3C("IpReasmReqds", reasm.mib[0].reqds),
	L3C("IpReasmOKs", reasm.mib[0].oks),
	L3C("IpReasmFails", reasm.mib[0].fails),
	L3C("IpReasmTimeout", reasm.mib[0].timeout),
	L3C("IpExtReasmOverlaps", reasm.mib[0].overlaps),
	L3C("IpExtInTruncatedPkts", ip[0].in_truncated_pkts),
	L3C("IpExtInCsumErrors", ip[0].in_csum_errors),
	L3C("IpExtInMcastPkts", ip[0].in_mcast_pkts),
	L3C("IpExtInBcastPkts", ip[0].in_bcast_pkts),
	L3C("IpExtInMcastOctets", ip[0].in_mcast_octets),
	L3C("IpExtInBcastOctets", ip[0].in_bcast_octets),
	L3C("Ip6InReceives", ip[1].in_receives),
	L3C("Ip6InHdrErrors", ip[1].in_hdr_errors),
	L3C("Ip6InAddrErrors", ip[1].in_addr_errors),
	L3C("Ip6InUnknownProtos", ip[1].in_unknown_protos),
	L3C("Ip6InDiscards", ip[1].in_discards),
	L3C("Ip6InDelivers", ip[1].in_delivers),
	L3C("Ip6InTruncatedPkts", ip[1].in_truncated_pkts),
	L3C("Ip6InMcastPkts", ip[1].in_mcast_pkts),
	L3C("Ip6ReasmReqds", reasm.mib[1].reqds),
	L3C("Ip6ReasmOKs", reasm.mib[1].oks),
	L3C("Ip6ReasmFails", reasm.mib[1].fails),
	L3C("Ip6ReasmTimeout", reasm.mib[1].timeout),
	L3C("Ip6ReasmOverlaps", reasm.mib[1].overlaps),
	L3C("Ip6InMcastOctets", ip[1].in_mcast_octets),
	L3C("UdpInDatagrams", udp[0].in_datagrams),
	L3C("UdpNoPorts", udp[0].no_ports),
	L3C("UdpInErrors", udp[0].in_errors),
	L3C("UdpInCsumErrors", udp[0].in_csum_errors),
	L3C("UdpIgnoredMulti", udp[0].ignored_multi),
	L3C("UdpRcvbufErrors", udp_rcvbuf_errors[0]),
	L3C("Udp6InDatagrams", udp[1].in_datagrams),
	L3C("Udp6NoPorts", udp[1].no_ports),
	L3C("Udp6InErrors", udp[1].in_errors),
	L3C("Udp6InCsumErrors", udp[1].in_csum_errors),
	L3C("Udp6IgnoredMulti", udp[1].ignored_multi),
	L3C("Udp6RcvbufErrors", udp_rcvbuf_errors[1]),
	L3C("TcpInSegs", tcp.in_segs),
	L3C("TcpInErrs", tcp.in_errs),
	L3C("TcpInCsumErrors", tcp.in_csum_errors),
	L3C("IcmpInMsgs", icmp[0].in_msgs),
	L3C("IcmpInErrors", icmp[0].in_errors),
	L3C("IcmpInCsumErrors", icmp[0].in_csum_errors),
	L3C("IcmpInEchos", icmp[0].in_echos),
	L3C("IcmpOutMsgs", reply.icmp_out_msgs),
	L3C("IcmpOutEchoReps", reply.icmp_out_echo_reps),
	L3C("IcmpOutDestUnreachs", reply.icmp_out_dest_unreachs),
	L3C("IcmpOutParmProbs", reply.icmp_out_parm_probs),
	L3C("IcmpOutRateLimitGlobal", reply.icmp_out_ratelimit_global),
	L3C("IcmpOutRateLimitHost", reply.icmp_out_ratelimit_host),
	L3C("IcmpMsgOutType0", reply.icmp_out_type0),
	L3C("IcmpMsgOutType3", reply.icmp_out_type3),
	L3C("IcmpMsgOutType12", reply.icmp_out_type12),
	L3C("Icmp6InMsgs", icmp[1].in_msgs),
	L3C("Icmp6InErrors", icmp[1].in_errors),
	L3C("Icmp6InCsumErrors", icmp[1].in_csum_errors),
	L3C("Icmp6InEchos", icmp[1].in_echos),
	L3C("Icmp6OutMsgs", reply.icmp6_out_msgs),
	L3C("Icmp6OutEchoReplies", reply.icmp6_out_echo_replies),
	L3C("Icmp6OutDestUnreachs", reply.icmp6_out_dest_unreachs),
	L3C("Icmp6OutParmProblems", reply.icmp6_out_parm_problems),
	L3C("Icmp6OutRateLimitHost", reply.icmp6_out_ratelimit_host),
	L3C("Icmp6OutType1", reply.icmp6_out_type1),
	L3C("Icmp6OutType4", reply.icmp6_out_type4),
	L3C("Icmp6OutType129", reply.icmp6_out_type129),
	L3C("TcpOutSegs", reply.tcp_out_segs),
	L3C("TcpOutRsts", reply.tcp_out_rsts),
	L3C("IpOutRequests", reply.ip_out_requests[0]),
	L3C("Ip6OutRequests", reply.ip_out_requests[1]),
	L3C("reply_no_room", reply.reply_no_room),
	L3C("tcp_no_socket", tcp_no_socket),
	L3C("TcpExtTCPReqQFullDoCookies", tcp_reqq_full_do_cookies),
	L3C("TcpExtListenOverflows", tcp_listen_overflows),
	L3C("tcp_ehash_hits", tcp_ehash_hits),
	L3C("tcp_ehash_inserted", tcp_ehash_inserted),
	L3C("tcp_ehash_full", tcp_ehash_full),
	L3C("rx_otherhost_dropped", rx_otherhost_dropped),
	L3C("rx_dropped", rx_dropped),
	L3C("in_martian_src", in_martian_src),
	L3C("in_martian_dst", in_martian_dst),
	L3C("ip_csum_verified", ip_csum_verified),
	L3C("ip_csum_hint_skipped", ip_csum_hint_skipped),
	L3C("l4_csum_verified", l4_csum_verified),
	L3C("l4_csum_hint_skipped", l4_csum_hint_skipped),
	L3C("l3_trimmed", l3_trimmed),
	L3C("udp_trimmed", udp_trimmed),
	L3C("route_lookups", route_lookups),
	L3C("route_hint_hits", route_hint_hits),
	L3C("arp_in", arp_in),
	L3C("arp_replies", arp_replies),
	L3C("l3_sublists", l3_sublists),
	L3C("l4_sublists", l4_sublists),
	L3C("reasm_frags_dropped", reasm.frags_dropped),
	L3C("reasm_queues", reasm.queues_now, .role = LRX_COUNTER_GAUGE),
	L3C("reasm_mem", reasm.mem, .role = LRX_COUNTER_GAUGE),
	/* fragments chained into a datagram: they leave inside it */
	L3C("merged", reasm.frags_joined, .role = LRX_COUNTER_MERGED),
	L3C("nf_prerouting_drops", nf_drops[LRX_NF_PRE_ROUTING]),
	L3C("nf_local_in_drops", nf_drops[LRX_NF_LOCAL_IN]),
	{.name = NULL},
};
#undef L3C

static const struct lrx_stage_port_counter l3_demux_port_counters[] = {
	{"rx_dropped", offsetof(struct l3_ctx, dev[0].rx_dropped),
	 sizeof(struct l3_dev_stats)},
	{"rx_otherhost_dropped", offsetof(struct l3_ctx, dev[0].rx_otherhost_dropped),
	 sizeof(struct l3_dev_stats)},
	{NULL, 0, 0},
};

static const struct lrx_stage l3_demux_stage = {
	.name = L3_DEMUX_STAGE_NAME,
	.summary = "ip_rcv/ipv6_rcv/arp_rcv checks and protocol dispatch "
		   "(kernel drop reasons, SNMP counters, sublists)",
	.ctx_size = sizeof(struct l3_ctx),
	.keys = l3_demux_keys,
	.conf_size = sizeof(struct l3_conf),
	.counters = l3_demux_counters,
	.port_counters = l3_demux_port_counters,
	.needs = LRX_PROVIDES_META,
	.init = l3_demux_init,
	.fini = l3_demux_fini,
	.process_one = lrx_l3_demux_process_one,
	.process_burst = l3_demux_process_burst,
	.flush = l3_demux_flush,
	.discard = l3_demux_discard,
	.held = l3_demux_held,
	.start = l3_demux_start,
	.mbuf_hold = l3_demux_mbuf_hold,
	.end_run = l3_demux_end_run,
	.map_at = l3_demux_map_at,
	.map_next = l3_demux_map_next,
};

LRX_STAGE_REGISTER(l3_demux_stage)
