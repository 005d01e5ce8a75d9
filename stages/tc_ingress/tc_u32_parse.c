/* SPDX-License-Identifier: BSD-3-Clause
 * The u32 filter lines of the tc-ingress filter file, read as iproute2's
 * f_u32.c reads them (u32_parse_opt) into what the kernel's cls_u32 gets
 * (struct tc_u32_sel and its keys):
 *
 *   u32 [ht X:[Y:]] [match SEL]... [offset ...] [hashkey ...] [link X:]
 *       [classid|flowid C] [skip_hw] [action A [action B]...]
 *   u32 divisor N                          (with `handle X:`: a table)
 *   SEL: u32|u16|u8 VAL MASK [at [nexthdr+]OFF]
 *        ip  src|dst A[/N] [at OFF] | tos|dsfield|precedence|ihl|protocol|
 *            icmp_type|icmp_code|sport|dport VAL MASK [at [nexthdr+]OFF] |
 *            nofrag|firstfrag|df|mf        (not last on the line)
 *        ip6 src|dst A[/N] [at OFF] | protocol|flowlabel|icmp_type|
 *            icmp_code|sport|dport VAL MASK [at [nexthdr+]OFF] |
 *            priority VAL MASK             (the traffic class, no at)
 *   offset [plus N] [at N] [mask M] [shift S] [eat]
 *   hashkey mask M at N
 *
 * Values are decimal or 0x hex, masks hexadecimal with or without 0x (as
 * tc: get_u32(..., 16)), offsets signed. Keys are packed as f_u32.c's
 * pack_key does (two matches on one word merge; a clash is refused).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_common.h>

#include "rule_text.h"
#include "tc_ingress.h"

#define u32_error lrx_rule_fail

/* X:[Y:[Z]] (get_u32_handle): hex parts, X <= 0xfff, Y <= 0xff; a node
 * part Z is refused (listrx numbers nodes as gen_new_kid does). */
static int u32_handle(struct lrx_rule_reader *ps, const char *word,
		      uint32_t *htid, uint16_t *bucket)
{
	char part[3][8] = { "", "", "" };
	unsigned n = 0;
	uint64_t x = 0, y = 0;

	for (const char *p = word; *p && n < 3; p++) {
		size_t len = strlen(part[n]);
		if (*p == ':')
			n++;
		else if (len + 1 < sizeof(part[n]))
			part[n][len] = *p;
		else
			n = 3;
	}
	if (n < 1 || n > 2 || part[0][0] == '\0' || part[2][0] != '\0' ||
	    lrx_rule_hex(part[0], 0xfff, &x) != 0 ||
	    (part[1][0] && lrx_rule_hex(part[1], 0xff, &y) != 0))
		return u32_error(ps, word, "a u32 table is X: or X:Y: (hex, "
				 "X 1..fff, bucket Y 0..ff); listrx numbers the "
				 "nodes itself");
	if (x == 0)
		return u32_error(ps, word, "table 0: is not a table");
	*htid = (uint32_t)x << 20;
	*bucket = (uint16_t)y;
	return 0;
}

/* pack_key: key and mask network order, at a 4-byte aligned off */
static int u32_pack(struct lrx_rule_reader *ps, const char *word,
		    struct lrx_tc_u32 *s, uint32_t key, uint32_t mask,
		    int32_t off, int32_t offmask)
{
	key &= mask;
	for (unsigned i = 0; i < s->nkeys; i++) {
		struct lrx_tc_u32_key *k = &s->keys[i];
		if (k->off != off || k->offmask != offmask)
			continue;
		if ((key ^ k->val) & mask & k->mask)
			return u32_error(ps, word, "clashes with an earlier "
					 "match on the same bits");
		k->val |= key;
		k->mask |= mask;
		return 0;
	}
	if (off % 4 != 0)
		return u32_error(ps, word, "a u32 match is at a multiple of 4");
	if (s->nkeys == LRX_TC_U32_KEYS_MAX)
		return u32_error(ps, word, "more than %d keys in one u32 "
				 "filter", LRX_TC_U32_KEYS_MAX);
	s->keys[s->nkeys++] = (struct lrx_tc_u32_key){
		.mask = mask, .val = key, .off = off, .offmask = offmask };
	return 0;
}

