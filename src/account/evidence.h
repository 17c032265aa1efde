/* evidence.h: what a task's cell folders prove, gathered from the files the
 * worker left and the cell receipts the runner wrote, and turned into the
 * classifier's facts. The runner and reaccount both go through here, so a
 * sealed verdict and its re-accounting are computed by the same code. */
#ifndef CB_EVIDENCE_H
#define CB_EVIDENCE_H

#include <stdint.h>

#include "caliber.h"
#include "classify.h"
#include "kernels.h"
#include "campaign/identity.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "stats.h"
#include "timing.h"
#include "ir/topology.h"
#include "seal/seal.h"

/* How one cell's phase ended (recorded in cell.json as "outcome"). */
enum cb_outcome {
	CB_OUT_NOT_RUN,       /* no cell receipt */
	CB_OUT_PASSED,        /* pytest exit 0 */
	CB_OUT_FAILED,        /* pytest exit 1: a test failed */
	CB_OUT_UNSUPPORTED,   /* pytest exit 5: nothing collected */
	CB_OUT_ERROR,         /* pytest exit 2, 3, 4, or the worker reported an error */
	CB_OUT_TIMEOUT,       /* killed at the workload's timeout */
	CB_OUT_CRASHED,       /* the worker died without replying */
	CB_OUT_REPLAY_MISS,   /* autotune replay found no recorded config */
	CB_OUT_MISSING_OUTPUT /* a benchmark left no timing.jsonl or no ir/index.tsv */
};

const char *cb_outcome_name(enum cb_outcome o);
int cb_outcome_parse(const char *s, enum cb_outcome *o);

/* Everything about one task, by phase and role. */
struct cb_task_evidence {
	char *dir;                                   /* tasks/<id> */
	char *task;
	enum cb_outcome outcome[CB_NPHASES][CB_NROLES];
	char *detail[CB_NPHASES][CB_NROLES];         /* outcome in words (owned) */
	int have_topology[CB_NROLES];                /* round a scanned without error */
	char *topology_error[CB_NROLES];             /* why round a has no topology (owned), or NULL */
	struct cb_topology topology[CB_NROLES];      /* round a */
	struct cb_timing *timing[CB_NORDERS][CB_NROLES];   /* by session, [nsessions] (owned) */
	size_t nsessions[CB_NORDERS][CB_NROLES];          /* sessions that passed with their timing */
	struct cb_cell_kernels kernels[CB_NROLES];        /* round a's profiled replays (kernels.h) */
	/* Binary identity (identity.h) of the cells whose IR is the topology:
	 * round a's first sessions, or, for a task whose screen passed in every
	 * cell and whose rounds did not run (run --prescreen), the screen's. */
	int from_screen;                             /* the topology and identity are the screen's */
	struct cb_identity_cell idcell[CB_NROLES];
	struct cb_identity identity;                 /* at the floor; the screen's at floor 0 */
	/* A task whose screen passed in every cell but which was timed: the
	 * screen's own identity (every kernel it launched), why it was timed. */
	int have_screen;
	struct cb_topology screen_topology[CB_NROLES];
	int have_screen_topology[CB_NROLES];
	struct cb_identity_cell screen_cells[CB_NROLES];
	struct cb_identity screen_identity;
};

/* Gather a task's evidence from task_dir (cell receipts, timing.jsonl of
 * every session of rounds a and b, IR and binaries of round a's first
 * session at the given floor, or of the screen's when only it ran,
 * kernels.jsonl of round a's sessions). Missing or malformed
 * worker output is evidence (an outcome), not an error; -1 only when the
 * task folder itself cannot be read. With pre (see
 * cb_evidence_verify_counted), the count of each .ttgir that pre holds is
 * taken from it instead of reading the file again, and the listings of the
 * IR directories from pre's listing; with NULL, everything is read. */
int cb_evidence_load(const char *task_dir, const char *task, const struct cb_manifest *m,
			     long long floor, const struct cb_ttgir_counts *pre,
			     struct cb_task_evidence *ev, struct cb_err *err);

