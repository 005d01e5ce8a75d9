/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_synth frames: what each profile generates, the per-queue schedules of
 * pre-built frames, the tcp-stream segment builder, and pcap file I/O.
 *
 * Every generated frame is (headers) + (payload pattern), where the pattern
 * byte at frame offset o is always dev->pattern[o]. So a buffer that holds
 * the pattern needs only its first 64 or 128 bytes rewritten to become any
 * generated frame: that is what makes copy=0 cheap (see synth_ethdev.c).
 *
 * Descriptor hints are derived from the frame bytes as a NIC does
 * (synth_classify): checksums are verified, not assumed, and the RSS hash
 * is the Toeplitz hash (rte_softrss) of the parsed 5-tuple.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_tcp.h>
#include <rte_thash.h>
#include <rte_udp.h>

#include "synth.h"

#define ETH_LEN ((uint32_t)sizeof(struct rte_ether_hdr))
#define VLAN_LEN ((uint32_t)sizeof(struct rte_vlan_hdr))
#define TCP_OPT_LEN 12u /* NOP NOP TS: as Linux sends with timestamps on */
#define TCP_HDR_LEN (20u + TCP_OPT_LEN)
#define TCP_HEAD_LEN (ETH_LEN + 20u + TCP_HDR_LEN)

/* imix 7:4:1 of 64/570/1518 on-wire bytes, interleaved */
static const uint16_t imix_sizes[12] = {64, 570, 64, 64, 570, 64,
					1518, 64, 570, 64, 64, 570};

static const struct rte_ether_addr synth_src_mac = {
	.addr_bytes = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};

/* RTE_IPV4 shifts a signed int: UB for addresses >= 128.0.0.0 */
#define SYNTH_IPV4(a, b, c, d)                                                 \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 |     \
	 (uint32_t)(d))

struct synth_spec {
	enum synth_kind kind;
	uint32_t flow;
	uint32_t len; /* frame bytes without FCS */
};

struct synth_tuple {
	uint32_t saddr, daddr; /* host order */
	uint16_t sport, dport;
};

void synth_init_pattern(struct synth_device *dev)
{
	for (uint32_t o = 0; o < SYNTH_MAX_FRAME; o++)
		dev->pattern[o] = (uint8_t)((o * 7u) ^ 0x5a);
}

uint32_t synth_rss_queue(const struct synth_device *dev, uint32_t rss)
{
	/* as a NIC: the low bits of the hash index the redirection table */
	return dev->reta[rss % SYNTH_RETA_SIZE];
}

static struct synth_tuple flow_tuple(const struct synth_device *dev,
				     uint32_t flow)
{
	struct synth_tuple t;
	if (dev->opt.profile == SYNTH_PROFILE_UDP64) {
		/* pktgen_sample03_burst_single_flow.sh: 198.18.0.0/15, port 9 */
		t.saddr = SYNTH_IPV4(198, 18, 0, 1);
		t.daddr = SYNTH_IPV4(198, 18, 0, 42);
		t.sport = 9;
		t.dport = 9;
		return t;
	}
	uint64_t state = dev->opt.seed ^ ((uint64_t)flow << 32);
	t.saddr = SYNTH_IPV4(10, 0, 0, 1) + flow;
	t.daddr = dev->opt.profile == SYNTH_PROFILE_TCP_STREAM ?
			  SYNTH_IPV4(198, 18, 0, 43) : SYNTH_IPV4(198, 18, 0, 42);
	t.sport = (uint16_t)(1024 + synth_splitmix64(&state) % 60000);
	t.dport = dev->opt.profile == SYNTH_PROFILE_TCP_STREAM ? 5201 : 9;
	return t;
}

static uint32_t tuple_rss(const struct synth_device *dev,
			  const struct synth_tuple *t)
{
	struct rte_ipv4_tuple v4 = {.src_addr = t->saddr, .dst_addr = t->daddr};
	v4.sport = t->sport;
	v4.dport = t->dport;
	return rte_softrss((uint32_t *)&v4, RTE_THASH_V4_L4_LEN, dev->rss_key);
}

static uint32_t lcm(uint32_t a, uint32_t b)
{
	uint32_t x = a, y = b;
	while (y) {
		uint32_t r = x % y;
		x = y;
		y = r;
	}
	return a / x * b;
}

static uint32_t schedule_length(const struct synth_device *dev)
{
	switch (dev->opt.profile) {
	case SYNTH_PROFILE_IMIX: return lcm(12, dev->opt.flows);
	case SYNTH_PROFILE_MIXED: return SYNTH_MIXED_SCHEDULE;
	case SYNTH_PROFILE_PCAP: return dev->nb_pcap_frames;
	default: return dev->opt.flows;
	}
}

/* mixed: the kind of every slot, shares exact over the schedule, order
 * shuffled by the seed, malformed kinds rotating in schedule order */
