#!/bin/sh
# Sealing and verify: a sealed run verifies; a changed byte, a missing file,
# an extra file and a symlink out of the run root are each named; sealing is
# deterministic; an unsealed folder is refused.
. "$(dirname "$0")/lib.sh"

spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
export spec

test_expect_success 'a sealed run verifies and is read-only' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	$CALIBER verify run >out &&
	grep -q "^verify: $PWD/run: seal holds (" out &&
	test -z "$(find run -perm -u+w)" &&
	head -1 run/SHA256SUMS | grep -Eq "^[0-9a-f]{64}  [^ ]"
'

test_expect_success 'the same run built twice is sealed to the same bytes' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" one && "$CALIBER_TOOLS/cbtest" mkrun "$spec" two &&
	cmp one/SHA256SUMS two/SHA256SUMS
'

test_expect_success 'SHA256SUMS is what sha256sum itself checks' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run &&
	(cd run && sha256sum --quiet -c SHA256SUMS)
'

test_expect_success 'a one-byte change is named' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run && chmod -R u+w run &&
	f=run/tasks/softmax_rows/cells/a-candidate/ir/MEASURED/k_main.ttgir &&
	printf "X" | dd of=$f bs=1 seek=10 conv=notrunc 2>/dev/null &&
	printf "caliber: verify: @CWD@/run: seal does not hold: 1 changed, 0 missing, 0 extra, 0 symlinks, 0 special files\n" >want &&
	expect_refusal 6 want $CALIBER verify run &&
	grep -qx "changed: tasks/softmax_rows/cells/a-candidate/ir/MEASURED/k_main.ttgir" "$T/.out"
'

test_expect_success 'a missing and an extra file are named' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run && chmod -R u+w run &&
	rm run/tasks/gelu_bwd/cells/a-off/timing.jsonl && echo new >run/tasks/gelu_bwd/notes.txt &&
	set +e; $CALIBER verify run >out 2>err; rc=$?; set -e &&
	test $rc -eq 6 &&
	grep -qx "missing: tasks/gelu_bwd/cells/a-off/timing.jsonl" out &&
	grep -qx "extra: tasks/gelu_bwd/notes.txt" out
'

test_expect_success 'a symlink out of the run root is reported and never followed' '
	"$CALIBER_TOOLS/cbtest" mkrun "$spec" run && chmod -R u+w run &&
	mkdir elsewhere && echo secret >elsewhere/data &&
	ln -s ../../../elsewhere run/tasks/transpose/link &&
	set +e; $CALIBER verify run >out 2>err; rc=$?; set -e &&
	test $rc -eq 6 &&
	grep -qx "symlink: tasks/transpose/link -> ../../../elsewhere" out &&
	! grep -q "elsewhere/data" out
'

test_expect_success 'sealing refuses a tree holding a symlink' '
	mkdir tree && echo a >tree/a && ln -s /etc/hostname tree/b &&
	printf "cbtest: seal: seal: b: a symlink cannot be sealed\n" >want &&
	expect_refusal 1 want "$CALIBER_TOOLS/cbtest" seal tree &&
	test ! -e tree/SHA256SUMS
'

test_expect_success 'a folder that was never sealed is refused' '
	mkdir plain && echo a >plain/a &&
	printf "caliber: verify: @CWD@/plain: not sealed (no SHA256SUMS)\n" >want &&
	expect_refusal 1 want $CALIBER verify plain
'

test_expect_success 'a malformed SHA256SUMS is refused with its line' '
	mkdir bad && echo a >bad/a && printf "nothex  a\n" >bad/SHA256SUMS &&
	printf "caliber: verify: @CWD@/bad/SHA256SUMS:1: not a sha256sum line\n" >want &&
	expect_refusal 1 want $CALIBER verify bad
'
