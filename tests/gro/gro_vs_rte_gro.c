/* SPDX-License-Identifier: BSD-3-Clause
 * gro_vs_rte_gro: listrx's GRO against DPDK rte_gro, heavy and light
 * mode, on the same net_synth tcp-stream, interleaved in one process
 * (docs/gro.md; `listrx-bench gro-synth` runs it over a grid and pairs
 * its rounds).
 *
 * Each GRO runs as the stage the binary runs (descriptor gro, or rte-gro
 * with mode=heavy / mode=light, default keys) on its own net_synth port
 * (profile=tcp-stream, the same flows, MSS and seed: the same segments).
 * A poll is what the binary's burst engine does with a one-stage
 * pipeline `gro`: rte_eth_rx_burst, then, timed with the TSC,
 * process_burst, release(), flush(budget used when the burst was full),
 * release(), and the free of what left (rte_pktmbuf_free_bulk: the
 * chains). The NIC's work (net_synth writing the segment) is outside the
 * timed part, so no empty pipeline has to be subtracted. A round is
 * --polls polls of each GRO, then an idle poll (flush(budget unused):
 * everything held leaves), so that nothing ages while the others run;
 * the order of the three rotates over the six orders, round by round.
 * Every round checks payload out = payload in per GRO.
 *
 * Output: one line per GRO (median over rounds) and, with --json FILE,
 * every round's cycles and segments per GRO, for pairing.
 *
 * Usage: gro_vs_rte_gro [--flows F] [--burst B] [--mss M] [--rounds R]
 *          [--polls P] [--file-prefix P] [--json FILE] | --version
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>

#include "listrx_build.h"
#include "listrx_vcs.h"

#include "../support/first_cpu.h"
#include "../support/runtime_dir.h"
#include "stage.h"
#include "stage_keys.h"

enum impl { IMPL_LISTRX, IMPL_RTE_HEAVY, IMPL_RTE_LIGHT, IMPL_MAX };
static const char *const impl_names[IMPL_MAX] = {"listrx-gro", "rte_gro-heavy",
						 "rte_gro-light"};
static const char *const impl_stage[IMPL_MAX] = {"gro", "rte-gro", "rte-gro"};
static const char *const impl_mode[IMPL_MAX] = {NULL, "heavy", "light"};

struct opts {
	unsigned flows, burst, mss, rounds, polls;
	const char *prefix, *json;
};

/* One GRO: its port, stage and what it did. */
struct gro_side {
	uint16_t port;
	const struct lrx_stage *st;
	void *ctx;
	void *conf;
	uint64_t *cycles, *segments; /* per round */
	uint64_t outputs, payload_bad;
};

#define OUT_MAX (LRX_BURST_MAX * 4)