static int mixed_kinds(const struct synth_device *dev, uint8_t *kinds)
{
	const struct synth_options *o = &dev->opt;
	uint32_t n = SYNTH_MIXED_SCHEDULE, i = 0;
	const struct {
		double share;
		enum synth_kind kind;
	} parts[] = {{o->ipv6_share, SYNTH_KIND_ipv6},
		     {o->arp_share, SYNTH_KIND_arp},
		     {o->vlan_share, SYNTH_KIND_vlan},
		     {o->malformed_share, SYNTH_KIND_FIRST_MALFORMED}};
	for (size_t p = 0; p < RTE_DIM(parts); p++) {
		uint32_t count = (uint32_t)(parts[p].share * n + 0.5);
		for (uint32_t c = 0; c < count && i < n; c++)
			kinds[i++] = (uint8_t)parts[p].kind;
	}
	while (i < n)
		kinds[i++] = SYNTH_KIND_normal;
	uint64_t state = o->seed;
	for (uint32_t k = n - 1; k > 0; k--) {
		uint32_t j = (uint32_t)(synth_splitmix64(&state) % (k + 1));
		uint8_t tmp = kinds[k];
		kinds[k] = kinds[j];
		kinds[j] = tmp;
	}
	uint32_t malformed = 0;
	for (uint32_t k = 0; k < n; k++)
		if (kinds[k] == SYNTH_KIND_FIRST_MALFORMED)
			kinds[k] = (uint8_t)(SYNTH_KIND_FIRST_MALFORMED +
					     malformed++ % SYNTH_MALFORMED_KINDS);
	return 0;
}

static struct synth_spec frame_spec(const struct synth_device *dev,
				    const uint8_t *kinds, uint32_t k)
{
	struct synth_spec s = {SYNTH_KIND_normal, k % dev->opt.flows,
			       dev->opt.size - 4};
	if (dev->opt.profile == SYNTH_PROFILE_IMIX)
		s.len = imix_sizes[k % 12] - 4u;
	if (dev->opt.profile == SYNTH_PROFILE_MIXED)
		s.kind = (enum synth_kind)kinds[k];
	return s;
}

static void put_eth(uint8_t *p, const struct synth_device *dev, uint16_t type)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)p;
	rte_ether_addr_copy(&dev->mac, &eth->dst_addr);
	rte_ether_addr_copy(&synth_src_mac, &eth->src_addr);
	eth->ether_type = rte_cpu_to_be_16(type);
}

/* an ARP request from the flow's source to its destination (arp_send's
 * frame); minimum-size whatever size= says */
static uint32_t build_arp(const struct synth_device *dev,
			  const struct synth_tuple *t, uint8_t *buf,
			  uint32_t *hdr_end)
{
	uint32_t off = ETH_LEN;

	put_eth(buf, dev, RTE_ETHER_TYPE_ARP);
	struct rte_arp_hdr *arp = (struct rte_arp_hdr *)(buf + off);
	arp->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	arp->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	arp->arp_hlen = RTE_ETHER_ADDR_LEN;
	arp->arp_plen = 4;
	arp->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
	rte_ether_addr_copy(&synth_src_mac, &arp->arp_data.arp_sha);
	arp->arp_data.arp_sip = rte_cpu_to_be_32(t->saddr);
	memset(&arp->arp_data.arp_tha, 0, RTE_ETHER_ADDR_LEN);
	arp->arp_data.arp_tip = rte_cpu_to_be_32(t->daddr);
	*hdr_end = off + (uint32_t)sizeof(*arp);
	/* ARP frames are minimum-size frames whatever size= says */
	return RTE_ETHER_MIN_LEN - RTE_ETHER_CRC_LEN;
}

/* IPv6/UDP from fd00::saddr to fd00::daddr, at off; returns the length */
static uint32_t build_ipv6_udp(const struct synth_device *dev,
			       const struct synth_tuple *t, uint32_t off,
			       uint32_t len, uint8_t *buf, uint32_t *hdr_end)
{
	put_eth(buf, dev, RTE_ETHER_TYPE_IPV6);
	uint32_t min = off + 40 + 8;
	len = RTE_MAX(len, min);
	struct rte_ipv6_hdr *ip6 = (struct rte_ipv6_hdr *)(buf + off);
	ip6->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip6->payload_len = rte_cpu_to_be_16((uint16_t)(len - off - 40));
	ip6->proto = IPPROTO_UDP;
	ip6->hop_limits = 64;
	static const uint8_t prefix[8] = {0xfd, 0, 0, 0, 0, 0, 0, 0};
	memcpy(ip6->src_addr, prefix, 8);
	memcpy(ip6->dst_addr, prefix, 8);
	uint64_t s64 = rte_cpu_to_be_64((uint64_t)t->saddr);
	uint64_t d64 = rte_cpu_to_be_64((uint64_t)t->daddr);
	memcpy(ip6->src_addr + 8, &s64, 8);
	memcpy(ip6->dst_addr + 8, &d64, 8);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip6 + 1);
	udp->src_port = rte_cpu_to_be_16(t->sport);
	udp->dst_port = rte_cpu_to_be_16(t->dport);
	udp->dgram_len = ip6->payload_len;
	udp->dgram_cksum = 0;
	udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip6, udp);
	*hdr_end = off + 48;
	return len;
}

