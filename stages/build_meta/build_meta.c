/* SPDX-License-Identifier: BSD-3-Clause
 * build-meta: what a NIC driver does between the RX descriptor and the
 * stack (napi_build_skb + the hint setters + eth_type_trans), with the
 * choices the kernel hard-codes made parameters:
 *   placement  priv (mbuf private area, like build_skb around the buffer)
 *              | pool (a separate metadata ring, like skbuff_head_cache)
 *   alloc      packet | bulk (pool: one slot per packet, or one contiguous
 *              run per burst as napi_skb_cache_get's bulk refill)
 *   clear      memset (per packet, as __build_skb) | bulk (one memset over
 *              the contiguous run of the burst, as Brouer's generic-XDP evaluation (2017) proposes) | none
 *   hints      each NIC hint (hash, csum, vlan, timestamp, ptype) on/off
 * Packets are not modified: VLAN tags stay in the frame (their TCIs go to
 * the metadata) and offsets count from the first byte of the frame.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_prefetch.h>

#include "prefetch.h"

#include "build_meta.h"
#include "meta.h"
#include "stage.h"
#include "static_entries.h"
#include "stage_keys.h"

enum build_meta_placement { BM_PLACE_PRIV, BM_PLACE_POOL, BM_PLACE_AUTO };
enum build_meta_alloc { BM_ALLOC_PACKET, BM_ALLOC_BULK };
enum build_meta_clear { BM_CLEAR_MEMSET, BM_CLEAR_BULK, BM_CLEAR_NONE };
enum build_meta_host { BM_HOST_ANY, BM_HOST_PORT, BM_HOST_ADDR };

/* [stage.build-meta] vlans: the 802.1Q VLAN devices (ip link add link
 * PORT type vlan id VID), each on every port or on one */
#define BM_VLAN_DEVS_MAX 64
#define BM_VLAN_ANY_PORT UINT16_MAX
struct build_meta_vlan_dev {
	uint16_t vid;
	uint16_t port;           /* BM_VLAN_ANY_PORT: every port */
};

struct build_meta_ctx {
	/* read for every packet */
	uint16_t prefetch;      /* packets ahead in the burst loop */
	uint8_t placement;
	uint8_t alloc;
	uint8_t clear;
	uint8_t hints;           /* enum lrx_meta_hint enabled */
	uint8_t host_mode;
	uint16_t meta_size;
	uint32_t stride;         /* pool slot size: meta_size cache aligned */
	uint32_t pool_slots;
	uint32_t cursor;         /* next free pool slot */
	uint8_t *pool;
	int ts_offset;           /* rx timestamp dynfield, or -1 */
	uint64_t ts_flag;
	const struct rte_mempool *priv_pool_ok; /* last pool whose priv fits */
	struct rte_ether_addr host_addr;
	uint8_t n_vlan_devs;
	struct build_meta_vlan_dev vlan_devs[BM_VLAN_DEVS_MAX];

	/* counters (descriptor `counters`) */
	uint64_t built;
	uint64_t too_short;
	uint64_t no_priv_room;
	uint64_t vlan_inband;
	uint64_t vlan_dev_rx;    /* received on a VLAN device (vlan_do_receive) */
	uint64_t vlan_priority;  /* VID 0 tags cleared (priority tags) */
	uint64_t vlan_unknown;   /* VID with no VLAN device: PACKET_OTHERHOST */
	uint64_t hint_hash;
	uint64_t hint_csum;
	uint64_t hint_vlan;
	uint64_t hint_timestamp;
	uint64_t hint_ptype;
	uint64_t otherhost;
	uint64_t multicast;
	uint64_t broadcast;
	uint64_t pool_wraps;

	/* cold: per port MAC for host_mac=port */
	uint8_t port_addr_valid[RTE_MAX_ETHPORTS];
	struct rte_ether_addr port_addr[RTE_MAX_ETHPORTS];
};

static inline bool build_meta_is_vlan(uint16_t ethertype)
{
	return ethertype == RTE_ETHER_TYPE_VLAN ||
	       ethertype == RTE_ETHER_TYPE_QINQ;
}

