// SPDX-License-Identifier: BSD-3-Clause
// Test object: records, per frame in arrival order, what each XDP metadata
// kfunc returned and wrote (the kfunc unit tests and the kernel oracle,
// which runs it device-bound on a veth). `hint_seq`[0] counts frames;
// `hint_record`[n] holds frame n's answers. Drops every frame.
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

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

struct hint_record {
	__s64 hash_rc;
	__u32 hash, hash_type;
	__s64 timestamp_rc;
	__u64 timestamp;
	__s64 vlan_rc;
	__u32 vlan_proto, vlan_tci;
};

#define RECORDS 256

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} hint_seq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RECORDS);
	__type(key, __u32);
	__type(value, struct hint_record);
} hint_record SEC(".maps");

SEC("xdp")
int hints_record(struct xdp_md *ctx)
{
	__u32 zero = 0, n;
	__u64 *seq = bpf_map_lookup_elem(&hint_seq, &zero);
	struct hint_record *r;
	__u32 hash = 0;
	enum xdp_rss_hash_type type = XDP_RSS_TYPE_NONE;
	__u64 ts = 0;
	__be16 proto = 0;
	__u16 tci = 0;

	if (!seq)
		return XDP_ABORTED;
	n = (__u32)*seq;
	*seq += 1;
	r = bpf_map_lookup_elem(&hint_record, &n);
	if (!r)
		return XDP_DROP;
	r->hash_rc = bpf_xdp_metadata_rx_hash(ctx, &hash, &type);
	r->hash = hash;
	r->hash_type = type;
	r->timestamp_rc = bpf_xdp_metadata_rx_timestamp(ctx, &ts);
	r->timestamp = ts;
	r->vlan_rc = bpf_xdp_metadata_rx_vlan_tag(ctx, &proto, &tci);
	r->vlan_proto = proto;
	r->vlan_tci = tci;
	return XDP_DROP;
}

char _license[] SEC("license") = "GPL";
