#!/bin/sh
# export: a sealed run as rows for other tools. The committed H200 canary
# against its goldens (JSON and CSV); every figure recomputed from the
# timing rows and task receipts by a reader of its own; CSV and JSON the
# same rows; every task present; the refusals, exactly, with nothing written.
. "$(dirname "$0")/lib.sh"

runs="$CALIBER_ROOT/campaigns/demo-h200/runs"
golden="$CALIBER_ROOT/tests/golden/export"
spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
export runs golden spec

test_expect_success 'the committed H200 canary: JSON and CSV are the goldens, and -o picks the format by extension' '
	$CALIBER export "$runs/canary" >out.json && cmp "$golden/h200-canary.json" out.json &&
	$CALIBER export "$runs/canary" --format csv >out.csv && cmp "$golden/h200-canary.csv" out.csv &&
	$CALIBER export "$runs/canary" -o x.csv >stdout && cmp "$golden/h200-canary.csv" x.csv &&
	test "$(cat stdout)" = "export: wrote $PWD/x.csv (csv, 60 rows)" &&
	$CALIBER export "$runs/canary" -o x.json >/dev/null && cmp "$golden/h200-canary.json" x.json
'

# Every row recomputed from the run's own files: the samples of every
# session pooled, median, min, max and IQR (numpy linear quartiles), the
# row's speedup over the baseline's median, the order's figures and the
# cell's topology from task.json; and the rows cover every (task, order,
# cell, benchmark row) that was timed, in run order.
test_expect_success 'every figure of the export is what the timing rows and task receipts hold' '
	for r in canary canary-2026-11-29; do
	$CALIBER export "$runs/$r" >e.json &&
	python3 - "$runs/$r" <<-\PY || exit 1
	import json, os, sys
	root = sys.argv[1]
	doc = json.load(open("e.json"))
	camp = json.load(open(f"{root}/campaign.json"))
	assert doc["schema"] == "caliber.export/1" and doc["campaign"] == camp["campaign"]
	assert doc["tasks"] == len(camp["tasks"])
	def q(xs, p):
	    h = (len(xs) - 1) * p; i = int(h)
	    return xs[i] if i + 1 >= len(xs) else xs[i] + (h - i) * (xs[i + 1] - xs[i])
	def med(xs):
	    n = len(xs); return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2
	us = lambda ns: round(ns * 10) / 1e4
	want = []
	for t in camp["tasks"]:
	    tid = t["id"]
	    task = json.load(open(f"{root}/tasks/{tid}/task.json"))
	    n0 = len(want)
	    for o in "ab":
	        pooled = {}
	        for role in ("baseline", "control", "candidate"):
	            name = task["cells"][role]["name"]
	            k = 1
	            while True:
	                d = f"{root}/tasks/{tid}/cells/{o}-{name}" + ("" if k == 1 else f".s{k}")
	                if not os.path.exists(f"{d}/timing.jsonl"):
	                    break
	                for line in open(f"{d}/timing.jsonl"):
	                    row = json.loads(line)
	                    pooled.setdefault(row["row"], {}).setdefault(role, []).extend(row["samples_ns"])
	                k += 1
	        for key, cells in pooled.items():
	            for role in ("baseline", "control", "candidate"):
	                if role not in cells:
	                    continue
	                xs = sorted(cells[role]); m = med(xs)
	                fig = task["orders"][o]
	                rs = None if role == "baseline" else round((med(sorted(cells["baseline"])) / m - 1) * 1e6) / 1e4
	                topo = task["topology"][role]
	                want.append({"task": t["id"], "order": o, "role": role, "cell": task["cells"][role]["name"],
	                             "row": key, "samples": len(xs), "median_us": us(m), "min_us": us(xs[0]),
	                             "max_us": us(xs[-1]), "iqr_us": us(q(xs, .75) - q(xs, .25)), "row_speedup_pct": rs,
	                             "speedup_pct": fig["speedup_ppm"] / 1e4, "speedup_lo_pct": fig["lo_ppm"] / 1e4,
	                             "speedup_hi_pct": fig["hi_ppm"] / 1e4, "aa_pct": fig["aa_speedup_ppm"] / 1e4,
	                             "aa_lo_pct": fig["aa_lo_ppm"] / 1e4, "aa_hi_pct": fig["aa_hi_ppm"] / 1e4,
	                             "topology": topo["scoped"] if topo["joinable"] else None,
	                             "verdict": task["verdict"], "code": task["code"], "reason": task["reason"]})
	    assert len(want) > n0, t["id"]
	got = doc["rows"]
	assert len(got) == len(want), (len(got), len(want))
	for g, w in zip(got, want):
	    for k, v in w.items():
	        assert g[k] == v, (w["task"], w["order"], w["role"], w["row"], k, g[k], v)
	PY
	done
