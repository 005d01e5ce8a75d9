/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux's module udp: UDP on receive (net/ipv4/udp.c, net/ipv6/udp.c)
 * up to the socket's queue, the core inline in udp.h; keys udp_ports,
 * udp_sockets (the sockets of lib/sockets) and their udp_* settings;
 * counters Udp* and Udp6* as nstat names them, udp_trimmed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_malloc.h>

#include "l3_modules.h"

/* __udp4_lib_lookup_skb / __udp6_lib_lookup_skb on the configured
 * sockets: the best one for the datagram's destination, or NULL. */
static struct lrx_udp_sock *l3_udp_sock_find(struct l3_ctx *c,
					     const struct rte_mbuf *m,
					     const struct lrx_meta *meta,
					     uint16_t dport, int fam)
{
	const uint8_t *l3 = l3_frame(m) + meta->network_offset;
	return lrx_udp_lookup(l3_udp_of(c)->socks, fam == L3_FAMILY_V6,
			      l3 + (fam == L3_FAMILY_V6 ? 24 : 16), dport);
}

/* udp_unicast_rcv_skb → udp_queue_rcv_skb: the datagram joins its
 * socket's receive queue (CONSUMED: the reader hands it on at the end of
 * the poll, l3_demux_flush), or a full buffer drops it as
 * __udp_queue_rcv_skb does (UdpRcvbufErrors and UdpInErrors, the ENOMEM
 * charged twice). CONTINUE: no socket. Out of line: only with sockets. */
