"""listrx-bench seeds: the table of sections, the one paired comparison
and its cells, the page rendered from a recorded seeds.json (every
section, every published row, every measured cell a number with an
interval or a stated reason), the kernel side's parsers, bad arguments,
and a short real run of the binary (no root needed: --kernel off)."""

import contextlib
import io
import json
import os
import tempfile
import unittest

from listrx_bench import cli, cree
from listrx_bench.listrx import BenchError, find_binary
from listrx_bench.seeds import (SECTIONS, brouer, command, hints, kernel_xdp, measure, page,
                                tx_napi, zero_copy)
from listrx_bench.stats import is_unavailable

DATA = os.path.join(os.path.dirname(__file__), "data", "seeds")


def recorded():
    with open(os.path.join(DATA, "seeds.json")) as f:
        return json.load(f)


class Sections(unittest.TestCase):
    def test_one_table_of_sections_in_seed_order(self):
        self.assertEqual(list(SECTIONS), ["000", "001", "002", "003", "004"])
        for seed, mod in SECTIONS.items():
            self.assertEqual(mod.SEED, seed)
            for attr in ("TITLE", "SOURCE", "plan", "measure"):
                self.assertTrue(hasattr(mod, attr), (seed, attr))
        self.assertFalse(getattr(SECTIONS["002"], "COMING", False))
        self.assertFalse(getattr(SECTIONS["003"], "COMING", False))

    def test_the_seeds_hardware_is_named(self):
        self.assertIn("i7-6700K", brouer.SOURCE)
        self.assertIn("mlx5", brouer.SOURCE)
        self.assertIn("i40e", hints.SOURCE)
        self.assertIn("Haswell", tx_napi.SOURCE)
        self.assertIn("E2100", zero_copy.SOURCE)


