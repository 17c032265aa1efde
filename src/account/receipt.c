/* receipt.c: writing and reading receipts, and the verdict matrix. */
#include "receipt.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aa.h"
#include "base/buf.h"
#include "classify.h"
#include "base/csv.h"
#include "evidence.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "base/schema.h"
#include "stats.h"

json_t *cb_receipt_new(const char *schema)
{
	return json_pack("{s:s, s:{s:s, s:s}}", "schema", schema, "caliber", "version", cb_version(),
			 "commit", cb_commit());
}

int cb_receipt_write(const char *path, const json_t *receipt, struct cb_err *err)
{
	return cb_json_write_atomic(path, receipt, 0444, err);
}

void cb_now_utc(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* The cell receipt: what one request of one cell did (docs/formats.md),
 * written here with the task and campaign receipts rather than by the
 * worker code, which only gathers the facts. */
int cb_cell_receipt_write(const char *dir, const struct cb_cell_facts *f, struct cb_err *err)
{
	json_t *r = cb_receipt_new(CB_CELL_SCHEMA), *wa = json_array(), *plan = json_array();
	char *path = cb_path_join(dir, CB_RUN_CELL);
	const char *const *a;
	size_t i;
	int rc;

	if (!r || !wa || !plan || !path) {
		json_decref(r);
		json_decref(wa);
		json_decref(plan);
		free(path);
		return cb_fail(err, "out of memory");
	}
	json_object_set_new(r, "removed", json_deep_copy(f->removed));
	json_object_set_new(r, "task", json_string(f->task));
	json_object_set_new(r, "cell", json_string(f->cell));
	json_object_set_new(r, "role", json_string(f->role));
	json_object_set_new(r, "phase", json_string(f->phase));
	json_object_set_new(r, "session", json_integer(f->session));
	json_object_set_new(r, "request_id", json_string(f->request_id));
	json_object_set_new(r, "argv", json_deep_copy(f->argv));
	json_object_set_new(r, "env", json_deep_copy(f->env));
	json_object_set_new(r, "compiler", json_deep_copy(f->compiler));
	for (a = f->worker_argv; *a; a++)
		json_array_append_new(wa, json_string(*a));
	json_object_set_new(r, "worker", json_pack("{s:o, s:s, s:I, s:b, s:o, s:I}",
		"argv", wa, "mode", f->mode, "pid", (json_int_t)f->pid, "fresh", f->fresh,
		"env_overlay", json_deep_copy(f->env_overlay), "started_ahead_ms", (json_int_t)f->started_ahead_ms));
	for (i = 0; i < f->nplugins; i++)
		json_array_append_new(plan, json_string(f->plugins[i]));
	json_object_set_new(r, "plan", plan);
	json_object_set_new(r, "started", json_string(f->started));
	json_object_set_new(r, "finished", json_string(f->finished));
	json_object_set_new(r, "wall_ns", json_integer(f->wall_ns));
	json_object_set_new(r, "reply_ns", f->reply_ns >= 0 ? json_integer(f->reply_ns) : json_null());
	json_object_set_new(r, "timeout_s", json_integer(f->timeout_s));
	json_object_set_new(r, "exit", json_pack("{s:b, s:o, s:b, s:s}", "replied", f->replied,
		"pytest_exit", f->pytest_exit >= 0 ? json_integer(f->pytest_exit) : json_null(),
		"timed_out", f->timed_out, "process", f->process ? f->process : "running"));
	json_object_set_new(r, "log", json_pack("{s:I, s:I}", "bytes", (json_int_t)f->log_bytes,
						"cut_bytes", (json_int_t)f->log_cut_bytes));
	json_object_set_new(r, "outcome", json_string(f->outcome));
	json_object_set_new(r, "detail", cb_json_text(f->detail));
	json_object_set_new(r, "outputs", json_deep_copy(f->outputs));
	json_object_set_new(r, "killed", json_deep_copy(f->killed));
	rc = cb_receipt_write(path, r, err);
	json_decref(r);
	free(path);
	return rc;
}

/* "graph", "direct" or "mixed" over the baseline's rows of one order (its
 * first session; t NULL when it has none: "direct"). */
static void order_timer(const struct cb_timing *t, char out[8])
{
	size_t i, graph = 0;

	if (!t) {
		snprintf(out, 8, "direct");
		return;
	}
	for (i = 0; i < t->n; i++)
		graph += strcmp(t->rows[i].timer, "graph") == 0;
	snprintf(out, 8, "%s", graph == t->n ? "graph" : graph == 0 ? "direct" : "mixed");
}

static json_t *cells_json(const struct cb_task_evidence *ev, const struct cb_manifest *m)
{
	json_t *cells = json_object();
	int c, p;

	for (c = 0; c < CB_NROLES; c++) {
		enum cb_role r = m->cells[c].role;
		json_t *phases = json_object();
		for (p = 0; p < CB_NPHASES; p++)
			if (p != CB_PH_SCREEN || ev->outcome[p][r] != CB_OUT_NOT_RUN)
				json_object_set_new(phases, cb_phase_name((enum cb_phase)p),
						    json_pack("{s:s, s:s}", "outcome", cb_outcome_name(ev->outcome[p][r]),
							      "detail", ev->detail[p][r]));
		json_object_set_new(cells, cb_role_name(r),
				    json_pack("{s:s, s:o}", "name", m->cells[c].name, "phases", phases));
	}
	return cells;
}

static json_t *topology_json(const struct cb_task_evidence *ev)
{
	json_t *t = json_object();
	int r;

	for (r = 0; r < CB_NROLES; r++)
		json_object_set_new(t, cb_role_name((enum cb_role)r),
				    ev->have_topology[r] ? cb_topology_json(&ev->topology[r])
							 : json_pack("{s:s}", "error", ev->topology_error[r]
									? ev->topology_error[r] : "no IR"));
	return t;
}

/* Per order: the figures, the A/A band, the stability flags, the
 * bootstrap's resamples, how many sessions each cell ran and how many
 * rows were left out as throttled. */
static json_t *orders_json(const struct cb_task_account *a, const struct cb_task_result *res)
{
	const struct cb_figures *fig = &a->fig;
	const struct cb_verdict *v = &a->v;
	json_t *orders = json_object();
	int o;

	for (o = 0; o < CB_NORDERS; o++) {
		const char *name = o == CB_ORDER_A ? "a" : "b";
		if (!res->present[o]) {
			json_object_set_new(orders, name, json_pack("{s:b}", "present", 0));
			continue;
		}
		json_object_set_new(orders, name, json_pack(
			"{s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:b, s:b, s:s}",
			"present", 1, "rows", (json_int_t)fig->cand[o].nrows,
			"speedup_ppm", (json_int_t)res->speedup_ppm[o], "lo_ppm", (json_int_t)res->lo_ppm[o],
			"hi_ppm", (json_int_t)res->hi_ppm[o], "aa_ppm", (json_int_t)res->aa_ppm[o],
			"aa_speedup_ppm", (json_int_t)cb_ppm(fig->aa[o].point),
			"aa_lo_ppm", (json_int_t)cb_ppm(fig->aa[o].lo), "aa_hi_ppm", (json_int_t)cb_ppm(fig->aa[o].hi),
			"stable_gain", v->stable_gain[o], "stable_regression", v->stable_regression[o],
			"timer", res->timer[o]));
		json_object_set_new(json_object_get(orders, name), "resamples", json_integer(res->resamples[o]));
		json_object_set_new(json_object_get(orders, name), "sessions", json_pack("{s:I, s:I, s:I}",
			"baseline", (json_int_t)a->ev.nsessions[o][CB_ROLE_BASELINE],
			"control", (json_int_t)a->ev.nsessions[o][CB_ROLE_CONTROL],
			"candidate", (json_int_t)a->ev.nsessions[o][CB_ROLE_CANDIDATE]));
		json_object_set_new(json_object_get(orders, name), "throttled_rows",
				    json_integer((json_int_t)a->f.order[o].throttled));
	}
	return orders;
}

int cb_task_result_fill(const struct cb_task_account *a, const char *op, struct cb_task_result *res,
			struct cb_err *err)
{
	const struct cb_task_evidence *ev = &a->ev;
	int r, o;

	memset(res, 0, sizeof(*res));
	if (!a->v.reason)
		return cb_fail(err, "task %s: out of memory", ev->task);
	res->id = strdup(ev->task);
	res->op = strdup(op);
	res->code = strdup(a->v.code);
	res->reason = strdup(a->v.reason);
	res->verdict = a->v.verdict;
	res->have_topology = a->f.joinable;
	res->confidence_ppm = cb_ppm(a->fig.confidence);
	res->identity_known = a->ev.identity.known;
	res->identical = a->ev.identity.identical;
	for (r = 0; r < CB_NROLES; r++)
		res->topology[r] = a->f.topology[r];
	for (o = 0; o < CB_NORDERS; o++) {
		if (!a->fig.present[o])
			continue;
		order_timer(ev->nsessions[o][CB_ROLE_BASELINE] ? &ev->timing[o][CB_ROLE_BASELINE][0] : NULL,
			    res->timer[o]);
		res->present[o] = 1;
		res->speedup_ppm[o] = cb_ppm(a->fig.cand[o].point);
		res->lo_ppm[o] = cb_ppm(a->fig.cand[o].lo);
		res->hi_ppm[o] = cb_ppm(a->fig.cand[o].hi);
		res->aa_ppm[o] = cb_ppm(fabs(a->f.order[o].aa));
		res->aa_lo_ppm[o] = cb_ppm(a->fig.aa[o].lo);
		res->aa_hi_ppm[o] = cb_ppm(a->fig.aa[o].hi);
		res->resamples[o] = a->fig.resamples;
	}
	if (!res->id || !res->op || !res->code || !res->reason) {
		cb_task_result_release(res);
		return cb_fail(err, "task %s: out of memory", ev->task);
	}
	return 0;
}

int cb_task_receipt_write(const char *task_dir, size_t index, const char *op, const struct cb_manifest *m,
			  long long floor, const struct cb_task_account *a, const json_t *extra,
			  struct cb_task_result *res, struct cb_err *err)
{
	const char *task = a->ev.task;
	json_t *r = NULL;
	char *path = NULL;
	int rc = -1;

	if (cb_task_result_fill(a, op, res, err) < 0)
		return -1;
	r = cb_receipt_new(CB_TASK_SCHEMA);
	if (!r) {
		cb_fail(err, "task %s: out of memory", task);
		goto out;
	}
	json_object_set_new(r, "task", json_string(task));
	json_object_set_new(r, "index", json_integer((json_int_t)index));
	json_object_set_new(r, "op", json_string(op));
	json_object_set_new(r, "verdict", json_stringn(&a->v.verdict, 1));
	json_object_set_new(r, "code", json_string(a->v.code));
	json_object_set_new(r, "reason", json_string(a->v.reason));
	json_object_set_new(r, "launch_floor", json_integer(floor));
	json_object_set_new(r, "thresholds", json_pack("{s:I, s:I, s:I}",
		"gain_ppm", (json_int_t)cb_ppm(m->gain), "regression_ppm", (json_int_t)cb_ppm(m->regression),
		"confidence_ppm", (json_int_t)cb_ppm(m->confidence)));
	json_object_set_new(r, "cells", cells_json(&a->ev, m));
	json_object_set_new(r, "topology", topology_json(&a->ev));
	json_object_set_new(r, "orders", orders_json(a, res));
	json_object_set_new(r, "identity", cb_identity_json(&a->ev.identity, a->ev.from_screen ? "screen" : "a"));
	if (a->ev.have_screen)
		json_object_set_new(r, "screen_identity", cb_identity_json(&a->ev.screen_identity, "screen"));
	if (extra)
		json_object_update_recursive(r, (json_t *)extra);
	path = cb_path_join(task_dir, CB_RUN_TASK);
	if (!path)
		cb_fail(err, "out of memory");
	else
		rc = cb_receipt_write(path, r, err);
out:
	if (rc < 0)
		cb_task_result_release(res);
	free(path);
	json_decref(r);
	return rc;
}

int cb_task_result_load(const char *task_json, struct cb_task_result *res, struct cb_err *err)
{
	json_t *j = cb_json_load_file(task_json, err);
	int rc;

	memset(res, 0, sizeof(*res));
	if (!j)
		return -1;
	rc = cb_task_result_from_json(j, task_json, res, err);
	json_decref(j);
	return rc;
}

/* Key of order o (x) of task_json, a figure in ppm, into *out: absent
 * is 0 (a receipt from before the field), anything but an integer is
 * refused (a string would read as 0, a speedup nobody measured). */
static int ppm_field(const json_t *x, const char *o, const char *key, const char *task_json, long long *out,
		     struct cb_err *err)
{
	const json_t *v = json_object_get(x, key);

	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v))
		return cb_fail(err, "%s: orders.%s.%s: expected an integer, got %s", task_json, o, key, cb_jtype_name(v));
	*out = (long long)json_integer_value(v);
	return 0;
}

