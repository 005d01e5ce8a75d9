"""listrx-bench paired: engines compared inside one listrx process.

listrx --interleave polls one queue with every engine in turn (a window of
W polls each, A B B A), packet against itself too (the A/A control); the
ratio of each engine to packet is the median of the per-window-pair ratios
with its 95 % interval, the windows the OS disturbed left out and counted
(interleave.py, docs/measuring.md "Interleaved windows"). The headline,
cree and kernel use the same method; this command is it for one cell.
"""

import json
import os
import sys
import tempfile

from . import grid, interleave
from .listrx import BenchError, Listrx, find_binary, machine_info, shared_cpu_pct
from .options import add_common, convert, non_negative_int, positive_float, positive_int


def add_parser(sub):
    p = sub.add_parser("paired", help="engines interleaved in one listrx process: each "
                       "engine's ratio to packet from adjacent windows, disturbed windows "
                       "left out, with an A/A control")
    add_common(p)
    p.add_argument("--engines", type=convert(grid.parse_engines, "engine"),
                   default=["packet", "burst"],
                   help="engines (default: packet,burst); ENGINE/prefetch=K runs one with "
                   "that prefetch distance; the A/A control (--base twice) is added "
                   "unless --no-aa")
    p.add_argument("--base", default="packet",
                   help="the engine every other is compared with, one of --engines "
                   "(default: %(default)s; burst with --engines "
                   "burst,burst/prefetch=4 compares prefetch distances)")
    p.add_argument("--no-aa", action="store_true", help="no A/A control")
    p.add_argument("--burst", type=convert(grid.parse_burst), default=64,
                   help="packets per poll (default: %(default)s)")
    p.add_argument("--footprint", type=convert(non_negative_int), default=0,
                   help="ballast KB (default: %(default)s)")
    p.add_argument("--pipeline", default=grid.KERNEL_PIPELINE,
                   help="stages (default: %(default)s)")
    p.add_argument("--profile", default="udp64", help="traffic (default: %(default)s)")
    p.add_argument("--duration", type=convert(positive_float), default=interleave.DURATION,
                   help="seconds per run (default: %(default)s)")
    p.add_argument("--window-polls", type=convert(positive_int), default=None,
                   help="polls per window of the two calibration blocks, or of every window "
                   "with --window-us 0 (default: %d / burst)" % interleave.WINDOW_PACKETS)
    p.add_argument("--window-us", type=convert(non_negative_int), default=interleave.WINDOW_US,
                   help="windows of about this many microseconds (0: of --window-polls) "
                   "(default: %(default)s)")
    p.add_argument("--reps", type=convert(positive_int), default=interleave.RUNS,
                   help="runs, a pair each (the median of its window pairs); 6 give a 95 %% interval, "
                   "9 one that a single deviant run does not set (default: %(default)s)")
    p.add_argument("--set", action="append", default=[], metavar="SEC.KEY=VALUE",
                   help="passed to listrx --set")
    p.add_argument("--out", default=None, help="write paired.json there (with each run's "
                   "summary)")
    p.set_defaults(func=cmd_paired)


def cmd_paired(args, argv):
    if args.base not in args.engines:
        raise BenchError("--base %s: not one of --engines %s (the ratios are to it)"
                         % (args.base, ",".join(args.engines)))
    lx = Listrx(find_binary(args.listrx), eal=args.eal, lcores=args.lcores)
    spec = {"profile": args.profile, "burst": args.burst, "pipeline_arg": args.pipeline,
            "footprint_kb": args.footprint, "sets": list(args.set)}
    load = {"before": interleave.loadavg()}
    summaries, shared = [], []
    with tempfile.TemporaryDirectory(prefix="lrx-paired-") as tmp:
        for rep in range(args.reps):
            path = os.path.join(tmp, "run%d.json" % rep)
            s, err, info = interleave.run_interleaved(
                lx, spec, args.engines, path, args.duration, args.window_polls,
                aa=not args.no_aa, timeout=args.timeout + args.duration, rotate=rep,
                window_us=args.window_us, base=args.base)
            if err:
                raise BenchError("%s\n  %s" % (err, info["command"]))
            summaries.append(s)
            if shared_cpu_pct(info["output"]) is not None:
                shared.append(rep)
            if not args.quiet:
                print("run %d/%d: %s" % (rep + 1, args.reps, info["command"]), file=sys.stderr)
    load["after"] = interleave.loadavg()
    result = interleave.compare_engines(summaries, args.engines, base=args.base,
                                        shared_runs=shared)
    host = machine_info(lx)
    window = ("about %d us (%s polls)" % (args.window_us, ",".join(
        str(lc["window_polls"]) for s in summaries for lc in s["interleave"]["lcores"]))
        if args.window_us else "%d polls" % (args.window_polls
                                             or interleave.window_polls(args.burst)))
    print("listrx paired: %s, %s, burst %d, %d KB ballast, %d run(s) of %.1f s, windows of "
          "%s; host %s; load average %s before, %s after" % (
              args.pipeline, args.profile, args.burst, args.footprint, args.reps,
              args.duration, window, host.get("cpu_model") or host.get("cpu"),
              load["before"], load["after"]))
    for c in result.values():
        print(c["text"])
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        path = os.path.join(args.out, "paired.json")
        with open(path, "w") as f:
            json.dump({"command": argv, "host": host, "load": load,
                       "comparisons": {e: {k: v for k, v in c.items() if k != "ratios"}
                                       for e, c in result.items()},
                       "runs": summaries}, f, indent=1, default=str)
        print("wrote %s" % path)
    return 0