class TxNapi(unittest.TestCase):
    def test_the_published_table_as_the_seed_gives_it(self):
        self.assertEqual(set(tx_napi.PUBLISHED), {"TCP_STREAM", "TCP_RR", "TCP_RR 4K",
                                                  "UDP_STREAM", "UDP_RR"})
        for test, rows in tx_napi.PUBLISHED.items():
            self.assertEqual(sorted(rows), [1, 10, 100], test)
        self.assertEqual(tx_napi.PUBLISHED["TCP_STREAM"][1]["Mbps"], (28985, 34492))
        self.assertEqual(tx_napi.PUBLISHED["TCP_RR"][100]["p99"], (414, 360))
        self.assertEqual(tx_napi.PUBLISHED["UDP_STREAM"][1]["Gcycles"], (305, 295))
        covered = {t for tests in tx_napi.TESTS.values() for t in tests}
        self.assertEqual(covered, set(tx_napi.PUBLISHED))

    def test_published_cells_give_napi_over_upstream(self):
        cell = tx_napi.published_cell("rr64", 1, "cycles")
        self.assertIn("TCP_RR 176 → 171 Gcycles (0.97×)", cell)
        self.assertIn("UDP_RR 183 → 181 Gcycles (0.99×)", cell)
        self.assertIn("TCP_RR 22 → 21 µs (0.95×)", tx_napi.published_cell("rr64", 1, "p50"))
        stream = tx_napi.published_cell("stream", 1, "cycles")
        self.assertIn("UDP_STREAM 305 → 295 Gcycles (0.97×), 29802 → 25600 Mbps (0.86×)",
                      stream)

    def test_the_affinity_configurations_cross_the_queue_pairs(self):
        with tempfile.TemporaryDirectory() as tmp:
            cfgs = {c["name"]: c for c in tx_napi.affinity_configs(tmp, [3, 5])}
            self.assertEqual(len(cfgs), len(tx_napi.AFFINITY) * 2 * len(tx_napi.AFFINITY_MODES))
            self.assertEqual(set(tx_napi.AFFINITY_MODES), {"xmit", "rx-poll"})
            same = cfgs["rr64 10x rx-poll same"]
            diff = cfgs["rr64 10x rx-poll different"]
            with open(same["args"][1]) as f:
                self.assertIn("[lcore.3]\npoll = 0:0\n[lcore.5]\npoll = 0:1", f.read())
            with open(diff["args"][1]) as f:
                self.assertIn("[lcore.3]\npoll = 0:1\n[lcore.5]\npoll = 0:0", f.read())
            self.assertIn("rxq=2,txq=2", diff["vdev"])
            self.assertIn("--burst", diff["args"])
            self.assertEqual(diff["args"][diff["args"].index("--burst") + 1], "10")

    def test_the_stream_runs_once_request_response_per_flow_count(self):
        names = [c["name"] for c in tx_napi.configs((1, 10, 100))]
        self.assertEqual(len(names), (2 * 3 + 1) * len(tx_napi.MODES))
        self.assertIn("stream 10x rx-poll", names)
        self.assertNotIn("stream 1x rx-poll", names)
        self.assertIn("rr4k 100x tx-poll", names)
        self.assertTrue(tx_napi.published_cell("rr64", 5, "p50").startswith("not published"))

    def test_a_run_that_leaves_or_doubles_an_mbuf_fails_its_check(self):
        good = {"rx_packets": 100, "tx_packets": 100, "mbufs_in_use_at_exit": 0,
                "mbufs_freed_twice_at_exit": 0,
                "tx_clean": {"mode": "rx-poll", "calls": 10, "freed": 100}}
        res = {"rr64 1x rx-poll": {"first": good},
               "rr64 1x tx-poll": {"first": dict(good, tx_clean=dict(good["tx_clean"],
                                                                     mode="tx-poll"),
                                                 mbufs_freed_twice_at_exit=1)},
               "rr64 1x xmit": {"first": dict(good, tx_clean={"mode": "xmit"},
                                              mbufs_in_use_at_exit=3)}}
        ok = {c["text"].split(":")[0]: c["ok"] for c in tx_napi.checks_of(res)}
        self.assertEqual(ok, {"rr64 1x rx-poll": True, "rr64 1x tx-poll": False,
                              "rr64 1x xmit": False})

    def test_the_kernel_cell_names_what_the_host_has(self):
        with tempfile.TemporaryDirectory() as root:
            dev = os.path.join(root, "class", "net", "eth0", "device")
            os.makedirs(dev)
            os.makedirs(os.path.join(root, "bus", "virtio", "drivers", "virtio_net"))
            os.symlink(os.path.join(root, "bus", "virtio", "drivers", "virtio_net"),
                       os.path.join(dev, "driver"))
            par = os.path.join(root, "module", "virtio_net", "parameters")
            os.makedirs(par)
            with open(os.path.join(par, "napi_tx"), "w") as f:
                f.write("Y\n")
            text = tx_napi.kernel_reason(root)
            self.assertTrue(is_unavailable(text), text)
            self.assertIn("eth0 here is virtio-net (napi_tx=Y)", text)
            self.assertIn("veth", text)
        with tempfile.TemporaryDirectory() as root:
            self.assertIn("no virtio-net device", tx_napi.kernel_reason(root))

    def test_cells_are_measured_cells(self):
        fig = measure.level({r: 800.0 + r for r in range(7)})
        self.assertTrue(page.is_measured_cell(tx_napi.value_cell(fig, "cycles/request")))
        self.assertTrue(page.is_measured_cell(tx_napi.spread([0.1, 0.2, 0.1], "per request")))
        self.assertTrue(page.is_measured_cell(tx_napi.spread([], "")))
        cg = {"ir": 812.3, "d1": 3.2, "packets": 40000}
        self.assertTrue(page.is_measured_cell(tx_napi.cg_cell(cg, "ir", "Ir/request")))
        self.assertTrue(page.is_measured_cell(tx_napi.cg_delta(cg, {"ir": 800.0, "d1": 3.0},
                                                               "ir", "Ir/request")))
        self.assertTrue(page.is_measured_cell(tx_napi.NO_DIFF))
        self.assertTrue(page.is_measured_cell(tx_napi.cg_cell({"d1": 0.04, "packets": 9},
                                                              "d1", "D1 misses/request")))
        self.assertIn("0.040 D1 misses/request", tx_napi.cg_cell({"d1": 0.04, "packets": 9},
                                                                 "d1", "D1 misses/request"))
        self.assertFalse(page.is_measured_cell("812.3 Ir/request"))


