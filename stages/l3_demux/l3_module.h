/* SPDX-License-Identifier: BSD-3-Clause
 * What l3-demux's modules share (docs/architecture.md, "Adding a
 * protocol"). The stage (l3_demux.c) is ip_rcv / ipv6_rcv and the
 * dispatch after them (ip_protocol_deliver_rcu through inet_protos); each
 * protocol, and each part of IP input with keys of its own, is a module
 * in its own file, as net/ipv4/{udp,tcp_ipv4,icmp,arp,route,ip_fragment}.c
 * beside ip_input.c: its receive function, its state and counters, its
 * keys and its descriptor (struct l3_module), listed in l3_modules.h.
 *
 * A module's code sees the shared context (struct l3_ctx: what the
 * dispatcher and IP input keep, and the services several modules use:
 * multicast groups, replies, checksums) and its own state; l3_modules.h
 * composes them into the stage's context (struct l3_demux).
 */
#ifndef LRX_L3_MODULE_H
#define LRX_L3_MODULE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "l3_demux.h"
#include "mcast.h"
#include "meta.h"
#include "reply.h"
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
/* The protocol's ICMP error handler (inet_protos[].err_handler): is
 * there a socket for the datagram this host sent, quoted in an ICMP
 * error at ip (IPv4 or IPv6 header, inside the frame) with its transport
 * header's first 8 bytes at l4? false: none, and the caller counts
 * InErrors, as __udp4_lib_err, __udp6_lib_err, tcp_v4_err and
 * tcp_v6_err do. NULL: the handler counts nothing (ping_err, or no
 * err_handler). */
typedef bool (*l3_err_fn)(struct l3_ctx *c, const uint8_t *ip,
			  const uint8_t *l4, int fam);
struct l3_handler {
	const char *name;
	l3_rcv_fn rcv;
	l3_list_rcv_fn list_rcv;
	l3_err_fn err;
};

/* ethertype classes: index of the first-level table */
enum l3_class { L3_CLASS_OTHER, L3_CLASS_IPV4, L3_CLASS_IPV6, L3_CLASS_ARP,
		L3_CLASS_MAX };

/* The shared context: the dispatcher's tables and configuration, IP
 * input's counters, and the services of several modules. */
struct l3_ctx {
	/* configuration, read for every packet */
	bool direct;             /* dispatch=direct (INDIRECT_CALL_2) */
	uint16_t prefetch;       /* packets ahead in the list loops */
	bool trust_ip_csum_hint;
	enum l3_split split;     /* list_split, auto resolved */
	bool reply_later;        /* in the list path: replies after it */
	/* the handlers: by ethertype class (the kernel's packet_type list)
	 * and by IP protocol (inet_protos / inet6_protos), each set by the
	 * module that receives it (l3_module's init) */
	const struct l3_handler *l3_table[L3_CLASS_MAX];
	const struct l3_handler *l4_table[L3_FAMILIES][256];

	/* SNMP counters, as nstat names them (descriptor `counters`) */
	struct l3_ip_mib ip[L3_FAMILIES];
	/* listrx counters */
	uint64_t rx_otherhost_dropped; /* dev_core_stats_rx_otherhost_dropped */
	uint64_t rx_dropped;           /* no packet_type for the ethertype:
					* dev_core_stats_rx_dropped */
	uint64_t ip_csum_verified;
	uint64_t ip_csum_hint_skipped;
	uint64_t l4_csum_verified;
	uint64_t l4_csum_hint_skipped;
	uint64_t l3_trimmed;           /* pskb_trim_rcsum removed padding */
	uint64_t route_lookups;        /* both families' */
	uint64_t l3_sublists;          /* handler calls of the list path */
	uint64_t l4_sublists;

	/* the same two per ingress port, as each net_device counts them */
	struct l3_dev_stats {
		uint64_t rx_dropped, rx_otherhost_dropped;
	} dev[RTE_MAX_ETHPORTS];

	struct l3_mcast mc;            /* joined groups, broadcasts */
	struct l3_reply reply;         /* replies: the ask, the frame (reply.c) */
};

struct l3_demux;       /* the stage's context: l3_modules.h */
struct l3_demux_conf;  /* the stage's config: l3_modules.h */

/* A module: its keys (rows over struct l3_demux_conf) and counters
 * (offsets in struct l3_demux), which the stage's tables list after its
 * own; what it does at init (set its handlers in the tables, read its
 * config: 0 or -errno with a message in init->err) and fini; and the
 * stage's hooks it takes part in (stage.h, each optional, ctx the stage's
 * context): a hook only one module has is the stage's own. */
