"""Tests of listrx-bench: counter backends: perf, PCM, cachegrind/callgrind parsers on recorded output, the "unavailable" paths."""

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

from .support import DATA, built_binary, data, read  # noqa: F401


class PerfParsing(unittest.TestCase):
    def test_not_supported_on_this_vm_is_unavailable_per_event(self):
        counts = backends.parse_perf_stat(data("perf_vm_not_supported.txt"))
        self.assertEqual(set(counts), set(backends.PERF_EVENTS))
        for event, value in counts.items():
            self.assertTrue(is_unavailable(value), event)
            self.assertIn("not supported", value)
        fig = backends.perf_figures(counts, counts, 1000, 2000, backends.PERF_EVENTS)
        for key, value in fig.items():
            self.assertTrue(is_unavailable(value), "%s=%r must not be a number" % (key, value))

    def test_counted_figures_are_differences_per_packet(self):
        small = backends.parse_perf_stat(data("perf_counted_1000000.txt"))
        large = backends.parse_perf_stat(data("perf_counted_11000000.txt"))
        self.assertEqual(large["cycles"], 8230114301)  # ":u" modifier stripped
        # branch-misses ran 50 % of the time: scaled x2 as perf does
        self.assertAlmostEqual(small["branch-misses"], 12224080)
        fig = backends.perf_figures(small, large, 1000000, 11000000, backends.PERF_EVENTS)
        self.assertAlmostEqual(fig["perfstat_cycles_per_packet"], 300.0)
        self.assertAlmostEqual(fig["perfstat_instructions_per_packet"], 450.0)
        self.assertAlmostEqual(fig["perfstat_ipc"], 1.5)
        self.assertAlmostEqual(fig["perfstat_l1i_misses_per_packet"], 6.0)
        self.assertAlmostEqual(fig["perfstat_branch_misses_per_packet"], 1.0)
        self.assertTrue(is_unavailable(fig["perfstat_itlb_misses_per_packet"]))
        self.assertIn("not counted", fig["perfstat_itlb_misses_per_packet"])


class PmuFigures(unittest.TestCase):
    """The perf backend's reading of listrx's "pmu" summary section."""

    EVENTS = ["cycles", "instructions", "L1-icache-load-misses"]

    def summary(self):
        return {"pmu": {
            "source": "perf_event", "mode": "user", "multiplexed": False, "status": "counted",
            "events": [
                {"name": "cycles", "status": "counted", "per_packet": 200.0},
                {"name": "instructions", "status": "counted", "per_packet": 500.0},
                {"name": "L1-icache-load-misses", "per_packet": None,
                 "status": "unavailable: this CPU's PMU has no such event"}],
            "stages_status": "counted (rdpmc around each stage call)",
            "stages": [
                {"name": "gro", "attributed": True,
                 "per_packet": {"cycles": 50.0, "instructions": 100.0,
                                "L1-icache-load-misses": None}},
                {"name": "l3-demux", "attributed": False,
                 "per_packet": {"cycles": None, "instructions": None,
                                "L1-icache-load-misses": None}}]}}

    def test_counted_unavailable_and_stage_figures(self):
        fig = backends.pmu_figures(self.summary(), self.EVENTS)
        self.assertEqual(fig["perf_cycles_per_packet"], 200.0)
        self.assertEqual(fig["perf_ipc"], 2.5)
        self.assertEqual(fig["perf_l1i_misses_per_packet"],
                         "unavailable: perf: L1-icache-load-misses: this CPU's PMU has no such event")
        self.assertEqual(fig["stage.gro.perf_cycles_per_packet"], 50.0)
        self.assertEqual(fig["stage.gro.perf_ipc"], 2.0)
        self.assertTrue(is_unavailable(fig["stage.gro.perf_l1i_misses_per_packet"]))
        self.assertIn("hybrid tail", fig["stage.l3-demux.perf_cycles_per_packet"])
        self.assertTrue(is_unavailable(fig["stage.l3-demux.perf_ipc"]))

    def test_no_pmu_section_is_unavailable_not_zero(self):
        fig = backends.pmu_figures({"rx_packets": 10}, self.EVENTS)
        for key in ("perf_cycles_per_packet", "perf_instructions_per_packet", "perf_ipc"):
            self.assertTrue(is_unavailable(fig[key]), key)
            self.assertIn("no pmu section", fig[key])


