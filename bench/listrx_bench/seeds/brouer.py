"""Seed 000: Brouer, "Eval Generic netstack XDP patch" (2017-04, updated
2017-06; kernel v4.12 with the generic XDP patch V4). The author's rows:
XDP_DROP without and with a read of the frame, XDP_TX, each native (mlx5)
and generic (netif_receive_generic_xdp), the ns the generic path adds and
the perf zoom-in of generic XDP_DROP at 122.5 ns per packet.

listrx: the same programs (xdp_drop, xdp_read_drop, xdp_tx_swap eBPF
objects, rte_bpf JIT) native (the first stage) and generic (after
build-meta and gro) on net_synth udp64 with cold buffers, the packet
engine (the 2017 kernel handled each packet through the stack) and the
burst engine beside it; the zoom-in from a --stats-level cycles run. The
kernel: the same objects on the veth, native and generic, and perf's
per-function split of generic XDP_DROP with a read."""

from .. import stats
from . import kernel_xdp
from .measure import (METHOD_DIFF, compare_configs, delta_cell, level, level_cell, run_rotating,
                      spread_cell, stage_ns)

SEED = "000"
TITLE = "Brouer, generic XDP: native vs generic XDP_DROP/XDP_TX and the zoom-in"
SOURCE = ("Jesper Dangaard Brouer, \"Eval Generic netstack XDP patch\" (2017-04-24, "
          "updated 2017-06-08): Linux v4.12 with the generic XDP patch (V4), Intel Core "
          "i7-6700K @ 4.00 GHz (Skylake), ConnectX-4 100 Gbit/s (mlx5), "
          "xdp_bench01_mem_access_cost, pktgen 64-byte UDP, one flow, one RX CPU")
VDEV = "net_synth0,profile=udp64,copy=0,cold=1,cold_mb=64"
PIPELINE = "build-meta,gro,l3-demux"
ENGINES = ("packet", "burst")


# the author's rows: (key, label, Mpps, text, why)
ROWS = [
    ("native drop", "native XDP_DROP, no touch", 19.803663,
     "19.80 Mpps (50.5 ns)",
     "mlx5 hands the program a page it recycles, the frame never read; net_synth "
     "(cold=1: mbufs spread over 64 MiB in shuffled order, frame heads written with "
     "non-temporal stores, as DMA leaves them) misses on each mbuf's header as a driver "
     "on its descriptor, with no ring and no DMA, and the program is rte_bpf JIT code "
     "behind an indirect call; the veth's \"native\" XDP first turns the sender's skb "
     "into an xdp_buff (veth_xdp_rcv_skb copies it into a page-pool page) and frees it: "
     "an skb cost the NIC does not have."),
    ("native read", "native XDP_DROP, read", 12.006685,
     "12.01 Mpps (83.3 ns)",
     "the read brings in the frame's first line: on the Skylake an L3 hit (DDIO put it "
     "there), ≈32 ns; net_synth cold=1 writes frames with non-temporal stores into 64 "
     "MiB the CPU has not touched, so the read misses to memory; on the veth the copy "
     "into the xdp_buff has already touched the frame."),
    ("native tx", "native XDP_TX (MAC swap, read)", 10.107946,
     "10.11 Mpps (98.9 ns)",
     "mlx5 posts the page to its TX ring and rings the doorbell per batch; listrx's "
     "XDP_TX goes out of net_synth's TX burst (no ring, the mbufs recycled in bulk); "
     "the veth sends the frame to its peer, whose native XDP drop takes it on the same "
     "CPU."),
    ("generic drop", "generic XDP_DROP, no touch", 8.432846,
     "8.43 Mpps (118.6 ns)",
     "generic XDP runs after the SKB is built and GRO has seen it, so the frame is "
     "always touched (the author: no difference with a read); listrx: build-meta "
     "(skb-like metadata: allocation, clear, L2 parse) and gro before the xdp stage; "
     "the veth: the sender's skb arrives built, GRO and the stack's entry run, no "
     "driver."),
    ("generic read", "generic XDP_DROP, read", 8.413417,
     "8.41 Mpps (118.9 ns); the zoom-in run 8.15 Mpps (122.5 ns)",
     "as the row above: the read adds nothing once the stack has touched the frame."),
    ("generic tx", "generic XDP_TX (read)", 4.574424,
     "4.57 Mpps (218.6 ns)",
     "generic XDP_TX goes through the qdisc-less xmit of an skb (generic_xdp_tx, "
     "mlx5e_xmit: a doorbell and an sfence per packet; the author suspected a stall); "
     "listrx's TX is net_synth's burst per poll; the veth's xmit is its peer's receive."),
]

