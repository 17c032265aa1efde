/* expect.c: how long a task is expected to take (expect.h). */
#include "expect.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/runroot.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "receipt.h"
#include "seal/seal.h"

void cb_fmt_elapsed(long long ms, char *out, size_t cap)
{
	long long s = ms / 1000;

	if (s >= 3600)
		snprintf(out, cap, "%lldh%02lldm", s / 3600, s / 60 % 60);
	else if (s >= 60)
		snprintf(out, cap, "%lldm%02llds", s / 60, s % 60);
	else
		snprintf(out, cap, "%llds", s);
}

/* The cells of the history's task folder tdir, their wall_ns summed per
 * phase into t->phase_ms. A cell receipt that cannot be read or has no
 * wall time adds nothing: the seal holds, so it is a receipt of another
 * caliber's making, not an altered one. */
static void history_cells(const char *tdir, struct cb_history_task *t)
{
	char *cells = cb_path_join(tdir, CB_RUN_CELLS), **names = NULL;
	size_t n = 0, k;
	struct cb_err ignored;
	int p;

	for (p = 0; p < CB_NPHASES; p++)
		t->phase_ms[p] = -1;
	if (!cells || !cb_is_dir(cells) || cb_list_dir(cells, &names, &n, &ignored) < 0) {
		free(cells);
		return;
	}
	for (k = 0; k < n; k++) {
		char *path = cb_strdupf("%s/%s/" CB_RUN_CELL, cells, names[k]);
		json_t *j = path && cb_exists(path) ? cb_json_load_file(path, &ignored) : NULL;
		const char *phase = cb_json_str(j, "phase");
		json_int_t ns = cb_json_int(j, "wall_ns", -1);

		for (p = 0; phase && ns >= 0 && p < CB_NPHASES; p++)
			if (strcmp(phase, cb_phase_name((enum cb_phase)p)) == 0)
				t->phase_ms[p] = (t->phase_ms[p] < 0 ? 0 : t->phase_ms[p]) + ns / 1000000;
		json_decref(j);
		free(path);
	}
	cb_strv_free(names, n);
	free(cells);
}

/* One task of the history: its wall time from tasks/<id>/task.json, else
 * from its cells; its selections from its entry of the history's matrix
 * (byid: task id -> entry). */
static int history_task(const struct cb_history *h, const json_t *byid, const char *id, struct cb_history_task *t,
			struct cb_err *err)
{
	const json_t *entry = json_object_get(byid, id);
	char *tdir = cb_strdupf("%s/" CB_RUN_TASKS "/%s", h->root, id);
	char *tjson = tdir ? cb_path_join(tdir, CB_RUN_TASK) : NULL;
	json_t *j;
	int p;

	if (!tjson || !(t->id = strdup(id))) {
		free(tdir);
		free(tjson);
		return cb_fail(err, "out of memory");
	}
	if (!(j = cb_json_load_file(tjson, err))) {
		free(tdir);
		free(tjson);
		return -1;
	}
	history_cells(tdir, t);
	t->identical = json_is_true(json_object_get(json_object_get(j, "identity"), "identical")) ||
		       (cb_json_str(j, "code") && strcmp(cb_json_str(j, "code"), "identical-binaries") == 0);
	t->screened_ms = cb_budget_add(t->phase_ms[CB_PH_CORRECTNESS] < 0 ? 0 : t->phase_ms[CB_PH_CORRECTNESS],
				       t->phase_ms[CB_PH_SCREEN] < 0 ? 0 : t->phase_ms[CB_PH_SCREEN]);
	t->ms = cb_json_int(j, "wall_ns", -1);
	t->ms = t->ms < 0 ? -1 : t->ms / 1000000;
	if (t->ms < 0)
		for (p = 0; p < CB_NPHASES; p++)
			if (t->phase_ms[p] >= 0) {
				t->ms = (t->ms < 0 ? 0 : t->ms) + t->phase_ms[p];
				t->from_cells = 1;
			}
	t->benchmark_args = json_object_get(entry, "benchmark_args");
	t->correctness_args = json_object_get(entry, "correctness_args");
	json_decref(j);
	free(tdir);
	free(tjson);
	return 0;
}