'

test_expect_success 'the CSV holds the rows of the JSON, column for column' '
	$CALIBER export "$runs/canary" >e.json && $CALIBER export "$runs/canary" --format csv >e.csv &&
	python3 - <<-\PY
	import csv, json
	doc = json.load(open("e.json"))
	with open("e.csv", newline="") as f:
	    assert f.read().count("\r\n") == len(doc["rows"]) + 1
	rows = list(csv.DictReader(open("e.csv", newline="")))
	assert len(rows) == len(doc["rows"])
	for c, j in zip(rows, doc["rows"]):
	    assert set(c) == set(j), set(c) ^ set(j)
	    for k, v in j.items():
	        if v is None:
	            assert c[k] == "", (k, c[k])
	        elif isinstance(v, bool):
	            assert c[k] == ("true" if v else "false"), (k, c[k])
	        elif isinstance(v, (int, float)):
	            assert float(c[k]) == v, (k, c[k], v)
	        else:
	            assert c[k] == v, (k, c[k], v)
	PY
'

test_expect_success 'a task that timed nothing is one row with its verdict and reason, measurements empty' '
	cp "$(dirname "$spec")"/* . &&
	python3 - <<-\PY &&
	import json
	s = json.load(open("spec.json"))
	for c in s["tasks"][0]["cells"].values():
	    c["a"] = {"outcome": "timeout"}
	    c.pop("b", None)
	json.dump(s, open("spec.json", "w"))
	PY
	"$CALIBER_TOOLS/cbtest" mkrun spec.json run &&
	$CALIBER export run >e.json &&
	python3 - <<-\PY
	import json
	doc = json.load(open("e.json"))
	by = {}
	for r in doc["rows"]:
	    by.setdefault(r["task"], []).append(r)
	assert len(by) == doc["tasks"], (sorted(by), doc["tasks"])
	untimed = [rs[0] for rs in by.values() if rs[0]["order"] is None]
	assert untimed, "the basic run has a task that timed nothing"
	for r in untimed:
	    assert len(by[r["task"]]) == 1 and r["verdict"] and r["reason"]
	    assert all(r[k] is None for k in ("median_us", "speedup_pct", "cell", "row", "topology")), r
	PY
'

test_expect_success 'refusals: a seal that does not hold, a derived run, not a run, a bad format, -o inside the run; nothing written' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run && mkdir empty out &&
	chmod -R u+w run && echo >>run/tasks/sum_rows/task.json &&
	printf "caliber: export: @CWD@/run: seal does not hold: changed: tasks/sum_rows/task.json; only a run that verifies is exported\n" >want &&
	expect_refusal 1 want $CALIBER export run -o out/e.json &&
	$CALIBER reaccount "$runs/canary" --floor 0 --output derived >/dev/null &&
	printf "caliber: export: @CWD@/derived: a derived run (derived.json): export its run root, whose receipts it re-reads\n" >want &&
	expect_refusal 1 want $CALIBER export derived -o out/e.json &&
	printf "caliber: export: @CWD@/empty: no campaign receipt (campaign.json): not a run root\n" >want &&
	expect_refusal 1 want $CALIBER export empty -o out/e.json &&
	printf "caliber: export: --format: '"'"'md'"'"' is not one of json, csv\n" >want &&
	expect_refusal 2 want $CALIBER export "$runs/canary" --format md -o out/e.json &&
	printf "caliber: export: usage: caliber export RUN_ROOT [--format json|csv] [-o FILE]\n" >want &&
	expect_refusal 2 want $CALIBER export &&
	expect_empty out && test ! -e "$runs/canary/e.json" &&
	set +e; $CALIBER export "$runs/canary" -o "$runs/canary/e.json" 2>err; rc=$?; set -e &&
	test $rc -eq 1 && grep -q "inside the run root" err && test ! -e "$runs/canary/e.json"
'
