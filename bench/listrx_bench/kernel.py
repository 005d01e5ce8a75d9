"""listrx-bench kernel: the running kernel's own listification gain
(net.core.gro_normal_batch 1 vs 64 on a veth pair, measured directly with
tracepoint windows, and by perf as a second method), listrx's prediction
for the same traffic with a kernel-calibrated configuration, and the
kernel's rows of Cree's 2018 table (a netfilter rule, a tc filter, generic
XDP with a map).

Method (docs/kernel.md): the receiving veth sits in a fresh network
namespace with GRO on and runs threaded NAPI, its kthread pinned to the
sender's CPU. lrx-kinject (bench/kernel/) sends rounds of frames at
SCHED_FIFO, so each round is queued whole before the kthread polls it in
full NAPI budgets. lrx-ktime times, inside the kthread's polls, each frame's
GRO window (napi_gro_receive_entry..exit, which holds the list processing
gro_normal_one starts) and the lists handed up outside GRO windows, with
BTF tracepoint programs, and measures what the probes themselves cost.
Windows alternate gro_normal_batch 1 and 64; pairs of adjacent windows give
a ratio each; the gain is their median with a bootstrap interval.
The veth, the sysctl, the probes' helpers and the injector are
kernel_host.py's."""

import contextlib
import json
import os
import re
import shutil
import signal
import sys
import time

from .kernel_model import (BATCHES, TRAFFIC, add_answer, assign_samples, calibrated_config,
                           counter_delta, fallback_footprints, footprints_from_kallsyms,
                           parse_kallsyms, row_figures, stage_footprints, summarize,
                           write_report)
from .listrx import (STOP_SIGNALS, BenchError, Listrx, allowed_cpus, find_binary, provenance,
                     shared_cpu_pct, signals_held)
from . import grid, interleave
from .kernel_host import (GroNormalBatch, Ktime, PerfRecord, Skip, Veth, _run, build_root,
                          check_preconditions, find_artifacts, injector_cmd, retpolines,
                          run_injector)
from .options import add_common, add_out, allowed_cpu, convert, positive_float
from .progress import Progress, StepLog
from .report import Doc

# the rows' rules and filters drop UDP to these ports; the traffic (9) never
# matches, so every frame passes them, as in Cree's series ("a port range the
# traffic does not match")
DROP_PORTS = (10000, 19999)