/* pack_key32/16/8: a value of bytes 4, 2 or 1 at off into its word */
static int u32_pack_sized(struct lrx_rule_reader *ps, const char *word,
			  struct lrx_tc_u32 *s, unsigned bytes, uint32_t key,
			  uint32_t mask, int32_t off, int32_t offmask)
{
	unsigned shift = 0;

	if (bytes == 2)
		shift = (off & 3) == 0 ? 16 : 0;
	else if (bytes == 1)
		shift = 8 * (3 - (unsigned)(off & 3));
	if (bytes != 4)
		off &= ~3;
	return u32_pack(ps, word, s, htonl(key << shift), htonl(mask << shift),
			off, offmask);
}

/* at [nexthdr+]OFF (parse_at) */
static int u32_at(struct lrx_rule_reader *ps, char **w, int n, int *at,
		  int32_t *off, int32_t *offmask)
{
	int64_t v;

	if (*at >= n || strcmp(w[*at], "at") != 0)
		return 0;
	const char *p = *at + 1 < n ? w[*at + 1] : NULL;
	*at += 2;
	if (p != NULL && strcmp(p, "nexthdr+") == 0) {
		p = *at < n ? w[(*at)++] : NULL;
		*offmask = -1;
	} else if (p != NULL && strncmp(p, "nexthdr+", 8) == 0 && p[8]) {
		p += 8;
		*offmask = -1;
	}
	if (p == NULL || lrx_rule_int(p, 0xffff, true, &v) != 0)
		return u32_error(ps, p ? p : "at", "an offset is [nexthdr+]N, "
				 "N -65535..65535");
	*off = (int32_t)v;
	return 0;
}

/* VAL MASK [at OFF] of a 1, 2 or 4-byte field (parse_u32/u16/u8);
 * offmask: the field's own (ip6 icmp_code's 1), -1 after at nexthdr+ */
static int u32_field(struct lrx_rule_reader *ps, char **w, int n, int *at,
		     struct lrx_tc_u32 *s, unsigned bytes, int32_t off,
		     int32_t offmask)
{
	const uint64_t max = bytes == 4 ? UINT32_MAX : (1ull << (8 * bytes)) - 1;
	const char *name = w[*at - 1];
	uint64_t key, mask;

	if (*at + 2 > n)
		return u32_error(ps, name, "needs VALUE MASK");
	if (lrx_rule_uint(w[*at], max, true, &key) != 0)
		return u32_error(ps, w[*at], "a value 0..0x%llx (decimal or "
				 "0x hex)", (unsigned long long)max);
	if (lrx_rule_hex(w[*at + 1], max, &mask) != 0)
		return u32_error(ps, w[*at + 1], "a mask is hexadecimal "
				 "(as tc reads it), 0..%llx",
				 (unsigned long long)max);
	*at += 2;
	int rc = u32_at(ps, w, n, at, &off, &offmask);
	return rc < 0 ? rc : u32_pack_sized(ps, name, s, bytes, (uint32_t)key,
					    (uint32_t)mask, off, offmask);
}

/* src|dst A[/N] (parse_ip_addr: one key, a zero mask for /0;
 * parse_ip6_addr: one key per 32 bits of the prefix) */
static int u32_addr(struct lrx_rule_reader *ps, char **w, int n, int *at,
		    struct lrx_tc_u32 *s, int af, int32_t off)
{
	uint8_t addr[16], mask[16];
	int fam = af;
	int32_t offmask = 0;

