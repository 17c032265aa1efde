#!/bin/sh
# caliber demo without a GPU: it says so, verifies the shipped H200 run,
# re-accounts it at floors 1 and 0 (equivalence holds), prints its matrix and
# keeps everything, an HTML report included, in a folder it names; it ends
# with the text report's task table: sorted as the report sorts, in 80
# columns.
. "$(dirname "$0")/lib.sh"

test_expect_success 'the offline demo replays the shipped sealed H200 campaign and keeps what it made' '
	$CALIBER demo --offline --output kept >out &&
	grep -q "^caliber demo: offline (--offline):" out &&
	grep -q "seal holds (4946 files)" out &&
	test "$(grep -c "^equivalence: holds (32 tasks reproduced at the run'"'"'s own floor 1)$" out)" = 2 &&
	sed -n "/^verdict matrix of /,/^caliber demo: kept/p" out | sed -n "3,/^\$/p" | sed "\$d" >table &&
	test "$(grep -c "^[a-z_]*  *G  " table)" = 5 && test "$(grep -c "^[a-z_]*  *B  " table)" = 27 &&
	test "$(awk "length(\$0) > 80" table | wc -l)" = 0 &&
	$CALIBER report "$CALIBER_ROOT/campaigns/demo-h200/runs/all" | sed -n "/^task /,/^\$/p" | sed "\$d" >want &&
	cmp want table &&
	test -f kept/floor0/derived.json && test -f kept/floor1/matrix.md &&
	head -1 kept/report.html | grep -qx "<!DOCTYPE html>" &&
	tail -3 out | head -1 | grep -qx "caliber demo: kept $PWD/kept (report.html: the run.s report as one HTML file)" &&
	printf "%s\n" "verdicts: G 5, C 0, B 27, R 0, K 0, X 0" "report: $PWD/kept/report.html" >want &&
	tail -2 out | cmp want -
'

test_expect_success 'without a GPU the demo says why, and its default folder is ./caliber-demo-<UTC time>' '
	mkdir bin &&
	printf "#!/bin/sh\necho \"ModuleNotFoundError: No module named torch\" >&2\nexit 1\n" >bin/python3 &&
	chmod +x bin/python3 &&
	PATH="$PWD/bin:$PATH" $CALIBER demo >out &&
	grep -qx "caliber demo: offline (python3 cannot use a GPU with Triton: ModuleNotFoundError: No module named torch):" out &&
	grep -q "^verdict matrix of $CALIBER_ROOT/campaigns/demo-h200/runs/all (sealed on an NVIDIA H200):" out &&
	set -- caliber-demo-2*Z && test $# -eq 1 && test -d "$1" &&
	echo "$1" | grep -Eqx "caliber-demo-[0-9]{8}T[0-9]{6}Z" &&
	test -f "$1/report.html" && test -f "$1/floor0/derived.json" &&
	grep -qx "  replaying the sealed H200 campaign shipped in campaigns/demo-h200/runs/all into $PWD/$1" out
'

test_expect_success 'the demo folders are ignored by git, so that a second demo finds the tree clean' '
	cd "$CALIBER_ROOT" && git check-ignore -q caliber-demo-20261201T071439Z/run-canary/tasks
'
