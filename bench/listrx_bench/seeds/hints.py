"""Seed 004: the xdp-hints thread ("bpf, xdp: introduce and use Generic
Hints/metadata", bpf-next RFC, July 2022): what extracting RX hints costs
per packet, on XDP_DROP (Brouer: 29.80 -> 35.97 ns with all hints) and on
AF_XDP (Karlsson: -21 % copy mode, -29 % zero-copy, timestamp alone
-11 % / -20 %), on i40e.

listrx: the kernel's answer to that thread, the XDP metadata kfuncs
(bpf_xdp_metadata_rx_hash, _rx_timestamp, _rx_vlan_tag), served by the
loader from net_synth's descriptor hints: xdp_hints_{hash,timestamp,vlan,
all}.bpf.o against xdp_hints_none.bpf.o (the same program reading
nothing), native XDP, per packet and listified; the checksum status (no
kfunc) and all hints on the skb side as build-meta's hints=. The kernel:
the same objects device-bound on the veth."""

from .. import stats
from . import kernel_xdp
from .measure import METHOD_DIFF, compare_configs, delta_cell, level, level_cell, run_rotating

SEED = "004"
TITLE = "XDP hints: the per-hint cost, XDP_DROP and AF_XDP"
SOURCE = ("the xdp-hints thread, \"[PATCH RFC bpf-next 00/52] bpf, xdp: introduce and use "
          "Generic Hints/metadata\" (July 2022): Jesper Dangaard Brouer's xdp_rxq_info "
          "XDP_DROP and Magnus Karlsson's xdpsock -r (AF_XDP) on i40e (Intel 700 series); "
          "the CPU is not named in the thread")
VDEV = ("net_synth0,profile=mixed,vlan_share=1,copy=0,"
        "hints=hash+csum+vlan+timestamp+ptype")
PIPELINE = "build-meta,gro,l3-demux"
ENGINES = ("packet", "burst")
HINTS = ("hash", "timestamp", "vlan", "all")

NOT_MODELLED_AFXDP = "not modelled: no AF_XDP port with RX metadata in listrx"
KERNEL_AFXDP = "unavailable: AF_XDP with RX metadata not measured on the veth"

# (key, label, published, listrx base/other or None, kernel base/other, why)
XDP_ROWS = [
    ("all", "XDP_DROP, no touch: all hints against none",
     "29.80 → 35.97 ns: +6.17 ns (−18 %)",
     "i40e's driver (the 2022 patches) wrote every hint into the metadata area in "
     "front of each frame, read or not; listrx does what the kernel adopted instead "
     "(6.3, the kfuncs): the stage copies from the mbuf's offload fields only what the "
     "program asks for, and each kfunc is a few inlined loads and stores; the veth "
     "answers from the skb, its rx_hash running the flow dissector (skb_get_hash) as no "
     "NIC gave a hash."),
    ("hash", "the RX hash alone", "(no per-hint XDP_DROP figure in the thread)",
     "listrx returns net_synth's Toeplitz hash and the type of the descriptor's packet "
     "type; the veth computes a software hash per frame, which dominates its row."),
    ("timestamp", "the RX timestamp alone",
     "(XDP: none in the thread; AF_XDP below: −11 % copy, −20 % zero-copy)",
     "listrx converts net_synth's TSC stamp to ns (one 128-bit multiply); the veth "
     "returns the skb's hardware stamp (0 for these frames)."),
    ("vlan", "the VLAN tag alone", "(no per-hint XDP_DROP figure in the thread)",
     "every net_synth frame here is tagged and its tag stripped into the mbuf; the "
     "kernel's traffic carries no tag: veth answers -ENODATA at once."),
]

STACK_ROWS = [
    ("csum", "the checksum status", "(in \"all hints\" above; i40e's csum hint)",
     "no XDP kfunc exists for it (Linux 6.18 has hash, timestamp and VLAN tag), so "
     "listrx measures it where the kernel uses it: build-meta's hints=csum (ip_summed "
     "from the NIC's flags) against hints=none.",
     "unavailable: no checksum kfunc in the kernel (6.18); the skb's ip_summed comes "
     "from the driver, not measurable apart on a veth"),
    ("bm-all", "all hints on the skb side (build-meta hints=all against none)",
     "(the thread's aim: build the SKB from the same hints)",
     "build-meta's hint setters (skb_set_hash, ip_summed, the hwaccel VLAN tag, "
     "skb_hwtstamps, ptype) for every frame: the per-packet extraction the 2022 patches "
     "proposed, on the stack's side.",
     "unavailable: the veth's skb metadata is the sender's, not a driver's extraction"),
]

AFXDP_WHY = (
    "the thread measured the driver writing hints into the metadata area in front of "
    "each frame for an AF_XDP consumer; listrx's ports (DPDK 22.11's net_af_xdp among "
    "them) read no RX metadata from a UMEM, and on the veth an AF_XDP socket runs in copy "
    "mode behind generic XDP: the kfunc rows above are listrx's per-hint figures")
