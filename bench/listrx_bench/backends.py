"""Counter backends and the parsers of their tools' output.

Every backend either measures or says "unavailable: <reason>" for each of
its figures; nothing is ever reported as 0 because a counter was missing.

  time        wall clock and TSC figures from listrx's JSON summary
  perf        listrx's own counters (--pmu): a perf_event_open group per
              worker around the poll loop (cycles, instructions, L1i misses,
              branch misses, iTLB misses), and per stage with --pmu-stages
              (rdpmc around each stage call of the burst/hybrid/graph engines)
  perfstat    `perf stat -x,` around the whole listrx process, differential
              over two packet counts (a cross-check of perf on a real PMU)
  pcm         Intel PCM (`pcm DELAY -csv=FILE`) spawned around a timed run,
              rows aligned with the run's measuring window
  cachegrind  valgrind --tool=cachegrind with the host L1i geometry,
              differential over two packet counts, per stage by function
  rapl        package energy from /sys/class/powercap (T^2/Power)
"""

import csv
import datetime
import glob
import io
import os
import re
import shutil
import subprocess
import time

from .listrx import stop_process
from .stats import is_unavailable, unavailable, number

BACKENDS = ("time", "perf", "perfstat", "pcm", "cachegrind", "rapl")

# ---- perf ------------------------------------------------------------------

PERF_EVENTS = ("cycles", "instructions", "L1-icache-load-misses", "branch-misses",
               "iTLB-load-misses")
# the sweep's default group: the I side and the D side of listification in
# one group of six (AMD Zen has six general counters; Intel four plus the
# fixed cycles/instructions ones)
PERF_DEFAULT_EVENTS = ("cycles", "instructions", "L1-icache-load-misses", "branch-misses",
                       "L1-dcache-load-misses", "LLC-load-misses")
PERF_SUFFIX = {"cycles": "cycles_per_packet",
               "instructions": "instructions_per_packet",
               "L1-icache-load-misses": "l1i_misses_per_packet",
               "branch-misses": "branch_misses_per_packet",
               "iTLB-load-misses": "itlb_misses_per_packet",
               "L1-dcache-load-misses": "l1d_misses_per_packet",
               "LLC-load-misses": "llc_misses_per_packet"}


def perf_key(event, prefix="perf_"):
    """The result column of an event: perf_cycles_per_packet, ..."""
    return prefix + PERF_SUFFIX.get(event, "%s_per_packet" % re.sub(r"\W+", "_", event))


PERF_MEASURES = {e: perf_key(e) for e in PERF_SUFFIX}


def ipc_figure(fig, prefix, who):
    cyc, ins = fig.get(prefix + "cycles_per_packet"), fig.get(prefix + "instructions_per_packet")
    if isinstance(cyc, float) and isinstance(ins, float) and cyc > 0:
        return ins / cyc
    if isinstance(cyc, str):
        return cyc
    return ins if isinstance(ins, str) else unavailable("%s: no cycles" % who)


def pmu_figures(summary, events):
    """Figures of listrx's own counters (the summary's "pmu" section, written
    with --pmu): per event per packet, IPC, and with --pmu-stages each stage's
    per-packet counts as stage.NAME.perf_*; unavailable with listrx's reason
    wherever it counted nothing."""
    pmu = summary.get("pmu")
    fig = {}
    if not isinstance(pmu, dict):
        reason = unavailable("perf: listrx wrote no pmu section (a listrx without --pmu?)")
        for e in events:
            fig[perf_key(e)] = reason
        fig["perf_ipc"] = reason
        return fig
    fig["perf_source"] = pmu.get("source")
    fig["perf_mode"] = pmu.get("mode")
    fig["perf_multiplexed"] = pmu.get("multiplexed")
    by_name = {ev.get("name"): ev for ev in pmu.get("events", [])}
    for e in events:
        ev = by_name.get(e)
        if ev is None:
            fig[perf_key(e)] = unavailable("perf: listrx did not report %s" % e)
        elif ev.get("per_packet") is None:
            status = ev.get("status") or "unavailable: not counted"
            fig[perf_key(e)] = "unavailable: perf: %s: %s" % (
                e, status[len("unavailable: "):] if status.startswith("unavailable: ") else status)
        else:
            fig[perf_key(e)] = float(ev["per_packet"])
    fig["perf_ipc"] = ipc_figure(fig, "perf_", "perf")
    stages_status = pmu.get("stages_status", "off")
    fig["perf_stages_status"] = stages_status
    for st in pmu.get("stages", []):
        name = st.get("name")
        per = st.get("per_packet", {})
        for e in events:
            v = per.get(e)
            key = "stage.%s.%s" % (name, perf_key(e))
            if v is not None:
                fig[key] = float(v)
            elif not st.get("attributed", True):
                fig[key] = unavailable("perf: stage %s runs per packet in this engine "
                                       "(hybrid tail): not read around" % name)
            else:
                fig[key] = fig.get(perf_key(e)) if isinstance(fig.get(perf_key(e)), str) \
                    else unavailable("perf: stage %s: no packets" % name)
        stage_fig = {k[len("stage.%s." % name):]: v for k, v in fig.items()
                     if k.startswith("stage.%s." % name)}
        fig["stage.%s.perf_ipc" % name] = ipc_figure(stage_fig, "perf_", "perf")
    return fig


