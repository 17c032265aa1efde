#!/bin/sh
# The bad-input catalogue: every case in tests/bad/{manifest,inventory} is
# run through prepare with and without --dry-run; the exact message, a
# non-zero exit and an untouched output root are asserted.
. "$(dirname "$0")/lib.sh"

bad="$CALIBER_ROOT/tests/bad"
for m in "$bad"/manifest/*.json; do
	name=$(basename "$m" .json)
	for mode in dry-run freeze; do
		test_expect_success "manifest/$name ($mode) is refused" "
			mkdir inv && cp '$bad/base/inventory_main.csv' inv/ &&
			cp '$m' '$name.json' &&
			if [ $mode = dry-run ]; then extra=--dry-run; else extra=; fi &&
			expect_refusal 1 '$bad/manifest/$name.expect' \$CALIBER prepare '$name.json' --inventory-dir inv --output-root out \$extra &&
			expect_empty out
		"
	done
done
for c in "$bad"/inventory/*.csv; do
	name=$(basename "$c" .csv)
	for mode in dry-run freeze; do
		test_expect_success "inventory/$name ($mode) is refused" "
			mkdir inv && cp '$c' inv/inventory_main.csv &&
			cp '$bad/base/manifest.json' m.json &&
			if [ $mode = dry-run ]; then extra=--dry-run; else extra=; fi &&
			expect_refusal 1 '$bad/inventory/$name.expect' \$CALIBER prepare m.json --inventory-dir inv --output-root out \$extra &&
			expect_empty out
		"
	done
done

test_expect_success 'the base of the catalogue itself is valid (each case is one edit away)' '
	$CALIBER prepare "$CALIBER_ROOT/tests/bad/base/manifest.json" --inventory-dir "$CALIBER_ROOT/tests/bad/base" --dry-run
'
