/* report.c: the model of a report (report.h): a run root or a derived run
 * loaded with every receipt it holds, its seal checked, and its figures as
 * words for the renderers. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "account/classify.h"
#include "ir/compile_log.h"
#include "account/evidence.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "account/stats.h"
#include "seal/seal.h"

/* ------------------------------------------------------------------ */
/* The run as the report sees it                                       */

/* The verdict, code and reason a task is shown and gated by: the derived
 * ones in a derived run, else the sealed ones. */
char cb_report_verdict(const struct cb_report_task *t)
{
	return t->derived ? t->dverdict : t->sealed.verdict;
}

const char *cb_report_code(const struct cb_report_task *t)
{
	return t->derived ? t->dcode : t->sealed.code;
}

const char *cb_report_reason(const struct cb_report_task *t)
{
	return t->derived ? t->dreason : t->sealed.reason;
}

const struct cb_report_task *cb_report_task_at(const struct cb_report *rp, size_t k)
{
	size_t i;

	for (i = 0; i < rp->n; i++)
		if (rp->t[i].index == k)
			return &rp->t[i];
	return NULL;
}

/* Free what the report holds and zero it. */
void cb_report_release(struct cb_report *rp)
{
	size_t i, k;
	int o, r;

	for (i = 0; rp->t && i < rp->n; i++) {
		cb_task_result_release(&rp->t[i].sealed);
		json_decref(rp->t[i].doc);
		for (o = 0; o < CB_NORDERS; o++) {
			for (k = 0; k < rp->t[i].nrows[o]; k++) {
				free(rp->t[i].rows[o][k].label);
				for (r = 0; r < CB_NROLES; r++)
					free(rp->t[i].rows[o][k].cell[r].samples);
			}
			free(rp->t[i].rows[o]);
			for (r = 0; r < CB_NROLES; r++) {
				for (k = 0; k < rp->t[i].clocks[o][r].sessions; k++)
					cb_timing_release(&rp->t[i].timing[o][r][k]);
				free(rp->t[i].timing[o][r]);
				free(rp->t[i].timing_error[o][r]);
			}
		}
	}
	free(rp->t);
	if (rp->diff)
		cb_diff_release(rp->diff);
	free(rp->diff);
	free(rp->workers);
	free(rp->href);
	free(rp->dhref);
	memset(rp, 0, sizeof(*rp));
}

/* Whether dir holds the named file. */
int cb_report_has_file(const char *dir, const char *name)
{
	return cb_exists_in(dir, name);
}

/* Fold one timing row's clocks into c: the SM clock sampled while it ran
 * (runs before sessions recorded it only before and after the row), and
 * how it was paced. */
static void fold_clocks(struct cb_report_clocks *c, const struct cb_timing_row *row)
{
	const struct cb_timing_clocks *k = &row->clocks;
	long long lo = k->sm_min, hi = k->sm_max;

	if (!k->during || lo < 0) {
		long long x = k->sm_before, y = k->sm_after;
		lo = x >= 0 && (y < 0 || x < y) ? x : y;
		hi = x > y ? x : y;
	}
	c->rows++;
	c->throttled += row->throttled != 0;
	c->retried += row->attempts > 1;
	c->rested_ms += row->rested_ms;
	if (lo < 0)
		return;
	if (!c->known || lo < c->sm_min)
		c->sm_min = lo;
	if (!c->known || hi > c->sm_max)
		c->sm_max = hi;
	c->known = 1;
}

/* The label of a timing row: its shape, else its key after the last '|'. */
static char *row_label(const struct cb_timing_row *row)
{
	const char *bar = strrchr(row->row, '|');

	if (row->shape && *row->shape)
		return strdup(row->shape);
	return strdup(bar && bar[1] ? bar + 1 : row->row);
}

/* Pool the samples of row key over the sessions of one cell into c, with
 * their median (-1: no session holds the row). */
