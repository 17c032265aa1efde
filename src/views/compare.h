/* compare.h: two sealed runs of the same corpus side by side (`caliber
 * compare`): per task found in both, the verdicts, topologies and
 * speedups of each, what moved, and whether a speedup moved by more than
 * both runs' A/A bands, the noise each run measured of itself.
 *
 * The move of an order is relative, (1 + speedup B) / (1 + speedup A) - 1,
 * as the A/A band is (control against baseline, a ratio of times); it is
 * beyond the bands when its magnitude exceeds the band's farthest edge
 * from zero (max |aa_lo|, |aa_hi|) of run A and of run B. */
#ifndef CB_COMPARE_H
#define CB_COMPARE_H

#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "caliber.h"
#include "account/receipt.h"
#include "account/runview.h"

/* One task of either run. */
struct cb_compare_task {
	const char *id;                          /* borrowed from a result */
	int in[2];                               /* found in run A, run B */
	struct cb_task_result r[2];
	long long band_ppm[2][CB_NORDERS];       /* each run's A/A band, its farthest edge from zero */
	int both[CB_NORDERS];                    /* the order was timed in both runs */
	long long move_ppm[CB_NORDERS];          /* B relative to A */
	int moved[CB_NORDERS];                   /* |move| beyond both bands */
	int verdict_changed, topology_changed;
};

/* Two runs compared; zeroed is empty. */
struct cb_compare {
	const struct cb_run_view *v[2];          /* runs A and B, borrowed: they outlive the comparison */
	struct cb_compare_task *t;               /* run A's tasks in its order, then those only in B */
	size_t n, common, only[2], verdicts, topologies, moved;
};

/* Compare the sealed runs va and vb (runview.h; opened, their seals found
 * to hold and their campaign receipts read): they must share a task
 * (matched by id, the same op). Refusals name the run. */
int cb_compare_load(struct cb_compare *c, const struct cb_run_view *va, const struct cb_run_view *vb,
		    struct cb_err *err);
void cb_compare_release(struct cb_compare *c);

/* The comparison as text for a terminal, and as JSON (docs/formats.md,
 * "caliber compare"; a new reference, NULL when out of memory). */
void cb_compare_text(struct cb_buf *b, const struct cb_compare *c);
json_t *cb_compare_json(const struct cb_compare *c);

#endif
