/* test_classify.c: the verdict table against tests/golden/classify/cases.json.
 * A case gives only what differs from a passing task: correct [b, c, k]
 * (default all 1), joinable (default true), topology [b, c, k], orders a and
 * b as [point, lo, hi, aa, aa_lo, aa_hi] or null, harness [code, reason],
 * gain and regression (default 0.05 / -0.03), kernels {saved, unchanged,
 * changed, top} (where the profiled GPU time moved; default unknown),
 * screened (run --prescreen left it untimed, identical binaries; with
 * identity_reason);
 * expect [verdict, code], and optionally reason_has, a phrase the reason
 * must contain, and reason_lacks, one it must not. The cases of
 * "undecided" check cb_order_undecided on order a. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/classify.h"
#include "base/jsonio.h"
#include "tlib.h"

static json_t *cases;

static void facts_from_case(const json_t *c, struct cb_facts *f)
{
	const json_t *v;
	int i;

	memset(f, 0, sizeof(*f));
	f->gain = json_is_number(json_object_get(c, "gain")) ? json_number_value(json_object_get(c, "gain")) : 0.05;
	f->regression = json_is_number(json_object_get(c, "regression"))
		? json_number_value(json_object_get(c, "regression")) : -0.03;
	v = json_object_get(c, "harness");
	if (v) {
		static char code[64];
		snprintf(code, sizeof(code), "%s", json_string_value(json_array_get(v, 0)));
		f->harness_code = code;
		f->harness_reason = strdup(json_string_value(json_array_get(v, 1)));
	}
	for (i = 0; i < CB_NROLES; i++) {
		v = json_object_get(c, "correct");
		f->correct[i] = v ? (int)json_integer_value(json_array_get(v, (size_t)i)) : 1;
		v = json_object_get(c, "topology");
		f->topology[i] = v ? json_integer_value(json_array_get(v, (size_t)i)) : 0;
	}
	f->joinable = !json_is_false(json_object_get(c, "joinable"));
	v = json_object_get(c, "kernels");
	if (v) {
		f->kernels.known = 1;
		f->kernels.saved = json_number_value(json_object_get(v, "saved"));
		f->kernels.unchanged = json_number_value(json_object_get(v, "unchanged"));
		f->kernels.changed = (size_t)json_integer_value(json_object_get(v, "changed"));
		f->kernels.top = strdup(json_string_value(json_object_get(v, "top")));
	}
	f->screened = f->identical = json_is_true(json_object_get(c, "screened"));
	if (json_object_get(c, "identity_reason"))
		f->identity_reason = strdup(json_string_value(json_object_get(c, "identity_reason")));
	if (!f->joinable)
		f->unjoinable = strdup("candidate: variant V: no row in ir/index.tsv");
	for (i = 0; i < CB_NORDERS; i++) {
		v = json_object_get(c, i == CB_ORDER_A ? "a" : "b");
		if (!json_is_array(v))
			continue;
		f->order[i].present = 1;
		f->order[i].point = json_number_value(json_array_get(v, 0));
		f->order[i].lo = json_number_value(json_array_get(v, 1));
		f->order[i].hi = json_number_value(json_array_get(v, 2));
		f->order[i].aa = json_number_value(json_array_get(v, 3));
		f->order[i].aa_lo = json_number_value(json_array_get(v, 4));
		f->order[i].aa_hi = json_number_value(json_array_get(v, 5));
	}
}

static void golden_case(void **state)
{
	const json_t *c = *state, *expect = json_object_get(c, "expect");
	struct cb_facts f;
	struct cb_verdict v;

	facts_from_case(c, &f);
	cb_classify(&f, &v);
	if (v.verdict != json_string_value(json_array_get(expect, 0))[0] ||
	    strcmp(v.code, json_string_value(json_array_get(expect, 1))) != 0)
		fail_msg("%s: got %c %s (%s)", json_string_value(json_object_get(c, "name")), v.verdict, v.code,
			 v.reason);
	assert_true(v.reason && v.reason[0] != '\0');
	if (json_object_get(c, "reason_has") && !strstr(v.reason, json_string_value(json_object_get(c, "reason_has"))))
		fail_msg("%s: reason '%s' does not say '%s'", json_string_value(json_object_get(c, "name")), v.reason,
			 json_string_value(json_object_get(c, "reason_has")));
	if (json_object_get(c, "reason_lacks") && strstr(v.reason, json_string_value(json_object_get(c, "reason_lacks"))))
		fail_msg("%s: reason '%s' says '%s'", json_string_value(json_object_get(c, "name")), v.reason,
			 json_string_value(json_object_get(c, "reason_lacks")));
	cb_verdict_release(&v);
	cb_facts_release(&f);
}

/* One case of "undecided" (cases.json): whether round a is undecided, and
 * why. */
