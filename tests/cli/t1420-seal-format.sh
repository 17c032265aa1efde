#!/bin/sh
# The seal, format 2 (issue 14, items 17 and 18): SEAL commits to the number
# of lines of SHA256SUMS and to the folders that held nothing, so that verify
# notices an added empty folder and a file deleted together with its line;
# verify prints the seal's own digest; a FIFO is named a FIFO and a line
# listed twice is named as such. Runs sealed before SEAL (format 1, the
# committed campaigns) still verify, and so does a run cloned by git, which
# keeps neither empty folders nor read-only modes.
. "$(dirname "$0")/lib.sh"

spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
export spec

test_expect_success 'a run is sealed in format 2: SEAL is listed, and verify prints the digest of SHA256SUMS' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S &&
	printf "caliber-seal 2\nfiles 162\n" >want && cmp want S/SEAL &&
	grep -q "  SEAL$" S/SHA256SUMS && test "$(wc -l <S/SHA256SUMS)" -eq 162 &&
	(cd S && sha256sum --quiet --strict -c SHA256SUMS) &&
	$CALIBER verify S >out &&
	printf "%s\n" "seal: format 2, SHA256SUMS sha256 $(sha256sum <S/SHA256SUMS | cut -c1-64)" \
		"verify: $PWD/S: seal holds (161 files)" >want &&
	cmp want out
'

test_expect_success 'an empty folder added to a sealed run is named' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S && chmod -R u+w S && mkdir -p S/tasks/gelu_bwd/new/deeper &&
	printf "caliber: verify: @CWD@/S: seal does not hold: 0 changed, 0 missing, 2 extra, 0 symlinks, 0 special files\n" >want &&
	expect_refusal 6 want $CALIBER verify S &&
	grep -qx "extra: tasks/gelu_bwd/new/" "$T/.out" && grep -qx "extra: tasks/gelu_bwd/new/deeper/" "$T/.out"
'

test_expect_success 'a file deleted together with its SHA256SUMS line is noticed' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S && chmod -R u+w S &&
	f=tasks/gelu_bwd/cells/a-off/timing.jsonl && rm S/$f &&
	grep -v "  $f\$" S/SHA256SUMS >sums && cat sums >S/SHA256SUMS &&
	printf "caliber: verify: @CWD@/S: seal does not hold: 0 changed, 0 missing, 0 extra, 0 symlinks, 0 special files; SHA256SUMS lists 161 files, SEAL counted 162 when it was sealed: lines were removed\n" >want &&
	expect_refusal 6 want $CALIBER verify S &&
	grep -qx "sums: SHA256SUMS lists 161 files, SEAL counted 162 when it was sealed: lines were removed" "$T/.out" &&
	printf "%s\n" "caliber: reaccount: $PWD/S: seal does not hold: SHA256SUMS lists 161 files, SEAL counted 162 when it was sealed: lines were removed" >want &&
	expect_refusal 1 want $CALIBER reaccount S --floor 0 --output d && test ! -e d
'

test_expect_success 'a SEAL edited after sealing is a changed file' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S && chmod -R u+w S && echo "dir tasks/new" >>S/SEAL &&
	printf "caliber: verify: @CWD@/S: seal does not hold: 1 changed, 0 missing, 0 extra, 0 symlinks, 0 special files\n" >want &&
	expect_refusal 6 want $CALIBER verify S && grep -qx "changed: SEAL" "$T/.out"
'

test_expect_success 'folders that held nothing are listed in SEAL, and may be absent later (git keeps none)' '
	mkdir -p tree/cache/home/.cache tree/data && echo x >tree/data/f && "$CALIBER_TOOLS/cbtest" seal tree &&
	printf "caliber-seal 2\nfiles 2\ndir cache/home/.cache\n" >want && cmp want tree/SEAL &&
	$CALIBER verify tree | grep -qx "verify: $PWD/tree: seal holds (1 files)" &&
	chmod -R u+w tree && rm -r tree/cache &&
	$CALIBER verify tree | grep -qx "verify: $PWD/tree: seal holds (1 files)" &&
	mkdir -p tree/cache/home/.cache/more &&
	printf "caliber: verify: @CWD@/tree: seal does not hold: 0 changed, 0 missing, 1 extra, 0 symlinks, 0 special files\n" >want &&
	expect_refusal 6 want $CALIBER verify tree && grep -qx "extra: cache/home/.cache/more/" "$T/.out"
'

test_expect_success 'a sealed run still verifies after git add, commit and clone (no empty folders, no modes)' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S && chmod -R u+w S && mkdir -p S/tasks/gelu_bwd/cells/a-off/home/.cache &&
	rm S/SHA256SUMS && "$CALIBER_TOOLS/cbtest" seal S && grep -qx "dir tasks/gelu_bwd/cells/a-off/home/.cache" S/SEAL &&
	git init -q repo && cp -R S repo/S && git -C repo add S &&
	git -C repo -c user.name=t -c user.email=t@example.com commit -qm run &&
	git clone -q repo clone && test ! -e clone/S/tasks/gelu_bwd/cells/a-off/home &&
	test -n "$(find clone/S -perm -u+w -type f | head -1)" &&
	$CALIBER verify clone/S >out && grep -qx "verify: $PWD/clone/S: seal holds (161 files)" out
