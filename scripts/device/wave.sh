#!/bin/sh
# scripts/device/wave.sh STEP: one step of a wave's H200 runs, from the
# repository root of a checkout whose ./caliber was built from its HEAD and
# carried (with .carry/lib/libjansson.so.4 when the GPU machine lacks it), as
# a user runs caliber: relative paths, default options, outputs in the demo's
# folder. Results go to $OUT (at most 8 files). Steps, in order:
#
#   demo        ./caliber demo: the canary of the built-in corpus (8 tasks)
#   all         the 32 tasks, prepared from the demo's pinned manifest and
#               gated on its sealed canary, planned by the canary's times
#               (--history); --stop-after $STOP_AFTER (default 540) so that
#               it ends inside one call, sealed or resumable
#   demo+all    both in one call: all gets what the demo left of
#               $CALL_S (default 570) seconds
#   all-resume  continue a stopped `all` (same machine)
#   aa          the A/A campaign of the 32 tasks: the demo's template pinned
#               here (scripts/device/pin.sh), every cell compiling the
#               baseline's code (scripts/device/aa_manifest.py) at gain and
#               regression thresholds of +-$AA_GAIN (default 0.0025), all
#               workloads canary (or only $AA_WORKLOADS, space-separated:
#               the 8-task canary A/A when time is short); --stop-after
#               $STOP_AFTER (default 540);
#               its work folder is caliber-demo-aa/
#   aa-resume   continue a stopped `aa` (same machine, or one given its
#               results back in .carry/wave/run-aa.tgz)
#   flaggems    scripts/device/flaggems.sh with its own options (see there)
#
# The device's copy gets its history from .carry/repo.bundle (`git bundle
# create .carry/repo.bundle HEAD` here): the manifests pin caliber by
# commit. A copy without .git gets one; a copy whose .git is older (the
# device tool may bring one that lacks this HEAD) fetches the bundle into
# it, or the sources preflight finds the commit missing.
set -u
step=${1:?usage: scripts/device/wave.sh demo|all|demo+all|all-resume|aa|aa-resume|flaggems}
out=${OUT:-/tmp/wave-out}
mkdir -p "$out"
[ -f .carry/lib/libjansson.so.4 ] && export LD_LIBRARY_PATH="$PWD/.carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
if [ -f .carry/repo.bundle ]; then
	{ [ -d .git ] || git init -q .; } && git fetch -q .carry/repo.bundle HEAD && git reset -q --mixed FETCH_HEAD ||
		{ echo "wave: cannot take HEAD from .carry/repo.bundle"; exit 1; }
fi
echo "wave $step: $(./caliber --version); $(nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv,noheader)"
git status --porcelain --untracked-files=no | head -3
t0=$(date +%s)
echo "wave $step: in $PWD"
# A machine given back between calls loses the demo folder: the results a
# previous call brought back, carried again in .carry/wave/, restore it.
# The demo's folders are caliber-demo-<UTC time>; caliber-demo-aa/ (the aa
# step's) sorts after them and is never the demo's.
if ! ls -d caliber-demo-2* >/dev/null 2>&1 && ls .carry/wave/*.tgz >/dev/null 2>&1; then
	for f in .carry/wave/demo.tgz .carry/wave/run-all.tgz; do [ -f "$f" ] && tar -xzf "$f"; done
	echo "wave $step: restored $(ls -d caliber-demo-2* | tail -1) from .carry/wave"
fi
demo=$(ls -d caliber-demo-2* 2>/dev/null | tail -1)
triton=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))')

if [ "$step" = demo+all ]; then
	sh scripts/device/wave.sh demo || exit $?
	left=$((${CALL_S:-570} - ($(date +%s) - t0)))
	STOP_AFTER=$((left - 30)) exec sh scripts/device/wave.sh all
fi
case $step in
demo)
	./caliber demo >"$out/demo.txt" 2>&1
	rc=$?
	demo=$(ls -d caliber-demo-2* | tail -1)
	tail -25 "$out/demo.txt"
	tar -czf "$out/demo.tgz" "$demo"
	;;
all | all-resume)
	[ -n "$demo" ] || { echo "wave: no caliber-demo-* folder: run the demo step first"; exit 1; }
	if [ "$step" = all ]; then
		./caliber prepare "$demo/manifest.json" --inventory-dir ops --selection all \
			--canary-receipt "$demo/run-canary/campaign.json" --output-root "$demo/frozen" || exit 1
		set --
	else
		set -- --resume
	fi
	./caliber run "$@" --manifest "$demo/frozen/demo-h200-all/manifest.json" \
		--task-matrix "$demo/frozen/demo-h200-all/task-matrix.json" --build-root "$triton" --corpus ops \
		--output-root "$demo/run-all" --history "$demo/run-canary" --stop-after "${STOP_AFTER:-540}" >"$out/$step.txt" 2>&1
	rc=$?
	tail -12 "$out/$step.txt"
	[ -f "$demo/run-all/SHA256SUMS" ] && ./caliber report "$demo/run-all" >"$out/report-all.txt" 2>&1 &&
		head -30 "$out/report-all.txt"
	tar -czf "$out/run-all.tgz" "$demo/run-all" "$demo/frozen"
	;;
aa | aa-resume)
	w=caliber-demo-aa
	if [ "$step" = aa ]; then
		mkdir -p "$w" &&
			sh scripts/device/pin.sh campaigns/demo-h200/manifest.in.json "$w/pinned.json" ${AA_WORKLOADS:-} &&
			python3 scripts/device/aa_manifest.py "$w/pinned.json" "$w/aa.json" "${AA_GAIN:-0.0025}" &&
			./caliber prepare "$w/aa.json" --inventory-dir ops --selection canary --output-root "$w/frozen" || exit 1
		set --
	else
		[ -d "$w/run-aa" ] || { [ -f .carry/wave/run-aa.tgz ] && tar -xzf .carry/wave/run-aa.tgz; } ||
			{ echo "wave: no $w/run-aa to resume"; exit 1; }
		set -- --resume
	fi
	frozen=$(ls -d "$w"/frozen/*-aa-canary)
	./caliber run "$@" --manifest "$frozen/manifest.json" --task-matrix "$frozen/task-matrix.json" \
		--build-root "$triton" --corpus ops --output-root "$w/run-aa" --stop-after "${STOP_AFTER:-540}" >"$out/$step.txt" 2>&1
	rc=$?
	grep "^preflight: " "$out/$step.txt" | head -20
	tail -12 "$out/$step.txt"
	[ -f "$w/run-aa/SHA256SUMS" ] && ./caliber report "$w/run-aa" >"$out/report-aa.txt" 2>&1 &&
		head -30 "$out/report-aa.txt"
	tar -czf "$out/run-aa.tgz" "$w"
	;;
flaggems)
	sh scripts/device/flaggems.sh /tmp/fgw "$out"
	rc=$?
	;;
*)
	echo "wave: unknown step $step"; exit 2 ;;
esac
echo "wave $step: exit $rc after $(($(date +%s) - t0)) s"
exit $rc
