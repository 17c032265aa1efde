#!/bin/sh
# scripts/device/relative_paths.sh [OUT]: on the GPU machine, from the checkout
# root (./caliber built), the case of issue 26 where a relative --corpus ops
# failed the targets preflight ("benchmark/test_reduction.py::
# test_perf_sum_rows not found") and an absolute one passed: the demo
# template pinned to the installed Triton with all 32 workloads as canary
# (so that the matrix is --selection all's, sum_rows first), prepared with a
# relative --inventory-dir, then `caliber run --preflight-only` with --corpus
# as ops, ./ops, $PWD/ops and the physical path, each in a fresh output root.
# A preflight that fails now names the collection error behind a missing
# test. Writes OUT/relative_paths.txt (default OUT: $OUT, else ./relative-paths)
# with the facts of the machine (cwd, physical cwd, python, pytest) and every
# preflight's lines; exits 1 when any of the four differs from the others.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
out=${1:-${OUT:-relative-paths}}
mkdir -p "$out"
log=$out/relative_paths.txt
work=$(mktemp -d "${TMPDIR:-/tmp}/caliber-relpaths.XXXXXX")
triton=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))') || exit 1
{
	echo "pwd: $(pwd)"
	echo "pwd -P: $(pwd -P)"
	echo "readlink -f .: $(readlink -f .)"
	echo "caliber: $(./caliber --version)"
	echo "python3: $(command -v python3) $(python3 --version 2>&1)"
	echo "pytest: $(python3 -c 'import pytest; print(pytest.__version__, pytest.__file__)' 2>&1)"
	echo "triton: $triton"
} >"$log"
python3 - campaigns/demo-h200/manifest.in.json "$work/all.in.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["campaign"] = "relpaths"
for w in m["workloads"]:
    w["canary"] = True
json.dump(m, open(sys.argv[2], "w"), indent=2)
PY
./caliber pin "$work/all.in.json" -o "$work/all.json" --compiler "$triton" --corpus ops >>"$log" 2>&1 &&
	./caliber prepare "$work/all.json" --inventory-dir ops --output-root "$work/frozen" >>"$log" 2>&1 ||
	{ echo "pin or prepare failed"; cat "$log"; exit 1; }
status=0
k=0
for corpus in ops ./ops "$PWD/ops" "$(pwd -P)/ops"; do
	k=$((k + 1))
	echo "--- --corpus $corpus" >>"$log"
	./caliber run --manifest "$work/frozen/relpaths-canary/manifest.json" \
		--task-matrix "$work/frozen/relpaths-canary/task-matrix.json" --build-root "$triton" --corpus "$corpus" \
		--output-root "$work/run$k" --preflight-only >"$work/pf$k" 2>&1
	echo "exit $?" >>"$work/pf$k"
	cat "$work/pf$k" >>"$log"
	grep -E '^preflight: targets|^exit' "$work/pf$k" | sed 's/resolve in .*/resolve/' >"$work/t$k"
	[ $k -eq 1 ] || cmp -s "$work/t1" "$work/t$k" || status=1
done
echo "--- the four preflights $([ $status -eq 0 ] && echo agree || echo DIFFER)" >>"$log"
grep -E '^preflight: targets|^exit|^---' "$log"
rm -rf "$work"
exit $status
