#!/bin/sh
# The output guard (issue 14, items 1-5): no command writes into a sealed
# run, however the path gets there: a link behind a missing folder, a path
# whose real form is longer than PATH_MAX, a link or bind mount of the run,
# a symlinked parent, "..", and the commands that had no check at all
# (prepare, inventory, worker, demo). Every refusal is asserted with its
# exact message, and the sealed run S is left as it was: the same names,
# the same bytes, and a seal that verifies.
. "$(dirname "$0")/lib.sh"

spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
D="$CALIBER_ROOT/tests/data/campaign-cpu"
W="$CALIBER_ROOT/tests/workers"
export spec D W

setup='
mkS() { "$CALIBER_TOOLS/cbtest" mkrun "$spec" S && snap >S.before; }
snap() { (cd S && find . | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort); }
untouched() {
	snap >S.after
	cmp -s S.before S.after || { echo "S changed:"; diff S.before S.after; return 1; }
	$CALIBER verify S >/dev/null
}
# refused CODE MESSAGE cmd...: exit status CODE, stderr exactly MESSAGE, S untouched.
refused() {
	code=$1; printf "%s\n" "$2" >want; shift 2
	expect_refusal "$code" want "$@" && untouched
}
'
export setup

test_expect_success 'reaccount: a link behind a missing folder (nothere/../L/evil, L -> S/tasks) is refused' '
	eval "$setup" && mkS && ln -s S/tasks L &&
	refused 1 "caliber: reaccount: --output $PWD/nothere/../L/evil: $PWD/nothere/../L is a symlink after a folder that mkdir -p makes; caliber follows no link there" \
		$CALIBER reaccount S --floor 0 --output nothere/../L/evil &&
	test ! -e nothere
'

test_expect_success 'reaccount: a dangling link into S behind which folders would be made is refused' '
	eval "$setup" && mkS && ln -s S/tasks/new D &&
	refused 1 "caliber: reaccount: --output $PWD/D/x: $PWD/D is a symlink after a folder that mkdir -p makes; caliber follows no link there" \
		$CALIBER reaccount S --floor 0 --output D/x
'

test_expect_success 'mkdir -p follows no link after a folder it makes, wherever the link points' '
	eval "$setup" && mkS && mkdir elsewhere && ln -s elsewhere L &&
	refused 1 "caliber: reaccount: --output $PWD/nothere/../L/evil: $PWD/nothere/../L is a symlink after a folder that mkdir -p makes; caliber follows no link there" \
		$CALIBER reaccount S --floor 0 --output nothere/../L/evil &&
	test ! -e nothere && expect_empty elsewhere
'

