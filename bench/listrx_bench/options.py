"""Options the sub-commands share: value parsers for argparse and the groups
of options (binary and EAL, the grid, cachegrind's caches). Each
sub-command module registers itself with add_parser(sub) (cli.py)."""

import argparse
import os

from . import grid
from .listrx import CG_CACHES_ENV, DEFAULT_EAL, BenchError, allowed_cpus, parse_cache_geometry


def convert(parse, what=None):
    """An argparse type from a parser that raises ValueError or BenchError;
    a list parser that returns an empty list is refused (an empty grid
    measures nothing)."""
    def converted(text):
        try:
            value = parse(text)
        except (ValueError, BenchError) as e:
            raise argparse.ArgumentTypeError(str(e))
        if isinstance(value, list) and not value:
            raise argparse.ArgumentTypeError("%r: empty; want at least one %s"
                                             % (text, what or "value"))
        return value
    return converted


def positive_int(text):
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError("%r: want an integer >= 1" % text)
    return int(text)


def non_negative_int(text):
    if not text.strip().isdigit():
        raise ValueError("%r: want an integer >= 0" % text)
    return int(text)


def positive_float(text):
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value > 0 or value != value or value == float("inf"):
        raise ValueError("%r: want a number > 0" % text)
    return value


def allowed_cpu(text):
    """A CPU number this process may run on (its affinity)."""
    cpus = allowed_cpus()
    if not text.strip().isdigit() or int(text) not in cpus:
        raise ValueError("CPU %r: not one this process may use (%s)"
                         % (text, ",".join(str(c) for c in cpus)))
    return int(text)


def choices_list(valid):
    """A comma-separated list of some of `valid`."""
    def parse(text):
        names = grid.split_list(text)
        for n in names:
            if n not in valid:
                raise ValueError("%r: want one or more of %s" % (n, ",".join(valid)))
        return names
    return parse


def named_list(what, valid):
    """A comma-separated list of some of `valid`; the error names `what`
    and the items that are not valid."""
    def parse(text):
        names = grid.split_list(text)
        bad = [n for n in names if n not in valid]
        if bad or not names:
            raise ValueError("%s %s: want a comma list of %s"
                             % (what, ",".join(bad) or "(none)", ",".join(valid)))
        return names
    return parse


def onoff(text):
    if text in ("on", "1", "yes", "true"):
        return True
    if text in ("off", "0", "no", "false"):
        return False
    raise ValueError("want on or off, not %r" % text)


def packet_pair(text):
    vals = [int(v) for v in grid.split_list(text)]
    if len(vals) != 2 or not 0 < vals[0] < vals[1]:
        raise ValueError("want two packet counts SMALL,LARGE with 0 < SMALL < LARGE")
    return vals


def xdp_modes(text):
    vals = grid.split_list(text)
    for v in vals:
        if v not in ("native", "generic", "off"):
            raise ValueError("xdp %r: want native, generic or off" % v)
    return [None if v == "off" else v for v in vals]


def data_room(text):
    """An mbuf data room both tools accept: headroom (128) plus at least a
    minimal frame, within rte_mbuf's uint16_t buf_len."""
    if not text.isdigit() or not 256 <= int(text) <= 65535:
        raise ValueError("%r: want bytes, 256..65535" % text)
    return int(text)


def footprints(text):
    """The footprint list as written (multiples of the L1i are resolved
    once the binary's topology is known); refused here when empty or when
    an item is neither KB nor a multiple of the L1i."""
    items = grid.split_list(text)
    for item in items:
        grid.parse_footprint(item, 32768)  # the syntax only
    return ",".join(items) if items else []


def add_common(p):
    p.add_argument("--listrx", help="listrx binary (default: $LISTRX_BIN, build/dataplane/listrx)")
    p.add_argument("--eal", default=DEFAULT_EAL,
                   help="EAL arguments besides -l/--file-prefix/--vdev (default: %(default)s)")
    p.add_argument("--lcores", help="EAL -l: main lcore, then the worker that polls "
                   "(pinned by EAL; default: the first two CPUs this process may use)")
    p.add_argument("--timeout", type=convert(positive_float), default=120,
                   help="seconds per run before it is killed (x10 under valgrind/perf)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def add_grid(p, bursts, engines, footprints_, pipelines, profiles):
    p.add_argument("--bursts", type=convert(grid.parse_bursts, "burst size"),
                   default=grid.parse_bursts(bursts), help="burst sizes (default %s)" % bursts)
    p.add_argument("--engines", type=convert(grid.parse_engines, "engine"),
                   default=grid.parse_engines(engines), help="engines (default %s)" % engines)
    p.add_argument("--footprints", type=convert(footprints, "footprint"), default=footprints_,
                   help="ballast KB or multiples of the host L1i: 0,L1i/2,L1i,2xL1i "
                   "(default %s)" % footprints_)
    p.add_argument("--pipelines", type=convert(grid.parse_pipelines, "pipeline"),
                   default=grid.parse_pipelines(pipelines),
                   help="stage lists separated by ';' (default %s; 'none' = empty)" % pipelines)
    p.add_argument("--profiles", type=convert(grid.split_list, "profile"),
                   default=grid.split_list(profiles),
                   help="traffic: net_synth profiles (udp64, ...), 'null' (DPDK net_null), "
                   "'net_...' devargs, 'none' (ports from --eal), 'config:FILE' "
                   "(default %s)" % profiles)


def add_cg_caches(p):
    p.add_argument("--cg-caches", type=convert(parse_cache_geometry),
                   default=os.environ.get(CG_CACHES_ENV),
                   help="cachegrind's simulated caches instead of the host's, as valgrind's "
                   "--I1/--D1/--LL take them: 'I1=32768,8,64 D1=49152,12,64 LL=...' (any of "
                   "the three; the host's for the others) (default: $%s, else the host's "
                   "L1i/L1d/LL from hwloc and sysfs)" % CG_CACHES_ENV)


def add_out(p, required=True, what="output directory"):
    p.add_argument("--out", required=required, default=None, help=what)
