/* test_receipt.c: the receipt readers refuse what is not a receipt, each
 * with its exact message (tests/bad/receipts/expected.tsv); the good task
 * receipt reads back; percentages are formatted from ppm exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "receipt.h"
#include "tlib.h"

/* Load a bad receipt from its folder (so messages name the bare file). */
static void bad_case(void **state)
{
	char *line = *state, *tab = strchr(line, '\t');
	struct cb_task_result res;
	struct cb_campaign_summary cs;
	struct cb_err err;
	char cwd[4096];
	int rc;

	*tab = '\0';
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(tl_path("tests/bad/receipts")), 0);
	if (strstr(line, "-campaign.json"))
		rc = cb_campaign_summary_load(line, &cs, &err);
	else
		rc = cb_task_result_load(line, &res, &err);
	assert_int_equal(chdir(cwd), 0);
	*tab = '\t';
	assert_int_equal(rc, -1);
	assert_string_equal(err.msg, tab + 1);
}

static void good_task_reads_back(void **state)
{
	struct cb_task_result res;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_task_result_load(tl_path("tests/bad/receipts/good-task.json"), &res, &err), 0);
	assert_int_equal(res.verdict, 'G');
	assert_string_equal(res.code, "stable-gain");
	assert_int_equal(res.topology[CB_ROLE_BASELINE], 5);
	assert_int_equal(res.topology[CB_ROLE_CANDIDATE], 2);
	assert_true(res.present[CB_ORDER_A] && res.present[CB_ORDER_B]);
	assert_string_equal(res.timer[CB_ORDER_A], "graph");
	cb_task_result_release(&res);
}

static void percent_from_ppm(void **state)
{
	static const struct { long long ppm; const char *want; } cases[] = {
		{ 0, "+0.00%" }, { 52341, "+5.23%" }, { 52350, "+5.24%" }, { -30000, "-3.00%" },
		{ -49, "+0.00%" }, { -50, "-0.01%" }, { -5000, "-0.50%" }, { 1234567, "+123.46%" },
	};
	char out[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cb_fmt_pct(cases[i].ppm, out, sizeof(out));
		assert_string_equal(out, cases[i].want);
	}
}

int main(void)
{
	size_t len, n = 0;
	char *tsv = tl_slurp(tl_path("tests/bad/receipts/expected.tsv"), &len), *p, *nl;
	struct CMUnitTest tests[64];
	int rc;

	p = strchr(tsv, '\n') + 1;   /* header */
	for (; *p && n < 60; p = nl + 1) {
		nl = strchr(p, '\n');
		*nl = '\0';
		tests[n].name = p;
		tests[n].test_func = bad_case;
		tests[n].setup_func = tests[n].teardown_func = NULL;
		tests[n].initial_state = p;
		n++;
	}
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(good_task_reads_back);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(percent_from_ppm);
	rc = _cmocka_run_group_tests("receipt", tests, n, NULL, NULL);
	free(tsv);
	return rc;
}
