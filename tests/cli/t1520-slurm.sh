#!/bin/sh
# caliber slurm without a cluster: the job script it writes, its submit
# step against a stand-in sbatch that records its arguments, and its shard
# and merge steps run by hand as Slurm would run them (the device from the
# backend's visibility variable), ending in the serial run's matrix; the
# refusals. tests/slurm/run.sh runs the same script on a real Slurm in CI.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

# slurm_job OUT [ARGS...]: caliber slurm for the canary, results to OUT.
setup="$setup"'
slurm_job() {
	out=$1; shift
	$CALIBER slurm --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root "$out" --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY --worker "python3 $W/replay.py $D" "$@"
}
'
export setup

test_expect_success 'sh job.sh submits the array (one GPU per task, %K) and the merge job after it (afterok)' '
	eval "$setup" && make_frozen &&
	slurm_job "$PWD/runs/c" --shards 4 --parallel 2 --partition "gpu'"'"'s" -o job.sh >stdout &&
	grep -qx "slurm: wrote $PWD/job.sh (4 shards); submit it with: sh $PWD/job.sh" stdout &&
	test -x job.sh && sh -n job.sh &&
	mkdir bin && printf "%s\n" "#!/bin/sh" "n=\$(( \$(cat $PWD/count 2>/dev/null || echo 0) + 1 ))" "echo \$n >$PWD/count" \
		"printf \"%s\\\\n\" \"\$*\" >>$PWD/sbatch.args" "echo \"\$((100 + n));cluster\"" >bin/sbatch && chmod +x bin/sbatch &&
	PATH=$PWD/bin:$PATH sh job.sh >submitted &&
	grep -qx "caliber slurm: shards: job 101 (array tasks 0..3), merge: job 102 (after every shard succeeded)" submitted &&
	sed -n 1p sbatch.args >array && sed -n 2p sbatch.args >merge &&
	grep -q -- "--array=0-3%2 --ntasks=1 --gres=gpu:1 --partition=gpu'"'"'s " array &&
	grep -q -- "--export=ALL,CALIBER_SLURM_STEP=shard job.sh$" array &&
	grep -q -- "--output=$PWD/runs/c.shards/slurm-%A_%a.out" array &&
	grep -q -- "--dependency=afterok:101 --partition=gpu'"'"'s " merge &&
	grep -q -- "--export=ALL,CALIBER_SLURM_STEP=merge job.sh$" merge &&
	test -d runs/c.shards
'

test_expect_success 'the array tasks, run as Slurm runs them, each take the device Slurm made visible; the merge job ends with the serial matrix' '
	eval "$setup" && make_frozen && run canary serial --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	slurm_job "$PWD/runs/c" --shards 2 -o job.sh >/dev/null &&
	for a in 0 1; do
		TMPDIR=$T CALIBER_SLURM_STEP=shard SLURM_ARRAY_TASK_ID=$a CALIBER_TEST_VISIBLE_DEVICES=$((a + 5)) sh job.sh >shard$a.out 2>&1 ||
			{ cat shard$a.out; exit 1; }
	done &&
	grep -qx "caliber slurm: shard 1/2 on $(hostname), CALIBER_TEST_VISIBLE_DEVICES=5" shard0.out &&
	grep -q "\"CALIBER_TEST_VISIBLE_DEVICES\": \"6\"" runs/c.shards/2/tasks/same/cells/a-off/cell.json &&
	grep -q "^preflight: device-count: ok (1 device visible with CALIBER_TEST_VISIBLE_DEVICES=6)" shard1.out &&
	TMPDIR=$T CALIBER_SLURM_STEP=shard SLURM_ARRAY_TASK_ID=0 CALIBER_TEST_VISIBLE_DEVICES=5 sh job.sh >again.out 2>&1 &&
	grep -qx "run: $PWD/runs/c.shards/1 is already complete and sealed; nothing to resume" again.out &&
	CALIBER_SLURM_STEP=merge sh job.sh >merge.out &&
	grep -qx "merge: 2 shards, sealed $PWD/runs/c" merge.out &&
	cmp serial/matrix.csv runs/c/matrix.csv && $CALIBER verify runs/c >/dev/null
