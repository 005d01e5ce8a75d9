/* SPDX-License-Identifier: BSD-3-Clause
 * The eBPF loader the xdp and tc-ingress stages share (docs/xdp.md): real
 * eBPF objects run by DPDK rte_bpf (interpreter or x86 JIT), with the
 * kernel's `struct xdp_md` and `struct __sk_buff` contexts, array/hash maps
 * and a few helpers supplied by listrx, so that an unmodified kernel XDP or
 * cls_bpf object runs here and in the kernel alike.
 *
 * How an eBPF program sees a frame: rte_bpf verifies memory accesses only
 * against the static size of the program's argument (it has no notion of
 * data/data_end), so the argument is a window that starts with a 32-byte
 * context header written into the mbuf headroom just before the frame and
 * continues over the frame: `ctx->data` is rewritten at load time into
 * `ctx + LRX_XDP_MD_SIZE` (a pointer the verifier can bound), `ctx->data_end`
 * into a 64-bit load of the header's data_end. The per-packet check that
 * the mbuf really has that window (headroom >= 32, buffer after data >=
 * window) keeps what the verifier allowed inside the mbuf's own buffer.
 */
#ifndef LISTRX_EBPF_H
#define LISTRX_EBPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * the kernel xdp_md offsets onto it. */
struct lrx_xdp_md {
	uint64_t data_end;        /* absolute address, as the kernel's */
	uint32_t ingress_ifindex; /* listrx: the DPDK port id */
	uint32_t rx_queue_index;
	uint32_t egress_ifindex;  /* 0, as the kernel's for XDP on RX */
	uint32_t reserved0;
	uint64_t reserved1;
};
#define LRX_XDP_MD_SIZE 32

/* ---- Maps (the kernel's bpf_map_lookup_elem/update/delete semantics) -- */
#define LRX_XDP_MAP_NAME_MAX 32

struct lrx_xdp_map {
	char name[LRX_XDP_MAP_NAME_MAX];
	uint32_t type;        /* BPF_MAP_TYPE_ARRAY / _HASH (per-CPU aliases) */
	uint32_t key_size, value_size, max_entries;
	uint32_t value_stride; /* value_size rounded up to 8, as array_map */
	uint32_t n_slots;     /* hash: power of two >= 2 * max_entries */
	uint32_t count;       /* hash: entries in use */
	uint8_t *values;      /* array: max_entries values; hash: per slot */
	uint8_t *keys;        /* hash: per slot */
	uint8_t *slot_state;  /* hash: 0 empty, 1 used, 2 deleted */
};

/* BPF_ANY / BPF_NOEXIST / BPF_EXIST */
int lrx_xdp_map_create(struct lrx_xdp_map *map, const char *name,
		       uint32_t type, uint32_t key_size, uint32_t value_size,
		       uint32_t max_entries, int socket_id, char *err,
		       size_t err_len);
void lrx_xdp_map_destroy(struct lrx_xdp_map *map);
void *lrx_xdp_map_lookup(struct lrx_xdp_map *map, const void *key);
int lrx_xdp_map_update(struct lrx_xdp_map *map, const void *key,
		       const void *value, uint64_t flags);
int lrx_xdp_map_delete(struct lrx_xdp_map *map, const void *key);
/* Iteration for a dump: the entry at slot/index *cursor or after it,
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
};
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

#endif
