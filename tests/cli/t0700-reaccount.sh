#!/bin/sh
# reaccount: equivalence at the run's own floor, demotion only at others,
# derived.json and the derived matrix, and every refusal of its inputs.
. "$(dirname "$0")/lib.sh"

spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
golden="$CALIBER_ROOT/tests/golden/reaccount"
export spec golden

test_expect_success 'at the run own floor every count and verdict is reproduced' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --floor 1 --output d1 >out &&
	grep -qx "equivalence: holds (7 tasks reproduced at the run'"'"'s own floor 1)" out &&
	grep -q "floor 1: 0 of 7 tasks changed verdict" out &&
	cmp run/matrix.csv d1/matrix.csv
'

test_expect_success 'floor 0 brings in input kernels: a new reduction becomes X, never G or C' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --floor 0 --output d0 >out &&
	sed "s|@CWD@|$PWD|g" "$golden/floor0.stdout" | cmp - out &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1])); d.pop(\"caliber\"); print(json.dumps(d, indent=2, sort_keys=True))" \
		d0/derived.json | sed "s|$PWD/|@CWD@/|g" >derived &&
	cmp "$golden/floor0.derived.json" derived &&
	cmp "$golden/floor0.matrix.md" d0/matrix.md
'

test_expect_success 'a floor above the measured launches demotes G and C to B and keeps R, which rests on timing alone' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --floor 100 --output d100 >out &&
	grep -q "^softmax_rows: G -> B (candidate topology 0 is not below baseline 0, yet stably faster in both orders (round a +17.65% " out &&
	grep -q "): faster, but not through fewer topology ops)\$" out &&
	grep -qx "layer_norm_fwd: C -> B (candidate topology 0 is not below baseline 0)" out &&
	! grep -q "^sum_rows:" out &&
	grep -q "^sum_rows,sum_rows,R,stable-regression," d100/matrix.csv &&
	grep -q "floor 100: 2 of 7 tasks changed verdict" out &&
	grep -q "^matmul_bias_gelu,matmul_bias_gelu,K," d100/matrix.csv &&
	grep -q "^cross_entropy,cross_entropy,X,timeout," d100/matrix.csv
'

test_expect_success 'the run root is not touched' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --floor 0 --output d0 >/dev/null &&
	$CALIBER verify run >/dev/null
'

refusal() {
	test_expect_success "$1" "
		\"\$CALIBER_TOOLS/cbtest\" mkrun \"\$spec\" run && $2 &&
		printf '%s\n' \"$3\" >want &&
		expect_refusal ${4:-1} want \$CALIBER reaccount run --floor 0 --output $5 &&
		$6
	"
}

refusal 'an output equal to the run root is refused' 'true' \
	"caliber: reaccount: --output \$PWD/run: inside the run root \$PWD/run (a derived run is always written outside it)" 1 run 'true'
refusal 'an output inside the run root is refused' 'true' \
	"caliber: reaccount: --output \$PWD/run/tasks/derived: inside the run root \$PWD/run (a derived run is always written outside it)" 1 run/tasks/derived 'test ! -e run/tasks/derived'
refusal 'an output through a symlink into the run root is refused' 'ln -s run/tasks alias' \
	"caliber: reaccount: --output \$PWD/alias/derived: inside the run root \$PWD/run (a derived run is always written outside it)" 1 alias/derived 'test ! -e run/tasks/derived'
refusal 'an output that climbs back in with .. is refused' 'mkdir -p x' \
	"caliber: reaccount: --output \$PWD/x/../run/d: inside the run root \$PWD/run (a derived run is always written outside it)" 1 x/../run/d 'true'
refusal 'a folder with no campaign receipt is refused' 'chmod -R u+w run && rm run/campaign.json' \
	"caliber: reaccount: \$PWD/run: no campaign receipt (campaign.json): not a run root" 1 out 'test ! -e out'
refusal 'an unsealed run is refused' 'chmod -R u+w run && rm run/SHA256SUMS' \
	"caliber: reaccount: \$PWD/run: not sealed (no SHA256SUMS)" 1 out 'test ! -e out'
refusal 'a tampered run is refused, naming the file' 'chmod -R u+w run && echo >>run/tasks/gelu_bwd/task.json' \
	"caliber: reaccount: \$PWD/run: seal does not hold: changed: tasks/gelu_bwd/task.json" 1 out 'test ! -e out'
refusal 'an output that already holds files is refused' 'mkdir out && echo keep >out/file' \
	"caliber: reaccount: --output \$PWD/out: already exists and is not an empty directory; refusing to overwrite" 1 out 'test "$(cat out/file)" = keep'

test_expect_success 'a receipt its evidence does not reproduce fails equivalence, first task in run order named' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	chmod -R u+w run &&
	sed "s/^  \"verdict\": \"X\"$/  \"verdict\": \"B\"/" run/tasks/transpose/task.json >t &&
	mv t run/tasks/transpose/task.json &&
	sed "s/^  \"verdict\": \"B\"$/  \"verdict\": \"C\"/" run/tasks/gelu_bwd/task.json >t &&
	mv t run/tasks/gelu_bwd/task.json &&
	"$CALIBER_TOOLS/cbtest" seal run &&
	printf "%s\n" "caliber: reaccount: $PWD/run: equivalence fails at the run'"'"'s own floor 1: task gelu_bwd: sealed C (no-reduction), recomputed B (no-reduction)" >want &&
	expect_refusal 1 want $CALIBER reaccount run --floor 0 --output out &&
	printf "%s\n" "equivalence: fails: task gelu_bwd: sealed C (no-reduction), recomputed B (no-reduction)" >want &&
	cmp want "$T/.out" &&
	test ! -e out
'

test_expect_success 'a cell receipt that is not what caliber writes is named with what is wrong, not as a failed equivalence' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	chmod -R u+w run && c=run/tasks/gelu_bwd/cells/a-off/cell.json &&
	sed "s/\"outcome\": \"passed\"/\"outcome\": \"banana\"/" $c >t && mv t $c &&
	"$CALIBER_TOOLS/cbtest" seal run &&
	printf "%s\n" "caliber: reaccount: $PWD/$c: outcome: \"banana\" is not an outcome (one of passed, failed, unsupported, error, timeout, crashed, replay-miss, missing-output)" >want &&
	expect_refusal 1 want $CALIBER reaccount run --floor 0 --output out &&
	test ! -s "$T/.out" && test ! -e out &&
	chmod -R u+w run && rm run/SHA256SUMS && printf "{\"outcome\": \n" >$c && "$CALIBER_TOOLS/cbtest" seal run &&
	printf "%s\n" "caliber: reaccount: $PWD/$c:2:0: unexpected token near end of file" >want &&
	expect_refusal 1 want $CALIBER reaccount run --floor 0 --output out &&
	chmod -R u+w run && rm run/SHA256SUMS && printf "{\"outcome\": \"passed\", \"detail\": 7}\n" >$c && "$CALIBER_TOOLS/cbtest" seal run &&
	printf "%s\n" "caliber: reaccount: $PWD/$c: detail: not a string" >want &&
	expect_refusal 1 want $CALIBER reaccount run --floor 0 --output out && test ! -e out
'

# python3 -c "$set_resamples" RUN CAMP TASK: bootstrap.resamples of RUN's
# campaign receipt set to CAMP and resamples of every timed order of its
# task receipts to TASK ("absent": taken out), for the run to be sealed
# again.
set_resamples='
import glob, json, os, sys
run, camp, task = sys.argv[1:4]
def put(obj, key, value):
    if value == "absent":
        obj.pop(key, None)
    else:
        obj[key] = int(value)
def rewrite(path, change):
    with open(path) as f:
        j = json.load(f)
    change(j)
    os.chmod(path, 0o644)
    with open(path, "w") as f:
        f.write(json.dumps(j, indent=2, sort_keys=True) + "\n")
rewrite(run + "/campaign.json", lambda j: put(j, "bootstrap", "absent") if camp == "absent" else put(j.setdefault("bootstrap", {}), "resamples", camp))
for path in glob.glob(run + "/tasks/*/task.json"):
    rewrite(path, lambda j: [put(o, "resamples", task) for o in j["orders"].values() if o["present"]])
'
export set_resamples

test_expect_success 'the bootstrap resamples come from the receipts: unrecorded is the old default, 2000; another number is used and must agree' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	python3 -c "import json, sys; o = json.load(open(sys.argv[1]))[\"orders\"][\"a\"]; assert o[\"resamples\"] == 2000, o" \
		run/tasks/softmax_rows/task.json &&
	chmod -R u+w run && rm run/SHA256SUMS && python3 -c "$set_resamples" run absent absent && "$CALIBER_TOOLS/cbtest" seal run &&
	$CALIBER reaccount run --floor 1 --output d1 >out && grep -q "^equivalence: holds" out &&
	grep -v "^," run/matrix.csv >want && grep -v "^," d1/matrix.csv >got && cmp want got &&
	chmod -R u+w run && rm run/SHA256SUMS && python3 -c "$set_resamples" run 500 500 && "$CALIBER_TOOLS/cbtest" seal run &&
	$CALIBER reaccount run --floor 1 --output d500 >out && grep -q "^equivalence: holds" out &&
	grep -v "^," d500/matrix.csv >got && ! cmp -s want got &&
	cut -d, -f1-7 want >w7 && cut -d, -f1-7 got >g7 && cmp w7 g7 &&
	chmod -R u+w run && rm run/SHA256SUMS && python3 -c "$set_resamples" run 500 absent && "$CALIBER_TOOLS/cbtest" seal run &&
	printf "%s\n" "caliber: reaccount: $PWD/run: equivalence fails at the run'"'"'s own floor 1: task softmax_rows: round a was sealed with 2000 bootstrap resamples, the campaign receipt says 500" >want &&
	expect_refusal 1 want $CALIBER reaccount run --floor 1 --output x && test ! -e x &&
	chmod -R u+w run && rm run/SHA256SUMS && python3 -c "$set_resamples" run 0 absent && "$CALIBER_TOOLS/cbtest" seal run &&
	printf "%s\n" "caliber: reaccount: $PWD/run/campaign.json: bootstrap.resamples: must be an integer from 1 to 1000000" >want &&
	expect_refusal 1 want $CALIBER reaccount run --floor 1 --output x && test ! -e x
'

test_expect_success 'a missing --floor is a usage error' '
	printf "caliber: reaccount: --floor N (>= 0) or --scope time:P, one of them, and --output DIR are required\n" >want &&
	expect_refusal 2 want $CALIBER reaccount run --output out
'
