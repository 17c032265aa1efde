/* runner_task.c: one task of `caliber run`, cell by cell: correctness in
 * every cell, the --prescreen pass, round a, round b when wanted, each
 * round's sessions interleaved and added while its order is undecided,
 * then the task receipt; each cell and task only when it fits before the
 * deadline, with its progress shown as it goes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "account/evidence.h"
#include "account/expect.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "seal/fixed.h"
#include "base/proc.h"
#include "base/runroot.h"
#include "account/receipt.h"
#include "runner_int.h"
#include "seal/tidy.h"
#include "worker.h"

/* The ETA after task i: what the tasks not done yet from i on are
 * expected to take (expect.h), less what task i, running, has taken so
 * far; "?" while one of them has no expectation yet. */
static void eta(const struct runner *rn, size_t i, char *out, size_t cap)
{
	long long ms = 0, ran = cb_mono_ms() - rn->task_t0_ms;
	size_t j;

	for (j = i; j < rn->ntasks; j++) {
		struct cb_expectation e;

		if (rn->done[j])
			continue;
		e = cb_task_expect(rn->history, &rn->so_far, json_array_get(rn->tasks, j));
		if (e.basis == CB_EXPECT_NONE) {
			snprintf(out, cap, "?");
			return;
		}
		ms = cb_budget_add(ms, j == i ? (e.ms > ran ? e.ms - ran : 0) : e.ms);
	}
	cb_fmt_elapsed(ms, out, cap);
}

/* One progress event: a cell started (done = 0) or finished. */
static void progress(struct runner *rn, size_t i, const char *task, const char *cell,
		     enum cb_phase p, int session, const char *outcome, long long cell_ms)
{
	char el[32], left[32] = "?", ph[40];
	long long now = cb_mono_ms() - rn->t0_ms;

	if (rn->progress == PROGRESS_QUIET)
		return;
	if (rn->progress == PROGRESS_LIVE)
		eta(rn, i, left, sizeof(left));
	cb_fmt_elapsed(now, el, sizeof(el));
	if (p == CB_PH_CORRECTNESS || p == CB_PH_SCREEN)
		snprintf(ph, sizeof(ph), "%s", cb_phase_name(p));
	else if (session <= rn->ctx.m->sessions)
		snprintf(ph, sizeof(ph), "%s s%d/%lld", cb_phase_name(p), session, rn->ctx.m->sessions);
	else
		snprintf(ph, sizeof(ph), "%s s%d/%lld added", cb_phase_name(p), session, rn->ctx.m->max_sessions);
	if (rn->progress == PROGRESS_JSON) {
		json_t *j = json_pack("{s:s, s:I, s:I, s:s, s:s, s:s, s:i, s:I}", "event",
				      outcome ? "cell-done" : "cell-start", "task_index", (json_int_t)i + 1, "tasks",
				      (json_int_t)rn->ntasks, "task", task, "cell", cell, "phase", cb_phase_name(p),
				      "session", session, "elapsed_ms", (json_int_t)now);
		char *s;
		if (outcome) {
			json_object_set_new(j, "outcome", json_string(outcome));
			json_object_set_new(j, "cell_ms", json_integer(cell_ms));
		}
		s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
		printf("%s\n", s);
		free(s);
		json_decref(j);
	} else if (rn->progress == PROGRESS_LIVE) {
		printf("\r\033[K[%zu/%zu] %s  cell %s  phase %s  %s  elapsed %s  ETA %s", i + 1, rn->ntasks, task,
		       cell, ph, outcome ? outcome : "running", el, left);
	} else if (outcome) {
		printf("[%zu/%zu] %s %s %s: %s (%.1fs, elapsed %s)\n", i + 1, rn->ntasks, task, cell, ph, outcome,
		       (double)cell_ms / 1000.0, el);
	}
	fflush(stdout);
}

