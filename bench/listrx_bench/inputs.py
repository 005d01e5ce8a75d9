"""The inputs the headline measures listrx on (listrx-bench headline --input).

hot     net_synth's default frames: the PMD writes each mbuf's header and the
        frame's head a moment before the pipeline reads them, so every line a
        stage reads is in the L1d (docs/net_synth.md).
cold    net_synth cold=1: the buffers spread over cold_mb (4 x the LLC),
        handed out in a shuffled order, the heads written with non-temporal
        stores, so the first read of a frame misses every cache, as after a
        device's DMA without DDIO (Brouer's evaluation: ~32 ns a miss).
kernel  a kernel-fed port: DPDK's net_af_xdp (net_af_packet where AF_XDP
        cannot) on a veth whose peer, in a network namespace of its own,
        lrx-kinject feeds from another CPU: every frame is built by the
        kernel (sendmmsg, an skb), crosses the veth and its XDP hook and is
        copied into the AF_XDP ring by that CPU, then read by the polling
        lcore: lines another core wrote.

Each input is an Input: the traffic (a sweep profile), the EAL options, why
cachegrind cannot measure it (None when it can) and, for the kernel-fed
port, the session that must be up while its runs run (KernelPort).
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess

from .listrx import BenchError, allowed_cpus, signals_held

INPUTS = ("hot", "cold", "kernel")
LABELS = {"hot": "hot frames", "cold": "cold frames (net_synth cold=1)",
          "kernel": "kernel-fed port"}
# cachegrind runs listrx alone: a kernel-fed port's frames are written by
# another CPU and by the kernel, which valgrind does not simulate
KERNEL_CACHEGRIND = ("unavailable: the frames are written by the kernel on another CPU "
                     "(the veth, its XDP hook, the AF_XDP copy); cachegrind simulates this "
                     "process's own accesses only")
# The kernel-fed port's poll waits this long after a poll short of the
# budget ([run] coalesce_us), as a NIC's interrupt moderation holds back
# NAPI's next poll (ethtool -C rx-usecs; i40e's default ITR, 20K
# interrupts/s, is 50 us): without it the lcore polls the ring as the
# sender fills it and every poll gets a frame or two (93 % of polls empty,
# 1.2 frames a poll that received), whatever the burst size.
KERNEL_COALESCE_US = 50
# the addresses of net_synth's udp64, which l3-demux delivers locally
SRC_IP, DST_IP, DPORT = "198.18.0.1", "198.18.0.42", 9


def parse_inputs(text):
    """"hot,cold,kernel" -> the list, each once, in the given order."""
    out = []
    for item in (i.strip() for i in str(text).split(",")):
        if item not in INPUTS:
            raise ValueError("input %r: want %s" % (item, ", ".join(INPUTS)))
        if item not in out:
            out.append(item)
    if not out:
        raise ValueError("no input: want %s" % ", ".join(INPUTS))
    return out


def llc_mib(topology):
    """The last-level cache in MiB from listrx's --topology, or None."""
    b = topology.get("llc_bytes")
    return int(b) >> 20 if b else None


def cold_mb(topology):
    """net_synth's cold region: 4 x the LLC (its own default), at least
    256 MiB; recorded so that a page can say what it measured."""
    llc = llc_mib(topology)
    return max(256, 4 * llc) if llc else 256


def cold_profile(profile, mb):
    """The headline's profile (a net_synth profile name or net_synth
    devargs) with cold=1 and the region's size."""
    if profile.startswith("net_synth"):
        base = profile
    elif profile.startswith("net_") or profile in ("null", "none") or \
            profile.startswith("config:"):
        raise BenchError("--input cold: cold=1 is net_synth's; --profile %s is not a "
                         "net_synth profile" % profile)
    else:
        base = "net_synth0,profile=" + profile
    if re.search(r"(^|,)copy=1(,|$)", base):
        raise BenchError("--input cold: net_synth's cold=1 needs copy=0 (--profile %s)" % profile)
    return base + ",cold=1,cold_mb=%d" % mb


def eal_memory(eal, mb):
    """The EAL options with -m at least mb (the cold region lives in EAL
    memory, beside the application's pool)."""
    args = shlex.split(eal) if isinstance(eal, str) else list(eal)
    for i, a in enumerate(args[:-1]):
        if a == "-m":
            if int(args[i + 1]) < mb:
                args[i + 1] = str(mb)
            return " ".join(shlex.quote(a) for a in args)
    return " ".join(shlex.quote(a) for a in args + ["-m", str(mb)])


class InputUnavailable(BenchError):
    """An input that could not be set up or carry frames here."""


