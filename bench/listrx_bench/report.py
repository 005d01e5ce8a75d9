"""report DIR: report.md + report.html (self-contained: plots as base64 PNG)."""

import base64
import html
import os
import textwrap
from collections import OrderedDict

from . import results
from .stats import MIN_PAIRS, fmt, is_unavailable, median, number, speedup, summary

PLOTS = (
    ("time_mpps", "Mpps", "throughput (wall clock, time backend)"),
    ("time_ns_per_packet", "ns/packet", "wall ns per packet (time backend)"),
    ("time_busy_ns_per_packet", "busy ns/packet",
     "busy ns per packet: TSC in non-empty polls (the cost when the source idles)"),
    ("cg_i1_misses_per_packet", "I1 misses/packet", "L1i misses per packet (cachegrind)"),
    ("cg_indirect_branches_per_packet", "indirect branches/packet",
     "indirect branches per packet (cachegrind Bi)"),
    ("cg_d1_misses_per_packet", "D1 misses/packet",
     "L1d read+write misses per packet (cachegrind, simulated L1d)"),
    ("perf_l1d_misses_per_packet", "L1d misses/packet", "L1-dcache-load-misses per packet (perf)"),
    ("perf_cycles_per_packet", "cycles/packet", "cycles per packet (perf: listrx's counters)"),
    ("perf_l1i_misses_per_packet", "L1i misses/packet", "L1-icache-load-misses per packet (perf)"),
    ("perf_ipc", "IPC", "instructions per cycle (perf)"),
    ("pcm_ipc", "IPC", "instructions per cycle of the worker core (PCM)"),
)
TABLE_MEASURES = (("time_mpps", "Mpps"), ("time_ns_per_packet", "ns/pkt"),
                  ("time_busy_ns_per_packet", "busy ns/pkt"),
                  ("time_empty_poll_share", "empty polls"),
                  ("cg_i1_misses_per_packet", "I1 miss/pkt"),
                  ("cg_indirect_branches_per_packet", "Bi/pkt"),
                  ("cg_d1_misses_per_packet", "D1 miss/pkt"), ("cg_ll_misses_per_packet",
                                                               "LL miss/pkt"),
                  ("delivered_share", "delivered share"),
                  ("cg_ir_per_packet", "instr/pkt (cg)"), ("perf_cycles_per_packet", "cyc/pkt"),
                  ("perf_l1i_misses_per_packet", "L1i miss/pkt (perf)"), ("perf_ipc", "IPC"))


def _engine_order(name):
    order = ["packet", "burst", "static", "graph"]
    return (order.index(name) if name in order else 2.5, name)


def group_rows(rows):
    """(profile, pipeline, xdp) -> footprint label -> engine -> burst -> rows."""
    tree = OrderedDict()
    for r in rows:
        if r.get("status") != "ok":
            continue
        key = (r["profile"], r["pipeline_arg"], r["xdp"])
        fp = "%s (%s KB)" % (r["footprint"], r["footprint_kb"]) if str(r["footprint"]) != str(
            r["footprint_kb"]) else "%s KB" % r["footprint_kb"]
        tree.setdefault(key, OrderedDict()).setdefault(fp, OrderedDict()).setdefault(
            r["engine"], OrderedDict()).setdefault(int(r["burst"]), []).append(r)
    return tree


def first_unavailable(rows, key):
    for r in rows:
        v = r.get(key)
        if is_unavailable(v):
            return v
        if key.startswith("cg_") and is_unavailable(r.get("cg_status")):
            return r["cg_status"]
    return None


def has_numbers(rows, key):
    return any(number(r.get(key)) is not None for r in rows)


def _cell(values):
    s = summary(values)
    if not s["n"]:
        return None, "-"
    if s["n"] == 1:
        return s["median"], fmt(s["median"])
    return s["median"], "%s [%s–%s]" % (fmt(s["median"]), fmt(s["min"]), fmt(s["max"]))


def shared_reps(rows):
    """The reps of these runs of which one shared its CPU (listrx warned),
    or None when the runs do not say (a sweep from before the warning)."""
    if not any("shared_cpu_pct" in r for r in rows):
        return None
    return {r["rep"] for r in rows if r.get("shared_cpu_pct") is not None}


