"""The sweep: every cell of the grid, each repetition, each backend."""

import argparse
import concurrent.futures
import datetime
import os
import shlex
import sys
import time

from . import backends, grid, results
from .backends import BACKENDS, PERF_DEFAULT_EVENTS
from .listrx import (CG_EAL, Listrx, allowed_cpus, cachegrind_caches, caches_source,
                     find_binary, machine_info, provenance, shared_cpu_pct)
from .options import (add_cg_caches, add_common, add_grid, add_out, choices_list, convert,
                      onoff, packet_pair, positive_float, positive_int, xdp_modes)
from .progress import Progress
from .stats import unavailable

TIME_KEYS = ("mpps", "ns_per_packet", "busy_cycles_per_packet")
# the progress bar's kinds of work and what one costs before one has
# finished (docs/measuring.md, "Wall time"): a listrx run pays about half a
# second of start-up besides --duration; a callgrind window job about 1.8 s
# plus 15 ms per KB of ballast (6000 packets through it, measured on the
# 2-vCPU KVM guest, loaded)
RUN_KIND, CG_KIND = "run", "cachegrind"
RUN_STARTUP_S = 0.5
CG_STARTUP_S = 1.8
CG_S_PER_KB = 0.015
# a cell that delivered less than this share of what it received is flagged
# (progress line, report): its figures time drops, not the pipeline's work
LOW_DELIVERY = 0.5


def delivery_figures(summary):
    """delivered, dropped, merges and the top drop reasons of one run.
    delivered_share counts segments: a segment merged into another packet
    (GRO's, a fragment reassembly joined) is delivered inside it; the
    summary's merged_segments sums the counters of role merged, whatever
    the stage names them."""
    fig = {}
    merged = summary.get("merged_segments") or 0
    rx = summary.get("rx_packets") or 0
    delivered = summary.get("delivered") or 0
    fig["merged_segments"] = merged
    fig["delivered_share"] = ((delivered + merged + (summary.get("tx_packets") or 0)) / rx
                              if rx else unavailable("listrx received no packet"))
    drops = summary.get("drops") or {}
    top = sorted(((n, r) for r, n in drops.items() if n), reverse=True)[:3]
    fig["drop_reasons"] = ",".join("%s:%d" % (r, n) for n, r in top) or "none"
    return fig


def low_delivery(row):
    share = row.get("delivered_share")
    return isinstance(share, (int, float)) and share < LOW_DELIVERY


def summary_figures(summary, info, prefix="time_"):
    """Figures from listrx's JSON summary of a timed run."""
    fig = {}
    for k in TIME_KEYS:
        v = summary.get(k)
        fig[prefix + k] = v if v is not None else unavailable("listrx received no packet")
    tsc = summary.get("tsc_hz")
    bcp = summary.get("busy_cycles_per_packet")
    fig[prefix + "busy_ns_per_packet"] = (bcp / tsc * 1e9 if bcp is not None and tsc
                                          else unavailable("no busy cycles or TSC rate"))
    # a source that idled (most polls empty): wall ns/packet is its pace,
    # busy ns/packet the cost (listrx says which is the headline)
    if "empty_poll_share" in summary:
        fig[prefix + "empty_poll_share"] = summary["empty_poll_share"]
        fig["ns_per_packet_headline"] = summary.get("ns_per_packet_headline")
    for k in ("rx_packets", "duration_s", "delivered", "dropped", "tx_packets",
              "mbufs_in_use_at_exit", "footprint_bytes", "tsc_hz"):
        if k in summary:
            fig[k] = summary[k]
    fig.update(delivery_figures(summary))
    fig["shared_cpu_pct"] = shared_cpu_pct(info.get("output"))
    fig["wall_s"] = info["wall_s"]
    # ROI (Hadi Salim et al., "The Battle of the ZCs"): T^2/sum(CPU), T in Mpps, sum(CPU) = CPU seconds the
    # process used per wall second (poll mode: about one per polling lcore)
    cores = info["cpu_s"] / info["wall_s"] if info["wall_s"] > 0 else 0
    fig["cpu_cores_used"] = cores
    mpps = summary.get("mpps")
    fig["roi_t2_per_cpu"] = (mpps * mpps / cores if mpps and cores > 0
                             else unavailable("no CPU time or no packets"))
    return fig


