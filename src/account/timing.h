/* timing.h: timing.jsonl, the rows one benchmark session timed
 * (docs/formats.md): per row its samples, the timer and whether it ran
 * throttled. */
#ifndef CB_TIMING_H
#define CB_TIMING_H

#include <stddef.h>
#include <stdint.h>

#include "caliber.h"

/* One benchmark row of one session of a cell. */
struct cb_timing_row {
	char *row, *timer, *timer_reason;
	int64_t *samples;
	size_t n;
	int throttled;      /* the timing plugin found it throttled, measured again or not */
};

struct cb_timing {
	struct cb_timing_row *rows;
	size_t n;
};

/* Read timing.jsonl; errors name file and line. */
int cb_timing_load(const char *path, struct cb_timing *t, struct cb_err *err);
int cb_timing_parse(const char *data, size_t len, const char *path, struct cb_timing *t,
		    struct cb_err *err);
void cb_timing_release(struct cb_timing *t);

#endif
