#!/bin/sh
# scripts/device/own_change.sh WORK [OUT]: on the GPU machine, from the checkout
# root (./caliber built, .git carried), the README's "Measure your own
# compiler change" by hand with the two-build campaign: the second build is
# the patched copy of the installed Triton that scripts/device/two_builds.sh
# makes (WORK/triton-patched/triton); then exactly the README's three
# commands, pin, prepare and run, with relative paths where the README has
# them. Prints the verdicts against campaigns/demo-h200's canary (the same
# eight tasks: they must be the same verdicts) and leaves in OUT (default
# $OUT, else WORK/out) run-canary.tgz (the sealed run, to commit under
# campaigns/two-builds-h200/runs/canary), the pinned manifest and the log.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
work=${1:?usage: scripts/device/own_change.sh WORK [OUT]}
out=${2:-${OUT:-$work/out}}
mkdir -p "$work" "$out"
log=$out/own_change.log
stock=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))')
sh scripts/device/two_builds.sh "$work" "$work/two_builds.json" >"$log" 2>&1 || { cat "$log"; exit 1; }
mine=$work/triton-patched/triton
set -x
./caliber pin campaigns/two-builds-h200/manifest.in.json -o "$work/mine.json" \
	--compiler "$stock" --cell patched="$mine" --corpus ops >>"$log" 2>&1
./caliber prepare "$work/mine.json" --inventory-dir ops --output-root "$work/frozen" >>"$log" 2>&1
s=$(date +%s)
rc=0
./caliber run --manifest "$work/frozen/two-builds-h200-canary/manifest.json" \
	--task-matrix "$work/frozen/two-builds-h200-canary/task-matrix.json" \
	--build-root "$stock" --corpus ops --output-root "$work/runs/canary" >>"$log" 2>&1 || rc=$?
{ set +x; } 2>/dev/null
echo "run: exit $rc after $(($(date +%s) - s)) s" | tee -a "$log"
grep -E '^preflight: |^verdicts: |^report: |^caliber: ' "$log" || true
cp "$work/mine.json" "$out/"
if [ -f "$work/runs/canary/campaign.json" ]; then
	tar -czf "$out/run-canary.tgz" -C "$work/runs" canary
	cut -d, -f1,3 campaigns/demo-h200/runs/canary/matrix.csv | tr -d '\r' >"$work/want"
	cut -d, -f1,3 "$work/runs/canary/matrix.csv" | tr -d '\r' >"$work/got"
	if cmp -s "$work/want" "$work/got"; then
		echo "verdicts: the same as campaigns/demo-h200/runs/canary" | tee -a "$log"
	else
		echo "verdicts DIFFER from campaigns/demo-h200/runs/canary:" | tee -a "$log"
		diff "$work/want" "$work/got" | tee -a "$log" || true
		rc=1
	fi
fi
exit $rc
