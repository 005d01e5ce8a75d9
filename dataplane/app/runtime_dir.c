/* SPDX-License-Identifier: BSD-3-Clause */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime_dir.h"

static char runtime_dir[PATH_MAX];
/* A directory named after this process is nobody else's: all of it goes.
 * One of a --file-prefix the user gave loses the files EAL's primary
 * creates there (config, the fbarrays, hugepage_info, mp_socket: a
 * shared-config run leaves them) when this process initialised as the
 * primary, then goes if empty; after a failed init (another primary
 * holds the prefix) nothing is touched but an empty directory. */
static bool own_runtime_dir;
static bool primary_runtime_dir;

static bool eal_runtime_file(const char *name)
{
	return !strcmp(name, "config") || !strcmp(name, "hugepage_info") ||
	       !strncmp(name, "fbarray_", 8) || !strncmp(name, "mp_socket", 9) ||
	       !strncmp(name, "dpdk_telemetry", 14) || !strcmp(name, "telemetry");
}

/* getdents64's record (readdir allocates: not for a signal handler) */
struct runtime_dirent {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

void lrx_runtime_dir_remove(void)
{
	if (!runtime_dir[0])
		return;
	int fd = own_runtime_dir || primary_runtime_dir
			 ? open(runtime_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
			 : -1;
	char buf[4096] __attribute__((aligned(8)));
	long n;
	while (fd >= 0 && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long at = 0; at < n;) {
			const struct runtime_dirent *e = (const void *)(buf + at);
			at += e->reclen;
			if (strcmp(e->name, ".") && strcmp(e->name, "..") &&
			    (own_runtime_dir || eal_runtime_file(e->name)))
				unlinkat(fd, e->name, 0); /* a failed init leaves mp_socket */
		}
	if (fd >= 0)
		close(fd);
	rmdir(runtime_dir);
}

/* atexit, registered before rte_eal_init: it runs after EAL's own atexit
 * handler (telemetry's unlink_sockets) */
static void runtime_dir_at_exit(void)
{
	lrx_runtime_dir_remove();
}

void lrx_runtime_dir_prepare(bool own)
{
	own_runtime_dir = own;
	atexit(runtime_dir_at_exit);
}

void lrx_runtime_dir_set(const char *path, bool primary)
{
	snprintf(runtime_dir, sizeof(runtime_dir), "%s", path);
	primary_runtime_dir = primary;
}

const char *lrx_runtime_dir(void)
{
	return runtime_dir;
}
