/* test_timing.c: the one reader of timing.jsonl (timing.h) carries what
 * verdicts and reports read of a row: its samples, timer, shape and dtype,
 * the clocks before, after and during it, and how it was paced (throttled,
 * attempts, rests summed); what a row does not say is -1 (clocks), 1
 * (attempts), 0 (rests) or NULL (shape). Refusals name file and line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "account/stats.h"
#include "account/timing.h"

static void full_row(void **state)
{
	static const char text[] =
		"{\"row\": \"k|4096x4096\", \"shape\": \"4096x4096\", \"dtype\": \"fp16\", \"timer\": \"graph\", "
		"\"timer_reason\": \"default\", \"samples_ns\": [30, 10, 20, 40], "
		"\"clocks\": {\"before\": {\"sm_mhz\": 1980, \"mem_mhz\": 3201}, \"after\": {\"sm_mhz\": 1965}, "
		"\"during\": {\"sm_min_mhz\": 1950, \"sm_max_mhz\": 1980}}, "
		"\"throttle\": {\"throttled\": true, \"attempts\": 3, \"rested_ms\": [100, 250]}}\n";
	struct cb_timing t;
	struct cb_err err = CB_ERR_INIT;
	const struct cb_timing_row *r;

	(void)state;
	assert_int_equal(cb_timing_parse(text, strlen(text), "timing.jsonl", &t, &err), 0);
	assert_int_equal(t.n, 1);
	r = &t.rows[0];
	assert_string_equal(r->row, "k|4096x4096");
	assert_string_equal(r->shape, "4096x4096");
	assert_string_equal(r->dtype, "fp16");
	assert_int_equal(r->n, 4);
	assert_true(cb_median_i64(r->samples, r->n) == 25.0);
	assert_int_equal(r->throttled, 1);
	assert_int_equal(r->attempts, 3);
	assert_int_equal(r->rested_ms, 350);
	assert_int_equal(r->clocks.recorded, 1);
	assert_int_equal(r->clocks.sm_before, 1980);
	assert_int_equal(r->clocks.sm_after, 1965);
	assert_int_equal(r->clocks.mem_before, 3201);
	assert_int_equal(r->clocks.mem_after, -1);
	assert_int_equal(r->clocks.during, 1);
	assert_int_equal(r->clocks.sm_min, 1950);
	assert_int_equal(r->clocks.sm_max, 1980);
	cb_timing_release(&t);
}

static void bare_row(void **state)
{
	static const char text[] = "{\"row\": \"r\", \"timer\": \"direct\", \"timer_reason\": \"x\", \"samples_ns\": [5]}\n";
	struct cb_timing t;
	struct cb_err err = CB_ERR_INIT;
	const struct cb_timing_row *r;

	(void)state;
	assert_int_equal(cb_timing_parse(text, strlen(text), "timing.jsonl", &t, &err), 0);
	r = &t.rows[0];
	assert_null(r->shape);
	assert_null(r->dtype);
	assert_int_equal(r->throttled, 0);
	assert_int_equal(r->attempts, 1);
	assert_int_equal(r->rested_ms, 0);
	assert_int_equal(r->clocks.recorded, 0);
	assert_int_equal(r->clocks.during, 0);
	assert_int_equal(r->clocks.sm_before, -1);
	assert_int_equal(r->clocks.sm_min, -1);
	cb_timing_release(&t);
}

static void refusals(void **state)
{
	static const struct {
		const char *text, *msg;
	} rows[] = {
		{ "{\"row\": \"r\", \"timer\": \"graph\", \"samples_ns\": [5]}\n",
		  "t.jsonl:1: a row needs row, samples_ns (non-empty), timer and timer_reason" },
		{ "{\"row\": \"r\", \"timer\": \"graph\", \"timer_reason\": \"x\", \"samples_ns\": [5]}\n"
		  "{\"row\": \"r\", \"timer\": \"graph\", \"timer_reason\": \"x\", \"samples_ns\": [6]}\n",
		  "t.jsonl:2: row 'r' appears twice" },
		{ "{\"row\": \"r\", \"timer\": \"graph\", \"timer_reason\": \"x\", \"samples_ns\": [0]}\n",
		  "t.jsonl:1: samples_ns[0]: expected an integer > 0" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct cb_timing t;
		struct cb_err err = CB_ERR_INIT;
		assert_int_equal(cb_timing_parse(rows[i].text, strlen(rows[i].text), "t.jsonl", &t, &err), -1);
		assert_string_equal(err.msg, rows[i].msg);
		/* a refused file keeps none of its rows, not even the good first one */
		assert_int_equal(t.n, 0);
		assert_null(t.rows);
		cb_timing_release(&t);
	}
}

/* A NUL byte inside a line is refused, not taken for the text's end. */
static void nul_byte(void **state)
{
	static const char text[] = "{\"row\": \"r\", \"timer\": \"graph\", \"timer_reason\": \"x\", "
				   "\"samples_ns\": [5]}\n\0{}\n";
	struct cb_timing t;
	struct cb_err err = CB_ERR_INIT;

	(void)state;
	assert_int_equal(cb_timing_parse(text, sizeof(text) - 1, "t.jsonl", &t, &err), -1);
	assert_string_equal(err.msg, "t.jsonl: a NUL byte in a text file");
	assert_int_equal(t.n, 0);
	cb_timing_release(&t);
}

static void sorted_median(void **state)
{
	int64_t v[] = { 40, 10, 30, 20, 50 };

	(void)state;
	cb_sort_i64(v, 5);
	assert_int_equal(v[0], 10);
	assert_int_equal(v[4], 50);
	assert_true(cb_median_sorted_i64(v, 5) == 30.0);
	assert_true(cb_median_sorted_i64(v, 4) == 25.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_row),
		cmocka_unit_test(bare_row),
		cmocka_unit_test(refusals),
		cmocka_unit_test(nul_byte),
		cmocka_unit_test(sorted_median),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
