/* stats.c: medians, the seeded bootstrap and a task's speedup interval
 * (docs/design.md section 10; definitions in docs/formats.md, "Statistics"). */
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sha.h"

/* qsort order of int64 samples (no subtraction: it could overflow). */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Sort v ascending: insertion sort for the handful of samples a row has
 * (the bootstrap sorts every resample, so qsort's call overhead dominated
 * reaccount), qsort beyond that. */
void cb_sort_i64(int64_t *v, size_t n)
{
	size_t i, j;

	if (n > 64) {
		qsort(v, n, sizeof(*v), cmp_i64);
		return;
	}
	for (i = 1; i < n; i++) {
		int64_t x = v[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* The median of a sorted list whose middle values are a <= b (a == b when
 * the count is odd). For an even count the mean of a and b is computed as
 * k + (b - a) % 2 / 2 with k = a + (b - a) / 2 in integers, so no sum
 * overflows and the result is correctly rounded whenever |k| < 2^53. */
static double middle(int64_t a, int64_t b)
{
	uint64_t d = (uint64_t)b - (uint64_t)a;
	int64_t k = a + (int64_t)(d / 2);

	return (double)k + (d % 2 ? 0.5 : 0.0);
}

/* Median of sorted v[0..n), n >= 1. */
static double sorted_median(const int64_t *v, size_t n)
{
	return n % 2 ? (double)v[n / 2] : middle(v[n / 2 - 1], v[n / 2]);
}

/* Median of v[0..n) with n >= 1, sorting v in place. */
static double median_in_place(int64_t *v, size_t n)
{
	cb_sort_i64(v, n);
	return sorted_median(v, n);
}

double cb_median_sorted_i64(const int64_t *v, size_t n)
{
	return n ? sorted_median(v, n) : NAN;
}

double cb_median_i64(const int64_t *v, size_t n)
{
	int64_t *copy;
	double m;

	if (n == 0 || !(copy = malloc(n * sizeof(*copy))))
		return NAN;
	memcpy(copy, v, n * sizeof(*copy));
	m = median_in_place(copy, n);
	free(copy);
	return m;
}

/* One step of splitmix64 (Vigna): advances *x and returns the mixed value. */
static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

void cb_rng_seed(struct cb_rng *r, uint64_t seed)
{
	int i;

	for (i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

/* xoshiro256** 1.0 (Blackman and Vigna), the reference next(). */
uint64_t cb_rng_next(struct cb_rng *r)
{
	uint64_t *s = r->s;
	const uint64_t result = rotl(s[1] * 5, 7) * 9;
	const uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* x % n without a division, which is most of a draw's cost (Lemire, Kaser
 * and Kurz, "Faster remainder by direct computation", 2019): with
 * m = ceil(2^128 / n) (0 for n = 1), x % n is the top 64 bits of the
 * 192-bit product ((m * x) mod 2^128) * n, exact for every 64-bit x and
 * n >= 1 (their theorem 1, 128 >= 64 + log2 n). */
__extension__ typedef unsigned __int128 u128;

static u128 modulus_of(uint64_t n)
{
	return ~(u128)0 / n + 1;
}

static uint64_t mod_by(uint64_t x, u128 m, uint64_t n)
{
	u128 low = m * x;
	u128 bottom = (u128)(uint64_t)low * n, top = (low >> 64) * n;

	return (uint64_t)((top + (bottom >> 64)) >> 64);
}

int cb_bootstrap_seed(const char *task, const char *order, uint64_t *seed, struct cb_err *err)
{
	static const char prefix[] = "caliber-bootstrap/1:";
	char hex[CB_SHA256_HEX];
	struct cb_sha s;
	uint64_t v = 0;
	int i;

	if (strchr(order, ':'))
		return cb_fail(err, "bootstrap seed: order '%s' contains ':'", order);
	if (cb_sha_init(&s, err) < 0)
		return cb_prefix(err, "bootstrap seed");
	cb_sha_update(&s, prefix, sizeof(prefix) - 1);
	cb_sha_update(&s, task, strlen(task));
	cb_sha_update(&s, ":", 1);
	cb_sha_update(&s, order, strlen(order));
	cb_sha_final_hex(&s, hex);
	/* 16 lowercase hex digits are the first 8 bytes, big endian. */
	for (i = 0; i < 16; i++)
		v = v << 4 | (uint64_t)(hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
	*seed = v;
	return 0;
}

/* Refuse row r of cell c (named `who`) when its samples cannot give a
 * positive median in every resample: a session with no samples for the
 * row, or any sample <= 0 ns. A session is named (1-based) only when the
 * cell has more than one. */
static int check_row(const char *row, const struct cb_cell_samples *c, size_t r, const char *who,
		     struct cb_err *err)
{
	char name[64];
	size_t s, i;

	for (s = 0; s < c->nsessions; s++) {
		const struct cb_samples *x = &c->at[r * c->nsessions + s];
		if (c->nsessions > 1)
			snprintf(name, sizeof(name), "%s session %zu", who, s + 1);
		else
			snprintf(name, sizeof(name), "%s", who);
		if (x->n == 0)
			return cb_fail(err, "row '%s': the %s has no samples", row, name);
		for (i = 0; i < x->n; i++)
			if (x->v[i] <= 0)
				return cb_fail(err, "row '%s': %s sample %zu is %lld ns, not positive", row,
					       name, i + 1, (long long)x->v[i]);
	}
	return 0;
}

/* A cell prepared for resampling. Row r's samples, pooled over the cell's
 * sessions, are sorted ascending in row[r]; each sample of row r in session
 * s has a rank in that list (ties ranked by session, then by position),
 * which at[r * nsessions + s].rank holds by the sample's index. Drawing a
 * sample stands for drawing sorted[rank]; as the list is ascending, the
 * median of the drawn values is the value at the median of the drawn ranks,
 * which a count over the row's pooled ranks finds without sorting the
 * resample. Same draws, same medians, bit for bit, as sorting the drawn
 * values (tests/unit/test_stats.c checks both ways agree). */
struct pooled_row {
	const int64_t *sorted;
	size_t n;
};

struct session_ranks {
	const size_t *rank;
	size_t n;
	u128 m;                      /* modulus_of(n) */
};

struct ranked_cell {
	int64_t *values;             /* every row's sorted list, row after row */
	size_t *ranks;               /* every rank, row after row, session after session */
	struct pooled_row *row;      /* [nrows] */
	struct session_ranks *at;    /* [nrows * nsessions] */
	size_t *drawn;               /* the sessions drawn in this resample, [nsessions] */
	size_t nsessions;
	u128 m;                      /* modulus_of(nsessions) */
};

/* A sample and where it stood in its row's sessions laid end to end,
 * sorted by value and then by that position. */
struct placed {
	int64_t v;
	size_t at;
};

static int cmp_placed(const void *a, const void *b)
{
	const struct placed *x = a, *y = b;

	if (x->v != y->v)
		return (x->v > y->v) - (x->v < y->v);
	return (x->at > y->at) - (x->at < y->at);
}

static void ranked_cell_free(struct ranked_cell *rc)
{
	free(rc->values);
	free(rc->ranks);
	free(rc->row);
	free(rc->at);
	free(rc->drawn);
	memset(rc, 0, sizeof(*rc));
}

/* Fill rc from the checked cell c (nrows, nsessions >= 1, no empty
 * session). drawn[] starts at {0}, which a cell of one session keeps.
 * Returns -1 when out of memory, rc then to be released all the same. */
static int rank_cell(const struct cb_cell_samples *c, struct ranked_cell *rc)
{
	size_t ns = c->nsessions, r, s, i, total = 0, most = 0, first = 0;
	struct placed *p;

	for (r = 0; r < c->nrows; r++) {
		size_t pooled = 0;
		for (s = 0; s < ns; s++)
			pooled += c->at[r * ns + s].n;
		total += pooled;
		if (pooled > most)
			most = pooled;
	}
	rc->nsessions = ns;
	rc->m = modulus_of(ns);
	rc->values = malloc(total * sizeof(*rc->values));
	rc->ranks = malloc(total * sizeof(*rc->ranks));
	rc->row = malloc(c->nrows * sizeof(*rc->row));
	rc->at = malloc(c->nrows * ns * sizeof(*rc->at));
	rc->drawn = calloc(ns, sizeof(*rc->drawn));
	p = malloc(most * sizeof(*p));
	if (!rc->values || !rc->ranks || !rc->row || !rc->at || !rc->drawn || !p) {
		free(p);
		return -1;
	}
	for (r = 0; r < c->nrows; r++) {
		size_t pooled = 0;
		for (s = 0; s < ns; s++) {
			const struct cb_samples *x = &c->at[r * ns + s];
			rc->at[r * ns + s] = (struct session_ranks){
				rc->ranks + first + pooled, x->n, modulus_of(x->n)
			};
			for (i = 0; i < x->n; i++, pooled++)
				p[pooled] = (struct placed){ x->v[i], pooled };
		}
		qsort(p, pooled, sizeof(*p), cmp_placed);
		for (i = 0; i < pooled; i++) {
			rc->values[first + i] = p[i].v;
			rc->ranks[first + p[i].at] = i;
		}
		rc->row[r] = (struct pooled_row){ rc->values + first, pooled };
		first += pooled;
	}
	free(p);
	return 0;
}

/* The first draws of a resample: nsessions session indices into drawn[],
 * or none when the cell has one session (drawn[0] stays 0). */
static void draw_sessions(struct cb_rng *rng, struct ranked_cell *rc)
{
	size_t j;

	if (rc->nsessions == 1)
		return;
	for (j = 0; j < rc->nsessions; j++)
		rc->drawn[j] = mod_by(cb_rng_next(rng), rc->m, rc->nsessions);
}

/* Median of row r's resample in the sessions drawn: for each drawn session
 * in draw order, as many draws with replacement as it has samples of the
 * row; count[0..pooled) is scratch. The middle ranks are the (d-1)/2-th
 * and d/2-th smallest of the d ranks drawn, counted from 0. */
static double resampled_median(struct cb_rng *rng, const struct ranked_cell *rc, size_t r,
			       size_t *count)
{
	const struct pooled_row *row = &rc->row[r];
	size_t i, j, d = 0, seen = 0, lo, hi, at_lo = SIZE_MAX;

	memset(count, 0, row->n * sizeof(*count));
	for (j = 0; j < rc->nsessions; j++) {
		const struct session_ranks *s = &rc->at[r * rc->nsessions + rc->drawn[j]];
		for (i = 0; i < s->n; i++)
			count[s->rank[mod_by(cb_rng_next(rng), s->m, s->n)]]++;
		d += s->n;
	}
	lo = (d - 1) / 2;
	hi = d / 2;
	for (i = 0;; i++) {
		seen += count[i];
		if (at_lo == SIZE_MAX && seen > lo)
			at_lo = i;
		if (seen > hi)
			break;
	}
	return lo == hi ? (double)row->sorted[i] : middle(row->sorted[at_lo], row->sorted[i]);
}

/* Move the k-th smallest of x[0..n) (from 0) to x[k], nothing larger
 * before it and nothing smaller after: Wirth's selection, as the quantiles
 * need two order statistics each and not a sorted array. The speedups are
 * never NaN. */
static void select_kth(double *x, long n, long k)
{
	long l = 0, m = n - 1;

	while (l < m) {
		double pivot = x[k];
		long i = l, j = m;
		do {
			while (x[i] < pivot)
				i++;
			while (pivot < x[j])
				j--;
			if (i <= j) {
				double t = x[i];
				x[i++] = x[j];
				x[j--] = t;
			}
		} while (i <= j);
		if (j < k)
			l = i;
		if (k < i)
			m = j;
	}
}

/* Quantile q of x[0..n), n >= 1, reordering x: numpy's default "linear"
 * method, x(i) + (h - i) * (x(i+1) - x(i)) with h = (n - 1) q, i = floor(h)
 * and x(i) the i-th smallest, counted from 0. */
static double quantile(double *x, size_t n, double q)
{
	double h = (double)(n - 1) * q, fl = floor(h), next;
	size_t i = (size_t)fl, k;

	select_kth(x, (long)n, (long)i);
	if (i + 1 >= n)
		return x[i];
	next = x[i + 1];
	for (k = i + 2; k < n; k++)
		if (x[k] < next)
			next = x[k];
	return x[i] + (h - fl) * (next - x[i]);
}

/* The speedup over rows from the rows' times in the two cells, summing
 * the log ratios in row order. */
static double geomean_speedup(const double *tb, const double *to, size_t nrows)
{
	double acc = 0;
	size_t r;

	for (r = 0; r < nrows; r++)
		acc += log(tb[r] / to[r]);
	return exp(acc / (double)nrows) - 1;
}

int cb_speedup(const char *const *rows, const struct cb_cell_samples *base,
	       const struct cb_cell_samples *other, double confidence, uint64_t seed,
	       int resamples, struct cb_speedup *out, struct cb_err *err)
{
	struct ranked_cell cell[2] = { { 0 }, { 0 } };
	struct cb_rng rng;
	size_t *count = NULL;
	double *boot = NULL, *t = NULL;
	size_t r, nrows = base->nrows, most = 0, nboot;
	int b, k, rc = -1;

	if (other->nrows != nrows)
		return cb_fail(err, "the baseline has %zu rows, the other cell %zu", nrows,
			       other->nrows);
	if (nrows == 0)
		return cb_fail(err, "no rows to compare");
	if (!(confidence > 0 && confidence < 1))
		return cb_fail(err, "confidence %g is outside (0, 1)", confidence);
	if (resamples < 1)
		return cb_fail(err, "resamples %d is below 1", resamples);
	if (base->nsessions == 0)
		return cb_fail(err, "the baseline has no sessions");
	if (other->nsessions == 0)
		return cb_fail(err, "the other cell has no sessions");
	for (r = 0; r < nrows; r++)
		if (check_row(rows[r], base, r, "baseline", err) < 0 ||
		    check_row(rows[r], other, r, "other cell", err) < 0)
			return -1;
	nboot = (size_t)resamples;
	if (rank_cell(base, &cell[0]) < 0 || rank_cell(other, &cell[1]) < 0)
		goto oom;
	for (k = 0; k < 2; k++)
		for (r = 0; r < nrows; r++)
			if (cell[k].row[r].n > most)
				most = cell[k].row[r].n;
	count = malloc(most * sizeof(*count));
	boot = malloc(nboot * sizeof(*boot));
	/* Row times: t[r] the baseline's, t[nrows + r] the other cell's. */
	t = malloc(2 * nrows * sizeof(*t));
	if (!count || !boot || !t)
		goto oom;

	for (k = 0; k < 2; k++)
		for (r = 0; r < nrows; r++)
			t[(size_t)k * nrows + r] =
				sorted_median(cell[k].row[r].sorted, cell[k].row[r].n);
	out->point = geomean_speedup(t, t + nrows, nrows);

	cb_rng_seed(&rng, seed);
	for (b = 0; b < resamples; b++) {
		draw_sessions(&rng, &cell[0]);
		draw_sessions(&rng, &cell[1]);
		for (r = 0; r < nrows; r++) {
			t[r] = resampled_median(&rng, &cell[0], r, count);
			t[nrows + r] = resampled_median(&rng, &cell[1], r, count);
		}
		boot[b] = geomean_speedup(t, t + nrows, nrows);
	}
	out->lo = quantile(boot, nboot, (1 - confidence) / 2);
	out->hi = quantile(boot, nboot, (1 + confidence) / 2);
	out->nrows = nrows;
	rc = 0;
	goto out;
oom:
	cb_fail(err, "out of memory for %d resamples", resamples);
out:
	ranked_cell_free(&cell[0]);
	ranked_cell_free(&cell[1]);
	free(count);
	free(boot);
	free(t);
	return rc;
}

long long cb_ppm(double x)
{
	return llround(x * 1e6);
}
