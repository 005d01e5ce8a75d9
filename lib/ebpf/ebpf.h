/* SPDX-License-Identifier: BSD-3-Clause
 * The eBPF loader the xdp and tc-ingress stages share (docs/xdp.md): real
 * eBPF objects run by DPDK rte_bpf (interpreter or x86 JIT), with the
 * kernel's `struct xdp_md` and `struct __sk_buff` contexts, array/hash maps
 * and a few helpers supplied by listrx, so that an unmodified kernel XDP or
 * cls_bpf object runs here and in the kernel alike.
 *
 * How an eBPF program sees a frame: rte_bpf verifies memory accesses only
 * against the static size of the program's argument (it has no notion of
 * data/data_end), so the argument is a window that starts with a context
 * header (LRX_XDP_MD_SIZE bytes for XDP) written into the mbuf headroom
 * just before the frame and continues over the frame: `ctx->data` is
 * rewritten at load time into `ctx + LRX_XDP_MD_SIZE` (a pointer the
 * verifier can bound), `ctx->data_end` into a 64-bit load of the header's
 * data_end. The per-packet check that the mbuf really has that window
 * (headroom >= the header, buffer after data >= window) keeps what the
 * verifier allowed inside the mbuf's own buffer.
 */
#ifndef LISTRX_EBPF_H
#define LISTRX_EBPF_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf_dyn.h>
#include <rte_mbuf_ptype.h>
#include <rte_spinlock.h>

#include "stage.h"

/* The kernel's enum xdp_action values (include/uapi/linux/bpf.h). */
enum lrx_xdp_action {
	LRX_XDP_ABORTED = 0,
	LRX_XDP_DROP = 1,
	LRX_XDP_PASS = 2,
	LRX_XDP_TX = 3,
	LRX_XDP_REDIRECT = 4,
};

/* What an eBPF program's r1 points at; lives in the headroom, the frame
 * follows at +LRX_XDP_MD_SIZE. Field order is ours; the loader rewrites
 * the kernel xdp_md offsets onto it. The rx_* fields are what the XDP
 * metadata kfuncs (bpf_xdp_metadata_rx_hash, _rx_timestamp, _rx_vlan_tag)
 * return, written only for a program that calls them (lrx_xdp_md_hints),
 * as a driver's xdp_buff extension keeps its RX descriptor for them. */
struct lrx_xdp_md {
	uint64_t data_end;        /* absolute address, as the kernel's */
	uint32_t ingress_ifindex; /* listrx: the DPDK port id */
	uint32_t rx_queue_index;
	uint32_t egress_ifindex;  /* 0, as the kernel's for XDP on RX */
	uint32_t rx_hash;         /* 0 when the kfunc fails */
	uint32_t rx_hash_type;    /* enum xdp_rss_hash_type */
	uint16_t rx_vlan_proto;   /* network order */
	uint16_t rx_vlan_tci;
	uint64_t rx_timestamp;    /* ns */
	/* each kfunc's return: 0, -ENODATA (not in this frame's
	 * descriptor) or -EOPNOTSUPP (generic XDP) */
	int64_t rx_hash_rc, rx_timestamp_rc, rx_vlan_rc;
};
#define LRX_XDP_MD_SIZE 64
static_assert(sizeof(struct lrx_xdp_md) == LRX_XDP_MD_SIZE,
	      "the xdp_md header size");

/* The hints a program's kfuncs read (lrx_xdp_prog_hints). */
#define LRX_XDP_HINT_HASH 1u
#define LRX_XDP_HINT_TIMESTAMP 2u
#define LRX_XDP_HINT_VLAN 4u

/* The kernel's enum xdp_rss_hash_type bits (include/net/xdp.h). */
enum lrx_xdp_rss {
	LRX_XDP_RSS_L3_IPV4 = 1, LRX_XDP_RSS_L3_IPV6 = 2,
	LRX_XDP_RSS_L3_DYNHDR = 4, LRX_XDP_RSS_L4 = 8,
	LRX_XDP_RSS_L4_TCP = 16, LRX_XDP_RSS_L4_UDP = 32,
	LRX_XDP_RSS_L4_SCTP = 64, LRX_XDP_RSS_L4_ICMP = 256,
};