class Experiment:
    """One veth, its kthreads' timer, the global sysctl: windows of traffic
    under a gro_normal_batch, with counters before and after."""

    def __init__(self, art, veth, gro, opts, log):
        self.art, self.veth, self.gro, self.opts, self.log = art, veth, gro, opts, log
        self.kt = None
        self.perf = None
        self.windows = []

    def start_timer(self):
        if self.kt:
            self.kt.close()
        self.kt = Ktime(self.art, self.veth.napi_pids)

    def close(self):
        if self.perf:
            self.perf.stop()
            self.perf = None
        if self.kt:
            self.kt.close()
            self.kt = None
        self.veth.close_socket()

    def window(self, kind, batch, phase, extra=(), keep=True, **tags):
        self.gro.set(batch)
        s0 = self.kt.snap()
        t0 = time.monotonic_ns()
        r = run_injector(injector_cmd(self.art, self.veth, kind, self.opts.packets,
                                      self.opts.injector, extra), self.opts.timeout)
        t1 = time.monotonic_ns()
        s1 = self.kt.snap()
        w = dict(tags, phase=phase, traffic=kind, batch=batch, t0=t0, t1=t1,
                 sent=r["sent"], failed=r["failed"], sched_ns=r["napi_cpu_ns"],
                 send_cpu_ns=r["send_cpu_ns"], wall_ns=r["wall_ns"],
                 probes=s1["windows"], episodes=s1["episodes"], cal=s1["calibrating"],
                 load=os.getloadavg()[0], counters=counter_delta(s0, s1))
        if keep:
            self.windows.append(w)
        self.log.step("%s %s batch %d" % (phase, kind, batch), kind="window")
        return w

    def traffic(self, kind):
        if TRAFFIC[kind]["socket"]:
            self.veth.open_udp_socket(TRAFFIC[kind]["dport"])
        else:
            self.veth.close_socket()

    def paired(self, kind, phase, pairs, setup=None, extra=(), **tags):
        """Warm-up, then `pairs` pairs of windows at batch 1 and 64 in
        alternating order; setup(pair) runs before each pair."""
        for b in BATCHES:
            self.window(kind, b, phase, extra=extra, keep=False)
        for p in range(pairs):
            cal = setup(p) if setup else False
            for b in (BATCHES if p % 2 == 0 else BATCHES[::-1]):
                w = self.window(kind, b, phase, extra=extra, pair=p, cal=bool(cal), **tags)
                self.log_window(w)

    def log_window(self, w):
        c = w["counters"]
        n = c.get("gro_calls") or c.get("poll_work") or 1
        self.log("%-8s %-8s pair %2d batch %2d %s GRO window %7.1f  on-CPU %7.1f ns/frame "
                 "(load %.1f)" % (w["phase"], w["traffic"], w.get("pair", -1), w["batch"],
                                  "cal" if w.get("cal") else "   ",
                                  c.get("gro_ns", 0) / n, c.get("oncpu_ns", 0) / n, w["load"]))

    def primary(self, kind):
        """The windows of one traffic kind, every cal_every-th pair with the
        calibration pair attached."""
        ep = TRAFFIC[kind]["episodes"]
        every = self.opts.cal_every

        def setup(p):
            cal = every > 0 and p % every == every - 1
            self.kt.set(windows=True, episodes=ep, cal=cal)
            return cal
        self.traffic(kind)
        self.kt.set(windows=True, episodes=ep)
        self.paired(kind, "primary", self.opts.pairs, setup)
        self.kt.set()

    def overhead(self, kind="udp"):
        """GRO-window probes on and off, alternating, both batches: what the
        probes cost the kthread, and its whole time without them."""
        self.traffic(kind)
        for b in BATCHES:
            self.window(kind, b, "overhead", keep=False)
        for p in range(self.opts.overhead_pairs):
            for b in BATCHES:
                for on in ((True, False) if p % 2 == 0 else (False, True)):
                    self.kt.set(windows=on)
                    self.log_window(self.window(kind, b, "overhead", pair=p))
        self.kt.set()

    def perf_phase(self, kinds, out_dir):
        """perf over interleaved windows without the timing probes."""
        path = os.path.join(out_dir, "perf-kthread.data")
        self.kt.set()
        self.perf = PerfRecord(self.veth.napi_pids, self.opts.perf_period, path)
        try:
            for kind in kinds:
                self.traffic(kind)
                self.paired(kind, "perf", self.opts.perf_pairs)
        finally:
            self.perf.stop()
        samples = self.perf.samples()
        self.perf = None
        if not self.opts.keep_perf:
            os.unlink(path)
        pw = [w for w in self.windows if w["phase"] == "perf"]
        lines = assign_samples(samples, pw)
        self.log("perf: %d samples, %d in the windows" % (
            len(samples), sum(w["perf"]["samples"] for w in pw)))
        return lines

    def subtraction(self):
        """The first method again: native XDP_PASS - XDP_DROP, with the
        injector's old fixed idle polling and the adaptive one, read with
        the kthread's scheduler clock and with its on-CPU time."""
        self.traffic("udp")
        self.kt.set()
        try:
            for p in range(self.opts.subtraction_pairs):
                for wait in ("fixed", "adaptive"):
                    for verdict in (("drop", "pass") if p % 2 == 0 else ("pass", "drop")):
                        self.veth.set_xdp("xdpdrv", self.art["xdp_" + verdict])
                        if self.veth.refresh_napis():
                            self.start_timer()
                        for b in (BATCHES if p % 2 == 0 else BATCHES[::-1]):
                            self.log_window(self.window(
                                "udp", b, "subtraction", extra=("--wait", wait), pair=p,
                                wait=wait, verdict=verdict))
        finally:
            self.veth.set_xdp("xdpdrv")
            if self.veth.refresh_napis():
                self.start_timer()

    def row(self, variant):
        """One row of Cree's 2018 table: configure, windows, check, undo."""
        v = VARIANTS[variant]
        if v.get("queues", 1) != self.veth.queues:
            raise BenchError("row %s wants %d RX queues, the veth has %d" % (
                variant, v.get("queues", 1), self.veth.queues))
        self.traffic("udp")
        state = (v["setup"](self) if v.get("setup") else None) or {}
        try:
            every = self.opts.cal_every

            def setup(p):
                cal = every > 0 and p % every == every - 1
                self.kt.set(windows=True, cal=cal)
                return cal
            first = len(self.windows)
            self.kt.set(windows=True)
            self.paired("udp", "row", self.opts.row_pairs, setup, extra=state.get("extra", ()),
                        variant=variant)
            self.kt.set()
            sent = sum(w["sent"] - w["failed"] for w in self.windows[first:])
            # the warm-up windows were sent too
            sent += 2 * self.opts.packets
            check = v["check"](self, state, sent) if v.get("check") else {
                "ok": True, "text": "nothing to check (no rule, filter or program)"}
        finally:
            if v.get("teardown"):
                v["teardown"](self, state)
        self.log("row %s: %s" % (variant, check["text"]))
        return check


# ---- the rows' configurations and their checks ----

def _iptables():
    """iptables-legacy (ipt_do_table, as the seed's 2018 kernel and listrx's
    netfilter stage), else iptables (nf_tables backend on Debian 12)."""
    for name in ("iptables-legacy", "iptables"):
        if shutil.which(name):
            return name
    raise Skip("the nf-rule row needs iptables (apt-get install iptables)")


def _nf_setup(exp):
    ipt = _iptables()
    exp.veth.nsx(ipt, "-A", "INPUT", "-p", "udp", "--dport", "%d:%d" % DROP_PORTS, "-j", "DROP")
    return {"iptables": ipt}


def _nf_check(exp, state, sent):
    text = exp.veth.nsx(state["iptables"], "-L", "INPUT", "-v", "-x", "-n").stdout
    m = re.search(r"Chain INPUT \(policy ACCEPT (\d+) packets", text)
    rule = re.search(r"^\s*(\d+)\s+\d+\s+DROP\s+(?:17|udp)\b", text, re.M)
    policy = int(m.group(1)) if m else None
    hits = int(rule.group(1)) if rule else None
    ok = policy is not None and policy >= sent and hits == 0
    return {"ok": ok, "tool": state["iptables"], "policy_packets": policy, "rule_packets": hits,
            "expected": sent,
            "text": "%s -L INPUT -v -x: %s packets through the chain (policy ACCEPT), %s "
            "matched the rule, %d sent" % (state["iptables"], policy, hits, sent)}


