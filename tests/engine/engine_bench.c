/* SPDX-License-Identifier: BSD-3-Clause
 * Engine micro-benchmark (docs/engines.md): a pipeline
 * of N `touch` stages, each carrying `--footprint-kb` of ballast, over
 * 64-byte UDP frames at a fixed burst, in each engine. The same mbufs are
 * reused every burst (the sink is reset, not completed), so the figure is
 * the engine plus the stage code, without RX/TX/alloc/free.
 *
 *   engine_bench [--engine all|ENGINE[,ENGINE...]] (packet|burst|hybrid:K|static|graph)
 *                [--stages 4] [--footprint-kb KB] [--burst 64]
 *                [--packets N] [--reps R] [--stats off|counters|cycles]
 *                [--file-prefix P]
 *
 * Prints one line per engine: median, min and max Mpps over the reps, the
 * reps interleaved across engines (same run). Under cachegrind, run twice
 * with different --packets and --reps 1 and divide the difference of the
 * counts by the difference of packets (start-up cancels out).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "../support/first_cpu.h"
#include "../support/runtime_dir.h"
#include "engine_internal.h"
#include "pipeline.h"
#include "sink.h"
#include "stage_keys.h"

#define BENCH_FRAMES 1024 /* distinct mbufs cycled through */
#define BENCH_MAX_ENGINES 8
#define BENCH_MAX_REPS 64

struct bench_engine {
	char label[32];
	enum lrx_engine_kind kind;
	unsigned k;
	struct lrx_pipeline *p;
	double mpps[BENCH_MAX_REPS];
};

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--engine all|ENGINE[,ENGINE...]] [--stages N]\n"
		"          [--footprint-kb KB] [--burst B] [--packets N] [--reps R]\n"
		"          [--stats off|counters|cycles] [--file-prefix P]\n",
		prog);
	exit(2);
}

