"""The running kernel's copy baseline for seed 003: one TCP stream over a
veth pair (MTU 4148, the seed's: MSS 4096 with timestamps) into a network
namespace, a reader doing recv() into a 64 KiB buffer (tcp_recvmsg's copy,
as listrx's tcp_read=copy with tcp_read_size 65536). Windows of a fixed
duration; the sender's veth without TSO and GSO, so that every 4 KB
segment crosses the stack alone, as listrx's frames do with GRO off (the
receiving veth has no NAPI without XDP or GRO: netif_rx's backlog, no
GRO); per window the bytes the reader got, its CPU time and the
sender's (getrusage: user + system) and the ksoftirqd threads' of the CPUs
used (/proc/PID/stat), all tick-sampled (CONFIG_TICK_CPU_ACCOUNTING: a
softirq's ticks go to the task it interrupted). Two placements, as the
seed's: everything on one CPU (sender, softirq, reader: listrx's one
lcore, which writes the frames too), or the reader on a CPU of its own.
Zero-copy rows need a NIC with header split: none here. Root only."""

import os
import shutil
import subprocess
import sys
import time

from .. import kernel, stats
from ..listrx import BenchError

ZC = "unavailable: zero-copy receive needs a NIC with header split (veth and virtio here)"
MTU = 4148
READ_SIZE = 65536
PORT = 5201
SRC, DST = "198.19.0.1", "198.19.0.2"

RECEIVER = r"""
import resource, socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(1)
print("listening", flush=True)
c, _ = s.accept()
view = memoryview(bytearray(int(sys.argv[3])))
n = calls = 0
r0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.monotonic()
while True:
    k = c.recv_into(view)
    if not k:
        break
    n += k
    calls += 1
t1, r1 = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
print(n, calls, t1 - t0, r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime, flush=True)
"""

SENDER = r"""
import resource, socket, sys, time
c = socket.create_connection((sys.argv[1], int(sys.argv[2])))
buf = bytes(int(sys.argv[3]))
r0 = resource.getrusage(resource.RUSAGE_SELF)
end = time.monotonic() + float(sys.argv[4])
while time.monotonic() < end:
    c.sendall(buf)
c.close()
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime, flush=True)
"""


def _ksoftirqd_ticks(cpus):
    """utime + stime (clock ticks) of ksoftirqd/N for the cpus."""
    total = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                text = f.read()
        except OSError:
            continue
        comm = text[text.index("(") + 1:text.rindex(")")]
        if comm in ("ksoftirqd/%d" % c for c in cpus):
            fields = text[text.rindex(")") + 2:].split()
            total += int(fields[11]) + int(fields[12])
    return total


