/* libFuzzer target: the Python scanner of `caliber inventory` on arbitrary
 * bytes. Besides not crashing, what it returns must hold together: every
 * error names the file and a line inside it; every test a non-empty node
 * id, unique in the file, and a line inside it; marks are non-empty ASCII
 * identifiers, unique per test; dtypes are listed only when literal, sorted
 * and unique. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory_scan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Lines in data as the scanner counts them: LF, CRLF and lone CR end one. */
static size_t count_lines(const uint8_t *data, size_t size)
{
	size_t i, n = 1;

	for (i = 0; i < size; i++)
		if (data[i] == '\n' || (data[i] == '\r' && (i + 1 == size || data[i + 1] != '\n')))
			n++;
	return n;
}

static int ascii_ident(const char *s)
{
	size_t i;

	for (i = 0; s[i]; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_' ||
		      (i && s[i] >= '0' && s[i] <= '9')))
			return 0;
	return i > 0;
}

static void check_test(const struct cb_py_test *t, size_t lines)
{
	size_t k, j;

	if (!t->id[0] || t->line < 1 || t->line > lines)
		abort();
	for (k = 0; k < t->nmarks; k++) {
		if (!ascii_ident(t->marks[k]))
			abort();
		for (j = 0; j < k; j++)
			if (strcmp(t->marks[j], t->marks[k]) == 0)
				abort();
	}
	if (t->ndtypes && t->dtype_kind != CB_PY_DTYPES_LITERAL)
		abort();
	for (k = 1; k < t->ndtypes; k++)
		if (strcmp(t->dtypes[k - 1], t->dtypes[k]) >= 0)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cb_py_file f;
	struct cb_err err;
	size_t lines = count_lines(data, size), i, j;
	char *end;

	if (cb_pyscan((const char *)data, size, "fuzz.py", &f, &err) < 0) {
		if (strncmp(err.msg, "fuzz.py:", 8) != 0)
			abort();
		if (strncmp(err.msg, "fuzz.py: out of memory", 22) != 0 &&
		    (strtoul(err.msg + 8, &end, 10) < 1 || strtoul(err.msg + 8, NULL, 10) > lines ||
		     *end != ':'))
			abort();
		return 0;
	}
	for (i = 0; i < f.ntests; i++) {
		check_test(&f.tests[i], lines);
		for (j = 0; j < i; j++)
			if (strcmp(f.tests[j].id, f.tests[i].id) == 0)
				abort();
	}
	cb_py_file_free(&f);
	return 0;
}
