/* stats.h: from raw samples to a task's speedup and its confidence interval
 * in one execution order (SPEC section 10). Pure functions: no I/O, and the
 * same inputs give the same bits on any machine. */
#ifndef CB_STATS_H
#define CB_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "caliber.h"

/* Median of n >= 1 integers (mean of the two middle values when n is even,
 * correctly rounded while they are below 2^53 in magnitude). NaN when n is
 * 0 or memory for the sorted copy runs out. */
double cb_median_i64(const int64_t *v, size_t n);

/* The bootstrap's random numbers: xoshiro256** seeded through splitmix64. */
struct cb_rng {
	uint64_t s[4];
};

void cb_rng_seed(struct cb_rng *r, uint64_t seed);
uint64_t cb_rng_next(struct cb_rng *r);
/* The seed of a task's bootstrap in one order: the first 8 bytes, big
 * endian, of SHA-256("caliber-bootstrap/1:" task ":" order). Refuses an
 * order containing ':', so that distinct (task, order) pairs hash distinct
 * strings (task names may contain "::"). */
int cb_bootstrap_seed(const char *task, const char *order, uint64_t *seed, struct cb_err *err);

/* One benchmark row in one order: the baseline's and the other cell's raw
 * samples (ns). `row` names the row in error messages and must be set. */
struct cb_row_pair {
	const char *row;
	const int64_t *base;
	size_t nbase;
	const int64_t *other;
	size_t nother;
};

struct cb_speedup {
	double point;      /* geometric mean over rows of median(base)/median(other), minus 1 */
	double lo, hi;     /* bootstrap interval at the requested confidence */
	size_t nrows;
};

#define CB_BOOTSTRAP_RESAMPLES 2000

/* Point estimate and bootstrap interval. Each resample draws, for every
 * row, nbase baseline samples and nother other samples with replacement
 * (in that order, rows in the given order; a draw from n samples takes
 * index cb_rng_next() % n, whose bias is below 2^-40 for the sample counts
 * used here and which is trivial to reproduce), takes their medians, and
 * averages the log ratios over rows; the interval is the (1-c)/2 and
 * (1+c)/2 quantiles of the resampled speedups (linear interpolation between
 * order statistics, numpy's default). Refuses nrows == 0, confidence outside
 * (0, 1), resamples < 1, and rows with no samples or a sample <= 0 ns (which
 * also rules out non-positive medians, in the data and in every resample). */
int cb_speedup(const struct cb_row_pair *rows, size_t nrows, double confidence, uint64_t seed,
	       int resamples, struct cb_speedup *out, struct cb_err *err);

/* Round a ratio to integer parts per million, llround(x * 1e6): halves
 * away from zero (receipts store no reals). */
long long cb_ppm(double x);

#endif
