/* stats.h: from raw samples to a task's speedup and its confidence interval
 * in one execution order (docs/design.md section 10). Pure functions: no I/O, and the
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
/* The same of v already sorted ascending (cb_sort_i64), without a copy. */
double cb_median_sorted_i64(const int64_t *v, size_t n);
/* Sort v[0..n) ascending, in place: insertion sort for the handful of
 * samples a row has, qsort beyond. */
void cb_sort_i64(int64_t *v, size_t n);

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

/* The samples (ns) of one benchmark row in one session of one cell. A
 * session is one independent timed pass over the cell's rows; its samples
 * are the back-to-back repeats of the row in that pass. */
struct cb_samples {
	const int64_t *v;
	size_t n;
};

/* One cell in one order: nrows rows by nsessions sessions, the samples of
 * row r in session s at at[r * nsessions + s]. Row r of the two cells
 * compared is the same benchmark row. */
struct cb_cell_samples {
	const struct cb_samples *at;
	size_t nrows, nsessions;
};

struct cb_speedup {
	double point;      /* geometric mean over rows of T_base/T_other, minus 1 */
	double lo, hi;     /* bootstrap interval at the requested confidence */
	size_t nrows;
};

/* The resamples of every bootstrap a campaign computes, recorded in its
 * receipts (campaign.json "bootstrap", each timed order of task.json). */
#define CB_BOOTSTRAP_RESAMPLES 2000
/* What runs sealed before the receipts recorded it used: a receipt
 * without the number is read as this, whatever campaigns use now. */
#define CB_BOOTSTRAP_RESAMPLES_UNRECORDED 2000
/* The most resamples a receipt may ask a re-accounting for. */
#define CB_BOOTSTRAP_RESAMPLES_MAX 1000000

/* Point estimate and bootstrap interval of `other` against `base`, as
 * docs/formats.md, "Statistics", defines them; rows[r] names row r in
 * error messages. A row's time in a cell, T, is the median of its samples
 * pooled over the cell's sessions. Each resample first draws, with
 * replacement, as many session indices as the baseline has sessions (none
 * when it has one), then the same for the other cell, and then, row by
 * row in order, for the baseline and then the other cell, draws n indices
 * into each drawn session's n samples of the row, in the order the
 * sessions were drawn; the row's resampled T is the median of all it drew.
 * A draw from n takes cb_rng_next() % n (bias below 2^-40 for the counts
 * used here, and trivial to reproduce). With one session per cell this is
 * the bootstrap over repeats that sealed runs before sessions used, draw
 * for draw. The interval is the (1-c)/2 and (1+c)/2 quantiles of the
 * resampled speedups (linear interpolation between order statistics,
 * numpy's default). Refuses cells with different row counts, no rows,
 * confidence outside (0, 1), resamples < 1, a cell with no sessions, and
 * a row with no samples in a session or a sample <= 0 ns (which also rules
 * out non-positive medians, in the data and in every resample). */
int cb_speedup(const char *const *rows, const struct cb_cell_samples *base,
	       const struct cb_cell_samples *other, double confidence, uint64_t seed,
	       int resamples, struct cb_speedup *out, struct cb_err *err);

/* Round a ratio to integer parts per million, llround(x * 1e6): halves
 * away from zero (receipts store no reals). */
long long cb_ppm(double x);

#endif
