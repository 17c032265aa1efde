#!/bin/sh
# caliber as a user runs it, on the fake GPU of tests/fakegpu: a campaign
# through the real worker session (caliber_pytest.session), real pytest and
# the cuda backend's plugins, and the GPU path of `caliber demo` itself over
# the built-in corpus, each started from a folder outside the repository with
# relative paths and default options. The workers change directory, as they
# do on a GPU machine, so a relative path anywhere makes tasks X.
. "$(dirname "$0")/lib.sh"

F="$CALIBER_ROOT/tests/data/campaign-fakegpu"
G="$CALIBER_ROOT/tests/fakegpu"
export F G

# A python3 that has pytest first on PATH (as on a GPU machine), then the fake
# nvidia-smi; the fake torch and triton come from PYTHONPATH, as an
# installed torch and triton would come from site-packages.
mkdir -p "$T/bin" && ln -s "$(command -v "$PY")" "$T/bin/python3"
PATH="$T/bin:$G/bin:$PATH"
PYTHONPATH="$G/site"
export PATH PYTHONPATH

setup='
# fake_campaign [MODE]: the campaign frozen into frozen/; with MODE, the
# candidate cell runs with FAKEGPU_THROTTLE=MODE (the fake pynvml).
fake_campaign() {
	cp -R "$G/site" site && cp -R "$F/corpus" corpus &&
	$CALIBER pin "$F/manifest.in.json" -o manifest.json --compiler site/triton --corpus corpus $DIRTY >/dev/null &&
	if [ -n "${1:-}" ]; then
		python3 -c "import json, sys; m = json.load(open(\"manifest.json\")); m[\"cells\"][2][\"env\"][\"FAKEGPU_THROTTLE\"] = sys.argv[1]; json.dump(m, open(\"manifest.json\", \"w\"))" "$1"
	fi &&
	$CALIBER prepare manifest.json --inventory-dir corpus --output-root frozen >/dev/null
}
verdicts() { grep -v "^," "$1/matrix.csv" | cut -d, -f1,3,4,5,6,7 | tr -d "\r"; }
'
export setup

test_expect_success 'a campaign through the real session, pytest and plugins, with relative paths: G and B, no X' '
	eval "$setup" && fake_campaign &&
	TMPDIR=tmp && mkdir tmp && export TMPDIR &&
	$CALIBER run --manifest frozen/fakegpu-canary/manifest.json --task-matrix frozen/fakegpu-canary/task-matrix.json \
		--build-root site/triton --corpus corpus --output-root runs/out $DIRTY >stdout &&
	grep -qx "preflight: plugin-plan: ok (caliber_pytest.device_setup caliber_pytest.shapes caliber_pytest.autotune_record caliber_pytest.ir_meta caliber_pytest.timing caliber_pytest.parallel_warmup caliber_pytest.compat)" stdout &&
	printf "%s\n" task,verdict,code,topology_baseline,topology_control,topology_candidate mm,G,stable-gain,5,5,1 \
		scale,B,no-reduction,0,0,0 >want &&
	verdicts runs/out >got && cmp want got &&
	$CALIBER verify runs/out >/dev/null &&
	test "$(grep -l "\"outcome\": \"passed\"" runs/out/tasks/*/cells/*/cell.json | wc -l)" = \
	     "$(ls runs/out/tasks/*/cells/*/cell.json | wc -l)" &&
	grep -q "^[A-Z2-7]*	_mm_kernel	[1-9][0-9]*	[1-9][0-9]*$" runs/out/tasks/mm/cells/a-off/ir/index.tsv &&
	grep -q "\"kernel\": \"fakeops:_mm_kernel\"" runs/out/tasks/mm/cells/a-off/autotune.jsonl &&
	cmp runs/out/tasks/mm/cells/a-off/autotune.jsonl runs/out/tasks/mm/cells/a-candidate/autotune.jsonl &&
	grep -q "\"timer\": \"graph\"" runs/out/tasks/scale/cells/a-mask0/timing.jsonl &&
	python3 - runs/out/tasks/*/cells/*/cell.json <<PY
import json, sys
paths = ("CALIBER_CELL_DIR", "CALIBER_AUTOTUNE_FILE", "CALIBER_CORPUS", "CALIBER_WORK_DIR", "TRITON_CACHE_DIR",
         "HOME", "XDG_CACHE_HOME", "FLAGGEMS_CACHE_DIR")
for name in sys.argv[1:]:
    cell = json.load(open(name))
    env = dict(cell["env"], **cell["worker"]["env_overlay"])
    for key in paths:
        assert env[key].startswith("/"), (name, key, env[key])
    assert all(p.startswith("/") for p in env["PYTHONPATH"].split(":")), (name, env["PYTHONPATH"])
    assert all(a.startswith("/") for a in cell["worker"]["argv"] if "/" in a), (name, cell["worker"]["argv"])
