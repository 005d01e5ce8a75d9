// SPDX-License-Identifier: BSD-3-Clause
// Test object: calls a kfunc listrx does not provide.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern int bpf_listrx_no_such_kfunc(const struct xdp_md *ctx) __ksym;

SEC("xdp")
int bad_kfunc_unknown(struct xdp_md *ctx)
{
	return bpf_listrx_no_such_kfunc(ctx) ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
