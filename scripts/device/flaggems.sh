#!/bin/sh
# scripts/device/flaggems.sh WORK [LOGDIR]: the FlagGems canary of
# campaigns/flaggems-h200 on the GPU machine, from a caliber checkout with
# ./caliber built and these carried (git-ignored) files:
#   .carry/flaggems.tar.gz  FlagGems' src tests benchmark conf pytest.ini
#                           (git archive of its 2026-08 head; its commit is in
#                           the archive's header)
#   .carry/sqlalchemy/      SQLAlchemy 2.0.52's lib/sqlalchemy (FlagGems needs
#                           sqlalchemy.orm.DeclarativeBase; Debian ships 1.4)
# Steps: extract FlagGems to WORK/FlagGems; print the versions; smoke: FlagGems'
# gelu_backward benchmark at --level core through the planned plugins, with
# checks that its rows carry FlagGems' baseline and that nothing leaked into
# the corpus; the inventory (caliber inventory); pin the manifest; prepare and
# run the canary on $DEVICE (default 0) with --stop-after, so everything ends
# within $FLAGGEMS_DEADLINE_S (default 585) seconds of the start; reaccount at
# floors 0 and 1 into WORK/derived0 and WORK/derived1; wall time per task.
# FLAGGEMS_GRAPH_CAPTURE=off (default auto, as the template) times the smoke
# and the campaign directly; FLAGGEMS_SMOKE_ONLY=1 stops after the
# smoke, FLAGGEMS_SMOKE=0 skips it. With FLAGGEMS_RESUME=1 (on the same machine, WORK kept from a run that
# --stop-after stopped) it skips to the run, continued with --resume.
# FLAGGEMS_WORKERS (default persistent) is run's --workers: a fresh FlagGems
# worker spends seconds importing flag_gems and in its first request's set-up
# (bench/RESULTS.md, "Where the per-process offset comes from"), which a
# campaign of 26 operators x 12 requests cannot pay within a GPU slot;
# FLAGGEMS_SHARD=K/N runs and seals only shard K of N (the rest is left to
# the next slot, as shards of the same frozen campaign, merged by caliber merge).
# The full log and the results go to LOGDIR (default WORK/logs): at most 8
# files. Prints short progress lines and ends with a summary.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
logdir=${2:-$1/logs}
device=${DEVICE:-0}
deadline=${FLAGGEMS_DEADLINE_S:-585}
start=$(date +%s)
fg=$work/FlagGems
log=$logdir/flaggems.log
summary=$logdir/summary.txt

resume=${FLAGGEMS_RESUME:-0}
capture=${FLAGGEMS_GRAPH_CAPTURE:-auto}
case $capture in
off) capture_on=0 ;;
auto) capture_on=1 ;;
*) echo "FLAGGEMS_GRAPH_CAPTURE must be off or auto" >&2 && exit 2 ;;
esac
mkdir -p "$work" "$logdir"
: >"$log"
: >"$summary"

# say LINE: progress on stdout and in the log.
say() {
	echo "[$(($(date +%s) - start))s] $*" | tee -a "$log"
}

# note LINE: a summary line (printed again at the end).
note() {
	echo "$*" >>"$summary"
	say "$*"
}

# fail WHY: stop with the summary so far.
fail() {
	note "FAILED: $*"
	echo "--- summary"
	cat "$summary"
	exit 1
}

# logged CMD...: run CMD with its output in the log only; its status is returned.
logged() {
	echo "\$ $*" >>"$log"
	"$@" >>"$log" 2>&1
}

for f in "$root/caliber" "$root/.carry/flaggems.tar.gz" "$root/.carry/sqlalchemy/sqlalchemy/__init__.py"; do
	[ -e "$f" ] || fail "missing $f (see the header of $0)"
done
git -C "$root" rev-parse -q --verify HEAD >/dev/null 2>&1 ||
	fail "$root is not a git checkout: the manifest pins caliber by commit (carry .git)"
"$root/caliber" inventory --help >/dev/null 2>&1 || fail "this caliber has no inventory command"

if [ "$resume" = 1 ]; then
	[ -f "$work/frozen/flaggems-h200-canary/manifest.json" ] && [ -d "$work/run-canary" ] ||
		fail "FLAGGEMS_RESUME=1 but $work holds no stopped run"
	tree0=$("$root/caliber" digest "$fg")
	triton=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))' 2>>"$log") ||
		fail "python3 cannot import triton"
	note "resume: the stopped run in $work/run-canary"
