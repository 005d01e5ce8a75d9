// SPDX-License-Identifier: BSD-3-Clause
// Cost per packet of build-meta and l3-demux (docs/stages.md "Measured
// costs"). A benchmark, not a test.
//
//   stage_costs [--what build-meta|hints|l3|all] [--packets N] [--reps R]
//               [--burst B] [--filter TEXT] [--layout packed|page]
//               [--file-prefix P]
//
// build-meta: metadata size (64, 256, 552) x clear (memset, bulk, none) x
//   placement (priv, pool) x entry (one = process_one per packet, burst =
//   process_burst), on 64-byte UDP frames with every NIC hint present.
// hints: each hint alone, none and all (size 256, memset, burst): the cost
//   of a hint is its line minus the "none" line.
// l3: l3-demux alone over packets build-meta prepared once, a mix of UDP
//   and TCP (good packets), dispatch indirect vs direct, one vs burst.
// The same mbufs are reused (1024 of them, cache-warm), so the figures are
// stage code and metadata traffic, without RX/TX/alloc/free. TSC time;
// each configuration runs --reps times, interleaved with the others of its
// table; the line gives median, min and max ns/packet. --filter keeps the
// configurations whose printed "table label mode" contains TEXT (one at a
// time under valgrind: see docs/stages.md for instructions per packet).
// --layout: "packed" mbufs follow each other (as in a hugepage-backed
// pool); "page" is what rte_pktmbuf_pool_create gives under --no-huge:
// objects may not cross 4 KB pages, so every mbuf starts at the same page
// offset and all packets' headers fall into the same L1 sets.
#include <algorithm>
#include <memory>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

#include <rte_cycles.h>
#include <rte_mbuf_dyn.h>

#include "frames.h"
#include "stage_harness.h"
#include "test_eal.h"

extern "C" {
#include "build_meta/build_meta.h"
#include "l3_demux/l3_demux.h"
#include "meta.h"
}

using namespace lrx_test;
using namespace lrx_test::frames;

