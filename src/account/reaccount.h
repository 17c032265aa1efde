/* reaccount.h: a sealed run accounted again under another launch floor
 * (docs/design.md section 12), with no device and no compiler. */
#ifndef CB_REACCOUNT_H
#define CB_REACCOUNT_H

#include <jansson.h>

#include "caliber.h"
#include "campaign/manifest.h"
#include "receipt.h"
#include "runview.h"
#include "ir/topology.h"

/* One task: its sealed result and the one derived at the new floor. */
struct cb_task_pair {
	struct cb_task_result sealed, derived;
	json_t *excluded;              /* per role, variants left out at the new floor */
	int failed;                    /* 1: err says why; 2: equivalence fails, diff says how */
	struct cb_err err;
	char diff[1024];
};

/* How a derived run scopes its topology: variants launched more than a
 * floor (as a campaign does), or, by_time, variants holding at least
 * share_ppm (millionths) of their cell's profiled GPU time (kernels.h). */
struct cb_scope {
	int by_time;
	long long floor, share_ppm;
};

/* "time:P" (P a percentage from 0 to 100, at most 4 decimals) into s. */
int cb_scope_parse_time(const char *arg, struct cb_scope *s, struct cb_err *err);
/* "floor 1" or "time:0.5%", for messages. */
void cb_scope_name(const struct cb_scope *s, char *out, size_t cap);

/* A re-accounted run; zeroed is empty. */
struct cb_reaccount {
	const struct cb_run_view *v;     /* the run, borrowed: its receipt, manifest and counts */
	struct cb_scope scope;
	long long floor;                 /* scope.floor; the sealed floor for a scope by time */
	size_t same_counts;              /* tasks whose derived topology is the sealed one */
	size_t ntasks, changed;          /* changed: tasks whose verdict changed */
	struct cb_task_pair *pairs;      /* per task, in run order */
	struct cb_task_result *derived;  /* the derived results, for the matrix (shared with pairs) */
	json_t *doc;                     /* derived.json */
	char diff[1024];                 /* when equivalence fails: the first difference */
};

/* Check the run v opened (runview.h, a run root only, with its op
 * counted): the output lies outside it, its seal holds, its manifest is the
 * one sealed, each task's cell receipts are what caliber writes (a bad one
 * is named with what is wrong). Then account every task at the run's own
 * floor (which must reproduce every sealed count and verdict: equivalence)
 * and under scope into ra. A scope by time leaves X and K tasks as sealed
 * and needs every other task's cells profiled. On failure err says why;
 * when equivalence failed, ra->diff says how. ra is the caller's to release
 * either way, before v. */
int cb_reaccount(const struct cb_run_view *v, const char *output, const struct cb_scope *scope,
		 struct cb_reaccount *ra, struct cb_err *err);

/* Write output/derived.json, matrix.csv and matrix.md. */
int cb_reaccount_write(const struct cb_reaccount *ra, const char *output, struct cb_err *err);
void cb_reaccount_release(struct cb_reaccount *ra);

#endif
