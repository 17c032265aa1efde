#!/bin/sh
# caliber run on CPU with the test workers of tests/workers/: preflight
# lines, verdicts, seal, both worker modes, every failure path, refusals,
# --stop-after, --resume after SIGKILL at random moments, --fail-on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

test_expect_success 'a canary runs end to end: preflight lines, one verdict per task, a seal that verifies' '
	eval "$setup" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" >stdout &&
	for c in binding sources imports device-count targets device-idle plugin-plan output-root; do
		grep -q "^preflight: $c: ok" stdout || { echo "no ok for $c"; exit 1; }
	done &&
	printf "%s\n" task,verdict,code gain,G,stable-gain same,B,no-reduction flat,C,not-stable slow,R,stable-regression \
		wrong,K,candidate-incorrect >want &&
	verdicts out >got && cmp want got &&
	$CALIBER verify out >/dev/null &&
	grep -qx "run: 5 tasks, sealed $PWD/out" stdout
'

test_expect_success 'receipts record argv, environment overlay, plan, outcome and times' '
	eval "$setup" && make_frozen && run canary out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	c=out/tasks/gain/cells/a-candidate/cell.json &&
	grep -q "\"outcome\": \"passed\"" $c && grep -q "\"mode\": \"persistent\"" $c &&
	grep -q "\"CALIBER_DEMO_RLC_PHASE_MASK\": \"3\"" $c && grep -q "\"TRITON_CACHE_DIR\"" $c &&
	grep -q "\"caliber_pytest.ir_meta\"" $c && grep -q "\"wall_ns\"" $c &&
	grep -q "\"benchmark/test_ops.py::test_perf_gain\"" $c &&
	grep -q "\"CALIBER_AUTOTUNE_MODE\": \"replay\"" $c &&
	grep -q "\"CALIBER_AUTOTUNE_MODE\": \"record\"" out/tasks/gain/cells/a-off/cell.json &&
	grep -q "\"status\": \"complete\"" out/campaign.json && grep -q "\"preflight\"" out/campaign.json &&
	test -f out/tasks/gain/cells/b-off/cell.json && test ! -e out/tasks/same/cells/b-off
'

test_expect_success 'a cell keeps one worker process across tasks; --isolate task starts one per request' '
	eval "$setup" && make_frozen &&
	run canary p --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	run canary i --worker "python3 $W/replay.py $D" --quiet --isolate task >/dev/null &&
	test "$(cat p/tasks/*/cells/*-candidate/worker.log | sort -u | sed -n "s/.* pid //p" | sort -u | wc -l)" = 1 &&
	test "$(cat i/tasks/*/cells/*-candidate/worker.log | sed -n "s/.* pid //p" | sort -u | wc -l)" -ge 13 &&
	grep -q "\"mode\": \"isolate\"" i/tasks/gain/cells/a-off/cell.json &&
	cmp p/matrix.csv i/matrix.csv
'

test_expect_success 'timed sessions: three per cell and round, interleaved ABC ABC ABC, each in its own folder' '
	eval "$setup" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" >stdout &&
	grep "^\[1/5\] gain " stdout | sed "s/: passed.*//" >order &&
	printf "%s\n" "[1/5] gain off correctness" "[1/5] gain mask0 correctness" "[1/5] gain candidate correctness" \
		"[1/5] gain off a s1/3" "[1/5] gain mask0 a s1/3" "[1/5] gain candidate a s1/3" \
		"[1/5] gain off a s2/3" "[1/5] gain mask0 a s2/3" "[1/5] gain candidate a s2/3" \
		"[1/5] gain off a s3/3" "[1/5] gain mask0 a s3/3" "[1/5] gain candidate a s3/3" \
		"[1/5] gain candidate b s1/3" "[1/5] gain mask0 b s1/3" "[1/5] gain off b s1/3" \
		"[1/5] gain candidate b s2/3" "[1/5] gain mask0 b s2/3" "[1/5] gain off b s2/3" \
		"[1/5] gain candidate b s3/3" "[1/5] gain mask0 b s3/3" "[1/5] gain off b s3/3" >want &&
	cmp want order &&
	for c in off mask0 candidate; do for f in a-$c a-$c.s2 a-$c.s3 b-$c b-$c.s2 b-$c.s3; do
		test -f out/tasks/gain/cells/$f/timing.jsonl || { echo "no $f"; exit 1; }
	done; done &&
	grep -q "\"session\": 2" out/tasks/gain/cells/a-candidate.s2/cell.json &&
	grep -q "\"CALIBER_AUTOTUNE_MODE\": \"record\"" out/tasks/gain/cells/a-off/cell.json &&
	grep -q "\"CALIBER_AUTOTUNE_MODE\": \"replay\"" out/tasks/gain/cells/a-off.s2/cell.json &&
	test -d out/tasks/gain/cells/a-off/ir/MBG && test ! -e out/tasks/gain/cells/a-off.s2/ir/MBG &&
	python3 -c "import json, sys; o = json.load(open(sys.argv[1]))[\"orders\"][\"a\"]; assert o[\"sessions\"] == {\"baseline\": 3, \"control\": 3, \"candidate\": 3}, o" \
		out/tasks/gain/task.json &&
	test ! -e out/tasks/same/cells/b-off && $CALIBER verify out >/dev/null
