"""listrx-bench kernel: symbol sizes, layer mapping, the windows' arithmetic
and paired gains, perf callchain parsing, the summary and the report on
recorded data (bench/tests/data/kernel/); argument errors and the exit-2
path without root; clean-up of the session on errors and signals (with the
root-only parts replaced). The root run itself is the meson test
kernel-experiment-smoke (kernel_smoke.py)."""

import configparser
import contextlib
import inspect
import io
import json
import os
import re
import signal
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from listrx_bench import cli, kernel, kernel_model as km  # noqa: E402
from listrx_bench.report import Doc  # noqa: E402

DATA = os.path.join(HERE, "data", "kernel")
ROOT = os.path.dirname(os.path.dirname(HERE))


def data(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


def counters(**kw):
    """A window's counter delta: every counter of lrx_ktime.h, zero unless given."""
    c = {name: 0 for name in header_counters()}
    c.update(kw)
    return c


def header_counters():
    with open(os.path.join(ROOT, "bench", "kernel", "lrx_ktime.h")) as f:
        text = f.read()
    return re.findall(r"^\s*X\((\w+)\)", text, re.M)


class Kallsyms(unittest.TestCase):
    def test_size_is_the_distance_to_the_next_symbol(self):
        sizes = km.parse_kallsyms(data("kallsyms_excerpt.txt"))
        self.assertEqual(sizes["napi_build_skb"], 0xbd0 - 0xb20)
        self.assertEqual(sizes["eth_type_trans"], 0xe10 - 0xcc0)
        self.assertEqual(sizes["__netif_receive_skb_core.constprop.0"], 0x8f40 - 0x7b80)
        self.assertEqual(sizes["udp_rcv"], 0x30)

    def test_groups_use_base_names_and_skip_prefix_padding(self):
        groups = km.footprints_from_kallsyms(km.parse_kallsyms(data("kallsyms_excerpt.txt")))
        netif = groups["netif core + generic XDP"]
        self.assertEqual(netif["stage"], "l3-demux")
        self.assertEqual(netif["functions"], {"__netif_receive_skb_core": 0x8f40 - 0x7b80})
        self.assertIn("do_xdp_generic", netif["missing"])
        self.assertEqual(groups["skb build + eth_type_trans"]["bytes"], 0xb0 + 0x150)
        kb = km.stage_footprints(groups)
        self.assertEqual(set(kb), {"build-meta", "gro", "l3-demux"})
        self.assertEqual(kb["build-meta"], 1)  # 512 B rounds to 1 KB, never 0

    def test_hidden_addresses_are_an_error_not_zero_sizes(self):
        with self.assertRaises(ValueError):
            km.parse_kallsyms("0000000000000000 T napi_build_skb\n"
                              "0000000000000000 T eth_type_trans\n")

    def test_fallback_table_covers_every_group(self):
        fb = km.fallback_footprints()
        self.assertEqual(set(fb), set(km.FALLBACK_GROUP_BYTES))
        self.assertEqual(km.stage_footprints(fb), {"build-meta": 5, "gro": 10, "l3-demux": 28})


class Layers(unittest.TestCase):
    def test_layer_mapping(self):
        cases = {
            "veth_xdp_rcv_skb": "driver+skb build", "__napi_build_skb": "driver+skb build",
            "napi_gro_receive": "GRO", "gro_receive_skb": "GRO", "dev_gro_receive": "GRO",
            "inet_gro_receive": "GRO", "udp4_gro_receive": "GRO",
            "__netif_receive_skb_core.constprop.0": "netif core/XDP generic",
            "netif_receive_skb_list_internal": "netif core/XDP generic",
            "ip_sublist_rcv": "IP", "fib_table_lookup": "IP", "ip_route_input_slow": "IP",
            "__udp4_lib_rcv": "UDP/TCP", "tcp_v4_rcv": "UDP/TCP",
            "__icmp_send": "ICMP/RST reply", "ip_route_output_key_hash_rcu": "ICMP/RST reply",
            "kmem_cache_free": "skb free/alloc", "skb_release_data": "skb free/alloc",
            "finish_task_switch.isra.0": "other",
        }
        for sym, layer in cases.items():
            self.assertEqual(km.layer_of(sym), layer, sym)


class Windows(unittest.TestCase):
    def test_the_model_reads_only_counters_the_probes_have(self):
        names = set(header_counters())
        self.assertIn("gro_ns", names)
        with open(km.__file__) as f:
            src = f.read()
        # a window's counters, and window_figures' argument c
        wf = inspect.getsource(km.window_figures)
        read = set(re.findall(r'\["counters"\]\["(\w+)"\]', src) +
                   re.findall(r'\["counters"\]\.get\("(\w+)"', src) +
                   re.findall(r'\bc\["(\w+)"\]', wf) + re.findall(r'\bc\.get\("(\w+)"', wf))
        self.assertGreater(len(read), 10)
        self.assertLessEqual(read, names)

    def test_window_cost_is_removed_per_window_and_episode_hits_per_run(self):
        # 100 frames: GRO windows 30000 ns, of which 100 x 80 ns are the
        # windows' own cost and 10 episode hits inside (5 netif, 5 end) x
        # 50 ns; 2 episodes outside GRO windows, 4000 ns, 6 hits (2 inner)
        c = counters(gro_calls=100, gro_ns=30000, nr_in_gro=5, end_in_gro=5, ep_out_calls=2,
                     ep_out_ns=4000, ep_out_hits=6, polls=4, ep_in_calls=2, oncpu_ns=50000)
        f = km.window_figures(c, 80.0, 50.0)
        gro = 30000 - 100 * 80 - 10 * 50
        out = 4000 - 2 * 80 - 2 * 50
        self.assertAlmostEqual(f["stack_ns"], (gro + out) / 100)
        self.assertAlmostEqual(f["gro_window_ns"], 300)
        self.assertAlmostEqual(f["oncpu_ns"], 500)
        self.assertAlmostEqual(f["lists_per_poll"], 1.0)
        self.assertIsNone(km.window_figures(counters(), 80.0, 50.0))
        # without a calibration the raw windows are the figure
        self.assertAlmostEqual(km.window_figures(c, None, None)["stack_ns"], 340)

    def test_paired_gain_median_interval_and_resolution(self):
        pairs = {p: {1: 150.0 + p, 64: 100.0} for p in range(9)}
        g = km.paired_gain(pairs)
        self.assertEqual(g["pairs"], 9)
        self.assertAlmostEqual(g["gain"], 1.54)
        lo, hi = g["ci"]
        self.assertLessEqual(lo, g["gain"])
        self.assertLessEqual(g["gain"], hi)
        self.assertEqual(g["ci"], [151 / 100, 157 / 100])  # 2nd smallest, 2nd largest
        self.assertTrue(g["resolved"])
        # the median pair's sides: 1 / 64 is the gain
        self.assertEqual(km.sides(g), {"1": 154.0, "64": 100.0})
        self.assertEqual(km.paired_gain(pairs)["ci"], g["ci"])  # no resampling
        noisy = {p: {1: 100.0 + (15 if p % 2 else -15), 64: 100.0} for p in range(10)}
        n = km.paired_gain(noisy)
        self.assertFalse(n["resolved"])
        self.assertIn("interval [0.850–1.150] spans 1", n["text"])
        few = km.paired_gain({p: {1: 150.0, 64: 100.0} for p in range(5)})
        self.assertFalse(few["resolved"])
        self.assertEqual(few["text"], "not resolved: 5 pair(s), a 95 % interval needs 6")
        # a pair without both batches, or with a non-positive figure, is no pair
        self.assertEqual(km.paired_gain({0: {1: 5.0}, 1: {1: 5.0, 64: -1.0}})["pairs"], 0)

    def primary_windows(self):
        ws = []
        for p in range(8):
            cal = p % 4 == 3
            for b, stack in ((1, 300.0), (64, 200.0)):
                n = 1000
                c = counters(gro_calls=n, gro_ns=int(n * (stack + 80 + (150 if cal else 0))),
                             cal_calls=n if cal else 0, cal_ns=int(n * 80) if cal else 0,
                             polls=20, poll_work=n, oncpu_ns=n * 600)
                ws.append({"phase": "primary", "traffic": "udp", "pair": p, "batch": b,
                           "cal": cal, "counters": c, "sent": n, "failed": 0, "load": 3.0})
        return ws

    def test_primary_uses_calibration_windows_only_for_the_window_cost(self):
        f = km.primary_figures(self.primary_windows(), None)["udp"]
        self.assertEqual(f["window_cost_ns"], {"1": 80.0, "64": 80.0})
        self.assertEqual(f["calibration_windows"], {"1": 2, "64": 2})
        self.assertEqual(f["pairs"], 6)
        self.assertAlmostEqual(f["gain"], 1.5)
        self.assertEqual(f["stack_ns"], {"1": 300.0, "64": 200.0})
        self.assertTrue(f["delivery"]["ok"])
        self.assertEqual(f["load"]["median"], 3.0)

    def test_overhead_and_kthread_gain(self):
        ws = []
        for p in range(3):
            for b, base in ((1, 900.0), (64, 600.0)):
                for on in (True, False):
                    n = 1000
                    ws.append({"phase": "overhead", "traffic": "udp", "pair": p, "batch": b,
                               "probes": on, "load": 2.0,
                               "counters": counters(poll_work=n,
                                                    oncpu_ns=int(n * (base + (280 if on else 0))))})
        o = km.overhead_figures(ws)
        self.assertEqual(o["per_frame_ns"], {"1": 280.0, "64": 280.0})
        self.assertAlmostEqual(o["per_prog_ns"], 70.0)
        self.assertAlmostEqual(o["kthread_gain"]["gain"], 1.5)
        self.assertEqual(o["kthread_ns_without_probes"], {"1": 900.0, "64": 600.0})


class Perf(unittest.TestCase):
    def test_callchains_parse_leaf_first(self):
        s = km.parse_perf_callchains(data("perf_callchains_udp_b1.txt"))
        self.assertEqual(len(s), 20)
        t, ip, chain = s[0]
        self.assertEqual(t, 2356170174000)
        self.assertEqual(ip, 0xffffffff820470aa)
        self.assertEqual(chain[:3], ["udp_v4_early_demux", "ip_rcv_finish_core",
                                     "ip_sublist_rcv"])
        self.assertEqual(chain[-1], "ret_from_fork_asm")
        # 17 of the 20 have gro_receive_skb or the list function in their chain
        self.assertEqual(sum(any(x in km.STACK_ROOTS for x in c) for _, _, c in s), 17)

    def test_samples_go_to_the_window_of_their_time(self):
        s = km.parse_perf_callchains(data("perf_callchains_udp_b1.txt"))
        mid = s[9][0]
        ws = [{"t0": s[0][0] - 1, "t1": mid, "traffic": "udp", "batch": 1},
              {"t0": mid + 1, "t1": s[-1][0] + 1, "traffic": "udp", "batch": 64}]
        lines = km.assign_samples(s, ws)
        self.assertEqual(ws[0]["perf"]["samples"], 10)
        self.assertEqual(ws[1]["perf"]["samples"], 10)
        self.assertEqual(sum(ws[0]["perf"]["layers"].values()), 10)
        self.assertEqual(ws[0]["perf"]["functions"]["udp_v4_early_demux"], 2)
        self.assertTrue(all(v % 64 == 0 and v > 0 for v in lines.values()))

    def test_perf_gain_and_layers(self):
        ws = []
        for p in range(5):
            for b, stack in ((1, 30), (64, 20)):
                ws.append({"phase": "perf", "traffic": "udp", "pair": p, "batch": b,
                           "load": 1.0, "counters": counters(poll_work=1000),
                           "perf": {"samples": 50, "stack": stack,
                                    "layers": {"IP": stack, "driver+skb build": 50 - stack},
                                    "functions": {}}})
        f = km.perf_figures(ws, 100000)["udp"]
        self.assertAlmostEqual(f["gain"], 1.5)
        self.assertAlmostEqual(f["stack_ns"]["1"], 30 * 100000 / 1000)
        self.assertAlmostEqual(f["layers"]["64"]["IP"]["ns_per_packet"], 2000.0)
        self.assertAlmostEqual(f["layers"]["1"]["IP"]["share_pct"], 60.0)


class Agreement(unittest.TestCase):
    def test_only_when_both_gains_are_resolved(self):
        k = {"gain": 1.5, "resolved": True, "resolution": "resolved"}
        lx = {"gain": 1.2, "resolved": True, "resolution": "resolved"}
        a, why = km.agreement_of(k, lx)
        self.assertAlmostEqual(a, 0.8)
        self.assertIsNone(why)
        a, why = km.agreement_of(dict(k, resolved=False, resolution="includes 1.0"), lx)
        self.assertIsNone(a)
        self.assertIn("kernel's gain is not resolved (includes 1.0)", why)
        a, why = km.agreement_of(k, dict(lx, resolved=False, resolution="wide"))
        self.assertIsNone(a)
        self.assertIn("listrx's gain is not resolved", why)
        self.assertIn("no listrx gain", km.agreement_of(k, {"gain": None})[1])

    def test_methods_side_by_side(self):
        m = km.methods_agreement({"udp": {"gain": 1.5}, "tcp": {"gain": 1.1}},
                                 {"udp": {"gain": 1.35}})
        self.assertEqual(set(m), {"udp"})
        self.assertAlmostEqual(m["udp"]["perf_over_tracepoint"], 0.9)
        self.assertTrue(m["udp"]["agree"])
        self.assertFalse(km.methods_agreement({"udp": {"gain": 1.5}},
                                              {"udp": {"gain": 1.1}})["udp"]["agree"])


class Recorded(unittest.TestCase):
    def test_recorded_run_summary_and_report(self):
        rec = json.loads(data("kernel_windows_recorded.json"))
        res = km.summarize(rec["windows"], rec["listrx"], rec["listrx_traffic"],
                           rec["footprint"]["groups"], rec["footprint"]["source"],
                           rec["footprint"]["stage_kb"], rec["listrx_build"],
                           perf_period_ns=rec["perf_period_ns"], row_checks=rec["row_checks"],
                           row_what={v: kernel.VARIANTS[v]["what"] for v in rec["row_checks"]})
        k = res["kernel"]
        self.assertEqual(set(k["by_traffic"]), {"udp", "tcp-push"})
        self.assertIsInstance(k["gain"], float)
        self.assertLessEqual(k["ci"][0], k["gain"])
        self.assertLessEqual(k["gain"], k["ci"][1])
        self.assertIn("order statistics", k["interval_method"])
        # every gain's two sides are its median pair's: their ratio is the gain
        for f in list(k["by_traffic"].values()) + list(k["perf"].values()):
            self.assertAlmostEqual(f["stack_ns"]["1"] / f["stack_ns"]["64"], f["gain"])
        lx = res["listrx"]
        self.assertAlmostEqual(lx["ns_per_packet"]["packet"] / lx["ns_per_packet"]["burst"],
                               lx["gain"])
        # 5 window pairs and 2 listrx repetitions: too few for a 95 %
        # interval, so neither is resolved and there is no agreement
        self.assertEqual(k["pairs"], 5)
        self.assertFalse(k["resolved"])
        self.assertIn("5 pair(s), a 95 % interval needs 6", k["resolution"])
        self.assertIsNone(res["agreement"])
        self.assertIn("tracepoint", k["method"])
        self.assertIsInstance(k["probe_overhead"]["per_prog_ns"], float)
        self.assertEqual(set(k["perf"]), {"udp", "tcp-push"})
        self.assertEqual(set(k["methods"]), {"udp", "tcp-push"})
        for f in k["by_traffic"].values():
            self.assertTrue(f["delivery"]["ok"])
            self.assertEqual(f["counts"]["errors"], 0)
        if res["agreement"] is None:
            self.assertTrue(res["agreement_unavailable"])
        else:
            self.assertTrue(k["resolved"] and res["listrx"]["resolved"])
        self.assertEqual(set(res["rows"]), {"nf-rule", "nft-rule", "tc-bpf", "xdp-generic-map"})
        for r in res["rows"].values():
            self.assertTrue(r["check"]["ok"])
            self.assertEqual(r["traffic"], "udp")
        self.assertEqual(set(res["subtraction"]), {"fixed", "adaptive"})
        cal = res["calibration"]
        self.assertEqual([r["layer"] for r in cal["rows"]], km.LAYER_NAMES)
        self.assertIn("packet", cal["rows"][0]["listrx_ns"])
        with tempfile.TemporaryDirectory() as d:
            with open(km.write_report(res, os.path.join(d, "kernel.md"))) as f:
                text = f.read()
        for s in ("| udp |", "## Second method", "## Calibration", "| GRO |",
                  "## Rows", "| nf-rule |", "## The first methods", "agreement"):
            self.assertIn(s, text)

    def test_the_answer_ends_stdout_and_opens_kernel_md(self):
        """Each traffic's gain with its caveat, listrx's, the agreement:
        what `listrx-bench kernel` prints last, and kernel.md's first
        section."""
        rec = json.loads(data("kernel_windows_recorded.json"))
        res = km.summarize(rec["windows"], rec["listrx"], rec["listrx_traffic"],
                           rec["footprint"]["groups"], rec["footprint"]["source"],
                           rec["footprint"]["stage_kb"], rec["listrx_build"],
                           perf_period_ns=rec["perf_period_ns"])
        d = Doc()
        km.add_answer(d, res)
        lines = d.text().splitlines()
        self.assertTrue(lines[0].startswith("== Answer"), lines[0])
        udp = res["kernel"]["by_traffic"]["udp"]
        self.assertIn("- kernel, udp: %.3f× [%.3f–%.3f], 5 pairs, CPU sharing not recorded: "
                      "not resolved (5 pair(s), a 95 %% interval needs 6)"
                      % (udp["gain"], udp["ci"][0], udp["ci"][1]), lines)
        self.assertTrue(any(line.startswith("- kernel, tcp-push: ") for line in lines))
        self.assertTrue(any(line.startswith("- kernel, udp, second method (perf): ")
                            for line in lines))
        self.assertTrue(any(line.startswith("- listrx (") and ", 2 pairs, " in line
                            for line in lines))
        self.assertTrue(lines[-1].startswith("- agreement (listrx ÷ kernel, udp): none: "),
                        lines[-1])
        with tempfile.TemporaryDirectory() as tmp:
            with open(km.write_report(res, os.path.join(tmp, "kernel.md"))) as f:
                self.assertTrue(f.read().startswith("## Answer"))

    def test_listrx_runs_that_shared_their_cpu_are_counted(self):
        rec = json.loads(data("kernel_windows_recorded.json"))
        self.assertIsNone(km.listrx_figures(rec["listrx"])["comparison"]["shared"])
        runs = [dict(r, shared_cpu_pct=50.0 if r["rep"] == 0 else None)
                for r in rec["listrx"]]
        self.assertEqual(km.listrx_figures(runs)["comparison"]["shared"], 1)

    def test_rows_measured_alone(self):
        rec = json.loads(data("kernel_windows_recorded.json"))
        rows = km.row_figures(rec["windows"], None, rec["row_checks"],
                              {"tc-bpf": "tc", "nf-rule": "nf"})
        self.assertEqual(set(rows), {"tc-bpf", "nf-rule"})
        self.assertGreater(rows["tc-bpf"]["pairs"], 0)


class Config(unittest.TestCase):
    def test_calibrated_config_is_valid_ini(self):
        mit = {"spectre_v2": "Mitigation: Retpolines", "spec_rstack_overflow": "Safe RET"}
        for kind, t in km.TRAFFIC.items():
            if t["synth"] is None:
                continue
            text = km.calibrated_config({"build-meta": 4, "gro": 13, "l3-demux": 37},
                                        "/proc/kallsyms", kind, mit)
            cp = configparser.ConfigParser(comment_prefixes=(";",))
            cp.read_string(text)
            self.assertEqual(cp["pipeline"]["stages"], "build-meta,gro,l3-demux")
            self.assertEqual(cp["stage.gro"]["footprint_kb"], "13")
            self.assertEqual(cp["stage.l3-demux"].get("udp_ports"),
                             "none" if kind == "udp" else None)

    def test_committed_config_matches_the_generator(self):
        cp = configparser.ConfigParser(comment_prefixes=(";",))
        cp.read(os.path.join(ROOT, "conf", "kernel-calibrated.ini"))
        self.assertEqual(cp["pipeline"]["stages"], "build-meta,gro,l3-demux")
        for stage in km.STAGE_FUNCTIONS:
            self.assertGreater(int(cp["stage." + stage]["footprint_kb"]), 0)


class Arguments(unittest.TestCase):
    def run_cli(self, *extra):
        err = io.StringIO()
        with tempfile.TemporaryDirectory() as d, contextlib.redirect_stderr(err):
            rc = cli.main(["kernel", "--out", d] + list(extra))
        return rc, err.getvalue()

    def test_without_root_exits_2_with_the_reason(self):
        with mock.patch.object(kernel.os, "geteuid", return_value=1000):
            rc, err = self.run_cli()
        self.assertEqual(rc, 2)
        self.assertIn("needs root", err)

    def test_bad_arguments_exit_2_naming_what_is_valid(self):
        cases = [(["--packets", "0"], "multiple of 256"),
                 (["--packets", "1000"], "multiple of 256"),
                 (["--pairs", "0"], "--pairs 0: want at least 1"),
                 (["--variant", "flower"], "--variant flower: want baseline,nf-rule"),
                 (["--traffic", "udp,sctp"], "traffic 'sctp': want udp,udp-sock,tcp,tcp-push"),
                 (["--listrx-traffic", "tcp-push"], "listrx has no such traffic"),
                 (["--traffic", "tcp", "--listrx-traffic", "udp"], "also give it in --traffic"),
                 (["--perf-pairs", "0"], "--no-perf"),
                 (["--cpu", "4096"], "CPU '4096': not one this process may use")]
        for extra, want in cases:
            with mock.patch.object(kernel, "run_kernel") as run:
                rc, err = self.run_cli(*extra)
            self.assertEqual(rc, 2, extra)
            self.assertIn(want, err, extra)
            run.assert_not_called()


class FakeVeth:
    instances = []

    def __init__(self, tag, queues=1):
        self.calls = []
        self.napi_pids = [1]
        FakeVeth.instances.append(self)

    def setup(self, cpu):
        self.calls.append("setup")

    def close_socket(self):
        self.calls.append("close_socket")

    def close(self):
        self.calls.append("close")


class FakeGro:
    instances = []

    def __init__(self):
        self.saved, self.current, self.calls = 17, 17, []
        FakeGro.instances.append(self)

    def set(self, v):
        self.current = v

    def restore(self):
        self.calls.append("restore")
        self.current = self.saved


class FakeKtime:
    instances = []

    def __init__(self, art, pids):
        self.closed = False
        FakeKtime.instances.append(self)

    def close(self):
        self.closed = True


class CleanUp(unittest.TestCase):
    """kernel_session restores the sysctl, stops the timer (its BPF links
    go with it) and deletes the namespace on an error and on a signal."""

    def session(self):
        for cls in (FakeVeth, FakeGro, FakeKtime):
            cls.instances = []
        opts = mock.Mock(cpu=0)
        patches = [mock.patch.object(kernel, "Veth", FakeVeth),
                   mock.patch.object(kernel, "GroNormalBatch", FakeGro),
                   mock.patch.object(kernel, "Ktime", FakeKtime)]
        stack = contextlib.ExitStack()
        for p in patches:
            stack.enter_context(p)
        return stack, kernel.kernel_session({}, opts, lambda m: None)

    def assert_restored(self):
        self.assertEqual(FakeGro.instances[0].calls, ["restore"])
        self.assertEqual(FakeGro.instances[0].current, 17)
        self.assertIn("close", FakeVeth.instances[0].calls)
        self.assertTrue(all(k.closed for k in FakeKtime.instances))
        # the handlers are back and nothing stays blocked
        self.assertEqual(signal.getsignal(signal.SIGTERM), signal.SIG_DFL)
        self.assertNotIn(signal.SIGINT, signal.pthread_sigmask(signal.SIG_BLOCK, []))

    def test_error_inside_restores_everything(self):
        stack, sess = self.session()
        with stack, self.assertRaises(RuntimeError):
            with sess as exp:
                exp.gro.set(64)
                raise RuntimeError("an injector died")
        self.assert_restored()

    def test_sigterm_inside_restores_everything(self):
        stack, sess = self.session()
        with stack, self.assertRaises(KeyboardInterrupt):
            with sess as exp:
                exp.gro.set(1)
                os.kill(os.getpid(), signal.SIGTERM)
                for _ in range(100):  # the handler runs between bytecodes
                    pass
        self.assert_restored()

    def test_signals_are_blocked_while_restoring(self):
        stack, sess = self.session()
        seen = []

        def restore():
            seen.append(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []))
        with stack:
            with sess as exp:
                exp.gro.restore = restore
        self.assertEqual(seen, [True])


if __name__ == "__main__":
    unittest.main()
