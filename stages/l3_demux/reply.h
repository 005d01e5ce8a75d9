/* SPDX-License-Identifier: BSD-3-Clause */
/* The replies the kernel's receive path sends: ICMP echo and timestamp
 * replies and errors (icmp.c, with their rate limits), TCP resets and
 * SYN-ACKs (tcp.c), ARP replies (arp.c). This part is what they share:
 * the ask, the answering in arrival order, and the frame (addresses,
 * Ethernet, IP headers, checksum) built in the asking packet's buffer.
 * Internal to l3-demux.
 *
 * A handler asks for a reply by returning the packet's own fate with a
 * reply kind in it (l3_reply_ask); l3-demux answers the asks in arrival
 * order (l3_reply_send), after the handlers of the packet (per packet) or
 * of the whole burst (list path), so the rate limiters see the same
 * sequence in every engine. An answered packet becomes its reply, built
 * in its own buffer, and leaves by the ingress port (TX); one that is not
 * answered (switched off, rate limited, no room) keeps its fate.
 */
#ifndef LRX_L3_REPLY_H
#define LRX_L3_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include "l3_demux.h"
#include "meta.h"
#include "stage.h"

struct l3_ctx;

/* What a packet asks for. */
enum l3_reply_kind {
	L3_REPLY_NONE = 0,
	L3_REPLY_ECHO4,          /* icmp_echo */
	L3_REPLY_TIMESTAMP4,     /* icmp_timestamp */
	L3_REPLY_PORT_UNREACH4,  /* __udp4_lib_rcv: no socket */
	L3_REPLY_PROTO_UNREACH4, /* ip_protocol_deliver_rcu: no handler */
	L3_REPLY_PARAMPROB4,     /* ip_options_compile; info: the pointer */
	L3_REPLY_ECHO6,          /* icmpv6_echo_reply */
	L3_REPLY_PORT_UNREACH6,  /* __udp6_lib_rcv: no socket */
	L3_REPLY_PARAMPROB6,     /* icmpv6_param_prob; info: code, pointer */
	L3_REPLY_RST,            /* tcp_v4_send_reset / tcp_v6_send_reset */
	L3_REPLY_SYNACK,         /* tcp_conn_request: send_synack */
	L3_REPLY_KINDS,
};

/* The ask rides in the fate's argument above the drop reason: 5 bits of
 * kind, 15 of information (an ICMP pointer, and for IPv6 the code in the
 * top 2). The drop reasons stay below 256. */
#define L3_REPLY_KIND_SHIFT 8
#define L3_REPLY_INFO_SHIFT 13
#define L3_REPLY_MASK ((lrx_next_t)0x1f << (L3_REPLY_KIND_SHIFT + LRX_NEXT_KIND_BITS))
static_assert(LRX_DROP_MAX <= 1u << L3_REPLY_KIND_SHIFT,
	      "drop reasons fit below the reply kind");
static_assert(L3_REPLY_KINDS <= 32, "reply kinds fit in 5 bits");

static inline lrx_next_t l3_reply_ask(lrx_next_t fate, enum l3_reply_kind kind,
				      uint32_t info)
{
	return fate | (((uint32_t)kind << L3_REPLY_KIND_SHIFT |
			(info & 0x7fff) << L3_REPLY_INFO_SHIFT)
		       << LRX_NEXT_KIND_BITS);
}

static inline bool l3_reply_asked(lrx_next_t next)
{
	return (next & L3_REPLY_MASK) != 0;
}

/* An IPv6 parameter problem's information: code and pointer. */
static inline uint32_t l3_reply_paramprob6(uint8_t code, uint32_t pointer)
{
	return (uint32_t)code << 13 | (pointer & 0x1fff);
}

struct lrx_ct;

struct l3_reply {
	/* configuration: the modules' keys set it (arp_mac, icmp_clock) */
	bool clock_polls;
	bool mac_from_port;
	struct rte_ether_addr mac;  /* arp_mac when not from the port */
	uint64_t tsc_per_ms;
	uint64_t tsc_start;

	struct lrx_ct *ct;          /* conntrack's table (LOCAL_OUT) when IPv4 is
				     * tracked, or NULL */
	struct lrx_ct *ct6;         /* the same table when IPv6 is tracked */

	/* state */
	uint64_t polls;             /* clock=polls: the time in ms */
	uint16_t ip_id;             /* the IDs of replies without DF */
	uint64_t replies_asked;     /* asks of the list path not yet answered */

	/* counters, as nstat names them (l3-demux's descriptor) */
	uint64_t ip_out_requests[2];
	uint64_t ip_out_no_routes[2]; /* IPSTATS_MIB_OUTNOROUTES: a reply
				       * without an output route */
	uint64_t reply_no_room;     /* not answered: no headroom or data */
};

void l3_reply_init(struct l3_reply *r);

/* Answers an ask: the packet's fate without the ask, or TX out of its
 * ingress port as the reply (icmp.c, tcp.c build it). */
lrx_next_t l3_reply_send(struct l3_ctx *c, struct rte_mbuf *m,
			 lrx_next_t asked);

/* The end of a poll: one millisecond at clock=polls. */
static inline void l3_reply_tick(struct l3_reply *r)
{
	r->polls++;
}

/* ---- what the replies of icmp.c, tcp.c and arp.c are built with (reply.c
 * says what each does) ----------------------------------------------------- */
uint64_t l3_reply_now(const struct l3_reply *r);
uint32_t l3_reply_hash_addr(const void *p, unsigned len, uint32_t init);
struct l3_reply_l2 {
	struct rte_ether_addr dst, src;
	uint16_t vid;
};
void l3_reply_l2_of(const struct l3_reply *r, const struct rte_mbuf *m,
		    const struct lrx_meta *meta, struct l3_reply_l2 *l2);
uint32_t l3_reply_l2_len(const struct l3_reply_l2 *l2);
uint8_t *l3_reply_l2_write(uint8_t *p, const struct l3_reply_l2 *l2, uint16_t ethertype);
uint8_t *l3_reply_reshape(struct rte_mbuf *m, uint32_t keep_off, uint32_t keep_len,
			  uint32_t hdr_len);
uint8_t *l3_reply_ip_frame(const struct l3_reply *r, struct rte_mbuf *m,
			   const struct lrx_meta *meta, int fam, uint32_t keep_off,
			   uint32_t keep_len, uint32_t hdr_len, uint32_t *l4_off);
void l3_reply_ip4_write(uint8_t *p, uint8_t tos, uint16_t total, uint16_t id, bool df,
			uint8_t proto, uint32_t src, uint32_t dst);
uint8_t l3_reply_ip6_tclass(const uint8_t *ip6);
void l3_reply_ip6_write(uint8_t *p, uint8_t tclass, uint16_t plen, uint8_t proto,
			const uint8_t *src, const uint8_t *dst);
uint16_t l3_reply_csum(const struct rte_mbuf *m, uint32_t l4_off, uint32_t len,
		       uint8_t proto, const uint8_t *ip4, const uint8_t *ip6);
lrx_next_t l3_reply_out(struct l3_reply *r, struct rte_mbuf *m, int fam);
lrx_next_t l3_reply_no_room(struct l3_reply *r, lrx_next_t fate);

#endif
