/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_debug.h>

#include "stage_keys.h"

void *lrx_stage_conf_new(const struct lrx_stage *stage)
{
	void *conf = calloc(1, stage->conf_size ? stage->conf_size : 1);
	const char *bad = NULL;
	if (conf && lrx_value_keys_default(stage->keys, conf, &bad) < 0)
		rte_panic("stage %s: the default of key %s is not valid\n", stage->name, bad);
	return conf;
}

int lrx_stage_conf_set(const struct lrx_stage *stage, void *conf, const char *key,
		       const char *text, char *valid, size_t valid_len)
{
	const struct lrx_value_key *k = lrx_value_key_find(stage->keys, key);
	if (!k) {
		lrx_value_key_names(stage->keys, valid, valid_len);
		return -ENOENT;
	}
	return lrx_value_key_set(k, conf, text, valid, valid_len);
}

int lrx_key_error(const struct lrx_stage_init *init, const char *key,
		  const char *value, const char *valid)
{
	if (init->err && init->err_len)
		snprintf(init->err, init->err_len,
			 "%s: key '%s' = '%s': %s (%s=%s)",
			 init->instance ? init->instance : "stage", key, value,
			 valid, key, value);
	return -EINVAL;
}