class RealPerf(unittest.TestCase):
    """The perf backend through the real binary: on this machine (no PMU)
    every figure is unavailable with listrx's reason; with listrx's fake
    source the per-packet and per-stage columns are filled, labelled fake,
    and keep the source's fixed ratios."""

    def sweep(self, out, source):
        argv = ["sweep", "--listrx", built_binary(self), "--out", out, "--bursts", "32",
                "--engines", "packet,burst", "--footprints", "0",
                "--pipelines", "build-meta,l3-demux", "--profiles", "null", "--reps", "1",
                "--counters", "perf", "--perf-source", source, "--duration", "0.2",
                "--warmup", "0", "-q"]
        self.assertEqual(cli.main(argv), 0)
        meta, rows = results.load(out)
        self.assertEqual(len(rows), 2)
        return {r["engine"]: r for r in rows}

    def test_fake_source_fills_every_column(self):
        with tempfile.TemporaryDirectory() as d:
            by = self.sweep(os.path.join(d, "fake"), "fake")
            for engine, r in by.items():
                self.assertEqual(r["status"], "ok")
                self.assertEqual(r["perf_source"], "fake")
                self.assertIn("--pmu=cycles,", r["perf_command"])
                cyc = r["perf_cycles_per_packet"]
                self.assertGreater(cyc, 0)
                # fake: event k counts (k + 1) x the TSC
                self.assertAlmostEqual(r["perf_instructions_per_packet"] / cyc, 2.0, places=3)
                self.assertAlmostEqual(r["perf_ipc"], 2.0, places=3)
            b, p = by["burst"], by["packet"]
            self.assertIn("--pmu-stages", b["perf_command"])
            stage_sum = (b["stage.build-meta.perf_cycles_per_packet"]
                         + b["stage.l3-demux.perf_cycles_per_packet"])
            self.assertGreater(stage_sum, 0)
            self.assertLess(stage_sum, b["perf_cycles_per_packet"])
            self.assertNotIn("--pmu-stages", p["perf_command"])
            self.assertTrue(is_unavailable(p["perf_stages_status"]))
            self.assertNotIn("stage.build-meta.perf_cycles_per_packet", p)
            md, html = write_report(os.path.join(d, "fake"))
            text = read(md)
            self.assertIn("Per-stage counters (perf", text)
            self.assertIn("not hardware counts", text)
            self.assertIn("| build-meta |", text)

    def test_perf_event_source_on_this_machine(self):
        have_pmu = any(os.path.exists("/sys/bus/event_source/devices/" + n)
                       for n in ("cpu", "cpu_core"))
        with tempfile.TemporaryDirectory() as d:
            by = self.sweep(os.path.join(d, "real"), "perf_event")
            for engine, r in by.items():
                self.assertEqual(r["perf_source"], "perf_event")
                for key in ("perf_cycles_per_packet", "perf_l1i_misses_per_packet", "perf_ipc"):
                    v = r[key]
                    if have_pmu:
                        self.assertTrue(is_unavailable(v) or v > 0, "%s=%r" % (key, v))
                    else:
                        self.assertTrue(is_unavailable(v), "%s=%r must not be a number" % (key, v))
                        self.assertIn("no hardware PMU", v)


