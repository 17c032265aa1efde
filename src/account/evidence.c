/* evidence.c: a task's cell folders turned into the classifier's facts. */
#include "evidence.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/runroot.h"
#include "seal/seal.h"

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

/* Read one cell receipt's outcome, and its detail into a fresh string; a
 * missing receipt means not run. */
static void load_outcome(const char *cell_dir, enum cb_outcome *o, char **detail)
{
	char *path = cb_path_join(cell_dir, CB_RUN_CELL);
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

/* Round p of cell into ev: its sessions in order, session 1 from the cell
 * folder, then each later session folder that exists. The first session
 * that did not pass (or left timing.jsonl unreadable) ends the list, and
 * its outcome, "session k: " before the detail, is the cell's; otherwise
 * the cell passed with every session's timing. first_passed tells whether
 * session 1 passed (its IR is the cell's topology). -1: out of memory. */
static int load_round(struct cb_task_evidence *ev, const char *task_dir, enum cb_phase p,
		      const struct cb_cell *cell, int *first_passed)
{
	const int o = p == CB_PH_ROUND_A ? CB_ORDER_A : CB_ORDER_B;
	const enum cb_role r = cell->role;
	int k;

	for (k = 1;; k++) {
		char *dir = cb_session_dir(task_dir, p, cell->name, k), *tp = NULL, *detail = NULL;
		enum cb_outcome out;
		struct cb_timing *more;
		struct cb_err e2;

		if (!dir)
			return -1;
		if (k > 1 && !cb_is_dir(dir)) {
			free(dir);
			return 0;
		}
		load_outcome(dir, &out, &detail);
		if (detail && out == CB_OUT_PASSED) {
			more = realloc(ev->timing[o][r], (size_t)k * sizeof(*more));
			tp = cb_path_join(dir, CB_RUN_TIMING);
			if (more)
				ev->timing[o][r] = more;
			if (!more || !tp) {
				free(detail);
				free(tp);
				free(dir);
				return -1;
			}
			if (cb_timing_load(tp, &more[k - 1], &e2) < 0) {
				out = CB_OUT_MISSING_OUTPUT;
				free(detail);
				detail = strdup(e2.msg);
			} else {
				ev->nsessions[o][r] = (size_t)k;
			}
		}
		free(tp);
		free(dir);
		if (k == 1)
			*first_passed = out == CB_OUT_PASSED;
		if (!detail)
			return -1;
		if (k == 1 || out != CB_OUT_PASSED) {
			free(ev->detail[p][r]);
			ev->outcome[p][r] = out;
			ev->detail[p][r] = k == 1 ? detail : cb_strdupf("session %d: %s", k, detail);
			if (k > 1)
				free(detail);
			if (!ev->detail[p][r])
				return -1;
		} else {
			free(detail);
		}
		if (out != CB_OUT_PASSED)
			return 0;
	}
}

/* id for the cells of one phase, measured above floor; a cell without a
 * topology (have[r] 0) leaves it unknown. */
static int compare_set(const int have[CB_NROLES], const struct cb_topology topo[CB_NROLES],
		       const struct cb_identity_cell cells[CB_NROLES], long long floor, const struct cb_manifest *m,
		       struct cb_identity *id, struct cb_err *err)
{
	int r;

	cb_identity_release(id);
	for (r = 0; r < CB_NROLES; r++)
		if (!have[r]) {
			id->reason = cb_strdupf("cell %s: no topology to join its binaries to",
						cb_manifest_cell(m, (enum cb_role)r)->name);
			return id->reason ? 0 : cb_fail(err, "out of memory");
		}
	return cb_identity_compare(cells, topo, floor, m, id, err);
}

/* ev->identity at floor (a screen's at 0: every kernel it launched). */
static int compare_cells(struct cb_task_evidence *ev, const struct cb_manifest *m, long long floor,
			 struct cb_err *err)
{
	return compare_set(ev->have_topology, ev->topology, ev->idcell, ev->from_screen ? 0 : floor, m, &ev->identity,
			   err);
}

/* Whether every cell's phase p ended with outcome o. */
static int all_cells(const struct cb_task_evidence *ev, enum cb_phase p, enum cb_outcome o)
{
	int r;

	for (r = 0; r < CB_NROLES; r++)
		if (ev->outcome[p][r] != o)
			return 0;
	return 1;
}

/* The cells of phase p: with topo, their topology scanned at floor (have[r]
 * says which were, errs[r] why not), and their binaries into cells. -1
 * only when out of memory. */
static int load_cells(const char *task_dir, const struct cb_manifest *m, enum cb_phase p, long long floor,
		      const struct cb_ttgir_counts *pre, struct cb_topology *topo, int *have, char **errs,
		      struct cb_identity_cell *cells, struct cb_err *err)
{
	int c;

	for (c = 0; c < CB_NROLES; c++) {
		enum cb_role r = m->cells[c].role;
		char *dir = cb_cell_dir(task_dir, p, m->cells[c].name);
		struct cb_err e2;
		int rc = dir ? 0 : -1;

		if (rc == 0 && topo) {
			if (cb_topology_scan_counted(dir, m->topology_op, floor, pre, &topo[r], &e2) == 0)
				have[r] = 1;
			else if (!(errs[r] = strdup(e2.msg)))
				rc = -1;
		}
		if (rc == 0)
			rc = cb_identity_cell_load(dir, &cells[r], err);
		free(dir);
		if (rc < 0)
			return cb_fail(err, "out of memory");
	}
	return 0;
}

/* The identity of the cells whose IR is the topology (evidence.h): round
 * a's first sessions; or, when no round ran and the screen passed in every
 * cell, the screen's, whose topology then replaces round a's (scanned at
 * the floor), and whose identity counts every kernel it launched. A task
 * screened and then timed keeps the screen's identity apart (why it was
 * timed). -1 only when out of memory. */
static int load_identity(struct cb_task_evidence *ev, const char *task_dir, const struct cb_manifest *m,
			 long long floor, const struct cb_ttgir_counts *pre, struct cb_err *err)
{
	const int screened = all_cells(ev, CB_PH_SCREEN, CB_OUT_PASSED);
	char *errs[CB_NROLES] = { NULL, NULL, NULL };
	int rc, r;

	ev->from_screen = screened && all_cells(ev, CB_PH_ROUND_A, CB_OUT_NOT_RUN);
	if (ev->from_screen)
		rc = load_cells(task_dir, m, CB_PH_SCREEN, floor, pre, ev->topology, ev->have_topology,
				ev->topology_error, ev->idcell, err);
	else
		rc = load_cells(task_dir, m, CB_PH_ROUND_A, floor, pre, NULL, NULL, NULL, ev->idcell, err);
	if (rc < 0 || compare_cells(ev, m, floor, err) < 0)
		return -1;
	if (!screened || ev->from_screen)
		return 0;
	ev->have_screen = 1;
	rc = load_cells(task_dir, m, CB_PH_SCREEN, 0, pre, ev->screen_topology, ev->have_screen_topology, errs,
			ev->screen_cells, err);
	for (r = 0; r < CB_NROLES; r++)
		free(errs[r]);
	return rc < 0 ? -1 : compare_set(ev->have_screen_topology, ev->screen_topology, ev->screen_cells, 0, m,
					  &ev->screen_identity, err);
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
			int first_passed = 0, rc;

			if (!dir) {
				cb_evidence_release(ev);
				return cb_fail(err, "out of memory");
			}
			if (p == CB_PH_CORRECTNESS || p == CB_PH_SCREEN) {
				load_outcome(dir, &ev->outcome[p][r], &ev->detail[p][r]);
				rc = ev->detail[p][r] ? 0 : -1;
			} else {
				rc = load_round(ev, task_dir, (enum cb_phase)p, cell, &first_passed);
			}
			if (rc == 0 && p == CB_PH_ROUND_A && first_passed) {
				if (cb_topology_scan_counted(dir, m->topology_op, floor, pre, &ev->topology[r],
							     &e2) == 0)
					ev->have_topology[r] = 1;
				else if (!(ev->topology_error[r] = strdup(e2.msg)))
					rc = -1;
			}
			free(dir);
			if (rc < 0) {
				cb_evidence_release(ev);
				return cb_fail(err, "out of memory");
			}
		}
	}
	if (load_identity(ev, task_dir, m, floor, pre, err) < 0) {
		cb_evidence_release(ev);
		return -1;
	}
	for (c = 0; c < CB_NROLES; c++)
		if (cb_cell_kernels_load(task_dir, m->cells[c].name, &ev->kernels[m->cells[c].role], err) < 0) {
			cb_evidence_release(ev);
			return -1;
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
	static const char *const fixed[] = { CB_RUN_TASKS, NULL, CB_RUN_CELLS, NULL, "ir", NULL };
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

int cb_evidence_rescope(struct cb_task_evidence *ev, const struct cb_manifest *m, long long floor,
			struct cb_err *err)
{
	int r;

	for (r = 0; r < CB_NROLES; r++)
		if (ev->have_topology[r])
			cb_topology_rescope(&ev->topology[r], floor);
	return compare_cells(ev, m, floor, err);
}

void cb_evidence_release(struct cb_task_evidence *ev)
{
	int o, r;

	if (!ev)
		return;
	cb_identity_release(&ev->identity);
	cb_identity_release(&ev->screen_identity);
	for (r = 0; r < CB_NROLES; r++) {
		cb_identity_cell_release(&ev->idcell[r]);
		cb_identity_cell_release(&ev->screen_cells[r]);
		cb_topology_release(&ev->screen_topology[r]);
		cb_topology_release(&ev->topology[r]);
		cb_cell_kernels_release(&ev->kernels[r]);
		free(ev->topology_error[r]);
		for (o = 0; o < CB_NORDERS; o++) {
			size_t k;
			for (k = 0; k < ev->nsessions[o][r]; k++)
				cb_timing_release(&ev->timing[o][r][k]);
			free(ev->timing[o][r]);
		}
		for (o = 0; o < CB_NPHASES; o++)
			free(ev->detail[o][r]);
	}
	free(ev->dir);
	free(ev->task);
	memset(ev, 0, sizeof(*ev));
}

/* Rank of a harness problem: the order in which the X row of the verdict
 * table (docs/design.md section 10.3) lists them. The screen is none: one
 * that did not pass screens nothing out, and its task is timed. */
static int harness_rank(enum cb_outcome o, int phase)
{
	if (phase == CB_PH_SCREEN)
		return 0;
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

/* The first harness problem by the spec's order, phases and cells in run
 * order; the rounds of a screened task were not run, by design. */
static void find_harness(const struct cb_task_evidence *ev, const struct cb_manifest *m,
			 struct cb_facts *f)
{
	int best = 0, p, c;

	for (p = 0; p < CB_NPHASES; p++)
		for (c = 0; c < CB_NROLES; c++) {
			enum cb_role r = m->cells[c].role;
			int rank = f->screened && p == CB_PH_ROUND_A ? 0 : harness_rank(ev->outcome[p][r], p);
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

/* The rows one order compares: the baseline's first session gives them
 * and their order; every session of every cell must have timed each of
 * them with the same timer. A row found throttled in any session of any
 * cell is left out of the order (docs/design.md section 6), in all three cells alike.
 * at[r][i * nsessions + k] are the samples of row i in session k of role r. */
struct order_rows {
	const char **names;                     /* [n] */
	struct cb_samples *at[CB_NROLES];
	size_t nsessions[CB_NROLES];
	size_t n, throttled;
};

static void order_rows_release(struct order_rows *rows)
{
	int r;

	free(rows->names);
	for (r = 0; r < CB_NROLES; r++)
		free(rows->at[r]);
	memset(rows, 0, sizeof(*rows));
}

/* A harness failure in f with the given reason (owned; NULL: out of
 * memory). Returns 1, or -1 with err set when reason is NULL. */
static int order_fails(struct cb_facts *f, char *reason, struct cb_err *err)
{
	if (!reason)
		return cb_fail(err, "out of memory");
	f->harness_code = "harness-failure";
	free(f->harness_reason);
	f->harness_reason = reason;
	return 1;
}

/* A row's timer_reason as a message quotes it. */
static const char *reason_or_none(const char *reason)
{
	return reason && *reason ? reason : "no reason recorded";
}

/* " (session k)" for k > 1 (0-based index k - 1 given), "" for the first. */
static void session_suffix(size_t k, char out[32])
{
	if (k)
		snprintf(out, 32, " (session %zu)", k + 1);
	else
		out[0] = '\0';
}

/* Fill rows for order o. Returns 0 when built, 1 when the rows do not
 * match across cells and sessions (a harness failure, reported through
 * f), -1 on failure (out of memory). */
static int order_rows_build(const struct cb_task_evidence *ev, const struct cb_manifest *m, int o,
			    struct order_rows *rows, struct cb_facts *f, struct cb_err *err)
{
	const struct cb_timing *t1 = &ev->timing[o][CB_ROLE_BASELINE][0];
	const char *round = o ? "b" : "a";
	size_t i, k, keep = 0;
	int r;

	memset(rows, 0, sizeof(*rows));
	rows->names = calloc(t1->n ? t1->n : 1, sizeof(*rows->names));
	for (r = 0; r < CB_NROLES; r++) {
		rows->nsessions[r] = ev->nsessions[o][r];
		rows->at[r] = calloc(t1->n * rows->nsessions[r] + 1, sizeof(*rows->at[r]));
		if (!rows->at[r])
			return cb_fail(err, "out of memory");
	}
	if (!rows->names)
		return cb_fail(err, "out of memory");
	for (r = 0; r < CB_NROLES; r++)
		for (k = 0; k < rows->nsessions[r]; k++) {
			const struct cb_timing *t = &ev->timing[o][r][k];
			char sfx[32];

			session_suffix(k, sfx);
			if (t->n != t1->n)
				return order_fails(f, cb_strdupf("round %s: baseline has %zu timing rows, %s%s has %zu",
								 round, t1->n, role_cell_name(m, r), sfx, t->n),
						   err);
		}
	for (i = 0; i < t1->n; i++) {
		int throttled = 0;

		for (r = 0; r < CB_NROLES; r++)
			for (k = 0; k < rows->nsessions[r]; k++) {
				const struct cb_timing *t = &ev->timing[o][r][k];
				const struct cb_timing_row *row = NULL;
				size_t j;
				char sfx[32];

				for (j = 0; j < t->n && !row; j++)
					if (strcmp(t->rows[j].row, t1->rows[i].row) == 0)
						row = &t->rows[j];
				session_suffix(k, sfx);
				if (!row)
					return order_fails(f, cb_strdupf("round %s: row '%s' is missing in cell %s%s", round,
									 t1->rows[i].row, role_cell_name(m, r), sfx),
							   err);
				if (strcmp(row->timer, t1->rows[i].timer) != 0)
					return order_fails(f, cb_strdupf("round %s: row '%s' is timed differently in cell %s%s: "
									 "%s (%s) there, %s (%s) in the baseline's first session",
									 round, t1->rows[i].row, role_cell_name(m, r), sfx,
									 row->timer, reason_or_none(row->timer_reason),
									 t1->rows[i].timer, reason_or_none(t1->rows[i].timer_reason)),
							   err);
				throttled |= row->throttled;
				rows->at[r][keep * rows->nsessions[r] + k] = (struct cb_samples){ row->samples, row->n };
			}
		if (throttled) {
			rows->throttled++;
			continue;
		}
		rows->names[keep++] = t1->rows[i].row;
	}
	rows->n = keep;
	return 0;
}

/* Speedup of role `other` against the baseline over rows, seeded by the
 * task and seed_tag. */
static int order_speedup(const struct cb_task_evidence *ev, const struct cb_manifest *m, int resamples,
			 const struct order_rows *rows, enum cb_role other, const char *seed_tag,
			 struct cb_speedup *sp, struct cb_err *err)
{
	struct cb_cell_samples base = { rows->at[CB_ROLE_BASELINE], rows->n, rows->nsessions[CB_ROLE_BASELINE] };
	struct cb_cell_samples oth = { rows->at[other], rows->n, rows->nsessions[other] };
	uint64_t seed;

	if (cb_bootstrap_seed(ev->task, seed_tag, &seed, err) < 0)
		return -1;
	return cb_speedup(rows->names, &base, &oth, m->confidence, seed, resamples, sp, err);
}

/* At most this many reasons are listed for IR that cannot be joined; the
 * rest are counted. */
#define UNJOINABLE_LISTED 8

/* Where the GPU time moved between the baseline and the candidate, by the
 * kernels whose converts changed and those whose converts did not, under
 * the topology's present scope (kernels.h); unknown without both cells'
 * topology and profiled rows in common. */
static int facts_kernels(const struct cb_task_evidence *ev, struct cb_facts *f, struct cb_err *err)
{
	struct cb_time_moved mv;

	free(f->kernels.top);
	memset(&f->kernels, 0, sizeof(f->kernels));
	if (!ev->have_topology[CB_ROLE_BASELINE] || !ev->have_topology[CB_ROLE_CANDIDATE])
		return 0;
	if (cb_time_moved_of(&ev->kernels[CB_ROLE_BASELINE], &ev->kernels[CB_ROLE_CANDIDATE],
			     &ev->topology[CB_ROLE_BASELINE], &ev->topology[CB_ROLE_CANDIDATE], &mv, err) < 0)
		return -1;
	f->kernels.known = mv.known;
	f->kernels.saved = mv.base_ns - mv.cand_ns;
	f->kernels.unchanged = mv.unchanged_ns;
	f->kernels.changed = mv.changed;
	f->kernels.top = mv.top;
	mv.top = NULL;
	cb_time_moved_release(&mv);
	return 0;
}

int cb_facts_topology(const struct cb_task_evidence *ev, const struct cb_manifest *m,
		      struct cb_facts *f)
{
	struct cb_buf b = CB_BUF_INIT;
	struct cb_err err;
	size_t listed = 0, more = 0, k;
	int r;

	f->joinable = 1;
	free(f->unjoinable);
	f->unjoinable = NULL;
	free(f->identity_reason);
	f->identity_reason = ev->identity.reason ? strdup(ev->identity.reason) : NULL;
	f->identical = ev->identity.identical;
	f->screened = ev->from_screen && ev->identity.identical;
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
	return facts_kernels(ev, f, &err);
}

int cb_facts_from_evidence(const struct cb_task_evidence *ev, const struct cb_manifest *m, int resamples,
			   struct cb_facts *f, struct cb_figures *fig, struct cb_err *err)
{
	static const char *const tags[CB_NORDERS][2] = { { "a", "a-aa" }, { "b", "b-aa" } };
	int r, o;

	memset(f, 0, sizeof(*f));
	memset(fig, 0, sizeof(*fig));
	fig->resamples = resamples;
	fig->confidence = m->confidence;
	f->gain = m->gain;
	f->regression = m->regression;
	if (cb_facts_topology(ev, m, f) < 0)
		return cb_fail(err, "out of memory");
	find_harness(ev, m, f);
	for (r = 0; r < CB_NROLES; r++)
		f->correct[r] = ev->outcome[CB_PH_CORRECTNESS][r] == CB_OUT_PASSED;
	if (f->harness_code)
		return 0;
	for (o = 0; o < CB_NORDERS; o++) {
		int ph = o == CB_ORDER_A ? CB_PH_ROUND_A : CB_PH_ROUND_B;
		struct order_rows rows;
		int rc;

		if (ev->outcome[ph][CB_ROLE_BASELINE] != CB_OUT_PASSED ||
		    ev->outcome[ph][CB_ROLE_CONTROL] != CB_OUT_PASSED ||
		    ev->outcome[ph][CB_ROLE_CANDIDATE] != CB_OUT_PASSED)
			continue;
		rc = order_rows_build(ev, m, o, &rows, f, err);
		if (rc == 0 && rows.n == 0) {
			f->harness_code = "throttled";
			free(f->harness_reason);
			f->harness_reason = cb_strdupf("round %s: every one of its %zu rows ran throttled (below %.0f%% of the "
						       "maximum SM clock) in some cell and session, measured again or not",
						       o ? "b" : "a", rows.throttled, 100 * m->throttle_floor);
			rc = f->harness_reason ? 1 : cb_fail(err, "out of memory");
		}
		if (rc == 0 &&
		    (order_speedup(ev, m, resamples, &rows, CB_ROLE_CANDIDATE, tags[o][0], &fig->cand[o], err) < 0 ||
		     order_speedup(ev, m, resamples, &rows, CB_ROLE_CONTROL, tags[o][1], &fig->aa[o], err) < 0))
			rc = -1;
		if (rc == 0) {
			fig->present[o] = 1;
			f->order[o].present = 1;
			f->order[o].point = fig->cand[o].point;
			f->order[o].lo = fig->cand[o].lo;
			f->order[o].hi = fig->cand[o].hi;
			f->order[o].aa = fig->aa[o].point;
			f->order[o].aa_lo = fig->aa[o].lo;
			f->order[o].aa_hi = fig->aa[o].hi;
			f->order[o].rows = rows.n;
			f->order[o].throttled = rows.throttled;
		}
		order_rows_release(&rows);
		if (rc != 0)
			return rc < 0 ? -1 : 0;
	}
	return 0;
}

int cb_task_account(const char *task_dir, const char *task, const struct cb_manifest *m, long long floor,
		    int resamples, const struct cb_ttgir_counts *pre, struct cb_task_account *a, struct cb_err *err)
{
	memset(a, 0, sizeof(*a));
	if (cb_evidence_load(task_dir, task, m, floor, pre, &a->ev, err) < 0)
		return -1;
	if (cb_facts_from_evidence(&a->ev, m, resamples, &a->f, &a->fig, err) < 0) {
		cb_prefix(err, "task %s", task);
		cb_task_account_release(a);
		return -1;
	}
	cb_classify(&a->f, &a->v);
	return 0;
}

int cb_task_account_rescope(struct cb_task_account *a, const struct cb_manifest *m, long long floor,
			    struct cb_err *err)
{
	if (cb_evidence_rescope(&a->ev, m, floor, err) < 0)
		return -1;
	if (cb_facts_topology(&a->ev, m, &a->f) < 0)
		return cb_fail(err, "out of memory");
	cb_verdict_release(&a->v);
	cb_classify(&a->f, &a->v);
	return 0;
}

int cb_task_account_scope_time(struct cb_task_account *a, const struct cb_manifest *m, long long share_ppm,
			       struct cb_err *err)
{
	int r;

	for (r = 0; r < CB_NROLES; r++) {
		const struct cb_cell_kernels *ck = &a->ev.kernels[r];
		struct cb_kernel_sums s;

		if (!a->ev.have_topology[r])
			continue;
		if (ck->error)
			return cb_fail(err, "task %s: cell %s: %s", a->ev.task, role_cell_name(m, r), ck->error);
		if (!ck->n)
			return cb_fail(err, "task %s: cell %s: %s", a->ev.task, role_cell_name(m, r),
				       ck->present ? "no profiled replay of round a could be joined to its variants"
						   : "no kernels.jsonl in round a (a run made without the profiled replay)");
		if (cb_kernel_sums_of(ck, NULL, 0, &s, err) < 0)
			return -1;
		cb_kernels_scope_topology(&a->ev.topology[r], &s, share_ppm);
		cb_kernel_sums_release(&s);
	}
	if (cb_facts_topology(&a->ev, m, &a->f) < 0)
		return cb_fail(err, "out of memory");
	cb_verdict_release(&a->v);
	cb_classify(&a->f, &a->v);
	return 0;
}

void cb_task_account_release(struct cb_task_account *a)
{
	cb_evidence_release(&a->ev);
	cb_facts_release(&a->f);
	cb_verdict_release(&a->v);
	memset(a, 0, sizeof(*a));
}