PY
'

test_expect_success 'from another folder with every path relative, through prepare --selection all: the same targets, verdicts and seals as absolute paths' '
	eval "$setup" && mkdir -p src work/here && cp -R "$G/site" src/site && cp -R "$F/corpus" src/corpus &&
	python3 -c "import json, sys; m = json.load(open(sys.argv[1])); m[\"workloads\"][1][\"canary\"] = False; json.dump(m, open(\"src/m.in.json\", \"w\"), indent=2)" "$F/manifest.in.json" &&
	cd work/here && mkdir ../tmp && export TMPDIR=../tmp &&
	$CALIBER pin ../../src/m.in.json -o ../m.json --compiler ../../src/site/triton --corpus ../../src/corpus $DIRTY >/dev/null &&
	$CALIBER prepare ../m.json --inventory-dir ../../src/corpus --output-root ../frozen >/dev/null &&
	$CALIBER run --manifest ../frozen/fakegpu-canary/manifest.json --task-matrix ../frozen/fakegpu-canary/task-matrix.json \
		--build-root ../../src/site/triton --corpus ../../src/corpus --output-root ../runs/canary $DIRTY >canary.out &&
	grep -qx "preflight: targets: ok (2 selections resolve in $(cd ../../src/corpus && pwd -P) (one collection))" canary.out &&
	$CALIBER prepare ../m.json --inventory-dir ../../src/corpus --selection all --canary-receipt ../runs/canary/campaign.json \
		--output-root ../frozen >/dev/null &&
	$CALIBER run --manifest ../frozen/fakegpu-all/manifest.json --task-matrix ../frozen/fakegpu-all/task-matrix.json \
		--build-root ../../src/site/triton --corpus ../../src/corpus --output-root ../runs/all $DIRTY >all.out &&
	grep -qx "preflight: targets: ok (4 selections resolve in $(cd ../../src/corpus && pwd -P) (one collection))" all.out &&
	printf "%s\n" task,verdict,code,topology_baseline,topology_control,topology_candidate mm,G,stable-gain,5,5,1 \
		scale,B,no-reduction,0,0,0 >want && verdicts ../runs/all >got && cmp want got &&
	$CALIBER verify ../runs/all >/dev/null && $CALIBER verify ../runs/canary >/dev/null &&
	cd ../.. && abs=$PWD && TMPDIR=$abs/work/tmp &&
	$CALIBER run --manifest "$abs/work/frozen/fakegpu-all/manifest.json" --task-matrix "$abs/work/frozen/fakegpu-all/task-matrix.json" \
		--build-root "$abs/src/site/triton" --corpus "$abs/src/corpus" --output-root "$abs/work/runs/abs" $DIRTY >abs.out &&
	verdicts work/runs/abs | cmp work/here/want - &&
	test "$(grep "^preflight: targets: " abs.out)" = "$(grep "^preflight: targets: " work/here/all.out)"
'

test_expect_success 'the built-in corpus as on the H200, from another folder with every path relative: prepare --selection all, and the targets of all 32 tasks resolve' '
	cp -R "$CALIBER_ROOT/ops" ops && mkdir there && cd there && mkdir ../tmp && export TMPDIR=../tmp &&
	python3 -c "import json, sys; m = json.load(open(sys.argv[1])); [w.update(canary=w[\"id\"] == \"sum_cols\") for w in m[\"workloads\"]]; m[\"device\"][\"name\"] = \"Fake GPU\"; json.dump(m, open(\"../demo.in.json\", \"w\"), indent=2)" "$CALIBER_ROOT/campaigns/demo-h200/manifest.in.json" &&
	$CALIBER pin ../demo.in.json -o ../demo.json --compiler "$G/site/triton" --corpus ../ops $DIRTY >pin.out &&
	grep -qx "pin: sources.corpus: $(cd .. && pwd -P)/ops is in no git checkout: pinned by tree_sha256, not commit" pin.out &&
	$CALIBER prepare ../demo.json --inventory-dir ../ops --output-root ../frozen >/dev/null &&
	$CALIBER run --manifest ../frozen/demo-h200-canary/manifest.json --task-matrix ../frozen/demo-h200-canary/task-matrix.json \
		--build-root "$G/site/triton" --corpus ../ops --output-root ../runs/canary $DIRTY --quiet >/dev/null &&
	$CALIBER prepare ../demo.json --inventory-dir ../ops --selection all --canary-receipt ../runs/canary/campaign.json \
		--output-root ../frozen >/dev/null &&
	$CALIBER run --manifest ../frozen/demo-h200-all/manifest.json --task-matrix ../frozen/demo-h200-all/task-matrix.json \
		--build-root "$G/site/triton" --corpus ../ops --output-root ../runs/all $DIRTY --preflight-only >stdout &&
	grep -qx "preflight: targets: ok (64 selections resolve in $(cd ../ops && pwd -P) (one collection))" stdout &&
	test ! -e ../runs/all
