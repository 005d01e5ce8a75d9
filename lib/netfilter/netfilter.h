/* SPDX-License-Identifier: BSD-3-Clause
 * Netfilter's hooks on the receive path, as l3-demux calls them
 * (docs/netfilter.md): NF_INET_PRE_ROUTING in ip_rcv after ip_rcv_core and
 * NF_INET_LOCAL_IN in ip_local_deliver after ip_defrag (IPv4, iptables);
 * PRE_ROUTING in ipv6_rcv after ip6_rcv_core and LOCAL_IN in ip6_input
 * (IPv6, ip6tables: a rule set of family AF_INET6). Each hook runs the
 * tables registered there in priority order (raw -300, mangle
 * -150 at PREROUTING; mangle -150, filter 0 at INPUT), as nf_hook_slow
 * runs its hook entries: NF_ACCEPT goes on to the next table, NF_DROP
 * ends it (SKB_DROP_REASON_NETFILTER_DROP).
 *
 * A table is run as ipt_do_table runs it: entries laid out chain after
 * chain, each built-in chain ending with its policy and each user chain
 * with an implicit RETURN; a matching entry counts the packet (skb->len
 * bytes) and takes its verdict: ACCEPT or DROP end the table, RETURN pops
 * the jump stack (or goes to the chain's policy, the underflow), a jump
 * pushes, a goto does not. ip_packet_match compares the addresses, the
 * input device, the protocol and the fragment flag (ip6_packet_match: the
 * addresses, the device and the upper-layer protocol ipv6_find_hdr finds
 * past the extension headers); the udp, tcp and
 * multiport matches (xt_tcpudp, xt_multiport) never match a non-first
 * fragment and drop a packet too short for their ports (hotdrop).
 *
 * The rules come from a file in iptables-save syntax (nf_rules.c). The
 * state matches (xt_conntrack's --ctstate, xt_state's --state) read the
 * state nf_conntrack_in gave the packet (conntrack.h), and the raw table's
 * CT --notrack target sets it UNTRACKED.
 */
#ifndef LISTRX_NETFILTER_H
#define LISTRX_NETFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_ethdev.h>

#include "stage.h"

/* The hooks on the receive path (enum nf_inet_hooks' first two, here
 * 0 and 1). */
enum lrx_nf_hook {
	LRX_NF_PRE_ROUTING = 0,
	LRX_NF_LOCAL_IN = 1,
	LRX_NF_HOOKS,
};

/* nf_hook_slow's verdicts */
enum { LRX_NF_DROP = 0, LRX_NF_ACCEPT = 1 };

/* Standard targets, as the kernel encodes them in a standard target's
 * verdict: -NF_DROP - 1, -NF_ACCEPT - 1, XT_RETURN (-NF_REPEAT - 1); a
 * verdict >= 0 is the entry to jump to. */
#define LRX_NF_V_DROP (-1)
#define LRX_NF_V_ACCEPT (-2)
#define LRX_NF_V_RETURN (-5)

/* ip_packet_match's inversion flags (IPT_INV_*), and the matches' */
enum {
	LRX_NF_INV_IN = 0x01,
	LRX_NF_INV_SRC = 0x08,
	LRX_NF_INV_DST = 0x10,
	LRX_NF_INV_FRAG = 0x20,
	LRX_NF_INV_PROTO = 0x40,
};
enum { LRX_NF_M_UDP = 1, LRX_NF_M_TCP = 2, LRX_NF_M_MULTIPORT = 4, LRX_NF_M_CTSTATE = 8 };
/* A packet's conntrack state as xt_state / xt_conntrack test it: one bit
 * (XT_STATE_BIT(ctinfo), XT_STATE_INVALID, XT_STATE_UNTRACKED) */
enum {
	LRX_NF_CT_INVALID = 1,
	LRX_NF_CT_ESTABLISHED = 2,
	LRX_NF_CT_RELATED = 4,
	LRX_NF_CT_NEW = 8,
	LRX_NF_CT_UNTRACKED = 64,
};
enum { LRX_NF_TU_INV_SRC = 1, LRX_NF_TU_INV_DST = 2, LRX_NF_TU_INV_FLAGS = 4 };
enum { LRX_NF_MP_SOURCE, LRX_NF_MP_DESTINATION, LRX_NF_MP_EITHER };
#define LRX_NF_MULTI_PORTS 15 /* XT_MULTI_PORTS */

