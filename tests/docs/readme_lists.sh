#!/usr/bin/env bash
# The README's documentation list links every page in docs/, and its
# main-job section names the bench's five main commands.
set -euo pipefail
src=${LISTRX_SOURCE_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
readme=$src/README.md
bad=0
for page in "$src"/docs/*.md; do
	name=docs/$(basename "$page")
	if ! grep -qF "]($name)" "$readme"; then
		echo "README.md: no link to $name in the documentation list" >&2
		bad=1
	fi
done
for cmd in headline cree kernel scale report; do
	if ! grep -qE "^- \`listrx-bench $cmd( |\`)" "$readme"; then
		echo "README.md: the main job's list does not name listrx-bench $cmd" >&2
		bad=1
	fi
done
[ $bad = 0 ] && echo "ok: README links $(ls "$src"/docs/*.md | wc -l) pages and names the five commands"
exit $bad
