"""Seed 002: de Bruijn's virtio-net TX NAPI patches (netdev, 2017): TX
completions cleaned by NAPI, and from the RX NAPI poll before it receives
(virtnet_poll_cleantx, under a trylock), against the driver of the day,
which freed what it had sent on the next transmit (free_old_xmit_skbs in
start_xmit). neper TCP_STREAM, TCP_RR, TCP_RR 4K, UDP_STREAM and UDP_RR at
1, 10 and 100 flows: Mbps, Gcycles, p50/p99 latency, upstream vs napi; and
"disable unless affinity_hint_set, because cache misses add up to a third
higher cycle cost" when RX and TX run on different CPUs.

listrx: the same three places to clean, [run] tx_clean (docs/config.md):
xmit (net_synth frees everything completed on each transmit:
tx_free_thresh = the ring's size), rx-poll (each RX poll first cleans the
TX queue paired with its RX queue, rte_eth_tx_done_cleanup under a
trylock) and tx-poll (a TX poll of the lcore's TX queues every 8 polls);
net_synth's TX ring holds every sent mbuf until one of them frees it. A
request-response reflector (build-meta, tx-every k=1: each request sent
back as its reply) at 64 B and 4 KB with N flows in flight (N requests per
poll), and a stream of 1514-byte frames; RX and TX on one lcore, or on two
lcores each cleaning the other's TX queue. Alternating processes
(seeds/measure.py), cycles per packet and the closed-loop turnaround
(--latency) per run, stats.compare over the repetitions."""

import os

from .. import backends, stats
from ..listrx import cachegrind_caches
from .measure import compare_configs, level, ratio_cell, run_rotating

SEED = "002"
TITLE = "TX completions cleaned in the RX poll (virtio-net TX NAPI)"
SOURCE = ("Willem de Bruijn, \"virtio-net tx napi\" (netdev patch series, v2, April 2017): "
          "neper from a guest of 4 vCPUs pinned to 4 cores of an x86_64 Haswell to a "
          "server on the host (vhost and the server on a core each), process, RX NAPI and "
          "TX NAPI on one core; median of 5 runs, variance well under 10 %")

MODES = ("xmit", "rx-poll", "tx-poll")
MODE_ARGS = {"xmit": ["--tx-clean", "xmit"], "rx-poll": ["--tx-clean", "rx-poll"],
             "tx-poll": ["--tx-clean", "tx-poll", "--tx-clean-polls", "8"]}
FLOWS = (1, 10, 100)
PIPELINE = "build-meta,tx-every"

# listrx's workloads: frame size on the wire (net_synth size=, FCS
# included), requests per poll (None: a full poll of 64), data room
WORKLOADS = {
    "rr64": {"label": "request-response, 64 B", "size": 64, "burst": None, "room": None},
    "rr4k": {"label": "request-response, 4 KB", "size": 4096, "burst": None, "room": 4352},
    "stream": {"label": "stream, 1514 B", "size": 1518, "burst": 64, "room": None},
}
# the affinity table: these workloads at 10 flows, on two lcores, in the
# mode that cleans across them and the control that does not
AFFINITY = ("rr64", "stream")
AFFINITY_FLOWS = 10
AFFINITY_MODES = ("xmit", "rx-poll")
# the stream's flows change only its 5-tuples: one flow count is run and
# given for every published row
STREAM_FLOWS = 10

