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
    """bench/gro_synth.py: the gro counters read from a --json summary and
    the rules' merge expectation."""

    def setUp(self):
        from listrx_bench import gro_synth
        self.g = gro_synth

    def test_counters_from_summary(self):
        summary = {"stages": [{"name": "build-meta", "counters": {}},
                              {"name": "gro", "calls": 0,
                               "counters": {"segments_in": 4400, "packets_out": 100,
                                            "merged": 4300}}]}
        c = self.g.gro_counters(summary)
        self.assertEqual(c["packets_out"], 100)
        self.assertEqual(self.g.merge_ratio(c), 44.0)
        self.assertIsNone(self.g.merge_ratio({"packets_out": 0, "merged": 0}))
        with self.assertRaises(ValueError):
            self.g.gro_counters({"stages": [{"name": "l3-demux"}]})

    def test_expectation(self):
        # the figure: 44 x 1460 (52 header bytes with timestamps)
        self.assertEqual(self.g.expected_segments_per_packet("kernel", 1460, 64, 4), 44)
        self.assertEqual(self.g.expected_segments_per_packet("rte", 1460, 32, 4), 44)
        # net_synth's default mss: 52 + 45 x 1448 = 65212 < 65536
        self.assertEqual(self.g.expected_segments_per_packet("kernel", 1448, 64, 4), 45)
        # light mode: a flow's segments in one burst
        self.assertEqual(self.g.expected_segments_per_packet("rte-light", 1460, 32, 4), 8)
        self.assertEqual(self.g.expected_segments_per_packet("rte-light", 1460, 64, 1), 44)

    def test_own_time_ratios(self):
        # 10 Mseg/s = 100 ns, empty 20 Mseg/s = 50 ns: 50 ns of GRO; theirs
        # 8 Mseg/s = 125 ns: 75 ns; 75 / 50 = 1.5
        self.assertAlmostEqual(self.g.own_ns(10.0, 20.0), 50.0)
        r = self.g.own_time_ratios([10.0, 10.0, 25.0], [8.0, 0.0, 8.0], [20.0, 20.0, 20.0])
        self.assertAlmostEqual(r[0], 1.5)
        # a missing rate, or ours not above the empty pipeline's: no ratio
        self.assertIsNone(r[1])
        self.assertIsNone(r[2])
        self.assertIsNone(self.g.own_ns(None, 20.0))
        self.assertEqual(self.g.impl_stage("none"), ("none", []))


if __name__ == "__main__":
    unittest.main()
