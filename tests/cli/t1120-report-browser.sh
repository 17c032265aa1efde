#!/bin/sh
# report in a browser: headless chromium renders the HTML report of the
# committed sealed H200 run; the DOM must show every task with its verdict,
# one forest-plot mark per task and timed order and one topology mark per
# task and cell (counted against the receipts), and the screenshot must not
# be blank; every text meets WCAG AA contrast as the browser computes it
# (tests/cli/contrast.js: axe-core is not packaged by Debian), every <svg>
# is labelled, every table captioned and every header cell scoped. Skipped
# without chromium, the screenshot without python3-pil, except in CI (CALIBER_TESTS_NO_SKIP=1).
. "$(dirname "$0")/lib.sh"

CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROMIUM" ]; then
	test_skip "the HTML report renders in chromium" "no chromium (scripts/deps.sh --ci installs it)"
	exit 0
fi
# The screenshot check reads pixels with PIL (Debian's python3-pil, an
# optional tool like chromium: without it that case is skipped, saying so).
PIL_PYTHON=$(python_with PIL)
run="$CALIBER_ROOT/campaigns/demo-h200/runs/all"
check="$CALIBER_ROOT/tests/cli/report_check.py"
contrast="$CALIBER_ROOT/tests/cli/contrast.js"
spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
export CHROMIUM PIL_PYTHON run check contrast spec

# chromium, headless and offline, with a profile of its own under $T.
cat >"$T/.chromium" <<'CHROMIUM'
headless() {
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
		--user-data-dir="$T/profile" "$@" 2>"$T/chromium.log"
}
CHROMIUM

test_expect_success 'the DOM shows every task, its verdict, and one mark per timed order and per cell' '
	. "$T/../.chromium" &&
	$CALIBER report "$run" -o report.html >/dev/null &&
	headless --dump-dom "file://$PWD/report.html" >dom.html &&
	python3 "$check" dom dom.html "$run"
'

if [ -z "$PIL_PYTHON" ]; then
	test_skip "the screenshot is not blank" "no python3 with PIL (scripts/deps.sh --ci installs python3-pil)"
	exit 0
fi

test_expect_success 'the screenshot is not blank' '
	. "$T/../.chromium" &&
	$CALIBER report "$run" -o report.html >/dev/null &&
	headless --screenshot="$PWD/shot.png" --window-size=1280,2400 "file://$PWD/report.html" >/dev/null &&
	"$PIL_PYTHON" "$check" png shot.png
'

test_expect_success 'WCAG AA: every text at 4.5:1 (3:1 when large), every <svg> labelled, tables captioned and scoped' '
	. "$T/../.chromium" &&
	$CALIBER report "$run" -o report.html >/dev/null &&
	python3 "$check" inject report.html "$contrast" probe.html &&
	headless --dump-dom "file://$PWD/probe.html" >dom.html &&
	python3 "$check" a11y dom.html >out && cat out &&
	grep -q "^[0-9]* texts at WCAG AA contrast, 230 <svg> labelled, " out
'

test_expect_success 'WCAG AA holds for every verdict colour, zero counts, and a derived run side by side' '
	. "$T/../.chromium" &&
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" basic &&
	$CALIBER reaccount basic --floor 0 --output d0 >/dev/null &&
	for r in basic d0; do
		$CALIBER report $r -o $r.html >/dev/null &&
		python3 "$check" inject $r.html "$contrast" probe-$r.html &&
		headless --dump-dom "file://$PWD/probe-$r.html" >dom-$r.html &&
		python3 "$check" a11y dom-$r.html || exit 1
	done &&
	grep -q "class=\"count v-C\" data-verdict=\"C\" data-count=\"1\"" basic.html &&
	grep -q "class=\"count v-B none\" data-verdict=\"B\" data-count=\"0\"" d0.html
'
