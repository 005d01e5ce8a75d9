"""listrx-bench headline: what listification saves on the kernel RX path.

The kernel pipeline (xdp,build-meta,gro,l3-demux) on valid UDP, per packet
against listified engines, at a few burst sizes and code footprints, in both
build flavours (plain and retpoline, the latter as a Spectre-mitigated kernel
is built), timed with alternating repetitions plus cachegrind at one burst
size. It is the sweep (sweep.Sweep) run twice over a small grid; this module
only chooses the grid, finds the two binaries and writes headline.json, the
table and a report that puts both flavours side by side.
"""

import datetime
import json
import os
import shlex
import sys
import time

from . import backends, grid, report, results
from .listrx import BenchError, Listrx, caches_source, find_binary, machine_info
from .progress import Progress, _clock
from .stats import fmt, is_unavailable, median, number, summary, unavailable
from .sweep import LOW_DELIVERY, Sweep, low_delivery, meta_for

FLAVOURS = ("plain", "retpoline")
# build directory of each flavour, next to each other in the source tree
# (scripts/setup builds both)
FLAVOUR_DIRS = {"plain": "build", "retpoline": "build-retpo"}
VULNERABILITIES = "/sys/devices/system/cpu/vulnerabilities"

QUICK = {"engines": "packet,burst,graph", "bursts": "1,64,256", "footprints": "0,2xL1i",
         "reps": 3, "duration": 0.2}
FULL = {"engines": "packet,burst,hybrid:2,static,graph", "bursts": "1,8,32,64,128,256",
        "footprints": "0,L1i,2xL1i,4xL1i", "reps": 5, "duration": 0.25}


def kernel_mitigations(root=VULNERABILITIES):
    """The running kernel's Spectre v2 and SRSO lines (None when absent)."""
    out = {}
    for name in ("spectre_v2", "spec_rstack_overflow"):
        try:
            with open(os.path.join(root, name)) as f:
                out[name] = f.read().strip()
        except OSError:
            out[name] = None
    return out


def matching_flavour(mitigations):
    """The flavour built as the running kernel is: retpoline when the kernel
    calls indirectly through retpolines (spectre_v2 "Retpolines") or returns
    through a return thunk (SRSO "Safe RET"/"IBPB on VMEXIT"... any
    mitigation but "Not affected"/off), which listrx's -Dretpoline=true
    build mimics with -mindirect-branch=thunk -mfunction-return=thunk."""
    v2 = mitigations.get("spectre_v2") or ""
    srso = mitigations.get("spec_rstack_overflow") or ""
    if "Retpoline" in v2:
        return "retpoline"
    if "Safe RET" in srso or "untrained return thunk" in srso.lower():
        return "retpoline"
    return "plain"


def flavour_binaries(plain=None, retpoline=None):
    """{flavour: path or "unavailable: reason"}: --listrx (or the usual
    search) for plain, --listrx-retpo or build-retpo/ beside build/."""
    out = {"plain": find_binary(plain)}
    if retpoline:
        if not os.access(retpoline, os.X_OK):
            raise BenchError("--listrx-retpo %s: not an executable file" % retpoline)
        out["retpoline"] = os.path.abspath(retpoline)
        return out
    build_dir = os.path.dirname(os.path.dirname(out["plain"]))
    candidate = os.path.join(os.path.dirname(build_dir), FLAVOUR_DIRS["retpoline"],
                             "dataplane", "listrx")
    out["retpoline"] = (candidate if os.access(candidate, os.X_OK) else unavailable(
        "no %s (meson setup build-retpo -Dretpoline=true && ninja -C build-retpo; "
        "scripts/setup builds it) or give --listrx-retpo" % candidate))
    return out


