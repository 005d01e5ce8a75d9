// SPDX-License-Identifier: BSD-3-Clause
// Counts frames per L4 protocol in the array map `proto_count` (index: the
// IPv4 protocol / IPv6 next header; non-IP frames at index 255) and passes
// them all (as samples/bpf xdp1 does with a per-CPU array).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u64);
} proto_count SEC(".maps");

SEC("xdp")
int xdp_proto_count(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u32 proto = 255;
	__u64 *v;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		struct iphdr *ip = (void *)(eth + 1);

		if ((void *)(ip + 1) <= data_end)
			proto = ip->protocol;
	} else if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		struct ipv6hdr *ip6 = (void *)(eth + 1);

		if ((void *)(ip6 + 1) <= data_end)
			proto = ip6->nexthdr;
	}
	v = bpf_map_lookup_elem(&proto_count, &proto);
	if (v)
		__sync_fetch_and_add(v, 1);
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
