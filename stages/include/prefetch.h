/* SPDX-License-Identifier: BSD-3-Clause
 * Software prefetch of the packets ahead in a loop over a vector, as VPP's
 * ip4_input_inline prefetches the buffer headers of the packets a few slots
 * ahead (vlib_prefetch_buffer_header) and their data (CLIB_PREFETCH) while
 * it works on the current ones. A DPDK frame's address and the metadata
 * pointer are read from the mbuf header, so the header of packet i + 2k is
 * prefetched first and the frame head and metadata of packet i + k (whose
 * header was asked for k packets earlier) next, as DPDK's l3fwd does with
 * its PREFETCH_OFFSET. k = 0 is off ([pipeline] prefetch = 0). A prefetch
 * never faults: the metadata pointer of a packet build-meta has not reached
 * yet may be stale, the hint is then only wasted.
 */
#ifndef LISTRX_PREFETCH_H
#define LISTRX_PREFETCH_H

#include <stdint.h>

#include <rte_branch_prediction.h>
#include <rte_mbuf.h>
#include <rte_prefetch.h>

#include "meta.h"
#include "stage.h"

/* the largest distance [pipeline] prefetch accepts, and its default: off,
 * because every frame listrx's devices give is already in the L1d (the
 * PMD wrote the mbuf header, net_synth's frames are pre-built or copied by
 * the CPU), so a prefetch only adds instructions: 4 ahead cost the burst
 * engine 14 % and the packet engine 4 % of their CPU-time throughput on
 * xdp,build-meta,gro,l3-demux (docs/engines.md). A NIC that DMAs into
 * memory the CPU has not touched is where it pays. */
#define LRX_PREFETCH_MAX 16
#define LRX_PREFETCH_DEFAULT 0
/* the distance the engine equivalence tests run besides 0 */
#define LRX_PREFETCH_TESTED 4

static __rte_always_inline void lrx_prefetch_header(const struct rte_mbuf *m)
{
	rte_mbuf_prefetch_part1((struct rte_mbuf *)(uintptr_t)m);
	rte_mbuf_prefetch_part2((struct rte_mbuf *)(uintptr_t)m);
}

static __rte_always_inline void lrx_prefetch_body(const struct rte_mbuf *m)
{
	rte_prefetch0(rte_pktmbuf_mtod(m, const void *));
	/* no dynfield before build-meta registers it (a pipeline without
	 * it): the offset is -1 and there is no pointer to read */
	if (likely(lrx_meta_dynfield_offset >= 0))
		rte_prefetch0(lrx_meta(m));
}

/* Before a loop over pkts[0..n-1]: the headers of the first 2k packets,
 * then the frame heads and metadata of the first k. */
static __rte_always_inline void
lrx_prefetch_start(struct rte_mbuf *const *pkts, uint16_t n, uint16_t k)
{
	const uint16_t h = (uint16_t)RTE_MIN(2u * k, n), b = RTE_MIN(k, n);
	for (uint16_t j = 0; j < h; j++)
		lrx_prefetch_header(pkts[j]);
	for (uint16_t j = 0; j < b; j++)
		lrx_prefetch_body(pkts[j]);
}

/* In the loop, at packet i: header of i + 2k, frame head and metadata of
 * i + k. */
static __rte_always_inline void
lrx_prefetch_ahead(struct rte_mbuf *const *pkts, uint16_t i, uint16_t n,
		   uint16_t k)
{
	if (k == 0)
		return;
	if (i + 2u * k < n)
		lrx_prefetch_header(pkts[i + 2u * k]);
	if (i + k < n)
		lrx_prefetch_body(pkts[i + k]);
}

/* One packet of a list entry: the stage's inline per-packet core, the
 * one its process_one calls too. */
typedef lrx_next_t (*lrx_list_one_fn)(void *ctx, struct rte_mbuf *pkt);

/* A list entry's loop over pkts[0..n-1]: the stage's inline per-packet
 * core `one` (the one its process_one calls), passed as a constant so that
 * the call becomes a copy of it, on each packet in order, with the
 * prefetch of [pipeline] prefetch = k (k held in a register, not reloaded
 * from the stage's context at every packet). VPP's nodes unroll such a
 * loop four times (ip4_input_inline's quad loop, prefetching packets 4..7
 * while 0..3 are processed); with these cores, whose branches differ per
 * packet kind, four copies measured slower than one (more mispredicted
 * branches and I-cache lines for the same work; docs/engines.md, "How the
 * list entries are written"), so there is one copy. gro and l3-demux use
 * it; build-meta's and xdp's own loops, the same loop written out,
 * executed fewer instructions than through it. */
static __rte_always_inline void
lrx_list_loop(void *ctx, struct rte_mbuf **pkts, uint16_t n,
	      lrx_next_t *nexts, uint16_t k, lrx_list_one_fn one)
{
	lrx_prefetch_start(pkts, n, k);
	for (uint16_t i = 0; i < n; i++) {
		lrx_prefetch_ahead(pkts, i, n, k);
		nexts[i] = one(ctx, pkts[i]);
	}
}

#endif
