/* merge.c: shards of one frozen campaign into one sealed run root. Every
 * check runs before anything is written; the copy of each shard happens
 * in the read that verifies its seal (seal.h's observer), and the merged
 * seal takes the digests of the copied files from the shards' verified
 * seals, so a merge reads each byte once. The checks of the shards and the
 * output root are merge_check.c. */
#include "merge.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "preflight.h"
#include "account/receipt.h"
#include "seal/seal.h"
#include "base/sha.h"
#include "base/walk.h"
#include "base/runroot.h"
#include "base/strindex.h"
#include "merge_int.h"

/* Where a shard's file goes in the merged root: tasks/ and interrupted/
 * keep their paths (tasks are disjoint across shards); the frozen campaign
 * comes from the first shard only; the shard's verdict matrix is replaced
 * by the merged one; the rest of its top (campaign.json, run.json) goes to
 * shards/<K>/. NULL: not copied (or out of memory, with *oom set). */
static char *dest_of(const char *rel, size_t k, int *oom)
{
	static const char *const frozen[] = { CB_RUN_MANIFEST, CB_RUN_MATRIX, CB_FROZEN_INVENTORY, NULL };
	char *d = NULL;
	size_t i;

	*oom = 0;
	if (strncmp(rel, CB_RUN_TASKS "/", sizeof(CB_RUN_TASKS)) == 0 || strncmp(rel, "interrupted/", 12) == 0) {
		d = strdup(rel);
	} else if (strcmp(rel, CB_RUN_MATRIX_CSV) == 0 || strcmp(rel, CB_RUN_MATRIX_MD) == 0) {
		return NULL;
	} else {
		for (i = 0; frozen[i]; i++)
			if (strcmp(rel, frozen[i]) == 0)
				return k == 1 ? (*oom = !(d = strdup(rel)), d) : NULL;
		d = cb_strdupf("shards/%zu/%s", k, rel);
	}
	*oom = !d;
	return d;
}

/* The first failure of a copy, kept for the message: "PATH: WHAT: why". */
static void copy_failed(struct merge *mg, const char *path, const char *what, int e)
{
	pthread_mutex_lock(&mg->lock);
	if (!mg->failed) {
		mg->failed = 1;
		cb_fail(&mg->err, "%s: %s: %s", path, what, strerror(e));
	}
	pthread_mutex_unlock(&mg->lock);
}

/* One file being copied. */
struct copy {
	struct merge *mg;
	int fd;
	int write_errno;             /* the first write error, 0 if none */
	char *dst;
};

/* mkdir -p of the folder that holds path, made from the deepest folder
 * that exists down (a merged root has a thousand folders; starting each
 * from / would cost a dozen system calls a file). */
static int make_parent(char *path)
{
	char *slash = strrchr(path, '/');
	int rc;

	if (!slash || slash == path)
		return 0;
	*slash = '\0';
	rc = mkdir(path, 0755);
	if (rc < 0 && errno == ENOENT && make_parent(path) == 0)
		rc = mkdir(path, 0755);
	if (rc < 0 && errno == EEXIST)
		rc = 0;
	*slash = '/';
	return rc;
}

/* Link src at dst (a sealed file is read-only, so a link and a copy cannot
 * differ, and a link costs no read or write), making dst's folder when it
 * is missing. Returns 0, or -1 with errno (EXDEV and the like: copy it). */
static int link_file(struct merge *mg, const char *src, char *dst)
{
	int rc;

	if (link(src, dst) == 0)
		return 0;
	if (errno != ENOENT)
		return -1;
	/* One thread at a time makes folders: hashing threads racing for the
	 * same parent spend more in the file system's locks than serially. */
	pthread_mutex_lock(&mg->dirs);
	rc = make_parent(dst);
	pthread_mutex_unlock(&mg->dirs);
	return rc < 0 ? -1 : link(src, dst);
}

