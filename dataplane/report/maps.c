/* SPDX-License-Identifier: BSD-3-Clause
 * The stages' maps in the report, as `bpftool map dump` shows them: each
 * entry's key and value bytes, and where the map has a layout
 * (map_layout.h: a stage's own table, or an eBPF map with BTF) the same
 * decoded into named, typed fields: the text summary prints those as
 * columns (`iptables -L -v -x`: exact pkts and bytes), the JSON beside
 * the bytes, telemetry as name=value.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "summary.h"

/* ---- bytes ------------------------------------------------------------------ */

void lrx_map_hex(char *buf, size_t len, const uint8_t *bytes, uint32_t n)
{
	size_t at = 0;
	buf[0] = '\0';
	/* a byte takes 2 characters, 3 after the first; len holds the NUL */
	for (uint32_t i = 0; i < n && at + (i ? 3 : 2) < len; i++)
		at += (size_t)snprintf(buf + at, len - at, i ? " %02x" : "%02x", bytes[i]);
}

bool lrx_map_int(const uint8_t *bytes, uint32_t n, uint64_t *value)
{
	if (n == 4) {
		uint32_t v;
		memcpy(&v, bytes, 4);
		*value = v;
		return true;
	}
	if (n == 8) {
		memcpy(value, bytes, 8);
		return true;
	}
	return false;
}

static bool bytes_zero(const uint8_t *b, uint32_t n)
{
	uint8_t any = 0;
	for (uint32_t i = 0; i < n; i++)
		any |= b[i];
	return any == 0;
}

/* ---- the layout's fields --------------------------------------------------- */

static bool field_is_int(const struct lrx_map_field *f)
{
	return f->kind == LRX_MAP_UINT || f->kind == LRX_MAP_INT;
}

bool lrx_map_layout_fits(const struct lrx_map_layout *l, uint32_t key_size, uint32_t value_size)
{
	if (l->n_fields > LRX_MAP_FIELDS_MAX)
		return false;
	for (uint32_t i = 0; i < l->n_fields; i++) {
		const struct lrx_map_field *f = &l->fields[i];
		uint64_t part = f->part == LRX_MAP_KEY ? key_size : value_size;
		bool int_size = f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8;
		if (f->part > LRX_MAP_VALUE || f->kind > LRX_MAP_BYTES || f->count == 0 ||
		    f->size == 0 || (uint64_t)f->offset + (uint64_t)f->size * f->count > part ||
		    (field_is_int(f) && !int_size) ||
		    f->bit_offset + f->bit_size > f->size * 8 ||
		    memchr(f->name, '\0', sizeof(f->name)) == NULL ||
		    (i && f->part < l->fields[i - 1].part))
			return false;
	}
	return true;
}

/* The fields of one part: [*first, return value) */
static uint32_t part_fields(const struct lrx_map_layout *l, uint8_t part, uint32_t *first)
{
	uint32_t i = 0;
	while (i < l->n_fields && l->fields[i].part < part)
		i++;
	*first = i;
	while (i < l->n_fields && l->fields[i].part == part)
		i++;
	return i;
}

/* A part that is one unnamed field prints as a bare value ("key": 53) */
static bool part_scalar(const struct lrx_map_layout *l, uint32_t first, uint32_t end)
{
	return end == first + 1 && l->fields[first].name[0] == '\0';
}

/* Element e of an integer field, host order (as the program sees it) */
static void field_int(const struct lrx_map_field *f, const uint8_t *base, uint32_t e,
		      uint64_t *u, int64_t *s)
{
	uint64_t v = 0;
	memcpy(&v, base + f->offset + (size_t)e * f->size, f->size);
	unsigned bits = f->size * 8;
	if (f->bit_size) {
		v >>= f->bit_offset;
		bits = f->bit_size;
	}
	if (bits < 64)
		v &= (UINT64_C(1) << bits) - 1;
	*u = v;
	*s = bits < 64 && (v >> (bits - 1)) & 1 ? (int64_t)(v | ~((UINT64_C(1) << bits) - 1))
						: (int64_t)v;
}

/* A char array that holds text (a NUL, printable before it) prints as a
 * string, else as its numbers, as bpftool's is_str_array decides */
