#!/bin/sh
# Why it got faster (issue 28): per-kernel GPU time from the profiled
# replays (kernels.jsonl) and resources (ir/resources.tsv) in diff, the
# classifier's reason when the time moved in kernels whose converts did not
# change, and reaccount --scope time:P, against the goldens of
# tests/golden/kernels; the refusals.
. "$(dirname "$0")/lib.sh"

spec="$CALIBER_ROOT/tests/golden/kernels/spec.json"
golden="$CALIBER_ROOT/tests/golden/kernels"
basic="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
export spec golden basic

# derived.json without the caliber block and with the case's folder as @CWD@.
derived_py="$T/.derived.py"
export derived_py
cat >"$derived_py" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
d.pop("caliber")
print(json.dumps(d, indent=2, sort_keys=True).replace(os.getcwd() + "/", "@CWD@/"))
PY

test_expect_success 'diff: each kernel s share of the GPU time, its time change and resources; text and JSON are the goldens' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER diff run >out && cmp "$golden/diff.txt" out &&
	$CALIBER diff run --format json >out.json && cmp "$golden/diff.json" out.json
'

test_expect_success 'the matmul_bias_gelu kernel: 98.7% of the time, 1368.0 -> 314.0 µs, regs 232 -> 168, within 1% of the timed median' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER diff run matmul_bias_gelu >out &&
	grep -qx "    time 98.7%/98.7%/94.6% of the cell'"'"'s GPU time, 1368.0 µs -> 314.0 µs per call (-77.0%)" out &&
	grep -qx "    regs 232 -> 168, spills 0, shared 98304 -> 65536, stages 4, warps 8" out &&
	grep -q "baseline 1386.0 µs (99.3% of the timed median)" out &&
	grep -qx "  where it moved: 100% of the GPU time saved in kernels whose converts changed" out
'

test_expect_success 'a G whose time moved in a kernel that kept its converts says so in its sealed reason' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	grep -q "both clear gain +5.00% and the A/A band; faster, mostly in kernels whose converts did not change (98% of the GPU time saved, most in _add_kernel)\"" run/tasks/softmax_rows/task.json &&
	! grep -q "mostly in kernels" run/tasks/matmul_bias_gelu/task.json &&
	$CALIBER diff run softmax_rows >out &&
	grep -qx "  where it moved: faster, mostly in kernels whose converts did not change (98% of the GPU time saved, most in _add_kernel)" out
'

test_expect_success 'the report: What changed gains each kernel s share, time and resources, and names where the time did not follow the converts' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER report run -o r.html >/dev/null &&
	grep -q "<th scope=\"col\">converts b → k</th><th scope=\"col\" class=\"num\">share of GPU time b → k</th><th scope=\"col\" class=\"num\">time b → k</th><th scope=\"col\">resources b → k</th><th scope=\"col\">source line</th>" r.html &&
	grep -q "<td class=\"num\">3 → 1</td><td class=\"num\">98.7% → 94.6%</td><td class=\"num\" title=\"GPU time per call, summed over 2 profiled rows\">1368.0 → 314.0 µs <span class=\"ok\">(-77.0%)</span></td><td class=\"nw\">regs <b>232 → 168</b> · spills 0 · shared <b>98304 → 65536</b> · stages 4 · warps 8</td>" r.html &&
	grep -q "<p id=\"time-moved\">Where the time did not follow the converts, in the profiled replay after the timed samples: <a href=\"#t-softmax_rows\">softmax_rows</a> faster, mostly in kernels whose converts did not change (98% of the GPU time saved, most in _add_kernel).</p>" r.html &&
	python3 "$CALIBER_ROOT/tests/cli/report_check.py" links r.html >/dev/null &&
	$CALIBER report "$CALIBER_ROOT/campaigns/demo-h200/runs/canary" -o old.html >/dev/null &&
	grep -q "<td class=\"num\">3 → 1</td><td class=\"num muted\">—</td><td class=\"num muted\">—</td><td class=\"muted\">—</td>" old.html &&
	! grep -q "time-moved" old.html
'

test_expect_success 'an unjoined replay is left out and said; a row every cell has is what the task compares' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER diff run layer_norm_fwd >out &&
	grep -qx "  GPU time per call, profiled replay of 1 row: baseline 49.2 µs (98.4% of the timed median), control 49.2 µs (98.4% of the timed median), candidate 49.0 µs (98.4% of the timed median); candidate -0.4%" out &&
	grep -qx "  1 profiled replay left out: its kernels could not be joined to their variants" out
'