namespace {

constexpr unsigned kFrames = 1024;

struct Options {
	std::string what = "all";
	unsigned long packets = 2000000;
	unsigned reps = 5;
	uint16_t burst = 32;
	std::string prefix;
	std::string filter; // run only configs whose "table label mode" has it
	bool packed = true; // --layout packed|page
};

struct Config {
	std::string label;
	StageInstance::Keys keys;
	bool burst;
	std::vector<double> ns;
};

void usage(const char *prog)
{
	std::fprintf(stderr,
		     "usage: %s [--what build-meta|hints|l3|all] [--packets N] "
		     "[--reps R] [--burst B] [--filter TEXT] [--layout packed|page]\n"
		     "          [--file-prefix P]\n",
		     prog);
	std::exit(2);
}

// A pktmbuf pool whose objects may span pages (no DMA here), so that
// mbufs are packed as in a hugepage-backed pool.
rte_mempool *packed_pool(unsigned n, uint16_t priv)
{
	rte_pktmbuf_pool_private pp{};
	pp.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE;
	pp.mbuf_priv_size = priv;
	const unsigned elt = sizeof(rte_mbuf) + priv + RTE_MBUF_DEFAULT_BUF_SIZE;
	rte_mempool *mp = rte_mempool_create_empty(
		"stage_costs_packed", n, elt, 0, sizeof(pp), (int)rte_socket_id(),
		RTE_MEMPOOL_F_NO_IOVA_CONTIG);
	if (!mp || rte_mempool_set_ops_byname(mp, "ring_mp_mc", nullptr) != 0) {
		std::fprintf(stderr, "stage_costs: cannot create the pool\n");
		std::exit(1);
	}
	rte_pktmbuf_pool_init(mp, &pp);
	if (rte_mempool_populate_default(mp) < 0) {
		std::fprintf(stderr, "stage_costs: cannot populate the pool\n");
		std::exit(1);
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
	return mp;
}

std::vector<rte_mbuf *> make_mbufs(rte_mempool *mp, bool mixed)
{
	int ts_off = -1;
	uint64_t ts_flag = 0;
	rte_mbuf_dyn_rx_timestamp_register(&ts_off, &ts_flag);
	Frame udp = udp4(), tcp = tcp4();
	std::vector<rte_mbuf *> v;
	for (unsigned i = 0; i < kFrames; i++) {
		const Frame &f = mixed && (i % 4 == 3) ? tcp : udp;
		rte_mbuf *m = f.to_mbuf(mp);
		if (!m) {
			std::fprintf(stderr, "stage_costs: mbuf pool empty\n");
			std::exit(1);
		}
		m->ol_flags = RTE_MBUF_F_RX_RSS_HASH | RTE_MBUF_F_RX_IP_CKSUM_GOOD |
			      RTE_MBUF_F_RX_L4_CKSUM_GOOD | RTE_MBUF_F_RX_VLAN |
			      RTE_MBUF_F_RX_VLAN_STRIPPED | ts_flag;
		m->hash.rss = i * 2654435761u;
		m->vlan_tci = 100;
		m->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 |
				 RTE_PTYPE_L4_UDP;
		if (ts_off >= 0)
			*RTE_MBUF_DYNFIELD(m, ts_off, rte_mbuf_timestamp_t *) = i;
		v.push_back(m);
	}
	return v;
}

// ns per packet of one timed pass of stage over the mbufs.
double time_pass(StageInstance &stage, std::vector<rte_mbuf *> &pkts,
		 unsigned long packets, uint16_t burst, bool use_burst)
{
	static lrx_next_t nexts[LRX_BURST_MAX];
	uint64_t sink = 0;
	unsigned long done = 0;
	size_t at = 0;
	const uint64_t start = rte_rdtsc_precise();
	while (done < packets) {
		if (use_burst) {
			stage.burst(&pkts[at], burst, nexts);
			sink += nexts[burst - 1];
		} else {
			for (uint16_t i = 0; i < burst; i++)
				sink += stage.one(pkts[at + i]);
		}
		done += burst;
		at += burst;
		if (at + burst > pkts.size())
			at = 0;
	}
	const uint64_t cycles = rte_rdtsc_precise() - start;
	if (sink == 1)
		std::printf("#\n"); // keeps the result live
	return (double)cycles * 1e9 / (double)rte_get_tsc_hz() / (double)done;
}

void report(const char *table, std::vector<Config> &configs)
{
	for (auto &c : configs) {
		std::vector<double> v = c.ns;
		std::sort(v.begin(), v.end());
		std::printf("%-10s %-52s %-5s ns/pkt median %7.2f min %7.2f max %7.2f\n",
			    table, c.label.c_str(), c.burst ? "burst" : "one",
			    v[v.size() / 2], v.front(), v.back());
	}
	std::fflush(stdout);
}

// Runs every config reps times, interleaved; stage instances are created
// once per config (prepare may run other stages first).
void run_table(const char *table, const char *stage_name,
	       std::vector<Config> &configs, std::vector<rte_mbuf *> &pkts,
	       const Options &o, StageInstance *prepare = nullptr)
{
	std::vector<Config> kept;
	for (auto &c : configs) {
		std::string line = std::string(table) + " " + c.label + " " +
				   (c.burst ? "burst" : "one");
		if (line.find(o.filter) != std::string::npos)
			kept.push_back(c);
	}
	configs.swap(kept);
	if (configs.empty())
		return;
	std::vector<std::unique_ptr<StageInstance>> inst;
	for (auto &c : configs) {
		inst.emplace_back(new StageInstance(stage_name, c.keys));
		if (!inst.back()->ok()) {
			std::fprintf(stderr, "stage_costs: %s\n",
				     inst.back()->error());
			std::exit(2);
		}
	}
	if (prepare)
		for (auto m : pkts)
			if (prepare->one(m) != LRX_NEXT_CONTINUE_V) {
				std::fprintf(stderr, "stage_costs: prepare dropped\n");
				std::exit(1);
			}
	for (size_t i = 0; i < configs.size(); i++) // warm-up
		time_pass(*inst[i], pkts, o.packets / 10, o.burst, configs[i].burst);
	for (unsigned r = 0; r < o.reps; r++)
		for (size_t i = 0; i < configs.size(); i++)
			configs[i].ns.push_back(time_pass(*inst[i], pkts, o.packets,
							  o.burst, configs[i].burst));
	report(table, configs);
}

} // namespace

int main(int argc, char **argv)
{
	Options o;
	o.prefix = "stagecosts" + std::to_string(getpid());
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		auto next = [&]() -> const char * {
			if (i + 1 >= argc)
				usage(argv[0]);
			return argv[++i];
		};
		if (a == "--what")
			o.what = next();
		else if (a == "--packets")
			o.packets = std::strtoul(next(), nullptr, 10);
		else if (a == "--reps")
			o.reps = (unsigned)std::strtoul(next(), nullptr, 10);
		else if (a == "--burst")
			o.burst = (uint16_t)std::strtoul(next(), nullptr, 10);
		else if (a == "--layout") {
			std::string l = next();
			if (l != "packed" && l != "page")
				usage(argv[0]);
			o.packed = l == "packed";
		} else if (a == "--filter")
			o.filter = next();
		else if (a == "--file-prefix")
			o.prefix = next();
		else
			usage(argv[0]);
	}
	if (o.reps == 0 || o.reps > 101 || o.burst == 0 || o.burst > 256 ||
	    kFrames % o.burst != 0 || o.packets < o.burst)
		usage(argv[0]);
	if (o.what != "all" && o.what != "build-meta" && o.what != "hints" &&
	    o.what != "l3")
		usage(argv[0]);
	eal_init({"--file-prefix", o.prefix, "--no-telemetry"});
	rte_mempool *mp = o.packed ? packed_pool(2 * kFrames + 511, 576)
				   : mbuf_pool("stage_costs", 2 * kFrames + 511,
					       RTE_MBUF_DEFAULT_BUF_SIZE, 576);
	std::vector<rte_mbuf *> pkts = make_mbufs(mp, false);
	std::printf("# stage_costs: %lu packets x %u reps, burst %u, layout %s, "
		    "TSC %.0f MHz\n",
		    o.packets, o.reps, o.burst, o.packed ? "packed" : "page",
		    rte_get_tsc_hz() / 1e6);

