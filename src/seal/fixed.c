/* fixed.c: the digests of a run's fixed evidence and its ledger (fixed.h). */
#include "fixed.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fsutil.h"
#include "base/jsonio.h"
#include "base/sha.h"
#include "base/walk.h"

/* qsort's comparison of two strings through pointers to them. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The group of a path: its first two components ("tasks/gain" of
 * "tasks/gain/cells/a-off/timing.jsonl"), or the path when it has fewer;
 * a fresh string. A task's check counts its group's files. */
static char *group_of(const char *path)
{
	const char *slash = strchr(path, '/');

	if (slash)
		slash = strchr(slash + 1, '/');
	return slash ? strndup(path, (size_t)(slash - path)) : strdup(path);
}

/* Record path's digest hex in f (its group's count too); 0, or -1 when
 * out of memory. */
static int record(struct cb_fixed *f, const char *path, const char *hex)
{
	char *g = group_of(path);
	int had = json_object_get(f->digests, path) != NULL;

	if (!g || json_object_set_new(f->digests, path, json_string(hex)) < 0) {
		free(g);
		return -1;
	}
	if (!had)
		json_object_set_new(f->groups, g, json_integer(cb_json_int(f->groups, g, 0) + 1));
	free(g);
	return 0;
}

/* Read the ledger at path into f: "<hex>  <path>" lines; a last line
 * without its newline (a kill during an append) is left out. */
static int read_ledger(const char *path, struct cb_fixed *f, struct cb_err *err)
{
	char *buf = NULL, *p, *nl;
	size_t len = 0;

	if (!cb_exists(path))
		return 0;
	if (cb_read_file(path, &buf, &len, err) < 0)
		return -1;
	for (p = buf; (nl = memchr(p, '\n', len - (size_t)(p - buf))); p = nl + 1) {
		*nl = '\0';
		if (nl - p < CB_SHA256_HEX + 2 || p[CB_SHA256_HEX - 1] != ' ' || p[CB_SHA256_HEX] != ' ' ||
		    (p[CB_SHA256_HEX - 1] = '\0', !cb_is_hex(p, CB_SHA256_HEX - 1))) {
			free(buf);
			return cb_fail(err, "%s: line %.40s...: not '<sha256>  <path>'", path, p);
		}
		if (record(f, p + CB_SHA256_HEX + 1, p) < 0) {
			free(buf);
			return cb_fail(err, "out of memory");
		}
	}
	free(buf);
	return 0;
}

/* The ledger's text: one line per digest, sorted by path. */
static char *ledger_text(const json_t *digests, size_t *len)
{
	struct cb_buf b = CB_BUF_INIT;
	const char **keys = malloc((json_object_size(digests) + 1) * sizeof(*keys));
	const char *k;
	json_t *v;
	size_t n = 0, i;

	if (!keys)
		return NULL;
	json_object_foreach((json_t *)digests, k, v)
		keys[n++] = k;
	qsort(keys, n, sizeof(*keys), cmp_str);
	for (i = 0; i < n; i++)
		cb_buf_addf(&b, "%s  %s\n", json_string_value(json_object_get(digests, keys[i])), keys[i]);
	free(keys);
	if (!b.len) {
		cb_buf_release(&b);
		*len = 0;
		return strdup("");
	}
	return cb_buf_detach(&b, len);
}

/* Write the ledger again whole from memory and open it for appending. */
static int save(struct cb_fixed *f, struct cb_err *err)
{
	char *path = cb_path_join(f->root, CB_FIXED_FILE), *text;
	size_t len = 0;
	int rc;

	text = path ? ledger_text(f->digests, &len) : NULL;
	if (!text) {
		free(path);
		return cb_fail(err, "out of memory");
	}
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	rc = cb_write_atomic(path, text, len, 0644, err);
	if (rc == 0 && (f->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW)) < 0)
		rc = cb_fail(err, "%s: %s", path, strerror(errno));
	free(text);
	free(path);
	return rc;
}