# the seed's table: test -> flows -> metric -> (upstream, napi)
PUBLISHED = {
    "TCP_STREAM": {1: {"Mbps": (28985, 34492), "Gcycles": (278, 269)},
                   10: {"Mbps": (42267, 42420), "Gcycles": (301, 303)},
                   100: {"Mbps": (29710, 31131), "Gcycles": (286, 282)}},
    "TCP_RR": {1: {"p50": (22, 21), "p99": (27, 26), "Gcycles": (176, 171)},
               10: {"p50": (40, 40), "p99": (51, 51), "Gcycles": (215, 211)},
               100: {"p50": (272, 235), "p99": (414, 360), "Gcycles": (228, 233)}},
    "TCP_RR 4K": {1: {"p50": (27, 29), "p99": (34, 36), "Gcycles": (184, 170)},
                  10: {"p50": (67, 66), "p99": (82, 82), "Gcycles": (217, 218)},
                  100: {"p50": (435, 485), "p99": (813, 626), "Gcycles": (242, 226)}},
    "UDP_STREAM": {1: {"Mbps": (29802, 25600), "Gcycles": (305, 295)},
                   10: {"Mbps": (29901, 29684), "Gcycles": (287, 295)},
                   100: {"Mbps": (29952, 29863), "Gcycles": (336, 325)}},
    "UDP_RR": {1: {"p50": (18, 18), "p99": (23, 22), "Gcycles": (183, 181)},
               10: {"p50": (35, 38), "p99": (54, 62), "Gcycles": (252, 236)},
               100: {"p50": (240, 279), "p99": (462, 519), "Gcycles": (228, 219)}},
}
# which published tests a listrx workload stands for
TESTS = {"rr64": ("TCP_RR", "UDP_RR"), "rr4k": ("TCP_RR 4K",),
         "stream": ("UDP_STREAM", "TCP_STREAM")}
UNITS = {"Mbps": " Mbps", "Gcycles": " Gcycles", "p50": " µs", "p99": " µs"}
AFFINITY_PUBLISHED = ("v2: cleaning in the RX poll disabled unless affinity_hint_set, "
                      "\"because cache misses add up to a third higher cycle cost, e.g., in "
                      "TCP_RR tests\" (no table)")

WHY = {
    "cycles": "the patch's Gcycles are every cycle of the guest and host over a neper run "
              "(TCP, vhost, interrupts); listrx's are one lcore's busy cycles per packet of "
              "a reflector (build-meta, then the frame sent back), so the cleaning is a "
              "larger share here. In a busy-polling loop every mode cleans once per poll: "
              "xmit frees the previous replies inside the transmit, rx-poll before the "
              "receive under a trylock, tx-poll 8 polls' worth at once; they differ in the "
              "lock, the batch and when the ring's and mbufs' lines are touched, not in how "
              "often interrupts fire (listrx has none).",
    "p50": "the patch's latency is a transaction's round trip through two kernels and a "
           "hypervisor (tens of µs); listrx's turnaround is a queue's poll-to-poll time in a "
           "closed loop without a wire (N flows: N requests answered per poll, the next "
           "ones there when the replies leave), so it is the poll's whole cost, cleaning "
           "included.",
    "p99": "tx-poll's TX poll every 8 polls falls in one poll in 8: it sets the tail; the "
           "patch's p99 also holds interrupt and scheduling delays listrx does not have.",
    "stream": "UDP_STREAM from the guest receives nothing, so RX NAPI never runs to clean "
              "for it (the patch: it does not benefit); listrx's stream receives every frame "
              "it sends back (full polls of 64 at 1514 B), so its RX poll runs every time. "
              "Flows change only the frames' 5-tuples here (one RX queue, no per-flow "
              "state): listrx runs it at %d flows and gives that figure on the three rows. "
              "Gb/s is the frame rate at the busy cost, not a line rate." % STREAM_FLOWS,
    "affinity": "two vCPUs of this VM (which physical cores or hyperthreads they are is "
                "the hypervisor's choice); on different lcores each RX poll frees what the "
                "other lcore sent: the ring's indexes, the queue's lock and the mbufs' lines "
                "move between the cores, and the freed mbufs land in the cleaning lcore's "
                "mempool cache. xmit cleans its own queue on either placement: the "
                "control (tx-poll too; left out of this table for the page's time).",
}


# ---- configurations -------------------------------------------------------------

def vdev(work, flows, queues=1):
    w = WORKLOADS[work]
    extra = ",rxq=%d,txq=%d" % (queues, queues) if queues > 1 else ""
    return "net_synth0,profile=udp-flows,flows=%d,size=%d,copy=0%s" % (flows, w["size"], extra)


def common_args(work, flows):
    w = WORKLOADS[work]
    burst = w["burst"] or flows
    args = ["--engine", "burst", "--burst", str(burst), "--pipeline", PIPELINE,
            "--set", "stage.tx-every.k=1", "--latency"]
    if w["room"]:
        args += ["--set", "mempool.data_room=%d" % w["room"]]
    return args