# (label, published, listrx's cell, the kernel's cell, why)
AFXDP_ROWS = [
    ("AF_XDP rxdrop, hints off (xdpsock -r)", "33.63 Mpps (29.7 ns)",
     NOT_MODELLED_AFXDP, KERNEL_AFXDP, AFXDP_WHY),
    ("AF_XDP copy mode: all hints / hints off", "−21 % (6.2 ns) / −2 % (0.59 ns)",
     NOT_MODELLED_AFXDP, KERNEL_AFXDP, AFXDP_WHY),
    ("AF_XDP zero-copy: all hints / hints off", "−29 % / −9 %",
     NOT_MODELLED_AFXDP, KERNEL_AFXDP, AFXDP_WHY),
    ("AF_XDP timestamp alone: copy / zero-copy", "−11 % / −20 %",
     NOT_MODELLED_AFXDP, KERNEL_AFXDP, AFXDP_WHY),
    ("XDP_TX: hints on / off", "−10 % / −2.5 %",
     "not measured: the kfuncs run before the verdict, so a hint costs an XDP_TX "
     "program what it costs the drop program above",
     "unavailable: not measured, as listrx's",
     "i40e's driver extracted the hints for every frame whatever the action; with kfuncs "
     "the cost is the program's reads, the same for every action"),
    ("XDP_DROP with a read of the frame: all hints", "+4.84 ns",
     "not measured: xdp_hints reads no frame byte (the read's own cost: seed 000's "
     "native read row)",
     "unavailable: not measured, as listrx's",
     "with the frame's line already read the driver's extraction overlapped the miss; "
     "listrx's hint values come from the mbuf header, not the frame"),
    ("i40e descriptor extraction without bitfields", "−1.24 ns (4.2 %)",
     "not modelled: net_synth writes the mbuf's offload fields; there is no descriptor "
     "format to decode",
     "unavailable: a veth has no descriptor",
     "a driver's own code (i40e's bitfield reads), which neither listrx nor a veth has"),
]


def configs(art):
    out = []
    for engine in ENGINES:
        common = ["--engine", engine, "--burst", "64", "--pipeline", PIPELINE]
        for v in ("none",) + HINTS:
            out.append({"name": "kfunc %s %s" % (v, engine), "vdev": VDEV,
                        "args": common + ["--xdp-prog", art["xdp_hints_" + v],
                                          "--xdp-mode", "native", "--xdp-jit", "1"]})
        for h in ("none", "csum", "all"):
            out.append({"name": "bm %s %s" % (h, engine), "vdev": VDEV,
                        "args": ["--engine", engine, "--burst", "64", "--pipeline",
                                 "build-meta", "--set", "stage.build-meta.hints=" + h]})
    return out


def kernel_configs(art):
    return [{"name": "kfunc " + v, "mode": "xdpdrv", "obj": art["xdp_hints_" + v],
             "dev_bound": True} for v in ("none",) + HINTS]


def plan(ctx):
    work = [("run", len(configs(ctx.art)) * ctx.args.reps, ctx.args.duration + 0.8)]
    if ctx.kernel_ok:
        work.append(("window", len(HINTS + ("none",)) * ctx.args.kernel_reps, 0.5))
    return work


def _check(summary, name):
    """Every frame went through the program (or build-meta) and, for a
    kfunc configuration, each hint it reads was there."""
    if name.startswith("bm"):
        bm = next((s for s in summary.get("stages", []) if s.get("name") == "build-meta"), {})
        n = bm.get("packets") or 0
        return {"ok": n > 0, "text": "%s: build-meta took %d frames" % (name, n)}
    xdp = next((s for s in summary.get("stages", []) if s.get("name") == "xdp"), {})
    seen = xdp.get("packets") or 0
    words = []
    for m in summary.get("maps", []):
        if m.get("name") == "hint_stats":
            for e in m.get("entries", []):
                raw = bytes(int(b, 16) for b in e["value"].split())
                words = [int.from_bytes(raw[i:i + 8], "little") for i in range(0, 40, 8)]
    hint = name.split()[1]
    want = {"hash": [1], "timestamp": [2], "vlan": [3], "all": [1, 2, 3]}.get(hint, [])
    ok = seen > 0 and words and words[0] == seen and all(words[i] == seen for i in want)
    return {"ok": bool(ok), "text": "%s: %d frames, hint_stats %s" % (name, seen, words[:4])}


def measure_kernel(ctx):
    art = kernel_xdp.artifacts(ctx.build)
    cfgs = kernel_configs(art)
    with kernel_xdp.session(art, ctx.args.kernel_cpu, ctx.log) as exp:
        xw = kernel_xdp.XdpWindows(exp, art, ctx.log)
        runs = kernel_xdp.rotating_windows(xw, cfgs, ctx.args.kernel_reps, ctx.progress)
        # the check: xdp_hints_all attached afresh (new maps), one window
        xw.current = None
        w = xw.window(cfgs[-1], ctx.args.kernel_reps, phase="check")
        dump = xw.map_dump(cfgs[-1], "hint_stats")
        xw.detach()
    return {"runs": runs, "hint_stats_all": dump,
            "check_frames": w["counters"].get("poll_work")}


