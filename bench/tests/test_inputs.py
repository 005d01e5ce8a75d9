"""The headline's inputs (inputs.py): their options, the cold profile and
its memory, the plumbing of several inputs into one page (recorded rows),
and as root the kernel-fed port: a short real run through it, and its
set-up and tear-down leaving nothing behind."""

import contextlib
import io
import os
import shutil
import subprocess
import tempfile
import unittest

from unittest import mock

from listrx_bench import cli, headline, inputs
from listrx_bench.listrx import BenchError, Listrx, eal_runtime_dir, find_binary
from listrx_bench.stats import is_unavailable

from .support import read
from .test_headline import doc_of, sweep_row

TOPO = {"llc_bytes": 266240 * 1024, "l1i_bytes": 32768}


class Options(unittest.TestCase):
    def test_parse_inputs(self):
        self.assertEqual(inputs.parse_inputs("hot,cold,kernel"), ["hot", "cold", "kernel"])
        self.assertEqual(inputs.parse_inputs("cold, cold"), ["cold"])
        for bad in ("warm", "hot,,cold", ""):
            with self.assertRaises(ValueError):
                inputs.parse_inputs(bad)

    def test_bad_input_exits_2_naming_the_valid_ones(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(cli.main(["headline", "--out", tempfile.mkdtemp(),
                                       "--input", "hot,lukewarm"]), 2)
        self.assertIn("input 'lukewarm': want hot, cold, kernel", err.getvalue())

    def test_the_cold_region_is_four_llcs(self):
        self.assertEqual(inputs.cold_mb(TOPO), 1040)
        self.assertEqual(inputs.cold_mb({"llc_bytes": 8 << 20}), 256)  # the floor
        self.assertEqual(inputs.cold_mb({"llc_bytes": None}), 256)

    def test_cold_profile(self):
        self.assertEqual(inputs.cold_profile("udp64", 1040),
                         "net_synth0,profile=udp64,cold=1,cold_mb=1040")
        self.assertEqual(inputs.cold_profile("net_synth0,profile=mixed", 64),
                         "net_synth0,profile=mixed,cold=1,cold_mb=64")
        for bad in ("null", "net_null0", "config:x.ini", "net_synth0,profile=udp64,copy=1"):
            with self.assertRaises(BenchError):
                inputs.cold_profile(bad, 64)

    def test_eal_memory_grows_never_shrinks(self):
        self.assertEqual(inputs.eal_memory("--no-huge --no-pci -m 1024", 2064),
                         "--no-huge --no-pci -m 2064")
        self.assertEqual(inputs.eal_memory("--no-huge -m 4096", 2064), "--no-huge -m 4096")
        self.assertEqual(inputs.eal_memory("--no-huge", 300), "--no-huge -m 300")

    def test_prepare(self):
        hot = inputs.prepare("hot", "udp64", "-m 1024", TOPO, "/b", "0,1")
        self.assertEqual((hot.profile, hot.eal, hot.cachegrind), ("udp64", "-m 1024", None))
        cold = inputs.prepare("cold", "udp64", "--no-huge -m 1024", TOPO, "/b", "0,1")
        self.assertEqual(cold.profile, "net_synth0,profile=udp64,cold=1,cold_mb=1040")
        self.assertEqual(cold.eal, "--no-huge -m 2064")
        self.assertEqual(cold.cg_eal_mb, 1040 + 128)
        self.assertEqual(cold.info["cold_mb"], 1040)
        self.assertEqual((hot.sets, cold.sets), ([], []))
        if os.geteuid() == 0 and shutil.which("ip"):
            with mock.patch.object(os, "access", return_value=True):
                k = inputs.prepare("kernel", "udp64", "-m 1024", TOPO, "/b", "0,1")
                self.assertEqual(k.sets, ["run.coalesce_us=%d" % inputs.KERNEL_COALESCE_US])
                self.assertEqual(k.info["coalesce_us"], inputs.KERNEL_COALESCE_US)
                k = inputs.prepare("kernel", "udp64", "-m 1024", TOPO, "/b", "0,1", 0)
                self.assertEqual(k.sets, [])
        with mock.patch.object(os, "geteuid", return_value=1000):
            with self.assertRaisesRegex(BenchError, "needs root"):
                inputs.prepare("kernel", "udp64", "-m 1024", TOPO, "/b", "0,1")
        with self.assertRaisesRegex(BenchError, "udp64's frames"):
            inputs.prepare("kernel", "imix", "-m 1024", TOPO, "/b", "0,1")

    def test_an_inputs_sets_reach_every_run_of_its_part(self):
        lx = Listrx("/bin/true", lcores="0,1")
        lx.topology = lambda: TOPO
        inp = inputs.Input("kernel", "net_af_xdp0,iface=x", "-m 1024",
                           sets=["run.coalesce_us=50"])
        sargs = mock.Mock(footprints="0", engines=["packet", "burst"], bursts=[1, 64])
        cells = headline.part_cells(lx, sargs, inp)
        self.assertEqual(len(cells), 4)
        for c in cells:
            cmd = lx.command(c, "x.json")
            self.assertEqual(cmd[cmd.index("run.coalesce_us=50") - 1], "--set")

    def test_a_coalescing_wait_out_of_range_exits_2(self):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            self.assertEqual(cli.main(["headline", "--out", tempfile.mkdtemp(),
                                       "--kernel-coalesce-us", "2000000"]), 2)
        self.assertIn("--kernel-coalesce-us 2000000: want 0..1000000", err.getvalue())

    def test_the_sender_avoids_the_polling_cpus(self):
        with mock.patch.object(inputs, "allowed_cpus", return_value=[0, 1, 2, 3]):
            self.assertEqual(inputs.sender_cpu("0,1"), 2)
        with mock.patch.object(inputs, "allowed_cpus", return_value=[0, 1]):
            self.assertEqual(inputs.sender_cpu("0,1"), 0)  # the main lcore's

    def test_the_senders_rate(self):
        d = inputs.parse_sender('{"sent": 2000000, "failed": 0, "wall_ns": 4000000000}\n', "")
        self.assertAlmostEqual(d["mpps"], 0.5)
        self.assertEqual(inputs.parse_sender("", "lrx-kinject: bad\n"),
                         {"error": "lrx-kinject: bad"})


class Page(unittest.TestCase):
    """Several inputs on one page, from recorded rows: a table and verdict
    each, the input named first in the verdicts, the kernel-fed port's
    cachegrind columns saying why there is no figure."""

    def doc(self):
        rows = [sweep_row(e, 64, r, ns) for r in range(6) for e, ns in
                (("packet", 100.0 + r), ("burst", 70.0 + r))]
        kernel = inputs.Input("kernel", "net_af_xdp0,iface=x", "-m 1024",
                              cachegrind=inputs.KERNEL_CACHEGRIND)
        hot = headline.headline_rows("plain", rows, 64, True)
        krows = headline.headline_rows("plain", [dict(r, cg_i1_misses_per_packet=None)
                                                 for r in rows], 64, True, inp=kernel)
        doc = doc_of(rows)
        doc.update(rows=hot + krows, verdicts=headline.verdicts(hot + krows, 64),
                   input_order=["hot", "kernel"],
                   inputs={"hot": {"profile": "udp64"},
                           "kernel": {"pmd": "net_af_xdp", "veth": "lrxfa1",
                                      "sender": "lrx-kinject on CPU 0",
                                      "sent": {"sent": 10, "failed": 0, "mpps": 0.61}}},
                   contention={headline.part_key(i, f): headline.contention(
                       headline.part_rows({"rows": hot + krows}, i, f))
                       for i in ("hot", "kernel") for f in headline.FLAVOURS})
        return doc

    def test_rows_verdicts_and_tables_per_input(self):
        doc = self.doc()
        k = [h for h in doc["rows"] if h["input"] == "kernel"]
        self.assertEqual(len(k), 2)
        for h in k:
            self.assertEqual(h["i1_misses_per_packet"], inputs.KERNEL_CACHEGRIND)
            self.assertTrue(is_unavailable(h["d1_misses_per_packet"]))
        texts = [v["text"] for v in doc["verdicts"]]
        self.assertEqual(len(texts), 2)
        self.assertTrue(texts[0].startswith("hot frames, plain build, burst 64, no ballast: "
                                            "burst saves"), texts[0])
        self.assertTrue(texts[1].startswith("kernel-fed port, plain build, burst 64"), texts[1])
        with tempfile.TemporaryDirectory() as out:
            stdout = io.StringIO()
            headline.write_headline(out, doc, stdout)
            text = stdout.getvalue()
            md = read(os.path.join(out, "headline.md"))
        for t in (text, md):
            self.assertIn("hot frames: plain build", t)
            self.assertIn("kernel-fed port: plain build", t)
            self.assertIn("net_af_xdp on the veth lrxfa1, fed by lrx-kinject on CPU 0; the "
                          "sender made 0.61 Mpps", t)
        self.assertEqual(headline.part_key("kernel", "plain"), "kernel/plain")
        self.assertEqual(headline.part_key("hot", "plain"), "plain")

    def test_one_hot_input_reads_as_before(self):
        rows = [sweep_row(e, 64, r, ns) for r in range(6) for e, ns in
                (("packet", 100.0), ("burst", 70.0))]
        doc = doc_of(rows)
        self.assertTrue(doc["verdicts"][0]["text"].startswith("plain build, burst 64"))
        with tempfile.TemporaryDirectory() as out:
            stdout = io.StringIO()
            headline.write_headline(out, doc, stdout)
        self.assertIn("== plain build", stdout.getvalue())
        self.assertNotIn("hot frames", stdout.getvalue())


def port_leftovers(port):
    """What a KernelPort could leave behind: its namespace, its veth, its
    sender."""
    out = []
    if port.ns in subprocess.run(["ip", "netns", "list"], capture_output=True,
                                 text=True).stdout.split():
        out.append("namespace " + port.ns)
    if os.path.exists("/sys/class/net/" + port.outer):
        out.append("veth " + port.outer)
    senders = subprocess.run(["pgrep", "-f", "lrx-kinject --dev %s " % port.inner],
                             capture_output=True, text=True).stdout.split()
    if senders:
        out.append("sender " + ",".join(senders))
    return out


class RealKernelPort(unittest.TestCase):
    """As root: a veth fed by the kernel, a short listrx run through
    net_af_xdp (or net_af_packet), and nothing left after: no namespace,
    no veth, no sender, no EAL runtime directory. Not timed."""

    def setUp(self):
        if os.geteuid() != 0:
            self.skipTest("SKIPPED: the kernel-fed port needs root")
        if not shutil.which("ip"):
            self.skipTest("SKIPPED: no ip tool")
        try:
            self.binary = find_binary()
        except BenchError as e:
            self.skipTest("SKIPPED: %s" % e)
        self.build = os.path.dirname(os.path.dirname(self.binary))
        if not os.access(os.path.join(self.build, "bench", "kernel", "lrx-kinject"), os.X_OK):
            self.skipTest("SKIPPED: lrx-kinject not built")

    def test_a_short_run_and_nothing_left(self):
        lx = Listrx(self.binary)
        inp = inputs.prepare("kernel", "udp64", lx.eal, lx.topology(), self.build, lx.lcores)
        port = inp.session
        with tempfile.TemporaryDirectory() as out:
            try:
                with inp:
                    self.assertEqual(port_leftovers(port)[:2],
                                     ["namespace " + port.ns, "veth " + port.outer])
                    inputs.probe_port(lx, inp, out)
                    cell = {"profile": inp.profile, "engine": "burst", "burst": 64,
                            "pipeline_arg": "xdp,build-meta,gro,l3-demux", "footprint_kb": 0}
                    path = os.path.join(out, "run.json")
                    cmd = lx.command(cell, path, duration=0.5)
                    summary, err, _ = lx.run(cmd, path, timeout=60)
                    self.assertIsNone(err)
                    prefix = cmd[cmd.index("--file-prefix") + 1]
            except inputs.InputUnavailable as e:
                self.skipTest("SKIPPED: the kernel-fed port cannot carry frames here: %s" % e)
        self.assertGreater(summary["rx_packets"], 0)
        # the sender's frames are udp64's: delivered, and the pool full again
        self.assertEqual(summary["delivered"], summary["rx_packets"])
        self.assertEqual(summary["mbufs_in_use_at_exit"], 0)
        self.assertEqual(port_leftovers(port), [])
        self.assertFalse(os.path.exists(eal_runtime_dir(prefix)))
        self.assertGreater(inp.info["sent"]["sent"], 0)
        self.assertIn(inp.info["pmd"], ("net_af_xdp", "net_af_packet"))

    def test_an_error_inside_still_tears_down(self):
        inp = inputs.prepare("kernel", "udp64", "-m 1024", {}, self.build, "0,1")
        port = inp.session
        with self.assertRaises(RuntimeError):
            with inp:
                raise RuntimeError("boom")
        self.assertEqual(port_leftovers(port), [])

    def test_a_set_up_that_fails_half_way_tears_down(self):
        inp = inputs.prepare("kernel", "udp64", "-m 1024", {}, self.build, "0,1")
        port = inp.session
        real = port._ip

        def failing(*args, **kw):
            if args[:3] == ("ip", "link", "set"):
                raise BenchError("set up failed")
            return real(*args, **kw)

        with mock.patch.object(port, "_ip", failing):
            with self.assertRaisesRegex(inputs.InputUnavailable, "set up failed"):
                with inp:
                    pass
        self.assertEqual(port_leftovers(port), [])


if __name__ == "__main__":
    unittest.main()
