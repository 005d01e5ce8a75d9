"""A very short `listrx-bench kernel` as root (meson test kernel-experiment-
smoke): it must write a well-formed kernel.json with the rows it was asked
for, and leave nothing behind: no network namespace or veth, no lrx-ktime
and none of its BPF programs, net.core.gro_normal_batch as it was. The same
after a run interrupted with SIGINT and after one whose timer dies (an
error mid-run). Not a measurement (few, short windows). Skips (exit 77,
reason printed) without root, or when the experiment itself says it cannot
run here (exit 2 with its reason)."""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
SKIP = 77
# lrx_ktime.bpf.c's programs (bpftool shows the first 15 characters)
KTIME_PROGS = {"gro_enter", "gro_exit", "pad_enter", "pad_exit", "poll_end", "run_switch",
               "cal_enter", "cal_exit", "list_skb", "end_kfree", "end_consume"}
SHORT = ["--traffic", "udp,tcp-push", "--packets", "2560", "--pairs", "4", "--cal-every", "2",
         "--overhead-pairs", "1", "--perf-traffic", "udp", "--perf-pairs", "2",
         "--reps", "2", "--listrx-duration", "0.3"]


def gro_normal_batch():
    with open("/proc/sys/net/core/gro_normal_batch") as f:
        return int(f.read())


def leftovers():
    ns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    left = ([x for x in ns.split() if x.startswith("lrxk")] +
            [x.split("@")[0] for x in links.split() if x.startswith("lrxka")])
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/comm" % d) as f:
                if f.read().strip() == "lrx-ktime":
                    left.append("lrx-ktime process %s" % d)
        except OSError:
            continue
    if shutil.which("bpftool"):
        out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True)
        try:
            progs = json.loads(out.stdout or "[]")
        except ValueError:
            progs = []
        left += ["BPF program %s (id %s)" % (p.get("name"), p.get("id")) for p in progs
                 if p.get("name") in KTIME_PROGS]
    return left


def cmd(out, extra):
    return [sys.executable, "-m", "listrx_bench", "kernel", "--out", out] + SHORT + extra


def check_clean(before, stale, what):
    errors = []
    after = gro_normal_batch()
    if after != before:
        errors.append("%s: gro_normal_batch %d after the run, %d before" % (what, after, before))
    left = [x for x in leftovers() if x not in stale]
    if left:
        errors.append("%s: left behind: %s" % (what, left))
    return errors


