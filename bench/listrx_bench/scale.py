"""scale: listrx's receive rate over 1..N polling lcores (one RX queue per
lcore, net_synth RSS), both engines and the empty pipeline, with the
emulated NIC's own cost taken apart from the dataplane's.

The runs are bench/scale.sh's (bash and coreutils only, so that a
many-core machine without DPDK or Python runs it with the binaries of
portable-bundle); this module runs it here, or reads what it wrote
elsewhere (--from DIR or DIR.tar.gz), and makes the report:

- Mpps over all lcores, Mpps per lcore, efficiency = Mpps(n) / (n x
  Mpps(1)) per repetition against the median at the smallest count;
- the per-lcore spread of a run: (slowest - fastest lcore) / median lcore;
- the dataplane's share: per lcore, ns per packet of the pipeline run
  minus that of the empty pipeline run of the same repetition on the same
  queues (the NIC's generation, rx_burst and the free), and its efficiency
  ns(1) / ns(n), so that the figure says how the stages and engines
  scale, not how the generator does;
- which counts put two lcores on one physical core (SMT), from the
  machine's topology.
"""

import json
import os
import subprocess
import sys
import tarfile

from . import grid
from .listrx import BenchError, find_binary
from .options import convert, positive_float, positive_int
from .report import Doc, matplotlib_pyplot, zero_based
from .stats import fmt, median, summary

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "scale.sh")
EMPTY = "none"           # the empty pipeline's engine name in runs.tsv
TARGET_EFFICIENCY = 0.9  # the dataplane's share at N lcores (docs/measuring.md)


def read_plan(text):
    """scale.sh's `plan` (one "key value" per line) -> dict of strings."""
    plan = {}
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key:
            plan[key] = value.strip()
    return plan


def read_topology(text):
    """host/topology ("cpu package core siblings" per line) -> {cpu:
    (package, core)}; unknown fields as '-'."""
    topo = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 3 and f[0].isdigit():
            topo[int(f[0])] = (f[1], f[2])
    return topo


def cores_used(order, topo, n):
    """How many physical cores the first n CPUs of scale.sh's order use
    (each worker lcore on its own CPU)."""
    cpus = order[:n]
    if not all(c in topo and "-" not in topo[c] for c in cpus):
        return None
    return len({topo[c] for c in cpus})


def run_figures(summary_):
    """One run's JSON summary -> (total Mpps, [Mpps per lcore], accounting
    problem or None)."""
    dur = summary_.get("duration_s") or 0
    if not dur or not isinstance(summary_.get("mpps"), (int, float)):
        return None, [], "no duration or rate in the summary"
    per = [l.get("packets", 0) / dur / 1e6 for l in summary_.get("lcores", [])]
    rx = summary_.get("rx_packets", 0)
    out = summary_.get("delivered", 0) + summary_.get("tx_packets", 0) + summary_.get("dropped", 0)
    problem = None
    if out + summary_.get("held", 0) != rx:
        problem = "rx %d != delivered + tx + dropped + held %d" % (rx, out + summary_.get("held", 0))
    elif summary_.get("mbufs_in_use_at_exit"):
        problem = "%d mbufs in use at exit" % summary_["mbufs_in_use_at_exit"]
    return float(summary_["mpps"]), per, problem