class Input:
    """One input of the headline: name, label, the sweep profile, the EAL
    options, listrx --set assignments of its runs, why cachegrind cannot
    measure it (or None), what it was (info, for headline.json) and its
    session (a context manager)."""

    def __init__(self, name, profile, eal, cachegrind=None, info=None, session=None,
                 cg_eal_mb=None, sets=()):
        self.name, self.label = name, LABELS[name]
        self.profile, self.eal = profile, eal
        self.sets = list(sets)
        self.cachegrind = cachegrind
        self.cg_eal_mb = cg_eal_mb  # cachegrind's EAL -m at least this
        self.info = dict(info or {})
        self.session = session

    def __enter__(self):
        if self.session:
            try:
                self.session.start()
            except BaseException as e:
                # __exit__ does not run when __enter__ fails: undo here
                self.session.close()
                if isinstance(e, BenchError):
                    raise InputUnavailable(str(e))
                raise
            self.profile = self.session.profile
            self.info.update(self.session.info())
        return self

    def __exit__(self, *exc):
        if self.session:
            self.session.close()
            self.info.update(self.session.info())
        return False


def prepare(name, profile, eal, topology, build_dir, lcores,
            coalesce_us=KERNEL_COALESCE_US):
    """The Input for name, or BenchError naming why it cannot run here.
    coalesce_us: the kernel-fed port's wait after a short poll (0: none)."""
    if name == "hot":
        return Input(name, profile, eal, info={"profile": profile})
    if name == "cold":
        mb = cold_mb(topology)
        return Input(name, cold_profile(profile, mb), eal_memory(eal, mb + 1024),
                     info={"profile": cold_profile(profile, mb), "cold_mb": mb,
                           "llc_mib": llc_mib(topology)}, cg_eal_mb=mb + 128)
    if profile != "udp64":
        raise BenchError("--input kernel: the kernel's sender makes udp64's frames (64 bytes, "
                         "one flow to %s:%d); --profile %s" % (DST_IP, DPORT, profile))
    port = KernelPort(build_dir, sender_cpu(lcores))
    port.check()
    return Input(name, port.profile, eal, cachegrind=KERNEL_CACHEGRIND, session=port,
                 info={"coalesce_us": coalesce_us},
                 sets=["run.coalesce_us=%d" % coalesce_us] if coalesce_us else [])


def sender_cpu(lcores):
    """A CPU for the kernel's sender: one that no lcore of `lcores` ("0,1":
    the main lcore, then the polling ones) uses, else the main lcore's (it
    sleeps between its monitor's checks)."""
    used = [int(c) for c in re.findall(r"\d+", str(lcores))]
    free = [c for c in allowed_cpus() if c not in used]
    return free[0] if free else used[0]


