/* evidence.c: a task's cell folders turned into the classifier's facts. */
#include "evidence.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "fsutil.h"
#include "jsonio.h"
#include "seal.h"

static const char *const outcome_names[] = {
	"not-run", "passed", "failed", "unsupported", "error", "timeout", "crashed",
	"replay-miss", "missing-output"
};

const char *cb_outcome_name(enum cb_outcome o)
{
	return (unsigned)o < sizeof(outcome_names) / sizeof(outcome_names[0]) ? outcome_names[o] : "?";
}

int cb_outcome_parse(const char *s, enum cb_outcome *o)
{
	size_t i;

	for (i = 0; s && i < sizeof(outcome_names) / sizeof(outcome_names[0]); i++)
		if (strcmp(s, outcome_names[i]) == 0) {
			*o = (enum cb_outcome)i;
			return 0;
		}
	return -1;
}

/* Parse one timing.jsonl line (already NUL-terminated) into row. */
static int timing_line(const char *line, const char *path, size_t lineno,
		       struct cb_timing_row *row, struct cb_err *err)
{
	json_error_t je;
	json_t *j = json_loads(line, JSON_REJECT_DUPLICATES, &je), *s, *v;
	const char *name, *timer, *why;
	size_t i;

	memset(row, 0, sizeof(*row));
	if (!j)
		return cb_fail(err, "%s:%zu: %s", path, lineno, je.text);
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
	if (!row->samples || !row->row || !row->timer || !row->timer_reason) {
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

static void timing_row_free(struct cb_timing_row *r)
{
	free(r->row);
	free(r->timer);
	free(r->timer_reason);
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

int cb_timing_parse(const char *data, size_t len, const char *path, struct cb_timing *t,
		    struct cb_err *err)
{
	char *buf = strndup(data, len), *p, *nl;
	size_t lineno = 0, i;

	memset(t, 0, sizeof(*t));
	if (!buf)
		return cb_fail(err, "%s: out of memory", path);
	if (strlen(buf) != len) {
		free(buf);
		return cb_fail(err, "%s: a NUL byte in a text file", path);
	}
	for (p = buf; *p; p = nl ? nl + 1 : p + strlen(p)) {
		struct cb_timing_row row, *rows;

		lineno++;
		nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		if (!*p)
			continue;
		if (timing_line(p, path, lineno, &row, err) < 0) {
			timing_row_free(&row);
			goto fail;
		}
		for (i = 0; i < t->n; i++)
			if (strcmp(t->rows[i].row, row.row) == 0) {
				cb_fail(err, "%s:%zu: row '%s' appears twice", path, lineno, row.row);
				timing_row_free(&row);
				goto fail;
			}
		rows = realloc(t->rows, (t->n + 1) * sizeof(*rows));
		if (!rows) {
			timing_row_free(&row);
			cb_fail(err, "%s: out of memory", path);
			goto fail;
		}
		t->rows = rows;
		t->rows[t->n++] = row;
		if (!nl)
			break;
	}
	free(buf);
	if (t->n == 0)
		return cb_fail(err, "%s: no timing rows", path);
	return 0;
fail:
	free(buf);
	cb_timing_release(t);
	return -1;
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

char *cb_cell_dir(const char *task_dir, enum cb_phase p, const char *cell)
{
	return cb_strdupf("%s/cells/%s-%s", task_dir, cb_phase_name(p), cell);
}

/* Read one cell receipt's outcome, and its detail into a fresh string; a
 * missing receipt means not run. */
static void load_outcome(const char *cell_dir, enum cb_outcome *o, char **detail)
{
	char *path = cb_path_join(cell_dir, "cell.json");
	struct cb_err err;
	json_t *j;

	*o = CB_OUT_NOT_RUN;
	if (!path || !cb_exists(path)) {
		free(path);
		*detail = strdup("no cell receipt");
		return;
	}
	j = cb_json_load_file(path, &err);
	free(path);
	if (!j) {
		*o = CB_OUT_ERROR;
		*detail = cb_strdupf("unreadable cell receipt: %s", err.msg);
		return;
	}
	if (cb_outcome_parse(cb_json_str(j, "outcome"), o) < 0) {
		*o = CB_OUT_ERROR;
		*detail = strdup("cell receipt has no valid outcome");
	} else {
		const char *d = cb_json_str(j, "detail");
		*detail = strdup(d ? d : cb_outcome_name(*o));
	}
	json_decref(j);
}

int cb_evidence_load(const char *task_dir, const char *task, const struct cb_manifest *m,
			     long long floor, const struct cb_ttgir_counts *pre,
			     struct cb_task_evidence *ev, struct cb_err *err)
{
	int p, c;

	memset(ev, 0, sizeof(*ev));
	if (!cb_is_dir(task_dir))
		return cb_fail(err, "%s: not a task folder", task_dir);
	ev->dir = strdup(task_dir);
	ev->task = strdup(task);
	if (!ev->dir || !ev->task) {
		cb_evidence_release(ev);
		return cb_fail(err, "out of memory");
	}
	for (p = 0; p < CB_NPHASES; p++) {
		for (c = 0; c < CB_NROLES; c++) {
			const struct cb_cell *cell = &m->cells[c];
			enum cb_role r = cell->role;
			char *dir = cb_cell_dir(task_dir, (enum cb_phase)p, cell->name);
			struct cb_err e2;

			if (!dir) {
				cb_evidence_release(ev);
				return cb_fail(err, "out of memory");
			}
			load_outcome(dir, &ev->outcome[p][r], &ev->detail[p][r]);
			if (p != CB_PH_CORRECTNESS && ev->outcome[p][r] == CB_OUT_PASSED) {
				int o = p == CB_PH_ROUND_A ? CB_ORDER_A : CB_ORDER_B;
				char *tp = cb_path_join(dir, "timing.jsonl");
				if (!tp || cb_timing_load(tp, &ev->timing[o][r], &e2) < 0) {
					ev->outcome[p][r] = CB_OUT_MISSING_OUTPUT;
					free(ev->detail[p][r]);
					ev->detail[p][r] = strdup(tp ? e2.msg : "out of memory");
				}
				free(tp);
			}
			if (p == CB_PH_ROUND_A && ev->outcome[p][r] == CB_OUT_PASSED) {
				if (cb_topology_scan_counted(dir, m->topology_op, floor, pre, &ev->topology[r],
							     &e2) == 0)
					ev->have_topology[r] = 1;
				else
					ev->topology_error[r] = strdup(e2.msg);
			}
			free(dir);
			if (!ev->detail[p][r] || (p == CB_PH_ROUND_A && !ev->have_topology[r] &&
						  ev->outcome[p][r] == CB_OUT_PASSED && !ev->topology_error[r])) {
				cb_evidence_release(ev);
				return cb_fail(err, "out of memory");
			}
		}
	}
	return 0;
}

/* ---- counting IR while the seal is verified ----------------------------- */

/* What the verify observer shares between the hashing threads. */
struct count_job {
	const char *root, *op;
	struct cb_ttgir_counts *counts;   /* added to under lock */
	pthread_mutex_t lock;
};

/* One file being counted. */
struct count_file {
	char *path;
	struct cb_ttgir_counter *c;
};

/* Whether rel is tasks/<task>/cells/<cell>/ir/<variant>/<file>.ttgir: the
 * files cb_topology_scan reads in a cell. */
static int is_cell_ttgir(const char *rel)
{
	static const char *const fixed[] = { "tasks", NULL, "cells", NULL, "ir", NULL };
	const char *p = rel;
	size_t i;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		const char *slash = strchr(p, '/');
		if (!slash || slash == p)
			return 0;
		if (fixed[i] && ((size_t)(slash - p) != strlen(fixed[i]) || memcmp(p, fixed[i], strlen(fixed[i]))))
			return 0;
		p = slash + 1;
	}
	return !strchr(p, '/') && cb_is_ttgir_name(p);
}

/* cb_verify_observer.begin: a counter for each cell .ttgir, NULL for the
 * rest and when out of memory (the file is then read again when needed). */
static void *count_begin(const char *rel, void *ctx)
{
	struct count_job *job = ctx;
	struct count_file *f;
	struct cb_err err;

	if (!is_cell_ttgir(rel) || !(f = calloc(1, sizeof(*f))))
		return NULL;
	f->path = cb_strdupf("%s/%s", job->root, rel);
	if (!f->path || cb_ttgir_counter_new(job->op, &f->c, &err) < 0) {
		free(f->path);
		free(f);
		return NULL;
	}
	return f;
}

/* cb_verify_observer.chunk: count the next bytes of the file. */
static void count_chunk(void *state, const char *p, size_t n)
{
	struct count_file *f = state;

	cb_ttgir_counter_feed(f->c, p, n);
}

/* cb_verify_observer.end: record the count of a file read whole. A failed
 * add leaves the file out, to be read again. */
static void count_end(void *state, int ok, void *ctx)
{
	struct count_job *job = ctx;
	struct count_file *f = state;
	struct cb_err err;

	if (ok) {
		long long count = cb_ttgir_counter_result(f->c);
		pthread_mutex_lock(&job->lock);
		(void)cb_ttgir_counts_add(job->counts, f->path, count, &err);
		pthread_mutex_unlock(&job->lock);
	}
	cb_ttgir_counter_free(f->c);
	free(f->path);
	free(f);
}

int cb_evidence_verify_counting(const char *root, const char *op, struct cb_ttgir_counts *counts,
				struct cb_err *err)
{
	struct count_job job = { root, op, counts, PTHREAD_MUTEX_INITIALIZER };
	const struct cb_verify_observer obs = { count_begin, count_chunk, count_end, &job, &counts->listing };
	int rc;

	memset(counts, 0, sizeof(*counts));
	if (cb_topology_check_op(op, err) < 0 || cb_ttgir_counts_init(counts, op, err) < 0)
		return -1;
	if (!(counts->root = strdup(root))) {
		cb_ttgir_counts_release(counts);
		return cb_fail(err, "out of memory");
	}
	rc = cb_verify_or_fail_observed(root, &obs, err);
	pthread_mutex_destroy(&job.lock);
	if (rc < 0)
		cb_ttgir_counts_release(counts);
	else
		cb_ttgir_counts_sort(counts);
	return rc;
}

void cb_evidence_rescope(struct cb_task_evidence *ev, long long floor)
{
	int r;

	for (r = 0; r < CB_NROLES; r++)
		if (ev->have_topology[r])
			cb_topology_rescope(&ev->topology[r], floor);
}

void cb_evidence_release(struct cb_task_evidence *ev)
{
	int o, r;

	if (!ev)
		return;
	for (r = 0; r < CB_NROLES; r++) {
		cb_topology_release(&ev->topology[r]);
		free(ev->topology_error[r]);
		for (o = 0; o < CB_NORDERS; o++)
			cb_timing_release(&ev->timing[o][r]);
		for (o = 0; o < CB_NPHASES; o++)
			free(ev->detail[o][r]);
	}
	free(ev->dir);
	free(ev->task);
	memset(ev, 0, sizeof(*ev));
}

/* Rank of a harness problem: the order in which SPEC's X row lists them. */
static int harness_rank(enum cb_outcome o, int phase)
{
	switch (o) {
	case CB_OUT_UNSUPPORTED: return 1;
	case CB_OUT_TIMEOUT: return 2;
	case CB_OUT_CRASHED:
	case CB_OUT_ERROR:
	case CB_OUT_MISSING_OUTPUT: return 3;
	case CB_OUT_FAILED: return phase == CB_PH_CORRECTNESS ? 0 : 3;   /* a benchmark that fails */
	case CB_OUT_NOT_RUN: return phase == CB_PH_ROUND_B ? 0 : 3;      /* b runs only on a reduction */
	case CB_OUT_REPLAY_MISS: return 4;
	case CB_OUT_PASSED: return 0;
	}
	return 3;
}

static const char *const harness_codes[] = { NULL, "unsupported", "timeout", "harness-failure", "replay-miss" };

static const char *role_cell_name(const struct cb_manifest *m, int r)
{
	return cb_manifest_cell(m, (enum cb_role)r)->name;
}

/* The first harness problem by the spec's order, phases and cells in run order. */
static void find_harness(const struct cb_task_evidence *ev, const struct cb_manifest *m,
			 struct cb_facts *f)
{
	int best = 0, p, c;

	for (p = 0; p < CB_NPHASES; p++)
		for (c = 0; c < CB_NROLES; c++) {
			enum cb_role r = m->cells[c].role;
			int rank = harness_rank(ev->outcome[p][r], p);
			if (rank && (!best || rank < best)) {
				best = rank;
				free(f->harness_reason);
				f->harness_reason = cb_strdupf("%s in cell %s, %s%s: %s",
							       cb_outcome_name(ev->outcome[p][r]), m->cells[c].name,
							       p == CB_PH_CORRECTNESS ? "" : "round ",
							       cb_phase_name((enum cb_phase)p), ev->detail[p][r]);
			}
		}
	f->harness_code = harness_codes[best];
}

/* Speedup of cell `other` against the baseline over the baseline's rows,
 * each cell one session (its timing.jsonl). A row missing in one cell, or
 * timed by another timer, is a harness failure, reported through f.
 * Returns 0 when computed. */
static int order_speedup(const struct cb_task_evidence *ev, const struct cb_manifest *m, int o,
			 enum cb_role other, const char *seed_tag, struct cb_speedup *sp,
			 struct cb_facts *f, struct cb_err *err)
{
	const struct cb_timing *tb = &ev->timing[o][CB_ROLE_BASELINE], *to = &ev->timing[o][other];
	size_t slots = tb->n ? tb->n : 1;
	const char **names = calloc(slots, sizeof(*names));
	struct cb_samples *sb = calloc(slots, sizeof(*sb)), *so = calloc(slots, sizeof(*so));
	struct cb_cell_samples bcell = { sb, tb->n, 1 }, ocell = { so, tb->n, 1 };
	uint64_t seed;
	size_t i, j;
	int rc = -1;

	if (!names || !sb || !so) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (to->n != tb->n) {
		f->harness_code = "harness-failure";
		free(f->harness_reason);
		f->harness_reason = cb_strdupf("round %s: baseline has %zu timing rows, %s has %zu", o ? "b" : "a",
					       tb->n, role_cell_name(m, other), to->n);
		goto out;
	}
	for (i = 0; i < tb->n; i++) {
		for (j = 0; j < to->n; j++)
			if (strcmp(tb->rows[i].row, to->rows[j].row) == 0)
				break;
		if (j == to->n || strcmp(tb->rows[i].timer, to->rows[j].timer) != 0) {
			f->harness_code = "harness-failure";
			free(f->harness_reason);
			f->harness_reason = cb_strdupf(j == to->n ? "round %s: row '%s' is missing in cell %s"
								  : "round %s: row '%s' is timed differently in cell %s",
						       o ? "b" : "a", tb->rows[i].row, role_cell_name(m, other));
			goto out;
		}
		names[i] = tb->rows[i].row;
		sb[i] = (struct cb_samples){ tb->rows[i].samples, tb->rows[i].n };
		so[i] = (struct cb_samples){ to->rows[j].samples, to->rows[j].n };
	}
	if (cb_bootstrap_seed(ev->task, seed_tag, &seed, err) < 0 ||
	    cb_speedup(names, &bcell, &ocell, m->confidence, seed, CB_BOOTSTRAP_RESAMPLES, sp, err) < 0)
		goto out;
	rc = 0;
out:
	free(names);
	free(sb);
	free(so);
	return rc;
}

/* At most this many reasons are listed for IR that cannot be joined; the
 * rest are counted. */
#define UNJOINABLE_LISTED 8

void cb_facts_topology(const struct cb_task_evidence *ev, const struct cb_manifest *m,
		       struct cb_facts *f)
{
	struct cb_buf b = CB_BUF_INIT;
	size_t listed = 0, more = 0, k;
	int r;

	f->joinable = 1;
	free(f->unjoinable);
	f->unjoinable = NULL;
	for (r = 0; r < CB_NROLES; r++) {
		f->topology[r] = 0;
		if (ev->have_topology[r] && ev->topology[r].joinable) {
			f->topology[r] = ev->topology[r].scoped;
			continue;
		}
		f->joinable = 0;
		if (!ev->have_topology[r]) {
			cb_buf_addf(&b, "%s%s: %s", b.len ? "; " : "", role_cell_name(m, r),
				    ev->topology_error[r] ? ev->topology_error[r] : "no IR");
			listed++;
			continue;
		}
		for (k = 0; k < ev->topology[r].nunjoinable; k++) {
			if (listed == UNJOINABLE_LISTED) {
				more++;
				continue;
			}
			cb_buf_addf(&b, "%s%s: %s", b.len ? "; " : "", role_cell_name(m, r),
				    ev->topology[r].unjoinable[k]);
			listed++;
		}
	}
	if (more)
		cb_buf_addf(&b, "; and %zu more", more);
	f->unjoinable = f->joinable ? NULL : cb_buf_detach(&b, NULL);
	cb_buf_release(&b);
}

int cb_facts_from_evidence(const struct cb_task_evidence *ev, const struct cb_manifest *m,
			   struct cb_facts *f, struct cb_figures *fig, struct cb_err *err)
{
	static const char *const tags[CB_NORDERS][2] = { { "a", "a-aa" }, { "b", "b-aa" } };
	int r, o;

	memset(f, 0, sizeof(*f));
	memset(fig, 0, sizeof(*fig));
	f->gain = m->gain;
	f->regression = m->regression;
	find_harness(ev, m, f);
	for (r = 0; r < CB_NROLES; r++)
		f->correct[r] = ev->outcome[CB_PH_CORRECTNESS][r] == CB_OUT_PASSED;
	cb_facts_topology(ev, m, f);
	if (f->harness_code)
		return 0;
	for (o = 0; o < CB_NORDERS; o++) {
		int ph = o == CB_ORDER_A ? CB_PH_ROUND_A : CB_PH_ROUND_B;
		if (ev->outcome[ph][CB_ROLE_BASELINE] != CB_OUT_PASSED ||
		    ev->outcome[ph][CB_ROLE_CONTROL] != CB_OUT_PASSED ||
		    ev->outcome[ph][CB_ROLE_CANDIDATE] != CB_OUT_PASSED)
			continue;
		if (order_speedup(ev, m, o, CB_ROLE_CANDIDATE, tags[o][0], &fig->cand[o], f, err) < 0 ||
		    order_speedup(ev, m, o, CB_ROLE_CONTROL, tags[o][1], &fig->aa[o], f, err) < 0) {
			if (f->harness_code)
				return 0;
			return -1;
		}
		fig->present[o] = 1;
		f->order[o].present = 1;
		f->order[o].point = fig->cand[o].point;
		f->order[o].lo = fig->cand[o].lo;
		f->order[o].hi = fig->cand[o].hi;
		f->order[o].aa = fabs(fig->aa[o].point);
	}
	return 0;
}

int cb_task_account(const char *task_dir, const char *task, const struct cb_manifest *m, long long floor,
		    const struct cb_ttgir_counts *pre, struct cb_task_account *a, struct cb_err *err)
{
	memset(a, 0, sizeof(*a));
	if (cb_evidence_load(task_dir, task, m, floor, pre, &a->ev, err) < 0)
		return -1;
	if (cb_facts_from_evidence(&a->ev, m, &a->f, &a->fig, err) < 0) {
		cb_prefix(err, "task %s", task);
		cb_task_account_release(a);
		return -1;
	}
	cb_classify(&a->f, &a->v);
	return 0;
}

void cb_task_account_rescope(struct cb_task_account *a, const struct cb_manifest *m, long long floor)
{
	cb_evidence_rescope(&a->ev, floor);
	cb_facts_topology(&a->ev, m, &a->f);
	cb_verdict_release(&a->v);
	cb_classify(&a->f, &a->v);
}

void cb_task_account_release(struct cb_task_account *a)
{
	cb_evidence_release(&a->ev);
	cb_facts_release(&a->f);
	cb_verdict_release(&a->v);
	memset(a, 0, sizeof(*a));
}
