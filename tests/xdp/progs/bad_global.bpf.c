// SPDX-License-Identifier: BSD-3-Clause
// Test object: uses a global variable (.bss), not supported.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

volatile __u32 seen;

SEC("xdp")
int bad_global(struct xdp_md *ctx)
{
	(void)ctx;
	seen++;
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