def load(raw):
    """scale.sh's output directory -> {plan, host, runs: [{rep, lcores,
    engine, status, load1, mpps, per_lcore, problem, log}]}."""
    def text(*parts):
        try:
            with open(os.path.join(raw, *parts), errors="replace") as f:
                return f.read()
        except OSError:
            return ""
    plan = read_plan(text("plan"))
    if not plan:
        raise BenchError("%s: no plan (not a directory scale.sh wrote)" % raw)
    runs = []
    for line in text("runs.tsv").splitlines()[1:]:
        f = line.split("\t")
        if len(f) < 7:
            continue
        run = {"rep": int(f[0]), "lcores": int(f[1]), "engine": f[2], "status": int(f[3]),
               "load1": float(f[4]), "seconds": float(f[5]), "mpps": None, "per_lcore": [],
               "problem": None}
        if run["status"] != 0:
            run["problem"] = "exit %d" % run["status"]
        else:
            try:
                with open(os.path.join(raw, f[6])) as jf:
                    s = json.load(jf)
                run["mpps"], run["per_lcore"], run["problem"] = run_figures(s)
            except (OSError, ValueError) as e:
                run["problem"] = "no summary: %s" % e
        if run["problem"]:
            run["mpps"] = None
            log = text(f[6][:-len(".json")] + ".log").strip().splitlines()
            run["log"] = " | ".join(log[-2:])
        runs.append(run)
    host = {k: text("host", k).strip() for k in
            ("model", "nproc", "uname", "lscpu", "topology", "vulnerabilities", "listrx_version",
             "loadavg_before", "loadavg_after")}
    return {"plan": plan, "host": host, "runs": runs}


def analyse(data):
    """Rows per (engine, lcores) with the figures the report shows."""
    plan, runs = data["plan"], data["runs"]
    order = [int(c) for c in plan.get("order", "").split()]
    topo = read_topology(data["host"].get("topology", ""))
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
        if n0 is None:
            continue
        base[engine] = (n0, median(r["mpps"] for r in by[(engine, n0)].values()) / n0)
    dp_base = {}
    for engine in engines:
        for n in counts:
            cell = by.get((engine, n), {})
            ok = {rep: r for rep, r in cell.items() if r["mpps"]}
            row = {"engine": engine, "lcores": n, "runs": len(cell), "ok": len(ok),
                   "cores": cores_used(order, topo, n),
                   "problems": sorted({r["problem"] + (" (%s)" % r.get("log") if r.get("log") else "")
                                       for r in cell.values() if r["problem"]})}
            row["mpps"] = summary(r["mpps"] for r in ok.values())
            row["mpps_per_lcore"] = summary(r["mpps"] / n for r in ok.values())
            if engine in base:
                n0, per0 = base[engine]
                row["efficiency"] = summary(r["mpps"] / n / per0 for r in ok.values())
                row["efficiency_base_lcores"] = n0
            row["spread"] = summary((max(r["per_lcore"]) - min(r["per_lcore"])) /
                                    median(r["per_lcore"])
                                    for r in ok.values() if len(r["per_lcore"]) > 1
                                    and median(r["per_lcore"]))
            row["slowest_lcore_mpps"] = summary(min(r["per_lcore"]) for r in ok.values()
                                                if r["per_lcore"])
            # the dataplane's ns per packet per lcore: this run's minus the
            # empty pipeline's of the same rep on the same queues
            if engine != EMPTY:
                empty = by.get((EMPTY, n), {})
                dp = [1e3 * n / r["mpps"] - 1e3 * n / empty[rep]["mpps"]
                      for rep, r in ok.items() if rep in empty and empty[rep]["mpps"]]
                row["dataplane_ns"] = summary(dp)
                if engine not in dp_base and row["dataplane_ns"]["n"]:
                    dp_base[engine] = row["dataplane_ns"]["median"]
                if engine in dp_base:
                    row["dataplane_efficiency"] = summary(dp_base[engine] / v for v in dp if v > 0)
            rows.append(row)
    return rows


def cell(st, digits=3):
    if not st or not st.get("n"):
        return "-"
    if st["n"] == 1 or st["min"] == st["max"]:
        return fmt(st["median"], digits)
    return "%s [%s–%s]" % (fmt(st["median"], digits), fmt(st["min"], digits),
                           fmt(st["max"], digits))


