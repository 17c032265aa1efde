#!/bin/sh
# Man pages come from the tables --help prints: `make man` writes
# caliber.1 and one caliber-CMD.1 per command into man/ (MAN_DIR); every
# command's page lists every option its --help lists, and no other; the
# pages render without a warning where groff is installed.
. "$(dirname "$0")/lib.sh"

# commands: the commands, as `caliber --help` lists them; help_opts: the
# long options a --help text lists (at the start of their lines, not those
# its texts name), one a line, sorted.
setup="$(cat <<'SETUP'
commands() { $CALIBER --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p'; }
help_opts() { sed -n '/^options:/,$p' | grep -o -- "^ *\(-[a-z], \)\{0,1\}--[a-z][a-z-]*" | grep -o -- "--[a-z][a-z-]*" | sort -u; }
SETUP
)"
export setup

test_expect_success 'make man writes caliber.1 and caliber-CMD.1 for every command into MAN_DIR' '
	eval "$setup" &&
	case "$CALIBER" in */sanitize/*) san=1 ;; *) san= ;; esac &&
	make -s -C "$CALIBER_ROOT" man MAN_DIR="$PWD/m" BUILD="${CALIBER%/caliber}" SANITIZE=$san >out &&
	n=$(commands | wc -l) && test "$n" -gt 10 &&
	grep -qx "man: $((n + 1)) pages in $PWD/m/" out &&
	for c in $(commands); do
		test -s m/caliber-$c.1 && $CALIBER $c --man | cmp - m/caliber-$c.1 || { echo "no page for $c"; exit 1; }
	done &&
	$CALIBER --man | cmp - m/caliber.1
'

test_expect_success 'caliber.1 names every command and every exit status' '
	eval "$setup" &&
	$CALIBER --man >caliber.1 &&
	head -1 caliber.1 | grep -q "^\.TH CALIBER 1 " &&
	for c in $(commands); do grep -qx ".BR caliber\\\\-$c (1)" caliber.1 || { echo "caliber.1 lacks $c"; exit 1; }; done &&
	for k in 0 1 2 3 4 5 6; do grep -A1 -x ".B $k" caliber.1 | tail -1 | grep -q . || { echo "no exit status $k"; exit 1; }; done
'

test_expect_success 'every command'"'"'s page lists exactly the options its --help lists' '
	eval "$setup" &&
	for c in $(commands); do
		$CALIBER $c --help | help_opts >want &&
		$CALIBER $c --man >page &&
		head -1 page | grep -q "^\.TH CALIBER\\\\-$(echo $c | tr a-z A-Z) 1 " &&
		grep -qx ".SH OPTIONS" page && grep -qx ".SH SYNOPSIS" page &&
		sed -n "/^\.SH OPTIONS/,/^\.SH SEE ALSO/p" page | sed "s/\\\\-/-/g" | grep "^\.B " | grep -o -- "--[a-z][a-z-]*" | sort -u >got &&
		cmp want got || { echo "caliber-$c.1: options differ from --help:"; diff want got; exit 1; }
	done
'

if command -v groff >/dev/null 2>&1; then
test_expect_success 'every page renders without a groff warning' '
	eval "$setup" &&
	for c in "" $(commands); do
		$CALIBER ${c:+$c} --man | groff -man -Tutf8 -ww -z >out 2>&1 && test ! -s out || { echo "page ${c:-caliber}:"; cat out; exit 1; }
	done
'
else
test_skip 'every page renders without a groff warning' 'no groff (Debian groff-base)'
fi
