/* merge.c: shards of one frozen campaign into one sealed run root. Every
 * check runs before anything is written; the copy of each shard happens
 * in the read that verifies its seal (seal.h's observer), and the merged
 * seal takes the digests of the copied files from the shards' verified
 * seals, so a merge reads each byte once. */
#include "merge.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "seal/fixed.h"
#include "base/fsutil.h"
#include "seal/guard.h"
#include "base/jsonio.h"
#include "preflight.h"
#include "account/receipt.h"
#include "seal/seal.h"
#include "campaign/shard.h"
#include "base/sha.h"
#include "seal/sign.h"
#include "base/walk.h"
#include "base/runroot.h"
#include "base/strindex.h"

/* One shard given on the command line. */
struct shard_in {
	const char *root;
	char *resolved;              /* symlink-free, to find one given twice */
	json_t *campaign;            /* its campaign receipt */
	struct cb_shard s;
};

/* A file of the merged root whose digest a shard's verified seal gives. */
struct known {
	char *rel;
	char hex[CB_SHA256_HEX];
};

struct merge {
	const struct cb_merge_opts *o;
	struct shard_in *in;         /* by shard index once checked */
	size_t n;
	char *tmp;                   /* the merged root while it is built */
	size_t cur;                  /* the shard being copied */
	pthread_mutex_t lock;        /* guards failed and err (copy callbacks run on several threads) */
	pthread_mutex_t dirs;        /* held while a folder of the merged root is made */
	int failed;
	struct cb_err err;
	struct known *known;
	size_t nknown;
};

/* What every shard's campaign receipt must hold alike: the frozen
 * campaign, and what follows from it and the backend. */
static const char *const common_keys[] = { "campaign", "selection", "manifest_sha256", "matrix_sha256",
					   "inventory_sha256", "sources", "timer", "bootstrap", "plan", "launch_floor",
					   "thresholds", "production_default_policy", "prescreen", NULL };

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

	for (i = 0; common_keys[i]; i++)
		if (!same_key(a->campaign, b->campaign, common_keys[i]))
			return cb_fail(err, "%s: a foreign shard: its %s differs from that of %s", b->root, common_keys[i],
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
static const struct cb_guard output_guard = { "--output-root", NULL, NULL };

static int check_output(const struct merge *mg, struct cb_err *err)
{
	const char *out = mg->o->output;

	if (cb_exists(out))
		return cb_fail(err, "--output-root %s exists; merge writes a new run root", out);
	return cb_guard_check(&output_guard, out, err);
}

/* Every check of the shards and the output, before anything is written:
 * each given shard loads; none is given twice or belongs to another
 * campaign; none of 1..N is missing; each holds what the deal gives it and
 * nothing else; each is signed as --key asks; --sign-key can sign. */
static int check_shards(struct merge *mg, struct cb_err *err)
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
	for (i = 0; common_keys[i]; i++)
		json_object_set(j, common_keys[i], json_object_get(ref, common_keys[i]));
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
	if (check_shards(&mg, err) < 0)
		goto out;
	anc = cb_existing_ancestor(o->output);
	mg.tmp = cb_strdupf("%s.tmp.XXXXXX", o->output);
	if (!anc || !mg.tmp) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (cb_guard_mkdir_parent(&output_guard, o->output, 0755, err) < 0)
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
