"""Seed 003: Hadi Salim, Bitar, Nogueira, Tammela, "The Battle Of The ZCs"
(netdev talk, Bloomberg): one TCP flow received by an application through
the socket copy (the baseline), devmem TCP (payload in application memory,
tokens returned with SO_DEVMEM_DONTNEED) and io_uring zero-copy receive
(completion and refill rings); MTU 4148 (4 KB MSS), Intel IPU E2100 with
header split, 1 CPU (softirq and application together) or 2; throughput,
CPU, syscall counts.

listrx: net_synth tcp-stream (4 flows, in order) into build-meta[,gro],
l3-demux with a receive socket per flow (tcp_rcv_socks, docs/sockets.md,
"TCP delivery to the application") read at the end of every poll by
tcp_read=copy, devmem or zcrx: bytes per second per lcore and cycles per
byte, software GRO off and on, in rotating repetitions
(seeds/measure.py), each method against copy by stats.compare.
With two lcores (--lcores), each method also with the application on the
polling lcore and on its own (tcp_reader_lcore), the cycles per byte of
both lcores compared by stats.compare."""

import os

from .. import stats
from . import kernel_tcp
from .measure import compare, compare_configs, level, ratio_cell, run_rotating
from .tx_napi import lcore_ids

SEED = "003"
TITLE = "zero-copy receive (devmem TCP, io_uring zcrx) against the socket copy"
SOURCE = ("Jamal Hadi Salim, Nabil Bitar, Victor Nogueira, Pedro Tammela, \"The Battle Of "
          "The ZCs\" (netdev talk, Bloomberg): one Sapphire Rapids CPU (48 cores), 2 x "
          "Intel IPU E2100 back to back at 200G, Linux 6.14-rc1 with devmem RFC v1 and "
          "zcrx v13, MTU 4148 (MSS 4096), one 100 s flow, median of the middle 3 of 5")

MODES = ("copy", "devmem", "zcrx")
MSS = 4096
SIZES = (1448, 8960)          # the other MTUs: copy and zcrx, GRO off
FLOWS = 4
ROOM = {1448: None, 4096: 4352, 8960: 9216}
# sk_rcvbuf: the seed raises tcp_rmem's maximum to 512 MiB and the kernel
# autotunes; listrx does not autotune, and net_synth's sender never
# retransmits, so one drop would end the flow's delivery: 4 MiB holds more
# than a poll's worth (a check says no byte dropped)
RCVBUF = 4 << 20

# the seed's figures in its text (its throughput and CPU charts carry no
# numbers in the text: those rows say so)
PUBLISHED = {
    ("devmem", 1): "74.39 Gb/s; 92.42 with batched DONTNEED (perf captions)",
    ("devmem", 2): "118.47 Gb/s; 128.77 batched (perf captions)",
    ("zcrx", 1): "a chart only: no figure in the text",
    ("zcrx", 2): "139.46 Gb/s; 190.06 with HW GRO (perf captions)",
    ("copy", 1): "a chart only: no figure in the text",
    ("copy", 2): "a chart only: no figure in the text",
}
SYSCALLS = [
    ("devmem, 2 CPUs, before batching", "recvmsg 615359, setsockopt 530116 (100 s)"),
    ("devmem, 2 CPUs, after batching", "recvmsg 809214, setsockopt 530128 (100 s)"),
    ("devmem, 1 CPU, before batching", "recvmsg 206570, setsockopt 294394 (100 s)"),
    ("devmem, 1 CPU, after batching", "recvmsg 486578, setsockopt 347744 (100 s)"),
    ("devmem, tokens per recvmsg", "874.6 on average (1 .. 1499)"),
]
# the placements of the application: the polling lcore (the seed's 1 CPU)
# or one of its own (2 CPUs); the main lcore polls ([lcore.N]) in both,
# since the stage launches the reader from it
PLACEMENTS = ("same", "other")
# the reader lcore reads what a few polls queued at once: room for it
# (the seed overprovisions its udmabuf 4x for the same reason)
LCORE_ZC_SLOTS = 4096
ONE_LCORE = ("unavailable: one lcore given (--lcores); the application on its own "
             "lcore needs a second")