/* IPv4/UDP (DF, id k) with valid checksums at off; returns the length */
static uint32_t build_ipv4_udp(const struct synth_tuple *t, uint32_t k,
			       uint32_t off, uint32_t len, uint8_t *buf,
			       uint32_t *hdr_end)
{
	uint32_t min = off + 20 + 8;
	len = RTE_MAX(len, min);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + off);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = 0;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(len - off));
	ip->packet_id = rte_cpu_to_be_16((uint16_t)k);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(t->saddr);
	ip->dst_addr = rte_cpu_to_be_32(t->daddr);
	ip->hdr_checksum = 0;
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(t->sport);
	udp->dst_port = rte_cpu_to_be_16(t->dport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(len - off - 20));
	udp->dgram_cksum = 0;
	udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	*hdr_end = off + 28;
	return len;
}

/* breaks the IPv4 header at off as malformed kind asks (the ip_rcv_core()
 * check each one trips); returns the frame's length */
static uint32_t malform_ipv4(enum synth_kind kind, uint32_t off, uint32_t len,
			     uint8_t *buf)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(buf + off);

	switch (kind) {
	case SYNTH_KIND_malformed_bad_csum:
		ip->hdr_checksum = (uint16_t)~ip->hdr_checksum;
		if (ip->hdr_checksum == rte_ipv4_cksum(ip))
			ip->hdr_checksum ^= 0x0101;
		break;
	case SYNTH_KIND_malformed_truncated:
		/* frame ends inside the UDP header: skb->len < tot_len */
		len = off + 20 + 4;
		break;
	case SYNTH_KIND_malformed_bad_ihl:
		ip->version_ihl = 0x44;
		break;
	case SYNTH_KIND_malformed_bad_version:
		ip->version_ihl = 0x65;
		break;
	case SYNTH_KIND_malformed_bad_total_len:
		/* tot_len < ihl * 4 */
		ip->total_length = rte_cpu_to_be_16(16);
		break;
	default:
		break;
	}
	if (kind == SYNTH_KIND_malformed_bad_ihl ||
	    kind == SYNTH_KIND_malformed_bad_version ||
	    kind == SYNTH_KIND_malformed_bad_total_len) {
		/* only the named field is wrong: the checksum matches it */
		ip->hdr_checksum = 0;
		ip->hdr_checksum = (uint16_t)~rte_raw_cksum(ip, 20);
	}
	return len;
}

/* Builds frame k into buf (pattern already in it). Returns the length and
 * the header length via *hdr_end. With strip, a VLAN tag is left out and
 * returned in *tci, as a NIC with VLAN strip delivers it. */
static uint32_t build_frame(const struct synth_device *dev,
			    const struct synth_spec *s, uint32_t k, bool strip,
			    uint8_t *buf, uint32_t *hdr_end, uint16_t *tci)
{
	struct synth_tuple t = flow_tuple(dev, s->flow);
	uint32_t off = ETH_LEN, len = s->len;
	*tci = 0;
	if (s->kind == SYNTH_KIND_arp)
		return build_arp(dev, &t, buf, hdr_end);
	if (s->kind == SYNTH_KIND_vlan) {
		uint16_t vid = (uint16_t)(100 + s->flow % 16);
		if (strip) {
			*tci = vid;
		} else {
			put_eth(buf, dev, RTE_ETHER_TYPE_VLAN);
			struct rte_vlan_hdr *vh = (struct rte_vlan_hdr *)(buf + off);
			vh->vlan_tci = rte_cpu_to_be_16(vid);
			vh->eth_proto = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
			off += VLAN_LEN;
		}
	}
	if (s->kind == SYNTH_KIND_ipv6)
		return build_ipv6_udp(dev, &t, off, len, buf, hdr_end);
	if (s->kind != SYNTH_KIND_vlan || strip)
		put_eth(buf, dev, RTE_ETHER_TYPE_IPV4);
	len = build_ipv4_udp(&t, k, off, len, buf, hdr_end);
	return malform_ipv4(s->kind, off, len, buf);
}

struct synth_class {
	uint32_t packet_type;
	uint64_t ol_flags;
	uint32_t rss;
};

