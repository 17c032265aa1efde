/* seal.c: SHA256SUMS, read-only trees, and `caliber verify`. */
#include "seal.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "fsutil.h"
#include "pool.h"
#include "sha.h"
#include "walk.h"

static int is_sums(const char *rel)
{
	return strcmp(rel, CB_SUMS_FILE) == 0;
}

/* Hashing is what sealing and verifying spend their time on (SHA-256 is
 * compute-bound at about 1 GB/s a core), so the regular files of a tree are
 * hashed on cb_pool_run's threads, each taking the next file from a shared
 * counter. */
struct hash_job {
	const char *root;
	const struct cb_tree *t;
	const struct cb_verify_observer *obs;  /* NULL: none */
	char (*hex)[CB_SHA256_HEX];
	atomic_size_t next;
	atomic_int failed;
	struct cb_err err;           /* the first failure */
	pthread_mutex_t lock;
};

/* The feed cb_sha256_file_fed calls: pass the block to the observer. */
struct observed {
	const struct cb_verify_observer *obs;
	void *state;
};

static void feed_observer(void *arg, const char *p, size_t n)
{
	const struct observed *o = arg;

	o->obs->chunk(o->state, p, n);
}

/* Hash one file into hex, showing its bytes to obs when obs wants them. */
static int hash_file(const char *abs, const char *rel, const struct cb_verify_observer *obs,
		     char hex[CB_SHA256_HEX], struct cb_err *err)
{
	struct observed o = { obs, obs ? obs->begin(rel, obs->ctx) : NULL };
	int rc;

	if (!o.state)
		return cb_sha256_file(abs, hex, err);
	rc = cb_sha256_file_fed(abs, hex, feed_observer, &o, err);
	obs->end(o.state, rc == 0, obs->ctx);
	return rc;
}

/* One hashing thread: take files by index until none is left or one failed. */
static void *hash_worker(void *arg)
{
	struct hash_job *job = arg;
	struct cb_err err;
	size_t i;

	while ((i = atomic_fetch_add(&job->next, 1)) < job->t->n) {
		const struct cb_entry *e = &job->t->v[i];
		char *abs;

		job->hex[i][0] = '\0';
		if (e->kind != CB_ENT_FILE || is_sums(e->rel))
			continue;
		abs = cb_path_join(job->root, e->rel);
		if (!abs || hash_file(abs, e->rel, job->obs, job->hex[i], &err) < 0) {
			if (!abs)
				cb_fail(&err, "out of memory");
			pthread_mutex_lock(&job->lock);
			if (!atomic_exchange(&job->failed, 1))
				job->err = err;
			pthread_mutex_unlock(&job->lock);
		}
		free(abs);
		if (atomic_load(&job->failed))
			break;
	}
	return NULL;
}

/* hex[i] = SHA-256 of t->v[i] for every regular file but SHA256SUMS (empty
 * string for the rest), each file shown to obs (may be NULL) as it is read.
 * Caller frees *hex. */
static int hash_tree(const char *root, const struct cb_tree *t,
		     const struct cb_verify_observer *obs, char (**hex)[CB_SHA256_HEX],
		     struct cb_err *err)
{
	struct hash_job job;

	*hex = calloc(t->n ? t->n : 1, sizeof(**hex));
	if (!*hex)
		return cb_fail(err, "out of memory");
	job.root = root;
	job.t = t;
	job.obs = obs;
	job.hex = *hex;
	atomic_init(&job.next, 0);
	atomic_init(&job.failed, 0);
	pthread_mutex_init(&job.lock, NULL);
	cb_pool_run(t->n, hash_worker, &job);
	pthread_mutex_destroy(&job.lock);
	if (atomic_load(&job.failed)) {
		*err = job.err;
		free(*hex);
		*hex = NULL;
		return -1;
	}
	return 0;
}

/* chmod a-w over a tree, children before their directory; links are left
 * alone (chmod would follow them, and seal refuses them anyway). */
