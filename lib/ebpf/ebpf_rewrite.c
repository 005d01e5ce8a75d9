/* SPDX-License-Identifier: BSD-3-Clause
 * The loader's rewrite of a kernel program into one rte_bpf runs
 * (ebpf_loader.c says why): context accesses as the kernel's
 * convert_ctx_access does, helper calls as rte_bpf external symbols, the
 * XDP metadata kfuncs in place, and jumps moved to the new offsets.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/bpf.h>

#include "ebpf_loader.h"

/* ---- Rewrite --------------------------------------------------------------- */
#define BAD_PTR (TAG_CTX | TAG_MAP | TAG_MAYBE_NULL | TAG_NULL)

static int check_deref(struct loader *ld, uint32_t i, uint8_t reg,
		       const struct reg_tag *t, const char *what)
{
	if (t->kinds & (TAG_MAYBE_NULL | TAG_NULL))
		return ebpf_load_error(ld, i,
			"%s through r%u, a bpf_map_lookup_elem result that "
			"may be NULL (test it against 0 first)", what, reg);
	if (t->kinds & TAG_MAP)
		return ebpf_load_error(ld, i,
			"%s through r%u, a map pointer (direct map access "
			"is not supported: use bpf_map_lookup_elem)",
			what, reg);
	if (t->kinds & TAG_PKT_END)
		return ebpf_load_error(ld, i,
			"%s through r%u, which holds data_end (the end of the "
			"packet%s): packet pointers are compared with it, never "
			"read or written through it (the kernel: invalid mem "
			"access 'pkt_end')", what, reg,
			t->kinds == TAG_PKT_END ? "" : " on some paths");
	return 0;
}

