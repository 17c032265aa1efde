#!/bin/sh
# scripts/device/warmup.sh WORK [WORKLOADS...]: what parallel_warmup saves, on a
# host with two GPUs or more. Pins campaigns/demo-h200 (only WORKLOADS, all
# canary, when given) and runs its canary twice on GPU $DEVICE (default 0):
# without PARALLEL_WARMUP_GPUS, then with it naming GPU $WARMUP_GPU (default
# 1). Prints each run's wall time, its cell time by phase and its verdicts;
# the runs stay in WORK/without and WORK/with.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$1
shift
device=${DEVICE:-0}
warmup=${WARMUP_GPU:-1}
mkdir -p "$work"
sh "$root/scripts/device/pin.sh" "$root/campaigns/demo-h200/manifest.in.json" "$work/manifest.json" "$@"
for mode in without with; do
	rm -rf "${work:?}/$mode"
	if [ "$mode" = with ]; then
		export PARALLEL_WARMUP_GPUS="$warmup"
	else
		unset PARALLEL_WARMUP_GPUS
	fi
	set +e
	DEVICE=$device sh "$root/scripts/device/campaign.sh" "$work/manifest.json" canary "$work/$mode" >"$work/$mode.log" 2>&1
	rc=$?
	set -e
	echo "$mode warm-up (PARALLEL_WARMUP_GPUS=${PARALLEL_WARMUP_GPUS:-unset}): $(grep '^campaign canary:' "$work/$mode.log")"
	[ "$rc" -eq 0 ] || tail -20 "$work/$mode.log"
	python3 "$root/bench/campaign_figures.py" "$work/$mode/run-canary" | sed -n '2p;$p;/verdicts:/p'
done
# What the warm-ups had done when their request started, over every cell of
# the run with warm-up.
python3 - "$work/with/run-canary" <<'PY'
import collections
import glob
import json
import os
import sys

states = collections.Counter()
for path in glob.glob(os.path.join(sys.argv[1], "tasks", "*", "cells", "*", "parallel_warmup.json")):
    with open(path) as f:
        warmed = json.load(f)["warmed"]
    states["not warmed" if warmed is None else f"{warmed['state']}" + (
        f" exit {warmed['exit']}" if "exit" in warmed else "")] += 1
print("warm-ups found by their request:", ", ".join(f"{n} {s}" for s, n in sorted(states.items())) or "none")
PY