/* The figures of an order a task receipt holds, in ppm, by the field of
 * struct cb_task_result (an array by order) each is read into. */
static const struct {
	const char *key;
	size_t off;
} figs[] = {
	{ "speedup_ppm", offsetof(struct cb_task_result, speedup_ppm) },
	{ "lo_ppm", offsetof(struct cb_task_result, lo_ppm) },
	{ "hi_ppm", offsetof(struct cb_task_result, hi_ppm) },
	{ "aa_ppm", offsetof(struct cb_task_result, aa_ppm) },
	{ "aa_lo_ppm", offsetof(struct cb_task_result, aa_lo_ppm) },
	{ "aa_hi_ppm", offsetof(struct cb_task_result, aa_hi_ppm) },
};

int cb_task_result_from_json(const json_t *j, const char *task_json, struct cb_task_result *res,
			     struct cb_err *err)
{
	const json_t *topo, *orders;
	const char *schema, *verdict;
	size_t f;
	int r, o;

	memset(res, 0, sizeof(*res));
	schema = cb_json_str(j, "schema");
	verdict = cb_json_str(j, "verdict");
	if (!schema || strcmp(schema, CB_TASK_SCHEMA) != 0) {
		return cb_fail(err, "%s: schema: expected '%s', got '%s'", task_json, CB_TASK_SCHEMA,
			       schema ? schema : "(none)");
	}
	if (!verdict || strlen(verdict) != 1 || !cb_verdict_known(verdict[0]) || !cb_json_str(j, "task") ||
	    !cb_json_str(j, "op") || !cb_json_str(j, "code") || !cb_json_str(j, "reason")) {
		return cb_fail(err, "%s: not a complete task receipt (task, op, verdict, code, reason)",
			       task_json);
	}
	res->verdict = verdict[0];
	res->id = strdup(cb_json_str(j, "task"));
	res->op = strdup(cb_json_str(j, "op"));
	res->code = strdup(cb_json_str(j, "code"));
	res->reason = strdup(cb_json_str(j, "reason"));
	res->confidence_ppm = cb_json_int(json_object_get(j, "thresholds"), "confidence_ppm", 0);
	topo = json_object_get(j, "topology");
	res->have_topology = 1;
	for (r = 0; r < CB_NROLES; r++) {
		const json_t *t = json_object_get(topo, cb_role_name((enum cb_role)r));
		if (!json_is_true(json_object_get(t, "joinable")))
			res->have_topology = 0;
		res->topology[r] = cb_json_int(t, "scoped", 0);
	}
	res->identity_known = json_is_true(json_object_get(json_object_get(j, "identity"), "known"));
	res->identical = json_is_true(json_object_get(json_object_get(j, "identity"), "identical"));
	orders = json_object_get(j, "orders");
	for (o = 0; o < CB_NORDERS; o++) {
		const json_t *x = json_object_get(orders, o == CB_ORDER_A ? "a" : "b");
		res->present[o] = json_is_true(json_object_get(x, "present"));
		if (!res->present[o])
			continue;
		for (f = 0; f < sizeof(figs) / sizeof(figs[0]); f++)
			if (ppm_field(x, o == CB_ORDER_A ? "a" : "b", figs[f].key, task_json,
				      (long long *)((char *)res + figs[f].off) + o, err) < 0) {
				cb_task_result_release(res);
				return -1;
			}
		res->resamples[o] = cb_json_int(x, "resamples", CB_BOOTSTRAP_RESAMPLES_UNRECORDED);
		snprintf(res->timer[o], sizeof(res->timer[o]), "%s",
			 cb_json_str(x, "timer") ? cb_json_str(x, "timer") : "?");
	}
	if (!res->id || !res->op || !res->code || !res->reason) {
		cb_task_result_release(res);
		return cb_fail(err, "%s: out of memory", task_json);
	}
	return 0;
}