	if (o.what == "all" || o.what == "build-meta") {
		std::vector<Config> cs;
		for (const char *size : {"64", "256", "552"})
			for (const char *placement : {"priv", "pool"})
				for (const char *clear : {"memset", "bulk", "none"})
					for (bool burst : {false, true}) {
						if (std::strcmp(clear, "bulk") == 0 &&
						    std::strcmp(placement, "pool") != 0)
							continue;
						cs.push_back({std::string("size=") + size +
								      " placement=" + placement +
								      " clear=" + clear,
							      {{"meta_size", size},
							       {"placement", placement},
							       {"alloc", "bulk"},
							       {"clear", clear}},
							      burst,
							      {}});
					}
		run_table("build-meta", BUILD_META_STAGE_NAME, cs, pkts, o);
	}
	if (o.what == "all" || o.what == "hints") {
		std::vector<Config> cs;
		for (const char *h : {"none", "hash", "csum", "vlan", "timestamp",
				      "ptype", "all"})
			for (bool burst : {false, true})
				cs.push_back({std::string("hints=") + h +
						      " (size=256 pool memset)",
					      {{"hints", h}, {"meta_size", "256"}},
					      burst,
					      {}});
		run_table("hints", BUILD_META_STAGE_NAME, cs, pkts, o);
	}
	if (o.what == "all" || o.what == "l3") {
		for (bool mixed : {false, true}) {
			for (auto m : pkts)
				rte_pktmbuf_free(m);
			pkts = make_mbufs(mp, mixed);
			StageInstance bm(BUILD_META_STAGE_NAME,
					 {{"placement", "priv"}, {"meta_size", "256"}});
			std::vector<Config> cs;
			for (const char *d : {"indirect", "direct"})
				for (bool burst : {false, true})
					cs.push_back({std::string("dispatch=") + d +
							      (mixed ? " (75% UDP 25% TCP)"
								     : " (100% UDP)"),
						      {{"dispatch", d},
						       {"local_ipv4", "10.0.0.1,10.0.0.3,10.0.0.4,10.0.0.2"}},
						      burst,
						      {}});
			run_table("l3-demux", L3_DEMUX_STAGE_NAME, cs, pkts, o, &bm);
		}
	}
	for (auto m : pkts)
		rte_pktmbuf_free(m);
	return 0;
}