/* Observer begin: link the file into the merged root; where it cannot be
 * linked (another file system), create its copy for the bytes verify reads
 * (O_EXCL, so that two shards holding one path fail rather than overwrite
 * each other). */
static void *copy_begin(const char *rel, void *ctx)
{
	struct merge *mg = ctx;
	struct copy *c;
	int oom, linked;
	char *d = dest_of(rel, mg->in[mg->cur].s.k, &oom), *dst = d ? cb_path_join(mg->tmp, d) : NULL;
	char *src = dst ? cb_path_join(mg->in[mg->cur].root, rel) : NULL;

	free(d);
	if (!src) {
		if (oom || d)
			copy_failed(mg, rel, "cannot copy", ENOMEM);
		free(dst);
		return NULL;
	}
	linked = link_file(mg, src, dst) == 0 ? 0 : errno;
	free(src);
	if (linked == 0 || linked == EEXIST) {
		if (linked == EEXIST)
			copy_failed(mg, dst, "held by two shards", EEXIST);
		free(dst);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		copy_failed(mg, dst, "cannot copy", ENOMEM);
		free(dst);
		return NULL;
	}
	c->mg = mg;
	c->dst = dst;
	c->fd = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (c->fd < 0) {
		copy_failed(mg, dst, errno == EEXIST ? "held by two shards" : "cannot create", errno);
		free(c->dst);
		free(c);
		return NULL;
	}
	return c;
}

/* Observer chunk: write the bytes verify hashed. */
static void copy_chunk(void *state, const char *p, size_t n)
{
	struct copy *c = state;

	while (n && !c->write_errno) {
		ssize_t w = write(c->fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			c->write_errno = errno;
			break;
		}
		p += w;
		n -= (size_t)w;
	}
}

/* Observer end: close the copy; a short read or a failed write fails the
 * merge. */
static void copy_end(void *state, int ok, void *ctx)
{
	struct copy *c = state;

	(void)ctx;
	if (close(c->fd) < 0 && !c->write_errno)
		c->write_errno = errno;
	if (c->write_errno)
		copy_failed(c->mg, c->dst, "write", c->write_errno);
	else if (!ok)
		copy_failed(c->mg, c->dst, "short read", EIO);
	free(c->dst);
	free(c);
}

/* The path of a known digest, for cb_lower_bound. */
static const char *known_rel(const void *k)
{
	return ((const struct known *)k)->rel;
}

/* The digest of rel in the merged root, when a shard's seal gives it. */
static const char *known_digest(const char *rel, void *ctx)
{
	const struct merge *mg = ctx;
	size_t i = cb_lower_bound(mg->known, mg->nknown, sizeof(*mg->known), known_rel, rel);

	return i < mg->nknown && strcmp(mg->known[i].rel, rel) == 0 ? mg->known[i].hex : NULL;
}

static int cmp_known(const void *a, const void *b)
{
	return strcmp(((const struct known *)a)->rel, ((const struct known *)b)->rel);
}

/* Once shard k's seal is known to hold: the digests of the files copied
 * from it, from its SHA256SUMS (the len bytes at sums, read from path),
 * for the merged seal. */
static int add_known(struct merge *mg, const char *path, const char *sums, size_t len, size_t k,
		     struct cb_err *err)
{
	struct cb_sums lines = { NULL, 0 };
	struct known *v;
	size_t i;
	int oom = 0;

	if (cb_sums_parse(sums, len, path, &lines, err) < 0)
		return -1;
	v = realloc(mg->known, (mg->nknown + lines.n + 1) * sizeof(*v));
	if (!v) {
		cb_sums_release(&lines);
		return cb_fail(err, "out of memory");
	}
	mg->known = v;
	for (i = 0; i < lines.n && !oom; i++) {
		char *d = dest_of(lines.v[i].rel, k, &oom);
		if (!d)
			continue;
		v[mg->nknown].rel = d;
		memcpy(v[mg->nknown].hex, lines.v[i].hex, CB_SHA256_HEX);
		mg->nknown++;
	}
	cb_sums_release(&lines);
	return oom ? cb_fail(err, "out of memory") : 0;
}

