#!/bin/sh
# Identical by construction (docs/design.md section 19) on the CPU test campaign
# (tests/data/campaign-cpu, workers in tests/workers/): the binary digests a
# cell records beside its launch index, the free A/A of the tasks whose
# measured kernels are identical in every cell, and run --prescreen, which
# times exactly the tasks whose binaries changed. In the canary, gain, flat
# and slow compile other TTGIR in the candidate; same and wrong compile the
# same code in every cell (wrong's candidate fails correctness).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

ident='
# task_is RUN TASK PY_EXPR: the python expression holds for tasks/TASK/task.json (t).
task_is() {
	python3 -c "import json, sys; t = json.load(open(sys.argv[1])); assert $3, json.dumps(t.get(\"identity\"), indent=1)" \
		"$1/tasks/$2/task.json"
}
# cells RUN TASK: the cell folders of a task, one per line.
cells() { ls "$1/tasks/$2/cells" | tr "\n" " "; }
# data_with EDIT: a copy of the campaign data in data/ whose cells.json
# has had the python statement EDIT applied to it (c).
data_with() {
	cp -R "$D" data && python3 -c "import json; c = json.load(open(\"data/cells.json\")); $1; json.dump(c, open(\"data/cells.json\", \"w\"))"
}
aa_row() { tail -1 "$1/matrix.csv" | tr -d "\r"; }
# unwrap: the text report with each line the 80-column report wrapped
# (continued on lines indented by four blanks) joined again.
unwrap() { sed -e :a -e "\$!N;s/\n    / /;ta" -e "P;D"; }
'
export ident

test_expect_success 'every cell records its binaries beside its index; without --prescreen every task is timed and the identical ones are a free A/A' '
	eval "$setup$ident" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	printf "%s\n" task,verdict,code gain,G,stable-gain same,B,no-reduction flat,C,not-stable slow,R,stable-regression \
		wrong,K,candidate-incorrect >want && verdicts out >got && cmp want got &&
	head -1 out/tasks/same/cells/a-off/ir/binaries.tsv | grep -qx "variant	kernel	binary	binary_sha256	code_sha256	ttgir_sha256	launch" &&
	grep -q "^TRANSPOSE	transpose	transpose.cubin	[0-9a-f]\{64\}	[0-9a-f]\{64\}	[0-9a-f]\{64\}	num_ctas=1;num_warps=4;shared=0$" \
		out/tasks/same/cells/a-candidate/ir/binaries.tsv &&
	test ! -e out/tasks/same/cells/a-off.s2/ir/binaries.tsv && test ! -e out/tasks/same/cells/screen-off &&
	task_is out same "t[\"identity\"][\"identical\"] and t[\"identity\"][\"phase\"] == \"a\" and t[\"orders\"][\"a\"][\"present\"]" &&
	task_is out same "t[\"identity\"][\"cells\"][\"candidate\"] == t[\"identity\"][\"cells\"][\"baseline\"]" &&
	task_is out wrong "t[\"identity\"][\"identical\"]" &&
	task_is out gain "not t[\"identity\"][\"identical\"] and t[\"identity\"][\"reason\"] == \"cell candidate measures kernel matmul_bias_gelu, which cell off does not\"" &&
	task_is out flat "t[\"identity\"][\"reason\"] == \"cell candidate measures kernel attention_fwd, which cell off does not\"" &&
	test "$(aa_row out)" = ",,,identical-binaries,,,,,,,,,,,,,,identical binaries: 0 of 2 identical-by-construction tasks exclude zero (round a; nominal 5%)" &&
	grep -qx "identical binaries: 0 of 2 identical-by-construction tasks exclude zero (round a; nominal 5%)" out/matrix.md &&
	grep -q "\"prescreen\": false" out/campaign.json &&
	$CALIBER report out >report.txt && unwrap <report.txt | grep -qx "A/A (identical binaries): 0 of 2 identical-by-construction tasks exclude zero (round a; nominal 5%)" &&
	! grep -q "pre-screen" report.txt
'

