/* timing.c: reading timing.jsonl, the rows a benchmark session timed
 * (docs/formats.md). */
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/fsutil.h"
#include "base/jsonio.h"

/* The clocks of a timing row (its "clocks" object, NULL when absent). */
static void row_clocks(const json_t *clk, struct cb_timing_clocks *c)
{
	const json_t *bf = json_object_get(clk, "before"), *af = json_object_get(clk, "after");
	const json_t *d = json_object_get(clk, "during");

	c->recorded = json_is_object(clk);
	c->sm_before = cb_json_int(bf, "sm_mhz", -1);
	c->sm_after = cb_json_int(af, "sm_mhz", -1);
	c->mem_before = cb_json_int(bf, "mem_mhz", -1);
	c->mem_after = cb_json_int(af, "mem_mhz", -1);
	c->during = d != NULL;
	c->sm_min = cb_json_int(d, "sm_min_mhz", -1);
	c->sm_max = cb_json_int(d, "sm_max_mhz", -1);
}

/* How a row was paced: its throttle object's attempts and rests. */
static void row_pacing(const json_t *th, struct cb_timing_row *row)
{
	const json_t *v;
	size_t i;

	row->attempts = cb_json_int(th, "attempts", 1);
	json_array_foreach(json_object_get(th, "rested_ms"), i, v)
		row->rested_ms += json_is_integer(v) ? (long long)json_integer_value(v) : 0;
}

/* Parse one timing.jsonl line (already NUL-terminated) into out, a struct
 * cb_timing_row. */
static int timing_line(const char *line, const char *path, size_t lineno, void *out, struct cb_err *err)
{
	struct cb_timing_row *row = out;
	json_error_t je;
	json_t *j = json_loads(line, JSON_REJECT_DUPLICATES, &je), *s, *v;
	const char *name, *timer, *why;
	const json_t *th;
	size_t i;

	memset(row, 0, sizeof(*row));
	if (!j)
		return cb_fail(err, "%s:%zu: %s", path, lineno, je.text);
	th = json_object_get(j, "throttle");
	if (th && (!json_is_object(th) || !json_is_boolean(json_object_get(th, "throttled")))) {
		json_decref(j);
		return cb_fail(err, "%s:%zu: throttle: expected an object with a boolean 'throttled'", path, lineno);
	}
	row->throttled = th && json_is_true(json_object_get(th, "throttled"));
	row_pacing(th, row);
	row_clocks(json_object_get(j, "clocks"), &row->clocks);
	name = cb_json_str(j, "row");
	timer = cb_json_str(j, "timer");
	why = cb_json_str(j, "timer_reason");
	s = json_object_get(j, "samples_ns");
	if (!name || !*name || !timer || !why || !json_is_array(s) || json_array_size(s) == 0) {
		json_decref(j);
		return cb_fail(err, "%s:%zu: a row needs row, samples_ns (non-empty), timer and timer_reason",
			       path, lineno);
	}
	if (strcmp(timer, "graph") != 0 && strcmp(timer, "direct") != 0) {
		cb_fail(err, "%s:%zu: timer: expected graph or direct, got '%s'", path, lineno, timer);
		json_decref(j);
		return -1;
	}
	row->n = json_array_size(s);
	row->samples = calloc(row->n, sizeof(*row->samples));
	row->row = strdup(name);
	row->timer = strdup(timer);
	row->timer_reason = strdup(why);
	row->shape = cb_json_str(j, "shape") ? strdup(cb_json_str(j, "shape")) : NULL;
	row->dtype = cb_json_str(j, "dtype") ? strdup(cb_json_str(j, "dtype")) : NULL;
	if (!row->samples || !row->row || !row->timer || !row->timer_reason ||
	    (cb_json_str(j, "shape") && !row->shape) || (cb_json_str(j, "dtype") && !row->dtype)) {
		json_decref(j);
		return cb_fail(err, "%s:%zu: out of memory", path, lineno);
	}
	json_array_foreach(s, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) <= 0) {
			json_decref(j);
			return cb_fail(err, "%s:%zu: samples_ns[%zu]: expected an integer > 0", path, lineno, i);
		}
		row->samples[i] = (int64_t)json_integer_value(v);
	}
	json_decref(j);
	return 0;
}

/* Free what a struct cb_timing_row holds (void *: a cb_json_row_kind's
 * release). */
static void timing_row_free(void *row)
{
	struct cb_timing_row *r = row;

	free(r->row);
	free(r->timer);
	free(r->timer_reason);
	free(r->shape);
	free(r->dtype);
	free(r->samples);
}

int cb_timing_load(const char *path, struct cb_timing *t, struct cb_err *err)
{
	char *buf;
	size_t len;
	int rc;

	memset(t, 0, sizeof(*t));
	if (cb_read_file(path, &buf, &len, err) < 0)
		return -1;
	rc = cb_timing_parse(buf, len, path, t, err);
	free(buf);
	return rc;
}

/* A row's name, for cb_json_rows. */
static const char *timing_row_name(const void *row)
{
	return ((const struct cb_timing_row *)row)->row;
}

/* A row of timing.jsonl, as cb_json_rows reads one. */
static const struct cb_json_row_kind timing_rows = {
	.size = sizeof(struct cb_timing_row), .parse = timing_line, .release = timing_row_free, .name = timing_row_name
};

int cb_timing_parse(const char *data, size_t len, const char *path, struct cb_timing *t,
		    struct cb_err *err)
{
	void *rows;

	memset(t, 0, sizeof(*t));
	if (cb_json_rows(data, len, path, &timing_rows, &rows, &t->n, err) < 0)
		return -1;
	t->rows = rows;
	if (t->n == 0)
		return cb_fail(err, "%s: no timing rows", path);
	return 0;
}

void cb_timing_release(struct cb_timing *t)
{
	size_t i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++)
		timing_row_free(&t->rows[i]);
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
