#!/bin/sh
# Large inputs: an inventory of 100,000 ops and an index.tsv of 100,000
# variants, each with one row listed twice near the end (the check must find
# it, naming both lines) and without. Only the outcome is asserted, never a
# time: bench/large_inputs.sh measures the checks (O(n log n) since issue 14;
# the scans they replaced took 5 s and 34 s at 40,000 and 100,000 rows).
. "$(dirname "$0")/lib.sh"

N=100000
export N

test_expect_success "an inventory of $N ops prepares; one op listed twice is refused, naming both lines" '
	$PY - "$N" <<-PY
	import sys
	n = int(sys.argv[1])
	with open("inventory_main.csv", "w") as f:
	    f.write("op,benchmark_file,benchmark_test,correctness_file,correctness_selector,dtypes,kind\n")
	    for i in range(n):
	        f.write(f"op{i},benchmark/test_ops.py,test_perf_op{i},tests/test_ops.py,op{i},float16,pointwise\n")
	PY
	sed -e "s/\"softmax_rows\"/\"op$((N - 1))\"/g" -e "s/test_softmax.py::test_perf_softmax_rows/test_ops.py::test_perf_op$((N - 1))/" \
	    -e "s/\"gelu_bwd\"/\"op0\"/g" -e "s/test_gelu.py::test_perf_gelu_bwd/test_ops.py::test_perf_op0/" \
	    -e "s|tests/test_gelu.py::test_gelu_bwd\[bfloat16\]|tests/test_ops.py::test_op0[float16]|" \
	    -e "s/\"bfloat16\"/\"float16\"/" "$CALIBER_ROOT/tests/bad/base/manifest.json" >m.json &&
	$CALIBER prepare m.json --inventory-dir . --dry-run >stdout &&
	grep -q "^  op$((N - 1)) " stdout &&
	echo "op7,benchmark/test_ops.py,test_perf_op7,tests/test_ops.py,op7,float16,pointwise" >>inventory_main.csv &&
	printf "caliber: prepare: @CWD@/inventory_main.csv:%s: op '"'"'op7'"'"' is already listed at line 9\n" $((N + 2)) >want &&
	expect_refusal 1 want $CALIBER prepare m.json --inventory-dir . --dry-run
'

test_expect_success "an index.tsv of $N variants is joined; one variant listed twice is refused, naming both lines" '
	mkdir -p cell/ir &&
	$PY - "$N" <<-PY
	import sys
	n = int(sys.argv[1])
	with open("cell/ir/index.tsv", "w") as f:
	    f.write("variant\tkernel\tlaunches\ttuning_launches\n")
	    for i in range(n):
	        f.write(f"V{i:07d}\tk{i}\t{i % 7}\t0\n")
	PY
	$CALIBER topology cell >out.json &&
	test "$(grep -c "\"row V[0-9]*: no IR\"" out.json)" = "$N" && grep -q "\"joinable\": false" out.json &&
	printf "V0000007\tk\t1\t0\n" >>cell/ir/index.tsv &&
	printf "caliber: topology: @CWD@/cell/ir/index.tsv:%s: variant '"'"'V0000007'"'"' is already listed at line 9\n" $((N + 2)) >want &&
	expect_refusal 1 want $CALIBER topology cell
'
