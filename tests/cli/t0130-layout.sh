#!/bin/sh
# The layout of src/ shows the architecture: one folder per subsystem, each
# with a README whose rules (what it may include, who includes it) hold for
# every #include (scripts/check_includes.sh); no file over 800 lines.
. "$(dirname "$0")/lib.sh"

test_expect_success 'every #include of src/ holds its folder README rules' '
	sh "$CALIBER_ROOT/scripts/check_includes.sh" >out &&
	grep -Eq "^check_includes: [0-9]+ includes hold the rules of 8 folders$" out
'

# A copy of src/ with one breach at a time: the script names the file, the
# line and the rule.

test_expect_success 'a folder including one above it is named with its README' '
	mkdir tree && cp -R "$CALIBER_ROOT/src" tree/src &&
	printf "#include \"views/report.h\"\n" >>tree/src/ir/ttgir.c &&
	if sh "$CALIBER_ROOT/scripts/check_includes.sh" tree >out; then echo "held"; exit 1; fi &&
	n=$(wc -l <tree/src/ir/ttgir.c | tr -d " ") &&
	grep -Fx "src/ir/ttgir.c:$n: includes views/report.h, but src/ir/README does not allow views" out &&
	grep -Fx "src/ir/ttgir.c:$n: includes views/report.h, but src/views/README does not name ir among its includers" out &&
	grep -Fx "check_includes: 2 breach(es) of the folder rules" out
'

test_expect_success 'a bare include of another folder, and a missing header, are refused' '
	mkdir tree && cp -R "$CALIBER_ROOT/src" tree/src &&
	printf "#include \"buf.h\"\n#include \"base/nosuch.h\"\n" >>tree/src/seal/sums.c &&
	if sh "$CALIBER_ROOT/scripts/check_includes.sh" tree >out; then echo "held"; exit 1; fi &&
	grep -F "src/seal/sums.c:" out >lines &&
	grep -q "includes \"buf.h\", which is not in its own folder (write folder/buf.h)" lines &&
	grep -q "includes base/nosuch.h, which does not exist" lines
'

test_expect_success 'a folder without a README, or with a README lacking its rules, is refused' '
	mkdir tree && cp -R "$CALIBER_ROOT/src" tree/src &&
	mkdir tree/src/extra && printf "#include \"base/buf.h\"\n" >tree/src/extra/x.c &&
	printf "# src/seal\nsomething else\n" >tree/src/seal/README &&
	if sh "$CALIBER_ROOT/scripts/check_includes.sh" tree >out; then echo "held"; exit 1; fi &&
	grep -Fx "src/extra/x.c: in a folder without a README (src/extra/README)" out &&
	grep -Fx "src/seal/README: lines 2 and 3 must say \"May include: ...\" and \"Included by: ...\"" out
'

test_expect_success 'no two CLI test files share a number' '
	ls "$CALIBER_ROOT"/tests/cli/t[0-9]*.sh | sed "s,.*/t\([0-9]*\)-.*,\1," | sort | uniq -d >dups &&
	{ test ! -s dups || { cat dups; exit 1; }; }
'

test_expect_success 'no source file of src/ is over 800 lines' '
	for f in "$CALIBER_ROOT"/src/*.[ch] "$CALIBER_ROOT"/src/*/*.[ch]; do
		n=$(wc -l <"$f") && [ "$n" -le 800 ] || echo "${f#"$CALIBER_ROOT"/}: $n lines"
	done >over &&
	{ test ! -s over || { cat over; exit 1; }; }
'
