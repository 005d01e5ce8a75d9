"""The measured side of the seeds' tables: listrx configurations run in
rotating repetitions (one process per run; in repetition r the order of
the configurations is rotated by r, so each one runs first, second...),
each run's ns/packet from the worker's busy cycles; and the cells the
tables show.

`compare` is the one place two configurations' repetitions become a
figure with an interval and a verdict: stats.compare, the one comparison
of the headline, cree, scale and kernel (docs/measuring.md, "One
comparison"), through stats.speedup, which pairs by repetition and leaves
a stalled run's pair out. Every section calls it, for listrx's runs and
the kernel's windows alike."""

import os

from .. import kernel_model, stats
from ..listrx import BenchError, shared_cpu_pct


def level(runs):
    """{rep: ns} of one configuration -> its median, the 95 % interval of
    the median (stats.median_interval) and [min, max]; None without a
    number."""
    vals = [v for v in (stats.number(x) for x in runs.values()) if v]
    if not vals:
        return None
    lo, hi, lev = stats.median_interval(vals)
    return {"ns": stats.median(vals), "ci": [lo, hi], "level": lev, "min": min(vals),
            "max": max(vals), "n": len(vals)}


def compare(base, other, shared=None):
    """other against base, both {rep: ns/packet}, paired by repetition:
    stats.compare's figures (the ratio base/other, its 95 % interval,
    resolved or why, the median pair's sides) and the ns other adds: the
    median pair's other - base, its interval the ratio's read at the
    median pair's base (so it leaves 0 out exactly when the ratio's leaves
    1 out). shared: the reps in which a run shared its CPU (None: not
    recorded)."""
    c = stats.speedup(base, other, names=("base", "other"), shared=shared)
    if c["ratio"] is not None:
        lo, hi = c["ci"]
        c["delta_ns"] = c["other"] - c["base"]
        c["delta_ci"] = [c["base"] / hi - c["base"], c["base"] / lo - c["base"]]
    else:
        c["delta_ns"], c["delta_ci"] = None, [None, None]
    return c


# how a difference cell reads, for the sections' method lines
METHOD_DIFF = (
    "the ns the second adds at the median pair of repetitions (stats.compare: the "
    "median of the per-repetition ratios, a stalled run's pair left out), its 95 %% "
    "interval, the pairs, those in which a run shared its CPU, and resolved when the "
    "interval leaves 0 out with %d pairs at least (docs/measuring.md, \"One "
    "comparison\")." % stats.MIN_PAIRS)


def compare_configs(data, base, other):
    """compare of two configurations of {name: {"runs": {rep: ns},
    "shared": [reps]}} (no "shared": CPU sharing not recorded, as the
    kernel's windows)."""
    a, b = data[base], data[other]
    shared = None
    if "shared" in a and "shared" in b:
        shared = sorted(set(a["shared"]) | set(b["shared"]))
    return compare(a["runs"], b["runs"], shared)


# ---- cells ------------------------------------------------------------------

def _num(v, fmt="%.1f"):
    return "?" if v is None else fmt % v


def _verdict(c):
    """', 7 pairs, 1 left out, 2 shared the CPU: resolved' (stats.caveat's
    wording after its figure)."""
    text = stats.caveat(c)
    return text[text.index("], ") + 1:]


def level_cell(fig):
    """'83.1 ns [80.2–85.0] (12.03 Mpps), 7 runs' or why there is none."""
    if isinstance(fig, str):
        return fig
    if not fig:
        return stats.unavailable("no run gave a figure")
    lo, hi = fig["ci"]
    return "%s ns [%s–%s] (%.2f Mpps), %d runs" % (
        _num(fig["ns"]), _num(lo), _num(hi), 1e3 / fig["ns"], fig["n"])


def delta_cell(cmp):
    """'+6.2 ns [+4.0–+8.1], 7 pairs, CPU sharing not recorded: resolved':
    the ns other adds at the median pair, the 95 % interval, the caveat."""
    if isinstance(cmp, str):
        return cmp
    if not cmp or cmp.get("delta_ns") is None:
        return stats.unavailable("no pair with a figure on both sides")
    lo, hi = cmp["delta_ci"]
    return "%s ns [%s–%s]%s" % (_num(cmp["delta_ns"], "%+.1f"), _num(lo, "%+.1f"),
                                _num(hi, "%+.1f"), _verdict(cmp))


def ratio_cell(cmp):
    """'1.36× [1.15–1.54], 7 pairs, ...: resolved' (stats.caveat)."""
    if isinstance(cmp, str):
        return cmp
    if not cmp or cmp.get("ratio") is None:
        return stats.unavailable("no pair with a figure on both sides")
    return stats.caveat(cmp)


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
    # listrx warns when its polling CPU was busy before the start
    summary["_shared_cpu_pct"] = shared_cpu_pct(info["output"])
    return kernel_model.listrx_ns(summary), summary


def run_rotating(lx, configs, reps, duration, tmp, progress, timeout=120):
    """configs: [{"name", "vdev", "args", "level"? (--stats-level, default
    counters), "keep"? (keep every run's summary)}], run reps times each in
    rotating order. Returns {name: {"runs": {rep: ns}, "shared": [reps in
    which the run shared its CPU], "first": the first run's summary,
    "summaries": {rep: summary} when kept}}."""
    names = [c["name"] for c in configs]
    by = {c["name"]: c for c in configs}
    out = {n: {"runs": {}, "shared": [], "first": None, "summaries": {}} for n in names}
    for rep in range(reps):
        for name in rotation(names, rep):
            path = os.path.join(tmp, "%s-%d.json" % (name.replace(" ", "_"), rep))
            ns, summary = run_config(lx, by[name], duration, path, timeout,
                                     by[name].get("level", "counters"))
            out[name]["runs"][rep] = ns
            if summary["_shared_cpu_pct"] is not None:
                out[name]["shared"].append(rep)
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
