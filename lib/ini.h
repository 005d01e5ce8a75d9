/* SPDX-License-Identifier: BSD-3-Clause
 * The INI text of a config: [section] headers, key = value lines and
 * whole-line comments (; or #), each entry with the line it came from, a
 * value as long as its line. A syntax error names the file, the line and
 * what is valid. (DPDK's rte_cfgfile, used before, stops values at 255
 * characters, cuts a value at a ';' and reports a bad line only by
 * failing.)
 */
#ifndef LISTRX_INI_H
#define LISTRX_INI_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct lrx_ini_entry {
	char *key, *value;
	unsigned line;           /* 0: not from the file (lrx_ini_set) */
};

struct lrx_ini_section {
	char *name;
	unsigned line;
	unsigned n, cap;
	struct lrx_ini_entry *entries;
};

struct lrx_ini {
	unsigned n, cap;
	struct lrx_ini_section *sections;
};

/* Parses text into ini (empty before); name is what messages call it.
 * Returns 0, -ENOMEM, or -EINVAL with "name:line: the line: why" in err:
 * a line that is not blank, a comment, [name] or key = value, a key
 * before any section or without a name, a section or a key of a section
 * given twice. */
int lrx_ini_parse(struct lrx_ini *ini, const char *name, const char *text, char *err,
		  size_t err_len);
void lrx_ini_free(struct lrx_ini *ini);

const struct lrx_ini_section *lrx_ini_section(const struct lrx_ini *ini, const char *name);
const struct lrx_ini_entry *lrx_ini_entry(const struct lrx_ini *ini, const char *section,
					  const char *key);
/* The value of key in section, or NULL. */
const char *lrx_ini_get(const struct lrx_ini *ini, const char *section, const char *key);
/* Sets key in section, both made if new. 0 or -ENOMEM. */
int lrx_ini_set(struct lrx_ini *ini, const char *section, const char *key, const char *value);

#ifdef __cplusplus
}
#endif

#endif