# the conntrack row: a stateful host's first rule (INVALID dropped) before
# the nf-rule row's rule; the traffic is NEW (no reply), never INVALID
CT_RULES = (("-m", "conntrack", "--ctstate", "INVALID", "-j", "DROP"),
            ("-p", "udp", "--dport", "%d:%d" % DROP_PORTS, "-j", "DROP"))


def _ct_setup(exp):
    ipt = _iptables()
    for rule in CT_RULES:
        exp.veth.nsx(ipt, "-A", "INPUT", *rule)
    return {"iptables": ipt}


def _ct_entries(exp):
    """The entries of the netns's conntrack table (conntrack -L), or None."""
    r = exp.veth.nsx("cat", "/proc/net/nf_conntrack", check=False)
    return len(r.stdout.splitlines()) if r.returncode == 0 else None


def _ct_check(exp, state, sent):
    text = exp.veth.nsx(state["iptables"], "-L", "INPUT", "-v", "-x", "-n").stdout
    m = re.search(r"Chain INPUT \(policy ACCEPT (\d+) packets", text)
    hits = [int(x) for x in re.findall(r"^\s*(\d+)\s+\d+\s+DROP\b", text, re.M)]
    policy = int(m.group(1)) if m else None
    entries = _ct_entries(exp)
    ok = (policy is not None and policy >= sent and hits == [0, 0] and
          entries is not None and entries > 0)
    return {"ok": ok, "tool": state["iptables"], "policy_packets": policy,
            "rule_packets": hits, "conntrack_entries": entries, "expected": sent,
            "text": "%s -L INPUT -v -x: %s packets through the chain (policy ACCEPT), the "
            "rules matched %s, %s conntrack entries, %d sent"
            % (state["iptables"], policy, hits, entries, sent)}


def _ct_teardown(exp, state):
    for rule in CT_RULES:
        exp.veth.nsx(state["iptables"], "-D", "INPUT", *rule, check=False)


def _nft_setup(exp):
    if not shutil.which("nft"):
        raise Skip("the nft-rule row needs nft (apt-get install nftables)")
    # one rule; its counter comes before the port match, so it counts every
    # frame the rule looks at
    exp.veth.nsx("nft", "add table ip lrxk; add chain ip lrxk input { type filter hook input "
                 "priority 0; }; add rule ip lrxk input counter udp dport %d-%d drop"
                 % DROP_PORTS)
    return {}


def _nft_check(exp, state, sent):
    text = exp.veth.nsx("nft", "list", "chain", "ip", "lrxk", "input").stdout
    m = re.search(r"counter packets (\d+)", text)
    n = int(m.group(1)) if m else None
    return {"ok": n is not None and n >= sent, "rule_packets": n, "expected": sent,
            "text": "nft list chain: the rule's counter saw %s packets, %d sent" % (n, sent)}


def _map_values(prog_id, map_name):
    """The values of one array map of a loaded program, by bpftool."""
    if not shutil.which("bpftool"):
        return None, "bpftool missing (apt-get install bpftool)"
    info = json.loads(_run(["bpftool", "-j", "prog", "show", "id", str(prog_id)]).stdout)
    for mid in info.get("map_ids", []):
        m = json.loads(_run(["bpftool", "-j", "map", "show", "id", str(mid)]).stdout)
        if m.get("name") != map_name[:15]:
            continue
        dump = json.loads(_run(["bpftool", "-j", "map", "dump", "id", str(mid)]).stdout)
        vals = {}
        for e in dump:
            f = e.get("formatted", e)
            key, val = f["key"], f["value"]
            if isinstance(key, list):
                key = int.from_bytes(bytes(int(x, 16) for x in key), "little")
            if isinstance(val, list):
                val = int.from_bytes(bytes(int(x, 16) for x in val), "little")
            vals[int(key)] = int(val)
        return vals, None
    return None, "no map %s in program %d" % (map_name, prog_id)


def _tc_setup(exp):
    if not shutil.which("tc"):
        raise Skip("the tc-bpf row needs tc (iproute2)")
    exp.veth.nsx("tc", "qdisc", "add", "dev", exp.veth.b, "clsact")
    exp.veth.nsx("tc", "filter", "add", "dev", exp.veth.b, "ingress", "bpf", "direct-action",
                 "obj", exp.art["tc_port_drop"], "sec", "tc")
    text = exp.veth.nsx("tc", "filter", "show", "dev", exp.veth.b, "ingress").stdout
    m = re.search(r"\bid (\d+)", text)
    if not m:
        raise BenchError("tc filter show: no bpf program id in %r" % text[-200:])
    return {"prog_id": int(m.group(1))}


