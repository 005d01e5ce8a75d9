#!/usr/bin/env python3
"""Counts the packets of a pcapng file (FILE, or - for stdin) and checks
its structure: whole blocks, lengths repeated at the end, every packet on
an interface block before it. Prints "pcapng: N packets on K interfaces";
with EXPECTED, exits 1 unless N equals it.

usage: pcapng_count.py FILE|- [EXPECTED]
"""
import struct
import sys


def main():
    data = sys.stdin.buffer.read() if sys.argv[1] == "-" else open(sys.argv[1], "rb").read()
    if len(data) < 12 or struct.unpack_from("<I", data)[0] != 0x0A0D0D0A:
        print("pcapng: not a pcapng file (%d bytes)" % len(data))
        return 1
    at = packets = interfaces = 0
    while at < len(data):
        if at + 12 > len(data):
            print("pcapng: %d bytes after the last whole block" % (len(data) - at))
            return 1
        kind, length = struct.unpack_from("<II", data, at)
        if length < 12 or length % 4 or at + length > len(data) or \
                struct.unpack_from("<I", data, at + length - 4)[0] != length:
            print("pcapng: a cut or malformed block at byte %d" % at)
            return 1
        if kind == 1:
            interfaces += 1
        elif kind == 6:
            if struct.unpack_from("<I", data, at + 8)[0] >= interfaces:
                print("pcapng: a packet on an interface not described before it")
                return 1
            packets += 1
        at += length
    print("pcapng: %d packets on %d interfaces" % (packets, interfaces))
    if len(sys.argv) > 2 and packets != int(sys.argv[2]):
        print("pcapng: %d packets, the summary says %s" % (packets, sys.argv[2]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
