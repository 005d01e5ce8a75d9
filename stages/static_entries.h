/* SPDX-License-Identifier: BSD-3-Clause
 * The per-packet entries of the pipeline stages, by name, for the `static`
 * engine only (dataplane/engine_packet_loop.h): it compares a descriptor's
 * entry with these and calls the match directly, the "compiled pipeline"
 * bound with no indirect stage call. Every other engine reaches the stages
 * through their descriptors (stage.h) alone.
 */
#ifndef LISTRX_STATIC_ENTRIES_H
#define LISTRX_STATIC_ENTRIES_H

#include <stdint.h>

#include "stage.h"

lrx_next_t lrx_build_meta_process_one(void *ctx, struct rte_mbuf *pkt);
lrx_next_t lrx_gro_process_one(void *ctx, struct rte_mbuf *pkt);
uint16_t lrx_gro_release(void *ctx, struct rte_mbuf **pkts, uint16_t max);
lrx_next_t lrx_l3_demux_process_one(void *ctx, struct rte_mbuf *pkt);
lrx_next_t lrx_xdp_process_one(void *ctx, struct rte_mbuf *pkt);

#endif
