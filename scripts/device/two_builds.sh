#!/bin/sh
# scripts/device/two_builds.sh WORK [OUT]: on the GPU machine, the two builds
# of campaigns/two-builds-h200/ and its pinned manifest.
#
# The stock build is the installed Triton (the package folder `import
# triton` finds). The patched build is a copy of that folder in
# WORK/triton-patched/triton with the demo change of examples/demo-compiler
# applied to its source instead of through a hook: the NVIDIA backend's
# make_ttgir (third_party/nvidia/backend/compiler.py in Triton's repository,
# backends/nvidia/compiler.py in the installed package) adds
# passes.ttgpuir.add_remove_layout_conversions(pm) three times in Triton
# 3.6: after plan_cta, after accelerate_matmul, and after tma_lowering
# before reduce_data_duplication. The copy keeps the first and has the 2nd
# and 3rd replaced by a comment line (so no line moves). Anything else (a
# Triton other than 3.6, a make_ttgir that adds the pass another number of
# times) is refused rather than patched.
#
# Then the copy is checked to import as itself with one
# add_remove_layout_conversions left in make_ttgir, and
# campaigns/two-builds-h200/manifest.in.json is pinned into OUT (default
# campaigns/two-builds-h200/manifest.json) by caliber pin, as the README's
# "Measure your own compiler change" does: --compiler the stock build (also
# the candidate's), --cell patched= the copy (the control follows it),
# --corpus caliber's ops/. Run the campaign with scripts/device/campaign.sh OUT
# canary WORK2 (its --build-root is the stock install, sources.compiler's).
# The caliber used is $CALIBER, else the repository's ./caliber.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:?usage: scripts/device/two_builds.sh WORK [OUT]}
out=${2:-$root/campaigns/two-builds-h200/manifest.json}
stock=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))')
version=$(python3 -c 'import triton; print(triton.__version__)')
case $version in
3.6.*) ;;
*) echo "two_builds: the installed Triton is $version; the patch is written for 3.6's make_ttgir" >&2; exit 1 ;;
esac
mkdir -p "$work"
work=$(cd "$work" && pwd)
patched=$work/triton-patched/triton
if [ -e "$work/triton-patched" ]; then
	echo "two_builds: $work/triton-patched exists; remove it to make the copy again" >&2
	exit 1
fi
mkdir "$work/triton-patched"
cp -a "$stock" "$patched"
find "$patched" -name __pycache__ -type d -prune -exec rm -rf {} +

python3 - "$patched/backends/nvidia/compiler.py" <<'PY'
import sys

path = sys.argv[1]
call = "passes.ttgpuir.add_remove_layout_conversions(pm)"
with open(path) as f:
    lines = f.read().split("\n")
defs = [i for i, line in enumerate(lines) if line.strip().startswith("def make_ttgir(")]
if len(defs) != 1:
    sys.exit(f"two_builds: {path} defines make_ttgir {len(defs)} times, expected once")
start = defs[0]
indent = len(lines[start]) - len(lines[start].lstrip())
end = next((i for i in range(start + 1, len(lines))
            if lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) <= indent), len(lines))
runs = [i for i in range(start, end) if lines[i].strip() == call]
if len(runs) != 3:
    sys.exit(f"two_builds: make_ttgir in {path} adds RemoveLayoutConversions {len(runs)} times, expected 3 (Triton 3.6)")
for run, i in enumerate(runs[1:], start=2):
    pad = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = f"{pad}# caliber two-builds: RemoveLayoutConversions run {run} removed (the demo change, in the source)"
with open(path, "w") as f:
    f.write("\n".join(lines))
print(f"two_builds: {path}: runs 2 and 3 removed (lines {runs[1] + 1} and {runs[2] + 1})")
PY

PYTHONPATH="$work/triton-patched" PYTHONDONTWRITEBYTECODE=1 python3 - "$patched" <<'PY'
import inspect
import os
import sys

import triton
from triton.backends.nvidia import compiler

if os.path.dirname(os.path.abspath(triton.__file__)) != sys.argv[1]:
    sys.exit(f"two_builds: the copy does not import as itself: triton is {triton.__file__}")
n = inspect.getsource(compiler.CUDABackend.make_ttgir).count("passes.ttgpuir.add_remove_layout_conversions(pm)")
if n != 1:
    sys.exit(f"two_builds: the copy's make_ttgir adds RemoveLayoutConversions {n} times, expected 1")
PY

"${CALIBER:-$root/caliber}" pin "$root/campaigns/two-builds-h200/manifest.in.json" -o "$out" \
	--compiler "$stock" --cell patched="$patched" --corpus "$root/ops"
echo "two_builds: stock $stock (Triton $version), patched $patched; pinned $out"
