#!/bin/sh
# caliber inventory: the inventory of a corpus tree, read statically from its
# pytest files by caliber_pytest.inventory, in both FlagGems layouts; what
# prepare makes of its extra columns and of '*'; and every refusal, which
# names file and line and writes nothing.
. "$(dirname "$0")/lib.sh"

D="$CALIBER_ROOT/tests/data/inventory"
export D

# The expected inventory of tree $1 with its digest filled in.
expected='
expected() {
	sed "s/@DIGEST@/$($CALIBER digest "$D/$1")/" "$D/$1.csv"
}'

for case in per-operator:4 per-category:5; do
	layout=${case%:*}
	test_expect_success "a $layout tree gives the expected inventory" "
		$expected
		\$CALIBER inventory --corpus '$D/$layout' -o inv.csv >stdout 2>stderr &&
		expected $layout >want && cmp want inv.csv &&
		grep -q '^inventory: ${case#*:} ops from the $layout corpus ' stdout
	"
done

test_expect_success 'tables of ops are evaluated statically; what needs running is left out with a warning naming file and line' "
	$expected
	(cd '$D' && \$CALIBER inventory --corpus tables -o \"\$T/inv.csv\" >\"\$T/stdout\" 2>\"\$T/stderr\") &&
	expected tables >want && cmp want inv.csv && sed \"s|@D@|$D|\" '$D/tables.stderr' | cmp - stderr &&
	grep -q '^inventory: 6 ops from the per-category corpus $D/tables ' stdout
"

test_expect_success 'an op with a benchmark test but no correctness test is left out with a warning' '
	$CALIBER inventory --corpus "$D/per-operator" -o inv.csv 2>stderr >/dev/null &&
	printf "%s\n" "caliber: inventory: warning: op '\''norm'\'' (benchmark/test_norm.py::test_norm) has no test under tests/ marked '\''norm'\''; left out" >want &&
	cmp want stderr && ! grep -q "^norm," inv.csv &&
	$CALIBER inventory --help | grep -q "is left out, with a"
'

test_expect_success 'the same tree elsewhere gives the same bytes; -o and --output are one' '
	cp -R "$D/per-category" here &&
	$CALIBER inventory --corpus "$D/per-category" -o a.csv >/dev/null &&
	$CALIBER inventory --output=b.csv --corpus here >/dev/null && cmp a.csv b.csv
'

test_expect_success 'a FILE inside the corpus is written, with a warning that the digest predates it' '
	cp -R "$D/per-category" c &&
	$CALIBER inventory --corpus c -o c/inv.csv >/dev/null 2>stderr &&
	grep -q "^caliber: inventory: warning: $PWD/c/inv.csv lies inside the corpus" stderr &&
	grep -q ",$($CALIBER digest "$D/per-category")\$" c/inv.csv
'

# A manifest from the catalogue base whose workloads are "op dtype,dtype target" arguments.
mkman='
mkman() {
	python3 - "$CALIBER_ROOT/tests/bad/base/manifest.json" "$@" >m.json <<PY
import json, sys
m = json.load(open(sys.argv[1]))
m["workloads"] = [{"id": op, "op": op, "dtypes": dt.split(","), "timeout_s": 60, "canary": True,
                   "benchmark": {"target": target}, "correctness": {}}
                  for op, dt, target in (a.split(" ") for a in sys.argv[2:])]
print(json.dumps(m, indent=2))
PY
}'

test_expect_success 'prepare takes the written inventory: dtypes * admits any dtype, a list only its own' "
	$mkman
	mkdir inv && \$CALIBER inventory --corpus '$D/per-operator' -o inv/inventory_main.csv >/dev/null 2>&1 &&
	mkman 'abs_ float64,int8 benchmark/test_abs.py::test_abs_inplace' \
	      'add float16,float64 benchmark/test_add.py::TestAdd::test_perf' &&
	\$CALIBER prepare m.json --inventory-dir inv --dry-run >/dev/null &&
	mkman 'add int8 benchmark/test_add.py::TestAdd::test_perf' &&
	printf '%s\n' \"caliber: prepare: @CWD@/m.json: workloads[0].dtypes: 'int8' is not among the inventory's dtypes for op 'add' (float16;float32;float64)\" >want &&
	expect_refusal 1 want \$CALIBER prepare m.json --inventory-dir inv --dry-run
"

# The inventory of the catalogue base with column $1 set to $2 on every row
# (an extra column when $1 is past the seventh).
setcol='
setcol() {
	mkdir -p inv
	awk -F, -v OFS=, -v c="$1" -v v="$2" -v h="${3-}" \
		"NR == 1 { if (h != \"\") \$c = h; print; next } { \$c = v; print }" \
		"$CALIBER_ROOT/tests/bad/base/inventory_main.csv" >inv/inventory_main.csv
}'

test_expect_success 'prepare checks the optional columns where they are present' "
	$setcol
	cp '$CALIBER_ROOT/tests/bad/base/manifest.json' m.json &&
	setcol 8 per-category layout && \$CALIBER prepare m.json --inventory-dir inv --dry-run >/dev/null &&
	setcol 8 flat layout &&
	printf '%s\n' \"caliber: prepare: @CWD@/inv/inventory_main.csv:2: layout 'flat' is neither per-operator nor per-category\" >want &&
	expect_refusal 1 want \$CALIBER prepare m.json --inventory-dir inv --dry-run &&
	setcol 8 ABC corpus_tree_sha256 &&
	printf '%s\n' \"caliber: prepare: @CWD@/inv/inventory_main.csv:2: corpus_tree_sha256 'ABC' is not 64 lowercase hex digits\" >want &&
	expect_refusal 1 want \$CALIBER prepare m.json --inventory-dir inv --dry-run &&
	setcol 6 '*;float16' &&
	printf '%s\n' \"caliber: prepare: @CWD@/inv/inventory_main.csv:2: dtypes '*' (any dtype) must stand alone, not in '*;float16'\" >want &&
	expect_refusal 1 want \$CALIBER prepare m.json --inventory-dir inv --dry-run &&
	setcol 8 x colour &&
	printf '%s\n' \"caliber: prepare: @CWD@/inv/inventory_main.csv:1: unknown column 'colour'\" >want &&
	expect_refusal 1 want \$CALIBER prepare m.json --inventory-dir inv --dry-run
"

test_expect_success 'caliber'"'"'s own ops/: the same 32 ops, files, tests, selectors and dtypes as inventory_main.csv' '
	$CALIBER inventory --corpus "$CALIBER_ROOT/ops" -o inv.csv >stdout &&
	grep -q "^inventory: 32 ops from the per-operator corpus " stdout &&
	python3 - "$CALIBER_ROOT/ops/inventory_main.csv" inv.csv <<PY
import csv, sys
hand = {r["op"]: r for r in csv.DictReader(open(sys.argv[1]))}
read = {r["op"]: r for r in csv.DictReader(open(sys.argv[2]))}
assert set(hand) == set(read), set(hand) ^ set(read)
for op, r in hand.items():
    for k in ("benchmark_file", "benchmark_test", "correctness_file", "correctness_selector"):
        assert r[k] == read[op][k], (op, k, r[k], read[op][k])
    assert set(r["dtypes"].split(";")) == set(read[op]["dtypes"].split(";")), (op, r["dtypes"], read[op]["dtypes"])
    assert read[op]["layout"] == "per-operator"
PY
'

for e in "$D"/bad/*.expect; do
	name=$(basename "$e" .expect)
	test_expect_success "bad/$name is refused with its file and line, nothing written" "
		cd '$D/bad' &&
		expect_refusal 1 '$e' \$CALIBER inventory --corpus '$name' -o \"\$T/inv.csv\" &&
		test ! -e \"\$T/inv.csv\"
	"
done

test_expect_success 'a file that is not UTF-8 is refused at the line of its first bad byte' '
	mkdir -p c/benchmark c/tests &&
	cp "$D/bad/no-tests-folder/benchmark/test_x.py" c/benchmark/ &&
	printf "import pytest\n\n# caf\351 au lait\n" >c/tests/test_x.py &&
	printf "%s\n" "caliber: inventory: @CWD@/c/tests/test_x.py:3: not UTF-8 (byte 0xe9)" >want &&
	expect_refusal 1 want $CALIBER inventory --corpus c -o inv.csv &&
	test ! -e inv.csv
'

test_expect_success 'a refusal leaves an existing FILE as it was' '
	printf "old\n" >inv.csv &&
	! $CALIBER inventory --corpus "$D/bad/unclosed-bracket" -o inv.csv 2>/dev/null &&
	test "$(cat inv.csv)" = old && test "$(ls -A)" = inv.csv
'

test_expect_success 'a FILE that is a folder or a link is refused, not replaced' '
	mkdir d && ln -s inv.csv link &&
	printf "%s\n" "caliber: inventory: -o @CWD@/d: exists and is not a regular file" >want &&
	expect_refusal 1 want $CALIBER inventory --corpus "$D/per-operator" -o d &&
	printf "%s\n" "caliber: inventory: -o @CWD@/link: exists and is not a regular file" >want &&
	expect_refusal 1 want $CALIBER inventory --corpus "$D/per-operator" -o link &&
	test -d d && test -L link && test ! -e inv.csv
'

test_expect_success 'a corpus that is not a directory, and a command line without -o, are refused' '
	printf "%s\n" "caliber: inventory: @CWD@/nope: not a directory" >want &&
	expect_refusal 1 want $CALIBER inventory --corpus nope -o inv.csv &&
	printf "%s\n" "caliber: inventory: --corpus DIR and -o FILE are both needed (see caliber inventory --help)" >want &&
	expect_refusal 2 want $CALIBER inventory --corpus "$D/per-operator" &&
	test ! -e inv.csv
'

test_expect_success 'the correctness file named like the benchmark file wins over one that sorts first' '
	$CALIBER inventory --corpus "$CALIBER_ROOT/tests/data/inventory/paired" -o inv.csv >/dev/null &&
	grep -q "^softmax,benchmark/test_softmax.py,test_perf_softmax,tests/test_softmax.py,softmax," inv.csv
'

test_expect_success '--python picks the interpreter; one that cannot start or fails is named' '
	$CALIBER inventory --corpus "$D/paired" -o inv.csv --python "$(command -v python3)" >/dev/null &&
	printf "%s\n" "caliber: inventory: @CWD@/no-python: cannot start: No such file or directory" >want &&
	expect_refusal 1 want $CALIBER inventory --corpus "$D/paired" -o x.csv --python ./no-python &&
	printf "#!/bin/sh\necho \"Traceback (most recent call last):\" >&2\necho \"ImportError: no\" >&2\nexit 3\n" >py &&
	chmod +x py &&
	printf "%s\n" "caliber: inventory: @CWD@/py -m caliber_pytest.inventory exited with status 3: ImportError: no" >want &&
	expect_refusal 1 want $CALIBER inventory --corpus "$D/paired" -o x.csv --python ./py &&
	test ! -e x.csv
'

test_expect_success 'an interpreter that fails after a long traceback is named by its last line, not one of the middle' '
	printf "#!/bin/sh\nfor i in \$(seq 300); do echo \"  File \\\"x.py\\\", line \$i, in f\" >&2; done\necho \"RecursionError: deep\" >&2\nexit 3\n" >py &&
	chmod +x py &&
	test "$(./py 2>&1 | wc -c)" -gt 8192 &&
	printf "%s\n" "caliber: inventory: @CWD@/py -m caliber_pytest.inventory exited with status 3: RecursionError: deep" >want &&
	expect_refusal 1 want $CALIBER inventory --corpus "$D/paired" -o x.csv --python ./py
'

test_expect_success 'the reader imports nothing from the folder caliber runs in, and leaves no bytecode' '
	cp -R "$D/paired" c && mkdir run &&
	printf "raise SystemExit(\"shadowed\")\n" >run/json.py && cp run/json.py run/ast.py &&
	(cd run && $CALIBER inventory --corpus ../c -o ../inv.csv >/dev/null) &&
	grep -q "^softmax," inv.csv &&
	test -z "$(find c -name __pycache__)"
'
