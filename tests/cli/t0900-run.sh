#!/bin/sh
# caliber run on CPU with the test workers of tests/workers/: preflight
# lines, verdicts, seal, both worker modes, every failure path, refusals,
# --stop-after, --resume after SIGKILL at random moments, --fail-on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

test_expect_success 'a canary runs end to end: preflight lines, one verdict per task, a seal that verifies' '
	eval "$setup" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" >stdout &&
	for c in binding sources imports device-count targets device-idle plugin-plan output-root confinement; do
		grep -q "^preflight: $c: ok" stdout || { echo "no ok for $c"; exit 1; }
	done &&
	printf "%s\n" task,verdict,code gain,G,stable-gain same,B,no-reduction flat,C,not-stable slow,R,stable-regression \
		wrong,K,candidate-incorrect >want &&
	verdicts out >got && cmp want got &&
	$CALIBER verify out >/dev/null &&
	grep -qx "run: 5 tasks, sealed $PWD/out" stdout
'

test_expect_success 'correctness options (FlagGems'"'"' --quick) come before the file: the targets check finds the file after them' '
	eval "$setup" &&
	python3 -c "import json, sys; m = json.load(open(sys.argv[1])); m[\"workloads\"][0][\"correctness\"] = {\"options\": [\"-q\", \"--tb=short\"]}; m[\"workloads\"][0][\"reason\"] = \"quieter correctness\"; json.dump(m, open(\"m.in.json\", \"w\"))" "$D/manifest.in.json" &&
	$CALIBER pin m.in.json -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null &&
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	python3 -c "import json, sys; t = json.load(open(sys.argv[1]))[\"tasks\"][0]; assert t[\"correctness_args\"][:3] == [\"-q\", \"--tb=short\", \"tests/test_ops.py\"], t" frozen/cpu-test-canary/task-matrix.json &&
	run canary out --worker "python3 $W/replay.py $D" >stdout &&
	grep -q "^preflight: targets: ok" stdout &&
	grep -q "\"-q\"" out/tasks/gain/cells/correctness-off/cell.json
'

test_expect_success 'receipts record argv, environment overlay, plan, outcome and times' '
	eval "$setup" && make_frozen && run canary out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	c=out/tasks/gain/cells/a-candidate/cell.json &&
	grep -q "\"outcome\": \"passed\"" $c && grep -q "\"mode\": \"session\"" $c &&
	grep -q "\"CALIBER_DEMO_RLC_PHASE_MASK\": \"3\"" $c && grep -q "\"TRITON_CACHE_DIR\"" $c &&
	grep -q "\"caliber_pytest.ir_meta\"" $c && grep -q "\"wall_ns\"" $c &&
	grep -q "\"benchmark/test_ops.py::test_perf_gain\"" $c &&
	grep -q "\"CALIBER_AUTOTUNE_MODE\": \"replay\"" $c &&
	grep -q "\"CALIBER_AUTOTUNE_MODE\": \"record\"" out/tasks/gain/cells/a-off/cell.json &&
	grep -q "\"status\": \"complete\"" out/campaign.json && grep -q "\"preflight\"" out/campaign.json &&
	python3 -c "import json, sys; j = json.load(open(sys.argv[1])); assert j[\"bootstrap\"] == {\"resamples\": 2000}, j" out/campaign.json &&
	python3 -c "import json, sys; j = json.load(open(sys.argv[1])); assert 0 < j[\"reply_ns\"] <= j[\"wall_ns\"], j" $c &&
	python3 -c "import json, sys; o = json.load(open(sys.argv[1]))[\"orders\"]; assert o[\"a\"][\"resamples\"] == o[\"b\"][\"resamples\"] == 2000, o" out/tasks/gain/task.json &&
	test -f out/tasks/gain/cells/b-off/cell.json && test ! -e out/tasks/same/cells/b-off
'

