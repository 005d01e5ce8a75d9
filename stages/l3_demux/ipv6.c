/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * l3-demux's module ipv6: IPv6 input after ip6_rcv_core's checks (in
 * l3_demux.c): the route of a host that does not forward (local_ipv6),
 * the resubmission after a fragment, and the extension headers on input,
 * with the kernel's rules:
 *   ip6_rcv_core parses a hop-by-hop header first (ipv6_parse_hopopts);
 *   ip6_protocol_deliver_rcu (net/ipv6/ip6_input.c) then resubmits the
 *   packet to inet6_protos[nexthdr] until a final protocol; the extension
 *   header handlers are ipv6_destopt_rcv, ipv6_rthdr_rcv and dst_discard
 *   (NEXTHDR_NONE) in net/ipv6/exthdrs.c. Both option headers go through
 *   one TLV parser, as ip6_parse_tlv.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "l3_modules.h"

/* IP6_DEFAULT_MAX_HBH_OPTS_CNT and IP6_DEFAULT_MAX_DST_OPTS_CNT
 * (net.ipv6.max_hbh_opts_number, max_dst_opts_number); the option
 * lengths have no limit (the max_*_opts_len sysctls are gone) */
#define L3_MAX_TLV_OPTS 8

/* option types (include/uapi/linux/in6.h) */
enum {
	L3_TLV_PAD1 = 0,
	L3_TLV_PADN = 1,
	L3_TLV_ROUTERALERT = 5,
	L3_TLV_CALIPSO = 7,
	L3_TLV_IOAM = 49,
	L3_TLV_JUMBO = 0xc2,
	L3_TLV_HAO = 0xc9,
};

static bool l3_ext_failed(struct l3_ext_fail *fail, enum lrx_drop_reason reason,
			  enum l3_ext_mib mib)
{
	fail->reason = reason;
	fail->mib = mib;
	fail->icmp = false;
	return false;
}

static bool l3_ext_paramprob(struct l3_ext_fail *fail,
			     enum lrx_drop_reason reason, enum l3_ext_mib mib,
			     enum l3_paramprob6 code, uint32_t pointer)
{
	l3_ext_failed(fail, reason, mib);
	fail->icmp = true;
	fail->icmp_code = (uint8_t)code;
	fail->icmp_pointer = pointer;
	return false;
}

/* What ip6_parse_tlv's option handlers need besides the header. */
struct l3_tlv_in {
	bool hopbyhop;         /* hop-by-hop (else destination options) */
	bool mcast_dst;
	bool mip6;             /* CONFIG_IPV6_MIP6: ipv6_dest_hao exists */
	uint32_t payload_len;  /* the fixed header's */
	uint32_t skb_len;      /* bytes from the network header */
};

/* ip6_tlvopt_unknown: by the option type's top two bits: 00 skip, 01
 * drop, 10 drop + parameter problem, 11 the same unless the destination
 * is multicast (icmp6_send still lets 10 reach a group: opt_unrec). */
static bool l3_tlv_unknown(const uint8_t *nh, uint32_t optoff,
			   const struct l3_tlv_in *in, struct l3_ext_fail *fail)
{
	switch (nh[optoff] >> 6) {
	case 0:
		return true;
	case 3:
		if (in->mcast_dst)
			break;
		/* fall through */
	case 2:
		return l3_ext_paramprob(fail, LRX_DROP_UNHANDLED_PROTO,
					L3_EXT_MIB_HDR_ERRORS,
					L3_PARAMPROB6_OPTION, optoff);
	}
	return l3_ext_failed(fail, LRX_DROP_UNHANDLED_PROTO,
			     L3_EXT_MIB_HDR_ERRORS);
}

/* ipv6_hop_jumbo: length 4 at 4n+2; a payload length above 65535 in an
 * IPv6 header whose own is 0, within the packet. */
