"""Seed 001: Cree, "Handle multiple received packets at each stage"
(netdev RFC v2, 2018). Its section is `listrx-bench cree`'s table: the
rows are measured by cree.measure (the same runs, checks and kernel rows)
and shown here with a line per row on why the numbers differ
(docs/cree.md, "What matches the paper")."""

import argparse

from .. import cree

SEED = "001"
TITLE = "Cree, listified RX: what listification gains, per set-up"
SOURCE = ("Edward Cree, \"[RFC PATCH v2 net-next 00/12] Handle multiple received packets "
          "at each stage\" (netdev, June 2018): sfc (Solarflare), netperf UDP_STREAM with "
          "1-byte payloads, 4 streams on several RX queues bound to one CPU, retpolines; "
          "the CPU is not named")

WHY = {
    "baseline": "Cree's gain came from the driver's event-queue batching (patches 1-2) as "
                "much as from the stack; listrx polls each queue as its own list, and its "
                "stages are KB, not the kernel's hundreds of KB: the retpoline build saves "
                "a thunk per stage call, the plain build little.",
    "single-rxq": "listrx's queues are separate lists either way, so one queue is not "
                  "expected to fall to +4 %.",
    "xdp-generic-jit": "the program is one indirect call per packet in both engines; "
                       "listification saves the stack around it.",
    "xdp-generic-interp": "the interpreter's longer per-packet time makes the same saving "
                          "a smaller share; the paper's larger gain came from its generic "
                          "XDP list handling (patches 10-12), which listrx does not model.",
    "nf-rule": "netfilter runs per packet inside a list in the kernel (nf_hook_slow_list) "
               "and in listrx: it adds to both engines alike.",
    "tc-flower": "tc runs per skb inside the list (__netif_receive_skb_core); no flower "
                 "in this kernel for its row.",
    "tc-bpf": "the kernel's tc row on this host (the paper's was flower).",
}


def cree_args(args):
    """cree.measure's options from seeds' (its rows, both flavours)."""
    return argparse.Namespace(
        rows=cree.PAPER_ROW_NAMES, flavours=args.flavours, listrx=args.listrx,
        listrx_retpo=args.listrx_retpo, eal=args.eal, lcores=args.lcores,
        reps=args.reps, duration=args.duration, kernel=args.kernel,
        kernel_pairs=args.cree_kernel_pairs, timeout=args.timeout, quiet=True)


def plan(ctx):
    n = len(cree.PAPER_ROW_NAMES) * len(ctx.args.flavours) * ctx.args.reps * 2
    return [("run", n, ctx.args.duration + 0.8)] + (
        [("cree kernel", 1, 60.0)] if ctx.kernel_ok and ctx.args.kernel != "off" else [])


def measure(ctx):
    doc = cree.measure(cree_args(ctx.args), ["cree"], ctx.log,
                       run_done=lambda text: ctx.progress.update(text, kind="run"))
    if ctx.kernel_ok and ctx.args.kernel != "off":
        ctx.progress.update("cree: the kernel's rows", kind="cree kernel")
    rows = []
    for r in doc["rows"]:
        k = r["kernel"]
        rows.append({"cells": ["%s: %s" % (r["row"], r["what"]), r["paper"]["text"],
                               cree.cell(r["listrx"].get("retpoline")),
                               cree.cell(r["listrx"].get("plain")),
                               k if isinstance(k, str) else cree.cell(k)],
                     "why": WHY.get(r["row"], "")})
    checks = []
    for r in doc["rows"]:
        for f, fig in r["listrx"].items():
            if isinstance(fig, dict):
                checks.append({"ok": fig["check"]["ok"],
                               "text": "%s (%s): %s" % (r["row"], f, fig["check"]["text"])})
        k = r["kernel"]
        if isinstance(k, dict) and k.get("check"):
            checks.append({"ok": k["check"].get("ok", True),
                           "text": "%s (kernel): %s" % (r["row"], k["check"].get("text"))})
    return {
        "tables": [{"title": "Gain of listified over per-packet processing (`listrx-bench "
                    "cree`'s table)",
                    "columns": ["row", "Cree 2018", "listrx retpoline", "listrx plain",
                                "kernel (this host)"], "rows": rows}],
        "method": ["listrx-bench cree: per-packet ns ÷ listified ns (packet vs burst engine, "
                   "burst 64, %d alternating repetitions of %.2f s), as a change in %%: one "
                   "stats.compare per cell, its 95 %% interval, the pairs, those that "
                   "shared their CPU, resolved or why; the kernel's gro_normal_batch 1 vs "
                   "64 windows (docs/cree.md)." % (ctx.args.reps, ctx.args.duration)],
        "checks": checks,
        "figures": {"cree": doc},
    }
