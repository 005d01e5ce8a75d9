/* SPDX-License-Identifier: BSD-3-Clause
 * Host topology from hwloc: cores, NUMA nodes and the L1 instruction cache
 * geometry the footprint sweeps are sized against. */
#ifndef LISTRX_TOPOLOGY_H
#define LISTRX_TOPOLOGY_H

#include <stdint.h>
#include <stdio.h>

struct lrx_topology {
	unsigned cores;          /* physical cores */
	unsigned pus;            /* hardware threads */
	unsigned numa_nodes;
	unsigned l1i_bytes;      /* 0 = unknown */
	unsigned l1i_line;
	int l1i_assoc;           /* -1 = fully associative, 0 = unknown */
	unsigned l1d_bytes;
	unsigned llc_bytes;
	char l1i_source[32];     /* "hwloc", "sysconf" or "unknown" */
	char cpu_model[128];
};

/* Fills topo; returns 0 or -errno (topo still holds what was found). */
int lrx_topology_read(struct lrx_topology *topo);
void lrx_topology_print(const struct lrx_topology *topo, FILE *out);

/* The L1i associativity as text: "8-way", "fully associative" or
 * "associativity unknown" (never "0-way"); buf holds at least 24 bytes. */
const char *lrx_topology_l1i_ways(const struct lrx_topology *topo, char *buf, size_t len);

/* One CPU's time from a /proc/stat text (its "cpuN" line, in clock
 * ticks): busy = everything but idle and iowait, as top(1) counts it.
 * Returns 0, or -ENOENT when the text has no line for cpu. */
int lrx_proc_stat_cpu(const char *text, unsigned cpu, uint64_t *busy, uint64_t *total);

/* The share (0..1) of each CPU in cpus[] that was busy over the next
 * interval_ms, from /proc/stat; share[i] < 0 where it cannot be read.
 * Returns 0 or -errno. */
int lrx_cpus_busy_share(const unsigned *cpus, unsigned n, unsigned interval_ms, double *share);

#endif
