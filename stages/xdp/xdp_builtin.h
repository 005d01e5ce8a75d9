/* SPDX-License-Identifier: BSD-3-Clause
 * Built-in XDP programs in C: the baselines against which the eBPF
 * interpreter and JIT are measured (samples/bpf
 * xdp_bench01_mem_access_cost, xdp2, xdp_redirect). Each is one exported
 * entry (xdp_builtin.c, what the stage's `prog` key stores, as a
 * program's bpf_func) around an inline body, so that the stage can call
 * the body directly after comparing the entry, as the kernel's BPF
 * dispatcher (bpf_dispatcher_xdp_func) turns the indirect call of an
 * attached XDP program into a direct one.
 */
#ifndef LISTRX_XDP_BUILTIN_H
#define LISTRX_XDP_BUILTIN_H

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "ebpf/ebpf.h"

/* ---- Built-in C programs ------------------------------------------------ */
struct lrx_xdp_buff {
	uint8_t *data, *data_end;
	uint16_t ingress_port, rx_queue;
	uint32_t redirect_port; /* set by a program that redirects */
};

struct lrx_xdp_builtin_conf {
	uint16_t redirect_port;
	const uint64_t *udp_ports; /* bitmap of 65536 ports, host order */
};

typedef uint32_t (*lrx_xdp_builtin_fn)(const struct lrx_xdp_builtin_conf *conf,
				       struct lrx_xdp_buff *buff);

/* "drop", "pass", "tx", "read", "touch", "abort", "redirect", 
 * "udp-port-drop" (the argument after ':' is parsed by the stage). */
lrx_xdp_builtin_fn lrx_xdp_builtin_find(const char *name);

/* X(entry suffix, name): every built-in, the common one first (the
 * dispatch compares in this order) */
#define LRX_XDP_BUILTINS(X) \
	X(pass, "pass") \
	X(drop, "drop") \
	X(tx, "tx") \
	X(redirect, "redirect") \
	X(read, "read") \
	X(touch, "touch") \
	X(udp_port_drop, "udp-port-drop") \
	X(abort, "abort")

#define LRX_XDP_BUILTIN_DECLARE(fn, name) \
	uint32_t lrx_xdp_builtin_##fn(const struct lrx_xdp_builtin_conf *conf, \
				      struct lrx_xdp_buff *buff);
LRX_XDP_BUILTINS(LRX_XDP_BUILTIN_DECLARE)
#undef LRX_XDP_BUILTIN_DECLARE

/* the built-ins that only return their verdict */
#define LRX_XDP_BUILTIN_VERDICT(fn, verdict)                                  \
	static __rte_always_inline uint32_t lrx_xdp_builtin_##fn##_body(      \
		const struct lrx_xdp_builtin_conf *conf,                      \
		struct lrx_xdp_buff *buff)                                    \
	{                                                                     \
		RTE_SET_USED(conf);                                           \
		RTE_SET_USED(buff);                                           \
		return verdict;                                               \
	}
LRX_XDP_BUILTIN_VERDICT(drop, LRX_XDP_DROP)
LRX_XDP_BUILTIN_VERDICT(pass, LRX_XDP_PASS)
LRX_XDP_BUILTIN_VERDICT(abort, LRX_XDP_ABORTED)
#undef LRX_XDP_BUILTIN_VERDICT

static __rte_always_inline uint32_t
lrx_xdp_builtin_redirect_body(const struct lrx_xdp_builtin_conf *conf,
			      struct lrx_xdp_buff *buff)
{
	buff->redirect_port = conf->redirect_port;
	return LRX_XDP_REDIRECT;
}

/* xdp_bench01_mem_access_cost --read: reads the Ethernet type (the data
 * cache miss on the frame is the cost it shows), then drops. */
static __rte_always_inline uint32_t
lrx_xdp_builtin_read_body(const struct lrx_xdp_builtin_conf *conf,
			  struct lrx_xdp_buff *buff)
{
	const struct rte_ether_hdr *eth = (const void *)buff->data;

	RTE_SET_USED(conf);
	if (buff->data + sizeof(*eth) > buff->data_end)
		return LRX_XDP_DROP;
	/* a dependent branch keeps the load */
	return *(volatile const uint16_t *)&eth->ether_type == 0xffff ?
		       LRX_XDP_PASS : LRX_XDP_DROP;
}

/* --swapmac style write of one byte (the destination MAC's first byte
 * incremented), then drop: the cost of dirtying the cache line. */
static __rte_always_inline uint32_t
lrx_xdp_builtin_touch_body(const struct lrx_xdp_builtin_conf *conf,
			   struct lrx_xdp_buff *buff)
{
	RTE_SET_USED(conf);
	if (buff->data + 1 > buff->data_end)
		return LRX_XDP_DROP;
	buff->data[0]++;
	return LRX_XDP_DROP;
}

/* XDP_TX with the MAC addresses swapped (xdp2 / xdp_bench01 --swapmac). */
static __rte_always_inline uint32_t
lrx_xdp_builtin_tx_body(const struct lrx_xdp_builtin_conf *conf,
			struct lrx_xdp_buff *buff)
{
	struct rte_ether_hdr *eth = (void *)buff->data;
	struct rte_ether_addr tmp;

	RTE_SET_USED(conf);
	if (buff->data + sizeof(*eth) > buff->data_end)
		return LRX_XDP_DROP;
	tmp = eth->dst_addr;
	eth->dst_addr = eth->src_addr;
	eth->src_addr = tmp;
	return LRX_XDP_TX;
}

/* Drops IPv4/UDP frames (no VLAN) to the configured destination ports. */
static __rte_always_inline uint32_t
lrx_xdp_builtin_udp_port_drop_body(const struct lrx_xdp_builtin_conf *conf,
				   struct lrx_xdp_buff *buff)
{
	const struct rte_ether_hdr *eth = (const void *)buff->data;
	const struct rte_ipv4_hdr *ip = (const void *)(eth + 1);
	const struct rte_udp_hdr *udp;
	uint16_t port;

	if ((const uint8_t *)(ip + 1) > buff->data_end ||
	    eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) ||
	    ip->next_proto_id != IPPROTO_UDP || (ip->version_ihl & 0xf) < 5)
		return LRX_XDP_PASS;
	udp = (const void *)((const uint8_t *)ip +
			     (ip->version_ihl & 0xf) * 4);
	if ((const uint8_t *)(udp + 1) > buff->data_end)
		return LRX_XDP_PASS;
	port = rte_be_to_cpu_16(udp->dst_port);
	return (conf->udp_ports[port / 64] >> (port % 64)) & 1 ?
		       LRX_XDP_DROP : LRX_XDP_PASS;
}

#endif