/* ---- Maps (the kernel's bpf_map_lookup_elem/update/delete semantics) -- */
#define LRX_XDP_MAP_NAME_MAX 32

/* Readers (a program's lookups, on the lcore that runs it) take no lock;
 * writers of a hash map (the program's update/delete helpers, telemetry's
 * map_update/map_delete from another thread) hold `lock`, as
 * htab_map_update_elem holds its bucket lock. A hash map is the kernel's
 * htab layout: buckets of singly linked elements from a preallocated
 * pool (twice max_entries). An element is linked by a release store of
 * its bucket's head once key and value are written, unlinked by a release
 * store of its predecessor's link (its own link stays, so a lookup on it
 * walks on, as hlist_nulls_del_rcu), and goes to the tail of the pool's
 * free list with the rte_rcu_qsbr token of its delete: it takes another
 * key only once every reader passed a quiescent state (`qsbr`: the
 * lcore's poll loop reports one after each poll), so a program that
 * looked a key up keeps a valid value for its whole run, as RCU keeps a
 * deleted htab element until the readers are done. A lookup visits only
 * the entries of its bucket, never a deleted one. Values are written in
 * place (arrays, as array_map_update_elem; an existing hash key's value
 * too): a reader may see a value of more than 8 bytes half written, as in
 * the kernel's arrays. */
struct rte_rcu_qsbr;

#define LRX_XDP_MAP_NIL UINT32_MAX /* a hash link to no element */

struct lrx_xdp_map {
	char name[LRX_XDP_MAP_NAME_MAX];
	uint32_t type;        /* BPF_MAP_TYPE_ARRAY / _HASH (per-CPU aliases) */
	uint32_t key_size, value_size, max_entries;
	uint32_t value_stride; /* value_size rounded up to 8, as array_map */
	uint32_t n_buckets;   /* hash: power of two >= max_entries, as
			       * htab_map_alloc's; 0 for an array */
	uint32_t elem_size;   /* hash: link, key rounded up to 8, value */
	uint32_t n_elems;     /* hash: the pool, 2 * max_entries */
	uint32_t count;       /* hash: entries in use (under lock) */
	uint8_t *values;      /* array: max_entries values */
	uint32_t *buckets;    /* hash: per bucket its first element (atomic) */
	uint8_t *elems;       /* hash: the pool (struct lrx_xdp_map_elem) */
	/* hash, under lock: free elements oldest delete first (a ring of
	 * n_elems) and per element the qsbr token of its delete (0: none) */
	uint32_t *free_ring;
	uint64_t *retired;
	uint32_t free_head, free_n;
	struct rte_rcu_qsbr *qsbr; /* NULL: no reader on another thread */
	rte_spinlock_t lock;  /* hash: serialises writers */
	/* its keys' and values' fields from the object's BTF, for the
	 * report (NULL: none); owned, freed by lrx_xdp_map_destroy */
	struct lrx_map_layout *layout;
};

/* A hash element's head; the key (zero-padded to 8 bytes) and the value
 * follow. */
struct lrx_xdp_map_elem {
	uint32_t next;   /* the bucket's next element (atomic) */
	uint32_t linked; /* in a bucket (writers and the dump, under lock) */
};

/* BPF_ANY / BPF_NOEXIST / BPF_EXIST */
int lrx_xdp_map_create(struct lrx_xdp_map *map, const char *name,
		       uint32_t type, uint32_t key_size, uint32_t value_size,
		       uint32_t max_entries, int socket_id, char *err,
		       size_t err_len);
void lrx_xdp_map_destroy(struct lrx_xdp_map *map);
void *lrx_xdp_map_lookup(struct lrx_xdp_map *map, const void *key);
/* bpf_map_update_elem from a thread other than the reader's (telemetry,
 * map_init): -E2BIG only when max_entries keys are in, and -EAGAIN when
 * every free element was deleted since the reader's last quiescent state
 * (retry after its next poll: lrx_bpf_map_write waits for it). */
