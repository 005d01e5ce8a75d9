"""Interleaved windows (interleave.py): the order listrx runs the windows
in, the disturbed-window filter on recorded windows (a run whose polling
CPU a busy loop shared) and on made-up ones, the pairs, the interval of a
recorded case, the A/A control's wording."""

import contextlib
import io
import json
import os
import statistics
import tempfile
import unittest

from listrx_bench import cli, grid, interleave, stats
from listrx_bench.listrx import BenchError, Listrx, find_binary

from .support import data

RECORDED = "interleave-busy-loop.json"  # listrx --interleave packet,packet,burst, udp64,
# kernel pipeline, burst 64, 1 s, `taskset -c 1 sh -c 'while :; do :; done'`
# on the polling CPU; the first 300 windows


def recorded():
    return json.loads(data(RECORDED))


def window(**kw):
    w = {"engine": 0, "polls": 64, "packets": 4096, "cycles": 460000,
         "span_cycles": 463000, "gap_cycles": 2700, "cpu_ns": 201300.0, "run_delay_ns": 0,
         "nivcsw": 0, "k": 0}
    w.update(kw)
    return w


TSC = 2.3e9


class Order(unittest.TestCase):
    def test_the_order_is_listrx_s(self):
        # tests/core/test_windows.cpp checks lrx_window_engine against the
        # same sequences
        self.assertEqual([interleave.window_engine(k, 2) for k in range(8)],
                         [0, 1, 1, 0, 1, 0, 0, 1])
        self.assertEqual([interleave.window_engine(k, 3) for k in range(12)],
                         [0, 1, 2, 2, 1, 0, 1, 2, 0, 0, 2, 1])

    def test_a_repeated_engine_is_the_aa_control(self):
        self.assertEqual(interleave.engine_labels(["packet", "packet", "burst"]),
                         ["packet", "packet-aa", "burst"])
        labels, arg = interleave.interleave_arg(["packet", "burst", "graph"])
        self.assertEqual(labels, ["packet", "packet-aa", "burst", "graph"])
        self.assertEqual(arg, "packet,packet,burst,graph")
        self.assertEqual(interleave.interleave_arg(["packet", "burst"], aa=False)[1],
                         "packet,burst")


    def test_an_engine_with_a_prefetch_distance_and_another_base(self):
        self.assertEqual(grid.parse_engines("burst,burst/prefetch=4,hybrid:2/prefetch=16"),
                         ["burst", "burst/prefetch=4", "hybrid:2/prefetch=16"])
        for bad in ("burst/prefetch=17", "burst/prefetch=", "burst/fetch=2", "/prefetch=2"):
            with self.assertRaises(ValueError):
                grid.parse_engines(bad)
        self.assertEqual(grid.engine_kind("burst/prefetch=4-aa"), "burst")
        self.assertEqual(grid.engine_arg("burst/prefetch=4-aa"), "burst/prefetch=4")
        self.assertEqual(grid.engine_prefetch("burst/prefetch=4"), 4)
        self.assertIsNone(grid.engine_prefetch("burst"))
        labels, arg = interleave.interleave_arg(["burst", "burst/prefetch=4"], base="burst")
        self.assertEqual(labels, ["burst", "burst-aa", "burst/prefetch=4"])
        self.assertEqual(arg, "burst,burst,burst/prefetch=4")

    def test_a_process_of_its_own_gets_the_distance_as_a_set(self):
        lx = Listrx("/bin/true", lcores="0,1")
        cmd = lx.command({"profile": "udp64", "engine": "burst/prefetch=4", "burst": 64,
                          "pipeline_arg": "build-meta", "footprint_kb": 0}, "x.json")
        self.assertEqual(cmd[cmd.index("--engine") + 1], "burst")
        self.assertIn("pipeline.prefetch=4", cmd)