class Compare(unittest.TestCase):
    BASE = {r: 100.0 + r for r in range(7)}

    def test_a_difference_on_one_side_of_zero_resolves(self):
        other = {r: v + 10.0 + (r % 3) for r, v in self.BASE.items()}
        c = measure.compare(self.BASE, other)
        self.assertEqual(c["pairs"], 7)
        self.assertTrue(c["resolved"], c["resolution"])
        self.assertLess(c["ratio"], 1.0)
        # the median pair's sides: their difference is the cell's figure
        self.assertAlmostEqual(c["delta_ns"], c["other"] - c["base"])
        lo, hi = c["delta_ci"]
        self.assertTrue(0 < lo <= c["delta_ns"] <= hi)
        cell = measure.delta_cell(c)
        self.assertRegex(cell, r"^\+1[0-2]\.\d ns \[\+\d+\.\d–\+\d+\.\d\], 7 pairs, "
                         r"CPU sharing not recorded: resolved$")
        self.assertTrue(page.is_measured_cell(cell))

    def test_spanning_zero_or_too_few_pairs_is_not_resolved(self):
        other = {r: v + (1.0 if r % 2 else -1.0) for r, v in self.BASE.items()}
        c = measure.compare(self.BASE, other)
        self.assertFalse(c["resolved"])
        self.assertIn("not resolved (the 95 % interval", measure.delta_cell(c))
        few = {r: v for r, v in self.BASE.items() if r < 5}
        c = measure.compare(few, {r: v + 20.0 for r, v in few.items()})
        self.assertFalse(c["resolved"])
        self.assertIn("needs %d" % measure.stats.MIN_PAIRS, measure.delta_cell(c))

    def test_a_stalled_run_leaves_its_pair_out_and_sharing_is_counted(self):
        other = {r: v + 10.0 for r, v in self.BASE.items()}
        other[2] = 400.0
        data = {"a": {"runs": self.BASE, "shared": [1]},
                "b": {"runs": other, "shared": [4]}}
        c = measure.compare_configs(data, "a", "b")
        self.assertEqual(c["pairs"], 6)
        self.assertEqual(c["left_out"], [{"key": 2, "why": "other stalled"}])
        self.assertEqual(c["shared"], 2)
        self.assertIn("6 pairs, 1 left out, 2 shared the CPU", measure.delta_cell(c))
        kernel = {"a": {"runs": self.BASE}, "b": {"runs": other}}
        self.assertIsNone(measure.compare_configs(kernel, "a", "b")["shared"])

    def test_no_pairs_is_said(self):
        c = measure.compare({}, {0: 1.0})
        self.assertTrue(is_unavailable(measure.delta_cell(c)))
        self.assertTrue(is_unavailable(measure.ratio_cell(c)))

    def test_level_and_spread_cells(self):
        fig = measure.level({0: 50.0, 1: 52.0, 2: 51.0})
        self.assertEqual(fig["ns"], 51.0)
        self.assertEqual(measure.level_cell(fig), "51.0 ns [50.0–52.0] (19.61 Mpps), 3 runs")
        fig = measure.level({r: 40.0 + r for r in range(9)})
        self.assertEqual(fig["ci"], [41.0, 47.0])  # the 95 % order-statistic interval
        self.assertIsNone(measure.level({0: None}))
        self.assertTrue(is_unavailable(measure.level_cell(None)))
        self.assertEqual(measure.spread_cell([3.0, 1.0, 2.0], "gro stage"),
                         "2.0 ns [1.0–3.0] (gro stage)")
        for text in (measure.level_cell(fig), measure.spread_cell([1.0]),
                     "+1.0 ns [-2.0–+3.0], 7 pairs, CPU sharing not recorded: not resolved "
                     "(the 95 % interval spans 1)", "2.36× [2.10–2.52], 7 pairs: resolved",
                     "unavailable: no root", "not modelled: x", "not measured: y"):
            self.assertTrue(page.is_measured_cell(text), text)
        for text in ("12.0 ns", "-", "n/a", "+26.6 %"):
            self.assertFalse(page.is_measured_cell(text), text)

    def test_rotation_puts_each_configuration_first_once(self):
        names = ["a", "b", "c"]
        self.assertEqual([measure.rotation(names, r)[0] for r in range(3)], names)
        self.assertEqual(sorted(measure.rotation(names, 4)), names)


