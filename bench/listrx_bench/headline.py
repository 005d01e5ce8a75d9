"""listrx-bench headline: what listification saves on the kernel RX path.

The kernel pipeline (xdp,build-meta,gro,l3-demux) on valid UDP, per packet
against listified engines, at a few burst sizes and code footprints, in both
build flavours (plain and retpoline, the latter as a Spectre-mitigated kernel
is built), timed with alternating repetitions plus cachegrind at one burst
size. It is the sweep (sweep.Sweep) run once per flavour over a small grid,
with repetitions added where the verdict is not yet narrow enough; this
module chooses the grid, finds the two binaries, pairs the repetitions
(stats.speedup) and writes the verdict, headline.json, one table per flavour
(one renderer: stdout, headline.md, report.md/.html) and the report.
"""

import datetime
import json
import os
import shlex
import sys
import time

from . import backends, grid, interleave, report, results
from .listrx import (BenchError, Listrx, caches_source, find_binary, machine_info,
                     provenance)
from .options import (add_cg_caches, add_common, add_out, convert, positive_float,
                      positive_int)
from .progress import Progress, _clock
from .stats import (MIN_PAIRS, at_median, caveat, fmt, is_unavailable, median, number,
                    speedup, stalled, summary, unavailable)
from .sweep import (LOW_DELIVERY, RUN_KIND, Sweep, default_options, low_delivery, meta_for)

FLAVOURS = ("plain", "retpoline")
# build directory of each flavour, next to each other in the source tree
# (scripts/setup builds both)
FLAVOUR_DIRS = {"plain": "build", "retpoline": "build-retpo"}
VULNERABILITIES = "/sys/devices/system/cpu/vulnerabilities"

# The grid, and the repetitions: REPS alternating repetitions of DURATION
# seconds first, then one more round at a time of the cells whose verdict
# interval is wider than SPREAD % (the 95 % interval of the median pair
# ratio), up to MAX_REPS repetitions and while the whole command stays
# within MAX_TIME seconds. The figures come from an A/A measurement
# (packet against packet, --aa): docs/measuring.md, "Noise and repetitions".
QUICK = {"engines": "packet,burst,graph", "bursts": "1,64,256", "footprints": "0,2xL1i",
         "reps": MIN_PAIRS, "duration": 0.2}
FULL = {"engines": "packet,burst,hybrid:2,static,graph", "bursts": "1,8,32,64,128,256",
        "footprints": "0,L1i,2xL1i,4xL1i", "reps": MIN_PAIRS, "duration": 0.25}
ADAPTIVE = {"max_reps": 15, "spread": 10.0, "max_time": 420.0}
# --method interleave: per burst and footprint, REPS interleaved runs of
# DURATION seconds (every engine and the A/A control in each), a pair per
# run (the median of its window pairs), the cells' runs in rounds;
# the sweep then runs each cell once (its Mpps column is not used, its
# zoom-in, delivery check and cachegrind are)
PAIRED = {"duration": interleave.DURATION, "reps": interleave.RUNS}
# the columns of the one headline table (stdout, headline.md, report)
INDIRECT = "indirect/pkt (Bi + thunks)"
HEADER = ["engine", "burst", "footprint KB", "Mpps", "ns/pkt", "packet ns/pkt, same pairs",
          "saved ns/pkt", "speedup [95 % interval]", "verdict", "reps used/run (pairs)",
          "I1 miss/pkt", "D1 miss/pkt", "LL miss/pkt", "instr/pkt", INDIRECT, "stage ns/pkt",
          "delivered %"]
STAGE_SHORT = {"xdp": "xdp", "build-meta": "bm", "gro": "gro", "l3-demux": "l3"}


