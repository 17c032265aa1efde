/* test_stats.c: src/account/stats.c against tests/golden/stats/cases.json, which
 * gen_stats.py writes from an independent pure-Python implementation
 * (seeds, RNG outputs and medians exact; point, lo and hi within a relative
 * 1e-12, since libm's log and exp may differ by an ulp across machines),
 * plus the refusals, the bootstrap's determinism, and its fast resampling
 * against the plain one, with one session per cell and with several. */
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

#include "account/stats.h"
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

/* A draw from n samples, as stats.h states the rule. */
static size_t draw_index(struct cb_rng *r, size_t n)
{
	return (size_t)(cb_rng_next(r) % n);
}

/* One cell of a golden case, side "base" or "other": each row holds one
 * session under "<side>" or several under "<side>_sessions", the same
 * count in every row. The samples belong to the struct. */
struct golden_cell {
	struct cb_samples *at;
	struct cb_cell_samples c;
};

static void golden_cell_load(const json_t *rows, const char *side, struct golden_cell *g)
{
	size_t nrows = json_array_size(rows), ns = 0, r, s;
	char key[32];

	snprintf(key, sizeof(key), "%s_sessions", side);
	for (r = 0; r < nrows; r++) {
		const json_t *row = json_array_get(rows, r), *many = json_object_get(row, key);
		size_t here = many ? json_array_size(many) : 1;
		if (r == 0) {
			ns = here;
			g->at = calloc(nrows * ns, sizeof(*g->at));
			assert_non_null(g->at);
		}
		assert_int_equal(here, ns);
		for (s = 0; s < ns; s++) {
			struct cb_samples *x = &g->at[r * ns + s];
			x->v = samples(many ? json_array_get(many, s) : member(row, side), &x->n);
		}
	}
	g->c = (struct cb_cell_samples){ g->at, nrows, ns };
}

static void golden_cell_free(struct golden_cell *g)
{
	size_t i;

	for (i = 0; i < g->c.nrows * g->c.nsessions; i++)
		free((void *)g->at[i].v);
	free(g->at);
}

/* Median of row r's samples pooled over the cell's sessions. */
static double pooled_median(const struct cb_cell_samples *c, size_t r)
{
	size_t s, n = 0;
	int64_t *all;
	double m;

	for (s = 0; s < c->nsessions; s++)
		n += c->at[r * c->nsessions + s].n;
	all = malloc(n * sizeof(*all));
	assert_non_null(all);
	for (n = 0, s = 0; s < c->nsessions; s++) {
		const struct cb_samples *x = &c->at[r * c->nsessions + s];
		memcpy(all + n, x->v, x->n * sizeof(*all));
		n += x->n;
	}
	m = cb_median_i64(all, n);
	free(all);
	return m;
}

/* A case with sessions also gives its first resample: the session indices
 * drawn first (none for a cell of one session), checked against the
 * seeded generator, and its speedup, which cb_speedup with one resample
 * must give as both interval bounds. */
static void first_resample(const json_t *c, const char *const *names, const struct golden_cell *g,
			   uint64_t seed)
{
	const json_t *fr = member(c, "first_resample");
	static const char *const keys[2] = { "base_sessions_drawn", "other_sessions_drawn" };
	struct cb_speedup sp;
	struct cb_err err;
	struct cb_rng r;
	size_t j;
	int side;

	cb_rng_seed(&r, seed);
	for (side = 0; side < 2; side++) {
		const json_t *drawn = member(fr, keys[side]);
		size_t ns = g[side].c.nsessions;
		assert_int_equal(json_array_size(drawn), ns > 1 ? ns : 0);
		for (j = 0; j < json_array_size(drawn); j++)
			assert_int_equal(json_integer_value(json_array_get(drawn, j)),
					 draw_index(&r, ns));
	}
	assert_int_equal(cb_speedup(names, &g[0].c, &g[1].c,
				    json_number_value(member(c, "confidence")), seed, 1, &sp, &err),
			 0);
	close_double("first resample (lo)", sp.lo, hex(fr, "speedup"));
	close_double("first resample (hi)", sp.hi, hex(fr, "speedup"));
}

/* One golden bootstrap case: seed, RNG stream, pooled medians, point, lo,
 * hi, and the first resample where the case has sessions. */
