"""The kernel experiment's tables and arithmetic (no root, no I/O besides
the report file): traffic kinds, the stage <-> kernel function mapping,
symbol sizes from kallsyms, the windows' figures and paired gains, perf
callchain parsing, the summary and report. Tested on recorded data
(bench/tests/test_kernel.py)."""

import bisect
import os
import re

from . import grid, interleave
from .report import Doc
from .stats import caveat, compare, median, median_interval

# gro_normal_batch values compared: one skb per list vs a whole poll's
BATCHES = (1, 64)

# traffic kinds: what lrx-kinject sends, what net_synth generates for listrx
# traffic kinds: what lrx-kinject sends (its extra arguments), what
# net_synth generates for listrx (None: no listrx counterpart), and whether
# GRO holds skbs, so lists are also handed up outside GRO windows (the
# poll's flush) and the list episodes must be timed
TRAFFIC = {
    "udp": {"l4": "udp", "dport": 9, "synth": "udp64", "socket": False, "episodes": False,
            "inject": [], "what": "64-byte UDP to a local address, no socket (UdpNoPorts)"},
    "udp-sock": {"l4": "udp", "dport": 9, "synth": "udp64", "socket": True, "episodes": False,
                 "inject": [],
                 "what": "64-byte UDP to a bound socket whose receive queue is full "
                 "(UdpRcvbufErrors)"},
    "tcp": {"l4": "tcp", "dport": 5201, "synth": "net_synth0,profile=tcp-stream,flows=1",
            "socket": False, "episodes": True, "inject": [],
            "what": "one TCP stream of 1448-byte segments, no socket (GRO merges ~32 "
            "segments per skb)"},
    "tcp-push": {"l4": "tcp", "dport": 5202, "synth": None, "socket": False, "episodes": True,
                 "inject": ["--psh", "--mss", "256"],
                 "what": "one TCP stream of 256-byte segments with PSH, no socket (GRO "
                 "merges none: each segment goes up alone, as request/response traffic)"},
}

# Layers of the zoom-in table, in listrx's stage order. A kernel function
# belongs to the first layer whose pattern matches its name (without the
# .constprop/.isra suffixes). `stage` is the listrx stage that stands for
# the layer; None: listrx does not model it.
LAYERS = [
    ("driver+skb build", "build-meta",
     r"^(veth_|__?napi_build_skb|__build_skb|build_skb|__finalize_skb|napi_skb_cache|"
     r"eth_type_trans|skb_pp_cow|skb_copy_header|__copy_skb_header|skb_copy_bits|"
     r"page_pool|xdp_|__xdp|bpf_prog|bpf_dispatcher|napi_(?!gro)|__napi_poll|ptr_ring|"
     r"sock_wfree|sock_def_write_space|skb_headers_offset)"),
    ("GRO", "gro",
     r"(gro_|_gro$|^napi_gro|^skb_gro|^__skb_gro|^inet_gro|^tcp4?_gro|^udp4?_gro|"
     r"^dev_gro|^gro)"),
    ("netif core/XDP generic", "l3-demux",
     r"^(__?netif_receive|netif_receive|do_xdp_generic|deliver_skb|skb_defer_rx_timestamp|"
     r"__netif_|netif_|packet_rcv|skb_orphan)"),
    ("IP", "l3-demux",
     r"^(ip_rcv|ip_list_rcv|ip_sublist|ip_route_input|ip_route_use_hint|ip_local_deliver|"
     r"ip_protocol_deliver|raw_local_deliver|fib_|__fib_|__ip_dev_find|ip_can_use_hint|"
     r"nf_hook|inet_add_protocol|rt_|ip_mc|ip_check_defrag|ip_options|l3mdev)"),
    ("UDP/TCP", "l3-demux",
     r"^(udp|__udp|tcp_v4_rcv|tcp_v4_do_rcv|tcp_filter|tcp_add_backlog|__inet_lookup|"
     r"inet_lookup|__inet_hash|sk_filter|sk_skb_reason_drop|__skb_checksum_complete|"
     r"skb_checksum|__skb_checksum|csum_partial|do_csum|sock_queue_rcv|__sk_receive)"),
    ("ICMP/RST reply", None,
     r"^(icmp|__icmp|ip_route_output|__ip_route_output|tcp_v4_send_reset|"
     r"ip_send_unicast_reply|inet_select_addr)"),
    ("skb free/alloc", None,
     r"^(kmem_cache|__slab|slab_|kfree|__kfree|skb_release|consume_skb|napi_consume|"
     r"skb_free_head|__alloc_skb|skb_attempt_defer|___slab|__kmem_cache|kmalloc|"
     r"napi_skb_free|skb_free|__put_page|put_page|__folio_put|free_unref)"),
    ("other", None, r""),
]
LAYER_NAMES = [name for name, _, _ in LAYERS]
_LAYER_RE = [(name, re.compile(pat)) for name, _, pat in LAYERS]

