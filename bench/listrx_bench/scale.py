"""scale: listrx's receive rate over 1..N polling lcores (one RX queue per
lcore, net_synth RSS), both engines and the empty pipeline, with the
emulated NIC's own cost taken apart from the dataplane's.

The runs are bench/scale.sh's (bash and coreutils only, so that a
many-core machine without DPDK or Python runs it with the binaries of
portable-bundle); this module runs it here, or reads what it wrote
elsewhere (--from DIR or DIR.tar.gz), and makes the report:

- Mpps over all lcores, Mpps per lcore, efficiency = Mpps(n) / (n x
  Mpps(1)), one stats.compare paired by repetition against the smallest
  count (median, 95 % interval, resolved against the 0.9 target), the
  runs whose log has listrx's shared-CPU warning counted;
- the per-lcore spread of a run: (slowest - fastest lcore) / median lcore;
- the dataplane's share: per lcore, ns per packet of the pipeline run
  minus that of the empty pipeline run of the same repetition on the same
  queues (the NIC's generation, rx_burst and the free), and its efficiency
  ns(1) / ns(n) (paired the same way), so that the figure says how the stages and engines
  scale, not how the generator does;
- which counts put two lcores on one physical core (SMT), from the
  machine's topology;
- the CPUs' own speeds: scale.sh's calibration runs each CPU the curve uses
  alone (one polling lcore there, every pipeline), and a count's rate is
  held against the sum of its CPUs' solo rates ("efficiency vs the CPUs'
  own speeds"), each lcore against its CPU's (the spread left once the
  CPUs' speeds are taken out), so that a machine whose CPUs run at
  different speeds is told apart from a dataplane that loses when its
  lcores run together; and what /proc/stat says the polling CPUs did
  besides (steal: time the hypervisor gave to others; interrupts).
"""

import json
import os
import subprocess
import sys
import tarfile

from . import grid
from .listrx import (BenchError, allowed_cpus, find_binary, notice_once, provenance,
                     remove_runtime_dir, shared_cpu_pct, signals_held)
from .options import convert, non_negative_int, positive_float, positive_int
from .report import Doc, matplotlib_pyplot, zero_based
from .stats import caveat, compare, fmt, median, summary

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "scale.sh")
EMPTY = "none"           # the empty pipeline's engine name in runs.tsv
TARGET_EFFICIENCY = 0.9  # the dataplane's share at N lcores (docs/measuring.md)


def read_plan(text):
    """scale.sh's `plan` (one "key value" per line) -> dict of strings;
    its "smt N CPU+CPU..." lines (a count whose polling lcores share
    physical cores) as the list smt_lines ("N CPU+CPU...")."""
    plan = {"smt_lines": []}
    for key, value in read_keyed(text):
        if key == "smt":
            plan["smt_lines"].append(value)
        else:
            plan[key] = value
    return plan if len(plan) > 1 else {}


def read_keyed(text):
    """"key value..." lines -> [(key, value)] in order (host/cpus repeats
    keys: one numa_node and cache line each)."""
    out = []
    for line in text.splitlines():
        key, _, value = line.strip().partition(" ")
        if key:
            out.append((key, value.strip()))
    return out


def read_topology(text):
    """host/topology ("cpu package core siblings" per line) -> {cpu:
    (package, core)}; unknown fields as '-'."""
    topo = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].isdigit():
            topo[int(f[0])] = (f[1], f[2])
    return topo


def read_nodes(text):
    """host/topology's fifth column (the NUMA node, scale.sh since it has
    one) -> {cpu: node string}; absent in older output."""
    nodes = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 5 and f[0].isdigit() and f[4] != "-":
            nodes[int(f[0])] = f[4]
    return nodes


def read_mhz(text):
    """host/mhz_* ("cpu cpuinfo-MHz cpufreq-MHz") -> {cpu: MHz}: cpufreq's
    current frequency where the kernel has one, else /proc/cpuinfo's."""
    mhz = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0].isdigit():
            for v in reversed(f[1:3]):
                try:
                    mhz[int(f[0])] = float(v)
                    break
                except ValueError:
                    continue
    return mhz


# /proc/stat's CPU columns (proc(5)), in USER_HZ ticks
STAT_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def read_cpu_time(text):
    """runs/NAME.stat (the cpuN lines of /proc/stat, "--", the same after)
    -> {cpu: {"steal", "irq", "busy"}: shares of the CPU's ticks in the
    run}; {} when absent or unreadable."""
    before, _, after = text.partition("--")

    def ticks(block):
        out = {}
        for line in block.splitlines():
            f = line.split()
            if len(f) >= 9 and f[0].startswith("cpu") and f[0][3:].isdigit():
                try:
                    out[int(f[0][3:])] = dict(zip(STAT_FIELDS, (int(v) for v in f[1:9])))
                except ValueError:
                    continue
        return out
    b, a = ticks(before), ticks(after)
    shares = {}
    for cpu in b.keys() & a.keys():
        d = {k: a[cpu][k] - b[cpu][k] for k in STAT_FIELDS}
        total = sum(d.values())
        if total <= 0:
            continue
        shares[cpu] = {"steal": d["steal"] / total,
                       "irq": (d["irq"] + d["softirq"]) / total,
                       "busy": (total - d["idle"] - d["iowait"]) / total}
    return shares


def cores_used(order, topo, n):
    """How many physical cores the first n CPUs of scale.sh's order use
    (each worker lcore on its own CPU)."""
    cpus = order[:n]
    if not all(c in topo and "-" not in topo[c] for c in cpus):
        return None
    return len({topo[c] for c in cpus})


def run_figures(summary_):
    """One run's JSON summary -> (total Mpps, [Mpps per lcore], [lcore
    ids], accounting problem or None)."""
    dur = summary_.get("duration_s") or 0
    if summary_.get("stopped_by_signal"):
        return None, [], [], "stopped by a signal: not a repetition"
    if not dur or not isinstance(summary_.get("mpps"), (int, float)):
        return None, [], [], "no duration or rate in the summary"
    lcores = summary_.get("lcores", [])
    per = [l.get("packets", 0) / dur / 1e6 for l in lcores]
    ids = [l.get("lcore") for l in lcores]
    rx = summary_.get("rx_packets", 0)
    out = summary_.get("delivered", 0) + summary_.get("tx_packets", 0) + summary_.get("dropped", 0)
    problem = None
    if out + summary_.get("held", 0) != rx:
        problem = "rx %d != delivered + tx + dropped + held %d" % (rx, out + summary_.get("held", 0))
    elif summary_.get("mbufs_in_use_at_exit"):
        problem = "%d mbufs in use at exit" % summary_["mbufs_in_use_at_exit"]
    return float(summary_["mpps"]), per, ids, problem


