/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by lrx-ktime's probes (lrx_ktime.bpf.c) and its loader. */
#ifndef LRX_KTIME_H
#define LRX_KTIME_H

#include <linux/types.h>

#define LRX_KT_MAX_PIDS 8 /* NAPI kthreads whose polls are counted */

/* X-macro: every counter of struct lrx_kt_counters, in order; the loader
 * prints them under these names. Per CPU; the loader sums the CPUs. */
#define LRX_KT_COUNTERS(X)                                                     \
	X(gro_calls)    /* GRO windows: napi_gro_receive_entry .. _exit */     \
	X(gro_ns)       /* their summed durations */                           \
	X(polls)        /* polls of our NAPI (napi_poll tracepoint) */         \
	X(poll_work)    /* frames those polls took (its `work`) */             \
	X(partial_polls) /* polls with 0 < work < budget */                    \
	X(ep_in_calls)  /* list episodes inside a GRO window */                \
	X(ep_in_ns)                                                            \
	X(ep_out_calls) /* list episodes outside GRO windows (poll flushes) */ \
	X(ep_out_ns)                                                           \
	X(nr_hits)      /* netif_receive_skb tracepoints counted */            \
	X(end_hits)     /* kfree_skb/consume_skb of our skbs */                \
	X(nr_in_gro)    /* of those: inside a GRO window */                    \
	X(end_in_gro)                                                          \
	X(ep_out_hits)  /* netif_receive_skb and end hits in those */          \
	X(cal_calls)    /* empty windows (calibration pair) */                 \
	X(cal_ns)                                                              \
	X(oncpu_calls)  /* our kthreads' runs (sched_switch in .. out) */      \
	X(oncpu_ns)     /* their summed durations, by the windows' clock */    \
	X(errors)       /* an exit without its entry */

struct lrx_kt_counters {
#define LRX_KT_FIELD(name) __u64 name;
	LRX_KT_COUNTERS(LRX_KT_FIELD)
#undef LRX_KT_FIELD
};

#endif