def name(work, flows, mode, place=None):
    return "%s %dx %s%s" % (work, flows, mode, " " + place if place else "")


def flows_of(ctx):
    return tuple(getattr(ctx.args, "tx_flows", None) or FLOWS)


def run_flows(work, flows):
    """The flow counts a workload runs at (the stream: STREAM_FLOWS)."""
    return (STREAM_FLOWS,) if work == "stream" else tuple(flows)


def configs(flows):
    return [{"name": name(w, f, m), "vdev": vdev(w, f), "keep": True,
             "args": common_args(w, f) + MODE_ARGS[m]}
            for w in WORKLOADS for f in run_flows(w, flows) for m in MODES]


def lcore_ids(lx):
    ids = [int(x) for x in str(lx.lcores).split(",") if x.strip().isdigit()]
    return ids if len(ids) >= 2 else None


def affinity_conf(tmp, ids, place):
    """[port.0] with two queue pairs; "same": lcore i polls RX queue i and
    sends on TX queue i; "different": each polls the other's RX queue, so
    its RX poll's paired TX queue is the other lcore's."""
    path = os.path.join(tmp, "tx-napi-%s.ini" % place)
    polls = (1, 0) if place == "different" else (0, 1)
    with open(path, "w") as f:
        f.write("[port.0]\ndevice = net_synth0\nrx_queues = 2\ntx_queues = 2\n"
                "[lcore.%d]\npoll = 0:%d\n[lcore.%d]\npoll = 0:%d\n"
                "[telemetry]\nenabled = no\n" % (ids[0], polls[0], ids[1], polls[1]))
    return path


def affinity_configs(tmp, ids):
    out = []
    for w in AFFINITY:
        for place in ("same", "different"):
            conf = affinity_conf(tmp, ids, place)
            for m in AFFINITY_MODES:
                out.append({"name": name(w, AFFINITY_FLOWS, m, place), "keep": True,
                            "vdev": vdev(w, AFFINITY_FLOWS, queues=2),
                            "args": ["--config", conf] + common_args(w, AFFINITY_FLOWS) +
                            MODE_ARGS[m]})
    return out


def plan(ctx):
    n = len(configs(flows_of(ctx)))
    if lcore_ids(ctx.lx):
        n += len(AFFINITY) * 2 * len(AFFINITY_MODES)
    return [("run", n * ctx.args.reps, ctx.args.duration + 0.8),
            ("callgrind", len(AFFINITY) * len(MODES), 25.0)]


# ---- figures per run ---------------------------------------------------------------

def _turnaround(summary, q):
    t = ((summary or {}).get("latency_ns") or {}).get("turnaround") or {}
    return stats.number(t.get(q))


def series(res, nm, fn):
    """{rep: fn(summary)} of a configuration's kept runs."""
    return {rep: fn(s) for rep, s in res[nm]["summaries"].items()}


def cycles_of(summary):
    return stats.number(summary.get("busy_cycles_per_packet"))


def figure_data(res):
    """{config: {"runs": {rep: value}, "shared": [...]}} per figure."""
    out = {"cycles": {}, "p50": {}, "p99": {}}
    for nm, r in res.items():
        for fig, fn in (("cycles", cycles_of), ("p50", lambda s: _turnaround(s, "p50")),
                        ("p99", lambda s: _turnaround(s, "p99"))):
            out[fig][nm] = {"runs": series(res, nm, fn), "shared": r["shared"]}
    return out


# ---- cells -------------------------------------------------------------------------

def _fmt(v):
    return "%.0f" % v if abs(v) >= 100 else "%.1f" % v


def value_cell(fig, unit, extra=None):
    """'812 cycles [790–840] (9.1 Gb/s), 7 runs' from level(); extra(ns)
    adds the parenthesis."""
    if not fig:
        return stats.unavailable("no run gave this figure")
    lo, hi = fig["ci"]
    more = " (%s)" % extra(fig["ns"]) if extra else ""
    return "%s %s [%s–%s]%s, %d runs" % (_fmt(fig["ns"]), unit, _fmt(lo), _fmt(hi), more,
                                         fig["n"])