json_t *cb_task_result_json(const struct cb_task_result *r)
{
	return json_pack("{s:s, s:s, s:s#, s:s, s:s}", "id", r->id, "op", r->op, "verdict", &r->verdict,
			 (int)1, "code", r->code, "reason", r->reason);
}

/* One percent cell of the Markdown matrix: "+5.23% [+4.90%, +5.61%]". */
static void md_order(const struct cb_task_result *r, int o, char *out, size_t cap)
{
	char p[24], lo[24], hi[24];

	if (!r->present[o]) {
		snprintf(out, cap, "—");
		return;
	}
	cb_fmt_pct(r->speedup_ppm[o], p, sizeof(p));
	cb_fmt_pct(r->lo_ppm[o], lo, sizeof(lo));
	cb_fmt_pct(r->hi_ppm[o], hi, sizeof(hi));
	snprintf(out, cap, "%s [%s, %s]", p, lo, hi);
}

/* Markdown cell text: pipes escaped, newlines flattened. */
static void md_text(struct cb_buf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			cb_buf_adds(b, "\\|");
		else if (*s == '\n' || *s == '\r')
			cb_buf_adds(b, " ");
		else
			cb_buf_add(b, s, 1);
	}
}

void cb_free_aa_add(struct cb_free_aa *aa, const struct cb_task_result *r)
{
	aa->known += r->identity_known != 0;
	if (!r->identical)
		return;
	if (!r->present[CB_ORDER_A]) {
		aa->screened += strcmp(r->code, "identical-binaries") == 0;
		return;
	}
	aa->identical++;
	aa->exclude_zero += r->lo_ppm[CB_ORDER_A] > 0 || r->hi_ppm[CB_ORDER_A] < 0;
}