def sweep_args(args, out_dir, counters):
    """The sweep's own arguments (all its defaults) for one flavour."""
    from .cli import build_parser
    argv = ["sweep", "--out", out_dir, "--engines", args.engines, "--bursts", args.bursts,
            "--footprints", args.footprints, "--pipelines", grid.KERNEL_PIPELINE,
            "--profiles", args.profile, "--reps", str(args.reps),
            "--duration", str(args.duration), "--order", "reps", "--zoom", "--zoom-reps", "1",
            "--counters", ",".join(counters), "--cg-bursts", str(args.cg_burst),
            "--timeout", str(args.timeout), "--eal", args.eal, "-q"]
    if args.lcores:
        argv += ["--lcores", args.lcores]
    sargs = build_parser().parse_args(argv)
    sargs.cg_caches = args.cg_caches
    return sargs


def perf_reason(lx, out_dir):
    """None when listrx counts cycles with --pmu here, else why not."""
    json_path = os.path.join(out_dir, "pmu-probe.json")
    cell = {"profile": "udp64", "engine": "packet", "burst": 64,
            "pipeline_arg": "none", "footprint_kb": 0}
    summary_, err, _ = lx.run(lx.command(cell, json_path, packets=1000, extra=["--pmu=cycles"]),
                              json_path, timeout=60)
    if err:
        return "perf: listrx --pmu failed (%s)" % err
    for ev in (summary_.get("pmu") or {}).get("events", []):
        if ev.get("name") == "cycles":
            if ev.get("per_packet") is not None:
                return None
            status = ev.get("status") or "not counted"
            return "perf: " + (status[len("unavailable: "):]
                               if status.startswith("unavailable: ") else status)
    return "perf: listrx wrote no pmu section"


def stage_ns(rows):
    """{stage: median ns/packet} over the rows that measured it."""
    out = {}
    for r in rows:
        for k in r:
            if k.startswith("stage.") and k.endswith(".ns_per_packet"):
                out.setdefault(k[len("stage."):-len(".ns_per_packet")], []).append(r[k])
    return {st: median(v) for st, v in out.items() if median(v) is not None}


def cg_value(rows, key, burst, cg_burst):
    for r in rows:
        v = r.get(key)
        if number(v) is not None:
            return number(v)
    if burst != cg_burst:
        return unavailable("cachegrind: measured at burst %d only" % cg_burst)
    for r in rows:
        if is_unavailable(r.get("cg_status")) or str(r.get("cg_status", "")).startswith("failed"):
            return r["cg_status"]
    return unavailable("cachegrind: not measured")


def headline_rows(flavour, rows, cg_burst, matches):
    """One row per (engine, burst, footprint) from a flavour's sweep rows:
    medians and the speedup over packet paired by repetition."""
    cells = {}
    for r in rows:
        if r.get("status") != "ok":
            continue
        cells.setdefault((r["engine"], int(r["burst"]), int(r["footprint_kb"])), []).append(r)
    out = []
    for (engine, burst, fp), rs in cells.items():
        base = {r["rep"]: number(r.get("time_ns_per_packet"))
                for r in cells.get(("packet", burst, fp), [])}
        ratios = [base[r["rep"]] / number(r.get("time_ns_per_packet")) for r in rs
                  if base.get(r["rep"]) and number(r.get("time_ns_per_packet"))]
        sp = summary(ratios)
        mp = summary(r.get("time_mpps") for r in rs)
        shares = [r.get("delivered_share") for r in rs if number(r.get("delivered_share"))
                  is not None]
        row = {"flavour": flavour, "matches_kernel": matches, "engine": engine,
               "burst": burst, "footprint_kb": fp, "reps": mp["n"],
               "mpps": mp["median"], "mpps_min": mp["min"], "mpps_max": mp["max"],
               "ns_per_packet": median(r.get("time_ns_per_packet") for r in rs),
               "speedup": sp["median"], "speedup_min": sp["min"], "speedup_max": sp["max"],
               "i1_misses_per_packet": cg_value(rs, "cg_i1_misses_per_packet", burst, cg_burst),
               "d1_misses_per_packet": cg_value(rs, "cg_d1_misses_per_packet", burst, cg_burst),
               "ll_misses_per_packet": cg_value(rs, "cg_ll_misses_per_packet", burst, cg_burst),
               "instructions_per_packet": cg_value(rs, "cg_ir_per_packet", burst, cg_burst),
               "indirect_branches_per_packet": cg_value(rs, "cg_indirect_branches_per_packet",
                                                        burst, cg_burst),
               "stage_ns_per_packet": stage_ns(rs),
               "rx_packets": sum(r.get("rx_packets") or 0 for r in rs),
               "delivered": sum(r.get("delivered") or 0 for r in rs),
               "dropped": sum(r.get("dropped") or 0 for r in rs),
               "delivered_share": min(shares) if shares else None,
               "drop_reasons": rs[0].get("drop_reasons"),
               "low_delivery": any(low_delivery(r) for r in rs)}
        for key in ("perf_cycles_per_packet", "perf_l1i_misses_per_packet",
                    "perf_l1d_misses_per_packet", "perf_llc_misses_per_packet"):
            if key in rs[0]:
                row[key[len("perf_"):]] = (median(r.get(key) for r in rs)
                                           if any(number(r.get(key)) is not None for r in rs)
                                           else rs[0][key])
        out.append(row)
    order = {e: i for i, e in enumerate(["packet", "burst", "hybrid:2", "static", "graph"])}
    out.sort(key=lambda h: (h["footprint_kb"], h["burst"], order.get(h["engine"], 9),
                            h["engine"]))
    return out


