/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux's module tcp: TCP on receive up to the socket lookup
 * (net/ipv4/tcp_ipv4.c, net/ipv6/tcp_ipv6.c), the established table of
 * lib/sockets (key tcp_ehash), an established socket's data to its
 * receive queue and the application (key tcp_rcv_socks, lib/sockets'
 * tcp_rcv), and the replies of the receive path (tcp_v4_send_reset,
 * tcp_v4_send_synack; net/ipv4/tcp_output.c). Keys tcp_ports, tcp_ehash,
 * tcp_rst, tcp_synack, tcp_rcv_socks and its settings; counters Tcp*,
 * TcpExt* and tcp_* as nstat names them.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "l3_modules.h"

#define L3_TCP_FIN 0x01
#define L3_TCP_SYN 0x02
#define L3_TCP_RST 0x04
#define L3_TCP_ACK 0x10
#define L3_TCP_ECE 0x40
#define L3_TCP_CWR 0x80

/* ---- tcp_v4_rcv / tcp_v6_rcv (up to the socket lookup) ------------------- */

/* The segment's tuple as __inet_lookup_skb passes it: its destination is
 * the local end. */
struct l3_tcp_tuple {
	const uint8_t *laddr, *raddr;
	uint16_t lport, rport;  /* network order */
	uint32_t hash;
};