def speedups(tree):
    """Speedup of each engine over packet, paired by repetition (same cell,
    same rep) with stalled pairs left out: stats.speedup, the headline's
    definition."""
    out = []
    for key, fps in tree.items():
        for fp, engines in fps.items():
            base = engines.get("packet")
            if not base:
                continue
            for engine in sorted(engines, key=_engine_order):
                if engine == "packet":
                    continue
                for burst, rows in engines[engine].items():
                    both = base.get(burst, []) + rows
                    sp = speedup({r["rep"]: r.get("time_ns_per_packet")
                                  for r in base.get(burst, [])},
                                 {r["rep"]: r.get("time_ns_per_packet") for r in rows},
                                 ("packet", engine), shared_reps(both))
                    if sp["pairs"] or sp["left_out"]:
                        out.append((key, fp, engine, burst, sp))
    return out


class Doc:
    """Blocks rendered to Markdown, HTML and plain text (a terminal): every
    table of the bench is written once, as a Doc table."""

    def __init__(self):
        self.blocks = []

    def h(self, level, text):
        self.blocks.append(("h", level, text))

    def p(self, text):
        self.blocks.append(("p", text))

    def pre(self, text):
        self.blocks.append(("pre", text))

    def ul(self, items):
        self.blocks.append(("ul", list(items)))

    def table(self, header, rows):
        self.blocks.append(("table", header, rows))

    def img(self, path, caption):
        self.blocks.append(("img", path, caption))

    def markdown(self, base_dir="."):
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append("#" * b[1] + " " + b[2])
            elif b[0] == "p":
                out.append(b[1])
            elif b[0] == "pre":
                out.append("```\n" + b[1] + "\n```")
            elif b[0] == "ul":
                out.append("\n".join("- " + item for item in b[1]))
            elif b[0] == "table":
                out.append("| " + " | ".join(b[1]) + " |\n|" + "---|" * len(b[1]) + "\n" +
                           "\n".join("| " + " | ".join(str(c) for c in row) + " |"
                                     for row in b[2]))
            elif b[0] == "img":
                out.append("![%s](%s)" % (b[2], os.path.relpath(b[1], base_dir)))
        return "\n\n".join(out) + "\n"

    def text(self):
        """For a terminal: headings as "== title", tables in aligned
        columns, images by path."""
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append("%s %s" % ("=" * max(3 - b[1], 1) * 2, b[2]))
            elif b[0] in ("p", "pre"):
                out.append(b[1].replace("`", "") if b[0] == "p" else b[1])
            elif b[0] == "ul":
                out.append("\n".join("- " + item for item in b[1]))
            elif b[0] == "table":
                cells = [[str(c) for c in b[1]]] + [[str(c) for c in row] for row in b[2]]
                widths = [max(len(row[i]) for row in cells if i < len(row))
                          for i in range(len(b[1]))]
                lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip()
                         for row in cells]
                out.append("\n".join(lines[:1] + ["  ".join("-" * w for w in widths)]
                                     + lines[1:]))
            elif b[0] == "img":
                out.append("(plot: %s)" % b[1])
        return "\n\n".join(out) + "\n"

    def html(self, title):
        e = html.escape
        out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>%s</title>" % e(title),
               "<style>body{font-family:sans-serif;max-width:1200px;margin:auto;padding:1em}"
               "table{border-collapse:collapse;margin:1em 0;font-size:90%}"
               "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
               ".wide{overflow-x:auto}th{white-space:nowrap}"
               "th{background:#eee}td:first-child{text-align:left}"
               "pre{background:#f6f6f6;padding:.5em;overflow-x:auto}"
               "img{max-width:100%}</style></head><body>"]
        for b in self.blocks:
            if b[0] == "h":
                out.append("<h%d>%s</h%d>" % (b[1], e(b[2]), b[1]))
            elif b[0] == "p":
                out.append("<p>%s</p>" % e(b[1]).replace("`", ""))
            elif b[0] == "pre":
                out.append("<pre>%s</pre>" % e(b[1]))
            elif b[0] == "ul":
                out.append("<ul>%s</ul>" % "".join("<li>%s</li>" % e(item).replace("`", "")
                                                  for item in b[1]))
            elif b[0] == "table":
                out.append("<div class='wide'><table><tr>%s</tr>%s</table></div>" % (
                    "".join("<th>%s</th>" % e(str(c)) for c in b[1]),
                    "".join("<tr>%s</tr>" % "".join("<td>%s</td>" % e(str(c)) for c in row)
                            for row in b[2])))
            elif b[0] == "img":
                with open(b[1], "rb") as f:
                    data = base64.b64encode(f.read()).decode()
                out.append("<figure><img alt='%s' src='data:image/png;base64,%s'>"
                           "<figcaption>%s</figcaption></figure>" % (e(b[2]), data, e(b[2])))
        out.append("</body></html>")
        return "\n".join(out)


