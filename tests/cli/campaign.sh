# tests/cli/campaign.sh: the CPU test campaign (tests/data/campaign-cpu) and
# its test workers (tests/workers/), for the CLI tests that run campaigns;
# sourced after lib.sh. A case starts with `eval "$setup"` and then has:
#   make_frozen                  the manifest filled in and prepared into frozen/
#   run SEL OUT [ARGS...]        caliber run of selection SEL into OUT (through $RUN_WRAP
#                                when set, e.g. "timeout 300" where an old binary could hang)
#   run_bg SEL OUT [ARGS...]     the same through exec, for the background
#   verdicts OUT                 task,verdict,code of each task (not the free A/A row of
#                                identical binaries: t0930 checks that)
#   make_all                     a sealed canary, then frozen/cpu-test-all
D="$CALIBER_ROOT/tests/data/campaign-cpu"
W="$CALIBER_ROOT/tests/workers"
export D W

setup='
make_frozen() {
	sed -e "s/@COMPILER_TREE@/$($CALIBER digest "$D/compiler")/" -e "s/@CORPUS_TREE@/$($CALIBER digest "$D/corpus")/" \
	    -e "s/@HARNESS_COMMIT@/$commit/" "$D/manifest.in.json" >manifest.json
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen >/dev/null
}
run() {
	sel=$1; out=$2; shift 2
	TMPDIR=$T ${RUN_WRAP-} $CALIBER run --manifest frozen/cpu-test-$sel/manifest.json --task-matrix frozen/cpu-test-$sel/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root $out --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY "$@"
}
# run, for the background: exec, so that $! is caliber itself and kill -9
# reaches it (not a subshell around it).
run_bg() {
	sel=$1; out=$2; shift 2
	TMPDIR=$T exec ${RUN_WRAP-} $CALIBER run --manifest frozen/cpu-test-$sel/manifest.json --task-matrix frozen/cpu-test-$sel/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root $out --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY "$@"
}
verdicts() { cut -d, -f1,3,4 "$1/matrix.csv" | tr -d "\r" | grep -v "^A/A,"; }
make_all() {
	make_frozen && run canary canary --worker "python3 $W/replay.py $D" --quiet >/dev/null &&
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --selection all \
		--canary-receipt canary/campaign.json >/dev/null
}
'
export setup