'

test_expect_success 'the committed runs verify, those sealed before SEAL in format 1, the later ones in format 2' '
	n=0 && n2=0 &&
	for r in "$CALIBER_ROOT"/campaigns/*/runs/*/; do
		[ -f "$r/SHA256SUMS" ] || continue
		if [ -f "$r/SEAL" ]; then format=2; n2=$((n2 + 1)); else format=1; fi
		$CALIBER verify "$r" >out && grep -q "^seal: format $format, SHA256SUMS sha256 [0-9a-f]\{64\}$" out &&
		grep -q "^verify: .*: seal holds (" out || exit 1
		n=$((n + 1))
	done &&
	test $n -gt $n2
'

test_expect_success 'a FIFO in a sealed run is named a FIFO, by verify and by the seal' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S && chmod -R u+w S && mkfifo S/tasks/gelu_bwd/pipe &&
	printf "caliber: verify: @CWD@/S: seal does not hold: 0 changed, 0 missing, 0 extra, 0 symlinks, 1 special files\n" >want &&
	expect_refusal 6 want timeout 10 $CALIBER verify S &&
	grep -qx "special file: tasks/gelu_bwd/pipe (a FIFO)" "$T/.out" &&
	printf "%s\n" "caliber: reaccount: $PWD/S: seal does not hold: special file: tasks/gelu_bwd/pipe (a FIFO)" >want &&
	expect_refusal 1 want timeout 10 $CALIBER reaccount S --floor 0 --output d &&
	rm S/SHA256SUMS && printf "cbtest: seal: seal: tasks/gelu_bwd/pipe: a FIFO cannot be sealed\n" >want &&
	expect_refusal 1 want "$CALIBER_TOOLS/cbtest" seal S && test ! -e S/SHA256SUMS
'

test_expect_success 'a line listed twice in SHA256SUMS is named as listed twice' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" S && chmod -R u+w S &&
	grep "  campaign.json$" S/SHA256SUMS >line && cat line >>S/SHA256SUMS &&
	n=$(wc -l <S/SHA256SUMS) && first=$(grep -n "  campaign.json$" S/SHA256SUMS | head -1 | cut -d: -f1) &&
	printf "caliber: verify: @CWD@/S/SHA256SUMS:%s: campaign.json is listed twice (first on line %s)\n" $n $first >want &&
	expect_refusal 1 want $CALIBER verify S
'

# with_run_json COMMIT: S sealed again with a run.json whose one invocation
# was made by caliber COMMIT; downgrade: SEAL deleted with its line.
helpers='
with_run_json() {
	chmod -R u+w S && rm S/SHA256SUMS S/SEAL &&
	printf "{\"caliber\": {\"commit\": \"%s\", \"version\": \"0.1.0\"}, \"invocations\": [{\"caliber_commit\": \"%s\"}], \"schema\": \"caliber.run/1\"}\n" "$1" "$1" >S/run.json &&
	"$CALIBER_TOOLS/cbtest" seal S
}
downgrade() {
	chmod -R u+w S && rm S/SEAL && grep -v "  SEAL\$" S/SHA256SUMS >sums && cat sums >S/SHA256SUMS
}
'
export helpers

test_expect_success 'SEAL deleted with its line is refused when run.json names a caliber that writes SEAL' '
	eval "$helpers" && "$CALIBER_TOOLS/cbtest" mkrun "$spec" S && with_run_json "$commit" && downgrade &&
	printf "%s\n" "caliber: verify: $PWD/S: seal does not hold: 0 changed, 0 missing, 0 extra, 0 symlinks, 0 special files; SHA256SUMS lists no SEAL (format 1), but run.json names caliber $commit, which seals in format 2: SEAL was removed with its line" >want &&
	expect_refusal 6 want $CALIBER verify S &&
	grep -qx "seal: format 1, SHA256SUMS sha256 $(sha256sum <S/SHA256SUMS | cut -c1-64)" "$T/.out" &&
	printf "%s\n" "caliber: reaccount: $PWD/S: seal does not hold: SHA256SUMS lists no SEAL (format 1), but run.json names caliber $commit, which seals in format 2: SEAL was removed with its line" >want &&
	expect_refusal 1 want $CALIBER reaccount S --floor 0 --output d && test ! -e d
'

test_expect_success 'a format 1 seal holds when run.json names only calibers from before SEAL, and is refused without run.json' '
	eval "$helpers" && "$CALIBER_TOOLS/cbtest" mkrun "$spec" S &&
	with_run_json 7b546bce9fece020b61da5b6f9f4c8522de30457+dirty && downgrade &&
	$CALIBER verify S >out && grep -qx "verify: $PWD/S: seal holds (162 files)" out && grep -q "^seal: format 1, " out &&
	rm S/run.json && grep -v "  run.json\$" S/SHA256SUMS >sums && cat sums >S/SHA256SUMS &&
	printf "%s\n" "caliber: verify: $PWD/S: seal does not hold: 0 changed, 0 missing, 0 extra, 0 symlinks, 0 special files; SHA256SUMS lists no SEAL (format 1) and no run.json: only a run sealed by a caliber from before SEAL is format 1, and its run.json says which" >want &&
	expect_refusal 6 want $CALIBER verify S
'
