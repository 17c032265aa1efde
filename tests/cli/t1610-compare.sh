#!/bin/sh
# compare: two sealed runs of the same corpus side by side, what moved and
# whether it moved beyond both runs' A/A bands; the committed canaries of
# 2026-11-29 and 2026-12-01 (the same 8 tasks) against a golden; refusals.
. "$(dirname "$0")/lib.sh"

runs="$CALIBER_ROOT/campaigns/demo-h200/runs"
golden="$CALIBER_ROOT/tests/golden/compare"
spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
export runs golden spec

test_expect_success 'the two committed canaries: text and JSON are the goldens' '
	$CALIBER compare "$runs/canary-2026-11-29" "$runs/canary" >out && cmp "$golden/canary-2026-11-29-vs-canary.txt" out &&
	$CALIBER compare "$runs/canary-2026-11-29" "$runs/canary" --format json >out.json &&
	cmp "$golden/canary-2026-11-29-vs-canary.json" out.json
'

test_expect_success 'a move is relative, and beyond the bands only past both runs'"'"' A/A edges' '
	$CALIBER compare "$runs/canary-2026-11-29" "$runs/canary" --format json >c.json &&
	python3 - "$runs" <<-\PY
	import json, sys
	d = json.load(open("c.json"))
	assert d["summary"]["common"] == 8 and d["summary"]["verdicts_changed"] == 0
	moved = 0
	for t in d["tasks"]:
	    tid = t["task"]
	    for o in ("a", "b"):
	        m = t["moves"][o]
	        if m is None:
	            continue
	        a, b = t["a"]["orders"][o], t["b"]["orders"][o]
	        want = round(((1 + b["speedup_ppm"] / 1e6) / (1 + a["speedup_ppm"] / 1e6) - 1) * 1e6)
	        assert abs(m["move_ppm"] - want) <= 1, (tid, o, m, want)
	        for side, run in (("a", "canary-2026-11-29"), ("b", "canary")):
	            x = json.load(open(f"{sys.argv[1]}/{run}/tasks/{tid}/task.json"))["orders"][o]
	            assert t[side]["orders"][o]["band_ppm"] == max(abs(x["aa_lo_ppm"]), abs(x["aa_hi_ppm"]))
	        beyond = abs(m["move_ppm"]) > a["band_ppm"] and abs(m["move_ppm"]) > b["band_ppm"]
	        assert m["beyond_bands"] == beyond, (tid, o)
	    moved += any(t["moves"][o] and t["moves"][o]["beyond_bands"] for o in ("a", "b"))
	assert moved == d["summary"]["moved"] == 2, moved
	PY
'

test_expect_success 'a canary against the full run: the 8 shared tasks compared, the other 24 listed as only in B' '
	$CALIBER compare "$runs/canary-2026-12-02" "$runs/all" >out &&
	grep -qx "tasks: 8 in both, 0 only in A, 24 only in B; in both, 0 changed verdict, 0 changed topology, 3 moved beyond both A/A bands" out &&
	grep -qx "bmm: only in B" out
'

test_expect_success 'refusals: not a run, a seal that does not hold, a bad format, one run' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run && mkdir empty &&
	printf "caliber: compare: @CWD@/empty: no campaign receipt (campaign.json): not a run root\n" >want &&
	expect_refusal 1 want $CALIBER compare "$runs/canary" empty &&
	chmod -R u+w run && echo >>run/tasks/sum_rows/task.json &&
	printf "caliber: compare: @CWD@/run: seal does not hold: changed: tasks/sum_rows/task.json\n" >want &&
	expect_refusal 1 want $CALIBER compare run "$runs/canary" &&
	printf "caliber: compare: --format: '"'"'md'"'"' is not one of text, json\n" >want &&
	expect_refusal 2 want $CALIBER compare "$runs/canary" "$runs/canary" --format md &&
	printf "caliber: compare: usage: caliber compare RUN_A RUN_B [--format text|json]\n" >want &&
	expect_refusal 2 want $CALIBER compare "$runs/canary"
'