static bool l3_hop_jumbo(const uint8_t *nh, uint32_t optoff,
			 const struct l3_tlv_in *in, uint32_t *jumbo_len,
			 struct l3_ext_fail *fail)
{
	if (nh[optoff + 1] != 4 || (optoff & 3) != 2)
		return l3_ext_failed(fail, LRX_DROP_IP_INHDR,
				     L3_EXT_MIB_HDR_ERRORS);
	const uint32_t pkt_len = (uint32_t)nh[optoff + 2] << 24 |
				 (uint32_t)nh[optoff + 3] << 16 |
				 (uint32_t)nh[optoff + 4] << 8 | nh[optoff + 5];
	if (pkt_len <= 65535)
		return l3_ext_paramprob(fail, LRX_DROP_IP_INHDR,
					L3_EXT_MIB_HDR_ERRORS,
					L3_PARAMPROB6_HDR_FIELD, optoff + 2);
	if (in->payload_len)
		return l3_ext_paramprob(fail, LRX_DROP_IP_INHDR,
					L3_EXT_MIB_HDR_ERRORS,
					L3_PARAMPROB6_HDR_FIELD, optoff);
	if (pkt_len > in->skb_len - 40)
		return l3_ext_failed(fail, LRX_DROP_PKT_TOO_SMALL,
				     L3_EXT_MIB_HDR_ERRORS);
	*jumbo_len = pkt_len;
	return true;
}

/* One option the kernel knows (hop-by-hop: ipv6_hop_ra, ipv6_hop_ioam,
 * ipv6_hop_jumbo, ipv6_hop_calipso; destination: ipv6_dest_hao), or an
 * unknown one. */
static bool l3_tlv_option(const uint8_t *nh, uint32_t optoff,
			  const struct l3_tlv_in *in, uint32_t *jumbo_len,
			  struct l3_ext_fail *fail)
{
	const uint8_t type = nh[optoff];
	if (!in->hopbyhop) {
		/* ipv6_dest_hao needs a Mobile IPv6 xfrm state
		 * (xfrm6_input_addr) listrx does not keep: discarded */
		if (type == L3_TLV_HAO && in->mip6)
			return l3_ext_failed(fail, LRX_DROP_IP_INHDR,
					     L3_EXT_MIB_HDR_ERRORS);
		return l3_tlv_unknown(nh, optoff, in, fail);
	}
	switch (type) {
	case L3_TLV_ROUTERALERT: /* RFC 2711: length 2 */
		return nh[optoff + 1] == 2 ||
		       l3_ext_failed(fail, LRX_DROP_IP_INHDR,
				     L3_EXT_MIB_HDR_ERRORS);
	case L3_TLV_IOAM:
		/* 4n-aligned, then ignored: ioam6_enabled is off by
		 * default */
		return (optoff & 3) == 0 ||
		       l3_ext_failed(fail, LRX_DROP_IP_INHDR,
				     L3_EXT_MIB_HDR_ERRORS);
	case L3_TLV_JUMBO:
		return l3_hop_jumbo(nh, optoff, in, jumbo_len, fail);
	case L3_TLV_CALIPSO:
		/* calipso_validate finds no CALIPSO DOI (none configured,
		 * as a kernel with CONFIG_NETLABEL and no netlabel set-up):
		 * every CALIPSO option is discarded */
		return l3_ext_failed(fail, LRX_DROP_IP_INHDR,
				     L3_EXT_MIB_HDR_ERRORS);
	default:
		return l3_tlv_unknown(nh, optoff, in, fail);
	}
}

/* ip6_parse_tlv for the option header at nh[off] (nh: the network
 * header): at most 7 bytes of consecutive Pad1/PadN padding, PadN data
 * all zero ("RFC 4942 recommends receiving hosts to actively check PadN
 * payload to contain only zeroes"), at most L3_MAX_TLV_OPTS other
 * options, each fitting the header, each judged by l3_tlv_option. */
static bool l3_parse_tlv(const uint8_t *nh, uint32_t off,
			 const struct l3_tlv_in *in, uint32_t *jumbo_len,
			 struct l3_ext_fail *fail)
{
	int len = (nh[off + 1] + 1) * 8 - 2;
	uint32_t optoff = off + 2;
	int padlen = 0, count = 0;
	while (len > 0) {
		if (nh[optoff] == L3_TLV_PAD1) {
			if (++padlen > 7)
				goto bad;
			optoff++;
			len--;
			continue;
		}
		if (len < 2)
			goto bad;
		const int optlen = nh[optoff + 1] + 2;
		if (optlen > len)
			goto bad;
		if (nh[optoff] == L3_TLV_PADN) {
			/* RFC 2460: PadN aligns the header to 8: 7 at most */
			padlen += optlen;
			if (padlen > 7)
				goto bad;
			for (int i = 2; i < optlen; i++)
				if (nh[optoff + i] != 0)
					goto bad;
		} else {
			if (++count > L3_MAX_TLV_OPTS)
				goto bad;
			if (!l3_tlv_option(nh, optoff, in, jumbo_len, fail))
				return false;
			padlen = 0;
		}
		optoff += (uint32_t)optlen;
		len -= optlen;
	}
	if (len == 0)
		return true;
bad:
	return l3_ext_failed(fail, LRX_DROP_IP_INHDR, L3_EXT_MIB_HDR_ERRORS);
}

