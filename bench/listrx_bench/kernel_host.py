"""The kernel experiment's host side (listrx-bench kernel, kernel.py): the
veth pair whose receiving end sits in a fresh network namespace with GRO
and threaded NAPI, the net.core.gro_normal_batch sysctl, the helpers that
run on the NAPI kthreads (lrx-ktime's tracepoint timer, perf record), the
injector lrx-kinject, the build's artifacts and what the host must have.
Each piece is undone by its close() or restore(), after errors too."""

import json
import os
import re
import shutil
import shlex
import subprocess
import sys
import time

from .kernel_model import TRAFFIC, parse_perf_callchains
from .listrx import BenchError, stop_process


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
    """The injector, the tracepoint timer and the BPF objects of a build."""
    kdir = os.path.join(build, "bench", "kernel")
    xdir = os.path.join(build, "stages", "xdp")
    art = {"inject": os.path.join(kdir, "lrx-kinject"), "ktime": os.path.join(kdir, "lrx-ktime"),
           "ktime_obj": os.path.join(kdir, "lrx_ktime.bpf.o"),
           "tc_port_drop": os.path.join(kdir, "tc_port_drop.bpf.o"),
           "xdp_port_filter": os.path.join(xdir, "xdp_port_filter.bpf.o"),
           "xdp_drop": os.path.join(xdir, "xdp_drop.bpf.o"),
           "xdp_pass": os.path.join(xdir, "xdp_pass.bpf.o")}
    missing = [p for p in art.values() if not os.path.isfile(p)]
    if missing:
        raise Skip("not built: %s (ninja -C %s; the BPF objects need clang)"
                   % (", ".join(missing), build))
    return art


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