# The kernel functions each listrx stage stands for, by footprint group
# (the groups of the zoom-in table). Sizes come from the running kernel's
# symbol table; a name may carry a compiler suffix (.constprop.0, .isra.0).
STAGE_FUNCTIONS = {
    "build-meta": {
        "skb build + eth_type_trans": [
            "napi_build_skb", "__napi_build_skb", "__build_skb_around",
            "__finalize_skb_around", "napi_skb_cache_get", "build_skb", "eth_type_trans",
            "skb_pp_cow_data", "veth_xdp_rcv_skb", "skb_headers_offset_update"],
    },
    "gro": {
        "GRO": [
            "gro_receive_skb", "napi_gro_receive", "dev_gro_receive", "gro_complete",
            "napi_gro_complete", "__gro_flush", "__napi_gro_flush_chain", "gro_flush",
            "gro_normal_list", "gro_normal_one", "inet_gro_receive", "inet_gro_complete",
            "udp4_gro_receive", "udp_gro_receive", "udp4_gro_complete", "udp_gro_complete",
            "tcp4_gro_receive", "tcp_gro_receive", "tcp4_gro_complete", "tcp_gro_complete",
            "skb_gro_receive", "skb_gro_receive_list", "gro_pull_from_frag0",
            "napi_reuse_skb", "gro_list_prepare", "tcp_gro_pull_header", "udp_gro_receive_segment"],
    },
    "l3-demux": {
        "netif core + generic XDP": [
            "netif_receive_skb_list_internal", "__netif_receive_skb_list_core",
            "__netif_receive_skb_core", "__netif_receive_skb_one_core",
            "__netif_receive_skb", "netif_receive_skb", "do_xdp_generic",
            "netif_receive_generic_xdp", "skb_defer_rx_timestamp"],
        "IP receive + route": [
            "ip_list_rcv", "ip_sublist_rcv", "ip_sublist_rcv_finish", "ip_rcv", "ip_rcv_core",
            "ip_rcv_finish", "ip_rcv_finish_core", "ip_route_input_noref", "ip_route_input_rcu",
            "ip_route_input_slow", "ip_route_use_hint", "fib_table_lookup",
            "fib_validate_source", "__fib_validate_source", "ip_local_deliver",
            "ip_local_deliver_finish", "ip_protocol_deliver_rcu", "raw_local_deliver",
            "__ip_dev_find"],
        "UDP/TCP demux": [
            "udp_rcv", "__udp4_lib_rcv", "__udp4_lib_lookup", "udp4_lib_lookup2",
            "udp_queue_rcv_skb", "udp_queue_rcv_one_skb", "udp_unicast_rcv_skb",
            "__udp_enqueue_schedule_skb", "udp_lib_checksum_complete", "tcp_v4_rcv",
            "__inet_lookup_established", "__inet_lookup_listener", "inet_lhash2_lookup",
            "tcp_v4_do_rcv", "tcp_filter", "sk_filter_trim_cap"],
    },
}

# Recorded on the development VM (Linux 6.18, x86-64, from /proc/kallsyms),
# used when no symbol table is readable: bytes per footprint group
FALLBACK_GROUP_BYTES = {
    "skb build + eth_type_trans": 5 * 1024,
    "GRO": 10 * 1024,
    "netif core + generic XDP": 4 * 1024,
    "IP receive + route": 12 * 1024,
    "UDP/TCP demux": 12 * 1024,
}


def base_name(sym):
    """foo.constprop.0 -> foo (the compiler's clones keep the name)."""
    return sym.split(".", 1)[0]


def layer_of(sym):
    name = base_name(sym)
    for layer, rx in _LAYER_RE:
        if rx.search(name):
            return layer
    return "other"


def stage_of_layer(layer):
    for name, stage, _ in LAYERS:
        if name == layer:
            return stage
    return None


def parse_kallsyms(text):
    """/proc/kallsyms or System.map -> {name: bytes} for text symbols; the
    size of a symbol is the distance to the next address (kallsyms has no
    sizes; the next symbol starts where the function and its padding end).
    Raises ValueError when every address is zero (kptr_restrict, not root)."""
    entries = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        try:
            addr = int(parts[0], 16)
        except ValueError:
            continue
        entries.append((addr, parts[1], parts[2]))
    if not entries or all(a == 0 for a, _, _ in entries):
        raise ValueError("no symbol addresses (kernel.kptr_restrict, or not root)")
    entries.sort()
    sizes = {}
    for i, (addr, kind, name) in enumerate(entries[:-1]):
        if kind not in "tT":
            continue
        nxt = entries[i + 1][0]
        if 0 < nxt - addr < 1 << 20:
            sizes[name] = sizes.get(name, 0) + (nxt - addr)
    return sizes


def footprints_from_kallsyms(sizes):
    """{group: {"bytes", "stage", "functions": {name: bytes}, "missing": [...]}}"""
    by_base = {}
    for name, size in sizes.items():
        if name.startswith("__pfx_"):
            continue
        by_base[base_name(name)] = by_base.get(base_name(name), 0) + size
    out = {}
    for stage, groups in STAGE_FUNCTIONS.items():
        for group, funcs in groups.items():
            found = {f: by_base[f] for f in funcs if f in by_base}
            out[group] = {"stage": stage, "bytes": sum(found.values()), "functions": found,
                          "missing": [f for f in funcs if f not in by_base]}
    return out


def fallback_footprints():
    out = {}
    for stage, groups in STAGE_FUNCTIONS.items():
        for group in groups:
            out[group] = {"stage": stage, "bytes": FALLBACK_GROUP_BYTES[group],
                          "functions": {}, "missing": [], "recorded": True}
    return out


def stage_footprints(groups):
    """KB of ballast per listrx stage (rounded to the nearest KB, at least 1)."""
    kb = {}
    for g in groups.values():
        kb[g["stage"]] = kb.get(g["stage"], 0) + g["bytes"]
    return {s: max(1, int(round(b / 1024.0))) for s, b in kb.items()}


def calibrated_config(stages_kb, source, traffic, mitigations):
    t = TRAFFIC[traffic]
    lines = [
        "; listrx configured like the running kernel's RX path (listrx-bench kernel;",
        "; docs/kernel.md). Footprints: whole kernel functions each stage stands for,",
        "; from %s." % source,
        "; Kernel mitigations: spectre_v2 = %s; spec_rstack_overflow = %s."
        % (mitigations.get("spectre_v2"), mitigations.get("spec_rstack_overflow")),
        "; With retpolines, run the -Dretpoline=true build of listrx with this file.",
        "; Traffic: %s." % t["what"],
        "[eal]",
        "; replaced by EAL options given on the command line",
        "args = --no-huge --no-pci --no-shconf -m 1024 --vdev %s" % (
            t["synth"] if t["synth"].startswith("net_") else "net_synth0,profile=" + t["synth"]),
        "",
        "[pipeline]",
        "stages = %s" % ",".join(STAGE_FUNCTIONS),
        "burst = 64",
        "",
    ]
    for stage in STAGE_FUNCTIONS:
        lines += ["[stage.%s]" % stage, "footprint_kb = %d" % stages_kb.get(stage, 0)]
        if stage == "build-meta":
            # sk_buff (232 B) cleared per packet, as __build_skb_around
            lines += ["meta_size = 256", "clear = memset", "alloc = packet"]
        if stage == "l3-demux":
            # the destination is local; the kernel's local address, no socket
            # on the port (UDP) or no listener (TCP)
            lines += ["local_ipv4 = %s" % ("198.18.0.43" if t["l4"] == "tcp" else "198.18.0.42")]
            if t["l4"] == "udp" and not t["socket"]:
                lines += ["udp_ports = none"]
            if t["l4"] == "tcp":
                lines += ["tcp_ports = none"]
        lines.append("")
    return "\n".join(lines)


