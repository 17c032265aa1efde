/* test_strindex.c: the sorted string index behind the duplicate checks of
 * the inventory, the manifest's workload ids and ir/index.tsv (strindex.h):
 * the first repeat in array order is the one named, with its first
 * occurrence, whatever the sort order; lookups find the first occurrence;
 * an empty index finds nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/strindex.h"

/* The repeat that comes first in the array, not the smallest string. */
static void first_repeat_in_array_order(void **state)
{
	const char *v[] = { "b", "a", "c", "a", "b", "a" };
	struct cb_strindex x;
	struct cb_err err = CB_ERR_INIT;
	size_t dup = 99, first = 99;

	(void)state;
	assert_int_equal(cb_strindex_init(&x, v, 6, &err), 0);
	assert_int_equal(cb_strindex_first_dup(&x, &dup, &first), 1);
	assert_int_equal(dup, 3);
	assert_int_equal(first, 1);
	cb_strindex_release(&x);
}

/* All different: no repeat; find gives each position, and nothing else. */
static void unique_and_find(void **state)
{
	const char *v[] = { "op2", "op10", "op1", "" };
	struct cb_strindex x;
	struct cb_err err = CB_ERR_INIT;
	size_t dup, first, pos = 99;

	(void)state;
	assert_int_equal(cb_strindex_init(&x, v, 4, &err), 0);
	assert_int_equal(cb_strindex_first_dup(&x, &dup, &first), 0);
	assert_int_equal(cb_strindex_find(&x, "op10", &pos), 1);
	assert_int_equal(pos, 1);
	assert_int_equal(cb_strindex_find(&x, "", &pos), 1);
	assert_int_equal(pos, 3);
	assert_int_equal(cb_strindex_find(&x, "op", &pos), 0);
	assert_int_equal(cb_strindex_find(&x, "op3", &pos), 0);
	cb_strindex_release(&x);
}

/* A string listed twice is found at its first occurrence. */
static void find_takes_the_first_occurrence(void **state)
{
	const char *v[] = { "x", "y", "x" };
	struct cb_strindex x;
	struct cb_err err = CB_ERR_INIT;
	size_t pos = 99;

	(void)state;
	assert_int_equal(cb_strindex_init(&x, v, 3, &err), 0);
	assert_int_equal(cb_strindex_find(&x, "x", &pos), 1);
	assert_int_equal(pos, 0);
	cb_strindex_release(&x);
}

/* An empty index, and a zeroed one, are valid and find nothing. */
static void empty_and_zeroed(void **state)
{
	struct cb_strindex x, zero = { 0 };
	struct cb_err err = CB_ERR_INIT;
	size_t dup, first, pos;

	(void)state;
	assert_int_equal(cb_strindex_init(&x, NULL, 0, &err), 0);
	assert_int_equal(cb_strindex_first_dup(&x, &dup, &first), 0);
	assert_int_equal(cb_strindex_find(&x, "a", &pos), 0);
	cb_strindex_release(&x);
	assert_int_equal(cb_strindex_first_dup(&zero, &dup, &first), 0);
	assert_int_equal(cb_strindex_find(&zero, "a", &pos), 0);
	cb_strindex_release(&zero);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_repeat_in_array_order),
		cmocka_unit_test(unique_and_find),
		cmocka_unit_test(find_takes_the_first_occurrence),
		cmocka_unit_test(empty_and_zeroed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