/* What a NIC would report for these bytes. */
static struct synth_class synth_classify(const struct synth_device *dev,
					 const uint8_t *p, uint32_t len)
{
	struct synth_class c = {RTE_PTYPE_L2_ETHER, 0, 0};
	uint32_t off = ETH_LEN;
	if (len < ETH_LEN)
		return c;
	uint16_t type = rte_be_to_cpu_16(((const struct rte_ether_hdr *)p)->ether_type);
	if (type == RTE_ETHER_TYPE_VLAN && len >= off + VLAN_LEN) {
		c.packet_type = RTE_PTYPE_L2_ETHER_VLAN;
		type = rte_be_to_cpu_16(((const struct rte_vlan_hdr *)(p + off))->eth_proto);
		off += VLAN_LEN;
	}
	if (type == RTE_ETHER_TYPE_ARP) {
		c.packet_type = RTE_PTYPE_L2_ETHER_ARP;
		return c;
	}
	uint32_t l4_off = 0, l4_len = 0;
	uint8_t proto = 0;
	union rte_thash_tuple tuple;
	memset(&tuple, 0, sizeof(tuple));
	const struct rte_ipv4_hdr *ip = NULL;
	const struct rte_ipv6_hdr *ip6 = NULL;
	if (type == RTE_ETHER_TYPE_IPV4 && len >= off + 20) {
		ip = (const struct rte_ipv4_hdr *)(p + off);
		uint32_t ihl = (ip->version_ihl & 0xf) * 4u;
		if ((ip->version_ihl >> 4) != 4 || ihl < 20 || len < off + ihl)
			return c; /* not parseable as IPv4: no L3 hints */
		c.packet_type |= ihl == 20 ? RTE_PTYPE_L3_IPV4 : RTE_PTYPE_L3_IPV4_EXT;
		c.ol_flags |= rte_raw_cksum(ip, ihl) == 0xffff ?
				      RTE_MBUF_F_RX_IP_CKSUM_GOOD :
				      RTE_MBUF_F_RX_IP_CKSUM_BAD;
		tuple.v4.src_addr = rte_be_to_cpu_32(ip->src_addr);
		tuple.v4.dst_addr = rte_be_to_cpu_32(ip->dst_addr);
		uint32_t tot = rte_be_to_cpu_16(ip->total_length);
		proto = ip->next_proto_id;
		l4_off = off + ihl;
		if (tot >= ihl && off + tot <= len)
			l4_len = tot - ihl;
		c.ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
		c.rss = rte_softrss((uint32_t *)&tuple, RTE_THASH_V4_L3_LEN,
				    dev->rss_key);
	} else if (type == RTE_ETHER_TYPE_IPV6 && len >= off + 40) {
		ip6 = (const struct rte_ipv6_hdr *)(p + off);
		if ((rte_be_to_cpu_32(ip6->vtc_flow) >> 28) != 6)
			return c;
		c.packet_type |= RTE_PTYPE_L3_IPV6;
		rte_thash_load_v6_addrs(ip6, &tuple);
		uint32_t plen = rte_be_to_cpu_16(ip6->payload_len);
		proto = ip6->proto;
		l4_off = off + 40;
		if (off + 40 + plen <= len)
			l4_len = plen;
		c.ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
		c.rss = rte_softrss((uint32_t *)&tuple, RTE_THASH_V6_L3_LEN,
				    dev->rss_key);
	} else {
		return c;
	}
	bool udp = proto == IPPROTO_UDP && l4_len >= 8;
	bool tcp = proto == IPPROTO_TCP && l4_len >= 20;
	if (!udp && !tcp)
		return c; /* L4 checksum unknown */
	c.packet_type |= udp ? RTE_PTYPE_L4_UDP : RTE_PTYPE_L4_TCP;
	const uint8_t *l4 = p + l4_off;
	uint16_t sport = rte_be_to_cpu_16(*(const uint16_t *)l4);
	uint16_t dport = rte_be_to_cpu_16(*(const uint16_t *)(l4 + 2));
	int bad = ip ? rte_ipv4_udptcp_cksum_verify(ip, l4) :
		       rte_ipv6_udptcp_cksum_verify(ip6, l4);
	c.ol_flags |= bad ? RTE_MBUF_F_RX_L4_CKSUM_BAD : RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	if (ip) {
		tuple.v4.sport = sport;
		tuple.v4.dport = dport;
		c.rss = rte_softrss((uint32_t *)&tuple, RTE_THASH_V4_L4_LEN,
				    dev->rss_key);
	} else {
		tuple.v6.sport = sport;
		tuple.v6.dport = dport;
		c.rss = rte_softrss((uint32_t *)&tuple, RTE_THASH_V6_L4_LEN,
				    dev->rss_key);
	}
	return c;
}

static void apply_hints(const struct synth_device *dev, struct synth_frame *f,
			const struct synth_class *c, uint16_t tci)
{
	uint32_t hints = dev->opt.hints;
	f->packet_type = (hints & SYNTH_HINT_PTYPE) ? c->packet_type : 0;
	f->ol_flags = 0;
	f->rss = 0;
	if ((hints & SYNTH_HINT_HASH) && (c->ol_flags & RTE_MBUF_F_RX_RSS_HASH)) {
		f->ol_flags |= RTE_MBUF_F_RX_RSS_HASH;
		f->rss = c->rss;
	}
	if (hints & SYNTH_HINT_CSUM)
		f->ol_flags |= c->ol_flags & (RTE_MBUF_F_RX_IP_CKSUM_MASK |
					      RTE_MBUF_F_RX_L4_CKSUM_MASK);
	f->vlan_tci = tci;
	if (tci)
		f->ol_flags |= RTE_MBUF_F_RX_VLAN | RTE_MBUF_F_RX_VLAN_STRIPPED;
}

uint32_t synth_max_frame_len(const struct synth_device *dev)
{
	switch (dev->opt.profile) {
	case SYNTH_PROFILE_IMIX: return 1514;
	case SYNTH_PROFILE_TCP_STREAM: return TCP_HEAD_LEN + dev->opt.mss;
	case SYNTH_PROFILE_PCAP: {
		uint32_t m = 0;
		for (uint32_t i = 0; i < dev->nb_pcap_frames; i++)
			m = RTE_MAX(m, dev->pcap_frames[i].len);
		return m;
	}
	default: return RTE_MAX(dev->opt.size - 4, 66u);
	}
}

