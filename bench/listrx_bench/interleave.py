"""Interleaved windows (listrx --interleave): the engines of one process
compared window by window.

One lcore polls the same queue with each engine in turn, a window of W
polls each, in blocks of one window per engine, every other block
reversed (A B B A). A pair is one block's windows of the two engines
compared: the same traffic, a fraction of a millisecond apart. Each
window's cost is its TSC cycles per packet. A window the operating system
disturbed (the thread was switched out, waited on a run queue, or was
off its CPU for part of the window: steal time under a hypervisor) is
left out, and counted; so are the first blocks (warm-up) and a window cut
short by the end of the run. The ratio of the two engines is the median
of the pairs' ratios with its 95 % interval (stats.compare, the one
definition of "resolved"); an A/A control (the same engine twice in the
same interleaving) is read the same way and must come out 1.00.
docs/measuring.md, "Interleaved windows".
"""

import os
import statistics

from . import grid
from .listrx import shared_cpu_pct
from .stats import MIN_PAIRS, caveat, compare, number

# The disturbance rules. A window is disturbed when over its span (the
# window and the bookkeeping after it) the thread made an involuntary
# context switch, waited on a run queue, or was off its CPU for more than
# OFF_CPU_SHARE of the span and at least OFF_CPU_MIN_NS (the bookkeeping's
# own time is on the CPU: its syscalls are the thread's). The thresholds
# from the A/A measurement in docs/measuring.md.
OFF_CPU_SHARE = 0.01
OFF_CPU_MIN_NS = 2000.0
# blocks at the start of a run left out: cold caches, first page touches
WARMUP_BLOCKS = 2
SIGNALS = ("nivcsw", "run_delay_ns", "cpu_ns")
# an A/A control reading outside this range is said in the verdict even
# when the effect holds beyond it (the range the method is held to,
# docs/measuring.md); inside it, only when the effect does not hold beyond it
AA_RANGE = (0.98, 1.02)


def engine_labels(names):
    """The engines of an interleave, each named once: a repeated engine
    is ENGINE-aa (the A/A control), as the sweep names it."""
    seen, out = set(), []
    for name in names:
        out.append(name + grid.AA_SUFFIX if name in seen else name)
        seen.add(name)
    return out


