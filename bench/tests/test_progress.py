"""Tests of listrx-bench: the progress bar."""

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


class ProgressBar(unittest.TestCase):
    def test_lines(self):
        out = io.StringIO()
        p = Progress(4, stream=out, width=8)
        p.update("a")
        p.update("b", 3)
        lines = out.getvalue().splitlines()
        self.assertTrue(lines[0].startswith("[##......] 1/4  25%"), lines[0])
        self.assertTrue(lines[1].startswith("[########] 4/4 100% eta 0s b"), lines[1])


if __name__ == "__main__":
    unittest.main()
