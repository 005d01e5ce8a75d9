"""listrx-bench: the command line. Every sub-command is a module with
add_parser(sub), which registers its options and the function that runs
it (set_defaults(func=...)); this module only collects them, runs the one
asked for and turns its errors and signals into one line and an exit
status."""

import argparse
import importlib
import os
import signal
import sys
import tempfile

from . import __version__
from .listrx import STOP_SIGNALS, BenchError, notice_once

EPILOG = """examples:
  listrx-bench headline --out headline/
  listrx-bench cree --out cree/            (seed 001's table; the kernel's rows as root)
  listrx-bench paired --engines packet,burst  (engines interleaved in one process)
  listrx-bench seeds --out seeds/          (every seed's table: published, listrx, kernel)
  listrx-bench sweep --out results/ --counters time,cachegrind
  listrx-bench report results/
  listrx-bench compare --peer testpmd-rxonly,testpmd-io,graph --reps 5
  listrx-bench latency --bursts 1,32,256 --engines packet,burst
  listrx-bench scale --out scale/ (or --from DIR: bench/scale.sh's runs elsewhere)
On a real NIC (as root, hugepages, NIC bound to vfio-pci, PCM's msr module):
  listrx-bench sweep --eal "-a 0000:3b:00.0" --profiles none --lcores 2,3 \\
      --counters time,perf,pcm,rapl --out results-nic/
docs/measuring.md explains the method and each figure."""

# the sub-commands, in the order --help lists them: modules of this package
COMMANDS = ("headline", "paired", "sweep", "report", "compare", "latency", "kernel", "cree",
            "seeds", "gro_synth", "xdp_udp64", "synth_rx", "scale")


class Stopped(BaseException):
    """SIGTERM or SIGHUP: raised where the program is, so that every
    finally runs (children stopped, runtime directories removed), as
    Ctrl-C's KeyboardInterrupt does."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _stop(signum, frame):
    raise Stopped(signum)


def build_parser():
    ap = argparse.ArgumentParser(
        prog="listrx-bench", description="Sweeps, counter backends, peers and reports for "
        "listrx (what listification saves, per burst size, engine and code footprint).",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version="listrx-bench " + __version__)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module("." + name, __package__).add_parser(sub)
    return ap


def prepare_out(path):
    """--out: a directory this process can write (created when missing),
    or BenchError saying why not."""
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as e:
        raise BenchError("--out %s: %s (want a directory it can create and write)"
                         % (path, e.strerror or e))


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # a usage error (2, said on stderr) or --help (0)
        return e.code
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    old = {s: signal.signal(s, _stop) for s in STOP_SIGNALS if s != signal.SIGINT}
    # a shell that starts us in the background ignores SIGINT for us, and
    # Python then installs no KeyboardInterrupt: a signal to the group
    # stopped the listrx runs and the command went on, as if each stopped
    # run were a repetition. As listrx-bench kernel does, it stops us too.
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        old[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        # another clone's listrx-bench (the PATH's link is the first clone
        # set up): said, and each output records it (provenance)
        notice_once()
        if getattr(args, "out", None):
            prepare_out(args.out)
        return args.func(args, argv)
    except (BenchError, ValueError) as e:
        print("listrx-bench: %s" % e, file=sys.stderr)
        return 2
    except OSError as e:
        print("listrx-bench: %s" % e, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\nlistrx-bench: interrupted", file=sys.stderr)
        return 130
    except Stopped as e:
        print("\nlistrx-bench: stopped by %s" % signal.Signals(e.signum).name, file=sys.stderr)
        return 128 + e.signum
    finally:
        for s, h in old.items():
            signal.signal(s, h)
