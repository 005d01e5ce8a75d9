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
from listrx_bench.compare import (LISTRX_PEERS, listrx_accounting,  # noqa: E402
                                   parse_listrx_periodic, parse_testpmd)
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


class CompareArguments(unittest.TestCase):
    def parse(self, *extra):
        return cli.build_parser().parse_args(["compare"] + list(extra))

    def test_defaults_are_listrx_defaults_at_both_bursts(self):
        a = self.parse()
        self.assertEqual(a.burst, [32, 64])
        self.assertEqual(a.stats_level, "counters")  # listrx's default, not off
        self.assertEqual(a.peer, ["testpmd-rxonly"])
        self.assertGreaterEqual(a.reps, 5)

    def test_one_burst_or_a_list(self):
        self.assertEqual(self.parse("--burst", "32").burst, [32])
        self.assertEqual(self.parse("--burst", "64,32").burst, [64, 32])

    def test_bad_burst_is_a_usage_error(self):
        for bad in ("0", "513", "32,x", "-1"):
            with contextlib.redirect_stderr(io.StringIO()) as err:
                with self.assertRaises(SystemExit) as e:
                    self.parse("--burst", bad)
            self.assertEqual(e.exception.code, 2, bad)
            self.assertIn("--burst", err.getvalue())

    def test_data_room_for_both_sides(self):
        self.assertIsNone(self.parse().data_room)  # each tool's own
        self.assertEqual(self.parse("--data-room", "1000").data_room, 1000)
        for bad in ("100", "70000", "2k"):
            with contextlib.redirect_stderr(io.StringIO()) as err:
                with self.assertRaises(SystemExit) as e:
                    self.parse("--data-room", bad)
            self.assertEqual(e.exception.code, 2, bad)
            self.assertIn("256..65535", err.getvalue())

    def test_peers_listrx_itself_with_one_setting_changed(self):
        self.assertEqual(self.parse("--peer", "testpmd-rxonly,listrx-off").peer,
                         ["testpmd-rxonly", "listrx-off"])
        self.assertEqual(LISTRX_PEERS["listrx-off"], {"stats_level": "off"})
        self.assertEqual(LISTRX_PEERS["graph"], {"engine": "graph"})

    def test_unknown_peer_is_a_usage_error(self):
        with contextlib.redirect_stderr(io.StringIO()) as err:
            rc = cli.main(["compare", "--peer", "testpmd-mac", "--listrx", sys.executable])
        self.assertEqual(rc, 2)
        self.assertIn("testpmd-mac", err.getvalue())


class CompareEmptyRows(unittest.TestCase):
    """compare --duration 1: listrx prints one per-second line, which the
    steady-state treatment drops; every row without a figure says why."""

    class OneSecondListrx:
        lcores = "0-1"

        def command(self, spec, json_path, duration, extra):
            return ["listrx", "--stats-period", "0", "--duration", str(duration)]

        def run(self, cmd, json_path, timeout):
            out = "[    1.0s] rx  10.000 Mpps  tx   0.000 Mpps  drop   0.000 Mpps | total rx 1\n"
            return {}, None, {"output": out, "command": " ".join(cmd)}

    def test_rows_without_figures_say_why(self):
        args = cli.build_parser().parse_args(
            ["compare", "--peer", "graph", "--duration", "1", "--reps", "1",
             "--burst", "32,64", "--quiet"])
        from listrx_bench.compare import run_compare
        with contextlib.redirect_stdout(io.StringIO()) as out:
            run_compare(self.OneSecondListrx(), args, ["compare"])
        rows = [l for l in out.getvalue().splitlines() if l.startswith("| ") and "---" not in l]
        self.assertEqual(len(rows), 1 + 5)  # header, 2 listrx, 2 graph, 1 burst ratio
        for row in rows[1:]:
            self.assertIn("--duration must be >= 2", row, row)


class ListrxAccounting(unittest.TestCase):
    GOOD = {"rx_packets": 96, "delivered": 90, "tx_packets": 4, "dropped": 2, "held": 0,
            "mbufs_in_use_at_exit": 0}

    def test_every_packet_freed_and_pool_full(self):
        self.assertIsNone(listrx_accounting(self.GOOD))

    def test_lost_packet_and_leak_are_named(self):
        lost = dict(self.GOOD, delivered=89)
        self.assertIn("rx 96 != delivered + tx + dropped 95", listrx_accounting(lost))
        leak = dict(self.GOOD, mbufs_in_use_at_exit=3)
        self.assertEqual(listrx_accounting(leak), "3 mbufs in use at exit")
        held = dict(self.GOOD, held=1)
        self.assertIn("held 1", listrx_accounting(held))

    def test_missing_fields_are_not_a_pass(self):
        self.assertEqual(listrx_accounting(None), "no summary")
        self.assertIn("mbufs_in_use_at_exit",
                      listrx_accounting({k: v for k, v in self.GOOD.items()
                                         if k != "mbufs_in_use_at_exit"}))


if __name__ == "__main__":
    unittest.main()
