/* SPDX-License-Identifier: BSD-3-Clause
 * Array and hash maps with the kernel's bpf_map_*_elem semantics
 * (kernel/bpf/arraymap.c, kernel/bpf/hashtab.c), sized at load time and
 * never allocating afterwards: the hash is open addressing with linear
 * probing over a power-of-two slot array of at least twice max_entries,
 * with tombstones for deleted entries, so lookups and updates in the hot
 * path only touch preallocated memory (as the kernel's preallocated
 * htab, BPF_F_NO_PREALLOC not supported). Keys are hashed with the CRC32
 * instruction (rte_hash_crc) and compared as one word when they fit in 8
 * bytes, the common case for XDP maps (ports, addresses, protocol ids).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>

#include "ebpf.h"

enum { SLOT_EMPTY = 0, SLOT_USED = 1, SLOT_DELETED = 2 };

static bool map_is_array(const struct lrx_xdp_map *map)
{
	return map->type == BPF_MAP_TYPE_ARRAY ||
	       map->type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

int lrx_xdp_map_create(struct lrx_xdp_map *map, const char *name,
		       uint32_t type, uint32_t key_size, uint32_t value_size,
		       uint32_t max_entries, int socket_id, char *err,
		       size_t err_len)
{
	bool array = type == BPF_MAP_TYPE_ARRAY ||
		     type == BPF_MAP_TYPE_PERCPU_ARRAY;
	bool hash = type == BPF_MAP_TYPE_HASH ||
		    type == BPF_MAP_TYPE_PERCPU_HASH;

	memset(map, 0, sizeof(*map));
	snprintf(map->name, sizeof(map->name), "%s", name);
	if (!array && !hash) {
		snprintf(err, err_len,
			 "map '%s' has type %u, which listrx does not provide "
			 "(supported: ARRAY, HASH, PERCPU_ARRAY, PERCPU_HASH)",
			 name, type);
		return -EINVAL;
	}
	if (key_size == 0 || value_size == 0 || max_entries == 0 ||
	    (array && key_size != 4) || key_size > 512 ||
	    value_size > 65536 || max_entries > (1u << 20)) {
		snprintf(err, err_len,
			 "map '%s': key_size %u, value_size %u, max_entries %u "
			 "not supported (array keys are 4 bytes; key <= 512, "
			 "value <= 65536, entries <= 1048576)",
			 name, key_size, value_size, max_entries);
		return -EINVAL;
	}
	map->type = type;
	map->key_size = key_size;
	map->value_size = value_size;
	map->max_entries = max_entries;
	map->value_stride = RTE_ALIGN_CEIL(value_size, 8);
	if (array) {
		map->values = rte_zmalloc_socket("xdp_map",
			(size_t)map->value_stride * max_entries,
			RTE_CACHE_LINE_SIZE, socket_id);
	} else {
		map->n_slots = rte_align32pow2(max_entries * 2);
		map->values = rte_zmalloc_socket("xdp_map",
			(size_t)map->value_stride * map->n_slots,
			RTE_CACHE_LINE_SIZE, socket_id);
		map->keys = rte_zmalloc_socket("xdp_map_keys",
			(size_t)key_size * map->n_slots, RTE_CACHE_LINE_SIZE,
			socket_id);
		map->slot_state = rte_zmalloc_socket("xdp_map_state",
			map->n_slots, RTE_CACHE_LINE_SIZE, socket_id);
	}
	if (map->values == NULL || (hash && (map->keys == NULL ||
					     map->slot_state == NULL))) {
		uint64_t slots = array ? max_entries : map->n_slots;
		uint64_t bytes = (uint64_t)map->value_stride * slots +
				 (hash ? ((uint64_t)key_size + 1) * slots : 0);

		lrx_xdp_map_destroy(map);
		/* what the program asked for, not a failing machine: the
		 * user's to change (exit 2) */
		snprintf(err, err_len,
			 "map '%s': %" PRIu64 " bytes (%" PRIu64 " MiB: %" PRIu64
			 " slots of %u-byte values%s) do not fit in EAL's memory "
			 "on socket %d: lower max_entries or value_size, or give "
			 "EAL more (-m, hugepages)", name, bytes, bytes >> 20,
			 slots, map->value_stride, hash ? " and their keys" : "",
			 socket_id);
		return -EINVAL;
	}
	return 0;
}

void lrx_xdp_map_destroy(struct lrx_xdp_map *map)
{
	rte_free(map->values);
	rte_free(map->keys);
	rte_free(map->slot_state);
	map->values = map->keys = map->slot_state = NULL;
	free(map->layout);
	map->layout = NULL;
}

/* Slot holding key, or where it would be inserted (*found false): the
 * first tombstone on the probe path, else the empty slot ending it.
 * Returns UINT32_MAX when the table has neither (full of tombstones). */
