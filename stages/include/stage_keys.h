/* SPDX-License-Identifier: BSD-3-Clause
 * A stage's typed config (stage.h, value.h): built from the defaults of
 * its key table, then key by key from the config; and the one message
 * format for what init finds wrong with a combination of values.
 */
#ifndef LISTRX_STAGE_KEYS_H
#define LISTRX_STAGE_KEYS_H

#include "stage.h"

/* A config of stage with every key at its default (free() it); NULL when
 * out of memory. A default its own type refuses is a bug of the table:
 * aborts (tests build every stage's defaults). */
void *lrx_stage_conf_new(const struct lrx_stage *stage);
/* Sets key of conf from text. Returns 0; -ENOENT for a key the stage does
 * not have (valid: its keys); -EINVAL for a bad value (valid: what is
 * valid, lrx_value_valid). */
int lrx_stage_conf_set(const struct lrx_stage *stage, void *conf, const char *key,
		       const char *text, char *valid, size_t valid_len);

/* Writes "<instance>: key '<key>' = '<value>': <what is valid>
 * (<key>=<value>)" into init->err and returns -EINVAL: for a value that
 * is valid alone but not with the others. */
int lrx_key_error(const struct lrx_stage_init *init, const char *key,
		  const char *value, const char *valid);

#endif
