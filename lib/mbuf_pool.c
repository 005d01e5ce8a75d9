/* SPDX-License-Identifier: BSD-3-Clause */
#include "mbuf_pool.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

struct rte_mempool *lrx_mbuf_pool_create(const char *name, unsigned n, unsigned cache,
					 uint16_t priv, uint16_t room, int socket)
{
	if (rte_eal_has_hugepages())
		return rte_pktmbuf_pool_create(name, n, cache, priv, room, socket);
	struct rte_pktmbuf_pool_private mbp = {
		.mbuf_data_room_size = room,
		.mbuf_priv_size = priv,
	};
	struct rte_mempool *mp = rte_mempool_create_empty(
		name, n, sizeof(struct rte_mbuf) + priv + room, cache,
		sizeof(mbp), socket, RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!mp)
		return NULL;
	if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), NULL)) {
		rte_mempool_free(mp);
		rte_errno = EINVAL;
		return NULL;
	}
	rte_pktmbuf_pool_init(mp, &mbp);
	if (rte_mempool_populate_default(mp) < 0) {
		rte_mempool_free(mp);
		rte_errno = ENOMEM;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	return mp;
}