STAGE_SHORT = {"xdp": "xdp", "build-meta": "bm", "gro": "gro", "l3-demux": "l3"}


def _short(v, digits=2):
    return "n/a" if number(v) is None else fmt(v, digits)


def table_lines(hrows):
    """The ten-second table: one line per row."""
    head = ("%-7s %5s %5s %7s %7s %-19s %6s %6s %6s  %s" % (
        "engine", "burst", "fp KB", "Mpps", "ns/pkt", "speedup [min-max]", "I1/pkt",
        "D1/pkt", "Bi/pkt", "stage ns/pkt"))
    lines = [head]
    for h in hrows:
        sp = ("%.2fx [%.2f-%.2f]" % (h["speedup"], h["speedup_min"], h["speedup_max"])
              if h["engine"] != "packet" and h["speedup"] is not None else
              ("1 (base)" if h["engine"] == "packet" else "-"))
        stages = " ".join("%s %.0f" % (STAGE_SHORT.get(s, s), v)
                          for s, v in h["stage_ns_per_packet"].items())
        flag = "  LOW DELIVERY %.0f%%" % (100 * h["delivered_share"]) if h["low_delivery"] else ""
        lines.append("%-7s %5d %5d %7s %7s %-19s %6s %6s %6s  %s%s" % (
            h["engine"], h["burst"], h["footprint_kb"], _short(h["mpps"]),
            _short(h["ns_per_packet"], 1), sp, _short(h["i1_misses_per_packet"]),
            _short(h["d1_misses_per_packet"]), _short(h["indirect_branches_per_packet"]),
            stages, flag))
    return lines


def _i1(v):
    if number(v) is None:
        return "n/a"
    return "%.4f" % v if v < 1 else "%.1f" % v


