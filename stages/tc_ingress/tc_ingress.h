/* SPDX-License-Identifier: BSD-3-Clause
 * The tc-ingress stage (docs/tc.md): the clsact ingress hook of
 * __netif_receive_skb_core (sch_handle_ingress -> tc_run -> tcf_classify),
 * with two classifiers: cls_bpf running real eBPF objects through the xdp
 * stage's loader and rte_bpf, with a struct __sk_buff context, a
 * flower-like exact/mask matcher, cls_u32 and matchall. Filters come from a file of `tc -batch`
 * lines (`filter add dev port0 ingress prio 1 bpf da obj F.o sec tc`).
 */
#ifndef LISTRX_TC_INGRESS_H
#define LISTRX_TC_INGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "stage.h"

#define TC_INGRESS_STAGE_NAME "tc-ingress"

/* include/uapi/linux/pkt_cls.h */
enum lrx_tc_act {
	LRX_TC_ACT_UNSPEC = -1,
	LRX_TC_ACT_OK = 0,
	LRX_TC_ACT_RECLASSIFY = 1,
	LRX_TC_ACT_SHOT = 2,
	LRX_TC_ACT_PIPE = 3,
	LRX_TC_ACT_STOLEN = 4,
	LRX_TC_ACT_QUEUED = 5,
	LRX_TC_ACT_REPEAT = 6,
	LRX_TC_ACT_REDIRECT = 7,
	LRX_TC_ACT_TRAP = 8,
};

/* ETH_P_ALL: a filter of every protocol (host order) */
#define LRX_TC_ETH_P_ALL 0x0003

/* Most filters in one file (the kernel has no such limit). */
#define LRX_TC_FILTERS_MAX 256
/* "dev all": a listrx extension, every port (tc names one device) */
#define LRX_TC_DEV_ALL UINT16_MAX
#define LRX_TC_PATH_MAX 512

enum lrx_tc_kind {
	LRX_TC_KIND_BPF,
	LRX_TC_KIND_FLOWER,
	LRX_TC_KIND_U32,      /* a key node (tc_u_knode) */
	LRX_TC_KIND_U32_HT,   /* a u32 line with divisor: a hash table */
	LRX_TC_KIND_MATCHALL,
};

/* cls_u32 (include/uapi/linux/pkt_cls.h: struct tc_u32_sel/tc_u32_key).
 * The kernel takes 128 keys per node; listrx 32. */
#define LRX_TC_U32_KEYS_MAX 32
#define LRX_TC_U32_TERMINAL 1
#define LRX_TC_U32_OFFSET 2
#define LRX_TC_U32_VAROFFSET 4
#define LRX_TC_U32_EAT 8
/* TC_U32_HTID: a table's handle is its top 12 bits; 800: is the root of
 * the device's first u32 pref (u32_init), 801:... the later prefs' */
#define LRX_TC_U32_ROOT_HT 0x80000000u
#define LRX_TC_U32_DIVISOR_MAX 256

struct lrx_tc_u32_key {
	uint32_t mask, val;   /* network order, val already masked */
	int32_t off, offmask; /* offmask: -1 = "at nexthdr+OFF" (off2) */
};

struct lrx_tc_u32 {
	uint32_t ht;          /* the table this node is in (0: the pref's root) */
	uint16_t bucket;      /* its bucket there (ht X:Y:) */
	uint16_t divisor;     /* LRX_TC_KIND_U32_HT: buckets (1..256) */
	uint32_t handle;      /* LRX_TC_KIND_U32_HT: the table's handle */
	uint32_t link;        /* the table a match walks down to, 0: none */
	/* struct tc_u32_sel */
	uint8_t flags, offshift, nkeys;
	uint16_t offmask;     /* network order */
	int16_t off, offoff, hoff;
	uint32_t hmask;       /* network order */
	struct lrx_tc_u32_key keys[LRX_TC_U32_KEYS_MAX];
};

/* What flower compares (fl_flow_key, the fields listrx matches): the
 * dissected packet, a filter's key and its mask have this layout, and a
 * filter matches when (packet & mask) == key word by word. */
