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
#                  [--duration S] [--reps N] [--calibrate N] [--budget S]
#                  [--mem MB] [--main-cpu CPU]
#
# DIR/host/ gets the machine (lscpu if there is one, and the same from /sys
# and /proc without it: sockets, cores, SMT siblings, NUMA nodes, caches, CPU
# MHz before and after; mitigations), DIR/plan the CPUs each lcore count
# uses, DIR/runs/ every run's JSON summary, log and /proc/stat CPU lines
# before and after, DIR/runs.tsv one line per run (rep, lcores, engine, exit
# status, load) and DIR/calibration.tsv one per calibration run: each CPU the
# curve uses, alone (one polling lcore there), so that a count's rate can be
# held against the sum of its CPUs' own rates.
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
  --calibrate N    passes over the CPUs the curve uses, each CPU alone (one
                   polling lcore pinned there, every pipeline, --duration);
                   pass k runs after rep k; 0 = none (default: 1 when a
                   count is above 1, else 0)
  --budget S       start no run that would end past S seconds from the start,
                   by the longest run so far (default: 540)
  --mem MB         EAL -m (default: 2048)
  --main-cpu CPU   the main lcore's CPU (the monitor, awake every 2 ms); one of the
                   polling CPUs too when it is one of them, so that a 2-CPU host
                   runs 2 polling lcores, the first sharing its CPU with the monitor
                   (default: the last CPU of the order, which then polls nothing)
EOF
}

out= listrx=build/dataplane/listrx config= lcores= engines=packet,burst
pipeline=xdp,build-meta,gro,l3-demux profile=udp-flows,flows=4096 burst=64
duration=2 reps=3 budget=540 mem=2048 calibrate= main_arg=
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=$2 ;; --listrx) listrx=$2 ;; --config) config=$2 ;;
	--lcores) lcores=$2 ;; --engines) engines=$2 ;; --pipeline) pipeline=$2 ;;
	--profile) profile=$2 ;; --burst) burst=$2 ;; --duration) duration=$2 ;;
	--reps) reps=$2 ;; --budget) budget=$2 ;; --mem) mem=$2 ;;
	--calibrate) calibrate=$2 ;; --main-cpu) main_arg=$2 ;;
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
case $calibrate in *[!0-9]*) echo "scale.sh: --calibrate $calibrate: want a number of passes >= 0" >&2; exit 2 ;; esac

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

sys=/sys/devices/system/cpu
# a CPU's physical core ("package:core") and NUMA node, from sysfs
core_key() {
	local t=$sys/cpu$1/topology
	echo "$(cat "$t/physical_package_id" 2>/dev/null || echo 0):$(cat "$t/core_id" 2>/dev/null || echo "$1")"
}
cpu_node() {
	local d
	for d in "$sys/cpu$1"/node[0-9]*; do
		[ -e "$d" ] && { echo "${d##*node}"; return; }
	done
	echo -
}
# "cpu cpuinfo-MHz cpufreq-MHz" per CPU ("-" where the kernel has none: a
# guest without cpufreq shows its TSC rate in /proc/cpuinfo)
cpu_mhz() {
	local c m f
	awk -F: '/^processor/ {p = $2 + 0} /^cpu MHz/ {print p, $2 + 0}' /proc/cpuinfo |
		while read -r c m; do
			f=-
			[ -r "$sys/cpu$c/cpufreq/scaling_cur_freq" ] &&
				f=$(($(cat "$sys/cpu$c/cpufreq/scaling_cur_freq") / 1000))
			echo "$c $m $f"
		done
}

# The CPUs this process may use, physical cores first: the first thread of
# each core in CPU order, then the second threads (SMT siblings), so that
# n lcores use n cores while n <= the cores. The main lcore (the monitor,
# mostly asleep) takes the last CPU of that order.
allowed=$(expand "$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)")
[ -n "$allowed" ] || allowed=$(expand "$(cat $sys/online)")
declare -A key_of
first= second= seen=" "
for c in $allowed; do
	key=$(core_key "$c")
	key_of[$c]=$key
	case $seen in *" $key "*) second="$second $c" ;; *) first="$first $c"; seen="$seen$key " ;; esac
