/* seal.c: sealing a run root (SEAL, SHA256SUMS, the signature, read-only)
 * and `caliber verify`. The files' text is sums.c's and sign.c's. */
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

#include "base/runroot.h"
#include "base/buf.h"
#include "format1.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/pool.h"
#include "base/sha.h"
#include "sign.h"
#include "sums.h"
#include "tidy.h"
#include "base/walk.h"

static int is_sums(const char *rel)
{
	return strcmp(rel, CB_SUMS_FILE) == 0;
}

/* What the seal writes beside the files it lists and so never lists:
 * SHA256SUMS and its signature. */
static int is_unlisted(const char *rel)
{
	return is_sums(rel) || strcmp(rel, CB_SIG_FILE) == 0;
}

static const char *entry_key(const void *p)
{
	return ((const struct cb_entry *)p)->rel;
}

static const char *line_key(const void *p)
{
	return ((const struct cb_sum_line *)p)->rel;
}

static const char *str_key(const void *p)
{
	return *(char *const *)p;
}

/* What a link or special file of the tree is, for a message: "a FIFO". */
static const char *kind_of(const char *root, const char *rel)
{
	char *abs = cb_path_join(root, rel);
	struct stat st;
	int ok = abs && lstat(abs, &st) == 0;

	free(abs);
	return ok ? cb_file_kind(st.st_mode) : "a special file";
}

/* Hashing is what sealing and verifying spend their time on (SHA-256 is
 * compute-bound at about 1 GB/s a core), so the regular files of a tree are
 * hashed on cb_pool_run's threads, each taking the next file from a shared
 * counter. */
struct hash_job {
	const char *root;
	const struct cb_tree *t;
	const struct cb_verify_observer *obs;  /* NULL: none */
	const struct cb_known_digests *known;  /* NULL: none */
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

		const char *known;

		job->hex[i][0] = '\0';
		if (e->kind != CB_ENT_FILE || is_sums(e->rel))
			continue;
		if (job->known && (known = job->known->digest(e->rel, job->known->ctx)) != NULL) {
			memcpy(job->hex[i], known, CB_SHA256_HEX);
			continue;
		}
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
 * string for the rest), each file shown to obs (may be NULL) as it is read,
 * the digests known gives (may be NULL) taken as they are. Caller frees
 * *hex. */
