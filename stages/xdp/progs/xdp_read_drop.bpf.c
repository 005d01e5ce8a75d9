// SPDX-License-Identifier: BSD-3-Clause
// Reads the frame's Ethernet type, then drops it: the "read" case of
// xdp_bench01_mem_access_cost (Brouer's generic-XDP evaluation), where
// touching the frame brings its cache line in. A frame too short for an
// Ethernet header is passed (it is counted as an error elsewhere).
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_read_drop(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return XDP_PASS;
	/* the read must happen: its value decides (no frame has type 0) */
	return eth->h_proto == 0 ? XDP_PASS : XDP_DROP;
}

char _license[] SEC("license") = "Dual BSD/GPL";
