#!/usr/bin/env bash
# scripts/setup's package detection and its failure messages, without apt:
#   dry-run       a package that is not installed is named as missing, the
#                 dry run says it would install it and goes on through the
#                 build steps; exit 0
#   non-root      a run as a user who is not root names the missing
#                 packages and exits 2 before any apt-get
#   failing-step  a command that fails (a meson shim) is named with its step
#   bad-argument  an unknown argument: exit 2
# Exit 77 (meson: skipped) with the reason when a case cannot run here.
set -euo pipefail
case_=${1:?usage: test_setup.sh dry-run|non-root|failing-step|bad-argument}
src=${LISTRX_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
unknown=listrx-test-not-a-package

tmp=$(mktemp -d "${TMPDIR:-/tmp}/listrx-setup-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# the repository may sit in a directory only its owner reads: a copy of the
# script in the same layout (scripts/setup of a clone), readable by anyone
mkdir -p "$tmp/clone/scripts" "$tmp/bin" "$tmp/link"
cp "$src/scripts/setup" "$tmp/clone/scripts/setup"
# apt-get and apt must never run from a test, nor a build: shims that say
# so and fail (the failing-step case expects its meson to)
for tool in apt-get apt meson ninja; do
	printf '#!/bin/sh\necho "SHIM: %s $*" >&2\nexit 97\n' "$tool" >"$tmp/bin/$tool"
done
chmod -R a+rX "$tmp"
chmod a+x "$tmp"/bin/*
export PATH="$tmp/bin:$PATH" LISTRX_BENCH_BIN_DIR="$tmp/link"
unset LISTRX_SETUP_DRY_RUN LISTRX_SETUP_SKIP_APT LISTRX_BENCH_LINK

fail() {
	echo "FAIL: $*" >&2
	echo "---- output (exit $rc) ----" >&2
	cat "$tmp/out" >&2
	exit 1
}
expect() { # TEXT: the output contains it
	grep -qF -- "$1" "$tmp/out" || fail "the output does not contain: $1"
}
setup() { # runs the copy with the given command prefix; rc and $tmp/out
	rc=0
	"$@" bash "$tmp/clone/scripts/setup" ${args[@]+"${args[@]}"} >"$tmp/out" 2>&1 || rc=$?
	if grep -v "^SHIM: ${allowed:-none} " "$tmp/out" | grep -q '^SHIM: '; then
		fail "a command that must not run was run"
	fi
}

case $case_ in
dry-run)
	extra=$unknown
	# a real package apt knows but that is not installed, when there is one
	real=hello
	if apt-cache show "$real" >/dev/null 2>&1 &&
		! dpkg-query -W -f='${Status}\n' "$real" 2>/dev/null | grep -q ' installed$'; then
		extra="$extra $real"
	else
		echo "note: $real is unknown to apt-cache or installed here: only $unknown is added"
		real=
	fi
	for how in flag env; do
		if [ $how = flag ]; then
			args=(--dry-run)
			setup env LISTRX_SETUP_EXTRA_PACKAGES="$extra"
		else
			args=()
			setup env LISTRX_SETUP_EXTRA_PACKAGES="$extra" LISTRX_SETUP_DRY_RUN=1
		fi
		[ $rc = 0 ] || fail "dry run ($how) exited $rc, not 0"
		grep -E "^== Debian packages: [0-9]+ of [0-9]+ missing: .*\b$unknown\b" "$tmp/out" >/dev/null ||
			fail "$unknown not named as missing"
		grep -E "would run: apt-get install .*\b$unknown\b" "$tmp/out" >/dev/null ||
			fail "no apt-get install of $unknown"
		if [ -n "$real" ]; then
			grep -E "would run: apt-get install .*\b$real\b" "$tmp/out" >/dev/null ||
				fail "no apt-get install of $real"
		fi
		expect "would run: apt-get update"
		expect "would run: meson setup build"
		expect "would run: ninja -C build"
		expect "would run: ninja -C build-retpo dataplane/listrx"
		expect "would run: ln -sfn $tmp/clone/.venv/bin/listrx-bench $tmp/link/listrx-bench"
		expect "== dry run done"
		for made in build build-retpo .venv; do
			[ ! -e "$tmp/clone/$made" ] || fail "the dry run made $made/"
		done
		[ ! -e "$tmp/link/listrx-bench" ] || fail "the dry run linked listrx-bench"
	done
	echo "ok: the dry run names $extra as missing, would install it and goes on; exit 0"
	;;
non-root)
	args=()
	if [ "$(id -u)" = 0 ]; then
		command -v setpriv >/dev/null || { echo "skip: root, and no setpriv to run as nobody"; exit 77; }
		setup env LISTRX_SETUP_EXTRA_PACKAGES=$unknown \
			setpriv --reuid=nobody --regid=nogroup --clear-groups
	else
		setup env LISTRX_SETUP_EXTRA_PACKAGES=$unknown
	fi
	[ $rc = 2 ] || fail "a non-root run with a missing package exited $rc, not 2"
	grep -E "package\(s\) missing \(.*\b$unknown\b.*\): run as root" "$tmp/out" >/dev/null ||
		fail "the missing package $unknown is not named"
	[ ! -e "$tmp/clone/build" ] || fail "the refused run went on to configure build/"
	echo "ok: a non-root run names $unknown and exits 2"
	;;
failing-step)
	args=()
	allowed=meson
	setup env LISTRX_SETUP_SKIP_APT=1
	[ $rc = 97 ] || fail "the failing meson gave exit $rc, not its 97"
	expect "SHIM: meson setup build"
	expect "scripts/setup: failed (exit 97) while configuring build/: line "
	grep -qE "while configuring build/: line [0-9]+: meson setup build$" "$tmp/out" ||
		fail "the failing command is not named with its arguments"
	echo "ok: the failing step is named"
	;;
bad-argument)
	args=(--no-such-option)
	setup env
	[ $rc = 2 ] || fail "an unknown argument gave exit $rc, not 2"
	expect "scripts/setup: unknown argument '--no-such-option' (valid: --dry-run)"
	echo "ok: an unknown argument exits 2"
	;;
*)
	echo "test_setup.sh: unknown case '$case_'" >&2
	exit 2
	;;
esac
