// SPDX-License-Identifier: BSD-3-Clause
// Refused by the loader: data spilled to the stack, reloaded and moved 8
// bytes below itself, then read. The loader's own data-flow pass does not
// follow the stack; rte_bpf's verifier does, in the packet view
// (prog_packet_view_check), which refuses the access below data.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int bad_spill_before_data(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u64 v;

	if (data + 14 > data_end)
		return XDP_PASS;
	asm volatile("*(u64 *)(r10 - 16) = %[p]\n\t"
		     "%[v] = *(u64 *)(r10 - 16)\n\t"
		     "%[v] += -8\n\t"
		     "%[v] = *(u8 *)(%[v] + 0)"
		     : [v] "=&r"(v)
		     : [p] "r"(data)
		     : "memory");
	return v ? XDP_DROP : XDP_PASS;
}

char _license[] SEC("license") = "Dual BSD/GPL";