def add_parser(sub):
    p = sub.add_parser("headline", help="the kernel pipeline per packet vs listified, both "
                       "build flavours (plain, retpoline): verdict, table, headline.json, "
                       "report")
    add_common(p)
    p.add_argument("--listrx-retpo", help="the retpoline build's listrx (default: "
                   "build-retpo/dataplane/listrx beside the plain one)")
    p.add_argument("--full", action="store_true",
                   help="the larger grid: engines %(engines)s, bursts %(bursts)s, footprints "
                   "%(footprints)s" % {k: v.replace("%", "%%") for k, v in FULL.items()
                                       if isinstance(v, str)})
    p.add_argument("--engines", type=convert(grid.parse_engines, "engine"), default=None,
                   help="engines, packet first (default %s); ENGINE-aa adds that engine "
                   "again as a cell of its own" % QUICK["engines"])
    p.add_argument("--aa", action="store_true",
                   help="add packet-aa: the packet engine again, paired with packet like "
                   "every engine (an A/A comparison: what noise alone gives; --method "
                   "interleave always has it)")
    p.add_argument("--method", choices=("interleave", "processes"), default="interleave",
                   help="how the speedups are timed: interleave (the engines polled in turn "
                   "in one process, adjacent windows paired, disturbed windows left out, "
                   "an A/A control in every run) or processes (a process per engine, "
                   "alternating repetitions paired, as before) (default: %(default)s)")
    p.add_argument("--paired-duration", type=convert(positive_float),
                   default=PAIRED["duration"],
                   help="interleave: seconds per interleaved run (default: %(default)s)")
    p.add_argument("--paired-reps", type=convert(positive_int), default=PAIRED["reps"],
                   help="interleave: interleaved runs per burst and footprint, in rounds "
                   "over the cells, a pair per run; 6 give a 95 %% interval, 9 one that a single "
                   "deviant run does not set "
                   "(default: %(default)s)")
    p.add_argument("--bursts", type=convert(grid.parse_bursts, "burst size"), default=None,
                   help="burst sizes (default %s)" % QUICK["bursts"])
    p.add_argument("--footprints", default=None, type=convert(grid.split_list, "footprint"),
                   help="footprints, KB or multiples of the host L1i (default %s)"
                   % QUICK["footprints"])
    p.add_argument("--reps", type=convert(positive_int), default=None,
                   help="alternating repetitions before any is added (default %d)"
                   % QUICK["reps"])
    p.add_argument("--max-reps", type=convert(positive_int), default=ADAPTIVE["max_reps"],
                   help="add repetitions of the verdict's cells up to this many; --reps or "
                   "fewer: none added (default: %(default)s)")
    p.add_argument("--spread", type=convert(positive_float), default=ADAPTIVE["spread"],
                   help="add repetitions while a verdict cell's 95 %% interval of the median "
                   "speedup is wider than this %% of it (default: %(default)s)")
    p.add_argument("--max-time", type=convert(positive_float), default=ADAPTIVE["max_time"],
                   help="add no repetition that would take the whole command past this many "
                   "seconds (default: %(default)s)")
    p.add_argument("--duration", type=convert(positive_float), default=None,
                   help="seconds per timed run (default %s)" % QUICK["duration"])
    p.add_argument("--profile", default="udp64",
                   help="traffic (see sweep --profiles) (default: %(default)s)")
    p.add_argument("--cg-burst", type=convert(grid.parse_burst), default=64,
                   help="the verdict's burst size, where cachegrind runs too "
                   "(default: %(default)s)")
    add_cg_caches(p)
    add_out(p)
    p.set_defaults(func=cmd_headline)


def cmd_headline(args, argv):
    grid_ = FULL if args.full else QUICK
    reps_given = args.reps is not None
    for key in ("engines", "bursts", "footprints", "reps", "duration"):
        if getattr(args, key) is None:
            value = grid_[key]
            setattr(args, key, {"engines": grid.parse_engines, "bursts": grid.parse_bursts,
                                "footprints": grid.split_list}.get(key, lambda v: v)(value))
    if args.method == "interleave":
        # one timed run per cell: the speedups come from the interleaved
        # runs, with their A/A control
        args.reps = args.reps if reps_given else 1
        args.max_reps = args.reps
        args.engines = [e for e in args.engines if not e.endswith(grid.AA_SUFFIX)]
    if args.aa and args.method == "processes" and "packet-aa" not in args.engines:
        args.engines.insert(args.engines.index("packet") + 1 if "packet" in args.engines else 0,
                            "packet-aa")
    if args.cg_burst not in args.bursts:
        raise BenchError("--cg-burst %d: not one of --bursts %s"
                         % (args.cg_burst, ",".join(str(b) for b in args.bursts)))
    if "packet" not in args.engines:
        raise BenchError("--engines %s: the speedups need the packet engine"
                         % ",".join(args.engines))
    return run_headline(args, argv)


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


def sweep_options(args, out_dir, counters):
    """The sweep's options (its defaults) for one flavour of the headline."""
    return default_options(
        out=out_dir, engines=list(args.engines), bursts=list(args.bursts),
        footprints=",".join(args.footprints), pipelines=[grid.KERNEL_PIPELINE],
        profiles=[args.profile], reps=args.reps, duration=args.duration, order="reps",
        zoom=True, zoom_reps=1, counters=counters, cg_bursts=[args.cg_burst],
        timeout=args.timeout, eal=args.eal, lcores=args.lcores, quiet=True,
        cg_caches=args.cg_caches)


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
    for r in rows:
        if is_unavailable(r.get(key)):
            return r[key]
    return unavailable("cachegrind: not measured")


CG_FIGURES = (("i1_misses_per_packet", "cg_i1_misses_per_packet"),
              ("d1_misses_per_packet", "cg_d1_misses_per_packet"),
              ("ll_misses_per_packet", "cg_ll_misses_per_packet"),
              ("instructions_per_packet", "cg_ir_per_packet"),
              ("indirect_branches_per_packet", "cg_indirect_branches_per_packet"),
              ("thunk_calls_per_packet", "cg_thunk_calls_per_packet"),
              ("indirect_per_packet", "cg_indirect_per_packet"))


def by_rep(runs, key):
    return {r["rep"]: number(r.get(key)) for r in runs}


def packet_figures(rs):
    """The packet row's own figures: its runs that did not stall."""
    stalls = stalled(by_rep(rs, "time_ns_per_packet"))
    used = [r for r in rs if r["rep"] not in stalls]
    mp = summary(r.get("time_mpps") for r in used)
    return {"reps": len(used), "stalled_reps": sorted(stalls), "mpps": mp["median"],
            "mpps_min": mp["min"], "mpps_max": mp["max"],
            "ns_per_packet": median(r.get("time_ns_per_packet") for r in used)}


