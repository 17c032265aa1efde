#!/bin/sh
# report --bundle DIR: the HTML report with every receipt and TTGIR file it
# links, in one folder that still works once moved (every link opens, the
# copied files check against the run's own SHA256SUMS); a derived run's
# bundle holds both folders; refusals, exactly, with nothing written.
. "$(dirname "$0")/lib.sh"

runs="$CALIBER_ROOT/campaigns/demo-h200/runs"
spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
check="$CALIBER_ROOT/tests/cli/report_check.py"
export runs spec check

test_expect_success 'a plain report breaks its links once moved; a bundle keeps every one, and its files verify' '
	$CALIBER report "$runs/canary" -o plain/report.html >/dev/null &&
	mkdir elsewhere && mv plain elsewhere/ &&
	! python3 "$check" links elsewhere/plain/report.html >/dev/null &&
	$CALIBER report "$runs/canary" --bundle b >stdout &&
	grep -qx "report: wrote $PWD/b/report.html and the [0-9]* files it links (html, 8 tasks; seal holds (999 files))" stdout &&
	mv b elsewhere/b && cd elsewhere/b &&
	python3 "$check" links report.html >../../links && cat ../../links &&
	n=$(sed -n "s/^\([0-9]*\) links, each to an existing file$/\1/p" ../../links) && test "$n" -gt 300 &&
	(cd run && sha256sum --quiet --strict -c --ignore-missing SHA256SUMS) &&
	test -f run/campaign.json && test -f run/matrix.csv &&
	ls run/tasks/matmul_bias_gelu/cells/a-candidate/ir/*/_matmul_bias_gelu_kernel.ttgir >/dev/null &&
	python3 "$check" wellformed report.html >/dev/null &&
	copied=$(sed -n "s/^report: wrote .* and the \([0-9]*\) files it links .*/\1/p" ../../stdout) &&
	test "$(find . -type f | wc -l)" -eq $((copied + 1))
'

test_expect_success 'the bundle page is the -o page but for where its links point' '
	$CALIBER report "$runs/canary" -o page/report.html >/dev/null &&
	$CALIBER report "$runs/canary" --bundle b >/dev/null &&
	sed "s|href=\"[^\"]*/runs/canary/|href=\"run/|g" page/report.html >want.html &&
	cmp want.html b/report.html
'

test_expect_success 'a derived run: the run under run/, derived.json under derived/' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" r && $CALIBER reaccount r --floor 0 --output d0 >/dev/null &&
	$CALIBER report d0 --bundle b >/dev/null && rm -rf r d0 &&
	python3 "$check" links b/report.html >/dev/null && test -f b/derived/derived.json && test -f b/run/campaign.json
'

test_expect_success 'refusals: a folder that exists, -o or another format with --bundle, a bundle inside the run' '
	mkdir b &&
	printf "caliber: report: --bundle @CWD@/b: exists; a bundle is written into a folder of its own\n" >want &&
	expect_refusal 1 want $CALIBER report "$runs/canary" --bundle b && expect_empty b &&
	printf "caliber: report: --bundle DIR writes DIR/report.html: no -o with it\n" >want &&
	expect_refusal 2 want $CALIBER report "$runs/canary" --bundle c -o x.html &&
	printf "caliber: report: --bundle writes the HTML report: no --format md with it\n" >want &&
	expect_refusal 2 want $CALIBER report "$runs/canary" --bundle c --format md &&
	test ! -e c && test ! -e x.html &&
	set +e; $CALIBER report "$runs/canary" --bundle "$runs/canary/b" 2>err; rc=$?; set -e &&
	test $rc -eq 1 && grep -q "inside the run root" err && test ! -e "$runs/canary/b" &&
	test -z "$(ls -a | grep "\.tmp\.")"
'