/* Copy shard k into the merged root while its seal is verified; then take
 * the digests of what was copied from that seal, and its SHA256SUMS as
 * shards/<K>/SHA256SUMS. */
/* The folders of a shard's tasks/ and interrupted/ that hold nothing
 * (listing is the verified tree, sorted, folders included): made in the
 * merged root too, which links only files, so that it holds the shard's
 * trees exactly. */
static int empty_folders(struct merge *mg, const struct cb_tree *listing, struct cb_err *err)
{
	size_t i;

	for (i = 0; i < listing->n; i++) {
		const char *rel = listing->v[i].rel;
		size_t len = strlen(rel);
		char *dst;
		int rc, e;

		if (listing->v[i].kind != CB_ENT_DIR ||
		    (strncmp(rel, CB_RUN_TASKS "/", sizeof(CB_RUN_TASKS)) != 0 && strncmp(rel, "interrupted/", 12) != 0) ||
		    (i + 1 < listing->n && strncmp(listing->v[i + 1].rel, rel, len) == 0 && listing->v[i + 1].rel[len] == '/'))
			continue;
		dst = cb_strdupf("%s/%s/.", mg->tmp, rel);
		rc = dst ? make_parent(dst) : -1;
		e = dst ? errno : ENOMEM;
		free(dst);
		if (rc < 0)
			return cb_fail(err, "%s/%s: cannot make the folder: %s", mg->tmp, rel, strerror(e));
	}
	return 0;
}

static int copy_shard(struct merge *mg, size_t k, struct cb_err *err)
{
	struct cb_tree listing = { NULL, 0 };
	const struct cb_verify_observer obs = { copy_begin, copy_chunk, copy_end, mg, &listing };
	const struct shard_in *in = &mg->in[k];
	char *src = cb_path_join(in->root, CB_SUMS_FILE), *dst = cb_strdupf("%s/shards/%zu/%s", mg->tmp, in->s.k, CB_SUMS_FILE);
	char *buf = NULL;
	size_t len = 0;
	int rc = -1;

	mg->cur = k;
	if (!src || !dst) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_verify_or_fail_observed(in->root, &obs, err) < 0) {
		cb_prefix(err, "shard %zu/%zu", in->s.k, in->s.n);
		goto out;
	}
	if (mg->failed) {
		*err = mg->err;
		goto out;
	}
	if (empty_folders(mg, &listing, err) < 0 || cb_read_file(src, &buf, &len, err) < 0 ||
	    add_known(mg, src, buf, len, in->s.k, err) < 0 ||
	    cb_write_atomic(dst, buf, len, 0444, err) < 0)
		goto out;
	rc = 0;
out:
	cb_tree_release(&listing);
	free(buf);
	free(src);
	free(dst);
	return rc;
}

/* The task results of the merged root, in matrix order, from the task
 * receipts copied into it. */
static int load_results(const struct merge *mg, const json_t *tasks, struct cb_task_result *res,
			struct cb_err *err)
{
	const json_t *t;
	size_t i;

	json_array_foreach(tasks, i, t) {
		char *path = cb_strdupf("%s/" CB_RUN_TASKS "/%s/" CB_RUN_TASK, mg->tmp, cb_json_str(t, "id"));
		int rc = path ? cb_task_result_load(path, &res[i], err) : cb_fail(err, "out of memory");
		free(path);
		if (rc < 0)
			return cb_prefix(err, "task %s", cb_json_str(t, "id"));
	}
	return 0;
}

