#!/bin/sh
# run --shard K/N and caliber merge on CPU with the replay worker of
# tests/workers/: the deal, shards as sealed runs bound to one frozen
# campaign, resume, every refusal of merge (exact message, nothing
# written), and a merged run equal to a serial run byte for byte in its
# verdicts and matrix, which verify, reaccount and report read like any run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

# shards SEL N PREFIX: shards 1..N of selection SEL into PREFIX1..PREFIXN;
# shard_tasks ROOT: the tasks its campaign receipt names as its shard's.
setup="$setup"'
shards() {
	sel=$1; n=$2; prefix=$3
	for k in $(seq "$n"); do
		run $sel $prefix$k --worker "python3 $W/replay.py $D" --shard $k/$n --quiet >/dev/null || return 1
	done
}
shard_tasks() { python3 -c "import json, sys; print(\" \".join(json.load(open(sys.argv[1]))[\"shard\"][\"tasks\"]))" "$1/campaign.json"; }
'
export setup

test_expect_success 'the deal: longest budget first onto the least-loaded shard, ties by matrix order; each shard a sealed run' '
	eval "$setup" && make_all &&
	run all s2 --worker "python3 $W/replay.py $D" --shard 2/3 >stdout &&
	grep -q "^preflight: binding: ok (.*; shard 2/3: 3 of 8 tasks)$" stdout &&
	grep -qx "run: 3 tasks, sealed $PWD/s2" stdout &&
	test "$(shard_tasks s2)" = "same wrong slowpoke" &&
	test "$(ls s2/tasks)" = "$(printf "%s\n" same slowpoke wrong)" &&
	run all s1 --worker "python3 $W/replay.py $D" --shard 1/3 --quiet >/dev/null &&
	run all s3 --worker "python3 $W/replay.py $D" --shard 3/3 --quiet >/dev/null &&
	test "$(shard_tasks s1)" = "gain slow faster" && test "$(shard_tasks s3)" = "flat slower" &&
	$CALIBER verify s1 >/dev/null && $CALIBER verify s2 >/dev/null && $CALIBER verify s3 >/dev/null &&
	python3 -c "import json, sys; s = json.load(open(sys.argv[1]))[\"shard\"]; assert s[\"index\"] == 2 and s[\"count\"] == 3 and s[\"host\"] and s[\"started\"], s" s2/campaign.json &&
	grep -q "\"shard\": \"2/3\"" s2/run.json &&
	grep -q "\"index\": 5," s2/tasks/slowpoke/task.json
'

test_expect_success 'four shards merged equal the serial run: matrix.csv and matrix.md byte for byte, task receipts but for times' '
	eval "$setup" && make_all &&
	run all serial --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	shards all 4 s &&
	$CALIBER merge s3 s1 s4 s2 --output-root merged >stdout &&
	grep -qx "merge: 4 shards, sealed $PWD/merged" stdout &&
	cmp serial/matrix.csv merged/matrix.csv && cmp serial/matrix.md merged/matrix.md &&
	for t in $(ls serial/tasks); do
		python3 -c "
