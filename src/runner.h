/* runner.h: the runner behind `caliber run` (SPEC section 6): preflights,
 * then the frozen task matrix on one device, serially, into a run root that
 * ends sealed. */
#ifndef CB_RUNNER_H
#define CB_RUNNER_H

#include "caliber.h"
#include "shard.h"

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
	long long stop_after;              /* seconds, 0 for none */
	int isolate;                       /* a fresh worker per request */
	int resume, quiet, json_progress, allow_dirty;
	int argc;                          /* the command line, recorded in run.json */
	char **argv;
	const char *sign_key;              /* Ed25519 private key (PEM) that signs the seal, or NULL */
	struct cb_shard shard;             /* run only this shard of the matrix (n 0: all of it) */
	int preflight_only;                /* stop after the preflights, writing nothing */
	int prescreen;                     /* time no task whose binaries are identical in every cell */
};

/* Run (or resume) the campaign: preflights (refused: exit 3, nothing
 * written; with preflight_only the end, exit 0), every task not done yet, the campaign receipt, the verdict
 * matrix and the seal. Returns the exit status (caliber.h): 0 for a sealed
 * run, 4 when the deadline stopped it, 5 when --fail-on matched, 2 for a
 * bad --fail-on or --deadline, 1 with err filled on failure. */
int cb_run(const struct cb_run_opts *o, struct cb_err *err);

#endif