enum l3_ext_verdict l3_ipv6_hopopts(const uint8_t *frame, uint32_t noff,
				    uint32_t end, uint32_t payload_len,
				    uint32_t skb_len, bool mcast_dst,
				    uint32_t *hdr_len, uint32_t *jumbo_len,
				    struct l3_ext_fail *fail)
{
	const uint32_t off = noff + 40;
	*jumbo_len = 0;
	/* pskb_may_pull of 8 bytes, then of the whole header */
	if (end < off + 8 || end - off < (frame[off + 1] + 1u) * 8) {
		l3_ext_failed(fail, LRX_DROP_NOT_SPECIFIED,
			      L3_EXT_MIB_HDR_ERRORS);
		return L3_EXT_DROP;
	}
	const struct l3_tlv_in in = {
		.hopbyhop = true, .mcast_dst = mcast_dst,
		.payload_len = payload_len, .skb_len = skb_len,
	};
	if (!l3_parse_tlv(frame + noff, 40, &in, jumbo_len, fail))
		return L3_EXT_DROP;
	*hdr_len = (frame[off + 1] + 1u) * 8;
	return L3_EXT_UPPER;
}

/* ipv6_rthdr_rcv for the routing header at h (off from the network
 * header). True: skipped, the upper layer follows. */
static bool l3_rthdr(const uint8_t *h, uint32_t off, bool mcast_dst,
		     bool host, bool mip6, struct l3_ext_fail *fail)
{
	if (mcast_dst || !host)
		return l3_ext_failed(fail, LRX_DROP_NOT_SPECIFIED,
				     L3_EXT_MIB_ADDR_ERRORS);
	const uint8_t type = h[2], segs_left = h[3];
	if (type == 3 || type == 4)
		/* ipv6_rpl_srh_rcv / ipv6_srh_rcv with rpl_seg_enabled /
		 * seg6_enabled off (the defaults): kfree_skb, no counter */
		return l3_ext_failed(fail, LRX_DROP_NOT_SPECIFIED,
				     L3_EXT_MIB_NONE);
	/* The type 2 cases exist only in a kernel built with
	 * CONFIG_IPV6_MIP6 (mip6); without it type 2 is unknown like
	 * type 0. */
	if (segs_left == 0) {
		/* type 2 left at 0 was not processed by this node */
		if (type == 2 && mip6)
			return l3_ext_failed(fail, LRX_DROP_NOT_SPECIFIED,
					     L3_EXT_MIB_ADDR_ERRORS);
		return true;
	}
	if (type == 2 && mip6) {
		/* a well-formed type 2 header: its home address needs a
		 * Mobile IPv6 xfrm state (xfrm6_input_addr) listrx does not
		 * have, as a kernel without one: Ip6InAddrErrors; a
		 * malformed one is discarded silently: Ip6InHdrErrors */
		return l3_ext_failed(fail, LRX_DROP_NOT_SPECIFIED,
				     h[1] == 2 && segs_left == 1
					     ? L3_EXT_MIB_ADDR_ERRORS
					     : L3_EXT_MIB_HDR_ERRORS);
	}
	/* unknown_rh (type 0 is deprecated, RFC 5095): a parameter problem
	 * pointing at the type */
	return l3_ext_paramprob(fail, LRX_DROP_NOT_SPECIFIED,
				L3_EXT_MIB_HDR_ERRORS, L3_PARAMPROB6_HDR_FIELD,
				off + 2);
}

