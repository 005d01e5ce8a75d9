#!/usr/bin/env bash
# scale.sh: listrx's receive rate over 1..N polling lcores, one RX queue per
# lcore (net_synth RSS), for the empty pipeline (the emulated NIC's own cost:
# rx_burst and the free) and each engine on the pipeline. It needs bash and
# coreutils only (no Python), so that a many-core machine without DPDK runs
# it with the binaries of ../shared/tools/portable-bundle; `listrx-bench
# scale --from DIR` turns DIR into the report (docs/measuring.md, "Scaling").
#
#   bench/scale.sh --out DIR [--listrx CMD] [--config FILE] [--lcores LIST]
#                  [--engines LIST] [--pipeline P] [--profile P] [--burst B]
#                  [--duration S] [--reps N] [--budget S] [--mem MB]
#
# DIR/host/ gets the machine (lscpu, CPU topology, mitigations), DIR/plan the
# CPUs each lcore count uses, DIR/runs/ every run's JSON summary and log, and
# DIR/runs.tsv one line per run (rep, lcores, engine, exit status, load).
set -u

usage() {
	cat <<'EOF'
usage: scale.sh --out DIR [options]
  --out DIR        where host/, plan, runs/ and runs.tsv are written (created)
  --listrx CMD     the command that runs listrx (default: build/dataplane/listrx;
                   a bundle: "BUNDLE/run listrx")
  --config FILE    listrx --config (a bundle: BUNDLE/conf/default.ini)
  --lcores LIST    polling lcore counts, e.g. 1,2,4,8 or 1-15 (default: 1 to the
                   CPUs this process may use minus one, the main lcore's)
  --engines LIST   engines on the pipeline (default: packet,burst); the empty
                   pipeline runs besides, on the same queues
  --pipeline P     stage list (default: xdp,build-meta,gro,l3-demux)
  --profile P      net_synth profile and devargs (default: udp-flows,flows=4096)
  --burst B        packets per poll (default: 64)
  --duration S     seconds per run (default: 2)
  --reps N         repetitions of the whole curve, alternating (default: 3)
  --budget S       start no run that would end past S seconds from the start,
                   by the longest run so far (default: 540)
  --mem MB         EAL -m (default: 2048)
EOF
}

out= listrx=build/dataplane/listrx config= lcores= engines=packet,burst
pipeline=xdp,build-meta,gro,l3-demux profile=udp-flows,flows=4096 burst=64
duration=2 reps=3 budget=540 mem=2048
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2 ;; --listrx) listrx=$2 ;; --config) config=$2 ;;
	--lcores) lcores=$2 ;; --engines) engines=$2 ;; --pipeline) pipeline=$2 ;;
	--profile) profile=$2 ;; --burst) burst=$2 ;; --duration) duration=$2 ;;
	--reps) reps=$2 ;; --budget) budget=$2 ;; --mem) mem=$2 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "scale.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
	[ $# -ge 2 ] || { echo "scale.sh: $1 needs a value (see --help)" >&2; exit 2; }
	shift 2
done
[ -n "$out" ] || { echo "scale.sh: --out DIR is required (see --help)" >&2; exit 2; }
for v in burst reps budget mem; do
	case ${!v} in ''|*[!0-9]*|0) echo "scale.sh: --$v ${!v}: want an integer >= 1" >&2; exit 2 ;; esac
done
case $duration in ''|*[!0-9.]*|.|*.*.*) echo "scale.sh: --duration $duration: want seconds > 0" >&2; exit 2 ;; esac

# "0-3,8,10-11" -> "0 1 2 3 8 10 11"
expand() {
	local part lo hi
	for part in ${1//,/ }; do
		case $part in
		*-*) lo=${part%-*} hi=${part#*-}; seq "$lo" "$hi" ;;
		*) echo "$part" ;;
		esac
	done | tr '\n' ' '
}

# The CPUs this process may use, physical cores first: the first thread of
# each core in CPU order, then the second threads (SMT siblings), so that
# n lcores use n cores while n <= the cores. The main lcore (the monitor,
# mostly asleep) takes the last CPU of that order.
allowed=$(expand "$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)")
[ -n "$allowed" ] || allowed=$(expand "$(cat /sys/devices/system/cpu/online)")
first= second= seen=" "
for c in $allowed; do
	t=/sys/devices/system/cpu/cpu$c/topology
	key="$(cat $t/physical_package_id 2>/dev/null || echo 0):$(cat $t/core_id 2>/dev/null || echo $c)"
	case $seen in *" $key "*) second="$second $c" ;; *) first="$first $c"; seen="$seen$key " ;; esac
