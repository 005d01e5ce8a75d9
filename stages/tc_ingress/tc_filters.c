/* SPDX-License-Identifier: BSD-3-Clause
 * The filter file of the tc-ingress stage: `tc -batch` lines, the subset
 * listrx models, so that one file configures listrx and (with the device
 * name replaced) a kernel:
 *
 *   qdisc add dev DEV clsact                      (taken, nothing to do)
 *   filter add dev DEV ingress [protocol P] [pref|prio N] [handle H]
 *          bpf [da|direct-action] obj FILE [sec S] [classid X]
 *              [action A]                         (action: without da)
 *          flower [vlan_id N] [vlan_prio N] [vlan_ethtype P]
 *                 [dst_mac M] [src_mac M] [ip_proto tcp|udp|icmp|icmpv6|N]
 *                 [src_ip A[/N]] [dst_ip A[/N]]
 *                 [src_port P[-Q]] [dst_port P[-Q]] [action A]
 *          u32 ...                                (tc_u32_parse.c)
 *          matchall [skip_hw] [classid X] [action A]
 *   A: [gact] drop|shot|pass|ok|continue|pipe|reclassify
 *      | mirred egress redirect|mirror dev DEV
 *   (action A [action B]...: a list, run as tcf_action_exec runs it)
 *
 * DEV is portN (the DPDK port N) or `all` (every port; a listrx
 * extension). The checks tc and the kernel make (fl_set_key: ip_proto
 * needs an IP ethertype, ports need TCP/UDP/SCTP, vlan keys need
 * protocol 802.1Q/802.1ad) are made here, naming the line.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_ethdev.h>

#include "rule_text.h"
#include "value.h"
#include "tc_ingress.h"

#define ETH_P_ALL_V LRX_TC_ETH_P_ALL

/* "name:line: 'word': ..." */
#define tc_error lrx_rule_fail

/* portN (N < RTE_MAX_ETHPORTS) or all */
static int tc_dev(struct lrx_rule_reader *ps, const char *word, uint16_t *dev)
{
	uint64_t n;

	if (word == NULL)
		return tc_error(ps, "dev", "needs a device: portN (the DPDK port N) or all");
	if (strcmp(word, "all") == 0) {
		*dev = LRX_TC_DEV_ALL;
		return 0;
	}
	if (strncmp(word, "port", 4) != 0 ||
	    lrx_rule_uint(word + 4, RTE_MAX_ETHPORTS - 1, false, &n) != 0)
		return tc_error(ps, word, "a device is portN (N a DPDK port id "
				"below %d) or all", RTE_MAX_ETHPORTS);
	*dev = (uint16_t)n;
	return 0;
}

/* tc's ethertype names (ll_proto_a2n), or a number; network order */
static int tc_proto(struct lrx_rule_reader *ps, const char *word, uint16_t *proto)
{
	static const struct { const char *name; uint16_t v; } names[] = {
		{ "ip", 0x0800 }, { "ipv6", 0x86dd }, { "all", ETH_P_ALL_V },
		{ "arp", 0x0806 }, { "802.1q", 0x8100 }, { "802.1Q", 0x8100 },
		{ "802_1Q", 0x8100 }, { "802.1ad", 0x88a8 }, { "802_1AD", 0x88a8 },
	};
	uint64_t n;

	if (word == NULL)
		return tc_error(ps, "protocol", "needs an ethertype");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(word, names[i].name) == 0) {
			*proto = htons(names[i].v);
			return 0;
		}
	if (lrx_rule_uint(word, 0xffff, true, &n) != 0)
		return tc_error(ps, word, "an ethertype is ip, ipv6, arp, "
				"802.1q, 802.1ad, all or a number (0x0800)");
	*proto = htons((uint16_t)n);
	return 0;
}

static bool proto_is_vlan(uint16_t proto_be)
{
	return proto_be == htons(0x8100) || proto_be == htons(0x88a8);
}

