/* SPDX-License-Identifier: BSD-3-Clause
 * A map's key and value types, from the object's BTF, flattened into the
 * report's field list (map_layout.h), so that its entries print as
 * `bpftool map dump` prints them (bpftool's btf_dumper.c walks the same
 * types): integers and enums as numbers, char arrays as text, other
 * arrays element by element, struct and union members by name (nested
 * ones as dotted paths), bitfields by their bits, pointers as numbers,
 * anything else (floats) as bytes. Runs in the loader's libbpf child.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>
#include <linux/btf.h>

#include "ebpf.h"

/* nesting deeper than this is taken as malformed BTF (a type that
 * contains itself); more types visited than this (arrays of empty
 * structs, which add no field) as a type too big to print */
#define BTF_DEPTH_MAX 16
#define BTF_VISITS_MAX 4096

struct btf_flat {
	const struct btf *btf;
	struct lrx_map_layout *out;
	uint8_t part;
	uint32_t part_size; /* bytes of the key or value */
	unsigned visits;
};

static int flat_add(struct btf_flat *f, const char *name, uint32_t offset, uint32_t size,
		    uint32_t count, uint8_t kind)
{
	if (f->out->n_fields == LRX_MAP_FIELDS_MAX)
		return -E2BIG;
	if (size == 0 || count == 0 || (uint64_t)offset + (uint64_t)size * count > f->part_size)
		return -EINVAL;
	struct lrx_map_field *x = &f->out->fields[f->out->n_fields++];
	*x = (struct lrx_map_field){.offset = offset, .size = size, .count = count,
				    .part = f->part, .kind = kind};
	snprintf(x->name, sizeof(x->name), "%s", name);
	return 0;
}

static bool plain_int_size(uint32_t size)
{
	return size == 1 || size == 2 || size == 4 || size == 8;
}

/* An integer or enum that is whole bytes of a plain size: its kind, or
 * -1 for anything else. */
static int scalar_kind(const struct btf_type *t)
{
	if (btf_is_int(t)) {
		if (btf_int_offset(t) || btf_int_bits(t) != t->size * 8 || !plain_int_size(t->size))
			return -1;
		return (btf_int_encoding(t) & BTF_INT_SIGNED) ? LRX_MAP_INT : LRX_MAP_UINT;
	}
	if (btf_is_any_enum(t) && plain_int_size(t->size))
		return btf_kflag(t) ? LRX_MAP_INT : LRX_MAP_UINT; /* kflag: signed enum */
	return -1;
}

static bool is_char(const struct btf *btf, const struct btf_type *t)
{
	return btf_is_int(t) && t->size == 1 &&
	       ((btf_int_encoding(t) & BTF_INT_CHAR) ||
		strcmp(btf__name_by_offset(btf, t->name_off), "char") == 0);
}

/* A bitfield of bits bits at bit bit_off of the part: read as the
 * smallest little-endian integer around it that the part holds. */
static int flat_bitfield(struct btf_flat *f, const char *name, uint32_t bit_off, uint32_t bits,
			 bool is_signed)
{
	uint32_t start = bit_off / 8, size = 1;
	while (size < 8 && (bit_off - start * 8) + bits > size * 8)
		size *= 2;
	if (bits > 64 || (bit_off - start * 8) + bits > size * 8)
		return -EINVAL;
	if (start + size > f->part_size) /* move the window back inside */
		start = f->part_size >= size ? f->part_size - size : 0;
	uint32_t shift = bit_off - start * 8;
	if (shift + bits > size * 8)
		return -EINVAL;
	int rc = flat_add(f, name, start, size, 1, is_signed ? LRX_MAP_INT : LRX_MAP_UINT);
	if (rc == 0) {
		f->out->fields[f->out->n_fields - 1].bit_offset = (uint8_t)shift;
		f->out->fields[f->out->n_fields - 1].bit_size = (uint8_t)bits;
	}
	return rc;
}

static void member_name(char *buf, size_t len, const char *prefix, const char *member)
{
	if (!*member)
		snprintf(buf, len, "%s", prefix); /* an anonymous struct or union */
	else if (!*prefix)
		snprintf(buf, len, "%s", member);
	else
		snprintf(buf, len, "%s.%s", prefix, member);
}

static int flat_type(struct btf_flat *f, uint32_t type_id, const char *name, uint32_t byte_off,
		     unsigned depth);

