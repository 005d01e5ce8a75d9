#!/usr/bin/env python3
"""Hostile inputs for the attack battery (tests/attacks/run_attacks.sh),
written into DIR: pcaps that are broken as files, a pcap of adversarial
TCP/IP frames for every engine, and configs that are broken as files.
Deterministic: the same bytes on every run.

usage: make_inputs.py DIR
"""
import random
import struct
import sys
from pathlib import Path

PCAP_MAGIC_USEC = 0xA1B2C3D4


def pcap_header(linktype=1, snaplen=65535, magic=PCAP_MAGIC_USEC, order="<"):
    return struct.pack(order + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype)


def record(frame, caplen=None, length=None):
    caplen = len(frame) if caplen is None else caplen
    length = len(frame) if length is None else length
    return struct.pack("<IIII", 0, 0, caplen, length) + frame


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def eth(ethertype, vlan=None):
    head = b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01"
    if vlan is not None:
        head += struct.pack("!HH", 0x8100, vlan)
    return head + struct.pack("!H", ethertype)


def ipv4(payload, proto=6, ihl=5, total=None, ttl=64, tos=0, ident=1, frag=0x4000,
         good_csum=True, src=0x0A000001, dst=0x0A000002, options=b""):
    total = 20 + len(options) + len(payload) if total is None else total
    h = struct.pack("!BBHHHBBHII", (4 << 4) | ihl, tos, total & 0xFFFF, ident, frag,
                    ttl, proto, 0, src, dst) + options
    c = csum(h) if good_csum else 0xDEAD
    h = h[:10] + struct.pack("!H", c) + h[12:]
    return h + payload


def tcp(seq, flags=0x10, payload=b"", options=b"", sport=1000, dport=2000, ack=1,
        src=0x0A000001, dst=0x0A000002, good_csum=True):
    off = (20 + len(options)) // 4
    h = struct.pack("!HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack, off << 4, flags,
                    65535, 0, 0) + options
    seg = h + payload
    pseudo = struct.pack("!IIBBH", src, dst, 0, 6, len(seg))
    c = csum(pseudo + seg) if good_csum else 0xBEEF
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def udp(payload, sport=53, dport=5353):
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def adversarial_frames():
    """TCP streams with every GRO flush reason, and IPv4/IPv6 frames with
    every ip_rcv drop reason, interleaved by a seeded shuffle."""
    rng = random.Random(17)
    frames = []
    mss = 1000
    for flow in range(6):
        sport = 1000 + flow
        seq = 1000 * flow
        for i in range(40):
            flags = 0x10
            if i % 13 == 12:
                flags |= 0x08  # PSH: flush
            if i == 39:
                flags |= 0x01  # FIN
            opts = b""
            if flow == 1 and i % 7 == 3:
                opts = b"\x01\x01\x08\x0a" + struct.pack("!II", i, 0)  # timestamps change
            pay = bytes([i & 0xFF]) * (mss if i % 11 else rng.randint(1, mss))
            s = seq
            if flow == 2 and i % 9 == 4:
                s -= mss  # retransmission / out of order
            ttl = 64 if not (flow == 3 and i % 5 == 0) else 63
            frames.append(eth(0x0800) + ipv4(tcp(s, flags, pay, opts, sport=sport), ttl=ttl,
                                              ident=i))
            seq += len(pay)
    pay = b"x" * 64
    frames += [
        eth(0x0800) + ipv4(udp(pay), proto=17, ihl=4),                 # IHL < 5
        eth(0x0800) + ipv4(udp(pay), proto=17, total=2000),            # total > frame
        eth(0x0800) + ipv4(udp(pay), proto=17, total=10),              # total < header
        eth(0x0800) + ipv4(udp(pay), proto=17, good_csum=False),       # bad checksum
        eth(0x0800) + ipv4(udp(pay), proto=17, src=0x7F000001),        # martian source
        eth(0x0800) + ipv4(udp(pay), proto=17, frag=0x2000),           # fragment
        eth(0x0800) + ipv4(tcp(5, 0x10, pay, good_csum=False)),        # bad TCP checksum
        eth(0x0800) + ipv4(tcp(5, 0x3F, pay)),                         # every flag
        eth(0x0800) + ipv4(tcp(5, 0x10, b"", b"\x02\x04\x05\xb4")),    # no payload
        eth(0x0800) + ipv4(b"", proto=6),                              # no TCP header
        eth(0x0800) + b"\x45",                                         # one byte of IP
        eth(0x0800, vlan=5) + ipv4(udp(pay), proto=17),                # VLAN
        eth(0x8100) + b"",                                             # VLAN tag cut
        eth(0x86DD) + struct.pack("!IHBB", 6 << 28, 1000, 6, 64) + bytes(32),  # v6 length lie
        eth(0x86DD) + struct.pack("!IHBB", 4 << 28, 8, 17, 64) + bytes(40),    # v6 bad version
        eth(0x0806) + bytes(28),                                       # ARP
        eth(0x0800),                                                   # Ethernet header only
        eth(0x0800) + ipv4(udp(pay), proto=17, ihl=15),                # IHL past the end
        eth(0x0800) + ipv4(udp(pay), proto=17, options=b"\x44\x08\x05\x00" * 10),  # options
    ]
    rng.shuffle(frames)
    return frames


def jump_dag(n):
    """An iptables-save file of n user chains, INPUT jumping to the first
    and each chain to every later one: no loop (iptables-restore takes
    it), but a packet that takes every jump walks 2^n rules."""
    lines = ["*filter", ":INPUT ACCEPT [0:0]"]
    lines += [":c%d - [0:0]" % i for i in range(n)]
    lines.append("-A INPUT -j c0")
    lines += ["-A c%d -j c%d" % (i, j) for i in range(n) for j in range(i + 1, n)]
    return ("\n".join(lines + ["COMMIT"]) + "\n").encode()


