#!/usr/bin/env bash
# The attack battery: every row of attacks.tsv is one hostile input to the
# listrx binary with the exit status it must give and a fragment (an
# extended regular expression) its output must contain. Runs in the meson
# suite (so in CI's plain and ASan/UBSan builds); prints the row count and
# the pass count at the end.
#
# usage: run_attacks.sh [ROW-NAME-REGEX]   (env: LISTRX_BIN, LISTRX_SOURCE_ROOT,
#                                            LISTRX_BUILD_ROOT, as meson sets them)
#
# Columns of attacks.tsv (tab-separated; '#' starts a comment line):
#   name     unique, what the attack is (F-number of the hardening table first)
#   status   the exit status wanted
#   fragment ERE that stdout+stderr must match
#   signal   '-' or SIG@SECONDS or SIG@rand: send SIG to the run after that
#            delay (rand: 0..1.2 s, printed so that a failure reproduces)
#   command  a bash command; $L is the binary, $E the EAL options for a quiet
#            net_synth run, $EN the same without a vdev, $D a scratch
#            directory with the inputs of make_inputs.py and a FIFO, $SRC the
#            source tree, $B the build tree; engines_agree ARGS... runs ARGS
#            under every engine; need FILE skips the row (exit 77) when a
#            test input of an optional part (eBPF objects: clang) is absent
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export SRC=${LISTRX_SOURCE_ROOT:-$(cd "$here/../.." && pwd)}
export L=${LISTRX_BIN:?LISTRX_BIN: the listrx binary}
export D
D=$(mktemp -d "${TMPDIR:-/tmp}/listrx-attacks.XXXXXX")
trap 'rm -rf "$D"' EXIT
export EN="--no-huge --no-pci --no-shconf -m 512 --log-level=lib.eal:error"
export E="$EN --vdev net_synth0"
filter=${1:-.}
row_timeout=${ATTACK_TIMEOUT:-90}

python3 "$here/make_inputs.py" "$D" || { echo "make_inputs.py failed"; exit 1; }
mkfifo "$D/fifo" "$D/fifo.o" "$D/fifo.pcap"
cp "$SRC"/tests/fuzz/corpus/bpf_elf/{not_elf,truncated_elf,libbpf_open_segv} "$D/"

# engines_agree ARGS...: the same run (ARGS: EAL options -- listrx options)
# under every engine; the verdicts, drops and stage counters of the JSON
# summaries must be equal. GRO ages by polls (stage.gro.clock=polls) so
# that timing cannot make them differ.
engines_agree() {
	local ref="" first="" e out
	for e in packet burst hybrid:1 hybrid:2 static graph; do
		"$L" "$@" --engine "$e" --stats-period 0 --json "$D/engine.json" \
			>"$D/engine.out" 2>&1 || {
			echo "engine $e: exit $?"; cat "$D/engine.out"; return 1; }
		out=$(python3 - "$D/engine.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
keep = ["rx_packets", "delivered", "dropped", "tx_packets", "held", "drops",
        "mbufs_in_use_at_exit"]
v = {k: s.get(k) for k in keep}
# how a list was walked (sublists, route hints) differs by engine by
# design; what happened to the packets must not
walk = {"l3_sublists", "l4_sublists", "route_hint_hits", "route_lookups"}
v["stages"] = [{k: st.get(k) for k in ("name", "packets", "tx", "redirected",
                                       "consumed", "delivered", "drops")}
               for st in s.get("stages", [])]
for out, st in zip(v["stages"], s.get("stages", [])):
    out["counters"] = {k: c for k, c in st.get("counters", {}).items() if k not in walk}
print(json.dumps(v, sort_keys=True))
PY
) || return 1
		if [ -z "$ref" ]; then
			ref=$out first=$e
		elif [ "$out" != "$ref" ]; then
			echo "engines differ: $first: $ref"
			echo "engines differ: $e: $out"
			return 1
		fi
	done
	echo "engines agree: $(echo "$ref" | tr ',' '\n' | wc -l) values, $ref"
}
export -f engines_agree

need() {
	[ -e "$1" ] || { echo "skipped: $1 not built"; exit 77; }
}
export -f need
export B=${LISTRX_BUILD_ROOT:-$(dirname "$(dirname "$L")")}

rows=0 passed=0 skipped=0 failed_names=()
while IFS=$'\t' read -r name status fragment signal command; do
	case "$name" in ''|'#'*) continue ;; esac
	[[ "$name" =~ $filter ]] || continue
	rows=$((rows + 1))
	delay=""
	if [ "$signal" != "-" ]; then
		delay=${signal#*@}
		[ "$delay" = rand ] && delay=$(printf '0.%02d' $((RANDOM % 120))) &&
			delay=$(awk -v d="$delay" 'BEGIN { printf "%.2f", d * 1.0 }')
	fi
	start=$(date +%s.%N)
	if [ -z "$delay" ]; then
		timeout -k 5 "$row_timeout" bash -c "$command" >"$D/out" 2>&1
		rc=$?
	else
		timeout -k 5 "$row_timeout" bash -c "exec $command" >"$D/out" 2>&1 &
		pid=$!
		# the run is timeout's child: signal it, not timeout. The delay
		# counts from when it catches the signal (SigCgt in its status):
		# before main() runs, the dynamic loader (the DPDK libraries)
		# takes tens of ms on a loaded host, and there a signal kills any
		# program, whatever its code does
		sig=$(kill -l "${signal%@*}")
		for _ in $(seq 500); do
			child=$(pgrep -P "$pid" | head -1)
			cgt=$(awk '/^SigCgt:/ { print $2 }' "/proc/$child/status" 2>/dev/null)
			[ -n "$cgt" ] && (( (16#$cgt >> (sig - 1)) & 1 )) && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.01
		done
		sleep "$delay"
		kill -s "${signal%@*}" "$(pgrep -P "$pid" | head -1)" 2>/dev/null
		wait "$pid"
		rc=$?
	fi
	took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
	if [ "$rc" = 77 ] && grep -q '^skipped: ' "$D/out"; then
		skipped=$((skipped + 1))
		echo "skip $name: $(grep '^skipped: ' "$D/out")"
		continue
	fi
	why=""
	[ "$rc" = "$status" ] || why="exit $rc, wanted $status"
	grep -Eq -- "$fragment" "$D/out" || why="${why:+$why; }output lacks /$fragment/"
	grep -q "ERROR: AddressSanitizer\|runtime error:\|LeakSanitizer" "$D/out" &&
		why="${why:+$why; }sanitizer report"
	if [ -z "$why" ]; then
		passed=$((passed + 1))
		echo "ok   $name (${took}s${delay:+, SIG${signal%@*} after ${delay}s})"
	else
		failed_names+=("$name")
		echo "FAIL $name (${took}s${delay:+, SIG${signal%@*} after ${delay}s}): $why"
		echo "     command: $command"
		sed 's/^/     | /' "$D/out" | tail -25
	fi
done <"$here/attacks.tsv"

echo "attack battery: $rows rows, $passed passed, $skipped skipped"
[ ${#failed_names[@]} -eq 0 ] || echo "failed: ${failed_names[*]}"
echo "$passed passed, $((rows - passed - skipped)) failed, $skipped skipped"
[ "$rows" -gt 0 ] && [ $((passed + skipped)) -eq "$rows" ]
