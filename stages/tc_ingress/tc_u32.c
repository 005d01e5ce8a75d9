/* SPDX-License-Identifier: BSD-3-Clause
 * cls_u32 in the tc-ingress stage (net/sched/cls_u32.c): key nodes in
 * hash tables, walked by u32_classify. A tcf_proto's root table holds the
 * nodes added without `ht`; a node with `link X:` walks down to table X
 * when its keys match (bucket: the hash key folded as u32_hash_fold,
 * offsets moved by `offset`/`eat`), at most TC_U32_MAXDEPTH deep; a
 * terminal node (one with an action or a classid) that matches runs its
 * action, and a verdict below 0 (continue) goes on to the next node.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "tc_ingress_int.h"

#define TC_U32_MAXDEPTH 8

/* skb_header_pointer at off bytes from the network header; the kernel
 * reads the headroom before the frame, listrx stops there (out). */
static inline bool u32_load(const struct rte_mbuf *m, uint32_t noff,
			    int64_t off, uint32_t len, void *out)
{
	const int64_t at = (int64_t)noff + off;

	if (at < 0 || at + len > m->pkt_len)
		return false;
	const void *p = rte_pktmbuf_read(m, (uint32_t)at, len, out);
	if (p != out)
		memcpy(out, p, len);
	return true;
}

/* the keys of node f: true when all match; *out when a read fell off */
static inline bool u32_keys_match(const struct lrx_tc_u32 *s,
				  const struct rte_mbuf *m, uint32_t noff,
				  int64_t off, int32_t off2, bool *out)
{
	for (unsigned i = 0; i < s->nkeys; i++) {
		const struct lrx_tc_u32_key *k = &s->keys[i];
		uint32_t data;
		if (!u32_load(m, noff, off + k->off + (off2 & k->offmask), 4, &data)) {
			*out = true;
			return false;
		}
		if ((data ^ k->val) & k->mask)
			return false;
	}
	return true;
}

struct u32_walk {
	const uint16_t *n, *end; /* the node, the end of its bucket */
	int64_t off;
};

/* the bucket sel of table ht */
static inline void u32_bucket(const struct tc_ctx *c, unsigned ht,
			      unsigned sel, struct u32_walk *w)
{
	const uint32_t b = c->u32_hts[ht].first + sel;

	w->n = &c->u32_nodes[c->u32_bucket[b]];
	w->end = &c->u32_nodes[c->u32_bucket[b + 1]];
}

/* PUSH's move: the bucket of the linked table and the new offsets
 * (u32_classify after "PUSH"). False: a read fell off the packet. */
static inline bool u32_down(const struct tc_ctx *c, const struct tc_filter_run *r,
			    const struct lrx_tc_u32 *s, const struct rte_mbuf *m,
			    uint32_t noff, struct u32_walk *w, int32_t *off2)
{
	const struct tc_u32_ht *ht = &c->u32_hts[r->u32_down];
	unsigned sel = 0;

	if (ht->divisor) {
		uint32_t data;
		if (!u32_load(m, noff, w->off + s->hoff, 4, &data))
			return false;
		sel = ht->divisor & (ntohl(data & s->hmask) >> r->u32_fshift);
	}
	u32_bucket(c, (unsigned)r->u32_down, sel, w);
	if (s->flags & (LRX_TC_U32_OFFSET | LRX_TC_U32_VAROFFSET)) {
		*off2 = s->off + 3;
		if (s->flags & LRX_TC_U32_VAROFFSET) {
			uint16_t d16;
			if (!u32_load(m, noff, w->off + s->offoff, 2, &d16))
				return false;
			*off2 += ntohs(s->offmask & d16) >> s->offshift;
		}
		*off2 &= ~3;
	}
	if (s->flags & LRX_TC_U32_EAT) {
		w->off += *off2;
		*off2 = 0;
	}
	return true;
}

/* check_terminal: a terminal node runs its action (tcf_exts_exec, the
 * action's stats); true with *ret when that gives a verdict (>= 0) */
static inline bool u32_terminal(struct tc_ctx *c, uint16_t i,
				const struct rte_mbuf *m, uint32_t skb_len,
				uint32_t *redirect, int *ret)
{
	const struct lrx_tc_filter *f = &c->filters[i];
	struct tc_filter_run *r = &c->run[i];

	if (!(f->u32.flags & LRX_TC_U32_TERMINAL))
		return false;
	r->packets++;
	r->bytes += skb_len;
	*ret = tc_actions_exec(c, i, m, skb_len, redirect);
	return *ret >= 0;
}