	if (*at >= n || lrx_rule_addr(w[*at], &fam, addr, mask) != 0)
		return u32_error(ps, *at < n ? w[*at] : w[*at - 1], "an %s "
				 "address, optionally /prefix-length",
				 af == AF_INET ? "IPv4" : "IPv6");
	const char *word = w[(*at)++];
	int rc = u32_at(ps, w, n, at, &off, &offmask);
	for (unsigned i = 0; rc == 0 && i < (af == AF_INET ? 4u : 16u); i += 4) {
		uint32_t a, m;
		memcpy(&a, addr + i, 4);
		memcpy(&m, mask + i, 4);
		if (m != 0 || af == AF_INET)
			rc = u32_pack(ps, word, s, a, m, off + (int32_t)i, offmask);
	}
	return rc;
}

/* ip6 priority VAL MASK (parse_ip6_class): the traffic class, 8 bits
 * each, shifted into bits 20..27 of the first word; no `at` */
static int u32_ip6_class(struct lrx_rule_reader *ps, char **w, int n,
			 int *at, struct lrx_tc_u32 *s)
{
	uint64_t key, mask;

	if (*at + 2 > n)
		return u32_error(ps, w[*at - 1], "needs VALUE MASK");
	if (lrx_rule_uint(w[*at], 0xff, true, &key) != 0 ||
	    lrx_rule_hex(w[*at + 1], 0xff, &mask) != 0)
		return u32_error(ps, w[*at - 1], "priority is a traffic class "
				 "VALUE 0..0xff and a hex MASK 0..ff (tc: "
				 "Illegal \"match\")");
	*at += 2;
	return u32_pack(ps, "priority", s, htonl((uint32_t)key << 20),
			htonl((uint32_t)mask << 20), 0, 0);
}

/* the fields of `match ip` (parse_ip) and `match ip6` (parse_ip6), in
 * iproute2's order */
enum u32_ip_how {
	U32_IP_ADDR,  /* src|dst A[/N] */
	U32_IP_FIELD, /* VAL MASK [at OFF] of bytes at off */
	U32_IP_FLAG,  /* no value: pack_key16(key, mask) at off */
	U32_IP_CLASS, /* ip6 priority */
};
struct u32_ip_field {
	const char *name;
	uint8_t how;     /* enum u32_ip_how */
	bool prefix;     /* matches(): any prefix of the name is taken */
	uint8_t bytes, off;
	int8_t offmask;  /* the key's offmask (tc's ip6 icmp_code: 1) */
	uint16_t key, mask;
};
static const struct u32_ip_field u32_ip_fields[] = {
	{ "src", U32_IP_ADDR, false, 0, 12, 0, 0, 0 },
	{ "dst", U32_IP_ADDR, false, 0, 16, 0, 0, 0 },
	{ "tos", U32_IP_FIELD, false, 1, 1, 0, 0, 0 },
	{ "dsfield", U32_IP_FIELD, true, 1, 1, 0, 0, 0 },
	{ "precedence", U32_IP_FIELD, true, 1, 1, 0, 0, 0 },
	{ "ihl", U32_IP_FIELD, false, 1, 0, 0, 0, 0 },
	{ "protocol", U32_IP_FIELD, false, 1, 9, 0, 0, 0 },
	{ "nofrag", U32_IP_FLAG, false, 2, 6, 0, 0, 0x3fff },
	{ "firstfrag", U32_IP_FLAG, false, 2, 6, 0, 0x2000, 0x3fff },
	{ "df", U32_IP_FLAG, false, 2, 6, 0, 0x4000, 0x4000 },
	{ "mf", U32_IP_FLAG, false, 2, 6, 0, 0x2000, 0x2000 },
	{ "dport", U32_IP_FIELD, false, 2, 22, 0, 0, 0 },
	{ "sport", U32_IP_FIELD, false, 2, 20, 0, 0, 0 },
	{ "icmp_type", U32_IP_FIELD, false, 1, 20, 0, 0, 0 },
	{ "icmp_code", U32_IP_FIELD, false, 1, 21, 0, 0, 0 },
};
static const struct u32_ip_field u32_ip6_fields[] = {
	{ "src", U32_IP_ADDR, false, 0, 8, 0, 0, 0 },
	{ "dst", U32_IP_ADDR, false, 0, 24, 0, 0, 0 },
	{ "priority", U32_IP_CLASS, false, 1, 0, 0, 0, 0 },
	{ "protocol", U32_IP_FIELD, false, 1, 6, 0, 0, 0 },
	{ "flowlabel", U32_IP_FIELD, false, 4, 0, 0, 0, 0 },
	{ "dport", U32_IP_FIELD, false, 2, 42, 0, 0, 0 },
	{ "sport", U32_IP_FIELD, false, 2, 40, 0, 0, 0 },
	{ "icmp_type", U32_IP_FIELD, false, 1, 40, 0, 0, 0 },
	{ "icmp_code", U32_IP_FIELD, false, 1, 41, 1, 0, 0 },
};

