/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration side of l3-demux's multicast and broadcast handling:
 * the local IPv4 prefixes (their subnet-directed broadcasts) and the
 * joined groups. The per-packet tests are inline in mcast.h.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>

#include "mcast.h"
#include "stage_keys.h"

int l3_mcast_parse_local4(const struct lrx_stage_init *init, const char *key,
			  uint32_t *local4, uint8_t *plen4, uint8_t *n_local4,
			  struct l3_mcast *mc)
{
	static const char valid[] =
		"valid values are any, or a comma list of up to 16 IPv4 "
		"addresses, each optionally with its prefix length "
		"(10.0.0.2/24: 10.0.0.255 is then a broadcast address)";
	const char *v = lrx_key_value(init, key);
	*n_local4 = 0;
	mc->n_bcast4 = 0;
	if (strcmp(v, "any") == 0)
		return 0;
	for (const char *p = v; *p;) {
		char text[64];
		size_t len = lrx_key_item(p, text, sizeof(text));
		if (len == 0 || *n_local4 == L3_LOCAL_ADDR_MAX)
			return lrx_key_error(init, key, v, valid);
		long plen = 32;
		char *slash = strchr(text, '/');
		if (slash) {
			*slash = '\0';
			plen = lrx_key_decimal(slash + 1, 32);
		}
		uint32_t addr;
		if (plen < 0 || inet_pton(AF_INET, text, &addr) != 1)
			return lrx_key_error(init, key, v, valid);
		plen4[*n_local4] = (uint8_t)plen;
		local4[(*n_local4)++] = addr;
		if (plen < 31) {
			const uint32_t mask = plen ? UINT32_MAX << (32 - plen) : 0;
			mc->bcast4[mc->n_bcast4++] =
				rte_cpu_to_be_32(rte_be_to_cpu_32(addr) | ~mask);
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
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

int l3_mcast_parse_groups(const struct lrx_stage_init *init, const char *key,
			  const uint8_t (*local6)[16], uint8_t n_local6,
			  struct l3_mcast *mc)
{
	static const char valid[] =
		"valid values are any, none, or a comma list of up to 32 "
		"IPv4 (224.0.0.0/4) and 32 IPv6 (ff00::/8) groups, each "
		"optionally %port (239.1.1.1%0: joined on port 0 only)";
	const char *v = lrx_key_value(init, key);
	mc->n_group4 = mc->n_group6 = 0;
	mc->any = strcmp(v, "any") == 0;
	if (mc->any)
		return 0;
	/* joined by every interface: IGMP_ALL_HOSTS (ip_mc_init_dev) and the
	 * all-nodes group (ipv6_dev_mc_inc in ipv6_add_dev), and
	 * addrconf_join_solict for each address: ff02::1:ffXX:XXXX */
	l3_mcast_add4(mc, rte_cpu_to_be_32(0xe0000001), L3_MCAST_ANY_PORT);
	static const uint8_t all_nodes[16] = {0xff, 0x02, [15] = 1};
	l3_mcast_add6(mc, all_nodes, L3_MCAST_ANY_PORT);
	for (unsigned i = 0; i < n_local6; i++) {
		uint8_t sol[16] = {0xff, 0x02, [11] = 1, [12] = 0xff};
		memcpy(sol + 13, local6[i] + 13, 3);
		l3_mcast_add6(mc, sol, L3_MCAST_ANY_PORT);
	}
	if (strcmp(v, "none") == 0)
		return 0;
	unsigned user4 = 0, user6 = 0;
	for (const char *p = v; *p;) {
		char text[64];
		size_t len = lrx_key_item(p, text, sizeof(text));
		if (len == 0)
			return lrx_key_error(init, key, v, valid);
		long port = L3_MCAST_ANY_PORT;
		char *pct = strchr(text, '%');
		if (pct) {
			*pct = '\0';
			port = lrx_key_decimal(pct + 1, RTE_MAX_ETHPORTS - 1);
			if (port < 0)
				return lrx_key_error(init, key, v, valid);
		}
		uint8_t addr[16];
		if (inet_pton(AF_INET, text, addr) == 1) {
			uint32_t group;
			memcpy(&group, addr, 4);
			if (!l3_mcast_is_group4(group) ||
			    ++user4 > L3_MCAST_GROUPS_MAX)
				return lrx_key_error(init, key, v, valid);
			l3_mcast_add4(mc, group, (uint16_t)port);
		} else if (inet_pton(AF_INET6, text, addr) == 1) {
			if (addr[0] != 0xff || ++user6 > L3_MCAST_GROUPS_MAX)
				return lrx_key_error(init, key, v, valid);
			l3_mcast_add6(mc, addr, (uint16_t)port);
		} else {
			return lrx_key_error(init, key, v, valid);
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}