def read_runs(raw, tsv, text):
    """One of scale.sh's run lists (runs.tsv: rep, lcores; calibration.tsv:
    pass, cpu; then engine, status, load1, seconds, json) -> [run dicts]
    with the rate, the per-lcore rates and the CPUs' time (runs/NAME.stat)."""
    lines = text(tsv).splitlines()
    if not lines:
        return []
    header = lines[0].split("\t")
    runs = []
    for line in lines[1:]:
        f = line.split("\t")
        if len(f) < 7:
            continue
        run = {header[0]: int(f[0]), header[1]: int(f[1]), "engine": f[2],
               "status": int(f[3]), "load1": float(f[4]), "seconds": float(f[5]),
               "mpps": None, "per_lcore": [], "lcore_ids": [], "problem": None}
        if run["status"] != 0:
            run["problem"] = "exit %d" % run["status"]
        else:
            try:
                with open(os.path.join(raw, f[6])) as jf:
                    s = json.load(jf)
                run["mpps"], run["per_lcore"], run["lcore_ids"], run["problem"] = run_figures(s)
            except (OSError, ValueError) as e:
                run["problem"] = "no summary: %s" % e
        base = f[6][:-len(".json")] if f[6].endswith(".json") else f[6]
        run["cpu_time"] = read_cpu_time(text(base + ".stat"))
        log = text(base + ".log")
        if log:
            # listrx's warning: a polling CPU was busy before the start
            run["shared_cpu_pct"] = shared_cpu_pct(log)
        if run["problem"]:
            run["mpps"] = None
            run["log"] = " | ".join(log.strip().splitlines()[-2:])
        runs.append(run)
    return runs


HOST_FILES = ("model", "nproc", "uname", "lscpu", "topology", "cpus", "mhz_before",
              "mhz_after", "vulnerabilities", "listrx_version", "listrx_command",
              "loadavg_before", "loadavg_after")


def load(raw):
    """scale.sh's output directory -> {plan, host, runs: [{rep, lcores,
    engine, status, load1, mpps, per_lcore, lcore_ids, cpu_time, problem,
    log}], calibration: [{pass, cpu, ...the same}] (empty when scale.sh ran
    none, or predates it)}."""
    def text(*parts):
        try:
            with open(os.path.join(raw, *parts), errors="replace") as f:
                return f.read()
        except OSError:
            return ""
    plan = read_plan(text("plan"))
    if not plan:
        raise BenchError("%s: no plan (not a directory scale.sh wrote)" % raw)
    host = {k: text("host", k).strip() for k in HOST_FILES}
    return {"plan": plan, "host": host, "runs": read_runs(raw, "runs.tsv", text),
            "calibration": read_runs(raw, "calibration.tsv", text)}


def solo_rates(data):
    """The calibration runs -> {engine: {cpu: summary of its Mpps alone,
    over the passes}}."""
    solo = {}
    for r in data.get("calibration", []):
        if r["mpps"]:
            solo.setdefault(r["engine"], {}).setdefault(r["cpu"], []).append(r["mpps"])
    return {e: {c: summary(v) for c, v in cpus.items()} for e, cpus in solo.items()}


def own_sum(solo, engine, cpus):
    """The sum of these CPUs' solo rates (medians), or None when one is
    missing."""
    rates = solo.get(engine, {})
    if not cpus or not all(c in rates for c in cpus):
        return None
    return sum(rates[c]["median"] for c in cpus)


def lcores_vs_own(run, order, rates):
    """Each lcore's rate ÷ its CPU's own (lcore i polls on order[i-1]), or
    None when a CPU has no solo rate."""
    out = []
    for mpps, lcore in zip(run["per_lcore"], run["lcore_ids"]):
        cpu = order[lcore - 1] if isinstance(lcore, int) and 0 < lcore <= len(order) else None
        if cpu not in rates or not rates[cpu]["median"]:
            return None
        out.append(mpps / rates[cpu]["median"])
    return out or None


def cpu_time_figure(runs, cpus, key, pick=max):
    """Per run, pick() over the given CPUs of their share of `key` time
    (/proc/stat), in % -> summary over the runs."""
    vals = []
    for r in runs:
        got = [r["cpu_time"][c][key] for c in cpus if c in r.get("cpu_time", {})]
        if got:
            vals.append(100.0 * pick(got))
    return summary(vals)


def lcore_ns(run, n):
    """A run's ns per packet per lcore: 1000 n / Mpps (None without a rate)."""
    return 1e3 * n / run["mpps"] if run and run.get("mpps") else None


def paired_by_rep(by, cells0, cells, value):
    """One stats.compare of a count against the smallest count, paired by
    repetition (scale.sh runs every count once per repetition): value(
    {cell: run}, n) of each rep at n0 (base) and at n (other), so that base
    / other is an efficiency; resolved against the TARGET_EFFICIENCY.
    cells0, cells: [(engine, n)] of the runs each side's value uses; a
    rep shared its CPU when one of them did (None: no run's log says)."""
    reps = sorted(set().union(*(by.get(c, {}) for c in cells)))
    runs = {rep: [by.get(c, {}).get(rep) for c in cells0 + cells] for rep in reps}
    recorded = any("shared_cpu_pct" in r for rs in runs.values() for r in rs if r)
    shared = {rep for rep, rs in runs.items()
              if any(r and r.get("shared_cpu_pct") is not None for r in rs)}

    def side(cs, rep):
        return value({c: by.get(c, {}).get(rep) for c in cs}, cs[0][1])
    return compare([(rep, side(cells0, rep), side(cells, rep)) for rep in reps],
                   reference=TARGET_EFFICIENCY, shared=shared if recorded else None)


def efficiency_of(by, engine, n0, n):
    """Mpps(n) / (n x Mpps(n0) / n0), paired by repetition."""
    return paired_by_rep(by, [(engine, n0)], [(engine, n)],
                         lambda runs, k: lcore_ns(runs[(engine, k)], k))


