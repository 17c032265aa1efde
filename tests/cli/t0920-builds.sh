#!/bin/sh
# caliber run on CPU across two compiler builds (tests/data/campaign-builds/):
# each cell names its own compiler, is preflighted and run against it, and
# its receipts name it; the verdicts are those of the campaign of switches;
# each cell's cache stays its own; every refusal names the cell and the
# field, and writes nothing.
. "$(dirname "$0")/lib.sh"

D="$CALIBER_ROOT/tests/data/campaign-cpu"
B="$CALIBER_ROOT/tests/data/campaign-builds"
W="$CALIBER_ROOT/tests/workers"
export D B W

setup='
# pin PATCHED_ROOT STOCK_ROOT MANIFEST: the two-build manifest pinned by
# caliber pin, the root and digest of each build from the tree there (the
# control follows the baseline; sources.compiler is the stock build).
pin() {
	$CALIBER pin "$B/manifest.in.json" -o "$3" --compiler "$D/compiler" --corpus "$D/corpus" \
		--cell patched="$1" --cell stock="$2" $DIRTY >/dev/null
}
freeze() { $CALIBER prepare "$1" --inventory-dir "$D/corpus" --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null; }
# run OUT [OPTIONS]: the frozen canary with the builds worker ($WORKER
# overrides it); private caches under tmp/, which must be empty afterwards.
run() {
	out=$1; shift; mkdir -p tmp
	TMPDIR=$PWD/tmp $CALIBER run --manifest frozen/cpu-builds-canary/manifest.json \
		--task-matrix frozen/cpu-builds-canary/task-matrix.json --build-root "${BUILD_ROOT:-$D/compiler}" \
		--corpus "$D/corpus" --output-root $out --backends "$CALIBER_ROOT/tests/backends" --python $PY $DIRTY \
		--worker "${WORKER:-python3 $W/builds.py $D}" "$@"
}
# switches OUT: the campaign of switches of tests/data/campaign-cpu, for comparison.
switches() {
	$CALIBER pin "$D/manifest.in.json" -o switches.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null &&
	freeze switches.json &&
	TMPDIR=$PWD $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root $1 --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY --worker "python3 $W/replay.py $D" --quiet >/dev/null
}
# refused OUT: run refused the batch (exit 3) and wrote nothing: no run
# root, no scratch folder left.
refused() {
	set +e; run $1 >stdout 2>stderr; rc=$?; set -e
	test $rc -eq 3 || { echo "exit $rc"; cat stdout stderr; return 1; }
	test ! -e $1 && expect_empty tmp
}
'
export setup

test_expect_success 'prepare freezes each cell'"'"'s compiler, its root made absolute: a relative one against the manifest'"'"'s folder' '
	eval "$setup" && mkdir sub builds elsewhere && cp -R "$B/patched" builds/patched &&
	pin "$PWD/builds/patched" "$D/compiler" abs.json &&
	python3 -c "import json, sys; m = json.load(open(sys.argv[1])); [c[\"compiler\"].update(root=\"../builds/patched\") for c in m[\"cells\"][:2]]; json.dump(m, open(sys.argv[2], \"w\"), indent=2)" abs.json sub/manifest.json &&
	(cd elsewhere && $CALIBER prepare ../sub/manifest.json --inventory-dir "$D/corpus" --output-root ../frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null) &&
	python3 - "$PWD" "$D" frozen/cpu-builds-canary/task-matrix.json <<-EOF &&
	import json, os, sys
	here, d, path = sys.argv[1:]
	here = os.path.realpath(here)
	m = json.load(open(path))
	roots = [c.get("compiler", {}).get("root") for c in m["cells"]]
	assert roots == [here + "/sub/../builds/patched"] * 2 + [d + "/compiler"], roots
	assert m["compiler_root_base"] == here + "/sub", m
	assert m["cells"][2]["compiler"]["import"] == "fakecompiler" and len(m["cells"][2]["compiler"]["tree_sha256"]) == 64
	EOF
	run out --quiet >/dev/null &&
	grep -q "\"root\": \"$PWD/builds/patched\"" out/tasks/gain/cells/a-patched/cell.json &&
	$CALIBER prepare abs.json --inventory-dir "$D/corpus" --output-root f2 --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	! grep -q compiler_root_base f2/cpu-builds-canary/task-matrix.json
'

