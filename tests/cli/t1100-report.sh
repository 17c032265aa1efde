#!/bin/sh
# report: text and Markdown against goldens, HTML well formed, self-contained
# and linked to the receipts, derived runs side by side, --fail-on, refusals.
. "$(dirname "$0")/lib.sh"

spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
golden="$CALIBER_ROOT/tests/golden/report"
check="$CALIBER_ROOT/tests/cli/report_check.py"
export spec golden check

test_expect_success 'text of the basic run (one task per verdict) is the golden' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER report run >out &&
	cmp "$golden/basic.txt" out &&
	test "$(awk "length(\$0) > 80" out | grep -v "^ *[^ ]*\$" | wc -l)" -eq 0
'

test_expect_success 'Markdown of the basic run is the golden' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER report run --format md >out &&
	cmp "$golden/basic.md" out
'

test_expect_success 'derived run: sealed and derived verdicts side by side, what changed and why' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --floor 0 --output d0 >/dev/null &&
	$CALIBER report d0 >out &&
	cmp "$golden/basic-floor0.txt" out &&
	grep -q "^gelu_bwd          B->X     0/0/0->4/4/2  a  +0.03 " out &&
	grep -A1 -x "  gelu_bwd: B -> X, topology 0/0/0->4/4/2: topology 4 -> 2 but round b was not" out | tail -1 | grep -qx "    timed" &&
	$CALIBER report d0 --format md >md &&
	grep -qF "| gelu_bwd | **B** → **X** no-round-b-evidence | 0/0/0 → 4/4/2 |" md &&
	$CALIBER report d0 -o d.html >/dev/null &&
	grep -q "<tr class=\"task\" data-task=\"gelu_bwd\" data-verdict=\"X\" data-sealed=\"B\">" d.html &&
	grep -q "Derived at floor 0: <span class=\"badge v-X\">X</span> no-round-b-evidence" d.html &&
	python3 "$check" wellformed d.html >/dev/null
'

test_expect_success 'a derived run finds its run from anywhere; --run names a run that moved' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --floor 0 --output d0 >/dev/null &&
	mkdir sub && cd sub &&
	$CALIBER report ../d0 >out && cmp "$golden/basic-floor0.txt" out &&
	cd .. && mv run moved && cd sub &&
	printf "caliber: report: %s/../d0/derived.json: run.root '"'"'%s/run'"'"' is not a run root (no campaign.json); name it with --run DIR\n" "$PWD" "${PWD%/sub}" >want &&
	expect_refusal 1 want $CALIBER report ../d0 &&
	$CALIBER report ../d0 --run ../moved >out &&
	cmp "$golden/basic-floor0.txt" out
'

test_expect_success 'HTML is well formed, self-contained and links every receipt relative to itself' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	mkdir sub &&
	$CALIBER report run -o sub/r.html >out &&
	grep -qx "report: wrote $PWD/sub/r.html (html, 7 tasks; seal holds (161 files))" out &&
	python3 "$check" wellformed sub/r.html &&
	python3 "$check" links sub/r.html &&
	grep -q "href=\"../run/tasks/softmax_rows/cells/a-off/timing.jsonl\"" sub/r.html &&
	python3 "$check" dom sub/r.html run
'

test_expect_success 'the same run gives the same bytes, in every format' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	for f in text md html; do
		$CALIBER report run --format $f >one.$f && $CALIBER report run --format $f >two.$f &&
		cmp one.$f two.$f || exit 1
	done &&
	! grep -q "$PWD" one.html
'

test_expect_success '-o picks the format from its extension; --format wins' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER report run -o r.md >/dev/null && head -1 r.md | grep -q "^### caliber report: " &&
	$CALIBER report run -o r.html >/dev/null && head -1 r.html | grep -qx "<!DOCTYPE html>" &&
	$CALIBER report run -o r.txt >/dev/null && cmp "$golden/basic.txt" r.txt &&
	$CALIBER report run --output=r2 >/dev/null && cmp "$golden/basic.txt" r2 &&
	$CALIBER report run --format md -o x.html >/dev/null && cmp "$golden/basic.md" x.html
'

