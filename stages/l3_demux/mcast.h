/* SPDX-License-Identifier: BSD-3-Clause */
/* Multicast and broadcast destinations on input, as a host that does not
 * forward or route multicast sees them: the groups an interface has joined
 * (ip_check_mc_rcu, ipv6_chk_mcast_addr), the subnet-directed broadcast of
 * each local IPv4 prefix (the RTN_BROADCAST route fib_add_ifaddr adds) and
 * the source rules of a multicast route (ip_mc_validate_source). Internal
 * to l3-demux. */
#ifndef LRX_L3_MCAST_H
#define LRX_L3_MCAST_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_config.h>

#include "drop_reason.h"
#include "l3_demux.h"
#include "stage.h"
#include "value.h"

/* Groups mcast_groups may list per family; the implied ones (all-hosts,
 * all-nodes, the solicited-node group of each local IPv6 address) come on
 * top. */
#define L3_MCAST_GROUPS_MAX 32
#define L3_MCAST_SLOTS (L3_MCAST_GROUPS_MAX + 1 + L3_LOCAL_ADDR_MAX)
#define L3_MCAST_ANY_PORT UINT16_MAX

struct l3_mcast {
	bool any;          /* mcast_groups=any: every group is joined */
	uint8_t n_bcast4, n_group4, n_group6;
	uint32_t bcast4[L3_LOCAL_ADDR_MAX];   /* network order */
	uint32_t group4[L3_MCAST_SLOTS];      /* network order */
	uint16_t port4[L3_MCAST_SLOTS];       /* L3_MCAST_ANY_PORT: all */
	uint8_t group6[L3_MCAST_SLOTS][16];
	uint16_t port6[L3_MCAST_SLOTS];
};

/* The keys as parsed (the value layer's CUSTOM parsers below). */
struct l3_addrs {                 /* local_ipv4, local_ipv6; n = 0: any */
	uint8_t n;
	uint8_t plen[L3_LOCAL_ADDR_MAX];  /* prefix length, the whole address if none */
	uint8_t addr[L3_LOCAL_ADDR_MAX][16];
};
struct l3_groups {                /* mcast_groups */
	bool any, none;
	uint8_t n4, n6;
	uint32_t group4[L3_MCAST_GROUPS_MAX];  /* network order */
	uint16_t port4[L3_MCAST_GROUPS_MAX];
	uint8_t group6[L3_MCAST_GROUPS_MAX][16];
	uint16_t port6[L3_MCAST_GROUPS_MAX];
};

/* local_ipv4: "any" or a list of A or A/len. */
int l3_parse_local4(const char *text, void *out);
extern const char l3_local4_valid[];
/* local_ipv6: "any" or a list of addresses, each optionally /len (the
 * prefix of its on-link route). */
int l3_parse_local6(const char *text, void *out);
extern const char l3_local6_valid[];
/* mcast_groups: "any", "none" or a list of IPv4/IPv6 groups, each
 * optionally "%port" (joined on that port only, as a group is joined on
 * one device). */
int l3_parse_groups(const char *text, void *out);
extern const char l3_groups_valid[];

/* The groups and broadcasts of the config: each A/len of local4 with len
 * < 31 adds the subnet-directed broadcast (as fib_add_ifaddr: "Add the
 * network broadcast address, when it makes sense"); the all-hosts and
 * all-nodes groups and the solicited-node group of each local6 address
 * (addrconf_join_solict) are joined unless every group is. */
void l3_mcast_setup(struct l3_mcast *mc, const struct l3_addrs *local4,
		    const struct l3_addrs *local6, const struct l3_groups *groups);

static inline bool l3_mcast_is_group4(uint32_t addr_be)
{
	return (addr_be & rte_cpu_to_be_32(0xf0000000)) ==
	       rte_cpu_to_be_32(0xe0000000);
}

/* RTN_BROADCAST: the limited broadcast or a subnet-directed one. */
static inline bool l3_mcast_is_bcast4(const struct l3_mcast *mc,
				      uint32_t addr_be)
{
	if (addr_be == UINT32_MAX)
		return true;
	for (unsigned i = 0; i < mc->n_bcast4; i++)
		if (mc->bcast4[i] == addr_be)
			return true;
	return false;
}

/* ip_check_mc_rcu without source filters: joined on this port. */
static inline bool l3_mcast_joined4(const struct l3_mcast *mc,
				    uint32_t group_be, uint16_t port)
{
	if (mc->any)
		return true;
	for (unsigned i = 0; i < mc->n_group4; i++)
		if (mc->group4[i] == group_be &&
		    (mc->port4[i] == L3_MCAST_ANY_PORT || mc->port4[i] == port))
			return true;
	return false;
}

/* ipv6_chk_mcast_addr(dev, group, NULL) */
static inline bool l3_mcast_joined6(const struct l3_mcast *mc,
				    const uint8_t *group, uint16_t port)
{
	if (mc->any)
		return true;
	for (unsigned i = 0; i < mc->n_group6; i++)
		if (memcmp(mc->group6[i], group, 16) == 0 &&
		    (mc->port6[i] == L3_MCAST_ANY_PORT || mc->port6[i] == port))
			return true;
	return false;
}

/* ip_mc_validate_source's own tests (s, d host order; martians=drop):
 * true when the source is refused, the reason in *why: a multicast or
 * limited-broadcast source is IP_INVALID_SOURCE, a loopback one
 * IP_LOCALNET, and 0.0.0.0/8 only sends to link-local groups
 * (224.0.0.0/24) or IGMP. Then fib_validate_source judges the rest. */
static inline bool l3_mcast_source_refused4(uint32_t s, uint32_t d, uint8_t proto,
					    enum lrx_drop_reason *why)
{
	if ((s & 0xf0000000) == 0xe0000000 || s == UINT32_MAX)
		*why = LRX_DROP_IP_INVALID_SOURCE;
	else if ((s >> 24) == 127)
		*why = LRX_DROP_IP_LOCALNET;
	else if ((s >> 24) == 0 && (d & 0xffffff00) != 0xe0000000 && proto != 2)
		*why = LRX_DROP_IP_INVALID_SOURCE;
	else
		return false;
	return true;
}

#endif