class Stream:
    """The namespace and veth pair; close() undoes them."""

    def __init__(self, tag):
        self.ns, self.a, self.b = "lrxt%s" % tag, "lrxta%s" % tag, "lrxtb%s" % tag
        self.made = False

    def setup(self):
        if kernel._run(["ip", "netns", "add", self.ns], check=False).returncode != 0:
            raise kernel.Skip("cannot create a network namespace (ip netns add %s)" % self.ns)
        self.made = True
        kernel._run(["ip", "link", "add", self.a, "mtu", str(MTU), "type", "veth", "peer",
                     "name", self.b, "mtu", str(MTU)])
        kernel._run(["ip", "link", "set", self.b, "netns", self.ns])
        kernel._run(["ethtool", "-K", self.a, "tso", "off", "gso", "off"])
        kernel._run(["ip", "addr", "add", SRC + "/24", "dev", self.a])
        kernel._run(["ip", "link", "set", self.a, "up"])
        kernel._run(["ip", "netns", "exec", self.ns, "sh", "-c",
                     "ip link set lo up && ip addr add %s/24 dev %s && ip link set %s up"
                     % (DST, self.b, self.b)])

    def window(self, seconds, sender_cpu, reader_cpu):
        """One stream of `seconds`: {"bytes", "calls", "secs", "reader_cpu_s",
        "sender_cpu_s", "softirqd_cpu_s"}."""
        hz = os.sysconf("SC_CLK_TCK")
        cpus = sorted({sender_cpu, reader_cpu})
        rx = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, "taskset", "-c", str(reader_cpu),
             sys.executable, "-c", RECEIVER, DST, str(PORT), str(READ_SIZE)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            if rx.stdout.readline().strip() != "listening":
                raise BenchError("the kernel's TCP reader did not start: %s"
                                 % rx.stderr.read().strip()[-300:])
            soft0 = _ksoftirqd_ticks(cpus)
            tx = kernel._run(["taskset", "-c", str(sender_cpu), sys.executable, "-c", SENDER,
                              DST, str(PORT), str(READ_SIZE), str(seconds)],
                             timeout=seconds + 30)
            out, err = rx.communicate(timeout=30)
            soft1 = _ksoftirqd_ticks(cpus)
        finally:
            if rx.poll() is None:
                rx.kill()
                rx.wait()
        try:
            n, calls, secs, ru, rs = out.split()
            su, ss = tx.stdout.split()
        except ValueError:
            raise BenchError("the kernel's TCP stream: no figures (%s)" % err.strip()[-300:])
        return {"bytes": int(n), "calls": int(calls), "secs": float(secs),
                "reader_cpu_s": float(ru) + float(rs), "sender_cpu_s": float(su) + float(ss),
                "softirqd_cpu_s": (soft1 - soft0) / hz}

    def close(self):
        if self.made:
            kernel._run(["ip", "link", "del", self.a], check=False)
            kernel._run(["ip", "netns", "del", self.ns], check=False)
            self.made = False


def unavailable_reason():
    if os.geteuid() != 0:
        return "unavailable: the kernel's TCP stream needs root (a network namespace)"
    for tool in ("ip", "taskset", "ethtool"):
        if not shutil.which(tool):
            return "unavailable: the kernel's TCP stream needs the %s tool" % tool
    return None


def figures(w, tsc_hz):
    """A window's Gb/s, and cycles per byte (CPU seconds at the TSC's
    rate) of the reader and of everything (sender, softirq, reader)."""
    if not w["bytes"] or not w["secs"]:
        return None
    every = w["reader_cpu_s"] + w["sender_cpu_s"] + w["softirqd_cpu_s"]
    return {"gbps": w["bytes"] * 8 / w["secs"] / 1e9,
            "reader": w["reader_cpu_s"] * tsc_hz / w["bytes"],
            "all": every * tsc_hz / w["bytes"],
            "bytes_per_call": w["bytes"] / w["calls"] if w["calls"] else None}


def measure(windows, seconds, cpus, tsc_hz, progress=None):
    """{"same": [figures], "other": [figures]} over `windows` rotating
    windows of each placement (cpus: the two CPUs; same: all on cpus[1]),
    or a string saying why not."""
    why = unavailable_reason()
    if why:
        return why
    place = {"same": (cpus[1], cpus[1]), "other": (cpus[0], cpus[1])}
    out = {k: [] for k in place}
    s = Stream(os.getpid())
    try:
        s.setup()
        for i in range(windows):
            for k in (("same", "other") if i % 2 == 0 else ("other", "same")):
                f = figures(s.window(seconds, *place[k]), tsc_hz)
                if f:
                    out[k].append(f)
                if progress:
                    progress.update("kernel TCP %s window %d" % (k, i), kind="kernel tcp")
    except kernel.Skip as e:
        return stats.unavailable(str(e))
    finally:
        s.close()
    return out


def cell(figs, place):
    """'12.3 Gb/s; reader 0.61 cycles/byte, all 1.52 [1.40–1.70], 7 windows'."""
    if isinstance(figs, str):
        return figs
    fs = figs.get(place) or []
    if not fs:
        return stats.unavailable("no window gave a figure")
    med = lambda k: stats.median([f[k] for f in fs])
    alls = [f["all"] for f in fs]
    return ("%.1f Gb/s; reader %.3f, all (sender + softirq + reader) %.3f [%.3f–%.3f] "
            "cycles/byte, %d windows" % (med("gbps"), med("reader"), med("all"), min(alls),
                                          max(alls), len(fs)))
