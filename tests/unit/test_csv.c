/* test_csv.c: the RFC 4180 reader against tests/golden/csv (input .csv,
 * expected .expect: one line per record "line N: [f1][f2]", newlines and
 * carriage returns inside fields shown as \n and \r; or "error: <message>"),
 * plus the writer's round trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/csv.h"
#include "tlib.h"

/* Render a parse result (or its error) the way .expect files spell it. */
static char *render(const char *buf, size_t len, const char *name)
{
	struct cb_buf out = CB_BUF_INIT;
	struct cb_csv csv;
	struct cb_err err;
	size_t r, f;

	if (cb_csv_parse(buf, len, name, &csv, &err) < 0) {
		cb_buf_addf(&out, "error: %s\n", err.msg);
		return cb_buf_detach(&out, NULL);
	}
	for (r = 0; r < csv.nrows; r++) {
		cb_buf_addf(&out, "line %zu: ", csv.rows[r].line);
		for (f = 0; f < csv.rows[r].nfields; f++) {
			const char *s;
			cb_buf_adds(&out, "[");
			for (s = csv.rows[r].fields[f]; *s; s++) {
				if (*s == '\n')
					cb_buf_adds(&out, "\\n");
				else if (*s == '\r')
					cb_buf_adds(&out, "\\r");
				else
					cb_buf_add(&out, s, 1);
			}
			cb_buf_adds(&out, "]");
		}
		cb_buf_adds(&out, "\n");
	}
	cb_csv_release(&csv);
	return cb_buf_detach(&out, NULL);
}

static void golden_case(void **state)
{
	const char *name = *state;
	char dir[4096], path[4200];
	char *input, *expect, *got;
	size_t len;

	snprintf(dir, sizeof(dir), "%s", tl_path("tests/golden/csv"));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	input = tl_slurp(path, &len);
	snprintf(path, sizeof(path), "%s/%.*s.expect", dir, (int)(strlen(name) - 4), name);
	expect = tl_slurp(path, NULL);
	got = render(input, len, name);
	assert_string_equal(expect, got);
	free(input);
	free(expect);
	free(got);
}

/* Whatever the writer quotes, the reader gives back unchanged. */
static void writer_round_trip(void **state)
{
	const char *fields[] = { "plain", "a,b", "say \"hi\"", "two\nlines", "cr\r\nlf", "" };
	struct cb_buf b = CB_BUF_INIT;
	struct cb_csv csv;
	struct cb_err err;
	size_t i, n = sizeof(fields) / sizeof(fields[0]);
	char *text;

	(void)state;
	for (i = 0; i < n; i++) {
		if (i)
			cb_buf_adds(&b, ",");
		cb_csv_put_field(&b, fields[i]);
	}
	cb_buf_adds(&b, "\r\n");
	text = cb_buf_detach(&b, NULL);
	assert_int_equal(cb_csv_parse(text, strlen(text), "rt", &csv, &err), 0);
	assert_int_equal(csv.nrows, 1);
	assert_int_equal(csv.rows[0].nfields, n);
	for (i = 0; i < n; i++)
		assert_string_equal(csv.rows[0].fields[i], fields[i]);
	cb_csv_release(&csv);
	free(text);
}

int main(void)
{
	size_t n, i;
	char **names = tl_glob(tl_path("tests/golden/csv"), ".csv", &n);
	struct CMUnitTest *tests = calloc(n + 1, sizeof(*tests));
	int rc;

	for (i = 0; i < n; i++) {
		tests[i].name = names[i];
		tests[i].test_func = golden_case;
		tests[i].initial_state = names[i];
	}
	tests[n].name = "writer_round_trip";
	tests[n].test_func = writer_round_trip;
	rc = _cmocka_run_group_tests("csv", tests, n + 1, NULL, NULL);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(tests);
	return rc;
}