enum l3_ext_verdict l3_ipv6_exthdrs(const uint8_t *frame, uint32_t noff,
				    uint32_t end, uint32_t *off,
				    uint8_t *nexthdr, bool mcast_dst, bool host,
				    bool mip6, struct l3_ext_fail *fail)
{
	uint32_t o = *off;
	uint8_t nh = *nexthdr;
	for (;;) {
		if (nh == 59) { /* dst_discard returns 0: counted delivered */
			l3_ext_failed(fail, LRX_DROP_NOT_SPECIFIED,
				      L3_EXT_MIB_DELIVERS);
			return L3_EXT_DROP;
		}
		if (nh != 43 && nh != 60)
			break;
		/* ipv6_destopt_rcv / ipv6_rthdr_rcv: pskb_may_pull of 8 bytes
		 * then of the whole header, else Ip6InHdrErrors */
		if (end < o || end - o < 8 ||
		    end - o < (frame[o + 1] + 1u) * 8) {
			l3_ext_failed(fail, LRX_DROP_NOT_SPECIFIED,
				      L3_EXT_MIB_HDR_ERRORS);
			return L3_EXT_DROP;
		}
		const uint8_t *h = frame + o;
		if (nh == 60) {
			const struct l3_tlv_in in = {.mcast_dst = mcast_dst,
						     .mip6 = mip6};
			uint32_t unused;
			if (!l3_parse_tlv(frame + noff, o - noff, &in, &unused,
					  fail)) {
				fail->mib = L3_EXT_MIB_HDR_ERRORS;
				return L3_EXT_DROP;
			}
		} else if (!l3_rthdr(h, o - noff, mcast_dst, host, mip6,
				     fail)) {
			return L3_EXT_DROP;
		}
		nh = h[0];
		o += (h[1] + 1u) * 8;
	}
	*off = o;
	*nexthdr = nh;
	return L3_EXT_UPPER;
}

uint32_t l3_ipv6_nhoff(const uint8_t *frame, uint32_t noff, uint32_t toff)
{
	uint32_t nhoff = 6, o = noff + 40;
	uint8_t nh = frame[noff + 6];
	while (o < toff) {
		nhoff = o - noff;
		const uint8_t *h = frame + o;
		/* the headers l3-demux walks: options, routing, and an
		 * atomic fragment's header (8 bytes) */
		o += nh == 44 ? 8u : (h[1] + 1u) * 8;
		nh = h[0];
	}
	return nhoff;
}

/* ---- IPv6 input: what ip6_protocol_deliver_rcu does around the headers ---- */

/* A header that failed (above): its counter, its drop, and the
 * parameter problem it asks for. */
lrx_next_t l3_ipv6_ext_failed(struct l3_ctx *c, struct rte_mbuf *m,
			      const struct l3_ext_fail *fail)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V6];
	mib->in_hdr_errors += fail->mib == L3_EXT_MIB_HDR_ERRORS;
	mib->in_addr_errors += fail->mib == L3_EXT_MIB_ADDR_ERRORS;
	mib->in_delivers += fail->mib == L3_EXT_MIB_DELIVERS;
	const lrx_next_t fate = lrx_next_drop(fail->reason);
	return fail->icmp ? l3_ask(c, m, fate, L3_REPLY_PARAMPROB6,
				   l3_reply_paramprob6(fail->icmp_code,
						       fail->icmp_pointer))
			  : fate;
}

/* The extension headers ip6_protocol_deliver_rcu resubmits through
 * (above), and the counter each verdict moves. */
lrx_next_t l3_ipv6_ext(struct l3_ctx *c, struct rte_mbuf *m, struct lrx_meta *meta,
		       const struct rte_ipv6_hdr *hdr, uint32_t *toff, uint8_t *nexthdr)
{
	struct l3_ext_fail fail;
	uint32_t end = meta->network_offset + meta->len;
	if (end > m->data_len) /* only the first segment is walked */
		end = m->data_len;
	if (l3_ipv6_exthdrs(l3_frame(m), meta->network_offset, end, toff,
			    nexthdr, hdr->dst_addr[0] == 0xff,
			    meta->pkt_type == LRX_PACKET_HOST, l3_ipv6_of(c)->mip6,
			    &fail) == L3_EXT_UPPER) {
		meta->transport_offset = (uint16_t)*toff;
		meta->l4_proto = *nexthdr;
		return LRX_NEXT_CONTINUE_V;
	}
	return l3_ipv6_ext_failed(c, m, &fail);
}

/* ipv6_frag_rcv and the resubmit after it (ip6_protocol_deliver_rcu):
 * the headers after the fragment header are walked again; a second
 * fragment header is a header error (IP6SKB_FRAGMENTED). */
