#!/bin/sh
# timer.max_sessions: after a round's timer.sessions sessions, one more
# session of every cell, interleaved as the round's, while the round is
# undecided (the candidate's interval straddles a stable gain or
# regression, or the A/A band is wider than the smaller threshold), up to
# timer.max_sessions; the task receipt says per order what was added and
# why. The replay worker's timings are deterministic, so is every figure.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

# The CPU campaign with timer.max_sessions and thresholds set: freeze M G R
# (M empty: none), then run_p SEL OUT: persistent workers (the adaptation
# does not depend on them, and they are quick).
adapt='
freeze() {
	extra=${1:+, \"max_sessions\": $1}
	sed -e "s/@COMPILER_TREE@/$($CALIBER digest "$D/compiler")/" -e "s/@CORPUS_TREE@/$($CALIBER digest "$D/corpus")/" \
	    -e "s/@HARNESS_COMMIT@/$commit/" -e "s/\"repeats\": 7/\"repeats\": 7$extra/" \
	    -e "s/\"gain\": 0.05/\"gain\": $2/" -e "s/\"regression\": -0.03/\"regression\": $3/" "$D/manifest.in.json" >manifest.json &&
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null
}
order() { python3 -c "import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[\"orders\"][sys.argv[2]][sys.argv[3]], sort_keys=True))" "$@"; }
'
export adapt

test_expect_success 'by default nothing is added (timer.max_sessions = timer.sessions), and the receipt says the round was decided' '
	eval "$setup" && eval "$adapt" && freeze "" 0.05 -0.03 &&
	run canary out --worker "python3 $W/replay.py $D" --workers persistent --quiet >/dev/null &&
	order out/tasks/gain/task.json a adaptive >got &&
	echo "{\"added\": [], \"ended\": \"decided after 3 sessions\", \"max\": 3, \"planned\": 3}" >want && cmp want got &&
	grep -q "\"max_sessions\": 3" out/campaign.json && test ! -e out/tasks/gain/cells/a-off.s4
'

test_expect_success 'an undecided round gets sessions up to timer.max_sessions, interleaved as the round, each with its reason' '
	eval "$setup" && eval "$adapt" && freeze 5 0.0005 -0.0005 &&
	run canary out --worker "python3 $W/replay.py $D" --workers persistent >stdout &&
	grep "^\[3/5\] flat [a-z0-9]* [ab] s[45]/5 added" stdout | sed "s/: passed.*//" >got &&
	printf "%s\n" "[3/5] flat off a s4/5 added" "[3/5] flat mask0 a s4/5 added" "[3/5] flat candidate a s4/5 added" \
		"[3/5] flat off a s5/5 added" "[3/5] flat mask0 a s5/5 added" "[3/5] flat candidate a s5/5 added" \
		"[3/5] flat candidate b s4/5 added" "[3/5] flat mask0 b s4/5 added" "[3/5] flat off b s4/5 added" \
		"[3/5] flat candidate b s5/5 added" "[3/5] flat mask0 b s5/5 added" "[3/5] flat off b s5/5 added" >want &&
	cmp want got &&
	order out/tasks/flat/task.json a sessions >got &&
	echo "{\"baseline\": 5, \"candidate\": 5, \"control\": 5}" >want && cmp want got &&
	python3 - out/tasks/flat/task.json <<PY &&
import json, sys
a = json.load(open(sys.argv[1]))["orders"]["a"]["adaptive"]
assert (a["planned"], a["max"], [s["session"] for s in a["added"]]) == (3, 5, [4, 5]), a
assert a["added"][0]["why"] == ("after 3 sessions: the candidate'"'"'s -0.01% [-0.07%, +0.05%] straddles a stable gain "
                                "(at least gain +0.05% and above the A/A band'"'"'s +0.05%)"), a
assert a["added"][1]["why"] == "after 4 sessions: the A/A band [-0.06%, +0.03%] is 0.10% wide, wider than the smaller threshold 0.05%", a
assert a["ended"] == "timer.max_sessions (5) reached: the A/A band [-0.06%, +0.02%] is 0.08% wide, wider than the smaller threshold 0.05%", a
PY
	for c in off mask0 candidate; do for f in a-$c.s4 a-$c.s5 b-$c.s4 b-$c.s5; do
		test -f out/tasks/flat/cells/$f/timing.jsonl || { echo "no $f"; exit 1; }
	done; test ! -e out/tasks/flat/cells/a-$c.s6; done &&
	grep -q "\"session\": 5" out/tasks/flat/cells/a-candidate.s5/cell.json &&
	grep -q "\"CALIBER_SESSION\": \"5\"" out/tasks/flat/cells/a-candidate.s5/cell.json &&
	order out/tasks/wrong/task.json a adaptive >got &&
	echo "{\"added\": [], \"ended\": \"decided after 3 sessions\", \"max\": 5, \"planned\": 3}" >want && cmp want got &&
	test ! -e out/tasks/wrong/cells/a-off.s4 &&
	grep -q "\"max_sessions\": 5" out/campaign.json &&
	$CALIBER verify out >/dev/null &&
	$CALIBER reaccount out --floor 1 --output d1 >rout && grep -q "^equivalence: holds" rout &&
	# the report wraps at 80 columns, continuing a line indented by 4
	$CALIBER report out | awk '"'"'/^    / { line = line " " substr($0, 5); next } NR > 1 { print line } { line = $0 } END { print line }'"'"' >report &&
	grep -qx "intervals: 95 % over 3 to 5 sessions of one worker process x 7 repeats, 2000 bootstrap resamples (the process is not sampled)" report
'

test_expect_success 'sessions stop being added once the round is decided' '
	eval "$setup" && eval "$adapt" && freeze 5 0.001 -0.001 &&
	run canary out --worker "python3 $W/replay.py $D" --workers persistent --quiet >/dev/null &&
	python3 - out/tasks/gain/task.json <<PY &&
import json, sys
a = json.load(open(sys.argv[1]))["orders"]["a"]
assert a["sessions"]["candidate"] == 4 and [s["session"] for s in a["adaptive"]["added"]] == [4], a
assert a["adaptive"]["ended"] == "decided after 4 sessions", a
PY
	test -d out/tasks/gain/cells/b-off.s4 && test ! -e out/tasks/gain/cells/a-off.s5
'
