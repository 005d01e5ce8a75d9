#!/usr/bin/env python3
"""Appends UDP records to a pcap file as fast as it can while listrx
loads it (attacks row J9): writes the file header, then one 60..340-byte
record per write() until the file named by STOP exists, 20 s have passed
or it holds 32 MB.

usage: pcap_grow.py PCAP STOP
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_inputs import eth, ipv4, pcap_header, record, udp  # noqa: E402


def main():
    path, stop = sys.argv[1], sys.argv[2]
    records = [record(eth(0x0800) + ipv4(udp(b"g" * n, dport=9), proto=17))
               for n in range(18, 300)]
    with open(path, "wb", buffering=0) as f:
        f.write(pcap_header())
        deadline = time.monotonic() + 20
        i = size = 0
        while size < 32 << 20 and (i % 256 or (not os.path.exists(stop) and
                                               time.monotonic() < deadline)):
            rec = records[i % len(records)]
            f.write(rec)
            size += len(rec)
            i += 1


if __name__ == "__main__":
    main()