'

test_expect_success 'timer.sessions and a real timer.throttle_floor: two sessions, and the campaign receipt holds the floor in ppm' '
	eval "$setup" &&
	sed -e "s/\"repeats\": 7/\"repeats\": 7, \"sessions\": 2, \"throttle_floor\": 0.85/" "$D/manifest.in.json" >sessions.in.json &&
	$CALIBER pin sessions.in.json -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null &&
	grep -q "\"throttle_floor\": 0.85" manifest.json &&
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	run canary out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	test -d out/tasks/gain/cells/a-off.s2 && test ! -e out/tasks/gain/cells/a-off.s3 &&
	grep -q "\"throttle_floor_ppm\": 850000" out/campaign.json && grep -q "\"sessions\": 2" out/campaign.json &&
	python3 -c "import json, sys; t = json.loads(json.load(open(sys.argv[1]))[\"env\"][\"CALIBER_TIMER\"]); assert t[\"throttle_floor\"] == 0.85, t" out/tasks/gain/cells/a-off/cell.json &&
	$CALIBER verify out >/dev/null
'

test_expect_success 'a stable regression is R whatever the topology, round b confirming it; a B task stably faster says so' '
	eval "$setup" && make_all &&
	run all out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	verdicts out | grep -qx "slower,R,stable-regression" && test -d out/tasks/slower/cells/b-candidate.s3 &&
	verdicts out | grep -qx "faster,B,no-reduction" && test -d out/tasks/faster/cells/b-off &&
	grep -q "yet stably faster in both orders" out/tasks/faster/task.json &&
	grep -q "^slower,slower,R,stable-regression,1,1,1," out/matrix.csv &&
	$CALIBER reaccount out --floor 100 --output d100 >/dev/null &&
	grep -q "^slower,slower,R,stable-regression," d100/matrix.csv
'

test_expect_success 'a hanging worker times out: its task is X, the campaign goes on' '
	eval "$setup" && make_all &&
	run_x all out --worker "python3 $W/hang.py $D slowpoke" --quiet >/dev/null 2>&1 &&
	verdicts out | grep -qx "slowpoke,X,timeout" && verdicts out | grep -qx "gain,G,stable-gain" &&
	grep -q "no reply within 3 s; process group killed" out/tasks/slowpoke/cells/a-candidate/cell.json &&
	$CALIBER verify out >/dev/null
'

test_expect_success 'a crashing worker makes its task X and the next task gets a fresh worker' '
	eval "$setup" && make_all &&
	run_x all out --worker "python3 $W/crash.py $D gain" --quiet >/dev/null 2>&1 &&
	verdicts out | grep -qx "gain,X,harness-failure" && verdicts out | grep -qx "same,B,no-reduction" &&
	grep -q "worker killed by signal 11 without replying" out/tasks/gain/cells/a-mask0/cell.json &&
	{ grep -q "\"fresh\": true" out/tasks/gain/cells/b-mask0/cell.json || grep -q "\"fresh\": true" out/tasks/same/cells/correctness-mask0/cell.json; }
'

test_expect_success 'an unjoinable IR directory makes its task X, naming the variant' '
	eval "$setup" && make_all &&
	run_x all out --worker "python3 $W/unjoinable.py $D same" --quiet >/dev/null 2>&1 &&
	verdicts out | grep -qx "same,X,unjoinable-ir" &&
	grep -q "candidate: variant STRAYVARIANT: no row in ir/index.tsv" out/tasks/same/task.json
