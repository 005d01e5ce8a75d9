// SPDX-License-Identifier: BSD-3-Clause
// Shared by the libFuzzer harnesses: one EAL per fuzzing process, a
// cache-less mbuf pool (so that a double free shows as more buffers in the
// pool than it has), the per-iteration "every pool full" check, and a small
// reader that turns fuzz bytes into decisions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include <rte_mbuf.h>
#include <rte_mempool.h>

// For the harnesses' own bookkeeping (tallies, parsing of their own
// records): no coverage instrumentation. Its comparisons are not the code
// under test; traced, they cost a large share of each iteration and feed
// libFuzzer features that only say which bookkeeping branch ran. ASan and
// UBSan still check this code. noinline: inlined into an instrumented
// caller, the code would be instrumented as the caller's.
#define LRX_FUZZ_BOOKKEEPING \
	__attribute__((no_sanitize("coverage"), noinline))

namespace lrx_fuzz {

// rte_eal_init with --no-huge --no-pci --no-shconf -m 256, main lcore only,
// a --file-prefix unique to this process. Aborts if EAL fails.
void eal_init(const char *harness);

// A pktmbuf pool without per-lcore cache (created once per name).
rte_mempool *pool(const char *name, unsigned n, uint16_t data_room);

// Every mempool of the process has all its buffers back, none twice:
// otherwise prints each pool's in-use count and aborts (libFuzzer then
// saves the input as a crash). `where` names the point of the check.
void require_pools_full(const char *where);

// A file in memory (memfd) that the code under test opens by path
// (/proc/self/fd/N): replacing its contents costs no disk I/O, unlike a
// temporary file rewritten for every input.
struct MemFile {
	int fd = -1;
	char path[64] = "";
	explicit MemFile(const char *name);
	// the file's contents become data[0..size)
	void write(const uint8_t *data, size_t size);
};

// Aborts with a message (printf-style), as a failed invariant.
[[noreturn]] void fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

// Consumes fuzz bytes front to back; reads past the end give zeros.
struct Reader {
	const uint8_t *p;
	size_t n;
	Reader(const uint8_t *data, size_t size) : p(data), n(size) {}
	bool empty() const { return n == 0; }
	uint8_t u8()
	{
		if (n == 0)
			return 0;
		n--;
		return *p++;
	}
	uint16_t u16() { return (uint16_t)(u8() | u8() << 8); }
	uint32_t u32() { return (uint32_t)u16() | (uint32_t)u16() << 16; }
	// up to max bytes (fewer at the end of the input)
	size_t take(size_t max, const uint8_t **out)
	{
		size_t k = max < n ? max : n;
		*out = p;
		p += k;
		n -= k;
		return k;
	}
};

} // namespace lrx_fuzz