# ---- the primary method: tracepoint windows (lrx-ktime) ----

METHOD = ("tracepoint windows (lrx-ktime: BTF tracepoint programs): per frame, the GRO "
          "window napi_gro_receive_entry..exit of gro_receive_skb (it holds the list "
          "processing gro_normal_one starts in it) plus the lists handed up outside GRO "
          "windows (netif_receive_skb to their skbs' last kfree_skb/consume_skb), less the "
          "probes' own cost inside the windows: the empty window of the calibration pair "
          "per window, the measured cost per probe program per probe hit inside a window")
INTERVAL_METHOD = ("the distribution-free 95 % interval of the median of the per-pair "
                   "ratios batch 1 / batch 64 from order statistics (stats.compare; "
                   "docs/measuring.md, \"One comparison\"); a pair is two adjacent windows "
                   "under the same traffic, in alternating order")
LEVEL = 0.95


def counter_delta(s0, s1):
    """Counter differences of two lrx-ktime snapshots (every integer key)."""
    return {k: s1[k] - s0[k] for k, v in s0.items()
            if isinstance(v, int) and not isinstance(v, bool) and k != "t_ns"}


def window_figures(c, c_in, k_prog):
    """One window's ns per frame from its counters (c: a counter_delta).
    c_in: a window's own probe cost (the calibration pair's empty window);
    k_prog: the cost of one probe program run (the overhead windows), for
    the episode probes that fire inside a window. None without frames."""
    n = c.get("gro_calls", 0)
    if n <= 0:
        return None
    c_in = c_in or 0.0
    k_prog = k_prog or 0.0
    gro = c["gro_ns"] - n * c_in - (c.get("nr_in_gro", 0) + c.get("end_in_gro", 0)) * k_prog
    inner = max(0, c.get("ep_out_hits", 0) - 2 * c.get("ep_out_calls", 0))
    out = c.get("ep_out_ns", 0) - c.get("ep_out_calls", 0) * c_in - inner * k_prog
    return {"stack_ns": (gro + out) / n, "gro_window_ns": c["gro_ns"] / n,
            "list_out_ns": c.get("ep_out_ns", 0) / n,
            "list_in_ns": c.get("ep_in_ns", 0) / n,
            "oncpu_ns": c["oncpu_ns"] / n if c.get("oncpu_ns") else None,
            "lists_per_poll": ((c.get("ep_in_calls", 0) + c.get("ep_out_calls", 0))
                               / c["polls"] if c.get("polls") else None)}


def paired_gain(pairs, shared=None):
    """pairs: {pair: {batch: value}} -> the gain batch 1 / batch 64, one
    stats.compare (its keys, and "gain" and "text" for its ratio and its
    resolution): the median of the per-pair ratios with its 95 % interval,
    resolved when the interval excludes 1.0; "base" and "other" are the
    median pair's figures at batch 1 and 64. shared: the pairs of which a
    run shared its CPU (None: not recorded)."""
    c = compare([(p, v.get(1), v.get(64)) for p, v in sorted(pairs.items())], shared=shared)
    return dict(c, gain=c["ratio"], text=c["resolution"])


def sides(g):
    """{"1", "64"}: a paired gain's two sides, the median pair's figures,
    so that "1" / "64" is the gain."""
    return {"1": g["base"], "64": g["other"]}


def _pairs(windows, key):
    out = {}
    for w in windows:
        v = w.get(key)
        if v is not None:
            out.setdefault(w["pair"], {})[w["batch"]] = v
    return out


def _med(windows, key, batch):
    return median([w.get(key) for w in windows if w["batch"] == batch])


def _load(windows):
    loads = [w["load"] for w in windows if w.get("load") is not None]
    return {"min": min(loads), "max": max(loads), "median": median(loads)} if loads else None


def overhead_figures(windows):
    """The probes' cost, in situ: windows with the GRO-window probes on and
    off, same traffic, alternating; the kthread's on-CPU ns per frame (by
    sched_switch, which is attached in both). Also the whole kthread's gain
    without probes."""
    ws = [w for w in windows if w["phase"] == "overhead" and w["counters"].get("poll_work")]
    if not ws:
        return None
    per = {}
    for w in ws:
        c = w["counters"]
        per.setdefault((w["pair"], w["batch"]), {})[w["probes"]] = c["oncpu_ns"] / c["poll_work"]
    deltas = {b: [v[True] - v[False] for (p, bb), v in per.items()
                  if bb == b and True in v and False in v] for b in BATCHES}
    progs = 4  # pad_enter, gro_enter, gro_exit, pad_exit per frame
    per_frame = {str(b): median(deltas[b]) for b in BATCHES}
    allv = deltas[1] + deltas[64]
    k = median(allv) / progs if allv else None
    off = [dict(w, oncpu=w["counters"]["oncpu_ns"] / w["counters"]["poll_work"])
           for w in ws if not w["probes"]]
    return {"per_frame_ns": per_frame,
            "per_frame_ci": {str(b): list(median_interval(deltas[b])[:2]) for b in BATCHES},
            "progs_per_frame": progs, "per_prog_ns": k, "pairs": len(allv) // 2,
            "kthread_ns_without_probes": {str(b): _med(off, "oncpu", b) for b in BATCHES},
            "kthread_gain": paired_gain(_pairs(off, "oncpu")),
            "load": _load(ws)}