def comparison_figures(base_rs, rs, engine):
    """An engine's row against the packet cell's runs (base_rs): one
    stats.speedup, and every figure of the row from its pairs: the
    engine's Mpps and ns/packet and the packet side's are the median
    pair's, so packet ns ÷ engine ns = the speedup and their difference =
    the saving."""
    sp = speedup(by_rep(base_rs, "time_ns_per_packet"), by_rep(rs, "time_ns_per_packet"),
                 ("packet", engine), report.shared_reps(base_rs + rs))
    used = [r for r in rs if r["rep"] in sp["keys"]]
    mp = summary(r.get("time_mpps") for r in used)
    stalls = stalled(by_rep(rs, "time_ns_per_packet"))
    return {"reps": sp["pairs"], "stalled_reps": sorted(stalls),
            "mpps": at_median(sp, by_rep(rs, "time_mpps")), "mpps_min": mp["min"],
            "mpps_max": mp["max"], "ns_per_packet": sp["other"],
            "base_mpps": at_median(sp, by_rep(base_rs, "time_mpps")),
            "base_ns_per_packet": sp["base"], "speedup": sp["ratio"],
            "speedup_min": sp["min"], "speedup_max": sp["max"], "speedup_ci": sp["ci"],
            "speedup_level": sp["level"], "ci_width_pct": sp["width_pct"],
            "saved_ns_per_packet": sp["saving"], "pairs": sp["pairs"] + len(sp["left_out"]),
            "clean_pairs": sp["pairs"], "shared_cpu_pairs": sp["shared"],
            "left_out": [{"rep": x["key"], "why": x["why"]} for x in sp["left_out"]],
            "resolved": sp["resolved"], "resolution": sp["resolution"], "comparison": sp}


NO_COMPARISON = {"base_mpps": None, "base_ns_per_packet": None, "speedup": None,
                 "speedup_min": None, "speedup_max": None, "speedup_ci": None,
                 "speedup_level": None, "ci_width_pct": None, "saved_ns_per_packet": None,
                 "pairs": None, "clean_pairs": None, "shared_cpu_pairs": None, "left_out": [],
                 "resolved": None, "resolution": None, "comparison": None, "caveat": None,
                 "windows_text": None, "aa_caveat": None}


def paired_figures(c, side="other"):
    """A row's figures from an interleaved comparison (interleave.comparison,
    a pair per run): the median run's sides, as comparison_figures takes
    them from paired repetitions. side="base": the packet row's own, from
    the A/A control's packet side."""
    ns = c[side]
    figs = {"reps": c["pairs"], "stalled_reps": [], "mpps": 1e3 / ns if ns else None,
            "mpps_min": None, "mpps_max": None, "ns_per_packet": ns}
    if side == "base":
        return figs
    if c["ratio"] is None:  # no clean pair: said, not computed
        figs.update(pairs=len(c["left_out"]), clean_pairs=0, resolved=False,
                    resolution=c["resolution"], windows_text=c["windows_text"])
        return figs
    figs.update({
        "base_mpps": 1e3 / c["base"], "base_ns_per_packet": c["base"], "speedup": c["ratio"],
        "speedup_min": c["min"], "speedup_max": c["max"], "speedup_ci": c["ci"],
        "speedup_level": c["level"], "ci_width_pct": c["width_pct"],
        "saved_ns_per_packet": c["saving"], "pairs": c["pairs"] + len(c["left_out"]),
        "clean_pairs": c["pairs"], "shared_cpu_pairs": c["shared"], "left_out": [],
        "resolved": c["resolved"], "resolution": c["resolution"],
        "caveat": caveat(c), "windows_text": c["windows_text"],
        "aa_caveat": c.get("aa_caveat"), "comparison": c})
    return figs


def paired_counts(m, engine):
    """A row's runs, shared-CPU runs and delivery from its interleaved
    runs (the sweep's runs time nothing then)."""
    tot = {k: sum((r.get(engine) or {}).get(k, 0) for r in m["rx"])
           for k in ("rx_packets", "delivered", "dropped")}
    share = tot["delivered"] / tot["rx_packets"] if tot["rx_packets"] else None
    return dict(tot, runs=len(m["runs"]), shared_cpu_runs=len(m["shared"]),
                delivered_share=share,
                low_delivery=share is not None and share < LOW_DELIVERY)


