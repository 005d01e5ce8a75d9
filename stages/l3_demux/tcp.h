/* SPDX-License-Identifier: BSD-3-Clause
 * TCP on receive (tcp_v4_rcv, tcp_v6_rcv) up to the socket lookup, with
 * the established table of lib/sockets, and the segments the receive
 * path answers with (RST, SYN-ACK): l3-demux's module tcp (tcp.c).
 */
#ifndef LRX_L3_TCP_H
#define LRX_L3_TCP_H

#include "l3_module.h"
#include "sockets/tcp_ehash.h"
#include "sockets/tcp_rcv.h"

struct l3_tcp_mib {
	uint64_t in_segs, in_errs, in_csum_errors;
};

struct l3_tcp {
	struct l3_tcp_mib mib;   /* one TCP MIB for both families, as the kernel */
	uint64_t no_socket;
	bool any;                /* tcp_ports = any */
	unsigned rst, synack;    /* tcp_rst, tcp_synack: 0 send */
	uint64_t ports[1024];    /* bitmap of bound ports */
	/* the established sockets (key tcp_ehash): one table per family;
	 * without the key none (no buckets) and the handler without the
	 * lookup */
	struct lrx_tcp_ehash ehash[L3_FAMILIES];
	uint64_t ehash_hits, ehash_inserted, ehash_full;
	uint64_t reqq_full_do_cookies; /* LINUX_MIB_TCPREQQFULLDOCOOKIES */
	uint64_t listen_overflows;     /* LINUX_MIB_LISTENOVERFLOWS */
	uint64_t listen_drops;         /* LINUX_MIB_LISTENDROPS (tcp_listendrop) */
	uint64_t out_segs, out_rsts;   /* TCP_MIB_OUTSEGS, OUTRSTS */
	/* the receive queues of the first tcp_rcv_socks connections of each
	 * family and the application that reads them (lib/sockets/tcp_rcv.h) */
	struct lrx_tcp_rcv rcv;
};

struct l3_tcp_conf {
	struct lrx_port_set ports;
	uint32_t ehash;          /* buckets of each family's table; 0: none */
	unsigned rst, synack;    /* 0: send */
	/* the receive side: tcp_rcv_socks and the tcp_* keys after it */
	uint32_t rcv_socks, rcvbuf, truesize, read_size, dontneed_batch, zc_slots;
	uint32_t reader_lcore;   /* LRX_TCP_READER_SAME or an lcore id */
	unsigned read_mode, reader;
	bool window_wait, digest;
};

/* the handlers without and with tcp_ehash */
L3_DECLARE_HANDLER(tcp)
L3_DECLARE_HANDLER(tcp_est)

/* The reply a handler asked for (reply.c's l3_reply_send): a RST or a
 * SYN-ACK, or fate when it is switched off or does not fit. */
lrx_next_t l3_tcp_answer(struct l3_ctx *c, struct rte_mbuf *m,
			 struct lrx_meta *meta, lrx_next_t fate,
			 enum l3_reply_kind kind);

#endif
