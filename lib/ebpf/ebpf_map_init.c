/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "ebpf_map_init.h"
#include "value.h"

const char lrx_bpf_map_init_valid[] =
	"empty, or NAME:KEY=VALUE,KEY=VALUE;NAME2:... with unsigned integers "
	"stored host-order in the map's key/value size (1, 2, 4 or 8 bytes), "
	"for a map the program declares (at most 256 entries)";

/* "NAME:" at the start of spec: the name terminated in place, the rest
 * after it (NULL: no name) */
static char *map_name_split(char *spec)
{
	char *colon = strchr(spec, ':');

	if (!colon || colon == spec || colon - spec >= LRX_XDP_MAP_NAME_MAX)
		return NULL;
	*colon = '\0';
	return colon + 1;
}

/* KEY=VALUE */
static int map_pair(char *kv, uint64_t *key, uint64_t *value)
{
	char *eq = strchr(kv, '=');

	if (!eq)
		return -EINVAL;
	*eq = '\0';
	return lrx_value_uint(kv, 0, UINT64_MAX, key) ?:
	       lrx_value_uint(eq + 1, 0, UINT64_MAX, value);
}

/* NAME:KEY=VALUE,KEY=VALUE (a list as the value layer's) into mi */
static int map_init_spec(char *spec, struct lrx_bpf_map_init *mi)
{
	char *list = map_name_split(spec), kv[64];
	int rc;

	if (!list)
		return -EINVAL;
	for (const char *p = list; (rc = lrx_value_list_next(&p, kv, sizeof(kv))) > 0;) {
		if (mi->n == LRX_BPF_MAP_INIT_MAX)
			return -EINVAL;
		snprintf(mi->e[mi->n].map, LRX_XDP_MAP_NAME_MAX, "%s", spec);
		if (map_pair(kv, &mi->e[mi->n].key, &mi->e[mi->n].value))
			return -EINVAL;
		mi->n++;
	}
	return rc < 0 || *list == '\0' ? -EINVAL : 0;
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

/* key and value into the map's sizes: 0, or -EINVAL naming the part */
static int map_bytes(const struct lrx_xdp_map *map, uint64_t k, uint64_t v,
		     uint8_t key[8], uint8_t value[8], char *err, size_t err_len)
{
	if (!store_uint(key, map->key_size, k)) {
		snprintf(err, err_len, "map '%s': key %" PRIu64 " does not fit its "
			 "%u-byte key (1, 2, 4 or 8 bytes, host order)", map->name,
			 k, map->key_size);
		return -EINVAL;
	}
	if (!store_uint(value, map->value_size, v)) {
		snprintf(err, err_len, "map '%s': value %" PRIu64 " does not fit "
			 "its %u-byte value (1, 2, 4 or 8 bytes, host order)",
			 map->name, v, map->value_size);
		return -EINVAL;
	}
	return 0;
}

int lrx_bpf_map_init_store(struct lrx_xdp_map *map,
			   const struct lrx_bpf_map_init *mi, unsigned i)
{
	uint8_t key[8] = {0}, value[8] = {0};
	char why[128];

	if (map_bytes(map, mi->e[i].key, mi->e[i].value, key, value, why,
		      sizeof(why)) != 0 ||
	    lrx_xdp_map_update(map, key, value, 0) != 0)
		return -EINVAL;
	return 0;
}

/* ---- writes while running ----------------------------------------------- */

/* bpftool map update's flags, in BPF_ANY/BPF_NOEXIST/BPF_EXIST order */
static const char *const map_write_flags[] = {"any", "noexist", "exist", NULL};

const char lrx_bpf_map_write_valid[] =
	"NAME:KEY=VALUE[,any|noexist|exist] (update) or NAME:KEY (delete), "
	"unsigned integers as map_init's";

int lrx_bpf_map_write_parse(const char *text, bool del,
			    struct lrx_bpf_map_write *out)
{
	char spec[160], item[64], *list;
	const char *p;
	unsigned n = 0, flag = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	out->del = del;
	if (!text || strlen(text) >= sizeof(spec))
		return -EINVAL;
	snprintf(spec, sizeof(spec), "%s", text);
	if (!(list = map_name_split(spec)) || *list == '\0')
		return -EINVAL;
	memcpy(out->map, spec, strlen(spec) + 1); /* < LRX_XDP_MAP_NAME_MAX */
	for (p = list; (rc = lrx_value_list_next(&p, item, sizeof(item))) > 0; n++) {
		if (n == 0)
			rc = del ? lrx_value_uint(item, 0, UINT64_MAX, &out->key)
				 : map_pair(item, &out->key, &out->value);
		else if (n == 1 && !del)
			rc = lrx_value_choice(item, map_write_flags, &flag);
		else
			rc = -EINVAL;
		if (rc < 0)
			return -EINVAL;
	}
	out->flags = flag;
	return rc < 0 ? -EINVAL : 0;
}

const char *lrx_bpf_map_write_flag_name(uint64_t flags)
{
	return flags < RTE_DIM(map_write_flags) - 1 ? map_write_flags[flags] : "?";
}

int lrx_bpf_map_write(struct lrx_xdp_map *map, const struct lrx_bpf_map_write *w,
		      char *err, size_t err_len)
{
	uint8_t key[8] = {0}, value[8] = {0};
	int rc = map_bytes(map, w->key, w->del ? 0 : w->value, key, value, err,
			   err_len);

	if (rc != 0)
		return rc;
	rc = w->del ? lrx_xdp_map_delete(map, key)
		    : lrx_xdp_map_update(map, key, value, w->flags);
	/* room, but only in elements deleted since the reader's last poll
	 * (ebpf_maps.c): wait for its next poll, as long as 100 ms */
	for (unsigned tries = 0; rc == -EAGAIN && tries < 1000; tries++) {
		rte_delay_us_sleep(100);
		rc = lrx_xdp_map_update(map, key, value, w->flags);
	}
	switch (rc) {
	case 0:
		break;
	case -EAGAIN:
		snprintf(err, err_len, "map '%s': no free element yet (%u "
			 "entries; the lcore has not polled since the deletes)",
			 map->name, map->count);
		break;
	case -E2BIG: /* htab_map_update_elem: full; array_map: the index */
		if (map->n_buckets)
			snprintf(err, err_len, "map '%s': full (%u entries, "
				 "max_entries %u)", map->name, map->count,
				 map->max_entries);
		else
			snprintf(err, err_len, "map '%s': index %" PRIu64
				 " is beyond max_entries %u", map->name, w->key,
				 map->max_entries);
		break;
	case -EEXIST:
		snprintf(err, err_len, "map '%s': key %" PRIu64 " exists (noexist%s)",
			 map->name, w->key, map->n_buckets ? "" : ": an array's "
			 "elements always exist");
		break;
	case -ENOENT:
		snprintf(err, err_len, "map '%s': no key %" PRIu64 "%s", map->name,
			 w->key, w->del ? "" : " (exist)");
		break;
	case -EINVAL: /* array_map_delete_elem */
		snprintf(err, err_len, "map '%s': an %s's elements cannot be "
			 "deleted", map->name, lrx_xdp_map_type_name(map));
		break;
	default:
		snprintf(err, err_len, "map '%s': %s", map->name, strerror(-rc));
	}
	return rc;
}

void lrx_bpf_prog_map_write(struct lrx_xdp_prog *prog, struct lrx_stage_map_write *w)
{
	struct lrx_bpf_map_write bw;
	struct lrx_xdp_map *map;
	char why[sizeof(w->err)];
	int rc;

	if (lrx_bpf_map_write_parse(w->params, w->del, &bw) != 0) {
		if (w->rc == 0)
			snprintf(w->err, sizeof(w->err), "not %s",
				 lrx_bpf_map_write_valid);
		w->rc = w->rc ?: -EINVAL;
		return;
	}
	if (prog == NULL || (map = lrx_xdp_prog_map(prog, bw.map)) == NULL)
		return;
	w->found++;
	rc = lrx_bpf_map_write(map, &bw, why, sizeof(why));
	if (rc == 0)
		w->written++;
	else if (w->rc == 0) {
		w->rc = rc;
		snprintf(w->err, sizeof(w->err), "%s", why);
	}
}
