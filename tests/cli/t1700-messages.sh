#!/bin/sh
# Messages that say what to do: a typo of a command, an option, a task or a
# backend is answered with the name it most likely misspells ("did you
# mean", by edit distance); a wiring mistake is answered with its remedy.
# Each case asserts the exact message, the exit status, and (where the
# command writes) that nothing was written. Manifest keys are in the
# bad-input catalogue (tests/bad/manifest: threshold-for-thresholds,
# backend-typo, ...).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

run="$CALIBER_ROOT/campaigns/demo-h200/runs/all"
export run

test_expect_success 'a misspelt command: did you mean, in one line (not the whole usage)' '
	printf "%s\n" "caliber: unknown command '"'"'reprot'"'"' (did you mean report?)" >want &&
	expect_refusal 2 want $CALIBER reprot
'

test_expect_success 'a misspelt long option: did you mean, and where the options are' '
	printf "%s\n" "caliber: report: unknown option '"'"'--fromat'"'"' (did you mean --format? see caliber report --help)" >want &&
	expect_refusal 2 want $CALIBER report "$run" --fromat md &&
	printf "%s\n" "caliber: report: unknown option '"'"'--fromat'"'"' (did you mean --format? see caliber report --help)" >want &&
	expect_refusal 2 want $CALIBER report "$run" --fromat=md
'

test_expect_success 'a short option caliber does not have is named (report -O: did you mean -o), and nothing is written' '
	printf "%s\n" "caliber: report: unknown option '"'"'-O'"'"' (did you mean -o? see caliber report --help)" >want &&
	expect_refusal 2 want $CALIBER report "$run" -O x.html &&
	test ! -e x.html &&
	printf "%s\n" "caliber: digest: unknown option '"'"'-x'"'"' (did you mean -h? see caliber digest --help)" >want &&
	expect_refusal 2 want $CALIBER digest -x . &&
	mkdir ./-dir && $CALIBER digest -- -dir >/dev/null
'

test_expect_success 'a misspelt task: did you mean the task of the run' '
	printf "%s\n" "caliber: diff: $run: no task '"'"'matmull'"'"' in this run (did you mean matmul?)" >want &&
	expect_refusal 1 want $CALIBER diff "$run" matmull &&
	printf "%s\n" "caliber: diff: $run: no task '"'"'frobnicate'"'"' in this run (campaign.json lists 32)" >want &&
	expect_refusal 1 want $CALIBER diff "$run" frobnicate
'

test_expect_success 'run without the frozen campaign says: run caliber prepare first' '
	printf "%s\n" "caliber: run: missing --task-matrix FROZEN/task-matrix.json; the manifest and the task matrix are a frozen campaign: run caliber prepare MANIFEST --inventory-dir DIR --output-root FROZEN first, then give FROZEN/<campaign>-<selection>/manifest.json and task-matrix.json" >want &&
	expect_refusal 2 want $CALIBER run --manifest "$CALIBER_ROOT/campaigns/example/manifest.json" --build-root . --corpus . --output-root out &&
	printf "%s\n" "caliber: run: missing --manifest FROZEN/manifest.json, --task-matrix FROZEN/task-matrix.json, --build-root DIR (the compiler'"'"'s root: the folder \`import triton\` resolves to), --corpus DIR (the corpus tree), --output-root DIR (the run root to create); the manifest and the task matrix are a frozen campaign: run caliber prepare MANIFEST --inventory-dir DIR --output-root FROZEN first, then give FROZEN/<campaign>-<selection>/manifest.json and task-matrix.json" >want &&
	expect_refusal 2 want $CALIBER run &&
	expect_empty out
'

test_expect_success 'run with a frozen manifest and no matrix names the matrix beside it' '
	eval "$setup" && make_frozen &&
	printf "%s\n" "caliber: run: missing --task-matrix FROZEN/task-matrix.json (did you mean --task-matrix $PWD/frozen/cpu-test-canary/task-matrix.json?)" >want &&
	expect_refusal 2 want $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --build-root "$D/compiler" \
		--corpus "$D/corpus" --output-root out &&
	expect_empty out
'

test_expect_success 'a backend that is not there: did you mean, what is there, and --backends' '
	eval "$setup" && make_frozen && mkdir mine && cp "$CALIBER_ROOT/tests/backends/empty.json" mine/ &&
	printf "%s\n" "caliber: run: backend '"'"'cpu'"'"': no file $PWD/mine/cpu.json; the backends there: empty; --backends DIR takes backends from another folder" >want &&
	expect_refusal 1 want $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root out --backends mine &&
	expect_empty out &&
	rm mine/empty.json &&
	printf "%s\n" "caliber: run: backend '"'"'cpu'"'"': no file $PWD/mine/cpu.json; no backend there; --backends DIR takes backends from another folder" >want &&
	expect_refusal 1 want $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root out --backends mine &&
	expect_empty out
'

test_expect_success 'a python without pytest fails the targets preflight naming --python, and nothing is written' '
	eval "$setup" && make_frozen &&
	printf "#!/bin/sh\nexec %s -S \"\$@\"\n" "$(command -v $PY)" >nopytest && chmod +x nopytest &&
	! ./nopytest -c "import pytest" 2>/dev/null &&
	set +e; run canary out --python ./nopytest >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 3 &&
	grep -qx "preflight: targets: FAILED: $PWD/nopytest exited with status 1: ModuleNotFoundError: No module named '"'"'pytest'"'"' (this interpreter has no pytest: name one that has it with --python, e.g. /usr/bin/python3 with Debian'"'"'s python3-pytest)" stdout &&
	expect_empty out
'

test_expect_success 'topology of a task folder or a run root says what it is and where the cells are' '
	c="$run/tasks/matmul" &&
	printf "%s\n" "caliber: topology: $c is a task folder, not a cell: its cells are $c/cells/<round>-<cell> (a-candidate, a-mask0, a-off, b-candidate, b-mask0, b-off, correctness-candidate, correctness-mask0, correctness-off); later sessions, <round>-<cell>.s<k>, hold no IR" >want &&
	expect_refusal 1 want $CALIBER topology "$c" &&
	printf "%s\n" "caliber: topology: $run is a run root, not a cell: a cell is $run/tasks/<task>/cells/<round>-<cell>" >want &&
	expect_refusal 1 want $CALIBER topology "$run" &&
	$CALIBER topology "$c/cells/a-off" --floor 1 >/dev/null
'

test_expect_success 'a benchmark that is not found because its file does not collect is named with the collection error' '
	cp -R "$D/corpus" corpus && chmod -R u+w corpus &&
	sed -i "1i raise ImportError(\"no GPU here\")" corpus/benchmark/test_ops.py &&
	$CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus corpus $DIRTY >/dev/null &&
	$CALIBER prepare manifest.json --inventory-dir corpus --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	set +e; TMPDIR=$T $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus corpus --output-root out --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY >stdout 2>/dev/null; rc=$?; set -e &&
	test $rc -eq 3 &&
	grep -q "^preflight: targets: FAILED: gain/benchmark: benchmark/test_ops.py::test_perf_gain not found (collecting: benchmark/test_ops.py: E   ImportError: no GPU here); " stdout &&
	expect_empty out
'
