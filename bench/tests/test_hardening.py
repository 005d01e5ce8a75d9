"""listrx-bench against hostile use: signals (SIGTERM, Ctrl-C during a
peer or a clean-up), bad output directories and reports, values that
measure nothing. Each ends in one line and an exit status, leaves no
child process and no EAL runtime directory."""

import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import unittest

from listrx_bench import cli, kernel, scale
from listrx_bench.listrx import Listrx, allowed_cpus, eal_runtime_dir, signals_held

from .support import built_binary

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cli(argv):
    """cli.main(argv) -> (exit status, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = cli.main(argv)
    return rc, err.getvalue()


def runtime_dirs(prefix):
    base = os.path.dirname(eal_runtime_dir("x"))
    return [n for n in (os.listdir(base) if os.path.isdir(base) else ()) if n.startswith(prefix)]


def processes_with(text):
    """pids whose command line contains text."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                if text.encode() in f.read():
                    found.append(int(pid))
        except OSError:
            pass
    return found


def wait_for(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def bench(argv):
    return subprocess.Popen([sys.executable, "-m", "listrx_bench"] + argv, cwd=BENCH,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class OneLineErrors(unittest.TestCase):
    """Bad --out, a report of what is not a sweep, a CPU that is not
    there, grids and counts that measure nothing: exit 2 and one line."""

    def assert_refused(self, argv, words):
        rc, err = run_cli(argv)
        self.assertEqual(rc, 2, (argv, err))
        self.assertIn(words, err, argv)
        self.assertNotIn("Traceback", err, argv)
        self.assertLessEqual(len([l for l in err.splitlines() if l.startswith("listrx-bench")]),
                             1, err)

    def test_out_that_cannot_be_a_directory(self):
        with tempfile.NamedTemporaryFile() as f:
            self.assert_refused(["sweep", "--out", f.name], "--out %s: " % f.name)
            self.assert_refused(["headline", "--out", os.path.join(f.name, "sub")],
                                "want a directory it can create and write")
        self.assert_refused(["sweep", "--out", "/proc/listrx-bench-test"], "--out /proc/")

    def test_report_of_what_is_not_a_sweep(self):
        with tempfile.TemporaryDirectory() as d:
            self.assert_refused(["report", os.path.join(d, "nope")], "No such file")
            self.assert_refused(["report", d], "results.json: No such file")
            with open(os.path.join(d, "results.json"), "w") as f:
                f.write("{not json")
            self.assert_refused(["report", d], "not JSON")
            with open(os.path.join(d, "results.json"), "w") as f:
                json.dump([1, 2], f)
            self.assert_refused(["report", d], "not a sweep's results")

    def test_kernel_values(self):
        with tempfile.TemporaryDirectory() as d:
            self.assert_refused(["kernel", "--out", d, "--cpu", "99"],
                                "CPU '99': not one this process may use")
            self.assert_refused(["kernel", "--out", d, "--packets", "0"],
                                "--packets 0: want a multiple of 256")
            for opt in ("--pairs", "--reps"):
                self.assert_refused(["kernel", "--out", d, opt, "0"], "want at least 1")
            self.assert_refused(["kernel", "--out", d, "--traffic", "udp,icmp"],
                                "traffic 'icmp': want udp")
            # listrx ran until the 120 s timeout killed it
            self.assert_refused(["kernel", "--out", d, "--listrx-duration", "0"],
                                "--listrx-duration: '0': want a number > 0")

    def test_scale_values(self):
        """scale's lcore counts and profile are refused before any run:
        '3-1' measured nothing ('s3/raw: no runs'), a count past the CPUs
        failed inside scale.sh ('failed (exit 2)'), a profile typo
        measured the default udp64 under its name."""
        with tempfile.TemporaryDirectory() as d:
            self.assert_refused(["scale", "--out", d, "--lcores", "3-1"],
                                "'3-1': a range runs from the smaller count to the larger")
            n = len(allowed_cpus())
            self.assert_refused(["scale", "--out", d, "--lcores", "1,%d" % (n + 1)],
                                "'%d': this process may use %d CPUs; one is the main "
                                "lcore's, so at most %d polling lcores" % (n + 1, n, n - 1))
            # every CPU polling needs the main lcore beside one (--main-cpu)
            self.assert_refused(["scale", "--out", d, "--lcores", "1-%d" % n],
                                "'%d': this process may use %d CPUs; one is the main "
                                "lcore's, so at most %d polling lcores" % (n, n, n - 1))
            binary = built_binary(self)
            self.assert_refused(["scale", "--out", d, "--listrx", binary, "--lcores", "1",
                                 "--profile", "udp-flws", "-q"],
                                "--profile udp-flws --pipeline xdp,build-meta,gro,l3-demux: "
                                "listrx refuses them (exit 2): PMD: net_synth0: bad devarg "
                                "profile=udp-flws")
            self.assertEqual(os.listdir(d), [])
            self.assertEqual(runtime_dirs("lrxscalechk"), [])

    def test_empty_grids_are_refused(self):
        with tempfile.TemporaryDirectory() as d:
            for opt in ("--bursts", "--engines", "--footprints", "--profiles", "--counters"):
                self.assert_refused(["sweep", "--out", d, opt, ""], "empty")
                self.assert_refused(["sweep", "--out", d, opt, " , "], "empty")
            self.assert_refused(["sweep", "--out", d, "--pipelines", ""], "empty")
            self.assert_refused(["headline", "--out", d, "--bursts", ""], "empty")
            self.assert_refused(["latency", "--engines", ""], "empty")
            self.assert_refused(["compare", "--peer", ""], "empty")
            self.assert_refused(["sweep", "--out", d, "--duration", "0"], "want a number > 0")
            self.assert_refused(["sweep", "--out", d, "--reps", "0"], "want an integer >= 1")


class SignalledRunsAreNoRepetitions(unittest.TestCase):
    """A listrx run that a signal stopped is cut short: its figures are
    never a repetition, whichever command ran it."""

    def test_listrx_run_stopped_by_a_signal_is_an_error(self):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "listrx")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\nprintf '{\"rx_packets\": 5, \"stopped_by_signal\": %s}' "
                        "\"$2\" > \"$1\"\n")
            os.chmod(fake, 0o755)
            lx = Listrx(fake)
            js = os.path.join(d, "s.json")
            summary, err, _ = lx.run([fake, js, "true"], js)
            self.assertIsNone(summary)
            self.assertIn("stopped by a signal", err)
            summary, err, _ = lx.run([fake, js, "false"], js)
            self.assertIsNone(err)
            self.assertEqual(summary["rx_packets"], 5)

    def test_scale_run_stopped_by_a_signal_is_a_problem(self):
        mpps, _, _, problem = scale.run_figures(
            {"duration_s": 1.0, "mpps": 2.0, "rx_packets": 2000000, "delivered": 2000000,
             "stopped_by_signal": True})
        self.assertIsNone(mpps)
        self.assertEqual(problem, "stopped by a signal: not a repetition")