static void undecided_case(void **state)
{
	const json_t *c = *state, *expect = json_object_get(c, "expect");
	const char *name = json_string_value(json_object_get(c, "name"));
	struct cb_facts f;
	char why[512] = "";
	int rc;

	facts_from_case(c, &f);
	rc = cb_order_undecided(&f, CB_ORDER_A, why, sizeof(why));
	if (json_is_null(expect) && rc != 0)
		fail_msg("%s: undecided: %s", name, why);
	if (json_is_string(expect) && (rc != 1 || !strstr(why, json_string_value(expect))))
		fail_msg("%s: got %d '%s', expected '%s'", name, rc, why, json_string_value(expect));
	cb_facts_release(&f);
}

/* The reason carries the figures behind a G: topology and both intervals. */
static void reason_has_figures(void **state)
{
	struct cb_facts f;
	struct cb_verdict v;

	(void)state;
	memset(&f, 0, sizeof(f));
	f.gain = 0.05;
	f.regression = -0.03;
	f.correct[0] = f.correct[1] = f.correct[2] = 1;
	f.joinable = 1;
	f.topology[0] = f.topology[1] = 5;
	f.topology[2] = 2;
	f.order[0].present = f.order[1].present = 1;
	f.order[0].point = 0.1234;
	f.order[0].lo = 0.1;
	f.order[0].hi = 0.15;
	f.order[1].point = 0.11;
	f.order[1].lo = 0.09;
	f.order[1].hi = 0.13;
	f.order[0].aa = f.order[1].aa = 0.001;
	f.order[0].aa_lo = f.order[1].aa_lo = -0.002;
	f.order[0].aa_hi = f.order[1].aa_hi = 0.004;
	cb_classify(&f, &v);
	assert_int_equal(v.verdict, 'G');
	assert_string_equal(v.reason, "topology 5 -> 2; round a +12.34% [+10.00%, +15.00%] (A/A +0.10% [-0.20%, +0.40%]), "
				      "round b +11.00% [+9.00%, +13.00%] (A/A +0.10% [-0.20%, +0.40%]): "
				      "both clear gain +5.00% and the A/A band");
	assert_true(v.stable_gain[0] && v.stable_gain[1]);
	cb_verdict_release(&v);
}

int main(void)
{
	struct cb_err err;
	const json_t *list, *c;
	struct CMUnitTest *tests;
	size_t n, i;
	int rc;

	cases = cb_json_load_file(tl_path("tests/golden/classify/cases.json"), &err);
	if (!cases) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	list = json_object_get(cases, "cases");
	n = json_array_size(list);
	tests = calloc(n + json_array_size(json_object_get(cases, "undecided")) + 1, sizeof(*tests));
	json_array_foreach(list, i, c) {
		tests[i].name = json_string_value(json_object_get(c, "name"));
		tests[i].test_func = golden_case;
		tests[i].initial_state = (void *)c;
	}
	json_array_foreach(json_object_get(cases, "undecided"), i, c) {
		tests[n].name = json_string_value(json_object_get(c, "name"));
		tests[n].test_func = undecided_case;
		tests[n++].initial_state = (void *)c;
	}
	tests[n].name = "reason_has_figures";
	tests[n].test_func = reason_has_figures;
	rc = _cmocka_run_group_tests("classify", tests, n + 1, NULL, NULL);
	free(tests);
	json_decref(cases);
	return rc;
}
