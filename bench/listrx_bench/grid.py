"""The sweep grid: list parsing, footprints relative to the host L1i, cells."""

import itertools
import re

DEFAULT_BURSTS = "1,2,4,8,16,32,64,128,256"
DEFAULT_ENGINES = "packet,burst,hybrid:2,static,graph"
DEFAULT_FOOTPRINTS = "0,L1i/2,L1i,2xL1i,4xL1i"
# the kernel RX path: native XDP on the raw frame, build_skb, GRO, ip_rcv
KERNEL_PIPELINE = "xdp,build-meta,gro,l3-demux"
ENGINE_RE = re.compile(r"^(packet|burst|static|graph|hybrid:\d+)$")


def split_list(text):
    return [item.strip() for item in text.split(",") if item.strip()]


def parse_bursts(text):
    bursts = []
    for item in split_list(text):
        if not item.isdigit() or not 1 <= int(item) <= 512:
            raise ValueError("burst %r: want an integer 1..512" % item)
        bursts.append(int(item))
    return bursts


def parse_engines(text):
    engines = split_list(text)
    for e in engines:
        if not ENGINE_RE.match(e):
            raise ValueError("engine %r: want packet, burst, hybrid:K, static or graph" % e)
    return engines


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


def xdp_pipeline(pipeline, xdp):
    """Where the xdp stage goes: native = first (on the raw frame, as a
    driver hook), generic = right after build-meta (as xdpgeneric runs on
    the skb), or last when there is no build-meta."""
    stages = [] if pipeline in ("none", "") else pipeline.split(",")
    stages = [s for s in stages if s != "xdp"]
    if xdp == "native":
        stages.insert(0, "xdp")
    elif xdp == "generic":
        pos = stages.index("build-meta") + 1 if "build-meta" in stages else len(stages)
        stages.insert(pos, "xdp")
    return ",".join(stages) if stages else "none"


def expand(profiles, pipelines, footprints, engines, bursts, xdps=(None,)):
    """Cells in sweep order (burst innermost, so one plot line is measured
    close together in time). Each cell is a dict of its parameters."""
    cells = []
    for profile, pipeline, xdp, (fp_label, fp_kb), engine, burst in itertools.product(
            profiles, pipelines, xdps, footprints, engines, bursts):
        arg = xdp_pipeline(pipeline, xdp) if xdp else pipeline
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
