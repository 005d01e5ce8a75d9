/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux's module icmp: ICMP and ICMPv6 on receive (net/ipv4/icmp.c,
 * net/ipv6/icmp.c) and the messages the receive path sends, built in the
 * asking packet's own buffer (reply.c) with Linux 6.18's header fields,
 * rate limits (icmpv4_global_allow / icmp_global_allow, the per-peer
 * icmpv4_xrlim_allow / icmpv6_xrlim_allow through inet_peer_xrlim_allow,
 * net/ipv4/inetpeer.c) and Out counters. Keys icmp_*, icmpv6_*; counters
 * Icmp* and Icmp6* as nstat names them.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_icmp.h>
#include <rte_ip.h>

#include "l3_modules.h"

/* XRLIM_BURST_FACTOR (net/ipv4/inetpeer.c) */
#define L3_XRLIM_BURST_FACTOR 6

/* ---- icmp_rcv / icmpv6_rcv ----------------------------------------------- */

/* ipv6_skip_exthdr from frame[off] (header type *nh) to frame[end): past
 * hop-by-hop, routing, destination options, AH and fragment headers (8
 * bytes of each there); a later fragment ends it (no header past it).
 * The offset of the first other header (its type in *nh), or UINT32_MAX
 * when a header does not fit. */
static uint32_t l3_icmp6_skip_exthdr(const uint8_t *frame, uint32_t off,
				     uint32_t end, uint8_t *nh)
{
	while (*nh == 0 || *nh == 43 || *nh == 60 || *nh == 44 || *nh == 51) {
		if (off + 8 > end)
			return UINT32_MAX;
		const uint8_t *h = frame + off;
		if (*nh == 44 && ((h[2] << 8 | h[3]) & ~7) != 0)
			break;
		off += *nh == 44 ? 8u : *nh == 51 ? (h[1] + 2u) * 4 : (h[1] + 1u) * 8;
		*nh = h[0];
	}
	return off;
}

/* An ICMP error too short for what its handler reads of the datagram it
 * quotes: icmp_unreach (destination unreachable, source quench, time
 * exceeded, parameter problem) wants an IPv4 header of IHL >= 5,
 * icmp_redirect an IPv4 header's length; icmpv6_notify (every ICMPv6
 * error) the IPv6 header and 8 bytes past its extension headers. Each
 * counts InErrors. */
static bool l3_icmp_error_short(const struct rte_mbuf *m,
				const struct lrx_meta *meta, int fam,
				uint8_t type, uint32_t l4_len)
{
	const uint32_t quoted = l4_len - sizeof(struct rte_icmp_hdr);
	const uint32_t q = meta->transport_offset + sizeof(struct rte_icmp_hdr);
	const uint8_t *frame = l3_frame(m);
	if (fam == L3_FAMILY_V4) {
		if (type == 5)
			return quoted < 20;
		if (type != 3 && type != 4 && type != 11 && type != 12)
			return false;
		return quoted < 20 || q >= m->data_len || (frame[q] & 0xf) < 5;
	}
	if (type >= 128)
		return false;
	if (quoted < 40 || q + 40 > m->data_len)
		return true;
	uint8_t nh = frame[q + 6];
	const uint32_t o = l3_icmp6_skip_exthdr(frame, q + 40,
						RTE_MIN(q + quoted, (uint32_t)m->data_len), &nh);
	return o == UINT32_MAX || o + 8 > q + quoted;
}

/* The errors whose datagram goes to its protocol's error handler:
 * icmp_unreach's (destination unreachable of code <= NR_ICMP_UNREACH,
 * source quench, time exceeded but for fragment reassembly, parameter
 * problem) and icmp_redirect's; every ICMPv6 error (icmpv6_notify). */
static inline bool l3_icmp_notifies(int fam, uint8_t type, uint8_t code)
{
	if (fam == L3_FAMILY_V6)
		return type < 128;
	return (type == 3 && code <= 15) || type == 4 || type == 5 ||
	       (type == 11 && code != 1) || type == 12;
}

/* icmp_socket_deliver / icmpv6_notify past the length checks of
 * l3_icmp_error_short: IPv4 wants the quoted header and 8 bytes more
 * (else InErrors); then the quoted protocol's error handler (raw sockets
 * are not modelled), whose finding no socket counts InErrors too. Out of
 * line: only for errors. */