int lrx_xdp_map_update(struct lrx_xdp_map *map, const void *key,
		       const void *value, uint64_t flags);
/* bpf_map_update_elem from the program, on the reader's own lcore: never
 * -EAGAIN. It cannot wait for its own quiescent state, so it takes the
 * oldest free element even when young: only its own run can hold that
 * element's value (each lcore reads its own copy), and the kernel's
 * preallocated htab reuses a deleted element at once for every reader
 * (htab_map_delete_elem -> free_htab_elem -> pcpu_freelist_push). */
int lrx_xdp_map_update_from_prog(struct lrx_xdp_map *map, const void *key,
				 const void *value, uint64_t flags);
int lrx_xdp_map_delete(struct lrx_xdp_map *map, const void *key);
/* The hash elements a lookup of key compares (tests: a missing key's
 * lookup visits its bucket's entries only); 0 for an array. */
uint32_t lrx_xdp_map_lookup_visits(const struct lrx_xdp_map *map, const void *key);
/* The quiescent-state variable of the lcore whose program reads map
 * (thread 0 of v): before another thread writes it (NULL: none does). */
void lrx_xdp_map_set_qsbr(struct lrx_xdp_map *map, struct rte_rcu_qsbr *v);
/* Iteration for a dump: the entry at element/index *cursor or after it,
 * copied out; *cursor moves past it. Arrays give every index. */
bool lrx_xdp_map_next(const struct lrx_xdp_map *map, uint32_t *cursor, void *key,
		      void *value);
const char *lrx_xdp_map_type_name(const struct lrx_xdp_map *map);

/* ---- Program types: what r1 points at ----------------------------------
 * The loader serves every program type listrx runs (XDP here, cls_bpf in
 * the tc-ingress stage): a type is a table of its uapi context's fields
 * and where each lives in listrx's header in front of the frame, as the
 * kernel's per-type convert_ctx_access (xdp_convert_ctx_access,
 * tc_cls_act_convert_ctx_access) maps them onto xdp_buff / sk_buff. */
enum lrx_bpf_ctx_kind {
	LRX_BPF_CTX_FIELD,    /* a value in the header */
	LRX_BPF_CTX_DATA,     /* data / data_meta: the frame's first byte */
	LRX_BPF_CTX_DATA_END, /* data_end: a 64-bit address in the header */
};

struct lrx_bpf_ctx_field {
	const char *name;
	uint16_t off, size;   /* in the uapi struct (xdp_md, __sk_buff) */
	uint16_t to;          /* offset in listrx's header */
	uint8_t kind;         /* enum lrx_bpf_ctx_kind */
	bool writable;        /* a program may store to it (skb->mark ...) */
};

struct lrx_bpf_ctx_type {
	const char *name;          /* "xdp_md", "__sk_buff" */
	uint32_t hdr_size;         /* header bytes before the frame */
	const struct lrx_bpf_ctx_field *fields; /* NULL-name terminated */
	bool narrow_loads;         /* 1/2-byte loads inside a field
				    * (bpf_ctx_narrow_access_ok) */
	/* bpf_redirect for this type (its verdicts differ: XDP_REDIRECT or
	 * TC_ACT_REDIRECT, and what a bad call returns) */
	uint64_t (*redirect)(uint64_t ifindex, uint64_t flags, uint64_t a3,
			     uint64_t a4, uint64_t a5);
};

/* struct xdp_md onto struct lrx_xdp_md */
extern const struct lrx_bpf_ctx_type lrx_bpf_ctx_xdp;

/* What a cls_bpf program's r1 points at (struct __sk_buff, the fields
 * tc_cls_act_convert_ctx_access serves that listrx models); the frame
 * follows at +LRX_SKB_MD_SIZE. Written per packet by the tc-ingress
 * stage; a program may write the fields marked writable. */