KERNEL = kernel_tcp.ZC
KERNEL_SECONDS = 1.0
# the kernel's copy is measured with GRO off (every segment alone)
KERNEL_GRO = "the kernel's copy is measured with GRO off only (see that row)"


def name(mode, gro, mss):
    return "%s %s %d" % (mode, "gro" if gro else "nogro", mss)


def l3_sets(pairs):
    return [a for k, v in pairs for a in ("--set", "stage.l3-demux.%s=%s" % (k, v))]


def config(mode, gro, mss):
    args = ["--engine", "burst", "--burst", "64",
            "--pipeline", "build-meta,gro,l3-demux" if gro else "build-meta,l3-demux"]
    args += l3_sets((("tcp_ports", "5201"), ("tcp_ehash", "64"), ("tcp_rcv_socks", str(FLOWS)),
                     ("tcp_rcvbuf", str(RCVBUF)), ("tcp_read", mode)))
    if ROOM[mss]:
        args += ["--set", "mempool.data_room=%d" % ROOM[mss]]
    return {"name": name(mode, gro, mss), "keep": True, "args": args,
            "vdev": "net_synth0,profile=tcp-stream,flows=%d,mss=%d,copy=0" % (FLOWS, mss)}


def configs():
    out = [config(m, g, MSS) for g in (False, True) for m in MODES]
    return out + [config(m, False, s) for s in SIZES for m in ("copy", "zcrx")]


def placement_name(mode, place):
    return "%s %d-lcore" % (mode, 1 if place == "same" else 2)


def placement_conf(tmp, ids):
    """The main lcore polls the port's queue; the other is free for the
    reader."""
    path = os.path.join(tmp, "zero-copy-lcores.ini")
    with open(path, "w") as f:
        f.write("[port.0]\ndevice = net_synth0\n[lcore.%d]\npoll = 0:0\n"
                "[telemetry]\nenabled = no\n" % ids[0])
    return path


def placement_configs(tmp, ids):
    """Each method at MSS 4096, GRO off, the application on the polling
    lcore (ids[0]) or on ids[1]; the sender respects the window in both
    (tcp_window_wait: it waits only with a reader lcore)."""
    conf, out = placement_conf(tmp, ids), []
    for mode in MODES:
        for place in PLACEMENTS:
            c = config(mode, False, MSS)
            sets = [("tcp_zc_slots", str(LCORE_ZC_SLOTS)), ("tcp_window_wait", "yes")]
            if place == "other":
                sets.append(("tcp_reader_lcore", str(ids[1])))
            out.append(dict(c, name=placement_name(mode, place),
                            args=["--config", conf] + c["args"] + l3_sets(sets)))
    return out


def all_configs(ctx):
    ids = lcore_ids(ctx.lx)
    return configs() + (placement_configs(ctx.tmp, ids) if ids else [])


def kernel_skip(ctx):
    """Why the kernel's copy is not measured, or None."""
    if ctx.args.kernel == "off":
        return stats.unavailable("not measured (--kernel off)")
    return kernel_tcp.unavailable_reason()


def kernel_cpus():
    cpus = sorted(os.sched_getaffinity(0))
    return cpus[:2] if len(cpus) >= 2 else cpus * 2


def plan(ctx):
    out = [("run", len(all_configs(ctx)) * ctx.args.reps, ctx.args.duration + 0.8)]
    if not kernel_skip(ctx):
        out.append(("kernel tcp", 2 * ctx.args.kernel_reps, KERNEL_SECONDS + 0.5))
    return out


# ---- figures ------------------------------------------------------------------------

def l3_counters(summary):
    for s in (summary or {}).get("stages", []):
        if s.get("name") == "l3-demux":
            return s.get("counters") or {}
    return {}


def bytes_per_packet(summary):
    """Payload bytes the application read per frame received."""
    c, rx = l3_counters(summary), (summary or {}).get("rx_packets")
    return c.get("tcp_app_read_bytes", 0) / rx if rx else None


def cycles_per_byte(summary):
    bpp, bcp = bytes_per_packet(summary), (summary or {}).get("busy_cycles_per_packet")
    return bcp / bpp if bpp and bcp is not None else None