static __rte_noinline void l3_icmp_notify(struct l3_ctx *c, const struct rte_mbuf *m,
					  const struct lrx_meta *meta, int fam,
					  uint32_t quoted)
{
	struct l3_icmp_mib *mib = &l3_icmp_of(c)->mib[fam];
	const uint32_t q = meta->transport_offset + sizeof(struct rte_icmp_hdr);
	const uint8_t *frame = l3_frame(m);
	const uint32_t end = RTE_MIN(q + quoted, (uint32_t)m->data_len);
	uint32_t l4;
	uint8_t proto;
	if (q + 40 > end && (fam == L3_FAMILY_V6 || q + 20 > end))
		return; /* not in the first segment: not looked at */
	if (fam == L3_FAMILY_V4) {
		l4 = q + (frame[q] & 0xf) * 4u;
		proto = frame[q + 9];
		if (l4 + 8 > q + quoted) {
			mib->in_errors++;
			return;
		}
	} else {
		proto = frame[q + 6];
		l4 = l3_icmp6_skip_exthdr(frame, q + 40, end, &proto);
	}
	if (l4 + 8 > end)
		return; /* not in the first segment: not looked at */
	const struct l3_handler *h = c->l4_table[fam][proto];
	if (h != NULL && h->err != NULL && !h->err(c, frame + q, frame + l4, fam))
		mib->in_errors++;
}

static inline lrx_next_t l3_icmp_core(struct l3_ctx *c, struct rte_mbuf *m,
				      struct lrx_meta *meta, const int fam)
{
	struct l3_icmp_mib *mib = &l3_icmp_of(c)->mib[fam];
	const uint32_t l4_len = l3_l4_len(meta);

	mib->in_msgs++;
	/* skb_checksum_simple_validate: ICMPv4 has no pseudo header */
	if (l3_l4_csum_needed(c, meta) &&
	    !l3_l4_csum_ok(m, meta, l4_len, fam, fam == L3_FAMILY_V6)) {
		mib->in_csum_errors++;
		mib->in_errors++;
		return lrx_next_drop(LRX_DROP_ICMP_CSUM);
	}
	if (unlikely(l4_len < sizeof(struct rte_icmp_hdr) ||
		     m->data_len < meta->transport_offset +
				   sizeof(struct rte_icmp_hdr))) {
		mib->in_errors++;
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	}
	const uint8_t type = l3_frame(m)[meta->transport_offset];
	if (fam == L3_FAMILY_V4) {
		mib->in_echos += type == RTE_IP_ICMP_ECHO_REQUEST;
		/* icmp_rcv: a type past NR_ICMP_TYPES (18) is an error, but
		 * for ICMP_EXT_ECHO (42); to a broadcast or multicast route
		 * only address mask requests/replies (17, 18) are taken,
		 * echo and timestamp being ignored as the default
		 * icmp_echo_ignore_broadcasts=1 says (RFC 1122 3.2.2.6/8) */
		if (unlikely((type > 18 && type != 42) ||
			     (type != 17 && type != 18 &&
			      l3_route_is_multi(c, m, meta, fam)))) {
			mib->in_errors++;
			return lrx_next_drop(type > 18 ? LRX_DROP_UNHANDLED_PROTO
						       : LRX_DROP_INVALID_PROTO);
		}
	}
	if (unlikely(l3_icmp_error_short(m, meta, fam, type, l4_len))) {
		mib->in_errors++;
		return lrx_next_drop(LRX_DROP_NOT_SPECIFIED);
	}
	if (l3_icmp_notifies(fam, type, l3_frame(m)[meta->transport_offset + 1]))
		l3_icmp_notify(c, m, meta, fam, l4_len - sizeof(struct rte_icmp_hdr));
	if (fam == L3_FAMILY_V4) {
		if (type == RTE_IP_ICMP_ECHO_REQUEST) /* icmp_echo */
			return l3_ask(c, m, LRX_NEXT_DELIVER_V, L3_REPLY_ECHO4, 0);
		if (type == 13) { /* ICMP_TIMESTAMP */
			/* icmp_timestamp: the originate timestamp's 4 bytes
			 * must be there */
			if (l4_len < sizeof(struct rte_icmp_hdr) + 4) {
				mib->in_errors++;
				return lrx_next_drop(LRX_DROP_PKT_TOO_SMALL);
			}
			return l3_ask(c, m, LRX_NEXT_DELIVER_V,
				      L3_REPLY_TIMESTAMP4, 0);
		}
	} else if (type == 128) { /* icmpv6_echo_reply */
		mib->in_echos++;
		return l3_ask(c, m, LRX_NEXT_DELIVER_V, L3_REPLY_ECHO6, 0);
	}
	return LRX_NEXT_DELIVER_V;
}

L3_DEFINE_HANDLER(icmp, l3_icmp_core)

/* ---- rate limits --------------------------------------------------------- */

/* icmp_global_allow: a token bucket of icmp_msgs_per_sec, at most
 * icmp_msgs_burst, refilled at most every HZ / 50 (20 ms). */
static bool l3_global_allow(struct l3_icmp *ic, uint64_t now)
{
	if (ic->global_credit > 0)
		return true;
	/* a namespace's first message finds the stamp a second old or
	 * more (jiffies start far from 0) */
	const uint64_t delta =
		ic->global_started ? RTE_MIN(now - ic->global_stamp, (uint64_t)1000) : 1000;
	if (delta < 20)
		return false;
	const int64_t incr = (int64_t)((uint64_t)ic->conf.msgs_per_sec * delta / 1000);
	if (!incr)
		return false;
	ic->global_started = true;
	ic->global_stamp = now;
	ic->global_credit = RTE_MIN(ic->global_credit + incr, (int64_t)ic->conf.msgs_burst);
	return true;
}

