// SPDX-License-Identifier: BSD-3-Clause
// Test object: reads bytes 8..15 of a 4-byte map value. rte_bpf refuses
// it as a memory boundary violation; the message must name the map
// value, not the frame window.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} small SEC(".maps");

SEC("xdp")
int map_value_overread(struct xdp_md *ctx)
{
	__u32 key = 0;
	__u32 *v = bpf_map_lookup_elem(&small, &key);

	(void)ctx;
	if (!v)
		return XDP_PASS;
	return *(volatile __u64 *)(v + 2) == 7 ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
