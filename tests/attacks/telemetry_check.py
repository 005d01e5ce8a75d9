#!/usr/bin/env python3
"""Checks a running listrx's telemetry replies (attacks.tsv rows H5, H15).

usage: telemetry_check.py runtime-race FILE_PREFIX SECONDS
         two clients: one asks /listrx/runtime,clear, one /listrx/runtime,
         for SECONDS; no count may be wrapped (>= 2^62): each report is
         taken after the base it is diffed against
       telemetry_check.py trace FILE_PREFIX N
         /listrx/trace of a run with --trace N: every string fits
         rte_telemetry's 127 characters, and the packets shown plus the
         "more" count are N
"""
import json
import os
import re
import socket
import sys
import threading
import time


def socket_path(prefix):
    # eal_create_runtime_dir: /var/run for root, else XDG_RUNTIME_DIR or /tmp
    base = "/var/run" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    return os.path.join(base, "dpdk", prefix, "dpdk_telemetry.v2")


def connect(path, deadline):
    while True:
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.settimeout(5)
            s.connect(path)
            s.recv(4096)  # the greeting
            return s
        except OSError:
            s.close()
            if time.time() > deadline:
                raise SystemExit("telemetry check: no socket at %s" % path)
            time.sleep(0.05)


def ask(s, cmd):
    s.send(cmd.encode())
    return json.loads(s.recv(1 << 20).decode())


def wait_for(s, cmd, deadline):
    """listrx registers its commands after set-up: ask until they answer"""
    while time.time() < deadline:
        reply = ask(s, cmd).get(cmd.split(",")[0])
        if reply:
            return reply
        time.sleep(0.05)
    raise SystemExit("telemetry check: %s never answered" % cmd)


def numbers(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from numbers(v)
    elif isinstance(value, int):
        yield value


def runtime_race(prefix, seconds):
    deadline = time.time() + 60  # start-up on a loaded host
    path = socket_path(prefix)
    reader, clearer = connect(path, deadline), connect(path, deadline)
    wait_for(reader, "/listrx/runtime", deadline)
    stop = time.time() + seconds
    clears = [0]

    def clear():
        while time.time() < stop:
            ask(clearer, "/listrx/runtime,clear")
            clears[0] += 1

    t = threading.Thread(target=clear)
    t.start()
    reads, wrapped = 0, []
    while time.time() < stop:
        reply = ask(reader, "/listrx/runtime").get("/listrx/runtime") or {}
        reads += 1
        wrapped += [n for n in numbers(reply) if n >= 1 << 62]
    t.join()
    print("telemetry runtime race: %d reads, %d clears, %d wrapped counts%s"
          % (reads, clears[0], len(wrapped), (": %s" % wrapped[:3]) if wrapped else ""))
    return 1 if wrapped or reads == 0 or clears[0] == 0 else 0


def trace(prefix, n):
    deadline = time.time() + 60  # start-up on a loaded host
    s = connect(socket_path(prefix), deadline)
    # the trace fills as the run goes: ask until every packet is traced
    reply = {}
    while time.time() < deadline:
        reply = wait_for(s, "/listrx/trace", deadline)
        shown = [k for k in reply if k.startswith("packet_")]
        more = re.match(r"(\d+) more", reply.get("more", ""))
        if len(shown) + (int(more.group(1)) if more else 0) == n:
            break
        time.sleep(0.1)
    shown = [k for k in reply if k.startswith("packet_")]
    more = re.match(r"(\d+) more", reply.get("more", ""))
    strings = [v for k in shown for v in reply[k]] + [reply.get("more", "")]
    longest = max(len(v) for v in strings)
    total = len(shown) + (int(more.group(1)) if more else 0)
    print("telemetry trace: %d packets shown, %s more, %d in all, longest string %d"
          % (len(shown), more.group(1) if more else 0, total, longest))
    return 0 if total == n and longest <= 127 and shown else 1


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("runtime-race", "trace"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "runtime-race":
        sys.exit(runtime_race(sys.argv[2], float(sys.argv[3])))
    sys.exit(trace(sys.argv[2], int(sys.argv[3])))
