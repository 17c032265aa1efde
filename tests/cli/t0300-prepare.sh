#!/bin/sh
# prepare: estimate, freeze, refusals, and the canary gate of --selection all.
. "$(dirname "$0")/lib.sh"

ex="$CALIBER_ROOT/campaigns/example/manifest.json"
golden="$CALIBER_ROOT/tests/golden/prepare"
export ex golden

# A sealed canary run of manifest $1 whose tasks have verdicts $2 (e.g. "G B"),
# written as run does: campaign.json, then the seal.
fake_canary='
fake_canary() {
	sha=$(sha256sum "$1" | cut -d" " -f1)
	mkdir -p canary/tasks
	i=0; tasks=""
	for v in $2; do
		i=$((i + 1))
		tasks="$tasks${tasks:+,}{\"id\": \"t$i\", \"verdict\": \"$v\", \"reason\": \"why $v\"}"
	done
	cat >canary/campaign.json <<JSON
{"schema": "caliber.campaign/1", "campaign": "example-rlc", "selection": "${3:-canary}",
 "manifest_sha256": "$sha", "status": "complete", "launch_floor": 1, "tasks": [$tasks]}
JSON
	"$CALIBER_TOOLS/cbtest" seal canary
}'

test_expect_success 'a dry run prints the budget and writes nothing' '
	$CALIBER prepare "$ex" --inventory-dir "$golden/inventory" --dry-run --output-root out >stdout &&
	cmp "$golden/example-dry-run.stdout" stdout &&
	expect_empty out
'