'

test_expect_success 'a replay miss makes its task X' '
	eval "$setup" && make_all &&
	run_x all out --worker "python3 $W/replay_miss.py $D flat" --quiet >/dev/null 2>&1 &&
	verdicts out | grep -qx "flat,X,replay-miss"
'

test_expect_success 'a refused batch names every failed check and writes nothing' '
	eval "$setup" && make_frozen && mkdir out && echo keep >out/file &&
	chmod u+w frozen/cpu-test-canary frozen/cpu-test-canary/inventory.csv &&
	sed -i "s/^gain,\(.*\),float16;bfloat16,/gain,\1,float16,/" frozen/cpu-test-canary/inventory.csv &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --corpus "$D/compiler" >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 3 &&
	grep -q "^preflight: binding: FAILED: .*inventory_sha256" stdout &&
	grep -q "^preflight: sources: FAILED: sources.corpus: .* has tree digest" stdout &&
	grep -qx "preflight: output-root: FAILED: $PWD/out exists (use --resume to continue a run there)" stdout &&
	grep -q "^preflight: device-count: ok" stdout &&
	grep -q "^caliber: run: preflight refused the batch: 4 checks failed (binding, sources, targets, output-root); nothing was written$" stderr &&
	test "$(ls out)" = file
'

test_expect_success 'an output root whose parents are missing is created with them; one under a file is refused first' '
	eval "$setup" && make_frozen &&
	run canary a/b/out --worker "python3 $W/replay.py $D" >stdout &&
	grep -qx "preflight: output-root: ok ($PWD/a/b/out will be created, with the folders missing below $PWD)" stdout &&
	$CALIBER verify a/b/out >/dev/null &&
	echo x >file &&
	set +e; run canary file/out --worker "python3 $W/replay.py $D" >stdout 2>&1; rc=$?; set -e &&
	test $rc -eq 3 && grep -qx "preflight: output-root: FAILED: $PWD/file/out cannot be created: $PWD/file is not a folder" stdout &&
	test "$(cat file)" = x
'

test_expect_success 'what the corpus writes to its working directory while targets collects stays out of the corpus' '
	eval "$setup" &&
	cp -R "$D/corpus" corpus && chmod -R u+w corpus &&
	printf "%s\n" "def pytest_terminal_summary(terminalreporter):" \
		"    with open(\"accuracy_result.json\", \"a\") as f:" "        f.write(\"{}\")" >corpus/conftest.py &&
	tree=$($CALIBER digest corpus) &&
	$CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus corpus $DIRTY >/dev/null &&
	$CALIBER prepare manifest.json --inventory-dir corpus --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	TMPDIR=tmp && mkdir tmp && export TMPDIR &&
	$CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus corpus --output-root out --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY --worker "python3 $W/replay.py $D" --stop-after 60 >stdout 2>&1 || test $? -eq 4 &&
	grep -q "^preflight: targets: ok" stdout &&
	test ! -e corpus/accuracy_result.json && test "$($CALIBER digest corpus)" = "$tree" &&
	run_here() { $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus corpus --output-root out --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY --worker "python3 $W/replay.py $D" "$@"; } &&
	run_here --resume --quiet >/dev/null && $CALIBER verify out >/dev/null
'

test_expect_success 'a collector that dies in a long traceback under a relative TMPDIR fails targets in one line, its last' '
	eval "$setup" && make_frozen &&
	printf "%s\n" "#!/bin/sh" "if [ \"\$2\" = caliber_pytest.collect ]; then" \
		"  for i in \$(seq 300); do echo \"  File \\\"collect.py\\\", line \$i, in resolve\" >&2; done" \
		"  echo \"RuntimeError: the collector broke\" >&2; exit 1" "fi" "exec $PY \"\$@\"" >py && chmod +x py &&
	mkdir tmp && set +e &&
	TMPDIR=tmp $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root out --backends "$CALIBER_ROOT/tests/backends" \
		--python ./py $DIRTY --worker "python3 $W/replay.py $D" >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 3 && test ! -e out &&
	{ grep -qx "preflight: targets: FAILED: $PWD/py exited with status 1: RuntimeError: the collector broke" stdout || { grep targets stdout; exit 1; }; } &&
	! grep -q "File \"collect.py\"" stdout stderr
