// SPDX-License-Identifier: BSD-3-Clause
// Test object: a 64-bit load of the context (the kernel rejects it too):
// listrx must refuse it at load time naming the instruction and offset.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bad_ctx_wide(struct xdp_md *ctx)
{
	__u64 v = *(volatile __u64 *)ctx;

	return v == 0 ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