done
order=($first $second)
ncpu=${#order[@]}
main_cpu=${order[$((ncpu - 1))]}
max_lcores=$((ncpu - 1))
main_shares=no
if [ -n "$main_arg" ]; then
	case " ${order[*]} " in
	*" $main_arg "*) ;;
	*) echo "scale.sh: --main-cpu $main_arg: not a CPU this process may use (${order[*]})" >&2; exit 2 ;;
	esac
	# the polling lcores take the order from its start; the main lcore
	# shares the CPU of the one it lands on
	main_cpu=$main_arg max_lcores=$ncpu main_shares=yes
fi
if [ "$max_lcores" -lt 1 ]; then
	echo "scale.sh: this process may use one CPU (${order[*]}): the main lcore and a polling lcore need two" >&2
	exit 2
fi
if [ -z "$lcores" ]; then
	lcores=$(seq 1 "$max_lcores" | tr '\n' ' ')
else
	lcores=$(expand "$lcores")
fi
top=0
for n in $lcores; do
	case $n in ''|*[!0-9]*|0) echo "scale.sh: --lcores: '$n' is not a count >= 1" >&2; exit 2 ;; esac
	if [ "$n" -gt "$max_lcores" ]; then
		echo "scale.sh: --lcores $n: this process may use $ncpu CPUs (${order[*]}); one is the main lcore's, so at most $max_lcores polling lcores (--main-cpu CPU: the main lcore beside a polling one)" >&2
		exit 2
	fi
	if [ "$n" -gt 64 ]; then
		echo "scale.sh: --lcores $n: net_synth has at most 64 RX queues" >&2
		exit 2
	fi
	[ "$n" -gt "$top" ] && top=$n
done
if [ "$max_lcores" -lt 2 ]; then
	echo "scale.sh: this process may use $ncpu CPUs (${order[*]}); one is the main lcore's, so one polling lcore: no scaling curve on this host (--main-cpu CPU puts the main lcore beside a polling one)" >&2
fi
[ -n "$calibrate" ] || calibrate=$((top > 1 ? 1 : 0))
cal_cpus=("${order[@]:0:top}")

# polling CPUs of a count that share a physical core: "a+b ..."
smt_pairs() {
	local i j out=
	for ((i = 0; i < $1; i++)); do
		for ((j = i + 1; j < $1; j++)); do
			[ "${key_of[${order[i]}]}" = "${key_of[${order[j]}]}" ] &&
				out="$out ${order[i]}+${order[j]}"
		done
	done
	echo "${out# }"
}