struct lrx_skb_md {
	uint64_t data_end;       /* absolute address */
	uint32_t len;            /* skb->len: the frame (MAC header pushed) */
	uint32_t pkt_type;       /* PACKET_HOST ... (enum lrx_pkt_type) */
	uint32_t mark;           /* skb->mark, writable */
	uint32_t queue_mapping;  /* skb_record_rx_queue: RX queue + 1 */
	uint32_t protocol;       /* skb->protocol, network order */
	uint32_t vlan_present;
	uint32_t vlan_tci;
	uint32_t vlan_proto;     /* network order */
	uint32_t priority;       /* writable */
	uint32_t ingress_ifindex; /* listrx: the DPDK port id */
	uint32_t ifindex;
	uint32_t tc_index;       /* writable */
	uint32_t cb[5];          /* writable, zero at entry */
	uint32_t hash;           /* skb->hash: the RSS hash */
	uint32_t tc_classid;     /* writable */
	uint32_t napi_id;        /* 0 */
	uint32_t gso_segs, gso_size;
	uint32_t reserved[3];
};
#define LRX_SKB_MD_SIZE 112
static_assert(sizeof(struct lrx_skb_md) == LRX_SKB_MD_SIZE,
	      "the __sk_buff header size");

/* struct __sk_buff onto struct lrx_skb_md */
extern const struct lrx_bpf_ctx_type lrx_bpf_ctx_skb;

/* Places type's header in front of the frame of m: the header, or NULL
 * when the mbuf lacks the headroom or the window (the caller counts it). */
static inline void *lrx_bpf_ctx_at(struct rte_mbuf *m, uint32_t hdr_size,
				   uint32_t window)
{
	uint8_t *data = rte_pktmbuf_mtod(m, uint8_t *);
	uint32_t room = (uint32_t)m->buf_len - m->data_off;

	if (unlikely(m->data_off < hdr_size || room < window))
		return NULL;
	return data - hdr_size;
}

/* ---- Loaded eBPF programs ----------------------------------------------- */
#define LRX_XDP_MAX_MAPS 16

struct lrx_xdp_prog;

/* Reads section `section` of the ELF object `path`, applies map
 * relocations, rewrites xdp_md accesses and helper calls, and hands the
 * result to rte_bpf_load. `window` is the number of frame bytes the
 * program may address past data. On failure returns -EINVAL (or -ENOMEM,
 * -ENOENT) with a message naming the file, section and instruction. */
int lrx_xdp_prog_load(const char *path, const char *section, uint32_t window,
		      int socket_id, struct lrx_xdp_prog **out, char *err,
		      size_t err_len);
/* What lrx_xdp_prog_load reads of each map in the object's BTF (libbpf's
 * bpf_object__open, run in a child process because libbpf can crash on a
 * malformed object). */
struct lrx_xdp_map_def {
	char name[LRX_XDP_MAP_NAME_MAX];
	uint32_t type, key_size, value_size, max_entries;
	struct lrx_map_layout layout; /* from BTF; n_fields 0: none */
};
/* The map's key and value types (BTF type ids, 0: not described) of
 * key_size and value_size bytes, flattened into out (map_layout.h), as
 * bpftool map dump decodes them. Returns 0, or -E2BIG (more fields than
 * the layout holds), -EINVAL (a type it cannot place) with out empty. */
struct btf;
int lrx_btf_map_layout(const struct btf *btf, uint32_t key_type, uint32_t value_type,
		       uint32_t key_size, uint32_t value_size, struct lrx_map_layout *out);
/* lrx_xdp_prog_load with the map definitions given instead of parsed by
 * libbpf: the rest (libelf, relocations, data flow, rewrite, rte_bpf_load)
 * runs as for an object, in this process. For the fuzz harnesses, which
 * fuzz listrx's code around libbpf without a fork per input. */
int lrx_xdp_prog_load_maps(const char *path, const char *section,
			   uint32_t window, int socket_id,
			   const struct lrx_xdp_map_def *maps, unsigned n_maps,
			   struct lrx_xdp_prog **out, char *err,
			   size_t err_len);
