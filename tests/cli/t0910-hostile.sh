#!/bin/sh
# caliber run against hostile workers (tests/workers/, cellplay.py): each
# mode breaks the rules of a worker in one cell of one task, and caliber
# must survive it: that cell a harness failure (or a timeout), its task X,
# every other task as in a run with well-behaved workers, the run sealed
# and verified; and a run killed right after that task resumes to the same
# matrix and seal. The last case counts the modes that survived ("# N
# hostile-worker modes survived"). Then what a kill leaves: links, the
# worker, the scratch folder, temporary files, half-built roots.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

# The verdicts of the "all" selection with well-behaved workers (a run of
# replay.py into ref, once per case), but for the task a case spoils
# (argument), which gets the verdict the case says.
hostile='
want_but() {
	test -f ref.csv || { run all ref --quiet --worker "python3 $W/replay.py $D" >/dev/null && verdicts ref >ref.csv; } &&
	sed "s/^$1,.*/$1,$2/" ref.csv
}
# The cell receipt at $1 has outcome $2 with detail matching $3.
cell_is() {
	grep -q "\"outcome\": \"$2\"" "$1" && grep -q -- "$3" "$1" ||
		{ echo "$1 is not $2 \"$3\":"; grep "\"outcome\"\|\"detail\"" "$1"; return 1; }
}
# survives MODE "ARGS" TASK VERDICT,CODE CELL OUTCOME DETAIL: the mode
# tests/workers/MODE.py (with ARGS after DATA) spoiling TASK of the "all"
# selection, in two runs. Into out-MODE: TASK gets that verdict, every other
# task its usual one, the receipt of TASK cell CELL has that outcome with
# detail matching DETAIL, and the seal verifies (the run exits 5 when that
# verdict is X, as every run with an X task does). Into cut-MODE, caliber
# killed right after TASK (--then-kill: caliber dies by SIGKILL): --resume with a well-behaved
# worker gives the same matrix and a seal that verifies. The mode is then
# counted among the survivors (a file beside the cases). SURVIVE_TAG, when
# set, is added to MODE in those names (the same mode confined and not),
# and CONFINE_OPTS (default --no-confinement: the modes above test what
# holds without confinement, which would refuse some of them) to the
# options of every run.
# The runs use persistent workers: with a process per request (the default)
# the --then-kill cut of the stand-ins does not stop caliber where these
# cases expect it (the stand-ins are reworked for it on branch merge-confine).
survives() {
	mode=$1; args=$2; task=$3; verdict=$4; cell=$5; outcome=$6; detail=$7; name=$mode${SURVIVE_TAG-}
	test -d frozen/cpu-test-all || make_all
	RUN_WRAP="timeout 300" && export RUN_WRAP &&
	case $verdict in X,*) runs=run_x ;; *) runs=run ;; esac &&
	$runs all out-$name --quiet ${SURVIVE_OPTS:---workers persistent} ${CONFINE_OPTS---no-confinement} --worker "python3 $W/$mode.py $D $args" >/dev/null 2>&1 &&
	want_but $task $verdict >want && verdicts out-$name >got && cmp want got &&
	cell_is out-$name/tasks/$task/cells/$cell/cell.json "$outcome" "$detail" &&
	$CALIBER verify out-$name >/dev/null &&
	set +e && (run_bg all cut-$name --quiet ${SURVIVE_OPTS:---workers persistent} ${CONFINE_OPTS---no-confinement} --worker "python3 $W/$mode.py $D $args --then-kill") \
		>/dev/null 2>&1; rc=$?; set -e &&
	test $rc -eq 137 && test -f cut-$name/tasks/$task/task.json && test ! -e cut-$name/SHA256SUMS &&
	$runs all cut-$name --resume --quiet ${SURVIVE_OPTS:---workers persistent} ${CONFINE_OPTS---no-confinement} --worker "python3 $W/replay.py $D" >/dev/null 2>&1 &&
	verdicts cut-$name >got && cmp want got && $CALIBER verify cut-$name >/dev/null &&
	unset RUN_WRAP && touch "$(dirname "$T")/survived.$name"
}
'
export hostile