static inline const struct rte_ether_addr *
build_meta_host_addr(const struct build_meta_ctx *c, uint16_t port)
{
	if (c->host_mode == BM_HOST_ADDR)
		return &c->host_addr;
	if (c->host_mode == BM_HOST_PORT && port < RTE_MAX_ETHPORTS &&
	    c->port_addr_valid[port])
		return &c->port_addr[port];
	return NULL; /* any unicast is for this host */
}

/* The NIC hints, each taken only when enabled and present (the driver's
 * mlx5e_build_rx_skb / ice_process_skb_fields part). True when a VLAN tag
 * the NIC stripped was taken. */
static inline bool build_meta_hints(struct build_meta_ctx *c,
				    const struct rte_mbuf *m,
				    struct lrx_meta *v)
{
	const uint64_t ol = m->ol_flags;
	const uint8_t on = c->hints;

	if ((on & LRX_HINT_HASH) && (ol & RTE_MBUF_F_RX_RSS_HASH)) {
		v->hash = m->hash.rss;
		v->hints |= LRX_HINT_HASH;
		c->hint_hash++;
	}
	if (on & LRX_HINT_CSUM) {
		/* Table lookups, no branches: the flags differ between IPv4
		 * and IPv6 frames (no IPv4 header checksum), and a branch per
		 * flag would mispredict on every change of family in a
		 * mixed burst. Index: bit 0 = BAD, bit 1 = GOOD (both = NONE). */
		static const uint8_t state[4] = {
			LRX_CHECKSUM_NONE, LRX_CHECKSUM_BAD,
			LRX_CHECKSUM_UNNECESSARY, LRX_CHECKSUM_NONE};
		RTE_BUILD_BUG_ON(RTE_MBUF_F_RX_L4_CKSUM_BAD != 1ULL << 3 ||
				 RTE_MBUF_F_RX_L4_CKSUM_GOOD != 1ULL << 8 ||
				 RTE_MBUF_F_RX_IP_CKSUM_BAD != 1ULL << 4 ||
				 RTE_MBUF_F_RX_IP_CKSUM_GOOD != 1ULL << 7);
		const unsigned l4 = (unsigned)((ol >> 3) & 1) |
				    (unsigned)((ol >> 7) & 2);
		const unsigned l3 = (unsigned)((ol >> 4) & 1) |
				    (unsigned)((ol >> 6) & 2);
		const unsigned known = (l4 | l3) != 0;
		v->ip_summed = state[l4];
		v->l3_csum_state = state[l3];
		v->hints |= (uint8_t)(known * LRX_HINT_CSUM);
		c->hint_csum += known;
	}
	/* A tag the NIC stripped was the outermost one (__vlan_hwaccel_put_tag). */
	bool tag = false;
	if ((on & LRX_HINT_VLAN) && (ol & RTE_MBUF_F_RX_VLAN_STRIPPED)) {
		tag = true;
		if (ol & RTE_MBUF_F_RX_QINQ_STRIPPED) {
			v->vlan_tci[0] = m->vlan_tci_outer;
			v->vlan_tci[1] = m->vlan_tci;
			v->vlan_count = 2;
		} else {
			v->vlan_tci[0] = m->vlan_tci;
			v->vlan_count = 1;
		}
		v->hints |= LRX_HINT_VLAN;
		c->hint_vlan++;
	}
	if ((on & LRX_HINT_TIMESTAMP) && c->ts_offset >= 0 &&
	    (ol & c->ts_flag)) {
		v->rx_timestamp = *RTE_MBUF_DYNFIELD(m, c->ts_offset,
						     const rte_mbuf_timestamp_t *);
		v->hints |= LRX_HINT_TIMESTAMP;
		c->hint_timestamp++;
	}
	if ((on & LRX_HINT_PTYPE) && m->packet_type) {
		v->ptype = m->packet_type;
		v->hints |= LRX_HINT_PTYPE;
		c->hint_ptype++;
	}
	return tag;
}

