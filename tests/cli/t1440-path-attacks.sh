#!/bin/sh
# The path attacks of issue 14 as one catalogue: every command that writes
# (prepare, run, worker, reaccount, report, export, inventory) is aimed at one
# sealed run S through every way a path can lead into it: the plain path,
# ".." after a missing folder, a link to S, a link to a folder above it, a
# link behind a missing folder, a dangling link into S, a link to a folder
# of S (an alias, as a bind mount would be), ".." after such a link, a path
# longer than PATH_MAX, one that fits but repeats "./" a thousand times, a
# real path PATH_MAX long, a dangling link as the target itself, and S
# itself; then the attacks that only some commands can meet: a hard link
# to a sealed file as the file written, links and hard links that a worker
# finds in its --out, a frozen campaign planted as a link, a derived run
# folder holding a hard link. Each attack must be refused with its exact
# message and exit status, and leave the whole arena (S, its modes and link
# counts, every other name) as it was. The last case counts them and checks
# that S's digest is the one it had before the first.
. "$(dirname "$0")/lib.sh"

D="$CALIBER_ROOT/tests/data/campaign-cpu"
W="$CALIBER_ROOT/tests/workers"
spec="$CALIBER_ROOT/tests/golden/runs/basic/spec.json"
A="$T/arena"
TALLY="$T/tally"
export D W spec A TALLY

# Inside a case: the commands, aimed at a target; the arena's state; one
# attack run and judged.
lib='
F=frozen/cpu-test-canary
aim() {
	c=$1; t=$2
	case $c in
	prepare) $CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root "$t" --backends "$CALIBER_ROOT/tests/backends" ;;
	run) TMPDIR=$A/tmp $CALIBER run --manifest $F/manifest.json --task-matrix $F/task-matrix.json \
		--build-root "$D/compiler" --corpus "$D/corpus" --output-root "$t" --backends "$CALIBER_ROOT/tests/backends" \
		--python $PY $DIRTY --worker "python3 $W/replay.py $D" --quiet ;;
	worker) TMPDIR=$A/tmp $CALIBER worker --manifest $F/manifest.json --task-matrix $F/task-matrix.json --task gain \
		--cell off --phase a --corpus "$D/corpus" --build-root "$D/compiler" --out "$t" \
		--backends "$CALIBER_ROOT/tests/backends" --worker "python3 $W/replay.py $D" ;;
	reaccount) $CALIBER reaccount S --floor 0 --output "$t" ;;
	report) $CALIBER report S -o "$t" ;;
	export) $CALIBER export S -o "$t" ;;
	inventory) $CALIBER inventory --corpus "$CALIBER_ROOT/ops" -o "$t" ;;
	esac
}
# Every name of the arena with its kind, mode and link count, and the
# bytes of every file in it.
state() {
	(cd "$A" && find . -printf "%y %m %n %p\n" | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort) |
		sha256sum
}
# attack CMD WHAT CODE STDERR TARGET: CMD aimed at TARGET exits CODE with
# exactly STDERR, and (run) prints the output-root check failing with
# $why_out; the arena is unchanged. One line in the tally either way.
attack() {
	c=$1; what=$2; code=$3; printf "%s\n" "$4" >"$T/want"; shift 4
	before=$(state)
	set +e; aim $c "$1" >"$T/out" 2>"$T/err"; rc=$?; set -e
	after=$(state)
	ok=1
	test $rc -eq $code || { echo "$c, $what: exit status $rc, expected $code"; ok=0; }
	cmp -s "$T/want" "$T/err" || { echo "$c, $what: stderr differs:"; diff "$T/want" "$T/err" || :; ok=0; }
	if [ $c = run ] && [ $code = 3 ]; then
		grep -qxF "preflight: output-root: FAILED: $why_out" "$T/out" ||
			{ echo "$c, $what: no output-root failure \"$why_out\":"; cat "$T/out"; ok=0; }
	fi
	test "$before" = "$after" || { echo "$c, $what: the arena changed"; ok=0; }
	if [ $ok = 1 ]; then echo "refused: $c, $what" >>"$TALLY"; else echo "NOT REFUSED: $c, $what" >>"$TALLY"; return 1; fi
}
'
export lib