static void speedup_case(void **state)
{
	const json_t *c = *state;
	const json_t *rows = member(c, "rows"), *first8 = member(c, "rng_first8");
	size_t i, nrows = json_array_size(rows);
	const char **names = calloc(nrows, sizeof(*names));
	struct golden_cell g[2] = { { 0 }, { 0 } };
	struct cb_speedup sp;
	struct cb_err err;
	struct cb_rng r;
	uint64_t seed;
	char what[256];

	assert_non_null(names);
	assert_int_equal(cb_bootstrap_seed(str(c, "task"), str(c, "order"), &seed, &err), 0);
	assert_true(seed == u64(member(c, "seed")));
	cb_rng_seed(&r, seed);
	assert_int_equal(json_array_size(first8), 8);
	for (i = 0; i < 8; i++)
		assert_true(cb_rng_next(&r) == u64(json_array_get(first8, i)));
	golden_cell_load(rows, "base", &g[0]);
	golden_cell_load(rows, "other", &g[1]);
	for (i = 0; i < nrows; i++) {
		const json_t *row = json_array_get(rows, i);
		names[i] = str(row, "row");
		snprintf(what, sizeof(what), "row %s: median of base", names[i]);
		same_double(what, pooled_median(&g[0].c, i), hex(row, "median_base"));
		snprintf(what, sizeof(what), "row %s: median of other", names[i]);
		same_double(what, pooled_median(&g[1].c, i), hex(row, "median_other"));
	}
	if (cb_speedup(names, &g[0].c, &g[1].c, json_number_value(member(c, "confidence")), seed,
		       (int)json_integer_value(member(c, "resamples")), &sp, &err) < 0) {
		print_error("cb_speedup: %s\n", err.msg);
		fail();
	}
	assert_int_equal(sp.nrows, nrows);
	close_double("point", sp.point, hex(c, "point"));
	close_double("lo", sp.lo, hex(c, "lo"));
	close_double("hi", sp.hi, hex(c, "hi"));
	if (json_object_get(c, "first_resample"))
		first_resample(c, names, g, seed);
	golden_cell_free(&g[0]);
	golden_cell_free(&g[1]);
	free(names);
}

static const int64_t base3[] = { 100, 104, 98 }, other3[] = { 90, 91, 95 };
static const char *const names4[] = { "mm[64]", "mm[128]", "mm[256]", "mm[512]" };

/* cb_speedup's message for the two cells (rows named by names4) and the
 * given settings. */
static const char *refusal(struct cb_cell_samples base, struct cb_cell_samples other,
			   double confidence, int resamples)
{
	static struct cb_err err;
	struct cb_speedup sp;

	assert_int_equal(cb_speedup(names4, &base, &other, confidence, 1, resamples, &sp, &err), -1);
	return err.msg;
}

static void refusals(void **state)
{
	const int64_t bad[] = { 100, -4, 98 };
	const struct cb_samples ok = { base3, 3 }, ok2 = { other3, 3 }, empty = { base3, 0 },
				neg = { bad, 3 };
	/* Row by row, two rows of one session. */
	const struct cb_samples ok_ok[2] = { ok, ok2 }, ok_empty[2] = { ok, empty },
				ok_neg[2] = { ok2, neg };
	/* One row, three sessions. */
	const struct cb_samples three_empty[3] = { ok, empty, ok2 },
				three_neg[3] = { ok, ok2, neg };
	struct cb_cell_samples one = { &ok, 1, 1 }, two = { ok_ok, 2, 1 };
	struct cb_err err;
	uint64_t seed;

	(void)state;
	assert_string_equal(refusal(two, one, 0.95, 10), "the baseline has 2 rows, the other cell 1");
	assert_string_equal(refusal((struct cb_cell_samples){ &ok, 0, 1 },
				    (struct cb_cell_samples){ &ok, 0, 1 }, 0.95, 10),
			    "no rows to compare");
	assert_string_equal(refusal(one, one, 0, 10), "confidence 0 is outside (0, 1)");
	assert_string_equal(refusal(one, one, 1, 10), "confidence 1 is outside (0, 1)");
	assert_string_equal(refusal(one, one, -0.5, 10), "confidence -0.5 is outside (0, 1)");
	assert_string_equal(refusal(one, one, NAN, 10), "confidence nan is outside (0, 1)");
	assert_string_equal(refusal(one, one, 0.95, 0), "resamples 0 is below 1");
	assert_string_equal(refusal((struct cb_cell_samples){ &ok, 1, 0 }, one, 0.95, 10),
			    "the baseline has no sessions");
	assert_string_equal(refusal(one, (struct cb_cell_samples){ &ok, 1, 0 }, 0.95, 10),
			    "the other cell has no sessions");
	assert_string_equal(refusal((struct cb_cell_samples){ ok_empty, 2, 1 }, two, 0.95, 10),
			    "row 'mm[128]': the baseline has no samples");
	assert_string_equal(refusal(two, (struct cb_cell_samples){ ok_empty, 2, 1 }, 0.95, 10),
			    "row 'mm[128]': the other cell has no samples");
	assert_string_equal(refusal(two, (struct cb_cell_samples){ ok_neg, 2, 1 }, 0.95, 10),
			    "row 'mm[128]': other cell sample 2 is -4 ns, not positive");
	assert_string_equal(refusal((struct cb_cell_samples){ three_empty, 1, 3 }, one, 0.95, 10),
			    "row 'mm[64]': the baseline session 2 has no samples");
	assert_string_equal(refusal(one, (struct cb_cell_samples){ three_neg, 1, 3 }, 0.95, 10),
			    "row 'mm[64]': other cell session 3 sample 2 is -4 ns, not positive");
	assert_int_equal(cb_bootstrap_seed("t", "a:b", &seed, &err), -1);
	assert_string_equal(err.msg, "bootstrap seed: order 'a:b' contains ':'");
}