test_expect_success 'reaccount --scope time:1: equivalence at the sealed floor, which tasks count as sealed, derived.json' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --scope time:1 --output d1 >out &&
	sed "s|@CWD@|$PWD|g" "$golden/time1.stdout" | cmp - out &&
	python3 "$derived_py" d1/derived.json >derived && cmp "$golden/time1.derived.json" derived &&
	grep -v "^layer_norm_fwd," run/matrix.csv >sealed && grep -v "^layer_norm_fwd," d1/matrix.csv >derived &&
	cmp sealed derived &&
	grep -q "^layer_norm_fwd,layer_norm_fwd,C,not-stable,2,2,1," d1/matrix.csv
'

test_expect_success 'reaccount --scope time:25 leaves out a kernel holding 20% of the time: G -> B, and diff measures what the scope counts' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --scope time:25 --output d25 >out &&
	sed "s|@CWD@|$PWD|g" "$golden/time25.stdout" | cmp - out &&
	grep -q "^softmax_rows,softmax_rows,B,no-reduction,0,0,0," d25/matrix.csv &&
	$CALIBER diff d25 softmax_rows >diff &&
	sed -n 2p diff | grep -qx "seal: holds; scope time:25% (a derived run; sealed at launch floor 1); op ttg.convert_layout" &&
	grep -qx "softmax_rows: B no-reduction; converts 0/0/0 in 1 kernel: no ops" diff &&
	grep -qx "  kernel _add_kernel, variant ADD" diff && ! grep -q "kernel _softmax_kernel" diff &&
	$CALIBER diff d25 --format json | python3 -c "import json, sys; assert json.load(sys.stdin)[\"time_share_ppm\"] == 250000"
'

test_expect_success 'reaccount --scope time:0 counts every variant, the input kernel launched once too: the unscoped totals' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --scope time:0 --output d0 >out &&
	printf "%s\n" "equivalence: holds (4 tasks reproduced at the run'"'"'s own floor 1)" \
		"scope time:0%: 3 of 4 tasks count as sealed at floor 1" \
		"matmul_bias_gelu: topology 3/3/1 at floor 1, 7/7/5 at time:0%" \
		"reaccount: time:0%: 0 of 4 tasks changed verdict; wrote $PWD/d0/derived.json, matrix.csv, matrix.md" >want &&
	cmp want out
'

test_expect_success 'a run made without the profiled replay cannot be scoped by time: refused, nothing written' '
	"$CALIBER_TOOLS/cbtest" mkrun "$basic" run &&
	printf "%s\n" "caliber: reaccount: task softmax_rows: cell off: no kernels.jsonl in round a (a run made without the profiled replay)" >want &&
	expect_refusal 1 want $CALIBER reaccount run --scope time:1 --output out &&
	test ! -e out
'

test_expect_success 'a kernels.jsonl that cannot be read: reaccount names file and line; diff says it and goes on' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	chmod -R u+w run && k=run/tasks/softmax_rows/cells/a-candidate/kernels.jsonl &&
	printf "{\"calls\": 0}\n" >>$k && "$CALIBER_TOOLS/cbtest" seal run &&
	printf "%s\n" "caliber: reaccount: task softmax_rows: cell candidate: $PWD/$k:2: row: expected a row name" >want &&
	expect_refusal 1 want $CALIBER reaccount run --scope time:1 --output out && test ! -e out &&
	$CALIBER diff run softmax_rows >diff &&
	grep -qx "  profile: tasks/softmax_rows/cells/a-candidate/kernels.jsonl:2: row: expected a row name" diff &&
	! grep -q "GPU time per call" diff
'

test_expect_success 'a resources.tsv that cannot be read is said; the times are still shown' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	chmod -R u+w run && printf "variant\tkernel\n" >run/tasks/matmul_bias_gelu/cells/a-candidate/ir/resources.tsv &&
	"$CALIBER_TOOLS/cbtest" seal run &&
	$CALIBER diff run matmul_bias_gelu >diff &&
	grep -qx "  profile: tasks/matmul_bias_gelu/cells/a-candidate/ir/resources.tsv:1: missing column '"'"'n_regs'"'"'" diff &&
	grep -qx "    regs 232 -> ?, spills 0 -> ?, shared 98304 -> ?, stages 4 -> ?, warps 8 -> ?" diff &&
	grep -q "GPU time per call" diff
'

refusal() {
	test_expect_success "--scope $1 is refused" "
		printf '%s\n' \"caliber: reaccount: --scope: expected time:P, P a percentage from 0 to 100 with at most 4 decimals, got '$1'\" >want &&
		expect_refusal 2 want \$CALIBER reaccount run --scope '$1' --output out && test ! -e out
	"
}
for s in time:abc time:101 time: time:1. time:0.12345 floor:3 time:-1; do
	refusal "$s"
done

test_expect_success '--floor and --scope together are a usage error' '
	printf "caliber: reaccount: --floor N (>= 0) or --scope time:P, one of them, and --output DIR are required\n" >want &&
	expect_refusal 2 want $CALIBER reaccount run --floor 1 --scope time:1 --output out
'