def headline_rows(flavour, rows, cg_burst, matches, paired=None):
    """One row per (engine, burst, footprint) from a flavour's sweep rows.
    An engine's row is one comparison with the packet cell of the same
    burst and footprint (comparison_figures: every figure from the same
    pairs); the packet row's own figures are over its runs that did not
    stall. paired: {(burst, footprint KB): interleave.measure_cells's}:
    the comparisons (and the A/A control's row) come from the interleaved
    runs instead, the rest of each row from the sweep."""
    cells = {}
    for r in rows:
        if r.get("status") == "ok":
            cells.setdefault((r["engine"], int(r["burst"]), int(r["footprint_kb"])), []).append(r)
    for (burst, fp), m in (paired or {}).items():
        aa = "packet" + grid.AA_SUFFIX
        if aa in m["comparisons"] and ("packet", burst, fp) in cells:
            cells.setdefault((aa, burst, fp), cells[("packet", burst, fp)])
    out = []
    for (engine, burst, fp), rs in cells.items():
        shares = [r.get("delivered_share") for r in rs
                  if number(r.get("delivered_share")) is not None]
        row = {"flavour": flavour, "matches_kernel": matches, "engine": engine,
               "burst": burst, "footprint_kb": fp, "footprint": str(rs[0].get("footprint", fp)),
               "runs": len(rs),
               "shared_cpu_runs": sum(1 for r in rs if r.get("shared_cpu_pct") is not None),
               "stage_ns_per_packet": stage_ns(rs),
               "rx_packets": sum(r.get("rx_packets") or 0 for r in rs),
               "delivered": sum(r.get("delivered") or 0 for r in rs),
               "dropped": sum(r.get("dropped") or 0 for r in rs),
               "delivered_share": min(shares) if shares else None,
               "drop_reasons": rs[0].get("drop_reasons"),
               "low_delivery": any(low_delivery(r) for r in rs)}
        row.update(NO_COMPARISON)
        m = (paired or {}).get((burst, fp))
        if m is not None:
            row.update(paired_counts(m, engine))
            comps = m["comparisons"]
            if engine == "packet" and comps:
                row.update(paired_figures(comps.get("packet" + grid.AA_SUFFIX)
                                          or next(iter(comps.values())), "base"))
            elif engine in comps:
                row.update(paired_figures(comps[engine]))
        elif engine == "packet":
            row.update(packet_figures(rs))
        else:
            row.update(comparison_figures(cells.get(("packet", burst, fp), []), rs, engine))
        for key, cg_key in CG_FIGURES:
            row[key] = cg_value(rs, cg_key, burst, cg_burst)
        for key in ("perf_cycles_per_packet", "perf_l1i_misses_per_packet",
                    "perf_l1d_misses_per_packet", "perf_llc_misses_per_packet"):
            if key in rs[0]:
                row[key[len("perf_"):]] = (median(r.get(key) for r in rs)
                                           if any(number(r.get(key)) is not None for r in rs)
                                           else rs[0][key])
        out.append(row)
    order = {e: i for i, e in enumerate(["packet", "packet-aa", "burst", "hybrid:2", "static",
                                         "graph"])}
    out.sort(key=lambda h: (h["footprint_kb"], h["burst"], order.get(h["engine"], 9),
                            h["engine"]))
    return out


# ---- the verdict -------------------------------------------------------------

def verdict_cell(h, burst):
    return h["engine"] != "packet" and h["burst"] == burst


def ballast(h):
    if not h["footprint_kb"]:
        return "no ballast"
    label = h.get("footprint")
    return "%d KB ballast%s" % (h["footprint_kb"], " (%s)" % label
                               if label and label != str(h["footprint_kb"]) else "")


def verdict_text(h):
    """One sentence: where, what the engine saves or costs against packet
    and both sides' ns/packet (the median pair's), then the comparison's
    caveat (stats.caveat: speedup [95 % interval], pairs, left out, shared
    the CPU, resolved or not and why) and the pairs left out."""
    where = "%s build, burst %d, %s" % (h["flavour"], h["burst"], ballast(h))
    if h["speedup"] is None:
        return "%s: %s against packet: no pair to compare (%s)" % (
            where, h["engine"], h["resolution"] or "no run of both")
    sides = "packet %.1f → %s %.1f ns" % (h["base_ns_per_packet"], h["engine"],
                                          h["ns_per_packet"])
    if h["engine"].endswith(grid.AA_SUFFIX):
        what = "A/A, %s against %s, %s" % (h["engine"], grid.engine_arg(h["engine"]), sides)
    elif h["saved_ns_per_packet"] >= 0:
        what = "%s saves %.1f ns/packet, %s" % (h["engine"], h["saved_ns_per_packet"], sides)
    else:
        what = "%s costs %.1f ns/packet more, %s" % (h["engine"], -h["saved_ns_per_packet"],
                                                     sides)
    detail = h.get("caveat") or caveat(h["comparison"])
    if h.get("windows_text"):
        detail += "; " + h["windows_text"]
    if h.get("aa_caveat"):
        detail += "; " + h["aa_caveat"]
    if h["left_out"]:
        detail += "; left out: " + "; ".join("rep %d: %s" % (x["rep"], x["why"])
                                             for x in h["left_out"])
    return "%s: %s (%s)" % (where, what, detail)


def verdicts(hrows, burst):
    return [{"flavour": h["flavour"], "engine": h["engine"], "burst": h["burst"],
             "footprint_kb": h["footprint_kb"], "resolved": h["resolved"],
             "text": verdict_text(h)} for h in hrows if verdict_cell(h, burst)]


def contention(hrows):
    """{"shared": runs whose polling CPU was busy before the start (listrx
    warned), "runs": runs, "left_out": pairs left out as stalled}."""
    return {"shared": sum(h["shared_cpu_runs"] for h in hrows),
            "runs": sum(h["runs"] for h in hrows),
            "left_out": sum(len(h["left_out"]) for h in hrows)}


# ---- the one table --------------------------------------------------------------

def _cell(v, digits=2):
    return "n/a" if number(v) is None else fmt(v, digits)


