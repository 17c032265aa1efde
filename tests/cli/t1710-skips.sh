#!/bin/sh
# An optional tool that is absent is a skip that names it, never a failure:
# on a developer's desktop with chromium but without python3-pil, the
# browser test skips its screenshot case. Where nothing may be skipped
# (CALIBER_TESTS_NO_SKIP=1, which .ci/run sets) every skip is a failure:
# test_skip, the Python suite's skips and the Slurm test's alike, and no
# test prints a skip of its own.
. "$(dirname "$0")/lib.sh"

test_expect_success 'test_skip is a skip, and a failure under CALIBER_TESTS_NO_SKIP=1' '
	printf "%s\n" ". \"$CALIBER_ROOT/tests/cli/lib.sh\"" "test_skip \"a case\" \"no frobnicator here\"" >t.sh &&
	env -u CALIBER_TESTS_NO_SKIP sh t.sh >out && grep -qx "ok 1 - a case # SKIP no frobnicator here" out &&
	CALIBER_TESTS_NO_SKIP=1 sh t.sh >out &&
	grep -qx "not ok 1 - a case (cannot run here, and CALIBER_TESTS_NO_SKIP=1: no frobnicator here)" out
'

test_expect_success 'chromium without python3-pil: the browser test skips what it cannot check, naming the tool; in CI it fails' '
	printf "#!/bin/sh\nexec %s -S \"\$@\"\n" "$(command -v $PY)" >nopil && chmod +x nopil &&
	! ./nopil -c "import PIL" 2>/dev/null &&
	env -u CALIBER_TESTS_NO_SKIP CALIBER_TEST_PYTHONS="$PWD/nopil" sh "$CALIBER_ROOT/tests/cli/t1120-report-browser.sh" >out 2>&1 &&
	! grep -q "^not ok" out &&
	grep -Eq "^ok [0-9]+ - .* # SKIP no (python3 with PIL \(scripts/deps.sh --ci installs python3-pil\)|chromium \(scripts/deps.sh --ci installs it\))$" out &&
	set +e; CALIBER_TESTS_NO_SKIP=1 CALIBER_TEST_PYTHONS="$PWD/nopil" sh "$CALIBER_ROOT/tests/cli/t1120-report-browser.sh" >out 2>&1; set -e &&
	grep -Eq "^not ok [0-9]+ - .*\(cannot run here, and CALIBER_TESTS_NO_SKIP=1: no (python3 with PIL|chromium)" out
'

test_expect_success 'a skipped Python test is a skip, and a failure under CALIBER_TESTS_NO_SKIP=1' '
	mkdir py && printf "%s\n" "import pytest" "def test_a():" "    pass" "@pytest.mark.skip(reason=\"no tool here\")" \
		"def test_b():" "    pass" >py/test_x.py &&
	env -u CALIBER_TESTS_NO_SKIP PYTHON=$PY sh "$CALIBER_ROOT/tests/cli/pytest-tap.sh" py >out &&
	printf "%s\n" "ok - test_x.py::test_a" "ok - test_x.py:4 # SKIP no tool here" | cmp - out &&
	CALIBER_TESTS_NO_SKIP=1 PYTHON=$PY sh "$CALIBER_ROOT/tests/cli/pytest-tap.sh" py >out &&
	grep -qx "not ok - test_x.py:4 (skipped, and CALIBER_TESTS_NO_SKIP=1: no tool here)" out
'

test_expect_success 'every skip goes through CALIBER_TESTS_NO_SKIP, and .ci/run sets it' '
	here=$PWD && cd "$CALIBER_ROOT" &&
	grep -rl "# SKIP" tests | LC_ALL=C sort >"$here/skippers" &&
	printf "%s\n" tests/cli/lib.sh tests/cli/pytest-tap.sh tests/cli/t1710-skips.sh tests/run.sh tests/slurm/run.sh >"$here/allowed" &&
	{ comm -23 "$here/skippers" "$here/allowed" | grep . && { echo "these print a skip of their own"; exit 1; } || true; } &&
	grep -q "CALIBER_TESTS_NO_SKIP" tests/slurm/run.sh &&
	grep -qx "CALIBER_TESTS_NO_SKIP=1" .ci/run && grep -qx "export CALIBER_TESTS_NO_SKIP" .ci/run
'
