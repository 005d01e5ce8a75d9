"""listrx-bench cree: seed 001's table (Cree, "Handle multiple received
packets at each stage", netdev 2018) reproduced in one command.

Each row of the paper (the baseline of 4 streams over several RX queues
polled by one CPU, a single RX queue, generic XDP with a map-based UDP
port drop with an empty map under the JIT and the interpreter, one
iptables rule, a set of tc filters) is configured on listrx and run per
packet (the packet engine) and listified (the burst engine, 64 per poll)
in alternating repetitions, in both build flavours (the paper's figures
are with retpolines: the retpoline build; the plain one beside it). The
gain is the per-packet engine's ns/packet over the listified one's, paired
by repetition: one stats.compare (the median ratio, its 95 % interval,
resolved when the interval excludes 1 with 6 pairs at least, the runs
that shared their CPU counted). The same rows on this host's kernel come
from `listrx-bench kernel`'s measure_rows (gro_normal_batch 1 vs 64, root)
where the kernel has the row. Every row checks that its rule, filter or
program saw the traffic. Writes cree.json and cree.md.
"""

import datetime
import json
import os
import shlex
import struct
import sys
import tempfile

from . import grid, headline, interleave, kernel, kernel_model
from .listrx import BenchError, Listrx, machine_info, provenance, shared_cpu_pct
from .options import add_common, add_out, convert, named_list
from .stats import MIN_PAIRS, caveat, is_unavailable, unavailable

DROP_LO, DROP_HI = kernel.DROP_PORTS
# net_synth's udp-flows to 198.18.0.42:9: with its default RSS key 4 flows
# leave one of 4 queues empty; 6 flows put at least one on each
FLOWS = 6
LOCAL_IPV4 = "198.18.0.42"
BASE_PIPELINE = "build-meta,gro,l3-demux"

NF_RULE = ("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
           "-A INPUT -p udp -m udp --dport %d:%d -j DROP\nCOMMIT\n" % (DROP_LO, DROP_HI))
# the conntrack row: INVALID dropped first, as a stateful host does (it
# turns connection tracking on), then the nf-rule row's rule
NF_CT_RULES = ("*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
               "-A INPUT -m conntrack --ctstate INVALID -j DROP\n"
               "-A INPUT -p udp -m udp --dport %d:%d -j DROP\nCOMMIT\n" % (DROP_LO, DROP_HI))
# a set of flower filters, none matching the traffic (UDP to port 9): port
# ranges, addresses, a VLAN, TCP; each its own pref (its own classifier call)
FLOWER = "".join(
    "filter add dev all ingress protocol ip pref %d flower ip_proto udp dst_port %d-%d "
    "action drop\n" % (i + 1, DROP_LO + 1000 * i, DROP_LO + 1000 * i + 999)
    for i in range(5)) + (
    "filter add dev all ingress protocol ip pref 6 flower src_ip 192.0.2.0/24 action drop\n"
    "filter add dev all ingress protocol ip pref 7 flower ip_proto tcp dst_port 22 "
    "action drop\n"
    "filter add dev all ingress protocol 802.1q pref 8 flower vlan_id 100 action drop\n")
FLOWER_COUNT = 8


