/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "base_stages.h"

int lrx_stage_key_uint(const struct lrx_stage_init *init, const char *key,
		       unsigned long min, unsigned long max,
		       unsigned long *value)
{
	const char *text = init->get(init, key);
	char *end = NULL;
	unsigned long v;

	if (text == NULL || *text == '\0') {
		snprintf(init->err, init->err_len,
			 "stage '%s': key '%s' has no value (valid: %lu..%lu)",
			 init->instance, key, min, max);
		return -EINVAL;
	}
	errno = 0;
	v = strtoul(text, &end, 0);
	if (errno != 0 || *end != '\0' || text[0] == '-' || v < min ||
	    v > max) {
		snprintf(init->err, init->err_len,
			 "stage '%s': key '%s' = '%s' is not valid (valid: %lu..%lu)",
			 init->instance, key, text, min, max);
		return -EINVAL;
	}
	*value = v;
	return 0;
}
