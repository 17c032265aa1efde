/* test_stats.c: src/stats.c against tests/golden/stats/cases.json, which
 * gen_stats.py writes from an independent pure-Python implementation
 * (seeds, RNG outputs and medians exact; point, lo and hi within a relative
 * 1e-12, since libm's log and exp may differ by an ulp across machines),
 * plus the refusals and the bootstrap's determinism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "tlib.h"

#define REL_TOL 1e-12

static json_t *member(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	if (!v) {
		print_error("cases.json: missing \"%s\"\n", key);
		fail();
	}
	return v;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(member(o, key));

	assert_non_null(s);
	return s;
}

/* A uint64 written as a decimal string (JSON numbers stop at int64). */
static uint64_t u64(const json_t *s)
{
	const char *text = json_string_value(s);
	char *end;
	unsigned long long v;

	assert_non_null(text);
	errno = 0;
	v = strtoull(text, &end, 10);
	assert_int_equal(errno, 0);
	assert_true(end != text && *end == '\0');
	return (uint64_t)v;
}

/* The float.hex() spelling of o[key]; it must agree with o[key]'s repr. */
static double hex(const json_t *o, const char *key)
{
	char hkey[64];
	const char *text;
	char *end;
	double v;

	snprintf(hkey, sizeof(hkey), "%s_hex", key);
	text = str(o, hkey);
	v = strtod(text, &end);
	assert_true(end != text && *end == '\0');
	assert_true(v == json_number_value(member(o, key)));
	return v;
}

static void same_double(const char *what, double got, double want)
{
	if (memcmp(&got, &want, sizeof(got)) != 0) {
		print_error("%s: got %a (%.17g), want %a (%.17g)\n", what, got, got, want, want);
		fail();
	}
}

static void close_double(const char *what, double got, double want)
{
	if (!(fabs(got - want) <= REL_TOL * fabs(want))) {
		print_error("%s: got %a (%.17g), want %a (%.17g), beyond %g relative\n", what, got,
			    got, want, want, REL_TOL);
		fail();
	}
}

/* A JSON array of integers as a fresh int64 array (at least one slot). */
static int64_t *samples(const json_t *a, size_t *n)
{
	size_t i;
	int64_t *v;

	assert_true(json_is_array(a));
	*n = json_array_size(a);
	v = calloc(*n ? *n : 1, sizeof(*v));
	assert_non_null(v);
	for (i = 0; i < *n; i++) {
		assert_true(json_is_integer(json_array_get(a, i)));
		v[i] = (int64_t)json_integer_value(json_array_get(a, i));
	}
	return v;
}

static json_t *doc;

/* The published xoshiro256** outputs from state {1, 2, 3, 4}. */
static void xoshiro_reference(void **state)
{
	const json_t *ref = member(doc, "xoshiro_state_1234");
	const json_t *st = member(ref, "state"), *outs = member(ref, "outputs");
	struct cb_rng r;
	size_t i;

	(void)state;
	for (i = 0; i < 4; i++)
		r.s[i] = u64(json_array_get(st, i));
	assert_int_equal(json_array_size(outs), 10);
	for (i = 0; i < json_array_size(outs); i++)
		assert_true(cb_rng_next(&r) == u64(json_array_get(outs, i)));
}

/* Seeding fills s[0..3] with splitmix64's first four outputs, in order;
 * checked against the published splitmix64 outputs for seed 1234567. */
static void splitmix_reference(void **state)
{
	const json_t *outs = member(doc, "splitmix_1234567");
	struct cb_rng r;
	size_t i;

	(void)state;
	cb_rng_seed(&r, 1234567);
	for (i = 0; i < 4; i++)
		assert_true(r.s[i] == u64(json_array_get(outs, i)));
}

static void median_cases(void **state)
{
	const json_t *cases = member(doc, "median");
	size_t i, n;

	(void)state;
	assert_true(json_array_size(cases) >= 5);
	for (i = 0; i < json_array_size(cases); i++) {
		const json_t *c = json_array_get(cases, i);
		int64_t *v = samples(member(c, "samples"), &n);
		char what[64];
		snprintf(what, sizeof(what), "median case %zu", i);
		same_double(what, cb_median_i64(v, n), hex(c, "median"));
		free(v);
	}
	assert_true(isnan(cb_median_i64(NULL, 0)));
}