/* mirred egress redirect|mirror dev DEV (act_mirred: a redirect's
 * control action is TC_ACT_STOLEN, listrx sends the packet itself as a
 * redirect; a mirror's is TC_ACT_PIPE, its copy leaves by DEV). *at is
 * the word after "mirred". */
static int tc_mirred_parse(struct lrx_rule_reader *ps, char **w, int n, int *at,
			   struct lrx_tc_action *a)
{
	const char *dir = *at < n ? w[*at] : "mirred";
	if (strcmp(dir, "ingress") == 0)
		return tc_error(ps, dir, "mirred ingress (into a device's receive "
				"path) is not modelled: egress redirect|mirror "
				"dev portN");
	if (*at + 3 >= n || strcmp(dir, "egress") != 0 ||
	    (strcmp(w[*at + 1], "redirect") != 0 &&
	     strcmp(w[*at + 1], "mirror") != 0) ||
	    strcmp(w[*at + 2], "dev") != 0)
		return tc_error(ps, "mirred", "listrx models 'mirred egress "
				"redirect|mirror dev portN'");
	uint16_t dev;
	int rc = tc_dev(ps, w[*at + 3], &dev);
	if (rc < 0)
		return rc;
	if (dev == LRX_TC_DEV_ALL)
		return tc_error(ps, "all", "mirred sends to one port");
	const bool mirror = w[*at + 1][1] == 'i';
	*at += 4;
	*a = (struct lrx_tc_action){
		.kind = mirror ? LRX_TC_MIRRED_MIRROR : LRX_TC_MIRRED_REDIRECT,
		.verdict = mirror ? LRX_TC_ACT_PIPE : LRX_TC_ACT_REDIRECT,
		.port = dev };
	return 0;
}

/* One action: gact's verdicts or mirred; *at is the word after
 * "action". */
static int tc_action_one(struct lrx_rule_reader *ps, char **w, int n, int *at,
			 struct lrx_tc_action *out)
{
	static const struct { const char *name; int8_t act; } gact[] = {
		{ "drop", LRX_TC_ACT_SHOT }, { "shot", LRX_TC_ACT_SHOT },
		{ "pass", LRX_TC_ACT_OK }, { "ok", LRX_TC_ACT_OK },
		{ "continue", LRX_TC_ACT_UNSPEC }, { "pipe", LRX_TC_ACT_PIPE },
		{ "reclassify", LRX_TC_ACT_RECLASSIFY },
	};
	const char *a = *at < n ? w[(*at)++] : NULL;

	if (a != NULL && strcmp(a, "gact") == 0)
		a = *at < n ? w[(*at)++] : NULL;
	if (a == NULL)
		return tc_error(ps, "action", "needs a verdict: drop, pass, "
				"continue, pipe, reclassify or mirred egress "
				"redirect|mirror dev DEV");
	for (size_t i = 0; i < sizeof(gact) / sizeof(gact[0]); i++)
		if (strcmp(a, gact[i].name) == 0) {
			*out = (struct lrx_tc_action){ .kind = LRX_TC_GACT,
						       .verdict = gact[i].act };
			return 0;
		}
	if (strcmp(a, "mirred") == 0)
		return tc_mirred_parse(ps, w, n, at, out);
	return tc_error(ps, a, "valid actions: drop (shot), pass (ok), "
			"continue, pipe, reclassify, mirred egress redirect|mirror "
			"dev DEV (this models gact and mirred)");
}

int lrx_tc_action_parse(struct lrx_rule_reader *ps, char **w, int n, int *at,
			struct lrx_tc_filter *f)
{
	for (;;) {
		if (f->n_actions == LRX_TC_ACTIONS_MAX)
			return tc_error(ps, "action", "more than %d actions on one "
					"filter", LRX_TC_ACTIONS_MAX);
		int rc = tc_action_one(ps, w, n, at, &f->actions[f->n_actions]);
		if (rc < 0)
			return rc;
		f->n_actions++;
		if (*at == n)
			return 0;
		if (strcmp(w[*at], "action") != 0 && strcmp(w[*at], "actions") != 0)
			return tc_error(ps, w[*at], "after an action, only another "
					"'action ...' (the actions end the line)");
		(*at)++;
	}
}