class PcmParsing(unittest.TestCase):
    def test_recorded_csv_rows_and_columns(self):
        rows = backends.parse_pcm_csv(data("pcm_202302_skylake_1s2c.csv"))
        self.assertEqual(len(rows), 12)
        self.assertEqual(rows[0]["time"], datetime.datetime(2023, 5, 10, 14, 2, 11, 100000))
        self.assertAlmostEqual(rows[1][("Core1 (Socket 0)", "IPC")], 2.11)
        self.assertAlmostEqual(rows[1][("System", "Proc Energy (Joules)")], 2.45)
        self.assertNotIn(("Core0 (Socket 0)", "TEMP"), rows[1])  # N/A cell left out

    def test_figures_in_the_run_window(self):
        rows = backends.parse_pcm_csv(data("pcm_202302_skylake_1s2c.csv"))
        start = datetime.datetime(2023, 5, 10, 14, 2, 11, 150000)
        end = datetime.datetime(2023, 5, 10, 14, 2, 12, 150000)
        fig = backends.pcm_figures(rows, start, end, core=1, packets=10000000, mpps=10.0)
        self.assertEqual(fig["pcm_rows"], 10)
        self.assertAlmostEqual(fig["pcm_ipc"], 2.11)
        self.assertAlmostEqual(fig["pcm_l2_misses_per_packet"], 0.051)
        self.assertAlmostEqual(fig["pcm_l3_misses_per_packet"], 0.0012)
        self.assertAlmostEqual(fig["pcm_energy_j"], 24.5)
        self.assertAlmostEqual(fig["pcm_t2_per_power"], 100 / 24.5)
        # core 0 is another core: its IPC differs
        fig0 = backends.pcm_figures(rows, start, end, core=0, packets=10000000, mpps=10.0)
        self.assertAlmostEqual(fig0["pcm_ipc"], 0.62)

    def test_semicolon_separated_old_pcm(self):
        text = data("pcm_202302_skylake_1s2c.csv").replace(",", ";")
        rows = backends.parse_pcm_csv(text)
        self.assertAlmostEqual(rows[5][("Core1 (Socket 0)", "L2MISS")], 0.051)

    def test_window_outside_rows_is_unavailable(self):
        rows = backends.parse_pcm_csv(data("pcm_202302_skylake_1s2c.csv"))
        t = datetime.datetime(2030, 1, 1)
        fig = backends.pcm_figures(rows, t, t + datetime.timedelta(seconds=1), 1, 1, 1.0)
        self.assertTrue(is_unavailable(fig["pcm_status"]))

    def test_unsupported_processor_reason(self):
        reason = backends.pcm_failure_reason(data("pcm_amd_unsupported.txt"), 1)
        self.assertIn("unsupported processor", reason)


class CachegrindParsing(unittest.TestCase):
    TINY = ("desc: I1 cache: 32768 B, 64 B, 8-way associative\n"
            "cmd: listrx\nevents: Ir I1mr ILmr Bi Bim\n"
            "fl=a.c\nfn=engine_burst_run\n10 100 2 0 4 1\n11 50\n"
            "fn=lrx_ballast_run\n3 1000 30 1\n"
            "fl=???\nfn=???\n0 7 1 0 2\n"
            "summary: 1157 33 1 6 1\n")

    def test_tiny_file(self):
        p = backends.parse_cachegrind(self.TINY)
        self.assertEqual(p["events"], ["Ir", "I1mr", "ILmr", "Bi", "Bim"])
        self.assertEqual(p["totals"]["Ir"], 1157)
        self.assertEqual(p["functions"]["engine_burst_run"]["Ir"], 150)
        self.assertEqual(p["functions"]["engine_burst_run"]["Bi"], 4)
        self.assertEqual(p["functions"]["lrx_ballast_run"]["Bi"], 0)  # omitted trailing zeros
        groups = backends.cg_groups(p)
        self.assertEqual(groups["engine"]["Ir"], 150)
        self.assertEqual(groups["ballast"]["I1mr"], 30)
        self.assertEqual(groups["dpdk-unsymbolled"]["Bi"], 2)

    def test_recorded_runs_difference(self):
        small = backends.parse_cachegrind(data("cachegrind_packet_b32_fp32_2000.out"))
        large = backends.parse_cachegrind(data("cachegrind_packet_b32_fp32_6000.out"))
        fig = backends.cachegrind_figures(small, large, 2000, 6000)
        # a 32 KB ballast run per packet by the per-packet engine misses L1i
        # on most of its 512 lines: hundreds of misses per packet
        self.assertGreater(fig["cg_i1_misses_per_packet"], 250)
        self.assertGreater(fig["cg_stage.ballast.i1_misses_per_packet"], 200)
        self.assertGreater(fig["cg_indirect_branches_per_packet"], 1)
        self.assertAlmostEqual(fig["cg_i1_misses_per_packet"],
                               (large["totals"]["I1mr"] - small["totals"]["I1mr"]) / 4000)
        stage_sum = sum(v for k, v in fig.items()
                        if k.startswith("cg_stage.") and k.endswith(".ir_per_packet"))
        self.assertAlmostEqual(stage_sum, fig["cg_ir_per_packet"], places=6)

    def test_same_packet_counts_unavailable(self):
        p = backends.parse_cachegrind(self.TINY)
        self.assertTrue(is_unavailable(backends.cachegrind_figures(p, p, 10, 10)["cg_status"]))

    def test_i1_geometry(self):
        self.assertEqual(cachegrind_i1({"l1i_bytes": 32768, "l1i_line": 64, "l1i_assoc": 0}),
                         "32768,8,64")
        self.assertEqual(cachegrind_i1({"l1i_bytes": 49152, "l1i_line": 64, "l1i_assoc": 12}),
                         "49152,12,64")


