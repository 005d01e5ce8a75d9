/* SPDX-License-Identifier: BSD-3-Clause
 * The words of the rule files the filtering stages read (netfilter's
 * iptables-save text, tc-ingress's `tc -batch` lines): a line split into
 * words, and the values those words hold (integers, addresses with a
 * prefix, port ranges). Each parser returns 0 or -EINVAL; the file parsers
 * put the file, line and word in front of what is valid.
 */
#ifndef LISTRX_RULE_TEXT_H
#define LISTRX_RULE_TEXT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The longest line of a rule file, and the most words in one. */
#define LRX_RULE_LINE_MAX 1024
#define LRX_RULE_WORDS_MAX 96

/* Splits line in place at blanks into words[] (a "double-quoted" word
 * keeps its blanks, without the quotes); a '#' outside quotes starts a
 * comment. Returns the number of words, or -E2BIG (too many words) or
 * -EINVAL (an unterminated quote). */
int lrx_rule_split(char *line, char **words, int max);

/* An integer in 0..max in the value layer's grammar (value.h: decimal,
 * or 0x and hex digits when hex is true). */
int lrx_rule_uint(const char *text, uint64_t max, bool hex, uint64_t *out);
/* A signed integer in -max..max: an optional '-' before lrx_rule_uint's
 * grammar (tc's get_integer for offsets: "at -2"). */
int lrx_rule_int(const char *text, int64_t max, bool hex, int64_t *out);
/* An integer in 0..max read as hexadecimal, with or without 0x (tc's
 * get_u32(..., 16) for u32 masks: "ffff" is 0xffff). */
int lrx_rule_hex(const char *text, uint64_t max, uint64_t *out);
/* Whether word is one of names[0..n) (a NULL ends the list early): the
 * spellings of one option in a keyword table. */
bool lrx_rule_word_in(const char *word, const char *const *names, size_t n);

/* An IPv4 or IPv6 address, optionally "/N" (a prefix length) or, for
 * IPv4, "/a.b.c.d" (a contiguous netmask, as iptables takes it). *af is
 * AF_INET or AF_INET6 when the family is fixed, AF_UNSPEC to take either
 * (and it is set). addr and mask get 4 or 16 bytes, network order. */
int lrx_rule_addr(const char *text, int *af, uint8_t addr[16],
		  uint8_t mask[16]);

/* "P" or "P<sep>Q" with P <= Q (ports 0..65535); iptables writes
 * ranges with ':', tc flower with '-'. An omitted end of an iptables
 * range (":Q", "P:") is 0 or 65535. */
int lrx_rule_port_range(const char *text, char sep, uint16_t *lo,
			uint16_t *hi);

/* iptables-save -c's "[PACKETS:BYTES]": two decimal counters. */
int lrx_rule_counters(const char *text, uint64_t *pkts, uint64_t *bytes);

/* Writes "name:line: 'word': <fmt ...>" (without the word part when word
 * is NULL) into err; returns -EINVAL, for `return lrx_rule_error(...)`. */
int lrx_rule_error(char *err, size_t err_len, const char *name, unsigned line,
		   const char *word, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* A rule file's text read a line at a time: what is left of it, the
 * file's name and the line's number (for errors: "name:line: ..."), and
 * where errors go. */
struct lrx_rule_reader {
	const char *p, *name;
	unsigned line;
	char *err;
	size_t err_len;
	char buf[LRX_RULE_LINE_MAX];
};

/* The next line with words, split into words[LRX_RULE_WORDS_MAX]
 * (lrx_rule_split, in r->buf): their number, 0 at the end of the text,
 * or -EINVAL with why in err (a line too long, too many words, a quote
 * not closed). */
int lrx_rule_next(struct lrx_rule_reader *r, char **words);

/* lrx_rule_error at the reader's line */
#define lrx_rule_fail(r, word, ...)                                           \
	lrx_rule_error((r)->err, (r)->err_len, (r)->name, (r)->line, word,    \
		       __VA_ARGS__)

/* Reads a whole rule file (a regular file of at most max bytes) into a
 * NUL-terminated buffer the caller frees. Returns 0 or -errno, with why
 * (naming the file) in err. */
int lrx_rule_file_read(const char *path, size_t max, char **out, char *err,
		       size_t err_len);

#endif