int tc_u32_classify(struct tc_ctx *c, const struct tc_tp *tp,
		    const struct rte_mbuf *m, const struct lrx_meta *meta,
		    uint32_t skb_len, uint32_t *redirect)
{
	struct u32_walk stack[TC_U32_MAXDEPTH], w = { .off = 0 };
	const uint32_t noff = meta->network_offset;
	unsigned sdepth = 0;
	int32_t off2 = 0;
	int ret;

	c->n_u32_calls++;
	u32_bucket(c, tp->root, 0, &w);
	for (;;) {
		if (w.n < w.end) {
			const uint16_t i = *w.n;
			const struct lrx_tc_u32 *s = &c->filters[i].u32;
			struct tc_filter_run *r = &c->run[i];
			bool out = false;

			r->runs++;
			if (!u32_keys_match(s, m, noff, w.off, off2, &out)) {
				if (out)
					return LRX_TC_ACT_UNSPEC;
				w.n++;
				continue;
			}
			if (r->u32_down < 0) {
				if (u32_terminal(c, i, m, skb_len, redirect, &ret))
					return ret;
				w.n++;
				continue;
			}
			if (sdepth >= TC_U32_MAXDEPTH)
				return LRX_TC_ACT_UNSPEC; /* "cls_u32: dead loop" */
			stack[sdepth++] = w; /* PUSH */
			if (!u32_down(c, r, s, m, noff, &w, &off2))
				return LRX_TC_ACT_UNSPEC;
			if (w.off >= 0 && w.off < (int64_t)skb_len)
				continue; /* next_ht */
		}
		/* POP: back to the node that linked down (its offset, not
		 * off2), to its terminal check, then on in its bucket */
		if (sdepth == 0)
			return LRX_TC_ACT_UNSPEC;
		w = stack[--sdepth];
		if (u32_terminal(c, *w.n, m, skb_len, redirect, &ret))
			return ret;
		w.n++;
	}
}

/* ---- building the tables ------------------------------------------------ */

static bool u32_kind(const struct lrx_tc_filter *f)
{
	return f->kind == LRX_TC_KIND_U32 || f->kind == LRX_TC_KIND_U32_HT;
}

/* the table of handle on dev made by filter `by` or one before, or -1 */
static int u32_find(const struct tc_ctx *c, uint16_t dev, uint32_t handle,
		    unsigned by)
{
	for (unsigned t = 0; t < c->n_u32_hts; t++)
		if (c->u32_hts[t].dev == dev && c->u32_hts[t].handle == handle &&
		    c->u32_hts[t].by <= by)
			return (int)t;
	return -1;
}

uint16_t tc_u32_root(const struct tc_ctx *c, uint16_t dev, uint32_t pref)
{
	for (unsigned t = 0; t < c->n_u32_hts; t++)
		if (c->u32_hts[t].dev == dev && c->u32_hts[t].pref == pref)
			return (uint16_t)t;
	return 0; /* not reached: every u32 pref has a root */
}

/* u32_init: the first u32 tcf_proto of a device gets 800:, the next
 * ones gen_new_htid's 801:, 802:...; a divisor line adds its table. */
static int u32_add_tables(struct tc_ctx *c, const char *file, char *err,
			  size_t err_len)
{
	for (unsigned i = 0; i < c->n_filters; i++) {
		const struct lrx_tc_filter *f = &c->filters[i];
		if (!u32_kind(f))
			continue;
		if (f->dev == LRX_TC_DEV_ALL) {
			snprintf(err, err_len, "%.256s:%u: 'all': u32 tables "
				 "belong to one device: name it (portN)",
				 file, f->line);
			return -EINVAL;
		}
		unsigned roots = 0;
		bool has_root = false;
		for (unsigned t = 0; t < c->n_u32_hts; t++) {
			const struct tc_u32_ht *h = &c->u32_hts[t];
			roots += h->dev == f->dev && h->pref != 0;
			has_root |= h->dev == f->dev && h->pref == f->pref;
		}
		if (!has_root)
			c->u32_hts[c->n_u32_hts++] = (struct tc_u32_ht){
				.handle = LRX_TC_U32_ROOT_HT + (roots << 20),
				.dev = f->dev, .pref = f->pref, .by = (uint16_t)i };
		if (f->kind != LRX_TC_KIND_U32_HT)
			continue;
		if (u32_find(c, f->dev, f->u32.handle, i) >= 0) {
			snprintf(err, err_len, "%.256s:%u: table %x: exists "
				 "already on port%u (tc: File exists)", file,
				 f->line, f->u32.handle >> 20, f->dev);
			return -EINVAL;
		}
		c->u32_hts[c->n_u32_hts++] = (struct tc_u32_ht){
			.handle = f->u32.handle, .dev = f->dev,
			.divisor = (uint16_t)(f->u32.divisor - 1), .by = (uint16_t)i };
	}
	return 0;
}

