#!/bin/sh
# caliber demo without a GPU: it says so, verifies the shipped H200 run,
# re-accounts it at floors 1 and 0 (equivalence holds) and prints its matrix.
. "$(dirname "$0")/lib.sh"

test_expect_success 'the offline demo replays the shipped sealed H200 campaign' '
	$CALIBER demo --offline --output kept >out &&
	grep -q "^caliber demo: offline (--offline):" out &&
	grep -q "seal holds (2453 files)" out &&
	test "$(grep -c "^equivalence: holds (32 tasks reproduced at the run'"'"'s own floor 1)$" out)" = 2 &&
	test "$(grep -c "^| .* | \*\*G\*\* stable-gain |" out)" = 5 &&
	test "$(grep -c "^| .* | \*\*B\*\* no-reduction |" out)" = 27 &&
	test -f kept/floor0/derived.json && test -f kept/floor1/matrix.md
'

test_expect_success 'without a GPU the demo says why it stays offline' '
	mkdir bin &&
	printf "#!/bin/sh\necho \"ModuleNotFoundError: No module named torch\" >&2\nexit 1\n" >bin/python3 &&
	chmod +x bin/python3 &&
	PATH="$PWD/bin:$PATH" $CALIBER demo >out &&
	grep -qx "caliber demo: offline (python3 cannot use a GPU with Triton: ModuleNotFoundError: No module named torch):" out &&
	grep -q "verdict matrix of campaigns/demo-h200/runs/all" out
'
