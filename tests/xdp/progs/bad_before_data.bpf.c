// SPDX-License-Identifier: BSD-3-Clause
// Refused by the loader: a read below data (listrx's xdp_md header in
// front of the frame, not packet memory; the kernel's
// check_packet_access refuses a negative packet offset).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bad_before_data(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (data + 14 > data_end)
		return XDP_PASS;
	return *(volatile __u8 *)(data - 1) ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