def split_cycles(summary, place):
    """(the polling lcore's, the application's) busy cycles per byte read:
    the poll's busy cycles less the window waits (tcp_window_wait: the
    kernel's softirq would idle there) and, on one lcore, less the reads
    they include; the reads' own (tcp_app_busy_cycles). (None, None)
    without a figure."""
    c, rx = l3_counters(summary), (summary or {}).get("rx_packets")
    read, bcp = c.get("tcp_app_read_bytes"), (summary or {}).get("busy_cycles_per_packet")
    if not read or not rx or bcp is None:
        return None, None
    app = c.get("tcp_app_busy_cycles", 0)
    poll = bcp * rx - c.get("tcp_rcv_window_wait_cycles", 0) - (app if place == "same" else 0)
    return poll / read, app / read


def reader_oncpu_cycles_per_byte(summary):
    """A reader lcore's own CPU time in its reads (tcp_app_oncpu_ns, the
    thread's clock: what another task took of its CPU left out) at the
    TSC's rate, per byte read; None without it."""
    c, hz = l3_counters(summary), (summary or {}).get("tsc_hz")
    read, ns = c.get("tcp_app_read_bytes"), c.get("tcp_app_oncpu_ns")
    return ns * hz / 1e9 / read if read and ns and hz else None


def total_cycles_per_byte(summary, place):
    poll, app = split_cycles(summary, place)
    return poll + app if poll is not None else None


def wall_gbps(summary):
    """Payload the application read per second of the run."""
    read = l3_counters(summary).get("tcp_app_read_bytes")
    secs = (summary or {}).get("duration_s")
    return read * 8 / secs / 1e9 if read and secs else None


def gbps(ns, bpp):
    return bpp * 8 / ns if ns and bpp else None


def per_gb(summary, key):
    c = l3_counters(summary)
    read = c.get("tcp_app_read_bytes")
    return c.get(key, 0) / read * 1e9 if read else None


def spread(values, fmt, unit):
    vals = [v for v in values if v is not None]
    if not vals:
        return stats.unavailable("no run gave this figure")
    return ("%s [%s–%s] %s, %d runs" % (fmt, fmt, fmt, unit, len(vals))) % (
        stats.median(vals), min(vals), max(vals))


def level_cells(res, nm):
    """'N Gb/s [lo–hi] per lcore' and 'C cycles/byte [min–max]' of a
    configuration: the median ns/packet's interval read as Gb/s."""
    r = res.get(nm)
    fig = level(r["runs"]) if r else None
    sums = list(r["summaries"].values()) if r else []
    bpp = stats.median([b for b in (bytes_per_packet(s) for s in sums) if b] or [0])
    if not fig or not bpp:
        why = stats.unavailable("no run gave a figure")
        return why, why
    lo, hi = fig["ci"]
    rate = "%.1f Gb/s [%.1f–%.1f] per lcore, %d runs" % (
        gbps(fig["ns"], bpp), gbps(hi, bpp), gbps(lo, bpp), fig["n"])
    return rate, spread([cycles_per_byte(s) for s in sums], "%.3f", "cycles/byte")


# ---- tables -------------------------------------------------------------------------

def kernel_cell(kfig, mode, gro, place="same"):
    if mode != "copy":
        return KERNEL
    return kernel_tcp.cell(kfig, place) if not gro else stats.unavailable(KERNEL_GRO)


def method_rows(res, kfig):
    rows = []
    for gro in (False, True):
        for mode in MODES:
            nm = name(mode, gro, MSS)
            rate, cpb = level_cells(res, nm)
            vs = (ratio_cell(compare_configs(res, name("copy", gro, MSS), nm))
                  if mode != "copy" else "—")
            rows.append({"cells": ["%s, 1 CPU, software GRO %s" % (mode, "on" if gro else "off"),
                                   PUBLISHED.get((mode, 1), "—"), rate, cpb, vs,
                                   kernel_cell(kfig, mode, gro)],
                         "why": WHY[mode]})
    return rows