/* One shard as the merged campaign receipt lists it. */
static json_t *shard_entry(const struct shard_in *in, struct cb_err *err)
{
	const json_t *c = in->campaign, *sh = json_object_get(c, "shard");
	char *sums = cb_path_join(in->root, CB_SUMS_FILE), hex[CB_SHA256_HEX];
	json_t *e = NULL;

	if (sums && cb_sha256_file(sums, hex, err) == 0)
		e = json_pack("{s:I, s:I, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:O, s:s}", "index", (json_int_t)in->s.k,
			      "count", (json_int_t)in->s.n, "host", json_object_get(sh, "host"), "started",
			      json_object_get(sh, "started"), "finished", json_object_get(c, "finished"), "tasks",
			      json_object_get(sh, "tasks"), "device", json_object_get(c, "device"), "roots",
			      json_object_get(c, "roots"), "worker", json_object_get(c, "worker"), "preflight",
			      json_object_get(c, "preflight"), "seal_sha256", hex);
	if (!e && sums)
		cb_fail(err, "%s: campaign receipt: host, started, finished, device, roots, worker and preflight are required",
			in->root);
	else if (!sums)
		cb_fail(err, "out of memory");
	free(sums);
	return e;
}

/* The merged campaign receipt: what the shards share, the verdicts of all
 * tasks in matrix order, and every shard with its host, device and times. */
static int write_campaign(const struct merge *mg, const struct cb_task_result *res, size_t n,
			  const char *started, struct cb_err *err)
{
	const json_t *ref = mg->in[0].campaign, *dev = json_object_get(ref, "device");
	json_t *j = cb_receipt_new(CB_CAMPAIGN_SCHEMA), *tasks = json_array(), *counts = json_object(),
	       *shards = json_array(), *args = json_array();
	char *path = cb_path_join(mg->tmp, CB_RUN_CAMPAIGN), now[32];
	size_t i;
	int rc = -1;

	for (i = 0; i < n; i++) {
		char v[2] = { res[i].verdict, 0 };
		json_array_append_new(tasks, cb_task_result_json(&res[i]));
		json_object_set_new(counts, v, json_integer(cb_json_int(counts, v, 0) + 1));
	}
	for (i = 0; i < mg->n; i++) {
		json_t *e = shard_entry(&mg->in[i], err);
		if (!e)
			goto out;
		json_array_append_new(shards, e);
	}
	for (i = 0; i < (size_t)mg->o->argc; i++)
		json_array_append_new(args, json_string(mg->o->argv[i]));
	for (i = 0; merge_common_keys[i]; i++)
		json_object_set(j, merge_common_keys[i], json_object_get(ref, merge_common_keys[i]));
	cb_now_utc(now);
	json_object_set_new(j, "device", json_pack("{s:O, s:O}", "backend", json_object_get(dev, "backend"),
						   "manifest", json_object_get(dev, "manifest")));
	json_object_set_new(j, "status", json_string("complete"));
	json_object_set_new(j, "finished", json_string(now));
	json_object_set_new(j, "merge", json_pack("{s:s, s:o}", "started", started, "argv", args));
	args = NULL;
	json_object_set_new(j, "shards", shards);
	shards = NULL;
	json_object_set_new(j, "verdicts", counts);
	counts = NULL;
	json_object_set_new(j, "tasks", tasks);
	tasks = NULL;
	rc = path ? cb_receipt_write(path, j, err) : cb_fail(err, "out of memory");
out:
	json_decref(j);
	json_decref(tasks);
	json_decref(counts);
	json_decref(shards);
	json_decref(args);
	free(path);
	return rc;
}

/* Build the merged root in mg->tmp: every shard copied and verified, the
 * campaign receipt, the verdict matrix, the seal. */