/* inet_getpeer: the peer's bucket, made on first use with the tokens a
 * peer last seen 60 s ago has (inet_getpeer sets rate_last to jiffies -
 * 60 * HZ); a set of L3_PEER_WAYS replaces its least recently used. */
static struct l3_peer *l3_peer_get(struct l3_icmp *ic, int fam,
				   const uint8_t *addr, uint64_t now,
				   uint32_t timeout)
{
	const unsigned len = fam ? 16 : 4;
	const uint32_t hash = l3_reply_hash_addr(addr, len, 0x5eed);
	struct l3_peer *set =
		&ic->peers[fam][(hash % (L3_PEERS / L3_PEER_WAYS)) * L3_PEER_WAYS];
	struct l3_peer *victim = &set[0];
	for (unsigned w = 0; w < L3_PEER_WAYS; w++) {
		struct l3_peer *p = &set[w];
		if (p->used && memcmp(p->addr, addr, len) == 0)
			return p;
		if (!p->used ? victim->used : victim->used && p->touched < victim->touched)
			victim = p;
	}
	memset(victim, 0, sizeof(*victim));
	memcpy(victim->addr, addr, len);
	victim->used = 1;
	victim->last = now;
	victim->tokens = RTE_MIN((uint64_t)60000,
				 (uint64_t)L3_XRLIM_BURST_FACTOR * timeout);
	return victim;
}

/* inet_peer_xrlim_allow: tokens are milliseconds since the last message,
 * at most XRLIM_BURST_FACTOR timeouts; a message costs one timeout. */
static bool l3_peer_allow(struct l3_icmp *ic, int fam, const uint8_t *addr,
			  uint32_t timeout, uint64_t now)
{
	struct l3_peer *p = l3_peer_get(ic, fam, addr, now, timeout);
	p->touched = now;
	uint64_t token = p->tokens;
	const uint64_t delta = now - p->last;
	if (delta) {
		p->last = now;
		token += delta;
		if (token > (uint64_t)L3_XRLIM_BURST_FACTOR * timeout)
			token = (uint64_t)L3_XRLIM_BURST_FACTOR * timeout;
	}
	bool ok = false;
	if (token >= timeout) {
		token -= timeout;
		ok = true;
	}
	p->tokens = token;
	return ok;
}

/* icmp_global_allow, its refusal counted (IcmpOutRateLimitGlobal, for
 * both families, as the kernel does). */
static bool l3_icmp_global_ok(struct l3_icmp *ic, uint64_t now)
{
	if (l3_global_allow(ic, now))
		return true;
	ic->icmp_out_ratelimit_global++;
	return false;
}

/* The peer's bucket with timeout tmo ms (the family's xrlim_allow), then
 * icmp_global_consume. */
static bool l3_icmp_peer_ok(struct l3_icmp *ic, int fam, const uint8_t *peer,
			    uint32_t tmo, uint64_t now)
{
	if (!l3_peer_allow(ic, fam, peer, tmo, now)) {
		ic->out[fam].ratelimit_host++;
		return false;
	}
	ic->global_credit--; /* icmp_global_consume */
	return true;
}

/* icmpv4_global_allow, the output route (icmp_route_lookup /
 * ip_route_output_key: none, nothing is sent and nothing counted), then
 * icmpv4_xrlim_allow for a message of type/code to peer (network order). */
static bool l3_icmp4_allowed(struct l3_ctx *c, uint8_t type, uint8_t code,
			     uint32_t peer)
{
	struct l3_icmp *ic = l3_icmp_of(c);
	const bool routed = l3_ipv4_out_route(l3_route_of(c), peer);
	/* icmpv4_mask_allow: types past NR_ICMP_TYPES, fragmentation
	 * needed and those outside icmp_ratemask go unlimited */
	if (type > 18 || (type == 3 && code == 4) ||
	    !((1u << type) & ic->conf.ratemask4))
		return routed;
	const uint64_t now = l3_reply_now(&c->reply);
	if (!l3_icmp_global_ok(ic, now) || !routed)
		return false;
	return l3_icmp_peer_ok(ic, L3_FAMILY_V4, (const uint8_t *)&peer,
			       ic->conf.ratelimit4_ms, now);
}

/* icmpv6_global_allow, then the output route and icmpv6_xrlim_allow,
 * whose timeout shrinks for wider routes to the peer: tmo >>= (128 -
 * plen) >> 5. No route counts Ip6OutNoRoutes (ip6_dst_lookup_tail, or
 * icmpv6_xrlim_allow's own lookup, whose refusal icmp6_send counts as
 * rate limited too; icmpv6_echo_reply looks the route up before
 * icmpv6_xrlim_allow). */