/* The fields every packet gets once its L2 header is known. */
static inline lrx_next_t build_meta_done(struct build_meta_ctx *c,
					 struct rte_mbuf *m,
					 struct lrx_meta *meta, uint16_t proto,
					 uint16_t off)
{
	meta->protocol = proto;
	meta->mac_len = off;
	meta->network_offset = off;
	meta->len = m->pkt_len - off;
	meta->ingress_port = m->port;

	lrx_meta_set(m, meta);
	c->built++;
	return LRX_NEXT_CONTINUE_V;
}

/* A VLAN device (vlan_find_dev) for a tag arriving on port. */
static bool build_meta_vlan_dev(const struct build_meta_ctx *c, uint16_t port,
				uint16_t tpid, uint16_t vid)
{
	if (tpid != RTE_ETHER_TYPE_VLAN)
		return false; /* 802.1ad devices are not modelled */
	for (unsigned i = 0; i < c->n_vlan_devs; i++)
		if (c->vlan_devs[i].vid == vid &&
		    (c->vlan_devs[i].port == BM_VLAN_ANY_PORT ||
		     c->vlan_devs[i].port == port))
			return true;
	return false;
}

/* The VLAN part of __netif_receive_skb_core, for a packet with a tag
 * (the NIC's, then the frame's). Each round takes the next tag
 * (skb_vlan_untag; a tag the NIC stripped comes first and uses no frame
 * bytes, its TPID taken as 802.1Q, or 802.1ad for the outer of a stripped
 * pair) and asks vlan_do_receive for a VLAN device of the port: one
 * found, the packet is that device's and the next tag starts another
 * round; none (check_vlan_id): VID != 0 makes the packet PACKET_OTHERHOST
 * and ends the rounds, whatever ethertype follows (a second tag is then
 * the protocol: no packet_type for it, rx_dropped in l3-demux); VID 0 (a
 * priority tag) is cleared, and a tag after it is taken at once. VLAN
 * devices exist on the port only, not on VLAN devices. The frame is not
 * changed: *off moves past the tags taken from it. */
static __rte_noinline lrx_next_t build_meta_vlan(struct build_meta_ctx *c,
						 struct rte_mbuf *m,
						 struct lrx_meta *meta,
						 uint16_t proto)
{
	uint16_t off = RTE_ETHER_HDR_LEN;
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const unsigned hw = meta->vlan_count;
	unsigned hw_taken = 0, seen = hw;
	uint16_t dev_vid = 0;
	for (;;) {
		uint16_t tpid, tci;
		if (hw_taken < hw) {
			tci = meta->vlan_tci[hw_taken];
			tpid = hw == 2 && hw_taken == 0 ? RTE_ETHER_TYPE_QINQ
						       : RTE_ETHER_TYPE_VLAN;
			hw_taken++;
		} else if (build_meta_is_vlan(proto)) {
			/* skb_vlan_untag: pskb_may_pull(VLAN_HLEN) */
			if (unlikely(m->data_len < (uint32_t)off + 4)) {
				c->too_short++;
				return lrx_next_drop(LRX_DROP_PKT_TOO_SMALL);
			}
			const rte_be16_t *tag =
				(const rte_be16_t *)(frame + off);
			tpid = proto;
			tci = rte_be_to_cpu_16(tag[0]);
			proto = rte_be_to_cpu_16(tag[1]);
			off += 4;
			c->vlan_inband++;
			if (seen < 2)
				meta->vlan_tci[seen] = tci;
			seen++;
		} else {
			break;
		}
		const uint16_t vid = tci & 0xfff;
		if (dev_vid == 0 && vid != 0 &&
		    build_meta_vlan_dev(c, m->port, tpid, vid)) {
			dev_vid = vid; /* vlan_do_receive: another_round */
			c->vlan_dev_rx++;
			continue;
		}
		if (vid != 0) {
			meta->vlan_otherhost = 1;
			meta->eth_pkt_type = meta->pkt_type;
			meta->pkt_type = LRX_PACKET_OTHERHOST;
			c->vlan_unknown++;
			break;
		}
		c->vlan_priority++; /* __vlan_hwaccel_clear_tag */
	}
	meta->vlan_count = (uint8_t)(seen < 2 ? seen : 2);
	meta->vlan_vid = dev_vid;
	return build_meta_done(c, m, meta, proto, off);
}

