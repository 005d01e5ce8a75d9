/* SPDX-License-Identifier: BSD-3-Clause
 * ICMP and ICMPv6 on receive (icmp_rcv, icmpv6_rcv) and the messages the
 * receive path sends (icmp_echo, icmp_timestamp, icmp_send, icmp6_send,
 * icmpv6_echo_reply) with their rate limits: l3-demux's module icmp
 * (icmp.c).
 */
#ifndef LRX_L3_ICMP_H
#define LRX_L3_ICMP_H

#include "l3_module.h"

struct l3_icmp_mib {
	uint64_t in_msgs, in_errors, in_csum_errors, in_echos;
};

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

/* The switch of each kind of message: keys icmp_echo, icmp_timestamp,
 * icmp_unreach, icmp_param_prob. */
enum l3_icmp_switch {
	L3_ICMP_SW_ECHO,
	L3_ICMP_SW_TIMESTAMP,
	L3_ICMP_SW_UNREACH,
	L3_ICMP_SW_PARAMPROB,
	L3_ICMP_SWITCHES,
};

struct l3_icmp_conf {
	unsigned sw[L3_ICMP_SWITCHES]; /* 0: on (reply, send) */
	unsigned clock;                /* tsc, polls */
	uint32_t ratelimit4_ms, ratemask4, msgs_per_sec, msgs_burst;
	uint32_t ratelimit6_ms;
	uint64_t ratemask6[4];         /* bits 0..255 */
};

/* ICMP_MIB_OUT* / ICMP6_MIB_OUT* of one family; the types' counters
 * (IcmpMsgOutType0, 3, 11, 12; Icmp6OutType129, 1, 3, 4) by what they are */
struct l3_icmp_out {
	uint64_t msgs, echo_reps, dest_unreachs, parm_probs, time_excds, ratelimit_host;
	uint64_t type_echo_rep, type_unreach, type_parm, type_time_exc;
};

struct l3_icmp {
	struct l3_icmp_mib mib[L3_FAMILIES];
	struct l3_icmp_conf conf;
	/* the rate limits' state */
	bool global_started;
	int64_t global_credit;      /* icmp_global_credit */
	uint64_t global_stamp;      /* ms */
	struct l3_peer peers[2][L3_PEERS];
	/* counters, as nstat names them */
	struct l3_icmp_out out[L3_FAMILIES];
	uint64_t icmp_out_ratelimit_global;
};

L3_DECLARE_HANDLER(icmp)

/* The message a handler asked for (reply.c's l3_reply_send): an echo or
 * timestamp reply, or an error about the packet; fate when it is
 * switched off, rate limited or does not fit. */
lrx_next_t l3_icmp_answer(struct l3_ctx *c, struct rte_mbuf *m,
			  struct lrx_meta *meta, lrx_next_t fate,
			  enum l3_reply_kind kind, uint32_t info);

/* The ICMP time exceeded (code 1, reassembly) a queue's expiry sends
 * about its first fragment m, which the queue still holds (meta rebuilt
 * from the queue's record): TX, or fate when it is not sent. */
lrx_next_t l3_icmp_frag_time_exceeded(struct l3_ctx *c, struct rte_mbuf *m,
				      struct lrx_meta *meta, lrx_next_t fate,
				      bool ipv6);

#endif