def dataplane_ns_of(runs, engine, n):
    """The stages' and engine's ns per packet per lcore in one repetition:
    the engine's run minus the empty pipeline's (the NIC's share)."""
    full, nic = lcore_ns(runs.get((engine, n)), n), lcore_ns(runs.get((EMPTY, n)), n)
    return full - nic if full is not None and nic is not None else None


def dataplane_efficiency_of(by, engine, n0, n):
    """dataplane ns/pkt/lcore at n0 / at n, paired by repetition."""
    return paired_by_rep(by, [(engine, n0), (EMPTY, n0)], [(engine, n), (EMPTY, n)],
                         lambda runs, k: dataplane_ns_of(runs, engine, k))


def analyse(data):
    """Rows per (engine, lcores) with the figures the report shows."""
    plan, runs = data["plan"], data["runs"]
    order = [int(c) for c in plan.get("order", "").split()]
    main_cpu = int(plan["main_cpu"]) if plan.get("main_cpu", "").isdigit() else None
    topo = read_topology(data["host"].get("topology", ""))
    nodes = read_nodes(data["host"].get("topology", ""))
    solo = solo_rates(data)
    engines = plan.get("engines", EMPTY).split(",")
    counts = sorted({r["lcores"] for r in runs})
    by = {}
    for r in runs:
        by.setdefault((r["engine"], r["lcores"]), {})[r["rep"]] = r
    rows = []
    base = {}
    for engine in engines:
        n0 = next((n for n in counts if any(r["mpps"] for r in by.get((engine, n), {}).values())),
                  None)
        if n0 is not None:
            base[engine] = n0
    dp_base = {}
    for engine in engines:
        for n in counts:
            cell = by.get((engine, n), {})
            ok = {rep: r for rep, r in cell.items() if r["mpps"]}
            cpus = order[:n]
            row = {"engine": engine, "lcores": n, "runs": len(cell), "ok": len(ok),
                   "cpus": cpus, "cores": cores_used(order, topo, n),
                   "numa_nodes": sorted({nodes[c] for c in cpus if c in nodes}),
                   "problems": sorted({r["problem"] + (" (%s)" % r.get("log") if r.get("log") else "")
                                       for r in cell.values() if r["problem"]})}
            row["mpps"] = summary(r["mpps"] for r in ok.values())
            row["mpps_per_lcore"] = summary(r["mpps"] / n for r in ok.values())
            row["shared_cpu_runs"] = sum(1 for r in cell.values()
                                         if r.get("shared_cpu_pct") is not None)
            if engine in base:
                row["efficiency"] = efficiency_of(by, engine, base[engine], n)
                row["efficiency_base_lcores"] = base[engine]
            row["spread"] = summary((max(r["per_lcore"]) - min(r["per_lcore"])) /
                                    median(r["per_lcore"])
                                    for r in ok.values() if len(r["per_lcore"]) > 1
                                    and median(r["per_lcore"]))
            row["slowest_lcore_mpps"] = summary(min(r["per_lcore"]) for r in ok.values()
                                                if r["per_lcore"])
            # what the polling CPUs did besides, and the others' load
            row["steal_pct"] = cpu_time_figure(ok.values(), cpus, "steal")
            row["irq_pct"] = cpu_time_figure(ok.values(), cpus, "irq")
            others = [c for r in ok.values() for c in r.get("cpu_time", {})
                      if c not in cpus and c != main_cpu]
            row["others_busy_pct"] = cpu_time_figure(
                ok.values(), sorted(set(others)), "busy", pick=lambda v: sum(v) / len(v))
            # against the CPUs' own speeds (each alone, calibration)
            own = own_sum(solo, engine, cpus)
            row["own_mpps"] = own
            if own:
                row["own_efficiency"] = summary(r["mpps"] / own for r in ok.values())
                norm = [v for v in (lcores_vs_own(r, order, solo.get(engine, {}))
                                    for r in ok.values()) if v]
                row["own_spread"] = summary((max(v) - min(v)) / median(v)
                                            for v in norm if len(v) > 1 and median(v))
                row["slowest_lcore_vs_own"] = summary(min(v) for v in norm)
            # the dataplane's ns per packet per lcore: this run's minus the
            # empty pipeline's of the same rep on the same queues
            if engine != EMPTY:
                empty = by.get((EMPTY, n), {})
                dp = [1e3 * n / r["mpps"] - 1e3 * n / empty[rep]["mpps"]
                      for rep, r in ok.items() if rep in empty and empty[rep]["mpps"]]
                row["dataplane_ns"] = summary(dp)
                if engine not in dp_base and row["dataplane_ns"]["n"]:
                    dp_base[engine] = n
                if engine in dp_base:
                    row["dataplane_efficiency"] = dataplane_efficiency_of(by, engine,
                                                                          dp_base[engine], n)
                # the same cost had each lcore run at its CPU's own speed,
                # engine and empty pipeline alike
                own_empty = own_sum(solo, EMPTY, cpus)
                if own and own_empty and 1e3 * n / own > 1e3 * n / own_empty:
                    row["own_dataplane_ns"] = 1e3 * n / own - 1e3 * n / own_empty
                    row["own_dataplane_efficiency"] = summary(
                        row["own_dataplane_ns"] / v for v in dp if v > 0)
            rows.append(row)
    return rows


def together_vs_alone(data, solo, engine, cpu):
    """(n, summary over the runs at the largest count n whose lcores include
    cpu of that lcore's rate ÷ the CPU's solo median), or (None, None):
    where a CPU loses when every lcore runs, against itself alone."""
    order = [int(c) for c in data["plan"].get("order", "").split()]
    alone = (solo.get(engine, {}).get(cpu) or {}).get("median")
    runs = [r for r in data["runs"] if r["engine"] == engine and r["mpps"]]
    if not alone or not runs:
        return None, None
    n = max(r["lcores"] for r in runs)
    if n < 2:
        return None, None
    vals = [mpps / alone for r in runs if r["lcores"] == n
            for mpps, lc in zip(r["per_lcore"], r["lcore_ids"])
            if isinstance(lc, int) and 0 < lc <= len(order) and order[lc - 1] == cpu]
    return (n, summary(vals)) if vals else (None, None)


