#!/bin/sh
# Run a pytest folder and print one TAP line per test (from pytest -rA's
# short summary), so tests/run.sh counts Python tests like the others; a
# skipped test is "ok - ... # SKIP why".
set -u
dir=$1
out=$(cd "$dir" && PYTHONDONTWRITEBYTECODE=1 "${PYTHON:-python3}" -m pytest -q -rA -p no:cacheprovider . 2>&1)
rc=$?
printf '%s\n' "$out" | sed -n 's/^PASSED \(.*\)$/ok - \1/p; s/^\(FAILED\|ERROR\) \(.*\)$/not ok - \2/p;
	s/^SKIPPED \[[0-9]*\] \([^:]*:[0-9]*\): \(.*\)$/ok - \1 # SKIP \2/p'
[ $rc -eq 0 ] || { printf '%s\n' "$out" | tail -30 | sed 's/^/#   /'; exit 1; }
