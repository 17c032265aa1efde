/* result.c: a task result's release and the formats of its figures
 * (result.h). */
#include "result.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cb_fmt_pct(long long ppm, char *out, size_t cap)
{
	/* Unsigned, so that any ppm a receipt holds, LLONG_MIN included, has
	 * a magnitude and rounds without overflow. */
	unsigned long long mag = ppm < 0 ? 0ULL - (unsigned long long)ppm : (unsigned long long)ppm;
	unsigned long long hundredths = mag / 100 + (mag % 100 >= 50);

	snprintf(out, cap, "%c%llu.%02llu%%", ppm < 0 && hundredths ? '-' : '+', hundredths / 100,
		 hundredths % 100);
}

void cb_fmt_share(long long ppm, char *out, size_t cap)
{
	long long h = (ppm + 50) / 100;

	if (h % 100 == 0)
		snprintf(out, cap, "%lld %%", h / 100);
	else if (h % 10 == 0)
		snprintf(out, cap, "%lld.%lld %%", h / 100, h / 10 % 10);
	else
		snprintf(out, cap, "%lld.%02lld %%", h / 100, h % 100);
}

void cb_task_result_release(struct cb_task_result *r)
{
	if (!r)
		return;
	free(r->id);
	free(r->op);
	free(r->code);
	free(r->reason);
	memset(r, 0, sizeof(*r));
}