# the differences the author draws: (label, base key, other key, text, why)
DIFFS = [
    ("the read's cache miss: native read − native no touch", "native drop", "native read",
     "+32.8 ns ((1/12.0 − 1/19.8) µs)",
     "a miss from L3 on the Skylake; from memory with net_synth's cold buffers (more); "
     "none on the veth (its skb copy touched the frame already)."),
    ("generic − native, no touch", "native drop", "generic drop",
     "+68.1 ns ((1/8.4 − 1/19.8) µs: the miss, the SKB and the stack's entry)",
     "listrx's generic path adds build-meta and gro stage code and their metadata; the "
     "NIC's saving (no SKB) is modelled by build-meta's allocation and clear; on the "
     "veth both modes start from an skb, so its gap is GRO and the stack's entry minus "
     "the skb copy native XDP makes."),
    ("generic − native, read", "native read", "generic read",
     "+35.6 ns ((1/8.41 − 1/12.0) µs); +39.4 ns with the zoom-in run",
     "the SKB allocation and the stack's entry without the miss both paths pay: the "
     "author's estimate of what generic XDP costs."),
    ("generic − native, XDP_TX", "native tx", "generic tx",
     "+119.7 ns ((1/4.57 − 1/10.1) µs)",
     "the generic TX path through an skb xmit per packet (a doorbell and a lock per "
     "packet on mlx5); listrx and the veth send per poll or per frame with no doorbell."),
]

# the zoom-in (generic XDP_DROP, read: 122.5 ns per packet, perf self %):
# (role, the author's functions, their ns, listrx's counterpart, kernel regex)
ZOOM = [
    ("driver RX", "mlx5e_handle_rx_cqe 42.0, mlx5e_get_cqe 3.6, mlx5e_alloc_rx_wqe 4.5, "
     "mlx5e_post_rx_wqes 1.5, mlx5e_page_release 1.5, mlx5e_poll_rx_cq 1.0 (the first "
     "touch of the frame inlined)", 54.1, "outside",
     r"^(mlx5|veth_|__veth|ptr_ring|page_pool|napi_threaded|__napi_poll|napi_complete|"
     r"net_rx_action)"),
    ("SKB build", "__build_skb 12.7, build_skb 6.7, kmem_cache_alloc 4.9, skb_put 1.0",
     25.3, "build-meta",
     r"^(__?build_skb|napi_build_skb|__napi_build_skb|kmem_cache_alloc|skb_put|"
     r"__alloc_skb|napi_skb_cache|eth_type_trans|__finalize_skb|pskb_expand_head|"
     r"skb_cow_data_for_xdp|__kmalloc|kmalloc|__pi_memcpy|memcpy)"),
    ("GRO", "napi_gro_receive 2.2, dev_gro_receive 1.8, skb_gro_reset_offset 0.9",
     4.9, "gro", r"(gro_|_gro|inet_gro|udp4_gro|udp_gro)"),
    ("the stack's entry", "netif_receive_skb_internal 4.7, __rcu_read_lock/unlock 3.4",
     8.1, None, r"^(netif_receive|__netif_receive|__rcu_read|rcu_read)"),
    ("XDP program", "bpf_prog 5.0, percpu_array_map_lookup_elem 1.0, "
     "bpf_map_lookup_elem 0.3", 6.3, "xdp",
     r"^(bpf_prog_|do_xdp_generic|netif_receive_generic_xdp|bpf_xdp|.*map_lookup_elem)"),
    ("free", "page_frag_free 6.2, kmem_cache_free 4.6, skb_release_data 2.0, "
     "skb_release_head_state 1.8, kfree_skb 1.5, skb_release_all 1.0, skb_free_head 1.0, "
     "kfree_skbmem 1.0", 19.1, "in driver RX",
     r"^(kfree|kmem_cache_free|skb_release|skb_free_head|page_frag_free|__slab_free|"
     r"slab_update_freelist|put_cpu_partial|__memcg_slab_free|sk_skb_reason_drop|"
     r"__kfree_skb|napi_consume|skb_attempt_defer|sock_wfree|sock_def_write_space)"),
]
# the order a kernel function is matched in (the first role that names it)
ZOOM_MATCH_ORDER = ("SKB build", "GRO", "XDP program", "free", "the stack's entry",
                    "driver RX")
ZOOM_TOTAL = 122.5
ZOOM_CONFIG = "zoom generic read packet"


def configs(art):
    """The listrx configurations of the rows (native and generic, each
    engine) and of the zoom-in (generic read, per packet, cycles)."""
    progs = {"drop": art["xdp_drop"], "read": art["xdp_read_drop"], "tx": art["xdp_tx_swap"]}
    out = []
    for mode in ("native", "generic"):
        for action, obj in progs.items():
            for engine in ENGINES:
                out.append({"name": "%s %s %s" % (mode, action, engine), "vdev": VDEV,
                            "args": ["--engine", engine, "--burst", "64",
                                     "--pipeline", PIPELINE, "--xdp-prog", obj,
                                     "--xdp-mode", mode, "--xdp-jit", "1"]})
    zoom = dict(next(c for c in out if c["name"] == "generic read packet"))
    zoom.update(name=ZOOM_CONFIG, level="cycles", keep=True)
    return out + [zoom]