static void ppm_cases(void **state)
{
	const json_t *cases = member(doc, "ppm");
	size_t i;

	(void)state;
	assert_true(json_array_size(cases) >= 5);
	for (i = 0; i < json_array_size(cases); i++) {
		const json_t *c = json_array_get(cases, i);
		char *end;
		long long want = strtoll(str(c, "ppm"), &end, 10);
		assert_int_equal(*end, '\0');
		assert_int_equal(cb_ppm(hex(c, "x")), want);
	}
}

/* One golden bootstrap case: seed, RNG stream, medians, point, lo, hi. */
static void speedup_case(void **state)
{
	const json_t *c = *state;
	const json_t *rows = member(c, "rows"), *first8 = member(c, "rng_first8");
	size_t i, nrows = json_array_size(rows);
	struct cb_row_pair *pairs = calloc(nrows, sizeof(*pairs));
	struct cb_speedup sp;
	struct cb_err err;
	struct cb_rng r;
	uint64_t seed;
	char what[256];

	assert_non_null(pairs);
	assert_int_equal(cb_bootstrap_seed(str(c, "task"), str(c, "order"), &seed, &err), 0);
	assert_true(seed == u64(member(c, "seed")));
	cb_rng_seed(&r, seed);
	assert_int_equal(json_array_size(first8), 8);
	for (i = 0; i < 8; i++)
		assert_true(cb_rng_next(&r) == u64(json_array_get(first8, i)));
	for (i = 0; i < nrows; i++) {
		const json_t *row = json_array_get(rows, i);
		pairs[i].row = str(row, "row");
		pairs[i].base = samples(member(row, "base"), &pairs[i].nbase);
		pairs[i].other = samples(member(row, "other"), &pairs[i].nother);
		snprintf(what, sizeof(what), "row %s: median of base", pairs[i].row);
		same_double(what, cb_median_i64(pairs[i].base, pairs[i].nbase), hex(row, "median_base"));
		snprintf(what, sizeof(what), "row %s: median of other", pairs[i].row);
		same_double(what, cb_median_i64(pairs[i].other, pairs[i].nother),
			    hex(row, "median_other"));
	}
	if (cb_speedup(pairs, nrows, json_number_value(member(c, "confidence")), seed,
		       (int)json_integer_value(member(c, "resamples")), &sp, &err) < 0) {
		print_error("cb_speedup: %s\n", err.msg);
		fail();
	}
	assert_int_equal(sp.nrows, nrows);
	close_double("point", sp.point, hex(c, "point"));
	close_double("lo", sp.lo, hex(c, "lo"));
	close_double("hi", sp.hi, hex(c, "hi"));
	for (i = 0; i < nrows; i++) {
		free((void *)pairs[i].base);
		free((void *)pairs[i].other);
	}
	free(pairs);
}

static const int64_t base3[] = { 100, 104, 98 }, other3[] = { 90, 91, 95 };

/* cb_speedup's message for rows[0..nrows) and the given settings. */
static const char *refusal(const struct cb_row_pair *rows, size_t nrows, double confidence,
			   int resamples)
{
	static struct cb_err err;
	struct cb_speedup sp;

	assert_int_equal(cb_speedup(rows, nrows, confidence, 1, resamples, &sp, &err), -1);
	return err.msg;
}