static int tc_bpf(struct lrx_rule_reader *ps, char **w, int n, int at,
		  struct lrx_tc_filter *f, const char *dir)
{
	const char *obj = NULL;

	f->kind = LRX_TC_KIND_BPF;
	snprintf(f->sec, sizeof(f->sec), "%s", "classifier");
	bool has_action = false;
	while (at < n) {
		const char *k = w[at++];
		const char *v = at < n ? w[at] : NULL;

		if (strcmp(k, "da") == 0 || strcmp(k, "direct-action") == 0) {
			f->direct_action = true;
		} else if (strcmp(k, "obj") == 0 || strcmp(k, "object-file") == 0) {
			if (v == NULL)
				return tc_error(ps, k, "needs an eBPF object file");
			obj = v;
			at++;
		} else if (strcmp(k, "sec") == 0 || strcmp(k, "section") == 0) {
			if (v == NULL || strlen(v) >= sizeof(f->sec))
				return tc_error(ps, k, "needs an ELF section name "
						"shorter than %zu", sizeof(f->sec));
			snprintf(f->sec, sizeof(f->sec), "%s", v);
			at++;
		} else if (strcmp(k, "classid") == 0 || strcmp(k, "flowid") == 0) {
			if (v == NULL)
				return tc_error(ps, k, "needs a class (1:1)");
			at++; /* no qdisc classes at ingress: taken, unused */
		} else if (strcmp(k, "skip_hw") == 0 || strcmp(k, "verbose") == 0) {
			/* nothing to offload to */
		} else if (strcmp(k, "action") == 0 || strcmp(k, "actions") == 0) {
			int rc = lrx_tc_action_parse(ps, w, n, &at, f);
			if (rc < 0)
				return rc;
			has_action = true;
		} else if (strcmp(k, "skip_sw") == 0) {
			return tc_error(ps, k, "a hardware-only filter: listrx runs "
					"filters in software");
		} else {
			return tc_error(ps, k, "bpf takes da (direct-action), obj "
					"FILE, sec NAME, classid X, skip_hw, verbose, "
					"action A");
		}
	}
	if (obj == NULL)
		return tc_error(ps, "bpf", "needs obj FILE (an eBPF object)");
	if (f->direct_action && has_action)
		return tc_error(ps, "action", "a direct-action program returns "
				"its own verdict (cls_bpf refuses actions with da)");
	int len = obj[0] == '/' || dir == NULL
			  ? snprintf(f->obj, sizeof(f->obj), "%s", obj)
			  : snprintf(f->obj, sizeof(f->obj), "%s/%s", dir, obj);
	if (len < 0 || (size_t)len >= sizeof(f->obj))
		return tc_error(ps, obj, "path longer than %d bytes",
				LRX_TC_PATH_MAX - 1);
	return 0;
}

/* one flower filter's parse state: the key and mask being filled */
struct tc_flower_ctx {
	struct lrx_rule_reader *ps;
	struct lrx_tc_filter *f;
	struct lrx_tc_flow_key *key, *mask;
	uint16_t eth_type; /* the ethertype the L3 keys apply to */
	bool has_ip_proto;
	int af;
};

/* vlan_ethtype: read before the loop, nothing more to do */
static int tc_fl_skip(struct tc_flower_ctx *c, const char *k, const char *v)
{
	(void)c;
	(void)k;
	(void)v;
	return 0;
}

/* vlan_id / vlan_prio: fl_set_key_vlan */
static int tc_fl_vlan(struct tc_flower_ctx *c, const char *k, const char *v)
{
	bool id = k[5] == 'i';
	uint64_t u;

	if (!proto_is_vlan(c->f->protocol))
		return tc_error(c->ps, k, "needs protocol 802.1q or "
				"802.1ad (fl_set_key)");
	if (lrx_rule_uint(v, id ? 4095 : 7, false, &u) != 0)
		return tc_error(c->ps, v, "%s is 0..%u", k, id ? 4095 : 7);
	if (id) {
		c->key->vlan_id = (uint16_t)u;
		c->mask->vlan_id = 0xfff;
	} else {
		c->key->vlan_prio = (uint8_t)u;
		c->mask->vlan_prio = 0x7;
	}
	return 0;
}