def published_cell(work, flows, metric):
    if flows not in FLOWS:
        return "not published: the seed ran %s flows" % ", ".join(map(str, FLOWS))
    parts = []
    for test in TESTS[work]:
        row = PUBLISHED[test][flows]
        keys = ("Gcycles", "Mbps") if metric == "cycles" else (metric,)
        figs = ["%s → %s%s (%.2f×)" % (row[k][0], row[k][1], UNITS[k], row[k][1] / row[k][0])
                for k in keys if k in row]
        if figs:
            parts.append("%s %s" % (test, ", ".join(figs)))
    return "; ".join(parts) + " (napi ÷ upstream)"


def kernel_reason(root="/sys"):
    """Why the kernel's cells are not measured here, with what this host
    has: its virtio-net devices and their napi_tx."""
    virtio = []
    net = os.path.join(root, "class", "net")
    for iface in sorted(os.listdir(net)) if os.path.isdir(net) else []:
        drv = os.path.join(net, iface, "device", "driver")
        if os.path.islink(drv) and os.path.basename(os.readlink(drv)) == "virtio_net":
            virtio.append(iface)
    try:
        with open(os.path.join(root, "module", "virtio_net", "parameters", "napi_tx")) as f:
            napi = f.read().strip()
    except OSError:
        napi = None
    veth = "a veth has no TX completion (veth_xmit hands the skb to its peer)"
    if virtio:
        return stats.unavailable(
            "%s here is virtio-net%s with no peer to run neper against; %s" % (
                ", ".join(virtio), " (napi_tx=%s)" % napi if napi else "", veth))
    return stats.unavailable("no virtio-net device here; " + veth)


# ---- tables ------------------------------------------------------------------------

def mode_rows(data, work, flows, kernel):
    """The rows of one workload: per flow count, cycles per packet and the
    turnaround's p50 and p99 (the stream: cycles only)."""
    size = WORKLOADS[work]["size"] - 4
    metrics = ("cycles",) if work == "stream" else ("cycles", "p50", "p99")
    rows = []
    for f in flows:
        for metric in metrics:
            d = data[metric]
            ran = f if work != "stream" else STREAM_FLOWS
            names = {m: name(work, ran, m) for m in MODES}
            if metric == "cycles":
                unit = "cycles/packet" if work == "stream" else "cycles/request"
                extra = None
                if work == "stream" and data.get("tsc_hz"):
                    def extra(c, tsc=data["tsc_hz"]):
                        return "%.1f Gb/s" % (size * 8 * tsc / c / 1e9)
                cells = [value_cell(level(d[names[m]]["runs"]), unit, extra) for m in MODES]
            else:
                cells = [value_cell(level(d[names[m]]["runs"]), "ns") for m in MODES]
            label = "%d flow%s: %s" % (f, "" if f == 1 else "s",
                                       {"cycles": "cycles per " + ("packet" if work == "stream"
                                                                   else "request"),
                                        "p50": "turnaround p50", "p99": "turnaround p99"}[metric])
            if ran != f:
                label += " (listrx: the %d-flow runs)" % ran
            why = WHY["stream"] if work == "stream" else WHY[metric]
            rows.append({"cells": [label, published_cell(work, f, "cycles" if metric == "cycles"
                                                         else metric)] + cells +
                         [ratio_cell(compare_configs(d, names["rx-poll"], names["xmit"])),
                          kernel],
                         "why": why})
    return rows


def affinity_rows(data, kernel):
    rows = []
    for work in AFFINITY:
        for m in AFFINITY_MODES:
            same, diff = (name(work, AFFINITY_FLOWS, m, p) for p in ("same", "different"))
            d = data["cycles"]
            unit = "cycles/packet" if work == "stream" else "cycles/request"
            rows.append({"cells": ["%s, %d flows, %s" % (WORKLOADS[work]["label"],
                                                         AFFINITY_FLOWS, m),
                                   AFFINITY_PUBLISHED if m == "rx-poll" else
                                   "(the control: cleans its own TX queue on either "
                                   "placement)",
                                   value_cell(level(d[same]["runs"]), unit),
                                   value_cell(level(d[diff]["runs"]), unit),
                                   ratio_cell(compare_configs(d, diff, same)), kernel],
                         "why": WHY["affinity"]})
    return rows


# ---- what the difference is made of ------------------------------------------------