/* The core: parse L2 and write the metadata of one packet into meta
 * (already cleared if the clear method says so). The metadata is written
 * in place, zeroed first, never built in a local copy: a copy assembled
 * with narrow stores and written back with wide loads stalls on store
 * forwarding at every packet. */
static inline lrx_next_t build_meta_core(struct build_meta_ctx *c,
					 struct rte_mbuf *m,
					 struct lrx_meta *meta)
{
	const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint32_t avail = m->data_len;

	/* eth_type_trans: needs the whole Ethernet header */
	if (unlikely(avail < RTE_ETHER_HDR_LEN)) {
		c->too_short++;
		return lrx_next_drop(LRX_DROP_PKT_TOO_SMALL);
	}
	if (c->clear == BM_CLEAR_MEMSET) {
		/* as __build_skb's memset of a constant size: a cache line
		 * (the default) inline, no call into libc */
		if (likely(c->meta_size == RTE_CACHE_LINE_SIZE))
			memset(meta, 0, RTE_CACHE_LINE_SIZE);
		else
			memset(meta, 0, c->meta_size);
	} else
		*meta = (struct lrx_meta){0};
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)frame;
	const uint16_t proto = rte_be_to_cpu_16(eth->ether_type);

	const bool hw_tag = build_meta_hints(c, m, meta);

	/* eth_type_trans's pkt_type */
	if (unlikely(rte_is_multicast_ether_addr(&eth->dst_addr))) {
		if (rte_is_broadcast_ether_addr(&eth->dst_addr)) {
			meta->pkt_type = LRX_PACKET_BROADCAST;
			c->broadcast++;
		} else {
			meta->pkt_type = LRX_PACKET_MULTICAST;
			c->multicast++;
		}
	} else {
		const struct rte_ether_addr *host =
			build_meta_host_addr(c, m->port);
		if (host && !rte_is_same_ether_addr(host, &eth->dst_addr)) {
			meta->pkt_type = LRX_PACKET_OTHERHOST;
			c->otherhost++;
		}
	}

	/* A tag: stripped by the NIC (hint vlan) or in the frame */
	if (unlikely(hw_tag | build_meta_is_vlan(proto)))
		return build_meta_vlan(c, m, meta, proto);
	return build_meta_done(c, m, meta, proto, RTE_ETHER_HDR_LEN);
}

/* pool placement: n contiguous slots (wraps to the start of the ring when
 * the tail cannot hold n). */
static inline uint8_t *build_meta_pool_take(struct build_meta_ctx *c,
					    uint32_t n)
{
	if (unlikely(c->cursor + n > c->pool_slots)) {
		c->cursor = 0;
		c->pool_wraps++;
	}
	uint8_t *slot = c->pool + (size_t)c->cursor * c->stride;
	c->cursor += n;
	return slot;
}

/* One packet's metadata location, or NULL (private area too small). */
static inline struct lrx_meta *build_meta_locate(struct build_meta_ctx *c,
						 struct rte_mbuf *m)
{
	if (c->placement == BM_PLACE_POOL)
		return (struct lrx_meta *)build_meta_pool_take(c, 1);
	if (unlikely(m->pool != c->priv_pool_ok)) {
		if (rte_pktmbuf_priv_size(m->pool) < c->meta_size) {
			/* auto: a pool without the room uses the ring */
			if (c->placement == BM_PLACE_AUTO)
				return (struct lrx_meta *)build_meta_pool_take(
					c, 1);
			return NULL;
		}
		c->priv_pool_ok = m->pool;
	}
	return rte_mbuf_to_priv(m);
}