class CallgrindWindow(unittest.TestCase):
    CALLGRIND = (
        "# callgrind format\nversion: 1\npositions: line\n"
        "events: Ir I1mr Bi\nsummary: 1150 12 7\n\n"
        "ob=/usr/lib/librte_net_null.so\nfl=???\nfn=0x0000000000002090\n"
        "0 100 2 1\ncfn=lrx_sink_complete\ncalls=4 0\n0 900 9 5\n"
        "fl=sink.c\nfn=lrx_sink_complete\n12 1000 9 5\n"
        "fn=lrx_ballast_run\n3 50 1 1\n+2 0 0 0\ntotals: 1150 12 7\n")

    def test_call_lines_are_inclusive_and_skipped(self):
        p = backends.parse_callgrind(self.CALLGRIND)
        self.assertEqual(p["totals"], {"Ir": 1150, "I1mr": 12, "Bi": 7})
        self.assertEqual(p["functions"]["0x0000000000002090"]["Ir"], 100)
        self.assertEqual(p["functions"]["lrx_sink_complete"]["Ir"], 1000)
        self.assertEqual(sum(f["Ir"] for f in p["functions"].values()), p["totals"]["Ir"])
        self.assertEqual(backends.cg_group("0x0000000000002090"), "dpdk-unsymbolled")

    def test_window_figures_divide_by_measured_packets(self):
        fig = backends.cachegrind_figures(None, backends.parse_callgrind(self.CALLGRIND), 0, 10)
        self.assertAlmostEqual(fig["cg_ir_per_packet"], 115.0)
        self.assertAlmostEqual(fig["cg_i1_misses_per_packet"], 1.2)
        self.assertAlmostEqual(fig["cg_stage.sink.ir_per_packet"], 100.0)
        self.assertTrue(is_unavailable(fig["cg_cond_branches_per_packet"]))

    def test_trailing_zero_totals_are_zero_not_missing(self):
        """callgrind leaves trailing zero events out of summary: and
        totals: as out of cost lines: a retpoline build's Bi and Bim are 0
        (every indirect call goes through a thunk), not unmeasured."""
        text = ("events: Ir Bc Bcm Bi Bim\nsummary: 500 40 2\n"
                "fn=engine_packet_run\n0 500 40 2\ntotals: 500 40 2\n")
        p = backends.parse_callgrind(text)
        self.assertEqual(p["totals"], {"Ir": 500, "Bc": 40, "Bcm": 2, "Bi": 0, "Bim": 0})
        fig = backends.cachegrind_figures(None, p, 0, 10)
        self.assertEqual(fig["cg_indirect_branches_per_packet"], 0.0)
        self.assertEqual(fig["cg_indirect_mispredicts_per_packet"], 0.0)
        # an event the events: line does not name stays unavailable
        self.assertTrue(is_unavailable(fig["cg_i1_misses_per_packet"]))

    def test_recorded_retpoline_packet_engine(self):
        """The retpoline build's packet engine (recorded, burst 64): its
        summary line ends before Bi; indirect calls per packet are 0 Bi +
        the thunk entries, a number."""
        thunks = {"/src/listrx/build-retpo/dataplane/listrx":
                  backends.nm_thunks(data("callgrind_retpoline_thunks.nm"))}
        self.assertEqual(len(thunks["/src/listrx/build-retpo/dataplane/listrx"]), 8)
        text = data("callgrind_retpoline_packet_b64.out")
        summary_line = next(l for l in text.splitlines() if l.startswith("summary:"))
        events = next(l for l in text.splitlines() if l.startswith("events:")).split()[1:]
        self.assertLess(len(summary_line.split()) - 1, events.index("Bi") + 1)
        fig = backends.cachegrind_figures(None, backends.parse_callgrind(text, thunks), 0, 4032)
        self.assertEqual(fig["cg_indirect_branches_per_packet"], 0.0)
        self.assertGreater(fig["cg_thunk_calls_per_packet"], 5.0)
        self.assertEqual(fig["cg_indirect_per_packet"], fig["cg_thunk_calls_per_packet"])

    def test_prefix_switches_collection_from_listrx(self):
        pre = backends.callgrind_window_prefix("/x/out", "32768,8,64")
        for flag in ("--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
                     "--cache-sim=yes", "--branch-sim=yes", "--I1=32768,8,64"):
            self.assertIn(flag, pre)


