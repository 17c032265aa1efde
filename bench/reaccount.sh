#!/bin/sh
# bench/reaccount.sh [VARIANTS] [RUNS]: time `caliber reaccount` on a
# synthetic sealed run of VARIANTS variants (default 10000, about 1 GB of
# real TTGIR from tests/data/ttgir) against `grep -c ttg.convert_layout`
# over the same files, warm cache, RUNS rounds (default 5) in which each
# command runs once, and print the medians and their ratio. Also times
# `caliber verify` alone, since reaccount must check the seal (it counts the
# IR in the same read), so the difference is what reaccount adds to that
# check. grep writes its counts to a file: GNU grep stops at the first
# match when its output is /dev/null, which would time nothing. A
# benchmark, not a test: figures go in bench/RESULTS.md with the machine.
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

# Wall time in ms of one run of a command.
time_ms() {
	rm -rf "$work/out"
	s=$(date +%s%N); "$@" >/dev/null 2>&1; e=$(date +%s%N)
	echo $(((e - s) / 1000000))
}

# The three commands take turns, one run each per round, so that a machine
# that speeds up or slows down over the minute affects all three alike.
: >"$work/times"
for i in $(seq "$runs"); do
	g=$(time_ms sh -c "find '$work/run' -name '*.ttgir' -print0 | xargs -0 grep -c ttg.convert_layout >'$work/grep.out'")
	v=$(time_ms "$CALIBER" verify "$work/run")
	r=$(time_ms "$CALIBER" reaccount "$work/run" --floor 0 --output "$work/out")
	echo "$g $v $r" >>"$work/times"
done
echo "files: $files ttgir ($((bytes / 1000000)) MB), runs: $runs, machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
awk '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ g[NR] = $1; v[NR] = $2; r[NR] = $3; q[NR] = $3 / $1 }
END {
	mg = median(g, NR); mv = median(v, NR); mr = median(r, NR); mq = median(q, NR)
	printf "grep -c ttg.convert_layout   median %d ms\n", mg
	printf "caliber verify (seal)        median %d ms\n", mv
	printf "caliber reaccount --floor 0  median %d ms (seal check, join, scoping, classification)\n", mr
	printf "ratio reaccount / grep: %.2f (medians); %.2f (median of the rounds'"'"' ratios)\n", mr / mg, mq
	printf "ratio (reaccount - verify) / grep: %.2f (what reaccount adds to a seal check; it counts the IR in the same read)\n", (mr - mv) / mg
}' "$work/times"