def primary_figures(windows, k_prog):
    """Per traffic kind: the calibration windows' empty-window cost per
    batch, each other window's ns per frame, the paired gain."""
    out = {}
    prim = [w for w in windows if w["phase"] == "primary"]
    for kind in sorted({w["traffic"] for w in prim}):
        ws = [w for w in prim if w["traffic"] == kind]
        cal = {b: [w["counters"]["cal_ns"] / w["counters"]["cal_calls"] for w in ws
                   if w["cal"] and w["batch"] == b and w["counters"].get("cal_calls")]
               for b in BATCHES}
        c_in = {b: median(cal[b]) for b in BATCHES}
        figs = []
        for w in ws:
            if w["cal"]:
                continue
            f = window_figures(w["counters"], c_in[w["batch"]], k_prog)
            if f:
                figs.append(dict(f, pair=w["pair"], batch=w["batch"], load=w.get("load")))
        g = paired_gain(_pairs(figs, "stack_ns"))
        meas = [w for w in ws if not w["cal"]]
        c = {k: sum(w["counters"].get(k, 0) for w in meas)
             for k in ("partial_polls", "errors", "polls", "gro_calls", "poll_work",
                       "ep_out_calls", "ep_in_calls")}
        out[kind] = {
            "gain": g["gain"], "ci": g["ci"], "resolved": g["resolved"], "pairs": g["pairs"],
            "resolution": g["text"], "ratios": g["ratios"], "comparison": g,
            "stack_ns": sides(g),
            "gro_window_ns": {str(b): _med(figs, "gro_window_ns", b) for b in BATCHES},
            "list_out_ns": {str(b): _med(figs, "list_out_ns", b) for b in BATCHES},
            "kthread_ns": {str(b): _med(figs, "oncpu_ns", b) for b in BATCHES},
            "lists_per_poll": {str(b): _med(figs, "lists_per_poll", b) for b in BATCHES},
            "window_cost_ns": {str(b): c_in[b] for b in BATCHES},
            "calibration_windows": {str(b): len(cal[b]) for b in BATCHES},
            "counts": c, "load": _load(ws),
            "delivery": delivery_check(ws),
        }
    return out


def probe_bias_bound(fig, over):
    """The gain if the whole difference of the probes' in-situ cost between
    batch 1 and 64 fell inside the windows (what the window-cost correction
    cannot see: the probes' effect on the stack's caches)."""
    if not over:
        return None
    d = (over["per_frame_ns"].get("1") or 0) - (over["per_frame_ns"].get("64") or 0)
    s1, s64, g = fig["stack_ns"]["1"], fig["stack_ns"]["64"], fig["gain"]
    if not s1 or not s64 or g is None:
        return None
    # batch 1's windows the smaller by d (d > 0), or batch 64's by -d
    scale = (s1 - d) / s1 if d > 0 else s64 / (s64 + d)
    return {"cost_difference_ns": d, "gain": g * scale}


def delivery_check(windows):
    """Frames sent vs frames our NAPI polled (napi_poll's work); failed sends."""
    sent = sum(w.get("sent", 0) for w in windows)
    seen = sum(w["counters"].get("poll_work", 0) for w in windows)
    failed = sum(w.get("failed", 0) for w in windows)
    return {"sent": sent, "polled": seen, "send_failures": failed,
            "lost": sent - failed - seen, "ok": sent - failed == seen}


# ---- the second method: perf cpu-clock with callchains ----

# a sample is in the stack when one of these is in its callchain (GRO and
# what it hands up; the lists handed up outside GRO windows)
STACK_ROOTS = ("gro_receive_skb", "netif_receive_skb_list_internal")


def parse_perf_callchains(text):
    """`perf script -F time,ip,sym` of a -g recording -> [(t_ns, leaf_ip,
    [symbols, leaf first])]."""
    out = []
    cur = None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace() or re.match(r"^\s*\d+\.\d+:\s*$", line):
            m = re.match(r"^\s*(\d+)\.(\d+):", line)
            if not m:
                continue
            cur = (int(m.group(1)) * 10**9 + int(m.group(2).ljust(9, "0")[:9]), None, [])
            out.append(cur)
            continue
        m = re.match(r"^\s+([0-9a-f]+)\s+(\S+)", line)
        if m and cur is not None:
            if cur[1] is None:
                out[-1] = cur = (cur[0], int(m.group(1), 16), cur[2])
            cur[2].append(base_name(m.group(2).split("+", 1)[0]))
    return out


def assign_samples(samples, windows):
    """Counts per window (by time): all samples, those in the stack, per
    layer (by the leaf function), per leaf function, and the distinct
    64-byte code lines of the leaves per layer."""
    ws = sorted(windows, key=lambda w: w["t0"])
    starts = [w["t0"] for w in ws]
    for w in ws:
        w["perf"] = {"samples": 0, "stack": 0, "layers": {}, "functions": {}}
    lines = {}
    for t, ip, chain in samples:
        i = bisect.bisect_right(starts, t) - 1
        if i < 0 or t > ws[i]["t1"] or not chain:
            continue
        p = ws[i]["perf"]
        p["samples"] += 1
        if any(s in STACK_ROOTS for s in chain):
            p["stack"] += 1
        layer = layer_of(chain[0])
        p["layers"][layer] = p["layers"].get(layer, 0) + 1
        p["functions"][chain[0]] = p["functions"].get(chain[0], 0) + 1
        if ip is not None:
            lines.setdefault((ws[i]["traffic"], ws[i]["batch"], layer), set()).add(ip >> 6)
    return {k: len(v) * 64 for k, v in lines.items()}


