#!/bin/sh
# examples/cpu/run.sh [OUT]: caliber's CPU example in one command (README.md
# beside this file): pin the manifest to this folder's stand-in compiler and
# corpus and to caliber itself, prepare the canary, run it with the
# stand-in worker on the stand-in device, and write the HTML report.
# Everything goes into OUT (default ./caliber-cpu-example, which must not
# exist yet). The caliber used is $CALIBER, else the one this folder
# belongs to (a checkout's ./caliber, an installed prefix's bin/caliber),
# else the caliber on PATH; the python, for the preflights (it needs
# pytest) and the worker, is $PYTHON, else the first python3 with pytest.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-caliber-cpu-example}

caliber=${CALIBER:-}
for c in "$here/../../caliber" "$here/../../../../bin/caliber"; do
	[ -n "$caliber" ] || { [ -x "$c" ] && caliber=$c; } || true
done
[ -n "$caliber" ] || caliber=$(command -v caliber) || { echo "run.sh: no caliber found (build it, or set CALIBER)" >&2; exit 1; }
python=${PYTHON:-}
for p in python3 /usr/bin/python3; do
	[ -n "$python" ] || { "$p" -c 'import pytest' >/dev/null 2>&1 && python=$p; } || true
done
[ -n "$python" ] || { echo "run.sh: no python3 with pytest (Debian: python3-pytest), or set PYTHON" >&2; exit 1; }
# A caliber built from a checkout with changes can only pin and run its
# harness unchecked, and says so in every receipt.
case "$("$caliber" --version)" in
*dirty*) dirty=--allow-dirty-harness ;;
*) dirty= ;;
esac

[ ! -e "$out" ] || { echo "run.sh: $out exists; give another OUT" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
set -x
"$caliber" pin "$here/manifest.in.json" -o "$out/manifest.json" --compiler "$here/compiler" --corpus "$here/corpus" $dirty
"$caliber" prepare "$out/manifest.json" --inventory-dir "$here/corpus" --backends "$here/backends" --output-root "$out/frozen"
"$caliber" run --manifest "$out/frozen/cpu-example-canary/manifest.json" \
	--task-matrix "$out/frozen/cpu-example-canary/task-matrix.json" --build-root "$here/compiler" \
	--corpus "$here/corpus" --output-root "$out/run" --backends "$here/backends" --python "$python" \
	--worker "$python $here/worker.py" $dirty
"$caliber" report "$out/run" -o "$out/report.html"
{ set +x; } 2>/dev/null
echo "report: $out/report.html"
