// SPDX-License-Identifier: BSD-3-Clause
// BPF ELF loader harness: arbitrary bytes loaded as an XDP object by the
// xdp stage's loader, in this process: libelf sections, symbols and
// relocations, the map relocations against the object's map definitions,
// the register data-flow pass, the xdp_md and helper rewrite, then
// rte_bpf_load's verifier and the JIT. Must never crash; every failure is
// a negative errno with a message naming the file; a success yields a
// program whose maps are reachable by name and which is freed again
// (maps included: ASan/LSan see the allocations).
//
// What is not fuzzed here: libbpf's BTF parse (bpf_object__open_file).
// It is libbpf's code, not listrx's, and the loader runs it in a forked
// child because libbpf 1.1 crashes on some malformed objects
// (tests/fuzz/corpus/bpf_elf/libbpf_open_segv; the faults test checks
// that such an object is a load error). A fork per input capped this
// harness at ~100 execs/s; instead the map definitions libbpf would read
// come from the input (lrx_xdp_prog_load_maps), so that listrx's use of
// them (map creation and its bounds, relocations by map name) is fuzzed
// with the rest of the loader.
//
// Input: byte 0: bit 0 picks the section ("xdp" or "xdp/test"), bits 1..7
// % 18 the number of map records (fuzz_bpf.h; 17 is one more than the
// loader takes); the records; the rest is the object file, in a memfd
// opened by its /proc/self/fd path (no disk I/O). A byte 0 of 0 and an
// object is a file as the faults test hands it to listrx.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fuzz_bpf.h"
#include "fuzz_common.h"

extern "C" {
#include "ebpf/ebpf.h"
}

static lrx_fuzz::MemFile *file; // the object file, in memory

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	lrx_fuzz::eal_init("fuzz_bpf_elf");
	file = new lrx_fuzz::MemFile("fuzz_bpf_elf");
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	lrx_fuzz::Reader in(data, size);
	uint8_t head = in.u8();
	const char *section = (head & 1) ? "xdp/test" : "xdp";
	unsigned n_maps = (head >> 1) % (lrx_fuzz::kMapRecordsMax + 1);
	lrx_xdp_map_def maps[lrx_fuzz::kMapRecordsMax];
	for (unsigned i = 0; i < n_maps; i++) {
		const uint8_t *p;
		uint8_t rec[lrx_fuzz::kMapRecord] = {};
		size_t k = in.take(sizeof(rec), &p);
		std::memcpy(rec, p, k);
		lrx_fuzz::MapRecord r = lrx_fuzz::map_record_decode(rec);
		std::memset(&maps[i], 0, sizeof(maps[i]));
		std::snprintf(maps[i].name, sizeof(maps[i].name), "%s", r.name);
		maps[i].type = r.type;
		maps[i].key_size = r.key_size;
		maps[i].value_size = r.value_size;
		maps[i].max_entries = r.max_entries;
	}
	const uint8_t *obj;
	size_t obj_len = in.take(size, &obj);
	file->write(obj, obj_len);

	lrx_xdp_prog *prog = nullptr;
	char err[512] = "";
	int rc = lrx_xdp_prog_load_maps(file->path, section, 1600, 0, maps,
					n_maps, &prog, err, sizeof(err));
	if (rc < 0) {
		if (prog != nullptr)
			lrx_fuzz::fail("load failed (%d) but returned a program", rc);
		if (err[0] == '\0')
			lrx_fuzz::fail("load failed (%d) without a message", rc);
		return 0;
	}
	if (rc != 0 || prog == nullptr)
		lrx_fuzz::fail("load returned %d with program %p", rc, (void *)prog);
	// a loaded program is consistent: its maps are reachable by name
	for (unsigned i = 0; i < lrx_xdp_prog_map_count(prog); i++) {
		lrx_xdp_map *m = lrx_xdp_prog_map_at(prog, i);
		if (m == nullptr || lrx_xdp_prog_map(prog, m->name) == nullptr)
			lrx_fuzz::fail("map %u of a loaded program not found by name", i);
	}
	lrx_xdp_prog_free(prog);
	return 0;
}