def parse_perf_stat(text):
    """`perf stat -x,` output -> {event: count or "unavailable: ..."}.
    Fields: value, unit, event, run time, % running, [metric, metric unit].
    A value of <not supported> (no such PMU event: VMs, this machine) or
    <not counted> (the event never ran, e.g. multiplexed out) is unavailable."""
    counts = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        fields = next(csv.reader([line]))
        if len(fields) < 3:
            continue
        value, event = fields[0].strip(), fields[2].strip()
        event = re.sub(r":[ukhHGp]+$", "", event)
        if not event:
            continue
        if value.startswith("<not supported>"):
            counts[event] = unavailable("perf: %s not supported (no PMU event on this CPU/VM)"
                                        % event)
        elif value.startswith("<not counted>"):
            counts[event] = unavailable("perf: %s not counted" % event)
        else:
            v = number(value)
            if v is None:
                continue
            pct = number(fields[4]) if len(fields) > 4 else None
            if pct is not None and 0 < pct < 100:
                v = v * 100.0 / pct  # scale a multiplexed count as perf does
            counts[event] = v
    return counts


def perf_figures(counts_small, counts_large, packets_small, packets_large, events,
                 prefix="perfstat_"):
    """perfstat: per-packet figures from two runs' counts (difference /
    packets difference, so start-up cancels), IPC, and unavailable per
    event."""
    fig = {}
    dp = packets_large - packets_small
    for event in events:
        key = perf_key(event, prefix)
        a, b = counts_small.get(event), counts_large.get(event)
        if isinstance(b, str):
            fig[key] = b
        elif isinstance(a, str):
            fig[key] = a
        elif a is None or b is None:
            fig[key] = unavailable("perf: %s missing from perf output" % event)
        elif dp <= 0:
            fig[key] = unavailable("perf: packet counts of the two runs do not differ")
        else:
            fig[key] = (b - a) / dp
    fig[prefix + "ipc"] = ipc_figure(fig, prefix, "perf")
    return fig


def perf_probe():
    return None  # listrx reports each event's availability itself


def perfstat_probe():
    if not shutil.which("perf"):
        return "perf not installed (Debian: linux-perf)"
    return None


# ---- cachegrind --------------------------------------------------------------

# Function name -> group, for per-stage attribution (inlined helpers count
# in their caller). The stages are the binary's (listrx --list-stages
# --json): a stage's functions are named after it (lrx_gro_process,
# gro_flush, build_meta_...; stages/ conventions), plus the code it calls
# under other names, below. The rest is the dataplane's and the libraries'.
STAGE_CODE = {"l3-demux": ("l3_", "skb_csum"),          # net/ipv4 style helpers
              "xdp": ("rte_bpf", "__rte_bpf", "bpf_"),  # DPDK's eBPF VM and helpers
              "rte-gro": ("gro_rte",)}                   # stages/gro's rte_gro wrapper
