/* shard.c: dealing a frozen matrix's tasks into shards, and the shard's
 * record in its campaign receipt and run.json. */
#include "shard.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/runroot.h"
#include "base/fsutil.h"
#include "base/jsonio.h"

/* A decimal count of at most CB_SHARD_MAX, no sign, blank or leading zero
 * (a shard has one name: "01/02" would be a second one for "1/2", which
 * run.json and the merge compare as text); -1 if not. */
static long long count_of(const char *s, size_t len)
{
	long long v = 0;
	size_t i;

	if (len == 0 || len > 5 || (s[0] == '0' && len > 1))
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

int cb_shard_parse(const char *s, const char *opt, struct cb_shard *out, struct cb_err *err)
{
	const char *slash = strchr(s, '/');
	long long k = slash ? count_of(s, (size_t)(slash - s)) : -1;
	long long n = slash ? count_of(slash + 1, strlen(slash + 1)) : -1;

	memset(out, 0, sizeof(*out));
	if (k < 1 || n < 1 || k > n || n > CB_SHARD_MAX)
		return cb_fail(err, "%s: '%s' is not K/N with 1 <= K <= N <= %d", opt, s, CB_SHARD_MAX);
	out->k = (size_t)k;
	out->n = (size_t)n;
	return 0;
}

void cb_shard_name(const struct cb_shard *s, char out[32])
{
	snprintf(out, 32, "%zu/%zu", s->k, s->n);
}

/* A task's place in the deal: its budget, then its matrix position. */
struct dealt {
	long long budget;
	size_t index;
};

/* Longest first; equal budgets in matrix order. */
static int cmp_dealt(const void *a, const void *b)
{
	const struct dealt *x = a, *y = b;

	if (x->budget != y->budget)
		return x->budget > y->budget ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

int cb_shard_deal(const json_t *tasks, size_t nshards, size_t *shard_of, struct cb_err *err)
{
	size_t n = json_array_size(tasks), i, s;
	struct dealt *d;
	long long *load;

	if (nshards == 0 || nshards > n)
		return cb_fail(err, "%zu shards of a matrix of %zu task%s: a shard would be empty", nshards, n,
			       n == 1 ? "" : "s");
	d = calloc(n, sizeof(*d));
	load = calloc(nshards, sizeof(*load));
	if (!d || !load) {
		free(d);
		free(load);
		return cb_fail(err, "out of memory");
	}
	for (i = 0; i < n; i++) {
		d[i].budget = cb_json_int(json_array_get(tasks, i), "budget_s", 0);
		d[i].index = i;
	}
	qsort(d, n, sizeof(*d), cmp_dealt);
	for (i = 0; i < n; i++) {
		size_t best = 0;
		for (s = 1; s < nshards; s++)
			if (load[s] < load[best])
				best = s;
		load[best] += d[i].budget;
		shard_of[d[i].index] = best;
	}
	free(d);
	free(load);
	return 0;
}

json_t *cb_shard_tasks(const json_t *tasks, const struct cb_shard *s, struct cb_err *err)
{
	size_t n = json_array_size(tasks), i, *shard_of = calloc(n ? n : 1, sizeof(*shard_of));
	json_t *out = NULL;

	if (!shard_of) {
		cb_fail(err, "out of memory");
		return NULL;
	}
	if (cb_shard_deal(tasks, s->n, shard_of, err) == 0) {
		out = json_array();
		for (i = 0; out && i < n; i++)
			if (shard_of[i] == s->k - 1)
				json_array_append(out, json_array_get(tasks, i));
		if (!out)
			cb_fail(err, "out of memory");
	}
	free(shard_of);
	return out;
}

json_t *cb_shard_receipt(const struct cb_shard *s, const json_t *shard_tasks, const char *root,
			 struct cb_err *err)
{
	char host[256] = "", *path = cb_path_join(root, CB_RUN_RUN);
	json_t *run = path ? cb_json_load_file(path, err) : NULL, *ids, *t, *out;
	const char *started = cb_json_str(json_array_get(json_object_get(run, "invocations"), 0), "started");
	size_t i;

	if (!started) {
		if (!path)
			cb_fail(err, "out of memory");
		else if (run)
			cb_fail(err, "%s: invocations[0].started: missing", path);
		free(path);
		json_decref(run);
		return NULL;
	}
	free(path);
	if (gethostname(host, sizeof(host) - 1) < 0)
		snprintf(host, sizeof(host), "?");
	ids = json_array();
	json_array_foreach(shard_tasks, i, t)
		json_array_append_new(ids, json_string(cb_json_str(t, "id")));
	out = json_pack("{s:I, s:I, s:o, s:s, s:s}", "index", (json_int_t)s->k, "count", (json_int_t)s->n,
			"tasks", ids, "host", host, "started", started);
	json_decref(run);
	if (!out)
		cb_fail(err, "out of memory");
	return out;
}

int cb_shard_from_receipt(const json_t *campaign, const char *name, struct cb_shard *s, struct cb_err *err)
{
	const json_t *sh = json_object_get(campaign, "shard"), *ids = json_object_get(sh, "tasks"), *id;
	json_int_t k = cb_json_int(sh, "index", 0), n = cb_json_int(sh, "count", 0);
	size_t i;

	memset(s, 0, sizeof(*s));
	if (!sh)
		return 1;
	if (n < 1 || n > CB_SHARD_MAX || k < 1 || k > n || !json_is_array(ids) || !cb_json_str(sh, "host") ||
	    !cb_json_str(sh, "started"))
		return cb_fail(err, "%s: shard: not a shard record (index, count, tasks, host, started)", name);
	json_array_foreach(ids, i, id)
		if (!json_is_string(id))
			return cb_fail(err, "%s: shard.tasks[%zu]: not a task id", name, i);
	s->k = (size_t)k;
	s->n = (size_t)n;
	return 0;
}

/* How a run.json invocation's shard reads in a message. */
static const char *shard_words(const char *name)
{
	return name ? "shard " : "";
}

int cb_shard_check_resume(const char *root, const struct cb_shard *s, struct cb_err *err)
{
	char *path = cb_path_join(root, CB_RUN_RUN), mine[32];
	const char *want = NULL;
	json_t *j = NULL, *inv;
	size_t i;
	int rc = 0;

	if (!path)
		return cb_fail(err, "out of memory");
	if (!cb_exists(path)) {
		free(path);
		return 0;
	}
	j = cb_json_load_file(path, err);
	free(path);
	if (!j)
		return -1;
	if (s->n) {
		cb_shard_name(s, mine);
		want = mine;
	}
	json_array_foreach(json_object_get(j, "invocations"), i, inv) {
		const char *had = cb_json_str(inv, "shard");
		if (!had != !want || (had && strcmp(had, want) != 0)) {
			rc = cb_fail(err, "--resume: %s ran %s%s of this campaign, not %s%s", root, shard_words(had),
				     had ? had : "the whole matrix", shard_words(want), want ? want : "the whole matrix");
			break;
		}
	}
	json_decref(j);
	return rc;
}