test_expect_success 'each request runs in a worker of its own, started ahead (the default); --workers persistent keeps one per cell; --isolate task starts each cold' '
	eval "$setup" && make_frozen &&
	run canary s --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	run canary p --worker "python3 $W/replay.py $D" --quiet --workers persistent >/dev/null &&
	run canary i --worker "python3 $W/replay.py $D" --quiet --isolate task >/dev/null &&
	pids() { cat $1/tasks/*/cells/*-candidate/worker.log | sed -n "s/.* pid //p" | sort -u | wc -l; } &&
	test "$(pids p)" = 1 && test "$(pids s)" -ge 13 && test "$(pids i)" -ge 13 &&
	grep -q "\"mode\": \"persistent\"" p/tasks/gain/cells/a-off/cell.json &&
	grep -q "\"mode\": \"isolate\"" i/tasks/gain/cells/a-off/cell.json &&
	python3 - s i <<PY &&
import glob, json, sys
# session mode: every worker but the first of each cell was started before its request
ahead = [json.load(open(f))["worker"]["started_ahead_ms"] for f in glob.glob(sys.argv[1] + "/tasks/same/cells/*/cell.json")]
assert len(ahead) >= 9 and all(a > 0 for a in ahead), ahead
assert all(json.load(open(f))["worker"]["started_ahead_ms"] == 0 for f in glob.glob(sys.argv[2] + "/tasks/*/cells/*/cell.json"))
camp = json.load(open(sys.argv[1] + "/campaign.json"))["worker"]
assert camp["mode"] == "session" and camp["prestart"] == 3 and camp["session_unit"] == "worker-process", camp
PY
	cmp s/matrix.csv p/matrix.csv && cmp s/matrix.csv i/matrix.csv &&
	printf "caliber: run: --workers: expected session, persistent or task, got '"'"'fresh'"'"'\n" >want &&
	expect_refusal 2 want $CALIBER run --manifest f/m --task-matrix f/x --build-root . --corpus . --output-root x --workers fresh &&
	printf "caliber: run: --prestart: expected 0 to 4, got 5\n" >want &&
	expect_refusal 2 want $CALIBER run --manifest f/m --task-matrix f/x --build-root . --corpus . --output-root x --prestart 5 &&
	test ! -e x
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

test_expect_success '--stop-after with generous timeouts and no history starts work, stops cleanly, and --resume finishes' '
	eval "$setup" && make_frozen &&
	# Each request takes 0.3 s more than the stand-in needs, 100 times less
	# than its timeout (30 s; a task budget of 3m00s, past the deadline):
	# the 75 requests of the first four tasks take 22.5 s, so the fifth cannot
	# start before --stop-after 15 on any machine, and the first starts,
	# nothing being measured yet. One worker process per cell, so that the
	# stand-in'"'"'s own time, not Python'"'"'s start, makes up most of a task.
	# What was started and what not is checked against the times the run
	# recorded (plan_check.py), never against a clock.
	{ run canary out --worker "python3 $W/replay.py $D --cell-s 0.3" --workers persistent --stop-after 15 >stdout 2>&1
	  test $? -eq 4; } &&
	 test -f out/tasks/gain/cells/correctness-off/cell.json && test ! -e out/tasks/wrong &&
	test ! -e out/SHA256SUMS &&
	python3 "$CALIBER_ROOT/tests/cli/plan_check.py" stdout out frozen/cpu-test-canary/task-matrix.json &&
	run canary out --worker "python3 $W/replay.py $D" --resume --quiet >/dev/null &&
	printf "%s\n" task,verdict,code gain,G,stable-gain same,B,no-reduction flat,C,not-stable slow,R,stable-regression \
		wrong,K,candidate-incorrect >want &&
	verdicts out >got && cmp want got && $CALIBER verify out >/dev/null
'

test_expect_success 'a resumed run plans by the tasks measured so far, scaled by their budgets' '
	eval "$setup" && make_frozen &&
	# caliber is killed when the baseline'"'"'s worker (one process per cell here,
	# which counts its requests) gets its 8th request, the correctness of task
	# same, gain done; gain'"'"'s receipt then says it took 5000 s (a fixture: the
	# planner reads the time recorded, whatever the machine took).
	{ (run_bg canary out --worker "python3 $W/kill_runner.py $D 8" --workers persistent --quiet) >/dev/null 2>&1 || :; } &&
	test -f out/tasks/gain/task.json && test ! -e out/tasks/same/task.json &&
	chmod u+w out/tasks/gain out/tasks/gain/task.json &&
	python3 -c "import json, sys; p = sys.argv[1]; t = json.load(open(p)); t[\"wall_ns\"] = 5000 * 10**9; json.dump(t, open(p, \"w\"), indent=2, sort_keys=True)" \
		out/tasks/gain/task.json &&
	# the receipt was fixed when gain ended (docs/formats.md, "Fixed
	# evidence"): the fixture changes its digest in the ledger too, or the
	# seal would name the change
	sed -i "s|^[0-9a-f]*  tasks/gain/task.json\$|$(sha256sum <out/tasks/gain/task.json | cut -c1-64)  tasks/gain/task.json|" \
		out/fixed.sha256 &&
	{ run canary out --worker "python3 $W/replay.py $D" --resume --stop-after 600 >stdout 2>&1; test $? -eq 4; } &&
	grep -E "^(not started|stopped)" stdout | sed -E "s/, [0-9hms]+ (are|is) left before/, L left before/" >got &&
	for t in same flat slow wrong; do
		echo "not started: task $t needs about 1h23m by the 1 task measured so far in this run, scaled by budget (1h23m for 3m00s of budget), L left before the deadline"
	done >want &&
	echo "stopped after 1 of 5 tasks: 4 not done before the deadline; continue with --resume" >>want &&
	cmp want got && grep -qx "resume: moved the interrupted same aside to interrupted/same-1" stdout &&
	test ! -e out/tasks/same &&
	{ run canary out --worker "python3 $W/replay.py $D" --resume --stop-after 600 --json-progress >events; test $? -eq 4; } &&
	
	python3 - events <<PY &&
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
skipped = [e for e in ev if e.get("event") == "not-started"]
assert [e["task"] for e in skipped] == ["same", "flat", "slow", "wrong"], skipped
assert all(e["expected_ms"] == 5000000 and e["basis"] == "so-far" for e in skipped), skipped
stop = [e for e in ev if e.get("event") == "stopped"]
assert stop and stop[0]["tasks_done"] == 1 and stop[0]["tasks"] == 5, stop
PY
	run canary out --worker "python3 $W/replay.py $D" --resume --quiet >/dev/null &&
	verdicts out | grep -qx "wrong,K,candidate-incorrect" && $CALIBER verify out >/dev/null
'

# history_run OUT MANIFEST TASK=TIME...: a sealed run (cbtest mkrun) of the
# CPU campaign whose task times are fixtures: TIME is the task.json wall_ns
# in ms, or cells:C:A, its cells' only (correctness C ms, round a A ms).
history_spec='
history_run() {
	out=$1; man=$2; shift 2
	cp "$D/corpus/inventory_main.csv" inventory_main.csv &&
	python3 - "$man" "$@" >spec.json <<PY &&
import json, sys
tasks = []
for arg in sys.argv[2:]:
    task, time = arg.split("=")
    t = {"id": task, "op": task, "cells": {"off": {"correctness": "passed"}}}
    if time.startswith("cells:"):
        c, a = time.split(":")[1:]
        t["cells"]["off"] = {"correctness": {"outcome": "passed", "wall_ms": int(c)},
                             "a": {"outcome": "passed", "wall_ms": int(a)}}
    else:
        t["wall_ms"] = int(time)
    tasks.append(t)
print(json.dumps({"manifest": sys.argv[1], "selection": "canary", "tasks": tasks}))
PY
	"$CALIBER_TOOLS/cbtest" mkrun spec.json "$out"
}'
export history_spec

test_expect_success '--history plans by the times a sealed run of the campaign recorded: task.json wall_ns, else its cells'"'"'' '
	eval "$setup" && eval "$history_spec" && make_frozen &&
	history_run hist manifest.json gain=1000 same=20000000 flat=cells:3000000:6000000 wrong=1000 &&
	{ run canary out --worker "python3 $W/replay.py $D" --history hist --stop-after 3000 >stdout 2>&1; test $? -eq 4; } &&
	
	grep -E "^(not started|stopped)" stdout | sed -E "s/, [0-9hms]+ (are|is) left before/, L left before/" >got &&
	cat >want <<EOF &&
not started: task same needs about 5h33m by the time it took in the --history run (its task.json wall_ns), L left before the deadline
not started: task flat needs about 2h30m by the time its cells took in the --history run (their cell.json wall_ns), L left before the deadline
stopped after 3 of 5 tasks: 2 not done before the deadline; continue with --resume
EOF
	cmp want got &&
	test -f out/tasks/gain/task.json && test -f out/tasks/slow/task.json && test -f out/tasks/wrong/task.json &&
	test ! -e out/tasks/same && test ! -e out/tasks/flat &&
	run canary out --worker "python3 $W/replay.py $D" --resume --history hist --quiet >/dev/null &&
	printf "%s\n" task,verdict,code gain,G,stable-gain same,B,no-reduction flat,C,not-stable slow,R,stable-regression \
		wrong,K,candidate-incorrect >want &&
	verdicts out >got && cmp want got && $CALIBER verify out >/dev/null &&
	python3 -c "import json, sys; i = json.load(open(sys.argv[1]))[\"invocations\"]; assert [\"--history\" in v[\"argv\"] for v in i] == [True, True], i" out/run.json
'

test_expect_success 'a --history of another campaign, unsealed or altered, is refused before anything runs' '
	eval "$setup" && eval "$history_spec" && make_frozen && history_run hist manifest.json gain=1000 &&
	sed "s/\"campaign\": \"cpu-test\"/\"campaign\": \"cpu-other\"/" manifest.json >other.json &&
	history_run other other.json gain=1000 &&
	printf "caliber: run: --history: @CWD@/other is a run of campaign '"'"'cpu-other'"'"', not '"'"'cpu-test'"'"': its times are not this campaign'"'"'s\n" >want &&
	expect_refusal 1 want run canary out --worker "python3 $W/replay.py $D" --history other --stop-after 600 &&
	cp -R hist unsealed && chmod -R u+w unsealed && rm unsealed/SHA256SUMS &&
	printf "caliber: run: --history: @CWD@/unsealed: not sealed (no SHA256SUMS)\n" >want &&
	expect_refusal 1 want run canary out --worker "python3 $W/replay.py $D" --history unsealed &&
	cp -R hist altered && chmod -R u+w altered &&
	sed -i "s/\"wall_ns\": 1000000000/\"wall_ns\": 1/" altered/tasks/gain/task.json &&
	printf "caliber: run: --history: @CWD@/altered: seal does not hold: changed: tasks/gain/task.json\n" >want &&
	expect_refusal 1 want run canary out --worker "python3 $W/replay.py $D" --history altered &&
	test ! -e out &&
	$CALIBER run --help >help && grep -q -- "--history RUN  *plan the deadline by the times of this sealed run" help &&
	grep -q "plan by what work is expected" help
'

if command -v script >/dev/null 2>&1; then
test_expect_success 'on a terminal, the ETA is what the tasks not done yet are expected to take' '
	eval "$setup" && eval "$history_spec" && make_frozen &&
	history_run hist manifest.json gain=1000 same=3600000 flat=3600000 slow=3600000 wrong=3600000 &&
	# gain (1 s) runs; while it does, the four hours of the others are left.
	{ TMPDIR=$T script -qec "$CALIBER run --manifest frozen/cpu-test-canary/manifest.json \
		--task-matrix frozen/cpu-test-canary/task-matrix.json --build-root $D/compiler --corpus $D/corpus \
		--output-root out --backends $CALIBER_ROOT/tests/backends --python $PY $DIRTY \
		--worker \"python3 $W/replay.py $D\" --history hist --stop-after 3000" typescript >/dev/null; test $? -eq 4; } &&
	
	tr "\r" "\n" <typescript | grep "^.\[K\[1/5\] gain  cell" >live &&
	test "$(wc -l <live)" -ge 12 && ! grep -v "ETA 4h00m$" live &&
	tr "\r" "\n" <typescript | grep -q "not started: task same needs about 1h00m by the time it took in the --history run"
'
else
test_skip 'on a terminal, the ETA is what the tasks not done yet are expected to take' 'no script(1) for a terminal'
fi

test_expect_success 'a --deadline already past starts nothing, saying so for each task; a bad one is a usage error' '
	eval "$setup" && make_frozen &&
	{ run canary out --worker "python3 $W/replay.py $D" --deadline 2000-01-01T00:00:00Z >stdout 2>&1; test $? -eq 4; } &&
	
	for t in gain same flat slow wrong; do
		echo "not started: task $t has no expected time yet (nothing measured yet), and no time is left before the deadline"
	done >want &&
	echo "stopped after 0 of 5 tasks: 5 not done before the deadline; continue with --resume" >>want &&
	grep -E "^(not started|stopped)" stdout >got && cmp want got && test ! -e out/tasks &&
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
		# k = 0 kills when a baseline worker'"'"'s stdin ends: after the last task
		# only for a worker that serves the whole run
		mode=; [ "$k" -eq 0 ] && mode="--workers persistent"
		set +e; (run_bg canary r --worker "python3 $W/kill_runner.py $D $k" --quiet $mode) >/dev/null 2>&1; set -e
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
	test $rc -eq 5 && grep -qx "caliber: run: --fail-on K,X: 1 task has one of these verdicts: .*" err &&
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
	test "$(grep -c "\"event\":\"preflight\"" events)" = 9 &&
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
	PARALLEL_WARMUP_GPUS=1 run canary ahead --worker "python3 $W/replay.py $D" --backends peers --quiet --workers persistent >/dev/null &&
	grep -q "\"caliber_pytest.parallel_warmup\"" ahead/tasks/gain/cells/a-off/cell.json &&
	test -e ahead/tasks/gain/cells/b-off/cell.json &&
	python3 "$check" ahead ahead &&
	run canary unset --worker "python3 $W/replay.py $D" --backends peers --quiet --workers persistent >/dev/null &&
	python3 "$check" none unset &&
	PARALLEL_WARMUP_GPUS=" , " run canary blank --worker "python3 $W/replay.py $D" --backends peers --quiet >/dev/null &&
	python3 "$check" none blank &&
	PARALLEL_WARMUP_GPUS=1 run canary isolated --worker "python3 $W/replay.py $D" --backends peers --quiet --isolate task >/dev/null &&
	python3 "$check" none isolated &&
	PARALLEL_WARMUP_GPUS=1 run canary session --worker "python3 $W/replay.py $D" --backends peers --quiet >/dev/null &&
	python3 "$check" none session &&
	PARALLEL_WARMUP_GPUS=1 run canary noplugin --worker "python3 $W/replay.py $D" --quiet --workers persistent >/dev/null &&
	python3 "$check" none noplugin &&
	cmp ahead/matrix.csv unset/matrix.csv
'