/* Same inputs and seed give the same bits; the seed depends on the task
 * and on the order. */
static void determinism(void **state)
{
	const struct cb_samples sb[2] = { { base3, 3 }, { other3, 3 } },
				so[2] = { { other3, 3 }, { base3, 2 } };
	const struct cb_cell_samples base = { sb, 2, 1 }, other = { so, 2, 1 };
	struct cb_speedup a, b, c;
	struct cb_err err;
	uint64_t s1, s2, s3;

	(void)state;
	assert_int_equal(cb_bootstrap_seed("ops/t.py::test_a", "a", &s1, &err), 0);
	assert_int_equal(cb_bootstrap_seed("ops/t.py::test_b", "a", &s2, &err), 0);
	assert_int_equal(cb_bootstrap_seed("ops/t.py::test_a", "b", &s3, &err), 0);
	assert_true(s1 != s2 && s1 != s3 && s2 != s3);
	assert_int_equal(cb_speedup(names4, &base, &other, 0.95, s1, 500, &a, &err), 0);
	assert_int_equal(cb_speedup(names4, &base, &other, 0.95, s1, 500, &b, &err), 0);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(cb_speedup(names4, &base, &other, 0.95, s2, 500, &c, &err), 0);
	same_double("point under another seed", c.point, a.point);
	assert_true(c.lo != a.lo || c.hi != a.hi);
}

