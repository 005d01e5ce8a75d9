/* SPDX-License-Identifier: BSD-3-Clause
 * One way to create a packet-buffer pool, for the dataplane's ports and
 * net_synth's pre-built frames alike.
 */
#ifndef LISTRX_MBUF_POOL_H
#define LISTRX_MBUF_POOL_H

#include <stdint.h>

#include <rte_mempool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* rte_pktmbuf_pool_create, but without hugepages the objects are packed:
 * with IOVA-contiguous objects (the default) and 4 KB pages DPDK places one
 * 2.3 KB mbuf per page (rte_mempool_op_calc_mem_size_helper keeps an object
 * inside a page), so every mbuf header and frame head falls into the same
 * few L1d sets (the set index is the page offset) and any burst of more
 * than 8 packets evicts itself. Without hugepages nothing DMAs into these
 * buffers, so IOVA contiguity buys nothing (RTE_MEMPOOL_F_NO_IOVA_CONTIG).
 * NULL with rte_errno set, as rte_pktmbuf_pool_create. */
struct rte_mempool *lrx_mbuf_pool_create(const char *name, unsigned n, unsigned cache,
					 uint16_t priv, uint16_t room, int socket);

#ifdef __cplusplus
}
#endif

#endif