static inline lrx_next_t build_meta_one_core(struct build_meta_ctx *c,
					     struct rte_mbuf *m)
{
	struct lrx_meta *meta = build_meta_locate(c, m);
	if (unlikely(meta == NULL)) {
		c->no_priv_room++;
		return lrx_next_drop(LRX_DROP_NOMEM);
	}
	if (c->clear == BM_CLEAR_BULK) /* one slot: bulk of one */
		memset(meta, 0, c->meta_size);
	return build_meta_core(c, m, meta);
}

lrx_next_t lrx_build_meta_process_one(void *ctx, struct rte_mbuf *pkt)
{
	return build_meta_one_core(ctx, pkt);
}

static void build_meta_process_burst(void *ctx, struct rte_mbuf **pkts,
				     uint16_t n, lrx_next_t *nexts)
{
	struct build_meta_ctx *c = ctx;

	if (n && c->placement == BM_PLACE_POOL && c->alloc == BM_ALLOC_BULK) {
		uint8_t *run = build_meta_pool_take(c, n);
		if (c->clear == BM_CLEAR_BULK)
			memset(run, 0, (size_t)n * c->stride);
		lrx_prefetch_start(pkts, n, c->prefetch);
		for (uint16_t i = 0; i < n; i++) {
			lrx_prefetch_ahead(pkts, i, n, c->prefetch);
			nexts[i] = build_meta_core(
				c, pkts[i],
				(struct lrx_meta *)(run + (size_t)i * c->stride));
		}
		return;
	}
	lrx_prefetch_start(pkts, n, c->prefetch);
	for (uint16_t i = 0; i < n; i++) {
		lrx_prefetch_ahead(pkts, i, n, c->prefetch);
		nexts[i] = build_meta_one_core(c, pkts[i]);
	}
}

/* ---- configuration ------------------------------------------------------ */

/* host_mac: any, port, or a MAC (enum build_meta_host) */
struct build_meta_host_conf {
	uint8_t mode;
	uint8_t mac[6];
};

static int build_meta_parse_host(const char *text, void *out)
{
	struct build_meta_host_conf *h = out;
	h->mode = strcmp(text, "any") == 0 ? BM_HOST_ANY
		  : strcmp(text, "port") == 0 ? BM_HOST_PORT : BM_HOST_ADDR;
	return h->mode == BM_HOST_ADDR ? lrx_value_mac(text, h->mac) : 0;
}

/* vlans: none, or a list of VIDs 1..4094, each optionally %port (the
 * device is on that port only). */
struct build_meta_vlans_conf {
	uint8_t n;
	struct build_meta_vlan_dev devs[BM_VLAN_DEVS_MAX];
};

static int build_meta_parse_vlans(const char *text, void *out)
{
	struct build_meta_vlans_conf *v = out;
	v->n = 0;
	if (strcmp(text, "none") == 0)
		return 0;
	char item[32];
	int more;
	while ((more = lrx_value_list_next(&text, item, sizeof(item))) > 0) {
		uint64_t vid, port = BM_VLAN_ANY_PORT;
		char *pct = strchr(item, '%');
		if (pct)
			*pct++ = '\0';
		if (v->n == BM_VLAN_DEVS_MAX || lrx_value_uint(item, 1, 4094, &vid) ||
		    (pct && lrx_value_uint(pct, 0, RTE_MAX_ETHPORTS - 1, &port)))
			return -EINVAL;
		v->devs[v->n++] = (struct build_meta_vlan_dev){.vid = (uint16_t)vid,
							       .port = (uint16_t)port};
	}
	return more == 0 && v->n ? 0 : -EINVAL;
}

struct build_meta_conf {
	unsigned placement, alloc, clear; /* enum build_meta_placement, ... */
	uint16_t meta_size;
	uint32_t pool_slots;
	uint32_t hints;                   /* enum lrx_meta_hint bits */
	struct build_meta_host_conf host;
	struct build_meta_vlans_conf vlans;
};