static __rte_always_inline void l3_tcp_tuple(const struct l3_tcp *t,
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
	tu->hash = lrx_tcp_ehashfn(&t->ehash[fam], fam == L3_FAMILY_V6, tu->laddr,
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

/* Is there an output route back to addr, the segment's source
 * (ipv4_routes / ipv6_routes)? */
static bool l3_tcp_route_back(struct l3_ctx *c, int fam, const uint8_t *addr)
{
	if (fam == L3_FAMILY_V6)
		return l3_ipv6_out_route(c, addr) >= 0;
	uint32_t a;
	memcpy(&a, addr, 4);
	return l3_ipv4_out_route(l3_route_of(c), a);
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
	struct l3_tcp *t = l3_tcp_of(c);
	if (l3_route_is_multi(c, m, meta, fam))
		return LRX_NEXT_CONTINUE_V;
	if (syn && unlikely(!l3_tcp_route_back(c, fam, tu->raddr))) {
		/* tcp_conn_request: the SYN queue's check, then route_req
		 * finds no route and no request socket is made (the
		 * SYN-ACK's ask counts the rest) */
		t->reqq_full_do_cookies += t->ehash[fam].n == t->ehash[fam].max;
		return LRX_NEXT_CONTINUE_V;
	}
	if (lrx_tcp_ehash_insert(&t->ehash[fam], fam == L3_FAMILY_V6, tu->hash,
				 tu->laddr, tu->raddr, tu->lport,
				 tu->rport) == 0) {
		t->ehash_inserted++;
		return LRX_NEXT_CONTINUE_V;
	}
	t->ehash_full++;
	if (syn) {
		t->reqq_full_do_cookies++;
		return LRX_NEXT_CONTINUE_V;
	}
	t->listen_overflows++;
	t->listen_drops++; /* tcp_listendrop */
	return lrx_next_drop(LRX_DROP_NO_SOCKET);
}

/* tcp_rcv_established / tcp_data_queue for connection conn of the table
 * (lib/sockets/tcp_rcv.h): the payload to the socket's receive or
 * out-of-order queue (CONSUMED: the application reads it at the end of
 * the poll), or dropped with the reason; a segment without payload, and
 * one of a connection without a receive queue, is delivered as before.
 * A socket's first segment opens it: rcv_nxt is a SYN's seq + 1, else
 * the segment's seq (a connection older than the run). Out of line: only
 * with tcp_rcv_socks. */
static const enum lrx_drop_reason l3_tcp_drops[LRX_TCP_DROP_MAX] = {
	[LRX_TCP_DROP_OLD_DATA] = LRX_DROP_TCP_OLD_DATA,
	[LRX_TCP_DROP_INVALID_SEQUENCE] = LRX_DROP_TCP_INVALID_SEQUENCE,
	[LRX_TCP_DROP_ZEROWINDOW] = LRX_DROP_TCP_ZEROWINDOW,
	[LRX_TCP_DROP_OVERWINDOW] = LRX_DROP_TCP_OVERWINDOW,
	[LRX_TCP_DROP_OFOMERGE] = LRX_DROP_TCP_OFOMERGE,
	[LRX_TCP_DROP_OFO_DROP] = LRX_DROP_TCP_OFO_DROP,
	[LRX_TCP_DROP_PROTO_MEM] = LRX_DROP_PROTO_MEM,
};

static __rte_noinline lrx_next_t l3_tcp_data(struct l3_ctx *c, struct rte_mbuf *m,
					     const struct lrx_meta *meta,
					     const struct rte_tcp_hdr *th, int fam, int32_t conn)
{
	struct l3_tcp *t = l3_tcp_of(c);
	struct lrx_tcp_rcv_sock *sk = lrx_tcp_rcv_sock(&t->rcv, (unsigned)fam, (uint32_t)conn);
	if (sk == NULL) {
		t->rcv.mib.untracked++;
		return LRX_NEXT_DELIVER_V;
	}
	const uint32_t seq = rte_be_to_cpu_32(th->sent_seq);
	const bool syn = th->tcp_flags & L3_TCP_SYN;
	if (!sk->open)
		lrx_tcp_rcv_open(&t->rcv, sk, seq + syn);
	/* the state machine of a SYN or RST is not modelled */
	if (syn || (th->tcp_flags & L3_TCP_RST))
		return LRX_NEXT_DELIVER_V;
	const uint32_t doff = (uint32_t)(th->data_off >> 4) * 4;
	enum lrx_tcp_drop reason = LRX_TCP_DROP_OLD_DATA;
	switch (lrx_tcp_rcv_data(&t->rcv, sk, m, seq, meta->transport_offset + doff,
				 l3_l4_len(meta) - doff, &reason)) {
	case LRX_TCP_RCV_QUEUED:
		return LRX_NEXT_CONSUMED_V;
	case LRX_TCP_RCV_DROP:
		return lrx_next_drop(l3_tcp_drops[reason]);
	default:
		return LRX_NEXT_DELIVER_V;
	}
}

/* est: the handler of tcp_ehash (l3_tcp_est_handler); a constant, so that
 * the handler without the table compiles as if it did not exist. */
static __rte_always_inline lrx_next_t l3_tcp_core_(struct l3_ctx *c, struct rte_mbuf *m,
				      struct lrx_meta *meta, const int fam,
				      const bool est)
{
	struct l3_tcp *t = l3_tcp_of(c);
	struct l3_tcp_mib *mib = &t->mib;
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
		l3_tcp_tuple(t, m, meta, th, fam, &tu);
		const int32_t conn = lrx_tcp_ehash_find(&t->ehash[fam], fam == L3_FAMILY_V6,
							tu.hash, tu.laddr, tu.raddr,
							tu.lport, tu.rport);
		if (conn >= 0) {
			t->ehash_hits++;
			if (unlikely(l3_tcp_syn_alone(th)))
				return l3_ask(c, m, LRX_NEXT_DELIVER_V, L3_REPLY_SYNACK, 0);
			return t->rcv.n_socks ? l3_tcp_data(c, m, meta, th, fam, conn)
					      : LRX_NEXT_DELIVER_V;
		}
	}
	if (!l3_port_bound(t->ports, t->any,
			   rte_be_to_cpu_16(th->dst_port))) {
		/* no_tcp_socket: tcp_v4_send_reset, whose route must be
		 * RTN_LOCAL (tcp_v6_send_reset: a unicast destination) */
		t->no_socket++;
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
		/* the socket it opened (none: a multicast route, a full
		 * table): a SYN sets its rcv_nxt, another segment's data is
		 * its first (cookie_v4_check's child queues it) */
		if (t->rcv.n_socks) {
			const int32_t conn = lrx_tcp_ehash_find(
				&t->ehash[fam], fam == L3_FAMILY_V6, tu.hash, tu.laddr,
				tu.raddr, tu.lport, tu.rport);
			if (conn >= 0 && !l3_tcp_syn_alone(th))
				return l3_tcp_data(c, m, meta, th, fam, conn);
			if (conn >= 0)
				(void)l3_tcp_data(c, m, meta, th, fam, conn);
		}
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

/* tcp_v4_err / tcp_v6_err: __inet_lookup_established of the quoted
 * segment, which this host sent (its source is the local end); none
 * counts InErrors. A listener is not looked up: without tcp_ehash the
 * socket of a port in tcp_ports holds an established connection for
 * every peer (as on receive). What the kernel does with a socket found
 * (OutOfWindowIcmps, the socket's error) is not modelled. */
static bool l3_tcp_err(struct l3_ctx *c, const uint8_t *ip, const uint8_t *l4,
		       int fam)
{
	const struct l3_tcp *t = l3_tcp_of(c);
	uint16_t sport;
	(void)ip;
	(void)fam;
	memcpy(&sport, l4, 2);
	return l3_port_bound(t->ports, t->any, rte_be_to_cpu_16(sport));
}
static bool l3_tcp_est_err(struct l3_ctx *c, const uint8_t *ip, const uint8_t *l4,
			   int fam)
{
	const struct l3_tcp *t = l3_tcp_of(c);
	const bool v6 = fam == L3_FAMILY_V6;
	const uint8_t *laddr = ip + (v6 ? 8 : 12), *raddr = ip + (v6 ? 24 : 16);
	uint16_t lport, rport;
	memcpy(&lport, l4, 2);
	memcpy(&rport, l4 + 2, 2);
	const uint32_t hash = lrx_tcp_ehashfn(&t->ehash[fam], v6, laddr, raddr,
					      lport, rport);
	return lrx_tcp_ehash_lookup(&t->ehash[fam], v6, hash, laddr, raddr,
				    lport, rport);
}

L3_DEFINE_HANDLER_ERR(tcp, l3_tcp_core, l3_tcp_err)
L3_DEFINE_HANDLER_ERR(tcp_est, l3_tcp_est_core, l3_tcp_est_err)

/* ---- the replies ---------------------------------------------------------- */

/* What a TCP reply needs of the segment, read before its buffer is
 * rewritten. */
struct l3_tcp_seg {
	uint8_t src[16], dst[16];  /* IPv4: the first 4 bytes */
	uint16_t sport, dport;     /* network order */
	uint32_t seq, ack_seq, seg_len;
	uint8_t flags, tos;
	/* SYN options */
	bool opt_ts, opt_sack, opt_ws;
	uint32_t tsval;
};

static void l3_tcp_seg_read(const struct rte_mbuf *m,
			    const struct lrx_meta *meta, int fam,
			    struct l3_tcp_seg *s)
{
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *l3 = frame + meta->network_offset;
	const struct rte_tcp_hdr *th =
		(const void *)(frame + meta->transport_offset);
	memset(s, 0, sizeof(*s));
	if (fam) {
		memcpy(s->src, l3 + 8, 16);
		memcpy(s->dst, l3 + 24, 16);
		s->tos = l3_reply_ip6_tclass(l3);
	} else {
		memcpy(s->src, l3 + 12, 4);
		memcpy(s->dst, l3 + 16, 4);
		s->tos = l3[1];
	}
	const uint32_t doff = (uint32_t)(th->data_off >> 4) * 4;
	s->sport = th->src_port;
	s->dport = th->dst_port;
	s->seq = rte_be_to_cpu_32(th->sent_seq);
	s->ack_seq = rte_be_to_cpu_32(th->recv_ack);
	s->flags = th->tcp_flags;
	s->seg_len = meta->len - (meta->transport_offset - meta->network_offset) -
		     doff;
	/* tcp_parse_options, for the SYN's */
	const uint8_t *o = (const uint8_t *)th + 20, *end = (const uint8_t *)th + doff;
	while (o < end) {
		if (*o == 0)
			break;
		if (*o == 1) {
			o++;
			continue;
		}
		if (end - o < 2 || o[1] < 2 || o[1] > end - o)
			break;
		if (o[0] == 3 && o[1] == 3)
			s->opt_ws = true;
		else if (o[0] == 4 && o[1] == 2)
			s->opt_sack = true;
		else if (o[0] == 8 && o[1] == 10) {
			s->opt_ts = true;
			s->tsval = (uint32_t)o[2] << 24 | (uint32_t)o[3] << 16 |
				   (uint32_t)o[4] << 8 | o[5];
		}
		o += o[1];
	}
}

/* Writes the TCP header (and options) and the IP header around it;
 * returns the TX next. */
static lrx_next_t l3_tcp_reply_write(struct l3_ctx *c, struct rte_mbuf *m,
				     struct lrx_meta *meta, lrx_next_t fate,
				     int fam, const struct l3_tcp_seg *s,
				     uint32_t seq, uint32_t ack, uint8_t flags,
				     uint16_t window, const uint8_t *opts,
				     uint32_t opts_len, uint8_t tos)
{
	struct l3_reply *r = &c->reply;
	const uint32_t ip_len = fam ? 40 : 20;
	const uint32_t tcp_len = 20 + opts_len;
	/* the segment's own header and data room hold the reply; a SYN
	 * without options is shorter than a SYN-ACK with MSS: grow into
	 * the tailroom */
	uint32_t l4_off;
	uint8_t *p = l3_reply_ip_frame(r, m, meta, fam, meta->transport_offset, 0,
				       ip_len + tcp_len, &l4_off);
	if (!p)
		return l3_reply_no_room(r, fate);
	if (fam)
		l3_reply_ip6_write(p, tos, (uint16_t)tcp_len, IPPROTO_TCP, s->dst, s->src);
	else {
		uint32_t d, sa;
		memcpy(&d, s->dst, 4);
		memcpy(&sa, s->src, 4);
		/* the control socket: IP_PMTUDISC_DO, so DF and ID 0 */
		l3_reply_ip4_write(p, tos, (uint16_t)(ip_len + tcp_len), 0, true,
			     IPPROTO_TCP, d, sa);
	}
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(p + ip_len);
	th->src_port = s->dport;
	th->dst_port = s->sport;
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = (uint8_t)((tcp_len / 4) << 4);
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(window);
	th->cksum = 0;
	th->tcp_urp = 0;
	if (opts_len)
		memcpy(th + 1, opts, opts_len);
	th->cksum = l3_reply_csum(m, l4_off, tcp_len, IPPROTO_TCP,
				  fam ? NULL : p, fam ? p : NULL);
	l3_tcp_of(c)->out_segs++;
	return l3_reply_out(r, m, fam);
}

/* No output route back to the segment's source (ipv4_routes /
 * ipv6_routes): tcp_v4_send_reset still counts OutSegs and OutRsts after
 * ip_send_unicast_reply gave up; tcp_v6_send_response's
 * ip6_dst_lookup_flow counts Ip6OutNoRoutes and nothing else. */
static bool l3_tcp_rst_unrouted(struct l3_ctx *c, int fam, const uint8_t *src)
{
	if (l3_tcp_route_back(c, fam, src))
		return false;
	if (fam == L3_FAMILY_V6) {
		c->reply.ip_out_no_routes[L3_FAMILY_V6]++;
		return true;
	}
	l3_tcp_of(c)->out_segs++;
	l3_tcp_of(c)->out_rsts++;
	return true;
}

/* tcp_v4_send_reset / tcp_v6_send_reset: never to a RST; after an ACK
 * the reset takes its number, else it acknowledges the segment
 * (SYN and FIN count one); no window, no options; IPv4 TOS and IPv6
 * traffic class reflected. */
static lrx_next_t l3_tcp_rst(struct l3_ctx *c, struct rte_mbuf *m,
			     struct lrx_meta *meta, lrx_next_t fate, int fam)
{
	struct l3_tcp_seg s;
	l3_tcp_seg_read(m, meta, fam, &s);
	if (s.flags & L3_TCP_RST)
		return fate;
	if (unlikely(l3_tcp_rst_unrouted(c, fam, s.src)))
		return fate;
	uint32_t seq = 0, ack = 0;
	uint8_t flags = L3_TCP_RST;
	if (s.flags & L3_TCP_ACK) {
		seq = s.ack_seq;
	} else {
		flags |= L3_TCP_ACK;
		ack = s.seq + !!(s.flags & L3_TCP_SYN) + !!(s.flags & L3_TCP_FIN) +
		      s.seg_len;
	}
	lrx_next_t next = l3_tcp_reply_write(c, m, meta, fate, fam, &s, seq, ack,
					     flags, 0, NULL, 0, s.tos);
	l3_tcp_of(c)->out_rsts += next != fate;
	return next;
}

/* tcp_conn_request → tcp_v4_send_synack / tcp_v6_send_synack for a
 * listener: the advertised MSS of an MTU of 1500 (1460, IPv6 1440), the
 * window of tcp_openreq_init_rwin (64 KiB rounded down to whole
 * segments: tcp_rmem[1] 131072 at the default scaling ratio), window
 * scale 10 (ilog2 of tcp_rmem[2] = 32 MiB, minus 15) when the SYN had
 * one, SACK and timestamps when it had them, in tcp_options_write's
 * order; ECE when the SYN asked for ECN (tcp_ecn = 2). No TOS, DF. */
static lrx_next_t l3_tcp_synack(struct l3_ctx *c, struct rte_mbuf *m,
				struct lrx_meta *meta, lrx_next_t fate, int fam)
{
	struct l3_tcp_seg s;
	l3_tcp_seg_read(m, meta, fam, &s);
	if (unlikely(!l3_tcp_route_back(c, fam, s.src))) {
		/* inet_csk_route_req / inet6_csk_route_req: no route
		 * (OutNoRoutes), tcp_conn_request drops the request
		 * (tcp_listendrop); the SYN stays consumed */
		c->reply.ip_out_no_routes[fam]++;
		l3_tcp_of(c)->listen_drops++;
		return fate;
	}
	const unsigned alen = fam ? 16 : 4;
	const uint32_t hash = l3_reply_hash_addr(s.src, alen,
		l3_reply_hash_addr(s.dst, alen,
			     rte_hash_crc_4byte((uint32_t)s.sport << 16 | s.dport, 0)));
	const uint16_t mss = fam ? 1440 : 1460;
	uint8_t opts[20];
	uint32_t n = 0;
	opts[n++] = 2;
	opts[n++] = 4;
	opts[n++] = (uint8_t)(mss >> 8);
	opts[n++] = (uint8_t)mss;
	if (s.opt_ts) {
		if (s.opt_sack) {
			opts[n++] = 4;
			opts[n++] = 2;
		} else {
			opts[n++] = 1;
			opts[n++] = 1;
		}
		opts[n++] = 8;
		opts[n++] = 10;
		const rte_be32_t tsval =
			rte_cpu_to_be_32((uint32_t)l3_reply_now(&c->reply) + hash * 2654435761u);
		const rte_be32_t tsecr = rte_cpu_to_be_32(s.tsval);
		memcpy(opts + n, &tsval, 4);
		memcpy(opts + n + 4, &tsecr, 4);
		n += 8;
	} else if (s.opt_sack) {
		opts[n++] = 1;
		opts[n++] = 1;
		opts[n++] = 4;
		opts[n++] = 2;
	}
	if (s.opt_ws) {
		opts[n++] = 1;
		opts[n++] = 3;
		opts[n++] = 3;
		opts[n++] = 10;
	}
	const uint32_t mss_eff = mss - (s.opt_ts ? 12u : 0u);
	const uint16_t window = (uint16_t)(65536 / mss_eff * mss_eff);
	uint8_t flags = L3_TCP_SYN | L3_TCP_ACK;
	if ((s.flags & (L3_TCP_ECE | L3_TCP_CWR)) == (L3_TCP_ECE | L3_TCP_CWR))
		flags |= L3_TCP_ECE;
	return l3_tcp_reply_write(c, m, meta, fate, fam, &s, hash, s.seq + 1,
				  flags, window, opts, n, 0);
}

lrx_next_t l3_tcp_answer(struct l3_ctx *c, struct rte_mbuf *m,
			 struct lrx_meta *meta, lrx_next_t fate,
			 enum l3_reply_kind kind)
{
	const struct l3_tcp *t = l3_tcp_of(c);
	const int fam = meta->protocol == RTE_ETHER_TYPE_IPV6;
	if (kind == L3_REPLY_RST)
		return t->rst == 0 ? l3_tcp_rst(c, m, meta, fate, fam) : fate;
	return t->synack == 0 ? l3_tcp_synack(c, m, meta, fate, fam) : fate;
}

/* ---- the module ----------------------------------------------------------- */

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

/* tcp_reader_lcore: same (the polling lcore) or an lcore id */
static int l3_parse_reader_lcore(const char *text, void *out)
{
	uint64_t v;
	if (strcmp(text, "same") == 0) {
		*(uint32_t *)out = LRX_TCP_READER_SAME;
		return 0;
	}
	if (lrx_value_uint(text, 0, RTE_MAX_LCORE - 1, &v) < 0)
		return -EINVAL;
	*(uint32_t *)out = (uint32_t)v;
	return 0;
}
#define L3_READER_LCORE_VALID "same, or an lcore id EAL runs other than the polling one"
_Static_assert(LRX_TCP_EHASH_MAX == 1048576, "L3_EHASH_VALID says the maximum");

static void l3_tcp_fini(struct l3_demux *d)
{
	lrx_tcp_rcv_fini(&d->tcp.rcv);
	for (int fam = 0; fam < L3_FAMILIES; fam++)
		lrx_tcp_ehash_fini(&d->tcp.ehash[fam]);
}

static void l3_tcp_rcv_conf(const struct l3_tcp_conf *conf, struct lrx_tcp_rcv_conf *rc)
{
	static const enum lrx_tcp_read_mode modes[] = {
		LRX_TCP_READ_COPY, LRX_TCP_READ_DEVMEM, LRX_TCP_READ_ZCRX};
	*rc = (struct lrx_tcp_rcv_conf){
		.socks = conf->rcv_socks, .rcvbuf = conf->rcvbuf,
		.truesize = conf->truesize, .mode = modes[conf->read_mode],
		.reader = conf->reader ? LRX_TCP_READER_NONE : LRX_TCP_READER_POLL,
		.read_size = conf->read_size, .dontneed_batch = conf->dontneed_batch,
		.zc_slots = conf->read_mode ? conf->zc_slots : 0,
		.reader_lcore = conf->reader_lcore, .window_wait = conf->window_wait,
		.digest = conf->digest};
}

/* The receive queues (tcp_rcv_socks): they need the table whose entries
 * they belong to. */
static int l3_tcp_rcv_init(struct l3_tcp *t, const struct l3_tcp_conf *conf,
			   const struct lrx_stage_init *init)
{
	struct lrx_tcp_rcv_conf rc;
	char why[160];
	if (conf->rcv_socks && conf->ehash == 0) {
		snprintf(init->err, init->err_len,
			 "%s: key 'tcp_rcv_socks' %u: the receive queues belong to "
			 "connections of the established table: set tcp_ehash too",
			 init->instance, conf->rcv_socks);
		return -EINVAL;
	}
	l3_tcp_rcv_conf(conf, &rc);
	int rc_ = lrx_tcp_rcv_init(&t->rcv, &rc, L3_FAMILIES, init->socket_id, why,
				   sizeof(why));
	if (rc_ < 0)
		snprintf(init->err, init->err_len, "%s: key '%s': %s", init->instance,
			 rc_ == -ENOMEM || rc.reader_lcore == LRX_TCP_READER_SAME
				 ? "tcp_rcv_socks" : "tcp_reader_lcore", why);
	return rc_;
}

static int l3_tcp_init(struct l3_demux *d, const struct l3_demux_conf *conf,
		       const struct lrx_stage_init *init)
{
	struct l3_tcp *t = &d->tcp;
	t->any = conf->tcp.ports.any;
	memcpy(t->ports, conf->tcp.ports.bits, sizeof(t->ports));
	t->rst = conf->tcp.rst;
	t->synack = conf->tcp.synack;
	for (int fam = 0; fam < L3_FAMILIES && conf->tcp.ehash; fam++) {
		int rc = lrx_tcp_ehash_init(&t->ehash[fam], conf->tcp.ehash,
					    init->socket_id);
		if (rc < 0) {
			snprintf(init->err, init->err_len,
				 "%s: key 'tcp_ehash': out of memory for %u "
				 "buckets", init->instance, conf->tcp.ehash);
			l3_tcp_fini(d);
			return rc;
		}
	}
	int rc = l3_tcp_rcv_init(t, &conf->tcp, init);
	if (rc < 0) {
		l3_tcp_fini(d);
		return rc;
	}
	for (int fam = 0; fam < L3_FAMILIES; fam++)
		d->core.l4_table[fam][IPPROTO_TCP] =
			conf->tcp.ehash ? &l3_tcp_est_handler : &l3_tcp_handler;
	return 0;
}

static const char *const l3_sends[] = {"send", "none", NULL};
static const char *const l3_read_modes[] = {"copy", "devmem", "zcrx", NULL};
static const char *const l3_tcp_readers[] = {"poll", "none", NULL};

static const struct lrx_value_key l3_tcp_keys[] = {
	L3_KEY(PORTS, tcp.ports, "tcp_ports", "any", "TCP ports with a socket, as udp_ports"),
	L3_KEY(CUSTOM, tcp.ehash, "tcp_ehash", "0", l3_parse_ehash, L3_EHASH_VALID,
	       "buckets of TCP's established-socket table per family "
	       "(docs/sockets.md): every segment is looked up first "
	       "(__inet_lookup_established), a listener's new connections are "
	       "inserted, one per bucket at most; 0: no table, tcp_ports decides"),
	L3_KEY(CHOICE, tcp.rst, "tcp_rst", "send", l3_sends,
	       "a RST for a segment to a port without a socket (tcp_v4_send_reset)"),
	L3_KEY(CHOICE, tcp.synack, "tcp_synack", "send", l3_sends,
	       "a SYN-ACK for a SYN to a port with a socket"),
	L3_KEY(UINT, tcp.rcv_socks, "tcp_rcv_socks", "0", 0, LRX_TCP_SOCKS_MAX,
	       "connections per family with a receive queue, the first the "
	       "established table holds (docs/sockets.md, TCP delivery; needs "
	       "tcp_ehash): in-order data queued, out-of-order held, read by the "
	       "application; 0: segments are delivered"),
	L3_KEY(UINT, tcp.rcvbuf, "tcp_rcvbuf", "0", 0, INT32_MAX,
	       "sk_rcvbuf of each TCP receive socket (0: tcp_rmem[1], 131072)"),
	L3_KEY(UINT, tcp.truesize, "tcp_truesize", "0", 0, 1u << 20,
	       "bytes a queued segment charges (skb->truesize); 0: its mbufs"),
	L3_KEY(CHOICE, tcp.read_mode, "tcp_read", "copy", l3_read_modes,
	       "how the application reads: copy (tcp_recvmsg) | devmem "
	       "(references, returned by SO_DEVMEM_DONTNEED batches) | zcrx "
	       "(io_uring completion and refill rings)"),
	L3_KEY(CHOICE, tcp.reader, "tcp_reader", "poll", l3_tcp_readers,
	       "poll: the application reads at the end of each poll | none: it "
	       "stops reading until the run ends"),
	L3_KEY(CUSTOM, tcp.reader_lcore, "tcp_reader_lcore", "same", l3_parse_reader_lcore,
	       L3_READER_LCORE_VALID,
	       "where the application runs: same (the polling lcore, after each "
	       "poll) | an lcore id (a reader of its own, the receive queue an "
	       "SP/SC ring between them, what it is done with back through an "
	       "rte_ring; docs/sockets.md)"),
	L3_KEY(BOOL, tcp.window_wait, "tcp_window_wait", "no",
	       "with tcp_reader_lcore: the sender respects the window (as a TCP "
	       "sender would; net_synth's sends on): each poll's end waits while "
	       "a socket has less than half its buffer free (tcp_rcv_window_waits, "
	       "tcp_rcv_window_wait_cycles)"),
	L3_KEY(UINT, tcp.read_size, "tcp_read_size", "65536", 1, 1u << 24,
	       "bytes of the copy's application buffer (one recvmsg each)"),
	L3_KEY(UINT, tcp.dontneed_batch, "tcp_dontneed_batch", "512", 1,
	       LRX_TCP_ZC_SLOTS_MAX, "devmem: tokens per SO_DEVMEM_DONTNEED "
	       "(at most tcp_zc_slots)"),
	L3_KEY(UINT, tcp.zc_slots, "tcp_zc_slots", "1024", 1, LRX_TCP_ZC_SLOTS_MAX,
	       "devmem, zcrx: payload buffers the application may hold (the "
	       "binding's pool); with none free a segment is copied"),
	L3_KEY(BOOL, tcp.digest, "tcp_rcv_digest", "no",
	       "hash the bytes read (counter tcp_app_digest; tests)"),
	{.name = NULL},
};

static const struct lrx_stage_counter l3_tcp_counters[] = {
	L3_COUNTER("TcpInSegs", tcp.mib.in_segs),
	L3_COUNTER("TcpInErrs", tcp.mib.in_errs),
	L3_COUNTER("TcpInCsumErrors", tcp.mib.in_csum_errors),
	L3_COUNTER("TcpOutSegs", tcp.out_segs),
	L3_COUNTER("TcpOutRsts", tcp.out_rsts),
	L3_COUNTER("tcp_no_socket", tcp.no_socket),
	L3_COUNTER("TcpExtTCPReqQFullDoCookies", tcp.reqq_full_do_cookies),
	L3_COUNTER("TcpExtListenOverflows", tcp.listen_overflows),
	L3_COUNTER("TcpExtListenDrops", tcp.listen_drops),
	L3_COUNTER("tcp_ehash_hits", tcp.ehash_hits),
	L3_COUNTER("tcp_ehash_inserted", tcp.ehash_inserted),
	L3_COUNTER("tcp_ehash_full", tcp.ehash_full),
	L3_COUNTER("TcpExtTCPOFOQueue", tcp.rcv.mib.ofo_queue),
	L3_COUNTER("TcpExtTCPOFODrop", tcp.rcv.mib.ofo_drop),
	L3_COUNTER("TcpExtTCPOFOMerge", tcp.rcv.mib.ofo_merge),
	L3_COUNTER("TcpExtTCPRcvQDrop", tcp.rcv.mib.rcvq_drop),
	L3_COUNTER("TcpExtTCPZeroWindowDrop", tcp.rcv.mib.zero_window_drop),
	L3_COUNTER("TcpExtDelayedACKLost", tcp.rcv.mib.delayed_ack_lost),
	L3_COUNTER("tcp_rcv_fast", tcp.rcv.mib.fast),
	L3_COUNTER("tcp_rcv_untracked", tcp.rcv.mib.untracked),
	L3_COUNTER("tcp_rcv_window_waits", tcp.rcv.mib.window_waits),
	L3_COUNTER("tcp_rcv_window_wait_cycles", tcp.rcv.mib.window_wait_cycles),
	L3_COUNTER("tcp_rcv_bytes", tcp.rcv.mib.bytes_in),
	L3_COUNTER("tcp_rcv_dup_bytes", tcp.rcv.mib.bytes_dup),
	L3_COUNTER("tcp_rcv_drop_bytes", tcp.rcv.mib.bytes_dropped),
	L3_COUNTER("tcp_rcv_queued_bytes", tcp.rcv.mib.bytes_queued),
	L3_COUNTER("tcp_app_read_bytes", tcp.rcv.mib.bytes_read),
	L3_COUNTER("tcp_app_copied_bytes", tcp.rcv.mib.bytes_copied),
	L3_COUNTER("tcp_app_recvmsg", tcp.rcv.mib.recvmsg),
	L3_COUNTER("tcp_app_dontneed", tcp.rcv.mib.dontneed),
	L3_COUNTER("tcp_app_uring_enter", tcp.rcv.mib.uring_enter),
	L3_COUNTER("tcp_zc_refs", tcp.rcv.mib.zc_refs),
	L3_COUNTER("tcp_zc_copy_fallback", tcp.rcv.mib.zc_copy_fallback),
	L3_COUNTER("tcp_app_digest", tcp.rcv.mib.digest),
	L3_COUNTER("tcp_app_reads", tcp.rcv.mib.reads),
	L3_COUNTER("tcp_app_busy_cycles", tcp.rcv.mib.busy_cycles),
	L3_COUNTER("tcp_app_oncpu_ns", tcp.rcv.mib.oncpu_ns),
	{.name = NULL},
};

/* The application reads at the end of each poll (tcp_recvmsg), and
 * everything at the run's end; what it read or gave back leaves
 * delivered, what the out-of-order queue let go dropped. */
static void l3_tcp_flush(void *ctx, bool budget_used)
{
	(void)budget_used;
	struct lrx_tcp_rcv *t = &((struct l3_demux *)ctx)->tcp.rcv;
	lrx_tcp_rcv_read(t, false);
	lrx_tcp_rcv_window_wait(t);
}

static void l3_tcp_end_run(void *ctx)
{
	lrx_tcp_rcv_read(&((struct l3_demux *)ctx)->tcp.rcv, true);
}

static uint16_t l3_tcp_consume(void *ctx, struct rte_mbuf **pkts, uint16_t max)
{
	return lrx_tcp_rcv_release(&((struct l3_demux *)ctx)->tcp.rcv, pkts, max);
}

static uint16_t l3_tcp_drop(void *ctx, struct rte_mbuf **pkts,
			    enum lrx_drop_reason *reasons, uint16_t max)
{
	enum lrx_tcp_drop why[LRX_BURST_MAX];
	const uint16_t n = lrx_tcp_rcv_drop(&((struct l3_demux *)ctx)->tcp.rcv, pkts, why,
					    RTE_MIN(max, (uint16_t)LRX_BURST_MAX));
	for (uint16_t i = 0; i < n; i++)
		reasons[i] = l3_tcp_drops[why[i]];
	return n;
}

static uint32_t l3_tcp_held(const void *ctx)
{
	return lrx_tcp_rcv_held(&((const struct l3_demux *)ctx)->tcp.rcv);
}

/* What the receive queues and the application can hold between polls. */
static uint32_t l3_tcp_mbuf_hold(const void *vconf, uint32_t mbuf_size)
{
	struct lrx_tcp_rcv_conf rc;
	l3_tcp_rcv_conf(&((const struct l3_demux_conf *)vconf)->tcp, &rc);
	return lrx_tcp_rcv_capacity(&rc, L3_FAMILIES, mbuf_size);
}

L3_MODULE(tcp, .fini = l3_tcp_fini, .mbuf_hold = l3_tcp_mbuf_hold, .flush = l3_tcp_flush, .end_run = l3_tcp_end_run,
	  .consume = l3_tcp_consume, .drop = l3_tcp_drop, .held = l3_tcp_held);
