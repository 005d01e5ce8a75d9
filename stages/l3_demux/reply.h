/* SPDX-License-Identifier: BSD-3-Clause */
/* The replies the kernel's receive path sends, and the Out counters it
 * keeps for them: ICMP echo and timestamp replies (icmp_echo,
 * icmp_timestamp, icmpv6_echo_reply), ICMP errors (icmp_send,
 * icmp6_send: port and protocol unreachable, parameter problems) with
 * their rate limits (icmpv4_global_allow / icmp_global_allow, the
 * per-peer icmpv4_xrlim_allow / icmpv6_xrlim_allow through
 * inet_peer_xrlim_allow), TCP resets (tcp_v4_send_reset,
 * tcp_v6_send_reset) and SYN-ACKs (tcp_v4_send_synack). Internal to
 * l3-demux.
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

/* The switch of each kind's key: [stage.l3-demux] icmp_echo,
 * icmp_timestamp, icmp_unreach, icmp_param_prob, tcp_rst, tcp_synack. */
enum l3_reply_switch {
	L3_REPLY_SW_ECHO,
	L3_REPLY_SW_TIMESTAMP,
	L3_REPLY_SW_UNREACH,
	L3_REPLY_SW_PARAMPROB,
	L3_REPLY_SW_RST,
	L3_REPLY_SW_SYNACK,
	L3_REPLY_SWITCHES,
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

#define L3_PEERS 1024        /* inet_peer entries kept, per family */
#define L3_PEER_WAYS 4

/* An inet_peer: a peer's ICMP token bucket (rate_tokens, rate_last). */
struct l3_peer {
	uint8_t addr[16];
	uint8_t used;
	uint64_t tokens;         /* ms */
	uint64_t last;           /* ms */
	uint64_t touched;        /* ms, for the replacement */
};

/* The addresses l3-demux was given, for the source of a reply. */
struct l3_reply_addrs {
	uint8_t n4, n6;
	const uint32_t *local4;  /* network order */
	const uint8_t *plen4;
	const uint8_t (*local6)[16];
	const uint8_t *plen6;
};

struct l3_reply {
	/* configuration */
	bool on[L3_REPLY_SWITCHES];
	bool accept_source_route;   /* read by l3-demux's option check */
	bool clock_polls;
	bool mac_from_port;
	struct rte_ether_addr mac;  /* arp_mac when not from the port */
	uint32_t ratelimit4_ms, ratemask4, msgs_per_sec, msgs_burst;
	uint32_t ratelimit6_ms;
	uint64_t ratemask6[4];      /* bits 0..255 */
	uint64_t tsc_per_ms;
	uint64_t tsc_start;
	struct l3_reply_addrs addrs;

	/* state */
	uint64_t polls;             /* clock=polls: the time in ms */
	bool global_started;
	int64_t global_credit;      /* icmp_global_credit */
	uint64_t global_stamp;      /* ms */
	uint16_t ip_id;             /* the IDs of replies without DF */
	struct l3_peer peers[2][L3_PEERS];

	/* counters, as nstat names them (l3-demux's descriptor) */
	uint64_t ip_out_requests[2];
	uint64_t icmp_out_msgs, icmp_out_echo_reps, icmp_out_dest_unreachs,
		icmp_out_parm_probs;
	uint64_t icmp_out_type0, icmp_out_type3, icmp_out_type12;
	uint64_t icmp_out_ratelimit_global, icmp_out_ratelimit_host;
	uint64_t icmp6_out_msgs, icmp6_out_echo_replies,
		icmp6_out_dest_unreachs, icmp6_out_parm_problems;
	uint64_t icmp6_out_type1, icmp6_out_type4, icmp6_out_type129;
	uint64_t icmp6_out_ratelimit_host;
	uint64_t tcp_out_segs, tcp_out_rsts;
	uint64_t reply_no_room;     /* not answered: no headroom or data */
	uint64_t replies_asked;     /* asks of the list path not yet answered */
};

/* The reply keys as parsed (l3_demux.c's table lists them). */
struct l3_reply_conf {
	unsigned sw[L3_REPLY_SWITCHES]; /* 0: on (reply, send) */
	bool accept_source_route;
	unsigned clock;                 /* tsc, polls */
	uint32_t ratelimit4_ms, ratemask4, msgs_per_sec, msgs_burst;
	uint32_t ratelimit6_ms;
	uint64_t ratemask6[4];          /* icmpv6_ratemask: l3_reply_parse_ratemask6 */
};
int l3_reply_parse_ratemask6(const char *text, void *out);
extern const char l3_reply_ratemask6_valid[];

void l3_reply_init(struct l3_reply *r, const struct l3_reply_conf *conf,
		   const struct l3_reply_addrs *addrs);

/* Answers an ask: the packet's fate without the ask, or TX out of its
 * ingress port as the reply. */
lrx_next_t l3_reply_send(struct l3_reply *r, struct rte_mbuf *m,
			 lrx_next_t asked);

/* arp_process's reply for ip (network order) to an ARP request m:
 * from this host's MAC, on the VLAN device the request came on, 42
 * bytes (60 with a tag's 4: no padding, as the kernel sends it). Not
 * rate limited. fate when there is no room. */
lrx_next_t l3_reply_arp(struct l3_reply *r, struct rte_mbuf *m,
			lrx_next_t fate, uint32_t ip);

/* The end of a poll: one millisecond at clock=polls. */
static inline void l3_reply_tick(struct l3_reply *r)
{
	r->polls++;
}

#endif
