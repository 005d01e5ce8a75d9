/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replies of l3-demux (reply.h): built in the asking packet's own
 * buffer, with the header fields, rate limits and Out counters of Linux
 * 6.18 (net/ipv4/icmp.c, net/ipv6/icmp.c, net/ipv4/tcp_ipv4.c,
 * net/ipv6/tcp_ipv6.c, net/ipv4/tcp_output.c, net/ipv4/inetpeer.c).
 *
 * What differs from the kernel, on purpose: IP options are not echoed
 * into replies (__ip_options_echo); an IPv6 reply's flow label is 0 (the
 * kernel's auto flow label hashes a secret); ICMP IDs count up (the
 * kernel hashes a secret, ip_select_ident); icmp_global_consume takes 1
 * credit per message (the kernel takes 0, 1 or 2 at random); a SYN-ACK's
 * initial sequence number and timestamp offset come from a hash of the
 * addresses and ports (the kernel's from a secret).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <rte_arp.h>
#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_hash_crc.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "ipv6.h"
#include "reasm.h"
#include "reply.h"
#include "value.h"

#define L3_TCP_FIN 0x01
#define L3_TCP_SYN 0x02
#define L3_TCP_RST 0x04
#define L3_TCP_ACK 0x10
#define L3_TCP_ECE 0x40
#define L3_TCP_CWR 0x80

/* XRLIM_BURST_FACTOR (net/ipv4/inetpeer.c) */
#define L3_XRLIM_BURST_FACTOR 6

/* ---- time: milliseconds, the TSC's or one per poll -------------------- */

static uint64_t l3_reply_now(const struct l3_reply *r)
{
	return r->clock_polls ? r->polls
			      : (rte_rdtsc() - r->tsc_start) / r->tsc_per_ms;
}

/* rte_hash_crc of up to 16 bytes that need not be aligned (addresses in
 * a frame): it reads 8 bytes at a time. */
static uint32_t l3_hash_addr(const void *p, unsigned len, uint32_t init)
{
	uint64_t words[2] = {0, 0};
	memcpy(words, p, len);
	return rte_hash_crc(words, len, init);
}

/* ---- rate limits --------------------------------------------------------- */

/* icmp_global_allow: a token bucket of icmp_msgs_per_sec, at most
 * icmp_msgs_burst, refilled at most every HZ / 50 (20 ms). */
static bool l3_global_allow(struct l3_reply *r, uint64_t now)
{
	if (r->global_credit > 0)
		return true;
	/* a namespace's first message finds the stamp a second old or
	 * more (jiffies start far from 0) */
	const uint64_t delta =
		r->global_started ? RTE_MIN(now - r->global_stamp, (uint64_t)1000) : 1000;
	if (delta < 20)
		return false;
	const int64_t incr = (int64_t)((uint64_t)r->msgs_per_sec * delta / 1000);
	if (!incr)
		return false;
	r->global_started = true;
	r->global_stamp = now;
	r->global_credit = RTE_MIN(r->global_credit + incr, (int64_t)r->msgs_burst);
	return true;
}

/* inet_getpeer: the peer's bucket, made on first use with the tokens a
 * peer last seen 60 s ago has (inet_getpeer sets rate_last to jiffies -
 * 60 * HZ); a set of L3_PEER_WAYS replaces its least recently used. */
static struct l3_peer *l3_peer_get(struct l3_reply *r, int fam,
				   const uint8_t *addr, uint64_t now,
				   uint32_t timeout)
{
	const unsigned len = fam ? 16 : 4;
	const uint32_t hash = l3_hash_addr(addr, len, 0x5eed);
	struct l3_peer *set =
		&r->peers[fam][(hash % (L3_PEERS / L3_PEER_WAYS)) * L3_PEER_WAYS];
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
static bool l3_peer_allow(struct l3_reply *r, int fam, const uint8_t *addr,
			  uint32_t timeout, uint64_t now)
{
	struct l3_peer *p = l3_peer_get(r, fam, addr, now, timeout);
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

/* icmpv4_global_allow + icmpv4_xrlim_allow for a message of type/code
 * to peer (network order). */
static bool l3_icmp4_allowed(struct l3_reply *r, uint8_t type, uint8_t code,
			     uint32_t peer)
{
	/* icmpv4_mask_allow: types past NR_ICMP_TYPES, fragmentation
	 * needed and those outside icmp_ratemask go unlimited */
	if (type > 18 || (type == 3 && code == 4) ||
	    !((1u << type) & r->ratemask4))
		return true;
	const uint64_t now = l3_reply_now(r);
	if (!l3_global_allow(r, now)) {
		r->icmp_out_ratelimit_global++;
		return false;
	}
	if (!l3_peer_allow(r, 0, (const uint8_t *)&peer, r->ratelimit4_ms, now)) {
		r->icmp_out_ratelimit_host++;
		return false;
	}
	r->global_credit--; /* icmp_global_consume */
	return true;
}

/* The prefix length of the local IPv6 prefix holding addr (its on-link
 * route), else 0 (a default route). */
static unsigned l3_route6_plen(const struct l3_reply *r, const uint8_t *addr)
{
	for (unsigned i = 0; i < r->addrs.n6; i++) {
		const unsigned plen = r->addrs.plen6[i];
		const uint8_t *a = r->addrs.local6[i];
		unsigned bits = plen;
		bool same = true;
		for (unsigned b = 0; b < 16 && bits && same; b++) {
			const unsigned take = bits < 8 ? bits : 8;
			const uint8_t mask = (uint8_t)(0xff00 >> take);
			same = ((a[b] ^ addr[b]) & mask) == 0;
			bits -= take;
		}
		if (same)
			return plen;
	}
	return 0;
}

/* icmpv6_global_allow (its refusal counted in the IPv4 MIB, as the
 * kernel does) + icmpv6_xrlim_allow, whose timeout shrinks for wider
 * routes to the peer: tmo >>= (128 - plen) >> 5. */
static bool l3_icmp6_allowed(struct l3_reply *r, uint8_t type,
			     const uint8_t *peer)
{
	if (!((r->ratemask6[type >> 6] >> (type & 63)) & 1))
		return true;
	const uint64_t now = l3_reply_now(r);
	if (!l3_global_allow(r, now)) {
		r->icmp_out_ratelimit_global++;
		return false;
	}
	uint32_t tmo = r->ratelimit6_ms;
	const unsigned plen = l3_route6_plen(r, peer);
	if (plen < 128)
		tmo >>= (128 - plen) >> 5;
	if (!l3_peer_allow(r, 1, peer, tmo, now)) {
		r->icmp6_out_ratelimit_host++;
		return false;
	}
	r->global_credit--;
	return true;
}

/* ---- source addresses ------------------------------------------------------ */

static bool l3_in_prefix4(uint32_t a_be, uint32_t b_be, unsigned plen)
{
	const uint32_t mask = plen ? UINT32_MAX << (32 - plen) : 0;
	return ((rte_be_to_cpu_32(a_be) ^ rte_be_to_cpu_32(b_be)) & mask) == 0;
}

/* Is daddr one of this host's addresses (RTCF_LOCAL)? */
static bool l3_reply_local4(const struct l3_reply *r, uint32_t daddr)
{
	if (r->addrs.n4 == 0)
		return true;
	for (unsigned i = 0; i < r->addrs.n4; i++)
		if (r->addrs.local4[i] == daddr)
			return true;
	return false;
}

/* The source of an error about a packet not for a local address: the
 * address of the subnet the peer is on (icmp_route_lookup's choice),
 * else the first. */
static uint32_t l3_source4(const struct l3_reply *r, uint32_t peer)
{
	for (unsigned i = 0; i < r->addrs.n4; i++)
		if (r->addrs.plen4[i] < 32 &&
		    l3_in_prefix4(r->addrs.local4[i], peer, r->addrs.plen4[i]))
			return r->addrs.local4[i];
	return r->addrs.local4[0];
}

/* ipv6_dev_get_saddr for a peer: the local address on its prefix, else
 * the first; false when local_ipv6 is any (no address to choose). */
static bool l3_source6(const struct l3_reply *r, const uint8_t *peer,
		       uint8_t *out)
{
	if (r->addrs.n6 == 0)
		return false;
	unsigned pick = 0;
	const unsigned plen = l3_route6_plen(r, peer);
	for (unsigned i = 0; i < r->addrs.n6 && plen; i++)
		if (r->addrs.plen6[i] == plen) {
			pick = i;
			break;
		}
	memcpy(out, r->addrs.local6[pick], 16);
	return true;
}

/* ---- the reply frame ------------------------------------------------------- */

/* Ethernet: to the asker, from this host (arp_mac: the port's MAC or a
 * given one), tagged with the VLAN device's VID when it came on one. */
struct l3_reply_l2 {
	struct rte_ether_addr dst, src;
	uint16_t vid;
};

static void l3_reply_l2_of(const struct l3_reply *r, const struct rte_mbuf *m,
			   const struct lrx_meta *meta, struct l3_reply_l2 *l2)
{
	const struct rte_ether_hdr *eth =
		rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	l2->dst = eth->src_addr;
	l2->src = r->mac;
	if (r->mac_from_port && rte_eth_macaddr_get(m->port, &l2->src) != 0)
		l2->src = r->mac;
	l2->vid = meta->vlan_vid;
}

static uint32_t l3_reply_l2_len(const struct l3_reply_l2 *l2)
{
	return l2->vid ? RTE_ETHER_HDR_LEN + 4 : RTE_ETHER_HDR_LEN;
}

static uint8_t *l3_reply_l2_write(uint8_t *p, const struct l3_reply_l2 *l2,
				  uint16_t ethertype)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
	eth->dst_addr = l2->dst;
	eth->src_addr = l2->src;
	p += 2 * RTE_ETHER_ADDR_LEN;
	if (l2->vid) {
		const rte_be16_t tag[2] = {rte_cpu_to_be_16(RTE_ETHER_TYPE_VLAN),
					   rte_cpu_to_be_16(l2->vid)};
		memcpy(p, tag, sizeof(tag));
		p += sizeof(tag);
	}
	const rte_be16_t type = rte_cpu_to_be_16(ethertype);
	memcpy(p, &type, 2);
	return p + 2;
}

/* The packet becomes hdr_len new header bytes followed by its bytes
 * [keep_off, keep_off + keep_len): the tail is cut, the head moved (or
 * grown into the headroom). Returns where the headers go, or NULL when
 * keep_off is past the first segment or the headroom is too small. */
static uint8_t *l3_reply_reshape(struct rte_mbuf *m, uint32_t keep_off,
				 uint32_t keep_len, uint32_t hdr_len)
{
	if (keep_off > m->data_len || keep_off + keep_len > m->pkt_len)
		return NULL;
	if (keep_off < hdr_len &&
	    rte_pktmbuf_headroom(m) < hdr_len - keep_off)
		return NULL;
	l3_trim_to(m, keep_off + keep_len);
	if (keep_off >= hdr_len)
		rte_pktmbuf_adj(m, (uint16_t)(keep_off - hdr_len));
	else
		rte_pktmbuf_prepend(m, (uint16_t)(hdr_len - keep_off));
	/* what the NIC said about the request means nothing for it */
	m->ol_flags = 0;
	m->packet_type = 0;
	m->vlan_tci = 0;
	return rte_pktmbuf_mtod(m, uint8_t *);
}

static void l3_ip4_write(uint8_t *p, uint8_t tos, uint16_t total, uint16_t id,
			 bool df, uint8_t proto, uint32_t src, uint32_t dst)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)p;
	ip->version_ihl = 0x45;
	ip->type_of_service = tos;
	ip->total_length = rte_cpu_to_be_16(total);
	ip->packet_id = rte_cpu_to_be_16(id);
	ip->fragment_offset = df ? rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG) : 0;
	ip->time_to_live = 64; /* sysctl_ip_default_ttl */
	ip->next_proto_id = proto;
	ip->src_addr = src;
	ip->dst_addr = dst;
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

