// SPDX-License-Identifier: BSD-3-Clause
// BPF verifier/JIT harness: arbitrary eBPF instruction arrays through the
// xdp loader, wrapped by this harness in a well-formed BPF ELF object, so
// that every input reaches the data-flow pass, the xdp_md and helper
// rewrite, rte_bpf_load's verifier and the x86 JIT: what listrx hands to
// rte_bpf is what its loader produces, so that is what is fuzzed (DPDK's
// rte_bpf_load on raw arrays crashes on a program without exit, DPDK
// 22.11's bug, which the loader refuses before). Must never crash; a
// rejection is a negative errno with a message; a loaded program is freed.
//
// Input: byte 0 bits 0..1: the frame window (1600, 64, 0, 9000 bytes);
// byte 1 % 6 map records (fuzz_bpf.h),
// the records (their names become the .maps symbols); the rest is the
// instructions, 8 bytes each (struct ebpf_insn). Loader mode: an ld_imm64
// (opcode 0x18) with src_reg 1 is a map reference, as clang emits it: the
// harness clears src_reg and imm and adds an R_BPF_64_64 relocation
// against map imm % n (against the program's own symbol when there is no
// map, and for src_reg 2: a reference to something that is not a map).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <elf.h>
#include <string>
#include <vector>

#include <rte_bpf.h>

#include "fuzz_bpf.h"
#include "fuzz_common.h"

extern "C" {
#include "ebpf/ebpf.h"
}

namespace {

lrx_fuzz::MemFile *file; // the object the harness builds, in memory
std::vector<uint8_t> elf;  // kept across inputs: no allocation per input

template <typename T> void put(std::vector<uint8_t> &v, const T &x)
{
	const uint8_t *p = reinterpret_cast<const uint8_t *>(&x);
	v.insert(v.end(), p, p + sizeof(x));
}

void align8(std::vector<uint8_t> &v)
{
	while (v.size() % 8)
		v.push_back(0);
}

// A relocatable BPF ELF object as clang -target bpf writes one: section
// "xdp" with the program, ".maps" with one object symbol per map, the
// symbol and string tables, and ".relxdp" with the map relocations.
LRX_FUZZ_BOOKKEEPING
void build_elf(const uint8_t *code, size_t n_insns, const lrx_xdp_map_def *maps,
	       unsigned n_maps)
{
	std::vector<ebpf_insn> insns(n_insns);
	std::memcpy(insns.data(), code, n_insns * sizeof(ebpf_insn));
	std::string strtab(1, '\0'), shstr(1, '\0');
	auto add = [](std::string &t, const char *s) {
		uint32_t off = (uint32_t)t.size();
		t += s;
		t += '\0';
		return off;
	};
	std::vector<Elf64_Sym> syms(1);
	Elf64_Sym fn{};
	fn.st_name = add(strtab, "prog");
	fn.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
	fn.st_shndx = 2;
	fn.st_size = n_insns * sizeof(ebpf_insn);
	syms.push_back(fn);
	for (unsigned m = 0; m < n_maps; m++) {
		Elf64_Sym s{};
		s.st_name = add(strtab, maps[m].name);
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT);
		s.st_shndx = 3;
		s.st_value = m * 32;
		s.st_size = 32;
		syms.push_back(s);
	}
	std::vector<Elf64_Rel> rels;
	for (size_t i = 0; i < n_insns; i++) {
		ebpf_insn &x = insns[i];
		if (x.code != (BPF_LD | BPF_IMM | EBPF_DW) ||
		    (x.src_reg != 1 && x.src_reg != 2))
			continue;
		uint32_t sym = (x.src_reg == 1 && n_maps)
				       ? 2 + (uint32_t)x.imm % n_maps : 1;
		rels.push_back({i * sizeof(ebpf_insn), ELF64_R_INFO(sym, 1)});
		x.src_reg = 0;
		x.imm = 0;
		i++; // the second half of the ld_imm64
	}
	const char *names[] = {"", ".shstrtab", "xdp", ".maps", ".symtab",
			       ".strtab", ".relxdp"};
	uint32_t name_off[7] = {0};
	for (int s = 1; s < 7; s++)
		name_off[s] = add(shstr, names[s]);