/* The folder of a task in the run root. */
static char *task_dir_of(const struct runner *rn, const struct cb_workload *w)
{
	return cb_strdupf("%s/" CB_RUN_TASKS "/%s", rn->root, w->id);
}

/* With ctx.warmup_ahead, req (task i, phase p, cell c) names the next
 * request of the same cell that may need compiling, for parallel_warmup to
 * compile on another GPU meanwhile: round a after correctness, the next
 * task's correctness (the next one not done yet) after the last session
 * of round a or b, nothing after the last task. Later sessions and round b
 * reuse round a's arguments, so they are never named. */
static int add_warmup_next(struct runner *rn, size_t i, int c, enum cb_phase p, int session, json_t *req,
			   struct cb_err *err)
{
	size_t n = i;
	const json_t *task;
	const struct cb_workload *w;
	json_t *next = NULL;
	char *dir;
	int rc;

	if (p != CB_PH_CORRECTNESS)
		for (n = i + 1; n < rn->ntasks && rn->done[n]; n++)
			;
	task = json_array_get(rn->tasks, n);
	if (!rn->ctx.warmup_ahead || !task || (p != CB_PH_CORRECTNESS && session != rn->ctx.m->sessions))
		return 0;
	w = &rn->ctx.m->workloads[cb_json_int(task, "workload", 0)];
	dir = task_dir_of(rn, w);
	if (!dir)
		return cb_fail(err, "out of memory");
	next = cb_worker_request(&rn->ctx, task, w, rn->procs[c].cell,
				 p == CB_PH_CORRECTNESS ? CB_PH_ROUND_A : CB_PH_CORRECTNESS, 1, dir, err);
	rc = next ? cb_worker_request_ahead(req, next, err) : -1;
	json_decref(next);
	free(dir);
	return rc;
}

/* Whether work expected to take need_ms (-1: not known) ends by the
 * deadline: known, it must fit in what is left; not known, something must
 * be left. Otherwise out says so, after what ("task gain"), the need and
 * its basis ("by ..."). */
static int fits(const struct runner *rn, long long need_ms, const char *basis, const char *what, char *out,
		size_t cap)
{
	long long left = rn->deadline_ms - cb_mono_ms();
	char need[32], have[32];

	if (!rn->deadline_ms || (left > 0 && need_ms <= left))
		return 1;
	cb_fmt_elapsed(need_ms, need, sizeof(need));
	cb_fmt_elapsed(left > 0 ? left : 0, have, sizeof(have));
	if (need_ms < 0)
		snprintf(out, cap, "%s has no expected time yet (%s), and no time is left before the deadline", what,
			 basis);
	else
		snprintf(out, cap, "%s needs about %s by %s, %s %s left before the deadline", what, need, basis, have,
			 left > 0 ? "are" : "is");
	return 0;
}

/* How long one cell (one session of it, in a round) of phase p of the
 * running task is expected to take (ms), and on what: the longest cell of
 * that phase in this task so far; for round b, which repeats round a's
 * work, round a's. -1 for the first cell of a phase, which starts whenever
 * time is left: its task as a whole was judged to fit. */
static long long cell_estimate(const struct runner *rn, enum cb_phase p, const char **basis)
{
	*basis = "nothing of this task's phase measured yet";
	if (rn->task_ms[p] >= 0) {
		*basis = "the time this task's earlier cells of that phase took";
		return rn->task_ms[p];
	}
	if (p == CB_PH_ROUND_B && rn->task_ms[CB_PH_ROUND_A] >= 0) {
		*basis = "the time this task's cells of round a took";
		return rn->task_ms[CB_PH_ROUND_A];
	}
	return -1;
}

/* Note that a cell of phase p took ms. */
static void record_time(struct runner *rn, enum cb_phase p, long long ms)
{
	if (ms > rn->task_ms[p])
		rn->task_ms[p] = ms;
}