static bool field_is_text(const struct lrx_map_field *f, const uint8_t *base)
{
	const uint8_t *c = base + f->offset;
	for (uint32_t i = 0; i < f->count; i++) {
		if (c[i] == 0)
			return true;
		if (c[i] < 0x20 || c[i] > 0x7e)
			return false;
	}
	return false;
}

/* A char array's numbers: char is signed on x86 and BPF */
static int64_t char_at(const struct lrx_map_field *f, const uint8_t *base, uint32_t e)
{
	return (int8_t)base[f->offset + e];
}

static void field_text(const struct lrx_map_field *f, const uint8_t *base, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	if (f->kind == LRX_MAP_CHARS && field_is_text(f, base)) {
		snprintf(buf, len, "%s", (const char *)base + f->offset);
		return;
	}
	if (f->kind == LRX_MAP_BYTES) {
		lrx_map_hex(buf, len, base + f->offset, f->size * f->count);
		return;
	}
	for (uint32_t e = 0; e < f->count && at < len; e++) {
		uint64_t u = 0;
		int64_t s = f->kind == LRX_MAP_CHARS ? char_at(f, base, e) : 0;
		if (f->kind != LRX_MAP_CHARS)
			field_int(f, base, e, &u, &s);
		int w = f->kind != LRX_MAP_UINT
				? snprintf(buf + at, len - at, "%s%" PRId64,
					   e ? "," : (f->count > 1 ? "[" : ""), s)
				: snprintf(buf + at, len - at, "%s%" PRIu64,
					   e ? "," : (f->count > 1 ? "[" : ""), u);
		at += w > 0 ? (size_t)w : 0;
	}
	if (f->count > 1 && at + 1 < len)
		snprintf(buf + at, len - at, "]");
}

static void field_json(struct lrx_json *j, const char *key, const struct lrx_map_field *f,
		       const uint8_t *base)
{
	bool text = f->kind == LRX_MAP_CHARS && field_is_text(f, base);
	if (text || f->kind == LRX_MAP_BYTES) {
		size_t len = 3 * (size_t)f->size * f->count + 1;
		char *buf = malloc(len);
		if (!buf) {
			lrx_json_null(j, key);
			return;
		}
		if (text)
			snprintf(buf, len, "%s", (const char *)base + f->offset);
		else
			lrx_map_hex(buf, len, base + f->offset, f->size * f->count);
		lrx_json_string(j, key, buf);
		free(buf);
		return;
	}
	if (f->count > 1)
		lrx_json_array_begin(j, key);
	for (uint32_t e = 0; e < f->count; e++) {
		uint64_t u = 0;
		int64_t s = f->kind == LRX_MAP_CHARS ? char_at(f, base, e) : 0;
		if (f->kind != LRX_MAP_CHARS)
			field_int(f, base, e, &u, &s);
		const char *k = f->count > 1 ? NULL : key;
		if (f->kind == LRX_MAP_UINT)
			lrx_json_u64(j, k, u);
		else
			lrx_json_i64(j, k, s);
	}
	if (f->count > 1)
		lrx_json_array_end(j);
}

/* "key" or "value" of bpftool -j's "formatted": a bare value, an object
 * of the fields, or (no field) the bytes */
static void part_json(struct lrx_json *j, const char *key, const struct lrx_map_layout *l,
		      uint8_t part, const uint8_t *bytes, uint32_t size)
{
	uint32_t first, end = part_fields(l, part, &first);
	if (first == end) {
		char *hex = malloc(3 * (size_t)size + 1);
		if (hex)
			lrx_map_hex(hex, 3 * (size_t)size + 1, bytes, size);
		lrx_json_string(j, key, hex);
		free(hex);
	} else if (part_scalar(l, first, end)) {
		field_json(j, key, &l->fields[first], bytes);
	} else {
		lrx_json_object_begin(j, key);
		for (uint32_t i = first; i < end; i++)
			field_json(j, l->fields[i].name, &l->fields[i], bytes);
		lrx_json_object_end(j);
	}
}

/* ---- text ------------------------------------------------------------------- */