	elf.clear();
	elf.resize(sizeof(Elf64_Ehdr));
	Elf64_Shdr sh[7] = {};
	auto section = [&](int s, uint32_t type, uint64_t flags, const void *p,
			   size_t len) {
		align8(elf);
		sh[s].sh_name = name_off[s];
		sh[s].sh_type = type;
		sh[s].sh_flags = flags;
		sh[s].sh_offset = elf.size();
		sh[s].sh_size = len;
		sh[s].sh_addralign = s == 1 || s == 5 ? 1 : 8;
		const uint8_t *b = static_cast<const uint8_t *>(p);
		elf.insert(elf.end(), b, b + len);
	};
	std::vector<uint8_t> maps_data(n_maps * 32);
	section(1, SHT_STRTAB, 0, shstr.data(), shstr.size());
	section(2, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, insns.data(),
		insns.size() * sizeof(ebpf_insn));
	section(3, SHT_PROGBITS, SHF_ALLOC | SHF_WRITE, maps_data.data(),
		maps_data.size());
	section(4, SHT_SYMTAB, 0, syms.data(), syms.size() * sizeof(Elf64_Sym));
	sh[4].sh_link = 5;
	sh[4].sh_info = 1; // first global symbol
	sh[4].sh_entsize = sizeof(Elf64_Sym);
	section(5, SHT_STRTAB, 0, strtab.data(), strtab.size());
	section(6, SHT_REL, 0, rels.data(), rels.size() * sizeof(Elf64_Rel));
	sh[6].sh_link = 4;
	sh[6].sh_info = 2;
	sh[6].sh_entsize = sizeof(Elf64_Rel);
	align8(elf);
	Elf64_Ehdr eh{};
	std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_REL;
	eh.e_machine = 247; // EM_BPF
	eh.e_version = EV_CURRENT;
	eh.e_ehsize = sizeof(Elf64_Ehdr);
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = 7;
	eh.e_shstrndx = 1;
	eh.e_shoff = elf.size();
	for (const Elf64_Shdr &s : sh)
		put(elf, s);
	std::memcpy(elf.data(), &eh, sizeof(eh));
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	lrx_fuzz::eal_init("fuzz_bpf_verify");
	file = new lrx_fuzz::MemFile("fuzz_bpf_verify");
	elf.reserve(1 << 16);
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t windows[4] = {1600, 64, 0, 9000};
	lrx_fuzz::Reader in(data, size);
	uint8_t flags = in.u8();
	uint32_t window = windows[flags & 3];
	unsigned n_maps = in.u8() % 6;
	lrx_xdp_map_def maps[5];
	for (unsigned i = 0; i < n_maps; i++) {
		uint8_t rec[lrx_fuzz::kMapRecord] = {};
		const uint8_t *p;
		size_t k = in.take(sizeof(rec), &p);
		std::memcpy(rec, p, k);
		lrx_fuzz::MapRecord r = lrx_fuzz::map_record_decode(rec);
		std::memset(&maps[i], 0, sizeof(maps[i]));
		std::snprintf(maps[i].name, sizeof(maps[i].name), "%s",
			      r.name[0] ? r.name : "m");
		maps[i].type = r.type;
		maps[i].key_size = r.key_size;
		maps[i].value_size = r.value_size;
		maps[i].max_entries = r.max_entries;
	}
	const uint8_t *code;
	size_t len = in.take(size, &code);
	size_t n = len / sizeof(ebpf_insn);
	if (n == 0)
		return 0;

	build_elf(code, n, maps, n_maps);
	file->write(elf.data(), elf.size());
	lrx_xdp_prog *prog = nullptr;
	char err[512] = "";
	int rc = lrx_xdp_prog_load_maps(file->path, "xdp", window, 0, maps,
					n_maps, &prog, err, sizeof(err));
	if (rc < 0) {
		if (prog != nullptr || err[0] == '\0')
			lrx_fuzz::fail("load failed (%d) with a program or no message", rc);
		return 0;
	}
	if (rc != 0 || prog == nullptr)
		lrx_fuzz::fail("load returned %d with program %p", rc, (void *)prog);
	lrx_xdp_prog_free(prog);
	return 0;
}
