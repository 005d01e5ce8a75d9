// SPDX-License-Identifier: BSD-3-Clause
// Test object: reads every xdp_md field. Frames from ingress port 3 are
// redirected to port 2 with bpf_redirect; frames whose first byte equals
// rx_queue_index + 0x10 are dropped; data_meta must equal data (no
// metadata) and egress_ifindex 0, else XDP_ABORTED; the rest pass.
// A second section `xdp/tx` answers XDP_TX.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

SEC("xdp")
int redirect_ctx(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	void *meta = (void *)(long)ctx->data_meta;
	unsigned char *p = data;

	if (meta != data || ctx->egress_ifindex != 0)
		return XDP_ABORTED;
	if (ctx->ingress_ifindex == 3)
		return bpf_redirect(2, 0);
	if (data + 1 > data_end)
		return XDP_PASS;
	if (p[0] == ctx->rx_queue_index + 0x10)
		return XDP_DROP;
	return XDP_PASS;
}

SEC("xdp/tx")
int always_tx(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_TX;
}
char _license[] SEC("license") = "GPL";
