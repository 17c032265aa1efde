#!/bin/sh
# The project's documents stand on their own: docs/design.md has numbered
# sections, every citation of it names one that exists, and nothing in the
# repository cites the contract it grew from (SPEC.md, "SPEC section N"),
# which is not part of it. History (git log) is not searched.
. "$(dirname "$0")/lib.sh"

test_expect_success 'docs/design.md: sections numbered 1, 2, ... in order, subsections under them' '
	cd "$CALIBER_ROOT" &&
	sed -n "s/^## \([0-9][0-9]*\)\. .*/\1/p" docs/design.md >"$T/got" &&
	test -s "$T/got" && seq 1 "$(wc -l <"$T/got")" >"$T/want" && cmp "$T/want" "$T/got" &&
	sed -n "s/^### \([0-9][0-9]*\.[0-9][0-9]*\) .*/\1/p" docs/design.md >"$T/sub" &&
	while read -r s; do grep -qx "${s%%.*}" "$T/got" || { echo "subsection $s under no section"; exit 1; }; done <"$T/sub"
'

test_expect_success 'every citation of docs/design.md names a section it has' '
	cd "$CALIBER_ROOT" &&
	sed -n "s/^## \([0-9][0-9]*\)\. .*/\1/p;s/^### \([0-9][0-9]*\.[0-9][0-9]*\) .*/\1/p" docs/design.md >"$T/have" &&
	git grep -h -o -E "design\.md,? sections? [0-9]+(\.[0-9]+)?" -- ":!docs/design.md" |
		sed -E "s/.* ([0-9.]+)$/\1/" | sort -u >"$T/cited" &&
	test -s "$T/cited" &&
	while read -r n; do grep -qx "$n" "$T/have" || { echo "docs/design.md has no section $n"; exit 1; }; done <"$T/cited"
'

test_expect_success 'nothing in the repository cites SPEC: help texts, documents and code cite docs/design.md' '
	cd "$CALIBER_ROOT" &&
	if git grep -n -E "SPEC(\\.md| section|'"'"'s)|SPEC$" -- . ":!tests/cli/t0110-docs.sh" >"$T/found"; then cat "$T/found"; exit 1; fi &&
	"$CALIBER" topology --help | grep -q "docs/design.md section 9" &&
	! "$CALIBER" --help | grep -q SPEC
'
