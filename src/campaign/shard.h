/* shard.h: shards of a frozen task matrix (docs/design.md section 16). A shard is a
 * subset of the matrix's tasks run into its own sealed run root; all cells
 * of a task stay in one shard (they must run on one device). The deal is a
 * pure function of the matrix and the number of shards, so every shard of
 * a campaign, on whatever host, computes the same one, and merge can check
 * it. */
#ifndef CB_SHARD_H
#define CB_SHARD_H

#include <stddef.h>

#include <jansson.h>

#include "caliber.h"

/* Shard k (1-based) of n; n 0 means "not a shard". */
struct cb_shard {
	size_t k, n;
};

/* Parse "K/N" (decimal, 1 <= K <= N, N <= CB_SHARD_MAX) of the option
 * named opt (for the message). */
int cb_shard_parse(const char *s, const char *opt, struct cb_shard *out, struct cb_err *err);

#define CB_SHARD_MAX 4096

/* "K/N" into out (32 bytes). */
void cb_shard_name(const struct cb_shard *s, char out[32]);

/* Deal the n tasks of a matrix's "tasks" array into nshards shards:
 * longest first by each task's prepared budget (budget_s), each onto the
 * shard with the least budget so far (the lowest-numbered one on a tie),
 * tasks of equal budget in matrix order. shard_of[i] receives the 0-based
 * shard of task i. Refuses more shards than tasks (a shard would be
 * empty). */
int cb_shard_deal(const json_t *tasks, size_t nshards, size_t *shard_of, struct cb_err *err);

/* The tasks of shard s of a matrix's "tasks" array, in matrix order, as a
 * new array (the elements are the matrix's, referenced). */
json_t *cb_shard_tasks(const json_t *tasks, const struct cb_shard *s, struct cb_err *err);

/* The "shard" object of the campaign receipt of a shard run at root:
 * {"index": K, "count": N, "tasks": [ids], "host": H, "started": T}, T
 * the start of the first invocation in root's run.json. */
json_t *cb_shard_receipt(const struct cb_shard *s, const json_t *shard_tasks, const char *root,
			 struct cb_err *err);

/* Read the "shard" object of a shard's campaign receipt back into s and
 * check its shape; name is used in errors. Returns 1 when the receipt
 * names no shard (a run of the whole matrix), 0 for a shard, -1 on a
 * malformed one. */
int cb_shard_from_receipt(const json_t *campaign, const char *name, struct cb_shard *s, struct cb_err *err);

/* --resume into root as shard s (n 0: the whole matrix): every
 * invocation recorded in root's run.json must have run the same shard.
 * A root without run.json has run nothing yet and passes. */
int cb_shard_check_resume(const char *root, const struct cb_shard *s, struct cb_err *err);

#endif
