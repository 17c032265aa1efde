#!/bin/sh
# caliber plan: the plugin list is derived from a backend's capabilities,
# in one fixed order; backend files are validated like manifests.
. "$(dirname "$0")/lib.sh"

tb="$CALIBER_ROOT/tests/backends"
export tb

test_expect_success 'the cuda backend plans every plugin, in order' '
	$CALIBER plan --backend cuda >out &&
	printf "%s\n" caliber_pytest.device_setup caliber_pytest.shapes caliber_pytest.autotune_record \
		caliber_pytest.ir_meta caliber_pytest.timing caliber_pytest.parallel_warmup caliber_pytest.compat >want &&
	cmp want out
'

test_expect_success 'musa declares the same capabilities as the seeds, graph capture included' '
	$CALIBER plan --backend musa >out && $CALIBER plan --backend cuda >cuda && cmp cuda out &&
	grep -q "\"graph_capture\": true" "$CALIBER_ROOT/backends/musa.json"
'

test_expect_success 'a backend without device events gets no timing plugin' '
	$CALIBER plan --backend cpu --backends "$tb" >out &&
	printf "%s\n" caliber_pytest.shapes caliber_pytest.autotune_record caliber_pytest.ir_meta >want &&
	cmp want out
'

test_expect_success '--why names the capability behind each plugin' '
	$CALIBER plan --backend cpu --backends "$tb" --why >out &&
	grep -Eq "^caliber_pytest.ir_meta +triton_hooks +joins launches" out
'

test_expect_success 'an empty plan is refused, naming the backend' '
	printf "caliber: plan: backend '"'"'empty'"'"' declares no capability: the plugin plan is empty\n" >want &&
	expect_refusal 1 want $CALIBER plan --backend empty --backends "$tb"
'

test_expect_success 'an unknown key in a backend file is refused' '
	printf "caliber: plan: $tb/typo.json: graph_captrue: unknown key (did you mean graph_capture?)\n" >want &&
	expect_refusal 1 want $CALIBER plan --backend typo --backends "$tb"
'

test_expect_success 'a backend that does not exist is refused' '
	printf "caliber: plan: backend '"'"'rocm'"'"': no file $tb/rocm.json; the backends there: cpu, empty, typo; --backends DIR takes backends from another folder\n" >want &&
	expect_refusal 1 want $CALIBER plan --backend rocm --backends "$tb"
'

test_expect_success 'no plugin list is spelled out outside plan.c (the seeds drifted that way)' '
	! grep -rnE "device_setup.{1,40}shapes.{1,40}autotune_record" "$CALIBER_ROOT/src" "$CALIBER_ROOT/python" \
		"$CALIBER_ROOT/scripts" "$CALIBER_ROOT/tests/device" "$CALIBER_ROOT/ops" "$CALIBER_ROOT/examples" |
		grep -v "^$CALIBER_ROOT/src/campaign/plan.c:"
'

test_expect_success 'a visibility_env that is no variable name is refused, naming the file and the field' '
	mkdir b && sed "s/\"visibility_env\": \"CALIBER_TEST_VISIBLE_DEVICES\"/\"visibility_env\": \"X:-0}\$(touch PWNED) #\"/" "$tb/cpu.json" >b/cpu.json &&
	printf "%s\n" "caliber: plan: $PWD/b/cpu.json: visibility_env: '"'"'X:-0}\$(touch PWNED) #'"'"' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)" >want &&
	expect_refusal 1 want $CALIBER plan --backend cpu --backends "$PWD/b" && test ! -e PWNED &&
	for v in 1GPU "" "A B" "A-B"; do
		sed "s/\"visibility_env\": \"CALIBER_TEST_VISIBLE_DEVICES\"/\"visibility_env\": \"$v\"/" "$tb/cpu.json" >b/cpu.json &&
		printf "%s\n" "caliber: plan: $PWD/b/cpu.json: visibility_env: '"'"'$v'"'"' is not a variable name ([A-Za-z_][A-Za-z0-9_]*)" >want &&
		expect_refusal 1 want $CALIBER plan --backend cpu --backends "$PWD/b" || exit 1
	done &&
	sed "s/\"visibility_env\": \"CALIBER_TEST_VISIBLE_DEVICES\"/\"visibility_env\": \"_X9\"/" "$tb/cpu.json" >b/cpu.json &&
	$CALIBER plan --backend cpu --backends "$PWD/b" >/dev/null
'
