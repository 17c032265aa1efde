/* aa.c: the campaign's A/A count and its line (aa.h). */
#include "aa.h"

#include <stdio.h>
#include <string.h>

#include "classify.h"

void cb_aa_count_add(struct cb_aa_count *c, const struct cb_task_result *r)
{
	int o;

	if (!c->counted++)
		c->nominal_ppm = 1000000 - r->confidence_ppm;
	for (o = 0; o < CB_NORDERS; o++)
		if (r->present[o]) {
			c->intervals++;
			c->excluding += r->aa_lo_ppm[o] > 0 || r->aa_hi_ppm[o] < 0;
		}
}

void cb_aa_count(const struct cb_task_result *res, size_t n, struct cb_aa_count *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < n; i++)
		cb_aa_count_add(c, &res[i]);
}

void cb_aa_line(const struct cb_aa_count *c, char *out, size_t cap)
{
	char share[32];

	cb_fmt_share(c->nominal_ppm, share, sizeof(share));
	snprintf(out, cap, "A/A: %zu of %zu control-vs-baseline intervals exclude zero (nominal %s)", c->excluding,
		 c->intervals, share);
}

void cb_aa_line_of(const struct cb_task_result *res, size_t n, char *out, size_t cap)
{
	struct cb_aa_count c;

	cb_aa_count(res, n, &c);
	cb_aa_line(&c, out, cap);
}
