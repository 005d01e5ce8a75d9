// SPDX-License-Identifier: BSD-3-Clause
// XDP_TX with the Ethernet addresses swapped (as samples/bpf xdp2 /
// xdp_bench01 --action XDP_TX --swapmac): sends the frame back out of the
// port it came in on. Frames shorter than an Ethernet header are dropped.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_tx_swap(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	unsigned char tmp[ETH_ALEN];

	if (data + sizeof(*eth) > data_end)
		return XDP_DROP;
	__builtin_memcpy(tmp, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, tmp, ETH_ALEN);
	return XDP_TX;
}

char _license[] SEC("license") = "Dual BSD/GPL";