def matplotlib_pyplot():
    """pyplot with a file-only backend, or the reason it cannot be used."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt, None
    except ImportError as e:
        return None, "matplotlib not importable (%s; Debian: python3-matplotlib)" % e


PANEL_COLUMNS = 3
LEGEND_INCHES = 0.4  # the figure's one legend, below the panels
# at most this many burst sizes are drawn as categories (grouped bars);
# more as lines over a log2 axis
CATEGORIES_MAX = 3
HATCH_UNRESOLVED = "//"


def zero_based(ax, values):
    """A y axis that starts at 0 (or below, for negative values) and ends a
    little above the largest value: a figure's size is read against zero,
    never magnified into a noise band."""
    vals = [v for v in values if v is not None]
    lo = min([0.0] + vals)
    hi = max([0.0] + vals)
    if hi == lo:
        hi = lo + 1.0
    pad = 0.08 * (hi - lo)
    ax.set_ylim(lo - (pad if lo < 0 else 0.0), hi + (pad if hi > 0 else 0.0))


def grouped_bars(ax, categories, series, colors):
    """Bars per category, one per series (label, [(median, min, max) or
    None per category], hatched): whiskers from min to max; a missing
    point is no bar (never a line through it). Returns {label: handle}."""
    from matplotlib.patches import Patch
    handles = {}
    n = max(len(series), 1)
    width = 0.8 / n
    for i, (label, points, hatched) in enumerate(series):
        xs, ys, lo, hi, hatch = [], [], [], [], []
        for j, pt in enumerate(points):
            if pt is None or pt[0] is None:
                continue
            xs.append(j + (i - (n - 1) / 2) * width)
            ys.append(pt[0])
            lo.append(pt[0] - (pt[1] if pt[1] is not None else pt[0]))
            hi.append((pt[2] if pt[2] is not None else pt[0]) - pt[0])
            hatch.append(hatched[j] if hatched else False)
        if not xs:
            continue
        bars = ax.bar(xs, ys, width * 0.9, yerr=[lo, hi], capsize=2, label=label,
                      color=colors[i % len(colors)], error_kw={"lw": 0.8})
        for bar, h in zip(bars, hatch):
            if h:
                bar.set_hatch(HATCH_UNRESOLVED)
        # the legend's swatch is the series' colour, never one bar's hatch
        handles[label] = Patch(facecolor=colors[i % len(colors)], label=label)
    ax.set_xticks(range(len(categories)))
    ax.set_xticklabels([str(c) for c in categories])
    return handles


def plot_measure(plt, path, title, ylabel, key, fps):
    """One PNG: a panel per footprint in a grid of up to PANEL_COLUMNS
    columns, one series per engine (median of the reps, whiskers from min
    to max), one legend for the figure. A few burst sizes are categories:
    grouped bars; more are a log2 axis with lines drawn only between
    measured points. The y axis starts at 0."""
    from matplotlib.ticker import FuncFormatter, ScalarFormatter
    panels = [(fp, engines) for fp, engines in fps.items()
              if any(has_numbers(rows, key) for e in engines.values() for rows in e.values())]
    if not panels:
        return False
    bursts = sorted({b for _, engines in panels for e in engines.values()
                     for b, rows in e.items() if has_numbers(rows, key)})
    engines_all = sorted({e for _, engines in panels for e in engines}, key=_engine_order)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    cols = min(len(panels), PANEL_COLUMNS)
    nrows = (len(panels) + cols - 1) // cols
    height = 3.3 * nrows + LEGEND_INCHES
    fig, axes = plt.subplots(nrows, cols, figsize=(4.4 * cols, height),
                             squeeze=False, sharey=False)
    handles = {}
    for i, (fp, engines) in enumerate(panels):
        ax = axes[i // cols][i % cols]
        series, values = [], []
        for engine in engines_all:
            points = []
            for b in bursts:
                st = summary(r.get(key) for r in engines.get(engine, {}).get(b, []))
                points.append((st["median"], st["min"], st["max"]) if st["n"] else None)
                values += [st["min"], st["max"]] if st["n"] else []
            series.append((engine, points, None))
        if len(bursts) <= CATEGORIES_MAX:
            handles.update(grouped_bars(ax, bursts, series, colors))
        else:
            for k, (engine, points, _) in enumerate(series):
                if not any(points):
                    continue
                # a burst this engine has no figure for breaks its line
                ys = [p[0] if p else float("nan") for p in points]
                err = [[p[0] - p[1] if p else 0 for p in points],
                       [p[2] - p[0] if p else 0 for p in points]]
                line = ax.errorbar(bursts, ys, yerr=err, marker="o", ms=3, capsize=2,
                                   label=engine, color=colors[k % len(colors)])
                handles.setdefault(engine, line)
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: "%d" % v))
        zero_based(ax, values)
        plain = ScalarFormatter(useOffset=False)
        plain.set_scientific(False)
        ax.yaxis.set_major_formatter(plain)
        ax.set_xlabel("burst size", fontsize=9)
        if i % cols == 0:
            ax.set_ylabel(ylabel, fontsize=9)
        ax.set_title("footprint %s" % fp, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    for j in range(len(panels), nrows * cols):
        axes[j // cols][j % cols].set_visible(False)
    finish(plt, fig, path, title, handles, height)
    return True


def legend_rows(handles, width_in):
    """How many rows the figure's legend takes at its width (about 2.2
    inches an entry)."""
    cols = max(1, min(len(handles), int(width_in // 2.2)))
    return cols, max(1, -(-len(handles) // cols))


def finish(plt, fig, path, title, handles, height):
    """The figure's one legend below the panels (as many rows as its
    width needs), its title, the PNG."""
    cols, rows = legend_rows(handles, fig.get_figwidth())
    if rows > 1:
        height += (rows - 1) * LEGEND_INCHES
        fig.set_figheight(height)
    fig.legend(list(handles.values()), list(handles), loc="lower center",
               ncol=cols, fontsize=9, frameon=False)
    # wrapped to the figure's width (about 14 characters an inch at 10 pt)
    fig.suptitle(textwrap.fill(title, int(fig.get_figwidth() * 14)), fontsize=10)
    fig.tight_layout(rect=(0, rows * LEGEND_INCHES / height, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def speedup_chart(plt, path, title, panels):
    """The headline's answer in one figure: a panel per build flavour
    (panels: [(panel title, bursts, [(label, [(median, min, max) or None
    per burst], [resolved per burst])])]), burst sizes as categories, a bar
    per engine and footprint with [min–max] whiskers, a line at 1x (faster
    than per packet above it); an unresolved bar is hatched."""
    panels = [p for p in panels if any(any(pts) for _, pts, _ in p[2])]
    if not panels:
        return False
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    height = 3.8 + LEGEND_INCHES
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), height),
                             squeeze=False, sharey=True)
    handles, values = {}, [1.0]
    for ax, (name, bursts, series) in zip(axes[0], panels):
        handles.update(grouped_bars(ax, bursts, [(label, pts, [not r for r in res])
                                                 for label, pts, res in series], colors))
        values += [v for _, pts, _ in series for p in pts if p for v in p[1:] if v is not None]
        ax.axhline(1.0, color="black", lw=0.8, ls="--")
        ax.set_xlabel("burst size", fontsize=9)
        ax.set_title(name, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(True, axis="y", alpha=0.3)
    for ax in axes[0]:
        zero_based(ax, values)
    axes[0][0].set_ylabel("speedup over per-packet (×)", fontsize=9)
    finish(plt, fig, path, title, handles, height)
    return True


def delta_chart(plt, path, title, measures, labels, deltas):
    """Signed differences, a panel per measure (measures: [name]), a
    horizontal bar per label; deltas[label][measure] (None: not measured).
    Zero is drawn; left of it the engine saves, right of it it spends."""
    if not labels:
        return False
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    height = 0.35 * len(labels) + 1.4 + LEGEND_INCHES
    fig, axes = plt.subplots(1, len(measures), figsize=(3.0 * len(measures), height),
                             squeeze=False, sharey=True)
    for ax, m in zip(axes[0], measures):
        vals = [deltas[lab].get(m) for lab in labels]
        ys = range(len(labels))
        ax.barh([y for y, v in zip(ys, vals) if v is not None],
                [v for v in vals if v is not None],
                color=[colors[0] if v <= 0 else colors[1] for v in vals if v is not None])
        ax.axvline(0.0, color="black", lw=0.8)
        lo = min([0.0] + [v for v in vals if v is not None])
        hi = max([0.0] + [v for v in vals if v is not None])
        pad = 0.1 * ((hi - lo) or 1.0)
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_title(m, fontsize=9)
        ax.tick_params(labelsize=8)
        ax.grid(True, axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(labels)))
    axes[0][0].set_yticklabels(labels)
    axes[0][0].invert_yaxis()
    finish(plt, fig, path, title, {}, height)
    return True


def _key_names(rows, prefix, suffix):
    """The NAMEs of the keys prefix + NAME + suffix in rows, first seen first."""
    return list(dict.fromkeys(k[len(prefix):-len(suffix)] for r in rows for k in r
                              if k.startswith(prefix) and k.endswith(suffix)))


def zoom_tables(doc, tree, zoom_burst):
    """Seed 000's "zoom-in": per stage ns/packet for the per-packet and the
    burst engine side by side (TSC cycles per stage at stats level cycles ÷
    tsc_hz), plus cachegrind's per-stage I1 misses where measured."""
    any_table = False
    for key, fps in tree.items():
        for fp, engines in fps.items():
            if "packet" not in engines or "burst" not in engines:
                continue
            common = sorted(set(engines["packet"]) & set(engines["burst"]))
            if not common:
                continue
            burst = zoom_burst if zoom_burst in common else (64 if 64 in common else common[-1])
            prow, brow = engines["packet"][burst], engines["burst"][burst]
            stages = _key_names(prow + brow, "stage.", ".ns_per_packet")
            groups = _key_names(prow + brow, "cg_stage.", ".i1_misses_per_packet")
            if not stages and not groups:
                continue
            any_table = True
            doc.h(3, "%s, pipeline %s, xdp %s, footprint %s, burst %d" % (key[0], key[1], key[2],
                                                                           fp, burst))
            if stages:
                rows = []
                tp = tb = 0.0
                for st in stages:
                    k = "stage.%s.ns_per_packet" % st
                    p, b = median(r.get(k) for r in prow), median(r.get(k) for r in brow)
                    if p is not None and b is not None:
                        tp, tb = tp + p, tb + b
                    rows.append([st, fmt(p, 2), fmt(b, 2),
                                 fmt(p - b, 2) if p is not None and b is not None else "-",
                                 "%.0f %%" % ((p - b) / p * 100) if p and b is not None else "-"])
                rows.append(["**sum of stages**", fmt(tp, 2), fmt(tb, 2), fmt(tp - tb, 2),
                             "%.0f %%" % ((tp - tb) / tp * 100) if tp else "-"])
                doc.table(["stage", "packet ns/pkt", "burst ns/pkt", "saved ns/pkt", "saved"],
                          rows)
            else:
                doc.p("No per-stage cycles in these rows (run the sweep with --zoom).")
            if groups:
                rows = []
                d_side = any(k.startswith("cg_stage.") and k.endswith(".d1_misses_per_packet")
                             for r in prow + brow for k in r)
                whats = ("i1_misses", "ir", "indirect_branches") + (
                    ("d1_misses", "ll_misses") if d_side else ())
                for g in groups:
                    cells = [g]
                    for what in whats:
                        k = "cg_stage.%s.%s_per_packet" % (g, what)
                        cells += [fmt(median(r.get(k) for r in prow), 3),
                                  fmt(median(r.get(k) for r in brow), 3)]
                    rows.append(cells)
                doc.p("Cachegrind, by function (functions attributed to stages by name; "
                      "inlined code counts in its caller): the I side listification saves "
                      "(I1 misses, instructions, indirect branches) beside the D side it "
                      "spends (D1 and last-level misses):")
                doc.table(["code", "I1 miss packet", "I1 miss burst", "instr packet",
                           "instr burst", "Bi packet", "Bi burst"] + (
                               ["D1 miss packet", "D1 miss burst", "LL miss packet",
                                "LL miss burst"] if d_side else []), rows)
    if not any_table:
        doc.p("No per-stage figures: the sweep needs both the packet and burst engines "
              "(and --zoom for ns, the cachegrind backend for I1 misses).")


