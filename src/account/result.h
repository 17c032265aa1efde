/* result.h: one task's result as the verdict matrix, the campaign receipt,
 * reaccount, compare and the reports hold it, and how its figures are
 * written. Below receipt.h and aa.h, which both read it. */
#ifndef CB_RESULT_H
#define CB_RESULT_H

#include <stddef.h>

#include "caliber.h"
#include "classify.h"
#include "campaign/manifest.h"

/* "+5.23%" from parts per million (rounded to hundredths, sign kept). */
void cb_fmt_pct(long long ppm, char *out, size_t cap);
/* "95 %", "2.5 %", "0.13 %": a share >= 0 from parts per million, to
 * hundredths without trailing zeros, as the A/A and interval lines write
 * it. */
void cb_fmt_share(long long ppm, char *out, size_t cap);

/* One task as the verdict matrix, the campaign receipt and reports see it. */
struct cb_task_result {
	char *id, *op, *code, *reason;
	char verdict;
	int have_topology;
	long long topology[CB_NROLES];          /* scoped, by role */
	int present[CB_NORDERS];
	long long speedup_ppm[CB_NORDERS], lo_ppm[CB_NORDERS], hi_ppm[CB_NORDERS], aa_ppm[CB_NORDERS];
	long long aa_lo_ppm[CB_NORDERS], aa_hi_ppm[CB_NORDERS];   /* the A/A band: control vs baseline */
	long long resamples[CB_NORDERS];        /* of the order's bootstraps (unrecorded: the old default) */
	long long confidence_ppm;               /* of the intervals */
	char timer[CB_NORDERS][8];              /* "graph", "direct", "mixed" */
	int identity_known;                     /* its cells carry binary digests (identity.h) */
	int identical;                          /* identical by construction */
};

/* Free what a result owns and zero it. */
void cb_task_result_release(struct cb_task_result *r);

#endif