def verdicts(rows, plan):
    """One sentence per engine at its largest lcore count."""
    out = []
    top = {}
    for r in rows:
        if r["engine"] != EMPTY and r["ok"]:
            top[r["engine"]] = r
    for engine, r in top.items():
        eff = (r.get("efficiency") or {}).get("median")
        dpe = (r.get("dataplane_efficiency") or {}).get("median")
        head = "%s, %d lcore(s): %s Mpps (%s per lcore)" % (
            engine, r["lcores"], fmt(r["mpps"]["median"]), fmt(r["mpps_per_lcore"]["median"]))
        if r["lcores"] == r.get("efficiency_base_lcores", r["lcores"]):
            out.append(head + "; one lcore count only: no scaling measured")
        elif dpe is None:
            out.append(head + ", efficiency %s (no empty-pipeline runs to take the NIC's "
                       "share apart)" % fmt(eff))
        else:
            out.append(head + ", efficiency %s; the dataplane's share %s: %s the %.2f "
                       "target%s" % (fmt(eff), fmt(dpe),
                                     "meets" if dpe >= TARGET_EFFICIENCY else "below",
                                     TARGET_EFFICIENCY,
                                     "" if r["cores"] in (None, r["lcores"]) else
                                     " (%d lcores on %d physical cores: SMT siblings share "
                                     "a core)" % (r["lcores"], r["cores"])))
    return out


def limits_note(plan):
    """Why the curve stops where it does."""
    max_l = int(plan.get("max_lcores", "0") or 0)
    order = plan.get("order", "").split()
    return ("This host lets the run use %d CPU(s) (%s): one is the main lcore's (the monitor), "
            "so at most %d polling lcore(s)%s" % (
                len(order), " ".join(order), max_l,
                "; a scaling curve needs a host with more cores (bench/scale.sh there, then "
                "`listrx-bench scale --from DIR`)" if max_l < 2 else ""))


def plot(rows, path, title):
    plt, why = matplotlib_pyplot()
    if not plt:
        return why
    engines = []
    for r in rows:
        if r["engine"] not in engines:
            engines.append(r["engine"])
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
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
        eff = [r for r in pts if (r.get("efficiency") or {}).get("n")]
        axes[1].plot([r["lcores"] for r in eff], [r["efficiency"]["median"] for r in eff],
                     marker="o", ms=3, color=colors[i % len(colors)], label=label + ", total")
        values_b += [r["efficiency"]["median"] for r in eff]
        dp = [r for r in pts if (r.get("dataplane_efficiency") or {}).get("n")]
        if dp:
            axes[1].plot([r["lcores"] for r in dp],
                         [r["dataplane_efficiency"]["median"] for r in dp], marker="s", ms=3,
                         ls="--", color=colors[i % len(colors)], label=e + ", dataplane share")
            values_b += [r["dataplane_efficiency"]["median"] for r in dp]
    axes[1].axhline(TARGET_EFFICIENCY, color="grey", lw=0.8, ls=":")
    axes[0].set_ylabel("Mpps (all lcores), pipeline")
    axes[1].set_ylabel("efficiency: Mpps(n) / (n x Mpps(1))")
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


