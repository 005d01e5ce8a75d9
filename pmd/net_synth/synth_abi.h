/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The driver side of DPDK 22.11's ethdev and vdev ABI, declared here because
 * Debian's libdpdk-dev does not install the "driver SDK" headers
 * (ethdev_driver.h, ethdev_vdev.h, bus_vdev_driver.h, dev_driver.h).
 *
 * Only what net_synth uses is declared, and only the leading members of
 * structures that DPDK allocates (rte_eth_dev, rte_eth_dev_data), so this
 * file states the layout of DPDK 22.11 (ABI DPDK_23) and nothing else:
 * the build refuses other versions, and synth_probe() checks the layout at
 * run time against the public API (port name, port id, MAC address) before
 * it trusts it.
 */
#ifndef SYNTH_ABI_H
#define SYNTH_ABI_H

#include <pthread.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_dev.h>
#include <rte_ethdev.h>
#include <rte_version.h>

#if RTE_VERSION < RTE_VERSION_NUM(22, 11, 0, 0) ||                          \
	RTE_VERSION >= RTE_VERSION_NUM(22, 12, 0, 0)
#error "net_synth declares the DPDK 22.11 driver ABI; other versions need the driver SDK headers"
#endif

/* dev_driver.h */
struct rte_driver {
	TAILQ_ENTRY(rte_driver) next;
	const char *name;
	const char *alias;
};

struct rte_device {
	TAILQ_ENTRY(rte_device) next;
	const char *name;
	const char *bus_info;
	const struct rte_driver *driver;
	const struct rte_bus *bus;
	int numa_node;
	struct rte_devargs *devargs;
};

/* bus_vdev_driver.h */
struct rte_vdev_device {
	TAILQ_ENTRY(rte_vdev_device) next;
	struct rte_device device;
};

typedef int(rte_vdev_probe_t)(struct rte_vdev_device *dev);
typedef int(rte_vdev_remove_t)(struct rte_vdev_device *dev);
typedef int(rte_vdev_dma_map_t)(struct rte_vdev_device *dev, void *addr,
				uint64_t iova, size_t len);

struct rte_vdev_driver {
	TAILQ_ENTRY(rte_vdev_driver) next;
	struct rte_driver driver;
	rte_vdev_probe_t *probe;
	rte_vdev_remove_t *remove;
	rte_vdev_dma_map_t *dma_map;
	rte_vdev_dma_map_t *dma_unmap;
	uint32_t drv_flags;
};

void rte_vdev_register(struct rte_vdev_driver *driver);

