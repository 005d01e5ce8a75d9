/* SPDX-License-Identifier: BSD-3-Clause
 * gro_vs_rte_gro: listrx's GRO stage against DPDK rte_gro on the same TCP
 * stream, the same bursts, in the same run (docs/gro.md).
 *
 * Each round builds `segments` in-order TCP/IPv4 segments (round-robin over
 * `flows` flows, MSS `mss`, NIC hints as a real NIC gives them: RSS hash,
 * IP and L4 checksum good, packet_type), then times only the GRO work:
 *  - listrx:    gro.process_burst + release() after every burst, flush()
 *               at every poll end (budget used when the burst was full, as
 *               napi_poll), flush(budget unused) after the last burst;
 *  - rte-heavy: rte_gro_reassemble(ctx) per burst + rte_gro_timeout_flush
 *               with the same age (1 ms) per poll, flush all at the end;
 *  - rte-light: rte_gro_reassemble_burst per burst (merges within a burst).
 * The implementations take turns round by round, so machine noise hits
 * them alike. Reported: median input segments/s over rounds (Mpps), min
 * and max, TSC cycles per segment, merge ratio (segments per output
 * packet), and the payload bytes out (must equal in).
 *
 * Usage: gro_vs_rte_gro [--segments N] [--rounds R] [--burst B]
 *          [--flows F] [--mss M] [--rte-items I] [--file-prefix P]
 * (--rte-items: rte_gro heavy mode max_item_per_flow, default 32; with
 * fewer items rte_gro heavy merged almost nothing in our runs.)
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_gro.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "../support/first_cpu.h"
#include "../support/runtime_dir.h"
#include "stage.h"
#include "stage_keys.h"

#define HDR_LEN (RTE_ETHER_HDR_LEN + 20 + 20)

enum impl { IMPL_LISTRX, IMPL_RTE_HEAVY, IMPL_RTE_LIGHT, IMPL_MAX };
static const char *const impl_names[IMPL_MAX] = {"listrx-gro", "rte_gro-heavy",
						 "rte_gro-light"};

struct opts {
	unsigned segments, rounds, burst, flows, mss;
	unsigned rte_items; /* rte_gro heavy: max_item_per_flow */
	const char *prefix;
};

struct result {
	double *mpps;          /* per round */
	uint64_t segments, outputs, payload_out;
};

static void build_segment(struct rte_mbuf *m, unsigned flow, uint32_t seq,
			  uint16_t ip_id, unsigned mss)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ether_hdr *eth = (void *)p;
	struct rte_ipv4_hdr *ip = (void *)(eth + 1);
	struct rte_tcp_hdr *tcp = (void *)(ip + 1);
	memset(eth, 0, sizeof(*eth));
	eth->dst_addr.addr_bytes[5] = 2;
	eth->src_addr.addr_bytes[5] = 1;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(40 + mss));
	ip->packet_id = rte_cpu_to_be_16(ip_id);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(0x0a000001);
	ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memset(tcp, 0, sizeof(*tcp));
	tcp->src_port = rte_cpu_to_be_16((uint16_t)(10000 + flow));
	tcp->dst_port = rte_cpu_to_be_16(5201);
	tcp->sent_seq = rte_cpu_to_be_32(seq);
	tcp->recv_ack = rte_cpu_to_be_32(1);
	tcp->data_off = 5 << 4;
	tcp->tcp_flags = RTE_TCP_ACK_FLAG;
	tcp->rx_win = rte_cpu_to_be_16(65535);
	m->data_len = (uint16_t)(HDR_LEN + mss);
	m->pkt_len = m->data_len;
	m->l2_len = RTE_ETHER_HDR_LEN;
	m->l3_len = 20;
	m->l4_len = 20;
	m->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 |
			 RTE_PTYPE_L4_TCP;
	/* what a NIC reports: both checksums good, RSS hash */
	m->ol_flags = RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD |
		      RTE_MBUF_F_RX_RSS_HASH;
	m->hash.rss = 0x9e3779b9u * (flow + 1);
	m->port = 0;
}