static int pool_cell(struct cb_report_cell_row *c, const struct cb_timing *ts, size_t nts, const char *key)
{
	size_t j, k;

	c->median_ns = -1;
	for (j = 0; j < nts; j++)
		for (k = 0; k < ts[j].n; k++) {
			const struct cb_timing_row *row = &ts[j].rows[k];
			int64_t *grown;

			if (strcmp(row->row, key) != 0)
				continue;
			if (!(grown = realloc(c->samples, (c->n + row->n) * sizeof(*grown))))
				return -1;
			c->samples = grown;
			memcpy(c->samples + c->n, row->samples, row->n * sizeof(*grown));
			c->n += row->n;
			c->sessions++;
			if (!c->first)
				c->first = row;
		}
	if (c->n)
		c->median_ns = cb_median_i64(c->samples, c->n);
	return 0;
}

/* The rows of order o of task t: the keys of the first cell timed
 * (baseline, candidate, control), each once in its first order, with
 * every cell's samples pooled. */
static int fold_rows(struct cb_report_task *t, int o)
{
	static const int keys_of[] = { CB_ROLE_BASELINE, CB_ROLE_CANDIDATE, CB_ROLE_CONTROL };
	const struct cb_timing *ts = NULL;
	size_t i, j, k, nts = 0, cap = 0;
	int r;

	for (i = 0; i < 3 && !nts; i++) {
		ts = t->timing[o][keys_of[i]];
		nts = t->clocks[o][keys_of[i]].sessions;
	}
	for (j = 0; j < nts; j++)
		cap += ts[j].n;
	if (!(t->rows[o] = calloc(cap + 1, sizeof(*t->rows[o]))))
		return -1;
	for (j = 0; j < nts; j++)
		for (k = 0; k < ts[j].n; k++) {
			const struct cb_timing_row *row = &ts[j].rows[k];
			struct cb_report_row *out;
			int seen = 0;

			for (i = 0; i < t->nrows[o]; i++)
				seen |= strcmp(t->rows[o][i].key, row->row) == 0;
			if (seen)
				continue;   /* a later session's entry of a row already pooled */
			out = &t->rows[o][t->nrows[o]++];
			out->key = row->row;
			if (!(out->label = row_label(row)))
				return -1;
			for (r = 0; r < CB_NROLES; r++)
				if (pool_cell(&out->cell[r], t->timing[o][r], t->clocks[o][r].sessions, row->row) < 0)
					return -1;
		}
	t->ntimes[o] = t->clocks[o][CB_ROLE_BASELINE].sessions ? t->nrows[o] : 0;
	return 0;
}

/* Note that a row of a timed order had n samples in one session. */
static void fold_repeats(struct cb_report_task *t, size_t n)
{
	if (!t->repeats_max || n < t->repeats_min)
		t->repeats_min = n;
	if (n > t->repeats_max)
		t->repeats_max = n;
}

/* The path of file in session k of a cell's phase (cb_session_dir), or
 * NULL when it does not exist: the end of a cell's sessions. */
static char *session_file(const char *tdir, enum cb_phase p, const char *cell, int k, const char *file)
{
	char *dir = cb_session_dir(tdir, p, cell, k), *path = dir ? cb_path_join(dir, file) : NULL;

	free(dir);
	if (path && !cb_exists(path)) {
		free(path);
		path = NULL;
	}
	return path;
}

/* Read session k of cell name's round (order o) of task t into the next
 * place of t->timing[o][r]: 1 when read, 0 when there is no such session,
 * -1 (err) when it is there and cannot be read. Errors name the file from
 * the run root, never a path of this machine. */
static int load_session(const struct cb_report *rp, struct cb_report_task *t, int o, int r, const char *name, int k,
			struct cb_err *err)
{
	char *cdir = cb_session_dir("", o ? CB_PH_ROUND_B : CB_PH_ROUND_A, name, k);
	char *rel = cdir ? cb_strdupf(CB_RUN_TASKS "/%s%s/" CB_RUN_TIMING, t->sealed.id, cdir) : NULL;
	char *path = rel ? cb_path_join(rp->v->root, rel) : NULL, *data = NULL;
	struct cb_timing *grown;
	size_t len, n = t->clocks[o][r].sessions;
	int rc = -1;

