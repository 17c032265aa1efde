/* reaccount.c: the re-accounting behind `caliber reaccount`
 * (docs/design.md section 12): re-count the topology of a sealed run under another launch floor and
 * re-classify its tasks against the sealed correctness and timings, with no
 * device and no compiler. A derived verdict can only demote a topology
 * claim: the classifier, fed the sealed evidence, turns a vanished
 * reduction into B and a new reduction (which has no round-b timings) into
 * X; verdicts that do not rest on topology (X, K) are kept as sealed. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/runroot.h"
#include "evidence.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "base/pool.h"
#include "reaccount.h"
#include "receipt.h"
#include "seal/seal.h"


/* The tasks of a run, accounted on the pool's threads: each takes the next
 * task index, and writes only its own task_pair. */
struct account_job {
	const char *run;
	const struct cb_campaign_summary *cs;
	const struct cb_manifest *m;
	const struct cb_ttgir_counts *counts;
	const struct cb_scope *scope;
	struct cb_task_pair *pairs;
	atomic_size_t next;
};

static json_t *topo_triplet(const struct cb_task_result *r)
{
	if (!r->have_topology)
		return json_null();
	return json_pack("{s:I, s:I, s:I}", "baseline", (json_int_t)r->topology[CB_ROLE_BASELINE],
			 "control", (json_int_t)r->topology[CB_ROLE_CONTROL], "candidate",
			 (json_int_t)r->topology[CB_ROLE_CANDIDATE]);
}

static json_t *excluded_json(const struct cb_task_evidence *ev)
{
	json_t *ex = json_object();
	int r;

	for (r = 0; r < CB_NROLES; r++) {
		json_t *list = json_array();
		size_t i;
		for (i = 0; ev->have_topology[r] && i < ev->topology[r].nv; i++)
			if (!ev->topology[r].v[i].scoped)
				json_array_append_new(list, json_string(ev->topology[r].v[i].name));
		json_object_set_new(ex, cb_role_name((enum cb_role)r), list);
	}
	return ex;
}

/* The first way in which a recomputation differs from the sealed receipt. */
static int first_difference(const struct cb_task_result *a, const struct cb_task_result *b,
			    char *out, size_t cap)
{
	int r, o;

	for (o = 0; o < CB_NORDERS; o++)
		if (a->present[o] && b->present[o] && a->resamples[o] != b->resamples[o]) {
			snprintf(out, cap, "task %s: round %s was sealed with %lld bootstrap resamples, the campaign receipt "
				 "says %lld", a->id, o == CB_ORDER_A ? "a" : "b", a->resamples[o], b->resamples[o]);
			return 1;
		}
	if (a->verdict != b->verdict || strcmp(a->code, b->code) != 0) {
		snprintf(out, cap, "task %s: sealed %c (%s), recomputed %c (%s)", a->id, a->verdict, a->code,
			 b->verdict, b->code);
		return 1;
	}
	if (a->have_topology != b->have_topology) {
		snprintf(out, cap, "task %s: topology joinable sealed %d, recomputed %d", a->id,
			 a->have_topology, b->have_topology);
		return 1;
	}
	for (r = 0; a->have_topology && r < CB_NROLES; r++)
		if (a->topology[r] != b->topology[r]) {
			snprintf(out, cap, "task %s: %s topology sealed %lld, recomputed %lld", a->id,
				 cb_role_name((enum cb_role)r), a->topology[r], b->topology[r]);
			return 1;
		}
	if (a->identical != b->identical) {
		snprintf(out, cap, "task %s: identical by construction sealed %s, recomputed %s", a->id,
			 a->identical ? "yes" : "no", b->identical ? "yes" : "no");
		return 1;
	}
	return 0;
}

/* Whether the cell receipt at path is one caliber writes, as far as the
 * evidence reads it: a JSON object whose outcome is an outcome name and
 * whose detail, when there, is text. The evidence takes a receipt it
 * cannot read for a failed cell (a worker may have spoiled it in a live
 * run); in a sealed run caliber wrote every receipt, so one that is not
 * what it writes is named here, with what is wrong, before equivalence
 * could only say that a verdict differs. */
