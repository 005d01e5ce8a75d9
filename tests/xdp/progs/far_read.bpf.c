// SPDX-License-Identifier: BSD-3-Clause
// Test object: reads byte 1699 of the frame (after checking data_end).
// rte_bpf bounds accesses by the stage's window, not by data_end: with
// window=1600 the load must fail, with window=1800 it loads.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int far_read(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	unsigned char *p = data;

	if (data + 1700 > data_end)
		return XDP_PASS;
	return p[1699] == 1 ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