static bool l3_icmp6_allowed(struct l3_ctx *c, uint8_t type,
			     const uint8_t *peer)
{
	struct l3_icmp *ic = l3_icmp_of(c);
	const bool limited = (ic->conf.ratemask6[type >> 6] >> (type & 63)) & 1;
	const uint64_t now = l3_reply_now(&c->reply);
	if (limited && !l3_icmp_global_ok(ic, now))
		return false;
	const int plen = l3_ipv6_out_route(c, peer);
	if (plen < 0) {
		c->reply.ip_out_no_routes[L3_FAMILY_V6]++;
		ic->out[L3_FAMILY_V6].ratelimit_host += limited && type != 129;
		return false;
	}
	if (!limited)
		return true;
	uint32_t tmo = ic->conf.ratelimit6_ms;
	if (plen < 128)
		tmo >>= (128 - plen) >> 5;
	return l3_icmp_peer_ok(ic, L3_FAMILY_V6, peer, tmo, now);
}

/* ---- the messages ---------------------------------------------------------- */

/* An error's ICMP header: type, code and the 4 bytes after the checksum. */
static void l3_icmp_error_hdr(uint8_t *icmp, uint8_t type, uint8_t code,
			      uint32_t rest)
{
	icmp[0] = type;
	icmp[1] = code;
	const rte_be32_t be = rte_cpu_to_be_32(rest);
	memcpy(icmp + 4, &be, 4);
}

/* An error's Out counters: a destination unreachable, or a parameter
 * problem. */
enum l3_icmp_error_class { L3_ICMP_ERR_UNREACH, L3_ICMP_ERR_PARM, L3_ICMP_ERR_TIME };

static void l3_icmp_count_error(struct l3_icmp_out *o, enum l3_icmp_error_class k)
{
	o->msgs++;
	o->dest_unreachs += k == L3_ICMP_ERR_UNREACH;
	o->type_unreach += k == L3_ICMP_ERR_UNREACH;
	o->parm_probs += k == L3_ICMP_ERR_PARM;
	o->type_parm += k == L3_ICMP_ERR_PARM;
	o->time_excds += k == L3_ICMP_ERR_TIME;
	o->type_time_exc += k == L3_ICMP_ERR_TIME;
}

/* The checksum of the ICMP message at l4_off (ICMPv6's with the pseudo
 * header of the IPv6 header ip6), and the reply out. */
static lrx_next_t l3_icmp_send(struct l3_reply *r, struct rte_mbuf *m,
			       uint8_t *icmp, uint32_t l4_off, uint32_t len,
			       const uint8_t *ip6)
{
	icmp[2] = icmp[3] = 0;
	const uint16_t csum = l3_reply_csum(m, l4_off, len,
					    ip6 ? IPPROTO_ICMPV6 : 0, NULL, ip6);
	memcpy(icmp + 2, &csum, 2);
	return l3_reply_out(r, m, ip6 != NULL);
}

/* icmp_pointers[].error: the ICMP types that are errors (and any past
 * NR_ICMP_TYPES): icmp_send never answers one. */
static bool l3_icmp4_is_error(uint8_t type)
{
	/* informational: 0, 8, 13..18 */
	return type > 18 || !(type == 0 || type == 8 || type >= 13);
}

/* __icmp_send for an error about the packet (type, code, the 4 bytes
 * after the checksum): only for a PACKET_HOST packet whose route is not
 * broadcast or multicast (the ask says so), a first fragment, not an
 * ICMP error; the original datagram quoted up to 576 bytes in all. */
static lrx_next_t l3_icmp4_error(struct l3_ctx *c, struct rte_mbuf *m,
				 struct lrx_meta *meta, lrx_next_t fate,
				 uint8_t type, uint8_t code, uint32_t rest)
{
	struct l3_reply *r = &c->reply;
	struct l3_icmp *ic = l3_icmp_of(c);
	const uint32_t noff = meta->network_offset;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv4_hdr *iph = (const void *)(frame + noff);
	if (meta->pkt_type != LRX_PACKET_HOST ||
	    (iph->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_OFFSET_MASK)))
		return fate;
	const uint32_t ihl = (iph->version_ihl & 0xf) * 4u;
	if (iph->next_proto_id == IPPROTO_ICMP &&
	    (noff + ihl >= m->data_len || meta->len <= ihl ||
	     l3_icmp4_is_error(frame[noff + ihl])))
		return fate;
	const uint32_t saddr_in = iph->src_addr, daddr_in = iph->dst_addr;
	if (!l3_icmp4_allowed(c, type, code, saddr_in))
		return fate;
	/* RTCF_LOCAL: from the address it was sent to; else from the one
	 * the route back to the peer would choose */
	const struct l3_route *route = l3_route_of(c);
	const uint32_t src = l3_ipv4_is_local(route, daddr_in) ? daddr_in
							       : l3_ipv4_source(route, saddr_in);
	/* icmp_pointers[].error: TOS of the error's class */
	const uint8_t tos = (iph->type_of_service & 0x1e) | 0xc0;
	const uint32_t quote = RTE_MIN(meta->len, 576u - 20 - 8);
	uint32_t l4_off;
	uint8_t *p = l3_reply_ip_frame(r, m, meta, 0, noff, quote, 28, &l4_off);
	if (!p)
		return l3_reply_no_room(r, fate);
	l3_reply_ip4_write(p, tos, (uint16_t)(28 + quote), r->ip_id++, false,
		     IPPROTO_ICMP, src, saddr_in);
	l3_icmp_error_hdr(p + 20, type, code, rest);
	l3_icmp_count_error(&ic->out[L3_FAMILY_V4],
			    type == 3	 ? L3_ICMP_ERR_UNREACH
			    : type == 11 ? L3_ICMP_ERR_TIME
					 : L3_ICMP_ERR_PARM);
	return l3_icmp_send(r, m, p + 20, l4_off, 8 + quote, NULL);
}

