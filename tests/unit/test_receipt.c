/* test_receipt.c: the receipt readers refuse what is not a receipt, each
 * with its exact message (tests/bad/receipts/expected.tsv); the good task
 * receipt reads back; percentages and shares are formatted from ppm
 * exactly; the A/A line counts what it says (aa.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "account/aa.h"
#include "account/receipt.h"
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
		/* any figure a receipt may hold, without overflow (UBSan) */
		{ LLONG_MAX, "+922337203685477.58%" }, { LLONG_MIN, "-922337203685477.58%" },
		{ LLONG_MIN + 1, "-922337203685477.58%" },
	};
	char out[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cb_fmt_pct(cases[i].ppm, out, sizeof(out));
		assert_string_equal(out, cases[i].want);
	}
}

static void share_from_ppm(void **state)
{
	static const struct { long long ppm; const char *want; } cases[] = {
		{ 50000, "5 %" }, { 950000, "95 %" }, { 25000, "2.5 %" }, { 1300, "0.13 %" }, { 0, "0 %" },
		{ 49, "0 %" }, { 50, "0.01 %" }, { 1000000, "100 %" },
	};
	char out[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cb_fmt_share(cases[i].ppm, out, sizeof(out));
		assert_string_equal(out, cases[i].want);
	}
}

/* An interval excludes zero when it lies wholly above or below it: a bound
 * at zero does not; an order without an interval is not counted. */
static void aa_line_counts_intervals_that_exclude_zero(void **state)
{
	struct cb_task_result res[3];
	struct cb_aa_count c;
	char line[CB_AA_LINE_MAX];

	(void)state;
	memset(res, 0, sizeof(res));
	res[0].confidence_ppm = res[1].confidence_ppm = res[2].confidence_ppm = 950000;
	res[0].present[CB_ORDER_A] = 1, res[0].aa_lo_ppm[CB_ORDER_A] = 1, res[0].aa_hi_ppm[CB_ORDER_A] = 900;
	res[0].present[CB_ORDER_B] = 1, res[0].aa_lo_ppm[CB_ORDER_B] = 0, res[0].aa_hi_ppm[CB_ORDER_B] = 900;
	res[1].present[CB_ORDER_A] = 1, res[1].aa_lo_ppm[CB_ORDER_A] = -900, res[1].aa_hi_ppm[CB_ORDER_A] = -1;
	res[1].present[CB_ORDER_B] = 0, res[1].aa_lo_ppm[CB_ORDER_B] = 5, res[1].aa_hi_ppm[CB_ORDER_B] = 9;
	res[2].present[CB_ORDER_A] = 1, res[2].aa_lo_ppm[CB_ORDER_A] = -900, res[2].aa_hi_ppm[CB_ORDER_A] = 0;
	cb_aa_count(res, 3, &c);
	assert_int_equal(c.excluding, 2);
	assert_int_equal(c.intervals, 4);
	cb_aa_line(&c, line, sizeof(line));
	assert_string_equal(line, "A/A: 2 of 4 control-vs-baseline intervals exclude zero (nominal 5 %)");
	res[0].confidence_ppm = 975000;
	cb_aa_line_of(res, 1, line, sizeof(line));
	assert_string_equal(line, "A/A: 1 of 2 control-vs-baseline intervals exclude zero (nominal 2.5 %)");
	cb_aa_line_of(res, 0, line, sizeof(line));
	assert_string_equal(line, "A/A: 0 of 0 control-vs-baseline intervals exclude zero (nominal 0 %)");
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
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(share_from_ppm);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(aa_line_counts_intervals_that_exclude_zero);
	rc = _cmocka_run_group_tests("receipt", tests, n, NULL, NULL);
	free(tsv);
	return rc;
}