__rte_noinline lrx_next_t l3_udp_sock_enqueue(struct l3_ctx *c, struct rte_mbuf *m,
					      const struct lrx_meta *meta,
					      uint16_t dport, int fam)
{
	struct l3_udp *u = l3_udp_of(c);
	struct lrx_udp_sock *sk = l3_udp_sock_find(c, m, meta, dport, fam);
	if (sk == NULL)
		return LRX_NEXT_CONTINUE_V;
	if (unlikely(lrx_udp_enqueue(u->socks, sk, m) != 0)) {
		u->rcvbuf_errors[fam]++;
		u->mib[fam].in_errors++;
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
lrx_next_t l3_udp_multi(struct l3_ctx *c, struct rte_mbuf *m,
			struct lrx_meta *meta, const struct rte_udp_hdr *uh,
			uint32_t l4_len, int fam)
{
	struct l3_udp *u = l3_udp_of(c);
	struct l3_udp_mib *mib = &u->mib[fam];
	const bool zero = uh->dgram_cksum == 0;
	if (l3_port_bound(u->ports, u->any,
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
__rte_noinline lrx_next_t l3_udp_multi_sock(struct l3_ctx *c, struct rte_mbuf *m,
					    struct lrx_meta *meta,
					    const struct rte_udp_hdr *uh,
					    uint32_t l4_len, int fam)
{
	if (l3_udp_sock_find(c, m, meta, rte_be_to_cpu_16(uh->dst_port), fam) &&
	    !(uh->dgram_cksum == 0 && fam == L3_FAMILY_V6))
		return LRX_NEXT_CONTINUE_V;
	return l3_udp_multi(c, m, meta, uh, l4_len, fam);
}

static __rte_always_inline lrx_next_t l3_udp_core(struct l3_ctx *c, struct rte_mbuf *m,
				     struct lrx_meta *meta, const int fam)
{
	return l3_udp_core_(c, l3_udp_of(c), m, meta, fam, false);
}
static __rte_always_inline lrx_next_t l3_udp_sock_core(struct l3_ctx *c, struct rte_mbuf *m,
					  struct lrx_meta *meta, const int fam)
{
	return l3_udp_core_(c, l3_udp_of(c), m, meta, fam, true);
}

/* __udp4_lib_err / __udp6_lib_err: the socket that sent the quoted
 * datagram, bound to its source port (and, among udp_sockets, its source
 * address); none counts InErrors. */
static bool l3_udp_err(struct l3_ctx *c, const uint8_t *ip, const uint8_t *l4,
		       int fam)
{
	const struct l3_udp *u = l3_udp_of(c);
	uint16_t sport;
	memcpy(&sport, l4, 2);
	sport = rte_be_to_cpu_16(sport);
	if (u->socks != NULL)
		return lrx_udp_lookup(u->socks, fam == L3_FAMILY_V6,
				      ip + (fam == L3_FAMILY_V6 ? 8 : 12), sport) != NULL;
	return l3_port_bound(u->ports, u->any, sport);
}

L3_DEFINE_HANDLER_ERR(udp, l3_udp_core, l3_udp_err)
L3_DEFINE_HANDLER_ERR(udp_sock, l3_udp_sock_core, l3_udp_err)

/* The sockets of key udp_sockets: they replace udp_ports (an empty port
 * map sends every datagram to the lookup). */
static int l3_socks_init(struct l3_udp *u, const struct l3_udp_conf *conf,
			 const struct lrx_stage_init *init)
{
	static const enum lrx_udp_reader readers[] = {LRX_UDP_READER_POLL,
						      LRX_UDP_READER_NONE};
	char why[512];
	int rc;

	if (!conf->ports.any) {
		snprintf(init->err, init->err_len,
			 "%s: keys 'udp_sockets' and 'udp_ports' both say which "
			 "ports have a socket: set one of them", init->instance);
		return -EINVAL;
	}
	u->socks = rte_zmalloc_socket("l3_udp_socks", sizeof(*u->socks),
				      RTE_CACHE_LINE_SIZE, init->socket_id);
	if (u->socks == NULL) {
		snprintf(init->err, init->err_len, "%s: out of memory",
			 init->instance);
		return -ENOMEM;
	}
	u->socks->truesize = conf->truesize;
	u->socks->reader = readers[conf->reader];
	if (u->socks->reader == LRX_UDP_READER_POLL && conf->read_batch) {
		u->socks->reader = LRX_UDP_READER_BATCH;
		u->socks->batch = conf->read_batch;
	}
	rc = lrx_udp_socks_init(u->socks, &conf->sockets, conf->rcvbuf,
				init->socket_id, why, sizeof(why));
	if (rc < 0) {
		snprintf(init->err, init->err_len, "%s: key 'udp_sockets': %s",
			 init->instance, why);
		lrx_udp_socks_fini(u->socks);
		rte_free(u->socks);
		u->socks = NULL;
		return rc;
	}
	/* an empty port map: l3_udp_multi asks the sockets */
	u->any = false;
	memset(u->ports, 0, sizeof(u->ports));
	return 0;
}

static int l3_udp_init(struct l3_demux *d, const struct l3_demux_conf *conf,
		       const struct lrx_stage_init *init)
{
	struct l3_udp *u = &d->udp;
	u->any = conf->udp.ports.any;
	memcpy(u->ports, conf->udp.ports.bits, sizeof(u->ports));
	if (conf->udp.sockets.n != 0) {
		int rc = l3_socks_init(u, &conf->udp, init);
		if (rc < 0)
			return rc;
	}
	for (int fam = 0; fam < L3_FAMILIES; fam++)
		d->core.l4_table[fam][IPPROTO_UDP] =
			u->socks != NULL ? &l3_udp_sock_handler : &l3_udp_handler;
	return 0;
}

static void l3_udp_fini(struct l3_demux *d)
{
	struct l3_udp *u = &d->udp;
	if (u->socks != NULL) {
		lrx_udp_socks_fini(u->socks);
		rte_free(u->socks);
		u->socks = NULL;
	}
}

/* The sockets' reader runs at the end of each poll (udp_recvmsg:
 * UdpInDatagrams when read) and at the run's end reads everything; what
 * it read leaves delivered (consume: the application has it). */
static void l3_udp_flush(void *ctx, bool budget_used)
{
	struct l3_udp *u = &((struct l3_demux *)ctx)->udp;
	(void)budget_used;
	if (u->socks != NULL)
		lrx_udp_read(u->socks, false, &u->mib[L3_FAMILY_V4].in_datagrams,
			     &u->mib[L3_FAMILY_V6].in_datagrams);
}

static void l3_udp_end_run(void *ctx)
{
	struct l3_udp *u = &((struct l3_demux *)ctx)->udp;
	/* what a full sink leaves unread the next drain reads (each calls
	 * end_run) */
	if (u->socks != NULL)
		lrx_udp_read(u->socks, true, &u->mib[L3_FAMILY_V4].in_datagrams,
			     &u->mib[L3_FAMILY_V6].in_datagrams);
}

static uint16_t l3_udp_consume(void *ctx, struct rte_mbuf **pkts, uint16_t max)
{
	struct lrx_udp_socks *socks = ((struct l3_demux *)ctx)->udp.socks;
	return socks != NULL ? lrx_udp_release(socks, pkts, max) : 0;
}

static uint32_t l3_udp_held(const void *ctx)
{
	const struct lrx_udp_socks *socks = ((const struct l3_demux *)ctx)->udp.socks;
	return socks != NULL ? lrx_udp_held(socks) : 0;
}

/* What the socket queues hold between polls: nothing past the poll when
 * the reader drains them all at its end; up to every queue's buffer when
 * it reads a batch per poll or nothing (udp_reader=none). */
static uint32_t l3_udp_mbuf_hold(const void *vconf, uint32_t mbuf_size)
{
	const struct l3_udp_conf *conf = &((const struct l3_demux_conf *)vconf)->udp;
	if (conf->sockets.n == 0 || (conf->reader == 0 && conf->read_batch == 0))
		return 0;
	return lrx_udp_socks_capacity(&conf->sockets, conf->rcvbuf,
				      conf->truesize ? conf->truesize : mbuf_size);
}

static const char *const l3_readers[] = {"poll", "none", NULL};

static const struct lrx_value_key l3_udp_keys[] = {
	L3_KEY(PORTS, udp.ports, "udp_ports", "any",
	       "UDP ports with a socket: any | none | list like 53,8000-8100 "
	       "(others drop NO_SOCKET, UdpNoPorts)"),
	L3_KEY(CUSTOM, udp.sockets, "udp_sockets", "", lrx_udp_socks_parse, lrx_udp_socks_valid,
	       "UDP sockets with receive queues (docs/sockets.md): a comma list of "
	       "ADDR:PORT, [ADDR6]:PORT, *:PORT, [::]:PORT, each optionally :RCVBUF "
	       "(SO_RCVBUF); empty: udp_ports decides, datagrams are delivered"),
	L3_KEY(UINT, udp.rcvbuf, "udp_rcvbuf", "0", 0, INT32_MAX,
	       "SO_RCVBUF of the sockets without their own :RCVBUF (doubled, as "
	       "setsockopt; 0: net.core.rmem_default, 212992)"),
	L3_KEY(UINT, udp.truesize, "udp_truesize", "0", 0, 1u << 20,
	       "bytes a queued datagram charges to its socket (skb->truesize); 0: "
	       "its mbuf (struct, private area and buffer)"),
	L3_KEY(CHOICE, udp.reader, "udp_reader", "poll", l3_readers,
	       "poll: the application reads its sockets at the end of each poll "
	       "(recvmmsg) | none: it reads nothing until the run ends"),
	L3_KEY(UINT, udp.read_batch, "udp_read_batch", "0", 0, 65535,
	       "datagrams the reader takes per socket per poll (recvmmsg's vlen); "
	       "0: all queued"),
	{.name = NULL},
};

/* UDP_MIB_* of one family, as nstat names them with prefix P */
#define L3_UDP_COUNTERS(P, fam)                                               \
	L3_COUNTER(P "InDatagrams", udp.mib[fam].in_datagrams),               \
	L3_COUNTER(P "NoPorts", udp.mib[fam].no_ports),                       \
	L3_COUNTER(P "InErrors", udp.mib[fam].in_errors),                     \
	L3_COUNTER(P "InCsumErrors", udp.mib[fam].in_csum_errors),            \
	L3_COUNTER(P "IgnoredMulti", udp.mib[fam].ignored_multi),             \
	L3_COUNTER(P "RcvbufErrors", udp.rcvbuf_errors[fam])

static const struct lrx_stage_counter l3_udp_counters[] = {
	L3_UDP_COUNTERS("Udp", 0),
	L3_UDP_COUNTERS("Udp6", 1),
	L3_COUNTER("udp_trimmed", udp.trimmed),
	{.name = NULL},
};

L3_MODULE(udp, .fini = l3_udp_fini, .flush = l3_udp_flush,
	  .end_run = l3_udp_end_run, .consume = l3_udp_consume,
	  .held = l3_udp_held, .mbuf_hold = l3_udp_mbuf_hold);