def table_rows(hrows):
    """HEADER's cells for each row: the same table on stdout, in headline.md
    and in the report. An engine's row holds both sides of its comparison
    (its own and the packet engine's figures of the same pairs), so the
    ns/packet ratio and difference in the row are its speedup and saving."""
    out = []
    for h in hrows:
        if h["engine"] == "packet":
            base, saved, sp, verdict = "(base)", "-", "1 (base)", "base"
            reps = "%d/%d, %d shared" % (h["reps"], h["runs"], h["shared_cpu_runs"])
        elif h["speedup"] is None:
            base, saved, sp, verdict = "-", "-", "-", "NOT RESOLVED (no pair)"
            reps = "0/%d" % h["pairs"]
        else:
            lo, hi = h["speedup_ci"]
            base, saved = _cell(h["base_ns_per_packet"], 1), "%.1f" % h["saved_ns_per_packet"]
            sp = "%.2f× [%.2f–%.2f]" % (h["speedup"], lo, hi)
            verdict = "resolved" if h["resolved"] else "NOT RESOLVED"
            reps = "%d/%d" % (h["clean_pairs"], h["pairs"]) + (
                "" if h["shared_cpu_pairs"] is None else ", %d shared" % h["shared_cpu_pairs"])
        if h["low_delivery"]:
            verdict += ", LOW DELIVERY %.0f%%" % (100 * h["delivered_share"])
        out.append([
            h["engine"], h["burst"], h["footprint_kb"], _cell(h["mpps"]),
            _cell(h["ns_per_packet"], 1), base, saved, sp, verdict, reps,
            _cell(h["i1_misses_per_packet"]),
            _cell(h["d1_misses_per_packet"]), _cell(h["ll_misses_per_packet"]),
            _cell(h["instructions_per_packet"], 0), _cell(h["indirect_per_packet"]),
            " ".join("%s %.0f" % (STAGE_SHORT.get(s, s), v)
                     for s, v in h["stage_ns_per_packet"].items()),
            "%.1f" % (100 * h["delivered_share"]) if h["delivered_share"] is not None
            else "-"])
    return out


def flavour_title(flavour, doc):
    match = doc["kernel_flavour"] == flavour
    return "%s build%s" % (flavour, " (matches the running kernel)" if match else "")


def add_verdict(d, doc):
    d.h(2, "Verdict (burst %d)" % doc["verdict_burst"])
    d.ul([v["text"] for v in doc["verdicts"]] or ["no verdict: no cell of a listified engine "
                                                  "at burst %d" % doc["verdict_burst"]])


def add_tables(d, doc, per_flavour=None):
    """Each flavour's table, with its contention and repetitions lines, and
    per_flavour(d, flavour, rows)'s blocks after it (the report's)."""
    for flavour in FLAVOURS:
        hrows = [h for h in doc["rows"] if h["flavour"] == flavour]
        d.h(2, flavour_title(flavour, doc))
        if not hrows:
            d.p(str(doc["flavours"].get(flavour)))
            continue
        c = doc["contention"][flavour]
        a = doc["adaptive"].get(flavour, {})
        if doc.get("method") == "interleave":
            w = [h["windows_text"] for h in hrows if h.get("windows_text")
                 and h["burst"] == doc["verdict_burst"] and h["engine"] != "packet"]
            d.p("%d/%d interleaved runs shared their CPU (listrx warned that the polling CPU "
                "was busy before the start); at burst %d: %s." % (
                    c["shared"], c["runs"], doc["verdict_burst"], "; ".join(sorted(set(w)))
                    or "no windows"))
        else:
            d.p("%d/%d runs shared their CPU (listrx warned that the polling CPU was busy "
                "before the start); %d pair(s) left out as stalled. Repetitions: %d, %s." % (
                    c["shared"], c["runs"], c["left_out"], a.get("initial_reps", doc["reps"]),
                    added_text(a)))
        d.table(HEADER, table_rows(hrows))
        if flavour == "retpoline":
            d.p("%s: cachegrind's indirect branches (Bi) plus the entries into "
                "__x86_indirect_thunk_* (callgrind), which a retpoline build calls instead "
                "of branching indirectly; in the plain build there is no thunk." % INDIRECT)
        if per_flavour:
            per_flavour(d, flavour, hrows)


def method_text(doc):
    """How an interleaved headline timed its speedups."""
    p = doc["paired"]
    return ("Speedups from %d interleaved run(s) of %.1f s per burst and footprint, in "
            "rounds over the cells: every engine and the A/A control (packet against itself) "
            "polled in turn in one process, a window of about %d us each; a run's figure is "
            "the median engine ÷ packet ratio of its pairs of adjacent windows, the windows "
            "the OS disturbed left out (docs/measuring.md, \"Interleaved windows\"); the "
            "speedup is the median over the runs with its 95 %% interval, the Mpps and ns/pkt "
            "beside it the median run's; the other columns from one run per cell." % (
                p["reps"], p["duration_s"], p["window_us"]))


def added_text(a):
    if not a.get("added"):
        return "none added (%s)" % (a.get("stopped") or "adaptive repetitions off")
    return "%d round(s) added for %s; stopped: %s" % (
        a["added"], ", ".join(a.get("cells", [])) or "-", a.get("stopped") or "-")


# ---- the report -------------------------------------------------------------------

SIDES = (("Δ instr/pkt", "instructions_per_packet"), ("Δ I1 miss/pkt", "i1_misses_per_packet"),
         ("Δ indirect/pkt", "indirect_per_packet"), ("Δ D1 miss/pkt", "d1_misses_per_packet"),
         ("Δ LL miss/pkt", "ll_misses_per_packet"))


def side_deltas(hrows, burst):
    """"I side saved, D side spent": each engine minus packet at the same
    burst and footprint, per packet: [(engine, footprint KB, {measure:
    delta or None}, speedup)]."""
    out = []
    for h in hrows:
        if h["burst"] != burst or h["engine"] == "packet":
            continue
        base = next((b for b in hrows if b["engine"] == "packet" and b["burst"] == h["burst"]
                     and b["footprint_kb"] == h["footprint_kb"]), None)
        if not base:
            continue
        deltas = {}
        for name, key in SIDES:
            a, b = number(base[key]), number(h[key])
            deltas[name] = None if a is None or b is None else b - a
        out.append((h["engine"], h["footprint_kb"], deltas, h["speedup"]))
    return out