/* Verify the seal of the run at root (cb_verify, into rep, the caller's
 * to release) and, in the same read, count op in every
 * tasks/<task>/cells/<cell>/ir/<variant>/<file>.ttgir into counts
 * (initialised here; its paths are root "/" relative path, as task folders
 * "<root>/tasks/<task>" lead cb_evidence_load to spell them). A file it
 * could not count (no memory) is left out and is read when needed. The
 * tree the verify walked goes into counts too (root and listing), so that
 * the joins list the run's directories without reading them again. -1
 * only when the op is refused or the seal cannot be checked at all; counts
 * is valid only when rep holds (every counted byte is then a sealed byte),
 * and freed otherwise. The run view (runview.h) is its reader. */
int cb_evidence_verify_counted(const char *root, const char *op, struct cb_ttgir_counts *counts,
			       struct cb_verify_report *rep, struct cb_err *err);
/* Re-scope the already scanned topology, and the identity that rests on
 * it, to another floor (a screen's identity counts every launched kernel
 * at any floor). */
int cb_evidence_rescope(struct cb_task_evidence *ev, const struct cb_manifest *m, long long floor,
			struct cb_err *err);
void cb_evidence_release(struct cb_task_evidence *ev);

/* The classifier's facts, and the speedups behind them, from evidence. */
struct cb_figures {
	struct cb_speedup cand[CB_NORDERS];          /* candidate vs baseline */
	struct cb_speedup aa[CB_NORDERS];            /* control vs baseline */
	int present[CB_NORDERS];
	int resamples;                               /* of every bootstrap behind them */
	double confidence;                           /* of every interval */
};

/* f and fig are overwritten (f must hold no strings yet; cb_facts_release).
 * Each interval is a bootstrap of `resamples` resamples. */
int cb_facts_from_evidence(const struct cb_task_evidence *ev, const struct cb_manifest *m, int resamples,
			   struct cb_facts *f, struct cb_figures *fig, struct cb_err *err);

/* Refresh only the topology facts and the identity's (after
 * cb_evidence_rescope): timings and their bootstrap do not depend on the
 * floor, so reaccount computes them once. Where the GPU time moved is a
 * topology fact too: which kernels' converts changed depends on the scope.
 * -1 only when out of memory. */
int cb_facts_topology(const struct cb_task_evidence *ev, const struct cb_manifest *m,
		      struct cb_facts *f);

/* A task accounted: its evidence, the classifier's facts and the figures
 * behind them, and its verdict; what the runner seals and reaccount
 * recomputes, by the same code. */
struct cb_task_account {
	struct cb_task_evidence ev;
	struct cb_facts f;
	struct cb_figures fig;
	struct cb_verdict v;
};

/* Gather task_dir's evidence at floor (the counts of pre where it has
 * them, as cb_evidence_load), compute its facts with bootstraps of
 * `resamples` resamples (the runner: CB_BOOTSTRAP_RESAMPLES; reaccount:
 * what the sealed receipts say) and classify it. */
int cb_task_account(const char *task_dir, const char *task, const struct cb_manifest *m, long long floor,
		    int resamples, const struct cb_ttgir_counts *pre, struct cb_task_account *a, struct cb_err *err);
/* The same task at another floor: topology re-scoped, facts and verdict
 * again; timings and their bootstrap do not depend on the floor. -1 when
 * out of memory or when the identity cannot be read again (err). */
int cb_task_account_rescope(struct cb_task_account *a, const struct cb_manifest *m, long long floor,
			    struct cb_err *err);
/* The same task scoped by time (reaccount --scope time:P): a variant
 * counts when it holds at least share_ppm of its cell's profiled GPU time.
 * A cell with topology but no profiled row cannot be scoped so: -1, err
 * names it. */
int cb_task_account_scope_time(struct cb_task_account *a, const struct cb_manifest *m, long long share_ppm,
			       struct cb_err *err);
void cb_task_account_release(struct cb_task_account *a);

#endif
