/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "stage_keys.h"

const char *lrx_key_value(const struct lrx_stage_init *init, const char *key)
{
	const char *v = init->get ? init->get(init, key) : NULL;
	return v ? v : "";
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

int lrx_key_choice(const struct lrx_stage_init *init, const char *key,
		   const char *const *choices, unsigned *out)
{
	const char *v = lrx_key_value(init, key);
	char valid[160] = "valid values are ";
	for (unsigned i = 0; choices[i]; i++) {
		if (strcmp(v, choices[i]) == 0) {
			*out = i;
			return 0;
		}
		strncat(valid, i ? "|" : "", sizeof(valid) - strlen(valid) - 1);
		strncat(valid, choices[i], sizeof(valid) - strlen(valid) - 1);
	}
	return lrx_key_error(init, key, v, valid);
}

int lrx_key_bool(const struct lrx_stage_init *init, const char *key,
		 bool *out)
{
	static const char *const yes[] = {"yes", "on", "true", "1"};
	static const char *const no[] = {"no", "off", "false", "0"};
	const char *v = lrx_key_value(init, key);
	for (unsigned i = 0; i < 4; i++) {
		if (strcasecmp(v, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(v, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return lrx_key_error(init, key, v, "valid values are yes|no");
}

int lrx_key_uint(const struct lrx_stage_init *init, const char *key,
		 unsigned long min, unsigned long max, unsigned long *out)
{
	const char *v = lrx_key_value(init, key);
	char *end = NULL;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (*v == '\0' || *v == '-' || errno || *end != '\0' || x < min ||
	    x > max) {
		char valid[80];
		snprintf(valid, sizeof(valid),
			 "valid values are integers %lu..%lu", min, max);
		return lrx_key_error(init, key, v, valid);
	}
	*out = x;
	return 0;
}

size_t lrx_key_item(const char *v, char *text, size_t size)
{
	size_t len = strcspn(v, ",");
	if (len == 0 || len >= size)
		return 0;
	memcpy(text, v, len);
	text[len] = '\0';
	return len;
}

long lrx_key_decimal(const char *text, long max)
{
	char *end;
	if (*text < '0' || *text > '9')
		return -1;
	errno = 0;
	long n = strtol(text, &end, 10);
	return *end || errno || n > max ? -1 : n;
}

int lrx_parse_mac(const char *text, struct rte_ether_addr *out)
{
	unsigned b[6];
	char tail;
	if (sscanf(text, "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3],
		   &b[4], &b[5], &tail) != 6)
		return -EINVAL;
	for (unsigned i = 0; i < 6; i++) {
		if (b[i] > 0xff)
			return -EINVAL;
		out->addr_bytes[i] = (uint8_t)b[i];
	}
	return 0;
}
