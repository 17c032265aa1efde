# tests/cli/lib.sh: the CLI test library, sourced by every tests/cli/tNNNN-*.sh.
#
#   test_expect_success 'what it shows' '<shell body>'
#   test_skip 'what it would show' 'why it cannot run here'
#
# runs the body in a fresh `sh -eu` inside a scratch directory $T (so a
# failing command fails the case) and prints "ok N - what" or "not ok N -
# what" followed by the body's output. Inside a body:
#   $CALIBER          the binary under test
#   $CALIBER_ROOT     the repository
#   expect_refusal CODE MESSAGE_FILE cmd...   exit status CODE and stderr exactly the file
#                     (@CWD@ in it standing for the current directory, @HOME@
#                     for caliber's tree)
#   expect_empty DIR  DIR does not exist or is empty
set -u
: "${CALIBER:?run through tests/run.sh}"
: "${CALIBER_ROOT:?run through tests/run.sh}"
T=$(mktemp -d "${TMPDIR:-/tmp}/caliber-cli.XXXXXX")

# The python3 on PATH may be a version manager's shim: pyenv's starts some
# 280 processes (80 ms) before Python does, and a CPU campaign starts a
# worker per session, so the shim was most of the suite's time. Put the
# interpreter it resolves to first on PATH, as a link: the same Python,
# started directly, for the tests and for the workers caliber starts.
if real_python3=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) && [ -x "$real_python3" ]; then
	mkdir "$T/.bin" && ln -s "$real_python3" "$T/.bin/python3" && PATH="$T/.bin:$PATH" && export PATH
fi

# For tests that run campaigns: the interpreter with pytest, the commit the
# binary was built from (the harness pin), and --allow-dirty-harness when it
# was built from a dirty tree (it can only run then, and says so).
PY=${PYTHON:-python3}
commit=$($CALIBER --version | sed 's/.*(commit \([0-9a-f]*\).*/\1/')
case "$($CALIBER --version)" in *dirty*|*unknown*) DIRTY=--allow-dirty-harness ;; *) DIRTY= ;; esac
export PY commit DIRTY

# python_with MODULE: the first interpreter that imports MODULE (an optional
# tool's Python side, e.g. PIL), of $CALIBER_TEST_PYTHONS (default: the one
# with pytest, python3, and /usr/bin/python3, which Debian's python3-*
# packages serve); empty when none does, which a test reports as a skip.
python_with() {
	for p in ${CALIBER_TEST_PYTHONS:-$PY python3 /usr/bin/python3}; do
		if "$p" -c "import $1" >/dev/null 2>&1; then echo "$p"; return 0; fi
	done
}
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
test_count=0

cat >"$T/.prelude" <<'PRELUDE'
expect_refusal() {
	code=$1; msg=$2; shift 2
	set +e
	"$@" >"$T/.out" 2>"$T/.err"
	rc=$?
	set -e
	if [ "$rc" -ne "$code" ]; then
		echo "exit status $rc, expected $code"; cat "$T/.err"; return 1
	fi
	# @CWD@ in the expected message stands for the directory of the case:
	# caliber names every path absolute; @HOME@ for caliber's own tree, as
	# the binary finds it (links resolved).
	sed -e "s|@CWD@|$PWD|g" -e "s|@HOME@|$(cd "$CALIBER_ROOT" && pwd -P)|g" "$msg" >"$T/.want"
	if ! cmp -s "$T/.want" "$T/.err"; then
		echo "stderr differs:"; diff "$T/.want" "$T/.err"; return 1
	fi
}
expect_empty() {
	if [ -e "$1" ] && [ -n "$(ls -A "$1")" ]; then
		echo "$1 is not empty:"; ls -AR "$1"; return 1
	fi
}
PRELUDE

# test_skip 'what' 'why': a case that cannot run here, reported as skipped
# ("ok N - what # SKIP why"; tests/run.sh counts it apart). Where nothing may
# be skipped (CI sets CALIBER_TESTS_NO_SKIP=1) it fails instead.
test_skip() {
	test_count=$((test_count + 1))
	if [ "${CALIBER_TESTS_NO_SKIP:-0}" = 1 ]; then
		echo "not ok $test_count - $1 (cannot run here, and CALIBER_TESTS_NO_SKIP=1: $2)"
	else
		echo "ok $test_count - $1 # SKIP $2"
	fi
}

# With CALIBER_TEST_TIMES=FILE, each case appends "SECONDS FILE:N what" to
# FILE (whole seconds): where a suite's time goes, to keep CI in its budget.
test_expect_success() {
	test_count=$((test_count + 1))
	mkdir -p "$T/case$test_count"
	case_start=$(date +%s)
	if out=$(cd "$T/case$test_count" && T="$T/case$test_count" sh -eu -c ". '$T/.prelude'; $2" 2>&1); then
		echo "ok $test_count - $1"
	else
		echo "not ok $test_count - $1"
		printf '%s\n' "$out" | sed 's/^/#   /'
	fi
	if [ -n "${CALIBER_TEST_TIMES:-}" ]; then
		echo "$(($(date +%s) - case_start)) $(basename "$0"):$test_count $1" >>"$CALIBER_TEST_TIMES"
	fi
}