def _rows():
    return [
        {"row": "baseline", "queues": 4, "kernel": "rxq4",
         "what": "UDP to no socket, %d flows over 4 RX queues polled by one lcore" % FLOWS,
         "paper": {"gain": 1.266, "text": "+26.6 % (6.60 -> 8.35), retpolines"}},
        {"row": "single-rxq", "queues": 1, "kernel": "baseline",
         "what": "the same traffic on one RX queue",
         "paper": {"gain": 1.04, "text": "+4 %"}},
        {"row": "xdp-generic-jit", "queues": 4, "kernel": "xdp-generic-map",
         "xdp": "jit",
         "what": "+ generic XDP, map-based UDP port drop (xdp_port_filter.bpf.o), empty "
                 "map, rte_bpf JIT",
         "paper": {"gain": 1.270, "text": "+27.0 % (5.23 -> 6.64), JIT"}},
        {"row": "xdp-generic-interp", "queues": 4, "xdp": "interp",
         "kernel_none": "this kernel has no BPF interpreter (CONFIG_BPF_JIT_ALWAYS_ON)",
         "what": "the same program in rte_bpf's interpreter",
         "paper": {"gain": 1.395, "text": "+39.5 % (3.52 -> 4.91), no JIT"}},
        {"row": "nf-rule", "queues": 4, "kernel": "nf-rule", "netfilter": NF_RULE,
         "what": "+ one iptables rule in INPUT: UDP to %d-%d dropped (the traffic never "
                 "matches)" % (DROP_LO, DROP_HI),
         "paper": {"gain": None, "text": "baseline slower, \"a similar delta\""}},
        {"row": "conntrack", "queues": 4, "kernel": "conntrack", "netfilter": NF_CT_RULES,
         "rules": 2, "conntrack": True, "beyond_paper": True,
         "what": "+ conntrack on: -m conntrack --ctstate INVALID -j DROP before the nf-rule "
                 "row's rule (every packet looked up in the table; none INVALID)",
         "paper": {"gain": None, "text": "(not in the paper)"}},
        {"row": "tc-flower", "queues": 1, "tc": FLOWER,
         "kernel_none": "this kernel has no flower (the tc-bpf row is its tc row)",
         "what": "+ %d tc flower filters on the ingress hook, none matching, one RX queue"
                 % FLOWER_COUNT,
         "paper": {"gain": 1.057, "text": "+5.7 %, TC flower filters, single RXQ"}},
        {"row": "tc-bpf", "queues": 1, "kernel": "tc-bpf", "tc_bpf": True,
         "what": "+ one cls_bpf direct-action filter (tc_port_drop.bpf.o: UDP to %d-%d "
                 "dropped), one RX queue" % (DROP_LO, DROP_HI),
         "paper": {"gain": None, "text": "(the paper's tc row is flower: +5.7 %)"}},
    ]


ROWS = _rows()
ROW_NAMES = [r["row"] for r in ROWS]
# seed 001's rows: the paper's (the conntrack row is listrx's own)
PAPER_ROW_NAMES = [r["row"] for r in ROWS if not r.get("beyond_paper")]


def worker_lcore(lcores):
    """The lcore that polls: the second of an EAL -l list (the first is the
    main lcore), or the only one."""
    ids = []
    for part in lcores.split(","):
        if "-" in part:
            lo, hi = part.split("-", 1)
            ids += list(range(int(lo), int(hi) + 1))
        else:
            ids.append(int(part))
    return ids[1] if len(ids) > 1 else ids[0]


def row_files(row, art, tmp):
    """The row's rule or filter file, written into tmp; returns the --set
    assignments and the pipeline. Generic XDP goes where the binary says
    its place generic is (art["stages"]: its --list-stages --json)."""
    sets = ["stage.l3-demux.local_ipv4=" + LOCAL_IPV4, "stage.l3-demux.udp_ports=none"]
    stages = BASE_PIPELINE.split(",")
    if row.get("xdp"):
        stages = grid.place_stage(BASE_PIPELINE, "xdp", "generic", art["stages"]).split(",")
        sets += ["stage.xdp.mode=generic", "stage.xdp.prog=" + art["xdp_port_filter"],
                 "stage.xdp.exec=" + row["xdp"]]
    if row.get("netfilter"):
        path = os.path.join(tmp, "%s.rules" % row["row"])
        with open(path, "w") as f:
            f.write(row["netfilter"])
        sets.append("stage.l3-demux.netfilter=" + path)
    if row.get("tc") or row.get("tc_bpf"):
        path = os.path.join(tmp, "%s.tc" % row["row"])
        with open(path, "w") as f:
            f.write(row["tc"] if row.get("tc") else
                    "filter add dev all ingress bpf da obj %s sec tc\n" % art["tc_port_drop"])
        stages.insert(stages.index("l3-demux"), "tc-ingress")
        sets.append("stage.tc-ingress.filters=" + path)
    return sets, ",".join(stages)


def row_command(lx, row, engine, sets, pipeline, duration, json_path, eal):
    q = row["queues"]
    w = worker_lcore(lx.lcores)
    cmd = [lx.binary] + lx.eal_args("net_synth0,profile=udp-flows,flows=%d" % FLOWS, eal=eal)
    cmd += ["--", "--engine", engine, "--burst", "64", "--pipeline", pipeline,
            "--stats-level", "counters", "--stats-period", "0", "--json", json_path,
            "--duration", str(duration),
            "--set", "port.0.device=net_synth0", "--set", "port.0.rx_queues=%d" % q,
            "--set", "lcore.%d.poll=%s" % (w, ",".join("0:%d" % i for i in range(q))),
            "--set", "stage.gro.clock=polls"]
    for s in sets:
        cmd += ["--set", s]
    return cmd