def stage_figures(summary):
    """Per-stage zoom-in from a --stats-level cycles summary: TSC cycles per
    packet of each stage, and in ns (cycles / tsc_hz)."""
    fig = {}
    tsc = summary.get("tsc_hz") or 0
    for st in summary.get("stages", []):
        name = st.get("name")
        cpp = st.get("cycles_per_packet")
        fig["stage.%s.vectors_per_call" % name] = st.get("vectors_per_call")
        if cpp is None:
            fig["stage.%s.ns_per_packet" % name] = unavailable(
                "stage cycles not measured (stats level %s)" % summary.get("stats_level"))
            continue
        fig["stage.%s.cycles_per_packet" % name] = cpp
        fig["stage.%s.ns_per_packet" % name] = cpp / tsc * 1e9 if tsc else unavailable(
            "no TSC rate")
    return fig


class Sweep:
    def __init__(self, lx, args, out_dir, log=sys.stderr):
        self.lx, self.args, self.out = lx, args, out_dir
        self.runs = os.path.join(out_dir, "runs")
        os.makedirs(self.runs, exist_ok=True)
        lx.log_dir = self.runs
        self.log = log
        self.counters = args.counters
        self.status = {}
        for name in self.counters:
            reason = backends.probe(name)
            self.status[name] = "ok" if reason is None else unavailable(reason)
        self.caches = cachegrind_caches(lx.topology(), getattr(args, "cg_caches", None))
        self.i1 = self.caches["I1"]
        self.stages = set(lx.stages())

    def thunks(self):
        """The binary's retpoline thunks (backends.retpoline_thunks), once."""
        if not hasattr(self, "_thunks"):
            self._thunks = backends.retpoline_thunks(self.lx.binary)
        return self._thunks

    def skip_reason(self, cell):
        wanted = [] if cell["pipeline_arg"] in ("none", "") else cell["pipeline_arg"].split(",")
        missing = [s for s in wanted if s not in self.stages]
        if "xdp" in missing:
            return "skipped: xdp stage not built in this listrx (xdp %s)" % cell["xdp"]
        if missing:
            return "skipped: stage(s) %s not in this listrx (listrx -- --list-stages)" % ",".join(
                missing)
        return None

    # ---- one backend each ------------------------------------------------
    def timed_run(self, cell, rep, row):
        a = self.args
        json_path = os.path.join(self.runs, "%s-r%d-time.json" % (cell["cell"], rep))
        cmd = self.lx.command(cell, json_path, duration=a.duration,
                              packets=a.packets, stats_level=a.stats_level)
        pcm = None
        if "pcm" in self.counters and self.status["pcm"] == "ok":
            pcm = backends.PcmSession(json_path[:-5] + ".pcm.csv", a.pcm_interval)
            if not pcm.start():
                row["pcm_status"] = pcm.error
                pcm = None
        rapl = None
        if "rapl" in self.counters and self.status["rapl"] == "ok":
            rapl = backends.rapl_domains()
            before = backends.rapl_read(rapl)
        summary, err, info = self.lx.run(cmd, json_path, log_name=cell["cell"] + "-r%d-time" % rep,
                                         timeout=a.timeout)
        if rapl:
            after = backends.rapl_read(rapl)
        if pcm:
            pcm.stop()
        row["command"] = info["command"]
        if err:
            row["status"] = "failed: " + err
            return
        row.update(summary_figures(summary, info))
        row["build"] = summary.get("build")
        row["retpoline"] = summary.get("retpoline")
        if summary.get("stats_level") == "cycles":
            row.update(stage_figures(summary))
        if rapl:
            joules = backends.rapl_energy_j(rapl, before, after)
            watts = joules / info["wall_s"] if info["wall_s"] > 0 else None
            row["rapl_energy_j"] = joules
            row["rapl_watts"] = watts
            mpps = summary.get("mpps")
            row["rapl_t2_per_power"] = mpps * mpps / watts if watts and mpps else unavailable(
                "rapl: no power or no packets")
        elif "rapl" in self.counters:
            row["rapl_energy_j"] = self.status["rapl"]
            row["rapl_t2_per_power"] = self.status["rapl"]
        if pcm:
            try:
                with open(pcm.csv_path) as f:
                    rows = backends.parse_pcm_csv(f.read())
            except OSError as e:
                row["pcm_status"] = unavailable("pcm: no CSV (%s)" % e)
            else:
                end = datetime.datetime.fromtimestamp(info["end_time"])
                start = end - datetime.timedelta(seconds=summary.get("duration_s") or 0)
                worker = summary.get("lcores", [{}])[0].get("lcore", 0)
                row.update(backends.pcm_figures(rows, start, end, worker,
                                                summary.get("rx_packets"), summary.get("mpps")))
        elif "pcm" in self.counters and "pcm_status" not in row:
            row["pcm_status"] = self.status["pcm"]
        if "pcm" in self.counters and "pcm_status" in row:
            for k in ("pcm_ipc", "pcm_l2_misses_per_packet", "pcm_l3_misses_per_packet",
                      "pcm_energy_j"):
                row.setdefault(k, row["pcm_status"])

    def zoom_run(self, cell, rep, row):
        a = self.args
        json_path = os.path.join(self.runs, "%s-r%d-zoom.json" % (cell["cell"], rep))
        cmd = self.lx.command(cell, json_path, duration=a.duration, packets=a.packets,
                              stats_level="cycles")
        summary, err, info = self.lx.run(cmd, json_path, log_name=cell["cell"] + "-r%d-zoom" % rep,
                                         timeout=a.timeout)
        if err:
            row["stage_status"] = "failed: " + err
            return
        row.update(stage_figures(summary))

    def differential(self, cell, rep, kind, packet_counts, prefix_for, lcores=None,
                     eal=None, extra=()):
        """Two runs with --packets small/large under a tool; returns
        [(summary, tool output path)] or an error string."""
        out = []
        for packets in packet_counts:
            base = os.path.join(self.runs, "%s-r%d-%s-%d" % (cell["cell"], rep, kind, packets))
            json_path = base + ".json"
            tool_out = base + "." + kind
            cmd = self.lx.command(cell, json_path, packets=packets,
                                  stats_level=self.args.stats_level, lcores=lcores,
                                  eal=eal, extra=extra)
            summary, err, info = self.lx.run(cmd, json_path, prefix=prefix_for(tool_out),
                                             log_name=os.path.basename(base),
                                             timeout=self.args.timeout * 10)
            if err:
                return "failed: %s" % err, info
            out.append((summary, tool_out))
        return out, info

    def perf_runs(self, cell, rep, row):
        """perf: listrx's own perf_event_open group per worker (--pmu) in a
        run of its own, and per stage (--pmu-stages: rdpmc around each stage
        call) in the engines that call stages per vector."""
        a = self.args
        events = a.perf_events
        extra = ["--pmu=" + ",".join(events)]
        engine = grid.engine_kind(cell["engine"])
        vector = engine in ("burst", "graph") or engine.startswith("hybrid")
        stages = a.perf_stages and vector and cell["pipeline_arg"] not in ("none", "")
        if stages:
            extra.append("--pmu-stages")
        if a.perf_source != "perf_event":
            extra += ["--set", "pmu.source=" + a.perf_source]
        json_path = os.path.join(self.runs, "%s-r%d-perf.json" % (cell["cell"], rep))
        cmd = self.lx.command(cell, json_path, duration=a.duration, packets=a.packets,
                              stats_level="counters" if a.stats_level == "off" else a.stats_level,
                              extra=extra)
        summary, err, info = self.lx.run(cmd, json_path, log_name=cell["cell"] + "-r%d-perf" % rep,
                                         timeout=a.timeout)
        row["perf_command"] = info["command"]
        if err:
            row["perf_status"] = "failed: " + err
            for e in events:
                row[backends.perf_key(e)] = unavailable("perf: the run failed")
            row["perf_ipc"] = unavailable("perf: the run failed")
            return
        row.update(backends.pmu_figures(summary, events))
        if not stages:
            row["perf_stages_status"] = unavailable(
                "perf: per-stage attribution is read around stage calls of the burst, hybrid "
                "and graph engines only" if not vector else "perf: --perf-stages off or no stages")

    def perfstat_runs(self, cell, rep, row):
        events = self.args.perf_events
        if self.status["perfstat"] != "ok":
            for e in events:
                row[backends.perf_key(e, "perfstat_")] = self.status["perfstat"]
            row["perfstat_ipc"] = self.status["perfstat"]
            return
        res, info = self.differential(
            cell, rep, "perfstat", self.args.perf_packets,
            lambda path: ["perf", "stat", "-x,", "-o", path, "-e", ",".join(events), "--"])
        row["perfstat_command"] = info["command"]
        if isinstance(res, str):
            row["perfstat_status"] = res
            return
        counts = []
        for summary, path in res:
            with open(path) as f:
                counts.append(backends.parse_perf_stat(f.read()))
        row.update(backends.perf_figures(counts[0], counts[1], res[0][0]["rx_packets"],
                                         res[1][0]["rx_packets"], events))

    def cachegrind_runs(self, cell, rep, row):
        """The cachegrind figures of one cell into row. Thread-safe: the
        sweep runs several at once (--cg-jobs)."""
        if self.status["cachegrind"] != "ok":
            row["cg_status"] = self.status["cachegrind"]
            return
        if rep > 0 and not self.args.cg_every_rep:
            return  # deterministic: measured once per cell (rep 0)
        a = self.args
        extra = ["--set", "mempool.mbufs=%d" % a.cg_mbufs] if a.cg_mbufs else []
        if a.cg_method == "window":
            self.callgrind_window(cell, rep, row, extra)
            return
        # one lcore: the main lcore polls, so valgrind runs a single thread
        res, info = self.differential(
            cell, rep, "cachegrind", a.cg_packets,
            lambda path: backends.cachegrind_prefix(path, self.i1, self.caches["D1"],
                                                    self.caches["LL"]),
            lcores=a.cg_lcores, eal=a.cg_eal, extra=extra)
        row["cachegrind_command"] = info["command"]
        if isinstance(res, str):
            row["cg_status"] = res
            return
        parsed = []
        for summary, path in res:
            with open(path) as f:
                parsed.append(backends.parse_cachegrind(f.read()))
            if not self.args.keep_raw:
                os.unlink(path)
        row["cg_i1"], row["cg_d1"], row["cg_ll"] = self.i1, self.caches["D1"], self.caches["LL"]
        row["cg_packets"] = "%d-%d" % (res[0][0]["rx_packets"], res[1][0]["rx_packets"])
        row.update(backends.cachegrind_figures(parsed[0], parsed[1], res[0][0]["rx_packets"],
                                               res[1][0]["rx_packets"], self.stages))

    def callgrind_window(self, cell, rep, row, extra):
        """One callgrind run: --packets TOTAL --measure-from WARMUP; listrx
        switches collection on after the warm-up packets (simulated caches
        and predictors warm) and off at the end, and reports how many
        packets the window held."""
        warmup, total = self.args.cg_window
        # whole bursts on both sides: a last partial burst would pay a whole
        # burst's per-burst misses for fewer packets (+4 % at burst 256)
        b = cell["burst"]
        warmup, total = -(-warmup // b) * b, -(-warmup // b) * b + -(-(total - warmup) // b) * b
        base = os.path.join(self.runs, "%s-r%d-callgrind-%d-%d" % (cell["cell"], rep, warmup,
                                                                  total))
        json_path, tool_out = base + ".json", base + ".callgrind"
        cmd = self.lx.command(cell, json_path, packets=total, stats_level=self.args.stats_level,
                              lcores=self.args.cg_lcores, eal=self.args.cg_eal,
                              extra=extra + ["--measure-from", str(warmup)])
        summary, err, info = self.lx.run(
            cmd, json_path, prefix=backends.callgrind_window_prefix(
                tool_out, self.i1, self.caches["D1"], self.caches["LL"]),
            log_name=os.path.basename(base), timeout=self.args.timeout * 10)
        row["cachegrind_command"] = info["command"]
        if err:
            row["cg_status"] = "failed: %s" % err
            return
        measured = summary.get("measured_packets")
        if not measured:
            row["cg_status"] = unavailable(
                "cachegrind: listrx reported no measured_packets (a binary without "
                "--measure-from? use --cg-method pair)")
            return
        with open(tool_out) as f:
            parsed = backends.parse_callgrind(f.read(), self.thunks())
        if not self.args.keep_raw:
            os.unlink(tool_out)
        row["cg_i1"], row["cg_d1"], row["cg_ll"] = self.i1, self.caches["D1"], self.caches["LL"]
        row["cg_packets"] = "%d-%d" % (summary["rx_packets"] - measured, summary["rx_packets"])
        row.update(backends.cachegrind_figures(None, parsed, 0, measured, self.stages))

    def cachegrind_phase(self, jobs, progress):
        """Runs the cachegrind work [(cell, rep, row, label)] in parallel:
        simulated counts do not depend on load, so both cores are used; this
        phase starts after every timed run has finished."""
        if not jobs:
            return
        workers = max(1, min(self.args.cg_jobs, len(jobs)))
        pool = concurrent.futures.ThreadPoolExecutor(max_workers=workers)
        progress.begin(CG_KIND)
        try:
            futures = {pool.submit(self.cachegrind_runs, cell, rep, row): label
                       for cell, rep, row, label in jobs}
            for fut in concurrent.futures.as_completed(futures):
                fut.result()
                progress.update(futures[fut] + " cachegrind", kind=CG_KIND)
        except BaseException:
            # Ctrl-C: the queued runs never start; the running ones got the
            # terminal's SIGINT too and end
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        finally:
            progress.end(CG_KIND)
        pool.shutdown(wait=True)

    # ---- the grid --------------------------------------------------------
    def cg_wanted(self, cell):
        bursts = getattr(self.args, "cg_bursts", None)
        return not bursts or cell["burst"] in bursts

    def timed(self):
        return any(c in self.counters for c in ("time", "rapl", "pcm"))

    def runs_per_rep(self, rep):
        """listrx runs (outside valgrind) a cell makes in repetition rep."""
        a = self.args
        zoom = bool(a.zoom) and rep < (getattr(a, "zoom_reps", None) or rep + 1)
        return (int(self.timed()) + int(zoom) + int("perf" in self.counters)
                + 2 * int("perfstat" in self.counters))

    def run_estimate_s(self):
        """A listrx run: its --duration plus start-up (dynamic linking, EAL,
        TSC calibration, pools: about half a second, docs/measuring.md)."""
        return (self.args.duration or 1.0) + RUN_STARTUP_S

    def cg_estimate_s(self, cell):
        """A cachegrind job's wall time before one has finished: start-up
        under valgrind plus the simulated packets, which cost more the more
        ballast code each executes; divided among the parallel jobs."""
        runs = 1 if self.args.cg_method == "window" else 2
        return runs * (CG_STARTUP_S + CG_S_PER_KB * cell["footprint_kb"]) / max(
            self.args.cg_jobs, 1)

    def cg_jobs_of(self, cells, reps):
        if "cachegrind" not in self.counters:
            return []
        return [c for c in cells if self.cg_wanted(c) and not self.skip_reason(c)] * (
            reps if self.args.cg_every_rep else 1)

    def plan(self, progress, cells, reps):
        """Tells progress what run(cells, reps) will do and what each kind
        of work costs (its ETA weighs a cachegrind job as such)."""
        runnable = [c for c in cells if not self.skip_reason(c)]
        runs = sum(self.runs_per_rep(rep) for rep in range(reps)) * len(runnable)
        progress.plan(RUN_KIND, runs + (self.args.warmup if runnable else 0),
                      self.run_estimate_s())
        jobs = self.cg_jobs_of(cells, reps)
        if jobs:
            progress.plan(CG_KIND, len(jobs),
                          sum(self.cg_estimate_s(c) for c in jobs) / len(jobs))

    def run(self, cells, reps, progress=None, label_prefix="", more=None):
        """Every cell, reps times (alternating repetitions with --order
        reps), then the cachegrind phase. more(rows) -> cells: after the
        reps, one more repetition of the cells it returns, until it
        returns none (the headline's adaptive repetitions)."""
        a = self.args
        own_progress = progress is None
        if own_progress:
            progress = Progress(enabled=not a.quiet)
            self.plan(progress, cells, reps)
        progress.begin(RUN_KIND)
        progress.show("starting")
        runnable = [c for c in cells if not self.skip_reason(c)]
        for w in range(a.warmup if runnable else 0):
            c = runnable[0]
            json_path = os.path.join(self.runs, "warmup%d.json" % w)
            self.lx.run(self.lx.command(c, json_path, duration=min(a.duration or 1, 1)),
                        json_path, log_name="warmup%d" % w, timeout=a.timeout)
            progress.update("warm-up", kind=RUN_KIND)
        if getattr(a, "order", "cells") == "reps":
            # alternating repetitions: every cell once, then again (A,B,A,B),
            # so a slow phase of a shared machine hits every cell alike
            order = [(cell, rep) for rep in range(reps) for cell in cells]
        else:
            order = [(cell, rep) for cell in cells for rep in range(reps)]
        by_cell, cg_jobs = {}, []
        for cell, rep in order:
            by_cell[(cell["cell"], rep)] = self.run_cell(cell, rep, progress, label_prefix,
                                                         cg_jobs)
        rows = [by_cell[(cell["cell"], rep)] for cell in cells for rep in range(reps)]
        rep = reps
        while more:
            extra = more(rows)
            if not extra:
                break
            progress.plan(RUN_KIND, sum(self.runs_per_rep(rep) for c in extra
                                        if not self.skip_reason(c)), self.run_estimate_s())
            rows += [self.run_cell(cell, rep, progress, label_prefix, cg_jobs)
                     for cell in extra]
            rep += 1
        progress.end(RUN_KIND)
        # after the timed runs, never beside them: a valgrind process on the
        # other core would slow the timed runs' figures
        self.cachegrind_phase(cg_jobs, progress)
        if own_progress:
            progress.close()
        return rows

    def run_cell(self, cell, rep, progress, label_prefix, cg_jobs):
        """One repetition of one cell: its row (cachegrind queued in cg_jobs)."""
        a = self.args
        row = dict(cell)
        row.update(rep=rep, stats_level=a.stats_level,
                   counters="+".join(self.counters), status="ok")
        skip = self.skip_reason(cell)
        if skip:
            row["status"] = skip
            progress.show(skip)
            return row
        label = "%s%s %s b%d fp%s r%d" % (label_prefix, cell["profile"], cell["engine"],
                                           cell["burst"], cell["footprint"], rep)
        if self.timed():
            self.timed_run(cell, rep, row)
            if low_delivery(row):
                label += " LOW DELIVERY %.0f%% (%s)" % (100 * row["delivered_share"],
                                                       row.get("drop_reasons"))
            if row.get("shared_cpu_pct") is not None:
                label += " SHARED CPU"
            progress.update(label + " time", kind=RUN_KIND)
        if a.zoom and rep < (getattr(a, "zoom_reps", None) or rep + 1):
            self.zoom_run(cell, rep, row)
            progress.update(label + " zoom", kind=RUN_KIND)
        if "perf" in self.counters:
            self.perf_runs(cell, rep, row)
            progress.update(label + " perf", kind=RUN_KIND)
        if "perfstat" in self.counters:
            self.perfstat_runs(cell, rep, row)
            progress.update(label + " perfstat", 2, kind=RUN_KIND)
        if "cachegrind" in self.counters and not self.cg_wanted(cell):
            row["cg_status"] = unavailable("cachegrind: measured at burst %s only" % ",".join(
                str(b) for b in a.cg_bursts))
        elif "cachegrind" in self.counters and (rep == 0 or a.cg_every_rep):
            cg_jobs.append((cell, rep, row, label))
        elif "cachegrind" in self.counters:
            row["cg_status"] = "measured once per cell (rep 0): deterministic"
        return row


def meta_for(lx, args, argv, status, started, caches):
    return {"tool": "listrx-bench", "created": started,
            "finished": datetime.datetime.now().isoformat(timespec="seconds"),
            "command": "listrx-bench " + " ".join(shlex.quote(a) for a in argv),
            "machine": machine_info(lx), "provenance": provenance([lx]), "backends": status,
            "cachegrind_i1": caches["I1"], "cachegrind_caches": caches,
            "cachegrind_caches_source": caches_source(getattr(args, "cg_caches", None)),
            "params": {k: v for k, v in vars(args).items() if k not in ("func",)}}


def run_sweep(lx, args, argv):
    started = datetime.datetime.now().isoformat(timespec="seconds")
    topo = lx.topology()
    cells = grid.expand(args.profiles, args.pipelines,
                        grid.parse_footprints(args.footprints, topo.get("l1i_bytes")),
                        args.engines, args.bursts,
                        [x for x in args.xdp] if args.xdp else [None], lx.stage_list())
    sweep = Sweep(lx, args, args.out)
    for name, st in sweep.status.items():
        print("listrx-bench: backend %s: %s" % (
            name, "will measure" if st == "ok" else "no figures: " + st), file=sys.stderr)
    t0 = time.time()
    rows = sweep.run(cells, args.reps)
    skipped = {}
    for r in rows:
        if str(r.get("status", "")).startswith("skipped"):
            skipped[r["status"]] = skipped.get(r["status"], 0) + 1
    for status, n in skipped.items():
        print("listrx-bench: %d run(s) %s" % (n, status), file=sys.stderr)
    low = sorted({r["cell"] for r in rows if low_delivery(r)})
    if low:
        print("listrx-bench: %d cell(s) delivered less than half of what they received "
              "(their figures time drops): %s%s" % (len(low), ", ".join(low[:4]),
                                                    " ..." if len(low) > 4 else ""),
              file=sys.stderr)
    status = {name: backends.figure_status(name, st, rows) for name, st in sweep.status.items()}
    for name, st in status.items():
        if st != sweep.status[name]:
            print("listrx-bench: backend %s %s" % (name, st), file=sys.stderr)
    meta = meta_for(lx, args, argv, status, started, sweep.caches)
    meta["elapsed_s"] = time.time() - t0
    return results.write(args.out, meta, rows), rows

# ---- the command -------------------------------------------------------------

def add_options(p, out_required=True):
    """The sweep's options (also the headline's sweep, default_options)."""
    add_common(p)
    add_grid(p, grid.DEFAULT_BURSTS, grid.DEFAULT_ENGINES, grid.DEFAULT_FOOTPRINTS,
             grid.KERNEL_PIPELINE, "udp64")
    p.add_argument("--xdp", type=convert(xdp_modes, "placement"), default=None,
                   help="XDP placements native,generic,off (cells skipped with a reason "
                   "when the xdp stage is not built)" " (default: %(default)s)")
    p.add_argument("--reps", type=convert(positive_int), default=3, help="repetitions per cell (default: %(default)s)")
    p.add_argument("--order", choices=("cells", "reps"), default="cells",
                   help="cells: each cell's repetitions back to back; reps: every cell once, "
                   "then again (alternating repetitions) (default: %(default)s)")
    p.add_argument("--counters", type=convert(choices_list(BACKENDS), "backend"), default=["time"],
                   help="backends: time,perf,perfstat,pcm,cachegrind,rapl; perf = listrx's "
                   "own counters (--pmu), perfstat = perf stat around the process "
                   "(default: %(default)s)")
    p.add_argument("--duration", type=convert(positive_float), default=0.25,
                   help="seconds per timed run (each also pays ~0.3-0.5 s of start-up: 675 "
                   "runs on the default grid) (default: %(default)s)")
    p.add_argument("--packets", type=int, default=0,
                   help="also stop timed runs after N packets (0 = duration only) (default: %(default)s)")
    p.add_argument("--stats-level", default="counters", choices=("off", "counters", "cycles"),
                   help="listrx stats level of the timed run (default: %(default)s)")
    p.add_argument("--zoom", action="store_true",
                   help="one more run per rep at --stats-level cycles for the per-stage "
                   "ns/pkt zoom-in (kept apart so stage timing does not slow the Mpps run)")
    p.add_argument("--zoom-reps", type=int, default=0,
                   help="zoom runs in the first N repetitions only (0 = every rep) "
                   "(default: %(default)s)")
    p.add_argument("--warmup", type=int, default=1, help="unrecorded warm-up runs first (default: %(default)s)")
    p.add_argument("--perf-events", type=convert(grid.split_list, "event"),
                   default=list(PERF_DEFAULT_EVENTS),
                   help="perf/perfstat events, as perf -e names them (raw ones: r10000188e) "
                   "(default: %(default)s)")
    p.add_argument("--perf-stages", type=convert(onoff), default=True,
                   help="perf: per-stage counts (listrx --pmu-stages) in the burst, hybrid "
                   "and graph engines, on|off (default: on)")
    p.add_argument("--perf-source", choices=("perf_event", "fake"), default="perf_event",
                   help="perf: listrx's counter source; fake is listrx's software test source "
                   "(not hardware counts: for checking the plumbing) (default: %(default)s)")
    p.add_argument("--perf-packets", type=convert(packet_pair), default=[1000000, 11000000],
                   help="perfstat: the two packet counts whose difference is measured (default: %(default)s)")
    p.add_argument("--cg-method", choices=("window", "pair"), default="window",
                   help="cachegrind backend: 'window' = one callgrind run per cell, costs "
                   "collected only for the packets after --cg-window's first count (listrx "
                   "--measure-from); 'pair' = two cachegrind runs, --cg-packets, differenced "
                   "(default: %(default)s)")
    p.add_argument("--cg-window", type=convert(packet_pair), default=[2000, 6000],
                   help="window: warm-up packets, total packets; the difference is measured "
                   "(default: %(default)s)")
    p.add_argument("--cg-packets", type=convert(packet_pair), default=[20000, 60000],
                   help="pair: the two packet counts whose difference is measured (default: %(default)s)")
    p.add_argument("--cg-eal", default=CG_EAL,
                   help="EAL arguments of the cachegrind runs (64 MB is plenty for the "
                   "--cg-mbufs pool; start-up under valgrind is shorter) (default: %(default)s)")
    p.add_argument("--cg-mbufs", type=int, default=2047,
                   help="mempool size of the cachegrind runs (--set mempool.mbufs; 0 = "
                   "listrx's own sizing) (default: %(default)s)")
    p.add_argument("--cg-jobs", type=convert(positive_int), default=os.cpu_count() or 1,
                   help="cachegrind runs in parallel, in a phase of their own after every "
                   "timed run (their counts do not depend on load) (default: %(default)s)")
    p.add_argument("--cg-lcores", default=str(allowed_cpus()[0]),
                   help="cachegrind: EAL -l (one lcore: the main lcore polls) (default: the "
                   "first CPU this process may use, %(default)s)")
    add_cg_caches(p)
    p.add_argument("--cg-bursts", type=convert(grid.parse_bursts, "burst size"), default=None,
                   help="cachegrind only in cells of these burst sizes (default: every cell)")
    p.add_argument("--cg-every-rep", action="store_true",
                   help="cachegrind on every rep (it is deterministic: rep 0 is enough)")
    p.add_argument("--pcm-interval", type=float, default=0.1, help="pcm sampling interval (s) (default: %(default)s)")
    p.add_argument("--keep-raw", action="store_true", help="keep cachegrind.out files")
    add_out(p, out_required)


def add_parser(sub):
    p = sub.add_parser("sweep", help="run listrx over a grid, write results.json/.csv")
    add_options(p)
    p.set_defaults(func=cmd_sweep)


def default_options(**overrides):
    """The sweep's options at their defaults, with overrides (the headline
    runs the sweep with its own grid)."""
    p = argparse.ArgumentParser(add_help=False)
    add_options(p, out_required=False)
    args = p.parse_args([])
    for k, v in overrides.items():
        if not hasattr(args, k):
            raise AttributeError("sweep has no option %s" % k)
        setattr(args, k, v)
    return args


def cmd_sweep(args, argv):
    lx = Listrx(find_binary(args.listrx), eal=args.eal, lcores=args.lcores)
    (json_path, csv_path), rows = run_sweep(lx, args, argv)
    failed = [r for r in rows if str(r.get("status", "")).startswith("failed")]
    print("wrote %s and %s (%d rows, %d failed)" % (json_path, csv_path, len(rows), len(failed)))
    for r in failed[:5]:
        print("  %s rep %d: %s" % (r["cell"], r["rep"], r["status"]), file=sys.stderr)
    return 1 if rows and len(failed) == len(rows) else 0
