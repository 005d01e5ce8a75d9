/* SPDX-License-Identifier: BSD-3-Clause
 * netfilter's receive hooks where ip_rcv and ip_local_deliver (IPv4,
 * iptables) and ipv6_rcv and ip6_input (IPv6, ip6tables) call them
 * (NF_HOOK: nf_hook_slow), with the rules of lib/netfilter: l3-demux's
 * module nf_hook (nf_hook.c).
 */
#ifndef LRX_L3_NF_HOOK_H
#define LRX_L3_NF_HOOK_H

#include <limits.h>

#include "l3_module.h"
#include "netfilter/conntrack.h"
#include "netfilter/netfilter.h"

struct l3_nf_hook {
	/* NULL, no rules, is the kernel's nf_hooks_needed off (NF_HOOK
	 * calls okfn directly) */
	struct lrx_nf *rules;
	struct lrx_nf_counter *ctr;    /* this instance's rule counters */
	uint64_t drops[LRX_NF_HOOKS];
	/* the IPv6 rules (ip6tables), the same way */
	struct lrx_nf *rules6;
	struct lrx_nf_counter *ctr6;
	uint64_t drops6[LRX_NF_HOOKS];
	/* connection tracking (conntrack.h), this lcore's table: ct is
	 * &ct_table when on, else NULL; ct4 and ct6 the same when that
	 * family's hooks track (ipv4_conntrack_ops / ipv6_conntrack_ops
	 * registered: nf_ct_netns_get for the family), else NULL */
	struct lrx_ct *ct, *ct4, *ct6;
	uint8_t ctstate;               /* the packet's, PREROUTING to LOCAL_IN */
	struct lrx_ct ct_table;
};

struct l3_nf_hook_conf {
	char file[PATH_MAX];           /* key netfilter; empty: no hooks */
	char file6[PATH_MAX];          /* key netfilter6; empty: no hooks */
	uint8_t conntrack;             /* key conntrack: auto, on */
	uint32_t conntrack_max;        /* key nf_conntrack_max */
	uint8_t tcp_be_liberal;        /* key nf_conntrack_tcp_be_liberal */
	uint8_t tcp_loose;             /* key nf_conntrack_tcp_loose */
};

/* One hook on one IPv4 packet: CONTINUE, or the drop. */
lrx_next_t l3_ipv4_nf_hook(struct l3_ctx *c, const struct rte_mbuf *m,
			   const struct lrx_meta *meta, unsigned hook);

/* One hook on one IPv6 packet (ip6tables): CONTINUE, or the drop. */
lrx_next_t l3_ipv6_nf_hook(struct l3_ctx *c, const struct rte_mbuf *m,
			   const struct lrx_meta *meta, unsigned hook);
/* PREROUTING for one IPv6 packet: nf_defrag_ipv6 when conntrack tracks
 * IPv6, then the hook. CONTINUE (m possibly the reassembled datagram,
 * meta describing it), CONSUMED (a fragment held), or the drop. */
lrx_next_t l3_ipv6_nf_prerouting(struct l3_ctx *c, struct rte_mbuf *m,
				 struct lrx_meta *meta);
/* A frame the host sends (a reply; IPv4 or IPv6 at noff) through
 * conntrack as ipv4_conntrack_local (ipv6_conntrack_local) and the
 * POSTROUTING confirm. */
void l3_nf_ct_local_out(struct lrx_ct *ct, const struct rte_mbuf *m, uint32_t noff,
			uint64_t now);

/* The rule counters of the chains, one map per chain (the stage's maps,
 * stage.h) */
bool l3_nf_hook_map_at(const void *ctx, unsigned i, struct lrx_stage_map *out);
bool l3_nf_hook_map_next(const void *ctx, unsigned i, uint32_t *cursor, void *key,
			 void *value);

#endif
