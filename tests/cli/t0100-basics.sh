#!/bin/sh
# The command line itself: version, help for every command, bad usage.
. "$(dirname "$0")/lib.sh"

test_expect_success '--version names the version and a commit' '
	$CALIBER --version >out &&
	grep -Eq "^caliber [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{40}(\+dirty)?|unknown \(.+\))\)$" out
'

test_expect_success 'every command in the table answers --help with its usage' '
	$CALIBER --help >list &&
	sed -n "s/^  \([a-z]*\)  .*/\1/p" list >cmds &&
	test -s cmds &&
	for c in $(cat cmds); do
		$CALIBER $c --help >h || { echo "$c --help failed"; exit 1; }
		grep -q "^usage: caliber $c " h || { echo "$c: no usage line"; cat h; exit 1; }
	done
'

test_expect_success 'an unknown command is refused with status 2' '
	printf "caliber: unknown command '"'"'frobnicate'"'"'\n" >want &&
	set +e; $CALIBER frobnicate 2>err >/dev/null; rc=$?; set -e &&
	test $rc -eq 2 && head -1 err >first && cmp want first
'

test_expect_success 'an unknown option names itself and the help' '
	printf "caliber: digest: unknown option '"'"'--fast'"'"' (see caliber digest --help)\n" >want &&
	expect_refusal 2 want $CALIBER digest --fast .
'

test_expect_success 'a missing positional argument prints the usage' '
	printf "caliber: verify: usage: caliber verify RUN_ROOT\n" >want &&
	expect_refusal 2 want $CALIBER verify
'
