/* runner.h: the runner behind `caliber run` (docs/design.md section 6): preflights,
 * then the frozen task matrix on one device, serially, into a run root that
 * ends sealed. */
#ifndef CB_RUNNER_H
#define CB_RUNNER_H

#include "caliber.h"
#include "base/confine.h"
#include "campaign/shard.h"
#include "worker.h"

/* What a run is asked to do: the command line of `caliber run`, with every
 * path absolute. Strings are borrowed. */
struct cb_run_opts {
	const char *manifest, *matrix;     /* FROZEN/manifest.json, FROZEN/task-matrix.json */
	const char *build_root, *corpus;   /* the compiler's and the corpus's roots */
	const char *output;                /* the run root */
	const char *worker;                /* the worker session command, or NULL for the default */
	const char *backends;              /* folder of backend files, or NULL for caliber's */
	const char *device;                /* value of the visibility variable, or NULL */
	const char *python;                /* interpreter for the worker and preflights */
	const char *fail_on;               /* verdicts that make a completed run exit 5, or NULL */
	const char *deadline;              /* a UTC time, or NULL */
	const char *history;               /* a sealed earlier run of the campaign to plan by, or NULL */
	long long stop_after;              /* seconds, 0 for none */
	enum cb_worker_mode workers;       /* how worker processes live (worker.h) */
	int prestart;                      /* session mode: workers per cell started ahead */
	int resume, quiet, json_progress, allow_dirty;
	int argc;                          /* the command line, recorded in run.json */
	const char **argv;
	const char *sign_key;              /* Ed25519 private key (PEM) that signs the seal, or NULL */
	struct cb_shard shard;             /* run only this shard of the matrix (n 0: all of it) */
	int preflight_only;                /* stop after the preflights, writing nothing */
	int prescreen;                     /* time no task whose binaries are identical in every cell */
	enum cb_confine_mode confinement;  /* how to confine workers (--confinement; confine.h): AUTO, a mode
	                                      (refused where missing), or OFF (said) */
	int require_confinement;           /* refuse the batch (exit 3) when workers cannot be confined */
};

/* Run (or resume) the campaign: preflights (refused: exit 3, nothing
 * written; with preflight_only the end, exit 0), every task not done yet, the campaign receipt, the verdict
 * matrix and the seal, then the verdict line (cb_run_verdicts). Returns
 * the exit status (caliber.h): 0 for a sealed run, 4 when the deadline
 * stopped it, 5 when a task is X (naming the first; not for a shard, whose
 * X is judged in the merged run) or --fail-on matched, 2 for a bad
 * --fail-on or --deadline, 1 with err filled on failure. */
int cb_run(const struct cb_run_opts *o, struct cb_err *err);

/* The end of the sealed run at root: "verdicts: G n, C n, B n, R n, K n, X
 * n" and where its report is, printed to stdout (one JSON event with
 * json), whatever the progress mode: they are the result. Then, with
 * gate_x, CB_EXIT_GATE when a task is X, err naming how many and the
 * first with its reason (a run that could not measure a task did not do
 * its job, as the demo says too); else CB_EXIT_OK. CB_EXIT_FAIL when the
 * campaign receipt cannot be read. */
int cb_run_verdicts(const char *root, int json, int gate_x, struct cb_err *err);

#endif