def placement_cell(res, mode, place):
    """'0.62 [0.58–0.70] cycles/byte (poll 0.42 + reader 0.20), 7 runs;
    5.1 Gb/s read'."""
    r = res.get(placement_name(mode, place))
    sums = list(r["summaries"].values()) if r else []
    splits = [split_cycles(s, place) for s in sums]
    tot = [p + a for p, a in splits if p is not None]
    if not tot:
        return stats.unavailable("no run gave a figure")
    rate = [g for g in (wall_gbps(s) for s in sums) if g]
    oncpu = [v for v in (reader_oncpu_cycles_per_byte(s) for s in sums) if v]
    own = ("; the reader on its CPU %.3f [%.3f–%.3f]" % (stats.median(oncpu), min(oncpu),
                                                         max(oncpu))) if oncpu else ""
    return ("%.3f [%.3f–%.3f] cycles/byte (poll %.3f + reader %.3f%s), %d runs; %.1f Gb/s "
            "read" % (stats.median(tot), min(tot), max(tot),
                      stats.median([p for p, _ in splits if p is not None]),
                      stats.median([a for p, a in splits if p is not None]), own, len(tot),
                      stats.median(rate) if rate else 0))


def placement_compare(res, mode):
    """The two placements' cycles per byte (both lcores'), paired by
    repetition: above 1, the application on its own lcore costs fewer
    cycles per byte in all."""
    one, two = (res.get(placement_name(mode, p)) for p in PLACEMENTS)
    if not one or not two:
        return stats.unavailable("no run gave a figure")
    series = [{rep: total_cycles_per_byte(s, p) for rep, s in r["summaries"].items()}
              for r, p in ((one, "same"), (two, "other"))]
    shared = sorted(set(one["shared"]) | set(two["shared"]))
    return ratio_cell(compare(series[0], series[1], shared))


def placement_rows(res, ids, kfig):
    rows = []
    for mode in MODES:
        seed = "1 CPU: %s; 2 CPUs: %s" % (PUBLISHED[(mode, 1)], PUBLISHED[(mode, 2)])
        kcells = ["1 CPU: %s; 2 CPUs: %s" % (kernel_cell(kfig, mode, False, "same"),
                                              kernel_cell(kfig, mode, False, "other"))
                  if mode == "copy" else KERNEL]
        if not ids:
            rows.append({"cells": [mode, seed, ONE_LCORE, ONE_LCORE, "—"] + kcells})
            continue
        rows.append({"cells": [mode, seed, placement_cell(res, mode, "same"),
                               placement_cell(res, mode, "other"),
                               placement_compare(res, mode)] + kcells, "why": WHY_LCORES})
    return rows


def size_rows(res):
    rows = []
    for mss in (1448, MSS, 8960):
        for mode in ("copy", "zcrx"):
            rate, cpb = level_cells(res, name(mode, False, mss))
            vs = (ratio_cell(compare_configs(res, name("copy", False, mss),
                                             name(mode, False, mss)))
                  if mode != "copy" else "—")
            rows.append({"cells": ["MSS %d, %s, GRO off" % (mss, mode),
                                   "MTU 4148 only" if mss != MSS else "see above",
                                   rate, cpb, vs,
                                   KERNEL if mode != "copy" else stats.unavailable(
                                       "measured at MTU 4148 only (the first table)")]})
    return rows


def call_rows(res):
    rows = [{"cells": [label, fig, "—", "—"]} for label, fig in SYSCALLS]
    for mode in MODES:
        sums = list((res.get(name(mode, False, MSS)) or {}).get("summaries", {}).values())
        for key, what in (("tcp_app_recvmsg", "recvmsg"), ("tcp_app_dontneed", "DONTNEED"),
                          ("tcp_app_uring_enter", "io_uring_enter")):
            vals = [per_gb(s, key) for s in sums]
            if not any(vals):
                continue
            rows.append({"cells": ["listrx %s, GRO off: %s per GB read" % (mode, what), "—",
                                   spread(vals, "%.0f", "per GB"),
                                   spread([per_gb(s, "tcp_zc_copy_fallback") for s in sums],
                                          "%.0f", "copy fallbacks per GB")]})
    return rows


