"""Tests of listrx-bench: result files and statistics."""

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


class ResultFiles(unittest.TestCase):
    def test_json_and_csv_have_every_column(self):
        rows = [{"cell": "a", "rep": 0, "engine": "packet", "burst": 1, "time_mpps": 1.5},
                {"cell": "a", "rep": 1, "engine": "packet", "burst": 1,
                 "cg_i1_misses_per_packet": "unavailable: valgrind not installed"}]
        with tempfile.TemporaryDirectory() as d:
            results.write(d, {"tool": "t", "backends": {"time": "ok"}}, rows)
            meta, back = results.load(d)
            self.assertEqual(back, rows)
            self.assertEqual(meta["backends"], {"time": "ok"})
            with open(os.path.join(d, "results.csv")) as f:
                got = list(csv.DictReader(f))
            self.assertEqual(len(got), 2)
            self.assertEqual(list(got[0])[:4], ["cell", "rep", "engine", "burst"])
            self.assertEqual(got[0]["time_mpps"], "1.5")
            self.assertEqual(got[0]["cg_i1_misses_per_packet"], "")  # not measured: empty
            self.assertEqual(got[1]["cg_i1_misses_per_packet"],
                             "unavailable: valgrind not installed")


class Statistics(unittest.TestCase):
    def test_median_and_spread_skip_unavailable(self):
        self.assertEqual(median([3, 1, 2, "unavailable: x", None]), 2)
        s = summary([10, 12, 11, 9])
        self.assertEqual((s["n"], s["median"], s["min"], s["max"]), (4, 10.5, 9, 12))
        self.assertAlmostEqual(s["spread_pct"], 3 / 10.5 * 100)
        self.assertEqual(summary(["unavailable: no PMU"])["n"], 0)


if __name__ == "__main__":
    unittest.main()
