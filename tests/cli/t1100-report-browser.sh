#!/bin/sh
# report in a browser: headless chromium renders the HTML report of the
# committed sealed H200 run; the DOM must show every task with its verdict,
# one forest-plot mark per task and timed order and one topology mark per
# task and cell (counted against the receipts), and the screenshot must not
# be blank. Skipped without chromium, the screenshot without python3-pil,
# except in CI (CALIBER_TESTS_NO_SKIP=1).
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
export CHROMIUM PIL_PYTHON run check

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