static int fill_round(struct rte_mempool *mp, struct rte_mbuf **pkts,
		      const struct opts *o)
{
	if (rte_pktmbuf_alloc_bulk(mp, pkts, o->segments) != 0)
		return -ENOMEM;
	for (unsigned i = 0; i < o->segments; i++) {
		unsigned flow = i % o->flows;
		unsigned k = i / o->flows;
		build_segment(pkts[i], flow, 1 + k * o->mss, (uint16_t)k,
			      o->mss);
	}
	return 0;
}

static void account(struct result *r, struct rte_mbuf **out, unsigned n)
{
	r->outputs += n;
	for (unsigned i = 0; i < n; i++) {
		r->payload_out += out[i]->pkt_len - HDR_LEN;
		rte_pktmbuf_free(out[i]);
	}
}

/* One round of one implementation; returns TSC cycles of GRO work. */
static uint64_t run_round(enum impl impl, struct rte_mbuf **pkts,
			  struct rte_mbuf **out, unsigned *n_out,
			  const struct opts *o, const struct lrx_stage *st,
			  void *gro_ctx, void *rte_ctx, uint64_t age_cycles)
{
	lrx_next_t nexts[LRX_BURST_MAX];
	struct rte_gro_param light = {
		.gro_types = RTE_GRO_TCP_IPV4,
		.max_flow_num = (uint16_t)RTE_MIN(o->flows, o->burst),
		.max_item_per_flow = (uint16_t)o->burst,
	};
	unsigned nout = 0;
	uint64_t t0 = rte_rdtsc();
	for (unsigned i = 0; i < o->segments; i += o->burst) {
		uint16_t n = (uint16_t)RTE_MIN(o->burst, o->segments - i);
		struct rte_mbuf **b = pkts + i;
		bool budget_used = n == o->burst;
		switch (impl) {
		case IMPL_LISTRX: {
			st->process_burst(gro_ctx, b, n, nexts);
			uint16_t k;
			while ((k = st->release(gro_ctx, out + nout,
						LRX_BURST_MAX)) != 0)
				nout += k;
			st->flush(gro_ctx, budget_used);
			while ((k = st->release(gro_ctx, out + nout,
						LRX_BURST_MAX)) != 0)
				nout += k;
			break;
		}
		case IMPL_RTE_HEAVY: {
			uint16_t left = rte_gro_reassemble(b, n, rte_ctx);
			memcpy(out + nout, b, left * sizeof(*b));
			nout += left;
			nout += rte_gro_timeout_flush(rte_ctx, age_cycles,
						      RTE_GRO_TCP_IPV4,
						      out + nout,
						      (uint16_t)RTE_MIN(
							      o->segments - nout,
							      65535u));
			break;
		}
		case IMPL_RTE_LIGHT: {
			uint16_t k = rte_gro_reassemble_burst(b, n, &light);
			memcpy(out + nout, b, k * sizeof(*b));
			nout += k;
			break;
		}
		default:
			break;
		}
	}
	/* the end of the stream: a poll that did not use its budget */
	if (impl == IMPL_LISTRX) {
		st->flush(gro_ctx, false);
		uint16_t k;
		while ((k = st->release(gro_ctx, out + nout, LRX_BURST_MAX)) != 0)
			nout += k;
	} else if (impl == IMPL_RTE_HEAVY) {
		nout += rte_gro_timeout_flush(rte_ctx, 0, RTE_GRO_TCP_IPV4,
					      out + nout,
					      (uint16_t)RTE_MIN(o->segments - nout,
								65535u));
	}
	uint64_t cycles = rte_rdtsc() - t0;
	*n_out = nout;
	return cycles;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--segments N] [--rounds R] [--burst B] [--flows F] "
		"[--mss M] [--rte-items I] [--file-prefix P]\n",
		prog);
}

