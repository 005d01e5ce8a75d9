// SPDX-License-Identifier: BSD-3-Clause
// Test object: a hash map with 1-byte keys and values; every packet sets
// key 0x07 to 0x2a, so that the summary's map dump has one entry whose
// key and value are one byte each (JSON "07" and "2a", not "").
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u8);
	__type(value, __u8);
} tiny SEC(".maps");

SEC("xdp")
int map_one_byte(struct xdp_md *ctx)
{
	__u8 key = 7, value = 42;

	(void)ctx;
	bpf_map_update_elem(&tiny, &key, &value, BPF_ANY);
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