class KernelPort:
    """A veth pair: the outer end in this namespace, where listrx opens
    net_af_xdp (or net_af_packet), the inner one in a network namespace of
    its own, where lrx-kinject sends udp64's frames to the outer end's MAC
    as fast as its CPU can (SCHED_OTHER, no pacing). close() stops the
    sender and deletes the namespace, which takes both ends with it (and
    the XDP program on the outer one); it is safe to call twice, and after
    a start() that failed half way."""

    PMDS = ("af_xdp", "af_packet")

    def __init__(self, build_dir, cpu, tag=None):
        tag = tag or str(os.getpid() % 100000)
        self.ns, self.outer, self.inner = "lrxf%s" % tag, "lrxfa%s" % tag, "lrxfb%s" % tag
        self.inject = os.path.join(build_dir, "bench", "kernel", "lrx-kinject")
        self.cpu = cpu
        self.pmd = self.PMDS[0]
        self.pmd_why = None  # why not af_xdp, when af_packet is used
        self.sender = None
        self.sent = None
        self.created = False
        self.mac = None

    def check(self):
        """BenchError with the reason when this host cannot run it."""
        if os.geteuid() != 0:
            raise BenchError("--input kernel needs root (a network namespace, a veth, "
                             "an AF_XDP socket)")
        if not shutil.which("ip"):
            raise BenchError("--input kernel needs the ip tool (iproute2)")
        if not os.access(self.inject, os.X_OK):
            raise BenchError("--input kernel: no %s (ninja -C %s)" % (
                self.inject, os.path.dirname(os.path.dirname(os.path.dirname(self.inject)))))

    @property
    def profile(self):
        if self.pmd == "af_xdp":
            return "net_af_xdp0,iface=%s,start_queue=0,queue_count=1" % self.outer
        return "net_af_packet0,iface=%s" % self.outer

    def _ip(self, *args, check=True, ns=False):
        cmd = (["ip", "netns", "exec", self.ns] if ns else []) + list(args)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
        if check and proc.returncode != 0:
            raise BenchError("kernel-fed port: %s: exit %d: %s" % (
                shlex.join(cmd), proc.returncode, (proc.stderr or proc.stdout).strip()[-200:]))
        return proc

    def start(self):
        with signals_held():
            self._ip("ip", "netns", "add", self.ns)
            self.created = True
            # one queue each way: the frames land on the queue AF_XDP binds
            self._ip("ip", "link", "add", self.outer, "numtxqueues", "1", "numrxqueues", "1",
                     "type", "veth", "peer", "name", self.inner, "numtxqueues", "1",
                     "numrxqueues", "1", "netns", self.ns)
        # no IPv6 (router and neighbour solicitations would be frames of
        # their own); no forwarding of the frames that reach the outer end's
        # stack between listrx runs (no address there: ip_route_input_slow
        # drops them when forwarding is off on the device)
        for k in ("net.ipv6.conf.%s.disable_ipv6=1" % self.outer,
                  "net.ipv4.conf.%s.forwarding=0" % self.outer):
            self._ip("sysctl", "-qw", k, check=False)
        self._ip("sysctl", "-qw", "net.ipv6.conf.%s.disable_ipv6=1" % self.inner, check=False,
                 ns=True)
        self._ip("ip", "link", "set", self.outer, "up")
        self._ip("ip", "link", "set", self.inner, "up", ns=True)
        with open("/sys/class/net/%s/address" % self.outer) as f:
            self.mac = f.read().strip()
        self.sender = subprocess.Popen(
            ["ip", "netns", "exec", self.ns, self.inject, "--dev", self.inner, "--dst-mac",
             self.mac, "--src-ip", SRC_IP, "--dst-ip", DST_IP, "--dport", str(DPORT),
             "--napi-pid", "0", "--fifo", "0", "--cpu", str(self.cpu), "--round", "256",
             "--packets", str(1 << 62)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def use_af_packet(self, why):
        """AF_XDP could not start here: net_af_packet on the same veth."""
        self.pmd, self.pmd_why = "af_packet", why

    def sender_alive(self):
        return self.sender is not None and self.sender.poll() is None

    def close(self):
        with signals_held():
            if self.sender is not None:
                if self.sender.poll() is None:
                    self.sender.send_signal(signal.SIGTERM)
                try:
                    out, err = self.sender.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    self.sender.kill()
                    out, err = self.sender.communicate()
                self.sent = parse_sender(out, err)
                self.sender = None
            if self.created:
                # the namespace takes the inner end, its peer goes with it
                self._ip("ip", "netns", "del", self.ns, check=False)
                self._ip("ip", "link", "del", self.outer, check=False)
                self.created = False

    def info(self):
        out = {"pmd": "net_" + self.pmd, "veth": self.outer, "namespace": self.ns,
               "sender": "lrx-kinject (sendmmsg of 256 frames, SCHED_OTHER) on CPU %d in %s"
               % (self.cpu, self.ns), "sender_cpu": self.cpu, "profile": self.profile}
        if self.pmd_why:
            out["af_xdp"] = "unavailable: " + self.pmd_why
        if self.sent:
            out["sent"] = self.sent
        return out


def parse_sender(out, err):
    """lrx-kinject's last JSON line with its rate, or its error."""
    for line in reversed((out or "").strip().splitlines()):
        try:
            d = json.loads(line)
        except ValueError:
            continue
        if d.get("wall_ns"):
            d["mpps"] = d.get("sent", 0) / d["wall_ns"] * 1e3
        return d
    return {"error": (err or "no output").strip()[-300:]}


def probe_port(lx, inp, out_dir):
    """A short run of listrx's empty pipeline on the kernel-fed port: it
    must start and receive the sender's frames. net_af_packet when
    net_af_xdp cannot; InputUnavailable naming both when neither can."""
    os.makedirs(out_dir, exist_ok=True)
    why = {}
    for pmd in KernelPort.PMDS:
        if pmd != inp.session.pmd:
            inp.session.use_af_packet("; ".join(why.values()))
        if not inp.session.sender_alive():
            raise InputUnavailable("the kernel's sender exited: %s" % parse_sender(
                *inp.session.sender.communicate()))
        cell = {"profile": inp.session.profile, "engine": "burst", "burst": 64,
                "pipeline_arg": "none", "footprint_kb": 0}
        path = os.path.join(out_dir, "probe-%s.json" % pmd)
        summary, err, _ = lx.run(lx.command(cell, path, duration=0.5), path, timeout=60)
        if err is None and (summary.get("rx_packets") or 0) > 0:
            inp.profile = inp.session.profile
            inp.info.update(inp.session.info(), probe_mpps=summary.get("mpps"))
            return
        why[pmd] = "net_%s: %s" % (pmd, err or "received no frame in 0.5 s")
    raise InputUnavailable("; ".join(why.values()))
