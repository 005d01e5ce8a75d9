// SPDX-License-Identifier: BSD-3-Clause
// Test object: 40 independent branches (each calls a helper, so clang
// keeps the branch), 2^40 paths. The kernel's verifier prunes equal
// states and loads it at once; DPDK 22.11's rte_bpf_load walks every path
// and never returns: listrx must refuse it before rte_bpf_load, naming
// the path count.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define B(i) if (p[i] & 1) acc += bpf_get_prandom_u32();
#define B10(i) B(i) B(i + 1) B(i + 2) B(i + 3) B(i + 4) B(i + 5) B(i + 6) B(i + 7) B(i + 8) B(i + 9)

SEC("xdp")
int many_branches(struct xdp_md *ctx)
{
	unsigned char *p = (void *)(long)ctx->data;
	void *end = (void *)(long)ctx->data_end;
	__u64 acc = 0;

	if ((void *)(p + 64) > end)
		return XDP_PASS;
	B10(0) B10(10) B10(20) B10(30)
	return acc & 1 ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
