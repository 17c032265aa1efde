#!/bin/sh
# bench/reaccount.sh [VARIANTS] [RUNS]: time `caliber reaccount` on a
# synthetic sealed run of VARIANTS variants (default 10000, about 1 GB of
# real TTGIR from tests/data/ttgir) against `grep -c ttg.convert_layout`
# over the same files, warm cache, RUNS runs each (default 5), and print
# the medians and their ratio. Also times `caliber verify` alone, since
# reaccount must check the seal (it counts the IR in the same read), so the
# difference is what reaccount adds to that check. grep writes its counts to a file: GNU grep
# stops at the first match when its output is /dev/null, which would time
# nothing. A benchmark, not a test: figures go in
# bench/RESULTS.md with the machine.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
variants=${1:-10000}
runs=${2:-5}
work="$root/build/bench/reaccount"
make -C "$root" --no-print-directory caliber build/normal/tools/cbtest >/dev/null
CALIBER="$root/caliber"

if [ ! -f "$work/run/SHA256SUMS" ] || [ "$(cat "$work/variants" 2>/dev/null)" != "$variants" ]; then
	chmod -R u+w "$work" 2>/dev/null || true
	rm -rf "$work"
	mkdir -p "$work"
	python3 - "$root" "$work" "$variants" <<'PY'
import glob, json, os, sys
root, work, variants = sys.argv[1], sys.argv[2], int(sys.argv[3])
fixtures = sorted(glob.glob(os.path.join(root, "tests/data/ttgir/*.ttgir")))
texts = [open(f).read() for f in fixtures]
# 16 distinct ~100 KB modules, each the fixtures in a rotated order, repeated
blobs = []
for k in range(16):
    order = texts[k % len(texts):] + texts[:k % len(texts)]
    body, i = "", 0
    while len(body) < 100_000:
        body += order[i % len(order)]
        i += 1
    path = os.path.join(work, f"blob{k}.ttgir")
    open(path, "w").write(body)
    blobs.append(os.path.basename(path))
tasks, per_cell = 100, max(1, variants // 300)
ops = [f"op{t:03d}" for t in range(tasks)]
inv = "op,benchmark_file,benchmark_test,correctness_file,correctness_selector,dtypes,kind\n" + "".join(
    f"{o},benchmark/test_{o}.py,test_perf_{o},tests/test_{o}.py,{o},float16,reduction\n" for o in ops)
open(os.path.join(work, "inventory_main.csv"), "w").write(inv)
manifest = json.load(open(os.path.join(root, "tests/golden/runs/basic/manifest.json")))
manifest["campaign"] = "bench"
manifest["workloads"] = [dict(manifest["workloads"][0], id=o, op=o,
                              benchmark={"target": f"benchmark/test_{o}.py::test_perf_{o}"}) for o in ops]
json.dump(manifest, open(os.path.join(work, "manifest.json"), "w"), indent=1)
spec_tasks = []
for t, o in enumerate(ops):
    cells = {}
    for c in ("off", "mask0", "candidate"):
        ir = [{"variant": f"V{t:03d}{c[0]}{v:04d}", "kernel": "k", "launches": 40 if v % 3 else 1,
               "tuning_launches": 0, "ttgir": blobs[(t + v) % len(blobs)]} for v in range(per_cell)]
        timing = [{"row": f"r{r}", "ns": 20000 + 100 * r, "n": 7, "timer": "graph"} for r in range(3)]
        cells[c] = {"correctness": "passed", "a": {"outcome": "passed", "ir": ir, "timing": timing}}
    spec_tasks.append({"id": o, "op": o, "cells": cells})
json.dump({"manifest": "manifest.json", "inventory": "inventory_main.csv", "tasks": spec_tasks},
          open(os.path.join(work, "spec.json"), "w"))
PY
	"$root/build/normal/tools/cbtest" mkrun "$work/spec.json" "$work/run"
	echo "$variants" >"$work/variants"
fi

files=$(find "$work/run" -name '*.ttgir' | wc -l)
bytes=$(find "$work/run" -name '*.ttgir' -print0 | du -cb --files0-from=- | tail -1 | cut -f1)
cat $(find "$work/run" -type f) >/dev/null   # warm the page cache

# Median wall time in ms of a command, over $runs runs.
median_ms() {
	for i in $(seq "$runs"); do
		rm -rf "$work/out"
		s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
		echo $(((e - s) / 1000000))
	done | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'
}

g=$(median_ms sh -c "find '$work/run' -name '*.ttgir' -print0 | xargs -0 grep -c ttg.convert_layout >'$work/grep.out'")
v=$(median_ms "$CALIBER" verify "$work/run")
r=$(median_ms "$CALIBER" reaccount "$work/run" --floor 0 --output "$work/out")
echo "files: $files ttgir ($((bytes / 1000000)) MB), runs: $runs, machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "grep -c ttg.convert_layout   median ${g} ms"
echo "caliber verify (seal)        median ${v} ms"
echo "caliber reaccount --floor 0  median ${r} ms (seal check, join, scoping, classification)"
awk -v r="$r" -v g="$g" -v v="$v" 'BEGIN {
	printf "ratio reaccount / grep: %.2f\n", r / g
	printf "ratio (reaccount - verify) / grep: %.2f (what reaccount adds to a seal check; it counts the IR in the same read)\n", (r - v) / g }'
