// SPDX-License-Identifier: BSD-3-Clause
// Test object: returns 7, not an XDP action (the kernel treats it as
// XDP_ABORTED after bpf_warn_invalid_xdp_action).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int ret_invalid(struct xdp_md *ctx)
{
	(void)ctx;
	return 7;
}
char _license[] SEC("license") = "GPL";