static int build_meta_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct build_meta_conf *conf = init->conf;
	struct build_meta_ctx *c = ctx;
	int rc;

	c->prefetch = init->prefetch;
	c->placement = (uint8_t)conf->placement;
	c->alloc = (uint8_t)conf->alloc;
	c->clear = (uint8_t)conf->clear;
	c->meta_size = conf->meta_size;
	c->pool_slots = conf->pool_slots;
	c->hints = (uint8_t)conf->hints;
	c->host_mode = conf->host.mode;
	memcpy(c->host_addr.addr_bytes, conf->host.mac, sizeof(conf->host.mac));
	c->n_vlan_devs = conf->vlans.n;
	memcpy(c->vlan_devs, conf->vlans.devs, sizeof(c->vlan_devs));

	/* bulk clearing needs the ring: auto takes it */
	if (c->clear == BM_CLEAR_BULK && c->placement == BM_PLACE_AUTO)
		c->placement = BM_PLACE_POOL;
	if (c->clear == BM_CLEAR_BULK &&
	    (c->placement != BM_PLACE_POOL || c->alloc != BM_ALLOC_BULK))
		return lrx_key_error(init, "clear", "bulk",
				     "bulk clearing needs one contiguous run of "
				     "metadata per burst: use it with "
				     "placement=pool and alloc=bulk, or choose "
				     "clear=memset|none");
	if (c->host_mode == BM_HOST_PORT) {
		uint16_t port;
		RTE_ETH_FOREACH_DEV(port) {
			if (rte_eth_macaddr_get(port, &c->port_addr[port]) == 0)
				c->port_addr_valid[port] = 1;
		}
	}

	if ((rc = lrx_meta_register()) < 0) {
		snprintf(init->err, init->err_len,
			 "%s: cannot register the metadata dynfield: %s",
			 init->instance, rte_strerror(-rc));
		return rc;
	}
	/* The timestamp dynfield exists once someone registers it; register
	 * it here so that the hint has a place to be read from. */
	if (rte_mbuf_dyn_rx_timestamp_register(&c->ts_offset, &c->ts_flag) < 0)
		c->ts_offset = -1;

	c->stride = RTE_ALIGN_CEIL(c->meta_size, RTE_CACHE_LINE_SIZE);
	if (c->placement != BM_PLACE_PRIV) {
		c->pool = rte_zmalloc_socket("build_meta_pool",
					     (size_t)c->pool_slots * c->stride,
					     RTE_CACHE_LINE_SIZE,
					     init->socket_id);
		if (!c->pool) {
			snprintf(init->err, init->err_len,
				 "%s: no memory for the metadata pool "
				 "(pool_slots=%u x %u bytes)",
				 init->instance, c->pool_slots, c->stride);
			return -ENOMEM;
		}
	}
	return 0;
}

static void build_meta_fini(void *ctx)
{
	struct build_meta_ctx *c = ctx;
	rte_free(c->pool);
	c->pool = NULL;
}

#define BM_COUNTER(field) {.name = #field, .offset = offsetof(struct build_meta_ctx, field)}
static const struct lrx_stage_counter build_meta_counters[] = {
	BM_COUNTER(built),
	BM_COUNTER(too_short),
	BM_COUNTER(no_priv_room),
	BM_COUNTER(vlan_inband),
	BM_COUNTER(vlan_dev_rx),
	BM_COUNTER(vlan_priority),
	BM_COUNTER(vlan_unknown),
	BM_COUNTER(hint_hash),
	BM_COUNTER(hint_csum),
	BM_COUNTER(hint_vlan),
	BM_COUNTER(hint_timestamp),
	BM_COUNTER(hint_ptype),
	BM_COUNTER(otherhost),
	BM_COUNTER(multicast),
	BM_COUNTER(broadcast),
	BM_COUNTER(pool_wraps),
	{.name = NULL},
};
#undef BM_COUNTER

