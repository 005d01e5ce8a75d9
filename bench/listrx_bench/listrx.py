"""Finding and running the listrx binary: command lines, topology, machine."""

import contextlib
import functools
import itertools
import json
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

from .grid import engine_kind, engine_prefetch

# EAL arguments that run on a machine without hugepages or NICs; --eal on
# the command line replaces them (e.g. "-a 0000:3b:00.0" for a real NIC).
DEFAULT_EAL = "--no-huge --no-pci --no-shconf -m 1024"
# The cachegrind runs: a smaller pool (--cg-mbufs) in a smaller heap; the
# simulated I1/branch figures do not depend on them, start-up is shorter
CG_EAL = "--no-huge --no-pci --no-shconf -m 64"
# net_synth's default hints plus the RX timestamp (the TSC at rx_burst),
# which `listrx --latency` needs
SYNTH_TIMESTAMP_HINTS = "hash+csum+ptype+timestamp"


class BenchError(Exception):
    """A user-facing error: says what was wrong and what would be valid."""


def find_binary(explicit=None):
    """--listrx, $LISTRX_BIN, build*/dataplane/listrx next to this package
    or the working directory, then `listrx` on the PATH."""
    if explicit:
        if not os.access(explicit, os.X_OK):
            raise BenchError("--listrx %s: not an executable file" % explicit)
        return os.path.abspath(explicit)
    env = os.environ.get("LISTRX_BIN")
    if env and os.access(env, os.X_OK):
        return os.path.abspath(env)
    roots = [os.getcwd(), os.path.join(os.path.dirname(__file__), "..", "..")]
    for root in roots:
        candidate = os.path.join(root, "build", "dataplane", "listrx")
        if os.access(candidate, os.X_OK):
            return os.path.abspath(candidate)
    on_path = shutil.which("listrx")
    if on_path:
        return on_path
    raise BenchError("listrx binary not found: build it (ninja -C build) or give "
                     "--listrx PATH or LISTRX_BIN=PATH")


def parse_topology(text):
    """`listrx -- --topology` output -> dict (l1i_bytes None when unknown)."""
    topo = {"cpu": None, "cores": None, "hardware_threads": None,
            "l1i_bytes": None, "l1i_line": None, "l1i_assoc": None,
            "l1i_source": None, "l1d_bytes": None, "llc_bytes": None}
    m = re.search(r"^cpu:\s*(.+)$", text, re.M)
    if m:
        topo["cpu"] = m.group(1).strip()
    m = re.search(r"cores:\s*(\d+),\s*hardware threads:\s*(\d+)", text)
    if m:
        topo["cores"], topo["hardware_threads"] = int(m.group(1)), int(m.group(2))
    # "8-way", "fully associative" (-1) or "associativity unknown" (None)
    m = re.search(r"L1i:\s*(\d+)\s*KiB,\s*(\d+)-byte lines,\s*"
                  r"(?:(-?\d+)-way|(fully associative)|associativity unknown)\s*"
                  r"\((?:from )?([^)]*)\)", text)
    if m:
        topo["l1i_bytes"] = int(m.group(1)) * 1024
        topo["l1i_line"] = int(m.group(2))
        topo["l1i_assoc"] = int(m.group(3)) if m.group(3) else (-1 if m.group(4) else None)
        topo["l1i_source"] = m.group(5)
    m = re.search(r"^L1d:\s*(\d+)\s*KiB", text, re.M)
    if m:
        topo["l1d_bytes"] = int(m.group(1)) * 1024
    m = re.search(r"^last-level cache:\s*(\d+)\s*KiB", text, re.M)
    if m:
        topo["llc_bytes"] = int(m.group(1)) * 1024
    return topo


def parse_version(text):
    info = {"listrx_version": None, "build": None, "dpdk_version": None,
            "retpoline": None, "commit": None, "source": None}
    m = re.search(r"listrx (\S+) \(([^)]*) build\)", text)
    if m:
        info["listrx_version"], info["build"] = m.group(1), m.group(2)
    m = re.search(r"^(DPDK .+)$", text, re.M)
    if m:
        info["dpdk_version"] = m.group(1).strip()
    m = re.search(r"retpoline:\s*(\w+)", text)
    if m:
        info["retpoline"] = m.group(1) == "yes"
    # the commit and clone the binary is built from (a binary from before
    # --version said them has neither)
    for key in ("commit", "source"):
        m = re.search(r"^%s: (.+)$" % key, text, re.M)
        if m:
            info[key] = m.group(1).strip()
    return info