'

test_expect_success 'clocks through the real timing plugin: a row throttled once is measured again; one always throttled is left out, and a task left with none is X' '
	eval "$setup" && fake_campaign first-row &&
	TMPDIR=tmp && mkdir tmp && export TMPDIR &&
	$CALIBER run --manifest frozen/fakegpu-canary/manifest.json \
		--task-matrix frozen/fakegpu-canary/task-matrix.json --build-root site/triton --corpus corpus \
		--output-root once $DIRTY --quiet >/dev/null &&
	verdicts once | grep -q "^mm,G,stable-gain," &&
	python3 - once/tasks/mm/cells/a-candidate/timing.jsonl once/tasks/mm/cells/a-off/timing.jsonl <<PY &&
import json, sys
retried, plain = ([json.loads(l) for l in open(p)] for p in sys.argv[1:])
first, rest = retried[0]["throttle"], retried[1:]
assert first["attempts"] == 2 and first["first_sm_min_mhz"] == 1300 and not first["throttled"], first
assert first["floor_mhz"] == 1782 and first["rested_ms"][1] >= 500, first
assert all(r["throttle"]["attempts"] == 1 for r in rest + plain), "only the first candidate row is retried"
assert all(r["clocks"]["during"]["sm_min_mhz"] == 1980 for r in retried + plain)
PY
	$CALIBER report once --format md | grep -Eq "^- mm: round a 3 sessions 1980 / 1980 / 1980; round b 3 sessions 1980 / 1980 / 1980; rested [0-9.]+ s; 6 rows measured again, 0 left out as throttled$" &&
	mkdir two && cd two && mkdir tmp && fake_campaign always &&
	set +e; $CALIBER run --manifest frozen/fakegpu-canary/manifest.json \
		--task-matrix frozen/fakegpu-canary/task-matrix.json --build-root site/triton --corpus corpus \
		--output-root always $DIRTY --quiet >/dev/null 2>stderr; rc=$?; set -e &&
	test $rc -eq 5 && grep -q "^caliber: run: 2 of 2 tasks are X (could not be measured); the first, mm: round a: every one of its" stderr &&
	verdicts always | grep -q "^mm,X,throttled," && verdicts always | grep -q "^scale,X,throttled," &&
	grep -q "round a: every one of its [0-9]* rows ran throttled (below 90% of the maximum SM clock)" always/tasks/mm/task.json &&
	grep -q "\"throttled\": true" always/tasks/mm/cells/a-candidate.s3/timing.jsonl &&
	$CALIBER verify always >/dev/null
'

test_expect_success 'the device preflight holds the manifest'"'"'s device.name against the name the backend reads: a name it begins is that device, another name is refused and nothing is written' '
	eval "$setup" && cp -R "$G/site" site && cp -R "$F/corpus" corpus &&
	$CALIBER pin "$F/manifest.in.json" -o manifest.json --compiler site/triton --corpus corpus $DIRTY >/dev/null &&
	named() { python3 -c "import json, sys; m = json.load(open(\"manifest.json\")); [c[\"env\"].__setitem__(\"FAKEGPU_NAME\", sys.argv[1]) for c in m[\"cells\"]]; json.dump(m, open(sys.argv[2], \"w\"))" "$1" "$2"; } &&
	named "Fake GPU 80GB" longer.json && named "Other GPU" other.json &&
	$CALIBER prepare longer.json --inventory-dir corpus --output-root f1 >/dev/null &&
	$CALIBER prepare other.json --inventory-dir corpus --output-root f2 >/dev/null &&
	$CALIBER run --manifest f1/fakegpu-canary/manifest.json --task-matrix f1/fakegpu-canary/task-matrix.json \
		--build-root site/triton --corpus corpus --output-root ok $DIRTY --preflight-only >stdout &&
	grep -qx "preflight: device-count: ok (1 device visible with CUDA_VISIBLE_DEVICES=0: Fake GPU 80GB, as device.name says)" stdout &&
	set +e; $CALIBER run --manifest f2/fakegpu-canary/manifest.json --task-matrix f2/fakegpu-canary/task-matrix.json \
		--build-root site/triton --corpus corpus --output-root out $DIRTY >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 3 &&
	printf "%s\n" "preflight: device-count: FAILED: the manifest'"'"'s device.name is '"'"'Fake GPU'"'"', the device visible with CUDA_VISIBLE_DEVICES=0 is '"'"'Other GPU'"'"' (measure on that device, or name this one in device.name)" >want &&
	grep "^preflight: device-count" stdout >got && cmp want got &&
	test ! -e out
