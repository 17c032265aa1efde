#!/bin/sh
# caliber pin: a template's pins filled from real trees. A tree_sha256 is
# the tree's digest, a commit the HEAD of the clean checkout the tree lies
# in (a changed or untracked file is refused, naming it), a commit asked of
# a tree in no checkout becomes a tree_sha256 and says so, the harness is
# the commit caliber was built from; --cell gives a cell its own compiler
# and the control follows the baseline. The result is what prepare
# accepts, keeps the template's order and reals (0.05 stays 0.05), and
# nothing is written when anything is refused.
. "$(dirname "$0")/lib.sh"

D="$CALIBER_ROOT/tests/data/campaign-cpu"
B="$CALIBER_ROOT/tests/data/campaign-builds"
export D B

# A git checkout holding a copy of the CPU corpus, committed.
setup='
git_corpus() {
	mkdir repo && cp -R "$D/corpus" repo/corpus && git -C repo init -q &&
	git -C repo add -A && git -C repo -c user.email=t@example.org -c user.name=t commit -qm corpus
}
commit_template() {
	python3 -c "import json, sys; m = json.load(open(sys.argv[1])); m[\"sources\"][\"corpus\"] = {\"commit\": \"@CORPUS_COMMIT@\"}; json.dump(m, open(\"commit.in.json\", \"w\"), indent=2)" "$D/manifest.in.json"
}
'
export setup

test_expect_success 'the CPU template: tree digests and the harness commit, as the sed templates gave, and prepare takes it' '
	$CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >stdout &&
	sed -e "s/@COMPILER_TREE@/$($CALIBER digest "$D/compiler")/" -e "s/@CORPUS_TREE@/$($CALIBER digest "$D/corpus")/" \
	    -e "s/@HARNESS_COMMIT@/$commit/" "$D/manifest.in.json" >want.json &&
	cmp want.json manifest.json &&
	printf "%s\n" "pin: sources.compiler: tree_sha256 $($CALIBER digest "$D/compiler") of $D/compiler" \
		"pin: sources.corpus: tree_sha256 $($CALIBER digest "$D/corpus") of $D/corpus" >want &&
	head -2 stdout | cmp want - &&
	grep -Eqx "pin: sources.harness: commit $commit \(this caliber was built from it(, with changes)?\), $(cd "$CALIBER_ROOT" && pwd -P)" stdout &&
	tail -1 stdout | grep -qx "pin: wrote $PWD/manifest.json" &&
	grep -q "\"gain\": 0.05," manifest.json && grep -q "\"regression\": -0.03," manifest.json &&
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --backends "$CALIBER_ROOT/tests/backends" --dry-run >/dev/null
'

test_expect_success 'a commit pin is the HEAD of the clean checkout the corpus lies in' '
	eval "$setup" && git_corpus && commit_template &&
	$CALIBER pin commit.in.json -o manifest.json --compiler "$D/compiler" --corpus repo/corpus $DIRTY >stdout &&
	head=$(git -C repo rev-parse HEAD) &&
	grep -qx "pin: sources.corpus: commit $head of $PWD/repo/corpus" stdout &&
	python3 -c "import json, sys; assert json.load(open(\"manifest.json\"))[\"sources\"][\"corpus\"] == {\"commit\": sys.argv[1]}" "$head"
'

test_expect_success 'a changed or untracked file in the checkout is refused by name, and nothing is written' '
	eval "$setup" && git_corpus && commit_template &&
	echo "# edited" >>repo/corpus/benchmark/test_ops.py &&
	printf "%s\n" "caliber: pin: $PWD/commit.in.json: sources.corpus: $PWD/repo/corpus has changes or untracked files ( M corpus/benchmark/test_ops.py): commit them, or pin it by tree_sha256" >want &&
	expect_refusal 1 want $CALIBER pin commit.in.json -o manifest.json --compiler "$D/compiler" --corpus repo/corpus $DIRTY &&
	test ! -e manifest.json &&
	git -C repo checkout -q -- . && touch repo/corpus/new.py &&
	printf "%s\n" "caliber: pin: $PWD/commit.in.json: sources.corpus: $PWD/repo/corpus has changes or untracked files (?? corpus/new.py): commit them, or pin it by tree_sha256" >want &&
	expect_refusal 1 want $CALIBER pin commit.in.json -o manifest.json --compiler "$D/compiler" --corpus repo/corpus $DIRTY &&
	test ! -e manifest.json