else
# --- FlagGems and versions
rm -rf "$fg" "$work/versions-cache" "$work/smoke" "$work/inventory" "$work/frozen" "$work/run-canary" "$work/derived0" "$work/derived1"
mkdir -p "$fg"
tar -xzf "$root/.carry/flaggems.tar.gz" -C "$fg"
fg_commit=$(gzip -dc "$root/.carry/flaggems.tar.gz" | git get-tar-commit-id)
fg_path=$fg/src:$root/.carry/sqlalchemy
triton=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))' 2>>"$log") ||
	fail "python3 cannot import triton"
versions=$(PYTHONPATH=$fg_path FLAGGEMS_CACHE_DIR=$work/versions-cache python3 - 2>>"$log" <<'PY'
import sys

import pytest
import sqlalchemy
import torch
import triton

import flag_gems

print(f"python {sys.version.split()[0]}, torch {torch.__version__}, triton {triton.__version__}, "
      f"pytest {pytest.__version__}, sqlalchemy {sqlalchemy.__version__}, flag_gems from {flag_gems.__file__}, "
      f"{torch.cuda.get_device_name(0)}")
PY
) || fail "FlagGems does not import with $fg_path (see $log)"
note "flaggems: FlagGems $fg_commit in $fg"
note "versions: $versions; $("$root/caliber" --version)"
tree0=$("$root/caliber" digest "$fg")

# --- smoke: gelu_backward's benchmark through the planned plugins
smoke=$work/smoke
mkdir -p "$smoke/cell" "$smoke/home" "$smoke/flaggems-cache" "$smoke/triton-cache" "$smoke/work"
if [ "${FLAGGEMS_SMOKE:-1}" = 1 ]; then
plugins=$("$root/caliber" plan --backend cuda)
set --
for p in $plugins; do set -- "$@" -p "$p"; done
s0=$(date +%s)
if ! (cd "$smoke/work" && env HOME="$smoke/home" XDG_CACHE_HOME="$smoke/home/.cache" \
	FLAGGEMS_CACHE_DIR="$smoke/flaggems-cache" TRITON_CACHE_DIR="$smoke/triton-cache" \
	PYTHONPATH="$root/python:$fg:$fg_path" PYTHONDONTWRITEBYTECODE=1 CUDA_VISIBLE_DEVICES="$device" \
	CALIBER_CORPUS="$fg" CALIBER_WORK_DIR="$smoke/work" CALIBER_CELL_DIR="$smoke/cell" CALIBER_TASK=gelu_backward CALIBER_CELL=smoke \
	CALIBER_ROLE=baseline CALIBER_PHASE=a CALIBER_AUTOTUNE_MODE=record \
	CALIBER_AUTOTUNE_FILE="$smoke/cell/autotune.jsonl" CALIBER_DTYPES=float16 CALIBER_SHAPES='{"level":"core"}' \
	CALIBER_TIMER='{"graph_capture":"'"$capture"'","kind":"native-event","rep_ms":4,"repeats":3,"warmup_ms":0}' \
	CALIBER_GRAPH_CAPTURE=$capture_on \
	python3 -m pytest -q -p no:cacheprovider "$@" --rootdir="$fg" "$fg/benchmark/test_gelu.py::test_gelu_backward" >>"$log" 2>&1); then
	fail "smoke: FlagGems' gelu_backward benchmark failed through the plugins (see $log)"
