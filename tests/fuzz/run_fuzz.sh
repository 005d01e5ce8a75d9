#!/usr/bin/env bash
# Runs one libFuzzer harness for a bounded time: new inputs go to a
# scratch corpus in the build directory, the checked-in seeds are read
# only. Exit status: the harness's (non-zero on a crash, a leak or a
# failed invariant; libFuzzer writes the input as crash-* in the cwd).
# At the end one line: executions, execs/s and coverage (edges,
# features) from libFuzzer's final stats.
# usage: run_fuzz.sh HARNESS SEED_DIR SCRATCH_DIR SECONDS MAX_LEN [ARGS...]
#        run_fuzz.sh --all BUILD_DIR SECONDS [ARGS...]
#   --all: every harness of BUILD_DIR (a -Dfuzz=true build) in turn, with
#   the seeds and max_len of its meson test, then a table of the lines.
#   ARGS go to libFuzzer (e.g. -len_control=0: inputs up to max_len from
#   the start, the mix of a long run).
set -euo pipefail
if [ "${1:-}" = --all ]; then
	build=$(realpath "$2") seconds=$3
	shift 3
	self=$(realpath "$0")
	summary=$(mktemp)
	trap 'rm -f "$summary"' EXIT
	# each fuzz test's args: HARNESS SEED_DIR SCRATCH_DIR SECONDS MAX_LEN
	meson introspect --tests "$build" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if any(s == "fuzz" or s.endswith(":fuzz") for s in t["suite"]):
        print("\t".join(t["cmd"][1:]))' |
	while IFS=$'\t' read -r harness seeds scratch _ max_len; do
		(cd "$build" && "$self" "$harness" "$seeds" "$scratch" "$seconds" "$max_len" "$@" \
			2>&1) | tail -n 1 | tee -a "$summary"
	done
	echo "--- $(wc -l < "$summary") harnesses, $seconds s each:"
	cat "$summary"
	exit 0
fi
harness=$(realpath "$1") seeds=$(realpath "$2") scratch=$3 seconds=$4 max_len=$5
shift 5
mkdir -p "$scratch" "$scratch.artifacts"
cd "$scratch"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$SECONDS
set +e
# -error_exitcode=1: libFuzzer's default, 77, is what meson reads as a skip
"$harness" -max_total_time="$seconds" -max_len="$max_len" -error_exitcode=1 \
	-timeout=25 -rss_limit_mb=3072 -print_final_stats=1 -artifact_prefix="$scratch.artifacts/" \
	"$@" "$scratch" "$seeds" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
set -e
stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n 1; }
cov=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED).*cov: ' "$log" | tail -n 1 |
	sed -E 's/.*cov: ([0-9]+) ft: ([0-9]+).*/\1 edges, \2 features/')
echo "fuzz $(basename "$harness"): $(stat number_of_executed_units) execs in $((SECONDS - start)) s," \
	"$(stat average_exec_per_sec) execs/s, max_len $max_len, cov ${cov:-?}, exit $rc"
exit "$rc"
