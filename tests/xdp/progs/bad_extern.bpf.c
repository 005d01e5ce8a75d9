// SPDX-License-Identifier: BSD-3-Clause
// Test object: refers to a symbol the object does not define.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern volatile __u32 listrx_missing_symbol;

SEC("xdp")
int bad_extern(struct xdp_md *ctx)
{
	(void)ctx;
	return listrx_missing_symbol ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