/* dst_mac / src_mac: FLOW_DISSECTOR_KEY_ETH_ADDRS */
static int tc_fl_mac(struct tc_flower_ctx *c, const char *k, const char *v)
{
	uint8_t mac[6];

	if (lrx_value_mac(v, mac) != 0)
		return tc_error(c->ps, v, "a MAC is aa:bb:cc:dd:ee:ff");
	memcpy(k[0] == 'd' ? c->key->dst_mac : c->key->src_mac, mac, 6);
	memset(k[0] == 'd' ? c->mask->dst_mac : c->mask->src_mac, 0xff, 6);
	return 0;
}

/* ip_proto: a name or 0..255, only under ip or ipv6 */
static int tc_fl_ip_proto(struct tc_flower_ctx *c, const char *k, const char *v)
{
	uint16_t eth_type = c->eth_type;
	uint64_t u;

	if (eth_type != htons(0x0800) && eth_type != htons(0x86dd))
		return tc_error(c->ps, k, "needs the ethertype ip or "
				"ipv6 (protocol, or vlan_ethtype)");
	if (strcmp(v, "tcp") == 0)
		u = 6;
	else if (strcmp(v, "udp") == 0)
		u = 17;
	else if (strcmp(v, "sctp") == 0)
		u = 132;
	else if (strcmp(v, "icmp") == 0 && eth_type == htons(0x0800))
		u = 1;
	else if (strcmp(v, "icmpv6") == 0 && eth_type == htons(0x86dd))
		u = 58;
	else if (lrx_rule_uint(v, 255, true, &u) != 0)
		return tc_error(c->ps, v, "ip_proto is tcp, udp, sctp, "
				"icmp (ip), icmpv6 (ipv6) or 0..255");
	c->key->ip_proto = (uint8_t)u;
	c->mask->ip_proto = 0xff;
	c->has_ip_proto = true;
	return 0;
}

/* src_ip / dst_ip: an address of the filter's one family, with a prefix */
static int tc_fl_ip(struct tc_flower_ctx *c, const char *k, const char *v)
{
	uint8_t addr[16], m[16];
	int fam = c->eth_type == htons(0x0800) ? AF_INET
		  : c->eth_type == htons(0x86dd) ? AF_INET6 : -1;

	if (fam < 0)
		return tc_error(c->ps, k, "needs the ethertype ip or ipv6");
	if (c->af == AF_UNSPEC)
		c->af = fam;
	if (lrx_rule_addr(v, &c->af, addr, m) != 0)
		return tc_error(c->ps, v, "an %s address, optionally "
				"/prefix-length", fam == AF_INET ? "IPv4" : "IPv6");
	memcpy(k[0] == 'd' ? c->key->dst_ip : c->key->src_ip, addr, 16);
	memcpy(k[0] == 'd' ? c->mask->dst_ip : c->mask->src_ip, m, 16);
	return 0;
}

/* src_port / dst_port: one port, or a range (fl_set_key_port_range) */
static int tc_fl_port(struct tc_flower_ctx *c, const char *k, const char *v)
{
	struct lrx_tc_filter *f = c->f;
	struct lrx_tc_flow_key *key = c->key, *mask = c->mask;
	uint16_t lo, hi;

	if (!c->has_ip_proto || (key->ip_proto != 6 && key->ip_proto != 17 &&
				 key->ip_proto != 132))
		return tc_error(c->ps, k, "needs ip_proto tcp, udp or "
				"sctp before it");
	if (lrx_rule_port_range(v, '-', &lo, &hi) != 0)
		return tc_error(c->ps, v, "a port 0..65535 or a range MIN-MAX");
	bool dst = k[0] == 'd';
	if (lo != hi) { /* fl_set_key_port_range */
		*(dst ? &f->dport_range : &f->sport_range) = true;
		*(dst ? &f->dport_min : &f->sport_min) = lo;
		*(dst ? &f->dport_max : &f->sport_max) = hi;
	} else {
		*(dst ? &key->dst_port : &key->src_port) = lo;
		*(dst ? &mask->dst_port : &mask->src_port) = 0xffff;
	}
	return 0;
}

