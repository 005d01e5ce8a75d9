/* SPDX-License-Identifier: BSD-3-Clause
 * The `rps` stage: Receive Packet Steering (docs/rps.md), as
 * netif_receive_skb_list_internal runs it after GRO:
 *  - get_rps_cpu: the packet's hash (skb_get_hash: the NIC's RSS hash, or
 *    the flow dissector's of the addresses, ports and protocol) picks a
 *    target from the map (map->cpus[reciprocal_scale(hash, len)]); a
 *    packet without a hash is not steered (processed here, at once);
 *  - enqueue_to_backlog: the packet joins the target lcore's backlog, an
 *    rte_ring (the softnet_data input_pkt_queue), unless it already holds
 *    more than netdev_max_backlog packets: then it drops (CPU_BACKLOG),
 *    counted as softnet_stat's `dropped`. A packet steered to this lcore
 *    goes to its own backlog too, as in the kernel;
 *  - process_backlog: at the end of each of its polls (the backlog NAPI
 *    runs in the same net_rx_action), an lcore takes up to `weight`
 *    packets from its backlog and hands them on (release) to the stages
 *    after this one.
 * Every lcore whose pipeline has the stage owns a backlog named
 * lrx_rps_<lcore>; the map is made of the backlogs that exist when the
 * first packet is steered (all pipelines are built before any polls).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_jhash.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "meta.h"
#include "rule_text.h"
#include "stage_keys.h"
#include "value.h"
#include "static_entries.h"

#define RPS_STAGE_NAME "rps"

struct rps_ctx {
	/* softnet_stat: processed (taken from the backlog), dropped */
	uint64_t n_steered, n_processed, n_dropped, n_local, n_polls;
	uint64_t n_not_steered; /* no hash: processed at once */

	unsigned lcore;            /* whose backlog this instance drains */
	uint32_t max_backlog, weight;
	bool flow_hash;            /* hash=flow: always the dissector's */
	bool draining;             /* the run's end: no steering any more */
	bool resolved;
	bool listed;               /* cpus named lcores (not all) */
	unsigned n_targets;
	uint16_t targets[RTE_MAX_LCORE];  /* the map's lcores, as listed */
	unsigned n_map;                   /* the map: lcores with a backlog */
	struct rte_ring *map[RTE_MAX_LCORE];
	struct rte_ring *own;
	/* taken from the backlog at the end of a poll, not yet released */
	uint16_t n_out, out_at;
	struct rte_mbuf *out[LRX_BURST_MAX];
};

static void rps_ring_name(char *buf, size_t len, unsigned lcore)
{
	snprintf(buf, len, "lrx_rps_%u", lcore);
}

/* __skb_get_hash's flow dissector, on the fields it hashes: the
 * addresses, the ports of TCP/UDP (not of a fragment), the protocol. */
static inline uint32_t rps_flow_hash(const struct rte_mbuf *m,
				     const struct lrx_meta *meta)
{
	const uint8_t *d = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint32_t len = rte_pktmbuf_data_len(m);
	const uint32_t noff = meta->network_offset;
	uint32_t words[10] = {0};
	uint32_t n = 0, toff = 0;
	uint8_t proto = 0;

	if (meta->protocol == RTE_ETHER_TYPE_IPV4 && len >= noff + 20) {
		const uint8_t *ip = d + noff;
		memcpy(&words[0], ip + 12, 8);
		n = 2;
		proto = ip[9];
		toff = noff + (ip[0] & 0xf) * 4u;
		if ((ip[6] & 0x3f) || ip[7])
			proto = 0; /* a fragment: no ports */
	} else if (meta->protocol == RTE_ETHER_TYPE_IPV6 && len >= noff + 40) {
		const uint8_t *ip = d + noff;
		memcpy(&words[0], ip + 8, 32);
		n = 8;
		proto = ip[6];
		toff = noff + 40;
	} else {
		return 0;
	}
	if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && len >= toff + 4)
		memcpy(&words[n++], d + toff, 4);
	words[n++] = proto;
	const uint32_t h = rte_jhash_32b(words, n, 0x1c0ffee);
	return h ? h : 1;
}

