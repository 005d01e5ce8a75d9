// SPDX-License-Identifier: BSD-3-Clause
// An XDP program with a loop (a backward jump), which rte_bpf refuses: the
// attack battery checks that the message names the loop and gives the loop
// hint, not the frame-window hint of a memory bound. No headers, so that
// any clang with the BPF target builds it.
struct xdp_md {
	unsigned int data, data_end, data_meta, ingress_ifindex, rx_queue_index,
		egress_ifindex;
};

__attribute__((section("xdp"), used)) int loop(struct xdp_md *ctx)
{
	volatile int sum = 0;
	for (unsigned i = 0; i < ctx->rx_queue_index + 100; i++)
		sum += i;
	return sum & 1 ? 1 : 2;
}

char _license[] __attribute__((section("license"), used)) = "GPL";