import json, re, sys
def load(p):
    j = json.load(open(p))
    for k in (\"started\", \"finished\", \"wall_ns\"):
        j.pop(k)
    return re.sub(r\"pid [0-9]+\", \"pid N\", json.dumps(j, sort_keys=True))
assert load(sys.argv[1]) == load(sys.argv[2]), sys.argv[1]" serial/tasks/$t/task.json merged/tasks/$t/task.json || exit 1
	done &&
	(cd serial && find tasks | sort) >a && (cd merged && find tasks | sort) >b && cmp a b &&
	for k in 1 2 3 4; do cmp s$k/campaign.json merged/shards/$k/campaign.json && cmp s$k/SHA256SUMS merged/shards/$k/SHA256SUMS; done &&
	$CALIBER verify merged >/dev/null
'

test_expect_success 'the merged campaign receipt names every shard with host, device, times, tasks and its seal digest' '
	eval "$setup" && make_frozen && shards canary 2 s &&
	$CALIBER merge s1 s2 --output-root merged --quiet >stdout && test ! -s stdout &&
	python3 - "$PWD" <<-EOF
	import hashlib, json, sys
	root = sys.argv[1]
	c = json.load(open(root + "/merged/campaign.json"))
	s1 = json.load(open(root + "/s1/campaign.json"))
	assert c["schema"] == "caliber.campaign/1" and c["status"] == "complete", c
	for k in ("campaign", "selection", "manifest_sha256", "matrix_sha256", "inventory_sha256", "sources", "timer", "plan", "launch_floor", "thresholds"):
	    assert c[k] == s1[k], k
	assert [t["id"] for t in c["tasks"]] == ["gain", "same", "flat", "slow", "wrong"], c["tasks"]
	assert c["verdicts"] == {"G": 1, "B": 1, "C": 1, "R": 1, "K": 1}, c["verdicts"]
	assert c["device"] == {"backend": "cpu", "manifest": {"backend": "cpu"}}, c["device"]
	assert c["merge"]["argv"][0] == "merge", c["merge"]
	for k, e in enumerate(c["shards"], 1):
	    s = json.load(open(root + "/s%d/campaign.json" % k))
	    assert e["index"] == k and e["count"] == 2 and e["host"] == s["shard"]["host"], e
	    assert e["started"] == s["shard"]["started"] and e["finished"] == s["finished"], e
	    assert e["device"] == s["device"] and e["tasks"] == s["shard"]["tasks"] and e["preflight"] == s["preflight"], e
	    assert e["seal_sha256"] == hashlib.sha256(open(root + "/s%d/SHA256SUMS" % k, "rb").read()).hexdigest(), e
	EOF
'

test_expect_success 'verify, reaccount and report read a merged run as they read a serial one' '
	eval "$setup" && make_frozen && run canary serial --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	shards canary 2 s && $CALIBER merge s1 s2 --output-root merged --quiet &&
	$CALIBER verify merged | grep -q "seal holds" &&
	$CALIBER reaccount merged --floor 1 --output d1 >out && grep -q "^equivalence: holds" out &&
	$CALIBER reaccount serial --floor 0 --output ds >/dev/null && $CALIBER reaccount merged --floor 0 --output dm >/dev/null &&
	cmp ds/matrix.csv dm/matrix.csv &&
	$CALIBER report serial >rs.txt && $CALIBER report merged >rm.txt &&
	sed -n "/^verdicts:/,/^wall time/p" rs.txt >a && sed -n "/^verdicts:/,/^wall time/p" rm.txt >b && cmp a b &&
	$CALIBER report merged -o report.html && grep -q "seal-ok" report.html
'

test_expect_success 'a shard resumes with --resume like any run; a resume as another shard is refused by output-root' '
	eval "$setup" && make_frozen &&
	run canary ref --worker "python3 $W/replay.py $D" --shard 1/2 --quiet >/dev/null &&
	# killed at the baseline'"'"'s 8th request: gain (the first task of shard 1/2) is done, flat is not
	set +e; (run_bg canary s1 --worker "python3 $W/kill_runner.py $D 8" --shard 1/2 --quiet) >/dev/null 2>&1; set -e &&
	test -f s1/tasks/gain/task.json && test ! -e s1/SHA256SUMS &&
	set +e; run canary s1 --worker "python3 $W/replay.py $D" --shard 2/2 --resume >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 3 &&
	grep -qx "preflight: output-root: FAILED: --resume: $PWD/s1 ran shard 1/2 of this campaign, not shard 2/2" stdout &&
	set +e; run canary s1 --worker "python3 $W/replay.py $D" --resume >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 3 &&
	grep -qx "preflight: output-root: FAILED: --resume: $PWD/s1 ran shard 1/2 of this campaign, not the whole matrix" stdout &&
	test ! -e s1/SHA256SUMS &&
	run canary s1 --worker "python3 $W/replay.py $D" --shard 1/2 --resume --quiet >/dev/null &&
	cmp ref/matrix.csv s1/matrix.csv && $CALIBER verify s1 >/dev/null && test "$(shard_tasks s1)" = "gain flat wrong" &&
	test "$(grep -c "\"shard\": \"1/2\"" s1/run.json)" = 2
'

test_expect_success 'a bad --shard is a usage error; more shards than tasks is refused by binding; nothing is written' '
	eval "$setup" && make_frozen &&
	for s in 0/3 4/3 3 a/b 1/0 1/4097 "1/ 2" 01/02 1/03; do
		printf "caliber: run: --shard: '"'"'%s'"'"' is not K/N with 1 <= K <= N <= 4096\n" "$s" >want
		expect_refusal 2 want $CALIBER run --manifest frozen/cpu-test-canary/manifest.json \
			--task-matrix frozen/cpu-test-canary/task-matrix.json --build-root "$D/compiler" --corpus "$D/corpus" \
			--output-root out --shard "$s" || exit 1
	done &&
	set +e; run canary out --worker "python3 $W/replay.py $D" --shard 6/6 >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 3 &&
	grep -qx "preflight: binding: FAILED: --shard 6/6: 6 shards of a matrix of 5 tasks: a shard would be empty" stdout &&
	test ! -e out
'

test_expect_success 'merge refuses a missing, a repeated or a foreign shard, naming it, and writes nothing' '
	eval "$setup" && make_frozen && shards canary 3 s &&
	sed "s/\"description\": \"/&other /" manifest.json >other.json &&
	$CALIBER prepare other.json --inventory-dir "$D/corpus" --output-root f2 --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	TMPDIR=$T $CALIBER run --manifest f2/cpu-test-canary/manifest.json --task-matrix f2/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root o2 --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY --worker "python3 $W/replay.py $D" --shard 2/3 --quiet >/dev/null &&
	shards canary 2 two &&
	echo "caliber: merge: shard 2/3 is missing (given: 1/3, 3/3)" >want &&
	expect_refusal 1 want $CALIBER merge s3 s1 --output-root out/merged &&
	echo "caliber: merge: @CWD@/s1: shard 1/3 is given twice (also @CWD@/s1)" >want &&
	expect_refusal 1 want $CALIBER merge s1 s2 s1 s3 --output-root out/merged &&
	cp -R s1 copy1 &&
	echo "caliber: merge: @CWD@/copy1: shard 1/3 is given twice (also @CWD@/s1)" >want &&
	expect_refusal 1 want $CALIBER merge s1 s2 s3 copy1 --output-root out/merged &&
	echo "caliber: merge: @CWD@/o2: a foreign shard: its manifest_sha256 differs from that of @CWD@/s1" >want &&
	expect_refusal 1 want $CALIBER merge s1 o2 s3 --output-root out/merged &&
	echo "caliber: merge: @CWD@/two1: shard 1/2 of another deal: @CWD@/s2 is one of 3 shards" >want &&
	expect_refusal 1 want $CALIBER merge s2 two1 --output-root out/merged &&
	test ! -e out
'

test_expect_success 'merge refuses a run that is no shard, an unsealed or altered shard, and an output that exists or lies in a sealed run, a shard too' '
	eval "$setup" && make_frozen && shards canary 2 s &&
	run canary serial --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	echo "caliber: merge: @CWD@/serial: not a shard: its campaign receipt names no shard (a run of the whole matrix)" >want &&
	expect_refusal 1 want $CALIBER merge s1 serial --output-root out/merged &&
	set +e; run canary stopped --worker "python3 $W/replay.py $D" --shard 2/2 --deadline 2000-01-01T00:00:00Z --quiet >/dev/null 2>&1; set -e &&
	test -d stopped && test ! -e stopped/SHA256SUMS &&
	echo "caliber: merge: @CWD@/stopped: not sealed (no SHA256SUMS): a shard is merged once it is complete" >want &&
	expect_refusal 1 want $CALIBER merge s1 stopped --output-root out/merged &&
	cp -R s2 bad2 && chmod -R u+w bad2 && echo tampered >>bad2/tasks/same/cells/a-off/timing.jsonl &&
	echo "caliber: merge: shard 2/2: @CWD@/bad2: seal does not hold: changed: tasks/same/cells/a-off/timing.jsonl" >want &&
	expect_refusal 1 want $CALIBER merge s1 bad2 --output-root out/merged &&
	test ! -e out && test -z "$(ls -d out* 2>/dev/null)" &&
	mkdir exists &&
	echo "caliber: merge: --output-root @CWD@/exists exists; merge writes a new run root" >want &&
	expect_refusal 1 want $CALIBER merge s1 s2 --output-root exists && expect_empty exists &&
	echo "caliber: merge: --output-root @CWD@/serial/merged: inside the sealed run @CWD@/serial (a sealed run is never written to)" >want &&
	expect_refusal 1 want $CALIBER merge s1 s2 --output-root serial/merged &&
	echo "caliber: merge: --output-root @CWD@/s2/tasks/merged: inside the sealed run @CWD@/s2 (a sealed run is never written to)" >want &&
	expect_refusal 1 want $CALIBER merge s1 s2 --output-root s2/tasks/merged &&
	echo "caliber: merge: --output-root is required" >want &&
	expect_refusal 2 want $CALIBER merge s1 s2 &&
	$CALIBER merge --help | grep -q "^usage: caliber merge SHARD_ROOT... --output-root DIR"
'

test_expect_success 'a shard that holds other tasks than the deal gives it is refused' '
	eval "$setup" && make_frozen && shards canary 2 s &&
	cp -R s2 odd && chmod -R u+w odd &&
	python3 -c "import json, sys; p = sys.argv[1]; j = json.load(open(p)); j[\"shard\"][\"tasks\"] = [\"same\"]; open(p, \"w\").write(json.dumps(j, indent=2, sort_keys=True) + \"\\n\")" odd/campaign.json &&
	echo "caliber: merge: @CWD@/odd: shard 2/2 holds tasks [same], the matrix deals it [same, slow]" >want &&
	expect_refusal 1 want $CALIBER merge s1 odd --output-root out && test ! -e out
'

if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(stat -f -c %T /dev/shm)" != "$(stat -f -c %T "$T")" -o "$(stat -c %d /dev/shm)" != "$(stat -c %d "$T")" ]; then
	test_expect_success 'merge hard-links the files of shards on its file system, and copies those of shards on another' '
		eval "$setup" && make_frozen && shards canary 2 s &&
		$CALIBER merge s1 s2 --output-root linked --quiet &&
		test "$(stat -c %h linked/tasks/gain/cells/a-off/timing.jsonl)" -ge 2 &&
		shm=$(mktemp -d /dev/shm/caliber-t1500.XXXXXX) &&
		trap "chmod -R u+w $shm; rm -rf $shm" EXIT &&
		cp -R s1 s2 "$shm/" &&
		$CALIBER merge "$shm/s1" "$shm/s2" --output-root copied --quiet &&
		test "$(stat -c %h copied/tasks/gain/cells/a-off/timing.jsonl)" -eq 1 &&
		cmp s1/tasks/gain/cells/a-off/timing.jsonl copied/tasks/gain/cells/a-off/timing.jsonl &&
		$CALIBER verify copied >/dev/null && cmp linked/matrix.csv copied/matrix.csv &&
		grep -v "  campaign.json\$" linked/SHA256SUMS >a && grep -v "  campaign.json\$" copied/SHA256SUMS >b && cmp a b
	'
else
	test_skip 'merge hard-links the files of shards on its file system, and copies those of shards on another' 'no /dev/shm on another file system than TMPDIR'
fi

test_expect_success 'a folder that holds nothing in a shard is in the merged run too' '
	eval "$setup" && make_frozen && shards canary 2 s &&
	chmod -R u+w s1 && rm s1/SHA256SUMS && mkdir -p s1/tasks/gain/cells/a-off/ir/EMPTY s1/interrupted/flat-1/cells &&
	$CALIBER_TOOLS/cbtest seal s1 &&
	$CALIBER merge s1 s2 --output-root merged --quiet &&
	test -d merged/tasks/gain/cells/a-off/ir/EMPTY && test -z "$(ls merged/tasks/gain/cells/a-off/ir/EMPTY)" &&
	test -d merged/interrupted/flat-1/cells && $CALIBER verify merged >/dev/null
'

test_expect_success 'merge refuses anything in a shard that its deal does not name: a task folder, an interrupted one, a file at the top' '
	eval "$setup" && make_frozen && shards canary 2 s &&
	for extra in tasks/zz-evil/cells/a-off interrupted/zz-evil-1 notes.txt tasks/slow-1; do
		rm -rf evil && cp -R s2 evil && chmod -R u+w evil && rm evil/SHA256SUMS evil/SEAL &&
		case $extra in *.txt) echo planted >evil/$extra ;; *) mkdir -p evil/$extra && echo planted >evil/$extra/f ;; esac &&
		$CALIBER_TOOLS/cbtest seal evil && $CALIBER verify evil >/dev/null &&
		case $extra in *.txt) what=$extra ;; *) what=${extra%%/cells*}/ ;; esac &&
		echo "caliber: merge: @CWD@/evil: shard 2/2 holds $what, which its deal does not name" >want &&
		expect_refusal 1 want $CALIBER merge s1 evil --output-root out && test ! -e out &&
		test -z "$(ls -d out* 2>/dev/null)" || exit 1
	done