static_assert(RTE_MAX_ETHPORTS <= 64, "a port bitmap is 64 bits");

/* One entry (struct ipt_entry or ip6t_entry with its matches and
 * target). */
struct lrx_nf_rule {
	/* struct ipt_ip, addresses network order */
	uint32_t src, smsk, dst, dmsk;
	uint8_t proto;        /* 0: any */
	bool proto_set;       /* IP6T_F_PROTO: -p given (IPv6: -p all too) */
	uint8_t inv;          /* LRX_NF_INV_* */
	bool frag;            /* -f: non-first fragments only */
	uint8_t matches;      /* LRX_NF_M_* */
	/* -i, resolved to listrx's devices: portN (bit N of in_ports), all
	 * VLAN devices of port N (bit N of in_vlan_ports), one VLAN device
	 * portN.VID (in_vlan_vid != 0) */
	bool in_any;
	uint16_t in_vlan_port, in_vlan_vid;
	uint64_t in_ports, in_vlan_ports;
	/* xt_tcpudp: port ranges, inversions, TCP flags */
	uint16_t spts[2], dpts[2];
	uint8_t tu_inv;
	uint8_t flg_mask, flg_cmp;
	/* xt_multiport v1 */
	uint8_t mp_flags, mp_count;
	bool mp_invert;
	uint16_t mp_ports[LRX_NF_MULTI_PORTS];
	uint8_t mp_pflags[LRX_NF_MULTI_PORTS];
	/* xt_conntrack --ctstate / xt_state --state: LRX_NF_CT_* bits */
	uint8_t ct_states;
	bool ct_invert;
	bool notrack;         /* -j CT --notrack (raw): UNTRACKED, go on */
	/* the standard target: LRX_NF_V_* or an entry index */
	int32_t verdict;
	bool is_goto;         /* -g: no return to this chain */
	uint16_t line;        /* in the file; 0 for a policy / implicit return */
	/* struct ip6t_ip6's addresses (a rule set of family AF_INET6) */
	uint8_t src6[16], smsk6[16], dst6[16], dmsk6[16];
};

struct lrx_nf_counter {
	uint64_t pkts, bytes;
};

#define LRX_NF_CHAIN_NAME_MAX 29 /* XT_EXTENSION_MAXNAMELEN */
#define LRX_NF_CHAINS_MAX 64
#define LRX_NF_ENTRIES_MAX 4096

enum lrx_nf_table_id { LRX_NF_RAW, LRX_NF_MANGLE, LRX_NF_FILTER, LRX_NF_TABLES };

struct lrx_nf_chain {
	char name[LRX_NF_CHAIN_NAME_MAX];
	uint8_t table;        /* enum lrx_nf_table_id */
	bool builtin;
	int8_t hook;          /* the hook of a built-in chain, -1 none (FORWARD,
			       * OUTPUT, POSTROUTING: never reached on RX) */
	uint16_t line;        /* where it was declared */
	uint32_t first;       /* its first entry */
	uint32_t n_rules;     /* its rules; the entry after them is the
			       * policy (built-in) or the implicit RETURN */
	char map_name[48];    /* "TABLE/CHAIN" ("ip6/TABLE/CHAIN"), its
			       * counters' map */
};

/* A loaded rule set. The rules are read-only once loaded and may be
 * shared; the counters are per user (per stage instance). */
struct lrx_nf {
	int family;           /* AF_INET: iptables, AF_INET6: ip6tables */
	uint32_t n_entries;
	struct lrx_nf_rule *rules;
	unsigned n_chains;
	struct lrx_nf_chain chains[LRX_NF_CHAINS_MAX];
	/* per hook, the tables registered there in priority order, and per
	 * table the entry a hook starts at and its underflow (the policy) */
	uint8_t n_hook_tables[LRX_NF_HOOKS];
	uint8_t hook_tables[LRX_NF_HOOKS][LRX_NF_TABLES];
	uint32_t hook_entry[LRX_NF_TABLES][LRX_NF_HOOKS];
	uint32_t underflow[LRX_NF_TABLES][LRX_NF_HOOKS];
	uint32_t stacksize;   /* user chains + 1 */
	bool uses_conntrack;  /* a state match or CT --notrack: the rules
			       * need nf_conntrack (nf_ct_netns_get) */
};

