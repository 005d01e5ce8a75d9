"""listrx-bench: sweep, report, compare, latency."""

import argparse
import os
import sys

from . import __version__, grid
from .backends import PERF_DEFAULT_EVENTS
from .listrx import CG_EAL, DEFAULT_EAL, BenchError, Listrx, find_binary

EPILOG = """examples:
  listrx-bench headline --out headline/
  listrx-bench cree --out cree/             (seed 001's table; the kernel's rows as root)
  listrx-bench sweep --out results/ --counters time,cachegrind
  listrx-bench report results/
  listrx-bench compare --peer testpmd-rxonly,testpmd-io,graph --reps 5
  listrx-bench latency --bursts 1,32,256 --engines packet,burst
On a real NIC (as root, hugepages, NIC bound to vfio-pci, PCM's msr module):
  listrx-bench sweep --eal "-a 0000:3b:00.0" --profiles none --lcores 2,3 \\
      --counters time,perf,pcm,rapl --out results-nic/
docs/measuring.md explains the method and each figure."""


# peer benchmarks with their own options: `listrx-bench NAME ...` runs
# listrx_bench.MODULE.main(the rest of the command line)
TOOLS = (("gro-synth", "gro_synth", "listrx GRO vs DPDK rte_gro on net_synth tcp-stream"),
         ("xdp-udp64", "xdp_udp64", "XDP programs (built-in, eBPF JIT/interpreter) on udp64, "
          "packet vs burst"),
         ("synth-rx", "synth_rx", "net_synth's own RX rate under dpdk-testpmd"))


def _list(parse):
    def convert(text):
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e))
    return convert


def _onoff(text):
    if text in ("on", "1", "yes", "true"):
        return True
    if text in ("off", "0", "no", "false"):
        return False
    raise argparse.ArgumentTypeError("want on or off, not %r" % text)


def _counters(text):
    from .backends import BACKENDS
    names = grid.split_list(text)
    for n in names:
        if n not in BACKENDS:
            raise ValueError("counter backend %r: want %s" % (n, ",".join(BACKENDS)))
    return names


def _packet_pair(text):
    vals = [int(v) for v in grid.split_list(text)]
    if len(vals) != 2 or not 0 < vals[0] < vals[1]:
        raise ValueError("want two packet counts SMALL,LARGE with 0 < SMALL < LARGE")
    return vals


def _xdp(text):
    vals = grid.split_list(text)
    for v in vals:
        if v not in ("native", "generic", "off"):
            raise ValueError("xdp %r: want native, generic or off" % v)
    return [None if v == "off" else v for v in vals]


def _data_room(text):
    """An mbuf data room both tools accept: headroom (128) plus at least a
    minimal frame, within rte_mbuf's uint16_t buf_len."""
    if not text.isdigit() or not 256 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError("%r: want bytes, 256..65535" % text)
    return int(text)