def speedup_panels(doc):
    """speedup_chart's panels: a flavour each, a series per engine and
    footprint."""
    panels = []
    for flavour in FLAVOURS:
        hrows = [h for h in doc["rows"] if h["flavour"] == flavour]
        bursts = sorted({h["burst"] for h in hrows})
        series = []
        keys = sorted({(h["engine"], h["footprint_kb"]) for h in hrows if h["engine"] != "packet"},
                      key=lambda k: (k[1], k[0]))
        for engine, fp in keys:
            by = {h["burst"]: h for h in hrows if (h["engine"], h["footprint_kb"]) == (engine, fp)}
            pts = [(by[b]["speedup"], by[b]["speedup_ci"][0], by[b]["speedup_ci"][1])
                   if b in by and by[b]["speedup"] is not None else None for b in bursts]
            res = [bool(by[b]["resolved"]) if b in by else True for b in bursts]
            series.append(("%s, %s" % (engine, ballast(by[next(iter(by))])), pts, res))
        panels.append((flavour_title(flavour, doc), bursts, series))
    return panels


def write_headline_report(out_dir, doc):
    """report.md/report.html of the headline: the verdict first, the
    speedup chart, each flavour's table, "I side saved, D side spent" as a
    table and a chart, and the flavour's plots (its sweep's report)."""
    d = report.Doc()
    d.h(1, "listrx headline: what listification saves on the kernel RX path")
    add_verdict(d, doc)
    if doc.get("method") == "interleave":
        d.p("Command: `%s`. Pipeline %s, traffic %s. %s Cachegrind (callgrind, simulated "
            "I1/D1/LL %s, %s) at burst %d. Elapsed %s." % (
                doc["command"], doc["pipeline"], doc["profile"], method_text(doc),
                " ".join("%s=%s" % kv for kv in sorted(doc["cachegrind_caches"].items())),
                doc["cachegrind_caches_source"], doc["verdict_burst"],
                _clock(doc["elapsed_s"])))
    else:
        d.p("Command: `%s`. Pipeline %s, traffic %s, %d alternating repetitions of %.2f s per "
        "cell first, then repetitions added to the verdict's cells while their 95 %% interval "
        "was wider than %g %% (at most %d repetitions, %s in all); speedup = the median of "
        "packet ns/pkt ÷ engine ns/pkt paired by repetition, a pair with a stalled side left "
        "out, with its 95 %% interval; an engine's Mpps, ns/pkt and the packet side's beside "
        "them are the median pair's (docs/measuring.md, \"One comparison\"); cachegrind "
        "(callgrind, simulated I1/D1/LL %s, %s) at burst %d. Elapsed %s." % (
            doc["command"], doc["pipeline"], doc["profile"], doc["reps"], doc["duration_s"],
            doc["spread_pct"], doc["max_reps"], _clock(doc["max_time_s"]),
            " ".join("%s=%s" % kv for kv in sorted(doc["cachegrind_caches"].items())),
            doc["cachegrind_caches_source"], doc["verdict_burst"],
            _clock(doc["elapsed_s"])))
    plt, why = report.matplotlib_pyplot()
    chart = os.path.join(out_dir, "speedup.png")
    if plt is None:
        d.p("plots unavailable: " + why)
    elif report.speedup_chart(plt, chart, "speedup over per-packet processing, %s, pipeline "
                              "%s" % (doc["profile"], doc["pipeline"]), speedup_panels(doc)):
        d.img(chart, "Speedup over the packet engine per burst size: a bar per engine and "
              "footprint, whiskers the 95 % interval, hatched where not resolved, the dashed "
              "line at 1×")

    def per_flavour(d, flavour, hrows):
        sides = side_deltas(hrows, doc["verdict_burst"])
        d.h(3, "I side saved, D side spent (burst %d, per packet, vs packet engine)"
            % doc["verdict_burst"])
        d.table(["engine", "footprint KB"] + [n for n, _ in SIDES] + ["speedup"],
                [[e, fp] + ["-" if deltas[n] is None else "%+.2f" % deltas[n]
                            for n, _ in SIDES] + [fmt(sp)] for e, fp, deltas, sp in sides])
        png = os.path.join(out_dir, "sides-%s.png" % flavour)
        labels = ["%s, %d KB" % (e, fp) for e, fp, _, _ in sides]
        if plt is not None and report.delta_chart(
                plt, png, "I side saved, D side spent, %s build, burst %d (engine − packet; "
                "left of 0: saved)" % (flavour, doc["verdict_burst"]), [n for n, _ in SIDES],
                labels, {lab: deltas for lab, (_, _, deltas, _) in zip(labels, sides)}):
            d.img(png, "I side saved, D side spent, %s build: a bar per engine and footprint, "
                  "a panel per measure" % flavour)
        for key, caption in (("time_mpps", "Mpps"), ("cg_i1_misses_per_packet", "I1 misses"),
                             ("cg_d1_misses_per_packet", "D1 misses")):
            png = os.path.join(out_dir, flavour, "plots", "g0_%s.png" % key)
            if os.path.exists(png):
                d.img(png, "%s, %s build: a bar per engine and burst size, a panel per "
                      "footprint" % (caption, flavour))
        d.p("All figures of this flavour: %s/report.md (per-stage zoom-in, all cells)." % flavour)

    add_tables(d, doc, per_flavour)
    d.h(2, "Machine and backends")
    mit = doc["kernel_mitigations"]
    d.p("Running kernel: spectre_v2 `%s`; spec_rstack_overflow `%s` → the **%s** build "
        "matches it. CPU: %s." % (mit.get("spectre_v2"), mit.get("spec_rstack_overflow"),
                                 doc["kernel_flavour"], doc["machine"].get("cpu_model")
                                 or doc["machine"].get("cpu")))
    d.table(["backend", "status"], [[k, v] for k, v in doc["backends"].items()])
    md = os.path.join(out_dir, "report.md")
    html_path = os.path.join(out_dir, "report.html")
    with open(md, "w") as f:
        f.write(d.markdown(out_dir))
    with open(html_path, "w") as f:
        f.write(d.html("listrx headline"))
    return md, html_path