'

test_expect_success 'an output root inside a sealed run is refused' '
	eval "$setup" && make_frozen && run canary out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	set +e; run canary out/tasks/again --worker "python3 $W/replay.py $D" >stdout 2>/dev/null; rc=$?; set -e &&
	test $rc -eq 3 && grep -qx "preflight: output-root: FAILED: $PWD/out/tasks/again: inside the sealed run $PWD/out (a sealed run is never written to)" stdout
'

test_expect_success 'a run into a completed run is refused, naming it sealed; --resume says it is done' '
	eval "$setup" && make_frozen && run canary out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	set +e; run canary out --worker "python3 $W/replay.py $D" >stdout 2>/dev/null; rc=$?; set -e &&
	test $rc -eq 3 &&
	grep -qx "preflight: output-root: FAILED: $PWD/out is a sealed run: it is complete, nothing to resume or overwrite" stdout &&
	run canary out --worker "python3 $W/replay.py $D" --resume >stdout &&
	grep -qx "run: $PWD/out is already complete and sealed; nothing to resume" stdout &&
	$CALIBER verify out >/dev/null
'

test_expect_success '--stop-after starts no task that would end past it: with nothing measured yet, by its budget' '
	eval "$setup" && make_frozen &&
	run canary ref --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --stop-after 60 >stdout 2>&1; rc=$?; set -e &&
	test $rc -eq 4 &&
	grep -Eqx "stopped after 0 of 5 tasks: task gain needs about 6m00s by its budget \(each cell at its timeout\), [0-9]+s (is|are) left before the deadline; continue with --resume" stdout &&
	test ! -e out/SHA256SUMS && test ! -e out/tasks &&
	run canary out --worker "python3 $W/replay.py $D" --resume --quiet >/dev/null &&
	verdicts ref >a && verdicts out >b && cmp a b && $CALIBER verify out >/dev/null
'

test_expect_success 'a resumed run judges the next task by the time similar work took in this run' '
	eval "$setup" && make_frozen &&
	run canary ref --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	# caliber is killed when the baseline gets its 8th request (the correctness of
	# task same, after gain: correctness, 3 sessions of round a and 3 of round b),
	# after gain finished with a baseline correctness of 4 s.
	set +e; (run_bg canary out --worker "python3 $W/kill_runner.py $D 8 gain 4" --quiet) >/dev/null 2>&1; set -e &&
	test -f out/tasks/gain/task.json && test ! -e out/tasks/same/task.json &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --resume --stop-after 5 >stdout 2>&1; rc=$?; set -e &&
	test $rc -eq 4 &&
	grep -Eqx "stopped after 1 of 5 tasks: task same needs about [0-9]+s by the time similar work took in this run, [0-9]+s (is|are) left before the deadline; continue with --resume" stdout &&
	need=$(sed -n "s/.* needs about \([0-9]*\)s .*/\1/p" stdout) && test "$need" -ge 12 &&
	run canary out --worker "python3 $W/replay.py $D" --resume --quiet >/dev/null &&
	verdicts ref >a && verdicts out >b && cmp a b && $CALIBER verify out >/dev/null
'

test_expect_success 'a --deadline already past starts nothing; a bad one is a usage error' '
	eval "$setup" && make_frozen &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --deadline 2000-01-01T00:00:00Z >stdout 2>&1; rc=$?; set -e &&
	test $rc -eq 4 && grep -q "^stopped after 0 of 5 tasks: task gain needs about 6m00s by its budget" stdout &&
	printf "caliber: run: --deadline: '"'"'tomorrow'"'"' is not a UTC time YYYY-MM-DDTHH:MM:SSZ\n" >want &&
	expect_refusal 2 want $CALIBER run --manifest frozen/cpu-test-canary/manifest.json \
		--task-matrix frozen/cpu-test-canary/task-matrix.json --build-root "$D/compiler" --corpus "$D/corpus" \
		--output-root out2 --deadline tomorrow && test ! -e out2
'