class Page(unittest.TestCase):
    def test_the_recorded_page_has_every_section_and_published_row(self):
        doc = recorded()
        md = page.render(doc).markdown()
        for seed in SECTIONS:
            self.assertIn("## Seed %s" % seed, md)
        self.assertEqual(md.count("coming: "), 2)
        for _, label, _, text, _ in brouer.ROWS:
            self.assertIn(label, md)
            self.assertIn(text, md)
        for label, _, _, text, _ in brouer.DIFFS:
            self.assertIn(label, md)
        for role, *_ in brouer.ZOOM:
            self.assertIn("| %s |" % role, md)
        for _, label, pub, _ in hints.XDP_ROWS:
            self.assertIn(label, md)
            self.assertIn(pub, md)
        for _, label, *_ in hints.STACK_ROWS:
            self.assertIn(label, md)
        for label, pub, *_ in hints.AFXDP_ROWS:
            self.assertIn(label, md)
            self.assertIn(pub, md)
        for r in cree.ROWS:
            if r["row"] in cree.PAPER_ROW_NAMES:
                self.assertIn("%s: %s" % (r["row"], r["what"]), md)
        self.assertIn("why the numbers differ", md)

    def test_every_measured_cell_is_a_number_with_an_interval_or_a_reason(self):
        cells = page.cells(recorded())
        self.assertGreater(len(cells), 60)
        cree_cells = [c for c in cells if c[0] == "001"]
        for seed, row, text in cells:
            if seed == "001":
                continue  # cree.cell's figures: checked below
            self.assertTrue(page.is_measured_cell(text), (seed, row, text))
        for _, row, text in cree_cells:
            self.assertTrue(is_unavailable(text) or "resolved" in text, (row, text))

    def test_host_and_kernel_are_named(self):
        md = page.render(recorded()).markdown()
        self.assertIn("L1d", md)
        self.assertIn("Linux", md)

    def test_write_renders_the_three_files(self):
        with tempfile.TemporaryDirectory() as out:
            d = command.write(recorded(), out)
            for name in ("seeds.json", "seeds.md", "seeds.html"):
                self.assertTrue(os.path.getsize(os.path.join(out, name)) > 1000, name)
            with open(os.path.join(out, "seeds.html")) as f:
                html = f.read()
            self.assertIn("<table>", html)
            self.assertIn("Seed 004", d.text())


class KernelSide(unittest.TestCase):
    def test_hint_totals_from_formatted_and_raw_dumps(self):
        formatted = [{"formatted": {"key": 0, "values": [
            {"cpu": 0, "value": {"frames": 3, "hash": 3, "timestamp": 2, "vlan": 0,
                                 "fold": 9}},
            {"cpu": 1, "value": {"frames": 1, "hash": 1, "timestamp": 1, "vlan": 0,
                                 "fold": 1}}]}}]
        self.assertEqual(hints.hint_totals(formatted), [4, 4, 3, 0])
        raw = [{"key": ["0x00"] * 4, "values": [
            {"cpu": 0, "value": ["0x%02x" % b for b in
                                 (5).to_bytes(8, "little") + (5).to_bytes(8, "little") +
                                 bytes(8) + (2).to_bytes(8, "little") + bytes(8)]}]}]
        self.assertEqual(hints.hint_totals(raw), [5, 5, 0, 2])
        self.assertIsNone(hints.hint_totals({"error": "get map by id"}))

    def test_group_ns_takes_the_first_role_that_names_a_function(self):
        pats = {"skb": r"^(kmalloc|pskb_expand_head)", "free": r"^kfree",
                "driver": r"^veth_"}
        g = kernel_xdp.group_ns({"pskb_expand_head": 2.0, "kfree_skb": 1.0,
                                 "veth_xdp_rcv.isra.0": 3.0, "finish_task_switch": 4.0}, pats)
        self.assertEqual(g, {"skb": 2.0, "free": 1.0, "driver": 3.0, "other": 4.0})


