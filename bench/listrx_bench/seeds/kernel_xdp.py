"""The running kernel's side of the XDP seeds (000, 004): XDP programs on
the receiving end of `listrx-bench kernel`'s veth (a fresh network
namespace, threaded NAPI pinned to the sender's CPU), native (xdpdrv) or
generic (xdpgeneric), device-bound where the program calls the XDP
metadata kfuncs (bench/kernel/lrx-xdp-attach). A window sends
lrx-kinject's 64-byte UDP frames and reads the NAPI kthread's on-CPU time
(lrx-ktime's clock): ns per frame = on-CPU ns / frames polled. The
configurations rotate window by window, as listrx's runs do, and the same
`compare` turns them into figures. Optionally perf samples the kthread
during some windows for a per-function zoom-in. Root only: without it,
or without a piece (veth, BTF, the tools), every kernel cell says why."""

import json
import os
import re
import subprocess

from .. import kernel
from ..kernel_model import assign_samples
from ..listrx import BenchError
from .measure import rotation


class Options:
    """What kernel.Experiment.window reads, and the perf zoom-in's."""
    packets = 12800
    injector = "mmsg"
    timeout = 120
    cal_every = 0
    perf_period = 100000
    keep_perf = False

    def __init__(self, cpu):
        self.cpu = cpu


def unavailable_reason(build):
    """None when the kernel side can run here, else why not."""
    try:
        kernel.check_preconditions()
        artifacts(build)
    except kernel.Skip as e:
        return str(e)
    return None


def artifacts(build):
    """kernel.find_artifacts' and the seeds' own: the attach tool, the read
    and the hints programs."""
    art = kernel.find_artifacts(build)
    art["attach"] = os.path.join(build, "bench", "kernel", "lrx-xdp-attach")
    for name in ("xdp_read_drop", "xdp_tx_swap", "xdp_hints_none", "xdp_hints_hash",
                 "xdp_hints_timestamp", "xdp_hints_vlan", "xdp_hints_all"):
        art[name] = os.path.join(build, "stages", "xdp", name + ".bpf.o")
    missing = [p for p in art.values() if not os.path.exists(p)]
    if missing:
        raise kernel.Skip("not built: %s (ninja -C %s)" % (", ".join(missing), build))
    return art


class XdpWindows:
    """One veth session: attach a configuration, time a window of frames.
    A configuration is {"name", "mode": "xdpdrv"|"xdpgeneric", "obj",
    "dev_bound": bool}."""

    def __init__(self, exp, art, log):
        self.exp, self.art, self.log = exp, art, log
        self.veth = exp.veth
        self.current = None
        self.prog_ids = {}

    def guard_peer(self):
        """XDP_TX on the veth sends the frames back to its peer in the
        host's namespace: a native XDP drop there takes them before any
        stack would (no route, no forwarding, no reply leaves)."""
        kernel._run(["ip", "-force", "link", "set", "dev", self.veth.a, "xdpdrv", "obj",
                     self.art["xdp_drop"], "sec", "xdp"])

    def attach(self, cfg):
        if self.current == cfg["name"]:
            return
        other = "xdpgeneric" if cfg["mode"] == "xdpdrv" else "xdpdrv"
        self.veth.set_xdp(other)  # one mode at a time (dev_xdp_attach)
        if cfg.get("dev_bound"):
            out = self.veth.nsx(self.art["attach"], "--dev", self.veth.b, "--obj", cfg["obj"],
                                "--mode", "drv", "--dev-bound", check=False)
            if out.returncode != 0:
                raise kernel.Skip((out.stderr or out.stdout).strip()[-300:])
            self.prog_ids[cfg["name"]] = json.loads(out.stdout.strip().splitlines()[-1])
        else:
            self.veth.set_xdp(cfg["mode"], cfg["obj"])
        if self.veth.refresh_napis():
            self.exp.start_timer()
        self.current = cfg["name"]

    def window(self, cfg, rep, phase="seeds"):
        """ns per frame of one window of cfg (None when nothing was polled)."""
        self.attach(cfg)
        w = self.exp.window("udp", self.exp.gro.current, phase, config=cfg["name"], rep=rep)
        c = w["counters"]
        frames = c.get("poll_work") or 0
        ns = c["oncpu_ns"] / frames if frames and c.get("oncpu_ns") else None
        w["ns_per_frame"] = ns
        self.log("kernel %-28s rep %d: %s ns/frame (%d frames)" % (
            cfg["name"], rep, "%.1f" % ns if ns else "-", frames))
        return w

    def detach(self):
        self.veth.set_xdp("xdpdrv")
        self.veth.set_xdp("xdpgeneric")
        self.current = None

    def map_dump(self, cfg, name):
        """The map `name` of a device-bound configuration's program, as
        bpftool dumps it (JSON), or None."""
        ids = (self.prog_ids.get(cfg["name"]) or {}).get("maps", {})
        if name not in ids:
            return None
        out = self.veth.nsx("bpftool", "-j", "map", "dump", "id", str(ids[name]), check=False)
        try:
            return json.loads(out.stdout)
        except ValueError:
            return None


