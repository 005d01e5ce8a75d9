// SPDX-License-Identifier: BSD-3-Clause
// tc-ingress kernel-oracle program: counts what it sees by skb->protocol,
// skb->pkt_type and skb->len in the array map `tc_stats`, and drops IPv4
// UDP to ports 10000..19999 (TC_ACT_SHOT), passing the rest (TC_ACT_OK):
// [0] packets, [1] sum of len, [2] IPv4, [3] IPv6, [4] ARP, [5] other
// protocols, [6 + pkt_type] per packet type, [10] vlan_present,
// [11] dropped, [12] passed. The same object runs in the kernel (cls_bpf
// direct-action on a veth in a netns) and in listrx.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/pkt_cls.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 16);
	__type(key, __u32);
	__type(value, __u64);
} tc_stats SEC(".maps");

static __always_inline void add(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&tc_stats, &slot);

	if (v)
		__sync_fetch_and_add(v, n);
}

SEC("tc")
int tc_count(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;
	__u32 proto = skb->protocol;

	add(0, 1);
	add(1, skb->len);
	add(proto == bpf_htons(ETH_P_IP) ? 2 : proto == bpf_htons(ETH_P_IPV6) ? 3 :
	    proto == bpf_htons(ETH_P_ARP) ? 4 : 5, 1);
	if (skb->pkt_type < 4)
		add(6 + skb->pkt_type, 1);
	if (skb->vlan_present)
		add(10, 1);
	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->ihl != 5)
		goto pass;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > data_end)
		goto pass;
	if (bpf_ntohs(udp->dest) >= 10000 && bpf_ntohs(udp->dest) <= 19999) {
		add(11, 1);
		return TC_ACT_SHOT;
	}
pass:
	add(12, 1);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
