#!/bin/sh
# caliber topology: the JSON of a cell built from the golden TTGIR cases
# (tests/golden/topology/*.json), --floor moving variants between scoped and
# excluded, an unjoinable cell, the refusals of a missing or malformed index
# and of bad options, and --help.
. "$(dirname "$0")/lib.sh"

g="$CALIBER_ROOT/tests/golden"
# mkcell DIR: three variants from tests/golden/ttgir (5, 3 + 3 and 0
# operations) launched 0, 3 and 7 times, plus .json files and a stray file.
mkcell="
mkcell() {
	mkdir -p \"\$1/ir/AAAA\" \"\$1/ir/BBBB\" \"\$1/ir/CCCC\"
	cp '$g/ttgir/consecutive.ttgir' \"\$1/ir/AAAA/_copy_kernel.ttgir\"
	cp '$g/ttgir/generic-form.ttgir' \"\$1/ir/BBBB/_matmul_kernel.ttgir\"
	cp '$g/ttgir/crlf.ttgir' \"\$1/ir/BBBB/_matmul_kernel_epilogue.ttgir\"
	cp '$g/ttgir/loc-string.ttgir' \"\$1/ir/CCCC/_softmax_kernel.ttgir\"
	printf '{}\n' >\"\$1/ir/BBBB/_matmul_kernel.json\"
	printf 'ttg.convert_layout\n' >\"\$1/ir/notes.txt\"
	printf 'variant\tkernel\tlaunches\ttuning_launches\nAAAA\t_copy_kernel\t0\t0\nBBBB\t_matmul_kernel\t3\t12\nCCCC\t_softmax_kernel\t7\t0\n' >\"\$1/ir/index.tsv\"
}"

test_expect_success 'a joined cell prints its topology (floor 0)' "
	$mkcell
	mkcell cell &&
	\$CALIBER topology cell >out &&
	cmp '$g/topology/cell.json' out
"

test_expect_success '--floor 3 moves the variant launched 3 times to excluded' "
	$mkcell
	mkcell cell &&
	\$CALIBER topology cell --floor 3 >out &&
	cmp '$g/topology/cell-floor3.json' out &&
	\$CALIBER topology --floor=7 cell >out7 &&
	grep -q '\"scoped\": 0,' out7 && grep -q '\"total\": 11,' out7
"

test_expect_success '--op counts another operation' "
	$mkcell
	mkcell cell &&
	\$CALIBER topology cell --op arith.addf >out &&
	grep -q '\"total\": 2,' out &&
	\$CALIBER topology cell --op tt.return >out &&
	grep -q '\"total\": 1,' out
"

test_expect_success 'a variant without a row and a row without IR: joinable false, exit 0' "
	$mkcell
	mkcell cell &&
	mkdir cell/ir/ZZZZ && cp '$g/ttgir/consecutive.ttgir' cell/ir/ZZZZ/k.ttgir &&
	printf 'DDDD\t_k\t1\t0\n' >>cell/ir/index.tsv &&
	rm cell/ir/CCCC/_softmax_kernel.ttgir &&
	\$CALIBER topology cell >out &&
	cmp '$g/topology/unjoinable.json' out
"

test_expect_success 'a missing ir/index.tsv is refused' '
	mkdir -p cell/ir/AAAA &&
	printf "caliber: topology: @CWD@/cell/ir/index.tsv: No such file or directory\n" >want &&
	expect_refusal 1 want $CALIBER topology cell &&
	printf "caliber: topology: @CWD@/nowhere/ir/index.tsv: No such file or directory\n" >want &&
	expect_refusal 1 want $CALIBER topology nowhere
'

test_expect_success 'a malformed index is refused, naming the file, line and field' "
	$mkcell
	mkcell cell &&
	printf 'AAAA\t_copy_kernel\t-1\t0\n' >>cell/ir/index.tsv &&
	printf \"caliber: topology: @CWD@/cell/ir/index.tsv:5: variant 'AAAA' is already listed at line 2\n\" >want &&
	expect_refusal 1 want \$CALIBER topology cell &&
	printf 'variant\tkernel\tlaunches\ttuning_launches\nAAAA\t_k\t-1\t0\n' >cell/ir/index.tsv &&
	printf \"caliber: topology: @CWD@/cell/ir/index.tsv:2: launches: '-1' is not a count >= 0\n\" >want &&
	expect_refusal 1 want \$CALIBER topology cell &&
	printf 'variant\tkernel\tlaunches\n' >cell/ir/index.tsv &&
	printf \"caliber: topology: @CWD@/cell/ir/index.tsv:1: missing column 'tuning_launches'\n\" >want &&
	expect_refusal 1 want \$CALIBER topology cell
"

test_expect_success 'bad options are usage errors (exit 2)' "
	$mkcell
	mkcell cell &&
	printf \"caliber: topology: --floor: '-1' is not a count >= 0\n\" >want &&
	expect_refusal 2 want \$CALIBER topology cell --floor -1 &&
	printf \"caliber: topology: --floor: 'x' is not an integer\n\" >want &&
	expect_refusal 2 want \$CALIBER topology cell --floor x &&
	printf \"caliber: topology: --op: op 'ttg.convert_layout\\\"' is not an operation name (letters, digits, '_', '.', '\\\$')\n\" >want &&
	expect_refusal 2 want \$CALIBER topology cell --op 'ttg.convert_layout\"' &&
	printf 'caliber: topology: usage: caliber topology CELL_DIR [--floor N] [--op OP]\n' >want &&
	expect_refusal 2 want \$CALIBER topology &&
	expect_refusal 2 want \$CALIBER topology cell other
"

test_expect_success '--help explains the command and its options' '
	$CALIBER topology --help >out &&
	head -n 1 out | grep -qx "usage: caliber topology CELL_DIR \[--floor N\] \[--op OP\]" &&
	grep -q -- "--floor N" out && grep -q -- "--op OP" out && grep -q "joinable" out &&
	$CALIBER --help | grep -q "^  topology "
'