def _prog_map_check(state, sent, map_name, what):
    vals, why = _map_values(state["prog_id"], map_name)
    if vals is None:
        return {"ok": False, "text": "%s: not checked: %s" % (what, why)}
    passed, dropped = vals.get(0, 0), vals.get(1, 0)
    return {"ok": passed >= sent and dropped == 0, "passed": passed, "dropped": dropped,
            "expected": sent,
            "text": "%s: the program's map counted %d passed, %d dropped, %d sent"
            % (what, passed, dropped, sent)}


def _tc_check(exp, state, sent):
    return _prog_map_check(state, sent, "tc_port_stats", "cls_bpf (direct-action)")


def _tc_teardown(exp, state):
    exp.veth.nsx("tc", "qdisc", "del", "dev", exp.veth.b, "clsact", check=False)


def _xdpg_setup(exp):
    exp.veth.set_xdp("xdpgeneric", exp.art["xdp_port_filter"])
    pid = exp.veth.xdp_prog_id()
    if pid is None:
        raise BenchError("ip link: no generic XDP program on %s after attaching" % exp.veth.b)
    return {"prog_id": pid}


def _xdpg_check(exp, state, sent):
    return _prog_map_check(state, sent, "filter_stats", "generic XDP (empty port map)")


def _xdpg_teardown(exp, state):
    exp.veth.set_xdp("xdpgeneric")


def _rxq_setup(exp):
    """One AF_XDP socket per TX queue (lrx-kinject --queues): frame i of a
    round leaves on queue i mod N and veth_xmit puts it on the peer's RX
    queue of that index, so each NAPI gets a quarter of every round.
    (AF_PACKET cannot spread them: packet_pick_tx_queue records the sending
    CPU as the queue.)"""
    q = str(exp.veth.queues)
    return {"extra": ("--method", "xdp", "--queues", q), "frames0": exp.veth.queue_frames()}


def _rxq_check(exp, state, sent):
    per = [b - a for a, b in zip(state["frames0"], exp.veth.queue_frames())]
    ok = sum(per) >= sent and min(per) * exp.veth.queues * 2 >= sum(per)
    return {"ok": ok, "per_queue": per, "expected": sent, "kthreads": len(exp.veth.napi_pids),
            "text": "frames per RX queue %s (%d sent), %d NAPI kthreads on CPU %d"
            % (per, sent, len(exp.veth.napi_pids), exp.veth.cpu)}


# the rows of Cree's 2018 table on the kernel (udp traffic); the keys are the --variant
# names; "queues": the veth's RX queues (1 unless said)
VARIANTS = {
    "baseline": {"what": "nothing attached"},
    "nf-rule": {"what": "one iptables rule in INPUT: UDP to ports %d-%d dropped (the traffic "
                "never matches)" % DROP_PORTS,
                "setup": _nf_setup, "check": _nf_check},
    "conntrack": {"what": "connection tracking on: -m conntrack --ctstate INVALID -j DROP, "
                  "then the nf-rule row's rule, in INPUT (every packet looked up in the "
                  "conntrack table; none INVALID, none matching)",
                  "setup": _ct_setup, "check": _ct_check, "teardown": _ct_teardown},
    "nft-rule": {"what": "the same rule in nftables (a base chain on the input hook)",
                 "setup": _nft_setup, "check": _nft_check},
    "tc-bpf": {"what": "a cls_bpf direct-action filter on clsact ingress, the same port range "
               "(tc_port_drop.bpf.o; cls_bpf since this kernel has no flower and no "
               "act_gact)", "setup": _tc_setup, "check": _tc_check, "teardown": _tc_teardown},
    "xdp-generic-map": {"what": "generic XDP, map-based UDP port drop with an empty map "
                        "(xdp_port_filter.bpf.o), JIT (this kernel has no interpreter: "
                        "CONFIG_BPF_JIT_ALWAYS_ON)",
                        "setup": _xdpg_setup, "check": _xdpg_check,
                        "teardown": _xdpg_teardown},
    "rxq4": {"what": "4 RX queues (veth numrxqueues 4), a quarter of each round on each "
             "(AF_XDP injector, one socket per queue), the 4 NAPI kthreads on one CPU (the "
             "seed's baseline: 4 queues bound to one CPU)",
             "queues": 4, "setup": _rxq_setup, "check": _rxq_check},
}


def measure_row_sessions(art, opts, log, variants, exp=None):
    """The rows: those on one RX queue in `exp` (or a session of their own),
    each other queue count in a session of its own. Returns (checks,
    windows)."""
    checks, windows = {}, []
    by_q = {}
    for v in variants:
        by_q.setdefault(VARIANTS[v].get("queues", 1), []).append(v)
    for q, vs in sorted(by_q.items()):
        if q == 1 and exp is not None:
            for v in vs:
                checks[v] = exp.row(v)
            continue
        with kernel_session(art, opts, log, queues=q) as sess:
            for v in vs:
                checks[v] = sess.row(v)
            windows += sess.windows
    return checks, windows


@contextlib.contextmanager
def kernel_session(art, opts, log, queues=1):
    """The veth, the timer and the sysctl, restored on exit, on an error,
    on Ctrl-C, SIGTERM and SIGHUP (signals are blocked while restoring)."""
    gro = GroNormalBatch()
    veth = Veth("%d" % (os.getpid() % 100000), queues=queues)
    exp = Experiment(art, veth, gro, opts, log if isinstance(log, StepLog) else StepLog(log))

    def on_signal(sig, frame):
        raise KeyboardInterrupt

    # SIGINT too: a shell that starts us in the background ignores it
    old = {s: signal.signal(s, on_signal) for s in STOP_SIGNALS}
    try:
        veth.setup(opts.cpu)
        exp.start_timer()
        yield exp
    finally:
        restore_all(gro, veth, old, exp)


