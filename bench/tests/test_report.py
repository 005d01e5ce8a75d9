"""Tests of listrx-bench: the report."""

import contextlib
import csv
import datetime
import io
import json
import math
import os
import subprocess
import shutil
import sys
import tempfile
import unittest
from listrx_bench import backends, cli, grid, results  # noqa: E402
from listrx_bench.compare import parse_listrx_periodic, parse_testpmd  # noqa: E402
from listrx_bench.latency import latency_figures  # noqa: E402
from listrx_bench.listrx import (cachegrind_i1, find_binary, parse_topology,  # noqa: E402
                                 parse_version, profile_eal, BenchError, Listrx)
from listrx_bench.progress import Progress  # noqa: E402
from listrx_bench.report import (Doc, speedups, group_rows, plot_measure,  # noqa: E402
                                 write_report)
from listrx_bench.stats import fmt, is_unavailable, median, significant, summary  # noqa: E402

from .support import DATA, built_binary, data, read  # noqa: F401


class Report(unittest.TestCase):
    def test_report_from_recorded_results(self):
        with tempfile.TemporaryDirectory() as d:
            shutil.copy(os.path.join(DATA, "results_small.json"),
                        os.path.join(d, "results.json"))
            md, html = write_report(d)
            text = read(md)
            page = read(html)
            for heading in ("Machine and build", "Speedup over the per-packet engine",
                            "Per-stage zoom-in", "Reproduce", "All cells"):
                self.assertIn(heading, text)
                self.assertIn(heading, page)
            self.assertIn("AMD EPYC", text)
            self.assertIn("unavailable: perf: cycles not supported", text)
            self.assertIn("listrx-bench sweep", text)
            self.assertIn("| build-meta |", text)  # zoom-in row
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                self.assertIn("plots unavailable: matplotlib not importable", text)
                print("SKIPPED (plots): matplotlib not importable by %s" % sys.executable)
                self.skipTest("matplotlib not importable")
            pngs = sorted(os.listdir(os.path.join(d, "plots")))
            self.assertIn("g0_cg_i1_misses_per_packet.png", pngs)
            self.assertIn("g0_time_mpps.png", pngs)
            for p in pngs:
                size = os.path.getsize(os.path.join(d, "plots", p))
                self.assertGreater(size, 5000, p)
                self.assertIn("plots/" + p, text)
            self.assertEqual(page.count("data:image/png;base64,"), len(pngs))
            self.assertNotIn("src='plots/", page)  # self-contained

    def test_speedup_is_paired_by_rep(self):
        rows = []
        pairs = ((200.0, 100.0), (400.0, 100.0), (100.0, 100.0), (200.0, 80.0))
        for rep, (p_ns, b_ns) in enumerate(pairs):
            for engine, ns in (("packet", p_ns), ("burst", b_ns)):
                rows.append({"status": "ok", "profile": "null", "pipeline_arg": "x", "xdp": "off",
                             "footprint": "0", "footprint_kb": 0, "engine": engine, "burst": 32,
                             "rep": rep, "time_ns_per_packet": ns})
        sp = speedups(group_rows(rows))
        self.assertEqual(len(sp), 1)
        s = sp[0][4]
        # packet's rep 1 (400 ns, 2x its median of 200) stalled: its pair
        # is left out, the other three paired rep by rep: 2, 1, 2.5
        self.assertEqual(s["left_out"], [{"key": 1, "why": "packet stalled"}])
        self.assertEqual((s["ratio"], s["min"], s["max"], s["pairs"]), (2.0, 1.0, 2.5, 3))
        self.assertEqual(s["keys"], [0, 2, 3])
        # the sides printed beside it are the median pair's (rep 0)
        self.assertEqual((s["base"], s["other"], s["saving"]), (200.0, 100.0, 100.0))
        self.assertIsNone(s["shared"])  # the rows say nothing of sharing

    def test_doc_renders_one_table_three_ways(self):
        d = Doc()
        d.h(2, "title")
        d.ul(["one", "two"])
        d.table(["a", "long header"], [[1, "x"], ["wide cell", 2]])
        md = d.markdown()
        self.assertIn("## title\n\n- one\n- two", md)
        self.assertIn("| a | long header |\n|---|---|\n| 1 | x |", md)
        text = d.text().splitlines()
        self.assertEqual(text[-4:], ["a          long header", "---------  -----------",
                                     "1          x", "wide cell  2"])
        page = d.html("t")
        self.assertIn("<li>one</li>", page)
        self.assertIn("<th>long header</th>", page)


def pyplot(test):
    """matplotlib's pyplot, or the test skipped with the reason printed."""
    from listrx_bench.report import matplotlib_pyplot
    plt, why = matplotlib_pyplot()
    if why:
        print("SKIPPED: %s" % why)
        test.skipTest(why)
    return plt