/* ms since midnight UTC (inet_current_timestamp); at clock=polls the
 * poll count, so that every engine writes the same. */
static uint32_t l3_timestamp_ms(const struct l3_reply *r)
{
	if (r->clock_polls)
		return (uint32_t)(r->polls % 86400000u);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint32_t)((ts.tv_sec % 86400) * 1000 + ts.tv_nsec / 1000000);
}

/* icmp_echo / icmp_timestamp → icmp_reply: from the address asked, TOS
 * kept, no DF; the echo's data follows its header, the timestamp reply
 * is 20 bytes (originate copied, receive = transmit = now). Both are
 * counted as echo replies (OutEchoReps, OutType0): Linux 6.18 counts the
 * timestamp reply so (kernel oracle test). */
static lrx_next_t l3_icmp4_reply(struct l3_ctx *c, struct rte_mbuf *m,
				 struct lrx_meta *meta, lrx_next_t fate,
				 bool timestamp)
{
	struct l3_reply *r = &c->reply;
	struct l3_icmp *ic = l3_icmp_of(c);
	const uint32_t toff = meta->transport_offset;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv4_hdr *iph =
		(const void *)(frame + meta->network_offset);
	const uint32_t l4_len =
		meta->len - (toff - meta->network_offset);
	const uint8_t type = timestamp ? 14 /* ICMP_TIMESTAMPREPLY */
				       : RTE_IP_ICMP_ECHO_REPLY;
	if (!l3_icmp4_allowed(c, type, 0, iph->src_addr))
		return fate;
	const uint32_t saddr_in = iph->src_addr, daddr_in = iph->dst_addr;
	const uint8_t tos = iph->type_of_service;
	uint8_t head[8], origin[4] = {0};
	memcpy(head, frame + toff, 8);
	if (timestamp)
		memcpy(origin, frame + toff + 8, 4);
	const uint32_t icmp_len = timestamp ? 20 : l4_len;
	uint32_t l4_off;
	uint8_t *p = timestamp
		? l3_reply_ip_frame(r, m, meta, 0, toff, 0, 20 + icmp_len, &l4_off)
		: l3_reply_ip_frame(r, m, meta, 0, toff + 8, l4_len - 8, 28, &l4_off);
	if (!p)
		return l3_reply_no_room(r, fate);
	l3_reply_ip4_write(p, tos, (uint16_t)(20 + icmp_len), r->ip_id++, false,
		     IPPROTO_ICMP, daddr_in, saddr_in);
	uint8_t *icmp = p + 20;
	memcpy(icmp, head, 8);
	icmp[0] = type; /* the request's code stays (icmp_echo) */
	if (timestamp) {
		icmp[1] = 0;
		const rte_be32_t now = rte_cpu_to_be_32(l3_timestamp_ms(r));
		memcpy(icmp + 8, origin, 4);
		memcpy(icmp + 12, &now, 4);
		memcpy(icmp + 16, &now, 4);
	}
	struct l3_icmp_out *o = &ic->out[L3_FAMILY_V4];
	o->msgs++;
	o->echo_reps++;
	o->type_echo_rep++;
	return l3_icmp_send(r, m, icmp, l4_off, icmp_len, NULL);
}

/* is_ineligible: the packet is (or is too short to tell whether it is)
 * an ICMPv6 error, after the extension headers (ipv6_skip_exthdr). */
static bool l3_icmp6_ineligible(const uint8_t *frame, uint32_t noff,
				uint32_t end)
{
	uint8_t nh = frame[noff + 6];
	const uint32_t o = l3_icmp6_skip_exthdr(frame, noff + 40, end, &nh);
	/* a header that does not fit (ipv6_skip_exthdr fails), a later
	 * fragment: eligible */
	if (o == UINT32_MAX || nh != IPPROTO_ICMPV6)
		return false;
	if (o >= end)
		return true; /* no type to read */
	return frame[o] < 128; /* not ICMPV6_INFOMSG_MASK: an error */
}

/* icmp6_send: the original quoted up to the IPv6 minimum MTU (1280). A
 * multicast destination or a packet not for this host gets nothing but
 * a parameter problem about an unknown option whose type says "send
 * even to multicast" (opt_unrec), from an address of this host; the
 * source must name one node (not :: or multicast). */