/* The map, once: the backlogs of the listed lcores that exist. */
static void rps_resolve(struct rps_ctx *c)
{
	char name[RTE_RING_NAMESIZE];

	c->n_map = 0;
	for (unsigned i = 0; i < c->n_targets; i++) {
		rps_ring_name(name, sizeof(name), c->targets[i]);
		struct rte_ring *r = rte_ring_lookup(name);
		if (r != NULL)
			c->map[c->n_map++] = r;
	}
	c->resolved = true;
}

static __rte_always_inline lrx_next_t rps_core(struct rps_ctx *c,
					       struct rte_mbuf *m)
{
	if (unlikely(c->draining)) {
		c->n_local++;
		return LRX_NEXT_CONTINUE_V;
	}
	if (unlikely(!c->resolved))
		rps_resolve(c);
	const struct lrx_meta *meta = lrx_meta(m);
	const uint32_t hash = !c->flow_hash && meta->hash ? meta->hash
							  : rps_flow_hash(m, meta);
	if (unlikely(hash == 0 || c->n_map == 0)) {
		c->n_not_steered++;
		return LRX_NEXT_CONTINUE_V;
	}
	/* reciprocal_scale(hash, len) */
	struct rte_ring *r = c->map[(uint32_t)(((uint64_t)hash * c->n_map) >> 32)];
	/* the backlog holds at most netdev_max_backlog + 1 (qlen >
	 * max_backlog drops); the ring is that big */
	if (unlikely(rte_ring_mp_enqueue(r, m) != 0)) {
		c->n_dropped++;
		return lrx_next_drop(LRX_DROP_CPU_BACKLOG);
	}
	c->n_steered++;
	return LRX_NEXT_CONSUMED_V;
}

lrx_next_t lrx_rps_process_one(void *ctx, struct rte_mbuf *pkt)
{
	return rps_core(ctx, pkt);
}

static void rps_process_burst(void *ctx, struct rte_mbuf **pkts, uint16_t n,
			      lrx_next_t *nexts)
{
	for (uint16_t i = 0; i < n; i++)
		nexts[i] = rps_core(ctx, pkts[i]);
}

/* process_backlog at the end of a poll: up to weight packets (all of
 * them at the run's end). */
static void rps_flush(void *ctx, bool budget_used)
{
	struct rps_ctx *c = ctx;
	(void)budget_used;

	if (c->own == NULL || c->n_out != 0)
		return;
	const unsigned want = c->draining ? LRX_BURST_MAX : c->weight;
	c->n_out = (uint16_t)rte_ring_sc_dequeue_burst(c->own, (void **)c->out,
						       want, NULL);
	c->out_at = 0;
	c->n_processed += c->n_out;
	c->n_polls += c->n_out != 0;
}

uint16_t lrx_rps_release(void *ctx, struct rte_mbuf **pkts, uint16_t max)
{
	struct rps_ctx *c = ctx;
	uint16_t n = 0;

	/* fewer than max only when nothing is left to give (stage.h) */
	do {
		uint16_t k = RTE_MIN((uint16_t)(max - n), (uint16_t)(c->n_out - c->out_at));
		memcpy(pkts + n, c->out + c->out_at, k * sizeof(*pkts));
		c->out_at += k;
		n += k;
		if (c->out_at != c->n_out)
			break;
		c->n_out = 0;
		c->out_at = 0;
		/* the run's end: keep draining until the backlog is empty */
		if (c->draining)
			rps_flush(c, false);
	} while (n < max && c->n_out != 0);
	return n;
}

static uint32_t rps_held(const void *ctx)
{
	const struct rps_ctx *c = ctx;

	return (c->own ? rte_ring_count(c->own) : 0) + c->n_out - c->out_at;
}

/* napi_disable of the backlog: what is queued is processed here, and
 * what the stages before release from now on is processed here too (no
 * other lcore drains any more). */
static void rps_end_run(void *ctx)
{
	((struct rps_ctx *)ctx)->draining = true;
}