def calibration_rows(data):
    """One row per calibrated CPU: its core and node, each pipeline's solo
    Mpps (summary over the passes) and ÷ the median CPU's, its lcore's rate
    together (the largest count) ÷ alone, the steal and interrupt time of
    its runs, the CPU MHz before and after."""
    solo = solo_rates(data)
    if not solo:
        return []
    plan, host = data["plan"], data["host"]
    topo = read_topology(host.get("topology", ""))
    nodes = read_nodes(host.get("topology", ""))
    mhz0, mhz1 = read_mhz(host.get("mhz_before", "")), read_mhz(host.get("mhz_after", ""))
    engines = [e for e in plan.get("engines", EMPTY).split(",") if e in solo]
    cpus = [int(c) for c in plan.get("calibration_cpus", "").split()] or \
        sorted({c for e in solo.values() for c in e})
    mid = {e: median(solo[e][c]["median"] for c in solo[e]) for e in engines}
    rows = []
    for cpu in cpus:
        runs = [r for r in data["calibration"] if r["cpu"] == cpu and r["mpps"]]
        row = {"cpu": cpu, "core": ":".join(topo[cpu]) if cpu in topo else None,
               "numa_node": nodes.get(cpu), "mhz_before": mhz0.get(cpu),
               "mhz_after": mhz1.get(cpu), "mpps": {}, "vs_median_cpu": {},
               "together_vs_alone": {}, "together_lcores": None,
               "steal_pct": cpu_time_figure(runs, [cpu], "steal"),
               "irq_pct": cpu_time_figure(runs, [cpu], "irq")}
        for e in engines:
            st = solo[e].get(cpu)
            row["mpps"][e] = st
            row["vs_median_cpu"][e] = st["median"] / mid[e] if st and mid[e] else None
            n, tva = together_vs_alone(data, solo, e, cpu)
            row["together_vs_alone"][e] = tva
            row["together_lcores"] = n or row["together_lcores"]
        rows.append(row)
    return rows


def cpu_speed_spread(cal_rows, engine):
    """(fastest - slowest CPU alone) ÷ the median CPU, for one pipeline."""
    vals = [r["mpps"][engine]["median"] for r in cal_rows if r["mpps"].get(engine)]
    if len(vals) < 2 or not median(vals):
        return None
    return (max(vals) - min(vals)) / median(vals)


def cell(st, digits=3):
    if not st or not st.get("n"):
        return "-"
    if st["n"] == 1 or st["min"] == st["max"]:
        return fmt(st["median"], digits)
    return "%s [%s–%s]" % (fmt(st["median"], digits), fmt(st["min"], digits),
                           fmt(st["max"], digits))


def _med(st):
    return (st or {}).get("median")


def _ratio(c):
    return (c or {}).get("ratio")


def interval_cell(c):
    """A comparison's cell: ratio [95 % interval]."""
    if not c or c.get("ratio") is None:
        return "-"
    return "%s [%s–%s]" % (fmt(c["ratio"]), fmt(c["ci"][0]), fmt(c["ci"][1]))


def against_target(c):
    """A comparison against TARGET_EFFICIENCY in the one wording (its
    caveat), then which side of the target it is on when resolved."""
    text = caveat(c, digits=3, unit="")
    if not c["resolved"]:
        return text + ", against the %.2f target" % TARGET_EFFICIENCY
    return text + ", %s the %.2f target" % ("meets" if c["ratio"] > TARGET_EFFICIENCY
                                            else "below", TARGET_EFFICIENCY)


def limit_sentence(r, rows, cpu_spread):
    """Which limit applies at this row, from the calibration: the
    machine's CPUs' own speeds, or a loss of running together."""
    dpe, dpo = _ratio(r.get("dataplane_efficiency")), _med(r.get("own_dataplane_efficiency"))
    if dpo is None:
        return None
    spread = (" (alone, the CPUs' rates span %s of the median CPU's)" % fmt(cpu_spread)
              if cpu_spread is not None else "")
    if dpo >= TARGET_EFFICIENCY and (dpe is None or dpe >= TARGET_EFFICIENCY):
        return "the target is met against n × lcore 1 and against the CPUs' own speeds"
    if dpo >= TARGET_EFFICIENCY:
        return ("the limit is the machine's: its CPUs run at different speeds%s, and against "
                "their own speeds the dataplane's share meets the %.2f target" % (
                    spread, TARGET_EFFICIENCY))
    empty = next((x for x in rows if x["engine"] == EMPTY and x["lcores"] == r["lcores"]), None)
    e0 = _med((empty or {}).get("own_efficiency"))
    steal = (r.get("steal_pct") or {}).get("max")
    return ("below the target against the CPUs' own speeds too: running together costs what "
            "running alone does not (the dataplane's shared state, or the machine's shared "
            "resources: last-level cache, memory, the hypervisor)%s%s" % (
                "; the empty pipeline, which shares nothing but the machine, reaches %s of its "
                "CPUs' own rates (a machine-wide slowdown, such as a lower all-core turbo, "
                "shows there too)" % fmt(e0) if e0 is not None else "",
                "; the hypervisor took up to %s %% of a polling CPU's time (steal)" % fmt(steal, 2)
                if steal is not None and steal >= 1 else ""))


def verdicts(rows, plan, cal_rows=()):
    """One sentence per engine at its largest lcore count."""
    out = []
    top = {}
    for r in rows:
        if r["engine"] != EMPTY and r["ok"]:
            top[r["engine"]] = r
    for engine, r in top.items():
        eff, dpe = r.get("efficiency"), r.get("dataplane_efficiency")
        head = "%s, %d lcore(s): %s Mpps (%s per lcore)" % (
            engine, r["lcores"], fmt(r["mpps"]["median"]), fmt(r["mpps_per_lcore"]["median"]))
        smt = ("" if r["cores"] in (None, r["lcores"]) else
               " (%d lcores on %d physical cores: SMT siblings share a core)" % (
                   r["lcores"], r["cores"]))
        own = ""
        one = next((x for x in rows if x["engine"] == engine and x["lcores"] == 1), None)
        if r["lcores"] == 1 and r.get("own_efficiency"):
            # one CPU, in the curve's runs and alone: the same setting twice
            own = ("; against its CPU alone (calibration): %s, the runs' own noise, as "
                   "nothing runs together at one lcore" % fmt(_med(r["own_efficiency"])))
        elif r.get("own_efficiency"):
            own = "; against the CPUs' own speeds (each alone): efficiency %s%s" % (
                fmt(_med(r["own_efficiency"])),
                ", the dataplane's share %s" % fmt(_med(r["own_dataplane_efficiency"]))
                if r.get("own_dataplane_efficiency") else "")
            why = limit_sentence(r, rows, cpu_speed_spread(cal_rows, engine))
            own += ": " + why if why else ""
            if one and one.get("own_efficiency"):
                own += ("; at one lcore the curve's runs against the same CPU alone give %s "
                        "(the runs' own noise)" % cell(one["own_efficiency"]))
        if r["lcores"] == r.get("efficiency_base_lcores", r["lcores"]):
            out.append(head + "; one lcore count only: no scaling measured" + own)
        elif _ratio(dpe) is None:
            out.append(head + ", efficiency %s (no empty-pipeline runs to take the NIC's "
                       "share apart)%s%s" % (against_target(eff), smt, own))
        else:
            out.append(head + ", efficiency %s; the dataplane's share %s%s%s" % (
                caveat(eff, digits=3, unit=""), against_target(dpe), smt, own))
    return out


