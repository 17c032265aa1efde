/* receipt.h: cell, task and campaign receipts (docs/design.md section 11) and the
 * verdict matrix; fields are documented in docs/formats.md. Receipts are
 * written once, atomically, deterministically (sorted keys, integers only)
 * and read-only. */
#ifndef CB_RECEIPT_H
#define CB_RECEIPT_H

#include <jansson.h>

#include "caliber.h"
#include "classify.h"
#include "result.h"
#include "campaign/manifest.h"

#define CB_CELL_SCHEMA "caliber.cell/1"
#define CB_TASK_SCHEMA "caliber.task/1"
#define CB_CAMPAIGN_SCHEMA "caliber.campaign/1"
#define CB_DERIVED_SCHEMA "caliber.derived/1"

/* A new receipt object holding schema and caliber's version and commit. */
json_t *cb_receipt_new(const char *schema);
/* Write a receipt atomically, mode 0444. */
int cb_receipt_write(const char *path, const json_t *receipt, struct cb_err *err);
/* Current UTC time as "2026-11-29T18:00:00Z" into out (21 bytes). */
void cb_now_utc(char out[32]);

/* What a cell receipt (cell.json, docs/formats.md) records of one request:
 * the facts as the worker code saw them, all borrowed. reply_ns and
 * pytest_exit below 0 are recorded as null; process NULL as "running". */
struct cb_cell_facts {
	const char *task, *cell, *role, *phase, *request_id;
	long long session;
	const json_t *argv, *env;            /* the request's */
	const json_t *compiler;              /* the cell's compiler (cb_worker_compiler_json) */
	const char *const *worker_argv;      /* NULL-terminated */
	const char *mode;                    /* the worker mode's name */
	long long pid, started_ahead_ms;
	int fresh;
	const json_t *env_overlay;
	const char *const *plugins;
	size_t nplugins;
	const char *started, *finished;
	long long wall_ns, reply_ns, timeout_s;
	int replied, timed_out;
	long long pytest_exit;
	const char *process;
	size_t log_bytes, log_cut_bytes;
	const char *outcome, *detail;
	const json_t *outputs, *removed, *killed;
};

/* Write DIR/cell.json, the receipt of one cell's request, from f. */
int cb_cell_receipt_write(const char *dir, const struct cb_cell_facts *f, struct cb_err *err);

/* The free A/A of n results (docs/design.md section 19): of the tasks identical by
 * construction that were timed, how many have a round-a interval that
 * excludes zero; how many were not timed (run --prescreen); and whether
 * any task carries digests at all (known 0: a run from before them). */
struct cb_free_aa {
	size_t known, identical, exclude_zero, screened;
};
/* Count result r into aa (zeroed first). */
void cb_free_aa_add(struct cb_free_aa *aa, const struct cb_task_result *r);
/* The line of the report and matrix.csv: "k of n identical-by-construction
 * tasks exclude zero (round a; nominal 5%)". */
void cb_free_aa_line(const struct cb_free_aa *aa, char *out, size_t cap);

/* The result of an accounted task (evidence.h): what the verdict matrix,
 * the campaign receipt and reaccount's comparison read. */
struct cb_task_account;
int cb_task_result_fill(const struct cb_task_account *a, const char *op, struct cb_task_result *res,
			struct cb_err *err);

/* Write tasks/<id>/task.json of an accounted task: verdict, reason and
 * every figure behind them; extra (may be NULL) is merged in, objects key
 * by key (times, and what the runner records per order). Fills res. */
int cb_task_receipt_write(const char *task_dir, size_t index, const char *op, const struct cb_manifest *m,
			  long long floor, const struct cb_task_account *a, const json_t *extra,
			  struct cb_task_result *res, struct cb_err *err);

/* Read back what cb_task_receipt_write wrote (name is used in errors). */
int cb_task_result_load(const char *task_json, struct cb_task_result *res, struct cb_err *err);
int cb_task_result_from_json(const json_t *j, const char *name, struct cb_task_result *res,
			     struct cb_err *err);

/* Write matrix.csv and matrix.md of n results into dir (atomically). */
int cb_write_verdict_matrix(const char *dir, const struct cb_task_result *res, size_t n,
			    struct cb_err *err);

/* The tasks[] entry of the campaign receipt for one result. */
json_t *cb_task_result_json(const struct cb_task_result *r);

/* What other commands need from a campaign receipt. Strings point into doc. */
struct cb_campaign_task {
	const char *id, *verdict, *reason;
};

struct cb_campaign_summary {
	json_t *doc;
	const char *campaign, *selection, *manifest_sha256, *status;
	long long launch_floor;
	long long resamples;           /* bootstrap.resamples; unrecorded: CB_BOOTSTRAP_RESAMPLES_UNRECORDED */
	struct cb_campaign_task *tasks;
	size_t ntasks;
};

/* Load a campaign receipt and check its shape (a bootstrap.resamples it
 * records must be an integer from 1 to CB_BOOTSTRAP_RESAMPLES_MAX). The
 * _take form takes over doc's reference (released on failure too). */
int cb_campaign_summary_load(const char *path, struct cb_campaign_summary *cs, struct cb_err *err);
/* The same for the campaign receipt of run root root (root/campaign.json). */
int cb_campaign_summary_of_run(const char *root, struct cb_campaign_summary *cs, struct cb_err *err);
int cb_campaign_summary_take(json_t *doc, const char *path, struct cb_campaign_summary *cs,
			     struct cb_err *err);
void cb_campaign_summary_release(struct cb_campaign_summary *cs);

/* The line a run and the demo end with, "verdicts: G n, C n, B n, R n, K
 * n, X n" (every letter, in reading order, zeros included), of cs's tasks. */
void cb_campaign_verdict_line(const struct cb_campaign_summary *cs, char out[96]);

/* 0 when no task of cs is X; else -1 with err naming how many are and the
 * first, with its reason: a campaign that could not measure a task did not
 * do its job, whatever else it found. */
int cb_campaign_check_x(const struct cb_campaign_summary *cs, struct cb_err *err);

#endif