static void rps_fini(void *ctx)
{
	struct rps_ctx *c = ctx;
	struct rte_mbuf *m;

	/* a run without a drain: what is left goes back to its pool */
	while (c->own && rte_ring_sc_dequeue(c->own, (void **)&m) == 0)
		rte_pktmbuf_free(m);
	for (uint16_t i = c->out_at; i < c->n_out; i++)
		rte_pktmbuf_free(c->out[i]);
	rte_ring_free(c->own);
	c->own = NULL;
	c->n_out = c->out_at = 0;
}

/* The config (value layer): cpus is all, or a list of lcore ids whose
 * enabled state init checks (the config is read before EAL starts). */
struct rps_cpus {
	bool all;
	uint16_t n;
	uint16_t ids[RTE_MAX_LCORE];
};

struct rps_conf {
	struct rps_cpus cpus;
	uint32_t max_backlog, weight;
	unsigned hash;
};

static int rps_parse_cpus(const char *text, void *out)
{
	struct rps_cpus *c = out;
	char item[16];
	int rc;

	*c = (struct rps_cpus){0};
	if (strcmp(text, "all") == 0) {
		c->all = true;
		return 0;
	}
	while ((rc = lrx_value_list_next(&text, item, sizeof(item))) == 1) {
		uint64_t lc;
		if (lrx_value_uint(item, 0, RTE_MAX_LCORE - 1, &lc) != 0 || c->n == RTE_MAX_LCORE)
			return -EINVAL;
		c->ids[c->n++] = (uint16_t)lc;
	}
	return rc == 0 && c->n > 0 ? 0 : -EINVAL;
}

static int rps_targets(struct rps_ctx *c, const struct rps_cpus *cpus,
		       const struct lrx_stage_init *init)
{
	c->listed = !cpus->all;
	if (cpus->all) {
		unsigned lc;
		RTE_LCORE_FOREACH(lc)
			c->targets[c->n_targets++] = (uint16_t)lc;
		return 0;
	}
	for (unsigned i = 0; i < cpus->n; i++) {
		if (!rte_lcore_is_enabled(cpus->ids[i])) {
			char v[16];
			snprintf(v, sizeof(v), "%u", cpus->ids[i]);
			return lrx_key_error(init, "cpus", v, "lcores EAL runs (-l), or all");
		}
		c->targets[c->n_targets++] = cpus->ids[i];
	}
	return 0;
}

static int rps_init(void *ctx, const struct lrx_stage_init *init)
{
	const struct rps_conf *conf = init->conf;
	struct rps_ctx *c = ctx;
	char name[RTE_RING_NAMESIZE];
	int rc;

	rc = rps_targets(c, &conf->cpus, init);
	if (rc < 0)
		return rc;
	rc = lrx_meta_register();
	if (rc < 0)
		return rc;
	c->max_backlog = conf->max_backlog;
	c->weight = conf->weight;
	c->flow_hash = conf->hash == 1;
	c->lcore = init->lcore_id;
	rps_ring_name(name, sizeof(name), c->lcore);
	/* input_pkt_queue: netdev_max_backlog + 1 packets, many producers
	 * (every lcore steers), one consumer (its own) */
	c->own = rte_ring_create(name, c->max_backlog + 1, init->socket_id,
				 RING_F_SC_DEQ | RING_F_EXACT_SZ);
	if (c->own == NULL) {
		snprintf(init->err, init->err_len,
			 "%s: cannot create the backlog of lcore %u (%s): %s",
			 init->instance, c->lcore, name,
			 rte_errno == EEXIST ? "rps is in the pipeline twice: an lcore "
					       "has one backlog, so once per pipeline"
					     : rte_strerror(rte_errno));
		/* twice in the pipeline: the config's mistake (exit 2) */
		return rte_errno == EEXIST ? -EINVAL : -rte_errno;
	}
	return 0;
}

/* Every pipeline is built: the map is the backlogs that exist, and an
 * lcore the config lists without one would silently drop out of it (the
 * main lcore, say, when workers poll): refused, naming the lcores that
 * have one. */
