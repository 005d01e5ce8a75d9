/* SPDX-License-Identifier: BSD-3-Clause
 * ARP on receive (arp_rcv, arp_process) with the reply for this host's
 * address: l3-demux's module arp (arp.c).
 */
#ifndef LRX_L3_ARP_H
#define LRX_L3_ARP_H

#include "l3_module.h"

struct l3_arp {
	uint32_t ip;             /* network order, 0 = no ARP replies */
	uint64_t in, replies;
};

/* A MAC, or "port": the ingress port's (arp_mac). */
struct l3_mac_conf {
	bool from_port;
	uint8_t mac[6];
};

struct l3_arp_conf {
	uint32_t ip;
	struct l3_mac_conf mac;
};

L3_DECLARE_HANDLER(arp)

#endif
