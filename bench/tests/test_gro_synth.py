"""Tests of listrx-bench: listrx-bench gro-synth."""

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


class GroSynth(unittest.TestCase):
    """bench/gro_synth.py: the driver's rounds paired by stats.compare and
    the rules' merge expectation."""

    def setUp(self):
        from listrx_bench import gro_synth
        self.g = gro_synth

    def run_of(self, listrx, heavy, light, segments=4096, hz=2e9):
        """A driver --json run from per-round cycles per segment."""
        def side(cps):
            return {"cycles": [c * segments for c in cps], "segments": [segments] * len(cps),
                    "segments_in": segments * len(cps), "merged": 0,
                    "packets_out": segments * len(cps) // 44}
        return {"tsc_hz": hz, "impls": {"listrx-gro": side(listrx), "rte_gro-heavy": side(heavy),
                                        "rte_gro-light": side(light)}}

    def test_rounds_are_pairs(self):
        # round r of listrx against round r of the peer: a slow round that
        # hit both sides cancels; 2 GHz: 100 cycles = 50 ns
        listrx = [100, 100, 300, 100, 100, 100, 100]
        light = [150, 140, 450, 160, 150, 150, 155]
        run = self.run_of(listrx, [400] * 7, light)
        self.assertAlmostEqual(self.g.ns_per_segment(run, "listrx-gro")[2], 150.0)
        c = self.g.pair_rounds(run, "rte_gro-light")
        self.assertEqual(c["pairs"], 7)
        self.assertAlmostEqual(c["ratio"], 1.5)
        self.assertTrue(c["resolved"])
        # the median pair's sides: peer 75 ns, listrx 50 ns
        self.assertAlmostEqual(c["base"], 75.0)
        self.assertAlmostEqual(c["other"], 50.0)
        self.assertEqual(self.g.goal_verdict(c, 1.3), "goal 1.3x met")
        self.assertEqual(self.g.goal_verdict(c, 1.7), "goal 1.7x missed")
        self.assertEqual(self.g.goal_verdict(c, 1.5), "goal 1.5x not resolved")
        self.assertAlmostEqual(self.g.merged_over([run, run], "listrx-gro"),
                               4096 * 7 / (4096 * 7 // 44))

    def test_runs_are_the_pairs_of_a_cell(self):
        # one run per pair: its median round pair's sides; a run whose
        # rounds all went 2x slower keeps its ratio
        runs = [self.run_of([100] * 5, [400] * 5, [k * 150] * 5) if k else
                self.run_of([200] * 5, [800] * 5, [300] * 5) for k in (1, 0, 1, 1, 1, 1)]
        runs[3] = self.run_of([100] * 5, [400] * 5, [140] * 5)
        c = self.g.pair_runs(runs, "rte_gro-light")
        self.assertEqual(c["pairs"], 6)
        self.assertAlmostEqual(c["ratio"], 1.5)
        self.assertEqual(c["ci"], [1.4, 1.5])
        self.assertTrue(c["resolved"])

    def test_round_without_segments_left_out(self):
        run = self.run_of([100] * 6, [400] * 6, [120] * 6)
        run["impls"]["rte_gro-light"]["segments"][0] = 0
        c = self.g.pair_rounds(run, "rte_gro-light")
        self.assertEqual(c["pairs"], 5)
        self.assertFalse(c["resolved"])  # 5 pairs have no 95 % interval
        self.assertEqual(self.g.goal_verdict(c, 1.3), "not resolved")

    def test_expectation(self):
        # the figure: 44 x 1460 (52 header bytes with timestamps)
        self.assertEqual(self.g.expected_segments_per_packet("kernel", 1460, 64, 4), 44)
        self.assertEqual(self.g.expected_segments_per_packet("rte", 1460, 32, 4), 44)
        # net_synth's default mss: 52 + 45 x 1448 = 65212 < 65536
        self.assertEqual(self.g.expected_segments_per_packet("kernel", 1448, 64, 4), 45)
        # light mode: a flow's segments in one burst
        self.assertEqual(self.g.expected_segments_per_packet("rte-light", 1460, 32, 4), 8)
        self.assertEqual(self.g.expected_segments_per_packet("rte-light", 1460, 64, 1), 44)

    def test_driver_through_the_tool(self):
        """The built driver, one small cell: every GRO's payload conserved
        (the driver exits 1 otherwise) and a row per cell."""
        driver = os.path.join(self.g.ROOT, "build/tests/gro/gro_vs_rte_gro")
        if not os.path.exists(driver):
            self.skipTest("SKIPPED: %s not built" % driver)
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "g.json")
            rc = cli.main(["gro-synth", "--driver", driver, "--flows", "4", "--bursts", "32",
                           "--reps", "6", "--rounds", "3", "--polls", "4", "--json", out])
            self.assertEqual(rc, 0)
            with open(out) as f:
                doc = json.load(f)
            cell = doc["cells"]["flows 4, burst 32"]
        # which code measured it: the driver's build commit, as listrx's
        driver_record = doc["provenance"]["binaries"][0]
        self.assertEqual(driver_record["path"], driver)
        self.assertFalse(str(driver_record["build_commit"]).startswith("unavailable"))
        self.assertEqual(cell["comparisons"]["rte_gro light"]["pairs"], 6)
        self.assertEqual(len(cell["runs"]), 6)
        for side in cell["runs"][0]["impls"].values():
            self.assertEqual(side["payload_bad_rounds"], 0)
            self.assertEqual(sum(side["segments"]), side["segments_in"])


if __name__ == "__main__":
    unittest.main()
