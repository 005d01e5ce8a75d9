// SPDX-License-Identifier: BSD-3-Clause
// Reads RX metadata through the kernel's XDP metadata kfuncs, then drops:
// the per-hint cost of the xdp-hints thread (XDP_DROP with and without
// hints). XDP_HINTS (a compile-time bit set: 1 hash, 2 timestamp, 4 VLAN
// tag) selects the kfuncs called; meson builds xdp_hints_none, _hash,
// _timestamp, _vlan and _all. `hint_stats` counts, per CPU, [0] frames,
// [1] frames with a hash, [2] with a timestamp, [3] with a VLAN tag, and
// [4] folds the values read (so that every read is used).
// In the kernel the kfuncs answer only in a device-bound program
// (BPF_F_XDP_DEV_BOUND_ONLY, native XDP); listrx answers them from the
// frame's descriptor hints (net_synth hints=hash+timestamp+vlan).
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#ifndef XDP_HINTS
#define XDP_HINTS 0
#endif

/* include/net/xdp.h (not uapi): libbpf checks the kfunc's prototype
 * against the kernel's BTF, which has the enum */
enum xdp_rss_hash_type { XDP_RSS_TYPE_NONE = 0 };

extern int bpf_xdp_metadata_rx_hash(const struct xdp_md *ctx, __u32 *hash,
				    enum xdp_rss_hash_type *rss_type) __ksym;
extern int bpf_xdp_metadata_rx_timestamp(const struct xdp_md *ctx,
					 __u64 *timestamp) __ksym;
extern int bpf_xdp_metadata_rx_vlan_tag(const struct xdp_md *ctx,
					__be16 *vlan_proto,
					__u16 *vlan_tci) __ksym;

struct hint_stats {
	__u64 frames, hash, timestamp, vlan, fold;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct hint_stats);
} hint_stats SEC(".maps");

SEC("xdp")
int xdp_hints(struct xdp_md *ctx)
{
	__u32 zero = 0;
	struct hint_stats *st = bpf_map_lookup_elem(&hint_stats, &zero);
	__u64 fold = 0;

	if (!st)
		return XDP_ABORTED;
	st->frames++;
	if (XDP_HINTS & 1) {
		__u32 hash;
		enum xdp_rss_hash_type type;

		if (bpf_xdp_metadata_rx_hash(ctx, &hash, &type) == 0) {
			st->hash++;
			fold ^= hash ^ ((__u64)type << 32);
		}
	}
	if (XDP_HINTS & 2) {
		__u64 ts;

		if (bpf_xdp_metadata_rx_timestamp(ctx, &ts) == 0) {
			st->timestamp++;
			fold ^= ts;
		}
	}
	if (XDP_HINTS & 4) {
		__be16 proto;
		__u16 tci;

		if (bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci) == 0) {
			st->vlan++;
			fold ^= ((__u64)proto << 16) | tci;
		}
	}
	st->fold ^= fold;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
