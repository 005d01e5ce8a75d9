# SPDX-License-Identifier: BSD-3-Clause
"""XDP drop through the listrx binary on net_synth udp64 (docs/xdp.md's table).

One run, one polling core, the configurations interleaved rep by rep
(A B C ... A B C ...): native built-in drop, native eBPF drop (rte_bpf JIT
and interpreter), generic eBPF drop after build-meta (JIT), each with the
packet engine and the burst engine at burst 64. A run's figure is the
median of listrx's per-second rx readings after the first (--stats-period
1); the table gives the median over reps, min..max, ns/packet, and beside
them the kernel figures of Brouer's generic-XDP evaluation (2017) (mlx5, a different machine: context, not a
pass mark).

  listrx-bench xdp-udp64                       # build/ in this checkout
  listrx-bench xdp-udp64 --reps 7 --seconds 5 --json out.json
"""

import json
import os
import sys

from . import grid
from .compare import run_listrx_steady
from .listrx import BenchError, default_lcores
from .options import convert, positive_float, positive_int
from .report import Doc
from .stats import median

# the repository root (bench/listrx_bench/..)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def configs(obj):
    return [
        ("native, built-in drop", ["--xdp-prog", "drop"]),
        ("native, eBPF drop, JIT", ["--xdp-prog", obj, "--xdp-jit", "1"]),
        ("native, eBPF drop, interpreter", ["--xdp-prog", obj, "--xdp-jit", "0"]),
        ("generic (after build-meta), eBPF drop, JIT",
         ["--pipeline", "build-meta", "--xdp-prog", obj, "--xdp-mode", "generic",
          "--xdp-jit", "1"]),
    ]


def run_once(args, own):
    cmd = [args.listrx, "-l", args.lcores, "--no-huge", "--no-pci", "--no-shconf",
           "-m", "1024", "--file-prefix", "lrxxdp%d" % os.getpid(),
           "--vdev", args.vdev, "--", "--duration", str(args.seconds),
           "--stats-period", "1", "--stats-level", "off", "--burst", str(args.burst)] + own
    mpps, _ = run_listrx_steady(cmd, "xdp_udp64", args.seconds)
    return mpps, " ".join(cmd)


def add_parser(sub):
    ap = sub.add_parser("xdp-udp64", help="XDP programs (built-in, eBPF JIT/interpreter) on "
                        "udp64, packet vs burst", description=__doc__.split("\n")[0])
    ap.add_argument("--listrx", default=os.path.join(ROOT, "build/dataplane/listrx"))
    ap.add_argument("--object", default=os.path.join(ROOT, "build/stages/xdp/xdp_drop.bpf.o"),
                    help="the eBPF drop object (default: the shipped xdp_drop)")
    ap.add_argument("--vdev", default="net_synth0,profile=udp64,copy=0")
    ap.add_argument("--lcores", default=default_lcores(),
                    help="EAL -l: main + one polling lcore (default: %(default)s)")
    ap.add_argument("--burst", type=convert(grid.parse_burst), default=64)
    ap.add_argument("--reps", type=convert(positive_int), default=5)
    ap.add_argument("--seconds", type=convert(positive_float), default=3.0)
    ap.add_argument("--json", default=None)
    ap.set_defaults(func=run)


def run(args, argv):
    for path in (args.listrx, args.object):
        if not os.path.exists(path):
            raise BenchError("xdp-udp64: %s not found (build first: bash scripts/setup)" % path)

    cells = [(name + ", " + engine, own + ["--engine", engine])
             for name, own in configs(args.object) for engine in ("packet", "burst")]
    mpps = {name: [] for name, _ in cells}
    commands = {}
    for rep in range(args.reps):
        for name, own in cells:
            m, commands[name] = run_once(args, own)
            mpps[name].append(m)
            print("rep %d  %-58s %8.2f Mpps" % (rep + 1, name, m), file=sys.stderr)

    med = {k: median(v) for k, v in mpps.items()}
    print("\nbackend: listrx per-second rx (first second dropped), stats level off, "
          "burst %d, reps=%d, %g s each, interleaved; device %s"
          % (args.burst, args.reps, args.seconds, args.vdev))
    table = Doc()
    table.table(["configuration, engine", "Mpps median", "min..max", "ns/pkt"],
                [[name, "%.2f" % med[name], "%.2f..%.2f" % (min(mpps[name]), max(mpps[name])),
                  "%.1f" % (1e3 / med[name])] for name, _ in cells])
    print(table.markdown(), end="")
    for engine in ("packet", "burst"):
        nat = med["native, eBPF drop, JIT, " + engine]
        gen = med["generic (after build-meta), eBPF drop, JIT, " + engine]
        print("generic - native (eBPF JIT, %s engine): %+.1f ns/pkt (Brouer's generic-XDP evaluation (2017), kernel: "
              "about +39 ns against native with reads)" % (engine, 1e3 / gen - 1e3 / nat))
    gp = med["generic (after build-meta), eBPF drop, JIT, packet"]
    gb = med["generic (after build-meta), eBPF drop, JIT, burst"]
    print("generic eBPF drop, burst-64 over per-packet: %+.1f %% (Edward Cree's listification series (netdev RFC v2, 2018): listifying "
          "the stack before generic XDP gave +27..39 %%)" % ((gb / gp - 1) * 100))
    print("Brouer's generic-XDP evaluation (2017) (mlx5, kernel): native XDP_DROP 19.8 Mpps (50.5 ns), generic 8.4 Mpps")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"mpps": mpps, "median": med, "commands": commands,
                       "reps": args.reps, "seconds": args.seconds, "burst": args.burst,
                       "vdev": args.vdev}, f, indent=1)
    return 0
