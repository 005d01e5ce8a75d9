/* SPDX-License-Identifier: BSD-3-Clause
 * A small streaming JSON writer for the summary (no allocation, FILE *). */
#ifndef LISTRX_JSON_H
#define LISTRX_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define LRX_JSON_DEPTH 16

struct lrx_json {
	FILE *out;
	int depth;
	bool need_comma[LRX_JSON_DEPTH];
	bool pretty;
};

void lrx_json_init(struct lrx_json *j, FILE *out, bool pretty);
/* key may be NULL inside arrays */
void lrx_json_object_begin(struct lrx_json *j, const char *key);
void lrx_json_object_end(struct lrx_json *j);
void lrx_json_array_begin(struct lrx_json *j, const char *key);
void lrx_json_array_end(struct lrx_json *j);
void lrx_json_string(struct lrx_json *j, const char *key, const char *value);
void lrx_json_u64(struct lrx_json *j, const char *key, uint64_t value);
void lrx_json_i64(struct lrx_json *j, const char *key, int64_t value);
/* NaN/inf are written as null */
void lrx_json_double(struct lrx_json *j, const char *key, double value);
void lrx_json_bool(struct lrx_json *j, const char *key, bool value);
void lrx_json_null(struct lrx_json *j, const char *key);
/* text, a whole JSON value written by someone else, as it is */
void lrx_json_raw(struct lrx_json *j, const char *key, const char *text);

#endif
