/* SPDX-License-Identifier: BSD-3-Clause
 * map_init: initial entries of an eBPF object's maps, filled from outside
 * as a control plane does with bpf_map_update_elem (`bpftool map
 * update`). One syntax for every stage that loads objects (xdp,
 * tc-ingress): NAME:KEY=VALUE,KEY=VALUE;NAME2:KEY=VALUE, unsigned
 * integers stored host-order in the map's key/value size.
 */
#ifndef LISTRX_EBPF_MAP_INIT_H
#define LISTRX_EBPF_MAP_INIT_H

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

#endif
