/* SPDX-License-Identifier: BSD-3-Clause
 * The port layer: opens the ports the config names (or every probed ethdev),
 * negotiates queues and offloads against rte_eth_dev_info, starts them. */
#ifndef LISTRX_PORTS_H
#define LISTRX_PORTS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h> /* RTE_ETH_NAME_MAX_LEN */
#include <rte_mempool.h>

#include "config.h"

struct lrx_port {
	unsigned index;            /* N of [port.N] (auto: ethdev order) */
	uint16_t port_id;          /* ethdev port id */
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[64];
	uint16_t rx_queues, tx_queues;
	uint16_t rx_desc, tx_desc;
	uint16_t tx_free_thresh;   /* rte_eth_txconf's; 0: the driver's default */
	uint32_t offloads_active;  /* enum lrx_offload bits in use */
	uint32_t offloads_missing; /* asked for, device lacks them */
	int forward_port_id;       /* -1: deliver locally */
	bool configured, started, hotplugged;
	int socket_id;
	/* a pool of its own, for a driver that keeps buffers after close */
	struct rte_mempool *own_pool;
	/* link state, as the monitor saw it (lrx_port_link_check) */
	bool link_up;
	unsigned link_down_events;   /* up -> down transitions during the run */
	double link_down_s;          /* time down during the run */
	double link_down_since;      /* run seconds when it went down */
};

struct lrx_ports {
	unsigned n;
	struct lrx_port ports[LRX_MAX_PORTS];
	struct rte_mempool *pools[RTE_MAX_NUMA_NODES];
	unsigned mbufs_per_pool;
	/* what every pool was made with: per-lcore cache, mbuf data room and
	 * private area, and packed (RTE_MEMPOOL_F_NO_IOVA_CONTIG: objects
	 * may cross 4 KB pages) or IOVA-contiguous (rte_pktmbuf_pool_create) */
	unsigned pool_cache, pool_data_room, pool_priv_size;
	bool pool_packed;
	unsigned tx_lcores;          /* polling lcores, each transmits */
	enum lrx_tx_clean tx_clean;  /* [run] tx_clean */
};

/* Finds or probes every port, creates the mempools, configures, sets up
 * queues (a TX queue per polling lcore of the tx_lcores where the device
 * has them; beyond, lcores share them: lrx_sink_port_ready) and starts.
 * The pools get extra_mbufs more than the rings take, and held_mbufs
 * for what the stages can hold between polls (an explicit [mempool]
 * mbufs below that and a burst per RX queue is refused). Returns 0;
 * -ENODEV/-EINVAL with a message (bad configuration: the caller exits 2),
 * or another -errno (run-time failure). */
int lrx_ports_open(const struct lrx_config *conf, unsigned tx_lcores,
		   unsigned extra_mbufs, uint64_t held_mbufs, struct lrx_ports *ports,
		   char *err, size_t err_len);
/* The monitor's link watch: reads each port's link (no wait) and counts
 * a transition with a message on stderr; `final` closes the down time at
 * the end of the run. now = run seconds. */
void lrx_ports_link_check(struct lrx_ports *ports, double now, bool final);

/* Stops and closes every port (buffers in RX rings return to the pools). */
void lrx_ports_close(struct lrx_ports *ports);
/* mbufs not back in listrx's pools (after lrx_ports_close). */
unsigned lrx_ports_pools_in_use(const struct lrx_ports *ports);
/* mbufs in listrx's pools beyond what they were made with: an mbuf freed
 * twice is in the pool twice (rte_mempool_avail_count caps at the pool's
 * size, which hides it); after the lcores stopped. */
unsigned lrx_ports_pools_over(const struct lrx_ports *ports);
/* mbufs kept by drivers known to keep buffers after close (net_af_xdp
 * keeps its fill ring), in the pools given to those ports alone. */
unsigned lrx_ports_driver_held(const struct lrx_ports *ports);
void lrx_ports_free_pools(struct lrx_ports *ports);

struct lrx_port *lrx_ports_by_index(struct lrx_ports *ports, unsigned index);
/* The port stamps RX timestamps with the TSC of the polling lcore, so
 * rte_rdtsc() - stamp is a latency. Only net_synth does (hints=timestamp);
 * NICs stamp with their own clock, which listrx does not relate to the TSC. */
bool lrx_port_rx_timestamp_is_tsc(const struct lrx_port *port);

#endif
