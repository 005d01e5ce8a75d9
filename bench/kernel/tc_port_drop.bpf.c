// SPDX-License-Identifier: BSD-3-Clause
// A tc ingress filter for the kernel experiment's tc row (listrx-bench
// kernel --variant tc-bpf): cls_bpf in direct-action mode that drops IPv4
// UDP frames whose destination port is in [10000, 19999] (TC_ACT_SHOT, the
// program's own verdict: this kernel has no act_gact) and passes the rest
// (TC_ACT_OK). The experiment's traffic (port 9) never matches, as the
// netfilter row's rule. `tc_port_stats` counts [0] passed, [1] dropped:
// cls_bpf keeps no per-filter packet counter of its own.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#define TC_DROP_PORT_LO 10000
#define TC_DROP_PORT_HI 19999

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} tc_port_stats SEC(".maps");

static __always_inline int count(__u32 slot, int verdict)
{
	__u64 *v = bpf_map_lookup_elem(&tc_port_stats, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
	return verdict;
}

SEC("tc")
int tc_port_drop(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;
	__u16 dport;

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->ihl != 5)
		return count(0, TC_ACT_OK);
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > data_end)
		return count(0, TC_ACT_OK);
	dport = bpf_ntohs(udp->dest);
	if (dport >= TC_DROP_PORT_LO && dport <= TC_DROP_PORT_HI)
		return count(1, TC_ACT_SHOT);
	return count(0, TC_ACT_OK);
}

char _license[] SEC("license") = "Dual BSD/GPL";
