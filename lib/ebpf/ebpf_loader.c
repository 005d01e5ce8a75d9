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
 * This file: the helpers, the program types, the data-flow pass and the
 * load; the rewrite is ebpf_rewrite.c, the object's reading ebpf_elf.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/bpf.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_random.h>

#include "ebpf_loader.h"

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
	/* the program runs on the lcore that reads the map */
	return (uint64_t)(int64_t)lrx_xdp_map_update_from_prog(
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

const struct helper_info ebpf_helpers[] = {
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
const size_t ebpf_n_helpers = RTE_DIM(ebpf_helpers);

/* Names of helpers XDP programs commonly call that listrx lacks, so that
 * the error says which one. */
const char *ebpf_helper_name(int id)
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
	for (size_t i = 0; i < RTE_DIM(ebpf_helpers); i++)
		if (ebpf_helpers[i].id == id)
			return ebpf_helpers[i].name;
	for (size_t i = 0; i < RTE_DIM(known); i++)
		if (known[i].id == id)
			return known[i].name;
	return "unknown helper";
}

int ebpf_xsym_add(struct lrx_xdp_prog *prog, const struct helper_info *h,
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

int ebpf_load_error(struct loader *ld, uint32_t insn, const char *fmt, ...)
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

/* What a load puts in its register: data_end from the context (the
 * kernel's PTR_TO_PACKET_END), else something the pass does not track. */
static struct reg_tag load_tag(const struct loader *ld, const struct ebpf_insn *ins,
			       const struct flow_state *s)
{
	const struct lrx_bpf_ctx_field *f =
		s->r[ins->src_reg].kinds == TAG_CTX
			? ebpf_ctx_field(ld->type, ins->off, ebpf_size_bytes(ins->code))
			: NULL;

	return (struct reg_tag){ .kinds = f != NULL && f->kind == LRX_BPF_CTX_DATA_END
					  ? TAG_PKT_END : TAG_OTHER };
}

/* A conditional jump's two edges (fall through, taken). */
static void flow_branch(const struct ebpf_insn *ins, uint32_t i,
			const struct flow_state *s, struct flow_state *next,
			uint32_t *next_at, unsigned *n_next)
{
	uint8_t op = BPF_OP(ins->code);

	next[0] = *s;
	next_at[0] = i + 1;
	next[1] = *s;
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
		flow_branch(ins, i, s, next, next_at, n_next);
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
			return ebpf_load_error(ld, i, "register r%u does not exist "
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
					return ebpf_load_error(ld, i,
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
		return ebpf_load_error(ld, ld->n - 1, "execution runs past the last "
				  "instruction (a path without exit)");
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
		return ebpf_load_error(ld, UINT32_MAX,
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
	return ebpf_load_error(ld, at,
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
		rc = ebpf_rewrite(ld, view, at, &n_view);
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
			rc = ebpf_load_error(ld, insn_of_pc(ld, why, at),
				"a packet access below data: the pointer may be "
				"before ctx->data, in listrx's %u-byte %s header "
				"in front of the frame, which is not packet memory "
				"(the kernel's check_packet_access refuses a "
				"negative offset) [offset packet pointers from data "
				"by non-negative amounts]", ld->type->hdr_size,
				ld->type->name);
		else
			rc = ebpf_load_error(ld, insn_of_pc(ld, why, at),
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
	rc = ebpf_maps_from_btf(&ld, socket_id);
	if (rc < 0)
		goto fail;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf == NULL) {
		rc = ebpf_load_error(&ld, UINT32_MAX, "not an ELF object: %s",
				elf_errmsg(-1));
		goto fail;
	}
	rc = ebpf_elf_read(&ld, elf);
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
	rc = ebpf_rewrite(&ld, rewritten, new_at, &n_new);
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
	int k = ebpf_map_index(prog, name);

	return k < 0 ? NULL : &prog->maps[k];
}

unsigned lrx_xdp_prog_map_count(const struct lrx_xdp_prog *prog)
{
	return prog->n_maps;
}

void lrx_xdp_prog_set_qsbr(struct lrx_xdp_prog *prog, struct rte_rcu_qsbr *v)
{
	for (unsigned i = 0; i < prog->n_maps; i++)
		lrx_xdp_map_set_qsbr(&prog->maps[i], v);
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