def restore_all(gro, veth, handlers, exp=None):
    """The kernel experiment's clean-up: the timer stopped, gro_normal_batch
    restored, the veth and namespace deleted, the signal handlers put back.
    Signals wait until it is done (listrx.signals_held): a second Ctrl-C
    arrives once the namespace and the sysctl are back, as KeyboardInterrupt
    from the handlers put back."""
    with signals_held(restore=handlers):
        try:
            if exp is not None:
                exp.close()
            gro.restore()
        finally:
            veth.close()


class RowOptions:
    """The options measure_rows() runs with (the CLI's defaults)."""
    packets = 12800
    row_pairs = 24
    cal_every = 4
    injector = "mmsg"
    timeout = 120
    cpu = allowed_cpus()[-1]


def measure_rows(variants, build=None, pairs=None, packets=None, cpu=None, log=None):
    """The kernel's gain (gro_normal_batch 1 vs 64) for rows of Cree's 2018
    table, measured as the primary method (udp traffic; one RX queue unless
    the variant says). Root only; raises Skip (a BenchError) when it cannot
    run here, BenchError when a step fails.

    variants: names from VARIANTS ("baseline", "nf-rule", "nft-rule",
    "tc-bpf", "xdp-generic-map", "rxq4"). build: the meson build directory (default:
    the one of the listrx binary find_binary() finds). Returns {variant:
    {"gain", "ci": [lo, hi], "resolved", "pairs", "stack_ns": {"1", "64"},
    "check": {"ok", "text", ...}, "what", "load", ...}}: "check" says whether
    the rule/filter/program was in the path (its counters saw every frame)."""
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise BenchError("variant %s: want %s" % (",".join(unknown), ",".join(VARIANTS)))
    check_preconditions()
    art = find_artifacts(build or build_root(find_binary(None)))
    opts = RowOptions()
    opts.row_pairs = pairs or opts.row_pairs
    opts.packets = packets or opts.packets
    opts.cpu = opts.cpu if cpu is None else cpu
    checks, windows = measure_row_sessions(art, opts, StepLog(log), variants)
    # udp traffic: no list episodes, so no per-probe correction is needed
    return row_figures(windows, None, checks, {v: VARIANTS[v]["what"] for v in variants})


def listrx_interleaved_runs(args, config, kind, log, out_dir, lx):
    """listrx with the calibrated config: packet, burst 64 and the A/A
    control interleaved in one process, --listrx-paired-reps runs (the
    engines listed rotated); then one --stats-level cycles run per engine
    for the zoom-in."""
    t = TRAFFIC[kind]
    labels, _ = interleave.interleave_arg(["packet", "burst"])
    runs = []
    for rep in range(args.listrx_paired_reps):
        order = labels[rep % len(labels):] + labels[:rep % len(labels)]
        path = os.path.join(out_dir, "listrx-%s-interleave-%d.json" % (kind, rep))
        cmd = ([lx.binary] + lx.eal_args(t["synth"]) +
               ["--", "--config", config, "--engine", "packet", "--burst", "64",
                "--stats-level", "counters", "--stats-period", "0", "--json", path,
                "--duration", str(args.listrx_paired_duration),
                "--interleave", ",".join(grid.engine_arg(e) for e in order),
                "--window-polls", str(interleave.window_polls(64)),
                "--window-us", str(interleave.WINDOW_US)])
        summary, err, info = lx.run(cmd, path, timeout=120 + args.listrx_paired_duration)
        if err:
            raise BenchError("listrx interleaved: %s" % err)
        runs.append({"rep": rep, "engine": "interleave", "level": "interleave",
                     "traffic": kind, "summary": summary, "command": info["command"],
                     "shared_cpu_pct": shared_cpu_pct(info["output"])})
        log.step("listrx interleaved run %d" % rep, kind="listrx run")
    for engine in ("packet", "burst"):
        path = os.path.join(out_dir, "listrx-%s-%s-zoom.json" % (kind, engine))
        cmd = ([lx.binary] + lx.eal_args(t["synth"]) +
               ["--", "--config", config, "--engine", engine, "--burst", "64",
                "--stats-level", "cycles", "--stats-period", "0", "--json", path,
                "--duration", str(args.listrx_duration)])
        summary, err, info = lx.run(cmd, path, timeout=120)
        if err:
            raise BenchError("listrx %s: %s" % (engine, err))
        runs.append({"rep": 0, "engine": engine, "level": "cycles", "traffic": kind,
                     "summary": summary, "command": info["command"],
                     "shared_cpu_pct": shared_cpu_pct(info["output"])})
        log.step("listrx zoom %s" % engine, kind="listrx run")
    return runs


