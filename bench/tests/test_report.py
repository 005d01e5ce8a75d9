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
from listrx_bench.report import speedups, group_rows, write_report  # noqa: E402
from listrx_bench.stats import is_unavailable, median, summary  # noqa: E402

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


if __name__ == "__main__":
    unittest.main()