/* The packet as the hooks see it. */
struct lrx_nf_pkt {
	const uint8_t *iph;   /* the IPv4 / IPv6 header, in the first segment */
	uint32_t len;         /* skb->len at the hook: the IP packet */
	uint32_t thoff;       /* the transport header's offset from iph */
	uint32_t seg_len;     /* bytes from iph in the first segment */
	uint16_t fragoff;     /* IPv4: ntohs(frag_off) & IP_OFFSET; IPv6:
			       * the fragment header's offset in bytes */
	uint16_t in_port, in_vid; /* the input device: portN or portN.VID */
	int16_t nexthdr;      /* IPv6: lrx_nf6_find_hdr's result (thoff and
			       * fragoff are its) */
	uint8_t ctstate;      /* LRX_NF_CT_*: nf_conntrack_in's verdict on
			       * the packet (0: conntrack off) */
};

/* ---- loading ------------------------------------------------------------- */
/* Parses an iptables-save text (family AF_INET) or an ip6tables-save
 * text (AF_INET6) (nf_rules.c). name names it in messages. Returns 0, or
 * -EINVAL with "name:line: ..." and what is valid in err; *out is freed
 * with lrx_nf_free. */
int lrx_nf_parse_family(const char *text, const char *name, int family,
			struct lrx_nf **out, char *err, size_t err_len);
/* lrx_nf_parse_family(text, name, AF_INET, ...) */
int lrx_nf_parse(const char *text, const char *name, struct lrx_nf **out,
		 char *err, size_t err_len);
/* Reads the file and parses it. */
int lrx_nf_load_family(const char *path, int family, struct lrx_nf **out,
		       char *err, size_t err_len);
int lrx_nf_load(const char *path, struct lrx_nf **out, char *err,
		size_t err_len);
void lrx_nf_free(struct lrx_nf *nf);
/* The rules a packet may walk from each hooked chain, every jump taken
 * (nf_check.c): -EINVAL with "name:line: 'CHAIN': ..." in err above
 * LRX_NF_WALK_MAX (a jump graph that multiplies), else 0. */
#define LRX_NF_WALK_MAX (1ull << 16)
int lrx_nf_walk_check(const struct lrx_nf *nf, const char *name, char *err,
		      size_t err_len);
/* The input devices the rules name one by one (-i portN, portN.VID)
 * against the run's ports: the first missing one in warn ("name: line
 * N: ..."), returns 1; 0 when all are there. A warning: iptables takes a
 * device that does not exist (yet). */
int lrx_nf_ports_check(const struct lrx_nf *nf, const char *name, const uint16_t *ports,
		       unsigned n_ports, char *warn, size_t warn_len);
const char *lrx_nf_table_name(unsigned table);

/* ---- the report ------------------------------------------------------------
 * One map per chain, named "TABLE/CHAIN": key the rule's number (u32, 1
 * first, as iptables -L --line-numbers), 0 for the policy (or a user
 * chain's implicit return); value {pkts, bytes} (2 x u64), what
 * iptables -L -v -x shows. */
bool lrx_nf_map_at(const struct lrx_nf *nf, unsigned i,
		   struct lrx_stage_map *out);
bool lrx_nf_map_next(const struct lrx_nf *nf, const struct lrx_nf_counter *ctr,
		     unsigned i, uint32_t *cursor, void *key, void *value);
/* iptables -L -v -x -n of the hooked chains into buf (for messages and
 * tests); returns the length it needed. */
size_t lrx_nf_list(const struct lrx_nf *nf, const struct lrx_nf_counter *ctr,
		   char *buf, size_t len);

/* ---- running ------------------------------------------------------------- */
static inline bool lrx_nf_port_match(uint16_t lo, uint16_t hi, uint16_t port,
				     bool invert)
{
	return (port >= lo && port <= hi) ^ invert;
}