fi
smoke_s=$(($(date +%s) - s0))
smoke_out=$(python3 - "$smoke" <<'PY'
import csv
import json
import os
import sys

smoke = sys.argv[1]
rows = [json.loads(line) for line in open(os.path.join(smoke, "cell", "timing.jsonl"))]
problems = [f"{r['row']}: no extra.latency_base_ns" for r in rows if not (r.get("extra") or {}).get("latency_base_ns")]
if not rows:
    problems.append("no timing rows")
for r in rows:
    ns = sorted(r["samples_ns"])[len(r["samples_ns"]) // 2]
    print(f"  {r['row']}: {r['timer']} ({r['timer_reason']}) median {ns} ns, "
          f"FlagGems latency_base {(r.get('extra') or {}).get('latency_base_ns')} ns")
with open(os.path.join(smoke, "cell", "ir", "index.tsv"), newline="") as f:
    index = list(csv.DictReader(f, delimiter="\t"))
once = sorted({r["kernel"] for r in index if int(r["launches"]) <= 1})
kept = sorted({r["kernel"] for r in index if int(r["launches"]) > 1})
print(f"  launch floor 1 keeps {kept}, drops {once}")
home = sorted(os.path.relpath(os.path.join(d, f), os.path.join(smoke, "home"))
              for d, _, fs in os.walk(os.path.join(smoke, "home")) for f in fs)
cache = sorted(os.path.relpath(os.path.join(d, f), os.path.join(smoke, "flaggems-cache"))
               for d, _, fs in os.walk(os.path.join(smoke, "flaggems-cache")) for f in fs)
print(f"  private HOME holds {home or 'nothing'}; FLAGGEMS_CACHE_DIR holds {cache or 'nothing'}")
print(f"SMOKE {len(rows)} rows{'; PROBLEMS: ' + '; '.join(problems) if problems else ''}")
PY
) || fail "smoke: cannot read its outputs (see $log)"
echo "$smoke_out" >>"$log"
echo "$smoke_out" | sed -n 's/^  //p' | head -12
note "smoke: $(echo "$smoke_out" | sed -n 's/^SMOKE //p') in ${smoke_s}s"
echo "$smoke_out" | grep -q '^SMOKE .*PROBLEMS' && fail "smoke: see above"
[ "$("$root/caliber" digest "$fg")" = "$tree0" ] || fail "smoke: the FlagGems tree changed while its benchmark ran"
fi

if [ "${FLAGGEMS_SMOKE_ONLY:-0}" = 1 ]; then
	note "done in $(($(date +%s) - start))s (FLAGGEMS_SMOKE_ONLY)"
	tar -czf "$logdir/smoke.tgz" -C "$work" smoke/cell
	exit 0
fi

# --- inventory and the pinned manifest
mkdir -p "$work/inventory"
logged "$root/caliber" inventory --corpus "$fg" -o "$work/inventory/inventory_main.csv" ||
	fail "caliber inventory failed (see $log)"
note "inventory: $(($(wc -l <"$work/inventory/inventory_main.csv") - 1)) ops"
# The manifest names the GPU it measures on (the device preflight refuses
# another): the template's H200, or whichever this machine has, said so.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$device" | head -1)
[ -n "$gpu" ] || fail "nvidia-smi names no GPU $device"
[ "$gpu" = "NVIDIA H200" ] || note "device: $gpu (the template names NVIDIA H200; pinned as found)"
sed -e "s/\"graph_capture\": \"auto\"/\"graph_capture\": \"$capture\"/" \
	-e "s/\"name\": \"NVIDIA H200\"/\"name\": \"$gpu\"/" \
	"$root/campaigns/flaggems-h200/manifest.in.json" >"$work/manifest.in.json"
logged "$root/caliber" pin "$work/manifest.in.json" -o "$work/manifest.json" --compiler "$triton" --corpus "$fg" ||
	fail "caliber pin failed (see $log)"
note "pinned: triton $triton, FlagGems tree $tree0, $(sed -n 's/^pin: \(sources.harness: .*\)/\1/p' "$log" | tail -1)"

fi

# --- prepare and run the canary
if [ "$resume" != 1 ]; then
	logged "$root/caliber" prepare "$work/manifest.json" --inventory-dir "$work/inventory" --selection canary \
		--output-root "$work/frozen" || fail "prepare refused the manifest (see $log)"
fi
frozen=$work/frozen/flaggems-h200-canary
stop=$((deadline - ($(date +%s) - start) - 75))
[ "$stop" -gt 60 ] || fail "no time left for the campaign (deadline ${deadline}s)"
say "run: canary on device $device, --stop-after ${stop}s"
run=$work/run-canary
r0=$(date +%s)
set +e
[ "$resume" = 1 ] && set -- --resume || set --
[ -n "${FLAGGEMS_SHARD:-}" ] && set -- "$@" --shard "$FLAGGEMS_SHARD"
"$root/caliber" run "$@" --workers "${FLAGGEMS_WORKERS:-persistent}" \
	--manifest "$frozen/manifest.json" --task-matrix "$frozen/task-matrix.json" \
	--build-root "$triton" --corpus "$fg" --output-root "$run" --device "$device" \
	--stop-after "$stop" >"$work/run.out" 2>&1
rc=$?
set -e
cat "$work/run.out" >>"$log"
grep -E '^preflight: .*FAILED|^caliber: ' "$work/run.out" | head -12 || true
case $rc in
0) note "run: completed in $(($(date +%s) - r0))s" ;;
4) note "run: stopped by --stop-after after $(($(date +%s) - r0))s (not sealed; --resume continues it)" ;;
*) note "run: exit $rc after $(($(date +%s) - r0))s" ;;
esac
if [ "$("$root/caliber" digest "$fg")" != "$tree0" ]; then
	added=$(gzip -dc "$root/.carry/flaggems.tar.gz" | tar -t | sed 's,/$,,' | sort >"$work/tree.list" &&
		(cd "$fg" && find . -mindepth 1 | sed 's,^\./,,' | sort) | comm -13 "$work/tree.list" - | head -5 | tr '\n' ' ')
	note "corpus: the run changed the FlagGems tree (new: ${added:-none}); a --resume would fail preflight sources"