static int flat_array(struct btf_flat *f, const struct btf_type *t, const char *name,
		      uint32_t byte_off, unsigned depth)
{
	const struct btf_array *a = btf_array(t);
	int eid = btf__resolve_type(f->btf, a->type);
	long long esize = eid < 0 ? -1 : btf__resolve_size(f->btf, eid);
	if (eid < 0 || esize <= 0)
		return -EINVAL;
	const struct btf_type *e = btf__type_by_id(f->btf, eid);
	int kind = scalar_kind(e);
	if (kind >= 0) /* one field of n integers, or text */
		return flat_add(f, name, byte_off, (uint32_t)esize, a->nelems,
				is_char(f->btf, e) ? LRX_MAP_CHARS : (uint8_t)kind);
	if (a->nelems > LRX_MAP_FIELDS_MAX)
		return -E2BIG;
	for (uint32_t i = 0; i < a->nelems; i++) {
		char el[LRX_MAP_FIELD_NAME_MAX];
		snprintf(el, sizeof(el), "%s[%u]", name, i);
		int rc = flat_type(f, a->type, el, byte_off + i * (uint32_t)esize, depth + 1);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int flat_members(struct btf_flat *f, const struct btf_type *t, const char *name,
			uint32_t byte_off, unsigned depth)
{
	const struct btf_member *m = btf_members(t);
	for (uint32_t i = 0; i < btf_vlen(t); i++, m++) {
		char child[LRX_MAP_FIELD_NAME_MAX];
		member_name(child, sizeof(child), name, btf__name_by_offset(f->btf, m->name_off));
		uint32_t bit_off = btf_member_bit_offset(t, i);
		uint32_t bits = btf_member_bitfield_size(t, i);
		int rc;
		if (bits) {
			int id = btf__resolve_type(f->btf, m->type);
			const struct btf_type *mt = id < 0 ? NULL : btf__type_by_id(f->btf, id);
			if (!mt || !(btf_is_int(mt) || btf_is_any_enum(mt)))
				return -EINVAL;
			bool is_signed = btf_is_int(mt) ? (btf_int_encoding(mt) & BTF_INT_SIGNED)
							: btf_kflag(mt);
			rc = flat_bitfield(f, child, byte_off * 8 + bit_off, bits, is_signed);
		} else {
			rc = bit_off % 8 ? -EINVAL
					 : flat_type(f, m->type, child, byte_off + bit_off / 8, depth + 1);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int flat_type(struct btf_flat *f, uint32_t type_id, const char *name, uint32_t byte_off,
		     unsigned depth)
{
	int id = btf__resolve_type(f->btf, type_id); /* past typedefs, const, volatile */
	const struct btf_type *t = id < 0 ? NULL : btf__type_by_id(f->btf, id);
	if (!t || depth > BTF_DEPTH_MAX)
		return -EINVAL;
	if (++f->visits > BTF_VISITS_MAX)
		return -E2BIG;
	int kind = scalar_kind(t);
	if (kind >= 0)
		return flat_add(f, name, byte_off, t->size, 1, (uint8_t)kind);
	if (btf_is_int(t)) /* a bitfield type of its own (btf_int_bits) */
		return t->size <= 8 && btf_int_bits(t) + btf_int_offset(t) <= t->size * 8
			       ? flat_bitfield(f, name, byte_off * 8 + btf_int_offset(t),
					       btf_int_bits(t),
					       btf_int_encoding(t) & BTF_INT_SIGNED)
			       : flat_add(f, name, byte_off, t->size, 1, LRX_MAP_BYTES);
	if (btf_is_ptr(t))
		return flat_add(f, name, byte_off, 8, 1, LRX_MAP_UINT);
	if (btf_is_array(t))
		return flat_array(f, t, name, byte_off, depth);
	if (btf_is_composite(t))
		return flat_members(f, t, name, byte_off, depth);
	long long size = btf__resolve_size(f->btf, id);
	if (size <= 0)
		return -EINVAL;
	return flat_add(f, name, byte_off, (uint32_t)size, 1, LRX_MAP_BYTES);
}

int lrx_btf_map_layout(const struct btf *btf, uint32_t key_type, uint32_t value_type,
		       uint32_t key_size, uint32_t value_size, struct lrx_map_layout *out)
{
	memset(out, 0, sizeof(*out));
	if (btf == NULL)
		return -ENOENT;
	struct btf_flat f = {.btf = btf, .out = out, .part = LRX_MAP_KEY, .part_size = key_size};
	int rc = key_type ? flat_type(&f, key_type, "", 0, 0) : 0;
	f.part = LRX_MAP_VALUE;
	f.part_size = value_size;
	if (rc == 0 && value_type)
		rc = flat_type(&f, value_type, "", 0, 0);
	if (rc < 0)
		memset(out, 0, sizeof(*out));
	return rc;
}