def kernel_configs(art):
    progs = {"drop": art["xdp_drop"], "read": art["xdp_read_drop"], "tx": art["xdp_tx_swap"]}
    return [{"name": "%s %s" % (mode, action),
             "mode": "xdpdrv" if mode == "native" else "xdpgeneric", "obj": obj}
            for mode in ("native", "generic") for action, obj in progs.items()]


def plan(ctx):
    """(kind, count, seconds each) of the work, for the progress bar."""
    work = [("run", len(configs(ctx.art)) * ctx.args.reps, ctx.args.duration + 0.8)]
    if ctx.kernel_ok:
        work.append(("window", 6 * ctx.args.kernel_reps + ctx.args.perf_windows, 0.5))
    return work


def _check(summary, name):
    """The xdp stage saw every frame and gave the row's verdict."""
    xdp = next((s for s in summary.get("stages", []) if s.get("name") == "xdp"), {})
    c = xdp.get("counters") or {}
    want = "tx" if name.split()[1] == "tx" else "drop"
    seen = xdp.get("packets") or 0
    ok = seen > 0 and c.get(want) == seen
    return {"ok": ok, "text": "%s: xdp %s %s of %s frames" % (name, want, c.get(want), seen)}


def measure_listrx(ctx):
    res = run_rotating(ctx.lx, configs(ctx.art), ctx.args.reps, ctx.args.duration,
                       ctx.tmp, ctx.progress, ctx.args.timeout)
    zoom = [stage_ns(s) for _, s in sorted(res.pop(ZOOM_CONFIG)["summaries"].items())]
    checks = [_check(v["first"], k) for k, v in res.items()]
    return {k: {"runs": v["runs"], "shared": v["shared"]} for k, v in res.items()}, zoom, checks


def measure_kernel(ctx):
    art = kernel_xdp.artifacts(ctx.build)
    cfgs = kernel_configs(art)
    with kernel_xdp.session(art, ctx.args.kernel_cpu, ctx.log) as exp:
        xw = kernel_xdp.XdpWindows(exp, art, ctx.log)
        xw.guard_peer()
        runs = kernel_xdp.rotating_windows(xw, cfgs, ctx.args.kernel_reps, ctx.progress)
        funcs, samples = ({}, 0)
        if ctx.args.perf_windows:
            zoom = next(c for c in cfgs if c["name"] == "generic read")
            funcs, samples = kernel_xdp.perf_functions(
                xw, zoom, ctx.args.perf_windows, ctx.tmp, ctx.progress)
        xw.detach()
    return {"runs": runs, "functions": funcs, "perf_samples": samples}


def _row_cells(lx_runs, k_runs, key):
    cells = []
    for engine in ENGINES:
        cells.append(level_cell(level(lx_runs["%s %s" % (key, engine)]["runs"])))
    cells.append(k_runs if isinstance(k_runs, str) else
                 level_cell(level(k_runs[key]["runs"])))
    return cells


def _diff_cells(lx_runs, k_runs, base, other):
    cells = [delta_cell(compare_configs(lx_runs, "%s %s" % (base, e), "%s %s" % (other, e)))
             for e in ENGINES]
    cells.append(k_runs if isinstance(k_runs, str) else
                 delta_cell(compare_configs(k_runs, base, other)))
    return cells


ZOOM_WHY = {
    "driver RX": "mlx5's descriptor, page and first touch of the frame; listrx has no "
                 "descriptor ring: its rx_burst, the sink's frees and the loop are one "
                 "figure (here and in \"free\"); veth's NAPI takes the sender's skb off "
                 "a ring",
    "SKB build": "listrx's build-meta: metadata allocation, clear and L2 parse; on the "
                 "veth the sender built the skb, but generic XDP reallocates its head "
                 "for XDP's 256-byte headroom (pskb_expand_head, a copy per frame)",
    "GRO": "listrx's gro stage against napi_gro_receive and dev_gro_receive",
    "the stack's entry": "listrx's engine calls the next stage directly: no separate "
                         "figure",
    "XDP program": "rte_bpf JIT code against the kernel's JIT; the same object",
    "free": "listrx frees in the sink, in bulk per poll (counted in \"driver RX\"); "
            "the kernel frees each skb (kfree_skb), and on the veth the sender's socket "
            "accounting runs at that free (sock_wfree)",
}