engine_list="none ${engines//,/ }"
n_engines=$(echo $engine_list | wc -w)
n_curve=$(($(echo $lcores | wc -w) * n_engines * reps))
n_cal=$((${#cal_cpus[@]} * n_engines * calibrate))
mkdir -p "$out/host" "$out/runs" || exit 1
{
	echo "cpus_allowed ${allowed% }"
	echo "order ${order[*]}"
	echo "main_cpu $main_cpu"
	echo "main_shares $main_shares"
	echo "max_lcores $max_lcores"
	echo "lcores $lcores"
	echo "engines ${engine_list// /,}"
	echo "pipeline $pipeline"
	echo "profile $profile"
	echo "burst $burst"
	echo "duration $duration"
	echo "reps $reps"
	echo "calibrate $calibrate"
	echo "calibration_cpus ${cal_cpus[*]}"
	echo "runs_planned $n_curve $n_cal"
	echo "budget $budget"
	for n in $lcores; do
		pairs=$(smt_pairs "$n")
		[ -n "$pairs" ] && echo "smt $n $pairs"
	done
} >"$out/plan"
# SMT siblings share a core's execution units and L1/L2: such a count
# measures the machine's SMT as much as the dataplane
grep '^smt ' "$out/plan" | while read -r _ n pairs; do
	echo "scale.sh: warning: at $n lcores, polling lcores share physical cores (SMT siblings: $pairs)" >&2
done

# the machine, for the report: what a reader needs to judge the curve;
# lscpu may be missing (a bare machine), so the same from /sys and /proc
(lscpu >"$out/host/lscpu" 2>&1) || true
uname -a >"$out/host/uname" 2>&1
nproc >"$out/host/nproc" 2>&1 || true
grep -m1 "model name" /proc/cpuinfo >"$out/host/model" 2>&1 || true
for c in $allowed; do
	t=$sys/cpu$c/topology
	echo "$c $(cat $t/physical_package_id 2>/dev/null || echo -) $(cat $t/core_id 2>/dev/null || echo -) $(cat $t/thread_siblings_list 2>/dev/null || echo -) $(cpu_node "$c")"
done >"$out/host/topology"
{
	echo "model $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	echo "online $(cat $sys/online 2>/dev/null)"
	if grep -qw hypervisor /proc/cpuinfo; then echo "hypervisor yes"; else echo "hypervisor no"; fi
	declare -A per_core=() sockets=()
	for c in $(expand "$(cat $sys/online 2>/dev/null || echo 0)"); do
		k=$(core_key "$c")
		per_core[$k]=$((${per_core[$k]:-0} + 1))
		sockets[${k%%:*}]=1
	done
	tpc=0
	for k in "${!per_core[@]}"; do [ "${per_core[$k]}" -gt "$tpc" ] && tpc=${per_core[$k]}; done
	echo "sockets ${#sockets[@]}"
	echo "cores ${#per_core[@]}"
	echo "threads_per_core $tpc"
	echo "smt_control $(cat $sys/smt/control 2>/dev/null || echo -)"
	for d in /sys/devices/system/node/node[0-9]*; do
		[ -r "$d/cpulist" ] && echo "numa_node ${d##*node} $(cat "$d/cpulist")"
	done
	for d in "$sys/cpu${order[0]}"/cache/index[0-9]*; do
		[ -r "$d/level" ] || continue
		case $(cat "$d/type") in Data) ty=d ;; Instruction) ty=i ;; *) ty= ;; esac
		echo "cache L$(cat "$d/level")$ty $(cat "$d/size" 2>/dev/null) shared_with $(cat "$d/shared_cpu_list" 2>/dev/null)"
	done
	echo "cpufreq_driver $(cat "$sys/cpu${order[0]}/cpufreq/scaling_driver" 2>/dev/null || echo -)"
	echo "cpufreq_governor $(cat "$sys/cpu${order[0]}/cpufreq/scaling_governor" 2>/dev/null || echo -)"
	echo "no_turbo $(cat $sys/intel_pstate/no_turbo 2>/dev/null || cat $sys/cpufreq/boost 2>/dev/null || echo -)"
} >"$out/host/cpus"
cpu_mhz >"$out/host/mhz_before"
(cd $sys/vulnerabilities 2>/dev/null && grep -H . * >"$out/host/vulnerabilities" 2>&1) || true
cat /proc/loadavg >"$out/host/loadavg_before"
# shellcheck disable=SC2086
$listrx -- --version >"$out/host/listrx_version" 2>&1 || true
# the command (listrx-bench scale records it beside the commit --version names)
echo "$listrx" >"$out/host/listrx_command"

# One listrx run: $1 name, $2 the --lcores map, $3 RX queues, $4 engine
# (none = the empty pipeline). Sets rc, secs and mpps; runs/NAME.stat gets
# the CPUs' /proc/stat lines before and after (steal, interrupts, others'
# load on the polling CPUs during the run).
run_listrx() {
	local name=$1 map=$2 n=$3 engine=$4 t0 t1
	local stages=$pipeline eng=$engine
	[ "$engine" = none ] && stages=none eng=burst
	local cfg=()
	[ -n "$config" ] && cfg=(--config "$config")
	grep '^cpu[0-9]' /proc/stat >"$out/runs/$name.stat"
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
	{ echo --; grep '^cpu[0-9]' /proc/stat; } >>"$out/runs/$name.stat"
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}')
	local s=$(awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%d", b - a + 1}')
	[ "$s" -gt "$longest_s" ] && longest_s=$s
	mpps=$(sed -n 's/.*"mpps": \([0-9.]*\).*/\1/p' "$out/runs/$name.json" 2>/dev/null | head -1)
	n_done=$((n_done + 1))
	if [ "$n_done" -eq 1 ]; then
		echo "scale.sh: $((n_curve + n_cal)) runs planned ($n_curve on the curve, $n_cal calibrating ${#cal_cpus[@]} CPU(s) x $n_engines pipeline(s) x $calibrate pass(es)); the first took $secs s: about $(awk -v n=$((n_curve + n_cal)) -v s="$secs" 'BEGIN {printf "%d", n * s + 0.5}') s in all (--budget $budget s)" >&2
	fi
}

