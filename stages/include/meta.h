/* SPDX-License-Identifier: BSD-3-Clause
 * skb-like packet metadata, filled by build-meta and read by the stages
 * after it (GRO, l3-demux, generic XDP). Where it lives (mbuf private area
 * or a separate metadata pool) is a build-meta parameter; the other stages
 * reach it through one mbuf dynamic field that holds its address, so they
 * do not care where it is.
 * Layout: the fields the stages read first, then padding up to the
 * configured metadata size (the kernel's sk_buff is 232 bytes).
 */
#ifndef LISTRX_META_H
#define LISTRX_META_H

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

/* like skb->pkt_type */
enum lrx_pkt_type {
	LRX_PACKET_HOST = 0,
	LRX_PACKET_BROADCAST = 1,
	LRX_PACKET_MULTICAST = 2,
	LRX_PACKET_OTHERHOST = 3,
};

/* like skb->ip_summed */
enum lrx_csum_state {
	LRX_CHECKSUM_NONE = 0,
	LRX_CHECKSUM_UNNECESSARY = 1, /* NIC (or GRO) verified L4 */
	LRX_CHECKSUM_COMPLETE = 2,
	LRX_CHECKSUM_BAD = 3,         /* NIC said bad: stack verifies and drops */
};

/* which NIC hints build-meta took (each can be switched off) */
enum lrx_meta_hint {
	LRX_HINT_HASH = 1u << 0,
	LRX_HINT_CSUM = 1u << 1,
	LRX_HINT_VLAN = 1u << 2,
	LRX_HINT_TIMESTAMP = 1u << 3,
	LRX_HINT_PTYPE = 1u << 4,
};

struct lrx_meta {
	/* hot: what l3-demux and GRO read */
	uint16_t protocol;       /* ethertype after VLAN tags, host order */
	uint16_t mac_len;        /* L2 header length incl. VLAN tags */
	uint16_t network_offset; /* offset of the L3 header in the frame */
	uint16_t transport_offset; /* 0 until L3 parsed */
	uint8_t pkt_type;        /* enum lrx_pkt_type */
	uint8_t ip_summed;       /* enum lrx_csum_state */
	uint8_t l4_proto;        /* IPPROTO_* once known, else 0 */
	uint8_t hints;           /* enum lrx_meta_hint taken */
	uint16_t vlan_tci[2];    /* the first two tags seen, outer first: the
				  * NIC's (hint vlan), then the frame's */
	uint8_t vlan_count;
	uint8_t l3_csum_state;   /* enum lrx_csum_state for the IPv4 header */
	uint16_t ingress_port;
	uint16_t ingress_queue;
	uint16_t gso_size;       /* set by GRO on merged packets */
	uint16_t gso_segs;
	uint16_t vlan_vid;       /* VID of the VLAN device it was received on
				  * (vlan_do_receive), 0 = the port itself */
	uint32_t hash;           /* RSS hash (0 = none) */
	uint32_t len;            /* L3 length after trimming */
	/* check_vlan_id made pkt_type OTHERHOST (a tag for no VLAN device):
	 * after sch_handle_ingress in __netif_receive_skb_core, so tc
	 * ingress still sees eth_type_trans's pkt_type, kept here */
	uint8_t vlan_otherhost;
	uint8_t eth_pkt_type;
	uint64_t rx_timestamp;   /* NIC timestamp or synth TSC stamp */
	uint32_t ptype;          /* RTE_PTYPE_* from the NIC when hinted */
	uint32_t mark;
};

/* The fields fill 56 bytes: build-meta's smallest meta_size is
 * sizeof(struct lrx_meta), and a new field goes into padding first. */
static_assert(sizeof(struct lrx_meta) == 56, "struct lrx_meta grew");

/* Offset of the dynamic field holding struct lrx_meta *; registered once
 * by lrx_meta_register() (any stage init may call it). */
extern int lrx_meta_dynfield_offset;
int lrx_meta_register(void);

static inline struct lrx_meta *lrx_meta(const struct rte_mbuf *m)
{
	return *RTE_MBUF_DYNFIELD(m, lrx_meta_dynfield_offset,
				  struct lrx_meta **);
}
static inline void lrx_meta_set(struct rte_mbuf *m, struct lrx_meta *meta)
{
	*RTE_MBUF_DYNFIELD(m, lrx_meta_dynfield_offset, struct lrx_meta **) =
		meta;
}

#endif
