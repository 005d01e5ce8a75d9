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
from listrx_bench.compare import (LISTRX_PEERS, listrx_accounting, listrx_pool,  # noqa: E402
                                   parse_listrx_periodic, parse_testpmd, peer_runs,
                                   run_compare, testpmd_pool_args)
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

    def test_testpmd_pool_like_for_like_and_own_by_default(self):
        self.assertEqual(self.parse().testpmd_pool, "both")
        self.assertEqual(self.parse("--testpmd-pool", "own").testpmd_pool, "own")
        with contextlib.redirect_stderr(io.StringIO()) as err:
            with self.assertRaises(SystemExit) as e:
                self.parse("--testpmd-pool", "huge")
        self.assertEqual(e.exception.code, 2)
        self.assertIn("--testpmd-pool", err.getvalue())


class TestpmdPool(unittest.TestCase):
    SUMMARY = {"mbufs_per_pool": 8191,
               "mempool": {"cache": 256, "data_room": 2176, "priv_size": 64, "layout": "packed"}}

    def test_listrx_pool_read_from_its_summary(self):
        self.assertEqual(listrx_pool(self.SUMMARY),
                         {"mbufs": 8191, "cache": 256, "data_room": 2176, "priv_size": 64,
                          "layout": "packed"})
        self.assertIsNone(listrx_pool(None))
        self.assertIsNone(listrx_pool({"mbufs_per_pool": 8191}))  # an older listrx
        bad = dict(self.SUMMARY, mempool=dict(self.SUMMARY["mempool"], layout="striped"))
        self.assertIsNone(listrx_pool(bad))

    def test_packed_pool_is_anon_without_iova_contiguity(self):
        # the same count, cache and element size (testpmd has no private
        # area: its data room takes listrx's 64 bytes too)
        self.assertEqual(testpmd_pool_args(listrx_pool(self.SUMMARY)),
                         ["--mp-alloc", "anon", "--no-iova-contig", "--total-num-mbufs", "8191",
                          "--mbcache", "256", "--mbuf-size", "2240"])

    def test_iova_contiguous_pool_is_native(self):
        hp = dict(self.SUMMARY, mempool=dict(self.SUMMARY["mempool"], layout="iova-contig",
                                             priv_size=0, cache=128))
        self.assertEqual(testpmd_pool_args(listrx_pool(hp)),
                         ["--mp-alloc", "native", "--total-num-mbufs", "8191",
                          "--mbcache", "128", "--mbuf-size", "2176"])

    def test_runs_per_rep(self):
        self.assertEqual(peer_runs(["testpmd-rxonly", "graph"], "both"),
                         [("testpmd-rxonly", "testpmd-rxonly", "listrx"),
                          ("testpmd-rxonly/own-pool", "testpmd-rxonly", "own"),
                          ("graph", "graph", None)])
        self.assertEqual(peer_runs(["testpmd-io"], "listrx"),
                         [("testpmd-io", "testpmd-io", "listrx")])
        self.assertEqual(peer_runs(["testpmd-io"], "own"),
                         [("testpmd-io/own-pool", "testpmd-io", "own")])


# A stand-in for dpdk-testpmd: records its arguments, prints testpmd's
# periodic Rx-pps lines (10 Mpps on a pool without IOVA contiguity, else 5)
# until SIGINT.
FAKE_TESTPMD = r"""#!%s
import json, signal, sys, time
signal.signal(signal.SIGINT, lambda *a: sys.exit(0))
with open(%r, "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\n")
pps = 10000000 if "--no-iova-contig" in sys.argv else 5000000
for i in range(4):
    print("  Rx-pps: %%12d          Rx-bps: 0" %% pps, flush=True)
while True:
    time.sleep(0.05)
"""


