// SPDX-License-Identifier: BSD-3-Clause
// Test object: writes the context (rejected at load time).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bad_ctx_write(struct xdp_md *ctx)
{
	((volatile struct xdp_md *)ctx)->rx_queue_index = 1;
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
