/* timing.h: timing.jsonl, the rows one benchmark session timed
 * (docs/formats.md): per row its samples, the timer, the clocks it ran at
 * and how it was paced (throttled, retried, rested). The one reader of a
 * timing row: verdicts and reports alike read it here. */
#ifndef CB_TIMING_H
#define CB_TIMING_H

#include <stddef.h>
#include <stdint.h>

#include "caliber.h"

/* The clocks a row ran at, as the device said (MHz; -1: not said). */
struct cb_timing_clocks {
	int recorded;                   /* the row has a "clocks" object */
	long long sm_before, sm_after;  /* SM clock before and after the row */
	long long mem_before, mem_after;/* memory clock likewise */
	int during;                     /* "during" is there: sampled while the row ran */
	long long sm_min, sm_max;       /* the SM clock's range then */
};

/* One benchmark row of one session of a cell. */
struct cb_timing_row {
	char *row, *timer, *timer_reason;
	char *shape, *dtype;/* its shape and dtype as the workload names them, or NULL */
	int64_t *samples;
	size_t n;
	int throttled;      /* the timing plugin found it throttled, measured again or not */
	long long attempts; /* how often it was measured (1 unless retried) */
	long long rested_ms;/* the rests before its attempts, summed */
	struct cb_timing_clocks clocks;
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