void cb_free_aa_line(const struct cb_free_aa *aa, char *out, size_t cap)
{
	snprintf(out, cap, "%zu of %zu identical-by-construction tasks exclude zero (round a; nominal 5%%)",
		 aa->exclude_zero, aa->identical);
}

/* The columns of matrix.csv. */
static const char *const matrix_hdr[] = {
	"task", "op", "verdict", "code", "topology_baseline", "topology_control",
	"topology_candidate", "speedup_a_ppm", "lo_a_ppm", "hi_a_ppm", "aa_a_ppm", "timer_a",
	"speedup_b_ppm", "lo_b_ppm", "hi_b_ppm", "aa_b_ppm", "timer_b", "reason"
};

/* One summary line of the campaign after its tasks: a row of matrix.csv
 * whose fields are all empty but code, which names the summary, and
 * reason, which holds the line (a task row always has a task; so tools
 * that read the file as CSV see a row of the same columns), and the line
 * itself below matrix.md's table. */
static void matrix_summary(struct cb_buf *csv, struct cb_buf *md, const char *code, const char *line)
{
	size_t h, n = sizeof(matrix_hdr) / sizeof(matrix_hdr[0]);

	for (h = 0; h < n; h++) {
		if (h)
			cb_buf_adds(csv, ",");
		if (strcmp(matrix_hdr[h], "code") == 0)
			cb_csv_put_field(csv, code);
		else if (strcmp(matrix_hdr[h], "reason") == 0)
			cb_csv_put_field(csv, line);
	}
	cb_buf_adds(csv, "\r\n");
	cb_buf_adds(md, "\n");
	md_text(md, line);
	cb_buf_adds(md, "\n");
}

