#!/bin/sh
# tests/run.sh BUILD_DIR: run every test of caliber against one build
# (build/normal or build/sanitize) and end with "N passed, N failed, N skipped"
# (a skipped test is not counted as passed).
# Each suite prints TAP-style "ok"/"not ok" lines; this script counts them.
set -u
build=${1:?usage: tests/run.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
CALIBER="$root/$build/caliber"
CALIBER_TOOLS="$root/$build/tools"
export CALIBER CALIBER_TOOLS CALIBER_ROOT="$root"
# The Python plugin tests and the runner's target collection need a python3 with pytest (Debian's python3-pytest
# serves /usr/bin/python3, which may not be the first python3 on PATH).
PYTHON=""
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import pytest' >/dev/null 2>&1; then PYTHON=$p; break; fi
done
export PYTHON
log=$(mktemp "${TMPDIR:-/tmp}/caliber-tests.XXXXXX")
trap 'rm -f "$log"' EXIT

# Run one suite, echo its lines, and append them to the log. A suite that
# exits non-zero without printing a "not ok" still counts as one failure.
suite() {
	name=$1; shift
	echo "# $name"
	out=$("$@" 2>&1); rc=$?
	printf '%s\n' "$out"
	printf '%s\n' "$out" >>"$log"
	if [ $rc -ne 0 ] && ! printf '%s\n' "$out" | grep -q '^not ok'; then
		echo "not ok - $name exited with status $rc" | tee -a "$log"
	fi
}

for t in "$root/$build"/tests/test_*; do
	[ -x "$t" ] || continue
	suite "unit: $(basename "$t")" env CMOCKA_MESSAGE_OUTPUT=TAP "$t"
done
for t in "$root"/tests/cli/t[0-9]*.sh; do
	suite "cli: $(basename "$t")" sh "$t"
done
if [ -d "$root/tests/python" ]; then
	if [ -n "$PYTHON" ]; then
		suite "python: tests/python" sh "$root/tests/cli/pytest-tap.sh" "$root/tests/python"
	else
		echo "not ok - python: no python3 with pytest (make deps installs python3-pytest)" | tee -a "$log"
	fi
fi

skipped=$(grep -c '^ok.* # SKIP' "$log")
passed=$(($(grep -c '^ok' "$log") - skipped))
failed=$(grep -c '^not ok' "$log")
if [ "$skipped" -gt 0 ]; then
	echo "# skipped:"
	grep '^ok.* # SKIP' "$log" | sed 's/^ok [0-9]* *- */#   /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
