"""The sweep grid: list parsing, footprints relative to the host L1i, cells."""

import itertools
import re

DEFAULT_BURSTS = "1,2,4,8,16,32,64,128,256"
DEFAULT_ENGINES = "packet,burst,hybrid:2,static,graph"
DEFAULT_FOOTPRINTS = "0,L1i/2,L1i,2xL1i,4xL1i"
# the kernel RX path: native XDP on the raw frame, build_skb, GRO, ip_rcv
KERNEL_PIPELINE = "xdp,build-meta,gro,l3-demux"
ENGINE_RE = re.compile(r"^(packet|burst|static|graph|hybrid:\d+)(/prefetch=(\d+))?(-aa)?$")
# ENGINE-aa: the same engine as a cell of its own, measured like any other
# (the A/A comparison: packet vs packet-aa shows what noise alone gives)
AA_SUFFIX = "-aa"
# ENGINE/prefetch=K: the engine with [pipeline] prefetch = K (listrx
# --interleave takes it as an item; a process of its own gets --set)
PREFETCH_MAX = 16


def split_list(text):
    return [item.strip() for item in text.split(",") if item.strip()]


def parse_burst(item):
    item = str(item).strip()
    if not item.isdigit() or not 1 <= int(item) <= 512:
        raise ValueError("burst %r: want an integer 1..512" % item)
    return int(item)


def parse_bursts(text):
    return [parse_burst(item) for item in split_list(text)]


def parse_engines(text):
    engines = split_list(text)
    for e in engines:
        m = ENGINE_RE.match(e)
        if not m or (m.group(3) and int(m.group(3)) > PREFETCH_MAX):
            raise ValueError("engine %r: want packet, burst, hybrid:K, static or graph "
                             "(ENGINE-aa: the same engine again, for an A/A comparison; "
                             "ENGINE/prefetch=K, K 0..%d: with that prefetch distance)"
                             % (e, PREFETCH_MAX))
    return engines


def engine_arg(engine):
    """listrx's --interleave item of a cell's engine (packet-aa runs
    packet; burst/prefetch=4 stays)."""
    return engine[:-len(AA_SUFFIX)] if engine.endswith(AA_SUFFIX) else engine


def engine_kind(engine):
    """listrx's --engine of a cell's engine: the engine alone."""
    return engine_arg(engine).split("/")[0]


def engine_prefetch(engine):
    """K of ENGINE/prefetch=K, or None."""
    m = ENGINE_RE.match(engine)
    return int(m.group(3)) if m and m.group(3) else None


def parse_footprint(item, l1i_bytes):
    """'48' (KB), 'L1i', 'L1i/2', '2xL1i', '0.5xL1i' -> (label, KB).
    Multiples of the L1i need its size (from the topology)."""
    item = item.strip()
    if re.fullmatch(r"\d+", item):
        return item, int(item)
    m = re.fullmatch(r"(?:(\d+(?:\.\d+)?)\s*[x*]\s*)?L1i(?:\s*/\s*(\d+))?", item, re.I)
    if not m:
        raise ValueError("footprint %r: want KB (e.g. 48) or a multiple of the host "
                         "L1i (L1i, L1i/2, 2xL1i)" % item)
    if not l1i_bytes:
        raise ValueError("footprint %r: the host L1i size is unknown; give KB" % item)
    factor = float(m.group(1) or 1) / float(m.group(2) or 1)
    return item, max(int(round(l1i_bytes / 1024 * factor)), 0)


def parse_footprints(text, l1i_bytes):
    return [parse_footprint(item, l1i_bytes) for item in split_list(text)]


def parse_pipelines(text):
    """Pipelines separated by ';' (stage lists use commas): 'build-meta,l3-demux;none'."""
    pipelines = [p.strip() for p in text.split(";") if p.strip()]
    if not pipelines:
        raise ValueError("--pipelines: empty")
    return pipelines


def place_stage(pipeline, name, value, stage_list):
    """The pipeline with stage `name` where its shortcut's place `value`
    (xdp: native, generic) puts it, by the binary's own rule (its
    --list-stages --json: the place's position, what each stage provides):
    "first", or "after_skb", right after the last stage that provides meta
    or skb (generic XDP after build-meta and GRO, as the kernel's
    netif_receive_generic_xdp runs on the built skb). A binary without the
    stage leaves it last: the sweep skips such cells, saying why."""
    stages = [] if pipeline in ("none", "") else [s for s in pipeline.split(",") if s != name]
    info = {s["name"]: s for s in stage_list or ()}
    places = {p["value"]: p["position"]
              for p in ((info.get(name) or {}).get("shortcut") or {}).get("places", ())}
    if name in info and value not in places:
        raise ValueError("%s %r: the binary places it %s" % (
            name, value, ", ".join(places) or "nowhere (no placements)"))
    position = places.get(value, "any")
    if position == "first":
        at = 0
    elif position == "after_skb":
        providers = [i for i, s in enumerate(stages)
                     if {"meta", "skb"} & set((info.get(s) or {}).get("provides", ()))]
        at = providers[-1] + 1 if providers else len(stages)
    else:
        at = len(stages)
    stages.insert(at, name)
    return ",".join(stages)


def expand(profiles, pipelines, footprints, engines, bursts, xdps=(None,), stage_list=None):
    """Cells in sweep order (burst innermost, so one plot line is measured
    close together in time). Each cell is a dict of its parameters;
    stage_list (Listrx.stage_list) places the xdp stage of an xdp cell."""
    cells = []
    for profile, pipeline, xdp, (fp_label, fp_kb), engine, burst in itertools.product(
            profiles, pipelines, xdps, footprints, engines, bursts):
        arg = place_stage(pipeline, "xdp", xdp, stage_list) if xdp else pipeline
        cell = {"profile": profile, "pipeline": pipeline, "pipeline_arg": arg,
                "xdp": xdp or "off", "footprint": fp_label, "footprint_kb": fp_kb,
                "engine": engine, "burst": burst}
        cell["cell"] = cell_id(cell)
        cells.append(cell)
    return cells


def cell_id(cell):
    raw = "%s_%s_%s_fp%s_%s_b%d" % (cell["profile"], cell["pipeline_arg"], cell["xdp"],
                                    cell["footprint_kb"], cell["engine"], cell["burst"])
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", raw)
