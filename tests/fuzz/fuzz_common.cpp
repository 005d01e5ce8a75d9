// SPDX-License-Identifier: BSD-3-Clause
#include "fuzz_common.h"
#include "../support/runtime_dir.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>

#include "../support/cpus.h"

namespace lrx_fuzz {

void eal_init(const char *harness)
{
	static bool done = false;
	if (done)
		return;
	std::string prefix = std::string("lrxfuzz_") + harness + "_" +
			     std::to_string(getpid());
	// the first CPU this process may use (CPU 0 may not be one of them)
	std::string lcore0 = "0@" + std::to_string(lrx_test::lcore_cpu(0));
	std::vector<std::string> args = {
		harness, "--no-huge", "--no-pci", "--no-shconf", "-m", "256",
		"--lcores", lcore0, "--log-level", "*:error", "--file-prefix", prefix,
	};
	std::vector<char *> argv;
	for (auto &a : args)
		argv.push_back(const_cast<char *>(a.c_str()));
	if (rte_eal_init((int)argv.size(), argv.data()) < 0) {
		std::fprintf(stderr, "%s: rte_eal_init failed: %s\n", harness,
			     rte_strerror(rte_errno));
		std::abort();
	}
	lrx_test_remove_runtime_dir_at_exit();
	done = true;
}

rte_mempool *pool(const char *name, unsigned n, uint16_t data_room)
{
	rte_mempool *mp = rte_mempool_lookup(name);
	if (mp)
		return mp;
	mp = rte_pktmbuf_pool_create(name, n, 0, 0, data_room,
				     (int)rte_socket_id());
	if (!mp) {
		std::fprintf(stderr, "fuzz: mempool %s: %s\n", name,
			     rte_strerror(rte_errno));
		std::abort();
	}
	return mp;
}

// Without a cache rte_mempool_avail_count is the ring count, unclamped:
// fewer than size = a buffer still out (leak or held), more = a buffer
// freed twice. Pools with a cache (not the harnesses') clamp at size.
static void pool_check(struct rte_mempool *mp, void *arg)
{
	unsigned *bad = static_cast<unsigned *>(arg);
	unsigned avail = rte_mempool_avail_count(mp);
	if (avail != mp->size) {
		std::fprintf(stderr,
			     "fuzz: mempool %s: %u of %u buffers back (%d in use%s)\n",
			     mp->name, avail, mp->size,
			     (int)mp->size - (int)avail,
			     avail > mp->size ? ": double free" : "");
		(*bad)++;
	}
}

void require_pools_full(const char *where)
{
	unsigned bad = 0;
	rte_mempool_walk(pool_check, &bad);
	if (bad)
		fail("%u mempool(s) not full %s", bad, where);
}

MemFile::MemFile(const char *name)
{
	fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		fail("memfd_create %s", name);
	std::snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
}

void MemFile::write(const uint8_t *data, size_t size)
{
	size_t done = 0;
	if (ftruncate(fd, 0) != 0)
		fail("ftruncate %s", path);
	while (done < size) {
		ssize_t w = pwrite(fd, data + done, size - done, (off_t)done);
		if (w <= 0)
			fail("write to %s", path);
		done += (size_t)w;
	}
}

void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	std::fputs("fuzz invariant failed: ", stderr);
	std::vfprintf(stderr, fmt, ap);
	std::fputc('\n', stderr);
	va_end(ap);
	std::abort();
}

} // namespace lrx_fuzz
