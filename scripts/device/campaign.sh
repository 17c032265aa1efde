#!/bin/sh
# scripts/device/campaign.sh MANIFEST SELECTION WORK [RUN OPTIONS...]: on the GPU
# machine, prepare MANIFEST for SELECTION (for "all", with the canary receipt
# WORK/run-canary/campaign.json) and run it into WORK/run-SELECTION against
# the installed Triton and caliber's ops/ corpus. The device is $DEVICE (a
# GPU index or UUID, default 0). Prints the preflight lines, the verdicts and
# the wall time.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
manifest=$1 sel=$2 work=$3
shift 3
triton=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))')
mkdir -p "$work"
canary=
[ "$sel" = all ] && canary="--canary-receipt $work/run-canary/campaign.json"
# shellcheck disable=SC2086
"$root/caliber" prepare "$manifest" --inventory-dir "$root/ops" --selection "$sel" $canary \
	--output-root "$work/frozen"
frozen=$(ls -d "$work"/frozen/*-"$sel")
s=$(date +%s)
set +e
"$root/caliber" run --manifest "$frozen/manifest.json" --task-matrix "$frozen/task-matrix.json" \
	--build-root "$triton" --corpus "$root/ops" --output-root "$work/run-$sel" --device "${DEVICE:-0}" "$@"
rc=$?
set -e
echo "campaign $sel: exit $rc after $(($(date +%s) - s)) s"
[ -f "$work/run-$sel/matrix.md" ] && cat "$work/run-$sel/matrix.md"
exit $rc
