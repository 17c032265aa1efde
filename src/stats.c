/* stats.c: medians, the seeded bootstrap and a task's speedup interval
 * (SPEC section 10; definitions in docs/formats.md, "Statistics"). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sha.h"

/* qsort order of int64 samples (no subtraction: it could overflow). */
static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* qsort order of the resampled speedups (never NaN: samples are positive). */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Sort v ascending: insertion sort for the handful of samples a row has
 * (the bootstrap sorts every resample, so qsort's call overhead dominated
 * reaccount), qsort beyond that. */
static void sort_i64(int64_t *v, size_t n)
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

/* Median of v[0..n) with n >= 1, sorting v in place. For even n the mean
 * of the middle values a <= b is computed as k + (b - a) % 2 / 2 with
 * k = a + (b - a) / 2 in integers, so no sum overflows and the result is
 * correctly rounded whenever |k| < 2^53. */
static double median_in_place(int64_t *v, size_t n)
{
	int64_t a, k;
	uint64_t d;

	sort_i64(v, n);
	if (n % 2)
		return (double)v[n / 2];
	a = v[n / 2 - 1];
	d = (uint64_t)v[n / 2] - (uint64_t)a;
	k = a + (int64_t)(d / 2);
	return (double)k + (d % 2 ? 0.5 : 0.0);
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

size_t cb_rng_index(struct cb_rng *r, size_t n)
{
	return (size_t)(cb_rng_next(r) % (uint64_t)n);
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

/* Refuse a row whose samples cannot give a positive median in every
 * resample: no samples, or any sample <= 0 ns. */
static int check_samples(const char *row, const char *who, const int64_t *v, size_t n,
			 struct cb_err *err)
{
	size_t i;

	if (n == 0)
		return cb_fail(err, "row '%s': the %s has no samples", row, who);
	for (i = 0; i < n; i++)
		if (v[i] <= 0)
			return cb_fail(err, "row '%s': %s sample %zu is %lld ns, not positive", row,
				       who, i + 1, (long long)v[i]);
	return 0;
}

/* Median of n samples drawn with replacement from v, into scratch. */
static double resampled_median(struct cb_rng *rng, const int64_t *v, size_t n, int64_t *scratch)
{
	size_t i;

	for (i = 0; i < n; i++)
		scratch[i] = v[cb_rng_index(rng, n)];
	return median_in_place(scratch, n);
}

/* Quantile q of sorted x[0..n), n >= 1: numpy's default "linear" method,
 * x[i] + (h - i) * (x[i+1] - x[i]) with h = (n - 1) q and i = floor(h). */
static double quantile(const double *x, size_t n, double q)
{
	double h = (double)(n - 1) * q, fl = floor(h);
	size_t i = (size_t)fl;

	if (i + 1 >= n)
		return x[n - 1];
	return x[i] + (h - fl) * (x[i + 1] - x[i]);
}

int cb_speedup(const struct cb_row_pair *rows, size_t nrows, double confidence, uint64_t seed,
	       int resamples, struct cb_speedup *out, struct cb_err *err)
{
	struct cb_rng rng;
	int64_t *scratch;
	double *boot, acc;
	size_t i, maxn = 0, nboot;
	int b;

	if (nrows == 0)
		return cb_fail(err, "no rows to compare");
	if (!(confidence > 0 && confidence < 1))
		return cb_fail(err, "confidence %g is outside (0, 1)", confidence);
	if (resamples < 1)
		return cb_fail(err, "resamples %d is below 1", resamples);
	for (i = 0; i < nrows; i++) {
		const struct cb_row_pair *p = &rows[i];
		if (check_samples(p->row, "baseline", p->base, p->nbase, err) < 0 ||
		    check_samples(p->row, "other cell", p->other, p->nother, err) < 0)
			return -1;
		if (p->nbase > maxn)
			maxn = p->nbase;
		if (p->nother > maxn)
			maxn = p->nother;
	}
	nboot = (size_t)resamples;
	scratch = malloc(maxn * sizeof(*scratch));
	boot = malloc(nboot * sizeof(*boot));
	if (!scratch || !boot) {
		free(scratch);
		free(boot);
		return cb_fail(err, "out of memory for %d resamples", resamples);
	}

	acc = 0;
	for (i = 0; i < nrows; i++) {
		const struct cb_row_pair *p = &rows[i];
		double mb, mo;
		memcpy(scratch, p->base, p->nbase * sizeof(*scratch));
		mb = median_in_place(scratch, p->nbase);
		memcpy(scratch, p->other, p->nother * sizeof(*scratch));
		mo = median_in_place(scratch, p->nother);
		acc += log(mb / mo);
	}
	out->point = exp(acc / (double)nrows) - 1;

	cb_rng_seed(&rng, seed);
	for (b = 0; b < resamples; b++) {
		acc = 0;
		for (i = 0; i < nrows; i++) {
			const struct cb_row_pair *p = &rows[i];
			double mb = resampled_median(&rng, p->base, p->nbase, scratch);
			double mo = resampled_median(&rng, p->other, p->nother, scratch);
			acc += log(mb / mo);
		}
		boot[b] = exp(acc / (double)nrows) - 1;
	}
	qsort(boot, nboot, sizeof(*boot), cmp_double);
	out->lo = quantile(boot, nboot, (1 - confidence) / 2);
	out->hi = quantile(boot, nboot, (1 + confidence) / 2);
	out->nrows = nrows;
	free(scratch);
	free(boot);
	return 0;
}

long long cb_ppm(double x)
{
	return llround(x * 1e6);
}