def _zoom_cells(zoom, groups, role, stage):
    """listrx's and the kernel's cell of a zoom-in row."""
    if stage is None:
        lx = stats.unavailable("not a stage in listrx: the engine's dispatch, inside "
                               "\"driver RX\" and \"free\"")
    elif stage == "outside":
        lx = spread_cell([z.get("outside") for z in zoom],
                         "rx_burst, the sink's frees and the loop: one figure")
    elif stage == "in driver RX":
        lx = ("not measured: apart from \"driver RX\" (the sink frees the poll's "
              "mbufs in bulk, outside the stages)")
    else:
        lx = spread_cell([z.get(stage) for z in zoom], "%s stage" % stage)
    k = spread_cell([g[role] for g in groups], "perf self time") if groups else None
    return lx, k


def _zoom_rows(zoom, kfig):
    rows = []
    funcs = kfig.get("functions") if isinstance(kfig, dict) else None
    by_role = {r: pat for r, _, _, _, pat in ZOOM}
    pats = {r: by_role[r] for r in ZOOM_MATCH_ORDER}
    groups = [kernel_xdp.group_ns(f, pats) for f in funcs] if funcs else None
    no_k = kfig if isinstance(kfig, str) else stats.unavailable("perf took no samples")
    for role, text, ns, stage, _ in ZOOM:
        lx, k = _zoom_cells(zoom, groups, role, stage)
        rows.append({"cells": [role, "%s: %.1f ns" % (text, ns), lx, k or no_k],
                     "why": ZOOM_WHY[role]})
    rows.append({"cells": ["rest", "(the other functions of the 122.5 ns)",
                           stats.unavailable("none: listrx's rows above add up to its "
                                             "total"),
                           spread_cell([g["other"] for g in groups], "perf: other "
                                       "functions") if groups else no_k],
                 "why": "the kernel's functions no role above names"})
    rows.append({"cells": ["total", "%.1f ns (8.15 Mpps)" % ZOOM_TOTAL,
                           spread_cell([z.get("total") for z in zoom], "busy ns/packet"),
                           spread_cell([sum(g.values()) for g in groups], "NAPI on-CPU")
                           if groups else no_k],
                 "why": "each run's whole ns/packet (listrx: %d runs at --stats-level "
                 "cycles, whose clock reads add to it; kernel: the perf windows)" % len(zoom)})
    return rows


def measure(ctx):
    lx_runs, zoom, checks = measure_listrx(ctx)
    kfig, why = (None, ctx.kernel_why)
    if ctx.kernel_ok:
        kfig, why = kernel_xdp.run_checked(lambda: measure_kernel(ctx), ctx.log)
    k_runs = kfig["runs"] if kfig else stats.unavailable(why)
    rows = [{"cells": [label, text] + _row_cells(lx_runs, k_runs, key), "why": w}
            for key, label, _, text, w in ROWS]
    diffs = [{"cells": [label, text] + _diff_cells(lx_runs, k_runs, base, other), "why": w}
             for label, base, other, text, w in DIFFS]
    head = ["row", "Brouer 2017 (mlx5, i7-6700K)", "listrx, per packet",
            "listrx, burst 64", "kernel (veth, this host)"]
    return {
        "tables": [
            {"title": "XDP_DROP and XDP_TX, native and generic (ns per packet)",
             "columns": head, "rows": rows},
            {"title": "What the generic path adds (paired differences, ns per packet)",
             "columns": head, "rows": diffs},
            {"title": "The zoom-in: generic XDP_DROP with a read, ns per packet by role",
             "columns": ["role", "Brouer 2017 (perf self time)", "listrx (cycles run, "
                         "per packet)", "kernel (veth, perf self time)"],
             "rows": _zoom_rows(zoom, kfig or stats.unavailable(why))}],
        "method": [
            "listrx: net_synth %s, pipeline %s with the xdp stage first (native) or after "
            "gro (generic), the eBPF objects under the rte_bpf JIT; %d rotating "
            "repetitions of %.2f s per configuration; a cell is the median ns/packet "
            "(busy cycles) [95 %% interval of the median]; a difference of two "
            "configurations is %s" % (VDEV, PIPELINE, ctx.args.reps, ctx.args.duration,
                                      METHOD_DIFF),
            "kernel: the same objects on the veth of `listrx-bench kernel` (ip link "
            "xdpdrv/xdpgeneric), lrx-kinject's 64-byte UDP, the NAPI kthread's on-CPU ns "
            "per frame, %d rotating windows of 12800 frames per configuration; the zoom-in "
            "from perf over %d windows of generic read." % (ctx.args.kernel_reps,
                                                            ctx.args.perf_windows)],
        "checks": checks,
        "figures": {"listrx": lx_runs, "zoom": zoom, "kernel": kfig or why},
    }
