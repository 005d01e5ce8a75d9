/* SPDX-License-Identifier: BSD-3-Clause
 * UDP on receive (__udp4_lib_rcv, __udp6_lib_rcv) up to the socket:
 * l3-demux's module udp (udp.c). The core is inline: the dispatcher's
 * loop calls it directly for every datagram (INDIRECT_CALL_INET's
 * udp_rcv); the rest (multicast, the sockets of lib/sockets) is in udp.c.
 */
#ifndef LRX_L3_UDP_H
#define LRX_L3_UDP_H

#include <rte_udp.h>

#include "l3_module.h"
#include "sockets/udp_socket.h"

/* UDP_MIB_* of one family */
struct l3_udp_mib {
	uint64_t in_datagrams, no_ports, in_errors, in_csum_errors;
	uint64_t ignored_multi;
};

struct l3_udp {
	struct l3_udp_mib mib[L3_FAMILIES];
	uint64_t rcvbuf_errors[L3_FAMILIES]; /* UDP_MIB_RCVBUFERRORS */
	uint64_t trimmed;        /* pskb_trim_rcsum to the UDP length */
	bool any;                /* udp_ports = any */
	uint64_t ports[1024];    /* bitmap of bound ports */
	/* the sockets (key udp_sockets): NULL, none, is ports deciding and
	 * every datagram with a port delivered */
	struct lrx_udp_socks *socks;
};

struct l3_udp_conf {
	struct lrx_port_set ports;
	struct lrx_udp_sock_list sockets; /* none: udp_ports decides */
	uint32_t rcvbuf, truesize, read_batch;
	unsigned reader;
};

/* udp.c: the datagram to a socket's queue (CONTINUE: no socket), and
 * the broadcast/multicast branch without and with sockets (CONTINUE: to
 * the socket) */
lrx_next_t l3_udp_sock_enqueue(struct l3_ctx *c, struct rte_mbuf *m,
			       const struct lrx_meta *meta, uint16_t dport, int fam);
lrx_next_t l3_udp_multi(struct l3_ctx *c, struct rte_mbuf *m,
			struct lrx_meta *meta, const struct rte_udp_hdr *uh,
			uint32_t l4_len, int fam);
lrx_next_t l3_udp_multi_sock(struct l3_ctx *c, struct rte_mbuf *m,
			     struct lrx_meta *meta, const struct rte_udp_hdr *uh,
			     uint32_t l4_len, int fam);

/* socks: the handler of udp_sockets (l3_udp_sock_handler); a constant,
 * so that the handler without sockets compiles as if they did not
 * exist. */
static __rte_always_inline lrx_next_t
l3_udp_core_(struct l3_ctx *c, struct l3_udp *u, struct rte_mbuf *m,
	     struct lrx_meta *meta, const int fam, const bool socks)
{
	struct l3_udp_mib *mib = &u->mib[fam];
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
		u->trimmed++;
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
	if (socks || !l3_port_bound(u->ports, u->any,
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

/* the handlers without and with udp_sockets */
L3_DECLARE_HANDLER(udp)
L3_DECLARE_HANDLER(udp_sock)

#endif
