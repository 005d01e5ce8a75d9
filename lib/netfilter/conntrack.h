/* SPDX-License-Identifier: BSD-3-Clause
 * IPv4 and IPv6 connection tracking as net/netfilter/nf_conntrack_core.c runs it on
 * a host's receive path (docs/netfilter.md): nf_conntrack_in at
 * PREROUTING (priority -200, after raw) finds the packet's entry by its
 * tuple or makes an unconfirmed one, the protocol's tracker
 * (nf_conntrack_proto_tcp.c, _udp.c, _icmp.c, _generic.c) judges the
 * packet, and nf_confirm at LOCAL_IN's end inserts a new entry. What the
 * host sends (listrx's replies) goes through lrx_ct_local_out, as
 * ipv4_conntrack_local / ipv6_conntrack_local and the POSTROUTING confirm.
 * One table holds both families, as the kernel's does (the tuple's l3).
 *
 * One table per user (per l3-demux instance, so per polling lcore); the
 * kernel's is one per network namespace, shared by every CPU.
 */
#ifndef LISTRX_CONNTRACK_H
#define LISTRX_CONNTRACK_H

#include <stdbool.h>
#include <stdint.h>

#include "netfilter.h"

/* struct nf_conntrack_tuple: addresses network order (IPv4's in the
 * first 4 bytes, the rest 0), ports (or the ICMP/ICMPv6 id, and
 * type << 8 | code in dport) host order, l3 the family (4 or 6: the
 * kernel's src.l3num). 40 bytes, compared whole. */
struct lrx_ct_tuple {
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t l3;
	uint8_t pad[2];
};

/* enum tcp_conntrack, then sIV (MAX) and sIG */
enum lrx_tcp_ct {
	LRX_TCP_CT_NONE, LRX_TCP_CT_SYN_SENT, LRX_TCP_CT_SYN_RECV,
	LRX_TCP_CT_ESTABLISHED, LRX_TCP_CT_FIN_WAIT, LRX_TCP_CT_CLOSE_WAIT,
	LRX_TCP_CT_LAST_ACK, LRX_TCP_CT_TIME_WAIT, LRX_TCP_CT_CLOSE,
	LRX_TCP_CT_SYN_SENT2, LRX_TCP_CT_MAX, LRX_TCP_CT_IGNORE,
};
/* enum tcp_bit_set: get_conntrack_index of the flags */
enum lrx_tcp_bit { LRX_TCP_SYN_SET, LRX_TCP_SYNACK_SET, LRX_TCP_FIN_SET,
		   LRX_TCP_ACK_SET, LRX_TCP_RST_SET, LRX_TCP_NONE_SET };

/* tcp_conntracks[dir][index][state] */
enum lrx_tcp_ct lrx_tcp_ct_next(unsigned dir, enum lrx_tcp_bit index,
				enum lrx_tcp_ct state);
enum lrx_tcp_bit lrx_tcp_ct_index(uint8_t tcp_flags);
const char *lrx_tcp_ct_name(enum lrx_tcp_ct state);

#define LRX_CT_NIL UINT32_MAX

/* IPS_* status bits kept */
enum { LRX_CT_CONFIRMED = 1, LRX_CT_SEEN_REPLY = 2, LRX_CT_ASSURED = 4 };

/* IP_CT_TCP_FLAG_* (and IP_CT_EXP_CHALLENGE_ACK, IP_CT_TCP_SIMULTANEOUS_OPEN
 * of last_flags), the kernel's values */
enum {
	LRX_CT_TCP_WINDOW_SCALE = 0x01, LRX_CT_TCP_SACK_PERM = 0x02,
	LRX_CT_TCP_CLOSE_INIT = 0x04, LRX_CT_TCP_BE_LIBERAL = 0x08,
	LRX_CT_TCP_DATA_UNACKNOWLEDGED = 0x10, LRX_CT_TCP_MAXACK_SET = 0x20,
	LRX_CT_TCP_EXP_CHALLENGE_ACK = 0x40, LRX_CT_TCP_SIMULTANEOUS_OPEN = 0x80,
};

/* struct ip_ct_tcp_state: what tcp_in_window knows of one direction's
 * sender (sequence numbers as sent, host order) */
struct lrx_ct_tcp_seen {
	uint32_t td_end;     /* max of seq + len sent */
	uint32_t td_maxend;  /* max of ack + max(win, 1) received */
	uint32_t td_maxwin;  /* max(win) sent, grown by what overshot */
	uint32_t td_maxack;  /* max of the acks sent (MAXACK_SET) */
	uint8_t td_scale;    /* its window scale (SYN option, RFC 7323) */
	uint8_t flags;       /* LRX_CT_TCP_* */
};