static lrx_next_t l3_icmp6_error(struct l3_ctx *c, struct rte_mbuf *m,
				 struct lrx_meta *meta, lrx_next_t fate,
				 uint8_t type, uint8_t code, uint32_t pointer)
{
	struct l3_reply *r = &c->reply;
	struct l3_icmp *ic = l3_icmp_of(c);
	const uint32_t noff = meta->network_offset;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *src_in = frame + noff + 8, *dst_in = frame + noff + 24;
	uint8_t src[16], dst[16];
	memcpy(dst, src_in, 16);
	static const uint8_t any[16];
	const bool mcast = dst_in[0] == 0xff;
	if (mcast || meta->pkt_type != LRX_PACKET_HOST) {
		if (!(type == 4 && code == L3_PARAMPROB6_OPTION &&
		      noff + pointer < m->data_len &&
		      (frame[noff + pointer] & 0xc0) == 0x80))
			return fate;
		if (!l3_ipv6_source(l3_ipv6_of(c), src_in, src))
			return l3_reply_no_room(r, fate);
	} else {
		memcpy(src, dst_in, 16);
	}
	if (memcmp(src_in, any, 16) == 0 || src_in[0] == 0xff ||
	    l3_icmp6_ineligible(frame, noff,
				RTE_MIN(m->data_len, noff + meta->len)))
		return fate;
	if (!l3_icmp6_allowed(c, type, src_in))
		return fate;
	const uint32_t quote = RTE_MIN(meta->len, 1280u - 40 - 8);
	uint32_t l4_off;
	uint8_t *p = l3_reply_ip_frame(r, m, meta, 1, noff, quote, 48, &l4_off);
	if (!p)
		return l3_reply_no_room(r, fate);
	l3_reply_ip6_write(p, 0, (uint16_t)(8 + quote), IPPROTO_ICMPV6, src, dst);
	l3_icmp_error_hdr(p + 40, type, code, pointer);
	l3_icmp_count_error(&ic->out[L3_FAMILY_V6],
			    type == 1	? L3_ICMP_ERR_UNREACH
			    : type == 3 ? L3_ICMP_ERR_TIME
					: L3_ICMP_ERR_PARM);
	return l3_icmp_send(r, m, p + 40, l4_off, 8 + quote, p);
}

/* icmpv6_echo_reply: from the address asked, or for a group from this
 * host's address (icmpv6_echo_ignore_multicast is 0); traffic class
 * kept, the request's code and data. */
static lrx_next_t l3_icmp6_echo(struct l3_ctx *c, struct rte_mbuf *m,
				struct lrx_meta *meta, lrx_next_t fate)
{
	struct l3_reply *r = &c->reply;
	struct l3_icmp *ic = l3_icmp_of(c);
	const uint32_t noff = meta->network_offset, toff = meta->transport_offset;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *src_in = frame + noff + 8, *dst_in = frame + noff + 24;
	uint8_t src[16], dst[16], head[8];
	memcpy(dst, src_in, 16);
	if (dst_in[0] == 0xff) {
		if (!l3_ipv6_source(l3_ipv6_of(c), src_in, src))
			return l3_reply_no_room(r, fate);
	} else {
		memcpy(src, dst_in, 16);
	}
	if (!l3_icmp6_allowed(c, 129, src_in))
		return fate;
	const uint8_t tclass = l3_reply_ip6_tclass(frame + noff);
	memcpy(head, frame + toff, 8);
	const uint32_t l4_len = meta->len - (toff - noff);
	uint32_t l4_off;
	uint8_t *p = l3_reply_ip_frame(r, m, meta, 1, toff + 8, l4_len - 8, 48, &l4_off);
	if (!p)
		return l3_reply_no_room(r, fate);
	l3_reply_ip6_write(p, tclass, (uint16_t)l4_len, IPPROTO_ICMPV6, src, dst);
	uint8_t *icmp = p + 40;
	memcpy(icmp, head, 8);
	icmp[0] = 129;
	struct l3_icmp_out *o = &ic->out[L3_FAMILY_V6];
	o->msgs++;
	o->echo_reps++;
	o->type_echo_rep++;
	return l3_icmp_send(r, m, icmp, l4_off, l4_len, p);
}

