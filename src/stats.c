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
	sort_i64(v, n);
	return sorted_median(v, n);
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

/* A row's samples prepared for resampling: sorted, and the rank of each
 * original sample in the sorted list (ties ranked by position). Drawing
 * index k of the original stands for drawing sorted[rank[k]]; as sorted is
 * ascending, the median of the drawn values is sorted[] at the median of
 * the drawn ranks, which a count over n ranks finds without sorting the
 * resample. Same draws, same medians, bit for bit, as sorting the drawn
 * values (tests/unit/test_stats.c checks both ways agree). */
struct ranked {
	int64_t *sorted;
	size_t *rank;
	size_t n;
	u128 m;            /* modulus_of(n) */
};

/* A sample and where it stood, sorted by value and then by position. */
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

/* Fill r from v[0..n), n >= 1. Returns -1 when out of memory. */
static int rank_samples(const int64_t *v, size_t n, struct ranked *r)
{
	struct placed *p = malloc(n * sizeof(*p));
	size_t i;

	r->n = n;
	r->m = modulus_of(n);
	r->sorted = malloc(n * sizeof(*r->sorted));
	r->rank = malloc(n * sizeof(*r->rank));
	if (!p || !r->sorted || !r->rank) {
		free(p);
		return -1;
	}
	for (i = 0; i < n; i++) {
		p[i].v = v[i];
		p[i].at = i;
	}
	qsort(p, n, sizeof(*p), cmp_placed);
	for (i = 0; i < n; i++) {
		r->sorted[i] = p[i].v;
		r->rank[p[i].at] = i;
	}
	free(p);
	return 0;
}

static void ranked_free(struct ranked *r)
{
	free(r->sorted);
	free(r->rank);
}

/* Median of r->n samples drawn with replacement, the draws being those of
 * a resample of the original order; count[0..n) is scratch. The middle
 * ranks are the (n-1)/2-th and n/2-th smallest drawn ranks, counted from 0. */
static double resampled_median(struct cb_rng *rng, const struct ranked *r, size_t *count)
{
	size_t i, seen = 0, lo = (r->n - 1) / 2, hi = r->n / 2, at_lo = SIZE_MAX;

	memset(count, 0, r->n * sizeof(*count));
	for (i = 0; i < r->n; i++)
		count[r->rank[mod_by(cb_rng_next(rng), r->m, r->n)]]++;
	for (i = 0;; i++) {
		seen += count[i];
		if (at_lo == SIZE_MAX && seen > lo)
			at_lo = i;
		if (seen > hi)
			break;
	}
	return lo == hi ? (double)r->sorted[i] : middle(r->sorted[at_lo], r->sorted[i]);
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

int cb_speedup(const struct cb_row_pair *rows, size_t nrows, double confidence, uint64_t seed,
	       int resamples, struct cb_speedup *out, struct cb_err *err)
{
	struct cb_rng rng;
	struct ranked *rk = NULL;
	size_t *count = NULL;
	double *boot = NULL, acc;
	size_t i, maxn = 0, nboot, nranked = 0;
	int b, rc = -1;

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
	rk = calloc(2 * nrows, sizeof(*rk));
	count = malloc(maxn * sizeof(*count));
	boot = malloc(nboot * sizeof(*boot));
	if (!rk || !count || !boot)
		goto oom;
	/* rk[2i] is row i's baseline, rk[2i + 1] its other cell. */
	for (nranked = 0; nranked < 2 * nrows; nranked++) {
		const struct cb_row_pair *p = &rows[nranked / 2];
		if (rank_samples(nranked % 2 ? p->other : p->base, nranked % 2 ? p->nother : p->nbase,
				 &rk[nranked]) < 0) {
			nranked++;
			goto oom;
		}
	}

	acc = 0;
	for (i = 0; i < nrows; i++) {
		acc += log(sorted_median(rk[2 * i].sorted, rk[2 * i].n) /
			   sorted_median(rk[2 * i + 1].sorted, rk[2 * i + 1].n));
	}
	out->point = exp(acc / (double)nrows) - 1;

	cb_rng_seed(&rng, seed);
	for (b = 0; b < resamples; b++) {
		acc = 0;
		for (i = 0; i < nrows; i++) {
			double mb = resampled_median(&rng, &rk[2 * i], count);
			double mo = resampled_median(&rng, &rk[2 * i + 1], count);
			acc += log(mb / mo);
		}
		boot[b] = exp(acc / (double)nrows) - 1;
	}
	out->lo = quantile(boot, nboot, (1 - confidence) / 2);
	out->hi = quantile(boot, nboot, (1 + confidence) / 2);
	out->nrows = nrows;
	rc = 0;
	goto out;
oom:
	cb_fail(err, "out of memory for %d resamples", resamples);
out:
	for (i = 0; i < nranked; i++)
		ranked_free(&rk[i]);
	free(rk);
	free(count);
	free(boot);
	return rc;
}

long long cb_ppm(double x)
{
	return llround(x * 1e6);
}
