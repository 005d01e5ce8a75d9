# SPDX-License-Identifier: BSD-3-Clause
"""listrx GRO against DPDK rte_gro on net_synth tcp-stream, paired in one
process (docs/gro.md, "Benchmark: listrx gro vs rte_gro").

For each cell of the grid (flows x burst), runs of the driver
tests/gro/gro_vs_rte_gro: three GROs as the binary runs them (stage gro;
stage rte-gro in heavy and in light mode), each on its own net_synth port
with the same tcp-stream segments, in one process, taking turns round by
round (the six orders of three in rotation). A round is --polls polls
of one GRO and an idle poll that flushes what it holds; the TSC times each
poll's GRO work and the free of what it released, not the NIC's writing
of the segments. Round r of listrx and round r of rte_gro are a pair,
and one run's figure is stats.compare over its rounds: the median of
rte_gro's ns/segment over listrx's. Runs of the same cell in separate
processes differ by more than one run's interval says (the memory each
process lays out, what shares the core), so each cell is run --reps
times, alternating with the other cells, and a run is one pair: the
cell's figure is stats.compare over the runs (the median run's sides),
its 95 % interval, resolved when it excludes 1, and against the goal
(heavy 3x, light 1.3x).

  listrx-bench gro-synth                                # the grid
  listrx-bench gro-synth --flows 1 --bursts 64 --rounds 200 --json out.json
"""

import json
import os
import subprocess
import sys
import tempfile

from . import grid
from .listrx import BenchError, provenance
from .options import convert, positive_int
from .report import Doc
from .stats import caveat, compare

# the repository root (bench/listrx_bench/..)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

LISTRX = "listrx-gro"
PEERS = [("rte_gro heavy", "rte_gro-heavy", 3.0), ("rte_gro light", "rte_gro-light", 1.3)]

# net_synth tcp-stream headers: IPv4 20 + TCP 20 + NOP,NOP,timestamp 12
TCP_STREAM_L3_HEADERS = 52
GRO_LEGACY_MAX_SIZE = 65536  # kernel: p->len + len < gro_max_size
RTE_GRO_MAX_IPV4_LENGTH = 65535  # rte_gro: merged L3 length <= 65535