static int rps_start(void *ctx, const struct lrx_stage_start *start)
{
	struct rps_ctx *c = ctx;
	char name[RTE_RING_NAMESIZE], have[256] = "";
	size_t used = 0;
	unsigned lc;

	rps_resolve(c);
	if (!c->listed || c->n_map == c->n_targets)
		return 0;
	RTE_LCORE_FOREACH(lc) {
		rps_ring_name(name, sizeof(name), lc);
		if (rte_ring_lookup(name) != NULL && used < sizeof(have)) {
			int n = snprintf(have + used, sizeof(have) - used, "%s%u",
					 used ? ", " : "", lc);
			used += n > 0 ? (size_t)n : 0;
		}
	}
	for (unsigned i = 0; i < c->n_targets; i++) {
		rps_ring_name(name, sizeof(name), c->targets[i]);
		if (rte_ring_lookup(name) != NULL)
			continue;
		snprintf(start->err, start->err_len,
			 "%s: key 'cpus': lcore %u runs no pipeline with rps, so it "
			 "has no backlog and would never process what is steered to "
			 "it (lcores with one: %s; the main lcore polls only when no "
			 "worker does)", start->instance, c->targets[i], have);
		return -EINVAL;
	}
	return 0;
}

/* the lcore's backlog (netdev_max_backlog + 1) and what it took from it */
static uint32_t rps_mbuf_hold(const void *vconf, uint32_t mbuf_size)
{
	(void)mbuf_size;
	return ((const struct rps_conf *)vconf)->max_backlog + 1 + LRX_BURST_MAX;
}

static const char *const rps_hashes[] = {"nic", "flow", NULL};
static const struct lrx_value_key rps_keys[] = {
	LRX_KEY_CUSTOM(struct rps_conf, cpus, "cpus", "all", rps_parse_cpus,
		       "all or a list of lcore ids",
		       "the map (rps_cpus): all (every lcore whose pipeline has rps) "
		       "or a list of lcore ids"),
	LRX_KEY_UINT(struct rps_conf, max_backlog, "max_backlog", "1000", 1, 1u << 20,
		     "net.core.netdev_max_backlog: a backlog holding more drops "
		     "(CPU_BACKLOG)"),
	LRX_KEY_UINT(struct rps_conf, weight, "weight", "64", 1, LRX_BURST_MAX,
		     "net.core.dev_weight: backlog packets an lcore processes per poll"),
	LRX_KEY_CHOICE(struct rps_conf, hash, "hash", "nic", rps_hashes,
		       "nic (the RSS hash when the NIC gave one, as skb_get_hash) | "
		       "flow (always the flow dissector's)"),
	{.name = NULL},
};

#define RPS_COUNTER(n, f) { .name = n, .offset = offsetof(struct rps_ctx, f) }
static const struct lrx_stage_counter rps_counters[] = {
	RPS_COUNTER("steered", n_steered),
	RPS_COUNTER("processed", n_processed),
	RPS_COUNTER("dropped", n_dropped),
	RPS_COUNTER("not_steered", n_not_steered),
	RPS_COUNTER("backlog_polls", n_polls),
	RPS_COUNTER("local_at_end", n_local),
	{ .name = NULL },
};

LRX_STAGE_DEFINE(lrx_stage_rps, struct rps_ctx, struct rps_conf, rps_keys, rps_counters,
	.name = RPS_STAGE_NAME,
	.summary = "Receive Packet Steering: by hash to the lcores' backlogs "
		   "(get_rps_cpu, enqueue_to_backlog, process_backlog)",
	.needs = LRX_PROVIDES_META,
	.init = rps_init,
	.start = rps_start,
	.fini = rps_fini,
	.process_one = lrx_rps_process_one,
	.process_burst = rps_process_burst,
	.flush = rps_flush,
	.release = lrx_rps_release,
	.held = rps_held,
	.mbuf_hold = rps_mbuf_hold,
	.end_run = rps_end_run,
)
