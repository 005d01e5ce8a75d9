"""compare: listrx against peers on the same device, in one invocation.

Peers: dpdk-testpmd in rxonly and io forwarding (the I/O ceiling of the
port), and listrx's own graph engine (rte_graph). Runs alternate listrx and
each peer rep by rep, so slow drifts (other load, frequency) hit both; the
ratio listrx / peer is taken per rep and reported as median [min–max].

testpmd runs on the mbuf pool listrx reports it made (like for like: the
same count, cache, element size and layout) and, by default, also on its
own default pool, so that both ratios are on the table.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time

from . import grid
from .listrx import (Listrx, find_binary, profile_eal, remove_runtime_dir, signals_held,
                     stop_process)
from .options import add_common, convert, data_room, positive_float, positive_int
from .progress import Progress
from .report import Doc
from .stats import fmt, median, summary, unavailable

TESTPMD_MODES = {"testpmd-rxonly": "rxonly", "testpmd-io": "io"}
# peers that are listrx itself with one setting changed: the graph engine,
# and stats level off (what the counting costs)
LISTRX_PEERS = {"graph": {"engine": "graph"}, "listrx-off": {"stats_level": "off"}}
# which pool testpmd runs on: listrx's (like for like), its own default, or
# both (one run each per rep)
TESTPMD_POOLS = ("both", "listrx", "own")
# the name of a testpmd run on its own default pool (the like-for-like run
# keeps the peer's name)
OWN_POOL = "/own-pool"


def testpmd_pool_args(pool):
    """testpmd options that give it the pool listrx reports (its summary's
    `mbufs_per_pool` and `mempool`): the same number of mbufs, per-lcore
    cache, element size and layout. A packed pool (objects may cross 4 KB
    pages, RTE_MEMPOOL_F_NO_IOVA_CONTIG) is testpmd's `--mp-alloc anon
    --no-iova-contig` (its mbuf_pool_create: rte_mempool_create_empty with
    that flag, rte_mempool_populate_anon), an IOVA-contiguous one its
    `--mp-alloc native` (rte_pktmbuf_pool_create). testpmd's mbufs have no
    private area: its data room takes listrx's private area too, so that
    the elements are the same size and lie at the same strides."""
    alloc = {"packed": ["--mp-alloc", "anon", "--no-iova-contig"],
             "iova-contig": ["--mp-alloc", "native"]}[pool["layout"]]
    return alloc + ["--total-num-mbufs", str(pool["mbufs"]), "--mbcache", str(pool["cache"]),
                    "--mbuf-size", str(pool["data_room"] + pool["priv_size"])]


def listrx_pool(summary_):
    """The pool a listrx run reports it made, as testpmd_pool_args reads
    it, or None when its summary does not say (a failed run)."""
    if not isinstance(summary_, dict):
        return None
    mp = summary_.get("mempool")
    if not isinstance(mp, dict) or not isinstance(summary_.get("mbufs_per_pool"), int):
        return None
    if mp.get("layout") not in ("packed", "iova-contig") or not all(
            isinstance(mp.get(k), int) for k in ("cache", "data_room", "priv_size")):
        return None
    return {"mbufs": summary_["mbufs_per_pool"], "cache": mp["cache"],
            "data_room": mp["data_room"], "priv_size": mp["priv_size"],
            "layout": mp["layout"]}


def peer_runs(peers, testpmd_pool):
    """The runs of a rep after listrx's, as (name, peer, pool): a testpmd
    peer on listrx's pool keeps its name, on its own pool it is
    PEER/own-pool; listrx's own peers have no pool choice (None)."""
    runs = []
    for p in peers:
        if p not in TESTPMD_MODES:
            runs.append((p, p, None))
            continue
        if testpmd_pool in ("both", "listrx"):
            runs.append((p, p, "listrx"))
        if testpmd_pool in ("both", "own"):
            runs.append((p + OWN_POOL, p, "own"))
    return runs


def own_pool_args(args):
    """testpmd's own default pool: only the data room --data-room asks for."""
    return ["--mbuf-size", str(args.data_room)] if args.data_room else []


def pool_text(pool):
    return "%d mbufs, cache %d, data room %d + private area %d, %s" % (
        pool["mbufs"], pool["cache"], pool["data_room"], pool["priv_size"], pool["layout"])


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
        with signals_held():
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


def run_testpmd(args, mode, lcores, prefix, duration, burst, pool_args):
    """One testpmd run (pool_args: its mbuf pool options) -> (Mpps or
    unavailable reason, command, output)."""
    cmd = [args.testpmd, "-l", lcores] + args.eal_list + ["--file-prefix", prefix]
    if args.driver_so:
        cmd += ["-d", args.driver_so]
    cmd += profile_eal(args.profile)
    cmd += ["--", "--forward-mode=" + mode, "--stats-period", "1", "--no-mlockall",
            "--burst", str(burst), "--rxq", "1", "--txq", "1"] + pool_args
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
    try:
        deadline = time.monotonic() + duration * 3 + 30
        while time.monotonic() < deadline and proc.poll() is None:
            if sum("Rx-pps:" in l for l in list(lines)) >= wanted:
                break
            time.sleep(0.2)
    finally:
        # also on Ctrl-C or SIGTERM, and a second one waits: testpmd
        # stopped, its EAL runtime directory (which it leaves) removed
        with signals_held():
            stop_process(proc)
            reader.join(timeout=10)
            proc.stdout.close()
            remove_runtime_dir(cmd)
    out = "".join(lines)
    pps, _ = parse_testpmd(out)
    if not pps:
        tail = " | ".join(out.strip().splitlines()[-2:])
        return unavailable("testpmd printed no throughput (%s)" % tail[-200:]), " ".join(cmd), out
    # the last reading can cover the stop: use the median of the readings
    return median(pps) / 1e6, " ".join(cmd), out


def listrx_accounting(summary_):
    """None when a listrx run freed every packet it received and left the
    pool full (rx = delivered + tx + dropped, nothing held, no mbuf in use
    at exit), else what did not add up."""
    if not isinstance(summary_, dict):
        return "no summary"
    keys = ("rx_packets", "delivered", "tx_packets", "dropped", "held", "mbufs_in_use_at_exit")
    missing = [k for k in keys if not isinstance(summary_.get(k), int)]
    if missing:
        return "summary without %s" % ", ".join(missing)
    rx, held, in_use = summary_["rx_packets"], summary_["held"], summary_["mbufs_in_use_at_exit"]
    # segments GRO merged into another packet were freed with it
    merged = summary_.get("merged_segments", 0)
    # packets the stages made (mirred mirror copies) have fates too
    made = summary_.get("made", 0)
    out = summary_["delivered"] + summary_["tx_packets"] + summary_["dropped"]
    problems = []
    if out + merged != rx + made or held:
        problems.append("rx %d != delivered + tx + dropped %d (merged %d, made %d, held %d)"
                        % (rx, out, merged, made, held))
    if in_use:
        problems.append("%d mbufs in use at exit" % in_use)
    return "; ".join(problems) or None


def run_listrx_once(lx, args, spec, who, rep, out_dir):
    """One listrx run of the comparison -> (Mpps or unavailable reason,
    whole-run Mpps or None, accounting problem or None, command, the pool
    it reports or None)."""
    json_path = os.path.join(out_dir or "/tmp", "compare-%d-%s-b%d-%d.json"
                             % (os.getpid(), who, spec["burst"], rep))
    extra = ["--set", "mempool.data_room=%d" % args.data_room] if args.data_room else []
    cmd_list = lx.command(spec, json_path, duration=args.duration, extra=extra)
    cmd_list[cmd_list.index("--stats-period") + 1] = "1"
    summary_, err, info = lx.run(cmd_list, json_path, timeout=args.timeout)
    readings = parse_listrx_periodic(info["output"])
    whole, problem = None, None
    if err:
        mpps = unavailable(err)
    elif not readings:
        mpps = unavailable("listrx printed no per-second reading after the "
                           "first (--duration must be >= 2)")
    else:
        mpps = median(readings)
        whole = summary_.get("mpps")
        problem = listrx_accounting(summary_)
    if not out_dir and os.path.exists(json_path):
        os.unlink(json_path)
    return mpps, whole, problem, info["command"], None if err else listrx_pool(summary_)


def measure_all(lx, args, others, listrx_runs):
    """Every rep: each burst in turn, listrx then each peer, so that a slow
    drift (other load, frequency) hits every column alike. Returns the
    figures per burst and run, the whole-run figures and accounting of the
    listrx runs, the commands, and the pool the last listrx run reported
    (testpmd's like-for-like pool)."""
    bursts = args.burst
    runs = {b: {"listrx": [], **{name: [] for name, _, _ in others}} for b in bursts}
    whole_run = {b: {w: [] for w in listrx_runs} for b in bursts}
    accounting = {b: {w: [] for w in listrx_runs} for b in bursts}
    commands = {}
    pool = None
    progress = Progress(args.reps * len(bursts) * (1 + len(others)), enabled=not args.quiet)
    for rep in range(args.reps):
        for burst in bursts:
            for who, peer, pool_choice in [("listrx", "listrx", None)] + others:
                progress.show("rep %d/%d: burst %d: %s" % (rep + 1, args.reps, burst, who))
                if peer in TESTPMD_MODES and pool_choice == "listrx" and pool is None:
                    mpps, cmd = unavailable("listrx reported no pool to give testpmd (its run "
                                            "failed)"), None
                elif peer in TESTPMD_MODES:
                    pool_args = testpmd_pool_args(pool) if pool_choice == "listrx" else \
                        own_pool_args(args)
                    mpps, cmd, _ = run_testpmd(args, TESTPMD_MODES[peer], lx.lcores,
                                               "lrxcmp%d_%d_%s" % (os.getpid(), rep, peer),
                                               args.duration, burst, pool_args)
                else:
                    spec = {"profile": args.profile, "engine": args.engine, "burst": burst,
                            "pipeline_arg": args.pipeline, "footprint_kb": 0,
                            "stats_level": args.stats_level}
                    spec.update(LISTRX_PEERS.get(who, {}))
                    mpps, whole, problem, cmd, reported = run_listrx_once(lx, args, spec, who,
                                                                          rep, args.out or None)
                    pool = reported or pool
                    if whole is not None:
                        whole_run[burst][who].append(whole)
                    if isinstance(mpps, float):
                        accounting[burst][who].append(problem)
                runs[burst][who].append(mpps)
                if cmd:
                    commands["%s burst %d" % (who, burst)] = cmd
                progress.update("rep %d/%d: burst %d: %s %s Mpps"
                                % (rep + 1, args.reps, burst, who, fmt(mpps)))
    progress.close()
    return runs, whole_run, accounting, commands, pool


def peer_rows(args, runs, accounting, others, result):
    """The table's rows per burst: listrx, then each peer with its ratio
    paired by rep (result["ratios"] gets them). Returns the rows and
    whether a listrx run failed its accounting."""
    rows = []
    failed = False
    for burst in args.burst:
        base = runs[burst]["listrx"]
        s = summary(base)
        # a row without a figure says why (e.g. --duration 1: no reading
        # after the first second), as a peer's row does
        cell = "%s [%s–%s]" % (fmt(s["median"]), fmt(s["min"]), fmt(s["max"])) if s["n"] else \
            empty_reason(base)
        rows.append(["listrx %s, pipeline %s, burst %d, stats %s" % (
            args.engine, args.pipeline, burst, args.stats_level), cell, "1", s["n"],
            accounting_cell(accounting[burst]["listrx"])])
        failed |= any(accounting[burst]["listrx"])
        result["ratios"][str(burst)] = {}
        for p, peer, pool_choice in others:
            ratios = [a / b for a, b in zip(base, runs[burst][p])
                      if isinstance(a, float) and isinstance(b, float) and b > 0]
            sp, sr = summary(runs[burst][p]), summary(ratios)
            result["ratios"][str(burst)][p] = {"values": ratios, **sr}
            reason = empty_reason(runs[burst][p])
            check = accounting_cell(accounting[burst][p]) if p in LISTRX_PEERS else "-"
            failed |= p in LISTRX_PEERS and any(accounting[burst][p])
            label = "%s, burst %d%s" % (peer, burst, {
                None: "", "listrx": ", listrx's pool", "own": ", testpmd's own pool"}[pool_choice])
            if sp["n"]:
                ratio = "%s [%s–%s]" % (fmt(sr["median"]), fmt(sr["min"]), fmt(sr["max"])) \
                    if sr["n"] else "no pair: listrx has no figure"
                rows.append([label,
                             "%s [%s–%s]" % (fmt(sp["median"]), fmt(sp["min"]), fmt(sp["max"])),
                             ratio, sr["n"], check])
            else:
                rows.append([label, reason, "-", 0, check])
    return rows, failed


def burst_rows(bursts, runs, result):
    """The burst question (which burst is fastest) asked the same way: each
    listrx burst against the first, paired by rep."""
    rows = []
    for burst in bursts[1:]:
        ratios = [a / b for a, b in zip(runs[burst]["listrx"], runs[bursts[0]]["listrx"])
                  if isinstance(a, float) and isinstance(b, float) and b > 0]
        sr = summary(ratios)
        result["ratios"]["listrx burst %d / burst %d" % (burst, bursts[0])] = {
            "values": ratios, **sr}
        cell = "%s [%s–%s]" % (fmt(sr["median"]), fmt(sr["min"]), fmt(sr["max"])) if sr["n"] \
            else "no pair: " + (empty_reason(runs[burst]["listrx"] + runs[bursts[0]]["listrx"])
                                or "no figure")
        rows.append(["listrx burst %d ÷ listrx burst %d" % (burst, bursts[0]), "-", cell,
                     sr["n"], "-"])
    return rows


def write_compare(out_dir, result, table, pools, commands):
    """compare.json and compare.md in out_dir."""
    with open(os.path.join(out_dir, "compare.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(out_dir, "compare.md"), "w") as f:
        f.write("# listrx vs peers\n\n%s\n\n%sMpps: %s.\n\nCommand: `%s`\n\n"
                "Runs:\n\n```\n%s\n```\n" % (
                    table, pools + "\n\n" if pools else "", result["method"],
                    result["command"],
                    "\n".join(commands.values())))


def run_compare(lx, args, argv):
    import shlex
    args.eal_list = shlex.split(args.eal)
    bursts = args.burst
    listrx_runs = ["listrx"] + [p for p in args.peer if p in LISTRX_PEERS]
    others = peer_runs(args.peer, args.testpmd_pool)
    load_before = os.getloadavg()
    runs, whole_run, accounting, commands, pool = measure_all(lx, args, others, listrx_runs)
    result = {"command": "listrx-bench " + " ".join(shlex.quote(a) for a in argv),
              "profile": args.profile, "pipeline": args.pipeline, "engine": args.engine,
              "bursts": bursts, "stats_level": args.stats_level, "duration_s": args.duration,
              "data_room": args.data_room, "testpmd_pool": args.testpmd_pool,
              "listrx_pool": pool,
              "testpmd_pool_args": {"listrx": testpmd_pool_args(pool) if pool else None,
                                    "own": own_pool_args(args)},
              "reps": args.reps, "load_before": load_before,
              "mpps": {str(b): runs[b] for b in bursts},
              "mpps_whole_run": {str(b): whole_run[b] for b in bursts},
              "accounting": {str(b): accounting[b] for b in bursts},
              "method": "median of the per-second readings after the first, for listrx "
                        "(--stats-period 1) and testpmd (--stats-period 1) alike",
              "commands": commands, "ratios": {}}
    rows, failed = peer_rows(args, runs, accounting, others, result)
    rows += burst_rows(bursts, runs, result)
    result["load_after"] = os.getloadavg()
    doc = Doc()
    doc.table(["run", "Mpps median [min–max]", "listrx ÷ peer, per rep, median [min–max]", "n",
               "rx = freed, pool full"], rows)
    table = doc.markdown().strip()
    print(table)
    pools = pools_note(result, others)
    if pools:
        print(pools)
    print("load average before %s, after %s" % (
        " ".join("%.2f" % v for v in result["load_before"]),
        " ".join("%.2f" % v for v in result["load_after"])))
    if args.out:
        write_compare(args.out, result, table, pools, commands)
    if failed:
        print("listrx-bench compare: a listrx run did not free every packet it received "
              "or left mbufs in use (see the table)", file=sys.stderr)
        return 1
    return 0


def pools_note(result, others):
    """The lines under the table that say which pool each testpmd row ran
    on, or "" without a testpmd peer."""
    choices = {c for _, peer, c in others if peer in TESTPMD_MODES}
    lines = []
    if "listrx" in choices:
        pool = result["listrx_pool"]
        lines.append("listrx's pool: %s; testpmd given %s." % (
            pool_text(pool), " ".join(result["testpmd_pool_args"]["listrx"]))
            if pool else "listrx's pool: not reported (no listrx run succeeded).")
    if "own" in choices:
        own = result["testpmd_pool_args"]["own"]
        lines.append("testpmd's own pool: its defaults (%s; without hugepages one mbuf per "
                     "4 KB page)." % (" ".join(own) if own else "no pool option"))
    return "\n".join(lines)


def empty_reason(values):
    """Why a row has no figure: the first reason among its runs (runs
    without a figure hold an "unavailable: ..." string), or None."""
    return next((v for v in values if isinstance(v, str)), None)


def accounting_cell(problems):
    """The table cell for the listrx runs' accounting: "yes (n/n)" or the
    first problem."""
    if not problems:
        return "-"
    bad = [p for p in problems if p]
    if not bad:
        return "yes (%d/%d)" % (len(problems), len(problems))
    return "NO (%d/%d): %s" % (len(bad), len(problems), bad[0])

def peers(text):
    names = grid.split_list(text)
    for p in names:
        if p not in TESTPMD_MODES and p not in LISTRX_PEERS:
            raise ValueError("peer %r: want testpmd-rxonly, testpmd-io, graph or listrx-off" % p)
    return names


def add_parser(sub):
    p = sub.add_parser("compare", help="listrx vs peers (testpmd rxonly/io, graph engine) "
                       "in the same invocation, as ratios")
    add_common(p)
    p.add_argument("--peer", type=convert(peers, "peer"), default=["testpmd-rxonly"],
                   help="peers: testpmd-rxonly, testpmd-io, graph (listrx's graph engine), "
                   "listrx-off (listrx at stats level off) (default: %(default)s)")
    p.add_argument("--profile", default="null", help="traffic profile (see sweep --profiles) (default: %(default)s)")
    p.add_argument("--pipeline", default="none", help="listrx pipeline ('none' = empty) (default: %(default)s)")
    p.add_argument("--engine", default="burst", help="listrx engine (default: %(default)s)")
    p.add_argument("--burst", type=convert(grid.parse_bursts, "burst size"), default=[32, 64],
                   help="burst sizes, one or a list, the same for listrx and the peers "
                   "(default: 32,64)")
    p.add_argument("--stats-level", default="counters", choices=("off", "counters", "cycles"),
                   help="listrx stats level; counters is listrx's default (testpmd keeps "
                   "per-stream counters) (default: %(default)s)")
    p.add_argument("--data-room", type=convert(data_room), default=None,
                   help="mbuf data room for both sides (listrx [mempool] data_room, testpmd "
                   "--mbuf-size) (default: each tool's own)")
    p.add_argument("--testpmd-pool", choices=TESTPMD_POOLS, default="both",
                   help="testpmd's mbuf pool: listrx's (like for like: the count, cache, "
                   "element size and layout listrx reports; --mp-alloc anon --no-iova-contig "
                   "for its packed pool), own (testpmd's defaults: without hugepages one mbuf "
                   "per 4 KB page), or both, one run each (default: %(default)s)")
    p.add_argument("--duration", type=convert(positive_float), default=5.0, help="seconds per run (default: %(default)s)")
    p.add_argument("--reps", type=convert(positive_int), default=5, help="alternating repetitions (default: %(default)s)")
    p.add_argument("--testpmd", default="dpdk-testpmd", help="testpmd binary (default: %(default)s)")
    p.add_argument("--driver-so", default=None,
                   help="-d for testpmd (a PMD built as a shared object, e.g. net_synth) (default: %(default)s)")
    p.add_argument("--out", default=None, help="write compare.json/.md here (default: %(default)s)")
    p.set_defaults(func=cmd_compare)


def cmd_compare(args, argv):
    lx = Listrx(find_binary(args.listrx), eal=args.eal, lcores=args.lcores)
    return run_compare(lx, args, argv)