def full_run(before, stale):
    with tempfile.TemporaryDirectory(prefix="lrxkernel") as out:
        proc = subprocess.run(cmd(out, ["-q", "--variant", "nf-rule,tc-bpf,xdp-generic-map,rxq4",
                                        "--row-pairs", "2"]),
                              cwd=BENCH, capture_output=True, text=True, timeout=150)
        print(proc.stdout + proc.stderr)
        if proc.returncode == 2:
            return "skip", proc.stderr.strip().splitlines()[-1]
        errors = check_clean(before, stale, "run")
        if proc.returncode != 0:
            errors.append("exit %d" % proc.returncode)
        try:
            with open(os.path.join(out, "kernel.json")) as f:
                res = json.load(f)
            k = res["kernel"]
            for key in ("method", "interval_method", "probe_overhead", "pairs", "by_traffic",
                        "perf", "methods"):
                if key not in k:
                    errors.append("kernel.%s missing" % key)
            if set(k["by_traffic"]) != {"udp", "tcp-push"}:
                errors.append("kernel.by_traffic has %s" % sorted(k["by_traffic"]))
            for kind, f in k["by_traffic"].items():
                if not f["delivery"]["ok"]:
                    errors.append("%s: frames lost between injector and NAPI: %r"
                                  % (kind, f["delivery"]))
                if f["counts"]["errors"]:
                    errors.append("%s: %d probe errors" % (kind, f["counts"]["errors"]))
            if not isinstance((k["probe_overhead"] or {}).get("per_prog_ns"), (int, float)):
                errors.append("no measured probe cost: %r" % k["probe_overhead"])
            # a smoke run may not resolve: then no agreement, and the reason
            if res["agreement"] is None and not res["agreement_unavailable"]:
                errors.append("agreement null without a reason")
            if res["agreement"] is not None and not (k["resolved"] and
                                                     res["listrx"]["resolved"]):
                errors.append("agreement from an unresolved gain")
            if set(res["rows"]) != {"nf-rule", "tc-bpf", "xdp-generic-map", "rxq4"}:
                errors.append("rows: %s" % sorted(res["rows"]))
            for v, r in res["rows"].items():
                if not (r.get("check") or {}).get("ok"):
                    errors.append("row %s: %s" % (v, (r.get("check") or {}).get("text")))
            if not (res.get("provenance") or {}).get("binaries"):
                errors.append("kernel.json: no provenance (which binary, which commit)")
            if not os.path.isfile(os.path.join(out, "kernel.md")):
                errors.append("no kernel.md")
            # stdout ends with the answer: each traffic's gain, listrx's, the
            # agreement; no per-window line without --verbose
            at = proc.stdout.rfind("== Answer")
            tail = proc.stdout[at:].strip().splitlines() if at >= 0 else []
            for want in ("- kernel, udp: ", "- kernel, tcp-push: ", "- listrx (",
                         "- agreement (listrx ÷ kernel, udp): "):
                if not any(line.startswith(want) for line in tail):
                    errors.append("stdout's answer has no %r: %r" % (want, tail))
            if not tail or not tail[-1].startswith("- agreement"):
                errors.append("stdout does not end with the answer: %r" % tail[-2:])
            if any(line.startswith("primary") for line in proc.stdout.splitlines()):
                errors.append("per-window lines on stdout without --verbose")
        except (OSError, ValueError, KeyError, TypeError) as e:
            errors.append("kernel.json: %s" % e)
        return "ran", errors


def interrupted_run(before, stale, how):
    """Start a longer run, wait for its first timed window, then SIGINT it
    (how == "sigint") or kill its lrx-ktime (how == "timer dies")."""
    with tempfile.TemporaryDirectory(prefix="lrxkernel") as out:
        proc = subprocess.Popen(cmd(out, ["--pairs", "50", "--no-perf", "--verbose"]), cwd=BENCH,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        started = False
        while time.time() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("primary"):
                started = True
                break
        if not started:
            proc.kill()
            _, err = proc.communicate()
            return ["%s: no timed window within 60 s: %s" % (how, err.strip()[-300:])]
        if how == "sigint":
            proc.send_signal(signal.SIGINT)
            want = 130
        else:
            kids = subprocess.run(["pgrep", "-P", str(proc.pid), "-x", "lrx-ktime"],
                                  capture_output=True, text=True).stdout.split()
            for k in kids:
                os.kill(int(k), signal.SIGKILL)
            want = 1
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            return ["%s: still running 60 s later" % how]
        errors = check_clean(before, stale, how)
        print("%s: exit %d after the first timed window; %s" % (
            how, proc.returncode, err.strip().splitlines()[-1] if err.strip() else "no message"))
        if proc.returncode != want:
            errors.append("%s: exit %d, want %d: %s" % (how, proc.returncode, want,
                                                        err.strip()[-300:]))
        return errors


def main():
    if os.geteuid() != 0:
        print("SKIPPED: the kernel experiment needs root (netns, BPF, sysctl)")
        return SKIP
    before = gro_normal_batch()
    stale = leftovers()
    status, errors = full_run(before, stale)
    if status == "skip":
        print("SKIPPED: %s" % errors)
        return SKIP if gro_normal_batch() == before and not [
            x for x in leftovers() if x not in stale] else 1
    errors += interrupted_run(before, stale, "sigint")
    errors += interrupted_run(before, stale, "timer dies")
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