def rotating_windows(xw, configs, reps, progress):
    """{name: {"runs": {rep: ns}}} over reps rotations of the configs."""
    names = [c["name"] for c in configs]
    by = {c["name"]: c for c in configs}
    out = {n: {"runs": {}} for n in names}
    for rep in range(reps):
        for name in rotation(names, rep):
            w = xw.window(by[name], rep)
            out[name]["runs"][rep] = w["ns_per_frame"]
            progress.update("kernel %s rep %d" % (name, rep), kind="window")
    return out


def perf_functions(xw, cfg, windows, out_dir, progress):
    """perf cpu-clock samples of the NAPI kthread over `windows` windows of
    cfg: per window {function: self ns per frame} (the function's share of
    the window's samples times its ns/frame), and the samples in all."""
    path = os.path.join(out_dir, "perf-seeds.data")
    xw.attach(cfg)
    xw.exp.kt.set()
    first = len(xw.exp.windows)
    perf = kernel.PerfRecord(xw.veth.napi_pids, Options.perf_period, path)
    try:
        for rep in range(windows):
            xw.window(cfg, rep, phase="perf")
            progress.update("kernel perf %s rep %d" % (cfg["name"], rep), kind="window")
    finally:
        perf.stop()
    samples = perf.samples()
    os.unlink(path)
    ws = xw.exp.windows[first:]
    assign_samples(samples, ws)
    per_window = []
    for w in ws:
        n = w["perf"]["samples"]
        if n and w.get("ns_per_frame"):
            per_window.append({f: c / n * w["ns_per_frame"]
                               for f, c in w["perf"]["functions"].items()})
    return per_window, sum(w["perf"]["samples"] for w in ws)


def group_ns(functions, patterns):
    """Sums of self ns per frame by role: patterns {role: regex}; each
    function counts in the first role whose pattern matches its name
    (the .isra/.constprop suffixes dropped), else in "other"."""
    out = {role: 0.0 for role in patterns}
    out["other"] = 0.0
    for f, ns in functions.items():
        name = re.sub(r"\.(isra|constprop|part|cold)\.\d+.*$", "", f)
        role = next((r for r, pat in patterns.items() if re.search(pat, name)), "other")
        out[role] += ns
    return out


def session(art, cpu, log):
    """kernel.kernel_session with this module's options: the veth, the
    timer, the sysctl, all undone on exit."""
    return kernel.kernel_session(art, Options(cpu), log)


def run_checked(fn, log):
    """fn() or the reason the kernel side could not run: (result, None) or
    (None, reason). A failure after the start is a BenchError the caller
    reports in the section (the other sections go on)."""
    try:
        return fn(), None
    except kernel.Skip as e:
        return None, str(e)
    except (BenchError, subprocess.SubprocessError, OSError) as e:
        log("kernel side failed: %s" % e)
        return None, "the kernel side failed here: %s" % str(e)[-300:]