def _end_child(proc, timeout):
    """Close a helper's stdin (its signal to exit), wait, kill if it hangs."""
    try:
        proc.stdin.close()
        proc.wait(timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


class Veth:
    """veth pair, receiving end in a fresh netns with GRO and threaded NAPI
    (one kthread per RX queue, all pinned to one CPU); everything undone by
    close() (also after errors and signals)."""

    def __init__(self, tag, queues=1):
        self.ns = "lrxk%s" % tag
        self.a = "lrxka%s" % tag
        self.b = "lrxkb%s" % tag
        self.queues = queues
        self.created_ns = self.created_link = False
        self.mac = None
        self.napi_pids = []
        self.socket_proc = None
        self.cpu = None

    def nsx(self, *cmd, **kw):
        return _run(["ip", "netns", "exec", self.ns] + list(cmd), **kw)

    def setup(self, cpu):
        if _run(["ip", "netns", "add", self.ns], check=False).returncode != 0:
            raise Skip("cannot create a network namespace (ip netns add %s)" % self.ns)
        self.created_ns = True
        q = ["numtxqueues", str(self.queues), "numrxqueues", str(self.queues)]
        _run(["ip", "link", "add", self.a] + q + ["type", "veth", "peer", "name", self.b] + q)
        self.created_link = True
        _run(["ip", "link", "set", self.b, "netns", self.ns])
        _run(["sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % self.a], check=False)
        # veth_xmit hands a frame to the peer's NAPI (GRO) only when the
        # sender has no TSO (veth_skb_is_eligible_for_gro); else it goes to
        # the backlog softirq
        _run(["ethtool", "-K", self.a, "tso", "off"])
        _run(["ip", "link", "set", self.a, "up"])
        # the frames' destination is local; nothing the stack answers (ICMP
        # port unreachable, TCP RST) leaves: a blackhole route to the sender
        # makes the reply's route lookup fail (the lookup is still paid)
        self.nsx("sh", "-c", "ip link set lo up && "
                 "sysctl -qw net.ipv6.conf.%(b)s.disable_ipv6=1 "
                 "net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 && "
                 "ethtool -K %(b)s gro on && ip link set %(b)s up && "
                 "ip addr add %(dst)s/24 dev %(b)s && ip route add blackhole %(src)s/32"
                 % {"b": self.b, "dst": DST_IP, "src": SRC_IP})
        self.mac = self.nsx("cat", "/sys/class/net/%s/address" % self.b).stdout.strip()
        self.cpu = cpu
        # GRO on makes veth create its NAPIs (veth_open: veth_gro_requested);
        # threaded makes each a kthread napi/<dev>-<id> we can pin and time
        self.nsx("sh", "-c", "echo 1 > /sys/class/net/%s/threaded" % self.b)
        self.refresh_napis()

    def refresh_napis(self):
        """Finds and pins the NAPI kthreads; returns True when they changed."""
        pids = []
        for _ in range(50):
            pids = self.find_napis()
            if len(pids) >= self.queues:
                break
            time.sleep(0.02)
        if not pids:
            raise Skip("no napi/%s-* kthread after 'threaded' (threaded NAPI unavailable)"
                       % self.b)
        for pid in pids:
            os.sched_setaffinity(pid, {self.cpu})
        changed = pids != self.napi_pids
        self.napi_pids = pids
        return changed

    def find_napis(self):
        found = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/comm" % d) as f:
                    comm = f.read().strip()
            except OSError:
                continue
            if comm.startswith("napi/%s-" % self.b):
                found.append(int(d))
        return sorted(found)

    def set_xdp(self, mode, prog=None):
        """mode: xdpdrv (native: veth copies each skb into a page-pool page
        first) or xdpgeneric (do_xdp_generic in netif_receive_skb_list_internal);
        prog None detaches."""
        tail = ["obj", prog, "sec", "xdp"] if prog else ["off"]
        _run(["ip", "-force", "-n", self.ns, "link", "set", "dev", self.b, mode] + tail)

    def xdp_prog_id(self):
        text = _run(["ip", "-n", self.ns, "-d", "link", "show", "dev", self.b]).stdout
        m = re.search(r"prog/xdp id (\d+)", text)
        return int(m.group(1)) if m else None

    def stats(self):
        text = self.nsx("ethtool", "-S", self.b, check=False).stdout
        return {k: int(v) for k, v in re.findall(r"^\s*(\S+):\s*(\d+)\s*$", text, re.M)}

    def queue_frames(self):
        """Frames per RX queue as veth counts them (rx_queue_N_xdp_packets:
        every frame its NAPI took, with or without XDP)."""
        s = self.stats()
        return [s.get("rx_queue_%d_xdp_packets" % q, 0) for q in range(self.queues)]

    def open_udp_socket(self, port, rcvbuf=2048):
        """A bound UDP socket whose tiny receive queue is full after a few
        datagrams: the rest drop in __udp_enqueue_schedule_skb (RcvbufErrors)."""
        self.close_socket()
        code = ("import socket,sys,time\n"
                "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
                "s.setsockopt(socket.SOL_SOCKET,socket.SO_RCVBUF,%d)\n"
                "s.bind((%r,%d))\nprint('bound',flush=True)\n"
                "sys.stdin.read()\n" % (rcvbuf, DST_IP, port))
        # a session of its own: the terminal's Ctrl-C (and a signal to
        # our process group) reaches the experiment, which closes the
        # helper's stdin when it cleans up, not the helper, which printed
        # a KeyboardInterrupt traceback of its own
        self.socket_proc = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, sys.executable, "-c", code],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
        if self.socket_proc.stdout.readline().strip() != "bound":
            raise BenchError("cannot bind a UDP socket to %s:%d in %s" % (DST_IP, port, self.ns))

    def close_socket(self):
        if self.socket_proc is not None:
            _end_child(self.socket_proc, 5)
            self.socket_proc = None

    def close(self):
        """Deleting the namespace takes the receiving veth with it, and with
        it every tc filter, netfilter rule and XDP program attached there."""
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
        self.current = self.saved

    def set(self, value):
        if value != self.current:
            with open(self.PATH, "w") as f:
                f.write(str(value))
            self.current = value

    def restore(self):
        with open(self.PATH, "w") as f:
            f.write(str(self.saved))
        self.current = self.saved


class Ktime:
    """lrx-ktime, driven over its stdin: the clock (polls, on-CPU time) is
    attached from the start; the GRO windows, list episodes and the
    calibration pair on request. Its BPF links are its file descriptors:
    they go with the process, however it ends."""

    def __init__(self, art, pids):
        self.pids = list(pids)
        self.proc = subprocess.Popen(
            [art["ktime"], "--obj", art["ktime_obj"], "--pid", ",".join(map(str, pids))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith('{"ready"'):
            err = self._stderr()
            self.close()
            raise Skip("lrx-ktime cannot time the kernel here: %s" % (err or "no reply"))
        self.state = {"windows": False, "episodes": False, "cal": False}

    def _stderr(self):
        try:
            self.proc.wait(timeout=5)
            return self.proc.stderr.read().strip()[-500:]
        except (subprocess.TimeoutExpired, OSError, ValueError):
            return ""

    def _cmd(self, c):
        try:
            self.proc.stdin.write(c + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as e:
            raise BenchError("lrx-ktime died: %s %s" % (e, self._stderr()))

    def snap(self):
        self._cmd("s")
        line = self.proc.stdout.readline()
        if not line:
            raise BenchError("lrx-ktime died: %s" % self._stderr())
        return json.loads(line)

    def set(self, windows=False, episodes=False, cal=False):
        """Attach or detach the probe sets (in the order lrx-ktime needs:
        the calibration pair after the windows)."""
        want = {"windows": windows, "episodes": episodes, "cal": cal}
        if want == self.state:
            return
        self._cmd("d")
        if windows:
            self._cmd("a")
        if episodes:
            self._cmd("e")
        if cal:
            self._cmd("c")
        self.state = want

    def close(self):
        if self.proc.poll() is None:
            _end_child(self.proc, 10)


class PerfRecord:
    """perf record -e cpu-clock -g on the NAPI kthreads, sample times in
    CLOCK_MONOTONIC (the windows' bounds are time.monotonic_ns())."""

    def __init__(self, pids, period_ns, path):
        self.path = path
        self.proc = subprocess.Popen(
            ["perf", "record", "-e", "cpu-clock", "-c", str(period_ns), "-g", "-k",
             "CLOCK_MONOTONIC", "-t", ",".join(map(str, pids)), "-o", path],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # perf creates its file, then reads the symbol tables and writes
        # them there before it counts: on a loaded machine that takes
        # seconds, and a SIGINT before it has set up ends it without data.
        # Wait for the file to have content, then for the rest of the set-up.
        deadline = time.monotonic() + 60
        while self.proc.poll() is None and time.monotonic() < deadline:
            if os.path.exists(path) and os.path.getsize(path) > 0:
                break
            time.sleep(0.1)
        time.sleep(1.5)
        if self.proc.poll() is not None or not os.path.exists(path):
            raise BenchError("perf record: %s" % (
                self.proc.stderr.read().strip()[-300:] if self.proc.poll() is not None
                else "no data file after 60 s"))


    def stop(self):
        rc = stop_process(self.proc)
        if not os.path.exists(self.path):
            raise BenchError("perf record wrote no %s (exit %s): %s" % (
                self.path, rc, self.proc.stderr.read().strip()[-300:]))

    def samples(self):
        out = _run(["perf", "script", "--ns", "-i", self.path, "-F", "time,ip,sym"], check=False,
                   timeout=300)
        return parse_perf_callchains(out.stdout)


def check_preconditions():
    if os.geteuid() != 0:
        raise Skip("the kernel experiment needs root (network namespaces, BPF, sysctl, "
                   "perf on a kernel thread)")
    for tool in ("ip", "ethtool"):
        if not shutil.which(tool):
            raise Skip("the kernel experiment needs the %s tool" % tool)
    if not os.path.exists(GroNormalBatch.PATH):
        raise Skip("this kernel has no net.core.gro_normal_batch (Linux < 5.4)")
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        raise Skip("the tracepoint probes need the kernel's BTF (/sys/kernel/btf/vmlinux, "
                   "CONFIG_DEBUG_INFO_BTF)")


def injector_cmd(art, veth, kind, packets, method="mmsg", extra=()):
    t = TRAFFIC[kind]
    return ([art["inject"], "--dev", veth.a, "--dst-mac", veth.mac, "--kind", t["l4"],
             "--src-ip", SRC_IP, "--dst-ip", DST_IP, "--dport", str(t["dport"]),
             "--packets", str(packets), "--cpu", str(veth.cpu), "--method", method,
             "--napi-pid", ",".join(map(str, veth.napi_pids))]
            + t["inject"] + list(extra))


def run_injector(cmd, timeout):
    proc = _run(cmd, timeout=timeout)
    return json.loads(proc.stdout.strip().splitlines()[-1])
