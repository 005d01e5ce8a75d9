/* SPDX-License-Identifier: BSD-3-Clause
 * EAL's runtime directory (/var/run/dpdk/PREFIX): rte_eal_cleanup does
 * not remove it, so listrx does, at exit and when a signal ends a run
 * whose polls are stuck (from the handler: async-signal-safe).
 */
#ifndef LISTRX_RUNTIME_DIR_H
#define LISTRX_RUNTIME_DIR_H

#include <stdbool.h>

/* Before rte_eal_init: registers the removal at exit. own: the prefix is
 * listrx's own (listrx-PID), nobody else's. */
void lrx_runtime_dir_prepare(bool own);
/* After rte_eal_init (also when it failed): the directory EAL chose,
 * and whether this process initialised as its primary. */
void lrx_runtime_dir_set(const char *path, bool primary);
/* The directory, "" before lrx_runtime_dir_set. */
const char *lrx_runtime_dir(void);
/* Removes it now: every entry of an own directory, EAL's files of a
 * --file-prefix one this process initialised as primary, then the
 * directory if empty. Async-signal-safe (no allocation, no stdio). */
void lrx_runtime_dir_remove(void);

#endif
