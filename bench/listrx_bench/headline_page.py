"""The headline's page: its one table, the verdict and tables on stdout and
in headline.md, and its report (report.md/.html: the speedup chart, "I side
saved, D side spent", each part's plots). headline.py runs the
measurement; this module only renders headline.json's document.
"""

import json
import os

from . import inputs, interleave, report
from .progress import _clock
from .stats import fmt, number
from .sweep import LOW_DELIVERY

FLAVOURS = ("plain", "retpoline")

# the columns of the one headline table (stdout, headline.md, report)
INDIRECT = "indirect/pkt (Bi + thunks)"
HEADER = ["engine", "burst", "footprint KB", "Mpps", "ns/pkt", "packet ns/pkt, same pairs",
          "saved ns/pkt", "speedup [95 % interval]", "verdict", "reps used/run (pairs)",
          "I1 miss/pkt", "D1 miss/pkt", "LL miss/pkt", "instr/pkt", INDIRECT, "stage ns/pkt",
          "delivered %"]
STAGE_SHORT = {"xdp": "xdp", "build-meta": "bm", "gro": "gro", "l3-demux": "l3"}



def ballast(h):
    if not h["footprint_kb"]:
        return "no ballast"
    label = h.get("footprint")
    return "%d KB ballast%s" % (h["footprint_kb"], " (%s)" % label
                               if label and label != str(h["footprint_kb"]) else "")


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


def part_key(inp, flavour):
    """An input's flavour in headline.json's per-part maps (contention,
    adaptive) and its directory: the flavour alone for hot frames, as
    before there were inputs; INPUT/FLAVOUR for the others."""
    return flavour if inp == "hot" else "%s/%s" % (inp, flavour)


def doc_inputs(doc):
    return doc.get("input_order") or ["hot"]


def parts(doc):
    """(input, flavour) in the page's order: each input as given, each
    flavour."""
    return [(i, f) for i in doc_inputs(doc) for f in FLAVOURS]


def part_rows(doc, inp, flavour):
    return [h for h in doc["rows"] if h["flavour"] == flavour and h.get("input", "hot") == inp]


def part_title(doc, inp, flavour):
    title = flavour_title(flavour, doc)
    if doc_inputs(doc) == ["hot"]:
        return title
    return "%s: %s" % (inputs.LABELS[inp], title)


def input_text(doc, inp):
    """What an input was, above its tables (headline.json's "inputs")."""
    info = (doc.get("inputs") or {}).get(inp) or {}
    if isinstance(info, str):
        return info
    if inp == "cold":
        return ("net_synth `%s`: the buffers spread over %s MiB (4 × the %s MiB LLC), handed "
                "out in a shuffled order, the frame heads written with non-temporal stores. "
                "Cachegrind simulates a non-temporal store as a cached one: the misses it "
                "counts for these frames are net_synth's writes of each mbuf and frame head, "
                "not the stages' first read of the head." % (
                    info.get("profile"), info.get("cold_mb"), info.get("llc_mib")))
    sent = info.get("sent") or {}
    rate = ("the sender made %.2f Mpps over the input's runs (%d frames, %d refused)" % (
        sent["mpps"], sent.get("sent", 0), sent.get("failed", 0)) if sent.get("mpps")
        else "the sender's rate: unavailable: %s" % sent.get("error", "not recorded"))
    wait = ("after a poll short of the burst the next waits %d us, as a NIC's interrupt "
            "moderation holds back NAPI's next poll (listrx --coalesce-us)" % info["coalesce_us"]
            if info.get("coalesce_us") else "the lcore polls again at once after a short poll "
            "(no coalescing)")
    return ("%s on the veth %s, fed by %s; %s%s; %s. The verdicts' ns/packet are over the "
            "polls that received frames (empty polls and the waits are waiting for the "
            "sender). Cachegrind %s." % (
                info.get("pmd"), info.get("veth"), info.get("sender"), rate,
                "; net_af_xdp " + info["af_xdp"] if info.get("af_xdp") else "", wait,
                inputs.KERNEL_CACHEGRIND))


def add_verdict(d, doc):
    d.h(2, "Verdict (burst %d)" % doc["verdict_burst"])
    d.ul([v["text"] for v in doc["verdicts"]] or ["no verdict: no cell of a listified engine "
                                                  "at burst %d" % doc["verdict_burst"]])


def add_tables(d, doc, per_part=None):
    """Each input's and flavour's table, with its contention and
    repetitions lines, and per_part(d, input, flavour, rows)'s blocks after
    it (the report's)."""
    for inp, flavour in parts(doc):
        hrows = part_rows(doc, inp, flavour)
        d.h(2, part_title(doc, inp, flavour))
        if not hrows:
            status = (doc.get("inputs") or {}).get(inp)
            d.p(str(status if isinstance(status, str) else doc["flavours"].get(flavour)))
            continue
        if inp != "hot":
            d.p(input_text(doc, inp))
        key = part_key(inp, flavour)
        c = doc["contention"][key]
        a = doc["adaptive"].get(key, {})
        if doc.get("method") == "interleave":
            # the windows are the runs', shared by every engine's comparison:
            # once, without each comparison's count of window pairs
            w = [interleave.windows_text(h["comparison"]["windows"])
                 if (h.get("comparison") or {}).get("windows") else h["windows_text"]
                 for h in hrows if h.get("windows_text")
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
        if per_part:
            per_part(d, inp, flavour, hrows)


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
    for inp, flavour in parts(doc):
        hrows = part_rows(doc, inp, flavour)
        if not hrows:
            continue
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
        panels.append((part_title(doc, inp, flavour), bursts, series))
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

    def per_part(d, inp, flavour, hrows):
        key = part_key(inp, flavour)
        sides = side_deltas(hrows, doc["verdict_burst"])
        d.h(3, "I side saved, D side spent (burst %d, per packet, vs packet engine)"
            % doc["verdict_burst"])
        d.table(["engine", "footprint KB"] + [n for n, _ in SIDES] + ["speedup"],
                [[e, fp] + ["-" if deltas[n] is None else "%+.2f" % deltas[n]
                            for n, _ in SIDES] + [fmt(sp)] for e, fp, deltas, sp in sides])
        png = os.path.join(out_dir, "sides-%s.png" % key.replace("/", "-"))
        labels = ["%s, %d KB" % (e, fp) for e, fp, _, _ in sides]
        if plt is not None and report.delta_chart(
                plt, png, "I side saved, D side spent, %s, burst %d (engine − packet; "
                "left of 0: saved)" % (part_title(doc, inp, flavour), doc["verdict_burst"]),
                [n for n, _ in SIDES],
                labels, {lab: deltas for lab, (_, _, deltas, _) in zip(labels, sides)}):
            d.img(png, "I side saved, D side spent, %s: a bar per engine and footprint, "
                  "a panel per measure" % part_title(doc, inp, flavour))
        for plot, caption in (("time_mpps", "Mpps"), ("cg_i1_misses_per_packet", "I1 misses"),
                              ("cg_d1_misses_per_packet", "D1 misses")):
            png = os.path.join(out_dir, key, "plots", "g0_%s.png" % plot)
            if os.path.exists(png):
                d.img(png, "%s, %s: a bar per engine and burst size, a panel per "
                      "footprint" % (caption, part_title(doc, inp, flavour)))
        d.p("All figures of this part: %s/report.md (per-stage zoom-in, all cells)." % key)

    add_tables(d, doc, per_part)
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
              doc["pipeline"], doc["profile"], timing.rstrip("."), doc["cg_burst"],
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
