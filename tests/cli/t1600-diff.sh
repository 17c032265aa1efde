#!/bin/sh
# diff: which topology ops the candidate removed, added or kept, per
# measured kernel and source line (docs/design.md section 15), against goldens on the
# real TTGIR of tests/data/ttgir and on every committed H200 run; derived
# runs; the exact refusals.
. "$(dirname "$0")/lib.sh"

spec="$CALIBER_ROOT/tests/golden/diff/spec.json"
golden="$CALIBER_ROOT/tests/golden/diff"
runs="$CALIBER_ROOT/campaigns/demo-h200/runs"
export spec golden runs

test_expect_success 'real TTGIR (tests/data/ttgir) in a built run: text and JSON are the goldens' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER diff run >out && cmp "$golden/basic.txt" out &&
	$CALIBER diff run --format json >out.json && cmp "$golden/basic.json" out.json
'

test_expect_success 'the golden run shows each kind: removed, added, kept, matched by kernel, no topology' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER diff run >out &&
	grep -qx "what changed: 4 tasks lost converts, 1 gained some: 7 removed, 2 added, in 5 kernels at 9 source lines; 6 kept" out &&
	grep -qx "gelu_bwd: B no-reduction; converts 1/1/3 in 1 kernel: 2 added, 1 kept" out &&
	grep -qx "  kernel _matmul_bias_gelu_kernel, variants MBG / MBG / MBG2" out &&
	grep -qx "cross_entropy: X timeout; no topology to compare: cell candidate left no IR in round a (no ir/index.tsv)" out &&
	grep -qx "               at loc(#loc1), which cannot be resolved" out &&
	grep -qx "      kept     %acc_142 #blocked -> #mma (baseline line 191), %acc_140 #mma -> #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}> (candidate line 186)" out
'

test_expect_success 'every committed H200 run: the text is the golden; the canary in JSON too' '
	tar -xJf "$runs/../archives/aa.tar.xz" &&
	for r in "$runs/all" "$runs/canary" "$runs/canary-2026-11-29" aa; do
		$CALIBER diff "$r" >out && cmp "$golden/h200-$(basename "$r").txt" out || exit 1
	done &&
	$CALIBER diff "$runs/canary" --format json >out.json && cmp "$golden/h200-canary.json" out.json
'

test_expect_success 'runs/all matmul: the kernel, its share of the GPU time and resources, the two removed converts and their lines in ops/caliber_ops/matmul.py' '
	$CALIBER diff "$runs/all" matmul >out &&
	sed -n "5p;7,8p;10,11p" out >head &&
	printf "%s\n" "matmul: G stable-gain; converts 3/3/1 in 1 kernel: 2 removed, 1 kept" \
		"  where it moved: 100% of the GPU time saved in kernels whose converts changed" \
		"  kernel _matmul_kernel, variant SZLO7ZG5HLOI46USLEK2JY5YA5JPTJ4ANABEHQ4S2EMWRNDPEODQ" \
		"    time 100.0%/100.0%/100.0% of the cell'"'"'s GPU time, 1523.5 µs -> 400.8 µs per call (-73.7%)" \
		"    regs 128 -> 122, spills 0, shared 163840 -> 98304, stages 3, warps 8" >want &&
	cmp want head &&
	grep -A1 -x "    ops/caliber_ops/matmul.py:47: 1 removed" out | grep -qx "      removed  %acc_99 #blocked2 -> #mma (baseline line 134)" &&
	grep -A1 -x "    ops/caliber_ops/matmul.py:51: 1 removed" out | grep -qx "      removed  %acc_102 #mma -> #blocked2 (baseline line 137)" &&
	grep -qx "    ops/caliber_ops/matmul.py:61: 1 kept" out &&
	sed -n "/^matmul:/,/^\$/p" "$golden/h200-all.txt" | sed "\$d" >whole && tail -n +5 out | cmp - whole
'

test_expect_success 'the ops diff lists add up to the counts sealed in every task receipt of every committed run' '
	mkdir committed && for r in all canary canary-2026-11-29; do ln -s "$runs/$r" committed/$r; done &&
	tar -xJf "$runs/../archives/aa.tar.xz" -C committed &&
	for r in all canary canary-2026-11-29 aa; do
		$CALIBER diff committed/$r --format json >"$r.json" || exit 1
	done &&
	python3 - committed <<-\PY
	import json, sys
	for r in ("all", "canary", "canary-2026-11-29", "aa"):
	    d = json.load(open(r + ".json"))
	    assert d["floor"] == 1 and len(d["tasks"]) == len(json.load(open(f"{sys.argv[1]}/{r}/campaign.json"))["tasks"])
	    for t in d["tasks"]:
	        tid = t["task"]
	        sealed = json.load(open(f"{sys.argv[1]}/{r}/tasks/{tid}/task.json"))
	        assert t["verdict"] == sealed["verdict"]
	        for role in ("baseline", "control", "candidate"):
	            assert sealed["topology"][role]["scoped"] == t["count"][role], (r, tid, role)
	        for role, side in (("baseline", "baseline"), ("candidate", "candidate")):
	            ops = sum(1 for k in t["kernels"] for l in k["lines"] for o in l["ops"] if o[side] is not None)
	            assert ops == t["count"][role], (r, tid, role, ops)
	PY
'

