/* SPDX-License-Identifier: BSD-3-Clause
 * Loads a kernel XDP object (clang -target bpf) into rte_bpf.
 *
 * rte_bpf_elf_load would hand the section to rte_bpf as is; a kernel XDP
 * object needs what the kernel's loader and verifier do to it first:
 *  - map relocations (libbpf's bpf_object__relocate: ld_imm64 against a
 *    `.maps` symbol gets the map's address; map definitions are read from
 *    BTF through libbpf's bpf_object__open, no kernel involved);
 *  - helper calls `call N` become calls of rte_bpf external symbols
 *    (rte_bpf resolves `call` by index into the xsym table);
 *  - context accesses are rewritten as the kernel's per-type
 *    convert_ctx_access does (xdp_convert_ctx_access for xdp_md,
 *    tc_cls_act_convert_ctx_access for __sk_buff), onto listrx's header
 *    in front of the frame (struct lrx_xdp_md, struct lrx_skb_md: xdp.h);
 *  - anything the rewrite cannot translate is rejected here, naming the
 *    instruction, rather than left for rte_bpf to run on wrong memory.
 * Which register holds the context, a map or a possibly-NULL map value is
 * found by a small forward data-flow pass over the program (registers
 * only: the context or a map pointer spilled to the stack is rejected).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <gelf.h>
#include <libelf.h>
#include <linux/bpf.h>

#include <rte_bpf.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "xdp.h"

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

/* ---- Helpers (the kernel's BPF_FUNC_* ids) ------------------------------ */
static uint64_t helper_map_lookup(uint64_t map, uint64_t key, uint64_t a3,
				  uint64_t a4, uint64_t a5)
{
	RTE_SET_USED(a3); RTE_SET_USED(a4); RTE_SET_USED(a5);
	return (uintptr_t)lrx_xdp_map_lookup((struct lrx_xdp_map *)map,
					     (const void *)key);
}

static uint64_t helper_map_update(uint64_t map, uint64_t key, uint64_t value,
				  uint64_t flags, uint64_t a5)
{
	RTE_SET_USED(a5);
	return (uint64_t)(int64_t)lrx_xdp_map_update(
		(struct lrx_xdp_map *)map, (const void *)key,
		(const void *)value, flags);
}

static uint64_t helper_map_delete(uint64_t map, uint64_t key, uint64_t a3,
				  uint64_t a4, uint64_t a5)
{
	RTE_SET_USED(a3); RTE_SET_USED(a4); RTE_SET_USED(a5);
	return (uint64_t)(int64_t)lrx_xdp_map_delete(
		(struct lrx_xdp_map *)map, (const void *)key);
}

static uint64_t helper_ktime_get_ns(uint64_t a1, uint64_t a2, uint64_t a3,
				    uint64_t a4, uint64_t a5)
{
	RTE_SET_USED(a1); RTE_SET_USED(a2); RTE_SET_USED(a3);
	RTE_SET_USED(a4); RTE_SET_USED(a5);
	return rte_get_tsc_cycles() * UINT64_C(1000000000) / rte_get_tsc_hz();
}

static uint64_t helper_get_prandom_u32(uint64_t a1, uint64_t a2, uint64_t a3,
				       uint64_t a4, uint64_t a5)
{
	RTE_SET_USED(a1); RTE_SET_USED(a2); RTE_SET_USED(a3);
	RTE_SET_USED(a4); RTE_SET_USED(a5);
	return (uint32_t)rte_rand();
}

static uint64_t helper_get_smp_processor_id(uint64_t a1, uint64_t a2,
					    uint64_t a3, uint64_t a4,
					    uint64_t a5)
{
	RTE_SET_USED(a1); RTE_SET_USED(a2); RTE_SET_USED(a3);
	RTE_SET_USED(a4); RTE_SET_USED(a5);
	return rte_lcore_id();
}

/* bpf_redirect's target on this thread, as the kernel's per-CPU
 * bpf_redirect_info (rte_bpf calls a helper with its arguments only). */
static __thread uint32_t xdp_redirect_target = LRX_XDP_REDIRECT_NONE;

uint32_t lrx_xdp_redirect_take(void)
{
	uint32_t target = xdp_redirect_target;

	xdp_redirect_target = LRX_XDP_REDIRECT_NONE;
	return target;
}

/* bpf_redirect(ifindex, flags): ifindex is a DPDK port id here; as
 * bpf_xdp_redirect, flags other than 0 give XDP_ABORTED. */
static uint64_t helper_redirect_xdp(uint64_t ifindex, uint64_t flags,
				    uint64_t a3, uint64_t a4, uint64_t a5)
{
	RTE_SET_USED(a3); RTE_SET_USED(a4); RTE_SET_USED(a5);
	if (flags != 0 || ifindex >= RTE_MAX_ETHPORTS)
		return LRX_XDP_ABORTED;
	xdp_redirect_target = (uint32_t)ifindex;
	return LRX_XDP_REDIRECT;
}

/* bpf_redirect for cls_bpf (net/core/filter.c): TC_ACT_REDIRECT, or
 * TC_ACT_SHOT for flags it refuses. BPF_F_INGRESS (to another device's
 * receive path) is not modelled: TC_ACT_SHOT too. */
#define TC_ACT_SHOT_V 2
#define TC_ACT_REDIRECT_V 7
static uint64_t helper_redirect_tc(uint64_t ifindex, uint64_t flags,
				   uint64_t a3, uint64_t a4, uint64_t a5)
{
	RTE_SET_USED(a3); RTE_SET_USED(a4); RTE_SET_USED(a5);
	if (flags != 0 || ifindex >= RTE_MAX_ETHPORTS)
		return TC_ACT_SHOT_V;
	xdp_redirect_target = (uint32_t)ifindex;
	return TC_ACT_REDIRECT_V;
}

/* ---- Program types ----------------------------------------------------------
 * Each uapi field the loader translates (anything else is refused, naming
 * the offset): xdp_is_valid_access allows 32-bit loads only, and no
 * stores; tc_cls_act_is_valid_access allows narrow loads of the plain
 * fields and stores to mark, priority, tc_index, cb[] and tc_classid. */
#define XDP_FIELD(n, o, f)                                                    \
	{ .name = n, .off = o, .size = 4,                                      \
	  .to = offsetof(struct lrx_xdp_md, f), .kind = LRX_BPF_CTX_FIELD }
static const struct lrx_bpf_ctx_field xdp_fields[] = {
	{ .name = "data", .off = 0, .size = 4, .kind = LRX_BPF_CTX_DATA },
	{ .name = "data_end", .off = 4, .size = 4,
	  .to = offsetof(struct lrx_xdp_md, data_end),
	  .kind = LRX_BPF_CTX_DATA_END },
	{ .name = "data_meta", .off = 8, .size = 4, .kind = LRX_BPF_CTX_DATA },
	XDP_FIELD("ingress_ifindex", 12, ingress_ifindex),
	XDP_FIELD("rx_queue_index", 16, rx_queue_index),
	XDP_FIELD("egress_ifindex", 20, egress_ifindex),
	{ .name = NULL },
};

const struct lrx_bpf_ctx_type lrx_bpf_ctx_xdp = {
	.name = "xdp_md",
	.hdr_size = LRX_XDP_MD_SIZE,
	.fields = xdp_fields,
	.narrow_loads = false,
	.redirect = helper_redirect_xdp,
};

#define SKB_FIELD(n, o, f, w)                                                 \
	{ .name = n, .off = o, .size = 4,                                      \
	  .to = offsetof(struct lrx_skb_md, f), .kind = LRX_BPF_CTX_FIELD,     \
	  .writable = w }
static const struct lrx_bpf_ctx_field skb_fields[] = {
	SKB_FIELD("len", 0, len, false),
	SKB_FIELD("pkt_type", 4, pkt_type, false),
	SKB_FIELD("mark", 8, mark, true),
	SKB_FIELD("queue_mapping", 12, queue_mapping, false),
	SKB_FIELD("protocol", 16, protocol, false),
	SKB_FIELD("vlan_present", 20, vlan_present, false),
	SKB_FIELD("vlan_tci", 24, vlan_tci, false),
	SKB_FIELD("vlan_proto", 28, vlan_proto, false),
	SKB_FIELD("priority", 32, priority, true),
	SKB_FIELD("ingress_ifindex", 36, ingress_ifindex, false),
	SKB_FIELD("ifindex", 40, ifindex, false),
	SKB_FIELD("tc_index", 44, tc_index, true),
	SKB_FIELD("cb[0]", 48, cb[0], true),
	SKB_FIELD("cb[1]", 52, cb[1], true),
	SKB_FIELD("cb[2]", 56, cb[2], true),
	SKB_FIELD("cb[3]", 60, cb[3], true),
	SKB_FIELD("cb[4]", 64, cb[4], true),
	SKB_FIELD("hash", 68, hash, false),
	SKB_FIELD("tc_classid", 72, tc_classid, true),
	{ .name = "data", .off = 76, .size = 4, .kind = LRX_BPF_CTX_DATA },
	{ .name = "data_end", .off = 80, .size = 4,
	  .to = offsetof(struct lrx_skb_md, data_end),
	  .kind = LRX_BPF_CTX_DATA_END },
	SKB_FIELD("napi_id", 84, napi_id, false),
	{ .name = "data_meta", .off = 140, .size = 4, .kind = LRX_BPF_CTX_DATA },
	SKB_FIELD("gso_segs", 164, gso_segs, false),
	SKB_FIELD("gso_size", 176, gso_size, false),
	{ .name = NULL },
};

const struct lrx_bpf_ctx_type lrx_bpf_ctx_skb = {
	.name = "__sk_buff",
	.hdr_size = LRX_SKB_MD_SIZE,
	.fields = skb_fields,
	.narrow_loads = true,
	.redirect = helper_redirect_tc,
};