/* A field's column: its name ("key"/"value" for a bare one), right-aligned */
static const char *column_name(const struct lrx_map_field *f)
{
	return f->name[0] ? f->name : f->part == LRX_MAP_KEY ? "key" : "value";
}

static void text_columns(const struct lrx_map_layout *l, const uint8_t *k, const uint8_t *v,
			 FILE *out)
{
	fputs(" ", out);
	for (uint32_t i = 0; i < l->n_fields; i++) {
		const struct lrx_map_field *f = &l->fields[i];
		const char *name = column_name(f);
		int width = strlen(name) > 9 ? (int)strlen(name) : 9;
		char text[256];
		if (k)
			field_text(f, f->part == LRX_MAP_KEY ? k : v, text, sizeof(text));
		fprintf(out, " %*s", width, k ? text : name);
	}
	fputc('\n', out);
}

/* A key or value without a layout: hex, then (4 or 8 bytes) the integer */
static void text_bytes(FILE *out, const char *what, const uint8_t *b, uint32_t n)
{
	char hex[3 * 16 + 8];
	uint64_t v;
	lrx_map_hex(hex, sizeof(hex), b, n > 16 ? 16 : n);
	fprintf(out, "%s %s%s", what, hex, n > 16 ? " ..." : "");
	if (lrx_map_int(b, n, &v))
		fprintf(out, " (%" PRIu64 ")", v);
}

/* At most this many entries of a map in the text summary (all in JSON). */
#define TEXT_MAP_ENTRIES 16

static void text_map(const struct lrx_report_map *m, FILE *out)
{
	size_t entry = (size_t)m->key_size + m->value_size;
	bool array = strstr(m->type, "array") != NULL;
	const struct lrx_map_layout *l = m->layout.n_fields ? &m->layout : NULL;
	uint32_t zero = 0, shown = 0, more = 0;
	for (uint32_t e = 0; array && e < m->n_entries; e++)
		zero += bytes_zero(m->data + e * entry + m->key_size, m->value_size);
	fprintf(out, "%s %s (lcore %u): %s, key %u B, value %u B, max_entries %u, %u entries",
		m->stage, m->name, m->lcore, m->type, m->key_size, m->value_size, m->max_entries,
		m->n_entries);
	if (array && zero)
		fprintf(out, " (%u zero, not shown)", zero);
	fputc('\n', out);
	if (l && m->n_entries > zero)
		text_columns(l, NULL, NULL, out);
	for (uint32_t e = 0; e < m->n_entries; e++) {
		const uint8_t *k = m->data + e * entry;
		if (array && bytes_zero(k + m->key_size, m->value_size))
			continue;
		if (shown == TEXT_MAP_ENTRIES) {
			more++;
			continue;
		}
		shown++;
		if (l) {
			text_columns(l, k, k + m->key_size, out);
			continue;
		}
		fputs("  ", out);
		text_bytes(out, "key", k, m->key_size);
		text_bytes(out, "  value", k + m->key_size, m->value_size);
		fputc('\n', out);
	}
	if (more)
		fprintf(out, "  ... %u more\n", more);
}

void lrx_summary_text_maps(const struct lrx_report *r, FILE *out)
{
	for (unsigned i = 0; i < r->n_maps; i++) {
		if (i == 0)
			fprintf(out, "\nmaps (as bpftool map dump; the JSON has every entry):\n");
		text_map(&r->maps[i], out);
	}
}

/* One part as "name=value ..." (a bare field: its value; no field: hex) */
static size_t part_line(const struct lrx_map_layout *l, uint8_t part, const uint8_t *bytes,
			uint32_t size, char *buf, size_t len)
{
	uint32_t first = 0, end = l ? part_fields(l, part, &first) : 0;
	size_t at = 0;
	buf[0] = '\0';
	if (first == end) {
		uint64_t n;
		lrx_map_hex(buf, len, bytes, size);
		at = strlen(buf);
		if (lrx_map_int(bytes, size, &n) && at < len)
			at += (size_t)snprintf(buf + at, len - at, " (%" PRIu64 ")", n);
		return at < len ? at : len - 1;
	}
	for (uint32_t i = first; i < end && at + 1 < len; i++) {
		char text[128];
		field_text(&l->fields[i], bytes, text, sizeof(text));
		int w = part_scalar(l, first, end)
				? snprintf(buf + at, len - at, "%s", text)
				: snprintf(buf + at, len - at, "%s%s=%s", i > first ? " " : "",
					   l->fields[i].name, text);
		at += w > 0 ? (size_t)w : 0;
	}
	return at < len ? at : len - 1;
}