# ---- which code measured what ------------------------------------------------

# bench/, the directory this package is in (in a clone: CLONE/bench)
BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@functools.lru_cache(maxsize=None)
def git_clone(path):
    """(top-level directory, `git describe --always --dirty`) of the git
    clone that holds path (a file or a directory); (None, None) outside
    one or without git."""
    d = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
    try:
        top = subprocess.run(["git", "-C", d, "rev-parse", "--show-toplevel"],
                             capture_output=True, text=True, timeout=10)
        if top.returncode != 0:
            return None, None
        desc = subprocess.run(["git", "-C", d, "describe", "--always", "--dirty", "--abbrev=12"],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None, None
    return (os.path.realpath(top.stdout.strip()),
            desc.stdout.strip() if desc.returncode == 0 else None)


def binary_record(path, version):
    """A measured binary: its path, the commit and clone it was built
    from (its --version), the clone that holds it now and that clone's
    commit (they differ when the clone moved on since the build)."""
    clone, commit = git_clone(path) if os.path.exists(path) else (None, None)
    return {"path": path,
            "build_commit": version.get("commit") or unavailable_commit(),
            "build_source": version.get("source"),
            "clone": clone, "clone_commit": commit}


def unavailable_commit():
    return "unavailable: this listrx's --version names no commit (built before it did)"


def provenance(binaries):
    """Which code measured what, for every output: this listrx-bench
    (its directory, clone and commit) and each binary it ran
    (binary_record). binaries: Listrx objects, or (path, --version text)
    pairs for a binary run elsewhere (scale.sh's output)."""
    clone, commit = git_clone(BENCH_DIR)
    out = {"bench": {"path": BENCH_DIR, "clone": clone, "commit": commit}, "binaries": []}
    for b in binaries:
        if isinstance(b, Listrx):
            out["binaries"].append(binary_record(b.binary, b.version()))
        else:
            out["binaries"].append(binary_record(b[0], parse_version(b[1])))
    return out


def _bench_is(mine):
    return "this listrx-bench is %s's (%s)" % (
        mine[0], mine[1] or "no commit") if mine[0] else \
        "this listrx-bench is %s, not in a git clone" % BENCH_DIR


def clone_notice(binary=None, cwd=None):
    """A line saying which clone this listrx-bench is from, when that is not
    the clone of the current directory (cwd) or of the binary it measures;
    None when they are the same (or not clones)."""
    mine = git_clone(BENCH_DIR)
    if binary is not None:
        theirs = git_clone(binary) if os.path.exists(binary) else (None, None)
        if theirs[0] and theirs[0] != mine[0]:
            return "listrx-bench: %s; the binary it measures, %s, is %s's (%s)" % (
                _bench_is(mine), binary, theirs[0], theirs[1] or "no commit")
        return None
    here = git_clone(cwd or os.getcwd())
    if here[0] and here[0] != mine[0]:
        return "listrx-bench: %s, not the current directory's clone %s (%s)" % (
            _bench_is(mine), here[0], here[1] or "no commit")
    return None


_noticed = set()


def notice_once(binary=None):
    """clone_notice on stderr, once per binary (and once for the current
    directory)."""
    key = binary or ""
    if key in _noticed:
        return
    _noticed.add(key)
    line = clone_notice(binary)
    if line:
        print(line, file=sys.stderr)


def cachegrind_i1(topo):
    """--I1=size,assoc,line from the host L1i. Cachegrind needs a known
    associativity and a power-of-two set count; unknown (0, -1) means 8-way,
    the L1i of every x86 core of the last decade (Intel since Sandy Bridge,
    AMD since Zen)."""
    size = topo.get("l1i_bytes") or 32768
    line = topo.get("l1i_line") or 64
    assoc = topo.get("l1i_assoc") or 0
    if assoc <= 0:
        assoc = 8
    sets = size // (assoc * line)
    if sets <= 0 or sets & (sets - 1) or sets * assoc * line != size:
        assoc = 8
    return "%d,%d,%d" % (size, assoc, line)


def sysfs_cache_ways(level, kind, root="/sys/devices/system/cpu/cpu0/cache"):
    """Associativity of CPU 0's cache of that level and type (Data, Instruction,
    Unified) from sysfs, which hwloc reads too; None when not there."""
    for index in sorted(os.listdir(root)) if os.path.isdir(root) else ():
        try:
            with open(os.path.join(root, index, "level")) as f:
                lvl = int(f.read())
            with open(os.path.join(root, index, "type")) as f:
                typ = f.read().strip()
            with open(os.path.join(root, index, "ways_of_associativity")) as f:
                ways = int(f.read())
        except (OSError, ValueError):
            continue
        if lvl == level and typ == kind and ways > 0:
            return ways
    return None


def _cache_spec(size, assoc, line, default_assoc):
    """size,assoc,line with a power-of-two set count, as valgrind demands."""
    if not assoc or assoc <= 0:
        assoc = default_assoc
    sets = size // (assoc * line)
    if sets <= 0 or sets & (sets - 1) or sets * assoc * line != size:
        assoc = default_assoc
        sets = size // (assoc * line)
        if sets <= 0 or sets & (sets - 1) or sets * assoc * line != size:
            # round the set count down to a power of two (valgrind does the
            # same with a cpuid-reported LL it cannot model)
            sets = 1 << max(sets.bit_length() - 1, 0)
            size = sets * assoc * line
    return "%d,%d,%d" % (size, assoc, line)


def cachegrind_d1(topo, ways=None):
    """--D1 from the host L1d (hwloc's size, sysfs ways; 8-way when unknown,
    the L1d of every x86 core of the last decade but Intel's 12-way 48 KB)."""
    size = topo.get("l1d_bytes") or 32768
    line = topo.get("l1i_line") or 64
    return _cache_spec(size, ways if ways is not None else sysfs_cache_ways(1, "Data"), line, 8)


def cachegrind_ll(topo, ways=None):
    """--LL from the host last-level cache (hwloc's size, sysfs ways, 16-way
    when unknown)."""
    size = topo.get("llc_bytes") or 8 * 1024 * 1024
    line = topo.get("l1i_line") or 64
    if ways is None:
        ways = sysfs_cache_ways(3, "Unified") or sysfs_cache_ways(2, "Unified")
    return _cache_spec(size, ways, line, 16)


# A cache geometry for cachegrind instead of the host's: what a test that
# needs misses runs under, or what another CPU would see. Also read from the
# environment, so that a whole test suite can run under one geometry.
CG_CACHES_ENV = "LISTRX_CG_CACHES"
CACHE_NAMES = ("I1", "D1", "LL")


def parse_cache_geometry(text):
    """'I1=32768,8,64 D1=49152,12,64' (any of I1, D1, LL; separated by spaces
    or ';'; each size,assoc,line in bytes as valgrind's --I1/--D1/--LL) ->
    {"I1": "32768,8,64", "D1": "49152,12,64"}. Valgrind wants a power-of-two
    line size and set count: anything else is refused here, with the
    geometry named, rather than by valgrind in every run."""
    out = {}
    for item in re.split(r"[;\s]+", (text or "").strip()):
        if not item:
            continue
        name, eq, spec = item.partition("=")
        name = name.strip().upper()
        if not eq or name not in CACHE_NAMES:
            raise BenchError("cache geometry %r: want NAME=size,assoc,line with NAME one of "
                             "I1, D1, LL (e.g. D1=49152,12,64)" % item)
        fields = spec.split(",")
        if len(fields) != 3 or not all(f.strip().isdigit() and int(f) > 0 for f in fields):
            raise BenchError("cache geometry %s=%s: want three positive integers "
                             "size,assoc,line (bytes, ways, bytes)" % (name, spec))
        size, assoc, line = (int(f) for f in fields)
        sets = size // (assoc * line)
        if line & (line - 1) or line < 16 or sets <= 0 or sets & (sets - 1) or \
                sets * assoc * line != size:
            raise BenchError("cache geometry %s=%s: size / (assoc x line) must be a power "
                             "of two and the line a power of two >= 16, as valgrind "
                             "requires" % (name, spec))
        if name in out:
            raise BenchError("cache geometry %r: %s given twice" % (text, name))
        out[name] = "%d,%d,%d" % (size, assoc, line)
    if text and text.strip() and not out:
        raise BenchError("cache geometry %r: empty" % text)
    return out


def cachegrind_caches(topo, given=None):
    """{"I1": ..., "D1": ..., "LL": ...}: the simulated caches of the
    cachegrind backend: the ones given (--cg-caches, $LISTRX_CG_CACHES),
    the host's geometry for the others."""
    caches = {"I1": cachegrind_i1(topo), "D1": cachegrind_d1(topo), "LL": cachegrind_ll(topo)}
    caches.update(given or {})
    return caches


def caches_source(given):
    """How a run's cachegrind geometry was chosen, for its report."""
    if not given:
        return "host (hwloc sizes, sysfs ways)"
    return "given (%s)%s" % (" ".join("%s=%s" % kv for kv in sorted(given.items())),
                             "" if len(given) == len(CACHE_NAMES) else ", host for the rest")


class Listrx:
    def __init__(self, binary, eal=DEFAULT_EAL, lcores=None, log_dir=None):
        self.binary = binary
        notice_once(binary)
        self.eal = shlex.split(eal) if isinstance(eal, str) else list(eal)
        self.lcores = lcores or default_lcores()
        self.log_dir = log_dir
        self._topology = None
        self._version = None
        self._stages = None
        self._ids = itertools.count(1)  # file prefixes; next() is atomic (parallel runs)

    def _query(self, flag):
        proc = subprocess.run([self.binary, "--", flag], capture_output=True,
                              text=True, timeout=60)
        return proc.stdout + proc.stderr

    def topology(self):
        if self._topology is None:
            self._topology = parse_topology(self._query("--topology"))
        return self._topology

    def version(self):
        if self._version is None:
            self._version = parse_version(self._query("--version"))
        return self._version

    def stage_list(self):
        """The binary's stages, as `listrx -- --list-stages --json -` gives
        them: [{"name", "keys", "counters", "provides", "needs",
        "shortcut"}]."""
        if self._stages is None:
            proc = subprocess.run([self.binary, "--", "--list-stages", "--json", "-"],
                                  capture_output=True, text=True, timeout=60)
            try:
                self._stages = json.loads(proc.stdout)["stages"]
            except (ValueError, KeyError, TypeError):
                raise BenchError("%s -- --list-stages --json -: no stage list (exit %d: %s)"
                                 % (self.binary, proc.returncode,
                                    (proc.stderr or proc.stdout).strip()[-200:]))
        return self._stages

    def stages(self):
        """Names of the stages the binary has."""
        return [s["name"] for s in self.stage_list()]

    # ---- command lines -------------------------------------------------
    def eal_args(self, profile, lcores=None, timestamps=False, eal=None):
        args = ["-l", lcores or self.lcores] + (shlex.split(eal) if eal is not None
                                                 else self.eal)
        args += ["--file-prefix", "lrxbench%d_%d" % (os.getpid(), next(self._ids))]
        return args + profile_eal(profile, timestamps)

    def command(self, spec, json_path, packets=None, duration=None,
                stats_level=None, lcores=None, latency=False, eal=None, extra=()):
        cmd = [self.binary] + self.eal_args(spec["profile"], lcores, timestamps=latency,
                                            eal=eal)
        cmd += ["--"] + profile_listrx(spec["profile"])
        if latency:
            cmd += ["--latency"]
        cmd += ["--engine", engine_kind(spec["engine"]), "--burst", str(spec["burst"]),
                "--pipeline", spec["pipeline_arg"],
                "--footprint", str(spec["footprint_kb"]),
                "--stats-level", stats_level or spec.get("stats_level", "counters"),
                "--stats-period", "0", "--json", json_path]
        if packets:
            cmd += ["--packets", str(packets)]
        if duration:
            cmd += ["--duration", str(duration)]
        sets = list(spec.get("sets", ()))
        if engine_prefetch(spec["engine"]) is not None:
            sets.append("pipeline.prefetch=%d" % engine_prefetch(spec["engine"]))
        # engines are compared on the same input: GRO's age flush reads the
        # TSC by default (as the kernel's jiffies), which lets merges differ
        # with timing; the poll clock makes them equal across engines
        if "gro" in spec["pipeline_arg"].split(",") and \
                not any(a.startswith("stage.gro.clock=") for a in sets):
            sets.append("stage.gro.clock=polls")
        for assignment in sets:
            cmd += ["--set", assignment]
        return cmd + list(extra)

    def run(self, cmd, json_path, prefix=(), timeout=600, log_name=None):
        """Runs cmd (optionally under prefix, e.g. perf stat or valgrind);
        returns (summary dict or None, error string or None, info dict)."""
        try:
            return self._run(cmd, json_path, prefix, timeout, log_name)
        finally:
            with signals_held():
                remove_runtime_dir(cmd)

    def _run(self, cmd, json_path, prefix=(), timeout=600, log_name=None):
        full = list(prefix) + list(cmd)
        usage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.time()
        try:
            proc = subprocess.run(full, capture_output=True, text=True,
                                  timeout=timeout)
            out, rc = proc.stdout + proc.stderr, proc.returncode
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b"")
            out = out.decode(errors="replace") if isinstance(out, bytes) else out
            rc = "timeout after %ds" % timeout
        t1 = time.time()
        usage1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        info = {"command": shlex.join(full), "wall_s": t1 - t0,
                "start_time": t0, "end_time": t1,
                "cpu_s": (usage1.ru_utime - usage0.ru_utime)
                + (usage1.ru_stime - usage0.ru_stime),
                "output": out}
        if self.log_dir and log_name:
            with open(os.path.join(self.log_dir, log_name + ".log"), "w") as f:
                f.write("$ " + info["command"] + "\n" + out)
        if rc != 0:
            tail = " | ".join(line for line in out.strip().splitlines()[-3:])
            return None, "exit %s: %s" % (rc, tail[-300:]), info
        try:
            with open(json_path) as f:
                summary = json.load(f)
        except (OSError, ValueError) as e:
            return None, "no JSON summary (%s)" % e, info
        if summary.get("stopped_by_signal"):
            # cut short: its figures cover part of the run, never a repetition
            return None, "stopped by a signal (listrx's stopped_by_signal): not a " \
                "measurement", info
        return summary, None, info


