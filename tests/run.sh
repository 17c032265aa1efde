#!/bin/sh
# tests/run.sh BUILD_DIR: run every test of caliber against one build
# (build/normal or build/sanitize) and end with "N passed, N failed, N skipped"
# (a skipped test is not counted as passed).
# Each suite prints TAP-style "ok"/"not ok" lines; this script counts them.
# Suites run CALIBER_TEST_JOBS at a time (default: one per CPU), each into a
# file of its own, printed whole as it ends: every suite works in its own
# scratch directory, so they do not meet. The slowest start first, by the
# seconds each took the last time in this build (BUILD_DIR/.suite-times),
# so that the last to end is not a long one started late.
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
jobs=${CALIBER_TEST_JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) echo "tests/run.sh: CALIBER_TEST_JOBS: expected a number of suites at a time, got '$jobs'" >&2; exit 2 ;; esac
work=$(mktemp -d "${TMPDIR:-/tmp}/caliber-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT
times="$root/$build/.suite-times"

# The suites, one per line: "NAME<TAB>COMMAND" (the command as words, no
# quoting needed: no path of the tree holds a blank).
{
	for t in "$root/$build"/tests/test_*; do
		[ -x "$t" ] || continue
		printf 'unit: %s\tenv CMOCKA_MESSAGE_OUTPUT=TAP %s\n' "$(basename "$t")" "$t"
	done
	for t in "$root"/tests/cli/t[0-9]*.sh; do
		printf 'cli: %s\tsh %s\n' "$(basename "$t")" "$t"
	done
	if [ -d "$root/tests/python" ] && [ -n "$PYTHON" ]; then
		printf 'python: tests/python\tsh %s %s\n' "$root/tests/cli/pytest-tap.sh" "$root/tests/python"
	fi
} >"$work/suites"

# Slowest first: each suite's seconds of the last run (0 when unknown), then
# the listed order.
awk -F'\t' -v times="$times" '
	BEGIN { while ((getline l <times) > 0) { split(l, a, "\t"); s[a[2]] = a[1] } }
	{ print (($1 in s) ? s[$1] : 0) "\t" NR "\t" $0 }' "$work/suites" |
	sort -t"$(printf '\t')" -k1,1nr -k2,2n | cut -f2- >"$work/order"

# run_suite N NAME COMMAND...: run one suite into $work/N.out (in the
# background: its stdin is /dev/null), its seconds into $work/N.time last. A
# suite that exits non-zero without printing a "not ok" still counts as one
# failure.
run_suite() {
	n=$1 name=$2; shift 2
	start=$(date +%s)
	"$@" >"$work/$n.out" 2>&1 </dev/null; rc=$?
	if [ $rc -ne 0 ] && ! grep -q '^not ok' "$work/$n.out"; then
		echo "not ok - $name exited with status $rc" >>"$work/$n.out"
	fi
	printf '%s\t%s\n' "$(($(date +%s) - start))" "$name" >"$work/$n.time.tmp" && mv "$work/$n.time.tmp" "$work/$n.time"
}

# print_ended: print, whole and once, each suite that has ended; sets
# running to the number still running. Only this shell prints, so two
# suites' lines never mix. (sh has no local variables: its names are
# its own, apart from the loop's n.)
started=0 printed=0
print_ended() {
	for f in "$work"/*.time; do
		[ -e "$f" ] || continue
		e=$(basename "$f" .time)
		[ -e "$work/$e.printed" ] && continue
		echo "# $(cut -f2 "$f")"
		cat "$work/$e.out"
		: >"$work/$e.printed"
		printed=$((printed + 1))
	done
	running=$((started - printed))
}

# A pool of $jobs suites at a time.
running=0
while IFS="$(printf '\t')" read -r n name cmd; do
	while [ "$running" -ge "$jobs" ]; do
		sleep 0.2
		print_ended
	done
	# shellcheck disable=SC2086 # the command is words
	run_suite "$n" "$name" $cmd &
	started=$((started + 1))
	running=$((running + 1))
done <"$work/order"
wait
print_ended

if [ -d "$root/tests/python" ] && [ -z "$PYTHON" ]; then
	echo "not ok - python: no python3 with pytest (make deps installs python3-pytest)" | tee "$work/nopytest.out"
fi
cat "$work"/*.out >"$work/all"
cat "$work"/*.time | sort -t"$(printf '\t')" -k1,1nr >"$times.tmp" && mv "$times.tmp" "$times"
skipped=$(grep -c '^ok.* # SKIP' "$work/all")
passed=$(($(grep -c '^ok' "$work/all") - skipped))
failed=$(grep -c '^not ok' "$work/all")
if [ "$skipped" -gt 0 ]; then
	echo "# skipped:"
	grep '^ok.* # SKIP' "$work/all" | sed 's/^ok [0-9]* *- */#   /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