WHY = {
    "copy": "the seed's baseline: recvmsg copies each payload into the application's "
            "buffer; listrx copies it (tcp_read_size 64 KiB) and frees the mbuf. The "
            "seed's rates are a NIC's at 200G with TSO and hardware GRO from a second "
            "host; listrx's are one lcore's busy time, net_synth's frame writing included, "
            "without a wire.",
    "devmem": "tokens (references to the payload's mbuf) handed out, given back 512 at a "
              "time (the seed's batching) through the stage's consume; no copy. The "
              "seed's costs of devmem are the kernel's token bookkeeping (xarray, "
              "put_cmsg, gen_pool) and the page pool's locks, none of which listrx has.",
    "zcrx": "a completion per segment read in the poll, the buffer refilled by the next "
            "poll; no call per read.",
}


WHY_LCORES = (
    "on two lcores the receive queue's indices, sk_rmem_alloc, and each mbuf's header "
    "and payload move between two vCPUs' caches (net_synth writes the frames on the "
    "polling lcore; the seed's NIC writes them to memory for either placement), the "
    "reader spins instead of sleeping, and each lcore's vCPU is shared with other work "
    "on this host, whose time counts in the busy cycles; the seed's second CPU is a "
    "core of its own on an idle 48-core host.")


def checks_of(res):
    out = []
    for nm, r in res.items():
        s = r["first"] or {}
        c = l3_counters(s)
        zc = not nm.startswith("copy")
        balance = c.get("tcp_rcv_bytes", -1) == (
            c.get("tcp_app_read_bytes", 0) + c.get("tcp_rcv_queued_bytes", 0) +
            c.get("tcp_rcv_drop_bytes", 0) + c.get("tcp_rcv_dup_bytes", 0))
        ok = (c.get("tcp_app_read_bytes", 0) > 0 and balance and
              c.get("tcp_rcv_drop_bytes") == 0 and
              s.get("mbufs_in_use_at_exit") == 0 and (not zc or c.get("tcp_zc_refs", 0) > 0))
        out.append({"ok": bool(ok), "text": "%s: %s bytes read of %s arrived (queued %s, "
                    "dropped %s, received already %s), %s zero-copy references, %s mbufs "
                    "out at exit" % (nm, c.get("tcp_app_read_bytes"), c.get("tcp_rcv_bytes"),
                                     c.get("tcp_rcv_queued_bytes"),
                                     c.get("tcp_rcv_drop_bytes"), c.get("tcp_rcv_dup_bytes"),
                                     c.get("tcp_zc_refs"), s.get("mbufs_in_use_at_exit"))})
    return out


