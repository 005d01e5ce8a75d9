"""listrx-bench cree: the rows and their checks on recorded summaries, the
table's cells, bad arguments, and a small real run of the binary whose
cree.json and cree.md hold every requested row with the promised keys."""

import contextlib
import io
import json
import os
import tempfile
import unittest
from unittest import mock

from listrx_bench import cli, cree, kernel_model
from listrx_bench.listrx import BenchError, find_binary
from listrx_bench.stats import is_unavailable

ROW_KEYS = ("row", "what", "queues", "paper", "listrx", "kernel")
FIGURE_KEYS = ("gain", "ci", "resolved", "resolution", "pairs", "min", "max",
               "ns_per_packet", "runs", "check", "pipeline", "sets")


def u64s(*vals):
    return " ".join("%02x" % b for v in vals for b in v.to_bytes(8, "little"))


def summary(queues=(10, 10), maps=(), stages=()):
    return {"rx_packets": sum(queues),
            "ports": [{"queues": [{"rx_packets": q} for q in queues]}],
            "maps": list(maps), "stages": list(stages)}


def a_map(stage, name, entries):
    return {"stage": stage, "name": name, "lcore": 1,
            "entries": [{"key_int": k, "value": u64s(*v)} for k, v in entries.items()]}


class Rows(unittest.TestCase):
    def test_the_papers_rows_in_order(self):
        self.assertEqual(cree.ROW_NAMES, ["baseline", "single-rxq", "xdp-generic-jit",
                                          "xdp-generic-interp", "nf-rule", "conntrack",
                                          "tc-flower", "tc-bpf"])
        gains = {r["row"]: r["paper"]["gain"] for r in cree.ROWS}
        self.assertEqual(gains["baseline"], 1.266)
        self.assertEqual(gains["xdp-generic-interp"], 1.395)
        self.assertEqual(gains["xdp-generic-jit"], 1.270)
        self.assertEqual(gains["tc-flower"], 1.057)
        for r in cree.ROWS:
            self.assertTrue(r.get("kernel") or r.get("kernel_none"), r["row"])

    def test_worker_lcore(self):
        self.assertEqual(cree.worker_lcore("0-1"), 1)
        self.assertEqual(cree.worker_lcore("2,5"), 5)
        self.assertEqual(cree.worker_lcore("3"), 3)

    def test_row_files_put_each_stage_where_the_kernel_runs_it(self):
        # the binary's stage list (--list-stages --json) as far as it
        # places generic XDP
        stages = [{"name": "build-meta", "provides": ["meta", "skb"]},
                  {"name": "gro", "provides": ["skb"]},
                  {"name": "xdp", "provides": [], "shortcut": {"places": [
                      {"value": "native", "position": "first"},
                      {"value": "generic", "position": "after_skb"}]}}]
        art = {"xdp_port_filter": "/x/xdp_port_filter.bpf.o",
               "tc_port_drop": "/x/tc_port_drop.bpf.o", "stages": stages}
        by = {r["row"]: r for r in cree.ROWS}
        with tempfile.TemporaryDirectory() as tmp:
            _, p = cree.row_files(by["xdp-generic-interp"], art, tmp)
            self.assertEqual(p, "build-meta,gro,xdp,l3-demux")
            sets, p = cree.row_files(by["tc-bpf"], art, tmp)
            self.assertEqual(p, "build-meta,gro,tc-ingress,l3-demux")
            path = [s for s in sets if s.startswith("stage.tc-ingress.filters=")][0]
            with open(path.split("=", 1)[1]) as f:
                self.assertIn("bpf da obj /x/tc_port_drop.bpf.o sec tc", f.read())
            sets, p = cree.row_files(by["nf-rule"], art, tmp)
            self.assertEqual(p, cree.BASE_PIPELINE)
            path = [s for s in sets if s.startswith("stage.l3-demux.netfilter=")][0]
            with open(path.split("=", 1)[1]) as f:
                self.assertIn("--dport 10000:19999 -j DROP", f.read())
            _, p = cree.row_files(by["tc-flower"], art, tmp)
            self.assertEqual(cree.FLOWER.count("filter add"), cree.FLOWER_COUNT)