/* strcmp, or iproute2's matches() for a field that takes a prefix */
static bool u32_ip_name(const struct u32_ip_field *f, const char *k)
{
	return f->prefix ? k[0] && strncmp(k, f->name, strlen(k)) == 0
			 : strcmp(k, f->name) == 0;
}

static int u32_ip_one(struct lrx_rule_reader *ps, char **w, int n, int *at,
		      struct lrx_tc_u32 *s, const struct u32_ip_field *f,
		      bool v6)
{
	switch (f->how) {
	case U32_IP_ADDR:
		return u32_addr(ps, w, n, at, s, v6 ? AF_INET6 : AF_INET, f->off);
	case U32_IP_FIELD:
		return u32_field(ps, w, n, at, s, f->bytes, f->off, f->offmask);
	case U32_IP_CLASS:
		return u32_ip6_class(ps, w, n, at, s);
	default:
		return u32_pack_sized(ps, f->name, s, 2, f->key, f->mask, f->off, 0);
	}
}

static int u32_match_ip(struct lrx_rule_reader *ps, char **w, int n,
			int *at, struct lrx_tc_u32 *s, bool v6)
{
	const struct u32_ip_field *t = v6 ? u32_ip6_fields : u32_ip_fields;
	const size_t nt = v6 ? RTE_DIM(u32_ip6_fields) : RTE_DIM(u32_ip_fields);
	const char *sel = w[*at - 1];

	/* parse_ip/parse_ip6 refuse fewer than two words after the
	 * selector, a flag (nofrag, df...) last on the line included */
	if (*at + 2 > n)
		return u32_error(ps, *at < n ? w[*at] : sel, "match %s needs a "
				 "field and a word after it (tc: Illegal "
				 "\"match\"; a flag such as nofrag cannot end "
				 "the line)", sel);
	const char *k = w[(*at)++];
	for (size_t i = 0; i < nt; i++)
		if (u32_ip_name(&t[i], k))
			return u32_ip_one(ps, w, n, at, s, &t[i], v6);
	return u32_error(ps, k, v6
			 ? "match ip6 takes src, dst, priority, protocol, "
			   "flowlabel, dport, sport, icmp_type, icmp_code"
			 : "match ip takes src, dst, tos, dsfield, precedence, "
			   "ihl, protocol, nofrag, firstfrag, df, mf, dport, "
			   "sport, icmp_type, icmp_code");
}

/* match u32|u16|u8|ip|ip6 ... (parse_selector) */
static int u32_match(struct lrx_rule_reader *ps, char **w, int n, int *at,
		     struct lrx_tc_u32 *s)
{
	const char *k = *at < n ? w[(*at)++] : NULL;

	if (k != NULL && strcmp(k, "u32") == 0)
		return u32_field(ps, w, n, at, s, 4, 0, 0);
	if (k != NULL && strcmp(k, "u16") == 0)
		return u32_field(ps, w, n, at, s, 2, 0, 0);
	if (k != NULL && strcmp(k, "u8") == 0)
		return u32_field(ps, w, n, at, s, 1, 0, 0);
	if (k != NULL && (strcmp(k, "ip") == 0 || strcmp(k, "ip6") == 0))
		return u32_match_ip(ps, w, n, at, s, k[2] == '6');
	return u32_error(ps, k ? k : "match", "listrx models match u32, u16, "
			 "u8, ip and ip6 (not tcp, udp, icmp, ether, mark)");
}

