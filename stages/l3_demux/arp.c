/* SPDX-License-Identifier: BSD-3-Clause
 * l3-demux's module arp: arp_rcv and arp_process (net/ipv4/arp.c) with
 * the reply for this host's address. Keys arp_ip, arp_mac (the source of
 * every reply: ARP, ICMP, TCP); counters arp_in, arp_replies.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <rte_arp.h>

#include "l3_modules.h"

/* arp_process's reply for ip (network order) to an ARP request m: from
 * this host's MAC, on the VLAN device the request came on, 42 bytes (60
 * with a tag's 4: no padding, as the kernel sends it). Not rate limited.
 * fate when there is no room. */
static lrx_next_t l3_arp_reply(struct l3_reply *r, struct rte_mbuf *m,
			       lrx_next_t fate, uint32_t ip)
{
	const struct lrx_meta *meta = lrx_meta(m);
	const struct rte_arp_hdr *req = rte_pktmbuf_mtod_offset(
		m, const struct rte_arp_hdr *, meta->network_offset);
	const struct rte_ether_addr sha = req->arp_data.arp_sha;
	const uint32_t sip = req->arp_data.arp_sip;
	struct l3_reply_l2 l2;
	l3_reply_l2_of(r, m, meta, &l2);
	l2.dst = sha;
	const uint32_t l2len = l3_reply_l2_len(&l2);
	uint8_t *p = l3_reply_reshape(m, meta->network_offset, 0,
				      l2len + sizeof(struct rte_arp_hdr));
	if (!p)
		return l3_reply_no_room(r, fate);
	p = l3_reply_l2_write(p, &l2, RTE_ETHER_TYPE_ARP);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)p;
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	arp->arp_data.arp_sha = l2.src;
	arp->arp_data.arp_sip = ip;
	arp->arp_data.arp_tha = sha;
	arp->arp_data.arp_tip = sip;
	return lrx_next_tx(m->port);
}

static inline lrx_next_t l3_arp_core(struct l3_ctx *c, struct rte_mbuf *m,
				     struct lrx_meta *meta, const int fam)
{
	struct l3_arp *a = l3_arp_of(c);
	(void)fam; /* the handler macro's signature; ARP has no family */
	a->in++;
	const uint32_t noff = meta->network_offset;
	if (m->pkt_len < noff + sizeof(struct rte_arp_hdr) ||
	    m->data_len < noff + sizeof(struct rte_arp_hdr))
		return lrx_next_drop(LRX_DROP_PKT_TOO_SMALL);
	struct rte_arp_hdr *arp =
		rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, noff);
	/* arp_rcv consumes (does not drop) what is not for it */
	if (arp->arp_hlen != RTE_ETHER_ADDR_LEN || arp->arp_plen != 4 ||
	    meta->pkt_type == LRX_PACKET_OTHERHOST || a->ip == 0 ||
	    arp->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST) ||
	    arp->arp_data.arp_tip != a->ip)
		return LRX_NEXT_DELIVER_V;

	const lrx_next_t next = l3_arp_reply(&c->reply, m, LRX_NEXT_DELIVER_V, a->ip);
	a->replies += next != LRX_NEXT_DELIVER_V;
	return next;
}
L3_DEFINE_HANDLER(arp, l3_arp_core)

static int l3_parse_arp_mac(const char *text, void *out)
{
	struct l3_mac_conf *m = out;
	m->from_port = strcmp(text, "port") == 0;
	/* used when the port has no MAC (no ethdev) */
	return lrx_value_mac(m->from_port ? "02:00:00:00:00:02" : text, m->mac);
}

/* none (0: no ARP replies) or an IPv4 address other than 0.0.0.0 */
static int l3_parse_arp_ip(const char *text, void *out)
{
	*(uint32_t *)out = 0;
	if (strcmp(text, "none") == 0)
		return 0;
	return lrx_value_addr(text, AF_INET, out, NULL) < 0 || *(uint32_t *)out == 0 ? -EINVAL
										 : 0;
}

static int l3_arp_init(struct l3_demux *d, const struct l3_demux_conf *conf,
		       const struct lrx_stage_init *init)
{
	(void)init;
	d->arp.ip = conf->arp.ip;
	/* the source of every reply (reply.c) */
	d->core.reply.mac_from_port = conf->arp.mac.from_port;
	memcpy(d->core.reply.mac.addr_bytes, conf->arp.mac.mac, sizeof(conf->arp.mac.mac));
	d->core.l3_table[L3_CLASS_ARP] = &l3_arp_handler;
	return 0;
}

static const struct lrx_value_key l3_arp_keys[] = {
	L3_KEY(CUSTOM, arp.ip, "arp_ip", "none", l3_parse_arp_ip,
	       "none or an IPv4 address",
	       "none | IPv4 address this host answers ARP requests for"),
	L3_KEY(CUSTOM, arp.mac, "arp_mac", "port", l3_parse_arp_mac,
	       "port or a MAC address aa:bb:cc:dd:ee:ff",
	       "this host's MAC, the source of every reply (ARP, ICMP, TCP): port "
	       "(the ingress port's) | aa:bb:cc:dd:ee:ff"),
	{.name = NULL},
};

static const struct lrx_stage_counter l3_arp_counters[] = {
	L3_COUNTER("arp_in", arp.in),
	L3_COUNTER("arp_replies", arp.replies),
	{.name = NULL},
};

L3_MODULE(arp);