/* ports_match_v1 */
static inline bool lrx_nf_multiport(const struct lrx_nf_rule *r, uint16_t src,
				    uint16_t dst)
{
	for (unsigned i = 0; i < r->mp_count; i++) {
		uint16_t s = r->mp_ports[i], e = s;
		if (r->mp_pflags[i])
			e = r->mp_ports[++i];
		bool in_src = src >= s && src <= e, in_dst = dst >= s && dst <= e;
		if ((r->mp_flags == LRX_NF_MP_SOURCE && in_src) ||
		    (r->mp_flags == LRX_NF_MP_DESTINATION && in_dst) ||
		    (r->mp_flags == LRX_NF_MP_EITHER && (in_src || in_dst)))
			return !r->mp_invert;
	}
	return r->mp_invert;
}

static inline bool lrx_nf_iface(const struct lrx_nf_rule *r,
				const struct lrx_nf_pkt *p)
{
	if (r->in_any)
		return true;
	if (p->in_port >= 64)
		return false;
	if (p->in_vid == 0)
		return r->in_ports >> p->in_port & 1;
	return (r->in_vlan_ports >> p->in_port & 1) ||
	       (r->in_vlan_vid == p->in_vid && r->in_vlan_port == p->in_port);
}

/* The rule's matches (xt_tcpudp, xt_multiport) past ip_packet_match /
 * ip6_packet_match; *hotdrop as par->hotdrop. */
static inline bool lrx_nf_xt_match(const struct lrx_nf_rule *r,
				   const struct lrx_nf_pkt *p, bool *hotdrop)
{
	if (r->matches & LRX_NF_M_CTSTATE) {
		/* state_mt / conntrack_mt_v3's state test */
		if (((p->ctstate & r->ct_states) != 0) == r->ct_invert)
			return false;
		if (r->matches == LRX_NF_M_CTSTATE)
			return true;
	}
	/* xt_tcpudp and xt_multiport: a non-first fragment has no ports
	 * (tcp_mt drops a fragment at offset 1, a flag overwrite) */
	if (p->fragoff != 0) {
		if (p->fragoff == 1 && (r->matches & LRX_NF_M_TCP))
			*hotdrop = true;
		return false;
	}
	/* skb_header_pointer: the header must be within skb->len */
	const uint32_t need = (r->matches & LRX_NF_M_TCP) ? 20
			      : (r->matches & LRX_NF_M_UDP) ? 8 : 4;
	if (p->thoff + need > p->len) {
		*hotdrop = true;
		return false;
	}
	uint8_t th[20];
	const uint8_t *t = p->iph + p->thoff;
	if (unlikely(p->thoff + need > p->seg_len))
		return false; /* not in the first segment: l3-demux pulls 60 */
	memcpy(th, t, need);
	const uint16_t sport = (uint16_t)(th[0] << 8 | th[1]);
	const uint16_t dport = (uint16_t)(th[2] << 8 | th[3]);
	if (r->matches & (LRX_NF_M_UDP | LRX_NF_M_TCP)) {
		if (!lrx_nf_port_match(r->spts[0], r->spts[1], sport,
				       r->tu_inv & LRX_NF_TU_INV_SRC) ||
		    !lrx_nf_port_match(r->dpts[0], r->dpts[1], dport,
				       r->tu_inv & LRX_NF_TU_INV_DST))
			return false;
		if ((r->matches & LRX_NF_M_TCP) &&
		    ((th[13] & r->flg_mask) == r->flg_cmp) ==
			    !!(r->tu_inv & LRX_NF_TU_INV_FLAGS))
			return false;
	}
	if ((r->matches & LRX_NF_M_MULTIPORT) && !lrx_nf_multiport(r, sport, dport))
		return false;
	return true;
}

/* ip_packet_match and the rule's matches; *hotdrop as par->hotdrop. */
static inline bool lrx_nf_match(const struct lrx_nf_rule *r,
				const struct lrx_nf_pkt *p, bool *hotdrop)
{
	uint32_t saddr, daddr;

	memcpy(&saddr, p->iph + 12, 4);
	memcpy(&daddr, p->iph + 16, 4);
	if (((saddr & r->smsk) != r->src) ^ !!(r->inv & LRX_NF_INV_SRC) ||
	    ((daddr & r->dmsk) != r->dst) ^ !!(r->inv & LRX_NF_INV_DST))
		return false;
	if (!lrx_nf_iface(r, p) ^ !!(r->inv & LRX_NF_INV_IN))
		return false;
	if (r->proto && (p->iph[9] != r->proto) ^ !!(r->inv & LRX_NF_INV_PROTO))
		return false;
	if (r->frag && (p->fragoff == 0) ^ !!(r->inv & LRX_NF_INV_FRAG))
		return false;
	if (likely(r->matches == 0))
		return true;
	return lrx_nf_xt_match(r, p, hotdrop);
}

