/* SPDX-License-Identifier: BSD-3-Clause
 * Config key parsing for every stage: each helper reads one key through
 * init->get() and, on a bad value, writes one message format naming the
 * stage instance, the key, the value and what would be valid into
 * init->err, and returns -EINVAL. Integers are decimal only.
 */
#ifndef LISTRX_STAGE_KEYS_H
#define LISTRX_STAGE_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ether.h>

#include "stage.h"

/* The value of key (never NULL: a missing key reads as ""). */
const char *lrx_key_value(const struct lrx_stage_init *init, const char *key);

/* Writes "<instance>: key '<key>' = '<value>': <what is valid>
 * (<key>=<value>)": quoted (an empty value shows) and as written in a
 * config or --set. */
int lrx_key_error(const struct lrx_stage_init *init, const char *key,
		  const char *value, const char *valid);

/* One of choices[] (NULL terminated); *out = its index. */
int lrx_key_choice(const struct lrx_stage_init *init, const char *key,
		   const char *const *choices, unsigned *out);
/* yes|no (also on|off, true|false, 1|0). */
int lrx_key_bool(const struct lrx_stage_init *init, const char *key,
		 bool *out);
/* Decimal integer in [min, max]. */
int lrx_key_uint(const struct lrx_stage_init *init, const char *key,
		 unsigned long min, unsigned long max, unsigned long *out);
/* One comma-separated item of a list value: copies it into text
 * (NUL-terminated) and returns its length in v, or 0 when it is empty or
 * does not fit. */
size_t lrx_key_item(const char *v, char *text, size_t size);
/* "n" in [0, max], decimal digits only; -1 when it is not. */
long lrx_key_decimal(const char *text, long max);
/* Parses "aa:bb:cc:dd:ee:ff"; returns 0 or -EINVAL (no message). */
int lrx_parse_mac(const char *text, struct rte_ether_addr *out);

#endif