unsigned ebpf_size_bytes(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

/* The field of the program type that holds [off, off + size), or NULL. */
const struct lrx_bpf_ctx_field *ebpf_ctx_field(const struct lrx_bpf_ctx_type *t,
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
	unsigned size = ebpf_size_bytes(ins->code);
	const struct lrx_bpf_ctx_field *f = ebpf_ctx_field(type, ins->off, size);
	struct ebpf_insn x = *ins;

	if (t->kinds != TAG_CTX)
		return ebpf_load_error(ld, i,
			"load through r%u, which holds the %s context on "
			"some paths only", ins->src_reg, type->name);
	if (BPF_MODE(ins->code) != BPF_MEM || f == NULL ||
	    (size != f->size &&
	     (!type->narrow_loads || f->kind != LRX_BPF_CTX_FIELD)))
		goto unsupported;
	/* bpf_skb_is_valid_access: a narrow load at a multiple of its size */
	if (ins->off % (int)size != 0)
		return ebpf_load_error(ld, i,
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
	return ebpf_load_error(ld, i,
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
	unsigned size = ebpf_size_bytes(x->code);
	const struct lrx_bpf_ctx_field *f = ebpf_ctx_field(type, x->off, size);
	char fields[256];

	ctx_field_list(type, true, fields, sizeof(fields));
	if (fields[0] == '\0')
		return ebpf_load_error(ld, i, "writes to the %s context (r%u)",
				  type->name, x->dst_reg);
	if (BPF_MODE(x->code) != BPF_MEM || f == NULL || !f->writable ||
	    f->off != x->off || f->size != size)
		return ebpf_load_error(ld, i,
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
		return ebpf_load_error(ld, i,
			"bpf-to-bpf call (subprograms are not supported: make "
			"the function __always_inline)");
	for (size_t k = 0; k < ebpf_n_helpers; k++)
		if (ebpf_helpers[k].id == x->imm)
			h = &ebpf_helpers[k];
	if (h == NULL)
		return ebpf_load_error(ld, i,
			"calls helper %d (%s), which listrx does not provide "
			"(supported: bpf_map_lookup_elem, bpf_map_update_elem, "
			"bpf_map_delete_elem, bpf_ktime_get_ns, "
			"bpf_get_prandom_u32, bpf_get_smp_processor_id, "
			"bpf_redirect)", x->imm, ebpf_helper_name(x->imm));
	for (uint32_t a = 0; a < h->nb_args; a++) {
		const struct reg_tag *t = &s->r[EBPF_REG_1 + a];

		if (t->kinds & TAG_CTX)
			return ebpf_load_error(ld, i,
				"passes the %s context to %s", ld->type->name,
				h->name);
		if (a > 0 && (t->kinds & (TAG_MAYBE_NULL | TAG_NULL | TAG_MAP)))
			return ebpf_load_error(ld, i,
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
			return ebpf_load_error(ld, i,
				"%s: the map argument (r1) is not one known "
				"map on every path", h->name);
		idx = prog->map_xsym[t->map][which];
		if (idx < 0) {
			idx = ebpf_xsym_add(prog, h, h->fn, &prog->maps[t->map]);
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
			idx = ebpf_xsym_add(prog, h, fn, NULL);
		if (h->id == BPF_FUNC_redirect)
			prog->uses_redirect = true;
	}
	if (idx < 0)
		return ebpf_load_error(ld, i, "too many external symbols");
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

/* A call relocated against an undefined symbol: a kfunc, noted for the
 * rewrite (libbpf finds it in the kernel's BTF:
 * bpf_object__resolve_ksym_func_btf_id). */
int ebpf_kfunc_record(struct loader *ld, uint32_t at, const char *name)
{
	for (size_t k = 0; k < RTE_DIM(kfuncs); k++) {
		if (strcmp(kfuncs[k].name, name) != 0)
			continue;
		/* the kernel registers them for BPF_PROG_TYPE_XDP only
		 * (xdp_metadata_kfunc_set) */
		if (ld->type != &lrx_bpf_ctx_xdp)
			return ebpf_load_error(ld, at, "calls kfunc %s, which the "
					  "kernel gives XDP programs only", name);
		if (ld->n_kcalls == XDP_MAX_KFUNC_CALLS)
			return ebpf_load_error(ld, at, "more than %d kfunc calls",
					  XDP_MAX_KFUNC_CALLS);
		ld->kcalls[ld->n_kcalls++] =
			(struct kfunc_call){ .insn = at, .kfunc = (uint8_t)k };
		return 0;
	}
	return ebpf_load_error(ld, at, "calls kfunc '%s', which listrx does not "
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
		return ebpf_load_error(ld, i, "%s: argument 1 (r1) is not the xdp_md "
				  "context on every path", kf->name);
	for (unsigned k = 0; k < kf->n_out; k++)
		if (s->r[kf->out[k].reg].kinds & BAD_PTR)
			return ebpf_load_error(ld, i, "%s: argument %u (r%u) is the "
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
			return ebpf_load_error(ld, i,
				"store through r%u, which holds "
				"the %s context on some paths "
				"only", ins->dst_reg,
				ld->type->name);
		if (cls == BPF_STX &&
		    (s->r[ins->src_reg].kinds & BAD_PTR & ~TAG_NULL))
			return ebpf_load_error(ld, i,
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
		return ebpf_load_error(ld, i,
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
		return ebpf_load_error(ld, i,
			"arithmetic with r%u, which holds the "
			"context, a map or a possibly-NULL "
			"value pointer", ins->src_reg);
	if (uses_dst &&
	    (s->r[ins->dst_reg].kinds & BAD_PTR & ~TAG_NULL))
		return ebpf_load_error(ld, i,
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
		return ebpf_load_error(ld, i,
			"legacy packet access (LD_ABS/LD_IND) "
			"is not supported for XDP");
	if (i + 1 >= ld->n)
		return ebpf_load_error(ld, i, "truncated ld_imm64");
	out[o++] = x;
	out[o] = ld->insns[++i];
	*pi = i;
	if (ld->insn_map[i - 1] >= 0) {
		uint64_t addr = (uintptr_t)&ld->prog->maps[ld->insn_map[i - 1]];

		out[o - 1].src_reg = 0;
		out[o - 1].imm = (int32_t)(uint32_t)addr;
		out[o].imm = (int32_t)(uint32_t)(addr >> 32);
	} else if (x.src_reg != 0) {
		return ebpf_load_error(ld, i - 1,
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
		return ebpf_load_error(ld, i,
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
			return ebpf_load_error(ld, i, "jump out of the program");
		out[new_at[i]].off = (int16_t)((int64_t)new_at[target] -
					       new_at[i] - 1);
	}
	return 0;
}

/* Produces the rewritten program into out (capacity 2n, and
 * KFUNC_INSNS_MAX per kfunc call); new_at[i] is
 * where old instruction i starts in it. */
int ebpf_rewrite(struct loader *ld, struct ebpf_insn *out, uint32_t *new_at,
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
			return ebpf_load_error(ld, i,
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