def measure(ctx):
    ids = lcore_ids(ctx.lx)
    res = run_rotating(ctx.lx, all_configs(ctx), ctx.args.reps, ctx.args.duration, ctx.tmp,
                       ctx.progress, ctx.args.timeout)
    kfig = kernel_skip(ctx)
    if kfig is None:
        tsc_hz = (res[name("copy", False, MSS)]["first"] or {}).get("tsc_hz")
        kfig = (kernel_tcp.measure(ctx.args.kernel_reps, KERNEL_SECONDS, kernel_cpus(),
                                   tsc_hz, ctx.progress) if tsc_hz else
                stats.unavailable("no TSC rate from listrx's runs to count cycles with"))
    head = ["row", "Hadi Salim et al.", "listrx: rate per lcore", "listrx: cycles per byte",
            "÷ copy (paired, ns/packet)", "kernel (this host)"]
    tables = [
        {"title": "Throughput per method, MSS 4096 (the seed's MTU 4148)", "columns": head,
         "rows": method_rows(res, kfig)},
        {"title": "Per-byte cost at 1500, 4K and 9K MTUs (GRO off)", "columns": head,
         "rows": size_rows(res)},
        {"title": "One lcore or two: the application on the polling lcore or on its own "
                   "(MSS 4096, GRO off)",
         "columns": ["method", "Hadi Salim et al.", "listrx, 1 lcore", "listrx, 2 lcores",
                     "1 ÷ 2 lcores (paired cycles/byte)", "kernel (this host)"],
         "rows": placement_rows(res, ids, kfig)},
        {"title": "Calls the application makes", "columns": [
            "row", "Hadi Salim et al. (perf trace)", "listrx", "listrx: copy fallbacks"],
         "rows": call_rows(res)},
    ]
    method = [
        "listrx: net_synth tcp-stream, %d in-order flows (copy=0: net_synth writes each "
        "frame's headers), build-meta[,gro],l3-demux with tcp_ehash and a receive socket "
        "per flow (sk_rcvbuf %d MiB), the application reading every socket at the end of "
        "each poll (devmem: DONTNEED per 512 tokens; zcrx and devmem: 1024 buffers); "
        "burst engine at 64; %d rotating repetitions (processes) of %.2f s per "
        "configuration." % (FLOWS, RCVBUF >> 20, ctx.args.reps, ctx.args.duration),
        "rate per lcore: payload bytes the application read per frame ÷ the lcore's busy "
        "ns per frame (the median repetition, its 95 % interval of the median); cycles per "
        "byte: busy cycles per frame ÷ payload bytes read per frame, the median [min–max] "
        "of the repetitions; ÷ copy: stats.compare of the two configurations' ns/frame, "
        "paired by repetition (docs/measuring.md, \"One comparison\"): above 1, the "
        "method costs less per frame than the copy.",
        "one lcore or two: the main lcore (%s) polls in both ([lcore.N] poll = 0:0); the "
        "application reads at the end of each poll on it, or on lcore %s "
        "(tcp_reader_lcore), the receive queue an SP/SC ring between them and what it is "
        "done with back through an rte_ring; tcp_zc_slots %d (a reader that reads a few "
        "polls' segments at once holds more buffers); tcp_window_wait=yes: the poll waits "
        "while a socket has less than half its buffer free, as a sender stops at a closed "
        "window (net_synth's does not: without it the first drop ends the flow). cycles per "
        "byte: the polling lcore's busy cycles less those waits and, on one lcore, less "
        "the reads (tcp_app_busy_cycles), plus the reads', ÷ payload bytes read; the "
        "median [min–max] of the repetitions; Gb/s: bytes read ÷ the run's wall time. "
        "1 ÷ 2 lcores: stats.compare of the two placements' cycles per byte, paired by "
        "repetition. The host's CPUs are shared: each lcore is one vCPU, and the time "
        "another task or the hypervisor takes from it counts in the busy (TSC) cycles of "
        "whichever lcore it stalls; \"the reader on its CPU\": the reader lcore's own "
        "CPU time in its reads (tcp_app_oncpu_ns, CLOCK_THREAD_CPUTIME_ID: another "
        "task's time on that CPU left out, the hypervisor's not) at the TSC's rate." % ((ids or ["?"])[0], (ids or [None, "?"])[1], LCORE_ZC_SLOTS),
        "kernel: the copy baseline, one TCP stream over a veth pair (MTU %d) into a "
        "network namespace, the sender's veth without TSO and GSO (every 4 KB segment "
        "alone: GRO off), a reader doing recv() into a 64 KiB buffer; %d windows of %.1f s "
        "per placement, alternating: 1 CPU (sender, softirq, reader on CPU %d: listrx's "
        "net_synth writes its frames on the polling lcore too) or 2 (the reader alone on "
        "CPU %d); Gb/s: bytes read ÷ the reader's wall time; cycles per byte: CPU seconds "
        "(getrusage of the reader and of the sender, user + system, and the ksoftirqd "
        "threads' of those CPUs, all tick-sampled) × the TSC's rate ÷ bytes read, the "
        "median [min–max] of the windows; on a shared host the windows are slower "
        "than the CPU time says (the CPUs do others' work too). Zero-copy: %s." % (
            kernel_tcp.MTU, ctx.args.kernel_reps, KERNEL_SECONDS, kernel_cpus()[1],
            kernel_cpus()[1], KERNEL[len(stats.UNAVAILABLE):]),
    ]
    return {"tables": tables, "method": method, "checks": checks_of(res),
            "figures": {"listrx": {k: v["runs"] for k, v in res.items()},
                        "cycles_per_byte": {k: [cycles_per_byte(s) for s in
                                                v["summaries"].values()]
                                            for k, v in res.items()},
                        "kernel": kfig}}
