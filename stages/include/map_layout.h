/* SPDX-License-Identifier: BSD-3-Clause
 * The layout of a map's keys and values, so that the report prints them
 * as `bpftool map dump` prints a map with BTF: named fields with typed
 * values, beside the bytes. A stage's own tables declare theirs
 * (netfilter's chain counters, tc-ingress's filter counters); an eBPF
 * object's maps get theirs from the object's BTF, which the loader
 * flattens (nested members become dotted paths). Flat and pointer-free:
 * the BTF parse runs in a child process and sends it through a pipe.
 */
#ifndef LISTRX_MAP_LAYOUT_H
#define LISTRX_MAP_LAYOUT_H

#include <stdint.h>

#define LRX_MAP_FIELDS_MAX 24
#define LRX_MAP_FIELD_NAME_MAX 48

enum lrx_map_part { LRX_MAP_KEY, LRX_MAP_VALUE };

enum lrx_map_field_kind {
	LRX_MAP_UINT,  /* unsigned integer (bool, pointer, enum with no negative value) */
	LRX_MAP_INT,   /* signed integer */
	LRX_MAP_CHARS, /* char array: text up to the first NUL */
	LRX_MAP_BYTES, /* anything else (a float...): the bytes */
};

struct lrx_map_field {
	/* the member's path ("range.lo", "flows[1].pkts"); "" when the key
	 * or value is this one field (a plain integer) */
	char name[LRX_MAP_FIELD_NAME_MAX];
	uint32_t offset;  /* bytes from the start of the key or value */
	uint32_t size;    /* bytes of one element: 1, 2, 4 or 8 for integers */
	uint32_t count;   /* elements: 1, or an array's length */
	uint8_t part;     /* enum lrx_map_part */
	uint8_t kind;     /* enum lrx_map_field_kind */
	uint8_t bit_offset, bit_size; /* a bitfield in the element; bit_size 0: whole */
};

struct lrx_map_layout {
	uint32_t n_fields; /* the key's fields first, then the value's; 0: none */
	struct lrx_map_field fields[LRX_MAP_FIELDS_MAX];
};

#endif