test_expect_success 'a worker that never replies and runs on is a timeout at timeout_s' '
	eval "$setup$hostile" &&
	survives hang "slowpoke" slowpoke X,timeout a-candidate timeout "no reply within 3 s; process group killed"
'

test_expect_success 'a worker that closes stdout, stderr and its reply fd and runs on is a timeout at timeout_s' '
	eval "$setup$hostile" &&
	survives closefds "slowpoke" slowpoke X,timeout a-candidate timeout "no reply within 3 s; process group killed"
'

test_expect_success 'an extra reply in the same write is a harness failure of that cell, never the next answer' '
	eval "$setup$hostile" &&
	survives extrareply gain gain X,harness-failure a-candidate error \
		"more than one reply to request .gain/a/candidate/2.; process group killed"
'

test_expect_success 'a stale reply (an extra one that comes later) fails the request it is read for' '
	eval "$setup$hostile" &&
	# only a worker that serves more than one request can send a reply late
	# enough to be read for the next: persistent workers (by default each
	# request has a process of its own, and a late reply is never read)
	SURVIVE_OPTS="--workers persistent" &&
	survives stalereply gain gain X,harness-failure a-candidate.s2 error \
		"a reply to another request (id .gain/a/candidate/2., this request .gain/a/candidate/3.): a stale, extra or forged reply" &&
	grep -q "\"outcome\": \"passed\"" out-stalereply/tasks/gain/cells/a-candidate/cell.json &&
	unset SURVIVE_OPTS
'

test_expect_success 'a reply that echoes another request id is a harness failure; the next request gets a fresh worker' '
	eval "$setup$hostile" &&
	survives wrongid gain gain X,harness-failure a-candidate error \
		"a reply to another request (id .gain/a/candidate/20., this request .gain/a/candidate/2.)" &&
	grep -q "\"fresh\": true" out-wrongid/tasks/same/cells/correctness-candidate/cell.json
'

test_expect_success 'a reply that echoes the request id under another task is a harness failure of that cell' '
	eval "$setup$hostile" &&
	survives wrongtask gain gain X,harness-failure a-candidate error \
		"a reply to request .gain/a/candidate/2. whose task is not the request.s: a forged reply: .*gain0"
'

test_expect_success 'a reply without the request id is a harness failure' '
	eval "$setup$hostile" &&
	survives noid gain gain X,harness-failure a-candidate error "a reply without the request.s id .gain/a/candidate/2."
'

test_expect_success 'a reply line that never ends is cut at 1 MiB: a harness failure, not a timeout' '
	eval "$setup$hostile" &&
	survives endless gain gain X,harness-failure a-candidate error \
		"a reply line longer than 1048576 bytes (request .gain/a/candidate/2.); process group killed"
'

test_expect_success 'a worker that exits halfway through its reply is a crash of that cell, the half never read as an answer' '
	eval "$setup$hostile" &&
	survives midreply gain gain X,harness-failure a-candidate crashed \
		"worker exited with status 0 in the middle of its reply ([1-9][0-9]* bytes, no newline)"
'

test_expect_success 'a worker that floods stdout fills worker.log up to 64 MiB, which says where it was cut' '
	eval "$setup$hostile" &&
	survives flood "gain 80" gain G,stable-gain a-candidate passed "pytest exit 0" &&
	log=out-flood/tasks/gain/cells/a-candidate/worker.log &&
	test "$(wc -c <"$log")" -le $((64 * 1024 * 1024 + 64)) &&
	test "$(tail -n 1 "$log")" = "caliber: output cut at 67108864 bytes" &&
	grep -q "\"cut_bytes\": [1-9]" out-flood/tasks/gain/cells/a-candidate/cell.json
'

test_expect_success 'a symlink and a FIFO left in a cell are removed and named there: the cell is X, the run seals' '
	eval "$setup$hostile" &&
	survives plantlink gain gain X,harness-failure a-candidate error \
		"the worker left what a seal cannot hold: ir/planted: a symlink to ./etc/passwd., removed" &&
	c=out-plantlink/tasks/gain/cells/a-candidate &&
	grep -q "\"planted.fifo: a FIFO, removed\"" $c/cell.json &&
	grep -q "\"not-utf8-\\\\\\\\xff: a symlink to .planted.fifo., removed\"" $c/cell.json &&
	test ! -e $c/ir/planted && test ! -e $c/planted.fifo