'

test_expect_success 'a commit asked of a tree in no checkout is pinned by its digest, and pin says so' '
	eval "$setup" && commit_template && cp -R "$D/corpus" corpus &&
	$CALIBER pin commit.in.json -o manifest.json --compiler "$D/compiler" --corpus corpus $DIRTY >stdout &&
	grep -qx "pin: sources.corpus: $PWD/corpus is in no git checkout: pinned by tree_sha256, not commit" stdout &&
	grep -qx "pin: sources.corpus: tree_sha256 $($CALIBER digest corpus) of $PWD/corpus" stdout &&
	python3 -c "import json, sys; assert json.load(open(\"manifest.json\"))[\"sources\"][\"corpus\"] == {\"tree_sha256\": sys.argv[1]}" "$($CALIBER digest corpus)"
'

test_expect_success 'two builds: --cell gives the baseline its build, the control follows it, the candidate runs --compiler' '
	cp -R "$B/patched" patched &&
	$CALIBER pin "$B/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" \
		--cell patched=patched $DIRTY >stdout &&
	stock=$($CALIBER digest "$D/compiler") && mine=$($CALIBER digest patched) &&
	grep -qx "pin: cells\[0\].compiler (cell patched): tree_sha256 $mine of $PWD/patched" stdout &&
	grep -qx "pin: cells\[1\].compiler (cell patched-ctl): the baseline.s, as the control.s must be" stdout &&
	grep -qx "pin: cells\[2\].compiler (cell stock): tree_sha256 $stock of $D/compiler" stdout &&
	python3 - "$mine" "$PWD/patched" "$stock" "$D/compiler" <<PY &&
import json, sys
mine, mine_root, stock, stock_root = sys.argv[1:]
cells = json.load(open("manifest.json"))["cells"]
want = [{"tree_sha256": mine, "import": "fakecompiler", "root": mine_root}] * 2
want.append({"tree_sha256": stock, "import": "fakecompiler", "root": stock_root})
assert [c["compiler"] for c in cells] == want, cells
PY
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --backends "$CALIBER_ROOT/tests/backends" --dry-run >/dev/null
'

test_expect_success 'a --cell for a cell without a compiler in the template makes one, with sources.compiler.s import' '
	$CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" \
		--cell candidate="$B/patched" $DIRTY >/dev/null &&
	python3 - "$($CALIBER digest "$B/patched")" "$B/patched" <<PY
import json, sys
cells = json.load(open("manifest.json"))["cells"]
assert [c.get("compiler") for c in cells[:2]] == [None, None], cells
assert cells[2]["compiler"] == {"tree_sha256": sys.argv[1], "import": "fakecompiler", "root": sys.argv[2]}, cells[2]
PY
'

test_expect_success 'a --cell that names no cell (did you mean), twice, or without =DIR is refused; nothing is written' '
	printf "%s\n" "caliber: pin: $B/manifest.in.json: --cell patchd=...: the template has no cell '"'"'patchd'"'"' (did you mean patched?)" >want &&
	expect_refusal 1 want $CALIBER pin "$B/manifest.in.json" -o m.json --compiler "$D/compiler" --corpus "$D/corpus" --cell patchd=x $DIRTY &&
	printf "%s\n" "caliber: pin: $B/manifest.in.json: --cell stock: given twice" >want &&
	expect_refusal 1 want $CALIBER pin "$B/manifest.in.json" -o m.json --compiler "$D/compiler" --corpus "$D/corpus" \
		--cell stock="$D/compiler" --cell stock="$D/compiler" $DIRTY &&
	printf "%s\n" "caliber: pin: --cell: '"'"'patched'"'"' is not NAME=DIR" >want &&
	expect_refusal 2 want $CALIBER pin "$B/manifest.in.json" -o m.json --compiler "$D/compiler" --corpus "$D/corpus" --cell patched &&
	printf "%s\n" "caliber: pin: --corpus DIR is required" >want &&
	expect_refusal 2 want $CALIBER pin "$B/manifest.in.json" -o m.json --compiler "$D/compiler" &&
	test ! -e m.json
