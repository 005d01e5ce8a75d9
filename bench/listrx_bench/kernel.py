"""listrx-bench kernel: the running kernel's own listification gain
(net.core.gro_normal_batch 1 vs 64) on a veth pair, and listrx's prediction
for the same traffic with a kernel-calibrated configuration.

Method (docs/kernel.md): the receiving veth sits in a fresh network
namespace with a native XDP program and GRO on, and runs threaded NAPI
with its kthread pinned to the sender's CPU. lrx-kinject (bench/kernel/)
sends rounds of frames at SCHED_FIFO, so each round is queued whole before
the kthread polls it in full NAPI budgets, and reads the kthread's
scheduler CPU clock. RX-stack ns/packet = kthread ns/packet with XDP_PASS
minus with XDP_DROP (same frames, alternating), per gro_normal_batch."""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

from .kernel_model import (BATCHES, TRAFFIC, calibrated_config,
                           fallback_footprints, footprints_from_kallsyms, layer_of,
                           parse_kallsyms, parse_perf_report, stage_footprints, summarize,
                           write_report)
from .listrx import (STOP_SIGNALS, BenchError, allowed_cpus, find_binary, signals_held,
                     stop_process)
from .options import (add_common, add_out, allowed_cpu, choices_list, convert, positive_float,
                      positive_int)

SRC_IP, DST_IP = "198.18.0.1", "198.18.0.42"


class Skip(BenchError):
    """The experiment cannot run here (exit 2 with the reason)."""


