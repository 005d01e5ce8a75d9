// SPDX-License-Identifier: BSD-3-Clause
// tc-ingress kernel-oracle program whose map the control plane fills:
// IPv4 UDP to a port whose entry in the hash map `blocked` (key: the
// port, u16 host order; value u32) is non-zero is dropped (TC_ACT_SHOT),
// anything else passes (TC_ACT_OK). `block_stats` counts [0] lookups
// that found an entry, [1] drops, [2] passes. The kernel's map is filled
// with bpftool map update, listrx's with map_init.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u16);
	__type(value, __u32);
} blocked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} block_stats SEC(".maps");

static __always_inline void add(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&block_stats, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
}

SEC("tc")
int tc_port_block(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	__u32 *v;
	__u16 port;

	if ((void *)(udp + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->ihl != 5)
		goto pass;
	port = bpf_ntohs(udp->dest);
	v = bpf_map_lookup_elem(&blocked, &port);
	if (!v)
		goto pass;
	add(0);
	if (*v) {
		add(1);
		return TC_ACT_SHOT;
	}
pass:
	add(2);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
