// SPDX-License-Identifier: BSD-3-Clause
// Drops IPv4/UDP frames whose destination port is a key of the hash map
// `blocked_ports` (key: the port in host order, value: a hit counter),
// passes everything else. `filter_stats` counts [0] passed, [1] dropped.
// The map is filled from outside (listrx: the xdp stage's map_init key;
// kernel: bpf_map_update_elem from user space).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u16);
	__type(value, __u64);
} blocked_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} filter_stats SEC(".maps");

static __always_inline int count(__u32 slot, int verdict)
{
	__u64 *v = bpf_map_lookup_elem(&filter_stats, &slot);

	if (v)
		__sync_fetch_and_add(v, 1);
	return verdict;
}

SEC("xdp")
int xdp_port_filter(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip;
	struct udphdr *udp;
	__u16 dport;
	__u64 *hits;

	if ((void *)(eth + 1) > data_end)
		return count(0, XDP_PASS);
	if (eth->h_proto != bpf_htons(ETH_P_IP))
		return count(0, XDP_PASS);
	ip = (void *)(eth + 1);
	if ((void *)(ip + 1) > data_end)
		return count(0, XDP_PASS);
	if (ip->protocol != IPPROTO_UDP || ip->ihl < 5)
		return count(0, XDP_PASS);
	udp = (void *)ip + ip->ihl * 4;
	if ((void *)(udp + 1) > data_end)
		return count(0, XDP_PASS);
	dport = bpf_ntohs(udp->dest);
	hits = bpf_map_lookup_elem(&blocked_ports, &dport);
	if (!hits)
		return count(0, XDP_PASS);
	__sync_fetch_and_add(hits, 1);
	return count(1, XDP_DROP);
}

char _license[] SEC("license") = "Dual BSD/GPL";
