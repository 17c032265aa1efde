#!/bin/sh
# scripts/device/pin.sh TEMPLATE OUT [WORKLOADS...]: pin a campaign template on
# the GPU machine with caliber pin: sources.compiler is the installed Triton
# (the package folder `import triton` finds), the corpus caliber's ops/ (by
# the commit the checkout is at where the template pins it by commit and
# .git travelled, else by tree digest), caliber by the commit it was built
# from. With WORKLOADS, keep only those workloads and make them all canary
# (a small campaign for checks). The caliber used is $CALIBER, else the
# repository's ./caliber.
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
mv "$out.tmp" "$out"
echo "pinned: $out"