struct lrx_tc_flow_key {
	uint8_t dst_mac[6], src_mac[6];
	uint16_t n_proto;     /* network order: the ethertype after the tags */
	uint16_t vlan_id;     /* outer tag's VID */
	uint8_t vlan_prio;    /* outer tag's PCP */
	uint8_t ip_proto;
	uint16_t src_port, dst_port; /* host order; 0 for a fragment */
	uint8_t pad[2];
	uint8_t src_ip[16], dst_ip[16]; /* IPv4 in the first 4 bytes */
} __rte_aligned(8); /* compared as 64-bit words */
#define LRX_TC_KEY_WORDS (sizeof(struct lrx_tc_flow_key) / 8)
static_assert(sizeof(struct lrx_tc_flow_key) % 8 == 0, "key in words");

/* One action of a filter's list (tcf_exts): gact's verdict, or mirred
 * (act_mirred) with its target port. The kernel takes 32 per filter
 * (TCA_ACT_MAX_PRIO); listrx 8. */
#define LRX_TC_ACTIONS_MAX 8
enum lrx_tc_action_kind {
	LRX_TC_GACT,            /* verdict: its control action */
	LRX_TC_MIRRED_REDIRECT, /* the packet leaves by port: TC_ACT_REDIRECT */
	LRX_TC_MIRRED_MIRROR,   /* a copy leaves by port: TC_ACT_PIPE */
};
struct lrx_tc_action {
	uint8_t kind;           /* enum lrx_tc_action_kind */
	int8_t verdict;         /* enum lrx_tc_act this action returns */
	uint16_t port;          /* mirred: the target */
};

struct lrx_tc_filter {
	uint16_t line;        /* in the file, for messages */
	uint16_t dev;         /* DPDK port id or LRX_TC_DEV_ALL */
	uint32_t pref;        /* prio: the tcf_proto's place in the chain */
	uint16_t protocol;    /* network order; ETH_P_ALL (0x0003) = every */
	uint8_t kind;         /* enum lrx_tc_kind */
	/* the action list of a flower, u32 or matchall filter or of a
	 * cls_bpf filter without direct-action, run by tcf_action_exec;
	 * none: TC_ACT_OK (tcf_exts_exec with no action) */
	uint8_t n_actions;
	struct lrx_tc_action actions[LRX_TC_ACTIONS_MAX];
	/* flower */
	struct lrx_tc_flow_key key, mask;
	bool sport_range, dport_range;  /* fl_range_port_dst_cmp */
	uint16_t sport_min, sport_max, dport_min, dport_max;
	/* u32 */
	struct lrx_tc_u32 u32;
	/* bpf */
	bool direct_action;
	char obj[LRX_TC_PATH_MAX];
	char sec[64];
};

/* Parses a `tc -batch` text (qdisc lines for clsact / ingress are taken
 * and ignored). Relative object paths are resolved against dir (the
 * file's directory; NULL: as written). Returns the number of filters in
 * out[] (at most max), or -EINVAL with a message naming name:line, the
 * word and what is valid. */
int lrx_tc_parse(const char *text, const char *name, const char *dir,
		 struct lrx_tc_filter *out, unsigned max, char *err,
		 size_t err_len);

struct lrx_rule_reader;
/* The words after "u32" (f_u32.c's u32_parse_opt), from w[at], into f;
 * handle is the line's `handle` word or NULL. 0 or -EINVAL naming the
 * word. */
int lrx_tc_u32_parse(struct lrx_rule_reader *ps, char **w, int n, int at,
		     const char *handle, struct lrx_tc_filter *f);
/* The action list: w[*at] is the word after the first "action"; each
 * further "action" (or "actions") adds one (gact or mirred), to the end
 * of the line. */
int lrx_tc_action_parse(struct lrx_rule_reader *ps, char **w, int n, int *at,
			struct lrx_tc_filter *f);

extern const struct lrx_stage lrx_stage_tc_ingress;
lrx_next_t lrx_tc_ingress_process_one(void *ctx, struct rte_mbuf *pkt);

#endif
