#!/bin/sh
# scripts/device/pin.sh TEMPLATE OUT [WORKLOADS...]: pin a campaign template on
# the GPU machine with caliber pin: sources.compiler is the installed Triton
# (the package folder `import triton` finds), the corpus caliber's ops/ (by
# the commit the checkout is at where the template pins it by commit and
# .git travelled, else by tree digest), caliber by the commit it was built
# from. With WORKLOADS, keep only those workloads and make them all canary
# (a small campaign for checks). device.name becomes the name nvidia-smi
# gives GPU $DEVICE (default 0) where it differs. The caliber used is
# $CALIBER, else the repository's ./caliber.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
template=$1 out=$2
shift 2
triton=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))')
caliber=${CALIBER:-$root/caliber}
"$caliber" pin "$template" -o "$out.tmp" --compiler "$triton" --corpus "$root/ops"
if [ $# -gt 0 ]; then
	python3 - "$out.tmp" "$@" <<'PY'
import json, sys
path, keep = sys.argv[1], sys.argv[2:]
m = json.load(open(path))
m["campaign"] += "-check"
m["workloads"] = [dict(w, canary=True) for w in m["workloads"] if w["id"] in keep]
json.dump(m, open(path, "w"), indent=2)
open(path, "a").write("\n")
PY
fi
# The manifest names the GPU it measures on (the device preflight refuses
# another): the template's, or whichever GPU ${DEVICE:-0} is, said so.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "${DEVICE:-0}" 2>/dev/null | head -1)
if [ -n "$gpu" ]; then
	python3 - "$out.tmp" "$gpu" <<'PY'
import json, sys
path, gpu = sys.argv[1], sys.argv[2]
m = json.load(open(path))
if m["device"].get("name") != gpu:
    print(f"pin: device.name {m['device'].get('name')!r} -> {gpu!r} (the GPU this machine has)")
    m["device"]["name"] = gpu
    json.dump(m, open(path, "w"), indent=2)
    open(path, "a").write("\n")
PY
fi
mv "$out.tmp" "$out"
echo "pinned: $out"