def perf_figures(windows, period_ns, sampled_bytes=None):
    """Per traffic kind: stack ns per frame per window (stack samples x the
    sampling period / frames), the paired gain; per batch the layers' ns
    per frame (leaf function) and the top functions."""
    ws = [w for w in windows if w["phase"] == "perf" and w.get("perf")]
    out = {}
    for kind in sorted({w["traffic"] for w in ws}):
        kw = [w for w in ws if w["traffic"] == kind and w["counters"].get("poll_work")]
        figs = [{"pair": w["pair"], "batch": w["batch"],
                 "stack_ns": w["perf"]["stack"] * period_ns / w["counters"]["poll_work"],
                 "kthread_ns": w["perf"]["samples"] * period_ns / w["counters"]["poll_work"]}
                for w in kw]
        g = paired_gain(_pairs(figs, "stack_ns"))
        layers, top = {}, {}
        for b in BATCHES:
            bw = [w for w in kw if w["batch"] == b]
            frames = sum(w["counters"]["poll_work"] for w in bw)
            if not frames:
                continue
            lay, fun = {}, {}
            for w in bw:
                for k, v in w["perf"]["layers"].items():
                    lay[k] = lay.get(k, 0) + v
                for k, v in w["perf"].get("functions", {}).items():
                    fun[k] = fun.get(k, 0) + v
            total = sum(lay.values()) or 1
            layers[str(b)] = {name: {"ns_per_packet": lay.get(name, 0) * period_ns / frames,
                                     "share_pct": lay.get(name, 0) * 100.0 / total,
                                     "stage": stage_of_layer(name),
                                     "sampled_bytes": (sampled_bytes or {}).get((kind, b, name))}
                              for name in LAYER_NAMES}
            top[str(b)] = [{"symbol": s, "ns_per_packet": v * period_ns / frames,
                            "layer": layer_of(s)}
                           for s, v in sorted(fun.items(), key=lambda kv: -kv[1])[:15]]
        out[kind] = {"gain": g["gain"], "ci": g["ci"], "resolved": g["resolved"],
                     "pairs": g["pairs"], "resolution": g["text"], "comparison": g,
                     "stack_ns": sides(g),
                     "kthread_ns": {str(b): _med(figs, "kthread_ns", b) for b in BATCHES},
                     "samples": sum(w["perf"]["samples"] for w in kw),
                     "layers": layers, "top_functions": top, "load": _load(kw),
                     "period_ns": period_ns}
    return out


def methods_agreement(primary, perf):
    """Per traffic kind profiled by both: the two gains side by side."""
    out = {}
    for kind in sorted(set(primary) & set(perf)):
        a, b = primary[kind]["gain"], perf[kind]["gain"]
        ratio = b / a if a and b else None
        out[kind] = {"tracepoint": a, "perf": b, "perf_over_tracepoint": ratio,
                     "agree": ratio is not None and 0.8 <= ratio <= 1.25}
    return out


# ---- the first methods, measured again: XDP_PASS - XDP_DROP ----

def subtraction_figures(windows):
    """Native XDP_PASS and XDP_DROP windows, per injector wait mode: the
    kthread's ns per frame by its scheduler clock (what the subtraction
    used) and by its on-CPU time (sched_switch, the windows' clock), the
    subtraction PASS - DROP and its gain with each clock."""
    ws = [w for w in windows if w["phase"] == "subtraction" and w["counters"].get("poll_work")]
    out = {}
    for wait in sorted({w["wait"] for w in ws}):
        mw = [w for w in ws if w["wait"] == wait]
        res = {}
        for clock in ("sched", "oncpu"):
            cells = {}
            for w in mw:
                n = w["counters"]["poll_work"]
                v = (w["sched_ns"] if clock == "sched" else w["counters"]["oncpu_ns"]) / n
                cells.setdefault(w["pair"], {}).setdefault(w["batch"], {})[w["verdict"]] = v
            stack = {p: {b: v["pass"] - v["drop"] for b, v in bv.items()
                         if "pass" in v and "drop" in v} for p, bv in cells.items()}
            gain = paired_gain(stack)
            res[clock] = {
                "pass_ns": {str(b): median([bv[b]["pass"] for bv in cells.values()
                                            if "pass" in bv.get(b, {})]) for b in BATCHES},
                "drop_ns": {str(b): median([bv[b]["drop"] for bv in cells.values()
                                            if "drop" in bv.get(b, {})]) for b in BATCHES},
                "stack_ns": sides(gain), "gain": gain}
        out[wait] = res
    return out


# ---- the rows of Cree's 2018 table ----

def row_figures(windows, k_prog, checks, what):
    """Per variant (the `row` phase): the paired gain as the primary's, and
    the check that the rule/filter/program was in the path."""
    out = {}
    rows = [w for w in windows if w["phase"] == "row"]
    for v in [v for v in what if any(w["variant"] == v for w in rows)]:
        f = primary_figures([dict(w, phase="primary") for w in rows if w["variant"] == v],
                            k_prog)
        kind, fig = next(iter(f.items()))
        out[v] = {"what": what[v], "traffic": kind, "gain": fig["gain"], "ci": fig["ci"],
                  "resolved": fig["resolved"], "pairs": fig["pairs"],
                  "resolution": fig["resolution"], "comparison": fig["comparison"],
                  "stack_ns": fig["stack_ns"],
                  "kthread_ns": fig["kthread_ns"], "load": fig["load"],
                  "delivery": fig["delivery"], "check": checks.get(v)}
    return out


# ---- listrx ----

def listrx_ns(summary):
    bcp, tsc = summary.get("busy_cycles_per_packet"), summary.get("tsc_hz")
    if bcp is not None and tsc:
        return bcp / tsc * 1e9
    return summary.get("ns_per_packet")