def perf_stage_tables(doc, tree, zoom_burst):
    """listrx's per-stage counters (perf backend, --pmu-stages): per stage
    and event, the median per packet, for each engine that read them."""
    any_table = False
    for key, fps in tree.items():
        for fp, engines in fps.items():
            for engine in sorted(engines, key=_engine_order):
                bursts = sorted(engines[engine])
                burst = zoom_burst if zoom_burst in bursts else (64 if 64 in bursts else bursts[-1])
                rs = engines[engine][burst]
                cols, stages = [], []
                for r in rs:
                    for k in r:
                        if k.startswith("stage.") and ".perf_" in k:
                            st, measure = k[len("stage."):].split(".perf_", 1)
                            if st not in stages:
                                stages.append(st)
                            if measure not in cols:
                                cols.append(measure)
                if not stages or not any(has_numbers(rs, "stage.%s.perf_%s" % (st, c))
                                         for st in stages for c in cols):
                    continue
                any_table = True
                fake = any(r.get("perf_source") == "fake" for r in rs)
                doc.h(3, "%s, pipeline %s, xdp %s, footprint %s, engine %s, burst %d" % (
                    key[0], key[1], key[2], fp, engine, burst))
                if fake:
                    doc.p("**Source: listrx's fake counter source: software test values, "
                          "not hardware counts.**")
                doc.table(["stage"] + [c.replace("_per_packet", "/pkt") for c in cols],
                          [[st] + [_cell(r.get("stage.%s.perf_%s" % (st, c)) for r in rs)[1]
                                   for c in cols] for st in stages])
    if not any_table:
        doc.p("No per-stage counters: run the sweep with --counters perf on a machine with a "
              "PMU (listrx --pmu-stages; burst, hybrid and graph engines).")