def limits_note(plan):
    """Why the curve stops where it does."""
    max_l = int(plan.get("max_lcores", "0") or 0)
    order = plan.get("order", "").split()
    if plan.get("main_shares") == "yes":
        return ("This host lets the run use %d CPU(s) (%s); the main lcore (the monitor, "
                "awake every 2 ms) shares CPU %s with a polling lcore (--main-cpu), so at "
                "most %d polling lcore(s), the one on CPU %s (and its calibration alone "
                "there) sharing its CPU with the monitor" % (
                    len(order), " ".join(order), plan.get("main_cpu"), max_l,
                    plan.get("main_cpu")))
    return ("This host lets the run use %d CPU(s) (%s): one is the main lcore's (the monitor), "
            "so at most %d polling lcore(s)%s" % (
                len(order), " ".join(order), max_l,
                "; a scaling curve needs a host with more cores (bench/scale.sh there, then "
                "`listrx-bench scale --from DIR`, or --main-cpu to put the main lcore beside "
                "a polling one)" if max_l < 2 else ""))


def plot(rows, cal, path, title):
    plt, why = matplotlib_pyplot()
    if not plt:
        return why
    engines = []
    for r in rows:
        if r["engine"] not in engines:
            engines.append(r["engine"])
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(1, 3 if cal else 2, figsize=(16 if cal else 11, 4.2))
    values_a, values_b = [], []
    for i, e in enumerate(engines):
        pts = [r for r in rows if r["engine"] == e and r["mpps"]["n"]]
        if not pts:
            continue
        xs = [r["lcores"] for r in pts]
        ys = [r["mpps"]["median"] for r in pts]
        err = [[r["mpps"]["median"] - r["mpps"]["min"] for r in pts],
               [r["mpps"]["max"] - r["mpps"]["median"] for r in pts]]
        label = "empty pipeline (NIC)" if e == EMPTY else e
        if e != EMPTY:
            # the NIC alone runs several times faster: its curve is in the
            # table and the efficiency panel, not here, where it would
            # flatten the engines'
            axes[0].errorbar(xs, ys, yerr=err, marker="o", ms=3, capsize=2, label=label,
                             color=colors[i % len(colors)])
            per1 = pts[0]["mpps"]["median"] / pts[0]["lcores"]
            axes[0].plot(xs, [per1 * n for n in xs], ls=":", lw=0.8,
                         color=colors[i % len(colors)], label=e + ", ideal (n x 1 lcore)")
            values_a += [r["mpps"]["max"] for r in pts] + [per1 * xs[-1]]
        eff = [r for r in pts if _ratio(r.get("efficiency")) is not None]
        axes[1].plot([r["lcores"] for r in eff], [r["efficiency"]["ratio"] for r in eff],
                     marker="o", ms=3, color=colors[i % len(colors)], label=label + ", total")
        values_b += [r["efficiency"]["ratio"] for r in eff]
        dp = [r for r in pts if _ratio(r.get("dataplane_efficiency")) is not None]
        if dp:
            axes[1].plot([r["lcores"] for r in dp],
                         [r["dataplane_efficiency"]["ratio"] for r in dp], marker="s", ms=3,
                         ls="--", color=colors[i % len(colors)], label=e + ", dataplane share")
            values_b += [r["dataplane_efficiency"]["ratio"] for r in dp]
        own = [r for r in pts if (r.get("own_dataplane_efficiency" if e != EMPTY
                                        else "own_efficiency") or {}).get("n")]
        if own:
            key = "own_dataplane_efficiency" if e != EMPTY else "own_efficiency"
            axes[1].plot([r["lcores"] for r in own], [r[key]["median"] for r in own],
                         marker="^", ms=3, ls="-.", color=colors[i % len(colors)],
                         label=label + (", dataplane share" if e != EMPTY else "") +
                         " vs the CPUs' own speeds")
            values_b += [r[key]["median"] for r in own]
    if cal:
        # each CPU alone, against the median CPU: the machine's own spread
        xs = list(range(len(cal)))
        for i, e in enumerate(engines):
            ys = [r["vs_median_cpu"].get(e) for r in cal]
            if any(y is not None for y in ys):
                axes[2].plot(xs, ys, marker="o", ms=3, ls="none", color=colors[i % len(colors)],
                             label="empty pipeline (NIC)" if e == EMPTY else e)
        axes[2].axhline(1.0, color="grey", lw=0.8, ls=":")
        axes[2].set_xticks(xs)
        axes[2].set_xticklabels([str(r["cpu"]) for r in cal], fontsize=7)
        axes[2].set_xlabel("CPU (one polling lcore, alone)")
        axes[2].set_ylabel("Mpps alone ÷ the median CPU's")
        zero_based(axes[2], [y for r in cal for y in r["vs_median_cpu"].values()] + [1.0])
        axes[2].grid(True, alpha=0.3)
        axes[2].legend(fontsize=8)
    axes[1].axhline(TARGET_EFFICIENCY, color="grey", lw=0.8, ls=":")
    axes[0].set_ylabel("Mpps (all lcores), pipeline")
    axes[1].set_ylabel("efficiency: vs n x Mpps(1), or vs the CPUs alone")
    for ax, vals in ((axes[0], values_a), (axes[1], values_b + [1.0])):
        zero_based(ax, vals)
        ax.set_xlabel("polling lcores")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def loadavg(text):
    """/proc/loadavg's three averages, or '?'."""
    return " ".join((text or "?").split()[:3])


