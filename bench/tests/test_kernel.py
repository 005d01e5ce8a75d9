"""listrx-bench kernel: symbol sizes, perf parsing, layer mapping, the
figures and the report, on recorded data (bench/tests/data/kernel/); the
exit-2 path without root. The root run itself is the meson test
kernel-experiment-smoke (kernel_smoke.py)."""

import configparser
import contextlib
import io
import json
import os
import sys
import tempfile
import unittest
from unittest import mock

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from listrx_bench import cli, kernel, kernel_model as km  # noqa: E402

DATA = os.path.join(HERE, "data", "kernel")


def data(name):
    with open(os.path.join(DATA, name)) as f:
        return f.read()


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


class PerfAndLayers(unittest.TestCase):
    def test_perf_report_parsing(self):
        f = km.parse_perf_report(data("perf_report_udp_b1.txt"))
        self.assertEqual(len(f), 112)  # 114 lines, two blank
        self.assertAlmostEqual(f["__icmp_send"], 4.30)
        self.assertAlmostEqual(sum(f.values()), 100.0, delta=1.0)

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

    def test_shares_add_up(self):
        shares = km.layer_shares(km.parse_perf_report(data("perf_report_udp_b1.txt")))
        self.assertEqual(list(shares), km.LAYER_NAMES)
        self.assertAlmostEqual(sum(shares.values()), 100.0, delta=1.0)
        self.assertGreater(shares["IP"], 5)


class Figures(unittest.TestCase):
    def test_resolution(self):
        r = km.resolution({"median": 1.05, "min": 0.95, "max": 1.15})
        self.assertFalse(r["resolved"])
        self.assertAlmostEqual(r["improve_by"], 2.0)
        self.assertIn("not resolved", r["text"])
        self.assertTrue(km.resolution({"median": 1.3, "min": 1.1, "max": 1.5})["resolved"])

    def test_subtraction_and_gain_per_rep(self):
        runs = []
        for rep, (p1, p64) in enumerate([(400, 350), (420, 360), (410, 340)]):
            for b, p in ((1, p1), (8, (p1 + p64) / 2), (64, p64)):
                runs.append({"traffic": "udp", "rep": rep, "batch": b, "verdict": "pass",
                             "napi_cpu_ns": p * 1000, "xdp_packets": 1000, "sent": 1000})
                runs.append({"traffic": "udp", "rep": rep, "batch": b, "verdict": "drop",
                             "napi_cpu_ns": 300 * 1000, "xdp_packets": 1000, "sent": 1000})
        f = km.kernel_figures(runs)["udp"]
        self.assertEqual(f["gains"], [100 / 50, 120 / 60, 110 / 40])
        self.assertEqual(f["gain"], 2.0)
        self.assertEqual(f["gain_min"], 2.0)
        self.assertEqual(f["gain_max"], 2.75)
        self.assertEqual(f["ns_per_packet"], {"1": 110, "8": 75, "64": 50})
        self.assertEqual(f["saved_ns_per_packet"]["median"], 60)
        self.assertTrue(f["resolution"]["resolved"])

    def test_a_rep_whose_subtraction_is_not_positive_is_left_out_and_said(self):
        def runs_for(reps):
            out = []
            for rep, (p1, p64) in enumerate(reps):
                for b, p in ((1, p1), (8, p1), (64, p64)):
                    out.append({"traffic": "udp", "rep": rep, "batch": b, "verdict": "pass",
                                "napi_cpu_ns": p * 1000, "xdp_packets": 1000, "sent": 1000})
                    out.append({"traffic": "udp", "rep": rep, "batch": b, "verdict": "drop",
                                "napi_cpu_ns": 300 * 1000, "xdp_packets": 1000, "sent": 1000})
            return out
        # rep 1: PASS below DROP at batch 64; rep 2: at batch 1 (its ratio
        # would be a negative "gain", -20 / 50)
        f = km.kernel_figures(runs_for([(400, 350), (420, 290), (280, 350)]))["udp"]
        self.assertEqual(f["gains"], [2.0])
        self.assertEqual(f["reps"], 1)
        self.assertEqual([r["rep"] for r in f["rejected_reps"]], [1, 2])
        self.assertEqual(f["rejected_reps"][0]["stack_ns"], {"1": 120, "64": -10})
        self.assertIsNone(f["gain_unavailable"])
        res = km.summarize(runs_for([(400, 350), (420, 290), (280, 350)]), [], None, [], "udp",
                           {}, "fallback", {}, {"flavour": "plain"})
        with tempfile.TemporaryDirectory() as d:
            with open(km.write_report(res, os.path.join(d, "kernel.md"))) as md:
                text = md.read()
        self.assertIn("udp: 2 rep(s) left out of the gain (stack cost not positive): "
                      "rep 1: batch 1 120.0 ns, batch 64 -10.0 ns; "
                      "rep 2: batch 1 -20.0 ns, batch 64 50.0 ns", text)
        self.assertNotIn("not available", text)
        # no rep left: no gain, and the reason names each rep's figures
        f = km.kernel_figures(runs_for([(420, 290)]))["udp"]
        self.assertIsNone(f["gain"])
        self.assertIn("rep 0: batch 1 120.0 ns, batch 64 -10.0 ns", f["gain_unavailable"])
        res = km.summarize(runs_for([(420, 290)]), [], None, [], "udp", {}, "fallback", {},
                           {"flavour": "plain"})
        self.assertIsNone(res["kernel"]["gain"])
        self.assertEqual(res["kernel"]["gain_unavailable"], f["gain_unavailable"])
        with tempfile.TemporaryDirectory() as d:
            with open(km.write_report(res, os.path.join(d, "kernel.md"))) as f:
                text = f.read()
        self.assertIn("udp: gain not available: no rep had a positive stack cost", text)
        self.assertIn("rep 0: batch 1 120.0 ns, batch 64 -10.0 ns", text)
        self.assertNotIn("left out", text)

    def test_recorded_run_summary_and_report(self):
        rec = json.loads(data("kernel_runs_recorded.json"))
        res = km.summarize(rec["kernel"], rec["injectors"], rec["profile"], rec["listrx"],
                           rec["listrx_traffic"], rec["footprint"]["groups"],
                           rec["footprint"]["source"], rec["footprint"]["stage_kb"],
                           rec["listrx_build"])
        k = res["kernel"]
        for key in ("gain", "gain_min", "gain_max"):
            self.assertIsInstance(k[key], float)
        self.assertLessEqual(k["gain_min"], k["gain"])
        self.assertLessEqual(k["gain"], k["gain_max"])
        self.assertEqual(set(k["ns_per_packet"]), {"1", "8", "64"})
        self.assertEqual(set(k["by_traffic"]), {"udp", "udp-sock", "tcp"})
        self.assertEqual(k["by_traffic"]["udp"]["reps"], 7)
        self.assertTrue(k["delivery"]["ok"])
        self.assertAlmostEqual(res["agreement"], res["listrx"]["gain"] / k["gain"])
        self.assertLessEqual({"mmsg", "txring"}, set(res["injectors"]))
        self.assertEqual(set(res["profile"]), {"udp/1", "udp/64"})
        with tempfile.TemporaryDirectory() as d:
            md = km.write_report(res, os.path.join(d, "kernel.md"))
            text = open(md).read()
        self.assertIn("| udp |", text)
        self.assertIn("**agreement**", text)
        self.assertIn("| GRO |", text)
        self.assertIn("build-meta", text)