class Signals(unittest.TestCase):
    def signal_when(self, proc, sig, ready, timeout, never, again_after=None):
        """Sends sig to proc once ready() (within timeout s), and again
        again_after s later; proc's stderr."""
        try:
            self.assertTrue(wait_for(ready, timeout), never)
            time.sleep(0.3)
            proc.send_signal(sig)
            if again_after is not None:
                time.sleep(again_after)
                proc.send_signal(sig)
            return proc.communicate(timeout=60)[1]
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def test_sigterm_stops_the_run_and_removes_its_runtime_directory(self):
        """listrx-bench killed with SIGTERM (a supervisor, a timeout):
        the listrx it runs is stopped and its EAL runtime directory
        removed, as on Ctrl-C; exit 128 + 15."""
        binary = built_binary(self)
        with tempfile.TemporaryDirectory() as d:
            proc = bench(["sweep", "--listrx", binary, "--out", d, "--bursts", "64",
                          "--engines", "packet", "--footprints", "0", "--pipelines", "none",
                          "--profiles", "null", "--reps", "1", "--duration", "20",
                          "--warmup", "0", "-q"])
            prefix = "lrxbench%d_" % proc.pid
            err = self.signal_when(proc, signal.SIGTERM, lambda: runtime_dirs(prefix), 60,
                                   "listrx never started")
            self.assertEqual(proc.returncode, 128 + signal.SIGTERM, err)
            self.assertIn("stopped by SIGTERM", err)
            self.assertNotIn("Traceback", err)
            self.assertEqual(runtime_dirs(prefix), [])
            self.assertEqual(processes_with(prefix), [])

    def test_group_sigint_stops_a_command_started_in_the_background(self):
        """A shell starts a background job with SIGINT ignored; a SIGINT to
        its process group stopped the listrx run and the command went on
        (cree counted such runs as repetitions). Now the command stops as
        on Ctrl-C: exit 130, listrx stopped, its runtime directory gone."""
        binary = built_binary(self)
        with tempfile.TemporaryDirectory() as d:
            proc = subprocess.Popen(
                [sys.executable, "-m", "listrx_bench", "sweep", "--listrx", binary, "--out", d,
                 "--bursts", "64", "--engines", "packet,burst", "--footprints", "0",
                 "--pipelines", "none", "--profiles", "null", "--reps", "2",
                 "--duration", "20", "--warmup", "0", "-q"],
                cwd=BENCH, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                start_new_session=True,
                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
            prefix = "lrxbench%d_" % proc.pid
            try:
                self.assertTrue(wait_for(lambda: runtime_dirs(prefix), 60), "listrx never started")
                time.sleep(0.3)
                os.killpg(proc.pid, signal.SIGINT)
                err = proc.communicate(timeout=60)[1]
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
            self.assertEqual(proc.returncode, 130, err)
            self.assertIn("listrx-bench: interrupted", err)
            self.assertNotIn("Traceback", err)
            self.assertEqual(runtime_dirs(prefix), [])
            self.assertEqual(processes_with(prefix), [])

    def test_kernel_socket_helper_is_out_of_reach_of_ctrl_c(self):
        """The in-netns UDP socket helper of listrx-bench kernel printed a
        KeyboardInterrupt traceback of its own on a double Ctrl-C: it runs
        in a session of its own, and ends when its stdin closes."""
        if os.geteuid() != 0:
            print("SKIPPED: needs root (a network namespace)")
            self.skipTest("not root")
        veth = kernel.Veth("hs%d" % (os.getpid() % 10000))
        try:
            try:
                veth.setup(allowed_cpus()[-1])
            except kernel.Skip as e:
                print("SKIPPED: %s" % e)
                self.skipTest(str(e))
            veth.open_udp_socket(9999)
            helper = veth.socket_proc
            self.assertNotEqual(os.getsid(helper.pid), os.getsid(0))
            self.assertNotEqual(os.getpgid(helper.pid), os.getpgrp())
            veth.close_socket()
            self.assertEqual(helper.returncode, 0)
        finally:
            veth.close()

    def test_ctrl_c_during_the_testpmd_peer(self):
        """compare: Ctrl-C while testpmd runs, and again 50 ms later while
        it is being stopped: testpmd stopped, the runtime directory it
        leaves (lrxcmp<pid>_<rep>_<peer>) removed; exit 130. The peer is a
        stand-in that behaves as dpdk-testpmd does here: it creates its EAL
        runtime directory, prints its port statistics (no reading yet, so
        compare waits), takes 0.3 s to stop on SIGINT and leaves the
        directory."""
        binary = built_binary(self)
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "testpmd")
            with open(fake, "w") as f:
                f.write(textwrap.dedent("""\
                    #!%s
                    import os, signal, sys, time
                    sys.path.insert(0, %r)
                    from listrx_bench.listrx import eal_runtime_dir
                    prefix = sys.argv[sys.argv.index("--file-prefix") + 1]
                    os.makedirs(eal_runtime_dir(prefix), exist_ok=True)
                    def stop(s, f):
                        time.sleep(0.3)
                        sys.exit(0)
                    signal.signal(signal.SIGINT, stop)
                    while True:
                        print("  RX-packets: 0", flush=True)
                        time.sleep(0.2)
                    """ % (sys.executable, BENCH)))
            os.chmod(fake, 0o755)
            proc = bench(["compare", "--listrx", binary, "--peer", "testpmd-rxonly",
                          "--testpmd", fake, "--profile", "null", "--duration", "1",
                          "--reps", "1", "--burst", "32", "-q"])
            prefix = "lrxcmp%d_0_testpmd-rxonly" % proc.pid
            err = self.signal_when(proc, signal.SIGINT, lambda: runtime_dirs(prefix), 120,
                                   "the testpmd peer never started", again_after=0.05)
            self.assertEqual(proc.returncode, 130, err)
            self.assertEqual(runtime_dirs(prefix), [])
            self.assertEqual(processes_with(prefix), [])

    def test_kernel_clean_up_is_not_cut_short_by_a_second_ctrl_c(self):
        """Two Ctrl-C 20 ms apart, the second during the clean-up of the
        kernel experiment: the clean-up (sysctl restored, veth and
        namespace deleted, handlers put back) finishes, then the signal
        arrives."""
        done = []

        class Gro:
            def restore(self):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.02)
                done.append("gro")

        class Veth:
            def close(self):
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(0.02)
                done.append("veth")

        # the experiment's own handler in place, the one before it put back;
        # a second thread that does not block signals (the kernel may hand
        # them to it; Python runs the handler in this one all the same)
        before = signal.signal(signal.SIGTERM, lambda s, f: None)
        idle = threading.Event()
        other = threading.Thread(target=idle.wait, daemon=True)
        other.start()
        try:
            with self.assertRaises(KeyboardInterrupt):
                kernel.restore_all(Gro(), Veth(), {signal.SIGTERM: before})
        finally:
            idle.set()
            other.join()
        self.assertEqual(done, ["gro", "veth"])
        self.assertIs(signal.getsignal(signal.SIGTERM), before)
        # and the mask is as before: a signal now arrives at once
        with self.assertRaises(KeyboardInterrupt):
            with signals_held():
                pass
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)


if __name__ == "__main__":
    unittest.main()
