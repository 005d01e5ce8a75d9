"""Tests of listrx-bench: the sweep: phases, a short real sweep."""

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

from .support import DATA, built_binary, cachegrind_binary, data, read  # noqa: F401


class SweepPhases(unittest.TestCase):
    """The cachegrind work runs after every timed run, never beside one, and
    in parallel with itself; a fake Listrx records the order of the runs."""

    class FakeListrx:
        def __init__(self):
            import threading
            self.lock = threading.Lock()
            self.events, self.active, self.max_active = [], 0, 0
            self.log_dir = None
            self.binary = "/nonexistent/listrx"

        def topology(self):
            return {"l1i_bytes": 32768, "l1i_line": 64, "l1i_assoc": 8}

        def stages(self):
            return ["build-meta", "l3-demux"]

        def command(self, spec, json_path, **kw):
            return ["listrx", json_path] + list(kw.get("extra", ()))

        def run(self, cmd, json_path, prefix=(), timeout=0, log_name=None):
            import time
            kind = "cg" if prefix else "time"
            with self.lock:
                self.active += 1
                self.max_active = max(self.max_active, self.active)
                self.events.append(("start", kind, self.active))
            time.sleep(0.05)
            summary = {"mpps": 1.0, "ns_per_packet": 1000.0, "busy_cycles_per_packet": 10.0,
                       "tsc_hz": 1e9, "rx_packets": 6000, "duration_s": 0.1}
            if prefix:
                self.assertions(cmd, prefix)
                summary["measured_packets"] = 4000
                out = [p for p in prefix if p.startswith("--callgrind-out-file=")][0]
                with open(out.split("=", 1)[1], "w") as f:
                    f.write("events: Ir I1mr\nfn=lrx_ballast_run\n1 8000 400\n")
            with self.lock:
                self.active -= 1
                self.events.append(("end", kind, self.active))
            info = {"command": " ".join(cmd), "wall_s": 0.1, "cpu_s": 0.1,
                    "start_time": 0, "end_time": 0.1, "output": ""}
            return summary, None, info

        def assertions(self, cmd, prefix):
            assert "--measure-from" in cmd and "--instr-atstart=no" in prefix, (cmd, prefix)
            assert "mempool.mbufs=2047" in cmd, cmd

    def test_cachegrind_phase_after_timed_runs_and_parallel(self):
        from listrx_bench.sweep import Sweep
        lx = self.FakeListrx()
        with tempfile.TemporaryDirectory() as d:
            args = cli.build_parser().parse_args(
                ["sweep", "--out", d, "--bursts", "1,32", "--engines", "packet,burst",
                 "--footprints", "0", "--counters", "time,cachegrind", "--warmup", "0",
                 "--cg-jobs", "2", "-q"])
            sweep = Sweep(lx, args, d)
            sweep.status["cachegrind"] = "ok"
            cells = grid.expand(["null"], ["build-meta,l3-demux"], [("0", 0)],
                                args.engines, args.bursts)
            rows = sweep.run(cells, args.reps)
        kinds = [k for e, k, _ in lx.events if e == "start"]
        self.assertEqual(kinds, ["time"] * 12 + ["cg"] * 4)
        # no timed run ever overlapped another run
        for e, k, active in lx.events:
            if k == "time" and e == "start":
                self.assertEqual(active, 1)
        self.assertEqual(lx.max_active, 2)
        self.assertEqual(len(rows), 12)
        for r in rows:
            if r["rep"] == 0:
                self.assertAlmostEqual(r["cg_i1_misses_per_packet"], 0.1)
                self.assertAlmostEqual(r["cg_ir_per_packet"], 2.0)
            else:
                self.assertIn("deterministic", r["cg_status"])

    def test_new_defaults(self):
        args = cli.build_parser().parse_args(["sweep", "--out", "x"])
        self.assertEqual(args.reps, 3)  # median and spread need 3
        self.assertEqual(args.duration, 0.25)
        self.assertEqual(args.cg_method, "window")
        self.assertEqual(args.cg_window, [2000, 6000])
        self.assertIn("-m 64", args.cg_eal)
        self.assertEqual(len(args.bursts) * len(args.engines), 45)


class RealSweep(unittest.TestCase):
    """One short sweep of the real binary (time + cachegrind), its report,
    and the determinism of cachegrind's per-packet figures."""

    def test_sweep_and_report(self):
        binary = cachegrind_binary(self)
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "sweep")
            argv = ["sweep", "--listrx", binary, "--out", out, "--bursts", "32",
                    "--engines", "packet,burst", "--footprints", "L1i",
                    "--pipelines", "build-meta,l3-demux", "--profiles", "null",
                    "--reps", "2", "--counters", "time,cachegrind,rapl",
                    "--duration", "0.3", "--warmup", "0", "--cg-packets", "2000,6000",
                    "--cg-every-rep", "-q"]
            self.assertEqual(cli.main(argv), 0)
            meta, rows = results.load(out)
            self.assertEqual(len(rows), 4)
            self.assertTrue(meta["command"].startswith("listrx-bench sweep"))
            for r in rows:
                self.assertEqual(r["status"], "ok", r.get("status"))
                self.assertGreater(r["time_mpps"], 0)
                self.assertGreater(r["rx_packets"], 0)
                self.assertEqual(r["mbufs_in_use_at_exit"], 0)
                self.assertEqual(r["footprint_kb"], meta["machine"]["l1i_bytes"] // 1024)
                self.assertGreater(r["cg_ir_per_packet"], 0)
                self.assertIn(r["cg_i1"], r["cachegrind_command"])
                if backends.rapl_probe():
                    self.assertTrue(is_unavailable(r["rapl_energy_j"]))
            with open(os.path.join(out, "results.csv")) as f:
                got = list(csv.DictReader(f))
            self.assertEqual(len(got), 4)
            for col in ("engine", "burst", "rep", "time_mpps", "cg_i1_misses_per_packet",
                        "cg_indirect_branches_per_packet", "counters", "command"):
                self.assertIn(col, got[0])
            # cachegrind is deterministic: both reps give the same figures
            by = {}
            for r in rows:
                by.setdefault(r["engine"], []).append(r)
            for engine, rs in by.items():
                a, b = rs[0], rs[1]
                for k in ("cg_ir_per_packet", "cg_indirect_branches_per_packet"):
                    self.assertAlmostEqual(a[k], b[k], delta=max(abs(a[k]) * 0.01, 0.05),
                                           msg="%s %s" % (engine, k))
                self.assertAlmostEqual(a["cg_i1_misses_per_packet"], b["cg_i1_misses_per_packet"],
                                       delta=max(a["cg_i1_misses_per_packet"] * 0.02, 0.5))
            # what the misses show under a given geometry: test_cache_geometry
            md, html = write_report(out)
            self.assertIn("Speedup over the per-packet engine", read(md))
            self.assertGreater(os.path.getsize(html), 2000)


if __name__ == "__main__":
    unittest.main()