static void refusals(void **state)
{
	const int64_t bad[] = { 100, -4, 98 };
	struct cb_row_pair ok = { "mm[64]", base3, 3, other3, 3 };
	struct cb_row_pair empty_base = { "mm[128]", base3, 0, other3, 3 };
	struct cb_row_pair empty_other = { "mm[256]", base3, 3, other3, 0 };
	struct cb_row_pair negative = { "mm[512]", base3, 3, bad, 3 };
	struct cb_row_pair two[2];
	struct cb_err err;
	uint64_t seed;

	(void)state;
	assert_string_equal(refusal(&ok, 0, 0.95, 10), "no rows to compare");
	assert_string_equal(refusal(&ok, 1, 0, 10), "confidence 0 is outside (0, 1)");
	assert_string_equal(refusal(&ok, 1, 1, 10), "confidence 1 is outside (0, 1)");
	assert_string_equal(refusal(&ok, 1, -0.5, 10), "confidence -0.5 is outside (0, 1)");
	assert_string_equal(refusal(&ok, 1, NAN, 10), "confidence nan is outside (0, 1)");
	assert_string_equal(refusal(&ok, 1, 0.95, 0), "resamples 0 is below 1");
	assert_string_equal(refusal(&empty_base, 1, 0.95, 10),
			    "row 'mm[128]': the baseline has no samples");
	two[0] = ok;
	two[1] = empty_other;
	assert_string_equal(refusal(two, 2, 0.95, 10),
			    "row 'mm[256]': the other cell has no samples");
	assert_string_equal(refusal(&negative, 1, 0.95, 10),
			    "row 'mm[512]': other cell sample 2 is -4 ns, not positive");
	assert_int_equal(cb_bootstrap_seed("t", "a:b", &seed, &err), -1);
	assert_string_equal(err.msg, "bootstrap seed: order 'a:b' contains ':'");
}

/* Same inputs and seed give the same bits; the seed depends on the task
 * and on the order. */
