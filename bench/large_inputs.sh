#!/bin/sh
# bench/large_inputs.sh [OPS] [VARIANTS]: time the checks that must stay
# O(n log n) on large inputs: `caliber prepare --dry-run` against an
# inventory of OPS ops (default 40000) and `caliber topology` of a cell whose
# ir/index.tsv lists VARIANTS variants (default 100000), each file with one
# row listed twice at its end, so that the duplicate check runs over every
# row and refuses the file. Prints one line per input with the seconds it
# took. CALIBER=BINARY times another build (default ./caliber, made first).
# A benchmark, not a test: figures go in bench/RESULTS.md with the machine
# (tests/cli/t0970-large-inputs.sh asserts the outcome only).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
ops=${1:-40000}
variants=${2:-100000}
work="$root/build/bench/large_inputs"
if [ -z "${CALIBER:-}" ]; then
	make -C "$root" --no-print-directory caliber >/dev/null
	CALIBER="$root/caliber"
fi
rm -rf "$work"
mkdir -p "$work/cell/ir"
python3 - "$work" "$ops" "$variants" <<'PY'
import sys
work, ops, variants = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f"{work}/inventory_main.csv", "w") as f:
    f.write("op,benchmark_file,benchmark_test,correctness_file,correctness_selector,dtypes,kind\n")
    for i in range(ops):
        f.write(f"op{i},benchmark/test_ops.py,test_perf_op{i},tests/test_ops.py,op{i},float16,pointwise\n")
    f.write("op0,benchmark/test_ops.py,test_perf_op0,tests/test_ops.py,op0,float16,pointwise\n")
with open(f"{work}/cell/ir/index.tsv", "w") as f:
    f.write("variant\tkernel\tlaunches\ttuning_launches\n")
    for i in range(variants):
        f.write(f"V{i:07d}\tk{i}\t{i % 7}\t0\n")
    f.write("V0000000\tk\t1\t0\n")
PY
# seconds that "$@" took (it is expected to fail: the duplicate)
seconds() {
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || true
	echo "$(( ($(date +%s%N) - t0) / 1000000 ))" | awk '{ printf "%.2f", $1 / 1000 }'
}
echo "prepare, inventory of $ops ops: $(seconds "$CALIBER" prepare "$root/tests/bad/base/manifest.json" --inventory-dir "$work" --dry-run) s"
echo "topology, index.tsv of $variants variants: $(seconds "$CALIBER" topology "$work/cell") s"