def map_values(summary, stage, name):
    """{key: [u64, ...]} of a stage's map in a listrx summary (every lcore's
    entries summed)."""
    out = {}
    for m in summary.get("maps", []):
        if m.get("stage") != stage or m.get("name") != name:
            continue
        for e in m.get("entries", []):
            raw = bytes(int(b, 16) for b in e["value"].split())
            words = list(struct.unpack("<%dQ" % (len(raw) // 8), raw[:len(raw) // 8 * 8]))
            key = e.get("key_int")
            prev = out.get(key)
            out[key] = [a + b for a, b in zip(prev, words)] if prev else words
    return out


def _stage(summary, name):
    for st in summary.get("stages", []):
        if st.get("name") == name:
            return st
    return {}


def _counter(summary, stage, name):
    return (_stage(summary, stage).get("counters") or {}).get(name)


def _passed_all(summary, stage, name, seen, what):
    """A program's [0] passed / [1] dropped map: it passed all it saw."""
    stats = map_values(summary, stage, name)
    passed, dropped = (stats.get(0) or [0])[0], (stats.get(1) or [0])[0]
    return {"ok": passed > 0 and dropped == 0 and passed == seen,
            "text": "%s: %d passed, %d dropped, of %d %s" % (name, passed, dropped, seen, what)}


def row_check(row, summary):
    """Whether the row's queues, program, rule or filters saw the traffic
    (as the kernel rows check theirs)."""
    rx = summary.get("rx_packets") or 0
    q = [x.get("rx_packets", 0) for p in summary.get("ports", []) for x in p.get("queues", [])]
    if len(q) != row["queues"] or not all(q):
        return {"ok": False, "text": "RX queues %s: not every one of the %d received"
                % (q, row["queues"])}
    if row.get("xdp"):
        return _passed_all(summary, "xdp", "filter_stats",
                           _stage(summary, "xdp").get("packets") or 0, "into the xdp stage")
    if row.get("netfilter"):
        c = map_values(summary, "l3-demux", "filter/INPUT")
        policy = (c.get(0) or [0])[0]
        rules = [(c.get(k) or [0])[0] for k in range(1, row.get("rules", 1) + 1)]
        into = _counter(summary, "l3-demux", "IpInDelivers") or 0
        ok = policy > 0 and not any(rules) and policy == into
        text = ("filter/INPUT: %d packets through the chain (policy ACCEPT), %s matched "
                "the rule%s, %d delivered" % (policy, "/".join(map(str, rules)),
                                              "s" if len(rules) > 1 else "", into))
        if row.get("conntrack"):
            entries = _counter(summary, "l3-demux", "nf_conntrack_count") or 0
            found = _counter(summary, "l3-demux", "nf_conntrack_found") or 0
            ok = ok and entries > 0 and found > 0
            text += ", %d conntrack entries, %d lookups found one" % (entries, found)
        return {"ok": ok, "text": text}
    if row.get("tc_bpf"):
        return _passed_all(summary, "tc-ingress", "tc_port_stats",
                           _counter(summary, "tc-ingress", "classified") or 0, "classified")
    if row.get("tc"):
        f = map_values(summary, "tc-ingress", "filters")
        classified = _counter(summary, "tc-ingress", "classified") or 0
        # runs, packets (matched), bytes per filter: each ran on every
        # packet whose protocol it takes, none matched
        ip_filters = [f.get(i) for i in range(FLOWER_COUNT - 1)]
        ok = (len(f) == FLOWER_COUNT and classified > 0 and
              all(v and v[0] == classified and v[1] == 0 for v in ip_filters))
        return {"ok": ok, "text": "%d flower filters: each ran on the %d packets classified, "
                "none matched" % (len(f), classified) if ok else
                "filters map %s, %d classified" % (f, classified)}
    return {"ok": rx > 0, "text": "%d packets over %d RX queues %s" % (rx, row["queues"], q)}


def measure_row_interleaved(lx, row, art, args, tmp, log):
    """The packet and burst engines and the A/A control interleaved in one
    process (interleave.py), --paired-reps runs (the engines listed rotated),
    pairs pooled: the gain of each pair of adjacent windows, disturbed
    windows left out; the check of the first run."""
    sets, pipeline = row_files(row, art, tmp)
    engines = ["packet", "burst"]
    labels, _ = interleave.interleave_arg(engines)
    polls = max(1, interleave.window_polls(64) // row["queues"])
    summaries, runs, check = [], [], None
    for rep in range(args.paired_reps):
        path = os.path.join(tmp, "%s-interleave-%d.json" % (row["row"], rep))
        order = labels[rep % len(labels):] + labels[:rep % len(labels)]
        cmd = row_command(lx, row, "packet", sets, pipeline, args.paired_duration, path,
                          args.eal)
        cmd += ["--interleave", ",".join(headline.grid.engine_arg(e) for e in order),
                "--window-polls", str(polls), "--window-us", str(interleave.WINDOW_US)]
        summary, err, info = lx.run(cmd, path, timeout=args.timeout + args.paired_duration)
        if err:
            raise BenchError("%s, interleaved: %s\n  %s" % (row["row"], err, info["command"]))
        summaries.append(summary)
        runs.append({"rep": rep, "command": info["command"],
                     "rx_packets": summary.get("rx_packets"), "load": interleave.loadavg(),
                     "shared_cpu_pct": shared_cpu_pct(info["output"])})
        if check is None:
            check = row_check(row, summary)
            check["command"] = info["command"]
    res = interleave.compare_engines(summaries, engines, shared_runs=[
        r["rep"] for r in runs if r["shared_cpu_pct"] is not None])
    c, aa = res["burst"], res["packet" + headline.grid.AA_SUFFIX]
    log("  %-18s %s" % (row["row"], c["text"]))
    shared = sum(1 for r in runs if r["shared_cpu_pct"] is not None)
    return {"gain": c["ratio"], "ci": c["ci"], "level": c["level"], "resolved": c["resolved"],
            "resolution": c["resolution"], "pairs": c["pairs"], "min": c["min"],
            "max": c["max"], "shared": c["shared"], "comparison": c,
            "shared_cpu_runs": shared,
            "caveat": caveat(c, figure=pct, unit=""),
            "aa": {"gain": aa["ratio"], "ci": aa["ci"],
                                        "resolved": aa["resolved"], "caveat": caveat(aa)},
            "aa_note": c.get("aa_caveat"), "windows_text": c["windows_text"],
            "ns_per_packet": {"packet": c["base"], "burst": c["other"]},
            "runs": runs, "check": check, "pipeline": pipeline, "sets": sets,
            "method": "interleave"}


def measure_row(lx, row, art, args, tmp, log):
    """Alternating repetitions of the packet and burst engines; the paired
    gain and the check of the first run."""
    if getattr(args, "method", "processes") == "interleave":
        return measure_row_interleaved(lx, row, art, args, tmp, log)
    sets, pipeline = row_files(row, art, tmp)
    pairs, runs, check, shared = {}, [], None, set()
    for rep in range(args.reps):
        for engine in (("packet", "burst") if rep % 2 == 0 else ("burst", "packet")):
            path = os.path.join(tmp, "%s-%s-%d.json" % (row["row"], engine, rep))
            cmd = row_command(lx, row, engine, sets, pipeline, args.duration, path, args.eal)
            summary, err, info = lx.run(cmd, path, timeout=args.timeout)
            if err:
                raise BenchError("%s, %s engine: %s\n  %s" % (row["row"], engine, err,
                                                              info["command"]))
            ns = kernel_model.listrx_ns(summary)
            pairs.setdefault(rep, {})[1 if engine == "packet" else 64] = ns
            runs.append({"rep": rep, "engine": engine, "ns_per_packet": ns,
                         "rx_packets": summary.get("rx_packets"),
                         "mpps": summary.get("mpps"),
                         "shared_cpu_pct": shared_cpu_pct(info["output"])})
            if runs[-1]["shared_cpu_pct"] is not None:
                shared.add(rep)
            if check is None:
                check = row_check(row, summary)
                check["command"] = info["command"]
            log("  %-18s rep %d %-6s %7.1f ns/pkt" % (row["row"], rep, engine, ns or 0))
    g = kernel_model.paired_gain(pairs, shared)
    return {"gain": g["gain"], "ci": g["ci"], "level": g["level"], "resolved": g["resolved"],
            "resolution": g["text"], "pairs": g["pairs"], "min": g["min"], "max": g["max"],
            "shared": g["shared"], "comparison": g,
            "ns_per_packet": {"packet": g["base"], "burst": g["other"]},
            "runs": runs, "check": check, "pipeline": pipeline, "sets": sets}


def kernel_rows(args, rows, log):
    """{variant: figures} from kernel.measure_rows, or {"unavailable": why}."""
    variants = sorted({r["kernel"] for r in rows if r.get("kernel")})
    if args.kernel == "off":
        return {"unavailable": unavailable("not measured (--kernel off)")}
    if not variants:
        return {"unavailable": unavailable("no row of this selection exists on the kernel")}
    try:
        return {"rows": kernel.measure_rows(variants, pairs=args.kernel_pairs, log=log)}
    except kernel.Skip as e:
        if args.kernel == "on":
            raise
        return {"unavailable": unavailable(str(e))}


def pct(g):
    return "n/a" if g is None else "%+.1f %%" % ((g - 1.0) * 100.0)


def cell(fig):
    """A gain's cell: the gain in %, its 95 % interval, its pairs, those
    that shared their CPU, resolved or why (stats.caveat)."""
    if fig is None:
        return "-"
    if isinstance(fig, str):
        return fig
    if not fig.get("comparison"):
        return "n/a" if fig.get("gain") is None else "%s (%s)" % (
            pct(fig["gain"]), fig.get("resolution") or "no interval")
    text = fig.get("caveat") or caveat(fig["comparison"], figure=pct, unit="")
    aa = fig.get("aa")
    if aa and aa.get("gain") is not None and aa["ci"][0] is not None:
        text += "; A/A %.3f [%.3f–%.3f]%s; %s" % (
            aa["gain"], aa["ci"][0], aa["ci"][1],
            "; " + fig["aa_note"] if fig.get("aa_note") else "", fig["windows_text"])
    return text


def markdown(doc):
    lines = ["# seed 001 (Cree, listified RX) on listrx and this host's kernel", "",
             "%s, host %s (%s), load average %s before, %s after." % (
                 doc["date"], doc["host"].get("hostname"), doc["host"].get("cpu_model"),
                 doc["load"]["before"], doc["load"]["after"]),
             "", method_line(doc), "",
             "| row | Cree 2018 | listrx retpoline | listrx plain | kernel (this host) | "
             "checks |", "|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        lx = r["listrx"]
        k = r["kernel"]
        kcell = k if isinstance(k, str) else cell(k)
        done = [lx[f] for f in ("retpoline", "plain") if isinstance(lx.get(f), dict)]
        checks = done[0]["check"]["text"] if done else "-"
        if isinstance(k, dict) and k.get("check"):
            checks += "; kernel: " + k["check"].get("text", "")
        lines.append("| %s: %s | %s | %s | %s | %s | %s |" % (
            r["row"], r["what"], r["paper"]["text"], cell(lx.get("retpoline")),
            cell(lx.get("plain")), kcell, checks))
    lines += ["", "The kernel's row for each (listrx-bench kernel --variant): %s." % ", ".join(
        "%s = %s" % (r["row"], r["kernel_variant"]) for r in doc["rows"]
        if r.get("kernel_variant")), ""]
    if doc.get("notes"):
        lines += ["Notes:", ""] + ["- " + n for n in doc["notes"]] + [""]
    return "\n".join(lines)


def method_line(doc):
    """How the listrx columns were timed."""
    if doc.get("method") == "interleave":
        return ("Gain: per-packet ns/packet over listified ns/packet, the median of the "
                "per-pair ratios as a change in %%; in brackets the 95 %% interval of that "
                "median; the pairs; resolved when the interval excludes +0 %% with %d pairs "
                "at least, else why not (docs/measuring.md, \"One comparison\"). listrx: "
                "the packet and burst engines (burst 64) and the A/A control (packet against "
                "itself, as a ratio) interleaved in one process, %d run(s) of %.1f s per row "
                "and flavour, a pair per run (the median of its pairs of adjacent windows, the "
                "windows the OS disturbed left out and counted) (docs/measuring.md, \"Interleaved windows\"). Kernel: "
                "gro_normal_batch 1 vs 64, a pair per two adjacent windows (listrx-bench "
                "kernel)." % (MIN_PAIRS, doc["paired_reps"], doc["paired_duration"]))
    return ("Gain: per-packet ns/packet over listified ns/packet, the median of the "
            "per-pair ratios as a change in %%; in brackets the 95 %% interval of that "
            "median; the pairs; those in which a run shared its CPU (listrx warned that the "
            "polling CPU was busy before the start); resolved when the interval excludes "
            "+0 %% with %d pairs at least, else why not (docs/measuring.md, \"One "
            "comparison\"). listrx: packet vs burst "
            "engine, burst 64, %d alternating repetitions of %.2f s, a pair per repetition. "
            "Kernel: gro_normal_batch 1 vs 64, a pair per two adjacent windows (listrx-bench "
            "kernel)." % (MIN_PAIRS, doc["reps"], doc["duration"]))


def run_cree(args, argv):
    log = (lambda m: None) if args.quiet else (lambda m: print(m, file=sys.stderr))
    doc = measure(args, argv, log)
    failed = write(doc, args.out)
    for line in failed:
        print("listrx-bench cree: check failed: " + line, file=sys.stderr)
    return 1 if failed else 0


def measure(args, argv, log, run_done=None):
    """Every row of args.rows on listrx (args.flavours) and the kernel: the
    document cree.json holds (listrx-bench seeds' section 001 too).
    run_done(line) after each listrx run (measure_row logs one line each)."""
    rows = [r for r in ROWS if r["row"] in args.rows]

    def run_log(line):
        log(line)
        if run_done:
            run_done(line.strip())

    bins = headline.flavour_binaries(args.listrx, args.listrx_retpo)
    build = kernel.build_root(bins["plain"])
    art = {"xdp_port_filter": os.path.join(build, "stages", "xdp", "xdp_port_filter.bpf.o"),
           "tc_port_drop": os.path.join(build, "bench", "kernel", "tc_port_drop.bpf.o")}
    for name, path in art.items():
        if not os.path.isfile(path) and any(
                (name == "xdp_port_filter" and r.get("xdp")) or
                (name == "tc_port_drop" and r.get("tc_bpf")) for r in rows):
            raise BenchError("%s not built (ninja -C %s; the BPF objects need clang)"
                             % (path, build))
    art["stages"] = Listrx(bins["plain"]).stage_list()
    doc = {"command": shlex.join(["listrx-bench"] + list(argv)),
           "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
           "reps": args.reps, "duration": args.duration,
           # callers without the options (listrx-bench seeds) time processes
           "method": getattr(args, "method", "processes"),
           "paired_reps": getattr(args, "paired_reps", None),
           "paired_duration": getattr(args, "paired_duration", None),
           "load": {"before": interleave.loadavg()},
           "flavours": bins, "mitigations": headline.kernel_mitigations(),
           "notes": [
               "listrx's traffic: net_synth udp-flows, %d flows of 64-byte UDP to %s:9, "
               "no socket (UdpNoPorts), as the kernel rows' (the paper's netperf "
               "UDP_STREAM had a socket)." % (FLOWS, LOCAL_IPV4),
               "The paper's figures are all with retpolines (its baseline says so; the "
               "other rows are variations of that test): compare them with the "
               "retpoline column."]}
    flav = [f for f in ("retpoline", "plain") if f in args.flavours]
    results = {r["row"]: {} for r in rows}
    measured = []
    with tempfile.TemporaryDirectory(prefix="lrx-cree-") as tmp:
        for f in flav:
            if is_unavailable(bins.get(f)):
                for r in rows:
                    results[r["row"]][f] = bins[f]
                continue
            lx = Listrx(bins[f], eal=args.eal, lcores=args.lcores)
            measured.append(lx)
            if "host" not in doc:
                doc["host"] = machine_info(lx)
            log("listrx, %s build (%s)" % (f, bins[f]))
            for r in rows:
                results[r["row"]][f] = measure_row(lx, r, art, args, tmp, run_log)
        if "host" not in doc:
            doc["host"] = {"hostname": os.uname().nodename}
        log("kernel rows")
        krows = kernel_rows(args, rows, log)
    doc["load"]["after"] = interleave.loadavg()
    doc["provenance"] = provenance(measured)
    doc["kernel"] = {k: v for k, v in krows.items() if k != "rows"}
    out_rows = []
    failed = []
    for r in rows:
        entry = {"row": r["row"], "what": r["what"], "queues": r["queues"],
                 "paper": r["paper"], "listrx": results[r["row"]]}
        if r.get("kernel") and "rows" in krows:
            entry["kernel_variant"] = r["kernel"]
            entry["kernel"] = krows["rows"].get(r["kernel"]) or unavailable("not measured")
        elif r.get("kernel"):
            entry["kernel_variant"] = r["kernel"]
            entry["kernel"] = krows.get("unavailable")
        else:
            entry["kernel"] = unavailable(r["kernel_none"])
        for f, fig in entry["listrx"].items():
            if isinstance(fig, dict) and not fig["check"]["ok"]:
                failed.append("%s (%s): %s" % (r["row"], f, fig["check"]["text"]))
        k = entry["kernel"]
        if isinstance(k, dict) and k.get("check") and not k["check"].get("ok", True):
            failed.append("%s (kernel): %s" % (r["row"], k["check"].get("text")))
        out_rows.append(entry)
    doc["rows"] = out_rows
    doc["failed_checks"] = failed
    return doc


def write(doc, out):
    """cree.json and cree.md into out, the table on stdout; returns the
    failed checks."""
    with open(os.path.join(out, "cree.json"), "w") as f:
        json.dump(doc, f, indent=1, default=str)
    md = markdown(doc)
    with open(os.path.join(out, "cree.md"), "w") as f:
        f.write(md + "\n")
    print(md)
    print("wrote %s and %s" % (os.path.join(out, "cree.json"),
                               os.path.join(out, "cree.md")))
    return doc["failed_checks"]


def add_parser(sub):
    """The `cree` subcommand (registered by cli.py)."""
    cp = sub.add_parser("cree", help="seed 001's table (Cree's listified RX): each row on "
                        "listrx (both build flavours) and on this host's kernel (root)")
    add_common(cp)
    add_out(cp, what="output directory (cree.json, cree.md)")
    cp.add_argument("--rows", type=convert(named_list("rows", ROW_NAMES), "row"), default=ROW_NAMES,
                    help="rows: %s (default: all)" % ",".join(ROW_NAMES))
    cp.add_argument("--flavours", type=convert(named_list("flavours", headline.FLAVOURS), "flavour"),
                    default=["retpoline", "plain"],
                    help="listrx builds: retpoline,plain (default: both)")
    cp.add_argument("--listrx-retpo", help="the retpoline build's listrx (default: "
                    "build-retpo/dataplane/listrx beside the plain one)")
    cp.add_argument("--reps", type=int, default=MIN_PAIRS,
                    help="alternating repetitions per engine; a gain needs %d pairs to be "
                    "resolved (default: %%(default)s)" % MIN_PAIRS)
    cp.add_argument("--duration", type=float, default=0.3,
                    help="seconds per listrx run (default: %(default)s)")
    cp.add_argument("--method", choices=("interleave", "processes"), default="interleave",
                    help="how listrx's gain is timed: interleave (packet, burst and the A/A "
                    "control polled in turn in one process, adjacent windows paired) or "
                    "processes (alternating processes, --reps x --duration) "
                    "(default: %(default)s)")
    cp.add_argument("--paired-duration", type=float, default=interleave.DURATION,
                    help="interleave: seconds per run (default: %(default)s)")
    cp.add_argument("--paired-reps", type=int, default=interleave.RUNS,
                    help="interleave: runs per row and flavour, a pair each; 6 give a 95 %% "
                    "interval, 9 one that a single deviant run does not set "
                    "(default: %(default)s)")
    cp.add_argument("--kernel", choices=("auto", "on", "off"), default="auto",
                    help="the kernel's rows: auto (when root and possible, else the "
                    "reason), on (fail when not possible), off (default: %(default)s)")
    cp.add_argument("--kernel-pairs", type=int, default=12,
                    help="pairs of windows per kernel row (default: %(default)s)")
    cp.set_defaults(func=cmd_cree)
    return cp


def cmd_cree(args, argv):
    if args.reps < 2:
        raise BenchError("--reps %d: want at least 2 (a gain needs pairs)" % args.reps)
    if not args.duration > 0:
        raise BenchError("--duration %s: want seconds > 0" % args.duration)
    if args.paired_reps < 1 or not args.paired_duration > 0:
        raise BenchError("--paired-reps %d --paired-duration %s: want at least 1 run of "
                         "more than 0 s" % (args.paired_reps, args.paired_duration))
    if args.kernel_pairs < 2:
        raise BenchError("--kernel-pairs %d: want at least 2" % args.kernel_pairs)
    return run_cree(args, argv)
