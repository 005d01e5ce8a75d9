// SPDX-License-Identifier: BSD-3-Clause
// Refused by the loader: a write below data. listrx's 112-byte __sk_buff
// header sits in front of the frame, so data - 104 is its len field: the
// program would forge skb->len for the filters after it. The kernel's
// check_packet_access refuses a negative packet offset.
#include <linux/bpf.h>
#include <linux/pkt_cls.h>
#include <bpf/bpf_helpers.h>

SEC("tc")
int bad_header_forge(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *data_end = (void *)(long)skb->data_end;

	if (data + 14 > data_end)
		return TC_ACT_OK;
	*(volatile __u32 *)(data - 104) = 1;
	return TC_ACT_OK;
}

char _license[] SEC("license") = "Dual BSD/GPL";