/* A cell's folder before its request: nothing of the cell exists yet, so
 * whatever is in it another worker put there (a link at its worker.log,
 * forged outputs). Once the guard has passed the folder (a link above it
 * must not lead into a sealed run), it is emptied (tidy.h), and what went
 * is *found, for cb_cell_run to blame the cell with. */
static int empty_cell_folder(const char *dir, json_t **found, struct cb_err *err)
{
	*found = json_array();
	if (!*found)
		return cb_fail(err, "out of memory");
	if (cb_guard_check(&(struct cb_guard){ NULL, NULL, NULL }, dir, err) < 0)
		return -1;
	return cb_tidy_fresh(dir, *found, err) < 0 ? cb_prefix(err, "cell folder") : 0;
}

/* Fail unless root/rel is a folder of its own or absent: a link or a
 * file a worker put in place of a folder of the run (tasks/, a task's
 * folder or its cells/) would take what caliber writes there elsewhere. */
static int no_link_at(const struct runner *rn, const char *rel, struct cb_err *err)
{
	char *abs = cb_path_join(rn->root, rel);
	struct stat st;
	int rc = 0;

	if (!abs)
		return cb_fail(err, "out of memory");
	if (lstat(abs, &st) == 0 && !S_ISDIR(st.st_mode))
		rc = cb_fail(err, "%s: %s in place of the folder caliber made: something a worker started replaced it",
			     abs, S_ISLNK(st.st_mode) ? "a symlink" : "not a folder");
	free(abs);
	return rc;
}

/* The folders above the cell folders of task id are caliber's own. */
static int task_folders_hold(const struct runner *rn, const char *id, struct cb_err *err)
{
	char *task = cb_strdupf(CB_RUN_TASKS "/%s", id), *cells = cb_strdupf(CB_RUN_TASKS "/%s/" CB_RUN_CELLS, id);
	int rc = !task || !cells ? cb_fail(err, "out of memory")
		 : no_link_at(rn, CB_RUN_TASKS, err) < 0 || no_link_at(rn, task, err) < 0 || no_link_at(rn, cells, err) < 0
		 ? -1 : 0;

	free(task);
	free(cells);
	return rc;
}

/* Make dir, the folder of task id about to start, an empty folder of its
 * own (tidy.h, cb_tidy_fresh): what was there, planted by a worker, goes
 * into rn->planted as "tasks/<id>[/<name>]: <what it was>, removed ...",
 * for run.json. */
static int fresh_task_folder(struct runner *rn, const char *id, const char *dir, struct cb_err *err)
{
	json_t *found = json_array(), *s;
	size_t k;
	int rc = found ? cb_tidy_fresh(dir, found, err) : cb_fail(err, "out of memory");

	json_array_foreach(found, k, s) {
		const char *what = json_string_value(s);
		char *line = what[0] == '.' && what[1] == ':' ? cb_strdupf(CB_RUN_TASKS "/%s%s", id, what + 1)
							      : cb_strdupf(CB_RUN_TASKS "/%s/%s", id, what);
		if (rc == 0 && (!line || json_array_append_new(rn->planted, json_string(line)) < 0))
			rc = cb_fail(err, "out of memory");
		free(line);
	}
	json_decref(found);
	return rc;
}

/* Run one phase (one session of a round) of one task in one cell; outcome
 * filled. Returns 1 without starting it when it would not end by the
 * deadline. */
static int run_cell(struct runner *rn, size_t i, const json_t *task, const struct cb_workload *w,
		    int c, enum cb_phase p, int session, const char *task_dir, enum cb_outcome *outcome,
		    struct cb_err *err)
{
	struct cb_cell_proc *cp = &rn->procs[c];
	json_t *req, *found = NULL;
	long long t, need;
	const char *basis;
	char what[256];
	int rc;