class CompareTestpmdPools(unittest.TestCase):
    """compare runs testpmd on the pool listrx reports and on its own, and
    reports both ratios (stand-ins for both tools: no timing involved)."""

    class FakeListrx:
        lcores = "0-1"

        def __init__(self, summary_):
            self.summary = summary_

        def command(self, spec, json_path, duration, extra):
            return ["listrx", "--stats-period", "0", "--duration", str(duration)] + extra

        def run(self, cmd, json_path, timeout):
            out = "".join("[    %d.0s] rx  20.000 Mpps  tx   0.000 Mpps  drop   0.000 Mpps | "
                          "total rx 1\n" % i for i in (1, 2, 3))
            if self.summary is None:
                return None, "listrx failed (exit 1)", {"output": "", "command": " ".join(cmd)}
            return self.summary, None, {"output": out, "command": " ".join(cmd)}

    SUMMARY = dict({"rx_packets": 96, "delivered": 96, "tx_packets": 0, "dropped": 0,
                    "held": 0, "mbufs_in_use_at_exit": 0}, mbufs_per_pool=8191, mpps=20.0,
                   mempool={"cache": 256, "data_room": 2176, "priv_size": 64, "layout": "packed"})

    def run_compare(self, summary_, *extra):
        tmp = tempfile.mkdtemp(prefix="lrxcmp-test")
        self.addCleanup(shutil.rmtree, tmp)
        log = os.path.join(tmp, "argv")
        fake = os.path.join(tmp, "testpmd")
        with open(fake, "w") as f:
            f.write(FAKE_TESTPMD % (sys.executable, log))
        os.chmod(fake, 0o755)
        args = cli.build_parser().parse_args(
            ["compare", "--testpmd", fake, "--duration", "1", "--reps", "2", "--burst", "32",
             "--eal", "--no-huge --no-pci", "--out", tmp, "--quiet"] + list(extra))
        with contextlib.redirect_stdout(io.StringIO()) as out:
            rc = run_compare(self.FakeListrx(summary_), args, ["compare"])
        with open(os.path.join(tmp, "compare.json")) as f:
            result = json.load(f)
        argvs = []
        if os.path.exists(log):
            with open(log) as f:
                argvs = [json.loads(line) for line in f]
        return rc, out.getvalue(), result, argvs

    def test_like_for_like_and_own_pool_rows(self):
        rc, out, result, argvs = self.run_compare(self.SUMMARY)
        self.assertEqual(rc, 0, out)
        # per rep: testpmd on listrx's pool, then on its own
        self.assertEqual(len(argvs), 4)
        same, own = argvs[0], argvs[1]
        tail = same[same.index("--"):]
        self.assertEqual(tail[tail.index("--mp-alloc"):],
                         ["--mp-alloc", "anon", "--no-iova-contig", "--total-num-mbufs", "8191",
                          "--mbcache", "256", "--mbuf-size", "2240"])
        for opt in ("--mp-alloc", "--no-iova-contig", "--total-num-mbufs", "--mbcache",
                    "--mbuf-size"):
            self.assertNotIn(opt, own)
        # the second rep the same (its own --file-prefix)
        self.assertEqual(argvs[2][argvs[2].index("--"):], tail)
        self.assertEqual(argvs[3][argvs[3].index("--"):], own[own.index("--"):])
        ratios = result["ratios"]["32"]
        self.assertEqual(ratios["testpmd-rxonly"]["median"], 2.0)  # 20 / 10 Mpps
        self.assertEqual(ratios["testpmd-rxonly/own-pool"]["median"], 4.0)  # 20 / 5 Mpps
        self.assertEqual(result["listrx_pool"]["layout"], "packed")
        self.assertEqual(result["testpmd_pool_args"]["listrx"][:3],
                         ["--mp-alloc", "anon", "--no-iova-contig"])
        rows = [l for l in out.splitlines() if l.startswith("| testpmd")]
        self.assertEqual(len(rows), 2, out)
        self.assertIn("listrx's pool", rows[0])
        self.assertIn("2.000", rows[0])
        self.assertIn("testpmd's own pool", rows[1])
        self.assertIn("4.000", rows[1])
        self.assertIn("listrx's pool: 8191 mbufs, cache 256, data room 2176 + private area 64, "
                      "packed", out)

    def test_own_pool_keeps_the_data_room_option(self):
        rc, out, result, argvs = self.run_compare(self.SUMMARY, "--testpmd-pool", "own",
                                                  "--data-room", "1000")
        self.assertEqual(rc, 0, out)
        self.assertEqual(len(argvs), 2)
        self.assertEqual(argvs[0][-2:], ["--mbuf-size", "1000"])
        self.assertNotIn("--mp-alloc", argvs[0])
        self.assertEqual(list(result["ratios"]["32"]), ["testpmd-rxonly/own-pool"])

    def test_no_listrx_pool_no_like_for_like_run(self):
        rc, out, result, argvs = self.run_compare(None, "--testpmd-pool", "listrx")
        self.assertEqual(argvs, [])  # testpmd not started on a pool nobody reported
        row = [l for l in out.splitlines() if l.startswith("| testpmd")][0]
        self.assertIn("listrx reported no pool", row)


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