	if (!path) {
		cb_fail(err, "out of memory");
		goto out;
	}
	rc = 0;
	if (!cb_exists(path))
		goto out;
	rc = -1;
	if (!(grown = realloc(t->timing[o][r], (n + 1) * sizeof(*grown)))) {
		cb_fail(err, "out of memory");
		goto out;
	}
	t->timing[o][r] = grown;
	if (cb_read_file(path, &data, &len, err) < 0 || cb_timing_parse(data, len, rel, &grown[n], err) < 0)
		goto out;
	t->clocks[o][r].sessions++;
	rc = 1;
out:
	free(cdir);
	free(rel);
	free(path);
	free(data);
	return rc;
}

/* Every session's timing.jsonl of task t's timed cells, per order and
 * role (timing.h), their clocks and pacing, and the rows with each cell's
 * samples pooled. A file that cannot be read ends its cell's sessions and
 * is shown as such (t->timing_error): the seal and the receipts say what is
 * wrong with a run. */
static int load_timing(const struct cb_report *rp, struct cb_report_task *t, struct cb_err *err)
{
	const json_t *cells = json_object_get(t->doc, "cells");
	size_t j, i;
	int o, r, k, rc = 0;

	for (o = 0; o < CB_NORDERS; o++) {
		for (r = 0; r < CB_NROLES; r++) {
			const char *n = cb_json_str(json_object_get(cells, cb_role_name((enum cb_role)r)), "name");
			const char *name = n && cb_is_ident(n) ? n : cb_role_name((enum cb_role)r);
			struct cb_err e = CB_ERR_INIT;

			for (k = 1; name && (rc = load_session(rp, t, o, r, name, k, &e)) > 0; k++)
				t->timing_seen[o][r] = 1;
			if (name && rc < 0) {
				t->timing_seen[o][r] |= k == 1;
				if (!(t->timing_error[o][r] = strdup(e.msg)))
					return cb_fail(err, "out of memory");
			}
			for (j = 0; j < t->clocks[o][r].sessions; j++)
				for (i = 0; i < t->timing[o][r][j].n; i++) {
					fold_clocks(&t->clocks[o][r], &t->timing[o][r][j].rows[i]);
					if (t->sealed.present[o])
						fold_repeats(t, t->timing[o][r][j].rows[i].n);
				}
		}
		if (fold_rows(t, o) < 0)
			return cb_fail(err, "out of memory");
	}
	return 0;
}

/* The task's effect: the geometric mean over its timed orders of
 * 1 + speedup, less 1. */
static void task_effect(struct cb_report_task *t)
{
	double sum = 0;
	int o, n = 0;

	for (o = 0; o < CB_NORDERS; o++)
		if (t->sealed.present[o]) {
			sum += log1p((double)t->sealed.speedup_ppm[o] / 1e6);
			n++;
		}
	t->timed = n > 0;
	t->effect = n ? expm1(sum / n) : 0;
}

/* Add session k of cell name in phase p of task t (in tdir) to the cell's
 * compile time, when its compile.json is there and its Triton listened. */
static int load_compile(struct cb_report *rp, struct cb_report_task *t, const char *tdir, int p, int r,
			const char *name, int k, struct cb_err *err)
{
	char *dir = cb_session_dir(tdir, (enum cb_phase)p, name, k);
	struct cb_compile_log log;
	int rc;

	if (!dir)
		return cb_fail(err, "out of memory");
	rc = cb_compile_log_read(dir, &log, err);
	free(dir);
	if (rc < 0)
		return -1;
	if (rc > 0 && log.listened) {
		t->cell_compile_us[p][r] += log.compile_us;
		t->cell_compiled[p][r]++;
		rp->compile_known = 1;
	}
	return 0;
}

/* Where task t's time went: its receipt's wall time, and each cell's per
 * phase, summed over the cell receipts of its sessions, with the time the
 * session's compile.json says it spent compiling. A receipt that cannot be
 * read is passed over, as in load_timing; a compile.json that is not what
 * ir_meta writes fails the report (-1), as a malformed receipt would. */
