/* aa.h: what identical code gives in a campaign (docs/design.md section 10). The
 * control compiles the baseline's code, so its interval against the
 * baseline is an A/A in every order of every run: at confidence c, about
 * 1 - c of these intervals should exclude zero. The line that says how
 * many did heads every report and ends every verdict matrix
 * (docs/formats.md, "Statistics" and "Verdict matrix"). */
#ifndef CB_AA_H
#define CB_AA_H

#include <stddef.h>

#include "result.h"

/* The A/A count of a campaign: of the orders that have an interval, how
 * many control-vs-baseline intervals exclude zero (aa_lo_ppm > 0 or
 * aa_hi_ppm < 0), and the nominal share, 1 - confidence, in ppm. */
struct cb_aa_count {
	size_t excluding, intervals;
	long long nominal_ppm;
	size_t counted;          /* results added */
};

/* Count the A/A intervals of n task results into c (zeroed first), or
 * add those of one result to c. The nominal share is 1 - the confidence
 * of the first result counted: a campaign has one. */
void cb_aa_count(const struct cb_task_result *res, size_t n, struct cb_aa_count *c);
void cb_aa_count_add(struct cb_aa_count *c, const struct cb_task_result *r);

/* "A/A: k of n control-vs-baseline intervals exclude zero (nominal 5 %)". */
void cb_aa_line(const struct cb_aa_count *c, char *out, size_t cap);

/* The line of n task results at once. */
void cb_aa_line_of(const struct cb_task_result *res, size_t n, char *out, size_t cap);

/* Room for any line cb_aa_line writes. */
#define CB_AA_LINE_MAX 128

#endif