def machine_note(host, plan):
    """The machine as scale.sh saw it (host/cpus: sysfs and /proc, no
    lscpu needed), one sentence; None for older output."""
    kv = read_keyed(host.get("cpus", ""))
    if not kv:
        return None
    d = dict(kv)
    nodes = ["node %s: CPUs %s" % tuple(v.split(None, 1)) for k, v in kv
             if k == "numa_node" and len(v.split()) == 2]
    caches = [v.replace(" shared_with ", " shared by CPUs ") for k, v in kv if k == "cache"]
    mhz = []
    for key, label in (("mhz_before", "before"), ("mhz_after", "after")):
        vals = [v for c, v in read_mhz(host.get(key, "")).items()]
        if vals:
            mhz.append("%s %s [%s–%s]" % (label, fmt(median(vals), 4), fmt(min(vals), 4),
                                           fmt(max(vals), 4)))
    text = ("Machine (sysfs, /proc): %s socket(s), %s core(s), %s thread(s) per core (SMT "
            "control %s), %s; hypervisor: %s" % (
                d.get("sockets", "?"), d.get("cores", "?"), d.get("threads_per_core", "?"),
                d.get("smt_control", "-"), "; ".join(nodes) or "no NUMA information",
                d.get("hypervisor", "?")))
    if caches:
        text += "; caches of CPU %s: %s" % (plan.get("order", "?").split()[0]
                                            if plan.get("order") else "?", ", ".join(caches))
    text += "; cpufreq %s/%s, no_turbo %s" % (d.get("cpufreq_driver", "-"),
                                               d.get("cpufreq_governor", "-"),
                                               d.get("no_turbo", "-"))
    if mhz:
        text += "; CPU MHz (median [min–max] over the CPUs) %s" % ", ".join(mhz)
    return text + "."


def report(data, out_dir, command):
    rows = analyse(data)
    cal = calibration_rows(data)
    plan, host = data["plan"], data["host"]
    doc = Doc()
    doc.h(1, "listrx over polling lcores")
    doc.p("Host: %s, %s CPU(s); listrx: %s." % (
        host.get("model", "").replace("model name", "").strip(" :\t") or "unknown CPU",
        host.get("nproc") or "?", host.get("listrx_version", "").splitlines()[0]
        if host.get("listrx_version") else "unknown"))
    note = machine_note(host, plan)
    if note:
        doc.p(note)
    for line in plan.get("smt_lines", []):
        doc.p("Warning: at %s lcores, polling lcores share physical cores (SMT siblings: %s)."
              % tuple(line.split(None, 1)))
    doc.p("Pipeline `%s` on net_synth `%s,copy=0`, one RX queue per polling lcore (RSS), "
          "burst %s, stats level off, %s s per run, %s alternating repetitions planned (%s); "
          "the empty pipeline on the same queues is the NIC's own cost (generation, "
          "rx_burst, the free). Load average before %s, after %s." % (
              plan.get("pipeline"), plan.get("profile"), plan.get("burst"),
              plan.get("duration"), plan.get("reps"), plan.get("stopped", "?"),
              loadavg(host.get("loadavg_before")), loadavg(host.get("loadavg_after"))))
    if len({r["lcores"] for r in rows}) < 2:
        doc.p(limits_note(plan) + ".")
    for v in verdicts(rows, plan, cal):
        doc.p(v)
    header = ["engine", "lcores", "cores", "Mpps", "Mpps/lcore", "efficiency [95 % interval]",
              "dataplane ns/pkt/lcore", "dataplane efficiency [95 % interval]", "lcore spread",
              "slowest lcore Mpps", "runs ok (shared CPU)"]
    table = []
    for r in rows:
        table.append([engine_label(r["engine"]), r["lcores"],
                      r["cores"] if r["cores"] is not None else "-",
                      cell(r["mpps"]), cell(r["mpps_per_lcore"]),
                      interval_cell(r.get("efficiency")), cell(r.get("dataplane_ns"), 2),
                      interval_cell(r.get("dataplane_efficiency")),
                      cell(r["spread"]), cell(r["slowest_lcore_mpps"]),
                      "%d/%d (%d)%s" % (r["ok"], r["runs"], r["shared_cpu_runs"],
                                        (": " + "; ".join(r["problems"])) if r["problems"]
                                        else "")])
    doc.table(header, table)
    doc.p("efficiency = Mpps(n) ÷ (n × Mpps at the smallest count); dataplane ns/pkt/lcore = "
          "1000 n ÷ Mpps(pipeline) − 1000 n ÷ Mpps(empty pipeline), paired by repetition; "
          "dataplane efficiency = that at the smallest count ÷ that at n. Both efficiencies "
          "are comparisons paired by repetition (each repetition's runs at n against the same "
          "repetition's at the smallest count): the median ratio with its 95 %% interval, "
          "resolved against the %.2f target when the interval excludes it with 6 pairs at "
          "least (docs/measuring.md, \"One comparison\"). lcore spread = (fastest − slowest "
          "lcore) ÷ median lcore of a run; cores = physical cores under the polling lcores "
          "(fewer than lcores: SMT siblings share one); shared CPU: runs in which listrx "
          "warned that a polling CPU was busy before the start. Other figures: medians "
          "[min–max] over the repetitions." % TARGET_EFFICIENCY)
    if cal:
        calibration_section(doc, data, rows, cal)
    else:
        doc.p("No calibration runs (scale.sh --calibrate 0, or older output): the CPUs' own "
              "speeds are not known, so a loss cannot be told apart from CPUs that run at "
              "different speeds.")
    png = os.path.join(out_dir, "scale.png")
    why = plot(rows, cal, png, "listrx over polling lcores (%s)" % (
        host.get("model", "").replace("model name", "").strip(" :\t") or "host"))
    if why:
        doc.p("plots unavailable: %s" % why)
    else:
        doc.img(png, "Mpps and efficiency over polling lcores, and each CPU alone")
    doc.p("Command: `%s`" % command)
    with open(os.path.join(out_dir, "scale.md"), "w") as f:
        f.write(doc.markdown(out_dir))
    with open(os.path.join(out_dir, "scale.json"), "w") as f:
        json.dump({"command": command, "plan": plan, "host": host,
                   "provenance": provenance([(host.get("listrx_command") or "unknown (scale.sh "
                                              "output without host/listrx_command)",
                                              host.get("listrx_version", ""))]),
                   "rows": rows,
                   "calibration_rows": cal, "verdicts": verdicts(rows, plan, cal),
                   "runs": data["runs"], "calibration": data["calibration"]}, f, indent=1)
    print(doc.text(), end="")
    return rows