for cmd in reaccount report; do
	if [ $cmd = reaccount ]; then opt=--output; args="--floor 0 --output"; why="a derived run is always written outside it"; t=derived
	else opt=-o; args=-o; why="a sealed run is never written to"; t=r.md; fi
	export cmd opt args why t
	test_expect_success "$cmd: a symlink to S is refused" '
		eval "$setup" && mkS && ln -s S A &&
		refused 1 "caliber: $cmd: $opt $PWD/A/$t: inside the run root $PWD/S ($why)" $CALIBER $cmd S $args A/$t
	'
	test_expect_success "$cmd: a symlinked parent of S is refused" '
		eval "$setup" && mkS && ln -s "$PWD" P &&
		refused 1 "caliber: $cmd: $opt $PWD/P/S/tasks/$t: inside the run root $PWD/S ($why)" \
			$CALIBER $cmd S $args P/S/tasks/$t
	'
	test_expect_success "$cmd: a .. back into S is refused" '
		eval "$setup" && mkS && mkdir x &&
		refused 1 "caliber: $cmd: $opt $PWD/x/../S/$t: inside the run root $PWD/S ($why)" $CALIBER $cmd S $args x/../S/$t
	'
	test_expect_success "$cmd: a path into S whose real form is PATH_MAX long is refused, not cut" '
		eval "$setup" && mkS &&
		# deep -> P, a folder whose real path is 4092 bytes: P/mm does not
		# fit a lexical resolution, which used to drop it and so end up one
		# folder above where the kernel goes.
		p=$PWD && n=0 && need=$((4092 - ${#PWD})) &&
		while [ $need -gt 203 ]; do p=$p/$(printf "d%.0s" $(seq 200)); need=$((need - 201)); n=$((n + 1)); done &&
		p=$p/$(printf "e%.0s" $(seq $((need - 1)))) && n=$((n + 1)) && test ${#p} -eq 4092 &&
		mkdir -p "$p" && ln -s "$p" deep &&
		up=$(printf "../%.0s" $(seq $((n + 1)))) &&
		refused 1 "caliber: $cmd: $opt $PWD/deep/mm/${up}S/$t: inside the run root $PWD/S ($why)" \
			$CALIBER $cmd S $args deep/mm/${up}S/$t &&
		test ! -e "$p/mm"
	'
	if unshare -rm true 2>/dev/null; then
		test_expect_success "$cmd: a bind mount of S is refused (compared by device and inode)" '
			eval "$setup" && mkS && mkdir bm &&
			printf "%s\n" "caliber: $cmd: $opt $PWD/bm/$t: inside the run root $PWD/S ($why)" >want &&
			set +e; unshare -rm sh -c "mount --bind S bm && $CALIBER $cmd S $args bm/$t" >out 2>err; rc=$?; set -e &&
			test $rc -eq 1 && cmp want err && untouched
		'
		test_expect_success "$cmd: a bind mount of a folder of S is refused (every folder of S compared)" '
			eval "$setup" && mkS && mkdir bm &&
			printf "%s\n" "caliber: $cmd: $opt $PWD/bm/gelu_bwd/$t: inside the run root $PWD/S ($why)" >want &&
			set +e; unshare -rm sh -c "mount --bind S/tasks bm && $CALIBER $cmd S $args bm/gelu_bwd/$t" >out 2>err; rc=$?; set -e &&
			test $rc -eq 1 && cmp want err && untouched
		'
	else
		test_skip "$cmd: a bind mount of S is refused (compared by device and inode)" "no unshare -rm (user namespaces) here"
		test_skip "$cmd: a bind mount of a folder of S is refused (every folder of S compared)" "no unshare -rm (user namespaces) here"
	fi
done

test_expect_success 'report: -o over a sealed file through a path PATH_MAX long is refused' '
	eval "$setup" &&
	mkdir -p long/$(printf "x%.0s" $(seq 100)) && cd long/x* && mkS &&
	dots=$(printf "./%.0s" $(seq 2024)) && n=$((${#PWD} + 1 + ${#dots} + 11)) &&
	refused 2 "caliber: report: --output: $(printf "./%.0s" $(seq 32))...: the path is $n bytes long, PATH_MAX is 4096" \
		$CALIBER report S -o "${dots}S/matrix.md" &&
	refused 1 "caliber: report: -o $PWD/S/matrix.md: inside the run root $PWD/S (a sealed run is never written to)" \
		$CALIBER report S -o "$(printf "./%.0s" $(seq 1000))S/matrix.md"
'

test_expect_success 'report of another run: -o into a sealed run is refused by its seal' '
	eval "$setup" && mkS && "$CALIBER_TOOLS/cbtest" mkrun "$spec" other &&
	refused 1 "caliber: report: -o $PWD/S/tasks/r.html: inside the sealed run $PWD/S (a sealed run is never written to)" \
		$CALIBER report other -o S/tasks/r.html
'

test_expect_success 'prepare: --output-root inside a sealed run is refused, nothing printed' '
	eval "$setup" && mkS &&
	refused 1 "caliber: prepare: --output-root $PWD/S/tasks/x: inside the sealed run $PWD/S (a sealed run is never written to)" \
		$CALIBER prepare "$CALIBER_ROOT/tests/bad/base/manifest.json" --inventory-dir "$CALIBER_ROOT/tests/bad/base" \
		--output-root S/tasks/x &&
	test ! -s "$T/.out"
'

test_expect_success 'prepare: an --output-root that climbs into S with .. is refused' '
	eval "$setup" && mkS &&
	refused 1 "caliber: prepare: --output-root $PWD/new/../S/frozen: inside the sealed run $PWD/S (a sealed run is never written to)" \
		$CALIBER prepare "$CALIBER_ROOT/tests/bad/base/manifest.json" --inventory-dir "$CALIBER_ROOT/tests/bad/base" \
		--output-root new/../S/frozen &&
	test ! -e new
'

test_expect_success 'inventory: -o over a sealed file is refused before the corpus is read' '
	eval "$setup" && mkS &&
	refused 1 "caliber: inventory: -o $PWD/S/matrix.csv: inside the sealed run $PWD/S (a sealed run is never written to)" \
		$CALIBER inventory --corpus "$CALIBER_ROOT/ops" -o S/matrix.csv
'

test_expect_success 'inventory: -o through a link to a folder of S is refused' '
	eval "$setup" && mkS && ln -s S/tasks/gelu_bwd G &&
	refused 1 "caliber: inventory: -o $PWD/G/inv.csv: inside the sealed run $PWD/S (a sealed run is never written to)" \
		$CALIBER inventory --corpus "$CALIBER_ROOT/ops" -o G/inv.csv
'

test_expect_success 'worker: --out inside a sealed run is refused before anything runs' '
	eval "$setup" && mkS &&
	refused 1 "caliber: worker: --out $PWD/S/tasks/x: inside the sealed run $PWD/S (a sealed run is never written to)" \
		$CALIBER worker --manifest m.json --task-matrix x.json --task gain --cell off --phase a \
		--corpus "$D/corpus" --build-root "$D/compiler" --out S/tasks/x
'

test_expect_success 'demo: --output inside a sealed run is refused' '
	eval "$setup" && mkS &&
	refused 1 "caliber: demo: --output $PWD/S/demo: inside the sealed run $PWD/S (a sealed run is never written to)" \
		$CALIBER demo --offline --output S/demo
'

test_expect_success 'worker.log planted as a link is refused, never truncating what it points to' '
	eval "$setup" &&
	$CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null &&
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	echo keep >victim && mkdir -p task/cells/a-off && ln -s ../../../victim task/cells/a-off/worker.log &&
	printf "%s\n" "caliber: worker: $PWD/task/cells/a-off/worker.log: a symlink; caliber never writes through one" >want &&
	TMPDIR=$T expect_refusal 1 want $CALIBER worker --manifest frozen/cpu-test-canary/manifest.json \
		--task-matrix frozen/cpu-test-canary/task-matrix.json --task gain --cell off --phase a \
		--corpus "$D/corpus" --build-root "$D/compiler" --out task --backends "$CALIBER_ROOT/tests/backends" \
		--worker "python3 $W/replay.py $D" &&
	test "$(cat victim)" = keep
'
