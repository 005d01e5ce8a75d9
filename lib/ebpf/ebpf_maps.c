/* SPDX-License-Identifier: BSD-3-Clause
 * Array and hash maps with the kernel's bpf_map_*_elem semantics
 * (kernel/bpf/arraymap.c, kernel/bpf/hashtab.c), sized at load time and
 * never allocating afterwards. The hash is the kernel's htab layout: a
 * power-of-two array of buckets (at least max_entries, as htab_map_alloc)
 * whose elements are singly linked, from a pool allocated at create (as
 * the preallocated htab; BPF_F_NO_PREALLOC not supported). A delete
 * unlinks its element at once, so a lookup visits only the live entries
 * of its bucket however many keys came and went. Keys are hashed with the
 * CRC32 instruction (rte_hash_crc) and compared as one word when they fit
 * in 8 bytes, the common case for XDP maps (ports, addresses, protocol
 * ids).
 *
 * Concurrency (ebpf.h): lookups are lock-free; hash writers hold the map's
 * lock; an element is published by a release store of its bucket's head
 * after its key and value, unlinked by a release store of the link before
 * it, and freed to the tail of a FIFO with the DPDK rte_rcu_qsbr token
 * taken at the delete: the pool's head (the oldest delete) is reused once
 * the reading lcore acknowledged that token (its poll loop reports a
 * quiescent state after every poll). The pool holds twice max_entries, so
 * a writer waits for a poll only after more than max_entries deletes
 * within one.
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

static bool map_is_array(const struct lrx_xdp_map *map)
{
	return map->type == BPF_MAP_TYPE_ARRAY ||
	       map->type == BPF_MAP_TYPE_PERCPU_ARRAY;
}

/* A hash element: its head, the key (zero-padded to 8 bytes), the value. */
static inline uint32_t key_stride(uint32_t key_size)
{
	return RTE_ALIGN_CEIL(key_size, 8);
}

static inline struct lrx_xdp_map_elem *elem_at(const struct lrx_xdp_map *map,
					       uint32_t e)
{
	return (struct lrx_xdp_map_elem *)(map->elems + (size_t)e * map->elem_size);
}

static inline uint8_t *elem_key(struct lrx_xdp_map_elem *elem)
{
	return (uint8_t *)(elem + 1);
}

static inline uint8_t *elem_value(const struct lrx_xdp_map *map,
				  struct lrx_xdp_map_elem *elem)
{
	return elem_key(elem) + key_stride(map->key_size);
}

static int hash_alloc(struct lrx_xdp_map *map, int socket_id)
{
	map->n_buckets = rte_align32pow2(map->max_entries);
	map->n_elems = map->max_entries * 2;
	map->elem_size = (uint32_t)sizeof(struct lrx_xdp_map_elem) +
			 key_stride(map->key_size) + map->value_stride;
	map->buckets = rte_malloc_socket("xdp_map_buckets",
		(size_t)map->n_buckets * sizeof(*map->buckets),
		RTE_CACHE_LINE_SIZE, socket_id);
	map->elems = rte_zmalloc_socket("xdp_map_elems",
		(size_t)map->elem_size * map->n_elems, RTE_CACHE_LINE_SIZE,
		socket_id);
	map->free_ring = rte_malloc_socket("xdp_map_free",
		(size_t)map->n_elems * sizeof(*map->free_ring),
		RTE_CACHE_LINE_SIZE, socket_id);
	map->retired = rte_zmalloc_socket("xdp_map_retired",
		(size_t)map->n_elems * sizeof(*map->retired),
		RTE_CACHE_LINE_SIZE, socket_id);
	if (!map->buckets || !map->elems || !map->free_ring || !map->retired)
		return -ENOMEM;
	for (uint32_t b = 0; b < map->n_buckets; b++)
		map->buckets[b] = LRX_XDP_MAP_NIL;
	/* every element free, never deleted (token 0) */
	for (uint32_t e = 0; e < map->n_elems; e++)
		map->free_ring[e] = e;
	map->free_head = 0;
	map->free_n = map->n_elems;
	return 0;
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
	int rc;

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
	rte_spinlock_init(&map->lock);
	if (array) {
		map->values = rte_zmalloc_socket("xdp_map",
			(size_t)map->value_stride * max_entries,
			RTE_CACHE_LINE_SIZE, socket_id);
		rc = map->values ? 0 : -ENOMEM;
	} else {
		rc = hash_alloc(map, socket_id);
	}
	if (rc != 0) {
		uint64_t n = array ? max_entries : map->n_elems;
		uint64_t each = array ? map->value_stride :
			map->elem_size + sizeof(*map->free_ring) +
			sizeof(*map->retired) + sizeof(*map->buckets);
		uint64_t bytes = n * each;

		lrx_xdp_map_destroy(map);
		/* what the program asked for, not a failing machine: the
		 * user's to change (exit 2) */
		snprintf(err, err_len,
			 "map '%s': %" PRIu64 " bytes (%" PRIu64 " MiB: %" PRIu64
			 " %s of %" PRIu64 "%s) do not fit in EAL's memory on "
			 "socket %d: lower max_entries or value_size, or give "
			 "EAL more (-m, hugepages)", name, bytes, bytes >> 20, n,
			 array ? "slots" : "elements", each,
			 array ? "-byte values" : " bytes (key, value, links; "
			 "twice max_entries)", socket_id);
		return -EINVAL;
	}
	return 0;
}

