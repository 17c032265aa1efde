#!/bin/sh
# run --devices LIST on CPU: the test backend's pretend devices (its
# visibility variable CALIBER_TEST_VISIBLE_DEVICES), one shard per device
# in parallel, each pinned and preflighted on its own device, progress of
# every shard, the merge at the end; a busy device refuses the batch before
# anything is written; --resume and --json-progress.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/campaign.sh"

# dev OUT [ARGS...]: caliber run of the canary into OUT with the replay worker
# (and the backends of $BACKENDS when set).
setup="$setup"'
dev() {
	out=$1; shift
	run canary $out --worker "python3 $W/replay.py $D" --backends "${BACKENDS:-$CALIBER_ROOT/tests/backends}" "$@"
}
'
export setup

test_expect_success 'one shard per device, in parallel, each pinned and preflighted on its device; merged, it is the serial run' '
	eval "$setup" && make_frozen && dev serial --quiet >/dev/null &&
	dev out --devices 0,1,2 >stdout 2>stderr &&
	for k in 1 2 3; do
		d=$((k - 1))
		grep -q "^shard $k/3 (device $d): preflight: device-count: ok (1 device visible with CALIBER_TEST_VISIBLE_DEVICES=$d)$" stdout &&
		grep -q "^shard $k/3 (device $d): preflight: device-idle: ok" stdout &&
		grep -q "^shard $k/3 (device $d): \[1/[0-9]\] [a-z]*: [GBCRKX] " stdout &&
		grep -qx "shard $k/3 (device $d): run: [0-9] tasks, sealed $PWD/out.shards/$k" stdout || { echo "shard $k"; exit 1; }
		for c in out.shards/$k/tasks/*/cells/*/cell.json; do
			grep -q "\"CALIBER_TEST_VISIBLE_DEVICES\": \"$d\"" $c || { echo "$c is not on device $d"; exit 1; }
		done
	done &&
	test "$(grep -c "preflight: device-idle: ok" stdout)" = 6 &&
	grep -qx "merge: 3 shards, sealed $PWD/out" stdout &&
	cmp serial/matrix.csv out/matrix.csv && cmp serial/matrix.md out/matrix.md && $CALIBER verify out >/dev/null &&
	python3 -c "import json, sys; s = json.load(open(sys.argv[1]))[\"shards\"]; assert [e[\"device\"][\"CALIBER_TEST_VISIBLE_DEVICES\"] for e in s] == [\"0\", \"1\", \"2\"], s" out/campaign.json
'

test_expect_success 'a busy device refuses the whole batch after every device was preflighted; nothing is written' '
	eval "$setup" && make_frozen && mkdir busy &&
	python3 -c "
import json, sys
b = json.load(open(sys.argv[1]))
b[\"list_processes\"] = [\"sh\", \"-c\", \"test ! -e \\\"\$0\\\" || echo pid 4242 python3\", sys.argv[2] + \"/busy-{device}\"]
open(\"busy/cpu.json\", \"w\").write(json.dumps(b, indent=2))" "$CALIBER_ROOT/tests/backends/cpu.json" "$PWD" &&
	touch busy-1 &&
	set +e; BACKENDS=$PWD/busy dev out --devices 0,1,2 >stdout 2>stderr; rc=$?; set -e &&
	test $rc -eq 3 &&
	grep -qx "shard 2/3 (device 1): preflight: device-idle: FAILED: other processes on the device: pid 4242 python3" stdout &&
	grep -q "^shard 1/3 (device 0): preflight: device-idle: ok" stdout && grep -q "^shard 3/3 (device 2): preflight: device-idle: ok" stdout &&
	tail -1 stderr >last &&
	echo "caliber: run: --devices: the preflights of shard 2/3 (device 1, exit 3) refused the batch; nothing was written" >want &&
	cmp want last && test ! -e out && test ! -e out.shards &&
	rm busy-1 && BACKENDS=$PWD/busy dev out --devices 0,1,2 --quiet && $CALIBER verify out >/dev/null
'

test_expect_success 'a bad device list, or --devices with --shard, is a usage error and writes nothing' '
	eval "$setup" && make_frozen &&
	for l in "" "0,,1" "0,1," "0,0" "gpu 1"; do
		case "$l" in
		0,0) printf "caliber: run: --devices: device '"'"'0'"'"' is listed twice\n" >want ;;
		"gpu 1") printf "caliber: run: --devices: '"'"'gpu 1'"'"' is not a device (letters, digits and ._:- only)\n" >want ;;
		*) printf "caliber: run: --devices: '"'"'%s'"'"' is not a comma-separated list of devices\n" "$l" >want ;;
		esac
		expect_refusal 2 want dev out --devices "$l" || exit 1
	done &&
	for l in -1 0,-1 .0; do
		printf "caliber: run: --devices: '"'"'%s'"'"' is not a device (it starts with a letter or digit)\n" "${l#0,}" >want
		expect_refusal 2 want dev out --devices "$l" || exit 1
	done &&
	echo "caliber: run: --devices deals the shards and pins their devices itself: no --shard with it" >want &&
	expect_refusal 2 want dev out --devices 0,1 --shard 1/2 &&
	test ! -e out && test ! -e out.shards
