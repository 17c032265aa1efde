#!/bin/sh
# JSON Schema (docs/schema/*.json), checked by a real validator (Debian's
# python3-jsonschema, through tests/cli/schema_check.py): every receipt of
# every committed run, of a fresh CPU campaign (whole, sharded, merged and
# re-accounted), and every JSON output of caliber (topology, diff, compare,
# export, the goldens) is valid; a receipt that breaks its schema is named,
# field and reason. Skipped without python3-jsonschema, except in CI.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

JS_PYTHON=""
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import jsonschema' >/dev/null 2>&1; then JS_PYTHON=$p; break; fi
done
if [ -z "$JS_PYTHON" ]; then
	test_skip "every receipt and output is valid under docs/schema" "no python3 with jsonschema (scripts/deps.sh installs python3-jsonschema)"
	exit 0
fi
schemas="$CALIBER_ROOT/docs/schema"
runs="$CALIBER_ROOT/campaigns/demo-h200/runs"
g="$CALIBER_ROOT/tests/golden"
export JS_PYTHON schemas runs g
setup="$setup"'
check() { "$JS_PYTHON" "$CALIBER_ROOT/tests/cli/schema_check.py" "$schemas" "$@"; }
'
export setup

test_expect_success 'every schema is a valid 2020-12 schema, and there is one per receipt and output' '
	eval "$setup" &&
	for k in campaign run cell task timing-row derived diff compare topology task-matrix export; do
		test -f "$schemas/$k.schema.json" || { echo "no $k.schema.json"; exit 1; }
	done &&
	check export "$g/export/h200-canary.json" >out && tail -1 out | grep -qx "schema_check: 1 documents valid, 0 not"
'

test_expect_success 'every receipt of every committed run is valid' '
	eval "$setup" &&
	check run "$CALIBER_ROOT"/campaigns/*/runs/* >out || { cat out; exit 1; } &&
	tail -1 out | grep -q "^schema_check: [0-9]* documents valid, 0 not$"
'

test_expect_success 'a fresh CPU campaign: canary, all, two shards, their merge and a derived run are valid' '
	eval "$setup" && make_all &&
	run all all --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	run all s1 --worker "python3 $W/replay.py $D" --shard 1/2 --quiet >/dev/null &&
	run all s2 --worker "python3 $W/replay.py $D" --shard 2/2 --quiet >/dev/null &&
	$CALIBER merge s1 s2 --output-root merged --quiet >/dev/null &&
	$CALIBER reaccount all --floor 0 --output derived >/dev/null &&
	check run canary all s1 s2 merged derived frozen/cpu-test-all >out || { cat out; exit 1; } &&
	grep -q "^schema_check: [0-9]* documents valid, 0 not$" out &&
	$CALIBER export all >e.json && $CALIBER diff all --format json >d.json &&
	$CALIBER compare canary all --format json >c.json &&
	check export e.json && check diff d.json && check compare c.json
'

test_expect_success 'the outputs of topology, diff, compare and export, and their goldens, are valid' '
	eval "$setup" &&
	$CALIBER topology "$runs/canary/tasks/matmul_bias_gelu/cells/a-off" >t.json &&
	$CALIBER diff "$runs/canary" --format json >d.json &&
	$CALIBER compare "$runs/canary-2026-11-29" "$runs/canary" --format json >c.json &&
	$CALIBER export "$runs/all" >e.json &&
	check topology t.json "$g"/topology/*.json && check diff d.json "$g/diff/basic.json" "$g/diff/h200-canary.json" &&
	check compare c.json "$g"/compare/*.json && check export e.json "$g/export/h200-canary.json" &&
	check derived "$g/reaccount/floor0.derived.json" && check task-matrix "$g/prepare/example-canary.matrix.json" &&
	check timing-row "$runs/canary/tasks/sum_cols/cells/a-off/timing.jsonl"
'

test_expect_success 'a receipt that breaks its schema is named with the field and the reason' '
	eval "$setup" &&
	python3 - "$runs/canary/tasks/sum_cols/task.json" "$g/export/h200-canary.json" <<-\PY &&
	import json, sys
	t = json.load(open(sys.argv[1]))
	t["verdict"] = "Q"
	t["thresholds"]["gain"] = 1
	json.dump(t, open("task.json", "w"))
	e = json.load(open(sys.argv[2]))
	e["rows"][0]["median_us"] = "139.266"
	e["rows"][1]["typo_us"] = 1.0
	json.dump(e, open("export.json", "w"))
	PY
	! check task task.json >out &&
	grep -qx "task.json: \$.thresholds: Additional properties are not allowed ('"'"'gain'"'"' was unexpected)" out &&
	grep -qx "task.json: \$.verdict: '"'"'Q'"'"' is not one of \[.G., .C., .B., .R., .K., .X.\]" out &&
	! check export export.json >out &&
	grep -q "^export.json: \$.rows\[0\].median_us: " out &&
	grep -qx "export.json: \$.rows\[1\]: Additional properties are not allowed ('"'"'typo_us'"'"' was unexpected)" out &&
	tail -1 out | grep -qx "schema_check: 0 documents valid, 1 not"
'
