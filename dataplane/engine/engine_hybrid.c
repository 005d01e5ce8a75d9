/* SPDX-License-Identifier: BSD-3-Clause
 * The `hybrid:K` engine: bursts through the first K stages, then per packet
 * through the rest, as the kernel's listification grew stage by stage
 * (Cree 2018: driver → __netif_receive_skb_list → ip_list_rcv, with the
 * layers above still per packet).
 */
#include "engine_internal.h"

void engine_hybrid_run(struct lrx_pipeline *p, unsigned first,
		       struct rte_mbuf **pkts, uint16_t n,
		       struct lrx_sink *sink)
{
	unsigned k = RTE_MIN(p->hybrid_k, p->n_stages);

	engine_vector_run(p, first, RTE_MAX(k, first), pkts, n, sink);
}