/* qsort order of int64 samples, for the reference below. */
static int cmp_sample(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

#define MAX_ROWS 4
#define MAX_SESSIONS 5
#define MAX_DRAWN 400

/* The bootstrap as docs/formats.md states it, the plain way: for each
 * resample, draw the baseline's session indices (none when it has one
 * session), then the other cell's; then for each row, for the baseline and
 * then the other cell, draw from each drawn session in draw order as many
 * samples as it has, sort all that the row drew and take its median;
 * average the log ratios. Returns the resampled speedups in draw order
 * (caller frees). */
static double *reference_boot(const struct cb_cell_samples *base,
			      const struct cb_cell_samples *other, uint64_t seed, int resamples)
{
	const struct cb_cell_samples *cell[2] = { base, other };
	double *boot = calloc((size_t)resamples, sizeof(*boot));
	int64_t draw[MAX_DRAWN];
	size_t picks[2][MAX_SESSIONS];
	struct cb_rng r;
	int b, side;

	assert_non_null(boot);
	cb_rng_seed(&r, seed);
	for (b = 0; b < resamples; b++) {
		double acc = 0;
		size_t i, j;
		for (side = 0; side < 2; side++) {
			size_t ns = cell[side]->nsessions;
			assert_true(ns <= MAX_SESSIONS);
			for (j = 0; j < ns; j++)
				picks[side][j] = ns > 1 ? draw_index(&r, ns) : 0;
		}
		for (i = 0; i < base->nrows; i++) {
			double m[2];
			for (side = 0; side < 2; side++) {
				const struct cb_cell_samples *c = cell[side];
				size_t n = 0, k;
				for (j = 0; j < c->nsessions; j++) {
					const struct cb_samples *x =
						&c->at[i * c->nsessions + picks[side][j]];
					assert_true(n + x->n <= MAX_DRAWN);
					for (k = 0; k < x->n; k++)
						draw[n++] = x->v[draw_index(&r, x->n)];
				}
				qsort(draw, n, sizeof(*draw), cmp_sample);
				m[side] = cb_median_i64(draw, n);
			}
			acc += log(m[0] / m[1]);
		}
		boot[b] = exp(acc / (double)base->nrows) - 1;
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

/* cb_speedup's interval for the two cells at confidence 0.9 must equal,
 * bit for bit, the quantiles of the plainly computed resamples. */
static void same_as_plain(const struct cb_cell_samples *base, const struct cb_cell_samples *other,
			  uint64_t seed, int resamples, int trial)
{
	struct cb_speedup sp;
	struct cb_err err;
	double *boot;
	char what[64];

	if (cb_speedup(names4, base, other, 0.9, seed, resamples, &sp, &err) < 0) {
		print_error("trial %d: %s\n", trial, err.msg);
		fail();
	}
	boot = reference_boot(base, other, seed, resamples);
	qsort(boot, (size_t)resamples, sizeof(*boot), cmp_real);
	snprintf(what, sizeof(what), "trial %d lo", trial);
	same_double(what, sp.lo, linear_quantile(boot, (size_t)resamples, (1 - 0.9) / 2));
	snprintf(what, sizeof(what), "trial %d hi", trial);
	same_double(what, sp.hi, linear_quantile(boot, (size_t)resamples, (1 + 0.9) / 2));
	free(boot);
}

/* cb_speedup finds each resample's median from counts of ranks instead of
 * sorting the drawn samples, and reduces its draws without dividing: over
 * random rows of one session per cell, 1 to 24 samples (1 to 400 in every
 * fourth trial), odd and even counts, many ties, values near 2^53, it must
 * agree bit for bit with the plain resampling. */
static void ranks_match_plain_resampling(void **state)
{
	static int64_t pool[MAX_ROWS][2][MAX_DRAWN];
	struct cb_rng gen;
	int trial;

	(void)state;
	cb_rng_seed(&gen, 20261130);
	for (trial = 0; trial < 300; trial++) {
		struct cb_samples at[2][MAX_ROWS];
		size_t nrows = 1 + draw_index(&gen, 4), i, k;
		int64_t spread = trial % 3 == 0 ? 3 : trial % 3 == 1 ? 1000 : (int64_t)1 << 40;
		int64_t least = trial % 5 == 0 ? ((int64_t)1 << 53) - 5000 : 1000;
		int resamples = 50 + (int)draw_index(&gen, 150);
		struct cb_cell_samples base = { at[0], nrows, 1 }, other = { at[1], nrows, 1 };

		for (i = 0; i < nrows; i++) {
			size_t most = trial % 4 == 3 ? MAX_DRAWN : 24;
			size_t nb = 1 + draw_index(&gen, most), no = 1 + draw_index(&gen, most);
			for (k = 0; k < nb; k++)
				pool[i][0][k] = least + (int64_t)draw_index(&gen, (size_t)spread);
			for (k = 0; k < no; k++)
				pool[i][1][k] = least + (int64_t)draw_index(&gen, (size_t)spread);
			at[0][i] = (struct cb_samples){ pool[i][0], nb };
			at[1][i] = (struct cb_samples){ pool[i][1], no };
		}
		same_as_plain(&base, &other, (uint64_t)trial, resamples, trial);
	}
}

/* The same with sessions: each cell 1 to 5 sessions (drawn apart, so the
 * two cells mostly differ), each session 1 to 50 samples of a row (1 to 3
 * in every fourth trial, where session draws dominate) shifted by its own
 * offset, so that sessions interleave in the pooled order; ties, values
 * near 2^53. */
static void sessions_match_plain_resampling(void **state)
{
	static int64_t pool[2][MAX_ROWS][MAX_SESSIONS][50];
	struct cb_rng gen;
	int trial;

	(void)state;
	cb_rng_seed(&gen, 20261201);
	for (trial = 0; trial < 300; trial++) {
		struct cb_samples at[2][MAX_ROWS * MAX_SESSIONS];
		struct cb_cell_samples cell[2];
		size_t nrows = 1 + draw_index(&gen, MAX_ROWS), i, s, k;
		size_t most = trial % 4 == 3 ? 3 : 50;
		int64_t spread = trial % 3 == 0 ? 3 : trial % 3 == 1 ? 1000 : (int64_t)1 << 40;
		int64_t least = trial % 5 == 0 ? ((int64_t)1 << 53) - ((int64_t)3 << 40) : 1000;
		int resamples = 50 + (int)draw_index(&gen, 150), side;

		for (side = 0; side < 2; side++) {
			size_t ns = 1 + draw_index(&gen, MAX_SESSIONS);
			cell[side] = (struct cb_cell_samples){ at[side], nrows, ns };
			for (i = 0; i < nrows; i++)
				for (s = 0; s < ns; s++) {
					size_t n = 1 + draw_index(&gen, most);
					int64_t at_least = least + (int64_t)draw_index(&gen, (size_t)spread);
					for (k = 0; k < n; k++)
						pool[side][i][s][k] =
							at_least + (int64_t)draw_index(&gen, (size_t)spread);
					at[side][i * ns + s] = (struct cb_samples){ pool[side][i][s], n };
				}
		}
		same_as_plain(&cell[0], &cell[1], (uint64_t)trial, resamples, trial);
	}
}

/* An effect injected into the other cell, every sample multiplied by m,
 * divides each resample's 1 + speedup by m, draw for draw (the same seed
 * draws the same indices, medians scale with their samples): the interval
 * becomes [(1 + lo) / m - 1, (1 + hi) / m - 1]. bench/power.py computes its
 * power curve from this identity instead of resampling each effect anew. */
static void injected_effect_shifts_the_interval(void **state)
{
	static int64_t pool[2][MAX_ROWS][MAX_SESSIONS][20], scaled[MAX_ROWS][MAX_SESSIONS][20];
	struct cb_rng gen;
	int trial;

	(void)state;
	cb_rng_seed(&gen, 20261202);
	for (trial = 0; trial < 100; trial++) {
		struct cb_samples at[3][MAX_ROWS * MAX_SESSIONS];
		struct cb_cell_samples cell[3];
		struct cb_speedup plain, injected;
		struct cb_err err = CB_ERR_INIT;
		size_t nrows = 1 + draw_index(&gen, MAX_ROWS), i, s, k;
		int64_t m = 2 + (int64_t)draw_index(&gen, 3);
		int side;

		for (side = 0; side < 2; side++) {
			size_t ns = 1 + draw_index(&gen, MAX_SESSIONS);
			cell[side] = (struct cb_cell_samples){ at[side], nrows, ns };
			for (i = 0; i < nrows; i++)
				for (s = 0; s < ns; s++) {
					size_t n = 1 + draw_index(&gen, 20);
					for (k = 0; k < n; k++) {
						pool[side][i][s][k] = 100000 + (int64_t)draw_index(&gen, 5000);
						if (side == 1)
							scaled[i][s][k] = pool[side][i][s][k] * m;
					}
					at[side][i * ns + s] = (struct cb_samples){ pool[side][i][s], n };
					if (side == 1)
						at[2][i * ns + s] = (struct cb_samples){ scaled[i][s], n };
				}
		}
		cell[2] = (struct cb_cell_samples){ at[2], nrows, cell[1].nsessions };
		assert_int_equal(cb_speedup(names4, &cell[0], &cell[1], 0.95, (uint64_t)trial, 200, &plain, &err), 0);
		assert_int_equal(cb_speedup(names4, &cell[0], &cell[2], 0.95, (uint64_t)trial, 200, &injected, &err), 0);
		assert_true(fabs((1 + injected.point) - (1 + plain.point) / (double)m) <= 1e-12 * (1 + plain.point));
		assert_true(fabs((1 + injected.lo) - (1 + plain.lo) / (double)m) <= 1e-12 * (1 + plain.lo));
		assert_true(fabs((1 + injected.hi) - (1 + plain.hi) / (double)m) <= 1e-12 * (1 + plain.hi));
	}
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(xoshiro_reference), cmocka_unit_test(splitmix_reference),
		cmocka_unit_test(median_cases),      cmocka_unit_test(ppm_cases),
		cmocka_unit_test(refusals),          cmocka_unit_test(determinism),
		cmocka_unit_test(ranks_match_plain_resampling),
		cmocka_unit_test(sessions_match_plain_resampling),
		cmocka_unit_test(injected_effect_shifts_the_interval),
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
	if (!tests || !names || n < 26)
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
