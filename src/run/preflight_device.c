/* preflight_device.c: the preflight checks of the device and of what runs
 * on it: device-count (the one visible device, and that it is the one the
 * manifest names), targets (every task's tests collect) and device-idle
 * (no other process on the device). preflight.c holds the table. */
#include "preflight.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "preflight_int.h"

/* Whether the device called seen is the one the manifest names: want
 * itself or want followed by a space and more ("NVIDIA H100" names
 * "NVIDIA H100 80GB HBM3"). */
static int device_named(const char *want, const char *seen)
{
	size_t n = strlen(want);

	return strncmp(want, seen, n) == 0 && (seen[n] == '\0' || seen[n] == ' ');
}

/* The one visible device, and when the manifest names it (device.name),
 * that it is that device: a campaign pinned to one GPU must not run on
 * another and say nothing (the device's own name comes from the backend's
 * device_name command; a backend without one says it cannot check). */
int preflight_check_device_count(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	const struct cb_backend *b = pf->w->backend;
	const char *want = pf->w->m->device_name;
	char *out = NULL, *name = NULL;
	int rc = 0;

	if (preflight_backend_command(pf, b->count_devices, 300000, &out, err) < 0)
		return -1;
	if (strcmp(preflight_chomp(out), "1") != 0) {
		rc = cb_fail(err, "%s=%s shows %s devices, expected exactly 1", b->visibility_env, pf->w->device, out);
	} else if (want && b->device_name) {
		if (preflight_backend_command(pf, b->device_name, 300000, &name, err) < 0)
			rc = cb_prefix(err, "device_name");
		else if (!device_named(want, preflight_chomp(name)))
			rc = cb_fail(err, "the manifest's device.name is '%s', the device visible with %s=%s is '%s' "
				     "(measure on that device, or name this one in device.name)",
				     want, b->visibility_env, pf->w->device, name);
		else
			cb_buf_addf(ok, "1 device visible with %s=%s: %s, as device.name says", b->visibility_env,
				    pf->w->device, name);
	} else {
		cb_buf_addf(ok, "1 device visible with %s=%s%s", b->visibility_env, pf->w->device,
			    want ? "; device.name not checked: the backend has no device_name command" : "");
	}
	free(out);
	free(name);
	return rc;
}

/* The file part of a node id or file argument. */
static char *file_of(const char *arg)
{
	const char *sep = strstr(arg, "::");

	return sep ? strndup(arg, (size_t)(sep - arg)) : strdup(arg);
}

/* How many of a task's correctness arguments are the workload's
 * correctness.options, which the matrix puts before the file (FlagGems'
 * --quick): the file is the argument after them. */
static size_t corr_options(const struct cb_preflight *pf, const json_t *task)
{
	json_int_t w = json_integer_value(json_object_get(task, "workload"));

	return w >= 0 && (size_t)w < pf->w->m->nworkloads ? pf->w->m->workloads[w].ncorr_options : 0;
}

/* The queries of the targets check, one per task and phase
 * ({"id": "<task>/<phase>", "args": [...]}); each file a selection names
 * must exist in the corpus, and every one that does not is named in why. */
static json_t *target_queries(struct cb_preflight *pf, struct cb_buf *why)
{
	static const char *const keys[] = { "benchmark_args", "correctness_args" };
	json_t *queries = json_array(), *task;
	size_t t;
	int k;

	json_array_foreach(json_object_get(pf->matrix, "tasks"), t, task) {
		for (k = 0; k < 2; k++) {
			const json_t *args = json_object_get(task, keys[k]);
			const char *first = json_string_value(json_array_get(args, k ? corr_options(pf, task) : 0));
			char *file = first ? file_of(first) : NULL, *abs = file ? cb_path_join(pf->w->corpus, file) : NULL;

			if (!abs || !cb_exists(abs))
				cb_buf_addf(why, "%stask %s %s: no file %s in the corpus", why->len ? "; " : "",
					    cb_json_str(task, "id"), k ? "correctness" : "benchmark", file ? file : "?");
			free(file);
			free(abs);
			json_array_append_new(queries, json_pack("{s:o, s:O}", "id", json_sprintf("%s/%s",
				cb_json_str(task, "id"), k ? "correctness" : "benchmark"), "args", args));
		}
	}
	return queries;
}