/* Frame k of the device-wide sequence, built in scratch; returns its length. */
static uint32_t make_frame(const struct synth_device *dev, const uint8_t *kinds,
			   uint32_t k, uint8_t *scratch, struct synth_frame *f)
{
	uint32_t len, hdr_end;
	uint16_t tci = 0;
	if (dev->opt.profile == SYNTH_PROFILE_PCAP) {
		len = dev->pcap_frames[k].len;
		memcpy(scratch, dev->pcap_frames[k].data, len);
		hdr_end = len;
		f->kind = SYNTH_KIND_normal;
	} else {
		struct synth_spec s = frame_spec(dev, kinds, k);
		memcpy(scratch, dev->pattern,
		       RTE_MIN((uint32_t)SYNTH_MAX_FRAME,
			       RTE_MAX(s.len, (uint32_t)SYNTH_HEAD_MAX)));
		len = build_frame(dev, &s, k,
				  (dev->opt.hints & SYNTH_HINT_VLAN) != 0,
				  scratch, &hdr_end, &tci);
		f->kind = (uint8_t)s.kind;
	}
	struct synth_class c = synth_classify(dev, scratch, len);
	apply_hints(dev, f, &c, tci);
	f->pkt_len = len;
	f->data_len = (uint16_t)len;
	f->head_len = dev->opt.profile == SYNTH_PROFILE_PCAP ? (uint16_t)len :
		      hdr_end <= 64 ? 64 : SYNTH_HEAD_MAX;
	/* non-IP frames go to queue 0, like a NIC without a hash for them */
	f->queue = (uint8_t)((c.ol_flags & RTE_MBUF_F_RX_RSS_HASH) ?
				     synth_rss_queue(dev, c.rss) : 0);
	return len;
}

int synth_build_schedule(struct synth_device *dev, struct synth_rx_queue *q,
			 uint16_t data_room)
{
	uint32_t total = schedule_length(dev);
	uint8_t *kinds = NULL, *scratch = NULL;
	int rc = -ENOMEM;
	scratch = malloc(SYNTH_MAX_FRAME + SYNTH_HEAD_MAX);
	if (dev->opt.profile == SYNTH_PROFILE_MIXED) {
		kinds = malloc(SYNTH_MIXED_SCHEDULE);
		if (kinds)
			mixed_kinds(dev, kinds);
	}
	if (!scratch || (dev->opt.profile == SYNTH_PROFILE_MIXED && !kinds))
		goto out;
	if (synth_max_frame_len(dev) > data_room) {
		RTE_LOG(ERR, PMD,
			"%s: rx queue %u: frames of up to %u bytes do not fit "
			"the mempool's %u-byte data room\n",
			SYNTH_DRIVER_NAME, q->queue_id, synth_max_frame_len(dev),
			data_room);
		rc = -EINVAL;
		goto out;
	}
	/* pass 1: which frames are this queue's, and their head bytes */
	uint32_t mine = 0;
	size_t head_bytes = 0;
	struct synth_frame f;
	for (uint32_t k = 0; k < total; k++) {
		make_frame(dev, kinds, k, scratch, &f);
		if (f.queue != q->queue_id)
			continue;
		mine++;
		head_bytes += RTE_ALIGN_CEIL(f.head_len, 64u);
	}
	q->frames_mem = rte_zmalloc_socket("synth_frames",
					   (mine ? mine : 1) * sizeof(struct synth_frame),
					   RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	q->heads_mem = rte_zmalloc_socket("synth_heads", head_bytes ? head_bytes : 64,
					  RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (!q->frames_mem || !q->heads_mem)
		goto out;
	struct synth_frame *frames = q->frames_mem;
	uint8_t *heads = q->heads_mem;
	size_t at = 0;
	uint32_t n = 0;
	for (uint32_t k = 0; k < total; k++) {
		make_frame(dev, kinds, k, scratch, &f);
		if (f.queue != q->queue_id)
			continue;
		f.head_off = (uint32_t)at;
		memcpy(heads + at, scratch, f.head_len);
		at += RTE_ALIGN_CEIL(f.head_len, 64u);
		frames[n++] = f;
	}
	q->frames = frames;
	q->heads = heads;
	q->nb_frames = n;
	q->next = 0;
	rc = 0;
out:
	free(kinds);
	free(scratch);
	return rc;
}

/* ---- tcp-stream ---- */

int synth_build_tcp_flows(struct synth_device *dev, struct synth_rx_queue *q,
			  uint16_t data_room)
{
	uint32_t len = TCP_HEAD_LEN + dev->opt.mss;
	if (len > data_room) {
		RTE_LOG(ERR, PMD,
			"%s: rx queue %u: mss=%u makes %u-byte frames, more than "
			"the mempool's %u-byte data room\n", SYNTH_DRIVER_NAME,
			q->queue_id, dev->opt.mss, len, data_room);
		return -EINVAL;
	}
	uint32_t mine = 0;
	for (uint32_t i = 0; i < dev->opt.flows; i++) {
		struct synth_tuple t = flow_tuple(dev, i);
		mine += synth_rss_queue(dev, tuple_rss(dev, &t)) == q->queue_id;
	}
	q->tcp_flows = rte_zmalloc_socket("synth_tcp", (mine ? mine : 1) *
					  sizeof(struct synth_tcp_flow),
					  RTE_CACHE_LINE_SIZE, SOCKET_ID_ANY);
	if (!q->tcp_flows)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t i = 0; i < dev->opt.flows; i++) {
		struct synth_tuple t = flow_tuple(dev, i);
		uint32_t rss = tuple_rss(dev, &t);
		if (synth_rss_queue(dev, rss) != q->queue_id)
			continue;
		struct synth_tcp_flow *f = &q->tcp_flows[n++];
		uint64_t state = dev->opt.seed * 31 + i;
		f->seq = (uint32_t)synth_splitmix64(&state);
		uint32_t ack = (uint32_t)synth_splitmix64(&state);
		f->tsval = (uint32_t)synth_splitmix64(&state);
		f->ip_id = (uint16_t)synth_splitmix64(&state);
		f->rss = rss;
		uint8_t *p = f->head;
		memcpy(p, dev->pattern, SYNTH_HEAD_MAX);
		put_eth(p, dev, RTE_ETHER_TYPE_IPV4);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + ETH_LEN);
		ip->version_ihl = RTE_IPV4_VHL_DEF;
		ip->type_of_service = 0;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(len - ETH_LEN));
		ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_TCP;
		ip->src_addr = rte_cpu_to_be_32(t.saddr);
		ip->dst_addr = rte_cpu_to_be_32(t.daddr);
		struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);
		tcp->src_port = rte_cpu_to_be_16(t.sport);
		tcp->dst_port = rte_cpu_to_be_16(t.dport);
		tcp->recv_ack = rte_cpu_to_be_32(ack);
		tcp->data_off = (uint8_t)((TCP_HDR_LEN / 4) << 4);
		tcp->rx_win = rte_cpu_to_be_16(512);
		tcp->tcp_urp = 0;
		uint8_t *opt = (uint8_t *)(tcp + 1);
		opt[0] = 1; /* NOP */
		opt[1] = 1;
		opt[2] = 8; /* TCPOPT_TIMESTAMP */
		opt[3] = 10;
		uint32_t ecr = rte_cpu_to_be_32(ack ^ 0x5a5a5a5a);
		memcpy(opt + 8, &ecr, 4);
	}
	q->nb_tcp_flows = n;
	q->tcp_next = 0;
	q->prng = dev->opt.seed ^ (0x7c0ffee0ull + q->queue_id);
	q->tcp_payload_sum = __rte_raw_cksum(dev->pattern + TCP_HEAD_LEN,
					     dev->opt.mss, 0);
	return 0;
}

