#!/bin/sh
# scripts/count_report_reads.sh CALIBER RUN_ROOT: show that `caliber report`
# reads the sealed bytes once (issue 27). Counts, with strace, how often
# each command opens a sealed .ttgir of RUN_ROOT: `verify` opens each once
# (the seal), `diff` once to verify and count and again only for the
# kernels it shows (render), and `report`, which hands its verified run to
# the diff, must open them no more often than `diff` does: report <=
# verify + render. Prints the three counts; exits 1 when report reads more.
set -u
[ $# -eq 2 ] || { echo "usage: count_report_reads.sh CALIBER RUN_ROOT" >&2; exit 2; }
command -v strace >/dev/null || { echo "count_report_reads: needs strace" >&2; exit 2; }
trace=$(mktemp) || exit 2
trap 'rm -f "$trace"' EXIT

# opens CMD: how many times `caliber CMD RUN_ROOT` opened a .ttgir file.
opens() {
	strace -f -e trace=openat -o "$trace" "$1" "$2" "$3" >/dev/null 2>&1
	grep -c '\.ttgir"' "$trace"
}

verify=$(opens "$1" verify "$2")
diff=$(opens "$1" diff "$2")
report=$(opens "$1" report "$2")
echo "ttgir opens: verify $verify, diff $diff (verify + render $((diff - verify))), report $report"
[ "$report" -le "$diff" ] || { echo "count_report_reads: report reads the sealed tree more than once" >&2; exit 1; }