def listrx_runs(args, config, kind, log, out_dir):
    """listrx with the calibrated config: packet vs burst 64 (alternating),
    same traffic; then one --stats-level cycles run each for the zoom-in.
    With --listrx-method interleave: listrx_interleaved_runs."""
    lx = Listrx(args.listrx_binary, lcores=args.lcores)
    if getattr(args, "listrx_method", "processes") == "interleave":
        return listrx_interleaved_runs(args, config, kind, log, out_dir, lx)
    t = TRAFFIC[kind]
    runs = []
    for rep in range(args.reps):
        for engine in (("packet", "burst") if rep % 2 == 0 else ("burst", "packet")):
            for level in ("counters",) + (("cycles",) if rep == 0 else ()):
                path = os.path.join(out_dir, "listrx-%s-%s-%d-%s.json" % (kind, engine, rep,
                                                                          level))
                # no --footprint: it would override the stages' own footprint_kb
                cmd = ([lx.binary] + lx.eal_args(t["synth"]) +
                       ["--", "--config", config, "--engine", engine, "--burst", "64",
                        "--stats-level", level, "--stats-period", "0", "--json", path,
                        "--duration", str(args.listrx_duration)])
                summary, err, info = lx.run(cmd, path, timeout=120)
                if err:
                    raise BenchError("listrx %s: %s" % (engine, err))
                runs.append({"rep": rep, "engine": engine, "level": level, "traffic": kind,
                             "summary": summary, "command": info["command"],
                             "shared_cpu_pct": shared_cpu_pct(info["output"])})
                log.step("listrx rep %d %s" % (rep, engine), kind="listrx run")
                if level == "counters":
                    log("listrx rep %d %-6s %6.1f ns/pkt (busy)%s" % (
                        rep, engine, busy_ns(summary) or float("nan"),
                        "" if runs[-1]["shared_cpu_pct"] is None else " SHARED CPU"))
    return runs


def busy_ns(summary):
    bcp, tsc = summary.get("busy_cycles_per_packet"), summary.get("tsc_hz")
    if bcp is None or not tsc:
        return summary.get("ns_per_packet")
    return bcp / tsc * 1e9


def _footprints(args):
    """kallsyms (root), else the recorded table"""
    try:
        with open(args.kallsyms) as f:
            syms = parse_kallsyms(f.read())
        foot, source = footprints_from_kallsyms(syms), args.kallsyms
    except (OSError, ValueError) as e:
        foot, source = fallback_footprints(), "recorded table (%s)" % e
    if not foot or not any(v["bytes"] for v in foot.values()):
        foot, source = fallback_footprints(), "recorded table (no sizes in %s)" % args.kallsyms
    return foot, source


def _listrx_build(args, build):
    mitig = retpolines()
    retpo_bin = args.listrx_retpoline or os.path.join(os.path.dirname(build), "build-retpo",
                                                       "dataplane", "listrx")
    out = {"mitigations": mitig, "binary": args.listrx_binary, "flavour": "plain"}
    if mitig["retpoline"]:
        if os.access(retpo_bin, os.X_OK):
            args.listrx_binary = os.path.abspath(retpo_bin)
            out.update(binary=args.listrx_binary, flavour="retpoline")
        else:
            out["note"] = ("the kernel uses retpolines but %s is not built (meson setup "
                           "build-retpo -Dretpoline=true && ninja -C build-retpo): the "
                           "prediction below is the plain build's" % retpo_bin)
    return out, mitig


def planned_progress(args):
    """The progress bar of a run: its windows (a warm-up window per batch
    before each series of pairs) and its listrx runs."""
    p = Progress()
    series = [(1, 2 * args.overhead_pairs)] + [(len(args.traffic), args.pairs)]
    series += [(len(args.perf_traffic) if args.perf else 0, args.perf_pairs),
               (len(args.variant), args.row_pairs)]
    windows = sum(n * (2 + 2 * pairs) for n, pairs in series)
    windows += 8 * args.subtraction_pairs if args.subtraction else 0
    p.plan("window", windows, estimate_s=0.1)
    if getattr(args, "listrx_method", "processes") == "interleave":
        p.plan("listrx run", args.listrx_paired_reps + 2,
               estimate_s=args.listrx_paired_duration + 0.5)
    else:
        p.plan("listrx run", 2 * args.reps + 2, estimate_s=args.listrx_duration + 0.5)
    return p