def flavour_of(meta):
    """The build flavour of a sweep's binary: retpoline or plain."""
    return "retpoline" if (meta.get("machine") or {}).get("retpoline") else "plain"


def _report_summary(doc, meta, rows, ok, skipped, failed):
    """The run counts, and warnings on cells that dropped or idled."""
    doc.p("%d runs (%d ok, %d skipped, %d failed), sweep of %s to %s. Every figure is the "
          "median over repetitions with [min–max], but the speedups: paired comparisons "
          "with their 95 %% interval (below)." % (
              len(rows), len(ok), len(skipped), len(failed), meta.get("created", "?"),
              meta.get("finished", "?")))

    low = sorted({r["cell"] for r in ok if number(r.get("delivered_share")) is not None
                  and number(r["delivered_share"]) < 0.5})
    if low:
        doc.p("**Warning: %d cell(s) delivered less than half of what they received** (their "
              "figures time drops, not the pipeline's work; see the drop_reasons column of "
              "results.csv): %s%s" % (len(low), ", ".join(low[:6]), " ..." if len(low) > 6 else ""))

    idle = sorted({r["cell"] for r in ok if r.get("ns_per_packet_headline") == "busy"})
    if idle:
        doc.p("%d cell(s) had a source that idled (at least half of the polls empty): their "
              "wall ns/packet is the source's pace, and their headline is busy ns/packet "
              "(TSC in non-empty polls, column busy ns/pkt): %s%s" % (
                  len(idle), ", ".join(idle[:6]), " ..." if len(idle) > 6 else ""))
    else:
        doc.p("ns/packet is wall time per packet: every source kept the polls busy (listrx's "
              "ns_per_packet_headline is wall in every run that says).")