def per_packet(summary, key):
    c = summary.get("tx_clean") or {}
    rx = summary.get("rx_packets") or 0
    if key == "calls":
        return c.get("calls", 0) / rx if rx else None
    return c.get("freed", 0) / c["calls"] if c.get("calls") else None


def spread(values, unit):
    vals = [v for v in values if v is not None]
    if not vals:
        return "not measured: the mode's cleaning is the driver's (inside each transmit)"
    return "%.3f [%.3f–%.3f] %s, %d runs" % (stats.median(vals), min(vals), max(vals), unit,
                                             len(vals))


def callgrind_run(ctx, cfg, caches):
    """One callgrind window run of a configuration on one lcore (the main
    lcore polls: one thread): {"ir", "d1"} per packet, or why not."""
    base = os.path.join(ctx.tmp, "cg-" + cfg["name"].replace(" ", "_"))
    lx = ctx.lx
    burst = int(cfg["args"][cfg["args"].index("--burst") + 1])
    warmup, total = CG_WARMUP_POLLS * burst, 2 * CG_WARMUP_POLLS * burst
    cmd = ([lx.binary] + lx.eal_args(cfg["vdev"], lcores=str(lx.lcores).split(",")[0]) +
           ["--", "--stats-level", "counters", "--stats-period", "0", "--json",
            base + ".json", "--packets", str(total), "--measure-from", str(warmup)] +
           [a for a in cfg["args"] if a != "--latency"])
    summary, err, info = lx.run(cmd, base + ".json", prefix=backends.callgrind_window_prefix(
        base + ".callgrind", caches["I1"], caches["D1"], caches["LL"]),
        timeout=ctx.args.timeout * 10)
    if err:
        return stats.unavailable("callgrind: %s" % err)
    measured = summary.get("measured_packets")
    if not measured:
        return stats.unavailable("callgrind: no measured_packets in the summary")
    with open(base + ".callgrind") as f:
        parsed = backends.parse_callgrind(f.read())
    os.unlink(base + ".callgrind")
    t = parsed["totals"]
    return {"ir": t.get("Ir", 0) / measured,
            "d1": (t.get("D1mr", 0) + t.get("D1mw", 0)) / measured,
            "packets": measured, "command": info["command"]}


def callgrind_figures(ctx):
    why = backends.cachegrind_probe()
    out = {}
    caches = cachegrind_caches(ctx.lx.topology())
    for work in AFFINITY:
        for cfg in configs((AFFINITY_FLOWS,)):
            if not cfg["name"].startswith(work + " "):
                continue
            ctx.progress.update("callgrind " + cfg["name"], kind="callgrind")
            out[cfg["name"]] = stats.unavailable(why) if why else callgrind_run(ctx, cfg, caches)
    return out


def cg_cell(fig, key, unit):
    if isinstance(fig, str):
        return fig
    return "%s %s (callgrind: simulated, exact for the run's %d packets)" % (
        _cg_fmt(fig[key]), unit, fig["packets"])


def cg_delta(fig, base, key, unit):
    if isinstance(fig, str) or isinstance(base, str):
        return fig if isinstance(fig, str) else base
    return "%s %s (callgrind: simulated, exact)" % (_cg_fmt(fig[key] - base[key], "+"), unit)


def _cg_fmt(v, sign=""):
    """Counts per packet: one decimal from 10 up, three below (a D1 miss
    rate of 0.04 per request is not 0.0)."""
    return ("%" + sign + (".1f" if abs(v) >= 10 else ".3f")) % v


CG_WARMUP_POLLS = 1000
CG_WHY = ("callgrind over a window of the run (%d polls after a warm-up of as many), the "
          "host's cache geometry: what each mode executes and misses on one lcore, where "
          "the lock is never contended.")
NO_DIFF = "not measured: a count of the mode's own mechanism, not a cost to pair"
CROSS_CORE = ("unavailable: valgrind runs every thread on one simulated cache, where a "
              "line moving between cores is no miss; %s")


