#!/bin/sh
# scripts/device/evidence.sh WORK SECONDS STEP...: on the GPU machine, the
# evidence runs of the demo campaign, each a `caliber run` from the
# repository root with default options, into WORK/run-<step>, stopping
# (exit 4, resumable) before anything that would end more than SECONDS from
# now. Steps, in the order given:
#   canary  the demo manifest's canary selection
#   all     --selection all, gated by WORK/run-canary
#   aa      the A/A campaign of every workload (scripts/device/aa_manifest.py,
#           thresholds +-AA_GAIN, default 0.01; timer.max_sessions
#           AA_MAX_SESSIONS when set)
# A step whose run is sealed is skipped; one left unsealed by an earlier
# call is resumed. Each run ends packed as WORK/run-<step>.tgz, with its
# log in WORK/<step>.log; its A/A line is printed.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$1 seconds=$2
shift 2
cd "$root"
deadline=$(date -u -d "@$(($(date +%s) + seconds))" +%Y-%m-%dT%H:%M:%SZ)
mkdir -p "$work"
[ -f "$work/demo.json" ] || scripts/device/pin.sh campaigns/demo-h200/manifest.in.json "$work/demo.json"
[ -f "$work/aa.json" ] || python3 scripts/device/aa_manifest.py "$work/demo.json" "$work/aa.json" "${AA_GAIN:-0.01}" \
	${AA_MAX_SESSIONS:+"$AA_MAX_SESSIONS"}
triton=$(python3 -c 'import os, triton; print(os.path.dirname(triton.__file__))')
rc=0
for step in "$@"; do
	run=$work/run-$step
	[ -f "$run/SHA256SUMS" ] && { echo "evidence: $step: sealed already"; continue; }
	case $step in
	canary) manifest=$work/demo.json sel=canary; canary= ;;
	all) manifest=$work/demo.json sel=all; canary="--canary-receipt $work/run-canary/campaign.json" ;;
	aa) manifest=$work/aa.json sel=canary; canary= ;;
	*) echo "evidence: unknown step $step" >&2; exit 2 ;;
	esac
	frozen=$work/frozen-$step
	# shellcheck disable=SC2086
	[ -d "$frozen" ] || ./caliber prepare "$manifest" --inventory-dir ops --selection $sel $canary \
		--output-root "$frozen" >/dev/null
	f=$(ls -d "$frozen"/*-$sel)
	resume=
	[ -d "$run" ] && resume=--resume
	s=$(date +%s)
	set +e
	# shellcheck disable=SC2086
	./caliber run --manifest "$f/manifest.json" --task-matrix "$f/task-matrix.json" --build-root "$triton" \
		--corpus ops --output-root "$run" --deadline "$deadline" $resume >>"$work/$step.log" 2>&1
	rc=$?
	set -e
	echo "evidence: $step: exit $rc after $(($(date +%s) - s)) s"
	tail -3 "$work/$step.log"
	[ $rc -ne 0 ] || ./caliber report "$run" | grep "^A/A: " || true
	tar -C "$work" -czf "$work/run-$step.tgz" "run-$step"
	[ $rc -eq 0 ] || break
done
exit $rc