'

test_expect_success 'a tree that is not there, or a template that is no manifest once pinned, is refused; nothing is written' '
	printf "%s\n" "caliber: pin: $D/manifest.in.json: sources.compiler: $PWD/nowhere is not a directory" >want &&
	expect_refusal 1 want $CALIBER pin "$D/manifest.in.json" -o m.json --compiler nowhere --corpus "$D/corpus" $DIRTY &&
	sed "s/\"repeats\": 7/\"repeat\": 7/" "$D/manifest.in.json" >bad.in.json &&
	printf "%s\n" "caliber: pin: $PWD/bad.in.json: timer.repeat: unknown key (did you mean repeats?)" >want &&
	expect_refusal 1 want $CALIBER pin bad.in.json -o m.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY &&
	test ! -e m.json
'

test_expect_success 'a real that needs 17 digits reads back as the same double' '
	python3 -c "import json, sys; m = json.load(open(sys.argv[1])); m[\"thresholds\"][\"gain\"] = 0.1 + 0.2; json.dump(m, open(\"r.in.json\", \"w\"), indent=2)" "$D/manifest.in.json" &&
	$CALIBER pin r.in.json -o m.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null &&
	python3 -c "import json; assert json.load(open(\"m.json\"))[\"thresholds\"] == {\"gain\": 0.1 + 0.2, \"regression\": -0.03, \"confidence\": 0.95}" &&
	grep -q "\"regression\": -0.03," m.json
'

test_expect_success 'pin writes in place (MANIFEST may be TEMPLATE), and never into a sealed run' '
	cp "$D/manifest.in.json" m.json &&
	$CALIBER pin m.json -o m.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null &&
	grep -q "\"tree_sha256\": \"$($CALIBER digest "$D/compiler")\"" m.json &&
	"$CALIBER_TOOLS/cbtest" mkrun "$CALIBER_ROOT/tests/golden/runs/basic/spec.json" S &&
	printf "%s\n" "caliber: pin: --output $PWD/S/m.json: inside the sealed run $PWD/S (a sealed run is never written to)" >want &&
	expect_refusal 1 want $CALIBER pin m.json -o S/m.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY &&
	test ! -e S/m.json
'

test_expect_success 'the README templates of campaigns/my-change pin with one --cell and prepare' '
	mkdir -p stock mine && cp -R "$CALIBER_ROOT/tests/fakegpu/site/triton" stock/triton && cp -R stock/triton mine/triton &&
	echo "# mine" >>mine/triton/__init__.py && mkdir fg &&
	$CALIBER pin "$CALIBER_ROOT/campaigns/my-change/ops.in.json" -o ops.json --compiler stock/triton \
		--cell mine=mine/triton --corpus "$CALIBER_ROOT/ops" $DIRTY >stdout &&
	grep -qx "pin: cells\[2\].compiler (cell mine): tree_sha256 $($CALIBER digest mine/triton) of $PWD/mine/triton" stdout &&
	$CALIBER prepare ops.json --inventory-dir "$CALIBER_ROOT/ops" --dry-run >/dev/null &&
	python3 -c "import json; m = json.load(open(\"ops.json\")); assert [c.get(\"compiler\") is None for c in m[\"cells\"]] == [True, True, False], m[\"cells\"]" &&
	$CALIBER pin "$CALIBER_ROOT/campaigns/my-change/flaggems.in.json" -o fg.json --compiler stock/triton \
		--cell mine=mine/triton --corpus fg $DIRTY >/dev/null &&
	grep -q "\"PYTHONPATH\": \"{corpus}/src\"" fg.json
'

test_expect_success 'a cell build at the file system'"'"'s root is refused before anything is digested, and nothing is written' '
	for root in / /.. //; do
		printf "%s\n" "caliber: pin: $D/manifest.in.json: cells[2].compiler (cell candidate): '"'"'/'"'"' is the file system'"'"'s root, not a build'"'"'s folder" >want &&
		expect_refusal 1 want timeout 20 $CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" \
			--cell candidate=$root $DIRTY && test ! -e manifest.json || exit 1
	done
'
