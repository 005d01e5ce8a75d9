# SPDX-License-Identifier: BSD-3-Clause
"""RX cost of net_synth against net_null under dpdk-testpmd rxonly.

Runs dpdk-testpmd in rxonly mode on one port, alternating the devices
under test in the same run (A B A B ...), each for --seconds, --reps times.
A run's figure is the median of testpmd's per-second "Rx-pps" samples after
the first (warm-up) one; the report gives the median over reps, min..max,
and the ratio of medians against the first device (net_null copy=0).

  listrx-bench synth-rx --so build/pmd/net_synth/librte_net_synth.so
  listrx-bench synth-rx --so ... --reps 7 --seconds 5 --json out.json
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

from .listrx import (BenchError, default_lcores, remove_runtime_dir, signals_held,
                     stop_process)
from .options import convert, positive_int
from .report import Doc

DEFAULT_DEVICES = [
    ("net_null copy=0", "net_null0,copy=0"),
    ("net_synth udp64 copy=0", "net_synth0,profile=udp64,copy=0"),
    ("net_synth udp64 copy=1", "net_synth0,profile=udp64,copy=1"),
]

PPS = re.compile(r"Rx-pps:\s+(\d+)")


def run_once(testpmd, so, vdev, seconds, lcores, prefix):
    cmd = [testpmd, "-l", lcores, "--no-huge", "--no-pci", "--no-shconf",
           "-m", "1024", "--file-prefix", prefix]
    if vdev.startswith("net_synth"):
        cmd += ["-d", so]
    cmd += ["--vdev", vdev, "--", "--forward-mode=rxonly", "--stats-period",
            "1", "--no-mlockall", "--total-num-mbufs=16384"]
    with tempfile.TemporaryFile("w+") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            time.sleep(seconds + 1.5)
        finally:
            with signals_held():
                stop_process(proc, timeout=20)
                remove_runtime_dir(cmd)  # testpmd leaves EAL's runtime directory
        log.seek(0)
        out = log.read()
    samples = [int(x) for x in PPS.findall(out)]
    if len(samples) < 2:
        raise BenchError("synth-rx: no Rx-pps samples from: %s\n%s" %
                         (" ".join(cmd), out[-2000:]))
    return statistics.median(samples[1:]), cmd


def add_parser(sub):
    ap = sub.add_parser("synth-rx", help="net_synth's own RX rate under dpdk-testpmd",
                        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--so", required=True, help="path of librte_net_synth.so")
    ap.add_argument("--reps", type=convert(positive_int), default=5)
    ap.add_argument("--seconds", type=convert(positive_int), default=4)
    ap.add_argument("--lcores", default=default_lcores(),
                    help="EAL -l (main lcore + one forwarding lcore) (default: %(default)s)")
    ap.add_argument("--vdev", action="append", default=[],
                    help="extra LABEL=DEVARGS to compare (repeatable)")
    ap.add_argument("--json", help="write the results here")
    ap.set_defaults(func=run)


def run(args, argv):
    if args.reps < 5:
        raise BenchError("synth-rx: --reps must be at least 5 (median and spread)")
    testpmd = shutil.which("dpdk-testpmd")
    if not testpmd:
        raise BenchError("synth-rx: dpdk-testpmd not found (Debian package dpdk)")
    if not os.path.isfile(args.so):
        raise BenchError("synth-rx: %s: no such file (build pmd/net_synth first)" % args.so)
    devices = list(DEFAULT_DEVICES)
    for v in args.vdev:
        label, _, devargs = v.partition("=")
        devices.append((label, devargs))

    results = {label: [] for label, _ in devices}
    commands = {}
    for rep in range(args.reps):
        for label, vdev in devices:
            pps, cmd = run_once(testpmd, args.so, vdev, args.seconds,
                                args.lcores, "lrxsynthrx%d" % os.getpid())
            results[label].append(pps)
            commands[label] = " ".join(cmd)
            print("rep %d  %-28s %8.2f Mpps" % (rep + 1, label, pps / 1e6),
                  flush=True)

    base = statistics.median(results[devices[0][0]])
    print("\nbackend: testpmd rxonly Rx-pps (1 s samples, first dropped), "
          "reps=%d, %d s each, interleaved" % (args.reps, args.seconds))
    summary, rows = [], []
    for label, _ in devices:
        r = results[label]
        med = statistics.median(r)
        rows.append([label, "%.2f" % (med / 1e6), "%.2f..%.2f" % (min(r) / 1e6, max(r) / 1e6),
                     "%.2fx" % (med / base)])
        summary.append({"device": label, "median_pps": med, "min_pps": min(r),
                        "max_pps": max(r), "reps_pps": r,
                        "ratio_vs_first": med / base,
                        "command": commands[label]})
    table = Doc()
    table.table(["device", "median Mpps", "min..max", "ratio"], rows)
    print(table.text(), end="")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"reps": args.reps, "seconds": args.seconds,
                       "results": summary}, f, indent=2)
