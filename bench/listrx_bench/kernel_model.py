"""The kernel experiment's tables and arithmetic (no root, no I/O besides
the report file): traffic kinds, the stage <-> kernel function mapping,
symbol sizes from kallsyms, perf report parsing, the summary and report.
Tested on recorded data (bench/tests/test_kernel.py)."""

import os
import re

from .report import Doc
from .stats import median

BATCHES = [1, 8, 64]

# traffic kinds: what lrx-kinject sends, what net_synth generates for listrx
TRAFFIC = {
    "udp": {"l4": "udp", "dport": 9, "synth": "udp64", "socket": False,
            "what": "64-byte UDP to a local address, no socket (UdpNoPorts)"},
    "udp-sock": {"l4": "udp", "dport": 9, "synth": "udp64", "socket": True,
                 "what": "64-byte UDP to a bound socket whose receive queue is full "
                 "(UdpRcvbufErrors)"},
    "tcp": {"l4": "tcp", "dport": 5201, "synth": "net_synth0,profile=tcp-stream,flows=1",
            "socket": False,
            "what": "one TCP stream of 1448-byte segments, no socket (GRO merges ~45 "
            "segments per skb)"},
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


def parse_perf_report(text):
    """`perf report --stdio --sort sym -q` -> {symbol: percent}"""
    out = {}
    for m in re.finditer(r"^\s*([\d.]+)%\s+\[[kH.]\]\s+(\S+)", text, re.M):
        out[m.group(2)] = out.get(m.group(2), 0.0) + float(m.group(1))
    return out


def layer_shares(functions):
    shares = {name: 0.0 for name in LAYER_NAMES}
    for sym, pct in functions.items():
        shares[layer_of(sym)] += pct
    return shares


def spread(values):
    vals = [v for v in values if v is not None]
    if not vals:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {"median": median(vals), "min": min(vals), "max": max(vals), "n": len(vals)}


def resolution(gain):
    """Is the gain's spread clear of 1.0? If not, how much narrower it must be."""
    lo, hi, med = gain["min"], gain["max"], gain["median"]
    if lo is None:
        return {"resolved": False, "text": "no measurement"}
    if lo > 1.0 or hi < 1.0:
        return {"resolved": True, "text": "resolved: the whole spread is %s 1.0"
                % ("above" if lo > 1.0 else "below")}
    half = (hi - lo) / 2.0
    dist = abs(med - 1.0)
    factor = half / dist if dist > 0 else float("inf")
    return {"resolved": False, "improve_by": factor,
            "text": "not resolved on this machine: the spread [%.3f-%.3f] includes 1.0; the "
            "method's spread (+-%.1f %%) would have to shrink %.1fx (below the %.1f %% effect)"
            % (lo, hi, half * 100, factor, dist * 100)}


def rejected_text(rejected):
    """The reps left out of a gain, each with its stack ns at batch 1 and 64."""
    def ns(v):
        return "missing" if v is None else "%.1f ns" % v
    return "; ".join("rep %d: batch 1 %s, batch 64 %s" % (r["rep"], ns(r["stack_ns"]["1"]),
                                                           ns(r["stack_ns"]["64"]))
                     for r in rejected)


def unavailable_reason(rejected):
    """Why no rep gave a gain."""
    return ("no rep had a positive stack cost (XDP_PASS - XDP_DROP) at both batch 1 and 64: "
            + rejected_text(rejected)
            + ". The host's noise exceeded the difference: more --packets and --reps narrow it")


def kernel_figures(runs):
    """Per traffic kind: stack ns/packet (PASS - DROP of the same rep and
    batch) per batch, the gain per rep, and the raw PASS/DROP figures."""
    cells = {}
    for r in runs:
        n = r.get("xdp_packets") or r.get("sent") or 0
        if n <= 0:
            continue
        cells[(r["traffic"], r["rep"], r["batch"], r["verdict"])] = r["napi_cpu_ns"] / n
    out = {}
    for kind in sorted({k[0] for k in cells}):
        reps = sorted({k[1] for k in cells if k[0] == kind})
        stack = {b: [] for b in BATCHES}
        raw = {v: {b: [] for b in BATCHES} for v in ("pass", "drop")}
        gains, saved, rejected = [], [], []
        for rep in reps:
            per = {}
            for b in BATCHES:
                p, d = cells.get((kind, rep, b, "pass")), cells.get((kind, rep, b, "drop"))
                if p is not None:
                    raw["pass"][b].append(p)
                if d is not None:
                    raw["drop"][b].append(d)
                if p is not None and d is not None:
                    per[b] = p - d
                    stack[b].append(p - d)
            s1, s64 = per.get(1), per.get(64)
            if s1 is not None and s64 is not None and s1 > 0 and s64 > 0:
                gains.append(s1 / s64)
            else:
                # a non-positive PASS - DROP is the host's noise exceeding
                # the stack's cost in this rep: no gain from it, but said so
                rejected.append({"rep": rep, "stack_ns": {str(b): per.get(b) for b in (1, 64)}})
            p1, p64 = cells.get((kind, rep, 1, "pass")), cells.get((kind, rep, 64, "pass"))
            if p1 is not None and p64 is not None:
                saved.append(p1 - p64)
        g = spread(gains)
        out[kind] = {
            "gain": g["median"], "gain_min": g["min"], "gain_max": g["max"], "reps": len(gains),
            "gains": gains, "rejected_reps": rejected,
            "gain_unavailable": None if gains else unavailable_reason(rejected),
            "ns_per_packet": {str(b): spread(stack[b])["median"] for b in BATCHES},
            "ns_per_packet_spread": {str(b): spread(stack[b]) for b in BATCHES},
            "kthread_ns_per_packet": {v: {str(b): spread(raw[v][b]) for b in BATCHES}
                                      for v in raw},
            "resolution": resolution(g),
            # what listification saves, without the subtraction: XDP_PASS
            # kthread ns/packet at batch 1 minus at batch 64, same rep
            "saved_ns_per_packet": spread(saved),
        }
    return out


STACK_LAYERS = ("GRO", "netif core/XDP generic", "IP", "UDP/TCP", "ICMP/RST reply")


def perf_stack_gain(profile, kind):
    """The gain from the perf attribution instead of the subtraction: ns of
    the stack layers (everything after the driver and skb build, without
    the skb free) at batch 1 over batch 64."""
    p1, p64 = (profile or {}).get("%s/1" % kind), (profile or {}).get("%s/64" % kind)
    if not p1 or not p64:
        return None
    a = sum(p1["layers"][n]["ns_per_packet"] for n in STACK_LAYERS)
    b = sum(p64["layers"][n]["ns_per_packet"] for n in STACK_LAYERS)
    return {"batch1_ns": a, "batch64_ns": b, "gain": a / b if b > 0 else None,
            "layers": list(STACK_LAYERS)}


def delivery_check(runs):
    """Frames sent vs frames the receiving veth's XDP saw; failed sends."""
    sent = sum(r.get("sent", 0) for r in runs)
    seen = sum(r.get("xdp_packets", 0) for r in runs)
    failed = sum(r.get("failed", 0) for r in runs)
    return {"sent": sent, "xdp_seen": seen, "send_failures": failed,
            "lost": sent - failed - seen, "ok": sent - failed == seen}


def injector_figures(inj_runs):
    out = {}
    for method in sorted({r["method"] for r in inj_runs}):
        vals = [r["send_cpu_ns"] / r["sent"] for r in inj_runs
                if r["method"] == method and r.get("sent")]
        s = spread(vals)
        s["spread_pct"] = ((s["max"] - s["min"]) / s["median"] * 100
                           if s["median"] else None)
        s["send_failures"] = sum(r.get("failed", 0) for r in inj_runs if r["method"] == method)
        out[method] = s
    return out


def profile_figures(prof):
    if not prof or "unavailable" in prof:
        return prof
    out = {}
    for key, p in prof.items():
        shares = layer_shares(p["functions"])
        ns = p["napi_ns_per_packet"]
        top = sorted(p["functions"].items(), key=lambda kv: -kv[1])[:15]
        out[key] = {"napi_ns_per_packet": ns,
                    "layers": {name: {"share_pct": shares[name],
                                      "ns_per_packet": shares[name] / 100.0 * ns,
                                      "stage": stage_of_layer(name),
                                      "sampled_bytes": p.get("sampled_lines", {}).get(name)}
                               for name in LAYER_NAMES},
                    "top_functions": [{"symbol": s, "pct": v, "layer": layer_of(s)}
                                      for s, v in top]}
    return out


def listrx_ns(summary):
    bcp, tsc = summary.get("busy_cycles_per_packet"), summary.get("tsc_hz")
    if bcp is not None and tsc:
        return bcp / tsc * 1e9
    return summary.get("ns_per_packet")


def listrx_figures(lruns):
    timed = {}
    zoom = {}
    for r in lruns:
        if r["level"] == "counters":
            timed[(r["rep"], r["engine"])] = listrx_ns(r["summary"])
        else:
            tsc = r["summary"].get("tsc_hz") or 0
            stages = {}
            for st in r["summary"].get("stages", []):
                cpp = st.get("cycles_per_packet")
                stages[st.get("name")] = cpp / tsc * 1e9 if cpp is not None and tsc else None
            zoom[r["engine"]] = {"stages": stages, "ns_per_packet": listrx_ns(r["summary"])}
    gains = []
    for rep in sorted({k[0] for k in timed}):
        p, b = timed.get((rep, "packet")), timed.get((rep, "burst"))
        if p and b:
            gains.append(p / b)
    g = spread(gains)
    ns = {e: spread([v for (rep, eng), v in timed.items() if eng == e])
          for e in ("packet", "burst")}
    return {"gain": g["median"], "gain_min": g["min"], "gain_max": g["max"], "gains": gains,
            "ns_per_packet": ns, "zoom": zoom, "resolution": resolution(g)}


def summarize(runs, inj_runs, prof, lruns, listrx_traffic, groups, foot_source, stages_kb,
              listrx_build):
    k = kernel_figures(runs)
    main = k.get(listrx_traffic) or (next(iter(k.values())) if k else {})
    lx = listrx_figures(lruns) if lruns else {"gain": None}
    agreement = (lx["gain"] / main["gain"]
                 if lx.get("gain") and main.get("gain") else None)
    prof = profile_figures(prof)
    pgain = perf_stack_gain(prof if isinstance(prof, dict) and "unavailable" not in prof
                            else None, listrx_traffic)
    return {
        "kernel": {"gain": main.get("gain"), "gain_min": main.get("gain_min"),
                   "gain_max": main.get("gain_max"),
                   "gain_unavailable": (main.get("gain_unavailable") if main
                                        else "no kernel run delivered a frame"),
                   "rejected_reps": main.get("rejected_reps", []),
                   "ns_per_packet": main.get("ns_per_packet"), "traffic": listrx_traffic,
                   "resolution": main.get("resolution"), "by_traffic": k,
                   "saved_ns_per_packet": main.get("saved_ns_per_packet"),
                   "perf_stack_gain": pgain,
                   "delivery": delivery_check(runs)},
        "listrx": dict(lx, build=listrx_build, traffic=listrx_traffic),
        "agreement": agreement,
        "agreement_in_range": (agreement is not None and 0.8 <= agreement <= 1.25),
        "injectors": injector_figures(inj_runs),
        "profile": prof,
        "agreement_perf": (lx["gain"] / pgain["gain"]
                           if pgain and pgain.get("gain") and lx.get("gain") else None),
        "footprint": {"source": foot_source, "groups": groups, "stage_kb": stages_kb},
        "traffic": {k2: v["what"] for k2, v in TRAFFIC.items()},
    }


def _f(v, fmt="%.1f"):
    return "-" if v is None else fmt % v


def write_report(result, path):
    k, lx = result["kernel"], result["listrx"]
    d = Doc()
    d.h(1, "Kernel listification gain vs listrx")
    d.p("Kernel: %s. Stack ns/packet = NAPI kthread CPU ns/packet with XDP_PASS minus "
        "XDP_DROP, same frames, alternating reps; median [min-max]."
        % result.get("run", {}).get("kernel", "?"))
    rows = []
    for kind, f in k["by_traffic"].items():
        cells = []
        for b in ("1", "8", "64"):
            s = f["ns_per_packet_spread"][b]
            cells.append("%s [%s-%s]" % (_f(s["median"]), _f(s["min"]), _f(s["max"])))
        rows.append([kind] + cells + [
            "%s [%s-%s]" % (_f(f["gain"], "%.3f"), _f(f["gain_min"], "%.3f"),
                            _f(f["gain_max"], "%.3f")),
            f["reps"], "yes" if f["resolution"]["resolved"] else "no"])
    d.table(["traffic", "batch 1", "batch 8", "batch 64", "gain 1/64", "reps", "resolved"],
            rows)
    d.p("XDP_PASS ns/packet saved by batch 64 over batch 1 (no subtraction): " +
        ", ".join("%s %s [%s-%s]" % (kind, _f(f["saved_ns_per_packet"]["median"]),
                                      _f(f["saved_ns_per_packet"]["min"]),
                                      _f(f["saved_ns_per_packet"]["max"]))
                  for kind, f in k["by_traffic"].items()))
    pg = k.get("perf_stack_gain")
    if pg and pg.get("gain"):
        d.p("Stack layers from perf (%s): %.1f ns at batch 1, %.1f ns at batch 64: "
            "gain %.3f; listrx gain / this = %s" % (
                ", ".join(pg["layers"]), pg["batch1_ns"], pg["batch64_ns"], pg["gain"],
                _f(result.get("agreement_perf"), "%.3f")))
    for kind, f in k["by_traffic"].items():
        if f["gain_unavailable"]:
            d.p("%s: gain not available: %s" % (kind, f["gain_unavailable"]))
        elif f["rejected_reps"]:
            d.p("%s: %d rep(s) left out of the gain (stack cost not positive): %s" % (
                kind, len(f["rejected_reps"]), rejected_text(f["rejected_reps"])))
    d.p("Kernel (%s): %s" % (k["traffic"], (k.get("resolution") or {}).get("text", "")))
    d.p("Delivery: %(sent)d frames sent, %(xdp_seen)d seen by XDP, %(send_failures)d "
        "send failures." % k["delivery"])
    d.p("listrx (%s build, %s): gain packet/burst 64 = %s [%s-%s]; %s" % (
        lx.get("build", {}).get("flavour"), lx.get("traffic"), _f(lx.get("gain"), "%.3f"),
        _f(lx.get("gain_min"), "%.3f"), _f(lx.get("gain_max"), "%.3f"),
        (lx.get("resolution") or {}).get("text", "")))
    if lx.get("build", {}).get("note"):
        d.p("Note: " + lx["build"]["note"])
    d.p("**agreement** (listrx gain / kernel gain) = %s" % _f(result["agreement"], "%.3f"))
    # zoom-in side by side
    prof = result.get("profile") or {}
    p1 = prof.get("%s/1" % k["traffic"]) or {}
    p64 = prof.get("%s/64" % k["traffic"]) or {}
    zoom = lx.get("zoom", {})
    d.h(2, "Zoom-in: kernel layers (perf cpu-clock on the NAPI kthread, XDP_PASS) "
        "and listrx stages (--stats-level cycles)")
    rows, seen = [], set()
    for name, stage, _ in LAYERS:
        l1 = (p1.get("layers") or {}).get(name, {})
        l64 = (p64.get("layers") or {}).get(name, {})
        st = stage if stage and stage not in seen else None
        if stage:
            seen.add(stage)
        rows.append([name, _f(l1.get("ns_per_packet")), _f(l64.get("ns_per_packet")),
                     st or ("(same)" if stage else "not modelled"),
                     _f((zoom.get("packet", {}).get("stages") or {}).get(st)) if st else "",
                     _f((zoom.get("burst", {}).get("stages") or {}).get(st)) if st else ""])
    rows.append(["**total**", _f(p1.get("napi_ns_per_packet")),
                 _f(p64.get("napi_ns_per_packet")), "",
                 _f(zoom.get("packet", {}).get("ns_per_packet")),
                 _f(zoom.get("burst", {}).get("ns_per_packet"))])
    d.table(["kernel layer", "batch 1 ns", "batch 64 ns", "listrx stage", "packet ns",
             "burst 64 ns"], rows)
    d.h(2, "Injectors (sender CPU ns/frame, XDP_DROP receiver)")
    d.table(["injector", "median", "min", "max", "spread %", "failures"],
            [[m, _f(s["median"]), _f(s["min"]), _f(s["max"]), _f(s["spread_pct"]),
              s["send_failures"]] for m, s in result.get("injectors", {}).items()])
    fp = result["footprint"]
    d.h(2, "Footprint (%s)" % fp["source"])
    d.table(["group", "stage", "bytes (whole functions)", "functions found"],
            [[g, v["stage"], v["bytes"], len(v["functions"])] for g, v in fp["groups"].items()])
    d.p("Per stage (KB): " + ", ".join("%s %d" % kv for kv in fp["stage_kb"].items()))
    if p1.get("layers"):
        d.p("Executed footprint, lower bound (distinct 64-byte lines with a perf sample, "
            "batch 1): " + ", ".join("%s %s B" % (n, v.get("sampled_bytes"))
                                     for n, v in p1["layers"].items()))
    with open(path, "w") as f:
        f.write(d.markdown(os.path.dirname(path)))
    return path
