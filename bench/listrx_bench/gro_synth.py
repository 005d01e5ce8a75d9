# SPDX-License-Identifier: BSD-3-Clause
"""GRO through the listrx binary on net_synth tcp-stream (docs/gro.md).

One run, one polling core, pipeline `gro` only, the configurations
interleaved rep by rep (A B C ... A B C ...): listrx's GRO (the kernel's
rules, stage gro) against DPDK rte_gro (stage rte-gro) in heavy mode and in
light mode, on the same stream, at each burst. A run's
figure is the median of listrx's per-second rx readings after the first
(--stats-period 1): every received packet is a TCP segment into GRO, so it
is GRO's input segments per second. The merge ratio (segments per output
packet) is (merged + packets_out) / packets_out from the gro stage's
counters in the run's --json summary, next to what the rules give for
this MSS (the kernel: L3 length < 65536, 44 x 1460 with timestamps).
The table gives the median over reps, min..max, ns/segment, and the ratios
listrx / rte_gro taken per rep (median [min..max]).

The empty pipeline runs in the same rotation, at each burst: the emulated
NIC (tcp-stream writes 66 header bytes and two checksums per segment) and
the sink alone, a cost every configuration pays. Its ns/segment taken from
a configuration's, rep by rep, is what GRO (and what it makes the NIC and
the sink do: chains to free, mbufs held across polls) costs per segment;
the ratio of those is printed as well ("GRO's own time"), beside the ratio
of whole-binary rates, which the NIC's share pulls towards 1.

  listrx-bench gro-synth                       # build/ in this checkout
  listrx-bench gro-synth --reps 7 --seconds 5 --json out.json
"""

import json
import os
import sys
import tempfile

from . import grid
from .compare import run_listrx_steady
from .listrx import BenchError, default_lcores
from .options import convert, positive_float, positive_int
from .report import Doc
from .stats import median

# the repository root (bench/listrx_bench/..)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

IMPLS = [
    ("listrx gro", "kernel"),
    ("rte_gro heavy", "rte"),
    ("rte_gro light", "rte-light"),
]
# the reference: the same device and sink with no stage
EMPTY = ("empty pipeline", "none")

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


def gro_counters(summary, name="gro"):
    """The GRO stage's (gro or rte-gro) stage-specific counters of a listrx
    --json summary."""
    for stage in summary.get("stages", []):
        if stage.get("name") == name:
            return stage.get("counters", {})
    raise ValueError("no %s stage in the summary's stages array" % name)


def impl_stage(impl):
    """The stage and its keys for one configuration: the kernel's rules
    (gro) or DPDK rte_gro (rte-gro) in heavy (rte) or light (rte-light)
    mode; none: the empty pipeline."""
    if impl == "none":
        return "none", []
    if impl == "kernel":
        return "gro", []
    return "rte-gro", ["--set", "stage.rte-gro.mode=" + ("light" if impl == "rte-light" else "heavy")]


def merge_ratio(counters):
    """Input segments per output packet: every segment either left as (the
    head of) an output packet or was merged into one."""
    out = counters.get("packets_out", 0)
    if not out:
        return None
    return (counters.get("merged", 0) + out) / out


def own_ns(mseg, empty_mseg):
    """ns per segment over the empty pipeline's (None when a rate is
    missing)."""
    if not mseg or not empty_mseg:
        return None
    return 1e3 / mseg - 1e3 / empty_mseg


def own_time_ratios(ours, theirs, empty):
    """Per rep: their GRO's own ns/segment over ours (both net of the empty
    pipeline of the same rep); a rep where ours is not above the empty
    pipeline's cost (noise) gives no ratio."""
    out = []
    for a, b, e in zip(ours, theirs, empty):
        na, nb = own_ns(a, e), own_ns(b, e)
        out.append(nb / na if na and nb is not None and na > 0 else None)
    return out


def run_once(args, impl, burst, json_path):
    stage, sets = impl_stage(impl)
    cmd = [args.listrx, "-l", args.lcores, "--no-huge", "--no-pci", "--no-shconf",
           "-m", "1024", "--file-prefix", "lrxgro%d" % os.getpid(),
           "--vdev", args.vdev, "--", "--duration", str(args.seconds),
           "--stats-period", "1", "--stats-level", args.stats_level,
           "--engine", args.engine, "--burst", str(burst), "--pipeline", stage,
           "--json", json_path] + sets
    mseg, _ = run_listrx_steady(cmd, "gro_synth", args.seconds)
    if impl == "none":
        return mseg, None, {}, " ".join(cmd)
    with open(json_path) as f:
        counters = gro_counters(json.load(f), stage)
    if counters.get("segments_in") != counters.get("merged", 0) + counters.get("packets_out", 0):
        print("gro_synth: warning: segments_in %s != merged %s + packets_out %s (%s)"
              % (counters.get("segments_in"), counters.get("merged"),
                 counters.get("packets_out"), " ".join(cmd)), file=sys.stderr)
    return mseg, merge_ratio(counters), counters, " ".join(cmd)