'

test_expect_success 'a link a worker plants at the worker.log of its next cell is removed before that cell starts: it is X, the file linked to untouched' '
	eval "$setup$hostile" && echo precious >victim &&
	survives plantnext "gain $PWD/victim" gain X,harness-failure b-candidate error \
		"the cell folder held what its worker did not leave: worker.log: a symlink to .$PWD/victim., removed before the cell started" &&
	test "$(cat victim)" = precious &&
	grep -q "\"outcome\": \"passed\"" out-plantnext/tasks/gain/cells/a-candidate/cell.json &&
	test -f out-plantnext/tasks/gain/cells/b-candidate/worker.log && test ! -L out-plantnext/tasks/gain/cells/b-candidate/worker.log
'

test_expect_success 'a symlink and a FIFO left outside every cell are removed before the seal and recorded in run.json' '
	eval "$setup$hostile" &&
	survives plantroot gain gain G,stable-gain a-candidate passed "pytest exit 0" &&
	grep -q "\"planted-root: a symlink to ./etc/passwd., removed\"" out-plantroot/run.json &&
	grep -q "\"planted-root.fifo: a FIFO, removed\"" out-plantroot/run.json &&
	grep -q "\"planted-root: a symlink to ./etc/passwd., removed\"" cut-plantroot/run.json &&
	test ! -e out-plantroot/planted-root && test ! -e out-plantroot/planted-root.fifo
'

# alive PID: the process runs (a zombie nobody has reaped counts as gone).
alive='
alive() {
	if [ -r /proc/$1/stat ]; then ! sed "s/.*) //" /proc/$1/stat | grep -q "^Z"; else kill -0 "$1" 2>/dev/null; fi
}
'
export alive

test_expect_success 'a worker that exits leaving a child on its pipes is a crash at once, not a timeout; the child goes with it' '
	eval "$setup$hostile$alive" &&
	survives forkchild gain gain X,harness-failure a-candidate crashed "worker exited with status 0 without replying" &&
	for run in out cut; do
		pid=$(cat $run-forkchild/tasks/gain/cells/a-candidate/forkchild.pid) && test -n "$pid" &&
		if alive $pid; then kill -9 $pid; echo "the child $pid of the $run run outlived its worker"; exit 1; fi
	done &&
	grep -q "\"timed_out\": false" out-forkchild/tasks/gain/cells/a-candidate/cell.json
'

test_expect_success 'a link and a FIFO left by a worker caliber died under are tidied by --resume, which seals' '
	eval "$setup$hostile" && make_all &&
	set +e; (run_bg all out --worker "python3 $W/plantlink.py $D gain kill" --quiet) >/dev/null 2>&1; set -e &&
	test -L out/tasks/gain/cells/a-candidate/ir/planted && test ! -e out/SHA256SUMS &&
	run all out --worker "python3 $W/replay.py $D" --resume >stdout &&
	grep -qx "resume: tasks/gain/cells/a-candidate/ir/planted: a symlink to '"'"'/etc/passwd'"'"', removed" stdout &&
	grep -qx "resume: tasks/gain/cells/a-candidate/planted.fifo: a FIFO, removed" stdout &&
	grep -q "tasks/gain/cells/a-candidate/planted.fifo: a FIFO, removed" out/run.json &&
	want_but gain G,stable-gain >want && verdicts out >got && cmp want got &&
	$CALIBER verify out >/dev/null
'