	if (p == CB_PH_CORRECTNESS || p == CB_PH_SCREEN)
		snprintf(what, sizeof(what), "cell %s of task %s (%s)", cp->cell->name, w->id, cb_phase_name(p));
	else
		snprintf(what, sizeof(what), "cell %s of task %s (round %s, session %d of %lld%s)", cp->cell->name,
			 w->id, cb_phase_name(p), session,
			 session <= rn->ctx.m->sessions ? rn->ctx.m->sessions : rn->ctx.m->max_sessions,
			 session <= rn->ctx.m->sessions ? "" : ", added");
	need = cell_estimate(rn, p, &basis);
	if (!fits(rn, need, basis, what, rn->stop, sizeof(rn->stop)))
		return 1;
	req = cb_worker_request(&rn->ctx, task, w, cp->cell, p, session, task_dir, err);
	if (!req)
		return -1;
	if (add_warmup_next(rn, i, c, p, session, req, err) < 0) {
		json_decref(req);
		return -1;
	}
	t = cb_mono_ms();
	progress(rn, i, w->id, cp->cell->name, p, session, NULL, 0);
	rc = task_folders_hold(rn, w->id, err);
	if (rc == 0)
		rc = empty_cell_folder(cb_json_str(req, "dir"), &found, err);
	if (rc == 0)
		rc = cb_cell_run(&rn->ctx, cp, req, w->id, p, w->timeout_s, found, outcome, err);
	/* The cell has ended: its evidence is fixed (fixed.h). */
	if (rc == 0)
		rc = cb_fixed_tree(&rn->fixed, cb_json_str(req, "dir") + strlen(rn->root) + 1, err);
	json_decref(found);
	json_decref(req);
	if (rc == 0) {
		record_time(rn, p, cb_mono_ms() - t);
		progress(rn, i, w->id, cp->cell->name, p, session, cb_outcome_name(*outcome), cb_mono_ms() - t);
	}
	return rc;
}

/* Session s of round p in every cell, in the round's order (manifest
 * order for round a, reversed for round b). A cell whose session did not
 * pass (failed[c]) runs no later session of the round (its task is X
 * already). Returns as run_cell. */
static int run_session(struct runner *rn, size_t i, const json_t *task, const struct cb_workload *w,
		       enum cb_phase p, int s, const char *task_dir, int failed[CB_NROLES], struct cb_err *err)
{
	int k, rc;

	for (k = 0; k < CB_NROLES; k++) {
		int c = p == CB_PH_ROUND_B ? CB_NROLES - 1 - k : k;
		enum cb_outcome o;

		if (failed[c])
			continue;
		if ((rc = run_cell(rn, i, task, w, c, p, s, task_dir, &o, err)) != 0)
			return rc;
		failed[c] = o != CB_OUT_PASSED;
	}
	return 0;
}

/* After the timer.sessions sessions of round p: while its order is
 * undecided (cb_order_undecided: the candidate's interval straddles a
 * stable gain or regression, or the A/A band is wide against the
 * thresholds), one more session of every cell, interleaved as the round's,
 * up to timer.max_sessions, as Chromium's Pinpoint adds attempts before it
 * calls a difference unknown; by default each adds a worker process per
 * cell, the level that varies. Nothing is added past the deadline (the
 * round ends as it stands), nor after a cell's session did not pass.
 * *record gets what happened, for the task receipt's order (docs/formats.md,
 * "adaptive"): each session added and why, and why no more was. Returns as
 * run_cell. */
static int adapt_round(struct runner *rn, size_t i, const json_t *task, const struct cb_workload *w,
		       enum cb_phase p, const char *task_dir, int failed[CB_NROLES], json_t **record,
		       struct cb_err *err)
{
	const struct cb_manifest *m = rn->ctx.m;
	const int o = p == CB_PH_ROUND_B ? CB_ORDER_B : CB_ORDER_A;
	json_t *added = json_array();
	char why[512], ended[1024], what[256], unfit[900];
	int s, k, rc = 0;