static int load_walls(struct cb_report *rp, struct cb_report_task *t, struct cb_err *err)
{
	const json_t *cells = json_object_get(t->doc, "cells");
	char *tdir = cb_strdupf("%s/" CB_RUN_TASKS "/%s", rp->v->root, t->sealed.id);
	long long ns = cb_json_int(t->doc, "wall_ns", -1);
	int p, r, k;

	t->wall_ms = ns < 0 ? -1 : ns / 1000000;
	for (p = 0; tdir && p < CB_NPHASES; p++)
		for (r = 0; r < CB_NROLES; r++) {
			const char *name = cb_json_str(json_object_get(cells, cb_role_name((enum cb_role)r)), "name");

			for (k = 1; name && cb_is_ident(name); k++) {
				char *path = session_file(tdir, (enum cb_phase)p, name, k, CB_RUN_CELL);
				struct cb_err e;
				json_t *cell = path ? cb_json_load_file(path, &e) : NULL;

				free(path);
				if (!cell)
					break;
				ns = cb_json_int(cell, "wall_ns", -1);
				json_decref(cell);
				if (ns < 0)
					continue;
				t->cell_ms[p][r] += ns / 1000000;
				t->cell_runs[p][r]++;
				if (load_compile(rp, t, tdir, p, r, name, k, err) < 0) {
					free(tdir);
					return -1;
				}
			}
		}
	free(tdir);
	return 0;
}

/* Read tasks/<id>/task.json of every task the campaign receipt lists. */
static int load_tasks(struct cb_report *rp, struct cb_err *err)
{
	size_t i;
	int r;

	rp->t = calloc(rp->v->cs.ntasks ? rp->v->cs.ntasks : 1, sizeof(*rp->t));
	if (!rp->t)
		return cb_fail(err, "out of memory");
	rp->n = rp->v->cs.ntasks;
	for (i = 0; i < rp->n; i++) {
		const char *id = rp->v->cs.tasks[i].id;
		char *p;
		int rc;

		p = cb_strdupf("%s/" CB_RUN_TASKS "/%s/" CB_RUN_TASK, rp->v->root, id);
		if (!p)
			return cb_fail(err, "out of memory");
		rp->t[i].doc = cb_json_load_file(p, err);
		rc = rp->t[i].doc ? cb_task_result_from_json(rp->t[i].doc, p, &rp->t[i].sealed, err) : -1;
		if (rc == 0 && strcmp(rp->t[i].sealed.id, id) != 0)
			rc = cb_fail(err, "%s: names task '%s', the campaign receipt '%s'", p, rp->t[i].sealed.id, id);
		free(p);
		if (rc < 0)
			return -1;
		rp->t[i].index = i;
		if (load_timing(rp, &rp->t[i], err) < 0 || load_walls(rp, &rp->t[i], err) < 0)
			return -1;
		task_effect(&rp->t[i]);
		for (r = 0; r < CB_NROLES; r++) {
			const json_t *tp = json_object_get(json_object_get(rp->t[i].doc, "topology"),
							   cb_role_name((enum cb_role)r));
			rp->t[i].cell_have[r] = json_is_true(json_object_get(tp, "joinable"));
			rp->t[i].cell_count[r] = cb_json_int(tp, "scoped", 0);
		}
	}
	return 0;
}

/* Attach each derived.json task to its sealed task, after checking that
 * the derived run comes from this very campaign. */
static int attach_derived(struct cb_report *rp, struct cb_err *err)
{
	const json_t *tasks = json_object_get(rp->v->derived, "tasks"), *d;
	size_t i, k;

	if (cb_run_view_check_derived(rp->v, err) < 0)
		return -1;
	json_array_foreach(tasks, i, d) {
		const json_t *dv = json_object_get(d, "derived"), *topo = json_object_get(dv, "topology");
		const char *id = cb_json_str(d, "id"), *v = cb_json_str(dv, "verdict");
		struct cb_report_task *t = NULL;
		int role;

		for (k = 0; id && k < rp->n && !t; k++)
			if (strcmp(rp->t[k].sealed.id, id) == 0 && !rp->t[k].derived)
				t = &rp->t[k];
		if (!t)
			return cb_fail(err, "%s/" CB_RUN_DERIVED ": tasks[%zu]: task '%s' is not in the run (or listed twice)",
				       rp->v->derived_dir, i, id ? id : "(none)");
		if (!v || strlen(v) != 1 || !cb_verdict_known(v[0]) || !cb_json_str(dv, "code") ||
		    !cb_json_str(dv, "reason"))
			return cb_fail(err, "%s/" CB_RUN_DERIVED ": tasks[%zu]: derived verdict, code and reason are required",
				       rp->v->derived_dir, i);
		t->derived = 1;
		t->dverdict = v[0];
		t->dcode = cb_json_str(dv, "code");
		t->dreason = cb_json_str(dv, "reason");
		t->dhave_topology = json_is_object(topo);
		for (role = 0; role < CB_NROLES; role++) {
			t->dtopology[role] = cb_json_int(topo, cb_role_name((enum cb_role)role), 0);
			t->cell_have[role] = t->dhave_topology;
			t->cell_count[role] = t->dtopology[role];
		}
		t->changed = json_is_true(json_object_get(d, "changed"));
		t->dexcluded = json_object_get(dv, "excluded");
	}
	return 0;
}