void lrx_xdp_map_destroy(struct lrx_xdp_map *map)
{
	rte_free(map->values);
	rte_free(map->buckets);
	rte_free(map->elems);
	rte_free(map->free_ring);
	rte_free(map->retired);
	map->values = map->elems = NULL;
	map->buckets = map->free_ring = NULL;
	map->retired = NULL;
	free(map->layout);
	map->layout = NULL;
}

void lrx_xdp_map_set_qsbr(struct lrx_xdp_map *map, struct rte_rcu_qsbr *v)
{
	map->qsbr = v;
}

/* The key's bucket; *word holds a key of <= 8 bytes as one word. */
static inline uint32_t hash_bucket(const struct lrx_xdp_map *map,
				   const void *key, uint64_t *word)
{
	uint32_t ks = map->key_size, hash;

	/* the hash reads whole words; a program's key is often a 2-byte
	 * field on its stack or in the frame: hash an aligned copy (key_size
	 * <= 512, checked at create; found by tests/fuzz/fuzz_pipeline) */
	*word = 0;
	if (ks <= sizeof(*word)) {
		memcpy(word, key, ks);
		hash = (uint32_t)rte_hash_crc_8byte(*word, 0);
	} else {
		uint64_t aligned[512 / sizeof(uint64_t)];

		memcpy(aligned, key, ks);
		hash = rte_hash_crc(aligned, ks, 0);
	}
	return hash & (map->n_buckets - 1);
}

static inline bool elem_has_key(const struct lrx_xdp_map *map,
				struct lrx_xdp_map_elem *elem, const void *key,
				uint64_t word)
{
	uint64_t stored;

	if (map->key_size > sizeof(word))
		return memcmp(elem_key(elem), key, map->key_size) == 0;
	memcpy(&stored, elem_key(elem), sizeof(stored)); /* zero-padded */
	return stored == word;
}

static inline uint32_t link_load(const uint32_t *link)
{
	return __atomic_load_n(link, __ATOMIC_ACQUIRE);
}

/* A lookup's walk of the key's bucket: the element holding key
 * (LRX_XDP_MAP_NIL: none), counting the elements compared in *visits
 * when not NULL. An element's key is read only after the link to it
 * (acquire): a writer fills key and value before it links the element. */
static inline uint32_t hash_walk(const struct lrx_xdp_map *map,
				 const void *key, uint32_t *visits)
{
	uint64_t word;
	uint32_t e = link_load(&map->buckets[hash_bucket(map, key, &word)]);

	for (; e != LRX_XDP_MAP_NIL; e = link_load(&elem_at(map, e)->next)) {
		if (visits)
			(*visits)++;
		if (elem_has_key(map, elem_at(map, e), key, word))
			break;
	}
	return e;
}

void *lrx_xdp_map_lookup(struct lrx_xdp_map *map, const void *key)
{
	uint32_t e;

	if (map_is_array(map)) {
		uint32_t index;

		memcpy(&index, key, sizeof(index));
		if (index >= map->max_entries)
			return NULL;
		return map->values + (size_t)index * map->value_stride;
	}
	e = hash_walk(map, key, NULL);
	return e != LRX_XDP_MAP_NIL ? elem_value(map, elem_at(map, e)) : NULL;
}

uint32_t lrx_xdp_map_lookup_visits(const struct lrx_xdp_map *map, const void *key)
{
	uint32_t visits = 0;

	if (!map_is_array(map))
		hash_walk(map, key, &visits);
	return visits;
}

/* Writers, under the lock: the link that holds key's element or, when
 * no element holds key, the NIL ending its bucket; *bucket its bucket. */
static uint32_t *hash_find_link(struct lrx_xdp_map *map, const void *key,
				uint32_t *bucket)
{
	uint64_t word;
	uint32_t *link;

	*bucket = hash_bucket(map, key, &word);
	link = &map->buckets[*bucket];
	while (*link != LRX_XDP_MAP_NIL &&
	       !elem_has_key(map, elem_at(map, *link), key, word))
		link = &elem_at(map, *link)->next;
	return link;
}

/* The oldest free element (the pool's FIFO head), once no reader can
 * hold it: every reader acknowledged the token of its delete
 * (rte_rcu_qsbr_check), or the writer is the reader itself (own).
 * LRX_XDP_MAP_NIL: not yet. */