def keep_figures(figs, real_close):
    """A pyplot.close that keeps the figures it is given in figs and passes
    any other argument ("all" from switch_backend) to the real close."""
    def close(fig=None):
        if fig is None or isinstance(fig, (str, int)):
            return real_close(fig) if fig is not None else real_close()
        figs.append(fig)
    return close


class PlotsAndNumbers(unittest.TestCase):
    """The plots' y range, legend and grid, and the tables' number format."""

    def test_numbers_keep_their_significant_digits(self):
        self.assertEqual(fmt(0.000496), "0.000496")
        self.assertEqual(fmt(0.0005), "0.000500")  # not 0.0005 beside 0.000496
        self.assertEqual(fmt(0.099996), "0.100")
        self.assertEqual(fmt(10.73), "10.730")
        self.assertEqual(fmt(1024.9), "1025")
        self.assertEqual(significant(123456.0), "123456")

    def test_one_legend_and_a_panel_grid(self):
        plt = pyplot(self)
        rows = []
        for fp in ("0", "32", "64", "128"):
            for engine, base in (("packet", 100.0), ("burst", 80.0)):
                for burst in (1, 64):
                    for rep in range(2):
                        # footprint 0: every value within 0.1 %, noise
                        ns = (100.0 + rep * 0.05 if fp == "0"
                              else base + burst * 0.5 + rep * 5)
                        rows.append({"status": "ok", "profile": "udp64", "pipeline_arg": "x",
                                     "xdp": "off", "footprint": fp, "footprint_kb": int(fp),
                                     "engine": engine, "burst": burst, "rep": rep,
                                     "time_ns_per_packet": ns})
        tree = group_rows(rows)
        figs = []
        real_close = plt.close
        # keep the figure to look at it; pyplot's first figure closes "all"
        # as it sets up its backend (switch_backend), which still goes through
        plt.close = keep_figures(figs, real_close)
        try:
            with tempfile.TemporaryDirectory() as d:
                path = os.path.join(d, "p.png")
                fps = next(iter(tree.values()))
                self.assertTrue(plot_measure(plt, path, "t", "ns/packet",
                                             "time_ns_per_packet", fps))
                self.assertGreater(os.path.getsize(path), 1000)
        finally:
            plt.close = real_close
        fig = figs[0]
        visible = [ax for ax in fig.axes if ax.get_visible()]
        self.assertEqual(len(visible), 4)
        # a grid: at most 3 panels a row, so two rows here
        self.assertEqual(len({round(ax.get_position().y0, 3) for ax in visible}), 2)
        self.assertEqual(len(fig.legends), 1)
        self.assertTrue(all(ax.get_legend() is None for ax in fig.axes))
        self.assertEqual(sorted(t.get_text() for t in fig.legends[0].get_texts()),
                         ["burst", "packet"])
        for ax in visible:
            # a y axis from 0: footprint 0's values within 0.1 % of each
            # other are not magnified into a noise band
            lo, hi = ax.get_ylim()
            self.assertEqual(lo, 0.0, ax.get_title())
            # two burst sizes are categories: bars, no line
            self.assertEqual(len(ax.patches), 4, ax.get_title())
            self.assertEqual([t.get_text() for t in ax.get_xticklabels()], ["1", "64"])
        real_close(fig)

    def test_many_bursts_are_lines_broken_where_not_measured(self):
        plt = pyplot(self)
        rows = [{"status": "ok", "profile": "udp64", "pipeline_arg": "x", "xdp": "off",
                 "footprint": "0", "footprint_kb": 0, "engine": engine, "burst": burst,
                 "rep": 0, "time_ns_per_packet": 100.0 + burst}
                for engine in ("packet", "burst") for burst in (1, 8, 32, 64, 256)
                if not (engine == "burst" and burst == 32)]
        figs = []
        real_close = plt.close
        plt.close = keep_figures(figs, real_close)
        try:
            with tempfile.TemporaryDirectory() as d:
                fps = next(iter(group_rows(rows).values()))
                self.assertTrue(plot_measure(plt, os.path.join(d, "p.png"), "t", "ns",
                                             "time_ns_per_packet", fps))
        finally:
            plt.close = real_close
        ax = figs[0].axes[0]
        ys = {c.get_label(): list(c.lines[0].get_ydata()) for c in ax.containers}
        # burst has no figure at 32: a gap in its line, not a line across it
        self.assertTrue(math.isnan(ys["burst"][2]))
        self.assertEqual(ys["packet"][2], 132.0)
        self.assertEqual(ax.get_ylim()[0], 0.0)
        real_close(figs[0])


if __name__ == "__main__":
    unittest.main()
