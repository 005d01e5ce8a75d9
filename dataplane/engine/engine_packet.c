/* SPDX-License-Identifier: BSD-3-Clause
 * The `packet` engine: for each packet, for each stage, an indirect call
 * through the descriptor, as the kernel's __netif_receive_skb path calls
 * one function per layer per skb. Also the per-packet tail of `hybrid`.
 */
#include "engine_packet_loop.h"

void engine_packet_run(struct lrx_pipeline *p, unsigned first,
		       struct rte_mbuf **pkts, uint16_t n,
		       struct lrx_sink *sink)
{
	p->release_room = engine_release_room(sink, n);
	/* specialised by a constant 0: no prefetch test per packet when off */
	if (p->prefetch)
		engine_packet_loop(p, first, pkts, n, sink, p->prefetch,
				   ENGINE_INDIRECT);
	else
		engine_packet_loop(p, first, pkts, n, sink, 0,
				   ENGINE_INDIRECT);
}

void engine_packet_tail(struct lrx_pipeline *p, struct rte_mbuf **pkts,
			const uint16_t *slots, uint16_t n, unsigned first)
{
	for (uint16_t i = 0; i < n; i++)
		engine_packet_walk(p, pkts[i], slots[i], first, NULL,
				   ENGINE_INDIRECT, ENGINE_TO_SLOT);
}
