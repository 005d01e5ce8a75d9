"""`listrx-bench seeds --out D [--only 000,001,004]`: runs the selected
sections (seeds/__init__.py's table), with a progress bar, and writes
D/seeds.json, D/seeds.md and D/seeds.html (docs/seeds.md). Exit 0, 1 when
a check failed or a section could not run, 2 for bad usage."""

import datetime
import json
import os
import shlex
import sys
import tempfile
import types

from .. import grid, headline, kernel
from ..interleave import loadavg
from ..listrx import BenchError, Listrx, allowed_cpus, machine_info, provenance
from ..stats import is_unavailable
from ..options import add_common, add_out, allowed_cpu, convert, named_list, positive_int
from ..progress import Progress
from . import SECTIONS, page
from .kernel_xdp import unavailable_reason

# the eBPF objects the XDP sections run (stages/xdp in the build)
XDP_OBJECTS = ("xdp_drop", "xdp_read_drop", "xdp_tx_swap", "xdp_hints_none",
               "xdp_hints_hash", "xdp_hints_timestamp", "xdp_hints_vlan", "xdp_hints_all")


def seeds_arg(text):
    names = named_list("seeds", SECTIONS)(text)
    return [s for s in SECTIONS if s in names]


def add_parser(sub):
    sp = sub.add_parser("seeds", help="the seeds' published tables beside listrx's figures "
                        "and this host's kernel's (one page: seeds.md/.html/.json)")
    add_common(sp)
    add_out(sp, what="output directory (seeds.json, seeds.md, seeds.html)")
    sp.add_argument("--only", type=convert(seeds_arg, "seed"), default=list(SECTIONS),
                    help="sections: %s (default: all)" % ",".join(SECTIONS))
    sp.add_argument("--reps", type=convert(positive_int), default=7,
                    help="rotating repetitions per listrx configuration (default: "
                    "%(default)s)")
    sp.add_argument("--duration", type=float, default=0.3,
                    help="seconds per listrx run (default: %(default)s)")
    sp.add_argument("--kernel", choices=("auto", "on", "off"), default="auto",
                    help="the kernel's cells: auto (when root and possible, else the "
                    "reason), on (fail when not possible), off (default: %(default)s)")
    sp.add_argument("--kernel-reps", type=convert(positive_int), default=7,
                    help="rotating windows per kernel configuration (default: %(default)s)")
    sp.add_argument("--perf-windows", type=int, default=4,
                    help="windows under perf for seed 000's kernel zoom-in (0: none; "
                    "default: %(default)s)")
    sp.add_argument("--kernel-cpu", type=convert(allowed_cpu), default=allowed_cpus()[-1],
                    help="CPU of the kernel side's sender and NAPI thread (default: the "
                    "last this process may use)")
    sp.add_argument("--flavours", type=convert(named_list("flavours", headline.FLAVOURS), "flavour"),
                    default=["retpoline", "plain"],
                    help="seed 001's listrx builds: retpoline,plain (default: both)")
    sp.add_argument("--listrx-retpo", help="the retpoline build's listrx (default: "
                    "build-retpo/dataplane/listrx beside the plain one)")
    # a request-response row's flows are its requests per poll: a burst
    sp.add_argument("--tx-flows", type=convert(grid.parse_bursts, "flow count"),
                    default=[1, 10, 100],
                    help="seed 002's flow counts, a comma list (default: 1,10,100)")
    sp.add_argument("--cree-kernel-pairs", type=int, default=12,
                    help="pairs of windows per kernel row of seed 001 (default: %(default)s)")
    sp.set_defaults(func=cmd_seeds)
    return sp


def check_args(args):
    if args.reps < 2:
        raise BenchError("--reps %d: want at least 2 (a difference needs pairs)" % args.reps)
    if not args.duration > 0:
        raise BenchError("--duration %s: want seconds > 0" % args.duration)
    if args.perf_windows < 0:
        raise BenchError("--perf-windows %d: want 0 or more" % args.perf_windows)
    if args.cree_kernel_pairs < 2:
        raise BenchError("--cree-kernel-pairs %d: want at least 2" % args.cree_kernel_pairs)


