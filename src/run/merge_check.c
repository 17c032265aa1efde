/* merge_check.c: every check `caliber merge` makes of the shards and the
 * output root before anything is written (check_shards): each shard's
 * campaign receipt, that the shards belong together, the deal, what each
 * holds, its signature. merge.c writes the merged run. A shard is not
 * opened through the run view (account/runview.h): merge verifies each
 * shard while it copies it (cb_verify_or_fail_observed), one pass over its
 * bytes, where the view's verifying pass would be a second; here only its
 * campaign receipt is read, before anything is written. */
#include "merge_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "seal/fixed.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "campaign/matrix.h"
#include "account/receipt.h"
#include "seal/seal.h"
#include "campaign/shard.h"
#include "base/sha.h"
#include "seal/sign.h"
#include "base/walk.h"
#include "base/runroot.h"

/* What every shard's campaign receipt must hold alike: the frozen
 * campaign, and what follows from it and the backend. */
const char *const merge_common_keys[] = { "campaign", "selection", "manifest_sha256", "matrix_sha256",
				    "inventory_sha256", "sources", "timer", "bootstrap", "plan", "launch_floor",
				    "thresholds", "production_default_policy", "prescreen", NULL };

/* Read one shard's campaign receipt: sealed, complete, a shard. */
static int load_shard(struct shard_in *in, struct cb_err *err)
{
	char *camp = cb_path_join(in->root, CB_RUN_CAMPAIGN);
	const char *schema, *status;
	int rc;

	in->resolved = cb_resolve(in->root);
	if (!camp || !in->resolved) {
		free(camp);
		return cb_fail(err, "%s: not a run root (cannot resolve it)", in->root);
	}
	if (!cb_is_sealed(in->root)) {
		free(camp);
		return cb_fail(err, "%s: not sealed (no %s): a shard is merged once it is complete", in->root,
			       CB_SUMS_FILE);
	}
	in->campaign = cb_json_load_file(camp, err);
	free(camp);
	if (!in->campaign)
		return -1;
	schema = cb_json_str(in->campaign, "schema");
	status = cb_json_str(in->campaign, "status");
	if (!schema || strcmp(schema, CB_CAMPAIGN_SCHEMA) != 0 || !status || strcmp(status, "complete") != 0)
		return cb_fail(err, "%s/" CB_RUN_CAMPAIGN ": not the receipt of a complete campaign", in->root);
	rc = cb_shard_from_receipt(in->campaign, in->root, &in->s, err);
	if (rc > 0)
		return cb_fail(err, "%s: not a shard: its campaign receipt names no shard (a run of the whole matrix)",
			       in->root);
	return rc;
}

/* Whether two campaign receipts hold key alike: equal values, or both
 * without it (bootstrap is absent from receipts sealed before it was
 * recorded). */
static int same_key(const json_t *a, const json_t *b, const char *key)
{
	const json_t *x = json_object_get(a, key), *y = json_object_get(b, key);

	return (!x && !y) || json_equal(x, y);
}

/* Whether shard b belongs with shard a: the same campaign, frozen alike,
 * the same number of shards, the same backend. */
static int same_campaign(const struct shard_in *a, const struct shard_in *b, struct cb_err *err)
{
	const json_t *da = json_object_get(a->campaign, "device"), *db = json_object_get(b->campaign, "device");
	size_t i;

	for (i = 0; merge_common_keys[i]; i++)
		if (!same_key(a->campaign, b->campaign, merge_common_keys[i]))
			return cb_fail(err, "%s: a foreign shard: its %s differs from that of %s", b->root, merge_common_keys[i],
				       a->root);
	if (!json_equal(json_object_get(da, "backend"), json_object_get(db, "backend")) ||
	    !json_equal(json_object_get(da, "manifest"), json_object_get(db, "manifest")))
		return cb_fail(err, "%s: a foreign shard: its device differs from that of %s", b->root, a->root);
	if (a->s.n != b->s.n)
		return cb_fail(err, "%s: shard %zu/%zu of another deal: %s is one of %zu shards", b->root, b->s.k, b->s.n,
			       a->root, a->s.n);
	return 0;
}

static int cmp_shard(const void *a, const void *b)
{
	const struct shard_in *x = a, *y = b;

	return x->s.k < y->s.k ? -1 : x->s.k > y->s.k;
}

