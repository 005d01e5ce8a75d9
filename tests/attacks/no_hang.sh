#!/usr/bin/env bash
# The former hangs, each within 10 s in all and leaving no EAL runtime
# directory. Modes:
#   int    SIGINT as soon as the run handles it: it ends within 2 s with
#          exit 0..2 or 130 (an eBPF object rte_bpf_load never finished, a
#          FIFO as a capture file or as net_synth's tx_pcap, a netfilter
#          jump graph whose first packet walked 2^39 paths)
#   int2   a poll stuck for a minute (net_synth stall_ms), SIGINT, then
#          again 0.3 s later: the second ends it within 2 s, exit 130
#   term2  the same with SIGTERM: exit 143
#   none   no signal: the run ends by itself, exit 0 or 2 (socket queues
#          that no reader drains held the whole pool and --packets never
#          came)
# Called by an attacks.tsv row (env: L, EN, D, B as run_attacks.sh sets
# them; $D/fifo and make_inputs.py's files exist).
set -uo pipefail
rundir=/var/run/dpdk
[ "$(id -u)" = 0 ] || rundir=${XDG_RUNTIME_DIR:-/tmp}/dpdk
socks=$(for p in $(seq 5001 5020); do printf '*:%d,' "$p"; done)
cases=(
	"ebpf-many-branches|int|--vdev net_synth0 -- --xdp-prog $B/tests/xdp/many_branches.bpf.o"
	"capture-drops-fifo|int|--vdev net_synth0 -- --capture-drops $D/fifo"
	"capture-delivered-fifo|int|--vdev net_synth0 -- --capture-delivered $D/fifo"
	"tx-pcap-fifo|int|--vdev net_synth0,tx_pcap=$D/fifo --"
	"netfilter-jump-dag|int|--vdev net_synth0 -- --pipeline build-meta,l3-demux --set stage.l3-demux.netfilter=$D/jump_dag.rules"
	"stuck-poll-sigint-twice|int2|--vdev net_synth0,stall_ms=60000 --"
	"stuck-poll-sigterm-twice|term2|--vdev net_synth0,stall_ms=60000 --"
	"sockets-hold-the-pool|none|--vdev net_synth0,profile=pcap,pcap=$D/sockets.pcap -- --pipeline build-meta,l3-demux --set stage.l3-demux.udp_sockets=${socks%,} --set stage.l3-demux.udp_reader=none --set stage.l3-demux.udp_truesize=832 --packets 20000"
)

# waits until the run (the child of timeout, $1) handles signal $2, or has ended
wait_handler() {
	local child="" cgt
	for _ in $(seq 500); do
		child=$(pgrep -P "$1" | head -1)
		cgt=$(awk '/^SigCgt:/ { print $2 }' "/proc/$child/status" 2>/dev/null)
		[ -n "$cgt" ] && (( (16#$cgt >> ($2 - 1)) & 1 )) && break
		kill -0 "$1" 2>/dev/null || break
		sleep 0.01
	done
	echo "$child"
}

failed=0 n=0
for c in "${cases[@]}"; do
	name=${c%%|*} rest=${c#*|}
	mode=${rest%%|*} args=${rest#*|}
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
	sig="" sent=$start
	case $mode in int|int2) sig=INT ;; term2) sig=TERM ;; esac
	if [ -n "$sig" ]; then
		child=$(wait_handler "$pid" "$(kill -l "$sig")")
		if [ "$mode" != int ]; then
			# the stalled poll has started: the announcement is out
			for _ in $(seq 500); do
				grep -q '^listrx .*port(s)' "$D/nohang.out" && break
				sleep 0.01
			done
			sleep 0.2
			[ -n "$child" ] && kill -s "$sig" "$child" 2>/dev/null
			sleep 0.3
		fi
		sent=$(date +%s.%N)
		[ -n "$child" ] && kill -s "$sig" "$child" 2>/dev/null
	fi
	wait "$pid"
	rc=$?
	end=$(date +%s.%N)
	after=$(awk -v s="$sent" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
	took=$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }')
	why=""
	case $mode:$rc in int:0|int:1|int:2|int:130|int2:130|term2:143|none:0|none:2) ;;
	*) why="exit $rc" ;; esac
	[ -n "$sig" ] && awk -v a="$after" 'BEGIN { exit !(a > 2) }' &&
		why="${why:+$why; }$after s after SIG$sig"
	[ -e "$rundir/$prefix" ] && why="${why:+$why; }runtime directory $rundir/$prefix left" &&
		rm -rf "${rundir:?}/$prefix"
	if [ -n "$why" ]; then
		failed=$((failed + 1))
		echo "no hang: $name: FAIL: $why"
		sed 's/^/     | /' "$D/nohang.out" | tail -5
	elif [ -n "$sig" ]; then
		echo "no hang: $name: exit $rc, ${after} s after SIG$sig, ${took} s in all, no runtime directory left"
	else
		echo "no hang: $name: exit $rc by itself, ${took} s in all, no runtime directory left"
	fi
done
echo "no hang: $((n - failed)) of $n"
[ "$failed" = 0 ]