test_expect_success 'the arena: a sealed run S, a frozen campaign, a folder whose real path is PATH_MAX long' '
	mkdir -p "$A/tmp" && cd "$A" && "$CALIBER_TOOLS/cbtest" mkrun "$spec" S &&
	$CALIBER pin "$D/manifest.in.json" -o manifest.json --compiler "$D/compiler" --corpus "$D/corpus" $DIRTY >/dev/null &&
	$CALIBER prepare manifest.json --inventory-dir "$D/corpus" --output-root frozen --backends "$CALIBER_ROOT/tests/backends" >/dev/null &&
	p=$PWD && n=0 && need=$((4092 - ${#PWD})) &&
	while [ $need -gt 203 ]; do p=$p/$(printf "d%.0s" $(seq 200)); need=$((need - 201)); n=$((n + 1)); done &&
	p=$p/$(printf "e%.0s" $(seq $((need - 1)))) && n=$((n + 1)) && test ${#p} -eq 4092 &&
	mkdir -p "$p" && ln -s "$p" deep && echo $((n + 1)) >"$T/../deep-levels" &&
	ln -s S A1 && ln -s "$PWD" P && ln -s S/tasks L && ln -s S/tasks/new DL && ln -s S/tasks/gelu_bwd G &&
	ln -s S/tasks/new NR &&
	$CALIBER verify S >/dev/null && (cd S && find . -printf "%y %m %n %p\n" | LC_ALL=C sort &&
		find . -type f -exec sha256sum {} + | LC_ALL=C sort) | sha256sum >"$T/../S.digest"
'

# The forms every command meets: name, target, and the refusal as a
# function of the command (its option, and how it names the run).
for c in prepare run worker reaccount report export inventory; do
	case $c in
	prepare) opt=--output-root; long=--output-root; inside="inside the sealed run $A/S (a sealed run is never written to)" ;;
	run) opt=; long=--output-root; inside="inside the sealed run $A/S (a sealed run is never written to)" ;;
	worker) opt=--out; long=--out; inside="inside the sealed run $A/S (a sealed run is never written to)" ;;
	reaccount) opt=--output; long=--output; inside="inside the run root $A/S (a derived run is always written outside it)" ;;
	report) opt=-o; long=--output; inside="inside the run root $A/S (a sealed run is never written to)" ;;
	export) opt=-o; long=--output; inside="inside the run root $A/S (an export is written outside the run it reads)" ;;
	inventory) opt=-o; long=--output; inside="inside the sealed run $A/S (a sealed run is never written to)" ;;
	esac
	export c opt long inside
	test_expect_success "$c: every form of path into S is refused, and nothing anywhere is written" '
		eval "$lib" && cd "$A" && up=$(printf "../%.0s" $(seq $(cat "$T/../deep-levels"))) &&
		dots=$(printf "./%.0s" $(seq 2100)) && fits=$(printf "./%.0s" $(seq 1000)) &&
		# refusal TARGET_SHOWN WHY: the message (or, for run, the check
		# that fails and the batch refused).
		refusal() {
			if [ $c = run ]; then why_out="$1: $2"; msg="caliber: run: preflight refused the batch: 1 check failed (output-root); nothing was written"
			else msg="caliber: $c: $opt $1: $2"; fi
		} &&
		fails=0 &&
		while read -r what target shown why; do
			eval "target=$target shown=$shown why=\"$why\"" &&
			refusal "$A/$shown" "$why" &&
			# run looks at the folders the output root would be made in.
			if [ $c = run ] && [ $what = dangling-link-into-run ]; then why_out="$A/DL/x cannot be created: $A/DL is not a folder"; fi &&
			{ attack $c "$what" $([ $c = run ] && echo 3 || echo 1) "$msg" "$target" || fails=$((fails + 1)); }
		done <<-EOF &&
		plain S/tasks/x S/tasks/x \$inside
		dotdot-after-missing new/../S/x new/../S/x \$inside
		link-to-run A1/x A1/x \$inside
		link-above-run P/S/x P/S/x \$inside
		link-behind-missing nothere/../L/x nothere/../L/x $A/nothere/../L is a symlink after a folder that mkdir -p makes; caliber follows no link there
		dangling-link-into-run DL/x DL/x $A/DL is a symlink after a folder that mkdir -p makes; caliber follows no link there
		alias-of-a-folder G/x G/x \$inside
		dotdot-after-alias G/../x G/../x \$inside
		repeated-dots \${fits}S/x S/x \$inside
		real-path-PATH_MAX-long deep/mm/\${up}S/x deep/mm/\${up}S/x \$inside
		EOF
		n=$((${#A} + 1 + ${#dots} + 3)) &&
		{ attack $c longer-than-PATH_MAX 2 "caliber: $c: $long: $(printf "./%.0s" $(seq 32))...: the path is $n bytes long, PATH_MAX is 4096" "${dots}S/x" ||
			fails=$((fails + 1)); } &&
		case $c in
		run) why_out="$A/S is a sealed run: it is complete, nothing to resume or overwrite"
		     a=3 m="caliber: run: preflight refused the batch: 1 check failed (output-root); nothing was written" ;;
		*) a=1 m="caliber: $c: $opt $A/S: $inside" ;;
		esac &&
		{ attack $c the-run-itself $a "$m" S || fails=$((fails + 1)); } &&
		case $c in
		prepare|worker) m="caliber: $c: $opt $A/NR: $A/NR is a symlink after a folder that mkdir -p makes; caliber follows no link there" a=1 ;;
		run) why_out="$A/NR exists (use --resume to continue a run there)" a=3
		     m="caliber: run: preflight refused the batch: 1 check failed (output-root); nothing was written" ;;
		reaccount) m="caliber: reaccount: --output $A/NR: already exists and is not an empty directory; refusing to overwrite" a=1 ;;
		report|export) m="caliber: $c: $A/NR: exists and is not a regular file; refusing to replace it" a=1 ;;
		inventory) m="caliber: inventory: -o $A/NR: exists and is not a regular file" a=1 ;;
		esac &&
		{ attack $c dangling-link-as-target $a "$m" NR || fails=$((fails + 1)); } &&
		test $fails -eq 0
	'
