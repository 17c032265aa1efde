#!/bin/sh
# tests/device/pin.sh TEMPLATE OUT [WORKLOADS...]: fill a campaign template
# on the GPU machine: the installed Triton by tree digest (@TRITON_TREE@),
# the corpus by the commit the checkout is at (@CORPUS_COMMIT@), caliber by
# the commit it was built from (@HARNESS_COMMIT@). With WORKLOADS, keep only
# those workloads and make them all canary (a small campaign for checks).
# The caliber used is $CALIBER, else the repository's ./caliber.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
template=$1 out=$2
shift 2
triton=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))')
caliber=${CALIBER:-$root/caliber}
tree=$("$caliber" digest "$triton")
harness=$("$caliber" --version | sed 's/.*(commit \([0-9a-f]\{40\}\).*/\1/')
corpus=$(git -C "$root" rev-parse HEAD)
sed -e "s/@TRITON_TREE@/$tree/" -e "s/@CORPUS_COMMIT@/$corpus/" -e "s/@HARNESS_COMMIT@/$harness/" "$template" >"$out.tmp"
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
echo "pinned: triton $triton tree $tree, corpus $corpus, harness $harness"
