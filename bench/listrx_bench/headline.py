"""listrx-bench headline: what listification saves on the kernel RX path.

The kernel pipeline (xdp,build-meta,gro,l3-demux) on valid UDP, per packet
against listified engines, at a few burst sizes and code footprints, in both
build flavours (plain and retpoline, the latter as a Spectre-mitigated kernel
is built), on each input asked for (--input: net_synth's hot frames, its
cold ones, a kernel-fed port; inputs.py), timed with the engines interleaved
in one process (interleave.py) plus cachegrind at one burst size. Each
input's flavour is a part: the interleaved runs, then the sweep
(sweep.Sweep: the zoom-in, cachegrind) over a small grid. This module
chooses the grid, finds the two binaries, sets the inputs up, pairs the
figures and builds headline.json's document; headline_page.py renders it
(the verdict, one table per part, headline.md, report.md/.html).
"""

import datetime
import os
import shlex
import sys
import time

from . import backends, grid, inputs, interleave, report, results
# the page is rendered there; its names stay reachable from here
from .headline_page import (FLAVOURS, HEADER, INDIRECT, SIDES, STAGE_SHORT,  # noqa: F401
                            ballast, part_key, part_rows, side_deltas, table_rows,
                            write_headline)
from .listrx import (BenchError, Listrx, caches_source, default_lcores, find_binary,
                     machine_info, provenance)
from .options import (add_cg_caches, add_common, add_out, convert, non_negative_int,
                      positive_float, positive_int)
from .progress import Progress, _clock
from .stats import (MIN_PAIRS, at_median, caveat, is_unavailable, median, number,
                    speedup, stalled, summary, unavailable)
from .sweep import (LOW_DELIVERY, RUN_KIND, Sweep, default_options, low_delivery, meta_for)

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
    p.add_argument("--input", type=convert(inputs.parse_inputs, "input"), default=["hot"],
                   help="where the frames come from, one table and verdict each: hot "
                   "(net_synth's, in the L1d), cold (net_synth cold=1: buffers over 4 x "
                   "the LLC, shuffled, heads written around the caches), kernel (net_af_xdp "
                   "on a veth a kernel sender feeds from another CPU; root) "
                   "(default: hot)")
    p.add_argument("--kernel-coalesce-us", type=convert(non_negative_int),
                   default=inputs.KERNEL_COALESCE_US,
                   help="--input kernel: after a poll short of the burst, wait this many "
                   "microseconds before the next, as a NIC's interrupt moderation (listrx "
                   "--coalesce-us; 0: poll again at once) (default: %(default)s)")
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
    if args.kernel_coalesce_us > 10 ** 6:
        raise BenchError("--kernel-coalesce-us %d: want 0..1000000 (listrx --coalesce-us)"
                         % args.kernel_coalesce_us)
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


