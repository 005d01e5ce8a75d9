// SPDX-License-Identifier: BSD-3-Clause
// XDP_PASS for every frame that has at least an Ethernet header, XDP_DROP
// for runts: reads data/data_end, so it exercises the context rewrite.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (data + sizeof(struct ethhdr) > data_end)
		return XDP_DROP;
	return XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