#define SYNTH_REGISTER_VDEV(nm, vdrv)                                          \
	RTE_INIT(vdrvinitfn_##vdrv)                                            \
	{                                                                      \
		(vdrv).driver.name = RTE_STR(nm);                              \
		rte_vdev_register(&(vdrv));                                    \
	}                                                                      \
	RTE_PMD_EXPORT_NAME(nm, __COUNTER__)

/* ethdev_driver.h: leading members only (DPDK allocates these) */
struct rte_eth_dev_data;
struct eth_dev_ops;

struct rte_eth_dev {
	eth_rx_burst_t rx_pkt_burst;
	eth_tx_burst_t tx_pkt_burst;
	eth_tx_prep_t tx_pkt_prepare;
	eth_rx_queue_count_t rx_queue_count;
	eth_rx_descriptor_status_t rx_descriptor_status;
	eth_tx_descriptor_status_t tx_descriptor_status;
	struct rte_eth_dev_data *data;
	void *process_private;
	const struct eth_dev_ops *dev_ops;
	struct rte_device *device;
	struct rte_intr_handle *intr_handle;
	/* link_intr_cbs, callbacks, state, security_ctx follow */
};

struct rte_eth_dev_data {
	char name[RTE_ETH_NAME_MAX_LEN];
	void **rx_queues;
	void **tx_queues;
	uint16_t nb_rx_queues;
	uint16_t nb_tx_queues;
	struct rte_eth_dev_sriov sriov;
	void *dev_private;
	struct rte_eth_link dev_link;
	struct rte_eth_conf dev_conf;
	uint16_t mtu;
	uint32_t min_rx_buf_size;
	uint64_t rx_mbuf_alloc_failed;
	struct rte_ether_addr *mac_addrs;
	uint64_t mac_pool_sel[RTE_ETH_NUM_RECEIVE_MAC_ADDR];
	struct rte_ether_addr *hash_mac_addrs;
	uint16_t port_id;
	__extension__ uint8_t promiscuous : 1, scattered_rx : 1,
		all_multicast : 1, dev_started : 1, lro : 1,
		dev_configured : 1, flow_configured : 1;
	uint8_t rx_queue_state[RTE_MAX_QUEUES_PER_PORT];
	uint8_t tx_queue_state[RTE_MAX_QUEUES_PER_PORT];
	uint32_t dev_flags;
	int numa_node;
	/* vlan_filter_conf, owner, representor ids, flow mutex follow */
};

typedef void (*synth_op_unused_t)(void);

/* every slot of DPDK 22.11's struct eth_dev_ops, in order */
struct eth_dev_ops {
	int (*dev_configure)(struct rte_eth_dev *dev);
	int (*dev_start)(struct rte_eth_dev *dev);
	int (*dev_stop)(struct rte_eth_dev *dev);
	synth_op_unused_t dev_set_link_up;
	synth_op_unused_t dev_set_link_down;
	int (*dev_close)(struct rte_eth_dev *dev);
	synth_op_unused_t dev_reset;
	int (*link_update)(struct rte_eth_dev *dev, int wait_to_complete);
	synth_op_unused_t is_removed;
	int (*promiscuous_enable)(struct rte_eth_dev *dev);
	int (*promiscuous_disable)(struct rte_eth_dev *dev);
	int (*allmulticast_enable)(struct rte_eth_dev *dev);
	int (*allmulticast_disable)(struct rte_eth_dev *dev);
	synth_op_unused_t mac_addr_remove;
	synth_op_unused_t mac_addr_add;
	synth_op_unused_t mac_addr_set;
	synth_op_unused_t set_mc_addr_list;
	int (*mtu_set)(struct rte_eth_dev *dev, uint16_t mtu);
	int (*stats_get)(struct rte_eth_dev *dev, struct rte_eth_stats *stats);
	int (*stats_reset)(struct rte_eth_dev *dev);
	int (*xstats_get)(struct rte_eth_dev *dev, struct rte_eth_xstat *stats,
			  unsigned int n);
	int (*xstats_reset)(struct rte_eth_dev *dev);
	int (*xstats_get_names)(struct rte_eth_dev *dev,
				struct rte_eth_xstat_name *names,
				unsigned int size);
	synth_op_unused_t queue_stats_mapping_set;
	int (*dev_infos_get)(struct rte_eth_dev *dev,
			     struct rte_eth_dev_info *info);
	synth_op_unused_t rxq_info_get;
	synth_op_unused_t txq_info_get;
	synth_op_unused_t rx_burst_mode_get;
	synth_op_unused_t tx_burst_mode_get;
	synth_op_unused_t fw_version_get;
	const uint32_t *(*dev_supported_ptypes_get)(struct rte_eth_dev *dev);
	synth_op_unused_t dev_ptypes_set;
	synth_op_unused_t vlan_filter_set;
	synth_op_unused_t vlan_tpid_set;
	synth_op_unused_t vlan_strip_queue_set;
	synth_op_unused_t vlan_offload_set;
	synth_op_unused_t vlan_pvid_set;
	synth_op_unused_t rx_queue_start;
	synth_op_unused_t rx_queue_stop;
	synth_op_unused_t tx_queue_start;
	synth_op_unused_t tx_queue_stop;
	int (*rx_queue_setup)(struct rte_eth_dev *dev, uint16_t queue_id,
			      uint16_t nb_desc, unsigned int socket_id,
			      const struct rte_eth_rxconf *conf,
			      struct rte_mempool *mb_pool);
	void (*rx_queue_release)(struct rte_eth_dev *dev, uint16_t queue_id);
	synth_op_unused_t rx_queue_intr_enable;
	synth_op_unused_t rx_queue_intr_disable;
	int (*tx_queue_setup)(struct rte_eth_dev *dev, uint16_t queue_id,
			      uint16_t nb_desc, unsigned int socket_id,
			      const struct rte_eth_txconf *conf);
	void (*tx_queue_release)(struct rte_eth_dev *dev, uint16_t queue_id);
	int (*tx_done_cleanup)(void *txq, uint32_t free_cnt);
	/* the remaining slots (LED, flow control, RSS, ... ) stay NULL: the
	 * object is static, so they are zero-filled by C */
	synth_op_unused_t rest[64];
};

struct rte_eth_dev *rte_eth_dev_allocate(const char *name);
struct rte_eth_dev *rte_eth_dev_allocated(const char *name);
int rte_eth_dev_release_port(struct rte_eth_dev *eth_dev);
void rte_eth_dev_probing_finish(struct rte_eth_dev *dev);

#endif /* SYNTH_ABI_H */