class Checks(unittest.TestCase):
    by = {r["row"]: r for r in cree.ROWS}

    def test_every_queue_must_receive(self):
        self.assertTrue(cree.row_check(self.by["baseline"], summary((5, 5, 5, 5)))["ok"])
        self.assertFalse(cree.row_check(self.by["baseline"], summary((5, 0, 5, 5)))["ok"])
        self.assertFalse(cree.row_check(self.by["baseline"], summary((5,)))["ok"])

    def test_map_values_decode_u64_words_and_sum_lcores(self):
        s = summary(maps=[a_map("tc-ingress", "filters", {0: (7, 0, 9)}),
                          a_map("tc-ingress", "filters", {0: (1, 2, 3)})])
        self.assertEqual(cree.map_values(s, "tc-ingress", "filters"), {0: [8, 2, 12]})

    def test_xdp_program_must_pass_everything_it_saw(self):
        row = self.by["xdp-generic-jit"]
        st = [{"name": "xdp", "packets": 40}]
        ok = summary((10,) * 4, [a_map("xdp", "filter_stats", {0: (40,), 1: (0,)})], st)
        self.assertTrue(cree.row_check(row, ok)["ok"])
        bad = summary((10,) * 4, [a_map("xdp", "filter_stats", {0: (39,), 1: (1,)})], st)
        self.assertFalse(cree.row_check(row, bad)["ok"])

    def test_nf_rule_must_see_every_packet_and_match_none(self):
        row = self.by["nf-rule"]
        st = [{"name": "l3-demux", "counters": {"IpInDelivers": 40}}]
        ok = summary((10,) * 4, [a_map("l3-demux", "filter/INPUT",
                                        {0: (40, 1840), 1: (0, 0)})], st)
        self.assertTrue(cree.row_check(row, ok)["ok"])
        hit = summary((10,) * 4, [a_map("l3-demux", "filter/INPUT",
                                         {0: (39, 1794), 1: (1, 46)})], st)
        self.assertFalse(cree.row_check(row, hit)["ok"])

    def test_conntrack_row_needs_the_table_used_and_no_rule_matching(self):
        row = self.by["conntrack"]
        self.assertIn("--ctstate INVALID", row["netfilter"])
        st = [{"name": "l3-demux", "counters": {"IpInDelivers": 40, "nf_conntrack_count": 6,
                                                "nf_conntrack_found": 34}}]
        ok = summary((10,) * 4, [a_map("l3-demux", "filter/INPUT",
                                        {0: (40, 1840), 1: (0, 0), 2: (0, 0)})], st)
        self.assertTrue(cree.row_check(row, ok)["ok"])
        invalid = summary((10,) * 4, [a_map("l3-demux", "filter/INPUT",
                                             {0: (39, 1794), 1: (1, 46), 2: (0, 0)})], st)
        self.assertFalse(cree.row_check(row, invalid)["ok"])
        st_off = [{"name": "l3-demux", "counters": {"IpInDelivers": 40}}]
        off = summary((10,) * 4, [a_map("l3-demux", "filter/INPUT",
                                         {0: (40, 1840), 1: (0, 0), 2: (0, 0)})], st_off)
        self.assertFalse(cree.row_check(row, off)["ok"])

    def test_flower_filters_each_run_none_match(self):
        row = self.by["tc-flower"]
        st = [{"name": "tc-ingress", "counters": {"classified": 20}}]
        ents = {i: (20, 0, 0) for i in range(cree.FLOWER_COUNT - 1)}
        ents[cree.FLOWER_COUNT - 1] = (0, 0, 0)  # the 802.1q one: not for untagged
        self.assertTrue(cree.row_check(row, summary((20,), [a_map(
            "tc-ingress", "filters", ents)], st))["ok"])
        ents[2] = (20, 1, 46)
        self.assertFalse(cree.row_check(row, summary((20,), [a_map(
            "tc-ingress", "filters", ents)], st))["ok"])