test_expect_success 'a derived run: its floor measures more variants; --run names a run that moved' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --floor 0 --output d0 >/dev/null &&
	$CALIBER diff d0 softmax_rows >out && cmp "$golden/basic-floor0-softmax_rows.txt" out &&
	mv run moved &&
	printf "caliber: diff: @CWD@/d0/derived.json: run.root '"'"'@CWD@/run'"'"' is not a run root (no campaign.json); name it with --run DIR\n" >want &&
	expect_refusal 1 want $CALIBER diff d0 &&
	$CALIBER diff d0 softmax_rows --run moved >out && cmp "$golden/basic-floor0-softmax_rows.txt" out
'

test_expect_success 'the same run gives the same bytes from anywhere, with no path of this machine' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER diff run --format json >one && mkdir sub && cd sub && $CALIBER diff ../run --format json >../two && cd .. &&
	cmp one two && ! grep -q "$PWD" one
'

test_expect_success 'refusals: unknown task, not a run, no directory, bad task name, bad format, --run on a sealed run' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run && mkdir empty &&
	printf "caliber: diff: @CWD@/run: no task '"'"'nope'"'"' in this run (campaign.json lists 7)\n" >want &&
	expect_refusal 1 want $CALIBER diff run nope &&
	printf "caliber: diff: @CWD@/empty: neither a run root (no campaign.json) nor a derived run (no derived.json)\n" >want &&
	expect_refusal 1 want $CALIBER diff empty &&
	printf "caliber: diff: @CWD@/gone: not a directory\n" >want &&
	expect_refusal 1 want $CALIBER diff gone &&
	printf "caliber: diff: TASK: '"'"'a/b'"'"' is not a task name (letters, digits, '"'"'.'"'"', '"'"'_'"'"', '"'"'-'"'"')\n" >want &&
	expect_refusal 2 want $CALIBER diff run a/b &&
	printf "caliber: diff: --format: '"'"'html'"'"' is not one of text, json\n" >want &&
	expect_refusal 2 want $CALIBER diff run --format html &&
	printf "caliber: diff: --run DIR applies to a derived run only, and @CWD@/run holds no derived.json\n" >want &&
	expect_refusal 2 want $CALIBER diff run --run run &&
	printf "caliber: diff: usage: caliber diff RUN_ROOT|DERIVED_DIR [TASK] [--format text|json] [--run DIR]\n" >want &&
	expect_refusal 2 want $CALIBER diff run softmax_rows gelu_bwd
'

test_expect_success 'refusals: a seal that does not hold, an unsealed run' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run && chmod -R u+w run &&
	echo >>run/tasks/sum_rows/task.json &&
	printf "caliber: diff: @CWD@/run: seal does not hold: changed: tasks/sum_rows/task.json\n" >want &&
	expect_refusal 1 want $CALIBER diff run sum_rows &&
	test ! -s "$T/.out" &&
	rm run/SHA256SUMS &&
	printf "caliber: diff: @CWD@/run: not sealed (no SHA256SUMS)\n" >want &&
	expect_refusal 1 want $CALIBER diff run
'

test_expect_success 'refusals: a derived run of another campaign' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER reaccount run --floor 0 --output d0 >/dev/null &&
	printf "caliber: diff: @CWD@/d0/derived.json: derived from campaign basic (manifest %.12s), but %s holds campaign demo-h200 (manifest %.12s)\n" \
		"$(python3 -c "import json; print(json.load(open(\"d0/derived.json\"))[\"run\"][\"manifest_sha256\"])")" "$runs/canary" \
		"$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[\"manifest_sha256\"])" "$runs/canary/campaign.json")" >want &&
	expect_refusal 1 want $CALIBER diff d0 --run "$runs/canary"
'

test_expect_success '--help says what it shows and how kernels are matched' '
	$CALIBER diff --help >help &&
	grep -q "^usage: caliber diff RUN_ROOT|DERIVED_DIR \[TASK\] \[--format text|json\] \[--run DIR\]" help &&
	grep -q "matched across cells by kernel name and variant" help &&
	$CALIBER --help | grep -q "^  diff "
'

# resealed: the run's seal made again after a worker's file was edited.
resealed='
resealed() { chmod -R u+w run && rm run/SHA256SUMS run/SEAL && "$CALIBER_TOOLS/cbtest" seal run; }
'
export resealed

test_expect_success 'terminal escape bytes in a TTGIR location name are shown escaped, never passed to the terminal' '
	eval "$resealed" && "$CALIBER_TOOLS/cbtest" mkrun "$spec" run && chmod -R u+w run &&
	sed -i "s/loc(\"acc\"(/loc(\"acc\\x1b]0;pwned\\x07\\x1b[31mRED\\xc2\\x9b2J\"(/g" run/tasks/softmax_rows/cells/a-candidate/ir/ATTN/_attention_fwd_kernel.ttgir &&
	resealed && $CALIBER diff run softmax_rows >out &&
	grep -qxF "               candidate at ops/caliber_ops/attention.py:40:49 (acc\\x1b]0;pwned\\x07\\x1b[31mRED\\xc2\\x9b2J)" out &&
	! grep -q "$(printf "\\033")" out && ! grep -q "$(printf "\\007")" out
'

test_expect_success 'a TTGIR that does not count what its receipt sealed is refused (an emptied candidate TTGIR)' '
	eval "$resealed" && "$CALIBER_TOOLS/cbtest" mkrun "$spec" run && chmod -R u+w run &&
	: >run/tasks/softmax_rows/cells/a-candidate/ir/ATTN/_attention_fwd_kernel.ttgir && resealed &&
	echo "caliber: diff: task softmax_rows: its TTGIR counts 4/4/0, its receipt (tasks/softmax_rows/task.json) sealed 4/4/2: the IR is not what was accounted" >want &&
	expect_refusal 1 want $CALIBER diff run softmax_rows &&
	expect_refusal 1 want $CALIBER diff run
'