/* The summaries that end the verdict matrix, in this order: the A/A line
 * (aa.h), then, when the tasks carry binary digests, the free A/A of
 * identical binaries (code identical-binaries). */
static void matrix_summaries(struct cb_buf *csv, struct cb_buf *md, const struct cb_task_result *res, size_t n)
{
	char aa[CB_AA_LINE_MAX];

	struct cb_free_aa fa = { 0, 0, 0, 0 };
	char line[160], reason[256];
	size_t i;

	cb_aa_line_of(res, n, aa, sizeof(aa));
	matrix_summary(csv, md, "aa-summary", aa);
	for (i = 0; i < n; i++)
		cb_free_aa_add(&fa, &res[i]);
	if (!fa.known)
		return;
	cb_free_aa_line(&fa, line, sizeof(line));
	if (fa.screened)
		snprintf(reason, sizeof(reason), "identical binaries: %s; %zu not timed (run --prescreen)", line,
			 fa.screened);
	else
		snprintf(reason, sizeof(reason), "identical binaries: %s", line);
	matrix_summary(csv, md, "identical-binaries", reason);
}

int cb_write_verdict_matrix(const char *dir, const struct cb_task_result *res, size_t n,
			    struct cb_err *err)
{
	const char *const *hdr = matrix_hdr;
	struct cb_buf csv = CB_BUF_INIT, md = CB_BUF_INIT;
	char *path = NULL, *data = NULL;
	size_t i, len, h;
	int o, rc = -1;