'

test_expect_success 'a GPU array task that Slurm gave no device fails at once, naming the variable' '
	eval "$setup" && make_frozen && slurm_job "$PWD/runs/c" --shards 2 -o job.sh >/dev/null &&
	set +e; env -u CALIBER_TEST_VISIBLE_DEVICES CALIBER_SLURM_STEP=shard SLURM_ARRAY_TASK_ID=0 sh job.sh >out 2>err; rc=$?; set -e &&
	test $rc -ne 0 && grep -q "Slurm made no device visible (CALIBER_TEST_VISIBLE_DEVICES is not set)" err &&
	test ! -e runs/c.shards/1 &&
	slurm_job "$PWD/runs/d" --shards 2 --resource cpu -o cpu.sh >/dev/null &&
	! grep -q -- "--gres" cpu.sh && ! grep -q -- "--device" cpu.sh
'

test_expect_success 'caliber slurm refuses more shards than tasks, a bad count or resource, and writes no script' '
	eval "$setup" && make_frozen &&
	echo "caliber: slurm: --shards 6: 6 shards of a matrix of 5 tasks: a shard would be empty" >want &&
	expect_refusal 1 want slurm_job runs/c --shards 6 -o job.sh &&
	echo "caliber: slurm: --shards: '"'"'0'"'"' is not a count >= 1" >want &&
	expect_refusal 2 want slurm_job runs/c --shards 0 -o job.sh &&
	echo "caliber: slurm: --parallel: '"'"'-1'"'"' is not a count >= 1" >want &&
	expect_refusal 2 want slurm_job runs/c --shards 2 --parallel -1 -o job.sh &&
	echo "caliber: slurm: --parallel: '"'"'0'"'"' is not a count >= 1" >want &&
	expect_refusal 2 want slurm_job runs/c --shards 2 --parallel 0 -o job.sh &&
	echo "caliber: slurm: --resource: '"'"'tpu'"'"' is not gpu or cpu" >want &&
	expect_refusal 2 want slurm_job runs/c --shards 2 --resource tpu -o job.sh &&
	echo "caliber: slurm: --manifest, --task-matrix, --build-root, --corpus, --output-root, --shards and -o are required" >want &&
	expect_refusal 2 want slurm_job runs/c --shards 2 &&
	test ! -e job.sh && test ! -e runs
'

test_expect_success 'a visibility_env that is no variable name is refused by prepare, run and slurm: it never reaches a job script' '
	eval "$setup" && make_frozen && mkdir evil &&
	python3 -c "
import json, sys
b = json.load(open(sys.argv[1]))
b[\"visibility_env\"] = \"X:-0}\$(touch PWNED) #\"
open(\"evil/cpu.json\", \"w\").write(json.dumps(b, indent=2))" "$CALIBER_ROOT/tests/backends/cpu.json" &&
	bad="$PWD/evil/cpu.json: visibility_env: '"'"'X:-0}\$(touch PWNED) #'"'"' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)" &&
	echo "caliber: slurm: $bad" >want &&
	expect_refusal 1 want $CALIBER slurm --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root "$PWD/runs/c" --backends "$PWD/evil" \
		--python $PY $DIRTY --worker "python3 $W/replay.py $D" --shards 2 -o job.sh &&
	test ! -e job.sh && test ! -e runs &&
	echo "caliber: prepare: $PWD/manifest.json: device.backend: $bad" >want &&
	expect_refusal 1 want $CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root f2 --backends "$PWD/evil" &&
	test ! -e f2 &&
	echo "caliber: run: $bad" >want &&
	expect_refusal 1 want env TMPDIR=$T $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root out --backends "$PWD/evil" \
		--python $PY $DIRTY --worker "python3 $W/replay.py $D" &&
	test ! -e out && test ! -e PWNED
'
