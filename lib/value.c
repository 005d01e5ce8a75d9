/* SPDX-License-Identifier: BSD-3-Clause
 * The value layer (value.h): one parser per kind of value. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "value.h"

int lrx_value_uint(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!text || *text < '0' || *text > '9' || (text[0] == '0' && text[1]))
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(text, &end, 10);
	if (errno || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int lrx_value_hex(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
	if (!text || !*text || text[strspn(text, "0123456789abcdefABCDEF")])
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(text, NULL, 16);
	if (errno || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* strtod alone would take hex floats, inf, nan, leading blanks and signs */
int lrx_value_double(const char *text, double min, double max, double *out)
{
	if (!text || !((*text >= '0' && *text <= '9') || *text == '.') ||
	    strpbrk(text, "xX"))
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || *end || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int lrx_value_bool(const char *text, bool *out)
{
	static const char *const words[] = {"no", "yes", "false", "true", "off", "on",
					     "0", "1"};
	for (unsigned i = 0; text && i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(text, words[i]) == 0) {
			*out = i & 1;
			return 0;
		}
	return -EINVAL;
}

int lrx_value_choice(const char *text, const char *const *choices, unsigned *out)
{
	for (unsigned i = 0; text && choices[i]; i++)
		if (strcmp(text, choices[i]) == 0) {
			*out = i;
			return 0;
		}
	return -EINVAL;
}

int lrx_value_list_next(const char **p, char *item, size_t len)
{
	const char *s = *p + strspn(*p, " \t");
	if (*s == '\0' && s == *p)
		return 0;
	size_t n = strcspn(s, ",+");
	const bool separator = s[n] != '\0';
	const char *next = s + n + separator;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	/* empty, too long, or a separator with nothing after it */
	if (n == 0 || n >= len || (separator && next[strspn(next, " \t")] == '\0'))
		return -EINVAL;
	memcpy(item, s, n);
	item[n] = '\0';
	*p = next;
	return 1;
}

int lrx_value_flags(const char *text, const struct lrx_value_flag *flags, uint32_t *out)
{
	char item[64];
	uint32_t bits = 0;
	int rc, items = 0;
	/* rte_kvargs passes a devarg list as [a,b] */
	size_t len = text ? strlen(text) : 0;
	char inner[256];
	if (len >= 2 && text[0] == '[' && text[len - 1] == ']' && len - 2 < sizeof(inner)) {
		memcpy(inner, text + 1, len - 2);
		inner[len - 2] = '\0';
		text = inner;
	}
	for (const char *p = text; text && (rc = lrx_value_list_next(&p, item, sizeof(item))) > 0;
	     items++) {
		const struct lrx_value_flag *f = flags;
		while (f->name && strcmp(f->name, item) != 0)
			f++;
		if (!f->name)
			return -EINVAL;
		bits |= f->bits;
	}
	if (!text || rc < 0 || items == 0)
		return -EINVAL;
	*out = bits;
	return 0;
}

int lrx_value_ports(const char *text, struct lrx_port_set *out)
{
	memset(out, 0, sizeof(*out));
	if (text && strcmp(text, "any") == 0) {
		out->any = true;
		return 0;
	}
	if (text && strcmp(text, "none") == 0)
		return 0;
	char item[32];
	int rc = -EINVAL, items = 0;
	for (const char *p = text; text && (rc = lrx_value_list_next(&p, item, sizeof(item))) > 0;
	     items++) {
		uint64_t lo, hi;
		char *dash = strchr(item, '-');
		if (dash)
			*dash = '\0';
		if (lrx_value_uint(item, 0, 65535, &lo) < 0 ||
		    lrx_value_uint(dash ? dash + 1 : item, lo, 65535, &hi) < 0)
			return -EINVAL;
		for (uint64_t port = lo; port <= hi; port++)
			out->bits[port >> 6] |= UINT64_C(1) << (port & 63);
	}
	return items ? rc : -EINVAL;
}

int lrx_value_mac(const char *text, uint8_t mac[6])
{
	for (unsigned i = 0; i < 6; i++) {
		unsigned digits = 0, byte = 0;
		for (; text[digits] && strchr("0123456789abcdefABCDEF", text[digits]); digits++)
			byte = byte * 16 + (unsigned)(text[digits] <= '9' ? text[digits] - '0'
							      : (text[digits] | 0x20) - 'a' + 10);
		if (digits < 1 || digits > 2 || text[digits] != (i < 5 ? ':' : '\0'))
			return -EINVAL;
		mac[i] = (uint8_t)byte;
		text += digits + 1;
	}
	return 0;
}

int lrx_value_addr(const char *text, int af, void *addr, unsigned *prefix_len)
{
	char buf[INET6_ADDRSTRLEN + 8];
	if (!text || strlen(text) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, text);
	char *slash = strchr(buf, '/');
	const unsigned bits = af == AF_INET ? 32 : 128;
	uint64_t plen = bits;
	if (slash) {
		*slash = '\0';
		if (!prefix_len || lrx_value_uint(slash + 1, 0, bits, &plen) < 0)
			return -EINVAL;
	}
	if (inet_pton(af, buf, addr) != 1)
		return -EINVAL;
	if (prefix_len)
		*prefix_len = (unsigned)plen;
	return 0;
}

/* v into an unsigned integer field of size bytes, host order */
static void store_uint(void *out, size_t size, uint64_t v)
{
	switch (size) {
	case 1: *(uint8_t *)out = (uint8_t)v; break;
	case 2: *(uint16_t *)out = (uint16_t)v; break;
	case 4: *(uint32_t *)out = (uint32_t)v; break;
	default: *(uint64_t *)out = v; break;
	}
}

int lrx_value_parse(const struct lrx_value_type *t, const char *text, void *out)
{
	uint64_t u = 0;
	unsigned choice = 0;
	uint32_t bits = 0;
	int rc = -EINVAL;
	switch (t->kind) {
	case LRX_VALUE_UINT: rc = lrx_value_uint(text, t->min, t->max, &u); break;
	case LRX_VALUE_CHOICE: rc = lrx_value_choice(text, t->choices, &choice); break;
	case LRX_VALUE_FLAGS: rc = lrx_value_flags(text, t->flags, &bits); break;
	case LRX_VALUE_DOUBLE: return lrx_value_double(text, t->fmin, t->fmax, out);
	case LRX_VALUE_BOOL: return lrx_value_bool(text, out);
	case LRX_VALUE_PORTS: return lrx_value_ports(text, out);
	case LRX_VALUE_CUSTOM: return text ? t->parse(text, out) : -EINVAL;
	case LRX_VALUE_STRING:
		if (!text || strlen(text) >= t->size)
			return -EINVAL;
		strcpy(out, text);
		return 0;
	}
	if (rc == 0) /* one of them is set, the others are 0 */
		store_uint(out, t->size, u | choice | bits);
	return rc;
}

/* names separated by sep into buf */
static void join(char *buf, size_t len, const char *before, const char *const *names,
		 size_t stride, const char *sep)
{
	size_t used = (size_t)snprintf(buf, len, "%s", before);
	for (unsigned i = 0; *(const char *const *)((const char *)names + i * stride); i++) {
		const char *name = *(const char *const *)((const char *)names + i * stride);
		if (used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? sep : "", name);
	}
}

void lrx_value_valid(const struct lrx_value_type *t, char *buf, size_t len)
{
	switch (t->kind) {
	case LRX_VALUE_UINT:
		snprintf(buf, len, "an integer in %llu..%llu",
			 (unsigned long long)t->min, (unsigned long long)t->max);
		return;
	case LRX_VALUE_DOUBLE:
		snprintf(buf, len, "a number in %g..%g", t->fmin, t->fmax);
		return;
	case LRX_VALUE_BOOL:
		snprintf(buf, len, "%s", LRX_VALUE_BOOL_VALID);
		return;
	case LRX_VALUE_CHOICE:
		join(buf, len, "one of ", t->choices, sizeof(t->choices[0]), ", ");
		return;
	case LRX_VALUE_FLAGS:
		join(buf, len, "a list of ", &t->flags[0].name, sizeof(t->flags[0]),
		     ", ");
		return;
	case LRX_VALUE_STRING:
		snprintf(buf, len, "at most %zu characters", t->size - 1);
		return;
	case LRX_VALUE_PORTS:
		snprintf(buf, len, "any, none, or a list of ports and ranges in 0..65535 "
			 "(53,8000-8100)");
		return;
	case LRX_VALUE_CUSTOM:
		snprintf(buf, len, "%s", t->valid);
		return;
	}
}

const struct lrx_value_key *lrx_value_key_find(const struct lrx_value_key *keys,
					       const char *name)
{
	for (const struct lrx_value_key *k = keys; k && k->name; k++)
		if (strcmp(k->name, name) == 0)
			return k;
	return NULL;
}

int lrx_value_key_set(const struct lrx_value_key *k, void *dst, const char *text,
		      char *valid, size_t len)
{
	int rc = lrx_value_parse(&k->type, text, (char *)dst + k->offset);
	if (rc < 0 && valid)
		lrx_value_valid(&k->type, valid, len);
	return rc;
}

int lrx_value_keys_default(const struct lrx_value_key *keys, void *dst,
			   const char **bad_key)
{
	for (const struct lrx_value_key *k = keys; k && k->name; k++)
		if (k->def && lrx_value_key_set(k, dst, k->def, NULL, 0) < 0) {
			*bad_key = k->name;
			return -EINVAL;
		}
	return 0;
}

void lrx_value_key_names(const struct lrx_value_key *keys, char *buf, size_t len)
{
	buf[0] = '\0';
	if (keys)
		join(buf, len, "", &keys[0].name, sizeof(keys[0]), ", ");
}