	for (h = 0; h < sizeof(matrix_hdr) / sizeof(matrix_hdr[0]); h++)
		cb_buf_addf(&csv, "%s%s", h ? "," : "", hdr[h]);
	cb_buf_adds(&csv, "\r\n");
	cb_buf_adds(&md, "| task | verdict | topology b/c/k | round a | round b | reason |\n"
			 "|---|---|---|---|---|---|\n");
	for (i = 0; i < n; i++) {
		const struct cb_task_result *r = &res[i];
		char a[96], b[96];

		cb_csv_put_field(&csv, r->id);
		cb_buf_adds(&csv, ",");
		cb_csv_put_field(&csv, r->op);
		cb_buf_addf(&csv, ",%c,", r->verdict);
		cb_csv_put_field(&csv, r->code);
		if (r->have_topology)
			cb_buf_addf(&csv, ",%lld,%lld,%lld", r->topology[CB_ROLE_BASELINE],
				    r->topology[CB_ROLE_CONTROL], r->topology[CB_ROLE_CANDIDATE]);
		else
			cb_buf_adds(&csv, ",,,");
		for (o = 0; o < CB_NORDERS; o++) {
			if (r->present[o])
				cb_buf_addf(&csv, ",%lld,%lld,%lld,%lld,%s", r->speedup_ppm[o], r->lo_ppm[o],
					    r->hi_ppm[o], r->aa_ppm[o], r->timer[o]);
			else
				cb_buf_adds(&csv, ",,,,,");
		}
		cb_buf_adds(&csv, ",");
		cb_csv_put_field(&csv, r->reason);
		cb_buf_adds(&csv, "\r\n");

		md_order(r, CB_ORDER_A, a, sizeof(a));
		md_order(r, CB_ORDER_B, b, sizeof(b));
		cb_buf_adds(&md, "| ");
		md_text(&md, r->id);
		cb_buf_addf(&md, " | **%c** %s | ", r->verdict, r->code);
		if (r->have_topology)
			cb_buf_addf(&md, "%lld/%lld/%lld", r->topology[CB_ROLE_BASELINE],
				    r->topology[CB_ROLE_CONTROL], r->topology[CB_ROLE_CANDIDATE]);
		else
			cb_buf_adds(&md, "—");
		cb_buf_addf(&md, " | %s | %s | ", a, b);
		md_text(&md, r->reason);
		cb_buf_adds(&md, " |\n");
	}
	matrix_summaries(&csv, &md, res, n);
	data = cb_buf_detach(&csv, &len);
	path = cb_path_join(dir, CB_RUN_MATRIX_CSV);
	if (!data || !path) {
		cb_fail(err, "matrix: out of memory");
		goto out;
	}
	if (cb_write_atomic(path, data, len, 0444, err) < 0)
		goto out;
	free(data);
	free(path);
	data = cb_buf_detach(&md, &len);
	path = cb_path_join(dir, CB_RUN_MATRIX_MD);
	if (!data || !path)
		cb_fail(err, "matrix: out of memory");
	else
		rc = cb_write_atomic(path, data, len, 0444, err);
out:
	free(data);
	free(path);
	cb_buf_release(&csv);
	cb_buf_release(&md);
	return rc;
}

int cb_campaign_summary_of_run(const char *root, struct cb_campaign_summary *cs, struct cb_err *err)
{
	char *path = cb_path_join(root, CB_RUN_CAMPAIGN);
	int rc = path ? cb_campaign_summary_load(path, cs, err) : cb_fail(err, "out of memory");

	free(path);
	return rc;
}

int cb_campaign_summary_load(const char *path, struct cb_campaign_summary *cs, struct cb_err *err)
{
	json_t *doc = cb_json_load_file(path, err);

	memset(cs, 0, sizeof(*cs));
	if (!doc)
		return -1;
	return cb_campaign_summary_take(doc, path, cs, err);
}

int cb_campaign_summary_take(json_t *doc, const char *path, struct cb_campaign_summary *cs,
			     struct cb_err *err)
{
	const json_t *tasks, *t;
	const char *schema;
	size_t i;