def made_of_rows(res, cg, kernel, pmu_why):
    rows = []
    for work in AFFINITY:
        names = {m: name(work, AFFINITY_FLOWS, m) for m in MODES}
        if any(n not in res for n in names.values()):
            continue  # --tx-flows without 10: no such runs
        what = "packet" if work == "stream" else "request"
        label = "%s, %d flows" % (WORKLOADS[work]["label"], AFFINITY_FLOWS)
        sums = {m: list(res[names[m]]["summaries"].values()) for m in MODES}
        rows.append({"cells": ["%s: TX cleanings per %s by the poll" % (label, what), "—"] +
                     [spread([per_packet(s, "calls") for s in sums[m]], "per " + what)
                      if m != "xmit" else spread([], "") for m in MODES] +
                     [NO_DIFF, kernel],
                     "why": "rx-poll cleans once per RX poll (every N requests at N flows); "
                            "tx-poll once per 8 polls; xmit inside every transmit (the "
                            "driver's: net_synth's clean_on_xmit)."})
        rows.append({"cells": ["%s: mbufs freed per cleaning" % label, "—"] +
                     [spread([per_packet(s, "freed") for s in sums[m]], "mbufs")
                      if m != "xmit" else spread([], "") for m in MODES] + [NO_DIFF, kernel],
                     "why": "the batch each cleaning frees: a poll's replies (rx-poll), 8 "
                            "polls' (tx-poll); the bigger the batch, the fewer ring and "
                            "mempool calls per mbuf."})
        for key, unit, text in (("ir", "Ir/" + what, "instructions"),
                                ("d1", "D1 misses/" + what, "D1 misses (read + write)")):
            cells = [cg_cell(cg.get(names[m], stats.unavailable("not run")), key, unit)
                     for m in MODES]
            rows.append({"cells": ["%s: %s, one lcore" % (label, text), "—"] + cells +
                         [cg_delta(cg.get(names["rx-poll"], ""), cg.get(names["xmit"], ""),
                                   key, unit), kernel],
                         "why": CG_WHY % CG_WARMUP_POLLS})
        rows.append({"cells": ["%s: cache misses of the completion ring between lcores" % label,
                               AFFINITY_PUBLISHED] +
                     [CROSS_CORE % pmu_why] * 4 + [kernel],
                     "why": "the patch's \"third higher cycle cost\" is such misses; here the "
                            "affinity table's different ÷ same gives their time, not their "
                            "count."})
    return rows


def pmu_reason(ctx):
    """Why listrx's hardware counters cannot count cross-core misses here
    (its own answer from a short --pmu run), or that they could."""
    path = os.path.join(ctx.tmp, "pmu.json")
    cmd = ([ctx.lx.binary] + ctx.lx.eal_args(vdev("rr64", 1)) +
           ["--", "--stats-period", "0", "--json", path, "--duration", "0.05",
            "--pmu=cycles"])
    summary, err, _ = ctx.lx.run(cmd, path, timeout=ctx.args.timeout)
    if err:
        return "the PMU could not be asked (%s)" % err
    ev = (((summary.get("pmu") or {}).get("events")) or [{}])[0]
    status = str(ev.get("status") or "")
    if stats.is_unavailable(status):
        return "no PMU counts here (listrx --pmu: %s)" % status.split(";")[0][len(
            stats.UNAVAILABLE):]
    return "listrx --pmu counts here, but has no coherence-miss events to read yet"


# ---- the section ---------------------------------------------------------------------

def checks_of(res):
    out = []
    for nm, r in res.items():
        s = r["first"] or {}
        mode = nm.split()[2]
        c = s.get("tx_clean") or {}
        ok = (s.get("rx_packets", 0) > 0 and s.get("tx_packets") == s.get("rx_packets") and
              s.get("mbufs_in_use_at_exit") == 0 and
              s.get("mbufs_freed_twice_at_exit") == 0 and c.get("mode") == mode and
              (mode == "xmit" or c.get("freed", 0) > 0))
        out.append({"ok": bool(ok), "text": "%s: %s requests, %s replies sent, tx_clean %s "
                    "freed %s, %s mbufs out at exit, %s freed twice" % (
                        nm, s.get("rx_packets"), s.get("tx_packets"), c.get("mode"),
                        c.get("freed"), s.get("mbufs_in_use_at_exit"),
                        s.get("mbufs_freed_twice_at_exit"))})
    return out