# One run of the curve: $1 rep, $2 lcores, $3 engine.
run_one() {
	local rep=$1 n=$2 engine=$3 map="0@$main_cpu" i name
	for ((i = 1; i <= n; i++)); do map="$map,$i@${order[$((i - 1))]}"; done
	name=n$n-$engine-r$rep
	run_listrx "$name" "$map" "$n" "$engine"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$n" "$engine" "$rc" \
		"$(cut -d' ' -f1 /proc/loadavg)" "$secs" "runs/$name.json" >>"$out/runs.tsv"
	echo "scale.sh: rep $rep, $n lcore(s), ${engine}: exit $rc, $mpps Mpps" >&2
}

# One calibration run: $1 pass, $2 CPU, $3 engine; one polling lcore
# there, alone, the same queue and settings as the curve's one lcore.
calibrate_one() {
	local pass=$1 cpu=$2 engine=$3 name=c$2-$3-p$1
	run_listrx "$name" "0@$main_cpu,1@$cpu" 1 "$engine"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$pass" "$cpu" "$engine" "$rc" \
		"$(cut -d' ' -f1 /proc/loadavg)" "$secs" "runs/$name.json" >>"$out/calibration.tsv"
	echo "scale.sh: calibration pass $pass, CPU $cpu alone, ${engine}: exit $rc, $mpps Mpps" >&2
}

# false once the next run would end past the budget (by the longest so far)
within_budget() {
	[ $(($(date +%s) - start + longest_s)) -le "$budget" ] && return 0
	stopped="budget of $budget s reached in $1"
	return 1
}

printf 'rep\tlcores\tengine\tstatus\tload1\tseconds\tjson\n' >"$out/runs.tsv"
printf 'pass\tcpu\tengine\tstatus\tload1\tseconds\tjson\n' >"$out/calibration.tsv"
start=$(date +%s)
longest_s=0 n_done=0
stopped=
rounds=$((reps > calibrate ? reps : calibrate))
# Every pipeline at each of $3 (lcore counts, or CPUs alone) with $1 (run_one,
# calibrate_one), round $2 ($4 names it): in the given order on odd rounds,
# reversed on even ones, so that a drift in the host's speed does not line
# up with the count or the CPU. False once the budget stops it.
sweep() {
	local fn=$1 k=$2 list=$3 x engine
	[ $((k % 2)) -eq 0 ] && list=$(echo $list | tr ' ' '\n' | tac | tr '\n' ' ')
	for x in $list; do
		for engine in $engine_list; do
			within_budget "$4 $k" || return 1
			$fn "$k" "$x" "$engine"
		done
	done
}

# calibration pass k after the curve's rep k: the CPUs' own rates are taken
# amid the curve's
for ((k = 1; k <= rounds; k++)); do
	if [ "$k" -le "$reps" ]; then
		sweep run_one "$k" "$lcores" rep || break
	fi
	if [ "$k" -le "$calibrate" ]; then
		sweep calibrate_one "$k" "${cal_cpus[*]}" "calibration pass" || break
	fi
done
cat /proc/loadavg >"$out/host/loadavg_after"
cpu_mhz >"$out/host/mhz_after"
elapsed=$(($(date +%s) - start))
echo "elapsed $elapsed" >>"$out/plan"
echo "stopped ${stopped:-complete}" >>"$out/plan"
echo "scale.sh: $(($(wc -l <"$out/runs.tsv") - 1)) curve and $(($(wc -l <"$out/calibration.tsv") - 1)) calibration runs in $elapsed s${stopped:+ ($stopped)}; results in $out" >&2
