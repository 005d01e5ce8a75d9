/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux's module nf_hook: netfilter's receive hooks over the rules of
 * lib/netfilter. IPv4 (key netfilter): PREROUTING after ip_rcv_core and
 * LOCAL_IN after ip_defrag (net/ipv4/ip_input.c's NF_HOOK calls); IPv6
 * (key netfilter6, ip6tables): PREROUTING after ip6_rcv_core and LOCAL_IN
 * in ip6_input (net/ipv6/ip6_input.c). Counters nf_prerouting_drops,
 * nf_local_in_drops, nf6_prerouting_drops, nf6_local_in_drops; the rule
 * counters as the stage's maps (the IPv6 ones named ip6/TABLE/CHAIN).
 */
#include <errno.h>
#include <stdio.h>

#include <rte_malloc.h>

#include "l3_modules.h"

/* The hooks with connection tracking: at PREROUTING raw (-300),
 * nf_conntrack_in (-200), then the rest; at LOCAL_IN the tables, then
 * nf_confirm (INT_MAX). The packet's state goes from one to the other in
 * nf->ctstate (the kernel's skb->_nfct): l3-demux runs each packet
 * through both before the next when conntrack is on. rules and ctr: the
 * packet's family's. */
static unsigned l3_nf_hook_ct(struct l3_ctx *c, struct l3_nf_hook *nf,
			      const struct lrx_nf *rules, struct lrx_nf_counter *ctr,
			      struct lrx_nf_pkt *p, unsigned hook)
{
	const unsigned n = rules->n_hook_tables[hook];
	const bool v6 = rules->family == AF_INET6;
	const uint64_t now = l3_reply_now(&c->reply);
	if (hook == LRX_NF_LOCAL_IN) {
		p->ctstate = nf->ctstate;
		if (lrx_nf_hook_slow(rules, ctr, hook, p) == LRX_NF_DROP)
			return LRX_NF_DROP;
		lrx_ct_confirm(nf->ct, now);
		return LRX_NF_ACCEPT;
	}
	const unsigned raw = lrx_nf_tables_before_conntrack(rules, hook);
	lrx_ct_release(nf->ct); /* the last packet's, if it was dropped */
	p->ctstate = 0;
	nf->ctstate = 0;
	if (lrx_nf_hook_tables(rules, ctr, hook, p, 0, raw, v6) == LRX_NF_DROP)
		return LRX_NF_DROP;
	if (lrx_ct_in(nf->ct, p, now) == LRX_NF_DROP)
		return LRX_NF_DROP;
	nf->ctstate = p->ctstate;
	return lrx_nf_hook_tables(rules, ctr, hook, p, raw, n, v6);
}

void l3_nf_ct_local_out(struct lrx_ct *ct, const struct rte_mbuf *m, uint32_t noff,
			uint64_t now)
{
	const uint8_t *iph = l3_frame(m) + noff;
	struct lrx_nf_pkt p = {
		.iph = iph,
		.len = m->pkt_len - noff,
		/* IPv6: conntrack finds the transport header itself */
		.thoff = (iph[0] >> 4) == 4 ? (uint32_t)(iph[0] & 0xf) * 4 : 0,
		.seg_len = m->data_len - noff,
	};
	lrx_ct_local_out(ct, &p, now);
}

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
	struct lrx_nf_pkt p = {
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
	unsigned verdict;
	if (nf->ct4 == NULL)
		verdict = lrx_nf_hook_slow(nf->rules, nf->ctr, hook, &p);
	else
		verdict = l3_nf_hook_ct(c, nf, nf->rules, nf->ctr, &p, hook);
	if (verdict == LRX_NF_ACCEPT)
		return LRX_NEXT_CONTINUE_V;
	nf->drops[hook]++;
	return lrx_next_drop(LRX_DROP_NETFILTER_DROP);
}

/* The same for IPv6 (ipv6_rcv's and ip6_input's NF_HOOK, ip6t_do_table).
 * ip6_packet_match's protocol is the header ipv6_find_hdr finds past the
 * extension headers: found once per packet here, as every rule would find
 * the same. skb->len is the IPv6 packet, header included, after
 * ip6_rcv_core's trim. Without conntrack the hooks see each fragment:
 * IPv6 reassembles after LOCAL_IN, in ip6_protocol_deliver_rcu; with it
 * nf_defrag_ipv6 gathers them first (l3_ipv6_nf_prerouting). */
__rte_noinline lrx_next_t l3_ipv6_nf_hook(struct l3_ctx *c, const struct rte_mbuf *m,
					  const struct lrx_meta *meta, unsigned hook)
{
	struct l3_nf_hook *nf = l3_nf_hook_of(c);
	const uint32_t noff = meta->network_offset;
	struct lrx_nf_pkt p = {
		.iph = l3_frame(m) + noff,
		.len = meta->len,
		.seg_len = RTE_MIN(m->data_len - noff, meta->len),
		.in_port = meta->ingress_port,
		.in_vid = meta->vlan_vid,
	};
	p.nexthdr = (int16_t)lrx_nf6_find_hdr(p.iph, p.len, p.seg_len, &p.thoff,
					      &p.fragoff);
	unsigned verdict;
	if (nf->ct6 == NULL)
		verdict = lrx_nf_hook_slow(nf->rules6, nf->ctr6, hook, &p);
	else
		verdict = l3_nf_hook_ct(c, nf, nf->rules6, nf->ctr6, &p, hook);
	if (verdict == LRX_NF_ACCEPT)
		return LRX_NEXT_CONTINUE_V;
	nf->drops6[hook]++;
	return lrx_next_drop(LRX_DROP_NETFILTER_DROP);
}

/* NF_HOOK(NF_INET_PRE_ROUTING) for IPv6: with conntrack, ipv6_defrag
 * (nf_defrag_ipv6, -400) first: nf_ct_frag6_gather holds a fragment
 * (NF_STOLEN), drops one it refuses (NF_DROP), hands on what it does not
 * handle, and the datagram whole when complete, so that raw, conntrack,
 * mangle, filter and ip6_input see it once (its fragment header gone:
 * ipv6_frag_rcv never runs, Ip6Reasm* stay as they were). */
__rte_noinline lrx_next_t l3_ipv6_nf_prerouting(struct l3_ctx *c, struct rte_mbuf *m,
						struct lrx_meta *meta)
{
	struct l3_nf_hook *nf = l3_nf_hook_of(c);
	if (nf->ct6 != NULL) {
		const lrx_next_t next = l3_reasm_ipv6_ct(l3_reasm_of(c), m, meta);
		if (next == lrx_next_drop(LRX_DROP_NETFILTER_DROP))
			nf->drops6[LRX_NF_PRE_ROUTING]++;
		if (next != LRX_NEXT_CONTINUE_V)
			return next;
	}
	return l3_ipv6_nf_hook(c, m, meta, LRX_NF_PRE_ROUTING);
}

/* one rule file (key 'key', family) into *rules, its counters into *ctr;
 * without a file none, unless empty (conntrack=on without rules: an empty
 * rule set, so that the hooks run) */
static int l3_nf_hook_load(const char *file, int family, const char *key,
			   bool empty, const struct lrx_stage_init *init,
			   struct lrx_nf **rules, struct lrx_nf_counter **ctr)
{
	char why[512];
	int rc;
	if (file[0] != '\0')
		rc = lrx_nf_load_family(file, family, rules, why, sizeof(why));
	else if (empty)
		rc = lrx_nf_parse_family("", "key 'conntrack'", family, rules, why,
					 sizeof(why));
	else
		return 0;
	if (rc == 0) {
		*ctr = rte_zmalloc_socket("l3_nf_counters",
					  RTE_MAX((*rules)->n_entries, 1u) * sizeof(**ctr),
					  RTE_CACHE_LINE_SIZE, init->socket_id);
		if (*ctr == NULL) {
			snprintf(why, sizeof(why), "out of memory");
			rc = -ENOMEM;
		}
	}
	if (rc < 0) {
		snprintf(init->err, init->err_len, "%s: key '%s': %s",
			 init->instance, key, why);
		lrx_nf_free(*rules);
		*rules = NULL;
	}
	return rc;
}

/* whether a family's rules need conntrack's hooks (nf_ct_netns_get of
 * xt_conntrack, xt_state, xt_CT) or the key asks for them */
static bool l3_nf_ct_wanted(const struct lrx_nf *rules, const struct l3_demux_conf *conf)
{
	return rules != NULL && (rules->uses_conntrack || conf->nf_hook.conntrack == 1);
}

/* conntrack's table when either family's rules need it or the key asks
 * for it; one table for both, as the kernel's */
static int l3_nf_ct_init(struct l3_demux *d, const struct l3_demux_conf *conf,
			 const struct lrx_stage_init *init)
{
	struct l3_nf_hook *nf = &d->nf_hook;
	const bool v4 = l3_nf_ct_wanted(nf->rules, conf);
	const bool v6 = l3_nf_ct_wanted(nf->rules6, conf);
	if (!v4 && !v6)
		return 0;
	int rc = lrx_ct_init(&nf->ct_table, conf->nf_hook.conntrack_max,
			     init->socket_id);
	if (rc < 0) {
		snprintf(init->err, init->err_len, "%s: key 'nf_conntrack_max': "
			 "%u entries: out of memory", init->instance,
			 conf->nf_hook.conntrack_max);
		return rc;
	}
	nf->ct_table.tcp_be_liberal = conf->nf_hook.tcp_be_liberal != 0;
	nf->ct_table.tcp_loose = conf->nf_hook.tcp_loose != 0;
	nf->ct = &nf->ct_table;
	nf->ct4 = v4 ? nf->ct : NULL;
	nf->ct6 = v6 ? nf->ct : NULL;
	d->core.reply.ct = nf->ct4;
	d->core.reply.ct6 = nf->ct6;
	return 0;
}

static void l3_nf_hook_fini(struct l3_demux *d)
{
	lrx_nf_free(d->nf_hook.rules);
	rte_free(d->nf_hook.ctr);
	lrx_nf_free(d->nf_hook.rules6);
	rte_free(d->nf_hook.ctr6);
	if (d->nf_hook.ct != NULL)
		lrx_ct_fini(d->nf_hook.ct);
	d->nf_hook.ct = d->nf_hook.ct4 = d->nf_hook.ct6 = NULL;
	d->core.reply.ct = d->core.reply.ct6 = NULL;
	d->nf_hook.rules = d->nf_hook.rules6 = NULL;
	d->nf_hook.ctr = d->nf_hook.ctr6 = NULL;
}

static int l3_nf_hook_init(struct l3_demux *d, const struct l3_demux_conf *conf,
			   const struct lrx_stage_init *init)
{
	struct l3_nf_hook *nf = &d->nf_hook;
	int rc = l3_nf_hook_load(conf->nf_hook.file, AF_INET, "netfilter",
				 conf->nf_hook.conntrack == 1, init, &nf->rules,
				 &nf->ctr);
	if (rc == 0)
		rc = l3_nf_hook_load(conf->nf_hook.file6, AF_INET6, "netfilter6",
				     conf->nf_hook.conntrack == 1, init, &nf->rules6,
				     &nf->ctr6);
	if (rc == 0)
		rc = l3_nf_ct_init(d, conf, init);
	if (rc < 0)
		l3_nf_hook_fini(d);
	return rc;
}

/* netfilter's rules on a device the run does not have never match: said
 * once the ports are known (iptables takes such a rule too) */
static int l3_nf_hook_start(void *ctx, const struct lrx_stage_start *start)
{
	const struct l3_nf_hook *nf = &((const struct l3_demux *)ctx)->nf_hook;
	if (nf->rules != NULL &&
	    lrx_nf_ports_check(nf->rules, "key 'netfilter'", start->ports,
			       start->n_ports, start->warn, start->warn_len) != 0)
		return 0; /* one warning */
	if (nf->rules6 != NULL)
		lrx_nf_ports_check(nf->rules6, "key 'netfilter6'", start->ports,
				   start->n_ports, start->warn, start->warn_len);
	return 0;
}

/* the IPv4 chains' maps, then the IPv6 ones: map i of the IPv6 set is
 * map n4 + i */
static unsigned l3_nf_hook_n4(const struct l3_nf_hook *nf)
{
	struct lrx_stage_map info;
	unsigned n = 0;
	while (nf->rules != NULL && lrx_nf_map_at(nf->rules, n, &info))
		n++;
	return n;
}

/* as iptables -L -v -x (ip6tables -L -v -x) */
bool l3_nf_hook_map_at(const void *ctx, unsigned i, struct lrx_stage_map *out)
{
	const struct l3_nf_hook *nf = &((const struct l3_demux *)ctx)->nf_hook;
	if (lrx_nf_map_at(nf->rules, i, out))
		return true;
	return lrx_nf_map_at(nf->rules6, i - l3_nf_hook_n4(nf), out);
}

bool l3_nf_hook_map_next(const void *ctx, unsigned i, uint32_t *cursor, void *key,
			 void *value)
{
	const struct l3_nf_hook *nf = &((const struct l3_demux *)ctx)->nf_hook;
	const unsigned n4 = l3_nf_hook_n4(nf);
	if (i < n4)
		return lrx_nf_map_next(nf->rules, nf->ctr, i, cursor, key, value);
	return lrx_nf_map_next(nf->rules6, nf->ctr6, i - n4, cursor, key, value);
}

static const char *const l3_nf_conntracks[] = {"auto", "on", NULL};

static const struct lrx_value_key l3_nf_hook_keys[] = {
	L3_KEY(STRING, nf_hook.file, "netfilter", "",
	       "iptables-save file of IPv4 rules (raw, mangle, filter; "
	       "docs/netfilter.md) run at PREROUTING (after ip_rcv_core) and INPUT "
	       "(after ip_defrag); empty: no hooks"),
	L3_KEY(STRING, nf_hook.file6, "netfilter6", "",
	       "ip6tables-save file of IPv6 rules (raw, mangle, filter; "
	       "docs/netfilter.md) run at PREROUTING (after ip6_rcv_core) and INPUT "
	       "(ip6_input, before reassembly unless conntrack is on); empty: no hooks"),
	L3_KEY(CHOICE, nf_hook.conntrack, "conntrack", "auto", l3_nf_conntracks,
	       "connection tracking (nf_conntrack_in at PREROUTING -200, nf_confirm "
	       "at INPUT's end, nf_defrag_ipv4/6 before PREROUTING; "
	       "docs/netfilter.md): auto (on for a family whose netfilter or "
	       "netfilter6 rules use -m conntrack, -m state or -j CT) | on (both "
	       "families)"),
	L3_KEY(UINT, nf_hook.conntrack_max, "nf_conntrack_max", "65536", 1, 1 << 26,
	       "conntrack's table size per polling lcore (net.netfilter."
	       "nf_conntrack_max); a new flow in a full table evicts unassured "
	       "entries (early_drop) or is dropped"),
	L3_KEY(UINT, nf_hook.tcp_be_liberal, "nf_conntrack_tcp_be_liberal", "0", 0, 1,
	       "net.netfilter.nf_conntrack_tcp_be_liberal: 0 marks TCP segments "
	       "out of the window (tcp_in_window) INVALID, 1 only out-of-window "
	       "RSTs"),
	L3_KEY(UINT, nf_hook.tcp_loose, "nf_conntrack_tcp_loose", "1", 0, 1,
	       "net.netfilter.nf_conntrack_tcp_loose: 1 picks up a TCP connection "
	       "from a segment other than a SYN (NEW, its window not checked), 0 "
	       "marks such a segment INVALID"),
	{.name = NULL},
};

static const struct lrx_stage_counter l3_nf_hook_counters[] = {
	L3_COUNTER("nf_prerouting_drops", nf_hook.drops[LRX_NF_PRE_ROUTING]),
	L3_COUNTER("nf_local_in_drops", nf_hook.drops[LRX_NF_LOCAL_IN]),
	L3_COUNTER("nf6_prerouting_drops", nf_hook.drops6[LRX_NF_PRE_ROUTING]),
	L3_COUNTER("nf6_local_in_drops", nf_hook.drops6[LRX_NF_LOCAL_IN]),
	/* conntrack -S (/proc/net/stat/nf_conntrack) and the entry count */
	L3_COUNTER("nf_conntrack_found", nf_hook.ct_table.st.found),
	L3_COUNTER("nf_conntrack_invalid", nf_hook.ct_table.st.invalid),
	L3_COUNTER("nf_conntrack_insert", nf_hook.ct_table.st.insert),
	L3_COUNTER("nf_conntrack_drop", nf_hook.ct_table.st.drop),
	L3_COUNTER("nf_conntrack_early_drop", nf_hook.ct_table.st.early_drop),
	L3_COUNTER("nf_conntrack_icmp_error", nf_hook.ct_table.st.error),
	L3_COUNTER("nf_conntrack_count", nf_hook.ct_table.st.entries),
	{.name = NULL},
};

L3_MODULE(nf_hook, .fini = l3_nf_hook_fini, .start = l3_nf_hook_start);
