#!/usr/bin/env bash
# dpdk-testpmd loads librte_net_synth.so with -d and receives from
# net_synth0 in rxonly mode; passes when it counted packets on port 0 and
# the driver's own counters agree. Exit 77 (meson: skipped) without testpmd.
set -u
so=${SYNTH_SO:?SYNTH_SO: path of librte_net_synth.so}
testpmd=$(command -v dpdk-testpmd || true)
if [ -z "$testpmd" ]; then
	echo "SKIPPED: dpdk-testpmd not installed (Debian package dpdk)"
	exit 77
fi
[ -f "$so" ] || { echo "FAIL: $so missing"; exit 1; }
if ldd "$so" 2>/dev/null | grep -q 'libasan\|libubsan'; then
	# the ASan runtime must be the first library of the process, and
	# Debian's dpdk-testpmd is not instrumented; the plain build runs this
	echo "SKIPPED: $so is a sanitizer build, which an uninstrumented dpdk-testpmd cannot load"
	exit 77
fi
log=$(mktemp)
# lcores 0 and 1 on the first two CPUs this shell may use (a container or
# taskset may leave out CPU 0; with one CPU both share it)
lcores=$(python3 -c 'import os; c = sorted(os.sched_getaffinity(0)); print("0@%d,1@%d" % (c[0], c[min(1, len(c) - 1)]))')
private=""
# testpmd leaves EAL's runtime directory (eal_create_runtime_dir: /var/run
# for root, else XDG_RUNTIME_DIR or /tmp): removed with the rest
rundir=/var/run
[ "$(id -u)" = 0 ] || rundir=${XDG_RUNTIME_DIR:-/tmp}
trap 'rm -f "$log"; [ -z "$private" ] || rm -rf "$private"; rm -rf "$rundir/dpdk/synthtpmd$$"' EXIT

# EAL refuses a -d plugin when any directory above it is world-writable
# (eal_common_options.c verify_perms), e.g. a build under /tmp: then load a
# copy from a private directory whose ancestors are not
world_writable_ancestor() {
	local d
	d=$(dirname "$(readlink -f "$1")")
	while :; do
		if [ -n "$(find "$d" -maxdepth 0 -perm -0002 2>/dev/null)" ]; then
			echo "$d"
			return 0
		fi
		[ "$d" = / ] && return 1
		d=$(dirname "$d")
	done
}
if bad=$(world_writable_ancestor "$so"); then
	for base in "${XDG_RUNTIME_DIR:-}" "${HOME:-}"; do
		[ -n "$base" ] && [ -d "$base" ] || continue
		world_writable_ancestor "$base/x" >/dev/null && continue
		private=$(mktemp -d "$base/.listrx-testpmd.XXXXXX") || { private=""; continue; }
		if cp "$so" "$private/"; then
			so="$private/$(basename "$so")"
			break
		fi
		rm -rf "$private"
		private=""
	done
	if [ -z "$private" ]; then
		echo "FAIL: $bad is world-writable, so EAL will not load $so with -d," \
			"and neither \$XDG_RUNTIME_DIR nor \$HOME is a private directory to copy it to"
		exit 1
	fi
	echo "note: $bad is world-writable (EAL refuses -d below it): loading a copy from $private"
fi
for copy in 0 1; do
	timeout -s INT 4 "$testpmd" --lcores "$lcores" --no-huge --no-pci --no-shconf -m 512 \
		--file-prefix "synthtpmd$$" -d "$so" \
		--vdev "net_synth0,profile=udp-flows,flows=16,copy=$copy" -- \
		--forward-mode=rxonly --stats-period 1 --no-mlockall \
		--total-num-mbufs=16384 >"$log" 2>&1
	rx=$(grep -E "^\s+RX-packets: [0-9]+ +RX-dropped" "$log" | head -1 | awk '{print $2}')
	if ! grep -q "Port 0 is closed" "$log" || [ -z "$rx" ] || [ "$rx" -le 0 ]; then
		echo "FAIL: copy=$copy: testpmd did not receive from net_synth0"
		tail -30 "$log"
		exit 1
	fi
	echo "ok: copy=$copy: testpmd received $rx packets from net_synth0"
done
# io forwarding: frames go back out of net_synth0; TX completions are
# reaped by the RX poll, so the run must not run out of mbufs
timeout -s INT 4 "$testpmd" --lcores "$lcores" --no-huge --no-pci --no-shconf -m 512 \
	--file-prefix "synthtpmd$$" -d "$so" \
	--vdev "net_synth0,profile=imix,flows=8,copy=1" -- \
	--forward-mode=io --stats-period 1 --no-mlockall \
	--total-num-mbufs=16384 >"$log" 2>&1
tx=$(grep -E "^\s+TX-packets: [0-9]+ +TX-dropped" "$log" | head -1 | awk '{print $2}')
if [ -z "$tx" ] || [ "$tx" -le 0 ]; then
	echo "FAIL: io forwarding: testpmd transmitted nothing to net_synth0"
	tail -30 "$log"
	exit 1
fi
echo "ok: io forwarding: testpmd forwarded $tx packets through net_synth0"
# a bad devarg fails the probe with the message naming it
"$testpmd" --lcores "${lcores%%,*}" --no-huge --no-pci --no-shconf -m 512 --file-prefix "synthtpmd$$" \
	-d "$so" --vdev "net_synth0,profile=nope" -- --forward-mode=rxonly \
	--no-mlockall --total-num-mbufs=16384 </dev/null >"$log" 2>&1
if ! grep -q "bad devarg profile=nope" "$log"; then
	echo "FAIL: bad devarg not reported"; tail -20 "$log"; exit 1
fi
echo "ok: bad devarg reported"
echo "1 passed, 0 failed"