static int make_read_only(const char *path, struct cb_err *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return cb_fail(err, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		return 0;
	if (S_ISDIR(st.st_mode)) {
		char **names = NULL;
		size_t n = 0, i;
		int rc = 0;

		if (cb_list_dir(path, &names, &n, err) < 0)
			return -1;
		for (i = 0; i < n && rc == 0; i++) {
			char *child = cb_path_join(path, names[i]);
			rc = child ? make_read_only(child, err) : cb_fail(err, "out of memory");
			free(child);
		}
		cb_strv_free(names, n);
		if (rc < 0)
			return -1;
	}
	if (chmod(path, st.st_mode & 07555) < 0)
		return cb_fail(err, "%s: chmod: %s", path, strerror(errno));
	return 0;
}

int cb_seal(const char *root, struct cb_err *err)
{
	struct cb_tree t;
	struct cb_buf out = CB_BUF_INIT;
	char *sums = NULL, *data, (*hex)[CB_SHA256_HEX] = NULL;
	size_t i, len;
	int rc = -1;

	if (cb_walk(root, NULL, 0, &t, err) < 0)
		return cb_prefix(err, "seal");
	for (i = 0; i < t.n; i++) {
		const struct cb_entry *e = &t.v[i];

		if (is_sums(e->rel))
			continue;
		if (e->kind != CB_ENT_FILE) {
			cb_fail(err, "seal: %s: a %s cannot be sealed", e->rel,
				e->kind == CB_ENT_LINK ? "symlink" : "special file");
			goto out;
		}
		if (strpbrk(e->rel, "\\\n")) {
			cb_fail(err, "seal: %s: a path with a backslash or newline cannot be listed", e->rel);
			goto out;
		}
	}
	if (hash_tree(root, &t, NULL, &hex, err) < 0)
		goto out;
	for (i = 0; i < t.n; i++)
		if (!is_sums(t.v[i].rel))
			cb_buf_addf(&out, "%s  %s\n", hex[i], t.v[i].rel);
	data = cb_buf_detach(&out, &len);
	sums = cb_path_join(root, CB_SUMS_FILE);
	if (!data || !sums) {
		free(data);
		cb_fail(err, "seal: out of memory");
		goto out;
	}
	rc = cb_write_atomic(sums, data, len, 0444, err);
	free(data);
	if (rc == 0)
		rc = make_read_only(root, err);
out:
	free(hex);
	free(sums);
	cb_buf_release(&out);
	cb_tree_release(&t);
	return rc;
}

int cb_seal_finish(const char *root, struct cb_err *err)
{
	return make_read_only(root, err);
}

static int push_str(char ***v, size_t *n, char *s, struct cb_err *err)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv || !s) {
		free(s);
		if (nv)
			*v = nv;
		return cb_fail(err, "verify: out of memory");
	}
	*v = nv;
	(*v)[(*n)++] = s;
	return 0;
}

struct sum_line {
	char hex[CB_SHA256_HEX];
	char *rel;
};

static int cmp_sum(const void *a, const void *b)
{
	return strcmp(((const struct sum_line *)a)->rel, ((const struct sum_line *)b)->rel);
}

/* Parse SHA256SUMS into lines sorted by path. */
static int read_sums(const char *root, struct sum_line **out, size_t *n, struct cb_err *err)
{
	char *path = cb_path_join(root, CB_SUMS_FILE);
	char *buf = NULL, *p, *nl;
	struct sum_line *v = NULL;
	size_t cnt = 0, lineno = 0;

	*out = NULL;
	*n = 0;
	if (!path)
		return cb_fail(err, "out of memory");
	if (!cb_exists(path)) {
		cb_fail_code(err, CB_ERR_NOT_SEALED, "%s: not sealed (no %s)", root, CB_SUMS_FILE);
		free(path);
		return -1;
	}
	if (cb_read_file(path, &buf, NULL, err) < 0) {
		free(path);
		return -1;
	}
	for (p = buf; *p; p = nl + 1) {
		struct sum_line *nv;
		char *name;

		lineno++;
		nl = strchr(p, '\n');
		if (!nl) {
			cb_fail(err, "%s:%zu: line is not terminated", path, lineno);
			goto fail;
		}
		*nl = '\0';
		if (strlen(p) < 67 || p[64] != ' ' || (p[65] != ' ' && p[65] != '*') || !p[66]) {
			cb_fail(err, "%s:%zu: not a sha256sum line", path, lineno);
			goto fail;
		}
		p[64] = '\0';
		if (!cb_is_hex(p, 64)) {
			cb_fail(err, "%s:%zu: not a SHA-256 digest", path, lineno);
			goto fail;
		}
		name = strdup(p + 66);
		nv = realloc(v, (cnt + 1) * sizeof(*v));
		if (!name || !nv) {
			free(name);
			if (nv)
				v = nv;
			cb_fail(err, "out of memory");
			goto fail;
		}
		v = nv;
		memcpy(v[cnt].hex, p, CB_SHA256_HEX);
		v[cnt].rel = name;
		cnt++;
	}
	if (cnt)
		qsort(v, cnt, sizeof(*v), cmp_sum);
	free(buf);
	free(path);
	*out = v;
	*n = cnt;
	return 0;
fail:
	while (cnt)
		free(v[--cnt].rel);
	free(v);
	free(buf);
	free(path);
	return -1;
}