test_expect_success 'two builds: each cell runs its own compiler, and the verdicts are those of the campaign of switches' '
	eval "$setup" && pin "$B/patched" "$D/compiler" manifest.json && freeze manifest.json &&
	run out >stdout &&
	grep -qx "preflight: sources: ok (compiler $D/compiler, corpus $D/corpus, harness $CALIBER_ROOT${DIRTY:+ (--allow-dirty-harness: harness not checked)}, cell patched $B/patched (cells\[0\].compiler), cell patched-ctl $B/patched (cells\[1\].compiler, as cell patched), cell stock $D/compiler (cells\[2\].compiler))" stdout &&
	grep -qx "preflight: imports: ok (cell patched: fakecompiler -> $B/patched/fakecompiler/__init__.py; cell patched-ctl: fakecompiler -> $B/patched/fakecompiler/__init__.py; cell stock: fakecompiler -> $D/compiler/fakecompiler/__init__.py)" stdout &&
	printf "%s\n" task,verdict gain,G same,B flat,C slow,R wrong,K >want && grep -v "^," out/matrix.csv | cut -d, -f1,3 | tr -d "\r" >got &&
	cmp want got && $CALIBER verify out >/dev/null &&
	switches sw && cmp sw/matrix.csv out/matrix.csv &&
	grep -q "^builds: gain candidate a runs $D/compiler/fakecompiler/__init__.py (candidate build)" out/tasks/gain/cells/a-stock/worker.log &&
	grep -q "^builds: gain control a runs $B/patched/fakecompiler/__init__.py (baseline build)" out/tasks/gain/cells/a-patched-ctl/worker.log &&
	expect_empty tmp
'

test_expect_success 'cell.json and campaign.json name the compiler each cell ran' '
	eval "$setup" && pin "$B/patched" "$D/compiler" manifest.json && freeze manifest.json && run out --quiet >/dev/null &&
	python3 - out "$B/patched" "$D/compiler" "$($CALIBER digest "$B/patched")" "$($CALIBER digest "$D/compiler")" <<-EOF
	import glob, json, sys
	out, patched, stock, ptree, stree = sys.argv[1:]
	want = {"patched": {"pin": "cells[0].compiler", "root": patched, "tree_sha256": ptree, "import": "fakecompiler"},
	        "patched-ctl": {"pin": "cells[1].compiler", "root": patched, "tree_sha256": ptree, "import": "fakecompiler"},
	        "stock": {"pin": "cells[2].compiler", "root": stock, "tree_sha256": stree, "import": "fakecompiler"}}
	cells = glob.glob(out + "/tasks/*/cells/*/cell.json")
	assert len(cells) > 40, cells
	for path in cells:
	    c = json.load(open(path))
	    assert c["compiler"] == want[c["cell"]], (path, c["compiler"])
	roots = json.load(open(out + "/campaign.json"))["roots"]
	assert roots["cells"] == want and roots["compiler"] == stock, roots
	EOF
	$CALIBER report out -o report.html >/dev/null &&
	grep -q "<br><b>cell patched-ctl</b> import fakecompiler · pin cells\[1\].compiler · root $B/patched · tree_sha256 " report.html &&
	grep -q "<br><b>cell stock</b> import fakecompiler · pin cells\[2\].compiler · root $D/compiler · tree_sha256 " report.html
'

test_expect_success 'a cell without a compiler of its own keeps running sources.compiler at --build-root' '
	eval "$setup" && pin "$B/patched" "$D/compiler" pinned.json &&
	python3 - pinned.json "$($CALIBER digest "$B/patched")" >manifest.json <<-EOF &&
	import json, sys
	m = json.load(open(sys.argv[1]))
	m["sources"]["compiler"]["tree_sha256"] = sys.argv[2]
	for c in m["cells"][:2]:
	    del c["compiler"]
	print(json.dumps(m, indent=2))
	EOF
	freeze manifest.json && ! grep -q "\"root\": \"$B/patched\"" frozen/cpu-builds-canary/task-matrix.json &&
	BUILD_ROOT="$B/patched" run out >stdout &&
	grep -q "^preflight: sources: ok (compiler $B/patched, .*, cell patched $B/patched (sources.compiler), cell patched-ctl $B/patched (sources.compiler), cell stock $D/compiler (cells\[2\].compiler))$" stdout &&
	grep -q "\"pin\": \"sources.compiler\"" out/tasks/gain/cells/a-patched/cell.json &&
	switches sw && cmp sw/matrix.csv out/matrix.csv
'