test_expect_success 'SIGKILL between any two requests, and after the last task: --resume ends with the same verdicts' '
	eval "$setup" && make_frozen &&
	run canary ref --worker "python3 $W/replay.py $D" --quiet >/dev/null && verdicts ref >want &&
	n=$(find ref/tasks -path "*/cells/*-off/cell.json" | wc -l) && test "$n" -ge 10 &&
	for k in $(seq 0 "$n"); do
		chmod -R u+w r 2>/dev/null || true; rm -rf r
		set +e; (run_bg canary r --worker "python3 $W/kill_runner.py $D $k" --quiet) >/dev/null 2>&1; set -e
		test -d r && test ! -e r/SHA256SUMS || { echo "kill $k: the run was not interrupted"; exit 1; }
		run canary r --worker "python3 $W/replay.py $D" --resume --quiet >resume.out 2>&1 ||
			{ echo "kill $k: resume failed"; cat resume.out; exit 1; }
		$CALIBER verify r >/dev/null || { echo "kill $k: verify failed"; exit 1; }
		verdicts r >got && cmp want got || { echo "kill $k: verdicts differ"; exit 1; }
	done
'

test_expect_success 'SIGKILL at 20 random moments, --resume each time: the run verifies with the same verdicts' '
	eval "$setup" && make_frozen &&
	{ run_bg canary ref --worker "python3 $W/replay.py $D" --quiet >/dev/null 2>&1 & } &&
	pid=$! &&
	n=0 && while [ ! -d ref ] && [ $n -lt 600 ] && kill -0 $pid 2>/dev/null; do sleep 0.05; n=$((n + 1)); done &&
	t0=$(date +%s%N) && { wait $pid || { echo "the reference run failed"; exit 1; }; } && verdicts ref >want &&
	ref_ms=$((($(date +%s%N) - t0) / 1000000)) &&
	for k in $(seq 20); do
		chmod -R u+w r 2>/dev/null || true; rm -rf r
		run_bg canary r --worker "python3 $W/replay.py $D" --quiet >/dev/null 2>&1 &
		pid=$!
		# The kill lands at a random moment after the run root appears,
		# within the time the reference run took from there to its seal;
		# on a fast machine some land after the seal, which --resume must
		# also handle (the moments between requests are covered above).
		n=0; while [ ! -d r ] && [ $n -lt 600 ] && kill -0 $pid 2>/dev/null; do sleep 0.05; n=$((n + 1)); done
		sleep "$(awk -v s=$k -v ms=$ref_ms "BEGIN { srand(s); printf \"%.2f\", rand() * ms / 1000 }")"
		kill -9 $pid 2>/dev/null || true; wait $pid 2>/dev/null || true
		if [ -d r ]; then resume=--resume; else resume=; fi
		run canary r --worker "python3 $W/replay.py $D" $resume --quiet >resume.out 2>&1 ||
			{ echo "kill $k: resume failed"; cat resume.out; ls -la r; exit 1; }
		$CALIBER verify r >/dev/null || { echo "kill $k: verify failed"; exit 1; }
		verdicts r >got && cmp want got || { echo "kill $k: verdicts differ"; exit 1; }
	done
'

test_expect_success '--fail-on turns chosen verdicts into exit status 5; without it a completed campaign exits 0' '
	eval "$setup" && make_frozen &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --quiet --fail-on K,X >/dev/null 2>err; rc=$?; set -e &&
	test $rc -eq 5 && grep -qx "caliber: run: --fail-on K,X: 1 task got one of these verdicts" err &&
	run canary out2 --worker "python3 $W/replay.py $D" --quiet --fail-on X >/dev/null
'

test_expect_success 'caliber worker runs one cell by hand, as run does; a replaying cell needs the baseline first' '
	eval "$setup" && make_frozen &&
	cell() {
		TMPDIR=$T $CALIBER worker --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
			--task gain --cell $1 --phase a --corpus "$D/corpus" --build-root "$D/compiler" --out task \
			--backends "$CALIBER_ROOT/tests/backends" --worker "python3 $W/replay.py $D"
	} &&
	set +e; cell candidate >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 1 && grep -qx "caliber: worker: gain candidate a: error" stderr &&
	grep -q "cannot read the record to replay: .*$PWD/task/cells/a-off/autotune.jsonl" task/cells/a-candidate/worker.log &&
	cell off >/dev/null && cell candidate >stdout &&
	grep -qx "worker: gain candidate a: passed ($PWD/task/cells/a-candidate)" stdout &&
	$CALIBER topology task/cells/a-candidate --floor 1 | grep -q "\"scoped\": 1" &&
	grep -q "\"mode\": \"isolate\"" task/cells/a-candidate/cell.json