/* Writes the next segment of this queue's flows into m (whose buffer holds
 * the payload pattern when copy=0) and fills its descriptor fields. */
uint16_t synth_tcp_fill(struct synth_rx_queue *q, struct rte_mbuf *m)
{
	const struct synth_options *o = &q->dev->opt;
	struct synth_tcp_flow *f = &q->tcp_flows[q->tcp_next];
	q->tcp_next = q->tcp_next + 1 == q->nb_tcp_flows ? 0 : q->tcp_next + 1;
	uint64_t *cnt = q->counters + SYNTH_KIND_MAX;
	uint32_t mss = o->mss, seq;
	uint8_t flags = RTE_TCP_ACK_FLAG, tos = 0, ttl = 64;

	if (f->hole_pending) {
		seq = f->hole_seq; /* the segment a reorder held back */
		f->hole_pending = false;
	} else if (o->retrans_rate > 0 && synth_uniform(&q->prng) < o->retrans_rate) {
		seq = f->seq - mss;
		cnt[SYNTH_RXC_tcp_retrans]++;
	} else if (o->reorder_rate > 0 && synth_uniform(&q->prng) < o->reorder_rate) {
		f->hole_seq = f->seq;
		f->hole_pending = true;
		seq = f->seq + mss;
		f->seq += 2 * mss;
		cnt[SYNTH_RXC_tcp_reorder]++;
	} else {
		seq = f->seq;
		f->seq += mss;
	}
	if (o->psh_rate > 0 && synth_uniform(&q->prng) < o->psh_rate) {
		flags |= RTE_TCP_PSH_FLAG;
		cnt[SYNTH_RXC_tcp_psh]++;
	}
	if (o->opt_change_rate > 0 && synth_uniform(&q->prng) < o->opt_change_rate) {
		f->tsval++; /* options differ from the previous segment's */
		cnt[SYNTH_RXC_tcp_opt_change]++;
	}
	if (o->tos_change_rate > 0 && synth_uniform(&q->prng) < o->tos_change_rate) {
		tos = 0x10;
		cnt[SYNTH_RXC_tcp_tos_change]++;
	}
	if (o->ttl_change_rate > 0 && synth_uniform(&q->prng) < o->ttl_change_rate) {
		ttl = 63;
		cnt[SYNTH_RXC_tcp_ttl_change]++;
	}

	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t len = (uint16_t)(TCP_HEAD_LEN + mss);
	memcpy(p, f->head, SYNTH_HEAD_MAX);
	if (q->copy && len > SYNTH_HEAD_MAX)
		memcpy(p + SYNTH_HEAD_MAX, q->pattern + SYNTH_HEAD_MAX,
		       len - SYNTH_HEAD_MAX);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(p + ETH_LEN);
	ip->type_of_service = tos;
	ip->time_to_live = ttl;
	ip->packet_id = rte_cpu_to_be_16(f->ip_id++);
	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	struct rte_tcp_hdr *tcp = (struct rte_tcp_hdr *)(ip + 1);
	tcp->sent_seq = rte_cpu_to_be_32(seq);
	tcp->tcp_flags = flags;
	uint32_t tsval = rte_cpu_to_be_32(f->tsval);
	memcpy((uint8_t *)(tcp + 1) + 4, &tsval, 4);
	tcp->cksum = 0;
	/* pseudo header + TCP header + the payload sum computed once */
	uint32_t sum = __rte_raw_cksum(tcp, TCP_HDR_LEN, q->tcp_payload_sum);
	sum = (uint32_t)__rte_raw_cksum_reduce(sum) + rte_ipv4_phdr_cksum(ip, 0);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	tcp->cksum = (uint16_t)~sum;

	m->pkt_len = len;
	m->data_len = len;
	m->vlan_tci = 0;
	uint32_t hints = o->hints;
	m->packet_type = (hints & SYNTH_HINT_PTYPE) ?
		RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP : 0;
	m->hash.rss = (hints & SYNTH_HINT_HASH) ? f->rss : 0;
	m->ol_flags = ((hints & SYNTH_HINT_HASH) ? RTE_MBUF_F_RX_RSS_HASH : 0) |
		      ((hints & SYNTH_HINT_CSUM) ? RTE_MBUF_F_RX_IP_CKSUM_GOOD |
							   RTE_MBUF_F_RX_L4_CKSUM_GOOD : 0);
	return len;
}

