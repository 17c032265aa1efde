/* runner_int.h: what the pieces of the runner share, for src/run/ only:
 * the state of one `caliber run` (struct runner) and the steps runner.c
 * calls in order. runner.c runs the steps (and prints the user's lines,
 * note); runner_task.c runs one task, cell by cell; runner_root.c makes,
 * resumes and tidies the run root; runner_record.c writes run.json and
 * the campaign receipt. */
#ifndef CB_RUNNER_INT_H
#define CB_RUNNER_INT_H

#include <stddef.h>

#include <jansson.h>

#include "caliber.h"
#include "account/expect.h"
#include "account/result.h"
#include "base/confine.h"
#include "campaign/manifest.h"
#include "campaign/shard.h"
#include "seal/fixed.h"
#include "preflight.h"
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

/* runner.c: a line for the user (the event with --json-progress). */
void runner_note(const struct runner *rn, json_t *event, const char *fmt, ...) CB_PRINTF(3, 4);

/* runner_task.c: run task i into its folder and write its receipt; 1 when
 * the deadline kept it from starting or stopped it (rn->stop says why). */
int runner_run_task(struct runner *rn, size_t i, const json_t *task, struct cb_task_result *res,
	     struct cb_err *err);

/* runner_root.c: the run root's steps. */
int runner_prepare_resume(struct runner *rn, struct cb_task_result *res, struct cb_err *err);
int runner_make_skeleton(const char *manifest, const char *matrix, const char *output, struct cb_err *err);
int runner_remove_slots(const char *root, json_t *changes, struct cb_err *err);
int runner_tidy_before_seal(const struct runner *rn, struct cb_err *err);

/* runner_record.c: run.json and the campaign receipt. */
int runner_record_invocation(const char *root, int argc, const char **argv, int resume, const char *shard,
		      const char *scratch, json_t *tidied, const struct cb_confine *confine, struct cb_err *err);
int runner_same_prescreen(const char *root, int prescreen, struct cb_err *err);
int runner_write_campaign(struct runner *rn, struct cb_preflight *pf, const struct cb_task_result *res,
		   const char *selection, const struct cb_shard *shard, struct cb_err *err);

#endif