def listrx_interleaved_figures(lruns):
    """listrx's gain from interleaved runs (interleave.compare_engines:
    pairs of adjacent windows, disturbed ones left out), with the A/A
    control and the windows left out; None when no run was interleaved."""
    inter = [r for r in lruns if r["level"] == "interleave"]
    if not inter:
        return None
    res = interleave.compare_engines(
        [r["summary"] for r in inter], ["packet", "burst"],
        shared_runs=[i for i, r in enumerate(inter) if r.get("shared_cpu_pct") is not None]
        if all("shared_cpu_pct" in r for r in inter) else None)
    c, aa = res["burst"], res["packet" + grid.AA_SUFFIX]
    return {"gain": c["ratio"], "ci": c["ci"], "resolved": c["resolved"], "reps": c["pairs"],
            "gains": c["ratios"], "resolution": c["resolution"], "comparison": c,
            "caveat": caveat(c), "text": c["text"], "windows_text": c["windows_text"],
            "aa": {"gain": aa["ratio"], "ci": aa["ci"], "resolved": aa["resolved"],
                   "caveat": caveat(aa)},
            "shared_cpu_runs": sum(1 for r in lruns if r["level"] == "interleave"
                                   and r.get("shared_cpu_pct") is not None),
            "method": "interleave",
            "ns_per_packet": {"packet": c["base"], "burst": c["other"]}}


def listrx_figures(lruns):
    """listrx's gain, packet / burst 64, paired by repetition (one
    stats.compare, with the runs that shared their CPU counted), the two
    engines' ns/packet of its median pair, and the zoom-in runs' per-stage
    ns/packet; from interleaved runs when there are (listrx_interleaved_figures)."""
    pairs, shared, recorded, zoom = {}, set(), False, {}
    for r in lruns:
        if r["level"] == "interleave":
            continue
        if r["level"] == "counters":
            pairs.setdefault(r["rep"], {})[1 if r["engine"] == "packet" else 64] = \
                listrx_ns(r["summary"])
            recorded |= "shared_cpu_pct" in r
            if r.get("shared_cpu_pct") is not None:
                shared.add(r["rep"])
        else:
            tsc = r["summary"].get("tsc_hz") or 0
            stages = {}
            for st in r["summary"].get("stages", []):
                cpp = st.get("cycles_per_packet")
                stages[st.get("name")] = cpp / tsc * 1e9 if cpp is not None and tsc else None
            zoom[r["engine"]] = {"stages": stages, "ns_per_packet": listrx_ns(r["summary"])}
    inter = listrx_interleaved_figures(lruns)
    if inter is not None:
        inter["zoom"] = zoom
        return inter
    g = paired_gain(pairs, shared if recorded else None)
    return {"gain": g["gain"], "ci": g["ci"], "resolved": g["resolved"], "reps": g["pairs"],
            "gains": g["ratios"], "resolution": g["text"], "comparison": g,
            "ns_per_packet": {"packet": g["base"], "burst": g["other"]}, "zoom": zoom}


def calibration_report(perf, lx, traffic):
    """listrx's per-stage ns per packet (kernel-calibrated preset, packet and
    burst 64 engines) beside the kernel's per-layer ns per frame from the
    perf attribution at batch 1 and 64."""
    p = (perf or {}).get(traffic) or {}
    zoom = (lx or {}).get("zoom") or {}
    rows = []
    seen = set()
    for name, stage, _ in LAYERS:
        row = {"layer": name, "stage": stage,
               "kernel_ns": {b: ((p.get("layers") or {}).get(b, {}).get(name) or {})
                             .get("ns_per_packet") for b in ("1", "64")}}
        if stage and stage not in seen:
            seen.add(stage)
            row["listrx_ns"] = {e: (zoom.get(e, {}).get("stages") or {}).get(stage)
                                for e in ("packet", "burst")}
        rows.append(row)
    tot = {b: sum(v["ns_per_packet"] for v in ((p.get("layers") or {}).get(b) or {}).values())
           or None for b in ("1", "64")}
    return {"traffic": traffic, "rows": rows, "kernel_total_ns": tot,
            "listrx_total_ns": {e: zoom.get(e, {}).get("ns_per_packet")
                                for e in ("packet", "burst")}}


def agreement_of(kernel, lx):
    """listrx gain / kernel gain, only when both are resolved."""
    reasons = []
    if not kernel or kernel.get("gain") is None:
        reasons.append("no kernel gain")
    elif not kernel.get("resolved"):
        reasons.append("the kernel's gain is not resolved (%s)" % kernel.get("resolution"))
    if not lx or lx.get("gain") is None:
        reasons.append("no listrx gain")
    elif not lx.get("resolved"):
        reasons.append("listrx's gain is not resolved (%s)" % lx.get("resolution"))
    if reasons:
        return None, "; ".join(reasons)
    return lx["gain"] / kernel["gain"], None


def summarize(windows, lruns, listrx_traffic, groups, foot_source, stages_kb, listrx_build,
              perf_period_ns=None, sampled_bytes=None, row_checks=None, row_what=None):
    over = overhead_figures(windows)
    k_prog = over["per_prog_ns"] if over else None
    prim = primary_figures(windows, k_prog)
    for f in prim.values():
        f["probe_bias_bound"] = probe_bias_bound(f, over)
    perf = perf_figures(windows, perf_period_ns, sampled_bytes) if perf_period_ns else {}
    main = prim.get(listrx_traffic) or (next(iter(prim.values())) if prim else None)
    lx = listrx_figures(lruns) if lruns else {"gain": None, "resolved": False}
    agreement, why = agreement_of(main, lx)
    methods = methods_agreement(prim, perf)
    res = {
        "kernel": {
            "method": METHOD, "interval_method": INTERVAL_METHOD, "level": LEVEL,
            "second_method": ("perf record -e cpu-clock -g on the NAPI kthread(s), no probes: "
                              "samples with %s in the callchain x the period / frames"
                              % " or ".join(STACK_ROOTS)),
            "traffic": listrx_traffic,
            "gain": main["gain"] if main else None, "ci": main["ci"] if main else [None, None],
            "resolved": bool(main and main["resolved"]),
            "resolution": main["resolution"] if main else "no measurement",
            "gain_unavailable": None if main and main["gain"] else
            "no pair of windows gave a figure at both batches",
            "pairs": main["pairs"] if main else 0,
            "by_traffic": prim, "probe_overhead": over,
            "perf": perf, "methods": methods,
        },
        "listrx": dict(lx, build=listrx_build, traffic=listrx_traffic),
        "agreement": agreement, "agreement_unavailable": why,
        "agreement_in_range": None if agreement is None else 0.8 <= agreement <= 1.25,
        "calibration": calibration_report(perf, lx, listrx_traffic),
        "rows": row_figures(windows, k_prog, row_checks or {}, row_what or {}),
        "subtraction": subtraction_figures(windows),
        "footprint": {"source": foot_source, "groups": groups, "stage_kb": stages_kb},
        "traffic": {k2: v["what"] for k2, v in TRAFFIC.items()},
    }
    return res