lrx_next_t l3_ipv6_frag(struct l3_ctx *c, struct rte_mbuf *m,
			struct lrx_meta *meta, uint32_t toff)
{
	struct l3_ip_mib *mib = &c->ip[L3_FAMILY_V6];
	struct l3_reasm_hdr_error err;
	uint8_t nexthdr;
	lrx_next_t next = l3_reasm_ipv6(l3_reasm_of(c), m, meta, &toff, &nexthdr,
					&err);
	if (err.counted) {
		mib->in_hdr_errors++;
		return l3_ask(c, m, next, L3_REPLY_PARAMPROB6,
			      l3_reply_paramprob6(err.icmp_code, err.icmp_pointer));
	}
	if (next != LRX_NEXT_CONTINUE_V)
		return next;
	meta->transport_offset = (uint16_t)toff;
	meta->l4_proto = nexthdr;
	if (l3_ipv6_is_exthdr(nexthdr)) {
		const struct rte_ipv6_hdr *hdr = rte_pktmbuf_mtod_offset(
			m, const struct rte_ipv6_hdr *, meta->network_offset);
		next = l3_ipv6_ext(c, m, meta, hdr, &toff, &nexthdr);
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	if (nexthdr == 44) {
		mib->in_hdr_errors++;
		return lrx_next_drop(LRX_DROP_IP_INHDR);
	}
	return LRX_NEXT_CONTINUE_V;
}

/* The prefix length of the local IPv6 prefix holding addr (its on-link
 * route), else 0 (a default route). */
unsigned l3_ipv6_route_plen(const struct l3_ipv6 *v6, const uint8_t *addr)
{
	for (unsigned i = 0; i < v6->n_local6; i++)
		if (l3_in_prefix(addr, v6->local6[i], v6->plen6[i]))
			return v6->plen6[i];
	return 0;
}

/* ipv6_dev_get_saddr for a peer: the local address on its prefix, else
 * the first; false when local_ipv6 is any (no address to choose). */
bool l3_ipv6_source(const struct l3_ipv6 *v6, const uint8_t *peer, uint8_t *out)
{
	if (v6->n_local6 == 0)
		return false;
	unsigned pick = 0;
	const unsigned plen = l3_ipv6_route_plen(v6, peer);
	for (unsigned i = 0; i < v6->n_local6 && plen; i++)
		if (v6->plen6[i] == plen) {
			pick = i;
			break;
		}
	memcpy(out, v6->local6[pick], 16);
	return true;
}

static int l3_ipv6_init(struct l3_demux *d, const struct l3_demux_conf *conf,
			const struct lrx_stage_init *init)
{
	struct l3_ipv6 *v6 = &d->ipv6;
	(void)init;
	v6->mip6 = conf->ipv6.mip6;
	for (uint16_t port = 0; port < RTE_MAX_ETHPORTS; port++) {
		v6->drop_l2mc[port] = lrx_port_set_has(&conf->ipv6.drop_l2mc, port);
		v6->drop_l2mc_some |= v6->drop_l2mc[port];
	}
	v6->n_local6 = conf->ipv6.local_ipv6.n;
	memcpy(v6->local6, conf->ipv6.local_ipv6.addr, sizeof(v6->local6));
	memcpy(v6->plen6, conf->ipv6.local_ipv6.plen, sizeof(v6->plen6));
	return 0;
}

static const struct lrx_value_key l3_ipv6_keys[] = {
	L3_KEY(CUSTOM, ipv6.local_ipv6, "local_ipv6", "any", l3_parse_local6, l3_local6_valid,
	       "same for IPv6: any | list"),
	L3_KEY(BOOL, ipv6.mip6, "ipv6_mip6", "yes",
	       "type 2 routing headers as a kernel with (yes, as "
	       "distribution kernels) or without CONFIG_IPV6_MIP6 (no: unknown, "
	       "like type 0)"),
	L3_KEY(PORTS, ipv6.drop_l2mc, "drop_unicast_in_l2_multicast", "none",
	       "ports whose IPv6 packets to a unicast address in an L2 "
	       "broadcast or multicast frame are dropped "
	       "(net.ipv6.conf.IF.drop_unicast_in_l2_multicast): any | none | "
	       "list; UNICAST_IN_L2_MULTICAST, counted Ip6InHdrErrors"),
	{.name = NULL},
};

/* IPv6's IPSTATS_MIB_* (ip6_rcv_core in l3_demux.c counts most of them) */
static const struct lrx_stage_counter l3_ipv6_counters[] = {
	L3_IP_COUNTERS("Ip6", 1),
	L3_COUNTER("Ip6InTruncatedPkts", core.ip[1].in_truncated_pkts),
	L3_COUNTER("Ip6InMcastPkts", core.ip[1].in_mcast_pkts),
	L3_COUNTER("Ip6InMcastOctets", core.ip[1].in_mcast_octets),
	{.name = NULL},
};

L3_MODULE(ipv6);
