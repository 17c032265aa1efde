/* test_shard.c: the deal of src/campaign/shard.c (docs/formats.md, "Shards and the
 * deal") on matrices of known budgets, and the K/N parser. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/jsonio.h"
#include "campaign/shard.h"

/* A matrix "tasks" array with these budgets (ids t0, t1, ...). */
static json_t *tasks_of(const long long *budget, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:o, s:I}", "id", json_sprintf("t%zu", i), "budget_s",
						   (json_int_t)budget[i]));
	return a;
}

/* Longest first onto the least-loaded shard: budgets 10 50 20 40 30 into 2
 * shards go 50 -> 0, 40 -> 1, 30 -> 1 (40 < 50), 20 -> 0 (70 > 50),
 * 10 -> 0 (70 = 70: the lower shard). */
static void longest_first(void **state)
{
	static const long long budget[] = { 10, 50, 20, 40, 30 };
	static const size_t want[] = { 0, 0, 0, 1, 1 };
	json_t *t = tasks_of(budget, 5);
	size_t got[5], i;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_shard_deal(t, 2, got, &err), 0);
	for (i = 0; i < 5; i++)
		assert_int_equal(got[i], want[i]);
	json_decref(t);
}

/* Equal budgets are dealt round robin in matrix order; a shard's tasks
 * come back in matrix order. */
static void ties_in_matrix_order(void **state)
{
	static const long long budget[] = { 5, 5, 5, 5, 5, 5, 5 };
	json_t *t = tasks_of(budget, 7), *s2;
	struct cb_shard s = { 2, 3 };
	size_t got[7], i;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_shard_deal(t, 3, got, &err), 0);
	for (i = 0; i < 7; i++)
		assert_int_equal(got[i], i % 3);
	s2 = cb_shard_tasks(t, &s, &err);
	assert_non_null(s2);
	assert_int_equal(json_array_size(s2), 2);
	assert_string_equal(cb_json_str(json_array_get(s2, 0), "id"), "t1");
	assert_string_equal(cb_json_str(json_array_get(s2, 1), "id"), "t4");
	json_decref(s2);
	json_decref(t);
}

/* More shards than tasks would leave one empty: refused. */
static void no_empty_shard(void **state)
{
	static const long long budget[] = { 1, 2 };
	json_t *t = tasks_of(budget, 2);
	size_t got[2];
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_shard_deal(t, 3, got, &err), -1);
	assert_string_equal(err.msg, "3 shards of a matrix of 2 tasks: a shard would be empty");
	assert_int_equal(cb_shard_deal(t, 2, got, &err), 0);
	json_decref(t);
}

/* K/N: decimal, 1 <= K <= N <= 4096, nothing else. */
static void parse(void **state)
{
	static const char *const bad[] = { "", "1", "/", "0/1", "2/1", "1/0", "-1/2", "1/2/3", "a/2", "1/ 2",
					   "1/4097", "01/100000", NULL };
	struct cb_shard s;
	struct cb_err err;
	size_t i;

	(void)state;
	assert_int_equal(cb_shard_parse("3/4", "--shard", &s, &err), 0);
	assert_int_equal(s.k, 3);
	assert_int_equal(s.n, 4);
	assert_int_equal(cb_shard_parse("4096/4096", "--shard", &s, &err), 0);
	for (i = 0; bad[i]; i++) {
		assert_int_equal(cb_shard_parse(bad[i], "--shard", &s, &err), -1);
		assert_int_equal(s.n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(longest_first),
		cmocka_unit_test(ties_in_matrix_order),
		cmocka_unit_test(no_empty_shard),
		cmocka_unit_test(parse),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
