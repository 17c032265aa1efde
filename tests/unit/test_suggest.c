/* test_suggest.c: "did you mean" (suggest.h): the edit distance counts a
 * swap of neighbours as one edit; a suggestion is the nearest word within
 * a distance that grows with the word, else the one word it begins; a
 * word far from all, a prefix of several, or one that is listed gets
 * none. Each case is a row: word, the words, the suggestion expected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "base/suggest.h"

static void distances(void **state)
{
	static const struct {
		const char *a, *b;
		size_t d;
	} rows[] = {
		{ "", "", 0 }, { "", "abc", 3 }, { "abc", "", 3 }, { "report", "report", 0 },
		{ "reprot", "report", 1 },      /* a swap is one edit */
		{ "cdua", "cuda", 1 }, { "matmull", "matmul", 1 }, { "threshold", "thresholds", 1 },
		{ "kitten", "sitting", 3 }, { "-O", "-o", 1 }, { "ca", "abc", 3 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t d = cb_edit_distance(rows[i].a, rows[i].b);
		if (d != rows[i].d)
			fail_msg("distance(%s, %s) = %zu, expected %zu", rows[i].a, rows[i].b, d, rows[i].d);
	}
}

static void suggestions(void **state)
{
	static const char *const commands[] = { "prepare", "demo", "run", "worker", "plan", "verify", "digest",
						"topology", "reaccount", "inventory", "report", "diff", "compare",
						"merge", "slurm", "pin" };
	static const char *const keys[] = { "kind", "graph_capture", "warmup_ms", "rep_ms", "repeats", "sessions",
					    "throttle_floor" };
	static const char *const few[] = { "matmul", "matmul_bias", "matmul_bias_gelu", "bmm" };
	static const struct {
		const char *word;
		const char *const *words;
		size_t n;
		const char *want;   /* NULL: no suggestion */
	} rows[] = {
		{ "reprot", commands, 16, "report" },
		{ "verfy", commands, 16, "verify" },
		{ "rn", commands, 16, "run" },
		{ "prep", commands, 16, "prepare" },        /* the one command it begins */
		{ "report", commands, 16, NULL },           /* listed: nothing to suggest */
		{ "frobnicate", commands, 16, NULL },
		{ "warmup", keys, 7, "warmup_ms" },
		{ "repeat", keys, 7, "repeats" },
		{ "matmull", few, 4, "matmul" },
		{ "matmul_bi", few, 4, "matmul_bias" },     /* nearest (2), though a prefix of two */
		{ "matm", few, 4, "matmul" },               /* two letters short */
		{ "mat", few, 4, NULL },                    /* a prefix of three, too far from each */
		{ "x", few, 4, NULL },
		{ "anything", NULL, 0, NULL },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *got = cb_suggest(rows[i].word, rows[i].words, rows[i].n);
		if ((got == NULL) != (rows[i].want == NULL) || (got && strcmp(got, rows[i].want) != 0))
			fail_msg("suggest(%s) = %s, expected %s", rows[i].word, got ? got : "(none)",
				 rows[i].want ? rows[i].want : "(none)");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(distances),
		cmocka_unit_test(suggestions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
