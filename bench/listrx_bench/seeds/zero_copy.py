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
(seeds/measure.py), each method against copy by stats.compare."""

from .. import stats
from .measure import compare_configs, level, ratio_cell, run_rotating

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
    ("zcrx", 1): "139 Gb/s; 190 with HW GRO (the talk's summary)",
    ("copy", 1): "a chart only: no figure in the text",
}
SYSCALLS = [
    ("devmem, 2 CPUs, before batching", "recvmsg 615359, setsockopt 530116 (100 s)"),
    ("devmem, 2 CPUs, after batching", "recvmsg 809214, setsockopt 530128 (100 s)"),
    ("devmem, 1 CPU, before batching", "recvmsg 206570, setsockopt 294394 (100 s)"),
    ("devmem, 1 CPU, after batching", "recvmsg 486578, setsockopt 347744 (100 s)"),
    ("devmem, tokens per recvmsg", "874.6 on average (1 .. 1499)"),
]
NOT_TWO = ("not modelled: listrx's application reads on the polling lcore at the end of "
           "each poll; a reader on another lcore (an rte_ring between them, as the seed's "
           "second CPU) is not implemented")
KERNEL = ("unavailable: zero-copy needs a NIC with header split (a virtio NIC and veths "
          "here); the copy baseline over a veth TCP stream is not built yet (its sender "
          "shares this 2-vCPU VM's CPUs with the receiver)")


def name(mode, gro, mss):
    return "%s %s %d" % (mode, "gro" if gro else "nogro", mss)


def config(mode, gro, mss):
    args = ["--engine", "burst", "--burst", "64",
            "--pipeline", "build-meta,gro,l3-demux" if gro else "build-meta,l3-demux"]
    for k, v in (("tcp_ports", "5201"), ("tcp_ehash", "64"), ("tcp_rcv_socks", str(FLOWS)),
                 ("tcp_rcvbuf", str(RCVBUF)), ("tcp_read", mode)):
        args += ["--set", "stage.l3-demux.%s=%s" % (k, v)]
    if ROOM[mss]:
        args += ["--set", "mempool.data_room=%d" % ROOM[mss]]
    return {"name": name(mode, gro, mss), "keep": True, "args": args,
            "vdev": "net_synth0,profile=tcp-stream,flows=%d,mss=%d,copy=0" % (FLOWS, mss)}


def configs():
    out = [config(m, g, MSS) for g in (False, True) for m in MODES]
    return out + [config(m, False, s) for s in SIZES for m in ("copy", "zcrx")]


def plan(ctx):
    return [("run", len(configs()) * ctx.args.reps, ctx.args.duration + 0.8)]


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

def method_rows(res):
    rows = []
    for gro in (False, True):
        for mode in MODES:
            nm = name(mode, gro, MSS)
            rate, cpb = level_cells(res, nm)
            vs = (ratio_cell(compare_configs(res, name("copy", gro, MSS), nm))
                  if mode != "copy" else "—")
            rows.append({"cells": ["%s, 1 CPU, software GRO %s" % (mode, "on" if gro else "off"),
                                   PUBLISHED.get((mode, 1), "—"), rate, cpb, vs, KERNEL],
                         "why": WHY[mode]})
    rows.append({"cells": ["any method, 2 CPUs (the application on its own core)",
                           "devmem " + PUBLISHED[("devmem", 2)], NOT_TWO, "—", "—", KERNEL]})
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
                                   rate, cpb, vs, KERNEL]})
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
    res = run_rotating(ctx.lx, configs(), ctx.args.reps, ctx.args.duration, ctx.tmp,
                       ctx.progress, ctx.args.timeout)
    head = ["row", "Hadi Salim et al.", "listrx: rate per lcore", "listrx: cycles per byte",
            "÷ copy (paired, ns/packet)", "kernel (this host)"]
    tables = [
        {"title": "Throughput per method, MSS 4096 (the seed's MTU 4148)", "columns": head,
         "rows": method_rows(res)},
        {"title": "Per-byte cost at 1500, 4K and 9K MTUs (GRO off)", "columns": head,
         "rows": size_rows(res)},
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
        "kernel: %s." % KERNEL[len(stats.UNAVAILABLE):],
    ]
    return {"tables": tables, "method": method, "checks": checks_of(res),
            "figures": {"listrx": {k: v["runs"] for k, v in res.items()},
                        "cycles_per_byte": {k: [cycles_per_byte(s) for s in
                                                v["summaries"].values()]
                                            for k, v in res.items()},
                        "kernel": KERNEL}}