static const char *const bm_placements[] = {"priv", "pool", "auto", NULL};
static const char *const bm_allocs[] = {"packet", "bulk", NULL};
static const char *const bm_clears[] = {"memset", "bulk", "none", NULL};
static const struct lrx_value_flag bm_hints[] = {
	{"hash", LRX_HINT_HASH}, {"csum", LRX_HINT_CSUM}, {"vlan", LRX_HINT_VLAN},
	{"timestamp", LRX_HINT_TIMESTAMP}, {"ptype", LRX_HINT_PTYPE},
	{"all", LRX_HINT_HASH | LRX_HINT_CSUM | LRX_HINT_VLAN | LRX_HINT_TIMESTAMP |
		LRX_HINT_PTYPE},
	{"none", 0}, {NULL, 0},
};

#define BMK(kind, field, ...) LRX_KEY_##kind(struct build_meta_conf, field, __VA_ARGS__)
static const struct lrx_value_key build_meta_keys[] = {
	BMK(CHOICE, placement, "placement", "auto", bm_placements,
	    "where the metadata lives: priv (mbuf private area; the mbuf pool's "
	    "priv_size must be >= meta_size, else packets drop as NOMEM) | pool "
	    "(a separate per-lcore metadata ring) | auto (priv when the packet's "
	    "pool has the room, else the ring; [mempool] priv_size = auto "
	    "gives the room; clear=bulk makes it pool)"),
	BMK(CHOICE, alloc, "alloc", "bulk", bm_allocs,
	    "placement=pool: packet (one slot per packet) | bulk (one contiguous "
	    "run per burst)"),
	BMK(UINT, meta_size, "meta_size", "64", sizeof(struct lrx_meta), BUILD_META_SIZE_MAX,
	    "bytes of metadata per packet (64 small, 256 ~ sk_buff, "
	    "552 = sk_buff + skb_shared_info)"),
	BMK(CHOICE, clear, "clear", "memset", bm_clears,
	    "memset (per packet) | bulk (one memset per burst, needs "
	    "placement=pool alloc=bulk) | none (only the fields written)"),
	BMK(FLAGS, hints, "hints", "all", bm_hints,
	    "NIC hints taken: all | none | list of hash,csum,vlan,timestamp,ptype"),
	BMK(CUSTOM, host, "host_mac", "any", build_meta_parse_host,
	    "any, port, or a MAC address aa:bb:cc:dd:ee:ff",
	    "PACKET_HOST test of eth_type_trans: any (every unicast is for us) | "
	    "port (the ingress port's MAC) | aa:bb:cc:dd:ee:ff"),
	BMK(CUSTOM, vlans, "vlans", "none", build_meta_parse_vlans,
	    "none, or a list of up to 64 VLAN IDs 1..4094, each optionally %port "
	    "(100%0: a VLAN device on port 0 only)",
	    "802.1Q VLAN devices: none | list of VIDs, each optionally %port (on "
	    "that port only); a tagged packet for no device is PACKET_OTHERHOST "
	    "(VID 0: a priority tag, untagged)"),
	BMK(UINT, pool_slots, "pool_slots", "8192", BUILD_META_POOL_SLOTS_MIN, 1u << 20,
	    "placement=pool: slots in the metadata ring; a slot "
	    "is reused after that many later packets"),
	{.name = NULL},
};
#undef BMK

/* The mbuf private area this config wants ([mempool] priv_size = auto):
 * meta_size when the metadata may live there. */
static uint32_t build_meta_mbuf_priv(const void *vconf)
{
	const struct build_meta_conf *conf = vconf;
	bool priv = conf->placement == BM_PLACE_PRIV ||
		    (conf->placement == BM_PLACE_AUTO && conf->clear != BM_CLEAR_BULK);
	return priv ? conf->meta_size : 0;
}

static LRX_STAGE_DEFINE(build_meta_stage, struct build_meta_ctx, struct build_meta_conf,
		 build_meta_keys, build_meta_counters,
	.name = BUILD_META_STAGE_NAME,
	.summary = "build skb-like metadata: L2/VLAN parse, offsets, NIC hints",
	.provides = LRX_PROVIDES_META | LRX_PROVIDES_SKB,
	.init = build_meta_init,
	.fini = build_meta_fini,
	.mbuf_priv = build_meta_mbuf_priv,
	.process_one = lrx_build_meta_process_one,
	.process_burst = build_meta_process_burst,
)
