#!/bin/sh
# caliber run on CPU over real H200 evidence: the test worker replays the
# cells of the sealed demo canary; the runner must reach the same verdict
# matrix, byte for byte, in both worker modes, and seal a run that verifies.
. "$(dirname "$0")/lib.sh"

D="$CALIBER_ROOT/tests/data/campaign-h200-replay"
RUN="$CALIBER_ROOT/campaigns/demo-h200/runs/canary"
export D RUN

for mode in persistent isolate; do
	test_expect_success "the sealed H200 canary's verdicts are reproduced from its cells ($mode workers)" "
		\$CALIBER pin \"\$D/manifest.in.json\" -o manifest.json --compiler \"\$D/compiler\" --corpus \"\$D/corpus\" \$DIRTY >/dev/null &&
		\$CALIBER prepare manifest.json --inventory-dir \"\$D/corpus\" --output-root frozen --backends \"\$CALIBER_ROOT/tests/backends\" >/dev/null &&
		if [ $mode = isolate ]; then iso='--isolate task'; else iso=; fi &&
		TMPDIR=\$T \$CALIBER run --manifest frozen/demo-h200-replay-canary/manifest.json \
			--task-matrix frozen/demo-h200-replay-canary/task-matrix.json --build-root \"\$D/compiler\" \
			--corpus \"\$D/corpus\" --output-root out --backends \"\$CALIBER_ROOT/tests/backends\" --python \$PY \
			\$DIRTY --worker \"python3 \$CALIBER_ROOT/tests/workers/h200.py \$RUN\" --quiet \$iso >/dev/null &&
		cmp \"\$RUN/matrix.csv\" out/matrix.csv &&
		cmp \"\$RUN/matrix.md\" out/matrix.md &&
		\$CALIBER verify out >/dev/null &&
		grep -q '\"mode\": \"$mode\"' out/tasks/attention_fwd/cells/b-candidate/cell.json
	"
done