static int check_cell_receipt(const char *path, struct cb_err *err)
{
	json_t *j = cb_json_load_file(path, err), *o, *d;
	enum cb_outcome out;
	int rc = 0;

	if (!j)
		return -1;
	o = json_object_get(j, "outcome");
	d = json_object_get(j, "detail");
	if (!json_is_object(j)) {
		rc = cb_fail(err, "%s: a cell receipt is a JSON object", path);
	} else if (!o) {
		rc = cb_fail(err, "%s: outcome: missing", path);
	} else if (!json_is_string(o) || cb_outcome_parse(json_string_value(o), &out) < 0) {
		struct cb_buf names = CB_BUF_INIT;
		char *shown = json_dumps(o, JSON_ENCODE_ANY | JSON_COMPACT);
		int k;
		for (k = CB_OUT_PASSED; k <= CB_OUT_MISSING_OUTPUT; k++)
			cb_buf_addf(&names, "%s%s", k > CB_OUT_PASSED ? ", " : "", cb_outcome_name((enum cb_outcome)k));
		rc = cb_fail(err, "%s: outcome: %.80s is not an outcome (one of %s)", path, shown ? shown : "?",
			     names.data ? names.data : "?");
		free(shown);
		cb_buf_release(&names);
	} else if (d && !json_is_string(d)) {
		rc = cb_fail(err, "%s: detail: not a string", path);
	}
	json_decref(j);
	return rc;
}

/* Every cell receipt of the task folder tdir checked (check_cell_receipt),
 * in the order of the names of its cell folders. */
static int check_cell_receipts(const char *tdir, struct cb_err *err)
{
	char *cells = cb_path_join(tdir, CB_RUN_CELLS), **names = NULL;
	size_t n = 0, k;
	int rc = 0;

	if (!cells)
		return cb_fail(err, "out of memory");
	if (cb_is_dir(cells) && cb_list_dir(cells, &names, &n, err) < 0)
		rc = -1;
	for (k = 0; k < n && rc == 0; k++) {
		char *path = cb_strdupf("%s/%s/" CB_RUN_CELL, cells, names[k]);
		if (!path)
			rc = cb_fail(err, "out of memory");
		else if (cb_exists(path))
			rc = check_cell_receipt(path, err);
		free(path);
	}
	cb_strv_free(names, n);
	free(cells);
	return rc;
}

/* Account task i: load its sealed receipt and evidence, check that the
 * run's own floor reproduces the receipt, then classify it at the new
 * floor. The outcome stays in job->pairs[i]. */
static void account_task(const struct account_job *job, size_t i)
{
	const struct cb_campaign_summary *cs = job->cs;
	struct cb_task_pair *pair = &job->pairs[i];
	struct cb_task_account acc;
	struct cb_task_result again;
	char *tdir = cb_strdupf("%s/" CB_RUN_TASKS "/%s", job->run, cs->tasks[i].id);
	char *tjson = tdir ? cb_path_join(tdir, CB_RUN_TASK) : NULL;
	int bad;

	pair->failed = 1;
	if (!tjson) {
		cb_fail(&pair->err, "out of memory");
		free(tdir);
		return;
	}
	if (cb_task_result_load(tjson, &pair->sealed, &pair->err) < 0 || check_cell_receipts(tdir, &pair->err) < 0 ||
	    cb_task_account(tdir, cs->tasks[i].id, job->m, cs->launch_floor, (int)cs->resamples, job->counts, &acc,
			    &pair->err) < 0) {
		free(tdir);
		free(tjson);
		return;
	}
	free(tdir);
	free(tjson);
	/* Equivalence: at the run's own floor, reproduce the seal. */
	if (cb_task_result_fill(&acc, pair->sealed.op, &again, &pair->err) < 0) {
		cb_task_account_release(&acc);
		return;
	}
	bad = first_difference(&pair->sealed, &again, pair->diff, sizeof(pair->diff));
	cb_task_result_release(&again);
	if (bad) {
		cb_task_account_release(&acc);
		pair->failed = 2;
		return;
	}
	/* The new scope changes topology facts only; X and K do not rest on
	 * topology, so a scope by time needs no profile of theirs. */
	if (!job->scope->by_time)
		bad = cb_task_account_rescope(&acc, job->m, job->scope->floor, &pair->err) < 0;
	else
		bad = pair->sealed.verdict != 'X' && pair->sealed.verdict != 'K' &&
		      cb_task_account_scope_time(&acc, job->m, job->scope->share_ppm, &pair->err) < 0;
	if (bad) {
		cb_task_account_release(&acc);
		return;
	}
	bad = cb_task_result_fill(&acc, pair->sealed.op, &pair->derived, &pair->err) < 0;
	pair->excluded = excluded_json(&acc.ev);
	cb_task_account_release(&acc);
	if (bad)
		return;
	/* X and K do not rest on topology: they stay as sealed. */
	if (pair->sealed.verdict == 'X' || pair->sealed.verdict == 'K') {
		pair->derived.verdict = pair->sealed.verdict;
		free(pair->derived.code);
		free(pair->derived.reason);
		pair->derived.code = strdup(pair->sealed.code);
		pair->derived.reason = strdup(pair->sealed.reason);
	}
	pair->failed = 0;
}

