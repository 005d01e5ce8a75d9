"""Tests of listrx-bench: the listrx binary wrapper: topology."""

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


class Topology(unittest.TestCase):
    def test_parse(self):
        t = parse_topology("cpu: AMD EPYC\ncores: 2, hardware threads: 2, NUMA nodes: 1\n"
                           "L1i: 32 KiB, 64-byte lines, 8-way (from hwloc)\n")
        self.assertEqual((t["l1i_bytes"], t["l1i_line"], t["l1i_assoc"], t["cpu"],
                          t["l1i_source"]), (32768, 64, 8, "AMD EPYC", "hwloc"))
        # associativity that CPUID does not give (some VMs) is unknown, not 0
        t = parse_topology("L1i: 32 KiB, 64-byte lines, associativity unknown (from sysconf)\n")
        self.assertEqual((t["l1i_bytes"], t["l1i_assoc"], t["l1i_source"]),
                         (32768, None, "sysconf"))
        t = parse_topology("L1i: 32 KiB, 64-byte lines, fully associative (from hwloc)\n")
        self.assertEqual(t["l1i_assoc"], -1)
        v = parse_version("listrx 0.1.0 (retpoline build)\nDPDK 22.11.11\nretpoline: yes\n")
        self.assertEqual((v["build"], v["dpdk_version"], v["retpoline"]),
                         ("retpoline", "DPDK 22.11.11", True))

    def test_missing_binary_is_a_user_error(self):
        with self.assertRaises(BenchError):
            find_binary("/nonexistent/listrx")


if __name__ == "__main__":
    unittest.main()
