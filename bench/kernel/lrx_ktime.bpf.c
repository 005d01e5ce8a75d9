// SPDX-License-Identifier: BSD-3-Clause
// lrx-ktime's probes: BTF tracepoint programs (tp_btf) that time the
// receive stack of one veth's NAPI kthread(s) directly (docs/kernel.md,
// "The primary method").
//
// - GRO windows: napi_gro_receive_entry .. napi_gro_receive_exit, the two
//   tracepoints of gro_receive_skb(). One per frame at every
//   gro_normal_batch; a window also holds the list processing that
//   gro_normal_one() starts inside it (netif_receive_skb_list_internal for
//   1, or for the batch's last frame).
// - List episodes: from a list's first netif_receive_skb tracepoint
//   (__netif_receive_skb_core) to the last kfree_skb/consume_skb of its
//   skbs, for the lists handed up outside a GRO window (the flush at the
//   end of a poll: napi_complete_done, __napi_poll's gro_flush_normal).
// - Polls: napi_poll, after each poll: frames per poll, and the device.
// - The calibration pair: an empty window on napi_gro_receive_entry (the
//   entry program's clock read, then the exit program's, nothing between
//   but the probes' own dispatch), which is what a window holds besides
//   the kernel's work.
//
// Only our kthreads (`pids`) and our device (learned from the first poll
// of one of them) count: softirqs of other devices that run in the
// kthread's context when it enables BH, and other CPUs, do not.
//
// There is no fentry/fexit here on purpose: BPF trampolines are not
// available on every kernel (refused with EPERM on the development VM),
// tracepoints are.
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "lrx_ktime.h"

/* CO-RE: field offsets come from the running kernel's BTF */
struct net_device {
	int ifindex;
} __attribute__((preserve_access_index));

struct task_struct {
	int pid;
} __attribute__((preserve_access_index));

struct napi_struct {
	struct net_device *dev;
	struct task_struct *thread;
} __attribute__((preserve_access_index));

struct sk_buff {
	struct net_device *dev;
} __attribute__((preserve_access_index));

const volatile __u32 npids;
const volatile __u32 pids[LRX_KT_MAX_PIDS];

/* the device of our NAPI, set by the first poll of one of our kthreads */
__u64 our_dev;

struct lrx_kt_state {
	__u64 t0[2];   /* per enum lrx_kt_window */
	__u32 open[2];
	__u32 ep_open, ep_in_gro;
	__u64 ep_t0, ep_last, ep_hits, run_t0;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lrx_kt_state);
} state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lrx_kt_counters);
} counters SEC(".maps");

static __always_inline int our_pid(__u32 pid)
{
	for (__u32 i = 0; i < LRX_KT_MAX_PIDS; i++)
		if (i < npids && pids[i] == pid)
			return 1;
	return 0;
}

static __always_inline int ours(const struct sk_buff *skb)
{
	__u64 dev = (__u64)skb->dev;

	return dev && dev == our_dev && our_pid((__u32)bpf_get_current_pid_tgid());
}

static __always_inline struct lrx_kt_state *st(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&state, &zero);
}

static __always_inline struct lrx_kt_counters *cnt(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&counters, &zero);
}

/* A list episode ends at the next event outside the stack (a GRO window
 * opening or closing, a poll's end): its duration runs to its last skb's
 * end. */
static __always_inline void close_episode(struct lrx_kt_state *s, struct lrx_kt_counters *c)
{
	if (!s->ep_open)
		return;
	s->ep_open = 0;
	if (s->ep_last < s->ep_t0) {
		c->errors++; /* no skb of the list ended before the next event */
		return;
	}
	if (s->ep_in_gro) {
		c->ep_in_calls++;
		c->ep_in_ns += s->ep_last - s->ep_t0;
	} else {
		c->ep_out_calls++;
		c->ep_out_ns += s->ep_last - s->ep_t0;
		c->ep_out_hits += s->ep_hits;
	}
}

/* A window's two halves, one body for the GRO windows and the calibration
 * pair, so the pair's empty window holds exactly the code a real window
 * holds besides the kernel's. Opening reads the clock last, closing first:
 * the programs' own work is outside the window but for their dispatch. */
enum lrx_kt_window { LRX_KT_GRO, LRX_KT_CAL };