struct l3_module {
	const char *name;
	const struct lrx_value_key *keys;
	const struct lrx_stage_counter *counters;
	int (*init)(struct l3_demux *d, const struct l3_demux_conf *conf,
		    const struct lrx_stage_init *init);
	void (*fini)(struct l3_demux *d);
	void (*flush)(void *ctx, bool budget_used);
	void (*end_run)(void *ctx);
	uint16_t (*drop)(void *ctx, struct rte_mbuf **pkts,
			 enum lrx_drop_reason *reasons, uint16_t max);
	uint16_t (*send)(void *ctx, struct rte_mbuf **pkts, uint16_t max);
	uint16_t (*consume)(void *ctx, struct rte_mbuf **pkts, uint16_t max);
	uint32_t (*held)(const void *ctx);
	uint32_t (*mbuf_hold)(const void *conf, uint32_t mbuf_size); /* summed */
	/* hooks one module at most has */
	int (*start)(void *ctx, const struct lrx_stage_start *start);
};

/* A module's descriptor l3_<m>_module: its tables l3_<m>_keys and
 * l3_<m>_counters, its l3_<m>_init, and the other hooks it has. */
#define L3_MODULE(m, ...)                                                     \
	const struct l3_module l3_##m##_module = {                            \
		.name = #m, .keys = l3_##m##_keys,                            \
		.counters = l3_##m##_counters, .init = l3_##m##_init,         \
		__VA_ARGS__}

/* 0, 1, 2, ...: the index list of a whole burst (filled once, read only) */
extern uint16_t l3_identity[LRX_BURST_MAX];

/* ---- helpers of every module --------------------------------------------- */

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
static inline lrx_next_t l3_ask(struct l3_ctx *c, struct rte_mbuf *m,
				lrx_next_t fate, enum l3_reply_kind kind,
				uint32_t info)
{
	const lrx_next_t asked = l3_reply_ask(fate, kind, info);
	if (!c->reply_later)
		return l3_reply_send(c, m, asked);
	c->reply.replies_asked++;
	return asked;
}

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

/* A protocol's handler: two thin entries around its core (one packet, one
 * sublist), l3_<proto>_rcv and l3_<proto>_list_rcv, and the handler
 * l3_<proto>_handler the module's init puts in the tables. */
#define L3_DEFINE_HANDLER(proto, core) L3_DEFINE_HANDLER_ERR(proto, core, NULL)
/* ... with an ICMP error handler */
#define L3_DEFINE_HANDLER_ERR(proto, core, err_fn)                            \
	lrx_next_t l3_##proto##_rcv(struct l3_ctx *c, struct rte_mbuf *m,     \
				    struct lrx_meta *meta)                    \
	{                                                                     \
		return core(c, m, meta,                                       \
			    meta->protocol == RTE_ETHER_TYPE_IPV6);           \
	}                                                                     \
	void l3_##proto##_list_rcv(struct l3_ctx *c, struct rte_mbuf **pkts,  \
				   struct lrx_meta *const *metas,             \
				   const uint16_t *idx, uint16_t n,           \
				   lrx_next_t *nexts)                         \
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
	const struct l3_handler l3_##proto##_handler = {                      \
		.name = #proto,                                               \
		.rcv = l3_##proto##_rcv,                                      \
		.list_rcv = l3_##proto##_list_rcv,                            \
		.err = err_fn,                                                \
	};
#define L3_DECLARE_HANDLER(proto)                                             \
	lrx_next_t l3_##proto##_rcv(struct l3_ctx *c, struct rte_mbuf *m,     \
				    struct lrx_meta *meta);                   \
	void l3_##proto##_list_rcv(struct l3_ctx *c, struct rte_mbuf **pkts,  \
				   struct lrx_meta *const *metas,             \
				   const uint16_t *idx, uint16_t n,           \
				   lrx_next_t *nexts);                        \
	extern const struct l3_handler l3_##proto##_handler;

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

/* A key and a counter of a module's tables (the stage lists them). */
#define L3_KEY(kind, field, ...) LRX_KEY_##kind(struct l3_demux_conf, field, __VA_ARGS__)
#define L3_COUNTER(n, field, ...)                                             \
	{.name = n, .offset = offsetof(struct l3_demux, field), __VA_ARGS__}

/* the IPSTATS_MIB_* both families count under the same names (l3_demux.c's
 * Ip*, ipv6.c's Ip6*), with prefix P */
#define L3_IP_COUNTERS(P, fam)                                                \
	L3_COUNTER(P "InReceives", core.ip[fam].in_receives),                 \
	L3_COUNTER(P "InHdrErrors", core.ip[fam].in_hdr_errors),              \
	L3_COUNTER(P "InAddrErrors", core.ip[fam].in_addr_errors),            \
	L3_COUNTER(P "InUnknownProtos", core.ip[fam].in_unknown_protos),      \
	L3_COUNTER(P "InDiscards", core.ip[fam].in_discards),                 \
	L3_COUNTER(P "InDelivers", core.ip[fam].in_delivers)

#endif
