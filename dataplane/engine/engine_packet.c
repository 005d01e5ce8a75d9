/* SPDX-License-Identifier: BSD-3-Clause
 * The `packet` engine: for each packet, for each stage, an indirect call
 * through the descriptor, as the kernel's __netif_receive_skb path calls
 * one function per layer per skb. Also the per-packet tail of `hybrid`.
 */
#include "engine_packet_loop.h"

/* Release chunk: released packets run one by one, so a small stack buffer
 * per recursion level is enough. */
#define ENGINE_RELEASE_CHUNK 32

static __rte_always_inline void
packet_released(struct lrx_pipeline *p, unsigned s, struct lrx_sink *sink,
		enum engine_dispatch dispatch, enum engine_emit emit)
{
	struct engine_stage *st = &p->stages[s];
	struct rte_mbuf *pkts[ENGINE_RELEASE_CHUNK];
	uint16_t max, n;

	while ((max = engine_release_max(p, ENGINE_RELEASE_CHUNK)) != 0 &&
	       (n = engine_release(st, pkts, max, dispatch)) != 0) {
		p->release_room -= n;
		for (uint16_t i = 0; i < n; i++) {
			uint16_t slot = emit == ENGINE_TO_SLOT
						? engine_new_slot(p, pkts[i])
						: 0;
			engine_packet_walk(p, pkts[i], slot, s + 1, sink,
					   dispatch, emit);
		}
	}
}

void engine_packet_released(struct lrx_pipeline *p, unsigned s,
			    struct lrx_sink *sink,
			    enum engine_dispatch dispatch,
			    enum engine_emit emit)
{
	if (dispatch == ENGINE_DIRECT)
		packet_released(p, s, sink, ENGINE_DIRECT, ENGINE_TO_SINK);
	else if (emit == ENGINE_TO_SLOT)
		packet_released(p, s, sink, ENGINE_INDIRECT, ENGINE_TO_SLOT);
	else
		packet_released(p, s, sink, ENGINE_INDIRECT, ENGINE_TO_SINK);
}

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
