// SPDX-License-Identifier: BSD-3-Clause
// BPF ELF loader harness: arbitrary bytes written to a file and loaded as
// an XDP object by the xdp stage's loader (libelf sections and
// relocations, BTF map definitions, the xdp_md and helper rewrite, then
// rte_bpf_load's verifier). Must never crash; every failure is a negative
// errno with a message naming the file; a success yields a program that is
// freed again (maps included: the allocation checks of ASan/LSan see it).
// The file is a memfd (opened by its /proc/self/fd path): no disk I/O.
// Input: byte 0 bit 0 picks the section ("xdp" or the first byte-named
// "xdp/..." variant), the rest is the object file.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <unistd.h>

#include "fuzz_common.h"

#include <sys/mman.h>

#include <rte_memory.h>

extern "C" {
#include "xdp/xdp.h"
}

static lrx_fuzz::MemFile *file; // the object file, in memory

// The loader forks for each libbpf parse (xdp_loader.c); the child never
// touches DPDK memory, so the EAL's memory stays out of the child and the
// fork copies no page tables for it (most of a fork's cost here).
static int dont_fork(const struct rte_memseg_list *msl, void *)
{
	if (msl->base_va != nullptr && msl->len != 0)
		madvise(msl->base_va, msl->len, MADV_DONTFORK);
	return 0;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***)
{
	lrx_fuzz::eal_init("fuzz_bpf_elf");
	rte_memseg_list_walk(dont_fork, nullptr);
	file = new lrx_fuzz::MemFile("fuzz_bpf_elf");
	return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const char *section = (data[0] & 1) ? "xdp/test" : "xdp";
	file->write(data + 1, size - 1);

	lrx_xdp_prog *prog = nullptr;
	char err[512] = "";
	int rc = lrx_xdp_prog_load(file->path, section, 1600, 0, &prog, err,
				   sizeof(err));
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