done
order=($first $second)
ncpu=${#order[@]}
main_cpu=${order[$((ncpu - 1))]}
max_lcores=$((ncpu - 1))
if [ "$max_lcores" -lt 1 ]; then
	echo "scale.sh: this process may use one CPU (${order[*]}): the main lcore and a polling lcore need two" >&2
	exit 2
fi
if [ -z "$lcores" ]; then
	lcores=$(seq 1 "$max_lcores" | tr '\n' ' ')
else
	lcores=$(expand "$lcores")
fi
for n in $lcores; do
	case $n in ''|*[!0-9]*|0) echo "scale.sh: --lcores: '$n' is not a count >= 1" >&2; exit 2 ;; esac
	if [ "$n" -gt "$max_lcores" ]; then
		echo "scale.sh: --lcores $n: this process may use $ncpu CPUs (${order[*]}); one is the main lcore's, so at most $max_lcores polling lcores" >&2
		exit 2
	fi
	if [ "$n" -gt 64 ]; then
		echo "scale.sh: --lcores $n: net_synth has at most 64 RX queues" >&2
		exit 2
	fi
done

mkdir -p "$out/host" "$out/runs" || exit 1
{
	echo "cpus_allowed ${allowed% }"
	echo "order ${order[*]}"
	echo "main_cpu $main_cpu"
	echo "max_lcores $max_lcores"
	echo "lcores $lcores"
	echo "engines none,$engines"
	echo "pipeline $pipeline"
	echo "profile $profile"
	echo "burst $burst"
	echo "duration $duration"
	echo "reps $reps"
	echo "budget $budget"
} >"$out/plan"
# the machine, for the report: what a reader needs to judge the curve
(lscpu >"$out/host/lscpu" 2>&1) || true
uname -a >"$out/host/uname" 2>&1
nproc >"$out/host/nproc" 2>&1 || true
grep -m1 "model name" /proc/cpuinfo >"$out/host/model" 2>&1 || true
for c in $allowed; do
	t=/sys/devices/system/cpu/cpu$c/topology
	echo "$c $(cat $t/physical_package_id 2>/dev/null || echo -) $(cat $t/core_id 2>/dev/null || echo -) $(cat $t/thread_siblings_list 2>/dev/null || echo -)"
done >"$out/host/topology"
(cd /sys/devices/system/cpu/vulnerabilities 2>/dev/null && grep -H . * >"$out/host/vulnerabilities" 2>&1) || true
cat /proc/loadavg >"$out/host/loadavg_before"
# shellcheck disable=SC2086
$listrx -- --version >"$out/host/listrx_version" 2>&1 || true

# One run: $1 rep, $2 lcores, $3 engine (none = the empty pipeline).
run_one() {
	local rep=$1 n=$2 engine=$3 map="0@$main_cpu" i name rc t0 t1
	for ((i = 1; i <= n; i++)); do map="$map,$i@${order[$((i - 1))]}"; done
	name=n$n-$engine-r$rep
	local stages=$pipeline eng=$engine
	[ "$engine" = none ] && stages=none eng=burst
	local cfg=()
	[ -n "$config" ] && cfg=(--config "$config")
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	$listrx --lcores "$map" --no-huge --no-pci --no-shconf -m "$mem" \
		--file-prefix "lrxscale$$_$name" \
		--vdev "net_synth0,profile=$profile,copy=0,rxq=$((n > 8 ? n : 8))" -- \
		"${cfg[@]}" --set port.0.device=net_synth0 --set "port.0.rx_queues=$n" \
		--set mempool.mbufs=16383 --pipeline "$stages" --engine "$eng" \
		--burst "$burst" --stats-level off --stats-period 0 --duration "$duration" \
		--json "$out/runs/$name.json" >"$out/runs/$name.log" 2>&1
	rc=$?
	t1=$(date +%s.%N)
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$n" "$engine" "$rc" \
		"$(cut -d' ' -f1 /proc/loadavg)" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')" \
		"runs/$name.json" >>"$out/runs.tsv"
	last_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%d", b - a + 1}')
	[ "$last_s" -gt "$longest_s" ] && longest_s=$last_s
	echo "scale.sh: rep $rep, $n lcore(s), ${engine}: exit $rc, $(sed -n 's/.*"mpps": \([0-9.]*\).*/\1/p' "$out/runs/$name.json" 2>/dev/null | head -1) Mpps" >&2
	return 0
}

printf 'rep\tlcores\tengine\tstatus\tload1\tseconds\tjson\n' >"$out/runs.tsv"
start=$(date +%s)
longest_s=0
stopped=
engine_list="none ${engines//,/ }"
for ((rep = 1; rep <= reps; rep++)); do
	# odd reps climb, even reps descend: a drift in the host's speed does
	# not line up with the lcore count
	list=$lcores
	[ $((rep % 2)) -eq 0 ] && list=$(echo $lcores | tr ' ' '\n' | sort -rn | tr '\n' ' ')
	for n in $list; do
		for engine in $engine_list; do
			if [ $(($(date +%s) - start + longest_s)) -gt "$budget" ]; then
				stopped="budget of $budget s reached in rep $rep"
				break 3
			fi
			run_one "$rep" "$n" "$engine"
		done
	done
done
cat /proc/loadavg >"$out/host/loadavg_after"
echo "elapsed $(($(date +%s) - start))" >>"$out/plan"
echo "stopped ${stopped:-complete}" >>"$out/plan"
echo "scale.sh: $(($(wc -l <"$out/runs.tsv") - 1)) runs in $(($(date +%s) - start)) s${stopped:+ ($stopped)}; results in $out" >&2