/* Count task t of the history into its share of changed tasks (a task
 * without a time says nothing of it). */
static void history_share_add(struct cb_history_share *s, const struct cb_history_task *t)
{
	if (t->ms < 0)
		return;
	s->known++;
	s->known_ms = cb_budget_add(s->known_ms, t->ms);
	if (t->identical) {
		s->screened_ms = cb_budget_add(s->screened_ms, t->screened_ms);
	} else {
		s->changed++;
		s->changed_ms = cb_budget_add(s->changed_ms, t->ms);
	}
}

int cb_history_load(const char *root, const char *campaign, const char *opt, struct cb_history *h,
		    struct cb_err *err)
{
	struct cb_campaign_summary cs;
	char *path = NULL;
	json_t *byid = json_object(), *mt;
	size_t i;
	int rc = -1;

	memset(h, 0, sizeof(*h));
	memset(&cs, 0, sizeof(cs));
	if (!byid || !(h->root = strdup(root)) || !(h->index = json_object())) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_verify_or_fail(root, err) < 0)
		goto out;
	if (cb_campaign_summary_of_run(root, &cs, err) < 0)
		goto out;
	if (strcmp(cs.campaign, campaign) != 0) {
		cb_fail(err, "%s is a run of campaign '%s', not '%s': its times are not this campaign's", root,
			cs.campaign, campaign);
		goto out;
	}
	free(path);
	if (!(path = cb_path_join(root, CB_RUN_MATRIX)) || !(h->matrix = cb_json_load_file(path, err)))
		goto out;
	json_array_foreach(json_object_get(h->matrix, "tasks"), i, mt)
		if (cb_json_str(mt, "id"))
			json_object_set(byid, cb_json_str(mt, "id"), mt);
	if (!(h->tasks = calloc(cs.ntasks ? cs.ntasks : 1, sizeof(*h->tasks)))) {
		cb_fail(err, "out of memory");
		goto out;
	}
	for (i = 0; i < cs.ntasks; i++) {
		h->ntasks = i + 1;
		if (history_task(h, byid, cs.tasks[i].id, &h->tasks[i], err) < 0)
			goto out;
		if (json_object_set_new(h->index, cs.tasks[i].id, json_integer((json_int_t)i)) < 0) {
			cb_fail(err, "out of memory");
			goto out;
		}
		history_share_add(&h->share, &h->tasks[i]);
	}
	rc = 0;
out:
	if (rc < 0) {
		cb_prefix(err, "%s", opt);
		cb_history_release(h);
	}
	cb_campaign_summary_release(&cs);
	json_decref(byid);
	free(path);
	return rc;
}

void cb_history_release(struct cb_history *h)
{
	size_t i;

	if (!h)
		return;
	for (i = 0; i < h->ntasks; i++)
		free(h->tasks[i].id);
	free(h->tasks);
	free(h->root);
	json_decref(h->matrix);
	json_decref(h->index);
	memset(h, 0, sizeof(*h));
}

const struct cb_history_task *cb_history_find(const struct cb_history *h, const char *id)
{
	const json_t *k = h && id ? json_object_get(h->index, id) : NULL;

	return k ? &h->tasks[json_integer_value(k)] : NULL;
}

void cb_expect_so_far_add(struct cb_expect_so_far *s, long long wall_ms, long long budget_s)
{
	s->wall_ms = cb_budget_add(s->wall_ms, wall_ms);
	s->budget_s = cb_budget_add(s->budget_s, budget_s);
	s->ntasks++;
}

/* Whether two selections (JSON arrays of pytest arguments) are the same;
 * two absent ones are. */
static int same_args(const json_t *a, const json_t *b)
{
	return (!a && !b) || (a && b && json_equal(a, b));
}

void cb_history_share_estimate(const struct cb_history *h, long long *whole_ms, long long *prescreen_ms)
{
	const struct cb_history_share *s = &h->share;

	/* p x changed_ms / changed + (1 - p) x screened_ms / (known - changed),
	 * with p = changed / known, is (changed_ms + screened_ms) / known: one
	 * division, in whole ms, and no mean of an empty side. */
	*whole_ms = s->known ? s->known_ms / (long long)s->known : -1;
	*prescreen_ms = s->known ? cb_budget_add(s->changed_ms, s->screened_ms) / (long long)s->known : -1;
}

