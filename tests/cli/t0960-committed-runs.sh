#!/bin/sh
# Every run committed under campaigns/ is a receipt someone will re-check
# without a GPU: its seal holds, and re-accounting it at its own launch floor
# reproduces every sealed count and verdict with today's classifier (the
# reason text may word the A/A band as today's caliber does). Its A/A line,
# which runs sealed before it lack, is written by the derived matrix and the
# report alike, and bench/aa_table.py (bench/RESULTS.md) counts the same.
. "$(dirname "$0")/lib.sh"

# A run committed as an archive (campaigns/*/archives/RUN.tar.xz: a sealed
# run folder, kept small) is checked the same way once unpacked.
A="$T/archives"
mkdir -p "$A"
export A
test_expect_success 'every archived run unpacks into one sealed run folder' '
	for a in "$CALIBER_ROOT"/campaigns/*/archives/*.tar.xz; do
		name=$(basename "$a" .tar.xz) &&
		tar -xJf "$a" -C "$A" &&
		test -f "$A/$name/SHA256SUMS" || exit 1
	done
'

for run in "$CALIBER_ROOT"/campaigns/*/runs/*/ "$A"/*/; do
	[ -d "$run" ] || continue
	run=${run%/}
	case $run in
	"$A"/*) name="archived ${run#"$A"/}" ;;
	*) name=${run#"$CALIBER_ROOT"/} ;;
	esac
	export run
	test_expect_success "$name: the seal holds and reaccount at its own floor reproduces it" '
		$CALIBER verify "$run" >out &&
		grep -q "seal holds" out &&
		floor=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))[\"launch_floor\"])" "$run/campaign.json") &&
		$CALIBER reaccount "$run" --floor "$floor" -o derived >out &&
		grep -q "^equivalence: holds" out &&
		grep -q " 0 of [0-9]* tasks changed verdict" out &&
		grep -v "^,,,aa-summary," "$run/matrix.csv" | cut -d, -f1-17 >want &&
		grep -v "^,,,aa-summary," derived/matrix.csv | cut -d, -f1-17 >got && cmp want got &&
		python3 "$CALIBER_ROOT/bench/aa_table.py" --line "$run" >want &&
		grep "^,,,aa-summary," derived/matrix.csv | sed "s/^,,,aa-summary,,,,,,,,,,,,,,//" | tr -d "\r" >got && cmp want got &&
		$CALIBER report "$run" | grep "^A/A: " >got && cmp want got &&
		grep "^A/A: " derived/matrix.md >got && cmp want got
	'
done