int cb_verify(const char *root, struct cb_verify_report *rep, struct cb_err *err)
{
	return cb_verify_observed(root, NULL, rep, err);
}

int cb_verify_observed(const char *root, const struct cb_verify_observer *obs,
		       struct cb_verify_report *rep, struct cb_err *err)
{
	struct sum_line *sums;
	struct cb_tree t;
	char (*hex)[CB_SHA256_HEX] = NULL;
	size_t nsums, i = 0, j = 0;
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	if (read_sums(root, &sums, &nsums, err) < 0)
		return -1;
	if (cb_walk(root, NULL, obs && obs->listing ? CB_WALK_DIRS : 0, &t, err) < 0 ||
	    hash_tree(root, &t, obs, &hex, err) < 0) {
		cb_tree_release(&t);
		for (i = 0; i < nsums; i++)
			free(sums[i].rel);
		free(sums);
		return -1;
	}
	rep->nfiles = nsums;
	/* Merge two sorted lists: the seal's and the tree's. */
	while (rc == 0 && (i < nsums || j < t.n)) {
		const struct cb_entry *e = j < t.n ? &t.v[j] : NULL;
		int c;

		if (e && (is_sums(e->rel) || e->kind == CB_ENT_DIR)) {
			j++;
			continue;
		}
		c = !e ? -1 : i >= nsums ? 1 : strcmp(sums[i].rel, e->rel);
		if (c < 0) {
			rc = push_str(&rep->missing, &rep->nmissing, strdup(sums[i].rel), err);
			i++;
			continue;
		}
		if (e->kind == CB_ENT_LINK) {
			char target[PATH_MAX] = "";
			char *abs = cb_path_join(root, e->rel);
			ssize_t n = abs ? readlink(abs, target, sizeof(target) - 1) : -1;
			free(abs);
			if (n >= 0)
				target[n] = '\0';
			rc = push_str(&rep->links, &rep->nlinks, cb_strdupf("%s -> %s", e->rel, target), err);
		} else if (e->kind == CB_ENT_OTHER) {
			rc = push_str(&rep->links, &rep->nlinks, cb_strdupf("%s (special file)", e->rel), err);
		} else if (c > 0) {
			rc = push_str(&rep->extra, &rep->nextra, strdup(e->rel), err);
		} else if (strcmp(hex[j], sums[i].hex) != 0) {
			rc = push_str(&rep->changed, &rep->nchanged, strdup(e->rel), err);
		}
		if (c == 0)
			i++;
		j++;
	}
	for (i = 0; i < nsums; i++)
		free(sums[i].rel);
	free(sums);
	free(hex);
	if (rc == 0 && obs && obs->listing)
		*obs->listing = t;
	else
		cb_tree_release(&t);
	if (rc < 0)
		cb_verify_report_release(rep);
	return rc;
}

int cb_verify_holds(const struct cb_verify_report *rep)
{
	return !rep->nchanged && !rep->nmissing && !rep->nextra && !rep->nlinks;
}

void cb_verify_report_release(struct cb_verify_report *rep)
{
	if (!rep)
		return;
	cb_strv_free(rep->changed, rep->nchanged);
	cb_strv_free(rep->missing, rep->nmissing);
	cb_strv_free(rep->extra, rep->nextra);
	cb_strv_free(rep->links, rep->nlinks);
	memset(rep, 0, sizeof(*rep));
}

int cb_verify_or_fail(const char *root, struct cb_err *err)
{
	return cb_verify_or_fail_observed(root, NULL, err);
}

int cb_verify_or_fail_observed(const char *root, const struct cb_verify_observer *obs,
			       struct cb_err *err)
{
	struct cb_verify_report rep;
	int rc = 0;

	if (cb_verify_observed(root, obs, &rep, err) < 0)
		return -1;
	if (rep.nchanged)
		rc = cb_fail(err, "%s: seal does not hold: changed: %s", root, rep.changed[0]);
	else if (rep.nmissing)
		rc = cb_fail(err, "%s: seal does not hold: missing: %s", root, rep.missing[0]);
	else if (rep.nextra)
		rc = cb_fail(err, "%s: seal does not hold: extra: %s", root, rep.extra[0]);
	else if (rep.nlinks)
		rc = cb_fail(err, "%s: seal does not hold: symlink: %s", root, rep.links[0]);
	cb_verify_report_release(&rep);
	return rc;
}

int cb_is_sealed(const char *root)
{
	char *p = cb_path_join(root, CB_SUMS_FILE);
	int r = p && cb_exists(p);

	free(p);
	return r;
}