class UnavailablePaths(unittest.TestCase):
    def test_rapl_without_powercap(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertIn("no readable package RAPL domain", backends.rapl_probe(d))
        self.assertIn("no ", backends.rapl_probe("/nonexistent/powercap"))

    def test_rapl_reads_a_fake_domain_with_wrap(self):
        with tempfile.TemporaryDirectory() as d:
            dom = os.path.join(d, "intel-rapl:0")
            os.makedirs(dom)
            for name, value in (("name", "package-0"), ("max_energy_range_uj", "1000000"),
                                ("energy_uj", "999000")):
                with open(os.path.join(dom, name), "w") as f:
                    f.write(value)
            self.assertIsNone(backends.rapl_probe(d))
            domains = backends.rapl_domains(d)
            before = backends.rapl_read(domains)
            with open(os.path.join(dom, "energy_uj"), "w") as f:
                f.write("4000")
            after = backends.rapl_read(domains)
            self.assertAlmostEqual(backends.rapl_energy_j(domains, before, after), 0.005)

    def test_latency_absent_from_summary(self):
        fig = latency_figures({"mpps": 1.0})
        for k in ("p50", "p99", "p999"):
            self.assertTrue(is_unavailable(fig[k]))
            self.assertIn("binary does not record latency", fig[k])
        fig = latency_figures({"latency_ns": {"p50": 400, "p99": 1600, "p999": 2900,
                                              "samples": 1000, "source": "synth-tsc"}})
        self.assertEqual((fig["p50"], fig["p999"], fig["source"]), (400, 2900, "synth-tsc"))
        # recorded, but nothing stamped with the TSC: the binary's reason
        fig = latency_figures({"latency_ns": {"p50": None, "p99": None, "p999": None,
                                              "samples": 0, "source": None},
                               "latency_unavailable": "no RX timestamps (use net_synth "
                               "hints=...+timestamp)"})
        for k in ("p50", "p99", "p999"):
            self.assertTrue(is_unavailable(fig[k]))
            self.assertIn("no RX timestamps", fig[k])
        self.assertEqual(fig["samples"], 0)

    def test_latency_command_asks_for_timestamps(self):
        self.assertEqual(profile_eal("udp64", timestamps=True),
                         ["--vdev", "net_synth0,profile=udp64,hints=hash+csum+ptype+timestamp"])
        self.assertEqual(profile_eal("udp64"), ["--vdev", "net_synth0,profile=udp64"])
        self.assertEqual(profile_eal("net_synth0,profile=imix", timestamps=True),
                         ["--vdev", "net_synth0,profile=imix,hints=hash+csum+ptype+timestamp"])
        # hints the user chose, and devices that cannot stamp, are left alone
        self.assertEqual(profile_eal("net_synth0,hints=all", timestamps=True),
                         ["--vdev", "net_synth0,hints=all"])
        self.assertEqual(profile_eal("null", timestamps=True), ["--vdev", "net_null0,copy=0"])
        lx = Listrx("/bin/true", lcores="0-1")
        cell = grid.expand(["udp64"], ["none"], [("0", 0)], ["burst"], [32])[0]
        cmd = lx.command(cell, "/tmp/x.json", duration=1, latency=True)
        self.assertIn("--latency", cmd[cmd.index("--"):])
        self.assertIn("net_synth0,profile=udp64,hints=hash+csum+ptype+timestamp", cmd)
        self.assertNotIn("--latency", lx.command(cell, "/tmp/x.json", duration=1))

    def test_engine_comparisons_run_gro_on_the_poll_clock(self):
        """GRO's age flush on the TSC lets `merged` differ between engines;
        a sweep compares engines, so a pipeline with gro gets clock=polls,
        unless the cell sets the clock itself."""
        lx = Listrx("/bin/true", lcores="0-1")
        cell = grid.expand(["udp64"], ["build-meta,gro,l3-demux"], [("0", 0)], ["packet"],
                           [32])[0]
        cmd = lx.command(cell, "/tmp/x.json", duration=1)
        self.assertIn("stage.gro.clock=polls", cmd)
        self.assertEqual(cmd[cmd.index("stage.gro.clock=polls") - 1], "--set")
        cell["sets"] = ["stage.gro.clock=tsc"]
        cmd = lx.command(cell, "/tmp/x.json", duration=1)
        self.assertIn("stage.gro.clock=tsc", cmd)
        self.assertNotIn("stage.gro.clock=polls", cmd)
        plain = grid.expand(["udp64"], ["build-meta,l3-demux"], [("0", 0)], ["packet"], [32])[0]
        self.assertFalse(any("stage.gro" in a for a in lx.command(plain, "/tmp/x.json")))

    def test_pcm_session_on_this_machine(self):
        """pcm refuses non-Intel CPUs: the session must say why, not return
        rows of zeros. Skipped where pcm is not installed or does run."""
        if not backends.pcm_exe():
            print("SKIPPED: pcm not installed")
            self.skipTest("pcm not installed")
        with tempfile.TemporaryDirectory() as d:
            s = backends.PcmSession(os.path.join(d, "pcm.csv"), 0.1)
            if s.start():
                s.stop()
                print("SKIPPED: pcm runs on this machine (Intel with MSR access)")
                self.skipTest("pcm runs on this machine")
            self.assertTrue(is_unavailable(s.error))
            self.assertIn("pcm:", s.error)


if __name__ == "__main__":
    unittest.main()


def test_pcm_probe_names_the_cpu_vendor_on_a_non_intel_cpu(tmp_path, monkeypatch):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nvendor_id\t: AuthenticAMD\n")
    monkeypatch.setattr(backends, "pcm_exe", lambda: None)
    assert backends.pcm_probe(str(cpuinfo)) == \
        "pcm not installed (Debian: pcm), and it needs an Intel CPU (this CPU: AuthenticAMD)"


class _Ran:
    def __init__(self, rc, stdout):
        self.returncode, self.stdout = rc, stdout


def test_pcm_probe_gives_pcm_s_own_refusal():
    """pcm installed: its own reason, not "not installed" (an Intel VM
    without a vPMU: pcm_vm_no_vpmu.txt has PCM 202302's lines for it, from
    its cpucounters.cpp; an AMD CPU: recorded), and None where it samples."""
    seen = []

    def run(cmd, **kw):
        seen.append(cmd)
        return _Ran(1, data("pcm_vm_no_vpmu.txt"))
    reason = backends.pcm_probe(exe="/usr/sbin/pcm", run=run)
    assert reason.startswith("pcm: vPMU is not enabled in the hypervisor"), reason
    assert seen == [["/usr/sbin/pcm", "0.1", "-i=1"]]
    reason = backends.pcm_probe(exe="/usr/sbin/pcm",
                                run=lambda cmd, **kw: _Ran(1, data("pcm_amd_unsupported.txt")))
    assert reason == "pcm: unsupported processor (PCM needs an Intel CPU)"
    assert backends.pcm_probe(exe="/usr/sbin/pcm", run=lambda cmd, **kw: _Ran(0, "Core (SKT)")) \
        is None
    # an unknown refusal: its ERROR line
    reason = backends.pcm_probe(exe="/usr/sbin/pcm", run=lambda cmd, **kw: _Ran(
        1, "Intel(r) Performance Counter Monitor\nERROR: something new\nbye\n"))
    assert reason == "pcm: exit 1: ERROR: something new"


def test_figure_status_is_unavailable_when_no_row_has_a_figure():
    reason = "unavailable: perf: cycles: no hardware PMU"
    rows = [{"status": "ok", "time_mpps": 1.0, "perf_cycles_per_packet": reason,
             "perf_stages_status": "unavailable: perf: --perf-stages off",
             "perf_command": "listrx ..."}]
    assert backends.figure_status("perf", "ok", rows) == reason
    assert backends.figure_status("time", "ok", rows) == "ok"
    assert backends.figure_status("pcm", "unavailable: pcm: x", rows) == "unavailable: pcm: x"
    rows.append({"status": "ok", "perf_cycles_per_packet": 12.5})
    assert backends.figure_status("perf", "ok", rows) == "ok"


def test_a_finished_run_leaves_no_eal_runtime_dir(tmp_path, monkeypatch):
    from listrx_bench import listrx
    monkeypatch.setattr(listrx, "eal_runtime_dir", lambda p: str(tmp_path / "dpdk" / p))
    (tmp_path / "dpdk" / "lrxbench1_1").mkdir(parents=True)
    (tmp_path / "dpdk" / "other").mkdir()
    listrx.remove_runtime_dir(["listrx", "--file-prefix", "lrxbench1_1", "--"])
    listrx.remove_runtime_dir(["listrx", "--file-prefix", "other", "--"])
    assert not (tmp_path / "dpdk" / "lrxbench1_1").exists()
    assert (tmp_path / "dpdk" / "other").exists()