def run_kernel(args, argv):
    check_preconditions()
    args.listrx_binary = find_binary(args.listrx)
    build = build_root(args.listrx_binary)
    art = find_artifacts(build)
    if args.perf and not shutil.which("perf"):
        raise Skip("perf is not installed (--no-perf runs without the second method)")
    listrx_build, mitig = _listrx_build(args, build)
    out = args.out
    os.makedirs(out, exist_ok=True)
    log = StepLog(echo=(lambda m: print(m, flush=True)) if args.verbose else None,
                  progress=None if args.quiet or args.verbose else planned_progress(args))
    log.phase("window")

    foot, foot_source = _footprints(args)
    stages_kb = stage_footprints(foot)
    config = os.path.join(out, "kernel-calibrated.ini")
    with open(config, "w") as f:
        f.write(calibrated_config(stages_kb, foot_source, args.listrx_traffic, mitig))

    t0 = time.time()
    load0 = os.getloadavg()
    sampled = None
    with kernel_session(art, args, log) as exp:
        exp.overhead()
        for kind in args.traffic:
            exp.primary(kind)
        if args.perf:
            sampled = exp.perf_phase(args.perf_traffic, out)
        one_queue = [v for v in args.variant if VARIANTS[v].get("queues", 1) == 1]
        checks, _ = measure_row_sessions(art, args, log, one_queue, exp)
        if args.subtraction:
            exp.subtraction()
        windows = exp.windows
        gro_saved = exp.gro.saved
    more = [v for v in args.variant if VARIANTS[v].get("queues", 1) != 1]
    more_checks, more_windows = measure_row_sessions(art, args, log, more)
    checks.update(more_checks)
    windows += more_windows
    kernel_s = time.time() - t0
    log.phase("listrx run")
    lruns = listrx_runs(args, config, args.listrx_traffic, log, out)
    log.close()
    result = summarize(windows, lruns, args.listrx_traffic, foot, foot_source, stages_kb,
                       listrx_build, perf_period_ns=args.perf_period if args.perf else None,
                       sampled_bytes=sampled, row_checks=checks,
                       row_what={v: VARIANTS[v]["what"] for v in args.variant})
    result["provenance"] = provenance([Listrx(args.listrx_binary, lcores=args.lcores)])
    result["run"] = {"argv": argv, "kernel_seconds": kernel_s,
                     "total_seconds": time.time() - t0, "gro_normal_batch_restored": gro_saved,
                     "cpu": args.cpu, "packets_per_window": args.packets, "pairs": args.pairs,
                     "overhead_pairs": args.overhead_pairs, "perf_pairs": args.perf_pairs,
                     "row_pairs": args.row_pairs, "cal_every": args.cal_every,
                     "listrx_reps": args.reps, "kernel": os.uname().release,
                     "load_average": {"start": load0, "end": os.getloadavg()}}
    for w in windows:
        # per-window function counts are in kernel.json's top functions
        (w.get("perf") or {}).pop("functions", None)
    with open(os.path.join(out, "kernel.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    with open(os.path.join(out, "kernel-runs.json"), "w") as f:
        json.dump({"windows": windows, "listrx": lruns,
                   "footprint": {"groups": foot, "source": foot_source, "stage_kb": stages_kb},
                   "listrx_build": listrx_build, "listrx_traffic": args.listrx_traffic,
                   "perf_period_ns": args.perf_period if args.perf else None,
                   "row_checks": checks, "log": log.lines}, f, indent=1)
    md = write_report(result, os.path.join(out, "kernel.md"))
    print("wrote %s, %s and %s" % (os.path.join(out, "kernel.json"), md, config))
    answer = Doc()
    add_answer(answer, result)
    print("\n" + answer.text(), end="", flush=True)
    k = result["kernel"]
    if k.get("gain_unavailable"):
        print("listrx-bench kernel: no kernel gain (%s): %s" % (
            args.listrx_traffic, k["gain_unavailable"]), file=sys.stderr)
    elif result["agreement"] is None:
        print("listrx-bench kernel: no agreement figure: %s" % result["agreement_unavailable"],
              file=sys.stderr)
    bad = [v for v, c in checks.items() if not c.get("ok")]
    if bad:
        print("listrx-bench kernel: row(s) %s: the rule/filter/program did not see every "
              "frame (kernel.md)" % ",".join(bad), file=sys.stderr)
        return 1
    return 0


def _kinds(s):
    return [x for x in s.split(",") if x]


def add_parser(sub):
    """The `kernel` subcommand (registered by cli.py)."""
    kp = sub.add_parser("kernel", help="the running kernel's listification gain "
                        "(gro_normal_batch 1 vs 64 on a veth, root) vs listrx's prediction")
    add_common(kp)
    add_out(kp)
    kp.add_argument("--traffic", type=_kinds, default=["udp", "udp-sock", "tcp", "tcp-push"],
                    help="traffic kinds: %s (default: all)" % ", ".join(
                        "%s (%s)" % (k, v["what"]) for k, v in TRAFFIC.items()))
    kp.add_argument("--pairs", type=int, default=40,
                    help="pairs of windows (batch 1, batch 64) per traffic kind "
                    "(default: %(default)s)")
    kp.add_argument("--packets", type=int, default=12800,
                    help="frames per window, a multiple of 256 (default: %(default)s)")
    kp.add_argument("--cal-every", type=int, default=4,
                    help="every Nth pair measures the probes' window cost instead (0: never; "
                    "then no correction) (default: %(default)s)")
    kp.add_argument("--overhead-pairs", type=int, default=12,
                    help="pairs of windows with the probes on and off (default: %(default)s)")
    kp.add_argument("--perf", dest="perf", action="store_true", default=True)
    kp.add_argument("--no-perf", dest="perf", action="store_false",
                    help="skip the second method (perf cpu-clock callchains)")
    kp.add_argument("--perf-traffic", type=_kinds, default=["udp", "tcp-push"],
                    help="traffic kinds of the perf method (default: udp,tcp-push)")
    kp.add_argument("--perf-pairs", type=int, default=24,
                    help="pairs of windows under perf per kind (default: %(default)s)")
    kp.add_argument("--perf-period", type=int, default=100000,
                    help="cpu-clock sampling period in ns (default: %(default)s)")
    kp.add_argument("--keep-perf", action="store_true", help="keep perf-kthread.data")
    kp.add_argument("--variant", type=_kinds, default=[],
                    help="rows of Cree's 2018 table to measure on the kernel: %s "
                    "(default: none)" % ", ".join(VARIANTS))
    kp.add_argument("--row-pairs", type=int, default=24,
                    help="pairs of windows per row (default: %(default)s)")
    kp.add_argument("--subtraction", action="store_true",
                    help="also measure the first method (native XDP_PASS - XDP_DROP) with "
                    "both clocks and both injector waits")
    kp.add_argument("--subtraction-pairs", type=int, default=4,
                    help="pairs of the subtraction measurement (default: %(default)s)")
    kp.add_argument("--injector", choices=("mmsg", "txring", "xdp"), default="mmsg",
                    help="injector: AF_PACKET sendmmsg, PACKET_TX_RING, AF_XDP copy mode "
                    "(default: %(default)s)")
    kp.add_argument("--cpu", type=convert(allowed_cpu), default=allowed_cpus()[-1],
                    help="CPU of the sender and the NAPI kthread (default: the last this "
                    "process may use)")
    kp.add_argument("--kallsyms", default="/proc/kallsyms",
                    help="symbol table for the footprints: /proc/kallsyms or a System.map "
                    "(default: %(default)s)")
    kp.add_argument("--listrx-retpoline", default=None,
                    help="listrx retpoline build (default: build-retpo/ next to the build)")
    kp.add_argument("--listrx-traffic", default="udp",
                    help="traffic kind of the listrx comparison (default: %(default)s)")
    kp.add_argument("--listrx-duration", type=convert(positive_float), default=1.0,
                    help="seconds per listrx run (default: %(default)s)")
    kp.add_argument("--reps", type=int, default=7,
                    help="--listrx-method processes: alternating listrx repetitions "
                    "(default: %(default)s)")
    kp.add_argument("--listrx-method", choices=("interleave", "processes"),
                    default="interleave",
                    help="how listrx's gain is timed: interleave (packet, burst 64 and the A/A "
                    "control polled in turn in one process, adjacent windows paired, "
                    "disturbed windows left out) or processes (alternating processes, --reps) "
                    "(default: %(default)s)")
    kp.add_argument("--listrx-paired-duration", type=float, default=interleave.DURATION,
                    help="interleave: seconds per run (default: %(default)s)")
    kp.add_argument("--listrx-paired-reps", type=int, default=interleave.RUNS,
                    help="interleave: runs, a pair each, the engines listed rotated; 6 give a "
                    "95 %% interval (default: %(default)s)")
    kp.add_argument("-v", "--verbose", action="store_true",
                    help="print every window's and every listrx run's line as it is measured "
                    "(kernel-runs.json keeps them anyway); without it a progress line on "
                    "stderr, and stdout ends with the answer")
    kp.set_defaults(func=cmd_kernel)
    return kp


def check_args(args):
    """Bad arguments: exit 2 with what is valid."""
    for kind in args.traffic + args.perf_traffic + [args.listrx_traffic]:
        if kind not in TRAFFIC:
            raise BenchError("traffic %r: want %s" % (kind, ",".join(TRAFFIC)))
    if TRAFFIC[args.listrx_traffic]["synth"] is None:
        raise BenchError("--listrx-traffic %s: listrx has no such traffic; want %s" % (
            args.listrx_traffic, ",".join(k for k, v in TRAFFIC.items() if v["synth"])))
    if args.listrx_traffic not in args.traffic:
        raise BenchError("--listrx-traffic %s: also give it in --traffic (%s)" % (
            args.listrx_traffic, ",".join(args.traffic)))
    for v in args.variant:
        if v not in VARIANTS:
            raise BenchError("--variant %s: want %s" % (v, ",".join(VARIANTS)))
    if args.packets < 256 or args.packets % 256:
        raise BenchError("--packets %d: want a multiple of 256 (whole rounds of the veth "
                         "ring), at least 256" % args.packets)
    for name in ("pairs", "reps", "listrx_paired_reps"):
        if getattr(args, name) < 1:
            raise BenchError("--%s %d: want at least 1" % (name.replace("_", "-"),
                                                          getattr(args, name)))
    if not args.listrx_paired_duration > 0:
        raise BenchError("--listrx-paired-duration %s: want seconds > 0"
                         % args.listrx_paired_duration)
    for name in ("overhead_pairs", "perf_pairs", "row_pairs", "subtraction_pairs", "cal_every"):
        if getattr(args, name) < 0:
            raise BenchError("--%s %d: want 0 or more" % (name.replace("_", "-"),
                                                         getattr(args, name)))
    if args.perf and args.perf_pairs < 1:
        raise BenchError("--perf-pairs 0: want at least 1 (or --no-perf)")
    if args.perf_period < 10000:
        raise BenchError("--perf-period %d: want at least 10000 ns" % args.perf_period)


def cmd_kernel(args, argv):
    """Exit 2 when the experiment cannot run here (Skip, bad arguments),
    1 when it started and a step failed (an injector or listrx run that
    died, a namespace that would not come up) or a row's check failed."""
    check_args(args)
    try:
        return run_kernel(args, argv)
    except Skip:
        raise
    except BenchError as e:
        print("listrx-bench kernel: %s" % e, file=sys.stderr)
        return 1
