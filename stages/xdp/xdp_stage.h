/* SPDX-License-Identifier: BSD-3-Clause
 * The xdp stage's exports (docs/xdp.md); the programs it runs are loaded
 * by lib/ebpf (ebpf.h) or built in (xdp_builtin.h).
 */
#ifndef LISTRX_XDP_STAGE_H
#define LISTRX_XDP_STAGE_H

#include "ebpf/ebpf.h"

extern const struct lrx_stage lrx_stage_xdp;
/* The entry points, exported for the static engine's direct calls. */
lrx_next_t lrx_xdp_process_one(void *ctx, struct rte_mbuf *pkt);
void lrx_xdp_process_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n,
			   lrx_next_t *nexts);
/* The loaded eBPF program of a stage instance (NULL for a built-in). */
struct lrx_xdp_prog *lrx_xdp_stage_prog(void *ctx);

#endif
