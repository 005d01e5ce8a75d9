"""Tests of listrx-bench: peers: testpmd and listrx periodic output."""

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


class Testpmd(unittest.TestCase):
    def test_recorded_rxonly_output(self):
        pps, total = parse_testpmd(data("testpmd_rxonly_null.txt"))
        self.assertEqual(pps, [27356355, 29199631, 31139460])  # first display dropped
        self.assertEqual(total, 151236192)

    def test_listrx_periodic_lines_same_treatment(self):
        text = ("listrx 0.1.0: 1 port(s)\n"
                "[    1.0s] rx  39.100 Mpps  tx   0.000 Mpps  drop   0.000 Mpps | total rx 1\n"
                "[    2.0s] rx  47.500 Mpps  tx   0.000 Mpps  drop   0.000 Mpps | total rx 2\n"
                "[   10.0s] rx  48.250 Mpps  tx   0.000 Mpps  drop   0.000 Mpps | total rx 3\n"
                "duration 10.001 s, rx 3 packets, 46.0 Mpps\n")
        self.assertEqual(parse_listrx_periodic(text), [47.5, 48.25])  # first dropped
        self.assertEqual(parse_listrx_periodic("no periodic lines"), [])


if __name__ == "__main__":
    unittest.main()
