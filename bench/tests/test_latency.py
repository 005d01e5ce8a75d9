"""Tests of listrx-bench: listrx-bench latency on the real binary."""

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


class RealLatency(unittest.TestCase):
    """`listrx-bench latency` on the real binary: one short cell, the figures
    well-formed and taken from net_synth's TSC stamps."""

    def test_latency_one_cell(self):
        binary = built_binary(self)
        with tempfile.TemporaryDirectory() as d:
            argv = ["latency", "--listrx", binary, "--bursts", "32", "--engines", "burst",
                    "--duration", "0.3", "--reps", "2", "--out", d]
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                self.assertEqual(cli.main(argv), 0)
            # the progress bar, as sweep's: runs done of planned, with an ETA
            self.assertIn("] 1/2  50% eta ", err.getvalue())
            self.assertIn("] 2/2 100% eta ", err.getvalue())
            # the table says what its numbers are
            self.assertIn("ns: median [min–max] over 2 alternating rep(s)", out.getvalue())
            with open(os.path.join(d, "latency.json")) as f:
                rows = json.load(f)["rows"]
            self.assertEqual(len(rows), 1)
            r = rows[0]
            self.assertEqual(r["source"], "synth-tsc")
            self.assertGreater(r["samples"], 0)
            self.assertGreater(r["p50"], 0)
            self.assertLessEqual(r["p50"], r["p99"])
            self.assertLessEqual(r["p99"], r["p999"])
            self.assertEqual(r["reps"], 2)
            self.assertEqual(len(r["p50_reps"]), 2)
            self.assertLessEqual(r["p50_min"], r["p50"])
            self.assertLessEqual(r["p50"], r["p50_max"])
            self.assertEqual(r["p50"], median(r["p50_reps"]))


if __name__ == "__main__":
    unittest.main()