'

test_expect_success 'each row of round a s first sessions replayed once under the profiler its worker started ahead, joined: diff shows each kernel s time and resources; reaccount --scope time:1 holds' '
	eval "$setup" && fake_campaign &&
	TMPDIR=tmp && mkdir tmp && export TMPDIR &&
	$CALIBER run --manifest frozen/fakegpu-canary/manifest.json --task-matrix frozen/fakegpu-canary/task-matrix.json \
		--build-root site/triton --corpus corpus --output-root out $DIRTY --quiet >/dev/null &&
	test "$(cat out/tasks/*/cells/*/kernels.jsonl | grep -c "\"error\": null")" -eq \
	     "$(cat out/tasks/*/cells/a-off/timing.jsonl out/tasks/*/cells/a-mask0/timing.jsonl out/tasks/*/cells/a-candidate/timing.jsonl | wc -l)" &&
	test -z "$(ls out/tasks/*/cells/*.s*/kernels.jsonl out/tasks/*/cells/b-*/kernels.jsonl 2>/dev/null)" &&
	test "$(cat out/tasks/*/cells/*/kernels.jsonl | grep -c "\"profiler_start\": \"ahead\"")" -eq \
	     "$(cat out/tasks/*/cells/*/kernels.jsonl | wc -l)" &&
	$CALIBER diff out mm >diff &&
	grep -q "^    time 100.0%/100.0%/100.0% of the cell.s GPU time, [0-9.]* µs -> [0-9.]* µs per call (-[0-9.]*%)\$" diff &&
	grep -qx "    regs 224 -> 128, spills 0, shared 49152, stages 3, warps 8" diff &&
	grep -qx "  where it moved: 100% of the GPU time saved in kernels whose converts changed" diff &&
	$CALIBER reaccount out --scope time:1 --output d >stdout &&
	grep -qx "scope time:1%: 2 of 2 tasks count as sealed at floor 1" stdout
'

# The demo pins caliber and the corpus to the commit the binary was built
# from, which a dirty checkout does not have.
if [ -n "$DIRTY" ]; then
	test_skip "the GPU path of caliber demo under the fake GPU gives the H200 canary's verdicts" \
		"caliber was built from a checkout with changes ($($CALIBER --version)); the demo pins it by commit"
	test_skip "a demo whose tasks are X exits 5, naming the first" "as above"
	exit 0
fi

test_expect_success 'the GPU path of caliber demo under the fake GPU gives the H200 canary'"'"'s verdicts' '
	$CALIBER demo >stdout &&
	set -- caliber-demo-2*Z && test $# -eq 1 &&
	grep -qx "caliber demo: GPU and Triton found ($G/site/triton): running the canary campaign of the built-in corpus into $PWD/$1" stdout &&
	grep -v "^," "$CALIBER_ROOT/campaigns/demo-h200/runs/canary/matrix.csv" | cut -d, -f1,3 >want &&
	grep -v "^," "$1/run-canary/matrix.csv" | cut -d, -f1,3 >got && cmp want got &&
	grep -q "^matmul_bias_gelu  *G  *[0-9]*/[0-9]*/[0-9]*  *a  *+" stdout &&
	head -1 "$1/report.html" | grep -qx "<!DOCTYPE html>" &&
	tail -3 stdout | head -1 | grep -qx "caliber demo: kept $PWD/$1 (report.html: the run.s report as one HTML file)" &&
	tail -2 stdout | head -1 | grep -qx "verdicts: G 2, C 0, B 6, R 0, K 0, X 0" &&
	tail -1 stdout | grep -qx "report: $PWD/$1/report.html" &&
	python3 -c "import json, sys; d = json.load(open(sys.argv[1]))[\"device\"]; assert d[\"name\"] == \"Fake GPU\", d" "$1/manifest.json" &&
	grep -qx "preflight: device-count: ok (1 device visible with CUDA_VISIBLE_DEVICES=0: Fake GPU, as device.name says)" stdout &&
	$CALIBER verify "$1/run-canary" >/dev/null
'

test_expect_success 'a demo whose tasks are X exits 5, naming the first' '
	cp -R "$G/site" broken &&
	sed -i "/kernel_load_end_hook = HookChain()/d" broken/triton/knobs.py &&
	set +e; PYTHONPATH="$PWD/broken" $CALIBER demo >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 5 &&
	grep -qx "caliber: demo: 8 of 8 tasks are X (could not be measured); the first, sum_cols: error in cell off, correctness: pytest exit 4: ERROR: caliber_pytest.ir_meta: this Triton has no knobs.runtime.kernel_load_end_hook; the launch index cannot be built" stderr &&
	grep -q "^verdict matrix of " stdout && set -- caliber-demo-2*Z && test -f "$1/report.html"
'
