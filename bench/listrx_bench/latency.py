"""latency: p50/p99/p99.9 from RX timestamp to verdict, per burst and engine.

Each cell runs `listrx --latency` with net_synth's timestamp hint
(hints=...+timestamp); the figures come from the JSON summary, key
`latency_ns`:

    "latency_ns": {"p50": 410.0, "p99": 1630.0, "p999": 2900.0,
                   "samples": 1000000, "source": "synth-tsc", ...}

(nanoseconds from the TSC stamp the emulated NIC writes at rx_burst to the
packet's verdict at the sink). Without samples (a device that does not stamp
with the TSC, e.g. net_null or a NIC) the figures are unavailable with the
binary's reason (`latency_unavailable`); when the key is absent, "binary
does not record latency".
"""

import json
import os
import shlex
import statistics

from .grid import expand, parse_footprints
from .listrx import Listrx, find_binary
from .options import add_common, add_grid, add_out, convert, positive_float, positive_int
from .progress import Progress
from .report import Doc
from .stats import fmt, number, summary, unavailable

KEYS = ("p50", "p99", "p999")
NOT_RECORDED = unavailable("binary does not record latency (no latency_ns in the JSON summary)")


def latency_figures(summary):
    lat = summary.get("latency_ns")
    if not isinstance(lat, dict):
        fig = {k: NOT_RECORDED for k in KEYS}
        fig["samples"] = fig["source"] = None
        return fig
    fig = {}
    for k in KEYS:
        v = number(lat.get(k))
        fig[k] = v if v is not None else unavailable("latency_ns has no %s" % k)
    fig["samples"] = lat.get("samples")
    fig["source"] = lat.get("source", "?")
    if not lat.get("samples"):
        why = summary.get("latency_unavailable") or "latency_ns has no samples"
        for k in KEYS:
            fig[k] = unavailable(why)
    return fig


def spread_cell(values):
    """median [min–max] of the numeric values; the first reason when none is."""
    st = summary(values)
    if not st["n"]:
        return next((v for v in values if isinstance(v, str)), "-")
    if st["n"] == 1:
        return fmt(st["median"], 1)
    return "%s [%s–%s]" % (fmt(st["median"], 1), fmt(st["min"], 1), fmt(st["max"], 1))


def add_parser(sub):
    p = sub.add_parser("latency", help="p50/p99/p99.9 per burst size and engine")
    add_common(p)
    # net_synth: the device that stamps packets with the TSC (net_null does not)
    add_grid(p, "1,8,32,64,256", "packet,burst", "0", "build-meta,l3-demux", "udp64")
    p.add_argument("--duration", type=convert(positive_float), default=1.0,
                   help="seconds per run (default: %(default)s)")
    p.add_argument("--reps", type=convert(positive_int), default=3,
                   help="alternating repetitions; the table gives median [min–max] "
                   "(default: %(default)s)")
    add_out(p, required=False, what="write latency.json/.md here (default: none)")
    p.set_defaults(func=cmd_latency)


def cmd_latency(args, argv):
    lx = Listrx(find_binary(args.listrx), eal=args.eal, lcores=args.lcores)
    return run_latency(lx, args, argv)


def run_latency(lx, args, argv):
    cells = expand(args.profiles, args.pipelines,
                   parse_footprints(args.footprints, lx.topology().get("l1i_bytes")),
                   args.engines, args.bursts)
    per_cell = [{k: [] for k in KEYS + ("samples", "source")} for _ in cells]
    recorded = True
    progress = Progress(len(cells) * args.reps, enabled=not args.quiet)
    # alternating repetitions: every cell once per round, so a drift of
    # the host's speed falls on every cell alike
    for rep in range(args.reps):
        for i, cell in enumerate(cells):
            label = "rep %d/%d %s %s b%d" % (rep + 1, args.reps, cell["profile"],
                                            cell["engine"], cell["burst"])
            if not recorded:
                fig = {k: NOT_RECORDED for k in KEYS}
                fig["samples"] = fig["source"] = None
            else:
                json_path = os.path.join(args.out or "/tmp", "latency-%d-%d-%d.json"
                                         % (os.getpid(), i, rep))
                summary_, err, info = lx.run(lx.command(cell, json_path, duration=args.duration,
                                                        latency=True),
                                             json_path, timeout=args.timeout)
                if not args.out and os.path.exists(json_path):
                    os.unlink(json_path)
                if err:
                    fig = {k: unavailable("run failed: " + err) for k in KEYS}
                    fig["samples"] = fig["source"] = None
                else:
                    fig = latency_figures(summary_)
                    # one run tells whether the binary records latency at all
                    recorded = "latency_ns" in summary_
            for k in per_cell[i]:
                per_cell[i][k].append(fig.get(k))
            progress.update("%s: p50 %s ns" % (label, fmt(fig["p50"], 1)))
    progress.close()
    out_rows = []
    for cell, figs in zip(cells, per_cell):
        row = dict(cell)
        row["reps"] = args.reps
        for k in KEYS:
            st = summary(figs[k])
            # the median, else why there is none
            row[k] = st["median"] if st["n"] else next(
                (v for v in figs[k] if isinstance(v, str)), None)
            row[k + "_min"], row[k + "_max"] = st["min"], st["max"]
            row[k + "_reps"] = figs[k]
        samples = [s_ for s_ in figs["samples"] if s_]
        row["samples"] = int(statistics.median(samples)) if samples else None
        row["samples_reps"] = figs["samples"]
        row["source"] = next((s_ for s_ in figs["source"] if s_), None)
        out_rows.append(row)
    doc = Doc()
    doc.p("Latency from the RX timestamp to the verdict, ns: median [min–max] over "
          "%d alternating rep(s) of %s s each; samples = packets recorded per rep."
          % (args.reps, fmt(args.duration)))
    doc.table(["engine", "burst", "footprint", "p50 ns", "p99 ns", "p99.9 ns", "samples/rep",
               "source"],
              [[r["engine"], r["burst"], r["footprint"], spread_cell(r["p50_reps"]),
                spread_cell(r["p99_reps"]), spread_cell(r["p999_reps"]),
                r["samples"] or "-", r.get("source") or "-"] for r in out_rows])
    table = doc.markdown().strip()
    print(table)
    if args.out:
        with open(os.path.join(args.out, "latency.json"), "w") as f:
            json.dump({"command": "listrx-bench " + " ".join(shlex.quote(a) for a in argv),
                       "reps": args.reps, "duration_s": args.duration,
                       "rows": out_rows}, f, indent=1)
        with open(os.path.join(args.out, "latency.md"), "w") as f:
            f.write("# Latency, RX timestamp to verdict\n\n" + table + "\n")
    return 0
