/* export.c: a sealed run as rows for other tools (export.h). */
#include "export.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account/classify.h"
#include "base/csv.h"
#include "account/evidence.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "account/receipt.h"
#include "account/stats.h"
#include "account/timing.h"
#include "base/runroot.h"
#include "report.h"
#include "seal/seal.h"

const char *const cb_export_columns[] = {
	"task", "index", "op", "verdict", "code", "order", "role", "cell", "row", "shape", "dtype", "timer",
	"sessions", "samples", "throttled", "median_us", "min_us", "max_us", "iqr_us", "row_speedup_pct",
	"speedup_pct", "speedup_lo_pct", "speedup_hi_pct", "aa_pct", "aa_lo_pct", "aa_hi_pct", "stable_gain",
	"stable_regression", "topology", "reason", NULL
};

/* A time in ns as microseconds, rounded to 0.1 ns (four decimals). */
static json_t *us(double ns)
{
	return json_real((double)llround(ns * 10.0) / 1e4);
}

/* A figure in ppm as a percentage (four decimals, exact). */
static json_t *pct(long long ppm)
{
	return json_real((double)ppm / 1e4);
}

/* Quantile q of the n >= 1 sorted values, by numpy's default linear rule
 * (the rule of the bootstrap's interval, docs/formats.md "Statistics"). */
static double quantile(const int64_t *x, size_t n, double q)
{
	double h = (double)(n - 1) * q, f = floor(h);
	size_t i = (size_t)f;

	if (i + 1 >= n)
		return (double)x[n - 1];
	return (double)x[i] + (h - f) * ((double)x[i + 1] - (double)x[i]);
}

/* One cell's entries of one benchmark row, every session pooled. */
struct pooled {
	int64_t *s;                 /* sorted */
	size_t n, sessions;
	int throttled, mixed;
	const struct cb_timing_row *first;  /* the first session's entry: shape, dtype, timer */
};

/* A cell's timing in one order: each session's timing.jsonl (timing.h). */
struct cell_timing {
	struct cb_timing *t;
	size_t n;
};

/* Pool the entries of row key over a cell's sessions into p (zeroed
 * first), sorted. Returns -1 when out of memory. */
static int pool_row(const struct cell_timing *c, const char *key, struct pooled *p)
{
	size_t i, k;

	memset(p, 0, sizeof(*p));
	for (i = 0; i < c->n; i++)
		for (k = 0; k < c->t[i].n; k++) {
			const struct cb_timing_row *row = &c->t[i].rows[k];
			int64_t *grown;

			if (strcmp(row->row, key) != 0)
				continue;
			if (!p->first)
				p->first = row;
			else if (strcmp(row->timer, p->first->timer) != 0)
				p->mixed = 1;
			p->sessions++;
			p->throttled |= row->throttled;
			if (!(grown = realloc(p->s, (p->n + row->n) * sizeof(*grown))))
				return -1;
			p->s = grown;
			memcpy(p->s + p->n, row->samples, row->n * sizeof(*grown));
			p->n += row->n;
		}
	if (p->n)
		cb_sort_i64(p->s, p->n);
	return 0;
}

/* Every session's timing.jsonl of one cell in one order into c (none
 * when the cell was not timed). A file that cannot be read is an error:
 * the seal holds, so it is what was sealed. */
static int cell_timing(const char *tdir, enum cb_phase p, const char *cell, struct cell_timing *c,
		       struct cb_err *err)
{
	int k;

	memset(c, 0, sizeof(*c));
	for (k = 1;; k++) {
		char *dir = cb_session_dir(tdir, p, cell, k), *path = dir ? cb_path_join(dir, CB_RUN_TIMING) : NULL;
		struct cb_timing *grown;
		int rc;

		free(dir);
		if (!path)
			return cb_fail(err, "out of memory");
		if (!cb_exists(path)) {
			free(path);
			return 0;
		}
		if (!(grown = realloc(c->t, (c->n + 1) * sizeof(*grown)))) {
			free(path);
			return cb_fail(err, "out of memory");
		}
		c->t = grown;
		rc = cb_timing_load(path, &c->t[c->n], err);
		free(path);
		if (rc < 0)
			return -1;
		c->n++;
	}
}

/* Free what cell_timing read. */
static void cell_timing_release(struct cell_timing *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		cb_timing_release(&c->t[i]);
	free(c->t);
	memset(c, 0, sizeof(*c));
}

