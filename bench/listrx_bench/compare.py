"""compare: listrx against peers on the same device, in one invocation.

Peers: dpdk-testpmd in rxonly and io forwarding (the I/O ceiling of the
port), and listrx's own graph engine (rte_graph). Runs alternate listrx and
each peer rep by rep, so slow drifts (other load, frequency) hit both; the
ratio listrx / peer is taken per rep and reported as median [min–max].
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

from .listrx import profile_eal, remove_runtime_dir
from .progress import Progress
from .stats import fmt, median, summary, unavailable

TESTPMD_MODES = {"testpmd-rxonly": "rxonly", "testpmd-io": "io"}


def parse_testpmd(text):
    """testpmd's periodic port statistics -> list of Rx-pps readings, and
    the accumulated RX-packets at exit. The first display has no previous
    one to difference against (Rx-pps 0 or covering start-up), so it is
    dropped, as is any reading after the forwarding stopped."""
    pps = [int(m.group(1)) for m in re.finditer(r"Rx-pps:\s+(\d+)", text)]
    m = re.findall(r"Accumulated forward statistics.*?RX-packets:\s+(\d+)", text, re.S)
    total = int(m[-1]) if m else None
    return pps[1:], total


LISTRX_PERIODIC = re.compile(r"^\[\s*[\d.]+s\] rx\s+([\d.]+) Mpps", re.M)


def parse_listrx_periodic(text):
    """listrx's --stats-period 1 lines -> the per-second rx Mpps readings
    after the first: the same steady-state treatment testpmd's readings get
    (the first second holds EAL's and the pool's first-touch page faults,
    which a whole-run average would charge to listrx alone)."""
    return [float(m.group(1)) for m in LISTRX_PERIODIC.finditer(text)][1:]


def run_listrx_steady(cmd, who, seconds):
    """Runs one listrx command that has --stats-period 1 and --duration
    seconds; returns (median of its per-second rx readings after the first,
    its stdout). Exits with a message naming `who` and the command when the
    run fails or prints no reading to use."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds * 4 + 60)
    finally:
        remove_runtime_dir(cmd)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-2:]
        raise SystemExit("%s: %s failed (exit %d): %s"
                         % (who, " ".join(cmd), proc.returncode, " | ".join(tail)))
    readings = parse_listrx_periodic(proc.stdout)
    if not readings:
        raise SystemExit("%s: no per-second reading after the first "
                         "(--seconds must be >= 2): %s" % (who, " ".join(cmd)))
    return median(readings), proc.stdout


def run_testpmd(args, mode, lcores, prefix, duration):
    cmd = [args.testpmd, "-l", lcores] + args.eal_list + ["--file-prefix", prefix]
    if args.driver_so:
        cmd += ["-d", args.driver_so]
    cmd += profile_eal(args.profile)
    cmd += ["--", "--forward-mode=" + mode, "--stats-period", "1", "--no-mlockall",
            "--burst", str(args.burst), "--rxq", "1", "--txq", "1"]
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True)
    except OSError as e:
        return unavailable("testpmd: %s" % e), " ".join(cmd), ""
    # Start-up (EAL, pool) takes a second or more on a loaded machine: count
    # the periodic displays as they come and stop after the first (dropped)
    # plus one per second of --duration, or at a generous deadline.
    lines = []
    wanted = 1 + max(int(round(duration)), 1)
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")),
                              daemon=True)
    reader.start()
    deadline = time.monotonic() + duration * 3 + 30
    while time.monotonic() < deadline and proc.poll() is None:
        if sum("Rx-pps:" in l for l in list(lines)) >= wanted:
            break
        time.sleep(0.2)
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    reader.join(timeout=10)
    proc.stdout.close()
    remove_runtime_dir(cmd)  # testpmd leaves EAL's runtime directory
    out = "".join(lines)
    pps, _ = parse_testpmd(out)
    if not pps:
        tail = " | ".join(out.strip().splitlines()[-2:])
        return unavailable("testpmd printed no throughput (%s)" % tail[-200:]), " ".join(cmd), out
    # the last reading can cover the stop: use the median of the readings
    return median(pps) / 1e6, " ".join(cmd), out