def _report_machine(doc, meta):
    """The machine, build and counter backends the sweep ran on."""
    machine = meta.get("machine", {})
    doc.h(2, "Machine and build")
    doc.table(["what", "value"], [
        ["CPU", machine.get("cpu_model") or machine.get("cpu") or "?"],
        ["cores / hardware threads", "%s / %s" % (machine.get("cores"),
                                                  machine.get("hardware_threads"))],
        ["L1i", "%s KiB, %s-byte lines, %s (from %s)" % (
            (machine.get("l1i_bytes") or 0) // 1024, machine.get("l1i_line"),
            "%d-way" % machine["l1i_assoc"] if (machine.get("l1i_assoc") or 0) > 0 else
            "fully associative" if machine.get("l1i_assoc") == -1 else "associativity unknown",
            machine.get("l1i_source"))],
        ["cachegrind --I1", meta.get("cachegrind_i1", "-")],
        ["cachegrind --D1 / --LL", "%s / %s" % (meta.get("cachegrind_caches", {}).get("D1", "-"),
                                                 meta.get("cachegrind_caches", {}).get("LL", "-"))],
        ["cachegrind geometry", meta.get("cachegrind_caches_source", "host")],
        ["DPDK", machine.get("dpdk_version") or "?"],
        ["listrx", "%s, %s build, retpoline %s" % (machine.get("listrx_version"),
                                                    machine.get("build"),
                                                    "yes" if machine.get("retpoline") else "no")],
        ["git", machine.get("git", "-")],
        ["kernel", machine.get("kernel", "?")],
        ["turbo", machine.get("turbo", "?")], ["isolcpus", machine.get("isolcpus", "?")],
        ["EAL", "-l %s %s" % (machine.get("lcores"), machine.get("eal"))],
    ])
    doc.h(3, "Counter backends")
    doc.table(["backend", "status"], [[k, v] for k, v in meta.get("backends", {}).items()])