/* The task-level columns of a row, shared by every row of the task. */
static json_t *task_columns(const json_t *doc, const struct cb_task_result *r)
{
	char v[2] = { r->verdict, '\0' };

	return json_pack("{s:s, s:I, s:s, s:s, s:s, s:s}", "task", r->id, "index",
			 (json_int_t)cb_json_int(doc, "index", 0), "op", r->op, "verdict", v, "code", r->code, "reason",
			 r->reason);
}

/* The order's figures (candidate vs baseline, and the A/A of control vs
 * baseline) into row, null where the order was not timed. */
static void order_columns(json_t *row, const json_t *order)
{
	static const struct {
		const char *col, *key;
	} figs[] = {
		{ "speedup_pct", "speedup_ppm" }, { "speedup_lo_pct", "lo_ppm" }, { "speedup_hi_pct", "hi_ppm" },
		{ "aa_pct", "aa_speedup_ppm" }, { "aa_lo_pct", "aa_lo_ppm" }, { "aa_hi_pct", "aa_hi_ppm" },
	};
	int present = json_is_true(json_object_get(order, "present"));
	size_t i;

	for (i = 0; i < sizeof(figs) / sizeof(figs[0]); i++) {
		const json_t *v = json_object_get(order, figs[i].key);
		json_object_set_new(row, figs[i].col, present && json_is_integer(v) ? pct((long long)json_integer_value(v))
									   : json_null());
	}
	json_object_set_new(row, "stable_gain", present ? json_boolean(json_is_true(json_object_get(order, "stable_gain")))
							: json_null());
	json_object_set_new(row, "stable_regression",
			    present ? json_boolean(json_is_true(json_object_get(order, "stable_regression"))) : json_null());
}

/* A row with every measurement column null: a task that left no timing
 * row is still exported, with its verdict and reason. */
static json_t *empty_row(const json_t *doc, const struct cb_task_result *r)
{
	static const char *const nulls[] = { "order", "role", "cell", "row", "shape", "dtype", "timer", "sessions",
					     "samples", "throttled", "median_us", "min_us", "max_us", "iqr_us",
					     "row_speedup_pct", "topology" };
	json_t *row = task_columns(doc, r);
	size_t i;

	for (i = 0; row && i < sizeof(nulls) / sizeof(nulls[0]); i++)
		json_object_set_new(row, nulls[i], json_null());
	if (row)
		order_columns(row, NULL);
	return row;
}

/* s as a JSON string, or null. */
static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* One exported row: cell (role r, named name) of order o, benchmark row
 * key, from its pooled samples p; base is the baseline's, for the row's
 * own speedup. */
static json_t *measured_row(const json_t *doc, const struct cb_task_result *r, int o, int role, const char *name,
			    const char *key, const struct pooled *p, const struct pooled *base)
{
	const json_t *topo = json_object_get(json_object_get(doc, "topology"), cb_role_name((enum cb_role)role));
	json_t *row = task_columns(doc, r);
	double med = cb_median_sorted_i64(p->s, p->n);

	if (!row)
		return NULL;
	json_object_set_new(row, "order", json_string(o ? "b" : "a"));
	json_object_set_new(row, "role", json_string(cb_role_name((enum cb_role)role)));
	json_object_set_new(row, "cell", json_string(name));
	json_object_set_new(row, "row", json_string(key));
	json_object_set_new(row, "shape", str_or_null(p->first->shape));
	json_object_set_new(row, "dtype", str_or_null(p->first->dtype));
	json_object_set_new(row, "timer", p->mixed ? json_string("mixed") : str_or_null(p->first->timer));
	json_object_set_new(row, "sessions", json_integer((json_int_t)p->sessions));
	json_object_set_new(row, "samples", json_integer((json_int_t)p->n));
	json_object_set_new(row, "throttled", json_boolean(p->throttled));
	json_object_set_new(row, "median_us", us(med));
	json_object_set_new(row, "min_us", us((double)p->s[0]));
	json_object_set_new(row, "max_us", us((double)p->s[p->n - 1]));
	json_object_set_new(row, "iqr_us", us(quantile(p->s, p->n, 0.75) - quantile(p->s, p->n, 0.25)));
	json_object_set_new(row, "row_speedup_pct",
			    role != CB_ROLE_BASELINE && base->n ? pct(cb_ppm(cb_median_sorted_i64(base->s, base->n) / med - 1.0))
								: json_null());
	order_columns(row, json_object_get(json_object_get(doc, "orders"), o ? "b" : "a"));
	json_object_set_new(row, "topology", json_is_true(json_object_get(topo, "joinable"))
						     ? json_integer(cb_json_int(topo, "scoped", 0)) : json_null());
	return row;
}

