/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

#include "mbuf_pool.h"
#include "ports.h"
#include "rte_pmd_synth.h"
#include "sink.h"

struct lrx_port *lrx_ports_by_index(struct lrx_ports *ports, unsigned index)
{
	for (unsigned i = 0; i < ports->n; i++)
		if (ports->ports[i].index == index)
			return &ports->ports[i];
	return NULL;
}

bool lrx_port_rx_timestamp_is_tsc(const struct lrx_port *port)
{
	/* net_synth writes rte_rdtsc() at rx_burst (docs/net_synth.md, hints) */
	return strcmp(port->driver, "net_synth") == 0;
}

static void probed_names(char *buf, size_t len)
{
	uint16_t pid;
	size_t used = 0;
	buf[0] = '\0';
	RTE_ETH_FOREACH_DEV(pid) {
		char name[RTE_ETH_NAME_MAX_LEN];
		if (rte_eth_dev_get_name_by_port(pid, name) < 0)
			continue;
		int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", name);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
	if (!used)
		snprintf(buf, len, "none");
}

/* An ethdev by its name, or by the name of its device (a PCI NIC whose
 * ethdev is named otherwise, e.g. mlx5 representors). */
static int port_lookup(const char *device, uint16_t *port_id)
{
	if (rte_eth_dev_get_port_by_name(device, port_id) == 0)
		return 0;
	uint16_t pid;
	RTE_ETH_FOREACH_DEV(pid) {
		struct rte_eth_dev_info info;
		if (rte_eth_dev_info_get(pid, &info) == 0 && info.device &&
		    strcmp(rte_dev_name(info.device), device) == 0) {
			*port_id = pid;
			return 0;
		}
	}
	return -ENODEV;
}

static int port_find(const struct lrx_port_conf *pc, struct lrx_port *port,
		     char *err, size_t err_len)
{
	if (port_lookup(pc->device, &port->port_id) == 0)
		return 0;
	/* not probed by EAL: hot-plug it (vdev or PCI) with its devargs */
	char devargs[2 * LRX_VALUE_LEN + 2];
	snprintf(devargs, sizeof(devargs), "%s%s%s", pc->device,
		 pc->devargs[0] ? "," : "", pc->devargs);
	int rc = rte_dev_probe(devargs);
	if (rc == 0 && port_lookup(pc->device, &port->port_id) == 0) {
		port->hotplugged = true;
		return 0;
	}
	char probed[512];
	probed_names(probed, sizeof(probed));
	snprintf(err, err_len,
		 "[port.%u] device = %s: no such ethdev, and probing '%s' failed (%s); ethdevs present: %s. "
		 "Give a vdev name (net_synth0, net_null0, net_pcap0, ...) with devargs, or a PCI address that EAL may probe (-a 0000:3b:00.0)",
		 pc->index, pc->device, devargs, rc < 0 ? strerror(-rc) : "no ethdev created",
		 probed);
	return -ENODEV;
}

struct offload_map {
	uint32_t lrx;
	uint64_t eth;
	const char *name;
};

static const struct offload_map offload_maps[] = {
	{LRX_OFFLOAD_RX_CKSUM, RTE_ETH_RX_OFFLOAD_CHECKSUM, "rx-cksum"},
	{LRX_OFFLOAD_VLAN_STRIP, RTE_ETH_RX_OFFLOAD_VLAN_STRIP, "vlan-strip"},
	{LRX_OFFLOAD_TIMESTAMP, RTE_ETH_RX_OFFLOAD_TIMESTAMP, "timestamp"},
	{LRX_OFFLOAD_LRO, RTE_ETH_RX_OFFLOAD_TCP_LRO, "lro"},
	{LRX_OFFLOAD_SCATTER, RTE_ETH_RX_OFFLOAD_SCATTER, "scatter"},
};

/* Decides the device configuration from what was asked and what the device
 * has; an offload it lacks is reported once and not used, or is an error
 * when the config marks it required. */
static int port_negotiate(const struct lrx_port_conf *pc, struct lrx_port *port,
			  const struct rte_eth_dev_info *info,
			  struct rte_eth_conf *eth_conf, char *err, size_t err_len)
{
	memset(eth_conf, 0, sizeof(*eth_conf));
	uint32_t wanted = pc->offloads;
	if (port->rx_queues > 1)
		wanted |= LRX_OFFLOAD_RSS; /* spreading over queues needs RSS */

	if (wanted & LRX_OFFLOAD_RSS) {
		uint64_t hf = info->flow_type_rss_offloads &
			      (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP);
		if (hf) {
			eth_conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
			eth_conf->rx_adv_conf.rss_conf.rss_hf = hf;
			if (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH)
				eth_conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_RSS_HASH;
			port->offloads_active |= LRX_OFFLOAD_RSS;
		} else {
			port->offloads_missing |= LRX_OFFLOAD_RSS;
		}
	}
	for (size_t i = 0; i < RTE_DIM(offload_maps); i++) {
		const struct offload_map *m = &offload_maps[i];
		if (!(wanted & m->lrx))
			continue;
		if ((info->rx_offload_capa & m->eth) == m->eth) {
			eth_conf->rxmode.offloads |= m->eth;
			port->offloads_active |= m->lrx;
		} else {
			port->offloads_missing |= m->lrx;
		}
	}
	uint32_t missing_required = port->offloads_missing & pc->offloads_required;
	if (missing_required) {
		char names[128];
		snprintf(err, err_len,
			 "[port.%u] offloads_required: %s not supported by %s (driver %s)",
			 pc->index, lrx_offload_names(missing_required, names, sizeof(names)),
			 port->name, port->driver);
		return -EINVAL;
	}
	if (port->offloads_missing) {
		char names[128];
		fprintf(stderr,
			"listrx: port %u (%s, driver %s): offload %s not supported by the device; continuing without it\n",
			port->index, port->name, port->driver,
			lrx_offload_names(port->offloads_missing, names, sizeof(names)));
	}
	if (port->rx_queues > 1 && !(port->offloads_active & LRX_OFFLOAD_RSS))
		fprintf(stderr,
			"listrx: port %u (%s): %u RX queues without RSS: the device decides how packets spread\n",
			port->index, port->name, port->rx_queues);
	return 0;
}

static bool driver_keeps_buffers(const char *driver)
{
	return strcmp(driver, "net_af_xdp") == 0;
}

/* The device's queue limits against what the config asks: RX queues as
 * configured; TX queues as configured, raised to one per polling lcore
 * where the device has them. An lcore beyond the device's TX queues shares
 * one under a lock (the sink), as VPP does when a device has fewer TX
 * queues than threads, so a receive-only run needs no more TX queues than
 * the device offers. 0, or -EINVAL with one message. */
static int port_queue_counts(const struct lrx_port_conf *pc, unsigned tx_lcores,
			     struct lrx_port *port, const struct rte_eth_dev_info *info,
			     char *err, size_t err_len)
{
	const bool synth = strcmp(info->driver_name, "net_synth") == 0;
	const bool rx = pc->rx_queues > info->max_rx_queues;
	if (rx || pc->tx_queues > info->max_tx_queues) {
		snprintf(err, err_len,
			 "[port.%u] %s = %u: %s (driver %s) has at most %u %s queues%s",
			 pc->index, rx ? "rx_queues" : "tx_queues", rx ? pc->rx_queues : pc->tx_queues,
			 port->name, info->driver_name,
			 rx ? info->max_rx_queues : info->max_tx_queues, rx ? "RX" : "TX",
			 !synth ? "" : rx ? "; net_synth advertises more with its devarg rxq=N (up to 64)"
					  : "; net_synth advertises more with its devarg txq=N (up to 64)");
		return -EINVAL;
	}
	port->rx_queues = pc->rx_queues;
	port->tx_queues = (uint16_t)RTE_MAX((unsigned)pc->tx_queues,
					    RTE_MIN(tx_lcores, (unsigned)info->max_tx_queues));
	return 0;
}

/* The RX pool of the port (*pool): its socket's, or one of its own for a
 * driver that keeps buffers after close. 0, or -errno with a message. */
static int port_rx_pool(const struct lrx_port_conf *pc, struct lrx_ports *ports,
			struct lrx_port *port, const struct rte_eth_dev_info *info,
			struct rte_mempool **pool, char *err, size_t err_len)
{
	int socket = rte_eth_dev_socket_id(port->port_id);
	port->socket_id = socket < 0 ? 0 : socket;
	struct rte_mempool *mp = ports->pools[port->socket_id];
	if (!mp)
		mp = ports->pools[0];
	if (driver_keeps_buffers(info->driver_name)) {
		/* DPDK 22.11 net_af_xdp takes its fill-ring buffers from the RX
		 * pool and does not return them at close: give it a pool of its
		 * own so that the exit check of listrx's pools stays exact */
		char name[RTE_MEMPOOL_NAMESIZE];
		snprintf(name, sizeof(name), "listrx_port%u", pc->index);
		unsigned n = ports->mbufs_per_pool + 4096u * port->rx_queues;
		port->own_pool = rte_pktmbuf_pool_create(name, n, mp->cache_size,
							 rte_pktmbuf_priv_size(mp),
							 rte_pktmbuf_data_room_size(mp), port->socket_id);
		if (!port->own_pool) {
			snprintf(err, err_len, "port %u (%s): mempool: %s", pc->index, port->name,
				 rte_strerror(rte_errno));
			return -ENOMEM;
		}
		mp = port->own_pool;
	}
	/* rte_eth_rx_queue_setup refuses a pool whose buffers are smaller
	 * than the headroom plus the device's minimum, and says only EINVAL:
	 * name the key and the size that works */
	unsigned room = rte_pktmbuf_data_room_size(mp);
	if (room < RTE_PKTMBUF_HEADROOM + info->min_rx_bufsize) {
		snprintf(err, err_len,
			 "[mempool] data_room = %u: port %u (%s, driver %s) needs buffers of at least %u bytes (headroom %u + the device's min_rx_bufsize %u); raise data_room",
			 room, pc->index, port->name, info->driver_name,
			 RTE_PKTMBUF_HEADROOM + info->min_rx_bufsize, RTE_PKTMBUF_HEADROOM,
			 info->min_rx_bufsize);
		return -EINVAL;
	}
	*pool = mp;
	return 0;
}

/* The RX queues on mp, the TX queues, with the negotiated offloads. */
static int port_queues_setup(const struct lrx_port_conf *pc, struct lrx_port *port,
			     const struct rte_eth_dev_info *info, const struct rte_eth_conf *eth_conf,
			     struct rte_mempool *mp, char *err, size_t err_len)
{
	int rc;
	struct rte_eth_rxconf rxconf = info->default_rxconf;
	rxconf.offloads = eth_conf->rxmode.offloads;
	for (uint16_t q = 0; q < port->rx_queues; q++) {
		rc = rte_eth_rx_queue_setup(port->port_id, q, port->rx_desc,
					    (unsigned)port->socket_id, &rxconf, mp);
		if (rc < 0) {
			snprintf(err, err_len, "port %u (%s): RX queue %u setup: %s", pc->index,
				 port->name, q, strerror(-rc));
			return rc;
		}
	}
	struct rte_eth_txconf txconf = info->default_txconf;
	txconf.offloads = eth_conf->txmode.offloads;
	if (port->tx_free_thresh)
		txconf.tx_free_thresh = port->tx_free_thresh;
	for (uint16_t q = 0; q < port->tx_queues; q++) {
		rc = rte_eth_tx_queue_setup(port->port_id, q, port->tx_desc,
					    (unsigned)port->socket_id, &txconf);
		if (rc < 0) {
			snprintf(err, err_len, "port %u (%s): TX queue %u setup: %s", pc->index,
				 port->name, q, strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* Promiscuous as configured, started, its link read (no wait). */
static int port_start(const struct lrx_port_conf *pc, const struct lrx_ports *ports,
		      struct lrx_port *port, char *err, size_t err_len)
{
	int rc;
	if (pc->promiscuous) {
		rc = rte_eth_promiscuous_enable(port->port_id);
		if (rc < 0 && rc != -ENOTSUP)
			fprintf(stderr, "listrx: port %u (%s): promiscuous mode: %s\n",
				pc->index, port->name, strerror(-rc));
	}
	rc = rte_eth_dev_start(port->port_id);
	if (rc < 0) {
		snprintf(err, err_len, "port %u (%s): rte_eth_dev_start: %s", pc->index,
			 port->name, strerror(-rc));
		return rc;
	}
	port->started = true;
	rc = lrx_sink_port_ready(port->port_id, port->tx_queues, ports->tx_lcores,
				 ports->tx_clean != LRX_TX_CLEAN_DRIVER);
	if (rc < 0) {
		snprintf(err, err_len, "port %u (%s): no memory for its TX queue locks", pc->index,
			 port->name);
		return rc;
	}
	struct rte_eth_link link;
	port->link_up = true; /* a driver that cannot say: assumed up */
	if (rte_eth_link_get_nowait(port->port_id, &link) == 0) {
		char text[RTE_ETH_LINK_MAX_STR_LEN];
		rte_eth_link_to_str(text, sizeof(text), &link);
		port->link_up = link.link_status == RTE_ETH_LINK_UP;
		if (!link.link_status)
			fprintf(stderr, "listrx: port %u (%s): %s (polling anyway)\n",
				pc->index, port->name, text);
	}
	return 0;
}

/* [run] tx_clean other than driver: net_synth stops cleaning TX queues in
 * its RX poll (rte_pmd_synth_set_rx_clean), so that its TX ring holds what
 * it sent until the mode's cleaning; xmit frees everything completed on
 * each transmit (tx_free_thresh = the ring's size). A DPDK PMD already
 * cleans on transmit only, below its tx_free_thresh. */
static int port_tx_clean(const struct lrx_port_conf *pc, const struct lrx_ports *ports,
			 struct lrx_port *port, char *err, size_t err_len)
{
	if (ports->tx_clean == LRX_TX_CLEAN_DRIVER || strcmp(port->driver, "net_synth") != 0)
		return 0;
	int rc = rte_pmd_synth_set_rx_clean(port->port_id, false);
	if (rc < 0) {
		snprintf(err, err_len, "port %u (%s): [run] tx_clean = %s: %s", pc->index,
			 port->name, lrx_tx_clean_names[ports->tx_clean], strerror(-rc));
		return rc;
	}
	if (ports->tx_clean == LRX_TX_CLEAN_XMIT)
		port->tx_free_thresh = port->tx_desc;
	return 0;
}

/* rx-poll and tx-poll clean with rte_eth_tx_done_cleanup: a driver
 * without it (net_null frees on transmit) cannot run them. */
static int port_tx_clean_check(const struct lrx_port_conf *pc, const struct lrx_ports *ports,
			       const struct lrx_port *port, char *err, size_t err_len)
{
	if (ports->tx_clean != LRX_TX_CLEAN_RX_POLL && ports->tx_clean != LRX_TX_CLEAN_TX_POLL)
		return 0;
	int rc = rte_eth_tx_done_cleanup(port->port_id, 0, 0);
	if (rc != -ENOTSUP)
		return 0;
	snprintf(err, err_len,
		 "[run] tx_clean = %s: port %u (%s, driver %s) has no rte_eth_tx_done_cleanup, so the poll cannot clean its TX queues; use driver or xmit",
		 lrx_tx_clean_names[ports->tx_clean], pc->index, port->name, port->driver);
	return -EINVAL;
}

static int port_setup(const struct lrx_port_conf *pc, struct lrx_ports *ports,
		      struct lrx_port *port, char *err, size_t err_len)
{
	struct rte_eth_dev_info info;
	int rc = rte_eth_dev_info_get(port->port_id, &info);
	if (rc < 0) {
		snprintf(err, err_len, "port %u (%s): rte_eth_dev_info_get: %s",
			 pc->index, port->name, strerror(-rc));
		return rc;
	}
	snprintf(port->driver, sizeof(port->driver), "%s", info.driver_name);
	rc = port_queue_counts(pc, ports->tx_lcores, port, &info, err, err_len);
	if (rc < 0)
		return rc;
	struct rte_eth_conf eth_conf;
	rc = port_negotiate(pc, port, &info, &eth_conf, err, err_len);
	if (rc < 0)
		return rc;
	rc = rte_eth_dev_configure(port->port_id, port->rx_queues, port->tx_queues, &eth_conf);
	if (rc < 0) {
		snprintf(err, err_len, "port %u (%s): rte_eth_dev_configure(%u rx, %u tx): %s",
			 pc->index, port->name, port->rx_queues, port->tx_queues, strerror(-rc));
		return rc;
	}
	port->configured = true;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port->port_id, &port->rx_desc, &port->tx_desc);
	if (rc < 0) {
		snprintf(err, err_len, "port %u (%s): descriptor counts: %s", pc->index,
			 port->name, strerror(-rc));
		return rc;
	}
	if (pc->mtu) {
		rc = rte_eth_dev_set_mtu(port->port_id, pc->mtu);
		if (rc < 0) {
			snprintf(err, err_len, "[port.%u] mtu = %u: %s (device range %u..%u)",
				 pc->index, pc->mtu, strerror(-rc), info.min_mtu, info.max_mtu);
			return -EINVAL;
		}
	}
	struct rte_mempool *mp = NULL;
	rc = port_rx_pool(pc, ports, port, &info, &mp, err, err_len);
	rc = rc ?: port_tx_clean(pc, ports, port, err, err_len);
	rc = rc ?: port_queues_setup(pc, port, &info, &eth_conf, mp, err, err_len);
	rc = rc ?: port_start(pc, ports, port, err, err_len);
	return rc ?: port_tx_clean_check(pc, ports, port, err, err_len);
}

void lrx_ports_link_check(struct lrx_ports *ports, double now, bool final)
{
	for (unsigned i = 0; i < ports->n; i++) {
		struct lrx_port *port = &ports->ports[i];
		struct rte_eth_link link;
		if (!port->started || rte_eth_link_get_nowait(port->port_id, &link) != 0)
			continue;
		bool up = link.link_status == RTE_ETH_LINK_UP;
		if (up != port->link_up) {
			if (!up) {
				port->link_down_events++;
				port->link_down_since = now;
				fprintf(stderr,
					"listrx: [%.1fs] port %u (%s): link down (polling on; RX gets nothing until it is up)\n",
					now, port->index, port->name);
			} else {
				port->link_down_s += now - port->link_down_since;
				fprintf(stderr, "listrx: [%.1fs] port %u (%s): link up after %.3f s down\n",
					now, port->index, port->name, now - port->link_down_since);
			}
			port->link_up = up;
		}
		if (final && !port->link_up) {
			port->link_down_s += now - port->link_down_since;
			port->link_down_since = now;
		}
	}
}

/* An explicit pool must hold what the stages can keep between polls
 * (socket queues no reader drains) and still fill a burst per RX queue:
 * with less, RX finds the pool empty once the queues fill, and a run
 * with --packets never ends (rx_nombuf only). */
static int pool_check_held(const struct lrx_config *conf, const struct lrx_port_conf *pcs,
			   unsigned n_ports, uint64_t held, char *err, size_t err_len)
{
	uint64_t queues = 0;
	for (unsigned i = 0; i < n_ports; i++)
		queues += pcs[i].rx_queues;
	const uint64_t need = held + queues * conf->pipeline.burst;
	if (!conf->mbufs || held == 0 || conf->mbufs >= need)
		return 0;
	snprintf(err, err_len,
		 "[mempool] mbufs = %u: the stages can hold %" PRIu64 " packets between polls (socket queues with udp_reader=none or udp_read_batch, RPS backlogs: their buffers over %u-byte mbufs) and each of %" PRIu64 " RX queue(s) needs a burst of %u: raise mbufs to %" PRIu64 " or more, or lower what they hold (udp_rcvbuf, max_backlog)",
		 conf->mbufs, held,
		 (unsigned)(sizeof(struct rte_mbuf) + conf->priv_size + conf->data_room), queues,
		 conf->pipeline.burst, need);
	return -EINVAL;
}

static int pools_create(const struct lrx_config *conf, const struct lrx_port_conf *pcs,
			unsigned n_ports, unsigned extra_mbufs, uint64_t held,
			struct lrx_ports *ports, char *err, size_t err_len)
{
	int rc = pool_check_held(conf, pcs, n_ports, held, err, err_len);
	if (rc < 0)
		return rc;
	unsigned need = extra_mbufs + (unsigned)RTE_MIN(held, (uint64_t)UINT32_MAX / 2);
	for (unsigned i = 0; i < n_ports; i++)
		need += (unsigned)pcs[i].rx_queues * pcs[i].rx_desc +
			RTE_MAX((unsigned)pcs[i].tx_queues, ports->tx_lcores) * pcs[i].tx_desc;
	need += rte_lcore_count() * (conf->mempool_cache * 2 + 4 * LRX_BURST_MAX);
	unsigned n = conf->mbufs ? conf->mbufs : need + 4096;
	/* mempools are most efficient at 2^k - 1 elements */
	unsigned pow2 = 1;
	while (pow2 - 1 < n)
		pow2 <<= 1;
	if (!conf->mbufs)
		n = pow2 - 1;
	ports->mbufs_per_pool = n;
	ports->pool_cache = conf->mempool_cache;
	ports->pool_data_room = conf->data_room;
	ports->pool_priv_size = conf->priv_size;
	bool any = false;
	for (unsigned s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		bool used = s == rte_socket_id();
		for (unsigned i = 0; i < ports->n; i++)
			used |= ports->ports[i].socket_id == (int)s;
		if (!used)
			continue;
		char name[RTE_MEMPOOL_NAMESIZE];
		snprintf(name, sizeof(name), "listrx_mbuf_%u", s);
		ports->pools[s] = lrx_mbuf_pool_create(name, n, conf->mempool_cache,
							  (uint16_t)conf->priv_size,
							  (uint16_t)conf->data_room, (int)s);
		if (!ports->pools[s]) {
			snprintf(err, err_len,
				 "mempool of %u mbufs (%u-byte data room) on socket %u: %s (the EAL memory is too small for it: raise -m, or lower [mempool] mbufs or data_room)",
				 n, conf->data_room, s, rte_strerror(rte_errno));
			return -ENOMEM;
		}
		ports->pool_packed = ports->pools[s]->flags & RTE_MEMPOOL_F_NO_IOVA_CONTIG;
		any = true;
	}
	return any ? 0 : -ENOMEM;
}

/* A --vdev whose driver refused its devargs stays on the vdev bus
 * unprobed, and rte_eal_init goes on (a bus probe failure is only
 * logged). Hot-plugging its name for a [port.N] device would probe it
 * again with the config's devargs (rte_dev_probe replaces the refused
 * ones), and the run would measure a device nobody asked for. So every
 * --vdev of the EAL options must have been probed, or the run ends. */
static int vdevs_check(char *err, size_t err_len)
{
	const struct rte_devargs *da;

	RTE_EAL_DEVARGS_FOREACH("vdev", da) {
		struct rte_dev_iterator it;
		struct rte_device *dev;
		bool probed = false;
		RTE_DEV_FOREACH(dev, "bus=vdev", &it)
			probed |= strcmp(rte_dev_name(dev), da->name) == 0 &&
				  rte_dev_is_probed(dev);
		if (!probed) {
			snprintf(err, err_len,
				 "--vdev %s%s%s: its driver refused it (its message is above); nothing is probed in its place",
				 da->name, da->args && da->args[0] ? "," : "",
				 da->args ? da->args : "");
			return -EINVAL;
		}
	}
	return 0;
}

int lrx_ports_open(const struct lrx_config *conf, unsigned tx_lcores,
		   unsigned extra_mbufs, uint64_t held_mbufs, struct lrx_ports *ports,
		   char *err, size_t err_len)
{
	memset(ports, 0, sizeof(*ports));
	int refused = vdevs_check(err, err_len);
	if (refused < 0)
		return refused;
	ports->tx_lcores = tx_lcores;
	ports->tx_clean = conf->tx_clean;
	struct lrx_port_conf auto_confs[LRX_MAX_PORTS];
	const struct lrx_port_conf *pcs = conf->ports;
	unsigned n_ports = conf->n_ports;
	if (n_ports == 0) {
		/* every ethdev EAL probed is a port, one RX queue each */
		uint16_t pid;
		RTE_ETH_FOREACH_DEV(pid) {
			if (n_ports == LRX_MAX_PORTS)
				break;
			struct lrx_port_conf *pc = &auto_confs[n_ports];
			*pc = (struct lrx_port_conf){.index = n_ports, .rx_queues = 1,
						     .tx_queues = 1, .rx_desc = 1024,
						     .tx_desc = 1024, .promiscuous = true,
						     .forward_to = -1};
			rte_eth_dev_get_name_by_port(pid, pc->device);
			n_ports++;
		}
		if (n_ports == 0) {
			snprintf(err, err_len,
				 "no ports: EAL probed no ethdev and the config names none. Add --vdev net_synth0 (or net_null0) to the EAL options, or a [port.N] section");
			return -ENODEV;
		}
		pcs = auto_confs;
	}
	for (unsigned i = 0; i < n_ports; i++) {
		struct lrx_port *port = &ports->ports[ports->n];
		*port = (struct lrx_port){.index = pcs[i].index, .forward_port_id = -1,
					  .rx_queues = pcs[i].rx_queues,
					  .tx_queues = pcs[i].tx_queues,
					  .rx_desc = pcs[i].rx_desc, .tx_desc = pcs[i].tx_desc};
		int rc = port_find(&pcs[i], port, err, err_len);
		if (rc < 0)
			return rc;
		for (unsigned j = 0; j < ports->n; j++)
			if (ports->ports[j].port_id == port->port_id) {
				snprintf(err, err_len, "[port.%u] device = %s: same ethdev as [port.%u]",
					 pcs[i].index, pcs[i].device, ports->ports[j].index);
				return -EINVAL;
			}
		rte_eth_dev_get_name_by_port(port->port_id, port->name);
		int socket = rte_eth_dev_socket_id(port->port_id);
		port->socket_id = socket < 0 ? (int)rte_socket_id() : socket;
		ports->n++;
	}
	int rc = pools_create(conf, pcs, n_ports, extra_mbufs, held_mbufs, ports, err,
			      err_len);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < ports->n; i++) {
		rc = port_setup(&pcs[i], ports, &ports->ports[i], err, err_len);
		if (rc < 0)
			return rc;
	}
	for (unsigned i = 0; i < ports->n; i++) {
		if (pcs[i].forward_to < 0)
			continue;
		struct lrx_port *to = lrx_ports_by_index(ports, (unsigned)pcs[i].forward_to);
		ports->ports[i].forward_port_id = to ? to->port_id : -1;
	}
	return 0;
}

void lrx_ports_close(struct lrx_ports *ports)
{
	for (unsigned i = 0; i < ports->n; i++) {
		struct lrx_port *port = &ports->ports[i];
		lrx_sink_port_ready(port->port_id, 0, 0, false);
		if (port->started)
			rte_eth_dev_stop(port->port_id);
		port->started = false;
		if (port->configured || port->hotplugged)
			rte_eth_dev_close(port->port_id);
		port->configured = false;
	}
}

unsigned lrx_ports_pools_in_use(const struct lrx_ports *ports)
{
	unsigned in_use = 0;
	for (unsigned s = 0; s < RTE_MAX_NUMA_NODES; s++)
		if (ports->pools[s])
			in_use += rte_mempool_in_use_count(ports->pools[s]);
	return in_use;
}

unsigned lrx_ports_pools_over(const struct lrx_ports *ports)
{
	unsigned over = 0;
	for (unsigned s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		const struct rte_mempool *mp = ports->pools[s];
		if (!mp)
			continue;
		/* rte_mempool_avail_count without its cap (the pool's own count
		 * through its ops: rte_mempool_ops_get_count is not exported) */
		uint64_t avail = rte_mempool_get_ops(mp->ops_index)->get_count(mp);
		for (unsigned l = 0; mp->cache_size != 0 && l < RTE_MAX_LCORE; l++)
			avail += mp->local_cache[l].len;
		over += avail > mp->size ? (unsigned)(avail - mp->size) : 0;
	}
	return over;
}

unsigned lrx_ports_driver_held(const struct lrx_ports *ports)
{
	unsigned held = 0;
	for (unsigned i = 0; i < ports->n; i++)
		if (ports->ports[i].own_pool)
			held += rte_mempool_in_use_count(ports->ports[i].own_pool);
	return held;
}

void lrx_ports_free_pools(struct lrx_ports *ports)
{
	for (unsigned i = 0; i < ports->n; i++) {
		rte_mempool_free(ports->ports[i].own_pool);
		ports->ports[i].own_pool = NULL;
	}
	for (unsigned s = 0; s < RTE_MAX_NUMA_NODES; s++) {
		rte_mempool_free(ports->pools[s]);
		ports->pools[s] = NULL;
	}
}