# ---- the run ----------------------------------------------------------------------

def adaptive_reps(args, flavour, sw, cells, progress, t0, state, flavours_left):
    """The sweep's more(rows): after the first reps, one more round of the
    verdict's cells (and their packet cells) whose 95 % interval of the
    median speedup is wider than --spread % of it or that have fewer than
    MIN_PAIRS clean pairs, while --max-reps and --max-time allow; the time
    --max-time leaves beyond the planned work is shared out among this
    flavour and the ones after it. What happened goes into state."""
    state.update(initial_reps=args.reps, added=0, stopped=None, cells=[])

    def more(rows):
        hrows = headline_rows(flavour, rows, args.cg_burst, False)
        wide = [h for h in hrows if verdict_cell(h, args.cg_burst) and (
            h["clean_pairs"] is None or h["clean_pairs"] < MIN_PAIRS
            or h["ci_width_pct"] is None or h["ci_width_pct"] > args.spread)]
        if not wide:
            state["stopped"] = "every verdict cell's interval within %g %%" % args.spread
            return []
        reps = args.reps + state["added"]
        if reps >= args.max_reps:
            state["stopped"] = "%d repetitions (--max-reps), %d cell(s) still wider than " \
                "%g %%" % (reps, len(wide), args.spread)
            return []
        keys = {(h["engine"], h["burst"], h["footprint_kb"]) for h in wide}
        keys |= {("packet", b, fp) for _, b, fp in keys}
        extra = [c for c in cells if (c["engine"], c["burst"], c["footprint_kb"]) in keys]
        cost = progress.cost(RUN_KIND) or sw.run_estimate_s()
        round_s = sum(sw.runs_per_rep(reps) for _ in extra) * cost
        now = progress.clock() - t0
        if "until" not in state:
            slack = args.max_time - now - (progress.eta() or 0.0)
            state["until"] = now + slack / flavours_left
        if now + round_s > state["until"] or \
                now + (progress.eta() or 0.0) + round_s > args.max_time:
            state["stopped"] = "the time cap (this flavour's share of --max-time %s): %d " \
                "cell(s) still wider than %g %%" % (_clock(args.max_time), len(wide), args.spread)
            return []
        state["added"] += 1
        state["cells"] = sorted({"%s b%d fp%d" % k for k in keys if k[0] != "packet"})
        return extra
    return more if args.max_reps > args.reps else None


def paired_cells(cells):
    """One cell per (burst, footprint) of the packet engine: what an
    interleaved run measures, every engine in it."""
    return [c for c in cells if c["engine"] == "packet"]


def loadavg():
    return interleave.loadavg()