test_expect_success 'receipt text is escaped, and a seal that does not hold is said first' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	chmod -R u+w run &&
	python3 -c "import json, sys; p = sys.argv[1]; d = json.load(open(p)); d[\"reason\"] = \"<img src=x onerror=alert(1)> & \\\"q\\\" '"'"'a'"'"' | *b*\"; json.dump(d, open(p, \"w\"))" \
		run/tasks/sum_rows/task.json &&
	$CALIBER report run >txt &&
	sed -n 2,3p txt >seal &&
	printf "%s\n" "seal: does not hold: changed: tasks/sum_rows/task.json (1 changed, 0 missing, 0" \
		"    extra, 0 symlinks, 0 special files)" >want && cmp want seal &&
	$CALIBER report run --format md >md &&
	grep -qF "sum_rows **R**: &lt;img src=x onerror=alert(1)> &amp; \"q\" '"'"'a'"'"' \\| \\*b\\*" md &&
	$CALIBER report run --format html >h.html &&
	! grep -q "<img" h.html &&
	grep -qF "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot; &#39;a&#39; | *b*" h.html &&
	grep -q "class=\"seal-bad\" id=\"seal\">does not hold: changed: tasks/sum_rows/task.json" h.html &&
	python3 "$check" wellformed h.html >/dev/null
'

test_expect_success 'an unsealed run is reported, saying it is not sealed' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	chmod -R u+w run && rm run/SHA256SUMS &&
	$CALIBER report run | sed -n 2p | grep -qx "seal: cannot be checked: not sealed (no SHA256SUMS)"
'

test_expect_success 'exit 0 whatever the verdicts unless --fail-on names one; --help says so' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER report run >/dev/null &&
	$CALIBER report --help >help &&
	grep -q "^Exit status: 0 whatever the verdicts, unless --fail-on VERDICTS" help &&
	printf "caliber: report: --fail-on K,R,X: 4 tasks have one of these verdicts: matmul_bias_gelu (K), cross_entropy (X), transpose (X), sum_rows (R)\n" >want &&
	expect_refusal 5 want $CALIBER report run --fail-on K,R,X &&
	cmp "$golden/basic.txt" "$T/.out" &&
	printf "caliber: report: --fail-on G: 1 task has one of these verdicts: softmax_rows (G)\n" >want &&
	expect_refusal 5 want $CALIBER report run --fail-on G -o r.html &&
	test -s r.html
'

test_expect_success '--fail-on on a run whose seal does not hold exits 6, whatever the verdicts' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	chmod -R u+w run && echo >>run/tasks/gelu_bwd/task.json &&
	$CALIBER report run >/dev/null &&
	printf "%s\n" "caliber: report: --fail-on X: $PWD/run: the seal does not hold: changed: tasks/gelu_bwd/task.json (1 changed, 0 missing, 0 extra, 0 symlinks, 0 special files); a run that does not verify passes no gate" >want &&
	expect_refusal 6 want $CALIBER report run --fail-on X &&
	expect_refusal 6 want $CALIBER report run --fail-on X -o sub/r.html && test ! -e sub
'

test_expect_success '--fail-on checks the seal before any receipt: one cut short fails it as a broken seal, not as bad JSON' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	chmod -R u+w run && head -c 40 run/tasks/gelu_bwd/task.json >cut && cat cut >run/tasks/gelu_bwd/task.json &&
	set +e; $CALIBER report run >/dev/null 2>err; rc=$?; set -e && test $rc -eq 1 &&
	printf "%s\n" "caliber: report: --fail-on X: $PWD/run: the seal does not hold: changed: tasks/gelu_bwd/task.json (1 changed, 0 missing, 0 extra, 0 symlinks, 0 special files); a run that does not verify passes no gate" >want &&
	expect_refusal 6 want $CALIBER report run --fail-on X -o r.md && test ! -e r.md && test ! -s "$T/.out"
'