static void *account_worker(void *arg)
{
	struct account_job *job = arg;
	size_t i;

	while ((i = atomic_fetch_add(&job->next, 1)) < job->cs->ntasks)
		account_task(job, i);
	return NULL;
}

/* The checks before anything is accounted: the output lies outside the
 * run, the view found its seal holding, its receipt and manifest read and
 * the manifest the sealed one (runview.h), and the output is free. */
static int check_inputs(const struct cb_run_view *v, const char *output, struct cb_err *err)
{
	const struct cb_guard g = { "--output", v->root, "a derived run is always written outside it" };

	if (cb_guard_check(&g, output, err) < 0 || cb_run_view_require(v, 1, err) < 0)
		return -1;
	if (cb_exists(output) && (!cb_is_dir(output) || rmdir(output) < 0))
		return cb_fail(err, "--output %s: already exists and is not an empty directory; refusing to overwrite",
			       output);
	return 0;
}

void cb_reaccount_release(struct cb_reaccount *ra)
{
	size_t i;

	for (i = 0; ra->pairs && i < ra->ntasks; i++) {
		cb_task_result_release(&ra->pairs[i].sealed);
		cb_task_result_release(&ra->pairs[i].derived);
		json_decref(ra->pairs[i].excluded);
	}
	free(ra->pairs);
	free(ra->derived);
	json_decref(ra->doc);
	memset(ra, 0, sizeof(*ra));
}

int cb_scope_parse_time(const char *arg, struct cb_scope *s, struct cb_err *err)
{
	const char *p = arg;
	long long whole = 0, frac = 0, scale = 10000;
	int digits = 0, decimals = 0;

	memset(s, 0, sizeof(*s));
	if (strncmp(p, "time:", 5) == 0)
		for (p += 5; *p >= '0' && *p <= '9' && digits < 4; p++, digits++)
			whole = whole * 10 + (*p - '0');
	if (digits && *p == '.')
		for (p++; *p >= '0' && *p <= '9' && decimals < 4; p++, decimals++)
			frac += (*p - '0') * (scale /= 10);
	if (!digits || *p || (p[-1] == '.') || whole * 10000 + frac > 1000000)
		return cb_fail(err, "--scope: expected time:P, P a percentage from 0 to 100 with at most 4 decimals, got '%s'",
			       arg);
	s->by_time = 1;
	s->share_ppm = whole * 10000 + frac;
	return 0;
}

void cb_scope_name(const struct cb_scope *s, char *out, size_t cap)
{
	long long frac = s->share_ppm % 10000;
	int places = 4;

	if (!s->by_time) {
		snprintf(out, cap, "floor %lld", s->floor);
		return;
	}
	while (frac && frac % 10 == 0) {
		frac /= 10;
		places--;
	}
	if (frac)
		snprintf(out, cap, "time:%lld.%0*lld%%", s->share_ppm / 10000, places, frac);
	else
		snprintf(out, cap, "time:%lld%%", s->share_ppm / 10000);
}

/* Whether two results count the same topology. */
static int same_topology(const struct cb_task_result *a, const struct cb_task_result *b)
{
	int r;

	if (a->have_topology != b->have_topology)
		return 0;
	for (r = 0; a->have_topology && r < CB_NROLES; r++)
		if (a->topology[r] != b->topology[r])
			return 0;
	return 1;
}

int cb_reaccount(const struct cb_run_view *v, const char *output, const struct cb_scope *scope,
		 struct cb_reaccount *ra, struct cb_err *err)
{
	const char *run = v->root;
	struct account_job job;
	json_t *tasks;
	size_t i;