def run_headline(args, argv, stream=None):
    stream = stream or sys.stdout
    t0 = time.monotonic()
    started = datetime.datetime.now().isoformat(timespec="seconds")
    load0 = loadavg()
    out_dir = args.out
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
        if args.method == "interleave":
            # the interleaved runs time the engines and count what they
            # delivered; the sweep runs the zoom-in and cachegrind
            fl_counters = [c for c in fl_counters if c != "time"]
        build = lx.version().get("build") or ""
        if "sanitize=" in build and "cachegrind" in fl_counters:
            # valgrind cannot run an ASan-instrumented binary
            fl_counters.remove("cachegrind")
            status["cachegrind"] = unavailable("cachegrind cannot run a sanitizer build (%s)"
                                               % build)
        sargs = sweep_options(args, sub, fl_counters)
        topo = lx.topology()
        cells = grid.expand([args.profile], [grid.KERNEL_PIPELINE],
                            grid.parse_footprints(sargs.footprints, topo.get("l1i_bytes")),
                            sargs.engines, sargs.bursts)
        plan.append((flavour, lx, sargs, Sweep(lx, sargs, sub), cells))
    if not plan:
        raise BenchError("no listrx build to measure")
    progress = Progress(enabled=not args.quiet)
    for _, _, sargs, sw, cells in plan:
        sw.plan(progress, cells, sargs.reps)
        if args.method == "interleave":
            interleave.plan_cells(progress, paired_cells(cells), args.paired_reps,
                                  args.paired_duration)
    progress.show("%d runs, %s" % (progress.total, ", ".join(p[0] for p in plan)))
    all_rows, sweep_rows, adaptive, paired = [], [], {}, {}
    for i, (flavour, lx, sargs, sw, cells) in enumerate(plan):
        adaptive[flavour] = {}
        if args.method == "interleave":
            # before the sweep: its cachegrind phase would share the CPUs
            paired[flavour] = interleave.measure_cells(
                lx, paired_cells(cells), [e for e in args.engines], os.path.join(sargs.out,
                                                                                   "runs"),
                duration=args.paired_duration, reps=args.paired_reps, timeout=args.timeout,
                progress=progress, label_prefix=flavour + " ")
        rows = sw.run(cells, sargs.reps, progress=progress, label_prefix=flavour + " ",
                      more=adaptive_reps(args, flavour, sw, cells, progress, t0,
                                         adaptive[flavour], len(plan) - i))
        adaptive[flavour].pop("until", None)
        sweep_rows += rows
        meta = meta_for(lx, sargs, argv, sw.status, started, sw.caches)
        results.write(sargs.out, meta, rows)
        report.write_report(sargs.out, title="listrx headline, %s build" % flavour,
                            zoom_burst=args.cg_burst)
        all_rows += headline_rows(flavour, rows, args.cg_burst, flavour == kernel_flavour,
                                  paired.get(flavour))
    progress.close()
    for name, st in plan[0][3].status.items():
        status.setdefault(name, st)
    # a probe that passed says nothing about the figures: "ok" only for a
    # backend that gave a number in some run
    status = {name: backends.figure_status(name, st, sweep_rows) for name, st in status.items()}
    cg = [r["i1_misses_per_packet"] for r in all_rows if r["burst"] == args.cg_burst]
    if status.get("cachegrind", "ok") == "ok" and cg and all(number(v) is None for v in cg):
        status["cachegrind"] = unavailable("no figure in any row (%s)" % cg[0])
    elapsed = time.monotonic() - t0
    doc = {"tool": "listrx-bench headline", "created": started,
           "command": "listrx-bench " + " ".join(shlex.quote(a) for a in argv),
           "elapsed_s": elapsed, "pipeline": grid.KERNEL_PIPELINE, "profile": args.profile,
           "reps": args.reps, "max_reps": args.max_reps, "spread_pct": args.spread,
           "max_time_s": args.max_time, "duration_s": args.duration,
           "cg_burst": args.cg_burst, "verdict_burst": args.cg_burst,
           "kernel_mitigations": mit, "kernel_flavour": kernel_flavour,
           "flavours": {f: binaries[f] for f in FLAVOURS}, "backends": status,
           "cachegrind_caches": plan[0][3].caches,
           "cachegrind_caches_source": caches_source(args.cg_caches),
           "machine": machine_info(plan[0][1]),
           "provenance": provenance([p[1] for p in plan]), "adaptive": adaptive,
           "method": args.method, "load_average": {"start": load0, "end": loadavg()},
           "paired": {"duration_s": args.paired_duration, "reps": args.paired_reps,
                      "window_us": interleave.WINDOW_US,
                      "runs": {f: {"b%d fp%d" % k: {kk: v[kk] for kk in ("runs", "commands",
                                                                          "load", "rx")}
                                   for k, v in cells_.items()}
                               for f, cells_ in paired.items()}}
           if args.method == "interleave" else None,
           "contention": {f: contention([h for h in all_rows if h["flavour"] == f])
                          for f in FLAVOURS},
           "verdicts": verdicts(all_rows, args.cg_burst), "rows": all_rows}
    return write_headline(out_dir, doc, stream)


def write_headline(out_dir, doc, stream):
    """headline.json, report.md/.html, headline.md (the verdict, then each
    flavour's table) and stdout (the tables, then the verdict)."""
    with open(os.path.join(out_dir, "headline.json"), "w") as f:
        json.dump(doc, f, indent=1, default=str)
        f.write("\n")
    md, html_path = write_headline_report(out_dir, doc)
    d = report.Doc()
    add_verdict(d, doc)
    add_tables(d, doc)
    with open(os.path.join(out_dir, "headline.md"), "w") as f:
        f.write(d.markdown(out_dir))
    out = report.Doc()
    timing = (method_text(doc) if doc.get("method") == "interleave" else
              "%d alternating reps x %.2f s (+ adaptive, up to %d)" % (
                  doc["reps"], doc["duration_s"], doc["max_reps"]))
    out.p("listrx headline: pipeline %s, traffic %s, %s; cachegrind at burst %d (backends: %s)"
          "; load average %s at the start, %s at the end" % (
              doc["pipeline"], doc["profile"], timing, doc["cg_burst"],
              ", ".join(k for k, v in doc["backends"].items() if v == "ok") or "time",
              (doc.get("load_average") or {}).get("start"),
              (doc.get("load_average") or {}).get("end")))
    add_tables(out, doc)
    mit = doc["kernel_mitigations"]
    notes = ["kernel: spectre_v2 %s; spec_rstack_overflow %s" % (
        mit.get("spectre_v2"), mit.get("spec_rstack_overflow"))]
    notes += ["%s %s" % (name, st) for name, st in doc["backends"].items() if st != "ok"]
    low = [h for h in doc["rows"] if h["low_delivery"]]
    if low:
        notes.append("WARNING: %d cell(s) delivered less than %d %% of what they received"
                      % (len(low), 100 * LOW_DELIVERY))
    notes.append("wrote %s, %s, %s, %s (elapsed %s)" % (
        os.path.join(out_dir, "headline.json"), os.path.join(out_dir, "headline.md"), md,
        html_path, _clock(doc["elapsed_s"])))
    out.p("\n".join(notes))
    add_verdict(out, doc)
    print(out.text(), end="", file=stream)
    return 0 if doc["rows"] else 1
