#!/usr/bin/env bash
# Runs one libFuzzer harness for a bounded time: new inputs go to a
# scratch corpus in the build directory, the checked-in seeds are read
# only. Exit status: the harness's (non-zero on a crash, a leak or a
# failed invariant; libFuzzer writes the input as crash-* in the cwd).
# usage: run_fuzz.sh HARNESS SEED_DIR SCRATCH_DIR SECONDS MAX_LEN
set -euo pipefail
harness=$(realpath "$1") seeds=$(realpath "$2") scratch=$3 seconds=$4 max_len=$5
mkdir -p "$scratch" "$scratch.artifacts"
cd "$scratch"
exec "$harness" -max_total_time="$seconds" -max_len="$max_len" \
	-timeout=25 -rss_limit_mb=3072 -print_final_stats=1 -artifact_prefix="$scratch.artifacts/" \
	"$scratch" "$seeds"