/* the flower keys that take a value, each with its parser */
static const struct tc_flower_opt {
	const char *names[2];
	int (*fn)(struct tc_flower_ctx *c, const char *k, const char *v);
} tc_flower_opts[] = {
	{ { "vlan_ethtype" }, tc_fl_skip },
	{ { "vlan_id", "vlan_prio" }, tc_fl_vlan },
	{ { "dst_mac", "src_mac" }, tc_fl_mac },
	{ { "ip_proto" }, tc_fl_ip_proto },
	{ { "src_ip", "dst_ip" }, tc_fl_ip },
	{ { "src_port", "dst_port" }, tc_fl_port },
};

/* the parser of flower key k, NULL when it is not modelled */
static const struct tc_flower_opt *tc_flower_opt_find(const char *k)
{
	for (size_t i = 0; i < RTE_DIM(tc_flower_opts); i++)
		if (lrx_rule_word_in(k, tc_flower_opts[i].names,
				     RTE_DIM(tc_flower_opts[i].names)))
			return &tc_flower_opts[i];
	return NULL;
}

/* the ethertype the L3 keys see: protocol, or vlan_ethtype under 802.1Q */
static int tc_flower_ethtype(struct tc_flower_ctx *c, char **w, int n, int at)
{
	struct lrx_tc_filter *f = c->f;

	/* the vlan keys come with protocol 802.1Q; vlan_ethtype then names
	 * the ethertype inside (it goes to n_proto, as fl_set_key does) */
	for (int k = at; k + 1 < n; k += 1)
		if (strcmp(w[k], "vlan_ethtype") == 0) {
			int rc = tc_proto(c->ps, w[k + 1], &c->eth_type);
			if (rc < 0)
				return rc;
			if (!proto_is_vlan(f->protocol))
				return tc_error(c->ps, "vlan_ethtype", "needs protocol "
						"802.1q or 802.1ad (fl_set_key)");
		}
	if (c->eth_type != htons(ETH_P_ALL_V) && !proto_is_vlan(c->eth_type)) {
		c->key->n_proto = c->eth_type;
		c->mask->n_proto = 0xffff;
	}
	return 0;
}

/* fl_set_key's order of checks, for the keys listrx matches */
static int tc_flower(struct lrx_rule_reader *ps, char **w, int n, int at,
		     struct lrx_tc_filter *f)
{
	struct tc_flower_ctx c = {
		.ps = ps, .f = f, .key = &f->key, .mask = &f->mask,
		.eth_type = f->protocol, .af = AF_UNSPEC,
	};