fi

# --- results: verdicts, reaccount, wall time per task
if [ -f "$run/matrix.csv" ]; then
	python3 - "$run/matrix.csv" <<'PY' | tee -a "$summary"
import csv
import sys

print(f"  {'task':18s}{'verdict':9s}{'topology b/c/c':16s}speedup a")
for r in csv.DictReader(open(sys.argv[1], newline="")):
    topo = "/".join(r[f"topology_{c}"] for c in ("baseline", "control", "candidate"))
    speed = f"{int(r['speedup_a_ppm']) / 1e4:+.2f}%" if r["speedup_a_ppm"] else "-"
    print(f"  {r['task']:18s}{r['verdict']:9s}{topo:16s}{speed}")
PY
	if logged "$root/caliber" verify "$run"; then note "verify: seal holds"; else note "verify: FAILED"; fi
	for floor in 0 1; do
		if "$root/caliber" reaccount "$run" --floor "$floor" --output "$work/derived$floor" >"$work/reaccount$floor.out" 2>&1; then
			cat "$work/reaccount$floor.out" >>"$log"
			note "reaccount floor $floor: $(sed -n 's/^equivalence: //p' "$work/reaccount$floor.out");" \
				"$(sed -n 's/^reaccount: floor [0-9]*: \(.*\); wrote.*/\1/p' "$work/reaccount$floor.out")"
			python3 - "$work/derived$floor/derived.json" <<'PY' | tee -a "$summary"
import json
import sys

d = json.load(open(sys.argv[1]))
topo = lambda t: "/".join(str(t[c]) for c in ("baseline", "control", "candidate"))
for t in d["tasks"]:
    s, n = t["sealed"], t["derived"]
    if s["topology"] != n["topology"] or s["verdict"] != n["verdict"]:
        left_out = sorted({v for vs in n["excluded"].values() for v in vs})
        print(f"  {t['id']}: {s['verdict']} {topo(s['topology'])} -> {n['verdict']} {topo(n['topology'])}"
              f" ({len(left_out)} variants left out)")
PY
		else
			cat "$work/reaccount$floor.out" >>"$log"
			note "reaccount floor $floor: FAILED: $(tail -1 "$work/reaccount$floor.out")"
		fi
	done
else
	note "run: no matrix: no reaccount"
fi
if [ -d "$run/tasks" ]; then
	python3 - "$run" <<'PY' | tee -a "$summary"
import glob
import json
import os
import sys

print(f"  {'wall time':18s}{'correctness':>12s}{'round a':>10s}{'round b':>10s}{'task':>10s}")
tasks = []
for task in glob.glob(os.path.join(sys.argv[1], "tasks", "*")):
    phases = {"correctness": 0, "a": 0, "b": 0}
    for cell in glob.glob(os.path.join(task, "cells", "*", "cell.json")):
        receipt = json.load(open(cell))
        phases[receipt["phase"]] += receipt["wall_ns"]
    path = os.path.join(task, "task.json")
    receipt = json.load(open(path)) if os.path.exists(path) else {}
    tasks.append((receipt.get("index", 1 << 30), os.path.basename(task), phases, receipt.get("wall_ns")))
for _, name, phases, total in sorted(tasks):
    cols = "".join(f"{phases[p] / 1e9:{w}.1f}s" for p, w in (("correctness", 11), ("a", 9), ("b", 9)))
    print(f"  {name:18s}{cols}{(total or 0) / 1e9:9.1f}s{'' if total else ' (no task receipt)'}")
PY
fi

# --- what comes back: at most 8 files
cp "$work/manifest.json" "$work/inventory/inventory_main.csv" "$logdir/" 2>/dev/null || true
[ -d "$work/smoke/cell" ] && tar -czf "$logdir/smoke.tgz" -C "$work" smoke/cell
if [ -d "$run" ]; then tar -czf "$logdir/run-canary.tgz" -C "$work" run-canary; fi
if [ -f "$logdir/run-canary.tgz" ] && [ "$(wc -c <"$logdir/run-canary.tgz")" -gt 15000000 ]; then
	rm "$logdir/run-canary.tgz"
	tar -czf "$logdir/run-canary-noir.tgz" -C "$work" --exclude='*/ir/*' run-canary
	note "results: run-canary.tgz was over 15 MB: run-canary-noir.tgz leaves out ir/"
fi
if [ -d "$work/derived0" ] && [ -d "$work/derived1" ]; then
	tar -czf "$logdir/derived.tgz" -C "$work" derived0 derived1
fi
note "done in $(($(date +%s) - start))s; log and results in $logdir"
echo "--- summary"
cat "$summary"
[ "$rc" -eq 0 ]
