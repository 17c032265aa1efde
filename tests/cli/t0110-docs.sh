#!/bin/sh
# The project's documents stand on their own: docs/design.md has numbered
# sections, every citation of it names one that exists, and nothing in the
# repository cites the contract it grew from (SPEC.md, "SPEC section N"),
# which is not part of it. History (git log) is not searched.
. "$(dirname "$0")/lib.sh"

test_expect_success 'docs/design.md: sections numbered 1, 2, ... in order, subsections under them' '
	cd "$CALIBER_ROOT" &&
	sed -n "s/^## \([0-9][0-9]*\)\. .*/\1/p" docs/design.md >got &&
	test -s got && seq 1 "$(wc -l <got)" >want && cmp want got &&
	sed -n "s/^### \([0-9][0-9]*\.[0-9][0-9]*\) .*/\1/p" docs/design.md >sub &&
	while read -r s; do grep -qx "${s%%.*}" got || { echo "subsection $s under no section"; exit 1; }; done <sub
'

test_expect_success 'every citation of docs/design.md names a section it has' '
	cd "$CALIBER_ROOT" &&
	sed -n "s/^## \([0-9][0-9]*\)\. .*/\1/p;s/^### \([0-9][0-9]*\.[0-9][0-9]*\) .*/\1/p" docs/design.md >have &&
	git grep -h -o -E "design\.md,? sections? [0-9]+(\.[0-9]+)?" -- ":!docs/design.md" |
		sed -E "s/.* ([0-9.]+)$/\1/" | sort -u >cited &&
	test -s cited &&
	while read -r n; do grep -qx "$n" have || { echo "docs/design.md has no section $n"; exit 1; }; done <cited
'

test_expect_success 'nothing in the repository cites SPEC: help texts, documents and code cite docs/design.md' '
	cd "$CALIBER_ROOT" &&
	if git grep -n -E "SPEC(\\.md| section|'"'"'s)|SPEC$" -- . ":!tests/cli/t0110-docs.sh" >found; then cat found; exit 1; fi &&
	"$CALIBER" topology --help | grep -q "docs/design.md section 9" &&
	! "$CALIBER" --help | grep -q SPEC
'