def engine_label(engine):
    return "none (NIC)" if engine == EMPTY else engine


def calibration_section(doc, data, rows, cal):
    """The CPUs alone, and the curve against their own speeds."""
    plan = data["plan"]
    engines = [e for e in plan.get("engines", EMPTY).split(",") if any(
        r["mpps"].get(e) for r in cal)]
    doc.h(2, "Each CPU alone (calibration)")
    spreads = ["%s %s" % (engine_label(e), fmt(cpu_speed_spread(cal, e))) for e in engines
               if cpu_speed_spread(cal, e) is not None]
    doc.p("One polling lcore on each CPU the curve uses, alone, every pipeline, %s pass(es) "
          "(pass k after the curve's rep k)%s. A CPU's solo rate is what it does with no "
          "other polling lcore running: the CPUs' own speeds, which a guest's vCPUs (host "
          "cores, SMT neighbours, frequency) need not share; together ÷ alone: the CPU's "
          "lcore in the largest count's runs ÷ its rate alone, which CPU loses when every "
          "lcore runs (median [min–max] over the runs)." % (
              plan.get("calibrate", "?"),
              "; (fastest − slowest CPU) ÷ median CPU: " + ", ".join(spreads) if spreads else ""))
    first = next((r for r in rows if r["engine"] == EMPTY and r["lcores"] == 1), None)
    together = next((r["together_lcores"] for r in cal if r["together_lcores"]), None)
    header = ["CPU", "core", "node"] + ["%s Mpps" % engine_label(e) for e in engines] + \
        ["%s ÷ median CPU" % (engines[0] if engines[0] != EMPTY else "empty pipeline")
         if engines else "÷ median CPU"] + \
        ["%s together (%d lcores) ÷ alone" % (engine_label(e), together)
         for e in (engines if together else [])] + \
        ["steal %", "irq %", "MHz before/after"]
    table = []
    for r in cal:
        table.append([r["cpu"], r["core"] or "-", r["numa_node"] or "-"] +
                     [cell(r["mpps"].get(e)) for e in engines] +
                     [fmt(r["vs_median_cpu"].get(engines[0])) if engines else "-"] +
                     [cell(r["together_vs_alone"].get(e)) for e in
                      (engines if together else [])] +
                     [cell(r["steal_pct"], 2), cell(r["irq_pct"], 2),
                      "%s/%s" % (fmt(r["mhz_before"], 4), fmt(r["mhz_after"], 4))])
    doc.table(header, table)
    if first and first["mpps"]["n"] and plan.get("order"):
        c0 = int(plan["order"].split()[0])
        r0 = next((r for r in cal if r["cpu"] == c0), None)
        if r0 and r0["mpps"].get(EMPTY):
            doc.p("CPU %d is also the curve's one lcore: alone in calibration it gave %s "
                  "Mpps (empty pipeline), in the curve's 1-lcore runs %s: how far one CPU's "
                  "rate moves between runs of the same setting." % (
                      c0, cell(r0["mpps"][EMPTY]), cell(first["mpps"])))
    doc.h(2, "The curve against the CPUs' own speeds")
    header = ["engine", "lcores", "Σ CPUs alone Mpps", "efficiency vs own",
              "dataplane efficiency vs own", "lcore spread vs own", "slowest lcore ÷ own",
              "steal % (max CPU)", "irq % (max CPU)", "others busy %", "NUMA nodes"]
    table = []
    for r in rows:
        table.append([engine_label(r["engine"]), r["lcores"], fmt(r.get("own_mpps")),
                      cell(r.get("own_efficiency")), cell(r.get("own_dataplane_efficiency")),
                      cell(r.get("own_spread")), cell(r.get("slowest_lcore_vs_own")),
                      cell(r.get("steal_pct"), 2), cell(r.get("irq_pct"), 2),
                      cell(r.get("others_busy_pct"), 2), ",".join(r["numa_nodes"]) or "-"])
    doc.table(header, table)
    doc.p("efficiency vs own = Mpps(n) ÷ the sum of its n CPUs' solo rates (each alone, "
          "median over the passes); dataplane efficiency vs own = the dataplane ns/pkt/lcore "
          "those solo rates give (1000 n ÷ Σ engine − 1000 n ÷ Σ empty pipeline) ÷ the "
          "run's; lcore spread vs own = the spread of each lcore's rate ÷ its CPU's solo "
          "rate (what is left once the CPUs' speeds are taken out); steal, irq = the polling "
          "CPUs' share of time the hypervisor gave elsewhere and spent in interrupts "
          "(/proc/stat, the busiest CPU of a run); others busy = the mean load of the CPUs "
          "that neither poll nor run the main lcore.")


def unpack(source, out_dir):
    """--from: a directory scale.sh wrote, or a .tar.gz of one (extracted
    into OUT/raw) -> the directory."""
    if os.path.isdir(source):
        return source
    if not os.path.isfile(source):
        raise BenchError("--from %s: no such directory or archive" % source)
    dest = os.path.join(out_dir, "raw")
    try:
        with tarfile.open(source) as tar:
            for m in tar.getmembers():
                if m.name.startswith("/") or ".." in m.name.split("/") or not (m.isfile() or m.isdir()):
                    raise BenchError("--from %s: refusing member %r" % (source, m.name))
            tar.extractall(dest)
    except tarfile.TarError as e:
        raise BenchError("--from %s: not a directory or a tar archive (%s)" % (source, e))
    for root, _dirs, files in os.walk(dest):
        if "plan" in files and "runs.tsv" in files:
            return root
    raise BenchError("--from %s: no plan and runs.tsv inside (not scale.sh's output)" % source)