'

test_expect_success 'a corpus pinned to a commit its tree does not hold is refused by sources' '
	eval "$setup" &&
	sed -e "s/@COMPILER_TREE@/$($CALIBER digest "$D/compiler")/" -e "s/@HARNESS_COMMIT@/$commit/" \
	    -e "s/\"tree_sha256\": \"@CORPUS_TREE@\"/\"commit\": \"ffffffffffffffffffffffffffffffffffffffff\"/" \
	    "$D/manifest.in.json" >manifest.json &&
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	set +e; run canary out --worker "python3 $W/replay.py $D" >stdout 2>/dev/null; rc=$?; set -e &&
	test $rc -eq 3 &&
	grep -q "^preflight: sources: FAILED: sources.corpus: commit ffffffffffffffffffffffffffffffffffffffff is not in the repository of $D/corpus" stdout &&
	test ! -e out
'

test_expect_success '--json-progress: every line on stdout is one JSON event, the preflights too' '
	eval "$setup" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" --json-progress >events &&
	python3 -c "import json, sys; [json.loads(l) for l in open(sys.argv[1])]" events &&
	test "$(grep -c "\"event\":\"cell-done\"" events)" = "$(find out/tasks -name cell.json | wc -l)" &&
	test "$(grep -c "\"event\":\"task-done\"" events)" = 5 &&
	test "$(grep -c "\"event\":\"preflight\"" events)" = 8 &&
	grep -q "\"check\":\"output-root\",\"detail\":\"$PWD/out will be created\"" events &&
	grep -q "^{\"event\":\"sealed\"," events
'

test_expect_success 'caliber worker refuses to start pytest with an empty plan, naming the backend' '
	eval "$setup" && make_frozen &&
	sed "s/\"backend\": \"cpu\"/\"backend\": \"empty\"/" manifest.json >m2.json &&
	$CALIBER prepare m2.json --inventory-dir "$D/corpus" --output-root f2 --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	printf "caliber: worker: backend '"'"'empty'"'"' declares no capability: the plugin plan is empty; refusing to run pytest without plugins\n" >want &&
	expect_refusal 1 want $CALIBER worker --manifest f2/cpu-test-canary/manifest.json --task-matrix f2/cpu-test-canary/task-matrix.json \
		--task gain --cell off --phase a --corpus "$D/corpus" --build-root "$D/compiler" --out task \
		--backends "$CALIBER_ROOT/tests/backends" --worker "python3 $W/replay.py $D" &&
	test ! -e task
'

test_expect_success 'with PARALLEL_WARMUP_GPUS each persistent request names the next one of its cell; else none does' '
	eval "$setup" && make_frozen && check="$CALIBER_ROOT/tests/cli/warmup_next_check.py" &&
	mkdir peers && sed "s/\"peer_devices\": false/\"peer_devices\": true/" "$CALIBER_ROOT/tests/backends/cpu.json" >peers/cpu.json &&
	PARALLEL_WARMUP_GPUS=1 run canary ahead --worker "python3 $W/replay.py $D" --backends peers --quiet >/dev/null &&
	grep -q "\"caliber_pytest.parallel_warmup\"" ahead/tasks/gain/cells/a-off/cell.json &&
	test -e ahead/tasks/gain/cells/b-off/cell.json &&
	python3 "$check" ahead ahead &&
	run canary unset --worker "python3 $W/replay.py $D" --backends peers --quiet >/dev/null &&
	python3 "$check" none unset &&
	PARALLEL_WARMUP_GPUS=" , " run canary blank --worker "python3 $W/replay.py $D" --backends peers --quiet >/dev/null &&
	python3 "$check" none blank &&
	PARALLEL_WARMUP_GPUS=1 run canary isolated --worker "python3 $W/replay.py $D" --backends peers --quiet --isolate task >/dev/null &&
	python3 "$check" none isolated &&
	PARALLEL_WARMUP_GPUS=1 run canary noplugin --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	python3 "$check" none noplugin &&
	cmp ahead/matrix.csv unset/matrix.csv
'