def expected_segments_per_packet(impl, mss, burst, flows):
    """Segments per output packet the rules give for an in-order stream of
    `flows` round-robin flows of `mss`-byte segments (nothing else ends a
    packet): the kernel's 64 KB rule, rte_gro's 65535 limit, and for light
    mode also the burst (a flow has burst / flows segments in one poll)."""
    if impl == "kernel":
        return (GRO_LEGACY_MAX_SIZE - 1 - TCP_STREAM_L3_HEADERS) // mss
    n = (RTE_GRO_MAX_IPV4_LENGTH - TCP_STREAM_L3_HEADERS) // mss
    if impl == "rte-light":
        n = min(n, max(burst // flows, 1))
    return n


def ns_per_segment(run, impl):
    """{round: ns per segment} of one GRO in a driver --json run."""
    side = run["impls"][impl]
    hz = float(run["tsc_hz"])
    return {r: c / s / hz * 1e9 for r, (c, s) in enumerate(zip(side["cycles"], side["segments"]))
            if s}


def pair_rounds(run, peer):
    """stats.compare of one peer against listrx in one run: per round, the
    peer's ns/segment over listrx's (> 1: listrx is faster)."""
    ours, theirs = ns_per_segment(run, LISTRX), ns_per_segment(run, peer)
    pairs = [(r, theirs[r], ours[r]) for r in sorted(set(ours) & set(theirs))]
    return compare(pairs)


def pair_runs(runs, peer):
    """stats.compare over runs of one cell: each run one pair, its median
    round pair's sides (pair_rounds)."""
    pairs = []
    for rep, run in enumerate(runs):
        c = pair_rounds(run, peer)
        pairs.append((rep, c["base"], c["other"]))
    return compare(pairs)


def goal_verdict(c, goal):
    """Where the interval lies against the goal: met (its low end at or
    above it), missed (its high end below it), or not resolved."""
    lo, hi = c["ci"]
    if c["ratio"] is None or not c["resolved"]:
        return "not resolved"
    if lo >= goal:
        return "goal %gx met" % goal
    if hi < goal:
        return "goal %gx missed" % goal
    return "goal %gx not resolved" % goal


def run_cell(args, flows, burst, json_path):
    cmd = [args.driver, "--flows", str(flows), "--burst", str(burst), "--mss", str(args.mss),
           "--rounds", str(args.rounds), "--polls", str(args.polls),
           "--file-prefix", "grosynth%d" % os.getpid(), "--json", json_path]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise BenchError("gro-synth: %s exited %d: %s" % (" ".join(cmd), proc.returncode,
                                                          proc.stderr.strip()[-400:]))
    with open(json_path) as f:
        return json.load(f), " ".join(cmd)


def merged_over(runs, impl):
    """Segments per output packet over all runs."""
    sides = [run["impls"][impl] for run in runs]
    out = sum(s["packets_out"] for s in sides)
    return sum(s["segments_in"] for s in sides) / out if out else None


def cell_row(runs, flows, burst, mss):
    """One row of the grid and its comparisons."""
    comps = {peer: pair_runs(runs, peer) for _, peer, _ in PEERS}
    row = ["%d" % flows, "%d" % burst, "%.1f" % comps[PEERS[1][1]]["other"]]
    for name, peer, goal in PEERS:
        c = comps[peer]
        row += ["%.1f" % c["base"], caveat(c), goal_verdict(c, goal)]
    row.append(" / ".join("%.1f" % merged_over(runs, impl) for impl in
                          (LISTRX,) + tuple(p for _, p, _ in PEERS)))
    row.append(" / ".join(str(expected_segments_per_packet(impl, mss, burst, flows))
                          for impl in ("kernel", "rte", "rte-light")))
    return row, comps


def add_parser(sub):
    ap = sub.add_parser("gro-synth", help="listrx GRO vs DPDK rte_gro on net_synth tcp-stream, "
                        "paired in one process", description=__doc__.split("\n")[0])
    ap.add_argument("--driver", default=os.path.join(ROOT, "build/tests/gro/gro_vs_rte_gro"))
    ap.add_argument("--flows", type=convert(grid.parse_bursts, "flow counts"),
                    default=[1, 8, 64, 128], help="tcp-stream flow counts (default 1,8,64,128)")
    ap.add_argument("--bursts", type=convert(grid.parse_bursts, "burst size"), default=[64, 32])
    ap.add_argument("--mss", type=int, default=1460, help="tcp-stream TCP payload per segment")
    ap.add_argument("--reps", type=convert(positive_int), default=6,
                    help="runs per cell, the pairs of its comparison (default 6)")
    ap.add_argument("--rounds", type=convert(positive_int), default=100,
                    help="rounds per run (default 100)")
    ap.add_argument("--polls", type=convert(positive_int), default=64,
                    help="polls per GRO per round (default 64)")
    ap.add_argument("--json", default=None)
    ap.set_defaults(func=run)


def run(args, argv):
    if not os.path.exists(args.driver):
        raise BenchError("gro-synth: %s not found (build with tests enabled: "
                         "meson setup build && ninja -C build)" % args.driver)
    cells = [(flows, burst) for flows in args.flows for burst in args.bursts]
    runs, commands = {cell: [] for cell in cells}, {}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="gro_synth") as tmp:
        json_path = os.path.join(tmp, "cell.json")
        for rep in range(args.reps):
            for flows, burst in cells:
                run_json, commands[(flows, burst)] = run_cell(args, flows, burst, json_path)
                runs[(flows, burst)].append(run_json)
                print("rep %d flows %d burst %d: %s" % (rep + 1, flows, burst, "; ".join(
                    "%s %.2f" % (n, pair_rounds(run_json, p)["ratio"]) for n, p, _ in PEERS)),
                    file=sys.stderr)
    load.append(os.getloadavg()[0])
    rows, out = [], {}
    for flows, burst in cells:
        row, comps = cell_row(runs[(flows, burst)], flows, burst, args.mss)
        rows.append(row)
        out["flows %d, burst %d" % (flows, burst)] = {
            "command": commands[(flows, burst)], "runs": runs[(flows, burst)],
            "comparisons": {n: comps[p] for n, p, _ in PEERS}}
    print("\nbackend: TSC in one process per run (tests/gro/gro_vs_rte_gro), net_synth "
          "tcp-stream mss %d; per cell %d runs (the pairs) of %d rounds of %d polls per GRO, "
          "the three GROs in rotation, the cells alternating; load average %.1f at the start, "
          "%.1f at the end" % (args.mss, args.reps, args.rounds, args.polls, load[0], load[1]))
    table = Doc()
    table.table(["flows", "burst", "listrx ns/seg",
                 "heavy ns/seg", "listrx ÷ heavy (95 % interval)", "vs goal",
                 "light ns/seg", "listrx ÷ light (95 % interval)", "vs goal",
                 "segments per output: listrx / heavy / light", "rules' expectation"],
                rows)
    print(table.markdown(), end="")
    if args.json:
        version = subprocess.run([args.driver, "--version"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True).stdout
        with open(args.json, "w") as f:
            json.dump({"cells": out, "reps": args.reps, "rounds": args.rounds, "polls": args.polls,
                       "mss": args.mss, "load_average": load,
                       "provenance": provenance([(args.driver, version)])}, f, indent=1)
    return 0