def fmt_ratio(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return "unavailable"
    return "%.2f [%.2f..%.2f]" % (median(vals), min(vals), max(vals))


def add_parser(sub):
    ap = sub.add_parser("gro-synth", help="listrx GRO vs DPDK rte_gro on net_synth tcp-stream",
                        description=__doc__.split("\n")[0])
    ap.add_argument("--listrx", default=os.path.join(ROOT, "build/dataplane/listrx"))
    ap.add_argument("--flows", type=int, default=4, help="tcp-stream flows (net_synth default 4)")
    ap.add_argument("--mss", type=int, default=1460, help="tcp-stream TCP payload per segment")
    ap.add_argument("--vdev", default=None,
                    help="default: net_synth0,profile=tcp-stream,flows=F,mss=M,copy=0")
    ap.add_argument("--lcores", default=default_lcores(),
                    help="EAL -l: main + one polling lcore (default: %(default)s)")
    ap.add_argument("--engine", default="burst")
    ap.add_argument("--bursts", type=convert(grid.parse_bursts, "burst size"), default=[64, 32])
    ap.add_argument("--stats-level", default="off",
                    help="off: the gro counters are the stage's own and are read at any level")
    ap.add_argument("--reps", type=convert(positive_int), default=5)
    ap.add_argument("--seconds", type=convert(positive_float), default=3.0)
    ap.add_argument("--json", default=None)
    ap.set_defaults(func=run)


def run(args, argv):
    if args.vdev is None:
        args.vdev = "net_synth0,profile=tcp-stream,flows=%d,mss=%d,copy=0" % (args.flows, args.mss)
    if not os.path.exists(args.listrx):
        raise BenchError("gro-synth: %s not found (build first: bash scripts/setup)" % args.listrx)
    bursts = args.bursts

    cells = [(name, impl, burst) for burst in bursts for name, impl in IMPLS + [EMPTY]]
    label = {cell: "%s (impl=%s), burst %d" % cell for cell in cells}
    mpps = {cell: [] for cell in cells}
    merge = {cell: [] for cell in cells}
    counters = {cell: [] for cell in cells}
    commands = {}
    with tempfile.TemporaryDirectory(prefix="gro_synth") as tmp:
        json_path = os.path.join(tmp, "summary.json")
        for rep in range(args.reps):
            for cell in cells:
                m, r, c, commands[label[cell]] = run_once(args, cell[1], cell[2], json_path)
                mpps[cell].append(m)
                merge[cell].append(r)
                counters[cell].append(c)
                print("rep %d  %-44s %8.2f Mseg/s  %s seg/pkt"
                      % (rep + 1, label[cell], m, "%.2f" % r if r else "-"), file=sys.stderr)

    med = {cell: median(v) for cell, v in mpps.items()}
    print("\nbackend: listrx per-second rx (first second dropped) = GRO input segments/s, "
          "pipeline gro only, engine %s, stats level %s, reps=%d, %g s each, interleaved; "
          "device %s" % (args.engine, args.stats_level, args.reps, args.seconds, args.vdev))
    table = Doc()
    table.table(["GRO, burst", "Mseg/s median", "min..max", "ns/seg",
                 "segments per output, median [min..max]", "rules' expectation"],
                [[label[cell], "%.2f" % med[cell],
                  "%.2f..%.2f" % (min(mpps[cell]), max(mpps[cell])), "%.1f" % (1e3 / med[cell]),
                  fmt_ratio(merge[cell]) if cell[1] != "none" else "-",
                  expected_segments_per_packet(cell[1], args.mss, cell[2], args.flows)
                  if cell[1] != "none" else "-"]
                 for cell in cells])
    print(table.markdown(), end="")
    ratios, own = {}, {}
    for burst in bursts:
        ours = mpps[("listrx gro", "kernel", burst)]
        empty = mpps[EMPTY + (burst,)]
        for name, impl in IMPLS[1:]:
            per_rep = [a / b for a, b in zip(ours, mpps[(name, impl, burst)]) if b]
            ratios["listrx / %s, burst %d" % (name, burst)] = per_rep
            print("listrx gro / %s, burst %d, per rep: %s" % (name, burst, fmt_ratio(per_rep)))
        for name, impl in IMPLS[1:]:
            per_rep = own_time_ratios(ours, mpps[(name, impl, burst)], empty)
            own["%s / listrx, burst %d" % (name, burst)] = per_rep
            print("GRO's own time (ns/segment over the empty pipeline's), %s / listrx gro, "
                  "burst %d, per rep: %s" % (name, burst, fmt_ratio(per_rep)))
    if args.json:
        def keyed(d):
            return {label[cell]: v for cell, v in d.items()}
        with open(args.json, "w") as f:
            json.dump({"mseg_per_s": keyed(mpps), "median": keyed(med),
                       "segments_per_output": keyed(merge), "gro_counters": keyed(counters),
                       "ratios": ratios, "own_time_ratios": own,
                       "commands": commands, "reps": args.reps,
                       "seconds": args.seconds, "bursts": bursts, "vdev": args.vdev,
                       "engine": args.engine, "stats_level": args.stats_level}, f, indent=1)
    return 0