test_expect_success 'a worker busy when caliber is killed dies with it; --resume removes its scratch folder and seals' '
	eval "$setup$hostile$alive" && make_frozen &&
	# The baseline kills caliber at its first request (gain, correctness), then sleeps an hour in it.
	set +e; (run_bg canary r --worker "python3 $W/kill_runner.py $D 1 gain 3600" --quiet) >/dev/null 2>&1; set -e &&
	pid=$(cat r/tasks/gain/cells/correctness-off/kill_runner.pid) &&
	test -n "$pid" && n=0 &&
	while alive $pid && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done &&
	if alive $pid; then kill -9 $pid; echo "worker $pid outlived caliber"; exit 1; fi &&
	scratch=$(ls -d "$T"/caliber-run.*) && test -d "$scratch" &&
	run canary r --worker "python3 $W/replay.py $D" --resume >stdout &&
	grep -qx "resume: $scratch: the scratch folder of an earlier caliber, removed" stdout &&
	test -z "$(ls -d "$T"/caliber-run.* 2>/dev/null)" &&
	grep -q "\"scratch\": \"$T/caliber-run\." r/run.json &&
	$CALIBER verify r >/dev/null
'

test_expect_success 'temporary files of a kill during the final writes are removed by --resume, never sealed' '
	eval "$setup$hostile" && make_frozen &&
	# killed after the last task, before campaign.json, matrix and seal: a
	# persistent baseline worker sees its stdin end only then (kill_runner 0)
	set +e; (run_bg canary r --worker "python3 $W/kill_runner.py $D 0" --quiet --workers persistent) >/dev/null 2>&1; set -e &&
	test -f r/tasks/wrong/task.json && test ! -e r/campaign.json &&
	echo partial >r/matrix.md.tmp.Ab12Cd && echo partial >r/SHA256SUMS.tmp.zZ9yY8 &&
	echo partial >r/tasks/gain/task.json.tmp.q1w2e3 &&
	run canary r --worker "python3 $W/replay.py $D" --resume >stdout &&
	grep -qx "resume: matrix.md.tmp.Ab12Cd: a temporary file of an interrupted write, removed" stdout &&
	grep -qx "resume: SHA256SUMS.tmp.zZ9yY8: a temporary file of an interrupted write, removed" stdout &&
	grep -qx "resume: tasks/gain/task.json.tmp.q1w2e3: a temporary file of an interrupted write, removed" stdout &&
	! grep -q "\.tmp\." r/SHA256SUMS && test -z "$(find r -name "*.tmp.*")" &&
	$CALIBER verify r >/dev/null
'

