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
import sys

from .grid import expand, parse_footprints
from .stats import fmt, number, unavailable

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


def run_latency(lx, args, argv):
    cells = expand(args.profiles, args.pipelines,
                   parse_footprints(args.footprints, lx.topology().get("l1i_bytes")),
                   args.engines, args.bursts)
    out_rows = []
    recorded = True
    for i, cell in enumerate(cells):
        if not recorded:
            fig = {k: NOT_RECORDED for k in KEYS}
            fig["samples"] = fig["source"] = None
        else:
            json_path = os.path.join(args.out or "/tmp", "latency-%d-%d.json" % (os.getpid(), i))
            summary, err, info = lx.run(lx.command(cell, json_path, duration=args.duration,
                                                   latency=True),
                                        json_path, timeout=args.timeout)
            if not args.out and os.path.exists(json_path):
                os.unlink(json_path)
            if err:
                fig = {k: unavailable("run failed: " + err) for k in KEYS}
            else:
                fig = latency_figures(summary)
                # one run tells whether the binary records latency at all
                recorded = "latency_ns" in summary
        if not args.quiet:
            print("%s %s b%d: %s" % (cell["profile"], cell["engine"], cell["burst"],
                                      fmt(fig["p50"])), file=sys.stderr)
        row = dict(cell)
        row.update(fig)
        out_rows.append(row)
    lines = ["| engine | burst | footprint | p50 ns | p99 ns | p99.9 ns | samples | source |",
             "|---|---|---|---|---|---|---|---|"]
    for r in out_rows:
        lines.append("| %s | %d | %s | %s | %s | %s | %s | %s |" % (
            r["engine"], r["burst"], r["footprint"], fmt(r["p50"], 1), fmt(r["p99"], 1),
            fmt(r["p999"], 1), r.get("samples") or "-", r.get("source") or "-"))
    table = "\n".join(lines)
    print(table)
    if args.out:
        with open(os.path.join(args.out, "latency.json"), "w") as f:
            json.dump({"command": "listrx-bench " + " ".join(shlex.quote(a) for a in argv),
                       "rows": out_rows}, f, indent=1)
        with open(os.path.join(args.out, "latency.md"), "w") as f:
            f.write("# Latency, RX timestamp to verdict\n\n" + table + "\n")
    return 0
