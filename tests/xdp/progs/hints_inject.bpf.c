// SPDX-License-Identifier: BSD-3-Clause
// Test object, kernel only (tc egress on the sending veth of the kernel
// oracle): gives the n-th frame sent the RX hash and the stripped VLAN tag
// that listrx's net_synth gave the same frame, as a NIC's descriptor would:
// bpf_set_hash (a software L4 hash, what veth_xdp_rx_hash returns) and
// bpf_skb_vlan_push on an untagged skb (an out-of-band tag,
// __vlan_hwaccel_put_tag: what veth_xdp_rx_vlan_tag returns).
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

struct inject {
	__u32 hash, has_hash;
	__u16 vlan_proto, vlan_tci; /* proto in network order */
	__u32 has_vlan;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} inject_seq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct inject);
} inject_plan SEC(".maps");

SEC("tc")
int hints_inject(struct __sk_buff *skb)
{
	__u32 zero = 0, n;
	__u64 *seq = bpf_map_lookup_elem(&inject_seq, &zero);
	struct inject *p;

	if (!seq)
		return TC_ACT_OK;
	n = (__u32)*seq;
	*seq += 1;
	p = bpf_map_lookup_elem(&inject_plan, &n);
	if (!p)
		return TC_ACT_OK;
	if (p->has_hash)
		bpf_set_hash(skb, p->hash);
	if (p->has_vlan)
		bpf_skb_vlan_push(skb, p->vlan_proto, p->vlan_tci);
	return TC_ACT_OK;
}

char _license[] SEC("license") = "GPL";
