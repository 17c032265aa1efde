/* runner.c: `caliber run` (docs/design.md section 6): preflights, then the frozen task
 * matrix on one device, serially, into a run root that ends sealed. For
 * each task: correctness in every cell, round a of the benchmark in
 * manifest order, topology, round b in reverse order only when the
 * candidate's topology is below the baseline's, then the task receipt;
 * with --prescreen, a compile-only pass between correctness and round a
 * that leaves a task whose binaries are identical in every cell untimed.
 * By default every request (so every timed session) runs in a worker
 * process of its own, started ahead of its turn (worker.h).
 * With --stop-after or --deadline, no task or cell starts that would end
 * past the deadline by what it is expected to take (expect.h); a task
 * that would not is passed over, and --resume does it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "account/evidence.h"
#include "base/home.h"
#include "account/expect.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "campaign/plan.h"
#include "base/confine.h"
#include "seal/fixed.h"
#include "preflight.h"
#include "base/proc.h"
#include "base/runroot.h"
#include "account/receipt.h"
#include "runner.h"
#include "seal/seal.h"
#include "seal/sign.h"
#include "seal/tidy.h"
#include "ir/topology.h"
#include "worker.h"

/* How progress is shown (docs/design.md section 6, Progress). */
enum progress { PROGRESS_LINES, PROGRESS_LIVE, PROGRESS_JSON, PROGRESS_QUIET };

struct runner {
	struct cb_worker_ctx ctx;
	struct cb_cell_proc procs[CB_NROLES];   /* by manifest order */
	const json_t *tasks;
	const char *root;
	enum progress progress;
	long long t0_ms;                        /* this invocation's start */
	long long task_t0_ms;                   /* the running task's start, for the ETA */
	size_t ntasks;
	unsigned char *done;                    /* per task: its receipt is written */
	const struct cb_history *history;       /* --history, or NULL */
	struct cb_expect_so_far so_far;         /* the tasks of this run root finished so far */
	long long deadline_ms;                  /* CLOCK_MONOTONIC; 0: none */
	long long task_ms[CB_NPHASES];          /* longest cell of each phase in the running task, -1: none yet */
	int prescreen;                          /* run --prescreen */
	struct cb_fixed fixed;                  /* the digests of every cell and task receipt done (fixed.h) */
	json_t *planted;                        /* what was found where a task's folder goes, and removed */
	char stop[768];                         /* why the running task stopped between cells, when it did */
};

/* A line for the user: the event itself with --json-progress (nothing else
 * is written to stdout then), else the text; nothing with --quiet, which
 * prints only errors and the closing verdict line (cb_run_verdicts). */
