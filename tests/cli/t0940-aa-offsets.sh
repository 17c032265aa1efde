#!/bin/sh
# What identical code must give when every worker process carries an offset
# of its own, fixed for its life (as on the H200): the stand-in worker
# tests/workers/offsets.py draws it from a seed, per process and task, ten
# times the scatter of the repeats. Under the default worker mode every
# session is a process of its own, so the bootstrap samples the offsets and
# few A/A intervals exclude zero; under --workers persistent a cell's sessions
# share one, and most do (at most 2 of 8 against at least 6 of 8 here).
# Seeded, so deterministic: the bounds hold for this seed whatever the
# machine; bench/aa_offsets.py measures the rates over many seeds
# (bench/RESULTS.md).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

# aa OUT: the A/A count of OUT's verdict matrix, "k n".
aa='aa() { sed -n "s/^,,,aa-summary,.*A\/A: \([0-9]*\) of \([0-9]*\) control-vs-baseline intervals exclude zero.*/\1 \2/p" "$1/matrix.csv"; }'
export aa

test_expect_success 'default workers: each session samples a new process offset, and A/A intervals mostly contain zero' '
	eval "$setup" && eval "$aa" && make_all &&
	run all s --worker "python3 $W/offsets.py $D 1 3000 300" --quiet >/dev/null &&
	grep -h "^offsets: gain baseline a session" s/tasks/gain/cells/a-off*/worker.log | sed "s/.*: process of //" | sort -u >procs &&
	test "$(wc -l <procs)" -eq 3 && test "$(sed "s/.*offset //" procs | sort -u | wc -l)" -eq 3 &&
	set -- $(aa s) && echo "A/A: $1 of $2" && test "$2" -eq 8 && test "$1" -le 2 &&
	$CALIBER report s | grep -q "^intervals: 95 % over 3 worker processes x 7 repeats, 2000 bootstrap resamples$"
'

test_expect_success '--workers persistent: a cell shares one offset over its sessions, and A/A intervals mostly exclude zero' '
	eval "$setup" && eval "$aa" && make_all &&
	run all p --worker "python3 $W/offsets.py $D 1 3000 300" --workers persistent --quiet >/dev/null &&
	grep -h "^offsets: gain baseline a session" p/tasks/gain/cells/a-off*/worker.log | sed "s/.*: process of //" | sort -u >procs &&
	test "$(wc -l <procs)" -eq 1 &&
	set -- $(aa p) && echo "A/A: $1 of $2" && test "$2" -eq 8 && test "$1" -ge 6 &&
	$CALIBER report p | grep -q "^intervals: 95 % over 3 sessions of one worker process x 7 repeats"
'
