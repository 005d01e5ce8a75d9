// SPDX-License-Identifier: BSD-3-Clause
// Test object: hands a metadata kfunc the frame instead of the context
// (the kernel's verifier refuses it: arg#0 expected pointer to ctx).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

extern int bpf_xdp_metadata_rx_hash(const struct xdp_md *ctx, __u32 *hash,
				    __u32 *rss_type) __ksym;

SEC("xdp")
int bad_kfunc_ctx(struct xdp_md *ctx)
{
	__u32 hash, type;
	const struct xdp_md *wrong = (const struct xdp_md *)(long)ctx->data;

	return bpf_xdp_metadata_rx_hash(wrong, &hash, &type) ? XDP_PASS : XDP_DROP;
}
char _license[] SEC("license") = "GPL";
