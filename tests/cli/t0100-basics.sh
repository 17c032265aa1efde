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

test_expect_success 'an unknown command is refused with status 2, in one line that says where the list is' '
	printf "caliber: unknown command '"'"'frobnicate'"'"'; caliber --help lists the commands\n" >want &&
	expect_refusal 2 want $CALIBER frobnicate
'

test_expect_success 'an unknown option names itself and the help' '
	printf "caliber: digest: unknown option '"'"'--fast'"'"' (see caliber digest --help)\n" >want &&
	expect_refusal 2 want $CALIBER digest --fast .
'

test_expect_success 'a missing positional argument prints the usage' '
	printf "caliber: verify: usage: caliber verify RUN_ROOT [--key PUB.pem]\n" >want &&
	expect_refusal 2 want $CALIBER verify
'

test_expect_success '-h is --help, for caliber and for every command' '
	$CALIBER --help >long && $CALIBER -h >short && cmp long short &&
	for c in $(sed -n "s/^  \([a-z]*\)  .*/\1/p" long); do
		$CALIBER $c --help >l && $CALIBER $c -h >s && cmp l s || { echo "$c -h differs from --help"; exit 1; }
	done
'

test_expect_success 'the exit statuses of caliber --help are the table of the README' '
	$CALIBER --help | sed -n "/^exit status/,\$ s/^  \([0-9]\)  .*/\1/p" >help &&
	sed -n "s/^| \([0-9]\) | .*/\1/p" "$CALIBER_ROOT/README.md" >readme &&
	test -s help && cmp help readme &&
	for n in $(cat help); do
		grep -Eq "CB_EXIT_[A-Z]+ = $n([^0-9]|$)" "$CALIBER_ROOT/src/caliber.h" || { echo "no exit status $n in caliber.h"; exit 1; }
	done
'

test_expect_success 'the README links only files of the repository, and every one exists' '
	sed -n "s/.*](\([^)#]*\)).*/\1/p" "$CALIBER_ROOT/README.md" >links && test -s links &&
	while read -r l; do
		case "$l" in
		http*|/*|../*) echo "README links outside the repository: $l"; exit 1 ;;
		esac
		test -e "$CALIBER_ROOT/$l" || { echo "README links a missing file: $l"; exit 1; }
	done <links
'