def run_compare(lx, args, argv):
    import shlex
    args.eal_list = shlex.split(args.eal)
    lcores = lx.lcores
    spec = {"profile": args.profile, "engine": args.engine, "burst": args.burst,
            "pipeline_arg": args.pipeline, "footprint_kb": 0,
            "stats_level": args.stats_level}
    peers = args.peer
    for p in peers:
        if p not in TESTPMD_MODES and p != "graph":
            print("listrx-bench compare: peer %r: want testpmd-rxonly, testpmd-io or graph" % p,
                  file=sys.stderr)
            return 2
    out_dir = args.out or None
    runs = {"listrx": [], **{p: [] for p in peers}}
    whole_run = {"listrx": [], "graph": []}
    commands = {}
    progress = Progress(args.reps * (1 + len(peers)), enabled=not args.quiet)
    for rep in range(args.reps):
        for who in ["listrx"] + peers:
            progress.show("rep %d/%d: %s" % (rep + 1, args.reps, who))
            if who in TESTPMD_MODES:
                mpps, cmd, _ = run_testpmd(args, TESTPMD_MODES[who], lcores,
                                           "lrxcmp%d_%d_%s" % (os.getpid(), rep, who),
                                           args.duration)
            else:
                s = dict(spec)
                if who == "graph":
                    s["engine"] = "graph"
                json_path = os.path.join(out_dir or "/tmp", "compare-%d-%s-%d.json"
                                         % (os.getpid(), who, rep))
                cmd_list = lx.command(s, json_path, duration=args.duration)
                cmd_list[cmd_list.index("--stats-period") + 1] = "1"
                summary_, err, info = lx.run(cmd_list, json_path, timeout=args.timeout)
                cmd = info["command"]
                readings = parse_listrx_periodic(info["output"])
                if err:
                    mpps = unavailable(err)
                elif not readings:
                    mpps = unavailable("listrx printed no per-second reading after the "
                                       "first (--duration must be >= 2)")
                else:
                    mpps = median(readings)
                    whole_run[who].append(summary_.get("mpps"))
                if not out_dir and os.path.exists(json_path):
                    os.unlink(json_path)
            runs[who].append(mpps)
            commands[who] = cmd
            progress.update("rep %d/%d: %s %s Mpps" % (rep + 1, args.reps, who, fmt(mpps)))
    progress.close()
    lines = []
    result = {"command": "listrx-bench " + " ".join(shlex.quote(a) for a in argv),
              "profile": args.profile, "pipeline": args.pipeline, "engine": args.engine,
              "burst": args.burst, "stats_level": args.stats_level, "duration_s": args.duration, "reps": args.reps,
              "mpps": runs, "mpps_whole_run": whole_run,
              "method": "median of the per-second readings after the first, for listrx "
                        "(--stats-period 1) and testpmd (--stats-period 1) alike",
              "commands": commands, "ratios": {}}
    base = runs["listrx"]
    lines.append("| run | Mpps median [min–max] | listrx ÷ peer median [min–max] | n |")
    lines.append("|---|---|---|---|")
    s = summary(base)
    lines.append("| listrx %s, pipeline %s, burst %d | %s [%s–%s] | 1 | %d |" % (
        args.engine, args.pipeline, args.burst, fmt(s["median"]), fmt(s["min"]), fmt(s["max"]),
        s["n"]))
    for p in peers:
        ratios = [a / b for a, b in zip(base, runs[p])
                  if isinstance(a, float) and isinstance(b, float) and b > 0]
        sp, sr = summary(runs[p]), summary(ratios)
        result["ratios"][p] = {"values": ratios, **sr}
        reason = next((v for v in runs[p] if isinstance(v, str)), None)
        if sp["n"]:
            lines.append("| %s | %s [%s–%s] | %s [%s–%s] | %d |" % (
                p, fmt(sp["median"]), fmt(sp["min"]), fmt(sp["max"]), fmt(sr["median"]),
                fmt(sr["min"]), fmt(sr["max"]), sr["n"]))
        else:
            lines.append("| %s | %s | - | 0 |" % (p, reason))
    table = "\n".join(lines)
    print(table)
    if out_dir:
        with open(os.path.join(out_dir, "compare.json"), "w") as f:
            json.dump(result, f, indent=1)
        with open(os.path.join(out_dir, "compare.md"), "w") as f:
            f.write("# listrx vs peers\n\n%s\n\nMpps: %s.\n\nCommand: `%s`\n\n"
                    "Runs:\n\n```\n%s\n```\n" % (
                        table, result["method"], result["command"],
                        "\n".join(commands.values())))
    return 0