class SlowPort(unittest.TestCase):
    """A port slower than the lcore (a kernel-fed one): a window's cost is
    its busy cycles (the polls that received), its empty polls are
    waiting; the verdict says how much of the polling was."""

    def slow(self, share_busy, empty_share=0.5):
        s = recorded()
        w = s["interleave"]["lcores"][0]["windows"]
        burst = [e["engine"] for e in s["interleave"]["lcores"][0]["engines"]].index("burst")
        w["busy_cycles"] = [int(c * (share_busy if e == burst else 1.0))
                            for e, c in zip(w["engine"], w["cycles"])]
        w["empty_polls"] = [int(p * empty_share) for p in w["polls"]]
        return s

    def test_busy_cycles_are_the_cost(self):
        one = interleave.run_comparison(recorded(), "packet", "burst")
        half = interleave.run_comparison(self.slow(0.5), "packet", "burst")
        # burst's windows: half their cycles were busy, packet's all
        self.assertAlmostEqual(half["ratio"], 2 * one["ratio"], delta=0.01 * half["ratio"])
        w = interleave.lcore_windows(self.slow(0.5)["interleave"]["lcores"][0])[5]
        self.assertAlmostEqual(interleave.ns_per_packet(w, TSC),
                               w["busy_cycles"] / TSC * 1e9 / w["packets"])

    def test_without_busy_cycles_the_window_cycles(self):
        w = interleave.lcore_windows(recorded()["interleave"]["lcores"][0])[5]
        self.assertIsNone(w["busy_cycles"])
        self.assertAlmostEqual(interleave.ns_per_packet(w, TSC),
                               w["cycles"] / TSC * 1e9 / w["packets"])

    def test_the_verdict_says_the_port_was_slower(self):
        self.assertIsNone(interleave.source_text(interleave.run_comparison(
            recorded(), "packet", "burst")["windows"]))
        c = interleave.comparison([self.slow(1.0)] * 6, "packet", "burst")
        self.assertRegex(c["windows_text"], r"the port was slower than the lcore: \d+ of \d+ "
                         r"polls empty \(50 %\), [\d.]+ packets per poll that received")
        counts = c["windows"]
        self.assertEqual(counts["empty_polls"] * 2, counts["polls"])
        self.assertAlmostEqual(float(c["windows_text"].split("packets per poll")[0]
                                     .split(", ")[-1]),
                               counts["packets"] / (counts["polls"] - counts["empty_polls"]),
                               places=1)


