/* test_reply.c: the worker reply parser (reply.h). A table of reply lines
 * and, for each, the exit code it is taken with or the exact message of
 * how it breaks the protocol, for the request 'gain/a/candidate/2' ("%J"
 * in a message stands for jansson's words, which its versions word
 * differently). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "run/reply.h"

#define WANT "gain/a/candidate/2"

static const struct {
	const char *line;
	size_t len;                 /* 0: strlen(line) */
	long long exit;             /* when taken */
	const char *error;          /* the worker's error, when taken with one */
	const char *refused;        /* the message, when refused */
} cases[] = {
	{ "{\"exit\": 0, \"id\": \"" WANT "\", \"phase\": \"a\", \"task\": \"gain\"}", 0, 0, NULL, NULL },
	{ "{\"exit\": 3, \"error\": \"bad request\", \"id\": \"" WANT "\", \"more\": [1]}", 0, 3, "bad request", NULL },
	{ "{\"exit\": 0, \"id\": \"gain/a/candidate/1\"}", 0, 0, NULL,
	  "a reply to another request (id 'gain/a/candidate/1', this request 'gain/a/candidate/2'): a stale, extra or forged reply" },
	{ "{\"exit\": 0, \"phase\": \"a\", \"task\": \"gain\"}", 0, 0, NULL,
	  "a reply without the request's id 'gain/a/candidate/2': {\"exit\": 0, \"phase\": \"a\", \"task\": \"gain\"}" },
	{ "{\"exit\": 0, \"id\": 2}", 0, 0, NULL,
	  "a reply whose id is not a string (this request 'gain/a/candidate/2'): {\"exit\": 0, \"id\": 2}" },
	{ "{\"exit\": 256, \"id\": \"" WANT "\"}", 0, 0, NULL,
	  "malformed reply (exit is not an exit code 0..255): {\"exit\": 256, \"id\": \"gain/a/candidate/2\"}" },
	{ "{\"exit\": \"0\", \"id\": \"" WANT "\"}", 0, 0, NULL,
	  "malformed reply (exit is not an exit code 0..255): {\"exit\": \"0\", \"id\": \"gain/a/candidate/2\"}" },
	{ "{\"exit\": 0, \"error\": 1, \"id\": \"" WANT "\"}", 0, 0, NULL,
	  "malformed reply (error is not a string): {\"exit\": 0, \"error\": 1, \"id\": \"gain/a/candidate/2\"}" },
	{ "{\"exit\": 0, \"exit\": 1, \"id\": \"" WANT "\"}", 0, 0, NULL,
	  "malformed reply (%J): {\"exit\": 0, \"exit\": 1, \"id\": \"gain/a/candidate/2\"}" },
	{ "{\"exit\": 0, \"id\": \"" WANT "\", \"phase\": \"a\", \"task\": \"flat\"}", 0, 0, NULL,
	  "a reply to request 'gain/a/candidate/2' whose task is not the request's: a forged reply: "
	  "{\"exit\": 0, \"id\": \"gain/a/candidate/2\", \"phase\": \"a\", \"task\": \"flat\"}" },
	{ "{\"exit\": 0, \"id\": \"" WANT "\", \"phase\": \"b\", \"task\": \"gain\"}", 0, 0, NULL,
	  "a reply to request 'gain/a/candidate/2' whose phase is not the request's: a forged reply: "
	  "{\"exit\": 0, \"id\": \"gain/a/candidate/2\", \"phase\": \"b\", \"task\": \"gain\"}" },
	{ "{\"exit\": 0, \"id\": \"" WANT "\", \"task\": \"gai\"}", 0, 0, NULL,
	  "a reply to request 'gain/a/candidate/2' whose task is not the request's: a forged reply: "
	  "{\"exit\": 0, \"id\": \"gain/a/candidate/2\", \"task\": \"gai\"}" },
	{ "{\"exit\": 0, \"id\": \"" WANT "\", \"task\": 1}", 0, 0, NULL,
	  "a reply to request 'gain/a/candidate/2' whose task is not the request's: a forged reply: "
	  "{\"exit\": 0, \"id\": \"gain/a/candidate/2\", \"task\": 1}" },
	{ "[0]", 0, 0, NULL, "malformed reply (not a JSON object): [0]" },
	{ "{\"exit\": 0, \"id\": \"" WANT "\"}\0garbage", 47, 0, NULL,
	  "malformed reply (a NUL byte in the line): {\"exit\": 0, \"id\": \"gain/a/candidate/2\"}\\x00garbage" },
	{ "\xff{", 0, 0, NULL,
	  "malformed reply (%J): \\xff{" },
};

/* Whether msg is want, "%J" in want standing for any text. */
static int matches(const char *msg, const char *want)
{
	const char *j = strstr(want, "%J");
	size_t pre, post;

	if (!j)
		return strcmp(msg, want) == 0;
	pre = (size_t)(j - want);
	post = strlen(j + 2);
	return strlen(msg) >= pre + post && strncmp(msg, want, pre) == 0 &&
	       strcmp(msg + strlen(msg) - post, j + 2) == 0;
}

static void table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cb_reply r;
		struct cb_err err = CB_ERR_INIT;
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].line);
		int rc = cb_reply_parse(cases[i].line, len, WANT, &r, &err);

		if (cases[i].refused) {
			if (rc != -1 || !matches(err.msg, cases[i].refused))
				fail_msg("case %zu: got rc %d, message\n  %s\nwant\n  %s", i, rc, err.msg, cases[i].refused);
			assert_null(r.error);
			continue;
		}
		if (rc != 0)
			fail_msg("case %zu: refused: %s", i, err.msg);
		assert_int_equal(r.exit, cases[i].exit);
		if (cases[i].error)
			assert_string_equal(r.error, cases[i].error);
		else
			assert_null(r.error);
		cb_reply_release(&r);
	}
}

/* A reply longer than a message may quote is quoted in part, with "...". */
static void long_reply_is_cut(void **state)
{
	char line[1024];
	struct cb_reply r;
	struct cb_err err = CB_ERR_INIT;

	(void)state;
	memset(line, 'x', sizeof(line));
	assert_int_equal(cb_reply_parse(line, sizeof(line), WANT, &r, &err), -1);
	assert_non_null(strstr(err.msg, "xxx..."));
	assert_true(strlen(err.msg) < 400);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table),
		cmocka_unit_test(long_reply_is_cut),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
