// SPDX-License-Identifier: BSD-3-Clause
// XDP_DROP for every frame (xdp_bench01 --action XDP_DROP without touching
// the packet): the cheapest possible program.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int xdp_drop(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_DROP;
}

char _license[] SEC("license") = "Dual BSD/GPL";