class Arguments(unittest.TestCase):
    def run_cli(self, *argv):
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = cli.main(list(argv))
        return rc, err.getvalue()

    def test_only_takes_known_seeds(self):
        self.assertEqual(command.seeds_arg("004,000"), ["000", "004"])
        with self.assertRaises(ValueError):
            command.seeds_arg("000,009")
        with tempfile.TemporaryDirectory() as out:
            rc, err = self.run_cli("seeds", "--out", out, "--only", "042")
        self.assertEqual(rc, 2)
        self.assertIn("000,001,002,003,004", err)

    def test_reps_below_two_is_a_usage_error(self):
        with tempfile.TemporaryDirectory() as out:
            rc, err = self.run_cli("seeds", "--out", out, "--only", "002", "--reps", "1")
        self.assertEqual(rc, 2)
        self.assertIn("--reps 1", err)


class RealRun(unittest.TestCase):
    def test_a_short_run_writes_the_page(self):
        try:
            find_binary(None)
        except BenchError as e:
            self.skipTest("no listrx binary: %s" % e)
        with tempfile.TemporaryDirectory() as out:
            rc, _ = Arguments.run_cli(self, "seeds", "--out", out, "--only", "000,002", "--tx-flows", "1",
                                      "--reps", "2", "--duration", "0.05",
                                      "--kernel", "off", "-q")
            with open(os.path.join(out, "seeds.json")) as f:
                doc = json.load(f)
        self.assertEqual(rc, 0, doc.get("failed_checks"))
        self.assertEqual([s["seed"] for s in doc["sections"]], ["000", "002"])
        self.assertEqual(len(doc["provenance"]["binaries"]), 1)  # no 001: plain only
        self.assertIn("bench", doc["provenance"])
        sec = doc["sections"][0]
        self.assertTrue(all(c["ok"] for c in sec["checks"]), sec["checks"])
        self.assertEqual(len(sec["checks"]), 12)
        for _, row, text in page.cells(doc):
            self.assertTrue(page.is_measured_cell(text), (row, text))
        kernel_cells = [r["cells"][4] for r in sec["tables"][0]["rows"]]
        self.assertTrue(all(c == "unavailable: not measured (--kernel off)"
                            for c in kernel_cells), kernel_cells)


    def test_the_kernel_cells_as_root(self):
        """seed 004 with the kernel's cells: the device-bound programs on
        the veth, every kernel cell a number, the kernel's check passed."""
        if os.geteuid() != 0:
            self.skipTest("SKIPPED: the kernel's cells need root")
        try:
            find_binary(None)
        except BenchError as e:
            self.skipTest("no listrx binary: %s" % e)
        with tempfile.TemporaryDirectory() as out:
            rc, err = Arguments.run_cli(self, "seeds", "--out", out, "--only", "004",
                                        "--reps", "2", "--duration", "0.05",
                                        "--kernel-reps", "2", "--kernel", "on", "-q")
            if rc == 2 and "kernel" in err:
                self.skipTest("SKIPPED: %s" % err.strip())
            with open(os.path.join(out, "seeds.json")) as f:
                doc = json.load(f)
        self.assertEqual(rc, 0, doc.get("failed_checks"))
        sec = doc["sections"][0]
        kernel = [c for c in sec["checks"] if c["text"].startswith("kernel")]
        self.assertEqual(len(kernel), 1)
        self.assertTrue(kernel[0]["ok"], kernel[0]["text"])
        rows = sec["tables"][0]["rows"]
        for r in rows:
            self.assertRegex(r["cells"][4], r"^[-+]?\d", r["cells"][0])


