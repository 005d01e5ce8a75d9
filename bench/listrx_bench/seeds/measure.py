"""The measured side of the seeds' tables: listrx configurations run in
rotating repetitions (one process per run; in repetition r the order of
the configurations is rotated by r, so each one runs first, second...),
each run's ns/packet from the worker's busy cycles; and the cells the
tables show.

`compare` is the one place the method that turns two configurations'
repetitions into a figure with an interval and a verdict lives: stats'
paired speedup and resolution now (the headline's), the interleaved
in-process measurement's verdict once it lands. Every section calls it,
for listrx's runs and the kernel's windows alike."""

import os

from .. import kernel_model, stats
from ..listrx import BenchError


def level(runs):
    """{rep: ns} of one configuration -> its median, the interval of the
    median (order statistics) and [min, max]; None without a number."""
    vals = [v for v in (stats.number(x) for x in runs.values()) if v]
    if not vals:
        return None
    lo, hi = stats.median_ci(vals)
    return {"ns": stats.median(vals), "ci": [lo, hi], "min": min(vals), "max": max(vals),
            "n": len(vals)}


def compare(base, other):
    """other against base, both {rep: ns/packet}, paired by repetition:
    the ns other adds (median of the differences, its interval), the
    speedup base / other (median, [min, max], interval), resolved or not
    and why. Pairs in which a side stalled are left out (stats.speedup)."""
    sp = stats.speedup(base, other)
    if not sp["n"]:
        return {"delta_ns": None, "ratio": None, "resolved": False,
                "resolution": "no pair with a number on both sides", "pairs": 0}
    resolved, why = stats.resolution(sp)
    diffs = [stats.number(other[r]) - stats.number(base[r]) for r in sp["reps"]]
    lo, hi = stats.median_ci(diffs)
    return {"delta_ns": stats.median(diffs), "delta_ci": [lo, hi],
            "delta_range": [min(diffs), max(diffs)],
            "ratio": sp["median"], "ratio_ci": [sp["ci_low"], sp["ci_high"]],
            "ratio_range": [sp["min"], sp["max"]], "resolved": resolved,
            "resolution": why, "pairs": sp["n"], "left_out": sp["left_out"]}


# ---- cells ------------------------------------------------------------------

def _num(v, fmt="%.1f"):
    return "?" if v is None else fmt % v


def level_cell(fig):
    """'83.1 ns [80.2-85.0] (12.0 Mpps), 5 runs' or why there is none."""
    if isinstance(fig, str):
        return fig
    if not fig:
        return stats.unavailable("no run gave a figure")
    lo, hi = fig["ci"]
    return "%s ns [%s–%s] (%.2f Mpps), %d runs" % (
        _num(fig["ns"]), _num(lo), _num(hi), 1e3 / fig["ns"], fig["n"])


def delta_cell(cmp):
    """'+35.6 ns [30.1-40.2], resolved': the median difference and the
    pairs' [min-max], the interval the verdict reads (resolved when it
    leaves 0 out, as compare says)."""
    if isinstance(cmp, str):
        return cmp
    if not cmp or cmp.get("delta_ns") is None:
        return stats.unavailable((cmp or {}).get("resolution", "no pairs"))
    lo, hi = cmp["delta_range"]
    return "%s ns [%s–%s], %s" % (_num(cmp["delta_ns"], "%+.1f"), _num(lo, "%+.1f"),
                                  _num(hi, "%+.1f"),
                                  "resolved" if cmp["resolved"] else "not resolved")


def ratio_cell(cmp):
    """'2.36x [2.10-2.52], resolved' (the speedup's [min-max])."""
    if isinstance(cmp, str):
        return cmp
    if not cmp or cmp.get("ratio") is None:
        return stats.unavailable((cmp or {}).get("resolution", "no pairs"))
    lo, hi = cmp["ratio_range"]
    return "%s× [%s–%s], %s" % (_num(cmp["ratio"], "%.2f"), _num(lo, "%.2f"),
                                _num(hi, "%.2f"),
                                "resolved" if cmp["resolved"] else "not resolved")


# ---- listrx runs -------------------------------------------------------------

def rotation(names, rep):
    """The order of the configurations in repetition rep."""
    k = rep % len(names) if names else 0
    return names[k:] + names[:k]


def run_config(lx, cfg, duration, path, timeout, level="counters"):
    """One listrx run of a configuration {"name", "vdev", "args"}; returns
    (ns/packet, summary) or raises BenchError naming the configuration."""
    cmd = ([lx.binary] + lx.eal_args(cfg["vdev"]) +
           ["--", "--stats-level", level, "--stats-period", "0", "--json", path,
            "--duration", str(duration)] + list(cfg["args"]))
    summary, err, info = lx.run(cmd, path, timeout=timeout)
    if err:
        raise BenchError("%s: %s\n  %s" % (cfg["name"], err, info["command"]))
    summary["_command"] = info["command"]
    return kernel_model.listrx_ns(summary), summary


def run_rotating(lx, configs, reps, duration, tmp, progress, timeout=120):
    """configs: [{"name", "vdev", "args", "level"? (--stats-level, default
    counters), "keep"? (keep every run's summary)}], run reps times each in
    rotating order. Returns {name: {"runs": {rep: ns}, "first": the first
    run's summary, "summaries": {rep: summary} when kept}}."""
    names = [c["name"] for c in configs]
    by = {c["name"]: c for c in configs}
    out = {n: {"runs": {}, "first": None, "summaries": {}} for n in names}
    for rep in range(reps):
        for name in rotation(names, rep):
            path = os.path.join(tmp, "%s-%d.json" % (name.replace(" ", "_"), rep))
            ns, summary = run_config(lx, by[name], duration, path, timeout,
                                     by[name].get("level", "counters"))
            out[name]["runs"][rep] = ns
            if out[name]["first"] is None:
                out[name]["first"] = summary
            if by[name].get("keep"):
                out[name]["summaries"][rep] = summary
            progress.update("%s rep %d: %.1f ns/pkt" % (name, rep, ns or 0), kind="run")
    return out


def spread_cell(values, what=""):
    """'12.3 ns [11.0–13.1] (what)': the median of a few runs' values and
    their [min–max], for the zoom-ins."""
    vals = [v for v in values if v is not None]
    if not vals:
        return stats.unavailable("no run gave this figure")
    return "%.1f ns [%.1f–%.1f]%s" % (stats.median(vals), min(vals), max(vals),
                                      " (%s)" % what if what else "")


def stage_ns(summary):
    """{stage: ns/packet} of a --stats-level cycles run, and the time
    outside the stages ("outside": rx_burst, the sink's frees, the loop)."""
    out = {s["name"]: s.get("ns_per_packet") for s in summary.get("stages", [])}
    total = kernel_model.listrx_ns(summary)
    known = [v for v in out.values() if v is not None]
    out["outside"] = total - sum(known) if total is not None and known else None
    out["total"] = total
    return out
