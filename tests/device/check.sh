#!/bin/sh
# Device check (make device-check): everything on caliber's Python side that
# needs a GPU, as parallel jobs with one log each (longest first):
#   plugins-*      tests/device/test_*.py: ir_meta, autotune record/replay, timing and
#                  compat, the demo compiler against stock Triton
#   capture-ttgir  capture_ttgir.py: rewrites tests/data/ttgir from this GPU
#   bench-*        each op's benchmark test through every caliber plugin (quick timer),
#                  with the launch-index checks of smoke_bench.py
#   correctness-*  the corpus's correctness tests, one job per test file (all 32 ops)
# Logs go to $DEVICE_CHECK_LOGS (default tests/tmp/device-check); at most
# $DEVICE_CHECK_JOBS jobs (default 12) run at once, each stopped after
# $DEVICE_CHECK_TIMEOUT seconds (default 420). Ends with
# "N passed, N failed" over the jobs; exits non-zero if any failed.
set -u
cd "$(dirname "$0")/../.." || exit 1
root=$(pwd)
logs=${DEVICE_CHECK_LOGS:-$root/tests/tmp/device-check}
parallel=${DEVICE_CHECK_JOBS:-12}
rm -rf "$logs" && mkdir -p "$logs/cells" || exit 1
export PYTHONPATH="$root/python:$root/ops" PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1

{
	for f in tests/device/test_*.py; do
		n=$(basename "$f" .py)
		printf 'plugins-%s\tpython3 -m pytest -q -s -p no:cacheprovider %s\n' "${n#test_}" "$f"
	done
	printf 'capture-ttgir\tpython3 scripts/device/capture_ttgir.py\n'
	tail -n +2 ops/inventory_main.csv | cut -d, -f1 | while read -r op; do
		printf 'bench-%s\tpython3 scripts/device/smoke_bench.py %s %s/cells/%s\n' "$op" "$op" "$logs" "$op"
	done
	for f in ops/tests/test_*.py; do
		n=$(basename "$f" .py)
		printf 'correctness-%s\tcd ops && python3 -m pytest -q -p no:cacheprovider tests/%s.py\n' "${n#test_}" "$n"
	done
} >"$logs/jobs.tsv"

nvidia-smi -L
python3 scripts/device/run_jobs.py "$logs" "$parallel" <"$logs/jobs.tsv"