test_expect_success 'a freeze writes the manifest byte for byte and the matrix, read-only' '
	$CALIBER prepare "$ex" --inventory-dir "$golden/inventory" --output-root out >stdout &&
	cmp "$ex" out/example-rlc-canary/manifest.json &&
	test ! -w out/example-rlc-canary/manifest.json -o "$(id -u)" = 0 &&
	test "$(stat -c %a out/example-rlc-canary/manifest.json)" = 444 &&
	test "$(stat -c %a out/example-rlc-canary/task-matrix.json)" = 444 &&
	test "$(stat -c %a out/example-rlc-canary)" = 555 &&
	python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d.pop(\"caliber\"); print(json.dumps(d, indent=2, sort_keys=True))" \
		out/example-rlc-canary/task-matrix.json >matrix &&
	cmp "$golden/example-canary.matrix.json" matrix &&
	grep -q "\"commit\": \"$($CALIBER --version | sed "s/.*(commit \(.*\))$/\1/")\"" out/example-rlc-canary/task-matrix.json
'

test_expect_success 'freezing twice gives the same bytes' '
	$CALIBER prepare "$ex" --inventory-dir "$golden/inventory" --output-root one >/dev/null &&
	$CALIBER prepare "$ex" --inventory-dir "$golden/inventory" --output-root two >/dev/null &&
	cmp one/example-rlc-canary/task-matrix.json two/example-rlc-canary/task-matrix.json
'

test_expect_success 'a second freeze into the same root is refused and changes nothing' '
	$CALIBER prepare "$ex" --inventory-dir "$golden/inventory" --output-root out >/dev/null &&
	sha256sum out/example-rlc-canary/* >before &&
	printf "caliber: prepare: @CWD@/out/example-rlc-canary: already exists; refusing to overwrite a frozen campaign\n" >want &&
	expect_refusal 1 want $CALIBER prepare "$ex" --inventory-dir "$golden/inventory" --output-root out &&
	sha256sum out/example-rlc-canary/* >after && cmp before after &&
	test "$(ls out)" = example-rlc-canary
'

test_expect_success 'without --dry-run an output root is required' '
	printf "caliber: prepare: --output-root is required unless --dry-run\n" >want &&
	expect_refusal 2 want $CALIBER prepare "$ex" --inventory-dir "$golden/inventory"
'

test_expect_success '--selection all without a canary receipt is refused' '
	printf "caliber: prepare: --selection all needs --canary-receipt (the campaign.json of a sealed canary run)\n" >want &&
	expect_refusal 2 want $CALIBER prepare "$ex" --inventory-dir "$golden/inventory" --selection all --output-root out &&
	expect_empty out
'

test_expect_success '--selection all opens with a sealed canary receipt without X' "
	$fake_canary
	fake_canary '$ex' 'G B C' &&
	\$CALIBER prepare '$ex' --inventory-dir '$CALIBER_ROOT/tests/golden/prepare/inventory' --selection all --canary-receipt canary/campaign.json --output-root out >stdout &&
	grep -q 'selection all: 4 of 4 workloads' stdout &&
	test -f out/example-rlc-all/task-matrix.json
"

test_expect_success '--selection all refuses a canary with an X verdict' "
	$fake_canary
	fake_canary '$ex' 'G X' &&
	printf \"caliber: prepare: --canary-receipt: task 't2' has verdict X (why X); the canary must pass before --selection all\\n\" >want &&
	expect_refusal 1 want \$CALIBER prepare '$ex' --inventory-dir '$CALIBER_ROOT/tests/golden/prepare/inventory' --selection all --canary-receipt canary/campaign.json --output-root out &&
	expect_empty out
"

test_expect_success '--selection all refuses an unsealed canary run' "
	$fake_canary
	fake_canary '$ex' 'G' && chmod -R u+w canary && rm canary/SHA256SUMS &&
	printf \"caliber: prepare: --canary-receipt: \$PWD/canary: not sealed (no SHA256SUMS)\\n\" >want &&
	expect_refusal 1 want \$CALIBER prepare '$ex' --inventory-dir '$CALIBER_ROOT/tests/golden/prepare/inventory' --selection all --canary-receipt canary/campaign.json --output-root out &&
	expect_empty out
"

test_expect_success '--selection all refuses a canary run whose seal was broken' "
	$fake_canary
	fake_canary '$ex' 'G' && chmod -R u+w canary && echo extra >canary/notes.txt &&
	printf \"caliber: prepare: --canary-receipt: \$PWD/canary: seal does not hold: extra: notes.txt\\n\" >want &&
	expect_refusal 1 want \$CALIBER prepare '$ex' --inventory-dir '$CALIBER_ROOT/tests/golden/prepare/inventory' --selection all --canary-receipt canary/campaign.json --output-root out
"

test_expect_success '--selection all refuses the canary of another manifest' "
	$fake_canary
	cp '$ex' other.json && echo ' ' >>other.json &&
	fake_canary other.json 'G' &&
	sha_this=\$(sha256sum '$ex' | cut -d' ' -f1) && sha_other=\$(sha256sum other.json | cut -d' ' -f1) &&
	printf \"caliber: prepare: --canary-receipt: @CWD@/canary/campaign.json is from another manifest (sha256 %s, this one %s)\\n\" \$sha_other \$sha_this >want &&
	expect_refusal 1 want \$CALIBER prepare '$ex' --inventory-dir '$CALIBER_ROOT/tests/golden/prepare/inventory' --selection all --canary-receipt canary/campaign.json --output-root out
"

test_expect_success '--selection all refuses a receipt that is not a canary run' "
	$fake_canary
	fake_canary '$ex' 'G' all &&
	printf \"caliber: prepare: --canary-receipt: @CWD@/canary/campaign.json is a 'all' run, not a canary run\\n\" >want &&
	expect_refusal 1 want \$CALIBER prepare '$ex' --inventory-dir '$CALIBER_ROOT/tests/golden/prepare/inventory' --selection all --canary-receipt canary/campaign.json --output-root out
"

test_expect_success 'the example manifest validates against the built-in corpus inventory' '
	$CALIBER prepare "$ex" --inventory-dir "$CALIBER_ROOT/ops" --dry-run >/dev/null
'

test_expect_success 'a freeze keeps the inventory it was checked against, bound by hash' '
	$CALIBER prepare "$ex" --inventory-dir "$golden/inventory" --output-root out >/dev/null &&
	cmp "$golden/inventory/inventory_main.csv" out/example-rlc-canary/inventory.csv &&
	grep -q "\"inventory_sha256\": \"$(sha256sum "$golden/inventory/inventory_main.csv" | cut -d" " -f1)\"" out/example-rlc-canary/task-matrix.json
'

test_expect_success 'the longest timeouts a manifest allows add up in the estimate without overflow' '
	sed -e "s/\"timeout_s\": 60/\"timeout_s\": 86400/" -e "s/\"canary\": false/\"canary\": true/" \
		"$CALIBER_ROOT/tests/bad/base/manifest.json" >m.json &&
	$CALIBER prepare m.json --inventory-dir "$CALIBER_ROOT/tests/bad/base" --dry-run >stdout &&
	grep -Eq "^  softmax_rows +86400s +144h00m00s +216h00m00s$" stdout &&
	grep -Eq "^  total +288h00m00s +432h00m00s$" stdout
'

# The sealed history run of tests/golden/prepare/history/spec.json (cbtest
# mkrun): softmax_rows 12m34s and layer_norm_fwd 1m35s by task.json wall_ns,
# matmul_bias_gelu by its cells only (5m00s), gelu_bwd not in it.
test_expect_success 'a dry run with --history shows what each task is expected to take beside its budget, and --max-task-s names those over it' "
	$fake_canary
	fake_canary \"\$ex\" 'G B' &&
	\"\$CALIBER_TOOLS/cbtest\" mkrun \"\$golden/history/spec.json\" hist &&
	\$CALIBER prepare \"\$ex\" --inventory-dir \"\$golden/inventory\" --dry-run --selection all \
		--canary-receipt canary/campaign.json --history hist --max-task-s 600 >stdout &&
	cmp \"\$golden/example-history.stdout\" stdout &&
	\$CALIBER prepare \"\$ex\" --inventory-dir \"\$golden/inventory\" --dry-run --history hist --max-task-s 900 >stdout &&
	grep -qx 'prepare: no task is expected to take over --max-task-s 900 (15m00s)' stdout &&
	! grep -q 'no expected time' stdout
"

test_expect_success 'a task whose correctness was narrowed since the history run has no expected time from it' "
	\"\$CALIBER_TOOLS/cbtest\" mkrun \"\$golden/history/spec.json\" hist &&
	sed '/test_perf_softmax_rows/s|\"correctness\": {} }|\"correctness\": { \"k\": \"float16\" }, \"reason\": \"the large rows alone take nine minutes\" }|' \
		\"\$ex\" >narrowed.json && grep -q 'nine minutes' narrowed.json &&
	\$CALIBER prepare narrowed.json --inventory-dir \"\$golden/inventory\" --dry-run --history hist --max-task-s 600 >stdout &&
	cmp \"\$golden/example-narrowed.stdout\" stdout
"

test_expect_success 'prepare refuses a --history of another campaign or whose seal does not hold, and --max-task-s without --history or below 1' "
	\"\$CALIBER_TOOLS/cbtest\" mkrun \"\$golden/history/spec.json\" hist &&
	sed 's/\"campaign\": \"example-rlc\"/\"campaign\": \"example-other\"/' \"\$ex\" >other.json &&
	printf '%s\n' \"caliber: prepare: --history: @CWD@/hist is a run of campaign 'example-rlc', not 'example-other': its times are not this campaign's\" >want &&
	expect_refusal 1 want \$CALIBER prepare other.json --inventory-dir \"\$golden/inventory\" --dry-run --history hist &&
	cp -R hist altered && chmod -R u+w altered && echo >>altered/tasks/softmax_rows/task.json &&
	printf '%s\n' 'caliber: prepare: --history: @CWD@/altered: seal does not hold: changed: tasks/softmax_rows/task.json' >want &&
	expect_refusal 1 want \$CALIBER prepare \"\$ex\" --inventory-dir \"\$golden/inventory\" --dry-run --history altered &&
	printf '%s\n' 'caliber: prepare: --max-task-s needs --history: what a task is expected to take comes from a history run' >want &&
	expect_refusal 2 want \$CALIBER prepare \"\$ex\" --inventory-dir \"\$golden/inventory\" --dry-run --max-task-s 600 &&
	printf '%s\n' 'caliber: prepare: --max-task-s: expected a number of seconds from 1 to 9223372036854775, got 0' >want &&
	expect_refusal 2 want \$CALIBER prepare \"\$ex\" --inventory-dir \"\$golden/inventory\" --dry-run --history hist --max-task-s 0 &&
	expect_refusal 2 want \$CALIBER prepare \"\$ex\" --inventory-dir \"\$golden/inventory\" --output-root out --history hist --max-task-s 0 &&
	test ! -e out &&
	\$CALIBER prepare --help >help && grep -q -- '--max-task-s S  *with --history: name the tasks expected to take over S' help &&
	grep -q 'what each task is expected to take beside its budget' help
"