# listrx's warning when a polling lcore's CPU was busy before the run
# started (another poll-mode process, another build): the run shares it
SHARED_CPU = re.compile(r"listrx: warning: polling lcore \d+ runs on CPU \d+, which was "
                        r"(\d+(?:\.\d+)?) % busy before the start")


def shared_cpu_pct(output):
    """How busy (%) the busiest polling CPU was before the start, when
    listrx warned that the run shares it; None when it did not warn."""
    busy = [float(m.group(1)) for m in SHARED_CPU.finditer(output or "")]
    return max(busy) if busy else None


def eal_runtime_dir(file_prefix):
    """The directory EAL makes for a file prefix (eal_create_runtime_dir():
    /var/run/dpdk/PREFIX as root, else $XDG_RUNTIME_DIR or /tmp + /dpdk/PREFIX)."""
    base = "/var/run" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", file_prefix)


def remove_runtime_dir(cmd):
    """Removes the EAL runtime directory of a finished run started with one of
    our own prefixes (lrx...): EAL leaves it behind even with --no-shconf and
    rte_eal_cleanup(). Also on Ctrl-C (called from a finally)."""
    cmd = list(cmd)
    for i, a in enumerate(cmd[:-1]):
        if a == "--file-prefix" and cmd[i + 1].startswith("lrx"):
            shutil.rmtree(eal_runtime_dir(cmd[i + 1]), ignore_errors=True)


