#!/usr/bin/env bash
# The former hangs (an eBPF object rte_bpf_load never finished, a FIFO as
# a capture file or as net_synth's tx_pcap): each run gets SIGINT as soon
# as it handles it, and must end within 2 s with exit 0..2 or 130, within
# 10 s in all, leaving no EAL runtime directory. Called by an attacks.tsv
# row (env: L, EN, D, B as run_attacks.sh sets them; $D/fifo exists).
set -uo pipefail
rundir=/var/run/dpdk
[ "$(id -u)" = 0 ] || rundir=${XDG_RUNTIME_DIR:-/tmp}/dpdk
cases=(
	"ebpf-many-branches|--vdev net_synth0 -- --xdp-prog $B/tests/xdp/many_branches.bpf.o"
	"capture-drops-fifo|--vdev net_synth0 -- --capture-drops $D/fifo"
	"capture-delivered-fifo|--vdev net_synth0 -- --capture-delivered $D/fifo"
	"tx-pcap-fifo|--vdev net_synth0,tx_pcap=$D/fifo --"
)
failed=0 n=0
for c in "${cases[@]}"; do
	name=${c%%|*} args=${c#*|}
	if [ "$name" = ebpf-many-branches ] && [ ! -e "$B/tests/xdp/many_branches.bpf.o" ]; then
		echo "no hang: $name: skipped (no clang: the object is not built)"
		continue
	fi
	n=$((n + 1))
	prefix=lrxnohang$$_$n
	start=$(date +%s.%N)
	# shellcheck disable=SC2086
	timeout -k 1 10 "$L" $EN --file-prefix "$prefix" $args --stats-period 0 \
		>"$D/nohang.out" 2>&1 &
	pid=$!
	child=""
	# SIGINT once the run handles it (before main(), the dynamic loader
	# takes tens of ms, and there a signal kills any program)
	for _ in $(seq 500); do
		child=$(pgrep -P "$pid" | head -1)
		cgt=$(awk '/^SigCgt:/ { print $2 }' "/proc/$child/status" 2>/dev/null)
		[ -n "$cgt" ] && (( (16#$cgt >> 1) & 1 )) && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.01
	done
	sent=$(date +%s.%N)
	[ -n "$child" ] && kill -INT "$child" 2>/dev/null
	wait "$pid"
	rc=$?
	end=$(date +%s.%N)
	after=$(awk -v s="$sent" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
	took=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
	why=""
	case $rc in 0|1|2|130) ;; *) why="exit $rc" ;; esac
	awk -v a="$after" 'BEGIN { exit !(a > 2) }' && why="${why:+$why; }$after s after SIGINT"
	[ -e "$rundir/$prefix" ] && why="${why:+$why; }runtime directory $rundir/$prefix left" &&
		rm -rf "${rundir:?}/$prefix"
	if [ -n "$why" ]; then
		failed=$((failed + 1))
		echo "no hang: $name: FAIL: $why"
		sed 's/^/     | /' "$D/nohang.out" | tail -5
	else
		echo "no hang: $name: exit $rc, ${after} s after SIGINT, ${took} s in all, no runtime directory left"
	fi
done
echo "no hang: $((n - failed)) of $n"
[ "$failed" = 0 ]
