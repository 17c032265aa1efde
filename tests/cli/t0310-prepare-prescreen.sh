#!/bin/sh
# prepare --prescreen --history RUN: what a campaign is expected to take with
# run --prescreen, beside what it takes without (docs/formats.md, "Deadlines
# and expected times"). The histories are runs of the CPU test campaign
# (tests/data/campaign-cpu), in whose canary same and wrong compile the same
# code in every cell and gain, flat and slow do not; the committed H200 run
# campaigns/demo-h200/runs/all is the last. Every figure is checked against
# tests/cli/prescreen_expect.py, which computes it from the history's
# receipts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

pre='
# prescreen_lines FILE: the lines of a prepare output that --prescreen
# decides: each task row with a basis, the total row, "prepare: prescreen:".
prescreen_lines() { grep -E "^  [a-z_]+ .*; |^  total |^prepare: prescreen:" "$1"; }
# expect_lines HISTORY MATRIX STDOUT: those lines are the ones computed from
# HISTORY for the frozen MATRIX.
expect_lines() {
	$PY "$CALIBER_ROOT/tests/cli/prescreen_expect.py" "$1" "$2" >want &&
	prescreen_lines "$3" >got && diff want got
}
prep() {
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --backends "$CALIBER_ROOT/tests/backends" "$@"
}
'
export pre

test_expect_success 'a timed history: its identical tasks cost their correctness cells, its changed ones their full time' '
	eval "$setup$pre" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	prep --dry-run --history out --prescreen >stdout &&
	expect_lines out frozen/cpu-test-canary/task-matrix.json stdout &&
	grep -Eq "^  same .* task.json wall_ns; identical: correctness$" stdout &&
	grep -Eq "^  wrong .* task.json wall_ns; identical: correctness$" stdout &&
	for t in gain flat slow; do grep -Eq "^  $t .* task.json wall_ns; changed: full time$" stdout || exit 1; done &&
	grep -qx "prepare: prescreen: share of changed tasks in the history: 3 of 5 (60.0%)" stdout &&
	grep -q "^prepare: prescreen: 2 identical by construction (their correctness cells, and their screen cells for the 0 of them the history screened), 3 changed (full time), 0 estimated from the history.s share, 0 with nothing to estimate from$" stdout &&
	grep -q "^prepare: prescreen: estimated from the history.s share: 3/5 x " stdout &&
	grep -Eq "^prepare: prescreen: expected without --prescreen [0-9hms]+, with --prescreen [0-9hms]+ \(5 of 5 tasks\)$" stdout &&
	prep --dry-run --history out >plain &&
	! grep -q "prescreen" plain && grep -Eq "^  task +timeout +budget +expected +worst \(\+b\)  expected from$" plain
'

test_expect_success 'a pre-screened history: its screen cells count; the tasks of --selection all it does not hold are estimated from its share' '
	eval "$setup$pre" && make_frozen &&
	run canary ps --worker "python3 $W/replay.py $D" --prescreen --quiet >/dev/null &&
	prep --dry-run --selection all --canary-receipt ps/campaign.json --history ps --prescreen >stdout &&
	prep --output-root fz --selection all --canary-receipt ps/campaign.json --history ps --prescreen >frozen.out &&
	expect_lines ps fz/cpu-test-all/task-matrix.json stdout &&
	prescreen_lines frozen.out >got2 && cmp got got2 &&
	grep -q "^prepare: frozen .*/fz/cpu-test-all/task-matrix.json$" frozen.out &&
	grep -Eq "^  same .* task.json wall_ns; identical: correctness \+ screen$" stdout &&
	for t in slowpoke slower faster; do
		grep -Eq "^  $t .* - .* not in the history run; estimated from the history.s share$" stdout || exit 1
	done &&
	grep -q "^prepare: prescreen: 2 identical by construction (their correctness cells, and their screen cells for the 1 of them the history screened), 3 changed (full time), 3 estimated from the history.s share, 0 with nothing to estimate from$" stdout &&
	grep -Eq "^prepare: prescreen: expected without --prescreen [0-9hms]+, with --prescreen [0-9hms]+ \(8 of 8 tasks\)$" stdout &&
	grep -q "^  (expected: .* total over 5 of 8 tasks)$" stdout
'

test_expect_success '--prescreen needs --history, with --dry-run or without; --help says so' '
	eval "$setup$pre" && make_frozen &&
	printf "%s\n" "caliber: prepare: --prescreen needs --history: which tasks are identical by construction comes from a history run" >want &&
	expect_refusal 2 want prep --dry-run --prescreen &&
	expect_refusal 2 want prep --output-root fz --prescreen &&
	test ! -e fz &&
	$CALIBER prepare --help >help &&
	grep -q -- "^  --prescreen  *with --history: also what the campaign takes with run --prescreen$" help &&
	grep -qx "\"prepare: prescreen:\" follow the table: the share, how many tasks rest" help
'

test_expect_success 'the committed H200 runs/all as its own history: 5 of 32 changed, the output bench/RESULTS.md quotes' '
	eval "$pre" && R="$CALIBER_ROOT/campaigns/demo-h200/runs" &&
	all() {
		$CALIBER prepare "$R/all/manifest.json" --inventory-dir "$CALIBER_ROOT/ops" --backends "$CALIBER_ROOT/backends" \
			--selection all --canary-receipt "$R/canary-2026-12-02/campaign.json" --prescreen --history "$R/all" "$@"
	} &&
	all --output-root fz >frozen.out && all --dry-run >stdout &&
	expect_lines "$R/all" fz/demo-h200-all/task-matrix.json stdout &&
	grep -qx "prepare: prescreen: share of changed tasks in the history: 5 of 32 (15.6%)" stdout &&
	while IFS= read -r line; do
		grep -qxF -- "$line" "$CALIBER_ROOT/bench/RESULTS.md" || { echo "RESULTS.md lacks: $line"; exit 1; }
	done <stdout
'