test_expect_success '--fail-on: a file deleted together with its SHA256SUMS line, or an empty folder added, fails the gate' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run && chmod -R u+w run &&
	f=tasks/gelu_bwd/cells/a-off/timing.jsonl && rm run/$f &&
	grep -v "  $f\$" run/SHA256SUMS >sums && cat sums >run/SHA256SUMS &&
	printf "%s\n" "caliber: report: --fail-on K: $PWD/run: the seal does not hold: SHA256SUMS lists 161 files, SEAL counted 162 when it was sealed: lines were removed; a run that does not verify passes no gate" >want &&
	expect_refusal 6 want $CALIBER report run --fail-on K &&
	rm -r run && "$CALIBER_TOOLS/cbtest" mkrun "$spec" run && chmod u+w run/tasks && mkdir run/tasks/new &&
	printf "%s\n" "caliber: report: --fail-on K: $PWD/run: the seal does not hold: extra: tasks/new/ (0 changed, 0 missing, 1 extra, 0 symlinks, 0 special files); a run that does not verify passes no gate" >want &&
	expect_refusal 6 want $CALIBER report run --fail-on K
'

test_expect_success '--fail-on on a derived run gates on the derived verdicts' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --floor 0 --output d0 >/dev/null &&
	$CALIBER report d0 --fail-on B >/dev/null &&
	printf "caliber: report: --fail-on X: 3 tasks have one of these verdicts: gelu_bwd (X), cross_entropy (X), transpose (X)\n" >want &&
	expect_refusal 5 want $CALIBER report d0 --fail-on X
'

test_expect_success 'the clocks of the sealed H200 canary: the SM range per cell, rows measured again, a rest only when there was one' '
	$CALIBER report "$CALIBER_ROOT/campaigns/demo-h200/runs/canary" >out &&
	grep -qx "  sum_cols: round a 3 sessions 1980 / 1980 / 1980" out &&
	grep -qx "  softmax_rows: round a 3 sessions 1980 / 1980 / 1980; rested 0.3 s" out &&
	grep -A2 "^  matmul_bias_gelu: round a 3 sessions 1980 / 1980 / 1785-1980; round b 3$" out >mbg &&
	printf "%s\n" "  matmul_bias_gelu: round a 3 sessions 1980 / 1980 / 1785-1980; round b 3" \
		"    sessions 1980 / 1980 / 1980; rested 2.6 s; 4 rows measured again, 0 left out" \
		"    as throttled" >want && cmp want mbg
'