/* ---- pcap ---- */

#define PCAP_MAGIC_NSEC 0xa1b23c4du
#define PCAP_LINKTYPE_ETHERNET 1u

/* the classic header tx_pcap= writes */
struct pcap_file_header_out {
	uint32_t magic;
	uint16_t version_major, version_minor;
	int32_t thiszone;
	uint32_t sigfigs, snaplen, linktype;
};

struct pcap_record_header {
	uint32_t ts_sec, ts_frac, caplen, len;
};

static int synth_pcap_parse(struct synth_device *dev, FILE *f, size_t size,
			    bool changed);

/* The file as one snapshot: its st_size bytes, read at once, so that a
 * capture still being written is parsed as it was at that moment (libpcap
 * reading the file itself met records that grew under it). *changed says
 * whether the file's size or mtime moved while it was read. */
static uint8_t *synth_pcap_snapshot(int fd, const struct stat *st, size_t *got,
			      bool *changed)
{
	const size_t size = (size_t)st->st_size;
	uint8_t *buf = malloc(size ? size : 1);
	struct stat after;

	*got = 0;
	while (buf != NULL && *got < size) {
		ssize_t n = read(fd, buf + *got, size - *got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		*got += (size_t)n;
	}
	*changed = fstat(fd, &after) != 0 || after.st_size != st->st_size ||
		   after.st_mtim.tv_sec != st->st_mtim.tv_sec ||
		   after.st_mtim.tv_nsec != st->st_mtim.tv_nsec || *got != size;
	return buf;
}

/* pcap=FILE through libpcap: classic pcap (either byte order, micro- or
 * nanosecond) and pcapng (listrx's own --capture-* files among them),
 * Ethernet only, parsed from one snapshot of the file. The frames are
 * copied into one buffer no larger than the snapshot. Records captured
 * shorter than they were on the wire (caplen < len: a snap length) are
 * replayed as captured, and counted at load, as tcpreplay warns. */
int synth_pcap_load(struct synth_device *dev)
{
	const char *path = dev->opt.pcap;
	/* O_NONBLOCK: a FIFO does not block the probe; a regular file only */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		RTE_LOG(ERR, PMD, "%s: pcap=%s: cannot open: %s\n", dev->name, path,
			fd < 0 ? strerror(errno)
			       : S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -EINVAL;
	}
	size_t got;
	bool changed;
	uint8_t *snap = synth_pcap_snapshot(fd, &st, &got, &changed);
	close(fd);
	FILE *f = snap && got ? fmemopen(snap, got, "rb") : NULL;
	if (!f) {
		RTE_LOG(ERR, PMD, "%s: pcap=%s: cannot read: %s\n", dev->name, path,
			!snap ? strerror(ENOMEM) : got ? strerror(errno)
			: "an empty file (not a pcap or pcapng file)");
		free(snap);
		return -EINVAL;
	}
	int rc = synth_pcap_parse(dev, f, got, changed);
	free(snap);
	return rc;
}

/* The frames of the snapshot f (size bytes); the file changed while it
 * was read: a parse error says so. */
static int synth_pcap_parse(struct synth_device *dev, FILE *f, size_t size,
			    bool changed)
{
	const char *path = dev->opt.pcap;
	const char *moved = changed ? " (the file changed while it was read: a "
				      "capture still being written? replay a "
				      "finished one)" : "";
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	pcap_t *p = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO,
							     errbuf);
	if (!p) {
		RTE_LOG(ERR, PMD, "%s: pcap=%s: not a pcap or pcapng file: %s%s\n", dev->name,
			path, errbuf, moved);
		fclose(f);
		return -EINVAL;
	}
	int rc = -EINVAL;
	int link = pcap_datalink(p);
	if (link != DLT_EN10MB) {
		RTE_LOG(ERR, PMD, "%s: pcap=%s: link type %d (%s), only Ethernet (1)\n",
			dev->name, path, link,
			pcap_datalink_val_to_name(link) ? pcap_datalink_val_to_name(link) : "?");
		goto out;
	}
	dev->pcap_data = malloc(size);
	size_t cap = 64;
	dev->pcap_frames = malloc(cap * sizeof(*dev->pcap_frames));
	if (!dev->pcap_data || !dev->pcap_frames) {
		rc = -ENOMEM;
		goto out;
	}
	size_t used = 0;
	uint32_t truncated = 0;
	struct pcap_pkthdr *h;
	const u_char *data;
	int got;
	while ((got = pcap_next_ex(p, &h, &data)) == 1) {
		uint32_t caplen = h->caplen;
		if (caplen > SYNTH_MAX_FRAME || caplen < ETH_LEN || used + caplen > size) {
			RTE_LOG(ERR, PMD, "%s: pcap=%s: record %u has %u bytes; valid %u..%u%s\n",
				dev->name, path, dev->nb_pcap_frames, caplen, ETH_LEN,
				SYNTH_MAX_FRAME, moved);
			goto out;
		}
		truncated += caplen < h->len;
		if (dev->nb_pcap_frames == cap) {
			cap *= 2;
			void *n = realloc(dev->pcap_frames, cap * sizeof(*dev->pcap_frames));
			if (!n) {
				rc = -ENOMEM;
				goto out;
			}
			dev->pcap_frames = n;
		}
		memcpy(dev->pcap_data + used, data, caplen);
		dev->pcap_frames[dev->nb_pcap_frames].len = caplen;
		dev->pcap_frames[dev->nb_pcap_frames].data =
			(uint8_t *)(uintptr_t)used; /* rebased below */
		dev->nb_pcap_frames++;
		used += caplen;
	}
	if (got == PCAP_ERROR) {
		RTE_LOG(ERR, PMD, "%s: pcap=%s: record %u: %s%s\n", dev->name, path,
			dev->nb_pcap_frames, pcap_geterr(p), moved);
		goto out;
	}
	if (dev->nb_pcap_frames == 0) {
		RTE_LOG(ERR, PMD, "%s: pcap=%s: no packets\n", dev->name, path);
		goto out;
	}
	if (truncated)
		RTE_LOG(WARNING, PMD,
			"%s: pcap=%s: %u of %u records were captured shorter than they "
			"were on the wire (caplen < len: a snap length); they are replayed "
			"as captured\n", dev->name, path, truncated, dev->nb_pcap_frames);
	for (uint32_t i = 0; i < dev->nb_pcap_frames; i++)
		dev->pcap_frames[i].data =
			dev->pcap_data + (uintptr_t)dev->pcap_frames[i].data;
	rc = 0;
out:
	pcap_close(p); /* closes f */
	return rc;
}

