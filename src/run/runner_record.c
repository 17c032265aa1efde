/* runner_record.c: what `caliber run` records of itself in the run root:
 * run.json, one invocation per start or resume (and --resume held to the
 * first one's --prescreen), and at the end the campaign receipt. */
#include <stdlib.h>
#include <string.h>

#include "base/home.h"
#include "base/confine.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "campaign/manifest.h"
#include "campaign/matrix.h"
#include "campaign/plan.h"
#include "base/runroot.h"
#include "account/receipt.h"
#include "runner_int.h"
#include "worker.h"

/* run.json: how this run was started and resumed (sealed with it), with
 * this invocation's scratch folder (so that a resume after a kill removes
 * it), what a resume tidied (tidy.h), how its workers were confined
 * (confine.h), and the shard it ran ("K/N"; NULL: the whole matrix). */
int runner_record_invocation(const char *root, int argc, const char **argv, int resume, const char *shard,
		      const char *scratch, json_t *tidied, const struct cb_confine *confine, struct cb_err *err)
{
	char *path = cb_path_join(root, CB_RUN_RUN), now[32], how[CB_CONFINE_HOW_MAX];
	json_t *j = NULL, *args = json_array(), *inv;
	int i, rc;

	cb_now_utc(now);
	for (i = 0; i < argc; i++)
		json_array_append_new(args, json_string(argv[i]));
	if (resume && path && cb_exists(path))
		j = cb_json_load_file(path, err);
	if (!j) {
		j = cb_receipt_new("caliber.run/1");
		json_object_set_new(j, "invocations", json_array());
	}
	cb_confine_describe(confine, how, sizeof(how));
	inv = json_pack("{s:s, s:o, s:b, s:s, s:s, s:s, s:O, s:s, s:s, s:i}", "started", now, "argv", args, "resume",
			resume, "caliber_version", cb_version(), "caliber_commit", cb_commit(), "scratch", scratch,
			"tidied", tidied, "workers", how, "confinement", cb_confine_mode_name(confine->mode),
			"landlock_abi", confine->abi);
	if (shard)
		json_object_set_new(inv, "shard", json_string(shard));
	json_array_append_new(json_object_get(j, "invocations"), inv);
	rc = path ? cb_receipt_write(path, j, err) : cb_fail(err, "out of memory");
	json_decref(j);
	free(path);
	return rc;
}

/* --resume runs as the run started: with --prescreen when its first
 * invocation (run.json) had it, else without, so that the campaign receipt
 * can say which of the two the run was. */
int runner_same_prescreen(const char *root, int prescreen, struct cb_err *err)
{
	char *path = cb_path_join(root, CB_RUN_RUN);
	json_t *j = path ? cb_json_load_file(path, err) : NULL;
	const json_t *args = json_object_get(json_array_get(json_object_get(j, "invocations"), 0), "argv"), *a;
	size_t i;
	int first = 0, rc = -1;

	if (!path)
		cb_fail(err, "out of memory");
	else if (j) {
		json_array_foreach(args, i, a)
			first |= json_is_string(a) && strcmp(json_string_value(a), "--prescreen") == 0;
		rc = first == prescreen ? 0 : cb_fail(err, "--resume: %s started %s --prescreen; resume it the same way",
						       root, first ? "with" : "without");
	}
	json_decref(j);
	free(path);
	return rc;
}

/* The manifest's timer for the campaign receipt, which holds no reals:
 * throttle_floor as throttle_floor_ppm, sessions and max_sessions as run. */
static json_t *timer_json(const struct cb_manifest *m)
{
	json_t *t = json_deep_copy(json_object_get(m->doc, "timer"));

	json_object_del(t, "throttle_floor");
	json_object_set_new(t, "throttle_floor_ppm", json_integer(cb_ppm(m->throttle_floor)));
	json_object_set_new(t, "sessions", json_integer(m->sessions));
	json_object_set_new(t, "max_sessions", json_integer(m->max_sessions));
	return t;
}

/* How the worker processes lived, for the campaign receipt: the mode, how
 * many each cell kept started ahead, and what the outer level of the
 * bootstrap samples under that mode (docs/formats.md, "Statistics"). */
static json_t *worker_json(const struct cb_worker_ctx *ctx)
{
	static const char *const unit[] = { "worker-process", "session-in-persistent-process", "worker-process" };

	return json_pack("{s:s, s:i, s:s, s:s}", "mode", cb_worker_mode_name(ctx->mode), "prestart", ctx->prestart,
			 "session_unit", unit[ctx->mode], "preload", ctx->preload);
}