	for (s = (int)m->sessions;; s++) {
		struct cb_task_account acc;
		const char *basis;
		long long need;
		int undecided;

		for (k = 0; k < CB_NROLES && !failed[k]; k++)
			;
		if (k < CB_NROLES) {
			snprintf(ended, sizeof(ended), "after %d sessions: a session of cell %s did not pass", s,
				 m->cells[k].name);
			break;
		}
		if (cb_task_account(task_dir, w->id, m, m->launch_floor, CB_BOOTSTRAP_RESAMPLES, NULL, &acc, err) < 0) {
			rc = -1;
			break;
		}
		undecided = cb_order_undecided(&acc.f, o, why, sizeof(why));
		cb_task_account_release(&acc);
		if (!undecided) {
			snprintf(ended, sizeof(ended), "decided after %d sessions", s);
			break;
		}
		if (s >= m->max_sessions) {
			snprintf(ended, sizeof(ended), "timer.max_sessions (%lld) reached: %s", m->max_sessions, why);
			break;
		}
		snprintf(what, sizeof(what), "an added session %d of round %s of task %s", s + 1, cb_phase_name(p), w->id);
		need = cell_estimate(rn, p, &basis);
		if (!fits(rn, need < 0 ? need : CB_NROLES * need, basis, what, unfit, sizeof(unfit))) {
			snprintf(ended, sizeof(ended), "after %d sessions, not added: %s", s, unfit);
			break;
		}
		snprintf(ended, sizeof(ended), "after %d sessions: %s", s, why);
		json_array_append_new(added, json_pack("{s:i, s:s}", "session", s + 1, "why", ended));
		if ((rc = run_session(rn, i, task, w, p, s + 1, task_dir, failed, err)) != 0)
			break;
	}
	if (rc == 0)
		*record = json_pack("{s:I, s:I, s:o, s:s}", "planned", (json_int_t)m->sessions, "max",
				    (json_int_t)m->max_sessions, "added", added, "ended", ended);
	else
		json_decref(added);
	return rc;
}

/* Run round p of one task: timer.sessions sessions of every cell,
 * interleaved (cells in the round's order, then again), so that slow drift
 * of the device spreads over all cells, then more while the round is
 * undecided (adapt_round, which fills *record). Returns as run_cell. */
static int run_round(struct runner *rn, size_t i, const json_t *task, const struct cb_workload *w,
		     enum cb_phase p, const char *task_dir, json_t **record, struct cb_err *err)
{
	int failed[CB_NROLES] = { 0 }, s, rc;

	for (s = 1; s <= rn->ctx.m->sessions; s++)
		if ((rc = run_session(rn, i, task, w, p, s, task_dir, failed, err)) != 0)
			return rc;
	return adapt_round(rn, i, task, w, p, task_dir, failed, record, err);
}

/* Whether task i is expected to end by the deadline (expect.h: by the
 * --history run, else by the tasks measured so far, else it starts while
 * time is left). One that is not is not started, and said so with its
 * expected time and what that rests on. */
static int task_fits(struct runner *rn, size_t i, const json_t *task, const struct cb_workload *w)
{
	struct cb_expectation e = cb_task_expect(rn->history, &rn->so_far, task);
	char what[256], basis[256], why[1024];

	snprintf(what, sizeof(what), "task %s", w->id);
	cb_expect_describe(&e, basis, sizeof(basis));
	if (fits(rn, e.basis == CB_EXPECT_NONE ? -1 : e.ms, basis, what, why, sizeof(why)))
		return 1;
	if (rn->progress == PROGRESS_LIVE)
		printf("\r\033[K");
	runner_note(rn, json_pack("{s:s, s:s, s:I, s:I, s:s, s:s}", "event", "not-started", "task", w->id, "task_index",
			   (json_int_t)i + 1, "expected_ms", (json_int_t)(e.basis == CB_EXPECT_NONE ? -1 : e.ms), "basis",
			   cb_expect_basis_name(e.basis), "why", why),
	     "not started: %s", why);
	return 0;
}