/* Either of the above for a program of another type (maps NULL: from the
 * object's BTF, in a child process). */
int lrx_bpf_prog_load(const char *path, const char *section,
		      const struct lrx_bpf_ctx_type *type, uint32_t window,
		      int socket_id, const struct lrx_xdp_map_def *maps,
		      unsigned n_maps, struct lrx_xdp_prog **out, char *err,
		      size_t err_len);
void lrx_xdp_prog_free(struct lrx_xdp_prog *prog);
/* NULL when the object has no map of that name. */
struct lrx_xdp_map *lrx_xdp_prog_map(struct lrx_xdp_prog *prog,
				     const char *name);
unsigned lrx_xdp_prog_map_count(const struct lrx_xdp_prog *prog);
/* lrx_xdp_map_set_qsbr for each of the program's maps. */
void lrx_xdp_prog_set_qsbr(struct lrx_xdp_prog *prog, struct rte_rcu_qsbr *v);
struct lrx_xdp_map *lrx_xdp_prog_map_at(struct lrx_xdp_prog *prog,
					unsigned index);
/* rte_bpf handle and its JIT (NULL when rte_bpf produced none). */
const struct rte_bpf *lrx_xdp_prog_bpf(const struct lrx_xdp_prog *prog);
uint64_t (*lrx_xdp_prog_jit(const struct lrx_xdp_prog *prog))(void *);
/* Instructions before and after the rewrite (for docs and tests). */
uint32_t lrx_xdp_prog_insn_count(const struct lrx_xdp_prog *prog,
				 bool rewritten);
/* Whether the program calls bpf_redirect (then bursts run per packet so
 * that each packet's target is read right after its run). */
bool lrx_xdp_prog_uses_redirect(const struct lrx_xdp_prog *prog);

/* The metadata kfuncs the program calls (LRX_XDP_HINT_*): the hints the
 * stage must write into the context header (lrx_xdp_md_hints). */
uint32_t lrx_xdp_prog_hints(const struct lrx_xdp_prog *prog);

#define LRX_XDP_REDIRECT_NONE UINT32_MAX
/* The target the eBPF helper bpf_redirect set on this thread (the kernel's
 * per-CPU bpf_redirect_info: a helper gets no context to write it into),
 * reset to LRX_XDP_REDIRECT_NONE; the stage takes it after a run that
 * returned XDP_REDIRECT. Built-in programs return theirs in the buffer. */
uint32_t lrx_xdp_redirect_take(void);

/* Places the context header in front of the frame of m (returns NULL when
 * the mbuf lacks the headroom or the window: the caller aborts it). */
static inline struct lrx_xdp_md *lrx_xdp_md_prepare(struct rte_mbuf *m,
						    uint32_t window,
						    uint16_t port,
						    uint16_t queue)
{
	struct lrx_xdp_md *md =
		(struct lrx_xdp_md *)lrx_bpf_ctx_at(m, LRX_XDP_MD_SIZE, window);

	if (unlikely(md == NULL))
		return NULL;
	md->data_end = (uint64_t)(uintptr_t)(rte_pktmbuf_mtod(m, uint8_t *) +
					     rte_pktmbuf_data_len(m));
	md->ingress_ifindex = port;
	md->rx_queue_index = queue;
	md->egress_ifindex = 0;
	return md;
}

/* Where the kfuncs' values come from: the frame's descriptor (the mbuf's
 * offload fields, as a driver's xdp_metadata_ops read its RX descriptor).
 * Generic XDP has none: the kernel runs no device-bound program there
 * (dev_xdp_attach), and the kfuncs' default bodies return -EOPNOTSUPP. */
struct lrx_xdp_hint_src {
	uint32_t hints;    /* LRX_XDP_HINT_* the program reads */
	bool generic;
	int ts_offset;     /* the rx timestamp dynfield, or -1 */
	uint64_t ts_flag;
	uint64_t ts_mult;  /* TSC ticks to ns: (tsc * ts_mult) >> ts_shift */
	unsigned ts_shift;
};

