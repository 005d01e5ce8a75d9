/* SPDX-License-Identifier: BSD-3-Clause
 * map_init: initial entries of an eBPF object's maps, filled from outside
 * as a control plane does with bpf_map_update_elem (`bpftool map
 * update`). One syntax for every stage that loads objects (xdp,
 * tc-ingress): NAME:KEY=VALUE,KEY=VALUE;NAME2:KEY=VALUE, unsigned
 * integers stored host-order in the map's key/value size.
 */
#ifndef LISTRX_EBPF_MAP_INIT_H
#define LISTRX_EBPF_MAP_INIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ebpf.h"

#define LRX_BPF_MAP_INIT_MAX 256

struct lrx_bpf_map_init {
	unsigned n;
	struct {
		char map[LRX_XDP_MAP_NAME_MAX];
		uint64_t key, value;
	} e[LRX_BPF_MAP_INIT_MAX];
};

/* What a map_init value may be (for messages and --help). */
extern const char lrx_bpf_map_init_valid[];

/* The key's text into *out (a struct lrx_bpf_map_init): 0 or -EINVAL
 * (a value key's CUSTOM parser). */
int lrx_bpf_map_init_parse(const char *text, void *out);

/* Entry i of mi into map (bpf_map_update_elem, BPF_ANY): 0, or -EINVAL
 * when the key or value does not fit the map's sizes (1, 2, 4 or 8
 * bytes) or the map refuses it (a full hash map, an index beyond an
 * array). */
int lrx_bpf_map_init_store(struct lrx_xdp_map *map,
			   const struct lrx_bpf_map_init *mi, unsigned i);

/* One element written while the program runs, as `bpftool map update`
 * and `bpftool map delete` (telemetry's map_update/map_delete, docs/xdp.md):
 * the key and value in map_init's syntax, bpftool's flags. */
struct lrx_bpf_map_write {
	char map[LRX_XDP_MAP_NAME_MAX];
	uint64_t key, value;
	uint64_t flags;  /* BPF_ANY / BPF_NOEXIST / BPF_EXIST */
	bool del;
};

extern const char lrx_bpf_map_write_valid[];

/* NAME:KEY=VALUE[,any|noexist|exist] (del: NAME:KEY) into out: 0 or
 * -EINVAL. */
int lrx_bpf_map_write_parse(const char *text, bool del,
			    struct lrx_bpf_map_write *out);
/* "any", "noexist", "exist" */
const char *lrx_bpf_map_write_flag_name(uint64_t flags);

/* w into map with bpf_map_update_elem / bpf_map_delete_elem's result: 0,
 * -EINVAL (the key or value does not fit the map's sizes; an array's
 * delete), -E2BIG (a full hash map, an index beyond an array), -EEXIST
 * (noexist, the key exists), -ENOENT (exist or delete, it does not);
 * err says which, naming the map. Safe against the program's lookups on
 * another thread (ebpf.h). */
int lrx_bpf_map_write(struct lrx_xdp_map *map, const struct lrx_bpf_map_write *w,
		      char *err, size_t err_len);

/* A stage's map_write (stage.h) over one program's maps: w->params
 * parsed, written into the program's map of that name if it has one
 * (prog NULL: none), counted in w. */
void lrx_bpf_prog_map_write(struct lrx_xdp_prog *prog, struct lrx_stage_map_write *w);

#endif
