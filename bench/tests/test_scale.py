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


def stat_lines(ticks):
    """/proc/stat cpuN lines: ticks {cpu: (user, system, idle, steal)}."""
    return "".join("cpu%d %d 0 %d %d 0 0 0 %d 0 0\n" % (c, u, s, i, st)
                   for c, (u, s, i, st) in sorted(ticks.items()))


def write_raw(d, cells, order="0 1 2 3", topology=None, failed=(), calibration=None,
              stat=None, extra_plan="", logs=None):
    """A scale.sh output: cells {(engine, n): [per-lcore Mpps list per rep]};
    calibration {(engine, cpu): [Mpps per pass]}; stat {(engine, n, rep):
    (before ticks, after ticks)} as stat_lines takes them."""
    os.makedirs(os.path.join(d, "runs"), exist_ok=True)
    os.makedirs(os.path.join(d, "host"), exist_ok=True)
    counts = sorted({n for _, n in cells})
    cal_cpus = sorted({c for _, c in calibration}) if calibration else []
    with open(os.path.join(d, "plan"), "w") as f:
        f.write("order %s\nmain_cpu %s\nmax_lcores %d\nlcores %s\nengines none,packet,burst\n"
                "pipeline xdp,build-meta,gro,l3-demux\nprofile udp-flows,flows=4096\nburst 64\n"
                "duration 2\nreps 2\ncalibrate %d\ncalibration_cpus %s\n%sstopped complete\n"
                % (order, order.split()[-1], len(order.split()) - 1,
                   " ".join(map(str, counts)), 1 if calibration else 0,
                   " ".join(map(str, cal_cpus)), extra_plan))
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
                f.write("listrx: something went wrong\n" if status else
                        (logs or {}).get((engine, n, rep), "ok\n"))
            if stat and (engine, n, rep) in stat:
                before, after = stat[(engine, n, rep)]
                with open(os.path.join(d, name + ".stat"), "w") as f:
                    f.write(stat_lines(before) + "--\n" + stat_lines(after))
            lines.append("%d\t%d\t%s\t%d\t0.5\t2.5\t%s.json" % (rep, n, engine, status, name))
    with open(os.path.join(d, "runs.tsv"), "w") as f:
        f.write("\n".join(lines) + "\n")
    if calibration is None:
        return
    lines = ["pass\tcpu\tengine\tstatus\tload1\tseconds\tjson"]
    for (engine, cpu), passes in sorted(calibration.items()):
        for k, mpps in enumerate(passes, 1):
            name = "runs/c%d-%s-p%d" % (cpu, engine, k)
            with open(os.path.join(d, name + ".json"), "w") as f:
                json.dump(summary_json([mpps]), f)
            lines.append("%d\t%d\t%s\t0\t0.5\t2.5\t%s.json" % (k, cpu, engine, name))
    with open(os.path.join(d, "calibration.tsv"), "w") as f:
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
        self.assertAlmostEqual(b3["efficiency"]["ratio"], 0.8, places=3)
        self.assertEqual(b3["efficiency"]["pairs"], 2)
        self.assertAlmostEqual(rows[("burst", 1)]["dataplane_ns"]["median"], 40.0, places=2)
        self.assertAlmostEqual(b3["dataplane_ns"]["median"], 52.5, places=2)
        self.assertAlmostEqual(b3["dataplane_efficiency"]["ratio"], 40 / 52.5, places=3)
        # the comparison's sides: dataplane ns/pkt/lcore at 1 and at 3 lcores
        self.assertAlmostEqual(b3["dataplane_efficiency"]["base"], 40.0, places=2)
        self.assertAlmostEqual(b3["dataplane_efficiency"]["other"], 52.5, places=2)
        self.assertAlmostEqual(rows[("none", 3)]["efficiency"]["ratio"], 1.0, places=3)
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
        # two repetitions: no 95 % interval, so the target is not resolved
        self.assertIn("the dataplane's share 0.762 [0.762–0.762], 2 pairs, 0 shared the CPU: "
                      "not resolved (2 pair(s), a 95 % interval needs 6), against the 0.90 "
                      "target", burst)
        self.assertIn("3 lcores on 2 physical cores", burst)

    def test_six_repetitions_resolve_against_the_target(self):
        """The one comparison: paired by repetition against the smallest
        count, resolved against the 0.90 target; the runs whose log has
        listrx's shared-CPU warning counted."""
        cells = {k: v * 3 for k, v in CELLS.items()}
        warn = ("listrx: warning: polling lcore 2 runs on CPU 1, which was 60 % busy before "
                "the start\n")
        with tempfile.TemporaryDirectory() as d:
            write_raw(d, cells, logs={("burst", 3, 2): warn, ("none", 1, 4): warn})
            data = scale.load(d)
        rows = {(r["engine"], r["lcores"]): r for r in scale.analyse(data)}
        b3 = rows[("burst", 3)]
        self.assertEqual(b3["shared_cpu_runs"], 1)
        self.assertTrue(b3["dataplane_efficiency"]["resolved"])
        self.assertEqual(b3["efficiency"]["shared"], 1)  # rep 2: burst at 3 lcores
        self.assertEqual(b3["dataplane_efficiency"]["shared"], 2)  # and the NIC's rep 4
        burst = next(x for x in scale.verdicts(list(rows.values()), data["plan"])
                     if x.startswith("burst"))
        self.assertIn("the dataplane's share 0.762 [0.762–0.762], 6 pairs, 2 shared the CPU: "
                      "resolved, below the 0.90 target", burst)
        packet = next(x for x in scale.verdicts(list(rows.values()), data["plan"])
                      if x.startswith("packet"))
        self.assertIn("6 pairs", packet)

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
            self.assertIn("1/2 (0): exit 1", text.getvalue())
            with open(os.path.join(out, "scale.json")) as f:
                j = json.load(f)
            self.assertEqual(len(j["rows"]), 6)
            # output from elsewhere: this listrx-bench, and what the output
            # says of its binary (an older scale.sh named no command)
            self.assertIn("bench", j["provenance"])
            self.assertTrue(j["provenance"]["binaries"][0]["path"].startswith("unknown"))
            self.assertTrue(os.path.exists(os.path.join(out, "scale.md")))

    def test_not_scale_output(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(main(["scale", "--from", d, "--out", os.path.join(d, "r")]), 2)


# Four cores (no SMT), one NUMA node; CPU 2 runs at half the speed of CPUs
# 0 and 1 when alone. burst: each lcore at 3 lcores runs at its CPU's own
# speed (the loss against 3 x lcore 1 is the machine's); packet: each
# lcore at 3/4 of its CPU's own speed (a loss of running together).
CAL_TOPOLOGY = "0 0 0 0 0\n1 0 1 1 0\n2 0 2 2 0\n3 0 3 3 0\n"
CAL_CELLS = {
    ("none", 1): [[100.0], [100.0]],
    ("none", 3): [[100.0, 100.0, 50.0], [100.0, 100.0, 50.0]],
    ("burst", 1): [[20.0], [20.0]],
    ("burst", 3): [[20.0, 20.0, 10.0], [20.0, 20.0, 10.0]],
    ("packet", 1): [[16.0], [16.0]],
    ("packet", 3): [[12.0, 12.0, 6.0], [12.0, 12.0, 6.0]],
}
CALIBRATION = {
    ("none", 0): [100.0], ("none", 1): [100.0], ("none", 2): [50.0],
    ("burst", 0): [20.0], ("burst", 1): [20.0], ("burst", 2): [10.0],
    ("packet", 0): [16.0], ("packet", 1): [16.0], ("packet", 2): [8.0],
}
# burst at 3 lcores, rep 1: CPU 2 had 20 of its 200 ticks stolen, CPU 3
# (neither polling nor the main lcore's) was half busy
STAT = {("burst", 3, 1): ({0: (0, 0, 0, 0), 1: (0, 0, 0, 0), 2: (0, 0, 0, 0), 3: (0, 0, 0, 0)},
                          {0: (190, 10, 0, 0), 1: (200, 0, 0, 0), 2: (170, 10, 0, 20),
                           3: (50, 50, 100, 0)})}


class Calibration(unittest.TestCase):
    def data(self, **kw):
        with tempfile.TemporaryDirectory() as d:
            write_raw(d, CAL_CELLS, topology=CAL_TOPOLOGY, calibration=CALIBRATION,
                      stat=STAT, **kw)
            return scale.load(d)

    def rows(self, data):
        return {(r["engine"], r["lcores"]): r for r in scale.analyse(data)}

    def test_efficiency_against_the_cpus_own_speeds(self):
        rows = self.rows(self.data())
        b3 = rows[("burst", 3)]
        # 50 Mpps against 3 x 20 = 60, and against 20 + 20 + 10 = 50
        self.assertAlmostEqual(b3["efficiency"]["ratio"], 50 / 60, places=3)
        self.assertAlmostEqual(b3["own_mpps"], 50.0, places=3)
        self.assertAlmostEqual(b3["own_efficiency"]["median"], 1.0, places=3)
        # the raw spread is the slow CPU's; against each CPU's own none is left
        self.assertAlmostEqual(b3["spread"]["median"], 0.5, places=3)
        self.assertAlmostEqual(b3["own_spread"]["median"], 0.0, places=3)
        self.assertAlmostEqual(b3["slowest_lcore_vs_own"]["min"], 1.0, places=3)
        # dataplane: 3000/50 - 3000/250 = 48 ns against 1000/20 - 1000/100
        # = 40 at 1 lcore; the solo rates give 48 as well
        self.assertAlmostEqual(b3["dataplane_ns"]["median"], 48.0, places=2)
        self.assertAlmostEqual(b3["dataplane_efficiency"]["ratio"], 40 / 48, places=3)
        self.assertAlmostEqual(b3["own_dataplane_ns"], 48.0, places=2)
        self.assertAlmostEqual(b3["own_dataplane_efficiency"]["median"], 1.0, places=3)
        p3 = rows[("packet", 3)]
        self.assertAlmostEqual(p3["own_efficiency"]["median"], 30 / 40, places=3)
        self.assertAlmostEqual(p3["own_spread"]["median"], 0.0, places=3)
        self.assertAlmostEqual(p3["slowest_lcore_vs_own"]["median"], 0.75, places=3)
        self.assertAlmostEqual(rows[("none", 3)]["own_efficiency"]["median"], 1.0, places=3)

    def test_cpu_time_from_proc_stat(self):
        b3 = self.rows(self.data())[("burst", 3)]
        # one run with /proc/stat: CPU 2's 10 % steal is the max; CPU 3 is
        # the other CPUs' load (the main lcore's CPU is 3 in this order,
        # so none is left: the fixture's main lcore is the last CPU)
        self.assertEqual(b3["steal_pct"]["n"], 1)
        self.assertAlmostEqual(b3["steal_pct"]["max"], 10.0, places=3)
        self.assertAlmostEqual(b3["irq_pct"]["max"], 0.0, places=3)
        self.assertEqual(b3["others_busy_pct"]["n"], 0)
        self.assertEqual(b3["numa_nodes"], ["0"])
        data = self.data(order="0 1 2 3 4")
        b3 = self.rows(data)[("burst", 3)]
        self.assertAlmostEqual(b3["others_busy_pct"]["median"], 50.0, places=3)

    def test_calibration_rows(self):
        cal = {r["cpu"]: r for r in scale.calibration_rows(self.data())}
        self.assertEqual(sorted(cal), [0, 1, 2])
        self.assertAlmostEqual(cal[2]["mpps"]["burst"]["median"], 10.0, places=3)
        self.assertAlmostEqual(cal[2]["vs_median_cpu"]["none"], 0.5, places=3)
        self.assertEqual(cal[2]["core"], "0:2")
        self.assertAlmostEqual(scale.cpu_speed_spread(list(cal.values()), "none"), 0.5,
                               places=3)
        # each CPU's lcore at 3 lcores against itself alone: burst runs at
        # its CPUs' own speeds, packet at 3/4 of them on every CPU
        for cpu in (0, 1, 2):
            self.assertEqual(cal[cpu]["together_lcores"], 3)
            self.assertAlmostEqual(cal[cpu]["together_vs_alone"]["burst"]["median"], 1.0,
                                   places=3)
            self.assertAlmostEqual(cal[cpu]["together_vs_alone"]["packet"]["median"], 0.75,
                                   places=3)
            self.assertEqual(cal[cpu]["together_vs_alone"]["packet"]["n"], 2)

    def test_one_lcore_count_has_no_together(self):
        with tempfile.TemporaryDirectory() as d:
            write_raw(d, {k: v for k, v in CAL_CELLS.items() if k[1] == 1},
                      topology=CAL_TOPOLOGY, calibration={("burst", 0): [20.0]})
            cal = scale.calibration_rows(scale.load(d))
        self.assertEqual(cal[0]["together_lcores"], None)
        self.assertEqual(cal[0]["together_vs_alone"], {"burst": None})

    def test_verdict_says_which_limit_applies(self):
        data = self.data()
        rows = scale.analyse(data)
        v = scale.verdicts(rows, data["plan"], scale.calibration_rows(data))
        burst = next(x for x in v if x.startswith("burst"))
        packet = next(x for x in v if x.startswith("packet"))
        self.assertIn("not resolved (2 pair(s), a 95 % interval needs 6), against the 0.90 "
                      "target", burst)
        self.assertIn("the limit is the machine's", burst)
        self.assertIn("span 0.5", burst)
        self.assertIn("below the target against the CPUs' own speeds too", packet)
        self.assertIn("reaches 1.000 of its CPUs' own rates", packet)
        self.assertIn("at one lcore the curve's runs against the same CPU alone give 1.000",
                      burst)

    def test_one_lcore_against_its_cpu_alone_is_noise_not_a_limit(self):
        with tempfile.TemporaryDirectory() as d:
            write_raw(d, {k: v for k, v in CAL_CELLS.items() if k[1] == 1},
                      topology=CAL_TOPOLOGY,
                      calibration={("none", 0): [100.0], ("burst", 0): [25.0],
                                   ("packet", 0): [16.0]})
            data = scale.load(d)
        v = scale.verdicts(scale.analyse(data), data["plan"], scale.calibration_rows(data))
        burst = next(x for x in v if x.startswith("burst"))
        self.assertIn("one lcore count only", burst)
        self.assertIn("against its CPU alone (calibration): 0.800, the runs' own noise", burst)
        self.assertNotIn("below the target", burst)

    def test_without_calibration_the_report_says_so(self):
        with tempfile.TemporaryDirectory() as d:
            write_raw(os.path.join(d, "raw"), CAL_CELLS, topology=CAL_TOPOLOGY)
            with redirect_stdout(io.StringIO()) as text:
                main(["scale", "--from", os.path.join(d, "raw"), "--out", d])
            self.assertIn("No calibration runs", text.getvalue())
            with open(os.path.join(d, "scale.json")) as f:
                j = json.load(f)
            self.assertEqual(j["calibration_rows"], [])
            self.assertNotIn("own_efficiency", j["rows"][0])

    def test_report_with_calibration_and_smt(self):
        with tempfile.TemporaryDirectory() as d:
            raw = os.path.join(d, "raw")
            write_raw(raw, CAL_CELLS, topology=CAL_TOPOLOGY, calibration=CALIBRATION,
                      stat=STAT, extra_plan="smt 3 0+2\n")
            with redirect_stdout(io.StringIO()) as text:
                status = main(["scale", "--from", raw, "--out", d])
            self.assertEqual(status, 0)
            out = text.getvalue()
            self.assertIn("Each CPU alone (calibration)", out)
            self.assertIn("The curve against the CPUs' own speeds", out)
            self.assertIn("packet together (3 lcores) ÷ alone", out)
            self.assertIn("at 3 lcores, polling lcores share physical cores (SMT siblings: "
                          "0+2)", out)
            with open(os.path.join(d, "scale.json")) as f:
                j = json.load(f)
            self.assertEqual(len(j["calibration_rows"]), 3)
            self.assertEqual(len(j["calibration"]), 9)
            self.assertEqual(j["plan"]["smt_lines"], ["3 0+2"])


class RecordedHost(unittest.TestCase):
    """host/ and a run's .stat as scale.sh wrote them on a 2-vCPU KVM
    guest (data/scale_host/)."""
    DIR = os.path.join(HERE, "data", "scale_host")

    def text(self, name):
        with open(os.path.join(self.DIR, name)) as f:
            return f.read()

    def test_machine_note(self):
        host = {k: self.text(k) for k in ("cpus", "mhz_before", "mhz_after")}
        note = scale.machine_note(host, {"order": "0 1"})
        self.assertIn("1 socket(s), 2 core(s), 1 thread(s) per core", note)
        self.assertIn("node 0: CPUs 0-1", note)
        self.assertIn("hypervisor: yes", note)
        self.assertIn("CPU MHz", note)
        self.assertEqual(sorted(scale.read_mhz(host["mhz_before"])), [0, 1])

    def test_topology_and_cpu_time(self):
        self.assertEqual(scale.read_nodes(self.text("topology")), {0: "0", 1: "0"})
        self.assertEqual(scale.read_topology(self.text("topology")), {0: ("0", "0"),
                                                                     1: ("0", "1")})
        shares = scale.read_cpu_time(self.text("run.stat"))
        self.assertEqual(sorted(shares), [0, 1])
        for cpu, sh in shares.items():
            for key in ("steal", "irq", "busy"):
                self.assertTrue(0.0 <= sh[key] <= 1.0, (cpu, key, sh))


class Script(unittest.TestCase):
    SCRIPT = os.path.join(HERE, os.pardir, "scale.sh")

    def test_bad_options_are_one_line(self):
        for args, want in ((["--reps", "0"], "--reps 0: want an integer >= 1"),
                           (["--lcores", "999"], "polling lcores"),
                           (["--frobnicate", "1"], "unknown option '--frobnicate'"),
                           (["--calibrate", "x"], "--calibrate x: want a number of passes"),
                           (["--main-cpu", "4096"], "--main-cpu 4096: not a CPU this "
                            "process may use"),
                           ([], "--out DIR is required")):
            with tempfile.TemporaryDirectory() as d:
                cmd = ["bash", self.SCRIPT] + (["--out", d] if args else []) + args
                p = subprocess.run(cmd, capture_output=True, text=True)
                self.assertEqual(p.returncode, 2, (args, p.stderr))
                self.assertIn(want, p.stderr)

    def test_one_lcore_here(self):
        """A short real run: one lcore, the empty pipeline and burst, one
        calibration pass (the CPU alone: here the curve's own CPU), and the
        report over it."""
        binary = built_binary(self)
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run(["bash", self.SCRIPT, "--out", d, "--listrx", binary,
                                "--lcores", "1", "--engines", "burst", "--reps", "1",
                                "--calibrate", "1", "--duration", "0.3", "--mem", "512"],
                               capture_output=True, text=True, timeout=180)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("4 runs planned (2 on the curve, 2 calibrating 1 CPU(s)", p.stderr)
            data = scale.load(d)
            # the binary and the commit it is built from, for provenance
            self.assertEqual(data["host"]["listrx_command"], binary)
            self.assertIn("\ncommit: ", data["host"]["listrx_version"])
            if int(data["plan"]["max_lcores"]) < 2:
                self.assertIn("no scaling curve on this host", p.stderr)
            self.assertEqual([(r["engine"], r["status"]) for r in data["runs"]],
                             [("none", 0), ("burst", 0)])
            cpu0 = int(data["plan"]["order"].split()[0])
            self.assertEqual([(r["cpu"], r["engine"], r["status"]) for r in data["calibration"]],
                             [(cpu0, "none", 0), (cpu0, "burst", 0)])
            for r in data["runs"] + data["calibration"]:
                self.assertTrue(r["mpps"] and r["mpps"] > 0 and len(r["per_lcore"]) == 1, r)
                # /proc/stat before and after: the polling CPU's time
                self.assertIn(cpu0, r["cpu_time"], r)
            rows = scale.analyse(data)
            self.assertIsNotNone(rows[1]["dataplane_ns"]["median"])
            # the curve's one lcore against its CPU alone: a ratio, whatever
            # its value on a loaded host
            for row in rows:
                self.assertEqual(row["own_efficiency"]["n"], 1, row)
                self.assertGreater(row["own_efficiency"]["median"], 0)
            cal = scale.calibration_rows(data)
            self.assertEqual([c["cpu"] for c in cal], [cpu0])
            host = dict(scale.read_keyed(data["host"]["cpus"]))
            for key in ("sockets", "cores", "threads_per_core", "hypervisor", "online"):
                self.assertIn(key, host)
            with open("/proc/cpuinfo") as f:
                if "cpu MHz" in f.read():
                    self.assertIn(cpu0, scale.read_mhz(data["host"]["mhz_before"]))
            self.assertIn(cpu0, scale.read_topology(data["host"]["topology"]))

    def test_the_main_lcore_beside_a_polling_one(self):
        """--main-cpu on a polling CPU: a 2-CPU host runs 2 polling lcores,
        each CPU also alone, and the report has each CPU's rate together ÷
        alone. Not timed: any rate is accepted."""
        cpus = sorted(os.sched_getaffinity(0))
        if len(cpus) < 2:
            self.skipTest("SKIPPED: this process may use one CPU")
        binary = built_binary(self)
        with tempfile.TemporaryDirectory() as d:
            p = subprocess.run(["bash", self.SCRIPT, "--out", d, "--listrx", binary,
                                "--lcores", "1,2", "--engines", "burst", "--reps", "1",
                                "--calibrate", "1", "--duration", "0.3", "--mem", "512",
                                "--main-cpu", str(cpus[0])],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(p.returncode, 0, p.stderr)
            data = scale.load(d)
            self.assertEqual(data["plan"]["main_shares"], "yes")
            self.assertEqual(data["plan"]["main_cpu"], str(cpus[0]))
            self.assertEqual(sorted((r["lcores"], r["engine"], r["status"])
                                    for r in data["runs"]),
                             [(1, "burst", 0), (1, "none", 0), (2, "burst", 0), (2, "none", 0)])
            two = [r for r in data["runs"] if r["lcores"] == 2]
            for r in two:
                self.assertEqual(len(r["per_lcore"]), 2, r)
                self.assertTrue(all(v > 0 for v in r["per_lcore"]), r)
            cal = scale.calibration_rows(data)
            self.assertEqual(len(cal), 2)
            for c in cal:
                self.assertEqual(c["together_lcores"], 2)
                self.assertGreater(c["together_vs_alone"]["burst"]["median"], 0)
            self.assertIn("shares CPU %d with a polling lcore" % cpus[0],
                          scale.limits_note(data["plan"]))


if __name__ == "__main__":
    unittest.main()