def method_lines(ctx, kernel):
    """The section's "how it was measured" lines."""
    return [
        "listrx: net_synth udp-flows (copy=0), pipeline %s with tx-every k=1 (every "
        "frame sent back: the reply), burst engine; request-response: N flows are N "
        "requests per poll (--burst N), a closed loop without a wire; the stream: polls "
        "of 64. %d alternating repetitions (processes) of %.2f s per configuration, "
        "their order rotated; not the in-process interleave (docs/measuring.md, "
        "\"Interleaved windows\"): a mode is the driver's setting of its TX ring "
        "(net_synth's tx_free_thresh and RX-poll cleaning, set before the port starts) "
        "and, for the affinity rows, two lcores, which one lcore's windows cannot "
        "switch." % (PIPELINE, ctx.args.reps, ctx.args.duration),
        "cycles per packet: the lcores' busy TSC cycles ÷ packets (no empty polls "
        "here); turnaround: --latency's per-queue time from the end of a poll to the "
        "end of the next, a sample per request (docs/measuring.md, \"Latency\"). A "
        "value cell is the median of the repetitions with the 95 % interval of the "
        "median; a ratio cell is stats.compare of the two configurations' repetitions, "
        "paired by repetition (docs/measuring.md, \"One comparison\"), resolved when "
        "its interval leaves 1 out with 6 pairs at least.",
        "kernel: %s. Switching napi_tx on this host's NIC would mean reloading its "
        "driver under the host's own network." % kernel[len(stats.UNAVAILABLE):],
        "tx_clean: xmit = net_synth frees everything completed on each transmit "
        "(tx_free_thresh = the ring's 1024); rx-poll = each RX poll first cleans its "
        "paired TX queue (rte_eth_tx_done_cleanup, trylock); tx-poll = a TX poll of "
        "the lcore's queues every 8 polls; in all three net_synth's RX poll does not "
        "clean, and every transmit takes the queue's lock (the kernel's HARD_TX_LOCK)."]


def measure(ctx):
    flows = flows_of(ctx)
    cfgs = configs(flows)
    ids = lcore_ids(ctx.lx)
    if ids:
        cfgs += affinity_configs(ctx.tmp, ids)
    res = run_rotating(ctx.lx, cfgs, ctx.args.reps, ctx.args.duration, ctx.tmp, ctx.progress,
                       ctx.args.timeout)
    data = figure_data(res)
    data["tsc_hz"] = next((r["first"].get("tsc_hz") for r in res.values() if r["first"]), None)
    kernel = kernel_reason()
    cg = callgrind_figures(ctx)
    pmu_why = pmu_reason(ctx)
    head = ["row", "de Bruijn 2017: upstream → napi", "listrx xmit (upstream)",
            "listrx rx-poll (napi)", "listrx tx-poll (TX NAPI alone)", "rx-poll ÷ xmit (paired)",
            "kernel (this host)"]
    tables = [{"title": "%s (%s)" % (WORKLOADS[w]["label"][0].upper() +
                                     WORKLOADS[w]["label"][1:], ", ".join(TESTS[w])),
               "columns": head, "rows": mode_rows(data, w, flows, kernel)} for w in WORKLOADS]
    if ids:
        tables.append({"title": "RX and TX on one lcore or on two (the patch's affinity "
                       "condition), %d flows, cycles per packet" % AFFINITY_FLOWS,
                       "columns": ["row", "de Bruijn 2017", "listrx, same lcore",
                                   "listrx, different lcores", "different ÷ same (paired)",
                                   "kernel (this host)"],
                       "rows": affinity_rows(data, kernel)})
    tables.append({"title": "What the difference is made of", "columns": head,
                   "rows": made_of_rows(res, cg, kernel, pmu_why)})
    method = method_lines(ctx, kernel)
    if not ids:
        method.append("RX and TX on one lcore or two: not measured: listrx has one lcore "
                      "here (%s); the affinity table needs two." % ctx.lx.lcores)
    return {
        "tables": tables,
        "method": method,
        "checks": checks_of(res),
        "figures": {"listrx": {fig: {k: v["runs"] for k, v in d.items()}
                               for fig, d in data.items() if fig != "tsc_hz"},
                    "tsc_hz": data["tsc_hz"], "callgrind": cg, "pmu": pmu_why,
                    "kernel": kernel},
    }