/* a node's table and bucket, its link (u32_change, u32_set_parms);
 * tables are found among those made by the lines before it */
static int u32_place(struct tc_ctx *c, unsigned i, const char *file,
		     uint16_t *table, char *err, size_t err_len)
{
	const struct lrx_tc_filter *f = &c->filters[i];
	const struct lrx_tc_u32 *s = &f->u32;
	int t = s->ht ? u32_find(c, f->dev, s->ht, i) : tc_u32_root(c, f->dev, f->pref);
	int down = s->link ? u32_find(c, f->dev, s->link, i) : -1;
	const char *why = NULL;

	if (t < 0)
		why = "ht: no such table on this device (tc: Specified hash "
		      "table not found)";
	else if (s->bucket > c->u32_hts[t].divisor)
		why = "ht X:Y:: the bucket is beyond the table's divisor";
	else if (s->link && down < 0)
		why = "link: no such table on this device (tc: Link hash "
		      "table not found)";
	else if (down >= 0 && c->u32_hts[down].pref != 0)
		why = "link: a root table (tc: Not linking to root node)";
	if (why != NULL) {
		snprintf(err, err_len, "%.256s:%u: %s", file, f->line, why);
		return -EINVAL;
	}
	*table = (uint16_t)t;
	c->run[i].u32_down = (int16_t)down;
	c->run[i].u32_fshift = s->hmask ? (uint8_t)(ffs((int)ntohl(s->hmask)) - 1) : 0;
	return 0;
}

void tc_u32_free(struct tc_ctx *c)
{
	rte_free(c->u32_hts);
	rte_free(c->u32_bucket);
	rte_free(c->u32_nodes);
	c->u32_hts = NULL;
	c->u32_bucket = NULL;
	c->u32_nodes = NULL;
	c->n_u32_hts = 0;
}

/* every table's buckets, each bucket's nodes in the order they came
 * (gen_new_kid numbers a table's nodes up, u32 keeps them in order) */
static void u32_fill(struct tc_ctx *c, const uint16_t *table)
{
	uint32_t b = 0, pos = 0;

	for (unsigned t = 0; t < c->n_u32_hts; t++) {
		c->u32_hts[t].first = b;
		for (unsigned sel = 0; sel <= c->u32_hts[t].divisor; sel++) {
			c->u32_bucket[b++] = pos;
			for (unsigned i = 0; i < c->n_filters; i++)
				if (c->filters[i].kind == LRX_TC_KIND_U32 &&
				    table[i] == t && c->filters[i].u32.bucket == sel)
					c->u32_nodes[pos++] = (uint16_t)i;
		}
	}
	c->u32_bucket[b] = pos;
}

int tc_u32_build(struct tc_ctx *c, const char *file, int socket_id,
		 char *err, size_t err_len)
{
	unsigned n_u32 = 0;
	uint32_t buckets = 0;
	uint16_t table[LRX_TC_FILTERS_MAX];

	for (unsigned i = 0; i < c->n_filters; i++)
		n_u32 += u32_kind(&c->filters[i]);
	if (n_u32 == 0)
		return 0;
	/* at most a root and a table per line */
	c->u32_hts = rte_zmalloc_socket("tc_u32_hts", 2 * n_u32 * sizeof(*c->u32_hts),
					RTE_CACHE_LINE_SIZE, socket_id);
	if (c->u32_hts == NULL)
		return -ENOMEM;
	int rc = u32_add_tables(c, file, err, err_len);
	for (unsigned i = 0; rc == 0 && i < c->n_filters; i++) {
		c->run[i].u32_down = -1;
		if (c->filters[i].kind == LRX_TC_KIND_U32)
			rc = u32_place(c, i, file, &table[i], err, err_len);
	}
	for (unsigned t = 0; t < c->n_u32_hts; t++)
		buckets += c->u32_hts[t].divisor + 1u;
	if (rc == 0) {
		c->u32_bucket = rte_zmalloc_socket("tc_u32_bucket", (buckets + 1) *
						   sizeof(*c->u32_bucket), 0, socket_id);
		c->u32_nodes = rte_zmalloc_socket("tc_u32_nodes", (n_u32 + 1) *
						  sizeof(*c->u32_nodes), 0, socket_id);
		rc = c->u32_bucket && c->u32_nodes ? 0 : -ENOMEM;
	}
	if (rc == 0)
		u32_fill(c, table);
	return rc;
}
