#!/bin/sh
# Identical by construction through caliber's real worker session, pytest
# and plugins on the fake GPU (tests/fakegpu): ir_meta digests each
# variant's cubin, TTGIR and launch configuration from the cell's Triton
# cache, and run --prescreen times mm (the demo change removes its
# converts) and not scale (compiled as it was), whose autotuner would pick
# another config in the candidate if autotune_record did not replay the
# baseline's decision; without the replay the candidate compiles another
# variant and scale is timed.
. "$(dirname "$0")/lib.sh"

F="$CALIBER_ROOT/tests/data/campaign-fakegpu"
G="$CALIBER_ROOT/tests/fakegpu"
export F G
mkdir -p "$T/bin" && ln -s "$(command -v "$PY")" "$T/bin/python3"
PATH="$T/bin:$G/bin:$PATH"
PYTHONPATH="$G/site"
export PATH PYTHONPATH

setup='
# prefer_campaign: the fake campaign frozen into frozen/, its baseline and
# control tuning to their first config, the candidate to its last.
prefer_campaign() {
	cp -R "$G/site" site && cp -R "$F/corpus" corpus &&
	sed -e "s/@COMPILER_TREE@/$($CALIBER digest site/triton)/" -e "s/@CORPUS_TREE@/$($CALIBER digest corpus)/" \
	    -e "s/@HARNESS_COMMIT@/$commit/" "$F/manifest.in.json" >m.json &&
	python3 -c "import json; m = json.load(open(\"m.json\")); [c[\"env\"].update(FAKEGPU_TUNER_PREFERS=\"last\" if c[\"role\"] == \"candidate\" else \"first\") for c in m[\"cells\"]]; json.dump(m, open(\"manifest.json\", \"w\"), indent=1)" &&
	$CALIBER prepare manifest.json --inventory-dir corpus --output-root frozen >/dev/null
}
fake_run() {
	out=$1; shift
	mkdir -p tmp && TMPDIR=$PWD/tmp $CALIBER run --manifest frozen/fakegpu-canary/manifest.json \
		--task-matrix frozen/fakegpu-canary/task-matrix.json --build-root site/triton --corpus corpus \
		--output-root $out $DIRTY --quiet "$@"
}
verdicts() { cut -d, -f1,3,4 "$1/matrix.csv" | tr -d "\r"; }  # the summary rows too
task_is() {
	python3 -c "import json, sys; t = json.load(open(sys.argv[1])); assert $3, json.dumps(t.get(\"identity\"), indent=1) + json.dumps(t.get(\"screen_identity\"), indent=1)" \
		"$1/tasks/$2/task.json"
}
'
export setup

test_expect_success 'the real plugins: binaries from the cache, the candidate tuner replayed, scale screened out and mm timed' '
	eval "$setup" && prefer_campaign && fake_run ps --prescreen >/dev/null &&
	printf "%s\n" task,verdict,code mm,G,stable-gain scale,B,identical-binaries \
		",,aa-summary" ",,identical-binaries" >want && verdicts ps >got && cmp want got &&
	test -d ps/tasks/mm/cells/a-candidate && test ! -e ps/tasks/scale/cells/a-off &&
	python3 - ps/tasks/scale/cells/screen-* <<-PY &&
	import sys
	def table(path):
	    return [l.split("\t") for l in open(path).read().splitlines()]
	rows = []
	for cell in sys.argv[1:]:
	    binaries, index = table(cell + "/ir/binaries.tsv"), table(cell + "/ir/index.tsv")
	    assert binaries[0] == ["variant", "kernel", "binary", "binary_sha256", "code_sha256", "ttgir_sha256", "launch"]
	    launched = {r[0] for r in index[1:] if int(r[2]) > 0}
	    rows += [tuple(r) for r in binaries[1:] if r[0] in launched]
	assert len(rows) == 3 and len(set(rows)) == 1, rows
	variant, kernel, binary, binary_sha, code_sha, ttgir_sha, launch = rows[0]
	assert kernel == "_scale_kernel" and binary == "_scale_kernel.cubin" and binary_sha != code_sha, rows[0]
	assert "num_warps=4" in launch and "shared=0" in launch, launch
	PY
	grep -q "\"BLOCK\": 512" ps/tasks/scale/cells/screen-off/autotune.jsonl &&
	cmp ps/tasks/scale/cells/screen-off/autotune.jsonl ps/tasks/scale/cells/screen-candidate/autotune.jsonl &&
	task_is ps scale "t[\"identity\"][\"identical\"] and t[\"identity\"][\"autotune_decisions\"] == 2" &&
	task_is ps mm "not t[\"screen_identity\"][\"identical\"] and t[\"screen_identity\"][\"reason\"].startswith(\"kernel _mm_kernel: its binary differs in cell candidate\")" &&
	task_is ps mm "not t[\"identity\"][\"identical\"] and t[\"identity\"][\"phase\"] == \"a\"" &&
	$CALIBER verify ps >/dev/null && $CALIBER report ps | grep -qx "pre-screen on: 1 of 2 tasks not timed (identical binaries)"
'

test_expect_success 'a tuner caliber does not replay picks another config in the candidate: another variant, and scale is timed' '
	eval "$setup" && prefer_campaign &&
	mkdir backends && sed "s/\"autotune_replay\": true/\"autotune_replay\": false/" "$CALIBER_ROOT/backends/cuda.json" >backends/cuda.json &&
	fake_run nr --prescreen --backends "$PWD/backends" >/dev/null &&
	verdicts nr | grep -qx "scale,B,no-reduction" && test -d nr/tasks/scale/cells/a-candidate &&
	test ! -e nr/tasks/scale/cells/screen-off/autotune.jsonl &&
	task_is nr scale "not t[\"screen_identity\"][\"identical\"] and t[\"screen_identity\"][\"reason\"].startswith(\"kernel _scale_kernel: its binary differs in cell candidate\")" &&
	grep -q "	_scale_kernel	.*num_warps=8" nr/tasks/scale/cells/screen-candidate/ir/binaries.tsv &&
	grep -q "	_scale_kernel	.*num_warps=4" nr/tasks/scale/cells/screen-off/ir/binaries.tsv
'
