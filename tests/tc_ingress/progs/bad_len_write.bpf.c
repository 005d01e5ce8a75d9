// SPDX-License-Identifier: BSD-3-Clause
// Refused by the loader: skb->len is read-only for tc programs
// (tc_cls_act_is_valid_access allows stores to mark, priority, tc_index,
// cb[] and tc_classid only).
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int bad_len_write(struct __sk_buff *skb)
{
	*(volatile __u32 *)&skb->len = 1;
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
