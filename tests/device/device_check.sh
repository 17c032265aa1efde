#!/bin/sh
# make device-check: on a GPU machine with ./caliber built, the GPU tests of
# caliber's Python side (tests/device/check.sh) and a two-workload campaign of
# the demo compiler change through `caliber run` (softmax_rows: no converts to
# lose; matmul_bias_gelu: loses two). Ends with "N passed, N failed".
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${DEVICE_CHECK_WORK:-$root/tests/tmp/device-campaign}
rm -rf "$work" && mkdir -p "$work"
passed=0 failed=0
sh "$root/tests/device/check.sh"
if [ $? -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
if sh "$root/scripts/device/pin.sh" "$root/campaigns/demo-h200/manifest.in.json" "$work/manifest.json" \
	softmax_rows matmul_bias_gelu &&
   sh "$root/scripts/device/campaign.sh" "$work/manifest.json" canary "$work" --quiet &&
   "$root/caliber" verify "$work/run-canary" &&
   grep -q '^softmax_rows,softmax_rows,B,' "$work/run-canary/matrix.csv" &&
   grep -q '^matmul_bias_gelu,matmul_bias_gelu,[GCR],' "$work/run-canary/matrix.csv"; then
	echo "ok - two-workload campaign"; passed=$((passed + 1))
else
	echo "not ok - two-workload campaign"; failed=$((failed + 1))
fi
echo "device-check: $passed passed, $failed failed (check.sh counts its own jobs above)"
[ "$failed" -eq 0 ]