def window_engine(k, n):
    """The engine of window k of n (listrx's lrx_window_engine): block 2r
    in the order r, r+1, ... (mod n), block 2r+1 the same reversed."""
    block, pos = divmod(k, n)
    if block % 2:
        pos = n - 1 - pos
    return (pos + block // 2) % n


def lcore_windows(lcore):
    """One lcore of a summary's "interleave" section -> its windows as
    dicts (signals None where listrx says they are unavailable)."""
    cols = lcore["windows"]
    n = len(cols["engine"])
    out = []
    for k in range(n):
        w = {f: (cols[f][k] if isinstance(cols.get(f), list) else None)
             for f in ("engine", "polls", "empty_polls", "packets", "cycles", "busy_cycles",
                       "span_cycles", "gap_cycles", "cpu_ns", "run_delay_ns", "nivcsw")}
        w["k"] = k
        out.append(w)
    return out


def disturbance(w, tsc_hz):
    """The reasons window w counts as disturbed ([] when it does not)."""
    why = []
    if w.get("nivcsw"):
        why.append("switched out")
    if w.get("run_delay_ns"):
        why.append("run-queue wait")
    cpu, span = w.get("cpu_ns"), w.get("span_cycles")
    if cpu is not None and span and tsc_hz:
        off = span / tsc_hz * 1e9 - cpu
        if off > max(OFF_CPU_MIN_NS, OFF_CPU_SHARE * span / tsc_hz * 1e9):
            why.append("off CPU")
    return why


def ns_per_packet(w, tsc_hz):
    """A window's cost per packet: its busy cycles (the polls that received
    packets; listrx since it records them) per packet. Where every poll
    was full they are the window's cycles; on a port slower than the lcore
    (a kernel-fed one) the empty polls are waiting, not cost."""
    cycles = w["busy_cycles"] if w.get("busy_cycles") is not None else w["cycles"]
    return cycles / tsc_hz * 1e9 / w["packets"] if w["packets"] and tsc_hz else None


def window_pairs(summary, base, other):
    """The pairs of one interleaved run for engines base and other
    (labels of engine_labels): ([(key, base ns/pkt, other ns/pkt)],
    [(key, why)] left out, counts). key = (lcore, block)."""
    tsc = number(summary.get("tsc_hz"))
    pairs, left_out = [], []
    counts = new_counts()
    for lc in (summary.get("interleave") or {}).get("lcores", []):
        labels = engine_labels([e["engine"] for e in lc["engines"]])
        if base not in labels or other not in labels:
            raise ValueError("engines %s: no %s or %s" % (",".join(labels), base, other))
        n, ia, ib = len(labels), labels.index(base), labels.index(other)
        wins = lcore_windows(lc)
        bad = {}
        for w in wins:
            if w["engine"] != window_engine(w["k"], n):
                raise ValueError("lcore %s window %d: engine %s, the order A B B A wants %d"
                                 % (lc["lcore"], w["k"], w["engine"], window_engine(w["k"], n)))
            why = disturbance(w, tsc)
            counts["windows"] += 1
            for k in POLL_COUNTS:
                counts[k] += w.get(k) or 0
            if why:
                counts["disturbed"] += 1
                bad[w["k"]] = why
                for r in why:
                    counts["reasons"][r] = counts["reasons"].get(r, 0) + 1
        for block in range(len(wins) // n):
            ks = [block * n + pos for pos in range(n)]
            wa = next(wins[k] for k in ks if wins[k]["engine"] == ia)
            wb = next(wins[k] for k in ks if wins[k]["engine"] == ib)
            key = (lc["lcore"], block)
            if block < WARMUP_BLOCKS:
                counts["warmup"] += 1
                left_out.append((key, "warm-up"))
                continue
            # a block's windows run the same polls (listrx calibrates the
            # windows' length between blocks): fewer is the run's end
            whole = max(wins[k]["polls"] for k in ks)
            if any(w["polls"] != whole or not w["packets"] for w in (wa, wb)):
                counts["partial"] += 1
                left_out.append((key, "window cut short"))
                continue
            why = bad.get(wa["k"], []) + bad.get(wb["k"], [])
            if why:
                left_out.append((key, "disturbed: " + ", ".join(sorted(set(why)))))
                continue
            pairs.append((key, ns_per_packet(wa, tsc), ns_per_packet(wb, tsc)))
    return pairs, left_out, counts


def run_comparison(summary, base, other):
    """stats.compare() of other against base over the window pairs of one
    interleaved run, with "windows": the counts (windows, disturbed,
    warm-up, partial, reasons) and the sides beside the ratio: the base
    engine's median window over the pairs, and the other's as that over
    the ratio (the median pair's own sides are one window pair's level,
    which the other hyperthread or a slower phase can move by 80 % in
    pairs no signal flags; their ratio holds)."""
    pairs, left_out, counts = window_pairs(summary, base, other)
    # the pairs left are undisturbed: none shared the CPU as far as the
    # thread's signals can tell (docs/measuring.md: what they cannot see)
    c = compare(pairs, shared=[], left_out=left_out)
    if c["ratio"] is not None:
        level = statistics.median(b for _, b, _ in pairs)
        c.update(base=level, other=level / c["ratio"], saving=level - level / c["ratio"])
    c["windows"] = counts
    return c


def comparison(summaries, base, other, shared_runs=None):
    """One comparison of other against base over interleaved runs
    (summaries: listrx JSON summaries), **a pair per run**: each run's
    figure is the median of its window pairs' ratios (run_comparison),
    and stats.compare takes the runs as its pairs, so that the interval
    is the runs' spread. Within a run the window pairs share the host's
    state (another guest on the core's other hyperthread, where the
    process's memory and code landed); between runs they do not: two
    headlines back to back gave retpoline burst ÷ packet 3.28 [3.27–3.29]
    and 4.11 [4.11–4.12] from window pairs alone (docs/measuring.md).
    shared_runs: indices of the runs whose polling CPU was busy before
    the start (listrx warned), None when not recorded. The result has
    "runs" (each run's ratio, interval, window pairs), "window_pairs",
    "windows" (the counts over every run) and "windows_text"."""
    runs, pairs, left_out, levels = [], [], [], {}
    counts = new_counts()
    for i, s in enumerate(summaries):
        rc = run_comparison(s, base, other)
        for k in ("windows", "disturbed", "warmup", "partial") + POLL_COUNTS:
            counts[k] += rc["windows"][k]
        for r, v in rc["windows"]["reasons"].items():
            counts["reasons"][r] = counts["reasons"].get(r, 0) + v
        runs.append({"ratio": rc["ratio"], "ci": rc["ci"], "pairs": rc["pairs"],
                     "left_out": len(rc["left_out"]), "base": rc["base"],
                     "other": rc["other"]})
        if rc["ratio"] is None:
            left_out.append((i, "no window pair"))
        else:
            levels[i] = rc["base"]
    # every run stays: the host's state moves whole runs (every engine 2x
    # slower in some, burst ÷ packet 1.08 in one of them with a busy loop
    # on the polling CPU, unchanged in others), and leaving the slow runs
    # out would answer for the fast state only; nine runs keep one deviant
    # run on either side out of the interval (RUNS)
    for i, rc_run in enumerate(runs):
        if i in levels:
            pairs.append((i, rc_run["base"], rc_run["other"]))
    c = compare(pairs, shared=shared_runs, left_out=left_out)
    c["runs"] = runs
    c["window_pairs"] = sum(r["pairs"] for r in runs)
    c["windows"] = counts
    c["windows_text"] = windows_text(counts, c["window_pairs"], len(summaries))
    c["base_engine"], c["other_engine"] = base, other
    return c


# what the windows' polls are summed into (window_pairs, comparison)
POLL_COUNTS = ("polls", "empty_polls", "packets")


def new_counts():
    return dict({"windows": 0, "disturbed": 0, "warmup": 0, "partial": 0, "reasons": {}},
                **{k: 0 for k in POLL_COUNTS})


def source_text(counts):
    """What a port slower than the lcore gave: the share of empty polls and
    the packets per poll that received some (None when every poll did)."""
    empty, polls = counts.get("empty_polls", 0), counts.get("polls", 0)
    if not empty or not polls:
        return None
    return ("the port was slower than the lcore: %d of %d polls empty (%.0f %%), %.1f "
            "packets per poll that received; ns/packet over those polls' cycles" % (
                empty, polls, 100.0 * empty / polls,
                counts["packets"] / (polls - empty) if polls > empty else 0.0))


def windows_text(counts, window_pairs=None, runs=None):
    """"a pair per run, 9000 window pairs in all; 312 of 4000 windows
    disturbed, left out (off CPU 300, ...)"; and what a slower port gave
    (source_text)."""
    text = "%d of %d windows disturbed, left out" % (counts["disturbed"], counts["windows"])
    if counts["reasons"]:
        text += " (%s)" % ", ".join("%s %d" % kv for kv in sorted(counts["reasons"].items()))
    if source_text(counts):
        text += "; " + source_text(counts)
    if window_pairs is not None:
        text = "a pair per run (the median of its window pairs), %d window pairs in %d " \
               "run(s); %s" % (window_pairs, runs, text)
    return text


def aa_caveat(c, aa):
    """What the A/A control says of comparison c: None when nothing (its
    interval spans 1 and stays closer to 1 than the effect), else the
    sentence the verdict carries. The A/A is the same engine against
    itself in the same interleaving: how far from 1 it reads is how far
    the method alone (noise, an instance's place in memory, its place in
    the order) moves a ratio."""
    if aa is None or aa.get("ratio") is None:
        return "no A/A control"
    lo, hi = aa["ci"]
    if lo is None:
        return "the A/A control has no interval"
    if c.get("ratio") is None or c["ci"][0] is None:
        return None
    effect = abs(c["ratio"] - 1.0)
    reach = max(abs(lo - 1.0), abs(hi - 1.0))
    if reach >= effect:
        return ("the A/A control's interval [%.3f–%.3f] reaches as far from 1 as the effect: "
                "the method alone could give it" % (lo, hi))
    if lo <= 1.0 <= hi:
        return None
    # the effect's interval taken by the A/A's: does it still exclude 1?
    clo, chi = c["ci"][0] / hi, c["ci"][1] / lo
    holds = clo > 1.0 or chi < 1.0
    if holds and AA_RANGE[0] <= aa["ratio"] <= AA_RANGE[1]:
        return None
    return ("the A/A control reads %.3f [%.3f–%.3f] (the method alone moves a ratio this "
            "much); the effect %s beyond it" % (aa["ratio"], lo, hi,
                                                "holds" if holds else "does not hold"))


def verdict_text(c, aa):
    """One line: other ÷ base with its caveat, the A/A control, the
    windows left out."""
    what = "%s ÷ %s: %s" % (c["other_engine"], c["base_engine"], caveat(c))
    what += "; A/A %s" % (caveat(aa) if aa else "not run")
    note = aa_caveat(c, aa)
    if note:
        what += "; " + note
    return what + "; " + c["windows_text"]


# ---- running it ----------------------------------------------------------------

# A window is about WINDOW_US microseconds (listrx --window-us): the
# bookkeeping between two windows (~1.2 us) is then about 0.5 % of it, and a
# window is short beside a scheduler's time slice (a longer one is more
# often disturbed: 4096 packets of the 2xL1i ballast took 6 ms, and 79 % of
# such windows were). The first two blocks, which find the polls that
# length takes, run WINDOW_PACKETS / burst polls; they are the warm-up.
# docs/measuring.md, "Interleaved windows": how both were chosen.
WINDOW_US = 250
WINDOW_PACKETS = 1024


def window_polls(burst):
    """Polls per window of the calibration blocks at this burst size."""
    return max(1, WINDOW_PACKETS // int(burst))

# seconds per interleaved run
# runs per comparison, and seconds each: a comparison's pairs are its runs
# (comparison). 6 is the fewest with a 95 % interval (stats.MIN_PAIRS), but
# its interval is [min, max], which one run in another host state widens
# (1.08 beside 1.35-1.38); from 9 on it is the second smallest and largest
RUNS = 9
DURATION = 0.5


def interleave_arg(engines, aa=True, base="packet"):
    """listrx's --interleave for engines (base first), with the A/A
    control (base again, right after it) unless aa is off: the labels in
    the order of listrx's engines, and the argument."""
    labels = list(engines)
    if aa and base in labels and base + grid.AA_SUFFIX not in labels:
        labels.insert(labels.index(base) + 1, base + grid.AA_SUFFIX)
    return labels, ",".join(grid.engine_arg(e) for e in labels)


def run_interleaved(lx, spec, engines, json_path, duration=DURATION, polls=None, aa=True,
                    timeout=120, rotate=0, window_us=WINDOW_US, extra=(), base="packet"):
    """One listrx process polling with every engine of spec in turn:
    (summary, error, info) as Listrx.run gives them. spec is a sweep cell
    (profile, burst, pipeline_arg, footprint_kb); its engine is unused.
    polls: per window of the calibration blocks (default
    window_polls(burst)); window_us: the windows' length after them (0:
    every window `polls` polls). rotate: the engines
    listed from the rotate-th on, so that repetitions give each engine's
    pipeline another place in memory (an instance's placement moved an
    A/A by up to 2.5 %: docs/measuring.md)."""
    labels, _ = interleave_arg(engines, aa, base)
    r = rotate % len(labels)
    arg = ",".join(grid.engine_arg(e) for e in labels[r:] + labels[:r])
    # --engine is unused beside --interleave; the engine alone, so that a
    # /prefetch=K does not become the pipeline's default
    cell = dict(spec, engine=grid.engine_kind(labels[0]))
    polls = polls or window_polls(spec["burst"])
    cmd = lx.command(cell, json_path, duration=duration,
                     extra=["--interleave", arg, "--window-polls", str(polls),
                            "--window-us", str(window_us)] + list(extra))
    return lx.run(cmd, json_path, timeout=timeout)


def compare_engines(summaries, engines, base="packet", shared_runs=None):
    """{engine: comparison against base} for every other engine of the
    interleave, the A/A control (packet-aa) among them when it ran, and
    each one's verdict line."""
    out = {}
    aa_label = base + grid.AA_SUFFIX
    labels = engine_labels([e["engine"] for e in
                            summaries[0]["interleave"]["lcores"][0]["engines"]])
    aa = comparison(summaries, base, aa_label, shared_runs) if aa_label in labels else None
    for e in labels:
        if e == base:
            continue
        c = aa if e == aa_label else comparison(summaries, base, e, shared_runs)
        c["aa_caveat"] = None if e == aa_label else aa_caveat(c, aa)
        c["text"] = verdict_text(c, aa) if e != aa_label else "A/A %s: %s; %s" % (
            e, caveat(c), c["windows_text"])
        out[e] = c
    return out


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


PAIRED_KIND = "interleaved run"


def plan_cells(progress, cells, reps, duration):
    """Tells progress about measure_cells' runs."""
    progress.plan(PAIRED_KIND, len(cells) * reps, duration + 1.0)


# runs a cell may be given beyond RUNS when its runs left out (stalled,
# without a window pair) leave fewer than stats.MIN_PAIRS
EXTRA_RUNS = 3


def measure_cells(lx, cells, engines, out_dir, duration=DURATION, reps=RUNS, timeout=120,
                  progress=None, label_prefix=""):
    """For each cell (a sweep cell: profile, burst, pipeline_arg,
    footprint_kb; its engine unused) `reps` interleaved runs of every
    engine and the A/A control, in rounds (every cell once, then again:
    a cell's runs spread over the whole measurement, as the host's state
    changes), the engines listed rotated from one round to the next; then
    one more round at a time, up to EXTRA_RUNS, of the cells where a
    comparison kept fewer than MIN_PAIRS runs. {(burst, footprint_kb):
    {"comparisons": compare_engines, "runs": [json path], "commands":
    [...], "load": [...], "shared": [run...], "rx": [...]}}. Raises
    ValueError naming the run that failed."""
    os.makedirs(out_dir, exist_ok=True)
    got = {(int(c["burst"]), int(c["footprint_kb"])): {"summaries": [], "runs": [],
                                                        "commands": [], "load": [],
                                                        "shared": []} for c in cells}
    if progress:
        progress.begin(PAIRED_KIND)
    todo, rep = list(cells), 0
    while todo:
        for cell in todo:
            measure_one(lx, cell, engines, out_dir, duration, timeout, rep, got, progress,
                        label_prefix)
        rep += 1
        if rep < reps:
            continue
        todo = [c for c in cells if rep < reps + EXTRA_RUNS and short_of_runs(
            got[(int(c["burst"]), int(c["footprint_kb"]))], engines)]
        if todo and progress:
            progress.plan(PAIRED_KIND, len(todo), duration + 1.0)
    if progress:
        progress.end(PAIRED_KIND)
    out = {}
    for key, g in got.items():
        out[key] = {"comparisons": compare_engines(g["summaries"], engines,
                                                   shared_runs=g["shared"]),
                    "runs": g["runs"], "commands": g["commands"], "load": g["load"],
                    "shared": g["shared"], "rx": [engine_totals(s) for s in g["summaries"]]}
    return out


def measure_one(lx, cell, engines, out_dir, duration, timeout, rep, got, progress,
                label_prefix):
    """Run rep of a cell into got[(burst, footprint_kb)]."""
    key = (int(cell["burst"]), int(cell["footprint_kb"]))
    g = got[key]
    path = os.path.join(out_dir, "interleave-b%d-fp%d-r%d.json" % (key + (rep,)))
    g["load"].append(loadavg())
    s, err, info = run_interleaved(lx, cell, engines, path, duration, aa=True,
                                   timeout=timeout + duration, rotate=rep)
    if err:
        raise ValueError("interleaved run, burst %d, %d KB: %s\n  %s"
                         % (key + (err, info["command"])))
    if shared_cpu_pct(info["output"]) is not None:
        g["shared"].append(rep)
    g["summaries"].append(s)
    g["runs"].append(path)
    g["commands"].append(info["command"])
    if progress:
        progress.update("%sinterleaved b%d fp%d r%d" % ((label_prefix,) + key + (rep,)),
                        kind=PAIRED_KIND)


def short_of_runs(g, engines):
    """Whether a comparison of the cell's runs so far kept fewer runs
    than a 95 % interval needs."""
    return any(c["pairs"] < MIN_PAIRS
               for c in compare_engines(g["summaries"], engines).values())


def engine_totals(summary):
    """{label: {rx_packets, delivered, dropped, ...}} of one interleaved run,
    over its lcores."""
    out = {}
    for lc in (summary.get("interleave") or {}).get("lcores", []):
        labels = engine_labels([e["engine"] for e in lc["engines"]])
        for label, e in zip(labels, lc["engines"]):
            t = out.setdefault(label, {})
            for k in ("rx_packets", "delivered", "dropped", "tx_packets", "merged_segments",
                      "held"):
                t[k] = t.get(k, 0) + (e.get(k) or 0)
    return out
