// SPDX-License-Identifier: BSD-3-Clause
// Cost driver for the xdp stage (docs/xdp.md); a benchmark, not a test.
//  1. stage cost: the xdp stage alone on 64 in-memory 60-byte UDP frames
//     (udp64), per packet (process_one) and per burst (process_burst, 64):
//     built-in drop/read, eBPF drop/pass/port filter (JIT and interpreter);
//  2. placement: pipeline `xdp(native)` vs `build-meta, xdp(generic)`, same
//     eBPF drop object, packet and burst engines, including mbuf alloc and
//     free per packet (as a driver refills its ring); plus the built-in
//     drop native, for reference;
//  3. per-execution cost of the same object on the same frame: rte_bpf JIT
//     and interpreter vs the kernel's JIT through BPF_PROG_TEST_RUN with
//     repeat (its own reported duration per run); root only.
// Every figure: median of --reps runs, with min and max.
// --only stage|placement|kernel runs one part, --match TEXT only the rows
// whose label contains TEXT (with valgrind --tool=cachegrind, two runs that
// differ only in --iters give exact instructions per packet).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <rte_bpf.h>
#include <rte_cycles.h>

#include "frames.h"
#include "test_eal.h"
#include "xdp_harness.h"

extern "C" {
#include "pipeline.h"
#include "sink.h"
}

using namespace lrx_test::frames;
using lrx_xdp_test::Stage;
using lrx_xdp_test::prog_path;
using Keys = std::map<std::string, std::string>;