test_expect_success 'a half-built run root a killed caliber left beside the root goes; one a living caliber holds stays' '
	eval "$setup$hostile" && make_frozen &&
	mkdir out.tmp.Ab12Cd out.tmp.Zz99Yy && echo partial >out.tmp.Ab12Cd/manifest.json &&
	{ $PY -c "import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(fd, fcntl.LOCK_EX); open(sys.argv[2], \"w\").close(); time.sleep(60)" \
		out.tmp.Zz99Yy locked & } &&
	holder=$! && n=0 && while [ ! -e locked ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done &&
	run canary out --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	test ! -e out.tmp.Ab12Cd && test -d out.tmp.Zz99Yy &&
	kill $holder && $CALIBER verify out >/dev/null
'

# The Landlock ABI this kernel offers (0: none), asked as caliber asks it
# (landlock_create_ruleset(NULL, 0, VERSION), system call 444 on every
# architecture), and whether a process here can make a mount namespace (as
# root, or inside a user namespace of its own) and remount in it: the
# attacks below run confined in each mode the machine has.
landlock_abi=$($PY -c 'import ctypes; print(max(0, ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1)))' \
	2>/dev/null || echo 0)
if unshare -m sh -c 'mount --make-rprivate / && mount -o remount,bind,ro /' 2>/dev/null ||
	unshare -U -m sh -c 'mount --make-rprivate / && mount -o remount,bind,ro /' 2>/dev/null; then
	mount_ns=1
else
	mount_ns=0
fi
export landlock_abi mount_ns

test_expect_success 'a run says how its workers are confined: the preflight line, run.json and the report header' '
	eval "$setup" && make_frozen &&
	run canary out --worker "python3 $W/replay.py $D" >stdout &&
	if [ "$landlock_abi" -gt 0 ]; then how="confined (landlock ABI $landlock_abi)" mode=landlock
	elif [ "$mount_ns" = 1 ]; then how="confined (mount namespace)" mode=namespace
	else how="not confined: this kernel has no Landlock (landlock_create_ruleset: not built in), and no mount namespace here" mode=off; fi &&
	grep -qF "preflight: confinement: ok (workers: $how" stdout &&
	grep -qF "\"workers\": \"$how" out/run.json && grep -q "\"landlock_abi\": $landlock_abi" out/run.json &&
	grep -q "\"confinement\": \"$mode\"" out/run.json &&
	$CALIBER report out >report && grep -qF "workers: $how" report &&
	run canary out2 --worker "python3 $W/replay.py $D" --no-confinement >stdout &&
	grep -qx "preflight: confinement: ok (workers: not confined: --no-confinement)" stdout &&
	grep -q "\"workers\": \"not confined: --no-confinement\"" out2/run.json &&
	grep -q "\"confinement\": \"off\"" out2/run.json &&
	$CALIBER report out2 >report && grep -qx "workers: not confined: --no-confinement" report &&
	run canary out3 --worker "python3 $W/replay.py $D" --confinement off >stdout &&
	grep -qx "preflight: confinement: ok (workers: not confined: --no-confinement)" stdout
'

if [ "$mount_ns" = 1 ]; then
	test_expect_success '--confinement namespace: the preflight line, run.json and the report header say "mount namespace"' '
		eval "$setup" && make_frozen &&
		run canary out --worker "python3 $W/replay.py $D" --confinement namespace --require-confinement >stdout &&
		grep -qx "preflight: confinement: ok (workers: confined (mount namespace))" stdout &&
		grep -q "\"workers\": \"confined (mount namespace)\"" out/run.json &&
		grep -q "\"confinement\": \"namespace\"" out/run.json && grep -q "\"landlock_abi\": 0" out/run.json &&
		$CALIBER report out >report && grep -qx "workers: confined (mount namespace)" report &&
		$CALIBER verify out >/dev/null
	'
else
	test_skip '--confinement namespace: the preflight line, run.json and the report header say "mount namespace"' \
		"no mount namespace can be made here (unshare -m, unshare -U -m)"
fi

test_expect_success '--require-confinement refuses a run whose workers would not be confined: exit 3, nothing written' '
	eval "$setup" && make_frozen &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --no-confinement --require-confinement >stdout 2>stderr
	rc=$?; set -e; test $rc -eq 3 &&
	grep -qx "preflight: confinement: FAILED: workers: not confined: --no-confinement, and --require-confinement refuses an unconfined run" stdout &&
	grep -qx "caliber: run: preflight refused the batch: 1 check failed (confinement); nothing was written" stderr &&
	test ! -e out
'

test_expect_success '--confinement takes auto, landlock, namespace or off, and off only as --no-confinement says it' '
	eval "$setup" && make_frozen &&
	echo "caliber: run: --confinement: expected auto, landlock, namespace or off, got '"'"'jail'"'"'" >want &&
	expect_refusal 2 want run canary out --confinement jail &&
	echo "caliber: run: --no-confinement is --confinement off: not with --confinement namespace" >want &&
	expect_refusal 2 want run canary out --no-confinement --confinement namespace &&
	test ! -e out
'

test_expect_success '--confinement namespace where no mount namespace can be made is refused, naming why: exit 3, nothing written' '
	eval "$setup" && make_frozen &&
	# In a user namespace without a mapping caliber holds no capability and
	# its user is no one the kernel can map again: neither unshare(CLONE_NEWNS)
	# nor one in a user namespace of its own is allowed.
	RUN_WRAP="unshare -U" &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --confinement namespace >stdout 2>stderr
	rc=$?; set -e; test $rc -eq 3 ||
		{ echo "exit $rc:"; cat stdout stderr; exit 1; }
	grep -qxF "preflight: confinement: FAILED: workers: --confinement namespace: no mount namespace here (unshare(CLONE_NEWNS): not permitted, and in a user namespace: Operation not permitted)" stdout &&
	grep -qx "caliber: run: preflight refused the batch: 1 check failed (confinement); nothing was written" stderr &&
	test ! -e out || exit 1
	# auto passes over the namespace: Landlock where the kernel has it, else not confined, saying why
	set +e; run canary out --worker "python3 $W/replay.py $D" --confinement auto --preflight-only >stdout 2>stderr; set -e &&
	if [ "$landlock_abi" -gt 0 ]; then
		grep -qxF "preflight: confinement: ok (workers: confined (landlock ABI $landlock_abi))" stdout
	else
		grep -qxF "preflight: confinement: ok (workers: not confined: this kernel has no Landlock (landlock_create_ruleset: not built in), and no mount namespace here (unshare(CLONE_NEWNS): not permitted, and in a user namespace: Operation not permitted))" stdout
	fi && test ! -e out
'

test_expect_success '--confinement landlock is Landlock where the kernel has it, else refused naming why' '
	eval "$setup" && make_frozen &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --confinement landlock --preflight-only >stdout 2>stderr
	rc=$?; set -e &&
	if [ "$landlock_abi" -gt 0 ]; then
		test $rc -eq 0 && grep -qxF "preflight: confinement: ok (workers: confined (landlock ABI $landlock_abi))" stdout
	else
		test $rc -eq 3 &&
		grep -qxF "preflight: confinement: FAILED: workers: --confinement landlock: this kernel has no Landlock (landlock_create_ruleset: not built in)" stdout &&
		grep -qx "caliber: run: preflight refused the batch: 1 check failed (confinement); nothing was written" stderr
	fi && test ! -e out
'

# The attacks of issue 25 (tests/workers/cellplay.py), each through a whole
# run and a killed-and-resumed one (survives), confined and not: the sealed
# verdicts are the well-behaved run's or the run fails naming the file;
# nothing outside the run root is written, no outside file modified.
attacks='
# attack1 RUN: the setsid rewriter of task flat was named in the receipt of
# its cell and is gone; every timing.jsonl of flat is what its worker wrote.
attack1() {
	pid=$(cat $1/tasks/flat/cells/a-candidate/rewriter.pid) && test -n "$pid" &&
	grep -q "\"python3 (pid $pid)\"" $1/tasks/flat/cells/a-candidate/cell.json &&
	if alive $pid; then kill -9 $pid; echo "the rewriter $pid of $1 outlived its cell"; return 1; fi
}
# attack4 RUN: nothing planted in RUN, no file linked in, the victim as it was.
attack4() {
	test -z "$(find $1 -name planted.txt)" && test ! -e $1/tasks/slow/cells/a-candidate/linked.txt && victim_holds
}
# victim_holds: the file outside every run that writeoutside links is as it was.
victim_holds() {
	test "$(cat victim)" = precious && test "$(stat -c %a victim)" = 644 && test "$(stat -c %h victim)" = 1
}
# fails_naming MODE "ARGS" FILE: tests/workers/MODE.py (ARGS after DATA),
# unconfined, in two runs that must each fail naming RUN/FILE (exit 1, a
# harness failure, nothing sealed): out-MODE-unconfined, a whole run, and
# cut-MODE-unconfined, killed right after the task it spoils (--then-kill)
# and resumed with a well-behaved worker (or failing before the kill). The
# mode is then counted among the survivors.
fails_naming() {
	mode=$1; args=$2; file=$3; name=$mode-unconfined
	test -d frozen/cpu-test-all || make_all
	RUN_WRAP="timeout 300" && export RUN_WRAP &&
	set +e; run all out-$name --quiet --workers persistent --no-confinement --worker "python3 $W/$mode.py $D $args" \
		>/dev/null 2>stderr; rc=$?; set -e
	test $rc -eq 1 && grep -q "^caliber: run: $PWD/out-$name/$file: " stderr && test ! -e out-$name/SHA256SUMS ||
		{ echo "out-$name: exit $rc, not a failure naming $file:"; cat stderr; return 1; }
	set +e; (run_bg all cut-$name --quiet --workers persistent --no-confinement \
		--worker "python3 $W/$mode.py $D $args --then-kill") >/dev/null 2>stderr; rc=$?
	if [ $rc -eq 137 ]; then
		run all cut-$name --resume --quiet --workers persistent --no-confinement --worker "python3 $W/replay.py $D" \
			>/dev/null 2>stderr; rc=$?
	fi; set -e
	test $rc -eq 1 && grep -q "^caliber: run: $PWD/cut-$name/$file: " stderr && test ! -e cut-$name/SHA256SUMS ||
		{ echo "cut-$name: exit $rc, not a failure naming $file:"; cat stderr; return 1; }
	unset RUN_WRAP && touch "$(dirname "$T")/survived.$name"
}
# resumes RUN: --resume with a well-behaved worker seals RUN with the
# verdicts of the well-behaved run.
resumes() {
	run all $1 --resume --quiet --workers persistent --no-confinement --worker "python3 $W/replay.py $D" >/dev/null &&
	want_but gain G,stable-gain >want && verdicts $1 >got && cmp want got && $CALIBER verify $1 >/dev/null
}
'
export attacks

# confined_attacks MODE OPTS TAG DENIED: the four attacks, confined as OPTS
# asks (--require-confinement among them), the runs tagged TAG, each
# refused write reported with the error DENIED; the mode is then counted
# (.attack-runs, a line each).
confined_attacks() {
	mode=$1 CONFINE_OPTS=$2 SURVIVE_TAG=$3 denied=$4
	export CONFINE_OPTS SURVIVE_TAG denied
	test_expect_success "confined ($mode): a setsid child that rescales the other cells timing.jsonl of its task is refused and killed with its cell" '
		eval "$setup$hostile$alive$attacks" &&
		survives rewritetiming flat flat C,not-stable a-candidate passed "pytest exit 0" &&
		attack1 out-rewritetiming$SURVIVE_TAG && attack1 cut-rewritetiming$SURVIVE_TAG &&
		grep -q "rescale .*/a-off/timing.jsonl: refused: $denied" \
			out-rewritetiming$SURVIVE_TAG/tasks/flat/cells/a-candidate/worker.log
	'
	test_expect_success "confined ($mode): a later task cannot rewrite an earlier task receipt" '
		eval "$setup$hostile$attacks" &&
		survives rewritetask "slow gain" slow R,stable-regression a-candidate passed "pytest exit 0" &&
		grep -q "\"verdict\": \"G\"" out-rewritetask$SURVIVE_TAG/tasks/gain/task.json &&
		grep -q "rewrite the earlier task.json: refused: $denied" \
			out-rewritetask$SURVIVE_TAG/tasks/slow/cells/a-candidate/worker.log
	'
	test_expect_success "confined ($mode): tasks/<task> and tasks/<task>/cells cannot be planted as links to an outside folder" '
		eval "$setup$hostile$attacks" && mkdir outside && tag=$SURVIVE_TAG &&
		survives plantdir "gain same $PWD/outside" gain G,stable-gain a-candidate passed "pytest exit 0" &&
		SURVIVE_TAG=$tag-cells && survives plantdir "gain same $PWD/outside cells" gain G,stable-gain a-candidate passed "pytest exit 0" &&
		expect_empty outside &&
		for r in out-plantdir$tag cut-plantdir$tag out-plantdir$tag-cells cut-plantdir$tag-cells; do
			test -d $r/tasks/same/cells/correctness-off && test ! -L $r/tasks/same && test ! -L $r/tasks/same/cells || exit 1
		done
	'
	test_expect_success "confined ($mode): files written outside the cell and an outside file hard-linked into it are refused" '
		eval "$setup$hostile$attacks" && echo precious >victim && chmod 644 victim &&
		survives writeoutside "slow $PWD/victim" slow R,stable-regression a-candidate passed "pytest exit 0" &&
		attack4 out-writeoutside$SURVIVE_TAG && attack4 cut-writeoutside$SURVIVE_TAG &&
		grep -q "link $PWD/victim: refused" out-writeoutside$SURVIVE_TAG/tasks/slow/cells/a-candidate/worker.log &&
		grep -q "write $PWD/out-writeoutside$SURVIVE_TAG/tasks/gain/planted.txt: refused" \
			out-writeoutside$SURVIVE_TAG/tasks/slow/cells/a-candidate/worker.log
	'
	echo "$mode" >>"$T/.attack-runs"
	unset CONFINE_OPTS SURVIVE_TAG denied
}

# Landlock refuses a write with EACCES; in the mount namespace every mount
# but the worker's own folders and /dev is read-only (EROFS), and a hard
# link across mounts is refused with EXDEV.
if [ "$landlock_abi" -gt 0 ]; then
	confined_attacks landlock "--confinement landlock --require-confinement" -confined "Permission denied"
else
	for what in "a setsid child that rescales the other cells timing.jsonl" "a later task rewriting an earlier receipt" \
		"tasks/<task> planted as a link" "files written outside the cell, an outside file hard-linked in"; do
		test_skip "confined (landlock): $what" "this kernel has no Landlock (ABI 0): the run is not confined"
	done
fi
if [ "$mount_ns" = 1 ]; then
	confined_attacks "mount namespace" "--confinement namespace --require-confinement" -namespace "Read-only file system"
else
	for what in "a setsid child that rescales the other cells timing.jsonl" "a later task rewriting an earlier receipt" \
		"tasks/<task> planted as a link" "files written outside the cell, an outside file hard-linked in"; do
		test_skip "confined (mount namespace): $what" "no mount namespace can be made here (unshare -m, unshare -U -m)"
	done
fi

test_expect_success 'unconfined: a setsid child rescaling the other cells timing.jsonl is killed with its cell; the run fails naming the file' '
	eval "$setup$hostile$alive$attacks" &&
	fails_naming rewritetiming "flat" "tasks/flat/cells/a-mask0/timing.jsonl" &&
	attack1 out-rewritetiming-unconfined && grep -q "\"workers\": \"not confined: --no-confinement\"" out-rewritetiming-unconfined/run.json &&
	# flat has no receipt yet: --resume moves it aside and does it again
	resumes out-rewritetiming-unconfined && resumes cut-rewritetiming-unconfined
'

test_expect_success 'unconfined: an earlier task receipt rewritten by a later task fails the run at the seal, naming it' '
	eval "$setup$hostile$attacks" &&
	fails_naming rewritetask "slow gain" "tasks/gain/task.json" &&
	grep -q "changed after its cell or task ended" stderr &&
	# once its folder is removed, --resume does the task again
	rm -rf out-rewritetask-unconfined/tasks/gain && resumes out-rewritetask-unconfined
'

test_expect_success 'unconfined: a link planted as tasks/<task> or tasks/<task>/cells is removed before the task, nothing written outside' '
	eval "$setup$hostile$attacks" && mkdir outside && CONFINE_OPTS=--no-confinement &&
	SURVIVE_TAG=-unconfined && survives plantdir "gain same $PWD/outside" gain G,stable-gain a-candidate passed "pytest exit 0" &&
	SURVIVE_TAG=-unconfined-cells && survives plantdir "gain same $PWD/outside cells" gain G,stable-gain a-candidate passed "pytest exit 0" &&
	expect_empty outside &&
	grep -q "\"tasks/same: a symlink to .$PWD/outside. in place of the folder, removed before the cell started\"" out-plantdir-unconfined/run.json &&
	grep -q "\"tasks/same/cells: a symlink to .$PWD/outside., removed before the cell started\"" out-plantdir-unconfined-cells/run.json
'

test_expect_success 'unconfined: files written outside the cell fail the seal, naming the first; a hard link in is copied, the outside file untouched' '
	eval "$setup$hostile$attacks" && echo precious >victim && chmod 644 victim &&
	fails_naming writeoutside "slow $PWD/victim" planted.txt &&
	victim_holds && test -f out-writeoutside-unconfined/tasks/slow/cells/a-candidate/linked.txt &&
	test "$(stat -c %h out-writeoutside-unconfined/tasks/slow/cells/a-candidate/linked.txt)" = 1 &&
	# what no cell wrote removed, --resume seals
	find out-writeoutside-unconfined -name planted.txt -exec rm -f {} + && resumes out-writeoutside-unconfined && victim_holds
'

test_expect_success 'every hostile-worker mode survived' '
	n=$(ls "$(dirname "$T")" | grep -c "^survived\.") &&
	want=19 && if [ -f "$(dirname "$T")/.attack-runs" ]; then want=$((want + 5 * $(wc -l <"$(dirname "$T")/.attack-runs"))); fi &&
	echo "$n hostile-worker modes survived" >"$(dirname "$T")/count" &&
	test "$n" -eq "$want"
'
if [ -f "$T/count" ]; then echo "# $(cat "$T/count")"; fi
