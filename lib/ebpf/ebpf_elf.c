/* SPDX-License-Identifier: BSD-3-Clause
 * The loader's reading of a kernel object (ebpf_loader.c): the section's
 * instructions and its map relocations with libelf (libbpf's
 * bpf_object__relocate), the maps' BTF definitions with libbpf's
 * bpf_object__open in a child process, so that an object libbpf hangs or
 * crashes on fails to load rather than the program.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <gelf.h>

#include "ebpf_loader.h"

/* libbpf explains why it cannot open an object in its log; keep the
 * last warning for the error message. It names the object's path, so the
 * buffers that carry it have room for a long one. */
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

int ebpf_maps_from_btf(struct loader *ld, int socket_id)
{
	struct lrx_xdp_prog *prog = ld->prog;
	struct btf_maps_reply *r = malloc(sizeof(*r));
	int rc;

	if (r == NULL)
		return ebpf_load_error(ld, UINT32_MAX, "out of memory");
	if (ld->maps_given != NULL) {
		*r = *ld->maps_given;
		rc = 0;
	} else {
		rc = btf_maps_isolated(ld->path, r);
	}
	if (rc < 0) {
		rc = ebpf_load_error(ld, UINT32_MAX,
			"cannot start the libbpf parse: %s", strerror(-rc));
		goto out;
	}
	if (r->status < 0) {
		rc = ebpf_load_error(ld, UINT32_MAX,
			"libbpf cannot open the object (not a BPF ELF "
			"object, or its BTF map definitions are invalid)%s%s",
			r->why[0] ? ": " : "", r->why);
		goto out;
	}
	if (r->n_maps > LRX_XDP_MAX_MAPS) {
		rc = ebpf_load_error(ld, UINT32_MAX, "more than %d maps",
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
			ebpf_load_error(ld, UINT32_MAX, "%s", why);
			break;
		}
		struct lrx_xdp_map *map = &prog->maps[prog->n_maps++];
		if (d->layout.n_fields) {
			map->layout = malloc(sizeof(*map->layout));
			if (map->layout == NULL) {
				rc = ebpf_load_error(ld, UINT32_MAX, "out of memory");
				break;
			}
			*map->layout = d->layout;
		}
	}
out:
	free(r);
	return rc;
}

int ebpf_map_index(const struct lrx_xdp_prog *prog, const char *name)
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
		return ebpf_load_error(ld, UINT32_MAX,
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
		return ebpf_load_error(ld, UINT32_MAX,
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
		return ebpf_load_error(ld, UINT32_MAX,
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
		return ebpf_load_error(ld, UINT32_MAX, "bad relocation %zu", k);
	at = (uint32_t)(r.r_offset / sizeof(struct ebpf_insn));
	sym_name = elf_strptr(elf, symstr, sym.st_name);
	tscn = elf_getscn(elf, sym.st_shndx);
	if (tscn != NULL && gelf_getshdr(tscn, &tsh) != NULL)
		sec_name = elf_strptr(elf, es->shstrndx, tsh.sh_name);
	if (at >= ld->n)
		return ebpf_load_error(ld, UINT32_MAX,
			"relocation %zu outside the section", k);
	if (ld->insns[at].code == (BPF_JMP | EBPF_CALL) &&
	    sym.st_shndx == SHN_UNDEF)
		return ebpf_kfunc_record(ld, at, sym_name ? sym_name : "?");
	if (ld->insns[at].code == (BPF_JMP | EBPF_CALL))
		return ebpf_load_error(ld, at,
			"bpf-to-bpf call (subprograms are not "
			"supported: make the function __always_inline)");
	if (ld->insns[at].code != (BPF_LD | BPF_IMM | EBPF_DW) ||
	    es->maps_idx == 0 || sym.st_shndx != es->maps_idx)
		return ebpf_load_error(ld, at,
			"refers to '%s' in section '%s' (global "
			"variables and data sections are not supported; "
			"maps must be BTF-defined in .maps)",
			sym_name ? sym_name : "?",
			sec_name ? sec_name : "?");
	m = ebpf_map_index(ld->prog, sym_name ? sym_name : "");
	if (m < 0)
		return ebpf_load_error(ld, at, "unknown map '%s'",
				  sym_name ? sym_name : "?");
	ld->insn_map[at] = (int16_t)m;
	return 0;
}

/* Finds the section, copies its instructions and applies the map
 * relocations (records which ld_imm64 loads which map). */
int ebpf_elf_read(struct loader *ld, Elf *elf)
{
	struct elf_secs es = { 0 };
	GElf_Ehdr ehdr;
	int rc;

	if (elf_kind(elf) != ELF_K_ELF || gelf_getehdr(elf, &ehdr) == NULL)
		return ebpf_load_error(ld, UINT32_MAX, "not an ELF object");
	if (ehdr.e_machine != EM_BPF)
		return ebpf_load_error(ld, UINT32_MAX,
			"not an eBPF object (ELF machine %u; compile with "
			"clang -target bpf)", ehdr.e_machine);
	if (elf_getshdrstrndx(elf, &es.shstrndx) != 0)
		return ebpf_load_error(ld, UINT32_MAX, "no section name table");
	rc = elf_find_sections(ld, elf, &es);
	if (rc == 0)
		rc = elf_read_code(ld, es.code);
	if (rc < 0)
		return rc;
	if (es.symtab == NULL)
		return ebpf_load_error(ld, UINT32_MAX, "no symbol table");
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