	memset(cs, 0, sizeof(*cs));
	cs->doc = doc;
	schema = cb_json_str(cs->doc, "schema");
	if (!schema || strcmp(schema, CB_CAMPAIGN_SCHEMA) != 0) {
		cb_fail(err, "%s: schema: expected '%s', got '%s'", path, CB_CAMPAIGN_SCHEMA,
			schema ? schema : "(none)");
		goto fail;
	}
	cs->campaign = cb_json_str(cs->doc, "campaign");
	cs->selection = cb_json_str(cs->doc, "selection");
	cs->manifest_sha256 = cb_json_str(cs->doc, "manifest_sha256");
	cs->status = cb_json_str(cs->doc, "status");
	cs->launch_floor = cb_json_int(cs->doc, "launch_floor", -1);
	tasks = json_object_get(cs->doc, "tasks");
	if (!cs->campaign || !cs->selection || !cs->manifest_sha256 || !cs->status ||
	    cs->launch_floor < 0 || !json_is_array(tasks)) {
		cb_fail(err, "%s: not a complete campaign receipt (campaign, selection, manifest_sha256, status, launch_floor, tasks)",
			path);
		goto fail;
	}
	cs->resamples = CB_BOOTSTRAP_RESAMPLES_UNRECORDED;
	if (json_object_get(cs->doc, "bootstrap")) {
		const json_t *r = json_object_get(json_object_get(cs->doc, "bootstrap"), "resamples");
		if (!json_is_integer(r) || json_integer_value(r) < 1 || json_integer_value(r) > CB_BOOTSTRAP_RESAMPLES_MAX) {
			cb_fail(err, "%s: bootstrap.resamples: must be an integer from 1 to %d", path,
				CB_BOOTSTRAP_RESAMPLES_MAX);
			goto fail;
		}
		cs->resamples = (long long)json_integer_value(r);
	}
	cs->ntasks = json_array_size(tasks);
	cs->tasks = calloc(cs->ntasks ? cs->ntasks : 1, sizeof(*cs->tasks));
	if (!cs->tasks) {
		cb_fail(err, "%s: out of memory", path);
		goto fail;
	}
	json_array_foreach(tasks, i, t) {
		cs->tasks[i].id = cb_json_str(t, "id");
		cs->tasks[i].verdict = cb_json_str(t, "verdict");
		cs->tasks[i].reason = cb_json_str(t, "reason");
		if (!cs->tasks[i].id || !cs->tasks[i].verdict || !cs->tasks[i].reason) {
			cb_fail(err, "%s: tasks[%zu]: id, verdict and reason are required", path, i);
			goto fail;
		}
		/* An id names the task's folder: every reader joins it to the
		 * run root, so "../x", "/x" or "" would lead outside it. */
		if (!cb_is_ident(cs->tasks[i].id) || strlen(cs->tasks[i].id) > CB_IDENT_MAX) {
			cb_fail(err, "%s: tasks[%zu].id: '%.*s' is not a task id ([A-Za-z0-9._-], not starting with '.' or '-', at most %d characters)",
				path, i, CB_IDENT_MAX, cs->tasks[i].id, CB_IDENT_MAX);
			goto fail;
		}
	}
	return 0;
fail:
	cb_campaign_summary_release(cs);
	return -1;
}

void cb_campaign_summary_release(struct cb_campaign_summary *cs)
{
	if (!cs)
		return;
	free(cs->tasks);
	json_decref(cs->doc);
	memset(cs, 0, sizeof(*cs));
}

void cb_campaign_verdict_line(const struct cb_campaign_summary *cs, char out[96])
{
	static const char letters[] = CB_VERDICTS_READING;
	size_t count[sizeof(letters)] = { 0 }, i, k, len;

	for (i = 0; i < cs->ntasks; i++)
		for (k = 0; letters[k]; k++)
			if (cs->tasks[i].verdict[0] == letters[k] && !cs->tasks[i].verdict[1])
				count[k]++;
	len = (size_t)snprintf(out, 96, "verdicts:");
	for (k = 0; letters[k] && len < 96; k++)
		len += (size_t)snprintf(out + len, 96 - len, "%s %c %zu", k ? "," : "", letters[k], count[k]);
}

int cb_campaign_check_x(const struct cb_campaign_summary *cs, struct cb_err *err)
{
	size_t i, nx = 0, first = 0;

	for (i = cs->ntasks; i-- > 0;)
		if (strcmp(cs->tasks[i].verdict, "X") == 0) {
			nx++;
			first = i;
		}
	if (!nx)
		return 0;
	return cb_fail(err, "%zu of %zu tasks %s X (could not be measured); the first, %s: %s", nx, cs->ntasks,
		       nx == 1 ? "is" : "are", cs->tasks[first].id, cs->tasks[first].reason);
}