enum { H_LOOKUP, H_UPDATE, H_DELETE };

struct helper_info {
	int id;
	const char *name;
	uint64_t (*fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
	uint32_t nb_args;
};

static const struct helper_info helpers[] = {
	{ BPF_FUNC_map_lookup_elem, "bpf_map_lookup_elem", helper_map_lookup, 2 },
	{ BPF_FUNC_map_update_elem, "bpf_map_update_elem", helper_map_update, 4 },
	{ BPF_FUNC_map_delete_elem, "bpf_map_delete_elem", helper_map_delete, 2 },
	{ BPF_FUNC_ktime_get_ns, "bpf_ktime_get_ns", helper_ktime_get_ns, 0 },
	{ BPF_FUNC_get_prandom_u32, "bpf_get_prandom_u32", helper_get_prandom_u32, 0 },
	{ BPF_FUNC_get_smp_processor_id, "bpf_get_smp_processor_id",
	  helper_get_smp_processor_id, 0 },
	/* the program type's (lrx_bpf_ctx_type.redirect) */
	{ BPF_FUNC_redirect, "bpf_redirect", NULL, 2 },
};

/* Names of helpers XDP programs commonly call that listrx lacks, so that
 * the error says which one. */
static const char *helper_name(int id)
{
	static const struct { int id; const char *name; } known[] = {
		{ BPF_FUNC_trace_printk, "bpf_trace_printk" },
		{ BPF_FUNC_xdp_adjust_head, "bpf_xdp_adjust_head" },
		{ BPF_FUNC_xdp_adjust_meta, "bpf_xdp_adjust_meta" },
		{ BPF_FUNC_xdp_adjust_tail, "bpf_xdp_adjust_tail" },
		{ BPF_FUNC_redirect_map, "bpf_redirect_map" },
		{ BPF_FUNC_csum_diff, "bpf_csum_diff" },
		{ BPF_FUNC_fib_lookup, "bpf_fib_lookup" },
		{ BPF_FUNC_perf_event_output, "bpf_perf_event_output" },
		{ BPF_FUNC_tail_call, "bpf_tail_call" },
	};
	for (size_t i = 0; i < RTE_DIM(helpers); i++)
		if (helpers[i].id == id)
			return helpers[i].name;
	for (size_t i = 0; i < RTE_DIM(known); i++)
		if (known[i].id == id)
			return known[i].name;
	return "unknown helper";
}

static int xsym_add(struct lrx_xdp_prog *prog, const struct helper_info *h,
		    uint64_t (*fn)(uint64_t, uint64_t, uint64_t, uint64_t,
				   uint64_t),
		    const struct lrx_xdp_map *map)
{
	struct rte_bpf_xsym *x;

	if (prog->nb_xsym == XDP_MAX_XSYM)
		return -1;
	x = &prog->xsym[prog->nb_xsym];
	memset(x, 0, sizeof(*x));
	x->name = h->name;
	x->type = RTE_BPF_XTYPE_FUNC;
	x->func.val = fn;
	x->func.nb_args = h->nb_args;
	for (uint32_t a = 0; a < h->nb_args; a++)
		x->func.args[a] = (struct rte_bpf_arg){
			.type = RTE_BPF_ARG_RAW, .size = sizeof(uint64_t) };
	x->func.ret = (struct rte_bpf_arg){ .type = RTE_BPF_ARG_RAW,
					    .size = sizeof(uint64_t) };
	if (map != NULL) {
		/* the verifier checks key/value pointers cover the sizes and
		 * bounds accesses to the returned value */
		x->func.args[1] = (struct rte_bpf_arg){
			.type = RTE_BPF_ARG_PTR, .size = map->key_size };
		if (h->id == BPF_FUNC_map_update_elem)
			x->func.args[2] = (struct rte_bpf_arg){
				.type = RTE_BPF_ARG_PTR,
				.size = map->value_size };
		if (h->id == BPF_FUNC_map_lookup_elem)
			x->func.ret = (struct rte_bpf_arg){
				.type = RTE_BPF_ARG_PTR,
				.size = map->value_size };
	}
	return (int)prog->nb_xsym++;
}

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

static bool tag_merge(struct reg_tag *into, const struct reg_tag *from)
{
	struct reg_tag old = *into;

	if ((from->kinds & (TAG_MAP | TAG_VALUE)) != 0) {
		if ((into->kinds & (TAG_MAP | TAG_VALUE)) == 0)
			into->map = from->map;
		else if (into->map != from->map)
			into->map = TAG_MAP_CONFLICT;
	}
	if ((from->kinds & TAG_MAYBE_NULL) != 0) {
		if ((into->kinds & TAG_MAYBE_NULL) == 0)
			into->null_id = from->null_id;
		else if (into->null_id != from->null_id)
			into->null_id = TAG_NULL_CONFLICT;
	}
	into->kinds |= from->kinds;
	return memcmp(&old, into, sizeof(old)) != 0;
}

static bool state_merge(struct flow_state *into, const struct flow_state *from)
{
	bool changed = !into->reached;

	if (!into->reached) {
		*into = *from;
		return true;
	}
	for (int r = 0; r < EBPF_REG_NUM; r++)
		changed |= tag_merge(&into->r[r], &from->r[r]);
	return changed;
}

static const struct reg_tag tag_other = { .kinds = TAG_OTHER };

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

static int load_error(struct loader *ld, uint32_t insn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int load_error(struct loader *ld, uint32_t insn, const char *fmt, ...)
{
	va_list ap;
	int pos;

	if (insn == UINT32_MAX)
		pos = snprintf(ld->err, ld->err_len, "%s: section '%s': ",
			       ld->path, ld->section);
	else
		pos = snprintf(ld->err, ld->err_len,
			       "%s: section '%s': instruction %u: ", ld->path,
			       ld->section, insn);
	if (pos < 0 || (size_t)pos >= ld->err_len)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(ld->err + pos, ld->err_len - pos, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool insn_is_lookup_call(const struct ebpf_insn *ins)
{
	return ins->code == (BPF_JMP | EBPF_CALL) && ins->src_reg == 0 &&
	       ins->imm == BPF_FUNC_map_lookup_elem;
}

static const struct lrx_bpf_ctx_field *ctx_field(const struct lrx_bpf_ctx_type *t,
						 int16_t off, unsigned size);
static unsigned bpf_size_bytes(uint8_t code);

/* What a load puts in its register: data_end from the context (the
 * kernel's PTR_TO_PACKET_END), else something the pass does not track. */
static struct reg_tag load_tag(const struct loader *ld, const struct ebpf_insn *ins,
			       const struct flow_state *s)
{
	const struct lrx_bpf_ctx_field *f =
		s->r[ins->src_reg].kinds == TAG_CTX
			? ctx_field(ld->type, ins->off, bpf_size_bytes(ins->code))
			: NULL;

	return (struct reg_tag){ .kinds = f != NULL && f->kind == LRX_BPF_CTX_DATA_END
					  ? TAG_PKT_END : TAG_OTHER };
}

/* Successor states of instruction i (at most two edges). */
static void flow_step(const struct loader *ld, uint32_t i,
		      const struct flow_state *s, struct flow_state *next,
		      uint32_t *next_at, unsigned *n_next)
{
	const struct ebpf_insn *ins = &ld->insns[i];
	uint8_t cls = BPF_CLASS(ins->code);
	struct flow_state out = *s;

	*n_next = 0;
	switch (cls) {
	case BPF_ALU:
	case EBPF_ALU64:
		/* a copy keeps the tag, and so does an offset into a value
		 * or from data_end */
		if (ins->code == (EBPF_ALU64 | EBPF_MOV | BPF_X))
			out.r[ins->dst_reg] = s->r[ins->src_reg];
		else if (!(ins->code == (EBPF_ALU64 | BPF_ADD | BPF_K) &&
			   s->r[ins->dst_reg].kinds == TAG_VALUE) &&
			 !((ins->code == (EBPF_ALU64 | BPF_ADD | BPF_K) ||
			    ins->code == (EBPF_ALU64 | BPF_SUB | BPF_K)) &&
			   s->r[ins->dst_reg].kinds == TAG_PKT_END))
			out.r[ins->dst_reg] = tag_other;
		break;
	case BPF_LDX:
		out.r[ins->dst_reg] = load_tag(ld, ins, s);
		break;
	case BPF_LD:
		if (ins->code == (BPF_LD | BPF_IMM | EBPF_DW)) {
			if (ld->insn_map[i] >= 0)
				out.r[ins->dst_reg] = (struct reg_tag){
					.kinds = TAG_MAP,
					.map = (uint8_t)ld->insn_map[i] };
			else
				out.r[ins->dst_reg] = tag_other;
			next[0] = out;
			next_at[0] = i + 2;
			*n_next = 1;
			return;
		}
		for (int r = EBPF_REG_0; r <= EBPF_REG_5; r++)
			out.r[r] = tag_other;
		break;
	case BPF_JMP: {
		uint8_t op = BPF_OP(ins->code);

		if (op == EBPF_EXIT)
			return;
		if (op == EBPF_CALL) {
			for (int r = EBPF_REG_1; r <= EBPF_REG_5; r++)
				out.r[r] = tag_other;
			/* .map: the map of the lookup, for the value's tag */
			out.r[EBPF_REG_0] = insn_is_lookup_call(ins) ?
				(struct reg_tag){ .kinds = TAG_MAYBE_NULL,
						  .map = s->r[EBPF_REG_1].kinds == TAG_MAP ?
							 s->r[EBPF_REG_1].map :
							 TAG_MAP_CONFLICT,
						  .null_id = (uint16_t)i } :
				tag_other;
			break;
		}
		if (op == BPF_JA) {
			next[0] = out;
			next_at[0] = i + 1 + ins->off;
			*n_next = 1;
			return;
		}
		next[0] = out;
		next_at[0] = i + 1;
		next[1] = out;
		next_at[1] = i + 1 + ins->off;
		*n_next = 2;
		/* `if rX == 0` / `if rX != 0` on a lookup result: NULL on the
		 * equal edge, a valid value pointer on the other (the kernel's
		 * mark_ptr_or_null_regs, for every copy with the same id) */
		if (BPF_SRC(ins->code) == BPF_K && ins->imm == 0 &&
		    (op == BPF_JEQ || op == EBPF_JNE) &&
		    s->r[ins->dst_reg].kinds == TAG_MAYBE_NULL &&
		    s->r[ins->dst_reg].null_id != TAG_NULL_CONFLICT) {
			uint16_t id = s->r[ins->dst_reg].null_id;
			unsigned eq = op == BPF_JEQ ? 1 : 0;

			for (int r = 0; r < EBPF_REG_NUM; r++) {
				if (s->r[r].kinds != TAG_MAYBE_NULL ||
				    s->r[r].null_id != id)
					continue;
				next[eq].r[r] = (struct reg_tag){
					.kinds = TAG_NULL };
				next[1 - eq].r[r] = (struct reg_tag){
					.kinds = TAG_VALUE, .map = s->r[r].map };
			}
		}
		return;
	}
	default: /* ST, STX: no register changes */
		break;
	}
	next[0] = out;
	next_at[0] = i + 1;
	*n_next = 1;
}

static int flow_analyse(struct loader *ld)
{
	struct flow_state next[2];
	uint32_t next_at[2];
	unsigned n_next;
	bool changed = true;

	ld->in = calloc(ld->n + 2, sizeof(*ld->in));
	if (ld->in == NULL)
		return -ENOMEM;
	/* the register fields are 4 bits: r11..r15 would index past the
	 * tracked state (found by tests/fuzz/fuzz_bpf_elf); the kernel's
	 * check_reg_arg rejects them the same way */
	for (uint32_t i = 0; i < ld->n; i++) {
		unsigned dst = ld->insns[i].dst_reg, src = ld->insns[i].src_reg;

		if (dst >= EBPF_REG_NUM || src >= EBPF_REG_NUM)
			return load_error(ld, i, "register r%u does not exist "
					  "(r0..r10)", RTE_MAX(dst, src));
	}
	ld->in[0].reached = true;
	for (int r = 0; r < EBPF_REG_NUM; r++)
		ld->in[0].r[r] = tag_other;
	ld->in[0].r[EBPF_REG_1] = (struct reg_tag){ .kinds = TAG_CTX };

	/* forward jumps only (rte_bpf rejects loops), so this settles in one
	 * pass; the loop bounds the rare back edge */
	for (uint32_t pass = 0; changed && pass <= ld->n; pass++) {
		changed = false;
		for (uint32_t i = 0; i < ld->n; i++) {
			if (!ld->in[i].reached)
				continue;
			flow_step(ld, i, &ld->in[i], next, next_at, &n_next);
			for (unsigned e = 0; e < n_next; e++) {
				if (next_at[e] > ld->n)
					return load_error(ld, i,
						"jump out of the program");
				changed |= state_merge(&ld->in[next_at[e]],
						       &next[e]);
			}
			if (BPF_CLASS(ld->insns[i].code) == BPF_LD &&
			    ld->insns[i].code == (BPF_LD | BPF_IMM | EBPF_DW))
				i++;
		}
	}
	/* a path runs past the last instruction (no exit on it): the
	 * kernel's check_cfg refuses that ("last insn is not an exit or
	 * jmp"); rte_bpf_load (DPDK 22.11) reads past the program and
	 * crashes (found by tests/fuzz/fuzz_bpf_verify) */
	if (ld->in[ld->n].reached)
		return load_error(ld, ld->n - 1, "execution runs past the last "
				  "instruction (a path without exit)");
	return 0;
}

/* ---- Rewrite --------------------------------------------------------------- */
#define BAD_PTR (TAG_CTX | TAG_MAP | TAG_MAYBE_NULL | TAG_NULL)

static int check_deref(struct loader *ld, uint32_t i, uint8_t reg,
		       const struct reg_tag *t, const char *what)
{
	if (t->kinds & (TAG_MAYBE_NULL | TAG_NULL))
		return load_error(ld, i,
			"%s through r%u, a bpf_map_lookup_elem result that "
			"may be NULL (test it against 0 first)", what, reg);
	if (t->kinds & TAG_MAP)
		return load_error(ld, i,
			"%s through r%u, a map pointer (direct map access "
			"is not supported: use bpf_map_lookup_elem)",
			what, reg);
	if (t->kinds & TAG_PKT_END)
		return load_error(ld, i,
			"%s through r%u, which holds data_end (the end of the "
			"packet%s): packet pointers are compared with it, never "
			"read or written through it (the kernel: invalid mem "
			"access 'pkt_end')", what, reg,
			t->kinds == TAG_PKT_END ? "" : " on some paths");
	return 0;
}

static unsigned bpf_size_bytes(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

/* The field of the program type that holds [off, off + size), or NULL. */
static const struct lrx_bpf_ctx_field *ctx_field(const struct lrx_bpf_ctx_type *t,
						 int16_t off, unsigned size)
{
	for (const struct lrx_bpf_ctx_field *f = t->fields; f->name; f++)
		if (off >= f->off && off + (int)size <= f->off + f->size)
			return f;
	return NULL;
}

/* "data@0, data_end@4, ..." for the messages. */
static void ctx_field_list(const struct lrx_bpf_ctx_type *t, bool writable,
			   char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (const struct lrx_bpf_ctx_field *f = t->fields; f->name; f++) {
		if (writable && !f->writable)
			continue;
		int w = snprintf(buf + used, len - used, "%s%s@%u",
				 used ? ", " : "", f->name, f->off);
		if (w < 0 || (size_t)w >= len - used)
			break;
		used += (size_t)w;
	}
}

/* Rewrites one context load (the type's convert_ctx_access); appends 1 or
 * 2 instructions to out. */
static int rewrite_ctx_load(struct loader *ld, uint32_t i,
			    const struct ebpf_insn *ins, struct ebpf_insn *out,
			    uint32_t *n_out)
{
	const struct reg_tag *t = &ld->in[i].r[ins->src_reg];
	const struct lrx_bpf_ctx_type *type = ld->type;
	unsigned size = bpf_size_bytes(ins->code);
	const struct lrx_bpf_ctx_field *f = ctx_field(type, ins->off, size);
	struct ebpf_insn x = *ins;

	if (t->kinds != TAG_CTX)
		return load_error(ld, i,
			"load through r%u, which holds the %s context on "
			"some paths only", ins->src_reg, type->name);
	if (BPF_MODE(ins->code) != BPF_MEM || f == NULL ||
	    (size != f->size &&
	     (!type->narrow_loads || f->kind != LRX_BPF_CTX_FIELD)))
		goto unsupported;
	/* bpf_skb_is_valid_access: a narrow load at a multiple of its size */
	if (ins->off % (int)size != 0)
		return load_error(ld, i,
			"context access at offset %d, size %u is misaligned: a "
			"load of %u bytes starts at a multiple of %u (the kernel's "
			"bpf_skb_is_valid_access refuses it)", ins->off, size,
			size, size);
	switch (f->kind) {
	case LRX_BPF_CTX_DATA:
		if (ins->dst_reg != ins->src_reg)
			out[(*n_out)++] = (struct ebpf_insn){
				.code = EBPF_ALU64 | EBPF_MOV | BPF_X,
				.dst_reg = ins->dst_reg,
				.src_reg = ins->src_reg };
		out[(*n_out)++] = (struct ebpf_insn){
			.code = EBPF_ALU64 | BPF_ADD | BPF_K,
			.dst_reg = ins->dst_reg,
			.imm = ld->packet_view ? 0 : (int32_t)type->hdr_size };
		return 0;
	case LRX_BPF_CTX_DATA_END:
		x.code = BPF_LDX | BPF_MEM | EBPF_DW;
		x.off = ld->packet_view ? 0 : (int16_t)f->to;
		break;
	default: /* a narrow load reads the same bytes of listrx's field */
		x.off = ld->packet_view ? 0 : (int16_t)(f->to + (ins->off - f->off));
		break;
	}
	out[(*n_out)++] = x;
	return 0;
unsupported: {
	char fields[512];

	ctx_field_list(type, false, fields, sizeof(fields));
	return load_error(ld, i,
		"context access at offset %d, size %u is not supported "
		"(struct %s: %s loads of %s)", ins->off, size, type->name,
		type->narrow_loads ? "32-bit (or narrower)" : "32-bit",
		fields);
	}
}

/* Rewrites one store into the context (a writable field, whole). */
static int rewrite_ctx_store(struct loader *ld, uint32_t i,
			     struct ebpf_insn *x)
{
	const struct lrx_bpf_ctx_type *type = ld->type;
	unsigned size = bpf_size_bytes(x->code);
	const struct lrx_bpf_ctx_field *f = ctx_field(type, x->off, size);
	char fields[256];

	ctx_field_list(type, true, fields, sizeof(fields));
	if (fields[0] == '\0')
		return load_error(ld, i, "writes to the %s context (r%u)",
				  type->name, x->dst_reg);
	if (BPF_MODE(x->code) != BPF_MEM || f == NULL || !f->writable ||
	    f->off != x->off || f->size != size)
		return load_error(ld, i,
			"store to the %s context at offset %d, size %u: only "
			"whole 32-bit stores to %s are allowed", type->name,
			x->off, size, fields);
	x->off = ld->packet_view ? 0 : (int16_t)f->to;
	return 0;
}

static int rewrite_call(struct loader *ld, uint32_t i, struct ebpf_insn *x)
{
	const struct flow_state *s = &ld->in[i];
	const struct helper_info *h = NULL;
	struct lrx_xdp_prog *prog = ld->prog;
	int idx;

	if (x->src_reg == EBPF_PSEUDO_CALL)
		return load_error(ld, i,
			"bpf-to-bpf call (subprograms are not supported: make "
			"the function __always_inline)");
	for (size_t k = 0; k < RTE_DIM(helpers); k++)
		if (helpers[k].id == x->imm)
			h = &helpers[k];
	if (h == NULL)
		return load_error(ld, i,
			"calls helper %d (%s), which listrx does not provide "
			"(supported: bpf_map_lookup_elem, bpf_map_update_elem, "
			"bpf_map_delete_elem, bpf_ktime_get_ns, "
			"bpf_get_prandom_u32, bpf_get_smp_processor_id, "
			"bpf_redirect)", x->imm, helper_name(x->imm));
	for (uint32_t a = 0; a < h->nb_args; a++) {
		const struct reg_tag *t = &s->r[EBPF_REG_1 + a];

		if (t->kinds & TAG_CTX)
			return load_error(ld, i,
				"passes the %s context to %s", ld->type->name,
				h->name);
		if (a > 0 && (t->kinds & (TAG_MAYBE_NULL | TAG_NULL | TAG_MAP)))
			return load_error(ld, i,
				"passes a map or a possibly-NULL pointer as "
				"argument %u of %s", a + 1, h->name);
	}
	if (h->id == BPF_FUNC_map_lookup_elem ||
	    h->id == BPF_FUNC_map_update_elem ||
	    h->id == BPF_FUNC_map_delete_elem) {
		const struct reg_tag *t = &s->r[EBPF_REG_1];
		int which = h->id == BPF_FUNC_map_lookup_elem ? H_LOOKUP :
			    h->id == BPF_FUNC_map_update_elem ? H_UPDATE :
								H_DELETE;

		if (t->kinds != TAG_MAP || t->map == TAG_MAP_CONFLICT)
			return load_error(ld, i,
				"%s: the map argument (r1) is not one known "
				"map on every path", h->name);
		idx = prog->map_xsym[t->map][which];
		if (idx < 0) {
			idx = xsym_add(prog, h, h->fn, &prog->maps[t->map]);
			prog->map_xsym[t->map][which] = (int16_t)idx;
		}
	} else {
		uint64_t (*fn)(uint64_t, uint64_t, uint64_t, uint64_t,
			       uint64_t) = h->fn ? h->fn : ld->type->redirect;

		idx = -1;
		for (uint32_t k = 0; k < prog->nb_xsym; k++)
			if (prog->xsym[k].func.val == fn)
				idx = (int)k;
		if (idx < 0)
			idx = xsym_add(prog, h, fn, NULL);
		if (h->id == BPF_FUNC_redirect)
			prog->uses_redirect = true;
	}
	if (idx < 0)
		return load_error(ld, i, "too many external symbols");
	x->imm = idx;
	return 0;
}

/* ---- XDP metadata kfuncs ------------------------------------------------
 * bpf_xdp_metadata_rx_hash, _rx_timestamp and _rx_vlan_tag (net/core/xdp.c),
 * which the kernel resolves per device for a device-bound program
 * (bpf_dev_bound_resolve_kfunc: mlx5e_xdp_rx_hash, veth_xdp_rx_hash...).
 * clang emits `call -1` relocated against the undefined symbol. Each call
 * becomes, in place, loads of what the stage wrote into the context
 * header from the frame's descriptor (lrx_xdp_md_hints) and stores
 * through the output pointers, the return value in r0: no branch, so no
 * extra rte_bpf path. The outputs are written (0) when the kfunc fails
 * too: rte_bpf's verifier must see them written on every path, and clang
 * loads them before it tests the return value. */
struct kfunc_out {
	uint16_t from; /* offset in struct lrx_xdp_md */
	uint8_t size;  /* BPF_W, BPF_H, EBPF_DW */
	uint8_t reg;   /* the output pointer's register */
};

struct kfunc_info {
	const char *name;
	uint32_t hint;
	uint16_t rc; /* offset of its int64_t return value */
	uint8_t n_out;
	struct kfunc_out out[2];
};

#define MD_OFF(f) offsetof(struct lrx_xdp_md, f)
static const struct kfunc_info kfuncs[] = {
	{ "bpf_xdp_metadata_rx_hash", LRX_XDP_HINT_HASH, MD_OFF(rx_hash_rc), 2,
	  { { MD_OFF(rx_hash), BPF_W, EBPF_REG_2 },
	    { MD_OFF(rx_hash_type), BPF_W, EBPF_REG_3 } } },
	{ "bpf_xdp_metadata_rx_timestamp", LRX_XDP_HINT_TIMESTAMP,
	  MD_OFF(rx_timestamp_rc), 1,
	  { { MD_OFF(rx_timestamp), EBPF_DW, EBPF_REG_2 } } },
	{ "bpf_xdp_metadata_rx_vlan_tag", LRX_XDP_HINT_VLAN, MD_OFF(rx_vlan_rc), 2,
	  { { MD_OFF(rx_vlan_proto), BPF_H, EBPF_REG_2 },
	    { MD_OFF(rx_vlan_tci), BPF_H, EBPF_REG_3 } } },
};
#undef MD_OFF
/* what one call becomes: the return value, a load and a store per output */
#define KFUNC_INSNS_MAX 5

/* A call relocated against an undefined symbol: a kfunc, noted for the
 * rewrite (libbpf finds it in the kernel's BTF:
 * bpf_object__resolve_ksym_func_btf_id). */
static int kfunc_record(struct loader *ld, uint32_t at, const char *name)
{
	for (size_t k = 0; k < RTE_DIM(kfuncs); k++) {
		if (strcmp(kfuncs[k].name, name) != 0)
			continue;
		/* the kernel registers them for BPF_PROG_TYPE_XDP only
		 * (xdp_metadata_kfunc_set) */
		if (ld->type != &lrx_bpf_ctx_xdp)
			return load_error(ld, at, "calls kfunc %s, which the "
					  "kernel gives XDP programs only", name);
		if (ld->n_kcalls == XDP_MAX_KFUNC_CALLS)
			return load_error(ld, at, "more than %d kfunc calls",
					  XDP_MAX_KFUNC_CALLS);
		ld->kcalls[ld->n_kcalls++] =
			(struct kfunc_call){ .insn = at, .kfunc = (uint8_t)k };
		return 0;
	}
	return load_error(ld, at, "calls kfunc '%s', which listrx does not "
			  "provide (supported: bpf_xdp_metadata_rx_hash, "
			  "bpf_xdp_metadata_rx_timestamp, "
			  "bpf_xdp_metadata_rx_vlan_tag)", name);
}

static const struct kfunc_info *kfunc_at(const struct loader *ld, uint32_t i)
{
	for (unsigned k = 0; k < ld->n_kcalls; k++)
		if (ld->kcalls[k].insn == i)
			return &kfuncs[ld->kcalls[k].kfunc];
	return NULL;
}

/* One kfunc call expanded into out (1); its arguments checked as the
 * kernel's check_kfunc_args does: r1 the context, the outputs memory. */
static int rewrite_kfunc(struct loader *ld, uint32_t i,
			 const struct kfunc_info *kf, struct ebpf_insn *out,
			 uint32_t *o)
{
	const struct flow_state *s = &ld->in[i];

	if (s->r[EBPF_REG_1].kinds != TAG_CTX)
		return load_error(ld, i, "%s: argument 1 (r1) is not the xdp_md "
				  "context on every path", kf->name);
	for (unsigned k = 0; k < kf->n_out; k++)
		if (s->r[kf->out[k].reg].kinds & BAD_PTR)
			return load_error(ld, i, "%s: argument %u (r%u) is the "
					  "context, a map or a possibly-NULL "
					  "pointer", kf->name, kf->out[k].reg,
					  kf->out[k].reg);
	/* the packet view reads the frame's first bytes instead */
	out[(*o)++] = (struct ebpf_insn){ .code = BPF_LDX | BPF_MEM | EBPF_DW,
		.dst_reg = EBPF_REG_0, .src_reg = EBPF_REG_1,
		.off = ld->packet_view ? 0 : kf->rc };
	for (unsigned k = 0; k < kf->n_out; k++) {
		out[(*o)++] = (struct ebpf_insn){
			.code = BPF_LDX | BPF_MEM | kf->out[k].size,
			.dst_reg = EBPF_REG_4, .src_reg = EBPF_REG_1,
			.off = ld->packet_view ? 0 : (int16_t)kf->out[k].from };
		out[(*o)++] = (struct ebpf_insn){
			.code = BPF_STX | BPF_MEM | kf->out[k].size,
			.dst_reg = kf->out[k].reg, .src_reg = EBPF_REG_4 };
	}
	ld->prog->hints |= kf->hint;
	return 1;
}

/* LDX: a context load rewritten into out (1), or a checked load (0) */
static int rewrite_ldx(struct loader *ld, uint32_t i, const struct ebpf_insn *ins,
		       const struct flow_state *s, struct ebpf_insn *out,
		       uint32_t *o)
{
	int rc;

	if (s->r[ins->src_reg].kinds & TAG_CTX) {
		rc = rewrite_ctx_load(ld, i, ins, out, o);
		return rc < 0 ? rc : 1;
	}
	rc = check_deref(ld, i, ins->src_reg, &s->r[ins->src_reg], "load");
	return rc < 0 ? rc : 0;
}

/* ST/STX: a context store rewritten in x, else a checked store; no
 * pointer the verifier tracks is spilled to memory */
static int rewrite_store(struct loader *ld, uint32_t i,
			 const struct ebpf_insn *ins,
			 const struct flow_state *s, struct ebpf_insn *x)
{
	uint8_t cls = BPF_CLASS(ins->code);
	int rc;

	if (s->r[ins->dst_reg].kinds & TAG_CTX) {
		if (s->r[ins->dst_reg].kinds != TAG_CTX)
			return load_error(ld, i,
				"store through r%u, which holds "
				"the %s context on some paths "
				"only", ins->dst_reg,
				ld->type->name);
		if (cls == BPF_STX &&
		    (s->r[ins->src_reg].kinds & BAD_PTR & ~TAG_NULL))
			return load_error(ld, i,
				"stores r%u (the context, a map "
				"or a possibly-NULL value "
				"pointer) to memory: spilling it "
				"is not supported", ins->src_reg);
		rc = rewrite_ctx_store(ld, i, x);
		return rc < 0 ? rc : 0;
	}
	rc = check_deref(ld, i, ins->dst_reg, &s->r[ins->dst_reg], "store");
	if (rc < 0)
		return rc;
	if (cls == BPF_STX &&
	    (s->r[ins->src_reg].kinds & BAD_PTR & ~TAG_NULL))
		return load_error(ld, i,
			"stores r%u (the context, a map or a "
			"possibly-NULL value pointer) to memory: "
			"spilling it is not supported",
			ins->src_reg);
	return 0;
}

/* ALU/ALU64: no arithmetic on the context, a map or a maybe-NULL value */
static int rewrite_alu(struct loader *ld, uint32_t i, const struct ebpf_insn *ins,
		       const struct flow_state *s)
{
	uint8_t op = BPF_OP(ins->code);
	bool mov64 = ins->code == (EBPF_ALU64 | EBPF_MOV | BPF_X);
	bool uses_dst = op != EBPF_MOV;

	if (!mov64 && BPF_SRC(ins->code) == BPF_X &&
	    (s->r[ins->src_reg].kinds & BAD_PTR & ~TAG_NULL))
		return load_error(ld, i,
			"arithmetic with r%u, which holds the "
			"context, a map or a possibly-NULL "
			"value pointer", ins->src_reg);
	if (uses_dst &&
	    (s->r[ins->dst_reg].kinds & BAD_PTR & ~TAG_NULL))
		return load_error(ld, i,
			"arithmetic on r%u, which holds the "
			"context, a map or a possibly-NULL "
			"value pointer", ins->dst_reg);
	return 0;
}

/* LD: ld_imm64 copied into out (1), a map relocation resolved to the
 * map's address (as the kernel's resolve_pseudo_ldimm64) */
static int rewrite_ld_imm64(struct loader *ld, uint32_t *pi, bool wide,
			    struct ebpf_insn *out, uint32_t *po)
{
	uint32_t i = *pi, o = *po;
	const struct ebpf_insn x = ld->insns[i];

	if (!wide)
		return load_error(ld, i,
			"legacy packet access (LD_ABS/LD_IND) "
			"is not supported for XDP");
	if (i + 1 >= ld->n)
		return load_error(ld, i, "truncated ld_imm64");
	out[o++] = x;
	out[o] = ld->insns[++i];
	*pi = i;
	if (ld->insn_map[i - 1] >= 0) {
		uint64_t addr = (uintptr_t)&ld->prog->maps[ld->insn_map[i - 1]];

		out[o - 1].src_reg = 0;
		out[o - 1].imm = (int32_t)(uint32_t)addr;
		out[o].imm = (int32_t)(uint32_t)(addr >> 32);
	} else if (x.src_reg != 0) {
		return load_error(ld, i - 1,
			"ld_imm64 with src_reg %u and no map "
			"relocation", x.src_reg);
	}
	*po = o + 1;
	return 1;
}

/* JMP: a helper call resolved in x; no compare of the context pointer */
static int rewrite_jmp(struct loader *ld, uint32_t i, const struct ebpf_insn *ins,
		       const struct flow_state *s, struct ebpf_insn *x)
{
	if (BPF_OP(ins->code) == EBPF_CALL) {
		int rc = rewrite_call(ld, i, x);
		return rc < 0 ? rc : 0;
	}
	if (BPF_OP(ins->code) != EBPF_EXIT &&
	    ((s->r[ins->dst_reg].kinds & TAG_CTX) ||
	     (BPF_SRC(ins->code) == BPF_X &&
	      (s->r[ins->src_reg].kinds & TAG_CTX))))
		return load_error(ld, i,
			"compares the %s context pointer",
			ld->type->name);
	return 0;
}

/* jump offsets over the (possibly longer) rewritten program */
static int rewrite_jumps(struct loader *ld, struct ebpf_insn *out,
			 const uint32_t *new_at)
{
	for (uint32_t i = 0; i < ld->n; i++) {
		const struct ebpf_insn *ins = &ld->insns[i];
		uint8_t op = BPF_OP(ins->code);
		uint32_t target;

		if (ins->code == (BPF_LD | BPF_IMM | EBPF_DW)) {
			i++;
			continue;
		}
		if (BPF_CLASS(ins->code) != BPF_JMP || op == EBPF_CALL ||
		    op == EBPF_EXIT)
			continue;
		target = i + 1 + ins->off;
		if (target >= ld->n)
			return load_error(ld, i, "jump out of the program");
		out[new_at[i]].off = (int16_t)((int64_t)new_at[target] -
					       new_at[i] - 1);
	}
	return 0;
}

/* Produces the rewritten program into out (capacity 2n, and
 * KFUNC_INSNS_MAX per kfunc call); new_at[i] is
 * where old instruction i starts in it. */
static int rewrite(struct loader *ld, struct ebpf_insn *out, uint32_t *new_at,
		   uint32_t *n_out)
{
	uint32_t o = 0;
	int rc;

	for (uint32_t i = 0; i < ld->n; i++) {
		const struct ebpf_insn *ins = &ld->insns[i];
		const struct flow_state *s = &ld->in[i];
		uint8_t cls = BPF_CLASS(ins->code);
		struct ebpf_insn x = *ins;
		bool wide = ins->code == (BPF_LD | BPF_IMM | EBPF_DW);

		new_at[i] = o;
		if (wide && i + 1 < ld->n)
			new_at[i + 1] = o + 1;
		if (!s->reached) { /* rte_bpf reports unreachable code */
			out[o++] = x;
			if (wide && i + 1 < ld->n)
				out[o++] = ld->insns[++i];
			continue;
		}
		switch (cls) {
		case BPF_LDX:
			rc = rewrite_ldx(ld, i, ins, s, out, &o);
			break;
		case BPF_ST:
		case BPF_STX:
			rc = rewrite_store(ld, i, ins, s, &x);
			break;
		case BPF_ALU:
		case EBPF_ALU64:
			rc = rewrite_alu(ld, i, ins, s);
			break;
		case BPF_LD:
			rc = rewrite_ld_imm64(ld, &i, wide, out, &o);
			break;
		case BPF_JMP:
			rc = kfunc_at(ld, i) != NULL ?
				rewrite_kfunc(ld, i, kfunc_at(ld, i), out, &o) :
				rewrite_jmp(ld, i, ins, s, &x);
			break;
		default:
			return load_error(ld, i,
				"instruction class 0x%x (opcode 0x%02x) is not "
				"supported by rte_bpf (JMP32/ALU32 jumps: "
				"compile with -mcpu=v2)", cls, ins->code);
		}
		if (rc < 0)
			return rc;
		if (rc == 0) /* 1: the helper wrote out[] itself */
			out[o++] = x;
	}
	new_at[ld->n] = o;
	rc = rewrite_jumps(ld, out, new_at);
	if (rc < 0)
		return rc;
	*n_out = o;
	return 0;
}

/* libbpf explains why it cannot open an object in its log; keep the
 * last warning for the error message. It names the object's path, so the
 * buffers that carry it have room for a long one. */
#define LIBBPF_WHY_MAX 1024
static __thread char libbpf_last_warning[LIBBPF_WHY_MAX];

static int libbpf_keep_warning(enum libbpf_print_level level,
			       const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN) {
		vsnprintf(libbpf_last_warning, sizeof(libbpf_last_warning),
			  fmt, ap);
		libbpf_last_warning[strcspn(libbpf_last_warning, "\n")] = '\0';
	}
	return 0;
}

/* ---- ELF ----------------------------------------------------------------- */

struct btf_maps_reply {
	int status; /* 0, or -EINVAL with why */
	uint32_t n_maps; /* may exceed LRX_XDP_MAX_MAPS: only that many sent */
	struct lrx_xdp_map_def maps[LRX_XDP_MAX_MAPS];
	char why[LIBBPF_WHY_MAX];
};

/* In the child: libbpf reads the object's BTF map definitions. */
static void btf_maps_read(const char *path, struct btf_maps_reply *r)
{
	libbpf_print_fn_t old_print = libbpf_set_print(libbpf_keep_warning);
	struct bpf_object *obj;
	struct bpf_map *m;

	libbpf_last_warning[0] = '\0';
	obj = bpf_object__open_file(path, NULL);
	libbpf_set_print(old_print);
	if (obj == NULL || libbpf_get_error(obj) != 0) {
		r->status = -EINVAL;
		snprintf(r->why, sizeof(r->why), "%s", libbpf_last_warning);
		return;
	}
	bpf_object__for_each_map(m, obj) {
		if (bpf_map__is_internal(m))
			continue; /* .rodata/.data/.bss: rejected if used */
		if (r->n_maps < LRX_XDP_MAX_MAPS) {
			struct lrx_xdp_map_def *d = &r->maps[r->n_maps];
			snprintf(d->name, sizeof(d->name), "%s", bpf_map__name(m));
			d->type = bpf_map__type(m);
			d->key_size = bpf_map__key_size(m);
			d->value_size = bpf_map__value_size(m);
			d->max_entries = bpf_map__max_entries(m);
			/* no layout (a type it cannot flatten): bytes only */
			if (lrx_btf_map_layout(bpf_object__btf(obj),
					       bpf_map__btf_key_type_id(m),
					       bpf_map__btf_value_type_id(m),
					       d->key_size, d->value_size,
					       &d->layout) < 0)
				d->layout.n_fields = 0;
		}
		r->n_maps++;
	}
	bpf_object__close(obj);
}

/* libbpf 1.1 (Debian 12) dereferences bad pointers on some malformed
 * objects (tests/fuzz/corpus/bpf_elf/libbpf_open_segv). Its parse
 * runs in a child process, so that a crash there is a load error naming
 * the object (exit 2), never a crash of listrx. The child does no DPDK
 * call: it parses, writes the reply into the pipe and _exits; a fault
 * kills it with the signal's default action. */
static int btf_maps_isolated(const char *path, struct btf_maps_reply *r)
{
	int fds[2];

	memset(r, 0, sizeof(*r));
	if (pipe(fds) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	if (pid == 0) {
		/* a fault dies by its own signal here: the parent's handlers
		 * (a sanitizer's report, a fuzzer's crash dump, listrx's
		 * SIGINT/SIGTERM flag) are not the child's business */
		static const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT,
					     SIGINT, SIGTERM};
		for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
			signal(faults[i], SIG_DFL);
		close(fds[0]);
		btf_maps_read(path, r);
		const char *p = (const char *)r;
		size_t left = sizeof(*r);
		while (left > 0) {
			ssize_t w = write(fds[1], p, left);
			if (w <= 0)
				_exit(1);
			p += w;
			left -= (size_t)w;
		}
		_exit(0);
	}
	close(fds[1]);
	size_t got = 0;
	while (got < sizeof(*r)) {
		ssize_t n = read(fds[0], (char *)r + got, sizeof(*r) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	int wstatus = 0;
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	if (got != sizeof(*r) || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
		memset(r, 0, sizeof(*r));
		r->status = -EINVAL;
		if (WIFSIGNALED(wstatus))
			snprintf(r->why, sizeof(r->why),
				 "libbpf crashed parsing it (signal %d): the ELF "
				 "or BTF is malformed",
				 WTERMSIG(wstatus));
		else
			snprintf(r->why, sizeof(r->why),
				 "the libbpf parse did not complete");
	}
	r->why[sizeof(r->why) - 1] = '\0';
	return 0;
}

static int maps_from_btf(struct loader *ld, int socket_id)
{
	struct lrx_xdp_prog *prog = ld->prog;
	struct btf_maps_reply *r = malloc(sizeof(*r));
	int rc;

	if (r == NULL)
		return load_error(ld, UINT32_MAX, "out of memory");
	if (ld->maps_given != NULL) {
		*r = *ld->maps_given;
		rc = 0;
	} else {
		rc = btf_maps_isolated(ld->path, r);
	}
	if (rc < 0) {
		rc = load_error(ld, UINT32_MAX,
			"cannot start the libbpf parse: %s", strerror(-rc));
		goto out;
	}
	if (r->status < 0) {
		rc = load_error(ld, UINT32_MAX,
			"libbpf cannot open the object (not a BPF ELF "
			"object, or its BTF map definitions are invalid)%s%s",
			r->why[0] ? ": " : "", r->why);
		goto out;
	}
	if (r->n_maps > LRX_XDP_MAX_MAPS) {
		rc = load_error(ld, UINT32_MAX, "more than %d maps",
				LRX_XDP_MAX_MAPS);
		goto out;
	}
	for (uint32_t i = 0; i < r->n_maps; i++) {
		const struct lrx_xdp_map_def *d = &r->maps[i];
		rc = lrx_xdp_map_create(&prog->maps[prog->n_maps], d->name,
			d->type, d->key_size, d->value_size,
			d->max_entries, socket_id, ld->err, ld->err_len);
		if (rc < 0) {
			char why[256];

			snprintf(why, sizeof(why), "%s", ld->err);
			load_error(ld, UINT32_MAX, "%s", why);
			break;
		}
		struct lrx_xdp_map *map = &prog->maps[prog->n_maps++];
		if (d->layout.n_fields) {
			map->layout = malloc(sizeof(*map->layout));
			if (map->layout == NULL) {
				rc = load_error(ld, UINT32_MAX, "out of memory");
				break;
			}
			*map->layout = d->layout;
		}
	}
out:
	free(r);
	return rc;
}

static int map_index(const struct lrx_xdp_prog *prog, const char *name)
{
	for (unsigned k = 0; k < prog->n_maps; k++)
		if (strcmp(prog->maps[k].name, name) == 0)
			return (int)k;
	return -1;
}

/* the sections elf_read uses, found by elf_find_sections */
struct elf_secs {
	size_t shstrndx, prog_idx, maps_idx;
	Elf_Scn *symtab, *rel, *code;
};

/* the symbol table, .maps, the code section ld->section and its SHT_REL */
static int elf_find_sections(struct loader *ld, Elf *elf, struct elf_secs *es)
{
	Elf_Scn *scn = NULL;
	char sections[512] = "";
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;

		if (gelf_getshdr(scn, &sh) == NULL)
			continue;
		name = elf_strptr(elf, es->shstrndx, sh.sh_name);
		if (name == NULL)
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			es->symtab = scn;
		if (strcmp(name, ".maps") == 0)
			es->maps_idx = elf_ndxscn(scn);
		if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_EXECINSTR) &&
		    sh.sh_size > 0) {
			size_t len = strlen(sections);

			snprintf(sections + len, sizeof(sections) - len, "%s%s",
				 len ? ", " : "", name);
			if (strcmp(name, ld->section) == 0) {
				es->code = scn;
				es->prog_idx = elf_ndxscn(scn);
			}
		}
	}
	if (es->code == NULL)
		return load_error(ld, UINT32_MAX,
			"no such code section (the object has: %s)",
			sections[0] ? sections : "none");
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL)
		if (gelf_getshdr(scn, &sh) != NULL && sh.sh_type == SHT_REL &&
		    sh.sh_info == es->prog_idx)
			es->rel = scn;
	return 0;
}

/* the code section's instructions into ld->insns, no map references yet */
static int elf_read_code(struct loader *ld, Elf_Scn *code)
{
	Elf_Data *data = elf_getdata(code, NULL);

	if (data == NULL || data->d_size == 0 ||
	    data->d_size % sizeof(struct ebpf_insn) != 0 ||
	    data->d_size / sizeof(struct ebpf_insn) > XDP_MAX_INSNS)
		return load_error(ld, UINT32_MAX,
			"empty or malformed code section");
	ld->n = data->d_size / sizeof(struct ebpf_insn);
	ld->insns = malloc(data->d_size);
	ld->insn_map = malloc(ld->n * sizeof(*ld->insn_map));
	if (ld->insns == NULL || ld->insn_map == NULL)
		return -ENOMEM;
	memcpy(ld->insns, data->d_buf, data->d_size);
	memset(ld->insn_map, 0xff, ld->n * sizeof(*ld->insn_map));
	return 0;
}

/* one function per code section (no bpf-to-bpf subprograms) */
static int elf_check_funcs(struct loader *ld, const struct elf_secs *es)
{
	Elf_Data *syms = elf_getdata(es->symtab, NULL);
	unsigned funcs = 0;

	for (size_t k = 0; syms != NULL && k < syms->d_size / sizeof(Elf64_Sym);
	     k++) {
		GElf_Sym sym;

		if (gelf_getsym(syms, (int)k, &sym) != NULL &&
		    GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
		    sym.st_shndx == es->prog_idx)
			funcs++;
	}
	if (funcs > 1)
		return load_error(ld, UINT32_MAX,
			"%u functions in one section (one program per section "
			"is supported; subprograms must be __always_inline)",
			funcs);
	return 0;
}

/* one relocation: an ld_imm64 of a .maps symbol, noted in ld->insn_map
 * (as libbpf's bpf_program__record_reloc, maps only) */
static int elf_reloc(struct loader *ld, Elf *elf, const struct elf_secs *es,
		     Elf_Data *rels, Elf_Data *syms, size_t symstr, size_t k)
{
	GElf_Rel r;
	GElf_Sym sym;
	GElf_Shdr tsh;
	const char *sym_name, *sec_name = "?";
	uint32_t at;
	Elf_Scn *tscn;
	int m;

	if (gelf_getrel(rels, (int)k, &r) == NULL ||
	    gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &sym) == NULL)
		return load_error(ld, UINT32_MAX, "bad relocation %zu", k);
	at = (uint32_t)(r.r_offset / sizeof(struct ebpf_insn));
	sym_name = elf_strptr(elf, symstr, sym.st_name);
	tscn = elf_getscn(elf, sym.st_shndx);
	if (tscn != NULL && gelf_getshdr(tscn, &tsh) != NULL)
		sec_name = elf_strptr(elf, es->shstrndx, tsh.sh_name);
	if (at >= ld->n)
		return load_error(ld, UINT32_MAX,
			"relocation %zu outside the section", k);
	if (ld->insns[at].code == (BPF_JMP | EBPF_CALL) &&
	    sym.st_shndx == SHN_UNDEF)
		return kfunc_record(ld, at, sym_name ? sym_name : "?");
	if (ld->insns[at].code == (BPF_JMP | EBPF_CALL))
		return load_error(ld, at,
			"bpf-to-bpf call (subprograms are not "
			"supported: make the function __always_inline)");
	if (ld->insns[at].code != (BPF_LD | BPF_IMM | EBPF_DW) ||
	    es->maps_idx == 0 || sym.st_shndx != es->maps_idx)
		return load_error(ld, at,
			"refers to '%s' in section '%s' (global "
			"variables and data sections are not supported; "
			"maps must be BTF-defined in .maps)",
			sym_name ? sym_name : "?",
			sec_name ? sec_name : "?");
	m = map_index(ld->prog, sym_name ? sym_name : "");
	if (m < 0)
		return load_error(ld, at, "unknown map '%s'",
				  sym_name ? sym_name : "?");
	ld->insn_map[at] = (int16_t)m;
	return 0;
}

/* Finds the section, copies its instructions and applies the map
 * relocations (records which ld_imm64 loads which map). */
static int elf_read(struct loader *ld, Elf *elf)
{
	struct elf_secs es = { 0 };
	GElf_Ehdr ehdr;
	int rc;

	if (elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &ehdr) == NULL)
		return load_error(ld, UINT32_MAX, "not an ELF object");
	if (ehdr.e_machine != EM_BPF)
		return load_error(ld, UINT32_MAX,
			"not an eBPF object (ELF machine %u; compile with "
			"clang -target bpf)", ehdr.e_machine);
	if (elf_getshdrstrndx(elf, &es.shstrndx) != 0)
		return load_error(ld, UINT32_MAX, "no section name table");
	rc = elf_find_sections(ld, elf, &es);
	if (rc == 0)
		rc = elf_read_code(ld, es.code);
	if (rc < 0)
		return rc;
	if (es.symtab == NULL)
		return load_error(ld, UINT32_MAX, "no symbol table");
	rc = elf_check_funcs(ld, &es);
	if (rc < 0 || es.rel == NULL)
		return rc;