/* The ids of a shard's "tasks", as "a, b, c". */
static void ids_of(const json_t *tasks, const char *key, struct cb_buf *b)
{
	const json_t *t;
	size_t i;

	json_array_foreach(tasks, i, t) {
		const char *id = key ? cb_json_str(t, key) : json_string_value(t);
		cb_buf_addf(b, "%s%s", i ? ", " : "", id ? id : "?");
	}
}

/* Every shard holds exactly the tasks the matrix deals it. */
static int check_deal(const struct merge *mg, const json_t *tasks, struct cb_err *err)
{
	size_t k;
	int rc = 0;

	for (k = 0; k < mg->n && rc == 0; k++) {
		json_t *want = cb_shard_tasks(tasks, &mg->in[k].s, err);
		const json_t *have = json_object_get(json_object_get(mg->in[k].campaign, "shard"), "tasks");
		struct cb_buf w = CB_BUF_INIT, h = CB_BUF_INIT;

		if (!want)
			return cb_prefix(err, "%s", mg->in[k].root);
		ids_of(want, "id", &w);
		ids_of(have, NULL, &h);
		if (strcmp(w.data ? w.data : "", h.data ? h.data : "") != 0)
			rc = cb_fail(err, "%s: shard %zu/%zu holds tasks [%s], the matrix deals it [%s]", mg->in[k].root,
				     mg->in[k].s.k, mg->in[k].s.n, h.data ? h.data : "", w.data ? w.data : "");
		cb_buf_release(&w);
		cb_buf_release(&h);
		json_decref(want);
	}
	return rc;
}

/* What the top of a shard holds: its frozen campaign, its receipts, its
 * verdict matrix, its seal, the ledger of its fixed evidence (fixed.h,
 * kept in shards/<K>/ like its receipts), and the folders of its tasks. */
static const char *const shard_top[] = { CB_RUN_MANIFEST, CB_RUN_MATRIX, CB_FROZEN_INVENTORY, CB_RUN_RUN,
					 CB_RUN_CAMPAIGN, CB_RUN_MATRIX_CSV, CB_RUN_MATRIX_MD, CB_SEAL_FILE, CB_SUMS_FILE,
					 CB_SIG_FILE, CB_FIXED_FILE, CB_RUN_TASKS, "interrupted", NULL };

/* Whether the name of len bytes at p is one of the ids in tasks (a JSON
 * array of strings). */
static int names_task(const json_t *tasks, const char *p, size_t len)
{
	const json_t *t;
	size_t i;

	json_array_foreach(tasks, i, t) {
		const char *id = json_string_value(t);
		if (id && strlen(id) == len && memcmp(id, p, len) == 0)
			return 1;
	}
	return 0;
}

/* Whether the deal names rel, a path of a shard whose tasks are tasks:
 * a name of shard_top, tasks/<task>/... or interrupted/<task>-<n>/... of
 * one of its tasks. */
static int dealt(const char *rel, const json_t *tasks)
{
	const char *slash = strchr(rel, '/'), *end, *dash;
	size_t i;

	if (!slash) {
		for (i = 0; shard_top[i]; i++)
			if (strcmp(rel, shard_top[i]) == 0)
				return 1;
		return 0;
	}
	end = strchr(slash + 1, '/');
	if (!end)
		end = slash + strlen(slash);
	if (strncmp(rel, CB_RUN_TASKS "/", sizeof(CB_RUN_TASKS)) == 0)
		return names_task(tasks, slash + 1, (size_t)(end - slash - 1));
	if (strncmp(rel, "interrupted/", 12) != 0)
		return 0;
	for (dash = end; dash > slash + 1 && dash[-1] >= '0' && dash[-1] <= '9'; dash--)
		;
	return dash < end && dash > slash + 2 && dash[-1] == '-' &&
	       names_task(tasks, slash + 1, (size_t)(dash - 1 - slash - 1));
}

/* A shard holds nothing the deal does not name (dealt): a folder of a task
 * that is not its own, a file at its top that no run writes. Named with
 * the first such path, never copied. */