int main(int argc, char **argv)
{
	struct opts o = {.segments = 44 * 64, .rounds = 30, .burst = 32,
			 .flows = 1, .mss = 1460, .rte_items = 32, .prefix = "gro_vs_rte_gro"};
	static const struct option long_opts[] = {
		{"segments", required_argument, NULL, 's'},
		{"rounds", required_argument, NULL, 'r'},
		{"burst", required_argument, NULL, 'b'},
		{"flows", required_argument, NULL, 'f'},
		{"mss", required_argument, NULL, 'm'},
		{"file-prefix", required_argument, NULL, 'p'},
		{"rte-items", required_argument, NULL, 'i'},
		{NULL, 0, NULL, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		unsigned long v = 0;
		if (c != 'p' && c != '?') {
			char *end;
			v = strtoul(optarg, &end, 10);
			if (*end || !v) {
				fprintf(stderr, "gro_vs_rte_gro: --%s %s: expected "
						"a positive integer\n",
					c == 's' ? "segments" : c == 'r' ? "rounds" : c == 'b' ? "burst" : c == 'f' ? "flows" : c == 'm' ? "mss" : "rte-items",
					optarg);
				return 2;
			}
		}
		switch (c) {
		case 's': o.segments = (unsigned)v; break;
		case 'r': o.rounds = (unsigned)v; break;
		case 'b': o.burst = (unsigned)v; break;
		case 'f': o.flows = (unsigned)v; break;
		case 'm': o.mss = (unsigned)v; break;
		case 'p': o.prefix = optarg; break;
		case 'i': o.rte_items = (unsigned)v; break;
		default: usage(argv[0]); return 2;
		}
	}
	if (o.burst > 128 || o.mss > 1460 || o.segments > 60000 || o.flows > 4096 ||
	    o.rte_items > 1024) {
		fprintf(stderr, "gro_vs_rte_gro: --burst 1..128 (rte_gro light "
				"mode limit), --mss 1..1460, --segments "
				"1..60000, --flows 1..4096, --rte-items 1..1024\n");
		return 2;
	}

	char prefix_arg[128];
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", o.prefix);
	char lcore0[32];
	char *eal_argv[] = {argv[0], "--no-huge", "--no-pci", "--no-shconf",
			    "-m", "1024", "--lcores", (char *)lrx_test_lcore0(lcore0, sizeof(lcore0)),
			    "--log-level",
			    "lib.*:error", prefix_arg};
	if (rte_eal_init((int)RTE_DIM(eal_argv), eal_argv) < 0) {
		fprintf(stderr, "gro_vs_rte_gro: rte_eal_init: %s\n",
			rte_strerror(rte_errno));
		return 1;
	}
	lrx_test_remove_runtime_dir_at_exit();
	struct rte_mempool *mp = rte_pktmbuf_pool_create(
		"gro_bench", o.segments + 64, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
		(int)rte_socket_id());
	struct rte_mbuf **pkts = calloc(o.segments, sizeof(*pkts));
	struct rte_mbuf **out = calloc(o.segments + LRX_BURST_MAX, sizeof(*out));
	const struct lrx_stage *st = lrx_stage_find("gro");
	if (!mp || !pkts || !out || !st) {
		fprintf(stderr, "gro_vs_rte_gro: setup failed (pool %p, gro "
				"stage %p)\n", (void *)mp, (const void *)st);
		return 1;
	}
	void *gro_ctx = rte_zmalloc("gro", st->ctx_size, RTE_CACHE_LINE_SIZE);
	void *gro_conf = lrx_stage_conf_new(st); /* the defaults */
	char err[256] = "";
	struct lrx_stage_init init = {.instance = "gro", .burst = (uint16_t)o.burst,
				      .conf = gro_conf, .err = err, .err_len = sizeof(err)};
	if (!gro_ctx || st->init(gro_ctx, &init) != 0) {
		fprintf(stderr, "gro_vs_rte_gro: gro init: %s\n", err);
		return 1;
	}
	struct rte_gro_param heavy = {
		.gro_types = RTE_GRO_TCP_IPV4,
		.max_flow_num = (uint16_t)RTE_MIN(o.flows * 2, 65535u),
		.max_item_per_flow = (uint16_t)o.rte_items,
		.socket_id = (uint16_t)rte_socket_id(),
	};
	void *rte_ctx = rte_gro_ctx_create(&heavy);
	if (!rte_ctx) {
		fprintf(stderr, "gro_vs_rte_gro: rte_gro_ctx_create failed\n");
		return 1;
	}
	uint64_t hz = rte_get_tsc_hz();
	uint64_t age_cycles = hz / 1000; /* one jiffy at HZ=1000 */

	struct result res[IMPL_MAX];
	memset(res, 0, sizeof(res));
	for (int i = 0; i < IMPL_MAX; i++)
		res[i].mpps = calloc(o.rounds, sizeof(double));
	uint64_t payload_in = (uint64_t)o.segments * o.mss;
	int rc = 0;
	for (unsigned round = 0; round < o.rounds; round++) {
		for (int i = 0; i < IMPL_MAX; i++) {
			/* rotate who goes first */
			enum impl impl = (enum impl)((i + round) % IMPL_MAX);
			if (fill_round(mp, pkts, &o) != 0) {
				fprintf(stderr, "gro_vs_rte_gro: pool empty\n");
				return 1;
			}
			unsigned n_out = 0;
			uint64_t cyc = run_round(impl, pkts, out, &n_out, &o, st,
						 gro_ctx, rte_ctx, age_cycles);
			struct result *r = &res[impl];
			uint64_t before = r->payload_out;
			account(r, out, n_out);
			if (r->payload_out - before != payload_in) {
				fprintf(stderr, "gro_vs_rte_gro: %s lost payload: "
						"%lu of %lu bytes out\n",
					impl_names[impl],
					(unsigned long)(r->payload_out - before),
					(unsigned long)payload_in);
				rc = 1;
			}
			r->segments += o.segments;
			r->mpps[round] = (double)o.segments * (double)hz /
					 (double)cyc / 1e6;
		}
	}
	printf("# gro_vs_rte_gro: segments=%u rounds=%u burst=%u flows=%u "
	       "mss=%u rte_items=%u tsc_hz=%lu (backend: TSC; median/min/max "
	       "over rounds)\n",
	       o.segments, o.rounds, o.burst, o.flows, o.mss, o.rte_items,
	       (unsigned long)hz);
	for (int i = 0; i < IMPL_MAX; i++) {
		struct result *r = &res[i];
		qsort(r->mpps, o.rounds, sizeof(double), cmp_double);
		/* cycles per segment at the median round (the mean is
		 * dominated by rounds the scheduler preempted) */
		printf("impl=%s median_mpps=%.2f min_mpps=%.2f max_mpps=%.2f "
		       "median_cycles_per_segment=%.1f merge_ratio=%.2f "
		       "outputs=%lu\n",
		       impl_names[i], r->mpps[o.rounds / 2], r->mpps[0],
		       r->mpps[o.rounds - 1],
		       (double)hz / (r->mpps[o.rounds / 2] * 1e6),
		       (double)r->segments / (double)r->outputs,
		       (unsigned long)r->outputs);
	}
	/* listrx GRO's own counters over all rounds (flush causes) */
	printf("listrx-gro counters:");
	for (const struct lrx_stage_counter *k = st->counters; k && k->name; k++) {
		uint64_t v;
		memcpy(&v, (const char *)gro_ctx + k->offset, sizeof(v));
		if (v)
			printf(" %s=%lu", k->name, (unsigned long)v);
	}
	printf("\n");
	printf("ratio listrx/rte_gro-heavy=%.2f listrx/rte_gro-light=%.2f "
	       "(median segments/s)\n",
	       res[IMPL_LISTRX].mpps[o.rounds / 2] /
		       res[IMPL_RTE_HEAVY].mpps[o.rounds / 2],
	       res[IMPL_LISTRX].mpps[o.rounds / 2] /
		       res[IMPL_RTE_LIGHT].mpps[o.rounds / 2]);
	st->fini(gro_ctx);
	rte_free(gro_ctx);
	free(gro_conf);
	rte_gro_ctx_destroy(rte_ctx);
	for (int i = 0; i < IMPL_MAX; i++)
		free(res[i].mpps);
	free(pkts);
	free(out);
	rte_mempool_free(mp);
	rte_eal_cleanup();
	return rc;
}
