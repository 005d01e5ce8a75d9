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
 *
 * Concurrency (ebpf.h): lookups are lock-free; hash writers hold the map's
 * lock; a slot is published by a release store of its state after its key
 * and value, and a deleted slot (a tombstone) becomes reusable only once
 * the reading lcore acknowledged the DPDK rte_rcu_qsbr token taken at the
 * delete (its poll loop reports a quiescent state after every poll).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/bpf.h>
#include <rte_hash_crc.h>
#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

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
		map->retired = rte_zmalloc_socket("xdp_map_retired",
			(size_t)map->n_slots * sizeof(*map->retired),
			RTE_CACHE_LINE_SIZE, socket_id);
	}
	rte_spinlock_init(&map->lock);
	if (map->values == NULL || (hash && (map->keys == NULL ||
					     map->slot_state == NULL ||
					     map->retired == NULL))) {
		uint64_t slots = array ? max_entries : map->n_slots;
		uint64_t bytes = (uint64_t)map->value_stride * slots +
				 (hash ? ((uint64_t)key_size + 9) * slots : 0);

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
	rte_free(map->retired);
	map->values = map->keys = map->slot_state = NULL;
	map->retired = NULL;
	free(map->layout);
	map->layout = NULL;
}

void lrx_xdp_map_set_qsbr(struct lrx_xdp_map *map, struct rte_rcu_qsbr *v)
{
	map->qsbr = v;
}

static inline uint8_t slot_load(const struct lrx_xdp_map *map, uint32_t slot)
{
	return __atomic_load_n(&map->slot_state[slot], __ATOMIC_ACQUIRE);
}

/* A tombstone may take a new key once no reader can still hold it: every
 * reader acknowledged the token of its delete (rte_rcu_qsbr_check). */
static bool slot_reusable(const struct lrx_xdp_map *map, uint32_t slot)
{
	return map->qsbr == NULL ||
	       rte_rcu_qsbr_check(map->qsbr, map->retired[slot], false) == 1;
}

/* The key's first slot; *word holds a key of <= 8 bytes as one word. */
static uint32_t hash_home(const struct lrx_xdp_map *map, const void *key,
			  uint64_t *word)
{
	uint32_t ks = map->key_size;

	/* the hash reads whole words; a program's key is often a 2-byte
	 * field on its stack or in the frame: hash an aligned copy (key_size
	 * <= 512, checked at create; found by tests/fuzz/fuzz_pipeline) */
	*word = 0;
	if (ks <= sizeof(*word)) {
		memcpy(word, key, ks);
		return (uint32_t)rte_hash_crc_8byte(*word, 0);
	}
	uint64_t aligned[512 / sizeof(uint64_t)];

	memcpy(aligned, key, ks);
	return rte_hash_crc(aligned, ks, 0);
}

static bool slot_has_key(const struct lrx_xdp_map *map, uint32_t slot,
			 const void *key, uint64_t word)
{
	const uint8_t *k = map->keys + (size_t)slot * map->key_size;
	uint64_t other = 0;

	if (map->key_size > sizeof(word))
		return memcmp(k, key, map->key_size) == 0;
	memcpy(&other, k, map->key_size);
	return other == word;
}

/* The slot holding key (UINT32_MAX: none). With insert (writers, under
 * the lock) also where key would go: the first reusable tombstone on the
 * probe path, else the empty slot ending it (UINT32_MAX: neither, the
 * table is full of entries and young tombstones). A slot's key is read
 * only after its state said USED (acquire): a writer fills key and value
 * before it publishes the state. */
static uint32_t hash_probe(const struct lrx_xdp_map *map, const void *key,
			   uint32_t *insert)
{
	const uint32_t mask = map->n_slots - 1;
	uint64_t word;
	uint32_t slot = hash_home(map, key, &word) & mask;

	for (uint32_t probes = 0; probes < map->n_slots; probes++) {
		uint8_t state = slot_load(map, slot);

		if (state == SLOT_EMPTY) {
			if (insert && *insert == UINT32_MAX)
				*insert = slot;
			return UINT32_MAX;
		}
		if (state == SLOT_USED && slot_has_key(map, slot, key, word))
			return slot;
		if (state == SLOT_DELETED && insert && *insert == UINT32_MAX &&
		    slot_reusable(map, slot))
			*insert = slot;
		slot = (slot + 1) & mask;
	}
	return UINT32_MAX;
}

