/* SPDX-License-Identifier: BSD-3-Clause
 * EAL creates a runtime directory (/var/run/dpdk/PREFIX) that
 * rte_eal_cleanup does not remove. A test program calls this once
 * rte_eal_init succeeded; at exit the directory's entries and the
 * directory go, so that a test run leaves nothing in /var/run/dpdk. Each
 * program has a prefix of its own (a pid in it, or a test's name), so no
 * other process uses the directory. C and C++. */
#ifndef LRX_TEST_RUNTIME_DIR_H
#define LRX_TEST_RUNTIME_DIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

static char lrx_test_runtime_dir[4096];

static void lrx_test_runtime_dir_remove(void)
{
	DIR *d = opendir(lrx_test_runtime_dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(lrx_test_runtime_dir);
}

static inline void lrx_test_remove_runtime_dir_at_exit(void)
{
	if (lrx_test_runtime_dir[0])
		return;
	snprintf(lrx_test_runtime_dir, sizeof(lrx_test_runtime_dir), "%s",
		 rte_eal_get_runtime_dir());
	atexit(lrx_test_runtime_dir_remove);
}

#endif
