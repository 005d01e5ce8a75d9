"""Tests of listrx-bench: the sweep grid."""

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


class Grid(unittest.TestCase):
    def test_footprints_relative_to_l1i(self):
        fps = grid.parse_footprints("0,L1i/2,L1i,2xL1i,4xL1i,48", 32768)
        self.assertEqual([kb for _, kb in fps], [0, 16, 32, 64, 128, 48])
        self.assertEqual(fps[1][0], "L1i/2")
        with self.assertRaises(ValueError):
            grid.parse_footprints("L1i", None)
        with self.assertRaises(ValueError):
            grid.parse_footprint("lots", 32768)

    def test_lists_are_validated(self):
        self.assertEqual(grid.parse_bursts("1,32,256"), [1, 32, 256])
        with self.assertRaises(ValueError):
            grid.parse_bursts("0")
        self.assertEqual(grid.parse_engines("packet,hybrid:2"), ["packet", "hybrid:2"])
        with self.assertRaises(ValueError):
            grid.parse_engines("packet,turbo")
        self.assertEqual(grid.parse_pipelines("build-meta,l3-demux;none"),
                         ["build-meta,l3-demux", "none"])

    def test_expansion_order_and_size(self):
        cells = grid.expand(["null"], ["build-meta,l3-demux"], [("0", 0), ("L1i", 32)],
                            ["packet", "burst"], [1, 32, 256])
        self.assertEqual(len(cells), 12)
        self.assertEqual([c["burst"] for c in cells[:3]], [1, 32, 256])  # burst innermost
        self.assertEqual(len({c["cell"] for c in cells}), 12)

    def test_xdp_placement(self):
        self.assertEqual(grid.xdp_pipeline("build-meta,gro,l3-demux", "native"),
                         "xdp,build-meta,gro,l3-demux")
        self.assertEqual(grid.xdp_pipeline("build-meta,gro,l3-demux", "generic"),
                         "build-meta,xdp,gro,l3-demux")
        self.assertEqual(grid.xdp_pipeline("none", "native"), "xdp")
        cells = grid.expand(["null"], ["build-meta"], [("0", 0)], ["burst"], [32],
                            ["native", "generic"])
        self.assertEqual([c["pipeline_arg"] for c in cells], ["xdp,build-meta", "build-meta,xdp"])


if __name__ == "__main__":
    unittest.main()
