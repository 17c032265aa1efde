#!/bin/sh
# Run a pytest folder and print one TAP line per test (from pytest -rA's
# short summary), so tests/run.sh counts Python tests like the others; a
# skipped test is "ok - ... # SKIP why", and a failure where nothing may be
# skipped (CALIBER_TESTS_NO_SKIP=1, as lib.sh's test_skip).
set -u
dir=$1
out=$(cd "$dir" && PYTHONDONTWRITEBYTECODE=1 "${PYTHON:-python3}" -m pytest -q -rA -p no:cacheprovider . 2>&1)
rc=$?
if [ "${CALIBER_TESTS_NO_SKIP:-0}" = 1 ]; then
	skip='not ok - \1 (skipped, and CALIBER_TESTS_NO_SKIP=1: \2)'
else
	skip='ok - \1 # SKIP \2'
fi
printf '%s\n' "$out" | sed -n "s/^PASSED \(.*\)\$/ok - \1/p; s/^\(FAILED\|ERROR\) \(.*\)\$/not ok - \2/p;
	s/^SKIPPED \[[0-9]*\] \([^:]*:[0-9]*\): \(.*\)\$/$skip/p"
[ $rc -eq 0 ] || { printf '%s\n' "$out" | tail -30 | sed 's/^/#   /'; exit 1; }
