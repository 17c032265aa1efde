#!/bin/sh
# Inputs that are not what they claim (issue 14, items 7, 14, 17): a FIFO in
# place of any file caliber reads is refused at once, named as a FIFO (each
# command runs under `timeout 10`, so that a regression fails instead of
# hanging); task ids read back from a forged but holding seal are checked
# before they are joined to a path; output that cannot be written fails
# the command.
. "$(dirname "$0")/lib.sh"

spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
bad="$CALIBER_ROOT/tests/bad"
export spec bad

test_expect_success 'a FIFO as the manifest is refused at once' '
	mkfifo m.json &&
	printf "%s\n" "caliber: prepare: $PWD/m.json: a FIFO, not a regular file" >want &&
	expect_refusal 1 want timeout 10 $CALIBER prepare m.json --inventory-dir "$bad/base" --dry-run
'

test_expect_success 'a FIFO as the inventory is refused at once' '
	mkdir inv && mkfifo inv/inventory_main.csv &&
	printf "%s\n" "caliber: prepare: $PWD/inv/inventory_main.csv: a FIFO, not a regular file" >want &&
	expect_refusal 1 want timeout 10 $CALIBER prepare "$bad/base/manifest.json" --inventory-dir inv --dry-run
'

test_expect_success 'a FIFO as --canary-receipt is refused at once' '
	mkfifo receipt.json &&
	printf "%s\n" "caliber: prepare: --canary-receipt: $PWD/receipt.json: a FIFO, not a regular file" >want &&
	expect_refusal 1 want timeout 10 $CALIBER prepare "$bad/base/manifest.json" --inventory-dir "$bad/base" \
		--selection all --canary-receipt receipt.json --dry-run
'

test_expect_success 'a FIFO as a run root campaign.json is refused at once, by report and by reaccount' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S && chmod -R u+w S && rm S/campaign.json && mkfifo S/campaign.json &&
	printf "%s\n" "caliber: report: $PWD/S/campaign.json: a FIFO, not a regular file" >want &&
	expect_refusal 1 want timeout 10 $CALIBER report S &&
	set +e; timeout 10 $CALIBER reaccount S --floor 0 --output d >/dev/null 2>err; rc=$?; set -e &&
	test $rc -eq 1 && test ! -e d
'

test_expect_success 'a FIFO as a cell ir/index.tsv is refused at once' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S && chmod -R u+w S &&
	c=S/tasks/softmax_rows/cells/a-off && rm $c/ir/index.tsv && mkfifo $c/ir/index.tsv &&
	printf "%s\n" "caliber: topology: $PWD/$c/ir/index.tsv: a FIFO, not a regular file" >want &&
	expect_refusal 1 want timeout 10 $CALIBER topology $c
'

# forge ID: the basic run with tasks[0].id of campaign.json set to ID and
# sealed again, so that the seal holds over the forged receipt.
forge='
forge() {
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S && chmod -R u+w S &&
	python3 -c "import json, sys; p = sys.argv[1]; d = json.load(open(p)); d[\"tasks\"][0][\"id\"] = sys.argv[2].replace(\"<NUL>\", chr(0)); json.dump(d, open(p, \"w\"), indent=2, sort_keys=True)" \
		S/campaign.json "$1" &&
	rm S/SHA256SUMS && "$CALIBER_TOOLS/cbtest" seal S && $CALIBER verify S >/dev/null
}
'
export forge

test_expect_success 'a forged seal: a task id that climbs out of the run is refused by reaccount and report' '
	eval "$forge" && forge ../../outside/x &&
	mkdir -p outside/x && cp S/tasks/softmax_rows/task.json outside/x/ &&
	m="$PWD/S/campaign.json: tasks[0].id: '"'"'../../outside/x'"'"' is not a task id ([A-Za-z0-9._-], not starting with '"'"'.'"'"' or '"'"'-'"'"', at most 128 characters)" &&
	printf "caliber: reaccount: %s\n" "$m" >want &&
	expect_refusal 1 want $CALIBER reaccount S --floor 0 --output d && test ! -e d &&
	printf "caliber: report: %s\n" "$m" >want &&
	expect_refusal 1 want $CALIBER report S
'

test_expect_success 'a forged seal: ids "/x", "..", "." and "" are refused, naming file and field' '
	eval "$forge" &&
	for id in /x .. . ""; do
		{ chmod -R u+w S 2>/dev/null || true; } && rm -rf S && forge "$id" &&
		printf "%s\n" "caliber: reaccount: $PWD/S/campaign.json: tasks[0].id: '"'"'$id'"'"' is not a task id ([A-Za-z0-9._-], not starting with '"'"'.'"'"' or '"'"'-'"'"', at most 128 characters)" >want &&
		expect_refusal 1 want $CALIBER reaccount S --floor 0 --output d && test ! -e d || exit 1
	done
'

test_expect_success 'a forged seal: a NUL in a task id is refused by the JSON reader' '
	eval "$forge" && forge "a<NUL>b" && grep -q "a.u0000b" S/campaign.json &&
	printf "%s\n" "caliber: reaccount: $PWD/S/campaign.json:15:22: \\u0000 is not allowed without JSON_ALLOW_NUL near '"'"'\"a\\u0000b\"'"'"'" >want &&
	expect_refusal 1 want $CALIBER reaccount S --floor 0 --output d && test ! -e d
'

test_expect_success 'verify and topology fail when their output cannot be written (/dev/full)' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S &&
	printf "%s\n" "caliber: verify: stdout: write error: No space left on device" >want &&
	set +e; $CALIBER verify S >/dev/full 2>err; rc=$?; set -e &&
	test $rc -eq 1 && cmp want err &&
	printf "%s\n" "caliber: topology: stdout: write error: No space left on device" >want &&
	set +e; $CALIBER topology S/tasks/softmax_rows/cells/a-off >/dev/full 2>err; rc=$?; set -e &&
	test $rc -eq 1 && cmp want err
'