/* offset [plus N] [at N] [mask M] [shift S] [eat] (parse_offset) */
static int u32_offset(struct lrx_rule_reader *ps, char **w, int n, int *at,
		      struct lrx_tc_u32 *s)
{
	int64_t v;
	uint64_t u;

	while (*at < n) {
		const char *k = w[*at];
		const char *val = *at + 1 < n ? w[*at + 1] : NULL;
		if (strcmp(k, "eat") == 0) {
			s->flags |= LRX_TC_U32_EAT;
			(*at)++;
			continue;
		}
		if (strcmp(k, "plus") != 0 && strcmp(k, "at") != 0 &&
		    strcmp(k, "mask") != 0 && strcmp(k, "shift") != 0)
			break;
		*at += 2;
		if (val == NULL)
			return u32_error(ps, k, "needs a value");
		if (k[0] == 'p' || k[0] == 'a') {
			if (lrx_rule_int(val, 0x7fff, true, &v) != 0 ||
			    (k[0] == 'a' && v % 2 != 0))
				return u32_error(ps, val, "offset %s takes -32767.."
						 "32767%s", k, k[0] == 'a' ?
						 ", even (a 16-bit word)" : "");
			*(k[0] == 'p' ? &s->off : &s->offoff) = (int16_t)v;
			s->flags |= k[0] == 'p' ? LRX_TC_U32_OFFSET
						: LRX_TC_U32_VAROFFSET;
		} else if (k[0] == 'm') {
			if (lrx_rule_hex(val, 0xffff, &u) != 0)
				return u32_error(ps, val, "an offset mask is 16 "
						 "bits of hex");
			s->offmask = htons((uint16_t)u);
			s->flags |= LRX_TC_U32_VAROFFSET;
		} else {
			if (lrx_rule_uint(val, 15, false, &u) != 0)
				return u32_error(ps, val, "a shift is 0..15");
			s->offshift = (uint8_t)u;
			s->flags |= LRX_TC_U32_VAROFFSET;
		}
	}
	return 0;
}

/* hashkey mask M at N (parse_hashkey) */
static int u32_hashkey(struct lrx_rule_reader *ps, char **w, int n, int *at,
		       struct lrx_tc_u32 *s)
{
	uint64_t u;
	int64_t v;

	while (*at + 1 < n && (strcmp(w[*at], "mask") == 0 ||
			       strcmp(w[*at], "at") == 0)) {
		const char *val = w[*at + 1];
		if (w[*at][0] == 'm') {
			if (lrx_rule_hex(val, UINT32_MAX, &u) != 0)
				return u32_error(ps, val, "a hash mask is 32 bits "
						 "of hex");
			s->hmask = htonl((uint32_t)u);
		} else {
			if (lrx_rule_int(val, 0x7fff, true, &v) != 0 || v % 4 != 0)
				return u32_error(ps, val, "a hash key is at a "
						 "multiple of 4");
			s->hoff = (int16_t)v;
		}
		*at += 2;
	}
	return 0;
}

/* a line with divisor: a hash table of N buckets named by `handle X:` */
static int u32_table(struct lrx_rule_reader *ps, const char *handle,
		     uint64_t divisor, bool other, struct lrx_tc_filter *f)
{
	uint16_t bucket;

	if (divisor == 0 || divisor > LRX_TC_U32_DIVISOR_MAX ||
	    (divisor & (divisor - 1)))
		return u32_error(ps, "divisor", "a divisor is a power of 2, "
				 "1..256 (u32_change)");
	if (other)
		return u32_error(ps, "divisor", "a divisor line makes a table: "
				 "nothing else on it (match, link, action...)");
	if (handle == NULL)
		return u32_error(ps, "divisor", "needs handle X: (listrx does "
				 "not number tables itself)");
	int rc = u32_handle(ps, handle, &f->u32.handle, &bucket);
	if (rc == 0 && (bucket != 0 || (f->u32.handle & LRX_TC_U32_ROOT_HT)))
		return u32_error(ps, handle, "a table's handle is X: with X "
				 "1..7ff (800: and above are the prefs' roots)");
	f->kind = LRX_TC_KIND_U32_HT;
	f->u32.divisor = (uint16_t)divisor;
	return rc;
}