/* Round b is run when the candidate's round-a topology (at the run's
 * floor) is below the baseline's, or when round a already shows a stable
 * gain or regression (docs/design.md section 6): the task accounted as it stands,
 * by the code that will classify it. */
static int wants_round_b(struct runner *rn, const struct cb_workload *w, const char *task_dir,
			 struct cb_err *err)
{
	const struct cb_manifest *m = rn->ctx.m;
	struct cb_task_account acc;
	int want;

	if (cb_task_account(task_dir, w->id, m, m->launch_floor, CB_BOOTSTRAP_RESAMPLES, NULL, &acc, err) < 0)
		return -1;
	want = !acc.f.harness_code &&
	       ((acc.f.joinable && cb_topology_reduced(&acc.f)) || cb_order_stability(&acc.f, CB_ORDER_A) != 0);
	cb_task_account_release(&acc);
	return want;
}

/* Whether a task's rounds are worth timing after its correctness: not when
 * it failed in every cell (a compiler or corpus that cannot work here, as
 * the real session on a machine without Triton), where no timing could
 * change the verdict (X: baseline incorrect, or its harness failure) and
 * each session would only fail again. */
static int worth_timing(const enum cb_outcome correct[CB_NROLES])
{
	int c;

	for (c = 0; c < CB_NROLES; c++)
		if (correct[c] == CB_OUT_PASSED)
			return 1;
	return 0;
}

/* run --prescreen (docs/design.md section 19): once correctness passed in every
 * cell, the compile-only pass of the benchmark rows (phase screen) in every
 * cell, and the task accounted as it stands, by the code that will
 * classify it: *screened when its binaries are identical in every cell,
 * and its rounds are then not run. Returns as run_cell. */
static int prescreen(struct runner *rn, size_t i, const json_t *task, const struct cb_workload *w,
		     const char *dir, int *screened, struct cb_err *err)
{
	const struct cb_manifest *m = rn->ctx.m;
	struct cb_task_account acc;
	enum cb_outcome o;
	int c, rc, correct = 1;

	*screened = 0;
	if (!rn->prescreen)
		return 0;
	if (cb_task_account(dir, w->id, m, m->launch_floor, CB_BOOTSTRAP_RESAMPLES, NULL, &acc, err) < 0)
		return -1;
	for (c = 0; c < CB_NROLES; c++)
		correct &= acc.f.correct[c];
	cb_task_account_release(&acc);
	for (c = 0; correct && c < CB_NROLES; c++)
		if ((rc = run_cell(rn, i, task, w, c, CB_PH_SCREEN, 1, dir, &o, err)) != 0)
			return rc;
	if (!correct || cb_task_account(dir, w->id, m, m->launch_floor, CB_BOOTSTRAP_RESAMPLES, NULL, &acc, err) < 0)
		return correct ? -1 : 0;
	*screened = acc.f.screened;
	cb_task_account_release(&acc);
	return 0;
}

/* Run one task into its folder and write its receipt. Returns 1 when the
 * deadline kept it from starting (said) or stopped it before a cell
 * (rn->stop says why; --resume redoes the task), 0 when it is done, -1 on
 * caliber's own failure. */
int runner_run_task(struct runner *rn, size_t i, const json_t *task, struct cb_task_result *res,
	     struct cb_err *err)
{
	const struct cb_manifest *m = rn->ctx.m;
	const struct cb_workload *w = &m->workloads[cb_json_int(task, "workload", 0)];
	char *dir = task_dir_of(rn, w);
	char started[32], finished[32];
	long long t0 = cb_mono_ms(), wall_ms;
	struct cb_task_account acc;
	enum cb_outcome correct[CB_NROLES];
	json_t *extra = NULL, *adapted[CB_NORDERS] = { NULL, NULL };
	int c, p, screened, rc = -1;

