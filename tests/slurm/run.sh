#!/bin/sh
# tests/slurm/run.sh [BUILD_DIR]: caliber on a real Slurm. Starts a one-node
# cluster on this machine (tests/slurm/cluster.sh: munge, MariaDB, slurmdbd,
# slurmctld, slurmd; CPUs as the resource, no GPU), writes the job script
# of `caliber slurm` for the CPU test campaign (tests/data/campaign-cpu,
# all 8 tasks) in 4 shards, at most 2 at a time, submits it, waits for the
# array and the merge job, and checks that the merged run verifies and
# that its matrix is the serial run's, byte for byte. Prints the jobs'
# sacct lines, stops the daemons, and reports as one test line, then
# "N passed, N failed, N skipped" (.ci/run adds it up). Needs root and
# Debian's slurm-wlm, slurmdbd, munge and mariadb-server (scripts/deps.sh
# --ci); without them it is skipped, except where CALIBER_TESTS_NO_SKIP=1.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
PATH="$PATH:/usr/sbin:/sbin"   # the daemons live there; a non-login root shell may lack it
build=${1:-build/normal}
CALIBER="$root/$build/caliber"
D="$root/tests/data/campaign-cpu"
W="$root/tests/workers"
what="a Slurm job array of 4 CPU shards and its merge job: the merged run verifies and its matrix is the serial run's"

result() {
	if [ "$1" = ok ]; then
		echo "ok 1 - $what"; echo "1 passed, 0 failed, 0 skipped"; exit 0
	elif [ "$1" = skip ] && [ "${CALIBER_TESTS_NO_SKIP:-0}" != 1 ]; then
		echo "ok 1 - $what # SKIP $2"; echo "0 passed, 0 failed, 1 skipped"; exit 0
	fi
	echo "not ok 1 - $what${2:+ ($2)}"; echo "0 passed, 1 failed, 0 skipped"; exit 1
}

[ -x "$CALIBER" ] || result fail "no $CALIBER: build first"
[ "$(id -u)" -eq 0 ] || result skip "the daemons run as root"
for c in slurmctld slurmd slurmdbd sbatch sacct munged mariadbd; do
	command -v "$c" >/dev/null 2>&1 || result skip "no $c (scripts/deps.sh --ci installs Slurm)"
done
PY=""
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import pytest' >/dev/null 2>&1; then PY=$p; break; fi
done
[ -n "$PY" ] || result fail "no python3 with pytest"

T=$(mktemp -d "${TMPDIR:-/tmp}/caliber-slurm.XXXXXX")
chmod 711 "$T"   # munged (user munge) keeps its files below it
export SLURM_CONF="$T/cluster/slurm.conf"
cleanup() {
	sh "$root/tests/slurm/cluster.sh" stop "$T/cluster"
	chmod -R u+w "$T" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
cd "$T" || result fail "cannot enter $T"

# The frozen campaign (a canary first, which --selection all needs), and the
# serial run the merged one must equal.
case "$($CALIBER --version)" in *dirty*|*unknown*) DIRTY=--allow-dirty-harness ;; *) DIRTY= ;; esac
$CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null ||
	result fail "caliber pin refused the CPU test campaign"
run() {
	sel=$1; out=$2; shift 2
	TMPDIR=$T $CALIBER run --manifest frozen/cpu-test-$sel/manifest.json --task-matrix frozen/cpu-test-$sel/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root "$out" --backends "$root/tests/backends" \
		--python "$PY" $DIRTY --worker "python3 $W/replay.py $D" --quiet "$@"
}
{ $CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$root/tests/backends" >/dev/null &&
  run canary canary && $CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$root/tests/backends" --selection all \
	--canary-receipt canary/campaign.json >/dev/null && run all serial; } >log 2>&1 ||
	{ cat log; result fail "the serial run failed"; }
$CALIBER slurm --manifest frozen/cpu-test-all/manifest.json --task-matrix frozen/cpu-test-all/task-matrix.json \
	--build-root "$D/compiler" --corpus "$D/corpus" --output-root "$T/slurm/run" --shards 4 --parallel 2 \
	--resource cpu --backends "$root/tests/backends" --python "$PY" $DIRTY --worker "python3 $W/replay.py $D" \
	-o job.sh >/dev/null || result fail "caliber slurm failed"

sh "$root/tests/slurm/cluster.sh" start "$T/cluster" || result fail "the cluster did not start"
TMPDIR=$T sh job.sh >submit.out 2>&1 || { cat submit.out; result fail "sbatch refused the job"; }
array=$(sed -n 's/.*shards: job \([0-9]*\) .*/\1/p' submit.out)
merge=$(sed -n 's/.*merge: job \([0-9]*\) .*/\1/p' submit.out)
[ -n "$array" ] && [ -n "$merge" ] || { cat submit.out; result fail "no job ids"; }

# Wait for the merge job to end (it runs only after every shard succeeded).
state=""
n=0
while [ $n -lt 900 ]; do
	state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
	case "$state" in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED) break ;; esac
	sleep 0.2; n=$((n + 1))
done
# sacct reads slurmdbd, which may record the last job a moment later.
n=0
while [ $n -lt 50 ] && [ "$(sacct -n -X -j "$array,$merge" -o State 2>/dev/null | grep -c COMPLETED)" -lt 5 ]; do
	sleep 0.2; n=$((n + 1))
done
sacct -X -j "$array,$merge" -o JobID,JobName%24,Partition,AllocCPUS,State,ExitCode,Elapsed | sed 's/^/# /'
if [ "$state" != COMPLETED ]; then
	for f in "$T"/slurm/run.shards/slurm-*.out; do echo "# $f:"; sed 's/^/#   /' "$f"; done
	result fail "the merge job ended $state"
fi
$CALIBER verify "$T/slurm/run" >verify.out 2>&1 || { cat verify.out; result fail "the merged run does not verify"; }
cmp -s serial/matrix.csv "$T/slurm/run/matrix.csv" || result fail "the merged matrix is not the serial run's"
echo "# merged matrix.md:"
sed 's/^/# /' "$T/slurm/run/matrix.md"
result ok