static int hash_tree(const char *root, const struct cb_tree *t, const struct cb_verify_observer *obs,
		     const struct cb_known_digests *known, char (**hex)[CB_SHA256_HEX], struct cb_err *err)
{
	struct hash_job job;

	*hex = calloc(t->n ? t->n : 1, sizeof(**hex));
	if (!*hex)
		return cb_fail(err, "out of memory");
	job.root = root;
	job.t = t;
	job.obs = obs;
	job.known = known;
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

static int cmp_str_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A line of the SHA256SUMS being written: the path is borrowed. */
struct out_line {
	char hex[CB_SHA256_HEX];
	const char *rel;
};

static int cmp_out_line(const void *a, const void *b)
{
	return strcmp(((const struct out_line *)a)->rel, ((const struct out_line *)b)->rel);
}

/* The sealable entries of t: every file but what the seal writes itself
 * (SHA256SUMS, its signature, SEAL), and in dirs the folders that hold
 * nothing. A link or a special file is refused, named by its kind, and so
 * is a temporary file of an interrupted write (tidy.h). */
static int sealable(const char *root, const struct cb_tree *t, size_t *nfiles, char ***dirs, size_t *ndirs,
		    struct cb_err *err)
{
	size_t i;

	*nfiles = 0;
	*dirs = NULL;
	*ndirs = 0;
	for (i = 0; i < t->n; i++) {
		const struct cb_entry *e = &t->v[i];

		if (is_unlisted(e->rel) || strcmp(e->rel, CB_SEAL_FILE) == 0)
			continue;
		if (e->kind == CB_ENT_LINK || e->kind == CB_ENT_OTHER)
			return cb_fail(err, "seal: %s: %s cannot be sealed", e->rel, kind_of(root, e->rel));
		if (!cb_sums_listable(e->rel))
			return cb_fail(err, "seal: %s: a path with a backslash or newline cannot be listed", e->rel);
		if (cb_is_temp_name(strrchr(e->rel, '/') ? strrchr(e->rel, '/') + 1 : e->rel))
			return cb_fail(err, "seal: %s: a temporary file of an interrupted write cannot be sealed", e->rel);
		if (e->kind == CB_ENT_FILE) {
			(*nfiles)++;
		} else if (!cb_sorted_has_below(t->v, t->n, sizeof(*t->v), entry_key, e->rel)) {
			char **nv = realloc(*dirs, (*ndirs + 1) * sizeof(*nv));
			if (!nv || !(nv[*ndirs] = strdup(e->rel))) {
				if (nv)
					*dirs = nv;
				return cb_fail(err, "seal: out of memory");
			}
			*dirs = nv;
			(*ndirs)++;
		}
	}
	return 0;
}

/* Write SEAL, then SHA256SUMS over every file of t and SEAL (hex[i] the
 * digest of t->v[i]), then, with key_path, the signature of SHA256SUMS. */
static int write_seal_files(const char *root, const struct cb_tree *t, char (*hex)[CB_SHA256_HEX], size_t nfiles,
			    char **dirs, size_t ndirs, const char *key_path, struct cb_err *err)
{
	struct out_line *lines = calloc(nfiles + 1, sizeof(*lines));
	struct cb_buf out = CB_BUF_INIT;
	char *seal = NULL, *sums = NULL, *sig = NULL, *path = NULL, *data = NULL;
	size_t i, n = 0, len, seal_len = 0, sig_len = 0;
	int rc = -1;

	if (!lines || !(seal = cb_seal_record_format(nfiles + 1, dirs, ndirs, &seal_len))) {
		cb_fail(err, "seal: out of memory");
		goto out;
	}
	for (i = 0; i < t->n; i++)
		if (t->v[i].kind == CB_ENT_FILE && !is_unlisted(t->v[i].rel) && strcmp(t->v[i].rel, CB_SEAL_FILE) != 0) {
			memcpy(lines[n].hex, hex[i], CB_SHA256_HEX);
			lines[n++].rel = t->v[i].rel;
		}
	lines[n].rel = CB_SEAL_FILE;
	if (cb_sha256_hex(seal, seal_len, lines[n++].hex, err) < 0)
		goto out;
	qsort(lines, n, sizeof(*lines), cmp_out_line);
	for (i = 0; i < n; i++)
		cb_buf_addf(&out, "%s  %s\n", lines[i].hex, lines[i].rel);
	data = cb_buf_detach(&out, &len);
	path = cb_path_join(root, CB_SEAL_FILE);
	sums = cb_path_join(root, CB_SUMS_FILE);
	sig = cb_path_join(root, CB_SIG_FILE);
	if (!data || !path || !sums || !sig) {
		cb_fail(err, "seal: out of memory");
		goto out;
	}
	if (cb_write_atomic(path, seal, seal_len, 0444, err) < 0)
		goto out;
	/* A signature left by an earlier seal signs another SHA256SUMS. */
	if (unlink(sig) < 0 && errno != ENOENT) {
		cb_fail(err, "seal: %s: %s", sig, strerror(errno));
		goto out;
	}
	if (cb_write_atomic(sums, data, len, 0444, err) < 0)
		goto out;
	if (key_path) {
		char *text = NULL;
		if (cb_sign(key_path, data, len, &text, &sig_len, err) < 0)
			goto out;
		rc = cb_write_atomic(sig, text, sig_len, 0444, err);
		free(text);
		if (rc < 0)
			goto out;
	}
	rc = 0;
out:
	cb_buf_release(&out);
	free(lines);
	free(seal);
	free(sums);
	free(sig);
	free(path);
	free(data);
	return rc;
}

int cb_seal(const char *root, struct cb_err *err)
{
	return cb_seal_signed(root, NULL, err);
}

/* The seal of root, signed with key_path (NULL: not signed), the digests
 * known gives (NULL: none) taken instead of read. */
static int seal_tree(const char *root, const char *key_path, const struct cb_known_digests *known,
		     struct cb_err *err)
{
	struct cb_tree t;
	char (*hex)[CB_SHA256_HEX] = NULL, **dirs = NULL;
	size_t nfiles, ndirs = 0;
	int rc = -1;

	if (cb_walk(root, NULL, CB_WALK_DIRS, &t, err) < 0)
		return cb_prefix(err, "seal");
	if (sealable(root, &t, &nfiles, &dirs, &ndirs, err) == 0 && hash_tree(root, &t, NULL, known, &hex, err) == 0 &&
	    write_seal_files(root, &t, hex, nfiles, dirs, ndirs, key_path, err) == 0)
		rc = make_read_only(root, err);
	cb_strv_free(dirs, ndirs);
	free(hex);
	cb_tree_release(&t);
	return rc;
}

int cb_seal_signed(const char *root, const char *key_path, struct cb_err *err)
{
	return seal_tree(root, key_path, NULL, err);
}

int cb_seal_known(const char *root, const struct cb_known_digests *known, const char *key_path,
		  struct cb_err *err)
{
	return seal_tree(root, key_path, known, err);
}

int cb_seal_finish(const char *root, struct cb_err *err)
{
	return make_read_only(root, err);
}

int cb_seal_digest(const char *root, char hex[CB_SHA256_HEX], struct cb_err *err)
{
	char *path = cb_path_join(root, CB_SUMS_FILE);
	int rc = path ? cb_sha256_file(path, hex, err) : cb_fail(err, "out of memory");

	free(path);
	return rc;
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

/* Read and parse root's SHA256SUMS into sums, its digest into rep. */
static int read_sums(const char *root, struct cb_sums *sums, struct cb_verify_report *rep, struct cb_err *err)
{
	char *path = cb_path_join(root, CB_SUMS_FILE), *buf = NULL;
	size_t len;
	int rc = -1;

	if (!path)
		return cb_fail(err, "out of memory");
	if (!cb_exists(path))
		cb_fail_code(err, CB_ERR_NOT_SEALED, "%s: not sealed (no %s)", root, CB_SUMS_FILE);
	else if (cb_read_file(path, &buf, &len, err) == 0 && cb_sha256_hex(buf, len, rep->digest, err) == 0)
		rc = cb_sums_parse(buf, len, path, sums, err);
	free(buf);
	free(path);
	return rc;
}

/* Format 2: what SEAL says, checked against SHA256SUMS and the tree: the
 * number of lines (a file deleted with its line), and that every folder
 * holds a listed file or was empty when sealed (an added empty folder).
 * Only a SEAL whose digest matches its line is trusted; one that does not
 * is already reported as changed. */
static int check_seal_record(const char *root, const struct cb_sums *sums, const struct cb_tree *t,
			     char (*hex)[CB_SHA256_HEX], struct cb_verify_report *rep, struct cb_err *err)
{
	struct cb_seal_record rec;
	struct cb_err why;
	size_t at = cb_sums_find(sums, CB_SEAL_FILE), i;
	char *path, *buf = NULL;
	size_t len;
	int rc = 0;

	for (i = 0; i < t->n && strcmp(t->v[i].rel, CB_SEAL_FILE) != 0; i++)
		;
	if (i == t->n || t->v[i].kind != CB_ENT_FILE || strcmp(hex[i], sums->v[at].hex) != 0)
		return 0;
	path = cb_path_join(root, CB_SEAL_FILE);
	if (!path)
		return cb_fail(err, "out of memory");
	if (cb_read_file(path, &buf, &len, &why) < 0 || cb_seal_record_parse(buf, len, CB_SEAL_FILE, &rec, &why) < 0) {
		rc = push_str(&rep->sums, &rep->nsums, strdup(why.msg), err);
		free(buf);
		free(path);
		return rc;
	}
	free(buf);
	free(path);
	if (rec.files != sums->n)
		rc = push_str(&rep->sums, &rep->nsums,
			      cb_strdupf("SHA256SUMS lists %zu files, SEAL counted %zu when it was sealed: lines were %s",
					 sums->n, rec.files, sums->n < rec.files ? "removed" : "added"), err);
	for (i = 0; rc == 0 && i < t->n; i++) {
		const char *d = t->v[i].rel;
		if (t->v[i].kind != CB_ENT_DIR ||
		    cb_sorted_has_below(sums->v, sums->n, sizeof(*sums->v), line_key, d) ||
		    cb_sorted_has_below(rec.dirs, rec.ndirs, sizeof(*rec.dirs), str_key, d))
			continue;
		if (!rec.ndirs || !bsearch(&d, rec.dirs, rec.ndirs, sizeof(*rec.dirs), cmp_str_ptr))
			rc = push_str(&rep->extra, &rep->nextra, cb_strdupf("%s/", d), err);
	}
	cb_seal_record_release(&rec);
	return rc;
}

/* The first caliber commit run.json (j) names, at its top or in an
 * invocation, that seals in format 2 (borrowed from j); NULL when every
 * one it names is from before SEAL. */
static const char *format2_sealer(const json_t *j)
{
	const json_t *inv;
	const char *c = cb_json_str(json_object_get(j, "caliber"), "commit");
	size_t i;

	if (c && !cb_commit_seals_format1(c))
		return c;
	json_array_foreach(json_object_get(j, "invocations"), i, inv)
		if ((c = cb_json_str(inv, "caliber_commit")) != NULL && !cb_commit_seals_format1(c))
			return c;
	return NULL;
}

/* Format 1: a SHA256SUMS without SEAL is what a caliber from before SEAL
 * wrote, and only its runner sealed, always with run.json. A format 1 seal
 * whose run.json names a caliber that writes SEAL (or that lists no
 * run.json) is a format 2 seal with SEAL deleted together with its line,
 * which would reopen the blind spots SEAL closes: said in rep->sums. A
 * run.json that changed is reported as changed already, and not read. */
static int check_format1(const char *root, const struct cb_sums *sums, const struct cb_tree *t,
			 char (*hex)[CB_SHA256_HEX], struct cb_verify_report *rep, struct cb_err *err)
{
	size_t at = cb_sums_find(sums, CB_RUN_RUN), i;
	struct cb_err why = CB_ERR_INIT;
	const char *c;
	char *path;
	json_t *j;
	int rc = 0;

	if (at >= sums->n)
		return push_str(&rep->sums, &rep->nsums,
				strdup("SHA256SUMS lists no SEAL (format 1) and no run.json: only a run sealed by a "
				       "caliber from before SEAL is format 1, and its run.json says which"), err);
	for (i = 0; i < t->n && strcmp(t->v[i].rel, CB_RUN_RUN) != 0; i++)
		;
	if (i == t->n || t->v[i].kind != CB_ENT_FILE || strcmp(hex[i], sums->v[at].hex) != 0)
		return 0;
	if (!(path = cb_path_join(root, CB_RUN_RUN)))
		return cb_fail(err, "out of memory");
	j = cb_json_load_file(path, &why);
	free(path);
	if (!j)
		rc = push_str(&rep->sums, &rep->nsums, strdup(why.msg), err);
	else if ((c = format2_sealer(j)) != NULL)
		rc = push_str(&rep->sums, &rep->nsums,
			      cb_strdupf("SHA256SUMS lists no SEAL (format 1), but run.json names caliber %s, which "
					 "seals in format 2: SEAL was removed with its line", c), err);
	json_decref(j);
	return rc;
}

int cb_verify(const char *root, struct cb_verify_report *rep, struct cb_err *err)
{
	return cb_verify_observed(root, NULL, rep, err);
}

int cb_verify_observed(const char *root, const struct cb_verify_observer *obs,
		       struct cb_verify_report *rep, struct cb_err *err)
{
	struct cb_sums sums = { NULL, 0 };
	struct cb_tree t;
	char (*hex)[CB_SHA256_HEX] = NULL;
	size_t i = 0, j = 0;
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	if (read_sums(root, &sums, rep, err) < 0)
		return -1;
	if (cb_walk(root, NULL, CB_WALK_DIRS, &t, err) < 0 || hash_tree(root, &t, obs, NULL, &hex, err) < 0) {
		cb_tree_release(&t);
		cb_sums_release(&sums);
		return -1;
	}
	rep->format = cb_sums_find(&sums, CB_SEAL_FILE) < sums.n ? CB_SEAL_FORMAT : 1;
	rep->nfiles = sums.n - (rep->format == CB_SEAL_FORMAT);
	/* Merge two sorted lists: the seal's and the tree's. */
	while (rc == 0 && (i < sums.n || j < t.n)) {
		const struct cb_entry *e = j < t.n ? &t.v[j] : NULL;
		int c;

		/* SHA256SUMS and its signature are not listed; as a link (or
		 * anything but a file) either is reported, never followed. */
		if (e && ((is_unlisted(e->rel) && e->kind == CB_ENT_FILE) || e->kind == CB_ENT_DIR)) {
			j++;
			continue;
		}
		c = !e ? -1 : i >= sums.n ? 1 : strcmp(sums.v[i].rel, e->rel);
		if (c < 0) {
			rc = push_str(&rep->missing, &rep->nmissing, strdup(sums.v[i].rel), err);
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
			rc = push_str(&rep->specials, &rep->nspecials, cb_strdupf("%s (%s)", e->rel, kind_of(root, e->rel)),
				      err);
		} else if (c > 0) {
			rc = push_str(&rep->extra, &rep->nextra, strdup(e->rel), err);
		} else if (strcmp(hex[j], sums.v[i].hex) != 0) {
			rc = push_str(&rep->changed, &rep->nchanged, strdup(e->rel), err);
		}
		if (c == 0)
			i++;
		j++;
	}
	if (rc == 0 && rep->format == CB_SEAL_FORMAT)
		rc = check_seal_record(root, &sums, &t, hex, rep, err);
	else if (rc == 0)
		rc = check_format1(root, &sums, &t, hex, rep, err);
	if (rc == 0 && rep->nextra > 1)
		qsort(rep->extra, rep->nextra, sizeof(*rep->extra), cmp_str_ptr);
	cb_sums_release(&sums);
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
	return !rep->nchanged && !rep->nmissing && !rep->nextra && !rep->nlinks && !rep->nspecials && !rep->nsums;
}

void cb_verify_describe(const struct cb_verify_report *rep, char *out, size_t cap)
{
	snprintf(out, cap, "%zu changed, %zu missing, %zu extra, %zu symlinks, %zu special files%s%s", rep->nchanged,
		 rep->nmissing, rep->nextra, rep->nlinks, rep->nspecials, rep->nsums ? "; " : "",
		 rep->nsums ? rep->sums[0] : "");
}

void cb_verify_first(const struct cb_verify_report *rep, char *out, size_t cap)
{
	if (rep->nsums)
		snprintf(out, cap, "%s", rep->sums[0]);
	else if (rep->nchanged)
		snprintf(out, cap, "changed: %s", rep->changed[0]);
	else if (rep->nmissing)
		snprintf(out, cap, "missing: %s", rep->missing[0]);
	else if (rep->nextra)
		snprintf(out, cap, "extra: %s", rep->extra[0]);
	else if (rep->nlinks)
		snprintf(out, cap, "symlink: %s", rep->links[0]);
	else if (rep->nspecials)
		snprintf(out, cap, "special file: %s", rep->specials[0]);
	else
		snprintf(out, cap, "nothing");
}

void cb_verify_report_release(struct cb_verify_report *rep)
{
	if (!rep)
		return;
	cb_strv_free(rep->changed, rep->nchanged);
	cb_strv_free(rep->missing, rep->nmissing);
	cb_strv_free(rep->extra, rep->nextra);
	cb_strv_free(rep->links, rep->nlinks);
	cb_strv_free(rep->specials, rep->nspecials);
	cb_strv_free(rep->sums, rep->nsums);
	memset(rep, 0, sizeof(*rep));
}

int cb_verify_or_fail(const char *root, struct cb_err *err)
{
	return cb_verify_or_fail_observed(root, NULL, err);
}

int cb_verify_fail(const char *root, const struct cb_verify_report *rep, struct cb_err *err)
{
	char first[CB_ERR_MAX - 256];

	if (cb_verify_holds(rep))
		return 0;
	cb_verify_first(rep, first, sizeof(first));
	return cb_fail(err, "%s: seal does not hold: %s", root, first);
}

int cb_verify_or_fail_observed(const char *root, const struct cb_verify_observer *obs,
			       struct cb_err *err)
{
	struct cb_verify_report rep;
	int rc;

	if (cb_verify_observed(root, obs, &rep, err) < 0)
		return -1;
	rc = cb_verify_fail(root, &rep, err);
	cb_verify_report_release(&rep);
	return rc;
}

int cb_seal_signature(const char *root, const char *pub, char key[CB_SHA256_HEX], struct cb_err *err)
{
	struct cb_signature sig;
	char *sig_path = cb_path_join(root, CB_SIG_FILE), *sums_path = cb_path_join(root, CB_SUMS_FILE);
	char *text = NULL, *sums = NULL;
	size_t len, sums_len;
	struct stat st;
	int rc = -1;

	key[0] = '\0';
	if (!sig_path || !sums_path) {
		cb_fail(err, "out of memory");
		goto out;
	}
	if (lstat(sig_path, &st) < 0) {
		if (errno != ENOENT)
			cb_fail(err, "%s: %s", sig_path, strerror(errno));
		else if (pub)
			cb_fail(err, "%s: not signed (no %s), and --key %s asks for a signature", root, CB_SIG_FILE, pub);
		else
			rc = 0;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		cb_fail(err, "%s: %s, not a signature (never followed)", sig_path, cb_file_kind(st.st_mode));
		goto out;
	}
	if (cb_read_file(sig_path, &text, &len, err) < 0 || cb_signature_parse(text, len, sig_path, &sig, err) < 0)
		goto out;
	if (pub && (cb_read_file(sums_path, &sums, &sums_len, err) < 0 ||
		    cb_signature_check(&sig, sig_path, pub, sums, sums_len, err) < 0))
		goto out;
	memcpy(key, sig.key, CB_SHA256_HEX);
	rc = 0;
out:
	free(text);
	free(sums);
	free(sig_path);
	free(sums_path);
	return rc;
}

int cb_seal_signature_check(const char *root, const char *pub, char *line, size_t cap, struct cb_err *err)
{
	char key[CB_SHA256_HEX];

	line[0] = '\0';
	if (cb_seal_signature(root, pub, key, err) < 0)
		return -1;
	if (pub)
		snprintf(line, cap, "signature: holds, key sha256:%s (%s)", key, pub);
	else if (key[0])
		snprintf(line, cap, "signature: %s by key sha256:%s, not checked (--key PUB.pem checks it)", CB_SIG_FILE,
			 key);
	return 0;
}

int cb_is_sealed(const char *root)
{
	char *p = cb_path_join(root, CB_SUMS_FILE);
	int r = p && cb_exists(p);

	free(p);
	return r;
}
