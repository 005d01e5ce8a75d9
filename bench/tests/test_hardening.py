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

from listrx_bench import cli, kernel
from listrx_bench.listrx import eal_runtime_dir, signals_held

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