/* The campaign receipt; a shard's also names its shard (shard.h). */
int runner_write_campaign(struct runner *rn, struct cb_preflight *pf, const struct cb_task_result *res,
		   const char *selection, const struct cb_shard *shard, struct cb_err *err)
{
	const struct cb_manifest *m = rn->ctx.m;
	char *path = cb_path_join(rn->root, CB_RUN_CAMPAIGN), *mx = cb_path_join(rn->root, CB_RUN_MATRIX);
	char msha[CB_SHA256_HEX], now[32];
	json_t *j = cb_receipt_new(CB_CAMPAIGN_SCHEMA), *tasks = json_array(), *counts = json_object(),
	       *plan = json_array(), *cells = json_object(), *inv = NULL;
	size_t i;
	int rc;

	cb_now_utc(now);
	for (i = 0; i < rn->ntasks; i++) {
		char v[2] = { res[i].verdict, 0 };
		json_array_append_new(tasks, cb_task_result_json(&res[i]));
		json_object_set_new(counts, v, json_integer(cb_json_int(counts, v, 0) + 1));
	}
	for (i = 0; i < rn->ctx.nplugins; i++)
		json_array_append_new(plan, json_string(rn->ctx.plugins[i]));
	if (!path || !mx || cb_sha256_file(mx, msha, err) < 0) {
		if (!path || !mx)
			cb_fail(err, "out of memory");
		free(path);
		free(mx);
		json_decref(j);
		json_decref(tasks);
		json_decref(counts);
		json_decref(plan);
		json_decref(cells);
		return -1;
	}
	inv = json_deep_copy(json_object_get(m->doc, "sources"));
	json_object_set_new(j, "campaign", json_string(m->campaign));
	json_object_set_new(j, "selection", json_string(selection));
	json_object_set_new(j, "manifest_sha256", json_string(m->sha256));
	json_object_set_new(j, "matrix_sha256", json_string(msha));
	json_object_set_new(j, "inventory_sha256", json_string(cb_json_str(pf->matrix, "inventory_sha256")));
	json_object_set_new(j, "sources", inv);
	for (i = 0; i < CB_NROLES; i++)
		json_object_set_new(cells, m->cells[i].name, cb_worker_compiler_json(&rn->ctx, &m->cells[i]));
	json_object_set_new(j, "roots", json_pack("{s:s, s:s, s:s, s:o}", "compiler", rn->ctx.build_root, "corpus",
						  rn->ctx.corpus, "harness", cb_home(), "cells", cells));
	json_object_set_new(j, "device", json_pack("{s:s, s:s, s:O}", "backend", rn->ctx.backend->name,
		rn->ctx.backend->visibility_env, rn->ctx.device, "manifest", json_object_get(m->doc, "device")));
	json_object_set_new(j, "timer", timer_json(m));
	json_object_set_new(j, "bootstrap", json_pack("{s:i}", "resamples", CB_BOOTSTRAP_RESAMPLES));
	json_object_set_new(j, "plan", plan);
	json_object_set_new(j, "worker", worker_json(&rn->ctx));
	json_object_set_new(j, "prescreen", json_boolean(rn->prescreen));
	json_object_set_new(j, "preflight", json_incref(pf->results));
	json_object_set_new(j, "launch_floor", json_integer(m->launch_floor));
	json_object_set_new(j, "thresholds", json_pack("{s:I, s:I, s:I}", "gain_ppm", (json_int_t)cb_ppm(m->gain),
		"regression_ppm", (json_int_t)cb_ppm(m->regression), "confidence_ppm", (json_int_t)cb_ppm(m->confidence)));
	json_object_set_new(j, "production_default_policy", json_string(m->policy));
	json_object_set_new(j, "status", json_string("complete"));
	json_object_set_new(j, "finished", json_string(now));
	json_object_set_new(j, "verdicts", counts);
	json_object_set_new(j, "tasks", tasks);
	rc = 0;
	if (shard->n) {
		json_t *sh = cb_shard_receipt(shard, rn->tasks, rn->root, err);
		rc = sh ? json_object_set_new(j, "shard", sh) : -1;
	}
	if (rc == 0)
		rc = cb_receipt_write(path, j, err);
	json_decref(j);
	free(path);
	free(mx);
	return rc;
}