def add_common(p):
    p.add_argument("--listrx", help="listrx binary (default: $LISTRX_BIN, build/dataplane/listrx)")
    p.add_argument("--eal", default=DEFAULT_EAL,
                   help="EAL arguments besides -l/--file-prefix/--vdev (default: %(default)s)")
    p.add_argument("--lcores", help="EAL -l: main lcore, then the worker that polls "
                   "(pinned by EAL; default 0-1 with 2+ CPUs)")
    p.add_argument("--timeout", type=float, default=120, help="seconds per run before it is "
                   "killed (x10 under valgrind/perf)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def add_grid(p, bursts, engines, footprints, pipelines, profiles):
    p.add_argument("--bursts", type=_list(grid.parse_bursts), default=grid.parse_bursts(bursts),
                   help="burst sizes (default %s)" % bursts)
    p.add_argument("--engines", type=_list(grid.parse_engines),
                   default=grid.parse_engines(engines), help="engines (default %s)" % engines)
    p.add_argument("--footprints", default=footprints,
                   help="ballast KB or multiples of the host L1i: 0,L1i/2,L1i,2xL1i "
                   "(default %s)" % footprints)
    p.add_argument("--pipelines", type=_list(grid.parse_pipelines),
                   default=grid.parse_pipelines(pipelines),
                   help="stage lists separated by ';' (default %s; 'none' = empty)" % pipelines)
    p.add_argument("--profiles", type=grid.split_list, default=grid.split_list(profiles),
                   help="traffic: net_synth profiles (udp64, ...), 'null' (DPDK net_null), "
                   "'net_...' devargs, 'none' (ports from --eal), 'config:FILE' "
                   "(default %s)" % profiles)


def build_parser():
    ap = argparse.ArgumentParser(
        prog="listrx-bench", description="Sweeps, counter backends, peers and reports for "
        "listrx (what listification saves, per burst size, engine and code footprint).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version="listrx-bench " + __version__)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    sw = sub.add_parser("sweep", help="run listrx over a grid, write results.json/.csv")
    add_common(sw)
    add_grid(sw, grid.DEFAULT_BURSTS, grid.DEFAULT_ENGINES, grid.DEFAULT_FOOTPRINTS,
             grid.KERNEL_PIPELINE, "udp64")
    sw.add_argument("--xdp", type=_list(_xdp), default=None,
                    help="XDP placements native,generic,off (cells skipped with a reason "
                    "when the xdp stage is not built)" " (default: %(default)s)")
    sw.add_argument("--reps", type=int, default=3, help="repetitions per cell (default: %(default)s)")
    sw.add_argument("--order", choices=("cells", "reps"), default="cells",
                    help="cells: each cell's repetitions back to back; reps: every cell once, "
                    "then again (alternating repetitions) (default: %(default)s)")
    sw.add_argument("--counters", type=_list(_counters), default=["time"],
                    help="backends: time,perf,perfstat,pcm,cachegrind,rapl; perf = listrx's "
                    "own counters (--pmu), perfstat = perf stat around the process "
                    "(default: %(default)s)")
    sw.add_argument("--duration", type=float, default=0.25,
                    help="seconds per timed run (each also pays ~0.3-0.5 s of start-up: 675 "
                    "runs on the default grid) (default: %(default)s)")
    sw.add_argument("--packets", type=int, default=0,
                    help="also stop timed runs after N packets (0 = duration only) (default: %(default)s)")
    sw.add_argument("--stats-level", default="counters", choices=("off", "counters", "cycles"),
                    help="listrx stats level of the timed run (default: %(default)s)")
    sw.add_argument("--zoom", action="store_true",
                    help="one more run per rep at --stats-level cycles for the per-stage "
                    "ns/pkt zoom-in (kept apart so stage timing does not slow the Mpps run)")
    sw.add_argument("--zoom-reps", type=int, default=0,
                    help="zoom runs in the first N repetitions only (0 = every rep) "
                    "(default: %(default)s)")
    sw.add_argument("--warmup", type=int, default=1, help="unrecorded warm-up runs first (default: %(default)s)")
    sw.add_argument("--perf-events", type=grid.split_list,
                    default=list(PERF_DEFAULT_EVENTS),
                    help="perf/perfstat events, as perf -e names them (raw ones: r10000188e) "
                    "(default: %(default)s)")
    sw.add_argument("--perf-stages", type=_onoff, default=True,
                    help="perf: per-stage counts (listrx --pmu-stages) in the burst, hybrid "
                    "and graph engines, on|off (default: on)")
    sw.add_argument("--perf-source", choices=("perf_event", "fake"), default="perf_event",
                    help="perf: listrx's counter source; fake is listrx's software test source "
                    "(not hardware counts: for checking the plumbing) (default: %(default)s)")
    sw.add_argument("--perf-packets", type=_list(_packet_pair), default=[1000000, 11000000],
                    help="perfstat: the two packet counts whose difference is measured (default: %(default)s)")
    sw.add_argument("--cg-method", choices=("window", "pair"), default="window",
                    help="cachegrind backend: 'window' = one callgrind run per cell, costs "
                    "collected only for the packets after --cg-window's first count (listrx "
                    "--measure-from); 'pair' = two cachegrind runs, --cg-packets, differenced "
                    "(default: %(default)s)")
    sw.add_argument("--cg-window", type=_list(_packet_pair), default=[2000, 6000],
                    help="window: warm-up packets, total packets; the difference is measured "
                    "(default: %(default)s)")
    sw.add_argument("--cg-packets", type=_list(_packet_pair), default=[20000, 60000],
                    help="pair: the two packet counts whose difference is measured (default: %(default)s)")
    sw.add_argument("--cg-eal", default=CG_EAL,
                    help="EAL arguments of the cachegrind runs (64 MB is plenty for the "
                    "--cg-mbufs pool; start-up under valgrind is shorter) (default: %(default)s)")
    sw.add_argument("--cg-mbufs", type=int, default=2047,
                    help="mempool size of the cachegrind runs (--set mempool.mbufs; 0 = "
                    "listrx's own sizing) (default: %(default)s)")
    sw.add_argument("--cg-jobs", type=int, default=os.cpu_count() or 1,
                    help="cachegrind runs in parallel, in a phase of their own after every "
                    "timed run (their counts do not depend on load) (default: %(default)s)")
    sw.add_argument("--cg-lcores", default="0",
                    help="cachegrind: EAL -l (one lcore: the main lcore polls) (default: %(default)s)")
    sw.add_argument("--cg-bursts", type=_list(grid.parse_bursts), default=None,
                    help="cachegrind only in cells of these burst sizes (default: every cell)")
    sw.add_argument("--cg-every-rep", action="store_true",
                    help="cachegrind on every rep (it is deterministic: rep 0 is enough)")
    sw.add_argument("--pcm-interval", type=float, default=0.1, help="pcm sampling interval (s) (default: %(default)s)")
    sw.add_argument("--keep-raw", action="store_true", help="keep cachegrind.out files")
    sw.add_argument("--out", required=True, help="output directory")
    sw.set_defaults(func=cmd_sweep)

    rp = sub.add_parser("report", help="Markdown + self-contained HTML report with plots")
    rp.add_argument("dir", help="a sweep's output directory")
    rp.add_argument("--title", default="listrx results")
    rp.add_argument("--zoom-burst", type=int, default=None,
                    help="burst size of the per-stage zoom-in table (default: 64 or the "
                    "largest measured)")
    rp.set_defaults(func=cmd_report)

    cp = sub.add_parser("compare", help="listrx vs peers (testpmd rxonly/io, graph engine) "
                        "in the same invocation, as ratios")
    add_common(cp)
    cp.add_argument("--peer", type=grid.split_list, default=["testpmd-rxonly"],
                    help="peers: testpmd-rxonly, testpmd-io, graph (listrx's graph engine), "
                    "listrx-off (listrx at stats level off) (default: %(default)s)")
    cp.add_argument("--profile", default="null", help="traffic profile (see sweep --profiles) (default: %(default)s)")
    cp.add_argument("--pipeline", default="none", help="listrx pipeline ('none' = empty) (default: %(default)s)")
    cp.add_argument("--engine", default="burst", help="listrx engine (default: %(default)s)")
    cp.add_argument("--burst", type=grid.parse_bursts, default=[32, 64],
                    help="burst sizes, one or a list, the same for listrx and the peers "
                    "(default: 32,64)")
    cp.add_argument("--stats-level", default="counters", choices=("off", "counters", "cycles"),
                    help="listrx stats level; counters is listrx's default (testpmd keeps "
                    "per-stream counters) (default: %(default)s)")
    cp.add_argument("--data-room", type=_data_room, default=None,
                    help="mbuf data room for both sides (listrx [mempool] data_room, testpmd "
                    "--mbuf-size); without hugepages testpmd's default 2176 puts one mbuf "
                    "per 4 KB page (default: each tool's own)")
    cp.add_argument("--duration", type=float, default=5.0, help="seconds per run (default: %(default)s)")
    cp.add_argument("--reps", type=int, default=5, help="alternating repetitions (default: %(default)s)")
    cp.add_argument("--testpmd", default="dpdk-testpmd", help="testpmd binary (default: %(default)s)")
    cp.add_argument("--driver-so", default=None,
                    help="-d for testpmd (a PMD built as a shared object, e.g. net_synth) (default: %(default)s)")
    cp.add_argument("--out", default=None, help="write compare.json/.md here (default: %(default)s)")
    cp.set_defaults(func=cmd_compare)

    hl = sub.add_parser("headline", help="the kernel pipeline per packet vs listified, both "
                        "build flavours (plain, retpoline): table, headline.json, report")
    add_common(hl)
    hl.add_argument("--listrx-retpo", help="the retpoline build's listrx (default: "
                    "build-retpo/dataplane/listrx beside the plain one)")
    hl.add_argument("--full", action="store_true",
                    help="the larger grid: engines %s, bursts %s, footprints %s, %d reps" % (
                        headline_grid("engines", True), headline_grid("bursts", True),
                        headline_grid("footprints", True), headline_grid("reps", True)))
    hl.add_argument("--engines", default=None,
                    help="engines (default %s)" % headline_grid("engines", False))
    hl.add_argument("--bursts", default=None,
                    help="burst sizes (default %s)" % headline_grid("bursts", False))
    hl.add_argument("--footprints", default=None,
                    help="footprints, KB or multiples of the host L1i (default %s)"
                    % headline_grid("footprints", False))
    hl.add_argument("--reps", type=int, default=None,
                    help="alternating repetitions (default %d)" % headline_grid("reps", False))
    hl.add_argument("--duration", type=float, default=None,
                    help="seconds per timed run (default %s)" % headline_grid("duration", False))
    hl.add_argument("--profile", default="udp64",
                    help="traffic (see sweep --profiles) (default: %(default)s)")
    hl.add_argument("--cg-burst", type=int, default=64,
                    help="burst size of the cachegrind runs (default: %(default)s)")
    hl.add_argument("--out", required=True, help="output directory")
    hl.set_defaults(func=cmd_headline)

    for name, _, text in TOOLS:
        sub.add_parser(name, help=text + " (%s --help: its options)" % name, add_help=False)

    lt = sub.add_parser("latency", help="p50/p99/p99.9 per burst size and engine")
    add_common(lt)
    # net_synth: the device that stamps packets with the TSC (net_null does not)
    add_grid(lt, "1,8,32,64,256", "packet,burst", "0", "build-meta,l3-demux", "udp64")
    lt.add_argument("--duration", type=float, default=1.0,
                    help="seconds per run (default: %(default)s)")
    lt.add_argument("--reps", type=int, default=3,
                    help="alternating repetitions; the table gives median [min–max] "
                    "(default: %(default)s)")
    lt.add_argument("--out", default=None, help="write latency.json/.md here (default: %(default)s)")
    lt.set_defaults(func=cmd_latency)

    from . import kernel
    kernel.add_parser(sub, add_common)
    from . import cree
    cree.add_parser(sub, add_common)
    return ap


def _listrx(args, log_dir=None):
    return Listrx(find_binary(args.listrx), eal=args.eal, lcores=args.lcores, log_dir=log_dir)


def cmd_sweep(args, argv):
    from .sweep import run_sweep
    if args.reps < 1:
        raise BenchError("--reps %d: want at least 1" % args.reps)
    lx = _listrx(args)
    (json_path, csv_path), rows = run_sweep(lx, args, argv)
    failed = [r for r in rows if str(r.get("status", "")).startswith("failed")]
    print("wrote %s and %s (%d rows, %d failed)" % (json_path, csv_path, len(rows), len(failed)))
    for r in failed[:5]:
        print("  %s rep %d: %s" % (r["cell"], r["rep"], r["status"]), file=sys.stderr)
    return 1 if rows and len(failed) == len(rows) else 0


def cmd_report(args, argv):
    from .report import write_report
    md, html = write_report(args.dir, title=args.title, zoom_burst=args.zoom_burst)
    print("wrote %s and %s" % (md, html))
    return 0


def cmd_compare(args, argv):
    from .compare import run_compare
    lx = _listrx(args)
    return run_compare(lx, args, argv)


def headline_grid(key, full):
    from .headline import FULL, QUICK
    return (FULL if full else QUICK)[key]


def cmd_headline(args, argv):
    from .headline import run_headline
    for key in ("engines", "bursts", "footprints", "reps", "duration"):
        if getattr(args, key) is None:
            setattr(args, key, headline_grid(key, args.full))
    if args.reps < 1:
        raise BenchError("--reps %d: want at least 1" % args.reps)
    grid.parse_engines(args.engines)
    grid.parse_bursts(args.bursts)
    if args.cg_burst not in grid.parse_bursts(args.bursts):
        raise BenchError("--cg-burst %d: not one of --bursts %s" % (args.cg_burst, args.bursts))
    if "packet" not in grid.parse_engines(args.engines):
        raise BenchError("--engines %s: the speedups need the packet engine" % args.engines)
    return run_headline(args, argv)


def cmd_latency(args, argv):
    from .latency import run_latency
    lx = _listrx(args)
    return run_latency(lx, args, argv)


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    for name, module, _ in TOOLS:
        if argv and argv[0] == name:
            import importlib
            return importlib.import_module("." + module, __package__).main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if getattr(args, "out", None):
        os.makedirs(args.out, exist_ok=True)
    try:
        return args.func(args, argv)
    except BenchError as e:
        print("listrx-bench: %s" % e, file=sys.stderr)
        return 2
    except ValueError as e:
        print("listrx-bench: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nlistrx-bench: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
