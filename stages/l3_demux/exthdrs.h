/* SPDX-License-Identifier: BSD-3-Clause */
/* IPv6 extension headers after the fixed header, as ip6_protocol_deliver_rcu
 * walks them through inet6_protos (net/ipv6/exthdrs.c). Internal to
 * l3-demux. */
#ifndef LRX_L3_EXTHDRS_H
#define LRX_L3_EXTHDRS_H

#include <stdbool.h>
#include <stdint.h>

#include "drop_reason.h"

/* Which IPSTATS_MIB_* counter a verdict moves. */
enum l3_ext_mib {
	L3_EXT_MIB_NONE,
	L3_EXT_MIB_HDR_ERRORS,  /* Ip6InHdrErrors */
	L3_EXT_MIB_ADDR_ERRORS, /* Ip6InAddrErrors */
	L3_EXT_MIB_DELIVERS,    /* Ip6InDelivers (NEXTHDR_NONE) */
};

enum l3_ext_verdict {
	L3_EXT_UPPER, /* *nexthdr / *off name the upper-layer header */
	L3_EXT_DROP,  /* drop with *reason, counting *mib */
};

static inline bool l3_ipv6_is_exthdr(uint8_t nexthdr)
{
	/* NEXTHDR_ROUTING, NEXTHDR_NONE, NEXTHDR_DEST */
	return nexthdr == 43 || nexthdr == 59 || nexthdr == 60;
}

/* Walk destination options, routing headers and "no next header" from
 * frame[*off] (header type *nexthdr) up to frame[end). On L3_EXT_UPPER
 * *nexthdr and *off name the first header that is not one of these (a
 * hop-by-hop header here goes to the caller's unknown-protocol path, as
 * inet6_protos[NEXTHDR_HOP] is empty). mip6: type 2 routing headers as a
 * kernel built with CONFIG_IPV6_MIP6 treats them. */
enum l3_ext_verdict l3_ipv6_exthdrs(const uint8_t *frame, uint32_t end,
				    uint32_t *off, uint8_t *nexthdr,
				    bool mcast_dst, bool host, bool mip6,
				    enum lrx_drop_reason *reason,
				    enum l3_ext_mib *mib);

#endif