def headline_rows(flavour, rows, cg_burst, matches, paired=None, inp=None):
    """One row per (engine, burst, footprint) from a flavour's sweep rows.
    An engine's row is one comparison with the packet cell of the same
    burst and footprint (comparison_figures: every figure from the same
    pairs); the packet row's own figures are over its runs that did not
    stall. paired: {(burst, footprint KB): interleave.measure_cells's}:
    the comparisons (and the A/A control's row) come from the interleaved
    runs instead, the rest of each row from the sweep. inp: the input
    (inputs.Input; None: hot frames), whose cachegrind reason fills the
    cachegrind columns where it cannot measure."""
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
        row = {"input": inp.name if inp else "hot", "input_label": inp.label if inp else
               inputs.LABELS["hot"], "flavour": flavour, "matches_kernel": matches,
               "engine": engine,
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
            row[key] = (inp.cachegrind if inp and inp.cachegrind
                        else cg_value(rs, cg_key, burst, cg_burst))
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


def verdict_text(h, with_input=False):
    """One sentence: where (the input first when the page has several),
    what the engine saves or costs against packet and both sides'
    ns/packet (the median pair's), then the comparison's caveat
    (stats.caveat: speedup [95 % interval], pairs, left out, shared the
    CPU, resolved or not and why) and the pairs left out."""
    where = "%s build, burst %d, %s" % (h["flavour"], h["burst"], ballast(h))
    if with_input:
        where = "%s, %s" % (h.get("input_label") or inputs.LABELS["hot"], where)
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
    with_input = any(h.get("input", "hot") != "hot" for h in hrows)
    return [{"input": h.get("input", "hot"), "flavour": h["flavour"], "engine": h["engine"],
             "burst": h["burst"], "footprint_kb": h["footprint_kb"], "resolved": h["resolved"],
             "text": verdict_text(h, with_input)} for h in hrows if verdict_cell(h, burst)]


def contention(hrows):
    """{"shared": runs whose polling CPU was busy before the start (listrx
    warned), "runs": runs, "left_out": pairs left out as stalled}."""
    return {"shared": sum(h["shared_cpu_runs"] for h in hrows),
            "runs": sum(h["runs"] for h in hrows),
            "left_out": sum(len(h["left_out"]) for h in hrows)}


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


def prepare_inputs(args, binaries):
    """The inputs of --input that can run here (inputs.Input), and
    {input: "skipped: why"} for the others."""
    plain = next(b for b in (binaries.get(f) for f in FLAVOURS) if not is_unavailable(b))
    lx = Listrx(plain, eal=args.eal, lcores=args.lcores, log_dir=None)
    ready, skipped = [], {}
    for name in args.input:
        try:
            ready.append(inputs.prepare(name, args.profile, args.eal, lx.topology(),
                                        os.path.dirname(os.path.dirname(plain)),
                                        args.lcores or default_lcores(),
                                        args.kernel_coalesce_us))
        except BenchError as e:
            skipped[name] = "skipped: %s" % e
            print("listrx-bench: %s: %s" % (inputs.LABELS[name], skipped[name]),
                  file=sys.stderr)
    return ready, skipped


def plan_parts(args, binaries, ready, status, counters):
    """One part per input and flavour: (input, flavour, lx, sweep options,
    Sweep, cells)."""
    plan = []
    for inp in ready:
        for flavour in FLAVOURS:
            binary = binaries[flavour]
            if is_unavailable(binary):
                if inp is ready[0]:
                    print("listrx-bench: %s build %s" % (flavour, binary), file=sys.stderr)
                continue
            sub = os.path.join(args.out, part_key(inp.name, flavour))
            os.makedirs(sub, exist_ok=True)
            lx = Listrx(binary, eal=inp.eal, lcores=args.lcores, log_dir=None)
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
                status["cachegrind"] = unavailable("cachegrind cannot run a sanitizer build "
                                                   "(%s)" % build)
            if inp.cachegrind and "cachegrind" in fl_counters:
                fl_counters.remove("cachegrind")
            sargs = sweep_options(args, sub, fl_counters)
            sargs.profiles = [inp.profile]
            if inp.cg_eal_mb:
                sargs.cg_eal = inputs.eal_memory(sargs.cg_eal, inp.cg_eal_mb)
            plan.append((inp, flavour, lx, sargs, Sweep(lx, sargs, sub), part_cells(lx, sargs,
                                                                                   inp)))
    return plan


def part_cells(lx, sargs, inp):
    """The part's sweep cells, each with the input's --set assignments."""
    cells = grid.expand([inp.profile], [grid.KERNEL_PIPELINE],
                        grid.parse_footprints(sargs.footprints, lx.topology().get("l1i_bytes")),
                        sargs.engines, sargs.bursts)
    for c in cells:
        c["sets"] = list(inp.sets)
    return cells


def measure_part(args, argv, started, part, progress, t0, adaptive, paired, kernel_flavour,
                 left):
    """An input's flavour: the interleaved runs, then the sweep (zoom-in,
    cachegrind); its headline rows and its sweep rows."""
    inp, flavour, lx, sargs, sw, cells = part
    key = part_key(inp.name, flavour)
    label = "%s " % key
    adaptive[key] = {}
    if args.method == "interleave":
        # before the sweep: its cachegrind phase would share the CPUs
        paired[key] = interleave.measure_cells(
            lx, paired_cells(cells), list(args.engines), os.path.join(sargs.out, "runs"),
            duration=args.paired_duration, reps=args.paired_reps, timeout=args.timeout,
            progress=progress, label_prefix=label)
    rows = sw.run(cells, sargs.reps, progress=progress, label_prefix=label,
                  more=adaptive_reps(args, flavour, sw, cells, progress, t0, adaptive[key],
                                     left))
    adaptive[key].pop("until", None)
    meta = meta_for(lx, sargs, argv, sw.status, started, sw.caches)
    results.write(sargs.out, meta, rows)
    report.write_report(sargs.out, title="listrx headline, %s" % key.replace("/", ", "),
                        zoom_burst=args.cg_burst)
    return headline_rows(flavour, rows, args.cg_burst, flavour == kernel_flavour,
                         paired.get(key), inp), rows


def run_headline(args, argv, stream=None):
    stream = stream or sys.stdout
    t0 = time.monotonic()
    started = datetime.datetime.now().isoformat(timespec="seconds")
    load0 = loadavg()
    out_dir = args.out
    binaries = flavour_binaries(args.listrx, args.listrx_retpo)
    if all(is_unavailable(binaries[f]) for f in FLAVOURS):
        raise BenchError("no listrx build to measure")
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
    ready, skipped = prepare_inputs(args, binaries)
    plan = plan_parts(args, binaries, ready, status, counters)
    if not plan:
        raise BenchError("no input to measure: %s" % "; ".join(
            "%s %s" % (inputs.LABELS[k], v) for k, v in skipped.items()))
    progress = Progress(enabled=not args.quiet)
    for _, _, _, sargs, sw, cells in plan:
        sw.plan(progress, cells, sargs.reps)
        if args.method == "interleave":
            interleave.plan_cells(progress, paired_cells(cells), args.paired_reps,
                                  args.paired_duration)
    progress.show("%d runs, %s" % (progress.total, ", ".join(
        part_key(p[0].name, p[1]) for p in plan)))
    all_rows, sweep_rows, adaptive, paired = [], [], {}, {}
    done = 0
    for inp in ready:
        mine = [p for p in plan if p[0] is inp]
        try:
            with inp:
                if inp.session:
                    inputs.probe_port(mine[0][2], inp, os.path.join(mine[0][3].out, "runs"))
                for part in mine:
                    part = part[:5] + (part_cells(part[2], part[3], inp),)
                    part[3].profiles = [inp.profile]
                    rows, srows = measure_part(args, argv, started, part, progress, t0,
                                               adaptive, paired, kernel_flavour,
                                               len(plan) - done)
                    all_rows += rows
                    sweep_rows += srows
                    done += 1
        except inputs.InputUnavailable as e:
            skipped[inp.name] = "skipped: %s" % e
            print("listrx-bench: %s: %s" % (inp.label, skipped[inp.name]), file=sys.stderr)
            done += len(mine)
    progress.close()
    for name, st in plan[0][4].status.items():
        status.setdefault(name, st)
    # a probe that passed says nothing about the figures: "ok" only for a
    # backend that gave a number in some run
    status = {name: backends.figure_status(name, st, sweep_rows) for name, st in status.items()}
    cg = [r["i1_misses_per_packet"] for r in all_rows if r["burst"] == args.cg_burst
          and r["input"] != "kernel"]
    if status.get("cachegrind", "ok") == "ok" and cg and all(number(v) is None for v in cg):
        status["cachegrind"] = unavailable("no figure in any row (%s)" % cg[0])
    elapsed = time.monotonic() - t0
    doc = {"tool": "listrx-bench headline", "created": started,
           "command": "listrx-bench " + " ".join(shlex.quote(a) for a in argv),
           "elapsed_s": elapsed, "pipeline": grid.KERNEL_PIPELINE, "profile": args.profile,
           "input_order": list(args.input),
           "inputs": dict({i.name: i.info for i in ready if i.name not in skipped}, **skipped),
           "reps": args.reps, "max_reps": args.max_reps, "spread_pct": args.spread,
           "max_time_s": args.max_time, "duration_s": args.duration,
           "cg_burst": args.cg_burst, "verdict_burst": args.cg_burst,
           "kernel_mitigations": mit, "kernel_flavour": kernel_flavour,
           "flavours": {f: binaries[f] for f in FLAVOURS}, "backends": status,
           "cachegrind_caches": plan[0][4].caches,
           "cachegrind_caches_source": caches_source(args.cg_caches),
           "machine": machine_info(plan[0][2]),
           "provenance": provenance([p[2] for p in plan if p[0] is plan[0][0]]),
           "adaptive": adaptive,
           "method": args.method, "load_average": {"start": load0, "end": loadavg()},
           "paired": {"duration_s": args.paired_duration, "reps": args.paired_reps,
                      "window_us": interleave.WINDOW_US,
                      "runs": {k: {"b%d fp%d" % c: {kk: v[kk] for kk in ("runs", "commands",
                                                                          "load", "rx")}
                                   for c, v in cells_.items()}
                               for k, cells_ in paired.items()}}
           if args.method == "interleave" else None,
           "contention": {part_key(i, f): contention(part_rows({"rows": all_rows}, i, f))
                          for i in args.input for f in FLAVOURS},
           "verdicts": verdicts(all_rows, args.cg_burst), "rows": all_rows}
    return write_headline(out_dir, doc, stream)
