/* SPDX-License-Identifier: BSD-3-Clause
 * net_synth's private API, as DPDK drivers export theirs (rte_pmd_ixgbe.h,
 * rte_pmd_i40e.h): what the ethdev API has no call for.
 */
#ifndef RTE_PMD_SYNTH_H
#define RTE_PMD_SYNTH_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the RX poll of queue i frees what TX queue i completed, as a
 * kernel driver cleans its TX ring from its RX NAPI poll (ixgbe_poll ->
 * ixgbe_clean_tx_irq): on by default. Off, the TX ring holds transmitted
 * mbufs as a DPDK PMD's does, until rte_eth_tx_done_cleanup(), a transmit
 * that finds fewer free descriptors than the queue's tx_free_thresh (or
 * too few for its burst), or the port's stop: the application decides
 * when completions are cleaned. Before rte_eth_dev_start.
 * 0, -ENODEV (no such port), -ENOTSUP (not a net_synth port) or -EBUSY
 * (started). */
int rte_pmd_synth_set_rx_clean(uint16_t port_id, bool on);

#ifdef __cplusplus
}
#endif

#endif