/* The RSS hash type of a packet type, as ice's ice_xdp_rx_hash_type
 * maps its descriptor's ptype (0: not known). */
static inline uint32_t lrx_xdp_rss_type(uint32_t ptype)
{
	uint32_t l3 = ptype & RTE_PTYPE_L3_MASK;
	uint32_t t = RTE_ETH_IS_IPV4_HDR(ptype) ? LRX_XDP_RSS_L3_IPV4 :
		     RTE_ETH_IS_IPV6_HDR(ptype) ? LRX_XDP_RSS_L3_IPV6 : 0;

	if (l3 == RTE_PTYPE_L3_IPV4_EXT || l3 == RTE_PTYPE_L3_IPV6_EXT)
		t |= LRX_XDP_RSS_L3_DYNHDR;
	switch (ptype & RTE_PTYPE_L4_MASK) {
	case RTE_PTYPE_L4_TCP: return t | LRX_XDP_RSS_L4 | LRX_XDP_RSS_L4_TCP;
	case RTE_PTYPE_L4_UDP: return t | LRX_XDP_RSS_L4 | LRX_XDP_RSS_L4_UDP;
	case RTE_PTYPE_L4_SCTP: return t | LRX_XDP_RSS_L4 | LRX_XDP_RSS_L4_SCTP;
	case RTE_PTYPE_L4_ICMP: return t | LRX_XDP_RSS_L4 | LRX_XDP_RSS_L4_ICMP;
	default: return t;
	}
}

/* Writes the hints the program reads into its context header: each value
 * and its kfunc's return (mlx5e_xdp_rx_hash, ..., veth_xdp_rx_vlan_tag):
 * -ENODATA when the descriptor lacks it, the value 0 then. */
static inline void lrx_xdp_md_hints(struct lrx_xdp_md *md,
				    const struct rte_mbuf *m,
				    const struct lrx_xdp_hint_src *src)
{
	const uint64_t ol = m->ol_flags;
	bool on;

	if (unlikely(src->generic)) {
		md->rx_hash = md->rx_hash_type = 0;
		md->rx_timestamp = 0;
		md->rx_vlan_proto = md->rx_vlan_tci = 0;
		md->rx_hash_rc = md->rx_timestamp_rc = md->rx_vlan_rc = -EOPNOTSUPP;
		return;
	}
	if (src->hints & LRX_XDP_HINT_HASH) {
		on = (ol & RTE_MBUF_F_RX_RSS_HASH) != 0;
		md->rx_hash = on ? m->hash.rss : 0;
		md->rx_hash_type = on ? lrx_xdp_rss_type(m->packet_type) : 0;
		md->rx_hash_rc = on ? 0 : -ENODATA;
	}
	if (src->hints & LRX_XDP_HINT_TIMESTAMP) {
		on = src->ts_offset >= 0 && (ol & src->ts_flag) != 0;
		md->rx_timestamp = on ? (uint64_t)(((unsigned __int128)
			*RTE_MBUF_DYNFIELD(m, src->ts_offset,
					   const rte_mbuf_timestamp_t *) *
			src->ts_mult) >> src->ts_shift) : 0;
		md->rx_timestamp_rc = on ? 0 : -ENODATA;
	}
	if (src->hints & LRX_XDP_HINT_VLAN) {
		/* the outer tag of a stripped pair is the skb's hwaccel tag,
		 * 802.1ad (as build-meta takes it) */
		bool qinq = (ol & RTE_MBUF_F_RX_QINQ_STRIPPED) != 0;

		on = (ol & RTE_MBUF_F_RX_VLAN_STRIPPED) != 0;
		md->rx_vlan_tci = !on ? 0 : qinq ? m->vlan_tci_outer : m->vlan_tci;
		md->rx_vlan_proto = !on ? 0 : rte_cpu_to_be_16(
			qinq ? RTE_ETHER_TYPE_QINQ : RTE_ETHER_TYPE_VLAN);
		md->rx_vlan_rc = on ? 0 : -ENODATA;
	}
}

#endif