static int check_contents(const struct shard_in *in, struct cb_err *err)
{
	const json_t *tasks = json_object_get(json_object_get(in->campaign, "shard"), "tasks");
	struct cb_tree t;
	size_t i;
	int rc = 0;

	if (cb_walk(in->root, NULL, CB_WALK_DIRS, &t, err) < 0)
		return cb_prefix(err, "%s", in->root);
	for (i = 0; i < t.n && rc == 0; i++)
		if (!dealt(t.v[i].rel, tasks))
			rc = cb_fail(err, "%s: shard %zu/%zu holds %s%s, which its deal does not name", in->root, in->s.k,
				     in->s.n, t.v[i].rel, t.v[i].kind == CB_ENT_DIR ? "/" : "");
	cb_tree_release(&t);
	return rc;
}

/* A shard's signature: with o->key it must hold for that key (a shard
 * without one is refused); without, a SHA256SUMS.sig there must still be
 * a signature file (never a link), as it is kept in shards/<K>/. */
static int check_signature(const struct merge *mg, const struct shard_in *in, struct cb_err *err)
{
	char key[CB_SHA256_HEX];

	if (cb_seal_signature(in->root, mg->o->key, key, err) < 0)
		return cb_prefix(err, "shard %zu/%zu", in->s.k, in->s.n);
	if (mg->o->key && !mg->o->quiet)
		printf("merge: shard %zu/%zu: signature holds, key sha256:%s\n", in->s.k, in->s.n, key);
	return 0;
}

/* The output root: new, and where the output guard lets a command write
 * (outside every sealed run, the shards included). */
const struct cb_guard merge_output_guard = { "--output-root", NULL, NULL };

static int check_output(const struct merge *mg, struct cb_err *err)
{
	const char *out = mg->o->output;

	if (cb_exists(out))
		return cb_fail(err, "--output-root %s exists; merge writes a new run root", out);
	return cb_guard_check(&merge_output_guard, out, err);
}

/* Every check of the shards and the output, before anything is written:
 * each given shard loads; none is given twice or belongs to another
 * campaign; none of 1..N is missing; each holds what the deal gives it and
 * nothing else; each is signed as --key asks; --sign-key can sign. */
int merge_check_shards(struct merge *mg, struct cb_err *err)
{
	struct cb_buf given = CB_BUF_INIT;
	char *mpath;
	json_t *mx;
	size_t i, j, k;
	int rc = 0;

	for (i = 0; i < mg->n; i++) {
		if (load_shard(&mg->in[i], err) < 0)
			return -1;
		for (j = 0; j < i; j++)
			if (strcmp(mg->in[i].resolved, mg->in[j].resolved) == 0 || mg->in[i].s.k == mg->in[j].s.k)
				return cb_fail(err, "%s: shard %zu/%zu is given twice (also %s)", mg->in[i].root,
					       mg->in[i].s.k, mg->in[i].s.n, mg->in[j].root);
		if (i && same_campaign(&mg->in[0], &mg->in[i], err) < 0)
			return -1;
	}
	qsort(mg->in, mg->n, sizeof(*mg->in), cmp_shard);
	for (k = 1, i = 0; k <= mg->in[0].s.n; k++) {
		if (i < mg->n && mg->in[i].s.k == k) {
			i++;
			continue;
		}
		for (j = 0; j < mg->n; j++)
			cb_buf_addf(&given, "%s%zu/%zu", j ? ", " : "", mg->in[j].s.k, mg->in[j].s.n);
		rc = cb_fail(err, "shard %zu/%zu is missing (given: %s)", k, mg->in[0].s.n, given.data);
		cb_buf_release(&given);
		return rc;
	}
	mpath = cb_path_join(mg->in[0].root, CB_RUN_MATRIX);
	mx = mpath ? cb_json_load_file(mpath, err) : NULL;
	free(mpath);
	if (!mx)
		return -1;
	rc = check_deal(mg, json_object_get(mx, "tasks"), err);
	json_decref(mx);
	for (k = 0; k < mg->n && rc == 0; k++)
		rc = check_contents(&mg->in[k], err) < 0 || check_signature(mg, &mg->in[k], err) < 0 ? -1 : 0;
	if (rc == 0 && mg->o->sign_key && cb_sign_key_check(mg->o->sign_key, err) < 0)
		rc = cb_prefix(err, "--sign-key");
	return rc < 0 ? -1 : check_output(mg, err);
}