def allowed_cpus():
    """The CPUs this process may run on (its affinity: a container or
    taskset may leave out CPU 0), in order."""
    try:
        return sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return list(range(os.cpu_count() or 1))


def stop_process(proc, sig=signal.SIGINT, timeout=30):
    """Ends a child as Ctrl-C would (sig, by default SIGINT: it prints its
    summary and cleans up), then SIGKILL after timeout seconds; returns
    its exit status."""
    if proc.poll() is None:
        try:
            proc.send_signal(sig)
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
    return proc.wait()


# the signals that end a run from outside: Ctrl-C, kill, a closed terminal
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def signals_held(restore=None):
    """Clean-up that must finish: Ctrl-C, SIGTERM and SIGHUP wait until it
    has (a second Ctrl-C during the clean-up of the first cannot cut it
    short and leave a namespace or a sysctl behind), then arrive, to the
    handlers of `restore` ({signal: handler}) or the ones in place before.
    They are blocked, so that the commands the clean-up runs inherit the
    mask and finish too, and deferred by a handler of their own, for one
    the kernel hands to another thread (Python runs it in this one)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals interrupt only the main thread (Python runs handlers there)
        return
    caught = []
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    old = {s: signal.signal(s, lambda signum, frame: caught.append(signum))
           for s in STOP_SIGNALS}
    try:
        yield
    finally:
        old.update(restore or {})
        for s, h in old.items():
            signal.signal(s, h)
        waiting = signal.sigpending()
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)  # blocked ones arrive now
        for s in dict.fromkeys(caught):
            if s not in waiting:
                os.kill(os.getpid(), s)


def default_lcores():
    """Main lcore + one worker on the first two CPUs this process may use
    (EAL pins each lcore of -l to the CPU of its number); the main lcore
    alone when there is one."""
    cpus = allowed_cpus()
    return "%d,%d" % (cpus[0], cpus[1]) if len(cpus) >= 2 else "%d" % cpus[0]


def profile_eal(profile, timestamps=False):
    """EAL device arguments for a traffic profile:
    null -> DPDK net_null (no copy); none or config:FILE -> nothing (the
    ports come from --eal or the config); a devargs string (net_...) is used
    as is; any other word is a net_synth profile. timestamps: net_synth
    stamps packets with the TSC (hints=...+timestamp) unless the devargs
    choose hints themselves; other devices are left as they are."""
    if profile == "null":
        return ["--vdev", "net_null0,copy=0"]
    if profile == "none" or profile.startswith("config:"):
        return []
    if profile.startswith("net_"):
        if timestamps and profile.startswith("net_synth") and "hints=" not in profile:
            profile += ",hints=" + SYNTH_TIMESTAMP_HINTS
        return ["--vdev", profile]
    devargs = "net_synth0,profile=" + profile
    if timestamps:
        devargs += ",hints=" + SYNTH_TIMESTAMP_HINTS
    return ["--vdev", devargs]


def profile_listrx(profile):
    if profile.startswith("config:"):
        return ["--config", profile[len("config:"):]]
    return []


def machine_info(lx):
    """What the report prints about the machine and build."""
    info = {"hostname": platform.node(), "kernel": platform.release(),
            "python": platform.python_version(), "binary": lx.binary,
            "lcores": lx.lcores, "eal": " ".join(lx.eal)}
    info.update(lx.topology())
    info.update(lx.version())
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.M)
            if m:
                info["cpu_model"] = m.group(1).strip()
    except OSError:
        pass
    try:
        with open("/sys/devices/system/cpu/cpufreq/boost") as f:
            info["turbo"] = "on" if f.read().strip() == "1" else "off"
    except OSError:
        info["turbo"] = "unknown (no cpufreq boost control: VM or intel_pstate)"
    try:
        with open("/proc/cmdline") as f:
            m = re.search(r"isolcpus=(\S+)", f.read())
            info["isolcpus"] = m.group(1) if m else "none"
    except OSError:
        pass
    # the binary's clone as it is now (provenance() has the build's commit)
    commit = git_clone(lx.binary)[1] if os.path.exists(lx.binary) else None
    if commit:
        info["git"] = commit
    return info