static int side_port(struct gro_side *g, enum impl i, const struct opts *o,
		     struct rte_mempool *mp)
{
	char name[32], args[128];
	snprintf(name, sizeof(name), "net_synth%u", 90 + (unsigned)i);
	snprintf(args, sizeof(args), "profile=tcp-stream,flows=%u,mss=%u,copy=0",
		 o->flows, o->mss);
	struct rte_eth_conf conf;
	memset(&conf, 0, sizeof(conf));
	if (rte_vdev_init(name, args) != 0 ||
	    rte_eth_dev_get_port_by_name(name, &g->port) != 0 ||
	    rte_eth_dev_configure(g->port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(g->port, 0, 1024, (unsigned)rte_socket_id(), NULL, mp) != 0 ||
	    rte_eth_tx_queue_setup(g->port, 0, 1024, (unsigned)rte_socket_id(), NULL) != 0 ||
	    rte_eth_dev_start(g->port) != 0) {
		fprintf(stderr, "gro_vs_rte_gro: %s,%s: cannot start the port\n", name, args);
		return -EINVAL;
	}
	return 0;
}

static int side_stage(struct gro_side *g, enum impl i, const struct opts *o)
{
	char err[256] = "", valid[256];
	g->st = lrx_stage_find(impl_stage[i]);
	g->conf = g->st ? lrx_stage_conf_new(g->st) : NULL; /* the defaults */
	g->ctx = g->st ? rte_zmalloc("gro", g->st->ctx_size, RTE_CACHE_LINE_SIZE) : NULL;
	if (!g->conf || !g->ctx ||
	    (impl_mode[i] && lrx_stage_conf_set(g->st, g->conf, "mode", impl_mode[i],
						valid, sizeof(valid)) != 0)) {
		fprintf(stderr, "gro_vs_rte_gro: stage %s: setup failed\n", impl_stage[i]);
		return -EINVAL;
	}
	struct lrx_stage_init init = {.instance = impl_stage[i], .burst = (uint16_t)o->burst,
				      .conf = g->conf, .err = err, .err_len = sizeof(err)};
	if (g->st->init(g->ctx, &init) != 0) {
		fprintf(stderr, "gro_vs_rte_gro: %s init: %s\n", impl_stage[i], err);
		return -EINVAL;
	}
	g->cycles = calloc(o->rounds, sizeof(*g->cycles));
	g->segments = calloc(o->rounds, sizeof(*g->segments));
	return g->cycles && g->segments ? 0 : -ENOMEM;
}

/* Drains release() into out[n..], returns the new n. */
static unsigned drain(const struct gro_side *g, struct rte_mbuf **out, unsigned n)
{
	uint16_t k;
	while (n + LRX_BURST_MAX <= OUT_MAX &&
	       (k = g->st->release(g->ctx, out + n, LRX_BURST_MAX)) != 0)
		n += k;
	return n;
}

/* One poll of the stage, timed from after the RX to after the free. */
static uint64_t poll_once(struct gro_side *g, struct rte_mbuf **pkts, uint16_t n,
			  bool idle, uint16_t burst, uint64_t *bytes_out)
{
	lrx_next_t nexts[LRX_BURST_MAX];
	struct rte_mbuf *out[OUT_MAX];
	uint64_t t0 = rte_rdtsc();
	unsigned k = 0;
	if (n) {
		g->st->process_burst(g->ctx, pkts, n, nexts);
		k = drain(g, out, k);
	}
	g->st->flush(g->ctx, !idle && n == burst);
	k = drain(g, out, k);
	uint64_t t = rte_rdtsc() - t0;
	uint64_t bytes = 0;
	for (unsigned j = 0; j < k; j++)
		bytes += out[j]->pkt_len;
	*bytes_out += bytes;
	t0 = rte_rdtsc();
	rte_pktmbuf_free_bulk(out, k);
	g->outputs += k;
	return t + rte_rdtsc() - t0;
}

/* One round of one GRO: polls, then an idle poll. Payload out must be
 * payload in: frame bytes out + the headers merging took off. */
static void run_round(struct gro_side *g, unsigned round, const struct opts *o)
{
	struct rte_mbuf *pkts[LRX_BURST_MAX];
	uint64_t cycles = 0, segs = 0, bytes_in = 0, bytes_out = 0, outs0 = g->outputs;
	for (unsigned p = 0; p < o->polls; p++) {
		uint16_t n = rte_eth_rx_burst(g->port, 0, pkts, (uint16_t)o->burst);
		for (uint16_t j = 0; j < n; j++)
			bytes_in += pkts[j]->pkt_len;
		segs += n;
		cycles += poll_once(g, pkts, n, false, (uint16_t)o->burst, &bytes_out);
	}
	cycles += poll_once(g, pkts, 0, true, (uint16_t)o->burst, &bytes_out);
	/* each merge strips one segment's headers (14 + 20 + TCP) */
	uint64_t merged = segs - (g->outputs - outs0);
	uint64_t hdr = bytes_in / (segs ? segs : 1) - o->mss;
	g->payload_bad += bytes_out + merged * hdr != bytes_in;
	g->cycles[round] = cycles;
	g->segments[round] = segs;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* cycles per segment of the median round */
static double median_cps(const struct gro_side *g, unsigned rounds)
{
	uint64_t *v = malloc(rounds * sizeof(*v));
	if (!v)
		return 0;
	for (unsigned r = 0; r < rounds; r++)
		v[r] = g->segments[r] ? g->cycles[r] * 1000 / g->segments[r] : 0;
	qsort(v, rounds, sizeof(*v), cmp_u64);
	double m = (double)v[rounds / 2] / 1000.0;
	free(v);
	return m;
}

static uint64_t counter(const struct gro_side *g, const char *name)
{
	for (const struct lrx_stage_counter *k = g->st->counters; k && k->name; k++)
		if (strcmp(k->name, name) == 0) {
			uint64_t v;
			memcpy(&v, (const char *)g->ctx + k->offset, sizeof(v));
			return v;
		}
	return 0;
}

static void write_json(const struct gro_side *g, const struct opts *o, uint64_t hz)
{
	FILE *f = fopen(o->json, "w");
	if (!f) {
		fprintf(stderr, "gro_vs_rte_gro: --json %s: cannot write\n", o->json);
		return;
	}
	fprintf(f, "{\"flows\": %u, \"burst\": %u, \"mss\": %u, \"polls\": %u, \"tsc_hz\": %lu,"
		   " \"impls\": {",
		o->flows, o->burst, o->mss, o->polls, (unsigned long)hz);
	for (int i = 0; i < IMPL_MAX; i++) {
		fprintf(f, "%s\"%s\": {\"segments_in\": %lu, \"merged\": %lu, \"packets_out\": %lu,"
			   " \"payload_bad_rounds\": %lu, \"cycles\": [",
			i ? ", " : "", impl_names[i], (unsigned long)counter(&g[i], "segments_in"),
			(unsigned long)counter(&g[i], "merged"),
			(unsigned long)counter(&g[i], "packets_out"), (unsigned long)g[i].payload_bad);
		for (unsigned r = 0; r < o->rounds; r++)
			fprintf(f, "%s%lu", r ? ", " : "", (unsigned long)g[i].cycles[r]);
		fprintf(f, "], \"segments\": [");
		for (unsigned r = 0; r < o->rounds; r++)
			fprintf(f, "%s%lu", r ? ", " : "", (unsigned long)g[i].segments[r]);
		fprintf(f, "]}");
	}
	fprintf(f, "}}\n");
	fclose(f);
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option long_opts[] = {
		{"flows", required_argument, NULL, 'f'}, {"burst", required_argument, NULL, 'b'},
		{"mss", required_argument, NULL, 'm'},   {"rounds", required_argument, NULL, 'r'},
		{"polls", required_argument, NULL, 'p'}, {"file-prefix", required_argument, NULL, 'x'},
		{"json", required_argument, NULL, 'j'},  {NULL, 0, NULL, 0},
	};
	int c, idx;
	while ((c = getopt_long(argc, argv, "", long_opts, &idx)) != -1) {
		if (c == 'x' || c == 'j') {
			*(c == 'x' ? &o->prefix : &o->json) = optarg;
			continue;
		}
		if (c == '?')
			return -EINVAL;
		char *end;
		unsigned long v = strtoul(optarg, &end, 10);
		if (*end || !v || v > 65536) {
			fprintf(stderr, "gro_vs_rte_gro: --%s %s: expected an integer in 1..65536\n",
				long_opts[idx].name, optarg);
			return -EINVAL;
		}
		unsigned *field[] = {['f'] = &o->flows, ['b'] = &o->burst, ['m'] = &o->mss,
				     ['r'] = &o->rounds, ['p'] = &o->polls};
		*field[c] = (unsigned)v;
	}
	if (o->burst > LRX_BURST_MAX || o->mss < 64 || o->mss > 1460) {
		fprintf(stderr, "gro_vs_rte_gro: --burst 1..%u, --mss 64..1460\n", LRX_BURST_MAX);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {.flows = 1, .burst = 64, .mss = 1460, .rounds = 30, .polls = 64,
			 .prefix = "gro_vs_rte_gro"};
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		/* what listrx --version says of its build, for the bench's
		 * provenance */
		printf("gro_vs_rte_gro\ncommit: %s\nsource: %s\n", LISTRX_COMMIT,
		       LISTRX_SOURCE_DIR);
		return 0;
	}
	if (parse_opts(argc, argv, &o) != 0) {
		fprintf(stderr, "usage: %s [--flows F] [--burst B] [--mss M] [--rounds R] "
				"[--polls P] [--file-prefix P] [--json FILE]\n", argv[0]);
		return 2;
	}
	char prefix_arg[128], lcore0[32];
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", o.prefix);
	char *eal_argv[] = {argv[0], "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
			    "--lcores", (char *)lrx_test_lcore0(lcore0, sizeof(lcore0)),
			    "--log-level", "lib.*:error", prefix_arg};
	if (rte_eal_init((int)RTE_DIM(eal_argv), eal_argv) < 0) {
		fprintf(stderr, "gro_vs_rte_gro: rte_eal_init: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	lrx_test_remove_runtime_dir_at_exit();
	/* per port: its ring of 1024 and what GRO holds (64 x 44 heavy: 32
	 * items x 64 flows) */
	struct rte_mempool *mp = rte_pktmbuf_pool_create(
		"gro_bench", IMPL_MAX * 4096 - 1, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
		(int)rte_socket_id());
	struct gro_side g[IMPL_MAX];
	memset(g, 0, sizeof(g));
	for (int i = 0; i < IMPL_MAX; i++)
		if (!mp || side_port(&g[i], (enum impl)i, &o, mp) != 0 ||
		    side_stage(&g[i], (enum impl)i, &o) != 0)
			return 1;
	/* the six orders of three, round by round */
	static const uint8_t orders[6][IMPL_MAX] = {{0, 1, 2}, {2, 1, 0}, {1, 2, 0},
						     {0, 2, 1}, {2, 0, 1}, {1, 0, 2}};
	for (unsigned r = 0; r < o.rounds; r++)
		for (int k = 0; k < IMPL_MAX; k++)
			run_round(&g[orders[r % 6][k]], r, &o);
	uint64_t hz = rte_get_tsc_hz();
	printf("# gro_vs_rte_gro: net_synth tcp-stream flows=%u mss=%u burst=%u polls=%u "
	       "rounds=%u tsc_hz=%lu (TSC; the GRO's poll and the free of its output)\n",
	       o.flows, o.mss, o.burst, o.polls, o.rounds, (unsigned long)hz);
	int rc = 0;
	for (int i = 0; i < IMPL_MAX; i++) {
		uint64_t out = counter(&g[i], "packets_out");
		printf("impl=%s median_cycles_per_segment=%.1f merge_ratio=%.2f payload_bad_rounds=%lu\n",
		       impl_names[i], median_cps(&g[i], o.rounds),
		       out ? (double)counter(&g[i], "segments_in") / (double)out : 0.0,
		       (unsigned long)g[i].payload_bad);
		rc |= g[i].payload_bad != 0;
	}
	if (o.json)
		write_json(g, &o, hz);
	for (int i = 0; i < IMPL_MAX; i++) {
		g[i].st->fini(g[i].ctx);
		rte_free(g[i].ctx);
		free(g[i].conf);
		free(g[i].cycles);
		free(g[i].segments);
		rte_eth_dev_stop(g[i].port);
		rte_eth_dev_close(g[i].port);
	}
	rte_mempool_free(mp);
	rte_eal_cleanup();
	return rc;
}