class Cells(unittest.TestCase):
    def test_gain_cells(self):
        """The one wording of a comparison, the 95 % interval labelled as
        such (it used to print [min - max] or the interval alike)."""
        pairs = {r: {1: 126.6 + r, 64: 100.0} for r in range(-3, 4)}
        fig = kernel_model.paired_gain(pairs, shared={-3, 0})
        self.assertEqual(cree.cell({"gain": fig["gain"], "comparison": fig}),
                         "+26.6 % [+23.6 %–+29.6 %], 7 pairs, 2 shared the CPU: resolved")
        few = kernel_model.paired_gain({0: {1: 90.0, 64: 100.0}, 1: {1: 105.0, 64: 100.0}})
        self.assertEqual(cree.cell({"gain": few["gain"], "comparison": few}),
                         "-2.8 % [-10.0 %–+5.0 %], 2 pairs, CPU sharing not recorded: not "
                         "resolved (2 pair(s), a 95 % interval needs 6)")
        self.assertEqual(cree.cell("unavailable: no flower"), "unavailable: no flower")
        self.assertEqual(cree.cell({"gain": None}), "n/a")

    def test_a_rows_figures_come_from_its_pairs(self):
        """measure_row's gain, its ns/packet per engine and its shared runs,
        on recorded summaries (no binary run)."""
        ns = {("packet", 0): 150.0, ("burst", 0): 100.0, ("packet", 1): 180.0,
              ("burst", 1): 100.0, ("packet", 2): 140.0, ("burst", 2): 100.0}

        class Lx:
            lcores, binary = "0-1", "listrx"

            def eal_args(self, vdev, eal=None):
                return []

            def run(self, cmd, path, timeout):
                engine, rep = cmd[cmd.index("--engine") + 1], int(path.split("-")[-1][:-5])
                out = ("listrx: warning: polling lcore 1 runs on CPU 1, which was 80 % busy "
                       "before the start\n" if rep == 1 else "")
                return ({"ns_per_packet": ns[(engine, rep)], "rx_packets": 10,
                         "ports": [{"queues": [{"rx_packets": 10}]}]}, None,
                        {"command": "x", "output": out})

        args = mock.Mock(reps=3, duration=0.1, eal=None, timeout=10)
        row = dict(cree.ROWS[1])  # single-rxq: nothing to configure
        with tempfile.TemporaryDirectory() as tmp:
            fig = cree.measure_row(Lx(), row, {}, args, tmp, lambda m: None)
        self.assertEqual(fig["pairs"], 3)
        self.assertAlmostEqual(fig["gain"], 1.5)
        self.assertEqual(fig["ns_per_packet"], {"packet": 150.0, "burst": 100.0})
        self.assertEqual(fig["shared"], 1)
        self.assertFalse(fig["resolved"])
        self.assertIn("3 pairs, 1 shared the CPU: not resolved", cree.cell(fig))

    def test_bad_arguments_exit_2(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            for bad in (["--rows", "baseline,nope"], ["--flavours", "fast"]):
                # argparse's usage error: exit status 2
                self.assertEqual(cli.main(["cree", "--out", tempfile.mkdtemp()] + bad), 2)
            self.assertEqual(cli.main(["cree", "--out", tempfile.mkdtemp(),
                                       "--reps", "1"]), 2)
        text = err.getvalue()
        self.assertIn("rows nope: want a comma list of baseline,single-rxq", text)
        self.assertIn("--reps 1: want at least 2", text)
        self.assertIn("flavours fast", text)


class RealCree(unittest.TestCase):
    """A small run of the real binary: three rows, the plain build, no
    kernel: cree.json has them with every key, their checks passed, and
    cree.md has a line per row."""

    def test_small_run(self):
        try:
            find_binary()
        except BenchError as e:
            self.skipTest("SKIPPED: %s" % e)
        rows = ["baseline", "nf-rule", "tc-flower"]
        with tempfile.TemporaryDirectory() as out:
            stdout, stderr = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                rc = cli.main(["cree", "--out", out, "--rows", ",".join(rows),
                               "--flavours", "plain", "--paired-reps", "1",
                               "--paired-duration", "0.3", "--kernel", "off", "-q"])
            self.assertEqual(rc, 0, stderr.getvalue())
            with open(os.path.join(out, "cree.json")) as f:
                doc = json.load(f)
            self.assertEqual([r["row"] for r in doc["rows"]], rows)
            for key in ("command", "date", "host", "load", "flavours", "rows", "kernel",
                        "failed_checks"):
                self.assertIn(key, doc)
            self.assertEqual(doc["failed_checks"], [])
            self.assertEqual(doc["provenance"]["binaries"][0]["path"], find_binary())
            for r in doc["rows"]:
                for k in ROW_KEYS:
                    self.assertIn(k, r)
                fig = r["listrx"]["plain"]
                for k in FIGURE_KEYS:
                    self.assertIn(k, fig)
                self.assertTrue(fig["check"]["ok"], fig["check"])
                # interleaved: pairs of adjacent windows, an A/A control beside
                self.assertEqual(fig["method"], "interleave")
                self.assertGreater(fig["pairs"], 0)
                self.assertGreater(fig["gain"], 0)
                self.assertLessEqual(fig["ci"][0], fig["gain"])
                self.assertLessEqual(fig["gain"], fig["ci"][1])
                self.assertIsNotNone(fig["aa"]["gain"])
                self.assertRegex(fig["windows_text"],
                                 r"\d+ window pairs in 1 run\(s\); \d+ of \d+ windows disturbed")
                self.assertTrue(is_unavailable(r["kernel"]), r["kernel"])
            with open(os.path.join(out, "cree.md")) as f:
                md = f.read()
            for r in rows:
                self.assertIn("| %s: " % r, md)
            self.assertIn("+26.6 %", md)


if __name__ == "__main__":
    unittest.main()
