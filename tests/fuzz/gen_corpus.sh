#!/usr/bin/env bash
# Regenerates the checked-in seed corpora (tests/fuzz/corpus/<harness>):
#   frames (pipeline, gro,  gen_corpus, from tests/support/frames (the
#   pcap)                   NIC's traffic kinds and malformed-frame table)
#   config                  conf/*.ini and variants of them with overrides
#   bpf_elf, bpf_verify     the shipped XDP objects (stages/xdp/progs),
#                           built in BUILD_DIR (gen_bpf_seeds), non-ELF and
#                           truncated files, libbpf's crash object
# usage: tests/fuzz/gen_corpus.sh BUILD_DIR   (a -Dfuzz=true clang build)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: gen_corpus.sh BUILD_DIR}" && pwd)
out=$root/tests/fuzz/corpus
ninja -C "$build" tests/fuzz/gen_corpus tests/fuzz/gen_bpf_seeds >/dev/null
keep=$(mktemp -d)
trap 'rm -rf "$keep"' EXIT
# the checked-in object libbpf crashes on is not generated: keep it
cp "$out/bpf_elf/libbpf_open_segv" "$keep/"
rm -rf "$out"
mkdir -p "$out"/{pipeline,gro,config,bpf_elf,bpf_verify,pcap}
"$build/tests/fuzz/gen_corpus" "$out"

# config: the shipped configs, then text + NUL + overrides (--set form)
for f in "$root"/conf/*.ini; do cp "$f" "$out/config/$(basename "$f")"; done
cat > "$out/config/ports_lcores.ini" <<'INI'
[eal]
args = --no-huge --no-pci --vdev net_null0 --vdev net_null1
[run]
duration = 1.5
packets = 1000
json = /tmp/x.json
[pipeline]
engine = hybrid:2
burst = 32
stages = build-meta, gro, l3-demux, xdp
stats_level = cycles
[stage.gro]
max_size = 32768
[stage.xdp]
prog = udp-port-drop:53,2000
mode = generic
[mempool]
mbufs = 4096
cache = 0
[port.0]
device = net_null0
rx_queues = 2
tx_queues = 2
rx_desc = 512
offloads = rss,rx-cksum
forward = 1
[port.1]
device = net_null1
[lcore.1]
poll = 0:0, 0:1
[telemetry]
enabled = no
INI
printf '[pipeline]\nstages = touch\n\0pipeline.burst=512\nrun.duration=2\nstage.touch.bytes=128\n' \
	> "$out/config/overrides"
printf '[pipeline]\nburst = 0\n' > "$out/config/bad_burst"
printf '[port.0\ndevice=\n=x\n[lcore.99]\npoll = 9:9\n' > "$out/config/broken"

# bpf_elf, bpf_verify: a section/flags byte, the map records libbpf reads,
# then the object (bpf_elf) or its instructions (bpf_verify)
"$build/tests/fuzz/gen_bpf_seeds" "$out" "$build"/stages/xdp/*.bpf.o
printf '\0\177ELF\2\1\1' > "$out/bpf_elf/truncated_elf"
printf '\0not an object' > "$out/bpf_elf/not_elf"
cp "$keep/libbpf_open_segv" "$out/bpf_elf/"
# a program without exit (rte_bpf_load crashed on it; the loader refuses it)
printf '\0\0\267\4\0\0\0\0\0\0\0\0' > "$out/bpf_verify/no_exit"
du -sh "$out"