/* e's cost to a campaign with and without run --prescreen (expect.h): t,
 * the history's record of the task, when e rests on it; else the
 * history's share, when it has one. */
static void prescreen_expect(const struct cb_history *h, const struct cb_history_task *t, struct cb_expectation *e)
{
	if (!h)
		return;
	if (t && (e->basis == CB_EXPECT_HISTORY_TASK || e->basis == CB_EXPECT_HISTORY_CELLS)) {
		e->prescreen = t->identical ? CB_PRESCREEN_IDENTICAL : CB_PRESCREEN_CHANGED;
		e->whole_ms = e->ms;
		e->prescreen_ms = t->identical ? t->screened_ms : e->ms;
		e->screen_known = t->identical && t->phase_ms[CB_PH_SCREEN] >= 0;
		return;
	}
	cb_history_share_estimate(h, &e->whole_ms, &e->prescreen_ms);
	if (e->whole_ms < 0)
		e->whole_ms = e->prescreen_ms = 0;
	else
		e->prescreen = CB_PRESCREEN_SHARE;
}

struct cb_expectation cb_task_expect(const struct cb_history *h, const struct cb_expect_so_far *s,
				     const json_t *task)
{
	struct cb_expectation e = { .basis = CB_EXPECT_NONE, .prescreen = CB_PRESCREEN_NONE };
	const struct cb_history_task *t = cb_history_find(h, cb_json_str(task, "id"));
	long long budget = cb_json_int(task, "budget_s", 0);

	if (h && !t)
		e.history_miss = "not in the history run";
	else if (t && (!same_args(t->benchmark_args, json_object_get(task, "benchmark_args")) ||
		       !same_args(t->correctness_args, json_object_get(task, "correctness_args"))))
		e.history_miss = "the history run selected it differently";
	else if (t && t->ms < 0)
		e.history_miss = "no wall time in the history run";
	else if (t) {
		e.ms = t->ms;
		e.basis = t->from_cells ? CB_EXPECT_HISTORY_CELLS : CB_EXPECT_HISTORY_TASK;
		prescreen_expect(h, t, &e);
		return e;
	}
	if (s && s->ntasks && s->budget_s > 0 && budget >= 0) {
		/* In double: a product of two budgets may pass LLONG_MAX, and a
		 * planning figure needs no more than its 53 bits; held at
		 * LLONG_MAX, as budgets are. */
		double ms = (double)s->wall_ms * (double)budget / (double)s->budget_s;
		e.ms = ms >= (double)LLONG_MAX ? LLONG_MAX : (long long)ms;
		e.basis = CB_EXPECT_SO_FAR;
		e.so_far = *s;
	}
	prescreen_expect(h, NULL, &e);
	return e;
}

const char *cb_expect_basis_name(enum cb_expect_basis b)
{
	static const char *const names[] = { "none", "history-task", "history-cells", "so-far" };

	return names[b];
}

void cb_expect_describe(const struct cb_expectation *e, char *out, size_t cap)
{
	char wall[32], budget[32];

	switch (e->basis) {
	case CB_EXPECT_HISTORY_TASK:
		snprintf(out, cap, "the time it took in the --history run (its task.json wall_ns)");
		break;
	case CB_EXPECT_HISTORY_CELLS:
		snprintf(out, cap, "the time its cells took in the --history run (their cell.json wall_ns)");
		break;
	case CB_EXPECT_SO_FAR:
		cb_fmt_elapsed(e->so_far.wall_ms, wall, sizeof(wall));
		cb_fmt_elapsed(e->so_far.budget_s > LLONG_MAX / 1000 ? LLONG_MAX : e->so_far.budget_s * 1000, budget,
			       sizeof(budget));
		snprintf(out, cap, "the %zu task%s measured so far in this run, scaled by budget (%s for %s of budget)",
			 e->so_far.ntasks, e->so_far.ntasks == 1 ? "" : "s", wall, budget);
		break;
	case CB_EXPECT_NONE:
		snprintf(out, cap, "nothing measured yet");
		break;
	}
}
