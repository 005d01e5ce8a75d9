// SPDX-License-Identifier: BSD-3-Clause
// Test object: an array of 2^20 values of 64 KiB, 64 GiB: the load must
// fail naming the map and the size (exit 2), not "out of memory".
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct big {
	__u8 bytes[65536];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 20);
	__type(key, __u32);
	__type(value, struct big);
} huge SEC(".maps");

SEC("xdp")
int map_huge(struct xdp_md *ctx)
{
	__u32 key = 0;
	struct big *v = bpf_map_lookup_elem(&huge, &key);

	(void)ctx;
	return v && v->bytes[0] ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