static void determinism(void **state)
{
	struct cb_row_pair rows[2] = { { "x", base3, 3, other3, 3 }, { "y", other3, 3, base3, 2 } };
	struct cb_speedup a, b, c;
	struct cb_err err;
	uint64_t s1, s2, s3;

	(void)state;
	assert_int_equal(cb_bootstrap_seed("ops/t.py::test_a", "a", &s1, &err), 0);
	assert_int_equal(cb_bootstrap_seed("ops/t.py::test_b", "a", &s2, &err), 0);
	assert_int_equal(cb_bootstrap_seed("ops/t.py::test_a", "b", &s3, &err), 0);
	assert_true(s1 != s2 && s1 != s3 && s2 != s3);
	assert_int_equal(cb_speedup(rows, 2, 0.95, s1, 500, &a, &err), 0);
	assert_int_equal(cb_speedup(rows, 2, 0.95, s1, 500, &b, &err), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(cb_speedup(rows, 2, 0.95, s2, 500, &c, &err), 0);
	same_double("point under another seed", c.point, a.point);
	assert_true(c.lo != a.lo || c.hi != a.hi);
}

/* qsort order of int64 samples, for the reference below. */
static int cmp_sample(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* A draw from n samples, as stats.h states the rule. */
static size_t draw_index(struct cb_rng *r, size_t n)
{
	return (size_t)(cb_rng_next(r) % n);
}

/* The bootstrap as docs/formats.md states it, the plain way: for each
 * resample and row, draw nbase then nother samples with draw_index, sort
 * each draw and take its median, average the log ratios. Returns the
 * resampled speedups in draw order (caller frees). */
static double *reference_boot(const struct cb_row_pair *rows, size_t nrows, uint64_t seed,
			      int resamples)
{
	double *boot = calloc((size_t)resamples, sizeof(*boot));
	int64_t draw[400];
	struct cb_rng r;
	int b;

	assert_non_null(boot);
	cb_rng_seed(&r, seed);
	for (b = 0; b < resamples; b++) {
		double acc = 0;
		size_t i;
		for (i = 0; i < nrows; i++) {
			double m[2];
			int side;
			for (side = 0; side < 2; side++) {
				const int64_t *v = side ? rows[i].other : rows[i].base;
				size_t n = side ? rows[i].nother : rows[i].nbase, k;
				assert_true(n <= 400);
				for (k = 0; k < n; k++)
					draw[k] = v[draw_index(&r, n)];
				qsort(draw, n, sizeof(*draw), cmp_sample);
				m[side] = cb_median_i64(draw, n);
			}
			acc += log(m[0] / m[1]);
		}
		boot[b] = exp(acc / (double)nrows) - 1;
	}
	return boot;
}

static int cmp_real(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* numpy's default ("linear") quantile q of sorted x[0..n). */
static double linear_quantile(const double *x, size_t n, double q)
{
	double h = (double)(n - 1) * q, fl = floor(h);
	size_t i = (size_t)fl;

	return i + 1 >= n ? x[n - 1] : x[i] + (h - fl) * (x[i + 1] - x[i]);
}

/* cb_speedup finds each resample's median from counts of ranks instead of
 * sorting the drawn samples, and reduces its draws without dividing: over
 * random rows of 1 to 24 samples (1 to 400 in every fourth trial), odd and
 * even counts, many ties, values near 2^53, its interval must equal, bit
 * for bit, the quantiles of the plainly computed resamples. */
static void ranks_match_plain_resampling(void **state)
{
	struct cb_rng gen;
	int trial;

	(void)state;
	cb_rng_seed(&gen, 20261130);
	for (trial = 0; trial < 300; trial++) {
		struct cb_row_pair rows[4];
		static int64_t pool[4][2][400];
		size_t nrows = 1 + draw_index(&gen, 4), i, k;
		int64_t spread = trial % 3 == 0 ? 3 : trial % 3 == 1 ? 1000 : (int64_t)1 << 40;
		int64_t least = trial % 5 == 0 ? ((int64_t)1 << 53) - 5000 : 1000;
		int resamples = 50 + (int)draw_index(&gen, 150);
		struct cb_speedup sp;
		struct cb_err err;
		double *boot;
		char what[64];

		for (i = 0; i < nrows; i++) {
			size_t most = trial % 4 == 3 ? 400 : 24;
			size_t nb = 1 + draw_index(&gen, most), no = 1 + draw_index(&gen, most);
			for (k = 0; k < nb; k++)
				pool[i][0][k] = least + (int64_t)draw_index(&gen, (size_t)spread);
			for (k = 0; k < no; k++)
				pool[i][1][k] = least + (int64_t)draw_index(&gen, (size_t)spread);
			rows[i] = (struct cb_row_pair){ "r", pool[i][0], nb, pool[i][1], no };
		}
		assert_int_equal(cb_speedup(rows, nrows, 0.9, (uint64_t)trial, resamples, &sp, &err), 0);
		boot = reference_boot(rows, nrows, (uint64_t)trial, resamples);
		qsort(boot, (size_t)resamples, sizeof(*boot), cmp_real);
		snprintf(what, sizeof(what), "trial %d lo", trial);
		same_double(what, sp.lo, linear_quantile(boot, (size_t)resamples, (1 - 0.9) / 2));
		snprintf(what, sizeof(what), "trial %d hi", trial);
		same_double(what, sp.hi, linear_quantile(boot, (size_t)resamples, (1 + 0.9) / 2));
		free(boot);
	}
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(xoshiro_reference), cmocka_unit_test(splitmix_reference),
		cmocka_unit_test(median_cases),      cmocka_unit_test(ppm_cases),
		cmocka_unit_test(refusals),          cmocka_unit_test(determinism),
		cmocka_unit_test(ranks_match_plain_resampling),
	};
	size_t nfixed = sizeof(fixed) / sizeof(fixed[0]), n, i;
	json_error_t jerr;
	const json_t *cases;
	struct CMUnitTest *tests;
	char (*names)[128];
	int rc;

	doc = json_load_file(tl_path("tests/golden/stats/cases.json"), JSON_REJECT_DUPLICATES, &jerr);
	if (!doc) {
		fprintf(stderr, "cases.json:%d: %s\n", jerr.line, jerr.text);
		return 1;
	}
	cases = json_object_get(doc, "speedup");
	n = json_array_size(cases);
	tests = calloc(nfixed + n, sizeof(*tests));
	names = calloc(n ? n : 1, sizeof(*names));
	if (!tests || !names || n < 12)
		abort();
	memcpy(tests, fixed, sizeof(fixed));
	for (i = 0; i < n; i++) {
		json_t *c = json_array_get(cases, i);
		snprintf(names[i], sizeof(names[i]), "speedup %s",
			 json_string_value(json_object_get(c, "name")));
		tests[nfixed + i].name = names[i];
		tests[nfixed + i].test_func = speedup_case;
		tests[nfixed + i].initial_state = c;
	}
	rc = _cmocka_run_group_tests("stats", tests, nfixed + n, NULL, NULL);
	free(names);
	free(tests);
	json_decref(doc);
	return rc;
}
