// SPDX-License-Identifier: BSD-3-Clause
// Test object: calls bpf_xdp_adjust_head, which listrx does not provide.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bad_helper(struct xdp_md *ctx)
{
	if (bpf_xdp_adjust_head(ctx, 4) != 0)
		return XDP_ABORTED;
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