/* struct ip_ct_tcp */
struct lrx_ct_tcp {
	struct lrx_ct_tcp_seen seen[2];
	uint32_t last_seq, last_ack, last_end; /* the last packet's */
	uint16_t last_win;
	uint8_t state;                 /* enum lrx_tcp_ct */
	uint8_t last_dir, last_index, last_wscale, last_flags;
	uint8_t retrans;               /* the same ACK again and again */
};

struct lrx_ct_entry {
	struct lrx_ct_tuple tuple[2];  /* tuplehash[IP_CT_DIR_ORIGINAL/REPLY] */
	uint32_t next[2];              /* the bucket chains, node = i << 1 | dir */
	uint64_t expires;              /* ms on the run's clock */
	uint64_t stream_ts;            /* UDP: 2 s after creation */
	uint8_t status;
	struct lrx_ct_tcp tcp;         /* TCP's tracker */
};

/* conntrack -S's counters (/proc/net/stat/nf_conntrack) */
struct lrx_ct_stats {
	uint64_t found;       /* lookups that found an entry (resolve_normal_ct) */
	uint64_t invalid;     /* packets left without an entry */
	uint64_t insert;      /* entries confirmed */
	uint64_t drop;        /* packets dropped: table full, no early drop */
	uint64_t early_drop;  /* unassured entries evicted for a new one */
	uint64_t error;       /* ICMP errors not about a tracked flow */
	uint64_t entries;     /* the entries now (nf_conntrack_count) */
};

struct lrx_ct {
	uint32_t max;                  /* nf_conntrack_max */
	uint32_t bucket_mask;
	uint32_t *buckets;             /* first node of each chain, LRX_CT_NIL */
	struct lrx_ct_entry *entries;  /* max of them */
	uint32_t free_head;            /* chained through next[0] */
	uint32_t pending;              /* the packet's unconfirmed entry */
	uint32_t gc_bucket;            /* gc_worker's position */
	uint64_t gc_ms;                /* the last sweep */
	/* net.netfilter.nf_conntrack_tcp_be_liberal (0: out-of-window
	 * segments are INVALID) and _tcp_loose (1: a connection is picked
	 * up mid-stream); lrx_ct_init sets the kernel's defaults, 0 and 1 */
	bool tcp_be_liberal, tcp_loose;
	struct lrx_ct_stats st;
};

/* Sets up ct with a table of max entries on socket: 0, -ENOMEM. */
int lrx_ct_init(struct lrx_ct *ct, uint32_t max, int socket);
void lrx_ct_fini(struct lrx_ct *ct);

/* nf_conntrack_in on a received IPv4 packet (whole: nf_defrag_ipv4 ran
 * before) or IPv6 packet (iph[0] >> 4 tells; its transport header found
 * as ipv6_get_l4proto finds it, p->thoff not read; fragments are not
 * gathered first: docs/netfilter.md). p->ctstate is set (an UNTRACKED one is left alone); returns
 * LRX_NF_ACCEPT, or LRX_NF_DROP when the table is full and nothing can be
 * evicted. A new entry stays pending until lrx_ct_confirm (or the next
 * packet, which frees it: the packet was dropped). now: ms. */
unsigned lrx_ct_in(struct lrx_ct *ct, struct lrx_nf_pkt *p, uint64_t now);
/* The packet that had the pending entry did not reach nf_confirm (it was
 * dropped): the entry goes with it (nf_conntrack_destroy of an
 * unconfirmed one). lrx_ct_in does it first too. */
void lrx_ct_release(struct lrx_ct *ct);
/* nf_confirm: inserts the pending entry, if any. */
void lrx_ct_confirm(struct lrx_ct *ct, uint64_t now);
/* ipv4_conntrack_local (ipv6_conntrack_local) then the POSTROUTING
 * confirm, for a packet the host sends: its entry updated (or one made and
 * inserted). No checksum test, as the kernel skips it on output. */
void lrx_ct_local_out(struct lrx_ct *ct, struct lrx_nf_pkt *p, uint64_t now);
/* gc_worker: up to n buckets swept of expired entries. */
void lrx_ct_gc(struct lrx_ct *ct, uint64_t now, unsigned n);
/* The entry of a tuple (either direction), LRX_CT_NIL if none; *dir its
 * direction. For tests and listings. */
uint32_t lrx_ct_find(struct lrx_ct *ct, const struct lrx_ct_tuple *t,
		     uint64_t now, unsigned *dir);

#endif