done

test_expect_success 'report and inventory: a hard link or a symlink to a sealed file, as the file written, is refused' '
	eval "$lib" && cd "$A" && ln S/matrix.md H.md && ln -s S/matrix.csv M.csv &&
	for c in report inventory; do
		attack $c hard-link-as-target 1 "caliber: $c: -o $A/H.md: a hard link (2 names); caliber never writes a file that has other names" H.md || exit 1
	done &&
	attack report symlink-as-target 1 "caliber: report: $A/M.csv: exists and is not a regular file; refusing to replace it" M.csv &&
	attack inventory symlink-as-target 1 "caliber: inventory: -o $A/M.csv: exists and is not a regular file" M.csv &&
	rm H.md M.csv
'

test_expect_success 'worker: links and hard links in --out lead nowhere: cells -> S, worker.log linked to a sealed file' '
	eval "$lib" && cd "$A" && mkdir task && ln -s ../S/tasks/gelu_bwd task/cells &&
	attack worker link-inside-out 1 "caliber: worker: $A/task/cells/a-off: inside the sealed run $A/S (a sealed run is never written to)" task &&
	rm task/cells && mkdir -p task/cells/a-off && ln S/tasks/gelu_bwd/task.json task/cells/a-off/worker.log &&
	attack worker worker.log-hard-link 1 "caliber: worker: $A/task/cells/a-off/worker.log: a hard link (2 names); caliber never writes a file that has other names" task &&
	rm task/cells/a-off/worker.log && ln -s ../../../S/tasks/gelu_bwd/task.json task/cells/a-off/worker.log &&
	attack worker worker.log-symlink 1 "caliber: worker: $A/task/cells/a-off/worker.log: a symlink; caliber never writes through one" task &&
	rm -r task
'

test_expect_success 'prepare and reaccount: a frozen campaign planted as a link, a derived folder holding a hard link' '
	eval "$lib" && cd "$A" && mkdir pr && ln -s ../S/tasks/gelu_bwd pr/cpu-test-canary &&
	attack prepare planted-campaign-link 1 "caliber: prepare: $A/pr/cpu-test-canary: already exists; refusing to overwrite a frozen campaign" pr &&
	mkdir d && ln S/campaign.json d/derived.json &&
	attack reaccount hard-link-in-output 1 "caliber: reaccount: --output $A/d: already exists and is not an empty directory; refusing to overwrite" d &&
	rm -r pr d
'

total=$(wc -l <"$TALLY" 2>/dev/null || echo 0)
refused=$(grep -c "^refused: " "$TALLY" 2>/dev/null || echo 0)
export total refused
test_expect_success "$refused of $total path attacks refused, sealed run unchanged" '
	test "$total" -gt 0 && test "$refused" -eq "$total" && cd "$A" && $CALIBER verify S >/dev/null &&
	(cd S && find . -printf "%y %m %n %p\n" | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort) |
		sha256sum | cmp - "$T/../S.digest"
'
