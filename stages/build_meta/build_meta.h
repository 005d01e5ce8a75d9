/* SPDX-License-Identifier: BSD-3-Clause
 * build-meta: the driver's build_skb + eth_type_trans. Fills the skb-like
 * struct lrx_meta of every packet (L2 parse with up to two VLAN tags,
 * protocol, offsets, packet type, NIC hints) in the mbuf private area or in
 * a separate metadata pool. See docs/stages.md, section "build-meta".
 */
#ifndef LISTRX_BUILD_META_H
#define LISTRX_BUILD_META_H

#include "meta.h"

#define BUILD_META_STAGE_NAME "build-meta"

/* Metadata sizes the bench sweeps: small, about sk_buff, sk_buff +
 * skb_shared_info (232 + 320). */
#define BUILD_META_SIZE_SMALL 64
#define BUILD_META_SIZE_SKB 256
#define BUILD_META_SIZE_KERNEL 552
#define BUILD_META_SIZE_MAX 4096

/* placement=pool: slots in the metadata ring (see docs: a slot is reused
 * after this many later allocations, so a packet must leave the pipeline
 * within that many; the engines bound what one poll has in flight by
 * LRX_SINK_MAX). */
#define BUILD_META_POOL_SLOTS_DEFAULT 8192
#define BUILD_META_POOL_SLOTS_MIN 2048

#endif
