/* SPDX-License-Identifier: BSD-3-Clause
 * GRO stage: the kernel's dev_gro_receive (net/core/gro.c) over mbufs.
 * The stage registers itself under the name "gro" (and its DPDK rte_gro
 * peer under "rte-gro"); the engines reach it
 * through stages/stage.h only. This header gives the limits it is built
 * with and the names of its config keys and counters, for tests and docs
 * (docs/gro.md describes the semantics and where they differ from the
 * kernel and from DPDK rte_gro).
 */
#ifndef LISTRX_GRO_H
#define LISTRX_GRO_H

/* as include/net/gro.h / net/core/gro.c */
#define GRO_HASH_BUCKETS 8
#define MAX_GRO_SKBS 8
#define GRO_LEGACY_MAX_SIZE 65536u
#define GRO_MAX_SIZE (8u * 65535u) /* BIG TCP ceiling (gro_max_size) */
#define UDP_GRO_CNT_MAX 64         /* net/ipv4/udp_offload.c */

/* Release list capacity: one engine call may hand LRX_BURST_MAX packets
 * and flush everything held (GRO_HASH_BUCKETS * MAX_GRO_SKBS); the engine
 * drains release() after every call (stage.h), so this never fills. */
#define GRO_RELEASE_RING 1024

/* Config keys: flush_age_us, flush_timeout_us, max_size, udp_gro,
 * csum_verify, use_meta; gro also clock, hash (nic|compute) and
 * early_order (kernel|flow); the stage rte-gro (DPDK rte_gro, the peer)
 * mode (heavy|light) (see the key tables in gro.c and docs/gro.md).
 * Counters: segments_in, packets_out, merged, held, flush_flags,
 * flush_short, flush_mismatch, flush_size, flush_not_eligible,
 * flush_evict, flush_poll_end, flush_age, bad_csum, not_eligible,
 * udp_merged, release_overflow. */

#endif
