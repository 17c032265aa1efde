#!/bin/sh
# caliber on a CPU: the documented example (examples/cpu) in one command,
# and what the obvious attempt without a GPU gives. A run ends with its
# verdict counts and where its report is, whatever the progress mode; a run
# with an X task exits 5 naming the first, as the demo does (a shard does
# not: its X is the merged run's); when correctness fails in every cell of
# a task, none of its timing sessions runs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

test_expect_success 'examples/cpu/run.sh: the CPU example in one command gives G, C, B, R and K, sealed, with a report' '
	eval "$setup" && mkdir elsewhere && cd elsewhere &&
	CALIBER=$CALIBER PYTHON=$PY TMPDIR=$T sh "$CALIBER_ROOT/examples/cpu/run.sh" >stdout 2>stderr &&
	printf "%s\n" "verdicts: G 1, C 1, B 1, R 1, K 1, X 0" \
		"report: $PWD/caliber-cpu-example/run/matrix.md (caliber report $PWD/caliber-cpu-example/run -o report.html: the HTML report)" \
		"report: wrote $PWD/caliber-cpu-example/report.html (html, 5 tasks; seal holds (379 files))" \
		"report: $PWD/caliber-cpu-example/report.html" >want &&
	tail -4 stdout | cmp want - &&
	printf "%s\n" task,verdict,code matmul,G,stable-gain layer_norm,C,not-stable softmax,B,no-reduction \
		transpose,R,stable-regression gelu,K,candidate-incorrect >want &&
	verdicts caliber-cpu-example/run >got && cmp want got &&
	grep -qx "preflight: imports: ok (standin -> $CALIBER_ROOT/examples/cpu/compiler/standin/__init__.py)" stdout &&
	grep -q "^preflight: targets: ok (10 selections resolve in $CALIBER_ROOT/examples/cpu/corpus" stdout &&
	$CALIBER verify caliber-cpu-example/run >/dev/null &&
	$CALIBER diff caliber-cpu-example/run matmul | grep -q "^matmul: G stable-gain; converts 3/3/1 in 1 kernel: 2 removed, 1 kept$" &&
	head -1 caliber-cpu-example/report.html | grep -qx "<!DOCTYPE html>" &&
	printf "%s\n" "run.sh: $PWD/caliber-cpu-example exists; give another OUT" >want &&
	set +e; CALIBER=$CALIBER PYTHON=$PY sh "$CALIBER_ROOT/examples/cpu/run.sh" "$PWD/caliber-cpu-example" 2>err; rc=$?; set -e &&
	test $rc -eq 1 && cmp want err
'

test_expect_success 'the obvious CPU attempt (the real session, no Triton): every cell fails correctness, no timing session runs, exit 5 naming the first task' '
	eval "$setup" && make_frozen &&
	set +e; run canary out >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 5 &&
	grep -q "^\[1/5\] gain: X error in cell off, correctness: pytest exit 4: ERROR: caliber_pytest.ir_meta: " stdout &&
	test "$(ls out/tasks/gain/cells)" = "$(printf "correctness-candidate\ncorrectness-mask0\ncorrectness-off")" &&
	test -z "$(ls -d out/tasks/*/cells/a-* out/tasks/*/cells/b-* 2>/dev/null)" &&
	printf "%s\n" "verdicts: G 0, C 0, B 0, R 0, K 0, X 5" \
		"report: $PWD/out/matrix.md (caliber report $PWD/out -o report.html: the HTML report)" >want &&
	tail -2 stdout | cmp want - &&
	reason=$(python3 -c "import json; print(json.load(open(\"out/tasks/gain/task.json\"))[\"reason\"])") &&
	printf "%s\n" "caliber: run: 5 of 5 tasks are X (could not be measured); the first, gain: $reason" >want &&
	cmp want stderr && $CALIBER verify out >/dev/null
'

test_expect_success 'a run with one X task exits 5 naming it; a cell that passes correctness still gets its task timed' '
	eval "$setup" && make_frozen &&
	set +e; run canary out --worker "python3 $W/unjoinable.py $D flat" --quiet >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 5 &&
	printf "%s\n" task,verdict,code gain,G,stable-gain same,B,no-reduction flat,X,unjoinable-ir slow,R,stable-regression \
		wrong,K,candidate-incorrect >want && verdicts out | cmp want - &&
	reason=$(python3 -c "import json; print(json.load(open(\"out/tasks/flat/task.json\"))[\"reason\"])") &&
	printf "%s\n" "caliber: run: 1 of 5 tasks is X (could not be measured); the first, flat: $reason" >want &&
	cmp want stderr &&
	test -d out/tasks/wrong/cells/a-candidate &&
	set +e; run canary fo --worker "python3 $W/replay.py $D" --quiet --fail-on K >/dev/null 2>stderr; rc=$?; set -e &&
	test $rc -eq 5 && grep -qx "caliber: run: --fail-on K: 1 task has one of these verdicts: wrong (K)" stderr
'

test_expect_success '--quiet keeps the verdict line and the report.s path; --json-progress gives them as one event' '
	eval "$setup" && make_frozen &&
	run canary q --worker "python3 $W/replay.py $D" --quiet >stdout &&
	tail -2 stdout | head -1 | grep -qx "verdicts: G 1, C 1, B 1, R 1, K 1, X 0" &&
	tail -1 stdout | grep -qx "report: $PWD/q/matrix.md (caliber report $PWD/q -o report.html: the HTML report)" &&
	run canary j --worker "python3 $W/replay.py $D" --json-progress >events &&
	tail -1 events | grep -qx "{\"event\":\"verdicts\",\"line\":\"verdicts: G 1, C 1, B 1, R 1, K 1, X 0\",\"report\":\"$PWD/j/matrix.md\"}"
'

test_expect_success 'a shard with an X task exits 0: the X is judged in the merged run' '
	eval "$setup" && make_frozen &&
	run canary s1 --worker "python3 $W/unjoinable.py $D flat" --shard 1/1 --quiet >stdout &&
	grep -q "^verdicts: .*, X 1$" stdout &&
	set +e; $CALIBER merge s1 --output-root merged >/dev/null 2>&1; rc=$?; set -e &&
	test $rc -eq 0 && verdicts merged | grep -qx "flat,X,unjoinable-ir"
'

test_expect_success 'resuming a sealed run says so, with its verdicts, and exits 5 when a task is X' '
	eval "$setup" && make_frozen &&
	set +e; run canary out --worker "python3 $W/unjoinable.py $D flat" --quiet >/dev/null 2>&1; set -e &&
	set +e; run canary out --worker "python3 $W/unjoinable.py $D flat" --resume >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 5 &&
	grep -qx "run: $PWD/out is already complete and sealed; nothing to resume" stdout &&
	grep -qx "verdicts: G 1, C 0, B 1, R 1, K 1, X 1" stdout &&
	grep -q "^caliber: run: 1 of 5 tasks is X (could not be measured); the first, flat: " stderr
'
