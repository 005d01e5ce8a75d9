"""Tests of listrx-bench: the report."""

import contextlib
import csv
import datetime
import io
import json
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
from listrx_bench.report import (speedups, group_rows, plot_measure,  # noqa: E402
                                 write_report, y_limits)
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
        for rep, (p_ns, b_ns) in enumerate(((200.0, 100.0), (300.0, 100.0), (100.0, 100.0))):
            for engine, ns in (("packet", p_ns), ("burst", b_ns)):
                rows.append({"status": "ok", "profile": "null", "pipeline_arg": "x", "xdp": "off",
                             "footprint": "0", "footprint_kb": 0, "engine": engine, "burst": 32,
                             "rep": rep, "time_ns_per_packet": ns})
        sp = speedups(group_rows(rows))
        self.assertEqual(len(sp), 1)
        s = sp[0][4]
        self.assertEqual((s["median"], s["min"], s["max"], s["n"]), (2.0, 1.0, 3.0, 3))


class PlotsAndNumbers(unittest.TestCase):
    """The plots' y range, legend and grid, and the tables' number format."""

    def test_noise_is_drawn_flat_and_variation_autoscaled(self):
        # 0.5 % apart: noise, a range of +-5 % around it
        lo, hi = y_limits([10.0, 10.05, 10.02])
        self.assertLess(lo, 10.0)
        self.assertGreater(hi, 10.05)
        self.assertAlmostEqual(hi - lo, 2 * 0.05 * 10.05)
        # 2 % apart: a real difference, left to matplotlib's autoscale
        self.assertIsNone(y_limits([10.0, 10.2]))
        self.assertIsNone(y_limits([]))
        self.assertEqual(y_limits([0.0, 0.0]), (-1.0, 1.0))
        # near zero beside a panel at 500: zero, on the figure's scale
        lo, hi = y_limits([-0.004, 0.001], scale=500.0)
        self.assertAlmostEqual(hi - lo, 2 * 0.05 * 500)
        self.assertIsNone(y_limits([-0.004, 0.001]))

    def test_numbers_keep_their_significant_digits(self):
        self.assertEqual(fmt(0.000496), "0.000496")
        self.assertEqual(fmt(0.0005), "0.000500")  # not 0.0005 beside 0.000496
        self.assertEqual(fmt(0.099996), "0.100")
        self.assertEqual(fmt(10.73), "10.730")
        self.assertEqual(fmt(1024.9), "1025")
        self.assertEqual(significant(123456.0), "123456")

    def test_one_legend_and_a_panel_grid(self):
        try:
            from listrx_bench.report import matplotlib_pyplot
            plt, why = matplotlib_pyplot()
        except ImportError as e:
            why = str(e)
        if why:
            print("SKIPPED: %s" % why)
            self.skipTest(why)
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
        plt.close = figs.append  # keep the figure to look at it
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
        flat = [ax for ax in visible if "flat" in ax.get_title()]
        self.assertEqual(len(flat), 1)
        lo, hi = flat[0].get_ylim()
        # +-5 % of the figure's largest value (packet, burst 64, rep 1: 137)
        self.assertAlmostEqual(lo, 100.025 - 0.05 * 137.0)
        self.assertAlmostEqual(hi, 100.025 + 0.05 * 137.0)
        real_close(fig)


if __name__ == "__main__":
    unittest.main()