#define LRX_NF6_NOT_LINEAR (-2)

/* ipv6_masked_addr_cmp: whether a & m differs from want */
static inline bool lrx_nf6_addr_differs(const uint8_t *a, const uint8_t *m,
					const uint8_t *want)
{
	uint64_t x[2], mk[2], w[2];

	memcpy(x, a, 16);
	memcpy(mk, m, 16);
	memcpy(w, want, 16);
	return ((x[0] & mk[0]) ^ w[0]) | ((x[1] & mk[1]) ^ w[1]);
}

/* ip6_packet_match and the rule's matches. The protocol is the header
 * ipv6_find_hdr found past the extension headers (p->nexthdr, once per
 * packet: the same for every rule); when it failed (a truncated or
 * unparsable chain) a rule with -p drops the packet (hotdrop). */
static inline bool lrx_nf6_match(const struct lrx_nf_rule *r,
				 const struct lrx_nf_pkt *p, bool *hotdrop)
{
	if (lrx_nf6_addr_differs(p->iph + 8, r->smsk6, r->src6) ^
		    !!(r->inv & LRX_NF_INV_SRC) ||
	    lrx_nf6_addr_differs(p->iph + 24, r->dmsk6, r->dst6) ^
		    !!(r->inv & LRX_NF_INV_DST))
		return false;
	if (!lrx_nf_iface(r, p) ^ !!(r->inv & LRX_NF_INV_IN))
		return false;
	if (r->proto_set) {
		if (p->nexthdr < 0) {
			*hotdrop = p->nexthdr != LRX_NF6_NOT_LINEAR;
			return false;
		}
		if (r->proto == p->nexthdr) {
			if (r->inv & LRX_NF_INV_PROTO)
				return false;
		} else if (r->proto != 0 && !(r->inv & LRX_NF_INV_PROTO)) {
			return false; /* "-p all" matches any header */
		}
	}
	if (likely(r->matches == 0))
		return true;
	return lrx_nf_xt_match(r, p, hotdrop);
}

/* ipv6_find_hdr(skb, &thoff, -1, &fragoff, NULL) over the IPv6 packet at
 * iph (len bytes, seg_len of them readable): the upper-layer protocol
 * past hop-by-hop, routing, fragment, AH and destination options headers
 * (a non-first fragment stops at its fragment header), its offset in
 * *thoff (0 for a non-first fragment) and a fragment's offset (bytes) in *fragoff; -1 (-EBADMSG,
 * -ENOENT) where the kernel fails, LRX_NF6_NOT_LINEAR where a header lies
 * past the first segment (then no rule with -p matches). */
static inline bool lrx_nf6_ext_hdr(uint8_t nh)
{
	/* ipv6_ext_hdr, less NEXTHDR_NONE (where the walk ends too) */
	return nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60;
}

static inline int lrx_nf6_find_hdr(const uint8_t *iph, uint32_t len,
				   uint32_t seg_len, uint32_t *thoff,
				   uint16_t *fragoff)
{
	uint32_t start = 40;
	uint8_t nexthdr = iph[6];

	*fragoff = 0;
	for (;;) {
		if (!lrx_nf6_ext_hdr(nexthdr))
			break;
		/* skb_header_pointer of the 2 bytes every extension header
		 * starts with (4: a fragment header's offset) */
		const uint32_t need = nexthdr == 44 ? 4 : 2;
		if (start + need > len)
			return -1; /* -EBADMSG */
		if (start + need > seg_len)
			return LRX_NF6_NOT_LINEAR;
		const uint8_t *hp = iph + start;
		uint32_t hdrlen;
		if (nexthdr == 44) {
			const uint16_t off = (uint16_t)((hp[2] << 8 | hp[3]) & ~7);
			if (off) {
				const uint8_t nh = hp[0];
				if (!lrx_nf6_ext_hdr(nh)) {
					/* *offset is left as it was (0) */
					*fragoff = off;
					*thoff = 0;
					return nh;
				}
				return -1; /* -ENOENT, *fragoff still 0 */
			}
			hdrlen = 8;
		} else if (nexthdr == 51) {
			hdrlen = (hp[1] + 2u) << 2; /* ipv6_authlen */
		} else {
			hdrlen = (hp[1] + 1u) << 3; /* ipv6_optlen */
		}
		nexthdr = hp[0];
		start += hdrlen;
	}
	*thoff = start;
	return nexthdr;
}

