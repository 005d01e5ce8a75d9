// SPDX-License-Identifier: BSD-3-Clause
// Writes the seeds of the BPF harnesses from compiled XDP objects: for
// each object, OUT_DIR/bpf_elf/<name> (section and map count byte, the
// map records libbpf reads from its BTF, the object) and OUT_DIR/bpf_verify/<name>
// (flags, the map records, section "xdp"'s instructions with each map
// relocation marked as fuzz_bpf_verify expects: src_reg 1, imm = the map's
// index). Run by gen_corpus.sh on the shipped objects (trusted input:
// libbpf runs in this process).
// usage: gen_bpf_seeds OUT_DIR OBJECT...
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <bpf/libbpf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include "fuzz_bpf.h"

using Bytes = std::vector<uint8_t>;

static void write(const std::string &path, const Bytes &b)
{
	FILE *f = std::fopen(path.c_str(), "wb");
	if (!f || std::fwrite(b.data(), 1, b.size(), f) != b.size()) {
		std::perror(path.c_str());
		std::exit(1);
	}
	std::fclose(f);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		std::fprintf(stderr, "usage: %s OUT_DIR OBJECT...\n", argv[0]);
		return 2;
	}
	const std::string dir = argv[1];
	elf_version(EV_CURRENT);
	for (int a = 2; a < argc; a++) {
		const char *path = argv[a];
		std::ifstream is(path, std::ios::binary);
		Bytes obj((std::istreambuf_iterator<char>(is)),
			  std::istreambuf_iterator<char>());
		bpf_object *o = bpf_object__open_file(path, nullptr);
		if (!o || libbpf_get_error(o)) {
			std::fprintf(stderr, "%s: libbpf cannot open it\n", path);
			return 1;
		}
		Bytes recs;
		std::vector<std::string> names;
		bpf_map *m;
		bpf_object__for_each_map(m, o) {
			if (bpf_map__is_internal(m))
				continue;
			uint8_t r[lrx_fuzz::kMapRecord];
			lrx_fuzz::map_record_encode(r, bpf_map__name(m),
				bpf_map__type(m), bpf_map__key_size(m),
				bpf_map__value_size(m), bpf_map__max_entries(m));
			recs.insert(recs.end(), r, r + sizeof(r));
			names.push_back(bpf_map__name(m));
		}
		bpf_object__close(o);

		// section "xdp" and its relocations, through libelf
		int fd = open(path, O_RDONLY);
		Elf *e = elf_begin(fd, ELF_C_READ, nullptr);
		size_t shstrndx = 0;
		elf_getshdrstrndx(e, &shstrndx);
		Elf_Scn *scn = nullptr, *code = nullptr, *symtab = nullptr;
		size_t code_idx = 0;
		GElf_Shdr sh;
		while ((scn = elf_nextscn(e, scn)) != nullptr) {
			gelf_getshdr(scn, &sh);
			const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
			if (nm && std::strcmp(nm, "xdp") == 0) {
				code = scn;
				code_idx = elf_ndxscn(scn);
			}
			if (sh.sh_type == SHT_SYMTAB)
				symtab = scn;
		}
		if (!code || !symtab) {
			std::fprintf(stderr, "%s: no section xdp or no symbols\n", path);
			return 1;
		}
		Elf_Data *d = elf_getdata(code, nullptr);
		Bytes insns((const uint8_t *)d->d_buf,
			    (const uint8_t *)d->d_buf + d->d_size);
		GElf_Shdr symsh;
		gelf_getshdr(symtab, &symsh);
		Elf_Data *syms = elf_getdata(symtab, nullptr);
		scn = nullptr;
		while ((scn = elf_nextscn(e, scn)) != nullptr) {
			gelf_getshdr(scn, &sh);
			if (sh.sh_type != SHT_REL || sh.sh_info != code_idx)
				continue;
			Elf_Data *rd = elf_getdata(scn, nullptr);
			for (size_t k = 0; k < rd->d_size / sizeof(Elf64_Rel); k++) {
				GElf_Rel r;
				GElf_Sym s;
				gelf_getrel(rd, (int)k, &r);
				gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s);
				const char *sn = elf_strptr(e, symsh.sh_link, s.st_name);
				size_t at = r.r_offset;
				for (size_t i = 0; i < names.size(); i++)
					if (sn && names[i] == sn) {
						insns[at + 1] = (uint8_t)((insns[at + 1] & 0x0f) | 0x10);
						uint32_t imm = (uint32_t)i;
						std::memcpy(&insns[at + 4], &imm, 4);
					}
			}
		}
		elf_end(e);
		close(fd);

		std::string name = path;
		name = name.substr(name.rfind('/') + 1);
		name = name.substr(0, name.find('.'));
		Bytes seed = {(uint8_t)(names.size() << 1)};
		seed.insert(seed.end(), recs.begin(), recs.end());
		seed.insert(seed.end(), obj.begin(), obj.end());
		Bytes verify = {0, (uint8_t)names.size()};
		verify.insert(verify.end(), recs.begin(), recs.end());
		write(dir + "/bpf_elf/" + name, seed);
		verify.insert(verify.end(), insns.begin(), insns.end());
		write(dir + "/bpf_verify/" + name, verify);
	}
	std::printf("gen_bpf_seeds: %d objects\n", argc - 2);
	return 0;
}