/* The seal's status in words (rp->seal), from the one check the view
 * made: it holds, it does not (and the first difference), or it cannot be
 * checked (and why). Returns 1 when it holds. */
static int report_seal(struct cb_report *rp)
{
	const struct cb_run_view *v = rp->v;
	char first[1024], counts[512];

	switch (v->seal) {
	case CB_SEAL_HOLDS:
		snprintf(rp->seal, sizeof(rp->seal), "holds (%zu files)", v->rep.nfiles);
		return 1;
	case CB_SEAL_BROKEN:
		cb_verify_first(&v->rep, first, sizeof(first));
		cb_verify_describe(&v->rep, counts, sizeof(counts));
		/* What SHA256SUMS itself lacks is the first difference and the
		 * end of the counts alike: said once. */
		if (v->rep.nsums)
			snprintf(rp->seal, sizeof(rp->seal), "does not hold: %s", first);
		else
			snprintf(rp->seal, sizeof(rp->seal), "does not hold: %s (%s)", first, counts);
		return 0;
	case CB_SEAL_UNCHECKED:
		break;
	}
	/* The run is the report's subject: an unsealed one is said so
	 * without its path. */
	snprintf(rp->seal, sizeof(rp->seal), "cannot be checked: %s",
		 v->seal_err.code == CB_ERR_NOT_SEALED ? "not sealed (no SHA256SUMS)" : v->seal_err.msg);
	return 0;
}

/* The thresholds the verdicts used: the campaign receipt's, else (a run
 * built by the test tools) the first task receipt's. */
const json_t *cb_report_thresholds(const struct cb_report *rp)
{
	const json_t *th = json_object_get(rp->v->cs.doc, "thresholds");

	if (!th && rp->n)
		th = json_object_get(rp->t[0].doc, "thresholds");
	return th;
}

/* Path of directory `to` as seen from directory `from`, both absolute and
 * resolved: "..", "../x/y" or "." (a relative link that survives moving
 * both together). */
static char *rel_path(const char *from, const char *to)
{
	struct cb_buf b = CB_BUF_INIT;
	size_t fn, tn;

	for (;;) {
		while (*from == '/')
			from++;
		while (*to == '/')
			to++;
		fn = strcspn(from, "/");
		tn = strcspn(to, "/");
		if (!fn || fn != tn || strncmp(from, to, fn) != 0)
			break;
		from += fn;
		to += tn;
	}
	while (*from) {
		from += strcspn(from, "/");
		cb_buf_adds(&b, b.len ? "/.." : "..");
		while (*from == '/')
			from++;
	}
	if (*to)
		cb_buf_addf(&b, "%s%s", b.len ? "/" : "", to);
	if (!b.len)
		cb_buf_adds(&b, ".");
	return cb_buf_detach(&b, NULL);
}

/* Links from the report to the run (and derived folder): relative to the
 * folder the report is written to, or to the current one for stdout. */
