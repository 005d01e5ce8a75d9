"""Tests of listrx-bench scale: the figures from a recorded bench/scale.sh
output (synthetic, with known answers), and a short real run of the
script here."""

import io
import json
import os
import subprocess
import tarfile
import tempfile
import unittest
from contextlib import redirect_stdout

from listrx_bench import scale
from listrx_bench.cli import main

from tests.support import built_binary

HERE = os.path.dirname(os.path.abspath(__file__))


def summary_json(mpps_per_lcore, duration=2.0, problem=None):
    packets = [int(m * 1e6 * duration) for m in mpps_per_lcore]
    rx = sum(packets)
    s = {"duration_s": duration, "mpps": rx / duration / 1e6, "rx_packets": rx,
         "delivered": rx, "tx_packets": 0, "dropped": 0, "held": 0, "mbufs_in_use_at_exit": 0,
         "lcores": [{"lcore": i + 1, "packets": p} for i, p in enumerate(packets)]}
    if problem == "leak":
        s["mbufs_in_use_at_exit"] = 3
    return s


def write_raw(d, cells, order="0 1 2 3", topology=None, failed=()):
    """A scale.sh output: cells {(engine, n): [per-lcore Mpps list per rep]}."""
    os.makedirs(os.path.join(d, "runs"), exist_ok=True)
    os.makedirs(os.path.join(d, "host"), exist_ok=True)
    counts = sorted({n for _, n in cells})
    with open(os.path.join(d, "plan"), "w") as f:
        f.write("order %s\nmain_cpu %s\nmax_lcores %d\nlcores %s\nengines none,packet,burst\n"
                "pipeline xdp,build-meta,gro,l3-demux\nprofile udp-flows,flows=4096\nburst 64\n"
                "duration 2\nreps 2\nstopped complete\n"
                % (order, order.split()[-1], len(order.split()) - 1,
                   " ".join(map(str, counts))))
    with open(os.path.join(d, "host", "topology"), "w") as f:
        f.write(topology or "0 0 0 0,2\n1 0 1 1,3\n2 0 0 0,2\n3 0 1 1,3\n")
    with open(os.path.join(d, "host", "model"), "w") as f:
        f.write("model name\t: Test CPU\n")
    lines = ["rep\tlcores\tengine\tstatus\tload1\tseconds\tjson"]
    for (engine, n), reps in sorted(cells.items()):
        for rep, per in enumerate(reps, 1):
            name = "runs/n%d-%s-r%d" % (n, engine, rep)
            status = 1 if (engine, n, rep) in failed else 0
            if not status:
                with open(os.path.join(d, name + ".json"), "w") as f:
                    json.dump(summary_json(per), f)
            with open(os.path.join(d, name + ".log"), "w") as f:
                f.write("listrx: something went wrong\n" if status else "ok\n")
            lines.append("%d\t%d\t%s\t%d\t0.5\t2.5\t%s.json" % (rep, n, engine, status, name))
    with open(os.path.join(d, "runs.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")


# per-lcore Mpps: the NIC alone runs 100 Mpps per lcore (10 ns), burst 20
# (50 ns: 40 ns of dataplane) on 1 lcore; at 3 lcores the NIC stays at 10 ns
# and burst's lcores run 16 Mpps (62.5 ns: 52.5 ns of dataplane)
CELLS = {
    ("none", 1): [[100.0], [100.0]],
    ("none", 3): [[100.0] * 3, [100.0] * 3],
    ("burst", 1): [[20.0], [20.0]],
    ("burst", 3): [[16.0, 16.0, 16.0], [16.0, 16.0, 16.0]],
    ("packet", 1): [[16.0], [16.0]],
    ("packet", 3): [[16.0, 12.0, 16.0], [16.0, 16.0, 16.0]],
}


class Figures(unittest.TestCase):
    def rows(self, cells=CELLS, **kw):
        with tempfile.TemporaryDirectory() as d:
            write_raw(d, cells, **kw)
            data = scale.load(d)
        return {(r["engine"], r["lcores"]): r for r in scale.analyse(data)}

    def test_efficiency_and_the_dataplane_share(self):
        rows = self.rows()
        b3 = rows[("burst", 3)]
        self.assertAlmostEqual(b3["mpps"]["median"], 48.0, places=3)
        self.assertAlmostEqual(b3["mpps_per_lcore"]["median"], 16.0, places=3)
        self.assertAlmostEqual(b3["efficiency"]["median"], 0.8, places=3)
        self.assertAlmostEqual(rows[("burst", 1)]["dataplane_ns"]["median"], 40.0, places=2)
        self.assertAlmostEqual(b3["dataplane_ns"]["median"], 52.5, places=2)
        self.assertAlmostEqual(b3["dataplane_efficiency"]["median"], 40 / 52.5, places=3)
        self.assertAlmostEqual(rows[("none", 3)]["efficiency"]["median"], 1.0, places=3)
        # three lcores on CPUs 0 1 2: CPU 2 is CPU 0's sibling
        self.assertEqual(b3["cores"], 2)
        self.assertEqual(rows[("burst", 1)]["cores"], 1)

    def test_per_lcore_spread(self):
        p3 = self.rows()[("packet", 3)]
        # rep 1: (16 - 12) / 16 = 0.25, rep 2: 0
        self.assertAlmostEqual(p3["spread"]["max"], 0.25, places=3)
        self.assertAlmostEqual(p3["spread"]["min"], 0.0, places=3)
        self.assertAlmostEqual(p3["slowest_lcore_mpps"]["min"], 12.0, places=3)

    def test_a_failed_run_is_reported_not_counted(self):
        rows = self.rows(failed={("burst", 3, 2)})
        b3 = rows[("burst", 3)]
        self.assertEqual((b3["ok"], b3["runs"]), (1, 2))
        self.assertTrue(any("something went wrong" in p for p in b3["problems"]), b3["problems"])

    def test_verdict_names_smt_and_the_target(self):
        with tempfile.TemporaryDirectory() as d:
            write_raw(d, CELLS)
            v = scale.verdicts(scale.analyse(scale.load(d)), scale.load(d)["plan"])
        burst = next(x for x in v if x.startswith("burst"))
        self.assertIn("below the 0.90 target", burst)
        self.assertIn("3 lcores on 2 physical cores", burst)

    def test_report_from_an_archive(self):
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "scale")
            write_raw(raw, CELLS, failed={("packet", 1, 1)})
            tgz = os.path.join(d, "scale.tar.gz")
            with tarfile.open(tgz, "w:gz") as tar:
                tar.add(raw, arcname="scale")
            out = os.path.join(d, "report")
            with redirect_stdout(io.StringIO()) as text:
                status = main(["scale", "--from", tgz, "--out", out])
            # a failed run makes the command fail, and the table says why
            self.assertEqual(status, 1)
            self.assertIn("1/2: exit 1", text.getvalue())
            with open(os.path.join(out, "scale.json")) as f:
                j = json.load(f)
            self.assertEqual(len(j["rows"]), 6)
            self.assertTrue(os.path.exists(os.path.join(out, "scale.md")))

    def test_not_scale_output(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(main(["scale", "--from", d, "--out", os.path.join(d, "r")]), 2)


class Script(unittest.TestCase):
    SCRIPT = os.path.join(HERE, os.pardir, "scale.sh")

    def test_bad_options_are_one_line(self):
        for args, want in ((["--reps", "0"], "--reps 0: want an integer >= 1"),
                           (["--lcores", "999"], "polling lcores"),
                           (["--frobnicate", "1"], "unknown option '--frobnicate'"),
                           ([], "--out DIR is required")):
            with tempfile.TemporaryDirectory() as d:
                cmd = ["bash", self.SCRIPT] + (["--out", d] if args else []) + args
                p = subprocess.run(cmd, capture_output=True, text=True)
                self.assertEqual(p.returncode, 2, (args, p.stderr))
                self.assertIn(want, p.stderr)

    def test_one_lcore_here(self):
        """A short real run: one lcore, the empty pipeline and burst, and the
        report over it."""
        binary = built_binary(self)
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run(["bash", self.SCRIPT, "--out", d, "--listrx", binary,
                                "--lcores", "1", "--engines", "burst", "--reps", "1",
                                "--duration", "0.3", "--mem", "512"],
                               capture_output=True, text=True, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            data = scale.load(d)
            self.assertEqual([(r["engine"], r["status"]) for r in data["runs"]],
                             [("none", 0), ("burst", 0)])
            self.assertTrue(all(r["mpps"] and r["mpps"] > 0 and len(r["per_lcore"]) == 1
                                for r in data["runs"]), data["runs"])
            rows = scale.analyse(data)
            self.assertIsNotNone(rows[1]["dataplane_ns"]["median"])


if __name__ == "__main__":
    unittest.main()