/* Append to keys (an array of strings) every row key of c not in it yet. */
static void add_keys(json_t *keys, const struct cell_timing *c)
{
	const json_t *k;
	size_t i, j, r;

	for (i = 0; i < c->n; i++)
		for (r = 0; r < c->t[i].n; r++) {
			const char *key = c->t[i].rows[r].row;
			int seen = 0;
			json_array_foreach(keys, j, k)
				seen |= strcmp(json_string_value(k), key) == 0;
			if (!seen)
				json_array_append_new(keys, json_string(key));
		}
}

/* The rows of one order of a task, appended to out: keys in the order the
 * baseline timed them (then any only another cell timed), cells by role.
 * Returns the number of rows appended, -1 with err filled. */
static long export_order(const char *tdir, const json_t *doc, const struct cb_task_result *r, int o, json_t *out,
			 struct cb_err *err)
{
	const json_t *cells = json_object_get(doc, "cells"), *k;
	struct cell_timing timing[CB_NROLES];
	json_t *keys = json_array();
	const char *names[CB_NROLES];
	long added = -1;
	size_t i;
	int role;

	memset(timing, 0, sizeof(timing));
	for (role = 0; role < CB_NROLES; role++) {
		names[role] = cb_json_str(json_object_get(cells, cb_role_name((enum cb_role)role)), "name");
		if (!names[role] || !cb_is_ident(names[role])) {
			cb_fail(err, "%s/" CB_RUN_TASK ": cells.%s.name: missing or not a name", tdir,
				cb_role_name((enum cb_role)role));
			goto out;
		}
		if (cell_timing(tdir, o ? CB_PH_ROUND_B : CB_PH_ROUND_A, names[role], &timing[role], err) < 0)
			goto out;
		add_keys(keys, &timing[role]);
	}
	added = 0;
	json_array_foreach(keys, i, k) {
		struct pooled p[CB_NROLES];
		int ok = 1;

		for (role = 0; role < CB_NROLES; role++)
			ok &= pool_row(&timing[role], json_string_value(k), &p[role]) == 0;
		for (role = 0; ok && role < CB_NROLES; role++) {
			json_t *row;
			if (!p[role].n)
				continue;
			row = measured_row(doc, r, o, role, names[role], json_string_value(k), &p[role],
					   &p[CB_ROLE_BASELINE]);
			ok = row && json_array_append_new(out, row) == 0;
			added++;
		}
		for (role = 0; role < CB_NROLES; role++)
			free(p[role].s);
		if (!ok) {
			cb_fail(err, "out of memory");
			added = -1;
			break;
		}
	}
out:
	for (role = 0; role < CB_NROLES; role++)
		cell_timing_release(&timing[role]);
	json_decref(keys);
	return added;
}

/* Every row of the task id of the run at root, appended to out. */
static int export_task(const char *root, const char *id, json_t *out, struct cb_err *err)
{
	char *tdir = cb_strdupf("%s/" CB_RUN_TASKS "/%s", root, id), *path = tdir ? cb_path_join(tdir, CB_RUN_TASK) : NULL;
	struct cb_task_result r;
	json_t *doc = NULL;
	long n, total = 0;
	int o, rc = -1;

	memset(&r, 0, sizeof(r));
	if (!path) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (!(doc = cb_json_load_file(path, err)) || cb_task_result_from_json(doc, path, &r, err) < 0)
		goto out;
	if (strcmp(r.id, id) != 0) {
		cb_fail(err, "%s: names task '%s', the campaign receipt '%s'", path, r.id, id);
		goto out;
	}
	for (o = 0; o < CB_NORDERS; o++) {
		if ((n = export_order(tdir, doc, &r, o, out, err)) < 0)
			goto out;
		total += n;
	}
	if (!total && json_array_append_new(out, empty_row(doc, &r)) < 0) {
		cb_fail(err, "out of memory");
		goto out;
	}
	rc = 0;
out:
	cb_task_result_release(&r);
	json_decref(doc);
	free(path);
	free(tdir);
	return rc;
}

/* The seal of the run, as the view checked it: {format, files, sha256};
 * NULL with err naming the first difference when it does not hold. */
