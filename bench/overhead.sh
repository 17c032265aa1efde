#!/bin/sh
# bench/overhead.sh [N]: caliber's orchestration overhead per cell, against
# running the same child directly (issue: under 5 ms beyond the child's own
# runtime). The child is bench/noop_worker.sh, which answers at once, so all
# that is left is caliber's share.
#  A. one cell by hand: `caliber worker` (loads and binds the frozen
#     campaign, builds the clean environment and private caches, spawns the
#     child, sends the request, waits through poll, writes the cell receipt)
#     vs `echo REQUEST | sh noop_worker.sh` directly; N times each.
#  B. `caliber run` of the CPU test campaign with persistent workers: its wall
#     time minus the wall time of its preflights alone, divided by the cells
#     it ran.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
n=${1:-200}
make -C "$root" --no-print-directory caliber >/dev/null
CALIBER="$root/caliber"
D="$root/tests/data/campaign-cpu"
work="$root/build/bench/overhead"
chmod -R u+w "$work" 2>/dev/null || true
rm -rf "$work"
mkdir -p "$work"
cd "$work"
PY=/usr/bin/python3
case "$($CALIBER --version)" in *dirty*|*unknown*) DIRTY=--allow-dirty-harness ;; *) DIRTY= ;; esac
$CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null
$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$root/tests/backends" >/dev/null
F=frozen/cpu-test-canary
now_ns() { date +%s%N; }

# A: caliber worker vs the child directly
s=$(now_ns)
for i in $(seq "$n"); do
	"$CALIBER" worker --manifest $F/manifest.json --task-matrix $F/task-matrix.json --task gain --cell off \
		--phase correctness --corpus "$D/corpus" --build-root "$D/compiler" --out "cell$i" \
		--backends "$root/tests/backends" --worker "sh $root/bench/noop_worker.sh" >/dev/null
done
e=$(now_ns); via=$(((e - s) / n))
req='{"argv": [], "env": {}, "phase": "correctness", "task": "gain"}'
s=$(now_ns)
for i in $(seq "$n"); do
	echo "$req" | sh "$root/bench/noop_worker.sh" 3>/dev/null
done
e=$(now_ns); direct=$(((e - s) / n))
echo "A. one cell by hand, $n times: caliber worker $((via / 1000)) us, child directly $((direct / 1000)) us, overhead $(((via - direct) / 1000)) us per cell"

# B: a whole campaign with persistent workers
runit() {
	out=$1; shift
	"$CALIBER" run --manifest $F/manifest.json --task-matrix $F/task-matrix.json --build-root "$D/compiler" \
		--corpus "$D/corpus" --output-root "$out" "$@" --backends "$root/tests/backends" --python $PY \
		--allow-dirty-harness --worker "sh $root/bench/noop_worker.sh" --quiet >/dev/null 2>&1 || true
}
mkdir exists
for mode in persistent isolate; do
	extra=; [ $mode = isolate ] && extra="--isolate task"
	best_pre=999999999999; best_run=999999999999
	for k in 1 2 3 4 5; do
		s=$(now_ns); runit exists; e=$(now_ns); t=$((e - s)); [ $t -lt $best_pre ] && best_pre=$t
		chmod -R u+w out 2>/dev/null || true; rm -rf out
		# shellcheck disable=SC2086
		s=$(now_ns); runit out $extra; e=$(now_ns); t=$((e - s)); [ $t -lt $best_run ] && best_run=$t
	done
	cells=$(find out/tasks -name cell.json | wc -l)
	echo "B. caliber run, $mode workers: $cells cells in $((best_run / 1000000)) ms, preflights alone $((best_pre / 1000000)) ms (best of 5): $(((best_run - best_pre) / cells / 1000)) us per cell (receipts, topology, classification, seal included; isolate also starts the child each time)"
done