test_expect_success 'where the time went: the whole run per phase, then each task by phase and cell, sessions summed' '
	$CALIBER report "$CALIBER_ROOT/campaigns/demo-h200/runs/canary" >out &&
	sed -n "/^wall time/,\$p" out >walls &&
	test "$(sed -n 1p walls)" = "wall time (s; per phase: baseline / control / candidate, sessions summed):" &&
	sed -n 2,3p walls >all &&
	printf "%s\n" "  all tasks, in cells 164.0 s: correctness 75.3, a 75.7, b 12.9; the longest" \
		"    task matmul_bias_gelu 37.7 s" >want && cmp want all &&
	grep -A1 -x "  softmax_rows 11.4 s: correctness 2.8 (0.9 / 0.9 / 0.9), a 8.5 (2.7 / 2.8 /" walls | tail -1 |
		grep -qx "    3.0)" &&
	test "$(grep -c "^  [a-z_]* [0-9.]* s: correctness" walls)" -eq 8 &&
	python3 - "$CALIBER_ROOT/campaigns/demo-h200/runs/canary/tasks/softmax_rows" <<-\PY &&
	import glob, json, sys
	ms = sum(json.load(open(p))["wall_ns"] // 1000000 for p in glob.glob(sys.argv[1] + "/cells/a-*/cell.json"))
	assert len(glob.glob(sys.argv[1] + "/cells/a-*/cell.json")) == 9 and f"{ms // 1000}.{ms % 1000 // 100}" == "8.5", ms
	PY
	$CALIBER report "$CALIBER_ROOT/campaigns/demo-h200/runs/canary" --format md | grep -qx -e "- softmax_rows 11.4 s: correctness 2.8 (0.9 / 0.9 / 0.9), a 8.5 (2.7 / 2.8 / 3.0)" &&
	$CALIBER report "$CALIBER_ROOT/campaigns/demo-h200/runs/canary" -o r.html >/dev/null &&
	grep -q "(the task took 11.4 s)" r.html
'

refusal() {
	test_expect_success "$1" "
		\"\$CALIBER_TOOLS/cbtest\" mkrun \"\$spec\" run && $2 &&
		printf '%s\n' \"$3\" >want &&
		expect_refusal $4 want \$CALIBER report $5
	"
}

refusal 'a folder that is not a run root is refused' 'mkdir empty' \
	"caliber: report: \$PWD/empty: neither a run root (no campaign.json) nor a derived run (no derived.json)" 1 empty
refusal 'a path that is not a directory is refused' 'true' \
	"caliber: report: \$PWD/nope: not a directory" 1 nope
refusal 'an unknown --format is refused' 'true' \
	"caliber: report: --format: '"'"'pdf'"'"' is not one of text, md, html" 2 "run --format pdf"
refusal 'a bad --fail-on is refused' 'true' \
	"caliber: report: --fail-on: '"'"'Q'"'"' is not a verdict (X, K, R, B, G, C)" 2 "run --fail-on K,Q"
refusal '-o inside the run root is refused' 'true' \
	"caliber: report: -o \$PWD/run/r.html: inside the run root \$PWD/run (a sealed run is never written to)" 1 "run -o run/r.html"
refusal '--run on a sealed run is a usage error' 'true' \
	"caliber: report: --run DIR applies to a derived run only, and \$PWD/run holds no derived.json" 2 "run --run run"

test_expect_success 'runs/all at a glance: sorted by verdict and effect, the geometric means, what changed and where' '
	run="$CALIBER_ROOT/campaigns/demo-h200/runs/all" &&
	$CALIBER report "$run" >out &&
	sed -n 5,12p out >head &&
	printf "%s\n" "intervals: 95 % over 3 worker processes x 9 repeats, 2000 bootstrap resamples" \
		"A/A: 0 of 37 control-vs-baseline intervals exclude zero (nominal 5 %)" \
		"A/A (identical binaries): 2 of 27 identical-by-construction tasks exclude zero" "    (round a; nominal 5%)" \
		"speedup, geometric mean over the timed orders: 32 tasks +22.42%; the 5 G tasks" "    +264.93%" \
		"what changed: 5 tasks lost converts, 0 gained: 10 removed, 0 added in 5 kernels" "    at 10 source lines" >want &&
	cmp want head &&
	sed -n "/^task /,/^\$/p" out | grep -v "^ " | sed -n "2,6p" | cut -c1-27 | tr -s " " >g &&
	printf "matmul_bias G \nmatmul G \nmatmul_bias_gelu G \nbmm G \nattention_fwd G \n" >want && cmp want g &&
	test "$(awk "length(\$0) > 80" out | grep -v "^ *[^ ]*\$" | wc -l)" -eq 0 &&
	grep -A2 -x "  matmul: _matmul_kernel 3 -> 1 (1 kept):" out >where &&
	printf "%s\n" "  matmul: _matmul_kernel 3 -> 1 (1 kept):" \
		"    ops/caliber_ops/matmul.py:47: 1 removed (#blocked2 -> #mma)" \
		"    ops/caliber_ops/matmul.py:51: 1 removed (#mma -> #blocked2)" >want && cmp want where &&
	grep -q "^  matmul: round a: 4096x4096x4096 925.80 / 924.13 / 228.98, 2048x2048x2048\$" out &&
	$CALIBER report "$run" --format md >md &&
	grep -qF "| matmul | **G** stable-gain | 3/3/1 | +319.13% [+271.74%, +331.97%] | +322.26% [+315.94%, +331.06%] | graph | 925.80 / 924.13 / 228.98<br>121.68 / 121.48 / 25.93<br>470.37 / 471.19 / 121.21 |" md &&
	$CALIBER report "$run" -o r.html >/dev/null &&
	test "$(grep -c "<tr class=\"changed\" data-task=" r.html)" -eq 10 &&
	grep -qF "<tr><th scope=\"row\">A/A</th><td><span id=\"aa\">A/A: 0 of 37 control-vs-baseline intervals exclude zero (nominal 5 %)</span></td></tr>" r.html &&
	grep -qF "<span id=\"aa-identical\">identical binaries: 2 of 27 identical-by-construction tasks exclude zero (round a; nominal 5%)</span>" r.html &&
	grep -qF "<tr><th scope=\"row\">intervals</th><td>95 % over 3 worker processes × 9 repeats, 2000 bootstrap resamples</td></tr>" r.html &&
	grep -q "<td><code>ops/caliber_ops/matmul.py:47</code></td>" r.html &&
	grep -q "href=\"[^\"]*/runs/all/tasks/matmul/cells/a-candidate/ir/SZLO7ZG5HLOI46USLEK2JY5YA5JPTJ4ANABEHQ4S2EMWRNDPEODQ/_matmul_kernel.ttgir\">candidate</a>" r.html &&
	python3 "$check" links r.html >/dev/null
