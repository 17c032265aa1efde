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

# edited RUN DIR PY: a copy of the committed RUN in DIR, its receipts edited
# by the Python statements PY (j: the task receipt of softmax_rows, c: the
# campaign receipt) and sealed again.
edit='
edited() {
	cp -R "$runs/$1" "$2" && chmod -R u+w "$2" && rm -f "$2/SHA256SUMS" "$2/SEAL" &&
	python3 - "$2" "$3" <<-\PY &&
	import json, sys
	root, code = sys.argv[1], sys.argv[2]
	tp, cp = f"{root}/tasks/softmax_rows/task.json", f"{root}/campaign.json"
	j, c = json.load(open(tp)), json.load(open(cp))
	exec(code)
	for p, d in ((tp, j), (cp, c)):
	    open(p, "w").write(json.dumps(d, indent=2, sort_keys=True) + "\n")
	PY
	"$CALIBER_TOOLS/cbtest" seal "$2"
}
'
export edit

test_expect_success 'extreme ppm (LLONG_MIN, LLONG_MAX) in a receipt: compare and report print them, saturated, without overflow' '
	eval "$edit" &&
	edited canary ext "j[\"orders\"][\"a\"].update(speedup_ppm=-2**63, aa_lo_ppm=-2**63, aa_hi_ppm=2**63 - 1)" &&
	$CALIBER compare "$runs/canary-2026-11-29" ext >out &&
	grep -qx "  round a -0.13% -> -922337203685477.58% (-922337203685477.58%; A/A bands 0.25% / 922337203685477.58%: within the noise)" out &&
	$CALIBER compare ext ext --format json >out.json &&
	python3 -c "import json, sys; t = [t for t in json.load(open(sys.argv[1]))[\"tasks\"] if t[\"task\"] == \"softmax_rows\"][0]; assert t[\"moves\"][\"a\"][\"move_ppm\"] == 0 and t[\"a\"][\"orders\"][\"a\"][\"band_ppm\"] == 2**63 - 1, t" out.json &&
	$CALIBER report ext >report.txt && grep -q "922337203685477.58%" report.txt
'

test_expect_success 'a speedup_ppm that is not an integer is refused, naming the file and field' '
	eval "$edit" && edited canary str "j[\"orders\"][\"a\"][\"speedup_ppm\"] = \"539\"" &&
	printf "caliber: compare: @CWD@/str/tasks/softmax_rows/task.json: orders.a.speedup_ppm: expected an integer, got string\n" >want &&
	expect_refusal 1 want $CALIBER compare "$runs/canary" str
'

test_expect_success 'a campaign receipt that lists a task twice is refused' '
	eval "$edit" && edited canary dup "c[\"tasks\"].append(c[\"tasks\"][0])" &&
	n=$(python3 -c "import json; print(len(json.load(open(\"dup/campaign.json\"))[\"tasks\"]) - 1)") &&
	printf "caliber: compare: @CWD@/dup/campaign.json: tasks[%s]: '"'"'sum_cols'"'"' is listed twice\n" $n >want &&
	expect_refusal 1 want $CALIBER compare "$runs/canary" dup
'