class Disturbance(unittest.TestCase):
    def test_each_signal_alone_disturbs_a_window(self):
        self.assertEqual(interleave.disturbance(window(), TSC), [])
        self.assertEqual(interleave.disturbance(window(nivcsw=1), TSC), ["switched out"])
        self.assertEqual(interleave.disturbance(window(run_delay_ns=30000), TSC),
                         ["run-queue wait"])
        # 201.3 us span, 190 us on the CPU: 11 us gone without a switch
        # (steal under a hypervisor)
        self.assertEqual(interleave.disturbance(window(cpu_ns=190000.0), TSC), ["off CPU"])

    def test_off_cpu_below_the_floor_is_not_a_disturbance(self):
        span_ns = 463000 / TSC * 1e9
        # under 1 % of the span and under 2 us: the clocks' granularity
        self.assertEqual(interleave.disturbance(window(cpu_ns=span_ns - 1500), TSC), [])
        self.assertEqual(interleave.disturbance(window(cpu_ns=span_ns - 1900), TSC), [])
        self.assertEqual(interleave.disturbance(window(cpu_ns=span_ns * 0.985), TSC),
                         ["off CPU"])

    def test_an_unreadable_signal_disturbs_nothing(self):
        self.assertEqual(interleave.disturbance(window(cpu_ns=None, run_delay_ns=None,
                                                       nivcsw=None), TSC), [])

    def test_recorded_run_every_pair_used_is_clean_every_disturbed_window_left_out(self):
        s = recorded()
        tsc = s["tsc_hz"]
        lc = s["interleave"]["lcores"][0]
        w = lc["windows"]
        n = len(w["engine"])
        switched = [k for k in range(n) if w["nivcsw"][k] > 0]
        self.assertGreater(len(switched), 10)  # the busy loop took the CPU
        pairs, left, counts = interleave.window_pairs(s, "packet", "burst")
        self.assertEqual(counts["windows"], n)
        # every window with a switch counts as disturbed
        self.assertGreaterEqual(counts["disturbed"], len(switched))
        self.assertEqual(counts["reasons"]["switched out"], len(switched))
        labels = interleave.engine_labels([e["engine"] for e in lc["engines"]])
        ia, ib = labels.index("packet"), labels.index("burst")
        used = {key[1] for key, _, _ in pairs}
        self.assertEqual({key[0] for key, _, _ in pairs}, {lc["lcore"]})
        for block in range(n // 3):
            ks = [block * 3 + p for p in range(3)]
            ab = [k for k in ks if w["engine"][k] in (ia, ib)]
            dirty = any(w["nivcsw"][k] or w["run_delay_ns"][k] for k in ab)
            if block in used:
                self.assertFalse(dirty, "block %d" % block)
                for k in ab:
                    span_ns = w["span_cycles"][k] / tsc * 1e9
                    self.assertGreater(w["cpu_ns"][k], 0.99 * span_ns)
            elif dirty:
                self.assertIn((lc["lcore"], block), [key for key, _ in left])
        self.assertEqual(len(pairs) + len(left), n // 3)
        self.assertEqual(counts["warmup"], interleave.WARMUP_BLOCKS)
        # the pair's figures are the windows' cycles per packet in ns
        key, a, b = pairs[0]
        ka = next(k for k in range(key[1] * 3, key[1] * 3 + 3) if w["engine"][k] == ia)
        self.assertAlmostEqual(a, w["cycles"][ka] / tsc * 1e9 / w["packets"][ka])

    def test_a_window_cut_short_is_left_out(self):
        s = recorded()
        lc = s["interleave"]["lcores"][0]
        # block 15: windows 45-47, none disturbed in the recording
        self.assertFalse(any(lc["windows"]["nivcsw"][45:48]))
        lc["windows"]["polls"][45] = 17
        pairs, left, counts = interleave.window_pairs(s, "packet", "burst")
        self.assertEqual(counts["partial"], 1)
        self.assertIn(((lc["lcore"], 15), "window cut short"), left)

    def test_a_window_out_of_order_is_an_error(self):
        s = recorded()
        s["interleave"]["lcores"][0]["windows"]["engine"][4] = 0  # the order wants 1
        with self.assertRaises(ValueError):
            interleave.window_pairs(s, "packet", "burst")


class Interval(unittest.TestCase):
    def test_recorded_case(self):
        s = recorded()
        pairs, _, _ = interleave.window_pairs(s, "packet", "burst")
        c = interleave.run_comparison(s, "packet", "burst")
        ratios = sorted(a / b for _, a, b in pairs)
        # the figure is the median of the clean pairs' ratios, the interval
        # the order-statistic interval of that median (stats.compare)
        self.assertAlmostEqual(c["ratio"], statistics.median(ratios))
        lo, hi, level = stats.median_interval(ratios)
        self.assertEqual(c["ci"], [lo, hi])
        self.assertGreaterEqual(level, 0.95)
        self.assertLess(lo, c["ratio"])
        self.assertGreater(hi, c["ratio"])
        # burst costs less than packet on this pipeline: resolved, narrow
        self.assertTrue(c["resolved"])
        self.assertGreater(lo, 1.2)
        self.assertLess(c["width_pct"], 5.0)
        self.assertEqual(c["shared"], 0)
        self.assertEqual(len(c["left_out"]) + c["pairs"], len(s["interleave"]["lcores"][0]
                                                             ["windows"]["engine"]) // 3)
        self.assertRegex(interleave.windows_text(c["windows"]),
                         r"^\d+ of 300 windows disturbed, left out \(")
        # the sides: packet's median window over the pairs, burst's that
        # over the ratio, so that the two agree with the ratio exactly
        self.assertAlmostEqual(c["base"], statistics.median(a for _, a, _ in pairs))
        self.assertAlmostEqual(c["base"] / c["other"], c["ratio"])
        self.assertAlmostEqual(c["saving"], c["base"] - c["other"])

    def test_a_pair_per_run(self):
        # three runs: the recorded one, and the same with burst's windows
        # 10 % and 20 % slower: the runs' ratios are its ratio / 1.1, / 1.2
        runs = []
        for slower in (1.0, 1.1, 1.2):
            s = recorded()
            lc = s["interleave"]["lcores"][0]
            burst = [e["engine"] for e in lc["engines"]].index("burst")
            w = lc["windows"]
            w["cycles"] = [int(c * slower) if e == burst else c
                           for e, c in zip(w["engine"], w["cycles"])]
            runs.append(s)
        one = interleave.run_comparison(recorded(), "packet", "burst")
        c = interleave.comparison(runs, "packet", "burst", shared_runs=[2])
        self.assertEqual(c["pairs"], 3)
        self.assertEqual(len(c["runs"]), 3)
        for r, slower in zip(c["runs"], (1.0, 1.1, 1.2)):
            self.assertAlmostEqual(r["ratio"], one["ratio"] / slower, delta=0.002 * r["ratio"])
        # the median run, its interval the runs' [min, max] (3 runs: below 95 %,
        # not resolved), the run that shared its CPU counted
        self.assertAlmostEqual(c["ratio"], c["runs"][1]["ratio"])
        self.assertEqual(c["ci"], [min(c["ratios"]), max(c["ratios"])])
        self.assertFalse(c["resolved"])
        self.assertIn("needs 6", c["resolution"])
        self.assertEqual(c["shared"], 1)
        self.assertEqual(c["window_pairs"], sum(r["pairs"] for r in c["runs"]))
        self.assertEqual(c["windows"]["windows"], 900)
        self.assertRegex(c["windows_text"], r"^a pair per run \(the median of its window "
                         r"pairs\), \d+ window pairs in 3 run\(s\); \d+ of 900 windows")

    def test_nine_runs_keep_one_deviant_run_out_of_the_interval(self):
        # nine runs, one with every window 2x slower and burst's slower
        # still (another host state): it stays, and the interval is the
        # second smallest and largest run, not the deviant one
        runs = [recorded() for _ in range(9)]
        lc = runs[4]["interleave"]["lcores"][0]
        burst = [e["engine"] for e in lc["engines"]].index("burst")
        w = lc["windows"]
        w["cycles"] = [c * (2.6 if e == burst else 2) for e, c in zip(w["engine"], w["cycles"])]
        c = interleave.comparison(runs, "packet", "burst")
        one = interleave.run_comparison(recorded(), "packet", "burst")["ratio"]
        self.assertEqual(c["pairs"], 9)
        self.assertEqual(c["left_out"], [])
        self.assertLess(c["runs"][4]["ratio"], 0.8 * one)
        self.assertAlmostEqual(c["ratio"], one)
        self.assertEqual(c["ci"], [one, one])
        self.assertTrue(c["resolved"])

    def test_six_runs_resolve(self):
        c = interleave.comparison([recorded()] * 6, "packet", "burst")
        self.assertEqual(c["pairs"], 6)
        self.assertTrue(c["resolved"])


class AAControl(unittest.TestCase):
    def fake(self, ratio, ci, resolved=False):
        return {"ratio": ratio, "ci": list(ci), "resolved": resolved}

    def test_a_narrow_aa_says_nothing(self):
        self.assertIsNone(interleave.aa_caveat(self.fake(1.38, (1.37, 1.39), True),
                                               self.fake(1.0, (0.995, 1.004))))

    def test_an_aa_wider_than_the_effect_is_said(self):
        note = interleave.aa_caveat(self.fake(1.03, (1.02, 1.04), True),
                                    self.fake(1.0, (0.96, 1.05)))
        self.assertIn("reaches as far from 1 as the effect", note)

    def test_an_aa_off_1_is_said_with_whether_the_effect_holds_beyond_it(self):
        note = interleave.aa_caveat(self.fake(1.38, (1.37, 1.39), True),
                                    self.fake(1.025, (1.018, 1.029), True))
        self.assertIn("the A/A control reads 1.025 [1.018–1.029]", note)
        self.assertIn("the effect holds beyond it", note)
        # 1.04 [1.03-1.05] against an A/A of 1.025 [1.018-1.035]: 1.03/1.035 < 1
        note = interleave.aa_caveat(self.fake(1.04, (1.03, 1.05), True),
                                    self.fake(1.025, (1.018, 1.035), True))
        self.assertIn("the effect does not hold beyond it", note)

    def test_the_verdict_line_carries_the_aa_and_the_windows(self):
        r = interleave.compare_engines([recorded()], ["packet", "burst"])
        self.assertEqual(sorted(r), ["burst", "packet-aa"])
        text = r["burst"]["text"]
        self.assertTrue(text.startswith("burst ÷ packet: "))
        self.assertIn("; A/A ", text)
        self.assertIn("windows disturbed, left out", text)
        self.assertTrue(r["packet-aa"]["text"].startswith("A/A packet-aa: "))


if __name__ == "__main__":
    unittest.main()


class Users(unittest.TestCase):
    """kernel's listrx gain from interleaved runs: the same comparison, its
    caveat with the windows and the A/A."""

    def test_kernel_listrx_gain_from_interleaved_runs(self):
        from listrx_bench import kernel_model
        lruns = [{"level": "interleave", "rep": r, "summary": recorded(),
                  "shared_cpu_pct": None} for r in range(6)]
        fig = kernel_model.listrx_figures(lruns)
        c = interleave.comparison([recorded()] * 6, "packet", "burst")
        self.assertEqual(fig["method"], "interleave")
        self.assertAlmostEqual(fig["gain"], c["ratio"])
        self.assertEqual(fig["ci"], c["ci"])
        self.assertEqual(fig["reps"], 6)
        self.assertTrue(fig["resolved"])
        text = kernel_model.gain_text(fig)
        self.assertIn("6 pairs, 0 shared the CPU: resolved", text)
        self.assertIn("; A/A 1.", text)
        self.assertIn("windows disturbed, left out", text)


class RealPaired(unittest.TestCase):
    """listrx-bench paired on the real binary, briefly: well-formed
    output, not figures."""

    def test_paired_writes_each_comparison_and_the_aa(self):
        try:
            find_binary()
        except BenchError as e:
            self.skipTest("SKIPPED: %s" % e)
        with tempfile.TemporaryDirectory() as out:
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                rc = cli.main(["paired", "--reps", "2", "--duration", "0.3", "--out", out,
                               "-q"])
            self.assertEqual(rc, 0, stderr.getvalue())
            with open(os.path.join(out, "paired.json")) as f:
                doc = json.load(f)
            self.assertEqual(sorted(doc["comparisons"]), ["burst", "packet-aa"])
            for c in doc["comparisons"].values():
                self.assertEqual(len(c["runs"]), 2)
                self.assertGreater(c["window_pairs"], 0)
            self.assertEqual(len(doc["runs"]), 2)
            # the second run listed the engines rotated
            names = [[e["engine"] for e in r["interleave"]["lcores"][0]["engines"]]
                     for r in doc["runs"]]
            self.assertEqual(names, [["packet", "packet", "burst"],
                                     ["packet", "burst", "packet"]])
            text = stdout.getvalue()
            self.assertIn("burst ÷ packet: ", text)
            self.assertIn("A/A packet-aa: ", text)
            self.assertIn("load average", text)