	f->kind = LRX_TC_KIND_FLOWER;
	int rc = tc_flower_ethtype(&c, w, n, at);
	if (rc < 0)
		return rc;
	while (at < n) {
		const char *k = w[at++];
		const char *v = at < n ? w[at] : NULL;

		if (strcmp(k, "skip_hw") == 0 || strcmp(k, "verbose") == 0)
			continue;
		if (strcmp(k, "skip_sw") == 0)
			return tc_error(ps, k, "a hardware-only filter: listrx runs "
					"filters in software");
		if (strcmp(k, "action") == 0 || strcmp(k, "actions") == 0) {
			rc = lrx_tc_action_parse(ps, w, n, &at, f);
			if (rc < 0)
				return rc;
			continue;
		}
		if (v == NULL)
			return tc_error(ps, k, "needs a value");
		at++;
		const struct tc_flower_opt *o = tc_flower_opt_find(k);
		if (o == NULL)
			return tc_error(ps, k, "flower takes vlan_id, vlan_prio, "
					"vlan_ethtype, dst_mac, src_mac, ip_proto, "
					"src_ip, dst_ip, src_port, dst_port, skip_hw, "
					"action A");
		rc = o->fn(&c, k, v);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* matchall [skip_hw] [classid X] [action A] (f_matchall.c) */
static int tc_matchall(struct lrx_rule_reader *ps, char **w, int n, int at,
		       struct lrx_tc_filter *f)
{
	f->kind = LRX_TC_KIND_MATCHALL;
	while (at < n) {
		const char *k = w[at++];
		if (strcmp(k, "skip_hw") == 0 || strcmp(k, "verbose") == 0)
			continue;
		if ((strcmp(k, "classid") == 0 || strcmp(k, "flowid") == 0) &&
		    at < n) {
			at++; /* no qdisc classes at ingress: taken, unused */
			continue;
		}
		if (strcmp(k, "action") != 0 && strcmp(k, "actions") != 0)
			return tc_error(ps, k, "matchall takes skip_hw, classid "
					"X, action A (not skip_sw)");
		int rc = lrx_tc_action_parse(ps, w, n, &at, f);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* the kind's words: bpf, flower, u32, matchall */
static int tc_kind(struct lrx_rule_reader *ps, char **w, int n, int at,
		   struct lrx_tc_filter *f, const char *dir, const char *handle)
{
	const char *k = w[at - 1];
	uint64_t u;

	if (strcmp(k, "u32") == 0)
		return lrx_tc_u32_parse(ps, w, n, at, handle, f);
	if (handle != NULL && lrx_rule_uint(handle, UINT32_MAX, true, &u) != 0)
		return tc_error(ps, handle, "a handle is a number");
	if (strcmp(k, "bpf") == 0)
		return tc_bpf(ps, w, n, at, f, dir);
	if (strcmp(k, "flower") == 0)
		return tc_flower(ps, w, n, at, f);
	return tc_matchall(ps, w, n, at, f);
}

static const char *const tc_kinds[] = { "bpf", "flower", "u32", "matchall" };

/* "[tc] qdisc|filter add|replace": the words before the options. Returns
 * the index of the first option, or the error. */
static int tc_line_head(struct lrx_rule_reader *ps, char **w, int n, bool *qdisc)
{
	int at = 0;

	if (n > 0 && strcmp(w[0], "tc") == 0)
		at = 1; /* a shell line, as written */
	if (at + 2 > n || (strcmp(w[at], "qdisc") != 0 && strcmp(w[at], "filter") != 0))
		return tc_error(ps, w[at < n ? at : 0], "a line is 'qdisc add dev "
				"DEV clsact' or 'filter add dev DEV ingress ...'");
	*qdisc = strcmp(w[at], "qdisc") == 0;
	if (strcmp(w[at + 1], "add") != 0 && strcmp(w[at + 1], "replace") != 0)
		return tc_error(ps, w[at + 1], "only add (and replace) build a "
				"filter list; this reads a list, it has nothing to "
				"delete or show");
	return at + 2;
}

/* qdisc add dev DEV clsact|ingress [handle ffff:]: the device checked,
 * nothing to add (returns 1) */
static int tc_qdisc_line(struct lrx_rule_reader *ps, char **w, int n, int at,
			 struct lrx_tc_filter *f)
{
	bool has_dev = false;

	while (at < n) {
		const char *k = w[at++];
		const char *v = at < n ? w[at] : NULL;

		if (strcmp(k, "dev") == 0) {
			int rc = tc_dev(ps, v, &f->dev);
			if (rc < 0)
				return rc;
			has_dev = true;
			at++;
		} else if (strcmp(k, "clsact") == 0 || strcmp(k, "ingress") == 0) {
			continue;
		} else if (strcmp(k, "handle") == 0 && v && strcmp(v, "ffff:") == 0) {
			at++;
		} else {
			return tc_error(ps, k, "the qdiscs of the ingress hook are "
					"clsact and ingress");
		}
	}
	if (!has_dev)
		return tc_error(ps, NULL, "a qdisc line needs dev DEV");
	return 1; /* nothing to add */
}

static int tc_line(struct lrx_rule_reader *ps, char **w, int n,
		   struct lrx_tc_filter *f, const char *dir)
{
	bool qdisc = false;
	int at = tc_line_head(ps, w, n, &qdisc);

	if (at < 0)
		return at;
	memset(f, 0, sizeof(*f));
	f->line = (uint16_t)ps->line;
	f->protocol = htons(ETH_P_ALL_V); /* tc's default protocol */
	if (qdisc)
		return tc_qdisc_line(ps, w, n, at, f);
	bool has_dev = false, has_ingress = false, has_pref = false;
	const char *handle = NULL;
	while (at < n) {
		const char *k = w[at++];
		const char *v = at < n ? w[at] : NULL;
		uint64_t u;
		int rc;

		if (strcmp(k, "dev") == 0) {
			rc = tc_dev(ps, v, &f->dev);
			if (rc < 0)
				return rc;
			has_dev = true;
			at++;
		} else if (strcmp(k, "ingress") == 0) {
			has_ingress = true;
		} else if (strcmp(k, "parent") == 0) {
			if (v == NULL || (strcmp(v, "ffff:") != 0 &&
					  strcmp(v, "ffff:fff2") != 0))
				return tc_error(ps, v ? v : k, "the ingress hook's "
						"parent is ffff: (or ffff:fff2)");
			has_ingress = true;
			at++;
		} else if (strcmp(k, "egress") == 0) {
			return tc_error(ps, k, "listrx models the ingress hook only");
		} else if (strcmp(k, "protocol") == 0) {
			rc = tc_proto(ps, v, &f->protocol);
			if (rc < 0)
				return rc;
			at++;
		} else if (strcmp(k, "pref") == 0 || strcmp(k, "prio") == 0 ||
			   strcmp(k, "priority") == 0) {
			if (v == NULL || lrx_rule_uint(v, 0xffff, false, &u) != 0 || u == 0)
				return tc_error(ps, v ? v : k, "a priority is 1..65535");
			f->pref = (uint32_t)u;
			has_pref = true;
			at++;
		} else if (strcmp(k, "handle") == 0) {
			if (v == NULL)
				return tc_error(ps, k, "needs a handle");
			handle = v; /* checked by the kind: u32 reads X: */
			at++;
		} else if (strcmp(k, "chain") == 0) {
			if (v == NULL || strcmp(v, "0") != 0)
				return tc_error(ps, v ? v : k, "listrx models chain 0 "
						"only (no goto chain actions)");
			at++;
		} else if (lrx_rule_word_in(k, tc_kinds, RTE_DIM(tc_kinds))) {
			if (!has_dev || !has_ingress)
				return tc_error(ps, k, "a filter needs dev DEV and "
						"ingress (or parent ffff:) before "
						"its kind");
			f->pref = has_pref ? f->pref : 0; /* 0: tcf_auto_prio */
			return tc_kind(ps, w, n, at, f, dir, handle);
		} else {
			return tc_error(ps, k, "expected dev, ingress, parent, "
					"protocol, pref, handle, chain, or the kind "
					"(bpf, flower, u32, matchall; others are not "
					"modelled)");
		}
	}
	return tc_error(ps, NULL, "a filter line needs its kind (bpf, flower, "
			"u32 or matchall)");
}

int lrx_tc_parse(const char *text, const char *name, const char *dir,
		 struct lrx_tc_filter *out, unsigned max, char *err,
		 size_t err_len)
{
	struct lrx_rule_reader ps = { .p = text, .name = name, .err = err,
				      .err_len = err_len };
	unsigned n_out = 0;
	char *w[LRX_RULE_WORDS_MAX];
	int n;

	while ((n = lrx_rule_next(&ps, w)) != 0) {
		if (n < 0)
			return n;
		if (n_out == max)
			return tc_error(&ps, NULL, "more than %u filters", max);
		int rc = tc_line(&ps, w, n, &out[n_out], dir);
		if (rc < 0)
			return rc;
		if (rc == 0)
			n_out++;
	}
	return (int)n_out;
}