def _report_plots(doc, meta, tree, plt, plt_error, plot_dir):
    """A plot per measure and profile, or why there is none."""
    doc.h(2, "Plots")
    if plt is None:
        doc.p("plots unavailable: " + plt_error)
    for gi, (key, fps) in enumerate(tree.items()):
        doc.h(3, "profile %s, pipeline %s, xdp %s" % key)
        all_rows = [r for e in fps.values() for b in e.values() for rr in b.values() for r in rr]
        for mi, (mkey, ylabel, caption) in enumerate(PLOTS):
            if not has_numbers(all_rows, mkey):
                reason = first_unavailable(all_rows, mkey)
                if reason:
                    doc.p("%s: %s" % (caption, reason))
                continue
            if plt is None:
                continue
            path = os.path.join(plot_dir, "g%d_%s.png" % (gi, mkey))
            if plot_measure(plt, path, "%s — %s build, %s, %s" % (
                    caption, flavour_of(meta), key[0], key[1]), ylabel, mkey, fps):
                doc.img(path, "%s, %s build: vs burst size, an engine per colour, a panel "
                        "per footprint" % (caption, flavour_of(meta)))


def _report_speedup(doc, tree):
    """The paired speedup over the per-packet engine, with its verdict."""
    doc.h(2, "Speedup over the per-packet engine")
    doc.p("The median of packet ns/pkt ÷ engine ns/pkt, paired by repetition (same cell, "
          "same rep), a pair with a stalled side left out, with the 95 %% interval of that "
          "median; the two sides' ns/pkt are the median pair's, so their ratio is the speedup "
          "and their difference the saving (docs/measuring.md, \"One comparison\"): > 1 means "
          "faster than per-packet processing; resolved when the interval excludes 1 (%d pairs "
          "at least)." % MIN_PAIRS)
    sp = speedups(tree)
    if sp:
        doc.table(["profile/pipeline", "footprint", "engine", "burst", "packet ns/pkt",
                   "engine ns/pkt", "saved ns/pkt", "speedup [95 % interval]",
                   "pairs (left out, shared CPU)", "verdict"],
                  [["%s %s" % (k[0], k[1]), fp, e, b] + (
                      ["-"] * 4 if s["ratio"] is None else
                      [fmt(s["base"], 1), fmt(s["other"], 1), fmt(s["saving"], 1),
                       "%s [%s–%s]" % (fmt(s["ratio"]), fmt(s["ci"][0]), fmt(s["ci"][1]))]) +
                   ["%d (%d, %s)" % (s["pairs"], len(s["left_out"]),
                                     "?" if s["shared"] is None else s["shared"]),
                    s["resolution"]]
                   for k, fp, e, b, s in sp])
    else:
        doc.p("No speedup: the sweep has no packet engine or no time figures.")