'

test_expect_success 'a report of a run whose seal does not hold compares no topology ops, and says so' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	chmod -R u+w run && echo >>run/tasks/gelu_bwd/task.json &&
	$CALIBER report run | grep -qx "what changed: not compared, the seal does not hold" &&
	$CALIBER report run --format html | grep -q "Topology ops not compared: the seal does not hold."
'

test_expect_success 'wall time with compile.json: per cell and phase the part Triton spent compiling, - unknown, in text, Markdown and HTML' '
	"$CALIBER_TOOLS/cbtest" mkrun "$CALIBER_ROOT/tests/golden/report/compile/spec.json" run &&
	$CALIBER report run >out &&
	cmp "$golden/compile.txt" out &&
	test "$(awk "length(\$0) > 80" out | wc -l)" -eq 0 &&
	$CALIBER report run --format md >md &&
	cmp "$golden/compile.md" md &&
	$CALIBER report run -o r.html >/dev/null &&
	python3 "$check" wellformed r.html >/dev/null &&
	grep -q "<small class=\"muted\">19.2 s (compile 12.1 s)</small>" r.html &&
	grep -q "<small class=\"muted\">2.1 s (compile -)</small>" r.html &&
	grep -q "<small class=\"muted\">1.5 s (compile -)</small>" r.html
'

test_expect_success 'a run without compile.json shows no compile figures' '
	"$CALIBER_TOOLS/cbtest" mkrun "$CALIBER_ROOT/tests/golden/prepare/history/spec.json" run &&
	$CALIBER report run >out &&
	grep -qx "wall time (s; per phase: baseline / control / candidate, sessions summed):" out &&
	! grep -q compile out
'

test_expect_success 'a compile.json that is not what ir_meta writes fails the report, naming the file and the field; nothing is written' '
	python3 - "$CALIBER_ROOT/tests/golden/report/compile/spec.json" <<-\PY &&
	import json, os, sys
	spec = json.load(open(sys.argv[1]))
	base = os.path.dirname(sys.argv[1])
	for key in ("manifest", "inventory"):
	    spec[key] = os.path.relpath(os.path.join(base, spec[key]))
	spec["tasks"][0]["cells"]["mask0"]["a"]["compile"]["compile_us"] = "12"
	json.dump(spec, open("bad.json", "w"))
	PY
	"$CALIBER_TOOLS/cbtest" mkrun bad.json run &&
	printf "caliber: report: @CWD@/run/tasks/softmax_rows/cells/a-mask0/compile.json: compile_us: expected an integer >= 0\n" >want &&
	expect_refusal 1 want $CALIBER report run -o r.html && test ! -e r.html &&
	rm -r run && "$CALIBER_TOOLS/cbtest" mkrun "$CALIBER_ROOT/tests/golden/report/compile/spec.json" run &&
	chmod -R u+w run &&
	printf "{\"cache_hit_us\": 0, \"cache_hits\": 0, \"compile_us\": 1, \"compile_us\": 2, \"compiles\": 1, \"listened\": true}\n" \
		>run/tasks/softmax_rows/cells/a-off/compile.json &&
	printf "caliber: report: @CWD@/run/tasks/softmax_rows/cells/a-off/compile.json:1:66: duplicate object key near '"'"'\"compile_us\"'"'"'\n" >want &&
	expect_refusal 1 want $CALIBER report run &&
	printf "{\"cache_hit_us\": 0, \"cache_hits\": 0, \"compile_us\": 1, \"compiles\": 1}\n" \
		>run/tasks/softmax_rows/cells/a-off/compile.json &&
	printf "caliber: report: @CWD@/run/tasks/softmax_rows/cells/a-off/compile.json: listened: expected true or false\n" >want &&
	expect_refusal 1 want $CALIBER report run
'