static void note(const struct runner *rn, json_t *event, const char *fmt, ...) CB_PRINTF(3, 4);
static void note(const struct runner *rn, json_t *event, const char *fmt, ...)
{
	va_list ap;

	if (rn->progress == PROGRESS_JSON) {
		cb_json_print_line(stdout, event);
	} else if (rn->progress == PROGRESS_QUIET) {
		json_decref(event);
	} else {
		json_decref(event);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		printf("\n");
	}
	fflush(stdout);
}

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
	note(rn, json_pack("{s:s, s:s, s:I, s:I, s:s, s:s}", "event", "not-started", "task", w->id, "task_index",
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
static int run_task(struct runner *rn, size_t i, const json_t *task, struct cb_task_result *res,
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
		note(rn, json_pack("{s:s, s:s, s:s#, s:s, s:s}", "event", "task-done", "task", w->id, "verdict",
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

/* --resume: tasks with a receipt are done, and what they took is measured
 * (expect.h); every other one keeps nothing it left behind (moved aside
 * into interrupted/, never reused). */
static int prepare_resume(struct runner *rn, struct cb_task_result *res, struct cb_err *err)
{
	size_t i;

	for (i = 0; i < rn->ntasks; i++) {
		const json_t *task = json_array_get(rn->tasks, i);
		const char *id = cb_json_str(task, "id");
		char *tdir = cb_strdupf("%s/" CB_RUN_TASKS "/%s", rn->root, id);
		char *tjson = tdir ? cb_path_join(tdir, CB_RUN_TASK) : NULL;
		int rc = 0;

		if (!tjson) {
			free(tdir);
			return cb_fail(err, "out of memory");
		}
		if (cb_exists(tjson)) {
			json_t *j = cb_json_load_file(tjson, err);
			json_int_t ns = cb_json_int(j, "wall_ns", -1);

			rc = j ? cb_task_result_from_json(j, tjson, &res[i], err) : -1;
			if (rc == 0 && ns >= 0)
				cb_expect_so_far_add(&rn->so_far, (long long)(ns / 1000000), cb_json_int(task, "budget_s", 0));
			rn->done[i] = rc == 0;
			json_decref(j);
		} else if (!cb_exists(tdir)) {
			/* removed by hand (a task whose evidence was changed): redone */
			rc = cb_fixed_forget(&rn->fixed, tdir + strlen(rn->root) + 1, err);
		} else {
			char *aside = NULL;
			int k;
			char *adir = cb_path_join(rn->root, "interrupted");
			rc = adir ? cb_mkdir_p(adir, 0755, err) : cb_fail(err, "out of memory");
			for (k = 1; rc == 0; k++) {
				free(aside);
				aside = cb_strdupf("%s/%s-%d", adir, id, k);
				if (!aside || !cb_exists(aside))
					break;
			}
			if (rc == 0 && (!aside || rename(tdir, aside) < 0))
				rc = cb_fail(err, "%s: cannot move aside: %s", tdir, strerror(errno));
			/* what its cells fixed moved with it, and is fixed where it went */
			if (rc == 0 && (cb_fixed_forget(&rn->fixed, tdir + strlen(rn->root) + 1, err) < 0 ||
					cb_fixed_tree(&rn->fixed, aside + strlen(rn->root) + 1, err) < 0))
				rc = -1;
			else if (rc == 0)
				note(rn, json_pack("{s:s, s:s, s:s}", "event", "resume-moved-aside", "task", id, "to", aside),
				     "resume: moved the interrupted %s aside to interrupted/%s-%d", id, id, k);
			free(aside);
			free(adir);
		}
		free(tdir);
		free(tjson);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Copy a frozen file into the run root, read-only. */
static int copy_frozen(const char *src, const char *root, const char *name, struct cb_err *err)
{
	char *buf = NULL, *dst = cb_path_join(root, name);
	size_t len;
	int rc = dst ? cb_read_file(src, &buf, &len, err) : cb_fail(err, "out of memory");

	if (rc == 0)
		rc = cb_write_atomic(dst, buf, len, 0444, err);
	free(buf);
	free(dst);
	return rc;
}

/* The run root with the frozen manifest, matrix and inventory in it. It
 * appears whole or not at all (built beside it, then renamed), so a run
 * root that exists can always be resumed. */
static int make_skeleton(const char *manifest, const char *matrix, const char *output, struct cb_err *err)
{
	const char *slash = strrchr(matrix, '/');
	char *inv = cb_strdupf("%.*s/%s", (int)(slash - matrix), matrix, CB_FROZEN_INVENTORY);
	char *tmp = cb_strdupf("%s.tmp.XXXXXX", output);
	struct cb_err ignored;
	int rc = -1, lock = -1;

	if (!inv || !tmp) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_guard_mkdir_parent(&(struct cb_guard){ "--output-root", NULL, NULL }, output, 0755, err) < 0 ||
	    cb_remove_abandoned_temps(output, err) < 0)
		goto out;
	if (cb_mkdtemp_locked(tmp, &lock, err) < 0) {
		cb_prefix(err, "%s: cannot create the run root", output);
		free(tmp);
		tmp = NULL;
		goto out;
	}
	if (copy_frozen(manifest, tmp, CB_RUN_MANIFEST, err) < 0 || copy_frozen(matrix, tmp, CB_RUN_MATRIX, err) < 0 ||
	    copy_frozen(inv, tmp, CB_FROZEN_INVENTORY, err) < 0)
		goto out;
	if (chmod(tmp, 0755) < 0 || rename(tmp, output) < 0) {
		cb_fail(err, "%s: cannot create the run root: %s", output, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (rc < 0 && tmp)
		cb_rm_rf(tmp, &ignored);
	if (lock >= 0)
		close(lock);
	free(inv);
	free(tmp);
	return rc;
}

/* run.json: how this run was started and resumed (sealed with it), with
 * this invocation's scratch folder (so that a resume after a kill removes
 * it), what a resume tidied (tidy.h), how its workers were confined
 * (confine.h), and the shard it ran ("K/N"; NULL: the whole matrix). */
static int record_invocation(const char *root, int argc, char **argv, int resume, const char *shard,
			     const char *scratch, json_t *tidied, const struct cb_confine *confine, struct cb_err *err)
{
	char *path = cb_path_join(root, CB_RUN_RUN), now[32], how[CB_CONFINE_HOW_MAX];
	json_t *j = NULL, *args = json_array(), *inv;
	int i, rc;

	cb_now_utc(now);
	for (i = 0; i < argc; i++)
		json_array_append_new(args, json_string(argv[i]));
	if (resume && path && cb_exists(path))
		j = cb_json_load_file(path, err);
	if (!j) {
		j = cb_receipt_new("caliber.run/1");
		json_object_set_new(j, "invocations", json_array());
	}
	cb_confine_describe(confine, how, sizeof(how));
	inv = json_pack("{s:s, s:o, s:b, s:s, s:s, s:s, s:O, s:s, s:s, s:i}", "started", now, "argv", args, "resume",
			resume, "caliber_version", cb_version(), "caliber_commit", cb_commit(), "scratch", scratch,
			"tidied", tidied, "workers", how, "confinement", cb_confine_mode_name(confine->mode),
			"landlock_abi", confine->abi);
	if (shard)
		json_object_set_new(inv, "shard", json_string(shard));
	json_array_append_new(json_object_get(j, "invocations"), inv);
	rc = path ? cb_receipt_write(path, j, err) : cb_fail(err, "out of memory");
	json_decref(j);
	free(path);
	return rc;
}

/* --resume runs as the run started: with --prescreen when its first
 * invocation (run.json) had it, else without, so that the campaign receipt
 * can say which of the two the run was. */
static int same_prescreen(const char *root, int prescreen, struct cb_err *err)
{
	char *path = cb_path_join(root, CB_RUN_RUN);
	json_t *j = path ? cb_json_load_file(path, err) : NULL;
	const json_t *args = json_object_get(json_array_get(json_object_get(j, "invocations"), 0), "argv"), *a;
	size_t i;
	int first = 0, rc = -1;

	if (!path)
		cb_fail(err, "out of memory");
	else if (j) {
		json_array_foreach(args, i, a)
			first |= json_is_string(a) && strcmp(json_string_value(a), "--prescreen") == 0;
		rc = first == prescreen ? 0 : cb_fail(err, "--resume: %s started %s --prescreen; resume it the same way",
						       root, first ? "with" : "without");
	}
	json_decref(j);
	free(path);
	return rc;
}

/* The manifest's timer for the campaign receipt, which holds no reals:
 * throttle_floor as throttle_floor_ppm, sessions and max_sessions as run. */
static json_t *timer_json(const struct cb_manifest *m)
{
	json_t *t = json_deep_copy(json_object_get(m->doc, "timer"));

	json_object_del(t, "throttle_floor");
	json_object_set_new(t, "throttle_floor_ppm", json_integer(cb_ppm(m->throttle_floor)));
	json_object_set_new(t, "sessions", json_integer(m->sessions));
	json_object_set_new(t, "max_sessions", json_integer(m->max_sessions));
	return t;
}

/* Remove the run's folder of worker slots (worker.h, CB_SLOTS_DIR),
 * which is never sealed: empty when every worker has gone, but for what a
 * worker wrote into its slot after its last request, or what workers of
 * a killed caliber left; each such slot is named in changes. */
static int remove_slots(const char *root, json_t *changes, struct cb_err *err)
{
	char *slots = cb_path_join(root, CB_SLOTS_DIR), **names = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (!slots)
		return cb_fail(err, "out of memory");
	if (cb_is_dir(slots) && cb_list_dir(slots, &names, &n, err) < 0)
		rc = -1;
	for (i = 0; rc == 0 && i < n; i++) {
		char *what = cb_strdupf(CB_SLOTS_DIR "/%s: the slot of a worker that is gone, removed", names[i]);
		if (!what || json_array_append_new(changes, json_string(what)) < 0)
			rc = cb_fail(err, "out of memory");
		free(what);
	}
	if (rc == 0 && cb_exists(slots))
		rc = cb_rm_rf(slots, err);
	cb_strv_free(names, n);
	free(slots);
	return rc;
}

/* Before the seal: what a worker left outside its own cell folder (which
 * is tidied when the cell ends) that a seal cannot hold is taken out of
 * the whole root (tidy.h), said, and added to this invocation's "tidied"
 * in run.json, so that a run always ends sealed. No cell is blamed: the
 * tree does not say which worker put it there. */
static int tidy_before_seal(const struct runner *rn, struct cb_err *err)
{
	char *path = cb_path_join(rn->root, CB_RUN_RUN);
	json_t *changes = json_array(), *j = NULL, *invs, *tidied;
	size_t i;
	int rc = -1;

	if (!path || !changes) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (json_array_extend(changes, rn->planted) < 0 || remove_slots(rn->root, changes, err) < 0 ||
	    cb_tidy_tree(rn->root, changes, err) < 0)
		goto out;
	rc = 0;
	if (!json_array_size(changes))
		goto out;
	for (i = 0; i < json_array_size(changes); i++)
		note(rn, json_pack("{s:s, s:s}", "event", "tidied", "what", json_string_value(json_array_get(changes, i))),
		     "tidied: %s", json_string_value(json_array_get(changes, i)));
	rc = -1;
	if (!(j = cb_json_load_file(path, err)))
		goto out;
	invs = json_object_get(j, "invocations");
	tidied = json_object_get(json_array_get(invs, json_array_size(invs) - 1), "tidied");
	if (!json_is_array(tidied) || json_array_extend(tidied, changes) < 0)
		cb_fail(err, "%s: no invocation to add what was tidied to", path);
	else
		rc = cb_receipt_write(path, j, err);
out:
	json_decref(j);
	json_decref(changes);
	free(path);
	return rc;
}

/* How the worker processes lived, for the campaign receipt: the mode, how
 * many each cell kept started ahead, and what the outer level of the
 * bootstrap samples under that mode (docs/formats.md, "Statistics"). */
static json_t *worker_json(const struct cb_worker_ctx *ctx)
{
	static const char *const unit[] = { "worker-process", "session-in-persistent-process", "worker-process" };

	return json_pack("{s:s, s:i, s:s, s:s}", "mode", cb_worker_mode_name(ctx->mode), "prestart", ctx->prestart,
			 "session_unit", unit[ctx->mode], "preload", ctx->preload);
}

/* The campaign receipt; a shard's also names its shard (shard.h). */
static int write_campaign(struct runner *rn, struct cb_preflight *pf, const struct cb_task_result *res,
			  const char *selection, const struct cb_shard *shard, struct cb_err *err)
{
	const struct cb_manifest *m = rn->ctx.m;
	char *path = cb_path_join(rn->root, CB_RUN_CAMPAIGN), *mx = cb_path_join(rn->root, CB_RUN_MATRIX);
	char msha[CB_SHA256_HEX], now[32];
	json_t *j = cb_receipt_new(CB_CAMPAIGN_SCHEMA), *tasks = json_array(), *counts = json_object(),
	       *plan = json_array(), *cells = json_object(), *inv = NULL;
	size_t i;
	int rc;

	cb_now_utc(now);
	for (i = 0; i < rn->ntasks; i++) {
		char v[2] = { res[i].verdict, 0 };
		json_array_append_new(tasks, cb_task_result_json(&res[i]));
		json_object_set_new(counts, v, json_integer(cb_json_int(counts, v, 0) + 1));
	}
	for (i = 0; i < rn->ctx.nplugins; i++)
		json_array_append_new(plan, json_string(rn->ctx.plugins[i]));
	if (!path || !mx || cb_sha256_file(mx, msha, err) < 0) {
		if (!path || !mx)
			cb_fail(err, "out of memory");
		free(path);
		free(mx);
		json_decref(j);
		json_decref(tasks);
		json_decref(counts);
		json_decref(plan);
		json_decref(cells);
		return -1;
	}
	inv = json_deep_copy(json_object_get(m->doc, "sources"));
	json_object_set_new(j, "campaign", json_string(m->campaign));
	json_object_set_new(j, "selection", json_string(selection));
	json_object_set_new(j, "manifest_sha256", json_string(m->sha256));
	json_object_set_new(j, "matrix_sha256", json_string(msha));
	json_object_set_new(j, "inventory_sha256", json_string(cb_json_str(pf->matrix, "inventory_sha256")));
	json_object_set_new(j, "sources", inv);
	for (i = 0; i < CB_NROLES; i++)
		json_object_set_new(cells, m->cells[i].name, cb_worker_compiler_json(&rn->ctx, &m->cells[i]));
	json_object_set_new(j, "roots", json_pack("{s:s, s:s, s:s, s:o}", "compiler", rn->ctx.build_root, "corpus",
						  rn->ctx.corpus, "harness", cb_home(), "cells", cells));
	json_object_set_new(j, "device", json_pack("{s:s, s:s, s:O}", "backend", rn->ctx.backend->name,
		rn->ctx.backend->visibility_env, rn->ctx.device, "manifest", json_object_get(m->doc, "device")));
	json_object_set_new(j, "timer", timer_json(m));
	json_object_set_new(j, "bootstrap", json_pack("{s:i}", "resamples", CB_BOOTSTRAP_RESAMPLES));
	json_object_set_new(j, "plan", plan);
	json_object_set_new(j, "worker", worker_json(&rn->ctx));
	json_object_set_new(j, "prescreen", json_boolean(rn->prescreen));
	json_object_set_new(j, "preflight", json_incref(pf->results));
	json_object_set_new(j, "launch_floor", json_integer(m->launch_floor));
	json_object_set_new(j, "thresholds", json_pack("{s:I, s:I, s:I}", "gain_ppm", (json_int_t)cb_ppm(m->gain),
		"regression_ppm", (json_int_t)cb_ppm(m->regression), "confidence_ppm", (json_int_t)cb_ppm(m->confidence)));
	json_object_set_new(j, "production_default_policy", json_string(m->policy));
	json_object_set_new(j, "status", json_string("complete"));
	json_object_set_new(j, "finished", json_string(now));
	json_object_set_new(j, "verdicts", counts);
	json_object_set_new(j, "tasks", tasks);
	rc = 0;
	if (shard->n) {
		json_t *sh = cb_shard_receipt(shard, rn->tasks, rn->root, err);
		rc = sh ? json_object_set_new(j, "shard", sh) : -1;
	}
	if (rc == 0)
		rc = cb_receipt_write(path, j, err);
	json_decref(j);
	free(path);
	free(mx);
	return rc;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil), so that a UTC time needs no timegm. */
static long long days_from_civil(long long y, long long m, long long d)
{
	long long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The run's deadline on the monotonic clock, from --stop-after S (S
 * seconds after this invocation started) and --deadline TIME (a UTC time,
 * YYYY-MM-DDTHH:MM:SSZ); the earlier of the two when both are given. */
static int set_deadline(struct runner *rn, long long stop_after, const char *when, struct cb_err *err)
{
	if (stop_after < 0)
		return cb_fail(err, "--stop-after: '%lld' is not a number of seconds >= 0", stop_after);
	if (stop_after > 0)
		rn->deadline_ms = rn->t0_ms + stop_after * 1000;
	if (when) {
		int y, mo, d, h, mi, sec, n = 0;
		long long at_ms;
		if (sscanf(when, "%4d-%2d-%2dT%2d:%2d:%2dZ%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 ||
		    (size_t)n != strlen(when) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
			return cb_fail(err, "--deadline: '%s' is not a UTC time YYYY-MM-DDTHH:MM:SSZ", when);
		at_ms = ((days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60000LL + sec * 1000LL;
		at_ms = cb_mono_ms() + (at_ms - (long long)time(NULL) * 1000);
		if (!rn->deadline_ms || at_ms < rn->deadline_ms)
			rn->deadline_ms = at_ms;
	}
	return 0;
}

int cb_run_verdicts(const char *root, int json, int gate_x, struct cb_err *err)
{
	struct cb_campaign_summary cs;
	char line[96];
	int rc;

	if (cb_campaign_summary_of_run(root, &cs, err) < 0)
		return CB_EXIT_FAIL;
	cb_campaign_verdict_line(&cs, line);
	if (json)
		cb_json_print_line(stdout, json_pack("{s:s, s:s, s:o}", "event", "verdicts", "line", line, "report",
						     json_sprintf("%s/matrix.md", root)));
	else
		printf("%s\nreport: %s/matrix.md (caliber report %s -o report.html: the HTML report)\n", line, root, root);
	fflush(stdout);
	rc = gate_x && cb_campaign_check_x(&cs, err) < 0 ? CB_EXIT_GATE : CB_EXIT_OK;
	cb_campaign_summary_release(&cs);
	return rc;
}

/* The files at the top of a run root that runner steps write, which the
 * check before the seal takes as they are (fixed.h): the frozen inputs,
 * run.json, the ledger, the campaign receipt and the verdict matrix. */
static const char *const runner_files[] = {
	CB_RUN_MANIFEST, CB_RUN_MATRIX, CB_FROZEN_INVENTORY, CB_RUN_RUN, CB_FIXED_FILE, CB_RUN_CAMPAIGN,
	CB_RUN_MATRIX_CSV, CB_RUN_MATRIX_MD, NULL
};

int cb_run(const struct cb_run_opts *o, struct cb_err *err)
{
	struct runner rn;
	struct cb_manifest m;
	struct cb_backend backend;
	struct cb_preflight pf;
	struct cb_history history;
	struct cb_confine confine;
	struct cb_task_result *res = NULL;
	const char *manifest = o->manifest, *matrix = o->matrix, *output = o->output;
	char fail_set[8] = "", digest[CB_SHA256_HEX], shard[32];
	json_t *dealt = NULL, *mx = NULL, *tidied = json_array();
	struct cb_err bind_err = CB_ERR_INIT;
	size_t i, ndone = 0;
	int c, rc;

	memset(&rn, 0, sizeof(rn));
	rn.planted = json_array();
	memset(&m, 0, sizeof(m));
	memset(&backend, 0, sizeof(backend));
	memset(&pf, 0, sizeof(pf));
	memset(&history, 0, sizeof(history));
	rn.t0_ms = cb_mono_ms();
	rn.prescreen = o->prescreen;
	rn.progress = o->quiet ? PROGRESS_QUIET : o->json_progress ? PROGRESS_JSON
				: isatty(STDOUT_FILENO) ? PROGRESS_LIVE : PROGRESS_LINES;
	for (c = 0; c < CB_NPHASES; c++)
		rn.task_ms[c] = -1;
	if (cb_fail_on_parse(o->fail_on, fail_set, err) < 0 || set_deadline(&rn, o->stop_after, o->deadline, err) < 0) {
		rc = CB_EXIT_USAGE;
		goto out;
	}
	rc = CB_EXIT_FAIL;
	cb_confine_probe(o->confinement, &confine);
	if (cb_become_subreaper(err) < 0 || cb_manifest_load(manifest, &m, err) < 0 ||
	    cb_backend_load(o->backends, m.backend, &backend, err) < 0)
		goto out;
	/* A history that cannot be trusted is refused before anything runs:
	 * the user asked to plan by it. */
	if (o->history) {
		if (cb_history_load(o->history, m.campaign, "--history", &history, err) < 0)
			goto out;
		rn.history = &history;
	}
	if (o->resume && cb_is_sealed(output)) {
		/* Killed while sealing, or simply done: finish and say so. */
		if (cb_seal_finish(output, err) < 0 || cb_verify_or_fail(output, err) < 0)
			goto out;
		note(&rn, json_pack("{s:s, s:s}", "event", "already-sealed", "root", output),
		     "run: %s is already complete and sealed; nothing to resume", output);
		rc = cb_run_verdicts(output, rn.progress == PROGRESS_JSON, !o->shard.n, err);
		goto out;
	}
	/* The matrix is loaded and bound once, here: each cell that names its
	 * own compiler runs it where the matrix says, the binding check reports
	 * how the binding went, and the tasks run are this matrix's. */
	mx = cb_matrix_load_bound(matrix, &m, &bind_err);
	if (cb_worker_ctx_init(&rn.ctx, &m, &backend, o->corpus, o->build_root, o->device, o->python, o->worker,
			       o->workers, o->prestart, err) < 0 || cb_worker_ctx_compilers(&rn.ctx, mx, err) < 0)
		goto out;

	pf.w = &rn.ctx;
	pf.manifest_path = manifest;
	pf.matrix_path = matrix;
	pf.matrix = mx;
	pf.bind_err = &bind_err;
	pf.output_root = output;
	pf.python = o->python;
	pf.resume = o->resume;
	pf.allow_dirty_harness = o->allow_dirty;
	pf.shard = &o->shard;
	pf.confine = &confine;
	pf.require_confinement = o->require_confinement;
	pf.json = rn.progress == PROGRESS_JSON;
	pf.quiet = rn.progress == PROGRESS_QUIET;
	if (cb_preflight_run(&pf, stdout) > 0) {
		cb_fail(err, "preflight refused the batch: %zu check%s failed (%s); nothing was written", pf.failed,
			pf.failed == 1 ? "" : "s", pf.failed_names);
		rc = CB_EXIT_PREFLIGHT;
		goto out;
	}
	if (o->preflight_only) {
		rc = CB_EXIT_OK;
		goto out;
	}

	rn.root = output;
	rn.tasks = json_object_get(mx, "tasks");
	if (o->shard.n) {
		cb_shard_name(&o->shard, shard);
		if (!(dealt = cb_shard_tasks(rn.tasks, &o->shard, err))) {
			cb_prefix(err, "--shard %s", shard);
			goto out;
		}
		rn.tasks = dealt;
	}
	rn.ntasks = json_array_size(rn.tasks);
	res = calloc(rn.ntasks ? rn.ntasks : 1, sizeof(*res));
	rn.done = calloc(rn.ntasks ? rn.ntasks : 1, 1);
	if (!res || !rn.done)
		goto out;
	if (!o->resume) {
		if (make_skeleton(manifest, matrix, output, err) < 0)
			goto out;
	} else if (!tidied || remove_slots(output, tidied, err) < 0 ||
		   cb_tidy_resume(output, CB_SCRATCH_PREFIX, tidied, err) < 0) {
		goto out;
	}
	if (cb_fixed_open(&rn.fixed, output, o->resume, err) < 0 || (o->resume && prepare_resume(&rn, res, err) < 0))
		goto out;
	if (cb_worker_ctx_confine(&rn.ctx, cb_confine_code(&confine), output, err) < 0)
		goto out;
	for (i = 0; i < rn.ntasks; i++)
		ndone += rn.done[i];
	for (i = 0; i < json_array_size(tidied); i++)
		note(&rn, json_pack("{s:s, s:s}", "event", "resume-tidied", "what", json_string_value(json_array_get(tidied, i))),
		     "resume: %s", json_string_value(json_array_get(tidied, i)));
	if ((o->resume && same_prescreen(output, o->prescreen, err) < 0) ||
	    record_invocation(output, o->argc, o->argv, o->resume, o->shard.n ? shard : NULL, rn.ctx.scratch, tidied,
			      &confine, err) < 0)
		goto out;
	for (c = 0; c < CB_NROLES; c++) {
		rn.procs[c].cell = &m.cells[c];
		if (ndone < rn.ntasks && cb_cell_proc_prestart(&rn.ctx, &rn.procs[c], err) < 0)
			goto out;
	}
	for (i = 0; i < rn.ntasks; i++) {
		int t = rn.done[i] ? 0 : run_task(&rn, i, json_array_get(rn.tasks, i), &res[i], err);
		if (t < 0)
			goto out;
		if (t > 0 && rn.stop[0]) {
			if (rn.progress == PROGRESS_LIVE)
				printf("\r\033[K");
			note(&rn, json_pack("{s:s, s:s, s:s}", "event", "not-finished", "task",
					    cb_json_str(json_array_get(rn.tasks, i), "id"), "why", rn.stop),
			     "not finished: %s; --resume redoes the task", rn.stop);
		}
	}
	for (ndone = 0, i = 0; i < rn.ntasks; i++)
		ndone += rn.done[i];
	if (ndone < rn.ntasks) {
		char why[64];
		snprintf(why, sizeof(why), "%zu not done before the deadline", rn.ntasks - ndone);
		note(&rn, json_pack("{s:s, s:I, s:I, s:s}", "event", "stopped", "tasks_done", (json_int_t)ndone,
				    "tasks", (json_int_t)rn.ntasks, "why", why),
		     "stopped after %zu of %zu tasks: %s; continue with --resume", ndone, rn.ntasks, why);
		if (rn.progress == PROGRESS_QUIET)
			fprintf(stderr, "caliber: run: stopped after %zu of %zu tasks: %s; continue with --resume\n",
				ndone, rn.ntasks, why);
		rc = CB_EXIT_STOPPED;
		goto out;
	}
	for (c = 0; c < CB_NROLES; c++)
		cb_cell_proc_stop(&rn.procs[c]);
	/* What the last workers left goes before anything is sealed. */
	if (cb_reap_strays(0, NULL, err) < 0 || tidy_before_seal(&rn, err) < 0 ||
	    write_campaign(&rn, &pf, res, cb_json_str(mx, "selection"), &o->shard, err) < 0 ||
	    cb_write_verdict_matrix(output, res, rn.ntasks, err) < 0 ||
	    cb_fixed_check_run(&rn.fixed, runner_files, err) < 0 || cb_seal_signed(output, o->sign_key, err) < 0 ||
	    cb_seal_digest(output, digest, err) < 0)
		goto out;
	note(&rn, json_pack("{s:s, s:I, s:s}", "event", "sealed", "tasks", (json_int_t)rn.ntasks, "root", output),
	     "run: %zu tasks, sealed %s", rn.ntasks, output);
	note(&rn, json_pack("{s:s, s:s, s:b}", "event", "seal-digest", "sha256", digest, "signed", o->sign_key != NULL),
	     "run: seal: SHA256SUMS sha256 %s%s (record it elsewhere to anchor the run)", digest,
	     o->sign_key ? ", signed in " CB_SIG_FILE : "");
	/* A shard's X is judged in the merged run (--devices, caliber merge):
	 * a shard that exits 5 would keep the merge from running. */
	rc = cb_run_verdicts(output, rn.progress == PROGRESS_JSON, !o->shard.n, err);
	if (rc == CB_EXIT_OK && fail_set[0]) {
		struct cb_gate g;
		cb_gate_init(&g, o->fail_on, fail_set);
		for (i = 0; i < rn.ntasks && rc == CB_EXIT_OK; i++)
			if (cb_gate_add(&g, res[i].id, res[i].verdict, err) < 0)
				rc = CB_EXIT_FAIL;
		if (rc == CB_EXIT_OK && cb_gate_judge(&g, err) < 0)
			rc = CB_EXIT_GATE;
		cb_gate_release(&g);
	}
out:
	for (c = 0; c < CB_NROLES; c++)
		cb_cell_proc_release(&rn.procs[c]);
	cb_fixed_release(&rn.fixed);
	json_decref(rn.planted);
	for (i = 0; res && i < rn.ntasks; i++)
		cb_task_result_release(&res[i]);
	free(res);
	free(rn.done);
	cb_history_release(&history);
	json_decref(dealt);
	cb_worker_ctx_release(&rn.ctx);
	json_decref(mx);
	json_decref(pf.results);
	json_decref(tidied);
	cb_backend_release(&backend);
	cb_manifest_release(&m);
	return rc;
}
