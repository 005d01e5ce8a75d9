/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux's module nf_hook: netfilter's IPv4 receive hooks, PREROUTING
 * after ip_rcv_core and LOCAL_IN after ip_defrag (net/ipv4/ip_input.c's
 * NF_HOOK calls), over the rules of lib/netfilter. Key netfilter;
 * counters nf_prerouting_drops, nf_local_in_drops; the rule counters as
 * the stage's maps.
 */
#include <errno.h>
#include <stdio.h>

#include <rte_malloc.h>

#include "l3_modules.h"

/* One netfilter hook on one IPv4 packet (nf_hook_slow): CONTINUE, or the
 * drop (SKB_DROP_REASON_NETFILTER_DROP). skb->len is the IP packet, after
 * the trim (PREROUTING) or the reassembly (LOCAL_IN). Out of line, as the
 * kernel's nf_hook_slow: only with rules, and inlined into the
 * receive cores it cost their loops registers (stack spills per packet
 * with no rules at all). */
__rte_noinline lrx_next_t l3_ipv4_nf_hook(struct l3_ctx *c, const struct rte_mbuf *m,
					  const struct lrx_meta *meta, unsigned hook)
{
	struct l3_nf_hook *nf = l3_nf_hook_of(c);
	const uint32_t noff = meta->network_offset;
	const uint8_t *iph = l3_frame(m) + noff;
	const struct lrx_nf_pkt p = {
		.iph = iph,
		.len = m->pkt_len - noff,
		.thoff = meta->transport_offset - noff,
		.seg_len = m->data_len - noff,
		.fragoff = (uint16_t)(((iph[6] << 8) | iph[7]) & 0x1fff),
		/* the input device: the port, or the VLAN device the packet
		 * came in on (vlan_do_receive) */
		.in_port = meta->ingress_port,
		.in_vid = meta->vlan_vid,
	};
	if (lrx_nf_hook_slow(nf->rules, nf->ctr, hook, &p) == LRX_NF_ACCEPT)
		return LRX_NEXT_CONTINUE_V;
	nf->drops[hook]++;
	return lrx_next_drop(LRX_DROP_NETFILTER_DROP);
}

static int l3_nf_hook_init(struct l3_demux *d, const struct l3_demux_conf *conf,
			   const struct lrx_stage_init *init)
{
	struct l3_nf_hook *nf = &d->nf_hook;
	char why[512];
	if (conf->nf_hook.file[0] == '\0')
		return 0;
	int rc = lrx_nf_load(conf->nf_hook.file, &nf->rules, why, sizeof(why));
	if (rc == 0) {
		nf->ctr = rte_zmalloc_socket("l3_nf_counters",
					     RTE_MAX(nf->rules->n_entries, 1u) * sizeof(*nf->ctr),
					     RTE_CACHE_LINE_SIZE, init->socket_id);
		if (nf->ctr == NULL) {
			snprintf(why, sizeof(why), "out of memory");
			rc = -ENOMEM;
		}
	}
	if (rc < 0) {
		snprintf(init->err, init->err_len, "%s: key 'netfilter': %s",
			 init->instance, why);
		lrx_nf_free(nf->rules);
		nf->rules = NULL;
	}
	return rc;
}

static void l3_nf_hook_fini(struct l3_demux *d)
{
	lrx_nf_free(d->nf_hook.rules);
	rte_free(d->nf_hook.ctr);
	d->nf_hook.rules = NULL;
	d->nf_hook.ctr = NULL;
}

/* netfilter's rules on a device the run does not have never match: said
 * once the ports are known (iptables takes such a rule too) */
static int l3_nf_hook_start(void *ctx, const struct lrx_stage_start *start)
{
	const struct lrx_nf *rules = ((const struct l3_demux *)ctx)->nf_hook.rules;
	if (rules != NULL)
		lrx_nf_ports_check(rules, "key 'netfilter'", start->ports, start->n_ports,
				   start->warn, start->warn_len);
	return 0;
}

/* as iptables -L -v -x */
bool l3_nf_hook_map_at(const void *ctx, unsigned i, struct lrx_stage_map *out)
{
	return lrx_nf_map_at(((const struct l3_demux *)ctx)->nf_hook.rules, i, out);
}

bool l3_nf_hook_map_next(const void *ctx, unsigned i, uint32_t *cursor, void *key,
			 void *value)
{
	const struct l3_nf_hook *nf = &((const struct l3_demux *)ctx)->nf_hook;
	return lrx_nf_map_next(nf->rules, nf->ctr, i, cursor, key, value);
}

static const struct lrx_value_key l3_nf_hook_keys[] = {
	L3_KEY(STRING, nf_hook.file, "netfilter", "",
	       "iptables-save file of IPv4 rules (raw, mangle, filter; "
	       "docs/netfilter.md) run at PREROUTING (after ip_rcv_core) and INPUT "
	       "(after ip_defrag); empty: no hooks"),
	{.name = NULL},
};

static const struct lrx_stage_counter l3_nf_hook_counters[] = {
	L3_COUNTER("nf_prerouting_drops", nf_hook.drops[LRX_NF_PRE_ROUTING]),
	L3_COUNTER("nf_local_in_drops", nf_hook.drops[LRX_NF_LOCAL_IN]),
	{.name = NULL},
};

L3_MODULE(nf_hook, .fini = l3_nf_hook_fini, .start = l3_nf_hook_start);