	rn->stop[0] = '\0';
	for (p = 0; p < CB_NPHASES; p++)
		rn->task_ms[p] = -1;
	if (!task_fits(rn, i, task, w)) {
		free(dir);
		return 1;
	}
	rn->task_t0_ms = t0;
	cb_now_utc(started);
	/* Nothing of the task exists yet: what is where its folder goes (a
	 * link to a folder outside, a forged cells/) was planted, and goes. */
	if (!dir || no_link_at(rn, CB_RUN_TASKS, err) < 0 || fresh_task_folder(rn, w->id, dir, err) < 0)
		goto out;
	for (c = 0; c < CB_NROLES; c++)
		if ((rc = run_cell(rn, i, task, w, c, CB_PH_CORRECTNESS, 1, dir, &correct[c], err)) != 0)
			goto out;
	if ((rc = prescreen(rn, i, task, w, dir, &screened, err)) != 0)
		goto out;
	if (!screened && worth_timing(correct)) {
		if ((rc = run_round(rn, i, task, w, CB_PH_ROUND_A, dir, &adapted[CB_ORDER_A], err)) != 0)
			goto out;
		if ((rc = wants_round_b(rn, w, dir, err)) < 0)
			goto out;
		if (rc && (rc = run_round(rn, i, task, w, CB_PH_ROUND_B, dir, &adapted[CB_ORDER_B], err)) != 0)
			goto out;
	}
	rc = -1;
	cb_now_utc(finished);
	wall_ms = cb_mono_ms() - t0;
	extra = json_pack("{s:s, s:s, s:I, s:{}}", "started", started, "finished", finished, "wall_ns",
			  (json_int_t)wall_ms * 1000000, "orders");
	for (c = 0; extra && c < CB_NORDERS; c++)
		if (adapted[c])
			json_object_set_new(json_object_get(extra, "orders"), c == CB_ORDER_A ? "a" : "b",
					    json_pack("{s:O}", "adaptive", adapted[c]));
	/* The classifier reads the task's evidence only between two checks
	 * against the digests its cells were fixed with. */
	if (cb_fixed_check(&rn->fixed, dir + strlen(rn->root) + 1, err) < 0 ||
	    cb_task_account(dir, w->id, m, m->launch_floor, CB_BOOTSTRAP_RESAMPLES, NULL, &acc, err) < 0)
		goto out;
	rc = cb_fixed_check(&rn->fixed, dir + strlen(rn->root) + 1, err);
	if (rc == 0)
		rc = cb_task_receipt_write(dir, (size_t)cb_json_int(task, "index", (json_int_t)i), w->op, m,
					   m->launch_floor, &acc, extra, res, err);
	cb_task_account_release(&acc);
	if (rc == 0) {
		char *receipt = cb_strdupf("%s/" CB_RUN_TASK, dir + strlen(rn->root) + 1);
		rc = receipt ? cb_fixed_tree(&rn->fixed, receipt, err) : cb_fail(err, "out of memory");
		free(receipt);
	}
	if (rc < 0)
		goto out;
	cb_expect_so_far_add(&rn->so_far, wall_ms, cb_json_int(task, "budget_s", 0));
	rn->done[i] = 1;
	if (rn->progress == PROGRESS_LIVE)
		printf("\r\033[K");
	if (rn->progress != PROGRESS_QUIET)
		runner_note(rn, json_pack("{s:s, s:s, s:s#, s:s, s:s}", "event", "task-done", "task", w->id, "verdict",
				   &res->verdict, (int)1, "code", res->code, "reason", res->reason),
		     "[%zu/%zu] %s: %c %s", i + 1, rn->ntasks, w->id, res->verdict, res->reason);
	rc = 0;
out:
	json_decref(extra);
	json_decref(adapted[CB_ORDER_A]);
	json_decref(adapted[CB_ORDER_B]);
	free(dir);
	return rc;
}