/* What the collector found for each query, the failures into why. */
static void target_results(const json_t *queries, const json_t *res, struct cb_buf *why)
{
	const json_t *q;
	size_t t;

	json_array_foreach(queries, t, q) {
		const char *id = cb_json_str(q, "id");
		const json_t *r = json_object_get(json_object_get(res, "queries"), id);
		const json_t *missing = json_object_get(r, "missing"), *errors = json_object_get(r, "errors");
		char *args = json_dumps(json_object_get(q, "args"), JSON_COMPACT);
		const char *sep = why->len ? "; " : "";

		/* A test that is not found because its file failed to collect
		 * is named with that failure: it is the cause. */
		if (json_array_size(missing) && json_array_size(errors))
			cb_buf_addf(why, "%s%s: %s not found (collecting: %s)", sep, id,
				    json_string_value(json_array_get(missing, 0)), json_string_value(json_array_get(errors, 0)));
		else if (json_array_size(missing))
			cb_buf_addf(why, "%s%s: %s not found", sep, id, json_string_value(json_array_get(missing, 0)));
		else if (json_array_size(errors))
			cb_buf_addf(why, "%s%s: %s", sep, id, json_string_value(json_array_get(errors, 0)));
		else if (cb_json_int(r, "count", 0) < 1)
			cb_buf_addf(why, "%s%s: no test selected by %s", sep, id, args ? args : "?");
		free(args);
	}
}

int preflight_check_targets(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	char *qpath = cb_path_join(pf->w->scratch, "targets-queries.json");
	char *rpath = cb_path_join(pf->w->scratch, "targets-result.json");
	struct cb_buf why = CB_BUF_INIT;
	json_t *queries = NULL, *res = NULL, *q = NULL;
	char *out = NULL;
	int rc = -1;

	if (!qpath || !rpath) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (!pf->matrix) {
		cb_fail(err, "no bound task matrix to take targets from");
		goto out;
	}
	queries = target_queries(pf, &why);
	if (why.len) {
		cb_fail(err, "%s", why.data);
		goto out;
	}
	q = json_pack("{s:O}", "queries", queries);
	if (cb_json_write_atomic(qpath, q, 0644, err) < 0) {
		cb_prefix(err, "cannot write the queries");
		goto out;
	}
	{
		const char *argv[] = { pf->python, "-m", "caliber_pytest.collect", pf->w->corpus, qpath, rpath,
				       NULL };
		if (preflight_capture_in_cell(pf, cb_manifest_cell(pf->w->m, CB_ROLE_BASELINE), argv, 600000, &out, err) < 0)
			goto out;
	}
	res = cb_json_load_file(rpath, err);
	if (!res) {
		cb_prefix(err, "collector wrote no result");
		goto out;
	}
	target_results(queries, res, &why);
	if (why.len) {
		cb_fail(err, "%s", why.data);
		goto out;
	}
	cb_buf_addf(ok, "%zu selections resolve in %s (one collection)", json_array_size(queries), pf->w->corpus);
	rc = 0;
out:
	cb_buf_release(&why);
	json_decref(q);
	json_decref(res);
	json_decref(queries);
	free(out);
	free(qpath);
	free(rpath);
	return rc;
}

int preflight_check_device_idle(struct cb_preflight *pf, struct cb_buf *ok, struct cb_err *err)
{
	char *out = NULL;
	int rc = 0;

	if (preflight_backend_command(pf, pf->w->backend->list_processes, 60000, &out, err) < 0)
		return -1;
	if (*preflight_chomp(out)) {
		preflight_first_line(out);
		rc = cb_fail(err, "other processes on the device: %s", out);
	} else {
		cb_buf_adds(ok, "no other process on the device");
	}
	free(out);
	return rc;
}