def _run(cmd, check=True, timeout=30, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if check and proc.returncode != 0:
        raise BenchError("%s: exit %d: %s" % (shlex.join(cmd), proc.returncode,
                                               (proc.stderr or proc.stdout).strip()[-300:]))
    return proc


def build_root(listrx_binary):
    """The meson build directory of a listrx binary (build/dataplane/listrx)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(listrx_binary)))


def find_artifacts(build):
    inj = os.path.join(build, "bench", "kernel", "lrx-kinject")
    progs = {v: os.path.join(build, "stages", "xdp", "xdp_%s.bpf.o" % v) for v in ("drop", "pass")}
    missing = [p for p in [inj] + list(progs.values()) if not os.path.isfile(p)]
    if missing:
        raise Skip("not built: %s (ninja -C %s; the XDP objects need clang)"
                   % (", ".join(missing), build))
    return inj, progs


def retpolines():
    """The running kernel's indirect-branch and return mitigations, as the
    vulnerabilities files say."""
    out = {}
    for name in ("spectre_v2", "spec_rstack_overflow", "retbleed"):
        try:
            with open("/sys/devices/system/cpu/vulnerabilities/" + name) as f:
                out[name] = f.read().strip()
        except OSError:
            out[name] = None
    v2 = out.get("spectre_v2") or ""
    ret = (out.get("spec_rstack_overflow") or "") + " " + (out.get("retbleed") or "")
    out["retpoline"] = "Retpoline" in v2
    out["return_thunk"] = any(w in ret for w in ("Safe RET", "untrained return thunk",
                                                 "IBPB on VMEXIT", "Mitigation"))
    return out


class Veth:
    """veth pair, receiving end in a fresh netns with XDP, GRO, threaded
    NAPI; everything undone by close() (also after errors and signals)."""

    def __init__(self, tag):
        self.ns = "lrxk%s" % tag
        self.a = "lrxka%s" % tag
        self.b = "lrxkb%s" % tag
        self.created_ns = self.created_link = False
        self.mac = None
        self.napi_pid = None
        self.socket_proc = None

    def nsx(self, *cmd, **kw):
        return _run(["ip", "netns", "exec", self.ns] + list(cmd), **kw)

    def setup(self, cpu):
        if _run(["ip", "netns", "add", self.ns], check=False).returncode != 0:
            raise Skip("cannot create a network namespace (ip netns add %s)" % self.ns)
        self.created_ns = True
        _run(["ip", "link", "add", self.a, "type", "veth", "peer", "name", self.b])
        self.created_link = True
        _run(["ip", "link", "set", self.b, "netns", self.ns])
        _run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % self.a], check=False)
        _run(["ip", "link", "set", self.a, "up"])
        # the frames' destination is local; nothing the stack answers (ICMP
        # port unreachable, TCP RST) leaves: a blackhole route to the sender
        # makes the reply's route lookup fail (the lookup is still paid)
        self.nsx("sh", "-c", "ip link set lo up && "
                 "sysctl -qw net.ipv6.conf.%(b)s.disable_ipv6=1 "
                 "net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 && "
                 "ip link set %(b)s up && ip addr add %(dst)s/24 dev %(b)s && "
                 "ip route add blackhole %(src)s/32 && ethtool -K %(b)s gro on"
                 % {"b": self.b, "dst": DST_IP, "src": SRC_IP})
        self.mac = self.nsx("cat", "/sys/class/net/%s/address" % self.b).stdout.strip()
        self.cpu = cpu

    def attach(self, prog):
        _run(["ip", "-force", "-n", self.ns, "link", "set", "dev", self.b, "xdpdrv",
              "obj", prog, "sec", "xdp"])
        if self.napi_pid is None:
            # veth creates its NAPI when XDP is attached; threaded makes it a
            # kthread napi/<dev>-<id> we can pin and clock
            self.nsx("sh", "-c", "echo 1 > /sys/class/net/%s/threaded" % self.b)
        pid = self.find_napi()
        if pid is None:
            raise Skip("no napi/%s-* kthread after 'threaded' (threaded NAPI unavailable)"
                       % self.b)
        if pid != self.napi_pid:
            os.sched_setaffinity(pid, {self.cpu})
            self.napi_pid = pid

    def find_napi(self):
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/comm" % d) as f:
                    if f.read().strip().startswith("napi/%s-" % self.b):
                        return int(d)
            except OSError:
                continue
        return None

    def stats(self):
        text = self.nsx("ethtool", "-S", self.b, check=False).stdout
        return {k: int(v) for k, v in re.findall(r"^\s*(\S+):\s*(\d+)\s*$", text, re.M)}

    def nstat(self):
        text = self.nsx("nstat", "-az", check=False).stdout
        return {k: int(v) for k, v in re.findall(r"^(\w+)\s+(\d+)", text, re.M)}

    def open_udp_socket(self, port, rcvbuf=2048):
        """A bound UDP socket whose tiny receive queue is full after a few
        datagrams: the rest drop in __udp_enqueue_schedule_skb (RcvbufErrors)."""
        self.close_socket()
        code = ("import socket,sys,time\n"
                "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                "s.setsockopt(socket.SOL_SOCKET,socket.SO_RCVBUF,%d)\n"
                "s.bind((%r,%d))\nprint('bound',flush=True)\n"
                "sys.stdin.read()\n" % (rcvbuf, DST_IP, port))
        self.socket_proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, sys.executable, "-c", code],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.socket_proc.stdout.readline().strip() != "bound":
            raise BenchError("cannot bind a UDP socket to %s:%d in %s" % (DST_IP, port, self.ns))

    def close_socket(self):
        if self.socket_proc is not None:
            try:
                self.socket_proc.stdin.close()
                self.socket_proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                self.socket_proc.kill()
                self.socket_proc.wait()
            self.socket_proc = None

    def close(self):
        self.close_socket()
        if self.created_link:
            _run(["ip", "link", "del", self.a], check=False)
            self.created_link = False
        if self.created_ns:
            _run(["ip", "netns", "del", self.ns], check=False)
            self.created_ns = False


class GroNormalBatch:
    """net.core.gro_normal_batch (one global value): set, and restored."""
    PATH = "/proc/sys/net/core/gro_normal_batch"

    def __init__(self):
        with open(self.PATH) as f:
            self.saved = int(f.read())

    def set(self, value):
        with open(self.PATH, "w") as f:
            f.write(str(value))

    def restore(self):
        self.set(self.saved)


def check_preconditions():
    if os.geteuid() != 0:
        raise Skip("the kernel experiment needs root (network namespaces, XDP, sysctl, "
                   "perf on a kernel thread)")
    for tool in ("ip", "ethtool", "nstat"):
        if not shutil.which(tool):
            raise Skip("the kernel experiment needs the %s tool" % tool)
    if not os.path.exists(GroNormalBatch.PATH):
        raise Skip("this kernel has no net.core.gro_normal_batch (Linux < 5.4)")


def injector_cmd(inj, veth, kind, packets, method="mmsg", napi=True, extra=()):
    t = TRAFFIC[kind]
    cmd = [inj, "--dev", veth.a, "--dst-mac", veth.mac, "--kind", t["l4"],
           "--src-ip", SRC_IP, "--dst-ip", DST_IP, "--dport", str(t["dport"]),
           "--packets", str(packets), "--cpu", str(veth.cpu), "--method", method,
           "--napi-pid", str(veth.napi_pid if napi else 0)]
    return cmd + list(extra)


def run_injector(cmd, timeout):
    proc = _run(cmd, timeout=timeout)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def measure_kernel(args, veth, inj, progs, gro, log):
    """Alternating reps: for each rep, each traffic kind, each batch (order
    rotated per rep), XDP_DROP and XDP_PASS (order swapped per rep)."""
    runs = []
    for rep in range(args.reps):
        for kind in args.traffic:
            if TRAFFIC[kind].get("socket"):
                veth.open_udp_socket(TRAFFIC[kind]["dport"])
            else:
                veth.close_socket()
            packets = args.packets if TRAFFIC[kind]["l4"] == "udp" else args.tcp_packets
            order = BATCHES[rep % 3:] + BATCHES[:rep % 3]
            for batch in order:
                gro.set(batch)
                verdicts = ("drop", "pass") if rep % 2 == 0 else ("pass", "drop")
                for verdict in verdicts:
                    veth.attach(progs[verdict])
                    s0, n0 = veth.stats(), veth.nstat()
                    r = run_injector(injector_cmd(inj, veth, kind, packets,
                                                  method=args.injector), args.timeout)
                    s1, n1 = veth.stats(), veth.nstat()
                    r.update(rep=rep, traffic=kind, batch=batch, verdict=verdict,
                             xdp_packets=s1.get("rx_queue_0_xdp_packets", 0)
                             - s0.get("rx_queue_0_xdp_packets", 0),
                             xdp_drops=s1.get("rx_queue_0_xdp_drops", 0)
                             - s0.get("rx_queue_0_xdp_drops", 0),
                             nstat={k: n1[k] - n0.get(k, 0) for k in n1
                                    if n1[k] != n0.get(k, 0)})
                    runs.append(r)
                    log("rep %d %-8s batch %2d %-4s %6.1f ns/pkt (kthread)" % (
                        rep, kind, batch, verdict,
                        r["napi_cpu_ns"] / max(1, r["xdp_packets"])))
    veth.close_socket()
    return runs


def measure_injectors(args, veth, inj, progs, log):
    """Send cost of each injector (sender CPU ns per frame, XDP_DROP so the
    receive side is cheapest), alternating."""
    veth.attach(progs["drop"])
    runs = []
    methods = ("mmsg", "txring", "xdp")
    for rep in range(args.injector_reps):
        for method in methods[rep % 3:] + methods[:rep % 3]:
            try:
                r = run_injector(injector_cmd(inj, veth, "udp", args.packets // 2,
                                              method=method), args.timeout)
            except BenchError as e:
                # AF_XDP needs CONFIG_XDP_SOCKETS; say so and go on
                log("injector %s unavailable: %s" % (method, e))
                continue
            r["rep"] = rep
            runs.append(r)
            log("injector %-6s %6.1f ns/frame (sender CPU)" % (
                method, r["send_cpu_ns"] / max(1, r["sent"])))
    return runs


def perf_profile(args, veth, inj, progs, gro, out_dir, log):
    """perf record -e cpu-clock on the NAPI kthread, XDP_PASS, per batch."""
    if not shutil.which("perf"):
        return {"unavailable": "perf not installed"}
    veth.attach(progs["pass"])
    prof = {}
    for kind in args.perf_traffic:
        if TRAFFIC[kind].get("socket"):
            veth.open_udp_socket(TRAFFIC[kind]["dport"])
        else:
            veth.close_socket()
        for batch in (1, 64):
            gro.set(batch)
            data = os.path.join(out_dir, "perf-%s-%d.data" % (kind, batch))
            perf = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F",
                                     str(args.perf_freq), "-t", str(veth.napi_pid), "-o", data],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            # perf reads the symbol tables before it counts: on a loaded
            # machine that takes most of a second
            time.sleep(1.5)
            packets = args.perf_packets if TRAFFIC[kind]["l4"] == "udp" else args.tcp_packets
            try:
                r = run_injector(injector_cmd(inj, veth, kind, packets), args.timeout)
            finally:
                stop_process(perf)
            rep = _run(["perf", "report", "-i", data, "--stdio", "--sort", "sym", "-q",
                        "--percent-limit", "0"], check=False, timeout=120)
            script = _run(["perf", "script", "-i", data, "-F", "ip,sym"], check=False,
                          timeout=120)
            samples = parse_perf_report(rep.stdout)
            if not samples:
                log("perf %s batch %d: no samples: %s %s" % (
                    kind, batch, perf.stderr.read().strip()[-300:], rep.stderr.strip()[-300:]))
            prof["%s/%d" % (kind, batch)] = {
                "napi_ns_per_packet": r["napi_cpu_ns"] / max(1, r["sent"]),
                "functions": samples, "sampled_lines": sampled_lines(script.stdout)}
            if not args.keep_perf:
                os.unlink(data)
            log("perf %s batch %d: %d functions" % (kind, batch, len(samples)))
        veth.close_socket()
    return prof


def sampled_lines(script_text):
    """Distinct 64-byte code lines hit by samples, per layer: a lower bound
    of the executed footprint (what a sampled run proves was executed)."""
    lines = {}
    for m in re.finditer(r"^\s*([0-9a-f]+)\s+(\S+)", script_text, re.M):
        layer = layer_of(m.group(2))
        lines.setdefault(layer, set()).add(int(m.group(1), 16) >> 6)
    return {k: len(v) * 64 for k, v in lines.items()}


def listrx_runs(args, config, kind, log, out_dir):
    """listrx with the calibrated config: packet vs burst 64 (alternating),
    same traffic; then one --stats-level cycles run each for the zoom-in."""
    from .listrx import Listrx
    lx = Listrx(args.listrx_binary, lcores=args.lcores)
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
                             "summary": summary, "command": info["command"]})
                if level == "counters":
                    log("listrx rep %d %-6s %6.1f ns/pkt (busy)" % (
                        rep, engine, busy_ns(summary) or float("nan")))
    return runs


def busy_ns(summary):
    bcp, tsc = summary.get("busy_cycles_per_packet"), summary.get("tsc_hz")
    if bcp is None or not tsc:
        return summary.get("ns_per_packet")
    return bcp / tsc * 1e9


def run_kernel(args, argv):
    check_preconditions()
    args.listrx_binary = find_binary(args.listrx)
    build = build_root(args.listrx_binary)
    inj, progs = find_artifacts(build)
    for kind in args.traffic + args.perf_traffic + [args.listrx_traffic]:
        if kind not in TRAFFIC:
            raise BenchError("traffic %r: want %s" % (kind, ",".join(TRAFFIC)))
    mitig = retpolines()
    retpo_bin = args.listrx_retpoline or os.path.join(os.path.dirname(build), "build-retpo",
                                                       "dataplane", "listrx")
    listrx_build = {"mitigations": mitig}
    if mitig["retpoline"]:
        if os.access(retpo_bin, os.X_OK):
            args.listrx_binary = os.path.abspath(retpo_bin)
            listrx_build["binary"] = args.listrx_binary
            listrx_build["flavour"] = "retpoline"
        else:
            listrx_build["binary"] = args.listrx_binary
            listrx_build["flavour"] = "plain"
            listrx_build["note"] = ("the kernel uses retpolines but %s is not built "
                                    "(meson setup build-retpo -Dretpoline=true && ninja -C "
                                    "build-retpo): the prediction below is the plain build's"
                                    % retpo_bin)
    else:
        listrx_build.update(binary=args.listrx_binary, flavour="plain")

    out = args.out
    log_lines = []

    def log(msg):
        log_lines.append(msg)
        if not args.quiet:
            print(msg, flush=True)

    # footprints: kallsyms (root), else the recorded table
    try:
        with open(args.kallsyms) as f:
            syms = parse_kallsyms(f.read())
        foot = footprints_from_kallsyms(syms)
        foot_source = args.kallsyms
    except (OSError, ValueError) as e:
        foot, foot_source = fallback_footprints(), "recorded table (%s)" % e
    if not foot or not any(v["bytes"] for v in foot.values()):
        foot, foot_source = fallback_footprints(), "recorded table (no sizes in %s)" % args.kallsyms
    stages_kb = stage_footprints(foot)
    config = os.path.join(out, "kernel-calibrated.ini")
    with open(config, "w") as f:
        f.write(calibrated_config(stages_kb, foot_source, args.listrx_traffic, mitig))

    gro = GroNormalBatch()
    veth = Veth("%d" % (os.getpid() % 100000))
    interrupted = []

    def on_signal(sig, frame):
        interrupted.append(sig)
        raise KeyboardInterrupt

    # SIGINT too: a shell that starts us in the background ignores it
    old = {s: signal.signal(s, on_signal) for s in STOP_SIGNALS}
    t0 = time.time()
    try:
        veth.setup(args.cpu)
        veth.attach(progs["drop"])
        inj_runs = measure_injectors(args, veth, inj, progs, log)
        runs = measure_kernel(args, veth, inj, progs, gro, log)
        prof = perf_profile(args, veth, inj, progs, gro, out, log) if args.perf else {
            "unavailable": "--no-perf"}
    finally:
        restore_all(gro, veth, old)
    kernel_s = time.time() - t0
    lruns = listrx_runs(args, config, args.listrx_traffic, log, out)
    result = summarize(runs, inj_runs, prof, lruns, args.listrx_traffic, foot, foot_source,
                       stages_kb, listrx_build)
    result["run"] = {"argv": argv, "kernel_seconds": kernel_s,
                     "total_seconds": time.time() - t0, "gro_normal_batch_restored": gro.saved,
                     "cpu": args.cpu, "packets": args.packets, "tcp_packets": args.tcp_packets,
                     "reps": args.reps, "kernel": os.uname().release}
    with open(os.path.join(out, "kernel.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
    with open(os.path.join(out, "kernel-runs.json"), "w") as f:
        json.dump({"kernel": runs, "injectors": inj_runs, "listrx": lruns, "profile": prof,
                   "footprint": {"groups": foot, "source": foot_source, "stage_kb": stages_kb},
                   "listrx_build": listrx_build, "listrx_traffic": args.listrx_traffic},
                  f, indent=1)
    md = write_report(result, os.path.join(out, "kernel.md"))
    print("wrote %s, %s and %s" % (os.path.join(out, "kernel.json"), md, config))
    if result["kernel"].get("gain_unavailable"):
        print("listrx-bench kernel: no kernel gain (%s): %s" % (
            args.listrx_traffic, result["kernel"]["gain_unavailable"]), file=sys.stderr)
    return 0


def restore_all(gro, veth, handlers):
    """The kernel experiment's clean-up: gro_normal_batch restored, the
    veth and namespace deleted, the signal handlers put back. Signals wait
    until it is done: a second Ctrl-C arrives once the namespace and the
    sysctl are back (then as KeyboardInterrupt, from the handlers put back)."""
    with signals_held(restore=handlers):
        try:
            gro.restore()
        finally:
            veth.close()


def add_parser(sub):
    """The `kernel` subcommand (registered by cli.py)."""
    kp = sub.add_parser("kernel", help="the running kernel's listification gain "
                        "(gro_normal_batch 1 vs 64 on a veth, root) vs listrx's prediction")
    add_common(kp)
    add_out(kp)
    kp.add_argument("--reps", type=convert(positive_int), default=7, help="alternating repetitions (default: %(default)s)")
    kp.add_argument("--packets", type=convert(positive_int), default=200000,
                    help="UDP frames per kernel run (default: %(default)s)")
    kp.add_argument("--tcp-packets", type=convert(positive_int), default=60000,
                    help="TCP segments per kernel run (default: %(default)s)")
    kp.add_argument("--traffic", type=convert(choices_list(list(TRAFFIC)), "traffic kind"),
                    default=["udp", "udp-sock", "tcp"],
                    help="kinds: udp (no socket), udp-sock (bound socket, full queue), "
                    "tcp (stream, GRO merges) (default: udp,udp-sock,tcp)")
    kp.add_argument("--perf", dest="perf", action="store_true", default=True)
    kp.add_argument("--no-perf", dest="perf", action="store_false",
                    help="skip the perf cpu-clock attribution")
    kp.add_argument("--perf-traffic", type=convert(choices_list(list(TRAFFIC)), "traffic kind"),
                    default=["udp"],
                    help="traffic kinds profiled with perf (default: udp)")
    kp.add_argument("--perf-packets", type=convert(positive_int), default=600000,
                    help="UDP frames of each perf run (default: %(default)s)")
    kp.add_argument("--perf-freq", type=convert(positive_int), default=10000, help="cpu-clock samples/s (default: %(default)s)")
    kp.add_argument("--keep-perf", action="store_true", help="keep the perf.data files")
    kp.add_argument("--injector", choices=("mmsg", "txring", "xdp"), default="mmsg",
                    help="injector of the kernel runs: AF_PACKET sendmmsg, PACKET_TX_RING, "
                    "AF_XDP copy mode (default: %(default)s)")
    kp.add_argument("--injector-reps", type=convert(positive_int), default=6,
                    help="alternating reps of the injector comparison (default: %(default)s)")
    kp.add_argument("--cpu", type=convert(allowed_cpu), default=allowed_cpus()[-1],
                    help="CPU of the sender and the NAPI kthread (default: the last)")
    kp.add_argument("--kallsyms", default="/proc/kallsyms",
                    help="symbol table for the footprints: /proc/kallsyms or a System.map "
                    "(default: %(default)s)")
    kp.add_argument("--listrx-retpoline", default=None,
                    help="listrx retpoline build (default: build-retpo/ next to the build)")
    kp.add_argument("--listrx-traffic", default="udp",
                    help="traffic kind of the listrx comparison (default: %(default)s)")
    kp.add_argument("--listrx-duration", type=convert(positive_float), default=1.0,
                    help="seconds per listrx run (default: %(default)s)")
    kp.set_defaults(func=cmd_kernel)
    return kp


def cmd_kernel(args, argv):
    """Exit 2 when the experiment cannot run here (Skip, bad arguments),
    1 when it started and a step failed (an injector or listrx run that
    died, a namespace that would not come up)."""
    if args.reps < 1:
        raise BenchError("--reps %d: want at least 1" % args.reps)
    try:
        return run_kernel(args, argv)
    except Skip:
        raise
    except BenchError as e:
        print("listrx-bench kernel: %s" % e, file=sys.stderr)
        return 1
