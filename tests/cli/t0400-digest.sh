#!/bin/sh
# caliber digest: agrees with an independent Python implementation, sees
# contents, modes and link targets, never follows links, ignores .git and
# __pycache__, and does not depend on where the tree lies.
. "$(dirname "$0")/lib.sh"

mktree='
mktree() {
	mkdir -p "$1/sub/deeper" "$1/.git" "$1/pkg/__pycache__"
	printf "one\n" >"$1/a.txt"
	printf "two\n" >"$1/sub/b.txt"
	printf "#!/bin/sh\n" >"$1/sub/deeper/run.sh" && chmod 755 "$1/sub/deeper/run.sh"
	printf "x" >"$1/a.b"
	printf "ref\n" >"$1/.git/HEAD"
	printf "pyc" >"$1/pkg/__pycache__/m.cpython-312.pyc"
	printf "m\n" >"$1/pkg/m.py"
	ln -s ../a.txt "$1/sub/link"
}'

test_expect_success 'digest agrees with the Python reference implementation' "
	$mktree
	mktree tree &&
	\$CALIBER digest tree >c && python3 '$CALIBER_ROOT/tests/cli/digest_ref.py' tree >py &&
	cmp c py && grep -Eq '^[0-9a-f]{64}$' c
"

test_expect_success 'the same tree elsewhere gives the same digest' "
	$mktree
	mktree one && mkdir -p far/away && mktree far/away/two &&
	test \"\$(\$CALIBER digest one)\" = \"\$(\$CALIBER digest far/away/two)\"
"

test_expect_success 'a changed byte, an executable bit or a link target change it' "
	$mktree
	mktree t && d0=\$(\$CALIBER digest t) &&
	printf 'onE\n' >t/a.txt && d1=\$(\$CALIBER digest t) && test \"\$d0\" != \"\$d1\" &&
	chmod 755 t/a.txt && d2=\$(\$CALIBER digest t) && test \"\$d1\" != \"\$d2\" &&
	ln -sf ../a.b t/sub/link && d3=\$(\$CALIBER digest t) && test \"\$d2\" != \"\$d3\"
"

test_expect_success 'links are not followed, .git and __pycache__ are left out' "
	$mktree
	mktree t && d0=\$(\$CALIBER digest t) &&
	printf 'changed\n' >t/.git/HEAD && printf 'new' >t/pkg/__pycache__/n.pyc &&
	test \"\$d0\" = \"\$(\$CALIBER digest t)\" &&
	mkdir outside && printf secret >outside/s && ln -s ../outside t/out &&
	d1=\$(\$CALIBER digest t) && printf changed >outside/s &&
	test \"\$d1\" = \"\$(\$CALIBER digest t)\"
"

test_expect_success 'a file mode other than the executable bit does not matter (umask-proof)' "
	$mktree
	mktree t && d0=\$(\$CALIBER digest t) && chmod 600 t/a.txt &&
	test \"\$d0\" = \"\$(\$CALIBER digest t)\"
"

test_expect_success 'a missing directory is refused' '
	printf "caliber: digest: @CWD@/nope: not a directory\n" >want &&
	expect_refusal 1 want $CALIBER digest nope
'
