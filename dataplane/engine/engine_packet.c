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
	engine_packet_run_as(p, first, pkts, n, sink, ENGINE_INDIRECT);
}

void engine_packet_tail(struct lrx_pipeline *p, struct rte_mbuf **pkts,
			const uint16_t *slots, uint16_t n, unsigned first)
{
	for (uint16_t i = 0; i < n; i++)
		engine_packet_walk(p, pkts[i], slots[i], first, NULL,
				   ENGINE_INDIRECT, ENGINE_TO_SLOT, ENGINE_MEASURED);
}
