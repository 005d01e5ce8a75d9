/* SPDX-License-Identifier: BSD-3-Clause
 * Built-in XDP programs in C, called through one function pointer per
 * packet as the kernel calls a program's bpf_func: the baselines against
 * which the eBPF interpreter and JIT are measured (samples/bpf
 * xdp_bench01_mem_access_cost, xdp2, xdp_redirect).
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "xdp.h"

static uint32_t builtin_drop(const struct lrx_xdp_builtin_conf *conf,
			     struct lrx_xdp_buff *buff)
{
	RTE_SET_USED(conf);
	RTE_SET_USED(buff);
	return LRX_XDP_DROP;
}

static uint32_t builtin_pass(const struct lrx_xdp_builtin_conf *conf,
			     struct lrx_xdp_buff *buff)
{
	RTE_SET_USED(conf);
	RTE_SET_USED(buff);
	return LRX_XDP_PASS;
}

static uint32_t builtin_abort(const struct lrx_xdp_builtin_conf *conf,
			      struct lrx_xdp_buff *buff)
{
	RTE_SET_USED(conf);
	RTE_SET_USED(buff);
	return LRX_XDP_ABORTED;
}

static uint32_t builtin_redirect(const struct lrx_xdp_builtin_conf *conf,
				 struct lrx_xdp_buff *buff)
{
	buff->redirect_port = conf->redirect_port;
	return LRX_XDP_REDIRECT;
}

/* xdp_bench01_mem_access_cost --read: reads the Ethernet type (the data
 * cache miss on the frame is the cost it shows), then drops. */
static uint32_t builtin_read(const struct lrx_xdp_builtin_conf *conf,
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
static uint32_t builtin_touch(const struct lrx_xdp_builtin_conf *conf,
			      struct lrx_xdp_buff *buff)
{
	RTE_SET_USED(conf);
	if (buff->data + 1 > buff->data_end)
		return LRX_XDP_DROP;
	buff->data[0]++;
	return LRX_XDP_DROP;
}

/* XDP_TX with the MAC addresses swapped (xdp2 / xdp_bench01 --swapmac). */
static uint32_t builtin_tx(const struct lrx_xdp_builtin_conf *conf,
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
static uint32_t builtin_udp_port_drop(const struct lrx_xdp_builtin_conf *conf,
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

static const struct {
	const char *name;
	lrx_xdp_builtin_fn fn;
} builtins[] = {
	{ "drop", builtin_drop },
	{ "pass", builtin_pass },
	{ "tx", builtin_tx },
	{ "redirect", builtin_redirect },
	{ "read", builtin_read },
	{ "touch", builtin_touch },
	{ "udp-port-drop", builtin_udp_port_drop },
	{ "abort", builtin_abort },
};

lrx_xdp_builtin_fn lrx_xdp_builtin_find(const char *name)
{
	for (size_t i = 0; i < RTE_DIM(builtins); i++)
		if (strcmp(builtins[i].name, name) == 0)
			return builtins[i].fn;
	return NULL;
}