'

test_expect_success '--resume: a shard already sealed is done, the others run, then the merge' '
	eval "$setup" && make_frozen && dev serial --quiet >/dev/null &&
	dev out.shards/1 --shard 1/2 --device 0 --quiet >/dev/null &&
	dev out --devices 0,1 --resume >stdout 2>&1 &&
	grep -qx "shard 1/2 (device 0): run: $PWD/out.shards/1 is already complete and sealed; nothing to resume" stdout &&
	grep -qx "shard 2/2 (device 1): run: 2 tasks, sealed $PWD/out.shards/2" stdout &&
	cmp serial/matrix.csv out/matrix.csv &&
	dev out --devices 0,1 --resume >stdout && grep -qx "run: $PWD/out is already complete and sealed; nothing to resume" stdout &&
	echo "caliber: run: --output-root @CWD@/out exists; with --devices it is written once, by the merge at the end" >want &&
	expect_refusal 3 want dev out --devices 0,1
'

test_expect_success '--json-progress: every line is one JSON event, each naming its shard and device' '
	eval "$setup" && make_frozen &&
	dev out --devices 0,1 --json-progress >events &&
	python3 - events "$PWD" <<-EOF
	import json, sys
	events = [json.loads(l) for l in open(sys.argv[1])]
	assert events[-1] == {"event": "verdicts", "line": "verdicts: G 1, C 1, B 1, R 1, K 1, X 0",
	                      "report": sys.argv[2] + "/out/matrix.md"}, events[-1]
	assert events[-2] == {"event": "merged", "shards": 2, "root": sys.argv[2] + "/out"}, events[-2]
	events = events[:-2]
	assert all(e["shard"] in ("1/2", "2/2") and e["device"] in ("0", "1") for e in events), events[:3]
	assert sum(e["event"] == "sealed" for e in events) == 2
	assert sum(e["event"] == "verdicts" for e in events) == 2
	assert sum(e["event"] == "task-done" for e in events) == 5
	assert {e["shard"] for e in events if e["event"] == "preflight"} == {"1/2", "2/2"}
	EOF
	$CALIBER verify out >/dev/null
'

test_expect_success 'a Ctrl-C (SIGINT) to caliber reaches every shard; --resume finishes the run' '
	eval "$setup" && make_frozen && dev serial --quiet >/dev/null &&
	{ TMPDIR=$T $CALIBER run --manifest frozen/cpu-test-canary/manifest.json --task-matrix frozen/cpu-test-canary/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root out --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY --worker "python3 $W/slow.py $D flat 20" --devices 0,1 >stdout 2>stderr & } &&
	pid=$! && n=0 &&
	while [ ! -f out.shards/1/tasks/gain/task.json ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done &&
	test -f out.shards/1/tasks/gain/task.json &&
	kill -INT $pid && set +e && wait $pid; rc=$?; set -e &&
	test $rc -eq 1 &&
	tail -1 stderr | grep -qx "caliber: run: --devices: stopped by signal 2, passed on to every shard; continue with --resume" &&
	test ! -e out && test ! -e out.shards/1/SHA256SUMS &&
	dev out --devices 0,1 --resume --quiet && cmp serial/matrix.csv out/matrix.csv
'

if command -v openssl >/dev/null 2>&1; then
	test_expect_success '--devices --sign-key signs every shard and the merged run, which keeps each shard'"'"'s signature' '
		eval "$setup" && make_frozen &&
		openssl genpkey -algorithm ed25519 -out key.pem 2>/dev/null && openssl pkey -in key.pem -pubout -out pub.pem &&
		fp=$(openssl pkey -pubin -in pub.pem -outform DER | sha256sum | cut -c1-64) &&
		dev out --devices 0,1 --sign-key key.pem --quiet >/dev/null &&
		for r in out out.shards/1 out.shards/2; do
			$CALIBER verify $r --key pub.pem | grep -qx "signature: holds, key sha256:$fp ($PWD/pub.pem)" || exit 1
		done &&
		cmp out.shards/1/SHA256SUMS.sig out/shards/1/SHA256SUMS.sig && cmp out.shards/2/SHA256SUMS.sig out/shards/2/SHA256SUMS.sig
	'
else
	test_skip '--devices --sign-key signs every shard and the merged run, which keeps each shard'"'"'s signature' 'no openssl command here (make deps installs it)'
fi
