#!/bin/sh
# caliber report reads the sealed bytes once (issue 27): on the committed
# 32-task run (campaigns/demo-h200/runs/all), scripts/count_report_reads.sh
# counts with strace how often verify, diff and report open a sealed .ttgir;
# report, which hands its verified run view to the diff, opens no more than
# diff does (verify + render). A stand-in that reads the tree twice on
# report shows the check fails when a second verifying pass comes back.
. "$(dirname "$0")/lib.sh"

# strace stops LeakSanitizer (it cannot ptrace a traced process); the
# sanitizer build still checks memory errors under it.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS

if ! command -v strace >/dev/null 2>&1 || ! strace -f -o /dev/null true >/dev/null 2>&1; then
	test_skip 'report opens each sealed .ttgir no more often than diff (verify + render)' 'no strace that may trace here'
	test_skip 'a report that verifies the tree twice fails the count' 'no strace that may trace here'
	exit 0
fi

test_expect_success 'report opens each sealed .ttgir no more often than diff (verify + render)' '
	sh "$CALIBER_ROOT/scripts/count_report_reads.sh" "$CALIBER" "$CALIBER_ROOT/campaigns/demo-h200/runs/all" >out &&
	cat out &&
	set -- $(sed -n "s/^ttgir opens: verify \([0-9]*\), diff \([0-9]*\) (verify + render \([0-9]*\)), report \([0-9]*\)$/\1 \2 \3 \4/p" out) &&
	test $# -eq 4 &&
	n=$(find "$CALIBER_ROOT/campaigns/demo-h200/runs/all" -name "*.ttgir" | wc -l) &&
	test "$1" -eq "$n" &&
	test "$3" -gt 0 && test "$3" -lt "$n" &&
	test "$4" -le "$2"
'

test_expect_success 'a report that verifies the tree twice fails the count' '
	root="$CALIBER_ROOT/campaigns/demo-h200/runs/all" &&
	cat >twice <<-\STANDIN &&
	#!/bin/sh
	# reads every .ttgir once per pass: verify one pass, diff one and a
	# few to render, report two (the defect this check is for)
	passes=1; case $1 in report) passes=2 ;; esac
	while [ $passes -gt 0 ]; do find "$2" -name "*.ttgir" -exec cat {} + >/dev/null; passes=$((passes - 1)); done
	[ "$1" = verify ] || find "$2" -name "*.ttgir" | head -3 | xargs cat >/dev/null
	STANDIN
	chmod +x twice &&
	if sh "$CALIBER_ROOT/scripts/count_report_reads.sh" "$PWD/twice" "$root" >out 2>err; then
		echo "the count passed a report that reads the tree twice"; cat out; exit 1
	fi &&
	grep -qx "count_report_reads: report reads the sealed tree more than once" err
'
