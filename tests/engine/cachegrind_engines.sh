#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Deterministic per-packet I1 misses and indirect branches of each engine
# (docs/engines.md). Runs engine_bench under cachegrind
# twice per engine (P1 and P2 packets) and divides the difference of the
# counts by P2 - P1, so start-up (EAL, pool, pipeline creation) cancels.
# "dispatch Bi" = indirect branches executed inside the engine and its
# dispatch code (functions engine_*, graph_*, lrx_pipeline_*, rte_graph_*),
# attributed by function from the cachegrind output.
#
#   tests/engine/cachegrind_engines.sh BUILD_DIR [footprint_kb] [burst] [stages]
#
# The I1 geometry is the host's: size and line from getconf, 8-way (AMD
# Zen 3 / most x86 L1i; override with I1=size,assoc,line).
set -eu
build=${1:?build dir}
fp=${2:-$(( $(getconf LEVEL1_ICACHE_SIZE) / 1024 ))}
burst=${3:-64}
stages=${4:-4}
p1=${P1:-20000}
p2=${P2:-60000}
i1=${I1:-$(getconf LEVEL1_ICACHE_SIZE),8,$(getconf LEVEL1_ICACHE_LINESIZE)}
engines=${ENGINES:-packet burst hybrid:2 static graph}
out=${OUT:-$(mktemp -d /tmp/lrx_cg.XXXXXX)}
bench="$build/tests/engine/engine_bench"

# sums events per function: prints "<Ir> <I1mr> <Bi> <Bim> <dispatch Bi>
# <ballast I1mr>". In a -Dretpoline=true build every indirect call is a
# direct call to __x86_indirect_thunk_<reg> (whose `ret` cachegrind does not
# count as an indirect branch, and whose size-less symbol it folds into the
# function before it), so Bi reads 0 there: the thunk calls per packet are
# the Bi per packet of the plain build (objdump shows every site converted).
sum() {
	awk '
	/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1; next }
	/^fn=/ { fn = substr($0, 4); next }
	/^[0-9]/ {
		ir += $(col["Ir"] + 1); i1 += $(col["I1mr"] + 1)
		bi += $(col["Bi"] + 1); bim += $(col["Bim"] + 1)
		if (fn ~ /^(engine_|graph_|lrx_pipeline_|rte_graph_)/)
			dbi += $(col["Bi"] + 1)
		if (fn == "lrx_ballast_run")
			bi1 += $(col["I1mr"] + 1)
	}
	END { printf "%d %d %d %d %d %d\n", ir, i1, bi, bim, dbi, bi1 }' "$1"
}

printf '%-10s %10s %10s %10s %10s %12s %12s\n' engine Ir/pkt I1mr/pkt ballastI1 Bi/pkt dispatchBi Bim/pkt
for e in $engines; do
	for p in $p1 $p2; do
		valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes \
			--I1="$i1" --cachegrind-out-file="$out/cg.$e.$p" \
			"$bench" --engine "$e" --reps 1 --packets "$p" \
			--footprint-kb "$fp" --burst "$burst" --stages "$stages" \
			--file-prefix "cg_$$" >/dev/null 2>&1
	done
	# packets actually run: whole bursts
	n1=$(( (p1 + burst - 1) / burst * burst ))
	n2=$(( (p2 + burst - 1) / burst * burst ))
	set -- $(sum "$out/cg.$e.$p1") $(sum "$out/cg.$e.$p2")
	awk -v e="$e" -v d=$((n2 - n1)) -v a="$*" 'BEGIN {
		split(a, v, " ")
		printf "%-10s %10.1f %10.2f %10.2f %10.4f %12.4f %12.4f\n", e,
		    (v[7] - v[1]) / d, (v[8] - v[2]) / d, (v[12] - v[6]) / d,
		    (v[9] - v[3]) / d, (v[11] - v[5]) / d, (v[10] - v[4]) / d }'
done
echo "# I1=$i1 footprint_kb/stage=$fp burst=$burst stages=$stages packets=$p2-$p1 files in $out"
