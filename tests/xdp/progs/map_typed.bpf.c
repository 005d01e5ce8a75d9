// SPDX-License-Identifier: BSD-3-Clause
// Test object: a hash map whose key and value are structs (nested struct,
// arrays, text, a signed field, bitfields), one entry per IPv4 protocol
// and destination port; the report decodes them from BTF, as bpftool map
// dump does. Passes every frame.
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "map_typed.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct typed_key);
	__type(value, struct typed_value);
} typed SEC(".maps");

SEC("xdp")
int map_typed(struct xdp_md *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp;
	struct typed_key key = {};
	struct typed_value *v;
	__u16 len;

	if ((void *)(ip + 1) > data_end || eth->h_proto != bpf_htons(ETH_P_IP) || ip->ihl != 5)
		return XDP_PASS;
	udp = (void *)(ip + 1);
	if ((void *)(udp + 1) > data_end)
		return XDP_PASS;
	len = (__u16)(data_end - data);
	key.proto = ip->protocol;
	key.dport = bpf_ntohs(udp->dest);
	key.tag[0] = ip->protocol == IPPROTO_UDP ? 'u' : ip->protocol == IPPROTO_TCP ? 't' : 'o';
	key.tag[1] = ip->protocol == IPPROTO_UDP ? 'd' : ip->protocol == IPPROTO_TCP ? 'c' : 't';
	key.tag[2] = ip->protocol == IPPROTO_UDP ? 'p' : ip->protocol == IPPROTO_TCP ? 'p' : 'h';
	v = bpf_map_lookup_elem(&typed, &key);
	if (!v) {
		struct typed_value first = {};

		first.sizes[0] = len;
		first.ip.ttl = ip->ttl;
		first.ip.flags = 5;
		first.ip.version = ip->version;
		bpf_map_update_elem(&typed, &key, &first, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&typed, &key);
		if (!v)
			return XDP_PASS;
	}
	v->pkts++;
	v->bytes += len;
	v->delta = (int)len - (int)v->sizes[0];
	v->sizes[1] = len;
	v->ip.last = 1;
	return XDP_PASS;
}
char _license[] SEC("license") = "GPL";