def xdp_objects(build, only):
    """The objects' paths; BenchError naming what is not built when an XDP
    section is selected."""
    art = {n: os.path.join(build, "stages", "xdp", n + ".bpf.o") for n in XDP_OBJECTS}
    missing = [p for p in art.values() if not os.path.isfile(p)]
    if missing and any(s in only for s in ("000", "004")):
        raise BenchError("not built: %s (ninja -C %s; the BPF objects need clang)"
                         % (", ".join(missing), build))
    return art


def kernel_state(args, build):
    """(ok, why): whether the kernel's cells can be measured here."""
    if args.kernel == "off":
        return False, "not measured (--kernel off)"
    why = unavailable_reason(build)
    if why and args.kernel == "on":
        raise kernel.Skip(why)
    return why is None, why


def run_section(mod, ctx):
    """A section's document; a failure is the section's "error"."""
    sec = {"seed": mod.SEED, "title": mod.TITLE, "source": mod.SOURCE}
    try:
        sec.update(mod.measure(ctx))
    except BenchError as e:
        ctx.log("seed %s: %s" % (mod.SEED, e))
        sec["error"] = str(e)
    return sec


def measure(args, argv, progress, log):
    bins = headline.flavour_binaries(args.listrx, args.listrx_retpo)
    build = kernel.build_root(bins["plain"])
    lx = Listrx(bins["plain"], eal=args.eal, lcores=args.lcores)
    kernel_ok, kernel_why = kernel_state(args, build)
    doc = {"command": shlex.join(["listrx-bench"] + list(argv)),
           "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
           "host": machine_info(lx), "load": {"before": loadavg()},
           "options": {k: v for k, v in vars(args).items() if k != "func"},
           "sections": []}
    with tempfile.TemporaryDirectory(prefix="lrx-seeds-") as tmp:
        ctx = types.SimpleNamespace(args=args, lx=lx, art=xdp_objects(build, args.only),
                                    build=build, tmp=tmp, progress=progress, log=log,
                                    kernel_ok=kernel_ok, kernel_why=kernel_why)
        mods = [SECTIONS[s] for s in args.only]
        for mod in mods:
            for kind, count, each in mod.plan(ctx):
                progress.plan(kind, count, each)
        for kind in progress.kinds:
            progress.begin(kind)
        for mod in mods:
            progress.show("seed %s" % mod.SEED)
            doc["sections"].append(run_section(mod, ctx))
    doc["load"]["after"] = loadavg()
    # which code measured: this listrx-bench and the binaries it ran
    ran = [lx] + ([Listrx(bins["retpoline"])] if "001" in args.only and "retpoline" in
                  args.flavours and not is_unavailable(bins.get("retpoline")) else [])
    doc["provenance"] = provenance(ran)
    doc["failed_checks"] = ["seed %s: %s" % (s["seed"], c["text"]) for s in doc["sections"]
                            for c in s.get("checks", []) if not c.get("ok")]
    doc["failed_checks"] += ["seed %s: %s" % (s["seed"], s["error"])
                             for s in doc["sections"] if s.get("error")]
    return doc


def write(doc, out):
    """seeds.json, seeds.md and seeds.html; returns the page's Doc."""
    d = page.render(doc)
    with open(os.path.join(out, "seeds.json"), "w") as f:
        json.dump(doc, f, indent=1, default=str)
    with open(os.path.join(out, "seeds.md"), "w") as f:
        f.write(d.markdown())
    with open(os.path.join(out, "seeds.html"), "w") as f:
        f.write(d.html("listrx: the seeds' tables"))
    return d


def cmd_seeds(args, argv):
    check_args(args)
    lines = []
    progress = Progress(enabled=not args.quiet)
    doc = measure(args, argv, progress, lines.append)
    progress.close()
    doc["log"] = lines
    d = write(doc, args.out)
    print(d.text(), end="")
    print("wrote %s" % ", ".join(os.path.join(args.out, n)
                                  for n in ("seeds.json", "seeds.md", "seeds.html")))
    for line in doc["failed_checks"]:
        print("listrx-bench seeds: %s" % line, file=sys.stderr)
    return 1 if doc["failed_checks"] else 0
