/* SPDX-License-Identifier: BSD-3-Clause */
#include <math.h>
#include <inttypes.h>
#include <string.h>

#include "json.h"

void lrx_json_init(struct lrx_json *j, FILE *out, bool pretty)
{
	j->out = out;
	j->depth = 0;
	j->need_comma[0] = false;
	j->pretty = pretty;
}

static void json_write_escaped(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '"': fputs("\\\"", out); break;
		case '\\': fputs("\\\\", out); break;
		case '\n': fputs("\\n", out); break;
		case '\r': fputs("\\r", out); break;
		case '\t': fputs("\\t", out); break;
		default:
			if (c < 0x20)
				fprintf(out, "\\u%04x", c);
			else
				fputc(c, out);
		}
	}
	fputc('"', out);
}

/* Comma, newline and indentation before a value, then its key. */
static void json_prefix(struct lrx_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->out);
	if (j->pretty && j->depth > 0) {
		fputc('\n', j->out);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->out);
	}
	j->need_comma[j->depth] = true;
	if (key) {
		json_write_escaped(j->out, key);
		fputs(j->pretty ? ": " : ":", j->out);
	}
}

static void json_open(struct lrx_json *j, const char *key, char bracket)
{
	json_prefix(j, key);
	fputc(bracket, j->out);
	if (j->depth + 1 < LRX_JSON_DEPTH)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void json_close(struct lrx_json *j, char bracket)
{
	bool had_items = j->need_comma[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (j->pretty && had_items) {
		fputc('\n', j->out);
		for (int i = 0; i < j->depth; i++)
			fputs("  ", j->out);
	}
	fputc(bracket, j->out);
	if (j->depth == 0 && j->pretty)
		fputc('\n', j->out);
}

void lrx_json_object_begin(struct lrx_json *j, const char *key)
{
	json_open(j, key, '{');
}
void lrx_json_object_end(struct lrx_json *j)
{
	json_close(j, '}');
}
void lrx_json_array_begin(struct lrx_json *j, const char *key)
{
	json_open(j, key, '[');
}
void lrx_json_array_end(struct lrx_json *j)
{
	json_close(j, ']');
}

void lrx_json_string(struct lrx_json *j, const char *key, const char *value)
{
	json_prefix(j, key);
	if (value)
		json_write_escaped(j->out, value);
	else
		fputs("null", j->out);
}

void lrx_json_u64(struct lrx_json *j, const char *key, uint64_t value)
{
	json_prefix(j, key);
	fprintf(j->out, "%" PRIu64, value);
}

void lrx_json_i64(struct lrx_json *j, const char *key, int64_t value)
{
	json_prefix(j, key);
	fprintf(j->out, "%" PRId64, value);
}

void lrx_json_double(struct lrx_json *j, const char *key, double value)
{
	json_prefix(j, key);
	if (isfinite(value))
		fprintf(j->out, "%.6g", value);
	else
		fputs("null", j->out);
}

void lrx_json_bool(struct lrx_json *j, const char *key, bool value)
{
	json_prefix(j, key);
	fputs(value ? "true" : "false", j->out);
}

void lrx_json_null(struct lrx_json *j, const char *key)
{
	json_prefix(j, key);
	fputs("null", j->out);
}

void lrx_json_raw(struct lrx_json *j, const char *key, const char *text)
{
	json_prefix(j, key);
	size_t n = strlen(text);
	while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
		n--;
	fwrite(text, 1, n, j->out);
}