/* An IPv6 header's traffic class (the header need not be aligned). */
static uint8_t l3_ip6_tclass(const uint8_t *ip6)
{
	return (uint8_t)((ip6[0] & 0x0f) << 4 | ip6[1] >> 4);
}

static void l3_ip6_write(uint8_t *p, uint8_t tclass, uint16_t plen,
			 uint8_t proto, const uint8_t *src, const uint8_t *dst)
{
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)p;
	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)tclass << 20);
	ip6->payload_len = rte_cpu_to_be_16(plen);
	ip6->proto = proto;
	ip6->hop_limits = 64; /* ip6_sk_dst_hoplimit: the default hop limit */
	memcpy(ip6->src_addr, src, 16);
	memcpy(ip6->dst_addr, dst, 16);
}

/* The L4 checksum of the reply's [l4_off, +len), with the IPv6 pseudo
 * header when ip6 is given (ICMPv6, TCP over IPv6) or the IPv4 one when
 * ip4 is (TCP); ICMPv4 has none. */
static uint16_t l3_reply_csum(const struct rte_mbuf *m, uint32_t l4_off,
			      uint32_t len, uint8_t proto, const uint8_t *ip4,
			      const uint8_t *ip6)
{
	uint16_t raw = 0;
	rte_raw_cksum_mbuf(m, l4_off, len, &raw);
	uint32_t sum = raw;
	if (ip4 || ip6) {
		sum += ip6 ? rte_raw_cksum(ip6 + 8, 32) : rte_raw_cksum(ip4 + 12, 8);
		sum += rte_cpu_to_be_16((uint16_t)proto);
		sum += rte_cpu_to_be_16((uint16_t)len);
	}
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	const uint16_t csum = (uint16_t)~sum;
	/* a UDP-style zero is not needed: ICMP and TCP keep 0 */
	return csum;
}