static int build_udp64(struct rte_mbuf *m, unsigned flow)
{
	/* 60 bytes + FCS = 64 on the wire */
	uint8_t *d = (uint8_t *)rte_pktmbuf_append(m, 60);
	if (d == NULL)
		return -ENOSPC;
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)d;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	memset(d, 0, 60);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	eth->dst_addr.addr_bytes[0] = 0x02;
	eth->src_addr.addr_bytes[0] = 0x02;
	eth->src_addr.addr_bytes[5] = 1;
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16(46);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = rte_cpu_to_be_32(0x0a000001);
	ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp->src_port = rte_cpu_to_be_16((uint16_t)(1000 + flow % 256));
	udp->dst_port = rte_cpu_to_be_16(2000);
	udp->dgram_len = rte_cpu_to_be_16(26);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *engine_arg = "all", *prefix = "engbench";
	enum lrx_stats_level level = LRX_STATS_OFF;
	long l1i = sysconf(_SC_LEVEL1_ICACHE_SIZE);
	unsigned stages = 4, footprint_kb = l1i > 0 ? (unsigned)(l1i / 1024) : 32;
	unsigned burst = 64, reps = 5;
	unsigned long packets = 2000000;

	for (int i = 1; i < argc; i += 2) { /* option, value */
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (v == NULL)
			usage(argv[0]);
		if (!strcmp(a, "--engine"))
			engine_arg = v;
		else if (!strcmp(a, "--stages"))
			stages = (unsigned)atoi(v);
		else if (!strcmp(a, "--footprint-kb"))
			footprint_kb = (unsigned)atoi(v);
		else if (!strcmp(a, "--burst"))
			burst = (unsigned)atoi(v);
		else if (!strcmp(a, "--packets"))
			packets = strtoul(v, NULL, 10);
		else if (!strcmp(a, "--reps"))
			reps = (unsigned)atoi(v);
		else if (!strcmp(a, "--file-prefix"))
			prefix = v;
		else if (!strcmp(a, "--stats"))
			level = !strcmp(v, "cycles")     ? LRX_STATS_CYCLES
				: !strcmp(v, "counters") ? LRX_STATS_COUNTERS
							 : LRX_STATS_OFF;
		else
			usage(argv[0]);
	}
	if (stages < 1 || stages > LRX_PIPELINE_MAX_STAGES || burst < 1 ||
	    burst > LRX_BURST_MAX || reps < 1 || reps > BENCH_MAX_REPS)
		usage(argv[0]);

	char lcore0[32];
	char *eal_argv[] = {argv[0], "--no-huge", "--no-pci", "--no-shconf",
			    "-m", "256", "--lcores", (char *)lrx_test_lcore0(lcore0, sizeof(lcore0)),
			    "--log-level", "*:warning",
			    "--no-telemetry", "--file-prefix", (char *)prefix};
	if (rte_eal_init((int)RTE_DIM(eal_argv), eal_argv) < 0) {
		fprintf(stderr, "engine_bench: EAL init failed\n");
		return 1;
	}
	lrx_test_remove_runtime_dir_at_exit();
	struct rte_mempool *mp = rte_pktmbuf_pool_create(
		"bench_pool", BENCH_FRAMES * 2, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
		(int)rte_socket_id());
	struct rte_mbuf *frames[BENCH_FRAMES];
	if (mp == NULL || rte_pktmbuf_alloc_bulk(mp, frames, BENCH_FRAMES)) {
		fprintf(stderr, "engine_bench: no mbufs\n");
		return 1;
	}
	for (unsigned i = 0; i < BENCH_FRAMES; i++)
		if (build_udp64(frames[i], i) < 0)
			return 1;

	struct bench_engine engines[BENCH_MAX_ENGINES];
	unsigned n_engines = 0;
	/* "all" or a comma-separated list */
	char list[256];
	const char *names[BENCH_MAX_ENGINES];
	unsigned n_names = 0;
	snprintf(list, sizeof(list), "%s",
		 strcmp(engine_arg, "all") ? engine_arg
					   : "packet,burst,hybrid:2,static,graph");
	for (char *save = NULL, *tok = strtok_r(list, ",", &save);
	     tok != NULL && n_names < BENCH_MAX_ENGINES;
	     tok = strtok_r(NULL, ",", &save))
		names[n_names++] = tok;

	void *touch_conf = lrx_stage_conf_new(lrx_stage_find("touch")); /* bytes=64 */
	for (unsigned i = 0; i < n_names; i++) {
		struct bench_engine *e = &engines[n_engines++];
		struct lrx_pipeline_conf conf;
		char err[256];

		memset(e, 0, sizeof(*e));
		memset(&conf, 0, sizeof(conf));
		snprintf(e->label, sizeof(e->label), "%s", names[i]);
		if (lrx_engine_parse(names[i], &e->kind, &e->k) < 0) {
			fprintf(stderr, "engine_bench: bad engine %s\n", names[i]);
			return 2;
		}
		conf.engine = e->kind;
		conf.hybrid_k = RTE_MIN(e->k, stages);
		conf.burst = (uint16_t)burst;
		conf.stats_level = level;
		conf.n_stages = stages;
		conf.socket_id = (int)rte_socket_id();
		conf.lcore_id = rte_lcore_id();
		for (unsigned s = 0; s < stages; s++) {
			conf.stages[s].stage = lrx_stage_find("touch");
			conf.stages[s].conf = touch_conf;
			conf.stages[s].footprint_kb = footprint_kb;
			if (lrx_footprint_check(s, footprint_kb, err, sizeof(err)) < 0) {
				fprintf(stderr, "engine_bench: --footprint-kb %u: %s\n",
					footprint_kb, err);
				return 2;
			}
		}
		if (lrx_pipeline_create(&conf, &e->p, err, sizeof(err)) < 0) {
			fprintf(stderr, "engine_bench: %s: %s\n", names[i], err);
			return 1;
		}
	}

	static struct lrx_sink sink;
	const unsigned long bursts = (packets + burst - 1) / burst;
	const double hz = (double)rte_get_tsc_hz();
	uint64_t check = 0;

	for (unsigned r = 0; r < reps; r++) {
		for (unsigned i = 0; i < n_engines; i++) {
			struct bench_engine *e = &engines[i];
			unsigned at = 0;
			uint64_t start = rte_rdtsc();
			for (unsigned long b = 0; b < bursts; b++) {
				lrx_pipeline_process(e->p, frames + at,
						     (uint16_t)burst, &sink);
				lrx_pipeline_poll_end(e->p, true, &sink);
				sink.n = 0; /* frames are reused, not freed */
				at += burst;
				if (at + burst > BENCH_FRAMES)
					at = 0;
			}
			uint64_t cycles = rte_rdtsc() - start;
			e->mpps[r] = (double)(bursts * burst) /
				     ((double)cycles / hz) / 1e6;
			check += lrx_pipeline_ballast_checksum(e->p);
		}
	}
	/* ratios within each rep (same load), then their median: robust to
	 * the machine's load drifting between reps */
	int ref_packet = -1, ref_graph = -1;
	for (unsigned i = 0; i < n_engines; i++) {
		if (engines[i].kind == LRX_ENGINE_PACKET)
			ref_packet = (int)i;
		if (engines[i].kind == LRX_ENGINE_GRAPH)
			ref_graph = (int)i;
	}
	for (unsigned i = 0; i < n_engines; i++) {
		int refs[2] = {ref_packet, ref_graph};
		const char *ref_names[2] = {"packet", "graph"};
		for (unsigned k = 0; k < 2; k++) {
			double ratio[BENCH_MAX_REPS];
			if (refs[k] < 0 || refs[k] == (int)i)
				continue;
			for (unsigned r = 0; r < reps; r++)
				ratio[r] = engines[i].mpps[r] /
					   engines[refs[k]].mpps[r];
			qsort(ratio, reps, sizeof(double), cmp_double);
			printf("ratio %s/%s: median=%.3f min=%.3f max=%.3f (per rep, reps=%u)\n",
			       engines[i].label, ref_names[k], ratio[reps / 2],
			       ratio[0], ratio[reps - 1], reps);
		}
	}
	for (unsigned i = 0; i < n_engines; i++) {
		struct bench_engine *e = &engines[i];
		double sorted[BENCH_MAX_REPS];
		memcpy(sorted, e->mpps, reps * sizeof(double));
		qsort(sorted, reps, sizeof(double), cmp_double);
		printf("engine=%s stages=%u footprint_kb_per_stage=%u footprint_total_bytes=%u "
		       "burst=%u packets_per_rep=%lu reps=%u mpps_median=%.3f mpps_min=%.3f mpps_max=%.3f\n",
		       e->label, stages, footprint_kb,
		       lrx_pipeline_footprint_bytes(e->p), burst, bursts * burst,
		       reps, sorted[reps / 2], sorted[0], sorted[reps - 1]);
		lrx_pipeline_destroy(e->p);
	}
	printf("ballast_checksum=%llu\n", (unsigned long long)check);
	rte_pktmbuf_free_bulk(frames, BENCH_FRAMES);
	free(touch_conf);
	rte_eal_cleanup();
	return 0;
}