/* ipt_do_table / ip6t_do_table (v6): the table's chains from its hook
 * entry. A CT --notrack target writes the packet's state. */
static __rte_always_inline unsigned lrx_nf_do_table(const struct lrx_nf *nf,
						    struct lrx_nf_counter *ctr,
						    unsigned table, unsigned hook,
						    struct lrx_nf_pkt *p,
						    bool v6)
{
	uint32_t stack[LRX_NF_CHAINS_MAX + 1];
	uint32_t sp = 0, e = nf->hook_entry[table][hook];
	bool hotdrop = false;

	for (;;) {
		const struct lrx_nf_rule *r = &nf->rules[e];

		if (!(v6 ? lrx_nf6_match(r, p, &hotdrop)
			 : lrx_nf_match(r, p, &hotdrop))) {
			if (unlikely(hotdrop))
				return LRX_NF_DROP;
			e++;
			continue;
		}
		ctr[e].pkts++;
		ctr[e].bytes += p->len;
		if (unlikely(r->notrack))
			p->ctstate = LRX_NF_CT_UNTRACKED; /* xt_ct_target: XT_CONTINUE */
		const int32_t v = r->verdict;
		if (v < 0) {
			if (v != LRX_NF_V_RETURN)
				return (unsigned)(-v) - 1;
			e = sp == 0 ? nf->underflow[table][hook] : stack[--sp] + 1;
			continue;
		}
		if ((uint32_t)v != e + 1 && !r->is_goto) {
			if (unlikely(sp >= nf->stacksize))
				return LRX_NF_DROP;
			stack[sp++] = e;
		}
		e = (uint32_t)v;
	}
}

/* nf_hook_slow over the hook's tables [from, to) in priority order;
 * LRX_NF_ACCEPT or LRX_NF_DROP. */
static __rte_always_inline unsigned lrx_nf_hook_tables(const struct lrx_nf *nf,
						       struct lrx_nf_counter *ctr,
						       unsigned hook,
						       struct lrx_nf_pkt *p,
						       unsigned from, unsigned to,
						       bool v6)
{
	for (unsigned t = from; t < to; t++)
		if (lrx_nf_do_table(nf, ctr, nf->hook_tables[hook][t], hook, p,
				    v6) == LRX_NF_DROP)
			return LRX_NF_DROP;
	return LRX_NF_ACCEPT;
}

/* nf_hook_slow: every table of the hook; LRX_NF_ACCEPT or LRX_NF_DROP.
 * An IPv6 rule set reads p->nexthdr, thoff and fragoff as
 * lrx_nf6_find_hdr set them. */
static inline unsigned lrx_nf_hook_slow(const struct lrx_nf *nf,
					struct lrx_nf_counter *ctr,
					unsigned hook,
					struct lrx_nf_pkt *p)
{
	const unsigned n = nf->n_hook_tables[hook];
	if (nf->family == AF_INET6)
		return lrx_nf_hook_tables(nf, ctr, hook, p, 0, n, true);
	return lrx_nf_hook_tables(nf, ctr, hook, p, 0, n, false);
}

/* The hook's tables that run before nf_conntrack_in (priority -200):
 * raw (-300) at PREROUTING. */
static inline unsigned lrx_nf_tables_before_conntrack(const struct lrx_nf *nf,
						      unsigned hook)
{
	return hook == LRX_NF_PRE_ROUTING && nf->n_hook_tables[hook] > 0 &&
	       nf->hook_tables[hook][0] == LRX_NF_RAW;
}

#endif
