#!/bin/sh
# bench/merge.sh [SHARDS] [RUNS]: time `caliber merge` of SHARDS shards
# (default 4) of the committed 32-task H200 run campaigns/demo-h200/runs/all
# against `caliber verify` of that run, warm cache, RUNS rounds (default 5)
# in which each command runs once, and print the medians and their ratio
# (target: merge within 1.5x of verify: it must verify every shard anyway,
# and copies in the same read). The shards are cut from the sealed run as
# `caliber run --shard K/N` would have written them: the deal of
# src/campaign/shard.c (longest budget_s first onto the least-loaded shard, ties by
# matrix order; merge checks it), each shard's tasks, its campaign
# receipt with the "shard" record, sealed by tests/tools/cbtest. The
# merged matrix must be the committed run's, byte for byte. A benchmark,
# not a test: figures go in bench/RESULTS.md with the machine.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
shards=${1:-4}
runs=${2:-5}
RUN="$root/campaigns/demo-h200/runs/all"
work="$root/build/bench/merge"
make -C "$root" --no-print-directory caliber build/normal/tools/cbtest >/dev/null
CALIBER="$root/caliber"

chmod -R u+w "$work" 2>/dev/null || true
rm -rf "$work"
mkdir -p "$work"
python3 - "$RUN" "$work" "$shards" <<'PY'
import json, os, shutil, sys
run, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
matrix = json.load(open(os.path.join(run, "task-matrix.json")))
campaign = json.load(open(os.path.join(run, "campaign.json")))
tasks = matrix["tasks"]
# the deal of src/campaign/shard.c
order = sorted(range(len(tasks)), key=lambda i: (-tasks[i]["budget_s"], i))
load, shard_of = [0] * n, [0] * len(tasks)
for i in order:
    best = min(range(n), key=lambda s: (load[s], s))
    load[best] += tasks[i]["budget_s"]
    shard_of[i] = best
started = json.load(open(os.path.join(run, "run.json")))["invocations"][0]["started"]
for k in range(n):
    dst = os.path.join(work, f"s{k + 1}")
    os.makedirs(os.path.join(dst, "tasks"))
    ids = [t["id"] for i, t in enumerate(tasks) if shard_of[i] == k]
    for f in ("manifest.json", "task-matrix.json", "inventory.csv", "run.json"):
        shutil.copyfile(os.path.join(run, f), os.path.join(dst, f))
    for t in ids:
        shutil.copytree(os.path.join(run, "tasks", t), os.path.join(dst, "tasks", t))
    c = dict(campaign)
    c["tasks"] = [t for t in campaign["tasks"] if t["id"] in ids]
    c["verdicts"] = {}
    for t in c["tasks"]:
        c["verdicts"][t["verdict"]] = c["verdicts"].get(t["verdict"], 0) + 1
    c["shard"] = {"index": k + 1, "count": n, "tasks": ids, "host": "bench", "started": started}
    with open(os.path.join(dst, "campaign.json"), "w") as f:
        f.write(json.dumps(c, indent=2, sort_keys=True) + "\n")
PY
i=1
while [ $i -le "$shards" ]; do
	"$root/build/normal/tools/cbtest" seal "$work/s$i"
	i=$((i + 1))
done

# time_ms CMD...: wall milliseconds of one run of CMD (output discarded).
time_ms() {
	t0=$(date +%s%N)
	"$@" >/dev/null
	echo $((($(date +%s%N) - t0) / 1000000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

set --
i=1
while [ $i -le "$shards" ]; do set -- "$@" "$work/s$i"; i=$((i + 1)); done
"$CALIBER" verify "$RUN" >/dev/null   # warm the cache
"$CALIBER" merge "$@" --output-root "$work/merged" --quiet
cmp "$RUN/matrix.csv" "$work/merged/matrix.csv"
cmp "$RUN/matrix.md" "$work/merged/matrix.md"
: >"$work/verify.ms"
: >"$work/merge.ms"
: >"$work/link.ms"
r=1
while [ $r -le "$runs" ]; do
	chmod -R u+w "$work/merged" && rm -rf "$work/merged" "$work/linked"
	sync
	time_ms "$CALIBER" verify "$RUN" >>"$work/verify.ms"
	time_ms "$CALIBER" merge "$@" --output-root "$work/merged" --quiet >>"$work/merge.ms"
	time_ms cp -rl "$RUN" "$work/linked" >>"$work/link.ms"
	r=$((r + 1))
done
files=$(wc -l <"$RUN/SHA256SUMS")
bytes=$(du -sb "$RUN" | cut -f1)
v=$(median <"$work/verify.ms")
m=$(median <"$work/merge.ms")
l=$(median <"$work/link.ms")
echo "run: $RUN ($files files, $bytes bytes), $shards shards, $runs rounds, $(nproc) CPUs"
echo "verify median ${v} ms ($(tr '\n' ' ' <"$work/verify.ms"))"
echo "merge  median ${m} ms ($(tr '\n' ' ' <"$work/merge.ms"))"
echo "cp -rl median ${l} ms ($(tr '\n' ' ' <"$work/link.ms")): the tree alone, hard-linked"
awk -v m="$m" -v v="$v" -v l="$l" 'BEGIN { printf "merge / verify = %.2f (target <= 1.5); merge / (verify + cp -rl) = %.2f\n", m / v, m / (v + l) }'
