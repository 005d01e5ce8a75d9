/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ebpf_map_init.h"
#include "value.h"

const char lrx_bpf_map_init_valid[] =
	"empty, or NAME:KEY=VALUE,KEY=VALUE;NAME2:... with unsigned integers "
	"stored host-order in the map's key/value size (1, 2, 4 or 8 bytes), "
	"for a map the program declares (at most 256 entries)";

/* NAME:KEY=VALUE,KEY=VALUE (a list as the value layer's) into mi */
static int map_init_spec(char *spec, struct lrx_bpf_map_init *mi)
{
	char *colon = strchr(spec, ':'), kv[64];
	int rc;

	if (!colon || colon == spec || colon - spec >= LRX_XDP_MAP_NAME_MAX)
		return -EINVAL;
	*colon = '\0';
	for (const char *p = colon + 1; (rc = lrx_value_list_next(&p, kv, sizeof(kv))) > 0;) {
		char *eq = strchr(kv, '=');
		if (mi->n == LRX_BPF_MAP_INIT_MAX || !eq)
			return -EINVAL;
		*eq = '\0';
		snprintf(mi->e[mi->n].map, LRX_XDP_MAP_NAME_MAX, "%s", spec);
		if (lrx_value_uint(kv, 0, UINT64_MAX, &mi->e[mi->n].key) ||
		    lrx_value_uint(eq + 1, 0, UINT64_MAX, &mi->e[mi->n].value))
			return -EINVAL;
		mi->n++;
	}
	return rc < 0 || colon[1] == '\0' ? -EINVAL : 0;
}

/* NAME:list;NAME2:list */
int lrx_bpf_map_init_parse(const char *text, void *out)
{
	struct lrx_bpf_map_init *mi = out;
	int rc = 0;

	mi->n = 0;
	while (*text != '\0' && rc == 0) {
		const size_t len = strcspn(text, ";");
		char *spec = strndup(text, len);
		rc = spec ? map_init_spec(spec, mi) : -ENOMEM;
		free(spec);
		text += len;
		if (*text == ';' && *++text == '\0')
			rc = -EINVAL; /* a trailing ';' */
	}
	return rc;
}

/* Stores v in n bytes, host order (as a C integer of that size). */
static bool store_uint(uint8_t *dst, uint32_t n, uint64_t v)
{
	switch (n) {
	case 1: { uint8_t x = (uint8_t)v; memcpy(dst, &x, 1); return v <= UINT8_MAX; }
	case 2: { uint16_t x = (uint16_t)v; memcpy(dst, &x, 2); return v <= UINT16_MAX; }
	case 4: { uint32_t x = (uint32_t)v; memcpy(dst, &x, 4); return v <= UINT32_MAX; }
	case 8: memcpy(dst, &v, 8); return true;
	default: return false;
	}
}

int lrx_bpf_map_init_store(struct lrx_xdp_map *map,
			   const struct lrx_bpf_map_init *mi, unsigned i)
{
	uint8_t key[8] = {0}, value[8] = {0};

	if (!store_uint(key, map->key_size, mi->e[i].key) ||
	    !store_uint(value, map->value_size, mi->e[i].value) ||
	    lrx_xdp_map_update(map, key, value, 0) != 0)
		return -EINVAL;
	return 0;
}