def _report_stages(doc, tree, ok, zoom_burst):
    """The per-stage zoom-in and the per-stage perf counters."""
    doc.h(2, "Per-stage zoom-in (per-packet vs burst)")
    zoom_tables(doc, tree, zoom_burst)

    doc.h(2, "Per-stage counters (perf, rdpmc around stage calls)")
    perf_rows = [r for r in ok if "perf_source" in r]
    if perf_rows:
        sources = sorted({str(r.get("perf_source")) for r in perf_rows})
        doc.p("Counter source: %s (%s mode)%s." % (
            ", ".join(sources), ", ".join(sorted({str(r.get("perf_mode")) for r in perf_rows})),
            "; **fake is listrx's software test source, not hardware counts**"
            if "fake" in sources else ""))
    perf_stage_tables(doc, tree, zoom_burst)


def _report_cells(doc, tree, skipped, failed):
    """Every cell's figures, then the skipped and failed runs."""
    doc.h(2, "All cells")
    for key, fps in tree.items():
        doc.h(3, "profile %s, pipeline %s, xdp %s" % key)
        measures = [(k, n) for k, n in TABLE_MEASURES
                    if has_numbers([r for e in fps.values() for b in e.values()
                                    for rr in b.values() for r in rr], k)]
        trows = []
        for fp, engines in fps.items():
            for engine in sorted(engines, key=_engine_order):
                for burst, rs in sorted(engines[engine].items()):
                    trows.append([fp, engine, burst] + [_cell(r.get(k) for r in rs)[1]
                                                         for k, _ in measures] + [len(rs)])
        doc.table(["footprint", "engine", "burst"] + [n for _, n in measures] + ["reps"], trows)
    if skipped or failed:
        doc.h(3, "Skipped and failed runs")
        seen = OrderedDict()
        for r in skipped + failed:
            seen.setdefault(r["status"], []).append(r["cell"])
        doc.table(["status", "cells"], [[s, "%d: %s%s" % (len(c), ", ".join(c[:3]),
                                                           " ..." if len(c) > 3 else "")]
                                        for s, c in seen.items()])


def _report_reproduce(doc, meta, ok):
    """The sweep command and one run of each kind, as it ran."""
    doc.h(2, "Reproduce")
    doc.p("The sweep (run from the repository root after scripts/setup):")
    doc.pre(meta.get("command", "?"))
    doc.p("then `listrx-bench report DIR`. One run of each kind, as the sweep ran it:")
    examples = []
    for k in ("command", "perf_command", "perfstat_command", "cachegrind_command"):
        for r in ok:
            if r.get(k):
                examples.append(r[k])
                break
    doc.pre("\n".join(examples) or "-")


def write_report(directory, title="listrx results", zoom_burst=None):
    meta, rows = results.load(directory)
    tree = group_rows(rows)
    plot_dir = os.path.join(directory, "plots")
    os.makedirs(plot_dir, exist_ok=True)
    plt, plt_error = matplotlib_pyplot()
    doc = Doc()
    doc.h(1, title)
    ok = [r for r in rows if r.get("status") == "ok"]
    skipped = [r for r in rows if str(r.get("status", "")).startswith("skipped")]
    failed = [r for r in rows if str(r.get("status", "")).startswith("failed")]
    _report_summary(doc, meta, rows, ok, skipped, failed)
    _report_machine(doc, meta)
    _report_plots(doc, meta, tree, plt, plt_error, plot_dir)
    _report_speedup(doc, tree)
    _report_stages(doc, tree, ok, zoom_burst)
    _report_cells(doc, tree, skipped, failed)
    _report_reproduce(doc, meta, ok)

    md_path = os.path.join(directory, "report.md")
    html_path = os.path.join(directory, "report.html")
    with open(md_path, "w") as f:
        f.write(doc.markdown(directory))
    with open(html_path, "w") as f:
        f.write(doc.html(title))
    return md_path, html_path


def add_parser(sub):
    p = sub.add_parser("report", help="Markdown + self-contained HTML report with plots")
    p.add_argument("dir", help="a sweep's output directory")
    p.add_argument("--title", default="listrx results")
    p.add_argument("--zoom-burst", type=int, default=None,
                   help="burst size of the per-stage zoom-in table (default: 64 or the "
                   "largest measured)")
    p.set_defaults(func=cmd_report)


def cmd_report(args, argv):
    md, html_path = write_report(args.dir, title=args.title, zoom_burst=args.zoom_burst)
    print("wrote %s and %s" % (md, html_path))
    return 0