void lrx_map_entry_line(const struct lrx_report_map *m, const uint8_t *key, char *buf,
			size_t len)
{
	const struct lrx_map_layout *l = m->layout.n_fields ? &m->layout : NULL;
	size_t at = part_line(l, LRX_MAP_KEY, key, m->key_size, buf, len);
	if (at + 3 < len) {
		memcpy(buf + at, ": ", 3);
		part_line(l, LRX_MAP_VALUE, key + m->key_size, m->value_size, buf + at + 2,
			  len - at - 2);
	}
}

/* ---- JSON ------------------------------------------------------------------- */

/* Names an entry has already: a value field of one of these names is in
 * "formatted" only */
static bool entry_name_taken(const char *name)
{
	static const char *const taken[] = {"key", "key_int", "value", "value_int", "formatted"};
	for (size_t i = 0; i < sizeof(taken) / sizeof(taken[0]); i++)
		if (strcmp(name, taken[i]) == 0)
			return true;
	return false;
}

static void json_entry(struct lrx_json *j, const struct lrx_report_map *m, const uint8_t *k,
		       char *hex, size_t hex_len)
{
	const uint8_t *v = k + m->key_size;
	const struct lrx_map_layout *l = &m->layout;
	uint64_t n;
	lrx_json_object_begin(j, NULL);
	lrx_map_hex(hex, hex_len, k, m->key_size);
	lrx_json_string(j, "key", hex);
	if (lrx_map_int(k, m->key_size, &n))
		lrx_json_u64(j, "key_int", n);
	lrx_map_hex(hex, hex_len, v, m->value_size);
	lrx_json_string(j, "value", hex);
	if (lrx_map_int(v, m->value_size, &n))
		lrx_json_u64(j, "value_int", n);
	if (l->n_fields) {
		/* as bpftool map dump -j: the decoded key and value */
		lrx_json_object_begin(j, "formatted");
		part_json(j, "key", l, LRX_MAP_KEY, k, m->key_size);
		part_json(j, "value", l, LRX_MAP_VALUE, v, m->value_size);
		lrx_json_object_end(j);
		/* and the value's named fields beside the bytes ("pkts": 10) */
		uint32_t first, end = part_fields(l, LRX_MAP_VALUE, &first);
		for (uint32_t i = first; i < end && !part_scalar(l, first, end); i++)
			if (!entry_name_taken(l->fields[i].name))
				field_json(j, l->fields[i].name, &l->fields[i], v);
	}
	lrx_json_object_end(j);
}

void lrx_summary_json_maps(const struct lrx_report *r, struct lrx_json *j)
{
	lrx_json_array_begin(j, "maps");
	for (unsigned i = 0; i < r->n_maps; i++) {
		const struct lrx_report_map *m = &r->maps[i];
		size_t entry = (size_t)m->key_size + m->value_size;
		lrx_json_object_begin(j, NULL);
		lrx_json_string(j, "stage", m->stage);
		lrx_json_u64(j, "lcore", m->lcore);
		lrx_json_string(j, "name", m->name);
		lrx_json_string(j, "type", m->type);
		lrx_json_u64(j, "key_size", m->key_size);
		lrx_json_u64(j, "value_size", m->value_size);
		lrx_json_u64(j, "max_entries", m->max_entries);
		lrx_json_array_begin(j, "entries");
		size_t hex_len = 3 * (size_t)RTE_MAX(m->key_size, m->value_size) + 1;
		char *hex = malloc(hex_len);
		for (uint32_t e = 0; hex && e < m->n_entries; e++)
			json_entry(j, m, m->data + e * entry, hex, hex_len);
		free(hex);
		lrx_json_array_end(j);
		lrx_json_object_end(j);
	}
	lrx_json_array_end(j);
}