def _pair(data, base, other):
    return delta_cell(compare_configs(data, base, other))


def measure(ctx):
    res = run_rotating(ctx.lx, configs(ctx.art), ctx.args.reps, ctx.args.duration,
                       ctx.tmp, ctx.progress, ctx.args.timeout)
    lx = {k: {"runs": v["runs"], "shared": v["shared"]} for k, v in res.items()}
    checks = [_check(v["first"], k) for k, v in res.items()]
    kfig, why = None, ctx.kernel_why
    if ctx.kernel_ok:
        kfig, why = kernel_xdp.run_checked(lambda: measure_kernel(ctx), ctx.log)
    k = kfig["runs"] if kfig else None
    kcell = (lambda b, o: _pair(k, b, o)) if k else (lambda b, o: stats.unavailable(why))
    head = ["row", "xdp-hints thread 2022 (i40e)", "listrx, per packet", "listrx, burst 64",
            "kernel (veth, this host)"]
    base_rows = [{"cells": ["XDP_DROP, no hint read (xdp_hints_none)", "29.80 ns"] +
                  [level_cell(level(lx["kfunc none %s" % e]["runs"])) for e in ENGINES] +
                  [level_cell(level(k["kfunc none"]["runs"])) if k else
                   stats.unavailable(why)],
                  "why": "i40e on a 2022 server against net_synth on this host; the "
                  "program does a per-CPU map update per frame (all rows the same)"}]
    xdp_rows = [{"cells": [label, pub] +
                 [_pair(lx, "kfunc none %s" % e, "kfunc %s %s" % (key, e)) for e in ENGINES] +
                 [kcell("kfunc none", "kfunc " + key)], "why": w}
                for key, label, pub, w in XDP_ROWS]
    stack_rows = [{"cells": [label, pub] +
                   [_pair(lx, "bm none %s" % e, "bm %s %s" % (key.replace("bm-", ""), e))
                    for e in ENGINES] + [kernel_why], "why": w}
                  for key, label, pub, w, kernel_why in STACK_ROWS]
    afxdp = [{"cells": [label, pub, lx_cell, lx_cell, k_cell], "why": w}
             for label, pub, lx_cell, k_cell, w in AFXDP_ROWS]
    return {
        "tables": [
            {"title": "XDP_DROP and what each hint adds (ns per packet; the hint rows are "
             "paired differences against reading none)", "columns": head,
             "rows": base_rows + xdp_rows},
            {"title": "The hints on the skb side (build-meta), paired differences",
             "columns": head, "rows": stack_rows},
            {"title": "AF_XDP, XDP_TX and the driver's own rows", "columns": head,
             "rows": afxdp}],
        "method": [
            "listrx: net_synth %s (every frame tagged, every hint on), native XDP with "
            "the xdp_hints objects under the rte_bpf JIT, %d rotating repetitions of "
            "%.2f s; a hint's cell against xdp_hints_none, and each build-meta row "
            "against hints=none, is %s" % (VDEV, ctx.args.reps, ctx.args.duration,
                                           METHOD_DIFF),
            "kernel: the same objects device-bound (BPF_F_XDP_DEV_BOUND_ONLY) as native "
            "XDP on the veth, lrx-kinject's UDP frames (no VLAN tag, no hash from a NIC), "
            "%d rotating windows per object." % ctx.args.kernel_reps],
        "checks": checks + ([_kernel_check(kfig)] if kfig else []),
        "figures": {"listrx": lx, "kernel": kfig or why},
    }


def hint_totals(dump):
    """[frames, hash, timestamp, vlan] summed over the CPUs of a bpftool
    JSON dump of hint_stats (BTF-formatted or raw bytes), or None."""
    try:
        entry = dump[0].get("formatted", dump[0])
        out = [0, 0, 0, 0]
        for v in entry["values"]:
            val = v["value"]
            if isinstance(val, dict):
                words = [int(val[f]) for f in ("frames", "hash", "timestamp", "vlan")]
            else:
                raw = bytes(int(b, 16) for b in val)
                words = [int.from_bytes(raw[i:i + 8], "little") for i in range(0, 32, 8)]
            out = [a + b for a, b in zip(out, words)]
        return out
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None


def _kernel_check(kfig):
    """xdp_hints_all on the veth, one window: every frame polled went
    through it, each with a hash (veth computes one) and a timestamp
    answer, none with a VLAN tag (the traffic has none)."""
    tot = hint_totals(kfig.get("hint_stats_all"))
    if tot is None:
        return {"ok": False, "text": "kernel: hint_stats of xdp_hints_all not readable: %s"
                % str(kfig.get("hint_stats_all"))[:200]}
    polled = kfig.get("check_frames") or 0
    ok = tot[0] > 0 and tot[0] == polled and tot[1] == tot[0] and tot[2] == tot[0] and \
        tot[3] == 0
    return {"ok": ok, "text": "kernel xdp_hints_all: %d frames (%d polled), %d with a hash, "
            "%d with a timestamp, %d with a VLAN tag" % (tot[0], polled, tot[1], tot[2],
                                                        tot[3])}