def _f(v, fmt="%.1f"):
    return "-" if v is None else fmt % v


def _ci(ci, fmt="%.3f"):
    return "[%s-%s]" % (_f(ci[0], fmt), _f(ci[1], fmt)) if ci else "-"


def _load_text(load):
    return "-" if not load else "%.1f-%.1f" % (load["min"], load["max"])


def gain_text(fig):
    """A gain's figure with its caveat (stats.caveat, 3 decimals), or why
    there is none."""
    if not fig or not fig.get("comparison"):
        return (fig or {}).get("resolution") or "not measured"
    if fig.get("method") == "interleave":
        # the A/A control and the windows beside
        aa = fig["aa"]
        return "%s; A/A %s; %s" % (caveat(fig["comparison"], digits=3),
                                    "%.3f [%.3f–%.3f]" % (aa["gain"], aa["ci"][0], aa["ci"][1])
                                    if aa.get("ci") and aa["ci"][0] is not None
                                    else "no interval", fig["windows_text"])
    return caveat(fig["comparison"], digits=3)


def add_answer(d, result):
    """The answer, last on stdout and first in kernel.md: each traffic's
    kernel gain, the second method's and the rows', listrx's gain and the
    agreement, each gain with its caveat (interval, pairs, resolved)."""
    k, lx = result["kernel"], result["listrx"]
    items = ["kernel, %s: %s" % (kind, gain_text(f)) for kind, f in k["by_traffic"].items()]
    items += ["kernel, %s, second method (perf): %s" % (kind, gain_text(f))
              for kind, f in k["perf"].items()]
    items += ["kernel, row %s: %s" % (v, gain_text(r)) for v, r in result["rows"].items()]
    items.append("listrx (%s build, %s), packet ÷ burst 64: %s" % (
        (lx.get("build") or {}).get("flavour", "?"), lx.get("traffic", "?"), gain_text(lx)))
    if result["agreement"] is not None:
        items.append("agreement (listrx ÷ kernel, %s): %.3f, %s 0.8–1.25" % (
            k["traffic"], result["agreement"],
            "inside" if result["agreement_in_range"] else "outside"))
    else:
        items.append("agreement (listrx ÷ kernel, %s): none: %s" % (
            k["traffic"], result["agreement_unavailable"]))
    d.h(2, "Answer: the gain of listified receive, gro_normal_batch 1 ÷ 64 (the kernel) "
        "and packet ÷ burst 64 (listrx)")
    d.ul(items)


def _report_kernel(d, result):
    """The kernel gain per traffic kind (tracepoint probes), with its notes."""
    k = result["kernel"]
    run = result.get("run", {})
    d.h(1, "Kernel listification gain vs listrx")
    d.p("Kernel %s, gro_normal_batch 1 vs 64. Primary method: %s. Interval: %s." % (
        run.get("kernel", "?"), k["method"], k["interval_method"]))
    d.table(["traffic", "stack ns/frame, batch 1", "batch 64", "gain 1/64 [95 % CI]", "pairs",
             "resolved", "GRO window ns (raw) 1 / 64", "lists per poll 1 / 64", "load avg"],
            [[kind, _f(f["stack_ns"]["1"]), _f(f["stack_ns"]["64"]),
              "%s %s" % (_f(f["gain"], "%.3f"), _ci(f["ci"])), f["pairs"],
              "yes" if f["resolved"] else "no",
              "%s / %s" % (_f(f["gro_window_ns"]["1"]), _f(f["gro_window_ns"]["64"])),
              "%s / %s" % (_f(f["lists_per_poll"]["1"], "%.2f"),
                           _f(f["lists_per_poll"]["64"], "%.2f")), _load_text(f["load"])]
             for kind, f in k["by_traffic"].items()])
    items = []
    for kind, f in k["by_traffic"].items():
        dl = f["delivery"]
        items.append("%s: %s; window cost (empty calibration window) %s / %s ns at batch 1 / "
                     "64; %d partial polls, %d probe errors; %d frames sent, %d polled, %d send "
                     "failures." % (kind, gain_text(f), _f(f["window_cost_ns"]["1"]),
                                    _f(f["window_cost_ns"]["64"]), f["counts"]["partial_polls"],
                                    f["counts"]["errors"], dl["sent"], dl["polled"],
                                    dl["send_failures"]))
        pb = f.get("probe_bias_bound")
        if pb:
            items[-1] += (" If the probes' in-situ cost difference between the batches "
                          "(%.1f ns) fell inside the windows, the gain would be %.3f." % (
                              pb["cost_difference_ns"], pb["gain"]))
    d.ul(items)
    o = k.get("probe_overhead")
    if o:
        d.p("Probes' cost in situ (kthread on-CPU ns per frame, GRO-window probes on "
            "minus off, %d pairs): %s %s at batch 1, %s %s at batch 64; %s ns per probe "
            "program run (%d per frame). Without probes the whole kthread takes %s / %s ns "
            "per frame: gain %s %s." % (
                o["pairs"], _f(o["per_frame_ns"]["1"]), _ci(o["per_frame_ci"]["1"], "%.1f"),
                _f(o["per_frame_ns"]["64"]), _ci(o["per_frame_ci"]["64"], "%.1f"),
                _f(o["per_prog_ns"]), o["progs_per_frame"],
                _f(o["kthread_ns_without_probes"]["1"]),
                _f(o["kthread_ns_without_probes"]["64"]),
                _f(o["kthread_gain"]["gain"], "%.3f"), _ci(o["kthread_gain"]["ci"])))


