/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <hwloc.h>

#include "topology.h"

static void read_cpu_model(char *buf, size_t len)
{
	snprintf(buf, len, "unknown");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[256];
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "model name", 10) == 0) {
			const char *colon = strchr(line, ':');
			if (colon) {
				snprintf(buf, len, "%s", colon + 2);
				buf[strcspn(buf, "\n")] = '\0';
			}
			break;
		}
	}
	fclose(f);
}

static unsigned cache_size(hwloc_topology_t topo, hwloc_obj_type_t type,
			   hwloc_obj_t *obj_out)
{
	hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, 0);
	if (obj_out)
		*obj_out = obj;
	return obj && obj->attr ? (unsigned)obj->attr->cache.size : 0;
}

int lrx_topology_read(struct lrx_topology *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->l1i_source, sizeof(t->l1i_source), "unknown");
	read_cpu_model(t->cpu_model, sizeof(t->cpu_model));

	hwloc_topology_t topo;
	if (hwloc_topology_init(&topo) < 0)
		return -ENOMEM;
	if (hwloc_topology_load(topo) < 0) {
		hwloc_topology_destroy(topo);
		return -EIO;
	}
	int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
	t->cores = n > 0 ? (unsigned)n : 0;
	n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
	t->pus = n > 0 ? (unsigned)n : 0;
	n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
	t->numa_nodes = n > 0 ? (unsigned)n : 1;

	hwloc_obj_t l1i;
	t->l1i_bytes = cache_size(topo, HWLOC_OBJ_L1ICACHE, &l1i);
	if (t->l1i_bytes) {
		t->l1i_line = l1i->attr->cache.linesize;
		t->l1i_assoc = l1i->attr->cache.associativity;
		snprintf(t->l1i_source, sizeof(t->l1i_source), "hwloc");
	}
	t->l1d_bytes = cache_size(topo, HWLOC_OBJ_L1CACHE, NULL);
	t->llc_bytes = cache_size(topo, HWLOC_OBJ_L3CACHE, NULL);
	if (!t->llc_bytes)
		t->llc_bytes = cache_size(topo, HWLOC_OBJ_L2CACHE, NULL);
	hwloc_topology_destroy(topo);

	if (!t->l1i_bytes) {
		/* some VMs hide caches from hwloc; glibc reads CPUID */
		long size = sysconf(_SC_LEVEL1_ICACHE_SIZE);
		if (size > 0) {
			t->l1i_bytes = (unsigned)size;
			long line = sysconf(_SC_LEVEL1_ICACHE_LINESIZE);
			long assoc = sysconf(_SC_LEVEL1_ICACHE_ASSOC);
			t->l1i_line = line > 0 ? (unsigned)line : 0;
			t->l1i_assoc = assoc > 0 ? (int)assoc : 0;
			snprintf(t->l1i_source, sizeof(t->l1i_source), "sysconf");
		}
	}
	return 0;
}

const char *lrx_topology_l1i_ways(const struct lrx_topology *t, char *buf, size_t len)
{
	if (t->l1i_assoc < 0)
		return "fully associative";
	if (t->l1i_assoc == 0)
		return "associativity unknown";
	snprintf(buf, len, "%d-way", t->l1i_assoc);
	return buf;
}

void lrx_topology_print(const struct lrx_topology *t, FILE *out)
{
	char ways[24];
	fprintf(out, "cpu: %s\n", t->cpu_model);
	fprintf(out, "cores: %u, hardware threads: %u, NUMA nodes: %u\n",
		t->cores, t->pus, t->numa_nodes);
	if (t->l1i_bytes)
		fprintf(out, "L1i: %u KiB, %u-byte lines, %s (from %s)\n", t->l1i_bytes / 1024,
			t->l1i_line, lrx_topology_l1i_ways(t, ways, sizeof(ways)), t->l1i_source);
	else
		fprintf(out, "L1i: unknown (hwloc and sysconf report none)\n");
	if (t->l1d_bytes)
		fprintf(out, "L1d: %u KiB\n", t->l1d_bytes / 1024);
	if (t->llc_bytes)
		fprintf(out, "last-level cache: %u KiB\n", t->llc_bytes / 1024);
}

int lrx_proc_stat_cpu(const char *text, unsigned cpu, uint64_t *busy, uint64_t *total)
{
	char tag[24];
	int tag_len = snprintf(tag, sizeof(tag), "cpu%u ", cpu);
	for (const char *line = text; line && *line; line = strchr(line, '\n')) {
		if (*line == '\n')
			line++;
		if (strncmp(line, tag, (size_t)tag_len) != 0)
			continue;
		/* user nice system idle iowait irq softirq steal (guest is in user) */
		uint64_t v[8] = {0};
		const char *p = line + tag_len;
		for (unsigned i = 0; i < 8; i++) {
			char *end;
			v[i] = strtoull(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
		*total = 0;
		for (unsigned i = 0; i < 8; i++)
			*total += v[i];
		*busy = *total - v[3] - v[4];
		return 0;
	}
	return -ENOENT;
}

static int read_proc_stat(char *buf, size_t len)
{
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -errno;
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return 0;
}

int lrx_cpus_busy_share(const unsigned *cpus, unsigned n, unsigned interval_ms, double *share)
{
	enum { STAT_MAX = 256 * 1024 };
	char *before = malloc(STAT_MAX), *after = malloc(STAT_MAX);
	int rc = before && after ? read_proc_stat(before, STAT_MAX) : -ENOMEM;
	if (rc == 0) {
		struct timespec ts = {interval_ms / 1000, (long)(interval_ms % 1000) * 1000000L};
		nanosleep(&ts, NULL);
		rc = read_proc_stat(after, STAT_MAX);
	}
	for (unsigned i = 0; i < n; i++) {
		uint64_t b0, t0, b1, t1;
		share[i] = -1;
		if (rc == 0 && lrx_proc_stat_cpu(before, cpus[i], &b0, &t0) == 0 &&
		    lrx_proc_stat_cpu(after, cpus[i], &b1, &t1) == 0 && t1 > t0)
			share[i] = (double)(b1 - b0) / (double)(t1 - t0);
	}
	free(before);
	free(after);
	return rc;
}