	Elf_Data *syms = elf_getdata(es.symtab, NULL);
	Elf_Data *rels = elf_getdata(es.rel, NULL);
	GElf_Shdr symsh;

	gelf_getshdr(es.symtab, &symsh);
	for (size_t k = 0; rels != NULL && k < rels->d_size / sizeof(Elf64_Rel);
	     k++) {
		rc = elf_reloc(ld, elf, &es, rels, syms, symsh.sh_link, k);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* DPDK 22.11's rte_bpf_validate (evaluate) walks every path from the
 * entry to an exit with no state pruning (the kernel's is_state_visited):
 * n independent branches are 2^n walks, and its load of an object the
 * kernel verifies at once takes minutes (2^20 paths: seconds), deaf to
 * signals. The walk is counted first on the forward-only flow graph
 * (a backward jump is left to rte_bpf, which refuses loops): steps[i] is
 * the instructions the walks from i visit, paths[i] the walks. Saturating. */
#define XDP_WALK_BUDGET (1ull << 24)

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static int walk_cost(const struct ebpf_insn *ins, uint32_t n, uint64_t *paths_out,
		     uint64_t *steps_out)
{
	uint64_t *paths = calloc((size_t)n + 2, sizeof(*paths));
	uint64_t *steps = calloc((size_t)n + 2, sizeof(*steps));

	if (paths == NULL || steps == NULL) {
		free(paths);
		free(steps);
		return -ENOMEM;
	}
	for (uint32_t i = n; i-- > 0;) {
		uint32_t next[2], n_next = 0;
		uint8_t op = BPF_OP(ins[i].code);

		if (ins[i].code == (BPF_LD | BPF_IMM | EBPF_DW))
			next[n_next++] = i + 2;
		else if (BPF_CLASS(ins[i].code) != BPF_JMP || op == EBPF_CALL)
			next[n_next++] = i + 1;
		else if (op == BPF_JA)
			next[n_next++] = i + 1 + (uint32_t)(int32_t)ins[i].off;
		else if (op != EBPF_EXIT) {
			next[n_next++] = i + 1;
			next[n_next++] = i + 1 + (uint32_t)(int32_t)ins[i].off;
		}
		paths[i] = n_next ? 0 : 1; /* an exit ends one walk */
		steps[i] = 0;
		for (uint32_t e = 0; e < n_next; e++)
			if (next[e] > i && next[e] < n) {
				paths[i] = sat_add(paths[i], paths[next[e]]);
				steps[i] = sat_add(steps[i], steps[next[e]]);
			}
		steps[i] = sat_add(steps[i], paths[i]); /* each walk visits i */
	}
	*paths_out = n ? paths[0] : 0;
	*steps_out = n ? steps[0] : 0;
	free(paths);
	free(steps);
	return 0;
}

/* rte_bpf logs why it rejects a program; keep that text for the error. */
static struct rte_bpf *bpf_load_logged(const struct rte_bpf_prm *prm,
				       char *why, size_t why_len)
{
	FILE *old = rte_log_get_stream();
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	struct rte_bpf *bpf;

	if (mem != NULL)
		rte_openlog_stream(mem);
	bpf = rte_bpf_load(prm);
	if (mem != NULL) {
		rte_openlog_stream(old);
		fclose(mem);
	}
	why[0] = '\0';
	if (buf != NULL) {
		/* the last non-empty line */
		char *end = buf + strlen(buf);

		while (end > buf && (end[-1] == '\n' || end[-1] == ' '))
			*--end = '\0';
		char *line = strrchr(buf, '\n');

		snprintf(why, why_len, "%s", line ? line + 1 : buf);
		free(buf);
	}
	return bpf;
}

/* What the pointer register of a load or store at insn holds (the flow
 * pass's tag), or NULL for another instruction. */
static const struct reg_tag *mem_base(const struct loader *ld, uint32_t insn)
{
	if (insn >= ld->n || !ld->in[insn].reached)
		return NULL;
	const struct ebpf_insn *ins = &ld->insns[insn];

	switch (BPF_CLASS(ins->code)) {
	case BPF_LDX:
		return &ld->in[insn].r[ins->src_reg];
	case BPF_ST:
	case BPF_STX:
		return &ld->in[insn].r[ins->dst_reg];
	default:
		return NULL;
	}
}

/* opens the object without blocking on a FIFO; only a regular file is
 * accepted. *fd is the descriptor (or < 0) even on an error */
static int prog_open_file(const char *path, char *err, size_t err_len, int *fd)
{
	/* O_NONBLOCK: a FIFO must not block the open (and the signals that
	 * would stop it); only a regular file is an object, and libbpf
	 * opens the path again below */
	*fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (*fd < 0) {
		int rc = -errno;
		snprintf(err, err_len, "%s: cannot open: %s", path,
			 strerror(errno));
		return rc;
	}
	struct stat st = { 0 };
	if (fstat(*fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "%s: %s: an eBPF object is an ELF file",
			 path, S_ISDIR(st.st_mode) ? "is a directory"
						   : "not a regular file");
		return -EINVAL;
	}
	return 0;
}

/* refuses a program whose path walk would stall rte_bpf_validate */
static int prog_walk_check(struct loader *ld, const struct ebpf_insn *ins,
			   uint32_t n)
{
	uint64_t paths, steps;
	int rc = walk_cost(ins, n, &paths, &steps);

	if (rc < 0)
		return rc;
	if (steps > XDP_WALK_BUDGET) {
		char n_paths[24] = "over 2^64", n_steps[24] = "over 2^64";

		if (paths != UINT64_MAX)
			snprintf(n_paths, sizeof(n_paths), "%" PRIu64, paths);
		if (steps != UINT64_MAX)
			snprintf(n_steps, sizeof(n_steps), "%" PRIu64, steps);
		return load_error(ld, UINT32_MAX,
			"%s paths from the entry to an exit (%s instruction "
			"visits): DPDK 22.11's rte_bpf verifier walks every path "
			"(no state pruning), which would take seconds to hours; at most %llu "
			"visits are accepted [fewer independent branches: merge "
			"conditions, or look per-packet choices up in a map]",
			n_paths, n_steps, XDP_WALK_BUDGET);
	}
	return 0;
}

/* rte_bpf names the rewritten pc; the object's instruction, or
 * UINT32_MAX */
static uint32_t insn_of_pc(const struct loader *ld, const char *why,
			   const uint32_t *new_at)
{
	const char *pc = strstr(why, "pc: ");
	uint32_t at = UINT32_MAX;

	if (pc != NULL) {
		uint32_t n = (uint32_t)strtoul(pc + 4, NULL, 10);

		for (uint32_t i = 0; i < ld->n; i++)
			if (new_at[i] <= n && n < new_at[i + 1])
				at = i;
	}
	return at;
}

/* rte_bpf_load's refusal, at the object's instruction, with a hint */
static int prog_rejected(struct loader *ld, const char *why,
			 const uint32_t *new_at, uint32_t window)
{
	const struct lrx_xdp_prog *prog = ld->prog;
	const uint32_t at = insn_of_pc(ld, why, new_at);
	/* a hint only for the cause it is about: the window for a
	 * memory bound (rte_bpf_validate's "boundary violation"),
	 * the loop rule for "loop at pc" */
	char hint[160] = "";
	const struct reg_tag *base = mem_base(ld, at);

	if ((strstr(why, "memory boundary") != NULL ||
	     strstr(why, "mbuf boundary") != NULL) && base != NULL &&
	    base->kinds == TAG_VALUE && base->map < prog->n_maps)
		snprintf(hint, sizeof(hint),
			 " [an access to a value of map '%s': values are "
			 "%u bytes]", prog->maps[base->map].name,
			 prog->maps[base->map].value_size);
	else if (strstr(why, "memory boundary") != NULL ||
		 strstr(why, "mbuf boundary") != NULL)
		snprintf(hint, sizeof(hint),
			 " [frame accesses must stay within window=%u "
			 "bytes of data]", window);
	else if (strstr(why, "loop") != NULL)
		snprintf(hint, sizeof(hint),
			 " [rte_bpf accepts no backward jumps: unroll "
			 "the loop]");
	return load_error(ld, at,
		"rte_bpf rejected the program (rte_errno %d: %s)%s%s%s",
		rte_errno, rte_strerror(rte_errno),
		why[0] ? ": " : "", why, hint);
}

/* listrx's context header sits in front of the frame, in the one buffer
 * rte_bpf bounds as the program's argument (the xdp_md / __sk_buff
 * rewrite), so a packet pointer below data reached the header: a
 * cls_bpf program wrote len, protocol or data_end for the programs
 * after it. The kernel tracks the packet pointer's offset from data and
 * refuses a negative one (check_packet_access). Here rte_bpf tracks it:
 * the program is rewritten once more onto the frame alone (data is the
 * argument, the context's fields read and write the frame's first
 * bytes, same layout), and its verifier, ranges and stack spills
 * included, must accept that view too, which refuses any access below
 * the argument. The view is loaded to be checked, never run. */
static int prog_packet_view_check(struct loader *ld, uint32_t window)
{
	struct ebpf_insn *view = calloc(2 * (size_t)ld->n, sizeof(*view));
	uint32_t *at = calloc((size_t)ld->n + 1, sizeof(*at));
	uint32_t n_view = 0;
	char why[256];
	int rc = -ENOMEM;

	if (view != NULL && at != NULL) {
		ld->packet_view = true;
		rc = rewrite(ld, view, at, &n_view);
		ld->packet_view = false;
	}
	if (rc == 0) {
		struct rte_bpf_prm prm = {
			.ins = view, .nb_ins = n_view,
			.xsym = ld->prog->xsym, .nb_xsym = ld->prog->nb_xsym,
			.prog_arg = { .type = RTE_BPF_ARG_PTR, .size = window },
		};
		struct rte_bpf *bpf = bpf_load_logged(&prm, why, sizeof(why));
		if (bpf != NULL)
			rte_bpf_destroy(bpf);
		else if (strstr(why, "memory boundary") != NULL)
			rc = load_error(ld, insn_of_pc(ld, why, at),
				"a packet access below data: the pointer may be "
				"before ctx->data, in listrx's %u-byte %s header "
				"in front of the frame, which is not packet memory "
				"(the kernel's check_packet_access refuses a "
				"negative offset) [offset packet pointers from data "
				"by non-negative amounts]", ld->type->hdr_size,
				ld->type->name);
		else
			rc = load_error(ld, insn_of_pc(ld, why, at),
				"rte_bpf refused the program's packet view (the "
				"frame without the context header): %s", why);
	}
	free(view);
	free(at);
	return rc;
}

/* the rewritten program through rte_bpf_load, then rte_bpf_get_jit */
static int prog_rte_load(struct loader *ld, struct ebpf_insn *rewritten,
			 uint32_t n_new, const uint32_t *new_at, uint32_t window)
{
	struct lrx_xdp_prog *prog = ld->prog;
	struct rte_bpf_prm prm = {
		.ins = rewritten,
		.nb_ins = n_new,
		.xsym = prog->xsym,
		.nb_xsym = prog->nb_xsym,
		.prog_arg = { .type = RTE_BPF_ARG_PTR,
			      .size = ld->type->hdr_size + window },
	};
	char why[256];
	int rc = prog_walk_check(ld, rewritten, n_new);

	if (rc < 0)
		return rc;
	prog->bpf = bpf_load_logged(&prm, why, sizeof(why));
	if (prog->bpf == NULL)
		return prog_rejected(ld, why, new_at, window);
	rc = prog_packet_view_check(ld, window);
	if (rc < 0)
		return rc;
	struct rte_bpf_jit jit;

	if (rte_bpf_get_jit(prog->bpf, &jit) == 0)
		prog->jit = jit.func;
	prog->n_insns_orig = ld->n;
	prog->n_insns = n_new;
	return 0;
}

static int prog_load(const char *path, const char *section,
		     const struct lrx_bpf_ctx_type *type, uint32_t window,
		     int socket_id, const struct btf_maps_reply *maps_given,
		     struct lrx_xdp_prog **out, char *err, size_t err_len)
{
	struct loader ld = { .path = path, .section = section, .type = type,
			     .err = err, .err_len = err_len,
			     .maps_given = maps_given };
	struct ebpf_insn *rewritten = NULL;
	uint32_t *new_at = NULL, n_new = 0;
	struct lrx_xdp_prog *prog;
	Elf *elf = NULL;
	int fd, rc;

	*out = NULL;
	prog = rte_zmalloc_socket("xdp_prog", sizeof(*prog),
				  RTE_CACHE_LINE_SIZE, socket_id);
	if (prog == NULL) {
		snprintf(err, err_len, "%s: out of memory", path);
		return -ENOMEM;
	}
	memset(prog->map_xsym, 0xff, sizeof(prog->map_xsym));
	ld.prog = prog;

	rc = prog_open_file(path, err, err_len, &fd);
	if (rc < 0)
		goto fail;
	rc = maps_from_btf(&ld, socket_id);
	if (rc < 0)
		goto fail;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf == NULL) {
		rc = load_error(&ld, UINT32_MAX, "not an ELF object: %s",
				elf_errmsg(-1));
		goto fail;
	}
	rc = elf_read(&ld, elf);
	if (rc < 0)
		goto fail;
	rc = flow_analyse(&ld);
	if (rc < 0)
		goto fail;
	rewritten = calloc(2 * (size_t)ld.n + KFUNC_INSNS_MAX * ld.n_kcalls,
			   sizeof(*rewritten));
	new_at = calloc((size_t)ld.n + 1, sizeof(*new_at));
	if (rewritten == NULL || new_at == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	rc = rewrite(&ld, rewritten, new_at, &n_new);
	if (rc < 0)
		goto fail;
	rc = prog_rte_load(&ld, rewritten, n_new, new_at, window);
	if (rc < 0)
		goto fail;
	*out = prog;
	rc = 0;
fail:
	if (elf != NULL)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	free(ld.insns);
	free(ld.insn_map);
	free(ld.in);
	free(rewritten);
	free(new_at);
	if (rc < 0)
		lrx_xdp_prog_free(prog);
	return rc;
}

int lrx_bpf_prog_load(const char *path, const char *section,
		      const struct lrx_bpf_ctx_type *type, uint32_t window,
		      int socket_id, const struct lrx_xdp_map_def *maps,
		      unsigned n_maps, struct lrx_xdp_prog **out, char *err,
		      size_t err_len)
{
	if (maps == NULL)
		return prog_load(path, section, type, window, socket_id, NULL,
				 out, err, err_len);

	struct btf_maps_reply *r = calloc(1, sizeof(*r));
	int rc;

	*out = NULL;
	if (r == NULL) {
		snprintf(err, err_len, "%s: out of memory", path);
		return -ENOMEM;
	}
	/* as the child's reply: the count as given, at most the table */
	r->n_maps = n_maps;
	for (unsigned i = 0; i < n_maps && i < LRX_XDP_MAX_MAPS; i++) {
		r->maps[i] = maps[i];
		r->maps[i].name[LRX_XDP_MAP_NAME_MAX - 1] = '\0';
	}
	rc = prog_load(path, section, type, window, socket_id, r, out, err,
		       err_len);
	free(r);
	return rc;
}

int lrx_xdp_prog_load(const char *path, const char *section, uint32_t window,
		      int socket_id, struct lrx_xdp_prog **out, char *err,
		      size_t err_len)
{
	return lrx_bpf_prog_load(path, section, &lrx_bpf_ctx_xdp, window,
				 socket_id, NULL, 0, out, err, err_len);
}

int lrx_xdp_prog_load_maps(const char *path, const char *section,
			   uint32_t window, int socket_id,
			   const struct lrx_xdp_map_def *maps, unsigned n_maps,
			   struct lrx_xdp_prog **out, char *err, size_t err_len)
{
	static const struct lrx_xdp_map_def none;

	return lrx_bpf_prog_load(path, section, &lrx_bpf_ctx_xdp, window,
				 socket_id, maps ? maps : &none, n_maps, out,
				 err, err_len);
}

void lrx_xdp_prog_free(struct lrx_xdp_prog *prog)
{
	if (prog == NULL)
		return;
	if (prog->bpf != NULL)
		rte_bpf_destroy(prog->bpf);
	for (unsigned k = 0; k < prog->n_maps; k++)
		lrx_xdp_map_destroy(&prog->maps[k]);
	rte_free(prog);
}

struct lrx_xdp_map *lrx_xdp_prog_map(struct lrx_xdp_prog *prog,
				     const char *name)
{
	int k = map_index(prog, name);

	return k < 0 ? NULL : &prog->maps[k];
}

unsigned lrx_xdp_prog_map_count(const struct lrx_xdp_prog *prog)
{
	return prog->n_maps;
}

struct lrx_xdp_map *lrx_xdp_prog_map_at(struct lrx_xdp_prog *prog,
					unsigned index)
{
	return index < prog->n_maps ? &prog->maps[index] : NULL;
}

const struct rte_bpf *lrx_xdp_prog_bpf(const struct lrx_xdp_prog *prog)
{
	return prog->bpf;
}

uint64_t (*lrx_xdp_prog_jit(const struct lrx_xdp_prog *prog))(void *)
{
	return prog->jit;
}

uint32_t lrx_xdp_prog_insn_count(const struct lrx_xdp_prog *prog,
				 bool rewritten)
{
	return rewritten ? prog->n_insns : prog->n_insns_orig;
}

bool lrx_xdp_prog_uses_redirect(const struct lrx_xdp_prog *prog)
{
	return prog->uses_redirect;
}

uint32_t lrx_xdp_prog_hints(const struct lrx_xdp_prog *prog)
{
	return prog->hints;
}