'

if command -v openssl >/dev/null 2>&1; then
	test_expect_success 'merge --key checks every shard'"'"'s signature and keeps it in shards/K/; --sign-key signs the merged seal' '
		eval "$setup" && make_frozen &&
		openssl genpkey -algorithm ed25519 -out key.pem 2>/dev/null && openssl pkey -in key.pem -pubout -out pub.pem &&
		openssl genpkey -algorithm ed25519 -out other.pem 2>/dev/null && openssl pkey -in other.pem -pubout -out otherpub.pem &&
		fp=$(openssl pkey -pubin -in pub.pem -outform DER | sha256sum | cut -c1-64) &&
		for k in 1 2; do run canary s$k --worker "python3 $W/replay.py $D" --shard $k/2 --sign-key key.pem --quiet >/dev/null || exit 1; done &&
		$CALIBER merge s1 s2 --output-root merged --key pub.pem --sign-key key.pem >stdout &&
		printf "%s\n" "merge: shard 1/2: signature holds, key sha256:$fp" "merge: shard 2/2: signature holds, key sha256:$fp" >want &&
		head -2 stdout | cmp want - &&
		cmp s1/SHA256SUMS.sig merged/shards/1/SHA256SUMS.sig && cmp s2/SHA256SUMS.sig merged/shards/2/SHA256SUMS.sig &&
		$CALIBER verify merged --key pub.pem | grep -qx "signature: holds, key sha256:$fp ($PWD/pub.pem)" &&
		$CALIBER verify s1 --key pub.pem >/dev/null &&
		echo "caliber: merge: shard 1/2: @CWD@/s1/SHA256SUMS.sig: signed by key sha256:$fp, not by @CWD@/otherpub.pem (key sha256:$(openssl pkey -pubin -in otherpub.pem -outform DER | sha256sum | cut -c1-64))" >want &&
		expect_refusal 1 want $CALIBER merge s1 s2 --output-root out --key otherpub.pem && test ! -e out &&
		run canary u2 --worker "python3 $W/replay.py $D" --shard 2/2 --quiet >/dev/null &&
		echo "caliber: merge: shard 2/2: @CWD@/u2: not signed (no SHA256SUMS.sig), and --key @CWD@/pub.pem asks for a signature" >want &&
		expect_refusal 1 want $CALIBER merge s1 u2 --output-root out --key pub.pem && test ! -e out &&
		$CALIBER merge s1 u2 --output-root unsigned --quiet && test ! -e unsigned/SHA256SUMS.sig &&
		test -f unsigned/shards/1/SHA256SUMS.sig && test ! -e unsigned/shards/2/SHA256SUMS.sig &&
		chmod u+w u2 && ln -s "$PWD/s2/SHA256SUMS.sig" u2/SHA256SUMS.sig &&
		echo "caliber: merge: shard 2/2: @CWD@/u2/SHA256SUMS.sig: a symlink, not a signature (never followed)" >want &&
		expect_refusal 1 want $CALIBER merge s1 u2 --output-root out && test ! -e out &&
		chmod 644 key.pem &&
		echo "caliber: merge: --sign-key: @CWD@/key.pem: mode 0644: a private key must be its owner'"'"'s alone (chmod 600 @CWD@/key.pem)" >want &&
		expect_refusal 1 want $CALIBER merge s1 s2 --output-root out --sign-key key.pem && test ! -e out
	'
else
	test_skip 'merge --key checks every shard'"'"'s signature and keeps it in shards/K/; --sign-key signs the merged seal' 'no openssl command here (make deps installs it)'
fi
