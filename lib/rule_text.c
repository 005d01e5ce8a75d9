/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "rule_text.h"
#include "text_file.h"
#include "value.h"

int lrx_rule_error(char *err, size_t err_len, const char *name, unsigned line,
		   const char *word, const char *fmt, ...)
{
	va_list ap;
	int pos = word ? snprintf(err, err_len, "%s:%u: '%s': ", name, line, word)
		       : snprintf(err, err_len, "%s:%u: ", name, line);

	if (pos >= 0 && (size_t)pos < err_len) {
		va_start(ap, fmt);
		vsnprintf(err + pos, err_len - (size_t)pos, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

int lrx_rule_split(char *line, char **words, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		if (*p == '\0' || *p == '#')
			return n;
		if (n == max)
			return -E2BIG;
		if (*p == '"') {
			char *end = strchr(p + 1, '"');
			if (end == NULL)
				return -EINVAL;
			words[n++] = p + 1;
			*end = '\0';
			p = end + 1;
			continue;
		}
		words[n++] = p;
		while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n')
			p++;
		if (*p == '\0')
			return n;
		*p++ = '\0';
	}
}

bool lrx_rule_word_in(const char *word, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n && names[i] != NULL; i++)
		if (strcmp(word, names[i]) == 0)
			return true;
	return false;
}

int lrx_rule_uint(const char *text, uint64_t max, bool hex, uint64_t *out)
{
	if (hex && text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		return lrx_value_hex(text + 2, 0, max, out);
	return lrx_value_uint(text, 0, max, out);
}

int lrx_rule_int(const char *text, int64_t max, bool hex, int64_t *out)
{
	const bool neg = text[0] == '-';
	uint64_t u;

	if (max < 0 || lrx_rule_uint(text + neg, (uint64_t)max, hex, &u) != 0)
		return -EINVAL;
	*out = neg ? -(int64_t)u : (int64_t)u;
	return 0;
}

int lrx_rule_hex(const char *text, uint64_t max, uint64_t *out)
{
	if (text[0] == '0' && (text[1] == 'x' || text[1] == 'X'))
		text += 2;
	return lrx_value_hex(text, 0, max, out);
}

/* A mask of len leading one bits over n bytes. */
static void prefix_mask(unsigned len, unsigned n, uint8_t *mask)
{
	for (unsigned i = 0; i < n; i++) {
		unsigned bits = len > 8 * i ? len - 8 * i : 0;
		mask[i] = bits >= 8 ? 0xff : (uint8_t)(0xff00u >> bits);
	}
}

int lrx_rule_addr(const char *text, int *af, uint8_t addr[16],
		  uint8_t mask[16])
{
	char buf[64];
	const char *slash = strchr(text, '/');
	size_t len = slash ? (size_t)(slash - text) : strlen(text);
	int fam;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';
	memset(addr, 0, 16);
	memset(mask, 0, 16);
	if (inet_pton(AF_INET, buf, addr) == 1)
		fam = AF_INET;
	else if (inet_pton(AF_INET6, buf, addr) == 1)
		fam = AF_INET6;
	else
		return -EINVAL;
	if (*af != AF_UNSPEC && *af != fam)
		return -EINVAL;
	const unsigned n = fam == AF_INET ? 4 : 16;
	uint64_t plen = 8 * n;

	if (slash != NULL) {
		uint8_t m4[4];
		if (lrx_rule_uint(slash + 1, 8 * n, false, &plen) != 0) {
			/* iptables' dotted netmask: contiguous ones only */
			if (fam != AF_INET || inet_pton(AF_INET, slash + 1, m4) != 1)
				return -EINVAL;
			uint32_t m = (uint32_t)m4[0] << 24 | (uint32_t)m4[1] << 16 |
				     (uint32_t)m4[2] << 8 | m4[3];
			if (m & (~m >> 1))
				return -EINVAL;
			plen = (uint64_t)__builtin_popcount(m);
		}
	}
	prefix_mask((unsigned)plen, n, mask);
	for (unsigned i = 0; i < n; i++)
		addr[i] &= mask[i]; /* as iptables and tc: the host bits go */
	*af = fam;
	return 0;
}

int lrx_rule_port_range(const char *text, char sep, uint16_t *lo,
			uint16_t *hi)
{
	const char *mid = strchr(text, sep);
	char first[8];
	uint64_t a = 0, b = 65535;

	if (mid == NULL) {
		if (lrx_rule_uint(text, 65535, false, &a) != 0)
			return -EINVAL;
		*lo = *hi = (uint16_t)a;
		return 0;
	}
	size_t len = (size_t)(mid - text);
	if (len >= sizeof(first))
		return -EINVAL;
	memcpy(first, text, len);
	first[len] = '\0';
	/* iptables: ":Q" and "P:" leave that end open; tc needs both */
	if ((len || sep != ':') && lrx_rule_uint(first, 65535, false, &a) != 0)
		return -EINVAL;
	if ((mid[1] || sep != ':') && lrx_rule_uint(mid + 1, 65535, false, &b) != 0)
		return -EINVAL;
	if (a > b)
		return -EINVAL;
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
}

int lrx_rule_next(struct lrx_rule_reader *r, char **words)
{
	int n = 0;
	while (n == 0 && *r->p) {
		const char *end = strchr(r->p, '\n');
		size_t len = end ? (size_t)(end - r->p) : strlen(r->p);
		r->line++;
		if (len >= sizeof(r->buf))
			return lrx_rule_fail(r, NULL, "line longer than %d bytes",
					     LRX_RULE_LINE_MAX - 1);
		memcpy(r->buf, r->p, len);
		r->buf[len] = '\0';
		r->p += len + (end ? 1 : 0);
		n = lrx_rule_split(r->buf, words, LRX_RULE_WORDS_MAX);
		if (n < 0)
			return lrx_rule_fail(r, NULL, n == -E2BIG ? "more than %d words"
					     : "a quote is not closed", LRX_RULE_WORDS_MAX);
	}
	return n;
}

int lrx_rule_counters(const char *text, uint64_t *pkts, uint64_t *bytes)
{
	char p[24], b[24];
	const char *colon = strchr(text, ':');
	const size_t len = strlen(text);

	if (text[0] != '[' || len < 5 || text[len - 1] != ']' || colon == NULL ||
	    (size_t)(colon - text - 1) >= sizeof(p) ||
	    (size_t)(text + len - colon - 2) >= sizeof(b))
		return -EINVAL;
	snprintf(p, sizeof(p), "%.*s", (int)(colon - text - 1), text + 1);
	snprintf(b, sizeof(b), "%.*s", (int)(text + len - colon - 2), colon + 1);
	if (lrx_rule_uint(p, UINT64_MAX, false, pkts) != 0 ||
	    lrx_rule_uint(b, UINT64_MAX, false, bytes) != 0)
		return -EINVAL;
	return 0;
}

int lrx_rule_file_read(const char *path, size_t max, char **out, char *err,
		       size_t err_len)
{
	char why[128];
	size_t len;
	int rc = lrx_text_file_read(path, max, out, &len, why, sizeof(why));

	if (rc == -EFBIG) {
		snprintf(err, err_len, "%s: %zu bytes: a rule file has at most %zu bytes "
			 "(%zu MiB)", path, len, max, max >> 20);
		return -EINVAL; /* bad input: a usage error, as a bad value */
	}
	if (rc < 0)
		snprintf(err, err_len, rc == -EINVAL ? "%s: %s" : "%s: cannot open: %s",
			 path, why);
	else if (memchr(*out, '\0', len) != NULL) {
		snprintf(err, err_len, "%s: a NUL byte: a rule file is text", path);
		free(*out);
		*out = NULL;
		rc = -EINVAL;
	}
	return rc;
}