CG_GROUPS = (
    ("ballast", re.compile(r"^lrx_ballast")),
    ("engine", re.compile(r"^(engine_|graph_|lrx_pipeline_|pipeline_|rte_graph|__rte_node)")),
    ("sink", re.compile(r"^(lrx_sink|sink_)")),
    ("driver", re.compile(r"^(eth_null|null_|synth_|rte_eth_|eth_|rte_pktmbuf|rte_mempool|"
                          r"common_ring|bucket_|rte_ring)")),
    # Debian's DPDK shared libraries (PMDs, mempool, ring) are stripped:
    # cachegrind names their functions ???, callgrind by address
    ("dpdk-unsymbolled", re.compile(r"^(\?\?\?|0x[0-9a-fA-F]+)$")),
    ("libc", re.compile(r"^(__)?(mem|str)[a-z]*(_[a-z0-9_]+)?$")),
)


def stage_prefixes(stages):
    """[(prefix, stage)] for the binary's stage names, longest first (the
    longest prefix a function starts with names its stage: gro_rte_init is
    rte-gro's, gro_flush gro's)."""
    out = []
    for name in stages:
        stem = name.replace("-", "_")
        out += [("lrx_" + stem, name), (stem + "_", name)]
        out += [(p, name) for p in STAGE_CODE.get(name, ())]
    return sorted(out, key=lambda p: -len(p[0]))


def cg_group(fn, stages=()):
    """The group of a function: ballast, one of the stages, engine, sink,
    driver, dpdk-unsymbolled, libc or other."""
    if CG_GROUPS[0][1].search(fn):
        return CG_GROUPS[0][0]
    for prefix, name in stage_prefixes(stages):
        if fn.startswith(prefix):
            return name
    for name, rx in CG_GROUPS[1:]:
        if rx.search(fn):
            return name
    return "other"


def parse_cachegrind(text):
    """A cachegrind.out file -> {"events": [...], "totals": {event: n},
    "functions": {fn: {event: n}}}. Cost lines are "line n n n ..." (trailing
    zero events may be omitted, there and in the totals); "summary:" gives
    the totals."""
    return _parse_costs(text, callgrind=False)


def parse_callgrind(text, entries=None):
    """A callgrind.out file (--compress-strings=no --compress-pos=no) ->
    the same shape as parse_cachegrind: self cost per function. The cost
    line right after a "calls=" line is the inclusive cost of that call
    (already counted as self cost in the callee) and is skipped. entries:
    {object path: {address: name}}: with --dump-instr=yes, "entered" gives
    how often each of these instructions ran (a function's first
    instruction: how often it was entered, by call or jump)."""
    return _parse_costs(text, callgrind=True, entries=entries)


def _parse_costs(text, callgrind, entries=None):
    """The one reader of both formats: cachegrind's (one position column,
    the line) and callgrind's ("positions:" columns, "calls=" lines whose
    next cost line is inclusive, "ob=" objects)."""
    events, totals, functions = [], {}, {}
    entered = {name: 0 for addrs in (entries or {}).values() for name in addrs.values()}
    watch = {}
    positions, fn, skip_next = 1, None, False
    for line in text.splitlines():
        if line.startswith("events:"):
            events = line.split()[1:]
        elif line.startswith("positions:"):
            positions = len(line.split()) - 1
        elif line.startswith("ob="):
            watch = (entries or {}).get(os.path.realpath(line[3:].strip()), {})
        elif line.startswith("fn="):
            fn = line[3:]
            functions.setdefault(fn, {e: 0 for e in events})
        elif callgrind and line.startswith("calls="):
            skip_next = True
        elif line.startswith(("summary:", "totals:")):
            # like a cost line, the totals leave out trailing zero events
            # (callgrind's dump_info: a retpoline build's Bi is 0, every
            # indirect call goes through a thunk): an event the "events:"
            # line names and the totals do not is 0, not missing
            vals = [int(v) for v in line.split()[1:]]
            totals = {e: vals[i] if i < len(vals) else 0 for i, e in enumerate(events)}
        elif line and (line[0].isdigit() or (callgrind and line[0] in "+-*")) \
                and fn is not None:
            if skip_next:
                skip_next = False
                continue
            fields = line.split()
            vals = fields[positions:]
            acc = functions[fn]
            for e, v in zip(events, vals):
                acc[e] = acc.get(e, 0) + int(v)
            if watch and fields[0].startswith("0x") and vals:
                name = watch.get(int(fields[0], 16))
                if name:
                    entered[name] += int(vals[0])
    if not totals and functions:
        for acc in functions.values():
            for e, v in acc.items():
                totals[e] = totals.get(e, 0) + v
    out = {"events": events, "totals": totals, "functions": functions}
    if entries is not None:
        out["entered"] = entered
    return out