test_expect_success 'run --prescreen times exactly the changed tasks: the identical one is B identical-binaries, not timed, its digests the evidence' '
	eval "$setup$ident" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	run canary ps --worker "python3 $W/replay.py $D" --prescreen >stdout &&
	printf "%s\n" task,verdict,code gain,G,stable-gain same,B,identical-binaries flat,C,not-stable slow,R,stable-regression \
		wrong,K,candidate-incorrect >want && verdicts ps >got && cmp want got &&
	test "$(cells ps same)" = "correctness-candidate correctness-mask0 correctness-off screen-candidate screen-mask0 screen-off " &&
	for t in gain flat slow; do
		test -d ps/tasks/$t/cells/screen-off && test -d ps/tasks/$t/cells/a-candidate.s3 &&
		grep "^$t," out/matrix.csv >a && grep "^$t," ps/matrix.csv >b && cmp a b || { echo "task $t differs"; exit 1; }
	done &&
	test "$(cells ps wrong)" = "$(cells out wrong)" &&
	grep -q "^\[2/5\] same off screen: passed (" stdout && ! grep -q "^\[2/5\] same off a " stdout &&
	grep -qx "\[2/5\] same: B not timed: topology 1 -> 1; the 2 measured kernels of the candidate and the control are identical to the baseline.s: binary, TTGIR without locations and launch configuration, with the same 1 autotune decision" stdout &&
	task_is ps same "t[\"code\"] == \"identical-binaries\" and not t[\"orders\"][\"a\"][\"present\"] and not t[\"orders\"][\"b\"][\"present\"]" &&
	task_is ps same "t[\"identity\"][\"phase\"] == \"screen\" and t[\"identity\"][\"floor\"] == 0 and t[\"cells\"][\"candidate\"][\"phases\"][\"screen\"][\"outcome\"] == \"passed\"" &&
	task_is ps same "sorted(v[\"variant\"] for v in t[\"identity\"][\"cells\"][\"candidate\"]) == [\"FILLRANDOM\", \"TRANSPOSE\"]" &&
	python3 - out/tasks/same/task.json ps/tasks/same/task.json <<-EOF &&
	import json, sys
	timed, screened = (json.load(open(p)) for p in sys.argv[1:])
	for role in ("baseline", "control", "candidate"):
	    assert timed["identity"]["cells"][role] == [k for k in screened["identity"]["cells"][role] if k["variant"] == "TRANSPOSE"]
	    assert "screen" not in timed["cells"][role]["phases"]
	EOF
	cmp ps/tasks/same/cells/screen-off/autotune.jsonl ps/tasks/same/cells/screen-candidate/autotune.jsonl &&
	test ! -s ps/tasks/same/cells/screen-off/timing.jsonl &&
	test "$(aa_row ps)" = ",,,identical-binaries,,,,,,,,,,,,,,identical binaries: 0 of 1 identical-by-construction tasks exclude zero (round a; nominal 5%); 1 not timed (run --prescreen)" &&
	grep -q "\"prescreen\": true" ps/campaign.json &&
	$CALIBER report ps >report.txt && grep -qx "pre-screen on: 1 of 5 tasks not timed (identical binaries)" report.txt &&
	unwrap <report.txt | grep -qx "A/A (identical binaries): 0 of 1 identical-by-construction tasks exclude zero (round a; nominal 5%)" &&
	test "$(ls -d ps/tasks/*/cells/[ab]-* | wc -l)" -eq $(($(ls -d out/tasks/*/cells/[ab]-* | wc -l) - 9))
'

test_expect_success 'verify, reaccount and report read a pre-screened run: at any floor the untimed task stays B identical-binaries' '
	eval "$setup$ident" && make_frozen &&
	run canary ps --worker "python3 $W/replay.py $D" --prescreen --quiet >/dev/null &&
	$CALIBER verify ps >/dev/null &&
	$CALIBER reaccount ps --floor 1 --output d1 >stdout && grep -q "equivalence" stdout &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); assert d[\"equivalence\"][\"holds\"], d[\"equivalence\"]" d1/derived.json &&
	cmp ps/matrix.csv d1/matrix.csv &&
	$CALIBER reaccount ps --floor 0 --output d0 >/dev/null &&
	grep -q "^same,same,B,identical-binaries,1,1,1,,,,,,,,,,,\"not timed: topology 1 -> 1; the 2 measured kernels" d0/matrix.csv &&
	$CALIBER report ps -o report.html && grep -q "<span id=\"prescreen\">on: 1 of 5 tasks not timed (identical binaries)</span>" report.html &&
	$CALIBER report d0 --format md >report.md && grep -q "^| same | \*\*B\*\* identical-binaries | " report.md
'

test_expect_success 'a binary that differs in one variant, one the floor leaves out of round a, is timed; round a then finds the task identical' '
	eval "$setup$ident" && make_frozen &&
	data_with "c[\"tasks\"][\"same\"][\"candidate\"][1][\"binary\"] = \"ptxas -O2\"" &&
	run canary ps --worker "python3 $W/replay.py $PWD/data" --prescreen --quiet >/dev/null &&
	verdicts ps | grep -qx "same,B,no-reduction" && test -d ps/tasks/same/cells/a-candidate &&
	python3 - ps/tasks/same/cells/screen-off/ir/binaries.tsv ps/tasks/same/cells/screen-candidate/ir/binaries.tsv <<-EOF &&
	import sys
	base, cand = ([l.split("\t") for l in open(p).read().splitlines()[1:]] for p in sys.argv[1:])
	assert [r[5] for r in base] == [r[5] for r in cand], "the TTGIR is the same"
	assert base[0][4] != cand[0][4] and base[1][4] == cand[1][4], "one binary differs"
	EOF
	task_is ps same "t[\"identity\"][\"phase\"] == \"a\" and t[\"identity\"][\"identical\"]" &&
	task_is ps same "not t[\"screen_identity\"][\"identical\"] and t[\"screen_identity\"][\"reason\"].startswith(\"kernel _fill_random: its binary differs in cell candidate (code sha256 \")" &&
	test "$(aa_row ps)" = ",,,identical-binaries,,,,,,,,,,,,,,identical binaries: 0 of 2 identical-by-construction tasks exclude zero (round a; nominal 5%)"
'

test_expect_success 'a stand-in tuner that would pick another config in the candidate is caught: replayed it is screened, deciding for itself it is timed' '
	eval "$setup$ident" && make_frozen &&
	run canary ps --worker "python3 $W/replay.py $D" --prescreen --quiet >/dev/null &&
	verdicts ps | grep -qx "same,B,identical-binaries" &&
	run canary rt --worker "python3 $W/retune.py $D same screen" --prescreen --quiet >/dev/null &&
	verdicts rt | grep -qx "same,B,no-reduction" && test -d rt/tasks/same/cells/a-off &&
	grep -q "\"BLOCK\": 256" rt/tasks/same/cells/screen-candidate/autotune.jsonl &&
	run canary rta --worker "python3 $W/retune.py $D same a" --quiet >/dev/null &&
	task_is rta same "not t[\"identity\"][\"identical\"] and t[\"identity\"][\"reason\"].startswith(\"cell candidate\") and \"s autotune decisions differ from cell off\" in t[\"identity\"][\"reason\"]" &&
	test "$(aa_row rta)" = ",,,identical-binaries,,,,,,,,,,,,,,identical binaries: 0 of 1 identical-by-construction tasks exclude zero (round a; nominal 5%)"
'

test_expect_success '--resume runs as the run started: a run started with --prescreen is not resumed without it, nor the other way round' '
	eval "$setup$ident" && make_frozen &&
	set +e; run canary ps --worker "python3 $W/replay.py $D" --prescreen --stop-after 1 --quiet >/dev/null; rc=$?; set -e &&
	test $rc -eq 4 &&
	echo "caliber: run: --resume: $PWD/ps started with --prescreen; resume it the same way" >want &&
	expect_refusal 1 want run canary ps --worker "python3 $W/replay.py $D" --resume --quiet &&
	run canary ps --worker "python3 $W/replay.py $D" --resume --prescreen --quiet >/dev/null &&
	verdicts ps | grep -qx "same,B,identical-binaries" && grep -q "\"prescreen\": true" ps/campaign.json &&
	set +e; run canary pl --worker "python3 $W/replay.py $D" --stop-after 1 --quiet >/dev/null; set -e &&
	echo "caliber: run: --resume: $PWD/pl started without --prescreen; resume it the same way" >want &&
	expect_refusal 1 want run canary pl --worker "python3 $W/replay.py $D" --resume --prescreen --quiet
'

test_expect_success 'shards run with --prescreen merge into the serial pre-screened run; a shard without it is foreign' '
	eval "$setup$ident" && make_frozen &&
	run canary serial --worker "python3 $W/replay.py $D" --prescreen --quiet >/dev/null &&
	run canary s1 --worker "python3 $W/replay.py $D" --prescreen --shard 1/2 --quiet >/dev/null &&
	run canary s2 --worker "python3 $W/replay.py $D" --prescreen --shard 2/2 --quiet >/dev/null &&
	$CALIBER merge s1 s2 --output-root merged >/dev/null && cmp serial/matrix.csv merged/matrix.csv &&
	grep -q "\"prescreen\": true" merged/campaign.json &&
	run canary p2 --worker "python3 $W/replay.py $D" --shard 2/2 --quiet >/dev/null &&
	echo "caliber: merge: $PWD/p2: a foreign shard: its prescreen differs from that of $PWD/s1" >want &&
	expect_refusal 1 want $CALIBER merge s1 p2 --output-root m2
'

test_expect_success 'caliber worker runs the compile-only pass by hand: IR, index and binaries, nothing timed; it has one session' '
	eval "$setup$ident" && make_frozen &&
	cell() {
		c=$1; shift
		TMPDIR=$T $CALIBER worker --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
			--task same --cell $c --phase screen --corpus "$D/corpus" --build-root "$D/compiler" --out task \
			--backends "$CALIBER_ROOT/tests/backends" --worker "python3 $W/replay.py $D" "$@"
	} &&
	cell off >stdout && grep -qx "worker: same off screen: passed ($PWD/task/cells/screen-off)" stdout &&
	test -f task/cells/screen-off/ir/binaries.tsv && test ! -s task/cells/screen-off/timing.jsonl &&
	grep -q "\"CALIBER_PHASE\": \"screen\"" task/cells/screen-off/cell.json &&
	echo "caliber: worker: --session: expected 1 to 1 for phase screen, got 2" >want &&
	expect_refusal 2 want cell off --session 2
'
