#!/bin/sh
# run ends with its verdict counts; run --quiet prints only errors and that
# line (and, where run names it, the path of the report: "report: ..."):
# nothing else: a refused preflight prints its failed checks (no passed
# one) and the refusal; with --devices, the merged run's line alone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

test_expect_success 'run ends with "verdicts: G n, C n, B n, R n, K n, X n"' '
	eval "$setup" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" >stdout &&
	grep -v "^report: " stdout | tail -1 | grep -qx "verdicts: G 1, C 1, B 1, R 1, K 1, X 0" &&
	grep -v "^report: " stdout | tail -2 | head -1 | grep -q "^run: seal: SHA256SUMS sha256 "
'

test_expect_success 'run --quiet prints the verdict line only' '
	eval "$setup" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" --quiet >stdout 2>stderr &&
	printf "verdicts: G 1, C 1, B 1, R 1, K 1, X 0\n" >want && grep -v "^report: " stdout | cmp want - &&
	test "$(grep -c "^report: " stdout)" -le 1 &&
	test ! -s stderr && $CALIBER verify out >/dev/null
'

test_expect_success 'run --quiet with a preflight refused: only its failed checks and the refusal, nothing written' '
	eval "$setup" && make_frozen && mkdir empty &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --quiet --corpus "$PWD/empty" >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 3 && test ! -e out &&
	grep -q "^preflight: sources: FAILED: sources.corpus: " stdout &&
	test "$(grep -vc "^preflight: [a-z-]*: FAILED: " stdout)" -eq 0 &&
	test "$(wc -l <stderr)" -eq 1 &&
	grep -q "^caliber: run: preflight refused the batch: [0-9] checks* failed (.*); nothing was written$" stderr
'

test_expect_success 'run --devices --quiet: the merged run'"'"'s verdict line alone' '
	eval "$setup" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" --devices 0,1 --quiet >stdout 2>stderr &&
	printf "verdicts: G 1, C 1, B 1, R 1, K 1, X 0\n" >want && grep -v "^report: " stdout | cmp want - &&
	test "$(grep -c "^report: " stdout)" -le 1 &&
	test ! -s stderr && $CALIBER verify out >/dev/null
'
