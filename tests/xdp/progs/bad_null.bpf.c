// SPDX-License-Identifier: BSD-3-Clause
// Test object: dereferences a map lookup result without a NULL test (the
// kernel verifier rejects it; so must listrx, rte_bpf would not).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} table SEC(".maps");

SEC("xdp")
int bad_null(struct xdp_md *ctx)
{
	__u32 key = 1;
	__u64 *v = bpf_map_lookup_elem(&table, &key);

	(void)ctx;
	return *(volatile __u64 *)v == 7 ? XDP_DROP : XDP_PASS;
}
char _license[] SEC("license") = "GPL";