static lrx_next_t l3_reply_out(struct l3_reply *r, struct rte_mbuf *m, int fam)
{
	r->ip_out_requests[fam]++;
	return lrx_next_tx(m->port);
}

static lrx_next_t l3_reply_no_room(struct l3_reply *r, lrx_next_t fate)
{
	r->reply_no_room++;
	return fate;
}

/* ---- ICMP ------------------------------------------------------------------ */

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
static lrx_next_t l3_icmp4_error(struct l3_reply *r, struct rte_mbuf *m,
				 struct lrx_meta *meta, lrx_next_t fate,
				 uint8_t type, uint8_t code, uint32_t rest)
{
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
	if (!l3_icmp4_allowed(r, type, code, saddr_in))
		return fate;
	/* RTCF_LOCAL: from the address it was sent to; else from the one
	 * the route back to the peer would choose */
	const uint32_t src = l3_reply_local4(r, daddr_in) ? daddr_in
							  : l3_source4(r, saddr_in);
	/* icmp_pointers[].error: TOS of the error's class */
	const uint8_t tos = (iph->type_of_service & 0x1e) | 0xc0;
	struct l3_reply_l2 l2;
	l3_reply_l2_of(r, m, meta, &l2);
	const uint32_t quote = RTE_MIN(meta->len, 576u - 20 - 8);
	const uint32_t l2len = l3_reply_l2_len(&l2);
	uint8_t *p = l3_reply_reshape(m, noff, quote, l2len + 28);
	if (!p)
		return l3_reply_no_room(r, fate);
	p = l3_reply_l2_write(p, &l2, RTE_ETHER_TYPE_IPV4);
	l3_ip4_write(p, tos, (uint16_t)(28 + quote), r->ip_id++, false,
		     IPPROTO_ICMP, src, saddr_in);
	uint8_t *icmp = p + 20;
	icmp[0] = type;
	icmp[1] = code;
	icmp[2] = icmp[3] = 0;
	const rte_be32_t be = rte_cpu_to_be_32(rest);
	memcpy(icmp + 4, &be, 4);
	const uint16_t csum = l3_reply_csum(m, l2len + 20, 8 + quote, 0, NULL, NULL);
	memcpy(icmp + 2, &csum, 2);
	r->icmp_out_msgs++;
	if (type == 3) {
		r->icmp_out_dest_unreachs++;
		r->icmp_out_type3++;
	} else {
		r->icmp_out_parm_probs++;
		r->icmp_out_type12++;
	}
	return l3_reply_out(r, m, 0);
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
static lrx_next_t l3_icmp4_reply(struct l3_reply *r, struct rte_mbuf *m,
				 struct lrx_meta *meta, lrx_next_t fate,
				 bool timestamp)
{
	const uint32_t toff = meta->transport_offset;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv4_hdr *iph =
		(const void *)(frame + meta->network_offset);
	const uint32_t l4_len =
		meta->len - (toff - meta->network_offset);
	const uint8_t type = timestamp ? 14 /* ICMP_TIMESTAMPREPLY */
				       : RTE_IP_ICMP_ECHO_REPLY;
	if (!l3_icmp4_allowed(r, type, 0, iph->src_addr))
		return fate;
	const uint32_t saddr_in = iph->src_addr, daddr_in = iph->dst_addr;
	const uint8_t tos = iph->type_of_service;
	uint8_t head[8], origin[4] = {0};
	memcpy(head, frame + toff, 8);
	if (timestamp)
		memcpy(origin, frame + toff + 8, 4);
	struct l3_reply_l2 l2;
	l3_reply_l2_of(r, m, meta, &l2);
	const uint32_t l2len = l3_reply_l2_len(&l2);
	const uint32_t icmp_len = timestamp ? 20 : l4_len;
	uint8_t *p = timestamp
		? l3_reply_reshape(m, toff, 0, l2len + 20 + icmp_len)
		: l3_reply_reshape(m, toff + 8, l4_len - 8, l2len + 28);
	if (!p)
		return l3_reply_no_room(r, fate);
	p = l3_reply_l2_write(p, &l2, RTE_ETHER_TYPE_IPV4);
	l3_ip4_write(p, tos, (uint16_t)(20 + icmp_len), r->ip_id++, false,
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
	icmp[2] = icmp[3] = 0;
	const uint16_t csum = l3_reply_csum(m, l2len + 20, icmp_len, 0, NULL, NULL);
	memcpy(icmp + 2, &csum, 2);
	r->icmp_out_msgs++;
	r->icmp_out_echo_reps++;
	r->icmp_out_type0++;
	return l3_reply_out(r, m, 0);
}

/* is_ineligible: the packet is (or is too short to tell whether it is)
 * an ICMPv6 error, after the extension headers (ipv6_skip_exthdr). */
static bool l3_icmp6_ineligible(const uint8_t *frame, uint32_t noff,
				uint32_t end)
{
	uint8_t nh = frame[noff + 6];
	uint32_t o = noff + 40;
	for (;;) {
		if (nh != 0 && nh != 43 && nh != 60 && nh != 44 && nh != 51)
			break;
		if (o + 8 > end)
			return false; /* ipv6_skip_exthdr fails: eligible */
		const uint8_t *h = frame + o;
		uint32_t len;
		if (nh == 44) {
			/* a later fragment: no upper header to look at */
			if ((h[2] << 8 | h[3]) >> 3 != 0)
				return false;
			len = 8;
		} else {
			len = nh == 51 ? (h[1] + 2u) * 4 : (h[1] + 1u) * 8;
		}
		nh = h[0];
		o += len;
	}
	if (nh != IPPROTO_ICMPV6)
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
static lrx_next_t l3_icmp6_error(struct l3_reply *r, struct rte_mbuf *m,
				 struct lrx_meta *meta, lrx_next_t fate,
				 uint8_t type, uint8_t code, uint32_t pointer)
{
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
		if (!l3_source6(r, src_in, src))
			return l3_reply_no_room(r, fate);
	} else {
		memcpy(src, dst_in, 16);
	}
	if (memcmp(src_in, any, 16) == 0 || src_in[0] == 0xff ||
	    l3_icmp6_ineligible(frame, noff,
				RTE_MIN(m->data_len, noff + meta->len)))
		return fate;
	if (!l3_icmp6_allowed(r, type, src_in))
		return fate;
	struct l3_reply_l2 l2;
	l3_reply_l2_of(r, m, meta, &l2);
	const uint32_t quote = RTE_MIN(meta->len, 1280u - 40 - 8);
	const uint32_t l2len = l3_reply_l2_len(&l2);
	uint8_t *p = l3_reply_reshape(m, noff, quote, l2len + 48);
	if (!p)
		return l3_reply_no_room(r, fate);
	p = l3_reply_l2_write(p, &l2, RTE_ETHER_TYPE_IPV6);
	l3_ip6_write(p, 0, (uint16_t)(8 + quote), IPPROTO_ICMPV6, src, dst);
	uint8_t *icmp = p + 40;
	icmp[0] = type;
	icmp[1] = code;
	icmp[2] = icmp[3] = 0;
	const rte_be32_t be = rte_cpu_to_be_32(pointer);
	memcpy(icmp + 4, &be, 4);
	const uint16_t csum = l3_reply_csum(m, l2len + 40, 8 + quote,
					    IPPROTO_ICMPV6, NULL, p);
	memcpy(icmp + 2, &csum, 2);
	r->icmp6_out_msgs++;
	if (type == 1) {
		r->icmp6_out_dest_unreachs++;
		r->icmp6_out_type1++;
	} else {
		r->icmp6_out_parm_problems++;
		r->icmp6_out_type4++;
	}
	return l3_reply_out(r, m, 1);
}

/* icmpv6_echo_reply: from the address asked, or for a group from this
 * host's address (icmpv6_echo_ignore_multicast is 0); traffic class
 * kept, the request's code and data. */
static lrx_next_t l3_icmp6_echo(struct l3_reply *r, struct rte_mbuf *m,
				struct lrx_meta *meta, lrx_next_t fate)
{
	const uint32_t noff = meta->network_offset, toff = meta->transport_offset;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *src_in = frame + noff + 8, *dst_in = frame + noff + 24;
	uint8_t src[16], dst[16], head[8];
	memcpy(dst, src_in, 16);
	if (dst_in[0] == 0xff) {
		if (!l3_source6(r, src_in, src))
			return l3_reply_no_room(r, fate);
	} else {
		memcpy(src, dst_in, 16);
	}
	if (!l3_icmp6_allowed(r, 129, src_in))
		return fate;
	const uint8_t tclass = l3_ip6_tclass(frame + noff);
	memcpy(head, frame + toff, 8);
	const uint32_t l4_len = meta->len - (toff - noff);
	struct l3_reply_l2 l2;
	l3_reply_l2_of(r, m, meta, &l2);
	const uint32_t l2len = l3_reply_l2_len(&l2);
	uint8_t *p = l3_reply_reshape(m, toff + 8, l4_len - 8, l2len + 48);
	if (!p)
		return l3_reply_no_room(r, fate);
	p = l3_reply_l2_write(p, &l2, RTE_ETHER_TYPE_IPV6);
	l3_ip6_write(p, tclass, (uint16_t)l4_len, IPPROTO_ICMPV6, src, dst);
	uint8_t *icmp = p + 40;
	memcpy(icmp, head, 8);
	icmp[0] = 129;
	icmp[2] = icmp[3] = 0;
	const uint16_t csum = l3_reply_csum(m, l2len + 40, l4_len, IPPROTO_ICMPV6,
					    NULL, p);
	memcpy(icmp + 2, &csum, 2);
	r->icmp6_out_msgs++;
	r->icmp6_out_echo_replies++;
	r->icmp6_out_type129++;
	return l3_reply_out(r, m, 1);
}

/* ---- TCP -------------------------------------------------------------------- */

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
		s->tos = l3_ip6_tclass(l3);
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
static lrx_next_t l3_tcp_reply_write(struct l3_reply *r, struct rte_mbuf *m,
				     struct lrx_meta *meta, lrx_next_t fate,
				     int fam, const struct l3_tcp_seg *s,
				     uint32_t seq, uint32_t ack, uint8_t flags,
				     uint16_t window, const uint8_t *opts,
				     uint32_t opts_len, uint8_t tos)
{
	struct l3_reply_l2 l2;
	l3_reply_l2_of(r, m, meta, &l2);
	const uint32_t l2len = l3_reply_l2_len(&l2);
	const uint32_t ip_len = fam ? 40 : 20;
	const uint32_t tcp_len = 20 + opts_len;
	/* the segment's own header and data room hold the reply; a SYN
	 * without options is shorter than a SYN-ACK with MSS: grow into
	 * the tailroom */
	uint8_t *p = l3_reply_reshape(m, meta->transport_offset, 0,
				      l2len + ip_len + tcp_len);
	if (!p)
		return l3_reply_no_room(r, fate);
	p = l3_reply_l2_write(p, &l2, fam ? RTE_ETHER_TYPE_IPV6 : RTE_ETHER_TYPE_IPV4);
	if (fam)
		l3_ip6_write(p, tos, (uint16_t)tcp_len, IPPROTO_TCP, s->dst, s->src);
	else {
		uint32_t d, sa;
		memcpy(&d, s->dst, 4);
		memcpy(&sa, s->src, 4);
		/* the control socket: IP_PMTUDISC_DO, so DF and ID 0 */
		l3_ip4_write(p, tos, (uint16_t)(ip_len + tcp_len), 0, true,
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
	th->cksum = l3_reply_csum(m, l2len + ip_len, tcp_len, IPPROTO_TCP,
				  fam ? NULL : p, fam ? p : NULL);
	r->tcp_out_segs++;
	return l3_reply_out(r, m, fam);
}

/* tcp_v4_send_reset / tcp_v6_send_reset: never to a RST; after an ACK
 * the reset takes its number, else it acknowledges the segment
 * (SYN and FIN count one); no window, no options; IPv4 TOS and IPv6
 * traffic class reflected. */
static lrx_next_t l3_tcp_rst(struct l3_reply *r, struct rte_mbuf *m,
			     struct lrx_meta *meta, lrx_next_t fate, int fam)
{
	struct l3_tcp_seg s;
	l3_tcp_seg_read(m, meta, fam, &s);
	if (s.flags & L3_TCP_RST)
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
	lrx_next_t next = l3_tcp_reply_write(r, m, meta, fate, fam, &s, seq, ack,
					     flags, 0, NULL, 0, s.tos);
	r->tcp_out_rsts += next != fate;
	return next;
}

/* tcp_conn_request → tcp_v4_send_synack / tcp_v6_send_synack for a
 * listener: the advertised MSS of an MTU of 1500 (1460, IPv6 1440), the
 * window of tcp_openreq_init_rwin (64 KiB rounded down to whole
 * segments: tcp_rmem[1] 131072 at the default scaling ratio), window
 * scale 10 (ilog2 of tcp_rmem[2] = 32 MiB, minus 15) when the SYN had
 * one, SACK and timestamps when it had them, in tcp_options_write's
 * order; ECE when the SYN asked for ECN (tcp_ecn = 2). No TOS, DF. */
static lrx_next_t l3_tcp_synack(struct l3_reply *r, struct rte_mbuf *m,
				struct lrx_meta *meta, lrx_next_t fate, int fam)
{
	struct l3_tcp_seg s;
	l3_tcp_seg_read(m, meta, fam, &s);
	const unsigned alen = fam ? 16 : 4;
	const uint32_t hash = l3_hash_addr(s.src, alen,
		l3_hash_addr(s.dst, alen,
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
			rte_cpu_to_be_32((uint32_t)l3_reply_now(r) + hash * 2654435761u);
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
	return l3_tcp_reply_write(r, m, meta, fate, fam, &s, hash, s.seq + 1,
				  flags, window, opts, n, 0);
}

/* ---- ARP ---------------------------------------------------------------------- */

lrx_next_t l3_reply_arp(struct l3_reply *r, struct rte_mbuf *m,
			lrx_next_t fate, uint32_t ip)
{
	const struct lrx_meta *meta = lrx_meta(m);
	const struct rte_arp_hdr *req = rte_pktmbuf_mtod_offset(
		m, const struct rte_arp_hdr *, meta->network_offset);
	const struct rte_ether_addr sha = req->arp_data.arp_sha;
	const uint32_t sip = req->arp_data.arp_sip;
	struct l3_reply_l2 l2;
	l3_reply_l2_of(r, m, meta, &l2);
	l2.dst = sha;
	const uint32_t l2len = l3_reply_l2_len(&l2);
	uint8_t *p = l3_reply_reshape(m, meta->network_offset, 0,
				      l2len + sizeof(struct rte_arp_hdr));
	if (!p)
		return l3_reply_no_room(r, fate);
	p = l3_reply_l2_write(p, &l2, RTE_ETHER_TYPE_ARP);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)p;
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	arp->arp_data.arp_sha = l2.src;
	arp->arp_data.arp_sip = ip;
	arp->arp_data.arp_tha = sha;
	arp->arp_data.arp_tip = sip;
	return lrx_next_tx(m->port);
}

/* ---- the dispatcher ---------------------------------------------------------- */

lrx_next_t l3_reply_send(struct l3_reply *r, struct rte_mbuf *m,
			 lrx_next_t asked)
{
	const uint32_t arg = asked >> LRX_NEXT_KIND_BITS;
	const enum l3_reply_kind kind =
		(enum l3_reply_kind)((arg >> L3_REPLY_KIND_SHIFT) & 0x1f);
	const uint32_t info = arg >> L3_REPLY_INFO_SHIFT;
	/* the fate: its kind and a drop reason, below the ask */
	const lrx_next_t fate =
		asked & (((lrx_next_t)1 << (L3_REPLY_KIND_SHIFT + LRX_NEXT_KIND_BITS)) - 1);
	struct lrx_meta *meta = lrx_meta(m);
	if (r->replies_asked)
		r->replies_asked--;
	switch (kind) {
	case L3_REPLY_ECHO4:
		return r->on[L3_REPLY_SW_ECHO] ? l3_icmp4_reply(r, m, meta, fate, false)
					       : fate;
	case L3_REPLY_TIMESTAMP4:
		return r->on[L3_REPLY_SW_TIMESTAMP]
			       ? l3_icmp4_reply(r, m, meta, fate, true)
			       : fate;
	case L3_REPLY_PORT_UNREACH4:
	case L3_REPLY_PROTO_UNREACH4:
		return r->on[L3_REPLY_SW_UNREACH]
			       ? l3_icmp4_error(r, m, meta, fate, 3,
						kind == L3_REPLY_PORT_UNREACH4 ? 3 : 2, 0)
			       : fate;
	case L3_REPLY_PARAMPROB4:
		return r->on[L3_REPLY_SW_PARAMPROB]
			       ? l3_icmp4_error(r, m, meta, fate, 12, 0, info << 24)
			       : fate;
	case L3_REPLY_ECHO6:
		return r->on[L3_REPLY_SW_ECHO] ? l3_icmp6_echo(r, m, meta, fate) : fate;
	case L3_REPLY_PORT_UNREACH6:
		return r->on[L3_REPLY_SW_UNREACH]
			       ? l3_icmp6_error(r, m, meta, fate, 1, 4, 0)
			       : fate;
	case L3_REPLY_PARAMPROB6:
		return r->on[L3_REPLY_SW_PARAMPROB]
			       ? l3_icmp6_error(r, m, meta, fate, 4,
						(uint8_t)(info >> 13), info & 0x1fff)
			       : fate;
	case L3_REPLY_RST:
		return r->on[L3_REPLY_SW_RST]
			       ? l3_tcp_rst(r, m, meta, fate,
					    meta->protocol == RTE_ETHER_TYPE_IPV6)
			       : fate;
	case L3_REPLY_SYNACK:
		return r->on[L3_REPLY_SW_SYNACK]
			       ? l3_tcp_synack(r, m, meta, fate,
					       meta->protocol == RTE_ETHER_TYPE_IPV6)
			       : fate;
	default:
		return fate;
	}
}

/* ---- configuration ------------------------------------------------------------ */

const char l3_reply_ratemask6_valid[] =
	"none, or a list of ICMPv6 types and ranges in 0..255 (0-1,3-127)";

/* icmpv6 ratemask: a list of types and ranges, as the sysctl
 * ("0-1,3-127"). */
int l3_reply_parse_ratemask6(const char *text, void *out)
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

void l3_reply_init(struct l3_reply *r, const struct l3_reply_conf *conf,
		   const struct l3_reply_addrs *addrs)
{
	for (unsigned i = 0; i < L3_REPLY_SWITCHES; i++)
		r->on[i] = conf->sw[i] == 0;
	r->accept_source_route = conf->accept_source_route;
	r->ratelimit4_ms = conf->ratelimit4_ms;
	r->ratemask4 = conf->ratemask4;
	r->msgs_per_sec = conf->msgs_per_sec;
	r->msgs_burst = conf->msgs_burst;
	r->ratelimit6_ms = conf->ratelimit6_ms;
	memcpy(r->ratemask6, conf->ratemask6, sizeof(r->ratemask6));
	r->clock_polls = conf->clock == 1;
	r->tsc_per_ms = rte_get_tsc_hz() / 1000;
	if (r->tsc_per_ms == 0)
		r->tsc_per_ms = 1;
	r->tsc_start = rte_rdtsc();
	r->addrs = *addrs;
}