def markdown_tables(doc):
    """headline.md: the table of each flavour in Markdown, to paste into
    docs/performance.md after a re-run."""
    out = []
    for flavour in FLAVOURS:
        rows = [h for h in doc["rows"] if h["flavour"] == flavour]
        if not rows:
            continue
        out += ["**%s**" % flavour_title(flavour, doc), "",
                "| engine | burst | footprint KB | Mpps [min–max] | speedup [min–max] | "
                "I1 miss/pkt | D1 miss/pkt | Bi/pkt | instr/pkt | delivered % |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        for h in rows:
            sp = "1" if h["engine"] == "packet" else "%s [%s–%s]" % (
                _short(h["speedup"]), _short(h["speedup_min"]), _short(h["speedup_max"]))
            out.append("| %s | %d | %d | %s [%s–%s] | %s | %s | %s | %s | %s | %s |" % (
                h["engine"], h["burst"], h["footprint_kb"], _short(h["mpps"]),
                _short(h["mpps_min"]), _short(h["mpps_max"]), sp, _i1(h["i1_misses_per_packet"]),
                _short(h["d1_misses_per_packet"], 1), _short(h["indirect_branches_per_packet"]),
                _short(h["instructions_per_packet"], 0),
                "%.1f" % (100 * h["delivered_share"]) if h["delivered_share"] is not None
                else "–"))
        out.append("")
    return "\n".join(out)


def flavour_title(flavour, doc):
    match = doc["kernel_flavour"] == flavour
    return "%s build%s" % (flavour, " (matches the running kernel)" if match else "")


def write_headline_report(out_dir, doc):
    """report.md/report.html of the headline, plots from each flavour's
    sweep report (listrx-bench report on DIR/FLAVOUR)."""
    d = report.Doc()
    d.h(1, "listrx headline: what listification saves on the kernel RX path")
    d.p("Command: `%s`. Pipeline %s, traffic %s, %d alternating repetitions of %.2f s per "
        "cell, medians with [min–max]; speedup = packet ns/pkt ÷ engine ns/pkt paired by "
        "repetition; cachegrind (callgrind, simulated I1/D1/LL %s, %s) at "
        "burst %d. Elapsed %s." % (
            doc["command"], doc["pipeline"], doc["profile"], doc["reps"], doc["duration_s"],
            doc["cachegrind_caches"], doc["cachegrind_caches_source"], doc["cg_burst"],
            _clock(doc["elapsed_s"])))
    mit = doc["kernel_mitigations"]
    d.p("Running kernel: spectre_v2 `%s`; spec_rstack_overflow `%s` → the **%s** build "
        "matches it." % (mit.get("spectre_v2"), mit.get("spec_rstack_overflow"),
                         doc["kernel_flavour"]))
    d.h(3, "Backends")
    d.table(["backend", "status"], [[k, v] for k, v in doc["backends"].items()])
    for flavour in FLAVOURS:
        hrows = [h for h in doc["rows"] if h["flavour"] == flavour]
        d.h(2, flavour_title(flavour, doc))
        if not hrows:
            d.p(str(doc["flavours"].get(flavour)))
            continue
        low = [h for h in hrows if h["low_delivery"]]
        if low:
            d.p("**%d cell(s) delivered less than %d %% of what they received**: their "
                "figures time drops." % (len(low), 100 * LOW_DELIVERY))
        d.table(["engine", "burst", "footprint KB", "Mpps", "ns/pkt", "speedup [min–max]",
                 "I1 miss/pkt", "D1 miss/pkt", "LL miss/pkt", "instr/pkt", "Bi/pkt",
                 "stage ns/pkt", "delivered %", "top drops"],
                [[h["engine"], h["burst"], h["footprint_kb"],
                  "%s [%s–%s]" % (fmt(h["mpps"]), fmt(h["mpps_min"]), fmt(h["mpps_max"])),
                  fmt(h["ns_per_packet"]),
                  "%s [%s–%s]" % (fmt(h["speedup"]), fmt(h["speedup_min"]),
                                  fmt(h["speedup_max"])) if h["engine"] != "packet" else "1",
                  _short(h["i1_misses_per_packet"]), _short(h["d1_misses_per_packet"]),
                  _short(h["ll_misses_per_packet"]), _short(h["instructions_per_packet"], 0),
                  _short(h["indirect_branches_per_packet"]),
                  ", ".join("%s %.1f" % (s, v) for s, v in h["stage_ns_per_packet"].items()),
                  "%.1f" % (100 * h["delivered_share"]) if h["delivered_share"] is not None
                  else "-", h["drop_reasons"]] for h in hrows])
        d.h(3, "I side saved, D side spent (burst %d, per packet, vs packet engine)"
            % doc["cg_burst"])
        side = []
        for h in hrows:
            if h["burst"] != doc["cg_burst"] or h["engine"] == "packet":
                continue
            base = next((b for b in hrows if b["engine"] == "packet" and b["burst"] == h["burst"]
                         and b["footprint_kb"] == h["footprint_kb"]), None)
            if not base:
                continue

            def delta(key):
                a, b = number(base[key]), number(h[key])
                return "-" if a is None or b is None else "%+.2f" % (b - a)
            side.append([h["engine"], h["footprint_kb"], delta("instructions_per_packet"),
                         delta("i1_misses_per_packet"), delta("indirect_branches_per_packet"),
                         delta("d1_misses_per_packet"), delta("ll_misses_per_packet"),
                         fmt(h["speedup"])])
        d.table(["engine", "footprint KB", "Δ instr", "Δ I1 miss", "Δ indirect br",
                 "Δ D1 miss", "Δ LL miss", "speedup"], side)
        sub = os.path.join(out_dir, flavour)
        for key, caption in (("time_mpps", "Mpps"), ("cg_i1_misses_per_packet", "I1 misses"),
                             ("cg_d1_misses_per_packet", "D1 misses")):
            png = os.path.join(sub, "plots", "g0_%s.png" % key)
            if os.path.exists(png):
                d.img(png, "%s, %s build: vs burst size, one line per engine, a panel per "
                      "footprint" % (caption, flavour))
        d.p("All figures of this flavour: %s/report.md (per-stage zoom-in, all cells)." % flavour)
    md = os.path.join(out_dir, "report.md")
    html_path = os.path.join(out_dir, "report.html")
    with open(md, "w") as f:
        f.write(d.markdown(out_dir))
    with open(html_path, "w") as f:
        f.write(d.html("listrx headline"))
    return md, html_path


def run_headline(args, argv, stream=None):
    stream = stream or sys.stdout
    t0 = time.monotonic()
    started = datetime.datetime.now().isoformat(timespec="seconds")
    out_dir = args.out
    os.makedirs(out_dir, exist_ok=True)
    binaries = flavour_binaries(args.listrx, args.listrx_retpo)
    mit = kernel_mitigations()
    kernel_flavour = matching_flavour(mit)
    status = {}
    counters = ["time", "cachegrind"]
    reason = backends.probe("cachegrind")
    if reason:
        counters.remove("cachegrind")
        status["cachegrind"] = unavailable(reason)
    for name in ("pcm", "rapl"):
        reason = backends.probe(name)
        if reason is None:
            counters.append(name)
        else:
            status[name] = unavailable(reason)
    plan = []
    for flavour in FLAVOURS:
        binary = binaries[flavour]
        if is_unavailable(binary):
            print("listrx-bench: %s build %s" % (flavour, binary), file=sys.stderr)
            continue
        sub = os.path.join(out_dir, flavour)
        os.makedirs(sub, exist_ok=True)
        lx = Listrx(binary, eal=args.eal, lcores=args.lcores, log_dir=None)
        if "perf" not in status:
            reason = perf_reason(lx, sub)
            status["perf"] = "ok" if reason is None else unavailable(reason)
        fl_counters = counters + (["perf"] if status["perf"] == "ok" else [])
        build = lx.version().get("build") or ""
        if "sanitize=" in build and "cachegrind" in fl_counters:
            # valgrind cannot run an ASan-instrumented binary
            fl_counters.remove("cachegrind")
            status["cachegrind"] = unavailable("cachegrind cannot run a sanitizer build (%s)"
                                               % build)
        sargs = sweep_args(args, sub, fl_counters)
        topo = lx.topology()
        cells = grid.expand([args.profile], [grid.KERNEL_PIPELINE],
                            grid.parse_footprints(args.footprints, topo.get("l1i_bytes")),
                            sargs.engines, sargs.bursts)
        plan.append((flavour, lx, sargs, Sweep(lx, sargs, sub), cells))
    if not plan:
        raise BenchError("no listrx build to measure")
    total = sum(sw.planned_runs(cells, sargs.reps) for _, _, sargs, sw, cells in plan)
    progress = Progress(total, enabled=not args.quiet)
    progress.show("%d runs, %s" % (total, ", ".join(p[0] for p in plan)))
    all_rows, sweep_rows = [], []
    for flavour, lx, sargs, sw, cells in plan:
        rows = sw.run(cells, sargs.reps, progress=progress, label_prefix=flavour + " ")
        sweep_rows += rows
        meta = meta_for(lx, sargs, argv, sw.status, started, sw.caches)
        results.write(sargs.out, meta, rows)
        report.write_report(sargs.out, title="listrx headline, %s build" % flavour,
                            zoom_burst=args.cg_burst)
        all_rows += headline_rows(flavour, rows, args.cg_burst, flavour == kernel_flavour)
    progress.close()
    for name, st in plan[0][3].status.items():
        status.setdefault(name, st)
    # a probe that passed says nothing about the figures: "ok" only for a
    # backend that gave a number in some run
    status = {name: backends.figure_status(name, st, sweep_rows) for name, st in status.items()}
    # a backend that ran but gave no figure in any row is not "ok": its
    # rows carry the reason
    cg = [r["i1_misses_per_packet"] for r in all_rows if r["burst"] == args.cg_burst]
    if status.get("cachegrind", "ok") == "ok" and cg and all(number(v) is None for v in cg):
        status["cachegrind"] = unavailable("no figure in any row (%s)" % cg[0])
    elapsed = time.monotonic() - t0
    doc = {"tool": "listrx-bench headline", "created": started,
           "command": "listrx-bench " + " ".join(shlex.quote(a) for a in argv),
           "elapsed_s": elapsed, "pipeline": grid.KERNEL_PIPELINE, "profile": args.profile,
           "reps": args.reps, "duration_s": args.duration, "cg_burst": args.cg_burst,
           "kernel_mitigations": mit, "kernel_flavour": kernel_flavour,
           "flavours": {f: binaries[f] for f in FLAVOURS}, "backends": status,
           "cachegrind_caches": plan[0][3].caches,
           "cachegrind_caches_source": caches_source(args.cg_caches),
           "machine": machine_info(plan[0][1]),
           "rows": all_rows}
    with open(os.path.join(out_dir, "headline.json"), "w") as f:
        json.dump(doc, f, indent=1, default=str)
        f.write("\n")
    md, html_path = write_headline_report(out_dir, doc)
    with open(os.path.join(out_dir, "headline.md"), "w") as f:
        f.write(markdown_tables(doc))
    print("listrx headline: pipeline %s, traffic %s, %d alternating reps x %.2f s, "
          "cachegrind at burst %d (backend: time%s)" % (
              grid.KERNEL_PIPELINE, args.profile, args.reps, args.duration, args.cg_burst,
              "+cachegrind" if "cachegrind" not in status else ""), file=stream)
    for flavour in FLAVOURS:
        hrows = [h for h in all_rows if h["flavour"] == flavour]
        print("\n== %s" % flavour_title(flavour, doc) if hrows else
              "\n== %s build: %s" % (flavour, binaries[flavour]), file=stream)
        for line in table_lines(hrows) if hrows else ():
            print(line, file=stream)
    print("\nkernel: spectre_v2 %s; spec_rstack_overflow %s" % (
        mit.get("spectre_v2"), mit.get("spec_rstack_overflow")), file=stream)
    for name, st in status.items():
        if st != "ok":
            print("%s %s" % (name, st), file=stream)
    low = [h for h in all_rows if h["low_delivery"]]
    if low:
        print("WARNING: %d cell(s) delivered less than half of what they received" % len(low),
              file=stream)
    print("wrote %s, %s, %s (elapsed %s)" % (os.path.join(out_dir, "headline.json"), md,
                                             html_path, _clock(elapsed)), file=stream)
    return 0 if all_rows else 1