# The retpoline build (-mindirect-branch=thunk) calls indirectly through
# __x86_indirect_thunk_<reg>: a direct call whose `ret` lands on the target,
# so cachegrind's Bi (indirect branches) does not see these. Each entry into
# a thunk is one indirect call (or jump) of that build.
RETPOLINE_THUNK = re.compile(r"^__x86_indirect_thunk_\w+$")


def retpoline_thunks(binary):
    """{realpath: {address: name}} of the binary's retpoline thunks, from its
    symbol table (nm); {} entries when it has none (a plain build); None
    when nm cannot read it."""
    try:
        out = subprocess.run(["nm", "--defined-only", binary], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return {os.path.realpath(binary): nm_thunks(out.stdout)}


def nm_thunks(text):
    """{address: name} of the retpoline thunks in nm's output."""
    thunks = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and RETPOLINE_THUNK.match(parts[2]):
            thunks[int(parts[0], 16)] = parts[2]
    return thunks


def cg_groups(parsed, stages=()):
    groups = {}
    for fn, acc in parsed["functions"].items():
        g = groups.setdefault(cg_group(fn, stages), {})
        for e, v in acc.items():
            g[e] = g.get(e, 0) + v
    return groups


CG_MEASURES = (("Ir", "ir"), ("I1mr", "i1_misses"), ("Bi", "indirect_branches"),
               ("Bim", "indirect_mispredicts"), ("Bc", "cond_branches"),
               ("Bcm", "cond_mispredicts"), ("Dr", "data_reads"), ("Dw", "data_writes"),
               ("D1mr", "d1_read_misses"), ("D1mw", "d1_write_misses"))
# Sums of events: the data side (D1 read + write misses) and every
# last-level miss (instruction fetch, read, write)
CG_SUMS = (("d1_misses", ("D1mr", "D1mw")), ("ll_misses", ("ILmr", "DLmr", "DLmw")))
# per stage (function group): the I-side savings and the D-side costs
CG_STAGE_MEASURES = (("ir", ("Ir",)), ("i1_misses", ("I1mr",)), ("indirect_branches", ("Bi",)),
                     ("d1_misses", ("D1mr", "D1mw")), ("ll_misses", ("ILmr", "DLmr", "DLmw")))


def cachegrind_figures(small, large, packets_small, packets_large, stages=()):
    """Per-packet figures: (large - small) / (packets_large - packets_small).
    The small run carries the same start-up (EAL init, pools, pipeline
    creation, exit) so it cancels; what remains is the cost of the extra
    packets only. small=None, packets_small=0: a callgrind window run, whose
    counts already cover only the measured packets."""
    dp = packets_large - packets_small
    if dp <= 0:
        return {"cg_status": unavailable("cachegrind: the two runs received the same "
                                         "number of packets")}
    if small is None:
        small = {"totals": {}, "functions": {}}
    fig = {}
    for event, name in CG_MEASURES:
        if event not in large["totals"]:
            fig["cg_%s_per_packet" % name] = unavailable(
                "cachegrind: no %s event (needs --cache-sim=yes --branch-sim=yes)" % event)
            continue
        fig["cg_%s_per_packet" % name] = (large["totals"][event]
                                          - small["totals"].get(event, 0)) / dp
    for name, events in CG_SUMS:
        missing = [e for e in events if e not in large["totals"]]
        fig["cg_%s_per_packet" % name] = unavailable(
            "cachegrind: no %s event (needs --cache-sim=yes)" % ",".join(missing)) if missing \
            else sum(large["totals"][e] - small["totals"].get(e, 0) for e in events) / dp
    # the indirect calls of a retpoline build: thunk entries, besides the
    # indirect branches cachegrind sees (those of libraries built without
    # retpolines); a plain build has no thunk: its Bi is all of them
    if "entered" in large:
        thunk = sum(large["entered"].values()) / dp
        fig["cg_thunk_calls_per_packet"] = thunk
        bi = fig.get("cg_indirect_branches_per_packet")
        fig["cg_indirect_per_packet"] = bi + thunk if isinstance(bi, float) else bi
    else:
        reason = unavailable("cachegrind: thunk calls need the callgrind window "
                             "(--cg-method window) and nm")
        fig["cg_thunk_calls_per_packet"] = reason
        fig["cg_indirect_per_packet"] = reason
    gs, gl = cg_groups(small, stages), cg_groups(large, stages)
    for group in sorted(gl):
        for name, events in CG_STAGE_MEASURES:
            if name in ("d1_misses", "ll_misses") and not any(
                    e in large["totals"] for e in events):
                continue
            value = sum(gl[group].get(e, 0) - gs.get(group, {}).get(e, 0) for e in events) / dp
            fig["cg_stage.%s.%s_per_packet" % (group, name)] = value
    return fig


def cachegrind_probe():
    if not shutil.which("valgrind"):
        return "valgrind not installed (Debian: valgrind)"
    return None


def cache_args(i1, d1=None, ll=None):
    """valgrind's simulated caches: the host's L1i, and its L1d and
    last-level cache when given (else valgrind's cpuid guess)."""
    return ["--I1=" + i1] + (["--D1=" + d1] if d1 else []) + (["--LL=" + ll] if ll else [])


def callgrind_window_prefix(out_file, i1, d1=None, ll=None):
    """callgrind with the same cache and branch simulation as cachegrind,
    instrumentation and collection switched on by listrx --measure-from
    (start-up runs uninstrumented: several times faster)."""
    return ["valgrind", "--tool=callgrind", "--cache-sim=yes", "--branch-sim=yes"] + \
        cache_args(i1, d1, ll) + ["--instr-atstart=no", "--collect-atstart=no",
                                  "--compress-strings=no", "--compress-pos=no",
                                  "--dump-instr=yes", "--callgrind-out-file=" + out_file]


def cachegrind_prefix(out_file, i1, d1=None, ll=None):
    return ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--branch-sim=yes"] + \
        cache_args(i1, d1, ll) + ["--cachegrind-out-file=" + out_file]


# ---- PCM -------------------------------------------------------------------

PCM_FAILURES = (
    # a VM without a virtual PMU (Intel CPU, hypervisor hides the counters)
    (re.compile(r"vPMU is not enabled", re.I),
     "pcm: vPMU is not enabled in the hypervisor (this VM exposes no PMU to count with)"),
    (re.compile(r"unsupported processor", re.I),
     "pcm: unsupported processor (PCM needs an Intel CPU)"),
    (re.compile(r"no MSR or PCI CFG space access|Can not access CPUs Model Specific", re.I),
     "pcm: no MSR access (needs root and `modprobe msr`)"),
    (re.compile(r"NMI watchdog", re.I),
     "pcm: NMI watchdog holds a counter (echo 0 > /proc/sys/kernel/nmi_watchdog)"),
)


def pcm_failure_reason(output, rc):
    """PCM's own reason for refusing to run: a known one, else its first
    ERROR line, else its last line."""
    for rx, reason in PCM_FAILURES:
        if rx.search(output):
            return reason
    lines = [l.strip() for l in output.strip().splitlines() if l.strip()]
    errors = [l for l in lines if re.match(r"error\b", l, re.I)]
    return "pcm: exit %s: %s" % (rc, (errors or lines or ["no output"])[0 if errors else -1][:200])


def parse_pcm_csv(text):
    """PCM's CSV (pcm DELAY -csv=FILE): two header rows, the first naming
    the group of each column (System, Socket 0, Core0 (Socket 0), ...), the
    second the metric (Date, Time, EXEC, IPC, L3MISS, ...). Returns a list
    of rows {"time": datetime or None, (group, metric): float}. Older PCM
    versions separate with ';'; "N/A" cells are left out."""
    lines = [l for l in text.splitlines() if l.strip()]
    if len(lines) < 3:
        return []
    sep = ";" if lines[1].count(";") > lines[1].count(",") else ","
    rows = list(csv.reader(io.StringIO("\n".join(lines)), delimiter=sep))
    groups, names = rows[0], rows[1]
    keys, group = [], ""
    for i, name in enumerate(names):
        g = groups[i].strip() if i < len(groups) and groups[i].strip() else group
        group = g
        keys.append((g, name.strip()))
    out = []
    for row in rows[2:]:
        rec, date, clock = {}, None, None
        for (g, name), cell in zip(keys, row):
            cell = cell.strip()
            if name == "Date":
                date = cell
            elif name == "Time":
                clock = cell
            elif name:
                v = number(cell)
                if v is not None:
                    rec[(g, name)] = v
        rec["time"] = _pcm_time(date, clock)
        out.append(rec)
    return out


def _pcm_time(date, clock):
    if not date or not clock:
        return None
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S"):
        try:
            return datetime.datetime.strptime(date + " " + clock, fmt)
        except ValueError:
            pass
    return None


def pcm_figures(rows, start, end, core, packets, mpps):
    """Figures from the PCM rows inside [start, end] (local datetimes):
    IPC of the worker core (mean), L2/L3 misses per packet (PCM prints them
    in millions per interval), package energy (J) and T^2/Power."""
    inside = [r for r in rows if r["time"] is not None and start <= r["time"] <= end]
    if not inside:
        return {"pcm_status": unavailable("pcm: no CSV row inside the run's window")}
    core_group = None
    for key in inside[0]:
        if isinstance(key, tuple) and re.match(r"Core\s*%d\b" % core, key[0]):
            core_group = key[0]
            break
    fig = {"pcm_rows": len(inside)}

    def col(group, name):
        vals = [r[(group, name)] for r in inside if (group, name) in r]
        return vals or None

    ipc = col(core_group, "IPC") if core_group else None
    fig["pcm_ipc"] = sum(ipc) / len(ipc) if ipc else unavailable(
        "pcm: no IPC column for core %d" % core)
    for metric, key in (("L2MISS", "pcm_l2_misses_per_packet"),
                        ("L3MISS", "pcm_l3_misses_per_packet")):
        vals = col(core_group, metric) if core_group else None
        fig[key] = (sum(vals) * 1e6 / packets if vals and packets else
                    unavailable("pcm: no %s column for core %d" % (metric, core)))
    energy = col("System", "Proc Energy (Joules)")
    if not energy:
        energy_keys = {k for r in inside for k in r
                       if isinstance(k, tuple) and k[0] == "Proc Energy (Joules)"}
        energy = [sum(r.get(k, 0) for k in energy_keys) for r in inside] if energy_keys else None
    if energy:
        joules = sum(energy)
        seconds = (end - start).total_seconds()
        fig["pcm_energy_j"] = joules
        watts = joules / seconds if seconds > 0 else None
        fig["pcm_t2_per_power"] = (mpps * mpps / watts) if watts and mpps else unavailable(
            "pcm: no power figure")
    else:
        fig["pcm_energy_j"] = unavailable("pcm: no energy column (no RAPL in PCM)")
        fig["pcm_t2_per_power"] = fig["pcm_energy_j"]
    return fig


class PcmSession:
    """pcm spawned before a run and stopped after it (SIGINT, as Ctrl-C)."""

    def __init__(self, csv_path, interval=0.1, tool="pcm"):
        self.csv_path, self.interval, self.tool = csv_path, interval, tool
        self.proc = None
        self.error = None

    def start(self):
        exe = shutil.which(self.tool) or shutil.which("/usr/sbin/" + self.tool)
        if not exe:
            self.error = unavailable("pcm: %s not installed (Debian: pcm)" % self.tool)
            return False
        self.proc = subprocess.Popen([exe, str(self.interval), "-csv=" + self.csv_path],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, text=True)
        time.sleep(max(self.interval * 3, 0.5))
        if self.proc.poll() is not None:
            out = self.proc.stdout.read()
            self.proc.stdout.close()
            self.error = unavailable(pcm_failure_reason(out, self.proc.returncode))
            return False
        return True

    def stop(self):
        if self.proc:
            stop_process(self.proc, timeout=10)
        if self.proc and self.proc.stdout:
            self.proc.stdout.close()


def cpu_vendor(path="/proc/cpuinfo"):
    """The vendor_id of /proc/cpuinfo (GenuineIntel, AuthenticAMD, ...), or None."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def pcm_exe():
    """pcm on the PATH or in /usr/sbin (Debian's package puts it there)."""
    return shutil.which("pcm") or ("/usr/sbin/pcm" if os.access("/usr/sbin/pcm", os.X_OK) else None)


def pcm_probe(cpuinfo="/proc/cpuinfo", exe=None, run=subprocess.run):
    """None when pcm runs here, else why not: PCM's own reason (one
    sample of `pcm 0.1 -i=1`: "vPMU is not enabled", "unsupported
    processor", no MSR access ...), or that it is not installed."""
    exe = exe or pcm_exe()
    if not exe:
        vendor = cpu_vendor(cpuinfo)
        if vendor is not None and vendor != "GenuineIntel":
            return "pcm not installed (Debian: pcm), and it needs an Intel CPU (this CPU: %s)" \
                % vendor
        return "pcm not installed (Debian: pcm)"
    try:
        p = run([exe, "0.1", "-i=1"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "pcm: no sample within 30 s"
    except OSError as e:
        return "pcm: cannot run %s: %s" % (exe, e)
    out = p.stdout or ""
    if p.returncode != 0 or any(rx.search(out) for rx, _ in PCM_FAILURES):
        return pcm_failure_reason(out, p.returncode)
    return None


# ---- RAPL --------------------------------------------------------------------

def rapl_domains(root="/sys/class/powercap"):
    """Package-level RAPL domains: [(name, energy_uj path, max range)]."""
    found = []
    for d in sorted(glob.glob(os.path.join(root, "*rapl:*"))):
        if d.count(":") != 1:
            continue  # sub-domains (core, uncore, dram) are inside the package
        try:
            with open(os.path.join(d, "name")) as f:
                name = f.read().strip()
            with open(os.path.join(d, "max_energy_range_uj")) as f:
                max_range = int(f.read())
            with open(os.path.join(d, "energy_uj")) as f:
                int(f.read())
        except (OSError, ValueError):
            continue
        if name.startswith("package"):
            found.append((name, os.path.join(d, "energy_uj"), max_range))
    return found


def rapl_read(domains):
    vals = []
    for _, path, _ in domains:
        with open(path) as f:
            vals.append(int(f.read()))
    return vals


def rapl_energy_j(domains, before, after):
    total = 0
    for (_, _, max_range), a, b in zip(domains, before, after):
        total += (b - a) if b >= a else (b + max_range - a)  # counter wrapped
    return total / 1e6


def rapl_probe(root="/sys/class/powercap"):
    if not os.path.isdir(root):
        return "no %s (no RAPL driver: VM or kernel without intel_rapl/amd rapl)" % root
    try:
        if not rapl_domains(root):
            return "no readable package RAPL domain in %s (needs root)" % root
    except OSError as e:
        return "cannot read RAPL: %s" % e
    return None


# Result columns each backend fills (for the after-the-run status).
FIGURE_KEYS = {
    "time": lambda k: k.startswith("time_"),
    "perf": lambda k: (k.startswith("perf_") and k != "perf_stages_status") or (k.startswith("stage.") and ".perf_" in k),
    "perfstat": lambda k: k.startswith("perfstat_"),
    "pcm": lambda k: k.startswith("pcm_"),
    "cachegrind": lambda k: k.startswith("cg_") and k != "cg_status",
    "rapl": lambda k: k.startswith("rapl_"),
}


def figure_status(name, status, rows):
    """A backend's status after the runs: "ok" only when some row has a
    number from it; otherwise "unavailable: reason", the reason being the
    first one a row gave (a probe that passed says nothing about the figures:
    perf finds no PMU event in a VM only once listrx runs)."""
    if status != "ok":
        return status
    owns = FIGURE_KEYS.get(name)
    if owns is None:
        return status
    reason = None
    for r in rows:
        if r.get("status") != "ok":
            continue
        for k, v in r.items():
            if not owns(k):
                continue
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return "ok"
            if reason is None and is_unavailable(v):
                reason = v
    if reason is None:
        return unavailable("%s: no figure in any run" % name)
    return reason


def probe(name):
    """None when the backend can run here, else the reason it cannot."""
    return {"time": lambda: None, "perf": perf_probe, "perfstat": perfstat_probe,
            "pcm": pcm_probe,
            "cachegrind": cachegrind_probe, "rapl": rapl_probe}[name]()