static uint32_t free_take(struct lrx_xdp_map *map, bool own)
{
	uint32_t e;

	if (map->free_n == 0)
		return LRX_XDP_MAP_NIL;
	e = map->free_ring[map->free_head];
	if (!own && map->qsbr && map->retired[e] != 0 &&
	    rte_rcu_qsbr_check(map->qsbr, map->retired[e], false) != 1)
		return LRX_XDP_MAP_NIL;
	map->free_head = map->free_head + 1 == map->n_elems ? 0 : map->free_head + 1;
	map->free_n--;
	return e;
}

/* To the FIFO's tail with the token of its delete: tokens grow, so the
 * head is always the oldest. */
static void free_put(struct lrx_xdp_map *map, uint32_t e, uint64_t token)
{
	uint32_t tail = map->free_head + map->free_n;

	if (tail >= map->n_elems)
		tail -= map->n_elems;
	map->free_ring[tail] = e;
	map->retired[e] = token;
	map->free_n++;
}

/* htab_map_update_elem's checks and insert, under the map's lock */
static int hash_update_locked(struct lrx_xdp_map *map, const void *key,
			      const void *value, uint64_t flags, bool own)
{
	uint32_t bucket, e;
	uint32_t *link = hash_find_link(map, key, &bucket);
	struct lrx_xdp_map_elem *elem;

	if (*link != LRX_XDP_MAP_NIL && flags == BPF_NOEXIST)
		return -EEXIST;
	if (*link == LRX_XDP_MAP_NIL && flags == BPF_EXIST)
		return -ENOENT;
	if (*link != LRX_XDP_MAP_NIL) { /* in place (see ebpf.h) */
		memcpy(elem_value(map, elem_at(map, *link)), value,
		       map->value_size);
		return 0;
	}
	if (map->count >= map->max_entries)
		return -E2BIG;
	e = free_take(map, own);
	if (e == LRX_XDP_MAP_NIL)
		return -EAGAIN;
	elem = elem_at(map, e);
	memset(elem_key(elem), 0, key_stride(map->key_size));
	memcpy(elem_key(elem), key, map->key_size);
	memcpy(elem_value(map, elem), value, map->value_size);
	__atomic_store_n(&elem->next, map->buckets[bucket], __ATOMIC_RELAXED);
	elem->linked = 1;
	/* publish: a reader that reaches the element sees its key and value */
	__atomic_store_n(&map->buckets[bucket], e, __ATOMIC_RELEASE);
	map->count++;
	return 0;
}

static int map_update(struct lrx_xdp_map *map, const void *key,
		      const void *value, uint64_t flags, bool own)
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
	rc = hash_update_locked(map, key, value, flags, own);
	rte_spinlock_unlock(&map->lock);
	return rc;
}

int lrx_xdp_map_update(struct lrx_xdp_map *map, const void *key,
		       const void *value, uint64_t flags)
{
	return map_update(map, key, value, flags, false);
}

int lrx_xdp_map_update_from_prog(struct lrx_xdp_map *map, const void *key,
				 const void *value, uint64_t flags)
{
	return map_update(map, key, value, flags, true);
}

int lrx_xdp_map_delete(struct lrx_xdp_map *map, const void *key)
{
	uint32_t bucket, e;
	uint32_t *link;

	if (map_is_array(map))
		return -EINVAL; /* as array_map_delete_elem */
	rte_spinlock_lock(&map->lock);
	link = hash_find_link(map, key, &bucket);
	e = *link;
	if (e != LRX_XDP_MAP_NIL) {
		struct lrx_xdp_map_elem *elem = elem_at(map, e);

		/* unlinked as hlist_nulls_del_rcu: the element keeps its key,
		 * value and next for the readers on it; the token's increment
		 * (a release) orders this store before it */
		__atomic_store_n(link, elem->next, __ATOMIC_RELEASE);
		elem->linked = 0;
		free_put(map, e, map->qsbr ? rte_rcu_qsbr_start(map->qsbr) : 0);
		map->count--;
	}
	rte_spinlock_unlock(&map->lock);
	return e != LRX_XDP_MAP_NIL ? 0 : -ENOENT;
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
	 * writer reuses an element (the lock, not a grace period, keeps the
	 * key whole); the lock is the map's state, not its contents */
	rte_spinlock_t *lock = (rte_spinlock_t *)(uintptr_t)&map->lock;
	bool found = false;

	rte_spinlock_lock(lock);
	for (uint32_t e = *cursor; e < map->n_elems && !found; e++) {
		struct lrx_xdp_map_elem *elem = elem_at(map, e);

		if (!elem->linked)
			continue;
		memcpy(key, elem_key(elem), map->key_size);
		memcpy(value, elem_value(map, elem), map->value_size);
		*cursor = e + 1;
		found = true;
	}
	rte_spinlock_unlock(lock);
	return found;
}
