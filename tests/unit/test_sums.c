/* test_sums.c: the seal's text (sums.h): SHA256SUMS lines sorted, each
 * path once (a line listed twice is named with both line numbers); SEAL's
 * header, line count and folders; the prefix search verify uses to tell a
 * folder that holds a sealed file from one added since. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "seal/sums.h"

#define H1 "1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222222222222222222222222222"

static const char *str_key(const void *p)
{
	return *(const char *const *)p;
}

static void sums_are_sorted_and_listed_once(void **state)
{
	static const char good[] = H2 "  tasks/b\n" H1 " *SEAL\n" H1 "  tasks/a\n";
	static const char twice[] = H1 "  a\n" H2 "  b\n" H2 "  a\n";
	struct cb_sums s;
	struct cb_err err;

	(void)state;
	assert_int_equal(cb_sums_parse(good, sizeof(good) - 1, "S", &s, &err), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.v[0].rel, "SEAL");
	assert_string_equal(s.v[1].rel, "tasks/a");
	assert_int_equal(s.v[1].line, 3);
	assert_int_equal(cb_sums_find(&s, "tasks/b"), 2);
	assert_int_equal(cb_sums_find(&s, "tasks"), 3);
	cb_sums_release(&s);

	assert_int_equal(cb_sums_parse(twice, sizeof(twice) - 1, "S", &s, &err), -1);
	assert_string_equal(err.msg, "S:3: a is listed twice (first on line 1)");
	assert_null(s.v);
	assert_int_equal(cb_sums_parse(H1 "  a", 66, "S", &s, &err), -1);
	assert_string_equal(err.msg, "S:1: line is not terminated");
	assert_int_equal(cb_sums_parse(H1 "\n", 65, "S", &s, &err), -1);
	assert_string_equal(err.msg, "S:1: not a sha256sum line");
}

static void seal_record_round_trip_and_refusals(void **state)
{
	char d1[] = "a/b", d2[] = "c", *dirs[] = { d1, d2 };
	struct cb_seal_record r;
	struct cb_err err;
	size_t len;
	char *text = cb_seal_record_format(7, dirs, 2, &len);

	(void)state;
	assert_non_null(text);
	assert_string_equal(text, "caliber-seal 2\nfiles 7\ndir a/b\ndir c\n");
	assert_int_equal(cb_seal_record_parse(text, len, "SEAL", &r, &err), 0);
	assert_int_equal(r.files, 7);
	assert_int_equal(r.ndirs, 2);
	assert_string_equal(r.dirs[1], "c");
	cb_seal_record_release(&r);
	free(text);

	assert_int_equal(cb_seal_record_parse("caliber-seal 3\nfiles 1\n", 23, "SEAL", &r, &err), -1);
	assert_string_equal(err.msg, "SEAL:1: expected 'caliber-seal 2' (the seal formats this caliber reads: 1 without SEAL, 2)");
	assert_int_equal(cb_seal_record_parse("caliber-seal 2\nfiles 01\n", 24, "SEAL", &r, &err), -1);
	assert_string_equal(err.msg, "SEAL:2: expected 'files N', N the lines of SHA256SUMS");
	assert_int_equal(cb_seal_record_parse("caliber-seal 2\nfiles 1\ndir c\ndir a\n", 35, "SEAL", &r, &err), -1);
	assert_string_equal(err.msg, "SEAL:4: folders are listed once each, sorted");
	assert_int_equal(cb_seal_record_parse("caliber-seal 2\n", 15, "SEAL", &r, &err), -1);
	assert_string_equal(err.msg, "SEAL: incomplete: expected 'caliber-seal 2' and 'files N'");
}

/* "a-b" sorts between "a" and "a/x" ('-' < '/'): the search must still see
 * what lies below "a". */
static void below_a_folder_is_found_by_prefix(void **state)
{
	const char *v[] = { "a", "a-b", "a/x", "ab" };

	(void)state;
	assert_true(cb_sorted_has_below(v, 4, sizeof(*v), str_key, "a"));
	assert_false(cb_sorted_has_below(v, 4, sizeof(*v), str_key, "a-b"));
	assert_false(cb_sorted_has_below(v, 4, sizeof(*v), str_key, "a/x"));
	assert_false(cb_sorted_has_below(v, 0, sizeof(*v), str_key, "a"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sums_are_sorted_and_listed_once),
		cmocka_unit_test(seal_record_round_trip_and_refusals),
		cmocka_unit_test(below_a_folder_is_found_by_prefix),
	};

	return cmocka_run_group_tests_name("sums", tests, NULL, NULL);
}
