#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Cost per packet of the build-meta and l3-demux stages (docs/stages.md,
# "Measured costs"): build-meta by metadata size (64/256/552) x clear method
# (memset/bulk/none) x placement, per NIC hint, and l3-demux with and
# without the direct-call dispatch, each per packet (process_one) and per
# burst (process_burst). Time (TSC, interleaved reps, median and min..max)
# by default; CG=1 gives callgrind's instruction and L1d-miss counts, which
# do not depend on the machine's load.
#   bench/stage_costs.sh [--what build-meta|hints|l3|all] [--packets N] [--reps R]
#   CG=1 bench/stage_costs.sh ["configuration filter"]
#   BUILD=build-retpo bench/stage_costs.sh ...     (another build directory)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
if [ "${CG:-0}" = 1 ]; then
	exec "$root/tests/l3_demux/stage_costs_cg.sh" "$build" "$@"
fi
bin="$build/tests/l3_demux/stage_costs"
if [ ! -x "$bin" ]; then
	echo "bench/stage_costs.sh: $bin not built (bash scripts/setup builds it)" >&2
	exit 2
fi
exec "$bin" "$@"
