/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration side of l3-demux's multicast and broadcast handling:
 * the local IPv4 prefixes (their subnet-directed broadcasts) and the
 * joined groups. The per-packet tests are inline in mcast.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>

#include "mcast.h"

const char l3_local4_valid[] =
	"any, or a list of up to 16 IPv4 addresses, each optionally "
	"with its prefix length (10.0.0.2/24: 10.0.0.255 is then a broadcast address)";
const char l3_local6_valid[] =
	"any, or a list of up to 16 IPv6 addresses, each optionally with its "
	"prefix length (2001:db8::2/64)";
const char l3_groups_valid[] =
	"any, none, or a list of up to 32 IPv4 (224.0.0.0/4) and 32 IPv6 "
	"(ff00::/8) groups, each optionally %port (239.1.1.1%0: joined on port 0 only)";

static int l3_parse_addrs(const char *text, struct l3_addrs *a, int af)
{
	char item[64];
	int rc;
	memset(a, 0, sizeof(*a));
	if (strcmp(text, "any") == 0)
		return 0;
	for (const char *p = text; (rc = lrx_value_list_next(&p, item, sizeof(item))) > 0;) {
		unsigned plen;
		if (a->n == L3_LOCAL_ADDR_MAX || lrx_value_addr(item, af, a->addr[a->n], &plen) < 0)
			return -EINVAL;
		a->plen[a->n++] = (uint8_t)plen;
	}
	return rc < 0 || a->n == 0 ? -EINVAL : 0;
}

int l3_parse_local4(const char *text, void *out)
{
	return l3_parse_addrs(text, out, AF_INET);
}

int l3_parse_local6(const char *text, void *out)
{
	return l3_parse_addrs(text, out, AF_INET6);
}

int l3_parse_groups(const char *text, void *out)
{
	struct l3_groups *g = out;
	char item[64];
	int rc;
	memset(g, 0, sizeof(*g));
	g->any = strcmp(text, "any") == 0;
	g->none = strcmp(text, "none") == 0;
	if (g->any || g->none)
		return 0;
	for (const char *p = text; (rc = lrx_value_list_next(&p, item, sizeof(item))) > 0;) {
		uint64_t port = L3_MCAST_ANY_PORT;
		char *pct = strchr(item, '%');
		if (pct) {
			*pct = '\0';
			if (lrx_value_uint(pct + 1, 0, RTE_MAX_ETHPORTS - 1, &port) < 0)
				return -EINVAL;
		}
		uint8_t addr[16];
		if (lrx_value_addr(item, AF_INET, addr, NULL) == 0) {
			uint32_t group;
			memcpy(&group, addr, 4);
			if (!l3_mcast_is_group4(group) || g->n4 == L3_MCAST_GROUPS_MAX)
				return -EINVAL;
			g->group4[g->n4] = group;
			g->port4[g->n4++] = (uint16_t)port;
		} else if (lrx_value_addr(item, AF_INET6, addr, NULL) == 0) {
			if (addr[0] != 0xff || g->n6 == L3_MCAST_GROUPS_MAX)
				return -EINVAL;
			memcpy(g->group6[g->n6], addr, 16);
			g->port6[g->n6++] = (uint16_t)port;
		} else {
			return -EINVAL;
		}
	}
	return rc;
}

static void l3_mcast_add4(struct l3_mcast *mc, uint32_t group_be,
			  uint16_t port)
{
	mc->group4[mc->n_group4] = group_be;
	mc->port4[mc->n_group4++] = port;
}

static void l3_mcast_add6(struct l3_mcast *mc, const uint8_t *group,
			  uint16_t port)
{
	memcpy(mc->group6[mc->n_group6], group, 16);
	mc->port6[mc->n_group6++] = port;
}

void l3_mcast_setup(struct l3_mcast *mc, const struct l3_addrs *local4,
		    const struct l3_addrs *local6, const struct l3_groups *groups)
{
	memset(mc, 0, sizeof(*mc));
	for (unsigned i = 0; i < local4->n; i++) {
		if (local4->plen[i] >= 31)
			continue;
		uint32_t addr;
		memcpy(&addr, local4->addr[i], 4);
		const uint32_t mask = local4->plen[i] ? UINT32_MAX << (32 - local4->plen[i]) : 0;
		mc->bcast4[mc->n_bcast4++] = rte_cpu_to_be_32(rte_be_to_cpu_32(addr) | ~mask);
	}
	mc->any = groups->any;
	if (mc->any)
		return;
	/* joined by every interface: IGMP_ALL_HOSTS (ip_mc_init_dev) and the
	 * all-nodes group (ipv6_dev_mc_inc in ipv6_add_dev), and
	 * addrconf_join_solict for each address: ff02::1:ffXX:XXXX */
	l3_mcast_add4(mc, rte_cpu_to_be_32(0xe0000001), L3_MCAST_ANY_PORT);
	static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
	l3_mcast_add6(mc, all_nodes, L3_MCAST_ANY_PORT);
	for (unsigned i = 0; i < local6->n; i++) {
		uint8_t sol[16] = {0xff, 0x02, [11] = 1, [12] = 0xff};
		memcpy(sol + 13, local6->addr[i] + 13, 3);
		l3_mcast_add6(mc, sol, L3_MCAST_ANY_PORT);
	}
	for (unsigned i = 0; i < groups->n4; i++)
		l3_mcast_add4(mc, groups->group4[i], groups->port4[i]);
	for (unsigned i = 0; i < groups->n6; i++)
		l3_mcast_add6(mc, groups->group6[i], groups->port6[i]);
}
