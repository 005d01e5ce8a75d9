#!/bin/sh
# Instructions and simulated L1d read misses per packet of each
# stage_costs configuration, under callgrind (deterministic; any machine).
# Counted inside time_pass only (EAL start-up excluded), over the warm-up
# and the timed pass: 3,200 + 32,000 packets at --burst 32. The figures
# include the bench loop itself (about 11 instructions per packet).
#   tests/l3_demux/stage_costs_cg.sh BUILD_DIR [FILTER...]
set -eu
build=${1:?usage: $0 BUILD_DIR [FILTER...]}
shift
exe="$build/tests/l3_demux/stage_costs"
packets=35200
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if [ $# -eq 0 ]; then
	# every configuration the binary prints
	set --
	while IFS= read -r line; do
		set -- "$@" "$line"
	done <<LIST
$("$exe" --packets 64 --reps 1 --file-prefix cglist | grep -v '^#' |
  sed -E 's/ +ns\/pkt.*//; s/ +/ /g')
LIST
fi
for filter in "$@"; do
	valgrind --tool=callgrind --cache-sim=yes \
		--toggle-collect='*time_pass*' --callgrind-out-file="$out" \
		"$exe" --filter "$filter" --packets 32000 --reps 1 \
		--file-prefix "cg$$" >/dev/null 2>&1
	callgrind_annotate "$out" 2>/dev/null | awk -v f="$filter" -v n=$packets '
		/Events shown/ { for (i = 3; i <= NF; i++) ev[i - 2] = $i }
		/PROGRAM TOTALS/ {
			j = 0
			for (i = 1; i <= NF; i++) if ($i ~ /^[0-9,]+$/) { gsub(",", "", $i); v[++j] = $i }
			for (k = 1; k <= j; k++) { if (ev[k] == "Ir") ir = v[k]; if (ev[k] == "D1mr") d1 = v[k] }
			printf "%-72s Ir/pkt %6.1f D1mr/pkt %5.2f\n", f, ir / n, d1 / n
		}'
done