int synth_tx_pcap_open(struct synth_device *dev, const char *name, const char *path)
{
	/* O_NONBLOCK: a FIFO must not block the probe (deaf to signals);
	 * O_NOFOLLOW: root does not write through a planted link; nothing
	 * is truncated before it is known to be a regular file */
	struct stat st;
	const char *why = NULL;
	if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
		why = S_ISDIR(st.st_mode) ? "is a directory"
		      : S_ISLNK(st.st_mode) ? "is a symbolic link (name its target)"
					    : "not a regular file";
	int fd = why ? -1 : open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (why)
		;
	else if (fd < 0)
		why = errno == ELOOP ? "is a symbolic link (name its target)" : strerror(errno);
	else if (fstat(fd, &st) != 0)
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file";
	else if (ftruncate(fd, 0) != 0 || fcntl(fd, F_SETFL, 0) != 0)
		why = strerror(errno);
	if (!why && !(dev->tx_pcap = fdopen(fd, "wb")))
		why = strerror(errno);
	if (!why && synth_pcap_write_header(dev->tx_pcap))
		why = strerror(errno ? errno : EIO);
	if (!why)
		return 0;
	RTE_LOG(ERR, PMD, "%s: tx_pcap=%s: cannot write: %s\n", name, path, why);
	if (dev->tx_pcap) {
		fclose(dev->tx_pcap);
		dev->tx_pcap = NULL;
	} else if (fd >= 0) {
		close(fd);
	}
	return -EINVAL;
}

int synth_pcap_write_header(FILE *f)
{
	struct pcap_file_header_out h = {PCAP_MAGIC_NSEC, 2, 4, 0, 0, 65535,
				     PCAP_LINKTYPE_ETHERNET};
	return fwrite(&h, sizeof(h), 1, f) == 1 ? 0 : -EIO;
}

/* Slow path (tx_pcap=): one record per frame, segments concatenated. */
void synth_pcap_write_frame(FILE *f, const struct rte_mbuf *m)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct pcap_record_header r = {(uint32_t)ts.tv_sec, (uint32_t)ts.tv_nsec,
				       m->pkt_len, m->pkt_len};
	flockfile(f);
	fwrite(&r, sizeof(r), 1, f);
	for (const struct rte_mbuf *s = m; s; s = s->next)
		fwrite(rte_pktmbuf_mtod(s, const void *), 1, s->data_len, f);
	funlockfile(f);
}