def udp_to_ports(ports, dst=0x0A000002):
    """One UDP datagram to each port of ports, in turn (socket queues)."""
    return [eth(0x0800) + ipv4(udp(b"q" * 32, sport=4000, dport=p), proto=17, dst=dst)
            for p in ports]


def first_fragments(n):
    """n IPv4 first fragments (MF set, offset 0) of n datagrams that never
    complete: reassembly holds each until ipfrag_time."""
    return [eth(0x0800) + ipv4(udp(b"f" * 1000, dport=7), proto=17, ident=i & 0xFFFF,
                               frag=0x2000, src=0x0A000100 + (i >> 16))
            for i in range(n)]


def land_frames():
    """Frames from the host's own address 10.0.0.2 (LAND, J4): an echo
    request, a SYN to a listening port (2000), UDP to a closed port, UDP to
    the limited and the directed broadcast. Each one answered would be a
    reply to the host itself."""
    me = 0x0A000002
    echo = struct.pack("!BBHHH", 8, 0, 0, 1, 1) + b"e" * 32
    echo = echo[:2] + struct.pack("!H", csum(echo)) + echo[4:]
    bcast = b"\xff" * 6 + eth(0x0800)[6:]
    return [eth(0x0800) + ipv4(echo, proto=1, src=me),
            eth(0x0800) + ipv4(tcp(1, flags=0x02, src=me), src=me),
            eth(0x0800) + ipv4(udp(b"u" * 18, dport=3000), proto=17, src=me),
            bcast + ipv4(udp(b"b" * 18, dport=3000), proto=17, src=me, dst=0xFFFFFFFF),
            bcast + ipv4(udp(b"d" * 18, dport=3000), proto=17, src=me, dst=0x0A0000FF)]


def spoofed_frames():
    """Frames from sources the reverse path filter refuses (J4 with
    rp_filter=1 and a route to 10.9.0.0/24 by port 1; they come in on port
    0): from 10.9.0.5 (a route back by another port) and 10.7.0.5 (no
    route back), an echo request, a SYN to a listening port (2000) and UDP
    to a closed port each. Answered, each would be a reply to a spoofed
    address."""
    frames = []
    for src in (0x0A090005, 0x0A070005):
        echo = struct.pack("!BBHHH", 8, 0, 0, 1, 1) + b"e" * 32
        echo = echo[:2] + struct.pack("!H", csum(echo)) + echo[4:]
        frames += [eth(0x0800) + ipv4(echo, proto=1, src=src),
                   eth(0x0800) + ipv4(tcp(1, flags=0x02, src=src), src=src),
                   eth(0x0800) + ipv4(udp(b"u" * 18, dport=3000), proto=17, src=src)]
    return frames


def write(path, data):
    Path(path).write_bytes(data)


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    frames = adversarial_frames()
    write(out / "adversarial.pcap", pcap_header() + b"".join(record(f) for f in frames))
    write(out / "bad_magic.pcap", b"\x0a\x0d\x0d\x0a" + bytes(20))
    write(out / "short_header.pcap", pcap_header()[:10])
    write(out / "not_ethernet.pcap", pcap_header(linktype=113) + record(frames[0]))
    write(out / "no_packets.pcap", pcap_header())
    write(out / "truncated_record.pcap", pcap_header() + record(frames[0])[:40])
    write(out / "huge_caplen.pcap",
          pcap_header() + record(frames[0], caplen=0xFFFFFFF0, length=0xFFFFFFF0))
    write(out / "zero_caplen.pcap", pcap_header() + record(b"") + record(frames[0]))
    write(out / "big_endian.pcap",
          pcap_header(order=">") + b"".join(
              struct.pack(">IIII", 0, 0, len(f), len(f)) + f for f in frames[:50]))

    # hardening round 3: a netfilter jump graph of 40 chains (J1), an
    # empty rule file (J8), datagrams for 20 sockets (J3), a capture with
    # records cut short by its snap length (J14)
    write(out / "jump_dag.rules", jump_dag(40))
    write(out / "empty.rules", b"")
    write(out / "sockets.pcap", pcap_header() + b"".join(
        record(f) for f in udp_to_ports(range(5001, 5021))))
    write(out / "first_fragments.pcap", pcap_header() + b"".join(
        record(f) for f in first_fragments(2000)))
    write(out / "land.pcap", pcap_header() + b"".join(record(f) for f in land_frames()))
    write(out / "spoofed.pcap", pcap_header() + b"".join(record(f) for f in spoofed_frames()))
    write(out / "snaplen.pcap", pcap_header() + b"".join(
        record(f[:60], length=len(f)) if i % 4 == 0 else record(f)
        for i, f in enumerate(frames[:40])))

    write(out / "dup_key.ini", b"[pipeline]\nburst = 32\nengine = burst\nburst = 64\n")
    write(out / "dup_section.ini", b"[run]\nduration = 1\n[pipeline]\nburst = 8\n[run]\npackets = 5\n")
    write(out / "nul.ini", b"[pipeline]\nburst = 32\0garbage\n")
    write(out / "big.ini", b"[run]\n" + b"; padding\n" * 110000)
    write(out / "no_section.ini", b"burst = 32\n")
    write(out / "binary.ini", bytes(range(1, 256)) * 4)
    write(out / "long_value.ini", b"[pipeline]\nstages = " + b"gro," * 200 + b"gro\n")
    write(out / "bad_value.ini", b"[pipeline]\n\nburst = 9999\n")
    write(out / "ok.ini", b"[run]\npackets = 1000\nstats_period = 0\n")


if __name__ == "__main__":
    main()