lrx_next_t l3_icmp_answer(struct l3_ctx *c, struct rte_mbuf *m,
			  struct lrx_meta *meta, lrx_next_t fate,
			  enum l3_reply_kind kind, uint32_t info)
{
	/* each kind's switch (icmp_echo, ...: 0 is on) */
	static const uint8_t sw[L3_REPLY_KINDS] = {
		[L3_REPLY_ECHO4] = L3_ICMP_SW_ECHO,
		[L3_REPLY_ECHO6] = L3_ICMP_SW_ECHO,
		[L3_REPLY_TIMESTAMP4] = L3_ICMP_SW_TIMESTAMP,
		[L3_REPLY_PORT_UNREACH4] = L3_ICMP_SW_UNREACH,
		[L3_REPLY_PROTO_UNREACH4] = L3_ICMP_SW_UNREACH,
		[L3_REPLY_PORT_UNREACH6] = L3_ICMP_SW_UNREACH,
		[L3_REPLY_PARAMPROB4] = L3_ICMP_SW_PARAMPROB,
		[L3_REPLY_PARAMPROB6] = L3_ICMP_SW_PARAMPROB,
	};
	if (l3_icmp_of(c)->conf.sw[sw[kind]] != 0)
		return fate;
	switch (kind) {
	case L3_REPLY_ECHO4:
	case L3_REPLY_TIMESTAMP4:
		return l3_icmp4_reply(c, m, meta, fate, kind == L3_REPLY_TIMESTAMP4);
	case L3_REPLY_PORT_UNREACH4:
	case L3_REPLY_PROTO_UNREACH4:
		return l3_icmp4_error(c, m, meta, fate, 3,
				      kind == L3_REPLY_PORT_UNREACH4 ? 3 : 2, 0);
	case L3_REPLY_PARAMPROB4:
		return l3_icmp4_error(c, m, meta, fate, 12, 0, info << 24);
	case L3_REPLY_ECHO6:
		return l3_icmp6_echo(c, m, meta, fate);
	case L3_REPLY_PORT_UNREACH6:
		return l3_icmp6_error(c, m, meta, fate, 1, 4, 0);
	case L3_REPLY_PARAMPROB6:
		return l3_icmp6_error(c, m, meta, fate, 4, (uint8_t)(info >> 13),
				      info & 0x1fff);
	default:
		return fate;
	}
}

/* ip_expire: icmp_send(head, ICMP_TIME_EXCEEDED, ICMP_EXC_FRAGTIME);
 * ip6frag_expire_frag_queue: icmpv6_send(head, ICMPV6_TIME_EXCEED,
 * ICMPV6_EXC_FRAGTIME). No switch: the kernel has none. */
lrx_next_t l3_icmp_frag_time_exceeded(struct l3_ctx *c, struct rte_mbuf *m,
				      struct lrx_meta *meta, lrx_next_t fate,
				      bool ipv6)
{
	return ipv6 ? l3_icmp6_error(c, m, meta, fate, 3, 1, 0)
		    : l3_icmp4_error(c, m, meta, fate, 11, 1, 0);
}

/* ---- the module ----------------------------------------------------------- */

static const char l3_icmp_ratemask6_valid[] =
	"none, or a list of ICMPv6 types and ranges in 0..255 (0-1,3-127)";

/* icmpv6 ratemask: a list of types and ranges, as the sysctl
 * ("0-1,3-127"). */
static int l3_icmp_parse_ratemask6(const char *text, void *out)
{
	uint64_t *mask = out;
	memset(mask, 0, 4 * sizeof(uint64_t));
	if (strcmp(text, "none") == 0)
		return 0;
	char item[16];
	int more;
	while ((more = lrx_value_list_next(&text, item, sizeof(item))) > 0) {
		uint64_t lo, hi;
		char *dash = strchr(item, '-');
		if (dash)
			*dash++ = '\0';
		if (lrx_value_uint(item, 0, 255, &lo) ||
		    lrx_value_uint(dash ? dash : item, lo, 255, &hi))
			return -EINVAL;
		for (uint64_t t = lo; t <= hi; t++)
			mask[t >> 6] |= 1ull << (t & 63);
	}
	return more;
}

static int l3_icmp_init(struct l3_demux *d, const struct l3_demux_conf *conf,
			const struct lrx_stage_init *init)
{
	(void)init;
	d->icmp.conf = conf->icmp;
	/* the replies' clock (reply.c): also TCP's SYN-ACK timestamps */
	d->core.reply.clock_polls = conf->icmp.clock == 1;
	d->core.l4_table[L3_FAMILY_V4][IPPROTO_ICMP] = &l3_icmp_handler;
	d->core.l4_table[L3_FAMILY_V6][IPPROTO_ICMPV6] = &l3_icmp_handler;
	return 0;
}

static const char *const l3_echoes[] = {"reply", "deliver", NULL};
static const char *const l3_sends[] = {"send", "none", NULL};
static const char *const l3_clocks[] = {"tsc", "polls", NULL};

