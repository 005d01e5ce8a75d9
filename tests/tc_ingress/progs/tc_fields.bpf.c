// SPDX-License-Identifier: BSD-3-Clause
// tc-ingress test program: records what it reads of the __sk_buff
// context in the array map `seen` (slot = field), writes skb->mark and
// cb[0], and returns a verdict chosen by the UDP destination port:
// 1000 TC_ACT_SHOT, 1001 bpf_redirect(1) TC_ACT_REDIRECT, 1002
// TC_ACT_STOLEN, 1003 99 (no verdict: cls_bpf_exec_opcode makes it
// TC_ACT_UNSPEC), 1004 TC_ACT_UNSPEC, 1005 TC_ACT_REDIRECT without
// bpf_redirect, 1006 TC_ACT_TRAP; anything else TC_ACT_OK.
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
} seen SEC(".maps");

/* an update, not a lookup and a NULL check: no branch per field, so that
 * rte_bpf's verifier (every path, no pruning) walks one path here */
static __always_inline void put(__u32 slot, __u64 value)
{
	bpf_map_update_elem(&seen, &slot, &value, BPF_ANY);
}

SEC("tc")
int tc_fields(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;
	/* a narrow (1-byte) load of the protocol's first byte */
	__u8 proto_hi = *(volatile __u8 *)((char *)skb +
					   __builtin_offsetof(struct __sk_buff, protocol));

	put(0, skb->len);
	put(1, skb->pkt_type);
	put(2, skb->protocol);
	put(3, skb->vlan_present);
	put(4, skb->vlan_tci);
	put(5, skb->vlan_proto);
	put(6, skb->ingress_ifindex);
	put(7, skb->ifindex);
	put(8, skb->hash);
	put(9, skb->queue_mapping);
	put(10, skb->mark);
	put(11, proto_hi);
	put(12, (__u64)(data_end - data));
	skb->mark = 0x77;
	skb->cb[0] = 5;
	put(13, skb->cb[0]);
	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) ||
	    ip->protocol != IPPROTO_UDP || ip->ihl != 5)
		return TC_ACT_OK;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > data_end)
		return TC_ACT_OK;
	switch (bpf_ntohs(udp->dest)) {
	case 1000: return TC_ACT_SHOT;
	case 1001: return bpf_redirect(1, 0);
	case 1002: return TC_ACT_STOLEN;
	case 1003: return 99;
	case 1004: return TC_ACT_UNSPEC;
	case 1005: return TC_ACT_REDIRECT;
	case 1006: return TC_ACT_TRAP;
	}
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
