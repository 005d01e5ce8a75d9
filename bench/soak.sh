#!/usr/bin/env bash
# Soak (docs/reliability.md): listrx at full rate for a long time
# with the emulated NIC's mixed profile (IPv4/IPv6/ARP/VLAN and a
# malformed share) on two polling lcores, one RX queue each, through the
# full pipeline (every product stage the binary has: xdp, build-meta, gro,
# l3-demux). RSS is sampled every second from /proc/<pid>/status. Passes
# when: exit status 0, memory flat (RSS after warm-up grows by at most
# --rss-slack-kb), counters consistent (rx = delivered + dropped + tx +
# held), every mbuf back in its pool at exit.
#
#   bench/soak.sh                     10 minutes (the reliability soak)
#   bench/soak.sh --duration 30       the CI version (meson test soak-30s)
# Options: --duration S, --listrx PATH (default build/dataplane/listrx or
# $LISTRX_BIN), --out DIR (RSS samples, summary JSON, log; default a
# temporary directory), --rss-slack-kb N (default 4096).
set -euo pipefail

duration=600
listrx=${LISTRX_BIN:-}
out=
slack_kb=4096
while [ $# -gt 0 ]; do
	case $1 in
	--duration) duration=$2; shift 2 ;;
	--listrx) listrx=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--rss-slack-kb) slack_kb=$2; shift 2 ;;
	-h|--help) sed -n '2,18p' "$0"; exit 0 ;;
	*) echo "soak.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
[ -n "$listrx" ] || listrx=$root/build/dataplane/listrx
if [ ! -x "$listrx" ]; then
	echo "soak.sh: no listrx binary at $listrx (build first, or --listrx PATH)" >&2
	exit 2
fi
[ -n "$out" ] || out=$(mktemp -d /tmp/listrx-soak.XXXXXX)
mkdir -p "$out"

# the full pipeline: the product stages this binary has, in kernel order
have=$("$listrx" -- --list-stages | awk '/^[a-z]/ {print $1}')
stages=()
for s in xdp build-meta gro l3-demux; do
	if grep -qx "$s" <<<"$have"; then stages+=("$s"); fi
done
pipeline=$(IFS=,; echo "${stages[*]}")
if [ -z "$pipeline" ]; then pipeline=touch; fi
vdev=net_synth0,profile=mixed,rxq=2,flows=64,ipv6_share=0.2,arp_share=0.02,vlan_share=0.1,malformed_share=0.05

conf=$out/soak.ini
cat > "$conf" <<INI
[pipeline]
engine = burst
burst = 64
stages = $pipeline
[stage.xdp]
prog = pass
[port.0]
device = net_synth0
rx_queues = 2
tx_queues = 2
[lcore.0]
poll = 0:0
[lcore.1]
poll = 0:1
[telemetry]
enabled = no
INI

echo "soak: ${duration}s, pipeline $pipeline, $vdev, two lcores; output in $out"
# lcores 0 and 1 on the first two CPUs this shell may use (a container or
# taskset may leave out CPU 0; with one CPU both share it)
lcores=$(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print("0@%d,1@%d" % (c[0], c[min(1, len(c) - 1)]))')
"$listrx" --lcores "$lcores" --no-huge --no-pci --no-shconf -m 1024 --file-prefix "soak$$" \
	--vdev "$vdev" -- --config "$conf" --duration "$duration" \
	--stats-period 10 --json "$out/summary.json" > "$out/listrx.log" 2>&1 &
pid=$!
: > "$out/rss.tsv"
t=0
while kill -0 "$pid" 2>/dev/null; do
	rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
	[ -n "$rss" ] && printf '%s\t%s\n' "$t" "$rss" >> "$out/rss.tsv"
	sleep 1
	t=$((t + 1))
done
status=0
wait "$pid" || status=$?
cat "$out/listrx.log" | tail -n 40

python3 - "$out" "$status" "$duration" "$slack_kb" <<'PY'
import json, sys
out, status, duration, slack = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
fail = []
if status != 0:
    fail.append(f"listrx exit status {status} (see {out}/listrx.log)")
samples = [tuple(map(int, l.split())) for l in open(f"{out}/rss.tsv") if l.strip()]
# warm-up: the first 10% (at least 5 s): pools, rings, page faults of the
# first passes over the metadata ring and GRO tables
warm = max(5, int(duration * 0.1))
steady = [kb for t, kb in samples if t >= warm]
if len(steady) < 3:
    fail.append(f"too few RSS samples after warm-up ({len(steady)})")
else:
    base, peak, last = steady[0], max(steady), steady[-1]
    print(f"soak: RSS after warm-up {base} kB, peak {peak} kB, last {last} kB "
          f"({len(samples)} samples, slack {slack} kB)")
    if peak - base > slack:
        fail.append(f"RSS grew {peak - base} kB after warm-up (> {slack} kB)")
try:
    s = json.load(open(f"{out}/summary.json"))
except (OSError, ValueError) as e:
    s = None
    fail.append(f"no JSON summary: {e}")
if s:
    rx, parts = s["rx_packets"] + s.get("made", 0), s["delivered"] + s["dropped"] + s["tx_packets"] + s["merged_segments"] + s["held"]
    print(f"soak: rx {rx} delivered {s['delivered']} dropped {s['dropped']} "
          f"tx {s['tx_packets']} held {s['held']} mbufs in use at exit "
          f"{s['mbufs_in_use_at_exit']} drops {s.get('drops')}")
    if rx != parts:
        fail.append(f"counters inconsistent: rx {rx} != delivered+dropped+tx+merged+held {parts}")
    if rx == 0:
        fail.append("nothing received")
    if s["mbufs_in_use_at_exit"] != 0:
        fail.append(f"{s['mbufs_in_use_at_exit']} mbufs not back in the pool at exit")
    if s["delivered"] == 0:
        fail.append("nothing delivered: the pipeline dropped everything")
    if s["dropped"] == 0:
        fail.append("no drops: the mixed profile's malformed share did not reach the stages")
    lc = s.get("lcores", [])
    if len(lc) != 2 or any(l["packets"] == 0 for l in lc):
        fail.append(f"expected two lcores both receiving: {lc}")
for f in fail:
    print("soak: FAIL:", f)
if not fail:
    print("soak: PASS")
sys.exit(1 if fail else 0)
PY
