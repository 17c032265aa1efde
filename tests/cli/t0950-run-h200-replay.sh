#!/bin/sh
# caliber run on CPU over real H200 evidence: the test worker replays the
# cells of the sealed demo canary; the runner must reach the same verdict
# matrix, byte for byte, in every worker mode, and seal a run that verifies:
# the sealed matrix's rows, and the A/A line after them that the canary was
# sealed without, as the derived matrix of the canary writes it.
. "$(dirname "$0")/lib.sh"

D="$CALIBER_ROOT/tests/data/campaign-h200-replay"
RUN="$CALIBER_ROOT/campaigns/demo-h200/runs/canary"
export D RUN

for mode in session persistent isolate; do
	test_expect_success "the sealed H200 canary's verdicts are reproduced from its cells ($mode workers)" "
		\$CALIBER pin \"\$D/manifest.in.json\" -o manifest.json --compiler \"\$D/compiler\" --corpus \"\$D/corpus\" \$DIRTY >/dev/null &&
		\$CALIBER prepare manifest.json --inventory-dir \"\$D/corpus\" --output-root frozen --backends \"\$CALIBER_ROOT/tests/backends\" >/dev/null &&
		case $mode in isolate) iso='--isolate task' ;; persistent) iso='--workers persistent' ;; *) iso= ;; esac &&
		TMPDIR=\$T \$CALIBER run --manifest frozen/demo-h200-replay-canary/manifest.json \
			--task-matrix frozen/demo-h200-replay-canary/task-matrix.json --build-root \"\$D/compiler\" \
			--corpus \"\$D/corpus\" --output-root out --backends \"\$CALIBER_ROOT/tests/backends\" --python \$PY \
			\$DIRTY --worker \"python3 \$CALIBER_ROOT/tests/workers/h200.py \$RUN\" --quiet \$iso >/dev/null &&
		grep -v '^,' out/matrix.csv | cmp \"\$RUN/matrix.csv\" - &&
		head -n -2 out/matrix.md | cmp \"\$RUN/matrix.md\" - &&
		\$CALIBER reaccount \"\$RUN\" --floor 1 --output derived >/dev/null &&
		cmp derived/matrix.csv out/matrix.csv && cmp derived/matrix.md out/matrix.md &&
		\$CALIBER verify out >/dev/null &&
		grep -q '\"mode\": \"$mode\"' out/tasks/attention_fwd/cells/b-candidate/cell.json
	"
done