class ZeroCopy(unittest.TestCase):
    def test_figures_per_run(self):
        from listrx_bench.seeds import zero_copy as z
        s = {"rx_packets": 100, "busy_cycles_per_packet": 8192.0,
             "stages": [{"name": "l3-demux", "counters": {
                 "tcp_app_read_bytes": 409600, "tcp_app_recvmsg": 4}}]}
        self.assertEqual(z.bytes_per_packet(s), 4096)
        self.assertEqual(z.cycles_per_byte(s), 2.0)
        self.assertAlmostEqual(z.per_gb(s, "tcp_app_recvmsg"), 4 / 409600 * 1e9)
        self.assertIsNone(z.cycles_per_byte({"rx_packets": 0}))

    def test_every_method_and_gro_setting_is_a_configuration(self):
        from listrx_bench.seeds import zero_copy as z
        names = [c["name"] for c in z.configs()]
        for mode in z.MODES:
            for gro in (False, True):
                self.assertIn(z.name(mode, gro, z.MSS), names)
        self.assertEqual(len(names), len(set(names)))

    def test_cycles_per_byte_of_each_placement(self):
        from listrx_bench.seeds import zero_copy as z
        s = {"rx_packets": 100, "busy_cycles_per_packet": 8192.0, "duration_s": 2.0,
             "stages": [{"name": "l3-demux", "counters": {
                 "tcp_app_read_bytes": 409600, "tcp_app_busy_cycles": 204800,
                 "tcp_rcv_window_wait_cycles": 102400}}]}
        # one lcore: the reads ran inside the polls
        self.assertEqual(z.split_cycles(s, "same"), (1.25, 0.5))
        self.assertEqual(z.total_cycles_per_byte(s, "same"), 1.75)
        # two: the reads ran beside them
        self.assertEqual(z.split_cycles(s, "other"), (1.75, 0.5))
        self.assertAlmostEqual(z.wall_gbps(s), 409600 * 8 / 2.0 / 1e9)
        self.assertIsNone(z.reader_oncpu_cycles_per_byte(s))
        s["tsc_hz"] = 2e9
        s["stages"][0]["counters"]["tcp_app_oncpu_ns"] = 51200
        self.assertEqual(z.reader_oncpu_cycles_per_byte(s), 0.25)
        self.assertEqual(z.split_cycles({"rx_packets": 0}, "same"), (None, None))

    def test_placements_put_the_reader_on_the_second_lcore(self):
        import tempfile
        from listrx_bench.seeds import zero_copy as z
        with tempfile.TemporaryDirectory() as tmp:
            cfgs = {c["name"]: c for c in z.placement_configs(tmp, [3, 5])}
            with open(os.path.join(tmp, "zero-copy-lcores.ini")) as f:
                self.assertIn("[lcore.3]\npoll = 0:0", f.read())
        self.assertEqual(len(cfgs), 2 * len(z.MODES))
        for mode in z.MODES:
            one = " ".join(cfgs[z.placement_name(mode, "same")]["args"])
            two = " ".join(cfgs[z.placement_name(mode, "other")]["args"])
            self.assertNotIn("tcp_reader_lcore", one)
            self.assertIn("stage.l3-demux.tcp_reader_lcore=5", two)
            self.assertIn("stage.l3-demux.tcp_read=%s" % mode, two)
            for args in (one, two):
                self.assertIn("tcp_window_wait=yes", args)


class KernelTcp(unittest.TestCase):
    def test_figures_of_a_window(self):
        from listrx_bench.seeds import kernel_tcp as k
        w = {"bytes": 10 ** 9, "calls": 20000, "secs": 2.0, "reader_cpu_s": 0.5,
             "sender_cpu_s": 0.25, "softirqd_cpu_s": 0.25}
        f = k.figures(w, 2e9)
        self.assertEqual(f["gbps"], 4.0)
        self.assertEqual(f["reader"], 1.0)
        self.assertEqual(f["all"], 2.0)
        self.assertEqual(f["bytes_per_call"], 50000)
        self.assertIsNone(k.figures(dict(w, bytes=0), 2e9))

    def test_cells_say_why_without_figures(self):
        from listrx_bench.seeds import kernel_tcp as k
        self.assertEqual(k.cell("unavailable: root", "same"), "unavailable: root")
        self.assertTrue(k.cell({"same": []}, "same").startswith("unavailable: "))
        one = {"gbps": 2.0, "reader": 1.0, "all": 3.0, "bytes_per_call": 1}
        self.assertIn("3.000 [3.000–3.000] cycles/byte, 2 windows",
                      k.cell({"same": [one, one]}, "same"))
        self.assertTrue(k.ZC.startswith("unavailable: "))


if __name__ == "__main__":
    unittest.main()