/* u32 keywords that take one word: ht, link, divisor, classid/flowid */
static int u32_word(struct lrx_rule_reader *ps, const char *k, const char *v,
		    struct lrx_tc_filter *f, uint64_t *divisor, bool *terminal)
{
	uint16_t bucket;
	int rc;

	if (v == NULL)
		return u32_error(ps, k, "needs a value");
	if (strcmp(k, "ht") == 0) {
		rc = u32_handle(ps, v, &f->u32.ht, &f->u32.bucket);
	} else if (strcmp(k, "link") == 0) {
		rc = u32_handle(ps, v, &f->u32.link, &bucket);
		if (rc == 0 && bucket != 0)
			rc = u32_error(ps, v, "link names a table: X:");
	} else if (strcmp(k, "divisor") == 0) {
		rc = lrx_rule_uint(v, 0xffff, true, divisor) != 0
			     ? u32_error(ps, v, "a divisor is 1..256") : 0;
	} else {
		*terminal = true; /* no classes at ingress: taken, unused */
		rc = 0;
	}
	return rc;
}

int lrx_tc_u32_parse(struct lrx_rule_reader *ps, char **w, int n, int at,
		     const char *handle, struct lrx_tc_filter *f)
{
	static const char *const one_word[] = { "ht", "link", "divisor",
						"classid", "flowid" };
	struct lrx_tc_u32 *s = &f->u32;
	bool terminal = false, sel = false, other = false;
	uint64_t divisor = 0;
	int rc = 0;

	f->kind = LRX_TC_KIND_U32;
	while (at < n && rc == 0) {
		const char *k = w[at++];
		if (strcmp(k, "match") == 0) {
			rc = u32_match(ps, w, n, &at, s);
			sel = true;
		} else if (strcmp(k, "offset") == 0) {
			rc = u32_offset(ps, w, n, &at, s);
			sel = true;
		} else if (strcmp(k, "hashkey") == 0) {
			rc = u32_hashkey(ps, w, n, &at, s);
			sel = true;
		} else if (lrx_rule_word_in(k, one_word, RTE_DIM(one_word))) {
			rc = u32_word(ps, k, at < n ? w[at] : NULL, f, &divisor,
				      &terminal);
			at++;
		} else if (strcmp(k, "skip_hw") == 0) {
			continue;
		} else if (strcmp(k, "action") == 0 || strcmp(k, "actions") == 0) {
			rc = lrx_tc_action_parse(ps, w, n, &at, f);
			terminal = true;
		} else {
			rc = u32_error(ps, k, "u32 takes match, offset, hashkey, "
				       "ht, link, divisor, classid, flowid, "
				       "skip_hw, action A (not sample, order, "
				       "indev, police, skip_sw)");
		}
		other |= strcmp(k, "divisor") != 0;
	}
	if (rc < 0)
		return rc;
	if (divisor != 0)
		return u32_table(ps, handle, divisor, other, f);
	if (handle != NULL)
		return u32_error(ps, handle, "a u32 node's handle is not "
				 "modelled (listrx numbers the nodes as "
				 "gen_new_kid does); handle X: goes with divisor");
	if (!sel)
		return u32_error(ps, "u32", "needs a selector: match ... "
				 "('match u32 0 0' matches every packet)");
	if (terminal)
		s->flags |= LRX_TC_U32_TERMINAL;
	return 0;
}
