/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The replies of l3-demux (reply.h): what icmp.c, tcp.c and arp.c build
 * them with, in the asking packet's own buffer, with the header fields of
 * Linux 6.18 (net/ipv4/icmp.c, net/ipv6/icmp.c, net/ipv4/tcp_ipv4.c,
 * net/ipv6/tcp_ipv6.c, net/ipv4/tcp_output.c), and the answering of the
 * asks.
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

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>

#include "l3_modules.h"

/* ---- time: milliseconds, the TSC's or one per poll -------------------- */

uint64_t l3_reply_now(const struct l3_reply *r)
{
	return r->clock_polls ? r->polls
			      : (rte_rdtsc() - r->tsc_start) / r->tsc_per_ms;
}

/* rte_hash_crc of up to 16 bytes that need not be aligned (addresses in
 * a frame): it reads 8 bytes at a time. */
uint32_t l3_reply_hash_addr(const void *p, unsigned len, uint32_t init)
{
	uint64_t words[2] = {0, 0};
	memcpy(words, p, len);
	return rte_hash_crc(words, len, init);
}

/* ---- the reply frame ------------------------------------------------------- */

/* Ethernet: to the asker, from this host (arp_mac: the port's MAC or a
 * given one), tagged with the VLAN device's VID when it came on one. */
void l3_reply_l2_of(const struct l3_reply *r, const struct rte_mbuf *m,
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

uint32_t l3_reply_l2_len(const struct l3_reply_l2 *l2)
{
	return l2->vid ? RTE_ETHER_HDR_LEN + 4 : RTE_ETHER_HDR_LEN;
}

uint8_t *l3_reply_l2_write(uint8_t *p, const struct l3_reply_l2 *l2,
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
uint8_t *l3_reply_reshape(struct rte_mbuf *m, uint32_t keep_off,
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

/* The frame of an IP reply (fam: IPv6) in m's own buffer: Ethernet to
 * the asker, hdr_len bytes of IP and L4 headers, then m's bytes
 * [keep_off, +keep_len). Returns where the IP header goes and the L4
 * header's offset in *l4_off, or NULL when it does not fit. */
uint8_t *l3_reply_ip_frame(const struct l3_reply *r, struct rte_mbuf *m,
			   const struct lrx_meta *meta, int fam, uint32_t keep_off,
			   uint32_t keep_len, uint32_t hdr_len, uint32_t *l4_off)
{
	struct l3_reply_l2 l2;
	l3_reply_l2_of(r, m, meta, &l2);
	const uint32_t l2len = l3_reply_l2_len(&l2);
	uint8_t *p = l3_reply_reshape(m, keep_off, keep_len, l2len + hdr_len);
	if (!p)
		return NULL;
	*l4_off = l2len + (fam ? 40 : 20);
	return l3_reply_l2_write(p, &l2, fam ? RTE_ETHER_TYPE_IPV6
					     : RTE_ETHER_TYPE_IPV4);
}

void l3_reply_ip4_write(uint8_t *p, uint8_t tos, uint16_t total, uint16_t id,
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
uint8_t l3_reply_ip6_tclass(const uint8_t *ip6)
{
	return (uint8_t)((ip6[0] & 0x0f) << 4 | ip6[1] >> 4);
}

void l3_reply_ip6_write(uint8_t *p, uint8_t tclass, uint16_t plen,
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
uint16_t l3_reply_csum(const struct rte_mbuf *m, uint32_t l4_off,
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

/* ip_local_out's (ip6_local_out's) NF_INET_LOCAL_OUT: conntrack sees what
 * the host sends (the OUTPUT chains are not run) */
static __rte_noinline void l3_reply_conntrack(struct l3_reply *r, struct rte_mbuf *m,
						struct lrx_ct *ct)
{
	const uint8_t *f = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t noff = 12;
	while ((f[noff] == 0x81 && f[noff + 1] == 0x00) ||
	       (f[noff] == 0x88 && f[noff + 1] == 0xa8))
		noff += 4;
	l3_nf_ct_local_out(ct, m, noff + 2, l3_reply_now(r));
}

lrx_next_t l3_reply_out(struct l3_reply *r, struct rte_mbuf *m, int fam)
{
	r->ip_out_requests[fam]++;
	struct lrx_ct *ct = fam == L3_FAMILY_V4 ? r->ct : r->ct6;
	if (unlikely(ct != NULL))
		l3_reply_conntrack(r, m, ct);
	return lrx_next_tx(m->port);
}

lrx_next_t l3_reply_no_room(struct l3_reply *r, lrx_next_t fate)
{
	r->reply_no_room++;
	return fate;
}

/* ---- the dispatcher ---------------------------------------------------------- */

lrx_next_t l3_reply_send(struct l3_ctx *c, struct rte_mbuf *m,
			 lrx_next_t asked)
{
	struct l3_reply *r = &c->reply;
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
	if (kind == L3_REPLY_RST || kind == L3_REPLY_SYNACK)
		return l3_tcp_answer(c, m, meta, fate, kind);
	return l3_icmp_answer(c, m, meta, fate, kind, info);
}

void l3_reply_init(struct l3_reply *r)
{
	r->tsc_per_ms = rte_get_tsc_hz() / 1000;
	if (r->tsc_per_ms == 0)
		r->tsc_per_ms = 1;
	r->tsc_start = rte_rdtsc();
}