	memset(ra, 0, sizeof(*ra));
	ra->v = v;
	ra->scope = *scope;
	if (check_inputs(v, output, err) < 0)
		return -1;
	ra->floor = scope->by_time ? ra->v->cs.launch_floor : scope->floor;
	ra->ntasks = ra->v->cs.ntasks;
	ra->pairs = calloc(ra->ntasks ? ra->ntasks : 1, sizeof(*ra->pairs));
	ra->derived = calloc(ra->ntasks ? ra->ntasks : 1, sizeof(*ra->derived));
	if (!ra->pairs || !ra->derived)
		return cb_fail(err, "out of memory");
	job.run = run;
	job.cs = &ra->v->cs;
	job.m = &ra->v->m;
	job.counts = &ra->v->counts;
	job.scope = &ra->scope;
	job.pairs = ra->pairs;
	atomic_init(&job.next, 0);
	cb_pool_run(ra->ntasks, account_worker, &job);
	/* Reported as if the tasks had been accounted one after the other:
	 * the first task in run order that failed. */
	for (i = 0; i < ra->ntasks; i++) {
		if (ra->pairs[i].failed == 2) {
			snprintf(ra->diff, sizeof(ra->diff), "%s", ra->pairs[i].diff);
			return cb_fail(err, "%s: equivalence fails at the run's own floor %lld: %s", run,
				       ra->v->cs.launch_floor, ra->pairs[i].diff);
		}
		if (ra->pairs[i].failed) {
			*err = ra->pairs[i].err;
			return -1;
		}
		ra->derived[i] = ra->pairs[i].derived;
	}
	tasks = json_array();
	for (i = 0; i < ra->ntasks; i++) {
		const struct cb_task_result *sr = &ra->pairs[i].sealed, *d = &ra->pairs[i].derived;
		char diff[1024];
		int ch = sr->verdict != d->verdict || first_difference(sr, d, diff, sizeof(diff));

		ra->changed += (size_t)(sr->verdict != d->verdict);
		ra->same_counts += (size_t)same_topology(sr, d);
		json_array_append_new(tasks, json_pack("{s:s, s:b, s:{s:s#, s:s, s:o}, s:{s:s#, s:s, s:s, s:o, s:O}}",
			"id", sr->id, "changed", ch,
			"sealed", "verdict", &sr->verdict, (int)1, "code", sr->code, "topology", topo_triplet(sr),
			"derived", "verdict", &d->verdict, (int)1, "code", d->code, "reason", d->reason,
			"topology", topo_triplet(d), "excluded", ra->pairs[i].excluded));
	}
	ra->doc = cb_receipt_new(CB_DERIVED_SCHEMA);
	json_object_set_new(ra->doc, "run", json_pack("{s:s, s:s, s:s, s:I}", "root", run, "campaign",
		ra->v->cs.campaign, "manifest_sha256", ra->v->cs.manifest_sha256, "sealed_floor",
		(json_int_t)ra->v->cs.launch_floor));
	json_object_set_new(ra->doc, "floor", json_integer(ra->floor));
	if (scope->by_time)
		json_object_set_new(ra->doc, "scope", json_pack("{s:s, s:I, s:I}", "kind", "time", "share_ppm",
								(json_int_t)scope->share_ppm, "same_counts",
								(json_int_t)ra->same_counts));
	json_object_set_new(ra->doc, "equivalence", json_pack("{s:b, s:I}", "holds", 1, "checked_at_floor",
							      (json_int_t)ra->v->cs.launch_floor));
	json_object_set_new(ra->doc, "changed", json_integer((json_int_t)ra->changed));
	json_object_set_new(ra->doc, "tasks", tasks);
	return 0;
}

int cb_reaccount_write(const struct cb_reaccount *ra, const char *output, struct cb_err *err)
{
	const struct cb_guard g = { "--output", NULL, NULL };
	char *path = cb_path_join(output, CB_RUN_DERIVED);
	int rc = path && cb_guard_mkdir(&g, output, 0777, err) == 0 && cb_receipt_write(path, ra->doc, err) == 0 &&
		 cb_write_verdict_matrix(output, ra->derived, ra->ntasks, err) == 0 ? 0 : -1;

	if (!path)
		cb_fail(err, "out of memory");
	free(path);
	return rc;
}