static const struct lrx_value_key l3_icmp_keys[] = {
	/* each kind with its switch; the messages leave by the ingress port */
	L3_KEY(CHOICE, icmp.sw[L3_ICMP_SW_ECHO], "icmp_echo", "reply", l3_echoes,
	       "ICMP and ICMPv6 echo requests answered (icmp_echo, "
	       "icmpv6_echo_reply) or only delivered"),
	L3_KEY(CHOICE, icmp.sw[L3_ICMP_SW_TIMESTAMP], "icmp_timestamp", "reply", l3_echoes,
	       "ICMP timestamp requests (icmp_timestamp)"),
	L3_KEY(CHOICE, icmp.sw[L3_ICMP_SW_UNREACH], "icmp_unreach", "send", l3_sends,
	       "ICMP port unreachable for UDP without a socket (IPv4 and IPv6), "
	       "protocol unreachable for an unknown IPv4 protocol"),
	L3_KEY(CHOICE, icmp.sw[L3_ICMP_SW_PARAMPROB], "icmp_param_prob", "send", l3_sends,
	       "ICMP parameter problems for bad IPv4 options and IPv6 headers, "
	       "options or next headers"),
	L3_KEY(UINT, icmp.ratelimit4_ms, "icmp_ratelimit", "1000", 0, 3600000,
	       "ms between ICMP messages of icmp_ratemask's types to one peer "
	       "(net.ipv4.icmp_ratelimit; bursts of 6)"),
	L3_KEY(UINT, icmp.ratemask4, "icmp_ratemask", "6168", 0, UINT32_MAX,
	       "ICMP types rate limited, a bit each (net.ipv4.icmp_ratemask: "
	       "destination unreachable, source quench, time exceeded, parameter "
	       "problem)"),
	L3_KEY(UINT, icmp.msgs_per_sec, "icmp_msgs_per_sec", "1000", 0, INT32_MAX,
	       "limited ICMP(v6) messages per second, all peers together "
	       "(net.ipv4.icmp_msgs_per_sec)"),
	L3_KEY(UINT, icmp.msgs_burst, "icmp_msgs_burst", "50", 0, INT32_MAX,
	       "their burst (net.ipv4.icmp_msgs_burst)"),
	L3_KEY(UINT, icmp.ratelimit6_ms, "icmpv6_ratelimit", "100", 0, 3600000,
	       "ms between limited ICMPv6 messages to one peer, shifted right by "
	       "(128 - prefix length of its route) / 32 (net.ipv6.icmp.ratelimit)"),
	L3_KEY(CUSTOM, icmp.ratemask6, "icmpv6_ratemask", "0-1,3-127", l3_icmp_parse_ratemask6,
	       l3_icmp_ratemask6_valid, "ICMPv6 types rate limited (net.ipv6.icmp.ratemask)"),
	L3_KEY(CHOICE, icmp.clock, "icmp_clock", "tsc", l3_clocks,
	       "what the ICMP rate limits count (polls: one ms per end of poll, the "
	       "same for every engine)"),
	{.name = NULL},
};

static const struct lrx_stage_counter l3_icmp_counters[] = {
	L3_COUNTER("IcmpInMsgs", icmp.mib[0].in_msgs),
	L3_COUNTER("IcmpInErrors", icmp.mib[0].in_errors),
	L3_COUNTER("IcmpInCsumErrors", icmp.mib[0].in_csum_errors),
	L3_COUNTER("IcmpInEchos", icmp.mib[0].in_echos),
	L3_COUNTER("IcmpOutMsgs", icmp.out[0].msgs),
	L3_COUNTER("IcmpOutEchoReps", icmp.out[0].echo_reps),
	L3_COUNTER("IcmpOutDestUnreachs", icmp.out[0].dest_unreachs),
	L3_COUNTER("IcmpOutParmProbs", icmp.out[0].parm_probs),
	L3_COUNTER("IcmpOutRateLimitGlobal", icmp.icmp_out_ratelimit_global),
	L3_COUNTER("IcmpOutRateLimitHost", icmp.out[0].ratelimit_host),
	L3_COUNTER("IcmpMsgOutType0", icmp.out[0].type_echo_rep),
	L3_COUNTER("IcmpMsgOutType3", icmp.out[0].type_unreach),
	L3_COUNTER("IcmpMsgOutType12", icmp.out[0].type_parm),
	L3_COUNTER("IcmpOutTimeExcds", icmp.out[0].time_excds),
	L3_COUNTER("IcmpMsgOutType11", icmp.out[0].type_time_exc),
	L3_COUNTER("Icmp6InMsgs", icmp.mib[1].in_msgs),
	L3_COUNTER("Icmp6InErrors", icmp.mib[1].in_errors),
	L3_COUNTER("Icmp6InCsumErrors", icmp.mib[1].in_csum_errors),
	L3_COUNTER("Icmp6InEchos", icmp.mib[1].in_echos),
	L3_COUNTER("Icmp6OutMsgs", icmp.out[1].msgs),
	L3_COUNTER("Icmp6OutEchoReplies", icmp.out[1].echo_reps),
	L3_COUNTER("Icmp6OutDestUnreachs", icmp.out[1].dest_unreachs),
	L3_COUNTER("Icmp6OutParmProblems", icmp.out[1].parm_probs),
	L3_COUNTER("Icmp6OutRateLimitHost", icmp.out[1].ratelimit_host),
	L3_COUNTER("Icmp6OutType1", icmp.out[1].type_unreach),
	L3_COUNTER("Icmp6OutType4", icmp.out[1].type_parm),
	L3_COUNTER("Icmp6OutTimeExcds", icmp.out[1].time_excds),
	L3_COUNTER("Icmp6OutType3", icmp.out[1].type_time_exc),
	L3_COUNTER("Icmp6OutType129", icmp.out[1].type_echo_rep),
	{.name = NULL},
};

L3_MODULE(icmp);
