/* SPDX-License-Identifier: BSD-3-Clause
 * The loader's parts (ebpf_loader.c: helpers, program types, the
 * data-flow pass, the load; ebpf_rewrite.c: the instruction rewrite;
 * ebpf_elf.c: the object's sections, relocations and BTF maps) and what
 * they share: the program and the loader's state.
 */
#ifndef LRX_EBPF_LOADER_H
#define LRX_EBPF_LOADER_H

#include <stdbool.h>
#include <stdint.h>

#include <libelf.h>

#include <rte_bpf.h>

#include "ebpf.h"

#ifndef EM_BPF
#define EM_BPF 247
#endif

#define XDP_MAX_XSYM 64
#define XDP_MAX_INSNS 65536

struct lrx_xdp_prog {
	struct rte_bpf *bpf;
	uint64_t (*jit)(void *);
	uint32_t n_insns_orig, n_insns;
	bool uses_redirect;
	uint32_t hints; /* LRX_XDP_HINT_*: the metadata kfuncs it calls */
	unsigned n_maps;
	struct lrx_xdp_map maps[LRX_XDP_MAX_MAPS];
	int16_t map_xsym[LRX_XDP_MAX_MAPS][3]; /* lookup, update, delete */
	struct rte_bpf_xsym xsym[XDP_MAX_XSYM];
	uint32_t nb_xsym;
};

enum { H_LOOKUP, H_UPDATE, H_DELETE };

struct helper_info {
	int id;
	const char *name;
	uint64_t (*fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
	uint32_t nb_args;
};

/* ---- Register tags for the data-flow pass -------------------------------- */
enum {
	TAG_CTX = 1,        /* the context pointer (r1 at entry) */
	TAG_MAP = 2,        /* &map, from a relocated ld_imm64 */
	TAG_MAYBE_NULL = 4, /* bpf_map_lookup_elem result, not yet tested */
	TAG_NULL = 8,       /* the same, known to be NULL */
	TAG_OTHER = 16,     /* anything else */
	TAG_VALUE = 32,     /* a lookup result tested non-NULL (map: which) */
	TAG_PKT_END = 64,   /* ctx->data_end, or it +/- a constant */
};
#define TAG_MAP_CONFLICT 0xff
#define TAG_NULL_CONFLICT 0xffff

struct reg_tag {
	uint8_t kinds;
	uint8_t map;
	uint16_t null_id;
};

struct flow_state {
	bool reached;
	struct reg_tag r[EBPF_REG_NUM];
};

#define XDP_MAX_KFUNC_CALLS 64
struct kfunc_call {
	uint32_t insn;
	uint8_t kfunc; /* index in kfuncs[] */
};

struct loader {
	const char *path, *section;
	const struct lrx_bpf_ctx_type *type;
	/* rewrite the packet view (prog_packet_view_check): the context's
	 * fields read from and written to the frame's first bytes, data is
	 * the argument itself */
	bool packet_view;
	char *err;
	size_t err_len;
	struct lrx_xdp_prog *prog;
	struct ebpf_insn *insns; /* as in the object, relocations applied */
	uint32_t n;
	int16_t *insn_map;       /* map index of a relocated ld_imm64, or -1 */
	struct flow_state *in;   /* state before each instruction */
	const struct btf_maps_reply *maps_given; /* instead of libbpf's parse */
	struct kfunc_call kcalls[XDP_MAX_KFUNC_CALLS];
	unsigned n_kcalls;
};

/* libbpf's BTF map definitions, read in a child (ebpf_elf.c), or given
 * (lrx_xdp_prog_load_maps); why: libbpf's last warning, which names the
 * object's path, so it has room for a long one. */
#define LIBBPF_WHY_MAX 1024
struct btf_maps_reply {
	int status; /* 0, or -EINVAL with why */
	uint32_t n_maps; /* may exceed LRX_XDP_MAX_MAPS: only that many sent */
	struct lrx_xdp_map_def maps[LRX_XDP_MAX_MAPS];
	char why[LIBBPF_WHY_MAX];
};

/* ebpf_loader.c */
extern const struct helper_info ebpf_helpers[];
extern const size_t ebpf_n_helpers;
const char *ebpf_helper_name(int id);
int ebpf_xsym_add(struct lrx_xdp_prog *prog, const struct helper_info *h,
		  uint64_t (*fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t),
		  const struct lrx_xdp_map *map);
int ebpf_load_error(struct loader *ld, uint32_t insn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* ebpf_rewrite.c: the context's field at off (NULL: none), an access's
 * bytes (BPF_SIZE), the calls relocated against kfuncs (kfunc_record) and
 * the rewrite into out: at most 2 per instruction and KFUNC_INSNS_MAX per
 * kfunc call; new_at[i] is where old instruction i starts in it. */
#define KFUNC_INSNS_MAX 5
const struct lrx_bpf_ctx_field *ebpf_ctx_field(const struct lrx_bpf_ctx_type *t,
					       int16_t off, unsigned size);
unsigned ebpf_size_bytes(uint8_t code);
int ebpf_kfunc_record(struct loader *ld, uint32_t at, const char *name);
int ebpf_rewrite(struct loader *ld, struct ebpf_insn *out, uint32_t *new_at,
		 uint32_t *n_out);

/* ebpf_elf.c: the maps (from BTF, or given), the map named name (-1:
 * none), the section's code with the map relocations applied */
int ebpf_maps_from_btf(struct loader *ld, int socket_id);
int ebpf_map_index(const struct lrx_xdp_prog *prog, const char *name);
int ebpf_elf_read(struct loader *ld, Elf *elf);

#endif