static uint32_t hash_probe(const struct lrx_xdp_map *map, const void *key,
			   bool *found)
{
	uint32_t mask = map->n_slots - 1;
	uint32_t ks = map->key_size;
	uint64_t word = 0;
	uint32_t slot, insert = UINT32_MAX;

	/* the hash reads whole words; a program's key is often a 2-byte
	 * field on its stack or in the frame: hash an aligned copy (key_size
	 * <= 512, checked at create; found by tests/fuzz/fuzz_pipeline) */
	if (ks <= sizeof(word)) {
		memcpy(&word, key, ks);
		slot = (uint32_t)rte_hash_crc_8byte(word, 0) & mask;
	} else {
		uint64_t aligned[512 / sizeof(uint64_t)];

		memcpy(aligned, key, ks);
		slot = rte_hash_crc(aligned, ks, 0) & mask;
	}
	*found = false;
	for (uint32_t probes = 0; probes < map->n_slots; probes++) {
		uint8_t state = map->slot_state[slot];
		const uint8_t *k = map->keys + (size_t)slot * ks;
		bool equal;

		if (state == SLOT_EMPTY)
			return insert != UINT32_MAX ? insert : slot;
		if (ks <= sizeof(word)) {
			uint64_t other = 0;

			memcpy(&other, k, ks);
			equal = other == word;
		} else {
			equal = memcmp(k, key, ks) == 0;
		}
		if (state == SLOT_USED && equal) {
			*found = true;
			return slot;
		}
		if (state == SLOT_DELETED && insert == UINT32_MAX)
			insert = slot;
		slot = (slot + 1) & mask;
	}
	return insert;
}

void *lrx_xdp_map_lookup(struct lrx_xdp_map *map, const void *key)
{
	bool found;
	uint32_t slot;

	if (map_is_array(map)) {
		uint32_t index;

		memcpy(&index, key, sizeof(index));
		if (index >= map->max_entries)
			return NULL;
		return map->values + (size_t)index * map->value_stride;
	}
	slot = hash_probe(map, key, &found);
	return found ? map->values + (size_t)slot * map->value_stride : NULL;
}

int lrx_xdp_map_update(struct lrx_xdp_map *map, const void *key,
		       const void *value, uint64_t flags)
{
	bool found;
	uint32_t slot;

	if (flags > BPF_EXIST)
		return -EINVAL;
	if (map_is_array(map)) {
		uint32_t index;

		memcpy(&index, key, sizeof(index));
		if (index >= map->max_entries)
			return -E2BIG;
		if (flags == BPF_NOEXIST) /* array elements always exist */
			return -EEXIST;
		memcpy(map->values + (size_t)index * map->value_stride, value,
		       map->value_size);
		return 0;
	}
	slot = hash_probe(map, key, &found);
	if (found && flags == BPF_NOEXIST)
		return -EEXIST;
	if (!found && flags == BPF_EXIST)
		return -ENOENT;
	if (!found) {
		if (map->count >= map->max_entries || slot == UINT32_MAX)
			return -E2BIG;
		memcpy(map->keys + (size_t)slot * map->key_size, key,
		       map->key_size);
		map->slot_state[slot] = SLOT_USED;
		map->count++;
	}
	memcpy(map->values + (size_t)slot * map->value_stride, value,
	       map->value_size);
	return 0;
}

int lrx_xdp_map_delete(struct lrx_xdp_map *map, const void *key)
{
	bool found;
	uint32_t slot;

	if (map_is_array(map))
		return -EINVAL; /* as array_map_delete_elem */
	slot = hash_probe(map, key, &found);
	if (!found)
		return -ENOENT;
	map->slot_state[slot] = SLOT_DELETED;
	memset(map->values + (size_t)slot * map->value_stride, 0,
	       map->value_stride);
	map->count--;
	return 0;
}

const char *lrx_xdp_map_type_name(const struct lrx_xdp_map *map)
{
	switch (map->type) {
	case BPF_MAP_TYPE_ARRAY: return "array";
	case BPF_MAP_TYPE_PERCPU_ARRAY: return "percpu_array";
	case BPF_MAP_TYPE_HASH: return "hash";
	case BPF_MAP_TYPE_PERCPU_HASH: return "percpu_hash";
	default: return "unknown";
	}
}

bool lrx_xdp_map_next(const struct lrx_xdp_map *map, uint32_t *cursor, void *key,
		      void *value)
{
	if (map_is_array(map)) {
		/* every index exists, as bpftool dumps an array */
		uint32_t index = *cursor;
		if (index >= map->max_entries)
			return false;
		memcpy(key, &index, sizeof(index));
		memcpy(value, map->values + (size_t)index * map->value_stride,
		       map->value_size);
		*cursor = index + 1;
		return true;
	}
	for (uint32_t slot = *cursor; slot < map->n_slots; slot++) {
		if (map->slot_state[slot] != SLOT_USED)
			continue;
		memcpy(key, map->keys + (size_t)slot * map->key_size, map->key_size);
		memcpy(value, map->values + (size_t)slot * map->value_stride,
		       map->value_size);
		*cursor = slot + 1;
		return true;
	}
	return false;
}
