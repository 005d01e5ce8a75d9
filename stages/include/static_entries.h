/* SPDX-License-Identifier: BSD-3-Clause
 * The stages the `static` engine calls directly: one X-macro list of the
 * per-packet entries (LRX_STATIC_ENTRIES) and one of the release entries
 * of stages that hold packets (LRX_STATIC_RELEASES), next to their
 * prototypes. The dataplane (engine_packet_loop.h, engine_static.c) only
 * expands these lists: it compares a descriptor's entry with each one and
 * calls the match directly, the "compiled pipeline" bound with no indirect
 * stage call. Every other engine reaches the stages through their
 * descriptors (stage.h) alone.
 *
 * Adding a stage: one X(...) line here (the prototype comes from it). A stage
 * without one is called indirectly by the static engine; the engine test
 * "static engine: a direct entry for every registered stage" fails then.
 * Pipeline stages first: they are what a real pipeline runs.
 */
#ifndef LISTRX_STATIC_ENTRIES_H
#define LISTRX_STATIC_ENTRIES_H

#include <stdint.h>

#include "stage.h"

#define LRX_STATIC_ENTRIES(X) \
	X(lrx_build_meta_process_one) \
	X(lrx_gro_process_one) \
	X(lrx_l3_demux_process_one) \
	X(lrx_xdp_process_one) \
	X(lrx_tc_ingress_process_one) \
	X(lrx_rps_process_one) \
	X(lrx_rte_gro_process_one) \
	X(lrx_touch_process_one) \
	X(lrx_null_process_one) \
	X(lrx_drop_every_process_one) \
	X(lrx_tx_every_process_one) \
	X(lrx_hold_process_one)

#define LRX_STATIC_RELEASES(X) \
	X(lrx_gro_release) \
	X(lrx_rps_release) \
	X(lrx_hold_release)

/* The prototypes, from the lists themselves. */
#define LRX_STATIC_DECLARE_ONE(entry) \
	lrx_next_t entry(void *ctx, struct rte_mbuf *pkt);
#define LRX_STATIC_DECLARE_RELEASE(entry) \
	uint16_t entry(void *ctx, struct rte_mbuf **pkts, uint16_t max);
LRX_STATIC_ENTRIES(LRX_STATIC_DECLARE_ONE)
LRX_STATIC_RELEASES(LRX_STATIC_DECLARE_RELEASE)
#undef LRX_STATIC_DECLARE_ONE
#undef LRX_STATIC_DECLARE_RELEASE

#endif
