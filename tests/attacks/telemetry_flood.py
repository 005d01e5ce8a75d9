#!/usr/bin/env python3
"""Floods a running listrx's DPDK telemetry socket (local, bounded): valid
commands, unknown ones, garbage bytes, over-long requests, clients that
connect and leave without reading. Prints what /listrx/config says the EAL
arguments were, and the count of requests and replies.

usage: telemetry_flood.py FILE_PREFIX [REQUESTS]
"""
import json
import os
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(2)
    s.connect(path)
    s.recv(4096)  # the greeting: version, pid, max_output_len
    return s


def main():
    # DPDK's runtime directory (eal_create_runtime_dir): /var/run for
    # root, else XDG_RUNTIME_DIR or /tmp; then dpdk/FILE_PREFIX
    base = "/var/run" if os.getuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp")
    path = os.path.join(base, "dpdk", sys.argv[1], "dpdk_telemetry.v2")
    total = int(sys.argv[2]) if len(sys.argv) > 2 else 600
    deadline = time.time() + 20
    while True:
        try:
            s = connect(path)
            break
        except OSError:
            if time.time() > deadline:
                print("telemetry flood: no socket at %s" % path)
                return 1
            time.sleep(0.05)
    # the socket exists from EAL init on; listrx registers its commands
    # after set-up: ask until they answer
    cfg = None
    while not cfg and time.time() < deadline:
        s.send(b"/listrx/config")
        cfg = json.loads(s.recv(1 << 20).decode()).get("/listrx/config")
        if not cfg:
            time.sleep(0.05)
    eal = (cfg or {}).get("eal", {}).get("args")
    print("telemetry /listrx/config eal.args=%s" % eal)
    hostile = [b"/listrx/stats", b"/listrx/config", b"/help,/listrx/stats", b"/ethdev/list",
               b"/nosuch", b"", b"/listrx/stats," + b"x" * 3000, b"\xff\xfe\x00garbage",
               b"/" * 1000, b"/listrx/config,,,,", b"/ethdev/stats,99999999999999999999"]
    sent = replies = 0
    for i in range(total):
        if time.time() > deadline:
            break
        try:
            s.send(hostile[i % len(hostile)])
            sent += 1
            if s.recv(1 << 20):
                replies += 1
        except OSError:
            # the server may close a client that sent garbage: reconnect
            s.close()
            s = connect(path)
        if i % 100 == 0:
            # a client that connects, asks and leaves without reading
            t = connect(path)
            t.send(b"/listrx/stats")
            t.close()
    s.close()
    print("telemetry flood: %d requests, %d replies" % (sent, replies))
    return 0 if replies > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