static int build(struct merge *mg, const char *started, struct cb_err *err)
{
	struct cb_known_digests known = { known_digest, mg };
	struct cb_task_result *res = NULL;
	char *mpath = NULL;
	json_t *mx = NULL;
	const json_t *tasks;
	size_t k, n = 0, i;
	int rc = -1;

	for (k = 0; k < mg->n; k++) {
		if (copy_shard(mg, k, err) < 0)
			return -1;
		if (!mg->o->quiet)
			printf("merge: shard %zu/%zu: seal holds, copied from %s\n", mg->in[k].s.k, mg->in[k].s.n,
			       mg->in[k].root);
	}
	qsort(mg->known, mg->nknown, sizeof(*mg->known), cmp_known);
	mpath = cb_path_join(mg->tmp, CB_RUN_MATRIX);
	mx = mpath ? cb_json_load_file(mpath, err) : NULL;
	if (!mx)
		goto out;
	tasks = json_object_get(mx, "tasks");
	n = json_array_size(tasks);
	res = calloc(n ? n : 1, sizeof(*res));
	if (!res) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (load_results(mg, tasks, res, err) < 0 || write_campaign(mg, res, n, started, err) < 0 ||
	    cb_write_verdict_matrix(mg->tmp, res, n, err) < 0 || cb_seal_known(mg->tmp, &known, mg->o->sign_key, err) < 0)
		goto out;
	rc = 0;
out:
	for (i = 0; res && i < n; i++)
		cb_task_result_release(&res[i]);
	free(res);
	json_decref(mx);
	free(mpath);
	return rc;
}

/* Remove the folders made above out, up to (not including) the one that
 * existed before. */
static void remove_made_parents(const char *out, const char *existed)
{
	char *p = strdup(out), *slash;

	while (p && (slash = strrchr(p, '/')) != NULL && slash != p) {
		*slash = '\0';
		if (strcmp(p, existed) == 0 || rmdir(p) < 0)
			break;
	}
	free(p);
}

int cb_merge(const struct cb_merge_opts *o, struct cb_err *err)
{
	struct merge mg;
	struct cb_err ignored;
	char started[32], *anc = NULL;
	size_t i;
	int rc = -1;

	memset(&mg, 0, sizeof(mg));
	cb_now_utc(started);
	mg.o = o;
	mg.n = o->nshards;
	mg.in = calloc(mg.n ? mg.n : 1, sizeof(*mg.in));
	pthread_mutex_init(&mg.lock, NULL);
	pthread_mutex_init(&mg.dirs, NULL);
	if (!mg.in) {
		cb_fail(err, "out of memory");
		goto out;
	}
	for (i = 0; i < mg.n; i++)
		mg.in[i].root = o->shards[i];
	if (mg.n == 0) {
		cb_fail(err, "no shard to merge");
		goto out;
	}
	if (merge_check_shards(&mg, err) < 0)
		goto out;
	anc = cb_existing_ancestor(o->output);
	mg.tmp = cb_strdupf("%s.tmp.XXXXXX", o->output);
	if (!anc || !mg.tmp) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_guard_mkdir_parent(&merge_output_guard, o->output, 0755, err) < 0)
		goto out;
	if (!mkdtemp(mg.tmp)) {
		cb_fail(err, "%s: cannot create the run root: %s", o->output, strerror(errno));
		free(mg.tmp);
		mg.tmp = NULL;
		goto out;
	}
	if (build(&mg, started, err) < 0)
		goto out;
	if (rename(mg.tmp, o->output) < 0) {
		cb_fail(err, "%s: cannot create the run root: %s", o->output, strerror(errno));
		goto out;
	}
	free(mg.tmp);
	mg.tmp = NULL;
	if (!o->quiet)
		printf("merge: %zu shards, sealed %s\n", mg.n, o->output);
	rc = 0;
out:
	if (mg.tmp)
		cb_rm_rf(mg.tmp, &ignored);
	if (rc < 0 && anc)
		remove_made_parents(o->output, anc);
	for (i = 0; mg.in && i < mg.n; i++) {
		free(mg.in[i].resolved);
		json_decref(mg.in[i].campaign);
	}
	for (i = 0; i < mg.nknown; i++)
		free(mg.known[i].rel);
	free(mg.known);
	free(mg.in);
	free(mg.tmp);
	free(anc);
	pthread_mutex_destroy(&mg.lock);
	pthread_mutex_destroy(&mg.dirs);
	return rc;
}
