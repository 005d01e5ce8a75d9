/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * IPv6 extension headers on input, with the kernel's rules:
 *   ip6_protocol_deliver_rcu (net/ipv6/ip6_input.c) resubmits the packet to
 *   inet6_protos[nexthdr] until a final protocol; the extension header
 *   handlers are ipv6_destopt_rcv, ipv6_rthdr_rcv and dst_discard
 *   (NEXTHDR_NONE) in net/ipv6/exthdrs.c.
 */
#include "exthdrs.h"

/* IP6_DEFAULT_MAX_DST_OPTS_CNT (net.ipv6.max_dst_opts_number) */
#define L3_MAX_DST_OPTS_CNT 8

/* ip6_parse_tlv(false, ...) for a destination options header of len bytes
 * at h: Pad1/PadN at most 7 bytes of consecutive padding, PadN data all
 * zero ("RFC 4942 recommends receiving hosts to actively check PadN payload
 * to contain only zeroes"), at most max_dst_opts_cnt non-padding options,
 * unknown options by their top two bits (ip6_tlvopt_unknown). */
static bool l3_dst_tlv_ok(const uint8_t *h, uint32_t len, bool mcast_dst,
			  enum lrx_drop_reason *reason)
{
	int padlen = 0, count = 0;
	uint32_t i = 2;
	*reason = LRX_DROP_IP_INHDR; /* ip6_parse_tlv's "bad:" */
	while (i < len) {
		if (h[i] == 0) { /* IPV6_TLV_PAD1 */
			if (++padlen > 7)
				return false;
			i++;
			continue;
		}
		if (len - i < 2)
			return false;
		const uint32_t optlen = h[i + 1] + 2u;
		if (optlen > len - i)
			return false;
		if (h[i] == 1) { /* IPV6_TLV_PADN */
			padlen += (int)optlen;
			if (padlen > 7)
				return false;
			for (uint32_t k = 2; k < optlen; k++)
				if (h[i + k] != 0)
					return false;
		} else {
			if (++count > L3_MAX_DST_OPTS_CNT)
				return false;
			/* ip6_tlvopt_unknown (IPV6_TLV_HAO needs MIPv6 state
			 * listrx does not keep, and is unknown here) */
			switch (h[i] >> 6) {
			case 0: /* skip */
				break;
			case 3: /* ICMP unless the destination is multicast */
			case 1: /* discard */
			case 2: /* discard + ICMP parameter problem */
				(void)mcast_dst; /* ICMP is not sent either way */
				*reason = LRX_DROP_UNHANDLED_PROTO;
				return false;
			}
			padlen = 0;
		}
		i += optlen;
	}
	return true;
}

enum l3_ext_verdict l3_ipv6_exthdrs(const uint8_t *frame, uint32_t end,
				    uint32_t *off, uint8_t *nexthdr,
				    bool mcast_dst, bool host, bool mip6,
				    enum lrx_drop_reason *reason,
				    enum l3_ext_mib *mib)
{
	uint32_t o = *off;
	uint8_t nh = *nexthdr;
	*mib = L3_EXT_MIB_NONE;
	for (;;) {
		if (nh == 59) { /* dst_discard returns 0: counted delivered */
			*mib = L3_EXT_MIB_DELIVERS;
			*reason = LRX_DROP_NOT_SPECIFIED;
			return L3_EXT_DROP;
		}
		if (nh != 43 && nh != 60)
			break;
		/* ipv6_destopt_rcv / ipv6_rthdr_rcv: pskb_may_pull of 8 bytes
		 * then of the whole header, else Ip6InHdrErrors */
		if (end < o || end - o < 8 ||
		    end - o < (frame[o + 1] + 1u) * 8) {
			*mib = L3_EXT_MIB_HDR_ERRORS;
			*reason = LRX_DROP_NOT_SPECIFIED;
			return L3_EXT_DROP;
		}
		const uint8_t *h = frame + o;
		const uint32_t len = (h[1] + 1u) * 8;
		if (nh == 60) {
			if (!l3_dst_tlv_ok(h, len, mcast_dst, reason)) {
				*mib = L3_EXT_MIB_HDR_ERRORS;
				return L3_EXT_DROP;
			}
		} else {
			/* ipv6_rthdr_rcv */
			if (mcast_dst || !host) {
				*mib = L3_EXT_MIB_ADDR_ERRORS;
				*reason = LRX_DROP_NOT_SPECIFIED;
				return L3_EXT_DROP;
			}
			const uint8_t type = h[2], segs_left = h[3];
			if (type == 3 || type == 4) {
				/* ipv6_rpl_srh_rcv / ipv6_srh_rcv with
				 * rpl_seg_enabled / seg6_enabled off (the
				 * defaults): kfree_skb, no counter */
				*reason = LRX_DROP_NOT_SPECIFIED;
				return L3_EXT_DROP;
			}
			/* The type 2 cases exist only in a kernel built
			 * with CONFIG_IPV6_MIP6 (mip6); without it type 2 is
			 * unknown like type 0. */
			if (segs_left == 0) {
				/* type 2 left at 0 was not processed by this
				 * node: Ip6InAddrErrors */
				if (type == 2 && mip6) {
					*mib = L3_EXT_MIB_ADDR_ERRORS;
					*reason = LRX_DROP_NOT_SPECIFIED;
					return L3_EXT_DROP;
				}
				/* skipped: the upper layer follows */
			} else if (type == 2 && mip6 && h[1] == 2 &&
				   segs_left == 1) {
				/* a well-formed type 2 header: its home
				 * address needs a Mobile IPv6 xfrm state
				 * (xfrm6_input_addr) listrx does not have, as
				 * a kernel without one: Ip6InAddrErrors */
				*mib = L3_EXT_MIB_ADDR_ERRORS;
				*reason = LRX_DROP_NOT_SPECIFIED;
				return L3_EXT_DROP;
			} else {
				/* unknown_rh (type 0 is deprecated, RFC 5095:
				 * + ICMP parameter problem) and a malformed
				 * type 2 (silently): Ip6InHdrErrors */
				*mib = L3_EXT_MIB_HDR_ERRORS;
				*reason = LRX_DROP_NOT_SPECIFIED;
				return L3_EXT_DROP;
			}
		}
		nh = h[0];
		o += len;
	}
	*off = o;
	*nexthdr = nh;
	return L3_EXT_UPPER;
}