static json_t *seal_of(const struct cb_run_view *v, struct cb_err *err)
{
	char first[CB_ERR_MAX - 256];
	json_t *j;

	if (v->seal == CB_SEAL_UNCHECKED) {
		*err = v->seal_err;
		return NULL;
	}
	if (v->seal == CB_SEAL_BROKEN) {
		cb_verify_first(&v->rep, first, sizeof(first));
		return cb_fail(err, "%s: seal does not hold: %s; only a run that verifies is exported", v->root, first),
		       NULL;
	}
	if (!(j = json_pack("{s:i, s:I, s:s}", "format", v->rep.format, "files", (json_int_t)v->rep.nfiles, "sha256",
			    v->rep.digest)))
		cb_fail(err, "out of memory");
	return j;
}

json_t *cb_export_run(const struct cb_run_view *rv, struct cb_err *err)
{
	const struct cb_campaign_summary *cs = &rv->cs;
	const json_t *th;
	json_t *doc = NULL, *rows = NULL, *seal = NULL, *counts = NULL;
	const char *v;
	size_t i;

	if (!(seal = seal_of(rv, err)))
		return NULL;
	if (!rv->have_cs) {
		*err = rv->load_err;
		goto fail;
	}
	rows = json_array();
	counts = json_object();
	for (i = 0; rows && i < cs->ntasks; i++)
		if (export_task(rv->root, cs->tasks[i].id, rows, err) < 0)
			goto fail;
	for (v = CB_VERDICTS_READING; counts && *v; v++) {
		char key[2] = { *v, '\0' };
		json_int_t n = 0;
		for (i = 0; i < cs->ntasks; i++)
			n += cs->tasks[i].verdict[0] == *v;
		json_object_set_new(counts, key, json_integer(n));
	}
	th = json_object_get(cs->doc, "thresholds");
	doc = rows && counts ? json_pack("{s:s, s:s, s:s, s:s, s:O, s:I, s:{s:o, s:o, s:o}, s:I, s:O, s:O}",
					 "schema", CB_EXPORT_SCHEMA, "campaign", cs->campaign, "selection",
					 cs->selection, "manifest_sha256", cs->manifest_sha256, "seal", seal,
					 "launch_floor", (json_int_t)cs->launch_floor, "thresholds", "gain_pct",
					 pct(cb_json_int(th, "gain_ppm", 0)), "regression_pct",
					 pct(cb_json_int(th, "regression_ppm", 0)), "confidence_pct",
					 pct(cb_json_int(th, "confidence_ppm", 0)), "tasks", (json_int_t)cs->ntasks,
					 "verdicts", counts, "rows", rows)
			     : NULL;
	if (!doc)
		cb_fail(err, "out of memory");
fail:
	json_decref(rows);
	json_decref(counts);
	json_decref(seal);
	return doc;
}

char *cb_export_json_text(const json_t *doc, struct cb_err *err)
{
	/* 15 significant digits write every decimal of four places back
	 * exactly, in its shortest form; nothing else here is a real. */
	char *s = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(15));
	char *out = s ? cb_strdupf("%s\n", s) : NULL;

	free(s);
	if (!out)
		cb_fail(err, "out of memory");
	return out;
}

/* One CSV field from a JSON value: empty for null, the number as the JSON
 * text writes it (without a trailing ".0"), true/false, or the string. */
static void csv_value(struct cb_buf *b, const json_t *v)
{
	char num[64];

	if (!v || json_is_null(v))
		return;
	if (json_is_string(v)) {
		cb_csv_put_field(b, json_string_value(v));
	} else if (json_is_integer(v)) {
		cb_buf_addf(b, "%lld", (long long)json_integer_value(v));
	} else if (json_is_real(v)) {
		snprintf(num, sizeof(num), "%.15g", json_real_value(v));
		cb_buf_adds(b, num);
	} else {
		cb_buf_adds(b, json_is_true(v) ? "true" : "false");
	}
}

void cb_export_csv(struct cb_buf *b, const json_t *doc)
{
	const json_t *row;
	size_t i, c;

	for (c = 0; cb_export_columns[c]; c++)
		cb_buf_addf(b, "%s%s", c ? "," : "", cb_export_columns[c]);
	cb_buf_adds(b, "\r\n");
	json_array_foreach(json_object_get(doc, "rows"), i, row) {
		for (c = 0; cb_export_columns[c]; c++) {
			cb_buf_adds(b, c ? "," : "");
			csv_value(b, json_object_get(row, cb_export_columns[c]));
		}
		cb_buf_adds(b, "\r\n");
	}
}
