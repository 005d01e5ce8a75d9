/* SPDX-License-Identifier: BSD-3-Clause
 * What conntrack.c (nf_conntrack_core.c) and its protocol trackers
 * (conntrack_tcp.c: nf_conntrack_proto_tcp.c) share: a tracker's verdict
 * on a packet, the timeouts' units, big-endian reads. Internal to
 * lib/netfilter.
 */
#ifndef LISTRX_CONNTRACK_PROTO_H
#define LISTRX_CONNTRACK_PROTO_H

#include <stdint.h>

#include "conntrack.h"

#define LRX_CT_S 1000ull /* ms */
#define LRX_CT_MIN (60 * LRX_CT_S)

/* what a tracker's packet() returns, as nf_conntrack_handle_packet's
 * NF_ACCEPT, -NF_ACCEPT, -NF_REPEAT and nf_ct_kill_acct */
enum lrx_ct_verdict { LRX_CT_ACCEPT, LRX_CT_INVALID, LRX_CT_REPEAT, LRX_CT_KILL };

static inline uint16_t lrx_ct_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t lrx_ct_rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline void lrx_ct_refresh(struct lrx_ct_entry *e, uint64_t now, uint64_t timeout)
{
	e->expires = now + timeout;
}

/* nf_conntrack_tcp_packet: the TCP tracker on entry i (is_new: not yet
 * confirmed, tcp_new runs first) */
enum lrx_ct_verdict lrx_ct_tcp_packet(const struct lrx_ct *ct, struct lrx_ct_entry *e,
				      const struct lrx_nf_pkt *p, unsigned dir,
				      bool is_new, uint64_t now);

#endif