class Config(unittest.TestCase):
    def test_calibrated_config_is_valid_ini(self):
        mit = {"spectre_v2": "Mitigation: Retpolines", "spec_rstack_overflow": "Safe RET"}
        for kind in km.TRAFFIC:
            text = km.calibrated_config({"build-meta": 4, "gro": 13, "l3-demux": 37},
                                        "/proc/kallsyms", kind, mit)
            cp = configparser.ConfigParser(comment_prefixes=(";",))
            cp.read_string(text)
            self.assertEqual(cp["pipeline"]["stages"], "build-meta,gro,l3-demux")
            self.assertEqual(cp["stage.gro"]["footprint_kb"], "13")
            self.assertEqual(cp["stage.l3-demux"].get("udp_ports"),
                             "none" if kind == "udp" else None)

    def test_committed_config_matches_the_generator(self):
        root = os.path.dirname(os.path.dirname(HERE))
        cp = configparser.ConfigParser(comment_prefixes=(";",))
        cp.read(os.path.join(root, "conf", "kernel-calibrated.ini"))
        self.assertEqual(cp["pipeline"]["stages"], "build-meta,gro,l3-demux")
        for stage in km.STAGE_FUNCTIONS:
            self.assertGreater(int(cp["stage." + stage]["footprint_kb"]), 0)


class WithoutRoot(unittest.TestCase):
    def test_exits_2_with_the_reason(self):
        err = io.StringIO()
        with tempfile.TemporaryDirectory() as d, mock.patch.object(kernel.os, "geteuid",
                                                                   return_value=1000), \
                contextlib.redirect_stderr(err):
            rc = cli.main(["kernel", "--out", d])
        self.assertEqual(rc, 2)
        self.assertIn("needs root", err.getvalue())


if __name__ == "__main__":
    unittest.main()
