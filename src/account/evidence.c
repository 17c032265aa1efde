/* evidence.c: a task's cell folders loaded as its evidence (outcomes,
 * timing sessions, topology, identities); facts.c turns it into the
 * classifier's facts. */
#include "evidence.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int cb_evidence_verify_counted(const char *root, const char *op, struct cb_ttgir_counts *counts,
			       struct cb_verify_report *rep, struct cb_err *err)
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
	rc = cb_verify_observed(root, &obs, rep, err);
	pthread_mutex_destroy(&job.lock);
	if (rc < 0 || !cb_verify_holds(rep))
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
