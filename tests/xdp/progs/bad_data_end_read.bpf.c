// SPDX-License-Identifier: BSD-3-Clause
// Refused by the loader: a read through data_end (the kernel: invalid mem
// access 'pkt_end'); packet pointers are compared with it only.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bad_data_end_read(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;

	if (data + 14 > data_end)
		return XDP_PASS;
	return *(volatile __u8 *)(data_end - 1) ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