int cb_fixed_open(struct cb_fixed *f, const char *root, int resume, struct cb_err *err)
{
	char *path;
	int rc;

	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->root = strdup(root);
	f->digests = json_object();
	f->groups = json_object();
	path = cb_path_join(root, CB_FIXED_FILE);
	if (!f->root || !f->digests || !f->groups || !path) {
		free(path);
		cb_fixed_release(f);
		return cb_fail(err, "out of memory");
	}
	rc = resume ? read_ledger(path, f, err) : 0;
	free(path);
	if (rc == 0)
		rc = save(f, err);
	if (rc < 0)
		cb_fixed_release(f);
	return rc;
}

void cb_fixed_release(struct cb_fixed *f)
{
	if (f->root && f->fd >= 0)
		close(f->fd);
	json_decref(f->digests);
	json_decref(f->groups);
	free(f->root);
	memset(f, 0, sizeof(*f));
	f->fd = -1;
}

/* Whether path (relative) lies beneath rel, or is rel. */
static int beneath(const char *path, const char *rel)
{
	size_t n = strlen(rel);

	return strncmp(path, rel, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

int cb_fixed_forget(struct cb_fixed *f, const char *rel, struct cb_err *err)
{
	const char *k;
	json_t *v;
	void *tmp;

	if (!f->digests)
		return 0;
	json_object_foreach_safe(f->digests, tmp, k, v)
		if (beneath(k, rel))
			json_object_del(f->digests, k);
	json_object_foreach_safe(f->groups, tmp, k, v)
		if (beneath(k, rel))
			json_object_del(f->groups, k);
	return save(f, err);
}

/* Make the regular file abs read-only, never through a link and never in
 * place when it has other names: a hard link is replaced by a copy of its
 * own, so that the file outside the run it shares bytes with is untouched. */
static int make_read_only(const char *abs, struct cb_err *err)
{
	struct stat st;
	int fd = open(abs, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return cb_fail(err, "%s: %s", abs, errno == ELOOP ? "a symlink" : strerror(errno));
	if (fstat(fd, &st) < 0)
		rc = cb_fail(err, "%s: %s", abs, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		rc = cb_fail(err, "%s: not a regular file", abs);
	else if (st.st_nlink > 1) {
		char *data = NULL;
		size_t len = 0;
		rc = cb_read_file(abs, &data, &len, err);
		if (rc == 0)
			rc = cb_write_atomic(abs, data, len, 0444, err);
		free(data);
	} else if (fchmod(fd, 0444) < 0)
		rc = cb_fail(err, "%s: %s", abs, strerror(errno));
	close(fd);
	return rc;
}

int cb_fixed_tree(struct cb_fixed *f, const char *rel, struct cb_err *err)
{
	struct cb_tree t = { NULL, 0 };
	struct cb_buf lines = CB_BUF_INIT;
	char *top = f->root ? cb_path_join(f->root, rel) : NULL;
	struct stat st;
	size_t i;
	int rc = 0;

	if (!f->root)
		return 0;
	if (!top)
		return cb_fail(err, "out of memory");
	if (lstat(top, &st) == 0 && S_ISREG(st.st_mode)) {
		t.v = calloc(1, sizeof(*t.v));
		if (!t.v || !(t.v[0].rel = strdup(""))) {
			free(t.v);
			free(top);
			return cb_fail(err, "out of memory");
		}
		t.n = 1;
	} else if (cb_walk(top, NULL, 0, &t, err) < 0) {
		free(top);
		return -1;
	}
	for (i = 0; i < t.n && rc == 0; i++) {
		char *path = t.v[i].rel[0] ? cb_strdupf("%s/%s", rel, t.v[i].rel) : strdup(rel);
		char *abs = path ? cb_path_join(f->root, path) : NULL, hex[CB_SHA256_HEX];

		if (!abs)
			rc = cb_fail(err, "out of memory");
		else if (t.v[i].kind != CB_ENT_FILE)
			rc = cb_fail(err, "%s: not a regular file; a seal cannot hold it", path);
		else if (!json_object_get(f->digests, path) &&
			 (rc = make_read_only(abs, err)) == 0 && (rc = cb_sha256_file(abs, hex, err)) == 0) {
			if (record(f, path, hex) < 0)
				rc = cb_fail(err, "out of memory");
			cb_buf_addf(&lines, "%s  %s\n", hex, path);
		}
		free(path);
		free(abs);
	}
	if (rc == 0 && lines.len) {
		ssize_t w = f->fd >= 0 ? write(f->fd, lines.data, lines.len) : -1;
		if (w < 0 || (size_t)w != lines.len)
			rc = cb_fail(err, "%s/%s: cannot append: %s", f->root, CB_FIXED_FILE,
				     w < 0 ? strerror(errno) : "short write");
	}
	cb_buf_release(&lines);
	cb_tree_release(&t);
	free(top);
	return rc;
}

/* Whether name is one of the runner files (NULL-terminated). */
static int is_runner_file(const char *name, const char *const *runner_files)
{
	for (; runner_files && *runner_files; runner_files++)
		if (strcmp(name, *runner_files) == 0)
			return 1;
	return 0;
}

/* Check the files beneath rel ("" for the whole root) against their
 * digests, the runner files at the top apart; see cb_fixed_check. */
static int check(const struct cb_fixed *f, const char *rel, const char *const *runner_files, struct cb_err *err)
{
	struct cb_tree t = { NULL, 0 };
	char *top = rel[0] ? cb_path_join(f->root, rel) : strdup(f->root);
	const char *k;
	json_t *v;
	size_t i, seen = 0, want = 0;
	int rc = 0;

	if (!top)
		return cb_fail(err, "out of memory");
	if (cb_is_dir(top) && cb_walk(top, NULL, 0, &t, err) < 0) {
		free(top);
		return -1;
	}
	for (i = 0; i < t.n && rc == 0; i++) {
		char *path = rel[0] ? cb_strdupf("%s/%s", rel, t.v[i].rel) : strdup(t.v[i].rel);
		char *abs = path ? cb_path_join(f->root, path) : NULL, hex[CB_SHA256_HEX];
		const char *want_hex = path ? json_string_value(json_object_get(f->digests, path)) : NULL;

		if (!abs)
			rc = cb_fail(err, "out of memory");
		else if (!rel[0] && is_runner_file(path, runner_files))
			;
		else if (!want_hex)
			rc = cb_fail(err, "%s: written by no cell and no runner step (it was not there when its cell or "
					  "task ended); a run holding it is not sealed: remove it and --resume", abs);
		else if (cb_sha256_file(abs, hex, err) < 0)
			rc = -1;
		else if (strcmp(hex, want_hex) != 0)
			rc = cb_fail(err, "%s: changed after its cell or task ended (sha256 %.12s... then, %.12s... now): "
					  "a harness failure; the run is not sealed", abs, want_hex, hex);
		else
			seen++;
		free(path);
		free(abs);
	}
	want = rel[0] ? (size_t)cb_json_int(f->groups, rel, 0) : json_object_size(f->digests);
	/* fewer found than fixed: name the first that is gone */
	json_object_foreach((json_t *)f->digests, k, v)
		if (rc == 0 && seen != want && (!rel[0] || beneath(k, rel))) {
			char *abs = cb_path_join(f->root, k);
			if (abs && !cb_exists(abs))
				rc = cb_fail(err, "%s: gone since its cell or task ended: a harness failure; the run is not "
						  "sealed", abs);
			free(abs);
		}
	if (rc == 0 && seen != want)
		rc = cb_fail(err, "%s: %zu fixed files found of %zu", top, seen, want);
	cb_tree_release(&t);
	free(top);
	return rc;
}

int cb_fixed_check(const struct cb_fixed *f, const char *rel, struct cb_err *err)
{
	return f->root ? check(f, rel, NULL, err) : 0;
}

int cb_fixed_check_run(const struct cb_fixed *f, const char *const *runner_files, struct cb_err *err)
{
	return f->root ? check(f, "", runner_files, err) : 0;
}
