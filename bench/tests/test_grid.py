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
                                 parse_version, profile_eal, BenchError, Listrx, allowed_cpus,
                                 remove_runtime_dir)
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

    STAGES = [{"name": "build-meta", "provides": ["meta", "skb"], "shortcut": None},
              {"name": "gro", "provides": ["skb"], "shortcut": None},
              {"name": "l3-demux", "provides": [], "needs": ["meta"], "shortcut": None},
              {"name": "xdp", "provides": [], "shortcut": {
                  "places": [{"value": "native", "position": "first"},
                             {"value": "generic", "position": "after_skb"}]}}]

    def test_xdp_placement_is_the_binarys(self):
        place = grid.place_stage
        self.assertEqual(place("build-meta,gro,l3-demux", "xdp", "native", self.STAGES),
                         "xdp,build-meta,gro,l3-demux")
        # after the last stage that works on the skb: GRO, not build-meta
        self.assertEqual(place("build-meta,gro,l3-demux", "xdp", "generic", self.STAGES),
                         "build-meta,gro,xdp,l3-demux")
        self.assertEqual(place("xdp,build-meta,l3-demux", "xdp", "generic", self.STAGES),
                         "build-meta,xdp,l3-demux")
        self.assertEqual(place("none", "xdp", "native", self.STAGES), "xdp")
        with self.assertRaises(ValueError):
            place("build-meta", "xdp", "offload", self.STAGES)
        cells = grid.expand(["null"], ["build-meta,gro"], [("0", 0)], ["burst"], [32],
                            ["native", "generic"], self.STAGES)
        self.assertEqual([c["pipeline_arg"] for c in cells],
                         ["xdp,build-meta,gro", "build-meta,gro,xdp"])

    def test_placement_is_where_the_binary_puts_it(self):
        """The binary adds the xdp stage itself (--xdp-prog, --xdp-mode) to
        a pipeline without it: its JSON summary lists the stages in the
        order it built them, which is place_stage's."""
        binary = built_binary(self)
        lx = Listrx(binary)
        if "xdp" not in lx.stages():
            print("SKIPPED: no xdp stage in %s" % binary)
            self.skipTest("no xdp stage")
        with tempfile.TemporaryDirectory() as d:
            for mode in ("native", "generic"):
                js = os.path.join(d, mode + ".json")
                eal = lx.eal_args("udp64", lcores=str(allowed_cpus()[0]))
                proc = subprocess.run(
                    [binary] + eal + ["--", "--pipeline", "build-meta,gro,l3-demux",
                                      "--xdp-mode", mode, "--xdp-prog", "pass",
                                      "--packets", "64", "--stats-period", "0", "--json", js],
                    capture_output=True, text=True, timeout=120)
                remove_runtime_dir(eal)
                self.assertEqual(proc.returncode, 0, proc.stderr[-500:])
                with open(js) as f:
                    built = ",".join(st["name"] for st in json.load(f)["stages"])
                self.assertEqual(built, grid.place_stage("build-meta,gro,l3-demux", "xdp",
                                                         mode, lx.stage_list()), mode)


if __name__ == "__main__":
    unittest.main()