def _report_listrx(d, result):
    """The kernel gain by perf callchains, listrx's gain and their agreement."""
    k, lx = result["kernel"], result["listrx"]
    if k["perf"]:
        d.h(2, "Second method: perf cpu-clock callchains (no probes)")
        rows = []
        for kind, p in k["perf"].items():
            m = k["methods"].get(kind, {})
            rows.append([kind, _f(p["stack_ns"]["1"]), _f(p["stack_ns"]["64"]),
                         "%s %s" % (_f(p["gain"], "%.3f"), _ci(p["ci"])), p["pairs"],
                         p["samples"], _f(m.get("tracepoint"), "%.3f"),
                         _f(m.get("perf_over_tracepoint"), "%.3f"),
                         "-" if not m else ("yes" if m["agree"] else "no")])
        d.table(["traffic", "stack ns 1", "stack ns 64", "gain [95 % CI]", "pairs", "samples",
                 "tracepoint gain", "perf / tracepoint", "agree (0.8-1.25)"], rows)
    d.p("listrx (%s build, %s): gain packet/burst 64 = %s" % (
        lx.get("build", {}).get("flavour"), lx.get("traffic"), gain_text(lx)))
    if lx.get("build", {}).get("note"):
        d.p("Note: " + lx["build"]["note"])
    if result["agreement"] is not None:
        d.p("**agreement** (listrx gain / kernel gain) = %.3f (%s 0.8-1.25)" % (
            result["agreement"], "inside" if result["agreement_in_range"] else "outside"))
    else:
        d.p("**agreement**: none: %s" % result["agreement_unavailable"])


def _report_calibration(d, result):
    """Kernel layers against listrx stages, Cree's rows and the subtraction."""
    cal = result["calibration"]
    d.h(2, "Calibration: kernel layers (perf, ns per frame) and listrx stages "
        "(--stats-level cycles, kernel-calibrated preset)")
    rows = []
    for r in cal["rows"]:
        lxn = r.get("listrx_ns")
        rows.append([r["layer"], _f(r["kernel_ns"]["1"]), _f(r["kernel_ns"]["64"]),
                     r["stage"] if lxn else ("(same)" if r["stage"] else "not modelled"),
                     _f(lxn["packet"]) if lxn else "", _f(lxn["burst"]) if lxn else ""])
    rows.append(["**total**", _f(cal["kernel_total_ns"]["1"]), _f(cal["kernel_total_ns"]["64"]),
                 "", _f(cal["listrx_total_ns"]["packet"]), _f(cal["listrx_total_ns"]["burst"])])
    d.table(["kernel layer", "batch 1", "batch 64", "listrx stage", "packet", "burst 64"], rows)
    if result["rows"]:
        d.h(2, "Rows (Cree's 2018 table, kernel side)")
        rows = []
        for v, r in result["rows"].items():
            chk = r.get("check") or {}
            rows.append([v, r["what"], _f(r["stack_ns"]["1"]), _f(r["stack_ns"]["64"]),
                         "%s %s" % (_f(r["gain"], "%.3f"), _ci(r["ci"])),
                         "yes" if r["resolved"] else "no",
                         ("yes: " if chk.get("ok") else "NO: ") + chk.get("text", "not checked")])
        d.table(["row", "what", "stack ns 1", "stack ns 64", "gain [95 % CI]", "resolved",
                 "in the path"], rows)
    if result["subtraction"]:
        d.h(2, "The first methods, measured again (native XDP, PASS - DROP)")
        d.table(["injector wait", "clock", "PASS 1 / 64", "DROP 1 / 64", "PASS-DROP 1 / 64",
                 "gain"],
                [[wait, clock, "%s / %s" % (_f(c["pass_ns"]["1"]), _f(c["pass_ns"]["64"])),
                  "%s / %s" % (_f(c["drop_ns"]["1"]), _f(c["drop_ns"]["64"])),
                  "%s / %s" % (_f(c["stack_ns"]["1"]), _f(c["stack_ns"]["64"])),
                  "%s %s" % (_f(c["gain"]["gain"], "%.3f"), _ci(c["gain"]["ci"]))]
                 for wait, r in result["subtraction"].items() for clock, c in r.items()])


def _report_footprint(d, result):
    """The stages' code footprint, and the executed lower bound."""
    k = result["kernel"]
    fp = result["footprint"]
    d.h(2, "Footprint (%s)" % fp["source"])
    d.table(["group", "stage", "bytes (whole functions)", "functions found"],
            [[g, v["stage"], v["bytes"], len(v["functions"])] for g, v in fp["groups"].items()])
    d.p("Per stage (KB): " + ", ".join("%s %d" % kv for kv in fp["stage_kb"].items()))
    p1 = ((k["perf"].get(k["traffic"]) or {}).get("layers") or {}).get("1")
    if p1:
        d.p("Executed footprint, lower bound (distinct 64-byte lines with a perf sample, "
            "batch 1): " + ", ".join("%s %s B" % (n, v.get("sampled_bytes"))
                                     for n, v in p1.items()))


def write_report(result, path):
    d = Doc()
    add_answer(d, result)
    _report_kernel(d, result)
    _report_listrx(d, result)
    _report_calibration(d, result)
    _report_footprint(d, result)
    with open(path, "w") as f:
        f.write(d.markdown(os.path.dirname(path)))
    return path