static int make_hrefs(struct cb_report *rp, const char *output, struct cb_err *err)
{
	const struct cb_guard g = { "-o", rp->v->root, "a sealed run is never written to" };
	char *out = NULL, *root = NULL, *droot = NULL, *slash;
	int rc = -1;

	if (output && cb_guard_check(&g, output, err) < 0)
		return -1;
	out = cb_resolve(output ? output : "./report");
	root = cb_resolve(rp->v->root);
	droot = rp->v->derived_dir ? cb_resolve(rp->v->derived_dir) : NULL;
	if (!out || !root || (rp->v->derived_dir && !droot)) {
		cb_fail(err, "%s: cannot be resolved: %s", !out ? (output ? output : "./report") : !root ? rp->v->root
			: rp->v->derived_dir, strerror(errno));
		goto out;
	}
	slash = strrchr(out, '/');
	if (slash == out)
		slash[1] = '\0';
	else
		*slash = '\0';
	rp->href = rel_path(out, root);
	rp->dhref = droot ? rel_path(out, droot) : NULL;
	rc = rp->href && (!droot || rp->dhref) ? 0 : cb_fail(err, "out of memory");
out:
	free(out);
	free(root);
	free(droot);
	return rc;
}

/* Tasks by their shown verdict in reading order (G, C, B, R, K, X), then
 * by effect, largest first (untimed last), then by id. */
static int cmp_task(const void *x, const void *y)
{
	const struct cb_report_task *a = x, *b = y;
	const char *va = strchr(CB_VERDICTS_READING, cb_report_verdict(a));
	const char *vb = strchr(CB_VERDICTS_READING, cb_report_verdict(b));

	if (va != vb)
		return va < vb ? -1 : 1;
	if (a->timed != b->timed)
		return a->timed ? -1 : 1;
	if (a->effect != b->effect)
		return a->effect > b->effect ? -1 : 1;
	return strcmp(a->sealed.id, b->sealed.id);
}

/* The run's diff (diff.h) into rp, each task pointing at its own, from
 * the view's one verify and its counts: nothing is hashed again. */
static int attach_diff(struct cb_report *rp, struct cb_err *err)
{
	size_t i, k;

	rp->diff = calloc(1, sizeof(*rp->diff));
	if (!rp->diff)
		return cb_fail(err, "out of memory");
	if (cb_diff_load(rp->diff, rp->v, NULL, err) < 0)
		return cb_prefix(err, "diff");
	for (i = 0; i < rp->n; i++)
		for (k = 0; k < rp->diff->n; k++)
			if (strcmp(rp->diff->t[k].id, rp->t[i].sealed.id) == 0)
				rp->t[i].diff = &rp->diff->t[k];
	return 0;
}

/* rp->workers from the run's run.json (docs/formats.md): how each
 * invocation confined its workers, each way once, in order. A run that
 * does not record it (made before confinement, merged) has none. */
static int load_workers(struct cb_report *rp, struct cb_err *err)
{
	char *path = cb_path_join(rp->v->root, CB_RUN_RUN);
	json_t *j = NULL, *inv;
	struct cb_buf b = CB_BUF_INIT;
	size_t i;
	int rc = 0;

	if (!path)
		return cb_fail(err, "out of memory");
	if (cb_report_has_file(rp->v->root, CB_RUN_RUN) && !(j = cb_json_load_file(path, err)))
		rc = -1;
	json_array_foreach(json_object_get(j, "invocations"), i, inv) {
		const char *how = json_string_value(json_object_get(inv, "workers"));
		if (how && (!b.data || !strstr(b.data, how)))
			cb_buf_addf(&b, "%s%s", b.len ? "; then " : "", how);
	}
	if (b.len && !(rp->workers = cb_buf_detach(&b, NULL)))
		rc = cb_fail(err, "out of memory");
	cb_buf_release(&b);
	json_decref(j);
	free(path);
	return rc;
}

int cb_report_load(struct cb_report *rp, const struct cb_run_view *v, const char *output, int gate,
		   struct cb_err *err)
{
	int holds;

	memset(rp, 0, sizeof(*rp));
	rp->v = v;
	holds = report_seal(rp);
	if (gate && !holds)
		return 0;
	if (!v->have_cs) {
		*err = v->load_err;
		return -1;
	}
	if (load_workers(rp, err) < 0 || load_tasks(rp, err) < 0 || (v->derived && attach_derived(rp, err) < 0) ||
	    make_hrefs(rp, output, err) < 0)
		return -1;
	if (rp->n)
		qsort(rp->t, rp->n, sizeof(*rp->t), cmp_task);
	return holds && attach_diff(rp, err) < 0 ? -1 : holds;
}