namespace {

unsigned g_reps = 7;
unsigned g_iters = 20000; // bursts of 64 per rep
std::string g_match;      // run only the rows whose label contains this

bool selected(const std::string &label)
{
	return g_match.empty() || label.find(g_match) != std::string::npos;
}

struct Stat {
	double median, min, max;
};

Stat stat_of(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return {v[v.size() / 2], v.front(), v.back()};
}

void print_row(const std::string &what, const Stat &s)
{
	printf("| %-44s | %7.2f | %7.2f–%-7.2f | %6.2f |\n", what.c_str(),
	       s.median, s.min, s.max, 1000.0 / s.median);
}

double tsc_ns(uint64_t cycles)
{
	return (double)cycles * 1e9 / (double)rte_get_tsc_hz();
}

void stage_costs(rte_mempool *mp)
{
	const Frame f = udp4();
	std::vector<rte_mbuf *> pkts(64);
	for (auto &m : pkts) {
		m = f.to_mbuf(mp);
		m->port = 0;
	}
	struct Conf {
		const char *label;
		Keys keys;
	};
	const Conf confs[] = {
		{"built-in drop", {{"prog", "drop"}}},
		{"built-in read", {{"prog", "read"}}},
		{"eBPF xdp_drop, JIT", {{"prog", prog_path("xdp_drop")}}},
		{"eBPF xdp_drop, interpreter",
		 {{"prog", prog_path("xdp_drop")}, {"exec", "interp"}}},
		{"eBPF xdp_pass (reads data/data_end), JIT",
		 {{"prog", prog_path("xdp_pass")}}},
		{"eBPF xdp_pass, interpreter",
		 {{"prog", prog_path("xdp_pass")}, {"exec", "interp"}}},
		{"eBPF xdp_port_filter (2 lookups), JIT",
		 {{"prog", prog_path("xdp_port_filter")},
		  {"map_init", "blocked_ports:53=0"}}},
		{"eBPF xdp_port_filter (the port in the map), JIT",
		 {{"prog", prog_path("xdp_port_filter")},
		  {"map_init", "blocked_ports:53=0,2000=0"}}},
		{"eBPF xdp_port_filter, interpreter",
		 {{"prog", prog_path("xdp_port_filter")}, {"exec", "interp"},
		  {"map_init", "blocked_ports:53=0"}}},
	};
	printf("\n### Stage cost, udp64, 64 frames in memory (ns/pkt)\n\n");
	printf("| program, entry | median ns/pkt | min–max | Mpps |\n");
	printf("|---|---|---|---|\n");
	lrx_next_t nexts[64];
	for (const Conf &c : confs) {
		if (!selected(std::string(c.label) + ", per packet") &&
		    !selected(std::string(c.label) + ", burst-64"))
			continue;
		Stage st(c.keys);
		if (st.rc != 0) {
			fprintf(stderr, "%s: %s\n", c.label, st.err);
			exit(1);
		}
		for (int burst = 0; burst < 2; burst++) {
			const std::string label = std::string(c.label) +
				(burst ? ", burst-64" : ", per packet");
			if (!selected(label))
				continue;
			std::vector<double> ns;
			for (unsigned r = 0; r < g_reps; r++) {
				uint64_t t0 = rte_rdtsc_precise();
				for (unsigned it = 0; it < g_iters; it++) {
					if (burst) {
						st.burst(pkts.data(), 64, nexts);
					} else {
						for (unsigned i = 0; i < 64; i++)
							nexts[i] = st.one(pkts[i]);
					}
				}
				uint64_t t1 = rte_rdtsc_precise();
				ns.push_back(tsc_ns(t1 - t0) / (64.0 * g_iters));
			}
			print_row(label, stat_of(ns));
		}
	}
	for (auto m : pkts)
		rte_pktmbuf_free(m);
}

// One pipeline run: alloc 64 mbufs, write the frame, process, free.
void placement(rte_mempool *mp)
{
	const Frame f = udp4();
	struct Conf {
		const char *label;
		bool generic;
		lrx_engine_kind engine;
		const char *exec; // nullptr: the built-in drop
	};
	const Conf confs[] = {
		{"native  built-in drop, packet engine", false, LRX_ENGINE_PACKET, nullptr},
		{"native  built-in drop, burst engine", false, LRX_ENGINE_BURST, nullptr},
		{"native  xdp_drop JIT, packet engine", false, LRX_ENGINE_PACKET, "jit"},
		{"native  xdp_drop JIT, burst engine", false, LRX_ENGINE_BURST, "jit"},
		{"generic xdp_drop JIT, packet engine", true, LRX_ENGINE_PACKET, "jit"},
		{"generic xdp_drop JIT, burst engine", true, LRX_ENGINE_BURST, "jit"},
		{"native  xdp_drop interp, packet engine", false, LRX_ENGINE_PACKET, "interp"},
		{"native  xdp_drop interp, burst engine", false, LRX_ENGINE_BURST, "interp"},
		{"generic xdp_drop interp, packet engine", true, LRX_ENGINE_PACKET, "interp"},
		{"generic xdp_drop interp, burst engine", true, LRX_ENGINE_BURST, "interp"},
	};
	const std::string obj = prog_path("xdp_drop");
	printf("\n### Placement: pipeline incl. mbuf alloc+free, udp64, burst 64 (ns/pkt)\n\n");
	printf("| pipeline | median ns/pkt | min–max | Mpps |\n");
	printf("|---|---|---|---|\n");
	static lrx_sink sink;
	for (const Conf &c : confs) {
		if (!selected(c.label))
			continue;
		lrx_pipeline_conf conf{};
		conf.engine = c.engine;
		conf.burst = 64;
		conf.stats_level = LRX_STATS_OFF;
		conf.socket_id = (int)rte_socket_id();
		conf.lcore_id = rte_lcore_id();
		unsigned s = 0;
		lrx_test::StageConfs stage_confs;
		if (c.generic)
			stage_confs.set(conf.stages[s++], lrx_stage_find("build-meta"), {});
		stage_confs.set(conf.stages[s], lrx_stage_find("xdp"),
				{{"prog", c.exec ? obj : std::string("drop")},
				 {"mode", c.generic ? "generic" : "native"},
				 {"exec", c.exec ? c.exec : "jit"}});
		conf.n_stages = s + 1;
		lrx_pipeline *p = nullptr;
		char err[512] = "";
		if (conf.stages[0].stage == nullptr ||
		    lrx_pipeline_create(&conf, &p, err, sizeof(err)) != 0) {
			printf("| %s | unavailable: %s | | |\n", c.label, err);
			continue;
		}
		std::vector<double> ns;
		rte_mbuf *pkts[64];
		for (unsigned r = 0; r < g_reps; r++) {
			uint64_t t0 = rte_rdtsc_precise();
			for (unsigned it = 0; it < g_iters; it++) {
				if (rte_pktmbuf_alloc_bulk(mp, pkts, 64) != 0)
					abort();
				for (auto m : pkts) {
					memcpy(rte_pktmbuf_mtod(m, void *),
					       f.data.data(), f.size());
					m->data_len = m->pkt_len = (uint32_t)f.size();
					m->port = 0;
				}
				sink.n = 0;
				lrx_pipeline_process(p, pkts, 64, &sink);
				lrx_pipeline_poll_end(p, true, &sink);
				lrx_sink_discard(&sink);
			}
			uint64_t t1 = rte_rdtsc_precise();
			ns.push_back(tsc_ns(t1 - t0) / (64.0 * g_iters));
		}
		print_row(c.label, stat_of(ns));
		lrx_pipeline_destroy(p);
	}
}

void kernel_vs_rte_bpf(rte_mempool *mp)
{
	printf("\n### Per-execution cost, same object, same frame (udp64), ns/run\n\n");
	if (geteuid() != 0) {
		printf("kernel: unavailable (needs root for BPF_PROG_TEST_RUN)\n");
		return;
	}
	printf("| object | kernel JIT (TEST_RUN) | rte_bpf JIT | rte_bpf interp | JIT ratio rte/kernel |\n");
	printf("|---|---|---|---|---|\n");
	const Frame f = udp4();
	const uint32_t repeat = 1000000;
	for (const char *name : {"xdp_drop", "xdp_pass", "xdp_port_filter",
				 "xdp_proto_count"}) {
		bpf_object *obj = bpf_object__open_file(prog_path(name).c_str(), nullptr);
		if (obj == nullptr || bpf_object__load(obj) != 0) {
			printf("| %s | unavailable (kernel load failed) | | | |\n", name);
			continue;
		}
		int fd = bpf_program__fd(bpf_object__next_program(obj, nullptr));
		std::vector<double> kns, jns, ins;
		lrx_xdp_prog *prog = nullptr;
		char err[512];
		if (lrx_xdp_prog_load(prog_path(name).c_str(), "xdp", 1600, 0,
				      &prog, err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			exit(1);
		}
		rte_mbuf *m = f.to_mbuf(mp);
		lrx_xdp_md *md = lrx_xdp_md_prepare(m, 1600, 0, 0);
		auto jit = lrx_xdp_prog_jit(prog);
		const rte_bpf *bpf = lrx_xdp_prog_bpf(prog);
		for (unsigned r = 0; r < g_reps; r++) {
			std::vector<uint8_t> out(f.size() + 64);
			LIBBPF_OPTS(bpf_test_run_opts, opts,
				    .data_in = f.data.data(),
				    .data_out = out.data(),
				    .data_size_in = (uint32_t)f.size(),
				    .data_size_out = (uint32_t)out.size(),
				    .repeat = repeat);
			if (bpf_prog_test_run_opts(fd, &opts) != 0) {
				printf("| %s | unavailable (TEST_RUN failed) | | | |\n", name);
				break;
			}
			kns.push_back(opts.duration); // ns per run, kernel's own
			uint64_t sum = 0, t0 = rte_rdtsc_precise();
			for (uint32_t i = 0; i < repeat; i++)
				sum += jit(md);
			uint64_t t1 = rte_rdtsc_precise();
			jns.push_back(tsc_ns(t1 - t0) / repeat);
			t0 = rte_rdtsc_precise();
			for (uint32_t i = 0; i < repeat / 10; i++)
				sum += rte_bpf_exec(bpf, md);
			t1 = rte_rdtsc_precise();
			ins.push_back(tsc_ns(t1 - t0) / (repeat / 10));
			if (sum == 0 && std::string(name) != "xdp_drop")
				printf("(no verdicts)\n");
		}
		if (!kns.empty() && kns.size() == jns.size()) {
			Stat k = stat_of(kns), j = stat_of(jns), in = stat_of(ins);
			printf("| %s | %.1f (%.0f–%.0f) | %.2f (%.2f–%.2f) | %.2f (%.2f–%.2f) | %.2f |\n",
			       name, k.median, k.min, k.max, j.median, j.min, j.max,
			       in.median, in.min, in.max, j.median / k.median);
		}
		rte_pktmbuf_free(m);
		lrx_xdp_prog_free(prog);
		bpf_object__close(obj);
	}
	printf("\nkernel figure: bpf_prog_test_run_opts(repeat=%u).duration, the "
	       "kernel's mean ns per run (integer ns); rte_bpf: TSC over %u calls "
	       "(interpreter: %u)\n", repeat, repeat, repeat / 10);
}

} // namespace

int main(int argc, char **argv)
{
	std::vector<std::string> eal_extra;
	std::string only;
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		if (a == "--reps" && i + 1 < argc)
			g_reps = (unsigned)atoi(argv[++i]);
		else if (a == "--iters" && i + 1 < argc)
			g_iters = (unsigned)atoi(argv[++i]);
		else if (a == "--file-prefix" && i + 1 < argc)
			eal_extra = {"--file-prefix", argv[++i]};
		else if (a == "--only" && i + 1 < argc)
			only = argv[++i];
		else if (a == "--match" && i + 1 < argc)
			g_match = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--reps N] [--iters N] "
				"[--file-prefix P] [--only stage|placement|kernel] "
				"[--match TEXT]\n", argv[0]);
			return 2;
		}
	}
	if (g_reps == 0 || g_iters == 0 ||
	    (!only.empty() && only != "stage" && only != "placement" &&
	     only != "kernel"))
		return 2;
	lrx_test::eal_init(eal_extra);
	rte_mempool *mp = lrx_test::mbuf_pool("xdpbench", 8191);
	printf("xdp bench: reps %u, %u bursts of 64 per rep, TSC %.3f GHz\n",
	       g_reps, g_iters, rte_get_tsc_hz() / 1e9);
	if (only.empty() || only == "stage")
		stage_costs(mp);
	if (only.empty() || only == "placement")
		placement(mp);
	if (only.empty() || only == "kernel")
		kernel_vs_rte_bpf(mp);
	return lrx_test::in_use(mp) == 0 ? 0 : 1;
}