static __always_inline int window_open(__u64 *ctx, enum lrx_kt_window w)
{
	struct lrx_kt_state *s = st();
	struct lrx_kt_counters *c = cnt();

	if (!s || !c || !ours((const struct sk_buff *)ctx[0]))
		return 0;
	close_episode(s, c);
	s->open[w] = 1;
	s->t0[w] = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int window_close(enum lrx_kt_window w)
{
	__u64 now = bpf_ktime_get_ns();
	struct lrx_kt_state *s = st();
	struct lrx_kt_counters *c = cnt();

	/* other devices' windows never opened ours: `open` is the filter */
	if (!s || !c || !s->open[w])
		return 0;
	s->open[w] = 0;
	close_episode(s, c);
	if (w == LRX_KT_GRO) {
		c->gro_calls++;
		c->gro_ns += now - s->t0[w];
	} else {
		c->cal_calls++;
		c->cal_ns += now - s->t0[w];
	}
	return 0;
}

SEC("tp_btf/napi_gro_receive_entry")
int gro_enter(__u64 *ctx)
{
	return window_open(ctx, LRX_KT_GRO);
}

SEC("tp_btf/napi_gro_receive_exit")
int gro_exit(__u64 *ctx)
{
	(void)ctx;
	return window_close(LRX_KT_GRO);
}

SEC("tp_btf/netif_receive_skb")
int list_skb(__u64 *ctx)
{
	struct lrx_kt_state *s = st();
	struct lrx_kt_counters *c = cnt();

	if (!s || !c || !ours((const struct sk_buff *)ctx[0]))
		return 0;
	c->nr_hits++;
	if (s->open[LRX_KT_GRO])
		c->nr_in_gro++;
	if (s->ep_open) {
		s->ep_hits++;
		return 0;
	}
	s->ep_open = 1;
	s->ep_in_gro = s->open[LRX_KT_GRO];
	s->ep_hits = 1;
	s->ep_last = 0;
	s->ep_t0 = bpf_ktime_get_ns();
	return 0;
}

static __always_inline int skb_end(const struct sk_buff *skb)
{
	__u64 now = bpf_ktime_get_ns();
	struct lrx_kt_state *s = st();
	struct lrx_kt_counters *c = cnt();

	if (!s || !c || !ours(skb))
		return 0;
	c->end_hits++;
	if (s->open[LRX_KT_GRO])
		c->end_in_gro++;
	if (s->ep_open) {
		s->ep_hits++;
		s->ep_last = now;
	}
	return 0;
}

SEC("tp_btf/kfree_skb")
int end_kfree(__u64 *ctx)
{
	return skb_end((const struct sk_buff *)ctx[0]);
}

SEC("tp_btf/consume_skb")
int end_consume(__u64 *ctx)
{
	return skb_end((const struct sk_buff *)ctx[0]);
}

SEC("tp_btf/napi_poll")
int poll_end(__u64 *ctx)
{
	struct napi_struct *n = (struct napi_struct *)ctx[0];
	int work = (int)ctx[1], budget = (int)ctx[2];
	struct task_struct *t = n->thread;
	struct lrx_kt_state *s;
	struct lrx_kt_counters *c;

	if (!t || !our_pid((__u32)t->pid))
		return 0;
	if (!our_dev)
		our_dev = (__u64)n->dev;
	s = st();
	c = cnt();
	if (!s || !c)
		return 0;
	close_episode(s, c);
	c->polls++;
	c->poll_work += work > 0 ? work : 0;
	if (work > 0 && work < budget)
		c->partial_polls++;
	return 0;
}

/* sched_switch(preempt, prev, next, prev_state): our kthreads' time on
 * the CPU by the windows' clock (the scheduler's task clock may leave out
 * time the windows hold: docs/kernel.md) */
SEC("tp_btf/sched_switch")
int run_switch(__u64 *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	struct task_struct *prev = (struct task_struct *)ctx[1];
	struct task_struct *next = (struct task_struct *)ctx[2];
	struct lrx_kt_state *s = st();
	struct lrx_kt_counters *c = cnt();

	if (!s || !c)
		return 0;
	if (s->run_t0 && our_pid((__u32)prev->pid)) {
		c->oncpu_calls++;
		c->oncpu_ns += now - s->run_t0;
		s->run_t0 = 0;
	}
	if (our_pid((__u32)next->pid))
		s->run_t0 = now;
	return 0;
}

/* The calibration pair, attached after gro_enter on the same tracepoint:
 * an empty window with the same bodies as a GRO window's. */
SEC("tp_btf/napi_gro_receive_entry")
int cal_enter(__u64 *ctx)
{
	return window_open(ctx, LRX_KT_CAL);
}

SEC("tp_btf/napi_gro_receive_entry")
int cal_exit(__u64 *ctx)
{
	(void)ctx;
	return window_close(LRX_KT_CAL);
}

/* Pads: with a second program on napi_gro_receive_entry (before
 * gro_enter) and on napi_gro_receive_exit (after gro_exit), both
 * tracepoints dispatch through their iterator, as napi_gro_receive_entry
 * does under the calibration pair, so the pair's empty window and a real
 * window hold the same dispatch code. */
SEC("tp_btf/napi_gro_receive_entry")
int pad_enter(__u64 *ctx)
{
	(void)ctx;
	return 0;
}

SEC("tp_btf/napi_gro_receive_exit")
int pad_exit(__u64 *ctx)
{
	(void)ctx;
	return 0;
}

char _license[] SEC("license") = "Dual BSD/GPL";