def cmd_scale(args, argv):
    command = "listrx-bench " + " ".join(argv)
    if args.source:
        raw = unpack(args.source, args.out)
    else:
        script = os.path.normpath(SCRIPT)
        if not os.path.isfile(script):
            raise BenchError("%s: not found (bench/scale.sh beside the package)" % script)
        raw = os.path.join(args.out, "raw")
        if args.lcores and args.main_cpu is None and \
                top_lcores(args.lcores) > min(len(allowed_cpus()) - 1, SYNTH_MAX_RXQ):
            raise BenchError("--lcores " + too_many_lcores(str(top_lcores(args.lcores)),
                                                           len(allowed_cpus())))
        binary = find_binary(args.listrx)
        notice_once(binary)
        check_profile(binary, args.profile, args.pipeline)
        cmd = ["bash", script, "--out", raw, "--listrx", binary,
               "--engines", ",".join(args.engines), "--pipeline", args.pipeline,
               "--profile", args.profile, "--burst", str(args.burst),
               "--duration", "%g" % args.duration, "--reps", str(args.reps),
               "--budget", str(args.budget)]
        if args.lcores:
            cmd += ["--lcores", args.lcores]
        if args.calibrate is not None:
            cmd += ["--calibrate", str(args.calibrate)]
        if args.main_cpu is not None:
            cmd += ["--main-cpu", str(args.main_cpu)]
        if not args.quiet:
            print(" ".join(cmd), file=sys.stderr)
        proc = subprocess.run(cmd, stderr=subprocess.PIPE if args.quiet else None,
                              text=True)
        if proc.returncode != 0:
            why = (proc.stderr or "").strip().splitlines()
            raise BenchError("bench/scale.sh failed (exit %d)%s" % (
                proc.returncode, ": " + why[-1] if why else ""))
    data = load(raw)
    if not data["runs"]:
        raise BenchError("%s: no runs" % raw)
    rows = report(data, args.out, command)
    bad = [r for r in rows if r["problems"]]
    return 1 if bad else 0


# net_synth's RX queues (devarg rxq): one per polling lcore
SYNTH_MAX_RXQ = 64


def lcore_counts(text):
    """1,2,4 or 1-15, each count within what scale.sh can run on this host:
    one CPU is the main lcore's, the others poll, a queue each (checked
    here, not after scale.sh has started: a range that runs backwards
    measured nothing, a count past the CPUs failed inside scale.sh)."""
    cpus = len(allowed_cpus())
    for part in grid.split_list(text):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or int(lo) < 1:
            raise ValueError("%r: want counts >= 1 such as 1,2,4 or 1-15" % part)
        if hi and int(hi) < int(lo):
            raise ValueError("%r: a range runs from the smaller count to the larger (%s-%s)"
                             % (part, hi, lo))
        # --main-cpu lets the main lcore share a polling CPU: one lcore more
        # (cmd_scale refuses it without)
        if int(hi or lo) > min(cpus, SYNTH_MAX_RXQ):
            raise ValueError(too_many_lcores(part, cpus))
    return text


def too_many_lcores(part, cpus):
    return ("%r: this process may use %d CPUs; one is the main lcore's, so at most %d polling "
            "lcores%s (%d with --main-cpu, the main lcore beside a polling one)" % (
                part, cpus, min(cpus - 1, SYNTH_MAX_RXQ),
                " (net_synth has 64 RX queues)" if cpus > SYNTH_MAX_RXQ else "",
                min(cpus, SYNTH_MAX_RXQ)))


def top_lcores(text):
    """The largest count of lcore_counts's text."""
    return max(int(part.partition("-")[2] or part.partition("-")[0])
               for part in grid.split_list(text))


def check_profile(binary, profile, pipeline):
    """The devargs and the pipeline as scale.sh gives them, tried once by the
    binary before anything runs: a typo (profile=udp-flws) is net_synth's own
    refusal here, not a curve labelled with it."""
    prefix = "lrxscalechk%d" % os.getpid()
    cmd = [binary, "--no-huge", "--no-pci", "--no-shconf", "-m", "512",
           "--log-level=lib.eal:error", "--file-prefix", prefix,
           "--vdev", "net_synth0,profile=%s,copy=0" % profile, "--",
           "--pipeline", pipeline, "--packets", "1", "--stats-period", "0"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BenchError("%s: cannot try the profile: %s" % (binary, e))
    finally:
        with signals_held():
            remove_runtime_dir(cmd)
    if proc.returncode != 0:
        why = [line for line in (proc.stdout + proc.stderr).splitlines()
               if line.startswith(("PMD:", "listrx:")) and "warning:" not in line]
        raise BenchError("--profile %s --pipeline %s: listrx refuses them (exit %d): %s" % (
            profile, pipeline, proc.returncode, " | ".join(why[-2:]) or "no message"))


def add_parser(sub):
    p = sub.add_parser("scale", help="throughput over 1..N polling lcores (both engines, the "
                       "NIC's own cost apart), here or from bench/scale.sh's output")
    p.add_argument("--out", required=True, help="report directory (scale.md, scale.json, "
                   "scale.png; raw/ holds the runs when they run here)")
    p.add_argument("--from", dest="source", default=None,
                   help="bench/scale.sh's output directory (or a .tar.gz of it) from another "
                   "machine: report only")
    p.add_argument("--listrx", help="listrx binary (default: $LISTRX_BIN, build/dataplane/listrx)")
    p.add_argument("--lcores", type=convert(lcore_counts), default=None,
                   help="polling lcore counts, e.g. 1,2,4,8 or 1-15 (default: 1 to the CPUs "
                   "this process may use minus one)")
    p.add_argument("--engines", type=convert(grid.parse_engines, "engine"),
                   default=["packet", "burst"], help="engines (default: packet,burst); the "
                   "empty pipeline runs besides")
    p.add_argument("--pipeline", default="xdp,build-meta,gro,l3-demux",
                   help="stage list (default: %(default)s)")
    p.add_argument("--profile", default="udp-flows,flows=4096",
                   help="net_synth profile and devargs (default: %(default)s)")
    p.add_argument("--burst", type=convert(positive_int), default=64,
                   help="packets per poll (default: %(default)s)")
    p.add_argument("--duration", type=convert(positive_float), default=2.0,
                   help="seconds per run (default: %(default)s)")
    p.add_argument("--reps", type=convert(positive_int), default=3,
                   help="alternating repetitions of the curve (default: %(default)s)")
    p.add_argument("--calibrate", type=convert(non_negative_int), default=None,
                   help="passes over the CPUs the curve uses, each alone (their own speeds; "
                   "0 = none; default: 1 when a count is above 1)")
    p.add_argument("--main-cpu", type=convert(non_negative_int), default=None,
                   help="the main lcore's CPU; a polling CPU too when it is one of them "
                   "(a 2-CPU host: 2 polling lcores, one sharing its CPU with the monitor) "
                   "(default: a CPU of its own, the last one)")
    p.add_argument("--budget", type=convert(positive_int), default=540,
                   help="seconds: no run starts that would end past it (default: %(default)s)")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-run lines")
    p.set_defaults(func=cmd_scale)
