/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux: the kernel's ip_rcv / ipv6_rcv / arp_rcv and the protocol
 * dispatch after them (ip_local_deliver_finish), with the kernel's drop
 * reasons and SNMP counters (named as `nstat` prints them), and the list
 * path of ip_list_rcv / ip_sublist_rcv for bursts. Reads struct lrx_meta,
 * so build-meta must run before it. See docs/stages.md, "l3-demux".
 */
#ifndef LISTRX_L3_DEMUX_H
#define LISTRX_L3_DEMUX_H

#define L3_DEMUX_STAGE_NAME "l3-demux"

/* Most local addresses each family may list (local_ipv4 / local_ipv6). */
#define L3_LOCAL_ADDR_MAX 16

#endif