def report(data, out_dir, command):
    rows = analyse(data)
    plan, host = data["plan"], data["host"]
    doc = Doc()
    doc.h(1, "listrx over polling lcores")
    doc.p("Host: %s, %s CPU(s); listrx: %s." % (
        host.get("model", "").replace("model name", "").strip(" :\t") or "unknown CPU",
        host.get("nproc") or "?", host.get("listrx_version", "").splitlines()[0]
        if host.get("listrx_version") else "unknown"))
    doc.p("Pipeline `%s` on net_synth `%s,copy=0`, one RX queue per polling lcore (RSS), "
          "burst %s, stats level off, %s s per run, %s alternating repetitions planned (%s); "
          "the empty pipeline on the same queues is the NIC's own cost (generation, "
          "rx_burst, the free). Load average before %s, after %s." % (
              plan.get("pipeline"), plan.get("profile"), plan.get("burst"),
              plan.get("duration"), plan.get("reps"), plan.get("stopped", "?"),
              loadavg(host.get("loadavg_before")), loadavg(host.get("loadavg_after"))))
    if len({r["lcores"] for r in rows}) < 2:
        doc.p(limits_note(plan) + ".")
    for v in verdicts(rows, plan):
        doc.p(v)
    header = ["engine", "lcores", "cores", "Mpps", "Mpps/lcore", "efficiency",
              "dataplane ns/pkt/lcore", "dataplane efficiency", "lcore spread",
              "slowest lcore Mpps", "runs ok"]
    table = []
    for r in rows:
        table.append([r["engine"] if r["engine"] != EMPTY else "none (NIC)", r["lcores"],
                      r["cores"] if r["cores"] is not None else "-",
                      cell(r["mpps"]), cell(r["mpps_per_lcore"]), cell(r.get("efficiency")),
                      cell(r.get("dataplane_ns"), 2), cell(r.get("dataplane_efficiency")),
                      cell(r["spread"]), cell(r["slowest_lcore_mpps"]),
                      "%d/%d%s" % (r["ok"], r["runs"],
                                   (": " + "; ".join(r["problems"])) if r["problems"] else "")])
    doc.table(header, table)
    doc.p("efficiency = Mpps(n) ÷ (n × Mpps at the smallest count), per repetition against "
          "the median; dataplane ns/pkt/lcore = 1000 n ÷ Mpps(pipeline) − 1000 n ÷ "
          "Mpps(empty pipeline), paired by repetition; dataplane efficiency = its median at "
          "the smallest count ÷ it; lcore spread = (fastest − slowest lcore) ÷ median lcore "
          "of a run; cores = physical cores under the polling lcores (fewer than lcores: SMT "
          "siblings share one). Medians [min–max] over the repetitions.")
    png = os.path.join(out_dir, "scale.png")
    why = plot(rows, png, "listrx over polling lcores (%s)" % (
        host.get("model", "").replace("model name", "").strip(" :\t") or "host"))
    if why:
        doc.p("plots unavailable: %s" % why)
    else:
        doc.img(png, "Mpps and efficiency over polling lcores")
    doc.p("Command: `%s`" % command)
    with open(os.path.join(out_dir, "scale.md"), "w") as f:
        f.write(doc.markdown(out_dir))
    with open(os.path.join(out_dir, "scale.json"), "w") as f:
        json.dump({"command": command, "plan": plan, "host": host, "rows": rows,
                   "verdicts": verdicts(rows, plan), "runs": data["runs"]}, f, indent=1)
    print(doc.text(), end="")
    return rows


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
        cmd = ["bash", script, "--out", raw, "--listrx", find_binary(args.listrx),
               "--engines", ",".join(args.engines), "--pipeline", args.pipeline,
               "--profile", args.profile, "--burst", str(args.burst),
               "--duration", "%g" % args.duration, "--reps", str(args.reps),
               "--budget", str(args.budget)]
        if args.lcores:
            cmd += ["--lcores", args.lcores]
        if not args.quiet:
            print(" ".join(cmd), file=sys.stderr)
        proc = subprocess.run(cmd, stderr=subprocess.DEVNULL if args.quiet else None)
        if proc.returncode != 0:
            raise BenchError("bench/scale.sh failed (exit %d)" % proc.returncode)
    data = load(raw)
    if not data["runs"]:
        raise BenchError("%s: no runs" % raw)
    rows = report(data, args.out, command)
    bad = [r for r in rows if r["problems"]]
    return 1 if bad else 0


def lcore_counts(text):
    """1,2,4 or 1-15: checked here for the syntax; scale.sh checks the host."""
    for part in grid.split_list(text):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or int(lo) < 1:
            raise ValueError("%r: want counts >= 1 such as 1,2,4 or 1-15" % part)
    return text


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
    p.add_argument("--budget", type=convert(positive_int), default=540,
                   help="seconds: no run starts that would end past it (default: %(default)s)")
    p.add_argument("-q", "--quiet", action="store_true", help="no per-run lines")
    p.set_defaults(func=cmd_scale)
