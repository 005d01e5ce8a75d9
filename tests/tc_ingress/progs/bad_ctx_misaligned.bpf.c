// SPDX-License-Identifier: BSD-3-Clause
// Refused by the loader: a 2-byte load of skb->len at offset 1, not a
// multiple of its size (bpf_skb_is_valid_access: off % size != 0).
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int bad_ctx_misaligned(struct __sk_buff *skb)
{
	__u16 v = *(volatile __u16 *)((__u8 *)&skb->len + 1);

	return v ? TC_ACT_SHOT : TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