test_expect_success 'each cell compiles into a cache of its own, the same folder names in both builds; one shared cache would change the verdicts' '
	eval "$setup" && pin "$B/patched" "$D/compiler" manifest.json && freeze manifest.json &&
	run private --quiet >/dev/null &&
	for c in a-patched a-patched-ctl b-patched; do grep -q "\"build\": \"baseline\"" private/tasks/gain/cells/$c/ir/MBG/*.json; done &&
	grep -q "\"build\": \"candidate\"" private/tasks/gain/cells/a-stock/ir/MBG/*.json &&
	grep -q "\"build\": \"candidate\"" private/tasks/gain/cells/b-stock/ir/MBG/*.json &&
	# a cache shared across cells is what confinement now refuses a worker
	# (docs/security.md): unconfined, it changes the verdict
	mkdir shared && WORKER="python3 $W/builds.py $D $PWD/shared" run sh --quiet --no-confinement >/dev/null &&
	grep -q "\"build\": \"baseline\"" sh/tasks/gain/cells/a-stock/ir/MBG/*.json &&
	cut -d, -f1,3 sh/matrix.csv | tr -d "\r" | grep -qx "gain,B" && cut -d, -f1,3 private/matrix.csv | grep -qx "gain,G"
'

test_expect_success 'refused by sources: a cell whose compiler root is missing; nothing is written' '
	eval "$setup" && cp -R "$B/patched" gone && pin "$PWD/gone" "$D/compiler" manifest.json && freeze manifest.json &&
	rm -rf gone && refused out &&
	grep -qx "preflight: sources: FAILED: cell patched: cells\[0\].compiler.root: $PWD/gone does not exist" stdout &&
	grep -q "^preflight: imports: FAILED: cell patched: " stdout &&
	grep -qx "caliber: run: preflight refused the batch: 2 checks failed (sources, imports); nothing was written" stderr
'

test_expect_success 'refused by sources: a cell whose root does not hold its pinned tree' '
	eval "$setup" && cp -R "$D/compiler" stock && pin "$B/patched" "$PWD/stock" manifest.json && freeze manifest.json &&
	echo "REMOVE_LAYOUT_CONVERSIONS_RUNS = (1, 2)" >>stock/fakecompiler/__init__.py && refused out &&
	grep -qx "preflight: sources: FAILED: cell stock: cells\[2\].compiler: $PWD/stock has tree digest $($CALIBER digest stock), the manifest pins $($CALIBER digest "$D/compiler")" stdout &&
	grep -q "^preflight: imports: ok" stdout &&
	grep -qx "caliber: run: preflight refused the batch: 1 check failed (sources); nothing was written" stderr
'

test_expect_success 'refused by imports: a cell whose compiler module resolves outside its own root' '
	eval "$setup" && mkdir empty && echo "a build without the module" >empty/README &&
	pin "$B/patched" "$PWD/empty" pinned.json &&
	python3 - pinned.json "$($CALIBER digest empty)" "$D/compiler" >manifest.json <<-EOF &&
	import json, sys
	m = json.load(open(sys.argv[1]))
	m["cells"][2]["compiler"]["tree_sha256"] = sys.argv[2]
	m["cells"][2]["env"] = {"PYTHONPATH": sys.argv[3]}
	print(json.dumps(m, indent=2))
	EOF
	freeze manifest.json && refused out &&
	grep -q "^preflight: sources: ok" stdout &&
	grep -qx "preflight: imports: FAILED: cell stock: fakecompiler resolves to $D/compiler/fakecompiler/__init__.py, outside its frozen root $PWD/empty" stdout &&
	grep -qx "caliber: run: preflight refused the batch: 1 check failed (imports); nothing was written" stderr
'

test_expect_success 'refused by binding: a frozen matrix whose compiler root was edited' '
	eval "$setup" && pin "$B/patched" "$D/compiler" manifest.json && freeze manifest.json &&
	chmod u+w frozen/cpu-builds-canary frozen/cpu-builds-canary/task-matrix.json &&
	sed -i "s|\"root\": \"$D/compiler\"|\"root\": \"$B/patched\"|" frozen/cpu-builds-canary/task-matrix.json &&
	chmod a-w frozen/cpu-builds-canary/task-matrix.json && refused out &&
	grep -qx "preflight: binding: FAILED: $PWD/frozen/cpu-builds-canary/task-matrix.json: the matrix is not the one its manifest freezes to (edited after prepare?)" stdout
'

test_expect_success 'caliber worker runs one cell of a two-build campaign against that cell'"'"'s compiler' '
	eval "$setup" && pin "$B/patched" "$D/compiler" manifest.json && freeze manifest.json &&
	for c in patched stock; do
		TMPDIR=$PWD $CALIBER worker --manifest frozen/cpu-builds-canary/manifest.json --task-matrix frozen/cpu-builds-canary/task-matrix.json \
			--task gain --cell $c --phase a --corpus "$D/corpus" --build-root "$D/compiler" --out task \
			--backends "$CALIBER_ROOT/tests/backends" --worker "python3 $W/builds.py $D" >/dev/null
	done &&
	grep -q "(baseline build)" task/cells/a-patched/worker.log && grep -q "(candidate build)" task/cells/a-stock/worker.log &&
	grep -q "\"root\": \"$B/patched\"" task/cells/a-patched/cell.json
'

# A stand-in for an installed Triton 3.6 as far as scripts/device/two_builds.sh
# reads it: the package, its version, and an NVIDIA backend whose
# make_ttgir adds RemoveLayoutConversions RUNS times among other passes.
fake_triton='
fake_triton() {
	mkdir -p site/triton/backends/nvidia && : >site/triton/backends/__init__.py && : >site/triton/backends/nvidia/__init__.py &&
	echo "__version__ = \"$1\"" >site/triton/__init__.py &&
	{
		printf "%s\n" "class CUDABackend:" "" "    @staticmethod" "    def make_ttgir(mod, metadata, opt, capability):" \
			"        pm = []" "        passes.ttgpuir.add_coalesce(pm)"
		i=0; while [ $i -lt $2 ]; do
			printf "%s\n" "        passes.ttgpuir.add_remove_layout_conversions(pm)" "        passes.ttgpuir.add_accelerate_matmul(pm)"
			i=$((i + 1))
		done
		printf "%s\n" "        return mod" "" "    def make_llir(self, src, metadata, options, capability):" \
			"        passes.ttgpuir.add_remove_layout_conversions(pm)" "        return src"
	} >site/triton/backends/nvidia/compiler.py
}
'
export fake_triton

test_expect_success 'scripts/device/two_builds.sh copies the installed Triton, removes make_ttgir'"'"'s 2nd and 3rd RemoveLayoutConversions, and pins both builds' '
	eval "$fake_triton" && fake_triton 3.6.0 3 && export PYTHONPATH=$PWD/site &&
	sh "$CALIBER_ROOT/scripts/device/two_builds.sh" work m.json >stdout &&
	p=$PWD/work/triton-patched/triton/backends/nvidia/compiler.py &&
	test "$(grep -c "^        passes.ttgpuir.add_remove_layout_conversions(pm)$" $p)" = 2 &&
	test "$(grep -c "^        # caliber two-builds: RemoveLayoutConversions run [23] removed" $p)" = 2 &&
	test "$(wc -l <$p)" = "$(wc -l <site/triton/backends/nvidia/compiler.py)" &&
	sed -n 7p $p | grep -qx "        passes.ttgpuir.add_remove_layout_conversions(pm)" &&
	grep -qx "two_builds: $p: runs 2 and 3 removed (lines 9 and 11)" stdout &&
	python3 - m.json "$PWD/site/triton" "$PWD/work/triton-patched/triton" "$($CALIBER digest site/triton)" "$($CALIBER digest work/triton-patched/triton)" <<-PY &&
	import json, sys
	m = json.load(open(sys.argv[1]))
	stock, patched, stree, ptree = sys.argv[2:]
	assert "@" not in json.dumps(m), m
	assert m["sources"]["compiler"]["tree_sha256"] == stree
	assert [c["compiler"]["root"] for c in m["cells"]] == [patched, patched, stock]
	assert [c["compiler"]["tree_sha256"] for c in m["cells"]] == [ptree, ptree, stree] and ptree != stree
	PY
	$CALIBER prepare m.json --inventory-dir "$CALIBER_ROOT/ops" --dry-run >/dev/null &&
	printf "two_builds: %s exists; remove it to make the copy again\n" "$PWD/work/triton-patched" >want &&
	expect_refusal 1 want sh "$CALIBER_ROOT/scripts/device/two_builds.sh" work m2.json && test ! -e m2.json
'

test_expect_success 'scripts/device/two_builds.sh refuses a Triton other than 3.6 and a make_ttgir it does not fit' '
	eval "$fake_triton" && export PYTHONPATH=$PWD/site && fake_triton 3.5.1 3 &&
	echo "two_builds: the installed Triton is 3.5.1; the patch is written for 3.6'"'"'s make_ttgir" >want &&
	expect_refusal 1 want sh "$CALIBER_ROOT/scripts/device/two_builds.sh" work m.json && test ! -e work &&
	fake_triton 3.6.0 2 &&
	echo "two_builds: make_ttgir in $PWD/work/triton-patched/triton/backends/nvidia/compiler.py adds RemoveLayoutConversions 2 times, expected 3 (Triton 3.6)" >want &&
	expect_refusal 1 want sh "$CALIBER_ROOT/scripts/device/two_builds.sh" work m.json && test ! -e m.json
'