void *lrx_xdp_map_lookup(struct lrx_xdp_map *map, const void *key)
{
	uint32_t slot;

	if (map_is_array(map)) {
		uint32_t index;

		memcpy(&index, key, sizeof(index));
		if (index >= map->max_entries)
			return NULL;
		return map->values + (size_t)index * map->value_stride;
	}
	slot = hash_probe(map, key, NULL);
	return slot != UINT32_MAX ? map->values + (size_t)slot * map->value_stride
				  : NULL;
}

/* htab_map_update_elem's checks and insert, under the map's lock */
static int hash_update_locked(struct lrx_xdp_map *map, const void *key,
			      const void *value, uint64_t flags)
{
	uint32_t insert = UINT32_MAX;
	uint32_t slot = hash_probe(map, key, &insert);

	if (slot != UINT32_MAX && flags == BPF_NOEXIST)
		return -EEXIST;
	if (slot == UINT32_MAX && flags == BPF_EXIST)
		return -ENOENT;
	if (slot != UINT32_MAX) { /* in place (see ebpf.h) */
		memcpy(map->values + (size_t)slot * map->value_stride, value,
		       map->value_size);
		return 0;
	}
	if (map->count >= map->max_entries || insert == UINT32_MAX)
		return -E2BIG;
	memcpy(map->keys + (size_t)insert * map->key_size, key, map->key_size);
	memcpy(map->values + (size_t)insert * map->value_stride, value,
	       map->value_size);
	/* publish: a reader that sees USED sees the key and value */
	__atomic_store_n(&map->slot_state[insert], SLOT_USED, __ATOMIC_RELEASE);
	map->count++;
	return 0;
}

int lrx_xdp_map_update(struct lrx_xdp_map *map, const void *key,
		       const void *value, uint64_t flags)
{
	int rc;

	if (flags > BPF_EXIST)
		return -EINVAL;
	if (map_is_array(map)) {
		uint32_t index;

		memcpy(&index, key, sizeof(index));
		if (index >= map->max_entries)
			return -E2BIG;
		if (flags == BPF_NOEXIST) /* array elements always exist */
			return -EEXIST;
		/* in place, as array_map_update_elem: not atomic */
		memcpy(map->values + (size_t)index * map->value_stride, value,
		       map->value_size);
		return 0;
	}
	rte_spinlock_lock(&map->lock);
	rc = hash_update_locked(map, key, value, flags);
	rte_spinlock_unlock(&map->lock);
	return rc;
}

int lrx_xdp_map_delete(struct lrx_xdp_map *map, const void *key)
{
	uint32_t slot;

	if (map_is_array(map))
		return -EINVAL; /* as array_map_delete_elem */
	rte_spinlock_lock(&map->lock);
	slot = hash_probe(map, key, NULL);
	if (slot != UINT32_MAX) {
		/* the key and value stay as they were for the readers that
		 * hold them; the token's increment (a release) orders the
		 * state's store before it */
		__atomic_store_n(&map->slot_state[slot], SLOT_DELETED,
				 __ATOMIC_RELAXED);
		map->retired[slot] = map->qsbr ? rte_rcu_qsbr_start(map->qsbr) : 0;
		map->count--;
	}
	rte_spinlock_unlock(&map->lock);
	return slot != UINT32_MAX ? 0 : -ENOENT;
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
	/* under the writers' lock: another thread's dump may run while a
	 * writer reuses a slot (the lock, not a grace period, keeps the
	 * key whole); the lock is the map's state, not its contents */
	rte_spinlock_t *lock = (rte_spinlock_t *)(uintptr_t)&map->lock;
	bool found = false;

	rte_spinlock_lock(lock);
	for (uint32_t slot = *cursor; slot < map->n_slots && !found; slot++) {
		if (slot_load(map, slot) != SLOT_USED)
			continue;
		memcpy(key, map->keys + (size_t)slot * map->key_size, map->key_size);
		memcpy(value, map->values + (size_t)slot * map->value_stride,
		       map->value_size);
		*cursor = slot + 1;
		found = true;
	}
	rte_spinlock_unlock(lock);
	return found;
}
